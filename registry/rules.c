/*
 * Loading rules files (contract section 2).
 *
 * The YAML is read with libyaml's event API into a small tree of our own:
 * events let us refuse aliases and anchors, excessive nesting and extra
 * documents before anything is built from them.  The tree is then checked
 * against the schema and against what C registered, producing a new rules
 * table that replaces the registry's only when every file was accepted.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"
#include "td_yaml.h"

/* The state of one file being loaded. */
typedef struct loader {
    td_registry *reg;
    td__rules *rules;   /* the table being built */
    const char *file;
    td_ydoc doc;
    td_diag *diag;
} loader;

#define ERR(ld, code, node_line, node_col, ...)                               \
    td__yerr_at(&(ld)->doc, (code), (node_line), (node_col), __VA_ARGS__)
#define ERRN(ld, code, node, ...) td__yerr(&(ld)->doc, (code), (node), __VA_ARGS__)

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

/* "{a: 1, b: [x, y]}" in schema order; "" when nothing is bound. */
static int format_args(const td__pred_entry *pe, const td_args *a, char **out)
{
    td_buf b;
    td__buf_init(&b);
    size_t shown = 0;
    for (size_t s = 0; s < pe->desc.nargs; s++) {
        const td__arg *v = NULL;
        for (size_t i = 0; i < a->n; i++)
            if (strcmp(a->v[i].name, pe->desc.args[s].name) == 0)
                v = &a->v[i];
        if (v == NULL)
            continue;
        td__buf_puts(&b, shown++ ? ", " : "{");
        td__buf_printf(&b, "%s: ", v->name);
        switch (v->type) {
        case TD_ARG_INT: td__buf_printf(&b, "%" PRId64, v->i); break;
        case TD_ARG_BOOL: td__buf_puts(&b, v->b ? "true" : "false"); break;
        case TD_ARG_STRING: put_str(&b, v->s); break;
        case TD_ARG_STRING_LIST:
            td__buf_puts(&b, "[");
            for (size_t k = 0; k < v->nitems; k++) {
                if (k > 0)
                    td__buf_puts(&b, ", ");
                put_str(&b, v->items[k]);
            }
            td__buf_puts(&b, "]");
            break;
        }
    }
    if (shown)
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
        for (size_t s = 0; s < pe->desc.nargs; s++)
            if (strcmp(pe->desc.args[s].name, k->str) == 0)
                known = true;
        if (!known)
            return ERRN(ld, TD_ESCHEMA, k,
                        "predicate '%s': unknown argument '%s'", pname,
                        k->str);
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
    if (pe == NULL)
        return ERRN(ld, TD_ESCHEMA, name_node, "unknown predicate '%s'",
                    name_node->str);
    rp->pred = pe;
    if ((rc = bind_args(ld, pe, name_node, args, &rp->args)) != 0)
        return rc;
    if (format_args(pe, &rp->args, &rp->args_text) != 0)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    return 0;
}

/* ---- the rules table under construction -------------------------------- */

static const char *const entry_keys[] = {"name", "impl", "ops", "target",
                                         "priority", "when", "enabled"};

static int add_to_key(loader *ld, const td_ynode *at, const td__op_entry *op,
                      td__ventry *e)
{
    td__rules *r = ld->rules;
    size_t lo = strlen(op->name), lt = strlen(e->target);
    char kbuf[2 * TD_NAME_MAX + 2];
    memcpy(kbuf, op->name, lo);
    kbuf[lo] = '\x1f';
    memcpy(kbuf + lo + 1, e->target, lt);
    kbuf[lo + 1 + lt] = '\0';

    td__rkey *k = NULL;
    HASH_FIND(hh, r->keys, kbuf, lo + 1 + lt, k);
    if (k != NULL) {
        for (size_t i = 0; i < k->n; i++) {
            const td__ventry *o = k->cands[i];
            if (strcmp(o->name, e->name) != 0)
                continue;
            if (strcmp(o->file, e->file) == 0)
                return ERRN(ld, TD_ESCHEMA, at,
                            "duplicate variant '%s' for op '%s' target '%s' "
                            "(first declared at line %d)",
                            e->name, op->name, e->target, o->line);
            return ERRN(ld, TD_ESCHEMA, at,
                        "duplicate variant '%s' for op '%s' target '%s' "
                        "(first declared at %s:%d)",
                        e->name, op->name, e->target, o->file, o->line);
        }
    } else {
        k = td__calloc(1, sizeof *k);
        if (k == NULL)
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        k->key = td__strndup(kbuf, lo + 1 + lt);
        if (k->key == NULL) {
            td__free(k);
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        }
        k->op = op;
        k->target = k->key + lo + 1;
        unsigned before = HASH_COUNT(r->keys);
        HASH_ADD_KEYPTR(hh, r->keys, k->key, lo + 1 + lt, k);
        if (HASH_COUNT(r->keys) == before) {
            td__free(k->key);
            td__free(k);
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        }
        r->nkeys++;
    }
    if (k->n == k->cap) {
        size_t ncap = k->cap ? k->cap * 2 : 4;
        td__ventry **c = td__realloc(k->cands, ncap * sizeof *c);
        if (c == NULL)
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        k->cands = c;
        k->cap = ncap;
    }
    k->cands[k->n++] = e;
    r->nrules++;
    return 0;
}

