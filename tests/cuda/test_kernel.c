/*
 * Unit tests of td_kernel_program (tools/kernel/): the program text for
 * the built-in rules, the staging of layouts and shared buffers (through a
 * fake variant that emits a marker comment), the error paths, and
 * allocation failures.  The programs themselves run in the cuda suite
 * (compile, CPU stand-in) and on a GPU (scripts/gpu-check).
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

#include "../common/td_test_alloc.h"

static td_call *parse(const char *name, const char *text)
{
    td_call *c = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_call_parse(name, text, strlen(text), &c, &d);
    if (err != 0)
        fail_msg("call did not parse: %s", d.msg);
    return c;
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

/* A variant that accepts every call and emits only a comment, so the
 * harness can be tested for calls no built-in variant lowers yet. */
static int fake_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user,
                     td_reason *why)
{
    (void)plan;
    (void)call;
    (void)op;
    (void)user;
    (void)why;
    td_ir_comment(ir, "fake body");
    return td_ir_status(ir);
}

/* An empty registry with op sum and one variant, `impl`, for every sum. */
static td_registry *one_variant_registry(const td_impl_desc *impl)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new_empty(&reg), 0);
    td_op_desc sum = {.name = "sum", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM};
    assert_int_equal(td_register_op(reg, &sum), 0);
    assert_int_equal(td_register_impl(reg, impl), 0);
    char rules[256];
    snprintf(rules, sizeof rules,
             "version: 1\n"
             "variants:\n"
             "  - name: %s\n"
             "    ops: [sum]\n"
             "    target: cuda\n"
             "    priority: 1\n",
             impl->name);
    td_diag d;
    td_diag_clear(&d);
    int err = td_registry_load_rules_text(reg, "fake.yaml", rules,
                                          strlen(rules), &d);
    if (err != 0)
        fail_msg("fake rules: %s", d.msg);
    return reg;
}

static td_registry *fake_registry(void)
{
    td_impl_desc impl = {.name = "fake", .emit = fake_emit};
    return one_variant_registry(&impl);
}

static const char seed_call[] =
    "op: sum\n"
    "target: cuda\n"
    "arch: sm_90a\n"
    "scope: thread\n"
    "launch: {threadIdx.x: 1}\n"
    "buffers:\n"
    "  A_local: {scope: local, dtype: float32, shape: [4]}\n"
    "  B_local: {scope: local, dtype: float32, shape: [1]}\n"
    "dst: B_local\n"
    "src: A_local\n";

static void assert_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("missing from the program: %s", needle);
}

static void assert_not_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) != NULL)
        fail_msg("unexpected in the program: %s", needle);
}

