/*
 * tiledispatch: the call model (what is dispatched) and its loader.
 *
 * A td_call is plain data with fixed-size arrays: once loaded it owns no
 * pointers, can be copied with memcpy and read from any number of threads.
 */
#ifndef TILEDISPATCH_TD_CALL_H
#define TILEDISPATCH_TD_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fixed limits of the call model (documented in docs/limits.md). */
#define TD_NAME_MAX 64          /* buffer, op, target, variant names incl. NUL */
#define TD_MAX_RANK 8           /* dimensions of a buffer */
#define TD_MAX_BUFFERS 16       /* buffers declared by one call */
#define TD_MAX_LAYOUT_ITERS 16  /* shard or replica iters of one layout */
#define TD_MAX_CONFIG 16        /* config entries of one call */
#define TD_MAX_SCALARS 8        /* scalars declared under `scalars:` */
#define TD_MAX_CLUSTER 16       /* CTAs of a launch's cluster (sm_90's
                                   largest, non-portable; 8 portable) */
#define TD_MAX_EXPR_NODES 32    /* nodes of one config expression */
#define TD_MAX_AXES TD_MAX_RANK /* reduce axes as written */
#define TD_MAX_SRCS 4           /* source operands of one call */
#define TD_MAX_EXTENT ((int64_t)1 << 31) /* largest shape extent */
#define TD_CALL_FILE_MAX (256 * 1024)    /* bytes of a call file */
#define TD_CALL_DEPTH_MAX 32              /* YAML nesting depth of a call file */
#define TD_MAX_ELEMENTS ((int64_t)1 << 40) /* elements of one buffer (product
                                              of its shape) */

/* ---- dtypes ---------------------------------------------------------- */

#define TD_DTYPE_MAP(X)                                                        \
    X(F32, "float32", 32)                                                      \
    X(F16, "float16", 16)                                                      \
    X(BF16, "bfloat16", 16)                                                    \
    X(F64, "float64", 64)                                                      \
    X(I8, "int8", 8)                                                           \
    X(I16, "int16", 16)                                                        \
    X(I32, "int32", 32)                                                        \
    X(I64, "int64", 64)                                                        \
    X(U8, "uint8", 8)                                                          \
    X(U16, "uint16", 16)                                                       \
    X(U32, "uint32", 32)                                                       \
    X(U64, "uint64", 64)                                                       \
    X(F8E4M3, "float8_e4m3fn", 8)                                              \
    X(F8E5M2, "float8_e5m2", 8)                                                \
    X(F8E8M0, "float8_e8m0fnu", 8)                                             \
    X(F4E2M1, "float4_e2m1fn", 4)

typedef enum td_dtype {
#define TD__DT_ENUM(id, name, bits) TD_##id,
    TD_DTYPE_MAP(TD__DT_ENUM)
#undef TD__DT_ENUM
    TD_DTYPE_COUNT
} td_dtype;

TD_API const char *td_dtype_name(td_dtype t);            /* "float32" */
TD_API int td_dtype_parse(const char *s, td_dtype *out); /* 0 or TD_ENOENT */
TD_API int td_dtype_bits(td_dtype t);
/* Floating formats: float8, float8_e8m0fnu and float4_e2m1fn too. */
TD_API bool td_dtype_is_float(td_dtype t);
/* float8_e4m3fn or float8_e5m2: storage and conversions only (CUDA
 * __nv_fp8_e4m3 / __nv_fp8_e5m2 have no arithmetic).  Not float8_e8m0fnu,
 * which is confined (below). */
TD_API bool td_dtype_is_float8(td_dtype t);
/* Signed: the integers int*, and the floats but float8_e8m0fnu (an
 * exponent without a sign). */
TD_API bool td_dtype_is_signed(td_dtype t);
/*
 * The confined dtypes of block-scaled MMA: float8_e8m0fnu (8 bits, an
 * unsigned power-of-two scale, CUDA __nv_fp8_e8m0) and float4_e2m1fn (4
 * bits, two to a byte, CUDA __nv_fp4_e2m1).  Only the operands that an op
 * names may have them (docs/contract.md, "Confined dtypes"): the call
 * loader refuses every other use, so a variant, printer or program
 * generator that takes a loaded call never meets a 4-bit element or an
 * e8m0 value where it reckons in bytes or in float8.
 */
