/*
 * The fake kernels of tests/cuda/bench_copy_async.py --harness, one per
 * way a kernel of the copy_async bench can go wrong, behind the
 * launcher interface gen.py writes (NAME_launch, NAME_blocks_per_sm).
 * They run on the host against the fake runtime beside this file: the
 * right ones write the checksums the harness expects (thread t of CTA b:
 * its row of every tile of the CTA).
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include "cases.h"

static void checksums(const void *a_, float *out)
{
    const __half *a = (const __half *)a_;
    const int tile = ASYNC_TILE_ROWS * ASYNC_TILE_COLS;
    for (int b = 0; b < ASYNC_CTAS; ++b)
        for (int t = 0; t < ASYNC_THREADS; ++t) {
            float s = 0;
            for (int k = 0; k < ASYNC_TILES; ++k)
                for (int j = 0; j < ASYNC_TILE_COLS; ++j)
                    s += __half2float(a[((size_t)b * ASYNC_TILES + k) * tile +
                                        t * ASYNC_TILE_COLS + j]);
            out[b * ASYNC_THREADS + t] = s;
        }
}

extern "C" int fake_good_launch(const void *a, float *out, int, cudaStream_t)
{
    checksums(a, out);
    return 0;
}

extern "C" int fake_good2_launch(const void *a, float *out, int, cudaStream_t)
{
    checksums(a, out);
    return 0;
}

extern "C" int fake_fault_launch(const void *, float *, int, cudaStream_t)
{
    td_fake_fault();
    return 0;
}

extern "C" int fake_wrong_launch(const void *a, float *out, int, cudaStream_t)
{
    checksums(a, out);
    out[ASYNC_THREADS + 5] += 1.0f;
    return 0;
}

extern "C" int fake_hang_launch(const void *, float *, int, cudaStream_t)
{
    for (;;)
        pause();
}

extern "C" int fake_refuse_launch(const void *, float *, int, cudaStream_t)
{
    return -1000;
}

/* right on a process's first launch (the check), a fault on its second
   (the timing's first warm-up round) */
extern "C" int fake_late_fault_launch(const void *a, float *out, int,
                                      cudaStream_t)
{
    static int calls;
    if (calls++ > 0)
        td_fake_fault();
    else
        checksums(a, out);
    return 0;
}

#define OCC(NAME, KIND, STAGES, DESC) \
    extern "C" int NAME##_blocks_per_sm(void) { return 1; }
ASYNC_CASES(OCC)
#undef OCC
