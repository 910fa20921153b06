/*
 * Unit tests of the lowered IR: exact printed text in both languages,
 * simplification, identities and combiners of every dtype, intrinsics and
 * their preludes, sticky errors, NULL operands and allocation failures.
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
#include "model.h"
#include "codegen_internal.h"

#include "../common/td_test_alloc.h"

/* ---- helpers ------------------------------------------------------------ */

static void expect(const td_ir *ir, td_lang lang, int indent,
                   const char *body, const char *prelude)
{
    char *b = NULL, *p = NULL;
    assert_int_equal(td_ir_print(ir, lang, indent, &b, &p), 0);
    assert_non_null(b);
    assert_non_null(p);
    assert_string_equal(b, body);
    if (prelude != NULL)
        assert_string_equal(p, prelude);
    td_free(b);
    td_free(p);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

/* The seed: for spa in 1: B[spa] = id; for red in 4: B[spa] = B[spa] op
 * A[spa * 4 + red]. */
static td_ir *seed(td_combiner c, td_dtype t, bool accum)
{
    td_ir *ir = td_ir_new();
    int64_t s4[] = {4}, s1[] = {1};
    td_ir_buf *A = td_ir_buffer(ir, "A_local", t, "local", 1, s4);
    td_ir_buf *B = td_ir_buffer(ir, "B_local", t, "local", 1, s1);
    td_var *spa = td_ir_for(ir, "spa", td_int(ir, 1), TD_LOOP_SERIAL);
    if (!accum)
        td_ir_store1(ir, B, td_var_ref(ir, spa), td_identity(ir, c, t));
    td_var *red = td_ir_for(ir, "red", td_int(ir, 4), TD_LOOP_SERIAL);
    td_expr *src = td_add(ir, td_mul(ir, td_var_ref(ir, spa), td_int(ir, 4)),
                          td_var_ref(ir, red));
    td_ir_store1(ir, B, td_var_ref(ir, spa),
                 td_combine(ir, c, td_load1(ir, B, td_var_ref(ir, spa)),
                            td_load1(ir, A, src)));
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    return ir;
}

/* ---- tests -------------------------------------------------------------- */

static void test_seed(void **state)
{
    (void)state;
    td_ir *ir = seed(TD_COMBINE_SUM, TD_F32, false);
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "B_local_ptr[0] = 0.000000e+00f;\n"
           "for (int red = 0; red < 4; ++red) {\n"
           "  B_local_ptr[0] = B_local_ptr[0] + A_local_ptr[red];\n"
           "}\n",
           "");
    expect(ir, TD_LANG_TIRX, 0,
           "for spa in T.serial(1):\n"
           "    B_local[spa] = T.float32(0)\n"
           "    for red in T.serial(4):\n"
           "        B_local[spa] = B_local[spa] + A_local[spa * 4 + red]\n",
           "");
    /* Printing is repeatable and leaves the IR as it was. */
    expect(ir, TD_LANG_CUDA, 1,
           "  B_local_ptr[0] = 0.000000e+00f;\n"
           "  for (int red = 0; red < 4; ++red) {\n"
           "    B_local_ptr[0] = B_local_ptr[0] + A_local_ptr[red];\n"
           "  }\n",
           "");
    expect(ir, TD_LANG_TIRX, 1,
           "    for spa in T.serial(1):\n"
           "        B_local[spa] = T.float32(0)\n"
           "        for red in T.serial(4):\n"
           "            B_local[spa] = B_local[spa] + A_local[spa * 4 + red]\n",
           "");
    /* The prelude and body pointers are optional. */
    char *b = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, NULL), 0);
    assert_non_null(b);
    td_free(b);
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, NULL, NULL), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, -1, &b, NULL), TD_EINVAL);
    assert_null(b);
    assert_int_equal(td_ir_print(ir, (td_lang)7, 0, &b, NULL), TD_EINVAL);
    td_ir_free(ir);
}

/* td_ir_buffer_layout: a dimension split over two iters (a K-tiled shared
 * tile), an offset; CUDA indexes the offset, TIRx the logical indices. */
static void test_buffer_layout(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    const int64_t shape[2] = {8, 16};
    td_ir_buf *s = td_ir_buffer(ir, "S", TD_F32, "shared", 2, shape);
    td_ir_buf *a = td_ir_buffer(ir, "A", TD_F32, "global", 2, shape);
    const int64_t ext[3] = {8, 2, 8}, str[3] = {8, 64, 1};
    const int seps[3] = {0, 1, 3};
    assert_int_equal(td_ir_buffer_layout(ir, s, 3, ext, str, seps, 4), 0);
    td_var *v = td_ir_for(ir, "v", td_int(ir, 8), TD_LOOP_SERIAL);
    td_var *w = td_ir_for(ir, "w", td_int(ir, 16), TD_LOOP_SERIAL);
    td_expr *i[2] = {td_var_ref(ir, v), td_var_ref(ir, w)};
    td_expr *j[2] = {td_var_ref(ir, v), td_var_ref(ir, w)};
    td_ir_store(ir, s, 2, i, td_load(ir, a, 2, j));
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    expect(ir, TD_LANG_CUDA, 0,
           "for (int v = 0; v < 8; ++v) {\n"
           "  for (int w = 0; w < 16; ++w) {\n"
           "    S_ptr[4 + v * 8 + w % 8 + w / 8 * 64] = A_ptr[v * 16 + w];\n"
           "  }\n"
           "}\n",
           "");
    expect(ir, TD_LANG_TIRX, 0,
           "for v in T.serial(8):\n"
           "    for w in T.serial(16):\n"
           "        S[v, w] = A[v, w]\n",
           NULL);
    td_ir_free(ir);

    /* Misuse: extents that do not multiply to the shape, a scratch
     * array, a negative offset; each leaves the IR failed. */
    const int64_t bad_ext[3] = {8, 2, 4};
    ir = td_ir_new();
    s = td_ir_buffer(ir, "S", TD_F32, "shared", 2, shape);
    assert_int_equal(td_ir_buffer_layout(ir, s, 3, bad_ext, str, seps, 0),
                     TD_EINVAL);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    td_ir_buf *t = td_ir_scratch(ir, "t", TD_F32, 128);
    const int64_t one_ext[1] = {128}, one_str[1] = {1};
    const int one_seps[2] = {0, 1};
    assert_int_equal(td_ir_buffer_layout(ir, t, 1, one_ext, one_str,
                                         one_seps, 0),
                     TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    s = td_ir_buffer(ir, "S", TD_F32, "shared", 2, shape);
    assert_int_equal(td_ir_buffer_layout(ir, s, 3, ext, str, seps, -1),
                     TD_EINVAL);
    td_ir_free(ir);
}

/* PTX container accesses: the chains, the 8-bit container through a
 * 16-bit register, the helpers once each, TVM's positional TIRx; and
 * every form PTX does not have refused. */
static void test_ptx_access(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    const int64_t g_shape[1] = {64}, s_shape[2] = {4, 16}, r_shape[1] = {8};
    td_ir_buf *g = td_ir_buffer(ir, "G", TD_U8, "global", 1, g_shape);
    td_ir_buf *sm = td_ir_buffer(ir, "S", TD_U8, "shared.dyn", 2, s_shape);
    td_ir_buf *r = td_ir_buffer(ir, "R", TD_U8, "local", 1, r_shape);
    td_expr *gi[1] = {td_int(ir, 5)};
    td_expr *si[2] = {td_int(ir, 1), td_int(ir, 3)};
    td_ptx_access ld = {.mem = g, .n = 1, .idx = gi, .bits = 8, .lanes = 1,
                        .regs = r, .word = td_int(ir, 2), .nc = true,
                        .l1 = TD_PTX_L1_EVICT_LAST};
    td_ir_ptx_ld(ir, &ld);
    td_ptx_access st = {.mem = sm, .n = 2, .idx = si, .bits = 8,
                        .lanes = 1, .regs = r, .word = td_int(ir, 2)};
    td_ir_ptx_st(ir, &st);
    td_ir_ptx_st(ir, &st); /* the same helper, printed once */
    assert_int_equal(td_ir_status(ir), 0);
    char *b = NULL, *p = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, &p), 0);
    assert_string_equal(b,
        "td_ptx_ld_global_nc_L1__evict_last_u8(R_ptr[2], &G_ptr[5]);\n"
        "td_ptx_st_shared_u8(&S_ptr[19], R_ptr[2]);\n"
        "td_ptx_st_shared_u8(&S_ptr[19], R_ptr[2]);\n");
    assert_int_equal(count(p, "__device__ void td_ptx_st_shared_u8("), 1);
    assert_non_null(strstr(p, "asm volatile(\"ld.global.nc.L1::evict_last.u8 "
                              "%0, [%1];\"\n      : \"=h\"(t0) : \"l\"(addr) "
                              ": \"memory\");\n  d0 = (unsigned char)t0;"));
    assert_non_null(strstr(p, "\"h\"((unsigned short)s0) : \"memory\""));
    assert_non_null(strstr(p, "#else\n  memcpy(&d0, (const char *)addr + 0, 1);"));
    assert_non_null(strstr(p, "#include <cstring>"));
    td_free(b);
    td_free(p);
    expect(ir, TD_LANG_TIRX, 0,
           "T.ptx.ld(R[2], T.address_of(G[5]), \"\", \"\", \"\", \"global\", "
           "\"\", \"nc\", \"L1::evict_last\", \"\", \"\", \"u8\", \"\")\n"
           "T.ptx.st(T.cuda.cvta_generic_to_shared(T.address_of(S[1, 3])), "
           "R[2], \"\", \"\", \"\", \"shared\", \"\", \"\", \"\", \"u8\", "
           "\"\")\n"
           "T.ptx.st(T.cuda.cvta_generic_to_shared(T.address_of(S[1, 3])), "
           "R[2], \"\", \"\", \"\", \"shared\", \"\", \"\", \"\", \"u8\", "
           "\"\")\n",
           NULL);
    td_ir_free(ir);

    /* Refused: 16-bit vectors, v8 in shared memory, hints on a store or
     * on a shared load, an L2 eviction priority below 256 bits, a
     * register buffer that is not local, a 3-lane access. */
    for (int k = 0; k < 7; k++) {
        ir = td_ir_new();
        g = td_ir_buffer(ir, "G", TD_U32, "global", 1, g_shape);
        sm = td_ir_buffer(ir, "S", TD_U32, "shared", 2, s_shape);
        r = td_ir_buffer(ir, "R", TD_U32, "local", 1, r_shape);
        td_expr *i1[1] = {td_int(ir, 0)};
        td_expr *i2[2] = {td_int(ir, 0), td_int(ir, 0)};
        td_ptx_access a = {.mem = g, .n = 1, .idx = i1, .bits = 32,
                           .lanes = 4, .regs = r, .word = td_int(ir, 0)};
        bool store = false;
        switch (k) {
        case 0: a.bits = 16; a.lanes = 2; break;
        case 1: a.mem = sm; a.n = 2; a.idx = i2; a.lanes = 8; break;
        case 2: a.nc = true; store = true; break;
        case 3: a.mem = sm; a.n = 2; a.idx = i2;
                a.prefetch = TD_PTX_PREFETCH_64B; break;
        case 4: a.l2 = TD_PTX_L2_EVICT_FIRST; break;
        case 5: a.regs = g; break;
        default: a.lanes = 3; break;
        }
        if (store)
            td_ir_ptx_st(ir, &a);
        else
            td_ir_ptx_ld(ir, &a);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
    td_ptx_l1 l1;
    assert_int_equal(td_ptx_l1_parse("L1::no_allocate", &l1), 0);
    assert_int_equal(l1, TD_PTX_L1_NO_ALLOCATE);
    assert_int_equal(td_ptx_l1_parse("", &l1), TD_ENOENT);
    assert_string_equal(td_ptx_prefetch_name(TD_PTX_PREFETCH_128B), "L2::128B");
    assert_null(td_ptx_l2_name(TD_PTX_L2_COUNT));
}

/* cp.async: the three forms (plain with a prefetch, a guard, a zero
 * fill), each helper once with its host half, TVM's T.ptx.cp; refusals
 * of sizes, spaces and a zero fill without a guard. */
