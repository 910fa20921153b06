
#ifdef __CUDACC_RTC__
  #include <cuda/std/cstdint>
  using cuda::std::uint8_t;
  using cuda::std::uint16_t;
  using cuda::std::uint32_t;
  using cuda::std::uint64_t;
  using cuda::std::int8_t;
  using cuda::std::int16_t;
  using cuda::std::int32_t;
  using cuda::std::int64_t;

  #include <cuda/std/type_traits>
  namespace std {
    using cuda::std::is_same;
    using cuda::std::is_same_v;
    using cuda::std::is_integral;
    using cuda::std::is_signed;
    using cuda::std::is_unsigned;
    using cuda::std::is_floating_point;
    using cuda::std::enable_if;
    using cuda::std::conditional;
  }

  // NVRTC uses asm/volatile instead of __asm__/__volatile__ (gcc extension).
  #ifndef __asm__
  #define __asm__ asm
  #endif
  #ifndef __volatile__
  #define __volatile__ volatile
  #endif
#else
  #include <cstdint>
  #include <type_traits>
  #include <cuda.h>
#endif

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700)
#define __shfl_sync(mask, var, lane, width) \
        __shfl((var), (lane), (width))

#define __shfl_down_sync(mask, var, offset, width) \
        __shfl_down((var), (offset), (width))

#define __shfl_up_sync(mask, var, offset, width) \
        __shfl_up((var), (offset), (width))
#endif

#if (((__CUDACC_VER_MAJOR__ == 11) && (__CUDACC_VER_MINOR__ >= 4)) || \
     (__CUDACC_VER_MAJOR__ > 11))
#define TVM_ENABLE_L2_PREFETCH 1
#else
#define TVM_ENABLE_L2_PREFETCH 0
#endif

#ifdef _WIN32
  using uint = unsigned int;
  using uchar = unsigned char;
  using ushort = unsigned short;
  using int64_t = long long;
  using uint64_t = unsigned long long;
#else
  #define uint unsigned int
  #define uchar unsigned char
  #define ushort unsigned short
#endif
__forceinline__ __device__ void tvm_builtin_ptx_cp_async_bulk_wait_group_async_bulk_wait_group_read_0() {
  asm volatile("cp.async.bulk.wait_group.read 0;" :  :  : "memory");
}
__forceinline__ __device__ void tvm_builtin_ptx_cp_async_bulk_commit_group_async_bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" :  : );
}
__forceinline__ __device__ void tvm_builtin_ptx_cp_async_bulk_tensor_s2g_async_bulk_tensor_1d_global_shared__cta_tile_bulk_group(const void* __tmap, int32_t __coords0, uint32_t __src_mem) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];" :  : "l"(__tmap), "r"(__coords0), "r"(__src_mem) : "memory");
}

__forceinline__ __device__ void tvm_builtin_cuda_mbarrier_wait(void* barrier, int phase) {
    unsigned int barrier_addr_int = __cvta_generic_to_shared(barrier);
    unsigned int ticks = 0x989680;
    asm volatile(
        "{\n"
        ".reg .pred                P1;\n"
        "LAB_WAIT:\n"
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 P1, [%0], %1, %2;\n"
        "@P1                       bra.uni DONE;\n"
        "bra.uni                   LAB_WAIT;\n"
        "DONE:\n"
        "}\n"
        :: "r"(barrier_addr_int), "r"(phase), "r"(ticks) : "memory");
}
__forceinline__ __device__ void tvm_builtin_ptx_mbarrier_arrive_expect_tx_arrive_expect_tx_shared_b64(uint32_t __addr, uint32_t __tx_count) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :  : "r"(__addr), "r"(__tx_count) : "memory");
}

