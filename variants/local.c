/*
 * The `local` variant module: reductions whose source and destination are
 * both register (local) buffers (upstream reduction/local.py).  What it
 * asks of the register layouts (the per-dimension thread/local split, the
 * shuffle masks, the dst-layout check, the warp shuffle pattern) is in
 * local_layout.c.
 *
 * Three paths, as upstream:
 * (A) thread scope: a plain sequential reduction over each thread's own
 *     elements (reduce_common.c);
 * (B) warp scope, src sharded over the 32 lanes and dst replicated over
 *     groups of adjacent lanes: per register slot a copy and a warp reduce
 *     (XOR butterfly, full mask) over the group width;
 * (C) warp and warpgroup scope, the general view path: per dst register,
 *     a local loop over the reduced per-thread elements, then (warp scope,
 *     config thread_reduce) XOR shuffles over the lanes of the reduced dims.
 *
 * Registers are indexed physically: the emitted body declares each register
 * buffer as a 1-D array of the layout's register slots (1 + the largest m
 * coordinate) and turns logical per-thread coordinates into slots through
 * the layout's memory iters (its storage layout), so gapped and permuted
 * register layouts are right.
 *
 * Deviations from upstream, all on purpose (tirx-reduction.md section 7):
 * - path B honours accum (the old dst is saved and combined after the
 *   shuffle; upstream's documentation promises it, its code ignores it);
 * - path B is taken only when it computes what the call asks for: the
 *   regions are whole buffers, and a brute-force walk over the 32 lanes
 *   checks that each group of lanes combines exactly the source elements
 *   that the reduce axes send to the element the group holds (upstream
 *   ignores axes and regions there).  A call whose layouts match the
 *   shuffle pattern but fail these checks is rejected with the reason;
 * - path C: with thread_reduce, reduced dims may only spread over laneid
 *   with power-of-two strides (distinct lane bits below 32); spatial dims
 *   must map to the same threads in src and dst; the src index of a
 *   spatial dim is the src region's own start plus the offset inside the
 *   dst region (upstream adds the dst start); a dst of another rank than
 *   src takes the spatial dims in order (upstream indexes past its map);
 * - in place (dst is src) together with accum is rejected at warp and
 *   warpgroup scope: the old dst is the source itself, and upstream's
 *   code then counts a lane's own partial twice (quirk 7.13);
 * - no failure escapes a predicate: every one is a rejection with a reason.
 */
#include <inttypes.h>
#include <string.h>

#include "local_layout.h"
#include "reduce_common.h"
#include "variants.h"

/* Register slots per thread a warp / warpgroup register buffer may use
 * (hardware has 255 registers; this is generous and keeps tables small). */
#define LV_MAX_SLOTS 4096
/* Loop extents are printed as int. */
#define LV_INDEX_MAX INT32_MAX
/* Register slots per lane of the shuffle path, whose check walks a table
 * of (lane, slot) -> element on the stack (predicates do not allocate). */
#define LV_SHUFFLE_MAX_SLOTS 256
/* Lane masks of one thread_reduce (at most log2(32) distinct bits). */
#define LV_MAX_MASKS 32

static bool thread_reduce_of(const td_call *call)
{
    return td_call_config_bool(call, "thread_reduce", false);
}

static bool region_is_full(const td_region *r, const td_buffer *b)
{
    for (int d = 0; d < b->ndim; d++)
        if (r->start[d] != 0 || r->extent[d] != b->shape[d])
            return false;
    return true;
}

static bool region_in_bounds(const td_region *r, const td_buffer *b)
{
    if (b->ndim < 1 || b->ndim > TD_MAX_RANK)
        return false;
    for (int d = 0; d < b->ndim; d++)
        if (b->shape[d] < 1 || b->shape[d] > TD_MAX_EXTENT ||
            r->extent[d] < 1 || r->start[d] < 0 ||
            r->start[d] > b->shape[d] - r->extent[d])
            return false;
    return true;
}

static bool same_region(const td_region *a, const td_region *b)
{
    if (a->buffer != b->buffer || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim && d < TD_MAX_RANK; d++)
        if (a->start[d] != b->start[d] || a->extent[d] != b->extent[d])
            return false;
    return true;
}

/* ---- coordinates: ((v / div) % mod) + add ------------------------------ */

/*
 * One per-thread coordinate as a function of a loop variable.  Kept
 * symbolic so that the slot arithmetic can fold divisions into one another
 * and drop a modulo whose dividend never reaches the modulus; the same
 * description is evaluated numerically by the checks.
 */
typedef struct lv_coord {
    const td_var *v;   /* NULL: the constant `add` */
    int64_t vlim;      /* v takes values 0 .. vlim-1 */
    int64_t div;       /* >= 1 */
    int64_t mod;       /* 0: none */
    int64_t add;
} lv_coord;

static lv_coord coord_const(int64_t c)
{
    return (lv_coord){NULL, 1, 1, 0, c};
}

/* 1 + the largest value of (v / div) % mod, without the add. */
static int64_t coord_span(const lv_coord *c)
{
    if (c->v == NULL)
        return 1;
    int64_t q = (c->vlim - 1) / c->div + 1;
    if (c->mod > 0 && c->mod < q)
        q = c->mod;
    return q;
}

static td_expr *coord_expr(td_ir *ir, const lv_coord *c)
{
    if (c->v == NULL)
        return td_int(ir, c->add);
    td_expr *e = td_var_ref(ir, c->v);
    if (c->div > 1)
        e = td_div(ir, e, td_int(ir, c->div));
    if (c->mod > 0 && (c->vlim - 1) / c->div + 1 > c->mod)
        e = td_mod(ir, e, td_int(ir, c->mod));
    if (c->add != 0)
        e = td_add(ir, e, td_int(ir, c->add));
    return e;
}

