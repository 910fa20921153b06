/*
 * The `shared_rows` variant module: shared-memory reductions at cta,
 * warpgroup and warp scope, written for speed.
 *
 * `shared` (TVM's algorithm) gives every output element a group of up to
 * 32 lanes that reads one element per lane per step and ends with a
 * 5-step shuffle tree; with many short rows each row is a long dependent
 * chain and most lanes idle.  Here:
 *
 *   - each row (output element) gets G threads, G a power of two chosen
 *     from the shape: enough groups to keep 4 warps (or the whole scope,
 *     if smaller) busy, but no more than a warp unless a thread would
 *     make over 32 accesses per row, and at most one access per thread;
 *   - a warp with no row in a pass skips it (no shuffles of identities);
 *   - rows whose elements are consecutive in memory are read with vector
 *     accesses of 16, 8 or 4 bytes (float32, float16, bfloat16) when the
 *     row starts allow it, the few elements past the last whole vector
 *     one by one; everything else is read one element at a time; when one
 *     warp has every row and streams 16 or more 16-byte accesses a
 *     thread, 8-byte accesses (measured faster at full occupancy), and
 *     likewise for 32-bit rows of one thread or of one warp ending in the
 *     whole-warp reduction;
 *   - when rows of a shared-memory phase would start in the same bank,
 *     access c of a row is read at c ^ ((row * G) % NB) (NB accesses per
 *     128-byte bank line), which keeps each thread's share of the row and
 *     spreads the phase over all banks;
 *   - max and min of 32-bit rows take a warp a row when every row can
 *     have one (redux_groups); config one_block_per_sm spreads rows held
 *     by whole warps over every warp of the scope (latency_groups);
 *   - loads in batches of up to 8, all issued before their adds; two
 *     accumulators per thread, a pairwise tree inside each vector;
 *   - XOR shuffles over min(G, 32) lanes, full-warp mask (the scope is
 *     made of whole warps and every lane reaches every shuffle); a float32
 *     row in whole warps (G >= 32) instead ends with one whole-warp
 *     reduction: a float64 tensor-core MMA and two shuffles for a sum,
 *     redux.sync on integer keys for max and min (fast_warp below);
 *   - G > 32: each warp's partial goes to a shared scratch the body
 *     declares itself (one per scope instance), one barrier, then one
 *     thread per row combines the partials in a pairwise tree;
 *   - lane 0 of a group (or the combining thread) writes the row's dst
 *     element, exactly once, combined with the old value when `accum`;
 *     the scope's barrier ends the call (__syncthreads, the warpgroup's
 *     named barrier, __syncwarp).
 *
 * Vector accesses assume that every shared buffer starts 16-byte aligned,
 * as dynamic shared memory and the programs of `tiledispatch kernel` do;
 * a caller that cannot promise it sets config `vector_bytes: 0` (or 4, 8:
 * the widest access allowed).  Config `group_size` fixes G (a power of
 * two) in place of the plan's choice (and of redux_groups and
 * latency_groups).  The default plan is the one for a full SM; config
 * `one_block_per_sm: true` asks for the one for a block alone on its SM
 * (docs/performance.md has both modes).  max and min use the same combiner,
 * identity and NaN rules as `shared`, so results match it exactly; sums may
 * differ by rounding (another order).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reduce_common.h"
#include "common.h"
#include "variants.h"

#define ROWS_MAX_THREADS 1024
#define ROWS_DEFAULT_BARRIER 8
#define ROWS_MAX_BARRIER 15
/* Threads the group size aims to keep busy: one warp per SM sub-partition. */
#define ROWS_BUSY_THREADS 128
/* Most vector (or scalar) accesses one thread makes per row. */
#define ROWS_MAX_ACCESSES 32

typedef struct rows_plan {
    td__red_shape sh;
    int64_t T;        /* threads of one scope instance */
    int64_t S;        /* rows: output elements */
    int64_t R;        /* row length */
    int V;            /* elements per access (1: scalar) */
    int64_t Q;        /* whole accesses per row: R / V */
    int64_t tail;     /* elements after the last whole vector: R % V */
    int64_t G;        /* threads per row */
    int64_t NG;       /* row groups of one instance: T / G */
    int64_t swz;      /* accesses per bank line when swizzling, else 0 */
    bool contig;      /* each row's elements consecutive in memory */
    int64_t nwg;      /* warpgroups per block (warpgroup scope) */
    td_intrin fast;   /* the whole-warp reduction in place of the XOR
                         shuffles, or TD_INTRIN_COUNT for the shuffles */
} rows_plan;

static int64_t p2ceil(int64_t x)
{
    int64_t p = 1;
    while (p < x && p < ((int64_t)1 << 40))
        p <<= 1;
    return p;
}

