/*
 * GPU benchmark of the copy_async family (issue 24's item 6): a pipelined
 * global -> shared load of [128, 64] float16 tiles, the code tiledispatch
 * emits (by ldgsts, and by TMA with the host encode `tiledispatch
 * tensor-maps` prints) beside the code TVM 0.27 generates, and a plain
 * device-to-device copy of the same bytes, all in one run.  The kernels are generated (gen/,
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
 * Isolation: a kernel that faults (a misaligned TMA destination, say)
 * leaves a sticky error that ends its CUDA context, so every kernel is
 * checked in a child process of its own (fork before this process touches
 * CUDA), which prints its verdict by name at once; a kernel whose check
 * fails is reported FAILED and not timed.  The timing runs in one more
 * child (interleaved rounds need one context); should a kernel fault there,
 * the parent learns its name from shared memory, marks it FAILED and times
 * the rest again.  Each child has a time limit (SIGALRM), so a pipeline
 * that waits forever on an mbarrier is reported too.
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
 *
 * Exit 0 when every kernel is right, 1 when some kernel failed (the table
 * shows the others), 3 when the harness itself could not run (no device).
 */
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cases.h"

/* What a child leaves for the parent: the implementation it was running
   (-1: none, the harness itself) and the CUDA error that ended it. */
struct Shared {
    int current;
    char error[96];
};
static Shared *g_shared;

static void cuda_failed(cudaError_t e, const char *file, int line,
                        const char *expr)
{
    fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e),
            file, line, expr);
    snprintf(g_shared->error, sizeof g_shared->error, "%s",
             cudaGetErrorName(e));
    fflush(stdout);
    _exit(3);
}

