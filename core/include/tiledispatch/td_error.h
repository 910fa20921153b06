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

/* X(NAME, value, description): one table generates the enum, td_strerror()
 * and td_err_name(). */
#define TD_ERRNO_MAP(X)                                                        \
    X(OK, 0, "success")                                                        \
    X(ENOMEM, -1, "out of memory")                                             \
    X(EINVAL, -2, "invalid argument")                                          \
    X(EPARSE, -3, "malformed input")                                           \
    X(ESCHEMA, -4, "input does not follow the schema")                         \
    X(ELIMIT, -5, "a fixed limit was exceeded")                                \
    X(EIO, -6, "cannot read file")                                             \
    X(EEXIST, -7, "name already registered")                                   \
    X(ENOENT, -8, "no such name")                                              \
    X(ENOMATCH, -9, "no variant matched")                                      \
    X(EDECLINED, -10, "emitter declined the call")                             \
    X(EINTERNAL, -11, "internal error")

typedef enum td_errno {
#define TD__ERR_ENUM(name, val, desc) TD_##name = (val),
    TD_ERRNO_MAP(TD__ERR_ENUM)
#undef TD__ERR_ENUM
} td_errno;

/* A description of err ("out of memory"); never NULL. */
TD_API const char *td_strerror(int err);
/* The symbolic name of err ("TD_ENOMEM"); never NULL. */
TD_API const char *td_err_name(int err);

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

#ifdef __cplusplus
}
#endif
#endif
