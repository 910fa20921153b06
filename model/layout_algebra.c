/*
 * Layout algebra for the copy planners and the gemm fragments: the
 * TileLayout methods TVM's copy variants compose (slice to a region,
 * permute dims, permute groups of dims, a stable sort by stride, carving a
 * tail off an iter list, the scope fusers of a target-aware canonicalize),
 * what the gemm fragments add (tile / tile_to, the thread-left order,
 * TVM's CUDA canonicalize with the fusers of the layout's own scope), the
 * swizzle of a ComposeLayout and the numeric `apply` of a coordinate
 * within a shape.  Everything here is pure integer arithmetic on td_layout
 * values, overflow-checked like layout.c; the declarations and contracts
 * are in layout.h.
 */
#include <string.h>

#include "layout.h"

/* ---- slice ----------------------------------------------------------- */

/*
 * One dim of a slice: the grouped iters it[0..n) (outermost first) are a
 * mixed radix; the box [pos, pos + rem) of that dim must be whole inner
 * iters plus one contiguous run of the next.  The kept iters go to
 * tmp[] innermost first; the start's contribution goes to the offsets.
 */
static int slice_dim(const td_iter *it, int n, int64_t pos, int64_t rem,
                     int64_t *offset, td_iter *tmp, int *nt)
{
    for (int k = n - 1; k >= 0; k--) {
        int64_t c = pos % it[k].extent, add;

        pos /= it[k].extent;
        if (!td__lay_mul64(c, it[k].stride, &add) ||
            !td__lay_add64(offset[it[k].axis], add, &offset[it[k].axis]))
            return TD_ELIMIT;
        if (rem == 1)
            continue;
        if (c == 0 && rem % it[k].extent == 0) {
            tmp[(*nt)++] = it[k];
            rem /= it[k].extent;
        } else if (c + rem <= it[k].extent) {
            tmp[(*nt)++] = (td_iter){rem, it[k].stride, it[k].axis};
            rem = 1;
        } else {
            return TD_ENOMATCH;
        }
    }
    if (rem != 1 || pos != 0)
        return TD_ENOMATCH;
    /* TVM keeps a dim the region reduces to one index as a unit iter with
     * the stride and axis of the dim's innermost iter. */
    if (*nt == 0)
        tmp[(*nt)++] = (td_iter){1, it[n - 1].stride, it[n - 1].axis};
    return 0;
}

int td__lay_slice(const td_layout *l, const int64_t *shape, int ndim,
                  const int64_t *start, const int64_t *extent, td_layout *out)
{
    td_layout g, r;
    int seps[TD_MAX_RANK + 1], rc;

    if (l == NULL || shape == NULL || start == NULL || extent == NULL ||
        out == NULL || ndim < 1 || ndim > TD_MAX_RANK)
        return TD_EINVAL;
    for (int d = 0; d < ndim; d++)
        if (start[d] < 0 || extent[d] < 1 || start[d] > shape[d] - extent[d])
            return TD_EINVAL;
    if ((rc = td__lay_group(l, shape, ndim, &g, seps)) < 0)
        return rc;
    r = g;
    r.nshard = 0;
    for (int d = 0; d < ndim; d++) {
        td_iter tmp[TD_MAX_LAYOUT_ITERS];
        int nt = 0;

        td_iter dim[TD_MAX_LAYOUT_ITERS];
        int nd = 0;

        if (seps[d + 1] == seps[d])
            return TD_ENOMATCH;
        /* Fuse the dim's adjacent iters that are one contiguous run (as
         * TVM does), so that a box crossing their boundary still slices. */
        for (int k = seps[d]; k < seps[d + 1]; k++) {
            const td_iter *it = &g.shard[k];
            int64_t run, ext;

            if (nd > 0 && dim[nd - 1].axis == it->axis &&
                td__lay_mul64(it->extent, it->stride, &run) &&
                run == dim[nd - 1].stride &&
                td__lay_mul64(dim[nd - 1].extent, it->extent, &ext)) {
                dim[nd - 1] = (td_iter){ext, it->stride, it->axis};
                continue;
            }
            dim[nd++] = *it;
        }
        rc = slice_dim(dim, nd, start[d], extent[d], r.offset, tmp, &nt);
        if (rc < 0)
            return rc;
        for (int k = nt - 1; k >= 0; k--) {
            if (r.nshard >= TD_MAX_LAYOUT_ITERS)
                return TD_ELIMIT;
            r.shard[r.nshard++] = tmp[k];
        }
    }
    if (td__lay_check(&r, NULL, 0) < 0)
        return TD_ELIMIT;
    *out = r;
    return 0;
}

/* ---- permutations ---------------------------------------------------- */

int td__lay_permute_dims(const td_layout *l, const int *perm, int n,
                         td_layout *out)
{
    td_layout r;
    bool seen[TD_MAX_LAYOUT_ITERS] = {false};

    if (l == NULL || perm == NULL || out == NULL || n != l->nshard)
        return TD_EINVAL;
    r = *l;
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
            return TD_EINVAL;
        seen[perm[i]] = true;
        r.shard[i] = l->shard[perm[i]];
    }
    *out = r;
    return 0;
}

