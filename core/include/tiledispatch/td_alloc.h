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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct td_allocator {
    void *(*malloc_fn)(size_t n, void *user);
    void *(*realloc_fn)(void *p, size_t n, void *user);
    void (*free_fn)(void *p, void *user);
    void *user;
} td_allocator;

/* Installs `a` (copied); NULL restores the default. */
void td_set_allocator(const td_allocator *a);

#ifdef __cplusplus
}
#endif
#endif
