/*
 * The registry: C registrations of ops, predicates and variant modules,
 * bound predicate arguments, and read access to the loaded rules table.
 * Loading rules lives in rules.c, dispatch in dispatch.c, explain in
 * explain.c.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

/* ---- reasons and names ------------------------------------------------- */

const char *td_cand_status_name(td_cand_status s)
{
    switch (s) {
    case TD_CAND_SELECTED: return "selected";
    case TD_CAND_REJECTED: return "rejected";
    case TD_CAND_DECLINED: return "declined";
    case TD_CAND_FAILED: return "failed";
    case TD_CAND_NOT_TRIED: return "not_tried";
    case TD_CAND_DISABLED: return "disabled";
    }
    return "?";
}

/* ---- life cycle -------------------------------------------------------- */

int td_registry_new_empty(td_registry **out)
{
    *out = td__calloc(1, sizeof **out);
    return *out ? 0 : TD_ENOMEM;
}

void td_registry_free(td_registry *reg)
{
    if (reg == NULL)
        return;
    td__rules_free(reg->rules);
    td__op_entry *op, *otmp;
    HASH_ITER(hh, reg->ops, op, otmp) {
        HASH_DEL(reg->ops, op);
        td__free(op->name);
        td__free(op);
    }
    td__pred_entry *p, *ptmp;
    HASH_ITER(hh, reg->preds, p, ptmp) {
        HASH_DEL(reg->preds, p);
        td__free(p);
    }
    td__impl_entry *im, *itmp;
    HASH_ITER(hh, reg->impls, im, itmp) {
        HASH_DEL(reg->impls, im);
        td__free(im->name);
        td__free(im);
    }
    td__plugins_close(reg->plugins);
    td__free(reg);
}

void td__plugins_close(td__plugin *p)
{
    while (p != NULL) {
        td__plugin *next = p->next;
        if (p->handle != NULL)
            dlclose(p->handle);
        td__free(p->path);
        td__free(p);
        p = next;
    }
}

/* ---- registration ------------------------------------------------------ */

static const char *origin_now(const td_registry *reg)
{
    return reg->origin != NULL ? reg->origin : "application";
}

/* Notes a refused name for the plugin loader's message; returns
 * TD_EEXIST. */
static int taken(td_registry *reg, const char *kind, const char *name,
                 const char *by)
{
    snprintf(reg->conflict, sizeof reg->conflict,
             "%s '%s' is already registered (by %s)", kind, name, by);
    return TD_EEXIST;
}

static bool name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strlen(name) < TD_NAME_MAX;
}

int td_register_op(td_registry *reg, const td_op_desc *op)
{
    if (reg == NULL || op == NULL || !name_ok(op->name))
        return TD_EINVAL;
    td__op_entry *have = NULL;
    HASH_FIND(hh, reg->ops, op->name, strlen(op->name), have);
    if (have != NULL)
        return taken(reg, "op", op->name, have->origin);
    td__op_entry *e = td__calloc(1, sizeof *e);
    if (e == NULL)
        return TD_ENOMEM;
    e->name = td__strdup(op->name);
    if (e->name == NULL) {
        td__free(e);
        return TD_ENOMEM;
    }
    e->desc = *op;
    e->desc.name = e->name;
    e->origin = origin_now(reg);
    e->stamp = reg->stamp;
    unsigned before = HASH_COUNT(reg->ops);
    HASH_ADD_KEYPTR(hh, reg->ops, e->name, strlen(e->name), e);
    if (HASH_COUNT(reg->ops) == before) {
        td__free(e->name);
        td__free(e);
        return TD_ENOMEM;
    }
    return 0;
}

const td_op_desc *td_registry_op(const td_registry *reg, const char *name)
{
    if (reg == NULL || name == NULL)
        return NULL;
    td__op_entry *e = NULL;
    HASH_FIND(hh, reg->ops, name, strlen(name), e);
    return e ? &e->desc : NULL;
}

const td__pred_entry *td__registry_pred(const td_registry *reg,
                                        const char *name)
{
    td__pred_entry *e = NULL;
    HASH_FIND(hh, reg->preds, name, strlen(name), e);
    return e;
}

const td__impl_entry *td__registry_impl(const td_registry *reg,
                                        const char *name)
{
    td__impl_entry *e = NULL;
    HASH_FIND(hh, reg->impls, name, strlen(name), e);
    return e;
}

