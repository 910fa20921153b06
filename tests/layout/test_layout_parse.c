/*
 * Unit tests of the TileLayout notation parser and printer: the reference's
 * examples, canonical round trips and malformed strings with their columns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "td_internal.h"

typedef struct it {
    int64_t e, s;
    td_axis a;
} it;

/* A good case: the text, its canonical form and the iters it must give. */
static const struct good {
    const char *text;
    const char *canon;
    int nshard;
    it shard[4];
    int nrep;
    it rep[2];
    td_axis off_axis;
    int64_t off;
} g_good[] = {
    {"S[32 : 1@laneid]", "S[32 : 1@laneid]", 1, {{32, 1, TD_AXIS_LANEID}}, 0,
     {{0}}, TD_AXIS_M, 0},
    {"S[1:1] + R[32 : 1@laneid]", "S[1 : 1] + R[32 : 1@laneid]", 1,
     {{1, 1, TD_AXIS_M}}, 1, {{32, 1, TD_AXIS_LANEID}}, TD_AXIS_M, 0},
    {"S[(32,4) : (1@laneid, 1)]", "S[(32, 4) : (1@laneid, 1)]", 2,
     {{32, 1, TD_AXIS_LANEID}, {4, 1, TD_AXIS_M}}, 0, {{0}}, TD_AXIS_M, 0},
    {"S[(32,2,2) : (1@laneid, 2, 4)]", "S[(32, 2, 2) : (1@laneid, 2, 4)]", 3,
     {{32, 1, TD_AXIS_LANEID}, {2, 2, TD_AXIS_M}, {2, 4, TD_AXIS_M}}, 0,
     {{0}}, TD_AXIS_M, 0},
    {"S[(4,8) : (8@laneid, 1@laneid)]", "S[(4, 8) : (8@laneid, 1@laneid)]", 2,
     {{4, 8, TD_AXIS_LANEID}, {8, 1, TD_AXIS_LANEID}}, 0, {{0}}, TD_AXIS_M,
     0},
    {"S[4 : 8@laneid] + R[8 : 1@laneid]", "S[4 : 8@laneid] + R[8 : 1@laneid]",
     1, {{4, 8, TD_AXIS_LANEID}}, 1, {{8, 1, TD_AXIS_LANEID}}, TD_AXIS_M, 0},
    {"S[(128,16):(1@tid_in_wg, 1)]", "S[(128, 16) : (1@tid_in_wg, 1)]", 2,
     {{128, 1, TD_AXIS_TID_IN_WG}, {16, 1, TD_AXIS_M}}, 0, {{0}}, TD_AXIS_M,
     0},
    {"S[8,4,2]", "S[(8, 4, 2) : (8, 2, 1)]", 3,
     {{8, 8, TD_AXIS_M}, {4, 2, TD_AXIS_M}, {2, 1, TD_AXIS_M}}, 0, {{0}},
     TD_AXIS_M, 0},
    {"S[64]", "S[64 : 1]", 1, {{64, 1, TD_AXIS_M}}, 0, {{0}}, TD_AXIS_M, 0},
    {"S[(2, 16)]", "S[(2, 16) : (16, 1)]", 2,
     {{2, 16, TD_AXIS_M}, {16, 1, TD_AXIS_M}}, 0, {{0}}, TD_AXIS_M, 0},
    {"S[(4,)]", "S[4 : 1]", 1, {{4, 1, TD_AXIS_M}}, 0, {{0}}, TD_AXIS_M, 0},
    {"S[(8,4,2) : (4@laneid, 1@laneid, 1)]",
     "S[(8, 4, 2) : (4@laneid, 1@laneid, 1)]", 3,
     {{8, 4, TD_AXIS_LANEID}, {4, 1, TD_AXIS_LANEID}, {2, 1, TD_AXIS_M}}, 0,
     {{0}}, TD_AXIS_M, 0},
    {"S[(32, 4) : (1@laneid, 1)] + R[8 : 4@laneid] + 2@laneid",
     "S[(32, 4) : (1@laneid, 1)] + R[8 : 4@laneid] + 2@laneid", 2,
     {{32, 1, TD_AXIS_LANEID}, {4, 1, TD_AXIS_M}}, 1,
     {{8, 4, TD_AXIS_LANEID}}, TD_AXIS_LANEID, 2},
    {"  S [ 4 , 2 : 1@warpid , 3 ]+1@warpid+ 2@warpid ",
     "S[(4, 2) : (1@warpid, 3)] + 3@warpid", 2,
     {{4, 1, TD_AXIS_WARPID}, {2, 3, TD_AXIS_M}}, 0, {{0}}, TD_AXIS_WARPID, 3},
    {"S[4:1] + 5", "S[4 : 1] + 5", 1, {{4, 1, TD_AXIS_M}}, 0, {{0}},
     TD_AXIS_M, 5},
    {"R[2:0@bx] + S[(2,2):(2,4)] + R[32:1@laneid]",
     "S[(2, 2) : (2, 4)] + R[(2, 32) : (0@bx, 1@laneid)]", 2,
     {{2, 2, TD_AXIS_M}, {2, 4, TD_AXIS_M}}, 2,
     {{2, 0, TD_AXIS_BX}, {32, 1, TD_AXIS_LANEID}}, TD_AXIS_M, 0},
};

