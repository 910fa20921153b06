/*
 * Unit tests of td_kernel_program for cluster launches: the dsmem
 * programs (tools/kernel/kernel_dsmem.c: one instance per CTA, the peer
 * table, the cluster protocol around the body, one buffer holding both
 * tiles) and the TMA multicast programs (kernel_copy_async.c: rank 0
 * issues, the receivers the mask names), both launched with
 * cudaLaunchKernelEx; and the calls they refuse with their reason.
 * Whether the programs pass is tests/cuda/gpu-cluster.sh's question (an
 * H200) and emu.py --cluster-programs' (the CPU stand-in).
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

/* The program of `text` (why NULL: it must be written), or the refusal's
 * message, which must hold `why` (and "has no self-checking program yet"
 * when `yet`). */
static char *program(const char *name, const char *text, const char *why,
                     bool yet)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    td_call *c = parse(name, text);
    char *prog = NULL;
    td_diag_clear(&d);
    int rc = td_kernel_program(reg, c, &prog, &d);
    if (why == NULL) {
        if (rc != 0)
            fail_msg("no program: %s", d.msg);
        assert_non_null(prog);
    } else {
        assert_int_not_equal(rc, 0);
        assert_null(prog);
        if (yet)
            assert_contains(d.msg, "has no self-checking program yet");
        assert_contains(d.msg, why);
    }
    td_call_free(c);
    td_registry_free(reg);
    return prog;
}

/* The steps must appear in this order. */
static void in_order(const char *p, const char *const *steps, size_t n)
{
    const char *at = p;
    for (size_t i = 0; i < n; i++) {
        const char *hit = strstr(at, steps[i]);
        if (hit == NULL)
            fail_msg("step %zu missing or out of order: %s", i, steps[i]);
        at = hit + strlen(steps[i]);
    }
}

static const char dsmem_call[] =
    "op: copy_async\ntarget: cuda\narch: sm_90a\nscope: thread\n"
    "launch: {threadIdx.x: 64, blockIdx.x: 4, cluster: [2, 1, 1]}\n"
    "buffers:\n"
    "  S_src: {scope: shared.dyn, dtype: float16, shape: [8, 64]}\n"
    "  S_dst: {scope: shared.dyn, dtype: float16, shape: [8, 64], "
    "layout: \"S[(8, 64):(128, 1)]\"}\n"
    "  mbar: {scope: shared, dtype: uint64, shape: [2]}\n"
    "dst: \"S_dst[0:8, 0:64]\"\nsrc: \"S_src[0:8, 0:64]\"\n"
    "config: {mbar: \"mbar[1]\", remote_cta_id: \"1 - cbx\"}\n";

