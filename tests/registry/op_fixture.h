/*
 * What the op tests of the built-in registry share (test_default.c,
 * test_gemm_op.c, test_permute_op.c): the registry with the compiled-in
 * default rules, a call parsed from text, and the check that dispatch and
 * explain both refuse a call with one diagnostic.  Header-only: include it
 * after <cmocka.h> and "tiledispatch.h".
 */
#ifndef TD_TESTS_REGISTRY_OP_FIXTURE_H
#define TD_TESTS_REGISTRY_OP_FIXTURE_H

#include <stdio.h>
#include <string.h>

/* The built-in registry with the default rules (fails the test when they
 * do not load). */
static inline td_registry *fx_default_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    assert_non_null(reg);
    td_diag d;
    td_diag_clear(&d);
    int rc = td_registry_load_default_rules(reg, &d);
    if (rc != 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    return reg;
}

/* The call of `text`, loaded as the file `file` (fails the test when it
 * does not load). */
static inline td_call *fx_parse_call(const char *file, const char *text)
{
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_call_parse(file, text, strlen(text), &call, &d);
    if (rc != 0)
        fail_msg("%d:%d: %s", d.line, d.col, d.msg);
    return call;
}

/* Dispatch and explain both refuse the call with TD_ESCHEMA and this
 * diagnostic (the call's file, line, column and message). */
static inline void fx_expect_refused(const td_registry *reg,
                                     const td_call *call, int line, int col,
                                     const char *msg)
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
        assert_string_equal(d.file, call->file);
        assert_int_equal(d.line, line);
        assert_int_equal(d.col, col);
        assert_string_equal(d.msg, msg);
    }
}

#endif