TD_API bool td_dtype_is_confined(td_dtype t);

/* ---- execution scopes ------------------------------------------------ */

typedef enum td_exec_scope {
    TD_SCOPE_THREAD,
    TD_SCOPE_WARP,
    TD_SCOPE_WARPGROUP,
    TD_SCOPE_CTA,
    TD_SCOPE_CLUSTER,
    TD_SCOPE_COUNT
} td_exec_scope;

TD_API const char *td_exec_scope_name(td_exec_scope s); /* "warpgroup" */
TD_API int td_exec_scope_parse(const char *s, td_exec_scope *out);

/* ---- TileLayout ------------------------------------------------------ */

/* Layout axes: TD_AXIS_M is the memory (register) axis, TLane and TCol the
 * two axes of tensor memory (sm_100: 128 lanes of 32-bit columns; only a
 * tmem buffer's layout names them, the column in elements), the rest are
 * thread or block axes. */
#define TD_AXIS_MAP(X)                                                         \
    X(M, "m", 0)                                                               \
    X(LANEID, "laneid", 1)                                                     \
    X(WARPID, "warpid", 1)                                                     \
    X(TX, "tx", 1)                                                             \
    X(WGID, "wgid", 1)                                                         \
    X(TID_IN_WG, "tid_in_wg", 1)                                               \
    X(WID_IN_WG, "wid_in_wg", 1)                                               \
    X(BX, "bx", 1)                                                             \
    X(BY, "by", 1)                                                             \
    X(BZ, "bz", 1)                                                             \
    X(CBX, "cbx", 1)                                                           \
    X(CBY, "cby", 1)                                                           \
    X(CBZ, "cbz", 1)                                                           \
    X(TLANE, "TLane", 0)                                                       \
    X(TCOL, "TCol", 0)

typedef enum td_axis {
#define TD__AX_ENUM(id, name, thr) TD_AXIS_##id,
    TD_AXIS_MAP(TD__AX_ENUM)
#undef TD__AX_ENUM
    TD_AXIS_COUNT
} td_axis;

TD_API const char *td_axis_name(td_axis a);
TD_API int td_axis_parse(const char *s, td_axis *out);
TD_API bool td_axis_is_thread(td_axis a);

/* One iter: `extent` values, each step moving `stride` along `axis`. */
typedef struct td_iter {
    int64_t extent;
    int64_t stride;
    td_axis axis;
} td_iter;

/*
 * A TileLayout: shard iters (they partition the logical index, outermost
 * first), replica iters (they broadcast), and a constant offset per axis.
 * `swizzle` marks a bare swizzle layout (`Swizzle(b, m, s)`), which the
 * reduction variants reject.
 */
typedef struct td_layout {
    int nshard;
    td_iter shard[TD_MAX_LAYOUT_ITERS];
    int nrep;
    td_iter rep[TD_MAX_LAYOUT_ITERS];
    int64_t offset[TD_AXIS_COUNT];
    bool swizzle;
    int swizzle_bits[3];
} td_layout;

/*
 * Parses TileLayout notation (contract section 3), e.g.
 * "S[(32, 4) : (1@laneid, 1)] + R[8 : 4@laneid] + 2@laneid".
 * On error returns TD_EPARSE and fills diag (col is 1-based within text;
 * line is 0 and the caller adds its own position).
 */
TD_API int td_layout_parse(const char *text, td_layout *out, td_diag *diag);

/* Writes the canonical notation of l; returns the length needed. */
TD_API size_t td_layout_format(const td_layout *l, char *buf, size_t cap);

/* ---- buffers, regions, the call -------------------------------------- */

/*
 * How a tmem buffer's rows sit in tensor memory's 128 lanes: TVM's
 * tmem_datapath_layout, the datapaths of the tcgen05 MMA (PTX ISA "Data
 * path layout organization").  D (M = 128, the default): row r in lane r.
 * F (M = 64): row r in lane 32 * (r / 16) + 16 * sub_slab + r % 16, the
 * lower (sub_slab 0) or upper (1) 16 lanes of each warp's 32.  B (the
 * per-CTA M = 64 of cta_group::2): the N columns fold into two halves,
 * (r, c) in lane r + 64 * (c / (N / 2)), column c % (N / 2).  OTHER: a
 * layout that is none of them (lane replicas, which only smem->tmem
 * writes; the copies that read tensor memory as a datapath refuse it).
 */
