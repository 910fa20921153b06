/*
 * The op's operand check, which dispatch and explain run before any
 * candidate: a fake elementwise op with its own check, the default check
 * of reductions (one region source, no extras), and how both report a
 * failure (TD_ESCHEMA, "op 'OP': REASON" at the check's position).
 */
#include "fake.h"

/* ---- a fake elementwise op ---------------------------------------------- */

/* How many times the check ran. */
static int check_calls;

/* What the check does, by the op's data: wants exactly `nsrcs` sources,
 * all regions; on failure points at the first surplus or non-region
 * operand, or (where == LEAVE) leaves the position alone, or (ZERO) sets
 * an unknown one; SILENT fails without a reason. */
typedef struct ew_rule {
    int nsrcs;
    enum { POINT, LEAVE, ZERO, SILENT } where;
} ew_rule;

static bool ew_check(const td_call *call, const td_op_desc *op, td_pos *where,
                     td_reason *why)
{
    const ew_rule *r = op->data;
    check_calls++;
    if (r->where == SILENT)
        return false;
    if (call->nsrcs != r->nsrcs) {
        if (r->where == POINT && call->nsrcs > r->nsrcs)
            *where = call->srcs[r->nsrcs].pos;
        else if (r->where == POINT)
            *where = call->pos_srcs;
        else if (r->where == ZERO)
            *where = (td_pos){0, 0};
        td_reason_set(why, "expects %d sources, got %d", r->nsrcs,
                      call->nsrcs);
        return false;
    }
    for (int i = 0; i < call->nsrcs; i++)
        if (call->srcs[i].kind != TD_OPERAND_REGION) {
            if (r->where == POINT)
                *where = call->srcs[i].pos;
            td_reason_set(why, "srcs[%d] must be a region", i);
            return false;
        }
    return true;
}

static const ew_rule rule_point = {2, POINT};
static const ew_rule rule_leave = {2, LEAVE};
static const ew_rule rule_zero = {2, ZERO};
static const ew_rule rule_silent = {2, SILENT};

static const char rules[] =
    "version: 1\n"
    "variants:\n"
    "  - name: counted\n"
    "    impl: shared\n"
    "    ops: [add, mul, sub, div, exp, sum]\n"
    "    target: cuda\n"
    "    priority: 10\n"
    "    when: [count]\n";

static td_registry *setup(void)
{
    td_registry *reg = fake_registry();
    assert_non_null(reg);
    static const td_op_desc ew_ops[] = {
        {.name = "add", .kind = TD_OP_KIND_ELEMENTWISE, .check = ew_check,
         .data = &rule_point},
        {.name = "mul", .kind = TD_OP_KIND_ELEMENTWISE, .check = ew_check,
         .data = &rule_leave},
        {.name = "sub", .kind = TD_OP_KIND_ELEMENTWISE, .check = ew_check,
         .data = &rule_zero},
        {.name = "div", .kind = TD_OP_KIND_ELEMENTWISE, .check = ew_check,
         .data = &rule_silent},
        /* No check: an elementwise op is then not checked. */
        {.name = "exp", .kind = TD_OP_KIND_ELEMENTWISE},
    };
    for (size_t i = 0; i < NELEMS(ew_ops); i++)
        assert_int_equal(td_register_op(reg, &ew_ops[i]), 0);
    td_diag d;
    td_diag_clear(&d);
    int rc = td_registry_load_rules_text(reg, "r.yaml", rules,
                                         strlen(rules), &d);
    if (rc != 0)
        fail_msg("%d:%d: %s", d.line, d.col, d.msg);
    return reg;
}

#define HEAD(op)                                                               \
    "op: " op "\n"                                                             \
    "target: cuda\n"                                                           \
    "buffers:\n"                                                               \
    "  A: {scope: local, dtype: float32, shape: [4]}\n"                        \
    "  B: {scope: local, dtype: float32, shape: [4]}\n"                        \
    "dst: B\n"

static td_call *load(const char *text)
{
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_call_parse("c.yaml", text, strlen(text), &call, &d);
    if (rc != 0)
        fail_msg("%d:%d: %s", d.line, d.col, d.msg);
    return call;
}

/* Dispatch and explain both refuse the call with the same diagnostic
 * before any candidate (the counting predicate) runs. */
