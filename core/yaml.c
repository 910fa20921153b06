/*
 * The one YAML front-end (yaml.h): libyaml events into a positioned tree,
 * one tag / anchor / alias policy, one wording of libyaml's errors, limits,
 * key tables (with the hint after an unknown name) and scalar typing.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "td_yaml.h"

/* ---- the tree ------------------------------------------------------------- */

static void ynode_free(td_ynode *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->n; i++)
        ynode_free(n->kids[i]);
    td__free(n->kids);
    td__free(n->str);
    td__free(n);
}

static int ynode_push(td_ynode *parent, td_ynode *kid)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 4;
        td_ynode **k = td__realloc(parent->kids, cap * sizeof *k);
        if (k == NULL)
            return TD_ENOMEM;
        parent->kids = k;
        parent->cap = cap;
    }
    parent->kids[parent->n++] = kid;
    return 0;
}

void td__ydoc_free(td_ydoc *doc)
{
    if (doc == NULL)
        return;
    ynode_free(doc->root);
    doc->root = NULL;
    doc->nnodes = 0;
}

/* ---- messages ------------------------------------------------------------- */

int td__yerr_at(const td_ydoc *doc, int code, int line, int col,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    td__vfail_at(doc->diag, code,
                 (td_where){doc->file, line, col, doc->text, doc->len}, fmt,
                 ap);
    va_end(ap);
    return code;
}

int td__yerr(const td_ydoc *doc, int code, const td_ynode *n,
             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    td__vfail_at(doc->diag, code,
                 (td_where){doc->file, n->line, n->col, doc->text, doc->len},
                 fmt, ap);
    va_end(ap);
    return code;
}

int td__ycol_in(const td_ynode *n, size_t off)
{
    int col = n->col + (n->quoted ? 1 : 0);
    if (n->str == NULL)
        return col;
    for (size_t i = 0; i < off && i < n->len; i++)
        if (((unsigned char)n->str[i] & 0xC0) != 0x80)
            col++;
    return col;
}

/* Line and column (1-based, column in code points) of a byte offset: libyaml
 * reports reader errors by offset only. */
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

static int parser_error(const td_ydoc *doc, const yaml_parser_t *p)
{
    int line, col;
    if (p->error == YAML_MEMORY_ERROR)
        return td__yerr_at(doc, TD_ENOMEM, 0, 0, "out of memory");
    if (p->error == YAML_READER_ERROR) {
        offset_pos(doc->text, doc->len, p->problem_offset, &line, &col);
    } else {
        line = (int)p->problem_mark.line + 1;
        col = (int)p->problem_mark.column + 1;
    }
    const char *problem = p->problem ? p->problem : "unknown error";
    if (p->context != NULL)
        return td__yerr_at(doc, TD_EPARSE, line, col, "not valid YAML: %s %s",
                           p->context, problem);
    return td__yerr_at(doc, TD_EPARSE, line, col, "not valid YAML: %s",
                       problem);
}

/* ---- building ------------------------------------------------------------- */