int td__lay_permute_by_groups(const td_layout *l, const int *seps,
                              int ngroups, const int *perm, td_layout *out,
                              int *out_seps)
{
    int flat[TD_MAX_LAYOUT_ITERS], n = 0;
    bool seen[TD_MAX_LAYOUT_ITERS + 1] = {false};

    if (l == NULL || seps == NULL || perm == NULL || out == NULL ||
        ngroups < 0 || ngroups > TD_MAX_LAYOUT_ITERS || seps[0] != 0 ||
        seps[ngroups] != l->nshard)
        return TD_EINVAL;
    for (int g = 0; g < ngroups; g++)
        if (seps[g + 1] < seps[g])
            return TD_EINVAL;
    if (out_seps != NULL)
        out_seps[0] = 0;
    for (int i = 0; i < ngroups; i++) {
        int g = perm[i];

        if (g < 0 || g >= ngroups || seen[g])
            return TD_EINVAL;
        seen[g] = true;
        for (int k = seps[g]; k < seps[g + 1]; k++)
            flat[n++] = k;
        if (out_seps != NULL)
            out_seps[i + 1] = n;
    }
    return td__lay_permute_dims(l, flat, n, out);
}

int td__lay_sort_by_stride_desc(const td_layout *l, td_layout *out, int *perm)
{
    int p[TD_MAX_LAYOUT_ITERS];

    if (l == NULL || out == NULL || l->nshard < 0 ||
        l->nshard > TD_MAX_LAYOUT_ITERS)
        return TD_EINVAL;
    /* Insertion sort: stable, and n is at most 16. */
    for (int i = 0; i < l->nshard; i++) {
        int j = i;

        while (j > 0 && l->shard[p[j - 1]].stride < l->shard[i].stride) {
            p[j] = p[j - 1];
            j--;
        }
        p[j] = i;
    }
    if (perm != NULL)
        memcpy(perm, p, sizeof(int) * (size_t)l->nshard);
    return td__lay_permute_dims(l, p, l->nshard, out);
}

/* ---- thread-left order ---------------------------------------------- */

int td__lay_canon_perm(const td_layout *l, int *perm)
{
    int n = 0;

    if (l == NULL || perm == NULL || l->nshard < 0 ||
        l->nshard > TD_MAX_LAYOUT_ITERS)
        return TD_EINVAL;
    /* Two stable insertion sorts, threads first: n is at most 16. */
    for (int pass = 0; pass < 2; pass++) {
        int first = n;

        for (int i = 0; i < l->nshard; i++) {
            int j = n;

            if (td_axis_is_thread(l->shard[i].axis) != (pass == 0))
                continue;
            while (j > first && l->shard[perm[j - 1]].stride < l->shard[i].stride) {
                perm[j] = perm[j - 1];
                j--;
            }
            perm[j] = i;
            n++;
        }
    }
    return 0;
}

int td__lay_thread_left(const td_layout *l, td_layout *out, int *perm)
{
    int p[TD_MAX_LAYOUT_ITERS], rc;

    if (out == NULL || (rc = td__lay_canon_perm(l, p)) < 0)
        return out == NULL ? TD_EINVAL : rc;
    if (perm != NULL)
        memcpy(perm, p, sizeof(int) * (size_t)l->nshard);
    return td__lay_permute_dims(l, p, l->nshard, out);
}

/* ---- tile ------------------------------------------------------------ */

int td__lay_tile(const td_layout *inner, const td_layout *outer,
                 const int64_t *outer_shape, const int64_t *inner_shape,
                 int ndim, td_layout *out)
{
    td_layout oc, ic, og, ig, t;
    int oseps[TD_MAX_RANK + 1], iseps[TD_MAX_RANK + 1], rc;
    int64_t span[TD_AXIS_COUNT];
    bool used[TD_AXIS_COUNT] = {false};

    if (inner == NULL || outer == NULL || outer_shape == NULL ||
        inner_shape == NULL || out == NULL || ndim < 1 || ndim > TD_MAX_RANK)
        return TD_EINVAL;
    if (inner->swizzle || outer->swizzle)
        return TD_EINVAL;
    if ((rc = td__lay_canonicalize(outer, &oc)) < 0 ||
        (rc = td__lay_canonicalize(inner, &ic)) < 0 ||
        (rc = td__lay_group(&oc, outer_shape, ndim, &og, oseps)) < 0 ||
        (rc = td__lay_group(&ic, inner_shape, ndim, &ig, iseps)) < 0)
        return rc;
    /* The inner span on every axis its shard uses (BuildSpanMap). */
    for (int i = 0; i < ig.nshard; i++) {
        td_axis a = ig.shard[i].axis;

        if (!used[a] && (rc = td__lay_span(&ig, (int)a, &span[a])) < 0)
            return rc;
        used[a] = true;
    }
    memset(&t, 0, sizeof t);
    for (int d = 0; d < ndim; d++) {
        for (int k = oseps[d]; k < oseps[d + 1]; k++) {
            td_iter it = og.shard[k];

            if (used[it.axis] && !td__lay_mul64(it.stride, span[it.axis], &it.stride))
                return TD_ELIMIT;
            if (t.nshard >= TD_MAX_LAYOUT_ITERS)
                return TD_ELIMIT;
            t.shard[t.nshard++] = it;
        }
        for (int k = iseps[d]; k < iseps[d + 1]; k++) {
            if (t.nshard >= TD_MAX_LAYOUT_ITERS)
                return TD_ELIMIT;
            t.shard[t.nshard++] = ig.shard[k];
        }
    }
    if (ig.nrep + og.nrep > TD_MAX_LAYOUT_ITERS)
        return TD_ELIMIT;
    for (int i = 0; i < ig.nrep; i++)
        t.rep[t.nrep++] = ig.rep[i];
    for (int i = 0; i < og.nrep; i++)
        t.rep[t.nrep++] = og.rep[i];
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (!td__lay_add64(ig.offset[a], og.offset[a], &t.offset[a]))
            return TD_ELIMIT;
    if (td__lay_check(&t, NULL, 0) < 0)
        return TD_ELIMIT;
    return td__lay_canonicalize(&t, out);
}