static void test_dsmem(void **state)
{
    (void)state;
    char *p = program("dir/ds.yaml", dsmem_call, NULL, false);
    /* One instance per CTA; float16 bits staged as uint16. */
    assert_contains(p, "#define TD_TPI 64 ");
    assert_contains(p, "#define TD_INSTANCES 4LL");
    assert_contains(p, "const uint16_t *__restrict__ td_in_S_src");
    assert_contains(p, " * cluster: (2, 1, 1) CTAs, launched with "
                       "cudaLaunchKernelEx.\n");
    /* Each CTA's dst is filled by its peer's source: 0 <-> 1, 2 <-> 3. */
    assert_contains(p, "static const int td_ds_from[] = {1, 0, 3, 2};");
    assert_contains(p, "#define TD_DS_ONE_BUFFER 0 ");
    assert_contains(p, "td_ds_reference(v_in_S_src + td_ds_from[inst] * "
                       "512LL, v_in_S_dst + inst * 512LL, td_want);");
    assert_contains(p, "v_in_S_dst[i] = TD_CP_SENTINEL;");
    assert_contains(p, "td_ds_check(\"S_dst\", inst, e, ");
    /* The protocol, in order, around the marked body. */
    const char *steps[] = {
        "    td_fence_proxy_async();\n    __syncthreads();\n",
        "mbar_ptr = (unsigned long long *)(td_smem + ",
        "    if (td_tid == 0) {\n        td_mbar_init(mbar_ptr + 1, 1);\n"
        "        td_fence_mbarrier_init();\n    }\n    __syncthreads();\n",
        "    td_cluster_sync();\n",
        "    if (td_tid == 0) {\n",
        "        td_mbar_arrive_expect_tx(mbar_ptr + 1, 1024);\n",
        /* issued one after another, by cluster rank */
        "        td_ds_stagger();\n",
        "    /* The emitted body (variant dsmem). */\n    {\n",
        "td_bulk_copy_s2c(",
        "    }\n    }\n    td_mbar_wait(mbar_ptr + 1, 0);\n",
        /* the dst's storage (a span of 960 elements) right after the wait */
        "    for (int i = td_t; i < 1920; i += TD_TPI)\n"
        "        td_ds_snap[i] = ((const unsigned char *)S_dst_ptr)[i];\n",
        "    td_cluster_sync();\n",
        /* checked as the snapshot saw it; a later change fails */
        "    for (int i = td_t; i < 1920; i += TD_TPI) {\n"
        "        if (((const unsigned char *)S_dst_ptr)[i] != td_ds_snap[i])\n"
        "            td_guard[1] = 2;\n"
        "        ((unsigned char *)S_dst_ptr)[i] = td_ds_snap[i];\n"
        "    }\n    __syncthreads();\n"};
    in_order(p, steps, sizeof steps / sizeof *steps);
    /* The snapshot lies past the barriers, 16-byte aligned; the checked
     * mode of the helpers is on. */
    assert_contains(p, "#define TD_CHECKED 1\n");
    assert_contains(p, "unsigned char *const td_ds_snap = td_smem + ");
    assert_contains(p, "__device__ __forceinline__ void td_ds_stagger()");
    /* The cluster launch. */
    const char *launch[] = {
        "td_cfg.gridDim = dim3(4, 1, 1);",
        "td_cfg.blockDim = dim3(64, 1, 1);",
        "td_attr[0].id = cudaLaunchAttributeClusterDimension;",
        "td_attr[0].val.clusterDim.x = 2;",
        "td_attr[0].val.clusterDim.y = 1;",
        "TD_CHECK(cudaLaunchKernelEx(&td_cfg, td_kernel, d_in_S_src, "
        "d_out_S_src, d_in_S_dst, d_out_S_dst, d_guard, "
        "td_round % 2 ? 0xCF : 0x4F));"};
    in_order(p, launch, sizeof launch / sizeof *launch);
    if (strstr(p, "td_kernel<<<") != NULL)
        fail_msg("a cluster program launches with <<< >>>");
    td_free(p);
}

static const char one_buffer_call[] =
    "op: copy_async\ntarget: cuda\narch: sm_90a\nscope: thread\n"
    "launch: {threadIdx.x: 32, blockIdx.x: 2, cluster: [2]}\n"
    "buffers:\n"
    "  S: {scope: shared, dtype: float32, shape: [2, 64]}\n"
    "  mbar: {scope: shared, dtype: uint64, shape: [1]}\n"
    "dst: \"S[1, 0:64]\"\nsrc: \"S[0, 0:64]\"\n"
    "config: {mbar: \"mbar[0]\", remote_cta_id: \"1 - cbx\"}\n";

static void test_one_buffer(void **state)
{
    (void)state;
    char *p = program("dir/one.yaml", one_buffer_call, NULL, false);
    assert_contains(p, "#define TD_DS_ONE_BUFFER 1 ");
    /* The buffer is source and dst: every element gets data, and the
     * reference keeps the CTA's own row 0. */
    assert_contains(p, "v_in_S[i] = td_cp_gen((unsigned long long)i, "
                       "td_seed);");
    assert_contains(p, "td_ds_reference(v_in_S + td_ds_from[inst] * 128LL, "
                       "v_in_S + inst * 128LL, td_want);");
    assert_contains(p, "td_mbar_arrive_expect_tx(mbar_ptr, 256);");
    td_free(p);
}

/* The peer and the barrier move with a declared scalar k in [0, 4): the
 * program runs every value, each round with its set's peer map and its
 * barrier (the kernel takes the set; the host picks the map before each
 * check). */
