/*
 * Limits (docs/limits.md): for each documented constant, an input exactly
 * at the limit is accepted and one just past it is refused with TD_ELIMIT
 * (TD_EPARSE for limits of the layout notation), the exact message and the position of
 * the offending token.  Limits that tests/call, tests/registry and
 * tests/call/test_layout_parse.c already test at and past the boundary are
 * listed in docs/limits.md and not repeated here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "corpus.h"

/* ---- helpers ------------------------------------------------------------- */

/* 1-based column of `needle` on line `line` of text (the occurrence number
 * `nth`, 1-based), so that expected positions follow the generated text. */
static int col_of(const char *text, int line, const char *needle, int nth)
{
    const char *p = text;
    for (int l = 1; l < line; l++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    const char *end = strchr(p, '\n');
    const char *q = p;
    for (int k = 0; k < nth; k++) {
        q = strstr(k ? q + 1 : q, needle);
        assert_non_null(q);
        assert_true(end == NULL || q < end);
    }
    return (int)(q - p) + 1;
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* Parses a call: rc 0, or the code, message and position expected. */
static void expect_call(const char *text, int want, int line, int col,
                        const char *msg)
{
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_call_parse("limits.yaml", text, strlen(text), &call, &d);
    if (rc != want)
        fail_msg("want %s, got %s: %d:%d: %s", td_err_name(want),
                 td_err_name(rc), d.line, d.col, d.msg);
    if (want == 0) {
        assert_non_null(call);
        td_call_free(call);
        return;
    }
    assert_null(call);
    assert_int_equal(d.code, want);
    assert_string_equal(d.file, "limits.yaml");
    assert_string_equal(d.msg, msg);
    assert_int_equal(d.line, line);
    assert_int_equal(d.col, col);
}

/* A call whose buffer A is `a_name` with the given shape (and layout), and
 * whose launch, axes and config lines are given; `extra` more buffers. */
static char *call_text(const char *a_name, const char *shape,
                       const char *layout, const char *launch, int extra,
                       const char *axes, const char *config)
{
    tstr t = {0};
    tstr_printf(&t, "op: sum\ntarget: cuda\nscope: thread\n"
                    "launch: {threadIdx.x: %s}\nbuffers:\n", launch);
    tstr_add(&t, "  ");
    tstr_add(&t, a_name);
    tstr_printf(&t, ": {scope: local, dtype: float32, shape: %s", shape);
    if (layout != NULL)
        tstr_printf(&t, ", layout: \"%s\"", layout);
    tstr_add(&t, "}\n  B: {scope: local, dtype: float32, shape: [1]}\n");
    for (int i = 0; i < extra; i++)
        tstr_printf(&t, "  X%d: {scope: local, dtype: int8, shape: [2]}\n",
                    i);
    tstr_add(&t, "dst: B\nsrc: ");
    tstr_add(&t, a_name);
    tstr_printf(&t, "\naxes: %s\n", axes);
    if (config != NULL)
        tstr_printf(&t, "config: %s\n", config);
    return t.s;
}

#define A_LINE 6 /* the line of buffer A in call_text */

/* ---- call files ---------------------------------------------------------- */

static void test_call_file_size(void **state)
{
    (void)state;
    char *base = call_text("A", "[4]", NULL, "1", 0, "[-1]", NULL);
    size_t blen = strlen(base);
    char *text = malloc(TD_CALL_FILE_MAX + 2);
    assert_non_null(text);
    memcpy(text, base, blen);
    /* Pad with one comment line to exactly TD_CALL_FILE_MAX bytes. */
    text[blen] = '#';
    memset(text + blen + 1, 'x', TD_CALL_FILE_MAX - blen - 2);
    text[TD_CALL_FILE_MAX - 1] = '\n';
    text[TD_CALL_FILE_MAX] = '\0';
    expect_call(text, 0, 0, 0, NULL);

    /* One byte more, through the file entry point as well. */
    text[TD_CALL_FILE_MAX] = '\n';
    text[TD_CALL_FILE_MAX + 1] = '\0';
    expect_call(text, TD_ELIMIT, 1, 1,
                "file is larger than the limit of 262144 bytes");
    char path[] = "/tmp/td_limits_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, TD_CALL_FILE_MAX + 1),
                     TD_CALL_FILE_MAX + 1);
    close(fd);
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_call_load_file(path, &call, &d), TD_ELIMIT);
    assert_null(call);
    assert_string_equal(d.file, path);
    assert_int_equal(d.line, 1);
    assert_string_equal(d.msg,
                        "file is larger than the limit of 262144 bytes");
    unlink(path);
    free(text);
    free(base);
}

