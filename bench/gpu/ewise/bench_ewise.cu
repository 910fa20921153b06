// The elementwise GPU benchmark: CTA-scope elementwise ops on shared
// [64, 64] tiles with 128 threads, side by side in one program: the body
// tiledispatch emits (td_NAME), the code TVM 0.27 generates for the same
// call (tvm_NAME, when the header has it), a hand-written reference (16-byte
// accesses, half2 / bfloat162 math, float4) and the shared-memory floor
// (bytes read and written at 128 bytes per SM clock).  Each block stages
// its tiles once and runs the op N times; a time is the difference between
// 2N and N iterations, the median of 9.  Full occupancy: as many blocks as
// fit on every SM, ns per tile per SM; one block per SM: ns per tile.
// Results are compared with the reference's, bit for bit, before timing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "bench_ewise_gen.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { N_ELEM = 4096 };

// ---- the hand-written reference ------------------------------------------
// Shared memory: each thread takes 16-byte chunks (8 halves or 4 floats),
// the loop over the tile unrolled (4 chunks a thread in flight); half2 /
// bfloat162 math, paired conversions.  Registers: the same math over the
// thread's 32 elements, as pairs of the (16-byte aligned) arrays.
template <typename T> struct P2;
template <> struct P2<__half> { typedef __half2 t; };
template <> struct P2<__nv_bfloat16> { typedef __nv_bfloat162 t; };

template <int OP, typename T2>
__device__ __forceinline__ T2 pop(T2 a, T2 b, T2 d)
{
  if (OP == 0) return __hadd2(a, b);
  if (OP == 1) return __hmul2(a, b);
  if (OP == 2) return __hadd2(__hmul2(a, b), d);
  return h2exp(a);
}
template <int OP>
__device__ __forceinline__ float fop(float a, float b, float d)
{
  return OP == 0 ? a + b : OP == 1 ? a * b : OP == 2 ? a * b + d : expf(a);
}
__device__ __forceinline__ __half2 n2(float2 f, __half *) { return __float22half2_rn(f); }
__device__ __forceinline__ __nv_bfloat162 n2(float2 f, __nv_bfloat16 *) { return __float22bfloat162_rn(f); }
__device__ __forceinline__ float2 w2(__half2 h) { return __half22float2(h); }
__device__ __forceinline__ float2 w2(__nv_bfloat162 h) { return __bfloat1622float2(h); }

// One 16-byte chunk of 8 halves at i (smem) or a pair-array stretch (reg).
template <int OP, typename T>
__device__ __forceinline__ void chunk16(const T *A, const T *B, const T *D,
                                        T *C, int i)
{
  typedef typename P2<T>::t T2;
  uint4 a = *(const uint4 *)&A[i], b = a, d = a, r;
  if (OP < 3) b = *(const uint4 *)&B[i];
  if (OP == 2) d = *(const uint4 *)&D[i];
  const T2 *pa = (const T2 *)&a, *pb = (const T2 *)&b, *pd = (const T2 *)&d;
  T2 *pr = (T2 *)&r;
#pragma unroll
  for (int k = 0; k < 4; k++) pr[k] = pop<OP>(pa[k], pb[k], pd[k]);
  *(uint4 *)&C[i] = r;
}
template <int OP>
__device__ __forceinline__ void chunk16(const float *A, const float *B,
                                        const float *D, float *C, int i)
{
  float4 a = *(const float4 *)&A[i], b = a, d = a, r;
  if (OP < 3) b = *(const float4 *)&B[i];
  if (OP == 2) d = *(const float4 *)&D[i];
  r.x = fop<OP>(a.x, b.x, d.x); r.y = fop<OP>(a.y, b.y, d.y);
  r.z = fop<OP>(a.z, b.z, d.z); r.w = fop<OP>(a.w, b.w, d.w);
  *(float4 *)&C[i] = r;
}
// casts, 4 elements at i
template <int OP, typename T>
__device__ __forceinline__ void chunk16(const float *A, const float *,
                                        const float *, T *C, int i)
{
  typedef typename P2<T>::t T2;
  float4 a = *(const float4 *)&A[i];
  uint2 r;
  T2 *pr = (T2 *)&r;
  pr[0] = n2(make_float2(a.x, a.y), (T *)0);
  pr[1] = n2(make_float2(a.z, a.w), (T *)0);
  *(uint2 *)&C[i] = r;
}
template <int OP, typename T>
__device__ __forceinline__ void chunk16(const T *A, const T *, const T *,
                                        float *C, int i)
{
  typedef typename P2<T>::t T2;
  uint2 a = *(const uint2 *)&A[i];
  const T2 *pa = (const T2 *)&a;
  float2 lo = w2(pa[0]), hi = w2(pa[1]);
  *(float4 *)&C[i] = make_float4(lo.x, lo.y, hi.x, hi.y);
}

