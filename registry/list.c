/*
 * The listings of what a registry holds: the loaded rules table in try
 * order, the registered predicates, the registered variant modules with
 * the rules entries that bind them.  Each comes as text (what `tiledispatch
 * rules`, `predicates` and `impls` print) or as JSON (their --json), made
 * here once for every front-end.
 */
#include <string.h>

#include "registry_internal.h"

/* A JSON array of n objects closes on its own line, an empty one on the
 * same line as it opened. */
static void close_array(td_buf *b, size_t n)
{
    td__buf_puts(b, n ? "\n]\n" : "]\n");
}

static void rule_json(td_buf *b, const td__rkey *key, const td__ventry *e,
                      bool first)
{
    td__buf_puts(b, first ? "\n  {\"op\": " : ",\n  {\"op\": ");
    td__buf_json_str(b, key->op->name);
    td__buf_puts(b, ", \"target\": ");
    td__buf_json_str(b, key->target);
    td__buf_puts(b, ", \"variant\": ");
    td__buf_json_str(b, e->name);
    td__buf_puts(b, ", \"impl\": ");
    td__buf_json_str(b, e->impl_name);
    td__buf_printf(b, ", \"priority\": %d, \"enabled\": %s, \"file\": ",
                   e->priority, e->enabled ? "true" : "false");
    td__buf_json_str(b, e->file);
    td__buf_printf(b, ", \"line\": %d, \"overrides\": [", e->line);
    for (size_t k = 0; k < e->noverrides; k++) {
        td__buf_puts(b, k ? ", {\"file\": " : "{\"file\": ");
        td__buf_json_str(b, e->overrides[k].file);
        td__buf_printf(b, ", \"line\": %d}", e->overrides[k].line);
    }
    td__buf_puts(b, "], \"when\": [");
    for (size_t k = 0; k < e->npreds; k++) {
        td__buf_puts(b, k ? ", {\"name\": " : "{\"name\": ");
        td__buf_json_str(b, e->preds[k].pred->desc.name);
        td__buf_printf(b, ", \"args\": %s}", e->preds[k].args_json);
    }
    td__buf_puts(b, "]}");
}

static void rule_text(td_buf *b, const td__ventry *e)
{
    bool own_impl = strcmp(e->impl_name, e->name) != 0;
    td__buf_printf(b, "  %s (prio=%d)%s%s%s  [%s:%d", e->name, e->priority,
                   own_impl ? " impl=" : "", own_impl ? e->impl_name : "",
                   e->enabled ? "" : " disabled", e->file, e->line);
    for (size_t k = 0; k < e->noverrides; k++)
        td__buf_printf(b, "%s%s:%d", k ? ", " : "; overridden at ",
                       e->overrides[k].file, e->overrides[k].line);
    td__buf_puts(b, "]\n");
    for (size_t k = 0; k < e->npreds; k++) {
        const char *args = e->preds[k].args_text;
        td__buf_printf(b, "      when %s%s%s\n", e->preds[k].pred->desc.name,
                       args[0] ? ": " : "", args);
    }
}

int td_registry_list_rules(const td_registry *reg, td_list_style style,
                           char **out)
{
    if (out == NULL)
        return TD_EINVAL;
    *out = NULL;
    if (reg == NULL || (style != TD_LIST_TEXT && style != TD_LIST_JSON))
        return TD_EINVAL;
    bool json = style == TD_LIST_JSON;
    td_buf b;
    td__buf_init(&b);
    if (json)
        td__buf_puts(&b, "[");
    size_t n = 0;
    const td__rules *r = reg->rules;
    for (size_t k = 0; r != NULL && k < r->nkeys; k++) {
        const td__rkey *key = r->sorted[k];
        if (!json && key->n > 0)
            td__buf_printf(&b, "%sop=%s target=%s\n", n ? "\n" : "",
                           key->op->name, key->target);
        for (size_t i = 0; i < key->n; i++, n++) {
            if (json)
                rule_json(&b, key, key->cands[i], n == 0);
            else
                rule_text(&b, key->cands[i]);
        }
    }
    if (json)
        close_array(&b, n);
    return td__buf_take(&b, out);
}

/* The registered predicates or impls, sorted by name, in an array the
 * caller frees. */
static void *infos_of(const td_registry *reg, bool impls, size_t *n)
{
    *n = impls ? td_registry_impls(reg, NULL, 0)
               : td_registry_predicates(reg, NULL, 0);
    size_t size = impls ? sizeof(td_impl_info) : sizeof(td_pred_info);
    void *infos = td__calloc(*n ? *n : 1, size);
    if (infos == NULL)
        return NULL;
    if (impls)
        td_registry_impls(reg, infos, *n);
    else
        td_registry_predicates(reg, infos, *n);
    return infos;
}

