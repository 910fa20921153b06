/*
 * Unit tests of the `shared` variant: the group shuffle tree at cta,
 * warpgroup and warp scope (exact text for upstream's doc example, the key
 * lines elsewhere), the thread-scope path it shares with `local`, the
 * rejections shared_valid adds to upstream's, and dispatch through the
 * default rules with the reasons `explain` shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "emit_check.h"
#include "tiledispatch.h"
#include "reduce_common.h"
#include "variants.h"

/* A shared call: HEADER lines (op, scope, launch) then A (ROWS x COLS
 * float32) -> B (ROWS), last axis, unless the test edits the call. */
static td_call *shared_call(const char *op, const char *scope,
                            const char *launch, int rows, int cols,
                            const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "op: %s\ntarget: cuda\narch: sm_90a\nscope: %s\n"
             "launch: %s\nbuffers:\n"
             "  A: {scope: shared, dtype: float32, shape: [%d, %d]}\n"
             "  B: {scope: shared, dtype: float32, shape: [%d]}\n"
             "dst: B\nsrc: A\naxes: [-1]\n%s",
             op, scope, launch, rows, cols, rows, extra ? extra : "");
    return ec_parse(text);
}

/* ---- the tree ---------------------------------------------------------- */

/* Upstream's doc example: 4x8 -> 4 with 32 threads, gs 8, par 4. */
static void test_doc_example(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "cta", "{threadIdx.x: 32}", 4, 8, NULL);
    ec_out o = ec_emit(&td__variant_shared, c);
    assert_string_equal(
        o.cuda,
        "int tid = (int)threadIdx.x;\n"
        "int group = tid / 8;\n"
        "int lane = tid % 8;\n"
        "int spa = group;\n"
        "float acc = 0.000000e+00f;\n"
        "int red = lane;\n"
        "acc = acc + A_ptr[spa * 8 + red];\n"
        "acc = acc + __shfl_xor_sync(__activemask(), acc, 1, 8);\n"
        "acc = acc + __shfl_xor_sync(__activemask(), acc, 2, 8);\n"
        "acc = acc + __shfl_xor_sync(__activemask(), acc, 4, 8);\n"
        "if (lane == 0) {\n"
        "  B_ptr[spa] = acc;\n"
        "}\n"
        "__syncthreads();\n");
    assert_string_equal(
        o.tirx,
        "tid: T.int32 = threadIdx.x\n"
        "group: T.int32 = tid // 8\n"
        "lane: T.int32 = tid % 8\n"
        "for step in T.serial(1):\n"
        "    spa: T.int32 = step * 4 + group\n"
        "    acc: T.float32 = T.float32(0)\n"
        "    for t in T.serial(1):\n"
        "        red: T.int32 = t * 8 + lane\n"
        "        acc = acc + A[spa, red]\n"
        "    acc = acc + T.tvm_warp_shuffle_xor(T.tvm_warp_activemask(), "
        "acc, 1, 8, 32)\n"
        "    acc = acc + T.tvm_warp_shuffle_xor(T.tvm_warp_activemask(), "
        "acc, 2, 8, 32)\n"
        "    acc = acc + T.tvm_warp_shuffle_xor(T.tvm_warp_activemask(), "
        "acc, 4, 8, 32)\n"
        "    if lane == 0:\n"
        "        B[spa] = acc\n"
        "T.tvm_storage_sync(\"shared\")\n");
    ec_free(&o);
    free(c);
}

