/*
 * tiledispatch: the registry (ops, predicates, variant modules, rules) and
 * dispatch.
 *
 * A registry is built in two phases: C registrations (td_registry_new
 * registers the built-ins; td_register_* adds more), then rules loading,
 * which checks every name and argument against what C registered.  Once
 * loaded, a registry is read-only: td_dispatch and td_explain may run from
 * any number of threads at once.  Loading rules while other threads
 * dispatch is not allowed.
 */
#ifndef TILEDISPATCH_TD_REGISTRY_H
#define TILEDISPATCH_TD_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_call.h"
#include "tiledispatch/td_error.h"
#include "tiledispatch/td_ir.h"
#include "tiledispatch/td_module.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TD_RULES_FILE_MAX (1024 * 1024) /* bytes of one rules file */
#define TD_RULES_DEPTH_MAX 16           /* YAML nesting depth */
#define TD_MAX_VARIANTS 256             /* entries in all layers of a table */
#define TD_MAX_PREDICATES 32            /* predicates in one `when:` list */

/* ---- ops --------------------------------------------------------------- */

/* Registers an op (copied).  TD_EEXIST if the name is taken. */
TD_API int td_register_op(td_registry *reg, const td_op_desc *op);
/* The op named `name`, NULL if none. */
TD_API const td_op_desc *td_registry_op(const td_registry *reg,
                                        const char *name);

/* ---- predicates -------------------------------------------------------- */

/* Registers a predicate (the descriptor is copied; the strings and the
 * schema array must outlive the registry).  TD_EEXIST if taken. */
TD_API int td_register_predicate(td_registry *reg, const td_pred_desc *pred);

/* ---- variant modules --------------------------------------------------- */

/* Registers a variant module: its predicates, then its impl.  Nothing is
 * registered if any name is taken (TD_EEXIST). */
TD_API int td_register_impl(td_registry *reg, const td_impl_desc *impl);

/* ---- what is registered ------------------------------------------------ */

/* A registered predicate.  `origin` says who registered it: "built-in",
 * the path of the plugin, or "application"; `impl` names the variant
 * module that brought it (NULL for one registered on its own). */
typedef struct td_pred_info {
    const char *name;
    const td_arg_spec *args; /* the argument schema */
    size_t nargs;
    const char *origin;
    const char *impl;
    const char *shown_as; /* the display name explanations print, or NULL */
} td_pred_info;

/* A registered variant module (emitter). */
typedef struct td_impl_info {
    const char *name;
    const char *origin;
    size_t npreds;             /* the predicates it brings */
    const td_pred_desc *preds;
    bool has_plan;
    const char *plan_pred;     /* NULL when none */
} td_impl_info;

/* The registered predicates / impls sorted by name: returns the count and
 * fills infos when cap is at least that count (pass NULL, 0 to ask).
 * Pointers stay valid while nothing is registered or removed. */
TD_API size_t td_registry_predicates(const td_registry *reg,
                                     td_pred_info *infos, size_t cap);
TD_API size_t td_registry_impls(const td_registry *reg, td_impl_info *infos,
                                size_t cap);

/* ---- plugins ----------------------------------------------------------- */

/*
 * Loads a variant-module plugin: a shared object built against these
 * headers that exports `td_plugin_abi_version` (TD_PLUGIN_ABI_VERSION at
 * its build, see td_plugin.h) and `int td_plugin_init(td_registry *reg)`,
 * which registers its ops, predicates and impls and returns 0 or a TD_E*
 * code.  Returns 0; or TD_EIO (cannot be opened, or not a shared object),
 * TD_ESCHEMA (a symbol is missing or the ABI version differs), or the
 * code of a failing init (TD_EEXIST when it registers a taken name), with
 * the path and the reason in diag.  On failure nothing of the plugin
 * stays registered and it is closed.  A loaded plugin stays open until
 * td_registry_free.  Load plugins before the rules that bind their names.
 */
TD_API int td_registry_load_plugin(td_registry *reg, const char *path,
                                   td_diag *diag);

/* ---- the registry ------------------------------------------------------ */

/* A registry with the built-in ops, predicates and variant modules and no
 * rules yet.  *out is NULL on failure. */
TD_API int td_registry_new(td_registry **out);
/* A registry with nothing registered at all. */
TD_API int td_registry_new_empty(td_registry **out);
TD_API void td_registry_free(td_registry *reg); /* accepts NULL */

/* The default rules text compiled into the library (rules/rules.yaml). */
TD_API const char *td_default_rules(size_t *len);