static int build(td_ydoc *doc, const td_ylimits *lim)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    td_ynode *stack[TD_YAML_DEPTH_CAP];
    int max_depth = lim->max_depth;
    size_t max_nodes = lim->max_nodes ? lim->max_nodes : TD_YAML_NODES_MAX;
    int depth = 0, ndocs = 0, rc = 0;
    bool done = false;

    if (max_depth <= 0 || max_depth > TD_YAML_DEPTH_CAP)
        max_depth = TD_YAML_DEPTH_CAP;
    if (!yaml_parser_initialize(&parser))
        return td__yerr_at(doc, TD_ENOMEM, 0, 0, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)doc->text,
                                 doc->len);
    while (!done && rc == 0) {
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = parser_error(doc, &parser);
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        int col = (int)ev.start_mark.column + 1;
        const yaml_char_t *anchor = NULL, *tag = NULL;
        td_ynode *n = NULL;

        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++ndocs > 1)
                rc = td__yerr_at(doc, TD_ESCHEMA, line, col,
                                 "a %s holds exactly one YAML document",
                                 doc->kind);
            break;
        case YAML_ALIAS_EVENT:
            rc = td__yerr_at(doc, TD_ESCHEMA, line, col,
                             "YAML aliases are not allowed");
            break;
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (ev.type == YAML_SCALAR_EVENT) {
                anchor = ev.data.scalar.anchor;
                tag = ev.data.scalar.tag;
            } else if (ev.type == YAML_SEQUENCE_START_EVENT) {
                anchor = ev.data.sequence_start.anchor;
                tag = ev.data.sequence_start.tag;
            } else {
                anchor = ev.data.mapping_start.anchor;
                tag = ev.data.mapping_start.tag;
            }
            if (anchor != NULL) {
                rc = td__yerr_at(doc, TD_ESCHEMA, line, col,
                                 "YAML anchors are not allowed");
                break;
            }
            if (tag != NULL) {
                rc = td__yerr_at(doc, TD_ESCHEMA, line, col,
                                 "YAML tags are not allowed");
                break;
            }
            if (doc->nnodes >= max_nodes) {
                rc = td__yerr_at(doc, TD_ELIMIT, line, col,
                                 "more than %zu YAML nodes", max_nodes);
                break;
            }
            n = td__calloc(1, sizeof *n);
            if (n == NULL) {
                rc = td__yerr_at(doc, TD_ENOMEM, 0, 0, "out of memory");
                break;
            }
            doc->nnodes++;
            n->line = line;
            n->col = col;
            if (ev.type == YAML_SCALAR_EVENT) {
                yaml_scalar_style_t st = ev.data.scalar.style;
                n->kind = TD_YSCALAR;
                n->plain = st == YAML_PLAIN_SCALAR_STYLE;
                n->quoted = st == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                            st == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
                n->len = ev.data.scalar.length;
                n->str = td__strndup((const char *)ev.data.scalar.value,
                                     n->len);
                if (n->str == NULL) {
                    td__free(n);
                    rc = td__yerr_at(doc, TD_ENOMEM, 0, 0, "out of memory");
                    break;
                }
            } else {
                n->kind = ev.type == YAML_SEQUENCE_START_EVENT ? TD_YSEQ
                                                                : TD_YMAP;
            }
            /* Attach first, so that the tree owns the node. */
            if (depth > 0) {
                if (ynode_push(stack[depth - 1], n) != 0) {
                    ynode_free(n);
                    rc = td__yerr_at(doc, TD_ENOMEM, 0, 0, "out of memory");
                    break;
                }
            } else {
                doc->root = n;
            }
            if (n->kind != TD_YSCALAR) {
                if (depth >= max_depth) {
                    rc = td__yerr_at(doc, TD_ELIMIT, line, col,
                                     "nesting deeper than %d levels",
                                     max_depth);
                    break;
                }
                stack[depth++] = n;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0)
                depth--;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int td__ydoc_load(td_ydoc *doc, const char *file, const char *kind,
                  const char *text, size_t len, const td_ylimits *lim,
                  td_diag *diag)
{
    memset(doc, 0, sizeof *doc);
    doc->file = file ? file : "";
    doc->kind = kind ? kind : "YAML file";
    doc->text = text ? text : "";
    doc->len = text ? len : 0;
    doc->diag = diag;
    if (lim->max_bytes > 0 && len > lim->max_bytes)
        return td__fail_at(diag, TD_ELIMIT, TD_AT(doc->file, 1, 1),
                           "file is larger than the limit of %zu bytes",
                           lim->max_bytes);
    int rc = build(doc, lim);
    if (rc == 0 && (doc->root == NULL || td__yis_null(doc->root)))
        rc = td__yerr_at(doc, TD_ESCHEMA, 1, 1, "empty %s", doc->kind);
    if (rc != 0)
        td__ydoc_free(doc);
    return rc;
}

/* ---- key tables ----------------------------------------------------------- */

int td__ykey(const td_ydoc *doc, const td_ynode *k)
{
    if (k->kind != TD_YSCALAR)
        return td__yerr(doc, TD_ESCHEMA, k, "mapping keys must be scalars");
    if (strlen(k->str) != k->len)
        return td__yerr(doc, TD_ESCHEMA, k, "mapping key contains a NUL byte");
    return 0;
}

int td__ydup(const td_ydoc *doc, const td_ynode *m, size_t i)
{
    const td_ynode *k = TD_YKEY(m, i);
    for (size_t j = 0; j < i; j++) {
        const td_ynode *o = TD_YKEY(m, j);
        if (o->kind == TD_YSCALAR && o->len == k->len &&
            memcmp(o->str, k->str, k->len) == 0)
            return td__yerr(doc, TD_ESCHEMA, k, "duplicate key '%.64s'",
                            k->str);
    }
    return 0;
}

static bool same_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

