/*
 * The `reg` variant of the elementwise ops (upstream elementwise/reg.py):
 * every operand in registers (`local`); the partition of the elements
 * among threads is the one dst's layout induces.
 *
 * Each region operand's layout (a buffer without one has the row-major
 * layout of its shape) is sliced to its region and, when its shape differs
 * from dst's, lifted to dst's shape with stride-0 iters (broadcasting).  dst's
 * sliced, canonical layout is the anchor: its iters split the logical index
 * into digits; every operand is grouped by those digits, its thread part
 * must equal dst's (the same thread owns the same elements), and what is
 * left are per-thread memory offsets.  The loop runs over dst's memory
 * iters, ordered by stride, outermost first:
 *
 *   for f in serial(per_thread / vec):
 *       dst[m_dst(f)] = cast(op(src_i[m_i(f)] ...))
 *
 * With a packed emit (f32x2 on sm_100+, paired casts) or float16 /
 * bfloat16 pair arithmetic (ewise_vec.c) two consecutive elements (the
 * innermost iter's, stride 1 in every operand) go through one
 * instruction.  No barrier: registers are private.  This module uses the
 * model's layout algebra (layout.h), so it is not plugin-clean as
 * ewise_smem.c is.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ewise.h"
#include "ewise_vec.h"
#include "layout.h"
#include "variants.h"

/* One region operand's per-thread memory map. */
typedef struct reg_map {
    int buffer;
    int64_t base;                  /* memory offset */
    int nit;
    td_iter it[TD_MAX_LAYOUT_ITERS]; /* memory iters, dst's loop order */
    int grp[TD_MAX_LAYOUT_ITERS];  /* the loop iter each one belongs to */
} reg_map;

typedef struct reg_plan {
    const ew_info *info;
    ew_operands o;
    int nmem;                              /* dst's memory iters */
    int64_t mem_ext[TD_MAX_LAYOUT_ITERS];  /* in loop order, outer first */
    int64_t per_thread;
    reg_map dst;
    reg_map src[EW_MAX_OPERANDS];          /* region sources */
    int64_t slots[TD_MAX_BUFFERS];         /* 1-D register storage */
    int vec;
    ew_pack pack;
    bool paired;     /* float16 / bfloat16 pair arithmetic, vec 2 */
    const char *rnd;
} reg_plan;

static size_t nlen(const char *f)
{
    return strnlen(f, TD_NAME_MAX);
}

/* A buffer's layout, or the row-major one of its shape. */
static void layout_of(const td_buffer *b, td_layout *l)
{
    if (b->has_layout) {
        *l = b->layout;
        return;
    }
    memset(l, 0, sizeof *l);
    int64_t stride = 1;
    l->nshard = b->ndim;
    for (int d = b->ndim - 1; d >= 0; d--) {
        l->shard[d] = (td_iter){b->shape[d], stride, TD_AXIS_M};
        stride *= b->shape[d];
    }
}

/* An operand's layout sliced to its region, scope-fused and canonical. */
static bool sliced_layout(const td_call *call, const td_region *r,
                          td_layout *out, td_reason *why)
{
    const td_buffer *b = &call->buffers[r->buffer];
    td_layout l;
    layout_of(b, &l);
    if (td__lay_check(&l, NULL, 0) != 0 ||
        td__lay_slice(&l, b->shape, b->ndim, r->start, r->extent, out) != 0 ||
        td__lay_check(out, NULL, 0) != 0) {
        td_reason_set(why,
                      "layout of %.*s cannot be sliced to the region (%.*s)",
                      (int)nlen(b->name), b->name,
                      (int)strnlen(b->layout_text, sizeof b->layout_text),
                      b->layout_text);
        return false;
    }
    if (td__lay_fuse_scope(out, call->scope) != 0 ||
        td__lay_check(out, NULL, 0) != 0 ||
        td__lay_canonicalize(out, out) != 0) {
        td_reason_set(why, "layout of %.*s is malformed", (int)nlen(b->name),
                      b->name);
        return false;
    }
    return true;
}

