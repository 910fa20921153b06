/*
 * Unit tests of td_kernel_program for copy calls (tools/kernel/
 * kernel_copy.c and the global placement of stage.c / write.c): what a
 * program stages (global arrays as kernel parameters with guards, shared
 * and register buffers as before), the bit patterns it generates, the
 * per-position tables its reference reads, the refusals.  A fake copy
 * variant lowers the calls (the first thread of each scope instance copies
 * the region element by element, like `fallback`), so these tests do not
 * depend on the real copy modules.  Its ops copy_past, copy_transpose and
 * copy_drop are wrong on purpose (one store past the region, the src
 * index transposed, the last store missing): tests/cuda/emu.py
 * --copy-paths runs the programs written here on the CPU stand-in, where
 * the good ones must PASS and the wrong ones FAIL.
 *
 * With TD_COPY_DUMP=DIR set, every program is also written to DIR/NAME.cu.
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
    if (td_call_parse(name, text, strlen(text), &c, &d) != 0)
        fail_msg("call did not parse: %s", d.msg);
    return c;
}

/* The indices of the k-th element (row-major) of region r. */
static void unravel(td_ir *ir, const td_region *r, td_expr *k, td_expr **idx)
{
    int64_t inner = 1;
    for (int d = r->ndim - 1; d >= 0; d--) {
        td_expr *t = k;
        if (inner > 1)
            t = td_div(ir, t, td_int(ir, inner));
        t = td_mod(ir, t, td_int(ir, r->extent[d]));
        idx[d] = td_add(ir, td_int(ir, r->start[d]), t);
        inner *= r->extent[d];
    }
}

static td_ir_buf *ir_buf(td_ir *ir, const td_buffer *b)
{
    return td_ir_buffer(ir, b->name, b->dtype, b->scope, b->ndim, b->shape);
}

/* The fake variant knows one kind of layout: a 1-D buffer with one shard
 * iter on the memory axis (element i at i * stride).  A call file whose
 * name has "holes" in it gets a variant that ignores even that. */
static td_expr *lay_index(td_ir *ir, const td_call *call, const td_buffer *b,
                          td_expr *i)
{
    if (!b->has_layout || b->ndim != 1 || b->layout.nshard != 1 ||
        strstr(call->file, "holes") != NULL)
        return i;
    return td_mul(ir, i, td_int(ir, b->layout.shard[0].stride));
}

static int fake_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    (void)why;
    const td_region *sr = &call->srcs[0].region;
    const td_ir_buf *s = ir_buf(ir, &call->buffers[sr->buffer]);
    const td_ir_buf *d = ir_buf(ir, &call->buffers[call->dst.buffer]);
    int64_t n = 1;
    for (int i = 0; i < call->dst.ndim; i++)
        n *= call->dst.extent[i];
    int tpi = call->scope == TD_SCOPE_WARP ? 32
              : call->scope == TD_SCOPE_WARPGROUP ? 128 : 0;
    bool gate = call->scope != TD_SCOPE_THREAD;
    if (gate) {
        td_expr *tid = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0,
                                    NULL);
        if (tpi > 0)
            tid = td_mod(ir, tid, td_int(ir, tpi));
        td_ir_if(ir, td_binary(ir, TD_OP_EQ, tid, td_int(ir, 0)));
    }
    bool drop = strcmp(call->op, "copy_drop") == 0;
    td_var *k = td_ir_for(ir, "k", td_int(ir, drop ? n - 1 : n),
                          TD_LOOP_SERIAL);
    td_expr *sk = td_var_ref(ir, k);
    if (strcmp(call->op, "copy_transpose") == 0) {
        /* the region as e0 x e1 (e1 its innermost extent), read as if
         * transposed: a permutation of the region's elements */
        int64_t e1 = call->dst.extent[call->dst.ndim - 1], e0 = n / e1;
        sk = td_add(ir,
                    td_mul(ir, td_mod(ir, td_var_ref(ir, k), td_int(ir, e1)),
                           td_int(ir, e0)),
                    td_div(ir, td_var_ref(ir, k), td_int(ir, e1)));
    }
    td_expr *si[TD_MAX_RANK], *di[TD_MAX_RANK];
    unravel(ir, sr, sk, si);
    unravel(ir, &call->dst, td_var_ref(ir, k), di);
    si[0] = lay_index(ir, call, &call->buffers[sr->buffer], si[0]);
    di[0] = lay_index(ir, call, &call->buffers[call->dst.buffer], di[0]);
    td_ir_store(ir, d, call->dst.ndim, di, td_load(ir, s, sr->ndim, si));
    td_ir_end_for(ir);
    if (strcmp(call->op, "copy_past") == 0) {
        /* one more store, just past the region's last element in memory */
        for (int i = 0; i < call->dst.ndim; i++)
            di[i] = td_int(ir, call->dst.start[i] + call->dst.extent[i] - 1);
        di[call->dst.ndim - 1] =
            td_add(ir, di[call->dst.ndim - 1], td_int(ir, 1));
        for (int i = 0; i < sr->ndim; i++)
            si[i] = td_int(ir, sr->start[i]);
        td_ir_store(ir, d, call->dst.ndim, di, td_load(ir, s, sr->ndim, si));
    }
    if (gate)
        td_ir_end_if(ir);
    return td_ir_status(ir);
}

