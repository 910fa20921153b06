/*
 * The mma.sync fragments as layouts (design/gemm/plan.md 1.4): the m16n8k*
 * instructions TVM 0.27 registers, the carving of each logical dimension of
 * each operand into the instruction's lanes and registers (as data: one
 * spec per dimension, resolved per instruction), and the analysis TVM's
 * `mma.m16n8k*` emitter runs before it picks an instruction: slice every
 * operand to its region, group it by its 2-D shape, align the followers to
 * the anchors (D.M, D.N, A.K), carve, and check that the warp tiling agrees.
 * The emitter, explain and the program generator share it.
 *
 * Everything here is pure integer work on td_layout values (model/layout.h);
 * nothing allocates or prints.  Functions return 0, TD_EINVAL for malformed
 * arguments, TD_ELIMIT when a value does not fit, or TD_ENOMATCH when the
 * layouts do not fit the question; then `why` (may be NULL) holds the reason
 * in TVM's words where TVM has words for it.
 */
#ifndef TILEDISPATCH_GEMM_FRAG_H
#define TILEDISPATCH_GEMM_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* One mma.sync instruction: shape, dtype signature (A, B, C, D), the
 * elements of A/B packed into one b32 register along K, the lowest arch
 * (sm_NN as NN) and whether TVM 0.27 registers it. */
typedef struct td_mma_inst {
    const char *name; /* "m16n8k16.f16" */
    int m, n, k, k_pack;
    td_dtype a, b, c, d;
    int sm;
    bool upstream;
} td_mma_inst;

/* TVM's MMA_INSTRUCTIONS, in the order they are tried (k16 before k8),
 * then tiledispatch's own (upstream false), tried by mma_ext.m16n8k*. */
extern const td_mma_inst td__mma_insts[];
extern const int td__mma_ninsts;

/* The logical dimensions the analysis carves, in TVM's carving order. */
typedef enum td_mma_dim {
    TD_MMA_DM,
    TD_MMA_DN,
    TD_MMA_CM,
    TD_MMA_CN,
    TD_MMA_AM,
    TD_MMA_AK,
    TD_MMA_BK,
    TD_MMA_BN,
    TD_MMA_NDIMS
} td_mma_dim;

/* "D.M", "D.N", ... */
const char *td__mma_dim_name(td_mma_dim d);

/* The operands, in the gemm's argument order (D, A, B, C). */
enum { TD_MMA_OP_D, TD_MMA_OP_A, TD_MMA_OP_B, TD_MMA_OP_C, TD_MMA_NOPS };

/* One carved group: `extent` iters that must be one iter on a thread axis
 * (thread) or a memory axis, with `stride` (0: any stride). */
typedef struct td_mma_part {
    int64_t extent;
    int64_t stride;
    bool thread;
} td_mma_part;

/* A dimension's carving: [thread rest, lane..., memory rest, mem...]. */
typedef struct td_mma_spec {
    int nlane, nmem;
    td_mma_part lane[2];
    td_mma_part mem[2];
} td_mma_spec;

/* The spec of dimension `dim` for instruction `inst` (plan 1.4: g = 8
 * lanes of stride 4 along M, t = 4 lanes of stride 1 along N and K, B's N
 * as g split into lanes of stride 8 and 4). */
int td__mma_spec(const td_mma_inst *inst, td_mma_dim dim, td_mma_spec *out);

#define TD_MMA_MAX_GROUPS 6

/* A carved dimension: group g is grouped.shard[seps[g] .. seps[g+1]). */
typedef struct td_mma_carved {
    td_layout grouped;
    int ngroups;
    int seps[TD_MMA_MAX_GROUPS + 1];
} td_mma_carved;

/*
 * TVM's _frag_group: groups `dim` (one logical dimension's sub-layout in
 * thread-left order) by [thread_total / lanes, lanes..., mem_total / mems,
 * mems...] and checks every lane and mem group: one iter, on a thread axis
 * iff the part wants one, with the part's stride when it pins one; a group
 * of extent 1 is not checked (it iterates nothing).  The totals are the
 * anchor's (td_mma_dims), not dim's own.  TD_ENOMATCH with TVM's text
 * ("frag group 1 stride 8 != 1", or the group's ICHECK text).
 */
int td__mma_carve(const td_layout *dim, const td_mma_spec *spec,
                  int64_t thread_total, int64_t mem_total, td_mma_carved *out,
                  char *why, size_t whylen);

