/*
 * Unit tests of the asynchronous IR nodes (codegen/ir_async.c) and their
 * two printers: each node built and printed in CUDA (the call, and its
 * prelude helper with the PTX and the host half) and in TIRx (the form TVM
 * 0.27 prints, design/copy_async/probes/out_all.txt and the forms probed
 * for the synchronisation nodes); the tensor maps' deduplication, names
 * and kernel parameters; the tensor-memory loads and stores (tcgen05.ld /
 * st) and copy (tcgen05.cp); and the refusals of bad operands.
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
#include "tensor_map.h"

#include "../common/td_test_alloc.h"

static char *print(const td_ir *ir, td_lang lang, char **prelude)
{
    char *b = NULL, *p = NULL;
    assert_int_equal(td_ir_status(ir), 0);
    assert_int_equal(td_ir_print(ir, lang, 0, &b, &p), 0);
    if (prelude != NULL)
        *prelude = p;
    else
        td_free(p);
    return b;
}

static void expect(const td_ir *ir, td_lang lang, const char *want)
{
    char *b = print(ir, lang, NULL);
    assert_string_equal(b, want);
    td_free(b);
}

static void has(const char *hay, const char *needle)
{
    if (hay == NULL)
        fail_msg("missing:\n%s\nin: (no text: the print failed)", needle);
    else if (strstr(hay, needle) == NULL)
        fail_msg("missing:\n%s\nin:\n%s", needle, hay);
}

/* f16 A[256, 64] rows `row`:row+128 into a [128, 64] tile (probe_host.py
 * g2s_128x64_f16: dims 64, 256, stride 128 B, box 64, 128), planned by
 * tma_auto's planner. */
static td_tmap plan(int64_t rows, int swizzle128)
{
    td_tmap_request r;
    td__tmap_request_init(&r);
    r.dtype = "float16";
    r.rank = 2;
    r.shape[0] = rows;
    r.shape[1] = 64;
    r.extent[0] = 128;
    r.extent[1] = 64;
    r.sm = 90;
    if (swizzle128)
        r.smem = TD_TMAP_SMEM_SW128;
    td_tmap m;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td__tmap_plan(&r, &m, &d), 0);
    return m;
}

typedef struct fixture {
    td_ir *ir;
    td_ir_buf *A, *S, *mbar;
    const td_ir_tmap *map;
} fixture;

static fixture setup(void)
{
    fixture f;
    f.ir = td_ir_new();
    f.A = td_ir_buffer(f.ir, "A", TD_F16, "global", 2, (int64_t[]){256, 64});
    f.S = td_ir_buffer(f.ir, "A_smem", TD_F16, "shared.dyn", 2,
                       (int64_t[]){128, 64});
    f.mbar = td_ir_buffer(f.ir, "mbar", TD_U64, "shared", 1, (int64_t[]){4});
    td_tmap m = plan(256, 0);
    f.map = td_ir_tensor_map(f.ir, f.A, &m);
    assert_non_null(f.map);
    return f;
}

static td_ir_addr at(fixture *f, td_ir_buf *b, int64_t off)
{
    (void)f;
    return (td_ir_addr){b, td_int(f->ir, off)};
}

/* ---- the synchronisation nodes ------------------------------------------ */

static void test_sync(void **state)
{
    (void)state;
    fixture f = setup();
    td_ir *ir = f.ir;
    td_var *k = td_ir_for(ir, "k", td_int(ir, 8), TD_LOOP_SERIAL);
    td_expr *stage = td_mod(ir, td_var_ref(ir, k), td_int(ir, 4));
    td_expr *parity = td_mod(ir, td_div(ir, td_var_ref(ir, k), td_int(ir, 4)),
                             td_int(ir, 2));
    td_ir_mbar_init(ir, at(&f, f.mbar, 1), td_int(ir, 1));
    td_ir_mbar_arrive_expect_tx(ir, (td_ir_addr){f.mbar, stage},
                                td_int(ir, 16384));
    td_ir_mbar_wait(ir, (td_ir_addr){f.mbar, stage}, parity);
    td_ir_end_for(ir);
    td_ir_fence_proxy_async(ir);
    td_ir_fence_mbarrier_init(ir);
    td_ir_cluster_sync(ir);
    td_ir_bulk_commit(ir);
    td_ir_bulk_wait_read(ir, 0);
    td_ir_prefetch_tensormap(ir, f.map);

    /* TVM prints them so (T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([1]),
     * T.uint32(1)) and the others, printed back by the wheel). */
    expect(ir, TD_LANG_TIRX,
           "A_tensormap = T.TensorMap()\n"
           "for k in T.serial(8):\n"
           "    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of("
           "mbar[1])), T.uint32(1), \"init\", \"\", \"shared\", \"b64\", "
           "\"\")\n"
           "    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of("
           "mbar[k % 4])), T.uint32(16384), \"arrive\", \"expect_tx\", \"\", "
           "\"\", \"shared\", \"b64\", \"\")\n"
           "    T.cuda.mbarrier_wait(T.address_of(mbar[k % 4]), k // 4 % 2)\n"
           "T.ptx.fence(\"proxy\", \"async\", \"shared::cta\", \"\")\n"
           "T.ptx.fence(\"mbarrier_init\", \"release\", \"cluster\", \"\")\n"
           "T.cuda.cluster_sync()\n"
           "T.ptx.cp(\"async\", \"bulk\", \"commit_group\", \"\")\n"
           "T.ptx.cp(0, \"async\", \"bulk\", \"wait_group\", \"read\", \"\")\n"
           "T.ptx.prefetch(T.reinterpret(T.handle().ty, T.address_of("
           "A_tensormap)), \"\", \"\", \"\", \"tensormap\", \"\")\n");

    char *p = NULL;
    char *b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(b,
                        "for (int k = 0; k < 8; ++k) {\n"
                        "  td_mbar_init(mbar_ptr + 1, 1);\n"
                        "  td_mbar_arrive_expect_tx(mbar_ptr + k % 4, 16384);\n"
                        "  td_mbar_wait(mbar_ptr + k % 4, k / 4 % 2);\n"
                        "}\n"
                        "td_fence_proxy_async();\n"
                        "td_fence_mbarrier_init();\n"
                        "td_cluster_sync();\n"
                        "td_bulk_commit_group();\n"
                        "td_bulk_wait_group_read<0>();\n"
                        "td_prefetch_tensormap(&A_tensormap);\n");
    has(p, "#include <cuda.h>\n");
    has(p, "asm volatile(\"mbarrier.init.shared.b64 [%0], %1;\" : : "
           "\"r\"((unsigned int)__cvta_generic_to_shared(bar)), "
           "\"r\"(count) : \"memory\");\n#else\n"
           "  td_emu_mbar_init((uint64_t *)bar, count);\n#endif");
    has(p, "mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;");
    has(p, "td_emu_mbar_arrive_expect_tx((uint64_t *)bar, bytes);");
    has(p, "  while (!done)\n    asm volatile(\"{\\n  .reg .pred p;\\n  "
           "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n  "
           "selp.u32 %0, 1, 0, p;\\n}\"");
    has(p, "  while (!td_emu_mbar_try_wait((uint64_t *)bar, parity)) {\n  }");
    has(p, "asm volatile(\"fence.proxy.async.shared::cta;\" : : : "
           "\"memory\");\n#else\n#endif");
    has(p, "fence.mbarrier_init.release.cluster;");
    has(p, "barrier.cluster.arrive.release.aligned;");
    has(p, "barrier.cluster.wait.acquire.aligned;");
    has(p, "asm volatile(\"cp.async.bulk.commit_group;\" : : : "
           "\"memory\");\n#else\n#endif");
    has(p, "template <int N>\n__forceinline__ __device__ void "
           "td_bulk_wait_group_read() {\n#ifdef __CUDA_ARCH__\n  asm "
           "volatile(\"cp.async.bulk.wait_group.read %0;\" : : \"n\"(N)");
    has(p, "asm volatile(\"prefetch.tensormap [%0];\" : : \"l\"(map)");
    /* the stand-in's functions, declared for a host pass */
    has(p, "#ifndef __CUDA_ARCH__\nvoid td_emu_mbar_init(uint64_t *bar, "
           "unsigned count);\n");
    has(p, "bool td_emu_mbar_try_wait(uint64_t *bar, unsigned parity);\n");
    td_free(b);
    td_free(p);
    td_ir_free(ir);
}

/* ---- TMA -------------------------------------------------------------- */

