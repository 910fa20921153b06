/*
 * The gemm op in the built-in registry (variants/gemm_ops.c): registered,
 * of kind TD_OP_KIND_GEMM, with one rules entry (mma.m16n8k*); its
 * operand check refuses, before any candidate, what upstream asserts (the
 * shapes of D, A, B, C disagree: upstream's texts) and what it silently
 * ignores (config keys), with the position of the offending operand or
 * key; a call that passes reaches the variant.  gemm_async likewise
 * (its keys and value types, TVM's shape asserts of tcgen05).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "args.h"
#include "op_fixture.h"

/* Row-major register tiles fit no fragment: TVM's text (probe
 * row_major_local_A). */
#define NO_FIT_F16                                                         \
    "no mma instruction fits M=16, N=8, K=16, dtypes=('float16', "          \
    "'float16', 'float32', 'float32')"

/* A warp-scope gemm over buffers A [am, ak], B [bk, bn], C [cm, cn] and D
 * [dm, dn] (whole buffers), then `tail` (more keys). */
static td_call *gemm_call(int am, int ak, int bk, int bn, int cm, int cn,
                          int dm, int dn, const char *tail)
{
    char text[1024];
    snprintf(text, sizeof text,
             "op: gemm\n"                                            /* 1 */
             "target: cuda\n"                                        /* 2 */
             "scope: warp\n"                                         /* 3 */
             "buffers:\n"                                            /* 4 */
             "  A: {scope: local, dtype: float16, shape: [%d, %d]}\n"
             "  B: {scope: local, dtype: float16, shape: [%d, %d]}\n"
             "  C: {scope: local, dtype: float32, shape: [%d, %d]}\n"
             "  D: {scope: local, dtype: float32, shape: [%d, %d]}\n"
             "dst: D\n"                                              /* 9 */
             "a: A\n"                                                /* 10 */
             "b: B\n"                                                /* 11 */
             "c: C\n"                                                /* 12 */
             "%s",
             am, ak, bk, bn, cm, cn, dm, dn, tail);
    return fx_parse_call("g.yaml", text);
}

/* The call passes the op's check and reaches TVM's gemm variant,
 * mma.m16n8k*, whose emitter declines it with `why` (these calls give no
 * fragment layouts), and then tiledispatch's mma_ext.m16n8k*, which
 * declines too: dispatch says no variant matched, and explain has both
 * rows, declined. */
static void expect_declined(const td_registry *reg, const td_call *call,
                            const char *why)
{
    td_diag d;
    td_diag_clear(&d);
    td_dispatch_result res;
    assert_int_equal(td_dispatch(reg, call, &res, &d), TD_ENOMATCH);
    assert_null(res.ir);
    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, call, &ex, &d), 0);
    assert_null(td_explain_selected(ex));
    assert_int_equal(td_explain_nrows(ex), 2);
    assert_string_equal(td_explain_get(ex, 1)->variant, "mma_ext.m16n8k*");
    assert_int_equal(td_explain_get(ex, 1)->status, TD_CAND_DECLINED);
    const td_explain_row *row = td_explain_get(ex, 0);
    assert_string_equal(row->variant, "mma.m16n8k*");
    assert_int_equal(row->status, TD_CAND_DECLINED);
    if (strncmp(row->detail, why, strlen(why)) != 0)
        fail_msg("declined with '%s', expected '%s'", row->detail, why);
    char *text = NULL;
    assert_int_equal(td_explain_format(ex, TD_EXPLAIN_TEXT, &text), 0);
    char script[512];
    td_call_format_script(call, script, sizeof script);
    assert_non_null(strstr(text, script));
    td_free(text);
    td_explain_free(ex);
}

static void test_registered(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    const td_op_desc *op = td_registry_op(reg, "gemm");
    assert_non_null(op);
    assert_int_equal(op->kind, TD_OP_KIND_GEMM);
    assert_non_null(op->check);
    /* Two rules entries serve gemm: TVM's mma.m16n8k*, priority 10, then
     * tiledispatch's mma_ext.m16n8k*, priority 5. */
    td_rule_info all[128];
    size_t n = td_registry_rules(reg, all, 128);
    assert_true(n <= 128);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].op, "gemm") == 0) {
            assert_string_equal(all[i].name,
                                found == 0 ? "mma.m16n8k*" : "mma_ext.m16n8k*");
            assert_string_equal(all[i].target, "cuda");
            assert_int_equal(all[i].priority, found == 0 ? 10 : 5);
            assert_int_equal(all[i].npreds, 2);
            found++;
        }
    assert_int_equal(found, 2);
    td_registry_free(reg);
}

