/*
 * Loading rules files (contract section 2) in layers.
 *
 * Each file is parsed by the YAML front-end (core/td_yaml.h) and checked
 * against the schema and against what C registered.  A layer's entries are
 * new (name, target) pairs or overrides of earlier ones; the candidate
 * lists per (op, target) are built once every layer is applied.  A load
 * builds a complete new table beside the registry's (replaying the layers
 * already loaded when it adds to them) and swaps it in only when every
 * layer was accepted.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"
#include "td_yaml.h"

/* The state of one file being loaded. */
typedef struct loader {
    td_registry *reg;
    td__rules *rules;   /* the table being built */
    td__layer *layer;   /* the layer being applied (in rules->layers) */
    td_ydoc doc;
    td_diag *diag;
} loader;

#define ERR(ld, code, node_line, node_col, ...)                               \
    td__yerr_at(&(ld)->doc, (code), (node_line), (node_col), __VA_ARGS__)
#define ERRN(ld, code, node, ...)                                             \
    td__yerr(&(ld)->doc, (code), (node), __VA_ARGS__)

/* The argument names a hint lists at most. */
#define ARG_NAMES_MAX 32

/* A name field (variant, impl, target, op, string argument). */
static int check_name(loader *ld, const td_ynode *n, const char *what)
{
    return td__yname(&ld->doc, n, what, TD_NAME_MAX - 1);
}

/* ---- predicate arguments ----------------------------------------------- */

/* Whether a string needs quoting in the args text (it would not read back
 * as the same plain YAML scalar otherwise). */
static bool needs_quotes(const char *s)
{
    if (*s == '\0')
        return true;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return true;
    }
    return false;
}

static void put_str(td_buf *b, const char *s)
{
    if (needs_quotes(s))
        td__buf_json_str(b, s);
    else
        td__buf_puts(b, s);
}

/* The bound arguments in schema order: as YAML flow text ("{a: 1, b:
 * [x, y]}", "" when nothing is bound) or as JSON ({"a": 1, "b": ["x",
 * "y"]}, {} when nothing is bound). */
static int format_args(const td__pred_entry *pe, const td_args *a, bool json,
                       char **out)
{
    void (*str)(td_buf *, const char *) = json ? td__buf_json_str : put_str;
    td_buf b;
    td__buf_init(&b);
    size_t shown = 0;
    if (json)
        td__buf_puts(&b, "{");
    for (size_t s = 0; s < pe->desc.nargs; s++) {
        const td__arg *v = NULL;
        for (size_t i = 0; i < a->n; i++)
            if (strcmp(a->v[i].name, pe->desc.args[s].name) == 0)
                v = &a->v[i];
        if (v == NULL)
            continue;
        td__buf_puts(&b, shown++ ? ", " : json ? "" : "{");
        if (json)
            td__buf_json_str(&b, v->name);
        else
            td__buf_puts(&b, v->name);
        td__buf_puts(&b, ": ");
        switch (v->type) {
        case TD_ARG_INT: td__buf_printf(&b, "%" PRId64, v->i); break;
        case TD_ARG_BOOL: td__buf_puts(&b, v->b ? "true" : "false"); break;
        case TD_ARG_STRING: str(&b, v->s); break;
        case TD_ARG_STRING_LIST:
            td__buf_puts(&b, "[");
            for (size_t k = 0; k < v->nitems; k++) {
                if (k > 0)
                    td__buf_puts(&b, ", ");
                str(&b, v->items[k]);
            }
            td__buf_puts(&b, "]");
            break;
        }
    }
    if (shown || json)
        td__buf_puts(&b, "}");
    return td__buf_take(&b, out);
}

/* Binds the argument mapping `m` (NULL: none given) of predicate `pe`
 * named at node `at`. */
