/*
 * The `local` variant's layout analysis (upstream reduction/utils.py):
 * each logical dimension of a register layout split into its thread and
 * local parts, the XOR-shuffle masks over the reduced dims' threads, the
 * check that a dst layout is what reducing a src layout leaves, and the
 * match of the whole-warp shuffle pattern (path B).  What a TileLayout is
 * (canonical form, grouping, the element -> owner maps) stays in
 * model/layout.c; this file only asks questions of it.  Conventions (pure
 * functions, hostile inputs, return codes, `why`) are model/layout.h's.
 */
#include "local_layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool is_lane(td_axis a)
{
    return a == TD_AXIS_LANEID;
}

/* ---- the per-dimension analysis -------------------------------------- */

int td__local_analyze_dims(const td_layout *l, const int64_t *shape,
                           int ndim, td_local_dim *dims)
{
    td_layout g;
    int seps[TD_MAX_RANK + 1];
    int rc;

    if (dims == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_group(l, shape, ndim, &g, seps)) < 0)
        return rc;
    for (int d = 0; d < ndim; d++) {
        td_local_dim *di = &dims[d];

        memset(di, 0, sizeof(*di));
        di->thread_extent = 1;
        di->local_extent = 1;
        for (int i = seps[d]; i < seps[d + 1]; i++) {
            const td_iter *it = &g.shard[i];

            /* Products stay within the dim's extent, so cannot overflow. */
            if (td_axis_is_thread(it->axis)) {
                di->thread_extent *= it->extent;
                di->thread[di->nthread++] = *it;
            } else {
                di->local_extent *= it->extent;
                di->has_local = true;
            }
        }
    }
    return 0;
}

int td__local_dim_map(const td_layout *l, const int64_t *shape, int ndim,
                      int *map)
{
    td_local_dim dims[TD_MAX_RANK];
    int rc, pos = 0;

    if (map == NULL)
        return TD_EINVAL;
    if ((rc = td__local_analyze_dims(l, shape, ndim, dims)) < 0)
        return rc;
    for (int d = 0; d < ndim; d++)
        map[d] = dims[d].has_local ? pos++ : -1;
    return 0;
}

/* ---- reduction checks ------------------------------------------------ */

int td__local_shuffle_masks(const td_local_dim *dims, int ndim,
                            const int *reduce, int nreduce, int64_t *masks,
                            int *nmasks, int cap)
{
    int n = 0;

    if (dims == NULL || masks == NULL || nmasks == NULL || cap < 0 ||
        ndim < 1 || ndim > TD_MAX_RANK || nreduce < 0 ||
        (nreduce > 0 && reduce == NULL))
        return TD_EINVAL;
    for (int r = 0; r < nreduce; r++) {
        const td_local_dim *di;

        if (reduce[r] < 0 || reduce[r] >= ndim)
            return TD_EINVAL;
        di = &dims[reduce[r]];
        if (di->nthread < 0 || di->nthread > TD_MAX_LAYOUT_ITERS)
            return TD_EINVAL;
        for (int i = 0; i < di->nthread; i++) {
            int64_t e = di->thread[i].extent, s = di->thread[i].stride;

            if (!td__lay_is_pow2(e))
                return TD_EINVAL;
            for (int64_t bit = 1; bit < e; bit <<= 1) {
                if (n >= cap)
                    return TD_ELIMIT;
                if (!td__lay_mul64(s, bit, &masks[n]))
                    return TD_ELIMIT;
                n++;
            }
        }
    }
    for (int i = 1; i < n; i++) {
        int64_t key = masks[i];
        int j = i - 1;

        while (j >= 0 && masks[j] > key) {
            masks[j + 1] = masks[j];
            j--;
        }
        masks[j + 1] = key;
    }
    *nmasks = n;
    return 0;
}

#define MISMATCH "mismatch dst/src layout for reduction"