static void expect_refused(const td_registry *reg, const td_call *call,
                           int line, int col, const char *msg)
{
    td_diag d1, d2;
    td_diag_clear(&d1);
    td_diag_clear(&d2);
    td_dispatch_result res;
    fake_count = 0;
    check_calls = 0;
    assert_int_equal(td_dispatch(reg, call, &res, &d1), TD_ESCHEMA);
    assert_null(res.ir);
    td_explain *ex = (td_explain *)1;
    assert_int_equal(td_explain_call(reg, call, &ex, &d2), TD_ESCHEMA);
    assert_null(ex);
    assert_int_equal(fake_count, 0);
    for (int i = 0; i < 2; i++) {
        const td_diag *d = i ? &d2 : &d1;
        if (d->line != line || d->col != col || strcmp(d->msg, msg) != 0)
            print_error("got %d:%d: %s\n", d->line, d->col, d->msg);
        assert_int_equal(d->code, TD_ESCHEMA);
        assert_string_equal(d->file, "c.yaml");
        assert_int_equal(d->line, line);
        assert_int_equal(d->col, col);
        assert_string_equal(d->msg, msg);
    }
}

/* Loads a call, expects it refused (expect_refused) and frees it. */
static void refused(const td_registry *reg, const char *text, int line,
                    int col, const char *msg)
{
    td_call *call = load(text);
    expect_refused(reg, call, line, col, msg);
    td_call_free(call);
}

static void expect_selected(const td_registry *reg, const td_call *call)
{
    td_diag d;
    td_diag_clear(&d);
    td_dispatch_result res;
    fake_count = 0;
    assert_int_equal(td_dispatch(reg, call, &res, &d), 0);
    assert_string_equal(res.variant, "counted");
    td_ir_free(res.ir);
    assert_int_equal(fake_count, 1);
    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, call, &ex, &d), 0);
    assert_non_null(td_explain_selected(ex));
    td_explain_free(ex);
}

/* ---- tests -------------------------------------------------------------- */

static void test_elementwise_check(void **state)
{
    (void)state;
    td_registry *reg = setup();

    /* Three sources for two: the check points at the third. */
    td_call *call = load(HEAD("add") "srcs: [A, B, A]\n");
    expect_refused(reg, call, 7, 14, "op 'add': expects 2 sources, got 3");
    /* The check ran once per dispatch and once per explain. */
    assert_int_equal(check_calls, 2);
    td_call_free(call);

    /* A literal where the check wants a region. */
    refused(reg, HEAD("add") "srcs: [A, {value: 2, dtype: float32}]\n",
            7, 11, "op 'add': srcs[1] must be a region");

    /* Too few: at the srcs value. */
    refused(reg, HEAD("add") "srcs: [A]\n",
            7, 7, "op 'add': expects 2 sources, got 1");

    /* A check that leaves the position: the op's. */
    refused(reg, HEAD("mul") "srcs: [A]\n",
            1, 5, "op 'mul': expects 2 sources, got 1");

    /* A check that sets an unknown position: the op's too. */
    refused(reg, HEAD("sub") "srcs: [A]\n",
            1, 5, "op 'sub': expects 2 sources, got 1");

    /* A check without a reason. */
    refused(reg, HEAD("div") "srcs: [A, B]\n",
            1, 5, "op 'div': the call's operands do not fit the op");

    /* The check passes: the candidates run. */
    call = load(HEAD("add") "srcs: [A, B]\n");
    check_calls = 0;
    expect_selected(reg, call);
    assert_int_equal(check_calls, 2);
    td_call_free(call);

    /* An elementwise op without a check is not checked: no source,
     * extras, anything. */
    call = load(HEAD("exp") "extras: {bias: 1, scale: {scalar: s, dtype: "
                            "float32}}\n");
    expect_selected(reg, call);
    td_call_free(call);

    /* The explain table prints the operand form for elementwise ops. */
    call = load(HEAD("add") "srcs: [A, \"B[1:3]\"]\n");
    td_explain *ex = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_explain_call(reg, call, &ex, &d), 0);
    char *text = NULL;
    assert_int_equal(td_explain_format(ex, TD_EXPLAIN_TEXT, &text), 0);
    assert_non_null(strstr(text, "call: Tx.add(B[0:4], A[0:4], B[1:3])\n"));
    td_free(text);
    td_explain_free(ex);
    td_call_free(call);

    td_registry_free(reg);
}