template <int REG, int OP, typename TI, typename TO>
__device__ __forceinline__ void ref(TI *A, TI *B, TI *D, TO *C)
{
  // elements a chunk: 16 bytes of the wider type
  enum { W = 16 / (sizeof(TI) > sizeof(TO) ? sizeof(TI) : sizeof(TO)) };
  if (REG) {
#pragma unroll
    for (int i = 0; i < 32; i += W) chunk16<OP>(A, B, D, C, i);
  } else {
#pragma unroll
    for (int s = 0; s < N_ELEM / (128 * W); s++)
      chunk16<OP>(A, B, D, C, (s * 128 + (int)threadIdx.x) * W);
    __syncthreads();
  }
}

// Calls with the sources a case has (1, 2 or 3).
#define ARGS1 A, C
#define ARGS2 A, B, C
#define ARGS3 A, B, D, C

// Registers: each application's result is the next one's first source,
// so the compiler can neither hoist the op out of the loop nor drop
// iterations: the op alternates between C = op(A, ...) and A = op(C, ...)
// (no copies), and a cast's result is converted back into A (the same
// cost for every implementation).
__device__ __forceinline__ float back(float x, float *) { return x; }
__device__ __forceinline__ __half back(__half x, __half *) { return x; }
__device__ __forceinline__ __nv_bfloat16 back(__nv_bfloat16 x, __nv_bfloat16 *) { return x; }
__device__ __forceinline__ float back(__half x, float *) { return __half2float(x); }
__device__ __forceinline__ float back(__nv_bfloat16 x, float *) { return __bfloat162float(x); }
__device__ __forceinline__ __half back(float x, __half *) { return __float2half_rn(x); }
__device__ __forceinline__ __nv_bfloat16 back(float x, __nv_bfloat16 *) { return __float2bfloat16_rn(x); }

// A cast's result converted back into A for the next application, in
// pairs with the paired intrinsics where the source is 16-bit: written out
// so that every implementation pays the same, whatever the compiler would
// make of 32 scalar conversions next to it (it paired them for one
// implementation and not for another: 32 against 96 F2F.BF16.F32 in the
// SASS of the bfloat16 cast's kernels).
template <typename TI, typename TO>
__device__ __forceinline__ void back_all(TI *ra, const TO *rc)
{
#pragma unroll
  for (int i = 0; i < 32; i++) ra[i] = back(rc[i], (TI *)0);
}
__device__ __forceinline__ void back_all(__half *ra, const float *rc)
{
#pragma unroll
  for (int i = 0; i < 32; i += 2)
    *(__half2 *)&ra[i] = __float22half2_rn(make_float2(rc[i], rc[i + 1]));
}
__device__ __forceinline__ void back_all(__nv_bfloat16 *ra, const float *rc)
{
#pragma unroll
  for (int i = 0; i < 32; i += 2)
    *(__nv_bfloat162 *)&ra[i] =
        __float22bfloat162_rn(make_float2(rc[i], rc[i + 1]));
}

// BENCH_UNROLL1 keeps the compiler from unrolling the iteration loop, so
// that successive applications of the op are not interleaved: each timed
// iteration is then the op applied twice (the ping-pong), as a kernel that
// applies it once between other work sees it.
#if BENCH_UNROLL1
#define ITER_PRAGMA _Pragma("unroll 1")
#else
#define ITER_PRAGMA
#endif

