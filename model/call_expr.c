/*
 * Config values that are expressions (contract section 3): the string
 * values of the expression keys (predicate, mbar, remote_cta_id,
 * cta_mask) parsed into a td_cexpr over integers, the call's declared
 * scalars and the thread, block and cluster ids ("tx < 16", "1 - cbx"),
 * or into an element of a declared buffer ("mbar[k % 4]", whose address a
 * variant hands to an instruction).  A bare name the call does not
 * declare stays a string: ldgsts has always taken its predicate so, as
 * the name of an int parameter.  Every message gives the column of the
 * offending character inside the YAML scalar.  A buffer element's indices
 * must stay inside the buffer for every value the names can take (their
 * ranges: the launch's extents, the scalars' declared ranges), which an
 * interval of each index proves or the loader refuses the value.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "call_reader.h"

/* The keys whose string values are expressions. */
static const char *const expr_keys[] = {"predicate", "mbar", "remote_cta_id",
                                        "cta_mask"};

bool td__cl_expr_key(const char *key)
{
    for (size_t i = 0; i < sizeof expr_keys / sizeof *expr_keys; i++)
        if (strcmp(key, expr_keys[i]) == 0)
            return true;
    return false;
}

/* Values beyond +-BIG count as unbounded in the intervals below. */
#define BIG ((int64_t)1 << 40)

typedef struct ival {
    int64_t lo, hi; /* inclusive; +-BIG: unbounded */
} ival;

typedef struct xp {
    td__cl *c;
    const td_ynode *n;
    const char *s;
    size_t pos;
    const char *key;
    td_cexpr *e;
    ival iv[TD_MAX_EXPR_NODES]; /* the values each node can take */
} xp;

