// The GEMM bench (design/gemm/plan.md 7.3, issue 25 item 7): the kernel of
// examples/tvm_gemm.py (D = alpha A B^T; A M x K, B N x K float16
// row-major, D M x N float32; float32 accumulation) as compiled through
// tiledispatch's TVM bridge (launch_td) and by TVM 0.27's own dispatcher
// (launch_tvm), its cp.async-pipelined form (--stages 2) the same two
// ways (launch_td2, launch_tvm2), and cublasGemmEx on the same problem, in
// one run.
//
// 1. Exact data (integers in [-2, 2]: every product and sum is exact in
//    float32 for K <= 2^20, alpha = 0.5 scales exactly): the kernels and
//    cuBLAS must agree bit for bit on every element, and with the float64
//    reference on 4096 sampled elements.
// 2. Random data (uniform [-1, 1] rounded to float16): each tiledispatch
//    build must agree bit for bit with TVM's build of the same kernel
//    (the same instructions in the same order);
//    each is checked against the float64 reference on 4096 samples with
//    the float32-accumulation bound 4 K 2^-24 sum|a b| + 2^-24 |ref|
//    (times alpha), and its largest difference from cuBLAS is reported.
// 3. Timing (random data): 10 warm-up launches each, then ROUNDS rounds
//    (argv[1], default 5) of 10 launches of each kernel and cuBLAS in turn,
//    each launch timed with its own pair of events: median and min of the
//    ROUNDS * 10 samples, TFLOP/s = 2 M N K / t, fraction of cuBLAS =
//    cuBLAS median / kernel median.  Every sample also goes to
//    gemm_times.csv in the working directory.
//
// Built by run.sh (the sizes come from gen/gemm.h).  Exit 0 when every
// check passes, 1 otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm.h"   // GEMM_M, GEMM_N, GEMM_K, GEMM_ALPHA, GEMM_THREADS, GEMM_BM, GEMM_BN

typedef cudaError_t (*launch_fn)(dim3, dim3, const void *, const void *, void *, cudaStream_t);
extern "C" cudaError_t launch_td(dim3, dim3, const void *, const void *, void *, cudaStream_t);
extern "C" cudaError_t launch_tvm(dim3, dim3, const void *, const void *, void *, cudaStream_t);
extern "C" cudaError_t launch_td2(dim3, dim3, const void *, const void *, void *, cudaStream_t);
extern "C" cudaError_t launch_tvm2(dim3, dim3, const void *, const void *, void *, cudaStream_t);

// The kernels, each tiledispatch build next to TVM's build of the same
// kernel (k ^ 1 is the other of a pair).
struct Kernel {
    const char *name;
    launch_fn fn;
};
static const Kernel KERNELS[] = {
    {"td", launch_td}, {"tvm", launch_tvm},      // one shared stage, synchronous copies
    {"td2", launch_td2}, {"tvm2", launch_tvm2},  // two stages filled by cp.async
};
#define NKERN 4

#define CK(x)                                                                        \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,               \
                    cudaGetErrorString(e_));                                         \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)
#define CB(x)                                                                        \
    do {                                                                             \
        cublasStatus_t s_ = (x);                                                     \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                           \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, \
                    (int)s_);                                                        \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

static const int M = GEMM_M, N = GEMM_N, K = GEMM_K;
static const float ALPHA = GEMM_ALPHA;

struct Problem {
    std::vector<float> a, b;     // the inputs as float16 rounds them
    __half *dA, *dB;
};

static unsigned rng_state = 1;
static unsigned rng() { return rng_state = rng_state * 1664525u + 1013904223u; }