/* The digit (c / inner) % ext of coordinate c, as a coordinate when that
 * stays of the form above (always when c has no add). */
static bool coord_digit(const lv_coord *c, int64_t inner, int64_t ext,
                        lv_coord *out)
{
    if (c->v == NULL) {
        *out = coord_const(c->add / inner % ext);
        return true;
    }
    if (c->add != 0 || (c->mod > 0 && c->mod % inner != 0))
        return false;
    lv_coord d = *c;
    d.div = c->div * inner; /* both bounded by the register count */
    int64_t m = c->mod > 0 ? c->mod / inner : 0;
    if (m == 0 || m % ext == 0)
        d.mod = ext;
    else if (m <= ext)
        d.mod = m;
    else
        return false;
    if (coord_span(&d) <= 1) {
        *out = coord_const(0);
        return true;
    }
    *out = d;
    return true;
}

/* ---- register slots of a buffer ---------------------------------------- */

/* The memory iters of one local dim, outer first, unit iters dropped. */
typedef struct lv_digits {
    int n;
    int64_t ext[TD_MAX_LAYOUT_ITERS];
    int64_t stride[TD_MAX_LAYOUT_ITERS];
} lv_digits;

static void digits_add(lv_digits *dg, const td_iter *it)
{
    if (it->axis != TD_AXIS_M || it->extent == 1 ||
        dg->n >= TD_MAX_LAYOUT_ITERS)
        return;
    dg->ext[dg->n] = it->extent;
    dg->stride[dg->n] = it->stride;
    dg->n++;
}

/* Slot offset of local coordinate value x along one local dim. */
static int64_t digits_eval(const lv_digits *dg, int64_t x)
{
    int64_t slot = 0, inner = 1;
    for (int i = dg->n - 1; i >= 0; i--) {
        slot += (x / inner % dg->ext[i]) * dg->stride[i];
        inner *= dg->ext[i];
    }
    return slot;
}

/* Appends the slot offset of coordinate c along one local dim to acc,
 * outer iter first. */
static td_expr *digits_expr(td_ir *ir, const lv_digits *dg, const lv_coord *c,
                            td_expr *acc)
{
    for (int i = 0; i < dg->n; i++) {
        int64_t inner = 1;
        for (int k = i + 1; k < dg->n; k++)
            inner *= dg->ext[k]; /* bounded by the register count */
        lv_coord d;
        td_expr *term;
        if (coord_digit(c, inner, dg->ext[i], &d)) {
            if (d.v == NULL && d.add == 0)
                continue;
            term = coord_expr(ir, &d);
        } else {
            /* General form: ((c / inner) % ext); the modulo is needed
             * unless c stays below inner * ext. */
            term = coord_expr(ir, c);
            if (inner > 1)
                term = td_div(ir, term, td_int(ir, inner));
            if (coord_span(c) + c->add > inner * dg->ext[i])
                term = td_mod(ir, term, td_int(ir, dg->ext[i]));
        }
        if (dg->stride[i] != 1)
            term = td_mul(ir, term, td_int(ir, dg->stride[i]));
        acc = acc == NULL ? term : td_add(ir, acc, term);
    }
    return acc;
}

/* A register buffer seen through its layout, grouped by its shape. */
typedef struct lv_buf {
    const td_buffer *b;
    const td_region *r;
    td_local_dim dims[TD_MAX_RANK];
    int lmap[TD_MAX_RANK];         /* local dim of each dim, -1 pure thread */
    td_lay_local loc;              /* the region's per-thread box */
    lv_digits dig[TD_MAX_RANK];    /* per local dim */
    int64_t moff;                  /* m offset */
    int64_t nslots;                /* 1 + the largest m coordinate */
} lv_buf;

/* Slot expression of the local coordinates c[0 .. loc.ndim-1]. */
static td_expr *slot_expr(td_ir *ir, const lv_buf *lb, const lv_coord *c)
{
    td_expr *acc = NULL;
    for (int j = 0; j < lb->loc.ndim; j++)
        acc = digits_expr(ir, &lb->dig[j], &c[j], acc);
    if (acc == NULL)
        return td_int(ir, lb->moff);
    return lb->moff != 0 ? td_add(ir, acc, td_int(ir, lb->moff)) : acc;
}

static int64_t slot_eval(const lv_buf *lb, const int64_t *x)
{
    int64_t slot = lb->moff;
    for (int j = 0; j < lb->loc.ndim; j++)
        slot += digits_eval(&lb->dig[j], x[j]);
    return slot;
}

/* The register slot count of a layout, or a reason. */
static bool layout_slots(const td_buffer *b, const char *role, int64_t *n,
                         td_reason *why)
{
    int64_t nthr = 0, nslots = 0;
    if (td__lay_bounds(&b->layout, &nthr, &nslots) != 0) {
        td_reason_set(why, "layout of %s cannot be mapped to threads and "
                      "registers", role);
        return false;
    }
    if (nslots > LV_MAX_SLOTS) {
        td_reason_set(why, "layout of %s needs %" PRId64 " registers per "
                      "thread (at most %d)", role, nslots, LV_MAX_SLOTS);
        return false;
    }
    *n = nslots;
    return true;
}

/* Upstream's per-buffer view checks, in its order, then the grouping this
 * module indexes registers with. */
