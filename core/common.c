/*
 * The bottom layer's plumbing: the version, the allocator hooks, error
 * names, diagnostics, file reading and the text buffers.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "td_internal.h"
#include "tiledispatch/td_version.h"

/* ---- version ------------------------------------------------------------ */

const char *td_version(void)
{
    return TD_VERSION_STRING;
}

int td_version_number(void)
{
    return TD_VERSION_NUMBER;
}

/* ---- allocator ---------------------------------------------------------- */

static void *default_malloc(size_t n, void *user)
{
    (void)user;
    return malloc(n);
}

static void *default_realloc(void *p, size_t n, void *user)
{
    (void)user;
    return realloc(p, n);
}

static void default_free(void *p, void *user)
{
    (void)user;
    free(p);
}

static td_allocator g_alloc = {default_malloc, default_realloc, default_free,
                               NULL};

void td_set_allocator(const td_allocator *a)
{
    if (a == NULL) {
        g_alloc.malloc_fn = default_malloc;
        g_alloc.realloc_fn = default_realloc;
        g_alloc.free_fn = default_free;
        g_alloc.user = NULL;
    } else {
        g_alloc = *a;
    }
}

void *td__malloc(size_t n)
{
    return g_alloc.malloc_fn(n ? n : 1, g_alloc.user);
}

void *td__calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    void *p = td__malloc(count * size);
    if (p != NULL)
        memset(p, 0, count * size);
    return p;
}

void *td__realloc(void *p, size_t n)
{
    return g_alloc.realloc_fn(p, n ? n : 1, g_alloc.user);
}

void td__free(void *p)
{
    if (p != NULL)
        g_alloc.free_fn(p, g_alloc.user);
}

void td_free(void *p)
{
    td__free(p);
}

char *td__strndup(const char *s, size_t n)
{
    char *d = td__malloc(n + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *td__strdup(const char *s)
{
    return td__strndup(s, strlen(s));
}

size_t td__strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = strlen(src);
    if (cap > 0) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(dst, src, k);
        dst[k] = '\0';
    }
    return n;
}

size_t td__utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

/* ---- errors ------------------------------------------------------------- */

const char *td_strerror(int err)
{
    switch (err) {
#define TD__ERR_DESC(name, val, input, desc)                                          \
    case val:                                                                  \
        return desc;
        TD_ERRNO_MAP(TD__ERR_DESC)
#undef TD__ERR_DESC
    }
    return "unknown error";
}

const char *td_err_name(int err)
{
    switch (err) {
#define TD__ERR_NAME(name, val, input, desc)                                          \
    case val:                                                                  \
        return "TD_" #name;
        TD_ERRNO_MAP(TD__ERR_NAME)
#undef TD__ERR_NAME
    }
    return "TD_EUNKNOWN";
}

int td_err_is_input(int err)
{
    switch (err) {
#define TD__ERR_INPUT(name, val, input, desc)                                  \
    case val:                                                                  \
        return input;
        TD_ERRNO_MAP(TD__ERR_INPUT)
#undef TD__ERR_INPUT
    }
    return 0;
}

/* ---- diagnostics -------------------------------------------------------- */

void td_diag_clear(td_diag *d)
{
    if (d != NULL)
        memset(d, 0, sizeof *d);
}

/* Copies the line that starts at p (up to its line break or end) into
 * d->source_line, cut to fit. */
static void quote_line(td_diag *d, const char *p, const char *end)
{
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r')
        e++;
    size_t n = (size_t)(e - p);
    if (n >= sizeof d->source_line)
        n = sizeof d->source_line - 1;
    memcpy(d->source_line, p, n);
    d->source_line[n] = '\0';
    /* Control characters would garble the caret line; show them as '?'. */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)d->source_line[i] < 0x20 &&
            d->source_line[i] != '\t')
            d->source_line[i] = '?';
}

