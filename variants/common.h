/*
 * What the variant families share: the scope's threads and its barrier
 * for the variants that run at warp, warpgroup and cta scope (`shared`,
 * `shared_rows`, the elementwise family), and the unflattening of a flat
 * index into indices (the thread-wise reduction, the elementwise family),
 * a region start that depends on the block ids or scalars as an expression
 * (the copy family), and a config expression as an IR expression.
 * Internal to variants/; public headers only, so that a variant built as a
 * plugin (tests/registry/ewise_plugin.c) can take common.c with it.
 */
#ifndef TILEDISPATCH_VARIANTS_COMMON_H
#define TILEDISPATCH_VARIANTS_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "tiledispatch/td_module.h"

/* Whether the call's arch has tensor memory and tcgen05 (sm_100a,
 * sm_101a, sm_103a, sm_110a, or their f forms). */
bool td__tmem_arch(const td_call *call);

/* The threads of one scope instance: 1 (thread), 32 (warp), 128
 * (warpgroup), else the threadIdx.x extent (cta).  The launch must be
 * checked. */
int64_t td__scope_threads(const td_call *call);

/* The warpgroups of the block at warpgroup scope with a constant
 * threadIdx.x extent of 128 or more (each gets its own named barrier,
 * ids barrier_id .. barrier_id + n - 1); 1 otherwise. */
int64_t td__warpgroups_per_block(const td_call *call);

/* A warp- or warpgroup-scope call's threadIdx.x extent (constant, checked
 * for range) is a multiple of 32 or 128: a partial warp would shuffle
 * with lanes that do not exist, a partial warpgroup would never fill its
 * named barrier.  Otherwise false with
 * "threadIdx.x extent E is not a multiple of U (S-scope WHAT needs whole Ss)". */
bool td__whole_scope_units(const td_call *call, const char *what,
                           td_reason *why);

/* The barrier that ends a scope's writes to shared memory:
 * __syncthreads (cta), the warpgroup's named barrier of 128 threads (id
 * config barrier_id, default_id when absent, plus threadIdx.x / 128 when
 * the block has several warpgroups), __syncwarp (warp); none at thread
 * scope. */
void td__scope_barrier(const td_call *call, td_ir *ir, int64_t default_id);

/* A fresh flat index expression on each call (no IR node is shared). */
typedef td_expr *(*td__flat_fn)(td_ir *ir, const void *ctx);

/*
 * Unflattens the flat index q() row-major over ext[0..n) into out[], plus
 * start (start may be NULL): for (e0, e1, e2), i0 = q / (e1*e2),
 * i1 = q / e2 % e1, i2 = q % e2.  Extent-1 dims read 0, a divisor of 1 is
 * left out, and the outermost non-unit dim needs no modulo because q is
 * below the product of the extents (at most INT32_MAX: the callers have
 * checked their regions for 32-bit indices).
 */
void td__unflatten(td_ir *ir, td__flat_fn q, const void *qctx, int n,
                   const int64_t *ext, const int64_t *start, td_expr **out);

/* One dimension's index of a flat element: (flat / inner) % ext, the %
 * left out for the outermost non-unit dimension. */
typedef td_expr *(*td__dim_fn)(td_ir *ir, const void *ctx, int64_t inner,
                               int64_t ext, bool outermost);

/* td__unflatten with each dimension's index from dim(), for an emitter
 * that writes the quotient its own way (ewise_smem.c splits it over the
 * loop and the thread). */
void td__unflatten_by(td_ir *ir, td__dim_fn dim, const void *ctx, int n,
                      const int64_t *ext, const int64_t *start,
                      td_expr **out);

/* Dimension d's start of region r plus `add` as an expression: the
 * constant, plus each block id times its coefficient when the start
 * depends on the block ids ("blockIdx.x * 64 + 3"). */
td_expr *td__region_start_expr(td_ir *ir, const td_region *r, int d,
                               int64_t add);

/* The part of dimension d's start of region r that the block ids and
 * the call's scalars add, each coefficient c made c * num / den (the
 * caller proved the division exact): "blockIdx.x * 2 + k * 128".  NULL
 * when the start is constant. */
td_expr *td__region_start_scaled(td_ir *ir, const td_call *call,
                                 const td_region *r, int d, int64_t num,
                                 int64_t den);

/* The element offset the block ids and the call's scalars add to region
 * r's start in its row-major buffer, one term per block id or scalar
 * ("blockIdx.x * 8192", "k * 8192": a scalar is a kernel parameter of its
 * name), for an emitter that adds it to a flat 32-bit index as TVM does;
 * NULL when the start is constant. */
td_expr *td__region_block_offset(td_ir *ir, const td_call *call,
                                 const td_region *r);

/*
 * Node `i` of config entry e's expression (TD_VALUE_EXPR; i = -1: its
 * root) as an int32 IR expression: scalars are kernel parameters of their
 * names, tx threadIdx.x, laneid and warpid its remainder and quotient by
 * 32, bx..bz the block ids.  NULL with a reason in why for what the IR
 * cannot spell yet (the cluster ids) or an entry that is no expression.
 */
td_expr *td__config_expr(td_ir *ir, const td_call *call,
                         const td_config_entry *e, int i, td_reason *why);

/*
 * The row-major element index of config entry e's buffer element
 * (TD_VALUE_ELEM: "mbar[k % 4]" is k % 4; "bar[i, j]" of a [2, 4] buffer
 * is i * 4 + j) as an int32 IR expression, and in *buffer the index of
 * the buffer in call->buffers: what an address-of node takes (an
 * mbarrier operand is that element's shared address).  NULL with a
 * reason in why for an entry that is no element or an index the IR
 * cannot spell.
 */
td_expr *td__config_elem_index(td_ir *ir, const td_call *call,
                               const td_config_entry *e, int *buffer,
                               td_reason *why);

#endif
