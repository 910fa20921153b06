/*
 * What the copies address and how: call buffers stored through a layout
 * (td_ir_buffer_layout), PTX loads and stores of containers (td_ir_ptx_ld,
 * td_ir_ptx_st) and the warp-collective ldmatrix / stmatrix: the
 * builders, which check an access, the cache hints' names, and the
 * instruction text both printers share (the chain "ld.global.nc.v4.u32"
 * and the CUDA helper's name).  A copy moves bits, not values: the
 * registers are seen as 8-, 16- or 32-bit containers, whatever the
 * element type.
 */
#include <string.h>

#include "codegen_internal.h"

static const char *const l1_names[TD_PTX_L1_COUNT] = {
    "", "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first",
    "L1::evict_last", "L1::no_allocate"};
static const char *const l2_names[TD_PTX_L2_COUNT] = {
    "", "L2::evict_first", "L2::evict_last", "L2::evict_normal"};
static const char *const prefetch_names[TD_PTX_PREFETCH_COUNT] = {
    "", "L2::64B", "L2::128B", "L2::256B"};

const char *td_ptx_l1_name(td_ptx_l1 h)
{
    return (unsigned)h < TD_PTX_L1_COUNT ? l1_names[h] : NULL;
}

const char *td_ptx_l2_name(td_ptx_l2 h)
{
    return (unsigned)h < TD_PTX_L2_COUNT ? l2_names[h] : NULL;
}

const char *td_ptx_prefetch_name(td_ptx_prefetch h)
{
    return (unsigned)h < TD_PTX_PREFETCH_COUNT ? prefetch_names[h] : NULL;
}

static int parse(const char *const *names, int n, const char *s, int *out)
{
    if (s == NULL)
        return TD_ENOENT;
    for (int i = 1; i < n; i++)
        if (strcmp(names[i], s) == 0) {
            *out = i;
            return 0;
        }
    return TD_ENOENT;
}

int td_ptx_l1_parse(const char *s, td_ptx_l1 *out)
{
    int v;
    int rc = parse(l1_names, TD_PTX_L1_COUNT, s, &v);
    if (rc == 0 && out != NULL)
        *out = (td_ptx_l1)v;
    return rc;
}

int td_ptx_l2_parse(const char *s, td_ptx_l2 *out)
{
    int v;
    int rc = parse(l2_names, TD_PTX_L2_COUNT, s, &v);
    if (rc == 0 && out != NULL)
        *out = (td_ptx_l2)v;
    return rc;
}

int td_ptx_prefetch_parse(const char *s, td_ptx_prefetch *out)
{
    int v;
    int rc = parse(prefetch_names, TD_PTX_PREFETCH_COUNT, s, &v);
    if (rc == 0 && out != NULL)
        *out = (td_ptx_prefetch)v;
    return rc;
}

/* ---- keys, chains, names ------------------------------------------------- */

static int bits_code(int bits)
{
    return bits == 8 ? 0 : bits == 16 ? 1 : 2;
}

static int lanes_code(int lanes)
{
    return lanes == 1 ? 0 : lanes == 2 ? 1 : lanes == 4 ? 2 : 3;
}

unsigned td__ptx_key(const td__ptx *x)
{
    return (unsigned)x->store | (unsigned)x->shared << 1 |
           (unsigned)x->nc << 2 | (unsigned)x->l1 << 3 |
           (unsigned)x->l2 << 6 | (unsigned)x->prefetch << 8 |
           (unsigned)bits_code(x->bits) << 10 |
           (unsigned)lanes_code(x->lanes) << 12 | (unsigned)x->matrix << 14 |
           (unsigned)x->trans << 15 | (unsigned)x->cp_async << 16 |
           (unsigned)(x->pred != NULL) << 17 | (unsigned)x->zfill << 18 |
           (unsigned)x->untyped << 19;
}

