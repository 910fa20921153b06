/*
 * The host side of the GPU value check (gpu_values.c writes the kernels
 * and a table of cases, then includes this file): the inputs of each
 * dtype, exact references, and the comparison of what the device wrote.
 *
 * Every value of every dtype is held exactly in a long double (x86's 64-bit
 * significand).  References round once, to nearest even, from the exact
 * result (round_fmt), so they do not share the device's code.
 */
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

enum vt {
    V_float32, V_float16, V_bfloat16, V_float64, V_int8, V_int16, V_int32,
    V_int64, V_uint8, V_uint16, V_uint32, V_uint64, V_COUNT
};

static const char *const vt_name[V_COUNT] = {
    "float32", "float16", "bfloat16", "float64", "int8", "int16", "int32",
    "int64", "uint8", "uint16", "uint32", "uint64"};

static int vt_size(vt t)
{
    static const int s[V_COUNT] = {4, 2, 2, 8, 1, 2, 4, 8, 1, 2, 4, 8};
    return s[t];
}

static bool vt_float(vt t)
{
    return t <= V_float64;
}

static bool vt_signed(vt t)
{
    return t <= V_int64;
}

/* Significand bits (with the hidden one) and exponent range of a float
 * dtype. */
static void vt_fmt(vt t, int *p, int *emin, int *emax)
{
    switch (t) {
    case V_float16: *p = 11; *emin = -14; *emax = 15; return;
    case V_bfloat16: *p = 8; *emin = -126; *emax = 127; return;
    case V_float64: *p = 53; *emin = -1022; *emax = 1023; return;
    default: *p = 24; *emin = -126; *emax = 127; return;
    }
}

/* x rounded to nearest even in a binary format of p significand bits. */
static long double round_fmt(long double x, int p, int emin, int emax)
{
    if (std::isnan(x) || std::isinf(x) || x == 0)
        return x;
    long double ax = fabsl(x);
    int e;
    frexpl(ax, &e);
    int E = e - 1 < emin ? emin : e - 1;
    long double q = ldexpl(1.0L, E - (p - 1));
    long double r = nearbyintl(ax / q) * q;
    if (r >= ldexpl(1.0L, emax + 1))
        r = INFINITY;
    return copysignl(r, x);
}

static long double round_to(vt t, long double x)
{
    int p, emin, emax;
    vt_fmt(t, &p, &emin, &emax);
    return round_fmt(x, p, emin, emax);
}

/* A 16-bit float's bits as a value. */
static long double half_bits(uint16_t h, vt t)
{
    if (t == V_bfloat16) {
        uint32_t w = (uint32_t)h << 16;
        float f;
        memcpy(&f, &w, 4);
        return f;
    }
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    long double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexpl(m, -24);
    else
        v = ldexpl(1024 + m, e - 25);
    return s ? -v : v;
}

/* The bits of a 16-bit float value (exactly representable, or inf/nan). */
static uint16_t to_half_bits(long double v, vt t)
{
    uint16_t s = signbit(v) ? 0x8000 : 0;
    if (t == V_bfloat16) {
        float f = (float)v; /* exact: v is a bfloat16 value */
        uint32_t w;
        memcpy(&w, &f, 4);
        return std::isnan(v) ? 0x7fc0 : (uint16_t)(w >> 16);
    }
    if (std::isnan(v))
        return 0x7e00;
    long double a = fabsl(v);
    if (std::isinf(v))
        return s | 0x7c00;
    if (a < ldexpl(1.0L, -14))
        return s | (uint16_t)(a * ldexpl(1.0L, 24));
    int e;
    frexpl(a, &e); /* a = m 2^e, m in [0.5, 1) */
    uint16_t m = (uint16_t)(ldexpl(a, 11 - e) - 1024);
    return s | (uint16_t)((e - 1 + 15) << 10) | m;
}