static bool pred_desc_ok(const td_pred_desc *p)
{
    if (p == NULL || !name_ok(p->name) || p->fn == NULL)
        return false;
    if (p->shown_as != NULL && !name_ok(p->shown_as))
        return false;
    if (p->nargs > 0 && p->args == NULL)
        return false;
    for (size_t i = 0; i < p->nargs; i++) {
        if (!name_ok(p->args[i].name))
            return false;
        if ((unsigned)p->args[i].type > TD_ARG_STRING_LIST)
            return false;
    }
    return true;
}

/* Adds a checked, not yet registered predicate (brought by impl, or NULL). */
static int add_pred(td_registry *reg, const td_pred_desc *pred,
                    const char *impl)
{
    td__pred_entry *e = td__calloc(1, sizeof *e);
    if (e == NULL)
        return TD_ENOMEM;
    e->desc = *pred;
    e->origin = origin_now(reg);
    e->stamp = reg->stamp;
    e->impl = impl;
    e->quiet_ok = reg->builtin_batch;
    unsigned before = HASH_COUNT(reg->preds);
    HASH_ADD_KEYPTR(hh, reg->preds, e->desc.name, strlen(e->desc.name), e);
    if (HASH_COUNT(reg->preds) == before) {
        td__free(e);
        return TD_ENOMEM;
    }
    return 0;
}

int td_register_predicate(td_registry *reg, const td_pred_desc *pred)
{
    if (reg == NULL || !pred_desc_ok(pred))
        return TD_EINVAL;
    const td__pred_entry *have = td__registry_pred(reg, pred->name);
    if (have != NULL)
        return taken(reg, "predicate", pred->name, have->origin);
    return add_pred(reg, pred, NULL);
}

static void remove_pred(td_registry *reg, const char *name)
{
    td__pred_entry *e = NULL;
    HASH_FIND(hh, reg->preds, name, strlen(name), e);
    if (e != NULL) {
        HASH_DEL(reg->preds, e);
        td__free(e);
    }
}

int td_register_impl(td_registry *reg, const td_impl_desc *impl)
{
    if (reg == NULL || impl == NULL || !td_variant_name_ok(impl->name) ||
        impl->emit == NULL || (impl->npreds > 0 && impl->preds == NULL))
        return TD_EINVAL;
    if (impl->plan != NULL
            ? impl->plan_size == 0 || impl->plan_size > TD_PLAN_MAX
            : impl->plan_size != 0 || impl->plan_pred != NULL)
        return TD_EINVAL;
    if (impl->plan_pred != NULL) {
        bool found = false;
        for (size_t i = 0; i < impl->npreds; i++)
            found |= impl->preds[i].name != NULL &&
                     strcmp(impl->preds[i].name, impl->plan_pred) == 0;
        if (!found)
            return TD_EINVAL;
    }
    /* Check everything first so that a refusal changes nothing. */
    for (size_t i = 0; i < impl->npreds; i++)
        if (!pred_desc_ok(&impl->preds[i]))
            return TD_EINVAL;
    const td__impl_entry *have = td__registry_impl(reg, impl->name);
    if (have != NULL)
        return taken(reg, "impl", impl->name, have->origin);
    for (size_t i = 0; i < impl->npreds; i++) {
        const td__pred_entry *hp = td__registry_pred(reg, impl->preds[i].name);
        if (hp != NULL)
            return taken(reg, "predicate", impl->preds[i].name, hp->origin);
        for (size_t j = 0; j < i; j++)
            if (strcmp(impl->preds[i].name, impl->preds[j].name) == 0)
                return TD_EEXIST;
    }

    size_t added = 0;
    int rc = 0;
    td__impl_entry *e = td__calloc(1, sizeof *e);
    if (e == NULL)
        return TD_ENOMEM;
    e->name = td__strdup(impl->name);
    if (e->name == NULL) {
        rc = TD_ENOMEM;
        goto fail;
    }
    for (; added < impl->npreds; added++) {
        rc = add_pred(reg, &impl->preds[added], e->name);
        if (rc != 0)
            goto fail;
    }
    e->desc = *impl;
    e->desc.name = e->name;
    e->origin = origin_now(reg);
    e->stamp = reg->stamp;
    if (impl->plan_pred != NULL) {
        e->plan_pred = td__registry_pred(reg, impl->plan_pred);
        e->desc.plan_pred = e->plan_pred->desc.name;
    }
    unsigned before = HASH_COUNT(reg->impls);
    HASH_ADD_KEYPTR(hh, reg->impls, e->name, strlen(e->name), e);
    if (HASH_COUNT(reg->impls) == before) {
        rc = TD_ENOMEM;
        goto fail;
    }
    return 0;

fail:
    /* Undo the predicates this call added, leaving the registry as it was. */
    while (added > 0)
        remove_pred(reg, impl->preds[--added].name);
    td__free(e->name);
    td__free(e);
    return rc;
}

