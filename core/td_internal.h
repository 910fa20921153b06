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

/* Fills a diagnostic (first error wins: does nothing if d->code != 0).
 * `source` may be NULL; otherwise line `line` of it becomes the source line.
 * Returns code, so callers can `return td__diag(...)`. */
int td__diag(td_diag *d, int code, const char *file, int line, int col,
             const char *source, size_t source_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;
int td__vdiag(td_diag *d, int code, const char *file, int line, int col,
              const char *source, size_t source_len, const char *fmt,
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
/* Appends s as a JSON string literal (quotes included). */
void td__buf_json_str(td_buf *b, const char *s);
/* Hands the text to the caller (malloc'd via td__malloc, NUL-terminated)
 * or returns the sticky error; the buffer is reset either way. */
int td__buf_take(td_buf *b, char **out);

#endif