static void test_dsmem_scalar_sets(void **state)
{
    (void)state;
    char text[2048], t2[2048];
    replace(t2, sizeof t2, dsmem_call, "buffers:\n",
            "scalars:\n  k: {dtype: int32, range: [0, 4]}\nbuffers:\n");
    replace(text, sizeof text, t2,
            "config: {mbar: \"mbar[1]\", remote_cta_id: \"1 - cbx\"}",
            "config: {mbar: \"mbar[k % 2]\", remote_cta_id: "
            "\"(cbx + k) % 2\"}");
    char *p = program("dir/dsk.yaml", text, NULL, false);
    assert_contains(p, " * scalars: every value of k in [0, 4): 4 sets, "
                       "round r passes set r / 2 % 4\n");
    /* k even: each CTA into itself; k odd: 0 <-> 1, 2 <-> 3. */
    assert_contains(p, "static const int td_ds_from_set[4][4] = {{0, 1, 2, "
                       "3}, {1, 0, 3, 2}, {0, 1, 2, 3}, {1, 0, 3, 2}};\n"
                       "static const int *td_ds_from = td_ds_from_set[0];\n");
    assert_contains(p, "__device__ const int td_ds_mbar_dev[4] = {0, 1, 0, "
                       "1};");
    const char *steps[] = {
        "                          const int td_ds_set)\n",
        "    const int td_ds_mbar_idx = td_ds_mbar_dev[td_ds_set];\n"
        "    if (td_tid == 0) {\n"
        "        td_mbar_init(mbar_ptr + td_ds_mbar_idx, 1);\n",
        "        td_mbar_arrive_expect_tx(mbar_ptr + td_ds_mbar_idx, 1024);\n",
        "    td_mbar_wait(mbar_ptr + td_ds_mbar_idx, 0);\n",
        "        const int td_svi = td_round / 2 % 4;\n",
        ", td_svi));",
        "            td_ds_from = td_ds_from_set[td_svi];\n"
        "            td_ds_reference(v_in_S_src + td_ds_from[inst] * "};
    in_order(p, steps, sizeof steps / sizeof *steps);
    td_free(p);
}

static void test_dsmem_refusals(void **state)
{
    (void)state;
    char text[2048];
    /* Both CTAs copy into CTA 1: CTA 0's barrier would never complete. */
    replace(text, sizeof text, dsmem_call, "remote_cta_id: \"1 - cbx\"",
            "remote_cta_id: 1");
    program("dir/same.yaml", text, "copy into the same CTA", true);
    /* A kernel parameter's value is the caller's. */
    replace(text, sizeof text, dsmem_call, "remote_cta_id: \"1 - cbx\"",
            "remote_cta_id: peer");
    program("dir/param.yaml", text, "kernel parameter", true);
    /* More CTAs in a cluster than the portable 8. */
    char t2[2048];
    replace(t2, sizeof t2, dsmem_call, "blockIdx.x: 4", "blockIdx.x: 16");
    replace(text, sizeof text, t2, "cluster: [2, 1, 1]",
            "cluster: [16, 1, 1]");
    program("dir/big.yaml", text, "a cluster of 16 CTAs", false);
}

static const char mc_call[] =
    "op: copy_async\ntarget: cuda\narch: sm_90a\nscope: thread\n"
    "launch: {threadIdx.x: 128, blockIdx.x: 4, cluster: [4, 1, 1]}\n"
    "scalars:\n"
    "  k: {dtype: int32, range: [0, 4]}\n"
    "buffers:\n"
    "  A: {scope: global, dtype: float16, shape: [256, 64]}\n"
    "  S: {scope: shared, dtype: float16, shape: [64, 64]}\n"
    "  mbar: {scope: shared, dtype: uint64, shape: [2]}\n"
    "dst: S\nsrc: \"A[k * 64:k * 64 + 64, 0:64]\"\n"
    "dispatch: tma_auto\n"
    "config: {mbar: \"mbar[k % 2]\", cta_mask: 10}\n";

