/*
 * Plans: what a module's checks work out is computed once per dispatch and
 * handed to its emitter.  A counting module shows the plan runs once when
 * the rules list its plan predicate and once (before the emitter) when they
 * do not; a declining plan declines the candidate whatever the rules list;
 * explain and dispatch agree.  The built-in `local` shows the same with a
 * rules file that binds it without local_valid.
 */
#include "fake.h"

#include "registry_internal.h"

#define EM "\xe2\x80\x94"

typedef struct counted_plan {
    int64_t src_len;
    int magic;
} counted_plan;

static int g_plans, g_checks, g_emits;
static int64_t g_seen_len;

static int c_plan(const td_call *call, const td_op_desc *op, void *plan,
                  void *user, td_reason *why)
{
    (void)op, (void)user;
    g_plans++;
    counted_plan *p = plan; /* not cleared: every field is written */
    p->src_len = td_region_size(&call->src);
    p->magic = 42;
    if (p->src_len > 8) {
        td_reason_set(why, "source of %lld is too long",
                      (long long)p->src_len);
        return TD_EDECLINED;
    }
    return 0;
}

/* The predicate rules name: the plan's check, without keeping it. */
static bool c_valid(const td_call *call, const td_args *args, void *user,
                    td_reason *why)
{
    (void)args;
    g_checks++;
    counted_plan p = {0, 0};
    int before = g_plans;
    bool ok = c_plan(call, NULL, &p, user, why) == 0;
    g_plans = before;
    return ok;
}

static int c_emit(const td_call *call, const td_op_desc *op, const void *plan,
                  td_ir *ir, void *user, td_reason *why)
{
    (void)call, (void)op, (void)user, (void)why;
    g_emits++;
    const counted_plan *p = plan;
    assert_non_null(p);
    assert_int_equal(p->magic, 42);
    g_seen_len = p->src_len;
    td_ir_comment(ir, "counted");
    return 0;
}

static const td_pred_desc c_preds[] = {
    {.name = "counted_valid", .fn = c_valid},
};

static const td_impl_desc counted = {
    .name = "counted",
    .emit = c_emit,
    .preds = c_preds,
    .npreds = 1,
    .plan = c_plan,
    .plan_size = sizeof(counted_plan),
    .plan_pred = "counted_valid",
};

static td_registry *setup(const char *when)
{
    char text[1024];
    snprintf(text, sizeof text,
             "version: 1\n"
             "variants:\n"
             "  - name: counted\n"
             "    ops: [sum]\n"
             "    target: cuda\n"
             "    priority: 20\n"
             "    when: %s\n"
             "  - name: local\n"
             "    ops: [sum]\n"
             "    target: cuda\n"
             "    priority: 10\n"
             "    when: [always]\n",
             when);
    td_registry *reg = fake_registry();
    assert_non_null(reg);
    assert_int_equal(td_register_impl(reg, &counted), 0);
    td_diag d;
    td_diag_clear(&d);
    if (td_registry_load_rules_text(reg, "t.yaml", text, strlen(text), &d))
        fail_msg("%d:%d: %s", d.line, d.col, d.msg);
    return reg;
}

static const char *dispatch_name(const td_registry *reg, const td_call *c)
{
    static char name[TD_NAME_MAX];
    td_dispatch_result res;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, c, &res, &d), 0);
    strcpy(name, res.variant);
    td_ir_free(res.ir);
    return name;
}

static void reset(void)
{
    g_plans = g_checks = g_emits = 0;
    g_seen_len = -1;
}

/* Listed plan predicate: the plan is made there, once, and handed on. */
static void test_plan_from_predicate(void **state)
{
    (void)state;
    td_registry *reg = setup("[always, counted_valid]");
    td_call c;
    fake_call(&c, "sum", TD_SCOPE_THREAD);
    reset();
    assert_string_equal(dispatch_name(reg, &c), "counted");
    assert_int_equal(g_plans, 1);
    assert_int_equal(g_checks, 0); /* the predicate fn itself never ran */
    assert_int_equal(g_emits, 1);
    assert_int_equal(g_seen_len, 4);
    td_registry_free(reg);
}

