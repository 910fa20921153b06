// One GEMM kernel of bench/gpu/gemm in a translation unit of its own, with
// a host launcher the harness calls: the CUDA TVM generated (through
// tiledispatch's bridge, or TVM's own dispatcher) defines helpers of the
// same names in both builds (some of them host functions, `max(half,
// half)`), so each is compiled apart, inside an unnamed namespace (its
// names local to the object file); the headers it includes come first,
// outside it.
//   nvcc -DKFILE='"td.cu"' -Dgemm_kernel=td_gemm_kernel -DLAUNCH=launch_td -c kernel.cu
// KFILE's `extern "C" __global__ void gemm_kernel(half *A, half *B, float *D)`
// (D = alpha A B^T, grid (N/128, M/128), block 128: examples/tvm_gemm.py)
// is renamed by the -D, so that the object files link together.
#include <cstdint>
#include <type_traits>

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {
#include KFILE
}

extern "C" cudaError_t LAUNCH(dim3 grid, dim3 block, const void *A, const void *B, void *D,
                              cudaStream_t stream)
{
    gemm_kernel<<<grid, block, 0, stream>>>((half *)A, (half *)B, (float *)D);
    return cudaGetLastError();
}
