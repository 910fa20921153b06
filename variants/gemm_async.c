/*
 * The `tcgen05` variant of gemm_async (upstream gemm_async/tcgen05.py,
 * design/gemm/plan.md section 3): one thread (or one elected lane of a
 * warp) issues tcgen05.mma (sm_100a) over a shared-memory B named by its
 * shared memory descriptor and an A in shared memory (a descriptor too)
 * or in tensor memory (its address), accumulating into tensor memory.
 *
 * Predicates: single_thread_or_warp (TVM's, with TVM's text; ours adds
 * that a thread-scope call must be guarded to one thread, D3) and
 * tcgen05_arch (ours, D2: TVM checks no arch).  The emitter declines in
 * TVM's order with TVM's texts (TVM raises or asserts them): scopes, C's
 * dtype, A/B dtypes, cta_group, descI, ranks (the batched .ws C[2, M, N/2]
 * and tmem A[2, M, K] folds), the descriptors of the shared operands
 * (gemm_async_desc.c: the swizzle atoms matched by is_tile_inner), tf32
 * majorness, the instruction tile and its PTX shape rule (D6), K, C's
 * tensor-memory layout (datapath D's identity, Layout F for a whole M =
 * 64 buffer, Layout B for M = 64 at cta_group 2), a tmem A's layout (the
 * one TVM's allocator gives A for the datapath), and the CTA pair's
 * cluster (D7); weight_stationary (.ws), or C packed as Layout E at
 * M = 64, issues tcgen05.mma.ws.  Block scaling (SFA, SFB: sources 3
 * and 4) is gemm_async_bs.c's, called at this file's hook points (p.bs).
 * is_AB_tf32 over storage other than float32 is refused: TVM's lowering
 * reads such operands two or four elements to a tf32 word.
 *
 * What it emits is TVM's lowering unrolled: the descriptors (encoded
 * once, per smem_desc mode), then per instruction tile (mi, ni) and K
 * step ki one tcgen05.mma whose shared operands are the descriptors
 * advanced by the tile corner's 16-byte offset (a tmem A: its address
 * MMA_K elements on per step), under elect.sync at warp scope.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "gemm.h"
#include "gemm_async.h"
#include "layout.h"
#include "model.h"

/* ---- predicates ------------------------------------------------------- */

/* The threads of the call's active set at thread scope: the launch's
 * threadIdx.x narrowed by every `active:` range; -1 when unknown. */
static int64_t active_threads(const td_call *call)
{
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    if (!tx->present || tx->symbolic) {
        for (int i = 0; i < call->nactive && i < TD_MAX_ACTIVE; i++)
            if (call->active[i].axis == TD_AXIS_TX)
                return call->active[i].end - call->active[i].begin;
        return -1;
    }
    int64_t n = 0;
    for (int64_t t = 0; t < tx->extent; t++) {
        bool in = true;
        for (int i = 0; in && i < call->nactive && i < TD_MAX_ACTIVE; i++) {
            const td_active_range *a = &call->active[i];
            int64_t v;
            switch (a->axis) {
            case TD_AXIS_TX: v = t; break;
            case TD_AXIS_LANEID: v = t % 32; break;
            case TD_AXIS_WARPID: v = t / 32; break;
            case TD_AXIS_TID_IN_WG: v = t % 128; break;
            case TD_AXIS_WID_IN_WG: v = t / 32 % 4; break;
            case TD_AXIS_WGID: v = t / 128; break;
            default: return -1;
            }
            in = v >= a->begin && v < a->end;
        }
        n += in;
    }
    return n;
}

static bool pred_single_thread_or_warp(const td_call *call,
                                       const td_args *args, void *user,
                                       td_reason *why)
{
    (void)args;
    (void)user;
    static const char *const names[TD_SCOPE_COUNT] = {
        "thread", "warp", "warpgroup", "cta", "cluster"};
    if (call->scope == TD_SCOPE_WARP) {
        if (!td__whole_scope_units(call, "tcgen05.mma", why))
            return false;
        /* elect.sync and the descriptors' shfl.sync name the full warp:
         * a guard that leaves part of a warp would hang them (TVM does
         * not check). */
        for (int i = 0; i < call->nactive && i < TD_MAX_ACTIVE; i++) {
            const td_active_range *a = &call->active[i];
            bool whole =
                a->axis == TD_AXIS_LANEID ? a->begin == 0 && a->end == 32
                : a->axis == TD_AXIS_TX || a->axis == TD_AXIS_TID_IN_WG
                    ? a->begin % 32 == 0 && a->end % 32 == 0
                    : true;
            if (!whole) {
                td_reason_set(why,
                              "warp scope issues elect.sync and shfl.sync "
                              "over the full warp; active %s [%" PRId64
                              ", %" PRId64 ") leaves part of a warp",
                              td_axis_name(a->axis), a->begin, a->end);
                return false;
            }
        }
        return true;
    }
    if (call->scope != TD_SCOPE_THREAD) {
        td_reason_set(why,
                      "unsupported exec_scope T.ExecScope(\"%s\"), expected "
                      "single thread or warp scope",
                      (unsigned)call->scope < TD_SCOPE_COUNT
                          ? names[call->scope]
                          : "?");
        return false;
    }
    /* TVM lowers an unguarded thread-scope call for every thread of the
     * CTA, each issuing the whole sequence (D3). */
    int64_t n = active_threads(call);
    if (n == 1)
        return true;
    if (n < 0)
        td_reason_set(why, "thread scope issues tcgen05.mma from every active "
                           "thread; guard the call to one thread (active set "
                           "unknown: give launch threadIdx.x and active)");
    else
        td_reason_set(why,
                      "thread scope issues tcgen05.mma from every active "
                      "thread; guard the call to one thread (active set has "
                      "%" PRId64 " threads)",
                      n);
    return false;
}

