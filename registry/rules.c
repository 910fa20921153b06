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

#include <yaml.h>

#include "registry_internal.h"

/* ---- the YAML tree ----------------------------------------------------- */

typedef enum ynode_kind { Y_SCALAR, Y_SEQ, Y_MAP } ynode_kind;

typedef struct ynode {
    ynode_kind kind;
    int line, col;      /* 1-based */
    char *value;        /* Y_SCALAR: NUL-terminated */
    size_t len;
    bool plain;         /* unquoted and untagged: may be an int or a bool */
    size_t n, cap;      /* children; a map stores key, value, key, ... */
    struct ynode **kids;
} ynode;

static void ynode_free(ynode *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->n; i++)
        ynode_free(n->kids[i]);
    td__free(n->kids);
    td__free(n->value);
    td__free(n);
}

static int ynode_push(ynode *parent, ynode *kid)
{
    if (parent->n == parent->cap) {
        size_t ncap = parent->cap ? parent->cap * 2 : 4;
        ynode **k = td__realloc(parent->kids, ncap * sizeof *k);
        if (k == NULL)
            return TD_ENOMEM;
        parent->kids = k;
        parent->cap = ncap;
    }
    parent->kids[parent->n++] = kid;
    return 0;
}

/* The state of one file being loaded. */
typedef struct loader {
    td_registry *reg;
    td__rules *rules;   /* the table being built */
    const char *file;
    const char *text;
    size_t len;
    td_diag *diag;
} loader;

#define ERR(ld, code, node_line, node_col, ...)                               \
    td__diag((ld)->diag, (code), (ld)->file, (node_line), (node_col),          \
             (ld)->text, (ld)->len, __VA_ARGS__)
#define ERRN(ld, code, node, ...)                                             \
    ERR(ld, code, (node)->line, (node)->col, __VA_ARGS__)

/* Line and column (1-based) of a byte offset, for reader errors that carry
 * only an offset. */
static void offset_pos(const char *text, size_t len, size_t off, int *line,
                       int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int parser_error(loader *ld, yaml_parser_t *p)
{
    int line, col;
    if (p->error == YAML_MEMORY_ERROR)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    if (p->error == YAML_READER_ERROR) {
        offset_pos(ld->text, ld->len, p->problem_offset, &line, &col);
    } else {
        line = (int)p->problem_mark.line + 1;
        col = (int)p->problem_mark.column + 1;
    }
    const char *problem = p->problem ? p->problem : "invalid YAML";
    if (p->context != NULL)
        return ERR(ld, TD_EPARSE, line, col, "%s (%s)", problem, p->context);
    return ERR(ld, TD_EPARSE, line, col, "%s", problem);
}

static bool has_anchor(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: return ev->data.scalar.anchor != NULL;
    case YAML_SEQUENCE_START_EVENT: return ev->data.sequence_start.anchor != NULL;
    case YAML_MAPPING_START_EVENT: return ev->data.mapping_start.anchor != NULL;
    default: return false;
    }
}

