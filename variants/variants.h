/*
 * The built-in variant modules (internal).  Each is one td_impl_desc: its
 * emitter and the predicates it brings; the registry's builtin table
 * registers them in td_registry_new.
 */
#ifndef TILEDISPATCH_VARIANTS_H
#define TILEDISPATCH_VARIANTS_H

#include "td_internal.h"

/* Register reductions ("local"); brings the predicate local_valid. */
extern const td_impl_desc td__variant_local;
/* Shared-memory reductions ("shared"); brings the predicate shared_valid. */
extern const td_impl_desc td__variant_shared;
/* Blackwell packed reductions: "packed_add_sum" (sum) and "3input_maxmin"
 * (max, min).  They bring no predicates: rules use the generic ones. */
extern const td_impl_desc td__variant_packed_add_sum;
extern const td_impl_desc td__variant_3input_maxmin;

#endif