typedef enum td_tmem_datapath {
    TD_TMEM_D,
    TD_TMEM_F,
    TD_TMEM_B,
    TD_TMEM_OTHER
} td_tmem_datapath;

typedef struct td_buffer {
    char name[TD_NAME_MAX];
    char scope[TD_NAME_MAX];      /* local, shared, shared.dyn, global, tmem */
    td_dtype dtype;
    int ndim;
    int64_t shape[TD_MAX_RANK];
    bool has_layout;              /* a layout (tmem: not datapath D's) */
    td_layout layout;
    char layout_text[256];        /* as written, for messages */
    td_tmem_datapath datapath;    /* tmem: its layout's datapath */
    int sub_slab;                 /* tmem, datapath F: 0 or 1 */
} td_buffer;

/* A position in the call file (1-based; 0 when unknown). */
typedef struct td_pos {
    int line;
    int col;
} td_pos;

/* A half-open box of a buffer: [start, start + extent) per dimension. */
typedef struct td_region {
    int buffer;                   /* index into td_call.buffers */
    int ndim;                     /* == the buffer's ndim */
    int64_t start[TD_MAX_RANK];
    int64_t extent[TD_MAX_RANK];
    /* The start's part that is affine in the launch's block ids (a CTA's
     * tile of a global buffer, "A[blockIdx.x * 64:blockIdx.x * 64 + 64]"):
     * dimension d starts at start[d] + the sum over k of
     * block_coef[d][k] * blockIdx.{x,y,z}.  All zero: the start is
     * constant.  Only a copy's global operand has one (docs/contract.md). */
    int64_t block_coef[TD_MAX_RANK][3];
    /* The part affine in the call's declared scalars (`scalars:`, e.g. a
     * loop variable k of the caller: "A[k * 128:k * 128 + 128, 0:64]"):
     * dimension d adds scalar_coef[d][j] * scalars[j].  Only copy_async's
     * global operand has one. */
    int64_t scalar_coef[TD_MAX_RANK][TD_MAX_SCALARS];
} td_region;

/*
 * A scalar the call declares under `scalars:` (a value the caller's code
 * has, such as a loop variable): an integer dtype and, when declared, the
 * half-open range [lo, hi) of its values.  Region starts and config
 * expressions may use it; a region start needs the range, which is how
 * its bounds are checked.
 */
typedef struct td_scalar {
    char name[TD_NAME_MAX];
    td_dtype dtype;               /* an integer dtype; int32 by default */
    bool has_range;
    int64_t lo, hi;               /* lo <= value < hi when has_range */
} td_scalar;

/*
 * One operand of a call: a region of a declared buffer, a literal constant,
 * or a named scalar (a value the generated code receives as a parameter).
 * Elementwise ops take several; reductions take one region.
 */
typedef enum td_operand_kind {
    TD_OPERAND_NONE,    /* absent (an extra that was not given) */
    TD_OPERAND_REGION,  /* `region` of buffers[region.buffer] */
    TD_OPERAND_LITERAL, /* a constant of `dtype`: `value` (floats) or
                           `ivalue` (integer dtypes; `value` holds it too) */
    TD_OPERAND_SCALAR   /* a scalar variable `name` of `dtype` */
} td_operand_kind;

typedef struct td_operand {
    td_operand_kind kind;
    td_dtype dtype;               /* REGION: the buffer's dtype */
    td_region region;             /* REGION */
    double value;                 /* LITERAL */
    int64_t ivalue;               /* LITERAL of an integer dtype */
    char name[TD_NAME_MAX];       /* SCALAR */
    td_pos pos;                   /* where it was written (0 if unknown) */
} td_operand;

