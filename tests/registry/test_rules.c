/*
 * Rules loading: every bad file under data/bad_rules/ carries its expected
 * diagnostic in its first line,
 *   # expect: LINE:COL: TD_ECODE: message substring
 * and good files load, in order, into the table td_registry_rules shows.
 */
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include "fake.h"
#include "tiledispatch.h"
#include "td_internal.h"

#include "../common/td_test_alloc.h"

#ifndef DATA_DIR
#error "DATA_DIR must be defined by the build"
#endif

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return s;
}

/* The whole table as text, to compare before and after a load. */
static char *dump(const td_registry *reg)
{
    size_t n = td_registry_rules(reg, NULL, 0);
    td_rule_info *infos = calloc(n ? n : 1, sizeof *infos);
    assert_int_equal(td_registry_rules(reg, infos, n), n);
    size_t cap = 64 + n * 1024;
    char *out = calloc(1, cap), *p = out;
    for (size_t i = 0; i < n; i++) {
        const td_rule_info *r = &infos[i];
        p += snprintf(p, cap - (size_t)(p - out), "%s/%s %s impl=%s prio=%d%s %s:%d",
                      r->op, r->target, r->name, r->impl, r->priority,
                      r->enabled ? "" : " disabled", r->file, r->line);
        for (size_t k = 0; k < r->npreds; k++) {
            const char *name;
            char args[256];
            assert_int_equal(td_registry_rule_pred(reg, r, k, &name, args,
                                                   sizeof args), 0);
            p += snprintf(p, cap - (size_t)(p - out), " %s%s", name, args);
        }
        p += snprintf(p, cap - (size_t)(p - out), "\n");
    }
    free(infos);
    return out;
}

static const char *const base_paths[] = {DATA_DIR "/good/base.yaml",
                                         DATA_DIR "/good/extra.yaml"};

static const char expected_table[] =
    "max/cuda local impl=local prio=10 " DATA_DIR "/good/base.yaml:4"
    " storage_scope{expected_scope: [local]} local_valid\n"
    "max/cuda shared impl=shared prio=10 " DATA_DIR "/good/base.yaml:12"
    " storage_scope{expected_scope: [\"shared*\", shared.dyn]}"
    " flag{value: true, note: \"a b\", level: -3}\n"
    "min/cuda local impl=local prio=10 " DATA_DIR "/good/base.yaml:4"
    " storage_scope{expected_scope: [local]} local_valid\n"
    "min/cuda shared impl=shared prio=10 " DATA_DIR "/good/base.yaml:12"
    " storage_scope{expected_scope: [\"shared*\", shared.dyn]}"
    " flag{value: true, note: \"a b\", level: -3}\n"
    "sum/cuda fast impl=shared prio=20 disabled " DATA_DIR "/good/extra.yaml:4"
    " sm_version{min_version: 100} dtype{expected_dtype: float32}\n"
    "sum/cuda local impl=local prio=10 " DATA_DIR "/good/base.yaml:4"
    " storage_scope{expected_scope: [local]} local_valid\n"
    "sum/cuda shared impl=shared prio=10 " DATA_DIR "/good/base.yaml:12"
    " storage_scope{expected_scope: [\"shared*\", shared.dyn]}"
    " flag{value: true, note: \"a b\", level: -3}\n"
    "sum/trn local impl=local prio=0 " DATA_DIR "/good/extra.yaml:14\n";

static void test_good_files_in_order(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
    assert_int_equal(td_registry_load_rules(reg, base_paths, 2, &d), 0);
    assert_int_equal(d.code, 0);
    char *t = dump(reg);
    assert_string_equal(t, expected_table);
    free(t);

    /* Predicate indexes past the end, and rules that do not exist. */
    td_rule_info info;
    assert_int_equal(td_registry_rules(reg, &info, 1), 8);
    assert_string_equal(info.name, "local");
    assert_int_equal(td_registry_rule_pred(reg, &info, 2, NULL, NULL, 0),
                     TD_EINVAL);
    info.name = "nope";
    assert_int_equal(td_registry_rule_pred(reg, &info, 0, NULL, NULL, 0),
                     TD_ENOENT);

    /* A second load replaces the table; it does not add to it. */
    assert_int_equal(td_registry_load_rules(reg, base_paths + 1, 1, &d), 0);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 2);
    td_registry_free(reg);
}

static void test_duplicate_across_files(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    const char *paths[] = {DATA_DIR "/good/base.yaml",
                           DATA_DIR "/good/dup_of_base.yaml"};
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules(reg, paths, 2, &d), TD_ESCHEMA);
    assert_string_equal(d.file, paths[1]);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 11);
    assert_string_equal(d.msg, "duplicate variant 'shared' for target "
                               "'cuda' (first declared at " DATA_DIR
                               "/good/base.yaml:12); to change it, add "
                               "'override: true'");
    assert_string_equal(d.source_line, "  - name: shared");
    assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
    td_registry_free(reg);
}

