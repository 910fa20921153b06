/*
 * Internal structures of the lowered IR (codegen/), shared by the builder
 * (ir.c), the simplifier (simplify.c), the line writer (writer.c) and the
 * two printers.  Not installed.
 */
#ifndef TILEDISPATCH_CODEGEN_INTERNAL_H
#define TILEDISPATCH_CODEGEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "td_internal.h"
#include "tiledispatch/td_ir.h"

/* Deepest nesting of for/if blocks a body may have. */
#define TD__IR_MAX_DEPTH 64
/* Longest name (buffer, variable, extern function) the IR accepts. */
#define TD__IR_NAME_MAX 200
/* Most arguments of an extern call. */
#define TD__IR_MAX_ARGS 64

/* ---- arena ------------------------------------------------------------- */

/* A bump allocator: blocks from td__malloc, freed all at once.  `err` is
 * sticky (TD_ENOMEM after the first failure). */
typedef struct td__arena_blk td__arena_blk;
typedef struct td__arena {
    td__arena_blk *head;
    td__arena_blk *fixed;  /* the seeded first block (not ours to free) */
    int err;
} td__arena;

/* Makes `bytes` at `mem` (aligned for max_align_t, living as long as the
 * arena) its first block, so that a small arena needs no malloc. */
void td__arena_seed(td__arena *a, void *mem, size_t bytes);
void *td__arena_alloc(td__arena *a, size_t n);     /* zeroed; NULL on error */
char *td__arena_strdup(td__arena *a, const char *s);
void td__arena_free(td__arena *a);

/* ---- nodes ------------------------------------------------------------- */

typedef enum td__ekind {
    TD__E_INT,     /* int32 index constant (td_int): the only kind folded */
    TD__E_CONST,   /* typed value constant */
    TD__E_VAR,
    TD__E_BIN,
    TD__E_COMBINE,
    TD__E_LOAD,
    TD__E_INTRIN,
    TD__E_CALL,
    TD__E_LANE,    /* lane i of a vector variable: var, i */
    TD__E_VALOP,   /* value arithmetic (td_value_op): valop, a, b */
    TD__E_MATH,    /* math function (td_math): math, a */
    TD__E_CAST,    /* a converted to dtype (td_cast): a */
    TD__E_PARAM,   /* a named scalar parameter (td_param): name */
    TD__E_F32X2,   /* packed f32x2 PTX (td_ptx_f32x2): xop, xrnd, args */
    TD__E_PAIR,    /* pair i of a vector variable (td_vec_pair): var, i */
    TD__E_SPLAT    /* a value in both lanes of a pair (td_pair_splat): a */
} td__ekind;

/* The op and rounding names td_ptx_f32x2 accepts, indexed by xop / xrnd;
 * the fma (3 operands) is the last op. */
#define TD__F32X2_NOPS 4
#define TD__F32X2_NRNDS 4
#define TD__F32X2_FMA 3
extern const char *const td__f32x2_ops[TD__F32X2_NOPS];
extern const char *const td__f32x2_rnds[TD__F32X2_NRNDS];

/* What a typed constant stands for, so printers can spell identities. */
typedef enum td__ident {
    TD__IDENT_NONE,
    TD__IDENT_ZERO,    /* the identity of sum */
    TD__IDENT_LOWEST,  /* lowest finite value: the identity of max */
    TD__IDENT_HIGHEST  /* highest finite value: the identity of min */
} td__ident;

struct td_var {
    const td_ir *owner;
    const char *name;   /* unique within the IR */
    td_dtype dtype;
    bool is_loop;
    int lanes;          /* > 1: a vector variable (td_ir_let_vector) */
    int id;             /* 0..nvars-1 */
};

