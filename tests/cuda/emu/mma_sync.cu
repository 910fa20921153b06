/*
 * A hand-written self-checking program for the mma.sync helpers that
 * codegen/print_mma.c prints (td_ptx_mma_sync_aligned_*: the PTX on a GPU,
 * the CPU stand-in's td_emu_mma_* on the host).  It includes the helpers
 * as tests/codegen/ir_golden mma-prelude prints them (td_mma_prelude.cuh,
 * on the include path), so the printed text itself is what runs: on the
 * stand-in (tests/cuda/emu_mma.py: g++ against tests/cuda/emu/
 * cuda_runtime.h) and on a GPU (nvcc; tests/cuda/gpu-mma.sh).
 *
 * Per instruction kind, two warps each multiply their own 16 x K by K x 8
 * tile and add C; the host spreads the matrices over the lanes' registers
 * through the PTX ISA's fragment tables (written out here per operand
 * type, as the ISA prints them, independently of the stand-in's formula),
 * gathers D back the same way and compares it with a plain product in
 * double precision:
 *   exact:  small integers (8-bit integers over their whole range): every
 *           element equal;
 *   random: values uniform in [-1, 1] rounded to the input type (8-bit
 *           integers and floats: random codes; tf32: float32 with the low
 *           13 mantissa bits cleared), within 4 * K * 2^-24 * (sum |a b| +
 *           |c|) + 2^-24 |ref| (float32 accumulators; 2^-11 for float16
 *           ones); integers exact.
 * One line per kind and mode, then PASS or FAIL (exit 0 or 1; 77 without a
 * device).  TD_MMA_MAX_SM (default 90) leaves out the kinds newer than
 * that arch, TD_MMA_ONLY=N compiles kind N alone (tests/cuda/emu_mma.py
 * --nvcc checks that ptxas refuses a kind below its arch).
 */
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "td_mma_prelude.cuh"

static const char TD_NAME[] = "mma_sync";

#ifndef TD_MMA_MAX_SM
#define TD_MMA_MAX_SM 90
#endif
#ifdef TD_MMA_ONLY
#define HAS(k, sm) ((k) == TD_MMA_ONLY)
#else
#define HAS(k, sm) ((sm) <= TD_MMA_MAX_SM)
#endif

