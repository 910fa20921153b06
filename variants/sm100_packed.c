/*
 * The Blackwell packed reductions (upstream reduction/sm100_packed.py):
 * `packed_add_sum` (sum via add.f32x2) and `3input_maxmin` (max/min via
 * 3-input max.f32/min.f32).  They bring no predicates of their own; the
 * rules bind the generic ones (exec_scope, local_scope, dst_len, ...).
 * The emitters land with issue 3 and decline until then.
 */
#include "variants.h"

static int packed_emit(const td_call *call, const td_op_desc *op, td_ir *ir,
                       void *user, td_reason *why)
{
    (void)call;
    (void)op;
    (void)ir;
    (void)user;
    td_reason_set(why, "packed emitter not implemented yet (issue 3)");
    return TD_EDECLINED;
}

const td_impl_desc td__variant_packed_add_sum = {
    "packed_add_sum", packed_emit, NULL, NULL, 0,
};

const td_impl_desc td__variant_3input_maxmin = {
    "3input_maxmin", packed_emit, NULL, NULL, 0,
};
