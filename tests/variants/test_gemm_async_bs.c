/*
 * Block scaling's checks that a conformance call reaches only for a few
 * values (variants/gemm_async_bs.c): the SF K extent's refusal prints the
 * set of valid extents as Python prints it (the order of its hash table),
 * TVM's text, for K-step counts the conformance calls do not cover; the
 * expected sets are CPython 3.11's str({s, s * k, s * k * 4}).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gemm_async.h"

static void extent_set(int s, int64_t k_iters, int64_t k_total,
                       const char *want)
{
    td__ga_bs bs;
    td_reason why = {0};
    memset(&bs, 0, sizeof bs);
    bs.sf_mma_k = s;
    bs.rows[0] = bs.rows[1] = 128;
    bs.k_total[0] = k_total;
    bs.k_total[1] = s;
    assert_int_equal(td__ga_bs_extents(&bs, 128, 64, k_iters, &why),
                     TD_EDECLINED);
    assert_non_null(strstr(why.text, want));
}

static void test_k_extent_sets(void **state)
{
    (void)state;
    extent_set(4, 2, 3, "tcgen05: SFA K extent=3 must be in {8, 32, 4}");
    extent_set(1, 4, 2, "must be in {16, 1, 4}");
    extent_set(2, 2, 6, "must be in {16, 2, 4}");
    extent_set(1, 1, 2, "must be in {1, 4}");
    extent_set(4, 1, 8, "must be in {16, 4}");
    extent_set(2, 8, 4, "must be in {16, 2, 64}");
    extent_set(1, 64, 2, "must be in {64, 1, 256}");
    extent_set(4, 16, 8, "must be in {64, 256, 4}");
    extent_set(1, 3, 2, "must be in {1, 3, 12}");
}

static void test_extents_accepted(void **state)
{
    (void)state;
    td__ga_bs bs;
    td_reason why = {0};
    /* each of s, s * K_iters, s * K_iters * 4; sf_id where K steps share
     * a cell (s < 4 and K steps) */
    const int64_t ok[3] = {1, 4, 16};
    for (int i = 0; i < 3; i++) {
        memset(&bs, 0, sizeof bs);
        bs.sf_mma_k = 1;
        bs.rows[0] = 128;
        bs.rows[1] = 64;
        bs.k_total[0] = bs.k_total[1] = ok[i];
        assert_int_equal(td__ga_bs_extents(&bs, 128, 64, 4, &why), 0);
        assert_int_equal(bs.per_ki[0], ok[i] / 4);
        assert_int_equal(bs.sf_id, ok[i] >= 4);
    }
    /* the rows: SFA's equal M, SFB's at least N */
    bs.rows[0] = 64;
    assert_int_equal(td__ga_bs_extents(&bs, 128, 64, 4, &why), TD_EDECLINED);
    assert_non_null(strstr(why.text, "tcgen05: SFA rows=64 must equal M=128"));
    bs.rows[0] = 128;
    bs.rows[1] = 32;
    assert_int_equal(td__ga_bs_extents(&bs, 128, 64, 4, &why), TD_EDECLINED);
    assert_non_null(strstr(why.text, "tcgen05: SFB rows=32 must be >= N=64"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k_extent_sets),
        cmocka_unit_test(test_extents_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