static void test_cp_async(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    const int64_t g_shape[1] = {256}, s_shape[2] = {4, 32};
    td_ir_buf *g = td_ir_buffer(ir, "A", TD_F16, "global", 1, g_shape);
    td_ir_buf *sm = td_ir_buffer(ir, "S", TD_F16, "shared", 2, s_shape);
    td_var *t = td_ir_let(ir, "t", TD_I32,
                          td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0,
                                       NULL));
    td_expr *so = td_mul(ir, td_var_ref(ir, t), td_int(ir, 8));
    td_ptx_cp_async c = {.dst = sm, .dst_offset = so, .src = g,
                         .src_offset = td_add(ir, so, td_int(ir, 64)),
                         .bytes = 16, .prefetch = TD_PTX_PREFETCH_128B};
    td_ir_cp_async(ir, &c);
    td_ir_cp_async(ir, &c); /* the same helper, printed once */
    td_ptx_cp_async pc = {.dst = sm, .dst_offset = td_int(ir, 4), .src = g,
                          .src_offset = td_int(ir, 8), .bytes = 8,
                          .pred = td_param(ir, "p", TD_I32)};
    td_ir_cp_async(ir, &pc);
    pc.bytes = 4;
    pc.zfill = true;
    pc.pred = td_param(ir, "p", TD_I32);
    td_ir_cp_async(ir, &pc);
    assert_int_equal(td_ir_status(ir), 0);
    char *b = NULL, *p = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, &p), 0);
    assert_string_equal(b,
        "int t = (int)threadIdx.x;\n"
        "td_ptx_cp_async_cg_shared_global_L2__128B_16(S_ptr + t * 8, A_ptr + (t * 8 + 64));\n"
        "td_ptx_cp_async_cg_shared_global_L2__128B_16(S_ptr + t * 8, A_ptr + (t * 8 + 64));\n"
        "td_ptx_cp_async_ca_shared_global_8_pred(S_ptr + 4, A_ptr + 8, p);\n"
        "td_ptx_cp_async_ca_shared_global_4_zfill(S_ptr + 4, A_ptr + 8, p);\n");
    assert_int_equal(count(p, "__device__ void td_ptx_cp_async_cg_shared_global_L2__128B_16("), 1);
    assert_non_null(strstr(p, "asm volatile(\"cp.async.cg.shared.global.L2::128B "
                              "[%0], [%1], 16;\"\n      : : \"r\"(a), \"l\"(src) : "
                              "\"memory\");\n#else\n  memcpy(dst, src, 16);"));
    assert_non_null(strstr(p, "@p cp.async.ca.shared.global [%0], [%1], 8;"));
    assert_non_null(strstr(p, "#else\n  if (pred != 0)\n    memcpy(dst, src, 8);\n#endif"));
    assert_non_null(strstr(p, "cp.async.ca.shared.global [%0], [%1], 4, %2;\"\n"
                              "      : : \"r\"(a), \"l\"(src), \"r\"(pred != 0 ? 4U : 0U)"));
    assert_non_null(strstr(p, "else\n    memset(dst, 0, 4);"));
    td_free(b);
    td_free(p);
    expect(ir, TD_LANG_TIRX, 0,
           "t: T.int32 = threadIdx.x\n"
           "T.ptx.cp(T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
           "T.address_of(S[0, 0]), t * 8 * 2, \"float16\")), T.ptr_byte_offset("
           "T.address_of(A[0]), (t * 8 + 64) * 2, \"float16\"), 16, \"async\", "
           "\"cg\", \"shared\", \"global\", \"\", \"L2::128B\", \"\")\n"
           "T.ptx.cp(T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
           "T.address_of(S[0, 0]), t * 8 * 2, \"float16\")), T.ptr_byte_offset("
           "T.address_of(A[0]), (t * 8 + 64) * 2, \"float16\"), 16, \"async\", "
           "\"cg\", \"shared\", \"global\", \"\", \"L2::128B\", \"\")\n"
           "T.ptx.cp(T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
           "T.address_of(S[0, 0]), 8, \"float16\")), T.ptr_byte_offset("
           "T.address_of(A[0]), 16, \"float16\"), 8, p, \"async\", \"ca\", "
           "\"shared\", \"global\", \"\", \"\", \"pred\")\n"
           "T.ptx.cp(T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
           "T.address_of(S[0, 0]), 8, \"float16\")), T.ptr_byte_offset("
           "T.address_of(A[0]), 16, \"float16\"), 4, T.Cast(\"uint32\", "
           "T.if_then_else(p != 0, 4, 0)), \"async\", \"ca\", \"shared\", "
           "\"global\", \"\", \"\", \"\")\n",
           NULL);
    td_ir_free(ir);

    /* The groups the caller writes: commit, wait_group n, wait_all. */
    ir = td_ir_new();
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_CP_ASYNC_COMMIT, TD_I32, 0,
                                NULL));
    td_expr *one[1] = {td_int(ir, 1)};
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_CP_ASYNC_WAIT, TD_I32, 1, one));
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_CP_ASYNC_WAIT_ALL, TD_I32, 0,
                                NULL));
    assert_int_equal(td_ir_status(ir), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, &p), 0);
    assert_string_equal(b, "td_cp_async_commit_group();\n"
                           "td_cp_async_wait_group<1>();\n"
                           "td_cp_async_wait_all();\n");
    assert_non_null(strstr(p, "asm volatile(\"cp.async.commit_group;\" : : : "
                              "\"memory\");\n#else\n#endif"));
    assert_non_null(strstr(p, "template <int N>\n__forceinline__ __device__ "
                              "void td_cp_async_wait_group() {\n#ifdef "
                              "__CUDA_ARCH__\n  asm volatile(\"cp.async."
                              "wait_group %0;\" : : \"n\"(N)"));
    assert_non_null(strstr(p, "asm volatile(\"cp.async.wait_all;\""));
    td_free(b);
    td_free(p);
    expect(ir, TD_LANG_TIRX, 0,
           "T.ptx.cp(\"async\", \"commit_group\", \"\")\n"
           "T.ptx.cp(1, \"async\", \"wait_group\", \"\")\n"
           "T.ptx.cp(\"async\", \"wait_all\", \"\")\n",
           NULL);
    td_ir_free(ir);
    /* wait_group's count: a constant of 0..7 */
    for (int k = 0; k < 2; k++) {
        ir = td_ir_new();
        td_expr *n[1] = {k == 0 ? td_int(ir, 8)
                                : td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X,
                                               TD_I32, 0, NULL)};
        assert_null(td_intrinsic(ir, TD_INTRIN_CP_ASYNC_WAIT, TD_I32, 1, n));
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }

    /* Refused: 2 or 12 bytes, a global destination, a shared source, a
     * zero fill without a guard, no offset. */
    for (int k = 0; k < 6; k++) {
        ir = td_ir_new();
        g = td_ir_buffer(ir, "A", TD_F16, "global", 1, g_shape);
        sm = td_ir_buffer(ir, "S", TD_F16, "shared", 2, s_shape);
        td_ptx_cp_async bad = {.dst = sm, .dst_offset = td_int(ir, 0),
                               .src = g, .src_offset = td_int(ir, 0),
                               .bytes = 16};
        switch (k) {
        case 0: bad.bytes = 2; break;
        case 1: bad.bytes = 12; break;
        case 2: bad.dst = g; break;
        case 3: bad.src = sm; break;
        case 4: bad.zfill = true; break;
        default: bad.src_offset = NULL; break;
        }
        td_ir_cp_async(ir, &bad);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

/* ldmatrix / stmatrix: the per-lane offset address, the words, TVM's
 * positional TIRx, the helper without a host half; refusals. */
static void test_ptx_matrix(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    const int64_t s_shape[2] = {8, 32}, r_shape[1] = {8};
    td_ir_buf *sm = td_ir_buffer(ir, "Sm", TD_F16, "shared", 2, s_shape);
    td_ir_buf *r = td_ir_buffer(ir, "Rg", TD_F16, "local", 1, r_shape);
    td_var *lane = td_ir_let(ir, "lane", TD_I32,
                             td_mod(ir, td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X,
                                                     TD_I32, 0, NULL),
                                    td_int(ir, 32)));
    td_expr *off = td_mul(ir, td_mod(ir, td_var_ref(ir, lane), td_int(ir, 8)),
                          td_int(ir, 32));
    td_ptx_matrix m = {.mem = sm, .offset = off, .num = 4, .regs = r,
                       .word = td_int(ir, 0)};
    td_ir_ldmatrix(ir, &m);
    td_ptx_matrix st = {.mem = sm, .offset = td_var_ref(ir, lane), .num = 2,
                        .trans = true, .regs = r, .word = td_int(ir, 2)};
    td_ir_stmatrix(ir, &st);
    assert_int_equal(td_ir_status(ir), 0);
    char *b = NULL, *p = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, &p), 0);
    assert_string_equal(b,
        "int lane = (int)threadIdx.x % 32;\n"
        "td_ptx_ldmatrix_sync_aligned_m8n8_x4_shared_b16(((unsigned int *)Rg_ptr)[0], "
        "((unsigned int *)Rg_ptr)[1], ((unsigned int *)Rg_ptr)[2], "
        "((unsigned int *)Rg_ptr)[3], Sm_ptr + lane % 8 * 32);\n"
        "td_ptx_stmatrix_sync_aligned_m8n8_x2_trans_shared_b16(Sm_ptr + lane, "
        "((unsigned int *)Rg_ptr)[2], ((unsigned int *)Rg_ptr)[3]);\n");
    assert_non_null(strstr(p, "asm volatile(\"ldmatrix.sync.aligned.m8n8.x4."
                              "shared.b16 {%0, %1, %2, %3}, [%4];\"\n      : "
                              "\"=r\"(d0), \"=r\"(d1), \"=r\"(d2), \"=r\"(d3) : "
                              "\"r\"(a) : \"memory\");"));
    assert_non_null(strstr(p, "asm volatile(\"stmatrix.sync.aligned.m8n8.x2."
                              "trans.shared.b16 [%0], {%1, %2};\"\n      : : "
                              "\"r\"(a), \"r\"(s0), \"r\"(s1) : \"memory\");"));
    assert_int_equal(count(p, "__builtin_trap();"), 2);
    td_free(b);
    td_free(p);
    expect(ir, TD_LANG_TIRX, 0,
           "lane: T.int32 = threadIdx.x % 32\n"
           "T.ptx.ldmatrix(Rg.view(\"uint32\")[0], Rg.view(\"uint32\")[1], "
           "Rg.view(\"uint32\")[2], Rg.view(\"uint32\")[3], "
           "T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
           "T.address_of(Sm[0, 0]), lane % 8 * 32 * 2, \"float16\")), "
           "\"sync\", \"aligned\", "
           "\"m8n8\", \"x4\", \"\", \"shared\", \"b16\", \"\")\n"
           "T.ptx.stmatrix(T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
           "T.address_of(Sm[0, 0]), lane * 2, \"float16\")), Rg.view(\"uint32\")[2], "
           "Rg.view(\"uint32\")[3], \"sync\", \"aligned\", \"m8n8\", \"x2\", "
           "\"trans\", \"shared\", \"b16\", \"\")\n",
           NULL);
    td_ir_free(ir);

    /* Refused: 32-bit elements, num 3, global memory, no offset. */
    for (int k = 0; k < 4; k++) {
        ir = td_ir_new();
        sm = td_ir_buffer(ir, "Sm", k == 0 ? TD_F32 : TD_F16,
                          k == 2 ? "global" : "shared", 2, s_shape);
        r = td_ir_buffer(ir, "Rg", TD_F16, "local", 1, r_shape);
        td_ptx_matrix bad = {.mem = sm, .offset = k == 3 ? NULL : td_int(ir, 0),
                             .num = k == 1 ? 3 : 4, .regs = r,
                             .word = td_int(ir, 0)};
        td_ir_ldmatrix(ir, &bad);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

/* td_ptx_matrix.words: an instruction's registers one by one (a fragment
 * whose words are not consecutive); a NULL word among them is refused. */
static void test_ptx_matrix_words(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    const int64_t s_shape[1] = {256}, r_shape[1] = {16};
    td_ir_buf *sm = td_ir_buffer(ir, "Sm", TD_BF16, "shared", 1, s_shape);
    td_ir_buf *r = td_ir_buffer(ir, "Rg", TD_BF16, "local", 1, r_shape);
    td_expr *w[4] = {td_int(ir, 0), td_int(ir, 2), td_int(ir, 4),
                     td_int(ir, 6)};
    td_ptx_matrix m = {.mem = sm, .offset = td_int(ir, 8), .num = 4,
                       .regs = r, .words = w};
    td_ir_ldmatrix(ir, &m);
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "td_ptx_ldmatrix_sync_aligned_m8n8_x4_shared_b16(((unsigned int *)Rg_ptr)[0], "
           "((unsigned int *)Rg_ptr)[2], ((unsigned int *)Rg_ptr)[4], "
           "((unsigned int *)Rg_ptr)[6], Sm_ptr + 8);\n",
           NULL);
    expect(ir, TD_LANG_TIRX, 0,
           "T.ptx.ldmatrix(Rg.view(\"uint32\")[0], Rg.view(\"uint32\")[2], "
           "Rg.view(\"uint32\")[4], Rg.view(\"uint32\")[6], "
           "T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
           "T.address_of(Sm[0]), 16, \"bfloat16\")), \"sync\", \"aligned\", \"m8n8\", "
           "\"x4\", \"\", \"shared\", \"b16\", \"\")\n",
           NULL);
    td_ir_free(ir);

    ir = td_ir_new();
    sm = td_ir_buffer(ir, "Sm", TD_BF16, "shared", 1, s_shape);
    r = td_ir_buffer(ir, "Rg", TD_BF16, "local", 1, r_shape);
    td_expr *bad[2] = {td_int(ir, 0), NULL};
    td_ptx_matrix mb = {.mem = sm, .offset = td_int(ir, 0), .num = 2,
                        .regs = r, .words = bad};
    td_ir_stmatrix(ir, &mb);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
}

static void test_seed_accum_max(void **state)
{
    (void)state;
    td_ir *ir = seed(TD_COMBINE_MAX, TD_F32, true);
    expect(ir, TD_LANG_CUDA, 0,
           "for (int red = 0; red < 4; ++red) {\n"
           "  B_local_ptr[0] = fmaxf(B_local_ptr[0], A_local_ptr[red]);\n"
           "}\n",
           "");
    expect(ir, TD_LANG_TIRX, 0,
           "for spa in T.serial(1):\n"
           "    for red in T.serial(4):\n"
           "        B_local[spa] = T.max(B_local[spa], A_local[spa * 4 + red])\n",
           "");
    td_ir_free(ir);
}

/* A 2-D source [3, 4] reduced over its last axis into B[3], and the same
 * with an outer loop of extent 1 over a 3-D source [1, 2, 4]. */
static void test_nested_folding(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t sa[] = {3, 4}, sb[] = {3};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F32, "local", 2, sa);
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_F32, "local", 1, sb);
    td_var *spa = td_ir_for(ir, "spa", td_int(ir, 3), TD_LOOP_SERIAL);
    td_var *red = td_ir_for(ir, "red", td_int(ir, 4), TD_LOOP_UNROLL);
    td_expr *ia[] = {td_var_ref(ir, spa), td_var_ref(ir, red)};
    td_ir_store1(ir, B, td_var_ref(ir, spa),
                 td_combine(ir, TD_COMBINE_SUM,
                            td_load1(ir, B, td_var_ref(ir, spa)),
                            td_load(ir, A, 2, ia)));
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "for (int spa = 0; spa < 3; ++spa) {\n"
           "  #pragma unroll\n"
           "  for (int red = 0; red < 4; ++red) {\n"
           "    B_ptr[spa] = B_ptr[spa] + A_ptr[spa * 4 + red];\n"
           "  }\n"
           "}\n",
           "");
    expect(ir, TD_LANG_TIRX, 0,
           "for spa in T.serial(3):\n"
           "    for red in T.unroll(4):\n"
           "        B[spa] = B[spa] + A[spa, red]\n",
           "");
    td_ir_free(ir);

    ir = td_ir_new();
    int64_t s3[] = {1, 2, 4}, s2[] = {1, 2};
    A = td_ir_buffer(ir, "A", TD_F32, "local", 3, s3);
    B = td_ir_buffer(ir, "B", TD_F32, "local", 2, s2);
    td_var *o = td_ir_for(ir, "o", td_add(ir, td_int(ir, 0), td_int(ir, 1)),
                          TD_LOOP_SERIAL);
    td_var *i = td_ir_for(ir, "i", td_int(ir, 2), TD_LOOP_SERIAL);
    red = td_ir_for(ir, "red", td_mul(ir, td_int(ir, 2), td_int(ir, 2)),
                    TD_LOOP_SERIAL);
    td_expr *i3[] = {td_var_ref(ir, o), td_var_ref(ir, i),
                     td_var_ref(ir, red)};
    td_expr *i2[] = {td_var_ref(ir, o), td_var_ref(ir, i)};
    td_expr *i2b[] = {td_mul(ir, td_var_ref(ir, o), td_int(ir, 7)),
                      td_add(ir, td_var_ref(ir, i), td_int(ir, 0))};
    td_ir_store(ir, B, 2, i2,
                td_combine(ir, TD_COMBINE_MIN, td_load(ir, B, 2, i2b),
                           td_load(ir, A, 3, i3)));
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    expect(ir, TD_LANG_CUDA, 0,
           "for (int i = 0; i < 2; ++i) {\n"
           "  for (int red = 0; red < 4; ++red) {\n"
           "    B_ptr[i] = fminf(B_ptr[i], A_ptr[i * 4 + red]);\n"
           "  }\n"
           "}\n",
           "");
    expect(ir, TD_LANG_TIRX, 0,
           "for o in T.serial(1):\n"
           "    for i in T.serial(2):\n"
           "        for red in T.serial(4):\n"
           "            B[o, i] = T.min(B[o * 7, i], A[o, i, red])\n",
           "");
    td_ir_free(ir);
}

/* Index arithmetic: identities of + - * / %, constant folding, and the
 * cases that must not fold. */
static void test_fold_rules(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {1000};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_I32, "local", 1, s);
    td_var *x = td_ir_for(ir, "x", td_int(ir, 5), TD_LOOP_SERIAL);
#define X td_var_ref(ir, x)
#define I(v) td_int(ir, v)
    td_expr *cases[] = {
        td_add(ir, I(0), X),                       /* x */
        td_sub(ir, X, I(0)),                       /* x */
        td_mul(ir, I(1), X),                       /* x */
        td_mul(ir, X, I(0)),                       /* 0 */
        td_div(ir, X, I(1)),                       /* x */
        td_mod(ir, X, I(1)),                       /* 0 */
        td_add(ir, td_mul(ir, I(6), I(7)), X),     /* 42 + x */
        td_div(ir, I(-7), I(2)),                   /* not folded */
        td_mod(ir, I(7), I(0)),                    /* not folded */
        td_sub(ir, X, td_sub(ir, X, I(1))),        /* x - (x - 1) */
        td_mul(ir, td_add(ir, X, I(1)), I(3)),     /* (x + 1) * 3 */
        td_binary(ir, TD_OP_MAX, I(3), I(9)),      /* 9 */
        td_binary(ir, TD_OP_SHL, I(1), I(4)),      /* 16 */
        td_binary(ir, TD_OP_BITAND, X, I(3)),      /* x & 3 */
        td_mul(ir, I(INT64_MAX), I(2)),            /* overflow: kept */
        td_int(ir, INT32_MIN),
        td_int(ir, (int64_t)1 << 40),
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    for (int k = 0; k < n; k++)
        td_ir_store1(ir, A, I(k), cases[k]);
    td_ir_if(ir, td_binary(ir, TD_OP_AND, td_lt(ir, X, I(3)),
                           td_eq(ir, td_binary(ir, TD_OP_BITAND, X, I(1)),
                                 I(0))));
    td_ir_eval(ir, td_extern_call(ir, "touch", TD_I32, 1,
                                  (td_expr *[]){td_mul(ir, X, I(0))}));
    td_ir_end_if(ir);
    td_ir_end_for(ir);
#undef X
#undef I
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "for (int x = 0; x < 5; ++x) {\n"
           "  A_ptr[0] = x;\n"
           "  A_ptr[1] = x;\n"
           "  A_ptr[2] = x;\n"
           "  A_ptr[3] = 0;\n"
           "  A_ptr[4] = x;\n"
           "  A_ptr[5] = 0;\n"
           "  A_ptr[6] = 42 + x;\n"
           "  A_ptr[7] = -7 / 2;\n"
           "  A_ptr[8] = 7 % 0;\n"
           "  A_ptr[9] = x - (x - 1);\n"
           "  A_ptr[10] = (x + 1) * 3;\n"
           "  A_ptr[11] = 9;\n"
           "  A_ptr[12] = 16;\n"
           "  A_ptr[13] = x & 3;\n"
           "  A_ptr[14] = 9223372036854775807LL * 2;\n"
           "  A_ptr[15] = (-2147483647 - 1);\n"
           "  A_ptr[16] = 1099511627776LL;\n"
           "  if (x < 3 && (x & 1) == 0) {\n"
           "    touch(0);\n"
           "  }\n"
           "}\n",
           "");
    expect(ir, TD_LANG_TIRX, 0,
           "for x in T.serial(5):\n"
           "    A[0] = x\n"
           "    A[1] = x\n"
           "    A[2] = x\n"
           "    A[3] = 0\n"
           "    A[4] = x\n"
           "    A[5] = 0\n"
           "    A[6] = 42 + x\n"
           "    A[7] = -7 // 2\n"
           "    A[8] = 7 % 0\n"
           "    A[9] = x - (x - 1)\n"
           "    A[10] = (x + 1) * 3\n"
           "    A[11] = 9\n"
           "    A[12] = 16\n"
           "    A[13] = x & 3\n"
           "    A[14] = 9223372036854775807 * 2\n"
           "    A[15] = -2147483648\n"
           "    A[16] = 1099511627776\n"
           "    if x < 3 and x & 1 == 0:\n"
           "        touch(0)\n",
           "");
    td_ir_free(ir);
}