/* Rules without the predicate: the plan still runs, once, before emit. */
static void test_plan_without_predicate(void **state)
{
    (void)state;
    td_registry *reg = setup("[always]");
    td_call c;
    fake_call(&c, "sum", TD_SCOPE_THREAD);
    reset();
    assert_string_equal(dispatch_name(reg, &c), "counted");
    assert_int_equal(g_plans, 1);
    assert_int_equal(g_emits, 1);
    assert_int_equal(g_seen_len, 4);
    td_registry_free(reg);
}

/* A call outside the module's checks is never emitted, listed or not: the
 * plan declines and the next candidate wins; explain says why. */
static void test_declining_plan(void **state)
{
    (void)state;
    const char *whens[] = {"[always]", "[counted_valid]"};
    for (size_t i = 0; i < 2; i++) {
        td_registry *reg = setup(whens[i]);
        td_call c;
        fake_call(&c, "sum", TD_SCOPE_THREAD);
        c.buffers[1].shape[0] = 16;
        c.src.extent[0] = 16;
        reset();
        assert_string_equal(dispatch_name(reg, &c), "local");
        assert_int_equal(g_plans, 1);
        assert_int_equal(g_emits, 0);

        td_explain *ex = NULL;
        td_diag d;
        td_diag_clear(&d);
        assert_int_equal(td_explain_call(reg, &c, &ex, &d), 0);
        const td_explain_row *r = td_explain_get(ex, 0);
        assert_string_equal(r->variant, "counted");
        if (i == 0) {
            assert_int_equal(r->status, TD_CAND_DECLINED);
            assert_string_equal(r->message,
                                "declined " EM " source of 16 is too long");
        } else {
            assert_int_equal(r->status, TD_CAND_REJECTED);
            assert_string_equal(r->preds[0].reason, "source of 16 is too long");
        }
        assert_string_equal(td_explain_selected(ex)->variant, "local");
        td_explain_free(ex);
        td_registry_free(reg);
    }
}

/* Descriptors with an inconsistent plan are refused, changing nothing. */
static void test_bad_plan_descs(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    assert_non_null(reg);
    td_impl_desc d = counted;
    d.plan_size = 0;
    assert_int_equal(td_register_impl(reg, &d), TD_EINVAL);
    d = counted;
    d.plan_size = TD_PLAN_MAX + 1;
    assert_int_equal(td_register_impl(reg, &d), TD_EINVAL);
    d = counted;
    d.plan_pred = "not_one_of_mine";
    assert_int_equal(td_register_impl(reg, &d), TD_EINVAL);
    d = counted;
    d.plan = NULL;
    assert_int_equal(td_register_impl(reg, &d), TD_EINVAL);
    assert_int_equal(td_register_impl(reg, &counted), 0);
    td_registry_free(reg);
}

/* The built-in local: bound without local_valid, a call local_valid
 * rejects is declined with local_valid's reason, never lowered. */
static void test_builtin_local_without_predicate(void **state)
{
    (void)state;
    static const char text[] =
        "version: 1\n"
        "variants:\n"
        "  - name: local\n"
        "    ops: [sum]\n"
        "    target: cuda\n"
        "    priority: 10\n"
        "    when: []\n";
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(
        td_registry_load_rules_text(reg, "t.yaml", text, strlen(text), &d), 0);
    td_call c;
    fake_call(&c, "sum", TD_SCOPE_CTA);
    td_dispatch_result res;
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, &c, &res, &d), TD_ENOMATCH);
    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, &c, &ex, &d), 0);
    const td_explain_row *r = td_explain_get(ex, 0);
    assert_int_equal(r->status, TD_CAND_DECLINED);
    assert_string_equal(r->message, "declined " EM " unsupported exec_scope "
                                    "cta for local reduction");
    td_explain_free(ex);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_from_predicate),
        cmocka_unit_test(test_plan_without_predicate),
        cmocka_unit_test(test_declining_plan),
        cmocka_unit_test(test_bad_plan_descs),
        cmocka_unit_test(test_builtin_local_without_predicate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
