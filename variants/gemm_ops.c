/*
 * The gemm op (upstream tirx.tile.gemm): its descriptor and its operand
 * check, which the registry runs before any variant (td_op_desc.check).
 *
 * Upstream's front end checks nothing: its only CUDA variant (mma.m16n8k*)
 * asserts that the operands' shapes agree, which surfaces as a Python
 * AssertionError, and it ignores config keys it does not read (it reads
 * none).  Here both are the op's refusals, with upstream's assert texts
 * for the shapes (docs/upstream.md, D4 and D9 of design/gemm/plan.md):
 * a product whose operands disagree is no product whatever variant
 * lowers it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "gemm.h"
#include "model.h"

static bool gemm_check(const td_call *call, const td_op_desc *op,
                       td_pos *where, td_reason *why);
static bool gemm_async_check(const td_call *call, const td_op_desc *op,
                             td_pos *where, td_reason *why);

const td_op_desc td__gemm_ops[] = {
    {.name = "gemm", .kind = TD_OP_KIND_GEMM, .check = gemm_check},
    {.name = "gemm_async", .kind = TD_OP_KIND_GEMM, .check = gemm_async_check},
};
const size_t td__gemm_ops_count = sizeof td__gemm_ops / sizeof *td__gemm_ops;

static const char operand_name[3] = {'A', 'B', 'C'};

/* The non-unit extents of r (upstream's _mat_extents keeps the extents it
 * cannot prove equal to 1); their number, of which at most 2 are stored. */
static int mat_extents(const td_region *r, int64_t ext[2])
{
    int n = 0;
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++) {
        if (r->extent[d] == 1)
            continue;
        if (n < 2)
            ext[n] = r->extent[d];
        n++;
    }
    return n;
}

bool td__gemm_sizes(const td_call *call, int64_t *m, int64_t *n, int64_t *k)
{
    int64_t a[2], b[2];
    if (mat_extents(&call->srcs[TD_GEMM_A].region, a) != 2 ||
        mat_extents(&call->srcs[TD_GEMM_B].region, b) != 2)
        return false;
    *m = call->transpose_a ? a[1] : a[0];
    *k = call->transpose_a ? a[0] : a[1];
    *n = call->transpose_b ? b[0] : b[1];
    return true;
}

/* What a call built by hand may get wrong that the loader never lets
 * through: the three sources, extras, axes, accum, alpha and beta. */
static bool gemm_operands(const td_call *call, td_pos *where, td_reason *why)
{
    if (call->nsrcs != 3) {
        if (call->pos_srcs.line > 0)
            *where = call->pos_srcs;
        td_reason_set(why, "expects the sources A, B, C (call-file keys a, "
                           "b, c), got %d operands",
                      call->nsrcs);
        return false;
    }
    for (int i = 0; i < 3; i++)
        if (call->srcs[i].kind != TD_OPERAND_REGION) {
            if (call->srcs[i].pos.line > 0)
                *where = call->srcs[i].pos;
            td_reason_set(why, "%c must be a region, not %s",
                          operand_name[i],
                          td__operand_kind_name(call->srcs[i].kind));
            return false;
        }
    if (!td__no_extras(call, where, why))
        return false;
    if (!(call->naxes == 1 && call->axes[0] == -1)) {
        td_reason_set(why, "takes no axes");
        return false;
    }
    if (call->accum) {
        td_reason_set(why, "takes no accum (beta = 1 accumulates C)");
        return false;
    }
    const td_operand *lits[2] = {&call->alpha, &call->beta};
    for (int i = 0; i < 2; i++)
        if (lits[i]->kind == TD_OPERAND_NONE ||
            lits[i]->kind == TD_OPERAND_REGION) {
            td_reason_set(why, "%s must be a scalar value, not %s",
                          i ? "beta" : "alpha",
                          td__operand_kind_name(lits[i]->kind));
            return false;
        }
    return true;
}