typedef enum td_value_kind {
    TD_VALUE_INT,
    TD_VALUE_BOOL,
    TD_VALUE_STRING,
    TD_VALUE_EXPR,  /* an integer expression (`expr`, text in `s`) */
    TD_VALUE_ELEM   /* an element of a declared buffer (`elem_buffer`
                       indexed by the roots `elem_index`, text in `s`) */
} td_value_kind;

/*
 * The nodes of a config expression.  Leaves: an integer (`v`), a declared
 * scalar (`v` indexes td_call.scalars) and a thread, block or cluster id
 * (`v` is a td_axis: tx, laneid, warpid, bx, by, bz, cbx, cby, cbz).
 * The rest apply to nodes `a` (and `b`), which come earlier in the array.
 * Division and remainder are C's on non-negative values (TVM's floordiv
 * and floormod agree there); comparisons and logic give 0 or 1.
 */
typedef enum td_cx_op {
    TD_CX_INT,
    TD_CX_SCALAR,
    TD_CX_ID,
    TD_CX_NEG,
    TD_CX_NOT,
    TD_CX_ADD,
    TD_CX_SUB,
    TD_CX_MUL,
    TD_CX_DIV,
    TD_CX_MOD,
    TD_CX_LT,
    TD_CX_LE,
    TD_CX_GT,
    TD_CX_GE,
    TD_CX_EQ,
    TD_CX_NE,
    TD_CX_AND,
    TD_CX_OR
} td_cx_op;

typedef struct td_cx_node {
    td_cx_op op;
    int a, b;                     /* operand nodes (-1 for none) */
    int64_t v;                    /* INT, SCALAR, ID */
} td_cx_node;

typedef struct td_cexpr {
    int n;                        /* nodes used */
    td_cx_node node[TD_MAX_EXPR_NODES];
} td_cexpr;

/*
 * A config entry.  Strings of the expression keys (docs/contract.md:
 * predicate, mbar, remote_cta_id, cta_mask) are parsed: a buffer element
 * "mbar[k % 4]" is TD_VALUE_ELEM, any other expression TD_VALUE_EXPR,
 * except that a bare name the call does not declare stays a string (the
 * name of an int parameter, as ldgsts' predicate always took it).
 */
typedef struct td_config_entry {
    char key[TD_NAME_MAX];
    td_value_kind kind;
    int64_t i;
    bool b;
    char s[TD_NAME_MAX];
    td_cexpr expr;                /* EXPR: root expr.n - 1; ELEM: indices */
    int elem_buffer;              /* ELEM: index into td_call.buffers */
    int elem_index[TD_MAX_RANK];  /* ELEM: root node of each index */
    td_pos pos;                   /* where the value was written */
    td_pos key_pos;               /* where the key was written */
} td_config_entry;

/* Launch parameter tags, in the order of this enum. */
typedef enum td_launch_tag {
    TD_LAUNCH_TX, /* threadIdx.x */
    TD_LAUNCH_TY,
    TD_LAUNCH_TZ,
    TD_LAUNCH_BX, /* blockIdx.x */
    TD_LAUNCH_BY,
    TD_LAUNCH_BZ,
    TD_LAUNCH_COUNT
} td_launch_tag;

TD_API const char *td_launch_tag_name(td_launch_tag t); /* "threadIdx.x" */

typedef struct td_launch_param {
    bool present;
    bool symbolic;                /* given as a name, extent unknown */
    int64_t extent;               /* valid when present && !symbolic */
    char symbol[TD_NAME_MAX];
} td_launch_param;

/* One axis of a call's active set: threads begin <= axis < end. */
#define TD_MAX_ACTIVE 4
typedef struct td_active_range {
    td_axis axis;                 /* a thread axis */
    int64_t begin, end;
    td_pos pos;                   /* the axis key in the call file */
} td_active_range;

