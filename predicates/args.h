/*
 * Bound predicate arguments (internal, not installed): what a td_args
 * holds.  The rules loader (registry/) builds them from a rules file;
 * predicates and emitters read them only through the public td_args_*
 * getters (args.c).
 */
#ifndef TILEDISPATCH_ARGS_H
#define TILEDISPATCH_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "tiledispatch/td_module.h"

typedef struct td__arg {
    const char *name; /* the schema's name (owned by the registrant) */
    td_arg_type type;
    int64_t i;
    bool b;
    char *s;          /* TD_ARG_STRING */
    size_t nitems;    /* TD_ARG_STRING_LIST */
    char **items;
} td__arg;

struct td_args {
    size_t n;
    td__arg *v;
};

/* Frees what a td_args owns and empties it. */
void td__args_clear(td_args *a);

#endif