/* One bad file: the diagnostic matches its expect line, and the registry
 * keeps the table it had. */
static int check_bad(td_registry *reg, const char *path, const char *before)
{
    size_t len;
    char *text = slurp(path, &len);
    int line = 0, col = 0, consumed = 0;
    char code[32] = "";
    assert_true(strncmp(text, "# expect: ", 10) == 0);
    assert_int_equal(sscanf(text + 10, "%d:%d: %31[^:]: %n", &line, &col, code,
                            &consumed),
                     3);
    const char *want = text + 10 + consumed;
    char *nl = strchr(want, '\n');
    assert_non_null(nl);
    *nl = '\0';

    td_diag d;
    td_diag_clear(&d);
    int rc = td_registry_load_rules(reg, &path, 1, &d);
    if (rc == 0 || strcmp(td_err_name(rc), code) != 0 || d.line != line ||
        d.col != col || strstr(d.msg, want) == NULL || d.code != rc) {
        print_error("%s: got %s %d:%d: %s; want %s %d:%d: %s\n", path,
                    td_err_name(rc), d.line, d.col, d.msg, code, line, col,
                    want);
        free(text);
        return 1;
    }
    assert_string_equal(d.file, path);
    /* Each error shows its source line, except where the file is empty. */
    if (strcmp(want, "empty rules file") != 0)
        assert_true(d.source_line[0] != '\0');
    char *after = dump(reg);
    assert_string_equal(after, before);
    free(after);
    free(text);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_bad_files(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules(reg, base_paths, 2, &d), 0);
    char *before = dump(reg);

    DIR *dir = opendir(DATA_DIR "/bad_rules");
    assert_non_null(dir);
    char *names[256];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL && n < 256) {
        size_t l = strlen(de->d_name);
        if (l > 5 && strcmp(de->d_name + l - 5, ".yaml") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof *names, cmp_str);
    assert_true(n >= 22);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/bad_rules/%s", DATA_DIR, names[i]);
        bad += check_bad(reg, path, before);
        free(names[i]);
    }
    assert_int_equal(bad, 0);
    free(before);
    td_registry_free(reg);
}

/* Limits that need big inputs are generated here. */
static void test_generated_limits(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_diag d;

    /* TD_MAX_VARIANTS + 1 entries: the extra one is refused. */
    td_buf b;
    td__buf_init(&b);
    td__buf_puts(&b, "version: 1\nvariants:\n");
    for (int i = 0; i <= TD_MAX_VARIANTS; i++)
        td__buf_printf(&b, "  - {name: v%d, impl: local, ops: [sum], "
                           "target: cuda, priority: %d}\n",
                       i, i % 7);
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "many.yaml", b.data,
                                                 b.len, &d),
                     TD_ELIMIT);
    assert_int_equal(d.line, 3 + TD_MAX_VARIANTS);
    assert_int_equal(d.col, 5);
    assert_string_equal(d.msg, "more than 256 variant entries");

    /* Exactly TD_MAX_VARIANTS load. */
    char *nl = b.data + b.len - 1;
    while (nl[-1] != '\n')
        nl--;
    assert_int_equal(td_registry_load_rules_text(reg, "many.yaml", b.data,
                                                 (size_t)(nl - b.data), &d),
                     0);
    assert_int_equal(td_registry_rules(reg, NULL, 0), TD_MAX_VARIANTS);
    char *before = dump(reg);
    td__buf_free(&b);

    /* A file over TD_RULES_FILE_MAX, written to a temporary directory. */
    char dir[] = "/tmp/td_rules_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("version: 1\nvariants: []\n", f);
    for (size_t i = 0; i < TD_RULES_FILE_MAX / 64 + 1; i++)
        fprintf(f, "# %061zu\n", i);
    fclose(f);
    const char *p = path;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules(reg, &p, 1, &d), TD_ELIMIT);
    assert_string_equal(d.file, path);
    assert_non_null(strstr(d.msg, "larger than the limit"));
    unlink(path);
    rmdir(dir);

    /* The same through the text entry point. */
    char *big = malloc(TD_RULES_FILE_MAX + 2);
    memset(big, ' ', TD_RULES_FILE_MAX + 1);
    big[TD_RULES_FILE_MAX + 1] = '\0';
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "big.yaml", big,
                                                 TD_RULES_FILE_MAX + 1, &d),
                     TD_ELIMIT);
    free(big);

    /* A missing file. */
    p = DATA_DIR "/no/such/file.yaml";
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules(reg, &p, 1, &d), TD_EIO);
    assert_string_equal(d.file, p);

    char *after = dump(reg);
    assert_string_equal(after, before);
    free(after);
    free(before);
    td_registry_free(reg);
}