static void test_multicast(void **state)
{
    (void)state;
    char *p = program("dir/mc.yaml", mc_call, NULL, false);
    /* Mask 0b1010: ranks 1 and 3 receive, 0 (the issuer) and 2 do not;
     * a row per value of k (every value of its range runs). */
    assert_contains(p, "#define TD_CA_RECV_INIT {{0, 1, 0, 1}, {0, 1, 0, 1}, "
                       "{0, 1, 0, 1}, {0, 1, 0, 1}}");
    assert_contains(p, "__device__ const unsigned char td_ca_recv_dev[4][4] "
                       "= TD_CA_RECV_INIT;");
    assert_contains(p, "if (!td_ca_recv_host[td_svi][inst]) {");
    assert_contains(p, "td_want[e] = TD_CP_SENTINEL;");
    /* The barrier k % 2 names at k = 0, 1, 2, 3: the round's set picks
     * it (the kernel's td_ca_set is the round's td_svi). */
    assert_contains(p, "__device__ const int td_ca_mbar_dev[4] = {0, 1, 0, "
                       "1};");
    const char *steps[] = {
        "                          const int td_ca_set)\n",
        "    const int td_ca_mbar_idx = td_ca_mbar_dev[td_ca_set];\n"
        "    if (td_tid == 0) {\n"
        "        td_mbar_init(mbar_ptr + td_ca_mbar_idx, 1);\n",
        "    td_cluster_sync();\n",
        "    const bool td_ca_recv = td_ca_recv_dev[td_ca_set][td_blk] != 0;\n"
        "    if (td_tid == 0 && td_ca_recv) {\n",
        "        td_mbar_arrive_expect_tx(mbar_ptr + td_ca_mbar_idx, 8192);\n",
        "    if (td_tid == 0 && TD_CA_RANK(blockIdx.x, blockIdx.y, "
        "blockIdx.z) == 0) {\n",
        "td_tma_load_2d_multicast(S_ptr, &A_tensormap, 0, k * 64, "
        "mbar_ptr + k % 2, (uint16_t)10);",
        "    if (td_ca_recv) {\n"
        "        td_mbar_wait(mbar_ptr + td_ca_mbar_idx, 0);\n    }\n",
        "    td_cluster_sync();\n",
        "        const int td_svi = td_round / 2 % 4;\n",
        "td_attr[0].val.clusterDim.x = 4;",
        ", td_map_A_tensormap, td_svi));"};
    in_order(p, steps, sizeof steps / sizeof *steps);
    td_free(p);
    /* A mask expression of a scalar at each of its values. */
    char text[2048], t2[2048];
    replace(t2, sizeof t2, mc_call, "cta_mask: 10", "cta_mask: \"k + 3\"");
    p = program("dir/mce.yaml", t2, NULL, false);
    /* k + 3 = 3, 4, 5, 6: ranks {0, 1}, {2}, {0, 2}, {1, 2}. */
    assert_contains(p, "#define TD_CA_RECV_INIT {{1, 1, 0, 0}, {0, 0, 1, 0}, "
                       "{1, 0, 1, 0}, {0, 1, 1, 0}}");
    td_free(p);
    /* A unicast TMA load in a cluster launch: each CTA loads its own
     * tile, launched as clusters, with no cluster protocol. */
    replace(text, sizeof text, mc_call, "cta_mask: 10", "cta_mask: 0");
    p = program("dir/uni.yaml", text, NULL, false);
    assert_contains(p, "td_attr[0].val.clusterDim.x = 4;");
    assert_contains(p, "td_tma_load_2d(S_ptr, &A_tensormap, 0, k * 64, "
                       "mbar_ptr + k % 2);");
    /* Its barrier too is the round's set's (k % 2 at k = 0 .. 3). */
    assert_contains(p, "__device__ const int td_ca_mbar_dev[4] = {0, 1, 0, "
                       "1};");
    assert_contains(p, "        td_mbar_init(mbar_ptr + td_ca_mbar_idx, 1);\n");
    assert_contains(p, "    td_mbar_wait(mbar_ptr + td_ca_mbar_idx, 0);\n");
    if (strstr(p, "td_cluster_sync();") != NULL ||
        strstr(p, "td_ca_recv") != NULL)
        fail_msg("a unicast load has the multicast protocol");
    td_free(p);
    /* A multicast tile that moves with the block ids. */
    replace(t2, sizeof t2, mc_call, "A[k * 64:k * 64 + 64, 0:64]",
            "A[bx * 64:bx * 64 + 64, 0:64]");
    replace(text, sizeof text, t2,
            "scalars:\n  k: {dtype: int32, range: [0, 4]}\n", "");
    replace(t2, sizeof t2, text, "mbar[k % 2]", "mbar[0]");
    program("dir/blk.yaml", t2, "block ids", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dsmem),
        cmocka_unit_test(test_one_buffer),
        cmocka_unit_test(test_dsmem_scalar_sets),
        cmocka_unit_test(test_dsmem_refusals),
        cmocka_unit_test(test_multicast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
