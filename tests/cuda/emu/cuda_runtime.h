/*
 * A CPU stand-in for the CUDA runtime, enough to run the self-checking
 * programs on the host (tests/cuda/emu.py): each block runs as one host
 * thread per CUDA thread; __syncthreads, __syncwarp, named barriers
 * (bar.sync id, n: released every n arrivals, as the hardware does) and
 * __shfl_xor_sync (each lane waits for its partner's value) and
 * __reduce_max_sync / __reduce_min_sync (through shuffles) are emulated;
 * blocks run one after another (the CTAs of a cluster together: a
 * launch through cudaLaunchKernelEx with the cluster dimension
 * attribute), so `__shared__` is a function static (shared by the CTAs of
 * a cluster: the cluster programs keep every tile in dynamic shared
 * memory) and each block has its own dynamic shared memory.  __syncwarp waits for every lane of the warp.  Not a CUDA emulator: 16-bit
 * floats are storage and conversions only (no 16-bit arithmetic).
 * The float32 / float64 math of the elementwise programs (expf, exp2f,
 * log2f, sqrtf, fmaxf, the __f*_rn intrinsics, ...) is the host's.
 *
 * Asynchronous copies: mbarriers (td_emu_mbar_*), tensor maps (a stand-in
 * CUtensorMap, cuTensorMapEncodeTiled through
 * cudaGetDriverEntryPointByVersion) and TMA loads and stores
 * (td_emu_tma_load / td_emu_tma_store) are at the end of this header,
 * after the warp-level mma.sync (td_emu_mma_*: the warp's 32 lanes meet,
 * each computes its own D registers from all their A, B and C).
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

/* One lane's operands of an mma.sync: A words, B words, C registers. */
struct td_emu_mma_slot {
    unsigned a[4], b[2], c[4];
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
    /* Per thread: the registers it gives its warp's mma.sync (below). */
    std::vector<td_emu_mma_slot> mma;
};
/* The block each host thread runs in (a cluster's CTAs run together, so
 * it is the thread's own). */
static thread_local td_emu_block *td_emu_cur;

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
/* A local array of the emitted body, bounds-checked (emu.py's
 * bound_locals, when the body only subscripts it): an index outside
 * [0, N) aborts, where the GPU would use a register or local slot past
 * it, unseen. */