static bool lv_buf_init(const td_call *call, const td_region *r,
                        const char *role, lv_buf *lb, td_reason *why)
{
    const td_buffer *b = td__region_buffer(call, r);
    const td_layout *l = &b->layout;
    memset(lb, 0, sizeof *lb);
    lb->b = b;
    lb->r = r;
    for (int i = 0; i < l->nshard; i++)
        if (td_axis_is_thread(l->shard[i].axis) && l->shard[i].stride == 0 &&
            l->shard[i].extent > 1) {
            td_reason_set(why, "thread dim with zero stride in %s", role);
            return false;
        }
    for (int i = 0; i < l->nrep; i++)
        if (td_axis_is_thread(l->rep[i].axis)) {
            td_reason_set(why, "thread axis in replica for %s", role);
            return false;
        }
    if (!region_in_bounds(r, b) ||
        td__lay_local_region(l, b->shape, b->ndim, r->start, r->extent,
                             &lb->loc, NULL, 0) != 0) {
        td_reason_set(why, "get_local_region failed for %s", role);
        return false;
    }
    td_layout g;
    int seps[TD_MAX_RANK + 1];
    if (td__lay_group(l, b->shape, b->ndim, &g, seps) != 0 ||
        td__local_analyze_dims(l, b->shape, b->ndim, lb->dims) != 0) {
        td_reason_set(why, "get_local_region failed for %s", role);
        return false;
    }
    int j = 0;
    for (int d = 0; d < b->ndim; d++) {
        lb->lmap[d] = lb->dims[d].has_local ? j++ : -1;
        if (lb->lmap[d] < 0)
            continue;
        for (int i = seps[d]; i < seps[d + 1]; i++)
            digits_add(&lb->dig[lb->lmap[d]], &g.shard[i]);
    }
    /* local_region and the grouping agree on which dims are local. */
    if (j != (lb->loc.ndim == 1 && j == 0 ? 0 : lb->loc.ndim)) {
        td_reason_set(why, "get_local_region failed for %s", role);
        return false;
    }
    lb->moff = g.offset[TD_AXIS_M];
    return layout_slots(b, role, &lb->nslots, why);
}

/* ---- shared call analysis ---------------------------------------------- */

typedef struct lv_axes {
    int nreduce, reduce[TD_MAX_RANK];
    int nspatial, spatial[TD_MAX_RANK];
    bool is_red[TD_MAX_RANK];
    bool same_rank;               /* dst keeps the src rank */
    int dst_dim[TD_MAX_RANK];     /* dst dim of each spatial src dim */
} lv_axes;

static bool lv_axes_init(const td_call *call, lv_axes *ax, td_reason *why)
{
    char msg[TD_REASON_MAX];
    msg[0] = '\0';
    memset(ax, 0, sizeof *ax);
    if (td_call_axes(call, ax->reduce, &ax->nreduce, ax->spatial,
                     &ax->nspatial, msg, sizeof msg) != 0) {
        td_reason_set(why, "%s", msg[0] != '\0' ? msg : "invalid reduce axes");
        return false;
    }
    int sn = call->src.ndim, dn = call->dst.ndim;
    if (ax->nreduce < 0 || ax->nspatial < 0 ||
        ax->nreduce + ax->nspatial != sn) {
        td_reason_set(why, "invalid reduce axes");
        return false;
    }
    for (int i = 0; i < ax->nreduce; i++) {
        if (ax->reduce[i] < 0 || ax->reduce[i] >= sn) {
            td_reason_set(why, "invalid reduce axes");
            return false;
        }
        ax->is_red[ax->reduce[i]] = true;
    }
    for (int d = 0; d < TD_MAX_RANK; d++)
        ax->dst_dim[d] = -1;
    if (dn == sn) {
        ax->same_rank = true;
        for (int i = 0; i < ax->nspatial; i++)
            ax->dst_dim[ax->spatial[i]] = ax->spatial[i];
    } else if (dn == ax->nspatial) {
        for (int i = 0; i < ax->nspatial; i++)
            ax->dst_dim[ax->spatial[i]] = i;
    } else {
        td_reason_set(why,
                      "dst rank %d is neither the src rank %d nor its %d "
                      "spatial dims",
                      dn, sn, ax->nspatial);
        return false;
    }
    return true;
}

/* ---- path B: shard -> replica shuffle ---------------------------------- */

typedef struct lv_shuffle {
    int64_t width;
    int64_t elems;                 /* register values per lane */
    lv_buf s, d;                   /* only dig[0], moff, nslots are used */
} lv_shuffle;

/* The storage order of a layout as one local dim: logical per-thread slot
 * k -> register, through the memory iters in shard order. */
static bool storage_digits(const td_buffer *b, const char *role, lv_buf *lb,
                           td_reason *why)
{
    td_layout st;
    memset(lb, 0, sizeof *lb);
    lb->b = b;
    if (td__lay_storage(&b->layout, &st) != 0) {
        td_reason_set(why, "layout of %s has no storage layout", role);
        return false;
    }
    for (int i = 0; i < st.nshard; i++)
        digits_add(&lb->dig[0], &st.shard[i]);
    lb->loc.ndim = 1;
    lb->moff = st.offset[TD_AXIS_M];
    return layout_slots(b, role, &lb->nslots, why);
}

/* Owner table callback: tab[lane * nslots + slot] = element. */
typedef struct lv_owner {
    int16_t *tab;
    int64_t nslots;
    int64_t elem;
    bool bad;
} lv_owner;

static int lv_owner_cb(void *u, int64_t tid, int64_t slot)
{
    lv_owner *o = u;
    if (tid < 0 || tid >= 32 || slot < 0 || slot >= o->nslots) {
        o->bad = true;
        return TD_EINVAL;
    }
    int16_t *cell = &o->tab[tid * o->nslots + slot];
    if (*cell >= 0 && *cell != (int16_t)o->elem) {
        o->bad = true;
        return TD_EINVAL;
    }
    *cell = (int16_t)o->elem;
    return 0;
}

