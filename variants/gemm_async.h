/*
 * The tcgen05 variant of gemm_async, split by concern: gemm_async.c (the
 * predicates, the checks in TVM's order, tensor memory, emission) and
 * gemm_async_desc.c (the shared-memory descriptors).  Internal to
 * variants/.
 */
#ifndef TD_VARIANTS_GEMM_ASYNC_H
#define TD_VARIANTS_GEMM_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_module.h"

/* One shared operand's descriptor: TVM's compute_canonical_params. */
typedef struct td__ga_desc {
    int swizzle, ldo, sdo;
    bool mn_major;
    td_layout tile; /* the region's pre-swizzle layout (offsets) */
    int64_t extent[TD_MAX_RANK];
    int ndim;
    int elem_per_16b;
} td__ga_desc;

/* TVM's list of nd extents e, "[128, 64]", into buf (cap bytes). */
void td__ga_extents(const int64_t *e, int nd, char *buf, size_t cap);

/* A layout's text parsed; TD_EINVAL when it does not parse. */
int td__ga_parse(const char *text, td_layout *out);

/* The descriptor of source `which` (0 A, 1 B) of a gemm_async call in
 * shared memory, `transposed` its transA / transB: 0, TD_EDECLINED with
 * TVM's text in why, or another negative code. */
int td__ga_canonical_params(const td_call *call, int which, bool transposed,
                            td__ga_desc *g, td_reason *why);

/* The offset from the buffer's start, in 16-byte units, of the operand's
 * element at flat index `linear` of its region (the region's pre-swizzle
 * tile); -1 when it does not apply. */
int64_t td__ga_off16_at(const td__ga_desc *g, int64_t linear);

#endif
