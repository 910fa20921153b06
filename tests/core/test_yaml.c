/*
 * The YAML front-end (core/td_yaml.h).  Each policy is checked through both
 * loaders that use it, a call file (td_call_parse) and a rules file
 * (td_registry_load_rules_text): the same text gives the same code, message
 * and position in both.  Then the helpers on their own: key tables, scalar
 * typing, limits.
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
#include "td_internal.h"
#include "td_yaml.h"

/* What each loader says about text. */
typedef struct said {
    int rc;
    td_diag d;
} said;

static said as_call(const char *text)
{
    said s;
    td_call *call = NULL;
    td_diag_clear(&s.d);
    s.rc = td_call_parse("f.yaml", text, strlen(text), &call, &s.d);
    assert_null(call);
    return s;
}

static said as_rules(const char *text)
{
    said s;
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    td_diag_clear(&s.d);
    s.rc = td_registry_load_rules_text(reg, "f.yaml", text, strlen(text),
                                       &s.d);
    assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
    td_registry_free(reg);
    return s;
}

static void expect(const said *s, int code, int line, int col,
                   const char *msg)
{
    if (s->rc != code || s->d.line != line || s->d.col != col ||
        strcmp(s->d.msg, msg) != 0)
        fail_msg("got %s %d:%d: %s; want %s %d:%d: %s", td_err_name(s->rc),
                 s->d.line, s->d.col, s->d.msg, td_err_name(code), line, col,
                 msg);
    assert_int_equal(s->d.code, code);
    assert_string_equal(s->d.file, "f.yaml");
}

/* The same text through both loaders: the same code, message and place. */
static void both(const char *text, int code, int line, int col,
                 const char *msg)
{
    said c = as_call(text), r = as_rules(text);
    expect(&c, code, line, col, msg);
    expect(&r, code, line, col, msg);
    assert_string_equal(c.d.source_line, r.d.source_line);
}

static void test_tag(void **state)
{
    (void)state;
    both("op: sum\ntarget: !!str cuda\n", TD_ESCHEMA, 2, 9,
         "YAML tags are not allowed");
    both("version: 1\nvariants: !custom [a]\n", TD_ESCHEMA, 2, 11,
         "YAML tags are not allowed");
    both("!<tag:yaml.org,2002:map> {a: 1}\n", TD_ESCHEMA, 1, 1,
         "YAML tags are not allowed");
}

static void test_anchor(void **state)
{
    (void)state;
    both("op: &o sum\n", TD_ESCHEMA, 1, 5, "YAML anchors are not allowed");
    both("a:\n  b: &list [1, 2]\n", TD_ESCHEMA, 2, 6,
         "YAML anchors are not allowed");
}

static void test_alias(void **state)
{
    (void)state;
    /* An alias without its anchor: libyaml's event parser does not resolve
     * it, so this is the alias policy, not a YAML error. */
    both("op: sum\ntarget: *t\n", TD_ESCHEMA, 2, 9,
         "YAML aliases are not allowed");
    both("a: [x, *y]\n", TD_ESCHEMA, 1, 8, "YAML aliases are not allowed");
}

static void test_syntax_error_column_in_code_points(void **state)
{
    (void)state;
    /* "é" is two bytes, one code point: the x is column 8, not 9. */
    both("a: \"\xc3\xa9\" x\n", TD_EPARSE, 1, 8,
         "not valid YAML: while parsing a block mapping did not find "
         "expected key");
    /* Three code points of three bytes each before the error. */
    both("k: [\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac,, 1]\n", TD_EPARSE, 1, 9,
         "not valid YAML: while parsing a flow node did not find expected "
         "node content");
    /* Reader errors come from libyaml as a byte offset; the column is in
     * code points all the same. */
    both("a: \xc3\xa9\xc3\xa9\x01\n", TD_EPARSE, 1, 6,
         "not valid YAML: control characters are not allowed");
    both("a: \xc3\xa9 \xff\n", TD_EPARSE, 1, 6,
         "not valid YAML: invalid leading UTF-8 octet");
    /* The caret of the formatted message sits under the column. */
    said s = as_rules("a: \"\xc3\xa9\" x\n");
    char buf[512];
    td_diag_format(&s.d, buf, sizeof buf);
    assert_non_null(strstr(buf, "  a: \"\xc3\xa9\" x\n         ^\n"));
}

