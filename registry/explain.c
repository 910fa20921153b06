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
#include <stdalign.h>
#include <stdarg.h>
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
        /* the row's block: message, detail and reasons */
        td__free((char *)r->message);
    }
    td__free(ex->rows);
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

/* The call's script line, as the call module writes it, in the form of
 * the op's kind (a reduction's axes and accum; an elementwise op's
 * operands). */
static char *call_script(const td_call *call, const td_op_desc *op)
{
    td_script_form form = op->kind == TD_OP_KIND_REDUCTION
                              ? TD_SCRIPT_REDUCTION
                              : TD_SCRIPT_OPERANDS;
    char small[256];
    size_t need = td_call_format_script_as(call, form, small, sizeof small);
    if (need < sizeof small)
        return td__strdup(small);
    char *s = td__malloc(need + 1);
    if (s != NULL)
        td_call_format_script_as(call, form, s, need + 1);
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
        td__buf_printf(b, "rejected: %s", r->preds[i].shown);
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
    const td_pred_desc *pd = &e->preds[i].pred->desc;
    po[i].name = pd->name;
    po[i].shown = pd->shown_as != NULL ? pd->shown_as : pd->name;
    po[i].ok = ok;
    /* A passing predicate has no reason worth showing. */
    po[i].reason = td__strdup(ok ? "" : reason);
    /* Like the name, the bound arguments are the registry's. */
    po[i].args = e->preds[i].args_text ? e->preds[i].args_text : "";
    b->cur->npreds++;
    return po[i].reason == NULL ? TD_ENOMEM : 0;
}

/* Appends one reason of the text table's reasons column, NUL-terminated,
 * and counts it. */
