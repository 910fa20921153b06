/*
 * The TileLayout notation: its parser (td_layout_parse, which the call
 * loader runs on a buffer's `layout`) and its canonical printer
 * (td_layout_format).  The operations on the layouts it yields are in
 * layout.c.
 *
 *   layout   := terms | compose
 *   terms    := term ('+' term)*
 *   term     := 'S' '[' spec ']' | 'R' '[' spec ']' | offset | swizzle
 *   spec     := shape [':' strides]
 *   shape    := INT | '(' INT (',' INT)* ','? ')' | INT (',' INT)+
 *   strides  := stride | '(' stride (',' stride)* ','? ')' | stride (',' stride)+
 *   stride   := INT | INT '@' AXIS          (a bare INT is on axis m)
 *   offset   := INT '@' AXIS | INT
 *   swizzle  := 'Swizzle' '(' INT ',' INT ',' INT ')'          (b, m, s)
 *   compose  := 'ComposeLayout' '(' INT ',' INT ',' INT ','
 *               'TileLayout' '(' terms ')' [',' 'swizzle_inner' '=' BOOL] ')'
 *
 * `Swizzle(b, m, s)` is ours (CuTe's Swizzle<B, M, S>): the memory offset
 * o that the rest of the layout gives becomes
 * o ^ (((o >> (m + s)) & (2^b - 1)) << m), in elements.  `compose` is how
 * TVM prints a swizzled layout, ComposeLayout(per_element, swizzle_len,
 * atom_len, TileLayout(X)); it is read as X + Swizzle(swizzle_len,
 * per_element, atom_len), which is also how it prints.  TVM's
 * `swizzle_inner=False` (the swizzle taken on the units of 2^per_element
 * elements the other way round) is refused.  A `T.` before ComposeLayout,
 * TileLayout, S and R (TVM's printer writes it) is skipped.  A swizzled
 * layout lays out shared memory: its other terms may use the memory axis m
 * only, and b <= s (TVM's well-formedness: the XORed bits do not overlap
 * the bits they come from).
 *
 * Whitespace may appear between any two tokens.  Every error names the
 * 1-based column of the offending character within the text; the caller adds
 * its own line and column base.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"

/* The largest integer the notation accepts: extents are bounded by
 * TD_MAX_EXTENT anyway, and keeping strides and offsets in the same range
 * means products of two of them cannot overflow int64. */
#define LAY_INT_MAX TD_MAX_EXTENT

typedef struct lay_parser {
    const char *text;
    size_t pos;
    td_diag *diag;
} lay_parser;

static int lay_error(lay_parser *p, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int lay_error(lay_parser *p, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    td__vfail_at(p->diag, TD_EPARSE, TD_AT(NULL, 0, (int)at + 1), fmt, ap);
    va_end(ap);
    return TD_EPARSE;
}

static void lay_skip_ws(lay_parser *p)
{
    while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
           p->text[p->pos] == '\n' || p->text[p->pos] == '\r')
        p->pos++;
}

static char lay_peek(lay_parser *p)
{
    lay_skip_ws(p);
    return p->text[p->pos];
}

/* Describes the character at the cursor for "expected X, found Y". */
static int lay_expected(lay_parser *p, const char *what)
{
    char c = lay_peek(p);
    if (c == '\0')
        return lay_error(p, p->pos, "expected %s, found end of layout", what);
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
        return lay_error(p, p->pos, "expected %s, found byte 0x%02x", what,
                         (unsigned)(unsigned char)c);
    return lay_error(p, p->pos, "expected %s, found '%c'", what, c);
}

static int lay_expect(lay_parser *p, char c, const char *what)
{
    if (lay_peek(p) != c)
        return lay_expected(p, what);
    p->pos++;
    return 0;
}