struct td_ir_buf {
    const td_ir *owner;
    const char *name;   /* as given (call buffers) or uniquified (scratch) */
    const char *scope;
    td_dtype dtype;
    bool scratch;
    int ndim;
    int64_t shape[TD_MAX_RANK];
    int64_t stride[TD_MAX_RANK]; /* row-major element strides */
    /* td_ir_buffer_swizzle: the CUDA printer XORs bits [m+s, m+s+b) of
     * the flat index into bits [m, m+b); b == 0: none. */
    int swz_bits, swz_base, swz_shift;
    /* td_ir_buffer_layout: dim d owns iters [lay_sep[d], lay_sep[d+1]) of
     * lay_ext/lay_str (outermost first), lay_off added; lay_n == 0: the
     * row-major strides above. */
    int lay_n;
    int64_t lay_ext[TD_MAX_LAYOUT_ITERS], lay_str[TD_MAX_LAYOUT_ITERS];
    int lay_sep[TD_MAX_RANK + 1];
    int64_t lay_off;
    td_ir_buf *next;
};

struct td_expr {
    td__ekind kind;
    td_dtype dtype;
    bool is_void;        /* a statement-only intrinsic (barriers) */
    bool impure;         /* contains an extern call: never dropped */
    /* TD__E_VALOP: valop (a td_valop), a, b.  TD__E_MATH: math (a
     * td_mathfn), a.  TD__E_CAST: a.  TD__E_F32X2: xop, xrnd (indices into
     * td__f32x2_ops / td__f32x2_rnds), args.  Bytes, to keep the node as
     * small as the reductions had it. */
    uint8_t valop, math, xop, xrnd;
    /* TD__E_INT: i.  TD__E_CONST: one of f / i / u by dtype, ident. */
    int64_t i;
    uint64_t u;
    double f;
    td__ident ident;
    /* TD__E_VAR */
    const td_var *var;
    /* TD__E_BIN: op, a, b.  TD__E_COMBINE: comb, a, b. */
    td_binop op;
    td_combiner comb;
    const td_expr *a, *b;
    /* TD__E_LOAD (lanes > 1: a vector load).  Any other kind with
     * lanes 2 is a pair (td__is_pair): TD__E_PAIR, TD__E_SPLAT and the
     * VALOP and CAST over pairs. */
    const td_ir_buf *buf;
    int lanes;
    /* TD__E_LOAD (indices), TD__E_INTRIN and TD__E_CALL (arguments) */
    int nargs;
    const td_expr *const *args;
    /* TD__E_INTRIN: intrin (and comb + width for warp reduce) */
    td_intrin intrin;
    int width;
    /* TD__E_CALL, TD__E_PARAM */
    const char *name;
};

typedef enum td__skind {
    TD__S_FOR,
    TD__S_IF,
    TD__S_STORE,
    TD__S_EVAL,
    TD__S_LET,
    TD__S_ASSIGN,
    TD__S_COMMENT,
    TD__S_CAST_PAIR,
    TD__S_VEC_LET,  /* var (lanes > 1) from nidx values: lanes or pairs */
    TD__S_VEC_STORE, /* buf, nidx, idx: the vector variable var at once */
    TD__S_PTX,      /* buf, nidx, idx (memory side), ptx (the rest) */
    TD__S_ASYNC,    /* async: a bulk copy or its synchronisation */
    TD__S_MMA,      /* mma: one warp-level mma.sync (ir_mma.c) */
    TD__S_UMMA      /* umma: a descriptor or a tcgen05.mma (ir_umma.c) */
} td__skind;

/* The async nodes (ir_async.c), printed by print_cuda_async.c and
 * print_tirx_async.c. */
typedef enum td__akind {
    TD__A_MBAR_INIT,
    TD__A_MBAR_EXPECT_TX,
    TD__A_MBAR_WAIT,
    TD__A_FENCE_PROXY_ASYNC,
    TD__A_FENCE_MBAR_INIT,
    TD__A_CLUSTER_SYNC,
    TD__A_BULK_COMMIT,
    TD__A_BULK_WAIT_READ,
    TD__A_PREFETCH_TMAP,
    TD__A_TMA_LOAD,
    TD__A_TMA_STORE,
    TD__A_MAPA,
    TD__A_BULK_S2C,
    TD__A_TCGEN05_LD,
    TD__A_TCGEN05_ST,
    TD__A_TCGEN05_CP,
    TD__A_COUNT
} td__akind;

