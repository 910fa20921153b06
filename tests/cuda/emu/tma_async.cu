/*
 * A hand-written self-checking program for the asynchronous copies: TMA
 * loads and stores through tensor maps and the mbarriers that complete
 * them.  It runs on an sm_90 GPU (nvcc -arch=sm_90a) and on the CPU
 * stand-in (tests/cuda/emu.py --async-paths, g++ against
 * tests/cuda/emu/cuda_runtime.h), so the two can be held against each
 * other: the stand-in's swizzle, out-of-bounds fill, clipping, reduction
 * and phase rules are checked here against the formulas the PTX ISA and
 * the driver document, and the GPU run checks the same expectations on the
 * hardware.
 *
 * Checks (one line each, then PASS or FAIL and exit 0 or 1; 77 without a
 * device):
 *   swizzle_{none,32b,64b,128b}: a 2-d uint32 box loaded with each mode,
 *     every element at the byte the swizzle formula names (16-byte chunk
 *     index XOR the 128-byte row index, Swizzle<B, 4, 3>);
 *   swizzle_128b_narrow: a 64-byte inner box under the 128-byte swizzle
 *     (each row at a whole span's pitch, 128 bytes, then swizzled by
 *     address, as the H200 does);
 *   element_strides: a box with element stride 2 in rows takes every
 *     other row (ceil(box / stride) of them, packed);
 *   oob_zero, oob_nan: a box hanging over two edges, filled with zeros, and
 *     with NaNs for float32 under the NaN fill;
 *   store, reduce_add: a swizzled box written back (and added to int32
 *     data), clipped at the tensor's bounds: nothing outside it changes;
 *   mbarrier_phases: a phase waits for its transaction bytes as well as
 *     its arrivals, and try_wait's parity flips with each phase;
 *   encode_limits: cuTensorMapEncodeTiled accepts a valid 2-d map and
 *     refuses each documented limit broken (rank, box, inner box bytes,
 *     swizzle span, alignments, strides, element strides, NaN fill of an
 *     integer type, interleave below rank 3, a zero dimension).
 * On the stand-in only, `--misuse N` makes one mistake the hardware would
 * turn into a hang, a fault or garbage, which the stand-in must stop on
 * (abort, naming it): 1 a wait on an mbarrier never initialised, 2 a TMA
 * load into shared memory off its 128-byte alignment, 3 a TMA load through
 * a map the encoder did not write, 4 an arrival beyond the phase's count.
 * Built with -DTD_MUTANT_SWIZZLE the maps of the swizzle checks are
 * encoded with another mode (32B as 64B, 64B as 128B, 128B as none): the
 * program must FAIL.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static const char TD_NAME[] = "tma_async";

/* ---- device helpers: PTX on the GPU, the stand-in's functions on a host */

#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned smem_u32(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
#endif
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
#ifdef __CUDA_ARCH__
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)),
                 "r"(count)
                 : "memory");
#elif defined(TD_EMU)
    td_emu_mbar_init(bar, count);
#endif
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
#ifdef __CUDA_ARCH__
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar))
                 : "memory");
#elif defined(TD_EMU)
    td_emu_mbar_arrive(bar);
#endif
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar,
                                                      unsigned bytes)
{
#ifdef __CUDA_ARCH__
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
#elif defined(TD_EMU)
    td_emu_mbar_arrive_expect_tx(bar, bytes);
#endif
}
__device__ __forceinline__ bool mbar_try_wait(uint64_t *bar, unsigned parity)
{
#ifdef __CUDA_ARCH__
    unsigned done;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 "
                 "p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
    return done != 0;
#elif defined(TD_EMU)
    return td_emu_mbar_try_wait(bar, parity);
#else
    return false;
#endif
}
/* Waits for the phase of that parity; gives up after a bounded number of
 * tries so that a phase that never completes reports instead of hanging. */
