/*
 * TileLayout model (internal): what a layout is and what it maps.  Its
 * check, canonical form, size, span and per-thread storage; grouping by a
 * logical shape and the per-thread box of a region; and the element ->
 * (thread, register) maps the kernel harness and the variants need.  A
 * variant's own questions of layouts live with the variant (the `local`
 * reduction's in variants/local_layout.h).
 *
 * Every function here is pure: it reads td_layout values, writes only its
 * output arguments, allocates nothing and never prints.  Inputs are treated
 * as hostile: every function validates the layouts it is given (counts,
 * axes, extents, stride and offset magnitudes) and all arithmetic is
 * overflow-checked.  Functions return 0 or a negative TD_E* code:
 *   TD_EINVAL   an argument is malformed (bad counts, extents, shapes...);
 *   TD_ELIMIT   a value or a result does not fit (int64 overflow, more than
 *               TD_MAX_LAYOUT_ITERS iters, more than TD_LAY_MAX_OWNERS
 *               owners);
 *   TD_ENOMATCH the arguments are well-formed but do not fit the question
 *               (a region that is not a per-thread rectangle).
 * Where a `why` buffer is taken (it may be NULL), a human-readable reason is
 * written into it on failure.
 */
#ifndef TILEDISPATCH_LAYOUT_H
#define TILEDISPATCH_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Helpers the layout analyses share (here and in variants/local_layout.c).
 * td__lay_why writes a reason into why (NULL or whylen 0: nothing);
 * td__lay_mul64/add64 are overflow-checked (false when the result does not
 * fit). */
