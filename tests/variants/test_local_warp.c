/*
 * Unit tests of the `local` variant at warp and warpgroup scope (issue 4):
 * calls written as call files (parsed by the real loader), local_valid's
 * exact reasons, and the emitted shuffle / view code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "registry_internal.h"
#include "variants.h"

static const td_op_desc op_sum = {.name = "sum", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM};
static const td_op_desc op_max = {.name = "max", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MAX};

/* A call file: header, then the A and B buffers and the tail. */
static td_call *load(const char *scope, const char *a, const char *b,
                     const char *tail)
{
    char text[2048];
    snprintf(text, sizeof text,
             "op: sum\ntarget: cuda\narch: sm_90a\nscope: %s\n"
             "launch: {threadIdx.x: 128}\nbuffers:\n  A: %s\n  B: %s\n%s\n",
             scope, a, b, tail);
    td_call *c = NULL;
    td_diag diag;
    memset(&diag, 0, sizeof diag);
    int rc = td_call_parse("t.yaml", text, strlen(text), &c, &diag);
    if (rc != 0)
        fail_msg("call does not load: %s\n%s", diag.msg, text);
    return c;
}

static bool valid(const td_call *c, char *reason)
{
    td_reason why;
    memset(&why, 0, sizeof why);
    bool ok = td__variant_local.preds[0].fn(c, NULL, NULL, &why);
    strcpy(reason, why.text);
    return ok;
}

static void expect_pass(const td_call *c)
{
    char r[TD_REASON_MAX];
    if (!valid(c, r))
        fail_msg("local_valid rejected: %s", r);
}

static void expect_fail(const td_call *c, const char *reason)
{
    char r[TD_REASON_MAX];
    if (valid(c, r))
        fail_msg("local_valid accepted; expected \"%s\"", reason);
    assert_string_equal(r, reason);
    /* The emitter declines with the same reason. */
    td_ir *ir = td_ir_new();
    td_reason why;
    memset(&why, 0, sizeof why);
    assert_int_equal(td__impl_emit(&td__variant_local, c, &op_sum, ir, &why),
                     TD_EDECLINED);
    assert_string_equal(why.text, reason);
    td_ir_free(ir);
}

typedef struct out {
    char *cuda;
    char *prelude;
    char *tirx;
} out;

static out emit(const td_call *c, const td_op_desc *op)
{
    td_ir *ir = td_ir_new();
    assert_non_null(ir);
    td_reason why;
    memset(&why, 0, sizeof why);
    int rc = td__impl_emit(&td__variant_local, c, op, ir, &why);
    if (rc != 0)
        fail_msg("emitter returned %d: %s", rc, why.text);
    out o = {NULL, NULL, NULL};
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &o.cuda, &o.prelude), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &o.tirx, NULL), 0);
    td_ir_free(ir);
    return o;
}

