/*
 * The vec_auto planners: the operand sides, the checks every copy planner
 * shares (TVM's H1-H3), vec_auto's checks (G, R and their composition),
 * the global <-> shared plan (TVM's align_layouts_gs and its vector
 * search) and the register plan (align_layouts_raw, the atoms and
 * _choose_vec_len, with the D2 and D7 fixes).  The ldstmatrix fit is in
 * copy_plan_ldst.c.  Pure layout
 * arithmetic over model/layout.h; the contracts are in copy_plan.h and the
 * design in design/copy/planner.md.
 */
#include <stdio.h>
#include <string.h>

#include "copy_plan.h"

#define WHY(...) td__lay_why(why, whylen, __VA_ARGS__)

/* ---- sides ----------------------------------------------------------- */

int td__copy_side_init(td_copy_side *side, const char *name,
                       const char *scope, td_dtype dtype, int ndim,
                       const int64_t *shape, const int64_t *start,
                       const int64_t *extent, const td_layout *layout,
                       const td_lay_swz *swz)
{
    int rc;

    if (side == NULL || ndim < 1 || ndim > TD_MAX_RANK)
        return TD_EINVAL;
    memset(side, 0, sizeof *side);
    side->name = name;
    side->scope = scope;
    side->dtype = dtype;
    side->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        side->shape[d] = shape[d];
        side->start[d] = start != NULL ? start[d] : 0;
        side->extent[d] = extent != NULL ? extent[d] : shape[d];
        if (shape[d] < 1 || side->start[d] < 0 || side->extent[d] < 1 ||
            side->start[d] > shape[d] - side->extent[d])
            return TD_EINVAL;
    }
    if (layout != NULL) {
        side->tile = *layout;
        td__lay_swz_from_layout(layout, &side->swz);
        side->tile.swizzle = false;
    } else if ((rc = td__lay_row_major(shape, ndim, &side->tile)) < 0) {
        return rc;
    }
    if (swz != NULL)
        side->swz = *swz;
    return td__lay_swz_check(&side->swz);
}

int td__copy_side_from_call(const td_call *call, const td_region *r,
                            td_copy_side *side)
{
    const td_buffer *b = td__region_buffer(call, r);

    if (b == NULL)
        return TD_EINVAL;
    int rc = td__copy_side_init(side, b->name, b->scope, b->dtype, b->ndim,
                                b->shape, r->start, r->extent,
                                b->has_layout ? &b->layout : NULL, NULL);
    if (rc == 0)
        side->block_align = td__region_block_align(call, r);
    return rc;
}

int td__copy_req_from_call(const td_call *call, td_copy_req *q)
{
    const td_region *src;
    int rc;

    if (call == NULL || q == NULL)
        return TD_EINVAL;
    memset(q, 0, sizeof *q);
    q->cuda = td__name_is(call->target, "cuda");
    q->scope = call->scope;
    if (call->launch[TD_LAUNCH_TX].present &&
        !call->launch[TD_LAUNCH_TX].symbolic)
        q->threads_x = call->launch[TD_LAUNCH_TX].extent;
    q->threads_yz = 1;
    for (int t = TD_LAUNCH_TY; t <= TD_LAUNCH_TZ; t++)
        if (call->launch[t].present)
            q->threads_yz = call->launch[t].symbolic
                                ? INT64_MAX
                                : td__mul_sat(q->threads_yz,
                                              call->launch[t].extent);
    if (call->nsrcs < 1 || call->srcs[0].kind != TD_OPERAND_REGION)
        return TD_EINVAL;
    src = &call->srcs[0].region;
    if ((rc = td__copy_side_from_call(call, src, &q->src)) < 0)
        return rc;
    return td__copy_side_from_call(call, &call->dst, &q->dst);
}

bool td__copy_scope_is(const td_copy_side *s, const char *pat)
{
    size_t n = strlen(pat);

    if (s->scope == NULL)
        return false;
    if (n > 0 && pat[n - 1] == '*')
        return strncmp(s->scope, pat, n - 1) == 0;
    return strcmp(s->scope, pat) == 0;
}

const td_copy_side *td__copy_local_side(const td_copy_req *q)
{
    return td__copy_scope_is(&q->src, "local") ? &q->src : &q->dst;
}

const td_copy_side *td__copy_other_side(const td_copy_req *q)
{
    return td__copy_scope_is(&q->src, "local") ? &q->dst : &q->src;
}

/*
 * The side's TileLayout sliced to its region, swizzle stripped (TVM slices
 * the ComposeLayout, whose trivial tile stands for the buffer's row-major
 * order, then _extract_tile).  Not canonicalized.
 */
