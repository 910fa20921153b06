/*
 * A CPU stand-in for the CUDA runtime, enough to run the self-checking
 * programs on the host (tests/cuda/emu.py): each block runs as one host
 * thread per CUDA thread; __syncthreads, __syncwarp, named barriers
 * (bar.sync id, n: released every n arrivals, as the hardware does) and
 * __shfl_xor_sync (each lane waits for its partner's value) and
 * __reduce_max_sync / __reduce_min_sync (through shuffles) are emulated;
 * blocks run one after another, so `__shared__` is a function
 * static and dynamic shared memory one buffer per launch.  __syncwarp waits for every lane of the warp.  Not a CUDA emulator: 16-bit float types are not provided.
 * The float32 / float64 math of the elementwise programs (expf, exp2f,
 * log2f, sqrtf, fmaxf, the __f*_rn intrinsics, ...) is the host's.
 *
 * The no-device path of the programs can be tested with environment
 * variables (tests/cuda/emu.py --paths):
 *   TD_EMU_DEVICES=N             cudaGetDeviceCount reports N devices (default 1);
 *   TD_EMU_DEVICE_ERROR=NAME     cudaGetDeviceCount fails with error NAME;
 *   TD_EMU_LAUNCH_ERROR=NAME     the kernel launch fails with error NAME (the
 *                                kernel does not run; cudaGetLastError says so).
 * NAME is one of the cudaError_t names below (e.g. cudaErrorInsufficientDriver).
 */
#ifndef TD_EMU_CUDA_RUNTIME_H
#define TD_EMU_CUDA_RUNTIME_H
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
typedef dim3 uint3;
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

/* The errors the programs tell apart (values as in CUDA's driver_types.h). */
#define TD_EMU_ERRORS(X)                                                      \
    X(cudaSuccess, 0, "no error")                                             \
    X(cudaErrorMemoryAllocation, 2, "out of memory")                          \
    X(cudaErrorInitializationError, 3, "initialization error")                \
    X(cudaErrorStubLibrary, 34, "CUDA driver is a stub library")              \
    X(cudaErrorInsufficientDriver, 35,                                        \
      "CUDA driver version is insufficient for CUDA runtime version")         \
    X(cudaErrorCallRequiresNewerDriver, 36,                                   \
      "API call is not supported in the installed CUDA driver")               \
    X(cudaErrorDevicesUnavailable, 46, "CUDA-capable device(s) is/are busy "  \
      "or unavailable")                                                       \
    X(cudaErrorNoDevice, 100, "no CUDA-capable device is detected")           \
    X(cudaErrorNoKernelImageForDevice, 209,                                   \
      "no kernel image is available for execution on the device")             \
    X(cudaErrorUnsupportedPtxVersion, 222,                                    \
      "the provided PTX was compiled with an unsupported toolchain.")         \
    X(cudaErrorLaunchFailure, 719, "unspecified launch failure")              \
    X(cudaErrorSystemNotReady, 802, "system not yet initialized")             \
    X(cudaErrorSystemDriverMismatch, 803,                                     \
      "system has unsupported display driver / cuda driver combination")      \
    X(cudaErrorCompatNotSupportedOnDevice, 804,                               \
      "forward compatibility was attempted on non supported HW")

#define TD_EMU_ENUM(n, v, s) n = v,
typedef enum { TD_EMU_ERRORS(TD_EMU_ENUM) } cudaError_t;
#undef TD_EMU_ENUM
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost };
static inline const char *cudaGetErrorName(cudaError_t e)
{
#define TD_EMU_NAME(n, v, s) if (e == n) return #n;
    TD_EMU_ERRORS(TD_EMU_NAME)
#undef TD_EMU_NAME
    return "cudaErrorUnknown";
}
static inline const char *cudaGetErrorString(cudaError_t e)
{
#define TD_EMU_STR(n, v, s) if (e == n) return s;
    TD_EMU_ERRORS(TD_EMU_STR)
#undef TD_EMU_STR
    return "unknown error";
}
/* The error named by environment variable `var`; cudaSuccess when unset.
 * An unknown name aborts: a test that mistypes it must not pass. */