/* An extern call is never dropped by x * 0. */
static void test_fold_keeps_calls(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {4};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_I32, "local", 1, s);
    td_expr *call = td_extern_call(ir, "f", TD_I32, 0, NULL);
    td_ir_store1(ir, A, td_mul(ir, call, td_int(ir, 0)), td_int(ir, 1));
    expect(ir, TD_LANG_CUDA, 0, "A_ptr[f() * 0] = 1;\n", "");
    expect(ir, TD_LANG_TIRX, 0, "A[f() * 0] = 1\n", "");
    td_ir_free(ir);
}

/* An index unflattened and flattened again over the same extents folds
 * back: (x / c) * (c * k) + (x % c) * k == x * k; near misses stay. */
static void test_fold_unsplit(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {64};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_I32, "local", 1, s);
    td_var *x = td_ir_for(ir, "x", td_int(ir, 5), TD_LOOP_SERIAL);
#define X td_var_ref(ir, x)
#define I(v) td_int(ir, v)
    td_expr *cases[] = {
        td_add(ir, td_mul(ir, td_div(ir, X, I(3)), I(3)), td_mod(ir, X, I(3))),
        td_add(ir, td_mul(ir, td_div(ir, X, I(3)), I(12)),
               td_mul(ir, td_mod(ir, X, I(3)), I(4))),
        td_add(ir, td_mod(ir, X, I(8)), td_mul(ir, td_div(ir, X, I(8)), I(8))),
        /* near misses: another divisor, another scale, another variable */
        td_add(ir, td_mul(ir, td_div(ir, X, I(3)), I(3)), td_mod(ir, X, I(4))),
        td_add(ir, td_mul(ir, td_div(ir, X, I(3)), I(10)),
               td_mul(ir, td_mod(ir, X, I(3)), I(4))),
        td_add(ir, td_mul(ir, td_div(ir, X, I(3)), I(3)),
               td_mod(ir, td_add(ir, X, I(1)), I(3))),
    };
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++)
        td_ir_store1(ir, A, cases[k], I(k));
    td_ir_end_for(ir);
#undef X
#undef I
    expect(ir, TD_LANG_CUDA, 0,
           "for (int x = 0; x < 5; ++x) {\n"
           "  A_ptr[x] = 0;\n"
           "  A_ptr[x * 4] = 1;\n"
           "  A_ptr[x] = 2;\n"
           "  A_ptr[x / 3 * 3 + x % 4] = 3;\n"
           "  A_ptr[x / 3 * 10 + x % 3 * 4] = 4;\n"
           "  A_ptr[x / 3 * 3 + (x + 1) % 3] = 5;\n"
           "}\n",
           "");
    td_ir_free(ir);
}

/* Identities of every dtype and combiner, in both languages. */
static const struct {
    td_dtype t;
    const char *cuda[3]; /* sum, max, min */
    const char *tirx[3];
    const char *prelude;
} idents[] = {
    {TD_F32,
     {"0.000000e+00f", "-FLT_MAX", "FLT_MAX"},
     {"T.float32(0)", "T.min_value(\"float32\")", "T.max_value(\"float32\")"},
     "#include <cfloat>\n"},
    {TD_F16,
     {"__float2half(0.000000e+00f)", "__float2half(-65504.0f)",
      "__float2half(65504.0f)"},
     {"T.float16(0)", "T.min_value(\"float16\")", "T.max_value(\"float16\")"},
     "#include <cuda_fp16.h>\n"},
    {TD_BF16,
     {"__float2bfloat16(0.000000e+00f)", "__float2bfloat16(-3.38953139e38f)",
      "__float2bfloat16(3.38953139e38f)"},
     {"T.bfloat16(0)", "T.min_value(\"bfloat16\")",
      "T.max_value(\"bfloat16\")"},
     "#include <cuda_bf16.h>\n"},
    {TD_F64,
     {"0.000000e+00", "-DBL_MAX", "DBL_MAX"},
     {"T.float64(0)", "T.min_value(\"float64\")", "T.max_value(\"float64\")"},
     "#include <cfloat>\n"},
    {TD_I8,
     {"(int8_t)0", "(int8_t)(-128)", "(int8_t)127"},
     {"T.int8(0)", "T.min_value(\"int8\")", "T.max_value(\"int8\")"},
     "#include <cstdint>\n"},
    {TD_I16,
     {"(int16_t)0", "(int16_t)(-32768)", "(int16_t)32767"},
     {"T.int16(0)", "T.min_value(\"int16\")", "T.max_value(\"int16\")"},
     "#include <cstdint>\n"},
    {TD_I32,
     {"0", "(-2147483647 - 1)", "2147483647"},
     {"T.int32(0)", "T.min_value(\"int32\")", "T.max_value(\"int32\")"},
     ""},
    {TD_I64,
     {"0LL", "(-9223372036854775807LL - 1)", "9223372036854775807LL"},
     {"T.int64(0)", "T.min_value(\"int64\")", "T.max_value(\"int64\")"},
     ""},
    {TD_U8,
     {"(uint8_t)0", "(uint8_t)0", "(uint8_t)255"},
     {"T.uint8(0)", "T.min_value(\"uint8\")", "T.max_value(\"uint8\")"},
     "#include <cstdint>\n"},
    {TD_U16,
     {"(uint16_t)0", "(uint16_t)0", "(uint16_t)65535"},
     {"T.uint16(0)", "T.min_value(\"uint16\")", "T.max_value(\"uint16\")"},
     "#include <cstdint>\n"},
    {TD_U32,
     {"0u", "0u", "4294967295u"},
     {"T.uint32(0)", "T.min_value(\"uint32\")", "T.max_value(\"uint32\")"},
     ""},
    {TD_U64,
     {"0ULL", "0ULL", "18446744073709551615ULL"},
     {"T.uint64(0)", "T.min_value(\"uint64\")", "T.max_value(\"uint64\")"},
     ""},
};

static void test_identities(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof idents / sizeof idents[0]; k++) {
        for (int c = 0; c < 3; c++) {
            td_ir *ir = td_ir_new();
            int64_t s[] = {1};
            td_ir_buf *B = td_ir_buffer(ir, "B", idents[k].t, "local", 1, s);
            td_ir_store1(ir, B, td_int(ir, 0),
                         td_identity(ir, (td_combiner)c, idents[k].t));
            char want[160];
            snprintf(want, sizeof want, "B_ptr[0] = %s;\n",
                     idents[k].cuda[c]);
            /* Only f32/f64 sums need no header; the rest as tabled. */
            const char *pre = idents[k].prelude;
            if ((idents[k].t == TD_F32 || idents[k].t == TD_F64) && c == 0)
                pre = "";
            expect(ir, TD_LANG_CUDA, 0, want, pre);
            snprintf(want, sizeof want, "B[0] = %s\n", idents[k].tirx[c]);
            expect(ir, TD_LANG_TIRX, 0, want, "");
            td_ir_free(ir);
        }
    }
}

/* Identity values as the IR stores them. */
static void test_identity_values(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_expr *e = td_identity(ir, TD_COMBINE_MAX, TD_BF16);
    assert_true(e->f == -3.3895313892515355e38);
    float f = (float)e->f;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    assert_int_equal(bits, 0xFF7F0000u);
    e = td_identity(ir, TD_COMBINE_MIN, TD_F16);
    assert_true(e->f == 65504.0);
    e = td_identity(ir, TD_COMBINE_MAX, TD_I64);
    assert_true(e->i == INT64_MIN);
    e = td_identity(ir, TD_COMBINE_MIN, TD_U64);
    assert_true(e->u == UINT64_MAX);
    assert_null(td_identity(ir, (td_combiner)9, TD_F32));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
}

/* Combiners of every dtype, CUDA spelling. */
static const struct {
    td_dtype t;
    const char *cuda[3];
} combs[] = {
    {TD_F32, {"a_ptr[0] + b_ptr[0]", "fmaxf(a_ptr[0], b_ptr[0])",
              "fminf(a_ptr[0], b_ptr[0])"}},
    {TD_F64, {"a_ptr[0] + b_ptr[0]", "fmax(a_ptr[0], b_ptr[0])",
              "fmin(a_ptr[0], b_ptr[0])"}},
    {TD_F16, {"a_ptr[0] + b_ptr[0]", "__hmax(a_ptr[0], b_ptr[0])",
              "__hmin(a_ptr[0], b_ptr[0])"}},
    {TD_BF16, {"a_ptr[0] + b_ptr[0]", "__hmax(a_ptr[0], b_ptr[0])",
               "__hmin(a_ptr[0], b_ptr[0])"}},
    {TD_I8, {"(int8_t)(a_ptr[0] + b_ptr[0])",
             "(int8_t)max((int)a_ptr[0], (int)b_ptr[0])",
             "(int8_t)min((int)a_ptr[0], (int)b_ptr[0])"}},
    {TD_U16, {"(uint16_t)(a_ptr[0] + b_ptr[0])",
              "(uint16_t)max((int)a_ptr[0], (int)b_ptr[0])",
              "(uint16_t)min((int)a_ptr[0], (int)b_ptr[0])"}},
    {TD_I32, {"a_ptr[0] + b_ptr[0]", "max(a_ptr[0], b_ptr[0])",
              "min(a_ptr[0], b_ptr[0])"}},
    {TD_U64, {"a_ptr[0] + b_ptr[0]", "max(a_ptr[0], b_ptr[0])",
              "min(a_ptr[0], b_ptr[0])"}},
};

static void test_combiners(void **state)
{
    (void)state;
    static const char *const tirx[3] = {"a[0] + b[0]", "T.max(a[0], b[0])",
                                        "T.min(a[0], b[0])"};
    for (size_t k = 0; k < sizeof combs / sizeof combs[0]; k++)
        for (int c = 0; c < 3; c++) {
            td_ir *ir = td_ir_new();
            int64_t s[] = {1};
            td_ir_buf *a = td_ir_buffer(ir, "a", combs[k].t, "local", 1, s);
            td_ir_buf *b = td_ir_buffer(ir, "b", combs[k].t, "local", 1, s);
            td_ir_store1(ir, a, td_int(ir, 0),
                         td_combine(ir, (td_combiner)c,
                                    td_load1(ir, a, td_int(ir, 0)),
                                    td_load1(ir, b, td_int(ir, 0))));
            char want[160];
            snprintf(want, sizeof want, "a_ptr[0] = %s;\n", combs[k].cuda[c]);
            expect(ir, TD_LANG_CUDA, 0, want, NULL);
            snprintf(want, sizeof want, "a[0] = %s\n", tirx[c]);
            expect(ir, TD_LANG_TIRX, 0, want, "");
            td_ir_free(ir);
        }
}

/* Nested sums keep their grouping (floating point is not associative). */
static void test_value_grouping(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {4};
    td_ir_buf *a = td_ir_buffer(ir, "a", TD_I8, "local", 1, s);
    td_expr *l[4];
    for (int i = 0; i < 4; i++)
        l[i] = td_load1(ir, a, td_int(ir, i));
    td_ir_store1(ir, a, td_int(ir, 0),
                 td_combine(ir, TD_COMBINE_SUM, l[0],
                            td_combine(ir, TD_COMBINE_MAX,
                                       td_combine(ir, TD_COMBINE_SUM, l[1],
                                                  l[2]),
                                       l[3])));
    expect(ir, TD_LANG_CUDA, 0,
           "a_ptr[0] = (int8_t)(a_ptr[0] + (int8_t)max((int)(int8_t)(a_ptr[1] "
           "+ a_ptr[2]), (int)a_ptr[3]));\n",
           "#include <cstdint>\n");
    expect(ir, TD_LANG_TIRX, 0,
           "a[0] = a[0] + T.max(a[1] + a[2], a[3])\n", "");
    td_ir_free(ir);

    ir = td_ir_new();
    td_ir_buf *f = td_ir_buffer(ir, "f", TD_F32, "local", 1, s);
    for (int i = 0; i < 3; i++)
        l[i] = td_load1(ir, f, td_int(ir, i));
    td_ir_store1(ir, f, td_int(ir, 3),
                 td_combine(ir, TD_COMBINE_SUM, l[0],
                            td_combine(ir, TD_COMBINE_SUM, l[1], l[2])));
    expect(ir, TD_LANG_CUDA, 0, "f_ptr[3] = f_ptr[0] + (f_ptr[1] + f_ptr[2]);\n",
           "");
    expect(ir, TD_LANG_TIRX, 0, "f[3] = f[0] + (f[1] + f[2])\n", "");
    td_ir_free(ir);
}

/* Typed constants: round-trip spellings and range checks. */
static void test_constants(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {16};
    td_ir_buf *f = td_ir_buffer(ir, "f", TD_F32, "local", 1, s);
    td_ir_buf *d = td_ir_buffer(ir, "d", TD_F64, "local", 1, s);
    td_ir_buf *h = td_ir_buffer(ir, "h", TD_F16, "local", 1, s);
    td_ir_buf *u = td_ir_buffer(ir, "u", TD_U8, "local", 1, s);
    td_ir_store1(ir, f, td_int(ir, 0), td_const_f(ir, TD_F32, 1.0));
    td_ir_store1(ir, f, td_int(ir, 1), td_const_f(ir, TD_F32, 1.0 / 3));
    td_ir_store1(ir, f, td_int(ir, 2), td_const_f(ir, TD_F32, -2.5));
    td_ir_store1(ir, f, td_int(ir, 3), td_const_i(ir, TD_F32, 3));
    td_ir_store1(ir, f, td_int(ir, 4), td_const_f(ir, TD_F32, 1.0 / 0.0));
    td_ir_store1(ir, d, td_int(ir, 0), td_const_f(ir, TD_F64, 0.1));
    td_ir_store1(ir, d, td_int(ir, 1), td_const_f(ir, TD_F64, 1.0 / 3));
    td_ir_store1(ir, h, td_int(ir, 0), td_const_f(ir, TD_F16, 0.5));
    td_ir_store1(ir, u, td_int(ir, 0), td_const_f(ir, TD_U8, 200.0));
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "f_ptr[0] = 1.000000e+00f;\n"
           "f_ptr[1] = 3.33333343e-01f;\n"
           "f_ptr[2] = -2.500000e+00f;\n"
           "f_ptr[3] = 3.000000e+00f;\n"
           "f_ptr[4] = __int_as_float(0x7f800000);\n"
           "d_ptr[0] = 1.000000e-01;\n"
           "d_ptr[1] = 3.3333333333333331e-01;\n"
           "h_ptr[0] = __float2half(5.000000e-01f);\n"
           "u_ptr[0] = (uint8_t)200;\n",
           "#include <cstdint>\n#include <cuda_fp16.h>\n");
    expect(ir, TD_LANG_TIRX, 0,
           "f[0] = T.float32(1)\n"
           "f[1] = T.float32(0.33333334)\n"
           "f[2] = T.float32(-2.5)\n"
           "f[3] = T.float32(3)\n"
           "f[4] = T.float32(\"inf\")\n"
           "d[0] = T.float64(0.1)\n"
           "d[1] = T.float64(0.3333333333333333)\n"
           "h[0] = T.float16(0.5)\n"
           "u[0] = T.uint8(200)\n",
           "");
    td_ir_free(ir);

    /* Values that do not fit their dtype are misuse. */
    static const struct {
        int how; /* 0 f, 1 i, 2 u */
        td_dtype t;
        double f;
        int64_t i;
        uint64_t u;
    } bad[] = {
        {1, TD_I8, 0, 128, 0},        {1, TD_I8, 0, -129, 0},
        {1, TD_U8, 0, -1, 0},         {2, TD_I64, 0, 0, UINT64_MAX},
        {2, TD_U16, 0, 0, 65536},     {0, TD_I32, 1.5, 0, 0},
        {0, TD_I32, 2147483648.0, 0, 0}, {0, TD_U64, -1.0, 0, 0},
        {0, TD_I64, 1e300, 0, 0},     {1, (td_dtype)99, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ir = td_ir_new();
        td_expr *e = bad[k].how == 0   ? td_const_f(ir, bad[k].t, bad[k].f)
                     : bad[k].how == 1 ? td_const_i(ir, bad[k].t, bad[k].i)
                                       : td_const_u(ir, bad[k].t, bad[k].u);
        assert_null(e);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
    ir = td_ir_new();
    assert_non_null(td_const_i(ir, TD_I64, INT64_MIN));
    assert_non_null(td_const_u(ir, TD_U64, UINT64_MAX));
    assert_non_null(td_const_f(ir, TD_I64, -9223372036854775808.0));
    assert_non_null(td_const_f(ir, TD_U64, 18446744073709549568.0));
    assert_int_equal(td_ir_status(ir), 0);
    td_ir_free(ir);
}

static void test_if_let_scratch(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {8};
    td_ir_buf *A = td_ir_buffer(ir, "A_local", TD_F32, "local", 1, s);
    td_ir_buf *acc = td_ir_scratch(ir, "acc", TD_F32, 8);
    td_ir_buf *acc2 = td_ir_scratch(ir, "acc", TD_I32, 2);
    assert_string_equal(acc2->name, "acc_1");
    td_ir_comment(ir, "sum\tthe halves\\");
    td_var *v = td_ir_let(ir, "v", TD_F32, td_load1(ir, acc, td_int(ir, 0)));
    td_var *i = td_ir_for(ir, "i", td_int(ir, 8), TD_LOOP_SERIAL);
    td_ir_if(ir, td_lt(ir, td_var_ref(ir, i), td_int(ir, 4)));
    td_ir_assign(ir, v, td_combine(ir, TD_COMBINE_SUM, td_var_ref(ir, v),
                                   td_load1(ir, A, td_var_ref(ir, i))));
    td_ir_else(ir);
    td_ir_store1(ir, acc2, td_mod(ir, td_var_ref(ir, i), td_int(ir, 2)),
                 td_const_i(ir, TD_I32, -1));
    td_ir_end_if(ir);
    td_ir_if(ir, td_eq(ir, td_var_ref(ir, i), td_int(ir, 7)));
    td_ir_end_if(ir);
    td_ir_end_for(ir);
    td_ir_store1(ir, A, td_int(ir, 0), td_var_ref(ir, v));
    td_ir_comment(ir, "");
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "float acc[8];\n"
           "int acc_1[2];\n"
           "// sum the halves/\n"
           "float v = acc[0];\n"
           "for (int i = 0; i < 8; ++i) {\n"
           "  if (i < 4) {\n"
           "    v = v + A_local_ptr[i];\n"
           "  } else {\n"
           "    acc_1[i % 2] = -1;\n"
           "  }\n"
           "  if (i == 7) {\n"
           "  }\n"
           "}\n"
           "A_local_ptr[0] = v;\n"
           "//\n",
           "");
    expect(ir, TD_LANG_TIRX, 0,
           "acc = T.alloc_buffer((8,), \"float32\", scope=\"local\")\n"
           "acc_1 = T.alloc_buffer((2,), \"int32\", scope=\"local\")\n"
           "# sum the halves/\n"
           "v: T.float32 = acc[0]\n"
           "for i in T.serial(8):\n"
           "    if i < 4:\n"
           "        v = v + A_local[i]\n"
           "    else:\n"
           "        acc_1[i % 2] = T.int32(-1)\n"
           "    if i == 7:\n"
           "        pass\n"
           "A_local[0] = v\n"
           "#\n",
           "");
    td_ir_free(ir);
}

