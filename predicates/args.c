/*
 * The predicate interface's plumbing: one-line reasons and the getters of
 * bound arguments (the rules loader in registry/ fills td_args; predicates
 * and emitters read them here).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

/* ---- reasons and names ------------------------------------------------- */

void td_reason_set(td_reason *why, const char *fmt, ...)
{
    if (why == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    /* vsnprintf truncates and always terminates: reasons are one line and
     * a cut-off reason is better than none. */
    vsnprintf(why->text, sizeof why->text, fmt, ap);
    va_end(ap);
}

const char *td_arg_type_name(td_arg_type t)
{
    switch (t) {
    case TD_ARG_INT: return "int";
    case TD_ARG_BOOL: return "bool";
    case TD_ARG_STRING: return "string";
    case TD_ARG_STRING_LIST: return "list of strings";
    }
    return "?";
}

/* ---- bound arguments --------------------------------------------------- */

void td__args_clear(td_args *a)
{
    for (size_t i = 0; i < a->n; i++) {
        td__free(a->v[i].s);
        for (size_t j = 0; j < a->v[i].nitems; j++)
            td__free(a->v[i].items[j]);
        td__free(a->v[i].items);
    }
    td__free(a->v);
    a->v = NULL;
    a->n = 0;
}

static const td__arg *find_arg(const td_args *a, const char *name,
                               td_arg_type type)
{
    if (a == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].name, name) == 0)
            return a->v[i].type == type ? &a->v[i] : NULL;
    return NULL;
}

bool td_args_has(const td_args *a, const char *name)
{
    if (a == NULL || name == NULL)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].name, name) == 0)
            return true;
    return false;
}

int64_t td_args_int(const td_args *a, const char *name, int64_t dflt)
{
    const td__arg *v = find_arg(a, name, TD_ARG_INT);
    return v ? v->i : dflt;
}

bool td_args_bool(const td_args *a, const char *name, bool dflt)
{
    const td__arg *v = find_arg(a, name, TD_ARG_BOOL);
    return v ? v->b : dflt;
}

const char *td_args_string(const td_args *a, const char *name,
                           const char *dflt)
{
    const td__arg *v = find_arg(a, name, TD_ARG_STRING);
    return v ? v->s : dflt;
}

size_t td_args_list(const td_args *a, const char *name,
                    const char *const **items)
{
    const td__arg *v = find_arg(a, name, TD_ARG_STRING_LIST);
    if (items != NULL)
        *items = v ? (const char *const *)v->items : NULL;
    return v ? v->nitems : 0;
}

/* Appends s to buf (capacity cap, current length *len), truncating. */
static void cat_bounded(char *buf, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + 1 >= cap)
        return;
    size_t room = cap - 1 - *len;
    if (n > room)
        n = room;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
}

const char *td_args_list_text(const td_args *a, const char *name, char *buf,
                              size_t cap)
{
    if (buf == NULL || cap == 0)
        return buf;
    buf[0] = '\0';
    size_t len = 0;
    const char *const *items = NULL;
    size_t n = td_args_list(a, name, &items);
    cat_bounded(buf, cap, &len, "[");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            cat_bounded(buf, cap, &len, ", ");
        cat_bounded(buf, cap, &len, items[i]);
    }
    cat_bounded(buf, cap, &len, "]");
    return buf;
}
