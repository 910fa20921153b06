/*
 * TileLayout model (internal): canonical form, grouping by a shape, the
 * per-dimension thread/local analysis the reduction variants need, and the
 * element -> (thread, register) maps the kernel harness needs.
 *
 * Every function here is pure: it reads td_layout values, writes only its
 * output arguments, allocates nothing and never prints.  Inputs are treated
 * as hostile: every function validates the layouts it is given (counts,
 * axes, extents, stride and offset magnitudes) and all arithmetic is
 * overflow-checked.  Functions return 0 or a negative TD_E* code:
 *   TD_EINVAL   an argument is malformed (bad counts, extents, shapes...);
 *   TD_ELIMIT   a value or a result does not fit (int64 overflow, more than
 *               TD_MAX_LAYOUT_ITERS iters, more masks than the caller's cap);
 *   TD_ENOMATCH the arguments are well-formed but do not fit the question
 *               (region not representable, layouts not a shuffle pattern,
 *               dst layout does not match the reduction).
 * Where a `why` buffer is taken (it may be NULL), a human-readable reason is
 * written into it on failure.
 */
#ifndef TILEDISPATCH_LAYOUT_H
#define TILEDISPATCH_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Largest |stride| or |offset| accepted in an input layout. */
#define TD_LAY_MAX_STRIDE ((int64_t)1 << 40)

/* Pseudo-axis for td__lay_span: every memory (non-thread) axis. */
#define TD_LAY_ALL_MEMORY (-1)

/* The most (thread, slot) owners td__lay_owner_slots enumerates. */
#define TD_LAY_MAX_OWNERS ((int64_t)1 << 20)

/* Returns 0 when l is a well-formed layout, else TD_EINVAL with a reason. */
int td__lay_check(const td_layout *l, char *why, size_t whylen);

/*
 * Canonical form (upstream TileLayoutNode::Canonicalize), in order:
 * 0. drop extent-1 shard iters (when all go, keep `(1, 1, axis of the first)`;
 *    an empty shard stays empty);
 * 1. zero offsets need no work (offsets are a fixed per-axis array);
 * 2. when the shard holds both laneid and warpid iters, rewrite every laneid
 *    iter / offset (shard, replica, offsets) to tx with the same stride and
 *    every warpid one to tx with 32x the stride (CUDA: tx = 32*warpid+laneid);
 * 3. fuse adjacent same-axis shard iters when inner.extent*inner.stride ==
 *    outer.stride;
 * 4. sort replica iters by (axis, stride, extent) ascending.  Upstream sorts
 *    by structural hash, which is just "some fixed order"; ours is documented
 *    and stable across builds.  Unit replica iters are kept.
 * `out` may alias `in`.
 */
int td__lay_canonicalize(const td_layout *in, td_layout *out);

/* Product of the shard extents (1 for an empty shard). */
int td__lay_size(const td_layout *l, int64_t *out);

/*
 * 1 + sum (extent-1)*stride over the shard and replica iters on `axis`, plus
 * the offset on `axis`.  axis == TD_LAY_ALL_MEMORY sums over every memory
 * (non-thread) axis, which is upstream's span() of the per-thread storage.
 */
int td__lay_span(const td_layout *l, int axis, int64_t *out);

/* Drops thread-axis iters (shard and replica) and thread-axis offsets,
 * leaving the per-thread memory layout.  `out` may alias `in`. */
int td__lay_storage(const td_layout *in, td_layout *out);

/*
 * Upstream group(shape): splits shard iters at logical dimension boundaries
 * (shape is row-major, dim 0 outermost) so that dim d owns the iters
 * out->shard[seps[d] .. seps[d+1]).  seps has ndim+1 entries.  Extent-1 dims
 * get a unit iter on the axis (and with the stride) of the iter being split
 * when the boundary is reached.  The layout is NOT canonicalized first (as
 * upstream).  Replica and offsets are copied.  An impossible grouping
 * (product mismatch, an iter not divisible at a boundary) is TD_EINVAL;
 * more than TD_MAX_LAYOUT_ITERS resulting iters is TD_ELIMIT.
 */
int td__lay_group(const td_layout *l, const int64_t *shape, int ndim,
                  td_layout *out, int *seps);

/* One logical dimension split into its thread and local parts. */
typedef struct td_lay_dim {
    int64_t thread_extent;  /* product of thread-axis iter extents */
    int64_t local_extent;   /* product of memory-axis iter extents */
    int nthread;
    td_iter thread[TD_MAX_LAYOUT_ITERS]; /* thread iters, outer first */
    bool has_local;         /* owns at least one memory-axis iter */
} td_lay_dim;