/* One operand as the call gives it: the buffer's layout and shape, the
 * region (start, extent; the buffer's rank). */
typedef struct td_mma_operand {
    const td_layout *layout;
    const int64_t *shape;
    int ndim;
    const int64_t *start;
    const int64_t *extent;
} td_mma_operand;

/* The call: operands D, A, B, C; M, N, K (static); the transposes (A
 * stored [K, M], B stored [N, K]). */
typedef struct td_mma_in {
    td_mma_operand op[TD_MMA_NOPS];
    int64_t m, n, k;
    bool transpose_a, transpose_b;
} td_mma_in;

/* The instruction-independent part of the analysis. */
typedef struct td_mma_dims {
    td_layout dim[TD_MMA_NDIMS];          /* thread-left sub-layouts */
    int64_t thr[3], mem[3];               /* M, N, K totals of the anchors */
    int64_t offset[TD_MMA_NOPS][TD_AXIS_COUNT]; /* each operand's offset */
} td_mma_dims;

/*
 * The emitter's steps before the instruction loop, for A, B, C, D in that
 * order: slice to the region, canonicalize, one thread axis only, group by
 * the 2-D shape ((K, M) or (M, K) for A, (N, K) or (K, N) for B, (M, N));
 * split into dimensions; align A.M, C.M to D.M, B.N, C.N to D.N, B.K to
 * A.K; the anchors into thread-left order; the anchors' totals.
 * TD_ENOMATCH with the emitter's decline text ("gemm mma: C layout not
 * tileable as (16, 8): Check failed: ...", "gemm mma: cannot slice A layout
 * to its region", "gemm mma: A has >1 thread axis [...], only one
 * supported", "gemm mma: B.K not alignable to anchor extents [3, 4, 2]:
 * Check failed: ...").  The layouts are canonicalized as under TVM's CUDA
 * target (td__lay_canonicalize_cuda), before and after the slice.
 */
int td__mma_prepare(const td_mma_in *in, td_mma_dims *out, char *why,
                    size_t whylen);

/* The carve of every dimension for one instruction. */
typedef struct td_mma_frag {
    td_mma_carved dim[TD_MMA_NDIMS];
} td_mma_frag;

/*
 * Whether the fragments of `inst` fit: every dimension carves (in
 * td_mma_dim order) and the warp tiling (group 0) of M agrees in D, A, C,
 * that of N in D, B, C, that of K in A, B (extent-1 iters dropped).  The
 * shape and dtype checks are the caller's.  TD_ENOMATCH with the failing
 * check ("A.K: frag group 1 stride 8 != 1", "M.to: ...") for explain: TVM
 * itself only moves on to the next instruction.
 */
int td__mma_fit(const td_mma_inst *inst, const td_mma_dims *dims,
                td_mma_frag *out, char *why, size_t whylen);

/*
 * TVM's _reg_layout for operand `op`: the per-thread register layout and
 * the local view's shape the emitter indexes: D/C [M tiles, N tiles, rM,
 * rN], A [M tiles, K tiles, rM, kHi, k_pack], B [K tiles, N tiles, kHi,
 * k_pack].  Extent-1 iters and thread-axis offsets are dropped.  shape gets
 * *ndim (4 or 5) entries.
 */
int td__mma_reg_layout(const td_mma_frag *frag, const td_mma_dims *dims,
                       int op, td_layout *out, int64_t *shape, int *ndim);

/*
 * The layout of operand `op` (D, A, B or C) that holds tiles[0] x tiles[1]
 * instruction tiles of `inst`, as upstream's tests build it: the
 * instruction's fragment (D/C [m, n]: S[(m/8, 8, 4, n/4) : (n/4, 4@laneid,
 * 1@laneid, 1)]; A [m, k]: S[(m/8, 8, kHi, 4, k_pack) : (k_pack, 4@laneid,
 * m/8*k_pack, 1@laneid, 1)]; B [k, n]: S[(kHi, 4, k_pack, 8) : (k_pack,
 * 1@laneid, 1, 4@laneid)]) tile_to the whole operand (tiles along M, N for
 * D/C; M, K for A; K, N for B).  transposed (A or B): the layout of the
 * stored [K, M] / [N, K] buffer, the two logical axes swapped.  The
 * fragment of every lane holds the registers mma.sync reads, in PTX order.
 */
int td__mma_tile_layout(const td_mma_inst *inst, int op, const int64_t tiles[2],
                        bool transposed, td_layout *out);

#endif
