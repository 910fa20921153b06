/*
 * A call written back as one line of TVMScript (td_call_format_script,
 * td_call_format_script_as) and one operand as text (td_operand_format),
 * the form explain and the program generator show.  The text is one line
 * of ASCII; like snprintf, each returns the length of the whole text and
 * writes what fits.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static void sc_region(td_sbuf *o, const td_call *call, const td_region *r)
{
    const char *name = "?";
    if (r->buffer >= 0 && r->buffer < call->nbuffers)
        name = call->buffers[r->buffer].name;
    td__sbuf_printf(o, "%s[", name);
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++) {
        char lo[256], hi[256];
        td__region_bound_text(call, r, d, 0, lo, sizeof lo);
        td__region_bound_text(call, r, d, r->extent[d], hi, sizeof hi);
        td__sbuf_printf(o, "%s%s:%s", d ? ", " : "", lo, hi);
    }
    td__sbuf_printf(o, "]");
}

/* A Python string literal: quotes and backslashes escaped, control and
 * non-ASCII bytes as \xNN so the line stays one line of ASCII. */
static void sc_pystr(td_sbuf *o, const char *s)
{
    td__sbuf_printf(o, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            td__sbuf_printf(o, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            td__sbuf_printf(o, "\\x%02x", *p);
        else
            td__sbuf_printf(o, "%c", *p);
    }
    td__sbuf_printf(o, "\"");
}

/* The shortest %g text that reads back as v (at most 17 digits). */
static void sc_double(td_sbuf *o, double v)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    td__sbuf_printf(o, "%s", tmp);
}

/* A float literal as TVMScript prints a FloatImm: an integral value in
 * full with ".0" (T.float32(1.0), T.float32(100000000000000000000.0)),
 * any other with 17 significant digits (T.float32(0.10000000000000001)),
 * infinities and NaN quoted. */
static void sc_tvm_float(td_sbuf *o, double v)
{
    if (isnan(v))
        td__sbuf_printf(o, "\"nan\"");
    else if (isinf(v))
        td__sbuf_printf(o, v < 0 ? "\"-inf\"" : "\"inf\"");
    else if (v == floor(v))
        td__sbuf_printf(o, "%.1f", v);
    else
        td__sbuf_printf(o, "%.17g", v);
}

static void sc_operand(td_sbuf *o, const td_call *call, const td_operand *op)
{
    switch (op->kind) {
    case TD_OPERAND_REGION:
        sc_region(o, call, &op->region);
        return;
    case TD_OPERAND_SCALAR:
        td__sbuf_printf(o, "%.*s", (int)strnlen(op->name, TD_NAME_MAX),
                        op->name);
        return;
    case TD_OPERAND_LITERAL: {
        const char *dt = (unsigned)op->dtype < TD_DTYPE_COUNT
                             ? td_dtype_name(op->dtype)
                             : "?";
        td__sbuf_printf(o, "T.%s(", dt);
        if ((unsigned)op->dtype < TD_DTYPE_COUNT &&
            !td_dtype_is_float(op->dtype)) {
            if (op->dtype == TD_U64)
                td__sbuf_printf(o, "%llu", (unsigned long long)(uint64_t)op->ivalue);
            else
                td__sbuf_printf(o, "%lld", (long long)op->ivalue);
        } else if (isnan(op->value)) {
            td__sbuf_printf(o, "\"nan\"");
        } else if (isinf(op->value)) {
            td__sbuf_printf(o, op->value < 0 ? "\"-inf\"" : "\"inf\"");
        } else {
            sc_double(o, op->value);
        }
        td__sbuf_printf(o, ")");
        return;
    }
    default:
        td__sbuf_printf(o, "None");
        return;
    }
}

size_t td_operand_format(const td_call *call, const td_operand *op, char *buf,
                         size_t cap)
{
    td_sbuf o = {buf, cap, 0};
    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    sc_operand(&o, call, op);
    return o.len;
}

