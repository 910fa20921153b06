/*
 * Operand-shape checks shared by op front ends: whether a call has exactly
 * one region source and no extras, the shape that reductions and copy
 * take; whether its config keys are the op's.  The reasons follow
 * upstream TIRx's front-end wording, and the position points at the
 * offending operand where the call file gave one.
 */
#include <stdio.h>

#include "args.h"

const char *td__operand_kind_name(td_operand_kind k)
{
    switch (k) {
    case TD_OPERAND_REGION:
        return "a region";
    case TD_OPERAND_LITERAL:
        return "a literal";
    case TD_OPERAND_SCALAR:
        return "a named scalar";
    default:
        return "absent";
    }
}

bool td__one_region_source(const td_call *call, td_pos *where,
                           td_reason *why)
{
    if (call->nsrcs != 1) {
        if (call->nsrcs > 1 && call->nsrcs <= TD_MAX_SRCS &&
            call->srcs[1].pos.line > 0)
            *where = call->srcs[1].pos;
        else if (call->pos_srcs.line > 0)
            *where = call->pos_srcs;
        if (call->nsrcs == 0)
            td_reason_set(why, "expects one source region, got none");
        else
            td_reason_set(why, "expects one source region, got %d operands",
                          call->nsrcs);
        return false;
    }
    if (call->srcs[0].kind != TD_OPERAND_REGION) {
        if (call->srcs[0].pos.line > 0)
            *where = call->srcs[0].pos;
        td_reason_set(why, "expects a source region, not %s",
                      td__operand_kind_name(call->srcs[0].kind));
        return false;
    }
    return td__no_extras(call, where, why);
}

bool td__no_extras(const td_call *call, td_pos *where, td_reason *why)
{
    if (call->bias.kind == TD_OPERAND_NONE &&
        call->scale.kind == TD_OPERAND_NONE)
        return true;
    const td_operand *x =
        call->bias.kind != TD_OPERAND_NONE ? &call->bias : &call->scale;
    if (x->pos.line > 0)
        *where = x->pos;
    else if (call->pos_extras.line > 0)
        *where = call->pos_extras;
    td_reason_set(why, "takes no extras, got '%s'",
                  x == &call->bias ? "bias" : "scale");
    return false;
}

bool td__known_config(const td_call *call, const td_op_desc *op,
                      const char *const *known, size_t nknown, td_pos *where,
                      td_reason *why)
{
    int n = call->nconfig < 0 ? 0
            : call->nconfig > TD_MAX_CONFIG ? TD_MAX_CONFIG
                                            : call->nconfig;
    for (int i = 0; i < n; i++) {
        const td_config_entry *e = &call->config[i];
        bool ok = false;
        for (size_t k = 0; !ok && k < nknown; k++)
            ok = strncmp(e->key, known[k], TD_NAME_MAX) == 0;
        if (ok)
            continue;
        if (e->key_pos.line > 0)
            *where = e->key_pos;
        else if (e->pos.line > 0)
            *where = e->pos;
        char list[TD_REASON_MAX / 2];
        size_t len = 0;
        list[0] = '\0';
        for (size_t k = 0; k < nknown && len < sizeof list; k++) {
            int w = snprintf(list + len, sizeof list - len, "%s%s",
                             k ? ", " : "", known[k]);
            len += w > 0 ? (size_t)w : 0;
        }
        if (nknown > 0)
            td_reason_set(why, "unknown config key '%.*s' (known: %s)",
                          TD__FIELD(e->key), list);
        else
            td_reason_set(why, "unknown config key '%.*s' (%s takes no "
                               "config keys)",
                          TD__FIELD(e->key), op->name);
        return false;
    }
    return true;
}