static int64_t p2floor(int64_t x)
{
    int64_t p = 1;
    while (p * 2 <= x && p < ((int64_t)1 << 40))
        p <<= 1;
    return p;
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

static bool launch_ok(const td_call *call, td_reason *why)
{
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    if (!tx->present) {
        td_reason_set(why, "no threadIdx.x in the call's launch (add `launch: {threadIdx.x: N}`)");
        return false;
    }
    if (call->launch[TD_LAUNCH_TY].present ||
        call->launch[TD_LAUNCH_TZ].present) {
        td_reason_set(why, "multi-dimensional thread binding not supported "
                           "for shared_rows");
        return false;
    }
    if (tx->symbolic) {
        /* Warp code is the same for any number of warps; cta code splits
         * the block's threads and warpgroup code numbers its barriers. */
        if (call->scope == TD_SCOPE_WARP)
            return true;
        td_reason_set(why,
                      "threadIdx.x extent is symbolic (%.*s); shared_rows "
                      "needs a constant at %s scope",
                      TD__FIELD(tx->symbol), td_exec_scope_name(call->scope));
        return false;
    }
    if (tx->extent < 1 || tx->extent > ROWS_MAX_THREADS) {
        td_reason_set(why, "threadIdx.x extent %" PRId64 " out of range [1, %d]",
                      tx->extent, ROWS_MAX_THREADS);
        return false;
    }
    /* Every lane of a warp takes part in the full-mask shuffles. */
    int64_t unit = call->scope == TD_SCOPE_WARPGROUP ? 128 : 32;
    if (tx->extent % unit != 0) {
        td_reason_set(why,
                      "threadIdx.x extent %" PRId64 " is not a multiple of %"
                      PRId64 " (shared_rows shuffles across whole %s)",
                      tx->extent, unit,
                      unit == 128 ? "warpgroups" : "warps");
        return false;
    }
    return true;
}

/* The warpgroup barrier ids barrier_id .. barrier_id + nwg - 1. */
static bool barrier_ok(const td_call *call, int64_t nwg, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "barrier_id");
    if (e == NULL)
        return true;
    if (e->kind != TD_VALUE_INT) {
        td_reason_set(why, "barrier_id must be an integer");
        return false;
    }
    if (e->i < 0 || e->i + nwg - 1 > ROWS_MAX_BARRIER) {
        td_reason_set(why,
                      "barrier ids %" PRId64 "..%" PRId64 " for %" PRId64
                      " warpgroup(s) outside [0, %d]",
                      e->i, e->i + nwg - 1, nwg, ROWS_MAX_BARRIER);
        return false;
    }
    return true;
}

/* The cap on vector accesses: config vector_bytes, 16 when absent. */
static bool vector_cap(const td_call *call, int64_t *bytes, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "vector_bytes");
    *bytes = 16;
    if (e == NULL)
        return true;
    if (e->kind != TD_VALUE_INT ||
        (e->i != 0 && e->i != 4 && e->i != 8 && e->i != 16)) {
        td_reason_set(why, "vector_bytes must be 0, 4, 8 or 16");
        return false;
    }
    *bytes = e->i;
    return true;
}

/* Config group_size: the threads per row, when the caller fixes it
 * (0 when absent: the plan chooses). */
static bool group_knob(const td_call *call, int64_t *g, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "group_size");
    *g = 0;
    if (e == NULL)
        return true;
    if (e->kind != TD_VALUE_INT || e->i < 1 || e->i > ROWS_MAX_THREADS ||
        (e->i & (e->i - 1)) != 0) {
        td_reason_set(why, "group_size must be a power of two in [1, %d]",
                      ROWS_MAX_THREADS);
        return false;
    }
    *g = e->i;
    return true;
}

/*
 * The whole-warp reduction (G >= 32, float32 partials) in place of the
 * 5-step shuffle tree, measured on the H200 (docs/performance.md): a sum
 * through one float64 tensor-core MMA and two shuffles (sm_80, sm_90 and
 * sm_100, the chips with float64 tensor cores), max and min through
 * redux.sync on integer keys (sm_80 and newer).  The partials are never
 * NaN for max and min (the accumulators start at the identity and fmaxf /
 * fminf skip NaN), so the result is the shuffle tree's; a sum is summed in
 * float64 before its last two steps, a rounding at least as close.
 * Config fast_warp_reduce: false keeps the shuffles.
 */
static bool bool_knob(const td_call *call, const char *key, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, key);
    if (e != NULL && e->kind != TD_VALUE_BOOL) {
        td_reason_set(why, "%s must be true or false", key);
        return false;
    }
    return true;
}

/* Config one_block_per_sm: true when the caller says that the block runs
 * alone on its SM (a persistent kernel, or one whose shared memory leaves
 * room for one block): the reduction is then a latency, not a share of
 * the SM's shared-memory bandwidth (latency_groups below). */
static bool one_block(const td_call *call)
{
    const td_config_entry *e = td_call_config(call, "one_block_per_sm");
    return e != NULL && e->kind == TD_VALUE_BOOL && e->b;
}

/* The whole-warp reduction for the call's op and dst dtype on its chip,
 * TD_INTRIN_COUNT when there is none (or config turns it off).  The op
 * is read from its name: the predicate, which `explain` runs, has no op
 * descriptor, and it must decide as the plan does. */
static td_intrin fast_warp(const td_call *call)
{
    const td_config_entry *e = td_call_config(call, "fast_warp_reduce");
    const td_buffer *dst = td__region_buffer(call, &call->dst);
    if ((e != NULL && e->kind == TD_VALUE_BOOL && !e->b) || dst == NULL ||
        dst->dtype != TD_F32)
        return TD_INTRIN_COUNT;
    int sm = call->sm_version;
    if (strcmp(call->op, "sum") == 0 && (sm == 80 || sm == 90 || sm == 100))
        return TD_INTRIN_WARP_SUM_F64MMA;
    if (strcmp(call->op, "max") == 0 && sm >= 80)
        return TD_INTRIN_WARP_MAX_REDUX;
    if (strcmp(call->op, "min") == 0 && sm >= 80)
        return TD_INTRIN_WARP_MIN_REDUX;
    return TD_INTRIN_COUNT;
}

