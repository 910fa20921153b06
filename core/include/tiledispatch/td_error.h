/*
 * tiledispatch: error codes and diagnostics.
 *
 * Every public function that can fail returns int: 0 on success, a negative
 * TD_E* code on failure.  Human text goes into a td_diag the caller passes in;
 * the library never prints.
 */
#ifndef TILEDISPATCH_TD_ERROR_H
#define TILEDISPATCH_TD_ERROR_H

#include <stddef.h>

#include "tiledispatch/td_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, value, input, description): one table generates the enum,
 * td_strerror(), td_err_name() and td_err_is_input().  `input` is 1 for the
 * codes that blame what the caller gave (a file, a call, a name, an
 * argument) rather than the library or the machine; the command line
 * exits 2 for those. */
#define TD_ERRNO_MAP(X)                                                        \
    X(OK, 0, 0, "success")                                                     \
    X(ENOMEM, -1, 0, "out of memory")                                          \
    X(EINVAL, -2, 1, "invalid argument")                                       \
    X(EPARSE, -3, 1, "malformed input")                                        \
    X(ESCHEMA, -4, 1, "input does not follow the schema")                      \
    X(ELIMIT, -5, 1, "a fixed limit was exceeded")                             \
    X(EIO, -6, 1, "cannot read file")                                          \
    X(EEXIST, -7, 1, "name already registered")                                \
    X(ENOENT, -8, 1, "no such name")                                           \
    X(ENOMATCH, -9, 0, "no variant matched")                                   \
    X(EDECLINED, -10, 0, "emitter declined the call")                          \
    X(EINTERNAL, -11, 0, "internal error")

typedef enum td_errno {
#define TD__ERR_ENUM(name, val, input, desc) TD_##name = (val),
    TD_ERRNO_MAP(TD__ERR_ENUM)
#undef TD__ERR_ENUM
} td_errno;

/* A description of err ("out of memory"); never NULL. */
TD_API const char *td_strerror(int err);
/* The symbolic name of err ("TD_ENOMEM"); never NULL. */
TD_API const char *td_err_name(int err);
/* 1 when err blames the input (a file, a call, a name or an argument the
 * caller gave: TD_EINVAL, TD_EPARSE, TD_ESCHEMA, TD_ELIMIT, TD_EIO,
 * TD_ENOENT, TD_EEXIST), 0 otherwise (success, no match, out of memory,
 * internal errors, and codes not in the table). */
TD_API int td_err_is_input(int err);

#define TD_DIAG_FILE_MAX 256
#define TD_DIAG_MSG_MAX 512
#define TD_DIAG_LINE_MAX 256

/*
 * One diagnostic: where (file, 1-based line and column; 0 when unknown), what
 * (a message without the "error:" prefix) and the offending source line when
 * known.  Filled by loaders; the first error wins.
 */
typedef struct td_diag {
    int code;                          /* the TD_E* code returned */
    char file[TD_DIAG_FILE_MAX];
    int line;
    int col;
    char msg[TD_DIAG_MSG_MAX];
    char source_line[TD_DIAG_LINE_MAX];
} td_diag;

/* Resets a diagnostic to "no error". */
TD_API void td_diag_clear(td_diag *d);

/*
 * Formats d as
 *   FILE:LINE:COL: error: MESSAGE\n
 *     SOURCE LINE\n
 *     ^\n
 * (position and source lines only where known).  Writes at most cap bytes,
 * always NUL-terminated when cap > 0; returns the length the full text needs.
 */
TD_API size_t td_diag_format(const td_diag *d, char *buf, size_t cap);

/*
 * Fills d->source_line with line d->line of the text the diagnostic points
 * at, for messages raised where the library no longer had that text (about
 * a loaded call: an unknown op, a forced variant).  With text (len bytes,
 * owned by the caller) the line is taken from it; with text NULL the file
 * d->file is read.  Nothing changes when d->source_line is already set or
 * d->line is unknown.  Control characters are shown as '?', and a line too
 * long for the field is cut.  Returns 0 when d->source_line holds the line;
 * TD_EINVAL (d NULL or no line), TD_EIO (the file cannot be read) or
 * TD_ENOENT (no such line) and d unchanged otherwise.
 */
TD_API int td_diag_fill_source_line(td_diag *d, const char *text, size_t len);

/*
 * "Did you mean": the name among cands[0..n) closest to `name` by edit
 * distance (insertions, deletions, substitutions, a swap of two adjacent
 * characters counting one), when it is close enough to be a likely typo:
 * at most 2 edits, and fewer than half of name's length.  NULL entries of
 * cands are skipped; ties go to the earlier candidate.  Returns a pointer
 * into cands, or NULL when none is close (or name or cands is NULL).
 */
TD_API const char *td_suggest(const char *name, const char *const *cands,
                              size_t n);

#ifdef __cplusplus
}
#endif
#endif
