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

/* How an operand kind reads in a reason ("a region", "a literal", ...). */
const char *td__operand_kind_name(td_operand_kind k);

/* Whether the call has exactly one region source and no extras (bias,
 * scale); if not, a reason in upstream's front-end wording, and *where set
 * to the offending operand's position when the call file gave one. */
bool td__one_region_source(const td_call *call, td_pos *where,
                           td_reason *why);

/* Whether the call has no extras (bias, scale); as above otherwise. */
bool td__no_extras(const td_call *call, td_pos *where, td_reason *why);

/*
 * Whether every config key of the call is one of the op's `known` keys
 * (nknown of them; none: the op takes no config keys).  If not, *where is
 * the first unknown key's position and the reason reads "unknown config
 * key 'K' (known: A, B)" or "unknown config key 'K' (OP takes no config
 * keys)": for the ops that refuse what upstream silently ignores.
 */
bool td__known_config(const td_call *call, const td_op_desc *op,
                      const char *const *known, size_t nknown, td_pos *where,
                      td_reason *why);

#endif
