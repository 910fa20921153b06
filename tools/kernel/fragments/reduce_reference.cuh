//! Reductions: td_reference; the row of reduce_ops.h picks the arithmetic
//! through TD_OP.
static inline void td_reference(const double *src, const double *init,
                         double *want, double *tol)
{
    for (long long e = 0; e < TD_DST_ELEMS; ++e) {
        want[e] = init[e];
        tol[e] = 0.0;
    }
    long long cd[TD_DST_NDIM], cs[TD_SRC_NDIM];
    long long nd_elems = 1;
    for (int d = 0; d < TD_DST_NDIM; ++d)
        nd_elems *= td_dst_ext[d];
    for (long long k = 0; k < nd_elems; ++k) {
        long long r = k;
        for (int d = TD_DST_NDIM - 1; d >= 0; --d) {
            cd[d] = r % td_dst_ext[d];
            r /= td_dst_ext[d];
        }
        for (int d = 0; d < TD_SRC_NDIM; ++d)
            cs[d] = 0;
        if (TD_BCAST) {
            for (int i = 0; i < TD_NSPA; ++i)
                cs[td_spa[i]] = cd[td_spa[i]];
        } else {
            long long s = k;
            for (int i = TD_NSPA - 1; i >= 0; --i) {
                cs[td_spa[i]] = s % td_src_ext[td_spa[i]];
                s /= td_src_ext[td_spa[i]];
            }
        }
        const long long de = td_flat(TD_DST_NDIM, td_dst_shape, td_dst_start, cd);
        double acc = 0.0, mag = 0.0;
        bool have = false;
        if (TD_ACCUM) {
            acc = init[de];
            mag = fabs(acc);
            have = true;
        } else if (TD_SPECIALS && TD_OP != 0) {
            acc = TD_OP == 1 ? -TD_FINITE_MAX : TD_FINITE_MAX;
            have = true;
        }
        for (long long red = 0; red < TD_RED_LEN; ++red) {
            long long q = red;
            for (int i = TD_NRED - 1; i >= 0; --i) {
                cs[td_red[i]] = q % td_src_ext[td_red[i]];
                q /= td_src_ext[td_red[i]];
            }
            const double v = src[td_flat(TD_SRC_NDIM, td_src_shape,
                                         td_src_start, cs)];
            mag += fabs(v);
            if (!have)
                acc = TD_OP == 0 ? 0.0 + v : v;
            else if (TD_OP == 0)
                acc += v;
            else if (v != v)
                ; /* max / min skip NaN (fmaxf, __hmax) */
            else if (TD_OP == 1)
                acc = acc != acc || v > acc ? v : acc;
            else
                acc = acc != acc || v < acc ? v : acc;
            have = true;
        }
        want[de] = acc;
        /* The terms of the row and the rounding steps any order takes:
         * n - 1 additions, plus a conversion per term where src and dst
         * dtypes differ. */
        const double n = (double)(TD_RED_LEN + TD_ACCUM);
        const double steps = n - 1.0 + (TD_CONVERT ? n : 0.0);
        if (TD_OP != 0 || !TD_IS_FLOAT || !std::isfinite(mag))
            tol[de] = 0.0; /* exact: max / min, integers, a special value */
        else if (!td_data_random && TD_SUM_EXACT)
            tol[de] = 0.0; /* exact data: every partial sum is exact */
        else {
            /* (1 + u)^steps - 1 (Higham's gamma without its first-order
             * denominator, valid for any n) times sum|terms|, then the
             * final rounding to the dst dtype, and with random data a
             * flushed subnormal per term. */
            const double g = expm1(steps * log1p(TD_UNIT_ROUNDOFF)) * mag;
            tol[de] = TD_TOL_SCALE *
                      (g + TD_DST_UNIT_ROUNDOFF * (fabs(acc) + g) +
                       (td_data_random ? n * TD_TINY : 0.0));
        }
    }
}