/* Whether the call was written (or built) as one region source and
 * nothing else: the reduction form then prints it as it always did.  A
 * copy has that shape but no axes or accum (upstream's Tx.copy(dst, src),
 * Tx.copy_async(dst, src), Tx.permute_layout(dst, src)): the operand
 * form. */
static bool reduction_shaped(const td_call *call)
{
    if (strncmp(call->op, "copy", TD_NAME_MAX) == 0 ||
        strncmp(call->op, "copy_async", TD_NAME_MAX) == 0 ||
        strncmp(call->op, "permute_layout", TD_NAME_MAX) == 0)
        return false;
    if (call->srcs_list || call->bias.kind != TD_OPERAND_NONE ||
        call->scale.kind != TD_OPERAND_NONE)
        return false;
    if (call->nsrcs == 1)
        return call->srcs[0].kind == TD_OPERAND_REGION;
    /* A call built by hand before srcs existed: its src region. */
    return call->nsrcs == 0 && call->src.buffer >= 0 &&
           call->src.buffer < call->nbuffers;
}

/* alpha or beta of a gemm call as TVMScript prints it. */
static void sc_gemm_literal(td_sbuf *o, const td_call *call,
                            const td_operand *l)
{
    if (l->kind == TD_OPERAND_LITERAL && l->dtype == TD_F32) {
        td__sbuf_printf(o, "T.float32(");
        sc_tvm_float(o, l->value);
        td__sbuf_printf(o, ")");
    } else if (l->kind == TD_OPERAND_LITERAL && l->dtype == TD_I32) {
        /* TVMScript prints an int32 constant bare. */
        td__sbuf_printf(o, "%lld", (long long)l->ivalue);
    } else {
        sc_operand(o, call, l);
    }
}

/* gemm's arguments after D, as upstream's Tx.gemm takes them
 * positionally: A, B, C, transpose_A, transpose_B, alpha, beta. */
static void sc_gemm_args(td_sbuf *o, const td_call *call)
{
    int nsrcs = call->nsrcs < 0 ? 0
                : call->nsrcs > TD_MAX_SRCS ? TD_MAX_SRCS
                                            : call->nsrcs;
    for (int i = 0; i < nsrcs; i++) {
        td__sbuf_printf(o, ", ");
        sc_operand(o, call, &call->srcs[i]);
    }
    td__sbuf_printf(o, ", %s, %s", call->transpose_a ? "True" : "False",
                    call->transpose_b ? "True" : "False");
    const td_operand *lits[2] = {&call->alpha, &call->beta};
    for (int i = 0; i < 2; i++) {
        td__sbuf_printf(o, ", ");
        sc_gemm_literal(o, call, lits[i]);
    }
}

size_t td__gemm_literal_text(const td_call *call, const td_operand *l,
                             char *buf, size_t cap)
{
    td_sbuf o = {buf, cap, 0};
    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    sc_gemm_literal(&o, call, l);
    return o.len;
}