static void test_tma_load(void **state)
{
    (void)state;
    fixture f = setup();
    td_ir *ir = f.ir;
    /* tma_g2s_128x64: coordinates (0, 0), the barrier mbar[0] */
    td_ir_tma t = {.map = f.map, .coords = {td_int(ir, 0), td_int(ir, 0)},
                   .smem = at(&f, f.S, 0), .mbar = at(&f, f.mbar, 0)};
    td_ir_tma_load(ir, &t);
    /* tma_g2s_sw128's cache hint: evict_last's policy at (0, 128) */
    t.coords[1] = td_int(ir, 128);
    t.policy = td_const_u(ir, TD_U64, 0x14F0000000000000ull);
    td_ir_tma_load(ir, &t);
    /* tma_g2s_multicast: cta_mask 3 */
    t.coords[1] = td_int(ir, 0);
    t.policy = NULL;
    t.cta_mask = td_const_u(ir, TD_U16, 3);
    td_ir_tma_load(ir, &t);
    /* tma_g2s_sm100: .cta_group::1 */
    t.cta_mask = NULL;
    t.cta_group = 1;
    td_ir_tma_load(ir, &t);
    /* tma_g2s_pipelined: a stage's tile and barrier, a row coordinate */
    td_var *k = td_ir_for(ir, "k", td_int(ir, 32), TD_LOOP_SERIAL);
    td_expr *s = td_mod(ir, td_var_ref(ir, k), td_int(ir, 4));
    t.cta_group = 0;
    t.coords[1] = td_mul(ir, td_var_ref(ir, k), td_int(ir, 128));
    t.smem = (td_ir_addr){f.S, td_mul(ir, s, td_int(ir, 2048))};
    t.mbar = (td_ir_addr){f.mbar, s};
    td_ir_tma_load(ir, &t);
    td_ir_end_for(ir);

    const char *chain = "\"async\", \"bulk\", \"tensor\", \"2d\", "
                        "\"shared::cluster\", \"global\", \"\", "
                        "\"mbarrier::complete_tx::bytes\"";
    const char *smem = "T.cuda.cvta_generic_to_shared(T.address_of("
                       "A_smem[0, 0]))";
    const char *map = "T.reinterpret(T.handle().ty, T.address_of("
                      "A_tensormap))";
    const char *bar = "T.cuda.cvta_generic_to_shared(T.address_of(mbar[0]))";
    char want[4096];
    snprintf(want, sizeof want,
             "A_tensormap = T.TensorMap()\n"
             "T.ptx.cp(%s, %s, 0, 0, %s, %s, \"\", \"\", \"\", \"\")\n"
             "T.ptx.cp(%s, %s, 0, 128, %s, T.uint64(1508705875169116160), %s, "
             "\"\", \"\", \"L2::cache_hint\", \"\")\n"
             "T.ptx.cp(%s, %s, 0, 0, %s, T.uint16(3), %s, "
             "\"multicast::cluster\", \"\", \"\", \"\")\n"
             "T.ptx.cp(%s, %s, 0, 0, %s, %s, \"\", \"cta_group::1\", \"\", "
             "\"\")\n"
             "for k in T.serial(32):\n"
             "    T.ptx.cp(T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
             "T.address_of(A_smem[0, 0]), k %% 4 * 2048 * 2, \"float16\")), "
             "%s, 0, k * 128, T.cuda.cvta_generic_to_shared(T.address_of("
             "mbar[k %% 4])), %s, \"\", \"\", \"\", \"\")\n",
             smem, map, bar, chain, smem, map, bar, chain, smem, map, bar,
             chain, smem, map, bar, chain, map, chain);
    expect(ir, TD_LANG_TIRX, want);

    char *p = NULL;
    char *b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(
        b,
        "td_tma_load_2d(A_smem_ptr, &A_tensormap, 0, 0, mbar_ptr);\n"
        "td_tma_load_2d_cache_hint(A_smem_ptr, &A_tensormap, 0, 128, "
        "mbar_ptr, 1508705875169116160ULL);\n"
        "td_tma_load_2d_multicast(A_smem_ptr, &A_tensormap, 0, 0, mbar_ptr, "
        "(uint16_t)3);\n"
        "td_tma_load_2d_cta_group1(A_smem_ptr, &A_tensormap, 0, 0, "
        "mbar_ptr);\n"
        "for (int k = 0; k < 32; ++k) {\n"
        "  td_tma_load_2d(A_smem_ptr + k % 4 * 2048, &A_tensormap, 0, k * "
        "128, mbar_ptr + k % 4);\n"
        "}\n");
    /* TVM's instruction texts and operand constraints (out_all.txt) */
    has(p, "__forceinline__ __device__ void td_tma_load_2d(void *smem, const "
           "void *map, int c0, int c1, unsigned long long *bar) {\n"
           "#ifdef __CUDA_ARCH__\n"
           "  asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global."
           "mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\"\n"
           "      : : \"r\"((unsigned int)__cvta_generic_to_shared(smem)), "
           "\"l\"(map), \"r\"(c0), \"r\"(c1), \"r\"((unsigned int)"
           "__cvta_generic_to_shared(bar)) : \"memory\");\n"
           "#else\n"
           "  const int c[2] = {c0, c1};\n"
           "  td_emu_tma_load(smem, (const CUtensorMap *)map, 2, c, "
           "(uint64_t *)bar);\n"
           "#endif\n}\n");
    has(p, "\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
           "complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], [%4], "
           "%5;\"");
    has(p, ", \"l\"(policy) : \"memory\");");
    has(p, "\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
           "complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], "
           "[%4], %5;\"");
    has(p, ", \"h\"(mask) : \"memory\");");
    has(p, "__builtin_trap(); /* multicast: no host stand-in */");
    has(p, "\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
           "complete_tx::bytes.cta_group::1 [%0], [%1, {%2, %3}], [%4];\"");
    has(p, "void td_emu_tma_load(void *smem, const CUtensorMap *map, int "
           "rank, const int *coords, uint64_t *bar);\n");
    td_free(b);
    td_free(p);
    td_ir_free(ir);
}

static void test_tma_store(void **state)
{
    (void)state;
    fixture f = setup();
    td_ir *ir = f.ir;
    /* tma_s2g_plain at (0, 0); tma_s2g_reduce (add) at (0, 64) */
    td_ir_tma t = {.map = f.map, .coords = {td_int(ir, 0), td_int(ir, 0)},
                   .smem = at(&f, f.S, 0)};
    td_ir_tma_store(ir, &t);
    t.coords[1] = td_int(ir, 64);
    t.op = TD_TMA_ADD;
    td_ir_tma_store(ir, &t);
    t.op = TD_TMA_MAX;
    t.policy = td_const_u(ir, TD_U64, 0x12F0000000000000ull);
    td_ir_tma_store(ir, &t);
    const char *map = "T.reinterpret(T.handle().ty, T.address_of("
                      "A_tensormap))";
    const char *smem = "T.cuda.cvta_generic_to_shared(T.address_of("
                       "A_smem[0, 0]))";
    char want[4096];
    snprintf(want, sizeof want,
             "A_tensormap = T.TensorMap()\n"
             "T.ptx.cp(%s, 0, 0, %s, \"async\", \"bulk\", \"tensor\", \"2d\", "
             "\"global\", \"shared::cta\", \"tile\", \"bulk_group\", \"\", "
             "\"\")\n"
             "T.ptx.cp(%s, 0, 64, %s, \"reduce\", \"async\", \"bulk\", "
             "\"tensor\", \"2d\", \"global\", \"shared::cta\", \"add\", "
             "\"tile\", \"bulk_group\", \"\", \"\")\n"
             "T.ptx.cp(%s, 0, 64, %s, T.uint64(1364590687093260288), "
             "\"reduce\", \"async\", \"bulk\", \"tensor\", \"2d\", \"global\", "
             "\"shared::cta\", \"max\", \"tile\", \"bulk_group\", "
             "\"L2::cache_hint\", \"\")\n",
             map, smem, map, smem, map, smem);
    expect(ir, TD_LANG_TIRX, want);
    char *p = NULL;
    char *b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(b,
                        "td_tma_store_2d(&A_tensormap, 0, 0, A_smem_ptr);\n"
                        "td_tma_reduce_add_2d(&A_tensormap, 0, 64, "
                        "A_smem_ptr);\n"
                        "td_tma_reduce_max_2d_cache_hint(&A_tensormap, 0, 64, "
                        "A_smem_ptr, 1364590687093260288ULL);\n");
    has(p, "  asm volatile(\"cp.async.bulk.tensor.2d.global.shared::cta.tile."
           "bulk_group [%0, {%1, %2}], [%3];\"\n"
           "      : : \"l\"(map), \"r\"(c0), \"r\"(c1), \"r\"((unsigned int)"
           "__cvta_generic_to_shared(smem)) : \"memory\");\n"
           "#else\n"
           "  const int c[2] = {c0, c1};\n"
           "  td_emu_tma_store((const CUtensorMap *)map, 2, c, smem, 0);\n");
    has(p, "\"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile."
           "bulk_group [%0, {%1, %2}], [%3];\"");
    has(p, "td_emu_tma_store((const CUtensorMap *)map, 2, c, smem, 1);");
    has(p, "\"cp.reduce.async.bulk.tensor.2d.global.shared::cta.max.tile."
           "bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;\"");
    td_free(b);
    td_free(p);
    td_ir_free(ir);
}

