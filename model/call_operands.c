/*
 * The call file's operands: `srcs` (a list) and `extras` (bias, scale).
 * An operand is a region (region_parse.c), a literal (a bare number of the
 * dst buffer's dtype, or {value: V, dtype: T}) or a named scalar
 * ({scalar: NAME, dtype: T}).  Literals follow the YAML 1.2 core schema and
 * must fit their dtype; a named scalar may not reuse a buffer's name, a
 * reserved name, or another dtype than its earlier uses.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_reader.h"

/* A message about operand `label` ("srcs[2]", "extras.bias"):
 * "LABEL: MESSAGE" at node n. */
static int cl_operr(td__cl *c, int code, const td_ynode *n, const char *label,
                    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int cl_operr(td__cl *c, int code, const td_ynode *n, const char *label,
                    const char *fmt, ...)
{
    char msg[TD_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cl_err(c, code, n, "%s: %s", label, msg);
}

/*
 * A YAML 1.2 core-schema float: [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?,
 * [-+]?.inf (three spellings) or .nan (three spellings).  strtod alone
 * would also take "inf", "nan", "0x1p3" and "infinity", which YAML reads
 * as strings.  *range is set when a finite text overflows a double.
 */
static bool yaml_float(const char *s, double *out, bool *range)
{
    const char *p = s;
    *range = false;
    bool neg = false;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 ||
        strcmp(p, ".INF") == 0) {
        *out = neg ? -INFINITY : INFINITY;
        return true;
    }
    if (p == s && (strcmp(p, ".nan") == 0 || strcmp(p, ".NaN") == 0 ||
                   strcmp(p, ".NAN") == 0)) {
        *out = NAN;
        return true;
    }
    const char *q = p;
    size_t ipart = 0, fpart = 0;
    while (isdigit((unsigned char)*q)) {
        q++;
        ipart++;
    }
    if (*q == '.') {
        q++;
        while (isdigit((unsigned char)*q)) {
            q++;
            fpart++;
        }
    }
    if (ipart == 0 && fpart == 0)
        return false;
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '-' || *q == '+')
            q++;
        if (!isdigit((unsigned char)*q))
            return false;
        while (isdigit((unsigned char)*q))
            q++;
    }
    if (*q != '\0')
        return false;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == NULL || *end != '\0')
        return false;
    if (errno == ERANGE && isinf(v))
        *range = true;
    *out = v;
    return true;
}

/* The largest finite value of a float dtype. */
static double float_max(td_dtype dt)
{
    switch (dt) {
    case TD_F16:
        return 65504.0;
    case TD_BF16:
        return 0x1.fep127;
    case TD_F32:
        return FLT_MAX;
    case TD_F8E4M3:
        return 448.0; /* e4m3fn: no infinities, S.1111.111 is NaN */
    case TD_F8E5M2:
        return 57344.0;
    default:
        return DBL_MAX;
    }
}

/* The range of an integer dtype: [*lo, *hi] as int64 (signed), or [0, *uhi]
 * (unsigned). */
static void int_range(td_dtype dt, int64_t *lo, int64_t *hi, uint64_t *uhi)
{
    int bits = td_dtype_bits(dt);
    if (td_dtype_is_signed(dt)) {
        *hi = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
        *lo = -*hi - 1;
        *uhi = (uint64_t)*hi;
    } else {
        *lo = 0;
        *uhi = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        *hi = *uhi > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)*uhi;
    }
}

/* "LABEL: literal V is out of range for DTYPE (LO to HI)", the range
 * given for integer dtypes. */
static int lit_range(td__cl *c, const td_ynode *n, const char *label,
                     td_dtype dt)
{
    if (td_dtype_is_float(dt))
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "literal %.64s is out of range for %s", n->str,
                        td_dtype_name(dt));
    int64_t lo, hi;
    uint64_t uhi;
    int_range(dt, &lo, &hi, &uhi);
    if (td_dtype_is_signed(dt))
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "literal %.64s is out of range for %s (%lld to %lld)",
                        n->str, td_dtype_name(dt), (long long)lo,
                        (long long)hi);
    return cl_operr(c, TD_ESCHEMA, n, label,
                    "literal %.64s is out of range for %s (0 to %llu)", n->str,
                    td_dtype_name(dt), (unsigned long long)uhi);
}