static const char *const ops[] = {"copy", "copy_past", "copy_transpose",
                                  "copy_drop"};

static td_registry *fake_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new_empty(&reg), 0);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        td_op_desc op = {.name = ops[k], .kind = TD_OP_KIND_COPY};
        assert_int_equal(td_register_op(reg, &op), 0);
    }
    td_impl_desc impl = {.name = "fake", .emit = fake_emit};
    assert_int_equal(td_register_impl(reg, &impl), 0);
    static const char rules[] =
        "version: 1\n"
        "variants:\n"
        "  - name: fake\n"
        "    ops: [copy, copy_past, copy_transpose, copy_drop]\n"
        "    target: cuda\n"
        "    priority: 1\n";
    td_diag d;
    td_diag_clear(&d);
    if (td_registry_load_rules_text(reg, "fake.yaml", rules, sizeof rules - 1,
                                    &d) != 0)
        fail_msg("fake rules: %s", d.msg);
    return reg;
}

/* A copy call: buffers A (src) and B (dst) with their scopes, dtype and
 * shapes, regions as written. */
static td_call *copy_call(const char *name, const char *op, const char *scope,
                          const char *launch, const char *dtype,
                          const char *a, const char *b, const char *dst,
                          const char *src, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "op: %s\n"
             "target: cuda\n"
             "arch: sm_90a\n"
             "scope: %s\n"
             "launch: {%s}\n"
             "buffers:\n"
             "  A: {dtype: %s, %s}\n"
             "  B: {dtype: %s, %s}\n"
             "dst: \"%s\"\n"
             "src: \"%s\"\n%s",
             op, scope, launch, dtype, a, dtype, b, dst, src, extra);
    return parse(name, text);
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
    const char *dir = getenv("TD_COPY_DUMP");
    if (dir != NULL && dir[0] != '\0') {
        char path[512];
        snprintf(path, sizeof path, "%s/%.*s.cu", dir,
                 (int)(strlen(c->file) - 5), c->file);
        FILE *f = fopen(path, "w");
        if (f != NULL) {
            fputs(prog, f);
            fclose(f);
        }
    }
    td_call_free(c);
    return prog;
}

/* Global -> shared at warp scope, two warps a block, two blocks: the
 * global src is one kernel parameter for every instance, with its guards;
 * the shared dst is staged per instance and starts as the sentinel. */
