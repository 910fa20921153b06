/*
 * The mma.sync node (codegen/ir_mma.c, print_mma.c): the instruction
 * table against the PTX ISA's fragment sizes, the CUDA call and helper,
 * TVM's T.ptx.mma, scratch operands and float16 accumulator words, the
 * refusals, and allocation failures while building and printing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"

#include "../common/td_test_alloc.h"

static char *print(const td_ir *ir, td_lang lang, char **prelude)
{
    char *b = NULL;
    assert_int_equal(td_ir_print(ir, lang, 0, &b, prelude), 0);
    return b;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

/* Every row against the PTX ISA's per-thread fragment sizes (A: 16 x k,
 * B: k x 8, C / D: 16 x 8 over 32 lanes, in 32-bit registers) and the
 * arch whose ptxas first accepts it (tests/cuda/emu_mma.py --nvcc --all
 * checks the arch on ptxas itself). */
static void test_mma_table(void **state)
{
    (void)state;
    static const struct {
        td_mma_kind kind;
        const char *name, *ptx;
        int k, a, b, c, sm;
        td_dtype ab, cd;
    } want[] = {
        {TD_MMA_M16N8K16_BF16, "m16n8k16.bf16", "f32.bf16.bf16.f32", 16, 4,
         2, 4, 80, TD_BF16, TD_F32},
        {TD_MMA_M16N8K16_F16, "m16n8k16.f16", "f32.f16.f16.f32", 16, 4, 2, 4,
         80, TD_F16, TD_F32},
        {TD_MMA_M16N8K8_BF16, "m16n8k8.bf16", "f32.bf16.bf16.f32", 8, 2, 1, 4,
         80, TD_BF16, TD_F32},
        {TD_MMA_M16N8K8_F16, "m16n8k8.f16", "f32.f16.f16.f32", 8, 2, 1, 4, 75,
         TD_F16, TD_F32},
        {TD_MMA_M16N8K16_F16ACC, "m16n8k16.f16acc", "f16.f16.f16.f16", 16, 4,
         2, 2, 80, TD_F16, TD_F16},
        {TD_MMA_M16N8K8_F16ACC, "m16n8k8.f16acc", "f16.f16.f16.f16", 8, 2, 1,
         2, 75, TD_F16, TD_F16},
        {TD_MMA_M16N8K8_TF32, "m16n8k8.tf32", "f32.tf32.tf32.f32", 8, 4, 2, 4,
         80, TD_F32, TD_F32},
        {TD_MMA_M16N8K32_S8, "m16n8k32.s8", "s32.s8.s8.s32", 32, 4, 2, 4, 80,
         TD_I8, TD_I32},
        {TD_MMA_M16N8K32_U8, "m16n8k32.u8", "s32.u8.u8.s32", 32, 4, 2, 4, 80,
         TD_U8, TD_I32},
        {TD_MMA_M16N8K32_E4M3, "m16n8k32.e4m3", "f32.e4m3.e4m3.f32", 32, 4, 2,
         4, 89, TD_F8E4M3, TD_F32},
        {TD_MMA_M16N8K32_E5M2, "m16n8k32.e5m2", "f32.e5m2.e5m2.f32", 32, 4, 2,
         4, 89, TD_F8E5M2, TD_F32},
    };
    assert_int_equal(sizeof want / sizeof *want, TD_MMA_KIND_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const td_mma_info *f = td_mma_info_of(want[i].kind);
        assert_non_null(f);
        assert_string_equal(f->name, want[i].name);
        char ptx[64];
        snprintf(ptx, sizeof ptx, "%s.%s.%s.%s", f->cd_ptx, f->ab_ptx,
                 f->ab_ptx, f->cd_ptx);
        assert_string_equal(ptx, want[i].ptx);
        char shape[16];
        snprintf(shape, sizeof shape, "m16n8k%d", want[i].k);
        assert_string_equal(f->shape, shape);
        assert_int_equal(f->m, 16);
        assert_int_equal(f->n, 8);
        assert_int_equal(f->k, want[i].k);
        assert_int_equal(f->a_words, want[i].a);
        assert_int_equal(f->b_words, want[i].b);
        assert_int_equal(f->cd_regs, want[i].c);
        assert_int_equal(f->cd_packed, want[i].c == 2);
        assert_int_equal(f->sm, want[i].sm);
        assert_int_equal(f->ab, want[i].ab);
        assert_int_equal(f->cd, want[i].cd);
        assert_int_equal(f->k_pack, 32 / td_dtype_bits(f->ab));
    }
    assert_null(td_mma_info_of(TD_MMA_KIND_COUNT));
    assert_null(td_mma_info_of((td_mma_kind)-1));
}