/*
 * A number written as a plain scalar, as a literal of dtype dt.  Returns 1
 * when n is not a number (the caller decides what else it may be), 0 when
 * *out holds the literal, or an error.  Integer dtypes take integral
 * values within their range (2, -3, 4.0, 1e3; uint64 up to 2^64 - 1);
 * float dtypes take any value within their finite range, and .inf, -.inf,
 * .nan.
 */
static int cl_number(td__cl *c, const td_ynode *n, const char *label,
                     td_dtype dt, td_operand *out)
{
    if (n->kind != TD_YSCALAR || !n->plain)
        return 1;
    int64_t iv = 0;
    bool ovf = false, range = false;
    uint64_t uv = 0;
    bool is_int = false, big = false;
    double d = 0.0;
    td_ytype t = td__yclass(n, &iv, NULL, &ovf);
    if (t == TD_YT_INT) {
        is_int = true;
        if (ovf) {
            /* Beyond int64: only an unsigned value up to 2^64 - 1 is. */
            const char *p = n->str[0] == '+' ? n->str + 1 : n->str;
            bool fits = isdigit((unsigned char)*p);
            for (; fits && *p; p++) {
                unsigned dg = (unsigned)(*p - '0');
                if (!isdigit((unsigned char)*p) || uv > (UINT64_MAX - dg) / 10)
                    fits = false;
                else
                    uv = uv * 10 + dg;
            }
            if (td_dtype_is_float(dt)) {
                is_int = false; /* a float's range is checked below */
                d = strtod(n->str, NULL);
                if (isinf(d))
                    return lit_range(c, n, label, dt);
            } else if (!fits) {
                return lit_range(c, n, label, dt);
            } else {
                big = true;
                d = (double)uv;
            }
        } else {
            d = (double)iv;
        }
    } else if (yaml_float(n->str, &d, &range)) {
        if (range)
            return lit_range(c, n, label, dt);
    } else if (t == TD_YT_FLOAT) {
        /* strtod's extras (inf, nan, hex floats): YAML reads them as
         * strings, and no buffer name starts that way. */
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "'%.64s' is not a YAML number (write a decimal "
                        "number, .inf, -.inf or .nan)",
                        n->str);
    } else {
        return 1;
    }
    memset(out, 0, sizeof *out);
    out->kind = TD_OPERAND_LITERAL;
    out->dtype = dt;
    out->pos.line = n->line;
    out->pos.col = n->col;
    if (td_dtype_is_float(dt)) {
        if (isfinite(d) && fabs(d) > float_max(dt))
            return lit_range(c, n, label, dt);
        out->value = d;
        return 0;
    }
    int64_t lo, hi;
    uint64_t uhi;
    int_range(dt, &lo, &hi, &uhi);
    if (!is_int) {
        /* A float text naming an integral value (4.0, 1e3) is that
         * integer; anything else is not an integer at all. */
        if (!isfinite(d) || d != floor(d))
            return cl_operr(c, TD_ESCHEMA, n, label,
                            "literal %.64s is not an integer (dtype %s)",
                            n->str, td_dtype_name(dt));
        if (d < -0x1p63 || d >= 0x1p64)
            return lit_range(c, n, label, dt);
        if (d >= 0x1p63) {
            big = true;
            uv = (uint64_t)d;
        } else {
            iv = (int64_t)d;
        }
    }
    bool ok = big ? !td_dtype_is_signed(dt) && uv <= uhi
                  : iv >= lo && iv <= hi;
    if (!ok)
        return lit_range(c, n, label, dt);
    /* uint64 values past INT64_MAX keep their bits: (uint64_t)ivalue. */
    out->ivalue = big ? (int64_t)uv : iv;
    out->value = big ? (double)uv : (double)iv;
    return 0;
}

int td__cl_literal(td__cl *c, const td_ynode *n, const char *label,
                   td_dtype dt, td_operand *out)
{
    int rc = cl_number(c, n, label, dt, out);
    if (rc == 1)
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "must be a number (a %s literal), not %s",
                        td_dtype_name(dt), td__ytype_name(yv_kind(n)));
    return rc;
}