static void test_call_depth(void **state)
{
    (void)state;
    /* The root map is level 1 and config level 2, so k lists nest to
     * 2 + k levels. */
    for (int k = TD_CALL_DEPTH_MAX - 2; k <= TD_CALL_DEPTH_MAX - 1; k++) {
        char *open = repeat('[', (size_t)k), *close = repeat(']', (size_t)k);
        tstr cfg = {0};
        tstr_printf(&cfg, "{x: %s%s}", open, close);
        char *text = call_text("A", "[4]", NULL, "1", 0, "[-1]", cfg.s);
        int line = A_LINE + 5;
        td_call *call = NULL;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_call_parse("limits.yaml", text, strlen(text), &call, &d);
        if (k + 2 <= TD_CALL_DEPTH_MAX) {
            /* At the limit the parser accepts; the schema refuses a list as
             * a config value. */
            assert_int_equal(rc, TD_ESCHEMA);
            assert_null(strstr(d.msg, "nesting"));
        } else {
            expect_call(text, TD_ELIMIT, line,
                        col_of(text, line, "[", TD_CALL_DEPTH_MAX - 1),
                        "nesting deeper than 32 levels");
        }
        free(text);
        free(cfg.s);
        free(open);
        free(close);
    }
}

static void test_call_name_length(void **state)
{
    (void)state;
    char *ok = repeat('N', TD_NAME_MAX - 1), *bad = repeat('N', TD_NAME_MAX);
    char *text = call_text(ok, "[4]", NULL, "1", 0, "[-1]", NULL);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    text = call_text(bad, "[4]", NULL, "1", 0, "[-1]", NULL);
    char msg[256];
    snprintf(msg, sizeof msg, "buffer name '%.*s...' is longer than 63 bytes",
             TD_NAME_MAX, bad);
    expect_call(text, TD_ELIMIT, A_LINE, 3, msg);
    free(text);

    /* Config keys and string values. */
    tstr cfg = {0};
    tstr_printf(&cfg, "{%s: %s}", ok, ok);
    text = call_text("A", "[4]", NULL, "1", 0, "[-1]", cfg.s);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    free(cfg.s);
    memset(&cfg, 0, sizeof cfg);
    tstr_printf(&cfg, "{k: %s}", bad);
    text = call_text("A", "[4]", NULL, "1", 0, "[-1]", cfg.s);
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_call_parse("limits.yaml", text, strlen(text), &call,
                                   &d),
                     TD_ELIMIT);
    assert_int_equal(d.line, A_LINE + 5);
    assert_int_equal(d.col, col_of(text, A_LINE + 5, "NNN", 1));
    free(text);
    free(cfg.s);
    free(ok);
    free(bad);
}

static void test_call_rank(void **state)
{
    (void)state;
    char *text = call_text("A", "[1, 1, 1, 1, 1, 1, 1, 4]", NULL, "1", 0,
                           "[-1]", NULL);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    text = call_text("A", "[1, 1, 1, 1, 1, 1, 1, 1, 4]", NULL, "1", 0,
                     "[-1]", NULL);
    expect_call(text, TD_ELIMIT, A_LINE, col_of(text, A_LINE, "[", 1),
                "rank 9 exceeds the limit of 8");
    free(text);
}