/* Names: loop variables and lets are unique within one IR, and avoid
 * buffer names, their _ptr spellings and keywords. */
static void test_names(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {4};
    td_ir_buf *A = td_ir_buffer(ir, "red", TD_F32, "local", 1, s);
    assert_non_null(A);
    /* The same buffer twice is the same handle; a different one clashes. */
    assert_ptr_equal(td_ir_buffer(ir, "red", TD_F32, "local", 1, s), A);
    td_var *a = td_ir_for(ir, "red", td_int(ir, 2), TD_LOOP_SERIAL);
    td_var *b = td_ir_for(ir, "red", td_int(ir, 2), TD_LOOP_SERIAL);
    td_var *c = td_ir_let(ir, "red_ptr", TD_F32, td_load1(ir, A, td_add(ir,
                          td_var_ref(ir, a), td_var_ref(ir, b))));
    td_var *d = td_ir_let(ir, "for", TD_I32, td_int(ir, 0));
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    assert_int_equal(td_ir_status(ir), 0);
    assert_string_equal(a->name, "red_1");
    assert_string_equal(b->name, "red_2");
    assert_string_equal(c->name, "red_ptr_1");
    assert_string_equal(d->name, "for_1");
    expect(ir, TD_LANG_CUDA, 0,
           "for (int red_1 = 0; red_1 < 2; ++red_1) {\n"
           "  for (int red_2 = 0; red_2 < 2; ++red_2) {\n"
           "    float red_ptr_1 = red_ptr[red_1 + red_2];\n"
           "    int for_1 = 0;\n"
           "  }\n"
           "}\n",
           "");
    assert_null(td_ir_buffer(ir, "red", TD_F16, "local", 1, s));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);

    static const char *const bad[] = {"", "1a", "a-b", "a b", "ä"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ir = td_ir_new();
        assert_null(td_ir_for(ir, bad[k], td_int(ir, 2), TD_LOOP_SERIAL));
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
        ir = td_ir_new();
        assert_null(td_ir_buffer(ir, bad[k], TD_F32, "local", 1, s));
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
    char longname[TD__IR_NAME_MAX + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ir = td_ir_new();
    assert_null(td_ir_scratch(ir, longname, TD_F32, 1));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);

    /* The reserved words are searched by halves: they must be sorted as
     * strcmp sorts them, and each one is refused (renamed). */
    for (size_t k = 1; k < td__nreserved_names; k++)
        assert_true(strcmp(td__reserved_names[k - 1], td__reserved_names[k]) < 0);
    ir = td_ir_new();
    for (size_t k = 0; k < td__nreserved_names; k++) {
        td_var *v = td_ir_let(ir, td__reserved_names[k], TD_I32, td_int(ir, 0));
        assert_non_null(v);
        char want[64];
        snprintf(want, sizeof want, "%s_1", td__reserved_names[k]);
        assert_string_equal(v->name, want);
    }
    /* Many names in the table (more than its buckets): each stays unique. */
    for (int k = 0; k < 300; k++) {
        td_var *v = td_ir_let(ir, "v", TD_I32, td_int(ir, k));
        char want[64];
        if (k == 0)
            snprintf(want, sizeof want, "v");
        else
            snprintf(want, sizeof want, "v_%d", k);
        assert_string_equal(v->name, want);
    }
    assert_int_equal(td_ir_status(ir), 0);
    td_ir_free(ir);
}

static void test_intrinsics(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s8[] = {8}, s1[] = {1};
    td_ir_buf *A = td_ir_buffer(ir, "A_local", TD_F32, "local", 1, s8);
    td_ir_buf *B = td_ir_buffer(ir, "B_local", TD_F32, "local", 1, s1);
    td_var *m = td_ir_let(ir, "mask", TD_U32,
                          td_intrinsic(ir, TD_INTRIN_ACTIVEMASK, TD_U32, 0,
                                       NULL));
    td_var *tid = td_ir_let(ir, "tid", TD_I32,
                            td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32,
                                         0, NULL));
    td_var *v = td_ir_let(ir, "v", TD_F32,
                          td_load1(ir, A, td_mod(ir, td_var_ref(ir, tid),
                                                 td_int(ir, 8))));
    for (int lane = 1; lane <= 2; lane *= 2) {
        td_expr *a[] = {td_var_ref(ir, m), td_var_ref(ir, v),
                        td_int(ir, lane), td_int(ir, 32)};
        td_ir_assign(ir, v, td_intrinsic(ir, TD_INTRIN_SHFL_XOR, TD_F32, 4,
                                         a));
    }
    for (int k = 0; k < 2; k++)
        td_ir_assign(ir, v, td_warp_reduce(ir, TD_COMBINE_SUM, 32,
                                           td_var_ref(ir, v), TD_F32));
    td_ir_assign(ir, v, td_warp_reduce(ir, TD_COMBINE_MAX, 8,
                                       td_var_ref(ir, v), TD_F32));
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0, NULL));
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCWARP, TD_I32, 0, NULL));
    td_expr *bar[] = {td_int(ir, 8), td_int(ir, 128)};
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_BARRIER_SYNC, TD_I32, 2, bar));
    td_ir_store1(ir, B, td_int(ir, 0), td_var_ref(ir, v));
    assert_int_equal(td_ir_status(ir), 0);
    char *body, *pre;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &body, &pre), 0);
    assert_string_equal(
        body,
        "unsigned int mask = __activemask();\n"
        "int tid = (int)threadIdx.x;\n"
        "float v = A_local_ptr[tid % 8];\n"
        "v = __shfl_xor_sync(mask, v, 1, 32);\n"
        "v = __shfl_xor_sync(mask, v, 2, 32);\n"
        "v = tvm_builtin_cuda_warp_reduce_sum_32(v);\n"
        "v = tvm_builtin_cuda_warp_reduce_sum_32(v);\n"
        "v = tvm_builtin_cuda_warp_reduce_max_8(v);\n"
        "__syncthreads();\n"
        "__syncwarp();\n"
        "asm volatile(\"bar.sync %0, %1;\" :: \"r\"(8), \"r\"(128) : "
        "\"memory\");\n"
        "B_local_ptr[0] = v;\n");
    assert_int_equal(count(pre, "#include <cuda_fp16.h>\n"), 1);
    assert_int_equal(count(pre, "#include <cuda_bf16.h>\n"), 1);
    assert_int_equal(count(pre, "#include"), 2);
    assert_int_equal(count(pre, "T td_max(T a, T b)"), 1);
    assert_int_equal(count(pre, "T tvm_builtin_cuda_warp_reduce_sum_32(T val)"),
                     1);
    assert_int_equal(count(pre, "T tvm_builtin_cuda_warp_reduce_max_8(T val)"),
                     1);
    assert_int_equal(count(pre, "tvm_builtin_cuda_warp_reduce_"), 2);
    assert_true(strstr(pre, "for (int mask = 16; mask >= 1; mask >>= 1)"));
    assert_true(strstr(pre, "for (int mask = 4; mask >= 1; mask >>= 1)"));
    assert_true(strstr(pre, "val = td_max(val, shuffled);"));
    /* Fixed order: includes, td_max, sum before max. */
    assert_true(strstr(pre, "#include <cuda_bf16.h>") < strstr(pre, "td_max"));
    assert_true(strstr(pre, "td_max") < strstr(pre, "reduce_sum_32"));
    assert_true(strstr(pre, "reduce_sum_32") < strstr(pre, "reduce_max_8"));
    td_free(body);
    td_free(pre);
    expect(ir, TD_LANG_TIRX, 0,
           "mask: T.uint32 = T.tvm_warp_activemask()\n"
           "tid: T.int32 = threadIdx.x\n"
           "v: T.float32 = A_local[tid % 8]\n"
           "v = T.tvm_warp_shuffle_xor(mask, v, 1, 32, 32)\n"
           "v = T.tvm_warp_shuffle_xor(mask, v, 2, 32, 32)\n"
           "v = T.cuda.warp_reduce(v, \"sum\", 32)\n"
           "v = T.cuda.warp_reduce(v, \"sum\", 32)\n"
           "v = T.cuda.warp_reduce(v, \"max\", 8)\n"
           "T.tvm_storage_sync(\"shared\")\n"
           "T.tvm_storage_sync(\"warp\")\n"
           "T.ptx.bar.sync(8, 128)\n"
           "B_local[0] = v\n",
           "");
    td_ir_free(ir);
}

static const char sum_helper_2[] =
    "template <typename T>\n"
    "__forceinline__ __device__ T tvm_builtin_cuda_warp_reduce_sum_2(T val) {\n"
    "#pragma unroll\n"
    "  for (int mask = 1; mask >= 1; mask >>= 1) {\n"
    "    T shuffled = __shfl_xor_sync(0xFFFFFFFFu, val, mask);\n"
    "    val = (T)(val + shuffled);\n"
    "  }\n"
    "  return val;\n"
    "}\n";

static void test_warp_reduce_helpers(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {1};
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_F32, "local", 1, s);
    td_ir_store1(ir, B, td_int(ir, 0),
                 td_warp_reduce(ir, TD_COMBINE_SUM, 2,
                                td_load1(ir, B, td_int(ir, 0)), TD_F32));
    expect(ir, TD_LANG_CUDA, 0,
           "B_ptr[0] = tvm_builtin_cuda_warp_reduce_sum_2(B_ptr[0]);\n",
           sum_helper_2);
    td_ir_free(ir);

    /* One helper per (op, width), in combiner then width order. */
    ir = td_ir_new();
    B = td_ir_buffer(ir, "B", TD_F32, "local", 1, s);
    static const int widths[] = {32, 4, 32, 2, 16, 8};
    for (int c = 2; c >= 0; c--)
        for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++)
            td_ir_store1(ir, B, td_int(ir, 0),
                         td_warp_reduce(ir, (td_combiner)c, widths[k],
                                        td_load1(ir, B, td_int(ir, 0)),
                                        TD_F32));
    char *body, *pre;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &body, &pre), 0);
    const char *last = pre;
    for (int c = 0; c < 3; c++)
        for (int w = 2; w <= 32; w *= 2) {
            char want[96];
            snprintf(want, sizeof want,
                     "T tvm_builtin_cuda_warp_reduce_%s_%d(T val)",
                     td_combiner_name((td_combiner)c), w);
            assert_int_equal(count(pre, want), 1);
            assert_true(strstr(pre, want) > last);
            last = strstr(pre, want);
        }
    td_free(body);
    td_free(pre);
    td_ir_free(ir);

    static const int badw[] = {0, 1, 3, 64, -2};
    for (size_t k = 0; k < sizeof badw / sizeof badw[0]; k++) {
        ir = td_ir_new();
        assert_null(td_warp_reduce(ir, TD_COMBINE_SUM, badw[k],
                                   td_int(ir, 0), TD_F32));
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

static void test_packed_prelude(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {4};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F32, "local", 1, s);
    td_expr *l[4];
    for (int i = 0; i < 4; i++)
        l[i] = td_load1(ir, A, td_int(ir, i));
    td_expr *pa[] = {l[0], l[1]}, *pb[] = {l[2], l[3]};
    td_var *p = td_ir_let(ir, "p", TD_U64,
                          td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                       2, pa));
    td_var *q = td_ir_let(ir, "q", TD_U64,
                          td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                       2, pb));
    td_expr *add[] = {td_var_ref(ir, p), td_var_ref(ir, q)};
    td_ir_assign(ir, p, td_intrinsic(ir, TD_INTRIN_PTX_ADD_F32X2, TD_U64, 2,
                                     add));
    td_expr *pp[] = {td_var_ref(ir, p)};
    td_ir_store1(ir, A, td_int(ir, 0),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_LO, TD_F32, 1, pp));
    td_ir_store1(ir, A, td_int(ir, 1),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_HI, TD_F32, 1, pp));
    td_expr *m3[] = {l[0], l[1], l[2]};
    td_ir_store1(ir, A, td_int(ir, 2),
                 td_intrinsic(ir, TD_INTRIN_PTX_MAX3_F32, TD_F32, 3, m3));
    td_ir_store1(ir, A, td_int(ir, 3),
                 td_intrinsic(ir, TD_INTRIN_PTX_MIN3_F32, TD_F32, 3, m3));
    td_ir_store1(ir, A, td_int(ir, 3),
                 td_intrinsic(ir, TD_INTRIN_PTX_MIN3_F32, TD_F32, 3, m3));
    assert_int_equal(td_ir_status(ir), 0);
    char *body, *pre;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &body, &pre), 0);
    assert_string_equal(
        body,
        "unsigned long long p = tvm_builtin_ptx_mov_b64_pack(A_ptr[0], "
        "A_ptr[1]);\n"
        "unsigned long long q = tvm_builtin_ptx_mov_b64_pack(A_ptr[2], "
        "A_ptr[3]);\n"
        "p = tvm_builtin_ptx_add_rn_ftz_f32x2(p, q);\n"
        "A_ptr[0] = tvm_builtin_ptx_mov_b64_unpack_lo(p);\n"
        "A_ptr[1] = tvm_builtin_ptx_mov_b64_unpack_hi(p);\n"
        "A_ptr[2] = tvm_builtin_ptx_max3_f32(A_ptr[0], A_ptr[1], A_ptr[2]);\n"
        "A_ptr[3] = tvm_builtin_ptx_min3_f32(A_ptr[0], A_ptr[1], A_ptr[2]);\n"
        "A_ptr[3] = tvm_builtin_ptx_min3_f32(A_ptr[0], A_ptr[1], A_ptr[2]);\n");
    static const char *const names[] = {
        "unsigned long long tvm_builtin_ptx_mov_b64_pack(",
        "float tvm_builtin_ptx_mov_b64_unpack_lo(",
        "float tvm_builtin_ptx_mov_b64_unpack_hi(",
        "unsigned long long tvm_builtin_ptx_add_rn_ftz_f32x2(",
        "float tvm_builtin_ptx_max3_f32(", "float tvm_builtin_ptx_min3_f32("};
    const char *last = pre;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        assert_int_equal(count(pre, names[k]), 1);
        assert_true(strstr(pre, names[k]) > last);
        last = strstr(pre, names[k]);
    }
    assert_true(strstr(pre, "add.rn.ftz.f32x2 %0, %1, %2;"));
    assert_true(strstr(pre, "max.f32 %0, %1, %2, %3;"));
    assert_true(strstr(pre, "mov.b64 {%0, %1}, %2;"));
    assert_int_equal(count(pre, "#include"), 0);
    td_free(body);
    td_free(pre);
    expect(ir, TD_LANG_TIRX, 0,
           "p: T.uint64\n"
           "T.ptx.mov.b64(p, A[0], A[1])\n"
           "q: T.uint64\n"
           "T.ptx.mov.b64(q, A[2], A[3])\n"
           "T.ptx.add.rn.ftz.f32x2(p, p, q)\n"
           "T.ptx.mov.b64(A[0], A[1], p)\n"
           "T.ptx.max.f32(A[2], A[0], A[1], A[2])\n"
           "T.ptx.min.f32(A[3], A[0], A[1], A[2])\n"
           "T.ptx.min.f32(A[3], A[0], A[1], A[2])\n",
           "");
    td_ir_free(ir);
}

