/*
 * A variant module written against the public API only: "pairwise", a
 * thread-scope sum/max/min that combines a 1-D register vector as a
 * balanced tree (fewer rounding steps than a sequential loop for sums).
 *
 * It brings one new predicate, `src_len_at_most {limit: int}`, reuses the
 * built-in generic predicates in its rules entry, and builds IR with the
 * td_ir builder (emitters never print text).  The rules file
 * examples/rules-with-pairwise.yaml adds it above `local` for short
 * vectors; nothing else changes.
 *
 * The same file serves both ways of extending tiledispatch:
 *   - as a plugin (meson builds it as examples/plugins/libpairwise.so):
 *       tiledispatch --plugin build/examples/plugins/libpairwise.so \
 *           --rules examples/rules-with-pairwise.yaml dispatch CALL.yaml
 *   - linked into an application that registers `pairwise_impl` itself
 *     (examples/custom_variant.c).
 */
#include "tiledispatch/td_plugin.h"

/* ---- the predicate ------------------------------------------------------ */

static const td_arg_spec src_len_args[] = {
    {.name = "limit", .type = TD_ARG_INT, .required = true},
};

static bool src_len_at_most(const td_call *call, const td_args *args,
                            void *user, td_reason *why)
{
    (void)user;
    int64_t limit = td_args_int(args, "limit", 0);
    int64_t n = td_region_size(&call->src);
    if (n <= limit)
        return true;
    td_reason_set(why, "source length %lld > %lld", (long long)n,
                  (long long)limit);
    return false;
}

static const td_pred_desc pairwise_preds[] = {
    {
        .name = "src_len_at_most",
        .args = src_len_args,
        .nargs = sizeof src_len_args / sizeof src_len_args[0],
        .fn = src_len_at_most,
    },
};

/* ---- the emitter -------------------------------------------------------- */

static int emit_pairwise(const td_call *call, const td_op_desc *op,
                         const void *plan, td_ir *ir, void *user,
                         td_reason *why)
{
    (void)plan; /* this module has no plan function */
    (void)user;
    const td_buffer *src = td_call_src_buffer(call);
    const td_buffer *dst = td_call_dst_buffer(call);
    int64_t n = td_region_size(&call->src);
    if (src->ndim != 1 || td_region_size(&call->dst) != 1 || n < 1) {
        td_reason_set(why, "pairwise needs a 1-D source and one output");
        return TD_EDECLINED;
    }
    td_combiner c = op->combiner;
    td_ir_buf *s = td_ir_buffer(ir, src->name, src->dtype, src->scope,
                                src->ndim, src->shape);
    td_ir_buf *d = td_ir_buffer(ir, dst->name, dst->dtype, dst->scope,
                                dst->ndim, dst->shape);
    td_ir_buf *t = td_ir_scratch(ir, "tree", src->dtype, n);

    /* Copy the source region into the scratch tree. */
    td_var *i = td_ir_for(ir, "i", td_int(ir, n), TD_LOOP_UNROLL);
    td_ir_store1(ir, t, td_var_ref(ir, i),
                 td_load1(ir, s, td_add(ir, td_var_ref(ir, i),
                                        td_int(ir, call->src.start[0]))));
    td_ir_end_for(ir);

    /* Each level folds the upper half onto the lower half. */
    for (int64_t cur = n; cur > 1; cur = (cur + 1) / 2) {
        int64_t half = (cur + 1) / 2;
        td_var *k = td_ir_for(ir, "k", td_int(ir, cur / 2), TD_LOOP_UNROLL);
        td_expr *lo = td_var_ref(ir, k);
        td_expr *hi = td_add(ir, td_var_ref(ir, k), td_int(ir, half));
        td_ir_store1(ir, t, lo,
                     td_combine(ir, c, td_load1(ir, t, lo),
                                td_load1(ir, t, hi)));
        td_ir_end_for(ir);
    }

    td_expr *at = td_int(ir, call->dst.start[0]);
    td_expr *result = td_load1(ir, t, td_int(ir, 0));
    if (call->accum)
        result = td_combine(ir, c, td_load1(ir, d, at), result);
    td_ir_store1(ir, d, at, result);
    return td_ir_status(ir);
}

const td_impl_desc pairwise_impl = {
    .name = "pairwise",
    .emit = emit_pairwise,
    .preds = pairwise_preds,
    .npreds = sizeof pairwise_preds / sizeof pairwise_preds[0],
};

/* ---- the plugin entry points --------------------------------------------- */

TD_PLUGIN_ABI;

TD_PLUGIN_EXPORT int td_plugin_init(td_registry *reg)
{
    return td_register_impl(reg, &pairwise_impl);
}
