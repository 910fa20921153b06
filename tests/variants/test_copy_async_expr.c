/*
 * Unit tests of copy_async's expression config values and scalar region
 * starts: what the loader makes of them (the expression's tree, through
 * td__cexpr_format; a buffer element's indices), how ldgsts turns them
 * into its index and guard (the CUDA text), the IR forms of an element's
 * index and of an expression, and where ldgsts refuses them with a
 * reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "common.h"
#include "model.h"

#define HEAD                                                                   \
    "op: copy_async\ntarget: cuda\narch: sm_90a\n"                             \
    "scalars: {k: {range: [0, 8]}, u: {dtype: uint8}}\n"                       \
    "buffers:\n"                                                               \
    "  A: {scope: global, dtype: float16, shape: [1024, 64]}\n"                \
    "  S: {scope: shared, dtype: float16, shape: [128, 64]}\n"                 \
    "  mbar: {scope: shared, dtype: uint64, shape: [2, 4]}\n"                  \
    "dst: S\n"

static td_call *load(const char *tail)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", HEAD, tail);
    td_call *c = NULL;
    td_diag d;
    td_diag_clear(&d);
    if (td_call_parse("t.yaml", text, strlen(text), &c, &d) != 0)
        fail_msg("did not load: %s", d.msg);
    return c;
}

/* The tree of config `key` as td__cexpr_format writes it from `node`
 * (-1: the root). */
static void expect_tree(const td_call *c, const char *key, int node,
                        const char *want)
{
    const td_config_entry *e = td_call_config(c, key);
    assert_non_null(e);
    char buf[256];
    td__cexpr_format(c, &e->expr, node < 0 ? e->expr.n - 1 : node, buf,
                     sizeof buf);
    assert_string_equal(buf, want);
}

static void test_precedence(void **state)
{
    (void)state;
    td_call *c = load("launch: {cluster: [2, 1, 1]}\n"
                      "src: \"A[0:128, 0:64]\"\n"
                      "config: {predicate: \"tx < 16 && k % 4 + 1 * 2 >= "
                      "-laneid || !(warpid == 3)\", cta_mask: 3, "
                      "remote_cta_id: \"1 - cbx - u // 2\"}\n");
    const td_config_entry *e = td_call_config(c, "predicate");
    assert_int_equal(e->kind, TD_VALUE_EXPR);
    expect_tree(c, "predicate", -1,
                "(((tx < 16) && (((k % 4) + (1 * 2)) >= -(laneid))) || "
                "!((warpid == 3)))");
    expect_tree(c, "remote_cta_id", -1, "((1 - cbx) - (u // 2))");
    e = td_call_config(c, "cta_mask");
    assert_int_equal(e->kind, TD_VALUE_INT);
    assert_int_equal(e->i, 3);
    free(c);
    /* Every level associates to the left; "//" is one token; a unary
     * minus after a binary one. */
    c = load("src: \"A[0:128, 0:64]\"\n"
             "config: {predicate: \"k - 1 - 2 == 8 // 2 * 3 % 5 && 1 && "
             "k--1 > 0\"}\n");
    expect_tree(c, "predicate", -1,
                "(((((k - 1) - 2) == (((8 // 2) * 3) % 5)) && 1) && "
                "((k - -(1)) > 0))");
    free(c);
}

static void test_bare_names(void **state)
{
    (void)state;
    /* An undeclared bare name stays a string (an int parameter, as
     * ldgsts always read it); a declared one or an id is an expression;
     * a buffer is its first element. */
    td_call *c = load("src: A\nconfig: {predicate: p, remote_cta_id: k, "
                      "cta_mask: tx, mbar: mbar}\n");
    assert_int_equal(td_call_config(c, "predicate")->kind, TD_VALUE_STRING);
    assert_string_equal(td_call_config(c, "predicate")->s, "p");
    assert_int_equal(td_call_config(c, "remote_cta_id")->kind, TD_VALUE_EXPR);
    assert_int_equal(td_call_config(c, "cta_mask")->kind, TD_VALUE_EXPR);
    const td_config_entry *m = td_call_config(c, "mbar");
    assert_int_equal(m->kind, TD_VALUE_ELEM);
    assert_int_equal(m->elem_buffer, 2);
    expect_tree(c, "mbar", m->elem_index[0], "0");
    expect_tree(c, "mbar", m->elem_index[1], "0");
    free(c);
    /* Other keys keep strings as they are. */
    c = load("src: A\nconfig: {fill_mode: \"tx < 1\"}\n");
    assert_int_equal(td_call_config(c, "fill_mode")->kind, TD_VALUE_STRING);
    free(c);
}

static void test_element(void **state)
{
    (void)state;
    td_call *c = load("src: A\nconfig: {mbar: \"mbar[k // 4, (k + 1) % 4]\"}\n");
    const td_config_entry *m = td_call_config(c, "mbar");
    assert_int_equal(m->kind, TD_VALUE_ELEM);
    expect_tree(c, "mbar", m->elem_index[0], "(k // 4)");
    expect_tree(c, "mbar", m->elem_index[1], "((k + 1) % 4)");
    char line[512];
    td_call_format_script(c, line, sizeof line);
    assert_non_null(strstr(line, "mbar=T.address_of(mbar[k // 4, (k + 1) % 4])"));
    free(c);
}

/* Dispatches with the built-in rules; returns the CUDA text (td_free) or
 * NULL with the ldgsts row's message in why. */
