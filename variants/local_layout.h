/*
 * The `local` variant's layout analysis (internal to variants/): the
 * per-dimension thread/local split of a register layout, the shuffle masks
 * and the dst-layout check of path C, and the whole-warp shuffle match of
 * path B (variants/local.c).  The conventions of model/layout.h hold: pure
 * functions, hostile inputs validated, 0 or a negative TD_E* code, and a
 * reason in `why` (may be NULL) on failure.  Here TD_ELIMIT also means more
 * masks than the caller's cap, and TD_ENOMATCH layouts that are not a
 * shuffle pattern or a dst layout that does not match the reduction.
 */
#ifndef TILEDISPATCH_LOCAL_LAYOUT_H
#define TILEDISPATCH_LOCAL_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* One logical dimension split into its thread and local parts. */
typedef struct td_local_dim {
    int64_t thread_extent;  /* product of thread-axis iter extents */
    int64_t local_extent;   /* product of memory-axis iter extents */
    int nthread;
    td_iter thread[TD_MAX_LAYOUT_ITERS]; /* thread iters, outer first */
    bool has_local;         /* owns at least one memory-axis iter */
} td_local_dim;

/* Upstream _analyze_layout_dims: group by shape, then classify each dim's
 * iters.  dims has ndim entries. */
int td__local_analyze_dims(const td_layout *l, const int64_t *shape,
                           int ndim, td_local_dim *dims);

/* Upstream _build_local_dim_map: map[d] is dim d's position among the dims
 * that own a memory-axis iter, or -1 for a pure-thread dim. */
int td__local_dim_map(const td_layout *l, const int64_t *shape, int ndim,
                      int *map);

/*
 * Upstream _compute_shuffle_masks: for every thread iter (s, e) of every
 * reduced dim, masks s*2^i for i in 0..log2(e)-1, sorted ascending.  A
 * thread extent that is not a power of two is TD_EINVAL; more than `cap`
 * masks is TD_ELIMIT.  The axis is not checked (callers decide).
 */
int td__local_shuffle_masks(const td_local_dim *dims, int ndim,
                            const int *reduce, int nreduce, int64_t *masks,
                            int *nmasks, int cap);

/*
 * Upstream _validate_reduction_layout: dst's non-trivial dims must equal,
 * in order, src's spatial dims (thread, local) and src's reduced dims that
 * have threads (thread, 1).  Mismatch -> TD_ENOMATCH with
 * "mismatch dst/src layout for reduction" (also when dst has MORE dims
 * than expected, where upstream raises IndexError).  reduce lists the
 * reduced src dims (each in [0, src_ndim)).
 */
int td__local_validate_reduction(const td_layout *src_l,
                                 const td_layout *dst_l,
                                 const int64_t *src_shape, int src_ndim,
                                 const int64_t *dst_shape, int dst_ndim,
                                 const int *reduce, int nreduce, char *why,
                                 size_t whylen);

/*
 * Upstream _analyze_shuffle_reduce plus this project's stricter checks.
 * On both canonical layouts:
 * - neither is a bare swizzle;
 * - src shard has laneid iters whose span is 32 and, sorted by stride, have
 *   strides 1, e1, e1*e2, ... (a dense 0..31 lane map); no other thread axis
 *   is in the src shard;
 * - dst replica has laneid iters; sorted by stride they are dense from
 *   stride 1 and their product, the width, is a power of two in [2, 32]
 *   (so `R[8 : 4@laneid]` is rejected: the shuffle reduces adjacent lanes);
 * - dst shard laneid iters continue densely from stride `width` to cover the
 *   warp, dst has no other thread axis in its shard, and dst holds as many
 *   values per lane as src (the product of its memory-axis shard extents
 *   equals local_elems).
 * On a match returns 0 with *width and *local_elems (product of the src
 * shard's non-laneid extents); otherwise TD_ENOMATCH and a reason.
 */
int td__local_analyze_shuffle(const td_layout *src_l, const td_layout *dst_l,
                              int64_t *width, int64_t *local_elems, char *why,
                              size_t whylen);

#endif