/* upstream _broadcast_lift: l (of shape r's extents) to dst's shape. */
static bool lift(const td_layout *l, const td_region *r, const td_region *d,
                 td_layout *out)
{
    td_layout g;
    int seps[TD_MAX_RANK + 1];
    if (td__lay_group(l, r->extent, r->ndim, &g, seps) != 0)
        return false;
    td_layout o = g;
    o.nshard = 0;
    int pad = d->ndim - r->ndim;
    for (int k = 0; k < pad; k++)
        o.shard[o.nshard++] = (td_iter){d->extent[k], 0, TD_AXIS_M};
    for (int k = 0; k < r->ndim; k++) {
        if (r->extent[k] == d->extent[pad + k]) {
            for (int i = seps[k]; i < seps[k + 1]; i++) {
                if (o.nshard >= TD_MAX_LAYOUT_ITERS)
                    return false;
                o.shard[o.nshard++] = g.shard[i];
            }
        } else {
            if (o.nshard >= TD_MAX_LAYOUT_ITERS)
                return false;
            o.shard[o.nshard++] = (td_iter){d->extent[pad + k], 0, TD_AXIS_M};
        }
    }
    *out = o;
    return true;
}

static const char *scope_axis(td_exec_scope s)
{
    return s == TD_SCOPE_WARP ? "laneid"
           : s == TD_SCOPE_WARPGROUP ? "tid_in_wg"
                                     : "tx";
}

/* upstream _validate_scope_level_anchor */
static bool scope_level(const td_call *call, const td_layout *l,
                        td_reason *why)
{
    if (call->scope == TD_SCOPE_THREAD)
        return true;
    const char *scope = td_exec_scope_name(call->scope);
    const char *axis = scope_axis(call->scope);
    int64_t cnt = td__scope_threads(call);
    td_iter th[TD_MAX_LAYOUT_ITERS];
    int n = 0;
    for (int i = 0; i < l->nshard; i++)
        if (td_axis_is_thread(l->shard[i].axis))
            th[n++] = l->shard[i];
    if (n == 0) {
        td_reason_set(why,
                      "%s-scope op needs a %s-level operand whose layout "
                      "carries thread axes (%s composing to %" PRId64
                      ":1); got a thread-local view with no thread axes — "
                      "pass the %s-level tensor, not its `.local()` "
                      "(per-thread) view",
                      scope, scope, axis, cnt, scope);
        return false;
    }
    char bad[256] = "";
    size_t len = 0;
    /* Python's sorted() is alphabetical. */
    const char *names[TD_AXIS_COUNT];
    int nn = 0;
    for (int a = 0; a < TD_AXIS_COUNT; a++) {
        const char *nm = td_axis_name((td_axis)a);
        if (strcmp(nm, axis) == 0)
            continue;
        bool used = false;
        for (int i = 0; i < n; i++)
            used = used || th[i].axis == (td_axis)a;
        if (used)
            names[nn++] = nm;
    }
    if (nn > 0) {
        for (int i = 1; i < nn; i++)
            for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                const char *t = names[j];
                names[j] = names[j - 1];
                names[j - 1] = t;
            }
        len += (size_t)snprintf(bad + len, sizeof bad - len, "[");
        for (int i = 0; i < nn && len < sizeof bad; i++)
            len += (size_t)snprintf(bad + len, sizeof bad - len, "%s'%s'",
                                    i > 0 ? ", " : "", names[i]);
        if (len < sizeof bad)
            snprintf(bad + len, sizeof bad - len, "]");
        td_reason_set(why,
                      "%s-scope op operand carries thread axes %s; after "
                      "canonicalization a %s-level layout must use only '%s'",
                      scope, bad, scope, axis);
        return false;
    }
    /* sort by stride (stable) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && th[j - 1].stride > th[j].stride; j--) {
            td_iter t = th[j];
            th[j] = th[j - 1];
            th[j - 1] = t;
        }
    int64_t running = 1;
    for (int i = 0; i < n; i++) {
        if (th[i].stride != running) {
            td_reason_set(why,
                          "%s-scope op operand thread axes do not tile a "
                          "complete %" PRId64 ":1 (sorted by stride: expected %"
                          PRId64 ", got %" PRId64 ")",
                          scope, cnt, running, th[i].stride);
            return false;
        }
        running *= th[i].extent;
    }
    if (running != cnt) {
        td_reason_set(why,
                      "%s-scope op operand thread axes span %" PRId64
                      " threads, not the full %" PRId64 " of the %s",
                      scope, running, cnt, scope);
        return false;
    }
    return true;
}

/* upstream _check_layout_operands_agree: replica signatures. */
static bool replicas_agree(const td_layout *a, const td_layout *b,
                           td_reason *why)
{
    if (a->nrep != b->nrep) {
        td_reason_set(why,
                      "replica sig mismatch (different number of replica iters)");
        return false;
    }
    for (int i = 0; i < a->nrep; i++) {
        const char *what = a->rep[i].axis != b->rep[i].axis       ? "axis key"
                           : a->rep[i].extent != b->rep[i].extent ? "extent"
                           : a->rep[i].stride != b->rep[i].stride ? "stride"
                                                                  : NULL;
        if (what != NULL) {
            td_reason_set(why, "replica sig mismatch (%s)", what);
            return false;
        }
    }
    return true;
}

