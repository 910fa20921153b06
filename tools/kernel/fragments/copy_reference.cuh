//! Copy programs: the generator of the source bits and the reference (the
//! expected bits of every dst position).
/* One source value's bits for element key k: --data exact gives
 * (k' * 0x9E3779B97F4A7C15 + 1) XOR a hash of k' >> width, cut to the
 * dtype's width, k' = k plus an offset per round (neighbours differ, so a
 * shifted or transposed access shows, also by a multiple of 2^width); --data random a hash of k, the round and the seed.  Floats keep
 * their exponent off all-ones (no inf or NaN) and off zero (no +-0 or
 * subnormals), except that with TD_CP_SPECIALS about one value in eight is
 * a NaN with a payload, +-inf, +-0 or a subnormal: a copy moves them all
 * bit for bit.  No value is the sentinel. */
static inline unsigned long long td_cp_mix(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}
static inline unsigned long long td_cp_gen(unsigned long long k,
                                           unsigned long long seed)
{
    const unsigned long long mask = TD_CP_BITS == 64 ? ~0ULL : (1ULL << TD_CP_BITS) - 1;
    const unsigned long long kr = k + (unsigned long long)td_round * 0x1F1ULL;
    unsigned long long b = td_data_random
                               ? td_cp_mix(seed ^ td_cp_mix(kr))
                               : kr * 0x9E3779B97F4A7C15ULL + 1ULL;
    /* Cut to the dtype's width, kr * C + 1 repeats every 2^width keys: a
     * 16-bit copy that reads 65,536 elements off would see the same bits.
     * The key's bits above the width change each repeat. */
    if (!td_data_random && TD_CP_BITS < 64)
        b ^= td_cp_mix(kr >> (TD_CP_BITS % 64));
    const unsigned long long h = td_cp_mix(kr ^ 0x5EC1A15ULL);
    b &= mask;
    if (TD_CP_EBITS > 0) {
        const unsigned long long emask = ((1ULL << TD_CP_EBITS) - 1) << TD_CP_MBITS;
        const unsigned long long mmask = (1ULL << TD_CP_MBITS) - 1;
        const unsigned long long sign = 1ULL << (TD_CP_BITS - 1);
        if ((b & emask) == emask)
            b &= ~(1ULL << TD_CP_MBITS); /* finite */
        if ((b & emask) == 0)
            b |= 1ULL << TD_CP_MBITS; /* normal */
        if (TD_CP_SPECIALS && h % 8 == 0) {
            switch ((h >> 8) % 6) {
            case 0: b = (b & sign) | emask | ((b & mmask) | 1ULL); break; /* NaN */
            case 1: b = emask; break;                     /* +inf */
            case 2: b = sign | emask; break;              /* -inf */
            case 3: b = 0; break;                         /* +0 */
            case 4: b = sign; break;                      /* -0 */
            default: b = (b & (sign | mmask)) | 1ULL; break; /* subnormal */
            }
        }
    }
    if (b == TD_CP_SENTINEL)
        b ^= 1ULL;
    return b;
}

/* The expected bits of every dst position of one instance: the paired
 * source element's bits inside the region, the sentinel everywhere else
 * (outside the region, holes, guard elements). */
static inline void td_cp_reference(const unsigned long long *src,
                                   unsigned long long *want)
{
    for (long long e = 0; e < TD_DST_ELEMS; ++e)
        want[e] = td_cp_sidx[e] >= 0 ? src[td_cp_sidx[e]] : TD_CP_SENTINEL;
}