/*
 * Rules load in layers.  A layer is one rules file (or text); the table is
 * what its layers declare, applied in order.  In a layer, an entry is
 * either new, or changes an entry of (name, target) loaded before it:
 *
 *   - name: shared
 *     target: cuda
 *     override: true     # only the fields given change: priority,
 *     priority: 30       # enabled, when, ops, impl
 *
 * A new entry that repeats the (name, target) of an earlier one, or an
 * override that matches none, is an error (TD_ESCHEMA) naming both places.
 * Every load is atomic: it is checked completely beside the current table,
 * and on failure the registry keeps the rules it had and diag holds
 * FILE:LINE:COL and the message.
 *
 * td_registry_load_* REPLACE the table by the given layers (the first one
 * starts from an empty table); td_registry_add_* put the given layers ON
 * TOP of the ones already loaded.  The command line, for instance, does
 * td_registry_load_default_rules then td_registry_add_rules(--rules files).
 * The table keeps the text of each layer; an add rebuilds the table from
 * them beside the current one, so it costs a load of every layer.
 */
/* Replaces the table by one layer per file, in order. */
TD_API int td_registry_load_rules(td_registry *reg, const char *const *paths,
                                  size_t npaths, td_diag *diag);
/* Replaces the table by one layer from a text in memory; `name` is used in
 * messages and provenance. */
TD_API int td_registry_load_rules_text(td_registry *reg, const char *name,
                                       const char *text, size_t len,
                                       td_diag *diag);
/* Replaces the table by the built-in layer: td_default_rules, the text of
 * rules/rules.yaml, named "rules/rules.yaml" in messages and provenance
 * (the file it was compiled from; the installed copy,
 * share/tiledispatch/rules.yaml, has the same lines). */
TD_API int td_registry_load_default_rules(td_registry *reg, td_diag *diag);
/* Adds one layer per file, in order, over the loaded ones. */
TD_API int td_registry_add_rules(td_registry *reg, const char *const *paths,
                                 size_t npaths, td_diag *diag);
/* Adds one layer from a text in memory over the loaded ones. */
TD_API int td_registry_add_rules_text(td_registry *reg, const char *name,
                                      const char *text, size_t len,
                                      td_diag *diag);
/* Drops every layer: the table is empty. */
TD_API void td_registry_clear_rules(td_registry *reg);

/* One layer of the loaded table. */
typedef struct td_rules_layer {
    const char *file;
    size_t nentries;   /* entries of the file: new ones and overrides */
    size_t noverrides; /* of which overrides */
} td_rules_layer;

/* The layers in load order.  Returns the count; fills up to cap. */
TD_API size_t td_registry_rules_layers(const td_registry *reg,
                                       td_rules_layer *out, size_t cap);

/* ---- the layered load -------------------------------------------------- */

/* What td_registry_load adds to the built-ins.  A zeroed struct (or NULL)
 * asks for what the command line does without options. */
typedef struct td_load_options {
    const char *const *plugins; /* plugin paths, after TILEDISPATCH_PLUGINS */
    size_t nplugins;
    const char *const *rules;   /* rules files, after TILEDISPATCH_RULES */
    size_t nrules;
    bool no_default_rules;      /* start from an empty table */
    bool no_env_plugins;        /* ignore TILEDISPATCH_PLUGINS */
    bool no_env_rules;          /* ignore TILEDISPATCH_RULES */
} td_load_options;

/*
 * A new registry loaded the way the command line and the Python package
 * load theirs, in this order: the built-in ops, predicates and variant
 * modules; one plugin per entry of TILEDISPATCH_PLUGINS (colon-separated,
 * empty entries skipped), then opts->plugins; the built-in rules (unless
 * no_default_rules); then one rules layer per entry of TILEDISPATCH_RULES,
 * then per file of opts->rules, added in one load over the built-in layer.
 * The options and their strings stay the caller's.  Returns 0 with *out
 * owned by the caller (td_registry_free); on failure *out is NULL, the
 * code is the failing step's (TD_ENOMEM, or what td_registry_load_plugin,
 * td_registry_load_default_rules or td_registry_add_rules return) and
 * diag names the plugin or the rules position; when that file came from
 * TILEDISPATCH_RULES or TILEDISPATCH_PLUGINS, the message ends with " (a
 * file named by TILEDISPATCH_RULES)" (or _PLUGINS).
 */
TD_API int td_registry_load(const td_load_options *opts, td_registry **out,
                            td_diag *diag);

