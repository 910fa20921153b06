/*
 * GPU benchmark: CTA-scope float32 row reductions of a shared-memory tile
 * A[R][C] into a shared vector B[R] (the shape of a softmax row max / row
 * sum), every implementation side by side in one run:
 *
 *   shared   the `shared` variant's emitted body   (bench_gen.cuh, generated)
 *   default  the default variant's emitted body    (bench_gen.cuh, generated)
 *   cub      cub::WarpReduce over logical warps (cub::BlockReduce when a
 *            row needs more than a warp), 16-byte loads
 *   ref      the hand-tuned reference below
 *   floor    the shared-memory bandwidth floor: R*C*4 bytes at 128 B per
 *            SM clock, at the SM clock measured during the run
 *
 * Two modes: `full` fills every SM with as many blocks as fit (ns per tile
 * per SM = elapsed / tiles * SMs), `one` runs one block per SM (ns per
 * tile = the latency of one reduction).  Each block stages a random tile
 * into shared memory once and reduces it `iters` times; the time is the
 * difference between runs of 2N and N iterations (launch and staging
 * cancel), the median of 5.  Before timing, every implementation's result
 * is checked against a double-precision reference on poisoned output.
 *
 * Built and run by bench/gpu/run.sh.  Built with -DBENCH_SWEEP,
 * `bench_reduce --sweep` times the reference at every group size instead.
 */
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include "bench_gen.cuh"

