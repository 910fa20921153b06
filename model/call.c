/*
 * The call file loader (contract section 3) and the call model's helpers.
 *
 * Loading runs in two steps.  The YAML front-end (core/td_yaml.h) builds a
 * tree of nodes that remember their positions, with the policy every file
 * kind shares (tags, anchors and aliases refused, limits, one wording of
 * libyaml's errors); then the schema walk fills a td_call and reports the
 * first problem with FILE:LINE:COL.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "model.h"
#include "td_yaml.h"

/* The largest element count of one buffer (2^40): larger buffers cannot be
 * staged by any kernel and products beyond it could overflow later. */
#define CALL_MAX_ELEMS TD_MAX_ELEMENTS

/* The loader's state: the document (file, text, where messages go) and the
 * call being filled. */
typedef struct cl {
    td_ydoc doc;
    td_call *call;
} cl;

#define cl_err_at(c, code, line, col, ...)                                     \
    td__yerr_at(&(c)->doc, (code), (line), (col), __VA_ARGS__)
#define cl_err(c, code, node, ...)                                             \
    td__yerr(&(c)->doc, (code), (node), __VA_ARGS__)

/* The core-schema type of a node. */
static td_ytype yv_kind(const td_ynode *n)
{
    return td__yclass(n, NULL, NULL, NULL);
}