/* ---- the cluster copy ------------------------------------------------- */

static void test_dsmem(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *src = td_ir_buffer(ir, "S_src", TD_F16, "shared.dyn", 2,
                                  (int64_t[]){64, 64});
    td_ir_buf *dst = td_ir_buffer(ir, "S_dst", TD_F16, "shared", 2,
                                  (int64_t[]){64, 64});
    td_ir_buf *mbar = td_ir_buffer(ir, "mbar", TD_U64, "shared", 1,
                                   (int64_t[]){1});
    td_expr *peer = td_sub(ir, td_int(ir, 1), td_param(ir, "cbx", TD_I32));
    td_var *rm = td_ir_mapa(ir, "remote_mbar",
                            (td_ir_addr){mbar, td_int(ir, 0)}, peer);
    td_var *cd = td_ir_mapa(ir, "cluster_dst",
                            (td_ir_addr){dst, td_int(ir, 0)}, peer);
    td_ir_bulk_s2c(ir, td_var_ref(ir, cd), (td_ir_addr){src, td_int(ir, 0)},
                   td_int(ir, 8192), td_var_ref(ir, rm));
    /* dsmem_strided's row: 64 bytes from column 32 */
    td_ir_bulk_s2c(ir, td_var_ref(ir, cd), (td_ir_addr){src, td_int(ir, 32)},
                   td_int(ir, 64), td_var_ref(ir, rm));
    expect(ir, TD_LANG_TIRX,
           "remote_mbar: T.uint32\n"
           "T.ptx.mapa(remote_mbar, T.cuda.cvta_generic_to_shared("
           "T.address_of(mbar[0])), T.Cast(\"uint32\", 1 - cbx), "
           "\"shared::cluster\", \"u32\", \"\")\n"
           "cluster_dst: T.uint32\n"
           "T.ptx.mapa(cluster_dst, T.cuda.cvta_generic_to_shared("
           "T.address_of(S_dst[0, 0])), T.Cast(\"uint32\", 1 - cbx), "
           "\"shared::cluster\", \"u32\", \"\")\n"
           "T.ptx.cp(cluster_dst, T.cuda.cvta_generic_to_shared(T.address_of("
           "S_src[0, 0])), T.uint32(8192), remote_mbar, \"async\", \"bulk\", "
           "\"\", \"\", \"shared::cluster\", \"shared::cta\", "
           "\"mbarrier::complete_tx::bytes\", \"\", \"\")\n"
           "T.ptx.cp(cluster_dst, T.cuda.cvta_generic_to_shared("
           "T.ptr_byte_offset(T.address_of(S_src[0, 0]), 64, \"float16\")), "
           "T.uint32(64), remote_mbar, \"async\", \"bulk\", \"\", \"\", "
           "\"shared::cluster\", \"shared::cta\", "
           "\"mbarrier::complete_tx::bytes\", \"\", \"\")\n");
    char *p = NULL;
    char *b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(b,
                        "unsigned int remote_mbar = td_mapa_shared_cluster("
                        "mbar_ptr, 1 - cbx);\n"
                        "unsigned int cluster_dst = td_mapa_shared_cluster("
                        "S_dst_ptr, 1 - cbx);\n"
                        "td_bulk_copy_s2c(cluster_dst, S_src_ptr, 8192, "
                        "remote_mbar);\n"
                        "td_bulk_copy_s2c(cluster_dst, S_src_ptr + 32, 64, "
                        "remote_mbar);\n");
    /* the documented mapa of shared::cluster addresses (plan A4) */
    has(p, "asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\" : "
           "\"=r\"(d) : \"r\"((unsigned int)__cvta_generic_to_shared(p)), "
           "\"r\"(rank));");
    has(p, "\"cp.async.bulk.shared::cluster.shared::cta.mbarrier::"
           "complete_tx::bytes [%0], [%1], %2, [%3];\"");
    /* no tensor map, no TMA: no <cuda.h> */
    assert_null(strstr(p, "cuda.h"));
    td_free(b);
    td_free(p);
    td_ir_free(ir);
}

/* ---- tensor memory (tcgen05.ld / st) --------------------------------- */

