/*
 * Unit tests of the generic predicates and of the variant modules' own
 * predicates (local_valid, shared_valid): pass/fail and the exact reason.
 *
 * Predicates without arguments are called directly.  Those with arguments
 * read them through the registry's td_args, which only the rules loader
 * builds, so they are tested end to end: an empty registry with these
 * predicates and a fake impl, a one-entry rules text, td_explain_call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "tiledispatch.h"
#include "predicates.h"
#include "variants.h"

/* ---- helpers ----------------------------------------------------------- */

static const td_pred_desc *generic(const char *name)
{
    for (size_t i = 0; i < td__generic_predicates_count; i++)
        if (strcmp(td__generic_predicates[i].name, name) == 0)
            return &td__generic_predicates[i];
    fail_msg("no generic predicate %s", name);
    return NULL;
}

/* Runs a no-argument predicate; returns its verdict, reason in *why. */
static bool run0(const td_pred_desc *p, const td_call *c, td_reason *why)
{
    memset(why, 0, sizeof *why);
    return p->fn(c, NULL, p->user, why);
}

static int fake_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user,
                     td_reason *why)
{
    (void)plan;
    (void)call;
    (void)op;
    (void)ir;
    (void)user;
    (void)why;
    return 0;
}

static const td_impl_desc fake_impl = {.name = "fake", .emit = fake_emit};

static td_registry *new_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new_empty(&reg), 0);
    static const td_op_desc ops[] = {
        {.name = "sum", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM},
        {.name = "max", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MAX},
    };
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(td_register_op(reg, &ops[i]), 0);
    for (size_t i = 0; i < td__generic_predicates_count; i++)
        assert_int_equal(td_register_predicate(reg,
                                               &td__generic_predicates[i]),
                         0);
    assert_int_equal(td_register_impl(reg, &fake_impl), 0);
    return reg;
}

static int load(td_registry *reg, const char *target, const char *when,
                td_diag *diag)
{
    char text[1024];
    snprintf(text, sizeof text,
             "version: 1\n"
             "variants:\n"
             "  - name: t\n"
             "    impl: fake\n"
             "    ops: [sum]\n"
             "    target: %s\n"
             "    priority: 1\n"
             "    when:\n"
             "      - %s\n",
             target, when);
    td_diag_clear(diag);
    return td_registry_load_rules_text(reg, "test.yaml", text, strlen(text),
                                       diag);
}

/*
 * Evaluates one predicate (bound as in `when`, a rules list item) on c and
 * checks the outcome: expect_reason NULL means it must pass.
 */
static void check(const td_call *c, const char *when,
                  const char *expect_reason)
{
    td_registry *reg = new_registry();
    td_diag diag;
    int rc = load(reg, c->target, when, &diag);
    if (rc != 0)
        fail_msg("rules did not load: %s", diag.msg);
    td_explain *ex = NULL;
    td_diag_clear(&diag);
    assert_int_equal(td_explain_call(reg, c, &ex, &diag), 0);
    assert_int_equal(td_explain_nrows(ex), 1);
    const td_explain_row *row = td_explain_get(ex, 0);
    assert_int_equal(row->npreds, 1);
    if (expect_reason == NULL) {
        if (!row->preds[0].ok)
            fail_msg("%s failed: %s", when, row->preds[0].reason);
    } else {
        assert_false(row->preds[0].ok);
        assert_string_equal(row->preds[0].reason, expect_reason);
    }
    td_explain_free(ex);
    td_registry_free(reg);
}

/* ---- the table --------------------------------------------------------- */

static void test_table(void **state)
{
    (void)state;
    static const char *names[] = {"storage_scope", "exec_scope",
                                  "local_scope",   "dst_len",
                                  "src_ndim",      "dtype",
                                  "sm_version",    "reduction_len"};
    assert_int_equal(td__generic_predicates_count, 8);
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(td__generic_predicates[i].name, names[i]);
        assert_non_null(td__generic_predicates[i].fn);
    }
    const td_pred_desc *p = generic("storage_scope");
    assert_int_equal(p->nargs, 1);
    assert_string_equal(p->args[0].name, "expected_scope");
    assert_int_equal(p->args[0].type, TD_ARG_STRING_LIST);
    assert_true(p->args[0].required);
    assert_int_equal(generic("local_scope")->nargs, 0);
    assert_int_equal(generic("exec_scope")->args[0].type, TD_ARG_STRING_LIST);
    assert_int_equal(generic("dst_len")->args[0].type, TD_ARG_INT);
    assert_int_equal(generic("dtype")->args[0].type, TD_ARG_STRING);
    assert_string_equal(generic("sm_version")->args[0].name, "min_version");
    assert_string_equal(generic("reduction_len")->args[0].name, "min_len");
    assert_string_equal(generic("src_ndim")->args[0].name, "expected_ndim");
}

