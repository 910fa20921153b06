/*
 * tiledispatch: the replaceable allocator.
 *
 * Every allocation the library makes goes through these hooks.  Set them
 * before creating any object, from one thread; NULL restores the C
 * library's functions.  Tests use this to fail the Nth allocation.
 */
#ifndef TILEDISPATCH_TD_ALLOC_H
#define TILEDISPATCH_TD_ALLOC_H

#include <stddef.h>

#include "tiledispatch/td_export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct td_allocator {
    void *(*malloc_fn)(size_t n, void *user);
    void *(*realloc_fn)(void *p, size_t n, void *user);
    void (*free_fn)(void *p, void *user);
    void *user;
} td_allocator;

/* Installs `a` (copied); NULL restores the default.  Memory is released
 * through whichever allocator is installed at the time of the release, so
 * objects and strings made under one allocator must be freed before
 * another one is installed. */
TD_API void td_set_allocator(const td_allocator *a);

/* Releases a string (or other block) the library handed out through a
 * char ** parameter (td_ir_print, td_explain_format, ...), through the
 * installed allocator's free function.  Accepts NULL.  Objects with their
 * own *_free function are released with that one instead. */
TD_API void td_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
