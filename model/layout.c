/*
 * The TileLayout model's operations (declared in layout.h): checking,
 * canonical form, size, span and storage, grouping by a shape, the
 * per-thread box of a region, and the element -> owner maps.  Behaviour
 * follows upstream TIRx (tile_canonicalize.cc, tile_tile_ops.cc Group and
 * layout_utils.py), with the deviations documented where they happen.
 */
#include "layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>


void td__lay_why(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || whylen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}

static int check_iters(const td_iter *it, int n, const char *what, char *why,
                       size_t whylen)
{
    if (n < 0 || n > TD_MAX_LAYOUT_ITERS) {
        td__lay_why(why, whylen, "%s has %d iters (limit %d)", what, n,
                TD_MAX_LAYOUT_ITERS);
        return TD_EINVAL;
    }
    for (int i = 0; i < n; i++) {
        if ((unsigned)it[i].axis >= TD_AXIS_COUNT) {
            td__lay_why(why, whylen, "%s iter %d has an unknown axis", what, i);
            return TD_EINVAL;
        }
        if (it[i].extent < 1 || it[i].extent > TD_MAX_EXTENT) {
            td__lay_why(why, whylen, "%s iter %d has extent %lld", what, i,
                    (long long)it[i].extent);
            return TD_EINVAL;
        }
        if (it[i].stride < -TD_LAY_MAX_STRIDE ||
            it[i].stride > TD_LAY_MAX_STRIDE) {
            td__lay_why(why, whylen, "%s iter %d has stride %lld", what, i,
                    (long long)it[i].stride);
            return TD_EINVAL;
        }
    }
    return 0;
}

int td__lay_check(const td_layout *l, char *why, size_t whylen)
{
    int rc;

    if (l == NULL) {
        td__lay_why(why, whylen, "no layout");
        return TD_EINVAL;
    }
    if ((rc = check_iters(l->shard, l->nshard, "shard", why, whylen)) < 0)
        return rc;
    if ((rc = check_iters(l->rep, l->nrep, "replica", why, whylen)) < 0)
        return rc;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (l->offset[a] < -TD_LAY_MAX_STRIDE ||
            l->offset[a] > TD_LAY_MAX_STRIDE) {
            td__lay_why(why, whylen, "offset on %s is %lld",
                    td_axis_name((td_axis)a), (long long)l->offset[a]);
            return TD_EINVAL;
        }
    if (l->swizzle) {
        const int *z = l->swizzle_bits;
        if (z[0] < 0 || z[0] > 31 || z[1] < 0 || z[1] > 31 || z[2] < 0 ||
            z[2] > 31 || z[0] > z[2]) {
            td__lay_why(why, whylen, "bad swizzle (%d, %d, %d)", z[0], z[1],
                        z[2]);
            return TD_EINVAL;
        }
    }
    return 0;
}

int td__lay_swizzle(const td_layout *l, int64_t off, int64_t *out)
{
    int rc;

    if (out == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_check(l, NULL, 0)) < 0)
        return rc;
    if (!l->swizzle) {
        *out = off;
        return 0;
    }
    if (off < 0)
        return TD_EINVAL;
    /* Bits [m+s, m+s+b) XORed into bits [m, m+b); b <= s keeps the source
     * bits out of the target, so the map is its own inverse.  m + s <= 62
     * (each at most 31): the shift is defined. */
    int b = l->swizzle_bits[0], m = l->swizzle_bits[1], sh = l->swizzle_bits[2];
    int64_t mask = ((int64_t)1 << b) - 1;
    *out = off ^ (((off >> (m + sh)) & mask) << m);
    return 0;
}

/* Checks a logical shape: 1 <= ndim <= TD_MAX_RANK, extents in [1, max]. */
static int check_shape(const int64_t *shape, int ndim)
{
    if (shape == NULL || ndim < 1 || ndim > TD_MAX_RANK)
        return TD_EINVAL;
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 1 || shape[d] > TD_MAX_EXTENT)
            return TD_EINVAL;
    return 0;
}