/* ---- generic predicates with arguments (end to end) -------------------- */

static void test_storage_scope(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    check(c, "storage_scope: {expected_scope: [local]}", NULL);
    strcpy(c->buffers[0].scope, "shared");
    check(c, "storage_scope: {expected_scope: [local]}",
          "storage scope mismatch: dst local, src shared; expected [local]");
    /* One pattern must match both operands. */
    check(c, "storage_scope: {expected_scope: [local, shared]}",
          "storage scope mismatch: dst local, src shared; "
          "expected [local, shared]");
    strcpy(c->buffers[1].scope, "shared.dyn");
    check(c, "storage_scope: {expected_scope: [\"shared*\"]}", NULL);
    check(c, "storage_scope: {expected_scope: [shared]}",
          "storage scope mismatch: dst shared.dyn, src shared; "
          "expected [shared]");
    free(c);
}

static void test_storage_scope_required(void **state)
{
    (void)state;
    td_registry *reg = new_registry();
    td_diag diag;
    assert_int_not_equal(load(reg, "cuda", "storage_scope", &diag), 0);
    assert_int_not_equal(load(reg, "cuda", "dst_len", &diag), 0);
    assert_int_not_equal(load(reg, "cuda", "exec_scope: {expected_scope: "
                                           "[thread]}",
                              &diag),
                         0);
    assert_int_equal(load(reg, "cuda", "local_scope", &diag), 0);
    td_registry_free(reg);
}

static void test_exec_scope(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    check(c, "exec_scope: {expected_scopes: [thread]}", NULL);
    c->scope = TD_SCOPE_CTA;
    check(c, "exec_scope: {expected_scopes: [thread]}",
          "unsupported exec_scope cta");
    check(c, "exec_scope: {expected_scopes: [warp, cta]}", NULL);
    c->scope = TD_SCOPE_WARPGROUP;
    check(c, "exec_scope: {expected_scopes: [warp, cta]}",
          "unsupported exec_scope warpgroup");
    free(c);
}

static void test_dst_len(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    check(c, "dst_len: {expected_len: 1}", NULL);
    /* The region counts, not the buffer. */
    c->buffers[1].shape[0] = 8;
    fx_slice(c, &c->dst, 1, (int64_t)2, (int64_t)3);
    check(c, "dst_len: {expected_len: 1}", NULL);
    fx_slice(c, &c->dst, 1, (int64_t)2, (int64_t)6);
    check(c, "dst_len: {expected_len: 1}", "dst_len 4 != 1");
    free(c);
}

static void test_src_ndim(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    check(c, "src_ndim: {expected_ndim: 1}", NULL);
    c->buffers[0].ndim = 2;
    c->buffers[0].shape[1] = 2;
    fx_full(c, &c->src, 0);
    check(c, "src_ndim: {expected_ndim: 1}", "src ndim 2 != 1");
    free(c);
}

static void test_dtype(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    check(c, "dtype: {expected_dtype: float32}", NULL);
    c->buffers[0].dtype = TD_F16; /* the src dtype is the one checked */
    check(c, "dtype: {expected_dtype: float32}", "dtype float16 != float32");
    c->buffers[0].dtype = TD_F32;
    c->buffers[1].dtype = TD_F16;
    check(c, "dtype: {expected_dtype: float32}", NULL);
    free(c);
}

static void test_sm_version(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    check(c, "sm_version: {min_version: 100}", "sm_version 90 < 100");
    c->sm_version = 100;
    check(c, "sm_version: {min_version: 100}", NULL);
    c->sm_version = 0; /* unknown arch */
    check(c, "sm_version: {min_version: 100}", "sm_version 0 < 100");
    free(c);
}

static void test_reduction_len(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    check(c, "reduction_len: {min_len: 8}", "reduction_len 4 < 8");
    check(c, "reduction_len: {min_len: 4}", NULL);
    /* Every src extent counts, the spatial ones too. */
    td_buffer *a = &c->buffers[0];
    a->ndim = 2;
    a->shape[0] = 2;
    a->shape[1] = 4;
    fx_full(c, &c->src, 0);
    check(c, "reduction_len: {min_len: 8}", NULL);
    fx_slice(c, &c->src, 0, (int64_t)1, (int64_t)2, (int64_t)0, (int64_t)4);
    check(c, "reduction_len: {min_len: 8}", "reduction_len 4 < 8");
    free(c);
}