static void test_global_to_shared(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    for (size_t m = 0; m < sizeof ops / sizeof ops[0]; m++) {
        char name[64];
        snprintf(name, sizeof name, "cp_g2s_%s.yaml", ops[m]);
        char *prog = program(
            reg, copy_call(name, ops[m], "warp",
                           "threadIdx.x: 64, blockIdx.x: 2", "float32",
                           "scope: global, shape: [4, 8]",
                           "scope: shared, shape: [4, 8]", "B[0:4, 0:6]",
                           "A[0:4, 2:8]", ""));
        if (m != 0) {
            td_free(prog);
            continue;
        }
        assert_contains(prog, "__global__ void td_kernel(float *A_ptr,\n"
                              "                          const float "
                              "*__restrict__ td_in_B, float *td_out_B,\n");
        assert_contains(prog, "    /* A: global, one array for every "
                              "instance (a kernel parameter). */\n");
        /* 64 guard elements (256 bytes) on each side of 32 elements */
        assert_contains(prog, "const long long td_nin_A = 160LL, td_nout_A = "
                              "160LL;\n");
        assert_contains(prog, "unsigned long long *v_in_A = (unsigned long "
                              "long *)malloc(");
        assert_contains(prog, "td_kernel<<<dim3(2, 1, 1), dim3(64, 1, 1), ");
        assert_contains(prog, ">>>(d_in_A + 64, d_in_B, d_out_B, d_guard");
        assert_contains(prog, "v_in_A[i] = td_cp_gen((unsigned long long)i, "
                              "td_seed);\n");
        assert_contains(prog, "v_in_B[i] = TD_CP_SENTINEL;\n");
        assert_contains(prog, "h_in_A[i] = td_from_bits<float>(v_in_A[i]);\n"
                              "            v_in_A[i] = td_bits(h_in_A[i]);\n");
        assert_contains(prog, "#define TD_CP_SENTINEL 0xffa5a5a5ULL ");
        assert_contains(prog, "#define TD_CP_REGION 24LL ");
        assert_contains(prog, "#define TD_DST_ELEMS 32LL ");
        assert_contains(prog, "#define TD_CP_DST_PAD 0LL ");
        /* B[0, 0] pairs with A[0, 2] (index 64 + 2 of A's host array);
         * B[0, 6] and B[0, 7] are outside the region. */
        assert_contains(prog, "static const int td_cp_dlog[] = {\n    0, 1, "
                              "2, 3, 4, 5, 6, 7, 8,");
        assert_contains(prog, "static const int td_cp_slog[] = {\n    2, 3, "
                              "4, 5, 6, 7, -1, -1, 10,");
        assert_contains(prog, "static const int td_cp_sidx[] = {\n    66, 67, "
                              "68, 69, 70, 71, -1, -1, 74,");
        assert_contains(prog, "            td_cp_reference(v_in_A, td_want);\n");
        assert_contains(prog, "td_cp_check(\"B\", inst, e, -1, -1, "
                              "td_bits(h_out_B[inst * 32LL + e]), td_want[e], "
                              "td_tol[e]);\n");
        /* the global src after the instances, every element and guard */
        assert_contains(prog, "for (long long e = 0; e < td_nin_A; ++e)\n"
                              "            td_check_bits(\"A\", -1, e, -1, -1, "
                              "td_bits(h_out_A[e]), v_in_A[e], 0.0);\n");
        assert_contains(prog, "TD_CHECK(cudaMemcpy(h_out_A, d_in_A, ");
        /* a barrier between the body and the stage-out */
        assert_contains(prog, "        }\n    }\n    __syncthreads();\n");
        assert_contains(prog, "#define TD_ROUNDS 4 ");
        assert_contains(prog, "printf(\"PASS %s max_err=0 bit-exact: ");
        assert_null(strstr(prog, "td_to_double(h_out"));
        td_free(prog);
    }
    td_registry_free(reg);
}

/* Shared -> global at cta scope: every instance writes the one dst array,
 * so the src data is the same in every instance (keyed by the element);
 * the dst's want covers the guards around it. */
