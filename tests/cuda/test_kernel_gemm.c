/*
 * Unit tests of td_kernel_program for gemm calls (tools/kernel/
 * kernel_gemm.c): what the program holds with the real mma variant (the
 * tables of each operand's logical positions, the fragments staged
 * through their layouts and 16-byte aligned, D's region poisoned, C's at
 * beta 0, nothing in place), a fragment of one warp's lanes staged in
 * every warp, and the refusals, through a fake gemm variant that takes
 * every call (so that calls the real one declines reach the program
 * generator).  tests/cuda/emu.py --gemm-programs runs the programs on the
 * CPU stand-in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "tiledispatch/td_kernel.h"

static td_call *parse(const char *name, const char *text)
{
    td_call *c = NULL;
    td_diag d;
    td_diag_clear(&d);
    if (td_call_parse(name, text, strlen(text), &c, &d) != 0)
        fail_msg("call did not parse: %s", d.msg);
    return c;
}

/* The fragments of one m16n8k16 tile (plan 1.4), and a k16 tile's call. */
#define LAY_A "S[(2, 8, 2, 4, 2) : (2, 4@laneid, 4, 1@laneid, 1)]"
#define LAY_B "S[(2, 4, 2, 8) : (2, 1@laneid, 1, 4@laneid)]"
#define LAY_D "S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]"

static td_call *gemm_call(const char *name, const char *scope,
                          const char *launch, const char *ta,
                          const char *tb, const char *tcd, const char *a,
                          const char *b, const char *c, const char *d,
                          const char *regions, double beta)
{
    char text[4096];
    snprintf(text, sizeof text,
             "op: gemm\n"
             "target: cuda\n"
             "arch: sm_80\n"
             "scope: %s\n"
             "launch: {%s}\n"
             "buffers:\n"
             "  A: {dtype: %s, %s}\n"
             "  B: {dtype: %s, %s}\n"
             "  C: {dtype: %s, %s}\n"
             "  D: {dtype: %s, %s}\n"
             "%s"
             "transpose_A: false\n"
             "transpose_B: false\n"
             "alpha: 1.0\n"
             "beta: %.1f\n",
             scope, launch, ta, a, tb, b, tcd, c, tcd, d, regions, beta);
    return parse(name, text);
}

static td_call *k16_call(const char *name, double beta)
{
    return gemm_call(
        name, "warp", "threadIdx.x: 32", "float16", "float16", "float32",
        "scope: local, shape: [16, 16], layout: \"" LAY_A "\"",
        "scope: local, shape: [16, 8], layout: \"" LAY_B "\"",
        "scope: local, shape: [16, 8], layout: \"" LAY_D "\"",
        "scope: local, shape: [16, 8], layout: \"" LAY_D "\"",
        "dst: \"D[0:16, 0:8]\"\na: \"A[0:16, 0:16]\"\nb: \"B[0:16, 0:8]\"\n"
        "c: \"C[0:16, 0:8]\"\n",
        beta);
}

static void assert_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("missing from the program: %s", needle);
}

static char *program(const td_registry *reg, td_call *c)
{
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    if (td_kernel_program(reg, c, &prog, &d) != 0)
        fail_msg("kernel: %s", d.msg);
    td_call_free(c);
    return prog;
}

static td_registry *default_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    return reg;
}