int td__lay_tile_to(const td_layout *l, const int64_t *to_shape,
                    const int64_t *cur_shape, int ndim, td_layout *out)
{
    int64_t tiles[TD_MAX_RANK];
    td_layout outer;
    int rc;

    if (l == NULL || to_shape == NULL || cur_shape == NULL || out == NULL ||
        ndim < 1 || ndim > TD_MAX_RANK)
        return TD_EINVAL;
    for (int d = 0; d < ndim; d++) {
        if (cur_shape[d] < 1 || to_shape[d] < 1 || to_shape[d] % cur_shape[d])
            return TD_EINVAL;
        tiles[d] = to_shape[d] / cur_shape[d];
    }
    if ((rc = td__lay_row_major(tiles, ndim, &outer)) < 0)
        return rc;
    return td__lay_tile(l, &outer, tiles, cur_shape, ndim, out);
}

/* ---- carve_tail ------------------------------------------------------ */

int td__lay_carve_tail(td_iter *iters, int *n, int cap, int64_t chunk)
{
    int64_t rem = chunk;

    if (iters == NULL || n == NULL || *n < 0 || *n > cap || chunk < 1)
        return TD_EINVAL;
    for (int i = *n - 1; i >= 0; i--) {
        int64_t ext = iters[i].extent, st;

        if (ext == rem)
            return 0;
        if (ext < rem) {
            if (ext < 1 || rem % ext != 0)
                return TD_ENOMATCH;
            rem /= ext;
            continue;
        }
        if (ext % rem != 0)
            return TD_ENOMATCH;
        if (*n >= cap)
            return TD_ELIMIT;
        if (!td__lay_mul64(iters[i].stride, rem, &st))
            return TD_ELIMIT;
        memmove(&iters[i + 2], &iters[i + 1],
                sizeof(td_iter) * (size_t)(*n - i - 1));
        iters[i + 1] = (td_iter){rem, iters[i].stride, iters[i].axis};
        iters[i] = (td_iter){ext / rem, st, iters[i].axis};
        (*n)++;
        return 0;
    }
    return TD_ENOMATCH;
}

/* ---- scope fusers ---------------------------------------------------- */

static bool has_axis(const td_layout *l, td_axis a)
{
    for (int i = 0; i < l->nshard; i++)
        if (l->shard[i].axis == a)
            return true;
    return false;
}

/* Strides and offsets are bounded by td__lay_check (2^40); the callers
 * check the result again, so a product past that bound is refused there. */
static int rewrite_axis(td_layout *l, td_axis from, td_axis to, int64_t mul)
{
    int64_t v;

    for (int i = 0; i < l->nshard; i++)
        if (l->shard[i].axis == from) {
            if (!td__lay_mul64(l->shard[i].stride, mul, &v))
                return TD_ELIMIT;
            l->shard[i] = (td_iter){l->shard[i].extent, v, to};
        }
    for (int i = 0; i < l->nrep; i++)
        if (l->rep[i].axis == from) {
            if (!td__lay_mul64(l->rep[i].stride, mul, &v))
                return TD_ELIMIT;
            l->rep[i] = (td_iter){l->rep[i].extent, v, to};
        }
    if (from != to) {
        if (!td__lay_mul64(l->offset[from], mul, &v) ||
            !td__lay_add64(l->offset[to], v, &l->offset[to]))
            return TD_ELIMIT;
        l->offset[from] = 0;
    }
    return 0;
}

int td__lay_fuse_scope(td_layout *l, td_exec_scope scope)
{
    int rc = 0;

    if (l == NULL)
        return TD_EINVAL;
    if (scope == TD_SCOPE_WARPGROUP && has_axis(l, TD_AXIS_LANEID) &&
        has_axis(l, TD_AXIS_WID_IN_WG)) {
        if ((rc = rewrite_axis(l, TD_AXIS_LANEID, TD_AXIS_TID_IN_WG, 1)) < 0 ||
            (rc = rewrite_axis(l, TD_AXIS_WID_IN_WG, TD_AXIS_TID_IN_WG, 32)) <
                0)
            return rc;
    }
    if (scope == TD_SCOPE_CTA && has_axis(l, TD_AXIS_WGID) &&
        (has_axis(l, TD_AXIS_TID_IN_WG) ||
         (has_axis(l, TD_AXIS_LANEID) && has_axis(l, TD_AXIS_WID_IN_WG)))) {
        if ((rc = rewrite_axis(l, TD_AXIS_LANEID, TD_AXIS_TX, 1)) < 0 ||
            (rc = rewrite_axis(l, TD_AXIS_WID_IN_WG, TD_AXIS_TX, 32)) < 0 ||
            (rc = rewrite_axis(l, TD_AXIS_TID_IN_WG, TD_AXIS_TX, 1)) < 0 ||
            (rc = rewrite_axis(l, TD_AXIS_WGID, TD_AXIS_TX, 128)) < 0)
            return rc;
    }
    return 0;
}

