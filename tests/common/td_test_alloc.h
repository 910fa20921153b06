/*
 * The one counting td_allocator of the test suites (robust, registry, call,
 * codegen, variants, cuda): it counts allocations (malloc and realloc
 * calls), fails the Nth one when asked, and tracks live blocks so a test can
 * assert that everything was given back.  The functions are static inline:
 * a test includes the header and uses what it needs.
 */
#ifndef TD_TEST_ALLOC_H
#define TD_TEST_ALLOC_H

#include <stdbool.h>
#include <stdlib.h>

#include "tiledispatch.h"

typedef struct counting_alloc {
    long calls;    /* malloc + realloc calls since the last arm */
    long fail_at;  /* 1-based call to fail; 0 = never */
    bool failed;   /* the failure was injected */
    long live;     /* blocks handed out and not freed */
} counting_alloc;

static counting_alloc g_ca;

static inline bool ca_should_fail(void)
{
    g_ca.calls++;
    if (g_ca.fail_at > 0 && g_ca.calls == g_ca.fail_at) {
        g_ca.failed = true;
        return true;
    }
    return false;
}

static inline void *ca_malloc(size_t n, void *user)
{
    (void)user;
    if (ca_should_fail())
        return NULL;
    void *p = malloc(n);
    if (p != NULL)
        g_ca.live++;
    return p;
}

static inline void *ca_realloc(void *p, size_t n, void *user)
{
    (void)user;
    if (ca_should_fail())
        return NULL;
    void *q = realloc(p, n);
    if (q != NULL && p == NULL)
        g_ca.live++;
    return q;
}

static inline void ca_free(void *p, void *user)
{
    (void)user;
    if (p != NULL)
        g_ca.live--;
    free(p);
}

/* Installs the counting allocator (no failure armed). */
static inline void alloc_install(void)
{
    static const td_allocator a = {ca_malloc, ca_realloc, ca_free, NULL};
    g_ca.calls = 0;
    g_ca.fail_at = 0;
    g_ca.failed = false;
    g_ca.live = 0;
    td_set_allocator(&a);
}

/* Arms a failure of the nth allocation from now (0 = none). */
static inline void alloc_arm(long nth)
{
    g_ca.calls = 0;
    g_ca.fail_at = nth;
    g_ca.failed = false;
}

#endif
