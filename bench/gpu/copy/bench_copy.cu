/*
 * GPU benchmark of the copy family: the code tiledispatch emits for
 * CTA-scope tile copies beside the code TVM 0.27 generates for the same
 * calls, and a plain device-to-device copy of the same bytes, all in one
 * run.  The kernels are generated (gen/, by gen.py): this file only checks
 * and times them.
 *
 * Cases (gen/cases.h), one tile per CTA of 128 threads:
 *   gsg   global -> shared -> global, no compute, enough tiles for 512 MiB
 *         read and 512 MiB written per launch; beside it a D2D kernel (one
 *         16-byte load and store per thread) and cudaMemcpyAsync D2D over
 *         the same bytes;
 *   ldst  shared -> registers -> shared through ldmatrix / stmatrix, ITERS
 *         times two round trips per tile, between one staging copy in and
 *         one out (the loop is about 95% of the kernel's time).
 *
 * Every kernel first runs once on random bytes into an output poisoned
 * with 0xA5, and the whole output (and 4 KiB of sentinel past its end) is
 * compared bit for bit with the input; a kernel that fails is not timed.
 * Then REPS rounds each launch every implementation once (interleaved, so
 * clock and thermal drift fall on all alike), each launch timed with CUDA
 * events; the table shows medians.  Bandwidth counts bytes read plus bytes
 * written (global memory for gsg, shared memory through ldmatrix +
 * stmatrix for ldst).
 *
 *   bench_copy [CSV]     the table on stdout, every launch in CSV
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

typedef void (*launch_fn)(const void *, void *, cudaStream_t);
typedef int (*occ_fn)(void);

#define DECL(NAME, KIND, EB, TE, TH, TILES, ITERS, LAY)                      \
    extern "C" void ours_launch_##NAME(const void *, void *, cudaStream_t);  \
    extern "C" void tvm_launch_##NAME(const void *, void *, cudaStream_t);   \
    extern "C" int ours_blocks_per_sm_##NAME(void);                          \
    extern "C" int tvm_blocks_per_sm_##NAME(void);
COPY_CASES(DECL)
#undef DECL

struct Case {
    const char *name;
    int kind; /* 0 gsg, 1 ldst */
    int elem_bytes, tile_elems, threads, tiles, iters;
    const char *layout;
    launch_fn ours, tvm;
    occ_fn ours_occ, tvm_occ;
};