/* Fuses the non-unit iters of g[lo..hi) into at most one iter when they
 * are one axis and adjacent; returns the count of iters left (0, 1, or
 * 2 meaning "not one iter"). */
static int fused_one(const td_iter *g, int lo, int hi, td_iter *out)
{
    int n = 0;
    int64_t span;
    td_iter cur = {1, 1, TD_AXIS_M};
    for (int i = lo; i < hi; i++) {
        if (g[i].extent == 1)
            continue;
        if (n == 0) {
            cur = g[i];
            n = 1;
        } else if (g[i].axis == cur.axis &&
                   !__builtin_mul_overflow(g[i].extent, g[i].stride, &span) &&
                   span == cur.stride &&
                   !__builtin_mul_overflow(cur.extent, g[i].extent, &span)) {
            cur = (td_iter){span, g[i].stride, cur.axis};
        } else {
            return 2;
        }
    }
    *out = cur;
    return n;
}

#define MISMATCH "thread part mismatch between anchor and operand after alignment"

/* Builds the memory map of one operand whose sliced (and lifted) layout
 * is l against the anchor a (dst's sliced canonical layout); order[]
 * lists a's memory iters in loop order. */
static bool build_map(const td_layout *a, const int *order, int nmem,
                      const td_layout *l, int buffer, reg_map *m,
                      td_reason *why)
{
    int64_t ext[TD_MAX_LAYOUT_ITERS];
    td_layout g;
    int seps[TD_MAX_LAYOUT_ITERS + 1];
    if (a->nshard > TD_MAX_RANK) {
        td_reason_set(why, "dst layout has %d iters after slicing; at most %d "
                           "supported",
                      a->nshard, TD_MAX_RANK);
        return false;
    }
    for (int j = 0; j < a->nshard; j++)
        ext[j] = a->shard[j].extent;
    if (td__lay_group(l, ext, a->nshard, &g, seps) != 0) {
        td_reason_set(why, MISMATCH);
        return false;
    }
    for (int t = 0; t < TD_AXIS_COUNT; t++)
        if (td_axis_is_thread((td_axis)t) && g.offset[t] != a->offset[t]) {
            td_reason_set(why, MISMATCH);
            return false;
        }
    for (int j = 0; j < a->nshard; j++) {
        const td_iter *ai = &a->shard[j];
        if (!td_axis_is_thread(ai->axis)) {
            for (int i = seps[j]; i < seps[j + 1]; i++)
                if (g.shard[i].extent > 1 && td_axis_is_thread(g.shard[i].axis)) {
                    td_reason_set(why, MISMATCH);
                    return false;
                }
            continue;
        }
        td_iter f;
        int n = fused_one(g.shard, seps[j], seps[j + 1], &f);
        if (ai->extent == 1)
            continue;
        if (n != 1 || f.axis != ai->axis || f.extent != ai->extent ||
            f.stride != ai->stride) {
            td_reason_set(why, MISMATCH);
            return false;
        }
    }
    m->buffer = buffer;
    m->base = g.offset[TD_AXIS_M];
    m->nit = 0;
    for (int k = 0; k < nmem; k++) {
        int j = order[k];
        for (int i = seps[j]; i < seps[j + 1]; i++) {
            if (g.shard[i].extent == 1)
                continue;
            m->it[m->nit] = g.shard[i];
            m->grp[m->nit++] = k;
        }
    }
    return true;
}

/* The storage of a register buffer: 1 + its layout's memory span. */
static int64_t storage_slots(const td_buffer *b)
{
    td_layout l;
    layout_of(b, &l);
    int64_t span = 0;
    if (td__lay_span(&l, TD_LAY_ALL_MEMORY, &span) != 0 || span < 1)
        span = 1;
    return span;
}

/* Whether the map's two consecutive elements of the innermost loop iter
 * are adjacent in memory (and, for paired casts, start at an even slot). */