static void test_shapes_agree(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    /* M = 16, N = 8, K = 16. */
    td_call *call = gemm_call(16, 16, 16, 8, 16, 8, 16, 8, "");
    expect_declined(reg, call, NO_FIT_F16);
    td_call_free(call);
    /* Transposed: A stored [K, M] = [16, 32], B stored [N, K] = [8, 16]. */
    call = gemm_call(16, 32, 8, 16, 32, 8, 32, 8,
                     "transpose_A: true\ntranspose_B: true\n");
    expect_declined(reg, call,
                    "no mma instruction fits M=32, N=8, K=16, dtypes=");
    td_call_free(call);
    /* Extent-1 dimensions do not count (upstream's squeeze). */
    char text[] = "op: gemm\ntarget: cuda\nscope: warp\nbuffers:\n"
                  "  A: {scope: local, dtype: float16, shape: [1, 16, 16]}\n"
                  "  B: {scope: local, dtype: float16, shape: [16, 1, 8]}\n"
                  "  D: {scope: local, dtype: float32, shape: [2, 16, 8]}\n"
                  "dst: \"D[1:2, 0:16, 0:8]\"\na: A\nb: B\nc: \"D[0:1, :, :]\"\n";
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_call_parse("u.yaml", text, strlen(text), &call, &d),
                     0);
    expect_declined(reg, call, NO_FIT_F16);
    td_call_free(call);
    /* An operand that is not 2-D is left to the variants (upstream
     * declines it, "gemm mma expects 2D D, ..."): the check passes even
     * though K disagrees, as upstream never reaches its assert. */
    char three[] = "op: gemm\ntarget: cuda\nscope: warp\nbuffers:\n"
                   "  A: {scope: local, dtype: float16, shape: [16, 16]}\n"
                   "  B: {scope: local, dtype: float16, shape: [8, 8]}\n"
                   "  D: {scope: local, dtype: float32, shape: [2, 16, 8]}\n"
                   "dst: D\na: A\nb: B\nc: D\n";
    assert_int_equal(
        td_call_parse("t.yaml", three, strlen(three), &call, &d), 0);
    expect_declined(reg, call,
                    "gemm mma expects 2D D, got non-unit extents [2, 16, 8]");
    td_call_free(call);
    td_registry_free(reg);
}

/* Upstream's asserts, in its order, with its texts, at the operand. */
static void test_shapes_disagree(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    td_call *call = gemm_call(16, 16, 8, 8, 16, 8, 16, 8, "");
    fx_expect_refused(reg, call, 11, 4, "op 'gemm': gemm mma: A K=16 != B K=8");
    td_call_free(call);
    /* transpose_B: B stored [N, K] = [16, 8], so K = 8 against A's 16. */
    call = gemm_call(16, 16, 16, 8, 16, 16, 16, 16, "transpose_B: true\n");
    fx_expect_refused(reg, call, 11, 4, "op 'gemm': gemm mma: A K=16 != B K=8");
    td_call_free(call);
    /* D [16, 16] for M = 16, N = 8. */
    call = gemm_call(16, 16, 16, 8, 16, 8, 16, 16, "");
    fx_expect_refused(reg, call, 9, 6,
                   "op 'gemm': gemm mma: D dims (16, 16) != (M=16, N=8)");
    td_call_free(call);
    /* transpose_A: A stored [K, M] = [16, 32]: M = 32, D has 16. */
    call = gemm_call(16, 32, 16, 8, 32, 8, 16, 8, "transpose_A: true\n");
    fx_expect_refused(reg, call, 9, 6,
                   "op 'gemm': gemm mma: D dims (16, 8) != (M=32, N=8)");
    td_call_free(call);
    /* C last. */
    call = gemm_call(16, 16, 16, 8, 8, 16, 16, 8, "");
    fx_expect_refused(reg, call, 12, 4,
                   "op 'gemm': gemm mma: C dims (8, 16) != (M=16, N=8)");
    td_call_free(call);
    /* All three wrong: K's is first. */
    call = gemm_call(16, 16, 8, 8, 4, 4, 2, 2, "");
    fx_expect_refused(reg, call, 11, 4, "op 'gemm': gemm mma: A K=16 != B K=8");
    td_call_free(call);
    td_registry_free(reg);
}

/* Any config key but allow_tf32 (tiledispatch's) is refused, at the key
 * (upstream ignores it); allow_tf32 takes true or false. */