#define CK(expr)                                                           \
    do {                                                                   \
        cudaError_t e_ = (expr);                                           \
        if (e_ != cudaSuccess) {                                           \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n",                \
                    cudaGetErrorName(e_), __FILE__, __LINE__, #expr);      \
            exit(3);                                                       \
        }                                                                  \
    } while (0)

enum { OP_SUM = 0, OP_MAX = 1, OP_MIN = 2 };

template <int OP> struct Op {
    __device__ __forceinline__ static float id()
    {
        return OP == OP_SUM ? 0.0f : OP == OP_MAX ? -FLT_MAX : FLT_MAX;
    }
    __device__ __forceinline__ static float f(float a, float b)
    {
        return OP == OP_SUM ? a + b : OP == OP_MAX ? fmaxf(a, b) : fminf(a, b);
    }
    __device__ __forceinline__ float operator()(float a, float b) const
    {
        return f(a, b);
    }
};

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
__host__ __device__ constexpr int p2ceil(int x) { return x <= 1 ? 1 : 2 * p2ceil((x + 1) / 2); }
__host__ __device__ constexpr int p2floor(int x) { return x < 2 ? 1 : 2 * p2floor(x / 2); }
__host__ __device__ constexpr int cmin(int a, int b) { return a < b ? a : b; }
__host__ __device__ constexpr int cmax(int a, int b) { return a > b ? a : b; }

/*
 * The hand-tuned reference.  G threads per row, a power of two: enough
 * groups to keep 4 warps busy (one per SM sub-partition), at most 32
 * accesses per thread per row, no more than a warp unless a thread would
 * pass 32 accesses, at most one access per thread (the sweep,
 * `bench_reduce --sweep`, times every G).  Each thread reads its accesses
 * lane, lane + G, ... with VEC-element loads (16 bytes by default), XOR-
 * swizzled by (row * G) mod NB when G < NB (NB accesses per 128-byte bank
 * line), so that the lanes of one shared-memory phase hit different banks;
 * two accumulators; XOR shuffles within the G lanes; when G > 32 each
 * warp's partial goes to a small shared scratch and one thread per row
 * combines them after one barrier.
 */
__host__ __device__ constexpr int ref_g0(int R, int C, int T)
{
    return cmax(p2ceil(cdiv(cmin(T, 128), R)), p2ceil(cdiv(C / 4, 32)));
}
__host__ __device__ constexpr int ref_g(int R, int C, int T)
{
    /* no more than a warp unless a thread would pass 32 accesses */
    return cmin(cmin(ref_g0(R, C, T) > 32 && p2ceil(cdiv(C / 4, 32)) <= 32
                         ? 32 : ref_g0(R, C, T),
                     p2floor(C / 4)),
                p2floor(T));
}

template <int R, int C, int T, int OP, int G_ = ref_g(R, C, T), int VEC = 4>
struct Ref {
    static constexpr int Q = C / VEC;
    static constexpr int G = G_;
    static constexpr int NG = T / G;
    static constexpr int K = cdiv(Q, G);
    static constexpr int RPG = cdiv(R, NG);
    static constexpr int W = G > 32 ? G / 32 : 1;
    static constexpr int NB = 32 / VEC;
    static_assert(C % VEC == 0 && (VEC == 1 || VEC == 4), "VEC 1 or 4");

    __device__ __forceinline__ static float load(const float *A, int row,
                                                 int c)
    {
        if constexpr (VEC == 4) {
            const float4 v = reinterpret_cast<const float4 *>(A)[row * Q + c];
            return Op<OP>::f(Op<OP>::f(v.x, v.y), Op<OP>::f(v.z, v.w));
        } else {
            return A[row * Q + c];
        }
    }

    __device__ __forceinline__ static void run(float *A, float *B)
    {
        __shared__ float scratch[G > 32 ? R * W : 1];
        const int tid = threadIdx.x;
        const int lane = tid % G, grp = tid / G;
#pragma unroll
        for (int i = 0; i < RPG; ++i) {
            const int row = i * NG + grp;
            float a0 = Op<OP>::id(), a1 = Op<OP>::id();
            if (grp < NG && row < R) {
                const int sw = (G < NB && Q % NB == 0) ? (row * G) & (NB - 1)
                                                       : 0;
                /* batches of 8: every load in flight before the first
                 * add waits */
                constexpr int BT = K < 8 ? K : 8;
#pragma unroll
                for (int k0 = 0; k0 < K; k0 += BT) {
                    float t[BT];
#pragma unroll
                    for (int u = 0; u < BT; ++u) {
                        const int c = lane + (k0 + u) * G;
                        t[u] = (K * G == Q || c < Q) && k0 + u < K
                                   ? load(A, row, c ^ sw) : Op<OP>::id();
                    }
#pragma unroll
                    for (int u = 0; u < BT; ++u) {
                        if (u & 1)
                            a1 = Op<OP>::f(a1, t[u]);
                        else
                            a0 = Op<OP>::f(a0, t[u]);
                    }
                }
            }
            /* a warp without rows skips the shuffles */
            const int wfirst = G >= 32 ? row : i * NG + (tid / 32) * (32 / G);
            if (G >= 32 ? !(grp < NG && row < R) : wfirst >= R)
                continue;
            float a = Op<OP>::f(a0, a1);
#pragma unroll
            for (int m = cmin(G, 32) / 2; m >= 1; m >>= 1)
                a = Op<OP>::f(a, __shfl_xor_sync(0xffffffffu, a, m));
            if (G <= 32) {
                if (lane == 0 && row < R)
                    B[row] = a;
            } else if (tid % 32 == 0 && row < R) {
                scratch[row * W + lane / 32] = a;
            }
        }
        if (G > 32) {
            __syncthreads();
            for (int r = tid; r < R; r += T) {
                float a = scratch[r * W];
#pragma unroll
                for (int w = 1; w < W; ++w)
                    a = Op<OP>::f(a, scratch[r * W + w]);
                B[r] = a;
            }
        }
        __syncthreads();
    }
};

/*
 * CUB: logical warps of LW = min(32, C/4) lanes, one row per logical warp
 * at a time, 16-byte loads, cub::WarpReduce; when there are fewer rows
 * than warps, cub::BlockReduce over the whole block, one row at a time.
 */
template <int R, int C, int T, int OP> struct Cub {
    static constexpr int Q = C / 4;
    static constexpr int LW = cmax(1, cmin(32, p2floor(Q)));
    static constexpr bool BLOCK = R * 32 < T;
    static constexpr int NLW = T / LW;

    __device__ __forceinline__ static void run(float *A, float *B)
    {
        const float4 *A4 = reinterpret_cast<const float4 *>(A);
        const int tid = threadIdx.x;
        if constexpr (BLOCK) {
            using BR = cub::BlockReduce<float, T>;
            __shared__ typename BR::TempStorage tmp;
            for (int r = 0; r < R; ++r) {
                float a = Op<OP>::id();
                for (int c = tid; c < Q; c += T) {
                    const float4 v = A4[r * Q + c];
                    a = Op<OP>::f(a, Op<OP>::f(Op<OP>::f(v.x, v.y),
                                               Op<OP>::f(v.z, v.w)));
                }
                a = BR(tmp).Reduce(a, Op<OP>());
                if (tid == 0)
                    B[r] = a;
                __syncthreads();
            }
        } else {
            using WR = cub::WarpReduce<float, LW>;
            __shared__ typename WR::TempStorage tmp[NLW];
            const int lw = tid / LW, lane = tid % LW;
            for (int i = 0; i < cdiv(R, NLW); ++i) {
                const int r = i * NLW + lw;
                float a = Op<OP>::id();
                if (r < R)
                    for (int c = lane; c < Q; c += LW) {
                        const float4 v = A4[r * Q + c];
                        a = Op<OP>::f(a, Op<OP>::f(Op<OP>::f(v.x, v.y),
                                                   Op<OP>::f(v.z, v.w)));
                    }
                a = WR(tmp[lw]).Reduce(a, Op<OP>());
                if (lane == 0 && r < R)
                    B[r] = a;
            }
            __syncthreads();
        }
    }
};

/* One kernel per (implementation, case): stage a tile, reduce it `iters`
 * times, write B out.  B starts poisoned (NaN) so an unwritten element
 * fails the check. */
template <class Impl, int R, int C, int T>
__global__ void __launch_bounds__(T)
    kbench(const float *__restrict__ in, float *__restrict__ out, int iters,
           int nsets)
{
    extern __shared__ __align__(16) float sm[];
    float *A = sm, *B = sm + R * C;
    const float *src = in + (size_t)(blockIdx.x % nsets) * R * C;
    for (int i = threadIdx.x; i < R * C; i += T)
        A[i] = src[i];
    for (int i = threadIdx.x; i < R; i += T)
        B[i] = __int_as_float(0x7fbfffff);
    __syncthreads();
    for (int it = 0; it < iters; ++it) {
        /* An offset the compiler cannot see through: without it, loads of
         * an unchanged tile can be hoisted out of the loop (a register
         * copy of a whole row survives the barrier), and the timing would
         * measure nothing.  The base stays a shared-memory pointer. */
        int off = 0;
        asm volatile("" : "+r"(off));
        Impl::run(sm + off, sm + R * C + off);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < R; i += T)
        out[(size_t)blockIdx.x * R + i] = B[i];
}

__global__ void kclock(long long cycles, long long *out)
{
    const long long t0 = clock64();
    long long t;
    do {
        t = clock64();
    } while (t - t0 < cycles);
    if (threadIdx.x == 0 && blockIdx.x == 0)
        out[0] = t - t0;
}

static int g_sms;
static const int NSETS = 16;

struct Result {
    double ns[2]; /* full, one */
    bool ok;
};

static double cpu_ref(const float *row, int C, int op)
{
    double a = op == OP_SUM ? 0.0 : op == OP_MAX ? -FLT_MAX : FLT_MAX;
    for (int c = 0; c < C; ++c)
        a = op == OP_SUM ? a + row[c] : op == OP_MAX ? std::max(a, (double)row[c])
                                                     : std::min(a, (double)row[c]);
    return a;
}

template <class Impl, int R, int C, int T>
static Result measure(const float *d_in, const std::vector<float> &h_in,
                      int op, const char *label)
{
    auto k = kbench<Impl, R, C, T>;
    const size_t smem = (size_t)(R * C + ((R + 3) / 4) * 4) * sizeof(float);
    if (smem > 48 * 1024)
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, T, smem));
    Result res = {{NAN, NAN}, true};
    if (per_sm < 1) {
        fprintf(stderr, "%s: does not fit on an SM\n", label);
        res.ok = false;
        return res;
    }
    const int grids[2] = {g_sms * per_sm, g_sms};
    float *d_out;
    CK(cudaMalloc(&d_out, sizeof(float) * R * grids[0]));

    /* Check on poisoned output, every block (NSETS distinct tiles). */
    CK(cudaMemset(d_out, 0xff, sizeof(float) * R * grids[0]));
    k<<<grids[0], T, smem>>>(d_in, d_out, 1, NSETS);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> h_out((size_t)R * grids[0]);
    CK(cudaMemcpy(h_out.data(), d_out, sizeof(float) * h_out.size(),
                  cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int b = 0; b < grids[0] && res.ok; ++b)
        for (int r = 0; r < R; ++r) {
            const float *row = &h_in[((size_t)(b % NSETS) * R + r) * C];
            double want = cpu_ref(row, C, op), got = h_out[(size_t)b * R + r];
            double mag = 0;
            for (int c = 0; c < C; ++c)
                mag += fabs(row[c]);
            double err = fabs(got - want);
            double tol = op == OP_SUM ? 1e-5 * (mag + 1.0) : 0.0;
            if (!(err <= tol)) {
                fprintf(stderr, "%s: WRONG block %d row %d: got %.9g want %.9g\n",
                        label, b, r, got, want);
                res.ok = false;
                break;
            }
            worst = std::max(worst, err);
        }

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int m = 0; m < 2; ++m) {
        const int grid = grids[m];
        auto time_it = [&](int iters) {
            CK(cudaEventRecord(e0));
            k<<<grid, T, smem>>>(d_in, d_out, iters, NSETS);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            return (double)ms * 1e6;
        };
        time_it(4); /* warm-up */
        int n = 16;
        while (n < (1 << 22) && time_it(2 * n) - time_it(n) < 1.5e6)
            n *= 2;
        std::vector<double> v;
        for (int rep = 0; rep < 5; ++rep)
            v.push_back(time_it(2 * n) - time_it(n));
        std::sort(v.begin(), v.end());
        const double dt = v[2];
        const double tiles_per_sm = (double)n * grid / g_sms;
        res.ns[m] = dt / tiles_per_sm;
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFree(d_out));
    fprintf(stderr, "%-28s %-8s blocks/SM %2d  full %9.1f  one %9.1f  %s\n",
            label, "", per_sm, res.ns[0], res.ns[1], res.ok ? "ok" : "WRONG");
    return res;
}

