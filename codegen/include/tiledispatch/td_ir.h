/*
 * tiledispatch: the lowered IR that emitters build and printers print.
 *
 * All nodes live in an arena owned by the td_ir; td_ir_free releases
 * everything at once.  Builder functions never fail loudly: on allocation
 * failure they set a sticky error flag (td_ir_status) and return NULL or do
 * nothing, and every builder accepts NULL operands, so an emitter checks once
 * at the end.  Emitters never print text; they call these functions.
 */
#ifndef TILEDISPATCH_TD_IR_H
#define TILEDISPATCH_TD_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_call.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct td_ir td_ir;
typedef struct td_expr td_expr;
typedef struct td_var td_var;
typedef struct td_ir_buf td_ir_buf;

/* Index expressions and loop variables are int32 in CUDA, TVM's int32 in
 * TIRx; value expressions carry the buffer's dtype. */

typedef enum td_binop {
    TD_OP_ADD,
    TD_OP_SUB,
    TD_OP_MUL,
    TD_OP_DIV,   /* integer division (operands are non-negative) */
    TD_OP_MOD,
    TD_OP_MAX,
    TD_OP_MIN,
    TD_OP_LT,
    TD_OP_LE,
    TD_OP_EQ,
    TD_OP_NE,
    TD_OP_AND,
    TD_OP_OR,
    TD_OP_SHL,
    TD_OP_BITAND,
    TD_OP_XOR    /* bitwise xor of non-negative indices */
} td_binop;

/* The combiner of a reduction op. */
typedef enum td_combiner {
    TD_COMBINE_SUM,
    TD_COMBINE_MAX,
    TD_COMBINE_MIN
} td_combiner;

TD_API const char *td_combiner_name(td_combiner c); /* "sum", "max", "min" */
/* The CUDA C spelling of a value dtype ("float", "__half", "int8_t", ...)
 * as the CUDA printer writes it; NULL for an unknown dtype. */
TD_API const char *td_cuda_type_name(td_dtype t);

/* Built-in intrinsics; each printer spells them in its language and
 * requests the preludes they need. */
typedef enum td_intrin {
    TD_INTRIN_THREAD_IDX_X,    /* () -> threadIdx.x */
    TD_INTRIN_ACTIVEMASK,      /* () -> __activemask() */
    TD_INTRIN_SHFL_XOR,        /* (mask, value, lane_mask, width) */
    TD_INTRIN_WARP_REDUCE,     /* (value) + combiner + width: helper fn */
    TD_INTRIN_SYNCTHREADS,     /* () */
    TD_INTRIN_SYNCWARP,        /* () */
    TD_INTRIN_BARRIER_SYNC,    /* (id, nthreads): bar.sync id, n */
    TD_INTRIN_PTX_PACK_F32X2,  /* (lo, hi) -> uint64 via mov.b64 */
    TD_INTRIN_PTX_UNPACK_LO,   /* (packed) -> float (mov.b64 unpack) */
    TD_INTRIN_PTX_UNPACK_HI,   /* (packed) -> float */
    TD_INTRIN_PTX_ADD_F32X2,   /* (a, b) -> add.rn.ftz.f32x2 */
    TD_INTRIN_PTX_MAX3_F32,    /* (a, b, c) -> max.f32 d, a, b, c */
    TD_INTRIN_PTX_MIN3_F32,    /* (a, b, c) -> min.f32 d, a, b, c */
    /* Whole-warp all-reductions of a float32 (every lane of the warp calls
     * them and gets the result; sm_80 or newer).  CUDA: the sum through
     * one float64 tensor-core MMA (m8n8k4: the 32 values become sums of 8,
     * exact in float64) and two shuffles; max and min through redux.sync
     * on order-preserving integer keys, NaN lanes skipped as fmaxf skips
     * them (a warp of NaN only gives -inf for max, +inf for min).  TIRx:
     * T.cuda.warp_reduce(value, op, 32), TVM's shuffle tree. */
    TD_INTRIN_WARP_SUM_F64MMA, /* (value) */
    TD_INTRIN_WARP_MAX_REDUX,  /* (value) */
    TD_INTRIN_WARP_MIN_REDUX,  /* (value) */
    /* The cp.async groups (td_ir_cp_async), which the caller of an
     * asynchronous copy writes (the copy emits none): commit the calling
     * thread's cp.asyncs as a group; wait until at most n (a constant,
     * 0..7) of its groups are pending; wait for all of them.  CUDA: a
     * prelude helper each, the PTX under __CUDA_ARCH__ and nothing on a
     * host (its copies were done at once); TIRx: TVM's T.ptx.cp("async",
     * "commit_group", ""), T.ptx.cp(n, "async", "wait_group", ""),
     * T.ptx.cp("async", "wait_all", ""). */
    TD_INTRIN_CP_ASYNC_COMMIT, /* () */
    TD_INTRIN_CP_ASYNC_WAIT,   /* (n) */
    TD_INTRIN_CP_ASYNC_WAIT_ALL, /* () */
    /* The block's index in the grid: a region whose start is affine in
     * the block ids (a CTA's tile of a global buffer) reads them. */
    TD_INTRIN_BLOCK_IDX_X,     /* () -> blockIdx.x */
    TD_INTRIN_BLOCK_IDX_Y,     /* () -> blockIdx.y */
    TD_INTRIN_BLOCK_IDX_Z,     /* () -> blockIdx.z */
    /* The CTA's id in its cluster (%cluster_ctaid.x/y/z; TVM's cbx, cby,
     * cbz of T.cta_id_in_cluster), for a kernel launched with a cluster.
     * The CPU stand-in's under TD_EMU; another host build reads 0. */
    TD_INTRIN_CLUSTER_CTAID_X, /* () -> int32 */
    TD_INTRIN_CLUSTER_CTAID_Y, /* () -> int32 */
    TD_INTRIN_CLUSTER_CTAID_Z, /* () -> int32 */
    /* elect.sync _|p, 0xffffffff: 1 in one lane of the warp (the leader),
     * 0 in the others; the whole warp calls it.  sm_90 or newer; a host
     * build traps.  TIRx: T.cuda.elect_sync(). */
    TD_INTRIN_ELECT_SYNC,      /* () -> int32 */
    TD_INTRIN_COUNT
} td_intrin;

typedef enum td_loop_kind {
    TD_LOOP_SERIAL,
    TD_LOOP_UNROLL
} td_loop_kind;

typedef enum td_lang {
    TD_LANG_TIRX,
    TD_LANG_CUDA
} td_lang;

/* The language named `name` ("cuda" or "tirx", as the command line's
 * --lang and Python's lang= spell it) into *out.  0, or TD_EINVAL for
 * another name or a NULL argument (*out unchanged). */
TD_API int td_lang_parse(const char *name, td_lang *out);

/* ---- life cycle ------------------------------------------------------ */

/* A new, empty body; NULL on allocation failure. */
TD_API td_ir *td_ir_new(void);
TD_API void td_ir_free(td_ir *ir); /* accepts NULL */

/* 0, or the first error any builder hit (TD_ENOMEM, TD_EINVAL for misuse
 * such as an unbalanced loop_end). */
TD_API int td_ir_status(const td_ir *ir);

/* ---- buffers --------------------------------------------------------- */