/* 128 threads, 16x64: gs 32, par 4, four steps, no guards needed. */
static void test_cta128(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "cta", "{threadIdx.x: 128}", 16, 64,
                             NULL);
    ec_out o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "int group = tid / 32;\n");
    ec_has(o.cuda, "for (int step = 0; step < 4; ++step) {\n"
                   "  int spa = step * 4 + group;\n"
                   "  float acc = 0.000000e+00f;\n"
                   "  for (int t = 0; t < 2; ++t) {\n"
                   "    int red = t * 32 + lane;\n"
                   "    acc = acc + A_ptr[spa * 64 + red];\n");
    assert_int_equal(ec_count(o.cuda, "__shfl_xor_sync"), 5);
    ec_has(o.cuda, "__shfl_xor_sync(__activemask(), acc, 16, 32)");
    /* Masks ascend, as upstream's. */
    assert_true(strstr(o.cuda, "acc, 1, 32)") < strstr(o.cuda, "acc, 16, 32)"));
    ec_lacks(o.cuda, "if (spa");
    ec_lacks(o.cuda, "group <");
    ec_lacks(o.cuda, "red <");
    ec_free(&o);
    free(c);
}

/* The fix: 48 threads and R 64 give gs 32 and one whole group; threads
 * 32..47 must not write.  Upstream let them write partial sums. */
static void test_tail_group(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "cta", "{threadIdx.x: 48}", 5, 64, NULL);
    ec_out o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "for (int step = 0; step < 5; ++step) {\n"
                   "  int spa = step + group;\n"
                   "  if (group < 1) {\n");
    ec_has(o.tirx, "    if group < 1:\n");
    ec_free(&o);
    free(c);

    /* Both guards: 50 threads, R 16 -> gs 16, par 3; S 4 is no multiple
     * of 3. */
    c = shared_call("sum", "cta", "{threadIdx.x: 50}", 4, 16, NULL);
    o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "if (spa < 4 && group < 3) {\n");
    ec_has(o.cuda, "for (int step = 0; step < 2; ++step)");
    ec_free(&o);
    free(c);
}

/* R not a multiple of gs: the gather is guarded, the shuffles are not
 * (every lane of the group must take part). */
static void test_reduction_guard(void **state)
{
    (void)state;
    td_call *c = shared_call("max", "cta", "{threadIdx.x: 64}", 10, 3, NULL);
    ec_out o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "int group = tid / 4;\n");
    ec_has(o.cuda, "if (spa < 10) {\n"
                   "  float acc = -FLT_MAX;\n"
                   "  int red = lane;\n"
                   "  if (red < 3) {\n"
                   "    acc = fmaxf(acc, A_ptr[spa * 3 + red]);\n"
                   "  }\n"
                   "  acc = fmaxf(acc, __shfl_xor_sync(__activemask(), acc, "
                   "1, 4));\n");
    ec_has(o.prelude, "#include <cfloat>");
    ec_free(&o);
    free(c);
}

/* gs is a power of two even when T is not (upstream took min(.., T) and
 * would shuffle across groups of 6). */
static void test_group_size_pow2(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "cta", "{threadIdx.x: 6}", 3, 8, NULL);
    ec_out o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "int group = tid / 4;\n");
    ec_has(o.cuda, "if (group < 1) {\n");
    ec_has(o.cuda, "__shfl_xor_sync(__activemask(), acc, 2, 4)");
    ec_lacks(o.cuda, "acc, 4, 4)");
    ec_free(&o);
    free(c);

    /* R 1: gs 1, each thread its own group, no lane, no shuffle. */
    c = shared_call("min", "cta", "{threadIdx.x: 32}", 40, 1, NULL);
    o = ec_emit(&td__variant_shared, c);
    ec_lacks(o.cuda, "lane");
    ec_lacks(o.cuda, "__shfl");
    ec_has(o.cuda, "int spa = step * 32 + tid;\n"
                   "  if (spa < 40) {\n");
    ec_has(o.cuda, "    B_ptr[spa] = acc;\n");
    ec_free(&o);
    free(c);
}

