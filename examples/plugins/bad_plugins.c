/*
 * Plugins that must not load, one per -DBAD_* flag, for the loader's
 * tests: a wrong ABI version, no ABI symbol, an init that fails after a
 * first registration, and one that registers a name the built-ins have.
 */
#include "tiledispatch/td_plugin.h"

static bool always(const td_call *call, const td_args *args, void *user,
                   td_reason *why)
{
    (void)call, (void)args, (void)user, (void)why;
    return true;
}

#if defined(BAD_BAD_ABI)
TD_PLUGIN_EXPORT const int td_plugin_abi_version;
TD_PLUGIN_EXPORT const int td_plugin_abi_version = TD_PLUGIN_ABI_VERSION + 1;
#elif !defined(BAD_NO_ABI)
TD_PLUGIN_ABI;
#endif

static const td_pred_desc first = {.name = "half_registered", .fn = always};
#if defined(BAD_TAKEN_NAME)
static const td_pred_desc second = {.name = "local_valid", .fn = always};
#endif

TD_PLUGIN_EXPORT int td_plugin_init(td_registry *reg)
{
    int rc = td_register_predicate(reg, &first);
    if (rc != 0)
        return rc;
#if defined(BAD_TAKEN_NAME)
    return td_register_predicate(reg, &second);
#elif defined(BAD_FAILING_INIT)
    return TD_EINVAL;
#else
    return 0;
#endif
}