static void check_iters(const td_iter *got, const it *want, int n)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(got[i].extent, want[i].e);
        assert_int_equal(got[i].stride, want[i].s);
        assert_int_equal(got[i].axis, want[i].a);
    }
}

static void test_good(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_good / sizeof *g_good; i++) {
        const struct good *g = &g_good[i];
        td_layout l;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_layout_parse(g->text, &l, &d);
        if (rc)
            print_error("%s: %d: %s\n", g->text, d.col, d.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(l.nshard, g->nshard);
        check_iters(l.shard, g->shard, g->nshard);
        assert_int_equal(l.nrep, g->nrep);
        check_iters(l.rep, g->rep, g->nrep);
        for (int a = 0; a < TD_AXIS_COUNT; a++)
            assert_int_equal(l.offset[a], a == (int)g->off_axis ? g->off : 0);
        assert_false(l.swizzle);

        char buf[256];
        size_t n = td_layout_format(&l, buf, sizeof buf);
        assert_string_equal(buf, g->canon);
        assert_int_equal(n, strlen(g->canon));

        /* The canonical form parses back to the same layout. */
        td_layout back;
        assert_int_equal(td_layout_parse(buf, &back, &d), 0);
        assert_memory_equal(&back, &l, sizeof l);
    }
}

static void test_swizzle_and_format_limits(void **state)
{
    (void)state;
    td_layout l;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_layout_parse("Swizzle(3, 4, 3)", &l, &d), 0);
    assert_true(l.swizzle);
    assert_int_equal(l.nshard, 0);
    assert_int_equal(l.swizzle_bits[0], 3);
    assert_int_equal(l.swizzle_bits[1], 4);
    assert_int_equal(l.swizzle_bits[2], 3);
    char buf[64];
    td_layout_format(&l, buf, sizeof buf);
    assert_string_equal(buf, "Swizzle(3, 4, 3)");

    /* A short buffer gets a terminated prefix and the full length. */
    assert_int_equal(td_layout_parse("S[(32,4):(1@laneid,1)]", &l, &d), 0);
    char small[6];
    assert_int_equal(td_layout_format(&l, small, sizeof small),
                     strlen("S[(32, 4) : (1@laneid, 1)]"));
    assert_string_equal(small, "S[(32");
    assert_int_equal(td_layout_format(&l, NULL, 0),
                     strlen("S[(32, 4) : (1@laneid, 1)]"));

    /* The maximum number of iters is accepted. */
    assert_int_equal(
        td_layout_parse("S[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2]", &l, &d), 0);
    assert_int_equal(l.nshard, TD_MAX_LAYOUT_ITERS);
    assert_int_equal(l.shard[0].stride, 2);
}