/* The implementations of one case, as types with a static run(A, B). */
#define WRAP(NAME)                                                         \
    struct Shared_##NAME {                                                 \
        __device__ __forceinline__ static void run(float *A, float *B)     \
        {                                                                  \
            td_shared_##NAME(A, B);                                        \
        }                                                                  \
    };                                                                     \
    struct Default_##NAME {                                                \
        __device__ __forceinline__ static void run(float *A, float *B)     \
        {                                                                  \
            td_default_##NAME(A, B);                                       \
        }                                                                  \
    };
#define WRAP_X(NAME, R, C, T, OP, VAR) WRAP(NAME)
BENCH_CASES(WRAP_X)

struct Row {
    const char *name, *variant;
    int R, C, T, op;
    Result r[4]; /* shared, default, cub, ref */
};

/* NSETS random tiles in [-10, 10], on the host and the device. */
static float *make_input(int R, int C, int seed, std::vector<float> &h_in)
{
    h_in.resize((size_t)NSETS * R * C);
    unsigned s = 12345u + (unsigned)seed;
    for (auto &x : h_in) {
        s = s * 1664525u + 1013904223u;
        x = ((int)(s >> 9) % 20001 - 10000) / 1000.0f;
    }
    float *d_in;
    CK(cudaMalloc(&d_in, sizeof(float) * h_in.size()));
    CK(cudaMemcpy(d_in, h_in.data(), sizeof(float) * h_in.size(),
                  cudaMemcpyHostToDevice));
    return d_in;
}

