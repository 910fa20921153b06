/*
 * The confined dtypes (td_dtype_is_confined: float8_e8m0fnu and
 * float4_e2m1fn, block-scaled MMA's) and the one table of the operands
 * that may have them; the loader's last step refuses every other use
 * (td__cl_confined_dtypes), dispatch and explain refuse it in calls built
 * by hand (td__confined_dtypes_ok).
 */
#include <stdio.h>
#include <string.h>

#include "call_reader.h"

#define NELEMS(a) (sizeof(a) / sizeof *(a))

/*
 * Which operands may have a confined dtype (td_dtype_is_confined), one row
 * per (dtype, op, operands): the whole of the permission, so that adding
 * a use (another op, another operand) is adding a row.  The op descriptors
 * (td_op_desc) sit in variants/, above the loader that must refuse every
 * other use before any consumer of a loaded call (variants, printers, the
 * program generator, the Python package, the TVM bridge) sees one; so the
 * table lives here, with the call form of the only family that has such
 * operands (docs/contract.md, "Confined dtypes").
 */
typedef struct confined_use {
    td_dtype dtype;
    const char *op;
    int first, last;      /* the sources srcs[first..last] */
    const char *scope;    /* their storage scope ("shared": shared.dyn too) */
    const char *what;     /* the operands in words, for messages */
} confined_use;

static const confined_use g_confined[] = {
    {TD_F4E2M1, "gemm_async", 0, 1, "shared",
     "gemm_async's A and B (block-scaled MMA, in shared memory)"},
    {TD_F8E8M0, "gemm_async", 2, 3, "tmem",
     "gemm_async's SFA and SFB (block-scaled MMA's scale factors, in "
     "tensor memory)"},
};

/* The call-file keys of the sources of the ops in g_confined. */
static const char *const async_src_keys[TD_MAX_SRCS] = {"a", "b", "sfa",
                                                        "sfb"};

const char *td__confined_dtype_use(td_dtype t)
{
    for (size_t i = 0; i < NELEMS(g_confined); i++)
        if (g_confined[i].dtype == t)
            return g_confined[i].what;
    return "";
}

static bool scope_is(const char *scope, const char *want)
{
    size_t n = strlen(want);
    return strncmp(scope, want, n) == 0 &&
           (scope[n] == '\0' || scope[n] == '.');
}

/* The message's head: "dtype 'T' (buffer 'X') is only accepted by ...". */
static size_t head(char *why, size_t cap, const td_buffer *b)
{
    int n = snprintf(why, cap, "dtype '%s' (buffer '%.*s') is only accepted "
                               "by %s",
                     td_dtype_name(b->dtype), TD__FIELD(b->name),
                     td__confined_dtype_use(b->dtype));
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* Whether region r's innermost start and extent are even (a 4-bit
 * region starts and ends on a byte). */
static bool byte_aligned(const td_region *r)
{
    int d = r->ndim - 1;
    return d < 0 || d >= TD_MAX_RANK ||
           (r->start[d] % 2 == 0 && r->extent[d] % 2 == 0);
}

