/*
 * What the front-ends build on: the layered load (td_registry_load: the
 * built-ins, TILEDISPATCH_PLUGINS and the caller's plugins, the built-in
 * rules, TILEDISPATCH_RULES and the caller's layers, in that order) and
 * the text and JSON listings of rules, predicates and impls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "../common/td_test_alloc.h"

/* A rules file in /tmp with `text`; the caller removes it. */
static void write_rules(char *path, const char *text)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char raise_shared[] =
    "version: 1\nvariants:\n"
    "  - {name: shared, target: cuda, override: true, priority: 30}\n";
static const char lower_shared[] =
    "version: 1\nvariants:\n"
    "  - {name: shared, target: cuda, override: true, priority: 5}\n";

/* The priority of (sum, cuda, shared) in reg. */
static int shared_priority(const td_registry *reg)
{
    td_rule_info infos[256];
    size_t n = td_registry_rules(reg, infos, 256);
    for (size_t i = 0; i < n; i++)
        if (strcmp(infos[i].op, "sum") == 0 &&
            strcmp(infos[i].name, "shared") == 0)
            return infos[i].priority;
    return -1;
}

static td_registry *load(const td_load_options *o, int want)
{
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_registry_load(o, &reg, &d);
    if (rc != want)
        fail_msg("td_registry_load: %d, %s:%d: %s", rc, d.file, d.line,
                 d.msg);
    if (want != 0)
        assert_null(reg);
    return reg;
}

static void test_defaults(void **state)
{
    (void)state;
    unsetenv("TILEDISPATCH_RULES");
    unsetenv("TILEDISPATCH_PLUGINS");
    td_registry *reg = load(NULL, 0);
    td_registry *plain = NULL;
    assert_int_equal(td_registry_new(&plain), 0);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_default_rules(plain, &d), 0);
    assert_int_equal(td_registry_rules(reg, NULL, 0),
                     td_registry_rules(plain, NULL, 0));
    assert_int_equal(shared_priority(reg), shared_priority(plain));
    td_registry_free(plain);
    td_registry_free(reg);

    td_load_options o = {.no_default_rules = true};
    reg = load(&o, 0);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
    assert_true(td_registry_impls(reg, NULL, 0) > 0);
    td_registry_free(reg);

    assert_int_equal(td_registry_load(NULL, NULL, NULL), TD_EINVAL);
}

static void test_layers_in_order(void **state)
{
    (void)state;
    char up[] = "/tmp/td_test_load_up_XXXXXX";
    char down[] = "/tmp/td_test_load_down_XXXXXX";
    write_rules(up, raise_shared);
    write_rules(down, lower_shared);
    unsetenv("TILEDISPATCH_PLUGINS");

    /* The variable's layers (empty entries skipped), then the caller's:
     * the last one wins. */
    char env[128];
    snprintf(env, sizeof env, ":%s::", up);
    setenv("TILEDISPATCH_RULES", env, 1);
    td_registry *reg = load(NULL, 0);
    assert_int_equal(shared_priority(reg), 30);
    td_rules_layer layers[4];
    assert_int_equal(td_registry_rules_layers(reg, layers, 4), 2);
    assert_string_equal(layers[0].file, "rules/rules.yaml");
    assert_string_equal(layers[1].file, up);
    td_registry_free(reg);

    const char *mine[] = {down};
    td_load_options o = {.rules = mine, .nrules = 1};
    reg = load(&o, 0);
    assert_int_equal(shared_priority(reg), 5);
    assert_int_equal(td_registry_rules_layers(reg, layers, 4), 3);
    assert_string_equal(layers[2].file, down);
    td_registry_free(reg);

    snprintf(env, sizeof env, "%s", down);
    setenv("TILEDISPATCH_RULES", env, 1);
    const char *raise[] = {up};
    o = (td_load_options){.rules = raise, .nrules = 1};
    reg = load(&o, 0);
    assert_int_equal(shared_priority(reg), 30);
    td_registry_free(reg);

    /* no_env_rules: the variable is ignored. */
    o.no_env_rules = true;
    o.nrules = 0;
    reg = load(&o, 0);
    assert_int_equal(td_registry_rules_layers(reg, layers, 4), 1);
    assert_int_equal(shared_priority(reg), 10);
    td_registry_free(reg);

    /* A bad layer fails the whole load with its position. */
    setenv("TILEDISPATCH_RULES", "/nonexistent/rules.yaml", 1);
    td_diag d;
    td_diag_clear(&d);
    reg = NULL;
    assert_int_equal(td_registry_load(NULL, &reg, &d), TD_EIO);
    assert_null(reg);
    assert_string_equal(d.file, "/nonexistent/rules.yaml");
    unsetenv("TILEDISPATCH_RULES");
    remove(up);
    remove(down);
}