/* ---- the layout's own scope (FuseAxesByScope under CUDA) ------------- */

/* The execution levels, innermost first (TVM's ScopeNameHigher order). */
enum { LV_THREAD, LV_WARP, LV_WARPGROUP, LV_CTA, LV_CLUSTER, LV_NONE };

/* (subscope, scope) of each thread axis, as upstream registers them. */
static void axis_levels(td_axis a, int *sub, int *scope)
{
    switch (a) {
    case TD_AXIS_LANEID:
        *sub = LV_THREAD, *scope = LV_WARP;
        return;
    case TD_AXIS_WARPID:
        *sub = LV_WARP, *scope = LV_CTA;
        return;
    case TD_AXIS_TX:
        *sub = LV_THREAD, *scope = LV_CTA;
        return;
    case TD_AXIS_WGID:
        *sub = LV_WARPGROUP, *scope = LV_CTA;
        return;
    case TD_AXIS_TID_IN_WG:
        *sub = LV_THREAD, *scope = LV_WARPGROUP;
        return;
    case TD_AXIS_WID_IN_WG:
        *sub = LV_WARP, *scope = LV_WARPGROUP;
        return;
    case TD_AXIS_BX:
    case TD_AXIS_BY:
    case TD_AXIS_BZ: /* upstream registers them as (cta, thread) */
        *sub = LV_CTA, *scope = LV_THREAD;
        return;
    case TD_AXIS_CBX:
    case TD_AXIS_CBY:
    case TD_AXIS_CBZ:
        *sub = LV_CTA, *scope = LV_CLUSTER;
        return;
    default: /* the memory axis */
        *sub = *scope = LV_NONE;
        return;
    }
}

/* Upstream's CUDA fusers: the axis and stride factor an iter of axis a
 * takes in the (sub, scope) pair; false when it stays. */
static bool fuser(td_axis a, int sub, int scope, td_axis *to, int64_t *mul)
{
    *mul = 1;
    switch (a) {
    case TD_AXIS_WARPID:
        if (sub == LV_THREAD && scope == LV_CTA)
            return *to = TD_AXIS_TX, *mul = 32, true;
        return false;
    case TD_AXIS_LANEID:
        if (sub == LV_THREAD && scope == LV_WARPGROUP)
            return *to = TD_AXIS_TID_IN_WG, true;
        if (sub == LV_THREAD && scope == LV_CTA)
            return *to = TD_AXIS_TX, true;
        return false;
    case TD_AXIS_WGID:
        if (sub == LV_THREAD && scope == LV_CTA)
            return *to = TD_AXIS_TX, *mul = 128, true;
        /* Upstream keeps the wgid axis here (not warpid): ported as is. */
        if (sub == LV_WARP && scope == LV_CTA)
            return *to = TD_AXIS_WGID, *mul = 4, true;
        return false;
    case TD_AXIS_TID_IN_WG:
        if (sub == LV_THREAD && scope == LV_CTA)
            return *to = TD_AXIS_TX, true;
        return false;
    case TD_AXIS_WID_IN_WG:
        if (sub == LV_THREAD && scope == LV_WARPGROUP)
            return *to = TD_AXIS_TID_IN_WG, *mul = 32, true;
        if (sub == LV_THREAD && scope == LV_CTA)
            return *to = TD_AXIS_TX, *mul = 32, true;
        if (sub == LV_WARP && scope == LV_CTA)
            return *to = TD_AXIS_WARPID, true;
        return false;
    default:
        return false;
    }
}

static int fuse_iter(td_iter *it, int sub, int scope)
{
    td_axis to;
    int64_t mul;

    if (!fuser(it->axis, sub, scope, &to, &mul))
        return 0;
    if (!td__lay_mul64(it->stride, mul, &it->stride))
        return TD_ELIMIT;
    it->axis = to;
    return 0;
}

static const char *const LV_NAMES[LV_NONE] = {"thread", "warp", "warpgroup",
                                               "cta", "cluster"};

/* GetScope's check of one axis: subscope -> scope must agree with what the
 * map holds. */
static int scope_add(td_axis a, int *map, int *n, int *inner, char *why,
                     size_t whylen)
{
    int sub, scope;

    if (!td_axis_is_thread(a))
        return 0;
    axis_levels(a, &sub, &scope);
    if (map[sub] != LV_NONE && map[sub] != scope) {
        td__lay_why(why, whylen,
                    "Check failed: it->second == scope (%s vs. %s) : Ill-formed "
                    "tile layout: conflicting scopes for %s",
                    LV_NAMES[map[sub]], LV_NAMES[scope], LV_NAMES[sub]);
        return TD_EINVAL;
    }
    if (map[sub] == LV_NONE)
        (*n)++;
    map[sub] = scope;
    if (*inner == LV_NONE || sub < *inner)
        *inner = sub;
    return 0;
}

/* TileLayoutNode::GetScope: the (innermost subscope, outermost scope)
 * levels of l's thread axes; *inner = LV_NONE when it has none. */
