/*
 * A variant module written against the public API only: "pairwise", a
 * thread-scope sum/max/min that combines a 1-D register vector as a
 * balanced tree (fewer rounding steps than a sequential loop for sums).
 *
 * It brings one new predicate, `src_len_at_most {limit: int}`, reuses the
 * built-in generic predicates in its rules entry, and builds IR with the
 * td_ir builder (emitters never print text).  The rules overlay
 * examples/rules-with-pairwise.yaml adds it above `local` for short
 * vectors, as a layer over the built-in rules; nothing else changes.
 *
 *   custom_variant OVERLAY.yaml CALL.yaml [cuda|tirx]
 *
 * prints the chosen variant and the emitted code.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tiledispatch.h"

/* ---- the predicate ------------------------------------------------------ */

static const td_arg_spec src_len_args[] = {
    {"limit", TD_ARG_INT, true},
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
    {"src_len_at_most", src_len_args, 1, src_len_at_most, NULL},
};

/* ---- the emitter -------------------------------------------------------- */

static int emit_pairwise(const td_call *call, const td_op_desc *op,
                         td_ir *ir, void *user, td_reason *why)
{
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

static const td_impl_desc pairwise_impl = {
    "pairwise", emit_pairwise, NULL, pairwise_preds, 1,
};

/* ---- a small driver ----------------------------------------------------- */

static int fail(const td_diag *d)
{
    char buf[2048];
    td_diag_format(d, buf, sizeof buf);
    fputs(buf, stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OVERLAY.yaml CALL.yaml [cuda|tirx]\n",
                argv[0]);
        return 2;
    }
    td_lang lang = (argc > 3 && argv[3][0] == 't') ? TD_LANG_TIRX
                                                   : TD_LANG_CUDA;
    td_diag d;
    td_diag_clear(&d);
    td_registry *reg = NULL;
    td_call *call = NULL;
    int rc = 2;

    /* 1. Built-ins plus our module, before any rules are loaded: the
     *    loader checks every name the rules use against what C registered. */
    if (td_registry_new(&reg) != 0 || td_register_impl(reg, &pairwise_impl))
        goto out;
    /* 2. The built-in rules, then the overlay that adds "pairwise". */
    const char *paths[] = {argv[1]};
    if (td_registry_load_default_rules(reg, &d) != 0 ||
        td_registry_add_rules(reg, paths, 1, &d) != 0) {
        rc = fail(&d);
        goto out;
    }
    /* 3. A call, dispatched and printed. */
    if (td_call_load_file(argv[2], &call, &d) != 0) {
        rc = fail(&d);
        goto out;
    }
    td_dispatch_result res;
    int err = td_dispatch(reg, call, &res, &d);
    if (err != 0) {
        rc = err == TD_ENOMATCH ? 1 : fail(&d);
        if (err == TD_ENOMATCH)
            fprintf(stderr, "%s\n", d.msg);
        goto out;
    }
    char *body = NULL;
    err = td_ir_print(res.ir, lang, 0, &body, NULL);
    td_ir_free(res.ir);
    if (err != 0) {
        rc = 3;
        goto out;
    }
    printf("variant: %s\n%s", res.variant, body);
    free(body);
    rc = 0;
out:
    td_call_free(call);
    td_registry_free(reg);
    return rc;
}