static long double load(vt t, const void *p)
{
    switch (t) {
    case V_float32: { float v; memcpy(&v, p, 4); return v; }
    case V_float64: { double v; memcpy(&v, p, 8); return v; }
    case V_float16:
    case V_bfloat16: { uint16_t v; memcpy(&v, p, 2); return half_bits(v, t); }
    case V_int8: return *(const int8_t *)p;
    case V_int16: { int16_t v; memcpy(&v, p, 2); return v; }
    case V_int32: { int32_t v; memcpy(&v, p, 4); return v; }
    case V_int64: { int64_t v; memcpy(&v, p, 8); return v; }
    case V_uint8: return *(const uint8_t *)p;
    case V_uint16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case V_uint32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* Stores v, a value of dtype t (exactly representable). */
static void store(vt t, void *p, long double v)
{
    switch (t) {
    case V_float32: { float x = (float)v; memcpy(p, &x, 4); return; }
    case V_float64: { double x = (double)v; memcpy(p, &x, 8); return; }
    case V_float16:
    case V_bfloat16: { uint16_t x = to_half_bits(v, t); memcpy(p, &x, 2); return; }
    case V_int8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); return; }
    case V_int16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); return; }
    case V_int32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); return; }
    case V_int64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); return; }
    case V_uint8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); return; }
    case V_uint16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); return; }
    case V_uint32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); return; }
    default: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); return; }
    }
}

/* Integer range of t, as long doubles (exact). */
static void int_range(vt t, long double *lo, long double *hi)
{
    int bits = vt_size(t) * 8;
    if (vt_signed(t)) {
        *lo = -ldexpl(1.0L, bits - 1);
        *hi = ldexpl(1.0L, bits - 1) - 1;
    } else {
        *lo = 0;
        *hi = ldexpl(1.0L, bits) - 1;
    }
}

/* An integer reduced into t's range, two's complement (C's conversions on
 * both sides). */
static long double wrap(vt t, long double v)
{
    int bits = vt_size(t) * 8;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)(-v) : (uint64_t)v;
    if (bits < 64)
        u &= ((uint64_t)1 << bits) - 1;
    if (vt_signed(t) && bits < 64 && (u >> (bits - 1)))
        return (long double)u - ldexpl(1.0L, bits);
    if (vt_signed(t) && bits == 64)
        return (long double)(int64_t)u;
    return (long double)u;
}

/* ---- inputs ---------------------------------------------------------------- */

#define P2(e) ldexpl(1.0L, e)

/* Edge values of each dtype: ties and near-ties of the 16-bit formats,
 * their range ends, subnormals, signed zeros, infinities, NaN, and the
 * integers where converting through float32 would round twice. */
