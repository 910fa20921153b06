/*
 * The core layer's internal helpers, shared by every layer above it (not
 * installed): allocation through the hook, diagnostics, file reading and
 * text buffers.  Internal non-static names are td__*.
 */
#ifndef TILEDISPATCH_TD_INTERNAL_H
#define TILEDISPATCH_TD_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "tiledispatch/td_alloc.h"
#include "tiledispatch/td_error.h"

/* All library allocations go through these, so that tests can replace the
 * allocator and fail the Nth allocation (td_set_allocator). */
void *td__malloc(size_t n);
void *td__calloc(size_t count, size_t size);
void *td__realloc(void *p, size_t n);
void td__free(void *p);
char *td__strdup(const char *s);
char *td__strndup(const char *s, size_t n);

/*
 * Raising a diagnostic.  Every error the library reports goes through one of
 * these three; each fills d (first error wins: nothing happens when
 * d->code != 0) and returns code, so callers can `return td__fail(...)`.
 *
 *   td__fail(d, code, file, fmt, ...)       no position; file may be NULL
 *   td__fail_at(d, code, where, fmt, ...)   at a position (TD_AT(file, line,
 *                                           col), or a td_where with the
 *                                           file's text, to quote the line)
 *   td__vfail_at(d, code, where, fmt, ap)   the same with a va_list, for
 *                                           wrappers that add context
 */
typedef struct td_where {
    const char *file; /* NULL: none */
    int line, col;    /* 1-based; 0: unknown */
    const char *text; /* the file's text, to quote line `line`; or NULL */
    size_t len;
} td_where;

#define TD_AT(file, line, col) ((td_where){(file), (line), (col), NULL, 0})

int td__fail(td_diag *d, int code, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int td__fail_at(td_diag *d, int code, td_where at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int td__vfail_at(td_diag *d, int code, td_where at, const char *fmt,
                 va_list ap);

/* Reads a whole file (at most max bytes) into a NUL-terminated buffer.
 * TD_EIO / TD_ELIMIT / TD_ENOMEM with a message in d. */
int td__read_file(const char *path, size_t max, char **out, size_t *len,
                  td_diag *d);

/* Bounded string copy that always terminates; returns strlen(src). */
size_t td__strlcpy(char *dst, const char *src, size_t cap);

/* Number of UTF-8 code points in s. */
size_t td__utf8_len(const char *s);

/* snprintf-style accumulation into a caller's fixed buffer: len counts the
 * full length the text needs, buf receives what fits (vsnprintf keeps it
 * NUL-terminated).  buf may be NULL with cap 0 to measure. */
typedef struct td_sbuf {
    char *buf;
    size_t cap;
    size_t len;
} td_sbuf;

void td__sbuf_printf(td_sbuf *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A growable text buffer with a size cap and a sticky error flag: after
 * the first failure every append is a no-op, so writers check once. */
typedef struct td_buf {
    char *data;
    size_t len;
    size_t cap;
    size_t limit; /* 0 = TD_BUF_DEFAULT_LIMIT */
    int err;      /* 0 or TD_ENOMEM / TD_ELIMIT */
} td_buf;

#define TD_BUF_DEFAULT_LIMIT (64u * 1024u * 1024u)

void td__buf_init(td_buf *b);
void td__buf_free(td_buf *b);
void td__buf_append(td_buf *b, const char *s, size_t n);
void td__buf_puts(td_buf *b, const char *s);
void td__buf_printf(td_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void td__buf_vprintf(td_buf *b, const char *fmt, va_list ap);
/* Appends v in decimal, as "%lld" would, without printf's cost: the
 * program generator writes tables of hundreds of thousands of integers. */
void td__buf_int(td_buf *b, long long v);
/* Appends s as a JSON string literal (quotes included). */
void td__buf_json_str(td_buf *b, const char *s);
/* Hands the text to the caller (malloc'd via td__malloc, NUL-terminated)
 * or returns the sticky error; the buffer is reset either way. */
int td__buf_take(td_buf *b, char **out);

#endif