int td__copy_side_tile(const td_copy_side *s, td_layout *out)
{
    td_layout t = s->tile;
    int64_t size, n = 1;
    int rc;

    if (td__lay_check(&t, NULL, 0) < 0)
        return TD_EINVAL;
    if (s->swz.on && td__lay_is_trivial(&t)) {
        if ((rc = td__lay_size(&t, &size)) < 0)
            return rc;
        for (int d = 0; d < s->ndim; d++)
            n = td__mul_sat(n, s->shape[d]);
        if (size != n && (rc = td__lay_row_major(s->shape, s->ndim, &t)) < 0)
            return rc;
    }
    if ((rc = td__lay_slice(&t, s->shape, s->ndim, s->start, s->extent,
                            out)) < 0)
        return rc;
    return td__lay_strip_swizzle(out, s->extent, s->ndim, out);
}

/* ---- the shared checks (plan section 1.1) ---------------------------- */

int64_t td__copy_thread_count(const td_copy_req *q)
{
    switch (q->scope) {
    case TD_SCOPE_THREAD: return 1;
    case TD_SCOPE_WARP: return 32;
    case TD_SCOPE_WARPGROUP: return 128;
    case TD_SCOPE_CTA: return q->threads_x;
    default: return 0;
    }
}

/* H1 _all_threads_active, with the launch standing for sctx.intra. */
bool td__copy_threads_active(const td_copy_req *q, char *why,
                               size_t whylen)
{
    int64_t tx = q->threads_x;

    if (q->scope == TD_SCOPE_THREAD)
        return true;
    if (q->threads_yz > 1) {
        WHY("a multi-dimensional thread launch (threadIdx.y or threadIdx.z) "
            "is not supported by copy");
        return false;
    }
    if (q->scope == TD_SCOPE_CTA) {
        if (tx <= 0) {
            WHY("cta scope missing threadIdx.x launch_params");
            return false;
        }
        return true;
    }
    if (tx <= 0) {
        WHY("sctx.intra missing 'laneid'");
        return false;
    }
    if (tx < 32) {
        WHY("laneid narrowed to [0, %lld) vs full [0, 32)", (long long)tx);
        return false;
    }
    if (q->scope == TD_SCOPE_WARPGROUP && tx < 128) {
        WHY("wid_in_wg narrowed to [0, %lld) vs full [0, 4)",
            (long long)(tx / 32));
        return false;
    }
    return true;
}

/* H2 validate_copy_op: same dtype, same extents once the 1s are gone. */
bool td__copy_req_valid(const td_copy_req *q, char *why, size_t whylen)
{
    int64_t a[TD_MAX_RANK], b[TD_MAX_RANK];
    int na = 0, nb = 0;

    for (int d = 0; d < q->src.ndim; d++)
        if (q->src.extent[d] != 1)
            a[na++] = q->src.extent[d];
    for (int d = 0; d < q->dst.ndim; d++)
        if (q->dst.extent[d] != 1)
            b[nb++] = q->dst.extent[d];
    if (q->src.dtype != q->dst.dtype || na != nb ||
        memcmp(a, b, sizeof(int64_t) * (size_t)na) != 0) {
        WHY("validate_copy_op failed");
        return false;
    }
    return true;
}

/* H3 _scope_allowed over the pairs "src->dst" (NULL-terminated). */
bool td__copy_scope_allowed(const td_copy_req *q, const char *const *pairs,
                          char *why, size_t whylen)
{
    char list[256] = "";
    size_t used = 0;

    for (int i = 0; pairs[i] != NULL; i += 2) {
        if (td__copy_scope_is(&q->src, pairs[i]) && td__copy_scope_is(&q->dst, pairs[i + 1]))
            return true;
        int k = snprintf(list + used, sizeof list - used, "%s%s->%s",
                         i ? ", " : "", pairs[i], pairs[i + 1]);
        if (k > 0 && (size_t)k < sizeof list - used)
            used += (size_t)k;
    }
    WHY("unsupported memory scopes src=%s dst=%s; allowed: %s",
        q->src.scope ? q->src.scope : "?", q->dst.scope ? q->dst.scope : "?",
        list);
    return false;
}

static const char *const gs_pairs[] = {"global", "shared*", "shared*",
                                       "global", NULL};
static const char *const reg_pairs[] = {"local", "shared*", "shared*",
                                        "local", "local", "global",
                                        "global", "local", NULL};

