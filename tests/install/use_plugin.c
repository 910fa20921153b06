/*
 * Loads a plugin through the library API, as an embedder would: only
 * <tiledispatch.h>, built with `pkg-config tiledispatch`
 * (tests/install/install_test.sh builds it against the installed shared
 * library, and statically with the td_* functions exported for plugins).
 *
 *   use_plugin PLUGIN.so RULES.yaml CALL.yaml
 *
 * Prints the variant chosen for the call once the plugin and then the
 * rules are loaded.
 */
#include <stdio.h>

#include <tiledispatch.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fputs("usage: use_plugin PLUGIN.so RULES.yaml CALL.yaml\n", stderr);
        return 2;
    }
    td_registry *reg = NULL;
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    const char *rules[] = {argv[2]};
    td_dispatch_result res;
    int err = td_registry_new(&reg);
    if (err == 0)
        err = td_registry_load_plugin(reg, argv[1], &d);
    if (err == 0)
        err = td_registry_load_rules(reg, rules, 1, &d);
    if (err == 0)
        err = td_call_load_file(argv[3], &call, &d);
    if (err == 0)
        err = td_dispatch(reg, call, &res, &d);
    if (err == 0) {
        printf("%s\n", res.variant);
        td_ir_free(res.ir);
    } else {
        char buf[2048];
        td_diag_format(&d, buf, sizeof buf);
        fprintf(stderr, "use_plugin: %s\n%s", td_strerror(err), buf);
    }
    td_call_free(call);
    td_registry_free(reg);
    return err == 0 ? 0 : 1;
}
