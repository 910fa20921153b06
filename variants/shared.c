/*
 * The `shared` variant module: reductions over shared-memory buffers
 * (upstream reduction/shared.py).  Its predicate is complete; the emitter
 * (a group shuffle tree per output element) lands with issue 3 and declines
 * until then, so dispatch moves on instead of emitting nothing.
 */
#include <string.h>

#include "reduce_common.h"
#include "variants.h"

/* upstream shared_valid, checks 1-6 in upstream's order. */
static bool shared_valid(const td_call *call, const td_args *args, void *user,
                         td_reason *why)
{
    (void)args;
    (void)user;
    switch (call->scope) {
    case TD_SCOPE_CTA:
    case TD_SCOPE_WARPGROUP:
    case TD_SCOPE_WARP:
    case TD_SCOPE_THREAD:
        break;
    default:
        td_reason_set(why, "unsupported exec_scope %s for shared reduction",
                      td_exec_scope_name(call->scope));
        return false;
    }
    const td_buffer *dst = td__region_buffer(call, &call->dst);
    const td_buffer *src = td__region_buffer(call, &call->src);
    if (dst == NULL || src == NULL) {
        td_reason_set(why, "malformed call: %s region does not name a buffer",
                      dst == NULL ? "dst" : "src");
        return false;
    }
    if (strncmp(dst->scope, "shared", 6) != 0 ||
        strncmp(src->scope, "shared", 6) != 0) {
        td_reason_set(why, "expected shared scope for both src and dst");
        return false;
    }
    if (dst->dtype != src->dtype) {
        td_reason_set(why, "dtype mismatch: src=%s dst=%s",
                      td_dtype_name(src->dtype), td_dtype_name(dst->dtype));
        return false;
    }
    /* Upstream checks the launch even at thread scope. */
    if (!call->launch[TD_LAUNCH_TX].present) {
        td_reason_set(why, "threadIdx.x not in launch_params");
        return false;
    }
    if (call->launch[TD_LAUNCH_TY].present ||
        call->launch[TD_LAUNCH_TZ].present) {
        td_reason_set(why, "multi-dimensional thread binding not supported "
                           "for shared reduction");
        return false;
    }
    td__red_shape sh;
    return td__reduce_shape(call, &sh, why);
}

static const td_pred_desc shared_preds[] = {
    {"shared_valid", NULL, 0, shared_valid, NULL},
};

static int shared_emit(const td_call *call, const td_op_desc *op, td_ir *ir,
                       void *user, td_reason *why)
{
    (void)call;
    (void)op;
    (void)ir;
    (void)user;
    td_reason_set(why, "shared variant emitter not implemented yet (issue 3)");
    return TD_EDECLINED;
}

const td_impl_desc td__variant_shared = {
    "shared", shared_emit, NULL, shared_preds,
    sizeof(shared_preds) / sizeof(shared_preds[0]),
};
