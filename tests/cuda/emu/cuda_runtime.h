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
 * Asynchronous copies: mbarriers (td_emu_mbar_*), tensor maps (a stand-in
 * CUtensorMap, cuTensorMapEncodeTiled through
 * cudaGetDriverEntryPointByVersion) and TMA loads and stores
 * (td_emu_tma_load / td_emu_tma_store) are at the end of this header.
 * A program's PTX helpers call them from a host branch guarded
 * by TD_EMU (defined here), since nvcc compiles the host side of a
 * __device__ function too:
 *   #ifdef __CUDA_ARCH__  asm ...  #elif defined(TD_EMU)  td_emu_...  #endif
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
#include <chrono>
#include <condition_variable>
#include <cstdarg>
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
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
/* The host branch of a program's PTX helpers may call the td_emu_*
 * functions below. */
#define TD_EMU 1

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

/*
 * One mbarrier's state (PTX ISA "mbarrier"): the arrivals a phase expects,
 * those still pending, the transaction count (bytes expected minus bytes
 * completed; it may go below zero when a copy completes before its
 * expect_tx) and the number of the current phase.  A phase completes when
 * no arrival is pending and the transaction count is zero.
 */
struct td_emu_mbar {
    unsigned expected = 0, pending = 0;
    long long tx = 0;
    unsigned phase = 0;
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
    /* The block's mbarriers by address (below): the 8-byte word
     * itself cannot hold the emulation's state. */
    std::mutex mbar_m;
    std::condition_variable mbar_cv;
    std::map<const void *, td_emu_mbar> mbar;
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
/* A body's own __shared__ array, bounds-checked (emu.py's to_host
 * declares `__shared__ T name[N];` this way when the body only subscripts
 * it): an index outside [0, N) aborts the program (read or written), where
 * the GPU would read or write whatever lies there, unseen. */
template <typename T, long long N> struct td_emu_scratch {
    T v[N];
    T &operator[](long long i)
    {
        if (i < 0 || i >= N) {
            fprintf(stderr, "emu: __shared__ array index %lld outside "
                            "[0, %lld)\n", i, N);
            abort();
        }
        return v[i];
    }
};
/* atomicCAS on an int (the reductions' one-writer check): the host's
 * sequentially consistent compare-exchange; returns the old value. */
static inline int atomicCAS(int *a, int compare, int val)
{
    __atomic_compare_exchange_n(a, &compare, val, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return compare;
}
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

/* ---- Asynchronous copies: mbarriers, tensor maps, TMA ------------------ */

/* A misuse the hardware would turn into a hang, a fault or garbage:
 * the program stops here with the reason, so that emu.py reports it. */
[[noreturn]] static inline void td_emu_die(const char *what, const void *at)
{
    fprintf(stderr, "emu: %s (at %p)\n", what, at);
    fflush(stderr);
    abort();
}

static inline td_emu_mbar &td_emu_mbar_get(uint64_t *bar)
{
    if (td_emu_cur == NULL)
        td_emu_die("an mbarrier used outside a kernel", bar);
    auto it = td_emu_cur->mbar.find(bar);
    if (it == td_emu_cur->mbar.end())
        td_emu_die("mbarrier used before mbarrier.init", bar);
    return it->second;
}
/* Completes the current phase when nothing is pending any more; the
 * caller holds mbar_m. */
static inline void td_emu_mbar_settle(td_emu_mbar &m)
{
    if (m.pending == 0 && m.tx == 0) {
        ++m.phase;
        m.pending = m.expected;
        td_emu_cur->mbar_cv.notify_all();
    }
}
/* mbarrier.init: count arrivals per phase, phase 0, no transactions. */
static inline void td_emu_mbar_init(uint64_t *bar, unsigned count)
{
    if ((uintptr_t)bar % 8 != 0)
        td_emu_die("mbarrier not 8-byte aligned", bar);
    if (count == 0 || count >= (1u << 20))
        td_emu_die("mbarrier.init count must be 1 .. 2^20 - 1", bar);
    std::lock_guard<std::mutex> l(td_emu_cur->mbar_m);
    td_emu_mbar m;
    m.expected = m.pending = count;
    td_emu_cur->mbar[bar] = m;
    *bar = 0; /* the word no longer holds what the program stored */
}
static inline void td_emu_mbar_arrive_locked(uint64_t *bar, long long tx)
{
    td_emu_mbar &m = td_emu_mbar_get(bar);
    m.tx += tx;
    if (m.pending == 0)
        td_emu_die("mbarrier arrival beyond the phase's count", bar);
    --m.pending;
    td_emu_mbar_settle(m);
}
/* mbarrier.arrive.expect_tx: expect `bytes` more, then arrive. */
static inline void td_emu_mbar_arrive_expect_tx(uint64_t *bar, unsigned bytes)
{
    std::lock_guard<std::mutex> l(td_emu_cur->mbar_m);
    td_emu_mbar_arrive_locked(bar, (long long)bytes);
}
/* mbarrier.arrive: one arrival. */
static inline void td_emu_mbar_arrive(uint64_t *bar)
{
    std::lock_guard<std::mutex> l(td_emu_cur->mbar_m);
    td_emu_mbar_arrive_locked(bar, 0);
}
/* mbarrier.expect_tx without an arrival. */
static inline void td_emu_mbar_expect_tx(uint64_t *bar, unsigned bytes)
{
    std::lock_guard<std::mutex> l(td_emu_cur->mbar_m);
    td_emu_mbar_get(bar).tx += bytes;
}
/* complete_tx: what a copy does when its bytes have landed. */
static inline void td_emu_mbar_complete_tx(uint64_t *bar, unsigned bytes)
{
    std::lock_guard<std::mutex> l(td_emu_cur->mbar_m);
    td_emu_mbar &m = td_emu_mbar_get(bar);
    m.tx -= bytes;
    td_emu_mbar_settle(m);
}
/*
 * mbarrier.try_wait.parity: true when the phase with that parity has
 * completed, i.e. the current phase's parity differs.  Like the
 * hardware's it waits a little (here up to 2 ms) before saying no, so
 * that a polling loop does not spin a host thread flat out.
 */
static inline bool td_emu_mbar_try_wait(uint64_t *bar, unsigned parity)
{
    std::unique_lock<std::mutex> l(td_emu_cur->mbar_m);
    td_emu_mbar_get(bar);
    return td_emu_cur->mbar_cv.wait_for(
        l, std::chrono::milliseconds(2), [&] {
            return (td_emu_mbar_get(bar).phase & 1u) != (parity & 1u);
        });
}

/*
 * The driver-API types of tensor maps (cuda.h, cudaTypedefs.h; the stand-in
 * provides them, so a program's `#include <cuda.h>` is dropped by emu.py).
 * Values as in CUDA 13's cuda.h.
 */
typedef uint64_t cuuint64_t;
typedef uint32_t cuuint32_t;
typedef enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_NOT_SUPPORTED = 801
} CUresult;
#define CUDAAPI
#define CU_TENSOR_MAP_NUM_QWORDS 16
typedef struct CUtensorMap_st {
    alignas(64) cuuint64_t opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;
typedef enum {
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    CU_TENSOR_MAP_DATA_TYPE_UINT16,
    CU_TENSOR_MAP_DATA_TYPE_UINT32,
    CU_TENSOR_MAP_DATA_TYPE_INT32,
    CU_TENSOR_MAP_DATA_TYPE_UINT64,
    CU_TENSOR_MAP_DATA_TYPE_INT64,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B,
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B,
    CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B
} CUtensorMapDataType;
typedef enum {
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
    CU_TENSOR_MAP_INTERLEAVE_16B,
    CU_TENSOR_MAP_INTERLEAVE_32B
} CUtensorMapInterleave;
typedef enum {
    CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    CU_TENSOR_MAP_SWIZZLE_32B,
    CU_TENSOR_MAP_SWIZZLE_64B,
    CU_TENSOR_MAP_SWIZZLE_128B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B
} CUtensorMapSwizzle;
typedef enum {
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B
} CUtensorMapL2promotion;
typedef enum {
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
} CUtensorMapFloatOOBfill;
typedef CUresult(CUDAAPI *PFN_cuTensorMapEncodeTiled_v12000)(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
    cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
    const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill);
enum cudaGetDriverEntryPointFlags { cudaEnableDefault = 0 };
enum cudaDriverEntryPointQueryResult {
    cudaDriverEntryPointSuccess = 0,
    cudaDriverEntryPointSymbolNotFound = 1,
    cudaDriverEntryPointVersionNotSufficent = 2
};

/* What the stand-in keeps in a CUtensorMap: the encode's arguments. */
struct td_emu_tmap {
    uint32_t magic;
    uint8_t dtype, rank, interleave, swizzle, l2, oob;
    unsigned char *base;
    uint64_t dims[5], strides[5]; /* strides[0] = element size */
    uint16_t box[5];
    uint8_t estr[5];
};
static_assert(sizeof(td_emu_tmap) <= sizeof(CUtensorMap),
              "the stand-in's map fits a CUtensorMap");
#define TD_EMU_TMAP_MAGIC 0x746d6170u

/* Bytes per element of a data type; 0 for the packed 4- and 6-bit types,
 * which the stand-in does not emulate. */
static inline unsigned td_emu_tmap_esize(unsigned t)
{
    static const unsigned char sz[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    return t < sizeof sz ? sz[t] : 0;
}
static inline bool td_emu_tmap_float(unsigned t)
{
    return t >= CU_TENSOR_MAP_DATA_TYPE_FLOAT16 &&
           t <= CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}
__attribute__((format(printf, 1, 2))) static inline CUresult
td_emu_encode_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "emu: cuTensorMapEncodeTiled: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return CUDA_ERROR_INVALID_VALUE;
}
/*
 * The stand-in cuTensorMapEncodeTiled: checks the limits the driver
 * documents (cuda.h) and keeps the arguments.  A violation returns
 * CUDA_ERROR_INVALID_VALUE (as the driver) and names the limit on stderr.
 */
static CUresult td_emu_encode_tiled(
    CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *gaddr,
    const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *box,
    const cuuint32_t *estr, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    /* The driver encodes into a map 32 bytes off 64-byte alignment (seen
     * on the H200); only the kernel parameter must be aligned. */
    if (map == NULL)
        return td_emu_encode_fail("tensorMap is NULL");
    if ((unsigned)dtype > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
        return td_emu_encode_fail("tensorDataType %u unknown", (unsigned)dtype);
    unsigned es = td_emu_tmap_esize(dtype);
    if (es == 0) {
        fprintf(stderr, "emu: cuTensorMapEncodeTiled: the packed data type %u "
                        "is not emulated\n", (unsigned)dtype);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (rank < 1 || rank > 5)
        return td_emu_encode_fail("tensorRank %u must be 1 .. 5", rank);
    if ((unsigned)il > CU_TENSOR_MAP_INTERLEAVE_32B)
        return td_emu_encode_fail("interleave %u unknown", (unsigned)il);
    if (il != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3)
        return td_emu_encode_fail("tensorRank %u must be >= 3 with "
                                  "interleave", rank);
    unsigned galign = il == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
    if (gaddr == NULL || (uintptr_t)gaddr % galign != 0)
        return td_emu_encode_fail("globalAddress %p must be %u-byte aligned",
                                  gaddr, galign);
    for (unsigned i = 0; i < rank; ++i)
        if (dim[i] == 0 || dim[i] > (1ull << 32))
            return td_emu_encode_fail("globalDim[%u] = %llu must be 1 .. 2^32",
                                      i, (unsigned long long)dim[i]);
    for (unsigned i = 0; i + 1 < rank; ++i) {
        if (stride[i] % galign != 0)
            return td_emu_encode_fail("globalStrides[%u] = %llu must be a "
                                      "multiple of %u", i,
                                      (unsigned long long)stride[i], galign);
        if (stride[i] >= (1ull << 40))
            return td_emu_encode_fail("globalStrides[%u] = %llu must be < 2^40",
                                      i, (unsigned long long)stride[i]);
    }
    for (unsigned i = 0; i < rank; ++i) {
        if (box[i] == 0 || box[i] > 256)
            return td_emu_encode_fail("boxDim[%u] = %u must be 1 .. 256", i,
                                      box[i]);
        if (estr[i] == 0 || estr[i] > 8)
            return td_emu_encode_fail("elementStrides[%u] = %u must be 1 .. 8",
                                      i, estr[i]);
    }
    unsigned long long inner = (unsigned long long)box[0] * es;
    if (il == CU_TENSOR_MAP_INTERLEAVE_NONE && inner % 16 != 0)
        return td_emu_encode_fail("boxDim[0] * element size = %llu bytes "
                                  "must be a multiple of 16", inner);
    if ((unsigned)sw > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
        return td_emu_encode_fail("swizzle %u unknown", (unsigned)sw);
    if (il == CU_TENSOR_MAP_INTERLEAVE_NONE && sw != CU_TENSOR_MAP_SWIZZLE_NONE) {
        unsigned span = sw == CU_TENSOR_MAP_SWIZZLE_32B   ? 32
                        : sw == CU_TENSOR_MAP_SWIZZLE_64B ? 64
                                                          : 128;
        if (inner > span)
            return td_emu_encode_fail("the inner box, %llu bytes, exceeds the "
                                      "%u-byte swizzle span", inner, span);
    }
    if (il == CU_TENSOR_MAP_INTERLEAVE_32B && sw != CU_TENSOR_MAP_SWIZZLE_32B)
        return td_emu_encode_fail("interleave 32B needs swizzle 32B, got %u",
                                  (unsigned)sw);
    if ((unsigned)l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
        return td_emu_encode_fail("l2Promotion %u unknown", (unsigned)l2);
    if ((unsigned)oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        return td_emu_encode_fail("oobFill %u unknown", (unsigned)oob);
    if (oob != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE && !td_emu_tmap_float(dtype))
        return td_emu_encode_fail("oobFill NaN needs a floating-point data "
                                  "type, got %u", (unsigned)dtype);
    td_emu_tmap t;
    memset(&t, 0, sizeof t);
    t.magic = TD_EMU_TMAP_MAGIC;
    t.dtype = (uint8_t)dtype;
    t.rank = (uint8_t)rank;
    t.interleave = (uint8_t)il;
    t.swizzle = (uint8_t)sw;
    t.l2 = (uint8_t)l2;
    t.oob = (uint8_t)oob;
    t.base = (unsigned char *)gaddr;
    t.strides[0] = es;
    for (unsigned i = 0; i < rank; ++i) {
        t.dims[i] = dim[i];
        if (i > 0)
            t.strides[i] = stride[i - 1];
        t.box[i] = (uint16_t)box[i];
        t.estr[i] = (uint8_t)estr[i];
    }
    memset(map, 0, sizeof *map);
    memcpy(map, &t, sizeof t);
    return CUDA_SUCCESS;
}
/* The runtime's way to the driver's entry points (no -lcuda): only
 * cuTensorMapEncodeTiled is there, from version 12000 on. */
static inline cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **fn, unsigned int version, unsigned long long,
    cudaDriverEntryPointQueryResult *status)
{
    *fn = NULL;
    cudaDriverEntryPointQueryResult r = cudaDriverEntryPointSymbolNotFound;
    if (strcmp(symbol, "cuTensorMapEncodeTiled") == 0) {
        r = version >= 12000 ? cudaDriverEntryPointSuccess
                             : cudaDriverEntryPointVersionNotSufficent;
        if (r == cudaDriverEntryPointSuccess)
            *fn = (void *)&td_emu_encode_tiled;
    }
    if (status != NULL)
        *status = r;
    return cudaSuccess;
}

/* The driver's own entry point (cuda.h, linked with -lcuda on a GPU
 * machine), which the encode functions `tiledispatch tensor-maps` prints
 * call by name: the same stand-in. */
static inline CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *gaddr,
    const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *box,
    const cuuint32_t *estr, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    return td_emu_encode_tiled(map, dtype, rank, gaddr, dim, stride, box,
                               estr, il, sw, l2, oob);
}

static inline const td_emu_tmap *td_emu_tmap_of(const CUtensorMap *map,
                                               int rank)
{
    const td_emu_tmap *t = (const td_emu_tmap *)(const void *)map;
    if (t->magic != TD_EMU_TMAP_MAGIC)
        td_emu_die("a tensor map that cuTensorMapEncodeTiled did not write",
                   map);
    if (rank != t->rank)
        td_emu_die("the instruction's rank differs from the tensor map's",
                   map);
    if (t->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE ||
        t->swizzle > CU_TENSOR_MAP_SWIZZLE_128B)
        td_emu_die("interleaved maps and the 128B_ATOM swizzles are not "
                   "emulated", map);
    return t;
}
/*
 * The shared address a box byte lands at: the swizzle modes move 16-byte
 * chunks by address bits (PTX ISA, tensor swizzling modes; CUTLASS's
 * Swizzle<B, 4, 3>): bits [4, 4 + B) of the address XOR bits [7, 7 + B),
 * B = 1, 2, 3 for the 32-, 64- and 128-byte spans, i.e. the chunk index
 * within a span XOR the index of the 128-byte row, modulo the number of
 * chunks.  The hardware applies it to the shared address, so the bits
 * are those of the address, not of the offset within the box (a buffer
 * placed off its 2^B * 128-byte boundary is swizzled differently).
 */
static inline unsigned char *td_emu_swizzle(unsigned char *p, unsigned sw)
{
    if (sw == CU_TENSOR_MAP_SWIZZLE_NONE)
        return p;
    uintptr_t a = (uintptr_t)p, mask = ((uintptr_t)1 << sw) - 1;
    return (unsigned char *)(a ^ (((a >> 7) & mask) << 4));
}
/* Walks the box of a map at coords: calls f(shared byte pointer, global
 * element pointer or NULL when out of bounds) per element; returns the
 * box's bytes. */
template <typename F>
static unsigned long long td_emu_box_walk(const td_emu_tmap *t,
                                          unsigned char *smem,
                                          const int *coords, F f)
{
    unsigned n[5] = {1, 1, 1, 1, 1};
    unsigned long long total = 1;
    for (unsigned i = 0; i < t->rank; ++i) {
        /* elementStrides[0] is ignored without interleave. */
        unsigned s = i == 0 ? 1 : t->estr[i];
        n[i] = (t->box[i] + s - 1) / s;
        total *= n[i];
    }
    unsigned es = (unsigned)t->strides[0];
    /* A box row narrower than the swizzle span still takes a whole span
     * in shared memory (seen on the H200: a 64-byte row under SWIZZLE_128B
     * lands at a 128-byte pitch, then swizzled by address;
     * design/copy_async/gpu/narrow_swizzle_probe.cu); the transaction
     * bytes are the box's, not the padded ones. */
    unsigned long long pitch = (unsigned long long)n[0] * es;
    if (t->swizzle != CU_TENSOR_MAP_SWIZZLE_NONE &&
        pitch < (16ull << t->swizzle))
        pitch = 16ull << t->swizzle;
    for (unsigned long long lin = 0; lin < total; ++lin) {
        unsigned long long r = lin;
        bool in = true;
        unsigned char *g = t->base;
        for (unsigned i = 0; i < t->rank; ++i) {
            unsigned k = (unsigned)(r % n[i]);
            r /= n[i];
            long long x = (long long)coords[i] +
                          (long long)k * (i == 0 ? 1 : t->estr[i]);
            if (x < 0 || (unsigned long long)x >= t->dims[i])
                in = false;
            else
                g += (unsigned long long)x * t->strides[i];
        }
        f(td_emu_swizzle(smem + lin / n[0] * pitch + lin % n[0] * es,
                         t->swizzle),
          in ? g : NULL);
    }
    return total * es;
}
/*
 * cp.async.bulk.tensor global -> shared: copies the box at coords (CUDA
 * order, innermost first) into smem, out-of-bounds elements zero (or a
 * NaN with the float OOB fill), swizzled by address; then completes the
 * box's bytes on the mbarrier.  The copy is done when this returns, so a
 * missing wait is not caught here (the GPU run must).
 */
static inline void td_emu_tma_load(void *smem, const CUtensorMap *map, int rank,
                                   const int *coords, uint64_t *mbar)
{
    const td_emu_tmap *t = td_emu_tmap_of(map, rank);
    if ((uintptr_t)smem % 128 != 0)
        td_emu_die("TMA shared destination not 128-byte aligned", smem);
    unsigned es = (unsigned)t->strides[0];
    unsigned char nan[8] = {0};
    if (t->oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) {
        if (es == 2)
            memcpy(nan, t->dtype == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                            ? "\xc0\x7f" : "\x00\x7e", 2);
        else if (es == 4)
            memcpy(nan, "\x00\x00\xc0\x7f", 4);
        else
            memcpy(nan, "\x00\x00\x00\x00\x00\x00\xf8\x7f", 8);
    }
    unsigned long long bytes = td_emu_box_walk(
        t, (unsigned char *)smem, coords,
        [&](unsigned char *s, const unsigned char *g) {
            memcpy(s, g != NULL ? g : nan, es);
        });
    td_emu_mbar_complete_tx(mbar, (unsigned)bytes);
}

/* prefetch.tensormap: nothing to fetch, but the map must be one the
 * encoder wrote. */
static inline void td_emu_prefetch_tensormap(const CUtensorMap *map)
{
    if (((const td_emu_tmap *)(const void *)map)->magic != TD_EMU_TMAP_MAGIC)
        td_emu_die("prefetch of a tensor map that cuTensorMapEncodeTiled did "
                   "not write", map);
}
/* The fences and the bulk groups: the stand-in's copies are complete and
 * visible when issued, so there is nothing to order or wait for. */
static inline void td_emu_fence_proxy_async(void) {}
static inline void td_emu_fence_mbarrier_init(void) {}
static inline void td_emu_bulk_commit_group(void) {}
static inline void td_emu_bulk_wait_group_read(int) {}

/* The reduce operations of cp.reduce.async.bulk.tensor (0: a plain
 * store), in the PTX ISA's order. */
enum {
    TD_EMU_RED_NONE = 0,
    TD_EMU_RED_ADD,
    TD_EMU_RED_MIN,
    TD_EMU_RED_MAX,
    TD_EMU_RED_INC,
    TD_EMU_RED_DEC,
    TD_EMU_RED_AND,
    TD_EMU_RED_OR,
    TD_EMU_RED_XOR
};
template <typename T>
static inline T td_emu_red(int op, T old, T v, bool is_float)
{
    switch (op) {
    case TD_EMU_RED_ADD:
        return (T)(old + v);
    case TD_EMU_RED_MIN:
        return v < old ? v : old;
    case TD_EMU_RED_MAX:
        return v > old ? v : old;
    default:
        break;
    }
    if (is_float)
        td_emu_die("a bitwise or inc/dec reduction of floats", NULL);
    return (T)0;
}
template <typename T>
static inline T td_emu_red_bits(int op, T old, T v)
{
    switch (op) {
    case TD_EMU_RED_INC:
        return old >= v ? (T)0 : (T)(old + 1);
    case TD_EMU_RED_DEC:
        return old == 0 || old > v ? v : (T)(old - 1);
    case TD_EMU_RED_AND:
        return old & v;
    case TD_EMU_RED_OR:
        return old | v;
    case TD_EMU_RED_XOR:
        return old ^ v;
    default:
        return td_emu_red(op, old, v, false);
    }
}
/* One element of a reduction: old at g, v at s, by the map's data type. */
static inline void td_emu_red_elem(int op, unsigned dtype, unsigned char *g,
                                   const unsigned char *s)
{
#define TD_EMU_RED_INT(T)                                                      \
    {                                                                          \
        T a, b;                                                                \
        memcpy(&a, g, sizeof a);                                               \
        memcpy(&b, s, sizeof b);                                               \
        a = td_emu_red_bits<T>(op, a, b);                                      \
        memcpy(g, &a, sizeof a);                                               \
        return;                                                                \
    }
#define TD_EMU_RED_FLT(T)                                                      \
    {                                                                          \
        T a, b;                                                                \
        memcpy(&a, g, sizeof a);                                               \
        memcpy(&b, s, sizeof b);                                               \
        a = td_emu_red<T>(op, a, b, true);                                     \
        memcpy(g, &a, sizeof a);                                               \
        return;                                                                \
    }
    if ((op == TD_EMU_RED_INC || op == TD_EMU_RED_DEC) &&
        dtype != CU_TENSOR_MAP_DATA_TYPE_UINT32)
        td_emu_die("inc/dec reductions are defined for 32-bit unsigned only",
                   g);
    switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: TD_EMU_RED_INT(uint8_t)
    case CU_TENSOR_MAP_DATA_TYPE_UINT16: TD_EMU_RED_INT(uint16_t)
    case CU_TENSOR_MAP_DATA_TYPE_UINT32: TD_EMU_RED_INT(uint32_t)
    case CU_TENSOR_MAP_DATA_TYPE_INT32: TD_EMU_RED_INT(int32_t)
    case CU_TENSOR_MAP_DATA_TYPE_UINT64: TD_EMU_RED_INT(uint64_t)
    case CU_TENSOR_MAP_DATA_TYPE_INT64: TD_EMU_RED_INT(int64_t)
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: TD_EMU_RED_FLT(float)
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: TD_EMU_RED_FLT(double)
    default:
        td_emu_die("reductions of 16-bit floats and tf32 are not emulated", g);
    }
#undef TD_EMU_RED_INT
#undef TD_EMU_RED_FLT
}
/*
 * cp[.reduce].async.bulk.tensor shared -> global: reads the box from smem
 * through the swizzle and writes (or reduces into) the global elements
 * inside the bounds; those outside are dropped, as the hardware clips.
 * Done when it returns: the bulk commit/wait that follow are no-ops.
 */
static inline void td_emu_tma_store(const CUtensorMap *map, int rank,
                                    const int *coords, const void *smem,
                                    int reduce_op)
{
    const td_emu_tmap *t = td_emu_tmap_of(map, rank);
    if ((uintptr_t)smem % 128 != 0)
        td_emu_die("TMA shared source not 128-byte aligned", smem);
    if (reduce_op < TD_EMU_RED_NONE || reduce_op > TD_EMU_RED_XOR)
        td_emu_die("unknown TMA reduce operation", smem);
    unsigned es = (unsigned)t->strides[0];
    td_emu_box_walk(t, (unsigned char *)smem, coords,
                    [&](unsigned char *s, unsigned char *g) {
                        if (g == NULL)
                            return;
                        if (reduce_op == TD_EMU_RED_NONE)
                            memcpy(g, s, es);
                        else
                            td_emu_red_elem(reduce_op, t->dtype, g, s);
                    });
}
#endif
