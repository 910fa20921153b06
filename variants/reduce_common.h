/*
 * Reduction helpers shared by the variant modules (upstream's
 * reduction/utils.py): the axes and size analysis that predicates and
 * emitters agree on, and the thread-wise emitter that both `local` and
 * `shared` use at thread scope.
 */
#ifndef TILEDISPATCH_REDUCE_COMMON_H
#define TILEDISPATCH_REDUCE_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "args.h"
#include "layout.h"
#include "tiledispatch/td_ir.h"

/* The split of a reduction into spatial and reduced source dimensions. */
typedef struct td__red_shape {
    int nreduce;
    int reduce[TD_MAX_RANK];   /* reduced src dims, ascending */
    int nspatial;
    int spatial[TD_MAX_RANK];  /* kept src dims, ascending */
    int64_t spatial_len;       /* product of src region extents over spatial
                                  (saturating) */
    int64_t reduction_len;     /* the same over reduce */
    int64_t dst_len;           /* product of the dst region's extents */
} td__red_shape;

/*
 * Normalises the call's axes (td_call_axes) and checks that the dst region
 * holds exactly one element per spatial position.  On failure returns
 * false with upstream's reason in *why:
 *   "reduce axis A out of range for ndim=N"
 *   "dst size D != expected spatial size S"
 * The call's regions must name buffers (td__region_buffer).
 */
bool td__reduce_shape(const td_call *call, td__red_shape *out,
                      td_reason *why);

/*
 * Emits upstream's thread-wise reduction (reduction/local.py path A):
 *
 *   for spa in serial(S):
 *       dst[unflatten(spa, dst extents) + dst start] = identity  (unless accum)
 *       for red in serial(R):
 *           dst[d] = comb(dst[d], src[unflatten(spa, red) + src start])
 *
 * `sh` is the call's shape as td__reduce_check (or td__reduce_shape
 * followed by td__reduce_limits) worked it out: the caller has made every
 * check, so this only builds IR.  Returns 0 or the IR's error
 * (TD_ENOMEM).
 */
int td__emit_thread_wise(const td_call *call, td_combiner comb,
                         const td__red_shape *sh, td_ir *ir);

/*
 * True when buffer b's storage is its elements in row-major order, which is
 * how the thread-wise, packed and shared emitters index it: no layout, or
 * one that canonicalizes to a single stride-1 memory iter with no replica
 * and no offset.  Otherwise false with a reason naming the buffer (the
 * emitters would read the wrong registers or words).  Allocates nothing.
 */
bool td__row_major_storage(const td_buffer *b, td_reason *why);

/* The dst and src buffers of a shared-memory reduction: false with the
 * reason when a region names no buffer or either is not in shared*
 * memory ("expected shared scope for both src and dst"). */
bool td__shared_operands(const td_call *call, const td_buffer **dst,
                         const td_buffer **src, td_reason *why);

/*
 * True when dst and src are regions of one buffer that share an element:
 * an emitter that writes dst while it still reads src would read values
 * it already overwrote.  Fills why when they overlap.
 */
bool td__regions_overlap(const td_call *call, td_reason *why);

/*
 * The checks td__emit_thread_wise makes before it emits, for emitters that
 * build their own loops: both regions name buffers inside their bounds,
 * equal dtypes, a known combiner, valid axes and dst size (*sh filled),
 * 32-bit indices.  Returns 0 or TD_EDECLINED with a reason.
 */
int td__reduce_check(const td_call *call, td_combiner comb,
                     td__red_shape *sh, td_reason *why);

/*
 * What every reduction emitter checks first: that the registry handed it
 * its plan (TD_EINVAL otherwise: a misuse of the module, "MODULE emitter
 * called without its plan") and that the op is a reduction with a known
 * combiner (TD_EDECLINED, "op NAME is not a reduction").  0 when both hold.
 */
int td__reduce_emit_start(const char *module, const void *plan,
                          const td_op_desc *op, td_reason *why);

/* The part of td__reduce_check that follows a successful
 * td__reduce_shape (already in a plan): a known combiner, both regions
 * inside their buffers, 32-bit indices.  0 or TD_EDECLINED. */
int td__reduce_limits(const td_call *call, td_combiner comb,
                      const td__red_shape *sh, td_reason *why);

/* Source indices of (spa, red) (upstream build_src_indices: spa unflattened
 * over the spatial extents, red over the reduced ones, plus the region
 * start) into idx[0..src ndim-1]; fresh nodes on every call. */
void td__reduce_src_index(td_ir *ir, const td_region *r,
                          const td__red_shape *sh, const td_var *spa,
                          const td_var *red, td_expr **idx);

/* Destination indices of spatial position spa (unflattened over the dst
 * region's extents, plus its start) into idx[0..dst ndim-1]. */
void td__reduce_dst_index(td_ir *ir, const td_region *r, const td_var *spa,
                          td_expr **idx);

#endif
