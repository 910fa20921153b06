/*
 * The registry's insides, shared by registry.c, rules.c, dispatch.c,
 * explain.c and builtin.c (not installed).
 *
 * Ownership: the registry owns its op, predicate and impl entries and the
 * loaded rules table.  A rules table is built completely beside the current
 * one and swapped in only when the whole load succeeded, so a failed load
 * never leaves a half-changed registry behind.
 */
#ifndef TILEDISPATCH_REGISTRY_INTERNAL_H
#define TILEDISPATCH_REGISTRY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "tiledispatch/td_registry.h"

/* uthash allocates its bucket tables itself; route that through the
 * library's allocator, and never let it exit the process: with
 * HASH_NONFATAL_OOM a failed add simply leaves the element out, which the
 * callers detect by comparing HASH_COUNT before and after. */
#define uthash_malloc(sz) td__malloc(sz)
#define uthash_free(ptr, sz) td__free(ptr)
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

/* ---- registered things ------------------------------------------------- */

/* Every registered thing remembers where it came from: `origin` is
 * "built-in", a plugin's path or "application" (strings the registry
 * owns), and `stamp` the registration batch (a plugin load), so that a
 * failed batch can be taken back whole. */
typedef struct td__op_entry {
    td_op_desc desc;  /* desc.name points at name */
    char *name;       /* owned copy */
    const char *origin;
    unsigned stamp;
    UT_hash_handle hh;
} td__op_entry;

typedef struct td__pred_entry {
    td_pred_desc desc; /* strings and schema owned by the registrant */
    const char *origin;
    unsigned stamp;
    const char *impl;  /* the impl that brought it (its entry's name), or
                          NULL for a predicate registered on its own */
    /* Built in: the predicate (and its module's plan) accepts a NULL
     * reason, so the fast path, which drops the reasons, skips formatting
     * them.  A plugin's predicate always gets a buffer. */
    bool quiet_ok;
    UT_hash_handle hh;
} td__pred_entry;

typedef struct td__impl_entry {
    td_impl_desc desc; /* desc.name points at name */
    char *name;        /* owned copy */
    /* The predicate entry of desc.plan_pred (registered with the impl),
     * NULL when the module has none. */
    const struct td__pred_entry *plan_pred;
    const char *origin;
    unsigned stamp;
    UT_hash_handle hh;
} td__impl_entry;

/* ---- the rules table --------------------------------------------------- */

/* One predicate of a `when:` list with its bound arguments. */
typedef struct td__rule_pred {
    const td__pred_entry *pred;
    td_args args;
    char *args_text;  /* "{expected_scope: [local]}" or "" */
    char *args_json;  /* {"expected_scope": ["local"]} or {} */
} td__rule_pred;

/* One layer of the table: a rules file (or text) as it was loaded.  The
 * table keeps the text, so that adding a layer can rebuild the whole table
 * beside the current one (td_registry_add_rules stays atomic). */
typedef struct td__layer {
    char *file;
    char *text;
    size_t len;
    size_t nnew;       /* entries the layer declared */
    size_t noverride;  /* entries the layer overrode */
} td__layer;

/* One variant entry, identified by (name, target); an entry serving several
 * ops is shared by the candidate lists of each (op, target) key.  Later
 * layers change it in place with `override: true`. */
typedef struct td__ventry {
    char *name;
    char *impl_name;
    const td__impl_entry *impl;
    char *target;
    int priority;
    bool enabled;
    size_t nops;
    const td__op_entry **ops;  /* in the order the entry lists them */
    size_t npreds;
    td__rule_pred *preds;
    char *file;                /* where it was declared */
    int line;
    const char *enabled_file;  /* where `enabled` got its value: the */
    int enabled_line;          /* declaration or the last override of it */
    size_t noverrides;
    td_rule_origin *overrides; /* files point at the table's layer names */
    size_t seq;       /* insertion order, for stable ties */
} td__ventry;

/* The candidates of one (op, target), sorted into try order at load. */
typedef struct td__rkey {
    char *key;        /* "op\x1ftarget", the hash key */
    const td__op_entry *op;
    const char *target; /* points into key */
    size_t n, cap;
    td__ventry **cands;
    UT_hash_handle hh;
} td__rkey;

typedef struct td__rules {
    size_t nlayers, caplayers;
    td__layer *layers;     /* owned, in load order */
    size_t nentries, capentries;
    td__ventry **entries;  /* owned, insertion order */
    td__rkey *keys;        /* the hash */
    size_t nkeys;
    td__rkey **sorted;     /* keys by op then target */
    size_t nrules;         /* (op, target, variant) triples */
} td__rules;

/* A loaded plugin (plugin.c): kept open while the registry lives, since
 * its descriptors and code stay in use. */
typedef struct td__plugin {
    char *path;
    void *handle;
    struct td__plugin *next;
} td__plugin;

struct td_registry {
    td__op_entry *ops;
    td__pred_entry *preds;
    td__impl_entry *impls;
    td__rules *rules;      /* NULL before the first successful load */
    const char *origin;    /* of registrations now: NULL = "application" */
    bool builtin_batch;    /* td__register_builtins is registering */
    unsigned stamp;        /* of registrations now */
    td__plugin *plugins;   /* newest first */
    unsigned last_stamp;   /* of the newest plugin batch */
    /* "predicate 'x' is already registered (by ORIGIN)": the last name a
     * td_register_* call refused as taken, for plugin messages. */
    char conflict[TD_DIAG_MSG_MAX];
};

