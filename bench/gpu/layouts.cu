/*
 * Layouts tried for the shapes where the emitted code is furthest from its
 * goals ([8,1024] / 256 and [1,4096] / 256 threads), hand-written and timed
 * beside `shared`, the default, CUB and the reference with the harness of
 * bench_reduce.cu (same staging, timing, modes and checks).
 *
 *   bench/gpu/run.sh --layouts [WORKDIR]
 *
 * Lay<R, C, T, OP, G, VEC, FIN>: G threads a row (R * G <= T, one pass),
 * VEC-element loads in batches of up to 8, two accumulators, then FIN:
 *   0  XOR shuffles over the G lanes, lane 0 writes the row (G <= 32);
 *   1  every lane stores its partial to a shared scratch (rows padded to
 *      G + 4 floats, so that the finishers' 16-byte reads of different
 *      rows start in different banks), one barrier, one thread per row
 *      sums its G partials with 16-byte reads and a pairwise tree;
 *   2  as 1, but per warp (G == 32): __syncwarp instead of the barrier,
 *      lane 0 of each warp sums the warp's 32 partials;
 *   3  XOR shuffles over each warp, lane 0 of each warp stores the warp's
 *      partial, one barrier, one thread per row combines the G / 32
 *      partials of its row (the reference's way for G > 32);
 *   4  G == 32, fewer shuffles: a sum goes through one float64 tensor-core
 *      MMA (m8n8k4, A all ones: the 32 lanes' values become 8 sums of 4,
 *      each lane holding two) and two shuffles; max and min through
 *      redux.sync on order-preserving integer keys (partials are never NaN:
 *      the accumulators start at the identity and fmaxf skips NaN).
 */
#define BENCH_NO_MAIN
#include "bench_reduce.cu"

/* Pairwise tree over v[0..N), a template per level so that every index
 * is a constant (a loop over the levels left v in local memory). */
template <int OP, int N> struct Tree {
    __device__ __forceinline__ static float run(float *v)
    {
#pragma unroll
        for (int i = 0; i < N / 2; ++i)
            v[i] = Op<OP>::f(v[2 * i], v[2 * i + 1]);
        return Tree<OP, N / 2>::run(v);
    }
};
template <int OP> struct Tree<OP, 1> {
    __device__ __forceinline__ static float run(float *v) { return v[0]; }
};

/* Sum (or max) of n = N floats at p (16-byte aligned), one thread. */
template <int OP, int N>
__device__ __forceinline__ float sum_partials(const float *p)
{
    float v[N];
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
        const float4 x = reinterpret_cast<const float4 *>(p)[k];
        v[4 * k] = x.x;
        v[4 * k + 1] = x.y;
        v[4 * k + 2] = x.z;
        v[4 * k + 3] = x.w;
    }
    return Tree<OP, N>::run(v);
}

template <int R, int C, int T, int OP, int G, int VEC, int FIN, int BT_ = 8>
struct Lay {
    static constexpr int Q = C / VEC;
    static constexpr int K = Q / G;
    static constexpr int BT = K < BT_ ? K : BT_;
    static constexpr int P = G + 4;
    static_assert(R * G <= T && Q % G == 0 && K % BT == 0, "one pass");
    static_assert(FIN != 0 || G <= 32, "shuffles within a warp");
    static_assert(FIN != 3 || G > 32, "rows across warps");
    static_assert(FIN != 4 || G == 32, "a warp a row");
    static constexpr int W = G / 32;
    static_assert(FIN != 2 || G == 32, "per-warp scratch");

    __device__ __forceinline__ static float load(const float *A, int row,
                                                 int c)
    {
        if constexpr (VEC == 4) {
            const float4 v = reinterpret_cast<const float4 *>(A)[row * Q + c];
            return Op<OP>::f(Op<OP>::f(v.x, v.y), Op<OP>::f(v.z, v.w));
        } else if constexpr (VEC == 2) {
            const float2 v = reinterpret_cast<const float2 *>(A)[row * Q + c];
            return Op<OP>::f(v.x, v.y);
        } else {
            return A[row * Q + c];
        }
    }

