/*
 * Dispatch (contract section 4): the first candidate, in try order, whose
 * predicates all pass and whose emitter accepts the call wins.
 *
 * This is the fast path: the selection loop (select.c) runs without an
 * observer, so predicates stop at the first failure and nothing is
 * allocated until an emitter runs.  The full table of reasons is
 * explain.c's job, over the same loop.
 */
#include <stdio.h>
#include <string.h>

#include "registry_internal.h"

int td_dispatch(const td_registry *reg, const td_call *call,
                td_dispatch_result *res, td_diag *diag)
{
    if (res != NULL)
        memset(res, 0, sizeof *res);
    if (reg == NULL || call == NULL || res == NULL)
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    char op_name[TD_NAME_MAX], file[sizeof call->file];
    td__call_field(op_name, call->op);
    memcpy(file, call->file, sizeof file);
    file[sizeof file - 1] = '\0';

    const td_op_desc *op = NULL;
    int rc = td__call_names_check(reg, call, file, &op, diag);
    if (rc != 0)
        return rc;
    rc = td__op_check(call, op, file, diag);
    if (rc != 0)
        return rc;

    const td__rkey *key;
    char why_empty[TD_DIAG_MSG_MAX];
    if (td__call_candidates(reg, call, &key, why_empty, sizeof why_empty) ==
        0) {
        td_pos at = call->dispatch[0] ? call->pos_dispatch : call->pos_target;
        return td__fail_at(diag, TD_ENOMATCH, TD_AT(file, at.line, at.col),
                           "%s", why_empty);
    }

    td__sel_result sel;
    rc = td__select(key, call, op, NULL, &sel);
    if (rc != 0)
        return td__fail(diag, rc, file, "%s", td_strerror(rc));
    if (sel.winner != NULL) {
        res->variant = sel.winner->name;
        res->impl = sel.winner->impl_name;
        res->priority = sel.winner->priority;
        res->ir = sel.ir;
        return 0;
    }
    if (sel.failed != NULL)
        return td__fail_at(
            diag, sel.rc, TD_AT(file, call->pos_op.line, call->pos_op.col),
            "variant '%s' failed: %s: %s", sel.failed->name,
            td_err_name(sel.rc),
            sel.why.text[0] ? sel.why.text : td_strerror(sel.rc));
    char target[TD_NAME_MAX];
    td__call_field(target, call->target);
    return td__fail_at(
        diag, TD_ENOMATCH, TD_AT(file, call->pos_op.line, call->pos_op.col),
        "no variant matched op=%s target=%s (run explain for the "
        "reasons)",
        op_name, target);
}