static bool vec_scope_ok(const td_copy_req *q, char *why, size_t whylen)
{
    if (!q->cuda) {
        WHY("non-cuda target");
        return false;
    }
    if (q->scope == TD_SCOPE_CLUSTER || q->scope >= TD_SCOPE_COUNT) {
        WHY("unsupported exec_scope %s", td_exec_scope_name(q->scope));
        return false;
    }
    return true;
}

bool td__copy_check_gs(const td_copy_req *q, char *why, size_t whylen)
{
    int64_t t, n;
    const td_copy_side *g;

    if (!vec_scope_ok(q, why, whylen) || !td__copy_threads_active(q, why, whylen) ||
        !td__copy_req_valid(q, why, whylen) ||
        !td__copy_scope_allowed(q, gs_pairs, why, whylen))
        return false;
    t = td__copy_thread_count(q);
    if (t <= 0) {
        WHY("degenerate thread_cnt=%lld (scope has empty intra)",
            (long long)t);
        return false;
    }
    g = td__copy_scope_is(&q->src, "global") ? &q->src : &q->dst;
    n = 1;
    for (int d = 0; d < g->ndim; d++)
        n = td__mul_sat(n, g->extent[d]);
    if (n % t != 0) {
        WHY("region size %lld not divisible by thread_cnt=%lld", (long long)n,
            (long long)t);
        return false;
    }
    return true;
}

/* The (scope, subscope) of a thread axis, as TVM's Axis objects carry. */
static void axis_scopes(td_axis a, const char **sc, const char **sub)
{
    switch (a) {
    case TD_AXIS_LANEID: *sc = "warp"; *sub = "thread"; return;
    case TD_AXIS_WID_IN_WG: *sc = "warpgroup"; *sub = "warp"; return;
    case TD_AXIS_TID_IN_WG: *sc = "warpgroup"; *sub = "thread"; return;
    case TD_AXIS_WARPID: *sc = "cta"; *sub = "warp"; return;
    case TD_AXIS_WGID: *sc = "cta"; *sub = "warpgroup"; return;
    case TD_AXIS_TX: *sc = "cta"; *sub = "thread"; return;
    case TD_AXIS_CBX: case TD_AXIS_CBY: case TD_AXIS_CBZ:
        *sc = "cluster"; *sub = "cta"; return;
    default: *sc = "thread"; *sub = "cta"; return;
    }
}

static int scope_rank(const char *s)
{
    static const char *const r[] = {"thread", "warp", "warpgroup", "cta"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, r[i]) == 0)
            return i;
    return 99;
}

/* The register layout sliced to its region, scope-fused, canonical. */
int td__copy_reg_layout(const td_copy_req *q, const td_copy_side *r,
                      td_layout *out)
{
    int rc;

    if ((rc = td__copy_side_tile(r, out)) < 0 ||
        (rc = td__lay_fuse_scope(out, q->scope)) < 0 ||
        (rc = td__lay_check(out, NULL, 0)) < 0)
        return rc;
    return td__lay_canonicalize(out, out);
}

/*
 * D2: the register layout's threads are exactly the scope's T threads,
 * each once: its thread iters, on the scope's own thread-id axis, chain
 * from stride 1 up to T (no thread replicas).  A layout with no thread
 * iters is per-thread storage that every thread moves whole.
 */
static bool covers_scope(const td_copy_req *q, const td_copy_side *rs,
                         const td_layout *r, char *why, size_t whylen)
{
    static const td_axis own[] = {TD_AXIS_M, TD_AXIS_LANEID,
                                  TD_AXIS_TID_IN_WG, TD_AXIS_TX};
    int64_t t = td__copy_thread_count(q), prod = 1, need = 1;
    td_iter it[TD_MAX_LAYOUT_ITERS];
    int n = 0;
    bool ok = true;

    for (int i = 0; i < r->nrep; i++)
        if (td_axis_is_thread(r->rep[i].axis)) {
            WHY("register layout of %s replicates elements across threads",
                rs->name);
            return false;
        }
    for (int i = 0; i < r->nshard; i++)
        if (td_axis_is_thread(r->shard[i].axis) && r->shard[i].extent > 1) {
            it[n++] = r->shard[i];
            prod = td__mul_sat(prod, r->shard[i].extent);
            if (q->scope > TD_SCOPE_CTA || r->shard[i].axis != own[q->scope])
                ok = false;
        }
    /* No thread iters: every thread holds (and moves) a whole copy, as
     * TVM does for a plain local buffer at warp scope. */
    if (n == 0)
        return true;
    if (prod != t) {
        WHY("register layout of %s covers %lld of the %s's %lld threads",
            rs->name, (long long)prod, td_exec_scope_name(q->scope),
            (long long)t);
        return false;
    }
    /* Ascending strides must chain 1, e0, e0*e1, ... */
    for (int k = 0; k < n && ok; k++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (it[i].stride == need)
                best = i;
        if (best < 0)
            ok = false;
        else
            need = td__mul_sat(need, it[best].extent);
    }
    if (!ok) {
        WHY("register layout of %s does not map the %s's %lld threads one "
            "to one",
            rs->name, td_exec_scope_name(q->scope), (long long)t);
        return false;
    }
    return true;
}