/* Fills tab (32 * nslots, -1 = empty) with the owners of every element;
 * false when an element lies outside the warp or two share a register. */
static bool owner_table(const td_buffer *b, int64_t nslots, int16_t *tab)
{
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++)
        n *= b->shape[d]; /* bounded by the caller */
    for (int64_t i = 0; i < 32 * nslots; i++)
        tab[i] = -1;
    lv_owner o = {tab, nslots, 0, false};
    for (int64_t e = 0; e < n; e++) {
        o.elem = e;
        if (td__lay_owner_slots(&b->layout, e, lv_owner_cb, &o) != 0 || o.bad)
            return false;
    }
    return true;
}

/* The spatial position of src element e (row-major over the spatial dims)
 * and of dst element e. */
static int64_t src_spatial(const td_buffer *b, const lv_axes *ax, int64_t e)
{
    int64_t c[TD_MAX_RANK], pos = 0;
    for (int d = b->ndim - 1; d >= 0; d--) {
        c[d] = e % b->shape[d];
        e /= b->shape[d];
    }
    for (int i = 0; i < ax->nspatial; i++)
        pos = pos * b->shape[ax->spatial[i]] + c[ax->spatial[i]];
    return pos;
}

static int64_t dst_spatial(const td_buffer *b, const lv_axes *ax, int64_t e)
{
    if (!ax->same_rank)
        return e;
    return src_spatial(b, ax, e);
}

/* Element count of a buffer, or -1 above `cap`. */
static int64_t buf_elems(const td_buffer *b, int64_t cap)
{
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++) {
        n = td__mul_sat(n, b->shape[d]);
        if (n > cap)
            return -1;
    }
    return n;
}

/*
 * Checks by brute force, over the 32 lanes, that the shuffle path computes
 * the call: every dst register the shuffle writes holds one dst element
 * (or none), the lanes of its group hold, in the matching src register,
 * exactly the src elements that the reduce axes send to that element, and
 * every owner of every dst element is written.
 */
static bool shuffle_semantics(const lv_shuffle *sp, const lv_axes *ax,
                              td_reason *why)
{
    const td_buffer *sb = sp->s.b, *db = sp->d.b;
    int64_t se = buf_elems(sb, 32 * LV_SHUFFLE_MAX_SLOTS);
    int64_t de = buf_elems(db, 32 * LV_SHUFFLE_MAX_SLOTS);
    int64_t red_len = 1, spa_len = 1;
    for (int i = 0; i < ax->nreduce; i++)
        red_len *= sb->shape[ax->reduce[i]];
    for (int i = 0; i < ax->nspatial; i++)
        spa_len *= sb->shape[ax->spatial[i]];
    if (se < 0 || de < 0) {
        td_reason_set(why, "shuffle reduction: buffers too large");
        return false;
    }
    if (ax->same_rank) {
        for (int i = 0; i < ax->nspatial; i++) {
            int d = ax->spatial[i];
            if (db->shape[d] != sb->shape[d]) {
                td_reason_set(why, "shuffle reduction: dst shape does not "
                              "match the spatial dims of src");
                return false;
            }
        }
    } else if (de != spa_len) {
        td_reason_set(why, "shuffle reduction: dst shape does not match the "
                      "spatial dims of src");
        return false;
    }
    if (red_len != sp->width) {
        td_reason_set(why,
                      "shuffle reduction combines %" PRId64
                      " lanes, the reduce axes %" PRId64 " elements",
                      sp->width, red_len);
        return false;
    }
    /* Element numbers fit int16: at most 32 lanes x LV_SHUFFLE_MAX_SLOTS. */
    int64_t ns = sp->s.nslots, nd = sp->d.nslots;
    int16_t stab[32 * LV_SHUFFLE_MAX_SLOTS], dtab[32 * LV_SHUFFLE_MAX_SLOTS];
    bool written[LV_SHUFFLE_MAX_SLOTS];
    if (ns > LV_SHUFFLE_MAX_SLOTS || nd > LV_SHUFFLE_MAX_SLOTS ||
        se > 32 * LV_SHUFFLE_MAX_SLOTS || de > 32 * LV_SHUFFLE_MAX_SLOTS) {
        td_reason_set(why, "shuffle reduction: more than %d registers per "
                      "lane", LV_SHUFFLE_MAX_SLOTS);
        return false;
    }
    if (!owner_table(sb, ns, stab) || !owner_table(db, nd, dtab)) {
        td_reason_set(why, "shuffle reduction: a layout puts elements outside "
                      "the warp or two in one register");
        return false;
    }
    int64_t nrep = 0;
    if (td__lay_replica_count(&sb->layout, &nrep) != 0 || nrep != 1) {
        td_reason_set(why, "shuffle reduction: src layout has replicas");
        return false;
    }
    memset(written, 0, sizeof written);
    for (int64_t k = 0; k < sp->elems; k++) {
        int64_t ss = slot_eval(&sp->s, &k), ds = slot_eval(&sp->d, &k);
        if (ss < 0 || ss >= ns || ds < 0 || ds >= nd) {
            td_reason_set(why, "shuffle reduction: storage slot out of range");
            return false;
        }
        written[ds] = true;
        for (int64_t t = 0; t < 32; t++) {
            int ed = dtab[t * nd + ds];
            if (ed < 0)
                continue;
            int64_t want = dst_spatial(db, ax, ed);
            for (int64_t u = t / sp->width * sp->width;
                 u < (t / sp->width + 1) * sp->width; u++) {
                int es = stab[u * ns + ss];
                if (es < 0 || src_spatial(sb, ax, es) != want) {
                    td_reason_set(why,
                                  "shuffle reduction: the lanes it combines do "
                                  "not match the reduce axes");
                    return false;
                }
            }
        }
    }
    for (int64_t t = 0; t < 32; t++)
        for (int64_t s = 0; s < nd; s++)
            if (dtab[t * nd + s] >= 0 && !written[s]) {
                td_reason_set(why, "shuffle reduction: dst register %" PRId64
                              " is not written", s);
                return false;
            }
    return true;
}