typedef struct td_call {
    char file[256];               /* where it was loaded from ("" if none) */
    td_pos pos_op;                /* positions of values, for messages that */
    td_pos pos_target;            /* tools report after loading (unknown op, */
    td_pos pos_dispatch;          /* unknown forced variant, ...) */
    char op[TD_NAME_MAX];
    char target[TD_NAME_MAX];
    char arch[TD_NAME_MAX];       /* "" when absent */
    int sm_version;               /* the number in sm_(\d+); 0 = unknown */
    td_exec_scope scope;
    td_launch_param launch[TD_LAUNCH_COUNT];
    /* The launch's cluster shape (`launch: {cluster: [2, 1, 1]}`), x, y,
     * z; all 0 when the kernel is launched without clusters.  The
     * cluster ids cbx, cby, cbz need it. */
    int cluster[3];
    int nscalars;
    td_scalar scalars[TD_MAX_SCALARS]; /* `scalars:`, in file order */
    int nbuffers;
    td_buffer buffers[TD_MAX_BUFFERS];
    td_region dst;
    td_pos pos_dst;               /* the `dst` value */
    td_region src;                /* == srcs[0].region when that is a region
                                     (reductions); buffer -1 otherwise */
    /* Source operands, in order: `src: R` gives one, `srcs: [...]` any
     * number up to TD_MAX_SRCS (0 for ops such as `zero`). */
    int nsrcs;
    td_operand srcs[TD_MAX_SRCS];
    td_pos pos_srcs;              /* the `src`/`srcs` value */
    /* Op extras (`extras:` in the call file; kind NONE when absent):
     * `bias` (a region or a scalar) and `scale` (a scalar) of the unary
     * elementwise ops. */
    td_operand bias;
    td_operand scale;
    td_pos pos_extras;
    bool srcs_list;               /* the sources were written as `srcs:`
                                     (td_call_format_script then prints
                                     the operand form) */
    int naxes;
    int axes[TD_MAX_AXES];        /* as written (may be negative) */
    bool accum;
    /* gemm's own arguments (upstream's Tx.gemm(D, A, B, C, transpose_A,
     * transpose_B, alpha, beta): D = alpha * op(A) @ op(B) + beta * C).
     * D is dst and A, B, C are srcs[0], srcs[1], srcs[2] (call-file keys
     * a, b, c); A is [M, K], or [K, M] when transpose_a; B is [K, N], or
     * [N, K] when transpose_b.  alpha and beta are literals: int32 when
     * written as an integer, else float32 (TVMScript's constants of a
     * Python int and float); float32 1 and 0 when not written (upstream's
     * defaults 1.0 and 0.0).  Kind NONE in the calls of other ops. */
    bool transpose_a;
    bool transpose_b;
    td_operand alpha;
    td_operand beta;
    int nconfig;
    td_config_entry config[TD_MAX_CONFIG];
    char dispatch[TD_NAME_MAX];   /* forced variant, "" if none */
    /* The active set (`active: {laneid: [0, 16]}`): what the guards
     * around the call leave active of the scope's threads, per thread
     * axis a half-open range [begin, end) (TVM's sctx.intra, narrowed by
     * an enclosing `if`).  nactive 0 (no key): every thread of the scope
     * reaches the call.  Axes in file order, each at most once. */
    int nactive;
    td_active_range active[TD_MAX_ACTIVE];
    /* gemm_async's accum when written as an expression of the call's
     * scalars and thread ids (`accum: "k > 0"`, upstream's accum= given a
     * PrimExpr: accumulate from the first MMA when it is nonzero): kind
     * TD_VALUE_EXPR, key "accum", the text in `s`.  Otherwise kind
     * TD_VALUE_INT (0) and `accum` above is the flag. */
    td_config_entry accum_expr;
} td_call;

/*
 * Loads a call file.  On success *out is a new call (free with
 * td_call_free).  On failure *out is NULL, the return value is negative and
 * diag holds FILE:LINE:COL and the message.
 */
TD_API int td_call_load_file(const char *path, td_call **out, td_diag *diag);

/* Same, from memory; `name` is used as the file name in messages. */
TD_API int td_call_parse(const char *name, const char *text, size_t len,
                         td_call **out, td_diag *diag);

TD_API void td_call_free(td_call *call); /* accepts NULL */

/*
 * Whether s is a variant name: one or more parts joined by "->" or "<->"
 * (TVM names its tensor-memory copies `smem->tmem` and `tmem<->local`), a
 * part being words of letters, digits and '_' joined by '.', the last of
 * which may end in one '*' (TVM's gemm variant is `mma.m16n8k*`); shorter
 * than TD_NAME_MAX.  A call's
 * `dispatch:`, a rules entry's `name:` and a registered impl use it.
 */
