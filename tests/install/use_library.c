/*
 * A program that uses the installed library the way a user would: only
 * <tiledispatch.h>, compiled and linked with `pkg-config tiledispatch`
 * (tests/install/install_test.sh builds it against the shared and the
 * static library).
 *
 *   use_library CALL.yaml RULES.yaml
 *
 * Dispatches the call with the compiled-in default rules and again with
 * RULES.yaml (the installed copy of them), prints the variant and the
 * emitted CUDA; exit 0 when both agree.
 */
#include <stdio.h>
#include <string.h>

#include <tiledispatch.h>

#if !TD_VERSION_AT_LEAST(0, 1, 0)
#error "tiledispatch headers older than 0.1.0"
#endif

static int fail(const char *what, const td_diag *d, int err)
{
    char buf[2048];
    td_diag_format(d, buf, sizeof buf);
    fprintf(stderr, "use_library: %s: %s\n%s", what, td_strerror(err), buf);
    return 1;
}

/* The variant chosen for `call` with `nrules` rules files (0: the
 * built-in rules); its CUDA body into *cuda (td_free). */
static int dispatch_with(const char *const *rules, size_t nrules,
                         const td_call *call, char *variant, size_t cap,
                         char **cuda)
{
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_registry_new(&reg);
    if (err != 0)
        return fail("td_registry_new", &d, err);
    err = nrules > 0 ? td_registry_load_rules(reg, rules, nrules, &d)
                     : td_registry_load_default_rules(reg, &d);
    td_dispatch_result res;
    if (err == 0)
        err = td_dispatch(reg, call, &res, &d);
    if (err != 0) {
        td_registry_free(reg);
        return fail("loading the rules or dispatching", &d, err);
    }
    snprintf(variant, cap, "%s", res.variant);
    err = td_ir_print(res.ir, TD_LANG_CUDA, 0, cuda, NULL);
    td_ir_free(res.ir);
    td_registry_free(reg);
    return err != 0 ? fail("td_ir_print", &d, err) : 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: use_library CALL.yaml RULES.yaml\n", stderr);
        return 2;
    }
    if (strcmp(td_version(), TD_VERSION_STRING) != 0 ||
        td_version_number() != TD_VERSION_NUMBER) {
        fprintf(stderr, "use_library: headers %s, library %s\n",
                TD_VERSION_STRING, td_version());
        return 1;
    }
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_call_load_file(argv[1], &call, &d);
    if (err != 0)
        return fail("td_call_load_file", &d, err);

    char v1[TD_NAME_MAX], v2[TD_NAME_MAX];
    char *cuda1 = NULL, *cuda2 = NULL;
    const char *rules[] = {argv[2]};
    int rc = dispatch_with(NULL, 0, call, v1, sizeof v1, &cuda1);
    if (rc == 0)
        rc = dispatch_with(rules, 1, call, v2, sizeof v2, &cuda2);
    if (rc == 0 && (strcmp(v1, v2) != 0 || strcmp(cuda1, cuda2) != 0)) {
        fprintf(stderr, "use_library: built-in rules chose %s, %s chose %s\n",
                v1, argv[2], v2);
        rc = 1;
    }
    if (rc == 0)
        printf("%s\n%s", v1, cuda1);
    td_free(cuda1);
    td_free(cuda2);
    td_call_free(call);
    return rc;
}