/* The real variant: the program's tables, staging, poison and call. */
static void test_program(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    char *prog = program(reg, k16_call("g1.yaml", 1.0));
    assert_contains(prog, "/* The emitted body (variant mma.m16n8k*). */");
    assert_contains(prog, "#define TD_GM_M 16\n#define TD_GM_N 8\n"
                          "#define TD_GM_K 16\n");
    assert_contains(prog, "#define TD_EMU_16BIT_STORAGE 1\n");
    /* A' (16 x 16, row-major): position (0, 1) is element 1, (1, 0) 16. */
    assert_contains(prog, "static const int td_gm_a[] = {\n    0, 1, 2,");
    assert_contains(prog, "    __align__(16) __half A_ptr[8 + 8];\n");
    assert_contains(prog, "    __align__(16) float D_ptr[4 + 8];\n");
    /* D's region is poisoned, C (beta 1) is not. */
    assert_contains(prog, "v_in_D[inst * 128LL + td_gm_d[q]] = TD_GM_POISON;");
    assert_null(strstr(prog, "td_gm_c[q]] = TD_GM_POISON;"));
    assert_contains(prog, "td_gm_reference(v_in_A + inst * 256LL, "
                          "v_in_B + inst * 128LL, v_in_C + inst * 128LL, "
                          "v_in_D + inst * 128LL, td_want, td_tol);");
    assert_contains(prog, "td_data_random ? 2.0 * td_rand_u01() - 1.0 : "
                          "td_rand_int(-2, 2)");
    td_free(prog);
    /* beta 0: C's region is poisoned too. */
    prog = program(reg, k16_call("g0.yaml", 0.0));
    assert_contains(prog, "v_in_C[inst * 128LL + td_gm_c[q]] = TD_GM_POISON;");
    assert_contains(prog, "#define TD_GM_BETA 0\n");
    td_free(prog);
    td_registry_free(reg);
}

/* D in place (c names the dst region, beta 1): one staged buffer, the
 * accumulator, nothing poisoned. */
static void test_in_place(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    char text[2048];
    snprintf(text, sizeof text,
             "op: gemm\ntarget: cuda\narch: sm_80\nscope: warp\n"
             "launch: {threadIdx.x: 32}\nbuffers:\n"
             "  A: {scope: local, dtype: float16, shape: [16, 16], "
             "layout: \"%s\"}\n"
             "  B: {scope: local, dtype: float16, shape: [16, 8], "
             "layout: \"%s\"}\n"
             "  D: {scope: local, dtype: float32, shape: [16, 8], "
             "layout: \"%s\"}\n"
             "dst: \"D[0:16, 0:8]\"\na: \"A[0:16, 0:16]\"\n"
             "b: \"B[0:16, 0:8]\"\nc: \"D[0:16, 0:8]\"\n"
             "transpose_A: false\ntranspose_B: false\nalpha: 1.0\n"
             "beta: 1.0\n",
             LAY_A, LAY_B, LAY_D);
    char *prog = program(reg, parse("inplace.yaml", text));
    assert_contains(prog, "not here: C is D's region in place");
    assert_null(strstr(prog, "= TD_GM_POISON;"));
    assert_null(strstr(prog, "C_ptr"));
    td_free(prog);
    td_registry_free(reg);
}

/* Two warps, B on laneid only: warp 1's threads hold B as warp 0's do
 * (the table's row of thread 32 is thread 0's), not the gap. */
static void test_warps_replicated(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    char *prog = program(
        reg,
        gemm_call("w.yaml", "cta", "threadIdx.x: 64", "float16", "float16",
                  "float32",
                  "scope: local, shape: [32, 16], layout: \"S[(2, 2, 8, 2, "
                  "4, 2) : (1@warpid, 2, 4@laneid, 4, 1@laneid, 1)]\"",
                  "scope: local, shape: [16, 8], layout: \"" LAY_B "\"",
                  "scope: local, shape: [32, 8], layout: \"S[(2, 2, 8, 4, "
                  "2) : (1@warpid, 2, 4@laneid, 1@laneid, 1)]\"",
                  "scope: local, shape: [32, 8], layout: \"S[(2, 2, 8, 4, "
                  "2) : (1@warpid, 2, 4@laneid, 1@laneid, 1)]\"",
                  "dst: \"D[0:32, 0:8]\"\na: \"A[0:32, 0:16]\"\n"
                  "b: \"B[0:16, 0:8]\"\nc: \"C[0:32, 0:8]\"\n",
                  0.0));
    const char *t = strstr(prog, "#define TD_MAP_B_INIT {");
    assert_non_null(t);
    /* 64 threads x 4 slots: thread 32 starts at entry 128. */
    int v[256];
    const char *q = strchr(t, '{') + 1;
    for (int i = 0; i < 256; i++) {
        while (*q == ' ' || *q == '\\' || *q == '\n')
            q++;
        char *end = NULL;
        v[i] = (int)strtol(q, &end, 10);
        assert_true(end != q && *end == ',');
        q = end + 1;
    }
    for (int i = 0; i < 128; i++) {
        assert_true(v[i] >= 0);
        assert_int_equal(v[128 + i], v[i]);
    }
    td_free(prog);
    td_registry_free(reg);
}

