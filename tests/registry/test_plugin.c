/*
 * Plugins: td_registry_load_plugin loads examples/plugins/libpairwise.so,
 * whose module then dispatches like a built-in; every way a plugin can be
 * wrong is refused with the path and the reason, and leaves nothing of it
 * registered.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"

#ifndef PLUGIN_DIR
#error PLUGIN_DIR must name the folder of the built example plugins
#endif

static char g_path[4096];

static const char *plugin(const char *name)
{
    snprintf(g_path, sizeof g_path, "%s/lib%s.so", PLUGIN_DIR, name);
    return g_path;
}

static bool has_pred(const td_registry *reg, const char *name)
{
    td_pred_info infos[128];
    size_t n = td_registry_predicates(reg, infos, 128);
    assert_true(n <= 128);
    for (size_t i = 0; i < n; i++)
        if (strcmp(infos[i].name, name) == 0)
            return true;
    return false;
}

static void test_good_plugin(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    const char *path = plugin("pairwise");
    assert_int_equal(td_registry_load_plugin(reg, path, &d), 0);
    td_impl_info impls[32];
    size_t n = td_registry_impls(reg, impls, 32);
    assert_true(n <= 32);
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(impls[i].name, "pairwise") == 0) {
            found = true;
            assert_string_equal(impls[i].origin, path);
            assert_int_equal(impls[i].npreds, 1);
        }
    assert_true(found);
    td_pred_info preds[128];
    n = td_registry_predicates(reg, preds, 128);
    assert_true(n <= 128);
    for (size_t i = 0; i < n; i++)
        if (strcmp(preds[i].name, "src_len_at_most") == 0) {
            assert_string_equal(preds[i].impl, "pairwise");
            assert_int_equal(preds[i].nargs, 1);
            assert_string_equal(preds[i].args[0].name, "limit");
        }

    static const char rules[] =
        "version: 1\n"
        "variants:\n"
        "  - name: pairwise\n"
        "    ops: [sum]\n"
        "    target: cuda\n"
        "    priority: 15\n"
        "    when:\n"
        "      - src_len_at_most: {limit: 16}\n";
    assert_int_equal(td_registry_load_rules_text(reg, "p.yaml", rules,
                                                 strlen(rules), &d),
                     0);
    td_call *call = NULL;
    static const char text[] =
        "op: sum\ntarget: cuda\nscope: thread\n"
        "launch: {threadIdx.x: 1}\n"
        "buffers:\n"
        "  A: {scope: local, dtype: float32, shape: [4]}\n"
        "  B: {scope: local, dtype: float32, shape: [1]}\n"
        "dst: B\nsrc: A\n";
    assert_int_equal(td_call_parse("c.yaml", text, strlen(text), &call, &d), 0);
    td_dispatch_result res;
    assert_int_equal(td_dispatch(reg, call, &res, &d), 0);
    assert_string_equal(res.variant, "pairwise");
    td_ir_free(res.ir);
    td_call_free(call);

    /* The same plugin twice: its names are taken; the second load is
     * refused and the first stays intact. */
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_plugin(reg, path, &d), TD_EEXIST);
    assert_non_null(strstr(d.msg, "is already registered"));
    assert_true(has_pred(reg, "src_len_at_most"));
    td_registry_free(reg);
}

static void expect_refused(const char *name, int code, const char *msg)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    const char *path = name[0] == '/' ? name : plugin(name);
    assert_int_equal(td_registry_load_plugin(reg, path, &d), code);
    assert_int_equal(d.code, code);
    assert_string_equal(d.file, path);
    if (strstr(d.msg, msg) == NULL)
        fail_msg("'%s' lacks '%s'", d.msg, msg);
    /* Nothing of it stays. */
    assert_false(has_pred(reg, "half_registered"));
    assert_true(has_pred(reg, "local_valid"));
    td_registry_free(reg);
}

static void test_bad_plugins(void **state)
{
    (void)state;
    expect_refused("plugin_bad_abi", TD_ESCHEMA, "built for plugin ABI 5, "
                                                 "this library has ABI 4");
    expect_refused("plugin_no_abi", TD_ESCHEMA,
                   "no symbol 'td_plugin_abi_version'");
    expect_refused("plugin_failing_init", TD_EINVAL,
                   "td_plugin_init failed: TD_EINVAL (invalid argument)");
    expect_refused("plugin_taken_name", TD_EEXIST,
                   "predicate 'local_valid' is already registered (by "
                   "built-in)");
    expect_refused("no_such_plugin", TD_EIO, "No such file or directory");
    expect_refused(SRC_ROOT "/rules/rules.yaml", TD_EIO,
                   "not a loadable shared object");
    expect_refused(SRC_ROOT "/rules", TD_EIO, "is a directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_plugin),
        cmocka_unit_test(test_bad_plugins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