static bool confined_buffer(const td_call *call, int bi, td_pos *where,
                            char *why, size_t cap)
{
    const td_buffer *b = &call->buffers[bi];
    const confined_use *u = NULL;
    for (size_t i = 0; i < NELEMS(g_confined); i++)
        if (g_confined[i].dtype == b->dtype &&
            strncmp(g_confined[i].op, call->op, TD_NAME_MAX) == 0)
            u = &g_confined[i];
    size_t n = head(why, cap, b);
    if (u == NULL) {
        snprintf(why + n, cap - n, "; %.*s does not support it",
                 TD__FIELD(call->op));
        return false;
    }
    if (!scope_is(b->scope, u->scope)) {
        snprintf(why + n, cap - n, "; buffer '%.*s' is in scope '%.*s'",
                 TD__FIELD(b->name), TD__FIELD(b->scope));
        return false;
    }
    if (call->dst.buffer == bi) {
        if (call->pos_dst.line > 0)
            *where = call->pos_dst;
        snprintf(why + n, cap - n, "; buffer '%.*s' is its destination "
                                   "(dst)",
                 TD__FIELD(b->name));
        return false;
    }
    const td_operand *extras[2] = {&call->bias, &call->scale};
    for (int i = 0; i < 2; i++)
        if (extras[i]->kind == TD_OPERAND_REGION &&
            extras[i]->region.buffer == bi) {
            if (extras[i]->pos.line > 0)
                *where = extras[i]->pos;
            snprintf(why + n, cap - n, "; buffer '%.*s' is its %s "
                                       "(extras)",
                     TD__FIELD(b->name), i ? "scale" : "bias");
            return false;
        }
    for (int i = 0; i < call->nconfig && i < TD_MAX_CONFIG; i++) {
        const td_config_entry *e = &call->config[i];
        if (e->kind == TD_VALUE_ELEM && e->elem_buffer == bi) {
            if (e->pos.line > 0)
                *where = e->pos;
            snprintf(why + n, cap - n, "; config key '%.*s' reads an "
                                       "element of buffer '%.*s'",
                     TD__FIELD(e->key), TD__FIELD(b->name));
            return false;
        }
    }
    bool used = false;
    for (int i = 0; i < call->nsrcs && i < TD_MAX_SRCS; i++) {
        const td_operand *o = &call->srcs[i];
        if (o->kind != TD_OPERAND_REGION || o->region.buffer != bi)
            continue;
        if (o->pos.line > 0)
            *where = o->pos;
        if (i < u->first || i > u->last) {
            static const char *const names[TD_MAX_SRCS] = {"A", "B", "SFA",
                                                           "SFB"};
            snprintf(why + n, cap - n, "; buffer '%.*s' is its %s",
                     TD__FIELD(b->name), names[i]);
            return false;
        }
        if (td_dtype_bits(b->dtype) < 8 && !byte_aligned(&o->region)) {
            int d = o->region.ndim - 1;
            snprintf(why, cap,
                     "%s: float4_e2m1fn packs two elements to a byte: the "
                     "region's innermost start (%lld) and extent (%lld) "
                     "must be even",
                     async_src_keys[i], (long long)o->region.start[d],
                     (long long)o->region.extent[d]);
            return false;
        }
        used = true;
        *where = (td_pos){0, 0};
    }
    if (!used) {
        snprintf(why + n, cap - n, "; buffer '%.*s' is none of them",
                 TD__FIELD(b->name));
        return false;
    }
    if (td_dtype_bits(b->dtype) < 8 && b->ndim > 0 &&
        b->ndim <= TD_MAX_RANK && b->shape[b->ndim - 1] % 2 != 0) {
        snprintf(why, cap,
                 "float4_e2m1fn packs two elements to a byte: buffer "
                 "'%.*s''s innermost extent (%lld) must be even",
                 TD__FIELD(b->name), (long long)b->shape[b->ndim - 1]);
        return false;
    }
    return true;
}

bool td__confined_dtypes_ok(const td_call *call, int *buffer, td_pos *where,
                            char *why, size_t cap)
{
    *buffer = -1;
    *where = (td_pos){0, 0};
    for (int i = 0; i < call->nbuffers && i < TD_MAX_BUFFERS; i++) {
        if (!td_dtype_is_confined(call->buffers[i].dtype))
            continue;
        if (!confined_buffer(call, i, where, why, cap)) {
            *buffer = i;
            return false;
        }
    }
    return true;
}

int td__cl_confined_dtypes(td__cl *c)
{
    int bi;
    td_pos at;
    char why[512];
    if (td__confined_dtypes_ok(c->call, &bi, &at, why, sizeof why))
        return 0;
    if (at.line <= 0)
        at = c->dtype_pos[bi];
    return cl_err_at(c, TD_ESCHEMA, at.line, at.col, "%s", why);
}