/* ---- refusals, through a fake variant that takes every gemm call ---- */

static int fake_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)call;
    (void)op;
    (void)plan;
    (void)user;
    (void)why;
    return td_ir_status(ir);
}

static td_registry *fake_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new_empty(&reg), 0);
    td_op_desc op = {.name = "gemm", .kind = TD_OP_KIND_GEMM};
    assert_int_equal(td_register_op(reg, &op), 0);
    td_impl_desc impl = {.name = "fake", .emit = fake_emit};
    assert_int_equal(td_register_impl(reg, &impl), 0);
    static const char rules[] = "version: 1\n"
                                "variants:\n"
                                "  - name: fake\n"
                                "    ops: [gemm]\n"
                                "    target: cuda\n"
                                "    priority: 1\n";
    td_diag d;
    td_diag_clear(&d);
    if (td_registry_load_rules_text(reg, "fake.yaml", rules, sizeof rules - 1,
                                    &d) != 0)
        fail_msg("fake rules: %s", d.msg);
    return reg;
}

static void expect_refusal(const td_registry *reg, td_call *c,
                           const char *needle)
{
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_kernel_program(reg, c, &prog, &d);
    if (err == 0 || strstr(d.msg, needle) == NULL)
        fail_msg("%s: want a refusal with '%s', got %d: %s", c->file, needle,
                 err, d.msg);
    assert_null(prog);
    td_call_free(c);
}

#define REG_A "scope: local, shape: [16, 16], layout: \"" LAY_A "\""
#define REG_B "scope: local, shape: [16, 8], layout: \"" LAY_B "\""
#define REG_D "scope: local, shape: [16, 8], layout: \"" LAY_D "\""
#define REGIONS                                                              \
    "dst: \"D[0:16, 0:8]\"\na: \"A[0:16, 0:16]\"\nb: \"B[0:16, 0:8]\"\n"    \
    "c: \"C[0:16, 0:8]\"\n"

/* The extension signatures (GM_SIGS): each has a program with its own
 * data, tolerance and poison. */