bool td__copy_check_reg(const td_copy_req *q, char *why, size_t whylen)
{
    const td_copy_side *rs, *ss;
    td_layout r, s;

    if (!vec_scope_ok(q, why, whylen) || !td__copy_threads_active(q, why, whylen) ||
        !td__copy_req_valid(q, why, whylen) ||
        !td__copy_scope_allowed(q, reg_pairs, why, whylen))
        return false;
    rs = td__copy_local_side(q);
    ss = td__copy_other_side(q);
    if (rs->swz.on) {
        /* TVM's is_swizzle(): a ComposeLayout over a trivial tile. */
        if (td__lay_is_trivial(&rs->tile))
            WHY("R layout is swizzle");
        else
            WHY("R layout is ComposeLayout, not TileLayout");
        return false;
    }
    for (int i = 0; i < rs->tile.nshard; i++) {
        td_axis a = rs->tile.shard[i].axis;
        const char *sc, *sub;

        if (!td_axis_is_thread(a))
            continue;
        axis_scopes(a, &sc, &sub);
        if (scope_rank(sub) > 2) {
            WHY("R thread axis '%s' subscope='%s' (not register-level)",
                td_axis_name(a), sub);
            return false;
        }
        if (scope_rank(sc) > (int)q->scope) {
            WHY("R thread axis '%s' scope='%s' > exec '%s'", td_axis_name(a),
                sc, td_exec_scope_name(q->scope));
            return false;
        }
    }
    if (td__copy_side_tile(rs, &r) < 0) {
        WHY("R layout slice failed");
        return false;
    }
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (td_axis_is_thread((td_axis)a) && r.offset[a] != 0) {
            WHY("R sliced offset on thread axis '%s' = %lld",
                td_axis_name((td_axis)a), (long long)r.offset[a]);
            return false;
        }
    if (td__copy_side_tile(ss, &s) < 0) {
        WHY("S layout slice failed");
        return false;
    }
    if (td__copy_reg_layout(q, rs, &r) < 0) {
        WHY("R layout slice failed");
        return false;
    }
    return covers_scope(q, rs, &r, why, whylen);
}

bool td__copy_vec_auto_applicable(const td_copy_req *q, char *why,
                                  size_t whylen)
{
    char g[512], r[512];

    if (td__copy_check_gs(q, g, sizeof g) || td__copy_check_reg(q, r, sizeof r))
        return true;
    WHY("gmem_smem: %s; reg: %s", g, r);
    return false;
}

/* ---- vector candidates ----------------------------------------------- */

/* Element counts of 128, 64, 32, 16 and 8 bits, widest first, then 1
 * (TVM's _vec_len_candidates); an instruction's own widths (allowed,
 * nallowed > 0: cp.async's 128, 64 and 32) without the scalar 1 unless
 * one of them is one element. */
static int vec_candidates(int elem_bits, int64_t *out, const int *allowed,
                          int nallowed)
{
    static const int all[] = {128, 64, 32, 16, 8};
    const int *bits = nallowed > 0 ? allowed : all;
    int nb = nallowed > 0 ? nallowed : 5;
    int n = 0;

    for (int i = 0; i < nb && n < 6; i++) {
        if (elem_bits <= 0 || bits[i] < elem_bits || bits[i] % elem_bits)
            continue;
        int64_t v = bits[i] / elem_bits;
        if (n == 0 || out[n - 1] != v)
            out[n++] = v;
    }
    if (nallowed == 0 && (n == 0 || out[n - 1] != 1))
        out[n++] = 1;
    return n;
}

static bool aligned(int64_t v, const int64_t *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i] % v != 0)
            return false;
    return true;
}

static int offsets_into(const td_layout *l, int64_t *t, int n)
{
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        t[n++] = l->offset[a];
    return n;
}

/* ---- global <-> shared ----------------------------------------------- */