/* Row-major element strides of a buffer. */
static void strides(const td_buffer *b, int64_t *st)
{
    int64_t s = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        st[d] = s;
        s = s > INT64_MAX / (b->shape[d] > 0 ? b->shape[d] : 1)
                ? INT64_MAX
                : s * b->shape[d];
    }
}

/*
 * Contiguity and the vector width.  Rows are contiguous when the reduced
 * dims are the trailing ones and all but the first cover their whole
 * buffer extent.  V lanes per access need: a float dtype of 2 or 4 bytes,
 * V * size within the cap, the region's first element and every spatial
 * step a multiple of V elements (16-byte aligned buffers then give aligned
 * accesses), and, with several reduced dims, an innermost extent that is
 * a multiple of V (an access never straddles a dimension).
 */
static void plan_access(const td_call *call, const td_buffer *sb,
                        int64_t cap, rows_plan *p)
{
    const td_region *r = &call->src;
    const td__red_shape *sh = &p->sh;
    int nd = r->ndim;
    p->contig = sh->nreduce >= 1;
    for (int i = 0; i < sh->nreduce; i++) {
        if (sh->reduce[i] != nd - sh->nreduce + i)
            p->contig = false;
        else if (i > 0 && r->extent[sh->reduce[i]] != sb->shape[sh->reduce[i]])
            p->contig = false;
    }
    p->V = 1;
    int esize = td_dtype_bits(sb->dtype) / 8;
    bool vec_dtype = sb->dtype == TD_F32 || sb->dtype == TD_F16 ||
                     sb->dtype == TD_BF16;
    if (!p->contig || !vec_dtype)
        return;
    int64_t st[TD_MAX_RANK], base = 0;
    strides(sb, st);
    for (int d = 0; d < nd; d++)
        base += r->start[d] * st[d];
    int64_t inner = r->extent[nd - 1];
    for (int64_t v = cap / esize; v >= 2; v /= 2) {
        if (v * esize != 4 && v * esize != 8 && v * esize != 16)
            continue;
        bool ok = base % v == 0 && p->R >= v;
        for (int i = 0; i < sh->nspatial && ok; i++)
            if (r->extent[sh->spatial[i]] > 1 && st[sh->spatial[i]] % v != 0)
                ok = false;
        if (sh->nreduce > 1 && inner % v != 0)
            ok = false;
        if (ok) {
            p->V = (int)v;
            break;
        }
    }
}

/* Group size (see the file comment); `knob` is config
 * group_size (0: choose).  False, with the reason, when the knob does not
 * fit the shape. */
static bool plan_groups(int64_t knob, rows_plan *p, td_reason *why)
{
    int64_t busy = p->T < ROWS_BUSY_THREADS ? p->T : ROWS_BUSY_THREADS;
    int64_t per_row = p->Q + (p->tail > 0);
    int64_t g = p2ceil(cdiv(busy, p->S));
    int64_t g_acc = p2ceil(cdiv(per_row, ROWS_MAX_ACCESSES));
    if (g < g_acc)
        g = g_acc;
    /* A row spread over several warps costs a scratch round trip and a
     * second barrier: keep a row in one warp unless its accesses would
     * pass the cap. */
    if (g > 32 && g_acc <= 32)
        g = 32;
    if (g > p2floor(per_row))
        g = p2floor(per_row);
    if (g > p2floor(p->T))
        g = p2floor(p->T);
    if (knob > 0) {
        if (knob > p2floor(per_row) || knob > p->T) {
            td_reason_set(why,
                          "group_size %" PRId64 " exceeds the %" PRId64
                          " accesses of a row or the %" PRId64
                          " threads of the scope",
                          knob, per_row, p->T);
            return false;
        }
        g = knob;
    }
    p->G = g;
    p->NG = p->T / g;
    return true;
}

/* Swizzle when rows start in the same bank: whole bank lines per row and
 * per spatial step, and a group narrower than a phase. */
static void plan_swizzle(const td_call *call, const td_buffer *sb,
                         rows_plan *p)
{
    p->swz = 0;
    int64_t abytes = p->V * (td_dtype_bits(sb->dtype) / 8);
    if (!p->contig || abytes < 4 || p->S < 2)
        return;
    int64_t nb = 128 / abytes;
    if (p->G >= nb || p->Q % nb != 0)
        return;
    int64_t st[TD_MAX_RANK];
    strides(sb, st);
    for (int i = 0; i < p->sh.nspatial; i++) {
        int d = p->sh.spatial[i];
        if (call->src.extent[d] > 1 && st[d] % (nb * p->V) != 0)
            return;
    }
    p->swz = nb;
}

/*
 * Long rows read 8 bytes at a time.  One busy warp streaming a long row:
 * when every row fits in one warp's
 * groups (S * G <= 32) and each thread makes 16 or more 16-byte accesses,
 * 8-byte accesses with the same G are faster at full occupancy and no
 * slower alone.  Measured on the H200 for [1,4096] float32 / 256 threads
 * (docs/performance.md): 73.2 against 78.5 ns per tile per SM, 278.6
 * against 278.9 ns with one block per SM; with four busy warps ([4,4096])
 * 8 bytes were slower (313 against 304), so the rule stops at one warp.
 * An explicit vector_bytes keeps the width it allows.
 */