/* The printers key an async node's kind in 4 bits (key & 15). */
_Static_assert(TD__A_COUNT <= 16, "async node kinds overflow their 4-bit key");

/* An address of the IR: call buffer buf, storage element offset. */
typedef struct td__addr {
    const td_ir_buf *buf;
    const td_expr *offset;
} td__addr;

/* A tensor map of the IR (td_ir_tensor_map), in first-use order. */
struct td_ir_tmap {
    const char *name;             /* GLOBAL_tensormap[_k] */
    const td_ir_buf *global;
    const struct td_tmap *spec;   /* the IR's copy */
    struct td_ir_tmap *next;
};

typedef struct td__async {
    td__akind kind;
    /* MBAR_*: a = the barrier.  TMA: a = the shared tile, mbar = the
     * load's barrier.  MAPA: a = the address mapped.  BULK_S2C: a = the
     * source tile. */
    td__addr a, mbar;
    /* MBAR_INIT count, EXPECT_TX bytes, MBAR_WAIT parity, MAPA rank,
     * BULK_S2C bytes */
    const td_expr *value;
    int n;                        /* BULK_WAIT_READ */
    const td_ir_tmap *map;        /* PREFETCH_TMAP, TMA_* */
    const td_expr *coords[5];     /* TMA_*: map->spec's rank of them */
    int rank;
    const td_expr *cta_mask, *policy;
    int cta_group;
    td_tma_op op;
    td_var *var;                  /* MAPA: the uint32 it declares */
    const td_expr *dst, *cbar;    /* BULK_S2C: the mapped addresses */
    /* TCGEN05_LD/ST: a = the tmem buffer and the 32-bit column from its
     * base; td_ir_tcgen05_regs(shape, num) registers from word `word` of
     * the local buffer regs. */
    const td_ir_buf *regs;
    const td_expr *word;
    int num;
    td_ir_ldst_shape shape;       /* TCGEN05_LD/ST */
    int row;                      /* TCGEN05_LD/ST: lane of the warp's slab */
    /* TCGEN05_CP: a = the tmem buffer and address offset, mbar = the
     * shared source; num = the shape (td_ir_cp_shape); lbo, sbo the
     * descriptor's 16-byte strides, swizzle its mode (0..3); cta_group 1
     * or 2; desc its TIRx name, encoded where first. */
    int lbo, sbo, swizzle;
    const char *desc;
    bool first;
} td__async;

/* The helper a node calls (its key: kind, rank and the qualifiers that
 * change the instruction; a tcgen05.ld/st node's log2(num) and shape where
 * a TMA store keeps its operation), below TD__ASYNC_KEYS. */
#define TD__ASYNC_KEYS (1u << 16)
unsigned td__async_key(const td__async *a);

/* A PTX container access (td_ir_ptx_ld / td_ir_ptx_st, ir_ptx.c). */
typedef struct td__ptx {
    bool store;
    bool shared;          /* the memory side's space: shared, else global */
    bool matrix, trans;   /* ldmatrix / stmatrix (lanes = num, bits 32) */
    const td_expr *offset; /* the address as a storage offset, or NULL */
    int bits, lanes;
    const td_ir_buf *regs;
    const td_expr *word;
    const td_expr *const *words; /* matrix: word i, or NULL: word + i */
    bool nc;
    td_ptx_l1 l1;
    td_ptx_l2 l2;
    td_ptx_prefetch prefetch;
    bool untyped;         /* .bN rather than .uN */
    /* cp.async (td_ir_cp_async): the memory side (buf, offset) is the
     * shared destination; src / src_offset the global source; the size is
     * bits * lanes / 8 (32-bit containers, 1, 2 or 4 lanes); pred the
     * guard (NULL: none), which zfill turns into the src-size operand. */
    bool cp_async, zfill;
    const td_ir_buf *src;
    const td_expr *src_offset;
    const td_expr *pred;
} td__ptx;