static void test_call_extent(void **state)
{
    (void)state;
    char *text = call_text("A", "[2147483648]", NULL, "1", 0, "[-1]", NULL);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    text = call_text("A", "[2147483649]", NULL, "1", 0, "[-1]", NULL);
    expect_call(text, TD_ELIMIT, A_LINE, col_of(text, A_LINE, "2147", 1),
                "shape extent 2147483649 exceeds the limit of 2147483648");
    free(text);
}

static void test_call_elements(void **state)
{
    (void)state;
    /* 2^20 * 2^20 = 2^40 elements: the largest buffer. */
    char *text = call_text("A", "[1048576, 1048576]", NULL, "1", 0, "[-1]",
                           NULL);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    text = call_text("A", "[1048576, 1048577]", NULL, "1", 0, "[-1]", NULL);
    expect_call(text, TD_ELIMIT, A_LINE, col_of(text, A_LINE, "1048577", 1),
                "buffer 'A' has more than 2^40 elements");
    free(text);
    /* Products that overflow int64 are caught the same way. */
    text = call_text("A", "[2147483648, 2147483648, 2147483648, 2147483648]",
                     NULL, "1", 0, "[-1]", NULL);
    expect_call(text, TD_ELIMIT, A_LINE, col_of(text, A_LINE, "2147", 2),
                "buffer 'A' has more than 2^40 elements");
    free(text);
}

static void test_call_buffers(void **state)
{
    (void)state;
    char *text = call_text("A", "[4]", NULL, "1", TD_MAX_BUFFERS - 2, "[-1]",
                           NULL);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    text = call_text("A", "[4]", NULL, "1", TD_MAX_BUFFERS - 1, "[-1]", NULL);
    expect_call(text, TD_ELIMIT, A_LINE + 1 + TD_MAX_BUFFERS - 1, 3,
                "too many buffers (max 16)");
    free(text);
}

static void test_call_config(void **state)
{
    (void)state;
    for (int n = TD_MAX_CONFIG; n <= TD_MAX_CONFIG + 1; n++) {
        tstr cfg = {0};
        tstr_add(&cfg, "{");
        for (int i = 0; i < n; i++)
            tstr_printf(&cfg, "%sk%02d: %d", i ? ", " : "", i, i);
        tstr_add(&cfg, "}");
        char *text = call_text("A", "[4]", NULL, "1", 0, "[-1]", cfg.s);
        if (n == TD_MAX_CONFIG)
            expect_call(text, 0, 0, 0, NULL);
        else
            expect_call(text, TD_ELIMIT, A_LINE + 5,
                        col_of(text, A_LINE + 5, "k16", 1),
                        "too many config entries (max 16)");
        free(text);
        free(cfg.s);
    }
}

static void test_call_axes(void **state)
{
    (void)state;
    const char *shape = "[2, 2, 2, 2, 2, 2, 2, 2]";
    char *text = call_text("A", shape, NULL, "1", 0,
                           "[0, 1, 2, 3, 4, 5, 6, 7]", NULL);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    text = call_text("A", shape, NULL, "1", 0, "[0, 1, 2, 3, 4, 5, 6, 7, -1]",
                     NULL);
    expect_call(text, TD_ELIMIT, A_LINE + 4, 7,
                "too many reduce axes (max 8)");
    free(text);
}

/* Source operands: TD_MAX_SRCS of them, then one more; named scalars'
 * names at and past TD_NAME_MAX - 1 bytes. */
