/*
 * Explain: the slow path of dispatch that records why every candidate was
 * or was not chosen, and formats that as the table of contract section 4
 * (upstream's format, reference section 1.5) or as JSON.
 *
 * Unlike td_dispatch, every predicate of every candidate is evaluated, also
 * after a failure and also for candidates after the winner, so that the
 * table shows all reasons at once.  Emitters run in try order until one
 * accepts, exactly as in td_dispatch, so both agree on the winner.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_internal.h"

#define EM_DASH "\xe2\x80\x94"

struct td_explain {
    char *op;
    char *target;
    char *script;        /* the call as one line of script */
    char *empty_reason;  /* "" when there are rows */
    size_t nrows;
    td_explain_row *rows;
    bool *failed_before; /* per row: not tried because an emitter failed */
    long selected;       /* row index, -1 when nothing won */
};

void td_explain_free(td_explain *ex)
{
    if (ex == NULL)
        return;
    for (size_t i = 0; i < ex->nrows; i++) {
        td_explain_row *r = &ex->rows[i];
        for (size_t k = 0; k < r->npreds; k++)
            td__free((char *)r->preds[k].reason);
        td__free((void *)r->preds);
        td__free((char *)r->variant);
        td__free((char *)r->message);
    }
    td__free(ex->rows);
    td__free(ex->failed_before);
    td__free(ex->op);
    td__free(ex->target);
    td__free(ex->script);
    td__free(ex->empty_reason);
    td__free(ex);
}

size_t td_explain_nrows(const td_explain *ex)
{
    return ex ? ex->nrows : 0;
}

const td_explain_row *td_explain_get(const td_explain *ex, size_t i)
{
    return ex && i < ex->nrows ? &ex->rows[i] : NULL;
}

const td_explain_row *td_explain_selected(const td_explain *ex)
{
    return ex && ex->selected >= 0 ? &ex->rows[ex->selected] : NULL;
}

const char *td_explain_empty_reason(const td_explain *ex)
{
    return ex ? ex->empty_reason : "";
}

/* The call's script line, as the call module writes it. */
static char *call_script(const td_call *call)
{
    char small[256];
    size_t need = td_call_format_script(call, small, sizeof small);
    if (need < sizeof small)
        return td__strdup(small);
    char *s = td__malloc(need + 1);
    if (s != NULL)
        td_call_format_script(call, s, need + 1);
    return s;
}

/* "rejected: a — r; rejected: b" for the failed predicates of r. */
static void put_rejections(td_buf *b, const td_explain_row *r)
{
    bool first = true;
    for (size_t i = 0; i < r->npreds; i++) {
        if (r->preds[i].ok)
            continue;
        if (!first)
            td__buf_puts(b, "; ");
        first = false;
        td__buf_printf(b, "rejected: %s", r->preds[i].name);
        if (r->preds[i].reason[0])
            td__buf_printf(b, " " EM_DASH " %s", r->preds[i].reason);
    }
}

/* The observer of the selection loop that fills the rows. */
typedef struct builder {
    td_explain *ex;
    size_t cap;
    td_explain_row *cur;
} builder;

static int on_begin(void *ctx, const td__ventry *e)
{
    builder *b = ctx;
    td_explain *ex = b->ex;
    if (ex->nrows == b->cap)
        return TD_EINTERNAL; /* more candidates than counted */
    td_explain_row *r = &ex->rows[ex->nrows++];
    b->cur = r;
    r->priority = e->priority;
    r->variant = td__strdup(e->name);
    if (r->variant == NULL)
        return TD_ENOMEM;
    td_pred_outcome *po = td__calloc(e->npreds ? e->npreds : 1, sizeof *po);
    if (po == NULL)
        return TD_ENOMEM;
    r->preds = po;
    return 0;
}

static int on_pred(void *ctx, const td__ventry *e, size_t i, bool ok,
                   const char *reason)
{
    builder *b = ctx;
    td_pred_outcome *po = (td_pred_outcome *)b->cur->preds;
    po[i].name = e->preds[i].pred->desc.name;
    po[i].ok = ok;
    /* A passing predicate has no reason worth showing. */
    po[i].reason = td__strdup(ok ? "" : reason);
    b->cur->npreds++;
    return po[i].reason == NULL ? TD_ENOMEM : 0;
}

static int on_cand(void *ctx, const td__ventry *e, td_cand_status st, int rc,
                   const char *reason)
{
    (void)e;
    builder *b = ctx;
    td_explain *ex = b->ex;
    if (st == TD_CAND_DISABLED)
        return 0; /* listed by `rules`, not by this table */
    td_explain_row *r = b->cur;
    r->status = st;
    td_buf msg;
    td__buf_init(&msg);
    switch (st) {
    case TD_CAND_SELECTED:
        ex->selected = (long)(ex->nrows - 1);
        break;
    case TD_CAND_DECLINED:
        td__buf_puts(&msg, "declined");
        if (reason[0])
            td__buf_printf(&msg, " " EM_DASH " %s", reason);
        break;
    case TD_CAND_FAILED:
        td__buf_printf(&msg, "failed " EM_DASH " %s: %s", td_err_name(rc),
                       reason[0] ? reason : td_strerror(rc));
        break;
    case TD_CAND_NOT_TRIED:
        ex->failed_before[ex->nrows - 1] = rc != 0;
        put_rejections(&msg, r);
        break;
    default:
        put_rejections(&msg, r);
        break;
    }
    char *m;
    int trc = td__buf_take(&msg, &m);
    if (trc != 0)
        return trc;
    r->message = m;
    return 0;
}

