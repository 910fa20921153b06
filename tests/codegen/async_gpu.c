/*
 * A GPU check of the asynchronous IR nodes' CUDA: writes a program whose
 * kernel body is printed from the IR (an mbarrier initialised and armed
 * with expect_tx, a tensor-map prefetch, a TMA load with an L2 cache
 * policy, the parity wait, a plain TMA store and two TMA add-reductions,
 * bulk commit and wait_group.read) and whose host encodes the two maps
 * with the printed C (td__tmap_print_c), then checks every element: the
 * loaded tile copied out, the stored rows, the doubly added rows.
 *
 * Usage: async_gpu NVCC OUTDIR [--run].  Without --run it only compiles
 * (nvcc -gencode arch=compute_90a,code=sm_90a, -lcuda); with it, it runs
 * the program, which prints PASS or FAIL and the mismatches.  An empty
 * NVCC prints SKIP and exits 77.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tiledispatch.h"
#include "codegen_internal.h"
#include "tensor_map.h"
#include "tensor_map_print.h"

/* f16 X[256, 64], rows 128 at a time into a [128, 64] tile. */
static int plan(td_tmap *m)
{
    td_tmap_request r;
    td__tmap_request_init(&r);
    r.dtype = "float16";
    r.rank = 2;
    r.shape[0] = 256;
    r.shape[1] = 64;
    r.extent[0] = 128;
    r.extent[1] = 64;
    r.sm = 90;
    td_diag d;
    td_diag_clear(&d);
    return td__tmap_plan(&r, m, &d);
}

static td_ir *build(const td_tmap *m)
{
    td_ir *ir = td_ir_new();
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F16, "global", 2,
                                (int64_t[]){256, 64});
    td_ir_buf *B = td_ir_buffer(ir, "B", TD_F16, "global", 2,
                                (int64_t[]){256, 64});
    td_ir_buf *O = td_ir_buffer(ir, "O", TD_F16, "global", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *S = td_ir_buffer(ir, "S", TD_F16, "shared", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *mbar = td_ir_buffer(ir, "mbar", TD_U64, "shared", 1,
                                   (int64_t[]){1});
    const td_ir_tmap *ma = td_ir_tensor_map(ir, A, m);
    const td_ir_tmap *mb = td_ir_tensor_map(ir, B, m);
    td_expr *tid = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    td_expr *sync = td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0, NULL);
    td_ir_addr bar = {mbar, td_int(ir, 0)}, tile = {S, td_int(ir, 0)};
    td_ir_if(ir, td_eq(ir, tid, td_int(ir, 0)));
    td_ir_mbar_init(ir, bar, td_int(ir, 1));
    td_ir_fence_mbarrier_init(ir);
    td_ir_end_if(ir);
    td_ir_eval(ir, sync);
    td_ir_if(ir, td_eq(ir, tid, td_int(ir, 0)));
    td_ir_prefetch_tensormap(ir, ma);
    td_ir_mbar_arrive_expect_tx(ir, bar, td_int(ir, 128 * 64 * 2));
    td_ir_tma t = {.map = ma, .coords = {td_int(ir, 0), td_int(ir, 128)},
                   .smem = tile, .mbar = bar,
                   .policy = td_const_u(ir, TD_U64, 0x14F0000000000000ull)};
    td_ir_tma_load(ir, &t);
    td_ir_end_if(ir);
    td_ir_mbar_wait(ir, bar, td_int(ir, 0));
    td_var *i = td_ir_for(ir, "i", td_int(ir, 64), TD_LOOP_SERIAL);
    td_ir_store(ir, O, 2, (td_expr *[]){tid, td_var_ref(ir, i)},
                td_load(ir, S, 2, (td_expr *[]){tid, td_var_ref(ir, i)}));
    td_ir_end_for(ir);
    td_ir_fence_proxy_async(ir);
    td_ir_eval(ir, sync);
    td_ir_if(ir, td_eq(ir, tid, td_int(ir, 0)));
    td_ir_tma u = {.map = mb, .coords = {td_int(ir, 0), td_int(ir, 0)},
                   .smem = tile};
    td_ir_tma_store(ir, &u);
    u.coords[1] = td_int(ir, 128);
    u.op = TD_TMA_ADD;
    td_ir_tma_store(ir, &u);
    td_ir_tma_store(ir, &u);
    td_ir_bulk_commit(ir);
    td_ir_bulk_wait_read(ir, 0);
    td_ir_end_if(ir);
    return ir;
}

