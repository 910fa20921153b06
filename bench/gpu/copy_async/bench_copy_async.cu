/*
 * GPU benchmark of the copy_async family (issue 24's item 6): a pipelined
 * global -> shared load of [128, 64] float16 tiles, the code tiledispatch
 * emits beside the code TVM 0.27 generates, and a plain device-to-device
 * copy of the same bytes, all in one run.  The kernels are generated (gen/,
 * by gen.py): this file only checks and times them.
 *
 * Every kernel streams ASYNC_TILES tiles per CTA of ASYNC_THREADS threads,
 * ASYNC_CTAS CTAs (69 MB of A, beyond the H200's L2), and writes one float
 * per thread: the sum of its row (row threadIdx.x) of every tile of its
 * CTA.  A holds multiples of 1/8 in [-4, 4), so every such sum is exact in
 * float32 whatever the order of the adds, and the host compares each
 * checksum exactly: a pipeline that reads a stage before its tile arrived,
 * or the wrong stage, fails.  The output is poisoned before each check.
 *
 * Timing: after WARM untimed rounds, REPS rounds each launch every
 * implementation BATCH times back to back between two CUDA events
 * (interleaved, so clock and thermal drift fall on all alike); a sample is
 * the events' time / BATCH (a kernel of some 20 us would otherwise carry
 * the launch latency), the table shows the median of the REPS samples.
 * GB/s: the async loads count the bytes of A read (the checksums are 0.2%
 * of it and not counted); the D2D kernel and cudaMemcpy count read plus
 * written, as docs/performance.md's copy tables do.
 *
 *   bench_copy_async [CSV]    the table on stdout, every sample in CSV
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cases.h"

#define CK(expr)                                                           \
    do {                                                                   \
        cudaError_t e_ = (expr);                                           \
        if (e_ != cudaSuccess) {                                           \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n",                \
                    cudaGetErrorName(e_), __FILE__, __LINE__, #expr);      \
            exit(3);                                                       \
        }                                                                  \
    } while (0)

typedef int (*launch_fn)(const void *, float *, int, cudaStream_t);
typedef int (*occ_fn)(void);

#define DECL(NAME, KIND, STAGES, DESC)                                      \
    extern "C" int NAME##_launch(const void *, float *, int, cudaStream_t); \
    extern "C" int NAME##_blocks_per_sm(void);
ASYNC_CASES(DECL)
#undef DECL

struct Kernel {
    const char *name;
    int kind; /* 0 ours, 1 TVM */
    int stages;
    const char *desc;
    launch_fn launch;
    occ_fn occ;
};

