//! Reductions: what td_reference computes and the tolerances it allows.
/*
 * The expected contents of the dst buffer of one instance: `init` (the
 * staged values), with every dst region element replaced by the
 * reduction of its source elements, in double precision.  tol[e] is the
 * allowed |got - want|: 0 for max / min (the result is one of the
 * inputs), integers, untouched elements and float sums of exact data
 * (TD_SUM_EXACT: every partial sum is representable); otherwise, and
 * with --data random, the worst case of any summation order:
 * ((1 + u)^s - 1) sum|terms| with s = n - 1 additions (plus n
 * conversions where src and dst dtypes differ), n the terms including
 * the accumulated dst value and u the unit roundoff of the narrower
 * dtype, plus the final rounding to the dst dtype, plus n tiny (one
 * flushed subnormal per term) with random data.  TD_TOL_SCALE (default
 * 1) scales the float-sum tolerance of both modes (tests build with 0).
 */