/* Misuse sets TD_EINVAL, which sticks; print refuses. */
static void test_sticky_errors(void **state)
{
    (void)state;
    int64_t s[] = {4};
    for (int k = 0; k < 12; k++) {
        td_ir *ir = td_ir_new();
        td_ir_buf *A = td_ir_buffer(ir, "A", TD_F32, "local", 1, s);
        td_expr *one = td_int(ir, 1);
        td_expr *sync = td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0,
                                     NULL);
        switch (k) {
        case 0: td_ir_end_for(ir); break;
        case 1: td_ir_else(ir); break;
        case 2: td_ir_end_if(ir); break;
        case 3:
            td_ir_if(ir, one);
            td_ir_else(ir);
            td_ir_else(ir);
            break;
        case 4:
            td_ir_for(ir, "i", one, TD_LOOP_SERIAL);
            td_ir_end_if(ir);
            break;
        case 5:
            for (int d = 0; d <= TD__IR_MAX_DEPTH; d++)
                td_ir_if(ir, one);
            break;
        case 6: td_ir_store1(ir, NULL, one, one); break;
        case 7: td_ir_store(ir, A, 2, (td_expr *[]){one, one}, one); break;
        case 8: td_load(ir, A, 0, NULL); break;
        case 9: td_add(ir, sync, one); break;
        case 10: td_intrinsic(ir, TD_INTRIN_SHFL_XOR, TD_F32, 1, &one); break;
        case 11: td_intrinsic(ir, TD_INTRIN_WARP_REDUCE, TD_F32, 1, &one);
            break;
        }
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        /* Every builder is now a no-op. */
        assert_null(td_int(ir, 1));
        assert_null(td_ir_for(ir, "j", one, TD_LOOP_SERIAL));
        assert_null(td_ir_scratch(ir, "t", TD_F32, 1));
        td_ir_end_for(ir);
        char *b = (char *)"x", *p = (char *)"x";
        assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, &p), TD_EINVAL);
        assert_null(b);
        assert_null(p);
        td_ir_free(ir);
    }
    /* A loop of depth 64 is fine; an open block is not printable. */
    td_ir *ir = td_ir_new();
    for (int d = 0; d < TD__IR_MAX_DEPTH; d++)
        td_ir_for(ir, "i", td_int(ir, 2), TD_LOOP_SERIAL);
    assert_int_equal(td_ir_status(ir), 0);
    char *b = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &b, NULL), TD_EINVAL);
    for (int d = 0; d < TD__IR_MAX_DEPTH; d++)
        td_ir_end_for(ir);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &b, NULL), 0);
    assert_int_equal(count(b, "pass"), 1);
    td_free(b);
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, NULL), 0);
    assert_int_equal(count(b, "}"), TD__IR_MAX_DEPTH);
    td_free(b);
    td_ir_free(ir);
}

/* Variables used outside their scope, or from another IR. */
static void test_scope_errors(void **state)
{
    (void)state;
    int64_t s[] = {4};
    td_ir *ir = td_ir_new();
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F32, "local", 1, s);
    td_var *i = td_ir_for(ir, "i", td_int(ir, 4), TD_LOOP_SERIAL);
    td_ir_end_for(ir);
    td_ir_store1(ir, A, td_var_ref(ir, i), td_const_f(ir, TD_F32, 0));
    assert_int_equal(td_ir_status(ir), 0);
    char *b = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, NULL), TD_EINVAL);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &b, NULL), TD_EINVAL);
    assert_null(b);

    td_ir *other = td_ir_new();
    assert_null(td_var_ref(other, i));
    assert_int_equal(td_ir_status(other), TD_EINVAL);
    td_ir_free(other);
    other = td_ir_new();
    td_ir_store1(other, A, td_int(other, 0), td_int(other, 0));
    assert_int_equal(td_ir_status(other), TD_EINVAL);
    td_ir_free(other);
    other = td_ir_new();
    td_ir_assign(other, i, td_int(other, 0));
    assert_int_equal(td_ir_status(other), TD_EINVAL);
    td_ir_free(other);
    td_ir_free(ir);

    /* A let inside a block is gone after it; loop variables are not
     * assignable. */
    ir = td_ir_new();
    A = td_ir_buffer(ir, "A", TD_F32, "local", 1, s);
    td_ir_if(ir, td_int(ir, 1));
    td_var *v = td_ir_let(ir, "v", TD_F32, td_const_f(ir, TD_F32, 1));
    td_ir_end_if(ir);
    td_ir_assign(ir, v, td_const_f(ir, TD_F32, 2));
    assert_int_equal(td_ir_status(ir), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &b, NULL), TD_EINVAL);
    i = td_ir_for(ir, "i", td_int(ir, 4), TD_LOOP_SERIAL);
    td_ir_assign(ir, i, td_int(ir, 0));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
}

static void test_null_operands(void **state)
{
    (void)state;
    /* A NULL IR is harmless everywhere. */
    assert_null(td_int(NULL, 1));
    assert_null(td_ir_buffer(NULL, "A", TD_F32, "local", 1, (int64_t[]){1}));
    assert_null(td_ir_for(NULL, "i", NULL, TD_LOOP_SERIAL));
    td_ir_end_for(NULL);
    td_ir_comment(NULL, "x");
    td_ir_free(NULL);
    assert_int_equal(td_ir_status(NULL), TD_EINVAL);
    assert_int_equal(td_ir_buf_dtype(NULL), TD_DTYPE_COUNT);

    /* Expression builders pass NULL through without an error... */
    td_ir *ir = td_ir_new();
    td_expr *one = td_int(ir, 1);
    assert_null(td_add(ir, NULL, one));
    assert_null(td_add(ir, one, NULL));
    assert_null(td_combine(ir, TD_COMBINE_SUM, NULL, one));
    assert_null(td_load1(ir, NULL, one));
    assert_null(td_var_ref(ir, NULL));
    assert_null(td_warp_reduce(ir, TD_COMBINE_SUM, 32, NULL, TD_F32));
    assert_null(td_extern_call(ir, "f", TD_F32, 1, (td_expr *[]){NULL}));
    assert_null(td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_LO, TD_F32, 1,
                             (td_expr *[]){NULL}));
    assert_int_equal(td_ir_status(ir), 0);
    /* ...statements treat them as misuse. */
    td_ir_eval(ir, NULL);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);

    static const int nstmts = 7;
    for (int k = 0; k < nstmts; k++) {
        ir = td_ir_new();
        td_ir_buf *A = td_ir_buffer(ir, "A", TD_F32, "local", 1,
                                    (int64_t[]){4});
        td_var *v = td_ir_let(ir, "v", TD_F32, td_const_f(ir, TD_F32, 0));
        switch (k) {
        case 0: td_ir_for(ir, "i", NULL, TD_LOOP_SERIAL); break;
        case 1: td_ir_if(ir, NULL); break;
        case 2: td_ir_store1(ir, A, NULL, td_int(ir, 0)); break;
        case 3: td_ir_store1(ir, A, td_int(ir, 0), NULL); break;
        case 4: td_ir_let(ir, "w", TD_F32, NULL); break;
        case 5: td_ir_assign(ir, v, NULL); break;
        case 6: td_ir_comment(ir, NULL); break;
        }
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

/* ---- elementwise IR: value ops, math, casts, params, f32x2, pairs ------ */

/* A[i, 0..3] over the six value ops, a nested expression and (floats)
 * the four math functions of A[i, 0] * alpha, in one dtype. */
static td_ir *value_body(td_dtype t)
{
    td_ir *ir = td_ir_new();
    int64_t s[] = {2, 4};
    td_ir_buf *A = td_ir_buffer(ir, "A", t, "local", 2, s);
    td_var *i = td_ir_for(ir, "i", td_int(ir, 2), TD_LOOP_SERIAL);
#define AT(j) td_load(ir, A, 2, (td_expr *[]){td_var_ref(ir, i), (j)})
#define TO(j, v) td_ir_store(ir, A, 2, (td_expr *[]){td_var_ref(ir, i), \
                                                     td_int(ir, j)}, (v))
    /* A[i, 1 + 0]: the index inside the value op is folded. */
    td_expr *a = AT(td_int(ir, 0));
    td_expr *b = AT(td_add(ir, td_int(ir, 1), td_int(ir, 0)));
    for (int op = TD_VAL_ADD; op <= TD_VAL_MIN; op++)
        TO(op % 4, td_value_op(ir, (td_valop)op, a, b));
    TO(0, td_value_op(ir, TD_VAL_SUB, a,
                      td_value_op(ir, TD_VAL_SUB, b,
                                  td_value_op(ir, TD_VAL_MUL, a,
                                              td_value_op(ir, TD_VAL_ADD, a,
                                                          b)))));
    if (td_dtype_is_float(t))
        for (int f = TD_MATH_EXP; f <= TD_MATH_SQRT; f++)
            TO(f, td_math(ir, (td_mathfn)f,
                          td_value_op(ir, TD_VAL_MUL, a,
                                      td_param(ir, "alpha", t))));
#undef AT
#undef TO
    td_ir_end_for(ir);
    assert_int_equal(td_ir_status(ir), 0);
    return ir;
}

static void test_value_ops_float(void **state)
{
    (void)state;
    static const struct {
        td_dtype t;
        const char *fn[6]; /* max min exp exp2 log2 sqrt */
        const char *prelude;
    } cases[] = {
        {TD_F32, {"fmaxf", "fminf", "expf", "exp2f", "log2f", "sqrtf"}, ""},
        {TD_F64, {"fmax", "fmin", "exp", "exp2", "log2", "sqrt"}, ""},
        {TD_F16, {"__hmax", "__hmin", "hexp", "hexp2", "hlog2", "hsqrt"},
         "#include <cuda_fp16.h>\n"},
        {TD_BF16, {"__hmax", "__hmin", "hexp", "hexp2", "hlog2", "hsqrt"},
         "#include <cuda_bf16.h>\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *const *fn = cases[k].fn;
        char want[2048];
        snprintf(want, sizeof want,
                 "for (int i = 0; i < 2; ++i) {\n"
                 "  A_ptr[i * 4] = A_ptr[i * 4] + A_ptr[i * 4 + 1];\n"
                 "  A_ptr[i * 4 + 1] = A_ptr[i * 4] - A_ptr[i * 4 + 1];\n"
                 "  A_ptr[i * 4 + 2] = A_ptr[i * 4] * A_ptr[i * 4 + 1];\n"
                 "  A_ptr[i * 4 + 3] = A_ptr[i * 4] / A_ptr[i * 4 + 1];\n"
                 "  A_ptr[i * 4] = %s(A_ptr[i * 4], A_ptr[i * 4 + 1]);\n"
                 "  A_ptr[i * 4 + 1] = %s(A_ptr[i * 4], A_ptr[i * 4 + 1]);\n"
                 "  A_ptr[i * 4] = A_ptr[i * 4] - (A_ptr[i * 4 + 1] - "
                 "A_ptr[i * 4] * (A_ptr[i * 4] + A_ptr[i * 4 + 1]));\n"
                 "  A_ptr[i * 4] = %s(A_ptr[i * 4] * alpha);\n"
                 "  A_ptr[i * 4 + 1] = %s(A_ptr[i * 4] * alpha);\n"
                 "  A_ptr[i * 4 + 2] = %s(A_ptr[i * 4] * alpha);\n"
                 "  A_ptr[i * 4 + 3] = %s(A_ptr[i * 4] * alpha);\n"
                 "}\n",
                 fn[0], fn[1], fn[2], fn[3], fn[4], fn[5]);
        td_ir *ir = value_body(cases[k].t);
        expect(ir, TD_LANG_CUDA, 0, want, cases[k].prelude);
        expect(ir, TD_LANG_TIRX, 0,
               "for i in T.serial(2):\n"
               "    A[i, 0] = A[i, 0] + A[i, 1]\n"
               "    A[i, 1] = A[i, 0] - A[i, 1]\n"
               "    A[i, 2] = A[i, 0] * A[i, 1]\n"
               "    A[i, 3] = A[i, 0] / A[i, 1]\n"
               "    A[i, 0] = T.max(A[i, 0], A[i, 1])\n"
               "    A[i, 1] = T.min(A[i, 0], A[i, 1])\n"
               "    A[i, 0] = A[i, 0] - (A[i, 1] - A[i, 0] * (A[i, 0] + "
               "A[i, 1]))\n"
               "    A[i, 0] = T.exp(A[i, 0] * alpha)\n"
               "    A[i, 1] = T.exp2(A[i, 0] * alpha)\n"
               "    A[i, 2] = T.log2(A[i, 0] * alpha)\n"
               "    A[i, 3] = T.sqrt(A[i, 0] * alpha)\n",
               "");
        td_ir_free(ir);
    }
}

static void test_value_ops_int(void **state)
{
    (void)state;
    static const char tirx[] =
        "for i in T.serial(2):\n"
        "    A[i, 0] = A[i, 0] + A[i, 1]\n"
        "    A[i, 1] = A[i, 0] - A[i, 1]\n"
        "    A[i, 2] = A[i, 0] * A[i, 1]\n"
        "    A[i, 3] = T.Div(A[i, 0], A[i, 1])\n"
        "    A[i, 0] = T.max(A[i, 0], A[i, 1])\n"
        "    A[i, 1] = T.min(A[i, 0], A[i, 1])\n"
        "    A[i, 0] = A[i, 0] - (A[i, 1] - A[i, 0] * (A[i, 0] + A[i, 1]))\n";
    static const char wide[] =
        "for (int i = 0; i < 2; ++i) {\n"
        "  A_ptr[i * 4] = A_ptr[i * 4] + A_ptr[i * 4 + 1];\n"
        "  A_ptr[i * 4 + 1] = A_ptr[i * 4] - A_ptr[i * 4 + 1];\n"
        "  A_ptr[i * 4 + 2] = A_ptr[i * 4] * A_ptr[i * 4 + 1];\n"
        "  A_ptr[i * 4 + 3] = A_ptr[i * 4] / A_ptr[i * 4 + 1];\n"
        "  A_ptr[i * 4] = max(A_ptr[i * 4], A_ptr[i * 4 + 1]);\n"
        "  A_ptr[i * 4 + 1] = min(A_ptr[i * 4], A_ptr[i * 4 + 1]);\n"
        "  A_ptr[i * 4] = A_ptr[i * 4] - (A_ptr[i * 4 + 1] - A_ptr[i * 4] * "
        "(A_ptr[i * 4] + A_ptr[i * 4 + 1]));\n"
        "}\n";
    static const td_dtype wides[] = {TD_I32, TD_U32, TD_I64, TD_U64};
    for (size_t k = 0; k < sizeof wides / sizeof wides[0]; k++) {
        td_ir *ir = value_body(wides[k]);
        expect(ir, TD_LANG_CUDA, 0, wide, "");
        expect(ir, TD_LANG_TIRX, 0, tirx, "");
        td_ir_free(ir);
    }
    /* C promotes the narrow integers: each result is narrowed back. */
    td_ir *ir = value_body(TD_I8);
    expect(ir, TD_LANG_CUDA, 0,
           "for (int i = 0; i < 2; ++i) {\n"
           "  A_ptr[i * 4] = (int8_t)(A_ptr[i * 4] + A_ptr[i * 4 + 1]);\n"
           "  A_ptr[i * 4 + 1] = (int8_t)(A_ptr[i * 4] - A_ptr[i * 4 + 1]);\n"
           "  A_ptr[i * 4 + 2] = (int8_t)(A_ptr[i * 4] * A_ptr[i * 4 + 1]);\n"
           "  A_ptr[i * 4 + 3] = (int8_t)(A_ptr[i * 4] / A_ptr[i * 4 + 1]);\n"
           "  A_ptr[i * 4] = (int8_t)max((int)A_ptr[i * 4], "
           "(int)A_ptr[i * 4 + 1]);\n"
           "  A_ptr[i * 4 + 1] = (int8_t)min((int)A_ptr[i * 4], "
           "(int)A_ptr[i * 4 + 1]);\n"
           "  A_ptr[i * 4] = (int8_t)(A_ptr[i * 4] - (int8_t)(A_ptr[i * 4 + 1] "
           "- (int8_t)(A_ptr[i * 4] * (int8_t)(A_ptr[i * 4] + "
           "A_ptr[i * 4 + 1]))));\n"
           "}\n",
           "#include <cstdint>\n");
    expect(ir, TD_LANG_TIRX, 0, tirx, "");
    td_ir_free(ir);

    /* Index constants are int32 values too; a value op does not fold. */
    ir = td_ir_new();
    int64_t s[] = {1};
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_I32, "local", 1, s);
    td_ir_store1(ir, B, td_int(ir, 0),
                 td_value_op(ir, TD_VAL_MUL, td_int(ir, 2), td_int(ir, 3)));
    expect(ir, TD_LANG_CUDA, 0, "B_ptr[0] = 2 * 3;\n", "");
    expect(ir, TD_LANG_TIRX, 0, "B[0] = 2 * 3\n", "");
    td_ir_free(ir);
}

