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

#endif