static void test_shared_to_global(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    for (size_t m = 0; m < sizeof ops / sizeof ops[0]; m++) {
        char name[64];
        snprintf(name, sizeof name, "cp_s2g_%s.yaml", ops[m]);
        char *prog = program(
            reg, copy_call(name, ops[m], "cta",
                           "threadIdx.x: 128, blockIdx.x: 3", "int16",
                           "scope: shared, shape: [6, 5]",
                           "scope: global, shape: [2, 3, 8]",
                           "B[1:2, 0:3, 1:6]", "A[3:6, 0:5]", ""));
        if (m != 0) {
            td_free(prog);
            continue;
        }
        assert_contains(prog, "v_in_A[i] = td_cp_gen((unsigned long long)"
                              "(i % 30LL), td_seed);\n");
        /* 128 guard elements a side around 48 */
        assert_contains(prog, "#define TD_DST_ELEMS 304LL ");
        assert_contains(prog, "#define TD_CP_DST_PAD 128LL ");
        assert_contains(prog, "#define TD_CP_SENTINEL 0xa5a5ULL ");
        assert_contains(prog, "#define TD_CP_EBITS 0 ");
        assert_contains(prog, ">>>(d_in_A, d_out_A, d_in_B + 128, d_guard");
        assert_contains(prog, "            td_cp_reference(v_in_A + inst * "
                              "30LL, td_want);\n");
        assert_contains(prog, "td_cp_check(\"B\", -1, e, -1, -1, "
                              "td_bits(h_out_B[e]), td_want[e], 0.0);\n");
        td_free(prog);
    }
    td_registry_free(reg);
}

/* Registers at thread scope: each thread's array; a 64-bit dtype and a
 * float with specials; a global -> global copy. */