/* An mma.sync (td_ir_mma, ir_mma.c): the kind and, per operand, the
 * buffer and the info's count of register positions (D, A, B, C). */
typedef struct td__mma {
    td_mma_kind kind;
    const td_ir_buf *buf[4];
    const td_expr *const *reg[4];
} td__mma;
enum { TD__MMA_D, TD__MMA_A, TD__MMA_B, TD__MMA_C };

/* A tcgen05.mma statement (ir_umma.c): a descriptor's declaration (DESC:
 * var, smem, ldo, sdo, swizzle, uniform) or the instruction (MMA: m, with
 * ENCODE operands' TIRx names in enc[]). */
typedef enum td__umma_what {
    TD__UMMA_DESC,   /* a shared memory descriptor's declaration */
    TD__UMMA_MMA,    /* the instruction */
    TD__UMMA_IDESC,  /* a block-scaled instruction descriptor local */
    TD__UMMA_SF_ID   /* its sf_id patch */
} td__umma_what;

typedef struct td__umma {
    td__umma_what what;
    bool mma;
    td_var *var;
    const td_ir_buf *smem;
    int ldo, sdo, swizzle;
    bool uniform;
    td_ir_umma m;
    const char *enc[2];
    td_ir_idesc_bs idesc;  /* IDESC */
    const td_var *patched; /* SF_ID: the local */
    int sf_id;
} td__umma;

/* The helper function's key: everything but the operands (what makes the
 * instruction), as a number below TD__PTX_KEYS. */
#define TD__PTX_KEYS (1 << 19)
unsigned td__ptx_key(const td__ptx *x);
void td__ptx_unkey(unsigned key, td__ptx *x);
/* "ld.global.nc.L1::no_allocate.v4.u32" */
void td__ptx_chain(td_buf *o, const td__ptx *x);
/* "td_ptx_ld_global_nc_L1__no_allocate_v4_u32" */
void td__ptx_helper_name(td_buf *o, const td__ptx *x);
/* The helper function's text (print_cuda_prelude.c). */
void td__ptx_helper(td_buf *o, unsigned key);

typedef struct td__stmt td__stmt;
struct td__stmt {
    td__skind kind;
    td__stmt *next;
    /* FOR: var, extent, loop, body.  LET / ASSIGN: var, value. */
    td_var *var;
    const td_expr *extent;
    td_loop_kind loop;
    td__stmt *body;
    /* IF: cond, body (then), orelse */
    const td_expr *cond;
    td__stmt *orelse;
    /* STORE: buf, nidx, idx, value.  EVAL: value. */
    const td_ir_buf *buf;
    int nidx;
    const td_expr *const *idx;
    const td_expr *value;
    /* COMMENT */
    const char *text;
    /* VEC_LET: var, nvals values (var->lanes scalars or var->lanes / 2
     * pairs) */
    int nvals;
    const td_expr *const *vals;
    /* CAST_PAIR: buf, nidx, idx (the destination pair) and value: the
     * source pair as a load (lanes 2) that no printer spells as one. */
    /* PTX: the access's other parts. */
    const td__ptx *ptx;
    /* ASYNC */
    const td__async *async;
    /* MMA */
    const td__mma *mma;
    /* UMMA */
    const td__umma *umma;
};

/* A name the IR handed out, to keep names unique. */
typedef struct td__name td__name;
struct td__name {
    const char *s;
    unsigned hash;
    td__name *next;   /* in the same bucket */
};

#define TD__IR_NAME_BUCKETS 64
#define TD__IR_FIRST_BLOCK 4096

/* The words no variable may be called (ir.c), sorted as strcmp sorts
 * them: the IR searches them by halves. */

/* A scalar parameter the IR refers to (td_param): its name is taken. */
typedef struct td__param td__param;
struct td__param {
    const char *name;
    td_dtype dtype;
    td__param *next;
};

