/*
 * The self-checking program generator, internal: the plan every program
 * kind shares, the table of hooks an op family fills, and the shared
 * staging (stage.c) and text (write.c) helpers the families call.  Not
 * installed.
 *
 *   kernel.c         the driver: td_kernel_program, the family table, the
 *                    launch and its scope instances
 *   stage.c          staged buffers: checks, shared-memory room, layout maps
 *   write.c          the program text: header, includes, helpers, maps,
 *                    kernel and main, with the family's hooks in between
 *   kernel_reduce.c  the reduction family (variants/reduce_ops.h rows)
 *   kernel_ewise.c   the elementwise family (variants/ewise_table.h rows)
 *   kernel_copy.c    the copy family (bit-exact, global operands)
 *   kernel_copy_async.c  TMA copies: the copy family's checks around the
 *                    tensor maps' encode and the mbarrier / bulk-group
 *                    protocol (multicast loads in a cluster launch too)
 *   kernel_gemm.c    the gemm family (register fragments, a matmul
 *                    reference, poisoned D)
 *   kernel_dsmem.c   cluster copies (dsmem): shared -> shared into a peer
 *                    CTA, the cluster protocol around the body
 *   fragments/       the programs' fixed CUDA text, embedded at build time
 *                    (scripts/embed_fragments.py: kp_fragments.h)
 *
 * The shared files call a family only through its kp_family hooks; a
 * family calls the shared files and never another family.
 */
#ifndef TD_KERNEL_KP_H
#define TD_KERNEL_KP_H

#include <stdbool.h>
#include <stddef.h>
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
/* Bytes of a family's plan kept inside the shared one (td__kp_fam_data). */
#define KP_FAM_INLINE 256
/* Sets of declared scalar values one program runs (kp_plan.nsv): every
 * combination of the ranges' values when they are at most KP_MAX_SV_ALL,
 * else a covering sweep of at most KP_MAX_SV sets (kernel_copy.c,
 * cp_scalar_sets); two rounds each. */
#define KP_MAX_SV_ALL 16
#define KP_MAX_SV 32

/* One buffer the program stages.  A global buffer is not staged: it is one
 * device array that every scope instance addresses (a kernel parameter
 * NAME_ptr), with guard elements on both sides of its storage. */
typedef struct kp_buf {
    const td_buffer *b;
    bool shared;      /* shared memory; else registers (or global) */
    bool global;      /* a global array (only for families with globals) */
    bool is_src;      /* read by the call (its inputs are generated) */
    bool is_dst;
    int64_t elems;    /* logical elements (product of the shape) */
    int64_t slots;    /* register slots per thread (register buffers) */
    int *map;         /* tpi * slots entries (element or -1), or NULL when
                         every thread holds the whole buffer row-major */
    int role;         /* the family's: how its inputs are generated */
    /* Global buffers, and shared ones with a layout in bit-exact
     * families: the storage's span in elements (the layout's, at least
     * the shape's product), the guard elements before and after it
     * (global), the physical offset of each logical element (NULL:
     * row-major) and, for shared ones, the element at each offset (-1: a
     * hole); such a shared buffer is staged and read back position by
     * position, holes included. */
    int64_t span;
    int64_t gpad;
    int64_t *phys;
    int *inv;
} kp_buf;

/* A named scalar of the call: a kernel parameter. */
typedef struct kp_scalar {
    const char *name;
    td_dtype dtype;
    double value;     /* the fixed value the program passes */
} kp_scalar;

typedef struct kp_family kp_family;

