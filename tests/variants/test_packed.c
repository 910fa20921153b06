/*
 * Unit tests of the Blackwell packed variants (packed_add_sum,
 * 3input_maxmin): exact text for the smallest cases, the chunk loop and
 * remainder for the others, the emitters' own gate, and the priority
 * interplay with `local` through the default rules (explain's reasons).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "emit_check.h"
#include "tiledispatch.h"
#include "variants.h"

/* One thread, float32 A[n] -> B[1] on `arch`, plus extra lines. */
static td_call *packed_call(const char *op, int n, const char *arch,
                            const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "op: %s\ntarget: cuda\narch: %s\nscope: thread\n"
             "launch: {threadIdx.x: 1}\nbuffers:\n"
             "  A: {scope: local, dtype: float32, shape: [%d]}\n"
             "  B: {scope: local, dtype: float32, shape: [1]}\n"
             "dst: B\nsrc: A\n%s",
             op, arch, n, extra ? extra : "");
    return ec_parse(text);
}

/* The 8 -> 4 -> 2 -> 1 tree every packed sum ends with (CUDA). */
#define TREE_CUDA(s1, s2, s3)                                                  \
    "unsigned long long pa" s1 " = tvm_builtin_ptx_mov_b64_pack(acc8[0], "     \
    "acc8[1]);\n"                                                              \
    "unsigned long long pb" s1 " = tvm_builtin_ptx_mov_b64_pack(acc8[2], "     \
    "acc8[3]);\n"                                                              \
    "pa" s1 " = tvm_builtin_ptx_add_rn_ftz_f32x2(pa" s1 ", pb" s1 ");\n"       \
    "acc8[0] = tvm_builtin_ptx_mov_b64_unpack_lo(pa" s1 ");\n"                 \
    "acc8[1] = tvm_builtin_ptx_mov_b64_unpack_hi(pa" s1 ");\n"                 \
    "unsigned long long pa" s2 " = tvm_builtin_ptx_mov_b64_pack(acc8[4], "     \
    "acc8[5]);\n"                                                              \
    "unsigned long long pb" s2 " = tvm_builtin_ptx_mov_b64_pack(acc8[6], "     \
    "acc8[7]);\n"                                                              \
    "pa" s2 " = tvm_builtin_ptx_add_rn_ftz_f32x2(pa" s2 ", pb" s2 ");\n"       \
    "acc8[4] = tvm_builtin_ptx_mov_b64_unpack_lo(pa" s2 ");\n"                 \
    "acc8[5] = tvm_builtin_ptx_mov_b64_unpack_hi(pa" s2 ");\n"                 \
    "unsigned long long pa" s3 " = tvm_builtin_ptx_mov_b64_pack(acc8[0], "     \
    "acc8[1]);\n"                                                              \
    "unsigned long long pb" s3 " = tvm_builtin_ptx_mov_b64_pack(acc8[4], "     \
    "acc8[5]);\n"                                                              \
    "pa" s3 " = tvm_builtin_ptx_add_rn_ftz_f32x2(pa" s3 ", pb" s3 ");\n"       \
    "acc8[0] = tvm_builtin_ptx_mov_b64_unpack_lo(pa" s3 ");\n"                 \
    "acc8[1] = tvm_builtin_ptx_mov_b64_unpack_hi(pa" s3 ");\n"

/* ---- packed_add_sum ----------------------------------------------------- */