static void test_registers_and_global(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    char *prog = program(
        reg, copy_call("cp_g2l_f64.yaml", "copy", "thread",
                       "threadIdx.x: 8", "float64",
                       "scope: global, shape: [16]",
                       "scope: local, shape: [6]", "B[1:5]", "A[10:14]",
                       "config: {kernel_specials: true}\n"));
    assert_contains(prog, "#define TD_CP_SPECIALS 1 ");
    assert_contains(prog, "#define TD_CP_EBITS 11 ");
    assert_contains(prog, "#define TD_CP_SENTINEL 0xfff5a5a5a5a5a5a5ULL ");
    assert_contains(prog, "static const int td_cp_sidx[] = {\n    -1, 42, 43, "
                          "44, 45, -1,\n};\n");
    td_free(prog);
    prog = program(reg, copy_call("cp_l2g_u8.yaml", "copy", "thread",
                                  "threadIdx.x: 4", "uint8",
                                  "scope: local, shape: [8]",
                                  "scope: global, shape: [8]", "B[0:8]",
                                  "A[0:8]", ""));
    assert_contains(prog, "#define TD_CP_SENTINEL 0xa5ULL ");
    assert_contains(prog, "#define TD_DST_ELEMS 520LL ");
    td_free(prog);
    /* A register dst whose layout leaves slots 1, 3 and 5 to no element:
     * they start as the sentinel and are checked to hold it.  The fake
     * variant ignores layouts (it writes slots 0-3), so this program must
     * FAIL on slot 1 (tests/cuda/emu.py --copy-paths). */
    prog = program(reg, copy_call("cp_g2l_holes.yaml", "copy", "thread",
                                  "threadIdx.x: 2", "float32",
                                  "scope: global, shape: [4]",
                                  "scope: local, shape: [4], "
                                  "layout: \"S[4 : 2]\"",
                                  "B[0:4]", "A[0:4]", ""));
    assert_contains(prog, "B_ptr[s] = e >= 0 ? td_in_B[td_inst * 4LL + e] : "
                          "td_from_bits<float>(0xffa5a5a5ULL);\n");
    assert_contains(prog, "#define TD_MAP_B_INIT { \\\n    0,-1,1,-1,2,-1,3,");
    assert_contains(prog, "                    if (e < 0) {\n"
                          "                        td_cp_check(\"B\", inst, "
                          "-1, t, s, td_bits(h_out_B[(inst * TD_TPI + t) * "
                          "7LL + s]), 0xffa5a5a5ULL, 0.0);\n");
    td_free(prog);
    /* A shared dst with a strided layout (8 elements over 15 offsets):
     * staged and read back offset by offset, the holes checked; the
     * layout-blind variant writes offset 1, a hole. */
    static const char *const shl[] = {"cp_g2s_strided.yaml",
                                      "cp_g2s_holes.yaml"};
    for (int h = 0; h < 2; h++) {
        prog = program(reg, copy_call(shl[h], "copy", "warp",
                                      "threadIdx.x: 64", "int32",
                                      "scope: global, shape: [8]",
                                      "scope: shared, shape: [8], "
                                      "layout: \"S[8 : 2]\"",
                                      "B[0:8]", "A[0:8]", ""));
        if (h == 0) {
            assert_contains(prog, "#define TD_INV_B_INIT { \\\n    0,-1,1,"
                                  "-1,2,-1,3,-1,4,-1,5,-1,6,-1,7, \\\n}\n");
            assert_contains(prog, "        B_ptr[i] = e >= 0 ? td_in_B[td_inst "
                                  "* 8LL + e] : td_from_bits<int>("
                                  "0xa5a5a5a5ULL);\n");
            assert_contains(prog, "td_out_B[td_inst * 15LL + i] = B_ptr[i];");
            assert_contains(prog, "td_cp_check(\"B\", inst, -1, -1, i, "
                                  "td_bits(h_out_B[inst * 15LL + i]), "
                                  "0xa5a5a5a5ULL, 0.0);\n");
        }
        td_free(prog);
    }
    /* 16-bit floats (the GPU runs these; the CPU stand-in has none). */
    prog = program(reg, copy_call("cp_s2g_f16.yaml", "copy", "warp",
                                  "threadIdx.x: 32", "float16",
                                  "scope: shared, shape: [8, 8]",
                                  "scope: global, shape: [64]", "B[0:64]",
                                  "A[0:8, 0:8]",
                                  "config: {kernel_specials: true}\n"));
    assert_contains(prog, "#define TD_CP_SENTINEL 0xfda5ULL ");
    assert_contains(prog, "#include <cuda_fp16.h>\n");
    td_free(prog);
    prog = program(reg, copy_call("cp_g2l_bf16.yaml", "copy", "thread",
                                  "threadIdx.x: 32", "bfloat16",
                                  "scope: global, shape: [8]",
                                  "scope: local, shape: [4], "
                                  "layout: \"S[4 : 2]\"",
                                  "B[0:4]", "A[4:8]", ""));
    assert_contains(prog, "td_from_bits<__nv_bfloat16>(0xffa5ULL)");
    td_free(prog);
    /* float8: bits only (the other families have no float8 reference). */
    prog = program(reg, copy_call("cp_g2s_f8.yaml", "copy", "cta",
                                  "threadIdx.x: 64", "float8_e4m3fn",
                                  "scope: global, shape: [32, 32]",
                                  "scope: shared, shape: [32, 32]",
                                  "B[0:32, 0:32]", "A[0:32, 0:32]", ""));
    assert_contains(prog, "#include <cuda_fp8.h>\n");
    assert_contains(prog, "#define TD_CP_SENTINEL 0xffULL ");
    assert_contains(prog, "#define TD_CP_EBITS 4 ");
    td_free(prog);
    for (size_t m = 0; m < sizeof ops / sizeof ops[0]; m++) {
        char name[64];
        snprintf(name, sizeof name, "cp_g2g_%s.yaml", ops[m]);
        prog = program(reg, copy_call(name, ops[m], "warpgroup",
                                      "threadIdx.x: 128", "int32",
                                      "scope: global, shape: [3, 4]",
                                      "scope: global, shape: [4, 3]",
                                      "B[0:4, 0:3]", "A[0:3, 0:4]", ""));
        if (m == 0)
            assert_contains(prog, "__global__ void td_kernel(int *A_ptr,\n"
                                  "                          int *B_ptr,\n"
                                  "                          int *td_guard");
        td_free(prog);
    }
    td_registry_free(reg);
}

static void expect_refusal(const td_registry *reg, td_call *c, int code,
                           const char *msg)
{
    char *prog = (char *)1;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), code);
    assert_null(prog);
    if (strstr(d.msg, msg) == NULL)
        fail_msg("message '%s' lacks '%s'", d.msg, msg);
    td_call_free(c);
}