static bool lay_is_ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool lay_is_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int lay_int(lay_parser *p, int64_t *out)
{
    lay_skip_ws(p);
    size_t start = p->pos;
    if (!isdigit((unsigned char)p->text[p->pos])) {
        if (p->text[p->pos] == '-')
            return lay_error(p, start,
                             "negative numbers are not allowed in a layout");
        return lay_expected(p, "an integer");
    }
    int64_t v = 0;
    while (isdigit((unsigned char)p->text[p->pos])) {
        int d = p->text[p->pos] - '0';
        if (v > (LAY_INT_MAX - d) / 10) {
            return lay_error(p, start,
                             "integer too large in layout (max %lld)",
                             (long long)LAY_INT_MAX);
        }
        v = v * 10 + d;
        p->pos++;
    }
    *out = v;
    return 0;
}

/* Parses an optional "@axis" suffix; without one the axis is m. */
static int lay_axis_suffix(lay_parser *p, td_axis *axis)
{
    *axis = TD_AXIS_M;
    if (lay_peek(p) != '@')
        return 0;
    p->pos++;
    lay_skip_ws(p);
    size_t start = p->pos;
    if (!lay_is_ident_start(p->text[p->pos]))
        return lay_expected(p, "an axis name after '@'");
    while (lay_is_ident_char(p->text[p->pos]))
        p->pos++;
    size_t n = p->pos - start;
    char name[TD_NAME_MAX];
    if (n >= sizeof name)
        return lay_error(p, start, "unknown layout axis '%.*s...'",
                         (int)(sizeof name - 1), p->text + start);
    memcpy(name, p->text + start, n);
    name[n] = '\0';
    char hint[192];
    if (td_axis_parse(name, axis) != 0)
        return lay_error(p, start, "unknown layout axis '%s'%s", name,
                         td__axis_hint(hint, sizeof hint, name));
    return 0;
}

/* Shape or stride list, in any of the three spellings.  `strides` selects
 * the element grammar; `count` returns the number of elements and `at` the
 * column of each for messages. */
static int lay_list(lay_parser *p, bool strides, int64_t *vals, td_axis *axes,
                    size_t *at, int *count)
{
    int n = 0;
    bool paren = false;
    if (lay_peek(p) == '(') {
        paren = true;
        p->pos++;
    }
    for (;;) {
        lay_skip_ws(p);
        if (n >= TD_MAX_LAYOUT_ITERS)
            return lay_error(p, p->pos, "too many layout iters (max %d)",
                             TD_MAX_LAYOUT_ITERS);
        at[n] = p->pos;
        int rc = lay_int(p, &vals[n]);
        if (rc)
            return rc;
        if (strides) {
            rc = lay_axis_suffix(p, &axes[n]);
            if (rc)
                return rc;
        }
        n++;
        if (lay_peek(p) != ',')
            break;
        p->pos++;
        /* A trailing comma is allowed inside parentheses: "(4,)". */
        if (paren && lay_peek(p) == ')')
            break;
    }
    if (paren) {
        int rc = lay_expect(p, ')', "',' or ')'");
        if (rc)
            return rc;
    }
    *count = n;
    return 0;
}