void td__registry_drop_stamp(td_registry *reg, unsigned stamp)
{
    td__op_entry *op, *otmp;
    HASH_ITER(hh, reg->ops, op, otmp) {
        if (op->stamp != stamp)
            continue;
        HASH_DEL(reg->ops, op);
        td__free(op->name);
        td__free(op);
    }
    td__pred_entry *p, *ptmp;
    HASH_ITER(hh, reg->preds, p, ptmp) {
        if (p->stamp != stamp)
            continue;
        HASH_DEL(reg->preds, p);
        td__free(p);
    }
    td__impl_entry *im, *itmp;
    HASH_ITER(hh, reg->impls, im, itmp) {
        if (im->stamp != stamp)
            continue;
        HASH_DEL(reg->impls, im);
        td__free(im->name);
        td__free(im);
    }
}

/* ---- what is registered ----------------------------------------------- */

static int cmp_pred_info(const void *a, const void *b)
{
    return strcmp(((const td_pred_info *)a)->name,
                  ((const td_pred_info *)b)->name);
}

size_t td_registry_predicates(const td_registry *reg, td_pred_info *infos,
                              size_t cap)
{
    if (reg == NULL)
        return 0;
    size_t n = HASH_COUNT(reg->preds);
    if (infos == NULL || cap < n)
        return n;
    size_t i = 0;
    for (const td__pred_entry *p = reg->preds; p != NULL; p = p->hh.next)
        infos[i++] = (td_pred_info){.name = p->desc.name,
                                    .args = p->desc.args,
                                    .nargs = p->desc.nargs,
                                    .origin = p->origin,
                                    .impl = p->impl,
                                    .shown_as = p->desc.shown_as};
    qsort(infos, n, sizeof *infos, cmp_pred_info);
    return n;
}

static int cmp_impl_info(const void *a, const void *b)
{
    return strcmp(((const td_impl_info *)a)->name,
                  ((const td_impl_info *)b)->name);
}

size_t td_registry_impls(const td_registry *reg, td_impl_info *infos,
                         size_t cap)
{
    if (reg == NULL)
        return 0;
    size_t n = HASH_COUNT(reg->impls);
    if (infos == NULL || cap < n)
        return n;
    size_t i = 0;
    for (const td__impl_entry *e = reg->impls; e != NULL; e = e->hh.next)
        infos[i++] = (td_impl_info){.name = e->name,
                                    .origin = e->origin,
                                    .npreds = e->desc.npreds,
                                    .preds = e->desc.preds,
                                    .has_plan = e->desc.plan != NULL,
                                    .plan_pred = e->desc.plan_pred};
    qsort(infos, n, sizeof *infos, cmp_impl_info);
    return n;
}

/* ---- the loaded table -------------------------------------------------- */

void td__rule_preds_free(td__rule_pred *preds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        td__args_clear(&preds[i].args);
        td__free(preds[i].args_text);
        td__free(preds[i].args_json);
    }
    td__free(preds);
}

void td__ventry_free(td__ventry *e)
{
    if (e == NULL)
        return;
    td__free(e->name);
    td__free(e->impl_name);
    td__free(e->target);
    td__free(e->file);
    td__free(e->ops);
    td__free(e->overrides);
    td__rule_preds_free(e->preds, e->npreds);
    td__free(e);
}

void td__rules_free(td__rules *r)
{
    if (r == NULL)
        return;
    td__rkey *k, *tmp;
    HASH_ITER(hh, r->keys, k, tmp) {
        HASH_DEL(r->keys, k);
        td__free(k->key);
        td__free(k->cands);
        td__free(k);
    }
    for (size_t i = 0; i < r->nentries; i++)
        td__ventry_free(r->entries[i]);
    td__free(r->entries);
    for (size_t i = 0; i < r->nlayers; i++) {
        td__free(r->layers[i].file);
        td__free(r->layers[i].text);
    }
    td__free(r->layers);
    td__free(r->sorted);
    td__free(r);
}