static void test_seed_program(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    td_call *c = parse("dir/seed.yaml", seed_call);
    char *prog = NULL, *again = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
    assert_non_null(prog);
    assert_contains(prog, " * case:    seed\n");
    assert_contains(prog, " * variant: local\n");
    assert_contains(prog, "static const char TD_NAME[] = \"seed\";\n");
    assert_contains(prog, "__global__ void td_kernel(const float *__restrict__ "
                          "td_in_A_local, float *td_out_A_local,\n");
    assert_contains(prog, "    float A_local_ptr[4 + 8];\n");
    assert_contains(prog, "    float B_local_ptr[1 + 8];\n");
    assert_contains(prog, "for (int red = 0; red < 4; ++red)");
    assert_contains(prog, "B_local_ptr[0] = B_local_ptr[0] + A_local_ptr[red];");
    /* Exact sum data: 4 float32 terms, M capped at 256, 2^-7. */
    assert_contains(prog, "#define TD_SUM_M 256LL ");
    assert_contains(prog, "#define TD_SUM_SCALE 0.0078125 ");
    assert_contains(prog, "#define TD_SUM_EXACT 1 ");
    assert_contains(prog, "#define TD_ROUNDS 2 ");
    /* accum: false, a float sum: the dst region starts NaN. */
    assert_contains(prog, "#define TD_POISON NAN ");
    assert_contains(prog, "            td_fill(v_in_A_local + inst * 4LL, "
                          "v_in_B_local + inst * 1LL, inst);\n");
    assert_contains(prog, "#define TD_OP 0 ");
    assert_contains(prog, "td_kernel<<<dim3(1, 1, 1), dim3(1, 1, 1), 0>>>(d_in_A_local, "
                          "d_out_A_local, d_in_B_local, d_out_B_local, d_guard, td_round % 2 ? 0xCF : 0x4F);\n");
    assert_contains(prog, "TD_CHECK(cudaGetLastError());\n"
                          "        TD_CHECK(cudaDeviceSynchronize());\n");
    /* The rounds: staging, launch and check inside one loop. */
    assert_true(strstr(prog, "for (td_round = 0;") <
                strstr(prog, "td_kernel<<<"));
    assert_contains(prog, "printf(\"PASS %s max_err=%.3g\\n\", TD_NAME, "
                          "td_max_err);\n");
    assert_null(strstr(prog, "cuda_fp16.h"));
    /* No usable device: SKIP with exit 77, checked before anything else
     * and on every CUDA call. */
    assert_contains(prog, "#define TD_EXIT_SKIP 77\n");
    assert_contains(prog, "int main(int argc, char **argv)\n{\n"
                          "    if (!td_options(argc, argv)) {\n");
    assert_contains(prog, "cudaGetDeviceCount(&td_ndev);\n");
    assert_contains(prog, "printf(\"SKIP %s: no CUDA device (%s: %s)\\n\", "
                          "TD_NAME,\n");
    assert_contains(prog, "    case cudaErrorInsufficientDriver:\n");
    assert_contains(prog, "    case cudaErrorNoDevice:\n");
    assert_true(strstr(prog, "cudaGetDeviceCount(&td_ndev)") <
                strstr(prog, "TD_CHECK(cudaMalloc("));
    /* --data random: normal inputs for floats, the float32 tolerance. */
    assert_contains(prog, "v_in_A_local[i] = td_data_random ? "
                          "td_rand_normal() : td_sum_value();\n");
    assert_contains(prog, "#define TD_UNIT_ROUNDOFF 5.9604644775390625e-08\n"
                          "#define TD_TINY 1.1754943508222875e-38\n");
    /* Deterministic: the same call gives the same bytes. */
    assert_int_equal(td_kernel_program(reg, c, &again, &d), 0);
    assert_string_equal(prog, again);
    td_free(prog);
    td_free(again);
    td_call_free(c);
    td_registry_free(reg);
}

