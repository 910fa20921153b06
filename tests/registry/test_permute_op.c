/*
 * The permute_layout op in the built-in registry (variants/permute_ops.c):
 * registered, of kind TD_OP_KIND_PERMUTE; its operand check refuses, before
 * any candidate, what no variant could lower (a second source, a scalar
 * source, config keys, which upstream silently ignores), with the position
 * of the offending operand or key; the call script reads as upstream's
 * Tx.warp.permute_layout(dst, src).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"

static td_registry *default_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    int rc = td_registry_load_default_rules(reg, &d);
    if (rc != 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    return reg;
}

/* A warp-scope permute of the 4x32 uint32 tile A (row-major) into B
 * (transposed within the tile), then `tail` (more keys). */
static td_call *permute_call(const char *tail)
{
    char text[1024];
    snprintf(text, sizeof text,
             "op: permute_layout\n"                                  /* 1 */
             "target: cuda\n"                                        /* 2 */
             "scope: warp\n"                                         /* 3 */
             "launch: {threadIdx.x: 32}\n"                           /* 4 */
             "buffers:\n"                                            /* 5 */
             "  A: {scope: shared, dtype: uint32, shape: [4, 32], "
             "layout: \"S[(4, 32):(32, 1)]\"}\n"                     /* 6 */
             "  B: {scope: shared, dtype: uint32, shape: [4, 32], "
             "layout: \"S[(4, 32):(1, 4)]\"}\n"                      /* 7 */
             "dst: B\n"                                              /* 8 */
             "%s",
             tail);
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_call_parse("p.yaml", text, strlen(text), &call, &d);
    if (rc != 0)
        fail_msg("%d:%d: %s", d.line, d.col, d.msg);
    return call;
}

/* Dispatch and explain both refuse the call with this diagnostic. */
static void expect_refused(const td_registry *reg, const td_call *call,
                           int line, int col, const char *msg)
{
    for (int i = 0; i < 2; i++) {
        td_diag d;
        td_diag_clear(&d);
        int rc;
        if (i == 0) {
            td_dispatch_result res;
            rc = td_dispatch(reg, call, &res, &d);
            assert_null(res.ir);
        } else {
            td_explain *ex = (td_explain *)1;
            rc = td_explain_call(reg, call, &ex, &d);
            assert_null(ex);
        }
        if (rc != TD_ESCHEMA || d.line != line || d.col != col ||
            strcmp(d.msg, msg) != 0)
            print_error("got %s %d:%d: %s\n", td_err_name(rc), d.line,
                        d.col, d.msg);
        assert_int_equal(rc, TD_ESCHEMA);
        assert_int_equal(d.line, line);
        assert_int_equal(d.col, col);
        assert_string_equal(d.msg, msg);
    }
}

static void test_registered(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    const td_op_desc *op = td_registry_op(reg, "permute_layout");
    assert_non_null(op);
    assert_int_equal(op->kind, TD_OP_KIND_PERMUTE);
    assert_non_null(op->check);
    td_registry_free(reg);
}

static void test_script(void **state)
{
    (void)state;
    td_call *call = permute_call("src: \"A[0:4, 0:32]\"\n");
    char script[256];
    td_call_format_script(call, script, sizeof script);
    assert_string_equal(script,
                        "Tx.warp.permute_layout(B[0:4, 0:32], A[0:4, 0:32])");
    td_call_free(call);
}

static void test_refused(void **state)
{
    (void)state;
    td_registry *reg = default_registry();
    td_call *call = permute_call("src: A\nconfig: {swizzle: 1}\n");
    expect_refused(reg, call, 10, 10,
                   "op 'permute_layout': unknown config key 'swizzle' "
                   "(permute_layout takes no config keys)");
    td_call_free(call);
    call = permute_call("srcs: [A, A]\n");
    expect_refused(reg, call, 9, 11,
                   "op 'permute_layout': expects one source region, "
                   "got 2 operands");
    td_call_free(call);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered),
        cmocka_unit_test(test_script),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
