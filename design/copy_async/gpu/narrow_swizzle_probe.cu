/* Where does a TMA load put a box whose inner extent (64 bytes) is narrower
 * than its swizzle span (SWIZZLE_128B)?  The stand-in assumed rows packed at
 * a 64-byte pitch and swizzled by address bits; the H200 disagreed
 * (tests/cuda/gpu-emu-async.sh, 2026-12-02).  This loads a float32 box
 * {16 columns, 16 rows} of a [16, 16] tensor whose element i holds i, into
 * 2048 bytes of 1024-aligned shared memory filled with -1, and prints the
 * shared words in rows of 32 (128 bytes), so the layout can be read off.
 * Also the 32-byte span (SWIZZLE_32B, box {8, 16}) and 64-byte span
 * (SWIZZLE_64B, box {8, 16}: 32 bytes).
 *   nvcc -arch=sm_90a -o p narrow_swizzle_probe.cu -lcuda && ./p */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <stdio.h>
#include <stdint.h>

__global__ void load(const __grid_constant__ CUtensorMap map, float *out, unsigned bytes)
{
    __shared__ __align__(1024) float s[512];
    __shared__ __align__(8) uint64_t bar;
    for (int i = threadIdx.x; i < 512; i += blockDim.x)
        s[i] = -1.0f;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned d = (unsigned)__cvta_generic_to_shared(s);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(b), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(d), "l"(&map), "r"(0), "r"(0), "r"(b) : "memory");
    }
    asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
                 " @!p bra W;\n}" ::"r"(b) : "memory");
    __syncthreads();
    for (int i = threadIdx.x; i < 512; i += blockDim.x)
        out[i] = s[i];
}

int main(void)
{
    PFN_cuTensorMapEncodeTiled_v12000 enc = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&enc,
                                         12000, cudaEnableDefault, &q) != cudaSuccess || !enc) {
        printf("no driver entry point\n");
        return 2;
    }
    float h[256], *g, *o, r[512];
    for (int i = 0; i < 256; i++)
        h[i] = (float)i;
    cudaMalloc(&g, sizeof h);
    cudaMalloc(&o, sizeof r);
    cudaMemcpy(g, h, sizeof h, cudaMemcpyHostToDevice);
    struct { const char *name; CUtensorMapSwizzle sw; unsigned cols; } cases[] = {
        {"SWIZZLE_128B, box 16 cols (64 B) x 16 rows", CU_TENSOR_MAP_SWIZZLE_128B, 16},
        {"SWIZZLE_64B, box 8 cols (32 B) x 16 rows", CU_TENSOR_MAP_SWIZZLE_64B, 8},
        {"SWIZZLE_128B, box 32 cols (128 B) of a [16, 32] x 8 rows", CU_TENSOR_MAP_SWIZZLE_128B, 32},
    };
    for (int c = 0; c < 3; c++) {
        CUtensorMap map;
        unsigned rows = cases[c].cols == 32 ? 8 : 16;
        cuuint64_t dims[2] = {cases[c].cols == 32 ? 32u : 16u, cases[c].cols == 32 ? 8u : 16u};
        cuuint64_t strides[1] = {dims[0] * 4};
        cuuint32_t box[2] = {cases[c].cols, rows}, es[2] = {1, 1};
        CUresult e = enc(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, g, dims, strides, box, es,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, cases[c].sw,
                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        printf("== %s: encode %d\n", cases[c].name, (int)e);
        if (e != CUDA_SUCCESS)
            continue;
        load<<<1, 128>>>(map, o, cases[c].cols * rows * 4u);
        cudaError_t k = cudaDeviceSynchronize();
        if (k != cudaSuccess) {
            printf("kernel: %s\n", cudaGetErrorString(k));
            return 1;
        }
        cudaMemcpy(r, o, sizeof r, cudaMemcpyDeviceToHost);
        for (int row = 0; row < 16; row++) {
            printf("bytes %4d:", row * 128);
            for (int j = 0; j < 32; j++)
                printf(" %3d", (int)r[row * 32 + j]);
            printf("\n");
        }
    }
    return 0;
}