static void pred_json(td_buf *b, const td_pred_info *p, bool first)
{
    td__buf_puts(b, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
    td__buf_json_str(b, p->name);
    td__buf_puts(b, ", \"origin\": ");
    td__buf_json_str(b, p->origin);
    td__buf_puts(b, ", \"impl\": ");
    if (p->impl != NULL)
        td__buf_json_str(b, p->impl);
    else
        td__buf_puts(b, "null");
    if (p->shown_as != NULL) {
        td__buf_puts(b, ", \"shown_as\": ");
        td__buf_json_str(b, p->shown_as);
    }
    td__buf_puts(b, ", \"args\": [");
    for (size_t k = 0; k < p->nargs; k++) {
        td__buf_puts(b, k ? ", {\"name\": " : "{\"name\": ");
        td__buf_json_str(b, p->args[k].name);
        td__buf_puts(b, ", \"type\": ");
        td__buf_json_str(b, td_arg_type_name(p->args[k].type));
        td__buf_printf(b, ", \"required\": %s}",
                       p->args[k].required ? "true" : "false");
    }
    td__buf_puts(b, "]}");
}

static void pred_text(td_buf *b, const td_pred_info *p)
{
    td__buf_puts(b, p->name);
    if (p->nargs > 0) {
        td__buf_puts(b, " {");
        for (size_t k = 0; k < p->nargs; k++)
            td__buf_printf(b, "%s%s: %s%s", k ? ", " : "", p->args[k].name,
                           td_arg_type_name(p->args[k].type),
                           p->args[k].required ? "" : " (optional)");
        td__buf_puts(b, "}");
    }
    if (p->shown_as != NULL)
        td__buf_printf(b, " (shown as %s)", p->shown_as);
    if (p->impl != NULL)
        td__buf_printf(b, "  [%s, module %s]\n", p->origin, p->impl);
    else
        td__buf_printf(b, "  [%s]\n", p->origin);
}

/* One entry of a listing, text or JSON (first: the first of the array). */
static void pred_entry(td_buf *b, const td_registry *reg, const void *info,
                       bool json, bool first)
{
    (void)reg;
    if (json)
        pred_json(b, info, first);
    else
        pred_text(b, info);
}

/* The listing driver both listings share: the registry's infos of one kind
 * (impls or predicates), each written by `entry`, in a JSON array or as
 * text lines. */
static int list_infos(const td_registry *reg, td_list_style style,
                      bool impls, size_t size,
                      void (*entry)(td_buf *, const td_registry *,
                                    const void *, bool, bool),
                      char **out)
{
    if (out == NULL)
        return TD_EINVAL;
    *out = NULL;
    if (reg == NULL || (style != TD_LIST_TEXT && style != TD_LIST_JSON))
        return TD_EINVAL;
    size_t n;
    unsigned char *infos = infos_of(reg, impls, &n);
    if (infos == NULL)
        return TD_ENOMEM;
    bool json = style == TD_LIST_JSON;
    td_buf b;
    td__buf_init(&b);
    if (json)
        td__buf_puts(&b, "[");
    for (size_t i = 0; i < n; i++)
        entry(&b, reg, infos + i * size, json, i == 0);
    if (json)
        close_array(&b, n);
    td__free(infos);
    return td__buf_take(&b, out);
}

int td_registry_list_predicates(const td_registry *reg, td_list_style style,
                                char **out)
{
    return list_infos(reg, style, false, sizeof(td_pred_info), pred_entry,
                      out);
}

/* The (op, target) pairs of the rules entries that bind impl `name`, as
 * "      serves sum/cuda (as V), ..." or as JSON objects. */
static void bindings(td_buf *b, const td_registry *reg, const char *name,
                     bool json)
{
    bool any = false;
    const td__rules *r = reg->rules;
    for (size_t k = 0; r != NULL && k < r->nkeys; k++) {
        const td__rkey *key = r->sorted[k];
        for (size_t i = 0; i < key->n; i++) {
            const td__ventry *e = key->cands[i];
            if (strcmp(e->impl_name, name) != 0)
                continue;
            if (json) {
                td__buf_puts(b, any ? ", {\"op\": " : "{\"op\": ");
                td__buf_json_str(b, key->op->name);
                td__buf_puts(b, ", \"target\": ");
                td__buf_json_str(b, key->target);
                td__buf_puts(b, ", \"variant\": ");
                td__buf_json_str(b, e->name);
                td__buf_printf(b, ", \"enabled\": %s}",
                               e->enabled ? "true" : "false");
            } else {
                td__buf_printf(b, "%s%s/%s", any ? ", " : "      serves ",
                               key->op->name, key->target);
                if (strcmp(e->name, name) != 0)
                    td__buf_printf(b, " (as %s)", e->name);
                if (!e->enabled)
                    td__buf_puts(b, " (disabled)");
            }
            any = true;
        }
    }
    if (!json)
        td__buf_puts(b, any ? "\n" : "      bound by no rules entry\n");
}

static void impl_json(td_buf *b, const td_registry *reg,
                      const td_impl_info *im, bool first)
{
    td__buf_puts(b, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
    td__buf_json_str(b, im->name);
    td__buf_puts(b, ", \"origin\": ");
    td__buf_json_str(b, im->origin);
    td__buf_puts(b, ", \"predicates\": [");
    for (size_t k = 0; k < im->npreds; k++) {
        if (k)
            td__buf_puts(b, ", ");
        td__buf_json_str(b, im->preds[k].name);
    }
    td__buf_printf(b, "], \"plan\": %s, \"serves\": [",
                   im->has_plan ? "true" : "false");
    bindings(b, reg, im->name, true);
    td__buf_puts(b, "]}");
}

static void impl_text(td_buf *b, const td_registry *reg,
                      const td_impl_info *im)
{
    td__buf_printf(b, "%s  [%s]%s\n", im->name, im->origin,
                   im->has_plan ? "  (plans once per dispatch)" : "");
    if (im->npreds > 0) {
        td__buf_puts(b, "      brings");
        for (size_t k = 0; k < im->npreds; k++)
            td__buf_printf(b, "%s %s", k ? "," : "", im->preds[k].name);
        td__buf_puts(b, "\n");
    }
    bindings(b, reg, im->name, false);
}

static void impl_entry(td_buf *b, const td_registry *reg, const void *info,
                       bool json, bool first)
{
    if (json)
        impl_json(b, reg, info, first);
    else
        impl_text(b, reg, info);
}

int td_registry_list_impls(const td_registry *reg, td_list_style style,
                           char **out)
{
    return list_infos(reg, style, true, sizeof(td_impl_info), impl_entry,
                      out);
}