#define CK(expr)                                                           \
    do {                                                                   \
        cudaError_t e_ = (expr);                                           \
        if (e_ != cudaSuccess)                                             \
            cuda_failed(e_, __FILE__, __LINE__, #expr);                    \
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
/* seconds a child may run: a check (a context, 69 MB up, one launch)
   takes a second or two, the timing (some 4,000 launches of ~20 us) a few;
   the harness's own test shortens the check's */
#ifndef ASYNC_CHECK_LIMIT_S
#define ASYNC_CHECK_LIMIT_S 20
#endif
enum { CHECK_LIMIT_S = ASYNC_CHECK_LIMIT_S, TIME_LIMIT_S = 120 };
enum { N_IMPL = N_KERNELS + 2, D2D = N_KERNELS, MEMCPY = N_KERNELS + 1 };

static const char *impl_name(int i)
{
    return i < N_KERNELS ? KERNELS[i].name
           : i == D2D    ? "d2d_kernel"
                         : "cudaMemcpy_d2d";
}

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* The input, made on the host before any fork: every child shares it. */
static std::vector<__half> g_a;
static std::vector<float> g_want;

static void make_input(void)
{
    g_a.resize(ELEMS);
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < ELEMS; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        g_a[i] = __float2half((float)((int)(x >> 58) - 32) / 8.0f);
    }
    /* the checksum of thread t of CTA b: its row of every tile of the CTA */
    g_want.resize(OUTS);
    for (int b = 0; b < ASYNC_CTAS; ++b)
        for (int t = 0; t < ASYNC_THREADS; ++t) {
            double s = 0;
            for (int k = 0; k < ASYNC_TILES; ++k) {
                size_t row = ((size_t)b * ASYNC_TILES + k) * TILE +
                             (size_t)t * ASYNC_TILE_COLS;
                for (int j = 0; j < ASYNC_TILE_COLS; ++j)
                    s += __half2float(g_a[row + j]);
            }
            g_want[b * ASYNC_THREADS + t] = (float)s;
        }
}

/* Device copies of the input and the outputs of one child. */
struct Device {
    void *a, *b;
    float *out;
};

static Device device_setup(bool with_b)
{
    Device d = {NULL, NULL, NULL};
    CK(cudaMalloc(&d.a, BYTES));
    if (with_b)
        CK(cudaMalloc(&d.b, BYTES));
    CK(cudaMalloc(&d.out, OUTS * sizeof(float)));
    CK(cudaMemcpy(d.a, g_a.data(), BYTES, cudaMemcpyHostToDevice));
    return d;
}

/* Child: the device and the workload, the first CUDA call of the run. */
static int child_info(void)
{
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
    return 0;
}

/* Child: runs kernel i once on a poisoned output and compares every
   checksum; exit 0 right, 1 wrong, 2 not launched, 3 a CUDA error. */
static int child_check(int i)
{
    const Kernel &k = KERNELS[i];
    Device d = device_setup(false);
    CK(cudaMemset(d.out, 0xA5, OUTS * sizeof(float)));
    g_shared->current = i;
    int r = k.launch(d.a, d.out, ASYNC_CTAS, 0);
    if (r != 0) {
        printf("check %s: FAILED to launch (%d)\n", k.name, r);
        return 2;
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> got(OUTS);
    CK(cudaMemcpy(got.data(), d.out, OUTS * sizeof(float),
                  cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int j = 0; j < OUTS; ++j)
        if (got[j] != g_want[j] && bad++ == 0)
            printf("check %s: WRONG checksum of CTA %d thread %d: got %.9g, "
                   "want %.9g\n", k.name, j / ASYNC_THREADS,
                   j % ASYNC_THREADS, got[j], g_want[j]);
    if (bad) {
        printf("check %s: FAILED, %d of %d checksums wrong\n", k.name, bad,
               OUTS);
        return 1;
    }
    printf("check %s: ok (%d checksums exact)\n", k.name, OUTS);
    return 0;
}

/* Child: times the implementations with ok[i] set, interleaved, and prints
   the tables (the failed ones as FAILED with why[i]); exit 0, 1 when the
   D2D kernel copied wrong, 3 when a CUDA error ends it (g_shared->current
   names the implementation). */
static int child_time(const std::vector<bool> &ok0,
                      const std::vector<const char *> &why0, const char *csv_path)
{
    std::vector<bool> ok = ok0;
    std::vector<const char *> why = why0;
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv) {
        perror(csv_path);
        return 3;
    }
    Device d = device_setup(true);
    size_t n16 = BYTES / 16;
    auto run = [&](int i) {
        g_shared->current = i;
        if (i < N_KERNELS) {
            KERNELS[i].launch(d.a, d.out, ASYNC_CTAS, 0);
        } else if (i == D2D) {
            d2d_v4<<<(unsigned)((n16 + 255) / 256), 256>>>(
                (const uint4 *)d.a, (uint4 *)d.b, n16);
        } else {
            CK(cudaMemcpyAsync(d.b, d.a, BYTES, cudaMemcpyDeviceToDevice, 0));
        }
    };
    /* the D2D kernel must copy too, or its time means nothing */
    CK(cudaMemset(d.b, 0, BYTES));
    run(D2D);
    CK(cudaDeviceSynchronize());
    {
        std::vector<__half> hb(ELEMS);
        CK(cudaMemcpy(hb.data(), d.b, BYTES, cudaMemcpyDeviceToHost));
        if (memcmp(hb.data(), g_a.data(), BYTES) != 0) {
            printf("check d2d_kernel: FAILED, wrong copy\n");
            ok[D2D] = false;
            why[D2D] = "wrong copy";
        }
    }
    g_shared->current = -1;

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (csv)
        fprintf(csv, "impl,rep,ms\n");
    std::vector<std::vector<float>> t(N_IMPL);
    for (int rep = -WARM; rep < REPS; ++rep)
        for (int i = 0; i < N_IMPL; ++i) {
            if (!ok[i])
                continue;
            g_shared->current = i;
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
                fprintf(csv, "%s,%d,%.6f\n", impl_name(i), rep, ms);
        }
    g_shared->current = -1;
    std::vector<float> ms(N_IMPL, 0);
    for (int i = 0; i < N_IMPL; ++i)
        ms[i] = ok[i] ? median(t[i]) : 0;
    auto gbs = [&](int i, double bytes) {
        return ms[i] > 0 ? bytes / (ms[i] * 1e-3) / 1e9 : 0.0;
    };
    double d2d = gbs(D2D, 2.0 * BYTES), mcp = gbs(MEMCPY, 2.0 * BYTES);

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
            printf("| %s | %d | %d | FAILED | | | | %s: %s |\n", k.name,
                   k.stages, k.occ(), k.desc, why[i]);
            continue;
        }
        printf("| %s | %d | %d | %.2f | %.0f | %.3f | %.3f | %s |\n",
               k.name, k.stages, k.occ(), ms[i] * 1e3, g,
               d2d > 0 ? g / d2d : 0, mcp > 0 ? g / mcp : 0, k.desc);
    }
    if (ok[D2D])
        printf("| d2d_kernel | | | %.2f | %.0f | 1.000 | %.3f | one 16-byte "
               "load + store per thread, %.1f MB each way |\n",
               ms[D2D] * 1e3, d2d, mcp > 0 ? d2d / mcp : 0, BYTES / 1e6);
    else
        printf("| d2d_kernel | | | FAILED | | | | %s |\n", why[D2D]);
    if (ok[MEMCPY])
        printf("| cudaMemcpy_d2d | | | %.2f | %.0f | %.3f | 1.000 | "
               "cudaMemcpyAsync device to device, the same bytes |\n",
               ms[MEMCPY] * 1e3, mcp, d2d > 0 ? mcp / d2d : 0);
    else
        printf("| cudaMemcpy_d2d | | | FAILED | | | | %s |\n", why[MEMCPY]);

    /* ours against TVM at the same stages: per stage count, the median
       time of ours by ldgsts (the rotated fold) and by TMA, and TVM's two */
    printf("\n### ours / TVM (time ratio TVM / ours: > 1 means ours is "
           "faster)\n\n| stages | ours ldgsts / TVM ldgsts | ours TMA / "
           "TVM TMA | ours ldgsts / TVM TMA |\n|---|---|---|---|\n");
    for (int st = 1; st <= 16; ++st) {
        float t[2][2] = {{0, 0}, {0, 0}}; /* [ours, TVM][ldgsts, TMA] */
        for (int j = 0; j < N_KERNELS; ++j) {
            const Kernel &v = KERNELS[j];
            if (v.stages != st || !ok[j] || strstr(v.name, "tvmfold") ||
                (v.kind != 0 && v.kind != 1))
                continue;
            t[v.kind][strstr(v.name, "tma") != NULL] = ms[j];
        }
        if (t[0][0] <= 0 && t[0][1] <= 0)
            continue;
        /* a kernel that failed leaves its columns empty */
        char a[16] = "", b[16] = "", c[16] = "";
        if (t[1][0] > 0 && t[0][0] > 0)
            snprintf(a, sizeof a, "%.3f", t[1][0] / t[0][0]);
        if (t[1][1] > 0 && t[0][1] > 0)
            snprintf(b, sizeof b, "%.3f", t[1][1] / t[0][1]);
        if (t[1][1] > 0 && t[0][0] > 0)
            snprintf(c, sizeof c, "%.3f", t[1][1] / t[0][0]);
        printf("| %d | %s | %s | %s |\n", st, a, b, c);
    }
    int failures = 0;
    for (int i = 0; i < N_IMPL; ++i)
        failures += !ok[i];
    if (failures) {
        printf("\ncorrectness: %d FAILED:", failures);
        for (int i = 0; i < N_IMPL; ++i)
            if (!ok[i])
                printf(" %s (%s)", impl_name(i), why[i]);
        printf("; the others' %d checksums exact before timing\n", OUTS);
    } else {
        printf("\ncorrectness: all exact (every kernel's %d checksums "
               "compared exactly before timing)\n", OUTS);
    }
    if (csv)
        fclose(csv);
    CK(cudaFree(d.a));
    CK(cudaFree(d.b));
    CK(cudaFree(d.out));
    return ok[D2D] ? 0 : 1;
}

