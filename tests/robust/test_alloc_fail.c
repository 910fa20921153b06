/*
 * Allocation-failure injection.  A counting allocator
 * (tests/common/td_test_alloc.h) fails the
 * Nth allocation, for N = 1, 2, ... until the operation runs without hitting
 * the failure; every time:
 *   - the operation reports TD_ENOMEM (or, if it recovered, its result is
 *     byte-identical to the unfailed one);
 *   - after cleanup no block is left (the allocator's live count is back to
 *     where it was; ASan and valgrind check the C library side);
 *   - a registry that existed before a failed rules load has the same table.
 * Texts the public API returns come from the same allocator (released with
 * td_free()), so they are in the count like everything else.
 * Operations: a new registry + the default rules; loading rules files over
 * an existing registry; and for every example call and golden case:
 * loading the call, then each step of run_everything (dispatching,
 * printing both languages, the kernel program, explain in every format),
 * each step's allocations failed on the kept results of the steps before
 * it (tests/robust/corpus.h, run_step).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/td_test_alloc.h"
#include "corpus.h"

#define ALT_RULES SRC_ROOT "/tests/robust/data/alt_rules.yaml"
/* A bound on N: far above any operation here, so a loop that never ends
 * (an allocation per retry) fails instead of hanging. */
#define MAX_N 200000

/* The table as text (allocates nothing in the library). */
static char *dump(const td_registry *reg)
{
    tstr t = {0};
    size_t n = td_registry_rules(reg, NULL, 0);
    td_rule_info *infos = calloc(n ? n : 1, sizeof *infos);
    assert_non_null(infos);
    assert_int_equal(td_registry_rules(reg, infos, n), n);
    for (size_t i = 0; i < n; i++) {
        const td_rule_info *r = &infos[i];
        tstr_printf(&t, "%s/%s %s impl=%s prio=%d%s %s:%d", r->op, r->target,
                    r->name, r->impl, r->priority, r->enabled ? "" : " off",
                    r->file, r->line);
        for (size_t k = 0; k < r->npreds; k++) {
            const char *name;
            char args[512];
            assert_int_equal(
                td_registry_rule_pred(reg, r, k, &name, args, sizeof args), 0);
            tstr_printf(&t, " %s%s", name, args);
        }
        tstr_add(&t, "\n");
    }
    free(infos);
    if (t.s == NULL)
        tstr_add(&t, "");
    return t.s;
}

static int setup(void **state)
{
    (void)state;
    alloc_install();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    td_set_allocator(NULL);
    return 0;
}

/* Checks one failed or recovered run. */
static void check_outcome(const char *what, long n, int rc)
{
    if (!g_ca.failed) {
        if (rc != 0)
            fail_msg("%s: N=%ld: %s without an injected failure", what, n,
                     td_err_name(rc));
        return;
    }
    if (rc != 0 && rc != TD_ENOMEM)
        fail_msg("%s: allocation %ld failed, got %s instead of TD_ENOMEM",
                 what, n, td_err_name(rc));
}

static void test_new_registry_default_rules(void **state)
{
    (void)state;
    char *want = NULL;
    {
        alloc_arm(0);
        td_registry *reg = NULL;
        td_diag d;
        td_diag_clear(&d);
        assert_int_equal(td_registry_new(&reg), 0);
        assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
        want = dump(reg);
        td_registry_free(reg);
        assert_int_equal(g_ca.live, 0);
    }
    long n;
    for (n = 1; n < MAX_N; n++) {
        alloc_arm(n);
        td_registry *reg = NULL;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_registry_new(&reg);
        if (rc == 0) {
            assert_non_null(reg);
            rc = td_registry_load_default_rules(reg, &d);
            if (rc != 0)
                assert_int_equal(d.code, rc);
        } else {
            assert_null(reg);
        }
        check_outcome("new registry + default rules", n, rc);
        bool done = !g_ca.failed;
        alloc_arm(0);
        if (rc == 0) {
            char *got = dump(reg);
            assert_string_equal(got, want);
            free(got);
        }
        td_registry_free(reg);
        if (g_ca.live != 0)
            fail_msg("N=%ld: %ld blocks leaked", n, g_ca.live);
        if (done)
            break;
    }
    assert_true(n > 1 && n < MAX_N);
    print_message("new registry + default rules: %ld allocations\n", n - 1);
    free(want);
}

/* Loads `path` (or the default rules when NULL) over a registry holding the
 * other rules set, failing every allocation in turn. */