static void test_depth_limit(void **state)
{
    (void)state;
    /* Both refuse the collection that opens one level past their limit,
     * with the same wording; the limits differ (call 32, rules 16). */
    char text[256];
    size_t n = 0;
    n += (size_t)snprintf(text + n, sizeof text - n, "a: ");
    for (int i = 0; i < 40; i++)
        text[n++] = '[';
    for (int i = 0; i < 40; i++)
        text[n++] = ']';
    text[n++] = '\n';
    text[n] = '\0';
    said c = as_call(text), r = as_rules(text);
    /* The top-level mapping is level 1; bracket k opens level k + 1. */
    expect(&c, TD_ELIMIT, 1, 4 + TD_CALL_DEPTH_MAX - 1,
           "nesting deeper than 32 levels");
    expect(&r, TD_ELIMIT, 1, 4 + TD_RULES_DEPTH_MAX - 1,
           "nesting deeper than 16 levels");
}

static void test_duplicate_key(void **state)
{
    (void)state;
    /* Each file kind with a key it knows, repeated at the same place. */
    said c = as_call("op: sum\nop: max\n");
    said r = as_rules("version: 1\nversion: 1\n");
    expect(&c, TD_ESCHEMA, 2, 1, "duplicate key 'op'");
    expect(&r, TD_ESCHEMA, 2, 1, "duplicate key 'version'");
    /* In nested mappings too. */
    c = as_call("op: sum\ntarget: cuda\nbuffers: {A: {scope: local, scope: "
                "local}}\ndst: A\nsrc: A\n");
    expect(&c, TD_ESCHEMA, 3, 29, "duplicate key 'scope'");
    r = as_rules("version: 1\nvariants:\n  - {name: local, name: local}\n");
    expect(&r, TD_ESCHEMA, 3, 19, "duplicate key 'name'");
}

static void test_documents(void **state)
{
    (void)state;
    /* One document per file, an empty one refused: the kind is named. */
    said c = as_call("op: sum\n---\nop: max\n");
    said r = as_rules("version: 1\n---\nversion: 1\n");
    expect(&c, TD_ESCHEMA, 2, 1, "a call file holds exactly one YAML document");
    expect(&r, TD_ESCHEMA, 2, 1,
           "a rules file holds exactly one YAML document");
    c = as_call("# nothing\n");
    r = as_rules("~\n");
    expect(&c, TD_ESCHEMA, 1, 1, "empty call file");
    expect(&r, TD_ESCHEMA, 1, 1, "empty rules file");
    /* Keys that are collections. */
    both("[a]: 1\n", TD_ESCHEMA, 1, 1, "mapping keys must be scalars");
}

/* ---- the helpers on their own --------------------------------------------- */

static const td_ylimits k_limits = {4096, 8, 0};

static void load(td_ydoc *doc, td_diag *d, const char *text)
{
    td_diag_clear(d);
    int rc = td__ydoc_load(doc, "t.yaml", "test file", text, strlen(text),
                           &k_limits, d);
    if (rc != 0)
        fail_msg("%d:%d: %s", d->line, d->col, d->msg);
}

static void test_limits(void **state)
{
    (void)state;
    td_ydoc doc;
    td_diag d;
    td_diag_clear(&d);
    static const td_ylimits tiny = {16, 2, 5};
    assert_int_equal(td__ydoc_load(&doc, "t", "test file", "a: 1\nbbbbbbbbbbbbbb: 2\n",
                                   20, &tiny, &d),
                     TD_ELIMIT);
    assert_string_equal(d.msg, "file is larger than the limit of 16 bytes");
    assert_int_equal(d.line, 1);
    assert_null(doc.root);
    /* Five nodes are allowed, the sixth is not. */
    td_diag_clear(&d);
    assert_int_equal(td__ydoc_load(&doc, "t", "test file", "[1, 2, 3, 4]", 12,
                                   &tiny, &d),
                     0);
    assert_int_equal(doc.nnodes, 5);
    td__ydoc_free(&doc);
    td_diag_clear(&d);
    assert_int_equal(td__ydoc_load(&doc, "t", "test file", "[1, 2, 3, 4, 5]",
                                   15, &tiny, &d),
                     TD_ELIMIT);
    assert_string_equal(d.msg, "more than 5 YAML nodes");
    assert_int_equal(d.col, 14);
    /* Depth 2: a list in a list is fine, a third level is not. */
    td_diag_clear(&d);
    assert_int_equal(td__ydoc_load(&doc, "t", "test file", "[[1]]", 5, &tiny,
                                   &d),
                     0);
    td__ydoc_free(&doc);
    td_diag_clear(&d);
    assert_int_equal(td__ydoc_load(&doc, "t", "test file", "[[[]]]", 6, &tiny,
                                   &d),
                     TD_ELIMIT);
    assert_string_equal(d.msg, "nesting deeper than 2 levels");
    assert_int_equal(d.col, 3);
}

