/*
 * Hints for unknown names: the "(did you mean 'x'?)" or "(expected one of:
 * a, b, c)" tail the registry's messages add after "unknown op 'summ'" and
 * the like, and the check of a call's op and target against what is
 * registered, which dispatch and explain share.  The closeness test is the
 * library's one, td_suggest; this file only gathers the candidates and
 * words the tail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "registry_internal.h"

/* Lists longer than this get only a "did you mean", never the full list;
 * except the ops, which a newcomer is most likely to guess at: every op of
 * the built-in families is listed (21 with gemm, a few more to come). */
#define LIST_MAX 20
#define OPS_LIST_MAX 40

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void hint_up_to(char *buf, size_t cap, const char *name,
                       const char *const *cands, size_t n, size_t list_max)
{
    if (cap == 0)
        return;
    buf[0] = '\0';
    const char *best = td_suggest(name, cands, n);
    if (best != NULL) {
        snprintf(buf, cap, " (did you mean '%s'?)", best);
        return;
    }
    /* A name that differs only in case: names are case-sensitive. */
    for (size_t i = 0; i < n; i++)
        if (cands[i] != NULL && strcasecmp(cands[i], name) == 0) {
            snprintf(buf, cap, " (did you mean '%s'? names are "
                               "case-sensitive)",
                     cands[i]);
            return;
        }
    if (n == 0 || n > list_max)
        return;
    const char **sorted = td__calloc(n, sizeof *sorted);
    if (sorted == NULL)
        return;
    memcpy(sorted, cands, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_str);
    size_t used = (size_t)snprintf(buf, cap, " (expected one of: ");
    const char *prev = NULL;
    for (size_t i = 0; i < n && used < cap; i++) {
        /* Skip NULLs and repeats (sorted, so repeats are adjacent). */
        if (sorted[i] == NULL || (prev != NULL && strcmp(prev, sorted[i]) == 0))
            continue;
        used += (size_t)snprintf(buf + used, cap - used, "%s%s",
                                 prev != NULL ? ", " : "", sorted[i]);
        prev = sorted[i];
    }
    if (used < cap)
        snprintf(buf + used, cap - used, ")");
    td__free(sorted);
}

void td__hint(char *buf, size_t cap, const char *name,
              const char *const *cands, size_t n)
{
    hint_up_to(buf, cap, name, cands, n, LIST_MAX);
}

size_t td__registry_names(const td_registry *reg, td__names kind,
                          const char ***out)
{
    *out = NULL;
    size_t n = 0;
    if (kind == TD__NAMES_OPS)
        n = HASH_COUNT(reg->ops);
    else if (kind == TD__NAMES_PREDS)
        n = HASH_COUNT(reg->preds);
    else if (kind == TD__NAMES_IMPLS)
        n = HASH_COUNT(reg->impls);
    else if (reg->rules != NULL)
        n = reg->rules->nentries;
    if (n == 0)
        return 0;
    const char **v = td__calloc(n, sizeof *v);
    if (v == NULL)
        return 0;
    size_t k = 0;
    if (kind == TD__NAMES_OPS) {
        for (const td__op_entry *e = reg->ops; e != NULL; e = e->hh.next)
            v[k++] = e->name;
    } else if (kind == TD__NAMES_PREDS) {
        for (const td__pred_entry *e = reg->preds; e != NULL; e = e->hh.next)
            v[k++] = e->desc.name;
    } else if (kind == TD__NAMES_IMPLS) {
        for (const td__impl_entry *e = reg->impls; e != NULL; e = e->hh.next)
            v[k++] = e->name;
    } else {
        /* Each target once, in the order the rules first name it. */
        for (size_t i = 0; i < n; i++) {
            const char *t = reg->rules->entries[i]->target;
            bool seen = false;
            for (size_t j = 0; j < k && !seen; j++)
                seen = strcmp(v[j], t) == 0;
            if (!seen)
                v[k++] = t;
        }
    }
    *out = v;
    return k;
}

void td__registry_hint(const td_registry *reg, td__names kind,
                       const char *name, char *buf, size_t cap)
{
    const char **names = NULL;
    size_t n = td__registry_names(reg, kind, &names);
    hint_up_to(buf, cap, name, names, n,
               kind == TD__NAMES_OPS ? OPS_LIST_MAX : LIST_MAX);
    td__free(names);
}

int td__call_names_check(const td_registry *reg, const td_call *call,
                         const char *file, const td_op_desc **op,
                         td_diag *diag)
{
    char op_name[TD_NAME_MAX], target[TD_NAME_MAX], hint[TD_DIAG_MSG_MAX];
    td__call_field(op_name, call->op);
    td__call_field(target, call->target);
    *op = td_registry_op(reg, op_name);
    if (*op == NULL) {
        td__registry_hint(reg, TD__NAMES_OPS, op_name, hint, sizeof hint);
        return td__fail_at(diag, TD_ENOENT,
                           TD_AT(file, call->pos_op.line, call->pos_op.col),
                           "unknown op '%s'%s", op_name, hint);
    }
    /* A target no rule names is a mistake in the call, not a call no
     * variant serves (with no rules at all, nothing is known). */
    const td__rules *r = reg->rules;
    bool known = r == NULL || r->nentries == 0;
    /* Dispatch's fast path allocates nothing: walk the entries. */
    for (size_t i = 0; !known && i < r->nentries; i++)
        known = strcmp(r->entries[i]->target, target) == 0;
    if (!known) {
        td__registry_hint(reg, TD__NAMES_TARGETS, target, hint, sizeof hint);
        return td__fail_at(diag, TD_ENOENT,
                           TD_AT(file, call->pos_target.line,
                                 call->pos_target.col),
                           "unknown target '%s'%s", target, hint);
    }
    return 0;
}