/* S[...] or R[...]: fills iters (row-major on m when no strides given). */
static int lay_spec(lay_parser *p, td_iter *iters, int *niters)
{
    int64_t ext[TD_MAX_LAYOUT_ITERS], str[TD_MAX_LAYOUT_ITERS];
    td_axis ax[TD_MAX_LAYOUT_ITERS];
    size_t ext_at[TD_MAX_LAYOUT_ITERS], str_at[TD_MAX_LAYOUT_ITERS];
    int next = 0, nstr = 0;

    int rc = lay_expect(p, '[', "'['");
    if (rc)
        return rc;
    rc = lay_list(p, false, ext, NULL, ext_at, &next);
    if (rc)
        return rc;
    for (int i = 0; i < next; i++)
        if (ext[i] <= 0)
            return lay_error(p, ext_at[i], "layout extent must be positive");
    bool have_strides = lay_peek(p) == ':';
    if (have_strides) {
        p->pos++;
        size_t str_start = (lay_skip_ws(p), p->pos);
        rc = lay_list(p, true, str, ax, str_at, &nstr);
        if (rc)
            return rc;
        if (nstr != next)
            return lay_error(p, str_start,
                             "layout has %d extent%s but %d stride%s", next,
                             next == 1 ? "" : "s", nstr, nstr == 1 ? "" : "s");
    } else {
        /* Extents only: row-major on the memory axis.  Every implied
         * stride must stay within LAY_INT_MAX like a written one, or the
         * canonical text (which writes the strides) would not parse again;
         * the running product is checked before it grows. */
        int64_t s = 1;
        for (int i = next - 1; i >= 0; i--) {
            str[i] = s;
            ax[i] = TD_AXIS_M;
            if (i > 0 && s > LAY_INT_MAX / ext[i])
                return lay_error(p, ext_at[0], "layout is too large");
            s *= ext[i];
        }
    }
    rc = lay_expect(p, ']', have_strides ? "']'" : "':' or ']'");
    if (rc)
        return rc;
    for (int i = 0; i < next; i++) {
        iters[i].extent = ext[i];
        iters[i].stride = str[i];
        iters[i].axis = ax[i];
    }
    *niters = next;
    return 0;
}

/* Skips TVM's "T." module prefix before a name. */
static void lay_skip_module(lay_parser *p)
{
    lay_skip_ws(p);
    if (p->text[p->pos] == 'T' && p->text[p->pos + 1] == '.' &&
        lay_is_ident_start(p->text[p->pos + 2]))
        p->pos += 2;
}

/* Whether the identifier at the cursor (after an optional "T.") is `word`;
 * the cursor moves past it when it is. */
static bool lay_word(lay_parser *p, const char *word)
{
    size_t save = p->pos;
    lay_skip_module(p);
    size_t n = strlen(word);
    if (strncmp(p->text + p->pos, word, n) == 0 &&
        !lay_is_ident_char(p->text[p->pos + n])) {
        p->pos += n;
        return true;
    }
    p->pos = save;
    return false;
}

/* One swizzle argument: an integer in [0, 31]. */
static int lay_swizzle_arg(lay_parser *p, const char *what, int *out)
{
    lay_skip_ws(p);
    size_t at = p->pos;
    int64_t v = 0;
    int rc = lay_int(p, &v);
    if (rc)
        return rc;
    if (v > 31)
        return lay_error(p, at, "swizzle %s must be at most 31, got %lld",
                         what, (long long)v);
    *out = (int)v;
    return 0;
}

/* The swizzle's own checks once b and s are known (at: its column). */
static int lay_swizzle_check(lay_parser *p, size_t at, const td_layout *l)
{
    if (l->swizzle_bits[0] > l->swizzle_bits[2])
        return lay_error(p, at,
                         "swizzle bits %d exceed its shift %d: the XORed "
                         "bits would overlap the bits they come from",
                         l->swizzle_bits[0], l->swizzle_bits[2]);
    return 0;
}