static const struct bad {
    const char *text;
    int col;
    const char *msg;
} g_bad[] = {
    {"S[32 : 1@lane]", 10, "unknown layout axis 'lane'"},
    {"S[(32, 4) : (1@laneid)]", 13, "layout has 2 extents but 1 stride"},
    {"S[(4, 0) : (1, 1)]", 7, "layout extent must be positive"},
    {"S[4 : 1", 8, "expected ']', found end of layout"},
    {"S 4 : 1]", 3, "expected '[', found '4'"},
    {"S[4 : 1] x", 10, "expected '+' or end of layout, found 'x'"},
    {"S[4 : 1] + ", 12,
     "expected S[...], R[...], an offset or Swizzle(...), found end of layout"},
    {"R[32 : 1@laneid]", 1, "layout needs a shard S[...]"},
    {"S[4] + S[4]", 8, "layout has more than one shard S[...]"},
    {"S[99999999999]", 3, "integer too large in layout"},
    {"S[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", 35, "too many layout iters"},
    {"R[(4,4,4,4,4,4,4,4)] + S[1] + R[(4,4,4,4,4,4,4,4,4)]", 31,
     "too many layout iters"},
    {"S[4 : -1]", 7, "negative numbers are not allowed"},
    {"", 1, "empty layout"},
    {"   ", 4, "empty layout"},
    {"S[(4, 2 : (1, 1)]", 9, "expected ',' or ')', found ':'"},
    {"S[4 : 1@]", 9, "expected an axis name after '@', found ']'"},
    {"Swizzle(3, 4)", 13, "expected ',', found ')'"},
    {"Swizzle(3, 4, 40)", 15, "swizzle shift must be at most 31, got 40"},
    {"Swizzle(4, 4, 3)", 1,
     "swizzle bits 4 exceed its shift 3: the XORed bits would overlap"},
    {"S[8] + Swizzle(3, 4, 3) + Swizzle(1, 1, 1)", 27,
     "layout has more than one Swizzle(...)"},
    {"S[(8, 32) : (32, 1@laneid)] + Swizzle(1, 1, 1)", 31,
     "a swizzled layout lays out shared memory: its terms may use the "
     "memory axis m only, found laneid"},
    /* TVM's printed form, ComposeLayout(per_element, swizzle_len,
     * atom_len, TileLayout(...)). */
    {"ComposeLayout(3, 4, 3, TileLayout(S[(8, 64):(64, 1)]))", 1,
     "ComposeLayout swizzle_len 4 exceeds atom_len 3"},
    {"ComposeLayout(-1, 3, 3, TileLayout(S[(8, 64):(64, 1)]))", 15,
     "negative numbers are not allowed in a layout"},
    {"ComposeLayout(3, 3, 32, TileLayout(S[8]))", 21,
     "swizzle atom_len must be at most 31, got 32"},
    {"ComposeLayout(40, 3, 3, TileLayout(S[8]))", 15,
     "swizzle per_element must be at most 31, got 40"},
    {"ComposeLayout(3, 3, 3, TileLayout(S[(8, 64):(64, 1@laneid)]))", 1,
     "its terms may use the memory axis m only, found laneid"},
    {"ComposeLayout(3, 3, 3, TileLayout(S[8]) + R[2 : 1@tx])", 41,
     "expected ',' or ')', found '+'"},
    {"ComposeLayout(3, 3, 3, TileLayout(S[8]), swizzle_inner=False)", 56,
     "swizzle_inner=False is not supported"},
    {"ComposeLayout(3, 3, 3, TileLayout(S[8]), inner=True)", 42,
     "expected swizzle_inner=, found 'i'"},
    {"ComposeLayout(3, 3, 3, TileLayout(S[8] + Swizzle(1, 1, 1)))", 42,
     "Swizzle(...) inside ComposeLayout's TileLayout"},
    {"ComposeLayout(3, 3, 3, S[8])", 24, "expected TileLayout(...), found 'S'"},
    {"ComposeLayout(3, 3, 3, TileLayout())", 35, "expected S[...], found ')'"},
    {"ComposeLayout(3, 3, 3, TileLayout(R[2]))", 35,
     "layout needs a shard S[...]"},
    {"ComposeLayout(3, 3, 3, TileLayout(S[8])) + 4", 42,
     "expected end of layout, found '+'"},
    {"S[8] + ComposeLayout(1, 1, 1, TileLayout(S[8]))", 8,
     "ComposeLayout(...) must be the whole layout"},
    {"ComposeLayout(3, 3, 3, TileLayout(S[8] x))", 40,
     "expected '+' or ')', found 'x'"},
    {"Shard[4]", 1, "expected S[...], R[...], an offset or Swizzle(...), "
                    "found 'S'"},
    {"S[4 : 1@laneid\x01]", 15, "expected ']', found byte 0x01"},
    {"S[4 4]", 5, "expected ':' or ']', found '4'"},
};

static void test_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g_bad / sizeof *g_bad; i++) {
        td_layout l;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_layout_parse(g_bad[i].text, &l, &d);
        if (rc != TD_EPARSE || d.col != g_bad[i].col ||
            strstr(d.msg, g_bad[i].msg) == NULL)
            print_error("'%s': want %d: %s\n  got %d %d: %s\n", g_bad[i].text,
                        g_bad[i].col, g_bad[i].msg, rc, d.col, d.msg);
        assert_int_equal(rc, TD_EPARSE);
        assert_int_equal(d.code, TD_EPARSE);
        assert_int_equal(d.line, 0);
        assert_int_equal(d.col, g_bad[i].col);
        assert_non_null(strstr(d.msg, g_bad[i].msg));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_swizzle_and_format_limits),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
