/*
 * The library as a product: its version matches the project's, and every
 * string it hands out through a char ** comes from the allocator hook and
 * goes back through td_free (tests/common/td_test_alloc.h counts the live
 * blocks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/td_test_alloc.h"
#include "tiledispatch.h"
#include "tiledispatch/td_kernel.h"

#define SEED_CALL SRC_ROOT "/examples/calls/seed_local_sum.yaml"

static void test_version(void **state)
{
    (void)state;
    /* The headers, the library and meson's project version agree. */
    assert_string_equal(TD_VERSION_STRING, PROJECT_VERSION);
    assert_string_equal(td_version(), TD_VERSION_STRING);
    char text[64];
    snprintf(text, sizeof text, "%d.%d.%d", TD_VERSION_MAJOR,
             TD_VERSION_MINOR, TD_VERSION_PATCH);
    assert_string_equal(text, PROJECT_VERSION);
    assert_int_equal(td_version_number(), TD_VERSION_NUMBER);
    assert_int_equal(TD_VERSION_NUMBER,
                     TD_VERSION_MAJOR * 10000 + TD_VERSION_MINOR * 100 +
                         TD_VERSION_PATCH);
    assert_true(TD_VERSION_AT_LEAST(TD_VERSION_MAJOR, TD_VERSION_MINOR,
                                    TD_VERSION_PATCH));
    assert_false(TD_VERSION_AT_LEAST(TD_VERSION_MAJOR, TD_VERSION_MINOR,
                                     TD_VERSION_PATCH + 1));
    assert_true(TD_VERSION_AT_LEAST(0, 0, 0));
}

static void test_free_null(void **state)
{
    (void)state;
    td_free(NULL);
    alloc_install();
    td_free(NULL);
    assert_int_equal(g_ca.live, 0);
    td_set_allocator(NULL);
}

/* Everything below runs under the counting allocator, from the registry
 * to the last td_free, so each returned string shows up as one live block
 * until td_free gives it back. */
static void test_returned_strings_use_the_hook(void **state)
{
    (void)state;
    alloc_install();
    td_registry *reg = NULL;
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    assert_int_equal(td_call_load_file(SEED_CALL, &call, &d), 0);
    td_dispatch_result res;
    assert_int_equal(td_dispatch(reg, call, &res, &d), 0);
    assert_string_equal(res.variant, "local");
    long live0 = g_ca.live;
    assert_true(live0 > 0);

    /* td_ir_print: body and prelude, one block each. */
    char *body = NULL, *prelude = NULL;
    assert_int_equal(td_ir_print(res.ir, TD_LANG_CUDA, 0, &body, &prelude),
                     0);
    assert_non_null(strstr(body, "B_local_ptr[0]"));
    assert_string_equal(prelude, "");
    assert_int_equal(g_ca.live, live0 + 2);
    td_free(body);
    assert_int_equal(g_ca.live, live0 + 1);
    td_free(prelude);
    assert_int_equal(g_ca.live, live0);

    /* When the hook fails, the call fails and hands out nothing. */
    long n;
    for (n = 1; n < 100000; n++) {
        alloc_arm(n);
        int rc = td_ir_print(res.ir, TD_LANG_TIRX, 0, &body, &prelude);
        bool failed = g_ca.failed;
        alloc_arm(0);
        if (!failed) {
            assert_int_equal(rc, 0);
            td_free(body);
            td_free(prelude);
            break;
        }
        assert_int_equal(rc, TD_ENOMEM);
        assert_null(body);
        assert_null(prelude);
        assert_int_equal(g_ca.live, live0);
    }
    assert_true(n > 2); /* at least the body and the prelude failed */
    assert_int_equal(g_ca.live, live0);

    /* td_explain_format, every style. */
    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, call, &ex, &d), 0);
    long live1 = g_ca.live;
    static const td_explain_style styles[] = {TD_EXPLAIN_TEXT,
                                              TD_EXPLAIN_JSON, TD_EXPLAIN_TVM};
    for (size_t k = 0; k < sizeof styles / sizeof styles[0]; k++) {
        char *text = NULL;
        assert_int_equal(td_explain_format(ex, styles[k], &text), 0);
        assert_non_null(strstr(text, "local"));
        assert_int_equal(g_ca.live, live1 + 1);
        td_free(text);
        assert_int_equal(g_ca.live, live1);
    }
    td_explain_free(ex);
    assert_int_equal(g_ca.live, live0);

    /* td_kernel_program (the program generator of the command line). */
    char *program = NULL;
    assert_int_equal(td_kernel_program(reg, call, &program, &d), 0);
    assert_non_null(strstr(program, "__global__"));
    assert_int_equal(g_ca.live, live0 + 1);
    td_free(program);
    assert_int_equal(g_ca.live, live0);

    td_ir_free(res.ir);
    td_call_free(call);
    td_registry_free(reg);
    assert_int_equal(g_ca.live, 0);
    td_set_allocator(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_returned_strings_use_the_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
