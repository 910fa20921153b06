/*
 * A fake registry for the registry tests: ops, predicates with every
 * argument type, and emitters that accept, decline or fail, so that rules
 * loading, dispatch and explain are tested without the real variants.
 */
#ifndef TD_TEST_REGISTRY_FAKE_H
#define TD_TEST_REGISTRY_FAKE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "tiledispatch.h"

/* Until codegen/ir.c provides the IR, these stand in for it; a real
 * definition replaces them when it is linked. */
__attribute__((weak)) td_ir *td_ir_new(void) { return malloc(16); }
__attribute__((weak)) void td_ir_free(td_ir *ir) { free(ir); }
__attribute__((weak)) int td_ir_status(const td_ir *ir)
{
    (void)ir;
    return 0;
}

/* How many times the counting predicate ran. */
static int fake_count;

static inline bool in_list(const td_args *a, const char *arg, const char *s)
{
    const char *const *items;
    size_t n = td_args_list(a, arg, &items);
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return true;
    return false;
}

static bool p_exec_scope(const td_call *c, const td_args *a, void *u,
                         td_reason *why)
{
    (void)u;
    if (in_list(a, "expected_scopes", td_exec_scope_name(c->scope)))
        return true;
    td_reason_set(why, "unsupported exec_scope %s",
                  td_exec_scope_name(c->scope));
    return false;
}

static bool p_sm_version(const td_call *c, const td_args *a, void *u,
                         td_reason *why)
{
    (void)u;
    int64_t min = td_args_int(a, "min_version", 0);
    if (c->sm_version >= min)
        return true;
    td_reason_set(why, "sm_version %d < %lld", c->sm_version, (long long)min);
    return false;
}

static bool p_dtype(const td_call *c, const td_args *a, void *u,
                    td_reason *why)
{
    (void)u;
    const char *want = td_args_string(a, "expected_dtype", "?");
    const char *have = td_dtype_name(c->buffers[0].dtype);
    if (strcmp(want, have) == 0)
        return true;
    td_reason_set(why, "dtype %s != %s", have, want);
    return false;
}

static bool p_flag(const td_call *c, const td_args *a, void *u,
                   td_reason *why)
{
    (void)c;
    (void)u;
    if (td_args_bool(a, "value", false))
        return true;
    td_reason_set(why, "flag is false");
    return false;
}

static bool p_storage_scope(const td_call *c, const td_args *a, void *u,
                            td_reason *why)
{
    (void)u;
    if (in_list(a, "expected_scope", c->buffers[0].scope))
        return true;
    char list[128];
    td_reason_set(why, "storage scope %s not in %s", c->buffers[0].scope,
                  td_args_list_text(a, "expected_scope", list, sizeof list));
    return false;
}

static bool p_always(const td_call *c, const td_args *a, void *u,
                     td_reason *why)
{
    (void)c, (void)a, (void)u, (void)why;
    return true;
}

static bool p_never(const td_call *c, const td_args *a, void *u,
                    td_reason *why)
{
    (void)c, (void)a, (void)u;
    td_reason_set(why, "never passes");
    return false;
}

static bool p_silent(const td_call *c, const td_args *a, void *u,
                     td_reason *why)
{
    (void)c, (void)a, (void)u, (void)why;
    return false;
}

static bool p_count(const td_call *c, const td_args *a, void *u,
                    td_reason *why)
{
    (void)c, (void)a, (void)u, (void)why;
    fake_count++;
    return true;
}

static bool p_local_valid(const td_call *c, const td_args *a, void *u,
                          td_reason *why)
{
    (void)a, (void)u;
    if (c->scope == TD_SCOPE_THREAD)
        return true;
    td_reason_set(why, "unsupported exec_scope %s for local reduction",
                  td_exec_scope_name(c->scope));
    return false;
}

static const td_arg_spec a_exec_scope[] = {
    {"expected_scopes", TD_ARG_STRING_LIST, true}};
static const td_arg_spec a_sm_version[] = {{"min_version", TD_ARG_INT, true}};
static const td_arg_spec a_dtype[] = {{"expected_dtype", TD_ARG_STRING, true}};
static const td_arg_spec a_flag[] = {{"value", TD_ARG_BOOL, true},
                                     {"note", TD_ARG_STRING, false},
                                     {"level", TD_ARG_INT, false}};
static const td_arg_spec a_storage[] = {
    {"expected_scope", TD_ARG_STRING_LIST, true}};