static int xp_err(xp *p, int code, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int xp_err(xp *p, int code, size_t at, const char *fmt, ...)
{
    char msg[TD_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cl_err_at(p->c, code, p->n->line, td__ycol_in(p->n, at),
                     "config %s: %s", p->key, msg);
}

static void xp_ws(xp *p)
{
    while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
        p->pos++;
}

static int xp_found(xp *p, const char *what)
{
    char ch = p->s[p->pos];
    if (ch == '\0')
        return xp_err(p, TD_EPARSE, p->pos,
                      "expected %s, found end of expression", what);
    if ((unsigned char)ch < 0x20 || (unsigned char)ch >= 0x7f)
        return xp_err(p, TD_EPARSE, p->pos, "expected %s, found byte 0x%02x",
                      what, (unsigned)(unsigned char)ch);
    return xp_err(p, TD_EPARSE, p->pos, "expected %s, found '%c'", what, ch);
}

static int64_t clamp(int64_t v)
{
    return v > BIG ? BIG : v < -BIG ? -BIG : v;
}

/* The product of two values within +-BIG, saturated. */
static int64_t mul_sat(int64_t a, int64_t b)
{
    if (a == 0 || b == 0)
        return 0;
    if (a > BIG || a < -BIG || b > BIG || b < -BIG)
        return (a > 0) == (b > 0) ? BIG : -BIG;
    /* |a|, |b| <= 2^40: compare |a| against BIG / |b| before multiplying. */
    int64_t ma = a < 0 ? -a : a, mb = b < 0 ? -b : b;
    if (ma > BIG / mb)
        return (a > 0) == (b > 0) ? BIG : -BIG;
    return a * b;
}

static ival iv_of(const xp *p, int i)
{
    return p->iv[i];
}

/* The interval of op(a, b); divisions by what may be zero or negative
 * are unbounded (the variants compute C's division, which agrees with
 * TVM's floor division only on non-negative values). */
static ival iv_apply(td_cx_op op, ival a, ival b)
{
    ival r = {-BIG, BIG}, bool01 = {0, 1};
    switch (op) {
    case TD_CX_NEG:
        return (ival){clamp(-a.hi), clamp(-a.lo)};
    case TD_CX_ADD:
        return (ival){clamp(a.lo + b.lo), clamp(a.hi + b.hi)};
    case TD_CX_SUB:
        return (ival){clamp(a.lo - b.hi), clamp(a.hi - b.lo)};
    case TD_CX_MUL: {
        int64_t v[4] = {mul_sat(a.lo, b.lo), mul_sat(a.lo, b.hi),
                        mul_sat(a.hi, b.lo), mul_sat(a.hi, b.hi)};
        r.lo = r.hi = v[0];
        for (int i = 1; i < 4; i++) {
            r.lo = v[i] < r.lo ? v[i] : r.lo;
            r.hi = v[i] > r.hi ? v[i] : r.hi;
        }
        return r;
    }
    case TD_CX_DIV:
        if (b.lo > 0 && a.lo >= 0)
            return (ival){a.lo / b.hi, a.hi >= BIG ? BIG : a.hi / b.lo};
        return r;
    case TD_CX_MOD:
        if (b.lo > 0 && a.lo >= 0)
            return (ival){0, a.hi < b.hi - 1 ? a.hi : b.hi - 1};
        if (b.lo > 0)
            return (ival){-(b.hi - 1), b.hi - 1};
        return r;
    case TD_CX_INT:
    case TD_CX_SCALAR:
    case TD_CX_ID:
        return a;
    default:
        return bool01;
    }
}

static int xp_node(xp *p, size_t at, td_cx_op op, int a, int b, int64_t v,
                   ival iv, int *out)
{
    td_cexpr *e = p->e;
    if (e->n >= TD_MAX_EXPR_NODES)
        return xp_err(p, TD_ELIMIT, at, "the expression has more than %d "
                                        "terms",
                      TD_MAX_EXPR_NODES);
    e->node[e->n] = (td_cx_node){.op = op, .a = a, .b = b, .v = v};
    p->iv[e->n] = iv;
    *out = e->n++;
    return 0;
}

static int xp_binary(xp *p, size_t at, td_cx_op op, int a, int b, int *out)
{
    return xp_node(p, at, op, a, b, 0, iv_apply(op, iv_of(p, a), iv_of(p, b)),
                   out);
}

/* The names a config expression may use for the ids, with the launch
 * extent that bounds each (-1: none). */
static const struct {
    const char *name;
    td_axis axis;
    int tag;
} id_names[] = {
    {"tx", TD_AXIS_TX, TD_LAUNCH_TX},
    {"threadIdx.x", TD_AXIS_TX, TD_LAUNCH_TX},
    {"laneid", TD_AXIS_LANEID, -1},
    {"warpid", TD_AXIS_WARPID, -1},
    {"bx", TD_AXIS_BX, TD_LAUNCH_BX},
    {"by", TD_AXIS_BY, TD_LAUNCH_BY},
    {"bz", TD_AXIS_BZ, TD_LAUNCH_BZ},
    {"blockIdx.x", TD_AXIS_BX, TD_LAUNCH_BX},
    {"blockIdx.y", TD_AXIS_BY, TD_LAUNCH_BY},
    {"blockIdx.z", TD_AXIS_BZ, TD_LAUNCH_BZ},
    {"cbx", TD_AXIS_CBX, -1},
    {"cby", TD_AXIS_CBY, -1},
    {"cbz", TD_AXIS_CBZ, -1},
};

static int xp_or(xp *p, int *out);

/* A name: a declared scalar or an id. */
static int xp_name(xp *p, size_t at, size_t len, int *out)
{
    const td_call *call = p->c->call;
    int si = td__call_scalar(call, p->s + at, len);
    if (si >= 0) {
        const td_scalar *sc = &call->scalars[si];
        ival iv = sc->has_range ? (ival){sc->lo, sc->hi - 1}
                  : td_dtype_is_signed(sc->dtype) ? (ival){-BIG, BIG}
                                                  : (ival){0, BIG};
        return xp_node(p, at, TD_CX_SCALAR, -1, -1, si, iv, out);
    }
    for (size_t i = 0; i < sizeof id_names / sizeof *id_names; i++) {
        if (strlen(id_names[i].name) != len ||
            memcmp(id_names[i].name, p->s + at, len) != 0)
            continue;
        ival iv = {0, BIG};
        td_axis ax = id_names[i].axis;
        if (ax >= TD_AXIS_CBX && ax <= TD_AXIS_CBZ) {
            /* A cluster id exists only in a cluster launch; its range is
             * the cluster's extent. */
            int ext = call->cluster[ax - TD_AXIS_CBX];
            if (ext <= 0)
                return xp_err(p, TD_ESCHEMA, at,
                              "the cluster id '%s' needs a cluster launch "
                              "(launch: {cluster: [2, 1, 1]})",
                              id_names[i].name);
            iv.hi = ext - 1;
        }
        if (ax == TD_AXIS_LANEID)
            iv.hi = 31;
        if (id_names[i].tag >= 0) {
            const td_launch_param *lp = &call->launch[id_names[i].tag];
            if (lp->present && !lp->symbolic)
                iv.hi = lp->extent - 1;
        }
        return xp_node(p, at, TD_CX_ID, -1, -1, (int64_t)ax, iv, out);
    }
    const char *cands[TD_MAX_SCALARS + 4];
    size_t nc = 0;
    for (int i = 0; i < call->nscalars && i < TD_MAX_SCALARS; i++)
        cands[nc++] = call->scalars[i].name;
    cands[nc++] = "tx";
    cands[nc++] = "bx";
    cands[nc++] = "cbx";
    char name[TD_NAME_MAX], hint[TD_DIAG_MSG_MAX / 2];
    snprintf(name, sizeof name, "%.*s",
             (int)(len < sizeof name ? len : sizeof name - 1), p->s + at);
    return xp_err(p, TD_ESCHEMA, at,
                  "unknown name '%.*s' (declare the caller's values under "
                  "'scalars:')%s",
                  (int)(len > 64 ? 64 : len), p->s + at,
                  td__yhint(hint, sizeof hint, name, cands, nc));
}

static size_t name_end(const char *s, size_t at)
{
    while (isalnum((unsigned char)s[at]) || s[at] == '_' || s[at] == '.')
        at++;
    return at;
}

/* An integer, a name, a parenthesised expression, or a unary - or !. */
static int xp_unary(xp *p, int *out)
{
    xp_ws(p);
    size_t at = p->pos;
    char ch = p->s[at];
    int a, rc;
    if (ch == '-' || ch == '!') {
        p->pos++;
        if ((rc = xp_unary(p, &a)) != 0)
            return rc;
        td_cx_op op = ch == '-' ? TD_CX_NEG : TD_CX_NOT;
        return xp_node(p, at, op, a, -1, 0,
                       iv_apply(op, iv_of(p, a), iv_of(p, a)), out);
    }
    if (isdigit((unsigned char)ch)) {
        int64_t v = 0;
        while (isdigit((unsigned char)p->s[p->pos])) {
            int d = p->s[p->pos] - '0';
            if (v > (TD_MAX_EXTENT - d) / 10)
                return xp_err(p, TD_ELIMIT, at,
                              "the integer is larger than 2^31");
            v = v * 10 + d;
            p->pos++;
        }
        return xp_node(p, at, TD_CX_INT, -1, -1, v, (ival){v, v}, out);
    }
    if (ch == '(') {
        p->pos++;
        if ((rc = xp_or(p, out)) != 0)
            return rc;
        xp_ws(p);
        if (p->s[p->pos] != ')')
            return xp_found(p, "')'");
        p->pos++;
        return 0;
    }
    if (isalpha((unsigned char)ch) || ch == '_') {
        size_t end = name_end(p->s, at);
        p->pos = end;
        return xp_name(p, at, end - at, out);
    }
    return xp_found(p, "a number, a name or '('");
}

/* The binary operators by precedence, loosest first: each level's
 * operands are expressions of the next level (the last level's are unary
 * expressions), and its operators associate to the left, except a
 * comparison, which takes one operator at most ("a < b < c" means nothing
 * here).  Longer tokens come first; "<" and ">" are not the first half of
 * a shift, which the grammar has not. */
typedef struct {
    const char *tok;
    td_cx_op op;
} xp_tok;

static const xp_tok xp_or_ops[] = {{"||", TD_CX_OR}, {NULL, TD_CX_INT}};
static const xp_tok xp_and_ops[] = {{"&&", TD_CX_AND}, {NULL, TD_CX_INT}};
static const xp_tok xp_cmp_ops[] = {
    {"<=", TD_CX_LE}, {">=", TD_CX_GE}, {"==", TD_CX_EQ}, {"!=", TD_CX_NE},
    {"<", TD_CX_LT},  {">", TD_CX_GT},  {NULL, TD_CX_INT}};
static const xp_tok xp_sum_ops[] = {
    {"+", TD_CX_ADD}, {"-", TD_CX_SUB}, {NULL, TD_CX_INT}};
/* "//" is TVM's floor division, "/" the same here. */
static const xp_tok xp_term_ops[] = {{"//", TD_CX_DIV},
                                     {"*", TD_CX_MUL},
                                     {"/", TD_CX_DIV},
                                     {"%", TD_CX_MOD},
                                     {NULL, TD_CX_INT}};

static const struct {
    const xp_tok *ops;
    bool once;
} xp_levels[] = {
    {xp_or_ops, false},  {xp_and_ops, false}, {xp_cmp_ops, true},
    {xp_sum_ops, false}, {xp_term_ops, false},
};
enum { XP_LEVELS = sizeof xp_levels / sizeof *xp_levels };

/* The operator of the level at p's position, its length in *w. */
static const xp_tok *xp_match(const xp *p, size_t level, size_t *w)
{
    const char *s = p->s + p->pos;
    for (const xp_tok *t = xp_levels[level].ops; t->tok; t++) {
        size_t n = strlen(t->tok);
        if (strncmp(s, t->tok, n) != 0)
            continue;
        if (n == 1 && (s[0] == '<' || s[0] == '>') && s[1] == s[0])
            return NULL;
        *w = n;
        return t;
    }
    return NULL;
}

static int xp_level(xp *p, size_t level, int *out)
{
    if (level == XP_LEVELS)
        return xp_unary(p, out);
    int rc = xp_level(p, level + 1, out);
    while (rc == 0) {
        xp_ws(p);
        size_t at = p->pos, w = 0;
        const xp_tok *t = xp_match(p, level, &w);
        if (!t)
            return 0;
        p->pos += w;
        int b;
        if ((rc = xp_level(p, level + 1, &b)) != 0)
            return rc;
        rc = xp_binary(p, at, t->op, *out, b, out);
        if (rc == 0 && xp_levels[level].once)
            return 0;
    }
    return rc;
}

static int xp_or(xp *p, int *out)
{
    return xp_level(p, 0, out);
}

/* "BUF[i, j]" (or a bare "BUF": its first element): every index an
 * expression that stays inside its dimension. */
static int xp_elem(xp *p, int buf, size_t name_at, td_config_entry *e)
{
    const td_buffer *b = &p->c->call->buffers[buf];
    e->elem_buffer = buf;
    xp_ws(p);
    if (p->s[p->pos] == '\0') {
        for (int d = 0; d < b->ndim; d++) {
            int r = 0;
            int rc = xp_node(p, name_at, TD_CX_INT, -1, -1, 0, (ival){0, 0},
                             &r);
            if (rc)
                return rc;
            e->elem_index[d] = r;
        }
        return 0;
    }
    if (p->s[p->pos] != '[')
        return xp_found(p, "'[' or the end of the element");
    size_t open_at = p->pos++;
    int d = 0;
    for (;;) {
        xp_ws(p);
        size_t at = p->pos;
        int r = 0, rc = xp_or(p, &r);
        if (rc)
            return rc;
        if (d < b->ndim) {
            ival iv = iv_of(p, r);
            if (iv.lo < 0 || iv.hi >= b->shape[d]) {
                char lo[32], hi[32];
                snprintf(lo, sizeof lo, "%lld", (long long)iv.lo);
                snprintf(hi, sizeof hi, "%lld", (long long)iv.hi);
                return xp_err(p, TD_ESCHEMA, at,
                              "index %d of '%s' may be outside [0, %lld): "
                              "it takes values in [%s, %s]%s",
                              d, b->name, (long long)b->shape[d],
                              iv.lo <= -BIG ? "-inf" : lo,
                              iv.hi >= BIG ? "inf" : hi,
                              iv.lo <= -BIG || iv.hi >= BIG
                                  ? " (declare the range of its scalars "
                                    "under 'scalars:')"
                                  : "");
            }
            e->elem_index[d] = r;
        }
        d++;
        xp_ws(p);
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == ']') {
            p->pos++;
            break;
        }
        return xp_found(p, "',' or ']'");
    }
    if (d != b->ndim)
        return xp_err(p, TD_ESCHEMA, open_at,
                      "the element has %d ind%s but buffer '%s' has %d "
                      "dimension%s",
                      d, d == 1 ? "ex" : "ices", b->name, b->ndim,
                      b->ndim == 1 ? "" : "s");
    return 0;
}

int td__cl_expr(td__cl *c, const td_ynode *n, td_config_entry *e)
{
    xp p = {.c = c, .n = n, .s = n->str, .key = e->key, .e = &e->expr};
    memset(&e->expr, 0, sizeof e->expr);
    xp_ws(&p);
    size_t at = p.pos;
    const td_call *call = c->call;
    if (isalpha((unsigned char)p.s[at]) || p.s[at] == '_') {
        size_t end = name_end(p.s, at), len = end - at;
        for (int i = 0; i < call->nbuffers; i++)
            if (strnlen(call->buffers[i].name, TD_NAME_MAX) == len &&
                memcmp(call->buffers[i].name, p.s + at, len) == 0) {
                p.pos = end;
                int rc = xp_elem(&p, i, at, e);
                if (rc)
                    return rc;
                xp_ws(&p);
                if (p.s[p.pos] != '\0')
                    return xp_found(&p, "the end of the element");
                e->kind = TD_VALUE_ELEM;
                return 0;
            }
        /* A bare undeclared name: the int parameter of old. */
        size_t k = end;
        while (p.s[k] == ' ' || p.s[k] == '\t')
            k++;
        if (p.s[k] == '\0' && memchr(p.s + at, '.', len) == NULL &&
            td__call_scalar(call, p.s + at, len) < 0) {
            bool id = false;
            for (size_t i = 0; i < sizeof id_names / sizeof *id_names; i++)
                id = id || (strlen(id_names[i].name) == len &&
                            memcmp(id_names[i].name, p.s + at, len) == 0);
            if (!id)
                return 0;
        }
    }
    int root, rc = xp_or(&p, &root);
    if (rc)
        return rc;
    xp_ws(&p);
    if (p.s[p.pos] != '\0')
        return xp_found(&p, "an operator or the end of the expression");
    e->kind = TD_VALUE_EXPR;
    return 0;
}

size_t td__cexpr_format(const td_call *call, const td_cexpr *e, int i,
                       char *buf, size_t cap)
{
    static const char *const ops[] = {
        [TD_CX_ADD] = " + ", [TD_CX_SUB] = " - ", [TD_CX_MUL] = " * ",
        [TD_CX_DIV] = " // ", [TD_CX_MOD] = " % ", [TD_CX_LT] = " < ",
        [TD_CX_LE] = " <= ", [TD_CX_GT] = " > ", [TD_CX_GE] = " >= ",
        [TD_CX_EQ] = " == ", [TD_CX_NE] = " != ", [TD_CX_AND] = " && ",
        [TD_CX_OR] = " || "};
    if (cap > 0)
        buf[0] = '\0';
    if (e == NULL || i < 0 || i >= e->n || i >= TD_MAX_EXPR_NODES)
        return 0;
    const td_cx_node *x = &e->node[i];
    size_t n = 0;
#define PUT(...)                                                               \
    n += (size_t)snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0,    \
                          __VA_ARGS__)
#define SUB(j)                                                                 \
    n += td__cexpr_format(call, e, (j), n < cap ? buf + n : NULL,               \
                         n < cap ? cap - n : 0)
    switch (x->op) {
    case TD_CX_INT:
        PUT("%lld", (long long)x->v);
        break;
    case TD_CX_SCALAR:
        if (call != NULL && x->v >= 0 && x->v < call->nscalars &&
            x->v < TD_MAX_SCALARS)
            PUT("%.*s", TD_NAME_MAX, call->scalars[x->v].name);
        break;
    case TD_CX_ID:
        PUT("%s", td_axis_name((td_axis)x->v));
        break;
    case TD_CX_NEG:
    case TD_CX_NOT:
        if (x->a >= i)
            break;
        PUT("%s(", x->op == TD_CX_NEG ? "-" : "!");
        SUB(x->a);
        PUT(")");
        break;
    default:
        if (x->a >= i || x->b >= i || (size_t)x->op >= sizeof ops / sizeof *ops)
            break;
        PUT("(");
        SUB(x->a);
        PUT("%s", ops[x->op]);
        SUB(x->b);
        PUT(")");
        break;
    }
#undef PUT
#undef SUB
    return n;
}