/* Upstream _analyze_layout_dims: group by shape, then classify each dim's
 * iters.  dims has ndim entries. */
int td__lay_analyze_dims(const td_layout *l, const int64_t *shape, int ndim,
                         td_lay_dim *dims);

/* Upstream _build_local_dim_map: map[d] is dim d's position among the dims
 * that own a memory-axis iter, or -1 for a pure-thread dim. */
int td__lay_local_dim_map(const td_layout *l, const int64_t *shape, int ndim,
                          int *map);

/* The per-thread rectangular sub-box of a logical region. */
typedef struct td_lay_local {
    int ndim;                    /* >= 1 */
    int64_t shape[TD_MAX_RANK];  /* full local extent per local dim */
    int64_t start[TD_MAX_RANK];
    int64_t extent[TD_MAX_RANK];
} td_lay_local;

/*
 * Upstream get_local_region: over the dims that own memory-axis iters,
 * the local storage shape and the region's local start / extent.  With no
 * such dim the result is ([1], [0], [1]).  A region that is not a per-thread
 * rectangle is TD_ENOMATCH (upstream returns None); so is a region that
 * covers only part of a pure-thread dim (upstream drops those dims
 * unchecked, which silently widens the region to every thread).  See layout.c for the
 * exact acceptance rule and how it differs from upstream.
 */
int td__lay_local_region(const td_layout *l, const int64_t *shape, int ndim,
                         const int64_t *start, const int64_t *extent,
                         td_lay_local *out, char *why, size_t whylen);

/*
 * Upstream _compute_shuffle_masks: for every thread iter (s, e) of every
 * reduced dim, masks s*2^i for i in 0..log2(e)-1, sorted ascending.  A
 * thread extent that is not a power of two is TD_EINVAL; more than `cap`
 * masks is TD_ELIMIT.  The axis is not checked (callers decide).
 */
int td__lay_shuffle_masks(const td_lay_dim *dims, int ndim, const int *reduce,
                          int nreduce, int64_t *masks, int *nmasks, int cap);

/*
 * Upstream _validate_reduction_layout: dst's non-trivial dims must equal,
 * in order, src's spatial dims (thread, local) and src's reduced dims that
 * have threads (thread, 1).  Mismatch -> TD_ENOMATCH with
 * "mismatch dst/src layout for reduction" (also when dst has MORE dims
 * than expected, where upstream raises IndexError).  reduce lists the
 * reduced src dims (each in [0, src_ndim)).
 */
int td__lay_validate_reduction(const td_layout *src_l, const td_layout *dst_l,
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
int td__lay_analyze_shuffle(const td_layout *src_l, const td_layout *dst_l,
                            int64_t *width, int64_t *local_elems, char *why,
                            size_t whylen);

/* Base coordinate D(x) + O of logical element `elem` (row-major flat index,
 * 0 <= elem < size) on every axis. */
int td__lay_map(const td_layout *l, int64_t elem,
                int64_t coords[TD_AXIS_COUNT]);

/* Number of replica combinations (product of the replica extents). */
int td__lay_replica_count(const td_layout *l, int64_t *out);

/* Displacement r (0 <= r < replica count, innermost replica iter fastest)
 * on every axis; add it to td__lay_map's base coordinate. */
int td__lay_replica(const td_layout *l, int64_t r,
                    int64_t coords[TD_AXIS_COUNT]);

/*
 * Linear thread id of a coordinate: tx + tid_in_wg + laneid
 * + 32*(warpid + wid_in_wg) + 128*wgid (tx = 32*warpid + laneid,
 * tid_in_wg = 32*wid_in_wg + laneid, warpid = 4*wgid + wid_in_wg,
 * tx = 128*wgid + tid_in_wg).  Block axes (bx.., cbx..) must be 0 and the
 * result non-negative, else TD_EINVAL.
 */
int td__lay_thread_id(const int64_t coords[TD_AXIS_COUNT], int64_t *tid);

/* Called once per owner; a non-zero return stops the walk and is returned. */
typedef int (*td_lay_owner_fn)(void *u, int64_t tid, int64_t slot);

/*
 * Enumerates every (linear thread id, register slot) that holds logical
 * element `elem`, one per replica combination (slot = the m coordinate,
 * must be >= 0).  More than TD_LAY_MAX_OWNERS owners is TD_ELIMIT.
 */
int td__lay_owner_slots(const td_layout *l, int64_t elem, td_lay_owner_fn emit,
                        void *u);

/* 1 + the largest linear thread id and 1 + the largest m coordinate any
 * element or replica reaches (the smallest must be >= 0). */
int td__lay_bounds(const td_layout *l, int64_t *nthreads, int64_t *nslots);

#endif