/* TVM's k16 f16 tile accumulating in place, twice in a loop: one helper,
 * the words of A and B through 32-bit views, the loop variable in the
 * register positions. */
static void test_mma_print(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *D = td_ir_buffer(ir, "D", TD_F32, "local", 2,
                                (int64_t[]){16, 16});
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F16, "local", 2,
                                (int64_t[]){16, 16});
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_F16, "local", 2,
                                (int64_t[]){16, 16});
    td_var *n = td_ir_for(ir, "n", td_int(ir, 2), TD_LOOP_UNROLL);
    td_expr *d[4], *a[4], *b[2];
    for (int i = 0; i < 4; i++) {
        d[i] = td_add(ir, td_mul(ir, td_var_ref(ir, n), td_int(ir, 4)),
                      td_int(ir, i));
        a[i] = td_int(ir, i);
    }
    for (int i = 0; i < 2; i++)
        b[i] = td_add(ir, td_mul(ir, td_var_ref(ir, n), td_int(ir, 2)),
                      td_int(ir, i));
    td_ptx_mma m = {.kind = TD_MMA_M16N8K16_F16, .d = D, .a = A, .b = B,
                    .c = D, .d_regs = d, .a_words = a, .b_words = b,
                    .c_regs = d};
    td_ir_mma(ir, &m);
    td_ir_end_for(ir);
    assert_int_equal(td_ir_status(ir), 0);
    char *p = NULL, *c = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(c,
        "#pragma unroll\n"
        "for (int n = 0; n < 2; ++n) {\n"
        "  td_ptx_mma_sync_aligned_m16n8k16_row_col_f32_f16_f16_f32("
        "D_ptr[n * 4], D_ptr[n * 4 + 1], D_ptr[n * 4 + 2], D_ptr[n * 4 + 3], "
        "((unsigned int *)A_ptr)[0], ((unsigned int *)A_ptr)[1], "
        "((unsigned int *)A_ptr)[2], ((unsigned int *)A_ptr)[3], "
        "((unsigned int *)B_ptr)[n * 2], ((unsigned int *)B_ptr)[n * 2 + 1], "
        "D_ptr[n * 4], D_ptr[n * 4 + 1], D_ptr[n * 4 + 2], "
        "D_ptr[n * 4 + 3]);\n"
        "}\n");
    /* One helper: TVM's asm operand for operand, then the stand-in's
     * function under TD_EMU, a trap elsewhere. */
    assert_int_equal(count(p, "__forceinline__"), 1);
    assert_non_null(strstr(p, "#include <cuda_fp16.h>\n"));
    assert_non_null(strstr(p,
        "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};\"\n"
        "      : \"=f\"(d0), \"=f\"(d1), \"=f\"(d2), \"=f\"(d3)\n"
        "      : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), "
        "\"r\"(b1), \"f\"(c0), \"f\"(c1), \"f\"(c2), \"f\"(c3));\n"
        "#elif defined(TD_EMU)\n"));
    assert_non_null(strstr(p,
        "  td_emu_mma_sync_aligned_m16n8k16_row_col_f32_f16_f16_f32(d, a, b, "
        "c);\n"));
    assert_non_null(strstr(p, "  d3 = __uint_as_float(d[3]);\n#else\n"));
    assert_int_equal(count(p, "__builtin_trap();"), 1);
    td_free(c);
    td_free(p);
    c = print(ir, TD_LANG_TIRX, NULL);
    assert_string_equal(c,
        "for n in T.unroll(2):\n"
        "    T.ptx.mma(D.local()[n * 4], D.local()[n * 4 + 1], "
        "D.local()[n * 4 + 2], D.local()[n * 4 + 3], "
        "A.local().view(\"uint32\")[0], A.local().view(\"uint32\")[1], "
        "A.local().view(\"uint32\")[2], A.local().view(\"uint32\")[3], "
        "B.local().view(\"uint32\")[n * 2], "
        "B.local().view(\"uint32\")[n * 2 + 1], "
        "D.local()[n * 4], D.local()[n * 4 + 1], D.local()[n * 4 + 2], "
        "D.local()[n * 4 + 3], \"sync\", \"aligned\", \"m16n8k16\", \"row\", "
        "\"col\", \"f32\", \"f16\", \"f16\", \"f32\", \"\")\n");
    td_free(c);
    td_ir_free(ir);
}

/* Scratch operands are their own storage; a float16 accumulator is two
 * words; two kinds give two helpers in table order; int32 accumulators
 * are ints ("r"). */