const td__rkey *td__rules_find(const td_registry *reg, const char *op,
                               const char *target)
{
    if (reg->rules == NULL)
        return NULL;
    size_t lo = strlen(op), lt = strlen(target);
    char key[2 * TD_NAME_MAX + 2];
    if (lo >= TD_NAME_MAX || lt >= TD_NAME_MAX)
        return NULL;
    memcpy(key, op, lo);
    key[lo] = '\x1f';
    memcpy(key + lo + 1, target, lt);
    td__rkey *k = NULL;
    HASH_FIND(hh, reg->rules->keys, key, lo + 1 + lt, k);
    return k;
}

size_t td_registry_rules(const td_registry *reg, td_rule_info *infos,
                         size_t cap)
{
    if (reg == NULL || reg->rules == NULL)
        return 0;
    size_t n = 0;
    for (size_t k = 0; k < reg->rules->nkeys; k++) {
        const td__rkey *key = reg->rules->sorted[k];
        for (size_t i = 0; i < key->n; i++, n++) {
            if (infos == NULL || n >= cap)
                continue;
            const td__ventry *e = key->cands[i];
            td_rule_info *ri = &infos[n];
            ri->op = key->op->name;
            ri->target = key->target;
            ri->name = e->name;
            ri->impl = e->impl_name;
            ri->priority = e->priority;
            ri->enabled = e->enabled;
            ri->npreds = e->npreds;
            ri->file = e->file;
            ri->line = e->line;
            ri->noverrides = e->noverrides;
            ri->overrides = e->overrides;
        }
    }
    return n;
}

/* Predicate i of the entry a td_rule_info describes. */
static int rule_pred(const td_registry *reg, const td_rule_info *rule,
                     size_t i, const td__rule_pred **out)
{
    if (reg == NULL || rule == NULL || rule->op == NULL ||
        rule->target == NULL || rule->name == NULL)
        return TD_EINVAL;
    const td__rkey *key = td__rules_find(reg, rule->op, rule->target);
    if (key == NULL)
        return TD_ENOENT;
    for (size_t c = 0; c < key->n; c++) {
        const td__ventry *e = key->cands[c];
        if (strcmp(e->name, rule->name) != 0)
            continue;
        if (i >= e->npreds)
            return TD_EINVAL;
        *out = &e->preds[i];
        return 0;
    }
    return TD_ENOENT;
}

int td_registry_rule_pred(const td_registry *reg, const td_rule_info *rule,
                          size_t i, const char **name, char *args_text,
                          size_t cap)
{
    const td__rule_pred *rp = NULL;
    int rc = rule_pred(reg, rule, i, &rp);
    if (rc != 0)
        return rc;
    if (name != NULL)
        *name = rp->pred->desc.name;
    if (args_text != NULL && cap > 0)
        td__strlcpy(args_text, rp->args_text, cap);
    return 0;
}

int td_registry_rule_pred_json(const td_registry *reg,
                               const td_rule_info *rule, size_t i,
                               const char **name, char *args_json, size_t cap)
{
    const td__rule_pred *rp = NULL;
    int rc = rule_pred(reg, rule, i, &rp);
    if (rc != 0)
        return rc;
    if (name != NULL)
        *name = rp->pred->desc.name;
    if (args_json != NULL && cap > 0 &&
        td__strlcpy(args_json, rp->args_json, cap) >= cap)
        return TD_ELIMIT;
    return 0;
}

size_t td_registry_rules_layers(const td_registry *reg, td_rules_layer *out,
                                size_t cap)
{
    if (reg == NULL || reg->rules == NULL)
        return 0;
    const td__rules *r = reg->rules;
    for (size_t i = 0; out != NULL && i < r->nlayers && i < cap; i++) {
        out[i].file = r->layers[i].file;
        out[i].nentries = r->layers[i].nnew + r->layers[i].noverride;
        out[i].noverrides = r->layers[i].noverride;
    }
    return r->nlayers;
}

void td_registry_clear_rules(td_registry *reg)
{
    if (reg == NULL)
        return;
    td__rules_free(reg->rules);
    reg->rules = NULL;
}
