/*
 * What the pieces of the call file loader share (private to model/): the
 * loader's state, its two ways of raising a positioned diagnostic, and the
 * reader of each part of the file.  call_load.c walks the top-level keys
 * and calls the readers: the sections in call_sections.c, the operands in
 * call_operands.c and region text in region_parse.c.  Every reader fills
 * its part of c->call and returns 0, or the first problem as a negative
 * TD_E* code with the diagnostic (FILE:LINE:COL) in the document's diag.
 */
#ifndef TILEDISPATCH_CALL_READER_H
#define TILEDISPATCH_CALL_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "td_yaml.h"

/* The loader's state: the document (file, text, where messages go) and the
 * call being filled. */
typedef struct td__cl {
    td_ydoc doc;
    td_call *call;
    td_pos dtype_pos[TD_MAX_BUFFERS]; /* each buffer's `dtype:` value */
} td__cl;

#define cl_err_at(c, code, line, col, ...)                                     \
    td__yerr_at(&(c)->doc, (code), (line), (col), __VA_ARGS__)
#define cl_err(c, code, node, ...)                                             \
    td__yerr(&(c)->doc, (code), (node), __VA_ARGS__)

/* The core-schema type of a node. */
static inline td_ytype yv_kind(const td_ynode *n)
{
    return td__yclass(n, NULL, NULL, NULL);
}

/* Reads a string value into out[cap]; `what` names it in messages. */
static inline int cl_string(td__cl *c, const td_ynode *n, const char *what,
                            char *out, size_t cap)
{
    return td__ystr(&c->doc, n, what, out, cap);
}

/* ---- region text (region_parse.c) --------------------------------------- */

/* Parses "NAME" or "NAME[slices]" against the call's buffers.  `label`
 * prefixes every message about the text ("srcs[1]: unknown buffer 'X'");
 * NULL keeps the messages of dst and src as they always were. */
int td__cl_region_in(td__cl *c, const td_ynode *n, const char *what,
                     const char *label, td_region *out);

/* td__cl_region_in without a label (dst, src). */
int td__cl_region(td__cl *c, const td_ynode *n, const char *what,
                  td_region *out);

/* ---- sections (call_sections.c) ----------------------------------------- */

/* `buffers`: fills call->buffers and nbuffers. */
int td__cl_buffers(td__cl *c, const td_ynode *n);

/* `launch`: fills call->launch. */
int td__cl_launch(td__cl *c, const td_ynode *n);

/* `active:`: thread axis -> [begin, end), 0 <= begin < end; each axis
 * once, at most TD_MAX_ACTIVE. */
int td__cl_active(td__cl *c, const td_ynode *n);

/* `axes`: fills call->axes and naxes; call->src must be loaded. */
int td__cl_axes(td__cl *c, const td_ynode *n);

/* `scalars`: fills call->scalars and nscalars; the buffers must be
 * loaded (a scalar may not take a buffer's name). */
int td__cl_scalars(td__cl *c, const td_ynode *n);

/* `config`: fills call->config and nconfig; the scalars must be loaded
 * (call_expr.c parses the expression keys' values). */
int td__cl_config(td__cl *c, const td_ynode *n);

/* ---- config expressions (call_expr.c) ---------------------------------- */

/* Whether a string value of config key `key` is an expression. */
bool td__cl_expr_key(const char *key);

/* Parses the string node n (the value of an expression key) into e: a
 * TD_VALUE_EXPR or TD_VALUE_ELEM, or leaves it a TD_VALUE_STRING when it
 * is a bare name the call does not declare. */
int td__cl_expr(td__cl *c, const td_ynode *n, td_config_entry *e);

/* ---- operands (call_operands.c) ----------------------------------------- */

/* `srcs`: fills call->srcs and nsrcs; the buffers must be loaded. */
int td__cl_srcs(td__cl *c, const td_ynode *n);

/* `extras`: fills call->bias and call->scale; the buffers and dst must be
 * loaded (a bare number takes the dst buffer's dtype). */
int td__cl_extras(td__cl *c, const td_ynode *n);

/* A number written as a plain scalar, as a literal of dtype dt (the
 * rules of a bare number among `srcs`: within the dtype's range, .inf,
 * -.inf and .nan for floats); anything else is an error "LABEL: must be a
 * number (a DT literal), not T". */
int td__cl_literal(td__cl *c, const td_ynode *n, const char *label,
                   td_dtype dt, td_operand *out);

/* ---- gemm's form (call_gemm.c) ------------------------------------------ */

/* Refuses, at the first such key of the mapping root, a key of gemm's
 * form (a, b, c, transpose_A, transpose_B, alpha, beta) in the call of
 * another op, and a key of the other ops' operands (src, srcs, extras,
 * axes, accum) in a gemm call.  call->op must be loaded. */
int td__cl_form_keys(td__cl *c, const td_ynode *root);

/* A gemm call's a, b and c (srcs[0..2], all three required) and its
 * literals (transpose_A, transpose_B: booleans, default false; alpha,
 * beta: numbers, int32 when written as integers, else float32; default
 * float32 1 and 0).  The buffers must be loaded. */
int td__cl_gemm(td__cl *c, const td_ynode *root);

/* A gemm_async call's a and b (srcs[0..1], both required) and its
 * transA / transB. */
int td__cl_gemm_async(td__cl *c, const td_ynode *root);

/* Refuses, at the buffer's `dtype:` (or at the operand at fault), a
 * confined dtype (td_dtype_is_confined) where no op allows it: the last
 * step of the load, once every operand and config value is read. */
int td__cl_confined_dtypes(td__cl *c);

/* A gemm_async call's accum written as a string: an expression of the
 * declared scalars and thread ids, into call->accum_expr. */
int td__cl_gemm_async_accum(td__cl *c, const td_ynode *n);

#endif