static bool is_ident(const char *s, bool digit_start)
{
    if (s[0] == '\0')
        return false;
    if (!digit_start && !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return true;
}

/* Reads a string value into out[cap]; `what` names it in messages. */
static int cl_string(cl *c, const td_ynode *n, const char *what, char *out,
                     size_t cap)
{
    return td__ystr(&c->doc, n, what, out, cap);
}

/* Reads an identifier-like name (op, target, dispatch). */
static int cl_name(cl *c, const td_ynode *n, const char *what, char *out,
                   bool digit_start)
{
    int rc = cl_string(c, n, what, out, TD_NAME_MAX);
    if (rc)
        return rc;
    if (!is_ident(out, digit_start))
        return cl_err(c, TD_ESCHEMA, n, "'%s' must be a name, got '%s'", what,
                      out);
    return 0;
}


/* ---- regions ------------------------------------------------------------ */

typedef struct rp {
    cl *c;
    const td_ynode *n;
    const char *s;
    size_t pos;
    const char *label; /* "srcs[1]": messages start "srcs[1]: "; NULL for
                          dst and src, whose messages have no prefix */
} rp;

static int rp_err(rp *r, int code, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int rp_err(rp *r, int code, size_t at, const char *fmt, ...)
{
    char msg[TD_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cl_err_at(r->c, code, r->n->line, td__ycol_in(r->n, at), "%s%s%s",
                     r->label != NULL ? r->label : "",
                     r->label != NULL ? ": " : "", msg);
}

static void rp_ws(rp *r)
{
    while (r->s[r->pos] == ' ' || r->s[r->pos] == '\t')
        r->pos++;
}

static int rp_found(rp *r, const char *what)
{
    char ch = r->s[r->pos];
    if (ch == '\0')
        return rp_err(r, TD_EPARSE, r->pos, "expected %s, found end of region",
                      what);
    if ((unsigned char)ch < 0x20 || (unsigned char)ch >= 0x7f)
        return rp_err(r, TD_EPARSE, r->pos, "expected %s, found byte 0x%02x",
                      what, (unsigned)(unsigned char)ch);
    return rp_err(r, TD_EPARSE, r->pos, "expected %s, found '%c'", what, ch);
}

/* Parses an optional non-negative index; *present says whether one was. */
static int rp_index(rp *r, int64_t *v, bool *present)
{
    rp_ws(r);
    *present = false;
    if (r->s[r->pos] == '-')
        return rp_err(r, TD_EPARSE, r->pos,
                      "negative indices are not supported in regions");
    if (!isdigit((unsigned char)r->s[r->pos]))
        return 0;
    size_t at = r->pos;
    int64_t x = 0;
    while (isdigit((unsigned char)r->s[r->pos])) {
        int d = r->s[r->pos] - '0';
        if (x > (TD_MAX_EXTENT - d) / 10)
            return rp_err(r, TD_ELIMIT, at, "region index is too large");
        x = x * 10 + d;
        r->pos++;
    }
    *v = x;
    *present = true;
    return 0;
}

/* Parses "NAME" or "NAME[slices]" against the call's buffers.  `label`
 * prefixes every message about the text ("srcs[1]: unknown buffer 'X'");
 * NULL keeps the messages of dst and src as they always were. */
static int cl_region_in(cl *c, const td_ynode *n, const char *what,
                        const char *label, td_region *out)
{
    td_ytype t = yv_kind(n);
    if (t != TD_YT_STR)
        return cl_err(c, TD_ESCHEMA, n, "'%s' must be a string, not %s", what,
                      td__ytype_name(t));
    if (strlen(n->str) != n->len)
        return cl_err(c, TD_ESCHEMA, n, "'%s' contains a NUL byte", what);
    rp r = {c, n, n->str, 0, label};
    rp_ws(&r);
    size_t name_at = r.pos;
    if (!(isalpha((unsigned char)r.s[r.pos]) || r.s[r.pos] == '_'))
        return rp_found(&r, "a buffer name");
    while (isalnum((unsigned char)r.s[r.pos]) || r.s[r.pos] == '_')
        r.pos++;
    size_t name_len = r.pos - name_at;
    int buf = -1;
    for (int i = 0; i < c->call->nbuffers; i++) {
        const char *bn = c->call->buffers[i].name;
        if (strlen(bn) == name_len && memcmp(bn, r.s + name_at, name_len) == 0)
            buf = i;
    }
    if (buf < 0)
        return rp_err(&r, TD_ESCHEMA, name_at, "unknown buffer '%.*s'",
                      (int)(name_len > 64 ? 64 : name_len), r.s + name_at);
    const td_buffer *b = &c->call->buffers[buf];
    td_region reg;
    memset(&reg, 0, sizeof reg);
    reg.buffer = buf;
    reg.ndim = b->ndim;
    for (int d = 0; d < b->ndim; d++) {
        reg.start[d] = 0;
        reg.extent[d] = b->shape[d];
    }
    rp_ws(&r);
    if (r.s[r.pos] == '\0') {
        *out = reg;
        return 0;
    }
    if (r.s[r.pos] != '[')
        return rp_found(&r, "'[' or end of region");
    size_t open_at = r.pos++;
    int nslices = 0;
    for (;;) {
        rp_ws(&r);
        size_t at = r.pos;
        int64_t start = 0, stop = 0;
        bool has_start, has_stop = false, colon = false;
        int rc = rp_index(&r, &start, &has_start);
        if (rc)
            return rc;
        rp_ws(&r);
        if (r.s[r.pos] == ':') {
            colon = true;
            r.pos++;
            rc = rp_index(&r, &stop, &has_stop);
            if (rc)
                return rc;
            rp_ws(&r);
            if (r.s[r.pos] == ':')
                return rp_err(&r, TD_EPARSE, r.pos,
                              "slice steps are not supported in regions");
        }
        if (!has_start && !colon)
            return rp_found(&r, "an index or a slice");
        int d = nslices++;
        if (d < b->ndim) {
            int64_t ext = b->shape[d];
            if (!colon) {
                if (start >= ext)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "index %lld out of bounds for dimension %d "
                                  "of extent %lld",
                                  (long long)start, d, (long long)ext);
                stop = start + 1;
            } else {
                if (!has_stop)
                    stop = ext;
                if (stop > ext || start > ext)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "slice %lld:%lld out of bounds for "
                                  "dimension %d of extent %lld",
                                  (long long)start, (long long)stop, d,
                                  (long long)ext);
                if (stop <= start)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "empty slice %lld:%lld in dimension %d",
                                  (long long)start, (long long)stop, d);
            }
            reg.start[d] = start;
            reg.extent[d] = stop - start;
        }
        if (r.s[r.pos] == ',') {
            r.pos++;
            continue;
        }
        if (r.s[r.pos] == ']') {
            r.pos++;
            break;
        }
        return rp_found(&r, "',' or ']'");
    }
    rp_ws(&r);
    if (r.s[r.pos] != '\0')
        return rp_found(&r, "end of region");
    if (nslices != b->ndim)
        return rp_err(&r, TD_ESCHEMA, open_at,
                      "region has %d slice%s but buffer '%s' has %d "
                      "dimension%s",
                      nslices, nslices == 1 ? "" : "s", b->name, b->ndim,
                      b->ndim == 1 ? "" : "s");
    *out = reg;
    return 0;
}

static int cl_region(cl *c, const td_ynode *n, const char *what, td_region *out)
{
    return cl_region_in(c, n, what, NULL, out);
}

/* ---- buffers ------------------------------------------------------------ */

static const char *const g_storage_scopes[] = {"local", "shared", "shared.dyn",
                                               "global"};