static void test_warp_warpgroup(void **state)
{
    (void)state;
    td_call *c = shared_call("min", "warp", "{threadIdx.x: 64}", 4, 32, NULL);
    ec_out o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "int tid = (int)threadIdx.x % 32;\n");
    ec_has(o.cuda, "acc = fminf(acc, __shfl_xor_sync(__activemask(), acc, "
                   "16, 32));\n");
    assert_true(strstr(o.cuda, "__syncwarp();\n") != NULL);
    ec_lacks(o.cuda, "__syncthreads");
    ec_lacks(o.cuda, "bar.sync");
    ec_has(o.tirx, "T.tvm_storage_sync(\"warp\")");
    ec_free(&o);
    free(c);

    c = shared_call("max", "warpgroup", "{threadIdx.x: 256}", 8, 128, NULL);
    o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "int tid = (int)threadIdx.x % 128;\n");
    ec_has(o.cuda, "for (int step = 0; step < 2; ++step)");
    /* Two warpgroups in the block: one named barrier each (8 and 9). */
    ec_has(o.cuda, "asm volatile(\"bar.sync %0, %1;\" :: "
                   "\"r\"(8 + (int)threadIdx.x / 128), "
                   "\"r\"(128) : \"memory\");\n");
    ec_has(o.tirx, "T.ptx.bar.sync(T.Cast(\"uint32\", 8 + threadIdx.x // 128), 128)");
    ec_free(&o);
    free(c);

    c = shared_call("sum", "warpgroup", "{threadIdx.x: 128}", 4, 64,
                    "config: {barrier_id: 3}\n");
    o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "\"r\"(3), \"r\"(128)");
    ec_has(o.tirx, "T.ptx.bar.sync(3, 128)");
    ec_free(&o);
    free(c);

    /* A symbolic extent is fine at warp scope: the code needs only 32. */
    c = shared_call("sum", "warp", "{threadIdx.x: n}", 4, 32, NULL);
    o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "% 32");
    ec_free(&o);
    free(c);
}

static void test_accum_dtypes(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "cta", "{threadIdx.x: 64}", 6, 40,
                             "accum: true\n");
    ec_out o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "  if (lane == 0) {\n"
                   "    B_ptr[spa] = B_ptr[spa] + acc;\n");
    ec_has(o.tirx, "B[spa] = B[spa] + acc");
    ec_free(&o);
    free(c);

    c = shared_call("max", "cta", "{threadIdx.x: 64}", 4, 32, NULL);
    c->buffers[0].dtype = c->buffers[1].dtype = TD_F16;
    o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "__half acc = ");
    ec_has(o.cuda, "acc = __hmax(acc, __shfl_xor_sync(__activemask(), acc, "
                   "1, 32));");
    ec_has(o.prelude, "#include <cuda_fp16.h>");
    ec_has(o.tirx, "acc: T.float16 = ");
    ec_free(&o);
    free(c);
}

/* Regions and several reduced axes go through the shared index builders. */
static void test_regions_multiaxis(void **state)
{
    (void)state;
    td_call *c = ec_parse(
        "op: sum\ntarget: cuda\nscope: cta\nlaunch: {threadIdx.x: 64}\n"
        "buffers:\n"
        "  A: {scope: shared, dtype: float32, shape: [8, 10]}\n"
        "  B: {scope: shared.dyn, dtype: float32, shape: [8]}\n"
        "dst: B[2:7]\nsrc: A[1:6, 1:9]\n");
    ec_out o = ec_emit(&td__variant_shared, c);
    ec_has(o.cuda, "if (spa < 5) {");
    ec_has(o.cuda, "acc = acc + A_ptr[(spa + 1) * 10 + (red + 1)];");
    ec_has(o.cuda, "B_ptr[spa + 2] = acc;");
    ec_has(o.tirx, "acc = acc + A[spa + 1, red + 1]");
    ec_free(&o);
    free(c);

    c = ec_parse(
        "op: max\ntarget: cuda\nscope: cta\nlaunch: {threadIdx.x: 128}\n"
        "buffers:\n"
        "  A: {scope: shared, dtype: float32, shape: [8, 16, 2, 22]}\n"
        "  B: {scope: shared, dtype: float32, shape: [8, 16]}\n"
        "dst: B\nsrc: A\naxes: [-2, -1]\n");
    o = ec_emit(&td__variant_shared, c);
    /* R 44: gs 32, two strided passes, the second guarded. */
    ec_has(o.cuda, "for (int step = 0; step < 32; ++step)");
    ec_has(o.cuda, "if (red < 44) {");
    /* The (8, 16) spatial split flattens back to spa * 44. */
    ec_has(o.cuda, "A_ptr[spa * 44 + red / 22 * 22 + red % 22]");
    ec_has(o.cuda, "B_ptr[spa] = acc;");
    ec_has(o.tirx, "A[spa // 16, spa % 16, red // 22, red % 22]");
    ec_free(&o);
    free(c);
}

