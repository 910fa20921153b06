/*
 * A fake CUDA runtime for checking the copy_async bench's harness
 * (bench/gpu/copy_async/bench_copy_async.cu) on the CPU: device memory is
 * host memory, a kernel launch runs the kernel's loop over the grid at
 * once, events read the host clock.  A fake kernel can leave a sticky
 * error (td_fake_fault) that every later call of the process returns, as
 * a real fault ends a CUDA context: the harness must keep it to the one
 * process that ran the faulty kernel.  TD_FAKE_NO_DEVICE=1 makes the
 * device query fail.  tests/cuda/bench_copy_async.py --harness puts this
 * folder first on the include path, the stand-in float16 of
 * data/bench_async_emu/ after it.
 */
#ifndef TD_BENCH_ASYNC_FAKE_RUNTIME_H
#define TD_BENCH_ASYNC_FAKE_RUNTIME_H
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__

typedef enum {
    cudaSuccess = 0,
    cudaErrorNoDevice = 100,
    cudaErrorMisalignedAddress = 716
} cudaError_t;

static inline const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaSuccess         ? "cudaSuccess"
           : e == cudaErrorNoDevice ? "cudaErrorNoDevice"
                                    : "cudaErrorMisalignedAddress";
}

/* the first fault of the process; every call returns it from then on (one
   variable for every translation unit: the fake kernels are another) */
inline cudaError_t td_fake_sticky = cudaSuccess;
static inline void td_fake_fault(void)
{
    td_fake_sticky = cudaErrorMisalignedAddress;
}

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
static dim3 threadIdx, blockIdx, blockDim, gridDim;
struct uint4 {
    unsigned x, y, z, w;
};

/* NAME<<<G, B>>>(ARGS) becomes td_fake_launch(G, B, NAME, ARGS) */
template <typename K, typename... A>
static inline void td_fake_launch(dim3 g, dim3 b, K kernel, A... args)
{
    gridDim = g, blockDim = b;
    for (unsigned i = 0; i < g.x; ++i)
        for (unsigned t = 0; t < b.x; ++t) {
            blockIdx = dim3(i), threadIdx = dim3(t);
            kernel(args...);
        }
}

struct cudaDeviceProp {
    char name[256];
    int multiProcessorCount;
    size_t sharedMemPerMultiprocessor;
    int l2CacheSize;
};
enum cudaDeviceAttr {
    cudaDevAttrClockRate = 13,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37
};
enum cudaMemcpyKind {
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int)
{
    const char *e = getenv("TD_FAKE_NO_DEVICE");
    if (e && *e == '1')
        return cudaErrorNoDevice;
    memset(p, 0, sizeof *p);
    strcpy(p->name, "fake device");
    p->multiProcessorCount = 2;
    p->sharedMemPerMultiprocessor = 228 << 10;
    p->l2CacheSize = 1 << 20;
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int)
{
    *v = 1000;
    return cudaSuccess;
}
static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    if (td_fake_sticky)
        return td_fake_sticky;
    *p = malloc(n);
    return *p ? cudaSuccess : cudaErrorNoDevice;
}
template <typename T>
static inline cudaError_t cudaMalloc(T **p, size_t n) /* as CUDA's */
{
    return cudaMalloc((void **)p, n);
}
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return td_fake_sticky;
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                                     cudaMemcpyKind)
{
    if (td_fake_sticky)
        return td_fake_sticky;
    memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                          cudaMemcpyKind k, void *)
{
    return cudaMemcpy(d, s, n, k);
}
static inline cudaError_t cudaMemset(void *d, int v, size_t n)
{
    if (td_fake_sticky)
        return td_fake_sticky;
    memset(d, v, n);
    return cudaSuccess;
}
static inline cudaError_t cudaGetLastError(void) { return td_fake_sticky; }
static inline cudaError_t cudaDeviceSynchronize(void) { return td_fake_sticky; }
template <typename K>
static inline cudaError_t cudaFuncSetAttribute(K, cudaFuncAttribute, int)
{
    return td_fake_sticky;
}

typedef struct td_fake_event {
    double ms;
} *cudaEvent_t;
static inline double td_fake_now_ms(void)
{
    using namespace std::chrono;
    return duration<double, std::milli>(
               steady_clock::now().time_since_epoch()).count();
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = new td_fake_event{0};
    return td_fake_sticky;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, void * = 0)
{
    e->ms = td_fake_now_ms();
    return td_fake_sticky;
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t)
{
    return td_fake_sticky;
}
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a,
                                               cudaEvent_t b)
{
    *ms = (float)(b->ms - a->ms);
    return td_fake_sticky;
}
#endif