/* ---- the loaded table -------------------------------------------------- */

/* A place in a rules file. */
typedef struct td_rule_origin {
    const char *file;
    int line;
} td_rule_origin;

/* One rules entry, as loaded (with every override applied).  The strings
 * and the overrides array belong to the registry and stay valid until its
 * rules change. */
typedef struct td_rule_info {
    const char *op;
    const char *target;
    const char *name;     /* the variant name */
    const char *impl;
    int priority;
    bool enabled;
    size_t npreds;
    const char *file;     /* where it was declared */
    int line;
    size_t noverrides;    /* the overrides applied to it, in order */
    const td_rule_origin *overrides; /* NULL when noverrides is 0 */
} td_rule_info;

/* Number of (op, target) keys, and the entries in try order.  Keys are
 * sorted by op then target.  Returns the count; fills up to cap infos.
 * Disabled entries are listed too. */
TD_API size_t td_registry_rules(const td_registry *reg, td_rule_info *infos,
                                size_t cap);
/* The name and bound-argument text of predicate i of an entry
 * (e.g. "storage_scope" and "{expected_scope: [local]}"). */
TD_API int td_registry_rule_pred(const td_registry *reg,
                                 const td_rule_info *rule, size_t i,
                                 const char **name, char *args_text,
                                 size_t cap);
/* The same with the arguments as a JSON object, "{}" when none are bound
 * (e.g. {"expected_scope": ["local"]}).  TD_ELIMIT when the text does not
 * fit in cap (args_json then holds a truncated, invalid text). */
TD_API int td_registry_rule_pred_json(const td_registry *reg,
                                      const td_rule_info *rule, size_t i,
                                      const char **name, char *args_json,
                                      size_t cap);

/* ---- listings ---------------------------------------------------------- */

typedef enum td_list_style {
    TD_LIST_TEXT = 0, /* lines for people, what `tiledispatch rules` prints */
    TD_LIST_JSON = 1  /* one JSON array of objects, keys in a fixed order */
} td_list_style;

/*
 * The loaded rules table in try order (grouped by op and target, each
 * entry with its provenance, overrides and `when:` predicates), the
 * registered predicates (with their argument schemas) and the registered
 * variant modules (with the predicates they bring and the rules entries
 * that bind them): what `tiledispatch rules`, `predicates` and `impls`
 * print, with --json in TD_LIST_JSON.  *out is allocated through the
 * allocator hook and ends with a line break; release it with td_free().
 * Returns 0, TD_EINVAL (a NULL argument or an unknown style) or
 * TD_ENOMEM, with *out NULL on failure.
 */
TD_API int td_registry_list_rules(const td_registry *reg, td_list_style style,
                                  char **out);
TD_API int td_registry_list_predicates(const td_registry *reg,
                                       td_list_style style, char **out);
TD_API int td_registry_list_impls(const td_registry *reg, td_list_style style,
                                  char **out);

/* ---- dispatch ---------------------------------------------------------- */

typedef struct td_dispatch_result {
    const char *variant; /* owned by the registry */
    const char *impl;
    int priority;
    td_ir *ir;           /* owned by the caller: td_ir_free */
} td_dispatch_result;

/*
 * Dispatches a call: candidates for (op, target) in try order (priority
 * descending, then name), enabled ones only, filtered by call->dispatch;
 * the first whose predicates all pass and whose emitter accepts wins.
 * Predicate evaluation allocates nothing and stops at the first failure.
 * Returns 0 and fills *res; TD_ENOMATCH when nothing matched (diag->msg
 * says which of: no registered variants for this op/target, no variant
 * named 'X' is registered, or no candidate accepted); other codes for
 * real failures.  Use td_explain for the table of reasons.
 */
TD_API int td_dispatch(const td_registry *reg, const td_call *call,
                       td_dispatch_result *res, td_diag *diag);

/* ---- explain ----------------------------------------------------------- */

typedef enum td_cand_status {
    TD_CAND_SELECTED,   /* this candidate won */
    TD_CAND_REJECTED,   /* one or more predicates failed */
    TD_CAND_DECLINED,   /* predicates passed, emitter declined */
    TD_CAND_FAILED,     /* emitter failed with an error */
    TD_CAND_NOT_TRIED,  /* an earlier candidate won */
    TD_CAND_DISABLED    /* the rules disable it (enabled: false) */
} td_cand_status;

TD_API const char *td_cand_status_name(td_cand_status s); /* "selected", ... */