static inline cudaError_t td_emu_env_error(const char *var)
{
    const char *v = getenv(var);
    if (v == NULL || v[0] == '\0')
        return cudaSuccess;
#define TD_EMU_PARSE(n, v_, s) if (strcmp(v, #n) == 0) return n;
    TD_EMU_ERRORS(TD_EMU_PARSE)
#undef TD_EMU_PARSE
    fprintf(stderr, "emu: %s=%s is not a known cudaError_t name\n", var, v);
    abort();
}
static inline cudaError_t cudaGetDeviceCount(int *n)
{
    cudaError_t e = td_emu_env_error("TD_EMU_DEVICE_ERROR");
    if (e != cudaSuccess) {
        *n = 0;
        return e;
    }
    const char *v = getenv("TD_EMU_DEVICES");
    *n = v != NULL && v[0] != '\0' ? atoi(v) : 1;
    return cudaSuccess;
}
static cudaError_t td_emu_last_error = cudaSuccess;
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
static inline cudaError_t cudaGetLastError(void)
{
    cudaError_t e = td_emu_last_error;
    td_emu_last_error = cudaSuccess;
    return e;
}
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

/* Releases every n arrivals (hardware barrier semantics). */
struct td_emu_barrier {
    std::mutex m;
    std::condition_variable cv;
    unsigned n = 0, arrived = 0, gen = 0;
    void wait(unsigned count)
    {
        std::unique_lock<std::mutex> l(m);
        n = count;
        unsigned g = gen;
        if (++arrived >= n) {
            arrived = 0;
            ++gen;
            cv.notify_all();
            return;
        }
        cv.wait(l, [&] { return gen != g; });
    }
};

struct td_emu_block {
    unsigned nthreads = 0;
    td_emu_barrier block;
    std::vector<std::unique_ptr<td_emu_barrier>> warp;
    std::mutex shfl_m;
    std::condition_variable shfl_cv;
    std::vector<std::map<unsigned, unsigned long long>> posted;
    std::mutex named_m;
    std::map<int, std::unique_ptr<td_emu_barrier>> named;
};
static td_emu_block *td_emu_cur;

static inline unsigned td_emu_tid(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static inline unsigned td_emu_warp_size(unsigned w)
{
    unsigned left = td_emu_cur->nthreads - 32 * w;
    return left < 32 ? left : 32;
}
static inline void __syncthreads(void)
{
    td_emu_cur->block.wait(td_emu_cur->nthreads);
}
static inline void __syncwarp(unsigned = 0xffffffffu)
{
    unsigned w = td_emu_tid() / 32;
    td_emu_cur->warp[w]->wait(td_emu_warp_size(w));
}
static inline unsigned __activemask(void) { return 0xffffffffu; }
static inline void td_emu_bar(int id, int n)
{
    td_emu_barrier *b;
    {
        std::lock_guard<std::mutex> l(td_emu_cur->named_m);
        auto &p = td_emu_cur->named[id];
        if (!p)
            p.reset(new td_emu_barrier);
        b = p.get();
    }
    b->wait((unsigned)n);
}
/*
 * Shuffles: lane t posts its value for its k-th shuffle and waits for its
 * partner's k-th value, so lanes that skip a shuffle (inactive in
 * __activemask()) are simply not waited for.  An inactive partner would
 * hang (undefined on hardware too); emu.py runs programs with a timeout.
 */
static thread_local unsigned td_emu_nshfl;
template <typename T>
static T __shfl_xor_sync(unsigned, T v, int lane_mask, int width = 32)
{
    static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle size");
    unsigned t = td_emu_tid(), w = t / 32, lane = t % 32;
    unsigned src = lane ^ (unsigned)lane_mask;
    if (src / (unsigned)width != lane / (unsigned)width ||
        32 * w + src >= td_emu_cur->nthreads)
        src = lane;
    src += 32 * w;
    unsigned k = td_emu_nshfl++;
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T));
    std::unique_lock<std::mutex> l(td_emu_cur->shfl_m);
    td_emu_cur->posted[t][k] = bits;
    td_emu_cur->shfl_cv.notify_all();
    td_emu_cur->shfl_cv.wait(l, [&] {
        return td_emu_cur->posted[src].count(k) != 0;
    });
    bits = td_emu_cur->posted[src][k];
    T r;
    memcpy(&r, &bits, sizeof(T));
    return r;
}

/* Whole-warp integer reductions (redux.sync), through the same five
 * exchanges the shuffles use: every lane of the warp takes part. */
static inline int __reduce_max_sync(unsigned m, int v)
{
    for (int k = 16; k >= 1; k /= 2) {
        int o = __shfl_xor_sync(m, v, k);
        v = o > v ? o : v;
    }
    return v;
}
static inline int __reduce_min_sync(unsigned m, int v)
{
    for (int k = 16; k >= 1; k /= 2) {
        int o = __shfl_xor_sync(m, v, k);
        v = o < v ? o : v;
    }
    return v;
}

/* The launch's dynamic shared memory (16-byte aligned, poisoned). */
static unsigned char *td_emu_dyn_smem;