static void test_ext_signatures(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    char *prog = program(reg, gemm_call("acc16.yaml", "warp",
                                        "threadIdx.x: 32", "float16",
                                        "float16", "float16", REG_A, REG_B,
                                        REG_D, REG_D, REGIONS, 0.0));
    assert_contains(prog, ": float16 into float16. */");
    assert_contains(prog, "#define TD_GM_TF32 0\n#define TD_GM_INT 0\n");
    assert_contains(prog, "#define TD_GM_TOL_UNIT 0.0009765625 /* 2^-10 */\n"
                          "#define TD_GM_TOL_FLOOR 5.9604644775390625e-08\n"
                          "#define TD_GM_POISON NAN\n");
    assert_contains(prog, "v_in_C[inst * 128LL + td_gm_c[q]] = TD_GM_POISON;");
    td_free(prog);
    /* K 512 in float16: 4 K + 2 > 2^11, so exact data is in [-1, 1]. */
    prog = program(reg, gemm_call("acc16k.yaml", "warp", "threadIdx.x: 32",
                                  "float16", "float16", "float16",
                                  "scope: local, shape: [16, 512]",
                                  "scope: local, shape: [512, 8]", REG_D,
                                  REG_D,
                                  "dst: \"D[0:16, 0:8]\"\na: \"A[0:16, 0:512]\"\n"
                                  "b: \"B[0:512, 0:8]\"\nc: \"C[0:16, 0:8]\"\n",
                                  0.0));
    assert_contains(prog, "td_data_random ? 2.0 * td_rand_u01() - 1.0 : "
                          "td_rand_int(-1, 1)");
    td_free(prog);
    td_call *c = gemm_call("tf32.yaml", "warp", "threadIdx.x: 32", "float32",
                           "float32", "float32", REG_A, REG_B, REG_D, REG_D,
                           REGIONS "config: {allow_tf32: true}\n", 1.0);
    prog = program(reg, c);
    assert_contains(prog, "#define TD_GM_TF32 1\n");
    assert_contains(prog, "td_rand_int(-8, 8)");
    assert_contains(prog, "inputs truncated to tf32, then the float32 bound");
    td_free(prog);
    prog = program(reg, gemm_call("s8.yaml", "warp", "threadIdx.x: 32", "int8",
                                  "int8", "int32", REG_A, REG_B, REG_D, REG_D,
                                  REGIONS, 0.0));
    assert_contains(prog, "#define TD_GM_INT 1\n");
    assert_contains(prog, "#define TD_GM_POISON (-2147483648.0)\n");
    assert_contains(prog, "v_in_A[i] = td_rand_int(-128, 127);");
    assert_contains(prog, "td_data_random ? td_gm_rand_s32() : "
                          "td_rand_int(-16777216, 16777216)");
    assert_contains(prog, "static double td_gm_rand_s32(void)");
    td_free(prog);
    prog = program(reg, gemm_call("u8.yaml", "warp", "threadIdx.x: 32",
                                  "uint8", "uint8", "int32", REG_A, REG_B,
                                  REG_D, REG_D, REGIONS, 1.0));
    assert_contains(prog, "v_in_A[i] = td_rand_int(0, 255);");
    td_free(prog);
    prog = program(reg, gemm_call("e5m2.yaml", "warp", "threadIdx.x: 32",
                                  "float8_e5m2", "float8_e5m2", "float32",
                                  REG_A, REG_B, REG_D, REG_D, REGIONS, 0.0));
    assert_contains(prog, "#include <cuda_fp8.h>\n");
    assert_contains(prog, "#define TD_EMU_FP8_STORAGE 1\n");
    assert_contains(prog, "td_from_double<__nv_fp8_e5m2>(double v)");
    assert_null(strstr(prog, "td_from_double<__nv_fp8_e4m3>"));
    assert_contains(prog, "td_rand_int(-4, 4)");
    assert_contains(prog, "#define TD_GM_TOL_UNIT 2.384185791015625e-07 "
                          "/* 2^-22 */");
    td_free(prog);
    td_registry_free(reg);
}