static int inputs(vt t, long double *v)
{
    int n = 0;
#define ADD(x) (v[n++] = (x))
    switch (t) {
    case V_float32:
        ADD(0.0L); ADD(-0.0L); ADD(1); ADD(-1); ADD((float)0.1L);
        ADD((float)(1.0L / 3)); ADD(1 + P2(-11)); ADD(1 + 3 * P2(-11));
        ADD(1 + P2(-11) + P2(-23)); ADD(1 + P2(-8)); ADD(1 + 3 * P2(-8));
        ADD(1 + P2(-8) + P2(-23)); ADD(65519.99609375L); ADD(65520);
        ADD(P2(-25)); ADD(3 * P2(-25)); ADD(FLT_MAX); ADD(-FLT_MAX);
        ADD(P2(-140)); ADD(3.5L); ADD(-2.5L); ADD(255.75L);
        ADD(2147483520.0L); ADD(-128.75L); ADD(300); ADD(INFINITY);
        ADD(-INFINITY); ADD(NAN);
        break;
    case V_float64:
        ADD(0.0L); ADD(-0.0L); ADD(1); ADD((double)0.1L);
        ADD(1 + P2(-11) + P2(-40)); ADD(1 + P2(-8) + P2(-40));
        ADD(1 + P2(-24) + P2(-60)); ADD(1e300L); ADD(-1e-300L);
        ADD(2.5L); ADD((double)-3.7L); ADD(65504); ADD(4294967295.0L);
        ADD(-2147483648.0L); ADD(P2(-1074)); ADD(P2(-25) + P2(-60));
        ADD(INFINITY); ADD(-INFINITY); ADD(NAN);
        break;
    case V_float16:
        ADD(0.0L); ADD(-0.0L); ADD(1); ADD(-1); ADD(0.5L); ADD(1.5L);
        ADD(65504); ADD(-65504); ADD(P2(-14)); ADD(P2(-24));
        ADD(3 * P2(-24)); ADD(0.0999755859375L); ADD(1000.5L);
        ADD(-2.75L); ADD(7.5L); ADD(2048); ADD(100); ADD(-3);
        ADD(0.3330078125L); ADD(255); ADD(256); ADD(-128); ADD(127.5L);
        ADD(INFINITY); ADD(-INFINITY); ADD(NAN);
        break;
    case V_bfloat16:
        ADD(0.0L); ADD(-0.0L); ADD(1); ADD(-1); ADD(0.5L); ADD(1.5L);
        ADD(3.3895313892515355e38L); ADD(P2(-126)); ADD(P2(-133));
        ADD(0.10009765625L); ADD(-2.75L); ADD(7.5L); ADD(100); ADD(256);
        ADD(-128); ADD(65536); ADD(65280); ADD(16777216); ADD(P2(31));
        ADD(-P2(63)); ADD(1 + P2(-7)); ADD(INFINITY); ADD(-INFINITY);
        ADD(NAN);
        break;
    case V_int8:
        ADD(0); ADD(1); ADD(-1); ADD(127); ADD(-128); ADD(7); ADD(-13);
        ADD(100);
        break;
    case V_uint8:
        ADD(0); ADD(1); ADD(255); ADD(128); ADD(7); ADD(200);
        break;
    case V_int16:
        ADD(0); ADD(1); ADD(-1); ADD(32767); ADD(-32768); ADD(2049);
        ADD(2051); ADD(257); ADD(259); ADD(-2049);
        break;
    case V_uint16:
        ADD(0); ADD(1); ADD(65535); ADD(65520); ADD(65519); ADD(2049);
        ADD(257);
        break;
    case V_int32:
        ADD(0); ADD(1); ADD(-1); ADD(2147483647); ADD(-2147483648.0L);
        ADD(16842753); ADD(-16842753); ADD(2049); ADD(257); ADD(65520);
        ADD(1000000); ADD(16777217);
        break;
    case V_uint32:
        ADD(0); ADD(1); ADD(4294967295.0L); ADD(16842753);
        ADD(2147483649.0L); ADD(16777217);
        break;
    case V_int64:
        ADD(0); ADD(1); ADD(-1); ADD(P2(63) - 1); ADD(-P2(63));
        ADD(16842753); ADD(P2(40) + P2(32) + 1); ADD(-(P2(40) + P2(32) + 1));
        ADD(P2(53) + 1);
        break;
    default: /* uint64 */
        ADD(0); ADD(1); ADD(P2(64) - 1); ADD(P2(63) + P2(55) + 1);
        ADD(P2(40) + P2(32) + 1); ADD(P2(53) + 1);
        break;
    }
#undef ADD
    return n;
}

/* Small operands for the integer value ops (no signed overflow, no
 * division by zero issues beyond the ones skipped). */
static int small_inputs(vt t, long double *v)
{
    static const long double s[] = {0, 1, 2, 7, 13, 100, -1, -13, -100};
    int n = vt_signed(t) ? 9 : 6;
    for (int i = 0; i < n; i++)
        v[i] = s[i];
    if (t == V_uint8)
        v[n++] = 200;
    return n;
}

/* ---- references ------------------------------------------------------------- */