static void test_config_keys(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    td_call *call = gemm_call(16, 16, 16, 8, 16, 8, 16, 8,
                              "config:\n  vector_bytes: 4\n");
    fx_expect_refused(reg, call, 14, 3,
                   "op 'gemm': unknown config key 'vector_bytes' (known: "
                   "allow_tf32)");
    td_call_free(call);
    /* Before the shapes. */
    call = gemm_call(16, 16, 8, 8, 16, 8, 16, 8, "config: {mma_m: 16}\n");
    fx_expect_refused(reg, call, 13, 10,
                   "op 'gemm': unknown config key 'mma_m' (known: allow_tf32)");
    td_call_free(call);
    call = gemm_call(16, 16, 16, 8, 16, 8, 16, 8, "config: {allow_tf32: 1}\n");
    fx_expect_refused(reg, call, 13, 22,
                   "op 'gemm': allow_tf32 must be true or false");
    td_call_free(call);
    call = gemm_call(16, 16, 16, 8, 16, 8, 16, 8,
                     "config: {allow_tf32: true}\n");
    expect_declined(reg, call, NO_FIT_F16);
    td_call_free(call);
    /* An empty mapping is no key. */
    call = gemm_call(16, 16, 16, 8, 16, 8, 16, 8, "config: {}\n");
    expect_declined(reg, call, NO_FIT_F16);
    td_call_free(call);
    td_registry_free(reg);
}

/* What only a call built by hand can get wrong. */
static void test_hand_built(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    td_call *good = gemm_call(16, 16, 16, 8, 16, 8, 16, 8, "");
    td_call call;

    call = *good;
    call.nsrcs = 2;
    fx_expect_refused(reg, &call, 10, 4,
                   "op 'gemm': expects the sources A, B, C (call-file keys "
                   "a, b, c), got 2 operands");
    call = *good;
    call.srcs[1].kind = TD_OPERAND_LITERAL;
    fx_expect_refused(reg, &call, 11, 4,
                   "op 'gemm': B must be a region, not a literal");
    call = *good;
    call.bias.kind = TD_OPERAND_LITERAL;
    fx_expect_refused(reg, &call, 1, 5, "op 'gemm': takes no extras, got 'bias'");
    call = *good;
    call.axes[0] = 0;
    fx_expect_refused(reg, &call, 1, 5, "op 'gemm': takes no axes");
    call = *good;
    call.accum = true;
    fx_expect_refused(reg, &call, 1, 5,
                   "op 'gemm': takes no accum (beta = 1 accumulates C)");
    call = *good;
    call.beta.kind = TD_OPERAND_NONE;
    fx_expect_refused(reg, &call, 1, 5,
                   "op 'gemm': beta must be a scalar value, not absent");
    /* A config key without positions: at the op. */
    call = *good;
    call.nconfig = 1;
    memset(&call.config[0], 0, sizeof call.config[0]);
    strcpy(call.config[0].key, "k");
    fx_expect_refused(reg, &call, 1, 5,
                   "op 'gemm': unknown config key 'k' (known: allow_tf32)");
    td_call_free(good);
    td_registry_free(reg);
}

/* The shared config check with known keys (what an op with keys of its
 * own, such as gemm_async, passes). */
static void test_known_config(void **state)
{
    (void)state;
    td_call *call = gemm_call(16, 16, 16, 8, 16, 8, 16, 8,
                              "config: {cta_group: 2, mma_m: 1, "
                              "cta_gruop: 2}\n");
    static const char *const known[] = {"cta_group", "mma_m", "mma_n"};
    static const td_op_desc op = {.name = "gemm_async"};
    td_pos where = {0, 0};
    td_reason why;
    why.text[0] = '\0';
    assert_false(td__known_config(call, &op, known, 3, &where, &why));
    assert_string_equal(why.text, "unknown config key 'cta_gruop' (known: "
                                  "cta_group, mma_m, mma_n)");
    assert_int_equal(where.line, 13);
    assert_int_equal(where.col, 34);
    /* All known: passes, position untouched. */
    call->nconfig = 2;
    where = (td_pos){7, 7};
    assert_true(td__known_config(call, &op, known, 3, &where, &why));
    assert_int_equal(where.line, 7);
    td_call_free(call);
}

/* A thread-scope gemm_async, C [m, n] in tensor memory, A [am, ak] and
 * B [bn, bk] in shared memory (128-byte swizzled), then `tail`. */
