/*
 * Compiles the CUDA of every asynchronous IR node with nvcc, warnings as
 * errors: a kernel whose body initialises and arms mbarriers, loads tiles
 * by TMA (plain, with a cache policy, multicast, pipelined over a stage
 * loop), stores and reduces them, prefetches its tensor maps, maps
 * addresses into a peer CTA and copies to it, fences, syncs the cluster
 * and waits on bulk groups; its tensor maps are its parameters
 * (td_ir_print_tensor_maps).  Mode sm_100a adds the .cta_group::1 and ::2
 * loads, which exist only there.
 *
 * Usage: test_async_nvcc NVCC ARCH OUTDIR.  An empty NVCC means nvcc was
 * not found: the test prints SKIP and exits 77.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tiledispatch.h"
#include "codegen_internal.h"
#include "tensor_map.h"

static td_tmap plan(int swizzle128)
{
    td_tmap_request r;
    td__tmap_request_init(&r);
    r.dtype = "float16";
    r.rank = 2;
    r.shape[0] = 4096;
    r.shape[1] = 64;
    r.extent[0] = 128;
    r.extent[1] = 64;
    r.sm = 90;
    if (swizzle128)
        r.smem = TD_TMAP_SMEM_SW128;
    td_tmap m;
    td_diag d;
    td_diag_clear(&d);
    if (td__tmap_plan(&r, &m, &d) != 0) {
        fprintf(stderr, "planning failed: %s\n", d.msg);
        exit(1);
    }
    return m;
}

static td_ir *build(bool sm100)
{
    td_ir *ir = td_ir_new();
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F16, "global", 2,
                                (int64_t[]){4096, 64});
    td_ir_buf *S = td_ir_buffer(ir, "S", TD_F16, "shared", 3,
                                (int64_t[]){4, 128, 64});
    td_ir_buf *P = td_ir_buffer(ir, "P", TD_F16, "shared", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *mbar = td_ir_buffer(ir, "mbar", TD_U64, "shared", 1,
                                   (int64_t[]){4});
    td_tmap m = plan(0), sw = plan(1);
    const td_ir_tmap *map = td_ir_tensor_map(ir, A, &m);
    const td_ir_tmap *swm = td_ir_tensor_map(ir, A, &sw);
    td_expr *tid = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    td_expr *cbx = td_param(ir, "cbx", TD_I32);
    td_ir_if(ir, td_eq(ir, tid, td_int(ir, 0)));
    td_ir_prefetch_tensormap(ir, map);
    td_ir_prefetch_tensormap(ir, swm);
    td_var *s = td_ir_for(ir, "s", td_int(ir, 4), TD_LOOP_UNROLL);
    td_ir_mbar_init(ir, (td_ir_addr){mbar, td_var_ref(ir, s)}, td_int(ir, 1));
    td_ir_end_for(ir);
    td_ir_fence_mbarrier_init(ir);
    td_ir_end_if(ir);
    td_ir_cluster_sync(ir);
    /* a pipelined load over the stages, every form of the load */
    td_ir_if(ir, td_eq(ir, tid, td_int(ir, 0)));
    td_var *k = td_ir_for(ir, "k", td_int(ir, 32), TD_LOOP_SERIAL);
    td_expr *st = td_mod(ir, td_var_ref(ir, k), td_int(ir, 4));
    td_ir_addr bar = {mbar, st};
    td_ir_mbar_arrive_expect_tx(ir, bar, td_int(ir, 16384));
    td_ir_tma t = {.map = map,
                   .coords = {td_int(ir, 0),
                              td_mul(ir, td_var_ref(ir, k), td_int(ir, 128))},
                   .smem = {S, td_mul(ir, st, td_int(ir, 8192))},
                   .mbar = bar};
    td_ir_tma_load(ir, &t);
    t.map = swm;
    t.policy = td_const_u(ir, TD_U64, 0x14F0000000000000ull);
    td_ir_tma_load(ir, &t);
    t.cta_mask = td_const_u(ir, TD_U16, 3);
    td_ir_tma_load(ir, &t);
    if (sm100) {
        t.cta_mask = NULL;
        t.policy = NULL;
        t.cta_group = 1;
        td_ir_tma_load(ir, &t);
        t.cta_group = 2;
        td_ir_tma_load(ir, &t);
    }
    td_ir_end_for(ir);
    td_ir_end_if(ir);
    td_var *w = td_ir_for(ir, "w", td_int(ir, 32), TD_LOOP_SERIAL);
    td_ir_mbar_wait(ir, (td_ir_addr){mbar, td_mod(ir, td_var_ref(ir, w),
                                                  td_int(ir, 4))},
                    td_mod(ir, td_div(ir, td_var_ref(ir, w), td_int(ir, 4)),
                           td_int(ir, 2)));
    td_ir_end_for(ir);
    /* stores and reductions of the tile P after ordinary stores */
    td_expr *row = td_div(ir, tid, td_int(ir, 64));
    td_expr *col = td_mod(ir, tid, td_int(ir, 64));
    td_ir_store(ir, P, 2, (td_expr *[]){row, col},
                td_load(ir, S, 3, (td_expr *[]){td_int(ir, 0), row, col}));
    td_ir_fence_proxy_async(ir);
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0, NULL));
    td_ir_if(ir, td_eq(ir, tid, td_int(ir, 0)));
    td_ir_tma u = {.map = map, .coords = {td_int(ir, 0), td_int(ir, 128)},
                   .smem = {P, td_int(ir, 0)}};
    for (int op = TD_TMA_STORE; op < TD_TMA_OP_COUNT; op++) {
        /* the bitwise and increment reductions take integers only */
        if (op != TD_TMA_STORE && op != TD_TMA_ADD && op != TD_TMA_MIN &&
            op != TD_TMA_MAX)
            continue;
        u.op = (td_tma_op)op;
        td_ir_tma_store(ir, &u);
    }
    u.policy = td_const_u(ir, TD_U64, 0x12F0000000000000ull);
    td_ir_tma_store(ir, &u);
    td_ir_bulk_commit(ir);
    td_ir_bulk_wait_read(ir, 0);
    /* the cluster copy of P into the peer's S stage 0 */
    td_expr *peer = td_sub(ir, td_int(ir, 1), cbx);
    td_var *rm = td_ir_mapa(ir, "remote_mbar", (td_ir_addr){mbar, td_int(ir, 0)},
                            peer);
    td_var *rd = td_ir_mapa(ir, "remote_dst", (td_ir_addr){S, td_int(ir, 0)},
                            peer);
    td_ir_bulk_s2c(ir, td_var_ref(ir, rd), (td_ir_addr){P, td_int(ir, 0)},
                   td_int(ir, 16384), td_var_ref(ir, rm));
    td_ir_end_if(ir);
    td_ir_cluster_sync(ir);
    return ir;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s NVCC ARCH OUTDIR\n", argv[0]);
        return 2;
    }
    if (argv[1][0] == '\0') {
        printf("SKIP: nvcc not found\n");
        return 77;
    }
    td_ir *ir = build(strcmp(argv[2], "sm_100a") == 0);
    if (td_ir_status(ir) != 0) {
        fprintf(stderr, "building the IR failed: %s\n",
                td_strerror(td_ir_status(ir)));
        return 1;
    }
    char *body = NULL, *prelude = NULL, *params = NULL;
    if (td_ir_print(ir, TD_LANG_CUDA, 1, &body, &prelude) != 0 ||
        td_ir_print_tensor_maps(ir, TD_LANG_CUDA, &params) != 0) {
        fprintf(stderr, "printing failed\n");
        return 1;
    }
    char path[4096], obj[4096];
    snprintf(path, sizeof path, "%s/async_%s.cu", argv[3], argv[2]);
    snprintf(obj, sizeof obj, "%s/async_%s.o", argv[3], argv[2]);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    fputs(prelude, f);
    fprintf(f,
            "\nextern \"C\" __global__ void __cluster_dims__(2, 1, 1)\n"
            "td_test_kernel(%s, int cbx) {\n"
            "  __shared__ __align__(1024) __half S_buf[4 * 128 * 64];\n"
            "  __shared__ __align__(128) __half P_buf[128 * 64];\n"
            "  __shared__ __align__(8) unsigned long long mbar_buf[4];\n"
            "  __half *S_ptr = S_buf, *P_ptr = P_buf;\n"
            "  unsigned long long *mbar_ptr = mbar_buf;\n",
            params);
    fputs(body, f);
    fputs("}\n", f);
    fclose(f);
    td_free(body);
    td_free(prelude);
    td_free(params);
    td_ir_free(ir);

    /* -arch=sm_90a also embeds compute_90 PTX, for which ptxas advises
     * against .multicast::cluster (an error under -Werror): a program
     * that multicasts is built for the arch-specific target alone. */
    char cmd[3 * 4096];
    const char *arch = argv[2] + 3; /* "90a" */
    snprintf(cmd, sizeof cmd,
             "'%s' -gencode arch=compute_%s,code=sm_%s -Werror all-warnings "
             "-c '%s' -o '%s'",
             argv[1], arch, arch, path, obj);
    printf("%s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        fprintf(stderr, "nvcc failed on %s\n", path);
        return 1;
    }
    printf("PASS: %s compiles for %s\n", path, argv[2]);
    return 0;
}