/*
 * 1: the layouts are the shuffle pattern and the call passes every check
 * of path B (sp filled); 0: not the pattern (the view path decides);
 * -1: the pattern, but a check failed (reason in why).
 */
static int shuffle_plan(const td_call *call, lv_shuffle *sp, td_reason *why)
{
    const td_buffer *sb = td__region_buffer(call, &call->src);
    const td_buffer *db = td__region_buffer(call, &call->dst);
    memset(sp, 0, sizeof *sp);
    if (td__local_analyze_shuffle(&sb->layout, &db->layout, &sp->width,
                                  &sp->elems, NULL, 0) != 0)
        return 0;
    if (!region_is_full(&call->src, sb) || !region_is_full(&call->dst, db)) {
        td_reason_set(why, "shuffle reduction needs whole-buffer regions");
        return -1;
    }
    if (call->accum && call->src.buffer == call->dst.buffer) {
        td_reason_set(why, "accum with an in-place reduction is not "
                      "supported (dst is the source)");
        return -1;
    }
    lv_axes ax;
    if (!lv_axes_init(call, &ax, why) ||
        !storage_digits(sb, "src", &sp->s, why) ||
        !storage_digits(db, "dst", &sp->d, why))
        return -1;
    if (!shuffle_semantics(sp, &ax, why))
        return -1;
    return 1;
}

/* ---- path C: the view path --------------------------------------------- */

typedef struct lv_view {
    lv_buf s, d;
    lv_axes ax;
    bool in_place, shuffle, save;
    int64_t D, R;
    /* where each src local dim's coordinate comes from */
    int kind[TD_MAX_RANK];         /* 0 reduced, 1 a dst local dim, 2 const */
    int arg[TD_MAX_RANK];          /* reduced component or dst local dim */
    int nred;
    int64_t red_ext[TD_MAX_RANK], red_st[TD_MAX_RANK];
    int nmasks;
    int64_t masks[LV_MAX_MASKS];
} lv_view;

/* The thread iters of a dim without unit iters, contiguous same-axis
 * neighbours fused, for comparing two dims' thread maps. */
static int thread_norm(const td_local_dim *di, td_iter *out)
{
    int n = 0;
    for (int i = 0; i < di->nthread && i < TD_MAX_LAYOUT_ITERS; i++) {
        td_iter it = di->thread[i];
        int64_t span;
        if (it.extent == 1)
            continue;
        if (n > 0 && out[n - 1].axis == it.axis &&
            !__builtin_mul_overflow(it.extent, it.stride, &span) &&
            span == out[n - 1].stride &&
            !__builtin_mul_overflow(out[n - 1].extent, it.extent, &span)) {
            out[n - 1].extent *= it.extent;
            out[n - 1].stride = it.stride;
            continue;
        }
        out[n++] = it;
    }
    return n;
}

static bool same_threads(const td_local_dim *a, const td_local_dim *b)
{
    td_iter x[TD_MAX_LAYOUT_ITERS], y[TD_MAX_LAYOUT_ITERS];
    int nx = thread_norm(a, x), ny = thread_norm(b, y);
    if (nx != ny)
        return false;
    for (int i = 0; i < nx; i++)
        if (x[i].extent != y[i].extent || x[i].stride != y[i].stride ||
            x[i].axis != y[i].axis)
            return false;
    return true;
}

static bool view_masks(const td_call *call, lv_view *v, td_reason *why)
{
    const td_buffer *sb = v->s.b;
    for (int r = 0; r < v->ax.nreduce; r++) {
        const td_local_dim *di = &v->s.dims[v->ax.reduce[r]];
        for (int i = 0; i < di->nthread; i++)
            if (di->thread[i].extent > 1 &&
                di->thread[i].axis != TD_AXIS_LANEID) {
                td_reason_set(why, "thread_reduce needs reduced dims spread "
                              "over laneid only, found %s",
                              td_axis_name(di->thread[i].axis));
                return false;
            }
    }
    if (td__local_shuffle_masks(v->s.dims, sb->ndim, v->ax.reduce,
                                v->ax.nreduce, v->masks, &v->nmasks,
                                LV_MAX_MASKS) != 0) {
        td_reason_set(why, "thread_reduce lane masks must be distinct powers "
                      "of two below 32");
        return false;
    }
    for (int i = 0; i < v->nmasks; i++) {
        int64_t m = v->masks[i];
        if (m <= 0 || m >= 32 || (m & (m - 1)) != 0 ||
            (i > 0 && v->masks[i - 1] == m)) {
            td_reason_set(why, "thread_reduce lane masks must be distinct "
                          "powers of two below 32");
            return false;
        }
    }
    (void)call;
    return true;
}