/* ---- canonical form, size, span, storage ----------------------------- */

/* Rewrites a laneid / warpid iter to tx (step 2 of canonicalize). */
static int fuse_to_tx(td_iter *it)
{
    if (it->axis == TD_AXIS_LANEID) {
        it->axis = TD_AXIS_TX;
    } else if (it->axis == TD_AXIS_WARPID) {
        if (!td__lay_mul64(it->stride, 32, &it->stride))
            return TD_ELIMIT;
        it->axis = TD_AXIS_TX;
    }
    return 0;
}

static int iter_cmp(const td_iter *a, const td_iter *b)
{
    if (a->axis != b->axis)
        return a->axis < b->axis ? -1 : 1;
    if (a->stride != b->stride)
        return a->stride < b->stride ? -1 : 1;
    if (a->extent != b->extent)
        return a->extent < b->extent ? -1 : 1;
    return 0;
}

int td__lay_canonicalize(const td_layout *in, td_layout *out)
{
    td_layout t;
    int rc, n = 0;
    bool lane = false, warp = false;

    if (out == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_check(in, NULL, 0)) < 0)
        return rc;
    t = *in;

    /* 0. Unit shard iters carry no index; an all-unit shard keeps one so
     * that the layout still names an axis (upstream RemoveUnitIters). */
    for (int i = 0; i < in->nshard; i++)
        if (in->shard[i].extent != 1)
            t.shard[n++] = in->shard[i];
    if (n == 0 && in->nshard > 0) {
        t.shard[0] = (td_iter){1, 1, in->shard[0].axis};
        n = 1;
    }
    t.nshard = n;

    /* 2. FuseAxesByScope under CUDA: a shard spanning laneid and warpid
     * lives in (thread, cta) scope, whose fused axis is tx.  Upstream
     * rewrites every iter and offset of the layout, which keeps the map
     * consistent. */
    for (int i = 0; i < t.nshard; i++) {
        lane = lane || t.shard[i].axis == TD_AXIS_LANEID;
        warp = warp || t.shard[i].axis == TD_AXIS_WARPID;
    }
    if (lane && warp) {
        int64_t w, off;

        for (int i = 0; i < t.nshard; i++)
            if ((rc = fuse_to_tx(&t.shard[i])) < 0)
                return rc;
        for (int i = 0; i < t.nrep; i++)
            if ((rc = fuse_to_tx(&t.rep[i])) < 0)
                return rc;
        if (!td__lay_mul64(t.offset[TD_AXIS_WARPID], 32, &w) ||
            !td__lay_add64(t.offset[TD_AXIS_TX], t.offset[TD_AXIS_LANEID], &off) ||
            !td__lay_add64(off, w, &off))
            return TD_ELIMIT;
        t.offset[TD_AXIS_TX] = off;
        t.offset[TD_AXIS_LANEID] = 0;
        t.offset[TD_AXIS_WARPID] = 0;
    }

    /* 3. Fuse adjacent same-axis iters that form one contiguous range:
     * (eo, so) then (ei, si) with ei*si == so is (eo*ei, si). */
    n = 0;
    for (int i = 0; i < t.nshard; i++) {
        td_iter it = t.shard[i];
        int64_t span;

        if (n > 0 && t.shard[n - 1].axis == it.axis &&
            td__lay_mul64(it.extent, it.stride, &span) &&
            span == t.shard[n - 1].stride) {
            if (!td__lay_mul64(t.shard[n - 1].extent, it.extent,
                       &t.shard[n - 1].extent))
                return TD_ELIMIT;
            t.shard[n - 1].stride = it.stride;
            continue;
        }
        t.shard[n++] = it;
    }
    t.nshard = n;

    /* 3b. Fused extents and fused strides must still be a valid layout, so
     * that every later function accepts the canonical form. */
    if (td__lay_check(&t, NULL, 0) < 0)
        return TD_ELIMIT;

    /* 4. Replica order carries no meaning; sort it (insertion sort, stable)
     * so that equal layouts compare equal. */
    for (int i = 1; i < t.nrep; i++) {
        td_iter key = t.rep[i];
        int j = i - 1;

        while (j >= 0 && iter_cmp(&t.rep[j], &key) > 0) {
            t.rep[j + 1] = t.rep[j];
            j--;
        }
        t.rep[j + 1] = key;
    }
    *out = t;
    return 0;
}

