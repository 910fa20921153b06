/*
 * The one YAML front-end every loader uses (internal, core layer; named
 * td_yaml.h so that it cannot shadow libyaml's <yaml.h>).
 *
 * td__ydoc_load runs libyaml's event parser over a text and builds a small
 * tree of nodes that remember where they start (line, and column in code
 * points, both 1-based).  One policy for every file kind:
 *
 *   - YAML tags, anchors and aliases are refused where they appear
 *     ("YAML tags are not allowed", "YAML anchors are not allowed",
 *     "YAML aliases are not allowed");
 *   - libyaml's own errors read "not valid YAML: CONTEXT PROBLEM", at the
 *     problem's position; reader errors (bad UTF-8, control characters),
 *     which libyaml reports as a byte offset, are turned into a line and a
 *     column in code points like every other position;
 *   - limits: text size, nesting depth, node count (td_ylimits);
 *   - one document per file, and an empty document is refused.
 *
 * Then the schema walks of the loaders read the tree with the helpers
 * below: key tables (known keys, duplicates, unknown keys with positions)
 * and scalar typing (YAML core schema: null, bool, int, float, string).
 * Every message goes through td__yerr, so it carries FILE:LINE:COL and the
 * source line.
 */
#ifndef TILEDISPATCH_TD_YAML_H
#define TILEDISPATCH_TD_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "td_internal.h"

/* The deepest nesting any caller may ask for. */
#define TD_YAML_DEPTH_CAP 64
/* Nodes of one document unless a caller asks for fewer. */
#define TD_YAML_NODES_MAX 65536

typedef enum td_ykind { TD_YSCALAR, TD_YSEQ, TD_YMAP } td_ykind;

typedef struct td_ynode {
    td_ykind kind;
    int line, col;          /* 1-based; col counts code points */
    bool plain;             /* a plain (unquoted) scalar */
    bool quoted;            /* single- or double-quoted: the text starts one
                               column after col */
    char *str;              /* scalar text, NUL-terminated (may hold NULs
                               from escapes: compare strlen with len) */
    size_t len;
    struct td_ynode **kids; /* sequence items, or key, value, key, value... */
    size_t n, cap;
} td_ynode;

/* Mapping pairs: key i is kids[2 i], its value kids[2 i + 1]. */
#define TD_YKEY(m, i) ((m)->kids[2 * (i)])
#define TD_YVAL(m, i) ((m)->kids[2 * (i) + 1])
#define TD_YPAIRS(m) ((m)->n / 2)

typedef struct td_ylimits {
    size_t max_bytes;       /* text size */
    int max_depth;          /* open collections, at most TD_YAML_DEPTH_CAP */
    size_t max_nodes;       /* 0 = TD_YAML_NODES_MAX */
} td_ylimits;

/* A parsed document and where its messages go. */
typedef struct td_ydoc {
    const char *file;       /* the name in messages */
    const char *kind;       /* "call file", "rules file" */
    const char *text;
    size_t len;
    td_diag *diag;
    td_ynode *root;         /* never NULL after a successful load */
    size_t nnodes;
} td_ydoc;

/*
 * Parses text (len bytes, not necessarily NUL-terminated) into doc->root.
 * file, kind, text and diag must outlive the document.  Errors:
 *   TD_ELIMIT  at 1:1 "file is larger than the limit of N bytes";
 *              "nesting deeper than N levels" at the collection that opens
 *              level N + 1; "more than N YAML nodes" at the node past it;
 *   TD_EPARSE  "not valid YAML: ..." (libyaml's errors);
 *   TD_ESCHEMA the tag / anchor / alias policy, a second document ("a KIND
 *              holds exactly one YAML document"), an empty or null document
 *              at 1:1 ("empty KIND");
 *   TD_ENOMEM.
 * On failure doc->root is NULL and nothing needs freeing.
 */
int td__ydoc_load(td_ydoc *doc, const char *file, const char *kind,
                  const char *text, size_t len, const td_ylimits *lim,
                  td_diag *diag);
void td__ydoc_free(td_ydoc *doc);

/* A positioned message about the document (first error wins); returns
 * code.  td__yerr_at takes a position, td__yerr a node's. */
