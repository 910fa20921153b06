/*
 * The copy planners (internal to the variants layer): pure layout
 * arithmetic that decides how `vec_auto` (global <-> shared, and registers
 * <-> shared/global) and `ldstmatrix` move a copy, with no IR.  An emitter
 * turns a plan into code; design/copy/planner.md says how, and each field
 * below names the value of TVM 0.27's emitter it stands for
 * (backend/cuda/tile_primitive/copy/{_common,vec_auto_gmem_smem,
 * vec_auto_reg,ld_stmatrix}.py).
 *
 * Every function is pure, allocates nothing and never prints.  The check
 * functions return true/false and write TVM's reason text (design/copy/
 * plan.md section 1.4 and 1.3) into why; the plan functions return 0 or a
 * negative TD_E* code (TD_ENOMATCH: the call does not fit, with a reason)
 * and fill their plan.  Offsets are in elements.
 */
#ifndef TILEDISPATCH_COPY_PLAN_H
#define TILEDISPATCH_COPY_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "model.h"

/* One operand of a copy: its buffer and region. */
typedef struct td_copy_side {
    const char *name;   /* buffer name, for reasons */
    const char *scope;  /* "global", "shared", "shared.dyn", "local" */
    td_dtype dtype;
    int ndim;
    int64_t shape[TD_MAX_RANK];
    int64_t start[TD_MAX_RANK];
    int64_t extent[TD_MAX_RANK];
    td_layout tile;     /* the TileLayout (a ComposeLayout's inner tile);
                           the row-major layout when the buffer has none */
    td_lay_swz swz;     /* the ComposeLayout's swizzle (on: false = none) */
    int64_t block_align; /* a start that depends on the block ids: the
                            largest power of two dividing what they add
                            (td__region_block_align); 0 = constant start */
} td_copy_side;

/* What the checks and planners read of a call. */
typedef struct td_copy_req {
    bool cuda;            /* the target is cuda */
    td_exec_scope scope;
    int64_t threads_x;    /* the launch's threadIdx.x extent; 0 = none */
    int64_t threads_yz;   /* threadIdx.y * threadIdx.z (1 when not given) */
    td_copy_side src;
    td_copy_side dst;
} td_copy_req;

/*
 * Fills a side from a buffer's fields (layout NULL: row-major; a layout
 * with a bare `Swizzle(b, m, s)` flag gives swz and keeps the tile).
 * Returns TD_EINVAL on a malformed shape or region.
 */
int td__copy_side_init(td_copy_side *side, const char *name,
                       const char *scope, td_dtype dtype, int ndim,
                       const int64_t *shape, const int64_t *start,
                       const int64_t *extent, const td_layout *layout,
                       const td_lay_swz *swz);

/* A region of a loaded call as a side (the buffer's layout, row-major
 * when it has none). */
int td__copy_side_from_call(const td_call *call, const td_region *r,
                            td_copy_side *side);

/* The request of a loaded copy call: target, scope, the launch's
 * threadIdx.x (0 when absent or symbolic) and threadIdx.y * .z (INT64_MAX
 * when symbolic), srcs[0] and dst.  TD_EINVAL when the first source is not
 * a region. */
int td__copy_req_from_call(const td_call *call, td_copy_req *q);

/*
 * The scope's thread count T: thread 1, warp 32, warpgroup 128, cta the
 * launch's threadIdx.x (TVM uses 32 * (threadIdx.x // 32); defect D1).
 */
int64_t td__copy_thread_count(const td_copy_req *req);

/* ---- vec_auto's predicate ------------------------------------------- */

/* TVM's _is_gmem_smem (check G) and _is_reg_copy (check R, with D2: the
 * register layout covers exactly the scope's threads).  why gets the
 * reason on false. */
bool td__copy_check_gs(const td_copy_req *req, char *why, size_t whylen);
bool td__copy_check_reg(const td_copy_req *req, char *why, size_t whylen);

/* vec_auto_applicable: G or R; on false
 * "gmem_smem: {G reason}; reg: {R reason}". */
bool td__copy_vec_auto_applicable(const td_copy_req *req, char *why,
                                  size_t whylen);

/* ---- vec_auto, global <-> shared (TVM _emit_gmem_smem) --------------- */

/*
 * Thread `tid` (0 <= tid < threads) moves, in round f (0 <= f < rounds),
 * the `vec` elements of flat index (f * threads + tid) * vec + lane,
 * lane < vec; they are consecutive on both sides.  For that flat index,
 *   g_lin = td__lay_apply_shape(g, {f, tid, lane}, {rounds, threads, vec})
 *   s_off = swizzle(td__lay_apply_shape(s, same)) ...
 * (td__copy_gs_offsets computes both).  TVM's names: vec_len, thread_cnt,
 * total_outer, g_p, s_p, and recompose_swizzle(S.layout, s_p) = s + swz.
 * g's shard is [outer..., thread..., vec...] when the search carved them
 * (TVM's g_final_iters); s is grouped by the same extents.
 */
