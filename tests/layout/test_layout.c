/*
 * Unit tests for the TileLayout model (model/layout.c) and the `local`
 * variant's layout analysis (variants/local_layout.c): the worked
 * examples of the upstream reference (tirx-reduction.md section 4), the
 * canonical form, grouping failures and hostile inputs.  Layouts are built
 * by hand so that these tests do not depend on the notation parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "layout.h"
#include "local_layout.h"

#define M TD_AXIS_M
#define LANE TD_AXIS_LANEID
#define WARP TD_AXIS_WARPID
#define TX TD_AXIS_TX
#define TIDWG TD_AXIS_TID_IN_WG
#define WGID TD_AXIS_WGID
#define WIDWG TD_AXIS_WID_IN_WG

#define IT(e, s, a) ((td_iter){(e), (s), (a)})
#define N(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))

/* A layout from shard and replica iter arrays (either may be NULL). */
static td_layout mk(const td_iter *shard, int ns, const td_iter *rep, int nr)
{
    td_layout l;

    memset(&l, 0, sizeof(l));
    l.nshard = ns;
    for (int i = 0; i < ns; i++)
        l.shard[i] = shard[i];
    l.nrep = nr;
    for (int i = 0; i < nr; i++)
        l.rep[i] = rep[i];
    return l;
}

#define S(...) (const td_iter[]){__VA_ARGS__}
#define LS(...) mk(S(__VA_ARGS__), N(S(__VA_ARGS__)), NULL, 0)

static void assert_iters(const td_iter *got, int ngot, const td_iter *want,
                         int nwant)
{
    assert_int_equal(ngot, nwant);
    for (int i = 0; i < nwant; i++) {
        assert_int_equal(got[i].extent, want[i].extent);
        assert_int_equal(got[i].stride, want[i].stride);
        assert_int_equal(got[i].axis, want[i].axis);
    }
}

#define ASSERT_SHARD(l, ...)                                                   \
    assert_iters((l).shard, (l).nshard, S(__VA_ARGS__), N(S(__VA_ARGS__)))
#define ASSERT_REP(l, ...)                                                     \
    assert_iters((l).rep, (l).nrep, S(__VA_ARGS__), N(S(__VA_ARGS__)))

static int64_t size_of(const td_layout *l)
{
    int64_t v = -1;

    assert_int_equal(td__lay_size(l, &v), 0);
    return v;
}

static int64_t span_of(const td_layout *l, int axis)
{
    int64_t v = -1;

    assert_int_equal(td__lay_span(l, axis, &v), 0);
    return v;
}

/* Collects owners from td__lay_owner_slots. */
typedef struct owners {
    int n;
    int64_t tid[64];
    int64_t slot[64];
} owners;

static int collect(void *u, int64_t tid, int64_t slot)
{
    owners *o = u;

    if (o->n >= 64)
        return -100;
    o->tid[o->n] = tid;
    o->slot[o->n++] = slot;
    return 0;
}

/* ---- 4.2 full warp shard -> replica ---------------------------------- */

static void test_full_warp(void **state)
{
    (void)state;
    td_layout src = LS(IT(32, 1, LANE));
    td_layout dst = mk(S(IT(1, 1, M)), 1, S(IT(32, 1, LANE)), 1);
    td_layout c, st;
    int64_t width = 0, local = 0, c3[TD_AXIS_COUNT];
    char why[128] = "";
    owners o = {0};

    assert_int_equal(td__lay_canonicalize(&dst, &c), 0);
    ASSERT_SHARD(c, IT(1, 1, M));
    ASSERT_REP(c, IT(32, 1, LANE));
    assert_int_equal(span_of(&src, LANE), 32);

    /* storage(): an empty shard, one register per lane. */
    assert_int_equal(td__lay_storage(&src, &st), 0);
    assert_int_equal(st.nshard, 0);
    assert_int_equal(size_of(&st), 1);
    assert_int_equal(span_of(&st, TD_LAY_ALL_MEMORY), 1);

    assert_int_equal(td__local_analyze_shuffle(&src, &dst, &width, &local, why,
                                               sizeof(why)), 0);
    assert_int_equal(width, 32);
    assert_int_equal(local, 1);

    /* Element i lives in lane i, register 0. */
    assert_int_equal(td__lay_map(&src, 7, c3), 0);
    assert_int_equal(c3[LANE], 7);
    assert_int_equal(c3[M], 0);
    /* dst element 0 is held by every lane in register 0. */
    assert_int_equal(td__lay_owner_slots(&dst, 0, collect, &o), 0);
    assert_int_equal(o.n, 32);
    for (int i = 0; i < 32; i++) {
        assert_int_equal(o.tid[i], i);
        assert_int_equal(o.slot[i], 0);
    }
}

/* ---- 4.3 multi-element and gapped ------------------------------------ */

static void test_four_per_lane(void **state)
{
    (void)state;
    td_layout src = LS(IT(32, 1, LANE), IT(4, 1, M));
    td_layout dst = mk(S(IT(4, 1, M)), 1, S(IT(32, 1, LANE)), 1);
    int64_t width = 0, local = 0, nt = 0, ns = 0;
    owners o = {0};

    assert_int_equal(td__local_analyze_shuffle(&src, &dst, &width, &local, NULL,
                                               0), 0);
    assert_int_equal(width, 32);
    assert_int_equal(local, 4);
    /* Element e is in lane e // 4, register e % 4. */
    assert_int_equal(td__lay_owner_slots(&src, 13, collect, &o), 0);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.tid[0], 3);
    assert_int_equal(o.slot[0], 1);
    assert_int_equal(td__lay_bounds(&src, &nt, &ns), 0);
    assert_int_equal(nt, 32);
    assert_int_equal(ns, 4);
}

static void test_gapped_storage(void **state)
{
    (void)state;
    td_layout src = LS(IT(32, 1, LANE), IT(2, 2, M), IT(2, 4, M));
    td_layout dst =
        mk(S(IT(2, 2, M), IT(2, 4, M)), 2, S(IT(32, 1, LANE)), 1);
    td_layout c, st;
    int64_t width = 0, local = 0, coords[TD_AXIS_COUNT];
    const int64_t want[4] = {0, 4, 2, 6};

    /* No fusion is possible: 2*4 != 2. */
    assert_int_equal(td__lay_canonicalize(&src, &c), 0);
    ASSERT_SHARD(c, IT(32, 1, LANE), IT(2, 2, M), IT(2, 4, M));
    assert_int_equal(td__lay_storage(&src, &st), 0);
    ASSERT_SHARD(st, IT(2, 2, M), IT(2, 4, M));
    assert_int_equal(size_of(&st), 4);
    assert_int_equal(span_of(&st, TD_LAY_ALL_MEMORY), 7);
    assert_int_equal(span_of(&st, M), 7);
    for (int k = 0; k < 4; k++) {
        assert_int_equal(td__lay_map(&st, k, coords), 0);
        assert_int_equal(coords[M], want[k]);
    }
    assert_int_equal(td__local_analyze_shuffle(&src, &dst, &width, &local, NULL,
                                               0), 0);
    assert_int_equal(width, 32);
    assert_int_equal(local, 4);
}

/* ---- 4.4 partial width ----------------------------------------------- */

