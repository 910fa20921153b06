/*
 * The elementwise op table and the `smem` variant built as a plugin from
 * the same sources as the library's (variants/ewise_ops.c,
 * variants/ewise_smem.c), against the public headers only: it registers
 * them with the calls any plugin makes.  test_ewise_plugin.c loads it into
 * a registry created empty.
 */
#include "tiledispatch/td_plugin.h"

#include "ewise.h"
#include "variants.h"

TD_PLUGIN_ABI;

TD_PLUGIN_EXPORT int td_plugin_init(td_registry *reg)
{
    int rc;
    for (size_t i = 0; i < td__ewise_ops_count; i++)
        if ((rc = td_register_op(reg, &td__ewise_ops[i])) != 0)
            return rc;
    return td_register_impl(reg, &td__variant_ewise_smem);
}