/* ---- local_scope (no arguments) ---------------------------------------- */

static void test_local_scope(void **state)
{
    (void)state;
    const td_pred_desc *p = generic("local_scope");
    const char *r = "src/dst must be local scope with matching dtype on CUDA";
    td_reason why;
    td_call *c = fx_seed("sum");
    assert_true(run0(p, c, &why));
    c->buffers[1].dtype = TD_F16;
    assert_false(run0(p, c, &why));
    assert_string_equal(why.text, r);
    c->buffers[1].dtype = TD_F32;
    strcpy(c->buffers[0].scope, "shared");
    assert_false(run0(p, c, &why));
    assert_string_equal(why.text, r);
    strcpy(c->buffers[0].scope, "local");
    strcpy(c->target, "trn");
    assert_false(run0(p, c, &why));
    assert_string_equal(why.text, r);
    /* Through the registry too, on another target. */
    check(c, "local_scope", r);
    free(c);
}

/* ---- local_valid ------------------------------------------------------- */

static const td_pred_desc *local_valid(void)
{
    assert_int_equal(td__variant_local.npreds, 1);
    assert_string_equal(td__variant_local.preds[0].name, "local_valid");
    assert_int_equal(td__variant_local.preds[0].nargs, 0);
    return &td__variant_local.preds[0];
}

static void expect_fail(const td_pred_desc *p, const td_call *c,
                        const char *reason)
{
    td_reason why;
    assert_false(run0(p, c, &why));
    assert_string_equal(why.text, reason);
}

static void expect_pass(const td_pred_desc *p, const td_call *c)
{
    td_reason why;
    if (!run0(p, c, &why))
        fail_msg("%s rejected: %s", p->name, why.text);
}

/* Thread scope indexes registers row-major and reads src while writing
 * dst: other storage orders and overlapping in-place regions are refused
 * (the emitted code would read the wrong registers or overwritten ones). */
static void test_local_valid_thread_storage(void **state)
{
    (void)state;
    const td_pred_desc *p = local_valid();
    td_call *c = fx_seed("sum");
    td_buffer *a = &c->buffers[c->src.buffer];
    td_diag d;
    td_diag_clear(&d);

    /* A row-major layout written out is fine; so is a unit one. */
    a->has_layout = true;
    assert_int_equal(td_layout_parse("S[4 : 1]", &a->layout, &d), 0);
    expect_pass(p, c);
    assert_int_equal(td_layout_parse("S[(2, 2) : (2, 1)]", &a->layout, &d),
                     0);
    expect_pass(p, c);

    /* Column-major, gapped, offset: refused with the layout's text. */
    assert_int_equal(td_layout_parse("S[(2, 2) : (1, 2)]", &a->layout, &d),
                     0);
    strcpy(a->layout_text, "S[(2, 2) : (1, 2)]");
    expect_fail(p, c, "layout of A_local is not row-major storage "
                      "(S[(2, 2) : (1, 2)]); this path indexes its elements "
                      "in row-major order");
    assert_int_equal(td_layout_parse("S[4 : 2]", &a->layout, &d), 0);
    strcpy(a->layout_text, "S[4 : 2]");
    expect_fail(p, c, "layout of A_local is not row-major storage "
                      "(S[4 : 2]); this path indexes its elements in "
                      "row-major order");
    a->has_layout = false;
    td_buffer *b = &c->buffers[c->dst.buffer];
    b->has_layout = true;
    assert_int_equal(td_layout_parse("S[1 : 1] + 3", &b->layout, &d), 0);
    strcpy(b->layout_text, "S[1 : 1] + 3");
    expect_fail(p, c, "layout of B_local is not row-major storage "
                      "(S[1 : 1] + 3); this path indexes its elements in "
                      "row-major order");
    b->has_layout = false;

    /* In place: dst A[0:1] inside src A[0:4] is refused; A[3:4] from
     * A[0:3] does not overlap and passes. */
    fx_slice(c, &c->dst, c->src.buffer, (int64_t)0, (int64_t)1);
    expect_fail(p, c, "dst and src regions of A_local overlap; an in-place "
                      "reduction would overwrite its input before reading "
                      "it");
    fx_slice(c, &c->dst, c->src.buffer, (int64_t)3, (int64_t)4);
    fx_slice(c, &c->src, c->src.buffer, (int64_t)0, (int64_t)3);
    expect_pass(p, c);
    free(c);
}