enum { CHILD_INFO = -1, CHILD_TIME = -2 };

/* Runs one child (CHILD_INFO, CHILD_TIME or a kernel's check) and returns
   its exit status, or 128 + the signal that ended it (SIGALRM: its time
   limit). */
static int in_child(int what, const std::vector<bool> &ok,
                    const std::vector<const char *> &why, const char *csv)
{
    fflush(stdout); /* or the child prints the parent's buffer again */
    fflush(stderr);
    g_shared->current = -1;
    g_shared->error[0] = 0;
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(3);
    }
    if (pid == 0) {
        alarm(what == CHILD_TIME ? TIME_LIMIT_S : CHECK_LIMIT_S);
        int rc = what == CHILD_INFO   ? child_info()
                 : what == CHILD_TIME ? child_time(ok, why, csv)
                                      : child_check(what);
        fflush(stdout);
        _exit(rc);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        ;
    if (WIFSIGNALED(st)) {
        snprintf(g_shared->error, sizeof g_shared->error, "%s",
                 WTERMSIG(st) == SIGALRM ? "time limit (a hang?)"
                                         : strsignal(WTERMSIG(st)));
        return 128 + WTERMSIG(st);
    }
    return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
    const char *csv = argc > 1 ? argv[1] : NULL;
    g_shared = (Shared *)mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g_shared == MAP_FAILED) {
        perror("mmap");
        return 3;
    }
    make_input();
    std::vector<bool> ok(N_IMPL, true);
    std::vector<const char *> why(N_IMPL, "");
    /* the reasons live as long as the run: one slot per implementation */
    static char reason[N_IMPL][128];
    if (in_child(CHILD_INFO, ok, why, NULL) != 0) {
        printf("no usable device: %s\n", g_shared->error);
        return 3;
    }
    int failures = 0;
    for (int i = 0; i < N_KERNELS; ++i) {
        int rc = in_child(i, ok, why, NULL);
        if (rc == 0)
            continue;
        if (rc > 2 && g_shared->current != i) {
            /* it died before its kernel ran: the harness's fault */
            printf("check %s: the harness failed before the launch: %s\n",
                   KERNELS[i].name, g_shared->error);
            return 3;
        }
        snprintf(reason[i], sizeof reason[i], "%s",
                 rc == 1   ? "wrong checksums"
                 : rc == 2 ? "launch refused"
                           : g_shared->error);
        if (rc > 2)
            printf("check %s: FAILED, %s\n", KERNELS[i].name, reason[i]);
        ok[i] = false;
        why[i] = reason[i];
        failures++;
    }
    /* time what passed; a kernel that faults here is dropped, the rest
       timed again */
    for (int attempt = 0; attempt <= N_IMPL; ++attempt) {
        int rc = in_child(CHILD_TIME, ok, why, csv);
        if (rc <= 1) {
            failures += rc; /* the D2D kernel's copy, checked there */
            break;
        }
        int c = g_shared->current;
        if (c < 0 || !ok[c]) {
            printf("timing: the harness failed: %s\n", g_shared->error);
            return 3;
        }
        snprintf(reason[c], sizeof reason[c], "while timing: %s",
                 g_shared->error);
        printf("timing %s: FAILED, %s; timing the others again\n",
               impl_name(c), reason[c]);
        ok[c] = false;
        why[c] = reason[c];
        failures++;
    }
    return failures ? 1 : 0;
}