static bool map_contig(const reg_map *m, int last, bool even)
{
    int k = m->nit - 1;
    if (k < 0 || m->grp[k] != last || m->it[k].stride != 1 ||
        m->it[k].extent % 2 != 0)
        return false;
    if (!even)
        return true;
    if (m->base % 2 != 0)
        return false;
    for (int i = 0; i < k; i++)
        if (m->it[i].stride % 2 != 0)
            return false;
    return true;
}

static bool reg_check(const td_call *call, const td_op_desc *op, reg_plan *p,
                      td_reason *why)
{
    if (!td__ewise_common(call, op, false, &p->o, why))
        return false;
    const td_buffer *db = &call->buffers[call->dst.buffer];
    if (db->has_layout && db->layout.swizzle) {
        td_reason_set(why, "anchor layout is swizzle");
        return false;
    }
    td_layout a;
    if (!sliced_layout(call, &call->dst, &a, why) || !scope_level(call, &a, why) ||
        !td__ewise_shapes(call, &p->o, why))
        return false;
    td_layout sl[EW_MAX_OPERANDS];
    for (int i = 0; i < p->o.n; i++) {
        if (p->o.src[i].kind != TD_OPERAND_REGION)
            continue;
        const td_buffer *b = &call->buffers[p->o.src[i].region.buffer];
        if (b->has_layout && b->layout.swizzle) {
            td_reason_set(why, "layout of %.*s is swizzle", (int)nlen(b->name),
                          b->name);
            return false;
        }
        if (!sliced_layout(call, &p->o.src[i].region, &sl[i], why) ||
            !replicas_agree(&a, &sl[i], why))
            return false;
    }
    if (!td__ewise_limits(call, &p->o, &p->rnd, why))
        return false;
    /* dst: every element written once.  A replica on memory would leave
     * copies unwritten; a thread offset means a region of part of the
     * threads. */
    for (int i = 0; i < a.nrep; i++)
        if (!td_axis_is_thread(a.rep[i].axis)) {
            td_reason_set(why, "dst layout replicates elements in memory; "
                               "reg writes one copy per thread");
            return false;
        }
    for (int t = 0; t < TD_AXIS_COUNT; t++)
        if (td_axis_is_thread((td_axis)t) && a.offset[t] != 0) {
            td_reason_set(why, "dst region starts at %s %" PRId64
                               "; reg needs a region of all the threads",
                          td_axis_name((td_axis)t), a.offset[t]);
            return false;
        }

    /* loop order: dst's memory iters by stride, descending (stable) */
    int order[TD_MAX_LAYOUT_ITERS], nmem = 0;
    for (int j = 0; j < a.nshard; j++)
        if (!td_axis_is_thread(a.shard[j].axis) && a.shard[j].extent > 1)
            order[nmem++] = j;
    for (int i = 1; i < nmem; i++)
        for (int j = i; j > 0 && a.shard[order[j - 1]].stride <
                                     a.shard[order[j]].stride; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    p->nmem = nmem;
    p->per_thread = 1;
    for (int k = 0; k < nmem; k++) {
        p->mem_ext[k] = a.shard[order[k]].extent;
        p->per_thread *= p->mem_ext[k];
    }
    if (!build_map(&a, order, nmem, &a, call->dst.buffer, &p->dst, why))
        return false;
    for (int i = 0; i < p->o.n; i++) {
        if (p->o.src[i].kind != TD_OPERAND_REGION)
            continue;
        const td_region *r = &p->o.src[i].region;
        td_layout l = sl[i];
        bool same = r->ndim == call->dst.ndim;
        for (int k = 0; same && k < r->ndim; k++)
            same = r->extent[k] == call->dst.extent[k];
        if (!same && !lift(&sl[i], r, &call->dst, &l)) {
            td_reason_set(why, MISMATCH);
            return false;
        }
        if (!build_map(&a, order, nmem, &l, r->buffer, &p->src[i], why))
            return false;
    }
    for (int b = 0; b < call->nbuffers && b < TD_MAX_BUFFERS; b++)
        p->slots[b] = storage_slots(&call->buffers[b]);

    p->info = td__ewise_info(op);
    p->vec = 1;
    p->pack = EW_PACK_NONE;
    if (p->info->pack != EW_PACK_NONE && nmem > 0 &&
        p->mem_ext[nmem - 1] % 2 == 0 &&
        td__ewise_pack_applies(call, p->info, &p->o)) {
        bool even = p->info->pack == EW_PACK_CAST2;
        bool ok = map_contig(&p->dst, nmem - 1, even);
        for (int i = 0; ok && i < p->o.n; i++)
            if (p->o.src[i].kind == TD_OPERAND_REGION)
                ok = map_contig(&p->src[i], nmem - 1, even);
        if (ok) {
            p->vec = 2;
            p->pack = p->info->pack;
        }
    }
    /* Pair arithmetic where two consecutive elements of the innermost
     * iter are adjacent in every operand and start at an even offset
     * (read and written as one 4-byte word, as the paired casts are). */
    td_dtype dt = call->buffers[call->dst.buffer].dtype;
    p->paired = false;
    if (p->pack == EW_PACK_NONE && nmem > 0 && p->mem_ext[nmem - 1] % 2 == 0 &&
        p->info->fn != EW_CAST && td__ewise_pairable(p->info, &p->o, dt)) {
        bool ok = map_contig(&p->dst, nmem - 1, true);
        for (int i = 0; ok && i < p->o.n; i++)
            if (p->o.src[i].kind == TD_OPERAND_REGION)
                ok = map_contig(&p->src[i], nmem - 1, true);
        if (ok) {
            p->vec = 2;
            p->paired = true;
        }
    }
    return true;
}

static int reg_plan_fn(const td_call *call, const td_op_desc *op, void *plan,
                       void *user, td_reason *why)
{
    (void)user;
    return reg_check(call, op, plan, why) ? 0 : TD_EDECLINED;
}

static bool reg_valid(const td_call *call, const td_args *args, void *user,
                      td_reason *why)
{
    (void)args;
    (void)user;
    reg_plan tmp;
    return reg_check(call, td__ewise_op_named(call->op), &tmp, why);
}

static const td_pred_desc reg_preds[] = {
    {"ewise_reg_valid", NULL, 0, reg_valid, NULL, NULL},
};

/* ---- emit ---------------------------------------------------------------- */

typedef struct reg_ctx {
    td_ir *ir;
    const td_call *call;
    const reg_plan *p;
    td_ir_buf *bufs[TD_MAX_BUFFERS];
    const td_var *f;
    int vec, lane;
    const td_var *in[EW_MAX_OPERANDS]; /* the paired path's vectors */
} reg_ctx;

/* the per-thread element index: f * vec + lane */
static td_expr *flat(td_ir *ir, const void *c)
{
    const reg_ctx *x = c;
    td_expr *e = td_var_ref(ir, x->f);
    if (x->vec > 1)
        e = td_mul(ir, e, td_int(ir, x->vec));
    return x->lane != 0 ? td_add(ir, e, td_int(ir, x->lane)) : e;
}

/* The memory offset of map m at the current element. */
static td_expr *offset(reg_ctx *x, const reg_map *m)
{
    td_ir *ir = x->ir;
    const reg_plan *p = x->p;
    td_expr *sum = NULL;
    for (int k = 0; k < p->nmem; k++) {
        /* the map's iters of loop iter k, outer first */
        int lo = -1, hi = -1;
        for (int i = 0; i < m->nit; i++)
            if (m->grp[i] == k) {
                if (lo < 0)
                    lo = i;
                hi = i + 1;
            }
        if (lo < 0)
            continue;
        int64_t inner = 1;
        for (int i = hi - 1; i >= lo; i--) {
            const td_iter *it = &m->it[i];
            if (it->stride == 0) {
                inner *= it->extent;
                continue;
            }
            td_expr *dd[TD_MAX_LAYOUT_ITERS];
            td__unflatten(ir, flat, x, p->nmem, p->mem_ext, NULL, dd);
            td_expr *d = dd[k];
            if (inner > 1)
                d = td_div(ir, d, td_int(ir, inner));
            if (i != lo)
                d = td_mod(ir, d, td_int(ir, it->extent));
            td_expr *t = it->stride == 1 ? d : td_mul(ir, d, td_int(ir, it->stride));
            sum = sum == NULL ? t : td_add(ir, sum, t);
            inner *= it->extent;
        }
    }
    if (m->base != 0 || sum == NULL)
        sum = sum == NULL ? td_int(ir, m->base)
                          : td_add(ir, sum, td_int(ir, m->base));
    return sum;
}

static td_expr *src_value(void *c, int i)
{
    reg_ctx *x = c;
    const td_operand *o = &x->p->o.src[i];
    if (o->kind != TD_OPERAND_REGION)
        return td__ewise_scalar(x->ir, o);
    return td_load1(x->ir, x->bufs[o->region.buffer],
                    offset(x, &x->p->src[i]));
}

static void store_dst(void *c, td_expr *v)
{
    reg_ctx *x = c;
    td_ir_store1(x->ir, x->bufs[x->call->dst.buffer], offset(x, &x->p->dst), v);
}

static void emit_packed(reg_ctx *x)
{
    td_ir *ir = x->ir;
    const reg_plan *p = x->p;
    if (p->pack == EW_PACK_CAST2) {
        x->lane = 0;
        td_expr *di[] = {offset(x, &p->dst)};
        td_expr *si[] = {offset(x, &p->src[0])};
        td_ir_cast_pair(ir, x->bufs[x->call->dst.buffer], 1, di,
                        x->bufs[p->o.src[0].region.buffer], 1, si);
        return;
    }
    td__ewise_emit_f32x2(ir, p->info, &p->o, p->rnd, src_value, store_dst, x,
                         &x->lane);
}

/* Source i's pair at the current f: a pair of its vector. */
static td_expr *src_pair(void *c, int i)
{
    reg_ctx *x = c;
    return td_vec_pair(x->ir, x->in[i], 0);
}

/* The pair at f: each source's two elements read as one 4-byte vector,
 * the op on the pair, the result stored as one.  Register arrays are
 * reinterpreted as the paired casts do: even offsets only (reg_check). */
static void emit_paired(reg_ctx *x, td_dtype dt)
{
    td_ir *ir = x->ir;
    const reg_plan *p = x->p;
    static const char *const names[] = {"va", "vb", "vc", "vd", "ve"};
    x->lane = 0;
    for (int i = 0; i < p->o.n; i++) {
        if (p->o.src[i].kind != TD_OPERAND_REGION)
            continue;
        td_expr *off[] = {offset(x, &p->src[i])};
        x->in[i] = td_ir_let_vector(ir, names[i],
                                    x->bufs[p->o.src[i].region.buffer], 1,
                                    off, 2);
    }
    td_expr *v = td__ewise_pair(ir, p->info, &p->o, dt, src_pair, x);
    const td_var *r = td_ir_let_vector_of(ir, "vr", dt, 2, 1, &v);
    td_expr *off[] = {offset(x, &p->dst)};
    td_ir_store_vector(ir, x->bufs[x->call->dst.buffer], 1, off, r);
}

static int reg_emit(const td_call *call, const td_op_desc *op,
                    const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)user;
    (void)op;
    const reg_plan *p = plan;
    if (p == NULL) {
        td_reason_set(why, "reg emitter called without its plan");
        return TD_EINVAL;
    }
    reg_ctx x = {.ir = ir, .call = call, .p = p, .vec = p->vec};
    int bufs[1 + EW_MAX_OPERANDS], nb = 0;
    bufs[nb++] = call->dst.buffer;
    for (int i = 0; i < p->o.n; i++)
        if (p->o.src[i].kind == TD_OPERAND_REGION)
            bufs[nb++] = p->o.src[i].region.buffer;
    for (int i = 0; i < nb; i++) {
        int b = bufs[i];
        if (x.bufs[b] != NULL)
            continue;
        const td_buffer *tb = &call->buffers[b];
        x.bufs[b] = td_ir_buffer(ir, tb->name, tb->dtype, tb->scope, 1,
                                 &p->slots[b]);
    }
    td_dtype dt = call->buffers[call->dst.buffer].dtype;
    x.f = td_ir_for(ir, "f", td_int(ir, p->per_thread / p->vec), TD_LOOP_SERIAL);
    if (p->pack != EW_PACK_NONE)
        emit_packed(&x);
    else if (p->paired)
        emit_paired(&x, dt);
    else
        store_dst(&x, td__ewise_compute(ir, p->info, &p->o, dt, src_value, &x));
    td_ir_end_for(ir);
    return td_ir_status(ir);
}

const td_impl_desc td__variant_ewise_reg = {
    .name = "reg",
    .emit = reg_emit,
    .preds = reg_preds,
    .npreds = sizeof reg_preds / sizeof *reg_preds,
    .plan = reg_plan_fn,
    .plan_size = sizeof(reg_plan),
    .plan_pred = "ewise_reg_valid",
};