static int bind_args(loader *ld, const td__pred_entry *pe, const td_ynode *at,
                     const td_ynode *m, td_args *out)
{
    const char *pname = pe->desc.name;
    size_t ngiven = m ? m->n / 2 : 0;
    int rc;

    /* Keys in document order; unknown names before missing ones: they
     * are usually typos of a required one. */
    for (size_t i = 0; i < ngiven; i++) {
        const td_ynode *k = TD_YKEY(m, i);
        if ((rc = td__ykey(&ld->doc, k)) != 0)
            return rc;
        bool known = false;
        const char *names[ARG_NAMES_MAX];
        size_t nnames = 0;
        for (size_t s = 0; s < pe->desc.nargs; s++) {
            if (strcmp(pe->desc.args[s].name, k->str) == 0)
                known = true;
            if (nnames < ARG_NAMES_MAX)
                names[nnames++] = pe->desc.args[s].name;
        }
        if (!known) {
            char hint[TD_DIAG_MSG_MAX];
            td__hint(hint, sizeof hint, k->str, names, nnames);
            if (nnames == 0)
                snprintf(hint, sizeof hint, " (it takes no arguments)");
            return ERRN(ld, TD_ESCHEMA, k,
                        "predicate '%s': unknown argument '%s'%s", pname,
                        k->str, hint);
        }
        if ((rc = td__ydup(&ld->doc, m, i)) != 0)
            return rc;
    }
    for (size_t s = 0; s < pe->desc.nargs; s++)
        if (pe->desc.args[s].required &&
            (m == NULL || td__ymap_get(m, pe->desc.args[s].name) == NULL))
            return ERRN(ld, TD_ESCHEMA, at,
                        "predicate '%s': missing required argument '%s'",
                        pname, pe->desc.args[s].name);
    if (ngiven == 0)
        return 0;

    out->v = td__calloc(ngiven, sizeof *out->v);
    if (out->v == NULL)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < ngiven; i++) {
        const td_ynode *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        const td_arg_spec *spec = NULL;
        for (size_t s = 0; s < pe->desc.nargs; s++)
            if (strcmp(pe->desc.args[s].name, k->str) == 0)
                spec = &pe->desc.args[s];
        td__arg *a = &out->v[out->n++];
        a->name = spec->name;
        a->type = spec->type;
        bool ok = true, ovf = false;
        switch (spec->type) {
        case TD_ARG_INT:
            ok = td__yclass(v, &a->i, NULL, &ovf) == TD_YT_INT;
            break;
        case TD_ARG_BOOL:
            ok = td__yclass(v, NULL, &a->b, NULL) == TD_YT_BOOL;
            break;
        case TD_ARG_STRING:
            ok = v->kind == TD_YSCALAR && !td__yis_null(v);
            break;
        case TD_ARG_STRING_LIST:
            ok = v->kind == TD_YSEQ;
            for (size_t j = 0; ok && j < v->n; j++)
                ok = v->kids[j]->kind == TD_YSCALAR &&
                     !td__yis_null(v->kids[j]);
            break;
        }
        if (!ok)
            return ERRN(ld, TD_ESCHEMA, v,
                        "predicate '%s': argument '%s' must be %s %s", pname,
                        spec->name,
                        spec->type == TD_ARG_INT ? "an" : "a",
                        td_arg_type_name(spec->type));
        if (ovf)
            return ERRN(ld, TD_ELIMIT, v,
                        "predicate '%s': argument '%s' does not fit in 64 "
                        "bits",
                        pname, spec->name);
        if (spec->type == TD_ARG_STRING) {
            if ((rc = check_name(ld, v, "a string argument")) != 0)
                return rc;
            a->s = td__strdup(v->str);
            if (a->s == NULL)
                return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        } else if (spec->type == TD_ARG_STRING_LIST) {
            if (v->n > TD_MAX_LIST)
                return ERRN(ld, TD_ELIMIT, v,
                            "predicate '%s': argument '%s' has more than %d "
                            "items",
                            pname, spec->name, TD_MAX_LIST);
            for (size_t j = 0; j < v->n; j++)
                if ((rc = check_name(ld, v->kids[j], "a list item")) != 0)
                    return rc;
            a->items = td__calloc(v->n ? v->n : 1, sizeof *a->items);
            if (a->items == NULL)
                return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
            for (size_t j = 0; j < v->n; j++) {
                a->items[j] = td__strdup(v->kids[j]->str);
                if (a->items[j] == NULL)
                    return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
                a->nitems++;
            }
        }
    }
    return 0;
}