static void test_refusals(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    expect_refusal(reg,
                   copy_call("r1.yaml", "copy", "thread", "threadIdx.x: 1",
                             "float32", "scope: global, shape: [8]",
                             "scope: local, shape: [8]", "B[0:4]", "A[0:8]",
                             ""),
                   TD_EINVAL,
                   "kernel: the src region has 8 elements, the dst region 4");
    expect_refusal(reg,
                   copy_call("r2.yaml", "copy", "thread", "threadIdx.x: 1",
                             "int32", "scope: local, shape: [8]",
                             "scope: local, shape: [8]", "B[0:8]", "A[0:8]",
                             "config: {kernel_specials: true}\n"),
                   TD_EINVAL, "kernel_specials needs a float dtype");
    expect_refusal(reg,
                   copy_call("r3.yaml", "copy", "thread", "threadIdx.x: 1",
                             "float32",
                             "scope: global, shape: [8], "
                             "layout: \"S[8 : 1@laneid]\"",
                             "scope: local, shape: [8]", "B[0:8]", "A[0:8]",
                             ""),
                   TD_EINVAL, "global buffer A: a layout with thread axes");
    expect_refusal(reg,
                   copy_call("r4.yaml", "copy", "thread", "threadIdx.x: 1",
                             "float32",
                             "scope: global, shape: [4096, 4096]",
                             "scope: global, shape: [8]", "B[0:8]",
                             "A[0:1, 0:8]", ""),
                   TD_ELIMIT, "global buffer A spans 16777216 elements");
    td_registry_free(reg);
}

/* copy_async (the built-in ldgsts): the program commits the group and
 * waits for all of it (device code only) before the barrier after the
 * body; a named predicate becomes a kernel parameter of value 1; a
 * predicate of 0 is refused (nothing of the source to check). */
static void test_copy_async(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    char *prog = program(reg, copy_call(
        "ca1.yaml", "copy_async", "cta", "threadIdx.x: 64", "float32",
        "scope: global, shape: [32, 32]", "scope: shared, shape: [32, 32]",
        "B[0:32, 0:32]", "A[0:32, 0:32]",
        "config: {predicate: p, fill_mode: zero}\n"));
    assert_contains(prog, "/* The emitted body (variant ldgsts). */");
    assert_contains(prog, "    }\n#ifdef __CUDA_ARCH__\n"
                          "    asm volatile(\"cp.async.commit_group;\" : : : "
                          "\"memory\");\n"
                          "    asm volatile(\"cp.async.wait_all;\" : : : "
                          "\"memory\");\n#else\n");
    assert_contains(prog, "#endif\n    __syncthreads();\n");
    assert_contains(prog, "const int p)");
    assert_contains(prog, "td_from_double<int>(1)");
    assert_contains(prog, "_16_zfill(B_ptr + s_off, A_ptr + g_lin, p);");
    td_free(prog);
    /* copy has no wait */
    prog = program(reg, copy_call(
        "ca2.yaml", "copy", "cta", "threadIdx.x: 64", "float32",
        "scope: global, shape: [32, 32]", "scope: shared, shape: [32, 32]",
        "B[0:32, 0:32]", "A[0:32, 0:32]", ""));
    assert_null(strstr(prog, "cp.async"));
    td_free(prog);
    expect_refusal(reg,
                   copy_call("ca3.yaml", "copy_async", "thread",
                             "threadIdx.x: 1", "float32",
                             "scope: global, shape: [8]",
                             "scope: shared, shape: [8]", "B[0:4]", "A[0:4]",
                             "config: {direct: true, predicate: 0}\n"),
                   TD_EINVAL, "config predicate is 0");
    td_registry_free(reg);
}

/* A declared scalar with a small range: the program runs every value of
 * it (a set per two rounds, the tables following), so a predicate over
 * the scalar is checked where it flips; a set where it is 0 expects the
 * sentinel everywhere (nothing copied).  A predicate 0 at every value is
 * refused.  Past KP_MAX_SV_ALL combinations the program runs a covering
 * sweep: each scalar through its values (its first L - 1 and its last
 * when it has more than L), the others at their last. */
