/*
 * Unit tests for the layout algebra (model/layout_algebra.c) against what
 * TVM 0.27 returns for the same inputs: the values below are the output
 * of tests/upstream/dump_layout_algebra.py, written in our notation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "layout.h"

static td_layout P(const char *text)
{
    td_layout l;
    td_diag d;

    assert_int_equal(td_layout_parse(text, &l, &d), 0);
    return l;
}

/* The layout's notation must be `want`. */
static void expect(const td_layout *l, const char *want)
{
    char buf[512];

    td_layout_format(l, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void slice_ok(const char *l, const int64_t *shape, int nd,
                     const int64_t *st, const int64_t *ex, const char *want)
{
    td_layout in = P(l), out;

    assert_int_equal(td__lay_slice(&in, shape, nd, st, ex, &out), 0);
    expect(&out, want);
}

static void test_slice(void **state)
{
    (void)state;
    /* slice1: TVM S[(1, 8):(8, 1)] + 8 */
    slice_ok("S[(4, 8) : (8, 1)]", (int64_t[]){4, 8}, 2, (int64_t[]){1, 0},
             (int64_t[]){1, 8}, "S[(1, 8) : (8, 1)] + 8");
    /* slice2: S[(4, 32):(35, 1)] + 3 */
    slice_ok("S[(4, 35) : (35, 1)]", (int64_t[]){4, 35}, 2,
             (int64_t[]){0, 3}, (int64_t[]){4, 32}, "S[(4, 32) : (35, 1)] + 3");
    /* slice3: S[(1, 4, 1, 4):(64, 16, 4, 1)] + 4 */
    slice_ok("S[(16, 4, 4, 4) : (64, 16, 4, 1)]", (int64_t[]){16, 4, 4, 4}, 4,
             (int64_t[]){0, 0, 1, 0}, (int64_t[]){1, 4, 1, 4},
             "S[(1, 4, 1, 4) : (64, 16, 4, 1)] + 4");
    /* slice4: S[(32, 2, 1):(1@laneid, 2, 4)] + 4 */
    slice_ok("S[(32, 2, 2) : (1@laneid, 2, 4)]", (int64_t[]){32, 2, 2}, 3,
             (int64_t[]){0, 0, 1}, (int64_t[]){32, 2, 1},
             "S[(32, 2, 1) : (1@laneid, 2, 4)] + 4");
    /* slice5: S[(128, 32):(64, 1)] + 8 */
    slice_ok("S[(128, 64) : (64, 1)]", (int64_t[]){128, 64}, 2,
             (int64_t[]){0, 8}, (int64_t[]){128, 32}, "S[(128, 32) : (64, 1)] + 8");
    /* slice6: S[(32, 32):(64, 1)] + 2080 */
    slice_ok("S[(64, 64) : (64, 1)]", (int64_t[]){64, 64}, 2,
             (int64_t[]){32, 32}, (int64_t[]){32, 32},
             "S[(32, 32) : (64, 1)] + 2080");
    /* slice7 (a layout regrouped by another shape): S[(2, 8):(16, 1)] + 4 */
    slice_ok("S[(4, 8) : (8, 1)]", (int64_t[]){2, 16}, 2, (int64_t[]){0, 4},
             (int64_t[]){2, 8}, "S[(2, 8) : (16, 1)] + 4");
    /* slice8: S[(2, 4):(8, 1)] + 10 */
    slice_ok("S[(4, 8) : (8, 1)]", (int64_t[]){4, 8}, 2, (int64_t[]){1, 2},
             (int64_t[]){2, 4}, "S[(2, 4) : (8, 1)] + 10");
    /* slice_none: TVM returns None */
    td_layout in = P("S[(4, 4) : (100, 1)]"), out;
    assert_int_equal(td__lay_slice(&in, (int64_t[]){16}, 1, (int64_t[]){2},
                                   (int64_t[]){8}, &out),
                     TD_ENOMATCH);
    /* a region outside the shape is malformed */
    assert_int_equal(td__lay_slice(&in, (int64_t[]){16}, 1, (int64_t[]){10},
                                   (int64_t[]){8}, &out),
                     TD_EINVAL);
}

static void test_permute(void **state)
{
    td_layout l = P("S[(2, 3, 4) : (1, 8, 2)]"), o, g;
    int seps[3], oseps[3];

    (void)state;
    /* permute_dims [2, 0, 1]: S[(4, 2, 3):(2, 1, 8)] */
    assert_int_equal(td__lay_permute_dims(&l, (int[]){2, 0, 1}, 3, &o), 0);
    expect(&o, "S[(4, 2, 3) : (2, 1, 8)]");
    assert_int_equal(td__lay_permute_dims(&l, (int[]){2, 2, 1}, 3, &o),
                     TD_EINVAL);
    /* group [6, 20] of S[(2, 3, 4, 5)]: seps [0, 2, 4]; permute_by_groups
     * [1, 0]: S[(4, 5, 2, 3):(5, 1, 60, 20)] */
    l = P("S[(2, 3, 4, 5) : (60, 20, 5, 1)]");
    assert_int_equal(td__lay_group(&l, (int64_t[]){6, 20}, 2, &g, seps), 0);
    assert_int_equal(seps[1], 2);
    assert_int_equal(seps[2], 4);
    assert_int_equal(
        td__lay_permute_by_groups(&g, seps, 2, (int[]){1, 0}, &o, oseps), 0);
    expect(&o, "S[(4, 5, 2, 3) : (5, 1, 60, 20)]");
    assert_int_equal(oseps[1], 2);
    assert_int_equal(oseps[2], 4);
    /* TVM's group raises for S[(6, 4)] by [4, 6] */
    l = P("S[(6, 4) : (4, 1)]");
    assert_int_not_equal(td__lay_group(&l, (int64_t[]){4, 6}, 2, &g, seps), 0);
}

static void test_sort(void **state)
{
    td_layout l = P("S[(2, 3, 4) : (4, 8, 4)]"), o;
    int perm[3];

    (void)state;
    /* stable: the two stride-4 iters keep their order: S[(3, 2, 4):(8, 4, 4)] */
    assert_int_equal(td__lay_sort_by_stride_desc(&l, &o, perm), 0);
    expect(&o, "S[(3, 2, 4) : (8, 4, 4)]");
    assert_int_equal(perm[0], 1);
    assert_int_equal(perm[1], 0);
    assert_int_equal(perm[2], 2);
    l = P("S[(4, 8) : (1, 4)]");
    assert_int_equal(td__lay_sort_by_stride_desc(&l, &o, NULL), 0);
    expect(&o, "S[(8, 4) : (4, 1)]");
}

static void test_carve_tail(void **state)
{
    td_iter it[8];
    int n;

    (void)state;
    /* carve8 of S[(32, 64)]: (32, 64), (8, 8), (8, 1) */
    n = 2;
    it[0] = (td_iter){32, 64, TD_AXIS_M};
    it[1] = (td_iter){64, 1, TD_AXIS_M};
    assert_int_equal(td__lay_carve_tail(it, &n, 8, 8), 0);
    assert_int_equal(n, 3);
    assert_true(it[1].extent == 8 && it[1].stride == 8);
    assert_true(it[2].extent == 8 && it[2].stride == 1);
    /* carve_multi, 16 of S[(4, 2, 4)]: (2, 16), (2, 8), (2, 4), (4, 1) */
    n = 3;
    it[0] = (td_iter){4, 8, TD_AXIS_M};
    it[1] = (td_iter){2, 4, TD_AXIS_M};
    it[2] = (td_iter){4, 1, TD_AXIS_M};
    assert_int_equal(td__lay_carve_tail(it, &n, 8, 16), 0);
    assert_int_equal(n, 4);
    assert_true(it[0].extent == 2 && it[0].stride == 16);
    assert_true(it[1].extent == 2 && it[1].stride == 8);
    assert_true(it[2].extent == 2 && it[2].stride == 4);
    assert_true(it[3].extent == 4 && it[3].stride == 1);
    /* carve_fail: 4 of (6, 3): None; carve_fail2: 2 of (4, 3): None */
    n = 2;
    it[0] = (td_iter){6, 3, TD_AXIS_M};
    it[1] = (td_iter){3, 1, TD_AXIS_M};
    assert_int_equal(td__lay_carve_tail(it, &n, 8, 4), TD_ENOMATCH);
    n = 2;
    it[0] = (td_iter){4, 3, TD_AXIS_M};
    it[1] = (td_iter){3, 1, TD_AXIS_M};
    assert_int_equal(td__lay_carve_tail(it, &n, 8, 2), TD_ENOMATCH);
    /* a full list has no room for the split */
    n = 1;
    it[0] = (td_iter){8, 1, TD_AXIS_M};
    assert_int_equal(td__lay_carve_tail(it, &n, 1, 2), TD_ELIMIT);
}

static void test_strip_swizzle(void **state)
{
    td_layout t = P("S[512 : 1]"), o;

    (void)state;
    /* strip_bare over [128, 64]: S[(128, 64):(64, 1)] */
    assert_int_equal(td__lay_strip_swizzle(&t, (int64_t[]){128, 64}, 2, &o), 0);
    expect(&o, "S[(128, 64) : (64, 1)]");
    /* strip_same over [8, 64]: the tile, S[512:1] */
    assert_int_equal(td__lay_strip_swizzle(&t, (int64_t[]){8, 64}, 2, &o), 0);
    expect(&o, "S[512 : 1]");
    /* strip_tile: a real tile is kept */
    t = P("S[(64, 2, 32) : (32, 2048, 1)]");
    assert_int_equal(td__lay_strip_swizzle(&t, (int64_t[]){64, 64}, 2, &o), 0);
    expect(&o, "S[(64, 2, 32) : (32, 2048, 1)]");
    assert_true(td__lay_is_trivial(&(td_layout){0}) == false);
}

static void test_apply_shape(void **state)
{
    td_layout l = P("S[(2, 16) : (20, 1)]");
    int64_t c[TD_AXIS_COUNT];

    (void)state;
    /* apply_shape: {"m": 11} */
    assert_int_equal(td__lay_apply_shape(&l, (int64_t[]){1, 3},
                                         (int64_t[]){4, 8}, 2, c),
                     0);
    assert_int_equal(c[TD_AXIS_M], 11);
    /* apply_shape2: the outermost iter is not reduced: {"m": 1253} */
    l = P("S[(8, 4, 8) : (8, 1024, 1)]");
    assert_int_equal(td__lay_apply_shape(&l, (int64_t[]){3, 17, 5},
                                         (int64_t[]){8, 32, 8}, 3, c),
                     0);
    assert_int_equal(c[TD_AXIS_M], 1253);
    assert_int_equal(td__lay_apply_shape(&l, (int64_t[]){8, 0, 0},
                                         (int64_t[]){8, 32, 8}, 3, c),
                     TD_EINVAL);
}

static void test_swizzle(void **state)
{
    static const int64_t in[] = {0, 8, 64, 72, 200, 1000};
    static const int64_t inner[] = {0, 8, 72, 64, 208, 976};
    static const int64_t outer[] = {0, 72, 64, 8, 136, 680};
    static const int64_t in2[] = {0, 4, 32, 36, 100, 999};
    static const int64_t p2[] = {0, 4, 36, 32, 104, 1019};
    td_lay_swz z = {true, 3, 3, 3, true};
    int64_t v;

    (void)state;
    for (int i = 0; i < 6; i++) {
        z.inner = true;
        assert_int_equal(td__lay_swz_apply(&z, in[i], &v), 0);
        assert_int_equal(v, inner[i]);   /* swz_inner */
        z.inner = false;
        assert_int_equal(td__lay_swz_apply(&z, in[i], &v), 0);
        assert_int_equal(v, outer[i]);   /* swz_outer */
    }
    z = (td_lay_swz){true, 2, 3, 3, true};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(td__lay_swz_apply(&z, in2[i], &v), 0);
        assert_int_equal(v, p2[i]);      /* swz_p2 */
    }
    z.on = false;
    assert_int_equal(td__lay_swz_apply(&z, 77, &v), 0);
    assert_int_equal(v, 77);
    z = (td_lay_swz){true, -1, 3, 3, true};
    assert_int_equal(td__lay_swz_apply(&z, 1, &v), TD_EINVAL);
}

static void test_fuse_scope(void **state)
{
    td_layout l = P("S[(4, 8, 4) : (1@wid_in_wg, 4@laneid, 1@laneid)]");

    (void)state;
    assert_int_equal(td__lay_fuse_scope(&l, TD_SCOPE_WARPGROUP), 0);
    assert_int_equal(td__lay_canonicalize(&l, &l), 0);
    expect(&l, "S[128 : 1@tid_in_wg]");
    l = P("S[(4, 8, 4) : (1@wid_in_wg, 4@laneid, 1@laneid)]");
    assert_int_equal(td__lay_fuse_scope(&l, TD_SCOPE_WARP), 0);
    expect(&l, "S[(4, 8, 4) : (1@wid_in_wg, 4@laneid, 1@laneid)]");
}

/* TVM's ICHECK texts of an impossible group (dump_layout_algebra.py,
 * group_why*) and its printing of layouts (tvm_print*). */
static void group_why_is(const char *l, const int64_t *shape, int n,
                         const char *want)
{
    td_layout in = P(l), out;
    int seps[TD_MAX_RANK + 1];
    char why[512] = "";

    assert_int_equal(td__lay_group_why(&in, shape, n, &out, seps, why, sizeof why),
                     TD_EINVAL);
    assert_string_equal(why, want);
}

static void test_group_why(void **state)
{
    (void)state;
    group_why_is("S[(32, 2) : (1@laneid, 1)]", (int64_t[]){16, 8}, 2,
                 "Check failed: (shape_idx == shape.size()) is false: layout "
                 "T.TileLayout(T.S[(32, 2):(1 @ Axis.laneid, 1)]) can not be "
                 "grouped by shape (16, 8)");
    group_why_is("S[(6, 4) : (4, 1)]", (int64_t[]){4, 6}, 2,
                 "Check failed: (analyzer->CanProveEqual(floormod(extent_i, "
                 "c), 0)) is false: layout T.TileLayout(T.S[(6, 4):(4, 1)]) "
                 "can not be grouped by shape (4, 6)");
    group_why_is("S[(4, 4) : (4, 1)]", (int64_t[]){4, 4, 2}, 3,
                 "Check failed: (shape_idx == shape.size()) is false: layout "
                 "T.TileLayout(T.S[(4, 4):(4, 1)]) can not be grouped by "
                 "shape (4, 4, 2)");
    group_why_is("S[(4, 4) : (4, 1)]", (int64_t[]){2}, 1,
                 "Check failed: (shape_idx < shape.size()) is false: layout "
                 "T.TileLayout(T.S[(4, 4):(4, 1)]) can not be grouped by "
                 "shape (2,)");
}

static void tvm_text_is(const char *l, const char *want)
{
    td_layout in = P(l);
    char buf[512];

    assert_int_equal(td__lay_format_tvm(&in, buf, sizeof buf), strlen(want));
    assert_string_equal(buf, want);
}

static void test_format_tvm(void **state)
{
    (void)state;
    tvm_text_is("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)] + R[2 : 4@laneid] + 3",
                "T.TileLayout(T.S[(2, 8, 4, 2):(2, 4 @ Axis.laneid, 1 @ "
                "Axis.laneid, 1)] + T.R[2:4 @ Axis.laneid] + 3)");
    tvm_text_is("S[4 : 1]", "T.TileLayout(T.S[4:1])");
    tvm_text_is("S[(2, 8) : (2, 4@laneid)] + 3 + 2@laneid",
                "T.TileLayout(T.S[(2, 8):(2, 4 @ Axis.laneid)] + (2 @ "
                "Axis.laneid + 3))");
}

/* tile_to and the thread-left order against TVM are replayed in
 * test_gemm_frag.c (tests/upstream/data/gemm_frag.txt); here the
 * refusals. */
static void test_tile_to_refusals(void **state)
{
    td_layout l = P("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]"), o;

    (void)state;
    /* TVM floor-divides 24 / 16 and returns a 16-row layout. */
    assert_int_equal(td__lay_tile_to(&l, (int64_t[]){24, 8},
                                     (int64_t[]){16, 8}, 2, &o),
                     TD_EINVAL);
    /* The layout is not one of the current shape. */
    assert_int_equal(td__lay_tile_to(&l, (int64_t[]){32, 16},
                                     (int64_t[]){16, 16}, 2, &o),
                     TD_EINVAL);
    assert_int_equal(td__lay_tile_to(&l, (int64_t[]){32, 16},
                                     (int64_t[]){16, 8}, 0, &o),
                     TD_EINVAL);
    assert_int_equal(td__lay_tile_to(&l, (int64_t[]){32, 16},
                                     (int64_t[]){16, 8}, 2, &o),
                     0);
    /* dump_layout_algebra.py tile_to */
    expect(&o, "S[(2, 2, 8, 2, 4, 2) : (8, 2, 4@laneid, 4, 1@laneid, 1)]");
    /* A thread-left order of an empty shard is empty. */
    td_layout e;
    int perm[1];
    memset(&e, 0, sizeof e);
    assert_int_equal(td__lay_canon_perm(&e, perm), 0);
}

/* is_tile_inner against dump_layout_algebra.py's tile_inner_* values. */
static void tile_inner_is(const char *atom, const char *tiled,
                          const int64_t *tshape, const int64_t *ishape,
                          int rc, const char *want)
{
    td_layout a = P(atom), t = P(tiled), o;
    char why[512] = "";

    assert_int_equal(td__lay_is_tile_inner(&a, &t, tshape, ishape, 2, &o, why,
                                           sizeof why),
                     rc);
    if (rc == 0)
        expect(&o, want);
    else if (want != NULL)
        assert_string_equal(why, want);
}

static void test_is_tile_inner(void **state)
{
    const int64_t sh[2] = {128, 64};

    (void)state;
    /* gemm_async's swizzle atoms (float16) in mma_shared_layout (128, 64) */
    tile_inner_is("S[512 : 1] + Swizzle(3, 3, 3)", "S[8192 : 1] + Swizzle(3, 3, 3)",
                  sh, (int64_t[]){8, 64}, 0, "S[(16, 1) : (1, 64)]");
    tile_inner_is("S[256 : 1] + Swizzle(2, 3, 3)",
                  "S[(128, 2, 32) : (32, 4096, 1)] + Swizzle(2, 3, 3)", sh,
                  (int64_t[]){8, 32}, 0, "S[(16, 2) : (1, 16)]");
    tile_inner_is("S[128 : 1] + Swizzle(1, 3, 3)",
                  "S[(128, 4, 16) : (16, 2048, 1)] + Swizzle(1, 3, 3)", sh,
                  (int64_t[]){8, 16}, 0, "S[(16, 4) : (1, 16)]");
    /* the MN-major atom in a K-major layout, another swizzle, no swizzle */
    tile_inner_is("S[(64, 8) : (1, 64)] + Swizzle(3, 3, 3)",
                  "S[8192 : 1] + Swizzle(3, 3, 3)", sh, (int64_t[]){64, 8},
                  TD_ENOMATCH, NULL);
    tile_inner_is("S[256 : 1] + Swizzle(2, 3, 3)", "S[8192 : 1] + Swizzle(3, 3, 3)",
                  sh, (int64_t[]){8, 32}, TD_ENOMATCH, NULL);
    tile_inner_is("S[(8, 64) : (64, 1)]", "S[8192 : 1] + Swizzle(3, 3, 3)", sh,
                  (int64_t[]){8, 64}, TD_ENOMATCH, NULL);
    /* fragments in their tilings (tile_to) */
    tile_inner_is("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]",
                  "S[(2, 2, 8, 2, 4, 2) : (8, 2, 4@laneid, 4, 1@laneid, 1)]",
                  (int64_t[]){32, 16}, (int64_t[]){16, 8}, 0, "S[(2, 2) : (2, 1)]");
    tile_inner_is("S[(2, 8, 2, 4, 2) : (2, 4@laneid, 4, 1@laneid, 1)]",
                  "S[(2, 2, 8, 4, 4, 2) : (16, 2, 4@laneid, 4, 1@laneid, 1)]",
                  (int64_t[]){32, 32}, (int64_t[]){16, 16}, 0, "S[(2, 2) : (2, 1)]");
    /* offsets, a stride the span does not divide, a stride that differs,
     * a replica the atom lacks */
    tile_inner_is("S[(2, 8) : (8, 1)]", "S[(4, 8) : (8, 1)] + 3", (int64_t[]){4, 8},
                  (int64_t[]){2, 8}, 0, "S[(2, 1) : (1, 8)] + 3");
    tile_inner_is("S[(2, 2) : (2, 1)]", "S[(2, 2, 2) : (3, 2, 1)]", (int64_t[]){4, 2},
                  (int64_t[]){2, 2}, TD_ENOMATCH, NULL);
    tile_inner_is("S[(2, 8) : (8, 1)]", "S[(4, 8) : (16, 2)]", (int64_t[]){4, 8},
                  (int64_t[]){2, 8}, TD_ENOMATCH, NULL);
    tile_inner_is("S[(2, 8) : (8, 1)]", "S[(4, 8) : (8, 1)] + R[2 : 1@laneid]",
                  (int64_t[]){4, 8}, (int64_t[]){2, 8}, 0,
                  "S[(2, 1) : (1, 8)] + R[2 : 1@laneid]");
    /* TVM splits tx into warpid + laneid first (S[(2, 1) : (1@warpid,
     * 1@warpid)]); not ported */
    tile_inner_is("S[32 : 1@laneid]", "S[(2, 32) : (32@tx, 1@tx)]",
                  (int64_t[]){2, 32}, (int64_t[]){1, 32}, TD_ELIMIT, NULL);
    tile_inner_is("S[(3, 8) : (8, 1)]", "S[(4, 8) : (8, 1)]", (int64_t[]){4, 8},
                  (int64_t[]){3, 8}, TD_EINVAL,
                  "Check failed: (analyzer->CanProveEqual(floormod(shape[i], "
                  "factor[i]), 0)) is false: Shape[i] must be divisible by "
                  "factor[i]");
}

static void test_same(void **state)
{
    td_layout a = P("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)] + 3"), b = a, c;

    (void)state;
    assert_true(td__lay_same(&a, &b));
    /* The same map written unfused: equal only once canonical. */
    c = P("S[(2, 32, 2) : (2, 1@laneid, 1)] + 3");
    assert_false(td__lay_same(&a, &c));
    assert_int_equal(td__lay_canonicalize(&a, &b), 0);
    assert_true(td__lay_same(&b, &c));
    /* offsets, replicas, swizzles and axes count */
    c = P("S[(2, 32, 2) : (2, 1@laneid, 1)] + 4");
    assert_false(td__lay_same(&b, &c));
    c = P("S[(2, 32, 2) : (2, 1@laneid, 1)] + R[2 : 1@warpid] + 3");
    assert_false(td__lay_same(&b, &c));
    c = P("S[(2, 32, 2) : (2, 1@tx, 1)] + 3");
    assert_false(td__lay_same(&b, &c));
    a = P("S[512 : 1] + Swizzle(3, 3, 3)");
    c = P("S[512 : 1] + Swizzle(2, 3, 3)");
    assert_false(td__lay_same(&a, &c));
    c = P("S[512 : 1]");
    assert_false(td__lay_same(&a, &c));
    assert_false(td__lay_same(&a, NULL));
}


/* direct_sum and is_direct_sum_right against TVM's (dump: the
 * sf_tmem_layout atoms of tcgen05.py, direct_sum(outer, [M, K], [32, s])). */
static void test_direct_sum(void **state)
{
    (void)state;
    td_layout atom1 = P("S[(32, 1) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    td_layout atom2 = P("S[(32, 2) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    td_layout o1 = P("S[(4, 4) : (4@TCol, 1@TCol)]");
    td_layout o2 = P("S[(4, 2, 2) : (4@TCol, 16@TCol, 2@TCol)]");
    td_layout out;
    const int64_t ls[2] = {4, 4}, r1[2] = {32, 1}, r2[2] = {32, 2};
    assert_int_equal(td__lay_direct_sum(&atom1, &o1, ls, r1, 2, &out), 0);
    expect(&out, "S[(4, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    assert_int_equal(td__lay_direct_sum(&atom2, &o2, ls, r2, 2, &out), 0);
    expect(&out, "S[(4, 32, 2, 4) : (4@TCol, 1@TLane, 16@TCol, 1@TCol)] + "
                 "R[4 : 32@TLane]");
    /* offsets add */
    td_layout o3 = P("S[(4, 4) : (4@TCol, 1@TCol)] + 1@TLane");
    assert_int_equal(td__lay_direct_sum(&atom1, &o3, ls, r1, 2, &out), 0);
    expect(&out, "S[(4, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + R[4 : 32@TLane]"
                 " + 1@TLane");
    /* a left addend that does not group by its shape */
    const int64_t bad[2] = {3, 5};
    assert_int_not_equal(td__lay_direct_sum(&atom1, &o1, bad, r1, 2, &out), 0);
}

static void test_is_direct_sum_right(void **state)
{
    (void)state;
    td_layout atom1 = P("S[(32, 1) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    td_layout atom2 = P("S[(32, 2) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    td_layout atom4 = P("S[(32, 4) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    const int64_t r1[2] = {32, 1}, r2[2] = {32, 2}, r4[2] = {32, 4};
    const int64_t i1[4] = {4, 32, 4, 1}, i16[4] = {4, 32, 16, 1},
                  i4x2[4] = {4, 32, 2, 4}, i2[4] = {2, 32, 4, 1},
                  i22[4] = {4, 32, 2, 2};
    int64_t at0[TD_AXIS_COUNT];
    /* sf_tmem_layout(128, 4, 1), (128, 16, 1), (128, 8, 4), (64, 4, 1):
     * TVM returns an outer layout for each */
    td_layout l = P("S[(4, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i1, r1, 2, NULL), 1);
    l = P("S[(4, 32, 4, 4) : (4@TCol, 1@TLane, 16@TCol, 1@TCol)] + R[4 : 32@TLane]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i16, r1, 2, NULL), 1);
    l = P("S[(4, 32, 2, 4) : (4@TCol, 1@TLane, 16@TCol, 1@TCol)] + R[4 : 32@TLane]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom4, &l, i4x2, r4, 2, NULL), 1);
    l = P("S[(2, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i2, r1, 2, NULL), 1);
    /* (128, 4, 1) read with sf_mma_k 2: TVM accepts it too (outer
     * S[(4, 2) : (4@TCol, 2@TCol)]) */
    l = P("S[(4, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + R[4 : 32@TLane]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom2, &l, i22, r2, 2, NULL), 1);
    /* no replica, or the plain identity: TVM accepts (shards only) */
    l = P("S[(4, 32, 4) : (4@TCol, 1@TLane, 1@TCol)]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i1, r1, 2, NULL), 1);
    l = P("S[(128, 4) : (1@TLane, 1@TCol)]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i1, r1, 2, NULL), 1);
    /* the lane base of the left addend */
    l = P("S[(4, 32, 4) : (4@TCol, 1@TLane, 1@TCol)] + R[4 : 32@TLane] + 1@TLane");
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i1, r1, 2, at0), 1);
    assert_int_equal(at0[TD_AXIS_TLANE], 1);
    assert_int_equal(at0[TD_AXIS_TCOL], 0);
    /* rows in columns: the atom's 32 rows are not 32 lanes */
    l = P("S[(128, 4) : (1@TCol, 128@TCol)]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i1, r1, 2, NULL), 0);
    /* K steps of 2 columns where the atom reads 4 */
    l = P("S[(4, 32, 2, 4) : (8@TCol, 1@TLane, 4@TCol, 2@TCol)]");
    assert_int_equal(td__lay_is_direct_sum_right(&atom4, &l, i4x2, r4, 2, NULL), 0);
    /* a domain that is not the layout's size */
    assert_int_equal(td__lay_is_direct_sum_right(&atom1, &l, i1, r1, 2, NULL),
                     TD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_permute),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_carve_tail),
        cmocka_unit_test(test_strip_swizzle),
        cmocka_unit_test(test_apply_shape),
        cmocka_unit_test(test_swizzle),
        cmocka_unit_test(test_fuse_scope),
        cmocka_unit_test(test_group_why),
        cmocka_unit_test(test_format_tvm),
        cmocka_unit_test(test_tile_to_refusals),
        cmocka_unit_test(test_is_tile_inner),
        cmocka_unit_test(test_same),
        cmocka_unit_test(test_direct_sum),
        cmocka_unit_test(test_is_direct_sum_right),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