__device__ __forceinline__ int mbar_wait(uint64_t *bar, unsigned parity)
{
    for (long i = 0; i < (1L << 22); ++i)
        if (mbar_try_wait(bar, parity))
            return 1;
    return 0;
}
__device__ __forceinline__ void fence_proxy_async()
{
#ifdef __CUDA_ARCH__
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map,
                                            int c0, int c1, uint64_t *bar)
{
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                     smem_u32(dst)),
                 "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
                 : "memory");
#elif defined(TD_EMU)
    const int c[2] = {c0, c1};
    td_emu_tma_load(dst, map, 2, c, bar);
#endif
}
/* A store (add = 0) or a reduce-add (add = 1) of the box at (c0, c1),
 * then the bulk group's commit and wait until smem may be reused. */
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, int c0,
                                             int c1, const void *src, int add)
{
#ifdef __CUDA_ARCH__
    if (add)
        asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add."
                     "tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(map),
                     "r"(smem_u32(src)), "r"(c0), "r"(c1)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
                     "[%0, {%2, %3}], [%1];" ::"l"(map),
                     "r"(smem_u32(src)), "r"(c0), "r"(c1)
                     : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#elif defined(TD_EMU)
    const int c[2] = {c0, c1};
    td_emu_tma_store(map, 2, c, src, add ? TD_EMU_RED_ADD : TD_EMU_RED_NONE);
#endif
}

/* ---- kernels ------------------------------------------------------------ */

#define TILE_BYTES 8192

/* Loads one box into a poisoned, 1024-byte aligned tile; copies the tile's
 * bytes out as they lie in shared memory. */
__global__ void load_kernel(const __grid_constant__ CUtensorMap map, int c0,
                            int c1, unsigned bytes, unsigned char *out,
                            int *done)
{
    __shared__ __align__(1024) unsigned char tile[TILE_BYTES];
    __shared__ __align__(8) uint64_t bar;
    for (int k = threadIdx.x; k < TILE_BYTES; k += blockDim.x)
        tile[k] = 0xab;
    if (threadIdx.x == 0)
        mbar_init(&bar, 1);
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, bytes);
        tma_load_2d(tile, &map, c0, c1, &bar);
    }
    int ok = mbar_wait(&bar, 0);
    if (threadIdx.x == 0)
        *done = ok;
    for (int k = threadIdx.x; k < TILE_BYTES; k += blockDim.x)
        out[k] = tile[k];
}

/* Writes the shared image img (already swizzled) back through the map. */
__global__ void store_kernel(const __grid_constant__ CUtensorMap map, int c0,
                             int c1, const unsigned char *img, int add)
{
    __shared__ __align__(1024) unsigned char tile[TILE_BYTES];
    for (int k = threadIdx.x; k < TILE_BYTES; k += blockDim.x)
        tile[k] = img[k];
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0)
        tma_store_2d(&map, c0, c1, tile, add);
}

/*
 * Two phases of one barrier with blockDim.x arrivals.  Phase 0 also waits
 * for two boxes' bytes: with every thread arrived and one box issued it
 * must still be open (res[0] = 0); after the second box it completes
 * (res[1]).  Before anyone arrives on phase 1, try_wait(1) says no
 * (res[2] = 0) and try_wait(0) yes (res[3]); phase 1 completes on the
 * arrivals alone (res[4]); then try_wait(0) refers to phase 2, still open
 * (res[5] = 0), and try_wait(1) to phase 1, done (res[6]).
 */