typedef struct kp_plan {
    const td_call *call;
    const td_op_desc *op;
    const kp_family *fam;
    void *fam_data;     /* the family's own plan (td__kp_fam_data) */
    const char *variant;
    char name[128];
    int64_t block[3];
    int64_t grid[3];
    int64_t nthreads;   /* threads per block */
    int64_t nblocks;
    /* A cluster launch: CTAs per cluster in x, y, z (all 0: none).  The
     * program launches through cudaLaunchKernelEx with the cluster
     * dimension attribute; the grid is a whole number of clusters. */
    int64_t cluster[3];
    int64_t csize;      /* CTAs per cluster (1: no cluster) */
    int64_t tpi;        /* threads per instance */
    int64_t ipb;        /* instances per block */
    int64_t instances;
    int64_t threads_asked; /* thread-scope shared calls launched with fewer
                              threads than the call's (0: as the call) */
    int nbufs;
    kp_buf bufs[TD_MAX_BUFFERS];
    int nscalars;
    kp_scalar scalars[TD_MAX_SRCS + 2];
    /* Sets of scalar values the program runs the body at, when the family
     * asks for more than one (a copy whose source start moves with
     * declared scalars of small ranges: every value): round r passes set
     * r / 2 % nsv (each set in two rounds, both guard patterns), the
     * family's tables follow it (td_sv_use), and the program runs at
     * least 2 nsv rounds.  0 or 1: the scalars' fixed values only. */
    int nsv;
    double sv[KP_MAX_SV][TD_MAX_SRCS + 2];
    int64_t smem;       /* dynamic shared bytes per block */
    int64_t sguard;     /* guard bytes after each shared copy's pitch */
    int64_t scratch;    /* static shared bytes the body declares itself */
    bool half;          /* cuda_fp16.h needed */
    bool bf16;          /* cuda_bf16.h needed */
    bool fp8;           /* cuda_fp8.h needed (bit-exact families, and
                           those with kp_family.float8) */
    /* The dynamic shared memory's base is rounded up to this (0: the 16
     * bytes CUDA promises; a swizzled TMA tile needs 1024, and the family
     * then asks for that much more in smem). */
    int64_t smem_align;
    /* Register arrays are declared __align__(reg_align) (0: the type's
     * own alignment; a gemm reads 16-bit fragments as 32-bit words). */
    int64_t reg_align;
    /* A family's second plan beside fam_data (a family that extends
     * another keeps its own here; its free hook releases it). */
    void *ext;
    /* A small family plan lives here, so that it costs no allocation. */
    _Alignas(max_align_t) unsigned char fam_inline[KP_FAM_INLINE];
} kp_plan;

/*
 * What an op family adds to the shared program.  The driver picks the
 * family by the op's kind (kernel.c's family table) and calls the hooks in
 * this order; each writes its part of the text where write.c says.
 */
struct kp_family {
    td_op_kind kind;
    const char *what;   /* "a reduction": the family in messages */
    /* Stages the buffers (td__kp_add_buf, then td__kp_check_bufs) and
     * fills the family's plan; the launch is known.  0 or a kernel:
     * diagnostic. */
    int (*plan)(kp_plan *p, const td_ir *ir, td_diag *diag);
    /* Lines of the header comment after the shared ones (may be NULL). */
    void (*header)(td_buf *o, const kp_plan *p);
    /* The constants and tables the reference reads. */
    void (*tables)(td_buf *o, const kp_plan *p);
    /* The host reference, up to the shared checks (td_check). */
    void (*reference)(td_buf *o, const kp_plan *p);
    /* File-scope text after the shared checks (may be NULL). */
    void (*helpers)(td_buf *o, const kp_plan *p);
    /* The host expression that generates one input value of kb, as a
     * double (the round's value before the dtype rounds it; it may read
     * td_round and td_data_random). */
    void (*gen_expr)(td_buf *o, const kp_plan *p, const kp_buf *kb);
    /* Rounds the program runs: each stages new inputs, launches and
     * checks (NULL: one). */
    int (*rounds)(const kp_plan *p);
    /* Inside main's round loop, after the generators: statements that
     * rework the round's inputs v_in_NAME (doubles) as a whole, such as
     * where a row's extreme sits or a poisoned dst (may be NULL). */
    void (*fill)(td_buf *o, const kp_plan *p);
    /* Inside main's instance loop: the reference for instance `inst`,
     * into td_want and td_tol. */
    void (*ref_call)(td_buf *o, const kp_plan *p);
    /* The host function that checks a dst value ("td_check" or the
     * family's own with the same arguments). */
    const char *dst_check;
    /* The end of main: the PASS line. */
    void (*pass)(td_buf *o, const kp_plan *p);
    /* Bit-exact family: the host keeps every input as its raw bits
     * (unsigned long long v_in_NAME, td_from_bits / td_bits), gen_expr
     * yields bits, every check compares bits (td_check_bits; dst_check
     * takes the same arguments with bits for got and want), register
     * slots no element owns start as gap_bits(dtype) and are checked to
     * still hold it, and float8 buffers are staged. */
    bool bits;
    unsigned long long (*gap_bits)(td_dtype t);
    /* Float8 buffers are accepted in a family that is not bit-exact: its
     * reference reads their values (td_to_double / td_from_double of
     * fragments/helpers_e4m3.cuh and helpers_e5m2.cuh: CUDA's conversions, to nearest even and
     * saturating). */
    bool float8;
    /* Global buffers are accepted (kp_buf.global; needs bits). */
    bool globals;
    /* A copy within one buffer is accepted (the copy family's plan; the
     * family's reference keeps what lies outside the dst region: a
     * cluster copy between two rows of each CTA's one buffer). */
    bool same_buffer;
    /* A shared dst that the body only subscripts (NAME_ptr[i]) is seen
     * through td_one_writer (fragments/one_writer.cuh): every element
     * must be written by one thread per launch (write.c). */
    bool one_writer;
    /* Asynchronous copies (kernel_copy_async.c; each may be NULL): the
     * kernel's extra parameters (", const __grid_constant__ CUtensorMap
     * A_tensormap"), the text before and after the emitted body's own
     * block (the mbarrier or bulk-group protocol around it, outside the
     * marked braces the mutation suite mutates; with body_close set the
     * program adds no cp.async wait of its own), host statements in main after the device arrays exist (the
     * tensor maps' encode) and the launch's extra arguments. */
    void (*kernel_params)(td_buf *o, const kp_plan *p);
    void (*body_open)(td_buf *o, const kp_plan *p);
    void (*body_close)(td_buf *o, const kp_plan *p);
    void (*host_setup)(td_buf *o, const kp_plan *p);
    void (*launch_args)(td_buf *o, const kp_plan *p);
    /* Frees what the family's plan holds beyond fam_data, which the
     * driver releases (may be NULL; accepts a plan whose plan hook failed
     * or never ran). */
    void (*free)(kp_plan *p);
};

