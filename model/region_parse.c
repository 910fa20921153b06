/*
 * The region text of a call file ("NAME" or "NAME[0:4, 2, :]"), parsed
 * against the call's buffers into a td_region.  Every message names the
 * column of the offending character inside the YAML scalar; an operand's
 * messages start with its label ("srcs[1]: unknown buffer 'X'").  Indices
 * are non-negative, slices have no step, and every dimension of the buffer
 * must be given once.  A bound may be affine in the launch's block ids
 * ("A[bx * 64:bx * 64 + 64, 0:128]", a CTA's tile) when the slice's extent
 * stays a constant; the region keeps the constant part of its start in
 * `start` and the block ids' coefficients in `block_coef`.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "call_reader.h"
#include "layout.h"

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

/* A bound of a slice: c + the sum of k[i] * blockIdx.{x,y,z}[i] + the sum
 * of k[3 + j] * scalars[j] (the call's declared scalars). */
#define AFF_TERMS (3 + TD_MAX_SCALARS)

typedef struct rp_aff {
    int64_t c;
    int64_t k[AFF_TERMS];
} rp_aff;

static bool aff_symbolic(const rp_aff *a)
{
    for (int i = 0; i < AFF_TERMS; i++)
        if (a->k[i] != 0)
            return true;
    return false;
}

/* Whether a term of a declared scalar is in the bound. */
static bool aff_dynamic(const rp_aff *a)
{
    for (int i = 3; i < AFF_TERMS; i++)
        if (a->k[i] != 0)
            return true;
    return false;
}

/* Whether |x| stays within the limit an index may reach. */
static bool aff_fits(const rp_aff *a)
{
    if (a->c > TD_MAX_EXTENT || a->c < -TD_MAX_EXTENT)
        return false;
    for (int i = 0; i < AFF_TERMS; i++)
        if (a->k[i] > TD_MAX_EXTENT || a->k[i] < -TD_MAX_EXTENT)
            return false;
    return true;
}

static int rp_sum(rp *r, rp_aff *v);

/* The block-id names a bound may use: the launch tags and TVM's short
 * names, as layouts spell the block axes. */
static const char *const block_names[2][3] = {
    {"blockIdx.x", "blockIdx.y", "blockIdx.z"}, {"bx", "by", "bz"}};

/* A factor: an integer, a block id or a parenthesised sum. */
static int rp_factor(rp *r, rp_aff *v)
{
    rp_ws(r);
    memset(v, 0, sizeof *v);
    size_t at = r->pos;
    char ch = r->s[at];
    if (isdigit((unsigned char)ch)) {
        while (isdigit((unsigned char)r->s[r->pos])) {
            int d = r->s[r->pos] - '0';
            if (v->c > (TD_MAX_EXTENT - d) / 10)
                return rp_err(r, TD_ELIMIT, at, "region index is too large");
            v->c = v->c * 10 + d;
            r->pos++;
        }
        return 0;
    }
    if (ch == '(') {
        r->pos++;
        int rc = rp_sum(r, v);
        if (rc)
            return rc;
        rp_ws(r);
        if (r->s[r->pos] != ')')
            return rp_found(r, "')'");
        r->pos++;
        return 0;
    }
    if (isalpha((unsigned char)ch) || ch == '_') {
        size_t end = at;
        while (isalnum((unsigned char)r->s[end]) || r->s[end] == '_' ||
               r->s[end] == '.')
            end++;
        size_t len = end - at;
        int si = td__call_scalar(r->c->call, r->s + at, len);
        if (si >= 0) {
            v->k[3 + si] = 1;
            r->pos = end;
            return 0;
        }
        for (int f = 0; f < 2; f++)
            for (int i = 0; i < 3; i++)
                if (strlen(block_names[f][i]) == len &&
                    memcmp(block_names[f][i], r->s + at, len) == 0) {
                    const td_launch_param *lp =
                        &r->c->call->launch[TD_LAUNCH_BX + i];
                    if (!lp->present)
                        return rp_err(r, TD_ESCHEMA, at,
                                      "region uses %s but 'launch' has no "
                                      "%s",
                                      block_names[f][i], block_names[0][i]);
                    v->k[i] = 1;
                    r->pos = end;
                    return 0;
                }
        char name[TD_NAME_MAX], hint[TD_DIAG_MSG_MAX / 2];
        const char *cands[6 + TD_MAX_SCALARS];
        size_t nc = 0;
        for (int f = 0; f < 2; f++)
            for (int i = 0; i < 3; i++)
                cands[nc++] = block_names[f][i];
        for (int i = 0; i < r->c->call->nscalars && i < TD_MAX_SCALARS; i++)
            cands[nc++] = r->c->call->scalars[i].name;
        snprintf(name, sizeof name, "%.*s",
                 (int)(len < sizeof name ? len : sizeof name - 1), r->s + at);
        return rp_err(r, TD_ESCHEMA, at,
                      "unknown name '%.*s' in a region bound%s",
                      (int)(len > 64 ? 64 : len), r->s + at,
                      td__yhint(hint, sizeof hint, name, cands, nc));
    }
    return rp_found(r, "an index");
}