static void test_mma_scratch_kinds(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *d = td_ir_scratch(ir, "acc", TD_F16, 4);
    td_ir_buf *a = td_ir_scratch(ir, "fa", TD_F16, 4);
    td_ir_buf *b = td_ir_scratch(ir, "fb", TD_F16, 2);
    td_ir_buf *di = td_ir_scratch(ir, "iacc", TD_I32, 4);
    td_ir_buf *ai = td_ir_scratch(ir, "ia", TD_I8, 16);
    td_ir_buf *bi = td_ir_scratch(ir, "ib", TD_I8, 8);
    td_expr *r[4] = {td_int(ir, 0), td_int(ir, 1), td_int(ir, 2),
                     td_int(ir, 3)};
    td_expr *c2[2] = {td_int(ir, 1), td_int(ir, 0)};
    td_ptx_mma s8 = {.kind = TD_MMA_M16N8K32_S8, .d = di, .a = ai, .b = bi,
                     .c = di, .d_regs = r, .a_words = r, .b_words = r,
                     .c_regs = r};
    td_ir_mma(ir, &s8);
    td_ptx_mma h = {.kind = TD_MMA_M16N8K8_F16ACC, .d = d, .a = a, .b = b,
                    .c = d, .d_regs = r, .a_words = r, .b_words = r,
                    .c_regs = c2};
    td_ir_mma(ir, &h);
    assert_int_equal(td_ir_status(ir), 0);
    char *p = NULL, *c = print(ir, TD_LANG_CUDA, &p);
    assert_non_null(strstr(c,
        "td_ptx_mma_sync_aligned_m16n8k32_row_col_s32_s8_s8_s32(iacc[0], "
        "iacc[1], iacc[2], iacc[3], ((unsigned int *)ia)[0], "
        "((unsigned int *)ia)[1], ((unsigned int *)ia)[2], "
        "((unsigned int *)ia)[3], ((unsigned int *)ib)[0], "
        "((unsigned int *)ib)[1], iacc[0], iacc[1], iacc[2], iacc[3]);\n"));
    assert_non_null(strstr(c,
        "td_ptx_mma_sync_aligned_m16n8k8_row_col_f16_f16_f16_f16("
        "((unsigned int *)acc)[0], ((unsigned int *)acc)[1], "
        "((unsigned int *)fa)[0], ((unsigned int *)fa)[1], "
        "((unsigned int *)fb)[0], ((unsigned int *)acc)[1], "
        "((unsigned int *)acc)[0]);\n"));
    /* Table order: the float16 accumulator (row 5) before int8 (row 7). */
    const char *h16 = strstr(p, "void td_ptx_mma_sync_aligned_m16n8k8_row_col"
                                "_f16_f16_f16_f16(unsigned int &d0, unsigned "
                                "int &d1, unsigned int a0, unsigned int a1, "
                                "unsigned int b0, unsigned int c0, unsigned "
                                "int c1) {");
    const char *hs8 = strstr(p, "void td_ptx_mma_sync_aligned_m16n8k32_row_col"
                                "_s32_s8_s8_s32(int &d0, int &d1, int &d2, "
                                "int &d3, unsigned int a0,");
    assert_non_null(h16);
    assert_non_null(hs8);
    assert_true(h16 < hs8);
    assert_non_null(strstr(p, "{%0, %1}, {%2, %3}, {%4}, {%5, %6};\"\n"
                              "      : \"=r\"(d0), \"=r\"(d1)\n"));
    assert_non_null(strstr(p, "  const unsigned int c[4] = {(unsigned int)c0,"
                              " (unsigned int)c1, (unsigned int)c2, "
                              "(unsigned int)c3};\n"));
    assert_non_null(strstr(p, "  d3 = (int)d[3];\n"));
    assert_non_null(strstr(p, "  d1 = (unsigned int)d[1];\n"));
    assert_non_null(strstr(p, "#include <cstdint>\n"));
    td_free(c);
    td_free(p);
    c = print(ir, TD_LANG_TIRX, NULL);
    assert_non_null(strstr(c,
        "T.ptx.mma(acc.view(\"uint32\")[0], acc.view(\"uint32\")[1], "
        "fa.view(\"uint32\")[0], fa.view(\"uint32\")[1], "
        "fb.view(\"uint32\")[0], acc.view(\"uint32\")[1], "
        "acc.view(\"uint32\")[0], \"sync\", \"aligned\", \"m16n8k8\", "
        "\"row\", \"col\", \"f16\", \"f16\", \"f16\", \"f16\", \"\")\n"));
    /* TVM's integer mma takes its accumulators as uint32. */
    assert_non_null(strstr(c, "T.ptx.mma(iacc.view(\"uint32\")[0], "
                              "iacc.view(\"uint32\")[1], "
                              "iacc.view(\"uint32\")[2], "
                              "iacc.view(\"uint32\")[3], "
                              "ia.view(\"uint32\")[0]"));
    /* ... with its optional slots (satfinite, bitop, popc) as TVM prints
     * them back. */
    assert_non_null(strstr(c, "\"m16n8k32\", \"row\", \"col\", \"\", "
                              "\"s32\", \"s8\", \"s8\", \"s32\", \"\", "
                              "\"\", \"\")\n"));
    td_free(c);
    td_ir_free(ir);
}