static int cl_shape(cl *c, const td_ynode *n, td_buffer *b)
{
    if (n->kind != TD_YSEQ || n->n == 0)
        return cl_err(c, TD_ESCHEMA, n,
                      "shape must be a non-empty list of positive integers");
    if (n->n > TD_MAX_RANK)
        return cl_err(c, TD_ELIMIT, n, "rank %zu exceeds the limit of %d",
                      n->n, TD_MAX_RANK);
    int64_t prod = 1;
    for (size_t i = 0; i < n->n; i++) {
        const td_ynode *e = n->kids[i];
        int64_t v = 0;
        bool ovf;
        td_ytype t = td__yclass(e, &v, NULL, &ovf);
        if (t != TD_YT_INT)
            return cl_err(c, TD_ESCHEMA, e,
                          "shape extent must be a positive integer, not %s",
                          td__ytype_name(t));
        if (ovf || v > TD_MAX_EXTENT)
            return cl_err(c, TD_ELIMIT, e,
                          "shape extent %s exceeds the limit of %lld", e->str,
                          (long long)TD_MAX_EXTENT);
        if (v <= 0)
            return cl_err(c, TD_ESCHEMA, e,
                          "shape extent must be positive, got %lld",
                          (long long)v);
        if (prod > CALL_MAX_ELEMS / v)
            return cl_err(c, TD_ELIMIT, e,
                          "buffer '%s' has more than 2^40 elements", b->name);
        prod *= v;
        b->shape[i] = v;
    }
    b->ndim = (int)n->n;
    return 0;
}

static int cl_layout(cl *c, const td_ynode *n, td_buffer *b, int64_t elems)
{
    int rc = cl_string(c, n, "layout", b->layout_text, sizeof b->layout_text);
    if (rc)
        return rc;
    td_diag ld;
    td_diag_clear(&ld);
    rc = td_layout_parse(b->layout_text, &b->layout, &ld);
    if (rc)
        return cl_err_at(c, rc, n->line, td__ycol_in(n, (size_t)(ld.col - 1)),
                         "%s", ld.msg);
    b->has_layout = true;
    if (b->layout.nshard == 0)
        return 0; /* A bare swizzle covers whatever it is applied to. */
    int64_t cover = 1;
    bool big = false;
    for (int i = 0; i < b->layout.nshard; i++) {
        int64_t e = b->layout.shard[i].extent;
        if (cover > CALL_MAX_ELEMS / e) {
            big = true;
            break;
        }
        cover *= e;
    }
    if (big)
        return cl_err(c, TD_ESCHEMA, n,
                      "layout covers more than 2^40 elements but buffer '%s' "
                      "has %lld",
                      b->name, (long long)elems);
    if (cover != elems)
        return cl_err(c, TD_ESCHEMA, n,
                      "layout covers %lld elements but buffer '%s' has %lld",
                      (long long)cover, b->name, (long long)elems);
    return 0;
}

static int cl_buffer(cl *c, const td_ynode *key, const td_ynode *val, td_buffer *b)
{
    if (!is_ident(key->str, false))
        return cl_err(c, TD_ESCHEMA, key,
                      "buffer name '%.64s' is not an identifier", key->str);
    if (key->len >= TD_NAME_MAX)
        return cl_err(c, TD_ELIMIT, key,
                      "buffer name '%.64s...' is longer than %d bytes",
                      key->str, TD_NAME_MAX - 1);
    memcpy(b->name, key->str, key->len + 1);
    if (val->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, val, "buffer '%s' must be a mapping, not %s",
                      b->name, td__ytype_name(yv_kind(val)));

    static const char *const keys[] = {"scope", "dtype", "shape", "layout"};
    const td_ynode *slot[4] = {NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < val->n / 2; i++) {
        const td_ynode *k = val->kids[2 * i];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        int which = -1;
        for (int j = 0; j < 4; j++)
            if (strcmp(k->str, keys[j]) == 0)
                which = j;
        if (which < 0)
            return cl_err(c, TD_ESCHEMA, k,
                          "unknown key '%.64s' in buffer '%s' (expected scope, "
                          "dtype, shape, layout)",
                          k->str, b->name);
        if (slot[which] != NULL)
            return cl_err(c, TD_ESCHEMA, k, "duplicate key '%s'", keys[which]);
        slot[which] = val->kids[2 * i + 1];
    }
    for (int j = 0; j < 3; j++)
        if (slot[j] == NULL)
            return cl_err(c, TD_ESCHEMA, val, "buffer '%s' is missing '%s'",
                          b->name, keys[j]);

    int rc = cl_string(c, slot[0], "scope", b->scope, sizeof b->scope);
    if (rc)
        return rc;
    bool known = false;
    for (size_t j = 0; j < sizeof g_storage_scopes / sizeof *g_storage_scopes;
         j++)
        if (strcmp(b->scope, g_storage_scopes[j]) == 0)
            known = true;
    if (!known)
        return cl_err(c, TD_ESCHEMA, slot[0],
                      "unknown storage scope '%s' (expected local, shared, "
                      "shared.dyn or global)",
                      b->scope);

    char dt[TD_NAME_MAX];
    rc = cl_string(c, slot[1], "dtype", dt, sizeof dt);
    if (rc)
        return rc;
    if (td_dtype_parse(dt, &b->dtype) != 0)
        return cl_err(c, TD_ESCHEMA, slot[1], "unknown dtype '%s'", dt);

    rc = cl_shape(c, slot[2], b);
    if (rc)
        return rc;
    if (slot[3] != NULL) {
        int64_t elems = 1;
        for (int d = 0; d < b->ndim; d++)
            elems *= b->shape[d];
        rc = cl_layout(c, slot[3], b, elems);
        if (rc)
            return rc;
    }
    return 0;
}