    __device__ __forceinline__ static void run(float *A, float *B)
    {
        __shared__ __align__(16) float
            scr[FIN == 0 ? 4 : FIN == 1 ? R * P : FIN == 2 ? (T / 32) * 36
                                                        : R * W];
        const int tid = threadIdx.x;
        const int lane = tid % G, row = tid / G;
        if (row < R) {
            float a0 = Op<OP>::id(), a1 = Op<OP>::id();
#pragma unroll
            for (int k0 = 0; k0 < K; k0 += BT) {
                float t[BT];
#pragma unroll
                for (int u = 0; u < BT; ++u)
                    t[u] = load(A, row, lane + (k0 + u) * G);
#pragma unroll
                for (int u = 0; u < BT; ++u) {
                    if (u & 1)
                        a1 = Op<OP>::f(a1, t[u]);
                    else
                        a0 = Op<OP>::f(a0, t[u]);
                }
            }
            float a = Op<OP>::f(a0, a1);
            if constexpr (FIN == 0) {
#pragma unroll
                for (int m = G / 2; m >= 1; m >>= 1)
                    a = Op<OP>::f(a, __shfl_xor_sync(0xffffffffu, a, m));
                if (lane == 0)
                    B[row] = a;
            } else if constexpr (FIN == 1) {
                scr[row * P + lane] = a;
            } else if constexpr (FIN == 4) {
                if constexpr (OP == OP_SUM) {
                    double d0, d1;
                    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                        "{%0, %1}, {%2}, {%3}, {%4, %5};"
                        : "=d"(d0), "=d"(d1)
                        : "d"(1.0), "d"((double)a), "d"(0.0), "d"(0.0));
                    a = (float)(d0 + d1);
                    a += __shfl_xor_sync(0xffffffffu, a, 1);
                    a += __shfl_xor_sync(0xffffffffu, a, 2);
                } else {
                    int k = __float_as_int(a);
                    k = k >= 0 ? k : k ^ 0x7fffffff;
                    k = OP == OP_MAX ? __reduce_max_sync(0xffffffffu, k)
                                     : __reduce_min_sync(0xffffffffu, k);
                    a = __int_as_float(k >= 0 ? k : k ^ 0x7fffffff);
                }
                if (lane == 0)
                    B[row] = a;
            } else if constexpr (FIN == 3) {
#pragma unroll
                for (int m = 16; m >= 1; m >>= 1)
                    a = Op<OP>::f(a, __shfl_xor_sync(0xffffffffu, a, m));
                if (tid % 32 == 0)
                    scr[row * W + lane / 32] = a;
            } else {
                const int w = tid / 32;
                scr[w * 36 + lane] = a;
                __syncwarp();
                if (lane == 0)
                    B[row] = sum_partials<OP, 32>(scr + w * 36);
            }
        }
        if constexpr (FIN == 1) {
            __syncthreads();
            if (tid < R)
                B[tid] = sum_partials<OP, G>(scr + tid * P);
        } else if constexpr (FIN == 3) {
            __syncthreads();
            if (tid < R) {
                float v[W];
#pragma unroll
                for (int w = 0; w < W; ++w)
                    v[w] = scr[tid * W + w];
                B[tid] = Tree<OP, W>::run(v);
            }
        }
        __syncthreads();
    }
};

template <class Impl, int R, int C, int T>
static void one(const float *d_in, const std::vector<float> &h_in, int op,
                const char *name, const char *what)
{
    char lab[128];
    snprintf(lab, sizeof lab, "%s/%s", name, what);
    Result r = measure<Impl, R, C, T>(d_in, h_in, op, lab);
    printf("| [%d,%d] / %d | %s | %s | %.1f | %.1f |%s\n", R, C, T,
           op == OP_SUM ? "sum" : "max", what, r.ns[0], r.ns[1],
           r.ok ? "" : " WRONG");
}

/* The (R, C, T, OP) shapes already given their baselines. */
static int g_seen[64][4], g_nseen;

static bool first_time(int R, int C, int T, int OP)
{
    for (int i = 0; i < g_nseen; ++i)
        if (g_seen[i][0] == R && g_seen[i][1] == C && g_seen[i][2] == T &&
            g_seen[i][3] == OP)
            return false;
    if (g_nseen < 64) {
        g_seen[g_nseen][0] = R;
        g_seen[g_nseen][1] = C;
        g_seen[g_nseen][2] = T;
        g_seen[g_nseen++][3] = OP;
    }
    return true;
}

/* One call of layouts/calls: its emitted body (tiledispatch emit, the
 * call's own dispatch and config) and, the first time its shape and op
 * come up, `shared`, CUB, the reference and the hand-written layouts. */