const char *td__yhint(char *buf, size_t cap, const char *name,
                      const char *const *cands, size_t n)
{
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    const char *near = NULL;
    /* Another case of a valid name is that name, however many letters
     * differ (CTA, OP). */
    for (size_t i = 0; i < n && near == NULL; i++)
        if (cands[i] != NULL && strcmp(cands[i], name) != 0 &&
            same_nocase(cands[i], name))
            near = cands[i];
    if (near != NULL) {
        snprintf(buf, cap, " (did you mean '%s'?)", near);
        return buf;
    }
    /* A suggestion only when no other name is as close: "threadIdx.w" is as
     * near to threadIdx.y as to threadIdx.x, and the list says more.  The
     * runner-up is the closest of the others; td_suggest keeps the first of
     * equals, so it prefers the runner-up put first exactly on a tie. */
    near = td_suggest(name, cands, n);
    const char *rest[64];
    if (near != NULL && n <= sizeof rest / sizeof *rest) {
        for (size_t i = 0; i < n; i++)
            rest[i] = cands[i] == near ? NULL : cands[i];
        const char *second = td_suggest(name, rest, n);
        const char *pair[2] = {second, near};
        if (second != NULL && td_suggest(name, pair, 2) == second)
            near = NULL;
    }
    if (near != NULL) {
        snprintf(buf, cap, " (did you mean '%s'?)", near);
        return buf;
    }
    /* The list: whole names only, and room kept for the closing ", ...)". */
    static const char more[] = ", ...)";
    size_t len = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (cands[i] == NULL)
            continue;
        const char *sep = any ? ", " : " (expected one of: ";
        size_t need = strlen(sep) + strlen(cands[i]);
        if (len + need + sizeof more > cap) {
            if (any)
                snprintf(buf + len, cap - len, "%s", more);
            else
                buf[0] = '\0';
            return buf;
        }
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, cands[i]);
        any = true;
    }
    if (any)
        snprintf(buf + len, cap - len, ")");
    return buf;
}

int td__ymap_read(const td_ydoc *doc, const td_ynode *m,
                  const char *const *names, size_t nnames,
                  const td_ynode **vals, const td_ynode **unknown)
{
    int rc;
    for (size_t j = 0; j < nnames; j++)
        vals[j] = NULL;
    for (size_t i = 0; i < TD_YPAIRS(m); i++) {
        const td_ynode *k = TD_YKEY(m, i);
        if ((rc = td__ykey(doc, k)) != 0)
            return rc;
        size_t j = 0;
        while (j < nnames && strcmp(k->str, names[j]) != 0)
            j++;
        if (j == nnames) {
            if (unknown == NULL) {
                char hint[256];
                return td__yerr(doc, TD_ESCHEMA, k, "unknown key '%.64s'%s",
                                k->str,
                                td__yhint(hint, sizeof hint, k->str, names,
                                          nnames));
            }
            *unknown = k;
            return TD_ESCHEMA;
        }
        if (vals[j] != NULL)
            return td__yerr(doc, TD_ESCHEMA, k, "duplicate key '%s'",
                            names[j]);
        vals[j] = TD_YVAL(m, i);
    }
    return 0;
}

const td_ynode *td__ymap_get(const td_ynode *m, const char *name)
{
    if (m == NULL || m->kind != TD_YMAP)
        return NULL;
    for (size_t i = 0; i < TD_YPAIRS(m); i++) {
        const td_ynode *k = TD_YKEY(m, i);
        if (k->kind == TD_YSCALAR && strcmp(k->str, name) == 0)
            return TD_YVAL(m, i);
    }
    return NULL;
}

/* ---- scalar typing -------------------------------------------------------- */

const char *td__ytype_name(td_ytype t)
{
    switch (t) {
    case TD_YT_NULL: return "null";
    case TD_YT_BOOL: return "a boolean";
    case TD_YT_INT: return "an integer";
    case TD_YT_FLOAT: return "a number";
    case TD_YT_STR: return "a string";
    case TD_YT_SEQ: return "a list";
    case TD_YT_MAP: return "a mapping";
    }
    return "?";
}