/* One item of a `when:` list. */
static int load_pred(loader *ld, const td_ynode *item, td__rule_pred *rp)
{
    const td_ynode *name_node, *args = NULL;
    int rc;

    if (item->kind == TD_YSCALAR) {
        name_node = item;
    } else if (item->kind == TD_YMAP && item->n == 2) {
        name_node = item->kids[0];
        args = item->kids[1];
        if (name_node->kind != TD_YSCALAR)
            return ERRN(ld, TD_ESCHEMA, name_node,
                        "mapping keys must be scalars");
        if (td__yis_null(args))
            args = NULL;
        else if (args->kind != TD_YMAP)
            return ERRN(ld, TD_ESCHEMA, args,
                        "predicate '%s': arguments must be a mapping",
                        name_node->str);
    } else {
        return ERRN(ld, TD_ESCHEMA, item,
                    "a predicate is a name or a one-key mapping "
                    "'name: {arg: value}'");
    }
    if ((rc = check_name(ld, name_node, "a predicate name")) != 0)
        return rc;
    const td__pred_entry *pe = td__registry_pred(ld->reg, name_node->str);
    if (pe == NULL) {
        char hint[TD_DIAG_MSG_MAX];
        td__registry_hint(ld->reg, TD__NAMES_PREDS, name_node->str, hint,
                          sizeof hint);
        return ERRN(ld, TD_ESCHEMA, name_node, "unknown predicate '%s'%s",
                    name_node->str, hint);
    }
    rp->pred = pe;
    if ((rc = bind_args(ld, pe, name_node, args, &rp->args)) != 0)
        return rc;
    if (format_args(pe, &rp->args, false, &rp->args_text) != 0 ||
        format_args(pe, &rp->args, true, &rp->args_json) != 0)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    return 0;
}

/* ---- entries ------------------------------------------------------------ */

enum {
    E_NAME,
    E_IMPL,
    E_OPS,
    E_TARGET,
    E_PRIORITY,
    E_WHEN,
    E_ENABLED,
    E_OVERRIDE,
    E_COUNT
};

static const char *const entry_keys[E_COUNT] = {
    "name", "impl", "ops", "target", "priority", "when", "enabled", "override"};

/* The fields an entry gives, checked and bound; what is absent stays
 * unset (an override keeps the entry's value). */
typedef struct fields {
    const td__impl_entry *impl; /* NULL: not given */
    const char *impl_name;
    const td__op_entry **ops;   /* owned until moved into an entry */
    size_t nops;
    bool has_priority, has_enabled, has_when;
    int priority;
    bool enabled;
    td__rule_pred *preds;       /* owned until moved into an entry */
    size_t npreds;
} fields;

static void fields_free(fields *f)
{
    td__free(f->ops);
    td__rule_preds_free(f->preds, f->npreds);
    memset(f, 0, sizeof *f);
}

static td__ventry *find_entry(const td__rules *r, const char *name,
                              const char *target)
{
    for (size_t i = 0; i < r->nentries; i++)
        if (strcmp(r->entries[i]->name, name) == 0 &&
            strcmp(r->entries[i]->target, target) == 0)
            return r->entries[i];
    return NULL;
}

/* Checks and binds impl, ops, priority, enabled and when.  `name` is the
 * entry's name node when the impl defaults to it (a new entry), NULL for an
 * override. */