static void test_local_valid_scopes(void **state)
{
    (void)state;
    const td_pred_desc *p = local_valid();
    td_call *c = fx_seed("sum");
    expect_pass(p, c);
    strcpy(c->buffers[1].scope, "shared");
    expect_fail(p, c, "expected local scope and CUDA target");
    strcpy(c->buffers[1].scope, "local");
    strcpy(c->buffers[0].scope, "local.fragment");
    expect_fail(p, c, "expected local scope and CUDA target");
    strcpy(c->buffers[0].scope, "local");
    strcpy(c->target, "trn");
    expect_fail(p, c, "expected local scope and CUDA target");
    strcpy(c->target, "cuda");
    c->buffers[1].dtype = TD_F16;
    expect_fail(p, c, "dtype mismatch: src=float32 dst=float16");
    c->buffers[1].dtype = TD_F32;

    c->scope = TD_SCOPE_WARP;
    expect_fail(p, c, "layouts required for view-based local reduction");
    c->scope = TD_SCOPE_WARPGROUP;
    expect_fail(p, c, "layouts required for view-based local reduction");
    c->scope = TD_SCOPE_CTA;
    expect_fail(p, c, "unsupported exec_scope cta for local reduction");
    c->scope = TD_SCOPE_CLUSTER;
    expect_fail(p, c, "unsupported exec_scope cluster for local reduction");
    free(c);
}

static void test_local_valid_shapes(void **state)
{
    (void)state;
    const td_pred_desc *p = local_valid();
    td_call *c = fx_call("sum", "cuda", TD_SCOPE_THREAD);
    int a = fx_buf(c, "A", "local", TD_F32, 2, (int64_t)4, (int64_t)8);
    int b = fx_buf(c, "B", "local", TD_F32, 1, (int64_t)4);
    fx_full(c, &c->src, a);
    fx_full(c, &c->dst, b);
    expect_pass(p, c);
    fx_axes(c, 1, 3);
    expect_fail(p, c, "reduce axis 3 out of range for ndim=2");
    fx_axes(c, 1, 0);
    expect_fail(p, c, "dst size 4 != expected spatial size 8");
    fx_axes(c, 2, 1, -1); /* duplicates collapse */
    expect_pass(p, c);
    /* The dst region must hold one element per spatial position. */
    fx_slice(c, &c->dst, b, (int64_t)0, (int64_t)3);
    expect_fail(p, c, "dst size 3 != expected spatial size 4");
    /* Regions: A[1:3, 2:6] into B[1:3]. */
    fx_slice(c, &c->src, a, (int64_t)1, (int64_t)3, (int64_t)2, (int64_t)6);
    fx_slice(c, &c->dst, b, (int64_t)1, (int64_t)3);
    expect_pass(p, c);
    /* All axes reduced: one output element. */
    fx_axes(c, 2, 0, 1);
    expect_fail(p, c, "dst size 2 != expected spatial size 1");
    fx_slice(c, &c->dst, b, (int64_t)3, (int64_t)4);
    expect_pass(p, c);
    free(c);
}

static void test_malformed(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    c->dst.buffer = 7;
    expect_fail(local_valid(), c,
                "malformed call: dst region does not name a buffer");
    expect_fail(generic("local_scope"), c,
                "malformed call: dst region does not name a buffer");
    c->dst.buffer = 1;
    c->src.ndim = 3; /* disagrees with the buffer */
    expect_fail(&td__variant_shared.preds[0], c,
                "malformed call: src region does not name a buffer");
    free(c);
}

/* ---- shared_valid ------------------------------------------------------ */