// impl 0 tiledispatch, 1 TVM, 2 the reference
#define RUN(NAME, NS, REG, OPC)                                               \
  do {                                                                        \
    if (IMPL == 0) td_##NAME(ARGS##NS);                                       \
    if (IMPL == 1) TVMCALL(NAME, NS);                                         \
    if (IMPL == 2) ref<REG, OPC>(A, B, D, C);                                 \
  } while (0)
#define KERNEL(NAME, NS, TI, TO, REG, OPC)                                    \
  template <int IMPL>                                                         \
  __global__ void __launch_bounds__(128) k_##NAME(const TI *gin, TO *gout,    \
                                                  int iters)                  \
  {                                                                           \
    extern __shared__ __align__(16) unsigned char sm[];                       \
    alignas(16) TI ra[32], rb[32], rd[32];                                    \
    alignas(16) TO rc[32];                                                    \
    TI *A, *B, *D;                                                            \
    TO *C;                                                                    \
    if (REG) {                                                                \
      A = ra; B = rb; D = rd; C = rc;                                         \
      for (int i = 0; i < 32; i++) {                                          \
        ra[i] = gin[threadIdx.x * 32 + i];                                    \
        rb[i] = gin[N_ELEM + threadIdx.x * 32 + i];                           \
        rd[i] = gin[2 * N_ELEM + threadIdx.x * 32 + i];                       \
      }                                                                       \
    } else {                                                                  \
      A = (TI *)sm; B = A + N_ELEM; D = B + N_ELEM;                           \
      C = (TO *)(D + N_ELEM);                                                 \
      for (int i = threadIdx.x; i < 3 * N_ELEM; i += blockDim.x)              \
        A[i] = gin[i];                                                        \
      __syncthreads();                                                        \
    }                                                                         \
    const bool pp = REG && OPC != 4; /* ping-pong A <-> C */                 \
    ITER_PRAGMA                                                               \
    for (int it = 0; it < iters; it += pp ? 2 : 1) {                          \
      asm volatile("" ::: "memory");                                          \
      RUN(NAME, NS, REG, OPC);                                                \
      if (pp) {                                                               \
        TI *A_ = (TI *)C;                                                     \
        TO *C_ = (TO *)A;                                                     \
        {                                                                     \
          TI *A = A_;                                                         \
          TO *C = C_;                                                         \
          RUN(NAME, NS, REG, OPC);                                            \
        }                                                                     \
      } else if (REG) {                                                       \
        back_all(ra, rc);                                                     \
      }                                                                       \
    }                                                                         \
    if (blockIdx.x == 0) {                                                    \
      if (REG)                                                                \
        for (int i = 0; i < 32; i++) gout[threadIdx.x * 32 + i] = rc[i];      \
      else                                                                    \
        for (int i = threadIdx.x; i < N_ELEM; i += blockDim.x)                \
          gout[i] = C[i];                                                     \
    }                                                                         \
  }
#if BENCH_TVM
#define TVMCALL(NAME, NS) tvm_##NAME(ARGS##NS)
#else
#define TVMCALL(NAME, NS) (void)0
#endif
EW_CASES(KERNEL)

static float to_f(float x) { return x; }
static float to_f(__half x) { return __half2float(x); }
static float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
static void from_f(float v, float *x) { *x = v; }
static void from_f(float v, __half *x) { *x = __float2half(v); }
static void from_f(float v, __nv_bfloat16 *x) { *x = __float2bfloat16(v); }

static int sms;
static double ghz;

__global__ void spin(long long cycles, long long *out)
{
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 0) out[blockIdx.x] = clock64() - t0;
}

template <typename TI, typename TO>
static float time_ms(void (*k)(const TI *, TO *, int), int blocks,
                     size_t smem, const TI *in, TO *out, int iters)
{
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  k<<<blocks, 128, smem>>>(in, out, iters);
  CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
  float ms; CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  return ms;
}