static const char scalar_call[] =
    "op: copy_async\n"
    "target: cuda\n"
    "arch: sm_90a\n"
    "scope: thread\n"
    "scalars:\n"
    "  k: {dtype: int32, range: [%d, %d]}\n"
    "buffers:\n"
    "  A: {scope: global, dtype: float32, shape: [%d, 8]}\n"
    "  S: {scope: shared, dtype: float32, shape: [8, 8]}\n"
    "dst: \"S[1:2, 0:4]\"\n"
    "src: \"A[k:k + 1, 4:8]\"\n"
    "dispatch: ldgsts\n"
    "config: {direct: true, predicate: \"%s\"}\n";

/* Three scalars of 20 values each: the source row is i + j + k. */
static const char three_scalars[] =
    "op: copy_async\n"
    "target: cuda\n"
    "arch: sm_90a\n"
    "scope: thread\n"
    "scalars:\n"
    "  i: {dtype: int32, range: [0, 20]}\n"
    "  j: {dtype: int32, range: [0, 20]}\n"
    "  k: {dtype: int32, range: [0, 20]}\n"
    "buffers:\n"
    "  A: {scope: global, dtype: float32, shape: [64, 8]}\n"
    "  S: {scope: shared, dtype: float32, shape: [8, 8]}\n"
    "dst: \"S[1:2, 0:4]\"\n"
    "src: \"A[i + j + k:i + j + k + 1, 4:8]\"\n"
    "dispatch: ldgsts\n"
    "config: {direct: true, predicate: \"i >= 0\"}\n";

static td_call *scalar_copy(const char *name, int lo, int hi, int rows,
                            const char *pred)
{
    char text[1024];
    snprintf(text, sizeof text, scalar_call, lo, hi, rows, pred);
    return parse(name, text);
}

