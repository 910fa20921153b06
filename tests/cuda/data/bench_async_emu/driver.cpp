/*
 * Runs the copy_async bench's kernels of ours (bench/gpu/copy_async/gen/
 * ours_gen.cu, made host C++ by tests/cuda/bench_copy_async.py --emu) on
 * the CPU stand-in for a small grid, and checks every thread's checksum
 * as the bench's harness does: A holds multiples of 1/8 in [-4, 4), so
 * each sum is exact.  The stand-in's cp.async copies at once, so this
 * checks the emitted body's partition of the tile and the skeleton's
 * stage and tile indexing, not the asynchrony (the GPU run does).
 * Prints PASS NAME or FAIL NAME per kernel; exit 1 if any failed.
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>

#include "ours_gen_host.cpp"
#include "emu_list.h"

enum { CTAS = 2, THREADS = 128, TILES = 16, ROWS = 128, COLS = 64 };

static int run_one(const char *name,
                   int (*launch)(const void *, float *, int, cudaStream_t))
{
    size_t n = (size_t)CTAS * TILES * ROWS * COLS;
    std::vector<__half> a(n);
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i] = __float2half((float)((int)(x >> 58) - 32) / 8.0f);
    }
    std::vector<float> out(CTAS * THREADS, -1.0f);
    if (launch(a.data(), out.data(), CTAS, 0) != 0) {
        printf("FAIL %s: launch failed\n", name);
        return 1;
    }
    for (int b = 0; b < CTAS; ++b)
        for (int t = 0; t < THREADS; ++t) {
            double s = 0;
            for (int k = 0; k < TILES; ++k)
                for (int j = 0; j < COLS; ++j)
                    s += __half2float(
                        a[(((size_t)b * TILES + k) * ROWS + t) * COLS + j]);
            if (out[b * THREADS + t] != (float)s) {
                printf("FAIL %s: CTA %d thread %d: got %g, want %g\n", name,
                       b, t, out[b * THREADS + t], s);
                return 1;
            }
        }
    printf("PASS %s\n", name);
    return 0;
}

int main(void)
{
    int bad = 0;
#define RUN(NAME) bad += run_one(#NAME, NAME##_launch);
    EMU_OURS(RUN)
#undef RUN
    return bad ? 1 : 0;
}
