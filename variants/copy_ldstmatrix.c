/*
 * The copy variant `ldstmatrix` (upstream copy/ld_stmatrix.py, priority
 * 10): an mma-fragment-like register layout moved to or from shared
 * memory with warp-collective ldmatrix / stmatrix instructions (x4, x2 or
 * x1 8x8 matrices of 16-bit elements, optionally transposed), one per
 * group of the fragment's registers.  Its predicate ldstmatrix_applicable
 * is TVM's check plus the instruction's arch (ldmatrix sm_75, stmatrix
 * sm_90; TVM checks none); the fit of the layouts (copy_plan_ldst.c) and
 * its declines (swizzle chunks, replicas, the fragment shape, the element
 * width) are the emitter's, with the planner's texts.  Every lane of each
 * participating warp must execute the copy; no barrier is emitted.
 */
#include <stdio.h>
#include <string.h>

#include "copy.h"
#include "copy_plan.h"
#include "variants.h"

static bool ldst_pred(const td_call *call, const td_args *args, void *user,
                      td_reason *why)
{
    (void)args;
    (void)user;
    td_copy_req q;
    char w[TD_REASON_MAX];
    if (td__copy_req_from_call(call, &q) != 0) {
        td_reason_set(why, "ldstmatrix: the source is not a region");
        return false;
    }
    if (!td__copy_check_ldst(&q, w, sizeof w)) {
        td_reason_set(why, "%s", w);
        return false;
    }
    /* D4: the instructions' arch (the direction is known now: the check
     * passed, so exactly one side is local). */
    bool st = strcmp(q.src.scope, "local") == 0;
    int need = st ? 90 : 75;
    if (call->sm_version < need) {
        td_reason_set(why, "%s needs sm_%d or newer (arch %.*s)",
                      st ? "stmatrix" : "ldmatrix", need,
                      call->sm_version == 0 ? 7 : (int)strnlen(call->arch,
                                                               TD_NAME_MAX - 1),
                      call->sm_version == 0 ? "unknown" : call->arch);
        return false;
    }
    return true;
}

static const td_pred_desc ldst_preds[] = {
    {.name = "ldstmatrix_applicable", .fn = ldst_pred},
};