/* D2: TVM lowers tcgen05.mma for any arch; ptxas refuses it below sm_100a.
 * A call with no arch is not checked (TVM's behaviour). */
static bool pred_tcgen05_arch(const td_call *call, const td_args *args,
                              void *user, td_reason *why)
{
    (void)args;
    (void)user;
    if (call->sm_version == 0 || td__tmem_arch(call))
        return true;
    td_reason_set(why,
                  "tcgen05.mma needs tensor memory (sm_100a, sm_101a, "
                  "sm_103a or sm_110a), got %.*s",
                  TD__FIELD(call->arch));
    return false;
}

static const td_pred_desc async_preds[] = {
    {.name = "single_thread_or_warp", .fn = pred_single_thread_or_warp},
    {.name = "tcgen05_arch", .fn = pred_tcgen05_arch},
};

/* ---- the emitter's checks ---------------------------------------------- */

#define DECLINE(...)                                                           \
    do {                                                                       \
        td_reason_set(why, __VA_ARGS__);                                       \
        return TD_EDECLINED;                                                   \
    } while (0)

/* The non-unit extents of the nd extents e (at most 2 stored); their
 * number. */
static int mat_dims_of(const int64_t *e, int nd, int64_t ext[2])
{
    int n = 0;
    for (int d = 0; d < nd && d < TD_MAX_RANK; d++)
        if (e[d] != 1) {
            if (n < 2)
                ext[n] = e[d];
            n++;
        }
    return n;
}

static int mat_dims(const td_region *r, int64_t ext[2])
{
    return mat_dims_of(r->extent, r->ndim, ext);
}

static void extents_text(const td_region *r, char *buf, size_t cap)
{
    td__ga_extents(r->extent, r->ndim, buf, cap);
}

/* TVM's check of a tensor-memory slice against an expected layout: both
 * canonicalized, `want` taking the slice's offsets, structurally equal. */
static bool slice_is(const td_layout *slice, const char *want)
{
    td_layout w, cw, cs;
    if (td__ga_parse(want, &w) != 0)
        return false;
    memcpy(w.offset, slice->offset, sizeof w.offset);
    return td__lay_canonicalize(&w, &cw) == 0 &&
           td__lay_canonicalize(slice, &cs) == 0 && td__lay_same(&cw, &cs);
}

/* ---- instruction descriptor and shape rule ------------------------------- */

/* TVM's _TCGEN05_MMA_SHAPE_RULES for the dense kinds f16, tf32, f8f6f4. */
static bool shape_ok(int cta_group, int64_t m, int64_t n)
{
    int64_t step;
    if (cta_group == 1)
        step = m == 64 ? 8 : m == 128 ? 16 : 0;
    else
        step = m == 128 || m == 256 ? 32 : 0;
    return step != 0 && n >= step && n <= 256 && n % step == 0;
}

/* TVM's _INSTR_DESC_FORMAT_MAP for A/B (sem: tf32 when is_AB_tf32). */
static int ab_format(td_dtype t, bool tf32)
{
    if (tf32)
        return 2;
    switch (t) {
    case TD_BF16: return 1;
    case TD_F8E5M2: return 1;
    default: return 0; /* float16, float8_e4m3fn */
    }
}

static uint32_t idesc_dense(int64_t m, int64_t n, td_dtype ab, bool tf32,
                            bool a_mn, bool b_mn)
{
    uint32_t d = 0;
    int f = ab_format(ab, tf32);
    d |= 1u << 4; /* D float32 */
    d |= (uint32_t)(f & 7) << 7;
    d |= (uint32_t)(f & 7) << 10;
    d |= (uint32_t)a_mn << 15;
    d |= (uint32_t)b_mn << 16;
    d |= (uint32_t)((n >> 3) & 0x3F) << 17;
    d |= (uint32_t)((m >> 4) & 0x1F) << 24;
    return d;
}

/* ---- emission ---------------------------------------------------------- */

typedef struct ga_plan {
    td_umma_kind kind;
    int cta_group;
    int64_t m, n, k, mma_k, m_mma, n_mma, lane0, col0;
    bool tf32, warp, ws;
    bool two_by_two; /* Layout B / E: an N tile spans N_mma / 2 columns */
    bool a_tmem;     /* A in tensor memory: A_taddr + (lane << 16) + cell */
    int64_t a_lane0, a_col0, a_per32;
    td_dtype ab;
    td__ga_desc a, b;
    uint32_t idesc;
    int mode; /* 0 hoist, 1 local_hoist, 2 encode, 3 recompute */
    td__ga_bs *bs; /* block scaling (gemm_async_bs.c), else NULL */
} ga_plan;

