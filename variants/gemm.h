/*
 * The gemm family (upstream gemm/): the op table (one op, `gemm`, upstream's
 * Tx.gemm(D, A, B, C, transpose_A, transpose_B, alpha, beta)) and what its
 * variants share about the operands.  Internal to variants/.
 */
#ifndef TILEDISPATCH_VARIANTS_GEMM_H
#define TILEDISPATCH_VARIANTS_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_module.h"

extern const td_op_desc td__gemm_ops[];
extern const size_t td__gemm_ops_count;

/* The sources of a gemm call, in upstream's order (the op check has made
 * sure all three are regions). */
enum { TD_GEMM_A, TD_GEMM_B, TD_GEMM_C };
/* gemm_async's: A, B and, with block scaling, SFA and SFB (upstream's
 * Tx.gemm_async(C, A, B, SFA, SFB, ...); C is the dst). */
enum { TD_GEMM_ASYNC_SFA = 2, TD_GEMM_ASYNC_SFB = 3 };

/*
 * A gemm call's logical sizes: M, N, K from the squeezed extents of A
 * ([M, K], or [K, M] when transpose_A) and B ([K, N], or [N, K] when
 * transpose_B).  False when A or B does not have exactly two non-unit
 * extents (each variant words that refusal itself, as upstream's do).
 */
bool td__gemm_sizes(const td_call *call, int64_t *m, int64_t *n, int64_t *k);

#endif