/* A rules entry whose later file fails leaves the earlier table intact,
 * even when the failing load had accepted its first file. */
static void test_failed_multi_load_keeps_table(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_diag d;
    td_diag_clear(&d);
    const char *one = DATA_DIR "/good/extra.yaml";
    assert_int_equal(td_registry_load_rules(reg, &one, 1, &d), 0);
    char *before = dump(reg);
    const char *paths[] = {DATA_DIR "/good/base.yaml",
                           DATA_DIR "/bad_rules/unknown_op.yaml"};
    assert_int_equal(td_registry_load_rules(reg, paths + 1, 1, &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown op 'prod' (expected one of: max, min, "
                               "sum)");
    /* Over base.yaml, the same file repeats base's `local` first. */
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules(reg, paths, 2, &d), TD_ESCHEMA);
    assert_string_equal(d.file, paths[1]);
    assert_non_null(strstr(d.msg, "duplicate variant 'local' for target "
                                  "'cuda' (first declared at " DATA_DIR
                                  "/good/base.yaml:4)"));
    char *after = dump(reg);
    assert_string_equal(after, before);
    free(before);
    free(after);
    td_registry_free(reg);
}

static void test_text_forms(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_diag d;
    /* Flow style, a null `when`, bare names and empty argument maps, and a
     * predicate name given as a one-key mapping with a null value. */
    static const char text[] =
        "{version: 1, variants: [\n"
        "  {name: local, ops: [sum], target: cuda, priority: -5, when: },\n"
        "  {name: shared, ops: [min], target: cuda, priority: +7,\n"
        "   when: [always, never: {}, silent: , flag: {value: FALSE}]}]}\n";
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "flow.yaml", text,
                                                 strlen(text), &d),
                     0);
    char *t = dump(reg);
    assert_string_equal(t, "min/cuda shared impl=shared prio=7 flow.yaml:3"
                           " always never silent flag{value: false}\n"
                           "sum/cuda local impl=local prio=-5 flow.yaml:2\n");
    free(t);

    /* Sixteen levels of nesting are allowed (the list of lists is then a
     * schema error); control characters in names are not. */
    static const char deep16[] =
        "version: 1\nvariants:\n"
        "  - {name: local, ops: [sum], target: cuda, priority: 1, when:\n"
        "     [storage_scope: {expected_scope: [[[[[[[[[[x]]]]]]]]]]}]}\n";
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "d", deep16,
                                                 strlen(deep16), &d),
                     TD_ESCHEMA);
    assert_non_null(strstr(d.msg, "must be a list of strings"));
    static const char ctl[] =
        "version: 1\nvariants:\n"
        "  - {name: \"lo\\tcal\", ops: [sum], target: cuda, priority: 1}\n";
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "c", ctl, strlen(ctl),
                                                 &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "name must not contain control characters");
    assert_int_equal(d.col, 12);

    /* An empty text and a NULL name. */
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, NULL, "", 0, &d),
                     TD_ESCHEMA);
    assert_string_equal(d.file, "<rules>");
    assert_string_equal(d.msg, "empty rules file");
    /* An empty variants list is a valid, empty table. */
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "e", "version: 1\n"
                                                 "variants: []\n", 24, &d),
                     0);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
    td_registry_free(reg);
}

/* ---- registration ------------------------------------------------------ */

static bool p_dummy(const td_call *c, const td_args *a, void *u,
                    td_reason *why)
{
    (void)c, (void)a, (void)u, (void)why;
    return true;
}