template <typename F>
static void td_emu_launch(dim3 g, dim3 b, size_t smem, F f)
{
    td_emu_last_error = td_emu_env_error("TD_EMU_LAUNCH_ERROR");
    if (td_emu_last_error != cudaSuccess)
        return;
    std::unique_ptr<unsigned char[]> dyn(new unsigned char[smem + 16]);
    memset(dyn.get(), 0xff, smem + 16);
    td_emu_dyn_smem = dyn.get() + (16 - (uintptr_t)dyn.get() % 16) % 16;
    gridDim = g;
    blockDim = b;
    unsigned n = b.x * b.y * b.z;
    for (unsigned bz = 0; bz < g.z; ++bz)
        for (unsigned by = 0; by < g.y; ++by)
            for (unsigned bx = 0; bx < g.x; ++bx) {
                td_emu_block blk;
                blk.nthreads = n;
                blk.posted.resize(n);
                for (unsigned w = 0; w < (n + 31) / 32; ++w)
                    blk.warp.emplace_back(new td_emu_barrier);
                td_emu_cur = &blk;
                std::vector<std::thread> ts;
                for (unsigned tz = 0; tz < b.z; ++tz)
                    for (unsigned ty = 0; ty < b.y; ++ty)
                        for (unsigned tx = 0; tx < b.x; ++tx)
                            ts.emplace_back([=, &f] {
                                blockIdx = dim3(bx, by, bz);
                                threadIdx = dim3(tx, ty, tz);
                                td_emu_nshfl = 0;
                                f();
                            });
                for (auto &t : ts)
                    t.join();
            }
}

/* The vector types and reinterpretations vector loads and stores use. */
struct uint2 {
    unsigned x, y;
};
struct uint4 {
    unsigned x, y, z, w;
};
static inline uint2 make_uint2(unsigned x, unsigned y)
{
    return uint2{x, y};
}
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w)
{
    return uint4{x, y, z, w};
}
/* Two 64-bit lanes: the 16-byte vectors of float64 and 64-bit integers. */
struct double2 {
    double x, y;
};
struct longlong2 {
    long long x, y;
};
struct ulonglong2 {
    unsigned long long x, y;
};
static inline double2 make_double2(double x, double y)
{
    return double2{x, y};
}
static inline longlong2 make_longlong2(long long x, long long y)
{
    return longlong2{x, y};
}
static inline ulonglong2 make_ulonglong2(unsigned long long x,
                                         unsigned long long y)
{
    return ulonglong2{x, y};
}
static inline unsigned __float_as_uint(float f)
{
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float __uint_as_float(unsigned u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}
static inline int __float_as_int(float f)
{
    int i;
    memcpy(&i, &f, sizeof i);
    return i;
}

/* Above 48 KB of dynamic shared memory the programs opt in. */
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
static inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr,
                                                 int)
{
    *v = 227 * 1024;
    return cudaSuccess;
}
template <typename K>
static inline cudaError_t cudaFuncSetAttribute(K, cudaFuncAttribute, int)
{
    return cudaSuccess;
}

/*
 * Math of the elementwise programs (float32 and float64; the host's libm
 * stands in for CUDA's, whose documented error bounds the tolerances
 * allow).  expf, exp2f, log2f, sqrtf, fmaxf, fminf, fmaf and the double
 * versions come from <cmath>; the device intrinsics are mapped here, each
 * with the rounding its name promises (__expf, __logf, __log2f, __powf and
 * __exp10f by macros: glibc declares, but does not export, functions of
 * those names).
 */
static inline float td_emu_expf(float x) { return expf(x); }
static inline float td_emu_exp10f(float x) { return exp10f(x); }
static inline float td_emu_logf(float x) { return logf(x); }
static inline float td_emu_log2f(float x) { return log2f(x); }
static inline float td_emu_powf(float x, float y) { return powf(x, y); }
#define __expf td_emu_expf
#define __exp10f td_emu_exp10f
#define __logf td_emu_logf
#define __log2f td_emu_log2f
#define __powf td_emu_powf
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __fadd_rn(float x, float y) { return x + y; }
static inline float __fsub_rn(float x, float y) { return x - y; }
static inline float __fmul_rn(float x, float y) { return x * y; }
static inline float __fdiv_rn(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
static inline float __saturatef(float x)
{
    return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
static inline double __dadd_rn(double x, double y) { return x + y; }
static inline double __dmul_rn(double x, double y) { return x * y; }
static inline double __ddiv_rn(double x, double y) { return x / y; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline double __fma_rn(double x, double y, double z) { return fma(x, y, z); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
static inline long long __float2ll_rz(float x) { return (long long)x; }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline int __double2int_rz(double x) { return (int)x; }
static inline float __double2float_rn(double x) { return (float)x; }

using std::max;
using std::min;
#endif
