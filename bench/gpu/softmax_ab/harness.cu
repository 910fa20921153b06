// A/B harness for the softmax kernels of examples/tvm_softmax.py: times
// KFILE's softmax_kernel (grid 2048, block 128) with CUDA events, median
// of 21 timings of 50 launches, after checking it against a CPU softmax.
#include <cstdio>
#include <cmath>
#include <vector>
#include <algorithm>
#include KFILE
int main() {
  const int R = 2048 * 16, C = 128;
  std::vector<float> h(R * C), o(R * C);
  unsigned s = 1;
  for (auto &x : h) { s = s * 1664525u + 1013904223u; x = ((s >> 8) % 2001) / 1000.0f - 1.0f; }
  float *x, *y;
  cudaMalloc(&x, R * C * 4); cudaMalloc(&y, R * C * 4);
  cudaMemcpy(x, h.data(), R * C * 4, cudaMemcpyHostToDevice);
  softmax_kernel<<<2048, 128>>>(x, y);
  cudaMemcpy(o.data(), y, R * C * 4, cudaMemcpyDeviceToHost);
  double err = 0;
  for (int r = 0; r < R; r++) {
    float m = -1e30f; for (int c = 0; c < C; c++) m = std::max(m, h[r*C+c]);
    double sum = 0; for (int c = 0; c < C; c++) sum += std::exp(h[r*C+c] - m);
    for (int c = 0; c < C; c++) err = std::max(err, std::fabs(std::exp(h[r*C+c]-m)/sum - o[r*C+c]));
  }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int k = 0; k < 21; k++) {
    cudaEventRecord(a);
    for (int i = 0; i < 50; i++) softmax_kernel<<<2048, 128>>>(x, y);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1000 / 50);
  }
  std::sort(t.begin(), t.end());
  printf("%-14s median %.2f us  min %.2f us  maxerr %.2e %s\n", NAME, t[10], t[0], err,
         cudaGetLastError() == cudaSuccess && err < 1e-5 ? "PASS" : "FAIL");
}
