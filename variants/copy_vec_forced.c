/*
 * The forced fixed-width copies `vec_16b`, `vec_32b`, `vec_64b`,
 * `vec_128b` and `vec_256b` (upstream copy/vec_forced.py, priority 20):
 * one PTX access of 2 to 32 bytes by the calling thread, taken only when
 * the call names the variant (`dispatch:`).  Each has one predicate,
 * TVM's `vec_NNb_applicable` (its checks and reasons in TVM's order),
 * followed by what TVM does not check: the hints' values, the arch and
 * memory of a 256-bit access, the alignment of both region starts and
 * that the elements are consecutive in memory and in the registers.  The
 * five share one predicate and one emitter, told apart by their width.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "variants.h"

/* The element-count reason names the region as the call writes it. */
static void region_text(const td_call *call, const td_region *r, char *buf,
                        size_t cap)
{
    const td_buffer *b = &call->buffers[r->buffer];
    size_t n = (size_t)snprintf(buf, cap, "%.*s[",
                                (int)strnlen(b->name, TD_NAME_MAX), b->name);
    char lo[256], hi[256];
    for (int d = 0; d < r->ndim && n < cap; d++) {
        td__region_bound_text(call, r, d, 0, lo, sizeof lo);
        td__region_bound_text(call, r, d, r->extent[d], hi, sizeof hi);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s:%s", d ? ", " : "", lo,
                              hi);
    }
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* "A[1]" / "A[0, 4]": the region's first element. */
static void start_text(const td_call *call, const td_region *r, char *buf,
                       size_t cap)
{
    const td_buffer *b = &call->buffers[r->buffer];
    size_t n = (size_t)snprintf(buf, cap, "%.*s[",
                                (int)strnlen(b->name, TD_NAME_MAX), b->name);
    char lo[256];
    for (int d = 0; d < r->ndim && n < cap; d++) {
        td__region_bound_text(call, r, d, 0, lo, sizeof lo);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? ", " : "", lo);
    }
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

static const char *const default_pairs[][2] = {
    {"global", "shared*"}, {"shared*", "global"}, {"global", "local"},
    {"local", "global"},   {"shared*", "local"},  {"local", "shared*"}};

/* TVM's _scope_allowed with the default pairs. */
static bool scopes_ok(const td_call *call, td_reason *why)
{
    const td_buffer *s = td__copy_src(call), *d = td__copy_dst(call);
    size_t n = sizeof default_pairs / sizeof *default_pairs;
    for (size_t i = 0; i < n; i++)
        if (td__copy_scope_match(default_pairs[i][0], s->scope) &&
            td__copy_scope_match(default_pairs[i][1], d->scope))
            return true;
    char allowed[256];
    size_t k = 0;
    for (size_t i = 0; i < n && k < sizeof allowed; i++)
        k += (size_t)snprintf(allowed + k, sizeof allowed - k, "%s%s->%s",
                              i ? ", " : "", default_pairs[i][0],
                              default_pairs[i][1]);
    td_reason_set(why, "unsupported memory scopes src=%.*s dst=%.*s; "
                       "allowed: %s",
                  (int)strnlen(s->scope, TD_NAME_MAX), s->scope,
                  (int)strnlen(d->scope, TD_NAME_MAX), d->scope, allowed);
    return false;
}

/* A config value as Python's repr prints it ('nc', 3, True). */
static void repr(const td_config_entry *e, char *buf, size_t cap)
{
    switch (e->kind) {
    case TD_VALUE_STRING:
        snprintf(buf, cap, "'%.*s'", (int)strnlen(e->s, TD_NAME_MAX), e->s);
        break;
    case TD_VALUE_INT:
        snprintf(buf, cap, "%" PRId64, e->i);
        break;
    case TD_VALUE_EXPR:
    case TD_VALUE_ELEM:
        snprintf(buf, cap, "%.*s", (int)strnlen(e->s, TD_NAME_MAX), e->s);
        break;
    default:
        snprintf(buf, cap, "%s", e->b ? "True" : "False");
        break;
    }
}

