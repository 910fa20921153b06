/*
 * Selection: the one loop that walks the candidates of a call in try order
 * and decides the winner.  td_dispatch runs it bare (predicates stop at the
 * first failure, the loop stops at the winner, nothing is allocated until
 * an emitter runs); td_explain runs it with an observer that sees every
 * predicate of every candidate and every candidate after the winner.  Both
 * therefore agree on the winner by construction.
 *
 * Per candidate: its predicates in `when:` order; the module's plan (from
 * its plan predicate when the rules list it, else just before the
 * emitter); then the emitter, with the plan.
 */
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "registry_internal.h"

/* ---- candidates ------------------------------------------------------- */

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

bool td__cand_named(const td__ventry *e, const td_call *call)
{
    if (call->dispatch[0] == '\0')
        return true;
    char forced[TD_NAME_MAX];
    td__call_field(forced, call->dispatch);
    return strcmp(e->name, forced) == 0;
}

bool td__cand_keep(const td__ventry *e, const td_call *call)
{
    return e->enabled && td__cand_named(e, call);
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
            else {
                /* The close name among this key's entries, if any. */
                const char *names[64];
                size_t nn = 0;
                for (size_t i = 0; i < total && nn < 64; i++)
                    names[nn++] = (*key)->cands[i]->name;
                const char *best = td_suggest(forced, names, nn);
                snprintf(why, cap,
                         "no variant named '%s' is registered for op=%s "
                         "target=%s%s%s%s",
                         forced, op, target,
                         best != NULL ? " (did you mean '" : "",
                         best != NULL ? best : "", best != NULL ? "'?)" : "");
            }
        }
    }
    return n;
}

/* ---- the op's operand check --------------------------------------------- */

/* What a reduction takes: one region source, no extras.  A call built by
 * hand before srcs existed (nsrcs 0, its src region naming a buffer) is
 * one region source. */
static bool reduction_check(const td_call *call, td_pos *where,
                            td_reason *why)
{
    bool hand_built = call->nsrcs == 0 && call->src.buffer >= 0 &&
                      call->src.buffer < call->nbuffers;
    /* (loaded calls without a source have src.buffer -1) */
    if (hand_built)
        return td__no_extras(call, where, why);
    return td__one_region_source(call, where, why);
}

int td__op_check(const td_call *call, const td_op_desc *op, const char *file,
                 td_diag *diag)
{
    td_pos where = call->pos_op;
    td_reason why;
    why.text[0] = '\0';
    bool ok = true;
    /* A confined dtype where no op allows it (a call built by hand: the
     * loader refuses it in a call file). */
    int bi;
    td_pos at;
    if (!td__confined_dtypes_ok(call, &bi, &at, why.text, sizeof why.text)) {
        ok = false;
        if (at.line > 0)
            where = at;
    } else if (op->check != NULL)
        ok = op->check(call, op, &where, &why);
    else if (op->kind == TD_OP_KIND_REDUCTION)
        ok = reduction_check(call, &where, &why);
    if (ok)
        return 0;
    if (where.line <= 0)
        where = call->pos_op;
    return td__fail_at(diag, TD_ESCHEMA, TD_AT(file, where.line, where.col),
                       "op '%s': %s", op->name,
                       why.text[0] ? why.text
                                   : "the call's operands do not fit the op");
}

/* ---- the loop ------------------------------------------------------------ */

/* One plan buffer per selection, on the stack: the fast path allocates
 * nothing. */
typedef struct plan_buf {
    alignas(max_align_t) unsigned char bytes[TD_PLAN_MAX];
} plan_buf;

static bool is_plan_pred(const td__ventry *e, const td__rule_pred *rp)
{
    return e->impl->plan_pred != NULL && rp->pred == e->impl->plan_pred;
}

/* Runs the module's plan into pb; 0, TD_EDECLINED or an error (why may
 * be NULL for a built-in module: nobody reads the reason). */
static int make_plan(const td__ventry *e, const td_call *call,
                     const td_op_desc *op, plan_buf *pb, td_reason *why)
{
    const td_impl_desc *d = &e->impl->desc;
    /* Not cleared: a plan can be large (local's is ~13 KiB) and the fast
     * path must not pay for it; plan functions write what they use. */
    if (why != NULL)
        why->text[0] = '\0';
    return d->plan(call, op, pb->bytes, d->user, why);
}

/*
 * The predicates of e.  Returns the number that failed (stopping at the
 * first unless the observer wants all), or a negative error from a plan.
 * *planned is set when a plan predicate passed and filled pb.
 */