/* Thread scope emits exactly what the shared thread-wise path emits. */
static void test_thread_scope_shared_code(void **state)
{
    (void)state;
    td_call *c = shared_call("max", "thread", "{threadIdx.x: 1}", 6, 8,
                             "accum: true\n");
    ec_out o = ec_emit(&td__variant_shared, c);
    td_ir *ir = td_ir_new();
    td_reason why;
    memset(&why, 0, sizeof why);
    td__red_shape sh;
    assert_int_equal(td__reduce_check(c, TD_COMBINE_MAX, &sh, &why), 0);
    assert_int_equal(td__emit_thread_wise(c, TD_COMBINE_MAX, &sh, ir), 0);
    char *cuda = NULL, *tirx = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &cuda, NULL), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &tirx, NULL), 0);
    assert_string_equal(o.cuda, cuda);
    assert_string_equal(o.tirx, tirx);
    ec_has(o.cuda, "for (int red = 0; red < 8; ++red)");
    ec_lacks(o.cuda, "sync");
    td_free(cuda);
    td_free(tirx);
    td_ir_free(ir);
    ec_free(&o);
    free(c);
}

/* ---- shared_valid: what it adds to upstream ----------------------------- */

static void expect_valid(const td_call *c, const char *reason)
{
    const td_pred_desc *p = &td__variant_shared.preds[0];
    td_reason why;
    memset(&why, 0, sizeof why);
    bool ok = p->fn(c, NULL, p->user, &why);
    if (reason == NULL) {
        if (!ok)
            fail_msg("shared_valid rejected: %s", why.text);
        return;
    }
    assert_false(ok);
    assert_string_equal(why.text, reason);
    /* The emitter refuses what the predicate refuses, with the same
     * reason. */
    ec_declines(&td__variant_shared, c, ec_op(c), reason);
}

static void test_valid_extents(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "cta", "{threadIdx.x: n}", 4, 8, NULL);
    expect_valid(c, "threadIdx.x extent is symbolic (n); shared reduction "
                    "needs a constant");
    c->scope = TD_SCOPE_WARP;
    expect_valid(c, NULL);
    /* Warpgroup code gives each warpgroup its own barrier id, so it needs
     * the count too. */
    c->scope = TD_SCOPE_WARPGROUP;
    expect_valid(c, "threadIdx.x extent is symbolic (n); shared reduction "
                    "needs a constant");
    c->scope = TD_SCOPE_THREAD;
    expect_valid(c, NULL);

    td_launch_param *tx = &c->launch[TD_LAUNCH_TX];
    /* 1024 threads = 8 warpgroups: ids 8..15 fit, barrier_id 9 does not. */
    tx->symbolic = false;
    tx->extent = 1024;
    c->scope = TD_SCOPE_WARPGROUP;
    expect_valid(c, NULL);
    c->nconfig = 1;
    strcpy(c->config[0].key, "barrier_id");
    c->config[0].kind = TD_VALUE_INT;
    c->config[0].i = 9;
    expect_valid(c, "barrier ids 9..16 for 8 warpgroups exceed 15 (lower "
                    "barrier_id)");
    c->nconfig = 0;
    c->scope = TD_SCOPE_THREAD;
    tx->symbolic = false;
    tx->extent = 48;
    c->scope = TD_SCOPE_WARP;
    expect_valid(c, "threadIdx.x extent 48 is not a multiple of 32 "
                    "(warp-scope shared reduction needs whole warps)");
    c->scope = TD_SCOPE_WARPGROUP;
    tx->extent = 64;
    expect_valid(c, "threadIdx.x extent 64 is not a multiple of 128 "
                    "(warpgroup-scope shared reduction needs whole "
                    "warpgroups)");
    tx->extent = 384;
    expect_valid(c, NULL);
    c->scope = TD_SCOPE_CTA;
    tx->extent = 48;
    expect_valid(c, NULL);
    tx->extent = 1;
    expect_valid(c, NULL);
    tx->extent = 2048;
    expect_valid(c, "threadIdx.x extent 2048 out of range [1, 1024]");
    /* Thread scope never looks at the extent. */
    c->scope = TD_SCOPE_THREAD;
    expect_valid(c, NULL);
    free(c);
}