static int read_fields(loader *ld, const td_ynode *const *v,
                       const td_ynode *name, fields *f)
{
    const td_ynode *impl = v[E_IMPL], *ops = v[E_OPS], *when = v[E_WHEN];
    int rc;

    if (impl != NULL || name != NULL) {
        const td_ynode *at = impl ? impl : name;
        if (impl != NULL && (rc = check_name(ld, impl, "impl")) != 0)
            return rc;
        f->impl_name = at->str;
        f->impl = td__registry_impl(ld->reg, at->str);
        if (f->impl == NULL) {
            /* Not a typo of a registered one: most likely the module is
             * a plugin that was not loaded. */
            char hint[TD_DIAG_MSG_MAX];
            const char **names = NULL;
            size_t n = td__registry_names(ld->reg, TD__NAMES_IMPLS, &names);
            const char *best = td_suggest(at->str, names, n);
            td__free(names);
            if (best != NULL)
                snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
            else
                snprintf(hint, sizeof hint,
                         "; if a plugin provides it, load it with --plugin "
                         "or TILEDISPATCH_PLUGINS");
            return ERRN(ld, TD_ESCHEMA, at, "unknown impl '%s'%s", at->str,
                        hint);
        }
    }
    if (ops != NULL) {
        if (ops->kind != TD_YSEQ)
            return ERRN(ld, TD_ESCHEMA, ops, "ops must be a list of op names");
        if (ops->n == 0)
            return ERRN(ld, TD_ESCHEMA, ops, "ops must not be empty");
        f->ops = td__calloc(ops->n, sizeof *f->ops);
        if (f->ops == NULL)
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < ops->n; i++) {
            const td_ynode *o = ops->kids[i];
            if ((rc = check_name(ld, o, "an op name")) != 0)
                return rc;
            const td__op_entry *oe = NULL;
            HASH_FIND(hh, ld->reg->ops, o->str, strlen(o->str), oe);
            if (oe == NULL) {
                char hint[TD_DIAG_MSG_MAX];
                td__registry_hint(ld->reg, TD__NAMES_OPS, o->str, hint,
                                  sizeof hint);
                return ERRN(ld, TD_ESCHEMA, o, "unknown op '%s'%s", o->str,
                            hint);
            }
            for (size_t j = 0; j < i; j++)
                if (f->ops[j] == oe)
                    return ERRN(ld, TD_ESCHEMA, o, "op '%s' is listed twice",
                                o->str);
            f->ops[f->nops++] = oe;
        }
    }
    if (v[E_PRIORITY] != NULL) {
        int64_t pv;
        if ((rc = td__yint(&ld->doc, v[E_PRIORITY], "priority", INT_MIN,
                           INT_MAX, &pv)) != 0)
            return rc;
        f->priority = (int)pv;
        f->has_priority = true;
    }
    if (v[E_ENABLED] != NULL) {
        if ((rc = td__ybool(&ld->doc, v[E_ENABLED], "enabled", &f->enabled)) !=
            0)
            return rc;
        f->has_enabled = true;
    }
    if (when != NULL) {
        f->has_when = true;
        if (td__yis_null(when))
            return 0;
        if (when->kind != TD_YSEQ)
            return ERRN(ld, TD_ESCHEMA, when,
                        "when must be a list of predicates");
        if (when->n > TD_MAX_PREDICATES)
            return ERRN(ld, TD_ELIMIT, when->kids[TD_MAX_PREDICATES],
                        "more than %d predicates in one when list",
                        TD_MAX_PREDICATES);
        if (when->n == 0)
            return 0;
        f->preds = td__calloc(when->n, sizeof *f->preds);
        if (f->preds == NULL)
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < when->n; i++) {
            /* Count it first so that a failure frees what was bound. */
            f->npreds++;
            if ((rc = load_pred(ld, when->kids[i], &f->preds[i])) != 0)
                return rc;
        }
    }
    return 0;
}

/* Required key k of entry m, diagnosing its absence. */
static int need(loader *ld, const td_ynode *m, const td_ynode *const *v,
                int k)
{
    if (v[k] == NULL)
        return ERRN(ld, TD_ESCHEMA, m, "variant entry is missing '%s'",
                    entry_keys[k]);
    return 0;
}

/* A new entry from checked fields; the table owns it once listed. */
static int add_entry(loader *ld, const td_ynode *m, const char *name,
                     const char *target, fields *f)
{
    td__rules *r = ld->rules;
    td__ventry *e = td__calloc(1, sizeof *e);
    if (e == NULL)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    if (r->nentries == r->capentries) {
        size_t ncap = r->capentries ? r->capentries * 2 : 8;
        td__ventry **v = td__realloc(r->entries, ncap * sizeof *v);
        if (v == NULL) {
            td__free(e);
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        }
        r->entries = v;
        r->capentries = ncap;
    }
    r->entries[r->nentries] = e;
    e->seq = r->nentries++;
    e->impl = f->impl;
    e->priority = f->priority;
    e->enabled = f->has_enabled ? f->enabled : true;
    e->line = m->line;
    e->ops = f->ops;
    e->nops = f->nops;
    e->preds = f->preds;
    e->npreds = f->npreds;
    f->ops = NULL;
    f->preds = NULL;
    f->npreds = 0;
    e->name = td__strdup(name);
    e->impl_name = td__strdup(f->impl_name);
    e->target = td__strdup(target);
    e->file = td__strdup(ld->layer->file);
    if (!e->name || !e->impl_name || !e->target || !e->file)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    e->enabled_file = e->file;
    e->enabled_line = e->line;
    ld->layer->nnew++;
    return 0;
}