static int build(td_explain *ex, const td_registry *reg, const td_call *call,
                 const td_op_desc *op)
{
    const td__rkey *key;
    char why_empty[TD_DIAG_MSG_MAX];
    size_t n = td__call_candidates(reg, call, &key, why_empty,
                                   sizeof why_empty);
    ex->empty_reason = td__strdup(n == 0 ? why_empty : "");
    if (ex->empty_reason == NULL)
        return TD_ENOMEM;
    if (n == 0)
        return 0;
    ex->rows = td__calloc(n, sizeof *ex->rows);
    ex->failed_before = td__calloc(n, sizeof *ex->failed_before);
    if (ex->rows == NULL || ex->failed_before == NULL)
        return TD_ENOMEM;
    builder b = {.ex = ex, .cap = n};
    td__sel_obs obs = {.all = true, .ctx = &b, .begin = on_begin,
                       .pred = on_pred, .cand = on_cand};
    td__sel_result sel;
    int rc = td__select(key, call, op, &obs, &sel);
    /* The winner's IR is not part of an explanation. */
    td_ir_free(sel.ir);
    return rc;
}

int td_explain_call(const td_registry *reg, const td_call *call,
                    td_explain **out, td_diag *diag)
{
    if (out != NULL)
        *out = NULL;
    if (reg == NULL || call == NULL || out == NULL)
        return td__diag(diag, TD_EINVAL, NULL, 0, 0, NULL, 0,
                        "invalid argument");
    char op_name[TD_NAME_MAX], target[TD_NAME_MAX], file[sizeof call->file];
    td__call_field(op_name, call->op);
    td__call_field(target, call->target);
    memcpy(file, call->file, sizeof file);
    file[sizeof file - 1] = '\0';
    const td_op_desc *op = td_registry_op(reg, op_name);
    if (op == NULL)
        return td__diag(diag, TD_ENOENT, file, call->pos_op.line,
                        call->pos_op.col, NULL, 0, "unknown op '%s'", op_name);

    td_explain *ex = td__calloc(1, sizeof *ex);
    if (ex == NULL)
        return td__diag(diag, TD_ENOMEM, NULL, 0, 0, NULL, 0, "out of memory");
    ex->selected = -1;
    ex->op = td__strdup(op_name);
    ex->target = td__strdup(target);
    ex->script = call_script(call);
    int rc = TD_ENOMEM;
    if (ex->op != NULL && ex->target != NULL && ex->script != NULL)
        rc = build(ex, reg, call, op);
    if (rc != 0) {
        td_explain_free(ex);
        return td__diag(diag, rc, NULL, 0, 0, NULL, 0, "%s", td_strerror(rc));
    }
    *out = ex;
    return 0;
}

/* ---- formatting -------------------------------------------------------- */

/* The error-column lines of row i, written one by one through `line`. */
typedef void (*line_fn)(void *ctx, const char *s, size_t n);

static void row_lines(const td_explain *ex, size_t i, td_buf *tmp,
                      line_fn line, void *ctx)
{
    const td_explain_row *r = &ex->rows[i];
    tmp->len = 0;
    if (tmp->data)
        tmp->data[0] = '\0';
    switch (r->status) {
    case TD_CAND_SELECTED:
        td__buf_puts(tmp, "selected");
        break;
    case TD_CAND_NOT_TRIED:
        td__buf_puts(tmp, ex->failed_before[i]
                              ? "not tried (an earlier candidate failed)"
                              : "not tried (an earlier candidate won)");
        if (r->message[0])
            td__buf_printf(tmp, "; %s", r->message);
        break;
    default:
        td__buf_puts(tmp, r->message);
        break;
    }
    if (tmp->err)
        return;
    line(ctx, tmp->data ? tmp->data : "", tmp->len);
    line(ctx, "opcall:", 7);
    /* The script may hold several lines; each gets its own table line. */
    const char *s = ex->script;
    for (;;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        line(ctx, s, n);
        if (nl == NULL)
            break;
        s = nl + 1;
    }
}

/* Code points of the first n bytes of s. */
static size_t width_n(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            w++;
    return w;
}

static void measure(void *ctx, const char *s, size_t n)
{
    size_t *w = ctx, k = width_n(s, n);
    if (k > *w)
        *w = k;
}

typedef struct emit_ctx {
    td_buf *out;
    size_t vw, ew;
    const char *label; /* for the next line, then "" */
} emit_ctx;

static void pad(td_buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        td__buf_append(b, " ", 1);
}