__global__ void mbar_kernel(const __grid_constant__ CUtensorMap map,
                            unsigned box_bytes, unsigned char *out, int *res)
{
    __shared__ __align__(1024) unsigned char tile[TILE_BYTES];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x == 0)
        mbar_init(&bar, blockDim.x);
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0)
        mbar_arrive_expect_tx(&bar, 2 * box_bytes);
    else
        mbar_arrive(&bar);
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_load_2d(tile, &map, 0, 0, &bar);
        res[0] = mbar_try_wait(&bar, 0);
        tma_load_2d(tile + box_bytes, &map, 0, 4, &bar);
    }
    int ok = mbar_wait(&bar, 0);
    if (threadIdx.x == 0) {
        res[1] = ok;
        res[2] = mbar_try_wait(&bar, 1);
        res[3] = mbar_try_wait(&bar, 0);
    }
    mbar_arrive(&bar);
    ok = mbar_wait(&bar, 1);
    if (threadIdx.x == 0) {
        res[4] = ok;
        res[5] = mbar_try_wait(&bar, 0);
        res[6] = mbar_try_wait(&bar, 1);
    }
    for (int k = threadIdx.x; k < (int)(2 * box_bytes); k += blockDim.x)
        out[k] = tile[k];
}

/* ---- host --------------------------------------------------------------- */

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            printf("FAIL %s: %s at line %d: %s\n", TD_NAME,                    \
                   cudaGetErrorName(e_), __LINE__, cudaGetErrorString(e_));    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

enum { W = 64, R = 64 };
static PFN_cuTensorMapEncodeTiled_v12000 encode;
static int failed;

static void report(const char *name, int bad, const char *detail)
{
    if (bad) {
        printf("FAIL %s: %s\n", name, detail);
        ++failed;
    } else {
        printf("ok   %s\n", name);
    }
}
/* The value of global element (r, c): distinct and never zero. */
static uint32_t gval(int r, int c)
{
    return 0x10000u * (uint32_t)(r + 1) + (uint32_t)c + 1u;
}
/* The shared byte offset of box byte o under swizzle mode sw, for a tile
 * on a 1024-byte boundary: bits [4, 4 + sw) XOR bits [7, 7 + sw). */
static unsigned swz(unsigned o, int sw)
{
    unsigned mask = (1u << sw) - 1u;
    return o ^ (((o >> 7) & mask) << 4);
}
static int encode2d(CUtensorMap *map, CUtensorMapDataType dt, void *base,
                    unsigned cols, unsigned rows, unsigned b0, unsigned b1,
                    int sw, CUtensorMapFloatOOBfill oob, unsigned es1 = 1)
{
    const cuuint64_t dims[2] = {cols, rows};
    const cuuint64_t strides[1] = {W * 4};
    const cuuint32_t box[2] = {b0, b1};
    const cuuint32_t estr[2] = {1, es1};
    CUresult r = encode(map, dt, 2, base, dims, strides, box, estr,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)sw,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, oob);
    return r == CUDA_SUCCESS ? 0 : (int)r;
}

/* Loads the box (b0 x b1 uint32 at c0, c1) and returns the tile's bytes;
 * an empty vector after a failed encode or an incomplete barrier. */
static std::vector<uint32_t> load(uint32_t *dA, CUtensorMapDataType dt,
                                  unsigned b0, unsigned b1, int c0, int c1,
                                  int sw, CUtensorMapFloatOOBfill oob,
                                  const char *name, unsigned es1 = 1)
{
    CUtensorMap map;
    char msg[128];
    int e = encode2d(&map, dt, dA, W, R, b0, b1, sw, oob, es1);
    if (e != 0) {
        snprintf(msg, sizeof msg, "cuTensorMapEncodeTiled returned %d", e);
        report(name, 1, msg);
        return {};
    }
    unsigned char *dout;
    int *ddone, done = 0;
    CK(cudaMalloc((void **)&dout, TILE_BYTES));
    CK(cudaMalloc((void **)&ddone, sizeof(int)));
    /* The bytes that land: ceil(b1 / es1) rows of the box. */
    const unsigned bytes = b0 * ((b1 + es1 - 1) / es1) * 4;
    /* On one line: emu.py rewrites a launch line by line. */
    load_kernel<<<1, 32>>>(map, c0, c1, bytes, dout, ddone);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint32_t> t(TILE_BYTES / 4);
    CK(cudaMemcpy(t.data(), dout, TILE_BYTES, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&done, ddone, sizeof done, cudaMemcpyDeviceToHost));
    CK(cudaFree(dout));
    CK(cudaFree(ddone));
    if (!done) {
        report(name, 1, "the mbarrier's phase never completed");
        return {};
    }
    return t;
}