static void test_sum_8(void **state)
{
    (void)state;
    td_call *c = packed_call("sum", 8, "sm_100a", NULL);
    ec_out o = ec_emit(&td__variant_packed_add_sum, c);
    assert_string_equal(o.cuda,
                        "float acc8[8];\n"
                        "acc8[0] = A_ptr[0];\n"
                        "acc8[1] = A_ptr[1];\n"
                        "acc8[2] = A_ptr[2];\n"
                        "acc8[3] = A_ptr[3];\n"
                        "acc8[4] = A_ptr[4];\n"
                        "acc8[5] = A_ptr[5];\n"
                        "acc8[6] = A_ptr[6];\n"
                        "acc8[7] = A_ptr[7];\n" TREE_CUDA("", "_1", "_2")
                        "B_ptr[0] = acc8[0] + acc8[1];\n");
    /* Each helper once, the inline PTX upstream uses. */
    assert_int_equal(ec_count(o.prelude, "asm(\"add.rn.ftz.f32x2 %0, %1, "
                                         "%2;\""),
                     1);
    assert_int_equal(ec_count(o.prelude, "asm(\"mov.b64 %0, {%1, %2};\""), 1);
    ec_has(o.tirx, "acc8 = T.alloc_buffer((8,), \"float32\", scope=\"local\")\n");
    ec_has(o.tirx, "pa: T.uint64\nT.ptx.mov.b64(pa, acc8[0], acc8[1])\n");
    ec_has(o.tirx, "T.ptx.add.rn.ftz.f32x2(pa, pa, pb)\n");
    ec_has(o.tirx, "T.ptx.mov.b64(acc8[0], acc8[1], pa)\n");
    ec_has(o.tirx, "B[0] = acc8[0] + acc8[1]\n");
    ec_free(&o);
    free(c);
}

static void test_sum_chunks(void **state)
{
    (void)state;
    /* 17 with accum: one extra chunk (its loop of one drops in CUDA), one
     * remainder element, the old B in slot 0. */
    td_call *c = packed_call("sum", 17, "sm_100a", "accum: true\n");
    ec_out o = ec_emit(&td__variant_packed_add_sum, c);
    ec_has(o.cuda, "acc8[0] = A_ptr[0] + B_ptr[0];\nacc8[1] = A_ptr[1];\n");
    ec_has(o.cuda,
           "#pragma unroll\n"
           "for (int j = 0; j < 4; ++j) {\n"
           "  unsigned long long pa = tvm_builtin_ptx_mov_b64_pack(acc8[j * "
           "2], acc8[j * 2 + 1]);\n"
           "  unsigned long long pb = tvm_builtin_ptx_mov_b64_pack(A_ptr[j * "
           "2 + 8], A_ptr[j * 2 + 9]);\n"
           "  pa = tvm_builtin_ptx_add_rn_ftz_f32x2(pa, pb);\n"
           "  acc8[j * 2] = tvm_builtin_ptx_mov_b64_unpack_lo(pa);\n"
           "  acc8[j * 2 + 1] = tvm_builtin_ptx_mov_b64_unpack_hi(pa);\n"
           "}\n"
           "acc8[0] = acc8[0] + A_ptr[16];\n" TREE_CUDA("_1", "_2", "_3")
           "B_ptr[0] = acc8[0] + acc8[1];\n");
    assert_int_equal(ec_count(o.cuda, "B_ptr[0]"), 2);
    ec_has(o.tirx, "for outer in T.serial(1):\n    for j in T.unroll(4):\n");
    ec_has(o.tirx, "for i in T.serial(1):\n    acc8[0] = acc8[0] + A[i + 16]\n");
    ec_free(&o);
    free(c);

    /* 100: 12 chunks (11 in the loop), 4 left over. */
    c = packed_call("sum", 100, "sm_100a", NULL);
    o = ec_emit(&td__variant_packed_add_sum, c);
    ec_has(o.cuda, "for (int outer = 0; outer < 11; ++outer) {\n"
                   "  #pragma unroll\n"
                   "  for (int j = 0; j < 4; ++j) {\n");
    ec_has(o.cuda, "tvm_builtin_ptx_mov_b64_pack(A_ptr[outer * 8 + j * 2 + "
                   "8], A_ptr[outer * 8 + j * 2 + 9]);\n");
    ec_has(o.cuda, "for (int i = 0; i < 4; ++i) {\n"
                   "  acc8[0] = acc8[0] + A_ptr[i + 96];\n}\n");
    ec_lacks(o.cuda, "B_ptr[0] +");
    assert_int_equal(ec_count(o.cuda, "tvm_builtin_ptx_add_rn_ftz_f32x2("), 4);
    ec_free(&o);
    free(c);

    /* 64: no remainder loop.  8: neither loop. */
    c = packed_call("sum", 64, "sm_100a", NULL);
    o = ec_emit(&td__variant_packed_add_sum, c);
    ec_has(o.cuda, "for (int outer = 0; outer < 7; ++outer)");
    ec_lacks(o.cuda, "int i ");
    ec_free(&o);
    free(c);
}

