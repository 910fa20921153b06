/* The host side of the issue's TMA kernel (gen.py), as TVM's compiled host
 * code would run it: encode the tensor maps the TVM bridge handed TVM's host
 * side (params.h, one cuTensorMapEncodeTiled per map), launch TVM's kernel
 * (kernel.cu) on one CTA with its dynamic shared memory, and compare B with
 * numpy's column sums.  Prints one line, PASS or FAIL with why; the exit
 * status is 0 only for PASS.  Built with -DTD_MUTANT, the load's map starts
 * one row late (rows 1..128 of A, whose allocation has a zero row after
 * the tile): that program must FAIL, or the check could not see a wrong
 * tile. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cmath>
#include <cstdio>

#include "kernel.cu"
#include "params.h"

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_));               \
            return 1;                                                          \
        }                                                                      \
    } while (0)

int main(void)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000,
                                        cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || encode == nullptr) {
        printf("FAIL no cuTensorMapEncodeTiled entry point\n");
        return 1;
    }
    float *A = nullptr, *B = nullptr;
    /* One zero row after the tile: the mutant's map reaches it. */
    CK(cudaMalloc(&A, sizeof td_input + TD_COLS * sizeof(float)));
    CK(cudaMemset(A, 0, sizeof td_input + TD_COLS * sizeof(float)));
    CK(cudaMalloc(&B, TD_COLS * sizeof(float)));
    CK(cudaMemcpy(A, td_input, sizeof td_input, cudaMemcpyHostToDevice));
    /* NaN everywhere: a column the store missed cannot pass. */
    CK(cudaMemset(B, 0xff, TD_COLS * sizeof(float)));

    CUtensorMap maps[TD_MAPS];
    for (int i = 0; i < TD_MAPS; i++) {
        const td_map_spec *s = &td_maps[i];
        char *base = (char *)(s->buffer == 0 ? A : B) + s->offset;
#ifdef TD_MUTANT
        if (i == 0)
            base += TD_COLS * sizeof(float);
#endif
        CUresult r = encode(&maps[i], s->dtype, s->rank, base, s->dims, s->strides, s->box,
                            s->estrides, (CUtensorMapInterleave)s->interleave,
                            (CUtensorMapSwizzle)s->swizzle,
                            (CUtensorMapL2promotion)s->l2_promotion,
                            (CUtensorMapFloatOOBfill)s->oob_fill);
        if (r != CUDA_SUCCESS) {
            printf("FAIL encoding map %d: CUresult %d\n", i, (int)r);
            return 1;
        }
    }
    CK(cudaFuncSetAttribute(tma_reduce_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            TD_SMEM_BYTES));
    tma_reduce_kernel<<<1, TD_THREADS, TD_SMEM_BYTES>>>(maps[0], maps[1]);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    float out[TD_COLS];
    CK(cudaMemcpy(out, B, sizeof out, cudaMemcpyDeviceToHost));
    int bad = 0;
    double worst = 0;
    for (int j = 0; j < TD_COLS; j++) {
        double err = std::fabs((double)out[j] - (double)td_expected[j]);
        if (!(err <= 1e-3)) {
            if (bad < 4)
                printf("column %d: got %g, numpy %g\n", j, out[j], td_expected[j]);
            bad++;
        }
        if (!(err <= worst))
            worst = err;
    }
    if (bad != 0) {
        printf("FAIL %d of %d columns differ from numpy (largest error %g)\n", bad, TD_COLS,
               worst);
        return 1;
    }
    printf("PASS %d column sums of a %dx%d float32 tile equal numpy's (largest error %g)\n",
           TD_COLS, TD_ROWS, TD_COLS, worst);
    return 0;
}