static void test_instances_and_half(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    td_call *c = parse("h.yaml",
                       "op: max\n"
                       "target: cuda\n"
                       "scope: thread\n"
                       "launch: {threadIdx.x: 64, blockIdx.x: 3}\n"
                       "buffers:\n"
                       "  A: {scope: local, dtype: float16, shape: [2, 8]}\n"
                       "  B: {scope: local, dtype: float16, shape: [2, 1]}\n"
                       "dst: B\n"
                       "src: A\n"
                       "accum: true\n");
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
    assert_contains(prog, "#include <cuda_fp16.h>\n");
    assert_null(strstr(prog, "cuda_bf16.h"));
    assert_contains(prog, "#define TD_TPI 1 ");
    assert_contains(prog, "#define TD_IPB 64 ");
    assert_contains(prog, "#define TD_INSTANCES 192LL\n");
    assert_contains(prog, "#define TD_ACCUM 1\n");
    assert_contains(prog, "#define TD_OP 1 ");
    assert_contains(prog, "#define TD_BCAST 1\n");
    assert_contains(prog, "#define TD_UNIT_ROUNDOFF 0.00048828125\n"
                          "#define TD_TINY 6.103515625e-05\n");
    /* Max over 8 terms plus the dst: every position of every row in 9
     * rounds; extremes on the grid k/64, 64 distinct ones. */
    assert_contains(prog, "#define TD_POSITIONS 9LL ");
    assert_contains(prog, "#define TD_ROUNDS 9 ");
    assert_contains(prog, "#define TD_FILL_SPREAD 64LL ");
    assert_contains(prog, "#define TD_FILL_SCALE 0.015625\n");
    assert_contains(prog, "#define TD_POISON INFINITY ");
    assert_contains(prog, "dim3(3, 1, 1), dim3(64, 1, 1)");
    assert_contains(prog, "const long long td_nin_A = 3072LL");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

/* A float16 sum too long for exact data with every term nonzero (16384
 * terms > 2^11): each round keeps one term in 8 of a row nonzero (at most
 * 2048 terms of +-1, every partial sum exact), 3 x 8 rounds put every
 * term in three (new signs each time, so a vector slot's terms do not
 * cancel in all of them), and the check is exact; with accum one term
 * fewer a round (the dst's). */
static void test_sparse_sum(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    const char *calls[2] = {
        "op: sum\ntarget: cuda\nscope: thread\n"
        "buffers:\n"
        "  A: {scope: local, dtype: float16, shape: [16384]}\n"
        "  B: {scope: local, dtype: float16, shape: [1]}\n"
        "dst: B\nsrc: A\n",
        "op: sum\ntarget: cuda\nscope: thread\n"
        "buffers:\n"
        "  A: {scope: local, dtype: float16, shape: [4096]}\n"
        "  B: {scope: local, dtype: float16, shape: [1]}\n"
        "dst: B\nsrc: A\naccum: true\n"};
    const char *want[2][3] = {
        {"#define TD_SUM_SPARSE 8LL ", "#define TD_ROUNDS 24 ",
         "#define TD_SUM_EXACT 1 "},
        /* 4096 terms, 2047 a round: 3 phases, 9 rounds. */
        {"#define TD_SUM_SPARSE 3LL ", "#define TD_ROUNDS 9 ",
         "#define TD_SUM_EXACT 1 "}};
    for (int i = 0; i < 2; i++) {
        td_call *c = parse("sparse.yaml", calls[i]);
        char *prog = NULL;
        td_diag d;
        td_diag_clear(&d);
        assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
        for (int j = 0; j < 3; j++)
            assert_contains(prog, want[i][j]);
        assert_contains(prog, "#define TD_SUM_M 1LL ");
        assert_contains(prog, "if ((red + g + td_round) % TD_SUM_SPARSE == 0)");
        td_free(prog);
        td_call_free(c);
    }
    /* Short rows: every term nonzero, two rounds. */
    td_call *c = parse("dense.yaml",
                       "op: sum\ntarget: cuda\nscope: thread\n"
                       "buffers:\n"
                       "  A: {scope: local, dtype: float16, shape: [2048]}\n"
                       "  B: {scope: local, dtype: float16, shape: [1]}\n"
                       "dst: B\nsrc: A\n");
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
    assert_contains(prog, "#define TD_SUM_SPARSE 0LL ");
    assert_contains(prog, "#define TD_ROUNDS 2 ");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

static void test_int_ranges(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    /* 40 int8 terms plus the initial value: |v| <= 127 / 41 = 3. */
    td_call *c = parse("i8.yaml",
                       "op: sum\n"
                       "target: cuda\n"
                       "buffers:\n"
                       "  A: {scope: local, dtype: int8, shape: [40]}\n"
                       "  B: {scope: local, dtype: int8, shape: [1]}\n"
                       "dst: B\n"
                       "src: A\n");
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
    assert_contains(prog, "v_in_A[i] = td_rand_nonzero(-3LL, 3LL);\n");
    /* Integers: the same generator in both modes, tolerance 0; the
     * poison is int8's maximum. */
    assert_null(strstr(prog, "v_in_A[i] = td_data_random"));
    assert_contains(prog, "#define TD_POISON 127 ");
    assert_contains(prog, "#define TD_UNIT_ROUNDOFF 0\n#define TD_TINY 0\n");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

static void test_no_match(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    td_call *c = parse("cta.yaml",
                       "op: sum\n"
                       "target: cuda\n"
                       "scope: cta\n"
                       "buffers:\n"
                       "  A: {scope: local, dtype: float32, shape: [4]}\n"
                       "  B: {scope: local, dtype: float32, shape: [1]}\n"
                       "dst: B\n"
                       "src: A\n");
    char *prog = (char *)1;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), TD_ENOMATCH);
    assert_null(prog);
    td_call_free(c);
    td_registry_free(reg);
}

/* A warp-scope call with layouts: the register tables come from the
 * layouts' inverse maps. */
static void test_layout_tables(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = parse("warp.yaml",
                       "op: sum\n"
                       "target: cuda\n"
                       "scope: warp\n"
                       "launch: {threadIdx.x: 64}\n"
                       "buffers:\n"
                       "  A: {scope: local, dtype: float32, shape: [64], "
                       "layout: \"S[(32, 2) : (1@laneid, 1)]\"}\n"
                       "  B: {scope: local, dtype: float32, shape: [1], "
                       "layout: \"S[1 : 1] + R[32 : 1@laneid]\"}\n"
                       "dst: B\n"
                       "src: A\n");
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_kernel_program(reg, c, &prog, &d);
    if (err != 0)
        fail_msg("kernel: %s", d.msg);
    assert_contains(prog, "#define TD_TPI 32 ");
    assert_contains(prog, "#define TD_IPB 2 ");
    assert_contains(prog, "#define TD_INSTANCES 2LL\n");
    /* Lane l holds elements 2l and 2l+1 in slots 0 and 1. */
    assert_contains(prog, "#define TD_MAP_A_INIT { \\\n"
                          "    0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15, \\\n");
    assert_contains(prog, "    float A_ptr[2 + 8];\n");
    assert_contains(prog, "const int e = td_map_A_dev[td_t * 2 + s];");
    /* Every lane holds the one dst element in slot 0. */
    assert_contains(prog, "#define TD_MAP_B_INIT { \\\n"
                          "    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, \\\n"
                          "    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, \\\n}\n");
    assert_contains(prog, "td_map_B_host[t * 1 + s]");
    assert_contains(prog, "// fake body");
    /* warp scope: exact data all the same */
    assert_contains(prog, "#define TD_SUM_EXACT 1 ");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

static void test_shared_staging(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = parse("sh.yaml",
                       "op: sum\n"
                       "target: cuda\n"
                       "scope: warp\n"
                       "launch: {threadIdx.x: 128, blockIdx.x: 2}\n"
                       "buffers:\n"
                       "  A: {scope: shared, dtype: bfloat16, shape: [8, 32]}\n"
                       "  B: {scope: shared.dyn, dtype: bfloat16, shape: [8]}\n"
                       "dst: B\n"
                       "src: A\n");
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
    assert_contains(prog, "#include <cuda_bf16.h>\n");
    /* Every warp is an instance with its own copy of each shared buffer:
     * 4 per block, 8 in all. */
    assert_contains(prog, "#define TD_TPI 32 ");
    assert_contains(prog, "#define TD_IPB 4 ");
    assert_contains(prog, "#define TD_INSTANCES 8LL\n");
    /* Copies live in dynamic shared memory, each 16-byte aligned: A's
     * four copies of 512 bytes, each followed by 1 KB of guard bytes,
     * then B's of 16 (and their guards). */
    assert_contains(prog,
                    "    extern __shared__ __align__(16) unsigned char "
                    "td_smem[];\n");
    assert_contains(prog,
                    "    __nv_bfloat16 *const A_ptr = (__nv_bfloat16 *)(td_smem"
                    " + 0LL + (td_tid / TD_TPI) * 1536LL);\n"
                    "    for (int i = td_t; i < 256; i += TD_TPI)\n"
                    "        A_ptr[i] = td_in_A[td_inst * 256LL + i];\n");
    assert_contains(prog,
                    "    __nv_bfloat16 *const B_ptr = (__nv_bfloat16 *)(td_smem"
                    " + 6144LL + (td_tid / TD_TPI) * 1040LL);\n");
    /* Then, on the GPU, every other round the warps after the first start
     * the body late (a missing barrier in the body shows). */
    assert_contains(prog, "    __syncthreads();\n#ifdef __CUDA_ARCH__\n"
                          "    if ((td_gpat & 0x80) && td_tid >= 32) {\n"
                          "        const long long td_t0 = clock64();\n"
                          "        while (clock64() - td_t0 < 40000)\n"
                          "            ;\n    }\n#endif\n"
                          "    {\n"
                          "    /* B: each element written by one thread "
                          "(td_one_writer). */\n"
                          "    __nv_bfloat16 *const td_raw_B = B_ptr;\n"
                          "    const td_one_writer<__nv_bfloat16> B_ptr = "
                          "{td_raw_B, td_guard + 5 + td_inst * 8LL, "
                          "td_guard + 2, 8LL, td_tid};\n"
                          "    /* The emitted body");
    /* The dst through td_one_writer: each element's writer recorded in
     * the guard array after the two flags and three conflict words; the
     * host checks the conflict words. */
    assert_contains(prog, "template <typename T> struct td_one_writer {");
    assert_contains(prog, "    int *d_guard = NULL, h_guard[69];\n");
    assert_contains(prog, "        td_guard_check(\"B\", h_guard[1]);\n"
                          "        td_writer_check(\"B\", h_guard + 2);\n");
    /* After the body (and the harness's barrier, in the writer's scope)
     * each instance's threads check its guard bytes. */
    assert_contains(prog, "    }\n    __syncthreads();\n    }\n"
                          "    for (int i = td_t; i < 1024; i += TD_TPI)\n"
                          "        if (((const unsigned char *)A_ptr)[512 + i] "
                          "!= (unsigned char)(td_gpat ^ 0))\n"
                          "            td_guard[0] = 1;\n"
                          "    for (int i = td_t; i < 1024; i += TD_TPI)\n"
                          "        if (((const unsigned char *)B_ptr)[16 + i] "
                          "!= (unsigned char)(td_gpat ^ 2))\n"
                          "            td_guard[1] = 1;\n"
                          "    for (int i = td_t; i < 256; i += TD_TPI)\n"
                          "        td_out_A[td_inst * 256LL + i] = A_ptr[i];\n"
                          "    for (int i = td_t; i < 8; i += TD_TPI)\n"
                          "        td_out_B[td_inst * 8LL + i] = B_ptr[i];\n"
                          "}\n");
    /* The host holds and checks every instance's copy. */
    assert_contains(prog, "td_nin_A = 2048LL, td_nout_A = 2048LL;");
    assert_contains(prog, "td_nin_B = 64LL, td_nout_B = 64LL;");
    assert_contains(prog, "td_kernel<<<dim3(2, 1, 1), dim3(128, 1, 1), 10304>>>");
    /* Under 48 KB: no opt-in. */
    assert_null(strstr(prog, "cudaFuncSetAttribute"));
    /* bfloat16: 8 significand bits, float32's exponent range. */
    assert_contains(prog, "#define TD_UNIT_ROUNDOFF 0.00390625\n"
                          "#define TD_TINY 1.1754943508222875e-38\n");
    assert_contains(prog, "#define TD_BCAST 0\n");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

/* Instances of shared calls at the other scopes: cta keeps one per block,
 * thread scope makes every thread one. */
static void test_shared_instances(void **state)
{
    (void)state;
    static const struct {
        const char *scope;
        const char *launch;
        const char *tpi, *ipb, *inst;
    } cases[] = {
        {"cta", "{threadIdx.x: 64, blockIdx.x: 3}", "#define TD_TPI 64 ",
         "#define TD_IPB 1 ", "#define TD_INSTANCES 3LL\n"},
        {"thread", "{threadIdx.x: 8, blockIdx.x: 2}", "#define TD_TPI 1 ",
         "#define TD_IPB 8 ", "#define TD_INSTANCES 16LL\n"},
        {"warpgroup", "{threadIdx.x: 256}", "#define TD_TPI 128 ",
         "#define TD_IPB 2 ", "#define TD_INSTANCES 2LL\n"},
    };
    td_registry *reg = fake_registry();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "op: sum\ntarget: cuda\nscope: %s\nlaunch: %s\n"
                 "buffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [4, 8]}\n"
                 "  B: {scope: shared, dtype: float32, shape: [4]}\n"
                 "dst: B\nsrc: A\n",
                 cases[i].scope, cases[i].launch);
        td_call *c = parse("shi.yaml", text);
        char *prog = NULL;
        td_diag d;
        td_diag_clear(&d);
        assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
        assert_contains(prog, cases[i].tpi);
        assert_contains(prog, cases[i].ipb);
        assert_contains(prog, cases[i].inst);
        assert_contains(prog, "    float *const A_ptr = (float *)(td_smem + "
                              "0LL + (td_tid / TD_TPI) * 1152LL);\n");
        td_free(prog);
        td_call_free(c);
    }
    td_registry_free(reg);
}

/* A tile beyond 48 KB: dynamic shared memory, the kernel opts in after
 * checking the device's limit. */
static void test_shared_large(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = parse("large.yaml",
                       "op: sum\ntarget: cuda\nscope: cta\n"
                       "launch: {threadIdx.x: 256}\n"
                       "buffers:\n"
                       "  A: {scope: shared, dtype: float32, shape: [4, 4096]}\n"
                       "  B: {scope: shared, dtype: float32, shape: [4]}\n"
                       "dst: B\nsrc: A\n");
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), 0);
    assert_contains(prog, "cudaDevAttrMaxSharedMemoryPerBlockOptin");
    assert_contains(prog, "    if (td_optin < 67600) {\n");
    assert_contains(prog, "cudaFuncSetAttribute(td_kernel, "
                          "cudaFuncAttributeMaxDynamicSharedMemorySize, "
                          "67600));\n");
    assert_contains(prog, "td_kernel<<<dim3(1, 1, 1), dim3(256, 1, 1), "
                          "67600>>>");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