/* Region starts: src A[5:25] of 32, dst one element of a 2-D buffer. */
static void test_sum_region(void **state)
{
    (void)state;
    td_call *c = ec_parse(
        "op: sum\ntarget: cuda\narch: sm_100a\nscope: thread\n"
        "launch: {threadIdx.x: 1}\nbuffers:\n"
        "  A: {scope: local, dtype: float32, shape: [32]}\n"
        "  B: {scope: local, dtype: float32, shape: [2, 3]}\n"
        "dst: B[1:2, 2:3]\nsrc: A[5:25]\naccum: true\n");
    ec_out o = ec_emit(&td__variant_packed_add_sum, c);
    ec_has(o.cuda, "acc8[0] = A_ptr[5] + B_ptr[5];\n");
    ec_has(o.cuda, "acc8[7] = A_ptr[12];\n");
    ec_has(o.cuda, "A_ptr[j * 2 + 13], A_ptr[j * 2 + 14]");
    ec_has(o.cuda, "for (int i = 0; i < 4; ++i) {\n"
                   "  acc8[0] = acc8[0] + A_ptr[i + 21];\n");
    ec_has(o.cuda, "B_ptr[5] = acc8[0] + acc8[1];\n");
    ec_has(o.tirx, "acc8[0] = A[5] + B[1, 2]\n");
    ec_has(o.tirx, "B[1, 2] = acc8[0] + acc8[1]\n");
    ec_free(&o);
    free(c);
}

/* ---- 3input_maxmin ------------------------------------------------------ */

static void test_maxmin_exact(void **state)
{
    (void)state;
    td_call *c = packed_call("max", 10, "sm_100a", "accum: true\n");
    ec_out o = ec_emit(&td__variant_3input_maxmin, c);
    assert_string_equal(
        o.cuda,
        "float acc4[4];\n"
        "acc4[0] = tvm_builtin_ptx_max3_f32(A_ptr[0], A_ptr[1], B_ptr[0]);\n"
        "acc4[1] = fmaxf(A_ptr[2], A_ptr[3]);\n"
        "acc4[2] = fmaxf(A_ptr[4], A_ptr[5]);\n"
        "acc4[3] = fmaxf(A_ptr[6], A_ptr[7]);\n"
        "for (int i = 0; i < 2; ++i) {\n"
        "  acc4[0] = fmaxf(acc4[0], A_ptr[i + 8]);\n"
        "}\n"
        "B_ptr[0] = fmaxf(acc4[0], acc4[1]);\n"
        "B_ptr[0] = tvm_builtin_ptx_max3_f32(B_ptr[0], acc4[2], acc4[3]);\n");
    ec_has(o.prelude, "asm(\"max.f32 %0, %1, %2, %3;\"");
    ec_lacks(o.prelude, "min.f32");
    assert_string_equal(
        o.tirx,
        "acc4 = T.alloc_buffer((4,), \"float32\", scope=\"local\")\n"
        "T.ptx.max.f32(acc4[0], A[0], A[1], B[0])\n"
        "acc4[1] = T.max(A[2], A[3])\n"
        "acc4[2] = T.max(A[4], A[5])\n"
        "acc4[3] = T.max(A[6], A[7])\n"
        "for i in T.serial(2):\n"
        "    acc4[0] = T.max(acc4[0], A[i + 8])\n"
        "B[0] = T.max(acc4[0], acc4[1])\n"
        "T.ptx.max.f32(B[0], B[0], acc4[2], acc4[3])\n");
    ec_free(&o);
    free(c);
}