static bool gemm_check(const td_call *call, const td_op_desc *op,
                       td_pos *where, td_reason *why)
{
    if (!gemm_operands(call, where, why))
        return false;
    /* One key, tiledispatch's (TVM's gemm reads none): allow_tf32, the
     * opt-in to float32 operands computed in tf32 (mma_ext.m16n8k*). */
    static const char *const known[] = {"allow_tf32"};
    if (!td__known_config(call, op, known, 1, where, why))
        return false;
    const td_config_entry *tf = td_call_config(call, "allow_tf32");
    if (tf != NULL && tf->kind != TD_VALUE_BOOL) {
        if (tf->pos.line > 0)
            *where = tf->pos;
        td_reason_set(why, "allow_tf32 must be true or false");
        return false;
    }
    /* Upstream asserts the shapes only once all four operands are 2-D
     * (one that is not is a decline, "gemm mma expects 2D A, ...", and
     * stays the variant's), in this order and with these texts. */
    int64_t d[2], c[2], m, n, k, b[2];
    if (!td__gemm_sizes(call, &m, &n, &k) ||
        mat_extents(&call->dst, d) != 2 ||
        mat_extents(&call->srcs[TD_GEMM_C].region, c) != 2)
        return true;
    mat_extents(&call->srcs[TD_GEMM_B].region, b);
    int64_t b_k = call->transpose_b ? b[1] : b[0];
    if (b_k != k) {
        if (call->srcs[TD_GEMM_B].pos.line > 0)
            *where = call->srcs[TD_GEMM_B].pos;
        td_reason_set(why, "gemm mma: A K=%" PRId64 " != B K=%" PRId64, k,
                      b_k);
        return false;
    }
    if (d[0] != m || d[1] != n) {
        if (call->pos_dst.line > 0)
            *where = call->pos_dst;
        td_reason_set(why,
                      "gemm mma: D dims (%" PRId64 ", %" PRId64
                      ") != (M=%" PRId64 ", N=%" PRId64 ")",
                      d[0], d[1], m, n);
        return false;
    }
    if (c[0] != m || c[1] != n) {
        if (call->srcs[TD_GEMM_C].pos.line > 0)
            *where = call->srcs[TD_GEMM_C].pos;
        td_reason_set(why,
                      "gemm mma: C dims (%" PRId64 ", %" PRId64
                      ") != (M=%" PRId64 ", N=%" PRId64 ")",
                      c[0], c[1], m, n);
        return false;
    }
    return true;
}

/* ---- gemm_async ------------------------------------------------------- */

/*
 * Upstream's Tx.gemm_async(C, A, B, transA=, transB=, accum=, **config):
 * C = A @ B^T (+ C), A [M, K] ([K, M] when transA), B [N, K] ([K, N] when
 * transB; per CTA N / cta_group rows), the config keys of its one CUDA
 * variant (tcgen05).  TVM ignores an unknown key or value and asserts the
 * shapes inside the variant (D4, D9 of design/gemm/plan.md); here the op
 * refuses both, the shapes with TVM's assert texts, in TVM's order.
 */
static const char *const async_keys[] = {
    "cta_group", "mma_m", "mma_n", "smem_desc", "is_AB_tf32",
    "weight_stationary", "descI"};

static const char *const smem_desc_modes[] = {"hoist", "local_hoist",
                                              "encode", "recompute"};

static bool async_operands(const td_call *call, td_pos *where, td_reason *why)
{
    /* A, B, and with block scaling SFA, SFB (both or neither). */
    if (call->nsrcs != 2 && call->nsrcs != 4) {
        if (call->pos_srcs.line > 0)
            *where = call->pos_srcs;
        td_reason_set(why, "expects the sources A, B (call-file keys a, b) "
                           "and, for block scaling, SFA, SFB (sfa, sfb), "
                           "got %d operands",
                      call->nsrcs);
        return false;
    }
    static const char *const names[4] = {"A", "B", "SFA", "SFB"};
    for (int i = 0; i < call->nsrcs; i++)
        if (call->srcs[i].kind != TD_OPERAND_REGION) {
            if (call->srcs[i].pos.line > 0)
                *where = call->srcs[i].pos;
            td_reason_set(why, "%s must be a region, not %s", names[i],
                          td__operand_kind_name(call->srcs[i].kind));
            return false;
        }
    if (!td__no_extras(call, where, why))
        return false;
    if (!(call->naxes == 1 && call->axes[0] == -1)) {
        td_reason_set(why, "takes no axes");
        return false;
    }
    return true;
}

/* Each key's value has the type TVM reads (a string of smem_desc one of
 * TVM's four modes). */