/* TVM's _verify_s_tail_contig. */
static bool s_tail_contig(const td_layout *s, int64_t vec)
{
    int64_t acc;

    if (s->nshard == 0)
        return vec == 1;
    if (s->shard[s->nshard - 1].stride != 1)
        return false;
    acc = s->shard[s->nshard - 1].extent;
    if (acc == vec)
        return true;
    for (int k = s->nshard - 2; k >= 0; k--) {
        if (s->shard[k].stride != acc)
            break;
        acc = td__mul_sat(acc, s->shard[k].extent);
        if (acc == vec)
            return true;
        if (acc > vec)
            return false;
    }
    return acc >= vec && acc % vec == 0;
}

/* One vec candidate of align_layouts_gs; 0 when it fits. */
static int try_gs_vec(const td_layout *g, const td_layout *s_al, int64_t vec,
                      int64_t t, td_copy_gs_plan *out)
{
    td_layout *gp = &out->g, *sp = &out->s;
    td_iter it[TD_MAX_LAYOUT_ITERS + 2];
    int n = g->nshard, nt, seps[TD_MAX_LAYOUT_ITERS + 3];
    int64_t shape[TD_MAX_LAYOUT_ITERS + 2], terms[2 * TD_MAX_LAYOUT_ITERS +
                                                 2 * TD_AXIS_COUNT + 4];
    int nterm = 0;
    td_iter last;

    memcpy(it, g->shard, sizeof(td_iter) * (size_t)n);
    if (vec == 1) {
        td_axis a = n > 0 ? g->shard[n - 1].axis : TD_AXIS_M;
        it[n++] = (td_iter){1, 1, a};
    } else if (td__lay_carve_tail(it, &n, TD_MAX_LAYOUT_ITERS + 1, vec) < 0) {
        return TD_ENOMATCH;
    }
    last = it[n - 1];
    nt = n - 1;
    if (t > 1 && td__lay_carve_tail(it, &nt, TD_MAX_LAYOUT_ITERS + 1, t) < 0)
        return TD_ENOMATCH;
    it[nt] = last;
    n = nt + 1;
    if (n > TD_MAX_LAYOUT_ITERS || n > TD_MAX_RANK * 2)
        return TD_ENOMATCH;
    *gp = *g;
    gp->nshard = n;
    memcpy(gp->shard, it, sizeof(td_iter) * (size_t)n);
    for (int i = 0; i < n; i++)
        shape[i] = it[i].extent;
    if (n > TD_MAX_RANK) {
        /* td__lay_group takes at most TD_MAX_RANK dims. */
        return TD_ENOMATCH;
    }
    if (td__lay_group(s_al, shape, n, sp, seps) < 0)
        return TD_ENOMATCH;
    /* TVM checks only S's tail; a G vector iter of stride > 1 (a column
     * of a wider global array) would load the wrong elements. */
    if (!s_tail_contig(sp, vec) || !s_tail_contig(gp, vec))
        return TD_ENOMATCH;
    for (int i = 0; i + 1 < sp->nshard; i++)
        terms[nterm++] = sp->shard[i].stride;
    for (int i = 0; i + 1 < gp->nshard; i++)
        terms[nterm++] = gp->shard[i].stride;
    nterm = offsets_into(sp, terms, nterm);
    nterm = offsets_into(gp, terms, nterm);
    if (!aligned(vec, terms, nterm))
        return TD_ENOMATCH;
    /* The segments: the thread iters are the last ones before the vec
     * iter whose extents multiply to T. */
    out->n_thread = 0;
    for (int64_t prod = 1; prod < t && out->n_thread < n - 1;)
        prod = td__mul_sat(prod, gp->shard[n - 2 - out->n_thread++].extent);
    out->n_outer = n - 1 - out->n_thread;
    memcpy(out->s_seps, seps, sizeof(int) * (size_t)(n + 1));
    out->carved = true;
    return 0;
}

int td__copy_plan_gs(const td_copy_req *q, td_copy_gs_plan *out, char *why,
                     size_t whylen)
{
    return td__copy_plan_gs_bits(q, NULL, 0, out, why, whylen);
}