/* A variant that declares `*(int64_t *)user` floats of shared scratch
 * (none when 0), as a cross-warp combine does. */
static int scratch_emit(const td_call *call, const td_op_desc *op,
                        const void *plan, td_ir *ir, void *user,
                        td_reason *why)
{
    (void)plan;
    (void)call;
    (void)op;
    (void)why;
    if (*(const int64_t *)user > 0)
        td_ir_shared_scratch(ir, "part", TD_F32, *(const int64_t *)user);
    td_ir_comment(ir, "scratch body");
    return td_ir_status(ir);
}

static td_registry *scratch_registry(int64_t *floats)
{
    td_impl_desc impl = {.name = "scratchy", .emit = scratch_emit,
                         .user = floats};
    return one_variant_registry(&impl);
}

static char *scratch_program(td_registry *reg, const char *shape, int *err,
                             td_diag *d)
{
    char text[512];
    snprintf(text, sizeof text,
             "op: sum\ntarget: cuda\nscope: cta\n"
             "launch: {threadIdx.x: 256}\n"
             "buffers:\n"
             "  A: {scope: shared, dtype: float32, shape: %s}\n"
             "  B: {scope: shared, dtype: float32, shape: [1]}\n"
             "dst: B\nsrc: A\naxes: [0]\n",
             shape);
    td_call *c = parse("scratch.yaml", text);
    char *prog = NULL;
    td_diag_clear(d);
    *err = td_kernel_program(reg, c, &prog, d);
    td_call_free(c);
    return prog;
}

