/*
 * The call-file form of gemm, upstream's
 * Tx.gemm(D, A, B, C, transpose_A, transpose_B, alpha, beta): D is `dst`,
 * the three sources have keys of their own (`a`, `b`, `c`, read into
 * srcs[0], srcs[1], srcs[2] in upstream's order) and the four literals are
 * top-level keys (`transpose_A`, `transpose_B`, `alpha`, `beta`, upstream's
 * spelling).  The other ops' operand keys (`src`, `srcs`, `extras`, `axes`,
 * `accum`) mean nothing to gemm and gemm's mean nothing to them: either in
 * the other's call is an error at the key, never silently ignored.
 *
 * What the operands must satisfy beyond their syntax (their shapes agree,
 * no config keys) is the op's check (variants/gemm_ops.c), which dispatch
 * and explain run before any variant, as for every op.
 */
#include <stdio.h>
#include <string.h>

#include "call_reader.h"

bool td__gemm_form(const char *op)
{
    return strncmp(op, "gemm", TD_NAME_MAX) == 0;
}

bool td__gemm_async_form(const char *op)
{
    return strncmp(op, "gemm_async", TD_NAME_MAX) == 0;
}

/* The keys of the gemm form, and those of the other ops that it has not. */
static const char *const gemm_keys[] = {"a",           "b",     "c",
                                        "transpose_A", "transpose_B",
                                        "alpha",       "beta"};
static const char *const other_keys[] = {"src", "srcs", "extras", "axes",
                                         "accum"};
/* gemm_async's (upstream's Tx.gemm_async(C, A, B, SFA, SFB, transA=,
 * transB=, accum=)): C is dst, A and B are a and b, the scale factors of
 * block scaling sfa and sfb; accum is the common key.  Those after a and
 * b are gemm_async's alone. */
static const char *const async_keys[] = {"a", "b", "transA", "transB",
                                         "sfa", "sfb"};
static const char *const async_other_keys[] = {
    "src", "srcs", "extras", "axes", "c", "transpose_A", "transpose_B",
    "alpha", "beta"};
#define NELEMS(a) (sizeof(a) / sizeof *(a))

static bool in(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, set[i]) == 0)
            return true;
    return false;
}

int td__cl_form_keys(td__cl *c, const td_ynode *root)
{
    const td_call *call = c->call;
    bool gemm = td__gemm_form(call->op);
    bool async = td__gemm_async_form(call->op);
    for (size_t i = 0; i < root->n / 2; i++) {
        const td_ynode *k = root->kids[2 * i];
        if (async) {
            if (in(k->str, async_other_keys, NELEMS(async_other_keys)))
                return cl_err(c, TD_ESCHEMA, k,
                              "'%s' is not a key of a gemm_async call (its "
                              "operands are dst: C, a: A, b: B and, for "
                              "block scaling, sfa: SFA, sfb: SFB, with "
                              "transA, transB and accum, as in upstream's "
                              "Tx.gemm_async(C, A, B, SFA, SFB, transA=, "
                              "transB=, accum=))",
                              k->str);
            continue;
        }
        if (in(k->str, async_keys + 2, NELEMS(async_keys) - 2))
            return cl_err(c, TD_ESCHEMA, k,
                          "'%s' is a key of gemm_async calls only, not of "
                          "op '%.*s'%s",
                          k->str, TD__FIELD(call->op),
                          gemm && k->str[0] == 't'
                              ? " (gemm's are transpose_A and transpose_B)"
                              : "");
        if (gemm && in(k->str, other_keys, NELEMS(other_keys)))
            return cl_err(c, TD_ESCHEMA, k,
                          "'%s' is not a key of a gemm call (its operands "
                          "are dst: D, a: A, b: B, c: C, as in upstream's "
                          "Tx.gemm(D, A, B, C, transpose_A, transpose_B, "
                          "alpha, beta))",
                          k->str);
        if (!gemm && in(k->str, gemm_keys, NELEMS(gemm_keys)))
            return cl_err(c, TD_ESCHEMA, k,
                          "'%s' is a key of gemm calls only, not of op "
                          "'%.*s'",
                          k->str, TD__FIELD(call->op));
    }
    return 0;
}

/* The value of top-level key `name`, NULL when absent (the loader has
 * refused duplicates already). */
static const td_ynode *value_of(const td_ynode *root, const char *name)
{
    for (size_t i = 0; i < root->n / 2; i++)
        if (strcmp(root->kids[2 * i]->str, name) == 0)
            return root->kids[2 * i + 1];
    return NULL;
}

/* The key node of top-level key `name`, NULL when absent. */
static const td_ynode *key_of(const td_ynode *root, const char *name)
{
    for (size_t i = 0; i < root->n / 2; i++)
        if (strcmp(root->kids[2 * i]->str, name) == 0)
            return root->kids[2 * i];
    return NULL;
}

/* One of A, B, C (gemm) or A, B, SFA, SFB (gemm_async): a region of a
 * declared buffer, at srcs[i]. */