/*
 * Declares a buffer the body reads or writes.  `name` is the call's buffer
 * name; the CUDA printer spells it NAME_ptr and flattens indices row-major
 * over `shape`, the TIRx printer keeps the indices.
 */
TD_API td_ir_buf *td_ir_buffer(td_ir *ir, const char *name, td_dtype dtype,
                               const char *scope, int ndim,
                               const int64_t *shape);

/*
 * Marks buffer b (of this IR, not a scratch array) as swizzled,
 * Swizzle(bits, base, shift) of the layout notation (TVM's
 * ComposeLayout(base, bits, shift, ...)): the CUDA printer indexes element
 * `flat` (the row-major flat index) at flat ^ (((flat >> (base + shift)) &
 * (2^bits - 1)) << base); the TIRx printer keeps the logical indices, as
 * TVM's TIRx does (the buffer's layout resolves them).  A vector access of
 * n elements stays one access when it starts at a multiple of n and
 * n <= 2^base (the caller's condition).  0 <= bits <= shift <= 31,
 * base <= 31, else TD_EINVAL; marking an in-place buffer again must give
 * the same swizzle.  Returns 0 or the IR's error.
 */
TD_API int td_ir_buffer_swizzle(td_ir *ir, td_ir_buf *b, int bits, int base,
                                int shift);

/*
 * Gives buffer b (of this IR, not a scratch array) a storage layout other
 * than row-major over its shape (a TileLayout's memory iters grouped by
 * logical dimension): dim d owns iters [seps[d], seps[d+1]) of the
 * (extent, stride) pairs, outermost first, the product of a dim's extents
 * being its shape; `offset` is added.  The CUDA printer indexes
 * sum over d and its iters k of (i_d / inner_k % extent_k) * stride_k
 * + offset (inner_k: the product of the later extents of the dim; the
 * outermost iter needs no modulo), then the swizzle if any; the TIRx
 * printer keeps the logical indices (TVM's buffer resolves them).
 * 0 <= offset, 1 <= niters <= TD_MAX_LAYOUT_ITERS, seps[0] == 0,
 * seps[ndim] == niters, else TD_EINVAL.  Returns 0 or the IR's error.
 */
TD_API int td_ir_buffer_layout(td_ir *ir, td_ir_buf *b, int niters,
                               const int64_t *extent, const int64_t *stride,
                               const int *seps, int64_t offset);

/* Declares a local scratch array of `size` elements (a register buffer the
 * body allocates itself); the printers declare it where the body starts. */
TD_API td_ir_buf *td_ir_scratch(td_ir *ir, const char *name, td_dtype dtype,
                                int64_t size);

/* Declares a shared-memory scratch array of `size` elements that the body
 * allocates itself (e.g. per-warp partials of a cross-warp combine); the
 * printers declare it where the body starts (CUDA `__shared__`, TIRx
 * alloc_buffer with scope "shared").  Every thread of the block sees the
 * same array: the emitter indexes it per scope instance. */
TD_API td_ir_buf *td_ir_shared_scratch(td_ir *ir, const char *name,
                                       td_dtype dtype, int64_t size);

/* The shared memory the body's own scratch arrays take (td_ir_shared_
 * scratch), in bytes, each array rounded up to 16 (the alignment a
 * compiler may give it), saturating at INT64_MAX; 0 when there is none.
 * A launcher adds it to the dynamic shared memory it asks for: both count
 * against the block's limit. */
TD_API int64_t td_ir_shared_scratch_bytes(const td_ir *ir);

TD_API td_dtype td_ir_buf_dtype(const td_ir_buf *b);
/* The element count the IR declares for the (non-scratch) buffer `name`,
 * saturating at INT64_MAX; 0 when the IR does not declare it. */
TD_API int64_t td_ir_buffer_elems(const td_ir *ir, const char *name);

/* ---- expressions ----------------------------------------------------- */

TD_API td_expr *td_int(td_ir *ir, int64_t v); /* int32 index constant */
TD_API td_expr *td_const_f(td_ir *ir, td_dtype t, double v);
TD_API td_expr *td_const_i(td_ir *ir, td_dtype t, int64_t v);
TD_API td_expr *td_const_u(td_ir *ir, td_dtype t, uint64_t v);
/* The identity of combiner c for dtype t (sum 0; max the lowest finite
 * value; min the highest). */
TD_API td_expr *td_identity(td_ir *ir, td_combiner c, td_dtype t);
TD_API td_expr *td_var_ref(td_ir *ir, const td_var *v);
TD_API td_expr *td_binary(td_ir *ir, td_binop op, td_expr *a, td_expr *b);
/* op(a, b) for a reduction combiner, in a's dtype. */
TD_API td_expr *td_combine(td_ir *ir, td_combiner c, td_expr *a, td_expr *b);
TD_API td_expr *td_load(td_ir *ir, const td_ir_buf *b, int n,
                        td_expr *const *idx);
TD_API td_expr *td_load1(td_ir *ir, const td_ir_buf *b, td_expr *idx);
/* A built-in intrinsic.  `dtype` is the result type; for WARP_REDUCE,
 * `combiner` and `width` select the helper (ignored otherwise). */
TD_API td_expr *td_intrinsic(td_ir *ir, td_intrin k, td_dtype dtype, int nargs,
                             td_expr *const *args);
TD_API td_expr *td_warp_reduce(td_ir *ir, td_combiner c, int width,
                               td_expr *value, td_dtype dtype);
/* A call to a function the user provides, printed as NAME(args...) in both
 * languages. */
TD_API td_expr *td_extern_call(td_ir *ir, const char *name, td_dtype dtype,
                               int nargs, td_expr *const *args);

/* ---- value arithmetic (elementwise ops) ------------------------------ */

/* Arithmetic on values of one dtype (the result has it): float32,
 * float16, bfloat16, float64 or an integer dtype.  DIV is true division
 * (`/` in both languages; integers divide as C does, truncating, which
 * TIRx spells T.Div(a, b)), MAX/MIN the dtype's maximum/minimum (NaN
 * handling as CUDA's fmaxf / __hmax).  Operands of different dtypes are
 * misuse (TD_EINVAL): convert one with td_cast. */
typedef enum td_valop {
    TD_VAL_ADD,
    TD_VAL_SUB,
    TD_VAL_MUL,
    TD_VAL_DIV,
    TD_VAL_MAX,
    TD_VAL_MIN
} td_valop;
TD_API td_expr *td_value_op(td_ir *ir, td_valop op, td_expr *a, td_expr *b);

/* Math functions of a floating value, in its dtype (CUDA: expf / hexp
 * ...; TIRx: T.exp ...). */
typedef enum td_mathfn {
    TD_MATH_EXP,
    TD_MATH_EXP2,
    TD_MATH_LOG2,
    TD_MATH_SQRT
} td_mathfn;
TD_API td_expr *td_math(td_ir *ir, td_mathfn f, td_expr *a);

/* a converted to dtype t (round to nearest even for narrowing floats;
 * toward zero from a float to an integer, as a C cast); a itself when it
 * already has dtype t.  TIRx: T.Cast("float16", a). */
TD_API td_expr *td_cast(td_ir *ir, td_dtype t, td_expr *a);