static void test_tcgen05(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *acc = td_ir_buffer(ir, "Acc", TD_F32, "tmem", 2,
                                  (int64_t[]){128, 256});
    td_ir_buf *rg = td_ir_buffer(ir, "Rg", TD_F32, "local", 1,
                                 (int64_t[]){16});
    td_ir_tcgen05_ld(ir, &(td_ir_tmem_ldst){.tmem = acc,
                                            .column = td_int(ir, 0),
                                            .num = 2, .regs = rg,
                                            .word = td_int(ir, 0)});
    td_var *k = td_ir_for(ir, "k", td_int(ir, 2), TD_LOOP_SERIAL);
    td_ir_tcgen05_st(ir, &(td_ir_tmem_ldst){
                             .tmem = acc,
                             .column = td_mul(ir, td_var_ref(ir, k),
                                              td_int(ir, 8)),
                             .num = 1, .regs = rg,
                             .word = td_var_ref(ir, k)});
    td_ir_end_for(ir);
    expect(ir, TD_LANG_TIRX,
           "T.ptx.tcgen05(Rg.view(\"uint32\")[0], Rg.view(\"uint32\")[1], "
           "Acc_taddr, \"ld\", \"sync\", \"aligned\", "
           "\"32x32b\", \"x2\", \"\", \"b32\", \"\")\n"
           "for k in T.serial(2):\n"
           "    T.ptx.tcgen05(T.cuda.get_tmem_addr(Acc_taddr, 0, "
           "k * 8), Rg.view(\"uint32\")[k], \"st\", \"sync\", \"aligned\", "
           "\"32x32b\", \"x1\", \"\", \"b32\", \"\")\n");
    char *p = NULL;
    char *b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(b,
                        "td_tcgen05_ld_32x32b_x2(Acc_taddr, (unsigned int *)"
                        "Rg_ptr);\n"
                        "for (int k = 0; k < 2; ++k) {\n"
                        "  td_tcgen05_st_32x32b_x1(Acc_taddr + k * 8, "
                        "(unsigned int *)Rg_ptr + k);\n"
                        "}\n");
    has(p, "\"tcgen05.ld.sync.aligned.32x32b.x2.b32 {%0, %1}, [%2];\"\n"
           "      : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(taddr) : \"memory\");");
    has(p, "\"tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};\"\n"
           "      : : \"r\"(taddr), \"r\"(r[0]) : \"memory\");");
    /* no stand-in: a host build traps, and declares no mbarrier helpers */
    has(p, "__builtin_trap(); /* tensor memory: no host stand-in */");
    assert_null(strstr(p, "td_emu_mbar_init"));
    td_free(b);
    td_free(p);
    td_ir_free(ir);

    /* refusals: a non-tmem buffer, a non-local register buffer, a count
     * that is no .32x32b form, a missing column, a scratch register array
     * (the printers name a call buffer's pointer) */
    const int bad_num[] = {0, 3, 256};
    for (int i = 0; i < 7; i++) {
        ir = td_ir_new();
        acc = td_ir_buffer(ir, "Acc", TD_F32, i == 0 ? "shared" : "tmem", 2,
                           (int64_t[]){128, 256});
        rg = i == 6 ? td_ir_scratch(ir, "r", TD_F32, 16)
                    : td_ir_buffer(ir, "Rg", TD_F32,
                                   i == 1 ? "shared" : "local", 1,
                                   (int64_t[]){16});
        td_ir_tcgen05_ld(ir, &(td_ir_tmem_ldst){
                                 .tmem = acc,
                                 .column = i == 5 ? NULL : td_int(ir, 0),
                                 .num = i >= 2 && i <= 4 ? bad_num[i - 2] : 1,
                                 .regs = rg, .word = td_int(ir, 0)});
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

/* The 16-lane shapes: .16x256b.x2 moves 8 registers a thread, the upper
 * half-slab's row 16 composed into the address (TVM's .16x*b path always
 * composes, its row being the slab loop's); then the counts and rows the
 * instructions do not take. */
static void test_tcgen05_16xnb(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *acc = td_ir_buffer(ir, "Acc", TD_F32, "tmem", 2,
                                  (int64_t[]){128, 64});
    td_ir_buf *rg = td_ir_buffer(ir, "Rg", TD_F32, "local", 1,
                                 (int64_t[]){16});
    for (int row = 0; row <= 16; row += 16)
        td_ir_tcgen05_ld(ir, &(td_ir_tmem_ldst){.tmem = acc,
                                                .column = td_int(ir, 0),
                                                .num = 2, .regs = rg,
                                                .word = td_int(ir, row / 2),
                                                .shape = TD_IR_LDST_16X256B,
                                                .row = row});
    td_ir_tcgen05_st(ir, &(td_ir_tmem_ldst){.tmem = acc,
                                            .column = td_int(ir, 4),
                                            .num = 1, .regs = rg,
                                            .word = td_int(ir, 2),
                                            .shape = TD_IR_LDST_16X64B,
                                            .row = 16});
    expect(ir, TD_LANG_TIRX,
           "T.ptx.tcgen05(Rg.view(\"uint32\")[0], Rg.view(\"uint32\")[1], "
           "Rg.view(\"uint32\")[2], Rg.view(\"uint32\")[3], "
           "Rg.view(\"uint32\")[4], Rg.view(\"uint32\")[5], "
           "Rg.view(\"uint32\")[6], Rg.view(\"uint32\")[7], "
           "T.cuda.get_tmem_addr(Acc_taddr, 0, 0), \"ld\", \"sync\", "
           "\"aligned\", \"16x256b\", \"x2\", \"\", \"b32\", \"\")\n"
           "T.ptx.tcgen05(Rg.view(\"uint32\")[8], Rg.view(\"uint32\")[9], "
           "Rg.view(\"uint32\")[10], Rg.view(\"uint32\")[11], "
           "Rg.view(\"uint32\")[12], Rg.view(\"uint32\")[13], "
           "Rg.view(\"uint32\")[14], Rg.view(\"uint32\")[15], "
           "T.cuda.get_tmem_addr(Acc_taddr, 16, 0), \"ld\", \"sync\", "
           "\"aligned\", \"16x256b\", \"x2\", \"\", \"b32\", \"\")\n"
           "T.ptx.tcgen05(T.cuda.get_tmem_addr(Acc_taddr, 16, 4), "
           "Rg.view(\"uint32\")[2], \"st\", \"sync\", \"aligned\", "
           "\"16x64b\", \"x1\", \"\", \"b32\", \"\")\n");
    char *p = NULL;
    char *b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(b,
                        "td_tcgen05_ld_16x256b_x2(Acc_taddr, (unsigned int *)"
                        "Rg_ptr);\n"
                        "td_tcgen05_ld_16x256b_x2(Acc_taddr + (16u << 16), "
                        "(unsigned int *)Rg_ptr + 8);\n"
                        "td_tcgen05_st_16x64b_x1(Acc_taddr + (16u << 16) + 4, "
                        "(unsigned int *)Rg_ptr + 2);\n");
    has(p, "\"tcgen05.ld.sync.aligned.16x256b.x2.b32 {%0, %1, %2, %3, %4, "
           "%5, %6, %7}, [%8];\"\n");
    has(p, "\"tcgen05.st.sync.aligned.16x64b.x1.b32 [%0], {%1};\"\n");
    td_free(b);
    td_free(p);
    td_ir_free(ir);
    assert_int_equal(td_ir_tcgen05_regs(TD_IR_LDST_16X128B, 64), 128);
    assert_int_equal(td_ir_tcgen05_regs(TD_IR_LDST_16X256B, 32), 128);
    assert_string_equal(td_ir_tcgen05_ldst_shape(TD_IR_LDST_16X128B),
                        "16x128b");
    assert_null(td_ir_tcgen05_ldst_shape(TD_IR_LDST_SHAPE_COUNT));

    /* refusals: .16x128b.x128 and .16x256b.x64 (more than 128 registers),
     * row 16 of .32x32b (it moves all 32 lanes), row 8, a shape past the
     * table */
    const struct {
        td_ir_ldst_shape shape;
        int num, row;
    } bad[] = {{TD_IR_LDST_16X128B, 128, 0}, {TD_IR_LDST_16X256B, 64, 0},
               {TD_IR_LDST_32X32B, 1, 16},   {TD_IR_LDST_16X64B, 1, 8},
               {TD_IR_LDST_SHAPE_COUNT, 1, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ir = td_ir_new();
        acc = td_ir_buffer(ir, "Acc", TD_F32, "tmem", 2,
                           (int64_t[]){128, 256});
        rg = td_ir_buffer(ir, "Rg", TD_F32, "local", 1, (int64_t[]){128});
        td_ir_tcgen05_st(ir, &(td_ir_tmem_ldst){
                                 .tmem = acc, .column = td_int(ir, 0),
                                 .num = bad[i].num, .regs = rg,
                                 .word = td_int(ir, 0),
                                 .shape = bad[i].shape, .row = bad[i].row});
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

/* tcgen05.cp: a loop of copies with a moving column and source, TVM's
 * TIRx (the descriptor encoded where `first` says), the CUDA helper that
 * builds the descriptor; then the refusals. */
static void test_tcgen05_cp(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *t = td_ir_buffer(ir, "Tm", TD_F16, "tmem", 2,
                                (int64_t[]){128, 32});
    td_ir_buf *a = td_ir_buffer(ir, "As", TD_F16, "shared", 2,
                                (int64_t[]){128, 32});
    td_var *k = td_ir_for(ir, "k", td_int(ir, 2), TD_LOOP_SERIAL);
    td_ir_tcgen05_cp(ir, &(td_ir_tmem_cp){
                             .tmem = t,
                             .column = td_mul(ir, td_var_ref(ir, k),
                                              td_int(ir, 8)),
                             .smem = {a, td_mul(ir, td_var_ref(ir, k),
                                                td_int(ir, 2048))},
                             .shape = TD_IR_CP_128X256B, .lbo = 8,
                             .sbo = 16, .desc = "cp_desc", .first = true});
    td_ir_end_for(ir);
    expect(ir, TD_LANG_TIRX,
           "for k in T.serial(2):\n"
           "    cp_desc = T.alloc_buffer((1,), \"uint64\", scope=\"local\")\n"
           "    T.cuda.tcgen05.encode_matrix_descriptor(cp_desc.data, "
           "T.reinterpret(\"handle\", T.uint64(0)), 8, 16, 0)\n"
           "    T.ptx.tcgen05(Tm_taddr + T.Cast(\"uint32\", k * 8), cp_desc[0] & "
           "~T.uint64(16383) | T.Cast(\"uint64\", "
           "T.cuda.cvta_generic_to_shared(T.ptr_byte_offset(T.address_of("
           "As[0, 0]), k * 2048 * 2, T.type_annotation(\"float16\"))) >> "
           "T.uint32(4) & T.uint32(16383)), \"cp\", \"cta_group::1\", "
           "\"128x256b\", \"\", \"\", \"\", \"\")\n");
    char *p = NULL;
    char *b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(b, "for (int k = 0; k < 2; ++k) {\n"
                           "  td_tcgen05_cp_128x256b(Tm_taddr + k * 8, "
                           "As_ptr + k * 2048, 8, 16, 0);\n"
                           "}\n");
    has(p, "\"tcgen05.cp.cta_group::1.128x256b [%0], %1;\"\n"
           "      : : \"r\"(taddr), \"l\"(desc) : \"memory\");");
    has(p, "(unsigned long long)(sbo & 0x3FFF) << 32 | 1ull << 46 |\n"
           "      (unsigned long long)(layout & 7) << 61;");
    has(p, "__builtin_trap(); /* tensor memory: no host stand-in */");
    assert_null(strstr(p, "td_emu_mbar_init"));
    td_free(b);
    td_free(p);
    td_ir_free(ir);

    /* A multicast shape of the CTA pair with a 128-byte swizzle: the
     * qualifier in the instruction and in TIRx, the pair in the helper's
     * name, the layout type 2 (TVM's mode 3) as the helper's argument and
     * the mode in TIRx's encode; a lane base in the address's bits 16-31. */
    ir = td_ir_new();
    t = td_ir_buffer(ir, "Tm", TD_BF16, "tmem", 2, (int64_t[]){64, 8});
    a = td_ir_buffer(ir, "As", TD_BF16, "shared", 2, (int64_t[]){64, 64});
    td_ir_tcgen05_cp(ir, &(td_ir_tmem_cp){
                             .tmem = t, .column = td_int(ir, 4 + (3 << 16)),
                             .smem = {a, td_int(ir, 8)},
                             .shape = TD_IR_CP_64X128B_02_13, .lbo = 0,
                             .sbo = 64, .swizzle = 3, .cta_group = 2,
                             .desc = "cp_desc", .first = true});
    b = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(b, "td_tcgen05_cp_cg2_64x128b_warpx2_02_13(Tm_taddr "
                           "+ 196612, As_ptr + 8, 0, 64, 2);\n");
    has(p, "\"tcgen05.cp.cta_group::2.64x128b.warpx2::02_13 [%0], %1;\"");
    td_free(b);
    td_free(p);
    expect(ir, TD_LANG_TIRX,
           "cp_desc = T.alloc_buffer((1,), \"uint64\", scope=\"local\")\n"
           "T.cuda.tcgen05.encode_matrix_descriptor(cp_desc.data, "
           "T.reinterpret(\"handle\", T.uint64(0)), 0, 64, 3)\n"
           "T.ptx.tcgen05(Tm_taddr + T.Cast(\"uint32\", 196612), cp_desc[0] & "
           "~T.uint64(16383) | T.Cast(\"uint64\", "
           "T.cuda.cvta_generic_to_shared(T.ptr_byte_offset(T.address_of("
           "As[0, 0]), 16, T.type_annotation(\"bfloat16\"))) >> "
           "T.uint32(4) & T.uint32(16383)), \"cp\", \"cta_group::2\", "
           "\"64x128b\", \"warpx2::02_13\", \"\", \"\", \"\")\n");
    td_ir_free(ir);
    assert_string_equal(td_ir_tcgen05_cp_multicast(TD_IR_CP_32X128B_WARPX4),
                        "warpx4");
    assert_string_equal(td_ir_tcgen05_cp_shape(TD_IR_CP_4X256B), "4x256b");
    assert_null(td_ir_tcgen05_cp_multicast(TD_IR_CP_SHAPE_COUNT));

    /* refusals: a non-tmem destination, a non-shared source, a shape out
     * of range, an SBO past 14 bits, no descriptor name, no column, a
     * swizzle mode past 3, a CTA group past 2 */
    for (int i = 0; i < 8; i++) {
        ir = td_ir_new();
        t = td_ir_buffer(ir, "Tm", TD_F16, i == 0 ? "shared" : "tmem", 2,
                         (int64_t[]){128, 32});
        a = td_ir_buffer(ir, "As", TD_F16, i == 1 ? "global" : "shared", 2,
                         (int64_t[]){128, 32});
        td_ir_tcgen05_cp(ir, &(td_ir_tmem_cp){
                                 .tmem = t,
                                 .column = i == 5 ? NULL : td_int(ir, 0),
                                 .smem = {a, td_int(ir, 0)},
                                 .shape = i == 2 ? TD_IR_CP_SHAPE_COUNT
                                                 : TD_IR_CP_128X128B,
                                 .sbo = i == 3 ? 1 << 14 : 8,
                                 .swizzle = i == 6 ? 4 : 0,
                                 .cta_group = i == 7 ? 3 : 1,
                                 .desc = i == 4 ? "" : "cp_desc"});
        assert_int_equal(td_ir_status(ir), TD_EINVAL);
        td_ir_free(ir);
    }
}

/* ---- tensor maps ------------------------------------------------------- */

static void test_tensor_maps(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F16, "global", 2,
                                (int64_t[]){256, 64});
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_F16, "global", 2,
                                (int64_t[]){512, 64});
    td_tmap m = plan(256, 0), m2 = plan(256, 0), sw = plan(256, 1);
    td_tmap mb = plan(512, 0);
    /* the planner's coordinates and issue loops are not part of the
     * encode: another call site's map of the same box is the same map */
    m2.coordinates[1] = 128;
    const td_ir_tmap *a = td_ir_tensor_map(ir, A, &m);
    assert_ptr_equal(td_ir_tensor_map(ir, A, &m2), a);
    const td_ir_tmap *a1 = td_ir_tensor_map(ir, A, &sw);
    const td_ir_tmap *b = td_ir_tensor_map(ir, B, &mb);
    assert_non_null(a1);
    assert_non_null(b);
    assert_ptr_not_equal(a1, a);
    assert_int_equal(td_ir_tensor_map_count(ir), 3);
    assert_string_equal(td_ir_tensor_map_name(ir, 0), "A_tensormap");
    assert_string_equal(td_ir_tensor_map_name(ir, 1), "A_tensormap_1");
    assert_string_equal(td_ir_tensor_map_name(ir, 2), "B_tensormap");
    assert_null(td_ir_tensor_map_name(ir, 3));
    char *out = NULL;
    assert_int_equal(td_ir_print_tensor_maps(ir, TD_LANG_CUDA, &out), 0);
    assert_string_equal(out, "const __grid_constant__ CUtensorMap "
                             "A_tensormap, const __grid_constant__ "
                             "CUtensorMap A_tensormap_1, const "
                             "__grid_constant__ CUtensorMap B_tensormap");
    td_free(out);
    /* TVM's host init (probe_host.py g2s_128x64_f16 and _sw128) */
    assert_int_equal(td_ir_print_tensor_maps(ir, TD_LANG_TIRX, &out), 0);
    assert_string_equal(
        out,
        "A_tensormap: T.let[T.TensorMap()] = T.tvm_stack_alloca("
        "\"tensormap\", 1)\n"
        "T.tensormap_encode_tiled(A_tensormap, T.handle_add_byte_offset("
        "A.data, 0), 64, 256, 128, 64, 128, 1, 1, descriptor_dtype="
        "\"float16\", rank=2, interleave=0, swizzle=0, l2_promotion=2, "
        "oob_fill=0, force_cu_dtype=-1)\n"
        "A_tensormap_1: T.let[T.TensorMap()] = T.tvm_stack_alloca("
        "\"tensormap\", 1)\n"
        "T.tensormap_encode_tiled(A_tensormap_1, T.handle_add_byte_offset("
        "A.data, 0), 64, 256, 128, 64, 128, 1, 1, descriptor_dtype="
        "\"float16\", rank=2, interleave=0, swizzle=3, l2_promotion=2, "
        "oob_fill=0, force_cu_dtype=-1)\n"
        "B_tensormap: T.let[T.TensorMap()] = T.tvm_stack_alloca("
        "\"tensormap\", 1)\n"
        "T.tensormap_encode_tiled(B_tensormap, T.handle_add_byte_offset("
        "B.data, 0), 64, 512, 128, 64, 128, 1, 1, descriptor_dtype="
        "\"float16\", rank=2, interleave=0, swizzle=0, l2_promotion=2, "
        "oob_fill=0, force_cu_dtype=-1)\n");
    td_free(out);
    /* a body without maps: nothing to pass */
    td_ir *none = td_ir_new();
    assert_int_equal(td_ir_print_tensor_maps(none, TD_LANG_CUDA, &out), 0);
    assert_string_equal(out, "");
    td_free(out);
    td_ir_free(none);
    /* a map's name is taken: a variable asking for it gets another */
    td_var *v = td_ir_let(ir, "A_tensormap", TD_I32, td_int(ir, 0));
    assert_string_equal(v->name, "A_tensormap_2");
    td_ir_free(ir);
}

/* ---- refusals --------------------------------------------------------- */

static void test_refused(void **state)
{
    (void)state;
    for (int k = 0; k < 14; k++) {
        fixture f = setup();
        td_ir *ir = f.ir;
        td_ir_tma t = {.map = f.map,
                       .coords = {td_int(ir, 0), td_int(ir, 0)},
                       .smem = at(&f, f.S, 0), .mbar = at(&f, f.mbar, 0)};
        td_tmap m = plan(256, 0);
        switch (k) {
        case 0: /* a barrier that is not a shared uint64 */
            td_ir_mbar_init(ir, at(&f, f.S, 0), td_int(ir, 1));
            break;
        case 1: /* a global barrier */
            td_ir_mbar_wait(ir, at(&f, f.A, 0), td_int(ir, 0));
            break;
        case 2: /* wait_group.read's count is an immediate of 0..7 */
            td_ir_bulk_wait_read(ir, 8);
            break;
        case 3: /* a load without its barrier */
            t.mbar.buf = NULL;
            td_ir_tma_load(ir, &t);
            break;
        case 4: /* a store with one */
            td_ir_tma_store(ir, &t);
            break;
        case 5: /* fewer coordinates than the map's rank */
            t.coords[1] = NULL;
            td_ir_tma_load(ir, &t);
            break;
        case 6: /* more */
            t.coords[2] = td_int(ir, 0);
            td_ir_tma_load(ir, &t);
            break;
        case 7: /* a global tile */
            t.smem = at(&f, f.A, 0);
            t.mbar.buf = NULL;
            td_ir_tma_store(ir, &t);
            break;
        case 8: /* cta_group 3 */
            t.cta_group = 3;
            td_ir_tma_load(ir, &t);
            break;
        case 9: /* a multicast mask that is not a uint16 */
            t.cta_mask = td_int(ir, 3);
            td_ir_tma_load(ir, &t);
            break;
        case 10: /* a policy that is not a uint64 */
            t.policy = td_int(ir, 1);
            td_ir_tma_load(ir, &t);
            break;
        case 11: /* a map of another IR */
        {
            td_ir *other = td_ir_new();
            td_ir_buf *B = td_ir_buffer(other, "A", TD_F16, "global", 2,
                                        (int64_t[]){256, 64});
            t.map = td_ir_tensor_map(other, B, &m);
            assert_non_null(t.map);
            td_ir_tma_load(ir, &t);
            td_ir_free(other);
            break;
        }
        case 12: /* a map of a shared buffer */
            assert_null(td_ir_tensor_map(ir, f.S, &m));
            break;
        case 13: /* a cluster copy of a non-index size */
            td_ir_bulk_s2c(ir, td_int(ir, 0), at(&f, f.S, 0),
                           td_const_f(ir, TD_F32, 16), td_int(ir, 0));
            break;
        }
        if (td_ir_status(ir) != TD_EINVAL)
            fail_msg("case %d: status %d", k, td_ir_status(ir));
        td_ir_free(ir);
    }
}

/* ---- allocation failures --------------------------------------------- */

/* Every node and two maps; the IR's status (TD_ENOMEM when an allocation
 * failed). */
static int build_all(td_ir **out)
{
    td_ir *ir = *out = td_ir_new();
    if (ir == NULL)
        return TD_ENOMEM;
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F16, "global", 2,
                                (int64_t[]){256, 64});
    td_ir_buf *S = td_ir_buffer(ir, "A_smem", TD_F16, "shared.dyn", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *mbar = td_ir_buffer(ir, "mbar", TD_U64, "shared", 1,
                                   (int64_t[]){4});
    td_tmap m = plan(256, 0), sw = plan(256, 1);
    const td_ir_tmap *map = td_ir_tensor_map(ir, A, &m);
    td_ir_tensor_map(ir, A, &sw);
    td_ir_addr bar = {mbar, td_int(ir, 0)}, smem = {S, td_int(ir, 0)};
    td_ir_mbar_init(ir, bar, td_int(ir, 1));
    td_ir_fence_mbarrier_init(ir);
    td_ir_cluster_sync(ir);
    td_ir_prefetch_tensormap(ir, map);
    td_ir_mbar_arrive_expect_tx(ir, bar, td_int(ir, 16384));
    td_ir_tma t = {.map = map, .coords = {td_int(ir, 0), td_int(ir, 0)},
                   .smem = smem, .mbar = bar,
                   .policy = td_const_u(ir, TD_U64, 1)};
    td_ir_tma_load(ir, &t);
    td_ir_mbar_wait(ir, bar, td_int(ir, 0));
    td_ir_fence_proxy_async(ir);
    td_ir_tma u = {.map = map, .coords = {td_int(ir, 0), td_int(ir, 0)},
                   .smem = smem, .op = TD_TMA_ADD};
    td_ir_tma_store(ir, &u);
    td_ir_bulk_commit(ir);
    td_ir_bulk_wait_read(ir, 0);
    td_var *r = td_ir_mapa(ir, "r", bar, td_int(ir, 1));
    td_var *d = td_ir_mapa(ir, "d", smem, td_int(ir, 1));
    if (r != NULL && d != NULL)
        td_ir_bulk_s2c(ir, td_var_ref(ir, d), smem, td_int(ir, 16),
                       td_var_ref(ir, r));
    return td_ir_status(ir);
}

/* Fails the nth allocation for every n until a run needs no failure: the
 * builders, both printers and both tensor-map forms give TD_ENOMEM, no
 * text, and leak nothing. */
static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_install();
    bool done = false;
    long n;
    for (n = 1; !done && n < 10000; n++) {
        alloc_arm(n);
        g_ca.live = 0;
        td_ir *ir;
        int st = build_all(&ir);
        char *t[6] = {NULL};
        int e = st;
        if (e == 0)
            e = td_ir_print(ir, TD_LANG_CUDA, 0, &t[0], &t[1]);
        if (e == 0)
            e = td_ir_print(ir, TD_LANG_TIRX, 0, &t[2], &t[3]);
        if (e == 0)
            e = td_ir_print_tensor_maps(ir, TD_LANG_CUDA, &t[4]);
        if (e == 0)
            e = td_ir_print_tensor_maps(ir, TD_LANG_TIRX, &t[5]);
        if (e != 0) {
            assert_int_equal(e, TD_ENOMEM);
            assert_true(g_ca.failed);
        } else {
            assert_false(g_ca.failed);
            done = true;
            assert_non_null(strstr(t[0], "td_bulk_copy_s2c(d, A_smem_ptr"));
            assert_non_null(strstr(t[1], "td_tma_reduce_add_2d"));
            assert_non_null(strstr(t[2], "A_tensormap_1 = T.TensorMap()"));
            assert_non_null(strstr(t[4], "CUtensorMap A_tensormap_1"));
            assert_non_null(strstr(t[5], "swizzle=3"));
        }
        for (int i = 0; i < 6; i++)
            td_free(t[i]);
        td_ir_free(ir);
        assert_int_equal(g_ca.live, 0);
    }
    td_set_allocator(NULL);
    assert_true(done);
    assert_true(n > 5); /* the loop did exercise failures */
}

/* tcgen05.mma: a descriptor per operand (hoisted, warp-uniform) and the
 * MMA in each operand form; misuse fails the IR. */
static void test_tcgen05_mma(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2,
                                (int64_t[]){128, 512});
    td_ir_buf *a = td_ir_buffer(ir, "A", TD_F16, "shared", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *b = td_ir_buffer(ir, "B", TD_F16, "shared", 2,
                                (int64_t[]){64, 64});
    td_var *da = td_ir_smem_desc(ir, "descA", a, 0, 64, 3, true);
    assert_non_null(da);
    td_ir_if(ir, td_intrinsic(ir, TD_INTRIN_ELECT_SYNC, TD_I32, 0, NULL));
    td_ir_tcgen05_mma(ir, &(td_ir_umma){
                              .kind = TD_UMMA_F16, .cta_group = 1, .tmem = t,
                              .lane = 0, .column = 256,
                              .a = {TD_IR_DESC_ADD, da, NULL, 2, 0, 0, 0},
                              .b = {TD_IR_DESC_ENCODE, NULL, b, 3, 0, 64, 3},
                              .idesc = 135266320u, .accum = td_int(ir, 1)});
    td_ir_tcgen05_mma(ir, &(td_ir_umma){
                              .kind = TD_UMMA_F8F6F4, .cta_group = 2,
                              .tmem = t, .lane = 64, .column = 8,
                              .a = {TD_IR_DESC_RECOMPUTE, NULL, a, 0, 512, 64, 3},
                              .b = {TD_IR_DESC_RECOMPUTE, NULL, b, 1, 0, 16, 1},
                              .idesc = 1u, .accum = td_int(ir, 0)});
    td_ir_end_if(ir);
    assert_int_equal(td_ir_status(ir), 0);
    char *p = NULL;
    char *body = print(ir, TD_LANG_CUDA, &p);
    assert_string_equal(
        body,
        "unsigned long long descA = td_tcgen05_smem_desc_uniform("
        "td_tcgen05_smem_desc(A_ptr, 0u, 0, 64, 3));\n"
        "if (td_elect_sync()) {\n"
        "  td_tcgen05_mma_cg1_f16(C_taddr + 256, td_tcgen05_smem_desc_add("
        "descA, 2u), td_tcgen05_smem_desc(B_ptr, 3u, 0, 64, 3), 135266320u, "
        "1);\n"
        "  td_tcgen05_mma_cg2_f8f6f4(C_taddr + (64u << 16) + 8, "
        "td_tcgen05_smem_desc(A_ptr, 0u, 512, 64, 3), td_tcgen05_smem_desc("
        "B_ptr, 1u, 0, 16, 1), 1u, 0);\n"
        "}\n");
    has(p, "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, {%4, %5, "
           "%6, %7}, p; }");
    has(p, "setp.ne.b32 p, %12, 0; tcgen05.mma.cta_group::2.kind::f8f6f4 "
           "[%0], %1, %2, %3, {%4, %5, %6, %7, %8, %9, %10, %11}, p; }");
    has(p, "shfl.sync.idx.b32 %0, %0, 0, 0x1F, 0xFFFFFFFF;");
    has(p, "elect.sync _|p, 0xFFFFFFFF;");
    has(p, "(unsigned long long)layout[swizzle & 3] << 61;");
    td_free(body);
    td_free(p);
    body = print(ir, TD_LANG_TIRX, NULL);
    has(body, "T.ptx.shfl_sync(descA_lo[0], descA_lo[0], T.uint32(0), "
              "T.uint32(31), T.uint32(4294967295), \"idx\", \"b32\", \"\")\n");
    has(body, "if T.cuda.elect_sync():\n"
              "    descB = T.alloc_buffer((1,), \"uint64\", scope=\"local\")\n"
              "    T.cuda.tcgen05.encode_matrix_descriptor(T.address_of("
              "descB[0]), T.handle_add_byte_offset(T.address_of(B[0, 0]), "
              "48), 0, 64, 3)\n"
              "    T.ptx.tcgen05(C_taddr + T.Cast(\"uint32\", 256), "
              "T.reinterpret(\"uint64\", T.Shuffle([T.Shuffle([T.reinterpret("
              "\"uint32x2\", descA[0])], [0]) + T.Cast(\"uint32\", 2), "
              "T.Shuffle([T.reinterpret(\"uint32x2\", descA[0])], [1])], [0, "
              "1])), descB[0], T.uint32(135266320), T.uint32(0), T.uint32(0), "
              "T.uint32(0), T.uint32(0), T.bool(True), \"mma\", "
              "\"cta_group::1\", \"kind::f16\", \"\", \"p8\")\n");
    has(body, "T.ptx.tcgen05(T.cuda.get_tmem_addr(C_taddr, 64, 8), "
              "T.bitwise_or(T.shift_left(T.uint64(1073758272), T.uint64(32)), "
              "T.Cast(\"uint64\", T.bitwise_or(T.uint32(33554432), "
              "T.bitwise_and(T.shift_right(T.cuda.cvta_generic_to_shared("
              "T.address_of(A[0, 0])), T.uint32(4)), T.uint32(16383))))), ");
    has(body, "T.bool(False), \"mma\", \"cta_group::2\", \"kind::f8f6f4\", "
              "\"\", \"p12\")\n");
    td_free(body);
    td_ir_free(ir);

    /* misuse: a shared accumulator, a swizzle mode past 3, a column past
     * tensor memory, a descriptor of a local buffer */
    ir = td_ir_new();
    t = td_ir_buffer(ir, "C", TD_F32, "shared", 2, (int64_t[]){128, 64});
    a = td_ir_buffer(ir, "A", TD_F16, "shared", 2, (int64_t[]){128, 64});
    td_ir_tcgen05_mma(ir, &(td_ir_umma){
                              .kind = TD_UMMA_F16, .cta_group = 1, .tmem = t,
                              .a = {TD_IR_DESC_RECOMPUTE, NULL, a, 0, 0, 64, 3},
                              .b = {TD_IR_DESC_RECOMPUTE, NULL, a, 0, 0, 64, 3},
                              .accum = td_int(ir, 0)});
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    a = td_ir_buffer(ir, "A", TD_F16, "shared", 2, (int64_t[]){128, 64});
    assert_null(td_ir_smem_desc(ir, "d", a, 0, 64, 4, false));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    a = td_ir_buffer(ir, "A", TD_F16, "local", 2, (int64_t[]){128, 64});
    assert_null(td_ir_smem_desc(ir, "d", a, 0, 64, 3, false));
    td_ir_free(ir);
    ir = td_ir_new();
    t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2, (int64_t[]){128, 64});
    a = td_ir_buffer(ir, "A", TD_F16, "shared", 2, (int64_t[]){128, 64});
    td_ir_tcgen05_mma(ir, &(td_ir_umma){
                              .kind = TD_UMMA_F16, .cta_group = 1, .tmem = t,
                              .column = 512,
                              .a = {TD_IR_DESC_RECOMPUTE, NULL, a, 0, 0, 64, 3},
                              .b = {TD_IR_DESC_RECOMPUTE, NULL, a, 0, 0, 64, 3},
                              .accum = td_int(ir, 0)});
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    /* .ws: its own helper (enable_input_d, then a zero column mask), the
     * TIRx's "ws" and T.uint64(0); never at cta_group 2 */
    ir = td_ir_new();
    t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2, (int64_t[]){64, 128});
    a = td_ir_buffer(ir, "A", TD_F16, "shared", 2, (int64_t[]){64, 64});
    td_ir_umma ws = {.kind = TD_UMMA_F16, .cta_group = 1, .ws = true,
                     .tmem = t,
                     .a = {TD_IR_DESC_RECOMPUTE, NULL, a, 0, 0, 64, 3},
                     .b = {TD_IR_DESC_RECOMPUTE, NULL, a, 0, 0, 64, 3},
                     .idesc = 69206032u, .accum = td_int(ir, 0)};
    td_ir_tcgen05_mma(ir, &ws);
    assert_int_equal(td_ir_status(ir), 0);
    body = print(ir, TD_LANG_CUDA, &p);
    has(body, "td_tcgen05_mma_ws_cg1_f16(C_taddr, ");
    has(p, "setp.ne.b32 p, %4, 0; tcgen05.mma.ws.cta_group::1.kind::f16 "
           "[%0], %1, %2, %3, p, %5; }\"");
    has(p, "\"r\"(enable_input_d), \"l\"(0ull)");
    td_free(body);
    td_free(p);
    body = print(ir, TD_LANG_TIRX, NULL);
    has(body, "T.uint32(69206032), T.bool(False), T.uint64(0), \"mma\", "
              "\"ws\", \"cta_group::1\", \"kind::f16\", \"\", \"p4\")\n");
    td_free(body);
    ws.cta_group = 2;
    td_ir_tcgen05_mma(ir, &ws);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);

    /* A in tensor memory: its address as the [a_tmem] operand, the ts
     * helpers (dense and .ws) in both languages; never as B, never a
     * shared buffer, never past tensor memory */
    ir = td_ir_new();
    t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2, (int64_t[]){64, 128});
    td_ir_buf *ta = td_ir_buffer(ir, "A", TD_BF16, "tmem", 3,
                                 (int64_t[]){2, 64, 16});
    b = td_ir_buffer(ir, "B", TD_BF16, "shared", 2, (int64_t[]){128, 16});
    td_ir_umma ts = {.kind = TD_UMMA_F16, .cta_group = 1, .ws = true,
                     .tmem = t,
                     .a = {.form = TD_IR_DESC_TMEM, .tmem = ta, .column = 8},
                     .b = {TD_IR_DESC_RECOMPUTE, NULL, b, 0, 0, 16, 1},
                     .idesc = 69207184u, .accum = td_int(ir, 0)};
    td_ir_tcgen05_mma(ir, &ts);
    ts.ws = false;
    ts.cta_group = 2;
    ts.a.lane = 64;
    ts.a.column = 0;
    td_ir_tcgen05_mma(ir, &ts);
    assert_int_equal(td_ir_status(ir), 0);
    body = print(ir, TD_LANG_CUDA, &p);
    has(body, "td_tcgen05_mma_ws_ts_cg1_f16(C_taddr, A_taddr + 8, "
              "td_tcgen05_smem_desc(B_ptr, 0u, 0, 16, 1), 69207184u, 0);\n");
    has(body, "td_tcgen05_mma_ts_cg2_f16(C_taddr, A_taddr + (64u << 16), ");
    has(p, "td_tcgen05_mma_ws_ts_cg1_f16(unsigned int d_tmem, unsigned int "
           "a_tmem, unsigned long long b_desc,");
    has(p, "tcgen05.mma.ws.cta_group::1.kind::f16 [%0], [%1], %2, %3, p, "
           "%5; }\"\n      : : \"r\"(d_tmem), \"r\"(a_tmem), ");
    has(p, "tcgen05.mma.cta_group::2.kind::f16 [%0], [%1], %2, %3, {%4, ");
    has(p, "(void)a_tmem;");
    td_free(body);
    td_free(p);
    body = print(ir, TD_LANG_TIRX, NULL);
    has(body, "T.ptx.tcgen05(C_taddr, A_taddr + T.Cast(\"uint32\", 8), ");
    has(body, "T.ptx.tcgen05(C_taddr, T.cuda.get_tmem_addr(A_taddr, 64, 0), ");
    td_free(body);
    ts.b = ts.a; /* B in tensor memory */
    td_ir_tcgen05_mma(ir, &ts);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2, (int64_t[]){64, 128});
    b = td_ir_buffer(ir, "B", TD_BF16, "shared", 2, (int64_t[]){128, 16});
    ts.tmem = t;
    ts.a = (td_ir_desc_operand){.form = TD_IR_DESC_TMEM, .tmem = b};
    ts.b = (td_ir_desc_operand){.form = TD_IR_DESC_RECOMPUTE, .smem = b,
                                .sdo = 16, .swizzle = 1};
    ts.accum = td_int(ir, 0);
    td_ir_tcgen05_mma(ir, &ts); /* A "in tensor memory" is shared */
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2, (int64_t[]){64, 128});
    b = td_ir_buffer(ir, "B", TD_BF16, "shared", 2, (int64_t[]){128, 16});
    ts.tmem = t;
    ts.a = (td_ir_desc_operand){.form = TD_IR_DESC_TMEM, .tmem = t,
                                .column = 512};
    ts.b = (td_ir_desc_operand){.form = TD_IR_DESC_RECOMPUTE, .smem = b,
                                .sdo = 16, .swizzle = 1};
    ts.accum = td_int(ir, 0);
    td_ir_tcgen05_mma(ir, &ts); /* past tensor memory's 512 cells */
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    assert_string_equal(td_umma_kind_name(TD_UMMA_TF32), "tf32");
    assert_null(td_umma_kind_name(TD_UMMA_KIND_COUNT));
}


