/*
 * The `local` variant module: reductions whose source and destination are
 * both register (local) buffers (upstream reduction/local.py).
 *
 * Thread scope is a plain sequential reduction over each thread's own
 * elements (reduce_common.c).  The warp and warpgroup paths need
 * TileLayouts, which land with issue 4; until then local_valid rejects
 * them with a reason that says so.
 */
#include <string.h>

#include "reduce_common.h"
#include "variants.h"

/*
 * upstream validate_reduction_local, with one improvement: at thread scope
 * upstream accepts any axes and shapes (bad axes then crash the emitter),
 * while this checks the axes and that the dst holds exactly one element per
 * spatial position, as upstream's documentation claims it does.
 */
static bool local_valid(const td_call *call, const td_args *args, void *user,
                        td_reason *why)
{
    (void)args;
    (void)user;
    const td_buffer *dst = td__region_buffer(call, &call->dst);
    const td_buffer *src = td__region_buffer(call, &call->src);
    if (dst == NULL || src == NULL) {
        td_reason_set(why, "malformed call: %s region does not name a buffer",
                      dst == NULL ? "dst" : "src");
        return false;
    }
    if (!td__name_is(dst->scope, "local") || !td__name_is(src->scope, "local") ||
        !td__name_is(call->target, "cuda")) {
        td_reason_set(why, "expected local scope and CUDA target");
        return false;
    }
    if (dst->dtype != src->dtype) {
        td_reason_set(why, "dtype mismatch: src=%s dst=%s",
                      td_dtype_name(src->dtype), td_dtype_name(dst->dtype));
        return false;
    }
    switch (call->scope) {
    case TD_SCOPE_THREAD: {
        td__red_shape sh;
        return td__reduce_shape(call, &sh, why);
    }
    case TD_SCOPE_WARP:
    case TD_SCOPE_WARPGROUP:
        td_reason_set(why,
                      "%s-scope local reduction is not supported yet "
                      "(layouts land with issue 4)",
                      td_exec_scope_name(call->scope));
        return false;
    default:
        td_reason_set(why, "unsupported exec_scope %s for local reduction",
                      td_exec_scope_name(call->scope));
        return false;
    }
}

static const td_pred_desc local_preds[] = {
    {"local_valid", NULL, 0, local_valid, NULL},
};

static int local_emit(const td_call *call, const td_op_desc *op, td_ir *ir,
                      void *user, td_reason *why)
{
    (void)user;
    /* Rules may bind the impl without its predicate; never emit for a call
     * local_valid would reject. */
    if (!local_valid(call, NULL, NULL, why))
        return TD_EDECLINED;
    if (op == NULL || op->kind != TD_OP_KIND_REDUCTION) {
        td_reason_set(why, "op %s is not a reduction",
                      op != NULL && op->name != NULL ? op->name : "?");
        return TD_EDECLINED;
    }
    if (call->scope != TD_SCOPE_THREAD) {
        td_reason_set(why, "unsupported exec_scope %s for local reduction",
                      td_exec_scope_name(call->scope));
        return TD_EDECLINED;
    }
    return td__emit_thread_wise(call, op->combiner, ir, why);
}

const td_impl_desc td__variant_local = {
    "local", local_emit, NULL, local_preds,
    sizeof(local_preds) / sizeof(local_preds[0]),
};