/* One cast: its CUDA and TIRx spelling of load X[0] (X of dtype from). */
static void expect_cast(td_dtype from, td_dtype to, const char *cuda,
                        const char *tirx)
{
    td_ir *ir = td_ir_new();
    int64_t s[] = {2};
    td_ir_buf *X = td_ir_buffer(ir, "X", from, "local", 1, s);
    td_ir_buf *Y = td_ir_buffer(ir, "Y", to, "local", 1, s);
    td_ir_store1(ir, Y, td_int(ir, 0),
                 td_cast(ir, to, td_load1(ir, X, td_int(ir, 0))));
    assert_int_equal(td_ir_status(ir), 0);
    char want[256];
    snprintf(want, sizeof want, "Y_ptr[0] = %s;\n", cuda);
    expect(ir, TD_LANG_CUDA, 0, want, NULL);
    snprintf(want, sizeof want, "Y[0] = %s\n", tirx);
    expect(ir, TD_LANG_TIRX, 0, want, "");
    td_ir_free(ir);
}

static void test_casts(void **state)
{
    (void)state;
    static const struct {
        td_dtype from, to;
        const char *cuda;
    } cases[] = {
        /* to the 16-bit floats: one rounding to nearest even */
        {TD_F32, TD_F16, "__float2half_rn(X_ptr[0])"},
        {TD_F32, TD_BF16, "__float2bfloat16_rn(X_ptr[0])"},
        {TD_F64, TD_F16, "__double2half(X_ptr[0])"},
        {TD_F64, TD_BF16, "__double2bfloat16(X_ptr[0])"},
        {TD_BF16, TD_F16, "__float2half_rn((float)X_ptr[0])"},
        {TD_F16, TD_BF16, "__float2bfloat16_rn((float)X_ptr[0])"},
        {TD_I32, TD_F16, "__float2half_rn((float)X_ptr[0])"},
        {TD_U64, TD_F16, "__float2half_rn((float)X_ptr[0])"},
        {TD_I8, TD_BF16, "__float2bfloat16_rn((float)X_ptr[0])"},
        {TD_U16, TD_BF16, "__float2bfloat16_rn((float)X_ptr[0])"},
        {TD_I32, TD_BF16, "__int2bfloat16_rn(X_ptr[0])"},
        {TD_U32, TD_BF16, "__uint2bfloat16_rn(X_ptr[0])"},
        {TD_I64, TD_BF16, "__ll2bfloat16_rn(X_ptr[0])"},
        {TD_U64, TD_BF16, "__ull2bfloat16_rn(X_ptr[0])"},
        /* C casts; 16-bit floats through float32 */
        {TD_F16, TD_F32, "(float)X_ptr[0]"},
        {TD_BF16, TD_F32, "(float)X_ptr[0]"},
        {TD_F64, TD_F32, "(float)X_ptr[0]"},
        {TD_U8, TD_F32, "(float)X_ptr[0]"},
        {TD_F16, TD_F64, "(double)(float)X_ptr[0]"},
        {TD_BF16, TD_I32, "(int)(float)X_ptr[0]"},
        {TD_F16, TD_U8, "(uint8_t)(float)X_ptr[0]"},
        {TD_F32, TD_I32, "(int)X_ptr[0]"},
        {TD_F64, TD_I64, "(long long)X_ptr[0]"},
        {TD_F32, TD_U32, "(unsigned int)X_ptr[0]"},
        {TD_I64, TD_I32, "(int)X_ptr[0]"},
        {TD_I32, TD_F64, "(double)X_ptr[0]"},
        {TD_I16, TD_U64, "(unsigned long long)X_ptr[0]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char tirx[64];
        snprintf(tirx, sizeof tirx, "T.Cast(\"%s\", X[0])",
                 td_dtype_name(cases[k].to));
        expect_cast(cases[k].from, cases[k].to, cases[k].cuda, tirx);
    }

    /* A cast to the dtype an expression has is the expression. */
    td_ir *ir = td_ir_new();
    int64_t s[] = {4};
    td_ir_buf *F = td_ir_buffer(ir, "F", TD_F32, "local", 1, s);
    td_ir_buf *H = td_ir_buffer(ir, "H", TD_F16, "local", 1, s);
    td_expr *f0 = td_load1(ir, F, td_int(ir, 0));
    assert_ptr_equal(td_cast(ir, TD_F32, f0), f0);
    td_expr *one = td_int(ir, 1);
    assert_ptr_equal(td_cast(ir, TD_I32, one), one);
    /* Operands group: a sum under a C cast and a cast under a sum. */
    td_expr *h01 = td_value_op(ir, TD_VAL_ADD, td_load1(ir, H, td_int(ir, 0)),
                               td_load1(ir, H, td_int(ir, 1)));
    td_ir_store1(ir, F, td_int(ir, 1), td_cast(ir, TD_F32, h01));
    td_ir_store1(ir, F, td_int(ir, 2),
                 td_value_op(ir, TD_VAL_MUL,
                             td_cast(ir, TD_F32,
                                     td_load1(ir, H, td_int(ir, 2))),
                             f0));
    td_ir_store1(ir, H, td_int(ir, 3),
                 td_cast(ir, TD_F16, td_value_op(ir, TD_VAL_ADD, f0, f0)));
    td_ir_store1(ir, F, td_int(ir, 3),
                 td_cast(ir, TD_F32, td_cast(ir, TD_I32, td_int(ir, 7))));
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "F_ptr[1] = (float)(H_ptr[0] + H_ptr[1]);\n"
           "F_ptr[2] = (float)H_ptr[2] * F_ptr[0];\n"
           "H_ptr[3] = __float2half_rn(F_ptr[0] + F_ptr[0]);\n"
           "F_ptr[3] = (float)7;\n",
           "#include <cuda_fp16.h>\n");
    expect(ir, TD_LANG_TIRX, 0,
           "F[1] = T.Cast(\"float32\", H[0] + H[1])\n"
           "F[2] = T.Cast(\"float32\", H[2]) * F[0]\n"
           "H[3] = T.Cast(\"float16\", F[0] + F[0])\n"
           "F[3] = T.Cast(\"float32\", 7)\n",
           "");
    td_ir_free(ir);

    /* A 16-bit float that only a cast mentions still brings its header. */
    ir = td_ir_new();
    F = td_ir_buffer(ir, "F", TD_F32, "local", 1, s);
    f0 = td_load1(ir, F, td_int(ir, 0));
    td_ir_store1(ir, F, td_int(ir, 1),
                 td_cast(ir, TD_F32, td_cast(ir, TD_BF16, f0)));
    td_ir_store1(ir, F, td_int(ir, 2),
                 td_cast(ir, TD_F32, td_cast(ir, TD_F16, f0)));
    expect(ir, TD_LANG_CUDA, 0,
           "F_ptr[1] = (float)__float2bfloat16_rn(F_ptr[0]);\n"
           "F_ptr[2] = (float)__float2half_rn(F_ptr[0]);\n",
           "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n");
    expect(ir, TD_LANG_TIRX, 0,
           "F[1] = T.Cast(\"float32\", T.Cast(\"bfloat16\", F[0]))\n"
           "F[2] = T.Cast(\"float32\", T.Cast(\"float16\", F[0]))\n",
           "");
    td_ir_free(ir);
}

/* Literal 16-bit floats in both languages. */
static void test_half_constants(void **state)
{
    (void)state;
    static const double v[] = {1.0, 0.5, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0,
                               -0.0, 65504.0};
    static const char *const cuda[] = {
        "1.000000e+00f", "5.000000e-01f", "__int_as_float(0x7f800000)",
        "__int_as_float((int)0xff800000u)", "__int_as_float(0x7fffffff)",
        "-0.000000e+00f", "6.550400e+04f"};
    static const char *const tirx[] = {"1", "0.5", "\"inf\"", "\"-inf\"",
                                       "\"nan\"", "-0.0", "65504"};
    static const struct {
        td_dtype t;
        const char *conv;
        const char *header;
    } types[] = {{TD_F16, "__float2half", "#include <cuda_fp16.h>\n"},
                 {TD_BF16, "__float2bfloat16", "#include <cuda_bf16.h>\n"}};
    for (int k = 0; k < 2; k++) {
        td_ir *ir = td_ir_new();
        int64_t s[] = {8};
        td_ir_buf *H = td_ir_buffer(ir, "H", types[k].t, "local", 1, s);
        char want_c[1024] = "", want_t[1024] = "", line[128];
        for (int i = 0; i < 7; i++) {
            td_ir_store1(ir, H, td_int(ir, i),
                         td_const_f(ir, types[k].t, v[i]));
            snprintf(line, sizeof line, "H_ptr[%d] = %s(%s);\n", i,
                     types[k].conv, cuda[i]);
            strcat(want_c, line);
            snprintf(line, sizeof line, "H[%d] = T.%s(%s)\n", i,
                     td_dtype_name(types[k].t), tirx[i]);
            strcat(want_t, line);
        }
        assert_int_equal(td_ir_status(ir), 0);
        expect(ir, TD_LANG_CUDA, 0, want_c, types[k].header);
        expect(ir, TD_LANG_TIRX, 0, want_t, "");
        td_ir_free(ir);
    }
}

static void test_params(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {2};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F16, "local", 1, s);
    td_expr *alpha = td_param(ir, "alpha", TD_F16);
    /* The same parameter again; its name is taken for variables. */
    td_expr *again = td_param(ir, "alpha", TD_F16);
    assert_non_null(alpha);
    assert_non_null(again);
    td_var *v = td_ir_let(ir, "alpha", TD_F16,
                          td_value_op(ir, TD_VAL_MUL, alpha, again));
    assert_string_equal(v->name, "alpha_1");
    td_ir_store1(ir, A, td_int(ir, 0),
                 td_value_op(ir, TD_VAL_MAX, td_var_ref(ir, v),
                             td_load1(ir, A, td_int(ir, 1))));
    td_ir_store1(ir, A, td_int(ir, 1),
                 td_cast(ir, TD_F16, td_param(ir, "n", TD_I32)));
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "__half alpha_1 = alpha * alpha;\n"
           "A_ptr[0] = __hmax(alpha_1, A_ptr[1]);\n"
           "A_ptr[1] = __float2half_rn((float)n);\n",
           "#include <cuda_fp16.h>\n");
    expect(ir, TD_LANG_TIRX, 0,
           "alpha_1: T.float16 = alpha * alpha\n"
           "A[0] = T.max(alpha_1, A[1])\n"
           "A[1] = T.Cast(\"float16\", n)\n",
           "");
    td_ir_free(ir);

    /* Misuse: another dtype for a name, a name taken by a buffer (or its
     * _ptr spelling) or a keyword, not an identifier, a bad dtype. */
    for (int k = 0; k < 8; k++) {
        ir = td_ir_new();
        td_ir_buffer(ir, "A", TD_F32, "local", 1, s);
        td_param(ir, "beta", TD_F32);
        assert_int_equal(td_ir_status(ir), 0);
        td_expr *e = NULL;
        switch (k) {
        case 0: e = td_param(ir, "beta", TD_F64); break;
        case 1: e = td_param(ir, "A", TD_F32); break;
        case 2: e = td_param(ir, "A_ptr", TD_F32); break;
        case 3: e = td_param(ir, "for", TD_F32); break;
        case 4: e = td_param(ir, "expf", TD_F32); break;
        case 5: e = td_param(ir, "2x", TD_F32); break;
        case 6: e = td_param(ir, NULL, TD_F32); break;
        case 7: e = td_param(ir, "gamma", TD_DTYPE_COUNT); break;
        }
        assert_null(e);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
    /* A buffer cannot take a parameter's name either. */
    ir = td_ir_new();
    td_param(ir, "B", TD_F32);
    assert_null(td_ir_buffer(ir, "B", TD_F32, "local", 1, s));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
}

static const char f32x2_fma_rz[] =
    "__forceinline__ __device__ unsigned long long "
    "tvm_builtin_ptx_fma_rz_ftz_f32x2(unsigned long long a, unsigned long "
    "long b, unsigned long long c) {\n"
    "  unsigned long long d;\n"
    "  asm(\"fma.rz.ftz.f32x2 %0, %1, %2, %3;\" : \"=l\"(d) : \"l\"(a), "
    "\"l\"(b), \"l\"(c));\n"
    "  return d;\n"
    "}\n";

static void test_ptx_f32x2(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {4};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F32, "local", 1, s);
    td_var *p = td_ir_let(
        ir, "p", TD_U64,
        td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64, 2,
                     (td_expr *[]){td_load1(ir, A, td_int(ir, 0)),
                                   td_param(ir, "alpha", TD_F32)}));
    td_expr *pp[] = {td_var_ref(ir, p), td_var_ref(ir, p), td_var_ref(ir, p)};
    /* Printed in the order used; helpers in (op, rounding) order, once,
     * where the reductions' add.rn helper always was. */
    td_ir_assign(ir, p, td_ptx_f32x2(ir, "fma", "rz", 3, pp));
    td_ir_assign(ir, p, td_ptx_f32x2(ir, "sub", "rm", 2, pp));
    td_ir_assign(ir, p, td_ptx_f32x2(ir, "add", "rn", 2, pp));
    td_ir_assign(ir, p, td_intrinsic(ir, TD_INTRIN_PTX_ADD_F32X2, TD_U64, 2,
                                     pp));
    td_ir_assign(ir, p, td_ptx_f32x2(ir, "mul", "rp", 2, pp));
    td_ir_assign(ir, p, td_ptx_f32x2(ir, "fma", "rz", 3, pp));
    td_ir_store1(ir, A, td_int(ir, 1),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_HI, TD_F32, 1, pp));
    assert_int_equal(td_ir_status(ir), 0);
    char *body, *pre;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &body, &pre), 0);
    assert_string_equal(
        body,
        "unsigned long long p = tvm_builtin_ptx_mov_b64_pack(A_ptr[0], "
        "alpha);\n"
        "p = tvm_builtin_ptx_fma_rz_ftz_f32x2(p, p, p);\n"
        "p = tvm_builtin_ptx_sub_rm_ftz_f32x2(p, p);\n"
        "p = tvm_builtin_ptx_add_rn_ftz_f32x2(p, p);\n"
        "p = tvm_builtin_ptx_add_rn_ftz_f32x2(p, p);\n"
        "p = tvm_builtin_ptx_mul_rp_ftz_f32x2(p, p);\n"
        "p = tvm_builtin_ptx_fma_rz_ftz_f32x2(p, p, p);\n"
        "A_ptr[1] = tvm_builtin_ptx_mov_b64_unpack_hi(p);\n");
    static const char *const order[] = {
        "tvm_builtin_ptx_mov_b64_pack(float",
        "tvm_builtin_ptx_mov_b64_unpack_hi(unsigned",
        "tvm_builtin_ptx_add_rn_ftz_f32x2(unsigned",
        "tvm_builtin_ptx_sub_rm_ftz_f32x2(unsigned",
        "tvm_builtin_ptx_mul_rp_ftz_f32x2(unsigned",
        "tvm_builtin_ptx_fma_rz_ftz_f32x2(unsigned"};
    const char *last = pre;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        assert_int_equal(count(pre, order[k]), 1);
        assert_true(strstr(pre, order[k]) > last);
        last = strstr(pre, order[k]);
    }
    assert_true(strstr(pre, f32x2_fma_rz));
    assert_true(strstr(pre, "asm(\"sub.rm.ftz.f32x2 %0, %1, %2;\" : "
                            "\"=l\"(d) : \"l\"(a), \"l\"(b));\n"));
    assert_int_equal(count(pre, "#include"), 0);
    td_free(body);
    td_free(pre);
    expect(ir, TD_LANG_TIRX, 0,
           "p: T.uint64\n"
           "T.ptx.mov.b64(p, A[0], alpha)\n"
           "T.ptx.fma.rz.ftz.f32x2(p, p, p, p)\n"
           "T.ptx.sub.rm.ftz.f32x2(p, p, p)\n"
           "T.ptx.add.rn.ftz.f32x2(p, p, p)\n"
           "T.ptx.add.rn.ftz.f32x2(p, p, p)\n"
           "T.ptx.mul.rp.ftz.f32x2(p, p, p)\n"
           "T.ptx.fma.rz.ftz.f32x2(p, p, p, p)\n"
           "A[1] = T.ptx.mov.b64.unpack_hi(p)\n",
           "");
    td_ir_free(ir);

    /* Misuse: unknown op or rounding, the wrong arity, no arguments,
     * operands that are not 64-bit integers, a statement-only operand. */
    for (int k = 0; k < 11; k++) {
        ir = td_ir_new();
        td_expr *u = td_const_u(ir, TD_U64, 1);
        td_expr *args[] = {u, u, u};
        td_expr *e = NULL;
        switch (k) {
        case 0: e = td_ptx_f32x2(ir, "div", "rn", 2, args); break;
        case 1: e = td_ptx_f32x2(ir, "add", "rna", 2, args); break;
        case 2: e = td_ptx_f32x2(ir, NULL, "rn", 2, args); break;
        case 3: e = td_ptx_f32x2(ir, "add", NULL, 2, args); break;
        case 4: e = td_ptx_f32x2(ir, "fma", "rn", 2, args); break;
        case 5: e = td_ptx_f32x2(ir, "mul", "rz", 3, args); break;
        case 6: e = td_ptx_f32x2(ir, "add", "rn", 2, NULL); break;
        case 7:
            args[1] = td_const_f(ir, TD_F32, 1);
            e = td_ptx_f32x2(ir, "add", "rn", 2, args);
            break;
        case 8:
            args[0] = td_const_u(ir, TD_U32, 1);
            e = td_ptx_f32x2(ir, "sub", "rp", 2, args);
            break;
        case 9:
            args[2] = td_intrinsic(ir, TD_INTRIN_SYNCWARP, TD_I32, 0, NULL);
            e = td_ptx_f32x2(ir, "fma", "rm", 3, args);
            break;
        case 10: e = td_ptx_f32x2(ir, "ADD", "rn", 2, args); break;
        }
        assert_null(e);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
    /* A signed 64-bit operand is a pair too. */
    ir = td_ir_new();
    td_expr *i64 = td_const_i(ir, TD_I64, 0);
    assert_non_null(td_ptx_f32x2(ir, "add", "rz", 2, (td_expr *[]){i64, i64}));
    assert_int_equal(td_ir_status(ir), 0);
    td_ir_free(ir);
}