/* Block scaling: the run-time descriptor local (encoded, or a given
 * value), its sf_id patch, the MMA with its two scale-factor cells, in
 * both languages; misuse refused. */
static void test_tcgen05_mma_bs(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    td_ir_buf *t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *a = td_ir_buffer(ir, "A", TD_F8E4M3, "shared", 2,
                                (int64_t[]){128, 128});
    td_ir_buf *b = td_ir_buffer(ir, "B", TD_F8E4M3, "shared", 2,
                                (int64_t[]){64, 128});
    td_ir_buf *sfa = td_ir_buffer(ir, "SFA", TD_F8E4M3, "tmem", 2,
                                  (int64_t[]){128, 4});
    td_ir_buf *sfb = td_ir_buffer(ir, "SFB", TD_F8E4M3, "tmem", 2,
                                  (int64_t[]){128, 4});
    td_var *db = td_ir_smem_desc(ir, "descB", b, 0, 64, 3, false);
    td_ir_idesc_bs d = {
        .m = 128, .n = 64, .k = 32, .a_format = 0, .b_format = 0,
        .s_format = 1, .cta_group = 1, .a = TD_F8E4M3, .b = TD_F8E4M3,
        .sfa_dtype = TD_F8E4M3, .sfb_dtype = TD_F8E4M3,
        .sfa = {.form = TD_IR_DESC_TMEM, .tmem = sfa, .lane = 1},
        .sfb = {.form = TD_IR_DESC_TMEM, .tmem = sfb}};
    td_var *di = td_ir_idesc_block_scaled(ir, "descI_local", &d);
    assert_non_null(di);
    td_ir_idesc_sf_id(ir, di, 3);
    td_ir_umma m = {
        .cta_group = 1, .tmem = t, .column = 0,
        .a = {TD_IR_DESC_RECOMPUTE, NULL, a, 6, 0, 64, 3},
        .b = {TD_IR_DESC_ADD, db, NULL, 6, 0, 0, 0},
        .accum = td_int(ir, 1), .bs = true, .bs_kind = TD_UMMA_MXF8F6F4,
        .idesc_var = di,
        .sfa = {.form = TD_IR_DESC_TMEM, .tmem = sfa, .lane = 1,
                .column = 1},
        .sfb = {.form = TD_IR_DESC_TMEM, .tmem = sfb, .column = 0}};
    td_ir_tcgen05_mma(ir, &m);
    assert_int_equal(td_ir_status(ir), 0);
    char *p = NULL;
    char *body = print(ir, TD_LANG_CUDA, &p);
    has(body, "unsigned int descI_local = td_tcgen05_idesc_bs(128u, 64u, "
              "32u, 0u, 0u, 1u, 0, 0);\n"
              "td_tcgen05_idesc_sf_id(&descI_local, 3u);\n"
              "td_tcgen05_mma_bs_cg1_mxf8f6f4(C_taddr, td_tcgen05_smem_desc("
              "A_ptr, 6u, 0, 64, 3), td_tcgen05_smem_desc_add(descB, 6u), "
              "descI_local, SFA_taddr + (1u << 16) + 1, SFB_taddr, 1);\n");
    has(p, "setp.ne.b32 p, %6, 0; tcgen05.mma.cta_group::1.kind::mxf8f6f4."
           "block_scale.scale_vec::1X [%0], %1, %2, %3, [%4], [%5], p; }");
    has(p, "*idesc = (*idesc & ~0x60000030u) | (sf_id & 3u) << 29 | "
           "(sf_id & 3u) << 4;");
    has(p, "((n >> 3) & 0x3Fu) << 17 | (s_format & 1u) << 23 | "
           "((m >> 4) & 0x1Fu) << 24 |");
    td_free(body);
    td_free(p);
    body = print(ir, TD_LANG_TIRX, NULL);
    has(body, "descI_local: T.uint32\n"
              "T.cuda.tcgen05.encode_instr_descriptor_block_scaled("
              "T.address_of(descI_local), d_dtype=\"float32\", "
              "a_dtype=\"float8_e4m3fn\", b_dtype=\"float8_e4m3fn\", "
              "sfa_dtype=\"float8_e4m3fn\", sfb_dtype=\"float8_e4m3fn\", "
              "sfa_tmem_addr=T.cuda.get_tmem_addr(SFA_taddr, 1, 0), "
              "sfb_tmem_addr=SFB_taddr, M=128, N=64, K=32, "
              "trans_a=T.bool(False), trans_b=T.bool(False), n_cta_groups=1)\n"
              "T.cuda.runtime_instr_desc(T.address_of(descI_local), 3)\n");
    has(body, "descI_local, T.cuda.get_tmem_addr(SFA_taddr, 1, 1), SFB_taddr, "
              "T.bool(True), \"mma\", \"cta_group::1\", \"kind::mxf8f6f4\", "
              "\"block_scale\", \"scale_vec::1X\", \"p6\")\n");
    td_free(body);
    td_ir_free(ir);

    /* a given descriptor: the local starts as the value; the MMA may
     * name a constant descriptor; A in tensor memory at cta_group 2, the
     * 4X kind */
    ir = td_ir_new();
    t = td_ir_buffer(ir, "C", TD_F32, "tmem", 2, (int64_t[]){128, 64});
    td_ir_buf *ta = td_ir_buffer(ir, "A", TD_F8E4M3, "tmem", 2,
                                 (int64_t[]){128, 64});
    b = td_ir_buffer(ir, "B", TD_F8E4M3, "shared", 2, (int64_t[]){64, 128});
    sfa = td_ir_buffer(ir, "SFA", TD_F8E4M3, "tmem", 2, (int64_t[]){128, 4});
    d.sfa.tmem = sfa;
    d.sfb.tmem = sfa;
    d.given = true;
    d.value = 12345u;
    di = td_ir_idesc_block_scaled(ir, "descI_local", &d);
    m = (td_ir_umma){
        .cta_group = 2, .tmem = t,
        .a = {.form = TD_IR_DESC_TMEM, .tmem = ta, .column = 8},
        .b = {TD_IR_DESC_RECOMPUTE, NULL, b, 0, 0, 64, 3},
        .accum = td_int(ir, 0), .bs = true, .bs_kind = TD_UMMA_MXF4NVF4,
        .idesc = 7u,
        .sfa = {.form = TD_IR_DESC_TMEM, .tmem = sfa},
        .sfb = {.form = TD_IR_DESC_TMEM, .tmem = sfa, .column = 2}};
    td_ir_tcgen05_mma(ir, &m);
    assert_int_equal(td_ir_status(ir), 0);
    body = print(ir, TD_LANG_CUDA, &p);
    has(body, "unsigned int descI_local = 12345u;\n");
    has(body, "td_tcgen05_mma_bs_ts_cg2_mxf4nvf4(C_taddr, A_taddr + 8, "
              "td_tcgen05_smem_desc(B_ptr, 0u, 0, 64, 3), 7u, SFA_taddr, "
              "SFA_taddr + 2, 0);\n");
    has(p, "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale."
           "scale_vec::4X [%0], [%1], %2, %3, [%4], [%5], p; }");
    td_free(body);
    td_free(p);
    body = print(ir, TD_LANG_TIRX, NULL);
    has(body, "descI_local: T.uint32 = T.uint32(12345)\n");
    has(body, "T.uint32(7), SFA_taddr, SFA_taddr + T.Cast(\"uint32\", 2), "
              "T.bool(False), \"mma\", \"cta_group::2\", \"kind::mxf4nvf4\", "
              "\"block_scale\", \"scale_vec::4X\", \"p6\")\n");
    td_free(body);
    /* misuse: a scale factor in shared memory, an sf_id past 3, a
     * descriptor shape outside the table, .ws */
    m.sfb = (td_ir_desc_operand){.form = TD_IR_DESC_RECOMPUTE, .smem = b,
                                 .sdo = 64, .swizzle = 3};
    td_ir_tcgen05_mma(ir, &m);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    sfa = td_ir_buffer(ir, "SFA", TD_F8E4M3, "tmem", 2, (int64_t[]){128, 4});
    d.sfa.tmem = sfa;
    d.sfb.tmem = sfa;
    di = td_ir_idesc_block_scaled(ir, "descI_local", &d);
    td_ir_idesc_sf_id(ir, di, 4);
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);
    ir = td_ir_new();
    sfa = td_ir_buffer(ir, "SFA", TD_F8E4M3, "tmem", 2, (int64_t[]){128, 4});
    d.sfa.tmem = sfa;
    d.sfb.tmem = sfa;
    d.n = 12;
    d.given = false;
    assert_null(td_ir_idesc_block_scaled(ir, "descI_local", &d));
    td_ir_free(ir);
    assert_string_equal(td_umma_bs_kind_name(TD_UMMA_MXF4), "mxf4");
    assert_int_equal(td_umma_bs_scale_vec(TD_UMMA_MXF4), 2);
    assert_null(td_umma_bs_kind_name(TD_UMMA_BS_KIND_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync),      cmocka_unit_test(test_tma_load),
        cmocka_unit_test(test_tma_store), cmocka_unit_test(test_dsmem),
        cmocka_unit_test(test_tensor_maps), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_tcgen05),
        cmocka_unit_test(test_tcgen05_16xnb),
        cmocka_unit_test(test_tcgen05_mma_bs),
        cmocka_unit_test(test_tcgen05_cp), cmocka_unit_test(test_tcgen05_mma),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
