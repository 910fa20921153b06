/* Why does the driver refuse our rank-1 tensor maps (tests/tma/gpu_encode.sh:
 * promo-rank-f16, promo-stride-u8, promo-u8-64x8 rejected on the H200,
 * 2026-12-02)?  Tries the same map with globalStrides NULL, a pointer to a
 * zero, a pointer to the row's bytes, and the other L2 promotions and dtypes,
 * and prints the driver's answer for each.  Build and run on the GPU:
 *   nvcc -arch=sm_90a -o p rank1_probe.cu -lcuda && ./p */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>

static void one(const char *what, CUtensorMapDataType dt, cuuint64_t dim,
                cuuint32_t box, const cuuint64_t *strides,
                CUtensorMapL2promotion l2, void *base)
{
    CUtensorMap map;
    cuuint64_t gd[1] = {dim};
    cuuint32_t bd[1] = {box};
    cuuint32_t es[1] = {1};
    CUresult r = cuTensorMapEncodeTiled(&map, dt, 1, base, gd, strides, bd, es,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE,
                                        CU_TENSOR_MAP_SWIZZLE_NONE, l2,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    const char *s = NULL;
    cuGetErrorName(r, &s);
    printf("%-44s %s\n", what, r == CUDA_SUCCESS ? "accepted" : s);
}

int main(void)
{
    void *buf = NULL;
    if (cudaMalloc(&buf, 1 << 20) != cudaSuccess) {
        printf("no device\n");
        return 2;
    }
    cuuint64_t zero[1] = {0}, row[1] = {512};
    CUtensorMapL2promotion l2s[4] = {CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
    const char *l2n[4] = {"NONE", "64B", "128B", "256B"};
    char what[64];
    for (int i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "f16 256/256 strides=NULL l2=%s", l2n[i]);
        one(what, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 256, 256, NULL, l2s[i], buf);
    }
    one("f16 256/256 strides={0} l2=128B", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 256,
        256, zero, l2s[2], buf);
    one("f16 256/256 strides={512} l2=128B", CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        256, 256, row, l2s[2], buf);
    one("f16 256/128 strides=NULL l2=128B", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 256,
        128, NULL, l2s[2], buf);
    one("f16 256/64 strides=NULL l2=128B", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 256,
        64, NULL, l2s[2], buf);
    one("f16 1024/256 strides=NULL l2=128B", CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        1024, 256, NULL, l2s[2], buf);
    one("u8 256/256 strides=NULL l2=128B", CU_TENSOR_MAP_DATA_TYPE_UINT8, 256,
        256, NULL, l2s[2], buf);
    one("u8 256/128 strides=NULL l2=128B", CU_TENSOR_MAP_DATA_TYPE_UINT8, 256,
        128, NULL, l2s[2], buf);
    one("u8 256/16 strides=NULL l2=NONE", CU_TENSOR_MAP_DATA_TYPE_UINT8, 256,
        16, NULL, l2s[0], buf);
    one("f32 256/256 strides=NULL l2=NONE", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 256,
        256, NULL, l2s[0], buf);
    /* rank 2 with a unit outer dimension: the shape a fix could take */
    {
        CUtensorMap map;
        cuuint64_t gd[2] = {256, 1}, gs[1] = {512};
        cuuint32_t bd[2] = {256, 1}, es[2] = {1, 1};
        CUresult r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            2, buf, gd, gs, bd, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        const char *s = NULL;
        cuGetErrorName(r, &s);
        printf("%-44s %s\n", "f16 rank2 256x1 box 256x1 l2=128B",
               r == CUDA_SUCCESS ? "accepted" : s);
    }
    return 0;
}