static void test_call_srcs(void **state)
{
    (void)state;
    for (int n = TD_MAX_SRCS; n <= TD_MAX_SRCS + 1; n++) {
        tstr t = {0};
        tstr_add(&t, "op: add\ntarget: cuda\nbuffers:\n"
                     "  A: {scope: local, dtype: float32, shape: [4]}\n"
                     "dst: A\nsrcs: [");
        for (int i = 0; i < n; i++)
            tstr_add(&t, i ? ", A" : "A");
        tstr_add(&t, "]\n");
        if (n == TD_MAX_SRCS) {
            expect_call(t.s, 0, 0, 0, NULL);
        } else {
            char msg[64];
            snprintf(msg, sizeof msg, "'srcs' has %d operands (at most %d)", n,
                     TD_MAX_SRCS);
            expect_call(t.s, TD_ELIMIT, 6, 7, msg);
        }
        free(t.s);
    }
    char *ok = repeat('s', TD_NAME_MAX - 1), *bad = repeat('s', TD_NAME_MAX);
    for (int k = 0; k < 2; k++) {
        tstr t = {0};
        tstr_printf(&t, "op: add\ntarget: cuda\nbuffers:\n"
                        "  A: {scope: local, dtype: float32, shape: [4]}\n"
                        "dst: A\nsrcs: [{scalar: %s, dtype: float32}]\n",
                    k ? bad : ok);
        if (k == 0) {
            expect_call(t.s, 0, 0, 0, NULL);
        } else {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "srcs[0]: scalar name '%.*s...' is longer than 63 bytes",
                     TD_NAME_MAX, bad);
            expect_call(t.s, TD_ELIMIT, 6, 17, msg);
        }
        free(t.s);
    }
    free(ok);
    free(bad);
}

static void test_call_launch(void **state)
{
    (void)state;
    char *text = call_text("A", "[4]", NULL, "2147483647", 0, "[-1]", NULL);
    expect_call(text, 0, 0, 0, NULL);
    free(text);
    text = call_text("A", "[4]", NULL, "2147483648", 0, "[-1]", NULL);
    expect_call(text, TD_ELIMIT, 4, col_of(text, 4, "2147", 1),
                "launch extent 2147483648 for threadIdx.x exceeds the limit "
                "of 2147483647");
    free(text);
}

static void test_call_layout_iters(void **state)
{
    (void)state;
    /* 16 shard iters of extent 2 cover 2^16 elements. */
    for (int n = TD_MAX_LAYOUT_ITERS; n <= TD_MAX_LAYOUT_ITERS + 1; n++) {
        tstr l = {0}, shape = {0};
        tstr_add(&l, "S[");
        for (int i = 0; i < n; i++)
            tstr_add(&l, i ? ", 2" : "2");
        tstr_add(&l, "]");
        tstr_printf(&shape, "[%lld]", 1LL << n);
        char *text = call_text("A", shape.s, l.s, "1", 0, "[-1]", NULL);
        if (n == TD_MAX_LAYOUT_ITERS) {
            expect_call(text, 0, 0, 0, NULL);
        } else {
            /* The position is the iter past the limit, in the file. */
            int col = col_of(text, A_LINE, "S[", 1) +
                      2 + 3 * TD_MAX_LAYOUT_ITERS;
            /* The notation parser reports its limits as TD_EPARSE. */
            expect_call(text, TD_EPARSE, A_LINE, col,
                        "too many layout iters (max 16)");
        }
        free(text);
        free(l.s);
        free(shape.s);
    }
}

/* The layout text of a buffer is kept as written: at most 255 bytes. */
static void test_call_layout_text(void **state)
{
    (void)state;
    for (size_t n = sizeof(((td_buffer *)0)->layout_text) - 1;
         n <= sizeof(((td_buffer *)0)->layout_text); n++) {
        /* "S[4" + spaces + "]": whitespace may stand between tokens. */
        char *lay = repeat(' ', n);
        memcpy(lay, "S[4", 3);
        lay[n - 1] = ']';
        char *text = call_text("A", "[4]", lay, "1", 0, "[-1]", NULL);
        if (n < sizeof(((td_buffer *)0)->layout_text))
            expect_call(text, 0, 0, 0, NULL);
        else
            expect_call(text, TD_ELIMIT, A_LINE,
                        col_of(text, A_LINE, "\"S[4", 1),
                        "'layout' is longer than 255 bytes");
        free(text);
        free(lay);
    }
}

/* ---- rules files --------------------------------------------------------- */

static td_registry *registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new(&reg), 0);
    return reg;
}

