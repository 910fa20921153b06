//! Reductions: the data of a round (td_sum_value, td_fill), after the
//! shared generators.
/* Sums, --data exact: k * TD_SUM_SCALE with k != 0 in [-TD_SUM_M,
 * TD_SUM_M]; with TD_SUM_EXACT every partial sum of the row, in any
 * order, is representable, so the sum is exact and a dropped or extra
 * term changes it. */
__attribute__((unused)) static inline double td_sum_value(void)
{
    const long long k = (long long)(td_rng() % (2ULL * TD_SUM_M)) - TD_SUM_M;
    return (double)(k >= 0 ? k + 1 : k) * TD_SUM_SCALE;
}
/* A nonzero integer in [lo, hi] (lo <= 0 < hi or 0 < lo). */
__attribute__((unused)) static inline double td_rand_nonzero(long long lo,
                                                            long long hi)
{
    if (lo == 0)
        lo = 1;
    double v = td_rand_int(lo, hi);
    return v == 0.0 ? (double)hi : v;
}
/* Max / min: row g's extreme in this round, one of TD_FILL_SPREAD values
 * that neighbouring rows do not share, beyond every other value. */
static inline double td_extreme(long long g, long long shift)
{
    const long long j = (g + td_round + shift) % TD_FILL_SPREAD;
    const long long k = TD_OP == 1 ? TD_FILL_HI - j : TD_FILL_LO + j;
    return (double)k * TD_FILL_SCALE;
}
/* Max / min with TD_SPECIALS, a term other than the extreme: about one in
 * 64 each is NaN (max / min skip it) or the infinity that loses (-inf for
 * max, +inf for min), never the one that wins: a winning infinity among
 * the others would be the answer whichever terms a body skipped or
 * misread (a row of 8192 held about 128), so the extreme's position
 * would stop mattering. */
__attribute__((unused)) static inline double td_special_other(double v)
{
    const unsigned long long r = td_rng() % 64;
    return r == 0 ? NAN : r == 1 || r == 2 ? (TD_OP == 1 ? -INFINITY : INFINITY) : v;
}
/* Max / min with TD_SPECIALS: the winning infinity is row g's extreme
 * itself in one round of 8, at the extreme's position (the others stay
 * below it), so a body that drops or misreads that term fails there
 * too, and one that mishandles an infinity fails. */
__attribute__((unused)) static inline double td_special_extreme(long long g,
                                                               long long shift,
                                                               double v)
{
    return (g + td_round + shift) % 8 == 5 ? (TD_OP == 1 ? INFINITY : -INFINITY) : v;
}
/* Max / min: any other value, strictly below (above) every extreme. */
static inline double td_other(void)
{
    const long long lo = TD_OP == 1 ? TD_FILL_LO : TD_FILL_LO + TD_FILL_SPREAD;
    const long long hi = TD_OP == 1 ? TD_FILL_HI - TD_FILL_SPREAD : TD_FILL_HI;
    if (TD_IS_FLOAT && td_data_random) {
        const double v = td_rand_normal();
        const double a = lo * TD_FILL_SCALE, b = hi * TD_FILL_SCALE;
        return v < a ? a : v > b ? b : v;
    }
    return td_rand_int(lo, hi) * TD_FILL_SCALE;
}
/* Where row g's extreme sits this round: the k-th position of the
 * stride order, k = g R + round + shift (R the rounds of data, without
 * the identity round), position k TD_POS_STRIDE mod P of the row's P
 * terms (the reduced elements in row-major order, then the accumulated
 * dst value).  The stride is coprime with P, so over R >= P / rows
 * rounds every position holds an extreme in some round and row, and with
 * R >= P every position of every row; and consecutive rounds land far
 * apart and in every residue class mod a small power of two, so a run
 * cut short by --rounds still reaches every lane, vector slot and
 * unrolled block of the body. */
static inline long long td_position(long long g, long long shift)
{
    const long long data_rounds = TD_ROUNDS - (TD_IDENT_ROUND >= 0);
    const long long j = td_round - (TD_IDENT_ROUND >= 0 && td_round > TD_IDENT_ROUND);
    const long long k = (g * data_rounds + j + shift) % TD_POSITIONS;
    return k * TD_POS_STRIDE % TD_POSITIONS;
}
/* Whether element f of the src buffer lies inside the src region. */
static inline bool td_in_src_region(long long f)
{
    for (int d = TD_SRC_NDIM - 1; d >= 0; --d) {
        const long long c = f % td_src_shape[d] - td_src_start[d];
        if (c < 0 || c >= td_src_ext[d])
            return false;
        f /= td_src_shape[d];
    }
    return true;
}
/*
 * Reworks instance inst's staged src and dst (as doubles) for this
 * round: max / min put each row's extreme at td_position with every
 * other value beyond it (NaN and infinities too with TD_SPECIALS);
 * without accum the dst region holds TD_POISON, which any read of the
 * dst before the body writes it carries into the result (in place, the
 * dst elements that are sources keep their data).  Elements outside the
 * regions keep the generators' values.
 */