int td__vfail_at(td_diag *d, int code, td_where at, const char *fmt,
                 va_list ap)
{
    const char *file = at.file, *source = at.text;
    int line = at.line, col = at.col;
    size_t source_len = at.len;
    if (d == NULL || d->code != 0)
        return code;
    d->code = code;
    td__strlcpy(d->file, file ? file : "", sizeof d->file);
    d->line = line;
    d->col = col;
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    d->source_line[0] = '\0';
    if (source != NULL && line > 0) {
        /* Find line `line` (1-based) of the source text.  A position past
         * the end (libyaml reports some errors on the line after a last
         * line without a newline) is moved to the end of the text, so the
         * caret points at something that exists. */
        const char *p = source, *end = source + source_len;
        const char *last = source;
        int l = 1;
        for (; l < line && p < end; p++)
            if (*p == '\n') {
                l++;
                last = p + 1;
            }
        /* The empty "line" after a final newline counts as past the end
         * too: libyaml reports unclosed flow collections there. */
        if (l == line && p >= end && l > 1 && source_len > 0) {
            l--;
            last = source;
            for (const char *q = source; q + 1 < end; q++)
                if (*q == '\n')
                    last = q + 1;
        }
        if (l < line) {
            p = last;
            const char *e = p;
            while (e < end && *e != '\n')
                e++;
            d->line = l;
            d->col = (int)(e - p) + 1;
        }
        quote_line(d, p, end);
    }
    return code;
}

int td__fail_at(td_diag *d, int code, td_where at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    td__vfail_at(d, code, at, fmt, ap);
    va_end(ap);
    return code;
}

int td__fail(td_diag *d, int code, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    td__vfail_at(d, code, TD_AT(file, 0, 0), fmt, ap);
    va_end(ap);
    return code;
}

/* ---- did you mean ---------------------------------------------------- */

/* Optimal string alignment distance of a and b (names are short: longer
 * ones are never close). */
static size_t edit_distance(const char *a, const char *b)
{
    enum { MAXN = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAXN || lb >= MAXN)
        return MAXN;
    size_t d[MAXN + 1][MAXN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *td_suggest(const char *name, const char *const *cands, size_t n)
{
    if (name == NULL || cands == NULL)
        return NULL;
    size_t len = strlen(name);
    const char *best = NULL;
    size_t bestd = 3; /* at most 2 edits */
    for (size_t i = 0; i < n; i++) {
        if (cands[i] == NULL || strcmp(cands[i], name) == 0)
            continue;
        size_t dist = edit_distance(name, cands[i]);
        if (dist < bestd && 2 * dist < len) {
            bestd = dist;
            best = cands[i];
        }
    }
    return best;
}

size_t td_diag_format(const td_diag *d, char *buf, size_t cap)
{
    td_buf b;
    td__buf_init(&b);
    if (d->file[0]) {
        td__buf_puts(&b, d->file);
        if (d->line > 0) {
            td__buf_printf(&b, ":%d", d->line);
            if (d->col > 0)
                td__buf_printf(&b, ":%d", d->col);
        }
        td__buf_puts(&b, ": ");
    }
    td__buf_printf(&b, "error: %s\n", d->msg);
    if (d->source_line[0] && d->line > 0) {
        td__buf_printf(&b, "  %s\n  ", d->source_line);
        /* The caret goes under column col, counted in code points like
         * every column; tabs are kept so it lines up. */
        const char *s = d->source_line;
        for (int i = 1; i < d->col && *s; i++) {
            td__buf_append(&b, *s == '\t' ? "\t" : " ", 1);
            s++;
            while (((unsigned char)*s & 0xC0) == 0x80)
                s++;
        }
        td__buf_puts(&b, "^\n");
    }
    size_t need = b.len;
    if (cap > 0) {
        if (b.err || b.data == NULL) {
            td__strlcpy(buf, d->msg, cap);
        } else {
            size_t k = need < cap - 1 ? need : cap - 1;
            memcpy(buf, b.data, k);
            buf[k] = '\0';
        }
    }
    td__buf_free(&b);
    return need;
}

int td_diag_fill_source_line(td_diag *d, const char *text, size_t len)
{
    if (d == NULL || d->line <= 0)
        return TD_EINVAL;
    if (d->source_line[0] != '\0')
        return 0;
    if (text != NULL) {
        const char *p = text, *end = text + len;
        int l = 1;
        for (; l < d->line && p < end; p++)
            if (*p == '\n')
                l++;
        if (l < d->line || (p == end && d->line > 1))
            return TD_ENOENT;
        quote_line(d, p, end);
        return 0;
    }
    if (d->file[0] == '\0')
        return TD_EINVAL;
    FILE *f = fopen(d->file, "r");
    if (f == NULL)
        return TD_EIO;
    /* Line by line, so a file of any size costs one line of memory; the
     * rest of a line longer than the field is skipped. */
    char line[sizeof d->source_line];
    int n = 0, rc = TD_ENOENT;
    while (fgets(line, sizeof line, f) != NULL) {
        size_t got = strlen(line);
        bool whole = got > 0 && line[got - 1] == '\n';
        if (++n == d->line) {
            quote_line(d, line, line + got);
            rc = 0;
            break;
        }
        while (!whole && fgets(line, sizeof line, f) != NULL) {
            got = strlen(line);
            whole = got > 0 && line[got - 1] == '\n';
        }
    }
    fclose(f);
    return rc;
}

int td__read_file(const char *path, size_t max, char **out, size_t *len,
                  td_diag *d)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return td__fail(d, TD_EIO, path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return td__fail(d, TD_EIO, path, "is a directory, not a file");
    }
    char *data = td__malloc(max + 2);
    if (data == NULL) {
        fclose(f);
        return td__fail(d, TD_ENOMEM, path, "out of memory");
    }
    size_t n = fread(data, 1, max + 1, f);
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        td__free(data);
        return td__fail(d, TD_EIO, path, "read error");
    }
    if (n > max) {
        td__free(data);
        return td__fail_at(d, TD_ELIMIT, TD_AT(path, 1, 1),
                           "file is larger than the limit of %zu bytes", max);
    }
    data[n] = '\0';
    *out = data;
    *len = n;
    return 0;
}

