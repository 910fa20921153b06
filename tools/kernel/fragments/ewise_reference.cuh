//! Elementwise ops: rounding to the dst dtype, operand broadcasting and
//! td_ew_reference (the op itself is td_ew_f, written from the row of
//! ewise_table.h).
/* x rounded to nearest even with p significand bits, normal exponents
 * down to emin (below: the subnormal spacing) and overflow to inf. */
static inline double td_round_float(double x, int p, int emin, double maxv)
{
    if (x == 0.0 || !std::isfinite(x))
        return x;
    int e;
    frexp(x, &e);
    const int lead = e - 1 < emin ? emin : e - 1;
    const double q = ldexp(1.0, lead - p + 1);
    const double r = nearbyint(x / q) * q;
    return fabs(r) > maxv ? (r > 0 ? INFINITY : -INFINITY) : r;
}
/* The reference value as the dst dtype holds it: floats round to
 * nearest even, integers truncate (a C conversion) and wrap. */
static inline double td_round_dst(double x)
{
    if (TD_DST_P > 0)
        return td_round_float(x, TD_DST_P, TD_DST_EMIN, TD_DST_MAXV);
    if (!std::isfinite(x))
        return x;
    x = trunc(x);
    if (TD_DST_BITS >= 64)
        return x;
    const double m = ldexp(1.0, TD_DST_BITS);
    x = fmod(x, m);
    if (x < 0)
        x += m;
    if (TD_DST_SIGNED && x >= m / 2)
        x -= m;
    return x;
}
/* One ulp of the compute dtype at y (0 without a float). */
static inline double td_ulp_c(double y)
{
    if (TD_C_P == 0)
        return 0.0;
    int e = TD_C_EMIN + 1;
    if (y != 0.0 && std::isfinite(y))
        frexp(y, &e);
    const int lead = e - 1 < TD_C_EMIN ? TD_C_EMIN : e - 1;
    return ldexp(1.0, lead - TD_C_P + 1);
}
/* Operand i's value for the dst element at region coordinates cd:
 * NumPy's right-aligned broadcasting (extent-1 dims repeat). */
static inline double td_ew_operand(int i, const double *const *bufs,
                                   const long long *cd)
{
    const td_ew_opnd *o = &td_ew_opnds[i];
    if (o->buf < 0)
        return o->value;
    long long f = 0;
    for (int j = 0; j < o->ndim; ++j) {
        const int dd = TD_DST_NDIM - o->ndim + j;
        const long long c = o->ext[j] == 1 || dd < 0 ? 0 : cd[dd];
        f = f * o->shape[j] + o->start[j] + c;
    }
    return bufs[o->buf][f];
}
static double *td_ew_ulp; /* per dst element: one ulp (compute dtype) */
/* Whether x is representable in the compute dtype (integers: always). */
static inline bool td_c_exact(double x)
{
    return TD_C_P == 0 || td_round_float(x, TD_C_P, TD_C_EMIN, INFINITY) == x;
}
/*
 * The expected dst of one instance: `init` (the staged values) with
 * every dst region element replaced by td_round_dst(op(operands)),
 * computed in double from the stored inputs.  tol[e] is ULPS ulps of
 * the compute dtype at the reference plus |f'(t)| times the rounding
 * the argument t may have taken (td_ew_f); 0 outside the region, and 0
 * for the exact ops on --data exact where the result is representable.
 * TD_TOL_SCALE (default 1) scales it (tests build with 0).
 */
static inline void td_ew_reference(const double *const *bufs,
                                   const double *init, double *want,
                                   double *tol)
{
    if (td_ew_ulp == NULL)
        td_ew_ulp = (double *)calloc(TD_DST_ELEMS, sizeof(double));
    if (td_ew_ulp == NULL) {
        printf("FAIL %s host out of memory\n", TD_NAME);
        exit(TD_EXIT_FAIL);
    }
    for (long long e = 0; e < TD_DST_ELEMS; ++e) {
        want[e] = init[e];
        tol[e] = 0.0;
        td_ew_ulp[e] = 0.0;
    }
    long long n = 1, cd[TD_DST_NDIM];
    for (int d = 0; d < TD_DST_NDIM; ++d)
        n *= td_dst_ext[d];
    double v[TD_EW_NOPND + 1];
    for (long long k = 0; k < n; ++k) {
        long long q = k;
        for (int d = TD_DST_NDIM - 1; d >= 0; --d) {
            cd[d] = q % td_dst_ext[d];
            q /= td_dst_ext[d];
        }
        for (int i = 0; i < TD_EW_NOPND; ++i)
            v[i] = td_ew_operand(i, bufs, cd);
        for (int i = 0; TD_EW_INT_COMPUTE && i < TD_EW_NSRC; ++i)
            v[i] = trunc(v[i]);
        double r = 0.0, dt = 0.0;
        td_ew_f(v, &r, &dt);
        const long long de = td_flat(TD_DST_NDIM, td_dst_shape, td_dst_start, cd);
        want[de] = td_round_dst(r);
        td_ew_ulp[de] = td_ulp_c(want[de]);
        /* A rounded argument moves the reference's own rounding too:
         * one more ulp where dt > 0. */
        tol[de] = TD_TOL_SCALE * ((TD_EW_ULPS(r) + (dt > 0.0 ? 1.0 : 0.0)) *
                                  td_ulp_c(want[de]) + dt + TD_EW_TINY) +
                  TD_EW_INT_TOL;
        /* add, sub, mul, maximum, fma, fill, cast, zero on exact data:
         * when the exact result (for fma also the product, which an
         * unfused multiply rounds) is representable in the compute
         * dtype and the dst, every correctly rounded step gives it
         * exactly. */
        if (TD_EW_EXACT_OP && !td_data_random && want[de] == r &&
            td_c_exact(r) && (TD_EW_EXACT_OP != 2 || td_c_exact(v[0] * v[1])))
            tol[de] = 0.0;
    }
}