static void narrow_long_rows(const td_call *call, rows_plan *p, int esize)
{
    if (td_call_config(call, "vector_bytes") != NULL ||
        p->V * esize != 16 || p->Q / p->G < 16)
        return;
    /* Also, for 32-bit values, a thread a row ([128,64] float32 / 128
     * threads: 135 / 174 ns against 136 / 186 sum, 136 / 177 against 136
     * / 202 max) and rows of one warp that end in the whole-warp
     * reduction ([4,4096] / 256: 274 / 396 against 289 / 397 sum, 273 /
     * 362 against 285 / 363 max); with 2 to 16 threads a row 8 bytes were
     * slower alone ([64,128] / 128, G = 2: 264 against 194 ns), and with
     * rows across warps slower at full occupancy ([4,4096], G = 64: 305
     * against 298 sum, 300 against 287 max). */
    bool narrow = p->S * p->G <= 32;
    if (esize == 4 && (p->G == 1 || (p->G == 32 && fast_warp(call) !=
                                                       TD_INTRIN_COUNT)))
        narrow = true;
    if (!narrow)
        return;
    p->V /= 2;
    p->Q = p->R / p->V;
    p->tail = p->R % p->V;
}

/*
 * Without a whole-warp reduction (fast_warp), where `shared`'s layout is
 * already the right one, leave the call to it:
 * a scope of exactly one warp per row (rows consecutive, 32-bit values, at
 * least 1024 of them a row, so that every lane of `shared` has 32 or more
 * independent loads) for which this plan would pack rows two or more to a
 * warp (G < 32) and idle the other warps.  Measured on the H200 for
 * [8,1024] float32 / 256 threads (docs/performance.md): G = 16 is faster
 * at full occupancy (148 against 168 ns) but slower with one block per SM
 * (262 against 240 ns); G = 32 with 16-byte loads and shuffles, 162 and
 * 243; no layout with shuffles beat `shared` in both modes.  With a
 * whole-warp reduction the plan gives every warp its row (G = 32) instead.
 */
static bool warp_per_row(const td_buffer *src, const rows_plan *p)
{
    return p->contig && td_dtype_bits(src->dtype) >= 32 && p->S * 32 == p->T &&
           p->R >= 1024 && p->G < 32;
}

/*
 * The group size beyond plan_groups, for float32-like 32-bit rows read
 * contiguously, when config group_size leaves the choice to the plan.
 *
 * max and min end a whole-warp row in one redux.sync, so a warp a row
 * costs about what a narrower group's shuffles cost and gives every warp
 * loads to issue: when every row can have its own warp in one pass
 * (S * 32 <= T) and a row has an access for every lane, G = 32.  Measured
 * on the H200 for [16,256] float32 / 512 threads (max): 84.9 ns at full
 * occupancy and 143.5 ns with one block per SM, against 87.3 and 169.7
 * for G = 8; a sum's MMA and shuffles cost more (G = 32: 100.7 / 178.2
 * against G = 8's 86.6 / 167.2), so a sum keeps the plan's G.
 *
 * With config one_block_per_sm (latency_groups), rows held by whole warps
 * that leave warps idle spread over all of them (G = T / S, each warp's
 * partial through the scratch): [1,4096] float32 / 256 threads, G = 256,
 * 221.5 ns with one block per SM against 270.2 for G = 32 (sum; max
 * 195.9 against 264.7), but 90.0 against 68.9 ns at full occupancy,
 * where the extra barrier and the 8 warps' reductions are paid by every
 * block of the SM: so it is not the default.
 */
static void redux_groups(const td_call *call, const td_buffer *src,
                         rows_plan *p)
{
    td_intrin f = fast_warp(call);
    if (p->G >= 32 || !p->contig || td_dtype_bits(src->dtype) != 32 ||
        (f != TD_INTRIN_WARP_MAX_REDUX && f != TD_INTRIN_WARP_MIN_REDUX) ||
        p->S * 32 > p->T || p->Q + (p->tail > 0) < 32)
        return;
    p->G = 32;
    p->NG = p->T / 32;
}

static void latency_groups(const td_call *call, rows_plan *p)
{
    int64_t per_row = p->Q + (p->tail > 0);
    if (!one_block(call) || p->G < 32 || p->S * p->G >= p->T)
        return;
    int64_t g = p2floor(p->T / p->S);
    if (g > p2floor(per_row))
        g = p2floor(per_row);
    if (g <= p->G)
        return;
    p->G = g;
    p->NG = p->T / g;
}