int td__lay_size(const td_layout *l, int64_t *out)
{
    int64_t size = 1;
    int rc;

    if (out == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_check(l, NULL, 0)) < 0)
        return rc;
    for (int i = 0; i < l->nshard; i++)
        if (!td__lay_mul64(size, l->shard[i].extent, &size))
            return TD_ELIMIT;
    *out = size;
    return 0;
}

static bool axis_selected(td_axis a, int axis)
{
    return axis == TD_LAY_ALL_MEMORY ? !td_axis_is_thread(a)
                                     : (int)a == axis;
}

static bool span_add(int64_t *acc, const td_iter *it, int n, int axis)
{
    for (int i = 0; i < n; i++) {
        int64_t t;

        if (!axis_selected(it[i].axis, axis))
            continue;
        if (!td__lay_mul64(it[i].extent - 1, it[i].stride, &t) || !td__lay_add64(*acc, t, acc))
            return false;
    }
    return true;
}

int td__lay_span(const td_layout *l, int axis, int64_t *out)
{
    int64_t span = 1;
    int rc;

    if (out == NULL || axis < TD_LAY_ALL_MEMORY || axis >= TD_AXIS_COUNT)
        return TD_EINVAL;
    if ((rc = td__lay_check(l, NULL, 0)) < 0)
        return rc;
    if (!span_add(&span, l->shard, l->nshard, axis) ||
        !span_add(&span, l->rep, l->nrep, axis))
        return TD_ELIMIT;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (axis_selected((td_axis)a, axis) &&
            !td__lay_add64(span, l->offset[a], &span))
            return TD_ELIMIT;
    *out = span;
    return 0;
}

static int drop_thread_iters(td_iter *it, int n)
{
    int k = 0;

    for (int i = 0; i < n; i++)
        if (!td_axis_is_thread(it[i].axis))
            it[k++] = it[i];
    return k;
}

int td__lay_storage(const td_layout *in, td_layout *out)
{
    td_layout t;
    int rc;

    if (out == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_check(in, NULL, 0)) < 0)
        return rc;
    t = *in;
    t.nshard = drop_thread_iters(t.shard, t.nshard);
    t.nrep = drop_thread_iters(t.rep, t.nrep);
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (td_axis_is_thread((td_axis)a))
            t.offset[a] = 0;
    *out = t;
    return 0;
}

/* ---- group ---------------------------------------------------------- */

static int push_iter(td_layout *t, int *n, int64_t extent, int64_t stride,
                     td_axis axis)
{
    if (*n >= TD_MAX_LAYOUT_ITERS)
        return TD_ELIMIT;
    t->shard[(*n)++] = (td_iter){extent, stride, axis};
    return 0;
}

/* TVM's ICHECK text for a failed group: which check, the layout and the
 * shape as Python prints them ("(16, 8)", "(2,)"). */
static void group_why(char *why, size_t whylen, const char *check,
                      const td_layout *l, const int64_t *shape, int ndim)
{
    char lay[512], shp[256];
    td_sbuf o = {shp, sizeof shp, 0};

    if (why == NULL || whylen == 0)
        return;
    td__lay_format_tvm(l, lay, sizeof lay);
    td__sbuf_printf(&o, "(");
    for (int d = 0; d < ndim; d++)
        td__sbuf_printf(&o, "%s%lld", d ? ", " : "", (long long)shape[d]);
    td__sbuf_printf(&o, "%s)", ndim == 1 ? "," : "");
    td__lay_why(why, whylen,
                "Check failed: (%s) is false: layout %s can not be grouped by "
                "shape %s",
                check, lay, shp);
}