static void reload_over(const char *path)
{
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    alloc_arm(0);
    assert_int_equal(td_registry_new(&reg), 0);
    const char *other = ALT_RULES;
    if (path == NULL)
        assert_int_equal(td_registry_load_rules(reg, &other, 1, &d), 0);
    else
        assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    char *before = dump(reg);
    long live0 = g_ca.live;
    long n;
    for (n = 1; n < MAX_N; n++) {
        alloc_arm(n);
        td_diag_clear(&d);
        int rc = path == NULL ? td_registry_load_default_rules(reg, &d)
                              : td_registry_load_rules(reg, &path, 1, &d);
        check_outcome(path ? path : "default rules", n, rc);
        bool done = !g_ca.failed;
        alloc_arm(0);
        if (rc != 0) {
            assert_int_equal(d.code, TD_ENOMEM);
            char *after = dump(reg);
            if (strcmp(after, before) != 0)
                fail_msg("N=%ld: a failed load changed the table:\n%s\n"
                         "---- was:\n%s", n, after, before);
            free(after);
            if (g_ca.live != live0)
                fail_msg("N=%ld: %ld blocks leaked", n, g_ca.live - live0);
        } else {
            /* Put the other rules back for the next round. */
            td_diag_clear(&d);
            if (path == NULL)
                assert_int_equal(td_registry_load_rules(reg, &other, 1, &d), 0);
            else
                assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
            char *again = dump(reg);
            assert_string_equal(again, before);
            free(again);
        }
        if (done)
            break;
    }
    assert_true(n > 1 && n < MAX_N);
    print_message("load %s over a loaded registry: %ld allocations\n",
                  path ? "alternative rules" : "default rules", n - 1);
    free(before);
    td_registry_free(reg);
    assert_int_equal(g_ca.live, 0);
}

static void test_reload_default_rules(void **state)
{
    (void)state;
    reload_over(NULL);
}

static void test_reload_rules_file(void **state)
{
    (void)state;
    reload_over(ALT_RULES);
}

/* Fails the allocations of `what` in turn: run(arg, out) is one attempt
 * (0 or an error, its result appended to out), compared with the unfailed
 * result `want` when it recovers; the live block count must come back to
 * what it was.  Returns how many allocations the operation makes. */
typedef int (*attempt_fn)(void *arg, tstr *out, const char **step);

static long fail_each(const char *path, attempt_fn run, void *arg,
                      long *total_runs)
{
    long live0 = g_ca.live;
    const char *step = "";
    tstr want = {0};
    alloc_arm(0);
    int rc = run(arg, &want, &step);
    if (rc != 0)
        fail_msg("%s: %s failed without injection: %s", path, step,
                 td_err_name(rc));
    assert_int_equal(g_ca.live, live0);
    long n;
    for (n = 1; n < MAX_N; n++) {
        tstr got = {0};
        alloc_arm(n);
        rc = run(arg, &got, &step);
        bool failed = g_ca.failed;
        alloc_arm(0);
        (*total_runs)++;
        if (rc != 0 && (!failed || rc != TD_ENOMEM))
            fail_msg("%s: allocation %ld failed: %s returned %s", path, n,
                     step, td_err_name(rc));
        if (rc == 0 && strcmp(got.s ? got.s : "", want.s ? want.s : "") != 0) {
            const char *g = got.s ? got.s : "", *w = want.s ? want.s : "";
            size_t k = 0;
            while (g[k] && g[k] == w[k])
                k++;
            print_error("first difference at byte %zu:\n---- got:\n%.300s"
                        "\n---- want:\n%.300s\n", k, g + k, w + k);
            fail_msg("%s: allocation %ld failed and was swallowed: the "
                     "result differs (%s)", path, n,
                     failed ? "injected" : "not injected");
        }
        free(got.s);
        if (g_ca.live != live0)
            fail_msg("%s: N=%ld (%s): %ld blocks leaked", path, n, step,
                     g_ca.live - live0);
        if (!failed)
            break;
    }
    assert_true(n < MAX_N);
    free(want.s);
    return n - 1;
}

/* Loading the call file: the loaded call is the result (its script line
 * stands for it: the later steps compare everything else). */
static int attempt_load(void *arg, tstr *out, const char **step)
{
    const char *path = arg;
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    *step = "load call";
    int rc = td_call_load_file(path, &call, &d);
    if (rc != 0) {
        assert_null(call);
        assert_int_equal(d.code, rc);
        return rc;
    }
    tstr_add(out, "loaded\n");
    td_call_free(call);
    return 0;
}