/* Required key `name` of entry m, diagnosing its absence. */
static int need(loader *ld, const td_ynode *m, const char *name,
                const td_ynode **out)
{
    *out = td__ymap_get(m, name);
    if (*out == NULL)
        return ERRN(ld, TD_ESCHEMA, m, "variant entry is missing '%s'", name);
    return 0;
}

static int load_entry(loader *ld, const td_ynode *m)
{
    td__rules *r = ld->rules;
    const td_ynode *name, *impl, *ops, *target, *prio, *when, *enabled;
    int rc;

    if (m->kind != TD_YMAP)
        return ERRN(ld, TD_ESCHEMA, m, "a variant entry must be a mapping");
    if (r->nentries >= TD_MAX_VARIANTS)
        return ERRN(ld, TD_ELIMIT, m, "more than %d variant entries",
                    TD_MAX_VARIANTS);
    const td_ynode *unknown = NULL;
    const td_ynode *vals[sizeof entry_keys / sizeof *entry_keys];
    rc = td__ymap_read(&ld->doc, m, entry_keys,
                       sizeof entry_keys / sizeof *entry_keys, vals, &unknown);
    if (unknown != NULL)
        return ERRN(ld, TD_ESCHEMA, unknown,
                    "unknown key '%.64s' in variant entry", unknown->str);
    if (rc != 0)
        return rc;
    if ((rc = need(ld, m, "name", &name)) != 0 ||
        (rc = check_name(ld, name, "name")) != 0)
        return rc;
    impl = td__ymap_get(m, "impl");
    if ((rc = need(ld, m, "ops", &ops)) != 0 ||
        (rc = need(ld, m, "target", &target)) != 0 ||
        (rc = need(ld, m, "priority", &prio)) != 0)
        return rc;
    when = td__ymap_get(m, "when");
    enabled = td__ymap_get(m, "enabled");

    /* Check everything that needs no allocation first. */
    const char *impl_name = name->str;
    if (impl != NULL) {
        if ((rc = check_name(ld, impl, "impl")) != 0)
            return rc;
        impl_name = impl->str;
    }
    const td__impl_entry *ie = td__registry_impl(ld->reg, impl_name);
    if (ie == NULL)
        return ERRN(ld, TD_ESCHEMA, impl ? impl : name, "unknown impl '%s'",
                    impl_name);
    if (ops->kind != TD_YSEQ)
        return ERRN(ld, TD_ESCHEMA, ops, "ops must be a list of op names");
    if (ops->n == 0)
        return ERRN(ld, TD_ESCHEMA, ops, "ops must not be empty");
    for (size_t i = 0; i < ops->n; i++) {
        const td_ynode *o = ops->kids[i];
        if ((rc = check_name(ld, o, "an op name")) != 0)
            return rc;
        if (td_registry_op(ld->reg, o->str) == NULL)
            return ERRN(ld, TD_ESCHEMA, o, "unknown op '%s'", o->str);
        for (size_t j = 0; j < i; j++)
            if (strcmp(ops->kids[j]->str, o->str) == 0)
                return ERRN(ld, TD_ESCHEMA, o, "op '%s' is listed twice",
                            o->str);
    }
    if ((rc = check_name(ld, target, "target")) != 0)
        return rc;
    int64_t pv;
    if ((rc = td__yint(&ld->doc, prio, "priority", INT_MIN, INT_MAX, &pv)) !=
        0)
        return rc;
    bool en = true;
    if (enabled != NULL &&
        (rc = td__ybool(&ld->doc, enabled, "enabled", &en)) != 0)
        return rc;
    if (when != NULL && !td__yis_null(when)) {
        if (when->kind != TD_YSEQ)
            return ERRN(ld, TD_ESCHEMA, when,
                        "when must be a list of predicates");
        if (when->n > TD_MAX_PREDICATES)
            return ERRN(ld, TD_ELIMIT, when->kids[TD_MAX_PREDICATES],
                        "more than %d predicates in one when list",
                        TD_MAX_PREDICATES);
    } else {
        when = NULL;
    }

    /* Build the entry; it belongs to the table as soon as it is listed. */
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
    e->impl = ie;
    e->priority = (int)pv;
    e->enabled = en;
    e->line = m->line;
    e->name = td__strdup(name->str);
    e->impl_name = td__strdup(impl_name);
    e->target = td__strdup(target->str);
    e->file = td__strdup(ld->file);
    if (!e->name || !e->impl_name || !e->target || !e->file)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    if (when != NULL && when->n > 0) {
        e->preds = td__calloc(when->n, sizeof *e->preds);
        if (e->preds == NULL)
            return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < when->n; i++) {
            /* Count it first so that a failure frees what was bound. */
            e->npreds++;
            if ((rc = load_pred(ld, when->kids[i], &e->preds[i])) != 0)
                return rc;
        }
    }
    for (size_t i = 0; i < ops->n; i++) {
        const td__op_entry *oe = NULL;
        HASH_FIND(hh, ld->reg->ops, ops->kids[i]->str,
                  strlen(ops->kids[i]->str), oe);
        if ((rc = add_to_key(ld, name, oe, e)) != 0)
            return rc;
    }
    return 0;
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
    if (unknown != NULL)
        return ERRN(ld, TD_ESCHEMA, unknown, "unknown top-level key '%.64s'",
                    unknown->str);
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