void td__ptx_unkey(unsigned key, td__ptx *x)
{
    memset(x, 0, sizeof *x);
    x->store = key & 1;
    x->shared = key >> 1 & 1;
    x->nc = key >> 2 & 1;
    x->l1 = (td_ptx_l1)(key >> 3 & 7);
    x->l2 = (td_ptx_l2)(key >> 6 & 3);
    x->prefetch = (td_ptx_prefetch)(key >> 8 & 3);
    x->bits = 8 << (key >> 10 & 3);
    x->lanes = 1 << (key >> 12 & 3);
    x->matrix = key >> 14 & 1;
    x->trans = key >> 15 & 1;
    x->cp_async = key >> 16 & 1;
    /* Only whether there is a guard matters to the helper's text. */
    static const td_expr guard;
    x->pred = key >> 17 & 1 ? &guard : NULL;
    x->zfill = key >> 18 & 1;
    x->untyped = key >> 19 & 1;
}

/* The chain's tokens in the ISA's order (TVM's copy_ptx_ld_chain). */
static int tokens(const td__ptx *x, const char **t)
{
    static const char *const vec[4] = {"", "v2", "v4", "v8"};
    static const char *const type[3] = {"u8", "u16", "u32"};
    static const char *const btype[3] = {"b8", "b16", "b32"};
    static const char *const num[4] = {"x1", "x2", "x4", "x8"};
    int n = 0;
    if (x->cp_async) {
        t[n++] = "cp";
        t[n++] = "async";
        t[n++] = x->bits * x->lanes == 128 ? "cg" : "ca";
        t[n++] = "shared";
        t[n++] = "global";
        if (x->prefetch != TD_PTX_PREFETCH_NONE)
            t[n++] = prefetch_names[x->prefetch];
        return n;
    }
    if (x->matrix) {
        t[n++] = x->store ? "stmatrix" : "ldmatrix";
        t[n++] = "sync";
        t[n++] = "aligned";
        t[n++] = "m8n8";
        t[n++] = num[lanes_code(x->lanes)];
        if (x->trans)
            t[n++] = "trans";
        t[n++] = "shared";
        t[n++] = "b16";
        return n;
    }
    t[n++] = x->store ? "st" : "ld";
    t[n++] = x->shared ? "shared" : "global";
    if (x->nc)
        t[n++] = "nc";
    if (x->l1 != TD_PTX_L1_NONE)
        t[n++] = l1_names[x->l1];
    if (x->l2 != TD_PTX_L2_NONE)
        t[n++] = l2_names[x->l2];
    if (x->prefetch != TD_PTX_PREFETCH_NONE)
        t[n++] = prefetch_names[x->prefetch];
    if (x->lanes > 1)
        t[n++] = vec[lanes_code(x->lanes)];
    t[n++] = (x->untyped ? btype : type)[bits_code(x->bits)];
    return n;
}

void td__ptx_chain(td_buf *o, const td__ptx *x)
{
    const char *t[10];
    int n = tokens(x, t);
    for (int i = 0; i < n; i++)
        td__buf_printf(o, "%s%s", i ? "." : "", t[i]);
}

void td__ptx_helper_name(td_buf *o, const td__ptx *x)
{
    const char *t[10];
    int n = tokens(x, t);
    td__buf_puts(o, "td_ptx");
    for (int i = 0; i < n; i++) {
        td__buf_puts(o, "_");
        for (const char *c = t[i]; *c; c++)
            td__buf_append(o, *c == ':' ? "_" : c, 1);
    }
    if (x->cp_async)
        td__buf_printf(o, "_%d%s", x->bits * x->lanes / 8,
                       x->pred == NULL ? "" : x->zfill ? "_zfill" : "_pred");
}

/* ---- buffers through a layout ------------------------------------------------ */