int td__copy_plan_gs_bits(const td_copy_req *q, const int *bits, int nbits,
                          td_copy_gs_plan *out, char *why, size_t whylen)
{
    const td_copy_side *gs, *ss;
    td_layout g, s, s1, s_al, gsort;
    int64_t pre[TD_MAX_LAYOUT_ITERS], cand[8], n = 1;
    int perm[TD_MAX_LAYOUT_ITERS], seps[TD_MAX_LAYOUT_ITERS + 1], ncand;
    bool ident = true;

    if (q == NULL || out == NULL)
        return TD_EINVAL;
    if (!td__copy_check_gs(q, why, whylen))
        return TD_ENOMATCH;
    memset(out, 0, sizeof *out);
    out->g_is_src = td__copy_scope_is(&q->src, "global");
    gs = out->g_is_src ? &q->src : &q->dst;
    ss = out->g_is_src ? &q->dst : &q->src;
    out->elem_bits = td_dtype_bits(gs->dtype);
    out->threads = td__copy_thread_count(q);
    out->swz = ss->swz;
    if (gs->swz.on) {
        WHY("global operand %s: a swizzled layout is not supported in global "
            "memory",
            gs->name);
        return TD_ENOMATCH;
    }
    if (td__copy_side_tile(gs, &g) < 0 || td__copy_side_tile(ss, &s) < 0) {
        WHY("the layouts of %s and %s cannot be sliced to the regions",
            gs->name, ss->name);
        return TD_ENOMATCH;
    }
    for (int i = 0; i < g.nshard; i++)
        pre[i] = g.shard[i].extent;
    if (td__lay_sort_by_stride_desc(&g, &gsort, perm) < 0 ||
        td__lay_canonicalize(&gsort, &gsort) < 0)
        return TD_EINVAL;
    for (int i = 0; i < g.nshard; i++)
        ident = ident && perm[i] == i;
    if (g.nshard > TD_MAX_RANK ||
        td__lay_group(&s, pre, g.nshard, &s1, seps) < 0) {
        /* TVM then copies in G's sorted order against S's own order, which
         * pairs the wrong elements unless the sort kept G's order. */
        if (!ident) {
            WHY("S layout of %s cannot be grouped by the iters of %s",
                ss->name, gs->name);
            return TD_ENOMATCH;
        }
        out->g = gsort;
        if (td__lay_canonicalize(&s, &out->s) < 0)
            return TD_EINVAL;
        out->vec = 1;
    } else {
        if (td__lay_permute_by_groups(&s1, seps, g.nshard, perm, &s_al,
                                      NULL) < 0 ||
            td__lay_canonicalize(&s_al, &s_al) < 0)
            return TD_EINVAL;
        ncand = vec_candidates(out->elem_bits, cand, bits, nbits);
        out->vec = 0;
        for (int i = 0; i < ncand; i++) {
            if (cand[i] > 1 && ss->swz.on &&
                cand[i] > ((int64_t)1 << ss->swz.per_element))
                continue;
            /* What the block ids add to the global start must keep each
             * vector aligned in every block. */
            if (gs->block_align > 0 && gs->block_align % cand[i] != 0)
                continue;
            if (try_gs_vec(&gsort, &s_al, cand[i], out->threads, out) == 0) {
                out->vec = cand[i];
                break;
            }
        }
        if (out->vec == 0) {
            out->g = gsort;
            out->s = s_al;
            out->vec = 1;
        }
    }
    if (td__lay_size(&out->g, &n) < 0 || out->threads <= 0 ||
        n % (out->threads * out->vec) != 0)
        return TD_EINVAL;
    out->rounds = n / (out->threads * out->vec);
    return 0;
}

int td__copy_gs_offsets(const td_copy_gs_plan *p, int64_t f, int64_t tid,
                        int64_t *g_off, int64_t *s_off)
{
    int64_t c[3] = {f, tid, 0}, sh[3] = {p->rounds, p->threads, p->vec};
    int64_t gc[TD_AXIS_COUNT], sc[TD_AXIS_COUNT];
    int rc;

    if ((rc = td__lay_apply_shape(&p->g, c, sh, 3, gc)) < 0 ||
        (rc = td__lay_apply_shape(&p->s, c, sh, 3, sc)) < 0)
        return rc;
    *g_off = gc[TD_AXIS_M];
    return td__lay_swz_apply(&p->swz, sc[TD_AXIS_M], s_off);
}

/* ---- registers <-> shared/global ------------------------------------- */

/* TVM's _split_atoms_for_vec: the atoms left once the inner vec elements
 * are consumed (the boundary atom split). */
static int split_atoms(const td_copy_atom *a, int n, int64_t vec,
                       td_copy_atom *outer, int *nout)
{
    int64_t acc = 1;

    memcpy(outer, a, sizeof(td_copy_atom) * (size_t)n);
    while (n > 0) {
        td_copy_atom x = outer[n - 1];
        int64_t na = td__mul_sat(acc, x.extent);

        if (na == vec) {
            acc = na;
            n--;
            break;
        }
        if (na > vec) {
            int64_t f = vec / acc;
            if (f < 1 || x.extent % f != 0)
                return TD_ENOMATCH;
            outer[n - 1] = (td_copy_atom){x.extent / f, x.s_stride * f,
                                          x.r_mul * f};
            acc = vec;
            break;
        }
        acc = na;
        n--;
    }
    if (n == 0 && acc != vec && vec != 1)
        return TD_ENOMATCH; /* the atoms hold fewer than vec elements */
    *nout = n;
    return 0;
}