/* Changes entry e by the fields given; records where. */
static int override_entry(loader *ld, const td_ynode *m, td__ventry *e,
                          fields *f)
{
    td_rule_origin *o =
        td__realloc(e->overrides, (e->noverrides + 1) * sizeof *o);
    if (o == NULL)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    e->overrides = o;
    o[e->noverrides].file = ld->layer->file;
    o[e->noverrides].line = m->line;
    e->noverrides++;
    if (f->impl != NULL) {
        char *s = td__strdup(f->impl_name);
        if (s == NULL)
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        td__free(e->impl_name);
        e->impl_name = s;
        e->impl = f->impl;
    }
    if (f->ops != NULL) {
        td__free(e->ops);
        e->ops = f->ops;
        e->nops = f->nops;
        f->ops = NULL;
    }
    if (f->has_priority)
        e->priority = f->priority;
    if (f->has_enabled) {
        e->enabled = f->enabled;
        e->enabled_file = ld->layer->file;
        e->enabled_line = m->line;
    }
    if (f->has_when) {
        td__rule_preds_free(e->preds, e->npreds);
        e->preds = f->preds;
        e->npreds = f->npreds;
        f->preds = NULL;
        f->npreds = 0;
    }
    ld->layer->noverride++;
    return 0;
}

/* Whether the layer being loaded starts like the built-in rules (their
 * first line, "# tiledispatch default dispatch table ...") and is not
 * the first: a copy of the whole table loaded as a layer over itself. */
static bool complete_table(const loader *ld)
{
    size_t len = 0;
    const char *builtin = td_default_rules(&len);
    const char *nl = memchr(builtin, '\n', len);
    size_t head = nl != NULL ? (size_t)(nl - builtin) + 1 : 0;
    return head > 1 && ld->layer->len >= head &&
           memcmp(ld->layer->text, builtin, head) == 0 &&
           ld->layer != ld->rules->layers;
}