static bool rows_check(const td_call *call, rows_plan *p, td_reason *why)
{
    switch (call->scope) {
    case TD_SCOPE_CTA:
    case TD_SCOPE_WARPGROUP:
    case TD_SCOPE_WARP:
        break;
    default:
        td_reason_set(why,
                      "unsupported exec_scope %s (shared_rows serves cta, "
                      "warpgroup and warp)",
                      td_exec_scope_name(call->scope));
        return false;
    }
    const td_buffer *dst, *src;
    if (!td__shared_operands(call, &dst, &src, why))
        return false;
    if (!launch_ok(call, why))
        return false;
    /* The combiner does not change the checks: sum stands in. */
    if (td__reduce_check(call, TD_COMBINE_SUM, &p->sh, why) != 0)
        return false;
    if (!td__row_major_storage(src, why) || !td__row_major_storage(dst, why) ||
        td__regions_overlap(call, why))
        return false;
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    p->nwg = call->scope == TD_SCOPE_WARPGROUP ? tx->extent / 128 : 1;
    if (!barrier_ok(call, p->nwg, why))
        return false;
    int64_t cap, knob;
    if (!vector_cap(call, &cap, why) || !group_knob(call, &knob, why) ||
        !bool_knob(call, "fast_warp_reduce", why) ||
        !bool_knob(call, "one_block_per_sm", why))
        return false;
    p->T = td__scope_threads(call);
    p->S = p->sh.spatial_len;
    p->R = p->sh.reduction_len;
    if (p->S < 1 || p->R < 1) {
        td_reason_set(why, "empty reduction (%" PRId64 " rows of %" PRId64
                           " elements)", p->S, p->R);
        return false;
    }
    plan_access(call, src, cap, p);
    p->Q = p->R / p->V;
    p->tail = p->R % p->V;
    if (!plan_groups(knob, p, why))
        return false;
    if (knob == 0 && warp_per_row(src, p)) {
        if (fast_warp(call) == TD_INTRIN_COUNT) {
            td_reason_set(why,
                          "one row per warp (%" PRId64 " rows of %" PRId64
                          ", %" PRId64 " threads): `shared` keeps every warp "
                          "busy, this plan (G = %" PRId64 ") would leave %"
                          PRId64 " of the %" PRId64 " warps idle; left to "
                          "`shared`",
                          p->S, p->R, p->T, p->G, p->S - p->S * p->G / 32,
                          p->S);
            return false;
        }
        /* The whole-warp reduction makes a warp a row the faster layout in
         * both modes ([8,1024] float32 on the H200: sum 151 / 237 ns, max
         * 141 / 206, against `shared`'s 168 / 240). */
        p->G = 32;
        p->NG = p->T / 32;
    }
    if (knob == 0) {
        redux_groups(call, src, p);
        latency_groups(call, p);
    }
    narrow_long_rows(call, p, td_dtype_bits(src->dtype) / 8);
    plan_swizzle(call, src, p);
    return true;
}

static int rows_plan_fn(const td_call *call, const td_op_desc *op,
                        void *plan, void *user, td_reason *why)
{
    (void)op;
    (void)user;
    rows_plan *p = plan;
    memset(p, 0, sizeof *p); /* rows_check fills it from zero */
    if (!rows_check(call, p, why))
        return TD_EDECLINED;
    p->fast = p->G >= 32 ? fast_warp(call) : TD_INTRIN_COUNT;
    return 0;
}

static bool shared_rows_valid(const td_call *call, const td_args *args,
                              void *user, td_reason *why)
{
    (void)args;
    (void)user;
    rows_plan p;
    memset(&p, 0, sizeof p);
    return rows_check(call, &p, why);
}

static const td_pred_desc rows_preds[] = {
    {"shared_rows_valid", NULL, 0, shared_rows_valid, NULL, NULL},
};

/* ---- emitter ------------------------------------------------------------ */

typedef struct rows_emit {
    const td_call *call;
    const rows_plan *p;
    td_combiner comb;
    td_dtype dt;
    td_ir *ir;
    td_ir_buf *src, *dst;
    td_var *tid, *lane, *row, *sw;
} rows_emit;

/* A loop of n iterations, or nothing when n is 1 (TIRx prints every loop;
 * one of extent 1 only clutters).  Close with end_loop; read the index
 * with index_of (0 without a loop). */
static td_var *maybe_for(td_ir *ir, const char *name, int64_t n,
                         td_loop_kind kind)
{
    return n == 1 ? NULL : td_ir_for(ir, name, td_int(ir, n), kind);
}

static void end_loop(td_ir *ir, const td_var *v)
{
    if (v != NULL)
        td_ir_end_for(ir);
}

static td_expr *index_of(td_ir *ir, const td_var *v)
{
    return v != NULL ? td_var_ref(ir, v) : td_int(ir, 0);
}

/* Accesses a batch issues before it combines any: ptxas keeps source
 * order closely enough that loads written first are all in flight before
 * the first add waits on one (interleaved, a row paid a load latency per
 * few loads). */
#define ROWS_BATCH 8

/* Access k of this thread (number k * G + lane of the row), unguarded,
 * into a new variable; `slot` numbers the names (red0/v0, red1/v1, ...),
 * which keeps them unique at the first try (the IR's uniquing scans every
 * name per try). */
static td_var *load_access(rows_emit *e, td_expr *k, int64_t slot)
{
    td_ir *ir = e->ir;
    const rows_plan *p = e->p;
    td_expr *c = td_mul(ir, k, td_int(ir, p->G));
    if (e->lane != NULL)
        c = td_add(ir, c, td_var_ref(ir, e->lane));
    if (e->sw != NULL)
        c = td_binary(ir, TD_OP_XOR, c, td_var_ref(ir, e->sw));
    char rn[32], vn[32];
    snprintf(rn, sizeof rn, "red%" PRId64, slot);
    snprintf(vn, sizeof vn, "%s%" PRId64, p->V > 1 ? "v" : "x", slot);
    td_var *red = td_ir_let(ir, rn, TD_I32, td_mul(ir, c, td_int(ir, p->V)));
    td_expr *idx[TD_MAX_RANK];
    td__reduce_src_index(ir, &e->call->src, &p->sh, e->row, red, idx);
    if (p->V > 1)
        return td_ir_let_vector(ir, vn, e->src, e->call->src.ndim, idx,
                                p->V);
    return td_ir_let(ir, vn, e->dt,
                     td_load(ir, e->src, e->call->src.ndim, idx));
}

/* The value of a loaded access: the pairwise tree over a vector's lanes. */
static td_expr *access_value(rows_emit *e, const td_var *v)
{
    td_ir *ir = e->ir;
    if (e->p->V == 1)
        return td_var_ref(ir, v);
    td_expr *t[16];
    int n = e->p->V;
    for (int i = 0; i < n; i++)
        t[i] = td_vec_lane(ir, v, i);
    while (n > 1) {
        for (int i = 0; i < n / 2; i++)
            t[i] = td_combine(ir, e->comb, t[2 * i], t[2 * i + 1]);
        n /= 2;
    }
    return t[0];
}