/* Takes back every op, predicate and impl of registration batch `stamp`. */
void td__registry_drop_stamp(td_registry *reg, unsigned stamp);
/* plugin.c: closes the plugins (after the entries are gone). */
void td__plugins_close(td__plugin *p);

/* registry.c */
const td__pred_entry *td__registry_pred(const td_registry *reg,
                                        const char *name);
const td__impl_entry *td__registry_impl(const td_registry *reg,
                                        const char *name);
/* The candidates of (op, target), NULL when there are none. */
const td__rkey *td__rules_find(const td_registry *reg, const char *op,
                               const char *target);
void td__rules_free(td__rules *r);
void td__ventry_free(td__ventry *e);
/* Frees n bound predicates and the array. */
void td__rule_preds_free(td__rule_pred *preds, size_t n);

/* The file name diagnostics give the built-in rules: the source file they
 * are compiled from (installed as share/tiledispatch/rules.yaml). */
#define TD__BUILTIN_RULES_NAME "rules/rules.yaml"

/* hint.c: the tail of a message about an unknown name, written into buf:
 * " (did you mean 'x'?)" when td_suggest finds a close candidate (or one
 * differing only in case), else " (expected one of: a, b)" for a short
 * list, else "". */
void td__hint(char *buf, size_t cap, const char *name,
              const char *const *cands, size_t n);
typedef enum td__names {
    TD__NAMES_OPS,
    TD__NAMES_PREDS,
    TD__NAMES_IMPLS,
    TD__NAMES_TARGETS /* the targets the loaded rules name */
} td__names;
/* The registered names of one kind in *out (td__malloc'd; the strings
 * belong to the registry), their count; 0 and NULL when none or out of
 * memory (a hint is then simply left out). */
size_t td__registry_names(const td_registry *reg, td__names kind,
                          const char ***out);
/* td__hint over the registered names of one kind (the ops listed up to 40
 * of them, the other kinds up to 20). */
void td__registry_hint(const td_registry *reg, td__names kind,
                       const char *name, char *buf, size_t cap);
/* Looks up the call's op (*op) and checks its target against the targets
 * the rules name: "unknown op 'summ' (did you mean 'sum'?)" and "unknown
 * target 'rocm' (expected one of: cuda)" at the call's keys, TD_ENOENT. */
int td__call_names_check(const td_registry *reg, const td_call *call,
                         const char *file, const td_op_desc **op,
                         td_diag *diag);

/* builtin.c: registers the built-in ops, predicates and variant modules. */
int td__register_builtins(td_registry *reg);

/* dispatch.c: the (op, target) key of a call and the number of its
 * candidates that survive the enabled and forced-name filters (see
 * td__cand_keep).  When that number is 0, why holds "no registered variants
 * for this op/target" or "no variant named 'X' is registered".  The call's
 * op must be registered (the caller checks). */
size_t td__call_candidates(const td_registry *reg, const td_call *call,
                           const td__rkey **key, char *why, size_t cap);
bool td__cand_keep(const td__ventry *e, const td_call *call);
/* Whether e passes the call's forced-name filter (enabled or not). */
bool td__cand_named(const td__ventry *e, const td_call *call);

/*
 * select.c: the op's operand check, before any candidate is tried: the
 * op's own check when it has one, else for a reduction "exactly one region
 * source and no extras".  Returns 0, or TD_ESCHEMA with diag holding
 * "op 'OP': REASON" at the position the check gave (the op's position by
 * default) in `file`.
 */
int td__op_check(const td_call *call, const td_op_desc *op, const char *file,
                 td_diag *diag);

/* select.c: the one selection loop (see there).  An observer sees each
 * candidate; with `all`, every predicate of every candidate is evaluated
 * and candidates after the winner are reported as not tried.  Callbacks
 * return 0 or a negative code that stops the loop and is returned. */
typedef struct td__sel_obs {
    bool all;
    void *ctx;
    /* a candidate's predicates are about to run */
    int (*begin)(void *ctx, const td__ventry *e);
    /* predicate i of e answered (reason "" when ok) */
    int (*pred)(void *ctx, const td__ventry *e, size_t i, bool ok,
                const char *reason);
    /* e's outcome: rc is the emitter's code (SELECTED, DECLINED, FAILED)
     * or, for NOT_TRIED, 1 when an earlier emitter failed; reason is the
     * emitter's or the plan's */
    int (*cand)(void *ctx, const td__ventry *e, td_cand_status st, int rc,
                const char *reason);
} td__sel_obs;

typedef struct td__sel_result {
    const td__ventry *winner; /* NULL when nothing won */
    td_ir *ir;                /* the winner's IR, owned by the caller */
    const td__ventry *failed; /* the candidate whose emitter failed */
    int rc;                   /* 0, TD_ENOMATCH or the failing code */
    td_reason why;            /* the failing emitter's reason */
} td__sel_result;

/* A module's plan (when it has one) then its emitter, as the selection
 * loop runs them, for callers that hold a descriptor rather than a rules
 * entry (tests, tools): 0, TD_EDECLINED or an error with the reason. */
int td__impl_emit(const td_impl_desc *d, const td_call *call,
                  const td_op_desc *op, td_ir *ir, td_reason *why);

/* Returns 0 (the outcome in *res) or a negative code (out of memory, or
 * an observer's code); op must be the call's registered op. */
int td__select(const td__rkey *key, const td_call *call, const td_op_desc *op,
               const td__sel_obs *obs, td__sel_result *res);
/* Copies a fixed-size call field that may lack its NUL. */
void td__call_field(char *dst, const char *src);

#endif