static void out_free(out *o)
{
    td_free(o->cuda);
    td_free(o->prelude);
    td_free(o->tirx);
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

/* Where needle a appears before needle b. */
static void before(const char *text, const char *a, const char *b)
{
    const char *pa = strstr(text, a), *pb = strstr(text, b);
    if (pa == NULL || pb == NULL || pa >= pb)
        fail_msg("expected\n  %s\nbefore\n  %s\nin:\n%s", a, b, text);
}

#define LANE32 "{scope: local, dtype: float32, shape: [32], layout: \"S[32 : 1@laneid]\"}"
#define REP32 "{scope: local, dtype: float32, shape: [1], layout: \"S[1 : 1] + R[32 : 1@laneid]\"}"
#define ACC "{scope: local, dtype: float32, shape: [16, 128], layout: \"S[(2, 8, 16, 4, 2) : (2, 4@laneid, 4, 1@laneid, 1)]\"}"
#define RED "{scope: local, dtype: float32, shape: [16, 4], layout: \"S[(2, 32) : (1, 1@laneid)]\"}"
#define ROWS "{scope: local, dtype: float32, shape: [32, 64], layout: \"S[(32, 64) : (1@laneid, 1)]\"}"
#define ROW1 "{scope: local, dtype: float32, shape: [32, 1], layout: \"S[(32, 1) : (1@laneid, 1)]\"}"

/* ---- path B: shard -> replica shuffle ---------------------------------- */

static void test_shuffle_one(void **state)
{
    (void)state;
    td_call *c = load("warp", LANE32, REP32, "dst: B\nsrc: A");
    expect_pass(c);
    out o = emit(c, &op_sum);
    has(o.cuda, "B_ptr[0] = A_ptr[0];\n"
                "B_ptr[0] = tvm_builtin_cuda_warp_reduce_sum_32(B_ptr[0]);\n");
    /* One helper, the full mask, XOR steps 16 .. 1. */
    has(o.prelude, "tvm_builtin_cuda_warp_reduce_sum_32(T val)");
    has(o.prelude, "for (int mask = 16; mask >= 1; mask >>= 1)");
    has(o.prelude, "__shfl_xor_sync(0xFFFFFFFFu, val, mask)");
    has(o.tirx, "B[0] = T.cuda.warp_reduce(B[0], \"sum\", 32)");
    lacks(o.cuda, "old");
    out_free(&o);
    td_call_free(c);
}

static void test_shuffle_accum(void **state)
{
    (void)state;
    td_call *c = load("warp", LANE32, REP32,
                      "dst: B\nsrc: A\naccum: true");
    out o = emit(c, &op_max);
    /* Upstream drops accum here; the old dst is saved and folded back. */
    before(o.cuda, "float old = B_ptr[0];", "B_ptr[0] = A_ptr[0];");
    before(o.cuda, "tvm_builtin_cuda_warp_reduce_max_32(B_ptr[0]);",
           "B_ptr[0] = fmaxf(B_ptr[0], old);");
    out_free(&o);
    td_call_free(c);
}

static void test_shuffle_four_and_gapped(void **state)
{
    (void)state;
    td_call *c = load(
        "warp",
        "{scope: local, dtype: float32, shape: [32, 4], "
        "layout: \"S[(32, 4) : (1@laneid, 1)]\"}",
        "{scope: local, dtype: float32, shape: [4], "
        "layout: \"S[4 : 1] + R[32 : 1@laneid]\"}",
        "dst: B\nsrc: A\naxes: [0]");
    out o = emit(c, &op_sum);
    has(o.cuda, "for (int k = 0; k < 4; ++k) {\n"
                "  B_ptr[k] = A_ptr[k];\n");
    out_free(&o);
    td_call_free(c);

    /* Logical slots 0..3 live in registers 0, 4, 2, 6. */
    c = load("warp",
             "{scope: local, dtype: float32, shape: [32, 4], "
             "layout: \"S[(32, 2, 2) : (1@laneid, 2, 4)]\"}",
             "{scope: local, dtype: float32, shape: [4], "
             "layout: \"S[(2, 2) : (2, 4)] + R[32 : 1@laneid]\"}",
             "dst: B\nsrc: A\naxes: [0]");
    o = emit(c, &op_sum);
    has(o.cuda, "B_ptr[k / 2 * 2 + k % 2 * 4] = A_ptr[k / 2 * 2 + k % 2 * 4];");
    out_free(&o);
    td_call_free(c);
}

static void test_shuffle_partial_widths(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b, *fn;
    } cases[] = {
        {"{scope: local, dtype: float32, shape: [4, 8], "
         "layout: \"S[(4, 8) : (8@laneid, 1@laneid)]\"}",
         "{scope: local, dtype: float32, shape: [4], "
         "layout: \"S[4 : 8@laneid] + R[8 : 1@laneid]\"}",
         "tvm_builtin_cuda_warp_reduce_sum_8(B_ptr[0])"},
        {"{scope: local, dtype: float32, shape: [8, 4], "
         "layout: \"S[(8, 4) : (4@laneid, 1@laneid)]\"}",
         "{scope: local, dtype: float32, shape: [8], "
         "layout: \"S[8 : 4@laneid] + R[4 : 1@laneid]\"}",
         "tvm_builtin_cuda_warp_reduce_sum_4(B_ptr[0])"},
        {"{scope: local, dtype: float32, shape: [16, 2], "
         "layout: \"S[(16, 2) : (2@laneid, 1@laneid)]\"}",
         "{scope: local, dtype: float32, shape: [16], "
         "layout: \"S[16 : 2@laneid] + R[2 : 1@laneid]\"}",
         "tvm_builtin_cuda_warp_reduce_sum_2(B_ptr[0])"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        td_call *c = load("warp", cases[i].a, cases[i].b, "dst: B\nsrc: A");
        out o = emit(c, &op_sum);
        has(o.cuda, cases[i].fn);
        out_free(&o);
        td_call_free(c);
    }
}

static void test_shuffle_rejections(void **state)
{
    (void)state;
    /* Upstream's form of the multi-element case: (128,) reduced over its
     * only axis means one sum, not four. */
    td_call *c = load("warp",
                      "{scope: local, dtype: float32, shape: [128], "
                      "layout: \"S[(32, 4) : (1@laneid, 1)]\"}",
                      "{scope: local, dtype: float32, shape: [4], "
                      "layout: \"S[4 : 1] + R[32 : 1@laneid]\"}",
                      "dst: B\nsrc: A");
    expect_fail(c, "shuffle reduction combines 32 lanes, the reduce axes "
                   "128 elements");
    td_call_free(c);

    /* A region: the shuffle uses every register of every lane. */
    c = load("warp", LANE32, REP32, "dst: B\nsrc: A[0:16]");
    expect_fail(c, "shuffle reduction needs whole-buffer regions");
    td_call_free(c);

    /* Lanes reduced over the kept axis. */
    c = load("warp",
             "{scope: local, dtype: float32, shape: [4, 8], "
             "layout: \"S[(4, 8) : (8@laneid, 1@laneid)]\"}",
             "{scope: local, dtype: float32, shape: [4], "
             "layout: \"S[4 : 8@laneid] + R[8 : 1@laneid]\"}",
             "dst: B\nsrc: A\naxes: [0]");
    expect_fail(c, "shuffle reduction: dst shape does not match the spatial "
                   "dims of src");
    td_call_free(c);

    /* Same lanes, but dst shaped like the reduction over the rows. */
    c = load("warp",
             "{scope: local, dtype: float32, shape: [4, 8], "
             "layout: \"S[(4, 8) : (8@laneid, 1@laneid)]\"}",
             "{scope: local, dtype: float32, shape: [8], "
             "layout: \"S[8 : 4@laneid] + R[4 : 1@laneid]\"}",
             "dst: B\nsrc: A\naxes: [0]");
    expect_fail(c, "shuffle reduction: the lanes it combines do not match "
                   "the reduce axes");
    td_call_free(c);

    /* In place with accum would fold the source into itself. */
    c = load("warp", LANE32, REP32, "dst: A\nsrc: A\naccum: true");
    char r[TD_REASON_MAX];
    assert_false(valid(c, r));
    td_call_free(c);
}

/* ---- path C: the view path --------------------------------------------- */

static void test_view_basic(void **state)
{
    (void)state;
    td_call *c = load("warp", ROWS, ROW1, "dst: B\nsrc: A");
    out o = emit(c, &op_sum);
    has(o.cuda, "B_ptr[0] = 0.000000e+00f;\n"
                "for (int red = 0; red < 64; ++red) {\n"
                "  B_ptr[0] = B_ptr[0] + A_ptr[red];\n");
    lacks(o.cuda, "__shfl");
    out_free(&o);
    td_call_free(c);

    /* accum without shuffles: no identity, accumulate into dst. */
    c = load("warp", ROWS, ROW1, "dst: B\nsrc: A\naccum: true");
    o = emit(c, &op_sum);
    lacks(o.cuda, "0.000000e+00f");
    lacks(o.cuda, "old");
    out_free(&o);
    td_call_free(c);

    /* The slice [:, 16:32]: local start 16, 16 terms. */
    c = load("warp", ROWS, ROW1, "dst: B\nsrc: \"A[0:32, 16:32]\"");
    o = emit(c, &op_sum);
    has(o.cuda, "for (int red = 0; red < 16; ++red)");
    has(o.cuda, "A_ptr[red + 16]");
    out_free(&o);
    td_call_free(c);
}

static void test_view_4x8(void **state)
{
    (void)state;
    const char *a = "{scope: local, dtype: float32, shape: [32, 4, 8], "
                    "layout: \"S[(32, 4, 8) : (1@laneid, 8, 1)]\"}";
    td_call *c = load("warp", a,
                      "{scope: local, dtype: float32, shape: [32, 1, 8], "
                      "layout: \"S[(32, 1, 8) : (1@laneid, 8, 1)]\"}",
                      "dst: B\nsrc: A\naxes: [1]");
    out o = emit(c, &op_sum);
    has(o.cuda, "for (int spa = 0; spa < 8; ++spa)");
    has(o.cuda, "for (int red = 0; red < 4; ++red)");
    has(o.cuda, "B_ptr[spa] = B_ptr[spa] + A_ptr[red * 8 + spa];");
    out_free(&o);
    td_call_free(c);

    c = load("warp", a,
             "{scope: local, dtype: float32, shape: [32, 4, 1], "
             "layout: \"S[(32, 4, 1) : (1@laneid, 1, 1)]\"}",
             "dst: B\nsrc: A\naxes: [-1]");
    o = emit(c, &op_sum);
    has(o.cuda, "B_ptr[spa] = B_ptr[spa] + A_ptr[spa * 8 + red];");
    out_free(&o);
    td_call_free(c);

    c = load("warp", a,
             "{scope: local, dtype: float32, shape: [32, 1, 1], "
             "layout: \"S[(32, 1, 1) : (1@laneid, 1, 1)]\"}",
             "dst: B\nsrc: A\naxes: [1, 2]");
    o = emit(c, &op_sum);
    has(o.cuda, "for (int red = 0; red < 32; ++red)");
    out_free(&o);
    td_call_free(c);
}

static void test_view_wgmma(void **state)
{
    (void)state;
    td_call *c = load("warp", ACC, RED,
                      "dst: B\nsrc: A\nconfig: {thread_reduce: true}");
    out o = emit(c, &op_sum);
    has(o.cuda, "for (int spa = 0; spa < 2; ++spa)");
    has(o.cuda, "for (int red = 0; red < 32; ++red)");
    has(o.cuda, "A_ptr[spa * 2 + red / 2 * 4 + red % 2]");
    has(o.cuda, "unsigned int mask = __activemask();");
    before(o.cuda, "__shfl_xor_sync(mask, B_ptr[spa], 1, 32)",
           "__shfl_xor_sync(mask, B_ptr[spa], 2, 32)");
    lacks(o.cuda, ", 4, 32)");
    lacks(o.cuda, "old");
    has(o.tirx, "T.tvm_warp_shuffle_xor(mask, B[spa], 1, 32, 32)");
    out_free(&o);
    td_call_free(c);

    /* accum with shuffles: save, start from the identity, combine last. */
    c = load("warp", ACC, RED,
             "dst: B\nsrc: A\naccum: true\nconfig: {thread_reduce: true}");
    o = emit(c, &op_sum);
    before(o.cuda, "float old = B_ptr[spa];", "B_ptr[spa] = 0.000000e+00f;");
    before(o.cuda, "__shfl_xor_sync(mask, B_ptr[spa], 2, 32)",
           "B_ptr[spa] = B_ptr[spa] + old;");
    out_free(&o);
    td_call_free(c);

    /* Without thread_reduce: per-lane partials, no shuffle. */
    c = load("warp", ACC, RED, "dst: B\nsrc: A");
    o = emit(c, &op_sum);
    lacks(o.cuda, "__shfl");
    out_free(&o);
    td_call_free(c);
}

static void test_view_in_place(void **state)
{
    (void)state;
    /* Only the lanes are reduced: no local loop, just the shuffles. */
    td_call *c = load("warp", ACC, RED,
                      "dst: B\nsrc: B\nconfig: {thread_reduce: true}");
    out o = emit(c, &op_sum);
    lacks(o.cuda, "red");
    has(o.cuda, "B_ptr[spa] = B_ptr[spa] + __shfl_xor_sync(mask, B_ptr[spa], "
                "1, 32);");
    out_free(&o);
    td_call_free(c);

    c = load("warp", ACC, RED, "dst: B\nsrc: B");
    o = emit(c, &op_sum);
    assert_string_equal(o.cuda, "// in place, no thread_reduce: nothing to do\n");
    out_free(&o);
    td_call_free(c);

    c = load("warp", ACC, RED,
             "dst: B\nsrc: B\naccum: true\nconfig: {thread_reduce: true}");
    expect_fail(c, "accum with an in-place reduction is not supported (dst "
                   "is the source)");
    td_call_free(c);
}

static void test_warpgroup(void **state)
{
    (void)state;
    const char *a = "{scope: local, dtype: float32, shape: [128, 16], "
                    "layout: \"S[(128, 16) : (1@tid_in_wg, 1)]\"}";
    const char *b = "{scope: local, dtype: float32, shape: [128, 1], "
                    "layout: \"S[(128, 1) : (1@tid_in_wg, 1)]\"}";
    td_call *c = load("warpgroup", a, b, "dst: B\nsrc: A");
    out o = emit(c, &op_sum);
    has(o.cuda, "for (int red = 0; red < 16; ++red) {\n"
                "  B_ptr[0] = B_ptr[0] + A_ptr[red];\n");
    out_free(&o);
    td_call_free(c);

    c = load("warpgroup", a, b, "dst: B\nsrc: A\nconfig: {thread_reduce: true}");
    expect_fail(c, "thread_reduce=True is only supported in warp scope; "
                   "warpgroup local reduction is thread-local only");
    td_call_free(c);

    c = load("warpgroup", a,
             "{scope: local, dtype: float32, shape: [128, 1], "
             "layout: \"S[(128, 1) : (1@tid_in_wg, 1)] + R[2 : 1@wgid]\"}",
             "dst: B\nsrc: A");
    expect_fail(c, "thread axis in replica for dst");
    td_call_free(c);
}

/* ---- rejections --------------------------------------------------------- */

static void test_rejections(void **state)
{
    (void)state;
    td_call *c = load("warp", "{scope: local, dtype: float32, shape: [32]}",
                      REP32, "dst: B\nsrc: A");
    expect_fail(c, "layouts required for view-based local reduction");
    td_call_free(c);

    c = load("warp", LANE32, "{scope: local, dtype: float32, shape: [1]}",
             "dst: B\nsrc: A");
    expect_fail(c, "layouts required for view-based local reduction");
    td_call_free(c);

    c = load("warp", ROWS, ROW1, "dst: B\nsrc: A");
    c->buffers[0].layout.swizzle = true;
    expect_fail(c, "swizzle layout unsupported for local reduction");
    td_call_free(c);

    /* Mismatched spatial dims. */
    c = load("warp", ROWS,
             "{scope: local, dtype: float32, shape: [32, 2], "
             "layout: \"S[(32, 2) : (1@laneid, 1)]\"}",
             "dst: B\nsrc: A");
    expect_fail(c, "mismatch dst/src layout for reduction");
    td_call_free(c);

    /* More dst dims than expected: a rejection, not IndexError. */
    c = load("warp", ROWS,
             "{scope: local, dtype: float32, shape: [32, 4], "
             "layout: \"S[(32, 4) : (1@laneid, 1)]\"}",
             "dst: B\nsrc: A\naxes: [-1]");
    expect_fail(c, "mismatch dst/src layout for reduction");
    td_call_free(c);

    c = load("warp",
             "{scope: local, dtype: float32, shape: [32, 64], "
             "layout: \"S[(32, 64) : (0@laneid, 1)]\"}",
             ROW1, "dst: B\nsrc: A");
    expect_fail(c, "thread dim with zero stride in src");
    td_call_free(c);

    /* A region that cuts through the lanes. */
    c = load("warp", ROWS, ROW1, "dst: B\nsrc: \"A[0:16, 0:64]\"");
    expect_fail(c, "get_local_region failed for src");
    td_call_free(c);

    /* The loader checks axes too; a hand-made call may not. */
    c = load("warp", ROWS, ROW1, "dst: B\nsrc: A");
    c->axes[0] = 2;
    expect_fail(c, "reduce axis 2 out of range for ndim=2");
    td_call_free(c);

    /* Same extents, different lanes. */
    c = load("warp", ROWS,
             "{scope: local, dtype: float32, shape: [32, 1], "
             "layout: \"S[(4, 8, 1) : (1@laneid, 4@laneid, 1)]\"}",
             "dst: B\nsrc: A");
    expect_fail(c, "src and dst map spatial dim 0 to different threads");
    td_call_free(c);

    c = load("warp", "{scope: local, dtype: float32, shape: [32, 4, 8], "
                     "layout: \"S[(32, 4, 8) : (1@laneid, 8, 1)]\"}",
             "{scope: local, dtype: float32, shape: [32], "
             "layout: \"S[32 : 1@laneid]\"}",
             "dst: B\nsrc: A\naxes: [-1]");
    expect_fail(c, "dst rank 1 is neither the src rank 3 nor its 2 spatial "
                   "dims");
    td_call_free(c);

    /* thread_reduce over a thread axis other than laneid. */
    c = load("warp",
             "{scope: local, dtype: float32, shape: [32, 4], "
             "layout: \"S[(32, 4) : (1@tx, 1)]\"}",
             "{scope: local, dtype: float32, shape: [32, 4], "
             "layout: \"S[(32, 4) : (1@tx, 1)]\"}",
             "dst: B\nsrc: A\naxes: [0]\nconfig: {thread_reduce: true}");
    expect_fail(c, "thread_reduce needs reduced dims spread over laneid "
                   "only, found tx");
    td_call_free(c);
}

/* The default rules pick `local` for the warp and warpgroup calls. */
static void test_dispatch(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag diag;
    memset(&diag, 0, sizeof diag);
    assert_int_equal(td_registry_load_default_rules(reg, &diag), 0);
    td_call *c = load("warp", ACC, RED,
                      "dst: B\nsrc: A\nconfig: {thread_reduce: true}");
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    if (td_dispatch(reg, c, &res, &diag) != 0)
        fail_msg("dispatch failed: %s", diag.msg);
    assert_string_equal(res.variant, "local");
    td_ir_free(res.ir);
    td_call_free(c);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shuffle_one),
        cmocka_unit_test(test_shuffle_accum),
        cmocka_unit_test(test_shuffle_four_and_gapped),
        cmocka_unit_test(test_shuffle_partial_widths),
        cmocka_unit_test(test_shuffle_rejections),
        cmocka_unit_test(test_view_basic),
        cmocka_unit_test(test_view_4x8),
        cmocka_unit_test(test_view_wgmma),
        cmocka_unit_test(test_view_in_place),
        cmocka_unit_test(test_warpgroup),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
