/*
 * Two hardware facts the copy_async plan (design/copy_async/plan.md, §4 A4 and
 * A6) rests on, checked on an sm_90 GPU.  Also a working prototype of the
 * host-side tensor-map encode through the runtime's driver entry point (no
 * -lcuda), the mbarrier protocol of a TMA load and a two-CTA cluster copy.
 *
 * 1. swizzle: a float32 [64, 32] tile is loaded by TMA with SWIZZLE_128B; the
 *    program reports whether the shared-memory placement equals TVM's layout
 *    ComposeLayout(2, 3, 3) (16-byte chunks) or ComposeLayout(3, 3, 3)
 *    (32-byte chunks), which TVM encodes identically (defect A6).
 * 2. dsmem: CTA 0 of a cluster of two copies 1 KB of its shared memory into
 *    CTA 1 with cp.async.bulk.shared::cluster, the destination and barrier
 *    mapped (a) with mapa.shared::cluster.u32 (the plan's form) and (b) with
 *    mapa.u64 on generic addresses truncated to 32 bits (TVM's form, A4).
 *
 * Build and run: nvcc -arch=sm_90a -Werror all-warnings -o async_facts async_facts.cu && ./async_facts
 * Prints one line per check ("swizzle: ...", "dsmem u32: ...", "dsmem u64-truncated: ...").
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#define CK(x)                                                                      \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, \
                   __LINE__, cudaGetErrorString(e_));                              \
            return 1;                                                              \
        }                                                                          \
    } while (0)

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}
/* Waits for the phase with the given parity; gives up after a bounded spin so
 * that a copy that never completes reports instead of hanging. */
__device__ __forceinline__ int mbar_wait(uint32_t bar, uint32_t parity) {
    for (long i = 0; i < (1L << 24); ++i) {
        uint32_t done;
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
        if (done) return 1;
    }
    return 0;
}
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void fence_mbar_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}
__device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* ---- 1. the swizzle of a float32 tile under SWIZZLE_128B ---------------- */

__global__ void tma_swizzle_kernel(const __grid_constant__ CUtensorMap map, float *out, int *ok) {
    __shared__ __align__(1024) float tile[64 * 32];
    __shared__ __align__(8) uint64_t bar;
    uint32_t b = smem_u32(&bar);
    if (threadIdx.x == 0) {
        mbar_init(b, 1);
        fence_proxy_async();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_expect_tx(b, sizeof(tile));
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_u32(tile)),
            "l"(&map), "r"(0), "r"(0), "r"(b)
            : "memory");
    }
    int done = mbar_wait(b, 0);
    if (threadIdx.x == 0) *ok = done;
    __syncthreads();
    for (int k = threadIdx.x; k < 64 * 32; k += blockDim.x) out[k] = tile[k];
}

/* TVM's ComposeLayout(p, s, a) with swizzle_inner: element offset x keeps its
 * bits but XORs bits [p, p+s) with bits [p+a, p+a+s). */
static int swz(int x, int p, int s, int a) {
    int mask = ((1 << s) - 1) << (p + a);
    return x ^ ((x & mask) >> a);
}

static int check_swizzle(void) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000,
                                        cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !encode) {
        printf("swizzle: SKIP (no cuTensorMapEncodeTiled entry point)\n");
        return 0;
    }
    std::vector<float> h(64 * 32);
    for (int i = 0; i < 64 * 32; ++i) h[i] = (float)i;
    float *A, *out;
    int *ok;
    CK(cudaMalloc(&A, h.size() * 4));
    CK(cudaMalloc(&out, h.size() * 4));
    CK(cudaMalloc(&ok, sizeof(int)));
    CK(cudaMemcpy(A, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    CUtensorMap map;
    const cuuint64_t dims[2] = {32, 64};
    const cuuint64_t strides[1] = {32 * 4};
    const cuuint32_t box[2] = {32, 64};
    const cuuint32_t estr[2] = {1, 1};
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, A, dims, strides, box, estr,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("swizzle: encode failed (CUresult %d)\n", (int)r);
        return 1;
    }
    tma_swizzle_kernel<<<1, 128>>>(map, out, ok);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> got(h.size());
    int done = 0;
    CK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&done, ok, sizeof(int), cudaMemcpyDeviceToHost));
    int m233 = 0, m333 = 0, mplain = 0;
    for (int x = 0; x < 64 * 32; ++x) {
        m233 += got[swz(x, 2, 3, 3)] == (float)x;
        m333 += got[swz(x, 3, 3, 3)] == (float)x;
        mplain += got[x] == (float)x;
    }
    printf("swizzle: mbarrier %s; of 2048 elements, ComposeLayout(2,3,3) places %d, "
           "ComposeLayout(3,3,3) places %d, no swizzle %d\n",
           done ? "completed" : "TIMED OUT", m233, m333, mplain);
    CK(cudaFree(A));
    CK(cudaFree(out));
    CK(cudaFree(ok));
    return 0;
}

