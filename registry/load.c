/*
 * The layered registry load the front-ends share: the built-in variant
 * modules, the plugins of TILEDISPATCH_PLUGINS then the caller's, the
 * built-in rules, then the rules layers of TILEDISPATCH_RULES then the
 * caller's.  The command line and the Python package both build their
 * registry here, so the two environment variables mean the same to both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

/* The non-empty ':'-separated entries of the variable `name` (when
 * use_env) then the extra ones, in one array; the entries of the variable
 * point into *copy.  The caller frees both (NULL when unused). */
static int layers(const char *name, bool use_env, const char *const *extra,
                  size_t nextra, char **copy, const char ***out, size_t *n,
                  size_t *nenv)
{
    *copy = NULL;
    *out = NULL;
    *n = 0;
    *nenv = 0;
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
    *nenv = k;
    for (size_t i = 0; i < nextra; i++)
        all[k++] = extra[i];
    *out = all;
    *n = k;
    return 0;
}

/* When the diagnostic is about one of the first nenv files (those of the
 * variable `var`), says so: a file the user did not name on the command
 * line is otherwise a puzzle. */
static void name_env(td_diag *d, const char *var, const char *const *files,
                     size_t nenv)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < nenv; i++) {
        if (strcmp(d->file, files[i]) != 0)
            continue;
        size_t len = strlen(d->msg);
        snprintf(d->msg + len, sizeof d->msg - len, " (a file named by %s)",
                 var);
        return;
    }
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
    size_t nplugins = 0, nrules = 0, nenv_plugins = 0, nenv_rules = 0;
    td_registry *reg = NULL;
    int err = layers("TILEDISPATCH_PLUGINS", !opts->no_env_plugins,
                     opts->plugins, opts->nplugins, &plugin_copy, &plugins,
                     &nplugins, &nenv_plugins);
    if (err == 0)
        err = layers("TILEDISPATCH_RULES", !opts->no_env_rules, opts->rules,
                     opts->nrules, &rules_copy, &rules, &nrules, &nenv_rules);
    if (err == 0)
        err = td_registry_new(&reg);
    for (size_t i = 0; err == 0 && i < nplugins; i++)
        if ((err = td_registry_load_plugin(reg, plugins[i], diag)) != 0)
            name_env(diag, "TILEDISPATCH_PLUGINS", plugins,
                     i < nenv_plugins ? nenv_plugins : 0);
    if (err == 0 && !opts->no_default_rules)
        err = td_registry_load_default_rules(reg, diag);
    if (err == 0 && nrules > 0 &&
        (err = td_registry_add_rules(reg, rules, nrules, diag)) != 0)
        name_env(diag, "TILEDISPATCH_RULES", rules, nenv_rules);
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