static void test_maxmin_chunks(void **state)
{
    (void)state;
    td_call *c = packed_call("min", 100, "sm_100a", NULL);
    ec_out o = ec_emit(&td__variant_3input_maxmin, c);
    ec_has(o.cuda, "acc4[0] = fminf(A_ptr[0], A_ptr[1]);\n");
    ec_has(o.cuda,
           "for (int outer = 0; outer < 11; ++outer) {\n"
           "  #pragma unroll\n"
           "  for (int j = 0; j < 4; ++j) {\n"
           "    acc4[j] = tvm_builtin_ptx_min3_f32(acc4[j], A_ptr[outer * 8 + "
           "j * 2 + 8], A_ptr[outer * 8 + j * 2 + 9]);\n");
    ec_has(o.cuda, "acc4[0] = fminf(acc4[0], A_ptr[i + 96]);\n");
    ec_has(o.cuda, "B_ptr[0] = tvm_builtin_ptx_min3_f32(B_ptr[0], acc4[2], "
                   "acc4[3]);\n");
    ec_lacks(o.cuda, "max");
    ec_free(&o);
    free(c);

    /* 8 and 15: no chunk loop; 15 has seven left over. */
    c = packed_call("max", 15, "sm_100a", NULL);
    o = ec_emit(&td__variant_3input_maxmin, c);
    ec_lacks(o.cuda, "outer");
    ec_has(o.cuda, "for (int i = 0; i < 7; ++i)");
    ec_free(&o);
    free(c);
    c = packed_call("min", 8, "sm_100a", NULL);
    o = ec_emit(&td__variant_3input_maxmin, c);
    ec_lacks(o.cuda, "for");
    assert_int_equal(ec_count(o.cuda, "\n"), 7);
    ec_free(&o);
    free(c);
}

/* ---- the emitters' own gate -------------------------------------------- */

static void test_gate_declines(void **state)
{
    (void)state;
    const td_impl_desc *sum = &td__variant_packed_add_sum;
    const td_impl_desc *mm = &td__variant_3input_maxmin;
    td_call *c = packed_call("sum", 7, "sm_100a", NULL);
    ec_declines(sum, c, &ec_sum, "reduction_len 7 < 8");
    ec_declines(mm, c, &ec_max, "reduction_len 7 < 8");
    free(c);
    c = packed_call("sum", 32, "sm_90a", NULL);
    ec_declines(sum, c, &ec_sum, "sm_version 90 < 100");
    c->sm_version = 0; /* no arch: unknown, so not Blackwell */
    ec_declines(mm, c, &ec_min, "sm_version 0 < 100");
    free(c);
    c = packed_call("sum", 32, "sm_100a", NULL);
    c->buffers[0].dtype = c->buffers[1].dtype = TD_F16;
    ec_declines(sum, c, &ec_sum, "dtype float16 != float32");
    c->buffers[1].dtype = TD_F32;
    ec_declines(sum, c, &ec_sum,
                "src/dst must be local scope with matching dtype on CUDA");
    c->buffers[0].dtype = TD_F32;
    strcpy(c->buffers[0].scope, "shared");
    ec_declines(mm, c, &ec_max,
                "src/dst must be local scope with matching dtype on CUDA");
    strcpy(c->buffers[0].scope, "local");
    c->scope = TD_SCOPE_WARP;
    ec_declines(sum, c, &ec_sum, "unsupported exec_scope warp");
    c->scope = TD_SCOPE_THREAD;
    ec_declines(sum, c, &ec_max, "op max is not served by this variant");
    ec_declines(mm, c, &ec_sum, "op sum is not served by this variant");
    c->buffers[1].shape[0] = 2;
    c->dst.extent[0] = 2;
    ec_declines(sum, c, &ec_sum, "dst_len 2 != 1");
    free(c);

    c = ec_parse("op: sum\ntarget: cuda\narch: sm_100a\nscope: thread\n"
                 "launch: {threadIdx.x: 1}\nbuffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [4, 8]}\n"
                 "  B: {scope: local, dtype: float32, shape: [1]}\n"
                 "dst: B\nsrc: A[0:1, 0:8]\n");
    ec_declines(sum, c, &ec_sum, "src ndim 2 != 1");
    free(c);
    /* Past the gate, the common checks still apply. */
    c = packed_call("sum", 32, "sm_100a", NULL);
    c->src.start[0] = 30; /* A[30:62] of 32 */
    ec_declines(sum, c, &ec_sum, "src region out of bounds for A");
    free(c);
}