static int ldst_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    td_copy_req q;
    td_copy_ldst_plan p;
    char w[TD_REASON_MAX];
    if (td__copy_req_from_call(call, &q) != 0) {
        td_reason_set(why, "ldstmatrix: the source is not a region");
        return TD_EDECLINED;
    }
    int rc = td__copy_plan_ldst(&q, &p, w, sizeof w);
    if (rc != 0) {
        td_reason_set(why, "%s", w);
        return rc == TD_ENOMATCH ? TD_EDECLINED : rc;
    }
    const td_region *sr = td__copy_src_region(call), *dr = &call->dst;
    const td_region *rr = p.ld ? dr : sr, *mr = p.ld ? sr : dr;
    /* Each row the instruction moves is 16 bytes that must start on a
     * 16-byte boundary (TVM checks the strides only, not where the region
     * starts). */
    for (int64_t wi = 0; wi < p.t_total / 32; wi++)
        for (int64_t mm = 0; mm < p.m_outer; mm++)
            for (int64_t lane = 0; lane < 8 * p.num; lane++) {
                int64_t off;
                if ((rc = td__copy_ldst_smem_off(&p, wi, lane, mm, &off)) < 0)
                    return rc;
                if (off % 8 != 0) {
                    const td_buffer *m = &call->buffers[mr->buffer];
                    td_reason_set(why,
                                  "ldstmatrix: the rows of %.*s must start "
                                  "on 16-byte boundaries; lane %lld's row "
                                  "starts at element %lld",
                                  (int)strnlen(m->name, TD_NAME_MAX), m->name,
                                  (long long)lane, (long long)off);
                    return TD_EDECLINED;
                }
            }
    const td_buffer *rb = &call->buffers[rr->buffer];
    /* The words of every instruction (constants), and the register
     * storage they span. */
    int64_t words[64][4], span = p.m_total;
    if (p.m_outer > 64) {
        td_reason_set(why, "ldstmatrix: more than 64 instructions");
        return TD_EDECLINED;
    }
    for (int64_t mm = 0; mm < p.m_outer; mm++)
        for (int i = 0; i < p.num; i++) {
            if ((rc = td__copy_ldst_word(&p, mm, i, &words[mm][i])) < 0)
                return rc;
            if (2 * words[mm][i] + 2 > span)
                span = 2 * words[mm][i] + 2;
        }
    td_ir_buf *mb = td__copy_declare(call, mr->buffer, ir, why);
    if (mb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_ir_buf *regs = td_ir_buffer(ir, rb->name, rb->dtype, rb->scope, 1,
                                   &span);
    td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    td_expr *lane = td_var_ref(
        ir, td_ir_let(ir, "laneid", TD_I32, td_mod(ir, tx, td_int(ir, 32))));
    td_expr *warp = NULL;
    if (p.t_total > 32) {
        td_expr *wv = td_div(ir, tx, td_int(ir, 32));
        if (p.lane_axis == TD_AXIS_TID_IN_WG)
            wv = td_mod(ir, wv, td_int(ir, 4));
        warp = td_var_ref(ir, td_ir_let(ir, "warp", TD_I32, wv));
    }
    /* This lane's part of the row address: the warp's matrices, the
     * lane's matrix (lane / 8, x2/x4) and row (lane % 8). */
    td_copy_ldst_plan p0 = p;
    p0.swz.on = false;
    for (int64_t mm = 0; mm < p.m_outer; mm++) {
        int64_t c;
        if ((rc = td__copy_ldst_smem_off(&p0, 0, 0, mm, &c)) < 0)
            return rc;
        /* low: off less what the swizzle's row term cannot see. */
        td_copy_low low;
        td__copy_low_init(&low, &p.swz);
        td__copy_low_const(&low, c);
        td_expr *off = td_int(ir, c);
        if (warp != NULL) {
            off = td__copy_split_expr(ir, off, warp, p.s.shard + p.s_seps[0],
                        p.s_seps[1] - p.s_seps[0]);
            td__copy_low_split(ir, &low, warp,
                               p.lane_axis == TD_AXIS_TID_IN_WG
                                   ? 3 : p.t_total / 32 - 1,
                               p.s.shard + p.s_seps[0],
                               p.s_seps[1] - p.s_seps[0]);
        }
        if (p.num > 1) {
            td_expr *m = td_div(ir, lane, td_int(ir, 8));
            if (p.num == 2)
                m = td_mod(ir, m, td_int(ir, 2));
            off = td__copy_split_expr(ir, off, m, p.s.shard + p.s_seps[4],
                        p.s_seps[5] - p.s_seps[4]);
            td__copy_low_split(ir, &low, m, p.num == 2 ? 1 : 3,
                               p.s.shard + p.s_seps[4],
                               p.s_seps[5] - p.s_seps[4]);
        }
        td_expr *r8 = td_mod(ir, lane, td_int(ir, 8));
        off = td_add(ir, off, td_mul(ir, r8, td_int(ir, p.row_stride)));
        td__copy_low_term(ir, &low, r8, 7, p.row_stride);
        td_expr *wx[4];
        for (int i = 0; i < p.num; i++)
            wx[i] = td_int(ir, words[mm][i]);
        td_ptx_matrix a = {.mem = mb,
                           .offset = td__copy_swizzle_expr(ir, off, &low, &p.swz),
                           .num = p.num, .trans = p.trans, .regs = regs,
                           .word = wx[0], .words = wx};
        if (p.ld)
            td_ir_ldmatrix(ir, &a);
        else
            td_ir_stmatrix(ir, &a);
    }
    rc = td_ir_status(ir);
    if (rc != 0)
        return rc;
    if (p.ld)
        td_reason_set(why, "warp-collective: every lane of each warp must "
                           "execute it (no divergent branch around the "
                           "copy); no barrier is emitted: what other warps "
                           "wrote to %.*s must be made visible first by the "
                           "caller (a named barrier or __syncthreads())",
                      (int)strnlen(call->buffers[mr->buffer].name,
                                   TD_NAME_MAX),
                      call->buffers[mr->buffer].name);
    else
        td_reason_set(why, "warp-collective: every lane of each warp must "
                           "execute it; no barrier is emitted: other warps "
                           "may read %.*s only after the caller "
                           "synchronises (a named barrier or "
                           "__syncthreads())",
                      (int)strnlen(call->buffers[mr->buffer].name,
                                   TD_NAME_MAX),
                      call->buffers[mr->buffer].name);
    return 0;
}

const td_impl_desc td__variant_copy_ldstmatrix = {
    .name = "ldstmatrix",
    .emit = ldst_emit,
    .preds = ldst_preds,
    .npreds = sizeof ldst_preds / sizeof *ldst_preds,
};