/* A scalar the generated code receives from its caller (a kernel
 * parameter), printed as its name in both languages.  The name is an
 * identifier that no buffer, variable or keyword of the IR uses; asking
 * for it again with the same dtype refers to the same parameter, with
 * another dtype is misuse (TD_EINVAL). */
TD_API td_expr *td_param(td_ir *ir, const char *name, td_dtype t);

/*
 * Blackwell (sm_100+) packed float32 pairs: `OP.RND.ftz.f32x2` on 64-bit
 * operands packed with TD_INTRIN_PTX_PACK_F32X2 (unpack the result with
 * TD_INTRIN_PTX_UNPACK_LO/HI).  op is "add", "sub", "mul" (2 args) or
 * "fma" (3 args: a*b+c); rnd is "rn", "rz", "rm" or "rp".  Result: uint64.
 */
TD_API td_expr *td_ptx_f32x2(td_ir *ir, const char *op, const char *rnd,
                             int nargs, td_expr *const *args);

/* Convenience for index arithmetic (folded when constant). */
#define td_add(ir, a, b) td_binary((ir), TD_OP_ADD, (a), (b))
#define td_sub(ir, a, b) td_binary((ir), TD_OP_SUB, (a), (b))
#define td_mul(ir, a, b) td_binary((ir), TD_OP_MUL, (a), (b))
#define td_div(ir, a, b) td_binary((ir), TD_OP_DIV, (a), (b))
#define td_mod(ir, a, b) td_binary((ir), TD_OP_MOD, (a), (b))
#define td_lt(ir, a, b) td_binary((ir), TD_OP_LT, (a), (b))
#define td_eq(ir, a, b) td_binary((ir), TD_OP_EQ, (a), (b))

/* ---- statements (appended to the innermost open block) --------------- */

/* Opens `for (int name = 0; name < extent; ++name)`; returns its variable. */
TD_API td_var *td_ir_for(td_ir *ir, const char *name, td_expr *extent,
                         td_loop_kind kind);
TD_API void td_ir_end_for(td_ir *ir);
TD_API void td_ir_if(td_ir *ir, td_expr *cond);
TD_API void td_ir_else(td_ir *ir);
TD_API void td_ir_end_if(td_ir *ir);
TD_API void td_ir_store(td_ir *ir, const td_ir_buf *b, int n,
                        td_expr *const *idx, td_expr *value);
TD_API void td_ir_store1(td_ir *ir, const td_ir_buf *b, td_expr *idx,
                         td_expr *value);
/* Evaluates an expression for its effect (barriers, sync calls). */
TD_API void td_ir_eval(td_ir *ir, td_expr *e);
/* Declares a scalar local `name` of dtype t, initialised to init; returns
 * a variable to read (td_var_ref) and assign (td_ir_assign). */
TD_API td_var *td_ir_let(td_ir *ir, const char *name, td_dtype t,
                         td_expr *init);
TD_API void td_ir_assign(td_ir *ir, const td_var *v, td_expr *value);
/*
 * Declares `name` holding `lanes` consecutive elements of buffer b, read
 * with one vector access that starts at idx and runs along b's last
 * dimension.  The dtype must be float32, float16, bfloat16, int32 or
 * uint32 and
 * lanes * element size 4, 8 or 16 bytes; the caller guarantees that the
 * address is aligned to that size and that the lanes stay inside the last
 * dimension.  The variable is read only through td_vec_lane.
 * CUDA: `uint4 name = *(const uint4 *)&B_ptr[flat];`; TIRx:
 * `name: T.float32x4 = B[i, j:j + 4]`.
 */
TD_API td_var *td_ir_let_vector(td_ir *ir, const char *name,
                                const td_ir_buf *b, int n,
                                td_expr *const *idx, int lanes);
/* Lane `lane` (0-based) of a vector variable, in the buffer's dtype. */
TD_API td_expr *td_vec_lane(td_ir *ir, const td_var *v, int lane);
/*
 * Pairs: two adjacent lanes as one value, for paired arithmetic on
 * float16 / bfloat16 (CUDA __half2 / __nv_bfloat162).  td_value_op takes
 * two pairs of one of those dtypes (add, sub, mul, max, min; each lane
 * rounded as the scalar op rounds it: CUDA __hadd2 ...) and gives a pair;
 * td_cast takes a float32 pair to a float16 / bfloat16 pair (CUDA
 * __float22half2_rn ...); td_math takes a float16 / bfloat16 pair for
 * exp and exp2 (h2exp, h2exp2: per lane the sequence of hexp, hexp2).
 * Nothing else takes a pair (TD_EINVAL).
 *
 * td_vec_pair: lanes 2*pair and 2*pair+1 of a float32, float16 or
 * bfloat16 vector variable.  td_pair_splat: a float16 / bfloat16 value in
 * both lanes (CUDA __half2half2).  TIRx spells a pair as the vector
 * v[T.ramp(2 * pair, 1, 2)], a splat as T.Broadcast(a, 2).
 */
TD_API td_expr *td_vec_pair(td_ir *ir, const td_var *v, int pair);
TD_API td_expr *td_pair_splat(td_ir *ir, td_expr *a);
/*
 * Declares a vector variable `name` of `lanes` elements of dtype t (the
 * dtypes and sizes of td_ir_let_vector) from n values: its lanes (n ==
 * lanes) or, for float16 / bfloat16, its pairs (n == lanes / 2).  Read it
 * with td_vec_lane / td_vec_pair; store it with td_ir_store_vector.  CUDA:
 * `uint4 name = make_uint4(w0, w1, w2, w3);` (32-bit words); TIRx: a
 * local buffer of its lanes.
 */
TD_API td_var *td_ir_let_vector_of(td_ir *ir, const char *name, td_dtype t,
                                   int lanes, int n, td_expr *const *vals);
/*
 * Stores the vector variable v into `v's lanes` consecutive elements of b
 * (b's dtype) with one access that starts at idx and runs along b's last
 * dimension; the caller guarantees the alignment, as for
 * td_ir_let_vector.  CUDA: `*(uint4 *)&B_ptr[flat] = name;`; TIRx:
 * `B[i, T.ramp(j, 1, n)] = name[T.ramp(0, 1, n)]`.
 */
TD_API void td_ir_store_vector(td_ir *ir, const td_ir_buf *b, int n,
                               td_expr *const *idx, const td_var *v);
/*
 * Converts two consecutive elements of src (starting at sidx, along its
 * last dimension) into two consecutive elements of dst with one paired
 * conversion: float32 <-> float16 and float32 <-> bfloat16 (CUDA
 * __float22half2_rn, __half22float2, __float22bfloat162_rn,
 * __bfloat1622float2).  The caller guarantees alignment to the pair's size
 * on both sides.  TD_EINVAL for other dtype pairs.
 */
TD_API void td_ir_cast_pair(td_ir *ir, const td_ir_buf *dst, int dn,
                            td_expr *const *didx, const td_ir_buf *src,
                            int sn, td_expr *const *sidx);
/* A comment line, printed in both languages. */
TD_API void td_ir_comment(td_ir *ir, const char *text);

/* ---- PTX loads and stores of containers -------------------------------- */

/* The cache hints a PTX load may carry (copy's config values), each with
 * its PTX spelling ("L1::no_allocate", "L2::evict_first", "L2::256B"). */