int td__lay_group_why(const td_layout *l, const int64_t *shape, int ndim,
                      td_layout *out, int *seps, char *why, size_t whylen)
{
    td_layout t;
    int rc, n = 0, d = 0;
    int64_t prod = 1;

    if (out == NULL || seps == NULL || check_shape(shape, ndim) < 0)
        return TD_EINVAL;
    if ((rc = td__lay_check(l, NULL, 0)) < 0)
        return rc;
    t = *l;
    seps[0] = 0;
    /* `prod` is the product of the iters (and iter remainders) collected
     * for dim d so far.  When it becomes a multiple of shape[d], the
     * current iter is split: its outer part (extent/c, stride*c) closes
     * dim d and the inner remainder c carries on into dim d+1.  A dim of
     * extent 1 closes immediately with a unit iter of the current axis. */
    for (int i = 0; i < l->nshard; i++) {
        int64_t ext = l->shard[i].extent;
        int64_t stride = l->shard[i].stride;
        td_axis axis = l->shard[i].axis;

        if (!td__lay_mul64(prod, ext, &prod))
            return TD_ELIMIT;
        while (d < ndim && prod % shape[d] == 0) {
            int64_t c = prod / shape[d], st;

            if (ext % c != 0) {
                group_why(why, whylen,
                          "analyzer->CanProveEqual(floormod(extent_i, c), 0)",
                          l, shape, ndim);
                return TD_EINVAL;
            }
            if (!td__lay_mul64(stride, c, &st))
                return TD_ELIMIT;
            if ((rc = push_iter(&t, &n, ext / c, st, axis)) < 0)
                return rc;
            ext = c;
            prod = c;
            seps[++d] = n;
        }
        if (ext != 1) {
            if (d >= ndim) {
                group_why(why, whylen, "shape_idx < shape.size()", l, shape,
                          ndim);
                return TD_EINVAL;
            }
            if ((rc = push_iter(&t, &n, ext, stride, axis)) < 0)
                return rc;
        }
    }
    if (d != ndim) {
        group_why(why, whylen, "shape_idx == shape.size()", l, shape, ndim);
        return TD_EINVAL;
    }
    t.nshard = n;
    /* Split strides grow by the split factor; keep the result valid. */
    if (td__lay_check(&t, NULL, 0) < 0)
        return TD_ELIMIT;
    *out = t;
    return 0;
}

int td__lay_group(const td_layout *l, const int64_t *shape, int ndim,
                  td_layout *out, int *seps)
{
    return td__lay_group_why(l, shape, ndim, out, seps, NULL, 0);
}

/* ---- local region ---------------------------------------------------- */

/*
 * For a dim with thread iters, the region's first and last index are split
 * into per-iter coordinates (mixed radix over the dim's grouped extents).
 * Accepted when
 * - every thread iter is fully covered (0 .. e-1), as upstream;
 * - every local iter is single-valued (end == start), spans two adjacent
 *   values (end - start == 1) or is fully covered.  Upstream rejects the
 *   single-valued case, contradicting its own docstring example
 *   ((2,8,4,2):(8@m,2@laneid,2@m,1@m), [16,8], [8:16,:] -> ([2,8],[1,0],
 *   [1,8])); we accept it (quirk 7.6 fixed to match the docstring);
 * - the region is exactly the box of those coordinate ranges (upstream
 *   asserts this).  A contiguous index range that is a box has one varying
 *   iter with every iter inside it fully covered, so the local iters then
 *   also form one contiguous range of local storage.
 * The local start / end combine the local coordinates outer-first (upstream
 * folds them innermost-first, which only agrees when there is one local
 * iter or the region is full).
 */