/* The hints of the call's config: TVM's checks 7 and 8, then the values
 * (ours).  Fills *a's hint fields. */
static bool hints_ok(const td_call *call, int bytes, td_ptx_access *a,
                     td_reason *why)
{
    const td_config_entry *cache = td_call_config(call, "cache");
    char v[TD_NAME_MAX + 8];
    if (cache != NULL && !(cache->kind == TD_VALUE_STRING &&
                           strcmp(cache->s, "nc") == 0)) {
        repr(cache, v, sizeof v);
        td_reason_set(why, "unsupported cache config %s; expected None or "
                           "'nc'",
                      v);
        return false;
    }
    static const char *const keys[3] = {"l1_evict", "l2_evict",
                                        "prefetch_size"};
    const td_config_entry *h[3];
    bool any = cache != NULL;
    for (int i = 0; i < 3; i++) {
        h[i] = td_call_config(call, keys[i]);
        /* TVM: a hint given with a non-empty value */
        if (h[i] != NULL &&
            !(h[i]->kind == TD_VALUE_STRING && h[i]->s[0] == '\0'))
            any = true;
    }
    const td_buffer *s = td__copy_src(call);
    if (any && !td__copy_is_global(s)) {
        td_reason_set(why,
                      "cache/L1/L2 hint config applies to global loads; "
                      "requires src scope 'global', got '%.*s'",
                      (int)strnlen(s->scope, TD_NAME_MAX), s->scope);
        return false;
    }
    a->nc = cache != NULL;
    for (int i = 0; i < 3; i++) {
        if (h[i] == NULL ||
            (h[i]->kind == TD_VALUE_STRING && h[i]->s[0] == '\0'))
            continue;
        const char *text = h[i]->kind == TD_VALUE_STRING ? h[i]->s : NULL;
        int rc = i == 0   ? td_ptx_l1_parse(text, &a->l1)
                 : i == 1 ? td_ptx_l2_parse(text, &a->l2)
                          : td_ptx_prefetch_parse(text, &a->prefetch);
        if (rc != 0) {
            static const char *const allowed[3] = {
                "L1::evict_normal, L1::evict_unchanged, L1::evict_first, "
                "L1::evict_last, L1::no_allocate",
                "L2::evict_first, L2::evict_last, L2::evict_normal",
                "L2::64B, L2::128B, L2::256B"};
            repr(h[i], v, sizeof v);
            td_reason_set(why, "config '%s': %s is not one of %s", keys[i], v,
                          allowed[i]);
            return false;
        }
    }
    if (a->l2 != TD_PTX_L2_NONE && bytes != 32) {
        td_reason_set(why, "config 'l2_evict' needs a 256-bit load "
                           "(vec_256b)");
        return false;
    }
    return true;
}

/*
 * The region's n elements in memory: their storage offsets must follow
 * each other (layout and swizzle applied) from a start that is a multiple
 * of n (for memory: the access's alignment, the buffers' bases being
 * aligned; for registers: whole containers).  *first receives the first
 * offset.
 */
static bool run_ok(const td_call *call, const td_region *r, int64_t n,
                   int bytes, bool regs, int64_t *first, td_reason *why)
{
    const td_buffer *b = &call->buffers[r->buffer];
    char text[160];
    int64_t off0 = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t off;
        if (!td__copy_phys(b, td__copy_elem(call, r, k), &off)) {
            const char *axis = "a replica";
            td__copy_thread_axis(b, &axis);
            td_reason_set(why, "the layout of %.*s (%s) does not map each "
                               "element to one offset",
                          (int)strnlen(b->name, TD_NAME_MAX), b->name, axis);
            return false;
        }
        if (k == 0)
            off0 = off;
        else if (off != off0 + k) {
            region_text(call, r, text, sizeof text);
            td_reason_set(why, "region %s is not contiguous in %s", text,
                          regs ? "its registers" : "memory");
            return false;
        }
    }
    int ebits = td_dtype_bits(b->dtype);
    int64_t unit = regs ? (bytes >= 4 ? 32 : bytes * 8) / ebits : n;
    /* What the block ids add must keep the access aligned in every
     * block (a memory region only: registers are never sliced by them). */
    int64_t blk = regs ? 0 : td__region_block_align(call, r);
    if (unit > 0 && (off0 % unit != 0 || (blk > 0 && blk % unit != 0))) {
        start_text(call, r, text, sizeof text);
        if (regs)
            td_reason_set(why, "region start %s is not at a %d-bit register "
                               "boundary",
                          text, bytes >= 4 ? 32 : bytes * 8);
        else
            td_reason_set(why, "%s region start %s is not %d-byte aligned%s",
                          r == &call->dst ? "dst" : "src", text, bytes,
                          blk > 0 && blk % unit != 0 ? " in every block" : "");
        return false;
    }
    *first = off0;
    return true;
}