/* TD_YAML_NODES_MAX through both loaders: at the limit the document is
 * read (and refused by the schema), one past it is refused by the limit. */
static void test_node_limit(void **state)
{
    (void)state;
    /* The root map, the key, the list: three nodes before the items. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t items = TD_YAML_NODES_MAX - 3 + (size_t)extra;
        td_buf b;
        td__buf_init(&b);
        td__buf_puts(&b, "op: [");
        for (size_t i = 0; i < items; i++)
            td__buf_puts(&b, i ? ",0" : "0");
        td__buf_puts(&b, "]\n");
        said c = as_call(b.data), r = as_rules(b.data);
        if (extra == 0) {
            assert_int_equal(c.rc, TD_ESCHEMA);
            assert_string_equal(c.d.msg, "missing required key 'target'");
            assert_int_equal(r.rc, TD_ESCHEMA);
            assert_string_equal(r.d.msg, "unknown top-level key 'op' "
                                         "(expected one of: variants, "
                                         "version)");
        } else {
            int col = 6 + 2 * (int)(items - 1);
            expect(&c, TD_ELIMIT, 1, col, "more than 65536 YAML nodes");
            expect(&r, TD_ELIMIT, 1, col, "more than 65536 YAML nodes");
        }
        td__buf_free(&b);
    }
}

/* The hint after an unknown name: the one close name, else the list. */
static void test_hint(void **state)
{
    (void)state;
    char buf[64];
    static const char *const tags[] = {"threadIdx.x", "threadIdx.y",
                                       "blockIdx.x"};
    assert_string_equal(td__yhint(buf, sizeof buf, "threadIdxx", tags, 3),
                        " (did you mean 'threadIdx.x'?)");
    /* Two names equally close: no guess between them, the list. */
    assert_string_equal(td__yhint(buf, sizeof buf, "threadIdx.w", tags, 3),
                        " (expected one of: threadIdx.x, threadIdx.y, "
                        "blockIdx.x)");
    /* A nearer name wins over one farther but still within reach. */
    static const char *const keys[] = {"arch", "launch"};
    assert_string_equal(td__yhint(buf, sizeof buf, "lauch", keys, 2),
                        " (did you mean 'launch'?)");
    /* Another case is the same name, however far td_suggest finds it. */
    static const char *const scopes[] = {"cta", "warp", NULL};
    assert_string_equal(td__yhint(buf, sizeof buf, "CTA", scopes, 3),
                        " (did you mean 'cta'?)");
    /* NULL entries are skipped; no candidates, no hint. */
    static const char *const some[] = {NULL, "a", NULL, "b"};
    assert_string_equal(td__yhint(buf, sizeof buf, "zz", some, 4),
                        " (expected one of: a, b)");
    assert_string_equal(td__yhint(buf, sizeof buf, "zz", some, 1), "");
    /* A list too long for the buffer ends in whole names and "...". */
    static const char *const many[] = {"alpha", "bravo", "charlie", "delta",
                                       "echo", "foxtrot", "golf", "hotel"};
    char small[48];
    assert_string_equal(td__yhint(small, sizeof small, "zz", many, 8),
                        " (expected one of: alpha, bravo, charlie, ...)");
    assert_string_equal(td__yhint(buf, 8, "zz", many, 8), "");
}

static void test_key_table(void **state)
{
    (void)state;
    td_ydoc doc;
    td_diag d;
    static const char *const names[] = {"a", "b", "c"};
    const td_ynode *vals[3], *unknown = NULL;

    load(&doc, &d, "b: 1\na: x\n");
    assert_int_equal(td__ymap_read(&doc, doc.root, names, 3, vals, NULL), 0);
    assert_string_equal(vals[0]->str, "x");
    assert_string_equal(vals[1]->str, "1");
    assert_null(vals[2]);
    assert_ptr_equal(td__ymap_get(doc.root, "a"), vals[0]);
    assert_null(td__ymap_get(doc.root, "c"));
    td__ydoc_free(&doc);

    /* Unknown keys: reported, or handed back for the caller's wording. */
    load(&doc, &d, "a: 1\nzz: 2\n");
    assert_int_equal(td__ymap_read(&doc, doc.root, names, 3, vals, &unknown),
                     TD_ESCHEMA);
    assert_int_equal(d.code, 0);
    assert_string_equal(unknown->str, "zz");
    assert_int_equal(td__ymap_read(&doc, doc.root, names, 3, vals, NULL),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown key 'zz' (expected one of: a, b, c)");
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 1);
    td__ydoc_free(&doc);
    static const char *const words[] = {"scope", "dtype", "shape"};
    load(&doc, &d, "dtype: 1\nscop: 2\n");
    assert_int_equal(td__ymap_read(&doc, doc.root, words, 3, vals, NULL),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "unknown key 'scop' (did you mean 'scope'?)");
    assert_int_equal(d.line, 2);
    td__ydoc_free(&doc);

    /* The first problem in document order wins. */
    load(&doc, &d, "a: 1\nc: 2\na: 3\nzz: 4\n");
    assert_int_equal(td__ymap_read(&doc, doc.root, names, 3, vals, NULL),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "duplicate key 'a'");
    assert_int_equal(d.line, 3);
    td__ydoc_free(&doc);

    /* Free-form maps: td__ydup and td__ykey. */
    load(&doc, &d, "{x: 1, y: 2, x: 3, \"n\\0l\": 4}");
    assert_int_equal(td__ydup(&doc, doc.root, 1), 0);
    assert_int_equal(td__ydup(&doc, doc.root, 2), TD_ESCHEMA);
    assert_string_equal(d.msg, "duplicate key 'x'");
    assert_int_equal(d.col, 14);
    td_diag_clear(&d);
    assert_int_equal(td__ykey(&doc, TD_YKEY(doc.root, 3)), TD_ESCHEMA);
    assert_string_equal(d.msg, "mapping key contains a NUL byte");
    td__ydoc_free(&doc);
}

static void test_scalars(void **state)
{
    (void)state;
    td_ydoc doc;
    td_diag d;
    load(&doc, &d,
         "[~, '', True, no, -12, +7, 9223372036854775808, 1.5e3, '3', x, [],"
         " {}, -9223372036854775808]");
    const td_ynode *const *k = (const td_ynode *const *)doc.root->kids;
    int64_t iv = 0;
    bool bv = false, ovf = false;
    assert_int_equal(td__yclass(k[0], NULL, NULL, NULL), TD_YT_NULL);
    assert_int_equal(td__yclass(k[1], NULL, NULL, NULL), TD_YT_STR);
    assert_int_equal(td__yclass(k[2], NULL, &bv, NULL), TD_YT_BOOL);
    assert_true(bv);
    assert_int_equal(td__yclass(k[3], NULL, NULL, NULL), TD_YT_STR);
    assert_int_equal(td__yclass(k[4], &iv, NULL, &ovf), TD_YT_INT);
    assert_int_equal(iv, -12);
    assert_false(ovf);
    assert_int_equal(td__yclass(k[5], &iv, NULL, NULL), TD_YT_INT);
    assert_int_equal(iv, 7);
    assert_int_equal(td__yclass(k[6], &iv, NULL, &ovf), TD_YT_INT);
    assert_true(ovf);
    assert_int_equal(td__yclass(k[7], NULL, NULL, NULL), TD_YT_FLOAT);
    assert_int_equal(td__yclass(k[8], NULL, NULL, NULL), TD_YT_STR);
    assert_int_equal(td__yclass(k[9], NULL, NULL, NULL), TD_YT_STR);
    assert_int_equal(td__yclass(k[10], NULL, NULL, NULL), TD_YT_SEQ);
    assert_int_equal(td__yclass(k[11], NULL, NULL, NULL), TD_YT_MAP);
    assert_int_equal(td__yclass(k[12], &iv, NULL, &ovf), TD_YT_INT);
    assert_false(ovf);
    assert_true(iv == INT64_MIN);

    assert_int_equal(td__yint(&doc, k[4], "n", -20, 20, &iv), 0);
    assert_int_equal(iv, -12);
    assert_int_equal(td__yint(&doc, k[4], "n", 0, 20, &iv), TD_ELIMIT);
    assert_string_equal(d.msg, "n is out of range (0 to 20)");
    td_diag_clear(&d);
    assert_int_equal(td__yint(&doc, k[6], "n", INT64_MIN, INT64_MAX, &iv),
                     TD_ELIMIT);
    td_diag_clear(&d);
    assert_int_equal(td__yint(&doc, k[8], "n", 0, 20, &iv), TD_ESCHEMA);
    assert_string_equal(d.msg, "n must be an integer, not a string");
    td_diag_clear(&d);
    assert_int_equal(td__ybool(&doc, k[2], "b", &bv), 0);
    assert_int_equal(td__ybool(&doc, k[4], "b", &bv), TD_ESCHEMA);
    assert_string_equal(d.msg, "b must be true or false, not an integer");
    td_diag_clear(&d);
    assert_int_equal(td__yname(&doc, k[9], "name", 63), 0);
    assert_int_equal(td__yname(&doc, k[1], "name", 63), TD_ESCHEMA);
    assert_string_equal(d.msg, "name must be a non-empty string");
    td_diag_clear(&d);
    assert_int_equal(td__yname(&doc, k[4], "name", 2), TD_ELIMIT);
    assert_string_equal(d.msg, "name is longer than 2 bytes");
    char str[4];
    td_diag_clear(&d);
    assert_int_equal(td__ystr(&doc, k[9], "s", str, sizeof str), 0);
    assert_string_equal(str, "x");
    assert_int_equal(td__ystr(&doc, k[8], "s", str, sizeof str), 0);
    assert_string_equal(str, "3");
    assert_int_equal(td__ystr(&doc, k[4], "s", str, sizeof str), TD_ESCHEMA);
    assert_string_equal(d.msg, "'s' must be a string, not an integer");
    td_diag_clear(&d);
    assert_int_equal(td__ystr(&doc, k[4], "s", str, 2), TD_ESCHEMA);
    td_diag_clear(&d);
    assert_int_equal(td__ynames(&doc, k[10], "l", 4, 63), 0);
    assert_int_equal(td__ynames(&doc, doc.root, "l", 4, 63), TD_ESCHEMA);
    assert_string_equal(d.msg, "l must be a list of strings");
    td__ydoc_free(&doc);

    load(&doc, &d, "[a, b, c, abcd, \"a\\0b\"]");
    td_diag_clear(&d);
    assert_int_equal(td__ystr(&doc, doc.root->kids[3], "s", str, sizeof str),
                     TD_ELIMIT);
    assert_string_equal(d.msg, "'s' is longer than 3 bytes");
    td_diag_clear(&d);
    assert_int_equal(td__ystr(&doc, doc.root->kids[4], "s", str, sizeof str),
                     TD_ESCHEMA);
    assert_string_equal(d.msg, "'s' contains a NUL byte");
    td_diag_clear(&d);
    assert_int_equal(td__ynames(&doc, doc.root, "l", 2, 63), TD_ELIMIT);
    assert_string_equal(d.msg, "l has more than 2 items");
    td_diag_clear(&d);
    assert_int_equal(td__ynames(&doc, doc.root, "l", 8, 63), TD_ESCHEMA);
    assert_string_equal(d.msg, "a list item must not contain control "
                               "characters");
    td__ydoc_free(&doc);

    /* Columns inside a string count code points after the quote. */
    load(&doc, &d, "k: \"\xc3\xa9t\xc3\xa9\"");
    const td_ynode *v = TD_YVAL(doc.root, 0);
    assert_true(v->quoted);
    assert_int_equal(v->col, 4);
    assert_int_equal(td__ycol_in(v, 0), 5);
    assert_int_equal(td__ycol_in(v, 3), 7);
    td__ydoc_free(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag),
        cmocka_unit_test(test_anchor),
        cmocka_unit_test(test_alias),
        cmocka_unit_test(test_syntax_error_column_in_code_points),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_documents),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_node_limit),
        cmocka_unit_test(test_key_table),
        cmocka_unit_test(test_hint),
        cmocka_unit_test(test_scalars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