template <typename TI, typename TO>
static void run_case(const char *name, int ns, int reg, void (*k0)(const TI *, TO *, int),
                     void (*k1)(const TI *, TO *, int),
                     void (*k2)(const TI *, TO *, int))
{
  size_t smem = reg ? 0 : 3 * N_ELEM * sizeof(TI) + N_ELEM * sizeof(TO);
  std::vector<TI> h(3 * N_ELEM);
  srand(1);
  for (auto &x : h) from_f((float)((rand() % 2001) - 1000) / 500.0f, &x);
  TI *din; TO *dout;
  CK(cudaMalloc(&din, h.size() * sizeof(TI)));
  CK(cudaMalloc(&dout, N_ELEM * sizeof(TO)));
  CK(cudaMemcpy(din, h.data(), h.size() * sizeof(TI), cudaMemcpyHostToDevice));
  void (*ks[3])(const TI *, TO *, int) = {k0, k1, k2};
  std::vector<TO> ref(N_ELEM), got(N_ELEM);
  for (int i = 2; i >= 0; i--) {
    if (i == 1 && !BENCH_TVM) continue;
    CK(cudaFuncSetAttribute(ks[i], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CK(cudaMemset(dout, 0xff, N_ELEM * sizeof(TO)));
    ks[i]<<<1, 128, smem>>>(din, dout, 2);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(i == 2 ? ref.data() : got.data(), dout, N_ELEM * sizeof(TO), cudaMemcpyDeviceToHost));
    if (i != 2) {
      int bad = 0;
      for (int j = 0; j < N_ELEM; j++) if (memcmp(&got[j], &ref[j], sizeof(TO)) != 0) bad++;
      if (bad) fprintf(stderr, "%s impl %d: %d elements differ from the reference's bits\n", name, i, bad);
    }
  }
  // the shared-memory floor (none for registers)
  double bytes = (double)N_ELEM * (ns * sizeof(TI) + sizeof(TO));
  double floor_ns = reg ? 0.0 : bytes / 128.0 / ghz;
  for (int mode = 0; mode < 2; mode++) {
    double r[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
      if (i == 1 && !BENCH_TVM) continue;
      int per = 1;
      if (mode == 0) CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, ks[i], 128, smem));
      int blocks = sms * per, n = (mode == 0 ? 200 : 400) * (reg ? 10 : 1);
      std::vector<double> v;
      time_ms(ks[i], blocks, smem, din, dout, n);
      for (int rep = 0; rep < 9; rep++) {
        float t1 = time_ms(ks[i], blocks, smem, din, dout, n);
        float t2 = time_ms(ks[i], blocks, smem, din, dout, 2 * n);
        v.push_back((t2 - t1) * 1e6 / ((double)blocks * n / sms));
      }
      std::sort(v.begin(), v.end());
      r[i] = v[4];
    }
    printf("%s,%s,%.1f,%.1f,%.1f,%.1f\n", mode == 0 ? "full" : "one", name,
           r[0], r[1], r[2], floor_ns);
  }
  CK(cudaFree(din)); CK(cudaFree(dout));
}

int main()
{
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  long long *dc; CK(cudaMalloc(&dc, 8));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  spin<<<1, 32>>>(1000000, dc); CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(a)); spin<<<1, 32>>>(200000000, dc); CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms; CK(cudaEventElapsedTime(&ms, a, b));
  long long cyc; CK(cudaMemcpy(&cyc, dc, 8, cudaMemcpyDeviceToHost));
  ghz = cyc / (ms * 1e6);
  printf("# SMs %d, SM clock %.3f GHz; mode,case,tiledispatch,tvm,ref,floor (ns per tile per SM)\n", sms, ghz);
#define RX(NAME, NS, TI, TO, REG, OPC) \
  run_case<TI, TO>(#NAME, NS, REG, k_##NAME<0>, k_##NAME<1>, k_##NAME<2>);
  EW_CASES(RX)
  return 0;
}