/* Terms up to `end` ('\0' or ')'), added into *l. */
static int lay_terms(lay_parser *p, td_layout *l, char end, size_t *swz_at)
{
    bool have_shard = l->nshard > 0;
    size_t first = (lay_skip_ws(p), p->pos);
    int rc;

    if (lay_peek(p) == end)
        return end == '\0' ? lay_error(p, p->pos, "empty layout")
                           : lay_expected(p, "S[...]");
    for (;;) {
        lay_skip_module(p);
        size_t term_at = p->pos;
        const char *t = p->text + p->pos;
        char c = *t;
        size_t idn = 0;
        while (lay_is_ident_char(t[idn]))
            idn++;
        if (c == 'S' && idn == 1) {
            if (have_shard)
                return lay_error(p, term_at,
                                 "layout has more than one shard S[...]");
            p->pos++;
            rc = lay_spec(p, l->shard, &l->nshard);
            if (rc)
                return rc;
            have_shard = true;
        } else if (c == 'R' && idn == 1) {
            /* Zeroed so that the padding of the copied iters is too: equal
             * layouts then compare equal byte for byte. */
            td_iter it[TD_MAX_LAYOUT_ITERS];
            memset(it, 0, sizeof it);
            int n = 0;
            p->pos++;
            rc = lay_spec(p, it, &n);
            if (rc)
                return rc;
            if (l->nrep + n > TD_MAX_LAYOUT_ITERS)
                return lay_error(p, term_at, "too many layout iters (max %d)",
                                 TD_MAX_LAYOUT_ITERS);
            memcpy(&l->rep[l->nrep], it, (size_t)n * sizeof it[0]);
            l->nrep += n;
        } else if (idn == 7 && strncmp(t, "Swizzle", 7) == 0) {
            if (l->swizzle || end == ')')
                return lay_error(p, term_at,
                                 end == ')'
                                     ? "Swizzle(...) inside ComposeLayout's "
                                       "TileLayout: the ComposeLayout is "
                                       "the swizzle"
                                     : "layout has more than one Swizzle(...)");
            p->pos += 7;
            static const char *const what[3] = {"bits", "base", "shift"};
            rc = lay_expect(p, '(', "'('");
            for (int i = 0; i < 3 && rc == 0; i++) {
                if (i > 0)
                    rc = lay_expect(p, ',', "','");
                if (rc == 0)
                    rc = lay_swizzle_arg(p, what[i], &l->swizzle_bits[i]);
            }
            if (rc == 0)
                rc = lay_expect(p, ')', "')'");
            if (rc == 0)
                rc = lay_swizzle_check(p, term_at, l);
            if (rc)
                return rc;
            l->swizzle = true;
            *swz_at = term_at;
        } else if (idn == 13 && strncmp(t, "ComposeLayout", 13) == 0) {
            return lay_error(p, term_at,
                             "ComposeLayout(...) must be the whole layout");
        } else if (isdigit((unsigned char)c) || c == '-') {
            int64_t v;
            td_axis ax;
            rc = lay_int(p, &v);
            if (rc == 0)
                rc = lay_axis_suffix(p, &ax);
            if (rc)
                return rc;
            /* Both terms are at most LAY_INT_MAX, so only a long chain of
             * offsets can grow large; bound the sum the same way. */
            if (l->offset[ax] > LAY_INT_MAX - v)
                return lay_error(p, term_at, "layout offset too large");
            l->offset[ax] += v;
        } else {
            return lay_expected(p, "S[...], R[...], an offset or Swizzle(...)");
        }
        if (lay_peek(p) == end)
            break;
        if (lay_peek(p) != '+')
            return lay_expected(p, end == '\0' ? "'+' or end of layout"
                                               : "'+' or ')'");
        p->pos++;
    }
    if (!have_shard && (end == ')' || !l->swizzle))
        return lay_error(p, first, "layout needs a shard S[...]");
    return 0;
}

/* ComposeLayout(per_element, swizzle_len, atom_len, TileLayout(...)
 * [, swizzle_inner=True]), the cursor after "ComposeLayout". */
