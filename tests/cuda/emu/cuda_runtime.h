/*
 * A CPU stand-in for the CUDA runtime, enough to run the self-checking
 * programs of thread-scope register calls on the host (tests/cuda/emu.py):
 * every block and thread runs one after another, which is exact for code
 * with no barriers, shuffles or shared memory.  Not a CUDA emulator.
 */
#ifndef TD_EMU_CUDA_RUNTIME_H
#define TD_EMU_CUDA_RUNTIME_H
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
typedef dim3 uint3;
static dim3 threadIdx, blockIdx, blockDim, gridDim;

typedef enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 } cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost };
static inline const char *cudaGetErrorName(cudaError_t) { return "emu"; }
static inline const char *cudaGetErrorString(cudaError_t) { return "emu"; }
static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                                     cudaMemcpyKind)
{
    memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *d, int v, size_t n)
{
    memset(d, v, n);
    return cudaSuccess;
}
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

template <typename F> static void td_emu_launch(dim3 g, dim3 b, F f)
{
    gridDim = g;
    blockDim = b;
    for (unsigned bz = 0; bz < g.z; ++bz)
        for (unsigned by = 0; by < g.y; ++by)
            for (unsigned bx = 0; bx < g.x; ++bx)
                for (unsigned tz = 0; tz < b.z; ++tz)
                    for (unsigned ty = 0; ty < b.y; ++ty)
                        for (unsigned tx = 0; tx < b.x; ++tx) {
                            blockIdx = dim3(bx, by, bz);
                            threadIdx = dim3(tx, ty, tz);
                            f();
                        }
}

using std::max;
using std::min;
#endif