typedef struct td_copy_gs_plan {
    bool g_is_src;     /* global -> shared (else shared -> global) */
    int elem_bits;
    int64_t vec;       /* elements per access: vec_len */
    int64_t threads;   /* thread_cnt (1 at thread scope) */
    int64_t rounds;    /* total_outer = N / (threads * vec) */
    td_layout g;       /* g_p: flat index -> global element offset (m) */
    td_layout s;       /* s_p: flat index -> shared tile offset (m) */
    td_lay_swz swz;    /* the shared layout's swizzle, applied on top */
    /* When the search carved them (carved; TVM's g_final_iters): g's shard
     * is n_outer iters that f's digits index, n_thread iters for tid's,
     * then the one vec iter (extent vec, stride 1); g's iter i is s's
     * iters s_seps[i] .. s_seps[i+1] (so f's and tid's digits split the
     * same way on S).  Not carved (the scalar fallback when no width fits
     * the thread split): split the flat index f * T + tid instead. */
    bool carved;
    int n_outer;
    int n_thread;
    int s_seps[TD_MAX_LAYOUT_ITERS + 3];
} td_copy_gs_plan;

int td__copy_plan_gs(const td_copy_req *req, td_copy_gs_plan *out,
                     char *why, size_t whylen);
/* The same with the vector widths restricted to bits[0..nbits) (widest
 * first; TVM's vec_bits_candidates, e.g. cp.async's 128, 64, 32): no
 * scalar fallback is added, and when no width fits the plan has vec 1
 * (the caller checks that one element is a width it can move). */
int td__copy_plan_gs_bits(const td_copy_req *req, const int *bits,
                          int nbits, td_copy_gs_plan *out, char *why,
                          size_t whylen);

/* The first element of thread tid's vector in round f: g_lin and s_off
 * (swizzled). */
int td__copy_gs_offsets(const td_copy_gs_plan *p, int64_t f, int64_t tid,
                        int64_t *g_off, int64_t *s_off);

/* ---- vec_auto, registers <-> shared/global (TVM _emit_reg) ----------- */

/* TVM's atom (extent, s_stride, r_mul): one loop over the S iters of a
 * register-layout position; r_mul is the register step per unit. */
typedef struct td_copy_atom {
    int64_t extent;
    int64_t s_stride;
    int64_t r_mul;
} td_copy_atom;

/*
 * Thread tid (0 <= tid < threads; the scope's thread id: lane_id,
 * thread_id_in_wg, threadIdx.x, 0 at thread scope) moves in round f the
 * `vec` consecutive elements at
 *   S:         swizzle(s_base(tid) + ds(f))       (TVM: s_base + ds, or
 *                                                  s_off when swizzled)
 *   registers: slot r_off_base + dr(f)            (TVM: r_w before the
 *                                                  container scaling)
 * where ds(f), dr(f) are the outer atoms' offsets of f (last atom
 * fastest) and s_base(tid) = td__lay_apply_shape(s, flat index of
 * (tid, 0...) in r's shard).  The register array holds r_slots elements
 * (span of the per-thread storage, TVM's r_buf.local()).  A register
 * layout without thread axes is per-thread storage: s_base is then 0 for
 * every thread, and each thread of the scope moves all of it (as TVM).
 */
typedef struct td_copy_reg_plan {
    bool r_is_src;        /* registers -> memory (st), else ld */
    bool s_global;        /* the other side is global (else shared) */
    int elem_bits;
    int64_t vec;          /* vec_len */
    int64_t threads;      /* T; == the register layout's thread extent */
    int64_t rounds;       /* total_outer */
    int nouter;
    td_copy_atom outer[2 * TD_MAX_LAYOUT_ITERS]; /* outer atoms */
    int s_nthread;        /* s's first s_nthread iters are the thread
                             part: s_base(tid) splits tid over their
                             extents (the rest are the atoms' iters) */
    td_layout r;          /* r_p: canonical, thread iter first */
    td_layout r_perm;     /* r_perm: r permuted, before canonicalizing
                             (its memory iters pair with S's groups) */
    td_layout s;          /* s_p: S grouped by r's iters, same order */
    td_lay_swz swz;
    int64_t r_off_base;   /* r_off_base (the region's register offset) */
    int64_t r_slots;      /* registers per thread (storage span) */
} td_copy_reg_plan;

int td__copy_plan_reg(const td_copy_req *req, td_copy_reg_plan *out,
                      char *why, size_t whylen);

