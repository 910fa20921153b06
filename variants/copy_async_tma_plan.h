/*
 * The tma_auto plan (internal to the variants layer): from a copy_async
 * call's global region and shared operand (buffer, TileLayout with its
 * swizzle, region) to the tensor map TVM 0.27's tma_auto encodes and the
 * TMA instructions it issues, or a refusal with TVM's stage text.  This
 * module reads the operands the way TVM's _build_auto_plan does (the
 * swizzle mode, the sliced and canonical shared layout refined by the copy
 * shape, the global layout's strides) and hands the dimensions to the
 * model's planner (model/tensor_map.h: the prefix search, canonicalisation,
 * descriptor promotion and the validator with TVM's rules).
 *
 * Pure: no IR, no printing, no allocation.  Functions return 0 or a
 * negative TD_E* code with TVM's message (or ours, for what TVM never
 * reaches) in the diagnostics.
 */
#ifndef TILEDISPATCH_COPY_ASYNC_TMA_PLAN_H
#define TILEDISPATCH_COPY_ASYNC_TMA_PLAN_H

#include <stdint.h>

#include "copy_plan.h"
#include "tensor_map.h"

/* What the plan reads of a call: both operands and the config keys that
 * change the map.  `global` and `shared` are the copy's two sides whatever
 * the direction. */
typedef struct td_tma_plan_in {
    td_copy_side global;
    td_copy_side shared;
    /* Global dimension d's start when it is not constant (a region over
     * the block ids or the call's scalars; global.start[d] is its constant
     * part): g_start_align[d] > 0 divides every value the rest takes (the
     * gcd of its coefficients) and g_start_text[d] is the whole start as
     * text.  0: the start is constant.  The shared side's start always
     * is. */
    int64_t g_start_align[TD_MAX_RANK];
    char g_start_text[TD_MAX_RANK][64];
    int64_t g_elem_offset;   /* the global view's element offset */
    td_tmap_dir direction;
    int explicit_map;        /* 1: tma_explicit's map (no search) */
    const char *oob;         /* NULL, "zero", "nan" (config oob) */
    int l2_promotion;        /* TD_TMAP_L2_DEFAULT or 0..3 */
    const char *tma_dtype;   /* NULL or a descriptor dtype override */
    int sm;                  /* target arch number, 90 for sm_90a */
    int cta_group;           /* 1 or 2 */
    int has_mbar;            /* a g2s copy carries its mbarrier */
} td_tma_plan_in;

/* The plan: the map (CUDA order, with tma_auto's issue loops in
 * map.issue), the shared slice's element offset from the buffer's start
 * and how many TMA instructions the copy issues. */
typedef struct td_tma_plan {
    td_tmap map;
    int64_t smem_offset;
    int64_t n_issue;
    /* The global view's dimensions as the map's request numbers them
     * (map.coord_src[k] - 1): view dimension v lies in the global
     * dimension view_dim[v], and its start is that dimension's start
     * divided by view_div[v] (several strided runs in one dimension). */
    int view_dim[TD_TMAP_MAX_IN];
    int64_t view_div[TD_TMAP_MAX_IN];
    int dynamic; /* some coordinate adds block ids or scalars */
} td_tma_plan;

/* An input with TVM's defaults (g2s with an mbarrier, sm_90, cta_group
 * 1, default L2 promotion); the caller fills the two sides. */
void td__tma_plan_in_init(td_tma_plan_in *in);

/*
 * Fills in from a loaded copy_async call: the two sides by their scopes
 * (global -> shared* is a load, shared* -> global a store; anything else
 * is TVM's "not a global<->shared TMA copy"), the arch, and whether the
 * call carries `mbar`.  The config keys that change the map (oob,
 * tensormap_l2_promotion, tma_dtype, cta_group) are the variant's to
 * read; they keep their defaults here.  A global start that depends on
 * the block ids or a scalar is taken (g_start_align, g_start_text): the
 * map is planned on its constant part and the extents, and its
 * coordinates add the rest.
 */
int td__tma_plan_in_from_call(const td_call *call, td_tma_plan_in *in,
                              td_diag *d);

/*
 * Plans the copy.  tma_auto: TVM's stages in its order (dtype, the config
 * keys, the shared swizzle, shared-slice, group-shared, shared-chain, the
 * global grouping, coordinate, global-shape, shared-pointer, then the
 * prefix search); tma_explicit: the config, the shared slice (one run,
 * aligned), the global view as declared.  A swizzle whose chunk is not 16
 * bytes or whose rows do not repeat every 8 is refused (deviation A6; TVM
 * encodes it).  On a refusal returns TD_EINVAL (TD_ELIMIT when a count
 * exceeds what the planner holds) with TVM's text.
 */
int td__tma_plan(const td_tma_plan_in *in, td_tma_plan *out, td_diag *d);

/*
 * Issue i (0 <= i < n_issue) of a plan, in TVM's flat order (the last
 * issue loop of map.issue varies fastest): its box coordinates (map.rank
 * of them, CUDA order; their constant parts when the plan is dynamic)
 * and its shared element offset from the slice's start (add smem_offset
 * for the buffer's).  TD_EINVAL for an i out of range.
 */
int td__tma_plan_issue(const td_tma_plan *p, int64_t i, int64_t *coords,
                       int64_t *smem_off);

#endif
