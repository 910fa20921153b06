/*
 * Small internal accessors over a call's regions and name fields that every
 * layer above the model shares (predicates, variant modules, the kernel
 * generator): the buffer a region names, why a call's regions name none, a
 * region's element count with saturating products, a start that depends on
 * the block ids or the call's scalars (its alignment and its text), a
 * declared scalar by name, and the comparison of a
 * fixed-size name field.  They never trust a hand-built call.  The public
 * accessors are in call_access.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

/* ---- shared accessors -------------------------------------------------- */

const td_buffer *td__region_buffer(const td_call *call, const td_region *r)
{
    if (call == NULL || r == NULL)
        return NULL;
    if (call->nbuffers < 0 || call->nbuffers > TD_MAX_BUFFERS)
        return NULL;
    if (r->buffer < 0 || r->buffer >= call->nbuffers)
        return NULL;
    const td_buffer *b = &call->buffers[r->buffer];
    if (b->ndim < 0 || b->ndim > TD_MAX_RANK || r->ndim != b->ndim)
        return NULL;
    return b;
}

const char *td__regions_missing(const td_call *call)
{
    if (call == NULL || td__region_buffer(call, &call->dst) == NULL)
        return "malformed call: dst region does not name a buffer";
    if (call->src.buffer < 0 && call->nsrcs == 0)
        return "the call has no source region";
    if (call->src.buffer < 0 && call->nsrcs > 0 && call->nsrcs <= TD_MAX_SRCS) {
        if (call->srcs[0].kind == TD_OPERAND_LITERAL)
            return "the call's first source is a literal, not a region";
        if (call->srcs[0].kind == TD_OPERAND_SCALAR)
            return "the call's first source is a named scalar, not a region";
    }
    return "malformed call: src region does not name a buffer";
}

int64_t td__mul_sat(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0)
        return 0;
    if (a > INT64_MAX / b)
        return INT64_MAX;
    return a * b;
}

int64_t td__region_elems(const td_region *r)
{
    int64_t n = 1;
    int nd = r->ndim;
    if (nd < 0 || nd > TD_MAX_RANK)
        return 0;
    for (int d = 0; d < nd; d++)
        n = td__mul_sat(n, r->extent[d]);
    return n;
}

bool td__region_symbolic(const td_region *r)
{
    if (r == NULL || r->ndim < 0 || r->ndim > TD_MAX_RANK)
        return false;
    for (int d = 0; d < r->ndim; d++)
        for (int k = 0; k < 3; k++)
            if (r->block_coef[d][k] != 0)
                return true;
    return false;
}

bool td__region_dynamic(const td_region *r)
{
    if (r == NULL || r->ndim < 0 || r->ndim > TD_MAX_RANK)
        return false;
    for (int d = 0; d < r->ndim; d++)
        for (int j = 0; j < TD_MAX_SCALARS; j++)
            if (r->scalar_coef[d][j] != 0)
                return true;
    return false;
}

/* Coefficient k of dimension d's start: the block ids' (k < 3), then the
 * scalars'. */
static int64_t start_coef(const td_region *r, int d, int k)
{
    return k < 3 ? r->block_coef[d][k] : r->scalar_coef[d][k - 3];
}

int64_t td__region_block_align(const td_call *call, const td_region *r)
{
    const td_buffer *b = td__region_buffer(call, r);
    const int64_t cap = (int64_t)1 << 30;
    int64_t align = 0, stride = 1;
    if (b == NULL || !(td__region_symbolic(r) || td__region_dynamic(r)))
        return 0;
    for (int d = b->ndim - 1; d >= 0; d--) {
        for (int k = 0; k < 3 + TD_MAX_SCALARS; k++) {
            int64_t t = td__mul_sat(start_coef(r, d, k), stride);
            if (t <= 0)
                continue;
            /* The lowest set bit of t, capped: a power of two divides
             * the gcd when it divides every term. */
            int64_t low = t & -t;
            if (low > cap)
                low = cap;
            if (align == 0 || low < align)
                align = low;
        }
        stride = td__mul_sat(stride, b->shape[d]);
    }
    return align;
}

size_t td__region_bound_text(const td_call *call, const td_region *r,
                             int d, int64_t add, char *buf, size_t cap)
{
    static const char *const ids[3] = {"blockIdx.x", "blockIdx.y",
                                       "blockIdx.z"};
    size_t n = 0;
    char tmp[TD_NAME_MAX + 32];
    if (cap > 0)
        buf[0] = '\0';
    for (int k = 0; k < 3; k++) {
        int64_t c = r->block_coef[d][k];
        if (c == 0)
            continue;
        if (c == 1)
            snprintf(tmp, sizeof tmp, "%s", ids[k]);
        else
            snprintf(tmp, sizeof tmp, "%s * %lld", ids[k], (long long)c);
        n += (size_t)snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0,
                              "%s%s", n > 0 ? " + " : "", tmp);
    }
    for (int j = 0; j < TD_MAX_SCALARS && call != NULL &&
                    j < call->nscalars;
         j++) {
        int64_t c = r->scalar_coef[d][j];
        if (c == 0)
            continue;
        int nm = (int)strnlen(call->scalars[j].name, TD_NAME_MAX);
        if (c == 1)
            snprintf(tmp, sizeof tmp, "%.*s", nm, call->scalars[j].name);
        else
            snprintf(tmp, sizeof tmp, "%.*s * %lld", nm,
                     call->scalars[j].name, (long long)c);
        n += (size_t)snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0,
                              "%s%s", n > 0 ? " + " : "", tmp);
    }
    int64_t c = r->start[d] + add;
    if (n == 0 || c != 0)
        n += (size_t)snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0,
                              "%s%lld", n > 0 ? " + " : "", (long long)c);
    return n;
}

int td__call_scalar(const td_call *call, const char *s, size_t len)
{
    for (int i = 0; i < call->nscalars && i < TD_MAX_SCALARS; i++)
        if (strnlen(call->scalars[i].name, TD_NAME_MAX) == len &&
            memcmp(call->scalars[i].name, s, len) == 0)
            return i;
    return -1;
}

/* Whether a fixed-size name field equals s; the bound keeps a hand-built
 * call without a terminator from being read past its field. */
bool td__name_is(const char *field, const char *s)
{
    size_t n = strlen(s);
    return strnlen(field, TD_NAME_MAX) == n && memcmp(field, s, n) == 0;
}