TD_API bool td_variant_name_ok(const char *s);

/* The grammar above in words, for messages. */
#define TD_VARIANT_NAME_FORM                                                   \
    "letters, digits and '_' (words joined by '.', the last may end in "     \
    "'*'), parts joined by '->' or '<->'"

/* Sets call->arch and call->sm_version from "sm_NN..."; TD_EINVAL if the
 * text has no sm_(\d+). */
TD_API int td_call_set_arch(td_call *call, const char *arch);

TD_API const td_buffer *td_call_dst_buffer(const td_call *call);
TD_API const td_buffer *td_call_src_buffer(const td_call *call);

/* Finds a config entry by key, NULL if absent. */
TD_API const td_config_entry *td_call_config(const td_call *call,
                                             const char *key);
TD_API bool td_call_config_bool(const td_call *call, const char *key,
                                bool dflt);
TD_API int64_t td_call_config_int(const td_call *call, const char *key,
                                  int64_t dflt);

/*
 * Normalises the reduce axes against the source rank (upstream's
 * _analyze_axes): negative axes count from the end, duplicates collapse,
 * both lists ascend.  Fails with TD_EINVAL and a reason
 * "reduce axis A out of range for ndim=N" in why.
 */
TD_API int td_call_axes(const td_call *call, int *reduce, int *nreduce,
                        int *spatial, int *nspatial, char *why,
                        size_t whylen);

/* Product of the region's extents. */
TD_API int64_t td_region_size(const td_region *r);

/*
 * The call as one line of TVMScript-like text, in one of two forms:
 *
 *   reduction form: "Tx.cta.sum(B_local[0:1], A_local[0:4], axes=[-1],
 *                    accum=False)": the destination, the source, then
 *                    axes and accum always;
 *   operand form:   "Tx.cta.add(C[0:64, 0:64], A[0:64, 0:64],
 *                    T.float32(2))", "Tx.exp(B[0:8], A[0:8], bias, alpha)",
 *                    "Tx.zero(B[0:8])": the destination, every source
 *                    (regions, literals as T.DTYPE(V), named scalars by
 *                    name), then bias and scale as upstream's positional
 *                    arguments (None standing for an absent bias or
 *                    source); axes and accum only where they differ from
 *                    the defaults ([-1], False).
 *
 * A gemm call prints upstream's Tx.gemm form whatever the form asked:
 * "Tx.warp.gemm(D[0:16, 0:8], A[0:16, 0:16], B[0:16, 0:8], C[0:16, 0:8],
 * False, False, T.float32(1.0), T.float32(0.0))": D, A, B, C, then
 * transpose_A, transpose_B, alpha and beta positionally, the literals as
 * TVMScript prints them (an int32 bare; a float32 integral value with
 * ".0", any other with 17 significant digits).
 *
 * All end with dispatch= and the config entries as keywords.  Returns the
 * length of the whole text (as snprintf; buf may be NULL when cap is 0).
 */
typedef enum td_script_form {
    TD_SCRIPT_AUTO,      /* as written: the operand form for `srcs:`,
                            extras, or a source that is not one region;
                            the reduction form otherwise */
    TD_SCRIPT_REDUCTION, /* for reduction ops */
    TD_SCRIPT_OPERANDS   /* for elementwise ops */
} td_script_form;

TD_API size_t td_call_format_script_as(const td_call *call,
                                       td_script_form form, char *buf,
                                       size_t cap);

/* td_call_format_script_as(call, TD_SCRIPT_AUTO, buf, cap). */
TD_API size_t td_call_format_script(const td_call *call, char *buf, size_t cap);

/*
 * Writes one operand of `call` as the operand form prints it: a region
 * "A[0:4]", a literal "T.float32(2)", "T.int8(-3)", "T.float16(\"inf\")"
 * (the shortest decimal that reads back as the same double; uint64 values
 * unsigned), a named scalar by its name, an absent operand "None".
 * Returns the length needed (as snprintf).
 */
TD_API size_t td_operand_format(const td_call *call, const td_operand *o,
                                char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
