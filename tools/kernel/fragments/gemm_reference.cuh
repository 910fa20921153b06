//! gemm programs (kernel_gemm.c): the reference matmul and its tolerance.
//! The tables before it name, for every (row, col) of the logical
//! matrices, the element of each buffer's instance that holds it, and the
//! dtype signature's constants (TD_GM_TF32, TD_GM_INT, TD_GM_TOL_UNIT,
//! TD_GM_TOL_FLOOR; docs/verification.md, "Gemm programs").
/* An input as the instruction reads it.  tf32 (float32 in memory): the
 * tensor core ignores the low 13 mantissa bits, so the reference drops
 * them (truncation toward zero, not rounding).  Exact data (integers in
 * [-8, 8]) has those bits zero, so there the assumption changes nothing;
 * random data (float32 values with all their bits) checks it. */
static inline double td_gm_in(double v)
{
#if TD_GM_TF32
    float f = (float)v;
    unsigned int u;
    memcpy(&u, &f, sizeof u);
    u &= ~0x1fffu;
    memcpy(&f, &u, sizeof f);
    return (double)f;
#else
    return v;
#endif
}
/* An int32 accumulator wraps modulo 2^32 (mma's integer add without
 * .satfinite); the double holds the exact sum first. */
static inline double td_gm_wrap32(double v)
{
#if TD_GM_INT
    const unsigned long long x = (unsigned long long)(long long)v;
    return (double)(int)(unsigned int)(x & 0xffffffffULL);
#else
    return v;
#endif
}
/* D = alpha * A' B' + beta * C over the regions (A' = A or its transpose,
 * B' likewise), in double from the inputs as their dtype stores them
 * (tf32: as the instruction reads them).  Every D element outside the
 * region must come back as staged (want = the input, tolerance 0).
 * Exact data: integers small enough that every product and every partial
 * sum, in any order, is exact in the accumulator (kernel_gemm.c's
 * GM_SIGS: float32 below 2^24, float16 below 2^11) and int32 sums exact
 * modulo 2^32:
 * tolerance 0.  Random data: every product of two inputs is exact in the
 * tensor core, and each of the K + 1 additions (its own order and
 * truncation, one rounding per mma instruction between K tiles) errs by
 * at most TD_GM_TOL_UNIT (sum_k |a b| + |beta c|) + TD_GM_TOL_FLOOR; the
 * tolerance is K + 1 of those (integers: 0). */
static void td_gm_reference(const double *a, const double *b, const double *c,
                            const double *d_in, double *want, double *tol)
{
    for (long long e = 0; e < TD_DST_ELEMS; ++e) {
        want[e] = d_in[e];
        tol[e] = 0.0;
    }
    for (int i = 0; i < TD_GM_M; ++i)
        for (int j = 0; j < TD_GM_N; ++j) {
            double s = 0.0, mag = 0.0;
            for (int k = 0; k < TD_GM_K; ++k) {
                const double p = td_gm_in(a[td_gm_a[i * TD_GM_K + k]]) *
                                 td_gm_in(b[td_gm_b[k * TD_GM_N + j]]);
                s += p;
                mag += fabs(p);
            }
            /* beta = 0: C is not read (it may hold the poison). */
            const double cv = TD_GM_BETA != 0.0
                                  ? TD_GM_BETA * c[td_gm_c[i * TD_GM_N + j]]
                                  : 0.0;
            const int e = td_gm_d[i * TD_GM_N + j];
            want[e] = td_gm_wrap32(TD_GM_ALPHA * s + cv);
            tol[e] = td_data_random
                         ? TD_TOL_SCALE * (TD_GM_K + 1) *
                               (TD_GM_TOL_UNIT *
                                    (fabs(TD_GM_ALPHA) * mag + fabs(cv)) +
                                TD_GM_TOL_FLOOR)
                         : 0.0;
        }
}