static int layout_scope(const td_layout *l, int *inner_out, int *outer_out,
                        char *why, size_t whylen)
{
    /* map[level] = the scope above it; map[LV_NONE] stays LV_NONE. */
    int map[LV_NONE + 1], inner = LV_NONE, n = 0, count = 0, rc, outer;

    for (int v = 0; v <= LV_NONE; v++)
        map[v] = LV_NONE;
    /* In its order: shard, replica, offsets. */
    for (int i = 0; i < l->nshard + l->nrep + TD_AXIS_COUNT; i++) {
        td_axis a;

        if (i < l->nshard)
            a = l->shard[i].axis;
        else if (i < l->nshard + l->nrep)
            a = l->rep[i - l->nshard].axis;
        else if (l->offset[i - l->nshard - l->nrep] != 0)
            a = (td_axis)(i - l->nshard - l->nrep);
        else
            continue;
        if ((rc = scope_add(a, map, &n, &inner, why, whylen)) < 0)
            return rc;
    }
    *inner_out = *outer_out = inner;
    if (inner == LV_NONE)
        return 0;
    for (outer = inner; map[outer] != LV_NONE && count < n; count++)
        outer = map[outer];
    if (count == n && map[outer] != LV_NONE) {
        /* bx (cta -> thread) with tx (thread -> cta): upstream's walk
         * never ends. */
        td__lay_why(why, whylen, "Ill-formed tile layout: cyclic scope chain");
        return TD_EINVAL;
    }
    if (count != n) {
        td__lay_why(why, whylen,
                    "Check failed: count == scope_map.size() (%d vs. %d) : "
                    "Ill-formed tile layout: disconnected scope chain",
                    count, n);
        return TD_EINVAL;
    }
    *outer_out = outer;
    return 0;
}

int td__lay_fuse_axes_by_scope(td_layout *l, char *why, size_t whylen)
{
    int inner, outer, rc;
    int64_t off[TD_AXIS_COUNT] = {0};

    if (l == NULL || td__lay_check(l, NULL, 0) < 0)
        return TD_EINVAL;
    if ((rc = layout_scope(l, &inner, &outer, why, whylen)) < 0)
        return rc;
    if (inner == LV_NONE)
        return 0;
    for (int i = 0; i < l->nshard; i++)
        if ((rc = fuse_iter(&l->shard[i], inner, outer)) < 0)
            return rc;
    for (int i = 0; i < l->nrep; i++)
        if ((rc = fuse_iter(&l->rep[i], inner, outer)) < 0)
            return rc;
    /* Offsets are unit iters of their axis.  Upstream sets the fused
     * axis's offset (the last one wins when two fuse into one axis); the
     * sum is the map's meaning, and what we keep. */
    for (int a = 0; a < TD_AXIS_COUNT; a++) {
        td_iter it = {1, l->offset[a], (td_axis)a};

        if (l->offset[a] == 0)
            continue;
        if ((rc = fuse_iter(&it, inner, outer)) < 0)
            return rc;
        if (!td__lay_add64(off[it.axis], it.stride, &off[it.axis]))
            return TD_ELIMIT;
    }
    memcpy(l->offset, off, sizeof off);
    return td__lay_check(l, NULL, 0) < 0 ? TD_ELIMIT : 0;
}

int td__lay_canonicalize_cuda(const td_layout *in, td_layout *out, char *why,
                              size_t whylen)
{
    td_layout t;
    int n = 0, rc;

    if (in == NULL || out == NULL || td__lay_check(in, NULL, 0) < 0)
        return TD_EINVAL;
    /* Unit iters go first (they name no scope), as in Canonicalize. */
    t = *in;
    for (int i = 0; i < in->nshard; i++)
        if (in->shard[i].extent != 1)
            t.shard[n++] = in->shard[i];
    if (n == 0 && in->nshard > 0)
        t.shard[n++] = (td_iter){1, 1, in->shard[0].axis};
    t.nshard = n;
    if ((rc = td__lay_fuse_axes_by_scope(&t, why, whylen)) < 0)
        return rc;
    return td__lay_canonicalize(&t, out);
}

/* ---- is_tile_inner --------------------------------------------------- */

/* A ComposeLayout's tile that is trivial (or a bare swizzle) stands for the
 * identity over `size` elements. */
static void tile_or_identity(const td_layout *l, int64_t size, td_layout *out)
{
    td_layout t = *l;

    t.swizzle = false;
    if (t.nshard == 0 || td__lay_is_trivial(&t)) {
        memset(out, 0, sizeof *out);
        out->nshard = 1;
        out->shard[0] = (td_iter){size, 1, TD_AXIS_M};
        return;
    }
    *out = t;
}

/* An outer iter on an axis the atom spans is counted in atoms: its stride
 * must be a multiple of the atom's span there (rescale_by_inner_span). */
static bool rescale(td_iter *it, const bool *used, const int64_t *span)
{
    if (!used[it->axis] || it->extent == 1)
        return true;
    if (span[it->axis] == 0 || it->stride % span[it->axis] != 0)
        return false;
    it->stride /= span[it->axis];
    return true;
}

