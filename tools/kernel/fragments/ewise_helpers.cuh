//! Elementwise ops: the input generators and td_ew_check (errors in ulps).
/* Input generators of elementwise programs (the first use of a buffer
 * picks one; docs/verification.md).  td_ew_grid(q, lo, hi): k/q with k
 * uniform in [lo, hi], exact in every float dtype; td_ew_unif(lo, hi):
 * uniform in [lo, hi). */
__attribute__((unused)) static inline double td_ew_grid(int q, long long lo,
                                                       long long hi)
{
    return (double)(lo + (long long)(td_rng() % (unsigned long long)(hi - lo + 1))) / q;
}
__attribute__((unused)) static inline double td_ew_unif(double lo, double hi)
{
    return lo + (hi - lo) * td_rand_u01();
}
__attribute__((unused)) static inline double td_ew_sign(void)
{
    return td_rng() % 2 ? -1.0 : 1.0;
}
__attribute__((unused)) static inline double td_ew_sq(double v)
{
    return v * v;
}

/* A dst value: checked as td_check does, and its error counted in ulps
 * of the compute dtype (td_ew_ulp). */
static double td_max_ulp = 0.0;
static inline void td_ew_check(const char *buf, long long inst, long long elem,
                        long long thread, long long slot, double got,
                        double want, double tol)
{
    const long long before = td_mismatches;
    td_check(buf, inst, elem, thread, slot, got, want, tol);
    if (before == 0 && td_mismatches == 1 && got == TD_EW_SENTINEL)
        strncat(td_first, " (the dst sentinel: never written)",
                sizeof td_first - strlen(td_first) - 1);
    else if (before == 0 && td_mismatches == 1 && want == TD_EW_SENTINEL)
        strncat(td_first, " (outside the dst region: written)",
                sizeof td_first - strlen(td_first) - 1);
    const double err = got == want || (got != got && want != want)
                           ? 0.0 : fabs(got - want);
    const double u = td_ew_ulp[elem];
    if (err <= tol && u > 0.0 && err / u > td_max_ulp)
        td_max_ulp = err / u;
}