static int emit(const td_call *call, const ga_plan *p, td_ir *ir)
{
    const td_buffer *cb = &call->buffers[call->dst.buffer];
    const td_buffer *ab = &call->buffers[call->srcs[0].region.buffer];
    const td_buffer *bb = &call->buffers[call->srcs[1].region.buffer];
    td_ir_buf *t = td_ir_buffer(ir, cb->name, cb->dtype, "tmem", cb->ndim,
                                cb->shape);
    td_ir_buf *sa = td_ir_buffer(ir, ab->name, ab->dtype, ab->scope, ab->ndim,
                                 ab->shape);
    td_ir_buf *sb = call->srcs[1].region.buffer == call->srcs[0].region.buffer
                        ? sa
                        : td_ir_buffer(ir, bb->name, bb->dtype, bb->scope,
                                       bb->ndim, bb->shape);
    if (t == NULL || sa == NULL || sb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_ENOMEM;
    const td_var *da = NULL, *db = NULL;
    if (p->mode == 0) {
        /* hoist: after each buffer's definition, A's first; warp scope
         * makes the low word uniform before one lane reads it. */
        if (!p->a_tmem)
            da = td_ir_smem_desc(ir, "descA", sa, p->a.ldo, p->a.sdo,
                                 p->a.swizzle, p->warp);
        db = td_ir_smem_desc(ir, "descB", sb, p->b.ldo, p->b.sdo,
                             p->b.swizzle, p->warp);
    } else if (p->mode == 1) {
        /* local_hoist: at the call, B's first, no shuffle; named as
         * TVM names them (upstream's smem_desc test looks for the
         * names in the CUDA). */
        db = td_ir_smem_desc(ir, "descB_local", sb, p->b.ldo, p->b.sdo,
                             p->b.swizzle, false);
        if (!p->a_tmem)
            da = td_ir_smem_desc(ir, "descA_local", sa, p->a.ldo, p->a.sdo,
                                 p->a.swizzle, false);
    }
    /* enable_input_d of each K loop's first MMA: the call's accum (a
     * flag, or an expression of its scalars: upstream's accum=k > 0). */
    td_expr *accum0 = td_int(ir, call->accum);
    const td_cexpr *ax = &call->accum_expr.expr;
    if (call->accum_expr.kind == TD_VALUE_EXPR && ax->n > 0) {
        td_reason r;
        accum0 = td__config_expr(ir, call, &call->accum_expr, -1, &r);
        /* A comparison or logic is int32 already; a value (a scalar of
         * any integer dtype) is tested against 0. */
        td_cx_op top = ax->node[ax->n - 1].op;
        if (accum0 != NULL && !(top >= TD_CX_LT && top <= TD_CX_OR) &&
            top != TD_CX_NOT)
            accum0 = td_binary(ir, TD_OP_NE, accum0, td_int(ir, 0));
        if (accum0 == NULL)
            return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EINVAL;
    }
    int rc;
    if (p->bs != NULL && (rc = td__ga_bs_begin(ir, p->bs)) != 0)
        return rc;
    if (p->warp)
        td_ir_if(ir, td_intrinsic(ir, TD_INTRIN_ELECT_SYNC, TD_I32, 0, NULL));
    const td_ir_desc_form form = p->mode <= 1   ? TD_IR_DESC_ADD
                                 : p->mode == 2 ? TD_IR_DESC_ENCODE
                                                : TD_IR_DESC_RECOMPUTE;
    const int64_t m_tiles = p->m / p->m_mma, n_tiles = p->n / p->n_mma;
    const int64_t k_iters = p->k / p->mma_k;
    const int64_t n_cta = p->n_mma / p->cta_group;
    const int64_t a_last = p->a_tmem ? 0 : p->a.extent[p->a.ndim - 1];
    const int64_t b_last = p->b.extent[p->b.ndim - 1];
    for (int64_t mi = 0; mi < m_tiles; mi++)
        for (int64_t ni = 0; ni < n_tiles; ni++)
            for (int64_t ki = 0; ki < k_iters; ki++) {
                int64_t al = call->transpose_a
                                 ? ki * p->mma_k * a_last + mi * p->m_mma
                                 : mi * p->m_mma * a_last + ki * p->mma_k;
                int64_t bl = call->transpose_b
                                 ? ki * p->mma_k * b_last + ni * n_cta
                                 : ni * n_cta * b_last + ki * p->mma_k;
                int64_t ao = p->a_tmem ? 0 : td__ga_off16_at(&p->a, al);
                int64_t bo = td__ga_off16_at(&p->b, bl);
                if (ao < 0 || bo < 0)
                    return TD_EINVAL;
                td_ir_desc_operand a = {form, da, sa, ao, p->a.ldo,
                                        p->a.sdo, p->a.swizzle, NULL, 0, 0};
                if (p->a_tmem)
                    a = (td_ir_desc_operand){
                        .form = TD_IR_DESC_TMEM,
                        .tmem = sa,
                        .lane = p->a_lane0 +
                                (m_tiles == 1 ? 0 : mi * p->m_mma),
                        .column = p->a_col0 + ki * (p->mma_k / p->a_per32)};
                td_ir_umma u = {
                    .kind = p->kind,
                    .cta_group = p->cta_group,
                    .ws = p->ws,
                    .tmem = t,
                    .lane = p->lane0 + (m_tiles == 1 ? 0 : mi * p->m_mma),
                    .column = p->col0 + ni * (p->two_by_two ? p->n_mma / 2
                                                             : p->n_mma),
                    .a = a,
                    .b = {form, db, sb, bo, p->b.ldo, p->b.sdo, p->b.swizzle,
                          NULL, 0, 0},
                    .idesc = p->idesc,
                    .accum = ki != 0 ? td_int(ir, 1) : accum0,
                };
                if (p->bs != NULL &&
                    (rc = td__ga_bs_mma(ir, p->bs, mi, ni, ki, p->m_mma,
                                        n_cta, &u)) != 0)
                    return rc;
                td_ir_tcgen05_mma(ir, &u);
            }
    if (p->warp)
        td_ir_end_if(ir);
    return td_ir_status(ir);
}

/* What the caller owns (explain's note). */
static void note(const td_call *call, const ga_plan *p, td_reason *why)
{
    const td_buffer *cb = &call->buffers[call->dst.buffer];
    const td_buffer *ab = &call->buffers[call->srcs[0].region.buffer];
    int cn = (int)strnlen(cb->name, TD_NAME_MAX);
    int an = (int)strnlen(ab->name, TD_NAME_MAX);
    /* D2: tcgen05_arch passes a call without an arch, as TVM does; say
     * what the code needs. */
    const char *na = call->sm_version == 0
                         ? "; the call gives no arch: tcgen05.mma needs "
                           "sm_100a (not checked)"
                         : "";
    /* A in tensor memory, the scale factors: their addresses are the
     * caller's too. */
    char at[3 * TD_NAME_MAX + 160] = "";
    if (p->a_tmem)
        snprintf(at, sizeof at, "; %.*s_taddr is where %.*s lies in tensor "
                                "memory",
                 an, ab->name, an, ab->name);
    if (p->bs != NULL) {
        size_t k = strlen(at);
        snprintf(at + k, sizeof at - k,
                 "; %.*s_taddr and %.*s_taddr are where the scale factors "
                 "lie in tensor memory (tcgen05.cp wrote them)",
                 TD__FIELD(p->bs->tmem[0]->name),
                 TD__FIELD(p->bs->tmem[1]->name));
    }
    if (p->cta_group == 2) {
        td_reason_set(why,
                      "tcgen05.mma.cta_group::2 is asynchronous and "
                      "pair-collective: one thread of one CTA of the pair "
                      "(TVM's: cbx == 0) issues it for both, each CTA's A "
                      "and its half of B in its own %s memory; the "
                      "issuer commits it (tcgen05.commit.cta_group::2..."
                      "multicast::cluster, mask 3) and both CTAs wait before "
                      "%.*s is read; %.*s_taddr is what "
                      "tcgen05.alloc.cta_group::2 wrote%s%s",
                      p->a_tmem ? "tensor and shared" : "shared", cn,
                      cb->name, cn, cb->name, at, na);
        return;
    }
    td_reason_set(why,
                  "tcgen05.mma is asynchronous: the issuing thread commits it "
                  "(tcgen05.commit.cta_group::1.mbarrier::arrive::one) and "
                  "readers wait on that barrier before %.*s is read; "
                  "%.*s_taddr is the base address tcgen05.alloc wrote%s; A and "
                  "B stay unwritten until then, %s aligned to its swizzle "
                  "period%s",
                  cn, cb->name, cn, cb->name, at,
                  p->a_tmem ? "B" : "each", na);
}

/* TVM's _layout_matches_datapath_f: a (64, X) tmem buffer laid out as
 * Layout F (S[(4, 16, X) : (32@TLane, 1@TLane, 1@TCol)]) at whatever
 * offsets its layout has. */
static bool c_is_f(const td_buffer *b)
{
    char text[96];
    if (!b->has_layout || b->ndim != 2 || b->shape[0] != 64)
        return false;
    snprintf(text, sizeof text,
             "S[(4, 16, %" PRId64 ") : (32@TLane, 1@TLane, 1@TCol)]",
             b->shape[1]);
    return slice_is(&b->layout, text);
}

/* A in tensor memory: TVM's check through tmem_mma_operand_layout (the
 * layout tmem_pool.alloc_tcgen05_mma_A gives A for the MMA's datapath):
 * the identity (M, K) at datapaths D, A and F, replicated to the upper 64
 * lanes (+ R[2 : 64@TLane]) at B (cta_group 2, M = 64); the batched
 * A[2, M, K] of E and B was checked at its rank.  Then A's first lane and
 * 32-bit cell, the slice's offsets. */
static int tmem_a(const td_call *call, ga_plan *p, bool batched,
                  const td_layout *slice, td_reason *why)
{
    const td_buffer *ab = &call->buffers[call->srcs[0].region.buffer];
    int64_t mi = p->m * p->cta_group; /* the instruction's M */
    if (!batched) {
        if (p->ws && !(p->cta_group == 1 && mi == 64))
            DECLINE("gemm_async[tcgen05]: invalid TMEM A layout: "
                    "alloc_tcgen05_mma_AB: ws=True only valid for "
                    "cta_group=1, M=64 (Layout E); got M=%" PRId64
                    ", cta_group=%d",
                    mi, p->cta_group);
        if (!(p->cta_group == 1 ? mi == 128 || mi == 64
                                : mi == 256 || mi == 128))
            DECLINE("gemm_async[tcgen05]: invalid TMEM A layout: "
                    "alloc_tcgen05_mma_AB: no supported datapath for M=%" PRId64
                    ", cta_group=%d, ws=%s (supported: cta1 M in {64,128}, "
                    "cta2 M in {128,256})",
                    mi, p->cta_group, p->ws ? "True" : "False");
        int64_t a2[2];
        char want[128];
        mat_dims(&call->srcs[0].region, a2);
        snprintf(want, sizeof want,
                 "S[(%" PRId64 ", %" PRId64 ") : (1@TLane, 1@TCol)]%s", a2[0],
                 a2[1],
                 p->cta_group == 2 && mi == 128 ? " + R[2 : 64@TLane]" : "");
        if (!slice_is(slice, want))
            DECLINE("gemm_async[tcgen05]: TMEM A layout does not match "
                    "tmem_pool.alloc_tcgen05_mma_A semantic layout");
    }
    p->a_per32 = 32 / td_dtype_bits(ab->dtype);
    p->a_lane0 = slice->offset[TD_AXIS_TLANE];
    int64_t col = slice->offset[TD_AXIS_TCOL];
    /* TVM floors the element column to a cell (ours: refuse). */
    if (col % p->a_per32 != 0)
        DECLINE("gemm_async: A's region starts at element column %" PRId64
                " of its tensor memory, inside a 32-bit cell (%" PRId64
                " %s to a cell); the MMA reads A from whole cells",
                col, p->a_per32, td_dtype_name(ab->dtype));
    p->a_col0 = col / p->a_per32;
    return 0;
}

static int cfg_int(const td_config_entry *e, int64_t *v)
{
    if (e == NULL || e->kind != TD_VALUE_INT)
        return -1;
    *v = e->i;
    return 0;
}

static int async_emit(const td_call *call, const td_op_desc *op,
                      const void *unused, td_ir *ir, void *user,
                      td_reason *why)
{
    (void)op;
    (void)unused;
    (void)user;
    const td_buffer *cb = td__region_buffer(call, &call->dst);
    const td_buffer *ab = td__region_buffer(call, &call->srcs[0].region);
    const td_buffer *bb = td__region_buffer(call, &call->srcs[1].region);
    if (cb == NULL || ab == NULL || bb == NULL)
        return TD_EINVAL;
    ga_plan p;
    memset(&p, 0, sizeof p);

    /* 1. scopes */
    bool c_tmem = td__name_is(cb->scope, "tmem");
    bool a_sh = strncmp(ab->scope, "shared", 6) == 0;
    bool b_sh = strncmp(bb->scope, "shared", 6) == 0;
    p.a_tmem = td__name_is(ab->scope, "tmem");
    if (p.a_tmem) {
        if (!(c_tmem && b_sh))
            DECLINE("tcgen05 schedule expected C_scope=tmem, B_scope=shared "
                    "when A is tmem, got C_scope=%.*s, B_scope=%.*s",
                    TD__FIELD(cb->scope), TD__FIELD(bb->scope));
    } else if (!(c_tmem && a_sh && b_sh))
        DECLINE("tcgen05 schedule expected C_scope=tmem, A_scope=shared, "
                "B_scope=shared, got C_scope=%.*s, A_scope=%.*s, B_scope=%.*s",
                TD__FIELD(cb->scope), TD__FIELD(ab->scope),
                TD__FIELD(bb->scope));
    /* 2-3. dtypes */
    if (cb->dtype != TD_F32)
        DECLINE("tcgen05 schedule expected C_type=float32, got %s",
                td_dtype_name(cb->dtype));
    p.tf32 = td_call_config_bool(call, "is_AB_tf32", false);
    const char *sem[2];
    const td_buffer *ops[2] = {ab, bb};
    td__ga_bs bs;
    int rc;
    if (td__ga_is_block_scaled(call)) {
        p.bs = &bs;
        if ((rc = td__ga_bs_dtypes(call, why)) != 0)
            return rc;
    }
    for (int i = 0; i < 2; i++) {
        td_dtype t = ops[i]->dtype;
        sem[i] = p.tf32 ? "tf32" : td_dtype_name(t);
        bool ok = p.tf32 || t == TD_F16 || t == TD_BF16 || t == TD_F8E4M3 ||
                  t == TD_F8E5M2 || p.bs != NULL;
        if (!ok)
            DECLINE("tcgen05 schedule expected %c dtype in ['float16', "
                    "'bfloat16', 'float8_e4m3fn', 'float8_e5m2', "
                    "'tensor_float32', 'tf32'], got %s",
                    "AB"[i], sem[i]);
    }
    if (strcmp(sem[0], sem[1]) != 0)
        DECLINE("tcgen05 schedule expect A and B MMA dtype to be the same, "
                "got A=%s, B=%s",
                sem[0], sem[1]);
    if (p.tf32 && (ab->dtype != TD_F32 || bb->dtype != TD_F32))
        /* TVM lowers it: kind::tf32 reads 32-bit elements, while the K
         * steps advance by the storage's width, so each MMA reads pairs
         * of 16-bit (or four 8-bit) elements as one tf32 word and
         * neighbouring steps overlap (docs/upstream.md). */
        DECLINE("gemm_async: is_AB_tf32 reads A and B as 32-bit tf32 "
                "elements; %s storage would be read %d elements to a word "
                "(TVM lowers it so); store A and B as float32",
                td_dtype_name(ab->dtype == TD_F32 ? bb->dtype : ab->dtype),
                32 / td_dtype_bits(ab->dtype == TD_F32 ? bb->dtype
                                                       : ab->dtype));
    if (p.bs != NULL && (rc = td__ga_bs_sf(call, p.bs, why)) != 0)
        return rc;
    p.ab = ab->dtype;
    p.kind = p.tf32                                            ? TD_UMMA_TF32
             : ab->dtype == TD_F16 || ab->dtype == TD_BF16 ? TD_UMMA_F16
                                                               : TD_UMMA_F8F6F4;
    p.mma_k = p.kind == TD_UMMA_F16 ? 16 : p.kind == TD_UMMA_TF32 ? 8 : 32;
    if (ab->dtype == TD_F4E2M1)
        p.mma_k = 64;
    /* 4. cta_group, descI */
    int64_t cg = td_call_config_int(call, "cta_group", 1);
    if (cg != 1 && cg != 2)
        DECLINE("tcgen05 schedule expected cta_group=1 or 2, got %" PRId64, cg);
    p.cta_group = (int)cg;
    if (td_call_config(call, "descI") != NULL && p.bs == NULL)
        DECLINE("descI was removed: the dispatcher encodes the instruction "
                "descriptor itself");
    p.ws = td_call_config_bool(call, "weight_stationary", false);
    if (p.ws && p.cta_group == 2)
        DECLINE("gemm_async: tcgen05.mma.ws has no cta_group::2 form "
                "(weight_stationary needs cta_group=1)");
    /* 5. ranks: C may be the batched .ws fold C[2, M, N/2] (leading unit
     * dims squeezed), A in tensor memory the batched A[2, M, K] (TVM
     * normalizes both, checking their layouts structurally). */
    const td_region *cr = &call->dst, *ar = &call->srcs[0].region;
    int c0 = 0;
    while (cr->ndim - c0 > 2 && cr->extent[c0] == 1)
        c0++;
    bool c_batched = cr->ndim - c0 == 3 && cr->extent[c0] == 2;
    bool a_batched = p.a_tmem && ar->ndim == 3 && ar->extent[0] == 2;
    int64_t c2[2], a2[2], b2[2];
    int nc = mat_dims(cr, c2);
    if (!c_batched && (nc != 2 || cr->ndim < 2))
        DECLINE("Only 2D C (or the batched .ws form C[2, M, N]), A, B are "
                "supported for gemm");
    td_layout c_slice, a_slice;
    char t[128];
    if (c_batched) {
        snprintf(t, sizeof t,
                 "S[(2, %" PRId64 ", %" PRId64 ") : (64@TLane, 1@TLane, "
                 "1@TCol)]",
                 cr->extent[c0 + 1], cr->extent[c0 + 2]);
        if (td__ga_tmem_slice(call, cr, &c_slice) != 0 || !slice_is(&c_slice, t))
            DECLINE("gemm_async: the batched C[2, M, N/2] is the .ws "
                    "Layout-E fold %s; C's region is not",
                    t);
        if (cg == 1)
            p.ws = true; /* the fold is the M = 64 .ws datapath */
    }
    if (p.a_tmem && td__ga_tmem_slice(call, ar, &a_slice) != 0)
        DECLINE("gemm_async: the layout of %.*s does not slice to the "
                "region of A",
                TD__FIELD(ab->name));
    if (a_batched) {
        snprintf(t, sizeof t,
                 "S[(2, %" PRId64 ", %" PRId64 ") : (64@TLane, 1@TLane, "
                 "1@TCol)]",
                 ar->extent[1], ar->extent[2]);
        if (!slice_is(&a_slice, t))
            DECLINE("gemm_async: the batched A[2, M, K] in tensor memory is "
                    "the fold %s; A's region is not",
                    t);
    }
    const int64_t *aext = ar->extent + (a_batched ? 1 : 0);
    int an = ar->ndim - (a_batched ? 1 : 0);
    if (mat_dims_of(aext, an, a2) != 2) {
        td__ga_extents(aext, an, t, sizeof t);
        DECLINE("Expected exactly 2 non-unit dims in A_extent %s", t);
    }
    if (mat_dims(&call->srcs[1].region, b2) != 2) {
        extents_text(&call->srcs[1].region, t, sizeof t);
        DECLINE("Expected exactly 2 non-unit dims in B_extent %s", t);
    }
    p.m = cr->extent[cr->ndim - 2];
    p.n = cr->extent[cr->ndim - 1] * (c_batched ? 2 : 1);
    p.k = call->transpose_a ? a2[0] : a2[1];
    /* M = 64 at cta_group 2 is TVM's 2x2 datapath: C must be Layout B,
     * (r, c) in lane r + 64 (c / (N/2)), column c % (N/2) (checked with
     * C's layout, step 10). */
    bool two_by_two = p.m == 64 && p.cta_group == 2;
    /* 6. descriptors */
    if (p.a_tmem && call->transpose_a)
        DECLINE("tcgen05 schedule: transA must be False when A is in tmem");
    if ((!p.a_tmem &&
         (rc = td__ga_canonical_params(call, 0, call->transpose_a, &p.a, why)) !=
             0) ||
        (rc = td__ga_canonical_params(call, 1, call->transpose_b, &p.b, why)) != 0)
        return rc;
    /* 7. tf32 majorness */
    if (p.tf32 && !p.a_tmem && p.a.mn_major)
        DECLINE("gemm_async: tf32 A operand matched an MN-major SMEM layout, "
                "which is PTX-illegal without 128B-32B-atomicity swizzle "
                "support; lay A out K-major (K contiguous) instead");
    if (p.tf32 && p.b.mn_major)
        DECLINE("gemm_async: tf32 B operand matched an MN-major SMEM layout, "
                "which is PTX-illegal without 128B-32B-atomicity swizzle "
                "support; lay B out K-major (K contiguous) instead");
    /* 8. the instruction tile */
    int64_t n_min = p.cta_group == 1 ? 8 : 16;
    const td_config_entry *em = td_call_config(call, "mma_m");
    const td_config_entry *en = td_call_config(call, "mma_n");
    const char *kname = td_umma_kind_name(p.kind);
    if ((em != NULL) != (en != NULL))
        DECLINE("gemm_async[tcgen05]: config fields mma_m and mma_n must be "
                "provided together; missing %s",
                em != NULL ? "mma_n" : "mma_m");
    if (em != NULL) {
        int64_t v[2];
        const td_config_entry *es[2] = {em, en};
        for (int i = 0; i < 2; i++) {
            const char *nm = i ? "mma_n" : "mma_m";
            if (es[i]->kind == TD_VALUE_BOOL)
                DECLINE("gemm_async[tcgen05]: %s must be a positive integer, "
                        "got %s",
                        nm, es[i]->b ? "True" : "False");
            if (cfg_int(es[i], &v[i]) != 0)
                DECLINE("gemm_async[tcgen05]: %s must be a positive integer, "
                        "got '%.*s'",
                        nm, TD__FIELD(es[i]->s));
            if (v[i] <= 0)
                DECLINE("gemm_async[tcgen05]: %s must be a positive integer, "
                        "got %" PRId64,
                        nm, v[i]);
        }
        /* TVM looks the block-scaled kind up here (an unknown one
         * raises before the tile's checks) */
        if (p.bs != NULL && p.bs->kind < 0)
            return td__ga_bs_shape(p.bs, p.cta_group, v[0], v[1], p.mma_k,
                                   why);
        if (v[0] != p.m * p.cta_group)
            DECLINE("gemm_async[tcgen05]: explicit mma_m must match the "
                    "physical instruction M derived from the operand/layout "
                    "tile: got mma_m=%" PRId64 ", but M=%" PRId64
                    " and cta_group=%d require %" PRId64
                    ". A smaller mma_m would select a different TMEM "
                    "datapath layout.",
                    v[0], p.m, p.cta_group, p.m * p.cta_group);
        if (p.n % v[1] != 0)
            DECLINE("gemm_async[tcgen05]: explicit mma_n must divide the "
                    "derived output N exactly, got mma_n=%" PRId64
                    ", N=%" PRId64,
                    v[1], p.n);
        if (p.bs != NULL && (rc = td__ga_bs_shape(p.bs, p.cta_group, v[0],
                                                  v[1], p.mma_k, why)) != 0)
            return rc;
        if (p.bs == NULL && !shape_ok(p.cta_group, v[0], v[1]))
            DECLINE("Invalid matrix shape for Tcgen05 MMA, check failed for "
                    "kind: %s, is_sparse: False, cta_group: %d, M: %" PRId64
                    ", N: %" PRId64 ", K: %" PRId64,
                    kname, p.cta_group, v[0], v[1], p.mma_k);
        p.m_mma = v[0] / p.cta_group;
        p.n_mma = v[1];
    } else {
        int64_t total = p.m * p.cta_group;
        const int64_t valid[2][2] = {{128, 64}, {256, 128}};
        int64_t md = 0;
        for (int i = 0; i < 2 && md == 0; i++)
            if (total % valid[p.cta_group - 1][i] == 0)
                md = valid[p.cta_group - 1][i];
        if (md == 0)
            DECLINE("tcgen05: M_total=%" PRId64 " (M=%" PRId64
                    ", cta_group=%d) not divisible by any valid descriptor M "
                    "(valid: [%" PRId64 ", %" PRId64 "])",
                    total, p.m, p.cta_group, valid[p.cta_group - 1][0],
                    valid[p.cta_group - 1][1]);
        p.m_mma = md / p.cta_group;
        if (p.n <= 256 && p.n % n_min == 0) {
            p.n_mma = p.n;
        } else {
            for (int64_t c = 256; c >= n_min && p.n_mma == 0; c -= n_min)
                if (p.n % c == 0)
                    p.n_mma = c;
            if (p.n_mma == 0)
                DECLINE("tcgen05: No valid N_mma <= 256 that divides N=%" PRId64
                        " (MMA_N_MIN=%" PRId64 ")",
                        p.n, n_min);
        }
    }
    /* 9. K (the shape asserts are the op's), the scale factors' extents */
    if (p.k % p.mma_k != 0)
        DECLINE("tcgen05 schedule expected K %% %" PRId64 " == 0, got %" PRId64,
                p.mma_k, p.k);
    if (p.bs != NULL &&
        (rc = td__ga_bs_extents(p.bs, p.m, p.n, p.k / p.mma_k, why)) != 0)
        return rc;
    /* 10. C in tensor memory, read as TVM reads it: C's slice (the
     * region's layout, its offsets the first lane and column) against the
     * datapath the MMA writes. */
    if (call->dst.ndim != 2 && !c_batched)
        DECLINE("gemm_async: C must be a 2-D tmem buffer (lanes, columns)");
    if (!c_batched && td__ga_tmem_slice(call, cr, &c_slice) != 0)
        DECLINE("gemm_async: the layout of %.*s does not slice to the "
                "region of C",
                TD__FIELD(cb->name));
    /* M = 64 with C packed as (M, 2, N/2) (Layout E at cta_group 1, the
     * same layout as B): TVM's .ws datapath, which the layout implies
     * (the batched C[2, M, N/2] normalizes to it). */
    char packed_text[128];
    snprintf(packed_text, sizeof packed_text,
             "S[(%" PRId64 ", 2, %" PRId64 ") : (1@TLane, 64@TLane, 1@TCol)]",
             p.m, p.n / 2);
    bool packed_n2 = p.m == 64 && p.n % 2 == 0 &&
                     (c_batched || slice_is(&c_slice, packed_text));
    bool packed = packed_n2 && p.cta_group == 1;
    const td_config_entry *wse = td_call_config(call, "weight_stationary");
    if (packed && wse != NULL && wse->kind == TD_VALUE_BOOL && !wse->b)
        DECLINE("gemm_async[tcgen05]: C uses the packed (M, 2, N//2):(1@TLane, "
                "64@TLane, 1@TCol) Layout-E TMEM layout, which is the M=64 "
                "weight-stationary datapath — but weight_stationary=False was "
                "passed. Drop the flag (it is inferred from the layout), or "
                "declare C with the Layout F / identity datapath layout for a "
                "non-ws M=64 MMA.");
    if (packed)
        p.ws = true;
    if (p.ws && p.cta_group == 1 && p.m == 64 && !packed)
        DECLINE("gemm_async[tcgen05]: weight_stationary .ws (M=64, "
                "cta_group::1) writes the Layout-E fold (M, 2, N//2):(1@TLane, "
                "64@TLane, 1@TCol), but C is declared with the identity / "
                "Layout-F layout, so the two banks would be read from the "
                "wrong lanes. Declare C in the Layout-E (packed) or the "
                "batched C[2, M, N//2] form for a .ws output, or drop "
                "weight_stationary for a non-ws (Layout-F) M=64 MMA.");
    /* A in tensor memory at M = 64: .ws reads both 64-lane halves (the
     * batched A[2, M, K] says so), the batched A is only the two M = 64
     * folds (Layout E, Layout B). */
    if (p.a_tmem && p.ws && p.cta_group == 1 && p.m == 64 && !a_batched)
        DECLINE("gemm_async[tcgen05]: an M=64 cta_group::1 .ws GEMM with A "
                "in TMEM reads A from both 64-lane halves (lanes 0-63 and "
                "64-127), but A was given as a flat 2D [M, K] tile that only "
                "describes lanes 0-63. Declare A in the batched A[2, M, K] "
                "fold (layout (2, M, K):(64@TLane, 1@TLane, 1@TCol)), the "
                "A-side dual of the batched C[2, M, N//2] form, so the "
                "two-half occupancy is explicit and structurally checked.");
    if (a_batched && !(p.m == 64 && (p.ws ? p.cta_group == 1
                                          : p.cta_group == 2)))
        DECLINE("gemm_async[tcgen05]: batched A[2, M, K] is only valid for "
                "Layout E (cta_group::1 .ws, per-CTA M=64) or Layout B "
                "(cta_group::2 dense, per-CTA M=64), but got "
                "weight_stationary=%s, cta_group=%d, M=%" PRId64
                ". Declare A as a flat 2D [M, K] identity for any other "
                "datapath.",
                p.ws ? "True" : "False", p.cta_group, p.m);
    if (c_batched && p.m != 64)
        DECLINE("gemm_async: the batched C[2, M, N/2] folds an M=64 tile "
                "(lanes m and m + 64); got M=%" PRId64,
                p.m);
    /* The expected layout: packed (Layout B / E); Layout F (M = 64
     * scattered: row r in lane 32 (r / 16) + r % 16) when the whole (64,
     * X) buffer is Layout F at any lane offset (the upper sub-slab 16
     * lanes on, say), what an M = 64 MMA writes; else the identity. */
    char want[128];
    if (two_by_two || packed_n2)
        snprintf(want, sizeof want, "%s", packed_text);
    else if (p.m == 64 && c_is_f(cb))
        snprintf(want, sizeof want,
                 "S[(4, 16, %" PRId64 ") : (32@TLane, 1@TLane, 1@TCol)]",
                 p.n);
    else
        snprintf(want, sizeof want,
                 "S[(%" PRId64 ", %" PRId64 ") : (1@TLane, 1@TCol)]", p.m,
                 p.n);
    if (!c_batched && !slice_is(&c_slice, want))
        DECLINE("gemm_async: C's region of tensor memory is not the layout "
                "the MMA writes, %s at the region's first lane and column",
                want);
    p.lane0 = c_slice.offset[TD_AXIS_TLANE];
    p.col0 = c_slice.offset[TD_AXIS_TCOL];
    p.two_by_two = two_by_two || packed_n2;
    if (p.a_tmem && (rc = tmem_a(call, &p, a_batched, &a_slice, why)) != 0)
        return rc;
    if (p.lane0 + p.m > 128 || p.col0 + p.n > 512)
        DECLINE("gemm_async: C's region (lanes %" PRId64 "..%" PRId64
                ", columns %" PRId64 "..%" PRId64
                ") lies outside tensor memory's 128 lanes x 512 columns",
                p.lane0, p.lane0 + p.m, p.col0, p.col0 + p.n);
    /* Block scaling: smem_desc, the kind, the encoder's rules (the
     * descriptor is encoded at run time). */
    if (p.bs != NULL &&
        (rc = td__ga_bs_final(call, p.bs, p.cta_group, p.m_mma * p.cta_group,
                              p.n_mma, p.mma_k, !p.a_tmem && p.a.mn_major,
                              p.b.mn_major, why)) != 0)
        return rc;
    /* The instruction descriptor, with the encoder's shape rule (D6). */
    if (p.bs == NULL && !shape_ok(p.cta_group, p.m_mma * p.cta_group, p.n_mma))
        DECLINE("Invalid matrix shape for Tcgen05 MMA, check failed for "
                "kind: %s, is_sparse: False, cta_group: %d, M: %" PRId64
                ", N: %" PRId64 ", K: %" PRId64,
                kname, p.cta_group, p.m_mma * p.cta_group, p.n_mma, p.mma_k);
    p.idesc = idesc_dense(p.m_mma * p.cta_group, p.n_mma, p.ab, p.tf32,
                          p.a.mn_major, p.b.mn_major);
    /* D7: the CTA pair of cta_group 2 */
    if (p.cta_group == 2 && (call->cluster[0] == 0 || call->cluster[0] % 2))
        DECLINE("cta_group=2 needs a cluster of 2 CTAs along x (launch has "
                "%s)",
                call->cluster[0] == 0 ? "none" : "an odd cluster");
    /* the smem_desc mode */
    static const char *const modes[4] = {"hoist", "local_hoist", "encode",
                                         "recompute"};
    const td_config_entry *sd = td_call_config(call, "smem_desc");
    for (int i = 0; sd != NULL && sd->kind == TD_VALUE_STRING && i < 4; i++)
        if (strncmp(sd->s, modes[i], TD_NAME_MAX) == 0)
            p.mode = i;
    p.warp = call->scope == TD_SCOPE_WARP;
    if ((rc = emit(call, &p, ir)) != 0)
        return rc;
    note(call, &p, why);
    return 0;
}

const td_impl_desc td__variant_gemm_async_tcgen05 = {
    .name = "tcgen05",
    .emit = async_emit,
    .preds = async_preds,
    .npreds = sizeof async_preds / sizeof *async_preds,
};