/* A product of factors; one side of each product is a constant. */
static int rp_term(rp *r, rp_aff *v)
{
    size_t at = r->pos;
    int rc = rp_factor(r, v);
    for (;;) {
        if (rc)
            return rc;
        rp_ws(r);
        if (r->s[r->pos] != '*')
            return 0;
        r->pos++;
        rp_aff w;
        if ((rc = rp_factor(r, &w)) != 0)
            return rc;
        if (aff_symbolic(v) && aff_symbolic(&w))
            return rp_err(r, TD_ESCHEMA, at,
                          "a region bound must be affine in the block ids "
                          "and scalars (a product of two of them is not)");
        rp_aff p;
        int64_t m = aff_symbolic(v) ? w.c : v->c;
        const rp_aff *x = aff_symbolic(v) ? v : &w;
        if (m != 0 && x->c > TD_MAX_EXTENT / m)
            return rp_err(r, TD_ELIMIT, at, "region index is too large");
        for (int i = 0; i < AFF_TERMS; i++)
            if (m != 0 && x->k[i] > TD_MAX_EXTENT / m)
                return rp_err(r, TD_ELIMIT, at, "region index is too large");
        p.c = x->c * m;
        for (int i = 0; i < AFF_TERMS; i++)
            p.k[i] = x->k[i] * m;
        *v = p;
        if (!aff_fits(v))
            return rp_err(r, TD_ELIMIT, at, "region index is too large");
    }
}

/* A sum of terms joined by + and -; a leading '-' is refused, as a
 * negative index always was. */
static int rp_sum(rp *r, rp_aff *v)
{
    rp_ws(r);
    size_t at = r->pos;
    if (r->s[r->pos] == '-')
        return rp_err(r, TD_EPARSE, r->pos,
                      "negative indices are not supported in regions");
    int rc = rp_term(r, v);
    for (;;) {
        if (rc)
            return rc;
        rp_ws(r);
        char op = r->s[r->pos];
        if (op != '+' && op != '-')
            return 0;
        r->pos++;
        rp_aff w;
        if ((rc = rp_term(r, &w)) != 0)
            return rc;
        int64_t sg = op == '+' ? 1 : -1;
        v->c += sg * w.c;
        for (int i = 0; i < AFF_TERMS; i++)
            v->k[i] += sg * w.k[i];
        if (!aff_fits(v))
            return rp_err(r, TD_ELIMIT, at, "region index is too large");
    }
}

/* Parses an optional bound: a non-negative index, or an expression affine
 * in the block ids with non-negative coefficients ("bx * 64 + 64");
 * *present says whether one was. */