static void expect_rules(const char *text, size_t len, int want, int line,
                         int col, const char *msg)
{
    td_registry *reg = registry();
    td_diag d;
    td_diag_clear(&d);
    int rc = td_registry_load_rules_text(reg, "rules.yaml", text, len, &d);
    if (rc != want)
        fail_msg("want %s, got %s: %d:%d: %s", td_err_name(want),
                 td_err_name(rc), d.line, d.col, d.msg);
    if (want != 0) {
        assert_string_equal(d.msg, msg);
        assert_int_equal(d.line, line);
        assert_int_equal(d.col, col);
        assert_int_equal(td_registry_rules(reg, NULL, 0), 0);
    }
    td_registry_free(reg);
}

static const char rules_head[] = "version: 1\nvariants:\n"
                                 "  - name: local\n"
                                 "    ops: [sum]\n"
                                 "    target: cuda\n"
                                 "    priority: 10\n"
                                 "    when:\n";
#define WHEN_LINE 8 /* the first line after rules_head */

static void test_rules_file_size(void **state)
{
    (void)state;
    char *text = malloc(TD_RULES_FILE_MAX + 2);
    assert_non_null(text);
    size_t hl = strlen(rules_head);
    memcpy(text, rules_head, hl);
    const char pred[] = "      - local_valid\n";
    memcpy(text + hl, pred, sizeof pred - 1);
    size_t at = hl + sizeof pred - 1;
    text[at] = '#';
    memset(text + at + 1, 'x', TD_RULES_FILE_MAX - at - 2);
    text[TD_RULES_FILE_MAX - 1] = '\n';
    expect_rules(text, TD_RULES_FILE_MAX, 0, 0, 0, NULL);
    text[TD_RULES_FILE_MAX] = '\n';
    expect_rules(text, TD_RULES_FILE_MAX + 1, TD_ELIMIT, 1, 1,
                 "file is larger than the limit of 1048576 bytes");
    free(text);
}

static void test_rules_depth(void **state)
{
    (void)state;
    /* Levels: root map 1, variants 2, entry 3, when 4, the predicate item
     * map 5, its args map 6, the list 7; then k - 1 more lists. */
    for (int k = TD_RULES_DEPTH_MAX - 6; k <= TD_RULES_DEPTH_MAX - 5; k++) {
        char *open = repeat('[', (size_t)k), *close = repeat(']', (size_t)k);
        tstr t = {0};
        tstr_add(&t, rules_head);
        tstr_printf(&t, "      - storage_scope: {expected_scope: %slocal%s}\n",
                    open, close);
        td_registry *reg = registry();
        td_diag d;
        td_diag_clear(&d);
        int rc = td_registry_load_rules_text(reg, "rules.yaml", t.s, t.len,
                                             &d);
        if (k + 6 <= TD_RULES_DEPTH_MAX) {
            assert_int_equal(rc, TD_ESCHEMA); /* a nested list argument */
            assert_null(strstr(d.msg, "nesting"));
        } else {
            expect_rules(t.s, t.len, TD_ELIMIT, WHEN_LINE,
                         col_of(t.s, WHEN_LINE, "[", k),
                         "nesting deeper than 16 levels");
        }
        td_registry_free(reg);
        free(t.s);
        free(open);
        free(close);
    }
}

static void test_rules_predicates(void **state)
{
    (void)state;
    for (int n = TD_MAX_PREDICATES; n <= TD_MAX_PREDICATES + 1; n++) {
        tstr t = {0};
        tstr_add(&t, rules_head);
        for (int i = 0; i < n; i++)
            tstr_add(&t, "      - local_valid\n");
        if (n == TD_MAX_PREDICATES)
            expect_rules(t.s, t.len, 0, 0, 0, NULL);
        else
            expect_rules(t.s, t.len, TD_ELIMIT, WHEN_LINE + TD_MAX_PREDICATES,
                         9, "more than 32 predicates in one when list");
        free(t.s);
    }
}