/* One predicate of a candidate, as it answered.  The reason belongs to
 * the explanation (td_explain_free); the name and args are the registry's
 * and stay valid while its rules are unchanged. */
typedef struct td_pred_outcome {
    const char *name;    /* as registered (and as rules name it) */
    const char *shown;   /* as printed: the predicate's shown_as, or name */
    bool ok;
    const char *reason;  /* "" when ok or when no reason was given */
    const char *args;    /* the arguments the rules bind, as `rules` lists
                            them ("{expected_scope: [local]}"), "" if none */
} td_pred_outcome;

/*
 * One candidate of an explanation.  The parts (predicate outcomes, the
 * emitter's code and reason, the reasons) are recorded as the selection
 * loop reports them; `message` and the formatted tables are made from
 * them, so a reader never needs to take a message apart.  The strings
 * belong to the explanation (td_explain_free), except `file`, which is the
 * registry's (valid while its rules are unchanged).
 */
typedef struct td_explain_row {
    const char *variant;
    int priority;
    td_cand_status status;
    size_t npreds;
    const td_pred_outcome *preds; /* every predicate, evaluated */
    const char *message;          /* "rejected: a — r; rejected: b — r",
                                     "declined — r", or "" */
    const char *file;             /* where the rules entry was declared; for
                                     a disabled row, where it was disabled
                                     (an override may do that) */
    int line;
    /* DECLINED: the plan's or the emitter's reason ("" when none);
     * FAILED: the emitter's reason (its code's description when none);
     * SELECTED: the emitter's note ("" when none: what the caller must
     * do around the emitted code, e.g. synchronise); "" otherwise. */
    const char *detail;
    int error;           /* FAILED: the emitter's TD_E* code; else 0 */
    bool after_failure;  /* NOT_TRIED: an earlier emitter failed (rather
                            than won) */
    /* The reasons column of the text table, one reason each ("P: why" per
     * failed predicate, "an earlier candidate won", "enabled: false in the
     * rules (FILE:LINE)", ...), before any wrapping. */
    size_t nreasons;
    const char *const *reasons;
} td_explain_row;

typedef struct td_explain td_explain;

/*
 * Evaluates every candidate of the call (all predicates of each, emitters
 * in try order until one accepts) and records why.  The winner's IR is
 * discarded.  Returns 0 (whether or not something matched; see
 * td_explain_selected) or a negative code; *out is NULL on failure.
 */
TD_API int td_explain_call(const td_registry *reg, const td_call *call,
                           td_explain **out, td_diag *diag);
TD_API void td_explain_free(td_explain *ex); /* accepts NULL */

TD_API size_t td_explain_nrows(const td_explain *ex);
TD_API const td_explain_row *td_explain_get(const td_explain *ex, size_t i);
/* The winning row, or NULL when nothing matched. */
TD_API const td_explain_row *td_explain_selected(const td_explain *ex);
/* Why no candidate could be tried, "" otherwise: "no registered variants
 * for this op/target", "no variant named 'X' is registered", or (with
 * only disabled rows) "no enabled variants for this op/target (N
 * disabled)" / "variant 'X' is disabled in the rules for ...". */
TD_API const char *td_explain_empty_reason(const td_explain *ex);

typedef enum td_explain_style {
    /* The header "dispatch failed: op=OP target=T" (or "dispatch: op=OP
     * target=T selected=V"), the call once, and a table of one row per
     * candidate (disabled ones too) with one status each and one reason
     * per line, wrapped to fit 100 columns (widths in code points). */
    TD_EXPLAIN_TEXT = 0,
    /* One JSON object, keys in a fixed order, every predicate outcome. */
    TD_EXPLAIN_JSON = 1,
    /* Upstream TVM's failure table ("Variant | Error", the opcall in every
     * row, no disabled rows), for diffing against TVM's text. */
    TD_EXPLAIN_TVM = 2
} td_explain_style;

/* The style called `name`: "text", "json" or "tvm" (the command line's
 * --format and Python's explain_text(format=...)).  Returns 0 with *out
 * set, or TD_EINVAL for any other name (or a NULL argument), *out then
 * unchanged. */
TD_API int td_explain_style_parse(const char *name, td_explain_style *out);

/* Formats the explanation in `style`.  *out is allocated through the
 * allocator hook; release it with td_free(). */
TD_API int td_explain_format(const td_explain *ex, td_explain_style style,
                             char **out);

#ifdef __cplusplus
}
#endif
#endif