td_ytype td__yclass(const td_ynode *n, int64_t *iv, bool *bv, bool *overflow)
{
    if (overflow)
        *overflow = false;
    if (n->kind == TD_YSEQ)
        return TD_YT_SEQ;
    if (n->kind == TD_YMAP)
        return TD_YT_MAP;
    if (!n->plain)
        return TD_YT_STR;
    const char *s = n->str;
    if (s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
        strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0)
        return TD_YT_NULL;
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 ||
        strcmp(s, "TRUE") == 0) {
        if (bv)
            *bv = true;
        return TD_YT_BOOL;
    }
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 ||
        strcmp(s, "FALSE") == 0) {
        if (bv)
            *bv = false;
        return TD_YT_BOOL;
    }
    const char *p = s;
    bool neg = false;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (isdigit((unsigned char)*p)) {
        const char *q = p;
        uint64_t v = 0;
        bool ovf = false;
        while (isdigit((unsigned char)*q)) {
            unsigned d = (unsigned)(*q - '0');
            if (v > (UINT64_MAX - d) / 10)
                ovf = true;
            else
                v = v * 10 + d;
            q++;
        }
        if (*q == '\0' && (size_t)(q - s) == n->len) {
            if (!ovf && v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
                ovf = true;
            if (overflow)
                *overflow = ovf;
            if (iv)
                *iv = ovf ? 0 : (neg ? (int64_t)(0 - v) : (int64_t)v);
            return TD_YT_INT;
        }
    }
    char *end = NULL;
    errno = 0;
    (void)strtod(s, &end);
    if (end != s && end != NULL && *end == '\0')
        return TD_YT_FLOAT;
    return TD_YT_STR;
}

bool td__yis_null(const td_ynode *n)
{
    return n->kind == TD_YSCALAR && td__yclass(n, NULL, NULL, NULL) == TD_YT_NULL;
}

int td__yint(const td_ydoc *doc, const td_ynode *n, const char *what,
             int64_t min, int64_t max, int64_t *out)
{
    int64_t v = 0;
    bool ovf = false;
    td_ytype t = td__yclass(n, &v, NULL, &ovf);
    if (t != TD_YT_INT)
        return td__yerr(doc, TD_ESCHEMA, n, "%s must be an integer, not %s",
                        what, td__ytype_name(t));
    if (ovf || v < min || v > max)
        return td__yerr(doc, TD_ELIMIT, n,
                        "%s is out of range (%" PRId64 " to %" PRId64 ")",
                        what, min, max);
    *out = v;
    return 0;
}

int td__ybool(const td_ydoc *doc, const td_ynode *n, const char *what,
              bool *out)
{
    td_ytype t = td__yclass(n, NULL, out, NULL);
    if (t != TD_YT_BOOL)
        return td__yerr(doc, TD_ESCHEMA, n, "%s must be true or false, not %s",
                        what, td__ytype_name(t));
    return 0;
}

int td__ystr(const td_ydoc *doc, const td_ynode *n, const char *what,
             char *out, size_t cap)
{
    td_ytype t = td__yclass(n, NULL, NULL, NULL);
    if (t != TD_YT_STR)
        return td__yerr(doc, TD_ESCHEMA, n, "'%s' must be a string, not %s",
                        what, td__ytype_name(t));
    if (strlen(n->str) != n->len)
        return td__yerr(doc, TD_ESCHEMA, n, "'%s' contains a NUL byte", what);
    if (cap == 0 || n->len >= cap)
        return td__yerr(doc, TD_ELIMIT, n, "'%s' is longer than %zu bytes",
                        what, cap ? cap - 1 : 0);
    memcpy(out, n->str, n->len + 1);
    return 0;
}

int td__yname(const td_ydoc *doc, const td_ynode *n, const char *what,
              size_t maxlen)
{
    if (n->kind != TD_YSCALAR || td__yis_null(n) || n->len == 0)
        return td__yerr(doc, TD_ESCHEMA, n, "%s must be a non-empty string",
                        what);
    /* Names end up in hash keys, tables and JSON: keep control characters
     * (and NULs from escapes) out of them. */
    for (size_t i = 0; i < n->len; i++)
        if ((unsigned char)n->str[i] < 0x20 || n->str[i] == 0x7f)
            return td__yerr(doc, TD_ESCHEMA, n,
                            "%s must not contain control characters", what);
    if (n->len > maxlen)
        return td__yerr(doc, TD_ELIMIT, n, "%s is longer than %zu bytes",
                        what, maxlen);
    return 0;
}

int td__ynames(const td_ydoc *doc, const td_ynode *n, const char *what,
               size_t maxitems, size_t maxlen)
{
    bool ok = n->kind == TD_YSEQ;
    for (size_t j = 0; ok && j < n->n; j++)
        ok = n->kids[j]->kind == TD_YSCALAR && !td__yis_null(n->kids[j]);
    if (!ok)
        return td__yerr(doc, TD_ESCHEMA, n, "%s must be a list of strings",
                        what);
    if (n->n > maxitems)
        return td__yerr(doc, TD_ELIMIT, n, "%s has more than %zu items", what,
                        maxitems);
    for (size_t j = 0; j < n->n; j++) {
        int rc = td__yname(doc, n->kids[j], "a list item", maxlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}
