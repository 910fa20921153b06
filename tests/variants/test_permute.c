/*
 * The warp_xor_swizzle algorithm helpers (variants/permute_algo.c) on
 * upstream's numbers (test_permute_layout.py: test_bank_free_sf_128_u32,
 * test_bank_free_sf_256_u32, test_identity_no_xor,
 * test_bijection_check_rejects_aliased, test_dtype_widths_choose_xor_k),
 * and a brute-force check of the bank condition against its definition.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "permute.h"

static const int64_t ext2[2] = {4, 32}, lin2[2] = {32, 1}, tr2[2] = {1, 4};

static void test_sf_128_u32(void **state)
{
    (void)state;
    assert_true(td__permute_bank_free(ext2, lin2, 2, 4, 4, 0));
    assert_false(td__permute_bank_free(ext2, tr2, 2, 4, 4, 0));
    assert_true(td__permute_bank_free(ext2, tr2, 2, 4, 4, 2));
    assert_int_equal(td__permute_choose_xor_k(ext2, lin2, tr2, 2, 4, 4), 2);
}

static void test_sf_256_u32(void **state)
{
    (void)state;
    const int64_t ext[3] = {2, 4, 32}, src[3] = {128, 32, 1},
                  dst[3] = {128, 1, 4};
    assert_true(td__permute_bank_free(ext, src, 3, 4, 8, 0));
    assert_false(td__permute_bank_free(ext, dst, 3, 4, 8, 0));
    assert_true(td__permute_bank_free(ext, dst, 3, 4, 8, 2));
    assert_int_equal(td__permute_choose_xor_k(ext, src, dst, 3, 4, 8), 2);
}

static void test_identity_no_xor(void **state)
{
    (void)state;
    assert_int_equal(td__permute_choose_xor_k(ext2, lin2, lin2, 2, 4, 4), 0);
    assert_true(td__permute_bank_free(ext2, lin2, 2, 4, 4, 0));
}

static void test_bijection(void **state)
{
    (void)state;
    const int64_t alias[2] = {0, 1};
    assert_false(td__permute_bijection(ext2, alias, 2));
    assert_true(td__permute_bijection(ext2, tr2, 2));
    assert_true(td__permute_bijection(ext2, lin2, 2));
    /* Negative strides that stay one-to-one are fine. */
    const int64_t neg[2] = {-32, 1};
    assert_true(td__permute_bijection(ext2, neg, 2));
    /* Two dims landing on the same offsets: (0, 2) and (1, 0). */
    const int64_t over[2] = {2, 1};
    assert_false(td__permute_bijection(ext2, over, 2));
}

static void test_dtype_widths(void **state)
{
    (void)state;
    assert_int_equal(td__permute_choose_xor_k(ext2, lin2, tr2, 2, 4, 4), 2);
    /* 2- and 1-byte elements: several lanes of a stride-1 phase share a
     * bank whatever the register slots do (upstream: None). */
    assert_int_equal(td__permute_choose_xor_k(ext2, lin2, tr2, 2, 2, 4), -1);
    assert_int_equal(td__permute_choose_xor_k(ext2, lin2, tr2, 2, 1, 4), -1);
    /* 8-byte elements: upstream counts the bank of each element's first
     * word, and the linear phase puts lane l at bank 2l % 32, so lanes l
     * and l + 16 collide: None too (checked against TVM 0.27). */
    assert_int_equal(td__permute_choose_xor_k(ext2, lin2, tr2, 2, 8, 4), -1);
}

/* The bank condition, recomputed from its definition for every k and
 * every stride pair of a small family. */
static void test_bank_definition(void **state)
{
    (void)state;
    const int64_t ext[2] = {8, 32};
    for (int64_t s0 = 1; s0 <= 40; s0 += 3) {
        for (int64_t s1 = 1; s1 <= 9; s1 += 2) {
            const int64_t str[2] = {s0, s1};
            for (int k = 0; k <= 3; k++) {
                bool want = true;
                for (int64_t r = 0; r < 8 && want; r++) {
                    unsigned seen = 0;
                    for (int64_t l = 0; l < 32; l++) {
                        int64_t j = r ^ ((l >> (5 - k)) & ((1 << k) - 1));
                        int64_t f = l + 32 * j;
                        int64_t off = (f / 32) * s0 + (f % 32) * s1;
                        unsigned bit = 1u << ((off * 4 / 4) % 32);
                        if (seen & bit)
                            want = false;
                        seen |= bit;
                    }
                }
                assert_int_equal(
                    td__permute_bank_free(ext, str, 2, 4, 8, k), want);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sf_128_u32),
        cmocka_unit_test(test_sf_256_u32),
        cmocka_unit_test(test_identity_no_xor),
        cmocka_unit_test(test_bijection),
        cmocka_unit_test(test_dtype_widths),
        cmocka_unit_test(test_bank_definition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