static const char host[] =
    "\n#include <cstdio>\n#include <cuda_runtime.h>\n\n"
    "static float val(int r, int c) { return (float)((r * 64 + c) % 1000); }\n\n"
    "int main()\n{\n"
    "  static __half a[256 * 64], b[256 * 64], o[128 * 64];\n"
    "  for (int r = 0; r < 256; r++)\n"
    "    for (int c = 0; c < 64; c++)\n"
    "      a[r * 64 + c] = __float2half(val(r, c));\n"
    "  __half *A, *B, *O;\n"
    "  cudaMalloc(&A, sizeof a);\n  cudaMalloc(&B, sizeof b);\n"
    "  cudaMalloc(&O, sizeof o);\n"
    "  cudaMemcpy(A, a, sizeof a, cudaMemcpyHostToDevice);\n"
    "  cudaMemset(B, 0, sizeof b);\n  cudaMemset(O, 0, sizeof o);\n"
    "  CUtensorMap ma, mb;\n"
    "  CUresult ea = encode_map(&ma, A), eb = encode_map(&mb, B);\n"
    "  if (ea != CUDA_SUCCESS || eb != CUDA_SUCCESS) {\n"
    "    printf(\"FAIL: encode %d %d\\n\", (int)ea, (int)eb);\n    return 1;\n  }\n"
    "  td_async_kernel<<<1, 128>>>(ma, mb, O);\n"
    "  cudaError_t e = cudaDeviceSynchronize();\n"
    "  if (e != cudaSuccess) {\n"
    "    printf(\"FAIL: %s\\n\", cudaGetErrorString(e));\n    return 1;\n  }\n"
    "  cudaMemcpy(b, B, sizeof b, cudaMemcpyDeviceToHost);\n"
    "  cudaMemcpy(o, O, sizeof o, cudaMemcpyDeviceToHost);\n"
    "  int bad = 0;\n"
    "  for (int r = 0; r < 128; r++)\n"
    "    for (int c = 0; c < 64; c++) {\n"
    "      float v = val(128 + r, c);\n"
    "      float got[3] = {__half2float(o[r * 64 + c]), __half2float(b[r * 64 + c]),\n"
    "                      __half2float(b[(128 + r) * 64 + c])};\n"
    "      float want[3] = {v, v, 2 * v};\n"
    "      for (int k = 0; k < 3; k++)\n"
    "        if (got[k] != want[k] && bad++ < 10)\n"
    "          printf(\"%s[%d][%d]: got %g, want %g\\n\",\n"
    "                 k == 0 ? \"loaded\" : k == 1 ? \"stored\" : \"added\", r, c,\n"
    "                 got[k], want[k]);\n"
    "    }\n"
    "  printf(\"%s: 3 x 8192 elements (TMA load, store, 2 add-reductions), \"\n"
    "         \"%d wrong\\n\", bad ? \"FAIL\" : \"PASS\", bad);\n"
    "  return bad != 0;\n}\n";

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s NVCC OUTDIR [--run]\n", argv[0]);
        return 2;
    }
    if (argv[1][0] == '\0') {
        printf("SKIP: nvcc not found\n");
        return 77;
    }
    bool run = argc > 3 && strcmp(argv[3], "--run") == 0;
    td_tmap m;
    if (plan(&m) != 0) {
        fprintf(stderr, "planning the map failed\n");
        return 1;
    }
    td_ir *ir = build(&m);
    char *body = NULL, *prelude = NULL, *params = NULL;
    td_buf enc;
    td__buf_init(&enc);
    if (td_ir_status(ir) != 0 ||
        td_ir_print(ir, TD_LANG_CUDA, 1, &body, &prelude) != 0 ||
        td_ir_print_tensor_maps(ir, TD_LANG_CUDA, &params) != 0 ||
        td__tmap_print_c(&m, "encode_map", 0, &enc) != 0) {
        fprintf(stderr, "building or printing failed\n");
        return 1;
    }
    char path[4096], exe[4096];
    snprintf(path, sizeof path, "%s/async_gpu.cu", argv[2]);
    snprintf(exe, sizeof exe, "%s/async_gpu", argv[2]);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    fprintf(f, "%s\n%s\n__global__ void td_async_kernel(%s, __half *O_ptr)\n{\n"
               "  __shared__ __align__(128) __half S_ptr[128 * 64];\n"
               "  __shared__ __align__(8) unsigned long long mbar_ptr[1];\n"
               "%s}\n%s",
            prelude, enc.data, params, body, host);
    fclose(f);
    td_free(body);
    td_free(prelude);
    td_free(params);
    td__buf_free(&enc);
    td_ir_free(ir);
    char cmd[3 * 4096];
    snprintf(cmd, sizeof cmd,
             "'%s' -gencode arch=compute_90a,code=sm_90a -Werror all-warnings "
             "'%s' -o '%s' -lcuda",
             argv[1], path, exe);
    printf("%s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        fprintf(stderr, "nvcc failed on %s\n", path);
        return 1;
    }
    if (!run) {
        printf("compiled %s (run it with --run on an sm_90 GPU)\n", exe);
        return 0;
    }
    rc = system(exe);
    return rc == 0 ? 0 : 1;
}
