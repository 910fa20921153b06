/*
 * Unit tests of td_kernel_program for TMA copies (tools/kernel/
 * kernel_copy_async.c): what a program around a tma_auto body holds (the
 * tensor map encoded on the host through the driver entry point and
 * passed as a __grid_constant__ parameter, the 1024-byte aligned shared
 * base, the mbarrier protocol of a load, the bulk-group protocol of a
 * store, a reduction's reference) and the calls it refuses with their
 * reason.  Whether the programs pass is tests/cuda/emu.py
 * --tma-programs' question (the CPU stand-in) and gpu-tma.sh's (a GPU).
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

static td_registry *default_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    return reg;
}

/* text with the first `from` replaced by `to`, into out. */
static void replace(char *out, size_t cap, const char *text, const char *from,
                    const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    snprintf(out, cap, "%.*s%s%s", (int)(at - text), text, to,
             at + strlen(from));
}

static void assert_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("missing from the program: %s", needle);
}

/* The program of `text` (which must be written), or the refusal's
 * message into msg (which must hold `why`). */
static char *program(const char *name, const char *text, const char *why)
{
    td_registry *reg = default_registry();
    td_call *c = parse(name, text);
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_kernel_program(reg, c, &prog, &d);
    if (why == NULL) {
        if (rc != 0)
            fail_msg("no program: %s", d.msg);
        assert_non_null(prog);
    } else {
        assert_int_equal(rc, TD_EINVAL);
        assert_null(prog);
        assert_contains(d.msg, "has no self-checking program yet");
        assert_contains(d.msg, why);
    }
    td_call_free(c);
    td_registry_free(reg);
    return prog;
}

static const char load_call[] =
    "op: copy_async\ntarget: cuda\narch: sm_90a\nscope: thread\n"
    "launch: {threadIdx.x: 128}\n"
    "buffers:\n"
    "  A: {scope: global, dtype: float16, shape: [256, 64]}\n"
    "  S: {scope: shared, dtype: float16, shape: [64, 64], layout: "
    "\"ComposeLayout(3, 3, 3, TileLayout(S[(64, 64):(64, 1)]))\"}\n"
    "  mbar: {scope: shared, dtype: uint64, shape: [2]}\n"
    "dst: \"S[0:64, 0:64]\"\nsrc: \"A[64:128, 0:64]\"\n"
    "dispatch: tma_auto\nconfig: {mbar: \"mbar[1]\"}\n";

static void test_load(void **state)
{
    (void)state;
    char *p = program("dir/load.yaml", load_call, NULL);
    /* One instance per block; float16 bits staged as uint16. */
    assert_contains(p, "#define TD_TPI 128 ");
    assert_contains(p, "#define TD_INSTANCES 1LL");
    assert_contains(p, "__global__ void td_kernel(uint16_t *A_ptr,");
    assert_contains(p, "const __grid_constant__ CUtensorMap A_tensormap)");
    /* The encoder through the runtime's driver entry point, the map the
     * library prints, its encode before the launch and the parameter. */
    assert_contains(p, "cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\"");
    assert_contains(p, "#define cuTensorMapEncodeTiled td_encode_tiled");
    assert_contains(p, "static CUresult td_encode_A_tensormap(CUtensorMap *map, "
                       "void *global_base)");
    assert_contains(p, "CU_TENSOR_MAP_SWIZZLE_128B");
    assert_contains(p, "td_encode_A_tensormap(&td_map_A_tensormap, d_in_A + 128)");
    assert_contains(p, ", td_map_A_tensormap);");
    /* The aligned base, the tile on it, the mbarrier after it. */
    assert_contains(p, "td_smem_al = (unsigned char *)(((unsigned long long)"
                       "td_smem + 1023ULL) & ~1023ULL);");
    assert_contains(p, "uint16_t *const S_ptr = (uint16_t *)(td_smem_al + 0LL");
    assert_contains(p, "unsigned long long *const mbar_ptr = (unsigned long "
                       "long *)(td_smem_al + 9216LL);");
    /* The protocol, in order, on element 1 of the mbarrier buffer. */
    const char *steps[] = {
        "    td_fence_proxy_async();\n    __syncthreads();\n",
        "    if (td_tid == 0) {\n        td_mbar_init(mbar_ptr + 1, 1);\n"
        "        td_fence_mbarrier_init();\n    }\n    __syncthreads();\n",
        "        td_mbar_arrive_expect_tx(mbar_ptr + 1, 8192);\n",
        "    /* The emitted body (variant tma_auto). */\n    {\n"
        "        td_tma_load_2d(S_ptr, &A_tensormap, 0, 64, mbar_ptr + 1);\n"
        "    }\n",
        "    }\n    td_mbar_wait(mbar_ptr + 1, 0);\n    __syncthreads();\n"};
    const char *at = p;
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        const char *n = strstr(at, steps[i]);
        if (n == NULL)
            fail_msg("protocol step %zu missing or out of order: %s", i,
                     steps[i]);
        at = n + strlen(steps[i]);
    }
    /* No cp.async wait of the ldgsts programs. */
    if (strstr(p, "cp.async.wait_all") != NULL)
        fail_msg("a TMA program waits for cp.async groups");
    td_free(p);
}