template <int R, int C, int T, int OP, class S, class D>
static void run_case(Row &row)
{
    std::vector<float> h_in;
    float *d_in = make_input(R, C, R * 7 + C * 13 + T + OP, h_in);
    char lab[96];
    snprintf(lab, sizeof lab, "%s/shared", row.name);
    row.r[0] = measure<S, R, C, T>(d_in, h_in, OP, lab);
    snprintf(lab, sizeof lab, "%s/%s", row.name, row.variant);
    row.r[1] = measure<D, R, C, T>(d_in, h_in, OP, lab);
    snprintf(lab, sizeof lab, "%s/cub", row.name);
    row.r[2] = measure<Cub<R, C, T, OP>, R, C, T>(d_in, h_in, OP, lab);
    snprintf(lab, sizeof lab, "%s/ref(G=%d)", row.name, Ref<R, C, T, OP>::G);
    row.r[3] = measure<Ref<R, C, T, OP>, R, C, T>(d_in, h_in, OP, lab);
    CK(cudaFree(d_in));
}

#ifdef BENCH_SWEEP
/* The reference at every group size G (sum): how the choice of G plays
 * out in both modes. */
template <int R, int C, int T, int G>
static void sweep_g(const float *d_in, const std::vector<float> &h_in)
{
    char lab[64];
    snprintf(lab, sizeof lab, "sweep [%d,%d]/%d G=%d", R, C, T, G);
    Result r = measure<Ref<R, C, T, OP_SUM, G>, R, C, T>(d_in, h_in, OP_SUM,
                                                         lab);
    printf("| [%d,%d] / %d | %d%s | %.1f | %.1f |%s\n", R, C, T, G,
           G == ref_g(R, C, T) ? " (ref)" : "", r.ns[0], r.ns[1],
           r.ok ? "" : " WRONG");
    if constexpr (C >= 1024 && G >= 32) {
        /* the same with 4-byte loads */
        snprintf(lab, sizeof lab, "sweep [%d,%d]/%d G=%d scalar", R, C, T, G);
        Result q = measure<Ref<R, C, T, OP_SUM, G, 1>, R, C, T>(d_in, h_in,
                                                                OP_SUM, lab);
        printf("| [%d,%d] / %d | %d, 4-byte loads | %.1f | %.1f |%s\n", R, C,
               T, G, q.ns[0], q.ns[1], q.ok ? "" : " WRONG");
    }
    if constexpr (G * 2 <= cmin(p2floor(T), p2floor(C / 4)))
        sweep_g<R, C, T, G * 2>(d_in, h_in);
}