static inline void td_fill(double *src, double *dst, long long inst)
{
    /* --data random rotates the positions by a shift drawn once per
     * run (so the coverage above holds in both modes). */
    static long long shift = -1;
    if (shift < 0)
        shift = td_data_random ? (long long)(td_rng() % TD_POSITIONS) : 0;
    long long cs[TD_SRC_NDIM], cd[TD_DST_NDIM];
    /* Sums with TD_SUM_SPARSE D, exact data (rows too long for every
     * term nonzero): round j keeps the terms red of row g with
     * (red + g + j) % D == 0 and zeroes the others, so every partial sum
     * is exact and every D rounds every term of a row is nonzero once (a
     * dropped, repeated or misread term changes the sum in that round);
     * the program runs 3 D rounds, new signs each time, so the +-1 terms
     * of one vector slot do not cancel in all of them. */
    for (long long s = 0; TD_OP == 0 && TD_SUM_SPARSE > 1 && !td_data_random &&
                          s < TD_SPA_LEN; ++s) {
        const long long g = inst * TD_SPA_LEN + s;
        for (int d = 0; d < TD_SRC_NDIM; ++d)
            cs[d] = 0;
        long long q = s;
        for (int i = TD_NSPA - 1; i >= 0; --i) {
            cs[td_spa[i]] = q % td_src_ext[td_spa[i]];
            q /= td_src_ext[td_spa[i]];
        }
        for (long long red = 0; red < TD_RED_LEN; ++red) {
            if ((red + g + td_round) % TD_SUM_SPARSE == 0)
                continue;
            long long r = red;
            for (int i = TD_NRED - 1; i >= 0; --i) {
                cs[td_red[i]] = r % td_src_ext[td_red[i]];
                r /= td_src_ext[td_red[i]];
            }
            src[td_flat(TD_SRC_NDIM, td_src_shape, td_src_start, cs)] = 0.0;
        }
    }
    /* Max / min: the src elements outside the region hold the value that
     * wins (TD_OUTSIDE), so a body that reads one in place of a term of
     * the region fails whatever the round. */
    for (long long f = 0; TD_OP != 0 && TD_SRC_OUTSIDE && f < TD_SRC_ELEMS; ++f)
        if (!td_in_src_region(f))
            src[f] = TD_OUTSIDE;
    /* Integer max / min, the identity round: every term is the op's
     * identity, which only a body whose identity is right returns. */
    const bool ident = td_round == TD_IDENT_ROUND;
    for (long long s = 0; TD_OP != 0 && s < TD_SPA_LEN; ++s) {
        const long long g = inst * TD_SPA_LEN + s;
        const long long pos = td_position(g, shift);
        for (int d = 0; d < TD_SRC_NDIM; ++d)
            cs[d] = 0;
        long long q = s;
        for (int i = TD_NSPA - 1; i >= 0; --i) {
            cs[td_spa[i]] = q % td_src_ext[td_spa[i]];
            q /= td_src_ext[td_spa[i]];
        }
        for (long long red = 0; red < TD_RED_LEN; ++red) {
            long long r = red;
            for (int i = TD_NRED - 1; i >= 0; --i) {
                cs[td_red[i]] = r % td_src_ext[td_red[i]];
                r /= td_src_ext[td_red[i]];
            }
            const double v = red == pos ? td_extreme(g, shift) : td_other();
            src[td_flat(TD_SRC_NDIM, td_src_shape, td_src_start, cs)] =
                ident ? TD_IDENT
                : !TD_SPECIALS ? v
                : red == pos ? td_special_extreme(g, shift, v)
                             : td_special_other(v);
        }
    }
    long long nd = 1;
    for (int d = 0; d < TD_DST_NDIM; ++d)
        nd *= td_dst_ext[d];
    for (long long k = 0; k < nd; ++k) {
        long long r = k;
        for (int d = TD_DST_NDIM - 1; d >= 0; --d) {
            cd[d] = r % td_dst_ext[d];
            r /= td_dst_ext[d];
        }
        /* The row of this dst element, as td_reference finds it. */
        long long s = k;
        if (TD_BCAST) {
            s = 0;
            for (int i = 0; i < TD_NSPA; ++i)
                s = s * td_src_ext[td_spa[i]] + cd[td_spa[i]];
        }
        const long long de = td_flat(TD_DST_NDIM, td_dst_shape, td_dst_start, cd);
        /* In place: a dst element that is also a source keeps its data. */
        if (dst == src && td_in_src_region(de))
            continue;
        if (!TD_ACCUM) {
            dst[de] = TD_POISON;
        } else if (TD_OP != 0) {
            const long long g = inst * TD_SPA_LEN + s;
            dst[de] = ident ? TD_IDENT
                      : td_position(g, shift) == TD_RED_LEN ? td_extreme(g, shift)
                                                            : td_other();
        }
    }
}
