//! Reductions: what td_reference computes and the tolerances it allows.
/*
 * The expected contents of the dst buffer of one instance: `init` (the
 * staged values), with every dst region element replaced by the
 * reduction of its source elements, in double precision.  tol[e] is the
 * allowed |got - want|: atol * max(1, sum of |terms|) for float sums,
 * 0 for max / min (the result is one of the inputs), integers and
 * untouched elements.  With --data random, float sums are allowed
 * 2 n u sum|terms| + n tiny instead (n terms including the accumulated
 * dst value, u the unit roundoff and tiny the smallest normal of the
 * narrower dtype): twice the worst-case error of any summation order
 * (Higham), plus one flushed subnormal per term.  TD_TOL_SCALE (default
 * 1) scales the float-sum tolerance of both modes (tests build with 0).
 */