template <int R, int C, int T, int OP, class S, class D>
static void layouts_case(const char *name, const char *variant)
{
    std::vector<float> h_in;
    float *d_in = make_input(R, C, R * 7 + C * 13 + T + OP, h_in);
    char what[128];
    snprintf(what, sizeof what, "emitted %s (%s)", name, variant);
    one<D, R, C, T>(d_in, h_in, OP, name, what);
    if (!first_time(R, C, T, OP)) {
        CK(cudaFree(d_in));
        return;
    }
    one<S, R, C, T>(d_in, h_in, OP, name, "shared (emitted)");
    one<Cub<R, C, T, OP>, R, C, T>(d_in, h_in, OP, name, "cub");
    snprintf(what, sizeof what, "ref (G=%d)", Ref<R, C, T, OP>::G);
    one<Ref<R, C, T, OP>, R, C, T>(d_in, h_in, OP, name, what);
#define LAY(G, VEC, FIN, BT, WHAT)                                         \
    one<Lay<R, C, T, OP, G, VEC, FIN, BT>, R, C, T>(d_in, h_in, OP, name,  \
                                                     WHAT)
    if constexpr (R == 8 && C == 1024 && T == 256) {
        LAY(32, 4, 0, 8, "G=32 16B shuffles");
        LAY(32, 4, 1, 8, "G=32 16B scratch+barrier");
        LAY(32, 4, 2, 8, "G=32 16B warp scratch");
        LAY(32, 1, 0, 8, "G=32 4B shuffles");
        LAY(32, 1, 1, 8, "G=32 4B scratch+barrier");
        LAY(32, 1, 1, 32, "G=32 4B scratch+barrier, batch 32");
        LAY(16, 4, 0, 8, "G=16 16B shuffles");
        LAY(16, 4, 1, 8, "G=16 16B scratch+barrier");
        LAY(32, 2, 0, 8, "G=32 8B shuffles");
        LAY(32, 2, 1, 8, "G=32 8B scratch+barrier");
        LAY(32, 4, 4, 8, "G=32 16B dmma/redux");
        LAY(32, 2, 4, 8, "G=32 8B dmma/redux");
        LAY(32, 1, 4, 8, "G=32 4B dmma/redux");
    }
    if constexpr (R == 1 && C == 4096 && T == 256) {
        LAY(32, 4, 0, 8, "G=32 16B shuffles");
        LAY(32, 4, 0, 4, "G=32 16B shuffles, batch 4");
        LAY(32, 4, 0, 16, "G=32 16B shuffles, batch 16");
        LAY(32, 4, 1, 8, "G=32 16B scratch+barrier");
        LAY(32, 4, 2, 8, "G=32 16B warp scratch");
        LAY(32, 1, 0, 8, "G=32 4B shuffles");
        LAY(32, 1, 0, 32, "G=32 4B shuffles, batch 32");
        LAY(32, 2, 0, 8, "G=32 8B shuffles");
        LAY(32, 2, 0, 16, "G=32 8B shuffles, batch 16");
        LAY(32, 2, 4, 8, "G=32 8B dmma/redux");
        LAY(64, 4, 1, 8, "G=64 16B scratch+barrier");
        LAY(64, 4, 3, 8, "G=64 16B warp shuffles+barrier");
        LAY(64, 1, 3, 8, "G=64 4B warp shuffles+barrier");
        LAY(64, 2, 3, 8, "G=64 8B warp shuffles+barrier");
        LAY(128, 4, 3, 8, "G=128 16B warp shuffles+barrier");
        LAY(128, 1, 3, 8, "G=128 4B warp shuffles+barrier");
        LAY(256, 4, 3, 8, "G=256 16B warp shuffles+barrier");
        LAY(256, 4, 1, 8, "G=256 16B scratch+barrier");
    }
    if constexpr (R == 16 && C == 256 && T == 512) {
        LAY(8, 4, 0, 8, "G=8 16B shuffles");
        LAY(16, 4, 0, 8, "G=16 16B shuffles");
        LAY(16, 2, 0, 8, "G=16 8B shuffles");
        LAY(32, 4, 0, 8, "G=32 16B shuffles");
        LAY(32, 4, 4, 8, "G=32 16B dmma/redux");
        LAY(32, 2, 4, 8, "G=32 8B dmma/redux");
        LAY(32, 1, 4, 8, "G=32 4B dmma/redux");
    }
    if constexpr (R == 4 && C == 4096 && T == 256) {
        LAY(32, 4, 0, 8, "G=32 16B shuffles");
        LAY(32, 4, 4, 8, "G=32 16B dmma/redux");
    }
#undef LAY
    CK(cudaFree(d_in));
}

int main()
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs\n\n| tile / threads | op | layout | full "
           "ns/tile/SM | one block ns |\n|---|---|---|---:|---:|\n",
           prop.name, g_sms);
#define LAYOUTS_X(NAME, R, C, T, OP, VAR)                                  \
    layouts_case<R, C, T, OP, Shared_##NAME, Default_##NAME>(#NAME, VAR);
    BENCH_CASES(LAYOUTS_X)
    return 0;
}