/* The source_code argument of a paired cast's TIRx call: the helper
 * (names: the pair in the helper's name, the destination's pair type, the
 * conversion, the source's pair type), ending in an escaped newline. */
#define PAIR_SRC(pair, dt, fn, st)                                           \
    ", source_code=\"__forceinline__ __device__ void tvm_builtin_cast_" pair \
    "(void *dst, void *src) { *(" dt " *)dst = " fn "(*(const " st          \
    " *)src); }\\n\""

/* Vectors built from lanes or pairs, pair arithmetic, the vector store;
 * misuse of pairs is an error, not wrong code. */
static void test_vector_pairs(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t sh[] = {4, 8};
    td_ir_buf *H = td_ir_buffer(ir, "H", TD_F16, "shared", 2, sh);
    td_ir_buf *G = td_ir_buffer(ir, "G", TD_F16, "shared", 2, sh);
    td_ir_buf *F = td_ir_buffer(ir, "F", TD_F32, "shared", 2, sh);
    td_ir_buf *I = td_ir_buffer(ir, "I", TD_I32, "shared", 2, sh);
    td_expr *z[] = {td_int(ir, 0), td_int(ir, 0)};
    td_var *h = td_ir_let_vector(ir, "h", H, 2, z, 4);
    td_var *f = td_ir_let_vector(ir, "f", F, 2, z, 4);
    td_var *k = td_ir_let_vector(ir, "k", I, 2, z, 4);
    td_expr *two = td_pair_splat(ir, td_const_f(ir, TD_F16, 2.0));
    td_expr *p0 = td_value_op(ir, TD_VAL_MUL, td_vec_pair(ir, h, 0), two);
    td_expr *p1 = td_math(ir, TD_MATH_EXP, td_vec_pair(ir, h, 1));
    td_var *r = td_ir_let_vector_of(ir, "r", TD_F16, 4, 2, (td_expr *[]){p0, p1});
    td_ir_store_vector(ir, G, 2, z, r);
    td_expr *c0 = td_cast(ir, TD_F16, td_vec_pair(ir, f, 0));
    td_expr *c1 = td_cast(ir, TD_F16, td_vec_pair(ir, f, 1));
    td_var *q = td_ir_let_vector_of(ir, "q", TD_F16, 4, 2, (td_expr *[]){c0, c1});
    td_ir_store_vector(ir, H, 2, (td_expr *[]){td_int(ir, 1), td_int(ir, 4)}, q);
    td_expr *l[4];
    for (int i = 0; i < 4; i++)
        l[i] = td_value_op(ir, TD_VAL_ADD, td_vec_lane(ir, k, i),
                           td_const_i(ir, TD_I32, 1));
    td_var *m = td_ir_let_vector_of(ir, "m", TD_I32, 4, 4, l);
    td_ir_store_vector(ir, I, 2, z, m);
    assert_int_equal(td_ir_status(ir), 0);
    char *body = NULL, *pre = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &body, &pre), 0);
    assert_non_null(strstr(body, "uint2 h = *(const uint2 *)&H_ptr[0];"));
    assert_non_null(strstr(body, "unsigned int r0 = td_half2_bits(__hmul2("
                                 "td_bits_half2(h.x), __half2half2("));
    assert_non_null(strstr(body, "unsigned int r1 = td_half2_bits(h2exp("
                                 "td_bits_half2(h.y)));"));
    assert_non_null(strstr(body, "uint2 r = make_uint2(r0, r1);"));
    assert_non_null(strstr(body, "*(uint2 *)&G_ptr[0] = r;"));
    assert_non_null(strstr(body, "__float22half2_rn(make_float2("
                                 "__uint_as_float(f.x), __uint_as_float(f.y)))"));
    assert_non_null(strstr(body, "*(uint2 *)&H_ptr[12] = q;"));
    assert_non_null(strstr(body, "make_uint4((unsigned int)((int)k.x + 1)"));
    assert_non_null(strstr(pre, "td_bits_half2(unsigned int u)"));
    td_free(body);
    td_free(pre);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &body, NULL), 0);
    assert_non_null(strstr(body, "r[T.ramp(0, 1, 2)] = h[T.ramp(0, 1, 2)] * "
                                 "T.Broadcast(T.float16(2), 2)"));
    assert_non_null(strstr(body, "q[T.ramp(2, 1, 2)] = T.Cast(\"float16x2\", "
                                 "f[T.ramp(2, 1, 2)])"));
    assert_non_null(strstr(body, "G[0, T.ramp(0, 1, 4)] = r[T.ramp(0, 1, 4)]"));
    td_free(body);
    td_ir_free(ir);

    /* misuse: each on a fresh IR */
    for (int c = 0; c < 9; c++) {
        ir = td_ir_new();
        H = td_ir_buffer(ir, "H", TD_F16, "shared", 2, sh);
        F = td_ir_buffer(ir, "F", TD_F32, "shared", 2, sh);
        z[0] = td_int(ir, 0);
        z[1] = td_int(ir, 0);
        h = td_ir_let_vector(ir, "h", H, 2, z, 4);
        f = td_ir_let_vector(ir, "f", F, 2, z, 4);
        td_expr *hp = td_vec_pair(ir, h, 0);
        switch (c) {
        case 0: td_value_op(ir, TD_VAL_DIV, hp, td_vec_pair(ir, h, 1)); break;
        case 1: td_value_op(ir, TD_VAL_ADD, hp, td_const_f(ir, TD_F16, 1)); break;
        case 2: td_math(ir, TD_MATH_SQRT, hp); break;
        case 3: td_cast(ir, TD_F32, hp); break;
        case 4: td_pair_splat(ir, td_const_f(ir, TD_F32, 1)); break;
        case 5: td_vec_pair(ir, h, 2); break;
        case 6: td_ir_store1(ir, H, td_int(ir, 0), hp); break;
        case 7: td_ir_let_vector_of(ir, "r", TD_F16, 4, 3, (td_expr *[]){hp, hp, hp}); break;
        case 8: td_ir_store_vector(ir, F, 2, z, h); break;
        }
        (void)f;
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

/* Vectors of 8- and 16-bit integer lanes (cut from and packed into words)
 * and of two 64-bit lanes (double2, longlong2, ulonglong2). */
static void test_vector_lanes(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t sh[] = {64};
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_I8, "shared", 1, sh);
    td_ir_buf *U = td_ir_buffer(ir, "U", TD_U16, "shared", 1, sh);
    td_ir_buf *D = td_ir_buffer(ir, "D", TD_F64, "shared", 1, sh);
    td_ir_buf *L = td_ir_buffer(ir, "L", TD_U64, "shared", 1, sh);
    td_expr *z[] = {td_int(ir, 0)};
    td_var *b = td_ir_let_vector(ir, "b", B, 1, z, 8);
    td_var *u = td_ir_let_vector(ir, "u", U, 1, z, 2);
    td_var *d = td_ir_let_vector(ir, "d", D, 1, z, 2);
    td_var *l = td_ir_let_vector(ir, "l", L, 1, z, 2);
    td_expr *bl[8], *ul[2], *dl[2], *ll[2];
    for (int i = 0; i < 8; i++)
        bl[i] = td_value_op(ir, TD_VAL_ADD, td_vec_lane(ir, b, i),
                            td_const_i(ir, TD_I8, 1));
    for (int i = 0; i < 2; i++) {
        ul[i] = td_vec_lane(ir, u, 1 - i);
        dl[i] = td_value_op(ir, TD_VAL_MUL, td_vec_lane(ir, d, i),
                            td_const_f(ir, TD_F64, 2.0));
        ll[i] = td_vec_lane(ir, l, i);
    }
    td_ir_store_vector(ir, B, 1, z, td_ir_let_vector_of(ir, "rb", TD_I8, 8, 8, bl));
    td_ir_store_vector(ir, U, 1, z, td_ir_let_vector_of(ir, "ru", TD_U16, 2, 2, ul));
    td_ir_store_vector(ir, D, 1, z, td_ir_let_vector_of(ir, "rd", TD_F64, 2, 2, dl));
    td_ir_store_vector(ir, L, 1, z, td_ir_let_vector_of(ir, "rl", TD_U64, 2, 2, ll));
    assert_int_equal(td_ir_status(ir), 0);
    char *body = NULL, *pre = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &body, &pre), 0);
    assert_non_null(strstr(body, "uint2 b = *(const uint2 *)&B_ptr[0];"));
    /* lane 0 cut from the low byte, lane 5 from bits 8..15 of word 1 */
    assert_non_null(strstr(body, "(int8_t)b.x + (int8_t)1"));
    assert_non_null(strstr(body, "(int8_t)(b.y >> 8) + (int8_t)1"));
    assert_non_null(strstr(body, "unsigned int rb1 = ((unsigned int)(uint8_t)("));
    assert_non_null(strstr(body, " << 24);"));
    assert_non_null(strstr(body, "uint2 rb = make_uint2(rb0, rb1);"));
    /* one word: no field; lanes swapped */
    assert_non_null(strstr(body, "unsigned int u = *(const unsigned int *)&U_ptr[0];"));
    assert_non_null(strstr(body, "unsigned int ru = ((unsigned int)(uint16_t)("
                                 "(uint16_t)(u >> 16)) | (unsigned int)(uint16_t)("
                                 "(uint16_t)u) << 16);"));
    assert_non_null(strstr(body, "double2 d = *(const double2 *)&D_ptr[0];"));
    assert_non_null(strstr(body, "double2 rd = make_double2(d.x * 2.000000e+00, "
                                 "d.y * 2.000000e+00);"));
    assert_non_null(strstr(body, "ulonglong2 rl = make_ulonglong2(l.x, l.y);"));
    assert_non_null(strstr(body, "*(ulonglong2 *)&L_ptr[0] = rl;"));
    td_free(body);
    td_free(pre);
    td_ir_free(ir);

    /* a 64-bit vector of one lane, and 8 bytes of int64, are no vectors */
    ir = td_ir_new();
    D = td_ir_buffer(ir, "D", TD_I64, "shared", 1, sh);
    z[0] = td_int(ir, 0);
    td_ir_let_vector(ir, "d", D, 1, z, 1);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    D = td_ir_buffer(ir, "D", TD_I64, "shared", 1, sh);
    z[0] = td_int(ir, 0);
    td_ir_let_vector(ir, "d", D, 1, z, 4);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
}

static void test_cast_pair(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s2[] = {2, 8}, s1[] = {8};
    td_ir_buf *F = td_ir_buffer(ir, "F", TD_F32, "local", 2, s2);
    td_ir_buf *H = td_ir_buffer(ir, "H", TD_F16, "shared", 2, s2);
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_BF16, "shared", 1, s1);
    td_ir_buf *t = td_ir_scratch(ir, "t", TD_F32, 4);
    td_var *i = td_ir_for(ir, "i", td_int(ir, 2), TD_LOOP_SERIAL);
    td_var *o = td_ir_for(ir, "o", td_int(ir, 1), TD_LOOP_SERIAL);
    td_expr *j = td_add(ir, td_mul(ir, td_var_ref(ir, o), td_int(ir, 4)),
                        td_int(ir, 2));
    td_ir_cast_pair(ir, H, 2, (td_expr *[]){td_var_ref(ir, i), j}, F, 2,
                    (td_expr *[]){td_var_ref(ir, i), td_int(ir, 0)});
    td_ir_cast_pair(ir, F, 2, (td_expr *[]){td_var_ref(ir, i), td_int(ir, 6)},
                    H, 2, (td_expr *[]){td_var_ref(ir, i), td_int(ir, 4)});
    td_ir_cast_pair(ir, B, 1,
                    (td_expr *[]){td_mul(ir, td_var_ref(ir, i),
                                         td_int(ir, 4))},
                    F, 2, (td_expr *[]){td_var_ref(ir, i), td_int(ir, 0)});
    td_ir_cast_pair(ir, t, 1, (td_expr *[]){td_int(ir, 2)}, B, 1,
                    (td_expr *[]){td_add(ir, td_int(ir, 6), td_int(ir, 0))});
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "float t[4];\n"
           "for (int i = 0; i < 2; ++i) {\n"
           "  *(__half2 *)&H_ptr[i * 8 + 2] = "
           "__float22half2_rn(*(const float2 *)&F_ptr[i * 8]);\n"
           "  *(float2 *)&F_ptr[i * 8 + 6] = "
           "__half22float2(*(const __half2 *)&H_ptr[i * 8 + 4]);\n"
           "  *(__nv_bfloat162 *)&B_ptr[i * 4] = "
           "__float22bfloat162_rn(*(const float2 *)&F_ptr[i * 8]);\n"
           "  *(float2 *)&t[2] = "
           "__bfloat1622float2(*(const __nv_bfloat162 *)&B_ptr[6]);\n"
           "}\n",
           "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n");
    expect(ir, TD_LANG_TIRX, 0,
           "t = T.alloc_buffer((4,), \"float32\", scope=\"local\")\n"
           "for i in T.serial(2):\n"
           "    for o in T.serial(1):\n"
           "        T.cuda.func_call(\"tvm_builtin_cast_float32x2_float16x2\", "
           "T.address_of(H[i, o * 4 + 2]), T.address_of(F[i, 0])"
           PAIR_SRC("float32x2_float16x2", "__half2", "__float22half2_rn",
                    "float2") ")\n"
           "        T.cuda.func_call(\"tvm_builtin_cast_float16x2_float32x2\", "
           "T.address_of(F[i, 6]), T.address_of(H[i, 4])"
           PAIR_SRC("float16x2_float32x2", "float2", "__half22float2",
                    "__half2") ")\n"
           "        T.cuda.func_call(\"tvm_builtin_cast_float32x2_bfloat16x2\", "
           "T.address_of(B[i * 4]), T.address_of(F[i, 0])"
           PAIR_SRC("float32x2_bfloat16x2", "__nv_bfloat162",
                    "__float22bfloat162_rn", "float2") ")\n"
           "        T.cuda.func_call(\"tvm_builtin_cast_bfloat16x2_float32x2\", "
           "T.address_of(t[2]), T.address_of(B[6])"
           PAIR_SRC("bfloat16x2_float32x2", "float2", "__bfloat1622float2",
                    "__nv_bfloat162") ")\n",
           "");
    td_ir_free(ir);

    /* Misuse: pairs other than float32 <-> float16 / bfloat16, the wrong
     * rank, missing buffers or indices, a last dimension of one, a
     * constant index without room for the second element, a buffer of
     * another IR. */
    td_ir *other = td_ir_new();
    td_ir_buf *foreign = td_ir_buffer(other, "G", TD_F32, "local", 1, s1);
    for (int k = 0; k < 13; k++) {
        ir = td_ir_new();
        int64_t s3[] = {8, 1};
        F = td_ir_buffer(ir, "F", TD_F32, "local", 1, s1);
        H = td_ir_buffer(ir, "H", TD_F16, "local", 1, s1);
        B = td_ir_buffer(ir, "B", TD_BF16, "local", 1, s1);
        td_ir_buf *D = td_ir_buffer(ir, "D", TD_F64, "local", 1, s1);
        td_ir_buf *N = td_ir_buffer(ir, "N", TD_F16, "local", 2, s3);
        td_expr *z[] = {td_int(ir, 0), td_int(ir, 0)};
        td_expr *seven[] = {td_int(ir, 7)}, *neg[] = {td_int(ir, -2)};
        td_expr *none[] = {NULL};
        switch (k) {
        case 0: td_ir_cast_pair(ir, H, 1, z, B, 1, z); break;
        case 1: td_ir_cast_pair(ir, F, 1, z, F, 1, z); break;
        case 2: td_ir_cast_pair(ir, F, 1, z, D, 1, z); break;
        case 3: td_ir_cast_pair(ir, H, 2, z, F, 1, z); break;
        case 4: td_ir_cast_pair(ir, NULL, 1, z, F, 1, z); break;
        case 5: td_ir_cast_pair(ir, H, 1, z, NULL, 1, z); break;
        case 6: td_ir_cast_pair(ir, H, 1, NULL, F, 1, z); break;
        case 7: td_ir_cast_pair(ir, H, 1, z, F, 1, none); break;
        case 8: td_ir_cast_pair(ir, N, 2, z, F, 1, z); break;
        case 9: td_ir_cast_pair(ir, H, 1, seven, F, 1, z); break;
        case 10: td_ir_cast_pair(ir, H, 1, z, F, 1, neg); break;
        case 11: td_ir_cast_pair(ir, H, 1, z, foreign, 1, z); break;
        case 12: td_ir_cast_pair(ir, H, 0, z, F, 1, z); break;
        }
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
    td_ir_free(other);
}