static int lay_compose(lay_parser *p, td_layout *l, size_t at)
{
    int pe = 0, len = 0, atom = 0;
    int rc = lay_expect(p, '(', "'('");
    if (rc == 0)
        rc = lay_swizzle_arg(p, "per_element", &pe);
    if (rc == 0)
        rc = lay_expect(p, ',', "','");
    if (rc == 0)
        rc = lay_swizzle_arg(p, "swizzle_len", &len);
    if (rc == 0)
        rc = lay_expect(p, ',', "','");
    if (rc == 0)
        rc = lay_swizzle_arg(p, "atom_len", &atom);
    if (rc == 0)
        rc = lay_expect(p, ',', "','");
    if (rc)
        return rc;
    if (len > atom)
        return lay_error(p, at,
                         "ComposeLayout swizzle_len %d exceeds atom_len %d: "
                         "the XORed bits would overlap the bits they come "
                         "from",
                         len, atom);
    if (!lay_word(p, "TileLayout"))
        return lay_expected(p, "TileLayout(...)");
    size_t dummy = 0;
    rc = lay_expect(p, '(', "'('");
    if (rc == 0)
        rc = lay_terms(p, l, ')', &dummy);
    if (rc == 0)
        rc = lay_expect(p, ')', "')'");
    if (rc)
        return rc;
    if (lay_peek(p) == ',') {
        p->pos++;
        lay_skip_ws(p);
        if (!lay_word(p, "swizzle_inner"))
            return lay_expected(p, "swizzle_inner=");
        rc = lay_expect(p, '=', "'='");
        if (rc)
            return rc;
        lay_skip_ws(p);
        size_t vat = p->pos;
        if (lay_word(p, "False"))
            return lay_error(p, vat,
                             "swizzle_inner=False is not supported (only "
                             "the swizzle of the tile layout's offsets, "
                             "TVM's default swizzle_inner=True)");
        if (!lay_word(p, "True"))
            return lay_expected(p, "True or False");
    }
    rc = lay_expect(p, ')', "',' or ')'");
    if (rc)
        return rc;
    l->swizzle = true;
    l->swizzle_bits[0] = len;
    l->swizzle_bits[1] = pe;
    l->swizzle_bits[2] = atom;
    return 0;
}

/* A swizzle permutes memory offsets: every other term must be on m. */
static int lay_swizzle_memory(lay_parser *p, const td_layout *l, size_t at)
{
    td_axis bad = TD_AXIS_M;
    for (int i = 0; i < l->nshard && bad == TD_AXIS_M; i++)
        bad = l->shard[i].axis;
    for (int i = 0; i < l->nrep && bad == TD_AXIS_M; i++)
        bad = l->rep[i].axis;
    for (int a = 0; a < TD_AXIS_COUNT && bad == TD_AXIS_M; a++)
        if (l->offset[a] != 0)
            bad = (td_axis)a;
    if (bad == TD_AXIS_M)
        return 0;
    return lay_error(p, at,
                     "a swizzled layout lays out shared memory: its terms "
                     "may use the memory axis m only, found %s",
                     td_axis_name(bad));
}

int td_layout_parse(const char *text, td_layout *out, td_diag *diag)
{
    lay_parser p = {text ? text : "", 0, diag};
    td_layout l;
    memset(&l, 0, sizeof l);
    size_t swz_at = 0;
    int rc;

    if (lay_peek(&p) == '\0')
        return lay_error(&p, p.pos, "empty layout");
    lay_skip_ws(&p);
    size_t at = p.pos;
    if (lay_word(&p, "ComposeLayout")) {
        rc = lay_compose(&p, &l, at);
        if (rc == 0 && lay_peek(&p) != '\0')
            rc = lay_expected(&p, "end of layout");
        swz_at = at;
    } else {
        rc = lay_terms(&p, &l, '\0', &swz_at);
    }
    if (rc == 0 && l.swizzle)
        rc = lay_swizzle_memory(&p, &l, swz_at);
    if (rc)
        return rc;
    if (out != NULL)
        *out = l;
    return 0;
}

/* ---- printing ----------------------------------------------------------- */

/* snprintf-style accumulation: counts the full length, writes what fits. */
static void lay_print_stride(td_sbuf *o, const td_iter *it)
{
    if (it->axis == TD_AXIS_M)
        td__sbuf_printf(o, "%lld", (long long)it->stride);
    else
        td__sbuf_printf(o, "%lld@%s", (long long)it->stride, td_axis_name(it->axis));
}

/* TVM's spelling of a stride: 4 or 4 @ Axis.laneid. */
static void lay_print_stride_tvm(td_sbuf *o, const td_iter *it)
{
    if (it->axis == TD_AXIS_M)
        td__sbuf_printf(o, "%lld", (long long)it->stride);
    else
        td__sbuf_printf(o, "%lld @ Axis.%s", (long long)it->stride,
                        td_axis_name(it->axis));
}

/* S[(2, 8) : (2, 4@laneid)] in our notation; T.S[(2, 8):(2, 4 @ Axis.laneid)]
 * as TVM prints it (tvm). */