static void test_scalar_sets(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    char *prog = program(reg, scalar_copy("sc1.yaml", 2, 6, 8, "k >= 4"));
    assert_contains(prog, " * scalars: every value of k in [2, 6): 4 sets, "
                          "round r passes set r / 2 % 4\n");
    assert_contains(prog, "#define TD_ROUNDS 8 ");
    assert_contains(prog, "    static const double td_sv_set[4][1] = {\n"
                          "        {2},\n        {3},\n        {4},\n"
                          "        {5},\n    };\n");
    assert_contains(prog, "        const int td_svi = td_round / 2 % 4;\n"
                          "        td_sv_use(td_svi);\n"
                          "        const int td_sv_k = td_from_double<int>"
                          "(td_sv_set[td_svi][0]);\n");
    /* k = 2 and 3: the predicate is 0, nothing is copied (S[1, 0:4] is
     * dst positions 8 to 11 and must keep the sentinel); k = 4: the row
     * of k, A's storage between its 64 guard elements. */
    assert_contains(prog, "static const int td_cp_sidx_0[] = {\n"
                          "    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,"
                          " -1,");
    assert_contains(prog, "static const int td_cp_sidx_2[] = {\n"
                          "    -1, -1, -1, -1, -1, -1, -1, -1, 100, 101, 102,"
                          " 103,");
    assert_contains(prog, "static const int td_cp_sidx_3[] = {\n"
                          "    -1, -1, -1, -1, -1, -1, -1, -1, 108, 109, 110,"
                          " 111,");
    assert_null(strstr(prog, "td_cp_sidx_4"));
    assert_null(strstr(prog, "static const int td_cp_sidx[]"));
    td_free(prog);
    /* Past KP_MAX_SV_ALL values: the covering sweep, the first 15 values
     * (every residue mod 2 to 15) and the last. */
    prog = program(reg, scalar_copy("sc2.yaml", 0, 17, 17, "k >= 4"));
    assert_contains(prog, " * scalars: k in [0, 17): more combinations "
                          "than 16, so each\n");
    assert_contains(prog, " * ranges (a range of more than 16 values: its "
                          "first 15, every residue\n"
                          " * mod 2 to 15, and its last), then all at their "
                          "last: 16 sets,\n"
                          " * round r passes set r / 2 % 16\n");
    assert_contains(prog, "#define TD_ROUNDS 32 ");
    assert_contains(prog, "    static const double td_sv_set[16][1] = {\n"
                          "        {0},\n        {1},\n");
    assert_contains(prog, "        {13},\n        {14},\n        {16},\n"
                          "    };\n");
    /* k = 16 (set 15): its row, 64 guards + 16 * 8 + 4. */
    assert_contains(prog, "static const int td_cp_sidx_15[] = {\n"
                          "    -1, -1, -1, -1, -1, -1, -1, -1, 196, 197, 198,"
                          " 199,");
    assert_null(strstr(prog, "td_cp_sidx_16"));
    td_free(prog);
    /* Three scalars of 20 values: 16 and 13 values each are more than
     * KP_MAX_SV sets, so each runs its first 4 (residues mod 2 to 4) and
     * its last: 13 sets, the others at 19. */
    prog = program(reg, parse("sc4.yaml", three_scalars));
    assert_contains(prog, " * scalars: i in [0, 20), j in [0, 20), k in "
                          "[0, 20): more combinations than 16, so each\n");
    assert_contains(prog, "first 4, every residue\n"
                          " * mod 2 to 4, and its last), then all at their "
                          "last: 13 sets,\n");
    assert_contains(prog, "    static const double td_sv_set[13][3] = {\n"
                          "        {0, 19, 19},\n        {1, 19, 19},\n"
                          "        {2, 19, 19},\n        {3, 19, 19},\n"
                          "        {19, 0, 19},\n");
    assert_contains(prog, "        {19, 19, 3},\n        {19, 19, 19},\n"
                          "    };\n");
    td_free(prog);
    expect_refusal(reg, scalar_copy("sc3.yaml", 0, 4, 8, "k >= 4"),
                   TD_EINVAL,
                   "config predicate is 0 at every set of the scalars' "
                   "values the program passes (every value of their "
                   "ranges)");
    td_registry_free(reg);
}

/* A strided global view (a layout over a larger array): the storage is
 * the layout's span, each element at its offset; and every allocation the
 * program generator makes for it may fail, leaking nothing. */
static void test_global_layout_and_alloc_failures(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = copy_call("cp_view.yaml", "copy", "warp", "threadIdx.x: 32",
                           "float32",
                           "scope: global, shape: [4, 4], "
                           "layout: \"S[(4, 4) : (8, 1)]\"",
                           "scope: shared, shape: [2, 4]", "B[0:2, 0:4]",
                           "A[1:3, 0:4]", "");
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    if (td_kernel_program(reg, c, &prog, &d) != 0)
        fail_msg("kernel: %s", d.msg);
    /* 64 guards, offsets 0..27, 64 guards; A[1, 0] at offset 8 */
    assert_contains(prog, "const long long td_nin_A = 156LL,");
    assert_contains(prog, "static const int td_cp_sidx[] = {\n    72, 73, "
                          "74, 75, 80, 81, 82, 83,\n};\n");
    td_free(prog);
    alloc_install();
    int ok = 0;
    for (long fail_at = 1; fail_at <= 10000 && !ok; fail_at++) {
        alloc_arm(fail_at);
        long live = g_ca.live;
        prog = NULL;
        td_diag_clear(&d);
        int err = td_kernel_program(reg, c, &prog, &d);
        if (err == 0) {
            ok = 1;
            td_free(prog);
        } else {
            assert_int_equal(err, TD_ENOMEM);
            assert_null(prog);
        }
        assert_int_equal(g_ca.live, live);
    }
    td_set_allocator(NULL);
    assert_true(ok);
    td_call_free(c);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_global_to_shared),
        cmocka_unit_test(test_shared_to_global),
        cmocka_unit_test(test_registers_and_global),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_copy_async),
        cmocka_unit_test(test_scalar_sets),
        cmocka_unit_test(test_global_layout_and_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