/* ---- 2. a cluster copy with the two ways of mapping addresses ------------ */

__global__ void __cluster_dims__(2, 1, 1) dsmem_kernel(float *out, int truncated_u64, int *ok) {
    __shared__ __align__(128) float src[256];
    __shared__ __align__(128) float dst[256];
    __shared__ __align__(8) uint64_t bar;
    uint32_t rank = cluster_rank();
    uint32_t b = smem_u32(&bar);
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        src[k] = rank == 0 ? (float)(k + 1) : -1.0f;
        dst[k] = -2.0f;
    }
    if (threadIdx.x == 0) {
        mbar_init(b, 1);
        fence_mbar_init();
    }
    fence_proxy_async();
    cluster_sync();
    if (rank == 1 && threadIdx.x == 0) mbar_expect_tx(b, sizeof(dst));
    cluster_sync();
    if (rank == 0 && threadIdx.x == 0) {
        uint32_t rdst, rbar;
        if (truncated_u64) {
            uint64_t d, m;
            asm volatile("mapa.u64 %0, %1, %2;" : "=l"(d) : "l"(dst), "r"(1u));
            asm volatile("mapa.u64 %0, %1, %2;" : "=l"(m) : "l"(&bar), "r"(1u));
            rdst = (uint32_t)d;
            rbar = (uint32_t)m;
        } else {
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rdst) : "r"(smem_u32(dst)), "r"(1u));
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(b), "r"(1u));
        }
        asm volatile(
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
            ::"r"(rdst), "r"(smem_u32(src)), "r"((uint32_t)sizeof(src)), "r"(rbar)
            : "memory");
    }
    if (rank == 1) {
        int done = mbar_wait(b, 0);
        if (threadIdx.x == 0) *ok = done;
        for (int k = threadIdx.x; k < 256; k += blockDim.x) out[k] = dst[k];
    }
    cluster_sync();
}

static int check_dsmem(int truncated_u64) {
    float *out;
    int *ok;
    CK(cudaMalloc(&out, 256 * 4));
    CK(cudaMalloc(&ok, sizeof(int)));
    CK(cudaMemset(out, 0, 256 * 4));
    CK(cudaMemset(ok, 0, sizeof(int)));
    dsmem_kernel<<<2, 32>>>(out, truncated_u64, ok);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    const char *name = truncated_u64 ? "dsmem u64-truncated" : "dsmem u32";
    if (e != cudaSuccess) {
        printf("%s: kernel failed: %s (%s)\n", name, cudaGetErrorName(e), cudaGetErrorString(e));
        return 1;
    }
    float got[256];
    int done = 0;
    CK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&done, ok, sizeof(int), cudaMemcpyDeviceToHost));
    int right = 0;
    for (int k = 0; k < 256; ++k) right += got[k] == (float)(k + 1);
    printf("%s: mbarrier %s; %d of 256 elements arrived\n", name,
           done ? "completed" : "TIMED OUT", right);
    CK(cudaFree(out));
    CK(cudaFree(ok));
    return 0;
}

int main(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    int rc = check_swizzle();
    rc |= check_dsmem(0);
    /* Last: a fault here poisons the context, so nothing may follow it. */
    rc |= check_dsmem(1);
    return rc;
}