/* A dtype given in an operand mapping. */
static int cl_op_dtype(td__cl *c, const td_ynode *n, const char *label,
                       td_dtype *out)
{
    td_ytype t = yv_kind(n);
    char dt[TD_NAME_MAX];
    if (t != TD_YT_STR)
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "'dtype' must be a string, not %s", td__ytype_name(t));
    if (strlen(n->str) != n->len || n->len >= sizeof dt ||
        td_dtype_parse(n->str, out) != 0) {
        char hint[160];
        return cl_operr(c, TD_ESCHEMA, n, label, "unknown dtype '%.64s'%s",
                        n->str, td__dtype_hint(hint, sizeof hint, n->str));
    }
    /* A confined dtype is only ever a region's (call_gemm.c). */
    if (td_dtype_is_confined(*out))
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "dtype '%s' is only accepted by %s; a literal or a "
                        "named scalar cannot have it",
                        td_dtype_name(*out), td__confined_dtype_use(*out));
    return 0;
}

/* The first named scalar of the call called `name` other than `self`. */
static const td_operand *find_scalar(const td_call *call, const char *name,
                                     const td_operand *self)
{
    const td_operand *all[TD_MAX_SRCS + 2];
    int n = 0;
    for (int i = 0; i < call->nsrcs && i < TD_MAX_SRCS; i++)
        all[n++] = &call->srcs[i];
    all[n++] = &call->bias;
    all[n++] = &call->scale;
    for (int i = 0; i < n; i++)
        if (all[i] != self && all[i]->kind == TD_OPERAND_SCALAR &&
            strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

/* {value: V, dtype: T} or {scalar: NAME, dtype: T}. */
static int cl_operand_map(td__cl *c, const td_ynode *n, const char *label,
                          td_operand *out)
{
    static const char *const keys[] = {"value", "scalar", "dtype"};
    const td_ynode *v[3], *unknown = NULL;
    int rc = td__ymap_read(&c->doc, n, keys, 3, v, &unknown);
    if (rc != 0 && unknown != NULL) {
        char hint[128];
        return cl_operr(c, TD_ESCHEMA, unknown, label, "unknown key '%.64s'%s",
                        unknown->str,
                        td__yhint(hint, sizeof hint, unknown->str, keys, 3));
    }
    if (rc != 0)
        return rc;
    if (v[0] != NULL && v[1] != NULL)
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "give 'value' or 'scalar', not both");
    if (v[0] == NULL && v[1] == NULL)
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "an operand mapping needs 'value' (a literal) or "
                        "'scalar' (a named scalar)");
    if (v[2] == NULL)
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "missing required key 'dtype'");
    td_dtype dt;
    if ((rc = cl_op_dtype(c, v[2], label, &dt)) != 0)
        return rc;
    if (v[0] != NULL) {
        rc = cl_number(c, v[0], label, dt, out);
        if (rc == 1)
            return cl_operr(c, TD_ESCHEMA, v[0], label,
                            "'value' must be a number, not %s",
                            td__ytype_name(yv_kind(v[0])));
        if (rc != 0)
            return rc;
        out->pos.line = n->line;
        out->pos.col = n->col;
        return 0;
    }
    const td_ynode *s = v[1];
    td_ytype t = yv_kind(s);
    if (t != TD_YT_STR)
        return cl_operr(c, TD_ESCHEMA, s, label,
                        "'scalar' must be a name, not %s", td__ytype_name(t));
    if (strlen(s->str) != s->len || !td__is_ident(s->str, false))
        return cl_operr(c, TD_ESCHEMA, s, label,
                        "scalar name '%.64s' is not an identifier", s->str);
    if (s->len >= TD_NAME_MAX)
        return cl_operr(c, TD_ELIMIT, s, label,
                        "scalar name '%.64s...' is longer than %d bytes",
                        s->str, TD_NAME_MAX - 1);
    for (int i = 0; i < c->call->nbuffers; i++)
        if (strcmp(c->call->buffers[i].name, s->str) == 0)
            return cl_operr(c, TD_ESCHEMA, s, label,
                            "scalar '%s' has the name of a buffer", s->str);
    if (td__is_reserved_name(s->str))
        return cl_operr(c, TD_ESCHEMA, s, label,
                        "scalar name '%s' is reserved (a keyword of CUDA C "
                        "or TVMScript, or a name the printed code uses)",
                        s->str);
    memset(out, 0, sizeof *out);
    out->kind = TD_OPERAND_SCALAR;
    out->dtype = dt;
    memcpy(out->name, s->str, s->len + 1);
    out->pos.line = n->line;
    out->pos.col = n->col;
    const td_operand *prev = find_scalar(c->call, out->name, out);
    if (prev != NULL && prev->dtype != dt)
        return cl_operr(c, TD_ESCHEMA, v[2], label,
                        "scalar '%s' is %s here but %s at %d:%d", out->name,
                        td_dtype_name(dt), td_dtype_name(prev->dtype),
                        prev->pos.line, prev->pos.col);
    return 0;
}