/* Accesses kb * batch + first + u, u < n: all loads, then all combines,
 * alternating between the accumulators. */
static void fold_batch(rows_emit *e, td_var *acc0, td_var *acc1,
                       const td_var *kb, int64_t batch, int64_t first,
                       int64_t n)
{
    td_ir *ir = e->ir;
    td_var *v[ROWS_BATCH];
    for (int64_t u = 0; u < n; u++)
        v[u] = load_access(e,
                           td_add(ir, td_mul(ir, index_of(ir, kb),
                                             td_int(ir, batch)),
                                  td_int(ir, first + u)),
                           first + u);
    for (int64_t u = 0; u < n; u++) {
        td_var *acc = (u & 1) && acc1 != NULL ? acc1 : acc0;
        td_ir_assign(ir, acc,
                     td_combine(ir, e->comb, td_var_ref(ir, acc),
                                access_value(e, v[u])));
    }
}

/* `acc = comb(acc, <access k of this thread>)`: access k is number
 * k * G + lane of the row (vector or scalar), guarded when the last
 * round is partial. */
static void fold_access(rows_emit *e, td_var *acc, td_expr *k)
{
    td_ir *ir = e->ir;
    const rows_plan *p = e->p;
    td_expr *c = td_mul(ir, k, td_int(ir, p->G));
    if (e->lane != NULL)
        c = td_add(ir, c, td_var_ref(ir, e->lane));
    bool guard = p->Q % p->G != 0;
    if (guard) {
        td_var *cv = td_ir_let(ir, "c", TD_I32, c);
        td_ir_if(ir, td_lt(ir, td_var_ref(ir, cv), td_int(ir, p->Q)));
        c = td_var_ref(ir, cv);
    }
    if (e->sw != NULL)
        c = td_binary(ir, TD_OP_XOR, c, td_var_ref(ir, e->sw));
    td_var *red = td_ir_let(ir, "red", TD_I32,
                            td_mul(ir, c, td_int(ir, p->V)));
    td_expr *idx[TD_MAX_RANK];
    td__reduce_src_index(ir, &e->call->src, &p->sh, e->row, red, idx);
    td_expr *v;
    if (p->V > 1) {
        td_var *vec = td_ir_let_vector(ir, "v", e->src, e->call->src.ndim, idx,
                                       p->V);
        /* Pairwise tree over the lanes. */
        td_expr *t[16];
        int n = p->V;
        for (int i = 0; i < n; i++)
            t[i] = td_vec_lane(ir, vec, i);
        while (n > 1) {
            for (int i = 0; i < n / 2; i++)
                t[i] = td_combine(ir, e->comb, t[2 * i], t[2 * i + 1]);
            n /= 2;
        }
        v = t[0];
    } else {
        v = td_load(ir, e->src, e->call->src.ndim, idx);
    }
    td_ir_assign(ir, acc, td_combine(ir, e->comb, td_var_ref(ir, acc), v));
    if (guard)
        td_ir_end_if(ir);
}

/* The elements past the last whole vector, one per lane. */
static void fold_tail(rows_emit *e, td_var *acc)
{
    td_ir *ir = e->ir;
    const rows_plan *p = e->p;
    if (p->tail == 0)
        return;
    td_var *j = maybe_for(ir, "j", cdiv(p->tail, p->G), TD_LOOP_SERIAL);
    td_expr *off = td_mul(ir, index_of(ir, j), td_int(ir, p->G));
    if (e->lane != NULL)
        off = td_add(ir, off, td_var_ref(ir, e->lane));
    td_var *t = td_ir_let(ir, "t", TD_I32, off);
    td_ir_if(ir, td_lt(ir, td_var_ref(ir, t), td_int(ir, p->tail)));
    td_var *red = td_ir_let(ir, "red", TD_I32,
                            td_add(ir, td_var_ref(ir, t),
                                   td_int(ir, p->Q * p->V)));
    td_expr *idx[TD_MAX_RANK];
    td__reduce_src_index(ir, &e->call->src, &p->sh, e->row, red, idx);
    td_ir_assign(ir, acc,
                 td_combine(ir, e->comb, td_var_ref(ir, acc),
                            td_load(ir, e->src, e->call->src.ndim, idx)));
    td_ir_end_if(ir);
    end_loop(ir, j);
}

/* acc = comb over the `width` lanes of its group: XOR shuffles, full-warp
 * mask. */
static void warp_shuffles(rows_emit *e, const td_var *acc, int64_t width)
{
    td_ir *ir = e->ir;
    for (int64_t m = width / 2; m >= 1; m /= 2) {
        td_expr *a[] = {td_const_u(ir, TD_U32, 0xffffffffu),
                        td_var_ref(ir, acc), td_int(ir, m), td_int(ir, 32)};
        td_ir_assign(ir, acc,
                     td_combine(ir, e->comb, td_var_ref(ir, acc),
                                td_intrinsic(ir, TD_INTRIN_SHFL_XOR, e->dt, 4,
                                             a)));
    }
}

/* dst[row] = value (combined with the old value when accum). */
static void store_dst(rows_emit *e, const td_var *row, td_expr *value)
{
    td_ir *ir = e->ir;
    td_expr *didx[TD_MAX_RANK], *lidx[TD_MAX_RANK];
    td__reduce_dst_index(ir, &e->call->dst, row, didx);
    if (e->call->accum) {
        td__reduce_dst_index(ir, &e->call->dst, row, lidx);
        value = td_combine(ir, e->comb,
                           td_load(ir, e->dst, e->call->dst.ndim, lidx),
                           value);
    }
    td_ir_store(ir, e->dst, e->call->dst.ndim, didx, value);
}