/* The limits of a rules file. */
static const td_ylimits rules_limits = {TD_RULES_FILE_MAX, TD_RULES_DEPTH_MAX,
                                        0};

/* Loads one text into ld->rules. */
static int load_text(td_registry *reg, td__rules *rules, const char *file,
                     const char *text, size_t len, td_diag *diag)
{
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.reg = reg;
    ld.rules = rules;
    ld.file = file;
    ld.diag = diag;
    int rc = td__ydoc_load(&ld.doc, file, "rules file", text, len,
                           &rules_limits, diag);
    if (rc == 0)
        rc = load_tree(&ld, ld.doc.root);
    td__ydoc_free(&ld.doc);
    return rc;
}

/* ---- sorting and swapping ---------------------------------------------- */

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

static int finish(td__rules *r)
{
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
        td__diag(diag, rc, NULL, 0, 0, NULL, 0, "out of memory");
    if (rc != 0) {
        td__rules_free(r);
        return rc;
    }
    td__rules_free(reg->rules);
    reg->rules = r;
    return 0;
}

int td_registry_load_rules(td_registry *reg, const char *const *paths,
                           size_t npaths, td_diag *diag)
{
    if (reg == NULL || (npaths > 0 && paths == NULL))
        return td__diag(diag, TD_EINVAL, NULL, 0, 0, NULL, 0,
                        "invalid argument");
    td__rules *r = td__calloc(1, sizeof *r);
    if (r == NULL)
        return td__diag(diag, TD_ENOMEM, NULL, 0, 0, NULL, 0, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < npaths && rc == 0; i++) {
        char *text = NULL;
        size_t len = 0;
        rc = td__read_file(paths[i], TD_RULES_FILE_MAX, &text, &len, diag);
        if (rc == 0)
            rc = load_text(reg, r, paths[i], text, len, diag);
        td__free(text);
    }
    return commit(reg, r, rc, diag);
}

int td_registry_load_rules_text(td_registry *reg, const char *name,
                                const char *text, size_t len, td_diag *diag)
{
    if (reg == NULL || (text == NULL && len > 0))
        return td__diag(diag, TD_EINVAL, NULL, 0, 0, NULL, 0,
                        "invalid argument");
    td__rules *r = td__calloc(1, sizeof *r);
    if (r == NULL)
        return td__diag(diag, TD_ENOMEM, NULL, 0, 0, NULL, 0, "out of memory");
    int rc = load_text(reg, r, name ? name : "<rules>", text ? text : "", len,
                       diag);
    return commit(reg, r, rc, diag);
}

int td_registry_load_default_rules(td_registry *reg, td_diag *diag)
{
    size_t len = 0;
    const char *text = td_default_rules(&len);
    return td_registry_load_rules_text(reg, "rules/rules.yaml", text, len,
                                       diag);
}