/* ---- the default rules: priority 20 over local's 10 --------------------- */

static const char *dispatch_name(const td_registry *reg, const td_call *c)
{
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    td_diag diag;
    td_diag_clear(&diag);
    if (td_dispatch(reg, c, &res, &diag) != 0)
        fail_msg("dispatch failed: %s", diag.msg);
    assert_non_null(res.ir);
    td_ir_free(res.ir);
    return res.variant;
}

/* `packed`'s row is rejected with exactly `message`; local is selected. */
static void expect_skipped(const td_registry *reg, const td_call *c,
                           const char *packed, const char *message)
{
    assert_string_equal(dispatch_name(reg, c), "local");
    td_explain *ex = NULL;
    td_diag diag;
    td_diag_clear(&diag);
    assert_int_equal(td_explain_call(reg, c, &ex, &diag), 0);
    const td_explain_row *r = td_explain_get(ex, 0);
    assert_string_equal(r->variant, packed);
    assert_int_equal(r->priority, 20);
    assert_int_equal(r->status, TD_CAND_REJECTED);
    assert_string_equal(r->message, message);
    assert_string_equal(td_explain_selected(ex)->variant, "local");
    char *text = NULL;
    assert_int_equal(td_explain_format(ex, TD_EXPLAIN_TVM, &text), 0);
    ec_has(text, message);
    td_free(text);
    td_explain_free(ex);
}

static void test_dispatch_default(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    td_diag diag;
    td_diag_clear(&diag);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &diag), 0);

    td_call *c = packed_call("sum", 32, "sm_100a", NULL);
    assert_string_equal(dispatch_name(reg, c), "packed_add_sum");
    strcpy(c->op, "max");
    assert_string_equal(dispatch_name(reg, c), "3input_maxmin");
    strcpy(c->op, "min");
    assert_string_equal(dispatch_name(reg, c), "3input_maxmin");
    free(c);

    c = packed_call("sum", 32, "sm_90a", NULL);
    expect_skipped(reg, c, "packed_add_sum",
                   "rejected: sm_version — sm_version 90 < 100");
    free(c);
    c = packed_call("sum", 7, "sm_100a", NULL);
    expect_skipped(reg, c, "packed_add_sum",
                   "rejected: reduction_len — reduction_len 7 < 8");
    free(c);
    c = packed_call("max", 32, "sm_100a", NULL);
    c->buffers[0].dtype = c->buffers[1].dtype = TD_F16;
    expect_skipped(reg, c, "3input_maxmin",
                   "rejected: dtype — dtype float16 != float32");
    free(c);
    /* Every failing predicate is listed, joined by "; ". */
    c = packed_call("min", 7, "sm_90a", NULL);
    expect_skipped(reg, c, "3input_maxmin",
                   "rejected: sm_version — sm_version 90 < 100; rejected: "
                   "reduction_len — reduction_len 7 < 8");
    free(c);
    td_registry_free(reg);
}

/* ---- allocation failure ------------------------------------------------ */

static void test_alloc_failure(void **state)
{
    (void)state;
    td_call *c = packed_call("sum", 100, "sm_100a", "accum: true\n");
    ec_alloc_torture(&td__variant_packed_add_sum, c);
    strcpy(c->op, "min");
    ec_alloc_torture(&td__variant_3input_maxmin, c);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_8),
        cmocka_unit_test(test_sum_chunks),
        cmocka_unit_test(test_sum_region),
        cmocka_unit_test(test_maxmin_exact),
        cmocka_unit_test(test_maxmin_chunks),
        cmocka_unit_test(test_gate_declines),
        cmocka_unit_test(test_dispatch_default),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
