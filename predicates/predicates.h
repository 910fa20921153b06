/*
 * The predicates layer's internal header (not installed): the generic
 * predicate library that rules files refer to by name (storage_scope,
 * exec_scope, dtype, ...).  The bound-argument plumbing is in args.h; the
 * call accessors predicates use come from the model (model.h).
 */
#ifndef TILEDISPATCH_PREDICATES_H
#define TILEDISPATCH_PREDICATES_H

#include <stddef.h>

#include "args.h"

/* The built-in generic predicates, in a fixed order; the registry's builtin
 * table registers every one of them. */
extern const td_pred_desc td__generic_predicates[];
extern const size_t td__generic_predicates_count;

#endif
