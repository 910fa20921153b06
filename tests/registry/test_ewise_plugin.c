/*
 * The elementwise `smem` variant as a plugin (ewise_plugin.c): loaded into
 * a registry created empty, with a rules entry of its own, it dispatches
 * and emits what the built-in module does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"

#ifndef PLUGIN_PATH
#error PLUGIN_PATH must name the built plugin
#endif

static const char call_text[] =
    "op: add\n"
    "target: cuda\n"
    "arch: sm_100a\n"
    "scope: cta\n"
    "launch: {threadIdx.x: 128}\n"
    "buffers:\n"
    "  A: {scope: shared, dtype: float32, shape: [16, 64]}\n"
    "  B: {scope: shared, dtype: float32, shape: [1, 64]}\n"
    "  C: {scope: shared, dtype: float32, shape: [16, 64]}\n"
    "dst: C\n"
    "srcs: [A, B]\n";

static char *emit(td_registry *reg, const td_call *c, const char *want)
{
    td_dispatch_result res;
    td_diag d;
    td_diag_clear(&d);
    if (td_dispatch(reg, c, &res, &d) != 0)
        fail_msg("dispatch: %s", d.msg);
    assert_string_equal(res.variant, want);
    char *body = NULL, *prelude = NULL;
    assert_int_equal(td_ir_print(res.ir, TD_LANG_CUDA, 0, &body, &prelude), 0);
    size_t n = strlen(body) + strlen(prelude) + 1;
    char *all = malloc(n);
    assert_non_null(all);
    snprintf(all, n, "%s%s", prelude, body);
    td_free(body);
    td_free(prelude);
    td_ir_free(res.ir);
    return all;
}

static void test_plugin_dispatch(void **state)
{
    (void)state;
    td_diag d;
    td_diag_clear(&d);
    td_call *c = NULL;
    assert_int_equal(td_call_parse("call.yaml", call_text, strlen(call_text),
                                   &c, &d), 0);

    td_registry *reg = NULL;
    assert_int_equal(td_registry_new_empty(&reg), 0);
    if (td_registry_load_plugin(reg, PLUGIN_PATH, &d) != 0)
        fail_msg("plugin: %s", d.msg);
    static const char rules[] =
        "version: 1\n"
        "variants:\n"
        "  - name: smem\n"
        "    ops: [add, mul, exp]\n"
        "    target: cuda\n"
        "    priority: 10\n"
        "    when:\n"
        "      - ewise_smem_valid\n";
    if (td_registry_load_rules_text(reg, "plugin-rules.yaml", rules,
                                    strlen(rules), &d) != 0)
        fail_msg("rules: %s", d.msg);
    char *got = emit(reg, c, "smem");

    td_registry *builtin = NULL;
    assert_int_equal(td_registry_new(&builtin), 0);
    assert_int_equal(td_registry_load_default_rules(builtin, &d), 0);
    char *want = emit(builtin, c, "smem");
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "add.rn.ftz.f32x2"));

    /* the op check comes with the plugin's ops */
    c->nsrcs = 1;
    assert_int_equal(td_dispatch(reg, c, &(td_dispatch_result){0}, &d),
                     TD_ESCHEMA);
    assert_non_null(strstr(d.msg, "add takes 2 sources, got 1"));

    free(got);
    free(want);
    td_registry_free(builtin);
    td_registry_free(reg);
    td_call_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plugin_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