static void content(td_buf *b, size_t vw, size_t ew, const char *c1,
                    size_t n1, const char *c2, size_t n2)
{
    td__buf_puts(b, "| ");
    td__buf_append(b, c1, n1);
    pad(b, vw - width_n(c1, n1));
    td__buf_puts(b, " | ");
    td__buf_append(b, c2, n2);
    pad(b, ew - width_n(c2, n2));
    td__buf_puts(b, " |\n");
}

static void emit_line(void *vctx, const char *s, size_t n)
{
    emit_ctx *c = vctx;
    content(c->out, c->vw, c->ew, c->label, strlen(c->label), s, n);
    c->label = "";
}

static void border(td_buf *b, size_t vw, size_t ew)
{
    td__buf_puts(b, "+");
    for (size_t i = 0; i < vw + 2; i++)
        td__buf_append(b, "-", 1);
    td__buf_puts(b, "+");
    for (size_t i = 0; i < ew + 2; i++)
        td__buf_append(b, "-", 1);
    td__buf_puts(b, "+\n");
}

static void format_text(const td_explain *ex, td_buf *b)
{
    const td_explain_row *sel = td_explain_selected(ex);
    if (sel != NULL)
        td__buf_printf(b, "dispatch: op=%s target=%s selected=%s\n", ex->op,
                       ex->target, sel->variant);
    else
        td__buf_printf(b, "dispatch failed: op=%s target=%s\n", ex->op,
                       ex->target);
    if (ex->nrows == 0) {
        td__buf_printf(b, "%s\n", ex->empty_reason);
        return;
    }

    char (*labels)[TD_NAME_MAX + 32] = td__calloc(ex->nrows, sizeof *labels);
    if (labels == NULL) {
        b->err = TD_ENOMEM;
        return;
    }
    td_buf tmp;
    td__buf_init(&tmp);
    size_t vw = strlen("Variant"), ew = strlen("Error");
    for (size_t i = 0; i < ex->nrows; i++) {
        snprintf(labels[i], sizeof labels[i], "%s (prio=%d)",
                 ex->rows[i].variant, ex->rows[i].priority);
        measure(&vw, labels[i], strlen(labels[i]));
        row_lines(ex, i, &tmp, measure, &ew);
    }
    border(b, vw, ew);
    content(b, vw, ew, "Variant", 7, "Error", 5);
    border(b, vw, ew);
    for (size_t i = 0; i < ex->nrows; i++) {
        emit_ctx c = {b, vw, ew, labels[i]};
        row_lines(ex, i, &tmp, emit_line, &c);
    }
    border(b, vw, ew);
    if (tmp.err && !b->err)
        b->err = tmp.err;
    td__buf_free(&tmp);
    td__free(labels);
}

static void format_json(const td_explain *ex, td_buf *b)
{
    const td_explain_row *sel = td_explain_selected(ex);
    td__buf_puts(b, "{\"op\":");
    td__buf_json_str(b, ex->op);
    td__buf_puts(b, ",\"target\":");
    td__buf_json_str(b, ex->target);
    td__buf_puts(b, ",\"selected\":");
    if (sel != NULL)
        td__buf_json_str(b, sel->variant);
    else
        td__buf_puts(b, "null");
    td__buf_puts(b, ",\"empty_reason\":");
    td__buf_json_str(b, ex->empty_reason);
    td__buf_puts(b, ",\"candidates\":[");
    for (size_t i = 0; i < ex->nrows; i++) {
        const td_explain_row *r = &ex->rows[i];
        td__buf_puts(b, i ? ",{\"variant\":" : "{\"variant\":");
        td__buf_json_str(b, r->variant);
        td__buf_printf(b, ",\"priority\":%d,\"status\":", r->priority);
        td__buf_json_str(b, td_cand_status_name(r->status));
        td__buf_puts(b, ",\"message\":");
        td__buf_json_str(b, r->message);
        td__buf_puts(b, ",\"predicates\":[");
        for (size_t k = 0; k < r->npreds; k++) {
            td__buf_puts(b, k ? ",{\"name\":" : "{\"name\":");
            td__buf_json_str(b, r->preds[k].name);
            td__buf_printf(b, ",\"ok\":%s,\"reason\":",
                           r->preds[k].ok ? "true" : "false");
            td__buf_json_str(b, r->preds[k].reason);
            td__buf_puts(b, "}");
        }
        td__buf_puts(b, "]}");
    }
    td__buf_puts(b, "]}\n");
}

int td_explain_format(const td_explain *ex, bool json, char **out)
{
    if (out == NULL)
        return TD_EINVAL;
    *out = NULL;
    if (ex == NULL)
        return TD_EINVAL;
    td_buf b;
    td__buf_init(&b);
    if (json)
        format_json(ex, &b);
    else
        format_text(ex, &b);
    /* The caller frees the text with free() (td_registry.h), so it is
     * handed over in malloc() memory whatever allocator is installed. */
    int rc = b.err;
    if (rc == 0) {
        size_t n = b.data != NULL ? b.len : 0;
        char *s = malloc(n + 1);
        if (s == NULL) {
            rc = TD_ENOMEM;
        } else {
            if (n > 0)
                memcpy(s, b.data, n);
            s[n] = '\0';
            *out = s;
        }
    }
    td__buf_free(&b);
    return rc;
}