static void test_refusals(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    /* The fake variant takes TVM's signature: a program. */
    char *prog = program(reg, gemm_call("ok.yaml", "warp", "threadIdx.x: 32",
                                        "float16", "float16", "float32",
                                        REG_A, REG_B, REG_D, REG_D, REGIONS,
                                        0.0));
    td_free(prog);
    /* float32 inputs: tf32 only with the opt-in (the reference reads
     * them as tf32). */
    expect_refusal(reg,
                   gemm_call("f32.yaml", "warp", "threadIdx.x: 32", "float32",
                             "float32", "float32", REG_A, REG_B, REG_D, REG_D,
                             REGIONS, 0.0),
                   "kernel: no gemm reference for float32 inputs without "
                   "config allow_tf32: true (the reference reads them as "
                   "tf32): the call has no self-checking program yet");
    /* A signature outside GM_SIGS, and A and B of two dtypes. */
    expect_refusal(reg,
                   gemm_call("f64.yaml", "warp", "threadIdx.x: 32", "float64",
                             "float64", "float64", REG_A, REG_B, REG_D, REG_D,
                             REGIONS, 0.0),
                   "kernel: no gemm reference for float64 inputs into a "
                   "float64 accumulator (buffers A, D): the call has no "
                   "self-checking program yet");
    expect_refusal(reg,
                   gemm_call("mixed.yaml", "warp", "threadIdx.x: 32",
                             "float8_e4m3fn", "float8_e5m2", "float32", REG_A,
                             REG_B, REG_D, REG_D, REGIONS, 0.0),
                   "kernel: no gemm reference for inputs float8_e4m3fn x "
                   "float8_e5m2 into float32 / float32 (A and B, C and D of "
                   "one dtype each)");
    /* int32 accumulators: integer alpha and beta. */
    expect_refusal(reg,
                   gemm_call("s8half.yaml", "warp", "threadIdx.x: 32", "int8",
                             "int8", "int32", REG_A, REG_B, REG_D, REG_D,
                             REGIONS, 0.5),
                   "kernel: gemm into int32 with alpha 1, beta 0.5: the "
                   "reference needs integer alpha and beta");
    /* float16 accumulation: exact data needs K + 1 <= 2^11. */
    expect_refusal(reg,
                   gemm_call("f16k.yaml", "warp", "threadIdx.x: 32",
                             "float16", "float16", "float16",
                             "scope: local, shape: [16, 2048]",
                             "scope: local, shape: [2048, 8]", REG_D, REG_D,
                             "dst: \"D[0:16, 0:8]\"\na: \"A[0:16, 0:2048]\"\n"
                             "b: \"B[0:2048, 0:8]\"\nc: \"C[0:16, 0:8]\"\n",
                             0.0),
                   "kernel: gemm of K 2048 float16 into float16: a sum of "
                   "K + 1 terms of magnitude 1 leaves the accumulator's "
                   "exact integers (2^11)");
    expect_refusal(reg,
                   gemm_call("shared.yaml", "warp", "threadIdx.x: 32",
                             "float16", "float16", "float32", REG_A, REG_B,
                             REG_D, "scope: shared, shape: [16, 8]", REGIONS,
                             0.0),
                   "gemm buffer D: scope 'shared' (the program stages "
                   "register fragments)");
    expect_refusal(reg,
                   gemm_call("adst.yaml", "warp", "threadIdx.x: 32",
                             "float16", "float16", "float32", REG_A, REG_B,
                             REG_D, "scope: local, shape: [16, 16]",
                             "dst: \"D[0:16, 0:8]\"\na: \"D[0:16, 0:16]\"\n"
                             "b: \"B[0:16, 0:8]\"\nc: \"C[0:16, 0:8]\"\n",
                             0.0),
                   "kernel: gemm: A or B is the dst buffer D");
    /* C in D's buffer beside the dst region: D's region poisoned, C's
     * kept (beta 1); overlapping it without being it: refused. */
    prog = program(reg, gemm_call("apart.yaml", "warp", "threadIdx.x: 32",
                                  "float16", "float16", "float32", REG_A,
                                  REG_B, REG_D,
                                  "scope: local, shape: [16, 16]",
                                  "dst: \"D[0:16, 0:8]\"\na: \"A[0:16, 0:16]\"\n"
                                  "b: \"B[0:16, 0:8]\"\nc: \"D[0:16, 8:16]\"\n",
                                  1.0));
    assert_contains(prog, "v_in_D[inst * 256LL + td_gm_d[q]] = TD_GM_POISON;");
    assert_contains(prog, "static const int td_gm_c[] = {\n    8, 9,");
    td_free(prog);
    expect_refusal(reg,
                   gemm_call("overlap.yaml", "warp", "threadIdx.x: 32",
                             "float16", "float16", "float32", REG_A, REG_B,
                             REG_D, "scope: local, shape: [16, 16]",
                             "dst: \"D[0:16, 0:8]\"\na: \"A[0:16, 0:16]\"\n"
                             "b: \"B[0:16, 0:8]\"\nc: \"D[0:16, 4:12]\"\n",
                             1.0),
                   "kernel: gemm: c overlaps the dst region without being "
                   "it (buffer D)");
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_warps_replicated),
        cmocka_unit_test(test_ext_signatures),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