static int gemm_region(td__cl *c, const td_ynode *root, int i)
{
    bool async = td__gemm_async_form(c->call->op);
    static const char *const gemm_k[3] = {"a", "b", "c"};
    static const char *const gemm_n[3] = {"A", "B", "C"};
    static const char *const async_k[4] = {"a", "b", "sfa", "sfb"};
    static const char *const async_n[4] = {"A", "B", "SFA", "SFB"};
    const char *const *keys = async ? async_k : gemm_k;
    const char *const *names = async ? async_n : gemm_n;
    const td_ynode *n = value_of(root, keys[i]);
    if (n == NULL)
        return cl_err(c, TD_ESCHEMA, root,
                      "missing required key '%s' (%.*s's %s: a %.*s call "
                      "names its operands %s)",
                      keys[i], TD__FIELD(c->call->op), names[i],
                      TD__FIELD(c->call->op),
                      td__gemm_async_form(c->call->op) ? "dst, a and b"
                                                       : "dst, a, b and c");
    td_operand *o = &c->call->srcs[i];
    memset(o, 0, sizeof *o);
    int rc = td__cl_region_in(c, n, keys[i], keys[i], &o->region);
    if (rc)
        return rc;
    o->kind = TD_OPERAND_REGION;
    o->dtype = c->call->buffers[o->region.buffer].dtype;
    o->pos = (td_pos){n->line, n->col};
    return 0;
}

static int gemm_bool(td__cl *c, const td_ynode *root, const char *key,
                     bool *out)
{
    const td_ynode *n = value_of(root, key);
    *out = false;
    if (n == NULL)
        return 0;
    td_ytype t = td__yclass(n, NULL, out, NULL);
    if (t != TD_YT_BOOL)
        return cl_err(c, TD_ESCHEMA, n, "'%s' must be a boolean, not %s",
                      key, td__ytype_name(t));
    return 0;
}

/* alpha or beta: a number; an integer is an int32 literal and any other
 * number a float32 literal, the constants TVMScript makes of a Python int
 * and float (upstream's defaults 1.0 and 0.0 are floats); `dflt` when
 * absent. */
static int gemm_scalar(td__cl *c, const td_ynode *root, const char *key,
                       double dflt, td_operand *out)
{
    const td_ynode *n = value_of(root, key);
    if (n == NULL) {
        memset(out, 0, sizeof *out);
        out->kind = TD_OPERAND_LITERAL;
        out->dtype = TD_F32;
        out->value = dflt;
        return 0;
    }
    td_dtype dt = td__yclass(n, NULL, NULL, NULL) == TD_YT_INT ? TD_I32
                                                               : TD_F32;
    return td__cl_literal(c, n, key, dt, out);
}

int td__cl_gemm(td__cl *c, const td_ynode *root)
{
    td_call *call = c->call;
    int rc;
    for (int i = 0; i < 3; i++)
        if ((rc = gemm_region(c, root, i)) != 0)
            return rc;
    call->nsrcs = 3;
    call->src = call->srcs[0].region;
    call->pos_srcs = call->srcs[0].pos;
    if ((rc = gemm_bool(c, root, "transpose_A", &call->transpose_a)) != 0 ||
        (rc = gemm_bool(c, root, "transpose_B", &call->transpose_b)) != 0 ||
        (rc = gemm_scalar(c, root, "alpha", 1.0, &call->alpha)) != 0 ||
        (rc = gemm_scalar(c, root, "beta", 0.0, &call->beta)) != 0)
        return rc;
    return 0;
}

/* A gemm_async call's a and b (srcs[0], srcs[1]), sfa and sfb (srcs[2],
 * srcs[3]: both or neither, as upstream's Tx.gemm_async asks) and transA /
 * transB (upstream's spelling, read into transpose_a / transpose_b). */
int td__cl_gemm_async(td__cl *c, const td_ynode *root)
{
    td_call *call = c->call;
    int rc;
    const td_ynode *sfa = key_of(root, "sfa"), *sfb = key_of(root, "sfb");
    if ((sfa == NULL) != (sfb == NULL))
        return cl_err(c, TD_ESCHEMA, sfa != NULL ? sfa : sfb,
                      "'%s' without '%s': block scaling takes both scale "
                      "factors (upstream: SFA and SFB must both be provided "
                      "or both be None)",
                      sfa != NULL ? "sfa" : "sfb",
                      sfa != NULL ? "sfb" : "sfa");
    int n = sfa != NULL ? 4 : 2;
    for (int i = 0; i < n; i++)
        if ((rc = gemm_region(c, root, i)) != 0)
            return rc;
    call->nsrcs = n;
    call->src = call->srcs[0].region;
    call->pos_srcs = call->srcs[0].pos;
    if ((rc = gemm_bool(c, root, "transA", &call->transpose_a)) != 0 ||
        (rc = gemm_bool(c, root, "transB", &call->transpose_b)) != 0)
        return rc;
    return 0;
}

int td__cl_gemm_async_accum(td__cl *c, const td_ynode *n)
{
    td_config_entry *e = &c->call->accum_expr;
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "accum");
    int rc = td__cl_expr(c, n, e);
    if (rc)
        return rc;
    if (e->kind != TD_VALUE_EXPR) {
        memset(e, 0, sizeof *e);
        return cl_err(c, TD_ESCHEMA, n,
                      "'accum' must be a boolean or an expression of the "
                      "call's scalars (declare '%s' under scalars:)",
                      n->str);
    }
    if (strlen(n->str) >= sizeof e->s)
        return cl_err(c, TD_ELIMIT, n, "'accum' expression longer than %d "
                                       "characters",
                      (int)sizeof e->s - 1);
    snprintf(e->s, sizeof e->s, "%s", n->str);
    e->pos = (td_pos){n->line, n->col};
    return 0;
}