template <int R, int C, int T> static void sweep_case()
{
    std::vector<float> h_in;
    float *d_in = make_input(R, C, R * 7 + C * 13 + T, h_in);
    /* from the G that leaves each thread at most 32 chunks a row */
    sweep_g<R, C, T, cmin(p2ceil(cdiv(C / 4, 32)), cmin(p2floor(T), p2floor(C / 4)))>(d_in, h_in);
    CK(cudaFree(d_in));
}
#endif

[[maybe_unused]] static double measure_clock_ghz(void)
{
    long long *d;
    CK(cudaMalloc(&d, sizeof(long long)));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const long long cycles = 40000000LL; /* ~20 ms */
    kclock<<<g_sms, 128>>>(cycles, d); /* warm-up */
    CK(cudaEventRecord(e0));
    kclock<<<g_sms, 128>>>(cycles, d);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaFree(d));
    return (double)cycles / ((double)ms * 1e6);
}

#ifndef BENCH_NO_MAIN
int main(int argc, char **argv)
{
    const char *csv = argc > 1 ? argv[1] : NULL;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs, sm_%d%d, %zu KB shared per block (opt-in)\n",
           prop.name, g_sms, prop.major, prop.minor,
           prop.sharedMemPerBlockOptin / 1024);
    const double ghz0 = measure_clock_ghz();