static int rp_index(rp *r, rp_aff *v, bool *present)
{
    rp_ws(r);
    *present = false;
    memset(v, 0, sizeof *v);
    if (r->s[r->pos] == '-')
        return rp_err(r, TD_EPARSE, r->pos,
                      "negative indices are not supported in regions");
    char ch = r->s[r->pos];
    if (!isalnum((unsigned char)ch) && ch != '_' && ch != '(')
        return 0;
    size_t at = r->pos;
    int rc = rp_sum(r, v);
    if (rc)
        return rc;
    bool neg = v->c < 0;
    for (int i = 0; i < AFF_TERMS; i++)
        neg = neg || v->k[i] < 0;
    if (neg)
        return rp_err(r, TD_ESCHEMA, at,
                      "a region bound must not be negative for any block "
                      "(a negative constant, block-id or scalar "
                      "coefficient)");
    *present = true;
    return 0;
}

/* Whether the buffer's elements lie in row-major order: no layout, or
 * one that canonicalizes to the row-major layout of its shape (TVM's
 * buffers carry theirs written out). */
static bool row_major(const td_buffer *b)
{
    td_layout rm, a, c;
    char s1[512], s2[512];
    if (!b->has_layout)
        return true;
    if (td__lay_row_major(b->shape, b->ndim, &rm) < 0 ||
        td__lay_canonicalize(&b->layout, &a) < 0 ||
        td__lay_canonicalize(&rm, &c) < 0)
        return false;
    if (td_layout_format(&a, s1, sizeof s1) >= sizeof s1 ||
        td_layout_format(&c, s2, sizeof s2) >= sizeof s2)
        return false;
    return strcmp(s1, s2) == 0;
}

/* The largest value of a bound over the launch's grid and the scalars'
 * ranges; with a grid extent given by name (unknown), the bound at block
 * 0.  A scalar without a range was refused before. */
static int64_t aff_max(const td_call *call, const rp_aff *v)
{
    int64_t m = v->c;
    for (int i = 0; i < 3; i++) {
        const td_launch_param *lp = &call->launch[TD_LAUNCH_BX + i];
        if (v->k[i] != 0 && lp->present && !lp->symbolic)
            m += v->k[i] * (lp->extent - 1);
    }
    for (int j = 0; j < TD_MAX_SCALARS && j < call->nscalars; j++)
        if (v->k[3 + j] != 0)
            m += v->k[3 + j] * (call->scalars[j].hi - 1);
    return m;
}

/* A bound that uses a scalar without a declared range, or whose range
 * reaches below 0: its bounds cannot be checked.  The index of the first
 * such scalar, -1 if none. */
