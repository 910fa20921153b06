/*
 * Hand-built calls for the variant and predicate tests: a td_call is plain
 * data, so tests fill one field by field instead of parsing a call file.
 */
#ifndef TD_TEST_VARIANTS_FIXTURE_H
#define TD_TEST_VARIANTS_FIXTURE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tiledispatch.h"

static inline td_call *fx_call(const char *op, const char *target,
                               td_exec_scope scope)
{
    td_call *c = calloc(1, sizeof *c);
    if (c == NULL)
        abort();
    strcpy(c->op, op);
    strcpy(c->target, target);
    c->scope = scope;
    c->naxes = 1;
    c->axes[0] = -1;
    c->launch[TD_LAUNCH_TX].present = true;
    c->launch[TD_LAUNCH_TX].extent = 1;
    return c;
}

/* Adds a buffer of the given shape (ndim extents follow); returns its
 * index. */
static inline int fx_buf(td_call *c, const char *name, const char *scope,
                         td_dtype dt, int ndim, ...)
{
    td_buffer *b = &c->buffers[c->nbuffers];
    strcpy(b->name, name);
    strcpy(b->scope, scope);
    b->dtype = dt;
    b->ndim = ndim;
    va_list ap;
    va_start(ap, ndim);
    for (int d = 0; d < ndim; d++)
        b->shape[d] = va_arg(ap, int64_t);
    va_end(ap);
    return c->nbuffers++;
}

/* The whole buffer as a region. */
static inline void fx_full(td_call *c, td_region *r, int buf)
{
    const td_buffer *b = &c->buffers[buf];
    r->buffer = buf;
    r->ndim = b->ndim;
    for (int d = 0; d < b->ndim; d++) {
        r->start[d] = 0;
        r->extent[d] = b->shape[d];
    }
}

/* A region given as start, stop pairs per dim (half-open, like A[1:3]). */
static inline void fx_slice(td_call *c, td_region *r, int buf, ...)
{
    const td_buffer *b = &c->buffers[buf];
    r->buffer = buf;
    r->ndim = b->ndim;
    va_list ap;
    va_start(ap, buf);
    for (int d = 0; d < b->ndim; d++) {
        int64_t lo = va_arg(ap, int64_t);
        int64_t hi = va_arg(ap, int64_t);
        r->start[d] = lo;
        r->extent[d] = hi - lo;
    }
    va_end(ap);
}

static inline void fx_axes(td_call *c, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    c->naxes = n;
    for (int i = 0; i < n; i++)
        c->axes[i] = va_arg(ap, int);
    va_end(ap);
}

/* The seed: one thread, float32[4] -> float32[1], sum over the last axis. */
static inline td_call *fx_seed(const char *op)
{
    td_call *c = fx_call(op, "cuda", TD_SCOPE_THREAD);
    strcpy(c->arch, "sm_90a");
    c->sm_version = 90;
    int a = fx_buf(c, "A_local", "local", TD_F32, 1, (int64_t)4);
    int b = fx_buf(c, "B_local", "local", TD_F32, 1, (int64_t)1);
    fx_full(c, &c->src, a);
    fx_full(c, &c->dst, b);
    return c;
}

#endif