typedef struct vec_check {
    td_ptx_access a;
    int64_t src_off, dst_off;
} vec_check;

static bool forced_check(const td_call *call, int bytes, const char *name,
                         vec_check *c, td_reason *why)
{
    memset(c, 0, sizeof *c);
    if (strncmp(call->dispatch, name, TD_NAME_MAX) != 0) {
        td_reason_set(why, "requires explicit dispatch='%s'", name);
        return false;
    }
    if (call->scope != TD_SCOPE_THREAD) {
        td_reason_set(why, "expected thread exec_scope, got %s",
                      td_exec_scope_name(call->scope));
        return false;
    }
    if (!scopes_ok(call, why))
        return false;
    const td_buffer *s = td__copy_src(call), *d = td__copy_dst(call);
    if (s->dtype != d->dtype) {
        td_reason_set(why, "dtype mismatch: src=%s, dst=%s",
                      td_dtype_name(s->dtype), td_dtype_name(d->dtype));
        return false;
    }
    int ebits = td_dtype_bits(s->dtype);
    if ((bytes * 8) % ebits != 0) {
        td_reason_set(why, "%s is not an integral number of %s elements",
                      name, td_dtype_name(s->dtype));
        return false;
    }
    int64_t n = bytes * 8 / ebits;
    const td_region *sr = td__copy_src_region(call);
    if (td_region_size(sr) != n) {
        td_reason_set(why, "src region does not contain exactly %" PRId64
                           " elements",
                      n);
        return false;
    }
    if (td_region_size(&call->dst) != n) {
        td_reason_set(why, "dst region does not contain exactly %" PRId64
                           " elements",
                      n);
        return false;
    }
    if (!hints_ok(call, bytes, &c->a, why))
        return false;
    /* Ours from here on (TVM checks none of it). */
    if (bytes == 32) {
        if (call->sm_version < 100) {
            char arch[TD_NAME_MAX + 8];
            snprintf(arch, sizeof arch, "%.*s",
                     (int)strnlen(call->arch, TD_NAME_MAX - 1), call->arch);
            td_reason_set(why, "vec_256b needs sm_100 or newer (arch %s)",
                          call->sm_version == 0 ? "unknown" : arch);
            return false;
        }
        const td_buffer *m = td__copy_is_local(s) ? d : s;
        const td_buffer *o = m == s ? d : s;
        const td_buffer *bad = !td__copy_is_global(m) ? m
                               : !td__copy_is_local(o) && !td__copy_is_global(o)
                                   ? o
                                   : NULL;
        if (bad != NULL) {
            td_reason_set(why, "vec_256b: 256-bit accesses exist for global "
                               "memory only (%s scope %.*s)",
                          bad == d ? "dst" : "src",
                          (int)strnlen(bad->scope, TD_NAME_MAX), bad->scope);
            return false;
        }
    }
    if (!td__copy_global_ok(call, why))
        return false;
    if (!run_ok(call, sr, n, bytes, td__copy_is_local(s), &c->src_off, why) ||
        !run_ok(call, &call->dst, n, bytes, td__copy_is_local(d), &c->dst_off,
                why))
        return false;
    c->a.bits = bytes >= 4 ? 32 : bytes * 8;
    c->a.lanes = bytes >= 4 ? bytes / 4 : 1;
    return true;
}