void td__lay_why(char *why, size_t whylen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline bool td__lay_mul64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static inline bool td__lay_add64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

static inline bool td__lay_is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

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

/* td__lay_group with TVM's ICHECK text for an impossible grouping in why
 * ("Check failed: (shape_idx == shape.size()) is false: layout
 * T.TileLayout(T.S[(32, 2):(1 @ Axis.laneid, 1)]) can not be grouped by
 * shape (16, 8)"), which the gemm declines quote. */
int td__lay_group_why(const td_layout *l, const int64_t *shape, int ndim,
                      td_layout *out, int *seps, char *why, size_t whylen);

/* l as TVM's Python prints it: T.TileLayout(T.S[(2, 8):(2, 4 @ Axis.laneid)]
 * + T.R[...] + 3); several offsets print as one parenthesised sum, thread
 * axes first.  Returns the length needed, like snprintf. */
size_t td__lay_format_tvm(const td_layout *l, char *buf, size_t cap);

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

/* The swizzle of l applied to memory offset `off` (>= 0):
 * off ^ (((off >> (m + s)) & (2^b - 1)) << m) for Swizzle(b, m, s) (TVM's
 * ComposeLayout(m, b, s, ...)); `off` itself when l has no swizzle. */
int td__lay_swizzle(const td_layout *l, int64_t off, int64_t *out);

/* Base coordinate D(x) + O of logical element `elem` (row-major flat index,
 * 0 <= elem < size) on every axis; with a swizzle, the m coordinate is
 * swizzled (td__lay_swizzle; a negative one is TD_EINVAL). */
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

/* ---- layout algebra (layout_algebra.c): what the copy planners and the
 * gemm fragments compose */

/*
 * Upstream TileLayout.slice: l (a layout of `shape`) restricted to the box
 * [start, start + extent).  Each dim's grouped iters are a mixed radix;
 * the box must be whole inner iters plus one contiguous run of the next
 * (else TD_ENOMATCH).  The start goes into the offsets; a dim the box
 * reduces to one index stays as a unit iter with the stride and axis of
 * its innermost iter (as TVM prints, e.g. S[(1, 8):(8, 1)] + 8).  Not
 * canonicalized.  `out` may alias `l`.
 */
int td__lay_slice(const td_layout *l, const int64_t *shape, int ndim,
                  const int64_t *start, const int64_t *extent, td_layout *out);

/* Upstream permute_dims: out->shard[i] = l->shard[perm[i]] (perm is a
 * permutation of 0..n-1, n == l->nshard); replica and offsets kept. */
int td__lay_permute_dims(const td_layout *l, const int *perm, int n,
                         td_layout *out);

/* Upstream permute_by_groups: group g covers shard[seps[g] .. seps[g+1]);
 * the groups are reordered as perm (a permutation of 0..ngroups-1).  The
 * new boundaries go to out_seps (ngroups+1 entries; may be NULL). */
int td__lay_permute_by_groups(const td_layout *l, const int *seps,
                              int ngroups, const int *perm, td_layout *out,
                              int *out_seps);

/*
 * Upstream Layout.tile (TileLayoutNode::Tile): `inner` (this layout, of
 * inner_shape) tiled by `outer` (of outer_shape), both canonicalized and
 * grouped by their shapes; the outer iters on an axis the inner shard uses
 * are scaled by the inner span on that axis (td__lay_span); dim by dim the
 * outer iters come before the inner ones; replicas are the inner's then
 * the outer's, offsets add; the result is canonicalized.
 */
int td__lay_tile(const td_layout *inner, const td_layout *outer,
                 const int64_t *outer_shape, const int64_t *inner_shape,
                 int ndim, td_layout *out);

/*
 * Upstream tile_to(to_shape, current_shape): l (a layout of cur_shape)
 * tiled by the row-major layout of to_shape / cur_shape, e.g. the m16n8
 * accumulator fragment tiled to a 32x16 warp tile.  TVM floor-divides a
 * to_shape that cur_shape does not divide and returns a smaller layout;
 * that is TD_EINVAL here.
 */
int td__lay_tile_to(const td_layout *l, const int64_t *to_shape,
                    const int64_t *cur_shape, int ndim, td_layout *out);

/*
 * The canonical thread-left order of the gemm fragments (TVM's
 * _canon_perm): the indices of the thread-axis shard iters by stride
 * descending, then those of the memory iters by stride descending, equal
 * strides keeping their order.  perm gets l->nshard entries.
 */
int td__lay_canon_perm(const td_layout *l, int *perm);

/* l's shard permuted into that order (TVM's _canon); perm may be NULL. */
int td__lay_thread_left(const td_layout *l, td_layout *out, int *perm);

/*
 * Upstream TileLayout.direct_sum (unscaled composition, A + B): `left` (A)
 * grouped by left_shape and `right` (B) grouped by right_shape, both of
 * rank ndim, evaluated over the interleaved domain [L0, R0, L1, R1, ...]:
 * element (a, b) goes to A(a) + B(b), no span scaling (unlike tiling).
 * The shard is A's iters of dim 0, B's of dim 0, A's of dim 1, ...; the
 * replicas are A's then B's; the offsets add.  Canonicalized.  TD_EINVAL:
 * a swizzled addend, or one that cannot be grouped by its shape.
 */
int td__lay_direct_sum(const td_layout *right, const td_layout *left,
                       const int64_t *left_shape,
                       const int64_t *right_shape, int ndim,
                       td_layout *out);

/*
 * Upstream is_direct_sum_right: is `sum` (a layout of the interleaved
 * domain [L0, R0, L1, R1, ...], right_shape the R's) A + right for some
 * left addend A?  Checked by value over the whole domain: for every (a, b),
 * sum(a, b) - sum(a, 0) = right(b) - right(0) on every axis, and sum's
 * replica displacements are closed under right's (so they are right's
 * plus A's).  Returns 1 (yes, and *left_at0, when not NULL, holds A(0) =
 * sum(0, 0) - right(0), the left addend's first coordinate), 0 (no), or
 * TD_EINVAL (a swizzled layout, a domain whose size is not sum's, more
 * than 2^20 elements).  ndim is at most TD_MAX_RANK / 2.
 */
int td__lay_is_direct_sum_right(const td_layout *right, const td_layout *sum,
                                const int64_t *interleaved_shape,
                                const int64_t *right_shape, int ndim,
                                int64_t left_at0[TD_AXIS_COUNT]);

/*
 * Upstream is_tile_inner (TileLayoutNode / ComposeLayoutNode::IsTileInner):
 * whether `atom` (a layout of inner_shape) is the inner tile of `tiled` (a
 * layout of tiled_shape): both canonicalized (td__lay_canonicalize_cuda),
 * tiled grouped by [t0/i0, i0, t1/i1, i1, ...], the atom by inner_shape;
 * in every dimension the atom's iters must be the innermost of the tiled
 * layout's (equal extents; stride and axis too unless the extent is 1).
 * Then *outer is the tiler, not canonicalized: the remaining outer iters
 * and the tiled replicas the atom lacks, strides counted in atoms (divided
 * by the atom's span on their axis, which must divide them), offsets the
 * tiled layout's less the atom's.  Swizzled layouts: the swizzles must be
 * equal and a trivial tile (or a bare swizzle) stands for the identity;
 * one swizzled and one plain is no match.  TD_ENOMATCH: not a tile (TVM's
 * None).  TD_EINVAL: malformed, or what upstream raises for (a tiled
 * shape the inner one does not divide, a layout that cannot be grouped:
 * the ICHECK text in why).  TD_ELIMIT: a tiled layout of a wider scope than
 * the atom (upstream splits its axes first; not ported), or a value past
 * the limits.  ndim is at most TD_MAX_RANK / 2.
 */
int td__lay_is_tile_inner(const td_layout *atom, const td_layout *tiled,
                          const int64_t *tiled_shape,
                          const int64_t *inner_shape, int ndim,
                          td_layout *outer, char *why, size_t whylen);

/* Structural equality (TVM's assert_structural_equal of two layouts):
 * the same shard and replica iters in the same order, the same offsets and
 * the same swizzle.  Canonicalize both first to compare what they map. */
bool td__lay_same(const td_layout *a, const td_layout *b);

/* The shard iters ordered by stride descending, equal strides keeping
 * their order (Python's stable sorted, TVM's _sort_by_stride_desc); the
 * permutation used goes to perm (l->nshard entries; may be NULL). */
int td__lay_sort_by_stride_desc(const td_layout *l, td_layout *out, int *perm);

/*
 * TVM's _carve_tail: carve `chunk` elements off the tail of iters[0..*n)
 * (capacity cap), walking from the last iter: an extent equal to what is
 * left is eaten and ends the walk; a smaller one must divide it and is
 * eaten; a larger one must be divisible by it and is split into
 * (ext/rem, stride*rem) + (rem, stride), which ends the walk (at most one
 * split, *n grows by one).  TD_ENOMATCH when the tail cannot be carved.
 */
int td__lay_carve_tail(td_iter *iters, int *n, int cap, int64_t chunk);

/*
 * The scope fusers of upstream's target-aware canonicalize: at warpgroup
 * scope laneid + wid_in_wg become tid_in_wg (x1, x32); at cta scope, with
 * wgid and tid_in_wg (or laneid + wid_in_wg) present, all become tx.
 * laneid + warpid -> tx is td__lay_canonicalize's own step.
 */
int td__lay_fuse_scope(td_layout *l, td_exec_scope scope);

/*
 * Upstream FuseAxesByScope under a CUDA target, which Canonicalize runs
 * during every dispatch: the layout's own scope pair (the innermost
 * subscope of its thread axes and the end of their subscope -> scope
 * chain) picks each axis's fuser: laneid + wid_in_wg become tid_in_wg (x1,
 * x32), laneid + warpid tx (x1, x32), tid_in_wg + wgid or laneid +
 * wid_in_wg + wgid tx (wgid x128), wid_in_wg + wgid warpid (wgid stays
 * wgid x4, as upstream).  Shard, replica and offsets alike; offsets that
 * fuse into one axis add (upstream keeps one of them).  Conflicting
 * scopes (laneid with tx) or a disconnected chain (laneid with wgid or bx)
 * are TD_EINVAL with upstream's ICHECK text in why (may be NULL); so is a
 * cyclic one (bx with tx), where upstream's walk never ends.  Block axes
 * alone (bx, cbx) have no fuser.
 */
int td__lay_fuse_axes_by_scope(td_layout *l, char *why, size_t whylen);

/* Upstream Canonicalize under a CUDA target: unit iters dropped, then
 * td__lay_fuse_axes_by_scope, then td__lay_canonicalize.  td__lay_canonicalize
 * alone fuses only laneid + warpid. */
int td__lay_canonicalize_cuda(const td_layout *in, td_layout *out, char *why,
                              size_t whylen);

/*
 * A ComposeLayout's swizzle (TVM's per_element p, swizzle_len s, atom_len
 * a, swizzle_inner), applied to the tile's memory offset m in elements:
 * inner:  m ^ (((m >> (p + a)) & (2^s - 1)) << p);
 * outer:  m ^ (((m >> p) & (2^s - 1)) << (p + a)).
 * `on` false is no swizzle.  A vector of n elements starting at m stays
 * contiguous under it iff n <= 2^p and m % n == 0.
 */
typedef struct td_lay_swz {
    bool on;
    int per_element;
    int swizzle_len;
    int atom_len;
    bool inner;
} td_lay_swz;

int td__lay_swz_check(const td_lay_swz *z);
int td__lay_swz_apply(const td_lay_swz *z, int64_t m, int64_t *out);

/* The swizzle of a layout parsed as a bare `Swizzle(b, m, s)` (that is
 * ComposeLayout(m, b, s, identity)); `on` false when l has none. */
void td__lay_swz_from_layout(const td_layout *l, td_lay_swz *z);

/* Upstream is_trivial: canonically one stride-1 memory iter, no replica,
 * no offset (an identity tile). */
bool td__lay_is_trivial(const td_layout *l);

/* The row-major layout of a shape. */
int td__lay_row_major(const int64_t *shape, int ndim, td_layout *out);

/*
 * Upstream strip_swizzle_to_tile: the tile of a ComposeLayout, except that
 * a trivial tile whose size differs from the product of `extents` (a bare
 * swizzle over a bigger buffer or a region) becomes the row-major layout of
 * `extents`.  The bare-swizzle flag of the result is cleared.
 */
int td__lay_strip_swizzle(const td_layout *tile, const int64_t *extents,
                          int ndim, td_layout *out);

/*
 * Upstream apply(*coord, shape=shape) for integer coordinates: coord
 * (0 <= coord[i] < shape[i]) is a row-major index into shape; that flat
 * index is split by l's shard extents (the outermost iter takes the rest
 * unreduced, as TVM does, so an index past the layout's size runs on along
 * the outermost stride) and mapped through the strides, plus the offsets.  The swizzle is not applied
 * (compose with td__lay_swz_apply).
 */
int td__lay_apply_shape(const td_layout *l, const int64_t *coord,
                        const int64_t *shape, int n,
                        int64_t coords[TD_AXIS_COUNT]);

#endif