static int cl_buffers(cl *c, const td_ynode *n)
{
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'buffers' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    if (n->n == 0)
        return cl_err(c, TD_ESCHEMA, n,
                      "'buffers' must declare at least one buffer");
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        if (i >= TD_MAX_BUFFERS)
            return cl_err(c, TD_ELIMIT, k, "too many buffers (max %d)",
                          TD_MAX_BUFFERS);
        rc = td__ydup(&c->doc, n, i);
        if (rc)
            return rc;
        rc = cl_buffer(c, k, n->kids[2 * i + 1], &c->call->buffers[i]);
        if (rc)
            return rc;
        c->call->nbuffers = (int)i + 1;
    }
    return 0;
}

/* ---- the other sections ------------------------------------------------- */

static int cl_launch(cl *c, const td_ynode *n)
{
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'launch' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        int tag = -1;
        for (int t = 0; t < TD_LAUNCH_COUNT; t++)
            if (strcmp(k->str, td_launch_tag_name((td_launch_tag)t)) == 0)
                tag = t;
        if (tag < 0)
            return cl_err(c, TD_ESCHEMA, k,
                          "unknown launch tag '%.64s' (expected threadIdx.x/y/z "
                          "or blockIdx.x/y/z)",
                          k->str);
        rc = td__ydup(&c->doc, n, i);
        if (rc)
            return rc;
        td_launch_param *lp = &c->call->launch[tag];
        int64_t x = 0;
        bool ovf;
        td_ytype t = td__yclass(v, &x, NULL, &ovf);
        if (t == TD_YT_INT) {
            if (ovf || x > INT32_MAX)
                return cl_err(c, TD_ELIMIT, v,
                              "launch extent %s for %s exceeds the limit of %d",
                              v->str, k->str, INT32_MAX);
            if (x <= 0)
                return cl_err(c, TD_ESCHEMA, v,
                              "launch extent for %s must be positive, got %lld",
                              k->str, (long long)x);
            lp->extent = x;
        } else if (t == TD_YT_STR && is_ident(v->str, false)) {
            if (v->len >= TD_NAME_MAX)
                return cl_err(c, TD_ELIMIT, v,
                              "launch symbol is longer than %d bytes",
                              TD_NAME_MAX - 1);
            memcpy(lp->symbol, v->str, v->len + 1);
            lp->symbolic = true;
        } else {
            return cl_err(c, TD_ESCHEMA, v,
                          "launch extent for %s must be a positive integer or "
                          "a name, not %s",
                          k->str, td__ytype_name(t));
        }
        lp->present = true;
    }
    return 0;
}

static int cl_axes(cl *c, const td_ynode *n)
{
    td_call *call = c->call;
    const td_ynode *items[TD_MAX_AXES];
    size_t count;
    if (n->kind == TD_YSEQ) {
        if (n->n == 0)
            return cl_err(c, TD_ESCHEMA, n, "'axes' must not be empty");
        if (n->n > TD_MAX_AXES)
            return cl_err(c, TD_ELIMIT, n, "too many reduce axes (max %d)",
                          TD_MAX_AXES);
        count = n->n;
        for (size_t i = 0; i < count; i++)
            items[i] = n->kids[i];
    } else {
        count = 1;
        items[0] = n;
    }
    int ndim = call->src.ndim;
    bool seen[TD_MAX_RANK] = {false};
    for (size_t i = 0; i < count; i++) {
        const td_ynode *e = items[i];
        int64_t ax = 0;
        bool ovf;
        td_ytype t = td__yclass(e, &ax, NULL, &ovf);
        if (t != TD_YT_INT)
            return cl_err(c, TD_ESCHEMA, e,
                          "reduce axis must be an integer, not %s", td__ytype_name(t));
        if (ovf)
            return cl_err(c, TD_ESCHEMA, e,
                          "reduce axis %s out of range for ndim=%d", e->str,
                          ndim);
        int64_t a = ax < 0 ? ax + ndim : ax;
        if (a < 0 || a >= ndim)
            return cl_err(c, TD_ESCHEMA, e,
                          "reduce axis %lld out of range for ndim=%d",
                          (long long)ax, ndim);
        if (seen[a])
            return cl_err(c, TD_ESCHEMA, e, "duplicate reduce axis %lld",
                          (long long)a);
        seen[a] = true;
        call->axes[i] = (int)ax;
    }
    call->naxes = (int)count;
    return 0;
}