/* D7: the registers of the vector are consecutive, i.e. the consumed
 * atoms' r_mul chain from 1. */
static bool reg_tail_consecutive(const td_copy_atom *a, int n, int64_t vec)
{
    int64_t acc = 1;

    for (int k = n - 1; k >= 0 && acc < vec; k--) {
        int64_t take = a[k].extent;

        if (a[k].extent == 1)
            continue;
        if (a[k].r_mul != acc)
            return false;
        if (td__mul_sat(acc, take) > vec)
            take = vec / acc;
        acc = td__mul_sat(acc, take);
    }
    return acc >= vec;
}

int64_t td__copy_choose_vec(int elem_bits, const td_copy_atom *atoms, int n,
                            const td_layout *r, const td_layout *s,
                            int64_t max_vec)
{
    int64_t cand[8], t = 0;
    int nc = vec_candidates(elem_bits, cand, NULL, 0);

    if (n > 0 && atoms[n - 1].s_stride == 1) {
        t = atoms[n - 1].extent;
        for (int k = n - 2; k >= 0; k--) {
            if (atoms[k].s_stride != t)
                break;
            t = td__mul_sat(t, atoms[k].extent);
        }
    }
    for (int i = 0; i < nc; i++) {
        int64_t v = cand[i], terms[4 * TD_MAX_LAYOUT_ITERS +
                                   2 * TD_AXIS_COUNT];
        td_copy_atom outer[2 * TD_MAX_LAYOUT_ITERS];
        int no = n, nt = 0;

        if (max_vec > 0 && v > max_vec)
            continue;
        if (v == 1)
            return 1;
        if (t % v != 0 || t < v)
            continue;
        if (split_atoms(atoms, n, v, outer, &no) < 0)
            continue;
        if (!reg_tail_consecutive(atoms, n, v))
            continue;
        for (int k = 0; k < no; k++) {
            terms[nt++] = outer[k].s_stride;
            terms[nt++] = outer[k].r_mul;
        }
        nt = offsets_into(s, terms, nt);
        nt = offsets_into(r, terms, nt);
        if (aligned(v, terms, nt))
            return v;
    }
    return 1;
}

/* Thread iters first, then stride descending (stable): TVM's perm. */
void td__copy_thread_first_perm(const td_layout *r, int *perm)
{
    int n = 0;

    for (int pass = 0; pass < 2; pass++) {
        int from = n;
        for (int i = 0; i < r->nshard; i++)
            if (td_axis_is_thread(r->shard[i].axis) == (pass == 0)) {
                int j = n++;
                while (j > from &&
                       r->shard[perm[j - 1]].stride < r->shard[i].stride) {
                    perm[j] = perm[j - 1];
                    j--;
                }
                perm[j] = i;
            }
    }
}