/* Misuse of the value builders; NULL operands pass through. */
/* The confined dtypes (block-scaled MMA's float8_e8m0fnu and
 * float4_e2m1fn): buffers of them exist (the MMA reads them from memory)
 * and have CUDA's type names, but no constant, cast, arithmetic,
 * combiner or shuffle takes them, and no 4-bit element is loaded. */
static void test_confined_dtypes(void **state)
{
    (void)state;
    assert_string_equal(td_cuda_type_name(TD_F8E8M0), "__nv_fp8_e8m0");
    assert_string_equal(td_cuda_type_name(TD_F4E2M1), "__nv_fp4_e2m1");
    int64_t s[] = {4};
    static const td_dtype conf[2] = {TD_F8E8M0, TD_F4E2M1};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 8; k++) {
            td_ir *ir = td_ir_new();
            td_ir_buf *F = td_ir_buffer(ir, "F", TD_F32, "local", 1, s);
            td_ir_buf *X = td_ir_buffer(ir, "X", conf[t], "local", 1, s);
            assert_non_null(X);
            assert_int_equal(td_ir_status(ir), 0);
            td_expr *f = td_load1(ir, F, td_int(ir, 0));
            /* A 4-bit element is no value: loading one fails, and the
             * builders below are checked with a float8_e8m0fnu operand
             * standing in for it. */
            td_expr *x = td_load1(ir, X, td_int(ir, 0));
            if (conf[t] == TD_F4E2M1) {
                assert_null(x);
                assert_int_equal(td_ir_status(ir), TD_EINVAL);
                td_ir_free(ir);
                ir = td_ir_new();
                F = td_ir_buffer(ir, "F", TD_F32, "local", 1, s);
                X = td_ir_buffer(ir, "X", TD_F8E8M0, "local", 1, s);
                f = td_load1(ir, F, td_int(ir, 0));
                x = td_load1(ir, X, td_int(ir, 0));
            }
            assert_non_null(x);
            assert_int_equal(td_ir_status(ir), 0);
            td_expr *e = NULL;
            switch (k) {
            case 0: e = td_const_f(ir, conf[t], 1.0); break;
            case 1: e = td_cast(ir, conf[t], f); break;
            case 2: e = td_cast(ir, TD_F32, x); break;
            case 3: e = td_value_op(ir, TD_VAL_MUL, x, x); break;
            case 4: e = td_identity(ir, TD_COMBINE_SUM, conf[t]); break;
            case 5: e = td_combine(ir, TD_COMBINE_MAX, x, x); break;
            case 6: e = td_warp_reduce(ir, TD_COMBINE_SUM, 32, x, conf[t]);
                    break;
            case 7: e = td_math(ir, TD_MATH_EXP, x); break;
            }
            assert_null(e);
            assert_int_equal(td_ir_status(ir), TD_EINVAL);
            td_ir_free(ir);
        }
}

static void test_value_errors(void **state)
{
    (void)state;
    int64_t s[] = {4};
    for (int k = 0; k < 10; k++) {
        td_ir *ir = td_ir_new();
        td_ir_buf *F = td_ir_buffer(ir, "F", TD_F32, "local", 1, s);
        td_ir_buf *H = td_ir_buffer(ir, "H", TD_F16, "local", 1, s);
        td_ir_buf *I = td_ir_buffer(ir, "I", TD_I32, "local", 1, s);
        td_expr *f = td_load1(ir, F, td_int(ir, 0));
        td_expr *h = td_load1(ir, H, td_int(ir, 0));
        td_expr *i = td_load1(ir, I, td_int(ir, 0));
        td_expr *sync = td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0,
                                     NULL);
        td_expr *e = NULL;
        switch (k) {
        case 0: e = td_value_op(ir, TD_VAL_ADD, f, h); break;
        case 1: e = td_value_op(ir, TD_VAL_MAX, i, f); break;
        case 2: e = td_value_op(ir, (td_valop)6, f, f); break;
        case 3: e = td_value_op(ir, TD_VAL_MUL, sync, sync); break;
        case 4: e = td_math(ir, TD_MATH_EXP, i); break;
        case 5: e = td_math(ir, (td_mathfn)4, f); break;
        case 6: e = td_math(ir, TD_MATH_SQRT, td_int(ir, 4)); break;
        case 7: e = td_cast(ir, TD_DTYPE_COUNT, f); break;
        case 8: e = td_cast(ir, TD_F32, sync); break;
        case 9: e = td_math(ir, TD_MATH_LOG2, sync); break;
        }
        assert_null(e);
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        /* The error sticks: every value builder is a no-op now. */
        assert_null(td_value_op(ir, TD_VAL_ADD, f, f));
        assert_null(td_math(ir, TD_MATH_EXP, f));
        assert_null(td_cast(ir, TD_F16, f));
        assert_null(td_param(ir, "x", TD_F32));
        assert_null(td_ptx_f32x2(ir, "add", "rn", 2,
                                 (td_expr *[]){f, f}));
        td_ir_cast_pair(ir, H, 1, (td_expr *[]){td_int(ir, 0)}, F, 1,
                        (td_expr *[]){td_int(ir, 0)});
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }

    td_ir *ir = td_ir_new();
    td_expr *one = td_const_f(ir, TD_F32, 1);
    td_expr *u = td_const_u(ir, TD_U64, 1);
    assert_null(td_value_op(ir, TD_VAL_SUB, NULL, one));
    assert_null(td_value_op(ir, TD_VAL_SUB, one, NULL));
    assert_null(td_math(ir, TD_MATH_EXP2, NULL));
    assert_null(td_cast(ir, TD_F16, NULL));
    assert_null(td_ptx_f32x2(ir, "fma", "rn", 3, (td_expr *[]){u, NULL, u}));
    assert_int_equal(td_ir_status(ir), 0);
    /* A NULL IR is harmless. */
    assert_null(td_value_op(NULL, TD_VAL_ADD, one, one));
    assert_null(td_math(NULL, TD_MATH_EXP, one));
    assert_null(td_cast(NULL, TD_F16, one));
    assert_null(td_param(NULL, "x", TD_F32));
    assert_null(td_ptx_f32x2(NULL, "add", "rn", 2, (td_expr *[]){u, u}));
    td_ir_cast_pair(NULL, NULL, 1, NULL, NULL, 1, NULL);
    td_ir_free(ir);
}

/* The simplifier reaches into the new nodes: loads inside value ops,
 * math, casts and packed ops get their indices folded, and the variable
 * of a dropped CUDA loop becomes 0 there. */
static void test_value_folding(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t s[] = {4, 4};
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F32, "local", 2, s);
    td_ir_buf *P = td_ir_buffer(ir, "P", TD_U64, "local", 2, s);
    td_ir_buf *H = td_ir_buffer(ir, "H", TD_F16, "local", 2, s);
    td_var *o = td_ir_for(ir, "o", td_int(ir, 1), TD_LOOP_SERIAL);
    td_expr *r = td_add(ir, td_mul(ir, td_var_ref(ir, o), td_int(ir, 1)),
                        td_mul(ir, td_int(ir, 2), td_int(ir, 1)));
    td_expr *a = td_load(ir, A, 2, (td_expr *[]){r, td_var_ref(ir, o)});
    td_expr *p = td_load(ir, P, 2, (td_expr *[]){r, td_int(ir, 3)});
    td_ir_store(ir, A, 2, (td_expr *[]){td_var_ref(ir, o), r},
                td_value_op(ir, TD_VAL_DIV,
                            td_math(ir, TD_MATH_SQRT, a),
                            td_cast(ir, TD_F32,
                                    td_cast(ir, TD_I32, a))));
    td_ir_store(ir, P, 2, (td_expr *[]){td_var_ref(ir, o), r},
                td_ptx_f32x2(ir, "mul", "rn", 2, (td_expr *[]){p, p}));
    td_ir_cast_pair(ir, H, 2, (td_expr *[]){r, td_add(ir, td_var_ref(ir, o),
                                                      td_int(ir, 0))},
                    A, 2, (td_expr *[]){td_var_ref(ir, o), r});
    td_ir_end_for(ir);
    assert_int_equal(td_ir_status(ir), 0);
    expect(ir, TD_LANG_CUDA, 0,
           "A_ptr[2] = sqrtf(A_ptr[8]) / (float)(int)A_ptr[8];\n"
           "P_ptr[2] = tvm_builtin_ptx_mul_rn_ftz_f32x2(P_ptr[11], "
           "P_ptr[11]);\n"
           "*(__half2 *)&H_ptr[8] = "
           "__float22half2_rn(*(const float2 *)&A_ptr[2]);\n",
           NULL);
    expect(ir, TD_LANG_TIRX, 0,
           "for o in T.serial(1):\n"
           "    A[o, o + 2] = T.sqrt(A[o + 2, o]) / "
           "T.Cast(\"float32\", T.Cast(\"int32\", A[o + 2, o]))\n"
           "    T.ptx.mul.rn.ftz.f32x2(P[o, o + 2], P[o + 2, 3], "
           "P[o + 2, 3])\n"
           "    T.cuda.func_call(\"tvm_builtin_cast_float32x2_float16x2\", "
           "T.address_of(H[o + 2, o]), T.address_of(A[o, o + 2])"
           PAIR_SRC("float32x2_float16x2", "__half2", "__float22half2_rn",
                    "float2") ")\n",
           "");
    td_ir_free(ir);
}

/* ---- allocation failures ----------------------------------------------- */

/* Builds an IR that needs several arena blocks and uses every feature;
 * returns its status (0 when everything succeeded). */
static int build_big(td_ir **out)
{
    td_ir *ir = td_ir_new();
    *out = ir;
    if (ir == NULL)
        return TD_ENOMEM;
    int64_t sa[] = {4, 64}, sb[] = {4};
    td_ir_buf *A = td_ir_buffer(ir, "A_local", TD_F16, "local", 2, sa);
    td_ir_buf *B = td_ir_buffer(ir, "B_local", TD_F16, "local", 1, sb);
    td_ir_buf *acc = td_ir_scratch(ir, "acc", TD_F32, 8);
    td_ir_comment(ir, "big");
    td_var *spa = td_ir_for(ir, "spa", td_int(ir, 4), TD_LOOP_SERIAL);
    td_ir_store1(ir, B, td_var_ref(ir, spa),
                 td_identity(ir, TD_COMBINE_MAX, TD_F16));
    for (int r = 0; r < 40; r++) {
        td_var *red = td_ir_for(ir, "red", td_int(ir, 64), TD_LOOP_UNROLL);
        td_expr *ia[] = {td_var_ref(ir, spa), td_var_ref(ir, red)};
        td_ir_store1(ir, B, td_var_ref(ir, spa),
                     td_combine(ir, TD_COMBINE_MAX,
                                td_load1(ir, B, td_var_ref(ir, spa)),
                                td_load(ir, A, 2, ia)));
        td_ir_end_for(ir);
    }
    td_var *v = td_ir_let(ir, "v", TD_F16,
                          td_load1(ir, B, td_var_ref(ir, spa)));
    td_ir_if(ir, td_eq(ir, td_var_ref(ir, spa), td_int(ir, 0)));
    td_ir_assign(ir, v, td_warp_reduce(ir, TD_COMBINE_MIN, 16,
                                       td_var_ref(ir, v), TD_F16));
    td_ir_else(ir);
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCWARP, TD_I32, 0, NULL));
    td_ir_end_if(ir);
    td_ir_store1(ir, acc, td_int(ir, 0),
                 td_intrinsic(ir, TD_INTRIN_PTX_MAX3_F32, TD_F32, 3,
                              (td_expr *[]){td_const_f(ir, TD_F32, 1),
                                            td_const_f(ir, TD_F32, 2),
                                            td_const_f(ir, TD_F32, 3)}));
    /* The elementwise builders. */
    td_expr *h = td_load1(ir, B, td_var_ref(ir, spa));
    td_ir_store1(ir, acc, td_int(ir, 1),
                 td_value_op(ir, TD_VAL_MAX,
                             td_cast(ir, TD_F32,
                                     td_math(ir, TD_MATH_EXP2,
                                             td_value_op(ir, TD_VAL_MUL, h,
                                                         td_param(ir, "scale",
                                                                  TD_F16)))),
                             td_load1(ir, acc, td_int(ir, 2))));
    td_expr *u = td_const_u(ir, TD_U64, 7);
    td_ir_store1(ir, acc, td_int(ir, 3),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_LO, TD_F32, 1,
                              (td_expr *[]){td_ptx_f32x2(
                                  ir, "fma", "rm", 3,
                                  (td_expr *[]){u, u, u})}));
    td_expr *ia[] = {td_var_ref(ir, spa), td_int(ir, 2)};
    td_ir_cast_pair(ir, acc, 1, (td_expr *[]){td_int(ir, 4)}, A, 2, ia);
    td_ir_end_for(ir);
    return td_ir_status(ir);
}

/* Fails the nth allocation (shared counting allocator), for every n until
 * one run allocates without a failure: a failed allocation must come back
 * as TD_ENOMEM from the builder or a printer, and leak nothing. */
static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_install();
    bool done = false;
    long n;
    for (n = 1; !done && n < 100000; n++) {
        alloc_arm(n);
        g_ca.live = 0;
        td_ir *ir;
        int st = build_big(&ir);
        char *b = NULL, *p = NULL, *b2 = NULL;
        int e1 = -100, e2 = -100;
        if (st == 0) {
            e1 = td_ir_print(ir, TD_LANG_CUDA, 1, &b, &p);
            if (e1 == 0)
                e2 = td_ir_print(ir, TD_LANG_TIRX, 0, &b2, NULL);
        }
        if (st != 0) {
            assert_int_equal(st, TD_ENOMEM);
        } else if (e1 != 0) {
            assert_int_equal(e1, TD_ENOMEM);
            assert_null(b);
            assert_null(p);
        } else if (e2 != 0) {
            assert_int_equal(e2, TD_ENOMEM);
            assert_null(b2);
        } else {
            /* Everything succeeded: only when no failure was injected. */
            assert_false(g_ca.failed);
            done = true;
            assert_true(strstr(b, "__float2half(-65504.0f)"));
            assert_true(strstr(p, "tvm_builtin_cuda_warp_reduce_min_16"));
            assert_true(strstr(b2, "T.min_value(\"float16\")"));
            assert_true(strstr(b, "fmaxf((float)hexp2(B_local_ptr[spa] * "
                                  "scale), acc[2])"));
            assert_true(strstr(p, "fma.rm.ftz.f32x2"));
            assert_true(strstr(b, "*(float2 *)&acc[4] = __half22float2("));
            assert_true(strstr(b2, "T.ptx.fma.rm.ftz.f32x2(T.uint64(7)"));
        }
        td_free(b);
        td_free(p);
        td_free(b2);
        td_ir_free(ir);
        assert_int_equal(g_ca.live, 0);
    }
    td_set_allocator(NULL);
    assert_true(done);
    assert_true(n > 10); /* the loop did exercise failures */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_seed_accum_max),
        cmocka_unit_test(test_buffer_layout),
        cmocka_unit_test(test_ptx_access),
        cmocka_unit_test(test_cp_async),
        cmocka_unit_test(test_ptx_matrix),
        cmocka_unit_test(test_ptx_matrix_words),
        cmocka_unit_test(test_nested_folding),
        cmocka_unit_test(test_fold_rules),
        cmocka_unit_test(test_fold_keeps_calls),
        cmocka_unit_test(test_fold_unsplit),
        cmocka_unit_test(test_identities),
        cmocka_unit_test(test_identity_values),
        cmocka_unit_test(test_combiners),
        cmocka_unit_test(test_value_grouping),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_if_let_scratch),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_intrinsics),
        cmocka_unit_test(test_warp_reduce_helpers),
        cmocka_unit_test(test_packed_prelude),
        cmocka_unit_test(test_sticky_errors),
        cmocka_unit_test(test_scope_errors),
        cmocka_unit_test(test_null_operands),
        cmocka_unit_test(test_value_ops_float),
        cmocka_unit_test(test_value_ops_int),
        cmocka_unit_test(test_casts),
        cmocka_unit_test(test_half_constants),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_ptx_f32x2),
        cmocka_unit_test(test_cast_pair),
        cmocka_unit_test(test_vector_pairs),
        cmocka_unit_test(test_vector_lanes),
        cmocka_unit_test(test_value_errors),
        cmocka_unit_test(test_confined_dtypes),
        cmocka_unit_test(test_value_folding),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
