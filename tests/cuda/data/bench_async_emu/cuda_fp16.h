/*
 * A CPU stand-in for the few float16 names the copy_async bench's kernels
 * of ours use (bench/gpu/copy_async/gen/ours_gen.cu), beside the stand-in
 * runtime of tests/cuda/emu/ (which provides no 16-bit floats): half as
 * its 16 bits, the conversions to float for normal numbers and zero, and
 * the conversion from float for the bench's data (multiples of 1/8 in
 * [-4, 4), exact in float16; anything else aborts).  Also the runtime
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
struct __half {
    unsigned short bits;
};
typedef __half half;
struct __half2 {
    __half x, y;
};

static inline float __half2float(__half h)
{
    int sign = h.bits >> 15, exp = (h.bits >> 10) & 31, man = h.bits & 1023;
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
    h.bits = (unsigned short)((f < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) |
                              (int)man);
    return h;
}

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