bool td__cexpr_eval(const td_call *call, const td_cexpr *e, int i,
                    const int64_t *scalar_vals, int64_t *out)
{
    return td__cexpr_eval_ids(call, e, i, scalar_vals, NULL, out);
}

bool td__cexpr_eval_ids(const td_call *call, const td_cexpr *e, int i,
                        const int64_t *scalar_vals, const int64_t *ids,
                        int64_t *out)
{
    if (e == NULL || i < 0 || i >= e->n || i >= TD_MAX_EXPR_NODES)
        return false;
    const td_cx_node *x = &e->node[i];
    int64_t a = 0, b = 0;
    if (x->op > TD_CX_ID &&
        (x->a >= i ||
         !td__cexpr_eval_ids(call, e, x->a, scalar_vals, ids, &a)))
        return false;
    if (x->op > TD_CX_NOT &&
        (x->b >= i ||
         !td__cexpr_eval_ids(call, e, x->b, scalar_vals, ids, &b)))
        return false;
    /* Values stay within +-2^40 (the loader's integers are at most 2^31
     * and a few operations deep); larger ones are not evaluated. */
    if (a > BIG || a < -BIG || b > BIG || b < -BIG)
        return false;
    switch (x->op) {
    case TD_CX_INT: *out = x->v; return true;
    case TD_CX_SCALAR:
        if (x->v < 0 || x->v >= call->nscalars || x->v >= TD_MAX_SCALARS)
            return false;
        *out = scalar_vals[x->v];
        return true;
    case TD_CX_ID:
        if (ids == NULL || x->v < 0 || x->v >= TD_AXIS_COUNT)
            return false;
        *out = ids[x->v];
        return true;
    case TD_CX_NEG: *out = -a; return true;
    case TD_CX_NOT: *out = a == 0; return true;
    case TD_CX_ADD: *out = a + b; return true;
    case TD_CX_SUB: *out = a - b; return true;
    case TD_CX_MUL: *out = mul_sat(a, b); return *out > -BIG && *out < BIG;
    case TD_CX_DIV: if (b == 0) return false; *out = a / b; return true;
    case TD_CX_MOD: if (b == 0) return false; *out = a % b; return true;
    case TD_CX_LT: *out = a < b; return true;
    case TD_CX_LE: *out = a <= b; return true;
    case TD_CX_GT: *out = a > b; return true;
    case TD_CX_GE: *out = a >= b; return true;
    case TD_CX_EQ: *out = a == b; return true;
    case TD_CX_NE: *out = a != b; return true;
    case TD_CX_AND: *out = a != 0 && b != 0; return true;
    case TD_CX_OR: *out = a != 0 || b != 0; return true;
    }
    return false;
}