static void test_plugins(void **state)
{
    (void)state;
    unsetenv("TILEDISPATCH_RULES");
    setenv("TILEDISPATCH_PLUGINS", "::/nonexistent/env.so", 1);
    td_diag d;
    td_diag_clear(&d);
    td_registry *reg = NULL;
    int rc = td_registry_load(NULL, &reg, &d);
    assert_true(td_err_is_input(rc));
    assert_null(reg);
    assert_string_equal(d.file, "/nonexistent/env.so");
    assert_non_null(strstr(d.msg, "cannot load plugin"));

    /* The variable's plugins load before the caller's. */
    const char *mine[] = {"/nonexistent/mine.so"};
    td_load_options o = {.plugins = mine, .nplugins = 1};
    td_diag_clear(&d);
    assert_true(td_err_is_input(td_registry_load(&o, &reg, &d)));
    assert_string_equal(d.file, "/nonexistent/env.so");
    o.no_env_plugins = true;
    td_diag_clear(&d);
    assert_true(td_err_is_input(td_registry_load(&o, &reg, &d)));
    assert_string_equal(d.file, "/nonexistent/mine.so");
    unsetenv("TILEDISPATCH_PLUGINS");
}

/* The listing `list` of reg in style, which must succeed. */
static char *listing(const td_registry *reg, td_list_style style,
                     int (*list)(const td_registry *, td_list_style, char **))
{
    char *out = NULL;
    assert_int_equal(list(reg, style, &out), 0);
    assert_non_null(out);
    return out;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void test_listings(void **state)
{
    (void)state;
    unsetenv("TILEDISPATCH_RULES");
    unsetenv("TILEDISPATCH_PLUGINS");
    td_registry *reg = load(NULL, 0);

    char *t = listing(reg, TD_LIST_TEXT, td_registry_list_rules);
    assert_true(starts(t, "op="));
    assert_non_null(strstr(t, "\n  local (prio=10)  [rules/rules.yaml:"));
    assert_non_null(strstr(t, "      when storage_scope: {expected_scope: "
                              "[local]}\n"));
    assert_true(ends(t, "\n"));
    td_free(t);
    t = listing(reg, TD_LIST_JSON, td_registry_list_rules);
    assert_true(starts(t, "[\n  {\"op\": "));
    assert_non_null(strstr(t, "\"variant\": \"local\", \"impl\": \"local\", "
                              "\"priority\": 10, \"enabled\": true, "
                              "\"file\": \"rules/rules.yaml\""));
    assert_non_null(strstr(t, "{\"name\": \"storage_scope\", \"args\": "
                              "{\"expected_scope\": [\"local\"]}}"));
    assert_true(ends(t, "}\n]\n"));
    td_free(t);

    t = listing(reg, TD_LIST_TEXT, td_registry_list_predicates);
    assert_non_null(strstr(t, "\nstorage_scope {expected_scope: "));
    assert_non_null(strstr(t, "  [built-in]\n"));
    td_free(t);
    t = listing(reg, TD_LIST_JSON, td_registry_list_predicates);
    assert_true(starts(t, "[\n  {\"name\": "));
    assert_non_null(strstr(t, "\"origin\": \"built-in\""));
    assert_true(ends(t, "]}\n]\n"));
    td_free(t);

    t = listing(reg, TD_LIST_TEXT, td_registry_list_impls);
    assert_non_null(strstr(t, "local  [built-in]  (plans once per "
                              "dispatch)\n      brings local_valid"));
    assert_non_null(strstr(t, "      serves max/cuda, min/cuda, sum/cuda\n"));
    td_free(t);
    t = listing(reg, TD_LIST_JSON, td_registry_list_impls);
    assert_non_null(strstr(t, "\"serves\": [{\"op\": \"max\", \"target\": "
                              "\"cuda\", \"variant\": \"local\", "
                              "\"enabled\": true}"));
    td_free(t);

    char *out = (char *)"x";
    assert_int_equal(td_registry_list_rules(reg, (td_list_style)7, &out),
                     TD_EINVAL);
    assert_null(out);
    assert_int_equal(td_registry_list_impls(NULL, TD_LIST_TEXT, &out),
                     TD_EINVAL);
    assert_int_equal(td_registry_list_predicates(reg, TD_LIST_TEXT, NULL),
                     TD_EINVAL);
    td_registry_free(reg);

    /* Without rules: an empty text, an empty JSON array, and modules bound
     * by nothing. */
    td_load_options o = {.no_default_rules = true};
    reg = load(&o, 0);
    t = listing(reg, TD_LIST_TEXT, td_registry_list_rules);
    assert_string_equal(t, "");
    td_free(t);
    t = listing(reg, TD_LIST_JSON, td_registry_list_rules);
    assert_string_equal(t, "[]\n");
    td_free(t);
    t = listing(reg, TD_LIST_TEXT, td_registry_list_impls);
    assert_non_null(strstr(t, "      bound by no rules entry\n"));
    td_free(t);
    td_registry_free(reg);

    td_registry *empty = NULL;
    assert_int_equal(td_registry_new_empty(&empty), 0);
    t = listing(empty, TD_LIST_JSON, td_registry_list_predicates);
    assert_string_equal(t, "[]\n");
    td_free(t);
    td_registry_free(empty);
}

/* Failing the Nth allocation, for every N until the load succeeds: each
 * failure returns an error and leaks nothing; then the same for each
 * listing of the loaded registry. */
static void test_alloc_failures(void **state)
{
    (void)state;
    char up[] = "/tmp/td_test_load_alloc_XXXXXX";
    write_rules(up, raise_shared);
    setenv("TILEDISPATCH_RULES", up, 1);
    unsetenv("TILEDISPATCH_PLUGINS");
    td_registry *reg = NULL;
    alloc_install();
    for (long n = 1;; n++) {
        alloc_arm(n);
        td_diag d;
        td_diag_clear(&d);
        int rc = td_registry_load(NULL, &reg, &d);
        if (!g_ca.failed) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_int_not_equal(rc, 0);
        assert_null(reg);
        assert_int_equal(g_ca.live, 0);
    }
    assert_int_equal(shared_priority(reg), 30);
    int (*const lists[])(const td_registry *, td_list_style, char **) = {
        td_registry_list_rules, td_registry_list_predicates,
        td_registry_list_impls};
    for (size_t k = 0; k < 3; k++) {
        for (int json = 0; json < 2; json++) {
            long live = g_ca.live;
            for (long n = 1;; n++) {
                alloc_arm(n);
                char *out = NULL;
                int rc = lists[k](reg, json ? TD_LIST_JSON : TD_LIST_TEXT,
                                  &out);
                if (!g_ca.failed) {
                    assert_int_equal(rc, 0);
                    td_free(out);
                    break;
                }
                assert_int_equal(rc, TD_ENOMEM);
                assert_null(out);
                assert_int_equal(g_ca.live, live);
            }
        }
    }
    alloc_arm(0);
    td_registry_free(reg);
    assert_int_equal(g_ca.live, 0);
    td_set_allocator(NULL);
    unsetenv("TILEDISPATCH_RULES");
    remove(up);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_layers_in_order),
        cmocka_unit_test(test_plugins),
        cmocka_unit_test(test_listings),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