/* One open block of the builder. */
typedef struct td__frame {
    td__stmt *owner;     /* NULL for the root */
    bool in_else;
    td__stmt **tail;     /* where the next statement goes */
} td__frame;

struct td_ir {
    td__arena arena;
    int status;
    td__stmt *root;
    int depth;           /* open blocks above the root */
    td_ir_buf *bufs;     /* declaration order */
    td_ir_buf **bufs_tail;
    td__name *names[TD__IR_NAME_BUCKETS];
    td__param *params;
    td_ir_tmap *tmaps;   /* td_ir_tensor_map, first-use order */
    int nvars;
    /* td_ir_new clears what precedes `stack`; a frame above the root is
     * written when its block opens. */
    td__frame stack[TD__IR_MAX_DEPTH + 1];
    /* The arena's first block, allocated with the IR: a small call's IR
     * costs one malloc. */
    max_align_t first_block[TD__IR_FIRST_BLOCK / sizeof(max_align_t)];
};

/* A pair: two lanes of a float16 / bfloat16 (or, as a conversion's
 * operand, float32) vector, an expression only pair arithmetic, pair
 * conversion and td_ir_let_vector_of take. */
static inline bool td__is_pair(const td_expr *e)
{
    return e->kind != TD__E_LOAD && e->lanes == 2;
}

/* What ir.c shares with ir_vec.c (the vector builders): its sticky
 * failure, liveness test, node and variable constructors, the statement
 * appender, and a checked copy of a buffer access's indices. */
void td__ir_fail(td_ir *ir, int code);
bool td__ir_live(td_ir *ir);
td_expr *td__ir_expr(td_ir *ir, td__ekind kind, td_dtype t);
td__stmt *td__ir_stmt(td_ir *ir, td__skind kind);
td_var *td__ir_var(td_ir *ir, const char *name, td_dtype t);
void td__ir_append(td_ir *ir, td__stmt *s);
bool td__ir_stmt_operand(td_ir *ir, const td_expr *e);
const td_expr *const *td__ir_idx(td_ir *ir, const td_ir_buf *b, int n,
                                 td_expr *const *idx);
/* ... and with ir_expr.c (the expression builders): its allocator, dtype
 * and identifier checks, operand checks (a value, which may be a pair;
 * a value that is not a pair), a checked copy of an operand array
 * (impure when one operand is) and a buffer access check. */
void *td__ir_alloc(td_ir *ir, size_t n);
bool td__ir_valid_dtype(td_dtype t);
bool td__ir_is_ident(const char *s);
bool td__ir_value_operand(td_ir *ir, const td_expr *e);
bool td__ir_operand(td_ir *ir, const td_expr *e);
const td_expr *const *td__ir_copy_args(td_ir *ir, int n,
                                       td_expr *const *args, bool *impure);
bool td__ir_buf_access(td_ir *ir, const td_ir_buf *b, int n,
                       td_expr *const *idx);

/* `base`, or `base_1`, `base_2`, ... whichever name is free first, taken
 * for good (ir.c); NULL on failure (the IR's error is set). */
const char *td__ir_unique_name(td_ir *ir, const char *base);

/* The dtypes a vector variable may have: every float and integer dtype of
 * 8 to 64 bits (ir_vec.c). */
bool td__vec_dtype(td_dtype t);

/* The paired conversion of td_ir_cast_pair from dtype `from` to `to`
 * ("__float22half2_rn", ...) and the CUDA pair type of float32, float16
 * and bfloat16 ("float2", "__half2", "__nv_bfloat162"): what both
 * printers spell (ir.c). */
const char *td__pair_fn(td_dtype from, td_dtype to);
const char *td__pair_type(td_dtype t);

/* ---- simplifier (simplify.c) ------------------------------------------ */

/* Node constructors in an arena (used at print time for flattened
 * indices); NULL on allocation failure or NULL operands. */
td_expr *td__mk_int(td__arena *a, int64_t v);
td_expr *td__mk_bin(td__arena *a, td_binop op, const td_expr *x,
                    const td_expr *y);