static void test_valid_barrier_id(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "warpgroup", "{threadIdx.x: 128}", 4, 8,
                             "config: {barrier_id: 16}\n");
    expect_valid(c, "barrier_id 16 out of range [0, 15]");
    c->config[0].i = -1;
    expect_valid(c, "barrier_id -1 out of range [0, 15]");
    c->config[0].i = 0;
    expect_valid(c, NULL);
    c->config[0].i = 15;
    expect_valid(c, NULL);
    free(c);
    c = shared_call("sum", "cta", "{threadIdx.x: 128}", 4, 8,
                    "config: {barrier_id: eight}\n");
    expect_valid(c, "barrier_id must be an integer");
    free(c);
}

/* The checks before the new ones keep upstream's order and wording. */
static void test_valid_upstream_order(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "cta", "{threadIdx.x: n, threadIdx.y: 2}",
                             4, 8, "config: {barrier_id: 99}\n");
    c->axes[0] = 3; /* the loader would refuse it */
    expect_valid(c, "multi-dimensional thread binding not supported for "
                    "shared reduction");
    c->launch[TD_LAUNCH_TY].present = false;
    expect_valid(c, "threadIdx.x extent is symbolic (n); shared reduction "
                    "needs a constant");
    c->launch[TD_LAUNCH_TX].symbolic = false;
    c->launch[TD_LAUNCH_TX].extent = 32;
    expect_valid(c, "reduce axis 3 out of range for ndim=2");
    c->axes[0] = 1;
    expect_valid(c, "barrier_id 99 out of range [0, 15]");
    free(c);
}

/* ---- through the default rules ---------------------------------------- */

static td_registry *default_registry(void)
{
    td_registry *reg = NULL;
    td_diag diag;
    td_diag_clear(&diag);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &diag), 0);
    return reg;
}

/* The explain row of `variant`, failing the test if there is none. */
static const td_explain_row *row_of(const td_explain *ex, const char *variant)
{
    for (size_t i = 0; i < td_explain_nrows(ex); i++) {
        const td_explain_row *r = td_explain_get(ex, i);
        if (strcmp(r->variant, variant) == 0)
            return r;
    }
    fail_msg("no explain row for %s", variant);
    return NULL;
}

/* Dispatch fails and the `shared` row reads exactly `message`. */
static void expect_shared_row(const td_registry *reg, const td_call *c,
                              const char *message)
{
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    td_diag diag;
    td_diag_clear(&diag);
    assert_int_not_equal(td_dispatch(reg, c, &res, &diag), 0);
    assert_null(res.ir);
    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, c, &ex, &diag), 0);
    assert_null(td_explain_selected(ex));
    const td_explain_row *r = row_of(ex, "shared");
    assert_int_equal(r->status, TD_CAND_REJECTED);
    assert_string_equal(r->message, message);
    td_explain_free(ex);
}