static int cl_config(cl *c, const td_ynode *n)
{
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'config' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        if (i >= TD_MAX_CONFIG)
            return cl_err(c, TD_ELIMIT, k, "too many config entries (max %d)",
                          TD_MAX_CONFIG);
        rc = td__ydup(&c->doc, n, i);
        if (rc)
            return rc;
        if (!is_ident(k->str, false))
            return cl_err(c, TD_ESCHEMA, k,
                          "config key '%.64s' is not an identifier", k->str);
        if (k->len >= TD_NAME_MAX)
            return cl_err(c, TD_ELIMIT, k,
                          "config key is longer than %d bytes",
                          TD_NAME_MAX - 1);
        td_config_entry *ce = &c->call->config[i];
        memcpy(ce->key, k->str, k->len + 1);
        bool ovf;
        td_ytype t = td__yclass(v, &ce->i, &ce->b, &ovf);
        if (t == TD_YT_INT) {
            if (ovf)
                return cl_err(c, TD_ELIMIT, v,
                              "config value %.64s does not fit in 64 bits",
                              v->str);
            ce->kind = TD_VALUE_INT;
        } else if (t == TD_YT_BOOL) {
            ce->kind = TD_VALUE_BOOL;
        } else if (t == TD_YT_STR) {
            rc = cl_string(c, v, ce->key, ce->s, sizeof ce->s);
            if (rc)
                return rc;
            ce->kind = TD_VALUE_STRING;
        } else {
            return cl_err(c, TD_ESCHEMA, v,
                          "config value '%s' must be an integer, a boolean or "
                          "a string, not %s",
                          ce->key, td__ytype_name(t));
        }
        c->call->nconfig = (int)i + 1;
    }
    return 0;
}

/* ---- operands (srcs, extras) ------------------------------------------- */

/* A message about operand `label` ("srcs[2]", "extras.bias"):
 * "LABEL: MESSAGE" at node n. */