/* Whether this thread's group has a row in this pass: NULL when every
 * one has (S a multiple of the groups, T of G).  A thread past the last
 * whole group has none. */
static td_expr *row_guard(td_ir *ir, const rows_plan *p, const td_var *row,
                          const td_var *grp)
{
    td_expr *has = NULL;
    if (p->S % p->NG != 0)
        has = td_lt(ir, td_var_ref(ir, row), td_int(ir, p->S));
    if (p->T % p->G != 0) {
        td_expr *g = td_lt(ir, td_var_ref(ir, grp), td_int(ir, p->NG));
        has = has == NULL ? g : td_binary(ir, TD_OP_AND, has, g);
    }
    return has;
}

static int emit_rows(const td_call *call, td_combiner comb,
                     const rows_plan *p, td_ir *ir)
{
    const td_buffer *db = td__region_buffer(call, &call->dst);
    const td_buffer *sb = td__region_buffer(call, &call->src);
    rows_emit e = {call, p, comb, db->dtype, ir, NULL, NULL,
                   NULL, NULL, NULL, NULL};
    e.dst = td_ir_buffer(ir, db->name, db->dtype, db->scope, db->ndim,
                         db->shape);
    e.src = td_ir_buffer(ir, sb->name, sb->dtype, sb->scope, sb->ndim,
                         sb->shape);
    int64_t G = p->G, NG = p->NG, S = p->S, T = p->T;
    int64_t W = G > 32 ? G / 32 : 1;
    int64_t passes = cdiv(S, NG);
    int64_t K = cdiv(p->Q, G);

    td_ir_buf *part = NULL;
    if (G > 32)
        part = td_ir_shared_scratch(ir, "red_part", e.dt, p->nwg * S * W);

    td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    if (call->scope != TD_SCOPE_CTA)
        tx = td_mod(ir, tx, td_int(ir, T));
    e.tid = td_ir_let(ir, "tid", TD_I32, tx);
    td_var *grp = e.tid;
    if (G > 1) {
        e.lane = td_ir_let(ir, "lane", TD_I32,
                           td_mod(ir, td_var_ref(ir, e.tid), td_int(ir, G)));
        grp = td_ir_let(ir, "grp", TD_I32,
                        td_div(ir, td_var_ref(ir, e.tid), td_int(ir, G)));
    }

    td_var *step = maybe_for(ir, "step", passes, TD_LOOP_SERIAL);
    e.row = td_ir_let(ir, "row", TD_I32,
                      td_add(ir, td_mul(ir, index_of(ir, step),
                                        td_int(ir, NG)),
                             td_var_ref(ir, grp)));
    /* A warp none of whose groups has a row in this pass skips the pass
     * (it would only shuffle identities); the test is uniform across the
     * warp.  Inside, lanes of a warp that holds rows and non-rows guard
     * their loads and writes. */
    td_expr *has_row = row_guard(ir, p, e.row, grp);
    td_expr *warp_live = NULL;
    bool inner = false;
    if (has_row != NULL && G >= 32) {
        warp_live = has_row;
    } else if (has_row != NULL) {
        int64_t gpw = 32 / G;
        warp_live = td_lt(ir,
                          td_add(ir, td_mul(ir, index_of(ir, step),
                                            td_int(ir, NG)),
                                 td_mul(ir,
                                        td_div(ir, td_var_ref(ir, e.tid),
                                               td_int(ir, 32)),
                                        td_int(ir, gpw))),
                          td_int(ir, S));
        inner = S % gpw != 0;
    }
    if (warp_live != NULL)
        td_ir_if(ir, warp_live);

    td_var *acc0 = td_ir_let(ir, "acc0", e.dt, td_identity(ir, comb, e.dt));
    td_var *acc1 = K + (p->tail > 0) > 1
                       ? td_ir_let(ir, "acc1", e.dt,
                                   td_identity(ir, comb, e.dt))
                       : NULL;
    if (inner)
        td_ir_if(ir, row_guard(ir, p, e.row, grp));
    if (p->swz > 0)
        e.sw = td_ir_let(ir, "sw", TD_I32,
                         td_binary(ir, TD_OP_BITAND,
                                   td_mul(ir, td_var_ref(ir, e.row),
                                          td_int(ir, G)),
                                   td_int(ir, p->swz - 1)));
    if (p->Q % G == 0) {
        /* Whole rounds: batches of loads, then their combines. */
        int64_t batch = K < ROWS_BATCH ? K : ROWS_BATCH;
        int64_t nb = K / batch, rest = K % batch;
        td_var *kb = maybe_for(ir, "kb", nb,
                               nb <= 8 ? TD_LOOP_UNROLL : TD_LOOP_SERIAL);
        fold_batch(&e, acc0, acc1, kb, batch, 0, batch);
        end_loop(ir, kb);
        if (rest > 0)
            fold_batch(&e, acc0, acc1, NULL, batch, nb * batch, rest);
    } else if (K >= 2) {
        /* Accesses 2k and 2k + 1 go to the two accumulators; the last
         * round is guarded. */
        td_var *k = maybe_for(ir, "k", K / 2,
                              K / 2 <= 16 ? TD_LOOP_UNROLL : TD_LOOP_SERIAL);
        fold_access(&e, acc0, td_mul(ir, index_of(ir, k), td_int(ir, 2)));
        fold_access(&e, acc1,
                    td_add(ir, td_mul(ir, index_of(ir, k), td_int(ir, 2)),
                           td_int(ir, 1)));
        end_loop(ir, k);
    }
    if (p->Q % G != 0 && K % 2 != 0)
        fold_access(&e, acc0, td_int(ir, K - 1));
    fold_tail(&e, acc1 != NULL ? acc1 : acc0);
    if (inner)
        td_ir_end_if(ir);
    if (acc1 != NULL)
        td_ir_assign(ir, acc0,
                     td_combine(ir, comb, td_var_ref(ir, acc0),
                                td_var_ref(ir, acc1)));

    /* Every lane of a live warp reaches the shuffles: the mask is the
     * whole warp.  A whole-warp float32 reduction on a chip that has them
     * goes through the tensor core or redux.sync instead (p->fast). */
    if (p->fast != TD_INTRIN_COUNT) {
        td_expr *a[] = {td_var_ref(ir, acc0)};
        td_ir_assign(ir, acc0, td_intrinsic(ir, p->fast, e.dt, 1, a));
    } else {
        warp_shuffles(&e, acc0, G > 32 ? 32 : G);
    }

    td_expr *writer = NULL;
    if (G > 1)
        writer = td_eq(ir,
                       G > 32 ? td_mod(ir, td_var_ref(ir, e.lane),
                                       td_int(ir, 32))
                              : td_var_ref(ir, e.lane),
                       td_int(ir, 0));
    if (inner) {
        td_expr *h = row_guard(ir, p, e.row, grp);
        writer = writer == NULL ? h : td_binary(ir, TD_OP_AND, writer, h);
    }
    if (writer != NULL)
        td_ir_if(ir, writer);
    if (G <= 32) {
        store_dst(&e, e.row, td_var_ref(ir, acc0));
    } else {
        /* partial of warp lane / 32 of the group, per instance */
        td_expr *at = td_add(ir,
                             td_mul(ir, td_var_ref(ir, e.row), td_int(ir, W)),
                             td_div(ir, td_var_ref(ir, e.lane),
                                    td_int(ir, 32)));
        if (p->nwg > 1)
            at = td_add(ir, at,
                        td_mul(ir,
                               td_div(ir,
                                      td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X,
                                                   TD_I32, 0, NULL),
                                      td_int(ir, 128)),
                               td_int(ir, S * W)));
        td_ir_store1(ir, part, at, td_var_ref(ir, acc0));
    }
    if (writer != NULL)
        td_ir_end_if(ir);
    if (warp_live != NULL)
        td_ir_end_if(ir);
    end_loop(ir, step);

    if (G > 32) {
        /* The partials of each row, combined by one thread. */
        td__scope_barrier(call, ir, ROWS_DEFAULT_BARRIER);
        td_var *j = maybe_for(ir, "j", cdiv(S, T), TD_LOOP_SERIAL);
        td_var *r = td_ir_let(ir, "r",
                              TD_I32,
                              td_add(ir, td_mul(ir, index_of(ir, j),
                                                td_int(ir, T)),
                                     td_var_ref(ir, e.tid)));
        if (S % T != 0)
            td_ir_if(ir, td_lt(ir, td_var_ref(ir, r), td_int(ir, S)));
        td_expr *base = td_mul(ir, td_var_ref(ir, r), td_int(ir, W));
        if (p->nwg > 1)
            base = td_add(ir, base,
                          td_mul(ir,
                                 td_div(ir,
                                        td_intrinsic(ir,
                                                     TD_INTRIN_THREAD_IDX_X,
                                                     TD_I32, 0, NULL),
                                        td_int(ir, 128)),
                                 td_int(ir, S * W)));
        td_var *bv = td_ir_let(ir, "base", TD_I32, base);
        /* A pairwise tree: log2(W) dependent combines, not W - 1 (with
         * one block per SM the combine is on the critical path). */
        td_expr *t[ROWS_MAX_THREADS / 32];
        for (int64_t w = 0; w < W; w++)
            t[w] = td_load1(ir, part,
                            w == 0 ? td_var_ref(ir, bv)
                                   : td_add(ir, td_var_ref(ir, bv),
                                            td_int(ir, w)));
        for (int64_t n = W; n > 1; n /= 2)
            for (int64_t i = 0; i < n / 2; i++)
                t[i] = td_combine(ir, comb, t[2 * i], t[2 * i + 1]);
        td_var *tot = td_ir_let(ir, "total", e.dt, t[0]);
        store_dst(&e, r, td_var_ref(ir, tot));
        if (S % T != 0)
            td_ir_end_if(ir);
        end_loop(ir, j);
    }
    td__scope_barrier(call, ir, ROWS_DEFAULT_BARRIER);
    return td_ir_status(ir);
}

static int rows_emit_fn(const td_call *call, const td_op_desc *op,
                        const void *plan, td_ir *ir, void *user,
                        td_reason *why)
{
    (void)user;
    const rows_plan *p = plan;
    int rc = td__reduce_emit_start("shared_rows", plan, op, why);
    return rc != 0 ? rc : emit_rows(call, op->combiner, p, ir);
}

const td_impl_desc td__variant_shared_rows = {
    .name = "shared_rows",
    .emit = rows_emit_fn,
    .preds = rows_preds,
    .npreds = sizeof(rows_preds) / sizeof(rows_preds[0]),
    .plan = rows_plan_fn,
    .plan_size = sizeof(rows_plan),
    .plan_pred = "shared_rows_valid",
};