/* Refused (TD_EINVAL, sticky): no description, an unknown kind, operands
 * of the wrong dtype, a shared or global operand, a missing register, a
 * buffer of another IR. */
static void test_mma_refusals(void **state)
{
    (void)state;
    for (int k = 0; k < 9; k++) {
        td_ir *ir = td_ir_new(), *other = td_ir_new();
        td_ir_buf *D = td_ir_buffer(ir, "D", k == 2 ? TD_F16 : TD_F32,
                                    k == 4 ? "shared" : "local", 1,
                                    (int64_t[]){4});
        td_ir_buf *A = td_ir_buffer(ir, "A", k == 3 ? TD_BF16 : TD_F16,
                                    k == 5 ? "global" : "local", 1,
                                    (int64_t[]){8});
        td_ir_buf *B = k == 8 ? td_ir_buffer(other, "B", TD_F16, "local", 1,
                                             (int64_t[]){4})
                              : td_ir_buffer(ir, "B", TD_F16, "local", 1,
                                             (int64_t[]){4});
        td_expr *r[4] = {td_int(ir, 0), td_int(ir, 1), td_int(ir, 2),
                         k == 6 ? NULL : td_int(ir, 3)};
        td_ptx_mma m = {.kind = k == 1 ? TD_MMA_KIND_COUNT
                                       : TD_MMA_M16N8K16_F16,
                        .d = D, .a = A, .b = B, .c = D, .d_regs = r,
                        .a_words = r, .b_words = r,
                        .c_regs = k == 7 ? NULL : r};
        td_ir_mma(ir, k == 0 ? NULL : &m);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        /* Sticky: a valid node after it is not added. */
        m.kind = TD_MMA_M16N8K16_F16;
        td_ir_mma(ir, &m);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
        td_ir_free(other);
    }
}

/* Every allocation failure while building and printing an mma is
 * TD_ENOMEM, and leaks nothing. */
static void test_mma_alloc_failures(void **state)
{
    (void)state;
    alloc_install();
    bool done = false;
    long n;
    for (n = 1; !done && n < 10000; n++) {
        alloc_arm(n);
        g_ca.live = 0;
        td_ir *ir = td_ir_new();
        td_ir_buf *D = td_ir_buffer(ir, "D", TD_F32, "local", 1,
                                    (int64_t[]){4});
        td_ir_buf *A = td_ir_buffer(ir, "A", TD_BF16, "local", 1,
                                    (int64_t[]){8});
        td_expr *r[4] = {td_int(ir, 0), td_int(ir, 1), td_int(ir, 2),
                         td_int(ir, 3)};
        for (int i = 0; i < 40; i++) {
            td_ptx_mma m = {.kind = TD_MMA_M16N8K16_BF16, .d = D, .a = A,
                            .b = A, .c = D, .d_regs = r, .a_words = r,
                            .b_words = r, .c_regs = r};
            td_ir_mma(ir, &m);
        }
        int st = ir == NULL ? TD_ENOMEM : td_ir_status(ir);
        char *b = NULL, *p = NULL, *t = NULL;
        int e1 = -100, e2 = -100;
        if (st == 0) {
            e1 = td_ir_print(ir, TD_LANG_CUDA, 0, &b, &p);
            if (e1 == 0)
                e2 = td_ir_print(ir, TD_LANG_TIRX, 0, &t, NULL);
        }
        if (st != 0) {
            assert_int_equal(st, TD_ENOMEM);
        } else if (e1 != 0) {
            assert_int_equal(e1, TD_ENOMEM);
            assert_null(b);
        } else if (e2 != 0) {
            assert_int_equal(e2, TD_ENOMEM);
            assert_null(t);
        } else {
            assert_false(g_ca.failed);
            done = true;
            assert_int_equal(count(b, "td_ptx_mma_sync"), 40);
            assert_int_equal(count(t, "T.ptx.mma("), 40);
            assert_int_equal(count(p, "__forceinline__"), 1);
        }
        td_free(b);
        td_free(p);
        td_free(t);
        td_ir_free(ir);
        assert_int_equal(g_ca.live, 0);
    }
    td_set_allocator(NULL);
    assert_true(done);
    assert_true(n > 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mma_table),
        cmocka_unit_test(test_mma_print),
        cmocka_unit_test(test_mma_scratch_kinds),
        cmocka_unit_test(test_mma_refusals),
        cmocka_unit_test(test_mma_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