static void test_reduction_default_check(void **state)
{
    (void)state;
    td_registry *reg = setup();

    /* One region source, written either way: accepted. */
    td_call *call = load(HEAD("sum") "src: A\n");
    expect_selected(reg, call);
    td_call_free(call);
    call = load(HEAD("sum") "srcs: [A]\n");
    expect_selected(reg, call);
    /* explain prints a reduction's axes and accum however it was
     * written. */
    td_explain *ex = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_explain_call(reg, call, &ex, &d), 0);
    char *text = NULL;
    assert_int_equal(td_explain_format(ex, TD_EXPLAIN_TEXT, &text), 0);
    assert_non_null(
        strstr(text, "call: Tx.sum(B[0:4], A[0:4], axes=[-1], accum=False)\n"));
    td_free(text);
    td_explain_free(ex);
    td_call_free(call);

    /* A call built by hand with only its src region (fake_call). */
    td_call hb;
    fake_call(&hb, "sum", TD_SCOPE_THREAD);
    expect_selected(reg, &hb);

    /* Two sources: at the second. */
    refused(reg, HEAD("sum") "srcs: [A, B]\n",
            7, 11, "op 'sum': expects one source region, got 2 operands");

    /* None: at the op when nothing was written, at srcs when it is []. */
    refused(reg, HEAD("sum"),
            1, 5, "op 'sum': expects one source region, got none");
    refused(reg, HEAD("sum") "srcs: []\n",
            7, 7, "op 'sum': expects one source region, got none");

    /* A literal or a named scalar: at it. */
    refused(reg, HEAD("sum") "srcs: [1.5]\n",
            7, 8, "op 'sum': expects a source region, not a literal");
    refused(reg, HEAD("sum") "srcs:\n  - {scalar: s, dtype: float32}\n",
            8, 5, "op 'sum': expects a source region, not a named scalar");

    /* Extras: at the first one given. */
    refused(reg, HEAD("sum") "src: A\nextras: {scale: 2}\n",
            8, 17, "op 'sum': takes no extras, got 'scale'");
    refused(reg, HEAD("sum") "src: A\nextras:\n  scale: 2\n  bias: B\n",
            10, 9, "op 'sum': takes no extras, got 'bias'");

    /* Hand-built extras without a position: at the extras value, else at
     * the op. */
    fake_call(&hb, "sum", TD_SCOPE_THREAD);
    hb.bias.kind = TD_OPERAND_LITERAL;
    hb.bias.dtype = TD_F32;
    hb.pos_extras = (td_pos){8, 9};
    td_diag_clear(&d);
    td_dispatch_result res;
    assert_int_equal(td_dispatch(reg, &hb, &res, &d), TD_ESCHEMA);
    assert_string_equal(d.file, "call.yaml");
    assert_int_equal(d.line, 8);
    assert_int_equal(d.col, 9);
    hb.pos_extras = (td_pos){0, 0};
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, &hb, &res, &d), TD_ESCHEMA);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 5);

    /* The unknown-op error still comes first. */
    call = load(HEAD("nope") "srcs: [A, B]\n");
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, call, &res, &d), TD_ENOENT);
    assert_string_equal(d.msg, "unknown op 'nope' (expected one of: add, div, "
                               "exp, max, min, mul, sub, sum)");
    td_call_free(call);

    td_registry_free(reg);
}

/* A malformed count (a hand-built call) is refused, not read past. */
static void test_hand_built_counts(void **state)
{
    (void)state;
    td_registry *reg = setup();
    td_call hb;
    fake_call(&hb, "sum", TD_SCOPE_THREAD);
    hb.nsrcs = TD_MAX_SRCS + 5;
    td_diag d;
    td_diag_clear(&d);
    td_dispatch_result res;
    assert_int_equal(td_dispatch(reg, &hb, &res, &d), TD_ESCHEMA);
    assert_int_equal(d.line, 2);
    hb.nsrcs = -3;
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, &hb, &res, &d), TD_ESCHEMA);
    td_registry_free(reg);
}

/* A confined dtype (td_dtype_is_confined) in a call built by hand, where
 * the loader did not see it: refused before the op's own check, at the
 * op. */
static void test_confined_hand_built(void **state)
{
    (void)state;
    td_registry *reg = setup();
    td_call *call = load(HEAD("add") "srcs: [A, B]\n");
    call->buffers[0].dtype = TD_F4E2M1;
    expect_refused(reg, call, 1, 5,
                   "op 'add': dtype 'float4_e2m1fn' (buffer 'A') is only "
                   "accepted by gemm_async's A and B (block-scaled MMA, in "
                   "shared memory); add does not support it");
    assert_int_equal(check_calls, 0);
    call->buffers[0].dtype = TD_F32;
    call->buffers[1].dtype = TD_F8E8M0;
    expect_refused(reg, call, 1, 5,
                   "op 'add': dtype 'float8_e8m0fnu' (buffer 'B') is only "
                   "accepted by gemm_async's SFA and SFB (block-scaled MMA's "
                   "scale factors, in tensor memory); add does not support "
                   "it");
    call->buffers[1].dtype = TD_F32;
    expect_selected(reg, call);
    td_call_free(call);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_check),
        cmocka_unit_test(test_reduction_default_check),
        cmocka_unit_test(test_hand_built_counts),
        cmocka_unit_test(test_confined_hand_built),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