static int dim_local_region(const td_iter *it, int n, int64_t st,
                            int64_t ext, int64_t *lshape, int64_t *lst,
                            int64_t *lext, char *why, size_t whylen)
{
    int64_t sc[TD_MAX_LAYOUT_ITERS], ec[TD_MAX_LAYOUT_ITERS];
    int64_t s = st, e = st + ext - 1, box = 1;
    int64_t shp = 1, lo = 0, hi = 0;

    for (int k = n - 1; k >= 0; k--) {
        sc[k] = s % it[k].extent;
        s /= it[k].extent;
        ec[k] = e % it[k].extent;
        e /= it[k].extent;
    }
    for (int k = 0; k < n; k++) {
        bool full = sc[k] == 0 && ec[k] == it[k].extent - 1;

        if (td_axis_is_thread(it[k].axis) && !full) {
            td__lay_why(why, whylen,
                    "region covers part of thread iter (%lld, %lld, %s)",
                    (long long)it[k].extent, (long long)it[k].stride,
                    td_axis_name(it[k].axis));
            return TD_ENOMATCH;
        }
        if (!td_axis_is_thread(it[k].axis) && !full &&
            ec[k] - sc[k] > 1) {
            td__lay_why(why, whylen,
                    "region covers %lld of %lld values of local iter",
                    (long long)(ec[k] - sc[k] + 1), (long long)it[k].extent);
            return TD_ENOMATCH;
        }
        if (box >= 0 && (ec[k] < sc[k] ||
                         !td__lay_mul64(box, ec[k] - sc[k] + 1, &box)))
            box = -1;
    }
    if (box != ext) {
        td__lay_why(why, whylen, "region is not a rectangle of the layout iters");
        return TD_ENOMATCH;
    }
    for (int k = 0; k < n; k++) {
        if (td_axis_is_thread(it[k].axis))
            continue;
        /* Bounded by the dim's extent (<= TD_MAX_EXTENT): no overflow. */
        shp *= it[k].extent;
        lo = lo * it[k].extent + sc[k];
        hi = hi * it[k].extent + ec[k];
    }
    *lshape = shp;
    *lst = lo;
    *lext = hi - lo + 1;
    return 0;
}

int td__lay_local_region(const td_layout *l, const int64_t *shape, int ndim,
                         const int64_t *start, const int64_t *extent,
                         td_lay_local *out, char *why, size_t whylen)
{
    td_layout g;
    int seps[TD_MAX_RANK + 1];
    int rc;

    if (out == NULL || start == NULL || extent == NULL ||
        check_shape(shape, ndim) < 0) {
        td__lay_why(why, whylen, "bad shape or region");
        return TD_EINVAL;
    }
    for (int d = 0; d < ndim; d++)
        if (start[d] < 0 || extent[d] < 1 || start[d] > shape[d] ||
            extent[d] > shape[d] - start[d]) {
            td__lay_why(why, whylen, "region out of bounds in dim %d", d);
            return TD_EINVAL;
        }
    if ((rc = td__lay_group(l, shape, ndim, &g, seps)) < 0) {
        td__lay_why(why, whylen, "layout cannot be grouped by the shape");
        return rc;
    }
    memset(out, 0, sizeof(*out));
    for (int d = 0; d < ndim; d++) {
        const td_iter *it = &g.shard[seps[d]];
        int n = seps[d + 1] - seps[d];
        bool has_local = false, has_thread = false;
        int k = out->ndim;

        for (int i = 0; i < n; i++) {
            if (td_axis_is_thread(it[i].axis))
                has_thread = true;
            else
                has_local = true;
        }
        /* A pure-thread dim has no per-thread part to restrict: the
         * region must cover it (upstream drops such dims unchecked, so a
         * region cutting through the lanes was silently widened). */
        if (!has_local) {
            if (start[d] != 0 || extent[d] != shape[d]) {
                td__lay_why(why, whylen, "region covers part of pure-thread dim %d",
                        d);
                return TD_ENOMATCH;
            }
            continue;
        }
        if (!has_thread) {
            out->shape[k] = shape[d];
            out->start[k] = start[d];
            out->extent[k] = extent[d];
        } else if ((rc = dim_local_region(it, n, start[d], extent[d],
                                          &out->shape[k], &out->start[k],
                                          &out->extent[k], why, whylen)) < 0) {
            return rc;
        }
        out->ndim++;
    }
    if (out->ndim == 0) {
        out->ndim = 1;
        out->shape[0] = 1;
        out->start[0] = 0;
        out->extent[0] = 1;
    }
    return 0;
}