#ifdef BENCH_SWEEP
    if (argc > 1 && strcmp(argv[1], "--sweep") == 0) {
        printf("| tile / threads | G | full ns/tile/SM | one block ns |\n"
               "|---|---|---:|---:|\n");
#define SWEEP_X(NAME, R, C, T, OP, VAR)                                    \
    if (OP == OP_SUM)                                                      \
        sweep_case<R, C, T>();
        BENCH_CASES(SWEEP_X)
        return 0;
    }
#endif

    Row rows[] = {
#define ROW_X(NAME, R, C, T, OP, VAR) {#NAME, VAR, R, C, T, OP, {}},
        BENCH_CASES(ROW_X)
    };
    int i = 0;
#define RUN_X(NAME, R, C, T, OP, VAR)                                      \
    run_case<R, C, T, OP, Shared_##NAME, Default_##NAME>(rows[i++]);
    BENCH_CASES(RUN_X)
    const double ghz1 = measure_clock_ghz();
    const double ghz = 0.5 * (ghz0 + ghz1);
    printf("SM clock measured with clock64 over events: %.3f GHz before, "
           "%.3f GHz after (floor uses the mean, %.3f)\n\n", ghz0, ghz1, ghz);

    FILE *f = csv ? fopen(csv, "w") : NULL;
    if (f)
        fprintf(f, "case,R,C,threads,op,mode,default_variant,shared_ns,"
                   "default_ns,cub_ns,ref_ns,floor_ns,ok\n");
    static const char *opn[] = {"sum", "max", "min"};
    static const char *mode[] = {"full occupancy, ns per tile per SM",
                                 "one block per SM, ns per tile"};
    bool all_ok = true;
    for (int m = 0; m < 2; ++m) {
        printf("### %s\n\n", mode[m]);
        printf("| tile / threads | op | shared | default (variant) | cub | "
               "ref | floor | shared/default | default/ref | cub/default |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (auto &r : rows) {
            const double floor_ns = (double)r.R * r.C * 4 / 128.0 / ghz;
            bool ok = r.r[0].ok && r.r[1].ok && r.r[2].ok && r.r[3].ok;
            all_ok &= ok;
            printf("| [%d,%d] / %d | %s | %.1f | %.1f (%s) | %.1f | %.1f | "
                   "%.1f | %.2fx | %.2f | %.2fx |%s\n",
                   r.R, r.C, r.T, opn[r.op], r.r[0].ns[m], r.r[1].ns[m],
                   r.variant, r.r[2].ns[m], r.r[3].ns[m], floor_ns,
                   r.r[0].ns[m] / r.r[1].ns[m], r.r[1].ns[m] / r.r[3].ns[m],
                   r.r[2].ns[m] / r.r[1].ns[m], ok ? "" : " WRONG");
            if (f)
                fprintf(f, "%s,%d,%d,%d,%s,%s,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%d\n",
                        r.name, r.R, r.C, r.T, opn[r.op],
                        m ? "one" : "full", r.variant, r.r[0].ns[m],
                        r.r[1].ns[m], r.r[2].ns[m], r.r[3].ns[m], floor_ns,
                        ok);
        }
        printf("\n");
    }
    if (f)
        fclose(f);
    printf("%s\n", all_ok ? "all results checked: ok"
                          : "SOME RESULTS WRONG (see stderr)");
    return all_ok ? 0 : 1;
}
#endif /* BENCH_NO_MAIN */