static int load_entry(loader *ld, const td_ynode *m)
{
    td__rules *r = ld->rules;
    const td_ynode *v[E_COUNT], *unknown = NULL;
    int rc;

    if (m->kind != TD_YMAP)
        return ERRN(ld, TD_ESCHEMA, m, "a variant entry must be a mapping");
    rc = td__ymap_read(&ld->doc, m, entry_keys, E_COUNT, v, &unknown);
    if (unknown != NULL) {
        char hint[TD_DIAG_MSG_MAX];
        td__hint(hint, sizeof hint, unknown->str, entry_keys, E_COUNT);
        return ERRN(ld, TD_ESCHEMA, unknown,
                    "unknown key '%.64s' in variant entry%s", unknown->str,
                    hint);
    }
    if (rc != 0)
        return rc;
    bool over = false;
    if ((rc = need(ld, m, v, E_NAME)) != 0 ||
        (rc = check_name(ld, v[E_NAME], "name")) != 0)
        return rc;
    if (strlen(v[E_NAME]->str) != v[E_NAME]->len ||
        !td_variant_name_ok(v[E_NAME]->str))
        return ERRN(ld, TD_ESCHEMA, v[E_NAME],
                    "variant name '%s' must be " TD_VARIANT_NAME_FORM,
                    v[E_NAME]->str);
    if (v[E_OVERRIDE] != NULL &&
        (rc = td__ybool(&ld->doc, v[E_OVERRIDE], "override", &over)) != 0)
        return rc;
    if (!over && v[E_TARGET] != NULL && v[E_TARGET]->kind == TD_YSCALAR &&
        !td__yis_null(v[E_TARGET])) {
        const td__ventry *old = find_entry(r, v[E_NAME]->str,
                                           v[E_TARGET]->str);
        if (old != NULL)
            return ERRN(ld, TD_ESCHEMA, v[E_NAME],
                        "duplicate variant '%s' for target '%s' (first "
                        "declared at %s:%d); to change it, add 'override: "
                        "true'%s",
                        old->name, old->target, old->file, old->line,
                        complete_table(ld)
                            ? " (this file is a complete table: load it "
                              "in place of the built-in rules, e.g. with "
                              "--no-default-rules)"
                            : "");
    }
    if (!over && v[E_OPS] == NULL && v[E_NAME]->kind == TD_YSCALAR) {
        /* Most likely meant to change that variant, not declare one. */
        for (size_t i = 0; i < r->nentries; i++) {
            const td__ventry *o = r->entries[i];
            if (strcmp(o->name, v[E_NAME]->str) == 0)
                return ERRN(ld, TD_ESCHEMA, m,
                            "variant entry is missing 'ops'; variant '%s' "
                            "exists (declared for target '%s' at %s:%d): to "
                            "change it, add 'override: true'",
                            o->name, o->target, o->file, o->line);
        }
    }
    if ((!over && ((rc = need(ld, m, v, E_OPS)) != 0 ||
                   (rc = need(ld, m, v, E_TARGET)) != 0 ||
                   (rc = need(ld, m, v, E_PRIORITY)) != 0)) ||
        (over && (rc = need(ld, m, v, E_TARGET)) != 0))
        return rc;
    if ((rc = check_name(ld, v[E_TARGET], "target")) != 0)
        return rc;

    const char *name = v[E_NAME]->str, *target = v[E_TARGET]->str;
    td__ventry *old = find_entry(r, name, target);
    if (over && old == NULL) {
        for (size_t i = 0; i < r->nentries; i++) {
            const td__ventry *o = r->entries[i];
            if (strcmp(o->name, name) == 0)
                return ERRN(ld, TD_ESCHEMA, v[E_NAME],
                            "override of variant '%s' for target '%s' "
                            "matches no earlier entry (variant '%s' is "
                            "declared for target '%s' at %s:%d)",
                            name, target, name, o->target, o->file, o->line);
        }
        const char **names = td__calloc(r->nentries ? r->nentries : 1,
                                        sizeof *names);
        char hint[TD_DIAG_MSG_MAX];
        hint[0] = '\0';
        if (names != NULL) {
            for (size_t i = 0; i < r->nentries; i++)
                names[i] = r->entries[i]->name;
            const char *best = td_suggest(name, names, r->nentries);
            if (best != NULL)
                snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
            td__free(names);
        }
        return ERRN(ld, TD_ESCHEMA, v[E_NAME],
                    "override of variant '%s' for target '%s' matches no "
                    "earlier entry%s",
                    name, target, hint);
    }
    if (!over && old != NULL)
        return ERRN(ld, TD_ESCHEMA, v[E_NAME],
                    "duplicate variant '%s' for target '%s' (first declared "
                    "at %s:%d); to change it, add 'override: true'",
                    name, target, old->file, old->line);
    if (!over && r->nentries >= TD_MAX_VARIANTS)
        return ERRN(ld, TD_ELIMIT, m, "more than %d variant entries",
                    TD_MAX_VARIANTS);

    fields f;
    memset(&f, 0, sizeof f);
    rc = read_fields(ld, v, over ? NULL : v[E_NAME], &f);
    if (rc == 0)
        rc = over ? override_entry(ld, m, old, &f)
                  : add_entry(ld, m, name, target, &f);
    fields_free(&f);
    return rc;
}

static const char *const top_keys[] = {"version", "variants"};

static int load_tree(loader *ld, const td_ynode *root)
{
    const td_ynode *vals[2], *unknown = NULL;
    int rc;
    if (root->kind != TD_YMAP)
        return ERRN(ld, TD_ESCHEMA, root,
                    "a rules file is a mapping with 'version' and 'variants'");
    rc = td__ymap_read(&ld->doc, root, top_keys, 2, vals, &unknown);
    if (unknown != NULL) {
        char hint[TD_DIAG_MSG_MAX];
        td__hint(hint, sizeof hint, unknown->str, top_keys, 2);
        return ERRN(ld, TD_ESCHEMA, unknown,
                    "unknown top-level key '%.64s'%s", unknown->str, hint);
    }
    if (rc != 0)
        return rc;
    const td_ynode *version = vals[0], *variants = vals[1];
    int64_t v;
    if (version == NULL)
        return ERRN(ld, TD_ESCHEMA, root, "missing 'version'");
    if (td__yclass(version, &v, NULL, NULL) != TD_YT_INT || v != 1)
        return ERRN(ld, TD_ESCHEMA, version, "version must be 1");
    if (variants == NULL)
        return ERRN(ld, TD_ESCHEMA, root, "missing 'variants'");
    if (variants->kind != TD_YSEQ)
        return ERRN(ld, TD_ESCHEMA, variants,
                    "variants must be a list of variant entries");
    for (size_t i = 0; i < variants->n; i++)
        if ((rc = load_entry(ld, variants->kids[i])) != 0)
            return rc;
    return 0;
}

/* ---- layers ------------------------------------------------------------- */