static bool async_values(const td_call *call, td_pos *where, td_reason *why)
{
    for (int i = 0; i < call->nconfig && i < TD_MAX_CONFIG; i++) {
        const td_config_entry *e = &call->config[i];
        const char *k = e->key;
        bool ok = true;
        const char *want = "";
        if (strcmp(k, "smem_desc") == 0) {
            ok = e->kind == TD_VALUE_STRING;
            for (size_t m = 0; ok && m < 4; m++)
                if (strncmp(e->s, smem_desc_modes[m], TD_NAME_MAX) == 0)
                    goto next;
            if (e->pos.line > 0)
                *where = e->pos;
            const char *got = e->kind == TD_VALUE_STRING ? e->s : "?";
            td_reason_set(why,
                          "smem_desc: expected one of hoist, local_hoist, "
                          "encode, recompute, got '%.*s'",
                          TD__FIELD(got));
            return false;
        }
        if (strcmp(k, "is_AB_tf32") == 0 ||
            strcmp(k, "weight_stationary") == 0) {
            ok = e->kind == TD_VALUE_BOOL;
            want = "a boolean";
        } else if (strcmp(k, "cta_group") == 0) {
            ok = e->kind == TD_VALUE_INT;
            want = "an integer";
        }
        if (!ok) {
            if (e->pos.line > 0)
                *where = e->pos;
            td_reason_set(why, "%s: expected %s", k, want);
            return false;
        }
    next:;
    }
    return true;
}

static bool gemm_async_check(const td_call *call, const td_op_desc *op,
                             td_pos *where, td_reason *why)
{
    if (!async_operands(call, where, why))
        return false;
    if (!td__known_config(call, op, async_keys,
                          sizeof async_keys / sizeof *async_keys, where, why))
        return false;
    if (!async_values(call, where, why))
        return false;
    /* TVM's cross-checks (asserts in its variant), once every operand is
     * a matrix: A's M against C's, A's K against B's, B's N times
     * cta_group against C's. */
    int64_t c[2], a[2], b[2];
    /* The batched forms TVM reads first: C[2, M, N/2] (leading unit dims
     * squeezed) is (M, N), A[2, M, K] in tensor memory is (M, K). */
    const td_region *cr = &call->dst, *ar = &call->srcs[0].region;
    int c0 = 0;
    while (cr->ndim - c0 > 2 && cr->extent[c0] == 1)
        c0++;
    bool c_batched = cr->ndim - c0 == 3 && cr->extent[c0] == 2;
    const td_buffer *abuf = td__region_buffer(call, ar);
    bool a_batched = abuf != NULL && td__name_is(abuf->scope, "tmem") &&
                     ar->ndim == 3 && ar->extent[0] == 2;
    td_region a_mat = *ar;
    if (a_batched)
        a_mat.extent[0] = 1;
    if (c_batched) {
        c[0] = cr->extent[c0 + 1];
        c[1] = 2 * cr->extent[c0 + 2];
    } else if (mat_extents(cr, c) != 2)
        return true;
    if (mat_extents(&a_mat, a) != 2 ||
        mat_extents(&call->srcs[1].region, b) != 2)
        return true;
    int64_t cg = td_call_config_int(call, "cta_group", 1);
    int64_t m = c[0], n = c[1];
    int64_t a_m = call->transpose_a ? a[1] : a[0];
    int64_t k = call->transpose_a ? a[0] : a[1];
    int64_t b_k = call->transpose_b ? b[0] : b[1];
    int64_t b_n = call->transpose_b ? b[1] : b[0];
    if (a_m != m) {
        if (call->srcs[0].pos.line > 0)
            *where = call->srcs[0].pos;
        td_reason_set(why,
                      "tcgen05: A_M=%" PRId64 " doesn't match M=%" PRId64
                      " from C region",
                      a_m, m);
        return false;
    }
    if (b_k != k) {
        if (call->srcs[1].pos.line > 0)
            *where = call->srcs[1].pos;
        td_reason_set(why,
                      "tcgen05: A_K=%" PRId64 " doesn't match B_K=%" PRId64, k,
                      b_k);
        return false;
    }
    if ((cg == 1 || cg == 2) && b_n * cg != n) {
        if (call->srcs[1].pos.line > 0)
            *where = call->srcs[1].pos;
        td_reason_set(why,
                      "tcgen05: B_N=%" PRId64 " * cta_group=%" PRId64
                      "=%" PRId64 " doesn't match N=%" PRId64,
                      b_n, cg, b_n * cg, n);
        return false;
    }
    return true;
}
