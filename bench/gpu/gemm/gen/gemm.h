// Written by bench/gpu/gemm/run.sh --gen from examples/tvm_gemm.py --export.
#define GEMM_M 4096
#define GEMM_N 4096
#define GEMM_K 4096
#define GEMM_ALPHA 0.5f
#define GEMM_THREADS 128
#define GEMM_BM 128
#define GEMM_BN 128
#define GEMM_ARCH "sm_90a"