/* ---- element -> owner maps ------------------------------------------- */

int td__lay_map(const td_layout *l, int64_t elem,
                int64_t coords[TD_AXIS_COUNT])
{
    int64_t size, rem = elem;
    int rc;

    if (coords == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_size(l, &size)) < 0)
        return rc;
    if (elem < 0 || elem >= size)
        return TD_EINVAL;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        coords[a] = l->offset[a];
    for (int i = l->nshard - 1; i >= 0; i--) {
        const td_iter *it = &l->shard[i];
        int64_t c = rem % it->extent, t;

        rem /= it->extent;
        if (!td__lay_mul64(c, it->stride, &t) ||
            !td__lay_add64(coords[it->axis], t, &coords[it->axis]))
            return TD_ELIMIT;
    }
    /* TVM's ComposeLayout: the swizzle permutes the offset the tile
     * layout gives, its constant offset included. */
    if (l->swizzle)
        return td__lay_swizzle(l, coords[TD_AXIS_M], &coords[TD_AXIS_M]);
    return 0;
}

int td__lay_replica_count(const td_layout *l, int64_t *out)
{
    int64_t n = 1;
    int rc;

    if (out == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_check(l, NULL, 0)) < 0)
        return rc;
    for (int i = 0; i < l->nrep; i++)
        if (!td__lay_mul64(n, l->rep[i].extent, &n))
            return TD_ELIMIT;
    *out = n;
    return 0;
}

int td__lay_replica(const td_layout *l, int64_t r,
                    int64_t coords[TD_AXIS_COUNT])
{
    int64_t n;
    int rc;

    if (coords == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_replica_count(l, &n)) < 0)
        return rc;
    if (r < 0 || r >= n)
        return TD_EINVAL;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        coords[a] = 0;
    for (int i = l->nrep - 1; i >= 0; i--) {
        const td_iter *it = &l->rep[i];
        int64_t c = r % it->extent, t;

        r /= it->extent;
        if (!td__lay_mul64(c, it->stride, &t) ||
            !td__lay_add64(coords[it->axis], t, &coords[it->axis]))
            return TD_ELIMIT;
    }
    return 0;
}

/* Weight of one unit of a thread axis in the linear thread id; 0 for the
 * memory axis, -1 for block axes (a layout spanning blocks has no single
 * linear thread id). */
static int64_t thread_weight(td_axis a)
{
    switch (a) {
    case TD_AXIS_M:
        return 0;
    case TD_AXIS_TX:
    case TD_AXIS_TID_IN_WG:
    case TD_AXIS_LANEID:
        return 1;
    case TD_AXIS_WARPID:
    case TD_AXIS_WID_IN_WG:
        return 32;
    case TD_AXIS_WGID:
        return 128;
    default:
        return -1;
    }
}

