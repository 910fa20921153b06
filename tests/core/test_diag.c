/*
 * Diagnostics and error codes the front-ends share: which codes blame the
 * input (td_err_is_input, the table's input column), and the source line
 * of a diagnostic filled afterwards from given text or from its file
 * (td_diag_fill_source_line).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch/td_error.h"

static void test_is_input(void **state)
{
    (void)state;
    static const int input[] = {TD_EINVAL, TD_EPARSE, TD_ESCHEMA, TD_ELIMIT,
                                TD_EIO,    TD_ENOENT, TD_EEXIST};
    static const int other[] = {TD_OK,       TD_ENOMEM,    TD_ENOMATCH,
                                TD_EDECLINED, TD_EINTERNAL, -99, 7};
    for (size_t i = 0; i < sizeof input / sizeof *input; i++)
        assert_int_equal(td_err_is_input(input[i]), 1);
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        assert_int_equal(td_err_is_input(other[i]), 0);
}

static td_diag at(const char *file, int line, int col)
{
    td_diag d;
    td_diag_clear(&d);
    d.code = TD_ENOENT;
    snprintf(d.file, sizeof d.file, "%s", file);
    d.line = line;
    d.col = col;
    snprintf(d.msg, sizeof d.msg, "unknown op 'sun'");
    return d;
}

static void test_fill_from_text(void **state)
{
    (void)state;
    static const char text[] = "version: 1\r\nop: sun\n\tbad\x01line\nlast";
    size_t len = strlen(text);
    td_diag d = at("<Call>", 2, 5);
    assert_int_equal(td_diag_fill_source_line(&d, text, len), 0);
    assert_string_equal(d.source_line, "op: sun");
    char buf[512];
    td_diag_format(&d, buf, sizeof buf);
    assert_string_equal(buf, "<Call>:2:5: error: unknown op 'sun'\n"
                             "  op: sun\n"
                             "      ^\n");
    /* Set already: kept. */
    assert_int_equal(td_diag_fill_source_line(&d, "x\ny\n", 4), 0);
    assert_string_equal(d.source_line, "op: sun");
    /* The first line (its CR dropped), a control character shown as '?',
     * a last line without a break. */
    d = at("<Call>", 1, 1);
    assert_int_equal(td_diag_fill_source_line(&d, text, len), 0);
    assert_string_equal(d.source_line, "version: 1");
    d = at("<Call>", 3, 1);
    assert_int_equal(td_diag_fill_source_line(&d, text, len), 0);
    assert_string_equal(d.source_line, "\tbad?line");
    d = at("<Call>", 4, 1);
    assert_int_equal(td_diag_fill_source_line(&d, text, len), 0);
    assert_string_equal(d.source_line, "last");
    /* No such line, no line at all: nothing changes. */
    d = at("<Call>", 5, 1);
    assert_int_equal(td_diag_fill_source_line(&d, text, len), TD_ENOENT);
    assert_string_equal(d.source_line, "");
    d = at("<Call>", 2, 1);
    assert_int_equal(td_diag_fill_source_line(&d, "one\n", 4), TD_ENOENT);
    d = at("<Call>", 0, 0);
    assert_int_equal(td_diag_fill_source_line(&d, text, len), TD_EINVAL);
    assert_int_equal(td_diag_fill_source_line(NULL, text, len), TD_EINVAL);
}

static void test_fill_from_file(void **state)
{
    (void)state;
    char path[] = "/tmp/td_test_diag_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    /* A line longer than the field, then the one the message is about. */
    for (int i = 0; i < 3 * TD_DIAG_LINE_MAX; i++)
        fputc('x', f);
    fputs("\nop: sun\n", f);
    fclose(f);

    td_diag d = at(path, 2, 5);
    assert_int_equal(td_diag_fill_source_line(&d, NULL, 0), 0);
    assert_string_equal(d.source_line, "op: sun");
    d = at(path, 1, 1);
    assert_int_equal(td_diag_fill_source_line(&d, NULL, 0), 0);
    assert_int_equal(strlen(d.source_line), TD_DIAG_LINE_MAX - 1);
    d = at(path, 3, 1);
    assert_int_equal(td_diag_fill_source_line(&d, NULL, 0), TD_ENOENT);
    remove(path);
    d = at(path, 2, 5);
    assert_int_equal(td_diag_fill_source_line(&d, NULL, 0), TD_EIO);
    assert_string_equal(d.source_line, "");
    d = at("", 2, 5);
    assert_int_equal(td_diag_fill_source_line(&d, NULL, 0), TD_EINVAL);
}

/* td_suggest: typos within two edits (a swap counts one), never an exact
 * match, nothing for a short name far from every candidate. */
static void test_suggest(void **state)
{
    (void)state;
    static const char *const names[] = {"shared_rows", "shared", NULL,
                                        "local", "float32", "float16"};
    const size_t n = sizeof names / sizeof *names;
    assert_string_equal(td_suggest("shared_row", names, n), "shared_rows");
    assert_string_equal(td_suggest("shraed", names, n), "shared");
    assert_string_equal(td_suggest("lcoal", names, n), "local");
    assert_string_equal(td_suggest("float23", names, n), "float32");
    assert_string_equal(td_suggest("flaot16", names, n), "float16");
    assert_null(td_suggest("shared", names, n));
    assert_null(td_suggest("fp32", names, n));
    assert_null(td_suggest("x", names, n));
    assert_null(td_suggest("ab", (const char *const[]){"cd"}, 1));
    assert_null(td_suggest(NULL, names, n));
    assert_null(td_suggest("local", NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_input),
        cmocka_unit_test(test_fill_from_text),
        cmocka_unit_test(test_fill_from_file),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