typedef enum td_ptx_l1 {
    TD_PTX_L1_NONE,
    TD_PTX_L1_EVICT_NORMAL,
    TD_PTX_L1_EVICT_UNCHANGED,
    TD_PTX_L1_EVICT_FIRST,
    TD_PTX_L1_EVICT_LAST,
    TD_PTX_L1_NO_ALLOCATE,
    TD_PTX_L1_COUNT
} td_ptx_l1;

typedef enum td_ptx_l2 {
    TD_PTX_L2_NONE,
    TD_PTX_L2_EVICT_FIRST,
    TD_PTX_L2_EVICT_LAST,
    TD_PTX_L2_EVICT_NORMAL,
    TD_PTX_L2_COUNT
} td_ptx_l2;

typedef enum td_ptx_prefetch {
    TD_PTX_PREFETCH_NONE,
    TD_PTX_PREFETCH_64B,
    TD_PTX_PREFETCH_128B,
    TD_PTX_PREFETCH_256B,
    TD_PTX_PREFETCH_COUNT
} td_ptx_prefetch;

/* The PTX spelling of a hint ("" for NONE, NULL out of range), and the
 * hint a spelling names (0, or TD_ENOENT). */
TD_API const char *td_ptx_l1_name(td_ptx_l1 h);
TD_API const char *td_ptx_l2_name(td_ptx_l2 h);
TD_API const char *td_ptx_prefetch_name(td_ptx_prefetch h);
TD_API int td_ptx_l1_parse(const char *s, td_ptx_l1 *out);
TD_API int td_ptx_l2_parse(const char *s, td_ptx_l2 *out);
TD_API int td_ptx_prefetch_parse(const char *s, td_ptx_prefetch *out);

/*
 * One PTX access of `lanes` containers of `bits` bits each, moving bits,
 * not values (TVM's copy_ptx_form): 8 or 16 bits with one lane (.u8,
 * .u16), 32 bits with 1, 2, 4 or 8 lanes (.u32, .v2/.v4/.v8.u32; the 256
 * bits of .v8 only in global memory).
 *
 * The memory side is buffer `mem` of the call (scope global or shared*),
 * at the element with logical indices idx[0..n) (the printers map it
 * through the buffer's layout and swizzle, as any access); the caller
 * guarantees the alignment (bits * lanes / 8 bytes) and that the lanes'
 * bytes are consecutive there.  The register side is `regs`, a local
 * buffer of the call or a scratch array, viewed as containers of `bits`
 * (its element size must divide the container, or equal it), from
 * container `word` on.  Shared addresses go through cvta (a 32-bit shared
 * address), global ones are generic pointers.
 *
 * CUDA: a call of a helper function in the prelude, one per distinct
 * instruction (td_ptx_ld_global_nc_v4_u32(...)), whose body is the
 * instruction in `asm volatile(... : "memory")` under __CUDA_ARCH__ and a
 * memcpy of the same bytes otherwise (a host build of the program runs
 * it); TIRx: TVM's positional T.ptx.ld(...) / T.ptx.st(...).
 */
typedef struct td_ptx_access {
    const td_ir_buf *mem;
    int n;
    td_expr *const *idx;
    /* Instead of idx (n ignored) when not NULL: the address as an element
     * offset from the buffer's start in storage, the caller having
     * applied the layout and swizzle (TIRx prints it as a byte offset,
     * T.ptr_byte_offset). */
    td_expr *offset;
    int bits;                 /* container width: 8, 16 or 32 */
    int lanes;                /* 1, 2, 4 or 8 (32-bit containers only) */
    const td_ir_buf *regs;
    td_expr *word;            /* the first container of regs */
    /* Loads from global memory only (zero for everything else): */
    bool nc;                  /* .nc: the read-only path */
    td_ptx_l1 l1;
    td_ptx_l2 l2;             /* only on a 256-bit load */
    td_ptx_prefetch prefetch;
    /* The untyped form .bN instead of .uN (the same bits moved; TVM's
     * permute_layout writes ld.shared.b32 / st.shared.b32). */
    bool untyped;
} td_ptx_access;

/* ld.SPACE[.nc][.L1::..][.L2::evict_..][.L2::NB].TAIL {regs}, [mem] */
TD_API void td_ir_ptx_ld(td_ir *ir, const td_ptx_access *a);
/* st.SPACE.TAIL [mem], {regs}; the hints must be absent. */
TD_API void td_ir_ptx_st(td_ir *ir, const td_ptx_access *a);

/*
 * ldmatrix / stmatrix .sync.aligned.m8n8.x{num}[.trans].shared.b16: a
 * warp-collective move of num 8x8 matrices of 16-bit elements between
 * shared memory (each lane gives the address of one 8-element row: lanes
 * 8i..8i+7 the rows of matrix i) and num 32-bit registers per lane (two
 * elements each).  `mem` is a shared buffer of 16-bit elements, `offset`
 * this lane's row as an element offset from its start in storage (layout
 * and swizzle applied by the caller; 16-byte aligned); `regs` a local
 * buffer or scratch viewed as 32-bit containers from `word`.  Every lane
 * of the warp must execute it (the caller's condition).  CUDA: a prelude
 * helper per instruction (the host half of a build without __CUDA_ARCH__
 * traps: one thread cannot stand in for a warp); TIRx: TVM's positional
 * T.ptx.ldmatrix / T.ptx.stmatrix.
 */
typedef struct td_ptx_matrix {
    const td_ir_buf *mem;
    td_expr *offset;
    int num;                  /* 1, 2 or 4 */
    bool trans;
    const td_ir_buf *regs;
    td_expr *word;
    /* Optional: the num words one by one (word is then ignored), for a
     * fragment whose words of one instruction are not consecutive. */
    td_expr *const *words;
} td_ptx_matrix;

TD_API void td_ir_ldmatrix(td_ir *ir, const td_ptx_matrix *m);
TD_API void td_ir_stmatrix(td_ir *ir, const td_ptx_matrix *m);

/*
 * cp.async.{ca,cg}.shared.global[.L2::NB] [dst], [src], size(, src_size):
 * an asynchronous copy of `bytes` (4, 8 or 16) bytes from global memory to
 * shared memory by the calling thread (.cg for 16 bytes, .ca otherwise,
 * as TVM spells it).  `dst` is a shared buffer of the call and
 * `dst_offset` the element offset in storage (layout and swizzle applied
 * by the caller); `src` a global buffer and `src_offset` likewise.  The
 * caller guarantees the alignment (`bytes`) of both addresses.  `pred`
 * (NULL: none) guards the copy: without zfill the instruction is skipped
 * where pred is 0 (@p); with zfill it is always issued and copies
 * pred ? bytes : 0 bytes, filling the rest with zeros (the src-size form).
 * Nothing waits: the caller commits the group and waits on it
 * (cp.async.commit_group, cp.async.wait_group) before reading the tile.
 * CUDA: a prelude helper per instruction, the PTX under __CUDA_ARCH__ and
 * a memcpy (memset for the zero fill) otherwise; TIRx: TVM's positional
 * T.ptx.cp(..., "async", "cg", "shared", "global", "", prefetch, pred).
 */