int td__lay_is_tile_inner(const td_layout *atom, const td_layout *tiled,
                          const int64_t *tiled_shape,
                          const int64_t *inner_shape, int ndim,
                          td_layout *outer, char *why, size_t whylen)
{
    td_layout a, t, ac, tc, ag, tg, r;
    int64_t factored[TD_MAX_RANK], asize = 1, tsize = 1;
    int64_t span[TD_AXIS_COUNT] = {0};
    bool used[TD_AXIS_COUNT] = {false};
    int aseps[TD_MAX_RANK + 1], tseps[TD_MAX_RANK + 1], rc;
    int ai, ao, ti, to;

    if (atom == NULL || tiled == NULL || tiled_shape == NULL ||
        inner_shape == NULL || outer == NULL || ndim < 1 ||
        2 * ndim > TD_MAX_RANK || td__lay_check(atom, NULL, 0) < 0 ||
        td__lay_check(tiled, NULL, 0) < 0)
        return TD_EINVAL;
    /* A swizzled atom is the inner tile of a layout with the same swizzle
     * only; a plain one of a plain layout only. */
    if (atom->swizzle != tiled->swizzle ||
        (atom->swizzle &&
         memcmp(atom->swizzle_bits, tiled->swizzle_bits,
                sizeof atom->swizzle_bits) != 0))
        return TD_ENOMATCH;
    for (int d = 0; d < ndim; d++) {
        if (inner_shape[d] < 1 || tiled_shape[d] < 1 ||
            tiled_shape[d] % inner_shape[d] != 0) {
            td__lay_why(why, whylen,
                        "Check failed: (analyzer->CanProveEqual(floormod(shape[i], "
                        "factor[i]), 0)) is false: Shape[i] must be divisible by "
                        "factor[i]");
            return TD_EINVAL;
        }
        factored[2 * d] = tiled_shape[d] / inner_shape[d];
        factored[2 * d + 1] = inner_shape[d];
        if (!td__lay_mul64(asize, inner_shape[d], &asize) ||
            !td__lay_mul64(tsize, tiled_shape[d], &tsize))
            return TD_ELIMIT;
    }
    if (atom->swizzle) {
        tile_or_identity(atom, asize, &a);
        tile_or_identity(tiled, tsize, &t);
    } else {
        a = *atom;
        t = *tiled;
    }
    if ((rc = td__lay_canonicalize_cuda(&t, &tc, why, whylen)) < 0 ||
        (rc = td__lay_canonicalize_cuda(&a, &ac, why, whylen)) < 0 ||
        (rc = layout_scope(&tc, &ti, &to, why, whylen)) < 0 ||
        (rc = layout_scope(&ac, &ai, &ao, why, whylen)) < 0)
        return rc;
    if (ti != LV_NONE && ai != LV_NONE) {
        if (ti != ai || ao > to)
            return TD_ENOMATCH;
        if (to > ao) {
            /* Upstream splits the tiled layout's axes down to the atom's
             * scope (SplitAxesByScope); not ported. */
            td__lay_why(why, whylen,
                        "is_tile_inner: splitting the tiled layout's thread "
                        "axes to the atom's scope is not supported");
            return TD_ELIMIT;
        }
    }
    if ((rc = td__lay_group_why(&tc, factored, 2 * ndim, &tg, tseps, why,
                                whylen)) < 0 ||
        (rc = td__lay_group_why(&ac, inner_shape, ndim, &ag, aseps, why,
                                whylen)) < 0)
        return rc;
    for (int i = 0; i < ac.nshard; i++) {
        td_axis x = ac.shard[i].axis;

        if (!used[x] && (rc = td__lay_span(&ac, (int)x, &span[x])) < 0)
            return rc;
        used[x] = true;
    }
    memset(&r, 0, sizeof r);
    for (int d = 0; d < ndim; d++) {
        int lo = tseps[2 * d], hi = tseps[2 * d + 2];
        int ic = aseps[d + 1] - aseps[d], tcnt = hi - lo;

        if (ic > tcnt)
            return TD_ENOMATCH;
        /* The atom's iters are the dimension's innermost ones. */
        for (int j = 0; j < ic; j++) {
            const td_iter *x = &ag.shard[aseps[d] + j], *y = &tg.shard[hi - ic + j];

            if (x->extent != y->extent ||
                (x->extent != 1 && (x->stride != y->stride || x->axis != y->axis)))
                return TD_ENOMATCH;
        }
        for (int j = 0; j < tcnt - ic; j++) {
            td_iter it = tg.shard[lo + j];

            if (!rescale(&it, used, span))
                return TD_ENOMATCH;
            r.shard[r.nshard++] = it;
        }
    }
    for (int i = 0; i < tc.nrep; i++) {
        bool in_atom = false;
        td_iter it = tc.rep[i];

        for (int j = 0; j < ac.nrep; j++)
            in_atom = in_atom || memcmp(&ac.rep[j], &it, sizeof it) == 0;
        if (in_atom)
            continue;
        if (!rescale(&it, used, span))
            return TD_ENOMATCH;
        r.rep[r.nrep++] = it;
    }
    /* The tiled layout's offsets less the atom's (axes the tiled layout has
     * no offset on are left out, as upstream). */
    for (int x = 0; x < TD_AXIS_COUNT; x++)
        if (tc.offset[x] != 0)
            r.offset[x] = tc.offset[x] - ac.offset[x];
    if (td__lay_check(&r, NULL, 0) < 0)
        return TD_ELIMIT;
    *outer = r;
    return 0;
}

/* ---- structural equality --------------------------------------------- */

static bool same_iters(const td_iter *x, const td_iter *y, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i].extent != y[i].extent || x[i].stride != y[i].stride ||
            x[i].axis != y[i].axis)
            return false;
    return true;
}