static bool view_plan(const td_call *call, lv_view *v, td_reason *why)
{
    const td_buffer *sb = td__region_buffer(call, &call->src);
    const td_buffer *db = td__region_buffer(call, &call->dst);
    memset(v, 0, sizeof *v);
    if (!lv_buf_init(call, &call->src, "src", &v->s, why) ||
        !lv_buf_init(call, &call->dst, "dst", &v->d, why) ||
        !lv_axes_init(call, &v->ax, why))
        return false;
    char msg[TD_REASON_MAX];
    msg[0] = '\0';
    if (td__local_validate_reduction(&sb->layout, &db->layout, sb->shape,
                                     sb->ndim, db->shape, db->ndim,
                                     v->ax.reduce, v->ax.nreduce, msg,
                                     sizeof msg) != 0) {
        td_reason_set(why, "%s", msg[0] != '\0'
                                     ? msg
                                     : "mismatch dst/src layout for reduction");
        return false;
    }
    v->in_place = call->src.buffer == call->dst.buffer;
    if (v->in_place && call->accum) {
        td_reason_set(why, "accum with an in-place reduction is not "
                      "supported (dst is the source)");
        return false;
    }
    if (v->in_place && !same_region(&call->src, &call->dst)) {
        td_reason_set(why, "in-place reduction needs the same region for dst "
                      "and src");
        return false;
    }
    /* A src local dim no dim feeds (no local dims at all) reads its start. */
    for (int j = 0; j < TD_MAX_RANK; j++)
        v->kind[j] = 2;
    /* Spatial dims: same threads, same per-thread extent; each src local
     * dim learns where its coordinate comes from. */
    bool fed[TD_MAX_RANK] = {false};
    v->R = 1;
    for (int d = 0; d < sb->ndim; d++) {
        int j = v->s.lmap[d];
        if (!v->ax.is_red[d]) {
            int dd = v->ax.dst_dim[d];
            if (dd < 0 || dd >= db->ndim ||
                !same_threads(&v->s.dims[d], &v->d.dims[dd])) {
                td_reason_set(why, "src and dst map spatial dim %d to "
                              "different threads", d);
                return false;
            }
            if (j < 0)
                continue;
            int jd = v->d.lmap[dd];
            if (jd >= 0 && v->d.loc.extent[jd] == v->s.loc.extent[j]) {
                v->kind[j] = 1;
                v->arg[j] = jd;
                fed[jd] = true;
            } else if (v->s.loc.extent[j] == 1 &&
                       (jd < 0 || v->d.loc.extent[jd] == 1)) {
                v->kind[j] = 2;
            } else {
                td_reason_set(why, "src and dst regions differ in spatial "
                              "dim %d", d);
                return false;
            }
            continue;
        }
        if (j < 0)
            continue;
        v->kind[j] = 0;
        v->arg[j] = v->nred;
        v->red_ext[v->nred] = v->s.loc.extent[j];
        v->red_st[v->nred] = v->s.loc.start[j];
        v->R = td__mul_sat(v->R, v->s.loc.extent[j]);
        v->nred++;
    }
    v->D = 1;
    for (int j = 0; j < v->d.loc.ndim; j++) {
        if (v->d.loc.extent[j] > 1 && !fed[j]) {
            td_reason_set(why, "dst local dim %d has no matching src dim", j);
            return false;
        }
        v->D = td__mul_sat(v->D, v->d.loc.extent[j]);
    }
    if (v->D > LV_INDEX_MAX || v->R > LV_INDEX_MAX) {
        td_reason_set(why, "reduction too large for 32-bit loop indices");
        return false;
    }
    if (thread_reduce_of(call) && call->scope == TD_SCOPE_WARP &&
        !view_masks(call, v, why))
        return false;
    v->shuffle = v->nmasks > 0;
    v->save = call->accum && v->shuffle;
    return true;
}

/* ---- the predicate ------------------------------------------------------ */

/*
 * Which path a warp / warpgroup call takes: 'B' (sp filled), 'C' (v
 * filled), or 0 with a reason.  v and sp may be NULL when only the answer
 * is wanted.
 */
static int local_path(const td_call *call, lv_shuffle *sp, lv_view *v,
                      td_reason *why)
{
    const td_buffer *dst = td__region_buffer(call, &call->dst);
    const td_buffer *src = td__region_buffer(call, &call->src);
    if (call->scope == TD_SCOPE_WARPGROUP && thread_reduce_of(call)) {
        td_reason_set(why, "thread_reduce=True is only supported in warp "
                      "scope; warpgroup local reduction is thread-local only");
        return 0;
    }
    if (!dst->has_layout || !src->has_layout) {
        td_reason_set(why, "layouts required for view-based local reduction");
        return 0;
    }
    if (dst->layout.swizzle || src->layout.swizzle) {
        td_reason_set(why, "swizzle layout unsupported for local reduction");
        return 0;
    }
    char msg[TD_REASON_MAX];
    msg[0] = '\0';
    if (td__lay_check(&src->layout, msg, sizeof msg) != 0 ||
        td__lay_check(&dst->layout, msg, sizeof msg) != 0) {
        td_reason_set(why, "invalid layout: %s", msg);
        return 0;
    }
    if (call->scope == TD_SCOPE_WARP) {
        lv_shuffle tmp_sp;
        int rc = shuffle_plan(call, sp != NULL ? sp : &tmp_sp, why);
        if (rc != 0)
            return rc > 0 ? 'B' : 0;
    }
    if (v != NULL)
        return view_plan(call, v, why) ? 'C' : 0;
    /* About 13 KiB on the stack: predicates do not allocate. */
    lv_view tmp;
    return view_plan(call, &tmp, why) ? 'C' : 0;
}

/* What local_valid works out, handed to the emitter: the path ('A'
 * thread-wise, 'B' warp shuffle, 'C' layout view) and its plan. */