/* The limits of a rules file. */
static const td_ylimits rules_limits = {TD_RULES_FILE_MAX, TD_RULES_DEPTH_MAX,
                                        0};

/* Appends a layer record; takes `text` (td__malloc'd) in every case. */
static int push_layer(td__rules *r, const char *file, char *text, size_t len,
                      td_diag *diag)
{
    char *name = td__strdup(file);
    if (name == NULL || r->nlayers == SIZE_MAX / sizeof *r->layers)
        goto oom;
    if (r->nlayers == r->caplayers) {
        size_t ncap = r->caplayers ? r->caplayers * 2 : 4;
        td__layer *l = td__realloc(r->layers, ncap * sizeof *l);
        if (l == NULL)
            goto oom;
        r->layers = l;
        r->caplayers = ncap;
    }
    td__layer *l = &r->layers[r->nlayers++];
    memset(l, 0, sizeof *l);
    l->file = name;
    l->text = text;
    l->len = len;
    return 0;
oom:
    td__free(name);
    td__free(text);
    return td__fail(diag, TD_ENOMEM, file, "out of memory");
}

/* Applies the last layer of r. */
static int apply_layer(td_registry *reg, td__rules *r, td_diag *diag)
{
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.reg = reg;
    ld.rules = r;
    ld.layer = &r->layers[r->nlayers - 1];
    ld.diag = diag;
    int rc = td__ydoc_load(&ld.doc, ld.layer->file, "rules file",
                           ld.layer->text, ld.layer->len, &rules_limits, diag);
    if (rc == 0)
        rc = load_tree(&ld, ld.doc.root);
    td__ydoc_free(&ld.doc);
    return rc;
}

/* One layer from a text in memory (copied). */
static int text_layer(td_registry *reg, td__rules *r, const char *file,
                      const char *text, size_t len, td_diag *diag)
{
    if (len > TD_RULES_FILE_MAX)
        return td__fail_at(diag, TD_ELIMIT, TD_AT(file, 1, 1),
                           "file is larger than the limit of %zu bytes",
                           (size_t)TD_RULES_FILE_MAX);
    char *copy = td__strndup(text, len);
    if (copy == NULL)
        return td__fail(diag, TD_ENOMEM, file, "out of memory");
    int rc = push_layer(r, file, copy, len, diag);
    return rc != 0 ? rc : apply_layer(reg, r, diag);
}

/* One layer from a file. */
static int file_layer(td_registry *reg, td__rules *r, const char *path,
                      td_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    int rc = td__read_file(path, TD_RULES_FILE_MAX, &text, &len, diag);
    if (rc == 0)
        rc = push_layer(r, path, text, len, diag);
    return rc != 0 ? rc : apply_layer(reg, r, diag);
}

/* ---- building the candidate lists and swapping --------------------------- */

static int add_to_key(td__rules *r, const td__op_entry *op, td__ventry *e)
{
    size_t lo = strlen(op->name), lt = strlen(e->target);
    char kbuf[2 * TD_NAME_MAX + 2];
    memcpy(kbuf, op->name, lo);
    kbuf[lo] = '\x1f';
    memcpy(kbuf + lo + 1, e->target, lt);
    kbuf[lo + 1 + lt] = '\0';

    td__rkey *k = NULL;
    HASH_FIND(hh, r->keys, kbuf, lo + 1 + lt, k);
    if (k == NULL) {
        k = td__calloc(1, sizeof *k);
        if (k == NULL)
            return TD_ENOMEM;
        k->key = td__strndup(kbuf, lo + 1 + lt);
        if (k->key == NULL) {
            td__free(k);
            return TD_ENOMEM;
        }
        k->op = op;
        k->target = k->key + lo + 1;
        unsigned before = HASH_COUNT(r->keys);
        HASH_ADD_KEYPTR(hh, r->keys, k->key, lo + 1 + lt, k);
        if (HASH_COUNT(r->keys) == before) {
            td__free(k->key);
            td__free(k);
            return TD_ENOMEM;
        }
        r->nkeys++;
    }
    if (k->n == k->cap) {
        size_t ncap = k->cap ? k->cap * 2 : 4;
        td__ventry **c = td__realloc(k->cands, ncap * sizeof *c);
        if (c == NULL)
            return TD_ENOMEM;
        k->cands = c;
        k->cap = ncap;
    }
    k->cands[k->n++] = e;
    r->nrules++;
    return 0;
}