static void test_rules_list(void **state)
{
    (void)state;
    for (int n = TD_MAX_LIST; n <= TD_MAX_LIST + 1; n++) {
        tstr t = {0};
        tstr_add(&t, rules_head);
        tstr_add(&t, "      - storage_scope: {expected_scope: [");
        for (int i = 0; i < n; i++)
            tstr_printf(&t, "%ss%d", i ? ", " : "", i);
        tstr_add(&t, "]}\n");
        if (n == TD_MAX_LIST)
            expect_rules(t.s, t.len, 0, 0, 0, NULL);
        else
            expect_rules(t.s, t.len, TD_ELIMIT, WHEN_LINE,
                         col_of(t.s, WHEN_LINE, "[", 1),
                         "predicate 'storage_scope': argument "
                         "'expected_scope' has more than 32 items");
        free(t.s);
    }
}

static void test_rules_name_length(void **state)
{
    (void)state;
    for (size_t n = TD_NAME_MAX - 1; n <= TD_NAME_MAX; n++) {
        char *name = repeat('v', n);
        tstr t = {0};
        tstr_printf(&t, "version: 1\nvariants:\n  - name: %s\n    impl: local\n"
                        "    ops: [sum]\n    target: cuda\n    priority: 1\n",
                    name);
        if (n < TD_NAME_MAX)
            expect_rules(t.s, t.len, 0, 0, 0, NULL);
        else
            expect_rules(t.s, t.len, TD_ELIMIT, 3, 11,
                         "name is longer than 63 bytes");
        free(t.s);
        free(name);
    }
}

/* ---- TileLayout notation -------------------------------------------------- */

static void expect_layout(const char *text, int want, int col,
                          const char *msg)
{
    td_layout l;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_layout_parse(text, &l, &d);
    if (rc != want)
        fail_msg("%s: want %s, got %s: %d: %s", text, td_err_name(want),
                 td_err_name(rc), d.col, d.msg);
    if (want != 0) {
        assert_string_equal(d.msg, msg);
        assert_int_equal(d.col, col);
    }
}

static void test_layout_integers(void **state)
{
    (void)state;
    expect_layout("S[2147483648 : 2147483648@laneid] + 2147483648@warpid", 0,
                  0, NULL);
    expect_layout("S[2147483649]", TD_EPARSE, 3,
                  "integer too large in layout (max 2147483648)");
    expect_layout("S[4 : 2147483649@laneid]", TD_EPARSE, 7,
                  "integer too large in layout (max 2147483648)");
    /* Implied row-major strides obey the same bound (the canonical text
     * writes them out): 2^30 * 2 = 2^31 is the largest. */
    expect_layout("S[3, 1073741824, 2]", 0, 0, NULL);
    expect_layout("S[3, 1073741825, 2]", TD_EPARSE, 3, "layout is too large");
    /* Offsets on one axis add up to at most 2^31 as well. */
    expect_layout("S[4] + 2147483647@laneid + 1@laneid", 0, 0, NULL);
    expect_layout("S[4] + 2147483647@laneid + 2@laneid", TD_EPARSE, 28,
                  "layout offset too large");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_file_size),
        cmocka_unit_test(test_call_depth),
        cmocka_unit_test(test_call_name_length),
        cmocka_unit_test(test_call_rank),
        cmocka_unit_test(test_call_extent),
        cmocka_unit_test(test_call_elements),
        cmocka_unit_test(test_call_buffers),
        cmocka_unit_test(test_call_config),
        cmocka_unit_test(test_call_axes),
        cmocka_unit_test(test_call_srcs),
        cmocka_unit_test(test_call_launch),
        cmocka_unit_test(test_call_layout_iters),
        cmocka_unit_test(test_call_layout_text),
        cmocka_unit_test(test_rules_file_size),
        cmocka_unit_test(test_rules_depth),
        cmocka_unit_test(test_rules_predicates),
        cmocka_unit_test(test_rules_list),
        cmocka_unit_test(test_rules_name_length),
        cmocka_unit_test(test_layout_integers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