size_t td_call_format_script_as(const td_call *call, td_script_form form,
                                char *buf, size_t cap)
{
    static const char *const prefix[TD_SCOPE_COUNT] = {
        "Tx.", "Tx.warp.", "Tx.wg.", "Tx.cta.", "Tx.cluster."};
    td_sbuf o = {buf, cap, 0};
    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    bool gemm = td__gemm_form(call->op);
    bool gasync = td__gemm_async_form(call->op);
    if (gemm || gasync)
        form = TD_SCRIPT_OPERANDS; /* gemm has a form of its own */
    else if (form == TD_SCRIPT_AUTO)
        form = reduction_shaped(call) ? TD_SCRIPT_REDUCTION
                                      : TD_SCRIPT_OPERANDS;
    td__sbuf_printf(&o, "%s%.*s(",
              (unsigned)call->scope < TD_SCOPE_COUNT ? prefix[call->scope]
                                                     : "Tx.",
              (int)strnlen(call->op, TD_NAME_MAX), call->op);
    sc_region(&o, call, &call->dst);
    if (gemm)
        sc_gemm_args(&o, call);
    int nsrcs = gemm ? 0
                : call->nsrcs < 0 ? 0
                : call->nsrcs > TD_MAX_SRCS ? TD_MAX_SRCS
                                            : call->nsrcs;
    if (!gemm && nsrcs == 0 && call->src.buffer >= 0 &&
        call->src.buffer < call->nbuffers) {
        /* Built by hand with only the src region. */
        td__sbuf_printf(&o, ", ");
        sc_region(&o, call, &call->src);
        nsrcs = -1;
    }
    for (int i = 0; i < nsrcs; i++) {
        td__sbuf_printf(&o, ", ");
        sc_operand(&o, call, &call->srcs[i]);
    }
    /* Upstream's unary ops take (dst, src, bias, scale) positionally. */
    bool bias = call->bias.kind != TD_OPERAND_NONE;
    bool scale = call->scale.kind != TD_OPERAND_NONE;
    if ((bias || scale) && nsrcs == 0)
        td__sbuf_printf(&o, ", None");
    if (bias || scale) {
        td__sbuf_printf(&o, ", ");
        sc_operand(&o, call, &call->bias);
    }
    if (scale) {
        td__sbuf_printf(&o, ", ");
        sc_operand(&o, call, &call->scale);
    }
    int naxes = call->naxes < 0 ? 0
                : call->naxes > TD_MAX_AXES ? TD_MAX_AXES
                                            : call->naxes;
    bool default_axes = naxes == 1 && call->axes[0] == -1;
    if (form == TD_SCRIPT_REDUCTION || !default_axes) {
        td__sbuf_printf(&o, ", axes=[");
        for (int i = 0; i < naxes; i++)
            td__sbuf_printf(&o, "%s%d", i ? ", " : "", call->axes[i]);
        td__sbuf_printf(&o, "]");
    }
    if (gasync)
        /* upstream's Tx.gemm_async(C, A, B, transA=, transB=, accum=) */
        td__sbuf_printf(&o, ", transA=%s, transB=%s",
                        call->transpose_a ? "True" : "False",
                        call->transpose_b ? "True" : "False");
    if (gasync && call->accum_expr.kind == TD_VALUE_EXPR)
        td__sbuf_printf(&o, ", accum=%.*s", TD_NAME_MAX - 1,
                        call->accum_expr.s);
    else if (form == TD_SCRIPT_REDUCTION || call->accum || gasync)
        td__sbuf_printf(&o, ", accum=%s", call->accum ? "True" : "False");
    if (call->dispatch[0]) {
        char forced[TD_NAME_MAX];
        size_t n = strnlen(call->dispatch, TD_NAME_MAX - 1);
        memcpy(forced, call->dispatch, n);
        forced[n] = '\0';
        td__sbuf_printf(&o, ", dispatch=");
        sc_pystr(&o, forced);
    }
    for (int i = 0; i < call->nconfig && i < TD_MAX_CONFIG; i++) {
        const td_config_entry *e = &call->config[i];
        td__sbuf_printf(&o, ", %s=", e->key);
        switch (e->kind) {
        case TD_VALUE_INT:
            td__sbuf_printf(&o, "%lld", (long long)e->i);
            break;
        case TD_VALUE_BOOL:
            td__sbuf_printf(&o, "%s", e->b ? "True" : "False");
            break;
        case TD_VALUE_STRING:
            sc_pystr(&o, e->s);
            break;
        case TD_VALUE_EXPR:
            /* As written: the loader let only the expression's own
             * characters through. */
            td__sbuf_printf(&o, "%.*s", TD_NAME_MAX - 1, e->s);
            break;
        case TD_VALUE_ELEM:
            /* The element's address, as TVM prints an mbarrier operand. */
            td__sbuf_printf(&o, "T.address_of(%.*s)", TD_NAME_MAX - 1, e->s);
            break;
        }
    }
    td__sbuf_printf(&o, ")");
    return o.len;
}

size_t td_call_format_script(const td_call *call, char *buf, size_t cap)
{
    return td_call_format_script_as(call, TD_SCRIPT_AUTO, buf, cap);
}
