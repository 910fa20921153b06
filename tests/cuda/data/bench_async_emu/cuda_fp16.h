/*
 * A CPU stand-in for the few float16 names the copy_async bench's kernels
 * of ours use (bench/gpu/copy_async/gen/ours_gen.cu), beside the stand-in
 * runtime of tests/cuda/emu/: `half` as
 * the stand-in's __half (its 16 bits, conversions rounding to nearest
 * even), the half2 pair and its conversion to float2.  Also the runtime
 * names the bench's launchers use that the stand-in runtime lacks.
 * tests/cuda/bench_copy_async.py --emu puts it first on the include path.
 */
#ifndef TD_BENCH_ASYNC_EMU_FP16_H
#define TD_BENCH_ASYNC_EMU_FP16_H
#include <cuda_runtime.h>
#include <cmath>
#include <cstdlib>

#define __launch_bounds__(n)
#define __align__(n) alignas(n)
typedef struct td_emu_stream *cudaStream_t;

struct float2 {
    float x, y;
};
/* __half and its conversions (round to nearest even) are the stand-in
 * runtime's (tests/cuda/emu/cuda_runtime.h). */
typedef __half half;
struct __half2 {
    __half x, y;
};

static inline float2 __half22float2(__half2 h)
{
    return float2{__half2float(h.x), __half2float(h.y)};
}

template <typename K>
static inline cudaError_t
cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, K, int, size_t)
{
    *n = 0;
    return cudaSuccess;
}
#endif