typedef struct td_ptx_cp_async {
    const td_ir_buf *dst;
    td_expr *dst_offset;
    const td_ir_buf *src;
    td_expr *src_offset;
    int bytes;
    td_ptx_prefetch prefetch;
    td_expr *pred;
    bool zfill;
} td_ptx_cp_async;

TD_API void td_ir_cp_async(td_ir *ir, const td_ptx_cp_async *c);

/* ---- warp-level matrix multiply-accumulate (mma.sync) --------------------- */

/*
 * The mma.sync.aligned.m16n8kK.row.col instructions the IR can issue (PTX
 * ISA "Warp-level matrix multiply-accumulate instructions"), one row of
 * td_mma_info each: TVM 0.27's four first, in its search order, then the
 * forms only tiledispatch registers (float16 accumulation, tf32, 8-bit
 * integers, 8-bit floats).
 */
typedef enum td_mma_kind {
    TD_MMA_M16N8K16_BF16,     /* .f32.bf16.bf16.f32, sm_80 */
    TD_MMA_M16N8K16_F16,      /* .f32.f16.f16.f32, sm_80 */
    TD_MMA_M16N8K8_BF16,      /* .f32.bf16.bf16.f32, sm_80 */
    TD_MMA_M16N8K8_F16,       /* .f32.f16.f16.f32, sm_75 */
    TD_MMA_M16N8K16_F16ACC,   /* .f16.f16.f16.f16, sm_80 */
    TD_MMA_M16N8K8_F16ACC,    /* .f16.f16.f16.f16, sm_75 */
    TD_MMA_M16N8K8_TF32,      /* .f32.tf32.tf32.f32, sm_80 */
    TD_MMA_M16N8K32_S8,       /* .s32.s8.s8.s32, sm_80 */
    TD_MMA_M16N8K32_U8,       /* .s32.u8.u8.s32, sm_80 */
    TD_MMA_M16N8K32_E4M3,     /* .f32.e4m3.e4m3.f32, sm_89 */
    TD_MMA_M16N8K32_E5M2,     /* .f32.e5m2.e5m2.f32, sm_89 */
    TD_MMA_KIND_COUNT
} td_mma_kind;

/*
 * What one instruction is.  Per lane (g = lane / 4, t = lane % 4, k_pack
 * = 32 / the A/B element bits, kHi < k / (4 * k_pack)): A word rM + 2*kHi
 * holds elements p < k_pack of row g + 8*rM, columns k_pack*t + p +
 * 4*k_pack*kHi; B word kHi holds rows k_pack*t + p + 4*k_pack*kHi of
 * column g; C / D register 2*rM + rN is row g + 8*rM, column 2*t + rN
 * (cd_packed: word rM holds columns 2*t and 2*t + 1, the lower first).
 */
typedef struct td_mma_info {
    const char *name;       /* "m16n8k16.f16": the plan's row name */
    const char *shape;      /* "m16n8k16" */
    int m, n, k;
    td_dtype ab;            /* A and B elements in memory (float32: tf32) */
    td_dtype cd;            /* C and D elements */
    const char *ab_ptx;     /* "f16", "bf16", "tf32", "s8", "u8", "e4m3" */
    const char *cd_ptx;     /* "f32", "f16", "s32" */
    int k_pack;             /* A / B elements per 32-bit word */
    int a_words, b_words;   /* 32-bit words per lane */
    int cd_regs;            /* C (and D) registers per lane */
    bool cd_packed;         /* C / D registers are words of two elements */
    int sm;                 /* the oldest arch ptxas accepts it on */
} td_mma_info;

/* The row of kind k; NULL out of range. */
TD_API const td_mma_info *td_mma_info_of(td_mma_kind k);

/*
 * One warp-collective mma.sync: D = A * B + C on a 16 x n x k tile, every
 * lane of the warp executing it (the caller's condition).  The operands
 * are registers of local buffers of the call or scratch arrays, named by
 * their position in the lane's storage: a_words / b_words the 32-bit
 * words of A / B (dtype info->ab), c_regs / d_regs the elements of C / D
 * (dtype info->cd), or their 32-bit words where info->cd_packed; each
 * array has the info's count of expressions.  C and D may be the same
 * registers (accumulation in place).  CUDA: a prelude helper per kind
 * (td_ptx_mma_sync_aligned_m16n8k16_row_col_f32_f16_f16_f32) with the
 * instruction as inline PTX under __CUDA_ARCH__, and in a host build
 * against the CPU stand-in (TD_EMU) a call of its
 * td_emu_mma_m16n8k16_row_col_f32_f16_f16_f32 (the whole warp's product
 * from the 32 lanes' registers); another host build traps.  TIRx: TVM's
 * positional T.ptx.mma(d..., a..., b..., c..., "sync", "aligned",
 * "m16n8k16", "row", "col", "f32", "f16", "f16", "f32", "").
 */
typedef struct td_ptx_mma {
    td_mma_kind kind;
    const td_ir_buf *d, *a, *b, *c;
    td_expr *const *d_regs;
    td_expr *const *a_words;
    td_expr *const *b_words;
    td_expr *const *c_regs;
} td_ptx_mma;

TD_API void td_ir_mma(td_ir *ir, const td_ptx_mma *m);

/* ---- asynchronous copies and their synchronisation (sm_90) ------------ */

/*
 * The bulk copies of Hopper (TMA tensor loads and stores, the cluster
 * copy) and the barriers and fences around them.  An async node issues,
 * it never waits: whoever builds it also builds the protocol (an mbarrier
 * armed with expect_tx and waited on for a load or a cluster copy; a bulk
 * group committed and waited on before a stored tile is reused).
 *
 * CUDA: each node is a call of a prelude helper (td_mbar_init,
 * td_tma_load_2d, ...) whose body is the PTX under __CUDA_ARCH__ and, in
 * a host build (the CPU stand-in), a call of the stand-in's td_emu_*
 * function (the cluster's nodes, mapa, the cluster copy, cluster sync and
 * a multicast load, only under TD_EMU: the stand-in runs a cluster's CTAs
 * together, another host build traps), or nothing for a fence or a bulk
 * group.  TIRx: the forms TVM prints (T.ptx.mbarrier,
 * T.cuda.mbarrier_wait, T.ptx.fence, positional T.ptx.cp, T.ptx.mapa,
 * T.ptx.prefetch).
 */

/* An address: element `offset` in storage (layout and swizzle applied by
 * the caller) of call buffer `buf`.  Shared operands go through cvta (a
 * 32-bit shared address) inside the helper. */
typedef struct td_ir_addr {
    const td_ir_buf *buf;
    td_expr *offset;
} td_ir_addr;

/*
 * A TMA tensor map the body uses (struct td_tmap: the planner's map,
 * model/tensor_map.h, copied).  A kernel passes each map by value as a
 * parameter; the IR keeps one per distinct encode (buffer, dtype, dims,
 * strides, box, element strides, interleave, swizzle, L2 promotion, OOB
 * fill, byte offset), named GLOBAL_tensormap, then GLOBAL_tensormap_1 for
 * a second encode of the same buffer: asking again with an equal map
 * returns the same handle.  `global` is a global call buffer of the IR.
 * NULL (and the IR's error) on misuse or allocation failure.
 */
struct td_tmap;
typedef struct td_ir_tmap td_ir_tmap;
TD_API const td_ir_tmap *td_ir_tensor_map(td_ir *ir, const td_ir_buf *global,
                                          const struct td_tmap *spec);