#define CK(x)                                                               \
    do {                                                                    \
        cudaError_t e_ = (x);                                               \
        if (e_ != cudaSuccess) {                                            \
            printf("FAIL %s: %s: %s\n", TD_NAME, #x, cudaGetErrorName(e_)); \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

enum { AB_F16, AB_BF16, AB_TF32, AB_S8, AB_U8, AB_E4M3, AB_E5M2 };
enum { CD_F32, CD_F16, CD_S32 };

/* td_mma_kind's rows, in its order. */
static const struct kind {
    const char *name;
    int k, ab, cd, sm;
} kinds[] = {
    {"m16n8k16.bf16", 16, AB_BF16, CD_F32, 80},
    {"m16n8k16.f16", 16, AB_F16, CD_F32, 80},
    {"m16n8k8.bf16", 8, AB_BF16, CD_F32, 80},
    {"m16n8k8.f16", 8, AB_F16, CD_F32, 75},
    {"m16n8k16.f16acc", 16, AB_F16, CD_F16, 80},
    {"m16n8k8.f16acc", 8, AB_F16, CD_F16, 75},
    {"m16n8k8.tf32", 8, AB_TF32, CD_F32, 80},
    {"m16n8k32.s8", 32, AB_S8, CD_S32, 80},
    {"m16n8k32.u8", 32, AB_U8, CD_S32, 80},
    {"m16n8k32.e4m3", 32, AB_E4M3, CD_F32, 89},
    {"m16n8k32.e5m2", 32, AB_E5M2, CD_F32, 89},
};
static const int NKINDS = sizeof kinds / sizeof *kinds;

/* ---- the kernel: lane registers in, D registers out ------------------- */

/* Lane l of warp w reads its words at [(32*w + l) * 4 ...]. */
#define A4 la[0], la[1], la[2], la[3]
#define A2 la[0], la[1]
#define B2 lb[0], lb[1]
#define B1 lb[0]
#define F32(fn, AW, BW)                                                     \
    {                                                                       \
        float x0, x1, x2, x3;                                               \
        fn(x0, x1, x2, x3, AW, BW, __uint_as_float(lc[0]),                  \
           __uint_as_float(lc[1]), __uint_as_float(lc[2]),                  \
           __uint_as_float(lc[3]));                                         \
        ld[0] = __float_as_uint(x0);                                        \
        ld[1] = __float_as_uint(x1);                                        \
        ld[2] = __float_as_uint(x2);                                        \
        ld[3] = __float_as_uint(x3);                                        \
    }
#define S32(fn, AW, BW)                                                     \
    {                                                                       \
        int x0, x1, x2, x3;                                                 \
        fn(x0, x1, x2, x3, AW, BW, (int)lc[0], (int)lc[1], (int)lc[2],      \
           (int)lc[3]);                                                     \
        ld[0] = (unsigned)x0;                                               \
        ld[1] = (unsigned)x1;                                               \
        ld[2] = (unsigned)x2;                                               \
        ld[3] = (unsigned)x3;                                               \
    }
#define F16(fn, AW, BW)                                                     \
    {                                                                       \
        unsigned x0, x1;                                                    \
        fn(x0, x1, AW, BW, lc[0], lc[1]);                                   \
        ld[0] = x0;                                                         \
        ld[1] = x1;                                                         \
    }

__global__ void mma_kernel(int kind, const unsigned *a, const unsigned *b,
                           const unsigned *c, unsigned *d)
{
    unsigned t = threadIdx.x;
    const unsigned *la = a + 4 * t, *lb = b + 2 * t, *lc = c + 4 * t;
    unsigned *ld = d + 4 * t;
    (void)la;
    (void)lb;
    (void)lc;
    (void)ld;
    switch (kind) {
#if HAS(0, 80)
    case 0: F32(td_ptx_mma_sync_aligned_m16n8k16_row_col_f32_bf16_bf16_f32, A4, B2) break;
#endif
#if HAS(1, 80)
    case 1: F32(td_ptx_mma_sync_aligned_m16n8k16_row_col_f32_f16_f16_f32, A4, B2) break;
#endif
#if HAS(2, 80)
    case 2: F32(td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_bf16_bf16_f32, A2, B1) break;
#endif
#if HAS(3, 75)
    case 3: F32(td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_f16_f16_f32, A2, B1) break;
#endif
#if HAS(4, 80)
    case 4: F16(td_ptx_mma_sync_aligned_m16n8k16_row_col_f16_f16_f16_f16, A4, B2) break;
#endif
#if HAS(5, 75)
    case 5: F16(td_ptx_mma_sync_aligned_m16n8k8_row_col_f16_f16_f16_f16, A2, B1) break;
#endif
#if HAS(6, 80)
    case 6: F32(td_ptx_mma_sync_aligned_m16n8k8_row_col_f32_tf32_tf32_f32, A4, B2) break;
#endif
#if HAS(7, 80)
    case 7: S32(td_ptx_mma_sync_aligned_m16n8k32_row_col_s32_s8_s8_s32, A4, B2) break;
#endif
#if HAS(8, 80)
    case 8: S32(td_ptx_mma_sync_aligned_m16n8k32_row_col_s32_u8_u8_s32, A4, B2) break;
#endif
#if HAS(9, 89)
    case 9: F32(td_ptx_mma_sync_aligned_m16n8k32_row_col_f32_e4m3_e4m3_f32, A4, B2) break;
#endif
#if HAS(10, 89)
    case 10: F32(td_ptx_mma_sync_aligned_m16n8k32_row_col_f32_e5m2_e5m2_f32, A4, B2) break;
#endif
    default:
        break;
    }
}

/* Whether the kernel was compiled with kind k. */
static bool compiled(int k)
{
    switch (k) {
#define K(i, sm) case i: return HAS(i, sm);
    K(0, 80) K(1, 80) K(2, 80) K(3, 75) K(4, 80) K(5, 75) K(6, 80) K(7, 80)
    K(8, 80) K(9, 89) K(10, 89)
#undef K
    }
    return false;
}

/* ---- number formats (host) --------------------------------------------- */

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static double f16_val(uint32_t h)
{
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}
/* Nearest float16 (ties to even) of a value inside its finite range. */
static uint32_t f16_of(double x)
{
    uint32_t best = 0;
    double bd = INFINITY;
    uint32_t s = x < 0 ? 0x8000 : 0;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        double d = fabs(f16_val(h) - fabs(x));
        if (d < bd || (d == bd && (h & 1) == 0)) {
            bd = d;
            best = h;
        }
    }
    return s | best;
}
static double f8_val(uint32_t v, bool e4m3)
{
    int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    int e = (v & 0x7f) >> mb, m = v & ((1 << mb) - 1);
    double r = e == 0 ? ldexp(m, 1 - bias - mb)
                      : ldexp(m + (1 << mb), e - bias - mb);
    return v & 0x80 ? -r : r;
}
static bool f8_finite(uint32_t v, bool e4m3)
{
    return e4m3 ? (v & 0x7f) != 0x7f : (v & 0x7c) != 0x7c;
}

/* ---- the fragment tables of the PTX ISA (m16n8k*) ------------------------ */

static int elem_bits(int ab)
{
    return ab == AB_TF32 ? 32 : ab <= AB_BF16 ? 16 : 8;
}

/* Row and column of A element i (a0, a1, ...) of lane l. */
static void a_pos(const kind &K, int l, int i, int &row, int &col)
{
    int g = l >> 2, t = l % 4;
    switch (elem_bits(K.ab)) {
    case 16:
        /* a0,a1: (g, 2t..); a2,a3: (g+8, 2t..); k16: a4..a7 at col + 8 */
        row = g + 8 * ((i >> 1) & 1);
        col = t * 2 + (i & 1) + 8 * (i >= 4);
        return;
    case 32:
        /* tf32 m16n8k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4) */
        row = g + 8 * (i & 1);
        col = t + 4 * (i >= 2);
        return;
    default:
        /* 8-bit m16n8k32: a0..a3 (g, 4t..), a4..a7 (g+8, 4t..), a8..a15
         * the same at col + 16 */
        row = g + 8 * ((i >> 2) & 1);
        col = t * 4 + (i & 3) + 16 * (i >= 8);
        return;
    }
}

/* Row (k) of B element i of lane l; its column is l >> 2. */
static int b_row(const kind &K, int l, int i)
{
    int t = l % 4;
    switch (elem_bits(K.ab)) {
    case 16:
        return t * 2 + (i & 1) + 8 * (i >= 2);
    case 32:
        return t + 4 * i;
    default:
        return t * 4 + (i & 3) + 16 * (i >= 4);
    }
}

/* Row and column of C / D element i (c0..c3) of lane l. */
static void c_pos(int l, int i, int &row, int &col)
{
    row = (l >> 2) + 8 * (i >= 2);
    col = (l % 4) * 2 + (i & 1);
}

/* ---- one kind, one data mode ------------------------------------------- */

static unsigned rng_state = 12345;
static unsigned rnd()
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}
static double uniform() { return (rnd() % 2000001) / 1000000.0 - 1.0; }

/* A random (or small integer) input element: its value and its bits. */
static void input(int ab, bool exact, double &v, uint32_t &bits)
{
    int small = (int)(rnd() % 5) - 2;
    switch (ab) {
    case AB_F16:
        bits = exact ? f16_of(small) : f16_of(uniform());
        v = f16_val(bits);
        return;
    case AB_BF16: {
        float f = exact ? (float)small : (float)uniform();
        uint32_t u = f32_bits(f);
        u += 0x7fff + (u >> 16 & 1); /* to nearest even */
        bits = u >> 16;
        v = bits_f32(bits << 16);
        return;
    }
    case AB_TF32:
        bits = f32_bits(exact ? (float)small : (float)uniform()) & ~0x1fffu;
        v = bits_f32(bits);
        return;
    case AB_S8:
        bits = rnd() & 0xff;
        v = (int8_t)bits;
        return;
    case AB_U8:
        bits = rnd() & 0xff;
        v = bits;
        return;
    default: {
        bool e4 = ab == AB_E4M3;
        if (exact) {
            /* small integers are exact in both 8-bit formats */
            double want = small;
            for (bits = 0; bits < 256; bits++)
                if (f8_finite(bits, e4) && f8_val(bits, e4) == want)
                    break;
        } else {
            do
                bits = rnd() & 0xff;
            while (!f8_finite(bits, e4) || fabs(f8_val(bits, e4)) > 16);
        }
        v = f8_val(bits, e4);
        return;
    }
    }
}

/* Runs kind k on two warps with data of the mode; true when D matches. */
static bool check(int k, bool exact, double *max_err)
{
    const kind &K = kinds[k];
    const int W = 2, T = 32 * W, KK = K.k, bits = elem_bits(K.ab);
    const int epw = 32 / bits;
    std::vector<double> A(W * 16 * KK), B(W * KK * 8), C(W * 16 * 8);
    std::vector<uint32_t> ha(T * 4, 0), hb(T * 2, 0), hc(T * 4, 0),
        hd(T * 4, 0);
    std::vector<uint32_t> abits(W * 16 * KK), bbits(W * KK * 8);
    for (int w = 0; w < W; w++) {
        for (int i = 0; i < 16 * KK; i++)
            input(K.ab, exact, A[w * 16 * KK + i], abits[w * 16 * KK + i]);
        for (int i = 0; i < KK * 8; i++)
            input(K.ab, exact, B[w * KK * 8 + i], bbits[w * KK * 8 + i]);
        for (int i = 0; i < 16 * 8; i++) {
            double &c = C[w * 128 + i];
            if (K.cd == CD_S32)
                c = (int)(rnd() % 2001) - 1000;
            else if (exact)
                c = (int)(rnd() % 9) - 4;
            else
                c = uniform();
            if (K.cd == CD_F16)
                c = f16_val(f16_of(c));
            else if (K.cd == CD_F32)
                c = (float)c;
        }
        for (int l = 0; l < 32; l++) {
            int t = 32 * w + l, row, col;
            for (int i = 0; i < 16 * KK / 32; i++) {
                a_pos(K, l, i, row, col);
                ha[4 * t + i / epw] |= abits[w * 16 * KK + row * KK + col]
                                       << (i % epw * bits);
            }
            for (int i = 0; i < KK * 8 / 32; i++) {
                int kr = b_row(K, l, i);
                hb[2 * t + i / epw] |= bbits[w * KK * 8 + kr * 8 + (l >> 2)]
                                       << (i % epw * bits);
            }
            for (int i = 0; i < 4; i++) {
                c_pos(l, i, row, col);
                double c = C[w * 128 + row * 8 + col];
                if (K.cd == CD_F32)
                    hc[4 * t + i] = f32_bits((float)c);
                else if (K.cd == CD_S32)
                    hc[4 * t + i] = (uint32_t)(int32_t)c;
                else
                    hc[4 * t + i / 2] |= f16_of(c) << (16 * (i % 2));
            }
        }
    }
    unsigned *da, *db, *dc, *dd;
    CK(cudaMalloc((void **)&da, ha.size() * 4));
    CK(cudaMalloc((void **)&db, hb.size() * 4));
    CK(cudaMalloc((void **)&dc, hc.size() * 4));
    CK(cudaMalloc((void **)&dd, hd.size() * 4));
    CK(cudaMemcpy(da, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dc, hc.data(), hc.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dd, 0xff, hd.size() * 4));
    /* On one line: the stand-in's build rewrites a launch line by line. */
    mma_kernel<<<1, 64>>>(k, da, db, dc, dd);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hd.data(), dd, hd.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
    CK(cudaFree(dd));
    bool ok = true;
    *max_err = 0;
    for (int w = 0; w < W; w++)
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < 4; i++) {
                int t = 32 * w + l, row, col;
                c_pos(l, i, row, col);
                double ref = C[w * 128 + row * 8 + col], mag = fabs(ref);
                for (int x = 0; x < KK; x++) {
                    double p = A[w * 16 * KK + row * KK + x] *
                               B[w * KK * 8 + x * 8 + col];
                    ref += p;
                    mag += fabs(p);
                }
                double got;
                if (K.cd == CD_F32)
                    got = bits_f32(hd[4 * t + i]);
                else if (K.cd == CD_S32)
                    got = (int32_t)hd[4 * t + i];
                else
                    got = f16_val(hd[4 * t + i / 2] >> (16 * (i % 2)) & 0xffff);
                double u = K.cd == CD_F16 ? ldexp(1, -11) : ldexp(1, -24);
                double tol = exact || K.cd == CD_S32
                                 ? 0
                                 : (K.cd == CD_F16 ? KK : 4 * KK) * u * mag +
                                       u * fabs(ref);
                double err = fabs(got - ref);
                if (!(err <= tol)) {
                    if (ok)
                        printf("  %s warp %d lane %d d%d (row %d, col %d): "
                               "got %.9g, want %.9g (tolerance %.3g)\n",
                               K.name, w, l, i, row, col, got, ref, tol);
                    ok = false;
                }
                if (err > *max_err)
                    *max_err = err;
            }
    return ok;
}

int main()
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("SKIP %s: no CUDA device\n", TD_NAME);
        return 77;
    }
    int failed = 0, run = 0;
    for (int k = 0; k < NKINDS; k++) {
        if (!compiled(k))
            continue;
        for (int exact = 1; exact >= 0; exact--) {
            double err;
            bool ok = check(k, exact, &err);
            printf("%s %s %s: max error %.3g\n", ok ? "ok  " : "BAD ",
                   kinds[k].name, exact ? "exact" : "random", err);
            failed += !ok;
            run++;
        }
    }
    if (failed || run == 0)
        printf("FAIL %s: %d of %d checks failed\n", TD_NAME, failed, run);
    else
        printf("PASS %s: %d checks\n", TD_NAME, run);
    return failed || run == 0 ? 1 : 0;
}
