/*
 * The elementwise family (upstream backend/cuda/tile_primitive/elementwise):
 * the op table, the operand normalisation (upstream's per-op parse), the
 * checks both variants share and the scalar compute.  Internal to
 * variants/; the family's files include public headers only (td_module.h)
 * plus, for `reg`, the model's layout algebra.
 *
 *   ewise_ops.c   op descriptors (td__ewise_ops), `.check`, parse, compute
 *   ewise_smem.c  the `smem` variant (all operands shared*)
 *   ewise_reg.c   the `reg` variant (all operands local, layout-induced)
 */
#ifndef TILEDISPATCH_EWISE_H
#define TILEDISPATCH_EWISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "tiledispatch/td_module.h"

/* The warpgroup barrier id when the call's config does not name one. */
#define EW_DEFAULT_BARRIER 8

typedef enum ew_fn {
    EW_ZERO,
    EW_FILL,
    EW_RECIPROCAL,
    EW_SQRT,
    EW_EXP,
    EW_EXP2,
    EW_LOG2,
    EW_SILU,
    EW_ADD,
    EW_SUB,
    EW_MUL,
    EW_FDIV,
    EW_MAXIMUM,
    EW_CAST,
    EW_FMA
} ew_fn;

typedef enum ew_kind {
    EW_KIND_UNARY,
    EW_KIND_BINARY,
    EW_KIND_CAST,
    EW_KIND_FMA
} ew_kind;

/* How a packed emit processes two elements at once. */
typedef enum ew_pack {
    EW_PACK_NONE,
    EW_PACK_F32X2, /* {add,sub,mul,fma}.RND.ftz.f32x2, sm_100+ */
    EW_PACK_CAST2  /* paired f32 <-> f16/bf16 conversion */
} ew_pack;

/* What the family knows about one op (td_op_desc.data points here). */
typedef struct ew_info {
    ew_fn fn;
    ew_kind kind;
    bool src_optional;   /* unary: no src means src = dst (in place) */
    bool src_scalar_ok;  /* unary: the src may be a scalar (fill) */
    bool extras;         /* takes bias / scale (sqrt, exp, exp2, log2) */
    bool commutative;    /* binary: constant lhs and the broadcast swap */
    bool float_only;     /* needs a floating compute dtype */
    bool reads_src;      /* the result depends on the sources (not zero) */
    ew_pack pack;        /* the op's packed emit, if any */
    const char *ptx;     /* f32x2 op name: "add", "sub", "mul", "fma" */
} ew_info;

/* The ops, in upstream's ALL_OPS order; the registry registers them. */
extern const td_op_desc td__ewise_ops[];
extern const size_t td__ewise_ops_count;

/* The family's descriptor of the op named `name` (a call's op), or NULL. */
const td_op_desc *td__ewise_op_named(const char *name);

/* The family's info of an op, NULL when op is not one of its ops. */
const ew_info *td__ewise_info(const td_op_desc *op);

#define EW_MAX_OPERANDS (TD_MAX_SRCS + 1)

/*
 * A call's operands as upstream's parse normalises them: `src[0..n)` in
 * compute order (binary: constant moved to the right, the bigger region
 * first; unary: x, then a bias region), the scalar extras apart, and the
 * compute dtype (the widest of dst and the sources, dst winning ties).
 */
typedef struct ew_operands {
    int n;
    td_operand src[EW_MAX_OPERANDS];
    bool bias_region;     /* unary: src[1] is the bias region */
    td_operand bias;      /* unary: a scalar bias (kind NONE otherwise) */
    td_operand scale;     /* unary: a scalar scale (kind NONE otherwise) */
    td_dtype compute;
} ew_operands;

/*
 * Upstream's parse plus the operand checks (`.check` of every op): fills
 * *out, or returns false with a reason and, in *where, the position of the
 * offending operand (left as is when unknown).
 */
bool td__ewise_parse(const td_call *call, const td_op_desc *op,
                     ew_operands *out, td_pos *where, td_reason *why);

/* The checks both variants make, in upstream's order; `shared` selects
 * which storage scope every operand must have ("shared*" or "local").
 * Fills *o.  Does not check shapes against the anchor (the variants do,
 * at their place in upstream's order: td__ewise_shapes). */
bool td__ewise_common(const td_call *call, const td_op_desc *op, bool shared,
                      ew_operands *o, td_reason *why);

/* NumPy broadcasting of every region source to dst:
 * "shape incompat: dim 0: op extent 3 vs anchor 4 (need equal or 1)". */
bool td__ewise_shapes(const td_call *call, const ew_operands *o,
                      td_reason *why);

/* This project's checks after upstream's: regions inside their buffers,
 * 32-bit indices, no partial overlap of dst with a source, the rounding
 * mode.  *rnd receives the rounding of the packed path ("rn" default). */
bool td__ewise_limits(const td_call *call, const ew_operands *o,
                      const char **rnd, td_reason *why);

/* The buffer of a region operand (dst: pass &call->dst), NULL if malformed. */
const td_buffer *td__ewise_buffer(const td_call *call, const td_region *r);

/* Product of a region's extents (saturating; 0 for a non-positive one). */
int64_t td__ewise_elems(const td_region *r);

/* A scalar operand (literal or named) as an expression of its dtype. */
td_expr *td__ewise_scalar(td_ir *ir, const td_operand *o);

/* A fresh expression for source i at the current element (a load, or the
 * scalar); called once per use, so that no IR node is shared. */
typedef td_expr *(*ew_src_fn)(void *ctx, int i);

/* The op's scalar compute at one element, cast to dst_dtype. */
td_expr *td__ewise_compute(td_ir *ir, const ew_info *info,
                           const ew_operands *o, td_dtype dst_dtype,
                           ew_src_fn src, void *ctx);

/* Whether the op's packed emit applies (dtypes, arch), upstream's
 * applies(); layout contiguity is the variant's business. */
bool td__ewise_pack_applies(const td_call *call, const ew_info *info,
                            const ew_operands *o);

/* Writes the value of the current element at dst (the variant's store). */
typedef void (*ew_store_fn)(void *ctx, td_expr *v);

/* The f32x2 emit of a pair of elements (EW_PACK_F32X2): each source's two
 * lanes packed into a u64 (pa, pb, pc), the op's PTX instruction with
 * rounding rnd (pr), its halves stored.  src and store address the lane
 * *lane, which this sets to 0 or 1 before each call and leaves at 0. */
void td__ewise_emit_f32x2(td_ir *ir, const ew_info *info,
                          const ew_operands *o, const char *rnd,
                          ew_src_fn src, ew_store_fn store, void *ctx,
                          int *lane);

#endif