/* ---- fixed-buffer accumulation ------------------------------------------ */

void td__sbuf_printf(td_sbuf *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = NULL;
    size_t room = 0;
    if (o->buf != NULL && o->len < o->cap) {
        dst = o->buf + o->len;
        room = o->cap - o->len;
    }
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

/* ---- text buffer -------------------------------------------------------- */

void td__buf_init(td_buf *b)
{
    memset(b, 0, sizeof *b);
}

void td__buf_free(td_buf *b)
{
    td__free(b->data);
    memset(b, 0, sizeof *b);
}

static int buf_reserve(td_buf *b, size_t extra)
{
    size_t limit = b->limit ? b->limit : TD_BUF_DEFAULT_LIMIT;
    if (b->err)
        return -1;
    if (extra > limit || b->len > limit - extra) {
        b->err = TD_ELIMIT;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < need)
        ncap *= 2;
    char *p = td__realloc(b->data, ncap);
    if (p == NULL) {
        b->err = TD_ENOMEM;
        return -1;
    }
    b->data = p;
    b->cap = ncap;
    return 0;
}

void td__buf_append(td_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void td__buf_puts(td_buf *b, const char *s)
{
    td__buf_append(b, s, strlen(s));
}

void td__buf_int(td_buf *b, long long v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    /* The magnitude as unsigned, so LLONG_MIN has one too. */
    unsigned long long m = v < 0 ? 0ull - (unsigned long long)v
                                 : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + m % 10u);
        m /= 10u;
    } while (m != 0);
    if (v < 0)
        tmp[--i] = '-';
    td__buf_append(b, tmp + i, sizeof tmp - i);
}

void td__buf_vprintf(td_buf *b, const char *fmt, va_list ap)
{
    char small[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        if (!b->err)
            b->err = TD_EINTERNAL;
        return;
    }
    if ((size_t)n < sizeof small) {
        td__buf_append(b, small, (size_t)n);
    } else if (buf_reserve(b, (size_t)n) == 0) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void td__buf_printf(td_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    td__buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void td__buf_json_str(td_buf *b, const char *s)
{
    td__buf_append(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': td__buf_puts(b, "\\\""); break;
        case '\\': td__buf_puts(b, "\\\\"); break;
        case '\n': td__buf_puts(b, "\\n"); break;
        case '\t': td__buf_puts(b, "\\t"); break;
        case '\r': td__buf_puts(b, "\\r"); break;
        default:
            if (c < 0x20)
                td__buf_printf(b, "\\u%04x", c);
            else
                td__buf_append(b, (const char *)&c, 1);
        }
    }
    td__buf_append(b, "\"", 1);
}

int td__buf_take(td_buf *b, char **out)
{
    *out = NULL;
    if (!b->err && b->data == NULL)
        td__buf_append(b, "", 0);
    if (!b->err && b->data == NULL && buf_reserve(b, 0) == 0)
        b->data[0] = '\0';
    if (b->err) {
        int e = b->err;
        td__buf_free(b);
        return e;
    }
    *out = b->data;
    b->data = NULL;
    td__buf_free(b);
    return 0;
}