static int aff_unchecked(const td_call *call, const rp_aff *v)
{
    for (int j = 0; j < TD_MAX_SCALARS && j < call->nscalars; j++)
        if (v->k[3 + j] != 0 &&
            (!call->scalars[j].has_range || call->scalars[j].lo < 0))
            return j;
    return -1;
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
    size_t sym_at = SIZE_MAX; /* the first bound with a block id */
    size_t dyn_at = SIZE_MAX; /* the first bound with a scalar */
    int nslices = 0;
    for (;;) {
        rp_ws(&r);
        size_t at = r.pos;
        rp_aff lo, hi;
        memset(&hi, 0, sizeof hi);
        bool has_start, has_stop = false, colon = false;
        int rc = rp_index(&r, &lo, &has_start);
        if (rc)
            return rc;
        rp_ws(&r);
        if (r.s[r.pos] == ':') {
            colon = true;
            r.pos++;
            rc = rp_index(&r, &hi, &has_stop);
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
        bool sym = aff_symbolic(&lo) || aff_symbolic(&hi);
        if (sym && colon && !has_stop)
            return rp_err(&r, TD_ESCHEMA, at,
                          "a slice whose start depends on the block ids needs "
                          "an end (its extent must be a constant)");
        if (sym && colon &&
            memcmp(hi.k, lo.k, sizeof lo.k) != 0)
            return rp_err(&r, TD_ESCHEMA, at,
                          "the extent of a slice must be a constant: its end "
                          "minus its start still depends on the block ids "
                          "or scalars");
        if (sym) {
            int u = aff_unchecked(c->call, &lo);
            if (u >= 0 && !c->call->scalars[u].has_range)
                return rp_err(&r, TD_ESCHEMA, at,
                              "the region's bounds cannot be checked: scalar "
                              "'%s' has no range (declare it: scalars: {%s: "
                              "{range: [LO, HI]}})",
                              c->call->scalars[u].name,
                              c->call->scalars[u].name);
            if (u >= 0)
                return rp_err(&r, TD_ESCHEMA, at,
                              "a region start must not be negative: scalar "
                              "'%s' may be %lld",
                              c->call->scalars[u].name,
                              (long long)c->call->scalars[u].lo);
        }
        if (d < b->ndim) {
            int64_t ext = b->shape[d];
            /* Bounds use the largest start over the grid; the extent is
             * the same for every block. */
            int64_t start = aff_max(c->call, &lo), stop;
            if (!colon) {
                if (start >= ext)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "index %lld out of bounds for dimension %d "
                                  "of extent %lld",
                                  (long long)start, d, (long long)ext);
                stop = start + 1;
            } else {
                stop = has_stop ? start + (hi.c - lo.c) : ext;
                if (stop > ext || start > ext)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "slice %lld:%lld out of bounds for "
                                  "dimension %d of extent %lld%s",
                                  (long long)start, (long long)stop, d,
                                  (long long)ext,
                                  aff_dynamic(&lo)
                                      ? " (at the scalars' largest values)"
                                  : sym ? " (at the grid's last block)"
                                        : "");
                if (stop <= start)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "empty slice %lld:%lld in dimension %d",
                                  (long long)start, (long long)stop, d);
            }
            for (int i = 0; i < 3; i++)
                if (lo.k[i] > ext)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "the coefficient %lld of %s is larger than "
                                  "dimension %d's extent %lld",
                                  (long long)lo.k[i], block_names[0][i], d,
                                  (long long)ext);
            reg.start[d] = lo.c;
            reg.extent[d] = stop - start;
            for (int i = 0; i < 3; i++)
                reg.block_coef[d][i] = lo.k[i];
            for (int j = 0; j < TD_MAX_SCALARS; j++) {
                reg.scalar_coef[d][j] = lo.k[3 + j];
                if (lo.k[3 + j] > ext)
                    return rp_err(&r, TD_ESCHEMA, at,
                                  "the coefficient %lld of %s is larger "
                                  "than dimension %d's extent %lld",
                                  (long long)lo.k[3 + j],
                                  c->call->scalars[j].name, d,
                                  (long long)ext);
            }
            if (sym && sym_at == SIZE_MAX)
                sym_at = at;
            if (aff_dynamic(&lo) && dyn_at == SIZE_MAX)
                dyn_at = at;
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
    if (dyn_at != SIZE_MAX && strcmp(c->call->op, "copy_async") != 0)
        return rp_err(&r, TD_ESCHEMA, dyn_at,
                      "a region start that depends on a scalar is supported "
                      "for op 'copy_async' only, not '%s'",
                      c->call->op);
    if (sym_at != SIZE_MAX) {
        /* What the variants can emit today: the offset of a row-major
         * global buffer of a copy, or of copy_async's (ldgsts reads only
         * global memory, through copy's loop), added to its 32-bit
         * index. */
        if (strcmp(c->call->op, "copy") != 0 &&
            strcmp(c->call->op, "copy_async") != 0)
            return rp_err(&r, TD_ESCHEMA, sym_at,
                          "a region start that depends on the block ids is "
                          "supported for ops 'copy' and 'copy_async' only, "
                          "not '%s'",
                          c->call->op);
        const char *on = dyn_at != SIZE_MAX ? "a scalar" : "the block ids";
        if (strcmp(b->scope, "global") != 0)
            return rp_err(&r, TD_ESCHEMA, sym_at,
                          "a region start that depends on %s needs a global "
                          "buffer; '%s' is %s",
                          on, b->name, b->scope);
        if (!row_major(b))
            return rp_err(&r, TD_ESCHEMA, sym_at,
                          "a region start that depends on %s needs a "
                          "row-major buffer; '%s' has another layout",
                          on, b->name);
    }
    *out = reg;
    return 0;
}

int td__cl_region(td__cl *c, const td_ynode *n, const char *what,
                  td_region *out)
{
    return td__cl_region_in(c, n, what, NULL, out);
}