/* Parses the whole text into *root (NULL for an empty stream). */
static int parse_tree(loader *ld, ynode **root)
{
    yaml_parser_t p;
    yaml_event_t ev;
    ynode *stack[TD_RULES_DEPTH_MAX + 1];
    int depth = 0;
    int ndocs = 0;
    int rc = 0;

    *root = NULL;
    if (!yaml_parser_initialize(&p))
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)ld->text, ld->len);

    for (;;) {
        if (!yaml_parser_parse(&p, &ev)) {
            rc = parser_error(ld, &p);
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        int col = (int)ev.start_mark.column + 1;
        yaml_event_type_t type = ev.type;

        if (type == YAML_ALIAS_EVENT || has_anchor(&ev)) {
            rc = ERR(ld, TD_ESCHEMA, line, col,
                     "aliases and anchors are not allowed");
        } else if (type == YAML_DOCUMENT_START_EVENT) {
            if (++ndocs > 1)
                rc = ERR(ld, TD_ESCHEMA, line, col,
                         "a rules file holds one YAML document");
        } else if (type == YAML_SCALAR_EVENT ||
                   type == YAML_SEQUENCE_START_EVENT ||
                   type == YAML_MAPPING_START_EVENT) {
            ynode *n = td__calloc(1, sizeof *n);
            if (n == NULL) {
                rc = ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
            } else {
                n->line = line;
                n->col = col;
                if (type == YAML_SCALAR_EVENT) {
                    n->kind = Y_SCALAR;
                    n->len = ev.data.scalar.length;
                    n->value = td__strndup((const char *)ev.data.scalar.value,
                                           n->len);
                    n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                               ev.data.scalar.tag == NULL;
                    if (n->value == NULL)
                        rc = ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
                } else {
                    n->kind = type == YAML_SEQUENCE_START_EVENT ? Y_SEQ : Y_MAP;
                    if (depth >= TD_RULES_DEPTH_MAX)
                        rc = ERR(ld, TD_ELIMIT, line, col,
                                 "nesting deeper than %d levels",
                                 TD_RULES_DEPTH_MAX);
                }
                /* Attach before anything else so that the tree owns it. */
                if (depth == 0) {
                    if (*root == NULL)
                        *root = n;
                    else
                        ynode_free(n); /* unreachable: one document */
                } else if (ynode_push(stack[depth - 1], n) != 0) {
                    ynode_free(n);
                    if (rc == 0)
                        rc = ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
                }
                if (rc == 0 && type != YAML_SCALAR_EVENT)
                    stack[depth++] = n;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT ||
                   type == YAML_MAPPING_END_EVENT) {
            if (depth > 0)
                depth--;
        }
        yaml_event_delete(&ev);
        if (rc != 0 || type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    if (rc != 0) {
        ynode_free(*root);
        *root = NULL;
    }
    return rc;
}

/* ---- scalar typing ----------------------------------------------------- */

static bool scalar_is_null(const ynode *n)
{
    return n->kind == Y_SCALAR && n->plain &&
           (n->len == 0 || strcmp(n->value, "~") == 0 ||
            strcmp(n->value, "null") == 0 || strcmp(n->value, "Null") == 0 ||
            strcmp(n->value, "NULL") == 0);
}

/* A plain decimal integer (YAML core schema, decimal form only). */
static bool scalar_int(const ynode *n, int64_t *out)
{
    if (n->kind != Y_SCALAR || !n->plain || n->len == 0)
        return false;
    const char *s = n->value;
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (i == n->len)
        return false;
    for (size_t k = i; k < n->len; k++)
        if (s[k] < '0' || s[k] > '9')
            return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = (int64_t)v;
    return true;
}

static bool scalar_bool(const ynode *n, bool *out)
{
    if (n->kind != Y_SCALAR || !n->plain)
        return false;
    static const char *const t[] = {"true", "True", "TRUE"};
    static const char *const f[] = {"false", "False", "FALSE"};
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(n->value, t[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(n->value, f[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* A non-empty string scalar that fits a name; diagnoses otherwise.  `what`
 * names the field in messages. */
static int check_name(loader *ld, const ynode *n, const char *what)
{
    if (n->kind != Y_SCALAR || scalar_is_null(n) || n->len == 0)
        return ERRN(ld, TD_ESCHEMA, n, "%s must be a non-empty string", what);
    /* Names end up in hash keys ("op\x1ftarget"), tables and JSON: keep
     * control characters (and NULs from escapes) out of them. */
    for (size_t i = 0; i < n->len; i++)
        if ((unsigned char)n->value[i] < 0x20 || n->value[i] == 0x7f)
            return ERRN(ld, TD_ESCHEMA, n,
                        "%s must not contain control characters", what);
    if (n->len >= TD_NAME_MAX)
        return ERRN(ld, TD_ELIMIT, n, "%s is longer than %d bytes", what,
                    TD_NAME_MAX - 1);
    return 0;
}

/* Checks a mapping for duplicate and non-scalar keys. */
static int check_map_keys(loader *ld, const ynode *m)
{
    for (size_t i = 0; i < m->n; i += 2) {
        const ynode *k = m->kids[i];
        if (k->kind != Y_SCALAR)
            return ERRN(ld, TD_ESCHEMA, k, "mapping keys must be scalars");
        for (size_t j = 0; j < i; j += 2)
            if (strcmp(m->kids[j]->value, k->value) == 0)
                return ERRN(ld, TD_ESCHEMA, k, "duplicate key '%s'", k->value);
    }
    return 0;
}

/* The value of key `name` in mapping m, NULL if absent. */
static const ynode *map_get(const ynode *m, const char *name)
{
    for (size_t i = 0; i + 1 < m->n; i += 2)
        if (strcmp(m->kids[i]->value, name) == 0)
            return m->kids[i + 1];
    return NULL;
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
static int bind_args(loader *ld, const td__pred_entry *pe, const ynode *at,
                     const ynode *m, td_args *out)
{
    const char *pname = pe->desc.name;
    size_t ngiven = m ? m->n / 2 : 0;
    int rc;

    if (m != NULL && (rc = check_map_keys(ld, m)) != 0)
        return rc;
    /* Unknown names first: they are usually typos of a required one. */
    for (size_t i = 0; i < ngiven; i++) {
        const ynode *k = m->kids[2 * i];
        bool known = false;
        for (size_t s = 0; s < pe->desc.nargs; s++)
            if (strcmp(pe->desc.args[s].name, k->value) == 0)
                known = true;
        if (!known)
            return ERRN(ld, TD_ESCHEMA, k,
                        "predicate '%s': unknown argument '%s'", pname,
                        k->value);
    }
    for (size_t s = 0; s < pe->desc.nargs; s++)
        if (pe->desc.args[s].required &&
            (m == NULL || map_get(m, pe->desc.args[s].name) == NULL))
            return ERRN(ld, TD_ESCHEMA, at,
                        "predicate '%s': missing required argument '%s'",
                        pname, pe->desc.args[s].name);
    if (ngiven == 0)
        return 0;

    out->v = td__calloc(ngiven, sizeof *out->v);
    if (out->v == NULL)
        return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < ngiven; i++) {
        const ynode *k = m->kids[2 * i], *v = m->kids[2 * i + 1];
        const td_arg_spec *spec = NULL;
        for (size_t s = 0; s < pe->desc.nargs; s++)
            if (strcmp(pe->desc.args[s].name, k->value) == 0)
                spec = &pe->desc.args[s];
        td__arg *a = &out->v[out->n++];
        a->name = spec->name;
        a->type = spec->type;
        bool ok = true;
        switch (spec->type) {
        case TD_ARG_INT:
            ok = scalar_int(v, &a->i);
            break;
        case TD_ARG_BOOL:
            ok = scalar_bool(v, &a->b);
            break;
        case TD_ARG_STRING:
            ok = v->kind == Y_SCALAR && !scalar_is_null(v);
            break;
        case TD_ARG_STRING_LIST:
            ok = v->kind == Y_SEQ;
            for (size_t j = 0; ok && j < v->n; j++)
                ok = v->kids[j]->kind == Y_SCALAR &&
                     !scalar_is_null(v->kids[j]);
            break;
        }
        if (!ok)
            return ERRN(ld, TD_ESCHEMA, v,
                        "predicate '%s': argument '%s' must be %s %s", pname,
                        spec->name,
                        spec->type == TD_ARG_INT ? "an" : "a",
                        td_arg_type_name(spec->type));
        if (spec->type == TD_ARG_STRING) {
            if ((rc = check_name(ld, v, "a string argument")) != 0)
                return rc;
            a->s = td__strdup(v->value);
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
                a->items[j] = td__strdup(v->kids[j]->value);
                if (a->items[j] == NULL)
                    return ERR(ld, TD_ENOMEM, 0, 0, "out of memory");
                a->nitems++;
            }
        }
    }
    return 0;
}

/* One item of a `when:` list. */
static int load_pred(loader *ld, const ynode *item, td__rule_pred *rp)
{
    const ynode *name_node, *args = NULL;
    int rc;

    if (item->kind == Y_SCALAR) {
        name_node = item;
    } else if (item->kind == Y_MAP && item->n == 2) {
        name_node = item->kids[0];
        args = item->kids[1];
        if (name_node->kind != Y_SCALAR)
            return ERRN(ld, TD_ESCHEMA, name_node,
                        "mapping keys must be scalars");
        if (scalar_is_null(args))
            args = NULL;
        else if (args->kind != Y_MAP)
            return ERRN(ld, TD_ESCHEMA, args,
                        "predicate '%s': arguments must be a mapping",
                        name_node->value);
    } else {
        return ERRN(ld, TD_ESCHEMA, item,
                    "a predicate is a name or a one-key mapping "
                    "'name: {arg: value}'");
    }
    if ((rc = check_name(ld, name_node, "a predicate name")) != 0)
        return rc;
    const td__pred_entry *pe = td__registry_pred(ld->reg, name_node->value);
    if (pe == NULL)
        return ERRN(ld, TD_ESCHEMA, name_node, "unknown predicate '%s'",
                    name_node->value);
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

static int add_to_key(loader *ld, const ynode *at, const td__op_entry *op,
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
static int need(loader *ld, const ynode *m, const char *name,
                const ynode **out)
{
    *out = map_get(m, name);
    if (*out == NULL)
        return ERRN(ld, TD_ESCHEMA, m, "variant entry is missing '%s'", name);
    return 0;
}

static int load_entry(loader *ld, const ynode *m)
{
    td__rules *r = ld->rules;
    const ynode *name, *impl, *ops, *target, *prio, *when, *enabled;
    int rc;

    if (m->kind != Y_MAP)
        return ERRN(ld, TD_ESCHEMA, m, "a variant entry must be a mapping");
    if (r->nentries >= TD_MAX_VARIANTS)
        return ERRN(ld, TD_ELIMIT, m, "more than %d variant entries",
                    TD_MAX_VARIANTS);
    if ((rc = check_map_keys(ld, m)) != 0)
        return rc;
    for (size_t i = 0; i < m->n; i += 2) {
        bool known = false;
        for (size_t k = 0; k < sizeof entry_keys / sizeof *entry_keys; k++)
            if (strcmp(m->kids[i]->value, entry_keys[k]) == 0)
                known = true;
        if (!known)
            return ERRN(ld, TD_ESCHEMA, m->kids[i],
                        "unknown key '%s' in variant entry", m->kids[i]->value);
    }
    if ((rc = need(ld, m, "name", &name)) != 0 ||
        (rc = check_name(ld, name, "name")) != 0)
        return rc;
    impl = map_get(m, "impl");
    if ((rc = need(ld, m, "ops", &ops)) != 0 ||
        (rc = need(ld, m, "target", &target)) != 0 ||
        (rc = need(ld, m, "priority", &prio)) != 0)
        return rc;
    when = map_get(m, "when");
    enabled = map_get(m, "enabled");

    /* Check everything that needs no allocation first. */
    const char *impl_name = name->value;
    if (impl != NULL) {
        if ((rc = check_name(ld, impl, "impl")) != 0)
            return rc;
        impl_name = impl->value;
    }
    const td__impl_entry *ie = td__registry_impl(ld->reg, impl_name);
    if (ie == NULL)
        return ERRN(ld, TD_ESCHEMA, impl ? impl : name, "unknown impl '%s'",
                    impl_name);
    if (ops->kind != Y_SEQ)
        return ERRN(ld, TD_ESCHEMA, ops, "ops must be a list of op names");
    if (ops->n == 0)
        return ERRN(ld, TD_ESCHEMA, ops, "ops must not be empty");
    for (size_t i = 0; i < ops->n; i++) {
        const ynode *o = ops->kids[i];
        if ((rc = check_name(ld, o, "an op name")) != 0)
            return rc;
        if (td_registry_op(ld->reg, o->value) == NULL)
            return ERRN(ld, TD_ESCHEMA, o, "unknown op '%s'", o->value);
        for (size_t j = 0; j < i; j++)
            if (strcmp(ops->kids[j]->value, o->value) == 0)
                return ERRN(ld, TD_ESCHEMA, o, "op '%s' is listed twice",
                            o->value);
    }
    if ((rc = check_name(ld, target, "target")) != 0)
        return rc;
    int64_t pv;
    if (!scalar_int(prio, &pv))
        return ERRN(ld, TD_ESCHEMA, prio, "priority must be an integer");
    if (pv < INT_MIN || pv > INT_MAX)
        return ERRN(ld, TD_ELIMIT, prio, "priority is out of range");
    bool en = true;
    if (enabled != NULL && !scalar_bool(enabled, &en))
        return ERRN(ld, TD_ESCHEMA, enabled, "enabled must be true or false");
    if (when != NULL && !scalar_is_null(when)) {
        if (when->kind != Y_SEQ)
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
    e->name = td__strdup(name->value);
    e->impl_name = td__strdup(impl_name);
    e->target = td__strdup(target->value);
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
        HASH_FIND(hh, ld->reg->ops, ops->kids[i]->value,
                  strlen(ops->kids[i]->value), oe);
        if ((rc = add_to_key(ld, name, oe, e)) != 0)
            return rc;
    }
    return 0;
}

static const char *const top_keys[] = {"version", "variants"};

static int load_tree(loader *ld, const ynode *root)
{
    int rc;
    if (root == NULL || scalar_is_null(root))
        return ERR(ld, TD_ESCHEMA, 1, 1, "empty rules file");
    if (root->kind != Y_MAP)
        return ERRN(ld, TD_ESCHEMA, root,
                    "a rules file is a mapping with 'version' and 'variants'");
    if ((rc = check_map_keys(ld, root)) != 0)
        return rc;
    for (size_t i = 0; i < root->n; i += 2) {
        const char *k = root->kids[i]->value;
        if (strcmp(k, top_keys[0]) != 0 && strcmp(k, top_keys[1]) != 0)
            return ERRN(ld, TD_ESCHEMA, root->kids[i],
                        "unknown top-level key '%s'", k);
    }
    const ynode *version = map_get(root, "version");
    const ynode *variants = map_get(root, "variants");
    int64_t v;
    if (version == NULL)
        return ERRN(ld, TD_ESCHEMA, root, "missing 'version'");
    if (!scalar_int(version, &v) || v != 1)
        return ERRN(ld, TD_ESCHEMA, version, "version must be 1");
    if (variants == NULL)
        return ERRN(ld, TD_ESCHEMA, root, "missing 'variants'");
    if (variants->kind != Y_SEQ)
        return ERRN(ld, TD_ESCHEMA, variants,
                    "variants must be a list of variant entries");
    for (size_t i = 0; i < variants->n; i++)
        if ((rc = load_entry(ld, variants->kids[i])) != 0)
            return rc;
    return 0;
}

/* Loads one text into ld->rules. */
static int load_text(td_registry *reg, td__rules *rules, const char *file,
                     const char *text, size_t len, td_diag *diag)
{
    loader ld = {reg, rules, file, text, len, diag};
    if (len > TD_RULES_FILE_MAX)
        return td__diag(diag, TD_ELIMIT, file, 1, 1, NULL, 0,
                        "file is larger than the limit of %zu bytes",
                        (size_t)TD_RULES_FILE_MAX);
    ynode *root = NULL;
    int rc = parse_tree(&ld, &root);
    if (rc == 0)
        rc = load_tree(&ld, root);
    ynode_free(root);
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