static char *emit(const td_call *c, char *why, size_t cap)
{
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    char *cuda = NULL;
    if (td_dispatch(reg, c, &res, &d) == 0) {
        assert_int_equal(td_ir_print(res.ir, TD_LANG_CUDA, 0, &cuda, NULL), 0);
        td_ir_free(res.ir);
    } else {
        td_explain *ex = NULL;
        if (td_explain_call(reg, c, &ex, &d) != 0)
            fail_msg("explain failed: %s", d.msg);
        const td_explain_row *r = td_explain_get(ex, 0);
        snprintf(why, cap, "%s", r->message);
        td_explain_free(ex);
    }
    td_registry_free(reg);
    return cuda;
}

static void test_ldgsts_index_and_guard(void **state)
{
    (void)state;
    char why[512] = "";
    td_call *c = load("scope: cta\nlaunch: {threadIdx.x: 128}\n"
                      "src: \"A[k * 128:k * 128 + 128, 0:64]\"\n"
                      "config: {predicate: \"k > 2 && laneid != 1\"}\n");
    char *cuda = emit(c, why, sizeof why);
    if (cuda == NULL)
        fail_msg("ldgsts declined: %s", why);
    assert_non_null(strstr(cuda, "int g_lin = k * 8192 + f * 1024"));
    assert_non_null(strstr(cuda, "2 < k && (int)threadIdx.x % 32 != 1)"));
    td_free(cuda);
    free(c);
}

static void test_ldgsts_refusals(void **state)
{
    (void)state;
    char why[512] = "";
    td_call *c = load("scope: thread\nlaunch: {cluster: [2, 1, 1]}\n"
                      "src: \"A[0:128, 0:64]\"\n"
                      "config: {predicate: \"cbx == 0\"}\n");
    assert_null(emit(c, why, sizeof why));
    assert_non_null(strstr(why, "ldgsts: predicate uses the cluster id cbx"));
    free(c);
    c = load("scope: thread\nsrc: \"A[0:128, 0:64]\"\nconfig: {predicate: \"mbar[0, 1]\"}\n");
    assert_null(emit(c, why, sizeof why));
    assert_non_null(strstr(why, "not a buffer element"));
    free(c);
    c = load("scope: thread\nlaunch: {cluster: [2, 1, 1]}\n"
             "src: \"A[0:128, 0:64]\"\nconfig: {remote_cta_id: \"1 - cbx\"}\n");
    assert_null(emit(c, why, sizeof why));
    assert_non_null(strstr(why, "unknown config key 'remote_cta_id'"));
    free(c);
}

/* One comparison at most, and no shifts: the loader says where. */
static void test_expr_refusals(void **state)
{
    (void)state;
    const char *bad[][2] = {
        {"tx < 1 < 2", "col 29"},
        {"k << 1", "col 24"},
        {"k >> 1", "col 24"},
        {"k +", "col 25"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "%ssrc: \"A[0:128, 0:64]\"\nconfig: {predicate: \"%s\"}\n",
                 HEAD, bad[i][0]);
        td_call *c = NULL;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_call_parse("t.yaml", text, strlen(text), &c, &d);
        if (rc == 0)
            fail_msg("'%s' loaded", bad[i][0]);
        char where[32];
        snprintf(where, sizeof where, "col %d", d.col);
        if (strcmp(where, bad[i][1]) != 0)
            fail_msg("'%s': %s at %s, want %s", bad[i][0], d.msg, where,
                     bad[i][1]);
    }
}

/* The element's flat index and the expressions as the IR prints them. */
static void test_ir_forms(void **state)
{
    (void)state;
    td_call *c = load("launch: {cluster: [2, 1, 1]}\n"
                      "src: A\nconfig: {mbar: \"mbar[k // 4, (k + 1) % 4]\", "
                      "remote_cta_id: \"1 - cbx\", cta_mask: \"-u + bx\"}\n");
    td_ir *ir = td_ir_new();
    assert_non_null(ir);
    td_reason why;
    int buf = -1;
    td_expr *x = td__config_elem_index(ir, c, td_call_config(c, "mbar"), &buf,
                                       &why);
    assert_non_null(x);
    assert_int_equal(buf, 2);
    td_ir_eval(ir, x);
    x = td__config_expr(ir, c, td_call_config(c, "cta_mask"), -1, &why);
    assert_non_null(x);
    td_ir_eval(ir, x);
    /* The cluster id: %cluster_ctaid.x through its helper. */
    x = td__config_expr(ir, c, td_call_config(c, "remote_cta_id"), -1, &why);
    assert_non_null(x);
    td_ir_eval(ir, x);
    /* Without a cluster launch (the loader refuses such a call; a call
     * built by hand is refused here too). */
    c->cluster[0] = 0;
    assert_null(td__config_expr(ir, c, td_call_config(c, "remote_cta_id"), -1,
                                &why));
    assert_non_null(strstr(why.text, "uses cbx without a cluster launch"));
    c->cluster[0] = 2;
    assert_null(td__config_elem_index(ir, c, td_call_config(c, "cta_mask"),
                                      &buf, &why));
    char *cuda = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &cuda, NULL), 0);
    assert_non_null(strstr(cuda, "k / 4 * 4 + (k + 1) % 4;"));
    assert_non_null(strstr(cuda, "0 - (int)u + (int)blockIdx.x;"));
    assert_non_null(strstr(cuda, "1 - td_cluster_ctaid_x();"));
    td_free(cuda);
    td_ir_free(ir);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_expr_refusals),
        cmocka_unit_test(test_bare_names),
        cmocka_unit_test(test_element),
        cmocka_unit_test(test_ldgsts_index_and_guard),
        cmocka_unit_test(test_ldgsts_refusals),
        cmocka_unit_test(test_ir_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