typedef struct local_plan {
    int path;
    td__red_shape sh; /* path A */
    lv_shuffle sp;    /* path B */
    lv_view v;        /* path C */
} local_plan;

/*
 * upstream validate_reduction_local, with these improvements: at thread
 * scope upstream accepts any axes and shapes (bad axes then crash the
 * emitter), while this checks the axes and that the dst holds exactly one
 * element per spatial position, as upstream's documentation claims it
 * does; at warp and warpgroup scope see the header comment.
 */
static bool local_check(const td_call *call, local_plan *p, td_reason *why)
{
    const td_buffer *dst = td__region_buffer(call, &call->dst);
    const td_buffer *src = td__region_buffer(call, &call->src);
    if (dst == NULL || src == NULL) {
        td_reason_set(why, "%s", td__regions_missing(call));
        return false;
    }
    if (!td__name_is(dst->scope, "local") || !td__name_is(src->scope, "local") ||
        !td__name_is(call->target, "cuda")) {
        td_reason_set(why, "expected local scope and CUDA target");
        return false;
    }
    if (dst->dtype != src->dtype) {
        td_reason_set(why, "dtype mismatch: src=%s dst=%s",
                      td_dtype_name(src->dtype), td_dtype_name(dst->dtype));
        return false;
    }
    switch (call->scope) {
    case TD_SCOPE_THREAD: {
        /* The thread-wise loop indexes registers row-major and reads src
         * while it writes dst. */
        p->path = 'A';
        return td__reduce_shape(call, &p->sh, why) &&
               td__row_major_storage(src, why) &&
               td__row_major_storage(dst, why) &&
               !td__regions_overlap(call, why);
    }
    case TD_SCOPE_WARP:
    case TD_SCOPE_WARPGROUP:
        p->path = local_path(call, &p->sp, &p->v, why);
        return p->path != 0;
    default:
        td_reason_set(why, "unsupported exec_scope %s for local reduction",
                      td_exec_scope_name(call->scope));
        return false;
    }
}

/* The plan function: local_valid's checks, keeping what they found. */
static int local_plan_fn(const td_call *call, const td_op_desc *op,
                         void *plan, void *user, td_reason *why)
{
    (void)op;
    (void)user;
    /* The path's own plan (sh, sp or v) is filled by the check that picks
     * it; the rest is not read. */
    local_plan *p = plan;
    p->path = 0;
    return local_check(call, p, why) ? 0 : TD_EDECLINED;
}

/* The predicate rules files name.  About 13 KiB of plan on the stack:
 * predicates do not allocate. */
static bool local_valid(const td_call *call, const td_args *args, void *user,
                        td_reason *why)
{
    (void)args;
    (void)user;
    local_plan tmp;
    return local_check(call, &tmp, why);
}

static const td_pred_desc local_preds[] = {
    {"local_valid", NULL, 0, local_valid, NULL, NULL},
};

/* ---- emitters ----------------------------------------------------------- */

static td_ir_buf *reg_buffer(td_ir *ir, const td_buffer *b, int64_t nslots)
{
    return td_ir_buffer(ir, b->name, b->dtype, b->scope, 1, &nslots);
}

/*
 * Path B:
 *   for k in serial(elems):
 *       old = dst[slot_d(k)]                      (accum)
 *       dst[slot_d(k)] = src[slot_s(k)]           (unless in place)
 *       dst[slot_d(k)] = warp_reduce(dst[slot_d(k)], op, width)
 *       dst[slot_d(k)] = op(dst[slot_d(k)], old)  (accum)
 */
static int emit_shuffle(const td_call *call, td_combiner comb,
                        const lv_shuffle *sp, td_ir *ir)
{
    const td_buffer *db = sp->d.b, *sb = sp->s.b;
    bool in_place = call->src.buffer == call->dst.buffer;
    td_ir_buf *dbuf = reg_buffer(ir, db, sp->d.nslots);
    td_ir_buf *sbuf = in_place ? dbuf : reg_buffer(ir, sb, sp->s.nslots);
    td_var *k = td_ir_for(ir, "k", td_int(ir, sp->elems), TD_LOOP_SERIAL);
    lv_coord c = {k, sp->elems, 1, 0, 0};
    td_var *old = NULL;
    if (call->accum)
        old = td_ir_let(ir, "old", db->dtype,
                        td_load1(ir, dbuf, slot_expr(ir, &sp->d, &c)));
    if (!in_place)
        td_ir_store1(ir, dbuf, slot_expr(ir, &sp->d, &c),
                     td_load1(ir, sbuf, slot_expr(ir, &sp->s, &c)));
    td_ir_store1(ir, dbuf, slot_expr(ir, &sp->d, &c),
                 td_warp_reduce(ir, comb, (int)sp->width,
                                td_load1(ir, dbuf, slot_expr(ir, &sp->d, &c)),
                                db->dtype));
    if (call->accum)
        td_ir_store1(ir, dbuf, slot_expr(ir, &sp->d, &c),
                     td_combine(ir, comb,
                                td_load1(ir, dbuf, slot_expr(ir, &sp->d, &c)),
                                td_var_ref(ir, old)));
    td_ir_end_for(ir);
    return td_ir_status(ir);
}

/* Row-major digits of a fused loop variable over ext[0..n-1], plus start. */
static void unflatten_coords(const td_var *v, int64_t vlim, int n,
                             const int64_t *ext, const int64_t *start,
                             lv_coord *out)
{
    int64_t inner = 1;
    for (int k = n - 1; k >= 0; k--) {
        if (ext[k] <= 1)
            out[k] = coord_const(start[k]);
        else
            out[k] = (lv_coord){v, vlim, inner, ext[k], start[k]};
        inner *= ext[k];
    }
}