static int cmp_cand(const void *a, const void *b)
{
    const td__ventry *x = *(td__ventry *const *)a;
    const td__ventry *y = *(td__ventry *const *)b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_key(const void *a, const void *b)
{
    const td__rkey *x = *(td__rkey *const *)a;
    const td__rkey *y = *(td__rkey *const *)b;
    int c = strcmp(x->op->name, y->op->name);
    return c != 0 ? c : strcmp(x->target, y->target);
}

/* The candidate lists of every (op, target), in try order. */
static int finish(td__rules *r)
{
    for (size_t i = 0; i < r->nentries; i++) {
        td__ventry *e = r->entries[i];
        for (size_t j = 0; j < e->nops; j++) {
            int rc = add_to_key(r, e->ops[j], e);
            if (rc != 0)
                return rc;
        }
    }
    r->sorted = td__calloc(r->nkeys ? r->nkeys : 1, sizeof *r->sorted);
    if (r->sorted == NULL)
        return TD_ENOMEM;
    size_t i = 0;
    for (td__rkey *k = r->keys; k != NULL; k = k->hh.next) {
        qsort(k->cands, k->n, sizeof *k->cands, cmp_cand);
        r->sorted[i++] = k;
    }
    qsort(r->sorted, r->nkeys, sizeof *r->sorted, cmp_key);
    return 0;
}

static int commit(td_registry *reg, td__rules *r, int rc, td_diag *diag)
{
    if (rc == 0 && (rc = finish(r)) != 0)
        td__fail(diag, rc, NULL, "out of memory");
    if (rc != 0) {
        td__rules_free(r);
        return rc;
    }
    td__rules_free(reg->rules);
    reg->rules = r;
    return 0;
}

/* A new table: the registry's layers first when `over`, then the given
 * files (paths) or the one text. */
static int load(td_registry *reg, bool over, const char *const *paths,
                size_t npaths, const char *name, const char *text,
                size_t len, td_diag *diag)
{
    td__rules *r = td__calloc(1, sizeof *r);
    if (r == NULL)
        return td__fail(diag, TD_ENOMEM, NULL, "out of memory");
    int rc = 0;
    const td__rules *old = over ? reg->rules : NULL;
    /* The layers loaded before were accepted then; replaying them can only
     * fail for memory. */
    for (size_t i = 0; old != NULL && i < old->nlayers && rc == 0; i++)
        rc = text_layer(reg, r, old->layers[i].file, old->layers[i].text,
                        old->layers[i].len, diag);
    if (paths != NULL) {
        for (size_t i = 0; i < npaths && rc == 0; i++)
            rc = file_layer(reg, r, paths[i], diag);
    } else if (rc == 0) {
        rc = text_layer(reg, r, name ? name : "<rules>", text ? text : "",
                        len, diag);
    }
    return commit(reg, r, rc, diag);
}

int td_registry_load_rules(td_registry *reg, const char *const *paths,
                           size_t npaths, td_diag *diag)
{
    if (reg == NULL || (npaths > 0 && paths == NULL))
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    static const char *const none[1] = {NULL};
    return load(reg, false, npaths ? paths : none, npaths, NULL, NULL, 0,
                diag);
}

int td_registry_add_rules(td_registry *reg, const char *const *paths,
                          size_t npaths, td_diag *diag)
{
    if (reg == NULL || (npaths > 0 && paths == NULL))
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    static const char *const none[1] = {NULL};
    return load(reg, true, npaths ? paths : none, npaths, NULL, NULL, 0,
                diag);
}

int td_registry_load_rules_text(td_registry *reg, const char *name,
                                const char *text, size_t len, td_diag *diag)
{
    if (reg == NULL || (text == NULL && len > 0))
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    return load(reg, false, NULL, 0, name, text, len, diag);
}

int td_registry_add_rules_text(td_registry *reg, const char *name,
                               const char *text, size_t len, td_diag *diag)
{
    if (reg == NULL || (text == NULL && len > 0))
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    return load(reg, true, NULL, 0, name, text, len, diag);
}

int td_registry_load_default_rules(td_registry *reg, td_diag *diag)
{
    size_t len = 0;
    const char *text = td_default_rules(&len);
    return td_registry_load_rules_text(reg, TD__BUILTIN_RULES_NAME, text,
                                       len, diag);
}