/* TVM's _choose_vec_len over atoms (widest of 128..8 bits, then 1; max_vec
 * 0: no cap; with D7 the consumed atoms' r_mul must chain from 1). */
int64_t td__copy_choose_vec(int elem_bits, const td_copy_atom *atoms, int n,
                            const td_layout *r, const td_layout *s,
                            int64_t max_vec);

/* The unswizzled S base of thread tid. */
int td__copy_reg_thread_base(const td_copy_reg_plan *p, int64_t tid,
                             int64_t *s_base);

/* ds and dr of round f. */
int td__copy_reg_round(const td_copy_reg_plan *p, int64_t f, int64_t *ds,
                       int64_t *dr);

/* S offset (swizzled) and register slot of thread tid's vector in round f. */
int td__copy_reg_offsets(const td_copy_reg_plan *p, int64_t f, int64_t tid,
                         int64_t *s_off, int64_t *r_slot);

/* ---- shared by copy_plan.c and copy_plan_ldst.c ---------------------- */

/* Whether the side's scope matches pat (a trailing '*' is a prefix). */
bool td__copy_scope_is(const td_copy_side *s, const char *pat);
/* The local side of a copy (src when src is local), and the other one. */
const td_copy_side *td__copy_local_side(const td_copy_req *q);
const td_copy_side *td__copy_other_side(const td_copy_req *q);
/* The side's TileLayout sliced to its region, swizzle stripped (not
 * canonicalized). */
int td__copy_side_tile(const td_copy_side *s, td_layout *out);
/* The register side's layout sliced, scope-fused and canonical. */
int td__copy_reg_layout(const td_copy_req *q, const td_copy_side *r,
                        td_layout *out);
/* TVM's H1 (_all_threads_active), H2 (validate_copy_op) and H3
 * (_scope_allowed over "src", "dst" pattern pairs, NULL-terminated). */
bool td__copy_threads_active(const td_copy_req *q, char *why, size_t whylen);
bool td__copy_req_valid(const td_copy_req *q, char *why, size_t whylen);
bool td__copy_scope_allowed(const td_copy_req *q, const char *const *pairs,
                            char *why, size_t whylen);
/* Shard positions, thread iters first, then stride descending (stable). */
void td__copy_thread_first_perm(const td_layout *r, int *perm);

/* ---- ldstmatrix ------------------------------------------------------ */

/* ldstmatrix_applicable (TVM _is_ldstmatrix: target, scope, H1-H3). */
bool td__copy_check_ldst(const td_copy_req *req, char *why, size_t whylen);

/*
 * One `{ld,st}matrix.sync.aligned.m8n8.x{num}[.trans].shared.b16` per mm
 * (0 <= mm < m_outer); r and s are grouped by
 * [t_total/32, 8, 4, m_outer, num, 2] (seps r_seps / s_seps, 7 entries).
 * Lane `lane` of warp w (w = 0 for laneid, warp_id_in_wg for tid_in_wg,
 * warp_id for tx) gives the address
 *   smem_off = swizzle(s(w, 0, 0, mm, num > 1 ? lane / 8 : 0, 0)
 *                      + (lane % 8) * row_stride)
 * and word i (< num) of the instruction is 32-bit register word
 *   r(0, 0, 0, mm, i, 0) / 2
 * of the fragment (TVM's r_words[...]).  Only lanes below 8 * num supply
 * addresses (the hardware ignores the others'); td__copy_ldst_smem_off
 * gives lane l >= 8 * num the address of lane l % (8 * num), and an emitter
 * may print TVM's `lane // 8` form instead, the difference being unread.
 */
typedef struct td_copy_ldst_plan {
    bool ld;              /* ldmatrix (shared -> local), else stmatrix */
    int num;              /* 4, 2 or 1 (x4, x2, x1) */
    bool trans;
    td_axis lane_axis;    /* r_lane_axis: laneid, tid_in_wg or tx */
    int64_t t_total;      /* threads of the fragment */
    int64_t m_total;      /* fragment elements per thread */
    int64_t m_outer;      /* instructions: m_total / (2 * num) */
    int64_t row_stride;   /* _row_stride (p) */
    td_layout r;
    int r_seps[7];
    td_layout s;
    int s_seps[7];
    td_lay_swz swz;
} td_copy_ldst_plan;

int td__copy_plan_ldst(const td_copy_req *req, td_copy_ldst_plan *out,
                       char *why, size_t whylen);

int td__copy_ldst_smem_off(const td_copy_ldst_plan *p, int64_t warp,
                           int64_t lane, int64_t mm, int64_t *off);
int td__copy_ldst_word(const td_copy_ldst_plan *p, int64_t mm, int i,
                       int64_t *word);

#endif