static void lay_print_spec_as(td_sbuf *o, char kind, const td_iter *it, int n,
                              bool tvm)
{
    const char *colon = tvm ? ":" : " : ";
    void (*stride)(td_sbuf *, const td_iter *) =
        tvm ? lay_print_stride_tvm : lay_print_stride;

    td__sbuf_printf(o, "%s%c[", tvm ? "T." : "", kind);
    if (n == 1) {
        td__sbuf_printf(o, "%lld%s", (long long)it[0].extent, colon);
        stride(o, &it[0]);
    } else {
        td__sbuf_printf(o, "(");
        for (int i = 0; i < n; i++)
            td__sbuf_printf(o, "%s%lld", i ? ", " : "", (long long)it[i].extent);
        td__sbuf_printf(o, ")%s(", colon);
        for (int i = 0; i < n; i++) {
            if (i)
                td__sbuf_printf(o, ", ");
            stride(o, &it[i]);
        }
        td__sbuf_printf(o, ")");
    }
    td__sbuf_printf(o, "]");
}

static void lay_print_spec(td_sbuf *o, char kind, const td_iter *it, int n)
{
    lay_print_spec_as(o, kind, it, n, false);
}

size_t td__lay_format_tvm(const td_layout *l, char *buf, size_t cap)
{
    td_sbuf o = {buf, cap, 0};
    const char *sep = "";
    int noff = 0, k = 0;

    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    td__sbuf_printf(&o, "T.TileLayout(");
    if (l->nshard > 0) {
        lay_print_spec_as(&o, 'S', l->shard, l->nshard, true);
        sep = " + ";
    }
    if (l->nrep > 0) {
        td__sbuf_printf(&o, "%s", sep);
        lay_print_spec_as(&o, 'R', l->rep, l->nrep, true);
        sep = " + ";
    }
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        noff += l->offset[a] != 0;
    if (noff > 0)
        td__sbuf_printf(&o, "%s%s", sep, noff > 1 ? "(" : "");
    /* Thread axes first, then the memory offset (as TVM prints one
     * offset map; the order of several is TVM's map order, unspecified). */
    for (int i = 1; i <= TD_AXIS_COUNT; i++) {
        int a = i % TD_AXIS_COUNT;

        if (l->offset[a] == 0)
            continue;
        if (a == TD_AXIS_M)
            td__sbuf_printf(&o, "%s%lld", k++ ? " + " : "",
                            (long long)l->offset[a]);
        else
            td__sbuf_printf(&o, "%s%lld @ Axis.%s", k++ ? " + " : "",
                            (long long)l->offset[a], td_axis_name((td_axis)a));
    }
    td__sbuf_printf(&o, "%s)", noff > 1 ? ")" : "");
    return o.len;
}

size_t td_layout_format(const td_layout *l, char *buf, size_t cap)
{
    td_sbuf o = {buf, cap, 0};
    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    const char *sep = "";
    if (l->nshard > 0) {
        lay_print_spec(&o, 'S', l->shard, l->nshard);
        sep = " + ";
    }
    if (l->nrep > 0) {
        td__sbuf_printf(&o, "%s", sep);
        lay_print_spec(&o, 'R', l->rep, l->nrep);
        sep = " + ";
    }
    for (int a = 0; a < TD_AXIS_COUNT; a++) {
        if (l->offset[a] == 0)
            continue;
        if (a == TD_AXIS_M)
            td__sbuf_printf(&o, "%s%lld", sep, (long long)l->offset[a]);
        else
            td__sbuf_printf(&o, "%s%lld@%s", sep, (long long)l->offset[a],
                       td_axis_name((td_axis)a));
        sep = " + ";
    }
    if (l->swizzle)
        td__sbuf_printf(&o, "%sSwizzle(%d, %d, %d)", sep, l->swizzle_bits[0],
                   l->swizzle_bits[1], l->swizzle_bits[2]);
    return o.len;
}