/* How many maps the IR has, and map i's name (NULL out of range), in the
 * order they were first asked for. */
TD_API int td_ir_tensor_map_count(const td_ir *ir);
TD_API const char *td_ir_tensor_map_name(const td_ir *ir, int i);
/*
 * The maps as the kernel around the body needs them, into *out (allocated
 * through the allocator hook; "" when there is none).  CUDA: the kernel
 * parameters, "const __grid_constant__ CUtensorMap A_tensormap, ..." (the
 * prelude includes <cuda.h>); TIRx: TVM's host statements per map,
 * `A_tensormap: T.let[T.TensorMap()] = T.tvm_stack_alloca("tensormap", 1)`
 * and its T.tensormap_encode_tiled(...), one per line.  (The TIRx body
 * itself declares each map as TVM prints it, `A_tensormap =
 * T.TensorMap()`.)  0, TD_EINVAL, or TD_ENOMEM.
 */
TD_API int td_ir_print_tensor_maps(const td_ir *ir, td_lang lang, char **out);
/*
 * The maps as the host builds them (`tiledispatch tensor-maps`), into *out
 * (allocated through the allocator hook).  TD_TMAP_HOST_C: <cuda.h> and
 * <stdint.h>, then per map a static function
 *     CUresult NAME_encode(CUtensorMap *map, void *global_base)
 * (NAME the map's name, A_tensormap_encode) that encodes the map through
 * cuTensorMapEncodeTiled for the global buffer whose first element is at
 * global_base, adding the region's byte offset itself; it returns the
 * driver's result, or CUDA_ERROR_INVALID_VALUE for a misaligned address.
 * Link with -lcuda.  With no map, one comment line saying so.
 * TD_TMAP_HOST_JSON: one JSON array, an object per map: "name", "buffer"
 * (the global buffer), then the encode's fields (dtype, cu_dtype, rank,
 * global_dims, global_strides in bytes, box_dims, element_strides,
 * interleave, swizzle, l2_promotion, oob_fill as the driver's numbers,
 * cu_dtype the name of its data type enum,
 * base_byte_offset, coordinates of the first box), innermost dimension
 * first; "[]" with no map.  0, TD_EINVAL, or TD_ENOMEM.
 */
typedef enum td_tmap_host_form {
    TD_TMAP_HOST_C = 0,
    TD_TMAP_HOST_JSON = 1
} td_tmap_host_form;
TD_API int td_ir_print_tensor_map_host(const td_ir *ir, td_tmap_host_form form,
                                       char **out);

/* mbarrier.init.shared.b64 [bar], count (a shared uint64 element). */
TD_API void td_ir_mbar_init(td_ir *ir, td_ir_addr bar, td_expr *count);
/* mbarrier.arrive.expect_tx.shared.b64 _, [bar], bytes. */
TD_API void td_ir_mbar_arrive_expect_tx(td_ir *ir, td_ir_addr bar,
                                        td_expr *bytes);
/* Waits until the phase of parity `parity` (0 or 1) of bar completed:
 * mbarrier.try_wait.parity.shared::cta.b64 in a loop. */
TD_API void td_ir_mbar_wait(td_ir *ir, td_ir_addr bar, td_expr *parity);
/* fence.proxy.async.shared::cta: ordinary shared stores before it are
 * seen by later bulk copies (a TMA store, the cluster copy). */
TD_API void td_ir_fence_proxy_async(td_ir *ir);
/* fence.mbarrier_init.release.cluster: barrier inits visible to the
 * cluster (before a cluster sync). */
TD_API void td_ir_fence_mbarrier_init(td_ir *ir);
/* barrier.cluster.arrive.release.aligned + wait.acquire.aligned. */
TD_API void td_ir_cluster_sync(td_ir *ir);
/* cp.async.bulk.commit_group; cp.async.bulk.wait_group.read n (n a
 * constant 0..7: at most n of the thread's bulk groups still read their
 * shared source). */
TD_API void td_ir_bulk_commit(td_ir *ir);
TD_API void td_ir_bulk_wait_read(td_ir *ir, int n);
/* prefetch.tensormap [&map]. */
TD_API void td_ir_prefetch_tensormap(td_ir *ir, const td_ir_tmap *map);

/* The operation of a TMA store: a plain store or a reduction into global
 * memory (cp.reduce.async.bulk.tensor ... .OP). */
typedef enum td_tma_op {
    TD_TMA_STORE,
    TD_TMA_ADD,
    TD_TMA_MIN,
    TD_TMA_MAX,
    TD_TMA_INC,
    TD_TMA_DEC,
    TD_TMA_AND,
    TD_TMA_OR,
    TD_TMA_XOR,
    TD_TMA_OP_COUNT
} td_tma_op;
/* "" for TD_TMA_STORE, "add", "min", ...; NULL out of range. */
TD_API const char *td_tma_op_name(td_tma_op op);

/*
 * One TMA tensor copy of the box at `coords` (int32, innermost first, as
 * many as the map's rank) between global memory (through `map`) and the
 * shared tile at `smem` (16-byte aligned, 128 for a swizzled map).
 * Load: cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::
 * complete_tx::bytes[.multicast::cluster][.cta_group::N][.L2::cache_hint]
 * [smem], [map, {coords}], [mbar][, cta_mask][, policy], completing on
 * the shared uint64 `mbar`; `cta_mask` (uint16, NULL: unicast) multicasts
 * to the CTAs of the cluster it names; `cta_group` 0 (not spelled, sm_90)
 * or 1 / 2 (sm_100).  Store: cp[.reduce].async.bulk.tensor.Nd.global.
 * shared::cta[.OP].tile.bulk_group[.L2::cache_hint] [map, {coords}],
 * [smem][, policy]; mbar, cta_mask and cta_group must be absent.
 * `policy` (uint64, NULL: none) is an L2 cache policy (createpolicy's
 * value, e.g. evict_last 0x14F0000000000000).
 */
typedef struct td_ir_tma {
    const td_ir_tmap *map;
    td_expr *coords[5];
    td_ir_addr smem;
    td_ir_addr mbar;     /* load only */
    td_expr *cta_mask;   /* load only */
    int cta_group;       /* load only */
    td_expr *policy;
    td_tma_op op;        /* store only */
} td_ir_tma;
TD_API void td_ir_tma_load(td_ir *ir, const td_ir_tma *t);
TD_API void td_ir_tma_store(td_ir *ir, const td_ir_tma *t);

/*
 * A uint32 local `name` = mapa.shared::cluster.u32 of the shared address
 * `addr` into the CTA of rank `rank` (int32) of the cluster: the
 * shared::cluster address of the same offset in that CTA's shared memory.
 */
TD_API td_var *td_ir_mapa(td_ir *ir, const char *name, td_ir_addr addr,
                          td_expr *rank);
/*
 * cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
 * [dst], [src], bytes, [mbar]: `bytes` (int32, a multiple of 16) from the
 * shared tile at `src` (16-byte aligned) to the shared::cluster address
 * `dst`, completing on the cluster barrier address `mbar` (both uint32,
 * from td_ir_mapa).
 */
TD_API void td_ir_bulk_s2c(td_ir *ir, td_expr *dst, td_ir_addr src,
                           td_expr *bytes, td_expr *mbar);