bool td__lay_same(const td_layout *a, const td_layout *b)
{
    if (a == NULL || b == NULL || a->nshard != b->nshard || a->nrep != b->nrep ||
        a->nshard < 0 || a->nshard > TD_MAX_LAYOUT_ITERS || a->nrep < 0 ||
        a->nrep > TD_MAX_LAYOUT_ITERS || a->swizzle != b->swizzle)
        return false;
    if (a->swizzle && memcmp(a->swizzle_bits, b->swizzle_bits,
                             sizeof a->swizzle_bits) != 0)
        return false;
    return same_iters(a->shard, b->shard, a->nshard) &&
           same_iters(a->rep, b->rep, a->nrep) &&
           memcmp(a->offset, b->offset, sizeof a->offset) == 0;
}

/* ---- swizzle --------------------------------------------------------- */

int td__lay_swz_check(const td_lay_swz *z)
{
    if (z == NULL)
        return TD_EINVAL;
    if (!z->on)
        return 0;
    if (z->per_element < 0 || z->swizzle_len < 0 || z->atom_len < 0 ||
        z->per_element + z->swizzle_len + z->atom_len > 40)
        return TD_EINVAL;
    return 0;
}

int td__lay_swz_apply(const td_lay_swz *z, int64_t m, int64_t *out)
{
    int64_t mask;

    if (z == NULL || out == NULL || td__lay_swz_check(z) < 0 || m < 0)
        return TD_EINVAL;
    if (!z->on) {
        *out = m;
        return 0;
    }
    mask = ((int64_t)1 << z->swizzle_len) - 1;
    if (z->inner)
        *out = m ^ (((m >> (z->per_element + z->atom_len)) & mask)
                    << z->per_element);
    else
        *out = m ^ (((m >> z->per_element) & mask)
                    << (z->per_element + z->atom_len));
    return 0;
}

void td__lay_swz_from_layout(const td_layout *l, td_lay_swz *z)
{
    memset(z, 0, sizeof *z);
    if (l != NULL && l->swizzle) {
        /* Swizzle(b, m, s) is ComposeLayout(m, b, s, ...), inner form. */
        z->on = true;
        z->swizzle_len = l->swizzle_bits[0];
        z->per_element = l->swizzle_bits[1];
        z->atom_len = l->swizzle_bits[2];
        z->inner = true;
    }
}

bool td__lay_is_trivial(const td_layout *l)
{
    td_layout c;

    if (l == NULL || td__lay_canonicalize(l, &c) < 0 || c.nrep != 0)
        return false;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (c.offset[a] != 0)
            return false;
    return c.nshard == 1 && c.shard[0].axis == TD_AXIS_M &&
           c.shard[0].stride == 1;
}

int td__lay_row_major(const int64_t *shape, int ndim, td_layout *out)
{
    int64_t stride = 1;

    if (shape == NULL || out == NULL || ndim < 1 || ndim > TD_MAX_RANK)
        return TD_EINVAL;
    memset(out, 0, sizeof *out);
    out->nshard = ndim;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] < 1)
            return TD_EINVAL;
        out->shard[d] = (td_iter){shape[d], stride, TD_AXIS_M};
        if (!td__lay_mul64(stride, shape[d], &stride))
            return TD_ELIMIT;
    }
    return 0;
}

int td__lay_strip_swizzle(const td_layout *tile, const int64_t *extents,
                          int ndim, td_layout *out)
{
    int64_t size, want = 1;
    int rc;

    if (tile == NULL || extents == NULL || out == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_size(tile, &size)) < 0)
        return rc;
    for (int d = 0; d < ndim; d++)
        if (!td__lay_mul64(want, extents[d], &want))
            return TD_ELIMIT;
    if (td__lay_is_trivial(tile) && size != want)
        return td__lay_row_major(extents, ndim, out);
    *out = *tile;
    out->swizzle = false;
    return 0;
}

/* ---- apply with a shape ---------------------------------------------- */

int td__lay_apply_shape(const td_layout *l, const int64_t *coord,
                        const int64_t *shape, int n,
                        int64_t coords[TD_AXIS_COUNT])
{
    int64_t flat = 0;

    if (l == NULL || coord == NULL || shape == NULL || coords == NULL ||
        n < 1 || n > TD_MAX_LAYOUT_ITERS || td__lay_check(l, NULL, 0) < 0)
        return TD_EINVAL;
    for (int i = 0; i < n; i++) {
        if (shape[i] < 1 || coord[i] < 0 || coord[i] >= shape[i])
            return TD_EINVAL;
        if (!td__lay_mul64(flat, shape[i], &flat) ||
            !td__lay_add64(flat, coord[i], &flat))
            return TD_ELIMIT;
    }
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        coords[a] = l->offset[a];
    /* As TVM's SplitCoord: every iter but the outermost takes the index
     * modulo its extent; the outermost takes the rest, unreduced. */
    for (int i = l->nshard - 1; i >= 0; i--) {
        const td_iter *it = &l->shard[i];
        int64_t c = i > 0 ? flat % it->extent : flat, t;

        flat /= it->extent;
        if (!td__lay_mul64(c, it->stride, &t) ||
            !td__lay_add64(coords[it->axis], t, &coords[it->axis]))
            return TD_ELIMIT;
    }
    return 0;
}