static int run_preds(const td__ventry *e, const td_call *call,
                     const td_op_desc *op, const td__sel_obs *obs,
                     plan_buf *pb, bool *planned)
{
    int failed = 0;
    *planned = false;
    for (size_t i = 0; i < e->npreds; i++) {
        const td__rule_pred *rp = &e->preds[i];
        td_reason why;
        why.text[0] = '\0';
        /* Without an observer a failure's reason is dropped: built-in
         * predicates then get none to format (most of a rejected
         * candidate's cost was its printf). */
        td_reason *w = obs == NULL && rp->pred->quiet_ok ? NULL : &why;
        bool ok;
        if (is_plan_pred(e, rp) && !*planned) {
            int rc = make_plan(e, call, op, pb, w);
            if (rc != 0 && rc != TD_EDECLINED)
                return rc;
            ok = rc == 0;
            *planned = ok;
        } else {
            ok = rp->pred->desc.fn(call, &rp->args, rp->pred->desc.user, w);
        }
        if (obs != NULL && obs->pred != NULL) {
            int rc = obs->pred(obs->ctx, e, i, ok, ok ? "" : why.text);
            if (rc != 0)
                return rc;
        }
        if (!ok) {
            failed++;
            if (obs == NULL || !obs->all)
                return failed;
        }
    }
    return failed;
}

int td__impl_emit(const td_impl_desc *d, const td_call *call,
                  const td_op_desc *op, td_ir *ir, td_reason *why)
{
    why->text[0] = '\0';
    if (d->plan == NULL)
        return d->emit(call, op, NULL, ir, d->user, why);
    if (d->plan_size == 0 || d->plan_size > TD_PLAN_MAX)
        return TD_EINVAL;
    plan_buf *pb = td__malloc(sizeof *pb);
    if (pb == NULL)
        return TD_ENOMEM;
    int rc = d->plan(call, op, pb->bytes, d->user, why);
    if (rc == 0)
        rc = d->emit(call, op, pb->bytes, ir, d->user, why);
    td__free(pb);
    return rc;
}

/* Plans (if not yet) and emits; 0, TD_EDECLINED or an error with the
 * reason in why.  On 0, *ir holds the IR. */
static int run_emit(const td__ventry *e, const td_call *call,
                    const td_op_desc *op, plan_buf *pb, bool planned,
                    td_ir **ir, td_reason *why)
{
    const td_impl_desc *d = &e->impl->desc;
    *ir = NULL;
    why->text[0] = '\0';
    if (d->plan != NULL && !planned) {
        int rc = make_plan(e, call, op, pb, why);
        if (rc != 0)
            return rc;
    }
    td_ir *out = td_ir_new();
    if (out == NULL)
        return TD_ENOMEM;
    int rc = d->emit(call, op, d->plan != NULL ? pb->bytes : NULL, out,
                     d->user, why);
    if (rc == 0)
        rc = td_ir_status(out);
    if (rc != 0) {
        td_ir_free(out);
        return rc;
    }
    *ir = out;
    return 0;
}

static int notify(const td__sel_obs *obs, const td__ventry *e,
                  td_cand_status st, int rc, const char *reason)
{
    if (obs == NULL || obs->cand == NULL)
        return 0;
    return obs->cand(obs->ctx, e, st, rc, reason);
}

int td__select(const td__rkey *key, const td_call *call, const td_op_desc *op,
               const td__sel_obs *obs, td__sel_result *res)
{
    memset(res, 0, sizeof *res);
    res->rc = TD_ENOMATCH;
    plan_buf pb;
    bool done = false;     /* a candidate won or an emitter failed */
    bool failed = false;   /* ... and it was a failure */
    for (size_t i = 0; key != NULL && i < key->n; i++) {
        const td__ventry *e = key->cands[i];
        if (!td__cand_named(e, call))
            continue;
        if (!e->enabled) {
            int rc = notify(obs, e, TD_CAND_DISABLED, 0, "");
            if (rc != 0)
                return rc;
            continue;
        }
        if (done && (obs == NULL || !obs->all))
            break;
        if (obs != NULL && obs->begin != NULL) {
            int rc = obs->begin(obs->ctx, e);
            if (rc != 0)
                return rc;
        }
        bool planned;
        int nfailed = run_preds(e, call, op, obs, &pb, &planned);
        if (nfailed < 0)
            return nfailed;
        if (done) {
            int rc = notify(obs, e, TD_CAND_NOT_TRIED, failed ? 1 : 0, "");
            if (rc != 0)
                return rc;
            continue;
        }
        if (nfailed > 0) {
            int rc = notify(obs, e, TD_CAND_REJECTED, 0, "");
            if (rc != 0)
                return rc;
            continue;
        }
        td_ir *ir;
        td_reason why;
        int rc = run_emit(e, call, op, &pb, planned, &ir, &why);
        if (rc == TD_ENOMEM)
            return rc; /* not an answer about the call */
        td_cand_status st = rc == 0               ? TD_CAND_SELECTED
                            : rc == TD_EDECLINED ? TD_CAND_DECLINED
                                                  : TD_CAND_FAILED;
        int orc = notify(obs, e, st, rc, why.text);
        if (orc != 0) {
            td_ir_free(ir);
            return orc;
        }
        if (st == TD_CAND_DECLINED)
            continue;
        done = true;
        if (st == TD_CAND_SELECTED) {
            res->winner = e;
            res->ir = ir;
            res->rc = 0;
        } else {
            failed = true;
            res->failed = e;
            res->rc = rc;
            res->why = why;
        }
    }
    return 0;
}
