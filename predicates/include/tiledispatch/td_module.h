/*
 * tiledispatch: the interface between the registry and the modules that
 * plug into it.  A variant module (built in, or a plugin) describes its
 * predicates (td_pred_desc, with an argument schema) and its emitter
 * (td_impl_desc); predicates answer with a one-line td_reason and read
 * the arguments a rules file bound through the td_args getters.
 *
 * This header needs only the call model and the IR: a module never sees
 * the registry's insides.
 */
#ifndef TILEDISPATCH_TD_MODULE_H
#define TILEDISPATCH_TD_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_call.h"
#include "tiledispatch/td_error.h"
#include "tiledispatch/td_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TD_REASON_MAX 512
#define TD_MAX_LIST 32                  /* items in a list argument */

/* The registry a module registers into (td_registry.h). */
typedef struct td_registry td_registry;

/* A one-line reason, filled by predicates and declining emitters.  Fixed
 * size so that the dispatch fast path allocates nothing. */
typedef struct td_reason {
    char text[TD_REASON_MAX];
} td_reason;

/* printf into why->text (truncating); accepts NULL why. */
TD_API void td_reason_set(td_reason *why, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- ops --------------------------------------------------------------- */

typedef enum td_op_kind {
    TD_OP_KIND_REDUCTION,
    TD_OP_KIND_ELEMENTWISE,
    TD_OP_KIND_COPY,      /* moves one region into another (`copy`) */
    TD_OP_KIND_GEMM,      /* a matrix product D = alpha * A @ B + beta * C
                             (`gemm`: operands dst, a, b, c) */
    TD_OP_KIND_PERMUTE    /* one tile moved from src's layout to dst's
                             (`permute_layout`: operands dst, src) */
} td_op_kind;

typedef struct td_op_desc td_op_desc;

/*
 * Checks that a call's operands fit the op (how many sources, which may be
 * scalars, which extras) before any variant is tried.  Returns true, or
 * false with a one-line reason in *why and, in *where, the position of the
 * offending operand in the call file (left as is: the op's position).  A
 * failed check fails dispatch with TD_ESCHEMA and a positioned message.
 */
typedef bool (*td_op_check_fn)(const td_call *call, const td_op_desc *op,
                               td_pos *where, td_reason *why);

struct td_op_desc {
    const char *name;      /* "sum" */
    td_op_kind kind;
    td_combiner combiner;  /* reductions: the identity follows from it */
    /* Optional operand check (above).  When NULL, a REDUCTION op takes
     * exactly one region source and no extras; an ELEMENTWISE op is not
     * checked. */
    td_op_check_fn check;
    /* Module data, opaque to the registry (the elementwise family points
     * it at its own description of the op). */
    const void *data;
};

/* ---- predicates -------------------------------------------------------- */

typedef enum td_arg_type {
    TD_ARG_INT,
    TD_ARG_BOOL,
    TD_ARG_STRING,
    TD_ARG_STRING_LIST
} td_arg_type;

/* "int", "list of strings" */
TD_API const char *td_arg_type_name(td_arg_type t);

/* One declared argument of a predicate. */
typedef struct td_arg_spec {
    const char *name;
    td_arg_type type;
    bool required;
} td_arg_spec;

/* Arguments bound by a rules file; read them with the td_args_* getters.
 * An argument that was not given (optional) reads as `dflt`. */
typedef struct td_args td_args;

TD_API bool td_args_has(const td_args *a, const char *name);
TD_API int64_t td_args_int(const td_args *a, const char *name, int64_t dflt);
TD_API bool td_args_bool(const td_args *a, const char *name, bool dflt);
TD_API const char *td_args_string(const td_args *a, const char *name,
                                  const char *dflt);
/* Number of items of a list argument (0 when absent); items via *items. */
TD_API size_t td_args_list(const td_args *a, const char *name,
                           const char *const **items);
/* Formats a list argument as "[a, b]" into buf; returns buf. */
TD_API const char *td_args_list_text(const td_args *a, const char *name,
                                     char *buf, size_t cap);

/*
 * A predicate answers true (pass) or false with a one-line reason in *why.
 * It must not allocate, must not keep pointers to its inputs, and must be
 * safe to call from several threads at once.
 */
typedef bool (*td_pred_fn)(const td_call *call, const td_args *args,
                           void *user, td_reason *why);

typedef struct td_pred_desc {
    const char *name;        /* unique in a registry; rules name it */
    const td_arg_spec *args; /* the schema: rules may bind only these */
    size_t nargs;
    td_pred_fn fn;
    void *user;
    /* The name explanations print (explain's tables, `--format tvm`), or
     * NULL for `name`.  Two families may show one name (TVM calls different
     * checks `validate_copy_op`) while each registers its own. */
    const char *shown_as;
} td_pred_desc;

/* ---- variant modules --------------------------------------------------- */

/*
 * A plan is what a module's checks work out about a call (shapes, axes,
 * the lowering path, ...), computed once per dispatch and handed to the
 * emitter, so the emitter neither repeats the checks nor lowers a call
 * they did not pass.  A plan function fills `plan` (plan_size bytes, NOT
 * cleared before the call: write every field the emitter reads) and
 * returns 0; or TD_EDECLINED with a reason in
 * *why when the call is outside what the module lowers; or another
 * negative code for a real failure.  It must not allocate memory that the
 * plan keeps (plans are discarded without a destructor), and must be safe
 * to call from several threads at once.
 */
#define TD_PLAN_MAX 32768 /* bytes: the largest plan_size accepted */

typedef int (*td_plan_fn)(const td_call *call, const td_op_desc *op,
                          void *plan, void *user, td_reason *why);

/*
 * An emitter lowers an accepted call into `ir` (`op` is the call's op as
 * registered: its combiner gives the arithmetic and the identity).  `plan`
 * is the module's plan for this call when the module has a plan function
 * (never NULL then), NULL otherwise.  Returns 0; or TD_EDECLINED with a
 * reason in *why (dispatch goes on to the next candidate; its first line
 * is the reason, further lines after '\n' are explain's account of it,
 * one reason each); or another
 * negative code for a real failure (TD_ENOMEM), which stops dispatch.
 * An emitter that accepts may leave a note in *why (what the caller owns,
 * e.g. the barrier after a copy); explain shows it on the selected row.
 * It starts empty: an emitter that writes nothing leaves no note.
 */
typedef int (*td_emit_fn)(const td_call *call, const td_op_desc *op,
                          const void *plan, td_ir *ir, void *user,
                          td_reason *why);

typedef struct td_impl_desc {
    const char *name;              /* the impl name rules bind to */
    td_emit_fn emit;
    void *user;                    /* passed to emit and plan */
    const td_pred_desc *preds;     /* predicates this module brings */
    size_t npreds;
    /* Optional.  When plan is set, dispatch computes the plan once per
     * candidate before emit (a plan that declines makes the candidate
     * "declined", whatever the rules file listed).  When plan_pred names
     * one of `preds` whose check is the plan's, a rules entry of this impl
     * that lists that predicate computes the plan there, not twice. */
    td_plan_fn plan;
    size_t plan_size;              /* 1..TD_PLAN_MAX when plan is set */
    const char *plan_pred;
} td_impl_desc;

#ifdef __cplusplus
}
#endif
#endif