/* The families (kernel_reduce.c, kernel_ewise.c, kernel_copy.c), and the
 * TMA copies (kernel_copy_async.c), which extend the copy family: the
 * driver picks it for a body with tensor maps. */
extern const kp_family td__kp_reduce;
extern const kp_family td__kp_ewise;
extern const kp_family td__kp_copy;
extern const kp_family td__kp_gemm;
extern const kp_family td__kp_copy_async;
/* Cluster copies (variant dsmem, kernel_dsmem.c): the copy family's checks
 * with each CTA's dst filled by its peer's source. */
extern const kp_family td__kp_dsmem;

/* ---- stage.c ------------------------------------------------------------ */

/* A "kernel: ..." diagnostic for the call. */
int td__kp_fail(td_diag *diag, const td_call *call, int code,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
const char *td__kp_ctype(td_dtype t);
bool td__kp_ident(const char *s);
/* Bytes of one instance's copy of a shared buffer (a multiple of 16). */
int64_t td__kp_pitch(const kp_buf *kb);
/* Bytes from one instance's copy of a shared buffer to the next: the
 * pitch and the guard bytes after it. */
int64_t td__kp_stride(const kp_plan *p, const kp_buf *kb);
/* Guard slots after a register buffer's slots (each thread's array). */
int64_t td__kp_reg_guard(const kp_buf *kb);
/* Where the staging loops put logical element `i` of a shared buffer: "i",
 * or through the buffer's swizzle "(i ^ (i / D % B * M))", the offset the
 * emitted body indexes (td__lay_swizzle). */
void td__kp_shared_at(const kp_buf *kb, char *buf, size_t cap);
/* Elements of one instance's copy of a shared buffer: the span when it
 * is staged by positions (kp_buf.inv), else the shape's product. */
int64_t td__kp_shared_elems(const kp_buf *kb);
/* Elements of the host and device arrays of a buffer: a global buffer's
 * guards and span; a staged one's elements times the instances. */
int64_t td__kp_nin(const kp_plan *p, const kp_buf *kb);
/* Adds buffer b to the staged buffers (once; the flags accumulate). */
kp_buf *td__kp_add_buf(kp_plan *p, const td_buffer *b, bool is_src,
                       bool is_dst);
/* Checks the staged buffers (names, dtypes, scopes, sizes, shared memory)
 * and maps register layouts; needs the launch. */
int td__kp_check_bufs(kp_plan *p, const td_ir *ir, td_diag *diag);
/* Sets p->fam_data to `size` zeroed bytes: inside the shared plan when
 * they fit, else allocated.  Returns it, NULL when out of memory. */
void *td__kp_fam_data(kp_plan *p, size_t size);
/* Releases p->fam_data (accepts a plan without one). */
void td__kp_fam_free(kp_plan *p);

/* ---- write.c ------------------------------------------------------------ */

void td__kp_i64_list(td_buf *o, const int64_t *v, int n);
/* "static const int NAME[] = {...};", sixteen values to a line (the
 * per-position tables of the copy and gemm programs). */
void td__kp_int_table(td_buf *o, const char *name, const int *v, int64_t n);
/* The rounds the program runs (the family's, at least one). */
int td__kp_rounds(const kp_plan *p);
/* "static const long long td_NAME_shape[] = {...};" and the same for
 * _start and _ext: buffer b's shape, region r's start and extents. */
void td__kp_region_arrays(td_buf *o, const char *name, const td_buffer *b,
                          const td_region *r);
/* The whole program: header comment, includes, helpers, the family's
 * tables and reference, maps, kernel and main. */
int td__kp_write(td_buf *o, const kp_plan *p, const char *body,
                 const char *prelude);

#endif