static void fill(Problem &p, bool exact)
{
    std::vector<__half> ha((size_t)M * K), hb((size_t)N * K);
    p.a.resize(ha.size());
    p.b.resize(hb.size());
    for (size_t i = 0; i < ha.size() + hb.size(); i++) {
        unsigned r = rng() >> 8;
        float v = exact ? (float)((int)(r % 5) - 2) : (float)(r % 2001) / 1000.0f - 1.0f;
        __half h = __float2half(v);
        if (i < ha.size()) {
            ha[i] = h;
            p.a[i] = __half2float(h);
        } else {
            hb[i - ha.size()] = h;
            p.b[i - ha.size()] = __half2float(h);
        }
    }
    CK(cudaMemcpy(p.dA, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p.dB, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
}

static cublasHandle_t blas;

// Row-major D[M][N] = alpha A[M][K] B[N][K]^T is column-major D^T = alpha
// B A^T: C (N x M) = op(B) op(A) with B, A given as column-major K x N /
// K x M (their row-major storage), op = T on B.
static void run_cublas(const Problem &p, float *D)
{
    const float zero = 0.0f;
    CB(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &ALPHA, p.dB, CUDA_R_16F, K, p.dA,
                    CUDA_R_16F, K, &zero, D, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT));
}

static const dim3 GRID(N / GEMM_BN, M / GEMM_BM), BLOCK(GEMM_THREADS);

static void run_kernel(launch_fn f, const Problem &p, float *D)
{
    CK(f(GRID, BLOCK, p.dA, p.dB, D, 0));
}

static std::vector<float> fetch(const float *D)
{
    std::vector<float> h((size_t)M * N);
    CK(cudaMemcpy(h.data(), D, h.size() * 4, cudaMemcpyDeviceToHost));
    return h;
}

// Elements that are not finite.
static size_t nonfinite(const std::vector<float> &x)
{
    size_t n = 0;
    for (float v : x)
        n += !std::isfinite(v);
    return n;
}

// Elements that differ (bit patterns) and the largest absolute difference.
static size_t ndiff(const std::vector<float> &x, const std::vector<float> &y, double *maxd)
{
    size_t n = 0;
    *maxd = 0;
    for (size_t i = 0; i < x.size(); i++) {
        if (memcmp(&x[i], &y[i], 4) != 0)
            n++;
        *maxd = std::max(*maxd, (double)std::fabs((double)x[i] - y[i]));
    }
    return n;
}

// 4096 sampled elements against the float64 reference: the largest error,
// and how many exceed tolerance (0 for exact data; the float32 bound else).
static int check_ref(const Problem &p, const std::vector<float> &d, bool exact, double *maxerr)
{
    int bad = 0;
    *maxerr = 0;
    unsigned s = 12345;
    for (int k = 0; k < 4096; k++) {
        s = s * 1664525u + 1013904223u;
        int r = (int)((s >> 8) % M);
        s = s * 1664525u + 1013904223u;
        int c = (int)((s >> 8) % N);
        double ref = 0, mag = 0;
        for (int q = 0; q < K; q++) {
            double t = (double)p.a[(size_t)r * K + q] * p.b[(size_t)c * K + q];
            ref += t;
            mag += std::fabs(t);
        }
        ref *= ALPHA;
        mag *= ALPHA;
        double err = std::fabs(ref - d[(size_t)r * N + c]);
        double tol = exact ? 0 : 4.0 * K * std::ldexp(1.0, -24) * mag +
                                     std::ldexp(1.0, -24) * std::fabs(ref);
        // A NaN (an element never written: the kernels' D starts as NaN)
        // fails, and shows as the largest error.
        *maxerr = std::isnan(err) ? err : std::isnan(*maxerr) ? *maxerr : std::max(*maxerr, err);
        bad += !(err <= tol);
    }
    return bad;
}

static float median(std::vector<float> t)
{
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1)
        rounds = 1;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    printf("device: %s, %d SMs, SM clock max %d MHz\n", prop.name, prop.multiProcessorCount,
           clock_khz / 1000);
    printf("problem: D = %g A B^T, M = N = K = %d x %d x %d, float16 in, float32 "
           "accumulation and out; grid (%d, %d), block %d\n",
           ALPHA, M, N, K, GRID.x, GRID.y, BLOCK.x);
    Problem p;
    CK(cudaMalloc(&p.dA, (size_t)M * K * 2));
    CK(cudaMalloc(&p.dB, (size_t)N * K * 2));
    float *D[NKERN + 1];   // one per kernel, then cuBLAS's
    for (int k = 0; k <= NKERN; k++)
        CK(cudaMalloc(&D[k], (size_t)M * N * 4));
    CB(cublasCreate(&blas));
    bool ok = true;

    for (int exact = 1; exact >= 0; exact--) {
        fill(p, exact);
        for (int k = 0; k < NKERN; k++) {
            CK(cudaMemset(D[k], 0xff, (size_t)M * N * 4));   // NaN: an element not written shows
            run_kernel(KERNELS[k].fn, p, D[k]);
        }
        run_cublas(p, D[NKERN]);
        CK(cudaDeviceSynchronize());
        std::vector<float> cb = fetch(D[NKERN]), out[NKERN];
        for (int k = 0; k < NKERN; k++)
            out[k] = fetch(D[k]);
        double e_cb;
        int b_cb = check_ref(p, cb, exact, &e_cb);
        // Exact data: everything equal everywhere.  Random data: each
        // tiledispatch build equal everywhere to TVM's build of the same
        // kernel (KERNELS[k ^ 1]), each within the bound of the reference.
        bool pass = nonfinite(cb) == 0 && (!exact || b_cb == 0);
        printf("%s data: cuBLAS vs float64 reference on 4096 samples: max %.3e (%d over "
               "tol)\n", exact ? "exact" : "random", e_cb, b_cb);
        for (int k = 0; k < NKERN; k++) {
            double d_pair, d_cb, e;
            size_t nf = nonfinite(out[k]);
            size_t n_pair = ndiff(out[k], out[k ^ 1], &d_pair), n_cb = ndiff(out[k], cb, &d_cb);
            int bad = check_ref(p, out[k], exact, &e);
            bool kpass = nf == 0 && n_pair == 0 && bad == 0 && (!exact || n_cb == 0);
            printf("  %-5s %zu not finite; vs %-5s %zu elements differ (max %.3e); vs cuBLAS %zu "
                   "(max %.3e); vs float64 reference max %.3e (%d over tol)  %s\n",
                   KERNELS[k].name, nf, KERNELS[k ^ 1].name, n_pair, d_pair, n_cb, d_cb, e, bad,
                   kpass ? "PASS" : "FAIL");
            pass = pass && kpass;
        }
        double d_st;
        size_t n_st = ndiff(out[0], out[2], &d_st);
        printf("  td vs td2 (one stage against two): %zu elements differ (max %.3e)\n", n_st,
               d_st);
        ok = ok && pass;
    }

    // Timing, on the random data.
    const int NIMPL = NKERN + 1;
    std::vector<float> t[NIMPL];
    cudaEvent_t ev[2];
    CK(cudaEventCreate(&ev[0]));
    CK(cudaEventCreate(&ev[1]));
    auto name = [&](int w) { return w < NKERN ? KERNELS[w].name : "cublas"; };
    auto launch = [&](int w) {
        if (w < NKERN)
            run_kernel(KERNELS[w].fn, p, D[w]);
        else
            run_cublas(p, D[NKERN]);
    };
    for (int w = 0; w < NIMPL; w++)
        for (int i = 0; i < 10; i++)
            launch(w);
    CK(cudaDeviceSynchronize());
    FILE *csv = fopen("gemm_times.csv", "w");
    if (csv)
        fprintf(csv, "impl,round,launch,us\n");
    for (int r = 0; r < rounds; r++)
        for (int w = 0; w < NIMPL; w++)
            for (int i = 0; i < 10; i++) {
                CK(cudaEventRecord(ev[0]));
                launch(w);
                CK(cudaEventRecord(ev[1]));
                CK(cudaEventSynchronize(ev[1]));
                float ms;
                CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
                t[w].push_back(ms * 1000);
                if (csv)
                    fprintf(csv, "%s,%d,%d,%.2f\n", name(w), r, i, ms * 1000);
            }
    if (csv)
        fclose(csv);
    CK(cudaGetLastError());
    double flop = 2.0 * M * N * K;
    float cb_med = median(t[NKERN]);
    printf("%-7s %10s %10s %14s %14s %10s\n", "impl", "median_us", "min_us", "TFLOP/s(med)",
           "TFLOP/s(max)", "of_cuBLAS");
    for (int w = 0; w < NIMPL; w++) {
        float med = median(t[w]), mn = *std::min_element(t[w].begin(), t[w].end());
        printf("%-7s %10.1f %10.1f %14.1f %14.1f %10.3f\n", name(w), med, mn,
               flop / med * 1e-6, flop / mn * 1e-6, cb_med / med);
    }
    printf("td / tvm (median time): %.3f; td2 / tvm2: %.3f  %s\n",
           median(t[0]) / median(t[1]), median(t[2]) / median(t[3]), ok ? "PASS" : "FAIL");
    cublasDestroy(blas);
    return ok ? 0 : 1;
}
