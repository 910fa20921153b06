/*
 * The reduction ops, one row each: the one place that says what a
 * reduction op is.  X(name, combiner, ref, grows):
 *
 *   combiner  the arithmetic and the identity the variants emit
 *             (td_op_desc.combiner);
 *   ref       the reference formula the self-checking programs use: the
 *             value of TD_OP that selects it in the programs' td_reference
 *             (tools/kernel/fragments/reduce_reference.cuh);
 *   grows     partial results grow with the number of terms, so the
 *             programs keep integer inputs small enough not to overflow.
 *
 * variants/reduce_ops.c expands the rows into the op descriptors the
 * registry registers (registry/builtin.c); the program generator
 * (tools/kernel/kernel_reduce.c) reads the same rows (td__reduce_info).
 * Internal to variants/ and the layers above.
 */
#ifndef TILEDISPATCH_REDUCE_OPS_H
#define TILEDISPATCH_REDUCE_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "tiledispatch/td_module.h"

#define TD_REDUCE_OPS(X)                                                     \
    X(sum, TD_COMBINE_SUM, 0, true)                                          \
    X(max, TD_COMBINE_MAX, 1, false)                                         \
    X(min, TD_COMBINE_MIN, 2, false)

/* One row (td_op_desc.data of the built-in reduction ops points here). */
typedef struct red_info {
    const char *name;
    td_combiner combiner;
    int ref;
    bool grows;
} red_info;

/* The ops, in the table's order; the registry registers them. */
extern const td_op_desc td__reduce_ops[];
extern const size_t td__reduce_ops_count;

/* The row of the reduction with combiner c (a plugin's reduction op too:
 * the combiner says what it computes), or NULL. */
const red_info *td__reduce_info(td_combiner c);

#endif
