/*
 * Unit tests of the `local` variant's emitter (thread-wise path) and of the
 * declining emitters of `shared` and the packed variants: hand-built calls
 * in, printed IR (CUDA and TIRx) out, key lines asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "tiledispatch.h"
#include "registry_internal.h"
#include "variants.h"

static const td_op_desc op_sum = {.name = "sum", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM};
static const td_op_desc op_max = {.name = "max", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MAX};
static const td_op_desc op_min = {.name = "min", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MIN};

typedef struct out {
    char *cuda;
    char *tirx;
} out;

/* Emits c with impl and prints both languages; fails the test unless the
 * emitter accepts. */
static out emit_ok(const td_impl_desc *impl, const td_call *c,
                   const td_op_desc *op)
{
    td_ir *ir = td_ir_new();
    assert_non_null(ir);
    td_reason why;
    memset(&why, 0, sizeof why);
    int rc = td__impl_emit(impl, c, op, ir, &why);
    if (rc != 0)
        fail_msg("%s emitter returned %d: %s", impl->name, rc, why.text);
    out o = {NULL, NULL};
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &o.cuda, NULL), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &o.tirx, NULL), 0);
    td_ir_free(ir);
    return o;
}

static void out_free(out *o)
{
    td_free(o->cuda);
    td_free(o->tirx);
}

/* Asserts that the emitter declines c with exactly `reason`. */
static void emit_declines(const td_impl_desc *impl, const td_call *c,
                          const td_op_desc *op, const char *reason)
{
    td_ir *ir = td_ir_new();
    assert_non_null(ir);
    td_reason why;
    memset(&why, 0, sizeof why);
    assert_int_equal(td__impl_emit(impl, c, op, ir, &why), TD_EDECLINED);
    assert_string_equal(why.text, reason);
    td_ir_free(ir);
}

static void has(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("expected\n  %s\nin:\n%s", needle, text);
}

