/*
 * The permute_layout family (upstream permute_layout/): the op table (one
 * op, `permute_layout`, upstream's Tx.permute_layout(dst, src): the same
 * logical tile moved from the source's layout to the destination's) and
 * the warp_xor_swizzle algorithm helpers, which the variant and the unit
 * tests share.  Internal to variants/.
 */
#ifndef TILEDISPATCH_VARIANTS_PERMUTE_H
#define TILEDISPATCH_VARIANTS_PERMUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_module.h"

extern const td_op_desc td__permute_ops[];
extern const size_t td__permute_ops_count;

/* ---- the warp_xor_swizzle algorithm (permute_algo.c) ------------------
 *
 * An iteration space of n dims (extent[0..n), row-major, dim 0 outermost)
 * and a layout's strides over it, in elements.  The warp moves V =
 * prod(extent) elements, P = V / 32 per lane: for register slot r, lane
 * `lane` handles flat index lane + 32 * (r ^ ((lane >> (5 - k)) & (2^k -
 * 1))).  These are upstream's _check_bijection, _bank_free and
 * _choose_xor_k (permute_layout/warp_xor_swizzle.py), the same numbers.
 */

/* Whether the strides map the V indices to V distinct offsets. */
bool td__permute_bijection(const int64_t *extent, const int64_t *stride,
                           int n);

/* Whether, for every r < P, the 32 lanes' accesses of `bytes`-byte
 * elements fall in 32 distinct 4-byte banks (of 32) with XOR bits k. */
bool td__permute_bank_free(const int64_t *extent, const int64_t *stride,
                           int n, int bytes, int64_t p, int k);

/* The smallest k in [0, log2(P)] for which both phases are bank-free, or
 * -1 (upstream's None). */
int td__permute_choose_xor_k(const int64_t *extent, const int64_t *src,
                             const int64_t *dst, int n, int bytes, int64_t p);

#endif