static td_call *async_call(int m, int n, int am, int ak, int bn, int bk,
                           const char *tail)
{
    char text[1536];
    snprintf(text, sizeof text,
             "op: gemm_async\n"                                      /* 1 */
             "target: cuda\n"                                        /* 2 */
             "arch: sm_100a\n"                                       /* 3 */
             "launch: {threadIdx.x: 128}\n"                          /* 4 */
             "active: {tx: [0, 1]}\n"                                /* 5 */
             "buffers:\n"                                            /* 6 */
             "  C: {scope: tmem, dtype: float32, shape: [%d, %d]}\n"
             "  A: {scope: shared, dtype: float16, shape: [%d, %d], layout: "
             "\"S[%d : 1] + Swizzle(3, 3, 3)\"}\n"
             "  B: {scope: shared, dtype: float16, shape: [%d, %d], layout: "
             "\"S[%d : 1] + Swizzle(3, 3, 3)\"}\n"
             "dst: C\n"                                              /* 10 */
             "a: A\n"                                                /* 11 */
             "b: B\n"                                                /* 12 */
             "%s",
             m, n, am, ak, am * ak, bn, bk, bn * bk, tail);
    return fx_parse_call("g.yaml", text);
}

/* gemm_async: registered with its one rules entry; the op refuses TVM's
 * shape asserts at the operand, unknown keys and values at the key, and
 * what only a call built by hand can get wrong; a good call reaches
 * tcgen05. */
static void test_gemm_async_op(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    const td_op_desc *op = td_registry_op(reg, "gemm_async");
    assert_non_null(op);
    assert_int_equal(op->kind, TD_OP_KIND_GEMM);

    td_call *good = async_call(128, 64, 128, 64, 64, 64, "");
    td_dispatch_result res;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, good, &res, &d), 0);
    assert_string_equal(res.variant, "tcgen05");
    td_ir_free(res.ir);

    td_call *c = async_call(128, 64, 64, 64, 64, 64, "");
    fx_expect_refused(reg, c, 11, 4,
                   "op 'gemm_async': tcgen05: A_M=64 doesn't match M=128 "
                   "from C region");
    td_call_free(c);
    c = async_call(128, 64, 128, 64, 32, 64, "");
    fx_expect_refused(reg, c, 12, 4,
                   "op 'gemm_async': tcgen05: B_N=32 * cta_group=1=32 "
                   "doesn't match N=64");
    td_call_free(c);
    /* transB: B is [K, N] */
    c = async_call(128, 64, 128, 64, 64, 64, "transB: true\n");
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, c, &res, &d), 0);
    td_ir_free(res.ir);
    td_call_free(c);
    c = async_call(128, 64, 128, 64, 64, 64,
                   "config: {cta_group: 2}\n");
    fx_expect_refused(reg, c, 12, 4,
                   "op 'gemm_async': tcgen05: B_N=64 * cta_group=2=128 "
                   "doesn't match N=64");
    td_call_free(c);
    c = async_call(128, 64, 128, 64, 64, 64,
                   "config: {cta_group: true}\n");
    fx_expect_refused(reg, c, 13, 21,
                   "op 'gemm_async': cta_group: expected an integer");
    td_call_free(c);
    c = async_call(128, 64, 128, 64, 64, 64,
                   "config: {is_AB_tf32: 1}\n");
    fx_expect_refused(reg, c, 13, 22,
                   "op 'gemm_async': is_AB_tf32: expected a boolean");
    td_call_free(c);

    /* Built by hand: three sources, a literal B, axes. */
    td_call call = *good;
    call.nsrcs = 3;
    call.srcs[2] = call.srcs[1];
    fx_expect_refused(reg, &call, 11, 4,
                   "op 'gemm_async': expects the sources A, B (call-file "
                   "keys a, b) and, for block scaling, SFA, SFB (sfa, sfb), "
                   "got 3 operands");
    call = *good;
    call.srcs[1].kind = TD_OPERAND_LITERAL;
    fx_expect_refused(reg, &call, 12, 4,
                   "op 'gemm_async': B must be a region, not a literal");
    /* Four sources: the scale factors of block scaling, regions too. */
    call = *good;
    call.nsrcs = 4;
    call.srcs[2] = call.srcs[0];
    call.srcs[3] = call.srcs[1];
    call.srcs[3].kind = TD_OPERAND_LITERAL;
    fx_expect_refused(reg, &call, 12, 4,
                   "op 'gemm_async': SFB must be a region, not a literal");
    call = *good;
    call.naxes = 1;
    call.axes[0] = 0;
    fx_expect_refused(reg, &call, 1, 5, "op 'gemm_async': takes no axes");
    td_call_free(good);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered),
        cmocka_unit_test(test_shapes_agree),
        cmocka_unit_test(test_shapes_disagree),
        cmocka_unit_test(test_config_keys),
        cmocka_unit_test(test_hand_built),
        cmocka_unit_test(test_known_config),
        cmocka_unit_test(test_gemm_async_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