/* ---- tensor memory (sm_100a) ------------------------------------------ */

/*
 * tcgen05.ld.sync.aligned.SHAPE.xNUM.b32 (tensor memory -> registers) and
 * tcgen05.st.sync.aligned.SHAPE.xNUM.b32 (registers -> tensor memory):
 * warp-collective, every thread of the warpgroup's 4 warps executes it;
 * warp w reaches lanes 32w..32w+31 only.  SHAPE (td_ir_ldst_shape):
 * .32x32b moves all 32 lanes, thread t of the warp lane 32w+t, NUM 32-bit
 * cells; .16x64b / .16x128b / .16x256b move 16 lanes of the warp's 32,
 * from lane `row` (0 or 16) of its slab, 2, 4 or 8 cells a lane per rep,
 * spread over the threads as the PTX ISA's fragment figures say.  Each
 * thread moves td_ir_tcgen05_regs(SHAPE, NUM) 32-bit words, word ..
 * word+n-1 of the local buffer `regs`, from or to column `column` (uint32
 * or int32, from the buffer's base address).  `tmem` is a call buffer of
 * scope tmem; its base address (what tcgen05.alloc wrote) is NAME_taddr, a
 * uint32 the kernel holds (TIRx: NAME_taddr, as TVM prints
 * allocated_addr[0]); the address the instruction takes is NAME_taddr +
 * (row << 16 | column).  NUM is a power of two up to 128 (.32x32b,
 * .16x64b), 64 (.16x128b) or 32 (.16x256b): 128 registers at most.  Both
 * are asynchronous: the caller waits (tcgen05.wait::ld before reading the
 * registers, tcgen05.wait::st before tensor memory is read or reused), as
 * TVM leaves it.  A zero-initialised shape and row are .32x32b, row 0.
 */
typedef enum td_ir_ldst_shape {
    TD_IR_LDST_32X32B,
    TD_IR_LDST_16X64B,
    TD_IR_LDST_16X128B,
    TD_IR_LDST_16X256B,
    TD_IR_LDST_SHAPE_COUNT
} td_ir_ldst_shape;
TD_API const char *td_ir_tcgen05_ldst_shape(td_ir_ldst_shape s); /* "16x64b" */
/* The 32-bit registers a thread moves for SHAPE.xNUM (NUM, 2 NUM or 4 NUM);
 * 0 for a shape or NUM the instruction does not take. */
TD_API int td_ir_tcgen05_regs(td_ir_ldst_shape s, int num);

typedef struct td_ir_tmem_ldst {
    const td_ir_buf *tmem;
    td_expr *column;
    int num;
    const td_ir_buf *regs;
    td_expr *word;
    td_ir_ldst_shape shape;
    int row;                /* lane of the warp's slab: 0, or 16 (.16x*b) */
} td_ir_tmem_ldst;
TD_API void td_ir_tcgen05_ld(td_ir *ir, const td_ir_tmem_ldst *t);
TD_API void td_ir_tcgen05_st(td_ir *ir, const td_ir_tmem_ldst *t);

/*
 * tcgen05.cp.cta_group::G.SHAPE[.MULTICAST] [taddr], sdesc (shared ->
 * tensor memory, issued by one thread, asynchronous: the caller orders it
 * with tcgen05.commit on an mbarrier, as TVM leaves it).  SHAPE is one of
 * td_ir_tcgen05_cp_shape's (PTX ISA 9.7.16.9.2): 128x256b and 128x128b
 * (row r into lane r), 4x256b (row r into lane 32r), 64x128b with
 * .warpx2::02_13 or .warpx2::01_23 and 32x128b with .warpx4 (replicated
 * into warp pairs / all four warps; td_ir_tcgen05_cp_multicast names the
 * qualifier).  The destination is `column`, an offset from the tmem
 * buffer's base address NAME_taddr: the 32-bit column plus the lane in
 * bits 16-31.  The source is the shared matrix at `smem` (16-byte
 * aligned) that the shared memory descriptor names: 8-row core matrices
 * of 16-byte units, 8-row groups `sbo` 16-byte units apart, a 256-bit
 * row's second unit `lbo` units after its first (0 for 128-bit rows; 1
 * with a swizzle), and `swizzle` TVM's mode (0 none, 1, 2, 3: the 32-,
 * 64- and 128-byte swizzles).  `cta_group` is 1 or 2 (0 reads as 1): 2 is
 * the CTA-pair form, issued by one CTA of the pair for both.  `desc` names
 * the descriptor in TIRx (TVM encodes one per (lbo, sbo, swizzle) at
 * shared address 0 and patches the start address per copy); `first`
 * makes the TIRx printer encode it.
 */
typedef enum td_ir_cp_shape {
    TD_IR_CP_128X256B,
    TD_IR_CP_128X128B,
    TD_IR_CP_4X256B,
    TD_IR_CP_64X128B_02_13,
    TD_IR_CP_64X128B_01_23,
    TD_IR_CP_32X128B_WARPX4,
    TD_IR_CP_SHAPE_COUNT
} td_ir_cp_shape;
TD_API const char *td_ir_tcgen05_cp_shape(td_ir_cp_shape s); /* "128x256b" */
/* The shape's multicast qualifier ("warpx4"), "" when it has none. */
TD_API const char *td_ir_tcgen05_cp_multicast(td_ir_cp_shape s);

typedef struct td_ir_tmem_cp {
    const td_ir_buf *tmem;
    td_expr *column;
    td_ir_addr smem;
    td_ir_cp_shape shape;
    int lbo, sbo;           /* 16-byte units, below 2^14 */
    int swizzle;            /* 0..3 */
    int cta_group;          /* 0 or 1: cta_group::1; 2: cta_group::2 */
    const char *desc;       /* TIRx descriptor name (the IR copies it) */
    bool first;
} td_ir_tmem_cp;
TD_API void td_ir_tcgen05_cp(td_ir *ir, const td_ir_tmem_cp *c);

/*
 * tcgen05.mma (sm_100a): one thread issues a matrix product of shared
 * (or tensor-memory) operands into a float32 accumulator in tensor
 * memory, asynchronously (the caller commits it with tcgen05.commit and
 * waits on the barrier before reading the accumulator, as TVM leaves it).
 *
 * The shared operands are named by 64-bit shared memory descriptors (PTX
 * ISA "Shared memory descriptor"): start address >> 4 in bits 0-13, the
 * leading dimension byte offset >> 4 (`ldo`) in 16-29, the stride
 * dimension byte offset >> 4 (`sdo`) in 32-45, the fixed 0b001 at 46, the
 * layout type in 61-63 from TVM's swizzle mode (0 none -> 0, 1 32-byte ->
 * 6, 2 64-byte -> 4, 3 128-byte -> 2).
 *
 * td_ir_smem_desc declares a uint64 local `name` (made unique) holding
 * the descriptor of the start of shared buffer `smem`; `uniform` makes its
 * low word warp-uniform (mov.b64 split, shfl.sync.idx from lane 0, join),
 * which a warp-scope caller needs before one elected lane reads it.  NULL
 * on misuse (ldo, sdo >= 2^14, swizzle outside 0..3, a buffer that is not
 * this IR's shared call buffer).
 */