static void test_dispatch_default(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    static const char *const scopes[] = {"cta", "warpgroup", "warp",
                                         "thread"};
    static const char *const launches[] = {"{threadIdx.x: 96}",
                                           "{threadIdx.x: 128}",
                                           "{threadIdx.x: 32}",
                                           "{threadIdx.x: 1}"};
    for (int k = 0; k < 4; k++) {
        td_call *c = shared_call("sum", scopes[k], launches[k], 4, 8, NULL);
        td_dispatch_result res;
        memset(&res, 0, sizeof res);
        td_diag diag;
        td_diag_clear(&diag);
        assert_int_equal(td_dispatch(reg, c, &res, &diag), 0);
        /* shared_rows ranks above shared where it serves (not thread
         * scope); with it disabled (rules/upstream.yaml) shared wins. */
        assert_string_equal(res.variant, k < 3 ? "shared_rows" : "shared");
        assert_non_null(res.ir);
        td_ir_free(res.ir);
        free(c);
    }

    td_call *c = shared_call("sum", "cta", "{threadIdx.x: n}", 4, 8, NULL);
    expect_shared_row(reg, c,
                      "rejected: shared_valid — threadIdx.x extent is "
                      "symbolic (n); shared reduction needs a constant");
    free(c);
    c = shared_call("sum", "warpgroup", "{threadIdx.x: 128}", 4, 8,
                    "config: {barrier_id: 16}\n");
    expect_shared_row(reg, c,
                      "rejected: shared_valid — barrier_id 16 out of range "
                      "[0, 15]");
    free(c);
    c = shared_call("sum", "cta", "{threadIdx.x: 32, threadIdx.y: 4}", 4, 8,
                    NULL);
    expect_shared_row(reg, c,
                      "rejected: shared_valid — multi-dimensional thread "
                      "binding not supported for shared reduction");
    free(c);
    /* Mixed scopes: neither shared nor local takes the call. */
    c = shared_call("max", "cta", "{threadIdx.x: 32}", 4, 8, NULL);
    strcpy(c->buffers[1].scope, "local");
    expect_shared_row(reg, c,
                      "rejected: storage_scope — storage scope mismatch: dst "
                      "local, src shared; expected [shared*]; rejected: "
                      "shared_valid — expected shared scope for both src "
                      "and dst");
    td_explain *ex = NULL;
    td_diag diag;
    td_diag_clear(&diag);
    assert_int_equal(td_explain_call(reg, c, &ex, &diag), 0);
    const td_explain_row *r = row_of(ex, "local");
    assert_int_equal(r->status, TD_CAND_REJECTED);
    ec_has(r->message, "rejected: storage_scope — storage scope mismatch: "
                       "dst local, src shared; expected [local]");
    td_explain_free(ex);
    free(c);
    td_registry_free(reg);
}

/* ---- allocation failure ------------------------------------------------ */

static void test_alloc_failure(void **state)
{
    (void)state;
    td_call *c = shared_call("sum", "warpgroup", "{threadIdx.x: 128}", 5, 44,
                             "accum: true\n");
    ec_alloc_torture(&td__variant_shared, c);
    c->scope = TD_SCOPE_THREAD;
    ec_alloc_torture(&td__variant_shared, c);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_example),
        cmocka_unit_test(test_cta128),
        cmocka_unit_test(test_tail_group),
        cmocka_unit_test(test_reduction_guard),
        cmocka_unit_test(test_group_size_pow2),
        cmocka_unit_test(test_warp_warpgroup),
        cmocka_unit_test(test_accum_dtypes),
        cmocka_unit_test(test_regions_multiaxis),
        cmocka_unit_test(test_thread_scope_shared_code),
        cmocka_unit_test(test_valid_extents),
        cmocka_unit_test(test_valid_barrier_id),
        cmocka_unit_test(test_valid_upstream_order),
        cmocka_unit_test(test_dispatch_default),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