static const Kernel KERNELS[] = {
#define ROW(NAME, KIND, STAGES, DESC) \
    {#NAME, KIND, STAGES, DESC, NAME##_launch, NAME##_blocks_per_sm},
    ASYNC_CASES(ROW)
#undef ROW
};
enum { N_KERNELS = sizeof KERNELS / sizeof KERNELS[0] };

enum { TILE = ASYNC_TILE_ROWS * ASYNC_TILE_COLS };
static const size_t ELEMS = (size_t)ASYNC_CTAS * ASYNC_TILES * TILE;
static const size_t BYTES = ELEMS * sizeof(__half);
static const int OUTS = ASYNC_CTAS * ASYNC_THREADS;

/* The plain D2D copy: one 16-byte load and store per thread. */
__global__ void __launch_bounds__(256)
d2d_v4(const uint4 *__restrict__ a, uint4 *__restrict__ b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = a[i];
}

enum { REPS = 25, WARM = 3, BATCH = 10 };

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* The checksum of thread t of CTA b: its row of every tile of the CTA. */
static std::vector<float> expected(const std::vector<__half> &a)
{
    std::vector<float> want(OUTS);
    for (int b = 0; b < ASYNC_CTAS; ++b)
        for (int t = 0; t < ASYNC_THREADS; ++t) {
            double s = 0;
            for (int k = 0; k < ASYNC_TILES; ++k) {
                size_t row = ((size_t)b * ASYNC_TILES + k) * TILE +
                             (size_t)t * ASYNC_TILE_COLS;
                for (int j = 0; j < ASYNC_TILE_COLS; ++j)
                    s += __half2float(a[row + j]);
            }
            want[b * ASYNC_THREADS + t] = (float)s;
        }
    return want;
}

/* Runs one kernel on a poisoned output and compares every checksum. */
static bool check(const Kernel &k, const void *dA, float *dOut,
                  const std::vector<float> &want)
{
    CK(cudaMemset(dOut, 0xA5, OUTS * sizeof(float)));
    int r = k.launch(dA, dOut, ASYNC_CTAS, 0);
    if (r != 0) {
        printf("%s: FAILED to launch (%d)\n", k.name, r);
        return false;
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> got(OUTS);
    CK(cudaMemcpy(got.data(), dOut, OUTS * sizeof(float),
                  cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < OUTS; ++i)
        if (got[i] != want[i] && bad++ == 0)
            printf("%s: WRONG checksum of CTA %d thread %d: got %.9g, "
                   "want %.9g\n", k.name, i / ASYNC_THREADS,
                   i % ASYNC_THREADS, got[i], want[i]);
    if (bad)
        printf("%s: %d of %d checksums wrong\n", k.name, bad, OUTS);
    return bad == 0;
}

int main(int argc, char **argv)
{
    FILE *csv = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (argc > 1 && !csv) {
        perror(argv[1]);
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0, mem_khz = 0, bus = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
    cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
    printf("device: %s, %d SMs, %d KiB shared per SM, L2 %d MiB, max clock "
           "%d MHz, memory %d MHz x %d bit\n", prop.name,
           prop.multiProcessorCount,
           (int)(prop.sharedMemPerMultiprocessor / 1024),
           prop.l2CacheSize >> 20, clock_khz / 1000, mem_khz / 1000, bus);
    printf("workload: %d CTAs x %d threads, %d [%d, %d] float16 tiles per "
           "CTA, %.1f MB of A\n", ASYNC_CTAS, ASYNC_THREADS, ASYNC_TILES,
           ASYNC_TILE_ROWS, ASYNC_TILE_COLS, BYTES / 1e6);

    std::vector<__half> hA(ELEMS);
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < ELEMS; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        hA[i] = __float2half((float)((int)(x >> 58) - 32) / 8.0f);
    }
    std::vector<float> want = expected(hA);
    void *dA, *dB;
    float *dOut;
    CK(cudaMalloc(&dA, BYTES));
    CK(cudaMalloc(&dB, BYTES));
    CK(cudaMalloc(&dOut, OUTS * sizeof(float)));
    CK(cudaMemcpy(dA, hA.data(), BYTES, cudaMemcpyHostToDevice));

    /* The implementations: the kernels, then the two copies. */
    int n_impl = N_KERNELS + 2, failures = 0;
    std::vector<bool> ok(n_impl, true);
    for (int i = 0; i < N_KERNELS; ++i) {
        ok[i] = check(KERNELS[i], dA, dOut, want);
        failures += !ok[i];
    }
    size_t n16 = BYTES / 16;
    auto run = [&](int i) {
        if (i < N_KERNELS) {
            KERNELS[i].launch(dA, dOut, ASYNC_CTAS, 0);
        } else if (i == N_KERNELS) {
            d2d_v4<<<(unsigned)((n16 + 255) / 256), 256>>>(
                (const uint4 *)dA, (uint4 *)dB, n16);
        } else {
            CK(cudaMemcpyAsync(dB, dA, BYTES, cudaMemcpyDeviceToDevice, 0));
        }
    };
    /* the D2D kernel must copy too, or its time means nothing */
    CK(cudaMemset(dB, 0, BYTES));
    run(N_KERNELS);
    CK(cudaDeviceSynchronize());
    {
        std::vector<__half> hB(ELEMS);
        CK(cudaMemcpy(hB.data(), dB, BYTES, cudaMemcpyDeviceToHost));
        if (memcmp(hB.data(), hA.data(), BYTES) != 0) {
            printf("d2d_kernel: WRONG copy\n");
            ok[N_KERNELS] = false;
            failures++;
        }
    }

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (csv)
        fprintf(csv, "impl,rep,ms\n");
    std::vector<std::vector<float>> t(n_impl);
    for (int rep = -WARM; rep < REPS; ++rep)
        for (int i = 0; i < n_impl; ++i) {
            if (!ok[i])
                continue;
            CK(cudaEventRecord(e0));
            for (int b = 0; b < BATCH; ++b)
                run(i);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            ms /= BATCH;
            if (rep < 0)
                continue;
            t[i].push_back(ms);
            if (csv)
                fprintf(csv, "%s,%d,%.6f\n",
                        i < N_KERNELS ? KERNELS[i].name
                        : i == N_KERNELS ? "d2d_kernel" : "cudaMemcpy_d2d",
                        rep, ms);
        }
    std::vector<float> ms(n_impl, 0);
    for (int i = 0; i < n_impl; ++i)
        ms[i] = ok[i] ? median(t[i]) : 0;
    auto gbs = [&](int i, double bytes) {
        return ms[i] > 0 ? bytes / (ms[i] * 1e-3) / 1e9 : 0.0;
    };
    double d2d = gbs(N_KERNELS, 2.0 * BYTES),
           mcp = gbs(N_KERNELS + 1, 2.0 * BYTES);

    printf("\n### global -> shared, pipelined [%d, %d] float16 tiles, %d "
           "CTAs x %d tiles (GB/s = bytes of A read / median time; the D2D "
           "rows count read + written)\n\n", ASYNC_TILE_ROWS,
           ASYNC_TILE_COLS, ASYNC_CTAS, ASYNC_TILES);
    printf("| kernel | stages | blocks/SM | us | GB/s | / D2D kernel | "
           "/ cudaMemcpy D2D | what |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < N_KERNELS; ++i) {
        const Kernel &k = KERNELS[i];
        double g = gbs(i, (double)BYTES);
        if (!ok[i]) {
            printf("| %s | %d | %d | FAILED | | | | %s |\n", k.name,
                   k.stages, k.occ(), k.desc);
            continue;
        }
        printf("| %s | %d | %d | %.2f | %.0f | %.3f | %.3f | %s |\n",
               k.name, k.stages, k.occ(), ms[i] * 1e3, g,
               d2d > 0 ? g / d2d : 0, mcp > 0 ? g / mcp : 0, k.desc);
    }
    printf("| ours_tma | | | | | | | not available: tiledispatch's "
           "tma_auto variant is not built yet |\n");
    printf("| d2d_kernel | | | %.2f | %.0f | 1.000 | %.3f | one 16-byte "
           "load + store per thread, %.1f MB each way |\n",
           ms[N_KERNELS] * 1e3, d2d, mcp > 0 ? d2d / mcp : 0, BYTES / 1e6);
    printf("| cudaMemcpy_d2d | | | %.2f | %.0f | %.3f | 1.000 | "
           "cudaMemcpyAsync device to device, the same bytes |\n",
           ms[N_KERNELS + 1] * 1e3, mcp, d2d > 0 ? mcp / d2d : 0);

    /* ours against TVM at the same stages */
    printf("\n### ours / TVM (time ratio TVM / ours: > 1 means ours is "
           "faster)\n\n| stages | ours ldgsts / TVM ldgsts | ours ldgsts / "
           "TVM TMA |\n|---|---|---|\n");
    for (int i = 0; i < N_KERNELS; ++i) {
        const Kernel &o = KERNELS[i];
        if (o.kind != 0 || strstr(o.name, "tvmfold"))
            continue;
        float tl = 0, tt = 0;
        for (int j = 0; j < N_KERNELS; ++j) {
            const Kernel &v = KERNELS[j];
            if (v.kind != 1 || v.stages != o.stages || !ok[j])
                continue;
            if (strstr(v.name, "ldgsts"))
                tl = ms[j];
            else
                tt = ms[j];
        }
        if (!ok[i])
            continue;
        printf("| %d | %.3f | %.3f |\n", o.stages,
               tl > 0 ? tl / ms[i] : 0, tt > 0 ? tt / ms[i] : 0);
    }
    printf("\ncorrectness: %s (every kernel's %d checksums compared exactly "
           "before timing)\n", failures ? "FAILURES above" : "all exact",
           OUTS);
    if (csv)
        fclose(csv);
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dOut));
    return failures ? 1 : 0;
}
