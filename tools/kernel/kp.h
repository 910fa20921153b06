/*
 * The self-checking program generator, internal: the plan both program
 * kinds share (reductions in kernel.c, elementwise ops in ewise.c) and the
 * staging and text helpers they share.  Not installed.
 */
#ifndef TD_KERNEL_KP_H
#define TD_KERNEL_KP_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "tiledispatch.h"

/* Fixed limits of a generated program (inputs are hostile: refuse rather
 * than write a program nobody can build or run). */
#define KP_MAX_THREADS 1024               /* threads per block (CUDA) */
#define KP_MAX_GRID 65535                 /* blocks per grid dimension */
#define KP_MAX_ELEMS ((int64_t)1 << 24)   /* elements of one global array */
#define KP_MAX_TABLE ((int64_t)1 << 18)   /* entries of one layout table */
#define KP_MAX_SLOTS ((int64_t)1 << 14)   /* register slots per thread */
/* Dynamic shared bytes per block: the opt-in limit of sm_90 and sm_100
 * (227 KB).  Above 48 KB the program raises the kernel's limit with
 * cudaFuncSetAttribute and checks the device's own limit first. */
#define KP_MAX_SHARED ((int64_t)227 * 1024)
#define KP_SHARED_DEFAULT ((int64_t)48 * 1024)

/* One buffer the program stages. */
typedef struct kp_buf {
    const td_buffer *b;
    bool shared;      /* shared memory; else registers */
    bool is_src;      /* read by the call (its inputs are generated) */
    bool is_dst;
    int64_t elems;    /* logical elements (product of the shape) */
    int64_t slots;    /* register slots per thread (register buffers) */
    int *map;         /* tpi * slots entries (element or -1), or NULL when
                         every thread holds the whole buffer row-major */
    int role;         /* elementwise: how its inputs are generated */
} kp_buf;

/* A named scalar of an elementwise call: a kernel parameter. */
typedef struct kp_scalar {
    const char *name;
    td_dtype dtype;
    double value;     /* the fixed value the program passes */
} kp_scalar;

typedef struct kp_plan kp_plan;
struct kp_plan {
    const td_call *call;
    const char *variant;
    char name[128];
    int64_t block[3];
    int64_t grid[3];
    int64_t nthreads;   /* threads per block */
    int64_t nblocks;
    int64_t tpi;        /* threads per instance */
    int64_t ipb;        /* instances per block */
    int64_t instances;
    int64_t threads_asked; /* thread-scope shared calls launched with fewer
                              threads than the call's (0: as the call) */
    int nbufs;
    kp_buf bufs[TD_MAX_BUFFERS];
    int nscalars;
    kp_scalar scalars[TD_MAX_SRCS + 2];
    /* Reductions. */
    int nreduce, reduce[TD_MAX_RANK];
    int nspatial, spatial[TD_MAX_RANK];
    int64_t red_len;
    int64_t spa_len;
    bool bcast;         /* dst keeps the src rank: reduced dims broadcast */
    double atol;
    td_combiner comb;
    bool specials;      /* NaN and infinities among the source values */
    /* Both. */
    int64_t smem;       /* dynamic shared bytes per block */
    int64_t scratch;    /* static shared bytes the body declares itself */
    bool half;          /* cuda_fp16.h needed */
    bool bf16;          /* cuda_bf16.h needed */
    /* Elementwise (ewise.c): the program's op-specific text. */
    bool ewise;
    const void *ew;     /* ewise.c's own description of the op */
    /* The expression that generates one input value of buffer kb (host). */
    void (*gen_expr)(td_buf *o, const kp_plan *p, const kp_buf *kb);
};

/* kernel.c: shared helpers. */
int td__kp_fail(td_diag *diag, const td_call *call, int code,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
const char *td__kp_ctype(td_dtype t);
bool td__kp_ident(const char *s);
/* Adds buffer b to the staged buffers (once; the flags accumulate). */
kp_buf *td__kp_add_buf(kp_plan *p, const td_buffer *b, bool is_src,
                       bool is_dst);
/* Checks the staged buffers (names, dtypes, scopes, sizes, shared memory)
 * and maps register layouts; needs kp_launch's results. */
int td__kp_check_bufs(kp_plan *p, const td_ir *ir, td_diag *diag);
void td__kp_i64_list(td_buf *o, const int64_t *v, int n);
/* "static const long long td_NAME_shape[] = {...};" and the same for
 * _start and _ext: buffer b's shape, region r's start and extents. */
void td__kp_region_arrays(td_buf *o, const char *name, const td_buffer *b,
                          const td_region *r);
/* The header comment, includes, helpers, maps, kernel and main. */
int td__kp_write(td_buf *o, const kp_plan *p, const char *body,
                 const char *prelude);

/* ewise.c */
/* Fills p's elementwise parts (buffers, scalars, op description); the
 * launch is known.  0 or a kernel: diagnostic. */
int td__kp_ewise_plan(kp_plan *p, const td_op_desc *op, const td_ir *ir,
                      td_diag *diag);
/* The op-specific file-scope text: tables, generators, the reference. */
void td__kp_ewise_tables(td_buf *o, const kp_plan *p);
/* Inside main's instance loop: the reference for instance `inst`. */
void td__kp_ewise_ref_call(td_buf *o, const kp_plan *p);
/* The reference (before the shared td_check) and the helpers (after). */
const char *td__kp_ewise_reference_text(void);
void td__kp_ewise_helpers(td_buf *o, const kp_plan *p);
/* Frees what td__kp_ewise_plan allocated (accepts a plan it never saw). */
void td__kp_ewise_free(kp_plan *p);

#endif