enum kind { K_CAST, K_PAIR, K_VALOP, K_MATH, K_PARAM };
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN };
enum { FN_EXP, FN_EXP2, FN_LOG2, FN_SQRT };

/* The cast of x to t; false when C leaves it undefined (a float out of an
 * integer's range, NaN to an integer). */
static bool ref_cast(vt from, vt to, long double x, long double *r)
{
    if (vt_float(to)) {
        *r = round_to(to, x);
        return true;
    }
    if (vt_float(from)) {
        long double lo, hi;
        int_range(to, &lo, &hi);
        if (std::isnan(x) || truncl(x) < lo || truncl(x) > hi)
            return false;
        *r = truncl(x) + 0.0L; /* an integer zero has no sign */
        return true;
    }
    *r = wrap(to, x);
    return true;
}

static bool ref_valop(vt t, int op, long double a, long double b,
                      long double *r)
{
    if (op == OP_MAX || op == OP_MIN) {
        if (std::isnan(a))
            *r = b;
        else if (std::isnan(b))
            *r = a;
        else
            *r = (op == OP_MAX) == (a < b) ? b : a;
        return true;
    }
    if (vt_float(t)) {
        if (t == V_float32) {
            float x = (float)a, y = (float)b;
            *r = op == OP_ADD ? x + y : op == OP_SUB ? x - y
                 : op == OP_MUL ? x * y : x / y;
        } else if (t == V_float64) {
            double x = (double)a, y = (double)b;
            *r = op == OP_ADD ? x + y : op == OP_SUB ? x - y
                 : op == OP_MUL ? x * y : x / y;
        } else {
            /* Exact (+ - *) or with 64 bits (/): one more rounding to 11
             * or 8 bits is the correctly rounded result. */
            long double v = op == OP_ADD ? a + b : op == OP_SUB ? a - b
                            : op == OP_MUL ? a * b : a / b;
            *r = round_to(t, v);
        }
        return true;
    }
    if (op == OP_DIV && b == 0)
        return false;
    long double v = op == OP_ADD ? a + b : op == OP_SUB ? a - b
                    : op == OP_MUL ? a * b : truncl(a / b);
    *r = wrap(t, v);
    return true;
}

static long double ref_math(int fn, long double x)
{
    switch (fn) {
    case FN_EXP: return expl(x);
    case FN_EXP2: return exp2l(x);
    case FN_LOG2: return log2l(x);
    default: return sqrtl(x);
    }
}

/* Units in the last place of t at the magnitude of v. */
static long double ulp(vt t, long double v)
{
    int p, emin, emax, e;
    vt_fmt(t, &p, &emin, &emax);
    frexpl(fabsl(v), &e);
    int E = e - 1 < emin ? emin : e - 1;
    return ldexpl(1.0L, E - (p - 1));
}

static bool same(long double got, long double want, bool zero_sign)
{
    if (std::isnan(want))
        return std::isnan(got);
    if (got != want)
        return false;
    return !zero_sign || want != 0 || signbit(got) == signbit(want);
}

/* ---- the run ---------------------------------------------------------------- */

typedef void (*launch_fn)(const void *x, const void *w, void *y, int n,
                          float alpha);

struct vcase {
    const char *name;
    kind k;
    vt from, to;
    int op; /* K_VALOP: OP_*; K_MATH: FN_* */
    launch_fn launch;
};

static int g_fail, g_values, g_skipped;

static void report(const vcase &c, long double a, long double b,
                   long double got, long double want)
{
    if (++g_fail <= 40)
        printf("FAIL %s: in %.21Lg, %.21Lg: got %.21Lg, want %.21Lg\n",
               c.name, a, b, got, want);
}