static const char store_call[] =
    "op: copy_async\ntarget: cuda\narch: sm_90a\nscope: thread\n"
    "launch: {threadIdx.x: 128}\n"
    "buffers:\n"
    "  A: {scope: global, dtype: float32, shape: [256, 64]}\n"
    "  A_smem: {scope: shared, dtype: float32, shape: [64, 64]}\n"
    "dst: \"A[64:128, 0:64]\"\nsrc: \"A_smem[0:64, 0:64]\"\n"
    "config: {use_tma_reduce: %s}\n";

static void test_store_and_reduce(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, store_call, "add");
    char *p = program("dir/red.yaml", text, NULL);
    assert_contains(p, "    if (td_tid == 0) {\n");
    /* The marked block holds the emitted body alone (the mutation suite
     * mutates that block); the bulk-group protocol follows it. */
    assert_contains(p, "    /* The emitted body (variant tma_auto). */\n"
                       "    {\n"
                       "        td_tma_reduce_add_2d(&A_tensormap, 0, 64, "
                       "A_smem_ptr);\n"
                       "    }\n"
                       "        td_bulk_commit_group();\n"
                       "        td_bulk_wait_group_read<0>();\n"
                       "#ifdef __CUDA_ARCH__\n"
                       "        asm volatile(\"cp.async.bulk.wait_group 0;\" : : : "
                       "\"memory\");\n");
    assert_contains(p, "#define TD_CA_T float\n#define TD_CA_OP 1 ");
    assert_contains(p, "td_ca_reduce_reference(v_in_A_smem + inst * 4096LL, "
                       "v_in_A, td_want);");
    assert_contains(p, "td_ca_gen((unsigned long long)i, td_seed, 1)");
    td_free(p);
    snprintf(text, sizeof text, store_call, "max");
    p = program("dir/max.yaml", text, NULL);
    assert_contains(p, "#define TD_CA_OP 3 ");
    td_free(p);
    /* A plain store keeps the copy family's data and sentinel. */
    char plain[1024];
    snprintf(plain, sizeof plain, "%s", text);
    char *cfg = strstr(plain, "config:");
    assert_non_null(cfg);
    *cfg = '\0';
    p = program("dir/store.yaml", plain, NULL);
    assert_contains(p, "td_tma_store_2d(&A_tensormap, 0, 64, A_smem_ptr);");
    assert_contains(p, "v_in_A_smem[i] = td_cp_gen((unsigned long long)(i % 4096LL), td_seed);");
    if (strstr(p, "td_ca_reduce_reference") != NULL)
        fail_msg("a plain store checks a reduction");
    td_free(p);
}

static void test_refusals(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, store_call, "xor");
    /* The variant may decline xor on float32 itself; if it dispatches,
     * the program refuses it. */
    td_registry *reg = default_registry();
    td_call *c = parse("dir/xor.yaml", text);
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_not_equal(td_kernel_program(reg, c, &prog, &d), 0);
    assert_null(prog);
    td_call_free(c);
    td_registry_free(reg);
    /* sm_100 maps. */
    char other[1100];
    replace(other, sizeof other, load_call, "sm_90a", "sm_100a");
    program("dir/sm100.yaml", other, "sm_100");
    /* Two blocks reducing into one tile. */
    snprintf(text, sizeof text, store_call, "add");
    replace(other, sizeof other, text, "launch: {threadIdx.x: 128}",
            "launch: {threadIdx.x: 128, blockIdx.x: 2}");
    program("dir/two.yaml", other, "more than one block");
    /* An 8-bit integer reduction: the data do not fit the type (a 16-bit
     * integer has no tensor-map dtype: no variant takes it). */
    char narrow[1100];
    replace(narrow, sizeof narrow, text, "float32, shape: [256, 64]",
            "int8, shape: [256, 64]");
    replace(other, sizeof other, narrow, "float32, shape: [64, 64]",
            "int8, shape: [64, 64]");
    program("dir/i8.yaml", other, "reduction's dtype");
    /* A static cta_mask of 0 is unicast: a program, not the multicast
     * refusal (a real multicast needs a cluster launch, refused before). */
    replace(other, sizeof other, load_call, "config: {mbar: \"mbar[1]\"}",
            "config: {mbar: \"mbar[1]\", cta_mask: 0}");
    td_free(program("dir/mc0.yaml", other, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_store_and_reduce),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