typedef struct forced_info {
    int bytes;
    const char *name;
} forced_info;

static bool forced_pred(const td_call *call, const td_args *args, void *user,
                        td_reason *why)
{
    (void)args;
    const forced_info *f = user;
    vec_check c;
    return forced_check(call, f->bytes, f->name, &c, why);
}

static void start_idx(td_ir *ir, const td_region *r, td_expr **idx)
{
    for (int d = 0; d < r->ndim; d++)
        idx[d] = td__region_start_expr(ir, r, d, 0);
}

static int forced_emit(const td_call *call, const td_op_desc *op,
                       const void *plan, td_ir *ir, void *user,
                       td_reason *why)
{
    (void)op;
    (void)plan;
    const forced_info *f = user;
    vec_check c;
    if (!forced_check(call, f->bytes, f->name, &c, why))
        return TD_EDECLINED;
    const td_region *sr = td__copy_src_region(call), *dr = &call->dst;
    const td_buffer *s = td__copy_src(call), *d = td__copy_dst(call);
    td_ir_buf *sb = td__copy_declare(call, sr->buffer, ir, why);
    td_ir_buf *db = sb != NULL ? td__copy_declare(call, dr->buffer, ir, why)
                               : NULL;
    if (sb == NULL || db == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_expr *si[TD_MAX_RANK], *di[TD_MAX_RANK];
    start_idx(ir, sr, si);
    start_idx(ir, dr, di);
    td_ptx_access a = c.a;
    int ebits = td_dtype_bits(s->dtype);
    if (td__copy_is_local(s)) {
        /* registers -> memory: one store */
        a.mem = db;
        a.n = dr->ndim;
        a.idx = di;
        a.regs = sb;
        a.word = td_int(ir, c.src_off * ebits / a.bits);
        td_ir_ptx_st(ir, &a);
    } else if (td__copy_is_local(d)) {
        a.mem = sb;
        a.n = sr->ndim;
        a.idx = si;
        a.regs = db;
        a.word = td_int(ir, c.dst_off * ebits / a.bits);
        td_ir_ptx_ld(ir, &a);
    } else {
        /* memory -> memory through a scratch of containers */
        td_dtype ct = a.bits == 32 ? TD_U32 : a.bits == 16 ? TD_U16 : TD_U8;
        td_ir_buf *tmp = td_ir_scratch(ir, "tmp", ct, a.lanes);
        a.mem = sb;
        a.n = sr->ndim;
        a.idx = si;
        a.regs = tmp;
        a.word = td_int(ir, 0);
        td_ir_ptx_ld(ir, &a);
        td_ptx_access st = {.mem = db, .n = dr->ndim, .idx = di,
                            .bits = a.bits, .lanes = a.lanes, .regs = tmp,
                            .word = td_int(ir, 0)};
        td_ir_ptx_st(ir, &st);
    }
    int rc = td_ir_status(ir);
    if (rc == 0 && !td__copy_is_local(d))
        td_reason_set(why,
                      "one %d-byte access by the calling thread; no barrier "
                      "is emitted: other threads may read %.*s (%s) only "
                      "after the caller synchronises",
                      f->bytes, (int)strnlen(d->name, TD_NAME_MAX), d->name,
                      d->scope);
    return rc;
}

#define FORCED(bits, bytes)                                                  \
    static const forced_info info_##bits = {bytes, "vec_" #bits "b"};        \
    static const td_pred_desc preds_##bits[] = {                             \
        {.name = "vec_" #bits "b_applicable", .fn = forced_pred,             \
         .user = (void *)&info_##bits}};                                     \
    const td_impl_desc td__variant_copy_vec_##bits##b = {                    \
        .name = "vec_" #bits "b",                                            \
        .emit = forced_emit,                                                 \
        .user = (void *)&info_##bits,                                        \
        .preds = preds_##bits,                                               \
        .npreds = 1,                                                         \
    };

FORCED(16, 2)
FORCED(32, 4)
FORCED(64, 8)
FORCED(128, 16)
FORCED(256, 32)