int td__copy_plan_reg(const td_copy_req *q, td_copy_reg_plan *out, char *why,
                      size_t whylen)
{
    const td_copy_side *rs, *ss;
    td_layout r, s, sg, rperm, st;
    int perm[TD_MAX_LAYOUT_ITERS], seps[TD_MAX_LAYOUT_ITERS + 1];
    int sseps[TD_MAX_LAYOUT_ITERS + 1], na = 0;
    int64_t shape[TD_MAX_LAYOUT_ITERS], max_vec = 0;
    td_copy_atom atoms[2 * TD_MAX_LAYOUT_ITERS];

    if (q == NULL || out == NULL)
        return TD_EINVAL;
    if (!td__copy_check_reg(q, why, whylen))
        return TD_ENOMATCH;
    memset(out, 0, sizeof *out);
    rs = td__copy_local_side(q);
    ss = td__copy_other_side(q);
    out->r_is_src = rs == &q->src;
    out->s_global = td__copy_scope_is(ss, "global");
    out->elem_bits = td_dtype_bits(rs->dtype);
    out->threads = td__copy_thread_count(q);
    out->swz = ss->swz;
    if (td__copy_reg_layout(q, rs, &r) < 0 || td__copy_side_tile(ss, &s) < 0 ||
        td__lay_canonicalize(&s, &s) < 0)
        return TD_EINVAL;
    for (int i = 0; i < r.nshard; i++)
        shape[i] = r.shard[i].extent;
    td__copy_thread_first_perm(&r, perm);
    if (r.nshard > TD_MAX_RANK ||
        td__lay_group(&s, shape, r.nshard, &sg, seps) < 0) {
        WHY("S layout cannot be grouped by the register layout's iters");
        return TD_ENOMATCH;
    }
    if (td__lay_permute_by_groups(&sg, seps, r.nshard, perm, &out->s,
                                  sseps) < 0 ||
        td__lay_permute_dims(&r, perm, r.nshard, &out->r_perm) < 0 ||
        td__lay_canonicalize(&out->r_perm, &out->r) < 0)
        return TD_EINVAL;
    rperm = out->r_perm;
    for (int k = 0; k < rperm.nshard && td_axis_is_thread(rperm.shard[k].axis);
         k++)
        out->s_nthread = sseps[k + 1];
    /* One atom per (register position, S iter of its group). */
    for (int k = 0; k < rperm.nshard; k++) {
        if (td_axis_is_thread(rperm.shard[k].axis))
            continue;
        for (int j = sseps[k]; j < sseps[k + 1]; j++) {
            int64_t inner = 1;
            for (int i = j + 1; i < sseps[k + 1]; i++)
                inner = td__mul_sat(inner, out->s.shard[i].extent);
            atoms[na++] = (td_copy_atom){out->s.shard[j].extent,
                                         out->s.shard[j].stride,
                                         td__mul_sat(rperm.shard[k].stride,
                                                     inner)};
        }
    }
    if (ss->swz.on && ss->swz.swizzle_len > 0)
        max_vec = (int64_t)1 << ss->swz.per_element;
    if (ss->block_align > 0 && (max_vec == 0 || ss->block_align < max_vec))
        max_vec = ss->block_align;
    out->vec = td__copy_choose_vec(out->elem_bits, atoms, na, &out->r,
                                   &out->s, max_vec);
    out->nouter = na;
    if (split_atoms(atoms, na, out->vec, out->outer, &out->nouter) < 0)
        return TD_EINVAL;
    out->rounds = 1;
    for (int k = 0; k < out->nouter; k++)
        out->rounds = td__mul_sat(out->rounds, out->outer[k].extent);
    out->r_off_base = 0;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        out->r_off_base += out->r.offset[a];
    if (td__lay_storage(&rs->tile, &st) < 0 ||
        td__lay_span(&st, TD_LAY_ALL_MEMORY, &out->r_slots) < 0)
        return TD_EINVAL;
    return 0;
}

int td__copy_reg_thread_base(const td_copy_reg_plan *p, int64_t tid,
                             int64_t *s_base)
{
    int64_t mem = 1, flat, c[TD_AXIS_COUNT];
    int rc;

    if (tid < 0 || tid >= p->threads)
        return TD_EINVAL;
    for (int i = 0; i < p->r.nshard; i++)
        if (!td_axis_is_thread(p->r.shard[i].axis))
            mem = td__mul_sat(mem, p->r.shard[i].extent);
    /* r is canonical with its one thread iter (T, 1) first (D2), so the
     * thread's coordinate is tid itself; without one, every thread moves
     * the same elements. */
    flat = p->r.nshard > 0 && td_axis_is_thread(p->r.shard[0].axis)
               ? tid * mem
               : 0;
    if ((rc = td__lay_apply_shape(&p->s, &flat, &(int64_t){INT64_MAX}, 1,
                                  c)) < 0)
        return rc;
    *s_base = c[TD_AXIS_M];
    return 0;
}

int td__copy_reg_round(const td_copy_reg_plan *p, int64_t f, int64_t *ds,
                       int64_t *dr)
{
    if (f < 0 || f >= p->rounds)
        return TD_EINVAL;
    *ds = 0;
    *dr = 0;
    for (int k = p->nouter - 1; k >= 0; k--) {
        int64_t c = f % p->outer[k].extent;
        f /= p->outer[k].extent;
        *ds += c * p->outer[k].s_stride;
        *dr += c * p->outer[k].r_mul;
    }
    return 0;
}

int td__copy_reg_offsets(const td_copy_reg_plan *p, int64_t f, int64_t tid,
                         int64_t *s_off, int64_t *r_slot)
{
    int64_t base, ds, dr;
    int rc;

    if ((rc = td__copy_reg_thread_base(p, tid, &base)) < 0 ||
        (rc = td__copy_reg_round(p, f, &ds, &dr)) < 0)
        return rc;
    *r_slot = p->r_off_base + dr;
    return td__lay_swz_apply(&p->swz, base + ds, s_off);
}
