// Baseline for the plan's GEMM bench (design/gemm/plan.md section 7.3):
// times KFILE's gemm_kernel (TVM 0.27's own dispatcher, 4096^3, D = A B^T,
// f16 in, f32 out; grid (N/128, M/128), block 128) against cuBLAS on the
// same problem, checks the kernel against cuBLAS and against a float64
// reference on 4096 sampled elements.  Median of 21 timings of 10 launches.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include KFILE

static float median_us(std::vector<float> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const int M = 4096, N = 4096, K = 4096;
  std::vector<__half> hA((size_t)M * K), hB((size_t)N * K);
  std::vector<float> fA(hA.size()), fB(hB.size());
  unsigned s = 1;
  for (size_t i = 0; i < hA.size(); i++) {
    s = s * 1664525u + 1013904223u;
    hA[i] = __float2half(((s >> 8) % 2001) / 1000.0f - 1.0f); fA[i] = __half2float(hA[i]);
  }
  for (size_t i = 0; i < hB.size(); i++) {
    s = s * 1664525u + 1013904223u;
    hB[i] = __float2half(((s >> 8) % 2001) / 1000.0f - 1.0f); fB[i] = __half2float(hB[i]);
  }
  __half *A, *B; float *D, *R;
  cudaMalloc(&A, hA.size() * 2); cudaMalloc(&B, hB.size() * 2);
  cudaMalloc(&D, (size_t)M * N * 4); cudaMalloc(&R, (size_t)M * N * 4);
  cudaMemcpy(A, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(B, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice);
  dim3 grid(N / 128, M / 128), block(128);
  gemm_kernel<<<grid, block>>>(A, B, D);
  cublasHandle_t h; cublasCreate(&h);
  const float one = 1.0f, zero = 0.0f;
  // Row-major D[M][N] = A[M][K] B[N][K]^T is column-major D^T = B A^T:
  // cuBLAS computes C(NxM) = op(B)(NxK) op(A)(KxM) with B, A given as
  // column-major KxN / KxM (their row-major storage), op = T on B.
  auto cublas = [&] {
    cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16F, K, A, CUDA_R_16F, K,
                 &zero, R, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  cublas();
  cudaDeviceSynchronize();
  std::vector<float> hD((size_t)M * N), hR((size_t)M * N);
  cudaMemcpy(hD.data(), D, hD.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(hR.data(), R, hR.size() * 4, cudaMemcpyDeviceToHost);
  double err_cublas = 0, err_ref = 0, err_cublas_ref = 0;
  for (size_t i = 0; i < hD.size(); i++)
    err_cublas = std::max(err_cublas, (double)std::fabs(hD[i] - hR[i]));
  for (int k = 0; k < 4096; k++) {
    s = s * 1664525u + 1013904223u; int r = (s >> 8) % M;
    s = s * 1664525u + 1013904223u; int c = (s >> 8) % N;
    double ref = 0;
    for (int q = 0; q < K; q++) ref += (double)fA[(size_t)r * K + q] * fB[(size_t)c * K + q];
    err_ref = std::max(err_ref, std::fabs(ref - hD[(size_t)r * N + c]));
    err_cublas_ref = std::max(err_cublas_ref, std::fabs(ref - hR[(size_t)r * N + c]));
  }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> tk, tc;
  for (int rep = 0; rep < 21; rep++) {
    cudaEventRecord(a);
    for (int i = 0; i < 10; i++) gemm_kernel<<<grid, block>>>(A, B, D);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); tk.push_back(ms * 1000 / 10);
    cudaEventRecord(a);
    for (int i = 0; i < 10; i++) cublas();
    cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); tc.push_back(ms * 1000 / 10);
  }
  double flop = 2.0 * M * N * K, uk = median_us(tk), uc = median_us(tc);
  bool ok = cudaGetLastError() == cudaSuccess && err_ref < 0.05;
  printf("%s: median %.1f us = %.1f TFLOP/s; cuBLAS median %.1f us = %.1f TFLOP/s; "
         "fraction of cuBLAS %.3f\n", NAME, uk, flop / uk * 1e-6, uc, flop / uc * 1e-6, uc / uk);
  printf("max |kernel - cuBLAS| %.3e, max |kernel - f64 ref| %.3e, max |cuBLAS - f64 ref| "
         "%.3e (4096 samples) %s\n", err_cublas, err_ref, err_cublas_ref, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