__forceinline__ __device__ void tvm_builtin_cuda_cta_sync() {
    __syncthreads();
}
__forceinline__ __device__ void tvm_builtin_ptx_fence_proxy_proxy_async_shared__cta() {
  asm volatile("fence.proxy.async.shared::cta;" :  :  : "memory");
}
__forceinline__ __device__ void tvm_builtin_ptx_mbarrier_init_init_shared_b64(uint32_t __addr, uint32_t __count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :  : "r"(__addr), "r"(__count) : "memory");
}
__forceinline__ __device__ void tvm_builtin_ptx_cp_async_bulk_tensor_g2s_cluster_async_bulk_tensor_2d_shared__cluster_global_mbarrier__complete_tx__bytes(uint32_t __dst_mem, const void* __tmap, int32_t __coords0, int32_t __coords1, uint32_t __mbar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" :  : "r"(__dst_mem), "l"(__tmap), "r"(__coords0), "r"(__coords1), "r"(__mbar) : "memory");
}

__forceinline__ __device__ unsigned int tvm_builtin_cuda_cvta_generic_to_shared(void* p) {
    return __cvta_generic_to_shared(p);
}
extern "C" __global__ void __launch_bounds__(128) tma_reduce_kernel(const __grid_constant__ CUtensorMap A_tensormap, const __grid_constant__ CUtensorMap B_tensormap);
extern "C" __global__ void __launch_bounds__(128) tma_reduce_kernel(const __grid_constant__ CUtensorMap A_tensormap, const __grid_constant__ CUtensorMap B_tensormap) {
  int warp_id_in_cta = __shfl_sync((uint)4294967295, (((int)threadIdx.x) >> 5), 0, 32);
  int v = 0;
  int v_1 = warp_id_in_cta;
  int cse_v1 = (((int)threadIdx.x) & 31);
  int v_2 = (((int)threadIdx.x) & 31);
  int tx = ((int)threadIdx.x);
  warp_id_in_cta;
  (((int)threadIdx.x) & 31);
  extern __shared__ __align__(128) float A_smem_ptr[];
  __shared__ alignas(64) float R_ptr[64];
  __shared__ alignas(64) uint64_t mbar_ptr[1];
  if (((int)threadIdx.x) == 0) {
    tvm_builtin_ptx_mbarrier_init_init_shared_b64(tvm_builtin_cuda_cvta_generic_to_shared((&(mbar_ptr[0]))), (uint)1);
  }
  tvm_builtin_ptx_fence_proxy_proxy_async_shared__cta();
  tvm_builtin_cuda_cta_sync();
  if (((int)threadIdx.x) == 0) {
    tvm_builtin_ptx_mbarrier_arrive_expect_tx_arrive_expect_tx_shared_b64(tvm_builtin_cuda_cvta_generic_to_shared((&(mbar_ptr[0]))), (uint)32768);
    tvm_builtin_ptx_cp_async_bulk_tensor_g2s_cluster_async_bulk_tensor_2d_shared__cluster_global_mbarrier__complete_tx__bytes(tvm_builtin_cuda_cvta_generic_to_shared((&(A_smem_ptr[0]))), ((void*)((unsigned long long)(&(A_tensormap)))), 0, 0, tvm_builtin_cuda_cvta_generic_to_shared((&(mbar_ptr[0]))));
  }
  tvm_builtin_cuda_mbarrier_wait((&(mbar_ptr[0])), 0);
  alignas(64) int tid_ptr[1];
  tid_ptr[0] = ((int)threadIdx.x);
  alignas(64) int lane_ptr[1];
  lane_ptr[0] = (tid_ptr[0] & 3);
  alignas(64) int grp_ptr[1];
  grp_ptr[0] = (tid_ptr[0] >> 2);
  for (int step = 0; step < 2; ++step) {
    alignas(64) int row_ptr[1];
    row_ptr[0] = ((step * 32) + grp_ptr[0]);
    alignas(64) float acc0_ptr[1];
    acc0_ptr[0] = 0x0p+0f/*0.000000e+00*/;
    alignas(64) float acc1_ptr[1];
    acc1_ptr[0] = 0x0p+0f/*0.000000e+00*/;
    alignas(64) int red0_ptr[1];
    red0_ptr[0] = lane_ptr[0];
    alignas(64) float x0_ptr[1];
    x0_ptr[0] = A_smem_ptr[((red0_ptr[0] * 64) + row_ptr[0])];
    alignas(64) int red1_ptr[1];
    red1_ptr[0] = (lane_ptr[0] + 4);
    alignas(64) float x1_ptr[1];
    x1_ptr[0] = A_smem_ptr[((red1_ptr[0] * 64) + row_ptr[0])];
    alignas(64) int red2_ptr[1];
    red2_ptr[0] = (lane_ptr[0] + 8);
    alignas(64) float x2_ptr[1];
    x2_ptr[0] = A_smem_ptr[((red2_ptr[0] * 64) + row_ptr[0])];
    alignas(64) int red3_ptr[1];
    red3_ptr[0] = (lane_ptr[0] + 12);
    alignas(64) float x3_ptr[1];
    x3_ptr[0] = A_smem_ptr[((red3_ptr[0] * 64) + row_ptr[0])];
    alignas(64) int red4_ptr[1];
    red4_ptr[0] = (lane_ptr[0] + 16);
    alignas(64) float x4_ptr[1];
    x4_ptr[0] = A_smem_ptr[((red4_ptr[0] * 64) + row_ptr[0])];
    alignas(64) int red5_ptr[1];
    red5_ptr[0] = (lane_ptr[0] + 20);
    alignas(64) float x5_ptr[1];
    x5_ptr[0] = A_smem_ptr[((red5_ptr[0] * 64) + row_ptr[0])];
    alignas(64) int red6_ptr[1];
    red6_ptr[0] = (lane_ptr[0] + 24);
    alignas(64) float x6_ptr[1];
    x6_ptr[0] = A_smem_ptr[((red6_ptr[0] * 64) + row_ptr[0])];
    alignas(64) int red7_ptr[1];
    red7_ptr[0] = (lane_ptr[0] + 28);
    alignas(64) float x7_ptr[1];
    x7_ptr[0] = A_smem_ptr[((red7_ptr[0] * 64) + row_ptr[0])];
    acc0_ptr[0] = (acc0_ptr[0] + x0_ptr[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x1_ptr[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x2_ptr[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x3_ptr[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x4_ptr[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x5_ptr[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x6_ptr[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x7_ptr[0]);
    alignas(64) int red0_ptr_1[1];
    red0_ptr_1[0] = (lane_ptr[0] + 32);
    alignas(64) float x0_ptr_1[1];
    x0_ptr_1[0] = A_smem_ptr[((red0_ptr_1[0] * 64) + row_ptr[0])];
    alignas(64) int red1_ptr_1[1];
    red1_ptr_1[0] = (lane_ptr[0] + 36);
    alignas(64) float x1_ptr_1[1];
    x1_ptr_1[0] = A_smem_ptr[((red1_ptr_1[0] * 64) + row_ptr[0])];
    alignas(64) int red2_ptr_1[1];
    red2_ptr_1[0] = (lane_ptr[0] + 40);
    alignas(64) float x2_ptr_1[1];
    x2_ptr_1[0] = A_smem_ptr[((red2_ptr_1[0] * 64) + row_ptr[0])];
    alignas(64) int red3_ptr_1[1];
    red3_ptr_1[0] = (lane_ptr[0] + 44);
    alignas(64) float x3_ptr_1[1];
    x3_ptr_1[0] = A_smem_ptr[((red3_ptr_1[0] * 64) + row_ptr[0])];
    alignas(64) int red4_ptr_1[1];
    red4_ptr_1[0] = (lane_ptr[0] + 48);
    alignas(64) float x4_ptr_1[1];
    x4_ptr_1[0] = A_smem_ptr[((red4_ptr_1[0] * 64) + row_ptr[0])];
    alignas(64) int red5_ptr_1[1];
    red5_ptr_1[0] = (lane_ptr[0] + 52);
    alignas(64) float x5_ptr_1[1];
    x5_ptr_1[0] = A_smem_ptr[((red5_ptr_1[0] * 64) + row_ptr[0])];
    alignas(64) int red6_ptr_1[1];
    red6_ptr_1[0] = (lane_ptr[0] + 56);
    alignas(64) float x6_ptr_1[1];
    x6_ptr_1[0] = A_smem_ptr[((red6_ptr_1[0] * 64) + row_ptr[0])];
    alignas(64) int red7_ptr_1[1];
    red7_ptr_1[0] = (lane_ptr[0] + 60);
    alignas(64) float x7_ptr_1[1];
    x7_ptr_1[0] = A_smem_ptr[((red7_ptr_1[0] * 64) + row_ptr[0])];
    acc0_ptr[0] = (acc0_ptr[0] + x0_ptr_1[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x1_ptr_1[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x2_ptr_1[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x3_ptr_1[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x4_ptr_1[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x5_ptr_1[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x6_ptr_1[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x7_ptr_1[0]);
    alignas(64) int red0_ptr_2[1];
    red0_ptr_2[0] = (lane_ptr[0] + 64);
    alignas(64) float x0_ptr_2[1];
    x0_ptr_2[0] = A_smem_ptr[((red0_ptr_2[0] * 64) + row_ptr[0])];
    alignas(64) int red1_ptr_2[1];
    red1_ptr_2[0] = (lane_ptr[0] + 68);
    alignas(64) float x1_ptr_2[1];
    x1_ptr_2[0] = A_smem_ptr[((red1_ptr_2[0] * 64) + row_ptr[0])];
    alignas(64) int red2_ptr_2[1];
    red2_ptr_2[0] = (lane_ptr[0] + 72);
    alignas(64) float x2_ptr_2[1];
    x2_ptr_2[0] = A_smem_ptr[((red2_ptr_2[0] * 64) + row_ptr[0])];
    alignas(64) int red3_ptr_2[1];
    red3_ptr_2[0] = (lane_ptr[0] + 76);
    alignas(64) float x3_ptr_2[1];
    x3_ptr_2[0] = A_smem_ptr[((red3_ptr_2[0] * 64) + row_ptr[0])];
    alignas(64) int red4_ptr_2[1];
    red4_ptr_2[0] = (lane_ptr[0] + 80);
    alignas(64) float x4_ptr_2[1];
    x4_ptr_2[0] = A_smem_ptr[((red4_ptr_2[0] * 64) + row_ptr[0])];
    alignas(64) int red5_ptr_2[1];
    red5_ptr_2[0] = (lane_ptr[0] + 84);
    alignas(64) float x5_ptr_2[1];
    x5_ptr_2[0] = A_smem_ptr[((red5_ptr_2[0] * 64) + row_ptr[0])];
    alignas(64) int red6_ptr_2[1];
    red6_ptr_2[0] = (lane_ptr[0] + 88);
    alignas(64) float x6_ptr_2[1];
    x6_ptr_2[0] = A_smem_ptr[((red6_ptr_2[0] * 64) + row_ptr[0])];
    alignas(64) int red7_ptr_2[1];
    red7_ptr_2[0] = (lane_ptr[0] + 92);
    alignas(64) float x7_ptr_2[1];
    x7_ptr_2[0] = A_smem_ptr[((red7_ptr_2[0] * 64) + row_ptr[0])];
    acc0_ptr[0] = (acc0_ptr[0] + x0_ptr_2[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x1_ptr_2[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x2_ptr_2[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x3_ptr_2[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x4_ptr_2[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x5_ptr_2[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x6_ptr_2[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x7_ptr_2[0]);
    alignas(64) int red0_ptr_3[1];
    red0_ptr_3[0] = (lane_ptr[0] + 96);
    alignas(64) float x0_ptr_3[1];
    x0_ptr_3[0] = A_smem_ptr[((red0_ptr_3[0] * 64) + row_ptr[0])];
    alignas(64) int red1_ptr_3[1];
    red1_ptr_3[0] = (lane_ptr[0] + 100);
    alignas(64) float x1_ptr_3[1];
    x1_ptr_3[0] = A_smem_ptr[((red1_ptr_3[0] * 64) + row_ptr[0])];
    alignas(64) int red2_ptr_3[1];
    red2_ptr_3[0] = (lane_ptr[0] + 104);
    alignas(64) float x2_ptr_3[1];
    x2_ptr_3[0] = A_smem_ptr[((red2_ptr_3[0] * 64) + row_ptr[0])];
    alignas(64) int red3_ptr_3[1];
    red3_ptr_3[0] = (lane_ptr[0] + 108);
    alignas(64) float x3_ptr_3[1];
    x3_ptr_3[0] = A_smem_ptr[((red3_ptr_3[0] * 64) + row_ptr[0])];
    alignas(64) int red4_ptr_3[1];
    red4_ptr_3[0] = (lane_ptr[0] + 112);
    alignas(64) float x4_ptr_3[1];
    x4_ptr_3[0] = A_smem_ptr[((red4_ptr_3[0] * 64) + row_ptr[0])];
    alignas(64) int red5_ptr_3[1];
    red5_ptr_3[0] = (lane_ptr[0] + 116);
    alignas(64) float x5_ptr_3[1];
    x5_ptr_3[0] = A_smem_ptr[((red5_ptr_3[0] * 64) + row_ptr[0])];
    alignas(64) int red6_ptr_3[1];
    red6_ptr_3[0] = (lane_ptr[0] + 120);
    alignas(64) float x6_ptr_3[1];
    x6_ptr_3[0] = A_smem_ptr[((red6_ptr_3[0] * 64) + row_ptr[0])];
    alignas(64) int red7_ptr_3[1];
    red7_ptr_3[0] = (lane_ptr[0] + 124);
    alignas(64) float x7_ptr_3[1];
    x7_ptr_3[0] = A_smem_ptr[((red7_ptr_3[0] * 64) + row_ptr[0])];
    acc0_ptr[0] = (acc0_ptr[0] + x0_ptr_3[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x1_ptr_3[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x2_ptr_3[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x3_ptr_3[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x4_ptr_3[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x5_ptr_3[0]);
    acc0_ptr[0] = (acc0_ptr[0] + x6_ptr_3[0]);
    acc1_ptr[0] = (acc1_ptr[0] + x7_ptr_3[0]);
    acc0_ptr[0] = (acc0_ptr[0] + acc1_ptr[0]);
    acc0_ptr[0] = (acc0_ptr[0] + __shfl_xor_sync((uint)4294967295, acc0_ptr[0], 2, 32));
    acc0_ptr[0] = (acc0_ptr[0] + __shfl_xor_sync((uint)4294967295, acc0_ptr[0], 1, 32));
    if (lane_ptr[0] == 0) {
      R_ptr[row_ptr[0]] = acc0_ptr[0];
    }
  }
  __syncthreads();
  tvm_builtin_ptx_fence_proxy_proxy_async_shared__cta();
  tvm_builtin_cuda_cta_sync();
  if (((int)threadIdx.x) == 0) {
    tvm_builtin_ptx_cp_async_bulk_tensor_s2g_async_bulk_tensor_1d_global_shared__cta_tile_bulk_group(((void*)((unsigned long long)(&(B_tensormap)))), 0, tvm_builtin_cuda_cvta_generic_to_shared((&(R_ptr[0]))));
    tvm_builtin_ptx_cp_async_bulk_commit_group_async_bulk_commit_group();
    tvm_builtin_ptx_cp_async_bulk_wait_group_async_bulk_wait_group_read_0();
  }
  tvm_builtin_cuda_cta_sync();
}