int td_ir_buffer_layout(td_ir *ir, td_ir_buf *b, int niters,
                        const int64_t *extent, const int64_t *stride,
                        const int *seps, int64_t offset)
{
    if (!td__ir_live(ir))
        return td_ir_status(ir);
    bool ok = b != NULL && b->owner == ir && !b->scratch && niters >= 1 &&
              niters <= TD_MAX_LAYOUT_ITERS && extent != NULL &&
              stride != NULL && seps != NULL && offset >= 0 &&
              offset <= TD_MAX_EXTENT && seps[0] == 0 &&
              seps[b->ndim] == niters;
    for (int d = 0; ok && d < b->ndim; d++) {
        int64_t prod = 1;
        ok = seps[d] <= seps[d + 1];
        for (int k = seps[d]; ok && k < seps[d + 1]; k++) {
            ok = extent[k] >= 1 && extent[k] <= TD_MAX_EXTENT &&
                 stride[k] >= 0 && stride[k] <= TD_MAX_EXTENT &&
                 !__builtin_mul_overflow(prod, extent[k], &prod);
        }
        ok = ok && prod == b->shape[d];
    }
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return TD_EINVAL;
    }
    b->lay_n = niters;
    memcpy(b->lay_ext, extent, sizeof *extent * (size_t)niters);
    memcpy(b->lay_str, stride, sizeof *stride * (size_t)niters);
    memcpy(b->lay_sep, seps, sizeof *seps * (size_t)(b->ndim + 1));
    b->lay_off = offset;
    return 0;
}

/* ---- the builder ------------------------------------------------------------ */

/* Whether the access is one PTX can spell: the container form, the
 * spaces, the hints (loads from global memory only; an L2 eviction
 * priority only on a 256-bit load), the register view. */
static bool valid(const td_ir *ir, const td_ptx_access *a, bool store)
{
    if (a == NULL || a->mem == NULL || a->regs == NULL || a->word == NULL ||
        a->mem->owner != ir || a->regs->owner != ir)
        return false;
    bool shared = strncmp(a->mem->scope, "shared", 6) == 0;
    bool global = strcmp(a->mem->scope, "global") == 0;
    if (a->mem->scratch || (!shared && !global))
        return false;
    if (strcmp(a->regs->scope, "local") != 0)
        return false;
    if (a->bits != 8 && a->bits != 16 && a->bits != 32)
        return false;
    if (a->lanes != 1 && a->lanes != 2 && a->lanes != 4 && a->lanes != 8)
        return false;
    if (a->lanes > 1 && a->bits != 32)
        return false;
    if (a->lanes == 8 && shared)
        return false;
    /* The register buffer's elements fit whole containers (or are whole
     * containers each: a 64-bit element is two 32-bit ones). */
    int eb = td_dtype_bits(a->regs->dtype);
    if (a->bits % eb != 0 && eb % a->bits != 0)
        return false;
    if ((unsigned)a->l1 >= TD_PTX_L1_COUNT ||
        (unsigned)a->l2 >= TD_PTX_L2_COUNT ||
        (unsigned)a->prefetch >= TD_PTX_PREFETCH_COUNT)
        return false;
    bool hints = a->nc || a->l1 != TD_PTX_L1_NONE ||
                 a->l2 != TD_PTX_L2_NONE ||
                 a->prefetch != TD_PTX_PREFETCH_NONE;
    if (hints && (store || !global))
        return false;
    if (a->l2 != TD_PTX_L2_NONE && a->lanes != 8)
        return false;
    return true;
}

static void ptx_access(td_ir *ir, const td_ptx_access *a, bool store,
                       bool matrix, bool trans,
                       const td_expr *const *words)
{
    if (!td__ir_live(ir))
        return;
    if (!valid(ir, a, store) || !td__ir_stmt_operand(ir, a->word) ||
        (a->offset != NULL && !td__ir_stmt_operand(ir, a->offset))) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    const td_expr *const *idx = NULL;
    if (a->offset == NULL) {
        idx = td__ir_idx(ir, a->mem, a->n, a->idx);
        if (idx == NULL)
            return;
    }
    td__stmt *s = td__ir_stmt(ir, TD__S_PTX);
    td__ptx *x = s != NULL ? td__arena_alloc(&((td_ir *)ir)->arena,
                                             sizeof *x)
                           : NULL;
    if (s == NULL || x == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return;
    }
    x->store = store;
    x->matrix = matrix;
    x->trans = trans;
    x->offset = a->offset;
    x->shared = strncmp(a->mem->scope, "shared", 6) == 0;
    x->bits = a->bits;
    x->lanes = a->lanes;
    x->regs = a->regs;
    x->word = a->word;
    x->words = words;
    x->nc = a->nc;
    x->l1 = a->l1;
    x->l2 = a->l2;
    x->prefetch = a->prefetch;
    x->untyped = a->untyped;
    s->buf = a->mem;
    s->nidx = idx != NULL ? a->n : 0;
    s->idx = idx;
    s->ptx = x;
    td__ir_append(ir, s);
}

