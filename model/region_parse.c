/*
 * The region text of a call file ("NAME" or "NAME[0:4, 2, :]"), parsed
 * against the call's buffers into a td_region.  Every message names the
 * column of the offending character inside the YAML scalar; an operand's
 * messages start with its label ("srcs[1]: unknown buffer 'X'").  Indices
 * are non-negative, slices have no step, and every dimension of the buffer
 * must be given once.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "call_load.h"

/* The parser's state: the loader, the scalar node and its text, and the
 * position reached in it. */
typedef struct rp {
    td__cl *c;
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
int td__cl_region_in(td__cl *c, const td_ynode *n, const char *what,
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
    if (buf < 0) {
        /* The hint: the declared buffer closest to the name, or the list. */
        char name[TD_NAME_MAX], hint[TD_DIAG_MSG_MAX / 2];
        const char *names[TD_MAX_BUFFERS];
        int nb = c->call->nbuffers;
        for (int i = 0; i < nb; i++)
            names[i] = c->call->buffers[i].name;
        snprintf(name, sizeof name, "%.*s",
                 (int)(name_len < sizeof name ? name_len : sizeof name - 1),
                 r.s + name_at);
        return rp_err(&r, TD_ESCHEMA, name_at, "unknown buffer '%.*s'%s",
                      (int)(name_len > 64 ? 64 : name_len), r.s + name_at,
                      td__yhint(hint, sizeof hint, name, names, (size_t)nb));
    }
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

int td__cl_region(td__cl *c, const td_ynode *n, const char *what,
                  td_region *out)
{
    return td__cl_region_in(c, n, what, NULL, out);
}