static void lacks(const char *text, const char *needle)
{
    if (strstr(text, needle) != NULL)
        fail_msg("did not expect\n  %s\nin:\n%s", needle, text);
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p != NULL;
         p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---- the descriptors --------------------------------------------------- */

static void test_descriptors(void **state)
{
    (void)state;
    assert_string_equal(td__variant_local.name, "local");
    assert_non_null(td__variant_local.emit);
    assert_string_equal(td__variant_shared.name, "shared");
    assert_string_equal(td__variant_packed_add_sum.name, "packed_add_sum");
    assert_int_equal(td__variant_packed_add_sum.npreds, 0);
    assert_string_equal(td__variant_3input_maxmin.name, "3input_maxmin");
    assert_int_equal(td__variant_3input_maxmin.npreds, 0);
}

/* ---- the seed ---------------------------------------------------------- */

static void test_seed_sum(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    out o = emit_ok(&td__variant_local, c, &op_sum);
    has(o.cuda, "for (int red = 0; red < 4; ++red)");
    has(o.cuda, "B_local_ptr[0] = B_local_ptr[0] + A_local_ptr[red];");
    /* The identity initialises the output once, before the loop. */
    assert_int_equal(count(o.cuda, "B_local_ptr[0] = "), 2);
    assert_true(strstr(o.cuda, "B_local_ptr[0] = ") <
                strstr(o.cuda, "for (int red"));
    /* The extent-1 spatial loop disappears in CUDA, not in TIRx. */
    lacks(o.cuda, "spa");
    has(o.tirx, "spa");
    has(o.tirx, "red");
    has(o.tirx, "B_local[0] = B_local[0] + A_local[red]");
    out_free(&o);
    free(c);
}

static void test_seed_accum(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    c->accum = true;
    out o = emit_ok(&td__variant_local, c, &op_sum);
    /* No identity store: the old value is the starting point. */
    assert_int_equal(count(o.cuda, "B_local_ptr[0] = "), 1);
    has(o.cuda, "B_local_ptr[0] = B_local_ptr[0] + A_local_ptr[red];");
    out_free(&o);
    free(c);
}

static void test_seed_max_min(void **state)
{
    (void)state;
    td_call *c = fx_seed("max");
    out o = emit_ok(&td__variant_local, c, &op_max);
    has(o.cuda, "B_local_ptr[0] = fmaxf(B_local_ptr[0], A_local_ptr[red]);");
    out_free(&o);
    strcpy(c->op, "min");
    o = emit_ok(&td__variant_local, c, &op_min);
    has(o.cuda, "B_local_ptr[0] = fminf(B_local_ptr[0], A_local_ptr[red]);");
    out_free(&o);
    free(c);
}

/* ---- index arithmetic -------------------------------------------------- */

/* (3,4,5) over axes (0,2) to (4,): src index (red // 5, spa, red % 5). */
static void test_3d_axes_0_2(void **state)
{
    (void)state;
    td_call *c = fx_call("sum", "cuda", TD_SCOPE_THREAD);
    int a = fx_buf(c, "A", "local", TD_F32, 3, (int64_t)3, (int64_t)4,
                   (int64_t)5);
    int b = fx_buf(c, "B", "local", TD_F32, 1, (int64_t)4);
    fx_full(c, &c->src, a);
    fx_full(c, &c->dst, b);
    fx_axes(c, 2, 0, 2);
    out o = emit_ok(&td__variant_local, c, &op_sum);
    has(o.cuda, "for (int spa = 0; spa < 4; ++spa)");
    has(o.cuda, "for (int red = 0; red < 15; ++red)");
    has(o.tirx, "B[spa] = B[spa] + A[red // 5, spa, red % 5]");
    out_free(&o);
    free(c);
}

/* (2,3,4) over -1 to (2,3): dst (spa // 3, spa % 3). */
static void test_3d_last(void **state)
{
    (void)state;
    td_call *c = fx_call("sum", "cuda", TD_SCOPE_THREAD);
    int a = fx_buf(c, "A", "local", TD_F32, 3, (int64_t)2, (int64_t)3,
                   (int64_t)4);
    int b = fx_buf(c, "B", "local", TD_F32, 2, (int64_t)2, (int64_t)3);
    fx_full(c, &c->src, a);
    fx_full(c, &c->dst, b);
    out o = emit_ok(&td__variant_local, c, &op_sum);
    has(o.cuda, "for (int spa = 0; spa < 6; ++spa)");
    has(o.cuda, "for (int red = 0; red < 4; ++red)");
    has(o.tirx, "B[spa // 3, spa % 3] = B[spa // 3, spa % 3] + "
                "A[spa // 3, spa % 3, red]");
    out_free(&o);
    free(c);
}

/* Regions: A[1:3, 2:6] into B[1:3]; the starts are added. */
static void test_regions(void **state)
{
    (void)state;
    td_call *c = fx_call("sum", "cuda", TD_SCOPE_THREAD);
    int a = fx_buf(c, "A", "local", TD_F32, 2, (int64_t)4, (int64_t)8);
    int b = fx_buf(c, "B", "local", TD_F32, 1, (int64_t)4);
    fx_slice(c, &c->src, a, (int64_t)1, (int64_t)3, (int64_t)2, (int64_t)6);
    fx_slice(c, &c->dst, b, (int64_t)1, (int64_t)3);
    out o = emit_ok(&td__variant_local, c, &op_sum);
    has(o.cuda, "for (int spa = 0; spa < 2; ++spa)");
    has(o.cuda, "for (int red = 0; red < 4; ++red)");
    has(o.tirx, "B[spa + 1] = B[spa + 1] + A[spa + 1, red + 2]");
    out_free(&o);
    free(c);
}

/* All dims reduced into one element of a larger dst buffer. */
static void test_all_axes(void **state)
{
    (void)state;
    td_call *c = fx_call("sum", "cuda", TD_SCOPE_THREAD);
    int a = fx_buf(c, "A", "local", TD_F32, 2, (int64_t)2, (int64_t)3);
    int b = fx_buf(c, "B", "local", TD_F32, 1, (int64_t)4);
    fx_full(c, &c->src, a);
    fx_slice(c, &c->dst, b, (int64_t)2, (int64_t)3);
    fx_axes(c, 2, 0, -1);
    out o = emit_ok(&td__variant_local, c, &op_sum);
    has(o.cuda, "for (int red = 0; red < 6; ++red)");
    has(o.tirx, "B[2] = B[2] + A[red // 3, red % 3]");
    out_free(&o);
    free(c);
}

/* ---- declines ---------------------------------------------------------- */

static void test_local_declines(void **state)
{
    (void)state;
    td_call *c = fx_seed("sum");
    c->scope = TD_SCOPE_WARP;
    emit_declines(&td__variant_local, c, &op_sum,
                  "layouts required for view-based local reduction");
    c->scope = TD_SCOPE_CTA;
    emit_declines(&td__variant_local, c, &op_sum,
                  "unsupported exec_scope cta for local reduction");
    c->scope = TD_SCOPE_THREAD;
    strcpy(c->buffers[0].scope, "shared");
    emit_declines(&td__variant_local, c, &op_sum,
                  "expected local scope and CUDA target");
    strcpy(c->buffers[0].scope, "local");
    fx_axes(c, 1, 1);
    emit_declines(&td__variant_local, c, &op_sum,
                  "reduce axis 1 out of range for ndim=1");
    fx_axes(c, 1, 0);
    c->buffers[1].shape[0] = 2;
    fx_full(c, &c->dst, 1);
    emit_declines(&td__variant_local, c, &op_sum,
                  "dst size 2 != expected spatial size 1");
    fx_full(c, &c->src, 0);
    c->dst.extent[0] = 1;
    c->dst.start[0] = 2; /* past the end of B (2,) */
    emit_declines(&td__variant_local, c, &op_sum,
                  "dst region out of bounds for B_local");
    c->dst.start[0] = 0;
    c->src.buffer = -1;
    emit_declines(&td__variant_local, c, &op_sum,
                  "the call has no source region");
    free(c);
}

/* ---- through the default rules ---------------------------------------- */

static void test_dispatch_default(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    td_diag diag;
    td_diag_clear(&diag);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &diag), 0);
    td_call *c = fx_seed("sum");
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(td_dispatch(reg, c, &res, &diag), 0);
    assert_string_equal(res.variant, "local");
    td_ir_free(res.ir);

    /* sm_100 with 16 elements passes packed_add_sum's gate: it wins, and
     * explain shows local and shared as not tried. */
    c->sm_version = 100;
    strcpy(c->arch, "sm_100a");
    c->buffers[0].shape[0] = 16;
    fx_full(c, &c->src, 0);
    memset(&res, 0, sizeof res);
    assert_int_equal(td_dispatch(reg, c, &res, &diag), 0);
    assert_string_equal(res.variant, "packed_add_sum");
    td_ir_free(res.ir);

    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, c, &ex, &diag), 0);
    const td_explain_row *row = td_explain_get(ex, 0);
    assert_string_equal(row->variant, "packed_add_sum");
    assert_int_equal(row->status, TD_CAND_SELECTED);
    row = td_explain_get(ex, 1);
    assert_string_equal(row->variant, "shared_rows");
    assert_int_equal(row->status, TD_CAND_NOT_TRIED);
    row = td_explain_get(ex, 2);
    assert_string_equal(row->variant, "local");
    assert_int_equal(row->status, TD_CAND_NOT_TRIED);
    td_explain_free(ex);

    /* Forcing local keeps only that candidate. */
    strcpy(c->dispatch, "local");
    memset(&res, 0, sizeof res);
    assert_int_equal(td_dispatch(reg, c, &res, &diag), 0);
    assert_string_equal(res.variant, "local");
    td_ir_free(res.ir);
    td_registry_free(reg);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptors),
        cmocka_unit_test(test_seed_sum),
        cmocka_unit_test(test_seed_accum),
        cmocka_unit_test(test_seed_max_min),
        cmocka_unit_test(test_3d_axes_0_2),
        cmocka_unit_test(test_3d_last),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_all_axes),
        cmocka_unit_test(test_local_declines),
        cmocka_unit_test(test_dispatch_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
