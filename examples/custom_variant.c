/*
 * An application that registers a variant module in C before it loads the
 * rules: the `pairwise` module of examples/plugins/pairwise.c, linked in.
 * It loads the built-in rules, then the overlay examples/rules-with-
 * pairwise.yaml, which adds `pairwise` above `local` for short vectors.
 *
 *   custom_variant OVERLAY.yaml CALL.yaml [cuda|tirx]
 *
 * prints the chosen variant and the emitted code.
 */
#include <stdio.h>

#include "tiledispatch.h"

/* examples/plugins/pairwise.c */
extern const td_impl_desc pairwise_impl;

/* ---- a small driver ----------------------------------------------------- */

static int fail(const td_diag *d)
{
    char buf[2048];
    td_diag_format(d, buf, sizeof buf);
    fputs(buf, stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OVERLAY.yaml CALL.yaml [cuda|tirx]\n",
                argv[0]);
        return 2;
    }
    td_lang lang = (argc > 3 && argv[3][0] == 't') ? TD_LANG_TIRX
                                                   : TD_LANG_CUDA;
    td_diag d;
    td_diag_clear(&d);
    td_registry *reg = NULL;
    td_call *call = NULL;
    int rc = 2;

    /* 1. Built-ins plus our module, before any rules are loaded: the
     *    loader checks every name the rules use against what C registered. */
    if (td_registry_new(&reg) != 0 || td_register_impl(reg, &pairwise_impl))
        goto out;
    /* 2. The built-in rules, then the overlay that adds "pairwise". */
    const char *paths[] = {argv[1]};
    if (td_registry_load_default_rules(reg, &d) != 0 ||
        td_registry_add_rules(reg, paths, 1, &d) != 0) {
        rc = fail(&d);
        goto out;
    }
    /* 3. A call, dispatched and printed. */
    if (td_call_load_file(argv[2], &call, &d) != 0) {
        rc = fail(&d);
        goto out;
    }
    td_dispatch_result res;
    int err = td_dispatch(reg, call, &res, &d);
    if (err != 0) {
        rc = err == TD_ENOMATCH ? 1 : fail(&d);
        if (err == TD_ENOMATCH)
            fprintf(stderr, "%s\n", d.msg);
        goto out;
    }
    char *body = NULL;
    err = td_ir_print(res.ir, lang, 0, &body, NULL);
    td_ir_free(res.ir);
    if (err != 0) {
        rc = 3;
        goto out;
    }
    printf("variant: %s\n%s", res.variant, body);
    td_free(body);
    rc = 0;
out:
    td_call_free(call);
    td_registry_free(reg);
    return rc;
}