int td__local_validate_reduction(const td_layout *src_l,
                                 const td_layout *dst_l,
                                 const int64_t *src_shape, int src_ndim,
                                 const int64_t *dst_shape, int dst_ndim,
                                 const int *reduce, int nreduce, char *why,
                                 size_t whylen)
{
    td_local_dim src[TD_MAX_RANK], dst[TD_MAX_RANK];
    int64_t exp_t[TD_MAX_RANK], exp_l[TD_MAX_RANK];
    bool is_red[TD_MAX_RANK] = {false};
    int nexp = 0, k = 0, rc;

    if (nreduce < 0 || nreduce > TD_MAX_RANK ||
        (nreduce > 0 && reduce == NULL)) {
        td__lay_why(why, whylen, "bad reduce dims");
        return TD_EINVAL;
    }
    if ((rc = td__local_analyze_dims(src_l, src_shape, src_ndim, src)) < 0) {
        td__lay_why(why, whylen, "src layout cannot be grouped by its shape");
        return rc;
    }
    if ((rc = td__local_analyze_dims(dst_l, dst_shape, dst_ndim, dst)) < 0) {
        td__lay_why(why, whylen, "dst layout cannot be grouped by its shape");
        return rc;
    }
    for (int r = 0; r < nreduce; r++) {
        if (reduce[r] < 0 || reduce[r] >= src_ndim) {
            td__lay_why(why, whylen, "reduce dim %d out of range for ndim=%d",
                    reduce[r], src_ndim);
            return TD_EINVAL;
        }
        is_red[reduce[r]] = true;
    }
    /* What dst must look like, skipping trivial dims: a spatial dim keeps
     * (thread, local); a reduced dim keeps its threads only (the value is
     * replicated over them after the shuffle); a purely local reduced dim
     * vanishes. */
    for (int d = 0; d < src_ndim; d++) {
        if (src[d].thread_extent == 1 && src[d].local_extent == 1)
            continue;
        if (is_red[d]) {
            if (src[d].thread_extent != 1) {
                exp_t[nexp] = src[d].thread_extent;
                exp_l[nexp++] = 1;
            }
        } else {
            exp_t[nexp] = src[d].thread_extent;
            exp_l[nexp++] = src[d].local_extent;
        }
    }
    for (int d = 0; d < dst_ndim; d++) {
        if (dst[d].thread_extent == 1 && dst[d].local_extent == 1)
            continue;
        /* Upstream indexes past its list here (IndexError); more dst dims
         * than expected is the same mismatch. */
        if (k >= nexp || dst[d].thread_extent != exp_t[k] ||
            dst[d].local_extent != exp_l[k]) {
            td__lay_why(why, whylen, MISMATCH);
            return TD_ENOMATCH;
        }
        k++;
    }
    if (k != nexp) {
        td__lay_why(why, whylen, MISMATCH);
        return TD_ENOMATCH;
    }
    return 0;
}

/* Sorts iters by stride (insertion sort: n <= TD_MAX_LAYOUT_ITERS). */
static void sort_by_stride(td_iter *it, int n)
{
    for (int i = 1; i < n; i++) {
        td_iter key = it[i];
        int j = i - 1;

        while (j >= 0 && it[j].stride > key.stride) {
            it[j + 1] = it[j];
            j--;
        }
        it[j + 1] = key;
    }
}

/* True when the iters, sorted by stride, are strides base, base*e1,
 * base*e1*e2, ...; *prod receives the product of the extents. */
static bool dense_from(td_iter *it, int n, int64_t base, int64_t *prod)
{
    int64_t next = base;

    sort_by_stride(it, n);
    for (int i = 0; i < n; i++) {
        if (it[i].stride != next || !td__lay_mul64(next, it[i].extent, &next))
            return false;
    }
    *prod = next / base;
    return true;
}