int td__lay_thread_id(const int64_t coords[TD_AXIS_COUNT], int64_t *tid)
{
    int64_t id = 0;

    if (coords == NULL || tid == NULL)
        return TD_EINVAL;
    for (int a = 0; a < TD_AXIS_COUNT; a++) {
        int64_t w = thread_weight((td_axis)a), t;

        if (w < 0) {
            if (coords[a] != 0)
                return TD_EINVAL;
            continue;
        }
        if (!td__lay_mul64(coords[a], w, &t) || !td__lay_add64(id, t, &id))
            return TD_ELIMIT;
    }
    if (id < 0)
        return TD_EINVAL;
    *tid = id;
    return 0;
}

int td__lay_owner_slots(const td_layout *l, int64_t elem, td_lay_owner_fn emit,
                        void *u)
{
    int64_t base[TD_AXIS_COUNT], rep[TD_AXIS_COUNT], c[TD_AXIS_COUNT];
    int64_t n;
    int rc;

    if (emit == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_map(l, elem, base)) < 0)
        return rc;
    if ((rc = td__lay_replica_count(l, &n)) < 0)
        return rc;
    if (n > TD_LAY_MAX_OWNERS)
        return TD_ELIMIT;
    for (int64_t r = 0; r < n; r++) {
        int64_t tid;

        if ((rc = td__lay_replica(l, r, rep)) < 0)
            return rc;
        for (int a = 0; a < TD_AXIS_COUNT; a++)
            if (!td__lay_add64(base[a], rep[a], &c[a]))
                return TD_ELIMIT;
        if ((rc = td__lay_thread_id(c, &tid)) < 0)
            return rc;
        if (c[TD_AXIS_M] < 0)
            return TD_EINVAL;
        if ((rc = emit(u, tid, c[TD_AXIS_M])) != 0)
            return rc;
    }
    return 0;
}

/* Adds the smallest and largest contribution of iters to [lo, hi] of the
 * linear thread id (memory == false) or of the m coordinate. */
static bool bounds_add(const td_iter *it, int n, bool memory, int64_t *lo,
                       int64_t *hi)
{
    for (int i = 0; i < n; i++) {
        int64_t w = memory ? (it[i].axis == TD_AXIS_M)
                           : thread_weight(it[i].axis);
        int64_t t;

        if (w < 0) {
            /* A block axis only matters when it actually moves. */
            if (it[i].stride != 0)
                return false;
            continue;
        }
        if (!td__lay_mul64(it[i].extent - 1, it[i].stride, &t) || !td__lay_mul64(t, w, &t))
            return false;
        if (!td__lay_add64(t < 0 ? *lo : *hi, t, t < 0 ? lo : hi))
            return false;
    }
    return true;
}

int td__lay_bounds(const td_layout *l, int64_t *nthreads, int64_t *nslots)
{
    int64_t tlo = 0, thi = 0, mlo = 0, mhi = 0;
    int rc;

    if (nthreads == NULL || nslots == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_check(l, NULL, 0)) < 0)
        return rc;
    /* The offsets' share of the thread id; they may be negative as long
     * as the iters bring every owner back to >= 0. */
    for (int a = 0; a < TD_AXIS_COUNT; a++) {
        int64_t w = thread_weight((td_axis)a);

        if (w < 0 && l->offset[a] != 0)
            return TD_EINVAL;
        if (w > 0)
            thi += l->offset[a] * w; /* |offset| <= 2^40, w <= 128 */
    }
    tlo = thi;
    mlo = mhi = l->offset[TD_AXIS_M];
    if (!bounds_add(l->shard, l->nshard, false, &tlo, &thi) ||
        !bounds_add(l->rep, l->nrep, false, &tlo, &thi) ||
        !bounds_add(l->shard, l->nshard, true, &mlo, &mhi) ||
        !bounds_add(l->rep, l->nrep, true, &mlo, &mhi))
        return TD_EINVAL;
    if (tlo < 0 || mlo < 0 || thi == INT64_MAX || mhi == INT64_MAX)
        return TD_EINVAL;
    *nthreads = thi + 1;
    *nslots = mhi + 1;
    return 0;
}
