/*
 * The elementwise family (upstream backend/cuda/tile_primitive/elementwise):
 * the op descriptions, the operand normalisation (upstream's per-op parse),
 * the checks both variants share and the scalar compute.  Internal to
 * variants/; the family's files include public headers only (td_module.h)
 * plus, for `reg`, the model's layout algebra.  The program generator
 * (tools/kernel/kernel_ewise.c) reads the same rows.
 *
 *   ewise_table.h the op table: one row per op (ew_info's columns)
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

/* How the self-checking programs (tools/kernel) generate the inputs of a
 * buffer: a source's values stay inside its op's domain.  The first use of
 * a buffer picks its role. */
typedef enum ew_role {
    EW_ROLE_ANY,       /* exact k/8 in [-2, 2]; random normal */
    EW_ROLE_SENTINEL,  /* dst only: a value no op here produces */
    EW_ROLE_FMA,       /* exact k/4 in [-2, 2] (a*b+c exact in bfloat16) */
    EW_ROLE_DIVISOR,   /* exact +-2^j, j in [-2, 2]; random +-2^U(-2, 2) */
    EW_ROLE_POS,       /* exact 2^j, j in [-4, 4]; random 2^U(-4, 4) */
    EW_ROLE_SQRT,      /* exact (k/8)^2, k in [1, 16]; random 2^U(-4, 4) */
    EW_ROLE_EXP,       /* exact k/8 in [-2, 2]; random U(-4, 4) */
    EW_ROLE_EXP2,      /* exact integers in [-8, 8]; random U(-8, 8) */
    EW_ROLE_SILU,      /* exact k/8 in [-4, 4]; random U(-5, 5) */
    EW_ROLE_TOINT,     /* float to integer dst: exact k/8, random uniform,
                          in the dst's range clamped to [-100, 100] */
    EW_ROLE_BIAS,      /* exact k/8 in [-1, 1]; random U(-1, 1) */
    EW_ROLE_BIAS_POS   /* exact k/8 in [0, 1]; random U(0, 1) */
} ew_role;

/* How the programs' reference reads the operands before the op's formula
 * (ew_info.f) runs. */
typedef enum ew_ref {
    EW_REF_ZERO,   /* no operand */
    EW_REF_COPY,   /* t = the one source (fill, cast) */
    EW_REF_MATH,   /* t = x * scale + bias; f sets r and d = |f'(t)| */
    EW_REF_BINARY, /* a, b */
    EW_REF_FMA     /* a, b, c */
} ew_ref;

/* What the project knows about one op, one row of ewise_table.h
 * (td_op_desc.data points here): what the variants need, then what the
 * self-checking programs need. */
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
    /* The programs' reference, in double: how it reads the operands, the
     * formula (C statements setting r, and for EW_REF_MATH d = |f'(t)|)
     * and, for EW_REF_BINARY and EW_REF_FMA, dt: the error the rounding
     * of the arguments can carry (u: the compute dtype's unit roundoff,
     * wa, wb: whether a or b rounds converting). */
    ew_ref ref;
    const char *f;
    const char *dt;
    ew_role x;           /* the inputs of the first source */
    ew_role y;           /* the inputs of the others */
    /* ulps of the compute dtype allowed: float32/float64 compute, 16-bit
     * compute; ulps_grow: float32 adds ceil(1.2 |t|) (__expf's error
     * grows with the argument); tiny32: an absolute error more with
     * float32 compute (__log2f's 2^-22 on [0.5, 2]). */
    double ulps32, ulps16;
    bool ulps_grow;
    double tiny32;
    bool int_product;    /* integer inputs small enough that a product of
                            two fits the dst */
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