/*
 * Returns e with integer index arithmetic folded and the variables whose
 * zero[id] is set replaced by 0.  Unchanged subtrees are shared, new nodes
 * come from `a`; the IR itself is never modified.  NULL only when the
 * arena fails (a->err is set).
 */
const td_expr *td__fold(td__arena *a, const td_expr *e,
                        const unsigned char *zero);

/* True when e is an index constant; *v receives its value. */
bool td__is_int(const td_expr *e, int64_t *v);

/* ---- line writer (writer.c) ------------------------------------------- */

typedef struct td__writer {
    td_buf *out;
    td_lang lang;
    int base;        /* starting level */
    int depth;       /* levels opened by td__w_open */
    int unit;        /* spaces per level: 2 (CUDA) or 4 (TIRx) */
    bool fresh;      /* nothing written since the last open */
    int err;         /* TD_EINTERNAL on unbalanced use */
} td__writer;

void td__w_init(td__writer *w, td_buf *out, td_lang lang, int base);
/* One indented line. */
void td__w_line(td__writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A block header: the line plus " {" (CUDA) or ":" (TIRx); indents. */
void td__w_open(td__writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Between two blocks of one statement: "} else {" / "else:". */
void td__w_mid(td__writer *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Ends a block: "}" in CUDA; in TIRx a "pass" if the block was empty. */
void td__w_close(td__writer *w);
/* 0, TD_EINTERNAL if the depth did not return to 0, or the buffer's
 * error. */
int td__w_finish(td__writer *w);

/* ---- printers ---------------------------------------------------------- */

/* What a printer shares: the IR, the scratch arena for folded
 * expressions, the variables in scope and the dropped (zero) loop vars. */
typedef struct td__pctx {
    const td_ir *ir;
    td__arena arena;
    unsigned char *live;   /* nvars entries */
    unsigned char *zero;   /* nvars entries */
    td__writer w;
    td_buf body;
    td_buf prelude;
    int err;               /* first printer error (TD_EINVAL, TD_ENOMEM) */
} td__pctx;

int td__print_cuda(td__pctx *p);
int td__print_tirx(td__pctx *p);

/* The CUDA spelling of a value dtype ("float", "__half", "int8_t",
 * "long long", ...), for code that declares buffers the body uses. */
const char *td__cuda_type(td_dtype t);


/* What a printed CUDA body needs from its prelude (print_cuda.c records
 * it, print_cuda_prelude.c writes it). */
enum { TD__INC_CFLOAT, TD__INC_CSTDINT, TD__INC_FP16, TD__INC_BF16,
       TD__INC_FP8, TD__INC_FP4, TD__INC_CSTRING, TD__INC_CUDA,
       TD__INC_COUNT };
/* The include (TD__INC_*) the CUDA spelling of t needs (td__cuda_type),
 * -1 for none. */
int td__cuda_type_include(td_dtype t);

typedef struct td__cuda_needs {
    bool inc[TD__INC_COUNT];
    bool maxmin;                  /* td_max / td_min overloads */
    unsigned warp[3];             /* per combiner: bit log2(width) */
    bool intrin[TD_INTRIN_COUNT];
    unsigned f32x2[TD__F32X2_NOPS]; /* per op: bit rounding index */
    bool bits2[2];                /* pair <-> word helpers: f16, bf16 */
    int nptx;                     /* PTX access helpers, by td__ptx_key */
    unsigned ptx[64];
    int nasync;                   /* async helpers, by td__async_key */
    unsigned async[64];
    unsigned mma;                 /* mma.sync helpers: bit td_mma_kind */
    unsigned umma;                /* tcgen05.mma helpers (print_umma.c) */
    unsigned umma_bs;             /* block-scaled ones (print_umma.c) */
} td__cuda_needs;

/* The CUDA printer's context, shared by its statements (print_cuda.c) and
 * its expressions (print_cuda_expr.c). */
typedef struct td__cuda {
    td__pctx *p;
    td_buf line;                  /* the line being composed */
    td__cuda_needs need;          /* what the prelude must provide */
} td__cuda;

/* C precedence levels (higher binds tighter), the minprec of
 * td__cuda_expr. */
enum {
    TD__CP_LOWEST = 0,
    TD__CP_OR = 4,
    TD__CP_AND = 5,
    TD__CP_XOR = 7,
    TD__CP_BITAND = 8,
    TD__CP_EQ = 9,
    TD__CP_REL = 10,
    TD__CP_SHIFT = 11,
    TD__CP_ADD = 12,
    TD__CP_MUL = 13,
    TD__CP_UNARY = 14,
    TD__CP_PRIMARY = 16
};

/* Requests the header a dtype's spelling needs (print_cuda_expr.c, as
 * are the four below). */
void td__cuda_need_type(td__cuda *c, td_dtype t);
/* Keeps the first printer error in c->p->err. */
void td__cuda_fail(td__cuda *c, int code);
/* Writes the already folded e to o, parenthesised when it binds looser
 * than minprec. */
void td__cuda_expr(td__cuda *c, td_buf *o, const td_expr *e, int minprec);
/* Folds e and writes it to c->line at the lowest precedence. */
void td__cuda_top_expr(td__cuda *c, const td_expr *e);
/* NAME_ptr[flat] (NAME[i] for scratch), the row-major flat index built
 * and folded in the print arena. */
void td__cuda_access(td__cuda *c, td_buf *o, const td_ir_buf *b, int n,
                     const td_expr *const *idx);
/* The CUDA type of a vector variable of `lanes` lanes of t. */
const char *td__cuda_vec_type(td_dtype t, int lanes);

/* What the async printers (and the mma printer, print_mma.c) get from
 * the printer that calls them: the line being composed and the printer's
 * expression writer (folds e and writes it as an operand of a call, level
 * 0, of `+`, level 1, or of `*`, level 2), called back so that they need
 * none of its code. */
typedef struct td__async_out {
    td__pctx *p;
    td_buf *line;
    void (*expr)(void *ctx, td_buf *o, const td_expr *e, int level);
    void *ctx;
} td__async_out;

/* The CUDA call of an async node into o->line; records its helper in
 * need (print_cuda_async.c). */
void td__cuda_async(const td__async_out *o, const td__stmt *s,
                    td__cuda_needs *need);
/* The helpers' text, in key order (print_cuda_async.c). */
void td__cuda_async_prelude(td_buf *o, const td__cuda_needs *need);
/* The TIRx statement of an async node, written as lines through p->w
 * (print_tirx_async.c), and the body's declarations of the IR's maps. */
void td__tirx_async(const td__async_out *o, const td__stmt *s);
void td__tirx_tmap_decls(td__pctx *p);

/* The mma.sync node in each language (print_mma.c): the CUDA call into
 * o->line (recording its helper in need), the helpers' text in kind
 * order, and the TIRx statement into o->line. */
void td__cuda_mma(const td__async_out *o, const td__stmt *s,
                  td__cuda_needs *need);
void td__cuda_mma_prelude(td_buf *o, const td__cuda_needs *need);
void td__tirx_mma(const td__async_out *o, const td__stmt *s);

/* The tcgen05.mma statements in each language (print_umma.c), as the
 * mma.sync ones. */
void td__cuda_umma(const td__async_out *o, const td__stmt *s,
                   td__cuda_needs *need);
void td__cuda_umma_prelude(td_buf *o, const td__cuda_needs *need);
void td__tirx_umma(const td__async_out *o, const td__stmt *s);

/* Appends the includes and helpers of `need` to o (print_cuda_prelude.c). */
void td__cuda_prelude(td_buf *o, const td__cuda_needs *need);
/* The names of the combiners, "sum", "max", "min", by td_combiner. */
extern const char *const td__comb_names[3];
/* Appends the name of the packed f32x2 helper of op / rnd to o. */
void td__f32x2_name(td_buf *o, int op, int rnd);

#endif
