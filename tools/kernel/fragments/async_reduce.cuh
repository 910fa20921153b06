//! TMA reductions: the values both operands get and the expected dst.
//! A reduction's result depends on the values, so the data are not bit
//! patterns: small multiples of 1/8 for floats (every sum of two is exact
//! in each float type the reduction takes, never subnormal, never a
//! rounding question), small integers for integers, so that the host's
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