/* ---- direct sums (upstream TileLayout.direct_sum, is_direct_sum_right) */

int td__lay_direct_sum(const td_layout *right, const td_layout *left,
                       const int64_t *left_shape,
                       const int64_t *right_shape, int ndim,
                       td_layout *out)
{
    td_layout lg, rg, t;
    int lseps[TD_MAX_RANK + 1], rseps[TD_MAX_RANK + 1], rc;

    if (right == NULL || left == NULL || left_shape == NULL ||
        right_shape == NULL || out == NULL || ndim < 1 ||
        ndim > TD_MAX_RANK)
        return TD_EINVAL;
    if (right->swizzle || left->swizzle)
        return TD_EINVAL;
    if ((rc = td__lay_group(left, left_shape, ndim, &lg, lseps)) < 0 ||
        (rc = td__lay_group(right, right_shape, ndim, &rg, rseps)) < 0)
        return rc;
    memset(&t, 0, sizeof t);
    for (int d = 0; d < ndim; d++) {
        const td_layout *g[2] = {&lg, &rg};
        const int *seps[2] = {lseps, rseps};
        for (int w = 0; w < 2; w++)
            for (int k = seps[w][d]; k < seps[w][d + 1]; k++) {
                if (t.nshard >= TD_MAX_LAYOUT_ITERS)
                    return TD_ELIMIT;
                t.shard[t.nshard++] = g[w]->shard[k];
            }
    }
    if (lg.nrep + rg.nrep > TD_MAX_LAYOUT_ITERS)
        return TD_ELIMIT;
    for (int i = 0; i < lg.nrep; i++)
        t.rep[t.nrep++] = lg.rep[i];
    for (int i = 0; i < rg.nrep; i++)
        t.rep[t.nrep++] = rg.rep[i];
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (!td__lay_add64(lg.offset[a], rg.offset[a], &t.offset[a]))
            return TD_ELIMIT;
    if (td__lay_check(&t, NULL, 0) < 0)
        return TD_ELIMIT;
    return td__lay_canonicalize(&t, out);
}

#define DSUM_MAX ((int64_t)1 << 20)

int td__lay_is_direct_sum_right(const td_layout *right, const td_layout *sum,
                                const int64_t *interleaved_shape,
                                const int64_t *right_shape, int ndim,
                                int64_t left_at0[TD_AXIS_COUNT])
{
    int64_t total = 1, rsize = 1, ssize, nrs;
    int rc;

    if (right == NULL || sum == NULL || interleaved_shape == NULL ||
        right_shape == NULL || ndim < 1 || ndim > TD_MAX_RANK / 2 ||
        right->swizzle || sum->swizzle)
        return TD_EINVAL;
    for (int d = 0; d < 2 * ndim; d++) {
        if (interleaved_shape[d] < 1 ||
            !td__lay_mul64(total, interleaved_shape[d], &total) ||
            total > DSUM_MAX)
            return TD_EINVAL;
        if (d % 2 == 1 && interleaved_shape[d] != right_shape[d / 2])
            return TD_EINVAL;
    }
    for (int d = 0; d < ndim; d++)
        rsize *= right_shape[d];
    if ((rc = td__lay_size(sum, &ssize)) < 0 ||
        (rc = td__lay_size(right, &nrs)) < 0)
        return rc;
    if (ssize != total || nrs != rsize)
        return TD_EINVAL;
    int64_t r0[TD_AXIS_COUNT], s0[TD_AXIS_COUNT];
    if ((rc = td__lay_map(right, 0, r0)) < 0)
        return rc;
    for (int64_t e = 0; e < total; e++) {
        /* e's interleaved coordinate: split into a (left) and b (right),
         * the right one's row-major index, and the element at b = 0. */
        int64_t rem = e, bidx = 0, bmul = 1, base = 0, mul = 1;
        int64_t coord[2 * TD_MAX_RANK];
        for (int d = 2 * ndim - 1; d >= 0; d--) {
            coord[d] = rem % interleaved_shape[d];
            rem /= interleaved_shape[d];
        }
        for (int d = 2 * ndim - 1; d >= 0; d--) {
            if (d % 2 == 1) {
                bidx += coord[d] * bmul;
                bmul *= interleaved_shape[d];
            } else {
                base += coord[d] * mul;
            }
            mul *= interleaved_shape[d];
        }
        int64_t sv[TD_AXIS_COUNT], rv[TD_AXIS_COUNT];
        if (bidx == 0)
            continue;
        if ((rc = td__lay_map(sum, base, s0)) < 0 ||
            (rc = td__lay_map(sum, e, sv)) < 0 ||
            (rc = td__lay_map(right, bidx, rv)) < 0)
            return rc;
        for (int a = 0; a < TD_AXIS_COUNT; a++)
            if (sv[a] - s0[a] != rv[a] - r0[a])
                return 0;
    }
    /* Replicas are not compared: upstream's check reads the shards
     * alone (a sum without right's R[4 : 32@TLane] is accepted). */
    if (left_at0 != NULL) {
        int64_t z[TD_AXIS_COUNT];
        if ((rc = td__lay_map(sum, 0, z)) < 0)
            return rc;
        for (int a = 0; a < TD_AXIS_COUNT; a++)
            left_at0[a] = z[a] - r0[a];
    }
    return 1;
}
