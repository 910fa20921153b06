//! gemm programs (kernel_gemm.c): the reference matmul and its tolerance.
//! The tables before it name, for every (row, col) of the logical
//! matrices, the element of each buffer's instance that holds it.
/* D = alpha * A' B' + beta * C over the regions (A' = A or its transpose,
 * B' likewise), in double from the inputs as their dtype stores them.
 * Every D element outside the region must come back as staged (want =
 * the input, tolerance 0).  Exact data: every input is an integer in
 * [-2, 2], so every product (at most 4) and every partial sum in any
 * order (at most 4 K + 2) is an integer below 2^24, exact in the float32
 * accumulator: tolerance 0.  Random data: inputs uniform in [-1, 1]
 * rounded to their dtype; each product of two 16-bit floats is exact in
 * float32, and the K + 1 float32 additions (the tensor core's own order
 * and truncation, one rounding per mma instruction between K tiles) err
 * by at most (K + 1) 2^-23 (sum_k |a b| + |beta c|) each way; the
 * tolerance is twice that (TD_GM_TOL_UNIT = 2^-22). */
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
                const double p = a[td_gm_a[i * TD_GM_K + k]] *
                                 b[td_gm_b[k * TD_GM_N + j]];
                s += p;
                mag += fabs(p);
            }
            /* beta = 0: C is not read (it may hold NaN). */
            const double cv = TD_GM_BETA != 0.0
                                  ? TD_GM_BETA * c[td_gm_c[i * TD_GM_N + j]]
                                  : 0.0;
            const int e = td_gm_d[i * TD_GM_N + j];
            want[e] = TD_GM_ALPHA * s + cv;
            tol[e] = td_data_random
                         ? TD_TOL_SCALE * TD_GM_TOL_UNIT * (TD_GM_K + 1) *
                               (fabs(TD_GM_ALPHA) * mag + fabs(cv))
                         : 0.0;
        }
}