static void test_register(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    assert_non_null(reg);

    td_op_desc sum = {.name = "sum", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM};
    assert_int_equal(td_register_op(reg, &sum), TD_EEXIST);
    td_op_desc prod = {.name = "prod", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM};
    assert_int_equal(td_register_op(reg, &prod), 0);
    const td_op_desc *o = td_registry_op(reg, "prod");
    assert_non_null(o);
    assert_string_equal(o->name, "prod");
    assert_ptr_not_equal(o->name, prod.name); /* copied */
    assert_null(td_registry_op(reg, "nope"));
    td_op_desc empty = {.name = "", .kind = TD_OP_KIND_REDUCTION};
    assert_int_equal(td_register_op(reg, &empty), TD_EINVAL);

    td_pred_desc dup = {"never", NULL, 0, p_dummy, NULL, NULL};
    assert_int_equal(td_register_predicate(reg, &dup), TD_EEXIST);

    /* An impl whose second predicate is taken registers nothing. */
    static const td_pred_desc two[] = {{"brand_new", NULL, 0, p_dummy, NULL, NULL},
                                       {"always", NULL, 0, p_dummy, NULL, NULL}};
    td_impl_desc im = {.name = "newimpl", .emit = fake_emit, .preds = two,
                       .npreds = 2};
    assert_int_equal(td_register_impl(reg, &im), TD_EEXIST);
    static const char rules[] =
        "version: 1\nvariants:\n"
        "  - {name: x, impl: newimpl, ops: [sum], target: t, priority: 1}\n";
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "r", rules,
                                                 strlen(rules), &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown impl 'newimpl'; if a plugin provides "
                               "it, load it with --plugin or "
                               "TILEDISPATCH_PLUGINS");
    static const char rules2[] =
        "version: 1\nvariants:\n"
        "  - {name: x, impl: local, ops: [sum], target: t, priority: 1,\n"
        "     when: [brand_new]}\n";
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "r", rules2,
                                                 strlen(rules2), &d),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown predicate 'brand_new' (expected one "
                               "of: always, count, dtype, exec_scope, flag, "
                               "local_valid, never, silent, sm_version, "
                               "storage_scope)");
    assert_int_equal(d.line, 4);
    assert_int_equal(d.col, 13);

    /* Taken impl name; then the same impl with a free predicate works. */
    td_impl_desc im2 = {.name = "local", .emit = fake_emit};
    assert_int_equal(td_register_impl(reg, &im2), TD_EEXIST);
    im.npreds = 1;
    assert_int_equal(td_register_impl(reg, &im), 0);
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules_text(reg, "r", rules2,
                                                 strlen(rules2), &d),
                     0);
    td_registry_free(reg);
    td_registry_free(NULL);
}

static void test_args_getters(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_load_rules(reg, base_paths, 1, &d), 0);
    /* Reach the bound args through a predicate that records them. */
    td_rule_info infos[6];
    assert_int_equal(td_registry_rules(reg, infos, 6), 6);
    assert_string_equal(infos[1].name, "shared");
    const char *name;
    char text[8];
    assert_int_equal(td_registry_rule_pred(reg, &infos[1], 1, &name, text,
                                           sizeof text), 0);
    assert_string_equal(name, "flag");
    assert_string_equal(text, "{value:"); /* truncated to the buffer */
    td_registry_free(reg);

    assert_string_equal(td_arg_type_name(TD_ARG_INT), "int");
    assert_string_equal(td_arg_type_name(TD_ARG_BOOL), "bool");
    assert_string_equal(td_arg_type_name(TD_ARG_STRING), "string");
    assert_string_equal(td_arg_type_name(TD_ARG_STRING_LIST),
                        "list of strings");
    td_reason r;
    td_reason_set(&r, "x=%d", 5);
    assert_string_equal(r.text, "x=5");
    td_reason_set(NULL, "ignored");
    char longs[TD_REASON_MAX * 2];
    memset(longs, 'a', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    td_reason_set(&r, "%s", longs);
    assert_int_equal(strlen(r.text), TD_REASON_MAX - 1);
}

/* ---- allocation failures ----------------------------------------------- */

/* Fails the Nth allocation for every N until the whole load succeeds:
 * every failure must return an error, keep the old table and leak nothing
 * (the sanitizer build checks the leaks). */
static void test_alloc_failures(void **state)
{
    (void)state;
    bool ok = false;
    long fail_at;
    for (fail_at = 1; !ok && fail_at < 100000; fail_at++) {
        alloc_install();
        alloc_arm(fail_at);
        td_registry *reg = fake_registry();
        if (reg == NULL) {
            td_set_allocator(NULL);
            continue;
        }
        td_diag d;
        td_diag_clear(&d);
        int rc = td_registry_load_rules(reg, base_paths, 2, &d);
        td_set_allocator(NULL);
        if (rc == 0) {
            char *t = dump(reg);
            assert_string_equal(t, expected_table);
            free(t);
            ok = true;
        } else {
            assert_int_equal(rc, TD_ENOMEM);
            assert_int_equal(d.code, TD_ENOMEM);
            assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
        }
        td_registry_free(reg);
    }
    assert_true(ok);
    assert_true(fail_at > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_files_in_order),
        cmocka_unit_test(test_duplicate_across_files),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_generated_limits),
        cmocka_unit_test(test_failed_multi_load_keeps_table),
        cmocka_unit_test(test_text_forms),
        cmocka_unit_test(test_register),
        cmocka_unit_test(test_args_getters),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