TD_API td_var *td_ir_smem_desc(td_ir *ir, const char *name,
                               const td_ir_buf *smem, int ldo, int sdo,
                               int swizzle, bool uniform);

/* How an MMA names one operand.  A shared operand (TVM's smem_desc
 * modes): ADD, a descriptor variable with `off16` added to its low word
 * without carry (hoist, local_hoist); ENCODE, a descriptor encoded for this
 * MMA from the buffer's start + off16 * 16 bytes (encode); RECOMPUTE, the
 * same value built inline from the address (recompute).  TMEM (operand A
 * only): A in tensor memory, the address NAME_taddr + (lane << 16) +
 * column of call buffer `tmem` (scope tmem; column in 32-bit cells), the
 * `tcgen05.mma ... [a_tmem]` form. */
typedef enum td_ir_desc_form {
    TD_IR_DESC_ADD,
    TD_IR_DESC_ENCODE,
    TD_IR_DESC_RECOMPUTE,
    TD_IR_DESC_TMEM
} td_ir_desc_form;

typedef struct td_ir_desc_operand {
    td_ir_desc_form form;
    const td_var *desc;     /* ADD: from td_ir_smem_desc */
    const td_ir_buf *smem;  /* ENCODE, RECOMPUTE: the shared buffer */
    int64_t off16;          /* 16-byte units from the buffer's start */
    int ldo, sdo, swizzle;  /* ENCODE, RECOMPUTE */
    const td_ir_buf *tmem;  /* TMEM: the tensor-memory buffer */
    int64_t lane, column;   /* TMEM: the operand's first lane and cell */
} td_ir_desc_operand;

/* The instruction kinds of the dense tcgen05.mma (kind::f16 for float16
 * and bfloat16, kind::tf32, kind::f8f6f4 for the 8-bit floats). */
typedef enum td_umma_kind {
    TD_UMMA_F16,
    TD_UMMA_TF32,
    TD_UMMA_F8F6F4,
    TD_UMMA_KIND_COUNT
} td_umma_kind;
TD_API const char *td_umma_kind_name(td_umma_kind k); /* "f16" */

/*
 * tcgen05.mma.cta_group::G.kind::KIND [d], a, b, idesc, {0, ...},
 * enable_input_d: D = A x B (+ D where enable_input_d is nonzero).  `tmem`
 * is the accumulator's call buffer (scope tmem, base address NAME_taddr,
 * as for tcgen05.ld); the address is NAME_taddr + (lane << 16) + column
 * (`lane`, `column` constants, the column in 32-bit cells).  `idesc` is the
 * instruction descriptor, `cta_group` 1 or 2 (4 or 8 zero
 * disable-output-lane words), `accum` the enable-input-d operand (int32;
 * nonzero accumulates).  `ws`: the weight-stationary form
 * tcgen05.mma.ws (cta_group 1 only), whose operands end with
 * enable_input_d and a zero column mask (0) instead of the
 * disable-output-lane words.  `a` may be a TD_IR_DESC_TMEM operand (A in
 * tensor memory: `[a_tmem]` instead of a descriptor); `b` is shared.
 */
/* The block-scaled kinds (tcgen05.mma...block_scale): kind::mxf8f6f4
 * (8-bit float data, float8_e8m0fnu scales, scale_vec::1X), kind::mxf4
 * (float4_e2m1fn data, e8m0 scales, 2X), kind::mxf4nvf4 (e2m1 data,
 * float8_e4m3fn scales, 4X). */
typedef enum td_umma_bs_kind {
    TD_UMMA_MXF8F6F4,
    TD_UMMA_MXF4,
    TD_UMMA_MXF4NVF4,
    TD_UMMA_BS_KIND_COUNT
} td_umma_bs_kind;
TD_API const char *td_umma_bs_kind_name(td_umma_bs_kind k); /* "mxf4" */
/* The scale vector size (1, 2, 4) of a block-scaled kind. */
TD_API int td_umma_bs_scale_vec(td_umma_bs_kind k);

typedef struct td_ir_umma {
    td_umma_kind kind;
    int cta_group;
    bool ws;
    const td_ir_buf *tmem;
    int64_t lane, column;
    td_ir_desc_operand a, b;
    uint32_t idesc;
    td_expr *accum;
    /* Block scaling (`bs`): tcgen05.mma.cta_group::G.kind::BS_KIND
     * .block_scale.scale_vec::VX [d], a, b, idesc, [sfa], [sfb], p, with
     * `kind` and `ws` unused.  The instruction descriptor is the uint32
     * local `idesc_var` (td_ir_idesc_block_scaled) or, when NULL, the
     * constant `idesc`; sfa and sfb are TD_IR_DESC_TMEM operands (the
     * scale factors' tensor-memory cells). */
    bool bs;
    td_umma_bs_kind bs_kind;
    const td_var *idesc_var;
    td_ir_desc_operand sfa, sfb;
} td_ir_umma;
TD_API void td_ir_tcgen05_mma(td_ir *ir, const td_ir_umma *m);

/*
 * The block-scaled instruction descriptor, encoded at run time into a
 * uint32 local (TVM's descI_local: T.cuda.tcgen05.
 * encode_instr_descriptor_block_scaled): the instruction's m, n, k, the
 * A / B / scale formats as the PTX descriptor spells them (a_format,
 * b_format bits 7-9 and 10-12, s_format bit 23), MN-major A / B (bits 15,
 * 16), sf ids 0.  `given` instead starts the local as `value` (a descriptor
 * the caller passed, TVM's descI; the shape and formats are then unused).  The dtypes, the scale factors'
 * first cells (sfa, sfb: TMEM operands) and cta_group are what TVM's TIRx
 * spells.  NULL on misuse.
 */
typedef struct td_ir_idesc_bs {
    int m, n, k;
    int a_format, b_format, s_format;
    bool trans_a, trans_b;
    int cta_group;
    td_dtype a, b, sfa_dtype, sfb_dtype;
    td_ir_desc_operand sfa, sfb;
    bool given;
    uint32_t value;
} td_ir_idesc_bs;
TD_API td_var *td_ir_idesc_block_scaled(td_ir *ir, const char *name,
                                        const td_ir_idesc_bs *d);
/* The sf_id patch of a block-scaled descriptor local (TVM's
 * T.cuda.runtime_instr_desc): bits 29-30 (A's scale factor id) and 4-5
 * (B's) set to sf_id (0..3), where several K steps share one 32-bit
 * scale-factor cell. */
TD_API void td_ir_idesc_sf_id(td_ir *ir, const td_var *idesc, int sf_id);

/* ---- printing -------------------------------------------------------- */

/*
 * Prints the body in `lang` after simplification (constant index arithmetic
 * folded; in CUDA, loops of extent 1 dropped).  The CUDA prelude (includes,
 * helper functions the body requested, each once, in a fixed order) is
 * returned separately so a program can put it at file scope.  *body and
 * *prelude (either may be NULL when not wanted) are NUL-terminated and
 * allocated through the allocator hook; release them with td_free().
 * *prelude is "" when nothing is needed.
 * `indent` is the starting indentation level of the body (2 spaces each).
 */
TD_API int td_ir_print(const td_ir *ir, td_lang lang, int indent, char **body,
                       char **prelude);

#ifdef __cplusplus
}
#endif
#endif