typedef struct step_arg {
    run_state *st;
    int k;
} step_arg;

/* One step of run_everything on the state the steps before it left. */
static int attempt_step(void *arg, tstr *out, const char **step)
{
    step_arg *a = arg;
    return run_step(a->st, a->k, out, td_free, step, 0);
}

/*
 * Every call of dir: its load, then each step of run_everything (dispatch,
 * both printers, the kernel program, explain in every format), each step's
 * allocations failed in turn on the results of the steps before it (run
 * once, unfailed), so no step is replayed for another's failure points.
 */
static void check_calls_in(const td_registry *reg, const char *dir,
                           long *total_runs, long *ncalls, long *max_n)
{
    char **paths = NULL;
    size_t np = 0;
    corpus_add_dir(dir, &paths, &np);
    assert_true(np > 0);
    for (size_t i = 0; i < np; i++) {
        long live0 = g_ca.live;
        long allocs = fail_each(paths[i], attempt_load, paths[i], total_runs);
        td_call *call = NULL;
        td_diag d;
        td_diag_clear(&d);
        alloc_arm(0);
        assert_int_equal(td_call_load_file(paths[i], &call, &d), 0);
        run_state st;
        memset(&st, 0, sizeof st);
        st.reg = reg;
        st.call = call;
        for (int k = 0; k < RUN_STEPS; k++) {
            step_arg a = {&st, k};
            allocs += fail_each(paths[i], attempt_step, &a, total_runs);
            if (k == RUN_DISPATCH) {
                tstr ignored = {0};
                const char *step;
                alloc_arm(0);
                assert_int_equal(run_step(&st, k, &ignored, td_free, &step, 1),
                                 0);
                free(ignored.s);
            }
        }
        run_state_free(&st);
        td_call_free(call);
        assert_int_equal(g_ca.live, live0);
        (*ncalls)++;
        if (allocs > *max_n)
            *max_n = allocs;
    }
    corpus_free(paths, np);
}

static void test_calls(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    alloc_arm(0);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    long runs = 0, ncalls = 0, max_n = 0;
    check_calls_in(reg, SRC_ROOT "/examples/calls", &runs, &ncalls, &max_n);
    check_calls_in(reg, SRC_ROOT "/tests/golden/cases", &runs, &ncalls,
                   &max_n);
    print_message("calls: %ld calls, %ld failure injections, at most %ld "
                  "allocations for one call\n", ncalls, runs, max_n);
    td_registry_free(reg);
    assert_int_equal(g_ca.live, 0);
}

/*
 * Call files with several operands (tests/call/data/good): loading them
 * under every allocation failure gives the call or TD_ENOMEM and leaks
 * nothing; with the default rules, their ops are not registered, and a
 * reduction written with srcs fails its op check, before anything is
 * allocated.
 */
static void test_operand_calls(void **state)
{
    (void)state;
    char **paths = NULL;
    size_t np = 0;
    corpus_add_dir(SRC_ROOT "/tests/call/data/good", &paths, &np);
    assert_true(np > 0);
    for (size_t i = 0; i < np; i++) {
        long n;
        for (n = 1; n < MAX_N; n++) {
            td_call *call = NULL;
            td_diag d;
            td_diag_clear(&d);
            alloc_arm(n);
            int rc = td_call_load_file(paths[i], &call, &d);
            bool failed = g_ca.failed;
            alloc_arm(0);
            if (rc != 0 && (!failed || rc != TD_ENOMEM))
                fail_msg("%s: allocation %ld: %s", paths[i], n,
                         td_err_name(rc));
            td_call_free(call);
            assert_int_equal(g_ca.live, 0);
            if (!failed)
                break;
        }
        assert_true(n > 1 && n < MAX_N);
    }
    corpus_free(paths, np);

    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    td_call *call = NULL;
    assert_int_equal(td_call_load_file(SRC_ROOT "/tests/cli/data/sum_two_srcs.yaml",
                                       &call, &d),
                     0);
    long live = g_ca.live;
    alloc_arm(1);
    td_dispatch_result res;
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, call, &res, &d), TD_ESCHEMA);
    td_explain *ex = NULL;
    assert_int_equal(td_explain_call(reg, call, &ex, &d), TD_ESCHEMA);
    assert_false(g_ca.failed); /* nothing was allocated */
    alloc_arm(0);
    assert_int_equal(g_ca.live, live);
    td_call_free(call);
    td_registry_free(reg);
    assert_int_equal(g_ca.live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_registry_default_rules,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_default_rules, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reload_rules_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_operand_calls, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