static const Case CASES[] = {
#define ROW(NAME, KIND, EB, TE, TH, TILES, ITERS, LAY)                       \
    {#NAME, KIND, EB, TE, TH, TILES, ITERS, LAY, ours_launch_##NAME,         \
     tvm_launch_##NAME, ours_blocks_per_sm_##NAME, tvm_blocks_per_sm_##NAME},
    COPY_CASES(ROW)
#undef ROW
};

/* The plain D2D copy: one 16-byte load and store per thread. */
__global__ void __launch_bounds__(256)
d2d_v4(const uint4 *__restrict__ a, uint4 *__restrict__ b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = a[i];
}

static size_t g_bytes; /* the bytes of the case the launchers below copy */

static void d2d_kernel_launch(const void *a, void *b, cudaStream_t s)
{
    size_t n = g_bytes / 16;
    d2d_v4<<<(unsigned)((n + 255) / 256), 256, 0, s>>>((const uint4 *)a,
                                                       (uint4 *)b, n);
}

static void d2d_memcpy_launch(const void *a, void *b, cudaStream_t s)
{
    CK(cudaMemcpyAsync(b, a, g_bytes, cudaMemcpyDeviceToDevice, s));
}

enum { REPS = 25, WARM = 3, GUARD = 4096 };
enum { I_OURS, I_TVM, I_D2D, I_MEMCPY, N_IMPL };
static const char *IMPL[N_IMPL] = {"ours", "tvm", "d2d_kernel",
                                   "cudaMemcpy_d2d"};

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs one implementation on poisoned output and compares every byte and
   the guard past the end; prints the first difference. */
static bool check(const Case &c, int impl, launch_fn f, const void *dA,
                  void *dB, const unsigned char *hA, unsigned char *hB,
                  size_t bytes)
{
    CK(cudaMemset(dB, 0xA5, bytes + GUARD));
    f(dA, dB, 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hB, dB, bytes + GUARD, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < bytes + GUARD; ++i) {
        unsigned char want = i < bytes ? hA[i] : 0xA5;
        if (hB[i] != want) {
            size_t tile = i / ((size_t)c.tile_elems * c.elem_bytes);
            printf("%s %s: WRONG at byte %zu (tile %zu%s): got 0x%02x, "
                   "want 0x%02x\n", c.name, IMPL[impl], i, tile,
                   i < bytes ? "" : ", past the end", hB[i], want);
            return false;
        }
    }
    return true;
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
    printf("device: %s, %d SMs, %d KiB shared per SM, max clock %d MHz, "
           "memory %d MHz x %d bit\n", prop.name, prop.multiProcessorCount,
           (int)(prop.sharedMemPerMultiprocessor / 1024), clock_khz / 1000,
           mem_khz / 1000, bus);
    size_t max_bytes = 0;
    for (const Case &c : CASES)
        max_bytes = std::max(max_bytes, (size_t)c.tiles * c.tile_elems *
                                            c.elem_bytes);
    void *dA, *dB;
    CK(cudaMalloc(&dA, max_bytes + GUARD));
    CK(cudaMalloc(&dB, max_bytes + GUARD));
    std::vector<unsigned char> hA(max_bytes + GUARD), hB(max_bytes + GUARD);
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < max_bytes; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(&hA[i], &x, std::min<size_t>(8, max_bytes - i));
    }
    CK(cudaMemcpy(dA, hA.data(), max_bytes, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (csv)
        fprintf(csv, "case,impl,rep,ms\n");

    struct Row {
        const Case *c;
        float ms[N_IMPL];
        bool ok[N_IMPL];
        int occ[2];
    };
    std::vector<Row> rows;
    int failures = 0;
    for (const Case &c : CASES) {
        size_t bytes = (size_t)c.tiles * c.tile_elems * c.elem_bytes;
        g_bytes = bytes;
        launch_fn fns[N_IMPL] = {c.ours, c.tvm, d2d_kernel_launch,
                                 d2d_memcpy_launch};
        int n_impl = c.kind == 0 ? N_IMPL : 2;
        Row r = {&c, {0}, {false}, {c.ours_occ(), c.tvm_occ()}};
        for (int i = 0; i < n_impl; ++i) {
            r.ok[i] = check(c, i, fns[i], dA, dB, hA.data(), hB.data(),
                            bytes);
            failures += !r.ok[i];
        }
        std::vector<float> t[N_IMPL];
        for (int rep = -WARM; rep < REPS; ++rep) {
            for (int i = 0; i < n_impl; ++i) {
                if (!r.ok[i])
                    continue;
                CK(cudaEventRecord(e0));
                fns[i](dA, dB, 0);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (rep < 0)
                    continue;
                t[i].push_back(ms);
                if (csv)
                    fprintf(csv, "%s,%s,%d,%.6f\n", c.name, IMPL[i], rep,
                            ms);
            }
        }
        for (int i = 0; i < n_impl; ++i)
            r.ms[i] = r.ok[i] ? median(t[i]) : 0;
        rows.push_back(r);
    }

    /* GB/s: bytes read + written per launch / median time. */
    auto gbs = [](const Row &r, int i) {
        const Case &c = *r.c;
        double bytes = (double)c.tiles * c.tile_elems * c.elem_bytes * 2;
        if (c.kind == 1)
            bytes *= (double)c.iters * 2; /* two round trips per iter */
        return r.ms[i] > 0 ? bytes / (r.ms[i] * 1e-3) / 1e9 : 0.0;
    };
    printf("\n### global -> shared -> global, one tile per CTA of 128 "
           "threads (GB/s = bytes read + written per launch / median time; "
           "ns per tile = median time / tiles, whole GPU)\n\n");
    printf("| case | shared layout | tiles | blocks/SM ours, TVM | ours GB/s "
           "| TVM GB/s | D2D kernel GB/s | cudaMemcpy D2D GB/s | ours ns/tile "
           "| TVM ns/tile | ours/TVM | ours/D2D | ours/cudaMemcpy |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row &r : rows) {
        const Case &c = *r.c;
        if (c.kind != 0)
            continue;
        double o = gbs(r, I_OURS), v = gbs(r, I_TVM), d = gbs(r, I_D2D),
               m = gbs(r, I_MEMCPY);
        printf("| %s | %s | %d | %d, %d | %.0f | %.0f | %.0f | %.0f | %.2f "
               "| %.2f | %.3f | %.3f | %.3f |\n", c.name, c.layout, c.tiles,
               r.occ[0], r.occ[1], o, v, d, m,
               r.ms[I_OURS] * 1e6 / c.tiles, r.ms[I_TVM] * 1e6 / c.tiles,
               v > 0 ? o / v : 0, d > 0 ? o / d : 0, m > 0 ? o / m : 0);
    }
    printf("\n### shared -> registers -> shared (ldmatrix / stmatrix x4, "
           "float16 [4, 8, 4, 4, 2] per CTA, the mma fragment of TVM's "
           "test_ld_stmatrix.py; GB/s = shared bytes through ldmatrix + "
           "stmatrix / median time; ns = median time / (tiles x round "
           "trips), whole GPU)\n\n");
    printf("| case | shared layout | tiles x round trips | blocks/SM ours, "
           "TVM | ours GB/s | TVM GB/s | ours ns/round trip | TVM ns/round "
           "trip | ours/TVM |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (const Row &r : rows) {
        const Case &c = *r.c;
        if (c.kind != 1)
            continue;
        double o = gbs(r, I_OURS), v = gbs(r, I_TVM);
        double trips = (double)c.tiles * c.iters * 2;
        printf("| %s | %s | %d x %d | %d, %d | %.0f | %.0f | %.4f | %.4f | "
               "%.3f |\n", c.name, c.layout, c.tiles, c.iters * 2, r.occ[0],
               r.occ[1], o, v, r.ms[I_OURS] * 1e6 / trips,
               r.ms[I_TVM] * 1e6 / trips, v > 0 ? o / v : 0);
    }
    printf("\ncorrectness: %s (every kernel's whole output and a %d-byte "
           "guard compared bit for bit before timing)\n",
           failures ? "FAILURES above" : "all bit-exact", GUARD);
    if (csv)
        fclose(csv);
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    return failures ? 1 : 0;
}