static void check_swizzle(uint32_t *dA, const char *name, int sw, unsigned b0)
{
    const unsigned b1 = 16;
    const int c0 = 4, c1 = 3;
    int enc = sw;
#ifdef TD_MUTANT_SWIZZLE
    /* The mutant: another legal mode than the one the check expects. */
    enc = sw == 1 ? 2 : sw == 2 ? 3 : sw == 3 ? 0 : sw;
#endif
    std::vector<uint32_t> t =
        load(dA, CU_TENSOR_MAP_DATA_TYPE_UINT32, b0, b1, c0, c1, enc,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, name);
    if (t.empty())
        return;
    int bad = 0, first = -1;
    for (unsigned k1 = 0; k1 < b1; ++k1)
        for (unsigned k0 = 0; k0 < b0; ++k0) {
            /* a row narrower than the span takes a whole span */
            unsigned pitch = sw && b0 * 4 < (16u << sw) ? 16u << sw : b0 * 4;
            unsigned o = k1 * pitch + k0 * 4;
            if (t[swz(o, sw) / 4] != gval(c1 + (int)k1, c0 + (int)k0)) {
                if (first < 0)
                    first = (int)(k1 * b0 + k0);
                ++bad;
            }
        }
    char msg[160];
    snprintf(msg, sizeof msg, "%d of %u elements misplaced, the first box "
             "element %d", bad, b0 * b1, first);
    report(name, bad != 0, msg);
}

/* Rows 1, 3, 5, 7 of a 32 x 8 box at (0, 1) with element stride 2. */
static void check_element_strides(uint32_t *dA)
{
    const char *name = "element_strides";
    const unsigned b0 = 32, b1 = 8, es1 = 2;
    std::vector<uint32_t> t =
        load(dA, CU_TENSOR_MAP_DATA_TYPE_UINT32, b0, b1, 0, 1, 0,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, name, es1);
    if (t.empty())
        return;
    int bad = 0, first = -1;
    for (unsigned k1 = 0; k1 < b1 / es1; ++k1)
        for (unsigned k0 = 0; k0 < b0; ++k0)
            if (t[k1 * b0 + k0] != gval(1 + (int)(k1 * es1), (int)k0)) {
                if (first < 0)
                    first = (int)(k1 * b0 + k0);
                ++bad;
            }
    for (unsigned k = b0 * b1 / es1; k < TILE_BYTES / 4; ++k)
        bad += t[k] != 0xababababu;
    char msg[160];
    snprintf(msg, sizeof msg, "%d words wrong, the first box element %d", bad,
             first);
    report(name, bad != 0, msg);
}

static void check_oob(uint32_t *dA, bool nan)
{
    const char *name = nan ? "oob_nan" : "oob_zero";
    const unsigned b0 = 16, b1 = 8;
    const int c0 = W - 8, c1 = -2;
    std::vector<uint32_t> t = load(
        dA,
        nan ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_UINT32,
        b0, b1, c0, c1, 0,
        nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
            : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        name);
    if (t.empty())
        return;
    int bad = 0, first = -1;
    for (unsigned k1 = 0; k1 < b1; ++k1)
        for (unsigned k0 = 0; k0 < b0; ++k0) {
            int r = c1 + (int)k1, c = c0 + (int)k0;
            uint32_t got = t[k1 * b0 + k0];
            bool in = r >= 0 && r < R && c >= 0 && c < W;
            bool ok;
            if (in)
                ok = got == gval(r, c);
            else if (nan)
                ok = (got & 0x7f800000u) == 0x7f800000u && (got & 0x7fffffu);
            else
                ok = got == 0;
            if (!ok) {
                if (first < 0)
                    first = (int)(k1 * b0 + k0);
                ++bad;
            }
        }
    /* Nothing past the box: the tile's poison stays. */
    for (unsigned k = b0 * b1; k < TILE_BYTES / 4; ++k)
        bad += t[k] != 0xababababu;
    char msg[160];
    snprintf(msg, sizeof msg, "%d elements wrong, the first box element %d",
             bad, first);
    report(name, bad != 0, msg);
}