int td__local_analyze_shuffle(const td_layout *src_l, const td_layout *dst_l,
                              int64_t *width, int64_t *local_elems, char *why,
                              size_t whylen)
{
    td_layout s, d;
    td_iter lanes[TD_MAX_LAYOUT_ITERS], rep[TD_MAX_LAYOUT_ITERS];
    td_iter dlanes[TD_MAX_LAYOUT_ITERS];
    int nl = 0, nr = 0, ndl = 0, rc;
    int64_t span = 1, w = 1, local = 1, dlocal = 1, prod;

    if (width == NULL || local_elems == NULL)
        return TD_EINVAL;
    if ((rc = td__lay_check(src_l, why, whylen)) < 0 ||
        (rc = td__lay_check(dst_l, why, whylen)) < 0)
        return rc;
    if (src_l->swizzle || dst_l->swizzle) {
        td__lay_why(why, whylen, "swizzle layout unsupported for shuffle reduction");
        return TD_ENOMATCH;
    }
    if ((rc = td__lay_canonicalize(src_l, &s)) < 0 ||
        (rc = td__lay_canonicalize(dst_l, &d)) < 0)
        return rc;

    for (int i = 0; i < s.nshard; i++) {
        const td_iter *it = &s.shard[i];
        int64_t t;

        if (is_lane(it->axis)) {
            lanes[nl++] = *it;
            t = (it->stride < 0 ? -it->stride : it->stride);
            if (!td__lay_mul64(t, it->extent - 1, &t) || !td__lay_add64(span, t, &span))
                return TD_ELIMIT;
        } else if (td_axis_is_thread(it->axis)) {
            td__lay_why(why, whylen, "src shard has thread axis %s besides laneid",
                    td_axis_name(it->axis));
            return TD_ENOMATCH;
        } else if (!td__lay_mul64(local, it->extent, &local)) {
            return TD_ELIMIT;
        }
    }
    for (int i = 0; i < d.nrep; i++)
        if (is_lane(d.rep[i].axis)) {
            rep[nr++] = d.rep[i];
            if (!td__lay_mul64(w, d.rep[i].extent, &w))
                return TD_ELIMIT;
        }
    if (nl == 0) {
        td__lay_why(why, whylen, "src shard has no laneid iter");
        return TD_ENOMATCH;
    }
    if (nr == 0) {
        td__lay_why(why, whylen, "dst replica has no laneid iter");
        return TD_ENOMATCH;
    }
    if (span != 32) {
        td__lay_why(why, whylen, "src laneid span %lld != 32", (long long)span);
        return TD_ENOMATCH;
    }
    if (!td__lay_is_pow2(w) || w < 2 || w > 32) {
        td__lay_why(why, whylen, "reduce width %lld is not a power of two in [2, 32]",
                (long long)w);
        return TD_ENOMATCH;
    }
    if (!dense_from(lanes, nl, 1, &prod) || prod != 32) {
        td__lay_why(why, whylen, "src laneid iters do not map onto lanes 0..31 "
                "one to one");
        return TD_ENOMATCH;
    }
    if (!dense_from(rep, nr, 1, &prod)) {
        td__lay_why(why, whylen, "dst laneid replica is not groups of %lld "
                "adjacent lanes", (long long)w);
        return TD_ENOMATCH;
    }
    for (int i = 0; i < d.nshard; i++) {
        const td_iter *it = &d.shard[i];

        if (is_lane(it->axis)) {
            dlanes[ndl++] = *it;
        } else if (td_axis_is_thread(it->axis)) {
            td__lay_why(why, whylen, "dst shard has thread axis %s besides laneid",
                    td_axis_name(it->axis));
            return TD_ENOMATCH;
        } else if (!td__lay_mul64(dlocal, it->extent, &dlocal)) {
            return TD_ELIMIT;
        }
    }
    if (!dense_from(dlanes, ndl, w, &prod) || prod != 32 / w) {
        td__lay_why(why, whylen, "dst laneid iters do not give each group of "
                "%lld lanes its own element", (long long)w);
        return TD_ENOMATCH;
    }
    if (dlocal != local) {
        td__lay_why(why, whylen, "dst holds %lld values per lane, src %lld",
                (long long)dlocal, (long long)local);
        return TD_ENOMATCH;
    }
    *width = w;
    *local_elems = local;
    return 0;
}
