/*
 * Plugins: variant modules in shared objects, loaded with dlopen.
 *
 * A plugin's td_plugin_init registers straight into the registry, under a
 * registration batch of its own (reg->stamp) and with its path as the
 * origin; when anything fails (no symbol, ABI mismatch, init error, a
 * taken name) the whole batch is taken back and the object closed, so a
 * failed load leaves the registry as it was.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "registry_internal.h"
#include "tiledispatch/td_plugin.h"

static int fail(td_diag *d, int code, const char *path, const char *fmt,
                const char *arg)
{
    char msg[TD_DIAG_MSG_MAX];
    snprintf(msg, sizeof msg, fmt, arg);
    return td__fail(d, code, path, "cannot load plugin: %s", msg);
}

int td_registry_load_plugin(td_registry *reg, const char *path,
                            td_diag *diag)
{
    if (reg == NULL || path == NULL || path[0] == '\0')
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    struct stat st;
    if (stat(path, &st) != 0)
        return fail(diag, TD_EIO, path, "%s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return fail(diag, TD_EIO, path, "%s", "is a directory");
    /* dlopen searches the library path for a bare name; a plugin is a
     * file the user names, so make the name a path. */
    char local[4096];
    const char *open_path = path;
    if (strchr(path, '/') == NULL) {
        if (snprintf(local, sizeof local, "./%s", path) >= (int)sizeof local)
            return fail(diag, TD_ELIMIT, path, "%s", "path too long");
        open_path = local;
    }

    td__plugin *pl = td__calloc(1, sizeof *pl);
    char *owned = td__strdup(path);
    if (pl == NULL || owned == NULL) {
        td__free(pl);
        td__free(owned);
        return td__fail(diag, TD_ENOMEM, path, "out of memory");
    }
    pl->path = owned;

    dlerror();
    pl->handle = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
    if (pl->handle == NULL) {
        const char *why = dlerror();
        int rc = fail(diag, TD_EIO, path, "not a loadable shared object (%s)",
                      why != NULL ? why : "unknown reason");
        td__plugins_close(pl);
        return rc;
    }
    const int *abi = dlsym(pl->handle, "td_plugin_abi_version");
    /* Function pointers through void *: POSIX guarantees this works. */
    int (*init)(td_registry *) = NULL;
    void *sym = dlsym(pl->handle, "td_plugin_init");
    memcpy(&init, &sym, sizeof init);
    int rc = 0;
    if (abi == NULL) {
        rc = fail(diag, TD_ESCHEMA, path,
                  "not a tiledispatch plugin: no symbol '%s' (define it "
                  "with TD_PLUGIN_ABI)",
                  "td_plugin_abi_version");
    } else if (init == NULL) {
        rc = fail(diag, TD_ESCHEMA, path,
                  "not a tiledispatch plugin: no symbol '%s'",
                  "td_plugin_init");
    } else if (*abi != TD_PLUGIN_ABI_VERSION) {
        char v[64];
        snprintf(v, sizeof v, "%d, this library has ABI %d", *abi,
                 TD_PLUGIN_ABI_VERSION);
        rc = fail(diag, TD_ESCHEMA, path, "built for plugin ABI %s", v);
    }
    if (rc != 0) {
        td__plugins_close(pl);
        return rc;
    }

    /* Each load is one batch: its registrations carry this stamp. */
    const char *was_origin = reg->origin;
    unsigned was_stamp = reg->stamp;
    unsigned stamp = ++reg->last_stamp; /* 0: built-ins and application */
    reg->conflict[0] = '\0';
    reg->origin = pl->path;
    reg->stamp = stamp;
    int init_rc = init(reg);
    reg->origin = was_origin;
    reg->stamp = was_stamp;
    if (init_rc != 0) {
        td__registry_drop_stamp(reg, stamp);
        rc = td__fail(diag, init_rc < 0 ? init_rc : TD_EINTERNAL, path,
                      "cannot load plugin: td_plugin_init failed: %s (%s)",
                      td_err_name(init_rc < 0 ? init_rc : TD_EINTERNAL),
                      init_rc == TD_EEXIST && reg->conflict[0] != '\0'
                          ? reg->conflict
                          : td_strerror(init_rc < 0 ? init_rc : TD_EINTERNAL));
        td__plugins_close(pl);
        return rc;
    }
    pl->next = reg->plugins;
    reg->plugins = pl;
    return 0;
}
