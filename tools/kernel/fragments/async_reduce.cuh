//! TMA reductions: the values both operands get and the expected dst.
//! A reduction's result depends on the values, so the data are not bit
//! patterns: small multiples of 1/8 for floats (never subnormal; every sum
//! of two is exact in float32 and float16, and in bfloat16 the reference
//! starts from the rounded values and rounds once, as the hardware does),
//! small integers for integers, so that the host's
//! double arithmetic names the result exactly.  --data exact: a function
//! of the element's key and the round; --data random: a hash of the key,
//! the round and the seed.  The dst starts with its own values (salt 1),
//! the source with others (salt 0).
static inline double td_ca_value(unsigned long long k, unsigned long long seed, int salt)
{
    const unsigned long long kr = k * 2ULL + (unsigned long long)salt +
                                  (unsigned long long)td_round * 0x3F1ULL;
    const unsigned long long h = td_data_random ? td_cp_mix(seed ^ td_cp_mix(kr))
                                                : kr * 37ULL + 11ULL;
    const long long v = (long long)(h % 2001ULL);
    return TD_CA_UNSIGNED ? (double)v / TD_CA_SCALE
                          : (double)(v - 1000) / TD_CA_SCALE;
}
/* The bits of that value in the buffers' type. */
static inline unsigned long long td_ca_gen(unsigned long long k, unsigned long long seed, int salt)
{
    return td_bits(td_from_double<TD_CA_T>(td_ca_value(k, seed, salt)));
}
/* The expected dst of the reduction: old OP src inside the region, old
 * elsewhere (guards included). */
static inline void td_ca_reduce_reference(const unsigned long long *src,
                                          const unsigned long long *old,
                                          unsigned long long *want)
{
    for (long long e = 0; e < TD_DST_ELEMS; ++e) {
        if (td_cp_sidx[e] < 0) {
            want[e] = old[e];
            continue;
        }
        const double a = td_to_double(td_from_bits<TD_CA_T>(old[e]));
        const double b = td_to_double(td_from_bits<TD_CA_T>(src[td_cp_sidx[e]]));
        const double r = TD_CA_OP == 1 ? a + b : TD_CA_OP == 2 ? (a < b ? a : b)
                                                             : (a > b ? a : b);
        want[e] = td_bits(td_from_double<TD_CA_T>(r));
    }
}

/* The check of a reduction's dst position: the copy's, with the
 * reduction's words (inside the region the value is old OP src, outside
 * it the old value, not a sentinel). */
static inline void td_ca_check(const char *buf, long long inst, long long e,
                               long long thread, long long slot,
                               unsigned long long got, unsigned long long want,
                               double tol)
{
    (void)inst;
    (void)thread;
    (void)slot;
    (void)tol;
    if (got == want || td_mismatches++ != 0)
        return;
    static const char *const ops[] = {"", "+", "min", "max"};
    const int w = (TD_CP_BITS + 3) / 4;
    char at[96] = "", src[96] = "";
    if (e < TD_CP_DST_PAD || e >= TD_DST_ELEMS - TD_CP_DST_PAD)
        snprintf(at, sizeof at, " guard element %lld", e < TD_CP_DST_PAD ? TD_CP_DST_PAD - e
                 : e - (TD_DST_ELEMS - TD_CP_DST_PAD) + 1);
    else
        td_cp_coords(at, sizeof at, td_dst_shape, TD_CP_DST_NDIM, td_cp_dlog[e]);
    if (e < 0 || td_cp_sidx[e] < 0) {
        snprintf(td_first, sizeof td_first,
                 "round=%d %s%s: got 0x%0*llx want 0x%0*llx (its old value): "
                 "reduced outside the region",
                 td_round, buf, at, w, got, w, want);
        return;
    }
    td_cp_coords(src, sizeof src, td_src_shape, TD_CP_SRC_NDIM, td_cp_slog[e]);
    snprintf(td_first, sizeof td_first,
             "round=%d first mismatch at %s%s: got 0x%0*llx want 0x%0*llx "
             "(old %s %s%s)",
             td_round, buf, at, w, got, w, want, ops[TD_CA_OP], TD_CP_SRC_NAME, src);
}
