/*
 * Rules overlays (td_registry_add_rules*): layers apply in order; an entry
 * with `override: true` changes only the fields it gives; an override that
 * matches nothing and a repeated (name, target) without it are errors
 * naming both places; a failing add changes nothing; every entry tells
 * where it was declared and which overrides changed it.
 */
#include <unistd.h>

#include "fake.h"
#include "tiledispatch.h"
#include "td_internal.h"

#include "../common/td_test_alloc.h"

/* The base layer for most tests. */
static const char base[] =
    "version: 1\n"
    "variants:\n"
    "  - name: local\n"                                   /* line 3 */
    "    ops: [sum, max]\n"
    "    target: cuda\n"
    "    priority: 10\n"
    "    when:\n"
    "      - storage_scope: {expected_scope: [local]}\n"
    "      - local_valid\n"
    "  - name: shared\n"                                  /* line 10 */
    "    ops: [sum, max, min]\n"
    "    target: cuda\n"
    "    priority: 20\n"
    "    when: [flag: {value: true, note: \"a b\", level: -3}]\n"
    "  - {name: local, ops: [sum], target: trn, priority: 1}\n"; /* 15 */

/* The table as text: one line per (op, target, variant) in try order, with
 * the provenance and the predicates. */
static char *dump(const td_registry *reg)
{
    size_t n = td_registry_rules(reg, NULL, 0);
    td_rule_info *infos = calloc(n ? n : 1, sizeof *infos);
    assert_int_equal(td_registry_rules(reg, infos, n), n);
    td_buf b;
    td__buf_init(&b);
    for (size_t i = 0; i < n; i++) {
        const td_rule_info *r = &infos[i];
        td__buf_printf(&b, "%s/%s %s impl=%s prio=%d%s %s:%d", r->op,
                       r->target, r->name, r->impl, r->priority,
                       r->enabled ? "" : " off", r->file, r->line);
        for (size_t k = 0; k < r->noverrides; k++)
            td__buf_printf(&b, " +%s:%d", r->overrides[k].file,
                           r->overrides[k].line);
        for (size_t k = 0; k < r->npreds; k++) {
            const char *name;
            char args[256];
            assert_int_equal(td_registry_rule_pred(reg, r, k, &name, args,
                                                   sizeof args), 0);
            td__buf_printf(&b, " %s%s", name, args);
        }
        td__buf_puts(&b, "\n");
    }
    free(infos);
    char *out = NULL;
    assert_int_equal(td__buf_take(&b, &out), 0);
    return out;
}

static td_registry *with_base(void)
{
    td_registry *reg = fake_registry();
    assert_non_null(reg);
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "base.yaml", base,
                                                 strlen(base), &d), 0);
    return reg;
}

static int add(td_registry *reg, const char *name, const char *text,
               td_diag *d)
{
    td_diag_clear(d);
    return td_registry_add_rules_text(reg, name, text, strlen(text), d);
}

static void assert_dump(const td_registry *reg, const char *want)
{
    char *got = dump(reg);
    if (strcmp(got, want) != 0)
        fail_msg("table:\n%s---- want:\n%s", got, want);
    td__free(got);
}