/*
 * One operand: a region (a string, as `src` takes it), a literal (a bare
 * number, of the dst buffer's dtype; or {value: V, dtype: T}) or a named
 * scalar ({scalar: NAME, dtype: T}).  Messages start with `label`.
 */
static int cl_operand(td__cl *c, const td_ynode *n, const char *label,
                      td_operand *out)
{
    memset(out, 0, sizeof *out);
    if (n->kind == TD_YMAP)
        return cl_operand_map(c, n, label, out);
    const td_buffer *db = td_call_dst_buffer(c->call);
    int rc = cl_number(c, n, label, db != NULL ? db->dtype : TD_F32, out);
    if (rc != 1)
        return rc;
    td_ytype t = yv_kind(n);
    if (t != TD_YT_STR)
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "an operand must be a region, a number or a mapping, "
                        "not %s",
                        td__ytype_name(t));
    if ((rc = td__cl_region_in(c, n, label, label, &out->region)) != 0)
        return rc;
    out->kind = TD_OPERAND_REGION;
    out->dtype = c->call->buffers[out->region.buffer].dtype;
    out->pos.line = n->line;
    out->pos.col = n->col;
    return 0;
}

int td__cl_srcs(td__cl *c, const td_ynode *n)
{
    td_call *call = c->call;
    if (n->kind != TD_YSEQ)
        return cl_err(c, TD_ESCHEMA, n,
                      "'srcs' must be a list of operands, not %s",
                      td__ytype_name(yv_kind(n)));
    if (n->n > TD_MAX_SRCS)
        return cl_err(c, TD_ELIMIT, n, "'srcs' has %zu operands (at most %d)",
                      n->n, TD_MAX_SRCS);
    for (size_t i = 0; i < n->n; i++) {
        char label[32];
        snprintf(label, sizeof label, "srcs[%d]", (int)i);
        int rc = cl_operand(c, n->kids[i], label, &call->srcs[i]);
        if (rc)
            return rc;
        call->nsrcs = (int)i + 1;
    }
    return 0;
}

int td__cl_extras(td__cl *c, const td_ynode *n)
{
    td_call *call = c->call;
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'extras' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    static const char *const keys[] = {"bias", "scale"};
    const td_ynode *v[2], *unknown = NULL;
    int rc = td__ymap_read(&c->doc, n, keys, 2, v, &unknown);
    if (rc != 0 && unknown != NULL) {
        char hint[128];
        return cl_err(c, TD_ESCHEMA, unknown, "extras: unknown key '%.64s'%s",
                      unknown->str,
                      td__yhint(hint, sizeof hint, unknown->str, keys, 2));
    }
    if (rc != 0)
        return rc;
    if (v[0] != NULL &&
        (rc = cl_operand(c, v[0], "extras.bias", &call->bias)) != 0)
        return rc;
    if (v[1] != NULL) {
        if ((rc = cl_operand(c, v[1], "extras.scale", &call->scale)) != 0)
            return rc;
        if (call->scale.kind == TD_OPERAND_REGION)
            return cl_err(c, TD_ESCHEMA, v[1],
                          "extras: 'scale' must be a literal or a named "
                          "scalar, not a region");
    }
    return 0;
}
