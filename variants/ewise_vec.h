/*
 * Paired arithmetic for the elementwise variants: which calls may compute
 * two float16 / bfloat16 lanes with one instruction, and the op on one
 * pair.  Internal to variants/; both `smem` and `reg` use it.
 */
#ifndef TILEDISPATCH_EWISE_VEC_H
#define TILEDISPATCH_EWISE_VEC_H

#include <stdbool.h>

#include "ewise.h"

/* Whether the op computes in pairs on dst dtype dt: float16 / bfloat16
 * add, sub, mul, fma, maximum, and exp / exp2 without scale or bias, with
 * every source of dtype dt (the compute dtype), rounding each lane as the
 * scalar op does; or a cast from
 * float32 regions to float16 / bfloat16 (paired conversion, round to
 * nearest even as the scalar cast).  Scalar sources are splat. */
bool td__ewise_pairable(const ew_info *info, const ew_operands *o,
                        td_dtype dt);

/* Source i as a pair (a vector's pair, or a splat), in its own dtype. */
typedef td_expr *(*ew_pair_fn)(void *ctx, int i);

/* The op on one pair of lanes, a pair of dtype dt; src gives each source's
 * pair.  Scalar sources are cast to the compute dtype and splat here. */
td_expr *td__ewise_pair(td_ir *ir, const ew_info *info, const ew_operands *o,
                        td_dtype dt, ew_pair_fn src, void *ctx);

#endif