/* A 32 x 8 uint32 (int32 for the reduction) box under the 128-byte
 * swizzle, written at (W - 16, rows - 4) of a rows x W tensor: 16 x 4 of
 * it inside; the two rows after the tensor and everything else keep
 * their values. */
static void check_store(bool add)
{
    const char *name = add ? "reduce_add" : "store";
    const unsigned b0 = 32, b1 = 8, rows = 32;
    const int c0 = W - 16, c1 = rows - 4;
    std::vector<uint32_t> old((rows + 2) * W), img(TILE_BYTES / 4, 0);
    for (unsigned r = 0; r < rows + 2; ++r)
        for (unsigned c = 0; c < W; ++c)
            old[r * W + c] = gval((int)r, (int)c);
    for (unsigned k1 = 0; k1 < b1; ++k1)
        for (unsigned k0 = 0; k0 < b0; ++k0)
            img[swz((k1 * b0 + k0) * 4, 3) / 4] = 0x5000000u + k1 * 256 + k0;
    uint32_t *dG;
    unsigned char *dimg;
    CK(cudaMalloc((void **)&dG, old.size() * 4));
    CK(cudaMalloc((void **)&dimg, TILE_BYTES));
    CK(cudaMemcpy(dG, old.data(), old.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dimg, img.data(), TILE_BYTES, cudaMemcpyHostToDevice));
    CUtensorMap map;
    int e = encode2d(&map,
                     add ? CU_TENSOR_MAP_DATA_TYPE_INT32
                         : CU_TENSOR_MAP_DATA_TYPE_UINT32,
                     dG, W, rows, b0, b1, 3, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (e != 0) {
        report(name, 1, "cuTensorMapEncodeTiled failed");
        return;
    }
    store_kernel<<<1, 32>>>(map, c0, c1, dimg, add ? 1 : 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(old.size());
    CK(cudaMemcpy(got.data(), dG, got.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaFree(dG));
    CK(cudaFree(dimg));
    int bad = 0, first = -1, inside = 0;
    for (unsigned r = 0; r < rows + 2; ++r)
        for (unsigned c = 0; c < W; ++c) {
            uint32_t want = old[r * W + c];
            int k0 = (int)c - c0, k1 = (int)r - c1;
            if (r < rows && k0 >= 0 && k0 < (int)b0 && k1 >= 0 &&
                k1 < (int)b1) {
                uint32_t s = 0x5000000u + (uint32_t)k1 * 256 + (uint32_t)k0;
                want = add ? want + s : s;
                ++inside;
            }
            if (got[r * W + c] != want) {
                if (first < 0)
                    first = (int)(r * W + c);
                ++bad;
            }
        }
    char msg[160];
    snprintf(msg, sizeof msg, "%d elements wrong (%d written), the first at "
             "global element %d", bad, inside, first);
    report(name, bad != 0 || inside != 64, msg);
}

static void check_mbarrier(uint32_t *dA)
{
    const char *name = "mbarrier_phases";
    const unsigned b0 = 32, b1 = 4, bytes = b0 * b1 * 4;
    CUtensorMap map;
    if (encode2d(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, dA, W, R, b0, b1, 0,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != 0) {
        report(name, 1, "cuTensorMapEncodeTiled failed");
        return;
    }
    unsigned char *dout;
    int *dres, res[7];
    CK(cudaMalloc((void **)&dout, 2 * bytes));
    CK(cudaMalloc((void **)&dres, sizeof res));
    CK(cudaMemset(dres, 0xff, sizeof res));
    mbar_kernel<<<1, 64>>>(map, bytes, dout, dres);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint32_t> t(2 * bytes / 4);
    CK(cudaMemcpy(t.data(), dout, 2 * bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(res, dres, sizeof res, cudaMemcpyDeviceToHost));
    CK(cudaFree(dout));
    CK(cudaFree(dres));
    static const int want[7] = {0, 1, 0, 1, 1, 0, 1};
    int bad = 0;
    char msg[200] = "";
    for (int k = 0; k < 7; ++k)
        if (res[k] != want[k]) {
            if (!bad)
                snprintf(msg, sizeof msg, "step %d: got %d, want %d", k,
                         res[k], want[k]);
            ++bad;
        }
    for (unsigned k1 = 0; k1 < 2 * b1; ++k1)
        for (unsigned k0 = 0; k0 < b0; ++k0)
            if (t[k1 * b0 + k0] != gval((int)k1, (int)k0)) {
                if (!bad)
                    snprintf(msg, sizeof msg, "row %u element %u not loaded",
                             k1, k0);
                ++bad;
            }
    report(name, bad != 0, msg);
}

/*
 * One encode per row: the valid base map (uint32, 64 x 64, box 32 x 8, no
 * swizzle) with one argument changed; ok says whether the driver's
 * documented limits (cuda.h) allow it.
 */
static void check_encode_limits(uint32_t *dA)
{
    static const struct {
        const char *what;
        int ok;
    } rows[] = {
        {"the base map", 1},
        {"rank 0", 0},
        {"rank 6", 0},
        {"boxDim[0] 0", 0},
        {"boxDim[1] 257", 0},
        {"inner box 24 bytes", 0},
        {"swizzle 32B, inner box 64 bytes", 0},
        {"swizzle 64B, inner box 64 bytes", 1},
        {"global address + 8 bytes", 0},
        {"global address + 16 bytes", 1},
        {"stride 264 bytes", 0},
        {"stride 2^40 bytes", 0},
        {"elementStrides[1] 0", 0},
        {"elementStrides[1] 9", 0},
        {"elementStrides[1] 2", 1},
        {"NaN fill of uint32", 0},
        {"interleave 16B at rank 2", 0},
        {"globalDim[1] 0", 0},
        {"map 32 bytes off its 64-byte alignment", 1},
    };
    static unsigned char raw[sizeof(CUtensorMap) + 128];
    int bad = 0;
    char msg[200] = "";
    for (int k = 0; k < (int)(sizeof rows / sizeof rows[0]); ++k) {
        CUtensorMap map, *pm = &map;
        cuuint64_t dims[5] = {W, R, 1, 1, 1};
        cuuint64_t strides[4] = {W * 4, W * 4 * R, W * 4 * R, W * 4 * R};
        cuuint32_t box[5] = {32, 8, 1, 1, 1};
        cuuint32_t estr[5] = {1, 1, 1, 1, 1};
        cuuint32_t rank = 2;
        unsigned char *base = (unsigned char *)dA;
        CUtensorMapDataType dt = CU_TENSOR_MAP_DATA_TYPE_UINT32;
        CUtensorMapInterleave il = CU_TENSOR_MAP_INTERLEAVE_NONE;
        int sw = 0;
        CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
        switch (k) {
        case 1: rank = 0; break;
        case 2: rank = 6; break;
        case 3: box[0] = 0; break;
        case 4: box[1] = 257; break;
        case 5: box[0] = 6; break;
        case 6: box[0] = 16; sw = 1; break;
        case 7: box[0] = 16; sw = 2; break;
        case 8: base += 8; break;
        case 9: base += 16; break;
        case 10: strides[0] = 264; break;
        case 11: strides[0] = 1ull << 40; break;
        case 12: estr[1] = 0; break;
        case 13: estr[1] = 9; break;
        case 14: estr[1] = 2; break;
        case 15: oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; break;
        case 16: il = CU_TENSOR_MAP_INTERLEAVE_16B; break;
        case 17: dims[1] = 0; break;
        case 18:
            pm = (CUtensorMap *)(raw + (64 - (uintptr_t)raw % 64) % 64 + 32);
            break;
        default: break;
        }
        CUresult r = encode(pm, dt, rank, base, dims, strides, box, estr, il,
                            (CUtensorMapSwizzle)sw,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, oob);
        if ((r == CUDA_SUCCESS) != (rows[k].ok != 0)) {
            if (!bad)
                snprintf(msg, sizeof msg, "%s: CUresult %d, want %s",
                         rows[k].what, (int)r,
                         rows[k].ok ? "success" : "a refusal");
            ++bad;
        }
    }
    report("encode_limits", bad != 0, msg);
}

#ifdef TD_EMU
__global__ void misuse_kernel(const __grid_constant__ CUtensorMap map,
                              int which)
{
    __shared__ __align__(1024) unsigned char tile[TILE_BYTES];
    __shared__ __align__(8) uint64_t bar;
    switch (which) {
    case 1:
        mbar_try_wait(&bar, 0);
        break;
    case 2:
        mbar_init(&bar, 1);
        mbar_arrive_expect_tx(&bar, 512);
        tma_load_2d(tile + 16, &map, 0, 0, &bar);
        break;
    case 3: {
        CUtensorMap blank;
        memset(&blank, 0, sizeof blank);
        mbar_init(&bar, 1);
        tma_load_2d(tile, &blank, 0, 0, &bar);
        break;
    }
    case 4:
        mbar_init(&bar, 1);
        mbar_arrive_expect_tx(&bar, 16);
        mbar_arrive(&bar);
        break;
    }
}

static int misuse(int which)
{
    alignas(16) static uint32_t g[W * R];
    CUtensorMap map;
    if (encode2d(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, g, W, R, 32, 4, 0,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != 0)
        return 2;
    misuse_kernel<<<1, 1>>>(map, which);
    printf("misuse %d: the stand-in did not stop\n", which);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("SKIP %s: no CUDA device\n", TD_NAME);
        return 77;
    }
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
                                        (void **)&encode, 12000,
                                        cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || encode == NULL) {
        printf("FAIL %s: no cuTensorMapEncodeTiled entry point\n", TD_NAME);
        return 1;
    }
#ifdef TD_EMU
    if (argc == 3 && strcmp(argv[1], "--misuse") == 0)
        return misuse(atoi(argv[2]));
#endif
    (void)argc;
    (void)argv;
    std::vector<uint32_t> h(W * R);
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < W; ++c)
            h[r * W + c] = gval(r, c);
    uint32_t *dA;
    CK(cudaMalloc((void **)&dA, h.size() * 4));
    CK(cudaMemcpy(dA, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    check_swizzle(dA, "swizzle_none", 0, 32);
    check_swizzle(dA, "swizzle_32b", 1, 8);
    check_swizzle(dA, "swizzle_64b", 2, 16);
    check_swizzle(dA, "swizzle_128b", 3, 32);
    check_swizzle(dA, "swizzle_128b_narrow", 3, 16);
    check_element_strides(dA);
    check_oob(dA, false);
    check_oob(dA, true);
    check_store(false);
    check_store(true);
    check_mbarrier(dA);
    check_encode_limits(dA);
    CK(cudaFree(dA));
    if (failed) {
        printf("FAIL %s: %d checks failed\n", TD_NAME, failed);
        return 1;
    }
    printf("PASS %s: 12 checks\n", TD_NAME);
    return 0;
}