static bool run_case(const vcase &c)
{
    long double in[64], in2[64];
    int n = (c.k == K_VALOP && !vt_float(c.from)) ? small_inputs(c.from, in)
                                                 : inputs(c.from, in);
    int m = 1;
    if (c.k == K_VALOP) {
        memcpy(in2, in, sizeof in);
        m = n;
    }
    if (c.k == K_PARAM)
        m = 1;
    int total = n * m;
    if (c.k == K_PAIR && (total & 1))
        in[total++] = 0; /* pairs: an even count */
    int sx = vt_size(c.from), sy = vt_size(c.to);
    static unsigned char hx[8 * 64 * 64], hw[8 * 64 * 64], hy[8 * 64 * 64];
    if (total > 1024) {
        printf("FAIL %s: %d values, more than one block\n", c.name, total);
        g_fail++;
        return false;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            int k = i * m + j;
            store(c.from, hx + k * sx, in[i]);
            store(c.from, hw + k * sx, c.k == K_VALOP ? in2[j] : in[i]);
        }
    if (c.k == K_PAIR && total > n * m)
        store(c.from, hx + (total - 1) * sx, 0);
    void *dx, *dw, *dy;
    if (cudaMalloc(&dx, total * sx) != cudaSuccess ||
        cudaMalloc(&dw, total * sx) != cudaSuccess ||
        cudaMalloc(&dy, total * sy) != cudaSuccess) {
        printf("FAIL %s: cudaMalloc\n", c.name);
        g_fail++;
        return false;
    }
    cudaMemcpy(dx, hx, total * sx, cudaMemcpyHostToDevice);
    cudaMemcpy(dw, hw, total * sx, cudaMemcpyHostToDevice);
    cudaMemset(dy, 0xee, total * sy);
    const float alpha = 0.5f;
    c.launch(dx, dw, dy, c.k == K_PAIR ? total / 2 : total, alpha);
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess)
        err = cudaMemcpy(hy, dy, total * sy, cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
    if (err != cudaSuccess) {
        printf("FAIL %s: %s\n", c.name, cudaGetErrorString(err));
        g_fail++;
        return false;
    }
    int before = g_fail;
    for (int k = 0; k < total; k++) {
        long double a = load(c.from, hx + k * sx);
        long double b = load(c.from, hw + k * sx);
        long double got = load(c.to, hy + k * sy), want;
        bool ok = true, zero_sign = true;
        switch (c.k) {
        case K_CAST:
        case K_PAIR:
            if (!ref_cast(c.from, c.to, a, &want)) {
                g_skipped++;
                continue;
            }
            break;
        case K_PARAM:
            want = round_to(c.to, a * alpha);
            break;
        case K_VALOP:
            if (!ref_valop(c.from, c.op, a, b, &want)) {
                g_skipped++;
                continue;
            }
            zero_sign = c.op != OP_MAX && c.op != OP_MIN;
            break;
        case K_MATH: {
            want = round_to(c.to, ref_math(c.op, a));
            /* Within a few units in the last place (CUDA's documented
             * bounds: 2 for expf / exp2f, 1 for log2f, correctly rounded
             * sqrtf; the 16-bit functions go through float32). */
            long double tol = (c.to == V_float16 || c.to == V_bfloat16 ? 1
                                                                       : 4) *
                              ulp(c.to, want);
            if (!std::isnan(want) && !std::isinf(want) && want != 0 &&
                !std::isinf(got) && fabsl(got - want) <= tol) {
                g_values++;
                continue;
            }
            zero_sign = false;
            break;
        }
        }
        ok = same(got, want, zero_sign);
        g_values++;
        if (!ok)
            report(c, a, b, got, want);
    }
    return g_fail == before;
}

static int run_all(const vcase *cases, int n)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP gpu_values: no CUDA device\n");
        return 77;
    }
    int failed_cases = 0;
    for (int i = 0; i < n; i++)
        if (!run_case(cases[i]))
            failed_cases++;
    printf("%s: %d cases, %d values compared, %d left out (undefined in C), "
           "%d failed cases, %d failed values\n",
           failed_cases ? "FAIL" : "PASS", n, g_values, g_skipped,
           failed_cases, g_fail);
    return failed_cases ? 1 : 0;
}
