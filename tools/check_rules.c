/*
 * td-check-rules: the build step that checks rules/rules.yaml against what
 * C registers, so that an edit of the built-in rules that would not load
 * fails the build (with the positioned error) instead of every later
 * command.  Run by meson right after the library is built:
 *
 *   td-check-rules RULES.yaml NAME STAMP
 *
 * loads the text of RULES.yaml as the built-in rules would be loaded (over
 * the built-in modules, nothing else), naming it NAME in diagnostics, and
 * writes STAMP when it loads.  Exit 0 on success, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tiledispatch.h"

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *nb = realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    if (ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fputs("usage: td-check-rules RULES.yaml NAME STAMP\n", stderr);
        return 1;
    }
    size_t len = 0;
    char *text = read_all(argv[1], &len);
    if (text == NULL) {
        fprintf(stderr, "%s: error: cannot read the file\n", argv[2]);
        return 1;
    }
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_registry_new(&reg);
    if (err == 0)
        err = td_registry_load_rules_text(reg, argv[2], text, len, &d);
    free(text);
    td_registry_free(reg);
    if (err != 0) {
        char buf[2048];
        if (d.msg[0] == '\0')
            snprintf(buf, sizeof buf, "%s: error: %s\n", argv[2],
                     td_strerror(err));
        else
            td_diag_format(&d, buf, sizeof buf);
        fputs(buf, stderr);
        fprintf(stderr, "%s: the built-in rules do not load; fix the file "
                        "(tiledispatch validate %s checks it)\n",
                argv[2], argv[2]);
        return 1;
    }
    FILE *f = fopen(argv[3], "w");
    if (f == NULL || fputs("ok\n", f) == EOF || fclose(f) != 0) {
        fprintf(stderr, "td-check-rules: cannot write %s\n", argv[3]);
        return 1;
    }
    return 0;
}