int td__yerr_at(const td_ydoc *doc, int code, int line, int col,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
int td__yerr(const td_ydoc *doc, int code, const td_ynode *n,
             const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The column of byte `off` of scalar n's text: the node's column, plus the
 * opening quote, plus the code points before `off` (for messages about a
 * position inside a string, such as a region or a layout). */
int td__ycol_in(const td_ynode *n, size_t off);

/* ---- key tables ----------------------------------------------------------- */

/* Checks one mapping key: a scalar without NUL bytes ("mapping keys must be
 * scalars", "mapping key contains a NUL byte"). */
int td__ykey(const td_ydoc *doc, const td_ynode *k);

/* "duplicate key 'K'" when key i of mapping m repeats one before it.  The
 * scan is O(i): callers bound i (by a key table or a count limit) first. */
int td__ydup(const td_ydoc *doc, const td_ynode *m, size_t i);

/*
 * Reads mapping m against a table of known keys, in document order: each
 * key is checked with td__ykey, then looked up, then checked for a repeat;
 * the first problem wins.  vals[j] receives the value of names[j], or NULL
 * when the key is absent.
 * An unknown key is reported as "unknown key 'K'" followed by td__yhint's
 * hint over names when unknown is NULL;
 * otherwise *unknown is set to the key node and TD_ESCHEMA is returned with
 * nothing reported, for callers that word the message themselves (they
 * must then report it).
 */
int td__ymap_read(const td_ydoc *doc, const td_ynode *m,
                  const char *const *names, size_t nnames,
                  const td_ynode **vals, const td_ynode **unknown);

/* Writes into buf[cap] the hint that follows a message about an unknown
 * name: " (did you mean 'X'?)" when X is `name` in another case, or when
 * td_suggest finds X close to `name` and no other candidate as close;
 * otherwise " (expected one of: A, B, C)" listing the candidates
 * (NULL entries skipped; "" when there are none).  A list that does not fit
 * in cap is cut at the last whole name and ends in ", ...)".  Returns buf,
 * for use as a "%s" argument. */
const char *td__yhint(char *buf, size_t cap, const char *name,
                      const char *const *cands, size_t n);

/* The value of key `name` in mapping m, NULL if absent. */
const td_ynode *td__ymap_get(const td_ynode *m, const char *name);

/* ---- scalar typing -------------------------------------------------------- */

typedef enum td_ytype {
    TD_YT_NULL,
    TD_YT_BOOL,
    TD_YT_INT,
    TD_YT_FLOAT,
    TD_YT_STR,
    TD_YT_SEQ,
    TD_YT_MAP
} td_ytype;

/* "null", "a boolean", "an integer", "a number", "a string", "a list",
 * "a mapping". */
const char *td__ytype_name(td_ytype t);

/*
 * YAML core-schema resolution of a node: plain scalars may be null (empty,
 * ~, null), booleans (true/false in three spellings), decimal integers with
 * an optional sign, or numbers; quoted scalars are strings.  An integer
 * that does not fit int64 resolves to TD_YT_INT with *overflow set.  The
 * out pointers may be NULL.
 */
td_ytype td__yclass(const td_ynode *n, int64_t *iv, bool *bv, bool *overflow);
bool td__yis_null(const td_ynode *n);

/* An integer within [min, max]: "WHAT must be an integer, not T"
 * (TD_ESCHEMA); "WHAT is out of range (MIN to MAX)" (TD_ELIMIT). */
int td__yint(const td_ydoc *doc, const td_ynode *n, const char *what,
             int64_t min, int64_t max, int64_t *out);
/* true or false: "WHAT must be true or false, not T". */
int td__ybool(const td_ydoc *doc, const td_ynode *n, const char *what,
              bool *out);
/* A string (a quoted scalar, or a plain one that is not null, a boolean or
 * a number) without NUL bytes, of at most cap - 1 bytes, copied to out:
 * "'WHAT' must be a string, not T", "'WHAT' contains a NUL byte",
 * "'WHAT' is longer than N bytes" (TD_ELIMIT). */
int td__ystr(const td_ydoc *doc, const td_ynode *n, const char *what,
             char *out, size_t cap);
/* A name: a non-null scalar, non-empty, without control characters, of at
 * most maxlen bytes ("WHAT must be a non-empty string", "WHAT must not
 * contain control characters", "WHAT is longer than N bytes"). */
int td__yname(const td_ydoc *doc, const td_ynode *n, const char *what,
              size_t maxlen);
/* A list of at most maxitems names (td__yname each, as "a list item"):
 * "WHAT must be a list of strings", "WHAT has more than N items". */
int td__ynames(const td_ydoc *doc, const td_ynode *n, const char *what,
               size_t maxitems, size_t maxlen);

#endif