static void test_override_fields(void **state)
{
    (void)state;
    td_registry *reg = with_base();
    td_diag d;
    /* Only the priority of shared; local loses its predicates and max,
     * and is disabled; nothing else changes. */
    static const char over[] =
        "version: 1\n"
        "variants:\n"
        "  - name: shared\n"
        "    target: cuda\n"
        "    override: true\n"
        "    priority: 5\n"
        "  - {name: local, target: cuda, override: true, ops: [sum],\n"
        "     when: [], enabled: false}\n";
    assert_int_equal(add(reg, "over.yaml", over, &d), 0);
    assert_dump(reg,
        "max/cuda shared impl=shared prio=5 base.yaml:10 +over.yaml:3"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "min/cuda shared impl=shared prio=5 base.yaml:10 +over.yaml:3"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "sum/cuda local impl=local prio=10 off base.yaml:3 +over.yaml:7\n"
        "sum/cuda shared impl=shared prio=5 base.yaml:10 +over.yaml:3"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "sum/trn local impl=local prio=1 base.yaml:15\n");

    /* impl and when replaced; overrides accumulate, in order. */
    static const char over2[] =
        "version: 1\n"
        "variants:\n"
        "  - {name: local, target: cuda, override: true, impl: shared,\n"
        "     when: [always, sm_version: {min_version: 90}], enabled: true,\n"
        "     ops: [min, sum]}\n";
    assert_int_equal(add(reg, "over2.yaml", over2, &d), 0);
    assert_dump(reg,
        "max/cuda shared impl=shared prio=5 base.yaml:10 +over.yaml:3"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "min/cuda local impl=shared prio=10 base.yaml:3 +over.yaml:7"
        " +over2.yaml:3 always sm_version{min_version: 90}\n"
        "min/cuda shared impl=shared prio=5 base.yaml:10 +over.yaml:3"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "sum/cuda local impl=shared prio=10 base.yaml:3 +over.yaml:7"
        " +over2.yaml:3 always sm_version{min_version: 90}\n"
        "sum/cuda shared impl=shared prio=5 base.yaml:10 +over.yaml:3"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "sum/trn local impl=local prio=1 base.yaml:15\n");

    /* The provenance through the public struct, and the layers. */
    td_rule_info info[8];
    assert_int_equal(td_registry_rules(reg, info, 8), 6);
    assert_string_equal(info[1].name, "local");
    assert_string_equal(info[1].file, "base.yaml");
    assert_int_equal(info[1].line, 3);
    assert_int_equal(info[1].noverrides, 2);
    assert_string_equal(info[1].overrides[0].file, "over.yaml");
    assert_int_equal(info[1].overrides[0].line, 7);
    assert_string_equal(info[1].overrides[1].file, "over2.yaml");
    assert_int_equal(info[1].overrides[1].line, 3);
    assert_int_equal(info[5].noverrides, 0);
    assert_null(info[5].overrides);
    td_rules_layer layers[4];
    assert_int_equal(td_registry_rules_layers(reg, layers, 4), 3);
    assert_string_equal(layers[0].file, "base.yaml");
    assert_int_equal(layers[0].nentries, 3);
    assert_int_equal(layers[0].noverrides, 0);
    assert_string_equal(layers[1].file, "over.yaml");
    assert_int_equal(layers[1].nentries, 2);
    assert_int_equal(layers[1].noverrides, 2);
    assert_int_equal(layers[2].nentries, 1);
    /* A short buffer is filled as far as it goes. */
    assert_int_equal(td_registry_rules_layers(reg, layers, 1), 3);
    assert_int_equal(td_registry_rules_layers(reg, NULL, 0), 3);
    td_registry_free(reg);
}

static void test_new_entries_and_order(void **state)
{
    (void)state;
    td_registry *reg = with_base();
    td_diag d;
    /* A layer may add entries and override in the same file, also an
     * entry it declared itself further up. */
    static const char more[] =
        "version: 1\n"
        "variants:\n"
        "  - {name: fast, impl: shared, ops: [sum], target: cuda,"
        " priority: 30}\n"
        "  - {name: fast, target: cuda, override: true, priority: 31}\n"
        "  - {name: local, target: trn, override: true, priority: 2}\n";
    assert_int_equal(add(reg, "more.yaml", more, &d), 0);
    /* A later layer wins over an earlier one. */
    static const char last[] =
        "version: 1\n"
        "variants:\n"
        "  - {name: fast, target: cuda, override: true, priority: 1}\n";
    assert_int_equal(add(reg, "last.yaml", last, &d), 0);
    assert_dump(reg,
        "max/cuda shared impl=shared prio=20 base.yaml:10"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "max/cuda local impl=local prio=10 base.yaml:3"
        " storage_scope{expected_scope: [local]} local_valid\n"
        "min/cuda shared impl=shared prio=20 base.yaml:10"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "sum/cuda shared impl=shared prio=20 base.yaml:10"
        " flag{value: true, note: \"a b\", level: -3}\n"
        "sum/cuda local impl=local prio=10 base.yaml:3"
        " storage_scope{expected_scope: [local]} local_valid\n"
        "sum/cuda fast impl=shared prio=1 more.yaml:3 +more.yaml:4"
        " +last.yaml:3\n"
        "sum/trn local impl=local prio=2 base.yaml:15 +more.yaml:5\n");

    /* load_* replaces all layers; add_* on an empty registry is a load. */
    assert_int_equal(td_registry_load_rules_text(reg, "last.yaml", last,
                                                 strlen(last), &d),
                     TD_ESCHEMA);
    assert_int_equal(td_registry_rules_layers(reg, NULL, 0), 3);
    td_registry_clear_rules(reg);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
    assert_int_equal(td_registry_rules_layers(reg, NULL, 0), 0);
    assert_int_equal(add(reg, "base.yaml", base, &d), 0);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 6);
    td_registry_clear_rules(reg);
    td_registry_clear_rules(NULL);
    td_registry_free(reg);
}