static void test_partial_width(void **state)
{
    (void)state;
    td_layout src = LS(IT(4, 8, LANE), IT(8, 1, LANE));
    td_layout dst = mk(S(IT(4, 8, LANE)), 1, S(IT(8, 1, LANE)), 1);
    td_layout bad = mk(S(IT(4, 8, LANE)), 1, S(IT(8, 4, LANE)), 1);
    td_layout c;
    int64_t width = 0, local = 0;
    char why[128] = "";
    owners o = {0};

    assert_int_equal(td__lay_canonicalize(&src, &c), 0);
    ASSERT_SHARD(c, IT(32, 1, LANE));
    assert_int_equal(td__local_analyze_shuffle(&src, &dst, &width, &local, why,
                                               sizeof(why)), 0);
    assert_int_equal(width, 8);
    assert_int_equal(local, 1);
    /* dst element g is held by lanes 8g .. 8g+7. */
    assert_int_equal(td__lay_owner_slots(&dst, 2, collect, &o), 0);
    assert_int_equal(o.n, 8);
    for (int r = 0; r < 8; r++)
        assert_int_equal(o.tid[r], 16 + r);

    /* Upstream accepts R[8 : 4@laneid] (same width) but the shuffle still
     * reduces adjacent lanes: the stricter check rejects it. */
    width = local = -1;
    assert_int_equal(td__local_analyze_shuffle(&src, &bad, &width, &local, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "dst laneid replica is not groups of 8 adjacent "
                             "lanes");
    assert_int_equal(width, -1);
}

static void test_shuffle_rejections(void **state)
{
    (void)state;
    td_layout full = LS(IT(32, 1, LANE));
    td_layout four = LS(IT(32, 1, LANE), IT(4, 1, M));
    td_layout dst32 = mk(S(IT(1, 1, M)), 1, S(IT(32, 1, LANE)), 1);
    td_layout l1, l2;
    int64_t w, k;
    char why[128];

    /* laneid + warpid fuse into tx: no laneid iter left. */
    l1 = LS(IT(2, 1, WARP), IT(32, 1, LANE));
    assert_int_equal(td__local_analyze_shuffle(&l1, &dst32, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "src shard has thread axis tx besides laneid");

    l1 = LS(IT(16, 2, LANE));
    assert_int_equal(td__local_analyze_shuffle(&l1, &dst32, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "src laneid span 31 != 32");

    /* Span 32 but lanes are not one to one (a zero stride). */
    l1 = LS(IT(2, 0, LANE), IT(32, 1, LANE));
    assert_int_equal(td__local_analyze_shuffle(&l1, &dst32, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why,
                        "src laneid iters do not map onto lanes 0..31 one to "
                        "one");

    l1 = LS(IT(32, 1, M));
    assert_int_equal(td__local_analyze_shuffle(&l1, &dst32, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "src shard has no laneid iter");

    l2 = LS(IT(1, 1, M));
    assert_int_equal(td__local_analyze_shuffle(&full, &l2, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "dst replica has no laneid iter");

    /* A unit laneid replica: width 1 fails upstream only at codegen. */
    l2 = mk(S(IT(32, 1, LANE)), 1, S(IT(1, 1, LANE)), 1);
    assert_int_equal(td__local_analyze_shuffle(&full, &l2, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "reduce width 1 is not a power of two in [2, 32]");

    /* Width 8 but no dst lane shard: groups would collide on element 0. */
    l2 = mk(S(IT(1, 1, M)), 1, S(IT(8, 1, LANE)), 1);
    assert_int_equal(td__local_analyze_shuffle(&full, &l2, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "dst laneid iters do not give each group of 8 "
                             "lanes its own element");

    l2 = mk(S(IT(2, 1, M)), 1, S(IT(32, 1, LANE)), 1);
    assert_int_equal(td__local_analyze_shuffle(&four, &l2, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "dst holds 2 values per lane, src 4");

    l1 = full;
    l1.swizzle = true;
    assert_int_equal(td__local_analyze_shuffle(&l1, &dst32, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "swizzle layout unsupported for shuffle reduction");
}

/* ---- 4.5 WGMMA accumulator ------------------------------------------- */

static const int64_t acc_shape[2] = {16, 128};
static const int64_t red_shape[2] = {16, 4};

static td_layout acc_layout(void)
{
    return LS(IT(2, 2, M), IT(8, 4, LANE), IT(16, 4, M), IT(4, 1, LANE),
              IT(2, 1, M));
}

static td_layout red_layout(void)
{
    return LS(IT(2, 1, M), IT(32, 1, LANE));
}

static void test_wgmma_group_and_dims(void **state)
{
    (void)state;
    td_layout acc = acc_layout(), red = red_layout(), g, st;
    int seps[3];
    td_local_dim dims[2];
    int map[2];

    assert_int_equal(td__lay_group(&acc, acc_shape, 2, &g, seps), 0);
    assert_int_equal(seps[0], 0);
    assert_int_equal(seps[1], 2);
    assert_int_equal(seps[2], 5);
    ASSERT_SHARD(g, IT(2, 2, M), IT(8, 4, LANE), IT(16, 4, M), IT(4, 1, LANE),
                 IT(2, 1, M));

    assert_int_equal(td__local_analyze_dims(&acc, acc_shape, 2, dims), 0);
    assert_int_equal(dims[0].thread_extent, 8);
    assert_int_equal(dims[0].local_extent, 2);
    assert_iters(dims[0].thread, dims[0].nthread, S(IT(8, 4, LANE)), 1);
    assert_int_equal(dims[1].thread_extent, 4);
    assert_int_equal(dims[1].local_extent, 32);
    assert_iters(dims[1].thread, dims[1].nthread, S(IT(4, 1, LANE)), 1);

    /* The reduced layout splits its lane iter at the row boundary. */
    assert_int_equal(td__lay_group(&red, red_shape, 2, &g, seps), 0);
    assert_int_equal(seps[1], 2);
    assert_int_equal(seps[2], 3);
    ASSERT_SHARD(g, IT(2, 1, M), IT(8, 4, LANE), IT(4, 1, LANE));
    assert_int_equal(td__local_analyze_dims(&red, red_shape, 2, dims), 0);
    assert_int_equal(dims[0].thread_extent, 8);
    assert_int_equal(dims[0].local_extent, 2);
    assert_int_equal(dims[1].thread_extent, 4);
    assert_int_equal(dims[1].local_extent, 1);

    assert_int_equal(td__local_dim_map(&acc, acc_shape, 2, map), 0);
    assert_int_equal(map[0], 0);
    assert_int_equal(map[1], 1);
    assert_int_equal(td__local_dim_map(&red, red_shape, 2, map), 0);
    assert_int_equal(map[0], 0);
    assert_int_equal(map[1], -1);

    /* 64 registers per thread. */
    assert_int_equal(td__lay_storage(&acc, &st), 0);
    ASSERT_SHARD(st, IT(2, 2, M), IT(16, 4, M), IT(2, 1, M));
    assert_int_equal(span_of(&st, TD_LAY_ALL_MEMORY), 64);
    assert_int_equal(size_of(&st), 64);
}

static void test_wgmma_regions_masks_validate(void **state)
{
    (void)state;
    td_layout acc = acc_layout(), red = red_layout();
    const int64_t z[2] = {0, 0};
    td_lay_local loc;
    td_local_dim dims[2];
    int64_t masks[8];
    int nmasks = -1, reduce[1] = {1};
    char why[128] = "";
    int64_t c[TD_AXIS_COUNT], nt, ns;

    assert_int_equal(td__lay_local_region(&acc, acc_shape, 2, z, acc_shape,
                                          &loc, why, sizeof(why)), 0);
    assert_int_equal(loc.ndim, 2);
    assert_int_equal(loc.shape[0], 2);
    assert_int_equal(loc.shape[1], 32);
    assert_int_equal(loc.start[0], 0);
    assert_int_equal(loc.start[1], 0);
    assert_int_equal(loc.extent[0], 2);
    assert_int_equal(loc.extent[1], 32);

    assert_int_equal(td__lay_local_region(&red, red_shape, 2, z, red_shape,
                                          &loc, why, sizeof(why)), 0);
    assert_int_equal(loc.ndim, 1);
    assert_int_equal(loc.shape[0], 2);
    assert_int_equal(loc.start[0], 0);
    assert_int_equal(loc.extent[0], 2);

    assert_int_equal(td__local_analyze_dims(&acc, acc_shape, 2, dims), 0);
    assert_int_equal(td__local_shuffle_masks(dims, 2, reduce, 1, masks, &nmasks,
                                             8), 0);
    assert_int_equal(nmasks, 2);
    assert_int_equal(masks[0], 1);
    assert_int_equal(masks[1], 2);

    assert_int_equal(td__local_validate_reduction(&acc, &red, acc_shape, 2,
                                                  red_shape, 2, reduce, 1, why,
                                                  sizeof(why)), 0);

    /* Row r = 8a + b, column c = 8i + 2q + v:
     * m = 2a + 4i + v, laneid = 4b + q. */
    assert_int_equal(td__lay_map(&acc, 13 * 128 + 8 * 5 + 2 * 3 + 1, c), 0);
    assert_int_equal(c[M], 2 * 1 + 4 * 5 + 1);
    assert_int_equal(c[LANE], 4 * 5 + 3);
    assert_int_equal(td__lay_bounds(&acc, &nt, &ns), 0);
    assert_int_equal(nt, 32);
    assert_int_equal(ns, 64);
}

static void test_validate_mismatch(void **state)
{
    (void)state;
    td_layout acc = acc_layout(), red = red_layout();
    /* dst keeps the 32 local columns: not what a reduction of dim 1
     * produces. */
    td_layout wrong = LS(IT(2, 1, M), IT(8, 4, LANE), IT(4, 1, LANE),
                         IT(32, 1, M));
    const int64_t wrong_shape[2] = {16, 128};
    /* dst with more non-trivial dims than expected (upstream IndexError). */
    td_layout more = LS(IT(2, 1, M), IT(32, 1, LANE), IT(2, 1, M));
    const int64_t more_shape[3] = {16, 4, 2};
    int reduce[1] = {1}, bad_reduce[1] = {2};
    char why[128];

    assert_int_equal(td__local_validate_reduction(&acc, &wrong, acc_shape, 2,
                                                  wrong_shape, 2, reduce, 1,
                                                  why, sizeof(why)),
                     TD_ENOMATCH);
    assert_string_equal(why, "mismatch dst/src layout for reduction");

    memset(why, 0, sizeof(why));
    assert_int_equal(td__local_validate_reduction(&acc, &more, acc_shape, 2,
                                                  more_shape, 3, reduce, 1, why,
                                                  sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "mismatch dst/src layout for reduction");

    /* Fewer dims than expected: reducing nothing keeps dim 1's locals. */
    memset(why, 0, sizeof(why));
    assert_int_equal(td__local_validate_reduction(&acc, &red, acc_shape, 2,
                                                  red_shape, 2, NULL, 0, why,
                                                  sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "mismatch dst/src layout for reduction");

    assert_int_equal(td__local_validate_reduction(&acc, &red, acc_shape, 2,
                                                  red_shape, 2, bad_reduce, 1,
                                                  why, sizeof(why)), TD_EINVAL);
    assert_string_equal(why, "reduce dim 2 out of range for ndim=2");
}

/* ---- warpgroup (128,16) -> (128,1) ----------------------------------- */

static void test_warpgroup(void **state)
{
    (void)state;
    td_layout src = LS(IT(128, 1, TIDWG), IT(16, 1, M));
    td_layout dst = LS(IT(128, 1, TIDWG), IT(1, 1, M));
    const int64_t ss[2] = {128, 16}, ds[2] = {128, 1}, z[2] = {0, 0};
    int reduce[1] = {1}, seps[3];
    td_local_dim dims[2];
    td_lay_local loc;
    td_layout g;
    int64_t nt, ns;
    owners o = {0};

    assert_int_equal(td__local_validate_reduction(&src, &dst, ss, 2, ds, 2,
                                                  reduce, 1, NULL, 0), 0);
    /* The trailing extent-1 dim gets a unit iter on tid_in_wg. */
    assert_int_equal(td__lay_group(&dst, ds, 2, &g, seps), 0);
    ASSERT_SHARD(g, IT(128, 1, TIDWG), IT(1, 1, TIDWG));
    assert_int_equal(seps[1], 1);
    assert_int_equal(seps[2], 2);
    assert_int_equal(td__local_analyze_dims(&src, ss, 2, dims), 0);
    assert_int_equal(dims[0].thread_extent, 128);
    assert_int_equal(dims[0].local_extent, 1);
    assert_int_equal(dims[1].thread_extent, 1);
    assert_int_equal(dims[1].local_extent, 16);

    assert_int_equal(td__lay_local_region(&src, ss, 2, z, ss, &loc, NULL, 0),
                     0);
    assert_int_equal(loc.ndim, 1);
    assert_int_equal(loc.shape[0], 16);
    assert_int_equal(loc.extent[0], 16);
    assert_int_equal(td__lay_local_region(&dst, ds, 2, z, ds, &loc, NULL, 0),
                     0);
    assert_int_equal(loc.ndim, 1);
    assert_int_equal(loc.shape[0], 1);
    assert_int_equal(loc.extent[0], 1);

    assert_int_equal(td__lay_owner_slots(&src, 100 * 16 + 7, collect, &o), 0);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.tid[0], 100);
    assert_int_equal(o.slot[0], 7);
    assert_int_equal(td__lay_bounds(&src, &nt, &ns), 0);
    assert_int_equal(nt, 128);
    assert_int_equal(ns, 16);
}

/* ---- 4.6 view-basic derived values ----------------------------------- */

typedef struct view_case {
    int ndim;
    int64_t src_shape[3];
    int64_t dst_shape[3];
    int nreduce;
    int reduce[2];
    int src_local_ndim;
    int64_t src_local[2];
    int dst_local_ndim;
    int64_t dst_local[2];
    int64_t R, D;
} view_case;

/* S[(32, *inner) : (1@laneid, row-major strides of inner)]. */
static td_layout row_per_lane(const int64_t *shape, int ndim)
{
    td_layout l;
    int64_t stride = 1;

    memset(&l, 0, sizeof(l));
    l.nshard = ndim;
    l.shard[0] = IT(32, 1, LANE);
    for (int d = ndim - 1; d >= 1; d--) {
        l.shard[d] = IT(shape[d], stride, M);
        stride *= shape[d];
    }
    return l;
}

/* R = product of the src local extents of reduced dims with a local part;
 * D = product of the dst local extents (reference 3.1 (C)). */
static void check_view_case(const view_case *vc)
{
    td_layout src = row_per_lane(vc->src_shape, vc->ndim);
    td_layout dst = row_per_lane(vc->dst_shape, vc->ndim);
    const int64_t z[3] = {0, 0, 0};
    td_lay_local sl, dl;
    int smap[3];
    int64_t R = 1, D = 1;

    assert_int_equal(td__lay_local_region(&src, vc->src_shape, vc->ndim, z,
                                          vc->src_shape, &sl, NULL, 0), 0);
    assert_int_equal(td__lay_local_region(&dst, vc->dst_shape, vc->ndim, z,
                                          vc->dst_shape, &dl, NULL, 0), 0);
    assert_int_equal(sl.ndim, vc->src_local_ndim);
    for (int i = 0; i < sl.ndim; i++)
        assert_int_equal(sl.shape[i], vc->src_local[i]);
    assert_int_equal(dl.ndim, vc->dst_local_ndim);
    for (int i = 0; i < dl.ndim; i++) {
        assert_int_equal(dl.shape[i], vc->dst_local[i]);
        D *= dl.extent[i];
    }
    assert_int_equal(td__local_dim_map(&src, vc->src_shape, vc->ndim,
                                       smap), 0);
    for (int r = 0; r < vc->nreduce; r++)
        if (smap[vc->reduce[r]] >= 0)
            R *= sl.extent[smap[vc->reduce[r]]];
    assert_int_equal(R, vc->R);
    assert_int_equal(D, vc->D);
    assert_int_equal(td__local_validate_reduction(&src, &dst, vc->src_shape,
                                                  vc->ndim, vc->dst_shape,
                                                  vc->ndim, vc->reduce,
                                                  vc->nreduce, NULL, 0), 0);
}

static void test_view_basic(void **state)
{
    (void)state;
    static const view_case cases[] = {
        /* (64,) -> (1,), axes (-1,) */
        {2, {32, 64}, {32, 1}, 1, {1}, 1, {64}, 1, {1}, 64, 1},
        /* (4,8) -> (1,1), axes (1,2) */
        {3, {32, 4, 8}, {32, 1, 1}, 2, {1, 2}, 2, {4, 8}, 1, {1}, 32, 1},
        /* (4,8) -> (4,1), axes (-1,) */
        {3, {32, 4, 8}, {32, 4, 1}, 1, {2}, 2, {4, 8}, 2, {4, 1}, 8, 4},
        /* (4,8) -> (1,8), axes (1,): dst dim 1 is pure thread */
        {3, {32, 4, 8}, {32, 1, 8}, 1, {1}, 2, {4, 8}, 1, {8}, 4, 8},
    };

    for (int i = 0; i < N(cases); i++)
        check_view_case(&cases[i]);
}

static void test_view_slice(void **state)
{
    (void)state;
    const int64_t shape[2] = {32, 64}, st[2] = {0, 16}, ext[2] = {32, 16};
    td_layout src = row_per_lane(shape, 2);
    td_layout dst = row_per_lane((const int64_t[]){32, 1}, 2);
    td_layout g;
    int seps[3];
    td_lay_local loc;

    assert_int_equal(td__lay_local_region(&src, shape, 2, st, ext, &loc, NULL,
                                          0), 0);
    assert_int_equal(loc.ndim, 1);
    assert_int_equal(loc.shape[0], 64);
    assert_int_equal(loc.start[0], 16);
    assert_int_equal(loc.extent[0], 16);

    /* S[(32,1):(1@laneid,1)] by [32,1]: dim 1 is a unit laneid iter. */
    assert_int_equal(td__lay_group(&dst, (const int64_t[]){32, 1}, 2, &g,
                                   seps), 0);
    ASSERT_SHARD(g, IT(32, 1, LANE), IT(1, 1, LANE));
}

/* ---- local region acceptance ----------------------------------------- */

static void test_local_region_docstring(void **state)
{
    (void)state;
    /* (2,8,4,2):(8@m,2@laneid,2@m,1@m), shape [16,8]. */
    td_layout l = LS(IT(2, 8, M), IT(8, 2, LANE), IT(4, 2, M), IT(2, 1, M));
    const int64_t shape[2] = {16, 8};
    td_lay_local loc;
    char why[128];

    /* [8:16, :] -> ([2,8],[1,0],[1,8]): upstream rejects this (7.6). */
    assert_int_equal(td__lay_local_region(&l, shape, 2,
                                          (const int64_t[]){8, 0},
                                          (const int64_t[]){8, 8}, &loc, why,
                                          sizeof(why)), 0);
    assert_int_equal(loc.ndim, 2);
    assert_int_equal(loc.shape[0], 2);
    assert_int_equal(loc.shape[1], 8);
    assert_int_equal(loc.start[0], 1);
    assert_int_equal(loc.start[1], 0);
    assert_int_equal(loc.extent[0], 1);
    assert_int_equal(loc.extent[1], 8);

    /* [4:12, :] splits the lanes. */
    assert_int_equal(td__lay_local_region(&l, shape, 2,
                                          (const int64_t[]){4, 0},
                                          (const int64_t[]){8, 8}, &loc, why,
                                          sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "region covers part of thread iter (8, 2, laneid)");

    /* Pure local dim 1: any sub-range, shape-level values. */
    assert_int_equal(td__lay_local_region(&l, shape, 2,
                                          (const int64_t[]){0, 3},
                                          (const int64_t[]){16, 4}, &loc, why,
                                          sizeof(why)), 0);
    assert_int_equal(loc.start[1], 3);
    assert_int_equal(loc.extent[1], 4);

    /* Out of bounds. */
    assert_int_equal(td__lay_local_region(&l, shape, 2,
                                          (const int64_t[]){0, 3},
                                          (const int64_t[]){16, 6}, &loc, why,
                                          sizeof(why)), TD_EINVAL);
    assert_string_equal(why, "region out of bounds in dim 1");
}

static void test_local_region_pure_thread(void **state)
{
    (void)state;
    /* Row per lane: dim 0 is pure laneid, dim 1 pure local. */
    td_layout l = LS(IT(32, 1, LANE), IT(64, 1, M));
    const int64_t shape[2] = {32, 64};
    td_lay_local loc;
    char why[128];

    /* Half the lanes: no per-thread box says "only lanes 0..15". */
    assert_int_equal(td__lay_local_region(&l, shape, 2,
                                          (const int64_t[]){0, 0},
                                          (const int64_t[]){16, 64}, &loc,
                                          why, sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "region covers part of pure-thread dim 0");
    /* Every lane, columns 16..31: local start 16, extent 16. */
    assert_int_equal(td__lay_local_region(&l, shape, 2,
                                          (const int64_t[]){0, 16},
                                          (const int64_t[]){32, 16}, &loc,
                                          why, sizeof(why)), 0);
    assert_int_equal(loc.ndim, 1);
    assert_int_equal(loc.shape[0], 64);
    assert_int_equal(loc.start[0], 16);
    assert_int_equal(loc.extent[0], 16);
}

static void test_local_region_shapes(void **state)
{
    (void)state;
    /* One dim: (4,m) outer, (8,laneid), (4,m) inner; shape [128]. */
    td_layout l = LS(IT(4, 4, M), IT(8, 1, LANE), IT(4, 1, M));
    const int64_t shape[1] = {128};
    td_lay_local loc;
    char why[128];

    /* Rows 1..2 of the outer local iter, all lanes, all inner: [32:96). */
    assert_int_equal(td__lay_local_region(&l, shape, 1,
                                          (const int64_t[]){32},
                                          (const int64_t[]){64}, &loc, why,
                                          sizeof(why)), 0);
    assert_int_equal(loc.shape[0], 16);
    assert_int_equal(loc.start[0], 4);
    assert_int_equal(loc.extent[0], 8);

    /* Three outer values: upstream's "2 values or all" rule. */
    assert_int_equal(td__lay_local_region(&l, shape, 1,
                                          (const int64_t[]){0},
                                          (const int64_t[]){96}, &loc, why,
                                          sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "region covers 3 of 4 values of local iter");

    /* Coordinates (1,0,1)..(2,7,2) pass each iter's test but [33, 95)
     * is not their box (upstream asserts). */
    assert_int_equal(td__lay_local_region(&l, shape, 1,
                                          (const int64_t[]){33},
                                          (const int64_t[]){62}, &loc, why,
                                          sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "region is not a rectangle of the layout iters");

    /* No local dim at all: ([1],[0],[1]). */
    l = LS(IT(32, 1, LANE));
    assert_int_equal(td__lay_local_region(&l, (const int64_t[]){32}, 1,
                                          (const int64_t[]){0},
                                          (const int64_t[]){32}, &loc, NULL,
                                          0), 0);
    assert_int_equal(loc.ndim, 1);
    assert_int_equal(loc.shape[0], 1);
    assert_int_equal(loc.start[0], 0);
    assert_int_equal(loc.extent[0], 1);
}

/* ---- canonicalize ---------------------------------------------------- */

static void test_canonicalize(void **state)
{
    (void)state;
    td_layout l, c;

    /* laneid + warpid -> tx, then fused into one iter. */
    l = LS(IT(4, 1, WARP), IT(32, 1, LANE));
    assert_int_equal(td__lay_canonicalize(&l, &c), 0);
    ASSERT_SHARD(c, IT(128, 1, TX));

    /* warpid stride s -> tx stride 32s; not contiguous, not fused. */
    l = LS(IT(2, 2, WARP), IT(32, 1, LANE));
    l.offset[LANE] = 3;
    l.offset[WARP] = 1;
    assert_int_equal(td__lay_canonicalize(&l, &c), 0);
    ASSERT_SHARD(c, IT(2, 64, TX), IT(32, 1, TX));
    assert_int_equal(c.offset[TX], 35);
    assert_int_equal(c.offset[LANE], 0);
    assert_int_equal(c.offset[WARP], 0);

    /* laneid alone stays laneid; adjacent contiguous iters fuse. */
    l = LS(IT(4, 8, LANE), IT(8, 1, LANE), IT(2, 4, M), IT(4, 1, M));
    assert_int_equal(td__lay_canonicalize(&l, &c), 0);
    ASSERT_SHARD(c, IT(32, 1, LANE), IT(8, 1, M));

    /* Three-way fusion; different axes never fuse. */
    l = LS(IT(2, 16, M), IT(4, 4, M), IT(4, 1, M), IT(2, 1, LANE));
    assert_int_equal(td__lay_canonicalize(&l, &c), 0);
    ASSERT_SHARD(c, IT(32, 1, M), IT(2, 1, LANE));

    /* Unit iters go; an all-unit shard keeps (1, 1, axis of the first). */
    l = LS(IT(1, 5, M), IT(4, 1, M), IT(1, 1, LANE));
    assert_int_equal(td__lay_canonicalize(&l, &c), 0);
    ASSERT_SHARD(c, IT(4, 1, M));
    l = LS(IT(1, 3, LANE), IT(1, 1, M));
    assert_int_equal(td__lay_canonicalize(&l, &c), 0);
    ASSERT_SHARD(c, IT(1, 1, LANE));

    /* Replicas sort by (axis, stride, extent); unit replicas stay. */
    l = mk(S(IT(4, 1, M)), 1,
           S(IT(8, 1, LANE), IT(4, 1, M), IT(1, 1, LANE), IT(2, 1, M)), 4);
    assert_int_equal(td__lay_canonicalize(&l, &c), 0);
    ASSERT_REP(c, IT(2, 1, M), IT(4, 1, M), IT(1, 1, LANE), IT(8, 1, LANE));

    /* In place. */
    l = LS(IT(4, 8, LANE), IT(8, 1, LANE));
    assert_int_equal(td__lay_canonicalize(&l, &l), 0);
    ASSERT_SHARD(l, IT(32, 1, LANE));
}

/* ---- group failures, span ---------------------------------------------- */

static void test_group_failures(void **state)
{
    (void)state;
    td_layout l = LS(IT(3, 2, M), IT(2, 1, M)), g;
    int seps[TD_MAX_RANK + 1];

    /* 3 then 2 cannot be split into (2, 3); the fused (6, 1) can. */
    assert_int_equal(td__lay_group(&l, (const int64_t[]){2, 3}, 2, &g, seps),
                     TD_EINVAL);
    l = LS(IT(6, 1, M));
    assert_int_equal(td__lay_group(&l, (const int64_t[]){2, 3}, 2, &g, seps),
                     0);
    ASSERT_SHARD(g, IT(2, 3, M), IT(3, 1, M));

    /* Size mismatches both ways. */
    l = LS(IT(32, 1, LANE));
    assert_int_equal(td__lay_group(&l, (const int64_t[]){16}, 1, &g, seps),
                     TD_EINVAL);
    assert_int_equal(td__lay_group(&l, (const int64_t[]){64}, 1, &g, seps),
                     TD_EINVAL);
    assert_int_equal(td__lay_group(&l, (const int64_t[]){6, 6}, 2, &g, seps),
                     TD_EINVAL);
    /* A leading extent-1 dim takes a unit iter of the first iter. */
    assert_int_equal(td__lay_group(&l, (const int64_t[]){1, 32}, 2, &g, seps),
                     0);
    ASSERT_SHARD(g, IT(1, 32, LANE), IT(32, 1, LANE));
    assert_int_equal(seps[1], 1);
    /* Bad shapes. */
    assert_int_equal(td__lay_group(&l, (const int64_t[]){0}, 1, &g, seps),
                     TD_EINVAL);
    assert_int_equal(td__lay_group(&l, (const int64_t[]){32}, 0, &g, seps),
                     TD_EINVAL);
    assert_int_equal(td__lay_group(&l, (const int64_t[]){32}, TD_MAX_RANK + 1,
                                   &g, seps), TD_EINVAL);
    /* Too many unit dims for the iter array. */
    {
        int64_t ones[TD_MAX_RANK];
        td_layout many;

        memset(&many, 0, sizeof(many));
        many.nshard = TD_MAX_LAYOUT_ITERS;
        for (int i = 0; i < TD_MAX_LAYOUT_ITERS; i++)
            many.shard[i] = IT(2, (int64_t)1 << (TD_MAX_LAYOUT_ITERS - 1 - i),
                               M);
        for (int d = 0; d < TD_MAX_RANK; d++)
            ones[d] = 1;
        ones[TD_MAX_RANK - 1] = (int64_t)1 << TD_MAX_LAYOUT_ITERS;
        assert_int_equal(td__lay_group(&many, ones, TD_MAX_RANK, &g, seps),
                         TD_ELIMIT);
    }
}

static void test_span_offsets(void **state)
{
    (void)state;
    td_layout l = mk(S(IT(4, 2, M), IT(8, 1, LANE)), 2, S(IT(2, 16, M)), 1);

    l.offset[M] = 3;
    l.offset[LANE] = 5;
    assert_int_equal(span_of(&l, TD_LAY_ALL_MEMORY), 1 + 6 + 16 + 3);
    assert_int_equal(span_of(&l, LANE), 1 + 7 + 5);
    assert_int_equal(size_of(&l), 32);
}

/* ---- thread ids ------------------------------------------------------ */

static void test_thread_ids(void **state)
{
    (void)state;
    int64_t c[TD_AXIS_COUNT] = {0}, tid = -1, nt, ns;
    td_layout l;
    owners o = {0};

    c[LANE] = 3;
    c[WARP] = 2;
    assert_int_equal(td__lay_thread_id(c, &tid), 0);
    assert_int_equal(tid, 67);
    memset(c, 0, sizeof(c));
    c[WGID] = 1;
    c[TIDWG] = 5;
    assert_int_equal(td__lay_thread_id(c, &tid), 0);
    assert_int_equal(tid, 133);
    memset(c, 0, sizeof(c));
    c[WGID] = 1;
    c[WIDWG] = 2;
    c[LANE] = 1;
    assert_int_equal(td__lay_thread_id(c, &tid), 0);
    assert_int_equal(tid, 128 + 64 + 1);
    c[TD_AXIS_BX] = 1;
    assert_int_equal(td__lay_thread_id(c, &tid), TD_EINVAL);
    memset(c, 0, sizeof(c));
    c[LANE] = -1;
    assert_int_equal(td__lay_thread_id(c, &tid), TD_EINVAL);

    /* A warp per row, replicated over 2 warpgroups' wgid. */
    l = mk(S(IT(4, 1, WIDWG), IT(32, 1, LANE)), 2, S(IT(2, 1, WGID)), 1);
    assert_int_equal(td__lay_owner_slots(&l, 33, collect, &o), 0);
    assert_int_equal(o.n, 2);
    assert_int_equal(o.tid[0], 33);
    assert_int_equal(o.tid[1], 161);
    assert_int_equal(td__lay_bounds(&l, &nt, &ns), 0);
    assert_int_equal(nt, 256);
    assert_int_equal(ns, 1);

    /* The callback can stop the walk. */
    o.n = 64;
    assert_int_equal(td__lay_owner_slots(&l, 0, collect, &o), -100);
}

/* ---- hostile inputs -------------------------------------------------- */

static void test_hostile(void **state)
{
    (void)state;
    td_layout l, out;
    int64_t v, c[TD_AXIS_COUNT], w, k;
    int seps[TD_MAX_RANK + 1];
    td_local_dim dims[2];
    int64_t masks[4];
    int nm, red[1] = {0};
    char why[128];

    l = LS(IT(0, 1, M));
    assert_int_equal(td__lay_check(&l, why, sizeof(why)), TD_EINVAL);
    assert_string_equal(why, "shard iter 0 has extent 0");
    assert_int_equal(td__lay_canonicalize(&l, &out), TD_EINVAL);
    l = LS(IT(-4, 1, M));
    assert_int_equal(td__lay_size(&l, &v), TD_EINVAL);
    l = LS(IT(4, (int64_t)1 << 50, M));
    assert_int_equal(td__lay_check(&l, why, sizeof(why)), TD_EINVAL);
    assert_string_equal(why, "shard iter 0 has stride 1125899906842624");
    l = LS(IT(4, 1, M));
    l.shard[0].axis = (td_axis)99;
    assert_int_equal(td__lay_check(&l, why, sizeof(why)), TD_EINVAL);
    assert_string_equal(why, "shard iter 0 has an unknown axis");
    l = LS(IT(4, 1, M));
    l.nshard = TD_MAX_LAYOUT_ITERS + 1;
    assert_int_equal(td__lay_span(&l, TD_LAY_ALL_MEMORY, &v), TD_EINVAL);
    l.nshard = -1;
    assert_int_equal(td__lay_storage(&l, &out), TD_EINVAL);
    l = LS(IT(4, 1, M));
    l.nrep = 1000;
    assert_int_equal(td__lay_replica_count(&l, &v), TD_EINVAL);
    l = LS(IT(4, 1, M));
    l.offset[LANE] = INT64_MIN;
    assert_int_equal(td__lay_map(&l, 0, c), TD_EINVAL);
    assert_int_equal(td__lay_check(NULL, why, sizeof(why)), TD_EINVAL);
    assert_int_equal(td__lay_span(&l, 999, &v), TD_EINVAL);

    /* Size overflow: 16 iters of extent 2^31. */
    memset(&l, 0, sizeof(l));
    l.nshard = TD_MAX_LAYOUT_ITERS;
    for (int i = 0; i < l.nshard; i++)
        l.shard[i] = IT(TD_MAX_EXTENT, 1, M);
    assert_int_equal(td__lay_size(&l, &v), TD_ELIMIT);
    assert_int_equal(td__lay_map(&l, 0, c), TD_ELIMIT);
    /* Span overflow: large extents times large strides. */
    for (int i = 0; i < l.nshard; i++)
        l.shard[i] = IT(TD_MAX_EXTENT, TD_LAY_MAX_STRIDE, M);
    assert_int_equal(td__lay_span(&l, M, &v), TD_ELIMIT);
    /* Fusion beyond the extent limit is reported, not wrapped. */
    memset(&l, 0, sizeof(l));
    l.nshard = 2;
    l.shard[0] = IT((int64_t)1 << 16, 0, M);
    l.shard[1] = IT((int64_t)1 << 15, 0, M);
    assert_int_equal(td__lay_canonicalize(&l, &out), 0);
    ASSERT_SHARD(out, IT(TD_MAX_EXTENT, 0, M));
    l.nshard = 3;
    l.shard[2] = IT(2, 0, M);
    assert_int_equal(td__lay_canonicalize(&l, &out), TD_ELIMIT);
    for (int i = 0; i < 3; i++)
        l.shard[i] = IT(TD_MAX_EXTENT, 0, M);
    assert_int_equal(td__lay_canonicalize(&l, &out), TD_ELIMIT);
    /* warpid strides grow 32x when fused into tx. */
    l = LS(IT(2, TD_LAY_MAX_STRIDE, WARP), IT(32, 1, LANE));
    assert_int_equal(td__lay_canonicalize(&l, &out), TD_ELIMIT);

    /* Element and replica indices out of range. */
    l = mk(S(IT(4, 1, M)), 1, S(IT(2, 1, LANE)), 1);
    assert_int_equal(td__lay_map(&l, 4, c), TD_EINVAL);
    assert_int_equal(td__lay_map(&l, -1, c), TD_EINVAL);
    assert_int_equal(td__lay_replica(&l, 2, c), TD_EINVAL);
    assert_int_equal(td__lay_owner_slots(&l, 9, collect, NULL), TD_EINVAL);
    assert_int_equal(td__lay_owner_slots(&l, 0, NULL, NULL), TD_EINVAL);
    /* Block axes have no linear thread id. */
    l = LS(IT(2, 1, TD_AXIS_BX), IT(4, 1, M));
    assert_int_equal(td__lay_bounds(&l, &v, &w), TD_EINVAL);
    /* Negative slots. */
    l = LS(IT(4, -1, M));
    assert_int_equal(td__lay_bounds(&l, &v, &w), TD_EINVAL);

    /* Masks: non power of two, cap, bad reduce dims. */
    l = LS(IT(6, 1, LANE), IT(2, 1, M));
    assert_int_equal(td__local_analyze_dims(&l, (const int64_t[]){6, 2}, 2,
                                            dims), 0);
    assert_int_equal(td__local_shuffle_masks(dims, 2, red, 1, masks, &nm, 4),
                     TD_EINVAL);
    l = LS(IT(32, 1, LANE), IT(2, 1, M));
    assert_int_equal(td__local_analyze_dims(&l, (const int64_t[]){32, 2}, 2,
                                            dims), 0);
    assert_int_equal(td__local_shuffle_masks(dims, 2, red, 1, masks, &nm, 4),
                     TD_ELIMIT);
    red[0] = 2;
    assert_int_equal(td__local_shuffle_masks(dims, 2, red, 1, masks, &nm, 4),
                     TD_EINVAL);
    red[0] = -1;
    assert_int_equal(td__local_shuffle_masks(dims, 2, red, 1, masks, &nm, 4),
                     TD_EINVAL);

    /* Group with hostile layouts and shapes. */
    l = LS(IT(32, 1, LANE));
    assert_int_equal(td__lay_group(&l, NULL, 1, &out, seps), TD_EINVAL);
    assert_int_equal(td__lay_group(&l, (const int64_t[]){-32}, 1, &out, seps),
                     TD_EINVAL);
    assert_int_equal(td__local_validate_reduction(&l, &l, (const int64_t[]){32},
                                                  1, (const int64_t[]){16}, 1,
                                                  NULL, 0, why, sizeof(why)),
                     TD_EINVAL);
    assert_string_equal(why, "dst layout cannot be grouped by its shape");

    /* The shuffle analysis validates both layouts first. */
    l = LS(IT(0, 1, LANE));
    assert_int_equal(td__local_analyze_shuffle(&l, &l, &w, &k, why,
                                               sizeof(why)),
                     TD_EINVAL);
    assert_string_equal(why, "shard iter 0 has extent 0");
}


/* ---- through the notation parser ------------------------------------- */

static td_layout parse(const char *text)
{
    td_layout l;
    td_diag d;

    td_diag_clear(&d);
    if (td_layout_parse(text, &l, &d) != 0)
        fail_msg("cannot parse %s: %s", text, d.msg);
    return l;
}

static void test_parsed_canonical(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"S[32 : 1@laneid]", "S[32 : 1@laneid]"},
        {"S[1:1] + R[32 : 1@laneid]", "S[1 : 1] + R[32 : 1@laneid]"},
        {"S[(4,8) : (8@laneid, 1@laneid)]", "S[32 : 1@laneid]"},
        {"S[(4, 32) : (1@warpid, 1@laneid)]", "S[128 : 1@tx]"},
        {"S[(2,32):(2@warpid,1@laneid)] + 3@laneid + 1@warpid",
         "S[(2, 32) : (64@tx, 1@tx)] + 35@tx"},
        {"S[(2,32):(1@warpid,1@laneid)] + R[(2, 4) : (1@warpid, 1@laneid)]",
         "S[64 : 1@tx] + R[(4, 2) : (1@tx, 32@tx)]"},
        {"S[(1,4,1):(5,1,1@laneid)]", "S[4 : 1]"},
        {"S[(1,1):(3@laneid,1)]", "S[1 : 1@laneid]"},
        {"S[8,4,2]", "S[64 : 1]"},
        {"S[(32,2,2) : (1@laneid, 2, 4)]", "S[(32, 2, 2) : (1@laneid, 2, 4)]"},
        {"S[4:1] + R[(8, 4, 1, 2) : (1@laneid, 1, 1@laneid, 1)]",
         "S[4 : 1] + R[(2, 4, 1, 8) : (1, 1, 1@laneid, 1@laneid)]"},
        {"S[4:1] + 0@laneid + 2", "S[4 : 1] + 2"},
    };
    char buf[256];

    for (int i = 0; i < N(cases); i++) {
        td_layout l = parse(cases[i][0]), c;

        assert_int_equal(td__lay_canonicalize(&l, &c), 0);
        td_layout_format(&c, buf, sizeof(buf));
        assert_string_equal(buf, cases[i][1]);
    }
}

static void test_parsed_examples(void **state)
{
    (void)state;
    td_layout acc = parse("S[(2, 8, 16, 4, 2) : (2, 4@laneid, 4, 1@laneid, 1)]");
    td_layout red = parse("S[(2, 32) : (1, 1@laneid)]");
    td_layout src = parse("S[(4, 8) : (8@laneid, 1@laneid)]");
    td_layout dst = parse("S[4 : 8@laneid] + R[8 : 1@laneid]");
    td_layout bad = parse("S[4 : 8@laneid] + R[8 : 4@laneid]");
    int reduce[1] = {1};
    int64_t w = 0, k = 0;
    char why[128];

    assert_int_equal(td__local_validate_reduction(&acc, &red, acc_shape, 2,
                                                  red_shape, 2, reduce, 1, why,
                                                  sizeof(why)), 0);
    assert_int_equal(td__local_analyze_shuffle(&src, &dst, &w, &k, why,
                                               sizeof(why)), 0);
    assert_int_equal(w, 8);
    assert_int_equal(k, 1);
    assert_int_equal(td__local_analyze_shuffle(&src, &bad, &w, &k, why,
                                               sizeof(why)), TD_ENOMATCH);
    assert_string_equal(why, "dst laneid replica is not groups of 8 adjacent "
                             "lanes");
}


/* ---- properties over generated layouts ------------------------------- */

static uint64_t g_rng = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static int64_t pick(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static td_layout random_layout(void)
{
    static const td_axis axes[] = {M, M, LANE, WARP, TX, WGID, WIDWG};
    td_layout l;

    memset(&l, 0, sizeof(l));
    l.nshard = (int)pick(0, 5);
    for (int i = 0; i < l.nshard; i++)
        l.shard[i] = IT(pick(1, 4), pick(-2, 8), axes[pick(0, 6)]);
    l.nrep = (int)pick(0, 2);
    for (int i = 0; i < l.nrep; i++)
        l.rep[i] = IT(pick(1, 3), pick(-2, 8), axes[pick(0, 6)]);
    l.offset[M] = pick(-1, 3);
    l.offset[LANE] = pick(0, 2);
    l.offset[WARP] = pick(0, 1);
    return l;
}

/* The (linear thread, m) pairs that hold element e, sorted; the linear
 * thread is the weighted sum without td__lay_thread_id's sign check, so
 * that layouts with negative strides compare too. */
static int owners_of(const td_layout *l, int64_t e, int64_t *out)
{
    int64_t base[TD_AXIS_COUNT], rep[TD_AXIS_COUNT], n;
    int k = 0;

    assert_int_equal(td__lay_map(l, e, base), 0);
    assert_int_equal(td__lay_replica_count(l, &n), 0);
    for (int64_t r = 0; r < n; r++) {
        int64_t tid = 0;

        assert_int_equal(td__lay_replica(l, r, rep), 0);
        tid += base[TX] + rep[TX] + base[LANE] + rep[LANE] + base[TIDWG] +
               rep[TIDWG];
        tid += 32 * (base[WARP] + rep[WARP] + base[WIDWG] + rep[WIDWG]);
        tid += 128 * (base[WGID] + rep[WGID]);
        out[k++] = tid * 4096 + base[M] + rep[M];
    }
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return k;
}

static void test_properties(void **state)
{
    (void)state;
    for (int iter = 0; iter < 3000; iter++) {
        td_layout l = random_layout(), c, g;
        int64_t size, csize, a[16], b[16], shape[3], ca[TD_AXIS_COUNT],
            cb[TD_AXIS_COUNT];
        int seps[4], ndim;

        assert_int_equal(td__lay_size(&l, &size), 0);
        assert_int_equal(td__lay_canonicalize(&l, &c), 0);
        assert_int_equal(td__lay_size(&c, &csize), 0);
        assert_int_equal(size, csize);
        /* Canonicalizing twice changes nothing. */
        {
            td_layout c2;

            assert_int_equal(td__lay_canonicalize(&c, &c2), 0);
            assert_memory_equal(&c, &c2, sizeof(c));
        }
        /* The canonical form holds every element where the original
         * does. */
        for (int64_t e = 0; e < size; e++) {
            int na = owners_of(&l, e, a), nb = owners_of(&c, e, b);

            assert_int_equal(na, nb);
            assert_memory_equal(a, b, (size_t)na * sizeof(a[0]));
        }
        /* Grouping by any factorisation that succeeds keeps the map. */
        ndim = (int)pick(1, 3);
        {
            int64_t rest = size;

            for (int d = 0; d < ndim - 1; d++) {
                int64_t f = pick(1, 4);

                shape[d] = rest % f == 0 ? f : 1;
                rest /= shape[d];
            }
            shape[ndim - 1] = rest;
        }
        if (td__lay_group(&l, shape, ndim, &g, seps) == 0) {
            int64_t gsize;

            assert_int_equal(seps[0], 0);
            assert_int_equal(seps[ndim], g.nshard);
            assert_int_equal(td__lay_size(&g, &gsize), 0);
            assert_int_equal(gsize, size);
            for (int d = 0; d < ndim; d++) {
                int64_t p = 1;

                assert_true(seps[d] <= seps[d + 1]);
                for (int i = seps[d]; i < seps[d + 1]; i++)
                    p *= g.shard[i].extent;
                assert_int_equal(p, shape[d]);
            }
            for (int64_t e = 0; e < size; e++) {
                assert_int_equal(td__lay_map(&l, e, ca), 0);
                assert_int_equal(td__lay_map(&g, e, cb), 0);
                assert_memory_equal(ca, cb, sizeof(ca));
            }
        }
    }
}

/* Random bytes in place of a layout: every function must answer without
 * undefined behaviour (the sanitizer build checks). */
static int ignore_owner(void *u, int64_t tid, int64_t slot)
{
    (void)u;
    (void)tid;
    (void)slot;
    return 0;
}

static void test_garbage(void **state)
{
    (void)state;
    for (int iter = 0; iter < 2000; iter++) {
        td_layout l, o;
        unsigned char *p = (unsigned char *)&l;
        int64_t v, w, c[TD_AXIS_COUNT], shape[2] = {pick(-1, 64), pick(0, 8)};
        int seps[3], map[2], red[1] = {(int)pick(-1, 2)};
        td_local_dim dims[2];
        td_lay_local loc;
        char why[64];

        for (size_t i = 0; i < sizeof(l); i++)
            p[i] = (unsigned char)rnd();
        /* Half the time keep the counts plausible so that deeper code
         * runs on hostile iters. */
        if (iter % 2) {
            l.nshard = (int)pick(0, TD_MAX_LAYOUT_ITERS);
            l.nrep = (int)pick(0, 3);
            for (int i = 0; i < TD_MAX_LAYOUT_ITERS; i++) {
                l.shard[i].axis = (td_axis)pick(0, TD_AXIS_COUNT - 1);
                l.shard[i].extent = pick(-1, 40);
                l.shard[i].stride = (int64_t)rnd() >> pick(20, 63);
                l.rep[i] = l.shard[i];
            }
            for (int a = 0; a < TD_AXIS_COUNT; a++)
                l.offset[a] = (int64_t)rnd() >> pick(20, 63);
        }
        l.swizzle = (rnd() & 1) != 0;
        (void)td__lay_check(&l, why, sizeof(why));
        (void)td__lay_canonicalize(&l, &o);
        (void)td__lay_size(&l, &v);
        (void)td__lay_span(&l, TD_LAY_ALL_MEMORY, &v);
        (void)td__lay_storage(&l, &o);
        (void)td__lay_group(&l, shape, 2, &o, seps);
        if (td__local_analyze_dims(&l, shape, 2, dims) == 0) {
            int64_t masks[8];
            int nm;

            (void)td__local_shuffle_masks(dims, 2, red, 1, masks, &nm, 8);
        }
        (void)td__local_dim_map(&l, shape, 2, map);
        (void)td__lay_local_region(&l, shape, 2, (const int64_t[]){0, 0},
                                   shape, &loc, why, sizeof(why));
        (void)td__local_validate_reduction(&l, &l, shape, 2, shape, 2, red, 1,
                                           why, sizeof(why));
        (void)td__local_analyze_shuffle(&l, &l, &v, &w, why, sizeof(why));
        (void)td__lay_map(&l, pick(-1, 100), c);
        (void)td__lay_replica(&l, pick(-1, 5), c);
        (void)td__lay_owner_slots(&l, pick(0, 8), ignore_owner, NULL);
        (void)td__lay_bounds(&l, &v, &w);
    }
}

/*
 * Swizzled layouts against TVM 0.27's own offsets.  The values come from
 * the released wheel:
 *   from tvm.tirx.layout import ComposeLayout, TileLayout, S
 *   lay = ComposeLayout(3, 3, 3, TileLayout(S[(8, 64):(64, 1)]))
 *   [int(lay.apply(*coord, shape=[8, 64])["m"]) for every 37th element]
 * (the script: coord is the row-major unflattening of x = 0, 37, 74, ...).
 * Each layout is parsed in TVM's printed form and in ours; both must map
 * every sampled element to TVM's offset.
 */
typedef struct swz_ref {
    const char *tvm, *ours;
    int n;
    int64_t off[28]; /* offsets of elements 0, 37, 74, ... */
} swz_ref;

static const swz_ref g_swz[] = {
    {"ComposeLayout(3, 3, 3, TileLayout(S[(8, 64):(64, 1)]))",
     "S[(8, 64) : (64, 1)] + Swizzle(3, 3, 3)", 14,
     {0, 37, 66, 103, 132, 169, 198, 291, 264, 357, 346, 423, 396, 473}},
    {"ComposeLayout(2, 3, 4, TileLayout(S[(16, 32):(32, 1)]))",
     "S[(16, 32) : (32, 1)] + Swizzle(3, 2, 4)", 14,
     {0, 37, 78, 107, 156, 177, 210, 275, 312, 345, 358, 399, 420, 509}},
    {"T.ComposeLayout(3, 2, 3, T.TileLayout(T.S[(8, 64):(1, 8)] + 64))",
     "S[(8, 64) : (1, 8)] + 64 + Swizzle(2, 3, 3)", 14,
     {72, 352, 129, 425, 250, 522, 307, 84, 404, 189, 461, 230, 550, 327}},
    {"ComposeLayout(4, 3, 3, TileLayout(S[(2, 8, 64):(1024, 64, 1)]))",
     "S[(2, 8, 64) : (1024, 64, 1)] + Swizzle(3, 4, 3)", 28,
     {0,    37,   74,   111,  132,  169,  206,  291,  264,  365,
      338,  423,  396,  465,  1030, 1067, 1104, 1141, 1162, 1199,
      1268, 1321, 1294, 1395, 1368, 1453, 1522, 1495}},
};

static void test_swizzle_tvm(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof g_swz / sizeof *g_swz; k++) {
        const swz_ref *r = &g_swz[k];
        td_layout a, b;
        td_diag d;
        char buf[160];
        td_diag_clear(&d);
        assert_int_equal(td_layout_parse(r->tvm, &a, &d), 0);
        assert_int_equal(td_layout_parse(r->ours, &b, &d), 0);
        assert_memory_equal(&a, &b, sizeof a);
        td_layout_format(&a, buf, sizeof buf);
        assert_string_equal(buf, r->ours);
        for (int i = 0; i < r->n; i++) {
            int64_t c[TD_AXIS_COUNT];
            assert_int_equal(td__lay_map(&a, 37 * i, c), 0);
            if (c[M] != r->off[i])
                print_error("%s: element %d -> %lld, TVM %lld\n", r->tvm,
                            37 * i, (long long)c[M], (long long)r->off[i]);
            assert_int_equal(c[M], r->off[i]);
        }
    }
}

/* The swizzle on its own: its own inverse, a permutation of every aligned
 * block of 2^(m+b+s) offsets, identity below 2^(m+s); bad parameters and
 * negative offsets are refused. */
static void test_swizzle_map(void **state)
{
    (void)state;
    td_layout l;
    memset(&l, 0, sizeof l);
    l.nshard = 1;
    l.shard[0] = IT(4096, 1, M);
    l.swizzle = true;
    l.swizzle_bits[0] = 3;
    l.swizzle_bits[1] = 4;
    l.swizzle_bits[2] = 3;
    static unsigned char seen[4096];
    memset(seen, 0, sizeof seen);
    for (int64_t x = 0; x < 4096; x++) {
        int64_t y, z;
        assert_int_equal(td__lay_swizzle(&l, x, &y), 0);
        assert_int_equal(td__lay_swizzle(&l, y, &z), 0);
        assert_int_equal(z, x);
        assert_true(y >= 0 && y < 4096);
        assert_int_equal(seen[y], 0);
        seen[y] = 1;
        if (x < 128)
            assert_int_equal(y, x);
        /* bits 7..9 into bits 4..6 */
        assert_int_equal(y, x ^ (((x >> 7) & 7) << 4));
    }
    int64_t y;
    assert_int_equal(td__lay_swizzle(&l, -1, &y), TD_EINVAL);
    l.swizzle_bits[0] = 4; /* b > s */
    assert_int_equal(td__lay_swizzle(&l, 1, &y), TD_EINVAL);
    assert_int_equal(td__lay_check(&l, NULL, 0), TD_EINVAL);
    l.swizzle_bits[0] = 3;
    l.swizzle_bits[1] = 32;
    assert_int_equal(td__lay_check(&l, NULL, 0), TD_EINVAL);
    l.swizzle = false; /* no swizzle: the identity */
    assert_int_equal(td__lay_swizzle(&l, 777, &y), 0);
    assert_int_equal(y, 777);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_warp),
        cmocka_unit_test(test_four_per_lane),
        cmocka_unit_test(test_gapped_storage),
        cmocka_unit_test(test_partial_width),
        cmocka_unit_test(test_shuffle_rejections),
        cmocka_unit_test(test_wgmma_group_and_dims),
        cmocka_unit_test(test_wgmma_regions_masks_validate),
        cmocka_unit_test(test_validate_mismatch),
        cmocka_unit_test(test_warpgroup),
        cmocka_unit_test(test_view_basic),
        cmocka_unit_test(test_view_slice),
        cmocka_unit_test(test_local_region_docstring),
        cmocka_unit_test(test_local_region_shapes),
        cmocka_unit_test(test_local_region_pure_thread),
        cmocka_unit_test(test_canonicalize),
        cmocka_unit_test(test_group_failures),
        cmocka_unit_test(test_span_offsets),
        cmocka_unit_test(test_thread_ids),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_parsed_canonical),
        cmocka_unit_test(test_parsed_examples),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_swizzle_tvm),
        cmocka_unit_test(test_swizzle_map),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
