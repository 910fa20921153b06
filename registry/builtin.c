/*
 * The built-in registrations, walked once by td_registry_new (Lua's
 * linit.c): each op family's ops from its table, the generic predicates,
 * then the variant modules, each of which brings its own predicates.
 *
 * td_registry_new lives here, not in registry.c, so that a program that
 * only uses td_registry_new_empty does not link the built-in variants.
 */
#include "predicates.h"
#include "registry_internal.h"
#include "variants.h"
#include "copy.h"
#include "ewise.h"
#include "gemm.h"
#include "permute.h"
#include "reduce_ops.h"

/* Registration order does not matter: rules bind impls by name. */
#define TD__MODULE_ENTRY(desc) &desc,
static const td_impl_desc *const builtin_impls[] = {
    TD_BUILTIN_MODULES(TD__MODULE_ENTRY)
};
#undef TD__MODULE_ENTRY

static int register_all(td_registry *reg)
{
    int rc;
    /* Each family's ops, from its table (variants/reduce_ops.h,
     * variants/ewise_table.h, variants/copy.h, variants/gemm.h,
     * variants/permute.h). */
    for (size_t i = 0; i < td__reduce_ops_count; i++)
        if ((rc = td_register_op(reg, &td__reduce_ops[i])) != 0)
            return rc;
    for (size_t i = 0; i < td__ewise_ops_count; i++)
        if ((rc = td_register_op(reg, &td__ewise_ops[i])) != 0)
            return rc;
    for (size_t i = 0; i < td__copy_ops_count; i++)
        if ((rc = td_register_op(reg, &td__copy_ops[i])) != 0)
            return rc;
    for (size_t i = 0; i < td__gemm_ops_count; i++)
        if ((rc = td_register_op(reg, &td__gemm_ops[i])) != 0)
            return rc;
    for (size_t i = 0; i < td__permute_ops_count; i++)
        if ((rc = td_register_op(reg, &td__permute_ops[i])) != 0)
            return rc;
    for (size_t i = 0; i < td__generic_predicates_count; i++)
        if ((rc = td_register_predicate(reg, &td__generic_predicates[i])) != 0)
            return rc;
    for (size_t i = 0; i < sizeof builtin_impls / sizeof *builtin_impls; i++)
        if ((rc = td_register_impl(reg, builtin_impls[i])) != 0)
            return rc;
    return 0;
}

int td__register_builtins(td_registry *reg)
{
    const char *was = reg->origin;
    reg->origin = "built-in";
    reg->builtin_batch = true;
    int rc = register_all(reg);
    reg->builtin_batch = false;
    reg->origin = was;
    return rc;
}

int td_registry_new(td_registry **out)
{
    int rc = td_registry_new_empty(out);
    if (rc != 0)
        return rc;
    rc = td__register_builtins(*out);
    if (rc != 0) {
        td_registry_free(*out);
        *out = NULL;
    }
    return rc;
}