static void put_reason(td_buf *b, size_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void put_reason(td_buf *b, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    td__buf_vprintf(b, fmt, ap);
    va_end(ap);
    td__buf_append(b, "", 1);
    (*n)++;
}

/* The reasons of r, made from its parts (detail: the row's, not yet
 * stored; extra: a declining emitter's further lines, '\n'-separated, or
 * NULL). */
static size_t put_reasons(td_buf *b, const td_explain_row *r,
                          const char *detail, const char *extra)
{
    size_t n = 0;
    switch (r->status) {
    case TD_CAND_SELECTED:
        if (r->npreds == 0)
            put_reason(b, &n, "no predicates; the emitter accepted");
        else
            put_reason(b, &n,
                       "%zu of %zu predicates passed; the emitter accepted",
                       r->npreds, r->npreds);
        if (detail[0])
            put_reason(b, &n, "note: %s", detail);
        break;
    case TD_CAND_REJECTED:
        for (size_t k = 0; k < r->npreds; k++) {
            const td_pred_outcome *po = &r->preds[k];
            if (po->ok)
                continue;
            if (po->reason[0])
                put_reason(b, &n, "%s: %s", po->name, po->reason);
            else
                put_reason(b, &n, "%s", po->name);
        }
        break;
    case TD_CAND_NOT_TRIED:
        put_reason(b, &n, "%s", r->after_failure
                                    ? "an earlier candidate failed"
                                    : "an earlier candidate won");
        break;
    case TD_CAND_DISABLED:
        put_reason(b, &n, "enabled: false in the rules (%s:%d)", r->file,
                   r->line);
        break;
    case TD_CAND_DECLINED:
        put_reason(b, &n, "%s", detail[0] ? detail : "no reason given");
        /* An emitter's account of its decline after the reason, one line
         * per reason (gemm's per-instruction checks): reasons of their
         * own, never part of the message. */
        for (const char *l = extra; l != NULL && *l != '\0';) {
            const char *nl = strchr(l, '\n');
            size_t len = nl ? (size_t)(nl - l) : strlen(l);
            if (len > 0)
                put_reason(b, &n, "%.*s", (int)len, l);
            l = nl ? nl + 1 : NULL;
        }
        break;
    case TD_CAND_FAILED:
        put_reason(b, &n, "%s: %s", td_err_name(r->error), detail);
        break;
    }
    return n;
}

static int on_cand(void *ctx, const td__ventry *e, td_cand_status st, int rc,
                   const char *reason)
{
    builder *b = ctx;
    td_explain *ex = b->ex;
    if (st == TD_CAND_DISABLED) {
        /* Never evaluated: a row without predicate outcomes. */
        int brc = on_begin(ctx, e);
        if (brc != 0)
            return brc;
    }
    td_explain_row *r = b->cur;
    /* A disabled row points at where it was disabled (the declaration or
     * the override that set enabled: false). */
    r->file = st == TD_CAND_DISABLED ? e->enabled_file : e->file;
    r->line = st == TD_CAND_DISABLED ? e->enabled_line : e->line;
    r->status = st;
    /* The parts first; the message and the reasons are made from them. */
    const char *detail = "";
    const char *extra = NULL;
    char first[TD_REASON_MAX];
    if (st == TD_CAND_DECLINED) {
        /* A decline's reason is its first line (TVM's words, where the
         * variant ports one); later lines are the emitter's account. */
        const char *nl = strchr(reason, '\n');
        detail = reason;
        if (nl != NULL) {
            size_t len = (size_t)(nl - reason);
            if (len >= sizeof first)
                len = sizeof first - 1;
            memcpy(first, reason, len);
            first[len] = '\0';
            detail = first;
            extra = nl + 1;
        }
    } else if (st == TD_CAND_FAILED) {
        r->error = rc;
        detail = reason[0] ? reason : td_strerror(rc);
    } else if (st == TD_CAND_NOT_TRIED) {
        r->after_failure = rc != 0;
    } else if (st == TD_CAND_SELECTED) {
        ex->selected = (long)(ex->nrows - 1);
        detail = reason; /* the emitter's note, if any */
    }
    /* One block per row holds the message, the detail, the reasons and
     * the array that points at them (freed with the message). */
    td_buf blk;
    td__buf_init(&blk);
    switch (st) {
    case TD_CAND_SELECTED:
        break;
    case TD_CAND_DECLINED:
        td__buf_puts(&blk, "declined");
        if (detail[0])
            td__buf_printf(&blk, " " EM_DASH " %s", detail);
        break;
    case TD_CAND_FAILED:
        td__buf_printf(&blk, "failed " EM_DASH " %s: %s",
                       td_err_name(r->error), detail);
        break;
    default:
        put_rejections(&blk, r);
        break;
    }
    td__buf_append(&blk, "", 1);
    size_t detail_at = blk.len;
    td__buf_puts(&blk, detail);
    td__buf_append(&blk, "", 1);
    size_t reasons_at = blk.len;
    size_t n = put_reasons(&blk, r, detail, extra);
    size_t ptrs_at = blk.len;
    while (ptrs_at % alignof(const char *) != 0)
        ptrs_at++;
    while (blk.len < ptrs_at + n * sizeof(const char *) && !blk.err)
        td__buf_append(&blk, "", 1);
    char *m;
    int trc = td__buf_take(&blk, &m);
    if (trc != 0)
        return trc;
    r->message = m;
    r->detail = m + detail_at;
    const char **ptrs = (const char **)(void *)(m + ptrs_at);
    const char *p = m + reasons_at;
    for (size_t k = 0; k < n; k++) {
        ptrs[k] = p;
        p += strlen(p) + 1;
    }
    r->reasons = ptrs;
    r->nreasons = n;
    return 0;
}

static int build(td_explain *ex, const td_registry *reg, const td_call *call,
                 const td_op_desc *op)
{
    const td__rkey *key;
    char why_empty[TD_DIAG_MSG_MAX];
    size_t tried = td__call_candidates(reg, call, &key, why_empty,
                                       sizeof why_empty);
    ex->empty_reason = td__strdup(tried == 0 ? why_empty : "");
    if (ex->empty_reason == NULL)
        return TD_ENOMEM;
    /* A row for every candidate the forced name keeps, disabled too. */
    size_t n = 0;
    for (size_t i = 0; key != NULL && i < key->n; i++)
        n += td__cand_named(key->cands[i], call);
    if (n == 0)
        return 0;
    ex->rows = td__calloc(n, sizeof *ex->rows);
    if (ex->rows == NULL)
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
        return td__fail(diag, TD_EINVAL, NULL, "invalid argument");
    char op_name[TD_NAME_MAX], target[TD_NAME_MAX], file[sizeof call->file];
    td__call_field(op_name, call->op);
    td__call_field(target, call->target);
    memcpy(file, call->file, sizeof file);
    file[sizeof file - 1] = '\0';
    const td_op_desc *op = NULL;
    int rc = td__call_names_check(reg, call, file, &op, diag);
    if (rc != 0)
        return rc;
    rc = td__op_check(call, op, file, diag);
    if (rc != 0)
        return rc;

    td_explain *ex = td__calloc(1, sizeof *ex);
    if (ex == NULL)
        return td__fail(diag, TD_ENOMEM, NULL, "out of memory");
    ex->selected = -1;
    ex->op = td__strdup(op_name);
    ex->target = td__strdup(target);
    ex->script = call_script(call, op);
    rc = TD_ENOMEM;
    if (ex->op != NULL && ex->target != NULL && ex->script != NULL)
        rc = build(ex, reg, call, op);
    if (rc != 0) {
        td_explain_free(ex);
        return td__fail(diag, rc, NULL, "%s", td_strerror(rc));
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
        td__buf_puts(tmp, r->after_failure
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

/* "dispatch: op=OP target=T selected=V" or "dispatch failed: ...". */
static void put_header(const td_explain *ex, td_buf *b)
{
    const td_explain_row *sel = td_explain_selected(ex);
    if (sel != NULL)
        td__buf_printf(b, "dispatch: op=%s target=%s selected=%s\n", ex->op,
                       ex->target, sel->variant);
    else
        td__buf_printf(b, "dispatch failed: op=%s target=%s\n", ex->op,
                       ex->target);
}

/* Upstream TVM's failure table, byte for byte (disabled rows are ours, not
 * TVM's: they are left out). */
static void format_tvm(const td_explain *ex, td_buf *b)
{
    put_header(ex, b);
    size_t shown = 0;
    for (size_t i = 0; i < ex->nrows; i++)
        shown += ex->rows[i].status != TD_CAND_DISABLED;
    if (shown == 0) {
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
        if (ex->rows[i].status == TD_CAND_DISABLED)
            continue;
        snprintf(labels[i], sizeof labels[i], "%s (prio=%d)",
                 ex->rows[i].variant, ex->rows[i].priority);
        measure(&vw, labels[i], strlen(labels[i]));
        row_lines(ex, i, &tmp, measure, &ew);
    }
    border(b, vw, ew);
    content(b, vw, ew, "Variant", 7, "Error", 5);
    border(b, vw, ew);
    for (size_t i = 0; i < ex->nrows; i++) {
        if (ex->rows[i].status == TD_CAND_DISABLED)
            continue;
        emit_ctx c = {b, vw, ew, labels[i]};
        row_lines(ex, i, &tmp, emit_line, &c);
    }
    border(b, vw, ew);
    if (tmp.err && !b->err)
        b->err = tmp.err;
    td__buf_free(&tmp);
    td__free(labels);
}

/* ---- the default table ------------------------------------------------- */

#define TABLE_WIDTH 100

/* One cell line: a slice of some text. */
typedef struct cell_line {
    const char *s;
    size_t n;
} cell_line;

/* Lines of the reasons cell: each reason is split into lines of at most
 * `width` code points at spaces (continuations indented by two), words
 * longer than a line are cut.  Returns the count written (at most cap). */
static size_t wrap(const char *s, size_t width, cell_line *out, size_t cap,
                   size_t k)
{
    bool first = true;
    while (*s != '\0' && k < cap) {
        size_t room = first ? width : width - 2;
        /* bytes of the longest prefix of at most `room` code points */
        size_t end = 0, cps = 0, last_space = 0;
        while (s[end] != '\0' && cps < room) {
            end++;
            while (((unsigned char)s[end] & 0xC0) == 0x80)
                end++;
            cps++;
            if (s[end] == ' ')
                last_space = end;
        }
        if (s[end] != '\0' && last_space > 0)
            end = last_space;
        out[k++] = (cell_line){s, end};
        s += end;
        while (*s == ' ')
            s++;
        first = false;
    }
    return k;
}

static const char *status_text(const td_explain_row *r)
{
    switch (r->status) {
    case TD_CAND_SELECTED: return "selected";
    case TD_CAND_REJECTED: return "rejected";
    case TD_CAND_DECLINED: return "declined by emitter";
    case TD_CAND_FAILED: return "failed";
    case TD_CAND_NOT_TRIED: return "not tried";
    case TD_CAND_DISABLED: return "disabled";
    }
    return "?";
}

/* The reasons of row i, one per entry of starts (offsets into tmp, which
 * owns the text), as the row recorded them. */
static size_t row_reasons(const td_explain *ex, size_t i, td_buf *tmp,
                          size_t *starts, size_t cap)
{
    const td_explain_row *r = &ex->rows[i];
    size_t n = 0;
    tmp->len = 0;
    for (size_t k = 0; k < r->nreasons && n < cap; k++) {
        starts[n++] = tmp->len;
        td__buf_puts(tmp, r->reasons[k]);
        td__buf_append(tmp, "", 1);
    }
    return n;
}

static void rule_line(td_buf *b, const size_t *w, size_t ncols)
{
    for (size_t c = 0; c < ncols; c++) {
        td__buf_puts(b, "+");
        for (size_t i = 0; i < w[c] + 2; i++)
            td__buf_append(b, "-", 1);
    }
    td__buf_puts(b, "+\n");
}

static void cells(td_buf *b, const size_t *w, const cell_line *c, bool right1)
{
    for (size_t k = 0; k < 4; k++) {
        td__buf_puts(b, "| ");
        size_t pad_n = w[k] - width_n(c[k].s, c[k].n);
        if (k == 1 && right1)
            pad(b, pad_n);
        td__buf_append(b, c[k].s, c[k].n);
        if (!(k == 1 && right1))
            pad(b, pad_n);
        td__buf_puts(b, " ");
    }
    td__buf_puts(b, "|\n");
}

static void format_text(const td_explain *ex, td_buf *b)
{
    put_header(ex, b);
    /* The call, once. */
    const char *s = ex->script;
    for (bool first = true;; first = false) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        td__buf_puts(b, first ? "call: " : "      ");
        td__buf_append(b, s, n);
        td__buf_puts(b, "\n");
        if (nl == NULL)
            break;
        s = nl + 1;
    }
    if (ex->empty_reason[0] != '\0')
        td__buf_printf(b, "%s\n", ex->empty_reason);
    if (ex->nrows == 0)
        return;

    enum { MAXR = TD_MAX_PREDICATES + 2, MAXL = 4 * TD_REASON_MAX };
    size_t w[4] = {strlen("variant"), strlen("prio"), strlen("status"), 0};
    char prio[32];
    for (size_t i = 0; i < ex->nrows; i++) {
        size_t vn = width_n(ex->rows[i].variant, strlen(ex->rows[i].variant));
        if (vn > w[0])
            w[0] = vn;
        int pn = snprintf(prio, sizeof prio, "%d", ex->rows[i].priority);
        if ((size_t)pn > w[1])
            w[1] = (size_t)pn;
        size_t sn = strlen(status_text(&ex->rows[i]));
        if (sn > w[2])
            w[2] = sn;
    }
    /* "| v | p | s | r |": 13 columns of borders and padding. */
    size_t fixed = w[0] + w[1] + w[2] + 13;
    w[3] = fixed + 24 <= TABLE_WIDTH ? TABLE_WIDTH - fixed : 24;

    td_buf tmp;
    td__buf_init(&tmp);
    size_t starts[MAXR];
    cell_line *lines = td__calloc(MAXL, sizeof *lines);
    if (lines == NULL) {
        b->err = TD_ENOMEM;
        return;
    }
    rule_line(b, w, 4);
    cell_line head[4] = {{"variant", 7}, {"prio", 4}, {"status", 6},
                         {"reasons", 7}};
    cells(b, w, head, false);
    rule_line(b, w, 4);
    for (size_t i = 0; i < ex->nrows && !tmp.err; i++) {
        const td_explain_row *r = &ex->rows[i];
        size_t nr = row_reasons(ex, i, &tmp, starts, MAXR);
        if (tmp.err)
            break;
        size_t nl = 0;
        for (size_t k = 0; k < nr; k++)
            nl = wrap(tmp.data + starts[k], w[3], lines, MAXL, nl);
        int pn = snprintf(prio, sizeof prio, "%d", r->priority);
        const char *st = status_text(r);
        for (size_t l = 0; l < (nl ? nl : 1); l++) {
            bool cont = l > 0 && lines[l].s != tmp.data + starts[0];
            bool new_reason = false;
            for (size_t k = 0; k < nr; k++)
                new_reason |= lines[l].s == tmp.data + starts[k];
            cell_line c[4] = {{"", 0}, {"", 0}, {"", 0}, {"", 0}};
            if (l == 0) {
                c[0] = (cell_line){r->variant, strlen(r->variant)};
                c[1] = (cell_line){prio, (size_t)pn};
                c[2] = (cell_line){st, strlen(st)};
            }
            if (nl > 0) {
                if (cont && !new_reason) {
                    /* a wrapped continuation: indent by two */
                    char ind[4 * TD_REASON_MAX + 3];
                    size_t n = lines[l].n < sizeof ind - 3 ? lines[l].n
                                                           : sizeof ind - 3;
                    ind[0] = ' ';
                    ind[1] = ' ';
                    memcpy(ind + 2, lines[l].s, n);
                    c[3] = (cell_line){ind, n + 2};
                    cells(b, w, c, true);
                    continue;
                }
                c[3] = lines[l];
            }
            cells(b, w, c, true);
        }
    }
    rule_line(b, w, 4);
    if (tmp.err && !b->err)
        b->err = tmp.err;
    td__buf_free(&tmp);
    td__free(lines);
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
        if (r->status == TD_CAND_SELECTED && r->detail[0]) {
            td__buf_puts(b, ",\"note\":");
            td__buf_json_str(b, r->detail);
        }
        if (r->status == TD_CAND_DECLINED && r->nreasons > 1) {
            /* The emitter's account after its reason (gemm: why each
             * instruction was passed over). */
            td__buf_puts(b, ",\"account\":[");
            for (size_t k = 1; k < r->nreasons; k++) {
                if (k > 1)
                    td__buf_puts(b, ",");
                td__buf_json_str(b, r->reasons[k]);
            }
            td__buf_puts(b, "]");
        }
        td__buf_puts(b, ",\"predicates\":[");
        for (size_t k = 0; k < r->npreds; k++) {
            td__buf_puts(b, k ? ",{\"name\":" : "{\"name\":");
            td__buf_json_str(b, r->preds[k].name);
            if (strcmp(r->preds[k].shown, r->preds[k].name) != 0) {
                td__buf_puts(b, ",\"shown_as\":");
                td__buf_json_str(b, r->preds[k].shown);
            }
            td__buf_printf(b, ",\"ok\":%s,\"reason\":",
                           r->preds[k].ok ? "true" : "false");
            td__buf_json_str(b, r->preds[k].reason);
            td__buf_puts(b, "}");
        }
        td__buf_puts(b, "],\"file\":");
        td__buf_json_str(b, r->file != NULL ? r->file : "");
        td__buf_printf(b, ",\"line\":%d}", r->line);
    }
    td__buf_puts(b, "]}\n");
}

int td_explain_style_parse(const char *name, td_explain_style *out)
{
    static const struct {
        const char *name;
        td_explain_style style;
    } styles[] = {{"text", TD_EXPLAIN_TEXT},
                  {"json", TD_EXPLAIN_JSON},
                  {"tvm", TD_EXPLAIN_TVM}};
    if (name == NULL || out == NULL)
        return TD_EINVAL;
    for (size_t i = 0; i < sizeof styles / sizeof *styles; i++) {
        if (strcmp(name, styles[i].name) == 0) {
            *out = styles[i].style;
            return 0;
        }
    }
    return TD_EINVAL;
}

int td_explain_format(const td_explain *ex, td_explain_style style,
                      char **out)
{
    if (out == NULL)
        return TD_EINVAL;
    *out = NULL;
    if (ex == NULL)
        return TD_EINVAL;
    td_buf b;
    td__buf_init(&b);
    switch (style) {
    case TD_EXPLAIN_TEXT:
        format_text(ex, &b);
        break;
    case TD_EXPLAIN_JSON:
        format_json(ex, &b);
        break;
    case TD_EXPLAIN_TVM:
        format_tvm(ex, &b);
        break;
    default:
        td__buf_free(&b);
        return TD_EINVAL;
    }
    /* Handed over in allocator-hook memory; the caller releases it with
     * td_free (td_registry.h). */
    return td__buf_take(&b, out);
}