void td_ir_ptx_ld(td_ir *ir, const td_ptx_access *a)
{
    ptx_access(ir, a, false, false, false, NULL);
}

void td_ir_ptx_st(td_ir *ir, const td_ptx_access *a)
{
    ptx_access(ir, a, true, false, false, NULL);
}

/* As the container accesses, with the matrix form's own conditions: a
 * shared buffer of 16-bit elements, 1, 2 or 4 words, a per-lane offset. */
static void matrix_access(td_ir *ir, const td_ptx_matrix *m, bool store)
{
    if (!td__ir_live(ir))
        return;
    if (m == NULL || m->mem == NULL || m->offset == NULL ||
        strncmp(m->mem->scope, "shared", 6) != 0 ||
        td_dtype_bits(m->mem->dtype) != 16 ||
        (m->num != 1 && m->num != 2 && m->num != 4)) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    const td_expr **w = NULL;
    td_expr *first = m->word;
    if (m->words != NULL) {
        w = td__arena_alloc(&ir->arena, sizeof *w * (size_t)m->num);
        if (w == NULL) {
            td__ir_fail(ir, TD_ENOMEM);
            return;
        }
        for (int i = 0; i < m->num; i++) {
            if (m->words[i] == NULL ||
                !td__ir_stmt_operand(ir, m->words[i])) {
                td__ir_fail(ir, TD_EINVAL);
                return;
            }
            w[i] = m->words[i];
        }
        first = m->words[0];
    }
    td_ptx_access a = {.mem = m->mem, .offset = m->offset, .bits = 32,
                       .lanes = m->num, .regs = m->regs, .word = first};
    ptx_access(ir, &a, store, true, m->trans, w);
}

void td_ir_ldmatrix(td_ir *ir, const td_ptx_matrix *m)
{
    matrix_access(ir, m, false);
}

void td_ir_stmatrix(td_ir *ir, const td_ptx_matrix *m)
{
    matrix_access(ir, m, true);
}

/* ---- cp.async ------------------------------------------------------------- */

void td_ir_cp_async(td_ir *ir, const td_ptx_cp_async *c)
{
    if (!td__ir_live(ir))
        return;
    bool ok = c != NULL && c->dst != NULL && c->src != NULL &&
              c->dst_offset != NULL && c->src_offset != NULL &&
              c->dst->owner == ir && c->src->owner == ir &&
              !c->dst->scratch && !c->src->scratch &&
              strncmp(c->dst->scope, "shared", 6) == 0 &&
              strcmp(c->src->scope, "global") == 0 &&
              (c->bytes == 4 || c->bytes == 8 || c->bytes == 16) &&
              (unsigned)c->prefetch < TD_PTX_PREFETCH_COUNT &&
              (!c->zfill || c->pred != NULL);
    ok = ok && td__ir_stmt_operand(ir, c->dst_offset) &&
         td__ir_stmt_operand(ir, c->src_offset) &&
         (c->pred == NULL || td__ir_stmt_operand(ir, c->pred));
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__stmt *s = td__ir_stmt(ir, TD__S_PTX);
    td__ptx *x = s != NULL ? td__arena_alloc(&ir->arena, sizeof *x) : NULL;
    if (s == NULL || x == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return;
    }
    memset(x, 0, sizeof *x);
    x->cp_async = true;
    x->shared = true;
    x->offset = c->dst_offset;
    x->bits = 32;
    x->lanes = c->bytes / 4;
    x->prefetch = c->prefetch;
    x->src = c->src;
    x->src_offset = c->src_offset;
    x->pred = c->pred;
    x->zfill = c->zfill;
    s->buf = c->dst;
    s->nidx = 0;
    s->idx = NULL;
    s->ptx = x;
    td__ir_append(ir, s);
}