template <typename T, long long N> struct td_emu_local {
    T v[N];
    T &operator[](long long i)
    {
        if (i < 0 || i >= N) {
            fprintf(stderr, "emu: local array index %lld outside "
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

/* The dynamic shared memory of the thread's block (16 bytes past a
 * 1024-byte boundary, poisoned; each block its own). */
static thread_local unsigned char *td_emu_dyn_smem;

/*
 * A cluster (a launch through cudaLaunchKernelEx with the cluster
 * dimension attribute): its CTAs run together, one host thread per CUDA
 * thread of every CTA, so that they can meet at barrier.cluster and reach
 * each other's shared memory (mapa, the cluster copy, a multicast load).
 * A launch without one runs each block alone, one after another.
 */
struct td_emu_cluster {
    dim3 dims;                            /* CTAs in x, y, z */
    unsigned nthreads = 0;                /* of every CTA */
    size_t smem = 0;                      /* dynamic shared bytes per CTA */
    td_emu_barrier bar;                   /* barrier.cluster */
    std::vector<td_emu_block *> cta;      /* by rank */
    std::vector<unsigned char *> base;    /* their dynamic shared memory */
};
static thread_local td_emu_cluster *td_emu_cl;

template <typename F>
static void td_emu_launch_cluster(dim3 g, dim3 b, size_t smem, dim3 c, F f)
{
    td_emu_last_error = td_emu_env_error("TD_EMU_LAUNCH_ERROR");
    if (td_emu_last_error != cudaSuccess)
        return;
    if (c.x == 0 || c.y == 0 || c.z == 0 || g.x % c.x || g.y % c.y ||
        g.z % c.z) {
        td_emu_last_error = cudaErrorLaunchFailure;
        return;
    }
    gridDim = g;
    blockDim = b;
    const unsigned n = b.x * b.y * b.z, ncta = c.x * c.y * c.z;
    for (unsigned cz = 0; cz < g.z; cz += c.z)
        for (unsigned cy = 0; cy < g.y; cy += c.y)
            for (unsigned cx = 0; cx < g.x; cx += c.x) {
                td_emu_cluster cl;
                cl.dims = c;
                cl.nthreads = n * ncta;
                cl.smem = smem;
                std::vector<std::unique_ptr<td_emu_block>> blks;
                std::vector<std::unique_ptr<unsigned char[]>> dyn;
                for (unsigned r = 0; r < ncta; ++r) {
                    blks.emplace_back(new td_emu_block);
                    td_emu_block &blk = *blks.back();
                    blk.nthreads = n;
                    blk.posted.resize(n);
                    blk.mma.resize(n);
                    for (unsigned w = 0; w < (n + 31) / 32; ++w)
                        blk.warp.emplace_back(new td_emu_barrier);
                    /* 16 bytes past a 1024-byte boundary: the same
                     * offset in every CTA (a multicast lands at one
                     * offset in each, as on the hardware), and no more
                     * than the 16-byte alignment CUDA promises, so a
                     * program must align a swizzled tile itself. */
                    dyn.emplace_back(new unsigned char[smem + 1024 + 16]);
                    memset(dyn.back().get(), 0xff, smem + 1024 + 16);
                    cl.cta.push_back(&blk);
                    cl.base.push_back(dyn.back().get() +
                                      (1024 - (uintptr_t)dyn.back().get() %
                                                  1024) % 1024 + 16);
                }
                std::vector<std::thread> ts;
                for (unsigned r = 0; r < ncta; ++r) {
                    const unsigned bx = cx + r % c.x, by = cy + r / c.x % c.y,
                                   bz = cz + r / (c.x * c.y);
                    for (unsigned tz = 0; tz < b.z; ++tz)
                        for (unsigned ty = 0; ty < b.y; ++ty)
                            for (unsigned tx = 0; tx < b.x; ++tx)
                                ts.emplace_back([=, &f, &cl] {
                                    blockIdx = dim3(bx, by, bz);
                                    threadIdx = dim3(tx, ty, tz);
                                    td_emu_nshfl = 0;
                                    td_emu_cur = cl.cta[r];
                                    td_emu_dyn_smem = cl.base[r];
                                    td_emu_cl = ncta > 1 ? &cl : NULL;
                                    f();
                                });
                }
                for (auto &t : ts)
                    t.join();
            }
}

template <typename F>
static void td_emu_launch(dim3 g, dim3 b, size_t smem, F f)
{
    td_emu_launch_cluster(g, b, smem, dim3(1, 1, 1), f);
}

/* cudaLaunchKernelEx with the cluster dimension attribute (the others are
 * not emulated and fail the launch). */
typedef struct td_emu_stream *cudaStream_t; /* as the bench's stand-in declares it */
enum cudaLaunchAttributeID { cudaLaunchAttributeClusterDimension = 4 };
union cudaLaunchAttributeValue {
    char pad[64];
    struct {
        unsigned x, y, z;
    } clusterDim;
};
struct cudaLaunchAttribute {
    cudaLaunchAttributeID id;
    char pad[8 - sizeof(cudaLaunchAttributeID)];
    cudaLaunchAttributeValue val;
};
struct cudaLaunchConfig_t {
    dim3 gridDim, blockDim;
    size_t dynamicSmemBytes;
    cudaStream_t stream;
    cudaLaunchAttribute *attrs;
    unsigned numAttrs;
};
template <typename... Exp, typename... Act>
static inline cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *cfg,
                                             void (*k)(Exp...), Act &&...args)
{
    dim3 c(1, 1, 1);
    for (unsigned i = 0; i < cfg->numAttrs; ++i) {
        if (cfg->attrs[i].id != cudaLaunchAttributeClusterDimension)
            return cudaErrorLaunchFailure;
        c = dim3(cfg->attrs[i].val.clusterDim.x, cfg->attrs[i].val.clusterDim.y,
                 cfg->attrs[i].val.clusterDim.z);
    }
    td_emu_launch_cluster(cfg->gridDim, cfg->blockDim, cfg->dynamicSmemBytes, c,
                          [&] { k(args...); });
    cudaError_t e = td_emu_last_error;
    td_emu_last_error = cudaSuccess;
    return e;
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

/* ---- Warp-level matrix multiply-accumulate (mma.sync) ------------------ */

/*
 * mma.sync.aligned.m16n8kK.row.col on the stand-in: every lane of a full
 * warp posts its registers, waits for the warp, computes its own D
 * registers from the 32 lanes' registers through the PTX ISA's fragment
 * maps, and waits again before the slots are reused.  Per lane (g = lane /
 * 4, t = lane % 4, kp = 32 / element bits): A word rM + 2*kHi holds row
 * g + 8*rM, columns kp*t + p + 4*kp*kHi (element p < kp from the low
 * bits); B word kHi holds rows kp*t + p + 4*kp*kHi of column g; C / D
 * register 2*rM + rN is row g + 8*rM, column 2*t + rN (float16
 * accumulators: word rM, columns 2*t, 2*t + 1).  Products are exact in
 * float (16-bit and 8-bit floats, tf32); they are summed in float in k
 * order, then C is added (float16: rounded to nearest even once at the
 * end; int32: wrapping).  tf32 operands drop their low 13 mantissa bits.
 * The hardware's order and rounding inside the tensor core may differ in
 * the last bits: exact data is exact on both, random data needs a
 * tolerance.
 */
enum { TD_EMU_AB_F16, TD_EMU_AB_BF16, TD_EMU_AB_TF32, TD_EMU_AB_S8,
       TD_EMU_AB_U8, TD_EMU_AB_E4M3, TD_EMU_AB_E5M2 };
enum { TD_EMU_CD_F32, TD_EMU_CD_F16, TD_EMU_CD_S32 };

static inline float td_emu_bits_f32(unsigned u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/* A 16-bit float's value (exact in float). */
static inline float td_emu_f16_value(unsigned h)
{
    unsigned s = h >> 15 & 1, e = h >> 10 & 31, m = h & 1023;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 1024), (int)e - 25);
    return s ? -v : v;
}
/* float -> float16 bits, round to nearest even (overflow to infinity). */
static inline unsigned td_emu_f16_bits(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    unsigned s = u >> 16 & 0x8000;
    if (std::isnan(f))
        return s | 0x7e00;
    float a = fabsf(f);
    if (a >= 65520.0f)
        return s | 0x7c00;
    if (a < ldexpf(1.0f, -14)) {            /* subnormal: units of 2^-24 */
        float q = nearbyintf(a * 16777216.0f); /* ties to even (default) */
        return s | (unsigned)q;
    }
    int e;
    float fr = frexpf(a, &e);                 /* a = fr * 2^e, fr in [.5, 1) */
    float q = nearbyintf(ldexpf(fr, 11));      /* 11 significant bits */
    if (q >= 2048.0f) {
        q /= 2;
        e++;
    }
    return s | (unsigned)(e + 14) << 10 | ((unsigned)q & 1023);
}
/*
 * 16-bit floats as storage: __half and __nv_bfloat16 hold their bits, and
 * the conversions round to nearest even (float -> float16 through
 * td_emu_f16_bits; float -> bfloat16 on the top 16 bits of the float,
 * NaN kept quiet).  No 16-bit arithmetic: a program whose 16-bit values
 * only move and convert runs (the gemm programs, whose mma reads them as
 * 32-bit words; they define TD_EMU_16BIT_STORAGE, which emu.py looks
 * for), the others stay off the stand-in.
 */
#define TD_EMU_HAS_HALF 1
struct __half {
    unsigned short x;
};
struct __nv_bfloat16 {
    unsigned short x;
};
static inline __half __float2half(float f)
{
    __half h;
    h.x = (unsigned short)td_emu_f16_bits(f);
    return h;
}
static inline __half __float2half_rn(float f) { return __float2half(f); }
static inline float __half2float(__half h) { return td_emu_f16_value(h.x); }
static inline __nv_bfloat16 __float2bfloat16(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    __nv_bfloat16 b;
    if (std::isnan(f))
        b.x = (unsigned short)(u >> 16 | 0x40);
    else
        b.x = (unsigned short)((u + 0x7fffu + (u >> 16 & 1)) >> 16);
    return b;
}
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    return __float2bfloat16(f);
}
static inline float __bfloat162float(__nv_bfloat16 b)
{
    return td_emu_bits_f32((unsigned)b.x << 16);
}
/* An 8-bit float's value: e4m3 (bias 7, no infinity, S.1111.111 NaN) or
 * e5m2 (bias 15, IEEE specials). */
static inline float td_emu_f8_value(unsigned v, bool e4m3)
{
    int mb = e4m3 ? 3 : 2, eb = e4m3 ? 4 : 5, bias = e4m3 ? 7 : 15;
    unsigned s = v >> 7 & 1, e = v >> mb & ((1u << eb) - 1),
             m = v & ((1u << mb) - 1);
    float r;
    if (e4m3 && e == 15 && m == 7)
        r = NAN;
    else if (!e4m3 && e == 31)
        r = m ? NAN : INFINITY;
    else if (e == 0)
        r = ldexpf((float)m, 1 - bias - mb);
    else
        r = ldexpf((float)(m | 1u << mb), (int)e - bias - mb);
    return s ? -r : r;
}
/* float -> 8-bit float bits as CUDA's __nv_fp8_* conversion makes them
 * (__NV_SATFINITE): the nearest finite value, ties to the even code,
 * beyond the largest finite value that value; NaN to the NaN code. */
static inline unsigned td_emu_f8_bits(float f, bool e4m3)
{
    if (std::isnan(f))
        return 0x7f;
    /* Beyond the largest finite value (e4m3 448, e5m2 57344): that value;
     * below it the distances in double are exact. */
    unsigned s = std::signbit(f) ? 0x80 : 0, best = 0;
    const unsigned top = e4m3 ? 0x7e : 0x7b;
    double a = fabs((double)f), bd = INFINITY;
    if (a >= td_emu_f8_value(top, e4m3))
        return s | top;
    for (unsigned v = 0; v < 0x80; v++) {
        float x = td_emu_f8_value(v, e4m3);
        if (std::isnan(x) || std::isinf(x))
            continue;
        double d = fabs((double)x - a);
        if (d < bd || (d == bd && (v & 1) == 0)) {
            bd = d;
            best = v;
        }
    }
    return s | best;
}
/*
 * 8-bit floats as storage, as the 16-bit ones above: __nv_fp8_e4m3 and
 * __nv_fp8_e5m2 hold their bits, built from a float or double (CUDA's
 * explicit constructors: td_emu_f8_bits) and read back as a float.  No
 * arithmetic: the gemm programs (TD_EMU_FP8_STORAGE, which emu.py looks
 * for) only stage them and let the mma read them as words.
 */
#define TD_EMU_FP8_TYPE(name, e4)                                            \
    struct name {                                                            \
        unsigned char __x;                                                   \
        name() = default;                                                    \
        explicit name(float f) : __x((unsigned char)td_emu_f8_bits(f, e4)) {} \
        explicit name(double f) : name((float)f) {}                          \
        explicit operator float() const { return td_emu_f8_value(__x, e4); } \
    };
TD_EMU_FP8_TYPE(__nv_fp8_e4m3, true)
TD_EMU_FP8_TYPE(__nv_fp8_e5m2, false)
#undef TD_EMU_FP8_TYPE
/* Element p of a 32-bit A / B word, as a float (integers exactly). */
static inline float td_emu_mma_elem(int ab, unsigned w, int p)
{
    switch (ab) {
    case TD_EMU_AB_F16:
        return td_emu_f16_value(w >> 16 * p & 0xffff);
    case TD_EMU_AB_BF16:
        return td_emu_bits_f32((w >> 16 * p & 0xffff) << 16);
    case TD_EMU_AB_TF32:
        return td_emu_bits_f32(w & ~0x1fffu);
    case TD_EMU_AB_S8:
        return (float)(signed char)(w >> 8 * p & 0xff);
    case TD_EMU_AB_U8:
        return (float)(w >> 8 * p & 0xff);
    default:
        return td_emu_f8_value(w >> 8 * p & 0xff, ab == TD_EMU_AB_E4M3);
    }
}
static inline int td_emu_mma_bits(int ab)
{
    return ab == TD_EMU_AB_TF32 ? 32 : ab <= TD_EMU_AB_BF16 ? 16 : 8;
}
/*
 * Lane `lane`'s D registers of an m16n8kK product from the 32 lanes'
 * slots of its warp (`w` points at lane 0's): the arithmetic alone, which
 * tests/cuda/emu/mma_sync.cu checks against a plain product.
 */
static inline void td_emu_mma_lane(int k, int ab, int cd,
                                   const td_emu_mma_slot *w, unsigned lane,
                                   unsigned *d)
{
    int kp = 32 / td_emu_mma_bits(ab);
    unsigned g = lane / 4, t = lane % 4;
    float acc[4];
    long long iacc[4];
    for (int r = 0; r < 4; r++) {
        unsigned row = g + 8 * (r / 2), col = 2 * t + r % 2;
        float sum = 0;
        long long isum = 0;
        for (int kk = 0; kk < k; kk++) {
            int kHi = kk / (4 * kp), tt = kk % (4 * kp) / kp, p = kk % kp;
            unsigned aw = w[4 * (row % 8) + tt].a[row / 8 + 2 * kHi];
            unsigned bw = w[4 * col + tt].b[kHi];
            float x = td_emu_mma_elem(ab, aw, p);
            float y = td_emu_mma_elem(ab, bw, p);
            if (cd == TD_EMU_CD_S32)
                isum += (long long)x * (long long)y;
            else
                sum += x * y;
        }
        const td_emu_mma_slot &cl = w[lane];
        if (cd == TD_EMU_CD_S32)
            iacc[r] = isum + (int)cl.c[r];
        else if (cd == TD_EMU_CD_F16)
            acc[r] = sum + td_emu_f16_value(cl.c[r / 2] >> 16 * (r % 2) &
                                            0xffff);
        else
            acc[r] = sum + td_emu_bits_f32(cl.c[r]);
    }
    for (int r = 0; r < 4; r++) {
        if (cd == TD_EMU_CD_S32) {
            d[r] = (unsigned)(unsigned long long)iacc[r];
        } else if (cd == TD_EMU_CD_F32) {
            memcpy(&d[r], &acc[r], 4);
        } else if (r % 2 == 0) {
            d[r / 2] = td_emu_f16_bits(acc[r]) |
                       td_emu_f16_bits(acc[r + 1]) << 16;
        }
    }
}
/* The calling lane's part of the warp's mma.sync (a, b, c, d as the
 * PTX operand lists, 32-bit words). */
static inline void td_emu_mma(int k, int ab, int cd, unsigned *d,
                              const unsigned *a, const unsigned *b,
                              const unsigned *c)
{
    unsigned tid = td_emu_tid(), w = tid / 32;
    if (td_emu_warp_size(w) != 32) {
        fprintf(stderr, "emu: mma.sync in a warp of %u threads\n",
                td_emu_warp_size(w));
        abort();
    }
    int kp = 32 / td_emu_mma_bits(ab);
    int na = 16 * k / kp / 32, nb = 8 * k / kp / 32;
    int nc = cd == TD_EMU_CD_F16 ? 2 : 4;
    td_emu_mma_slot &s = td_emu_cur->mma[tid];
    memcpy(s.a, a, sizeof *a * (size_t)na);
    memcpy(s.b, b, sizeof *b * (size_t)nb);
    memcpy(s.c, c, sizeof *c * (size_t)nc);
    __syncwarp();
    td_emu_mma_lane(k, ab, cd, &td_emu_cur->mma[32 * w], tid % 32, d);
    __syncwarp();
}
/* The functions the printed helpers call (codegen/print_mma.c names them
 * td_emu_ + the helper's name after td_ptx_). */
#define TD_EMU_MMA(shape, types, k, ab, cd)                                  \
    static inline void td_emu_mma_sync_aligned_##shape##_row_col_##types(    \
        unsigned *d, const unsigned *a, const unsigned *b, const unsigned *c) \
    {                                                                        \
        td_emu_mma(k, ab, cd, d, a, b, c);                                   \
    }
TD_EMU_MMA(m16n8k16, f32_bf16_bf16_f32, 16, TD_EMU_AB_BF16, TD_EMU_CD_F32)
TD_EMU_MMA(m16n8k16, f32_f16_f16_f32, 16, TD_EMU_AB_F16, TD_EMU_CD_F32)
TD_EMU_MMA(m16n8k8, f32_bf16_bf16_f32, 8, TD_EMU_AB_BF16, TD_EMU_CD_F32)
TD_EMU_MMA(m16n8k8, f32_f16_f16_f32, 8, TD_EMU_AB_F16, TD_EMU_CD_F32)
TD_EMU_MMA(m16n8k16, f16_f16_f16_f16, 16, TD_EMU_AB_F16, TD_EMU_CD_F16)
TD_EMU_MMA(m16n8k8, f16_f16_f16_f16, 8, TD_EMU_AB_F16, TD_EMU_CD_F16)
TD_EMU_MMA(m16n8k8, f32_tf32_tf32_f32, 8, TD_EMU_AB_TF32, TD_EMU_CD_F32)
TD_EMU_MMA(m16n8k32, s32_s8_s8_s32, 32, TD_EMU_AB_S8, TD_EMU_CD_S32)
TD_EMU_MMA(m16n8k32, s32_u8_u8_s32, 32, TD_EMU_AB_U8, TD_EMU_CD_S32)
TD_EMU_MMA(m16n8k32, f32_e4m3_e4m3_f32, 32, TD_EMU_AB_E4M3, TD_EMU_CD_F32)
TD_EMU_MMA(m16n8k32, f32_e5m2_e5m2_f32, 32, TD_EMU_AB_E5M2, TD_EMU_CD_F32)
#undef TD_EMU_MMA

/* ---- Asynchronous copies: mbarriers, tensor maps, TMA ------------------ */

/* A misuse the hardware would turn into a hang, a fault or garbage:
 * the program stops here with the reason, so that emu.py reports it. */
[[noreturn]] static inline void td_emu_die(const char *what, const void *at)
{
    fprintf(stderr, "emu: %s (at %p)\n", what, at);
    fflush(stderr);
    abort();
}

/* The mbarrier's state in block blk (the thread's own unless a peer CTA
 * of its cluster completes bytes on it). */
static inline td_emu_mbar &td_emu_mbar_get(uint64_t *bar,
                                           td_emu_block *blk = td_emu_cur)
{
    if (blk == NULL)
        td_emu_die("an mbarrier used outside a kernel", bar);
    auto it = blk->mbar.find(bar);
    if (it == blk->mbar.end())
        td_emu_die("mbarrier used before mbarrier.init", bar);
    return it->second;
}
/* Completes the current phase when nothing is pending any more; the
 * caller holds blk's mbar_m. */
static inline void td_emu_mbar_settle(td_emu_mbar &m,
                                      td_emu_block *blk = td_emu_cur)
{
    if (m.pending == 0 && m.tx == 0) {
        ++m.phase;
        m.pending = m.expected;
        blk->mbar_cv.notify_all();
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
/* complete_tx: what a copy does when its bytes have landed, on a
 * barrier of block blk (a cluster copy completes on the peer's).  (The
 * functions a program's prelude declares keep their declared parameters:
 * another overload would make its calls ambiguous.) */
static inline void td_emu_mbar_complete_tx_in(td_emu_block *blk, uint64_t *bar,
                                              unsigned bytes)
{
    if (blk == NULL)
        td_emu_die("an mbarrier used outside a kernel", bar);
    std::lock_guard<std::mutex> l(blk->mbar_m);
    td_emu_mbar &m = td_emu_mbar_get(bar, blk);
    m.tx -= bytes;
    td_emu_mbar_settle(m, blk);
}
static inline void td_emu_mbar_complete_tx(uint64_t *bar, unsigned bytes)
{
    td_emu_mbar_complete_tx_in(td_emu_cur, bar, bytes);
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
static inline void td_emu_tma_load_in(td_emu_block *blk, void *smem,
                                      const CUtensorMap *map, int rank,
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
    td_emu_mbar_complete_tx_in(blk, mbar, (unsigned)bytes);
}
static inline void td_emu_tma_load(void *smem, const CUtensorMap *map, int rank,
                                   const int *coords, uint64_t *mbar)
{
    td_emu_tma_load_in(td_emu_cur, smem, map, rank, coords, mbar);
}

/* ---- Clusters: ids, barrier.cluster, mapa, the cluster copy, multicast -- */

/* %cluster_ctaid.x / .y / .z: the block's place in its cluster (0 in a
 * launch without clusters). */
static inline int td_emu_cluster_ctaid(int axis)
{
    if (td_emu_cl == NULL)
        return 0;
    const dim3 &c = td_emu_cl->dims;
    return (int)(axis == 0 ? blockIdx.x % c.x
                 : axis == 1 ? blockIdx.y % c.y : blockIdx.z % c.z);
}
/* %cluster_ctarank. */
static inline unsigned td_emu_cluster_rank(void)
{
    if (td_emu_cl == NULL)
        return 0;
    const dim3 &c = td_emu_cl->dims;
    return blockIdx.x % c.x + c.x * (blockIdx.y % c.y + c.y * (blockIdx.z % c.z));
}
/* barrier.cluster.arrive.release + wait.acquire: every thread of every
 * CTA of the cluster. */
static inline void td_emu_cluster_sync(void)
{
    if (td_emu_cl == NULL)
        td_emu_die("barrier.cluster outside a cluster launch", NULL);
    td_emu_cl->bar.wait(td_emu_cl->nthreads);
}
/*
 * A shared::cluster address is 32 bits on the hardware, too few for a host
 * pointer: the stand-in's is 0x80000000 | rank << 24 | the byte offset in
 * that CTA's dynamic shared memory (every CTA has the same layout, so
 * mapa keeps the offset and changes the rank).  Only dynamic shared
 * memory is mapped (the programs keep every tile there).
 */
static inline unsigned td_emu_mapa(const void *p, unsigned rank)
{
    if (td_emu_cl == NULL)
        td_emu_die("mapa outside a cluster launch", p);
    const unsigned char *b = td_emu_dyn_smem, *q = (const unsigned char *)p;
    if (q < b || q >= b + td_emu_cl->smem)
        td_emu_die("mapa of an address outside the CTA's dynamic shared "
                   "memory", p);
    if (rank >= td_emu_cl->cta.size())
        td_emu_die("mapa into a CTA rank outside the cluster", p);
    return 0x80000000u | rank << 24 | (unsigned)(q - b);
}
/* The CTA and the host address of a shared::cluster address of `bytes`. */
static inline unsigned char *td_emu_cluster_addr(unsigned a, unsigned bytes,
                                                 td_emu_block **blk)
{
    unsigned rank = a >> 24 & 0x7f, off = a & 0xffffff;
    if (td_emu_cl == NULL || !(a & 0x80000000u) ||
        rank >= td_emu_cl->cta.size() || off + (size_t)bytes > td_emu_cl->smem)
        td_emu_die("a shared::cluster address that mapa did not make", NULL);
    *blk = td_emu_cl->cta[rank];
    return td_emu_cl->base[rank] + off;
}
/* cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes:
 * bytes from this CTA's shared memory to the cluster address dst, then
 * complete_tx on the barrier bar, which must be in the destination's CTA
 * (PTX ISA). */
static inline void td_emu_bulk_s2c(unsigned dst, const void *src,
                                   unsigned bytes, unsigned bar)
{
    if (bytes == 0 || bytes % 16 != 0)
        td_emu_die("cluster copy size not a multiple of 16 bytes", src);
    if ((uintptr_t)src % 16 != 0 || dst % 16 != 0)
        td_emu_die("cluster copy operand not 16-byte aligned", src);
    const unsigned char *s = (const unsigned char *)src;
    if (s < td_emu_dyn_smem || s + bytes > td_emu_dyn_smem + td_emu_cl->smem)
        td_emu_die("cluster copy source outside the CTA's shared memory", src);
    td_emu_block *db, *bb;
    unsigned char *d = td_emu_cluster_addr(dst, bytes, &db);
    uint64_t *m = (uint64_t *)td_emu_cluster_addr(bar, 8, &bb);
    if (db != bb)
        td_emu_die("cluster copy completing on a barrier of another CTA than "
                   "its destination's", src);
    memmove(d, s, bytes);
    td_emu_mbar_complete_tx_in(bb, m, bytes);
}
/* A multicast TMA load: the box into the same offset of every CTA the
 * mask names, each completing on its barrier at the same offset. */
static inline void td_emu_tma_load_multicast(void *smem, const CUtensorMap *map,
                                             int rank, const int *coords,
                                             uint64_t *mbar, unsigned short mask)
{
    if (td_emu_cl == NULL)
        td_emu_die("multicast load outside a cluster launch", smem);
    if (mask == 0 || (mask >> td_emu_cl->cta.size()) != 0)
        td_emu_die("multicast mask names CTA ranks outside the cluster", smem);
    const size_t so = (unsigned char *)smem - td_emu_dyn_smem,
                 mo = (unsigned char *)mbar - td_emu_dyn_smem;
    if (so >= td_emu_cl->smem || mo >= td_emu_cl->smem)
        td_emu_die("multicast operands outside the CTA's dynamic shared "
                   "memory", smem);
    for (unsigned r = 0; r < td_emu_cl->cta.size(); ++r)
        if (mask >> r & 1)
            td_emu_tma_load_in(td_emu_cl->cta[r], td_emu_cl->base[r] + so,
                               map, rank, coords,
                               (uint64_t *)(td_emu_cl->base[r] + mo));
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
