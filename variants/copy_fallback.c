/*
 * The scalar copy `fallback` (upstream copy/fallback.py, priority 0): one
 * thread of each scope instance copies the region element by element, a
 * loop nest over the non-unit extents.  Its predicate is TVM's
 * validate_copy_op plus the refusals TVM lacks: cluster scope (TVM
 * crashes there), a register operand distributed over threads (one thread
 * cannot reach the others' registers), a register destination at a scope
 * wider than a thread (one thread would write only its own registers), a
 * swizzled or thread-axis global operand and a multi-dimensional thread
 * launch.  The emitter leaves the barrier to the caller and says so in
 * its note (explain shows it).
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "variants.h"

static bool fallback_pred(const td_call *call, const td_args *args,
                          void *user, td_reason *why)
{
    (void)args;
    (void)user;
    if (!td__copy_valid(call, why))
        return false;
    if (call->scope == TD_SCOPE_CLUSTER) {
        td_reason_set(why, "unsupported exec_scope cluster");
        return false;
    }
    if ((unsigned)call->scope >= TD_SCOPE_COUNT) {
        td_reason_set(why, "unsupported exec_scope");
        return false;
    }
    if (!td__copy_global_ok(call, why))
        return false;
    const td_buffer *ops[2] = {td__copy_src(call), td__copy_dst(call)};
    for (int i = 0; i < 2; i++) {
        const char *axis;
        if (td__copy_is_local(ops[i]) && td__copy_thread_axis(ops[i], &axis)) {
            td_reason_set(why,
                          "fallback: %.*s is distributed over threads (%s); "
                          "a single thread cannot copy it",
                          (int)strnlen(ops[i]->name, TD_NAME_MAX),
                          ops[i]->name, axis);
            return false;
        }
    }
    if (call->scope != TD_SCOPE_THREAD) {
        const td_buffer *d = td__copy_dst(call);
        if (td__copy_is_local(d)) {
            td_reason_set(why,
                          "fallback: %.*s is a register buffer of every "
                          "thread; one thread of the %s would write only its "
                          "own",
                          (int)strnlen(d->name, TD_NAME_MAX), d->name,
                          td_exec_scope_name(call->scope));
            return false;
        }
        if (call->launch[TD_LAUNCH_TY].present ||
            call->launch[TD_LAUNCH_TZ].present) {
            td_reason_set(why, "multi-dimensional thread binding not "
                               "supported for copy");
            return false;
        }
    }
    return true;
}

static const td_pred_desc fallback_preds[] = {
    {.name = "validate_copy_op", .fn = fallback_pred},
};

/* The thread of the scope instance that copies: lane 0 of each warp, the
 * first thread of each warpgroup, thread 0 of the block. */
static td_expr *first_thread(const td_call *call, td_ir *ir)
{
    td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    if (call->scope == TD_SCOPE_WARP)
        tx = td_mod(ir, tx, td_int(ir, 32));
    else if (call->scope == TD_SCOPE_WARPGROUP)
        tx = td_mod(ir, tx, td_int(ir, 128));
    td_var *tid = td_ir_let(ir, "tid", TD_I32, tx);
    return td_eq(ir, td_var_ref(ir, tid), td_int(ir, 0));
}

/* What the caller synchronises after the copy (upstream emits no
 * barrier, and neither does this). */
static void fallback_note(const td_call *call, td_reason *why)
{
    const td_buffer *d = td__copy_dst(call);
    const char *what = td__copy_is_global(d) ? "global" : "shared";
    switch (call->scope) {
    case TD_SCOPE_THREAD:
        td_reason_set(why, "scalar copy by the calling thread; no barrier "
                           "is emitted");
        break;
    case TD_SCOPE_WARP:
        td_reason_set(why,
                      "lane 0 of each warp copies alone and no barrier is "
                      "emitted: the caller must synchronise (__syncwarp() "
                      "for readers in the same warp, a block barrier for "
                      "others) before any other thread reads %.*s (%s)",
                      (int)strnlen(d->name, TD_NAME_MAX), d->name, what);
        break;
    case TD_SCOPE_WARPGROUP:
        td_reason_set(why,
                      "the first thread of each warpgroup copies alone and "
                      "no barrier is emitted: the caller must synchronise "
                      "(a named barrier over the warpgroup, or "
                      "__syncthreads()) before any other thread reads %.*s "
                      "(%s)",
                      (int)strnlen(d->name, TD_NAME_MAX), d->name, what);
        break;
    default:
        td_reason_set(why,
                      "thread 0 of the block copies alone and no barrier is "
                      "emitted: the caller must synchronise "
                      "(__syncthreads()) before any other thread reads %.*s "
                      "(%s)",
                      (int)strnlen(d->name, TD_NAME_MAX), d->name, what);
        break;
    }
}

static int fallback_emit(const td_call *call, const td_op_desc *op,
                         const void *plan, td_ir *ir, void *user,
                         td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    const td_region *sr = td__copy_src_region(call);
    const td_region *dr = &call->dst;
    td_ir_buf *db = td__copy_declare(call, dr->buffer, ir, why);
    if (db == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_ir_buf *sb = td__copy_declare(call, sr->buffer, ir, why);
    if (sb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;

    int64_t ext[TD_MAX_RANK], sext[TD_MAX_RANK];
    int ddim[TD_MAX_RANK], sdim[TD_MAX_RANK];
    int n = td__copy_squeeze(dr, ext, ddim);
    if (td__copy_squeeze(sr, sext, sdim) != n) {
        td_reason_set(why, "fallback: the regions differ in shape");
        return TD_EINVAL;
    }
    bool gate = call->scope != TD_SCOPE_THREAD;
    if (gate)
        td_ir_if(ir, first_thread(call, ir));
    static const char *const names[] = {"v", "v_1", "v_2", "v_3",
                                        "v_4", "v_5", "v_6", "v_7"};
    td_var *lv[TD_MAX_RANK];
    for (int k = 0; k < n; k++)
        lv[k] = td_ir_for(ir, names[k], td_int(ir, ext[k]), TD_LOOP_SERIAL);
    td_expr *didx[TD_MAX_RANK], *sidx[TD_MAX_RANK];
    for (int d = 0; d < dr->ndim; d++)
        didx[d] = td__region_start_expr(ir, dr, d, 0);
    for (int d = 0; d < sr->ndim; d++)
        sidx[d] = td__region_start_expr(ir, sr, d, 0);
    for (int k = 0; k < n; k++) {
        didx[ddim[k]] = td_add(ir, didx[ddim[k]], td_var_ref(ir, lv[k]));
        sidx[sdim[k]] = td_add(ir, sidx[sdim[k]], td_var_ref(ir, lv[k]));
    }
    td_ir_store(ir, db, dr->ndim, didx, td_load(ir, sb, sr->ndim, sidx));
    for (int k = 0; k < n; k++)
        td_ir_end_for(ir);
    if (gate)
        td_ir_end_if(ir);
    int rc = td_ir_status(ir);
    if (rc == 0)
        fallback_note(call, why);
    return rc;
}

const td_impl_desc td__variant_copy_fallback = {
    .name = "fallback",
    .emit = fallback_emit,
    .preds = fallback_preds,
    .npreds = sizeof fallback_preds / sizeof *fallback_preds,
};