/* The body's own shared scratch counts with the staged buffers: against
 * the 48 KB at which the program opts in, against the device's 227 KB,
 * and alone against the 48 KB of static shared memory. */
static void test_shared_scratch(void **state)
{
    (void)state;
    int64_t floats = 64; /* 256 bytes */
    td_registry *reg = scratch_registry(&floats);
    td_diag d;
    int err;
    /* 40 KB of tile and 10 KB of scratch: above 48 KB together. */
    floats = 2560;
    char *prog = scratch_program(reg, "[10240]", &err, &d);
    assert_int_equal(err, 0);
    assert_contains(prog, "__shared__ float part[2560];");
    assert_contains(prog, "    /* 43024 bytes of dynamic shared memory and "
                          "10240 of the body's own scratch: above the "
                          "default 48 KB, so the kernel opts in. */\n");
    assert_contains(prog, "    if (td_optin < 53264) {\n");
    assert_contains(prog, "cudaFuncAttributeMaxDynamicSharedMemorySize, "
                          "43024));\n");
    assert_contains(prog, "dim3(256, 1, 1), 43024>>>");
    /* 10240 bytes, a multiple of 16: no padding to guard. */
    assert_not_contains(prog, "padding on the GPU");
    td_free(prog);
    /* 6 floats (24 bytes): on the GPU the 8 bytes between the array's end
     * and td_smem are padding, guarded (filled before the body, checked
     * after it, a guard word of their own). */
    floats = 6;
    prog = scratch_program(reg, "[10240]", &err, &d);
    assert_int_equal(err, 0);
    assert_contains(prog, "__shared__ float part[6];");
    assert_contains(prog, "#ifdef __CUDA_ARCH__\n"
                          "    /* the 8 bytes between the body's own "
                          "__shared__ scratch (24 bytes)\n"
                          "     * and td_smem: padding on the GPU, guard bytes "
                          "here (checked after the body) */\n"
                          "    if (td_tid < 8)\n"
                          "        ((volatile unsigned char *)td_smem)[td_tid - "
                          "8] = (unsigned char)(td_gpat ^ 0x5A);\n"
                          "#endif\n");
    assert_contains(prog, "    if (td_tid < 8 && ((volatile unsigned char *)"
                          "td_smem)[td_tid - 8] != (unsigned char)(td_gpat ^ "
                          "0x5A))\n");
    assert_contains(prog, "td_guard_check(\"__shared__ scratch of the "
                          "body\", h_guard[");
    td_free(prog);
    /* The same tile without scratch stays under 48 KB: no opt-in. */
    floats = 0;
    prog = scratch_program(reg, "[10240]", &err, &d);
    assert_int_equal(err, 0);
    assert_not_contains(prog, "td_optin");
    td_free(prog);
    /* A tile that fits alone (232432 bytes) but not with 256 bytes more. */
    floats = 64;
    prog = scratch_program(reg, "[58104]", &err, &d);
    assert_int_equal(err, TD_ELIMIT);
    assert_null(prog);
    assert_string_equal(d.msg,
                        "kernel: shared buffers need 232432 bytes per block "
                        "(1 instance copy) and the emitted body's scratch "
                        "256 more; at most 232448 together");
    floats = 0;
    prog = scratch_program(reg, "[58104]", &err, &d);
    assert_int_equal(err, 0);
    td_free(prog);
    /* Static shared memory holds 48 KB at most. */
    floats = 12289;
    prog = scratch_program(reg, "[16]", &err, &d);
    assert_int_equal(err, TD_ELIMIT);
    assert_string_equal(d.msg,
                        "kernel: the emitted body declares 49168 bytes of "
                        "shared scratch (static shared memory is at most "
                        "49152)");
    td_registry_free(reg);

    /* The built-in rules: a row across warps (shared_rows, G = 256)
     * declares 8 floats of partials. */
    reg = default_registry();
    prog = scratch_program(reg, "[58104]", &err, &d);
    assert_int_equal(err, TD_ELIMIT);
    assert_string_equal(d.msg,
                        "kernel: shared buffers need 232432 bytes per block "
                        "(1 instance copy) and the emitted body's scratch "
                        "32 more; at most 232448 together");
    prog = scratch_program(reg, "[58096]", &err, &d);
    assert_int_equal(err, 0);
    assert_contains(prog, "__shared__ float red_part[8];");
    assert_contains(prog, "    if (td_optin < 232432) {\n");
    td_free(prog);
    td_registry_free(reg);
}

