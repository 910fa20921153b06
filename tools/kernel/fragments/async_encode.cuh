//! TMA programs: the driver's tensor-map encoder, reached through the
//! runtime's driver entry point so that the program links without -lcuda.
//! The encode functions the library prints call cuTensorMapEncodeTiled;
//! the macro after this function sends them here.
#include <cuda.h>
#include <cudaTypedefs.h>
static CUresult td_encode_tiled(CUtensorMap *map, CUtensorMapDataType dtype,
                                cuuint32_t rank, void *address,
                                const cuuint64_t *dim, const cuuint64_t *strides,
                                const cuuint32_t *box, const cuuint32_t *estr,
                                CUtensorMapInterleave interleave,
                                CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2,
                                CUtensorMapFloatOOBfill oob)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (encode == NULL) {
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode,
                                             12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess || encode == NULL) {
            encode = NULL;
            return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    return encode(map, dtype, rank, address, dim, strides, box, estr, interleave,
                  swizzle, l2, oob);
}
#define cuTensorMapEncodeTiled td_encode_tiled
