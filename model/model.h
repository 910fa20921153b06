/*
 * The model layer's internal header (not installed): the call model's
 * public types (tiledispatch/td_call.h) plus what every layer above shares:
 * region accessors and saturating sizes (region.c), the reserved names and
 * the identifier check (names.c), and helpers for the fixed-size name
 * fields.  The TileLayout model is in layout.h; the call loader's pieces
 * share call_reader.h, private to this folder.
 */
#ifndef TILEDISPATCH_MODEL_H
#define TILEDISPATCH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "td_internal.h"
#include "tiledispatch/td_call.h"

/*
 * The confined dtypes (td_dtype_is_confined) and the operands that may
 * have them, a table in call_gemm.c (the only family that has such
 * operands).  td__confined_dtypes_ok is true when every buffer of a
 * confined dtype is an operand the call's op allows for it (and nothing
 * else of the call: no other operand, no config element), in the scope the
 * op allows, and a 4-bit buffer's innermost extent and its regions'
 * innermost starts and extents are even (two elements to a byte).  On
 * false: *buffer is the buffer at fault, *where the operand at fault
 * ({0, 0} when it is the buffer's dtype itself) and why[cap] the message.
 * The loader refuses a call that fails it; dispatch and explain check
 * hand-built calls with it before the op's own check.
 * td__confined_dtype_use says which operands take dtype t ("gemm_async's
 * A and B (block-scaled MMA, in shared memory)"); "" for other dtypes.
 */
bool td__confined_dtypes_ok(const td_call *call, int *buffer, td_pos *where,
                            char *why, size_t cap);
const char *td__confined_dtype_use(td_dtype t);

/*
 * The buffer a region of `call` refers to, or NULL when the region is
 * malformed (buffer index out of range, or a rank that disagrees with the
 * buffer's).  Loaded calls never are; hand-built ones may be, and
 * predicates must not crash on them.
 */
const td_buffer *td__region_buffer(const td_call *call, const td_region *r);

/*
 * The reason a check gives when the dst or the src region of `call` names
 * no buffer (td__region_buffer is NULL): "malformed call: dst region does
 * not name a buffer"; for the source, "the call has no source region" (no
 * source given, as for `zero`), "the call's first source is a literal, not
 * a region" (or "a named scalar"), or "malformed call: src region does not
 * name a buffer" (a hand-built call).  Never NULL.
 */
const char *td__regions_missing(const td_call *call);

/* Product of the region's extents, saturating at INT64_MAX (and 0 if any
 * extent is not positive), so that hostile shapes cannot overflow. */
int64_t td__region_elems(const td_region *r);

/* Whether the region's start depends on the block ids (a block_coef is
 * not zero). */
bool td__region_symbolic(const td_region *r);

/* Whether the region's start depends on the call's declared scalars (a
 * scalar_coef is not zero). */
bool td__region_dynamic(const td_region *r);

/* The largest power of two that divides the element offset the block ids
 * and the scalars add to the region's start in its row-major buffer, for every block: the
 * gcd of each coefficient times its dimension's stride, at most 2^30.  0
 * when the start is constant (nothing is added).  The alignment checks of
 * the copy variants take it beside the constant start. */
int64_t td__region_block_align(const td_call *call, const td_region *r);

/* Dimension d's start as text, plus `add` ("blockIdx.x * 64 + 3" for
 * add 3; "k * 128 + 3" with call's scalar k; "67" for a constant start 64
 * and add 3); the length of the
 * whole text, like snprintf. */
size_t td__region_bound_text(const td_call *call, const td_region *r,
                             int d, int64_t add, char *buf, size_t cap);

/* The index of the scalar named s[0:len] that the call declares under
 * `scalars:`, -1 if none. */
int td__call_scalar(const td_call *call, const char *s, size_t len);

/* Node i of config expression e as text, fully parenthesised
 * ("((k % 4) < 2)"), scalars by name, ids by their axis names; the length
 * of the whole text, like snprintf.  Tests and messages use it. */
size_t td__cexpr_format(const td_call *call, const td_cexpr *e, int i,
                        char *buf, size_t cap);

/* The value of node i of config expression e (C's arithmetic) with the
 * declared scalars at scalar_vals[j]; false when it uses a thread, block
 * or cluster id, divides by zero or leaves +-2^40.  The program generator
 * evaluates a guard at the values its program passes. */
bool td__cexpr_eval(const td_call *call, const td_cexpr *e, int i,
                    const int64_t *scalar_vals, int64_t *out);
/* The same with the thread, block and cluster ids at ids[axis] (a td_axis
 * index, TD_AXIS_COUNT entries; NULL: an id is not evaluated).  The
 * program generator evaluates a cluster copy's peer rank per CTA. */
bool td__cexpr_eval_ids(const td_call *call, const td_cexpr *e, int i,
                        const int64_t *scalar_vals, const int64_t *ids,
                        int64_t *out);

/* The hints that follow "unknown dtype 'X'", "unknown exec scope 'X'",
 * "unknown layout axis 'X'" and "unknown launch tag 'X'": written into
 * buf[cap] and returned, " (did you mean 'Y'?)" or the list of the valid
 * names (td__yhint).  The dtype, layout axis and launch tag hints also
 * know the spellings of other tools and words (fp32, half, bf16, i32,
 * lane, blockDim.x, ...): a hint only, never an accepted spelling. */
const char *td__dtype_hint(char *buf, size_t cap, const char *s);
const char *td__exec_scope_hint(char *buf, size_t cap, const char *s);
const char *td__axis_hint(char *buf, size_t cap, const char *s);
const char *td__launch_tag_hint(char *buf, size_t cap, const char *s);

/* The reserved names (names.c): sorted; true when s is one of them. */
extern const char *const td__reserved_names[];
extern const size_t td__nreserved_names;
bool td__is_reserved_name(const char *s);

/* Whether s is a non-empty run of letters, digits and '_' that starts with
 * a letter or '_' (or, with digit_start, with a digit too): the names a
 * call file gives buffers, scalars, config keys and launch symbols. */
bool td__is_ident(const char *s, bool digit_start);

/* Whether op's calls take gemm's form (call_gemm.c): operands dst, a, b,
 * c and the literals transpose_A, transpose_B, alpha, beta; the loader
 * and td_call_format_script ask. */
bool td__gemm_form(const char *op);
/* Whether op's calls take gemm_async's form (call_gemm.c): operands dst
 * (C), a, b; transA, transB; accum. */
bool td__gemm_async_form(const char *op);

/* A gemm call's alpha or beta as TVMScript prints it (T.float32(2.0),
 * an int32 bare): the text upstream's gemm variant quotes in its
 * declines.  Returns the length needed, like snprintf. */
size_t td__gemm_literal_text(const td_call *call, const td_operand *l,
                             char *buf, size_t cap);

/* Saturating product a * b of non-negative values. */
int64_t td__mul_sat(int64_t a, int64_t b);

/* Whether a fixed-size name field of a call (scope, target) equals s,
 * reading at most TD_NAME_MAX bytes of the field. */
bool td__name_is(const char *field, const char *s);

/* printf arguments for "%.*s" that print at most one name field. */
#define TD__FIELD(f) (int)strnlen((f), TD_NAME_MAX), (f)

#endif