static int cl_operr(cl *c, int code, const td_ynode *n, const char *label,
                    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int cl_operr(cl *c, int code, const td_ynode *n, const char *label,
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
static int lit_range(cl *c, const td_ynode *n, const char *label, td_dtype dt)
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
static int cl_number(cl *c, const td_ynode *n, const char *label, td_dtype dt,
                     td_operand *out)
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

/* A dtype given in an operand mapping. */
static int cl_op_dtype(cl *c, const td_ynode *n, const char *label,
                       td_dtype *out)
{
    td_ytype t = yv_kind(n);
    char dt[TD_NAME_MAX];
    if (t != TD_YT_STR)
        return cl_operr(c, TD_ESCHEMA, n, label,
                        "'dtype' must be a string, not %s", td__ytype_name(t));
    if (strlen(n->str) != n->len || n->len >= sizeof dt ||
        td_dtype_parse(n->str, out) != 0)
        return cl_operr(c, TD_ESCHEMA, n, label, "unknown dtype '%.64s'",
                        n->str);
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
static int cl_operand_map(cl *c, const td_ynode *n, const char *label,
                          td_operand *out)
{
    static const char *const keys[] = {"value", "scalar", "dtype"};
    const td_ynode *v[3], *unknown = NULL;
    int rc = td__ymap_read(&c->doc, n, keys, 3, v, &unknown);
    if (rc != 0 && unknown != NULL)
        return cl_operr(c, TD_ESCHEMA, unknown, label,
                        "unknown key '%.64s' (expected value, scalar, dtype)",
                        unknown->str);
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
    if (strlen(s->str) != s->len || !is_ident(s->str, false))
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
static int cl_operand(cl *c, const td_ynode *n, const char *label,
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
    if ((rc = cl_region_in(c, n, label, label, &out->region)) != 0)
        return rc;
    out->kind = TD_OPERAND_REGION;
    out->dtype = c->call->buffers[out->region.buffer].dtype;
    out->pos.line = n->line;
    out->pos.col = n->col;
    return 0;
}

static int cl_srcs(cl *c, const td_ynode *n)
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

static int cl_extras(cl *c, const td_ynode *n)
{
    td_call *call = c->call;
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'extras' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    static const char *const keys[] = {"bias", "scale"};
    const td_ynode *v[2], *unknown = NULL;
    int rc = td__ymap_read(&c->doc, n, keys, 2, v, &unknown);
    if (rc != 0 && unknown != NULL)
        return cl_err(c, TD_ESCHEMA, unknown,
                      "extras: unknown key '%.64s' (expected bias, scale)",
                      unknown->str);
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

/* ---- the call ----------------------------------------------------------- */

enum {
    K_OP,
    K_TARGET,
    K_ARCH,
    K_SCOPE,
    K_LAUNCH,
    K_BUFFERS,
    K_DST,
    K_SRC,
    K_AXES,
    K_ACCUM,
    K_CONFIG,
    K_DISPATCH,
    K_SRCS,
    K_EXTRAS,
    K_COUNT
};

static const char *const g_keys[K_COUNT] = {
    "op",     "target", "arch",     "scope", "launch", "buffers", "dst",
    "src",    "axes",   "accum",    "config", "dispatch", "srcs", "extras"};

static void set_pos(td_pos *p, const td_ynode *n)
{
    p->line = n->line;
    p->col = n->col;
}

/* src or srcs, then extras; call->src mirrors srcs[0] when that is a
 * region and has buffer -1 otherwise. */
static int cl_sources(cl *c, const td_ynode *const *v,
                      const td_ynode *const *keys)
{
    td_call *call = c->call;
    int rc;
    if (v[K_SRC] != NULL && v[K_SRCS] != NULL) {
        const td_ynode *a = keys[K_SRC], *b = keys[K_SRCS];
        bool a_first = a->line < b->line || (a->line == b->line && a->col < b->col);
        const td_ynode *later = a_first ? b : a;
        return cl_err(c, TD_ESCHEMA, later,
                      "give 'src' (one region) or 'srcs' (a list of "
                      "operands), not both");
    }
    if (v[K_SRC] != NULL) {
        td_operand *o = &call->srcs[0];
        if ((rc = cl_region(c, v[K_SRC], "src", &o->region)) != 0)
            return rc;
        o->kind = TD_OPERAND_REGION;
        o->dtype = call->buffers[o->region.buffer].dtype;
        set_pos(&o->pos, v[K_SRC]);
        call->nsrcs = 1;
        set_pos(&call->pos_srcs, v[K_SRC]);
    } else if (v[K_SRCS] != NULL) {
        if ((rc = cl_srcs(c, v[K_SRCS])) != 0)
            return rc;
        call->srcs_list = true;
        set_pos(&call->pos_srcs, v[K_SRCS]);
    }
    if (call->nsrcs > 0 && call->srcs[0].kind == TD_OPERAND_REGION) {
        call->src = call->srcs[0].region;
    } else {
        memset(&call->src, 0, sizeof call->src);
        call->src.buffer = -1;
    }
    if (v[K_EXTRAS] != NULL) {
        if ((rc = cl_extras(c, v[K_EXTRAS])) != 0)
            return rc;
        set_pos(&call->pos_extras, v[K_EXTRAS]);
    }
    return 0;
}

static int cl_call(cl *c, const td_ynode *root)
{
    td_call *call = c->call;
    const td_ynode *v[K_COUNT] = {NULL}, *keys[K_COUNT] = {NULL};
    int rc;

    if (root->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, root,
                      "a call file must be a mapping, not %s",
                      td__ytype_name(yv_kind(root)));
    for (size_t i = 0; i < root->n / 2; i++) {
        const td_ynode *k = root->kids[2 * i];
        rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        int which = -1;
        for (int j = 0; j < K_COUNT; j++)
            if (strcmp(k->str, g_keys[j]) == 0)
                which = j;
        if (which < 0)
            return cl_err(c, TD_ESCHEMA, k, "unknown key '%.64s'", k->str);
        if (v[which] != NULL)
            return cl_err(c, TD_ESCHEMA, k, "duplicate key '%s'", g_keys[which]);
        v[which] = root->kids[2 * i + 1];
        keys[which] = k;
    }
    /* The source is optional here (`zero` takes none): the op's check
     * decides at dispatch (contract section 3). */
    static const int required[] = {K_OP, K_TARGET, K_BUFFERS, K_DST};
    for (size_t j = 0; j < sizeof required / sizeof *required; j++)
        if (v[required[j]] == NULL)
            return cl_err(c, TD_ESCHEMA, root, "missing required key '%s'",
                          g_keys[required[j]]);

    rc = cl_name(c, v[K_OP], "op", call->op, false);
    if (rc)
        return rc;
    set_pos(&call->pos_op, v[K_OP]);
    rc = cl_name(c, v[K_TARGET], "target", call->target, false);
    if (rc)
        return rc;
    set_pos(&call->pos_target, v[K_TARGET]);
    if (v[K_ARCH] != NULL) {
        char arch[TD_NAME_MAX];
        rc = cl_string(c, v[K_ARCH], "arch", arch, sizeof arch);
        if (rc)
            return rc;
        if (td_call_set_arch(call, arch) != 0)
            return cl_err(c, TD_ESCHEMA, v[K_ARCH],
                          "arch '%s' has no sm_NN version", arch);
    }
    call->scope = TD_SCOPE_THREAD;
    if (v[K_SCOPE] != NULL) {
        char s[TD_NAME_MAX];
        rc = cl_string(c, v[K_SCOPE], "scope", s, sizeof s);
        if (rc)
            return rc;
        if (td_exec_scope_parse(s, &call->scope) != 0)
            return cl_err(c, TD_ESCHEMA, v[K_SCOPE],
                          "unknown exec scope '%s' (expected thread, warp, "
                          "warpgroup, cta or cluster)",
                          s);
    }
    if (v[K_LAUNCH] != NULL && (rc = cl_launch(c, v[K_LAUNCH])) != 0)
        return rc;
    if ((rc = cl_buffers(c, v[K_BUFFERS])) != 0)
        return rc;
    if ((rc = cl_region(c, v[K_DST], "dst", &call->dst)) != 0)
        return rc;
    if ((rc = cl_sources(c, v, keys)) != 0)
        return rc;
    if (v[K_AXES] != NULL) {
        if (call->src.buffer < 0)
            return cl_err(c, TD_ESCHEMA, v[K_AXES],
                          "'axes' needs a region as the first source");
        if ((rc = cl_axes(c, v[K_AXES])) != 0)
            return rc;
    } else {
        call->naxes = 1;
        call->axes[0] = -1;
    }
    if (v[K_ACCUM] != NULL) {
        td_ytype t = td__yclass(v[K_ACCUM], NULL, &call->accum, NULL);
        if (t != TD_YT_BOOL)
            return cl_err(c, TD_ESCHEMA, v[K_ACCUM],
                          "'accum' must be a boolean, not %s", td__ytype_name(t));
    }
    if (v[K_CONFIG] != NULL && (rc = cl_config(c, v[K_CONFIG])) != 0)
        return rc;
    if (v[K_DISPATCH] != NULL) {
        rc = cl_name(c, v[K_DISPATCH], "dispatch", call->dispatch, true);
        if (rc)
            return rc;
        set_pos(&call->pos_dispatch, v[K_DISPATCH]);
    }
    return 0;
}

/* The limits of a call file. */
static const td_ylimits call_limits = {TD_CALL_FILE_MAX, TD_CALL_DEPTH_MAX, 0};

int td_call_parse(const char *name, const char *text, size_t len,
                  td_call **out, td_diag *diag)
{
    cl c;
    memset(&c, 0, sizeof c);
    *out = NULL;
    if (text == NULL)
        return td__fail(diag, TD_EINVAL, name ? name : "",
                        "no call text given");
    int rc = td__ydoc_load(&c.doc, name, "call file", text, len, &call_limits,
                           diag);
    if (rc)
        return rc;
    c.call = td__calloc(1, sizeof *c.call);
    if (c.call == NULL) {
        rc = cl_err_at(&c, TD_ENOMEM, 0, 0, "out of memory");
        td__ydoc_free(&c.doc);
        return rc;
    }
    td__strlcpy(c.call->file, c.doc.file, sizeof c.call->file);
    rc = cl_call(&c, c.doc.root);
    td__ydoc_free(&c.doc);
    if (rc) {
        td__free(c.call);
        return rc;
    }
    *out = c.call;
    return 0;
}

int td_call_load_file(const char *path, td_call **out, td_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = td__read_file(path, TD_CALL_FILE_MAX, &text, &len, diag);
    if (rc)
        return rc;
    rc = td_call_parse(path, text, len, out, diag);
    td__free(text);
    return rc;
}

void td_call_free(td_call *call)
{
    td__free(call);
}

int td_call_set_arch(td_call *call, const char *arch)
{
    if (call == NULL || arch == NULL || strlen(arch) >= TD_NAME_MAX)
        return TD_EINVAL;
    for (const char *p = strstr(arch, "sm_"); p != NULL;
         p = strstr(p + 1, "sm_")) {
        const char *q = p + 3;
        long v = 0;
        int digits = 0;
        while (isdigit((unsigned char)q[digits]) && digits < 7) {
            v = v * 10 + (q[digits] - '0');
            digits++;
        }
        if (digits == 0)
            continue;
        if (isdigit((unsigned char)q[digits]))
            return TD_EINVAL; /* an absurdly long version number */
        td__strlcpy(call->arch, arch, sizeof call->arch);
        call->sm_version = (int)v;
        return 0;
    }
    return TD_EINVAL;
}

const td_buffer *td_call_dst_buffer(const td_call *call)
{
    if (call == NULL || call->dst.buffer < 0 ||
        call->dst.buffer >= call->nbuffers)
        return NULL;
    return &call->buffers[call->dst.buffer];
}

const td_buffer *td_call_src_buffer(const td_call *call)
{
    if (call == NULL || call->src.buffer < 0 ||
        call->src.buffer >= call->nbuffers)
        return NULL;
    return &call->buffers[call->src.buffer];
}

const td_config_entry *td_call_config(const td_call *call, const char *key)
{
    if (call == NULL || key == NULL)
        return NULL;
    for (int i = 0; i < call->nconfig && i < TD_MAX_CONFIG; i++)
        if (strcmp(call->config[i].key, key) == 0)
            return &call->config[i];
    return NULL;
}

bool td_call_config_bool(const td_call *call, const char *key, bool dflt)
{
    const td_config_entry *e = td_call_config(call, key);
    return e != NULL && e->kind == TD_VALUE_BOOL ? e->b : dflt;
}

int64_t td_call_config_int(const td_call *call, const char *key, int64_t dflt)
{
    const td_config_entry *e = td_call_config(call, key);
    return e != NULL && e->kind == TD_VALUE_INT ? e->i : dflt;
}

int td_call_axes(const td_call *call, int *reduce, int *nreduce, int *spatial,
                 int *nspatial, char *why, size_t whylen)
{
    int ndim = call->src.ndim;
    bool red[TD_MAX_RANK] = {false};
    if (ndim < 0 || ndim > TD_MAX_RANK) {
        if (why != NULL && whylen > 0)
            snprintf(why, whylen, "source rank %d is out of range", ndim);
        return TD_EINVAL;
    }
    for (int i = 0; i < call->naxes && i < TD_MAX_AXES; i++) {
        int ax = call->axes[i];
        long a = ax < 0 ? (long)ax + ndim : ax;
        if (a < 0 || a >= ndim) {
            if (why != NULL && whylen > 0)
                snprintf(why, whylen, "reduce axis %d out of range for ndim=%d",
                         ax, ndim);
            return TD_EINVAL;
        }
        red[a] = true;
    }
    int nr = 0, ns = 0;
    for (int d = 0; d < ndim; d++) {
        if (red[d])
            reduce[nr++] = d;
        else
            spatial[ns++] = d;
    }
    *nreduce = nr;
    *nspatial = ns;
    return 0;
}

int64_t td_region_size(const td_region *r)
{
    int64_t n = 1;
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++)
        n *= r->extent[d];
    return n;
}

/* ---- the call as script text -------------------------------------------- */

static void sc_region(td_sbuf *o, const td_call *call, const td_region *r)
{
    const char *name = "?";
    if (r->buffer >= 0 && r->buffer < call->nbuffers)
        name = call->buffers[r->buffer].name;
    td__sbuf_printf(o, "%s[", name);
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++)
        td__sbuf_printf(o, "%s%lld:%lld", d ? ", " : "", (long long)r->start[d],
                  (long long)(r->start[d] + r->extent[d]));
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
 * nothing else: the reduction form then prints it as it always did. */
static bool reduction_shaped(const td_call *call)
{
    if (call->srcs_list || call->bias.kind != TD_OPERAND_NONE ||
        call->scale.kind != TD_OPERAND_NONE)
        return false;
    if (call->nsrcs == 1)
        return call->srcs[0].kind == TD_OPERAND_REGION;
    /* A call built by hand before srcs existed: its src region. */
    return call->nsrcs == 0 && call->src.buffer >= 0 &&
           call->src.buffer < call->nbuffers;
}

size_t td_call_format_script_as(const td_call *call, td_script_form form,
                                char *buf, size_t cap)
{
    static const char *const prefix[TD_SCOPE_COUNT] = {
        "Tx.", "Tx.warp.", "Tx.wg.", "Tx.cta.", "Tx.cluster."};
    td_sbuf o = {buf, cap, 0};
    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    if (form == TD_SCRIPT_AUTO)
        form = reduction_shaped(call) ? TD_SCRIPT_REDUCTION
                                      : TD_SCRIPT_OPERANDS;
    td__sbuf_printf(&o, "%s%.*s(",
              (unsigned)call->scope < TD_SCOPE_COUNT ? prefix[call->scope]
                                                     : "Tx.",
              (int)strnlen(call->op, TD_NAME_MAX), call->op);
    sc_region(&o, call, &call->dst);
    int nsrcs = call->nsrcs < 0 ? 0
                : call->nsrcs > TD_MAX_SRCS ? TD_MAX_SRCS
                                            : call->nsrcs;
    if (nsrcs == 0 && call->src.buffer >= 0 &&
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
    if (form == TD_SCRIPT_REDUCTION || call->accum)
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
        }
    }
    td__sbuf_printf(&o, ")");
    return o.len;
}

size_t td_call_format_script(const td_call *call, char *buf, size_t cap)
{
    return td_call_format_script_as(call, TD_SCRIPT_AUTO, buf, cap);
}