static void test_shared_valid(void **state)
{
    (void)state;
    assert_int_equal(td__variant_shared.npreds, 1);
    const td_pred_desc *p = &td__variant_shared.preds[0];
    assert_string_equal(p->name, "shared_valid");
    td_call *c = fx_call("sum", "cuda", TD_SCOPE_CTA);
    c->launch[TD_LAUNCH_TX].extent = 128;
    int a = fx_buf(c, "A", "shared", TD_F32, 2, (int64_t)4, (int64_t)8);
    int b = fx_buf(c, "B", "shared.dyn", TD_F32, 1, (int64_t)4);
    fx_full(c, &c->src, a);
    fx_full(c, &c->dst, b);
    expect_pass(p, c);
    c->scope = TD_SCOPE_THREAD;
    expect_pass(p, c);
    c->scope = TD_SCOPE_CLUSTER;
    expect_fail(p, c, "unsupported exec_scope cluster for shared reduction");
    c->scope = TD_SCOPE_WARP;
    strcpy(c->buffers[a].scope, "local");
    expect_fail(p, c, "expected shared scope for both src and dst");
    strcpy(c->buffers[a].scope, "shared");
    c->buffers[b].dtype = TD_BF16;
    expect_fail(p, c, "dtype mismatch: src=float32 dst=bfloat16");
    c->buffers[b].dtype = TD_F32;
    c->launch[TD_LAUNCH_TX].present = false;
    expect_fail(p, c, "no threadIdx.x in the call's launch (add `launch: {threadIdx.x: N}`)");
    c->launch[TD_LAUNCH_TX].present = true;
    c->launch[TD_LAUNCH_TZ].present = true;
    expect_fail(p, c, "multi-dimensional thread binding not supported for "
                      "shared reduction");
    c->launch[TD_LAUNCH_TZ].present = false;
    fx_axes(c, 1, 2);
    expect_fail(p, c, "reduce axis 2 out of range for ndim=2");
    fx_axes(c, 1, 0);
    expect_fail(p, c, "dst size 4 != expected spatial size 8");
    free(c);
}

/* ---- the default rules ------------------------------------------------ */

static void expect_pred(const td_explain_row *row, size_t i, const char *name,
                        const char *reason)
{
    assert_true(i < row->npreds);
    assert_string_equal(row->preds[i].name, name);
    if (reason == NULL) {
        if (!row->preds[i].ok)
            fail_msg("%s failed: %s", name, row->preds[i].reason);
    } else {
        assert_false(row->preds[i].ok);
        assert_string_equal(row->preds[i].reason, reason);
    }
}

/* The seed at cta scope: every built-in candidate rejects it, each
 * predicate with upstream's reason (reference §1.5). */
static void test_default_rules_cta(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    td_diag diag;
    td_diag_clear(&diag);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &diag), 0);
    td_call *c = fx_seed("sum");
    c->scope = TD_SCOPE_CTA;
    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, c, &ex, &diag), 0);
    assert_null(td_explain_selected(ex));
    assert_int_equal(td_explain_nrows(ex), 4);

    const td_explain_row *row = td_explain_get(ex, 0);
    assert_string_equal(row->variant, "packed_add_sum");
    assert_int_equal(row->npreds, 7);
    expect_pred(row, 0, "exec_scope", "unsupported exec_scope cta");
    expect_pred(row, 1, "local_scope", NULL);
    expect_pred(row, 2, "dst_len", NULL);
    expect_pred(row, 3, "src_ndim", NULL);
    expect_pred(row, 4, "dtype", NULL);
    expect_pred(row, 5, "sm_version", "sm_version 90 < 100");
    expect_pred(row, 6, "reduction_len", "reduction_len 4 < 8");

    row = td_explain_get(ex, 1);
    assert_string_equal(row->variant, "shared_rows");
    expect_pred(row, 0, "storage_scope",
                "storage scope mismatch: dst local, src local; "
                "expected [shared*]");
    expect_pred(row, 1, "exec_scope", NULL);
    expect_pred(row, 2, "shared_rows_valid",
                "expected shared scope for both src and dst");

    row = td_explain_get(ex, 2);
    assert_string_equal(row->variant, "local");
    expect_pred(row, 0, "storage_scope", NULL);
    expect_pred(row, 1, "local_valid",
                "unsupported exec_scope cta for local reduction");

    row = td_explain_get(ex, 3);
    assert_string_equal(row->variant, "shared");
    expect_pred(row, 0, "storage_scope",
                "storage scope mismatch: dst local, src local; "
                "expected [shared*]");
    expect_pred(row, 1, "shared_valid",
                "expected shared scope for both src and dst");
    td_explain_free(ex);
    td_registry_free(reg);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_storage_scope),
        cmocka_unit_test(test_storage_scope_required),
        cmocka_unit_test(test_exec_scope),
        cmocka_unit_test(test_dst_len),
        cmocka_unit_test(test_src_ndim),
        cmocka_unit_test(test_dtype),
        cmocka_unit_test(test_sm_version),
        cmocka_unit_test(test_reduction_len),
        cmocka_unit_test(test_local_scope),
        cmocka_unit_test(test_local_valid_scopes),
        cmocka_unit_test(test_local_valid_thread_storage),
        cmocka_unit_test(test_local_valid_shapes),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_shared_valid),
        cmocka_unit_test(test_default_rules_cta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