static void test_unknown_override(void **state)
{
    (void)state;
    td_registry *reg = with_base();
    char *before = dump(reg);
    td_diag d;
    static const char none[] =
        "version: 1\n"
        "variants:\n"
        "  - name: nothing\n"
        "    target: cuda\n"
        "    override: true\n"
        "    priority: 1\n";
    assert_int_equal(add(reg, "o.yaml", none, &d), TD_ESCHEMA);
    assert_string_equal(d.file, "o.yaml");
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 11);
    assert_string_equal(d.msg, "override of variant 'nothing' for target "
                               "'cuda' matches no earlier entry");
    assert_string_equal(d.source_line, "  - name: nothing");
    /* The same name for another target: the message says where it is. */
    static const char other[] =
        "version: 1\n"
        "variants:\n"
        "  - {name: shared, target: trn, override: true, enabled: false}\n";
    assert_int_equal(add(reg, "o.yaml", other, &d), TD_ESCHEMA);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 12);
    assert_string_equal(d.msg, "override of variant 'shared' for target "
                               "'trn' matches no earlier entry (variant "
                               "'shared' is declared for target 'cuda' at "
                               "base.yaml:10)");
    /* An override needs a target; override must be a boolean; a later
     * entry cannot be overridden by an earlier one. */
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: shared, override: true}\n", &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "variant entry is missing 'target'");
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: shared, target: cuda, override: yes}\n",
                         &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "override must be true or false, not a string");
    assert_int_equal(d.col, 44);
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: x, target: cuda, override: true}\n"
                         "  - {name: x, impl: local, ops: [sum], target: cuda,"
                         " priority: 1}\n", &d),
                     TD_ESCHEMA);
    assert_int_equal(d.line, 3);
    /* The fields of an override are checked like those of a new entry. */
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: local, target: cuda, override: true,\n"
                         "     ops: [sum, prod]}\n", &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown op 'prod' (expected one of: max, min, "
                               "sum)");
    assert_int_equal(d.line, 4);
    assert_int_equal(d.col, 17);
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: local, target: cuda, override: true,\n"
                         "     impl: nope}\n", &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown impl 'nope'; if a plugin provides it, "
                               "load it with --plugin or "
                               "TILEDISPATCH_PLUGINS");
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: local, target: cuda, override: true,\n"
                         "     when: [nope]}\n", &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown predicate 'nope' (expected one of: "
                               "always, count, dtype, exec_scope, flag, "
                               "local_valid, never, silent, sm_version, "
                               "storage_scope)");
    /* A misspelt variant in an override gets the close name. */
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: sharde, target: cuda, override: true}\n",
                         &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "override of variant 'sharde' for target "
                               "'cuda' matches no earlier entry (did you "
                               "mean 'shared'?)");
    /* An argument name: the close one, or the list. */
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: local, target: cuda, override: true,\n"
                         "     when: [storage_scope: {expected_scop: "
                         "[local]}]}\n", &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "predicate 'storage_scope': unknown argument "
                               "'expected_scop' (did you mean "
                               "'expected_scope'?)");
    /* An unknown impl close to a registered one is a typo, not a plugin. */
    assert_int_equal(add(reg, "o.yaml", "version: 1\nvariants:\n"
                         "  - {name: local, target: cuda, override: true,\n"
                         "     impl: locl}\n", &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown impl 'locl' (did you mean 'local'?)");
    char *after = dump(reg);
    assert_string_equal(after, before);
    td__free(after);
    td__free(before);
    td_registry_free(reg);
}

static void test_duplicate_without_override(void **state)
{
    (void)state;
    td_registry *reg = with_base();
    char *before = dump(reg);
    td_diag d;
    /* Same (name, target), even with other ops: an error naming both. */
    static const char dup[] =
        "version: 1\n"
        "variants:\n"
        "  - name: shared\n"
        "    ops: [min]\n"
        "    target: cuda\n"
        "    priority: 1\n";
    assert_int_equal(add(reg, "dup.yaml", dup, &d), TD_ESCHEMA);
    assert_string_equal(d.file, "dup.yaml");
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 11);
    assert_string_equal(d.msg, "duplicate variant 'shared' for target "
                               "'cuda' (first declared at base.yaml:10); "
                               "to change it, add 'override: true'");
    /* Changing a declared variant without 'override: true': the same
     * hint, whether or not the entry names the target. */
    assert_int_equal(add(reg, "dup.yaml", "version: 1\nvariants:\n"
                         "  - {name: shared, target: cuda, enabled: false}\n",
                         &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "duplicate variant 'shared' for target "
                               "'cuda' (first declared at base.yaml:10); "
                               "to change it, add 'override: true'");
    assert_int_equal(add(reg, "dup.yaml", "version: 1\nvariants:\n"
                         "  - {name: shared, enabled: false}\n", &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "variant entry is missing 'ops'; variant "
                               "'shared' exists (declared for target 'cuda' "
                               "at base.yaml:10): to change it, add "
                               "'override: true'");
    /* override: false is the same as no override. */
    static const char dup_false[] =
        "version: 1\n"
        "variants:\n"
        "  - {name: local, target: trn, override: false, ops: [sum],"
        " priority: 1}\n";
    assert_int_equal(add(reg, "dup.yaml", dup_false, &d), TD_ESCHEMA);
    assert_non_null(strstr(d.msg, "(first declared at base.yaml:15)"));
    /* Within one file, the first position is in the same file. */
    static const char twice[] =
        "version: 1\n"
        "variants:\n"
        "  - {name: a, impl: local, ops: [sum], target: cuda, priority: 1}\n"
        "  - {name: a, impl: local, ops: [max], target: cuda, priority: 1}\n";
    assert_int_equal(add(reg, "t.yaml", twice, &d), TD_ESCHEMA);
    assert_int_equal(d.line, 4);
    assert_non_null(strstr(d.msg, "(first declared at t.yaml:3)"));
    /* The same name for another target is a different entry. */
    static const char other[] =
        "version: 1\n"
        "variants:\n"
        "  - {name: shared, ops: [min], target: trn, priority: 1}\n";
    assert_int_equal(add(reg, "other.yaml", other, &d), 0);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 7);
    td__free(before);
    td_registry_free(reg);
}

static void test_atomic_failure(void **state)
{
    (void)state;
    td_registry *reg = with_base();
    td_diag d;
    static const char good[] =
        "version: 1\nvariants:\n"
        "  - {name: shared, target: cuda, override: true, priority: 99}\n";
    assert_int_equal(add(reg, "good.yaml", good, &d), 0);
    char *before = dump(reg);
    /* Two files in one add: the first is fine, the second is not; neither
     * stays, and the earlier layers are as they were. */
    char dir[] = "/tmp/td_overlay_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p1[64], p2[64];
    snprintf(p1, sizeof p1, "%s/one.yaml", dir);
    snprintf(p2, sizeof p2, "%s/two.yaml", dir);
    FILE *f = fopen(p1, "w");
    fputs("version: 1\nvariants:\n"
          "  - {name: local, target: cuda, override: true, priority: 0}\n",
          f);
    fclose(f);
    f = fopen(p2, "w");
    fputs("version: 1\nvariants:\n"
          "  - {name: ghost, target: cuda, override: true, priority: 0}\n",
          f);
    fclose(f);
    const char *paths[] = {p1, p2};
    td_diag_clear(&d);
    assert_int_equal(td_registry_add_rules(reg, paths, 2, &d), TD_ESCHEMA);
    assert_string_equal(d.file, p2);
    char *after = dump(reg);
    assert_string_equal(after, before);
    td__free(after);
    assert_int_equal(td_registry_rules_layers(reg, NULL, 0), 2);
    /* A missing file, and a YAML error: the same. */
    const char *missing = "/nonexistent/x.yaml";
    td_diag_clear(&d);
    assert_int_equal(td_registry_add_rules(reg, &missing, 1, &d), TD_EIO);
    assert_int_equal(add(reg, "bad.yaml", "version: [1\n", &d), TD_EPARSE);
    after = dump(reg);
    assert_string_equal(after, before);
    td__free(after);
    /* Both files alone: the first loads, and is a layer of its own. */
    td_diag_clear(&d);
    assert_int_equal(td_registry_add_rules(reg, paths, 1, &d), 0);
    assert_int_equal(td_registry_rules_layers(reg, NULL, 0), 3);
    unlink(p1);
    unlink(p2);
    rmdir(dir);
    /* Invalid arguments. */
    assert_int_equal(td_registry_add_rules(NULL, paths, 1, &d), TD_EINVAL);
    assert_int_equal(td_registry_add_rules(reg, NULL, 1, &d), TD_EINVAL);
    assert_int_equal(td_registry_add_rules_text(reg, "x", NULL, 3, &d),
                     TD_EINVAL);
    td__free(before);
    td_registry_free(reg);
}

static void test_json_args(void **state)
{
    (void)state;
    td_registry *reg = with_base();
    td_rule_info info[6];
    assert_int_equal(td_registry_rules(reg, info, 6), 6);
    assert_string_equal(info[0].name, "shared");
    const char *name;
    char buf[128];
    assert_int_equal(td_registry_rule_pred_json(reg, &info[0], 0, &name, buf,
                                                sizeof buf), 0);
    assert_string_equal(name, "flag");
    assert_string_equal(buf, "{\"value\": true, \"note\": \"a b\", "
                             "\"level\": -3}");
    assert_int_equal(td_registry_rule_pred_json(reg, &info[1], 0, &name, buf,
                                                sizeof buf), 0);
    assert_string_equal(buf, "{\"expected_scope\": [\"local\"]}");
    assert_int_equal(td_registry_rule_pred_json(reg, &info[1], 1, &name, buf,
                                                sizeof buf), 0);
    assert_string_equal(name, "local_valid");
    assert_string_equal(buf, "{}");
    assert_int_equal(td_registry_rule_pred_json(reg, &info[1], 2, &name, buf,
                                                sizeof buf), TD_EINVAL);
    char small[8];
    assert_int_equal(td_registry_rule_pred_json(reg, &info[0], 0, &name,
                                                small, sizeof small),
                     TD_ELIMIT);
    assert_string_equal(small, "{\"value");
    td_registry_free(reg);
}

/* Every allocation of an add fails in turn: an error, the table as it was,
 * nothing leaked; then the add succeeds. */
static void test_alloc_failures(void **state)
{
    (void)state;
    static const char over[] =
        "version: 1\nvariants:\n"
        "  - {name: shared, target: cuda, override: true, priority: 5,\n"
        "     when: [flag: {value: false}], ops: [min]}\n"
        "  - {name: fast, impl: shared, ops: [sum], target: cuda,"
        " priority: 30}\n";
    bool ok = false;
    long fail_at;
    for (fail_at = 1; !ok && fail_at < 100000; fail_at++) {
        td_registry *reg = with_base();
        char *before = dump(reg);
        alloc_install();
        alloc_arm(fail_at);
        td_diag d;
        int rc = add(reg, "over.yaml", over, &d);
        td_set_allocator(NULL);
        if (rc == 0) {
            ok = true;
            assert_int_equal(td_registry_rules(reg, NULL, 0), 5);
        } else {
            assert_int_equal(rc, TD_ENOMEM);
            char *after = dump(reg);
            assert_string_equal(after, before);
            td__free(after);
        }
        td__free(before);
        td_registry_free(reg);
    }
    assert_true(ok);
    assert_true(fail_at > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_override_fields),
        cmocka_unit_test(test_new_entries_and_order),
        cmocka_unit_test(test_unknown_override),
        cmocka_unit_test(test_duplicate_without_override),
        cmocka_unit_test(test_atomic_failure),
        cmocka_unit_test(test_json_args),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
