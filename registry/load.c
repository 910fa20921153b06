/*
 * The layered registry load the front-ends share: the built-in variant
 * modules, the plugins of TILEDISPATCH_PLUGINS then the caller's, the
 * built-in rules, then the rules layers of TILEDISPATCH_RULES then the
 * caller's.  The command line and the Python package both build their
 * registry here, so the two environment variables mean the same to both.
 */
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

/* The non-empty ':'-separated entries of the variable `name` (when
 * use_env) then the extra ones, in one array; the entries of the variable
 * point into *copy.  The caller frees both (NULL when unused). */
static int layers(const char *name, bool use_env, const char *const *extra,
                  size_t nextra, char **copy, const char ***out, size_t *n)
{
    *copy = NULL;
    *out = NULL;
    *n = 0;
    const char *env = use_env ? getenv(name) : NULL;
    size_t most = 0;
    if (env != NULL && env[0] != '\0') {
        *copy = td__strdup(env);
        if (*copy == NULL)
            return TD_ENOMEM;
        most = 1;
        for (const char *p = env; *p != '\0'; p++)
            most += *p == ':';
    }
    if (most + nextra == 0)
        return 0;
    const char **all = td__calloc(most + nextra, sizeof *all);
    if (all == NULL)
        return TD_ENOMEM;
    size_t k = 0;
    for (char *p = *copy; p != NULL;) {
        char *colon = strchr(p, ':');
        if (colon != NULL)
            *colon = '\0';
        if (*p != '\0')
            all[k++] = p;
        p = colon != NULL ? colon + 1 : NULL;
    }
    for (size_t i = 0; i < nextra; i++)
        all[k++] = extra[i];
    *out = all;
    *n = k;
    return 0;
}

int td_registry_load(const td_load_options *opts, td_registry **out,
                     td_diag *diag)
{
    static const td_load_options none;
    if (out != NULL)
        *out = NULL;
    if (out == NULL)
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    if (opts == NULL)
        opts = &none;
    char *plugin_copy = NULL, *rules_copy = NULL;
    const char **plugins = NULL, **rules = NULL;
    size_t nplugins = 0, nrules = 0;
    td_registry *reg = NULL;
    int err = layers("TILEDISPATCH_PLUGINS", !opts->no_env_plugins,
                     opts->plugins, opts->nplugins, &plugin_copy, &plugins,
                     &nplugins);
    if (err == 0)
        err = layers("TILEDISPATCH_RULES", !opts->no_env_rules, opts->rules,
                     opts->nrules, &rules_copy, &rules, &nrules);
    if (err == 0)
        err = td_registry_new(&reg);
    for (size_t i = 0; err == 0 && i < nplugins; i++)
        err = td_registry_load_plugin(reg, plugins[i], diag);
    if (err == 0 && !opts->no_default_rules)
        err = td_registry_load_default_rules(reg, diag);
    if (err == 0 && nrules > 0)
        err = td_registry_add_rules(reg, rules, nrules, diag);
    td__free(plugins);
    td__free(rules);
    td__free(plugin_copy);
    td__free(rules_copy);
    if (err != 0) {
        td_registry_free(reg);
        return err;
    }
    *out = reg;
    return 0;
}