static const td_pred_desc fake_preds[] = {
    {"exec_scope", a_exec_scope, 1, p_exec_scope, NULL, NULL},
    {"sm_version", a_sm_version, 1, p_sm_version, NULL, NULL},
    {"dtype", a_dtype, 1, p_dtype, NULL, NULL},
    {"flag", a_flag, 3, p_flag, NULL, NULL},
    {"storage_scope", a_storage, 1, p_storage_scope, NULL, NULL},
    {"always", NULL, 0, p_always, NULL, NULL},
    {"never", NULL, 0, p_never, NULL, NULL},
    {"silent", NULL, 0, p_silent, NULL, NULL},
    {"count", NULL, 0, p_count, NULL, NULL},
};

/* Emitters: their user pointer says what to do. */
enum { E_ACCEPT, E_DECLINE, E_DECLINE_QUIET, E_FAIL, E_DECLINE_ACCOUNT };

static int fake_emit(const td_call *c, const td_op_desc *op, const void *plan,
                     td_ir *ir, void *user, td_reason *why)
{
    (void)c, (void)ir, (void)plan;
    assert_non_null(op);
    switch ((int)(intptr_t)user) {
    case E_DECLINE:
        td_reason_set(why, "not today");
        return TD_EDECLINED;
    case E_DECLINE_QUIET:
        return TD_EDECLINED;
    case E_DECLINE_ACCOUNT:
        /* A reason, then the emitter's account of it, a line each. */
        td_reason_set(why, "none fits\nfirst: too big\n\nsecond: wrong kind");
        return TD_EDECLINED;
    case E_FAIL:
        td_reason_set(why, "broken");
        return TD_EINVAL;
    default:
        return 0;
    }
}

static const td_pred_desc local_preds[] = {
    {"local_valid", NULL, 0, p_local_valid, NULL, NULL}};

static const td_impl_desc fake_impls[] = {
    {.name = "local", .emit = fake_emit, .user = (void *)(intptr_t)E_ACCEPT,
     .preds = local_preds, .npreds = 1},
    {.name = "shared", .emit = fake_emit, .user = (void *)(intptr_t)E_ACCEPT},
    {.name = "decliner", .emit = fake_emit,
     .user = (void *)(intptr_t)E_DECLINE},
    {.name = "quiet", .emit = fake_emit,
     .user = (void *)(intptr_t)E_DECLINE_QUIET},
    {.name = "failer", .emit = fake_emit, .user = (void *)(intptr_t)E_FAIL},
    {.name = "accountant", .emit = fake_emit,
     .user = (void *)(intptr_t)E_DECLINE_ACCOUNT},
};

static const td_op_desc fake_ops[] = {
    {.name = "sum", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM},
    {.name = "max", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MAX},
    {.name = "min", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MIN},
};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* A registry with the fakes; NULL when an allocation failed. */
static inline td_registry *fake_registry(void)
{
    td_registry *reg = NULL;
    if (td_registry_new_empty(&reg) != 0)
        return NULL;
    for (size_t i = 0; i < NELEMS(fake_ops); i++)
        if (td_register_op(reg, &fake_ops[i]) != 0)
            goto fail;
    for (size_t i = 0; i < NELEMS(fake_preds); i++)
        if (td_register_predicate(reg, &fake_preds[i]) != 0)
            goto fail;
    for (size_t i = 0; i < NELEMS(fake_impls); i++)
        if (td_register_impl(reg, &fake_impls[i]) != 0)
            goto fail;
    return reg;
fail:
    td_registry_free(reg);
    return NULL;
}

/* The seed-like call: B_local[0:1] = sum(A_local[0:4]) on cuda. */
static inline void fake_call(td_call *c, const char *op, td_exec_scope scope)
{
    memset(c, 0, sizeof *c);
    strcpy(c->file, "call.yaml");
    c->pos_op = (td_pos){2, 5};
    c->pos_target = (td_pos){3, 9};
    c->pos_dispatch = (td_pos){9, 11};
    strcpy(c->op, op);
    strcpy(c->target, "cuda");
    strcpy(c->arch, "sm_90a");
    c->sm_version = 90;
    c->scope = scope;
    c->nbuffers = 2;
    strcpy(c->buffers[0].name, "B_local");
    strcpy(c->buffers[0].scope, "local");
    c->buffers[0].dtype = TD_F32;
    c->buffers[0].ndim = 1;
    c->buffers[0].shape[0] = 1;
    strcpy(c->buffers[1].name, "A_local");
    strcpy(c->buffers[1].scope, "local");
    c->buffers[1].dtype = TD_F32;
    c->buffers[1].ndim = 1;
    c->buffers[1].shape[0] = 4;
    c->dst = (td_region){0, 1, {0}, {1}, {{0}}, {{0}}};
    c->src = (td_region){1, 1, {0}, {4}, {{0}}, {{0}}};
    c->naxes = 1;
    c->axes[0] = -1;
}

#endif