static void expect_error(td_registry *reg, const char *text, int code,
                         const char *msg)
{
    td_call *c = parse("bad.yaml", text);
    char *prog = (char *)1;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), code);
    assert_null(prog);
    assert_string_equal(d.msg, msg);
    assert_string_equal(d.file, "bad.yaml");
    td_call_free(c);
}

static void test_errors(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    expect_error(reg,
                 "op: sum\ntarget: cuda\nscope: warp\n"
                 "launch: {threadIdx.x: 48}\n"
                 "buffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [4]}\n"
                 "  B: {scope: local, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A\n",
                 TD_EINVAL,
                 "kernel: 48 threads per block is not a whole number of "
                 "scope instances of 32 threads");
    expect_error(reg,
                 "op: sum\ntarget: cuda\n"
                 "buffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [4]}\n"
                 "  B: {scope: local, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A\n",
                 TD_EINVAL,
                 "kernel: mixed shared and register buffers are not staged");
    expect_error(reg,
                 "op: sum\ntarget: cuda\n"
                 "buffers:\n"
                 "  A: {scope: global, dtype: float32, shape: [4]}\n"
                 "  B: {scope: global, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A\n",
                 TD_EINVAL,
                 "kernel: buffer A: storage scope 'global' is not staged by "
                 "kernel programs (local and shared are)");
    expect_error(reg,
                 "op: sum\ntarget: cuda\nscope: cluster\n"
                 "buffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [4]}\n"
                 "  B: {scope: local, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A\n",
                 TD_EINVAL,
                 "kernel: exec scope cluster is not supported by kernel "
                 "programs");
    expect_error(reg,
                 "op: sum\ntarget: cuda\n"
                 "launch: {threadIdx.x: 2048}\n"
                 "buffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [4]}\n"
                 "  B: {scope: local, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A\n",
                 TD_ELIMIT,
                 "kernel: launch too large: block dimension 2048, grid "
                 "dimension 1");
    /* A thread-scope call whose layout spreads over a warp. */
    expect_error(reg,
                 "op: sum\ntarget: cuda\n"
                 "buffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [32], "
                 "layout: \"S[32 : 1@laneid]\"}\n"
                 "  B: {scope: local, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A\n",
                 TD_EINVAL,
                 "kernel: the layout of A spans 32 threads, more than one "
                 "scope instance (1)");
    /* Shared memory holds one copy per instance, each padded to 16
     * bytes, in dynamic shared memory of at most 227 KB: 32 warps of
     * 8224 bytes do not fit, one block-wide copy of 232464 bytes
     * neither. */
    expect_error(reg,
                 "op: sum\ntarget: cuda\nscope: warp\n"
                 "launch: {threadIdx.x: 1024}\n"
                 "buffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [8, 256]}\n"
                 "  B: {scope: shared, dtype: float32, shape: [8]}\n"
                 "dst: B\nsrc: A\n",
                 TD_ELIMIT,
                 "kernel: shared buffers need 263168 bytes per block (32 "
                 "instance copies; at most 232448)");
    expect_error(reg,
                 "op: sum\ntarget: cuda\nscope: cta\n"
                 "launch: {threadIdx.x: 32}\n"
                 "buffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [58112]}\n"
                 "  B: {scope: shared, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A\n",
                 TD_ELIMIT,
                 "kernel: shared buffers need 232464 bytes per block (1 "
                 "instance copy; at most 232448)");
    /* kernel_specials needs a boolean and a float dtype. */
    expect_error(reg,
                 "op: sum\ntarget: cuda\nscope: cta\n"
                 "launch: {threadIdx.x: 32}\n"
                 "buffers:\n"
                 "  A: {scope: shared, dtype: int32, shape: [4, 8]}\n"
                 "  B: {scope: shared, dtype: int32, shape: [4]}\n"
                 "dst: B\nsrc: A\nconfig: {kernel_specials: true}\n",
                 TD_EINVAL,
                 "kernel: config kernel_specials needs a float dtype, not "
                 "int32");
    expect_error(reg,
                 "op: sum\ntarget: cuda\nscope: cta\n"
                 "launch: {threadIdx.x: 32}\n"
                 "buffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [4, 8]}\n"
                 "  B: {scope: shared, dtype: float32, shape: [4]}\n"
                 "dst: B\nsrc: A\nconfig: {kernel_specials: 3}\n",
                 TD_EINVAL,
                 "kernel: config kernel_specials must be true or false");
    /* The dst region cannot be matched to the spatial positions. */
    expect_error(reg,
                 "op: sum\ntarget: cuda\n"
                 "buffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [4, 8]}\n"
                 "  B: {scope: local, dtype: float32, shape: [3]}\n"
                 "dst: B\nsrc: A\n",
                 TD_EINVAL,
                 "kernel: dst region holds 3 elements, the reduction "
                 "produces 4");
    td_registry_free(reg);
}

/* ---- allocation failures ------------------------------------------- */

static void test_alloc_failures(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    td_call *c = parse("seed.yaml", seed_call);
    alloc_install();
    int ok = 0;
    for (long fail_at = 1; fail_at <= 10000 && !ok; fail_at++) {
        alloc_arm(fail_at);
        char *prog = NULL;
        td_diag d;
        td_diag_clear(&d);
        int err = td_kernel_program(reg, c, &prog, &d);
        if (err == 0) {
            ok = 1;
            td_free(prog);
        } else {
            assert_int_equal(err, TD_ENOMEM);
            assert_null(prog);
        }
    }
    td_set_allocator(NULL);
    assert_true(ok);
    td_call_free(c);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_program),
        cmocka_unit_test(test_instances_and_half),
        cmocka_unit_test(test_sparse_sum),
        cmocka_unit_test(test_int_ranges),
        cmocka_unit_test(test_no_match),
        cmocka_unit_test(test_layout_tables),
        cmocka_unit_test(test_shared_staging),
        cmocka_unit_test(test_shared_instances),
        cmocka_unit_test(test_shared_large),
        cmocka_unit_test(test_shared_scratch),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
