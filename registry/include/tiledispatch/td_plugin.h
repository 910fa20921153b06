/*
 * tiledispatch: writing a variant-module plugin.
 *
 * A plugin is a shared object (meson: shared_module) built against the
 * installed headers.  It defines, once:
 *
 *     #include "tiledispatch/td_plugin.h"
 *
 *     TD_PLUGIN_ABI;                      // the ABI version it was built for
 *
 *     TD_PLUGIN_EXPORT int td_plugin_init(td_registry *reg)
 *     {
 *         return td_register_impl(reg, &my_impl);
 *     }
 *
 * and is loaded with `tiledispatch --plugin PATH.so ...`, the
 * TILEDISPATCH_PLUGINS variable (colon-separated paths) or
 * td_registry_load_plugin().  The plugin does not link the library: the
 * td_* functions it calls come from the program that loads it.
 * Descriptors (names, schemas, functions) must live in the plugin's static
 * data: the registry points at them until it is freed.
 */
#ifndef TILEDISPATCH_TD_PLUGIN_H
#define TILEDISPATCH_TD_PLUGIN_H

#include "tiledispatch/td_module.h"
#include "tiledispatch/td_registry.h"

/* Bumped whenever a struct a plugin sees (td_call, td_impl_desc,
 * td_pred_desc, ...) or a function's meaning changes incompatibly. */
#define TD_PLUGIN_ABI_VERSION 4

#if defined(__GNUC__)
#define TD_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TD_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
#define TD__PLUGIN_EXTERN_C extern "C"
#else
#define TD__PLUGIN_EXTERN_C
#endif

/* Defines the ABI version symbol the loader checks. */
#define TD_PLUGIN_ABI                                                      \
    TD__PLUGIN_EXTERN_C TD_PLUGIN_EXPORT const int td_plugin_abi_version; \
    TD__PLUGIN_EXTERN_C TD_PLUGIN_EXPORT const int td_plugin_abi_version = \
        TD_PLUGIN_ABI_VERSION

#ifdef __cplusplus
extern "C" {
#endif
/* The entry point every plugin defines. */
TD_PLUGIN_EXPORT int td_plugin_init(td_registry *reg);
#ifdef __cplusplus
}
#endif

#endif