/*
 * Path C (upstream _emit_reduction_local_view):
 *   for spa in serial(D):
 *       old = dst[d]                                  (accum and shuffle)
 *       if not in place:
 *           dst[d] = identity                         (unless plain accum)
 *           for red in serial(R): dst[d] = op(dst[d], src[s(spa, red)])
 *       mask = __activemask()                         (shuffle)
 *       dst[d] = op(dst[d], shfl_xor(mask, dst[d], x, 32)) per lane mask x
 *       dst[d] = op(dst[d], old)                      (accum and shuffle)
 */
static int emit_view(const td_call *call, td_combiner comb, const lv_view *v,
                     td_ir *ir)
{
    const td_buffer *db = v->d.b, *sb = v->s.b;
    if (v->in_place && !v->shuffle) {
        /* Only thread-spread dims are reduced and nothing crosses threads:
         * every thread's dst already holds its own partial. */
        td_ir_comment(ir, "in place, no thread_reduce: nothing to do");
        return td_ir_status(ir);
    }
    td_ir_buf *dbuf = reg_buffer(ir, db, v->d.nslots);
    td_ir_buf *sbuf = v->in_place ? dbuf : reg_buffer(ir, sb, v->s.nslots);
    lv_coord dc[TD_MAX_RANK], sc[TD_MAX_RANK], rc[TD_MAX_RANK];
    td_var *spa = td_ir_for(ir, "spa", td_int(ir, v->D), TD_LOOP_SERIAL);
    unflatten_coords(spa, v->D, v->d.loc.ndim, v->d.loc.extent,
                     v->d.loc.start, dc);
    td_var *old = NULL;
    if (v->save)
        old = td_ir_let(ir, "old", db->dtype,
                        td_load1(ir, dbuf, slot_expr(ir, &v->d, dc)));
    if (!v->in_place) {
        if (v->save || !call->accum)
            td_ir_store1(ir, dbuf, slot_expr(ir, &v->d, dc),
                         td_identity(ir, comb, db->dtype));
        td_var *red = td_ir_for(ir, "red", td_int(ir, v->R), TD_LOOP_SERIAL);
        unflatten_coords(red, v->R, v->nred, v->red_ext, v->red_st, rc);
        for (int j = 0; j < v->s.loc.ndim; j++) {
            if (v->kind[j] == 0) {
                sc[j] = rc[v->arg[j]];
            } else if (v->kind[j] == 1) {
                /* The offset inside the dst region, from the src start. */
                sc[j] = dc[v->arg[j]];
                sc[j].add += v->s.loc.start[j] - v->d.loc.start[v->arg[j]];
            } else {
                sc[j] = coord_const(v->s.loc.start[j]);
            }
        }
        td_ir_store1(ir, dbuf, slot_expr(ir, &v->d, dc),
                     td_combine(ir, comb,
                                td_load1(ir, dbuf, slot_expr(ir, &v->d, dc)),
                                td_load1(ir, sbuf, slot_expr(ir, &v->s, sc))));
        td_ir_end_for(ir);
    }
    if (v->shuffle) {
        td_var *mask = td_ir_let(ir, "mask", TD_U32,
                                 td_intrinsic(ir, TD_INTRIN_ACTIVEMASK, TD_U32,
                                              0, NULL));
        for (int i = 0; i < v->nmasks; i++) {
            td_expr *a[4] = {td_var_ref(ir, mask),
                             td_load1(ir, dbuf, slot_expr(ir, &v->d, dc)),
                             td_int(ir, v->masks[i]), td_int(ir, 32)};
            td_ir_store1(ir, dbuf, slot_expr(ir, &v->d, dc),
                         td_combine(ir, comb,
                                    td_load1(ir, dbuf,
                                             slot_expr(ir, &v->d, dc)),
                                    td_intrinsic(ir, TD_INTRIN_SHFL_XOR,
                                                 db->dtype, 4, a)));
        }
    }
    if (v->save)
        td_ir_store1(ir, dbuf, slot_expr(ir, &v->d, dc),
                     td_combine(ir, comb,
                                td_load1(ir, dbuf, slot_expr(ir, &v->d, dc)),
                                td_var_ref(ir, old)));
    td_ir_end_for(ir);
    return td_ir_status(ir);
}

static int local_emit(const td_call *call, const td_op_desc *op,
                      const void *plan, td_ir *ir, void *user,
                      td_reason *why)
{
    (void)user;
    /* The registry hands over the plan of local_valid's checks, also when
     * the rules bind the impl without its predicate. */
    const local_plan *p = plan;
    int rc = td__reduce_emit_start("local", plan, op, why);
    if (rc != 0)
        return rc;
    switch (p->path) {
    case 'A': {
        int rc = td__reduce_limits(call, op->combiner, &p->sh, why);
        return rc != 0 ? rc : td__emit_thread_wise(call, op->combiner, &p->sh,
                                                   ir);
    }
    case 'B':
        return emit_shuffle(call, op->combiner, &p->sp, ir);
    case 'C':
        return emit_view(call, op->combiner, &p->v, ir);
    default:
        td_reason_set(why, "local plan has no path");
        return TD_EINVAL;
    }
}

const td_impl_desc td__variant_local = {
    .name = "local",
    .emit = local_emit,
    .preds = local_preds,
    .npreds = sizeof(local_preds) / sizeof(local_preds[0]),
    .plan = local_plan_fn,
    .plan_size = sizeof(local_plan),
    .plan_pred = "local_valid",
};
