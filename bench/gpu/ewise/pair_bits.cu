// Checks, over every float16 and every bfloat16 input, that the paired
// math the elementwise variants emit gives the bits of the scalar code it
// replaces: h2exp vs hexp, h2exp2 vs hexp2, and __hadd2 / __hmul2 /
// __hmax2 vs __hadd / __hmul / __hmax (one operand swept, the other a
// fixed set).  Prints the count of differing results per function.
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T, typename T2>
__global__ void check(unsigned long long *bad)
{
  unsigned u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= 65536) return;
  unsigned short us = (unsigned short)u, vs = (unsigned short)(u * 40503u >> 3);
  T a = *(T *)&us, b = *(T *)&vs;
  T2 p = {a, b}, q = {b, a};
  T2 r[5] = {h2exp(p), h2exp2(p), __hadd2(p, q), __hmul2(p, q), __hmax2(p, q)};
  T s[5][2] = {{hexp(a), hexp(b)}, {hexp2(a), hexp2(b)},
               {__hadd(a, b), __hadd(b, a)}, {__hmul(a, b), __hmul(b, a)},
               {__hmax(a, b), __hmax(b, a)}};
  for (int k = 0; k < 5; k++) {
    T lo = __low2half(r[k]), hi = __high2half(r[k]);
    if (*(unsigned short *)&lo != *(unsigned short *)&s[k][0] ||
        *(unsigned short *)&hi != *(unsigned short *)&s[k][1])
      atomicAdd(&bad[k], 1ULL);
  }
}
__device__ __forceinline__ __nv_bfloat16 __low2half(__nv_bfloat162 v) { return __low2bfloat16(v); }
__device__ __forceinline__ __nv_bfloat16 __high2half(__nv_bfloat162 v) { return __high2bfloat16(v); }

int main()
{
  const char *fn[5] = {"exp", "exp2", "add", "mul", "max"};
  unsigned long long *d, h[5];
  cudaMalloc(&d, sizeof h);
  for (int t = 0; t < 2; t++) {
    cudaMemset(d, 0, sizeof h);
    if (t == 0) check<__half, __half2><<<256, 256>>>(d);
    else check<__nv_bfloat16, __nv_bfloat162><<<256, 256>>>(d);
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
      printf("CUDA error\n");
      return 1;
    }
    for (int k = 0; k < 5; k++)
      printf("%s %s: %llu of 65536 inputs differ\n",
             t == 0 ? "float16" : "bfloat16", fn[k], h[k]);
  }
  return 0;
}
