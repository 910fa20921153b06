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
 * runtime's (tests/cuda/emu/cuda_runtime.h, TD_EMU_HAS_HALF); under
 * another runtime (the harness test's fake one) they are these: the
 * conversions for normal numbers and zero, and from float for the bench's
 * data (multiples of 1/8 in [-4, 4), exact in float16; anything else
 * aborts). */
#ifndef TD_EMU_HAS_HALF
struct __half {
    unsigned short x;
};

static inline float __half2float(__half h)
{
    int sign = h.x >> 15, exp = (h.x >> 10) & 31, man = h.x & 1023;
    if (exp == 0 && man == 0)
        return sign ? -0.0f : 0.0f;
    if (exp == 0 || exp == 31)
        abort(); /* subnormals, infinities and NaNs: not the bench's data */
    float v = ldexpf(1.0f + man / 1024.0f, exp - 15);
    return sign ? -v : v;
}

static inline __half __float2half(float f)
{
    __half h = {0};
    if (f == 0.0f)
        return h;
    int e;
    float m = frexpf(fabsf(f), &e); /* f = m * 2^e, m in [0.5, 1) */
    float man = (m * 2.0f - 1.0f) * 1024.0f;
    if (man != floorf(man) || e - 1 + 15 <= 0 || e - 1 + 15 >= 31)
        abort(); /* not exact in float16: not the bench's data */
    h.x = (unsigned short)((f < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) |
                           (int)man);
    return h;
}
#endif
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
