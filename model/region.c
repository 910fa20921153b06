/*
 * Small internal accessors over a call's regions and name fields that every
 * layer above the model shares (predicates, variant modules, the kernel
 * generator): the buffer a region names, why a call's regions name none, a
 * region's element count with saturating products, and the comparison of a
 * fixed-size name field.  They never trust a hand-built call.  The public
 * accessors are in call_access.c.
 */
#include <stdint.h>
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

/* Whether a fixed-size name field equals s; the bound keeps a hand-built
 * call without a terminator from being read past its field. */
bool td__name_is(const char *field, const char *s)
{
    size_t n = strlen(s);
    return strnlen(field, TD_NAME_MAX) == n && memcmp(field, s, n) == 0;
}
