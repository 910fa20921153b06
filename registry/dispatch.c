/*
 * Dispatch (contract section 4): the first candidate, in try order, whose
 * predicates all pass and whose emitter accepts the call wins.
 *
 * This is the fast path: predicates stop at the first failure and nothing
 * is allocated until an emitter runs (the reason lives on the stack).  The
 * full table of reasons is explain.c's job.
 */
#include <stdio.h>
#include <string.h>

#include "registry_internal.h"

void td__call_field(char *dst, const char *src)
{
    /* Call fields are TD_NAME_MAX arrays filled by a loader or by hand;
     * never read past the array even when the NUL is missing. */
    size_t n = 0;
    while (n < TD_NAME_MAX - 1 && src[n] != '\0')
        n++;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

bool td__cand_keep(const td__ventry *e, const td_call *call)
{
    if (!e->enabled)
        return false;
    if (call->dispatch[0] == '\0')
        return true;
    char forced[TD_NAME_MAX];
    td__call_field(forced, call->dispatch);
    return strcmp(e->name, forced) == 0;
}

size_t td__call_candidates(const td_registry *reg, const td_call *call,
                           const td__rkey **key, char *why, size_t cap)
{
    char op[TD_NAME_MAX], target[TD_NAME_MAX];
    td__call_field(op, call->op);
    td__call_field(target, call->target);
    *key = td__rules_find(reg, op, target);
    size_t n = 0;
    if (*key != NULL)
        for (size_t i = 0; i < (*key)->n; i++)
            n += td__cand_keep((*key)->cands[i], call);
    if (n == 0 && why != NULL && cap > 0) {
        size_t total = *key != NULL ? (*key)->n : 0;
        if (call->dispatch[0] == '\0') {
            if (total == 0)
                td__strlcpy(why, "no registered variants for this op/target",
                            cap);
            else
                snprintf(why, cap,
                         "no enabled variants for this op/target (%zu "
                         "disabled)",
                         total);
        } else {
            /* A forced name: say whether it is disabled here or not an
             * entry of this (op, target) at all. */
            char forced[TD_NAME_MAX];
            td__call_field(forced, call->dispatch);
            bool disabled = false;
            for (size_t i = 0; i < total; i++)
                disabled |= strcmp((*key)->cands[i]->name, forced) == 0;
            if (disabled)
                snprintf(why, cap,
                         "variant '%s' is disabled in the rules for op=%s "
                         "target=%s",
                         forced, op, target);
            else
                snprintf(why, cap,
                         "no variant named '%s' is registered for op=%s "
                         "target=%s",
                         forced, op, target);
        }
    }
    return n;
}

/* Evaluates the predicates of e in order, stopping at the first failure. */
static bool preds_pass(const td__ventry *e, const td_call *call)
{
    td_reason why;
    for (size_t i = 0; i < e->npreds; i++) {
        const td__rule_pred *rp = &e->preds[i];
        why.text[0] = '\0';
        if (!rp->pred->desc.fn(call, &rp->args, rp->pred->desc.user, &why))
            return false;
    }
    return true;
}

int td_dispatch(const td_registry *reg, const td_call *call,
                td_dispatch_result *res, td_diag *diag)
{
    if (res != NULL)
        memset(res, 0, sizeof *res);
    if (reg == NULL || call == NULL || res == NULL)
        return td__diag(diag, TD_EINVAL, NULL, 0, 0, NULL, 0,
                        "invalid argument");
    char op_name[TD_NAME_MAX], file[sizeof call->file];
    td__call_field(op_name, call->op);
    memcpy(file, call->file, sizeof file);
    file[sizeof file - 1] = '\0';

    const td_op_desc *op = td_registry_op(reg, op_name);
    if (op == NULL)
        return td__diag(diag, TD_ENOENT, file, call->pos_op.line,
                        call->pos_op.col, NULL, 0, "unknown op '%s'", op_name);

    const td__rkey *key;
    char why_empty[TD_DIAG_MSG_MAX];
    if (td__call_candidates(reg, call, &key, why_empty, sizeof why_empty) ==
        0) {
        td_pos at = call->dispatch[0] ? call->pos_dispatch : call->pos_target;
        return td__diag(diag, TD_ENOMATCH, file, at.line, at.col, NULL, 0,
                        "%s", why_empty);
    }

    for (size_t i = 0; i < key->n; i++) {
        const td__ventry *e = key->cands[i];
        if (!td__cand_keep(e, call) || !preds_pass(e, call))
            continue;
        td_ir *ir = td_ir_new();
        if (ir == NULL)
            return td__diag(diag, TD_ENOMEM, file, 0, 0, NULL, 0,
                            "out of memory");
        td_reason why;
        why.text[0] = '\0';
        int rc = e->impl->desc.emit(call, op, ir, e->impl->desc.user, &why);
        if (rc == 0)
            rc = td_ir_status(ir);
        if (rc == TD_EDECLINED) {
            td_ir_free(ir);
            continue;
        }
        if (rc != 0) {
            td_ir_free(ir);
            if (why.text[0])
                return td__diag(diag, rc, file, call->pos_op.line,
                                call->pos_op.col, NULL, 0,
                                "variant '%s' failed: %s: %s", e->name,
                                td_err_name(rc), why.text);
            return td__diag(diag, rc, file, call->pos_op.line,
                            call->pos_op.col, NULL, 0,
                            "variant '%s' failed: %s: %s", e->name,
                            td_err_name(rc), td_strerror(rc));
        }
        res->variant = e->name;
        res->impl = e->impl_name;
        res->priority = e->priority;
        res->ir = ir;
        return 0;
    }
    char target[TD_NAME_MAX];
    td__call_field(target, call->target);
    return td__diag(diag, TD_ENOMATCH, file, call->pos_op.line,
                    call->pos_op.col, NULL, 0,
                    "no variant matched op=%s target=%s (run explain for the "
                    "reasons)",
                    op_name, target);
}
