/*
 * The copy family (upstream copy/): the op table (one op, `copy`), the
 * checks its variants share (TVM's validate_copy_op, the scope pairs, the
 * refusals of layouts a copy cannot address) and the buffer declarations
 * every copy emitter makes.  Internal to variants/.
 */
#ifndef TILEDISPATCH_VARIANTS_COPY_H
#define TILEDISPATCH_VARIANTS_COPY_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "tiledispatch/td_module.h"

extern const td_op_desc td__copy_ops[];
extern const size_t td__copy_ops_count;

/* The call's source and destination regions and buffers (the op check has
 * made sure there is exactly one source region). */
const td_region *td__copy_src_region(const td_call *call);
const td_buffer *td__copy_src(const td_call *call);
const td_buffer *td__copy_dst(const td_call *call);

/*
 * The non-unit extents of a region, in order (upstream's squeeze: the
 * dims of extent 1 dropped); returns their number and fills dims[] with
 * the region's dimension of each.
 */
int td__copy_squeeze(const td_region *r, int64_t *ext, int *dims);

/*
 * TVM's validate_copy_op: one region source, both dtypes equal and the
 * squeezed extents equal in number and value.  False with
 * "validate_copy_op failed".
 */
bool td__copy_valid(const td_call *call, td_reason *why);

/* Whether the call's arch has tensor memory: sm_100a, sm_101a, sm_103a,
 * sm_110a (or their family forms, sm_100f ...). */
bool td__copy_tmem_arch(const td_call *call);

/* True when the buffer lives in shared memory (`shared*`), registers
 * (`local`) or global memory. */
bool td__copy_is_shared(const td_buffer *b);
bool td__copy_is_local(const td_buffer *b);
bool td__copy_is_global(const td_buffer *b);

/* TVM's match_scope: a pattern ending in `*` matches as a prefix. */
bool td__copy_scope_match(const char *pattern, const char *scope);

/*
 * A global operand must be a plain TileLayout: no swizzle and no thread
 * axis (global memory is one array of the kernel, not per thread).
 * False with "global operand A: a swizzled/thread layout is not supported
 * in global memory".
 */
bool td__copy_global_ok(const td_call *call, td_reason *why);

/*
 * Whether the layout of b has a thread axis (shard or replica iter, or an
 * offset); the first such axis's name in *axis.
 */
bool td__copy_thread_axis(const td_buffer *b, const char **axis);

/*
 * The storage offset (in elements, layout and swizzle applied) of the
 * element with row-major flat index `flat` of buffer b; false when b's
 * layout does not map it to one memory offset (thread axes, replicas).
 */
bool td__copy_phys(const td_buffer *b, int64_t flat, int64_t *off);

/* The row-major flat index in its buffer of the k-th element of region r
 * (row-major over the region's extents). */
int64_t td__copy_elem(const td_call *call, const td_region *r, int64_t k);

/*
 * Declares buffer b of the call in ir with its storage layout (the
 * layout's memory iters grouped by dimension, td_ir_buffer_layout; its
 * swizzle, td_ir_buffer_swizzle).  NULL with a reason in *why when the
 * layout cannot be addressed that way (replicas, thread axes, a grouping
 * that does not fit the shape).
 */
td_ir_buf *td__copy_declare(const td_call *call, int b, td_ir *ir,
                            td_reason *why);

/* IR pieces of the vectorised copies (copy_vec_auto.c): the sum over
 * iters[0..n) of v's mixed-radix digits (innermost last; the outermost
 * takes the rest unreduced, as TVM's SplitCoord) times their strides,
 * added to acc (NULL: nothing yet; the result is NULL when no term is
 * left); and TVM's element-index swizzle of m (ComposeLayout.apply: with
 * swizzle_inner m ^ ((m >> (p + a) & (2^s - 1)) << p), else
 * m ^ ((m >> p & (2^s - 1)) << (p + a)), written as the masked bits of m
 * moved: m ^ (m & (2^s - 1) << (p + a)) / 2^a and so on). */
td_expr *td__copy_split_expr(td_ir *ir, td_expr *acc, td_expr *v,
                             const td_iter *iters, int n);
/* 2^(bits the swizzle's XOR reads and below): m and m less multiples of
 * it swizzle alike (0: no swizzle). */
int64_t td__copy_swizzle_mod(const td_lay_swz *z);
/* The swizzle's row term under construction: the terms of a shared
 * offset that can reach the bits the XOR reads, as TVM prints only those.
 * A term whose stride is a multiple of mod never does.  Of the others,
 * when those that are not multiples of 2^b (b at most the lowest bit
 * read), non-negative, plus the constant's part below 2^b stay below 2^b
 * for every value of their digits, they are left out too: the rest is a
 * multiple of 2^b, so no carry from them crosses bit b.  Add the
 * offset's pieces with td__copy_low_split (the digits of v in 0..vmax, as
 * td__copy_split_expr sums them), td__copy_low_term (d in 0..dmax times
 * stride) and td__copy_low_const. */
#define TD_COPY_LOW_MAX 16
typedef struct td_copy_low_term {
    td_expr *t;            /* digit * stride */
    int64_t stride, dmax;  /* the digit is 0..dmax */
} td_copy_low_term;
typedef struct td_copy_low {
    int64_t mod;   /* td__copy_swizzle_mod; 0: no swizzle */
    int from;      /* the lowest bit the XOR reads */
    td_expr *all;  /* the terms whose stride is not a multiple of mod */
    td_copy_low_term terms[TD_COPY_LOW_MAX]; /* the same, one by one */
    int n;
    bool many;     /* more than TD_COPY_LOW_MAX of them: none left out */
    int64_t c;     /* the constant, modulo mod */
} td_copy_low;
void td__copy_low_init(td_copy_low *l, const td_lay_swz *z);
void td__copy_low_split(td_ir *ir, td_copy_low *l, td_expr *v, int64_t vmax,
                        const td_iter *iters, int n);
void td__copy_low_term(td_ir *ir, td_copy_low *l, td_expr *d, int64_t dmax,
                       int64_t stride);
void td__copy_low_const(td_copy_low *l, int64_t c);
/* TVM's swizzle of m, its row term from low (NULL: from m itself). */
td_expr *td__copy_swizzle_expr(td_ir *ir, td_expr *m, const td_copy_low *low,
                               const td_lay_swz *z);

/* The loop of a global <-> shared plan (copy_vec_auto.c; vec_auto and
 * ldgsts share it): the scope's thread id, `for f in range(rounds)`
 * (vec_auto: TD_LOOP_SERIAL, TVM's `range`) or `T.unroll(rounds)`
 * (ldgsts: TD_LOOP_UNROLL, as TVM's ldgsts) left open for the caller's
 * accesses (it closes it with td_ir_end_for), and the lets g_lin and
 * s_off, this thread's element offsets in storage in round f (the shared
 * one swizzled). */
struct td_copy_gs_plan;
void td__copy_gs_loop(const td_call *call, const struct td_copy_gs_plan *p,
                      td_loop_kind kind, td_ir *ir, td_var **gv,
                      td_var **sv);

#endif
