/*
 * Print-time simplification: integer index arithmetic is folded and the
 * variables of dropped loops are replaced by 0.  The IR is const at print
 * time, so the folded tree is a new one in the printer's arena that shares
 * every unchanged subtree with the original.
 *
 * Only rewrites that are exact for C and Python integers alike are made:
 * division and modulo fold only for a non-negative dividend and a positive
 * divisor (where truncation and floor agree), overflow is never folded,
 * and an operand with an extern call in it is never dropped.
 */
#include <string.h>

#include "codegen_internal.h"

td_expr *td__mk_int(td__arena *a, int64_t v)
{
    td_expr *e = td__arena_alloc(a, sizeof *e);
    if (e != NULL) {
        e->kind = TD__E_INT;
        e->dtype = TD_I32;
        e->i = v;
    }
    return e;
}

td_expr *td__mk_bin(td__arena *a, td_binop op, const td_expr *x,
                    const td_expr *y)
{
    if (x == NULL || y == NULL)
        return NULL;
    td_expr *e = td__arena_alloc(a, sizeof *e);
    if (e != NULL) {
        e->kind = TD__E_BIN;
        e->dtype = x->dtype;
        e->op = op;
        e->a = x;
        e->b = y;
        e->impure = x->impure || y->impure;
    }
    return e;
}

bool td__is_int(const td_expr *e, int64_t *v)
{
    if (e == NULL || e->kind != TD__E_INT)
        return false;
    *v = e->i;
    return true;
}

/* Evaluates x op y when the result is exact; false otherwise. */
static bool eval(td_binop op, int64_t x, int64_t y, int64_t *r)
{
    switch (op) {
    case TD_OP_ADD: return !__builtin_add_overflow(x, y, r);
    case TD_OP_SUB: return !__builtin_sub_overflow(x, y, r);
    case TD_OP_MUL: return !__builtin_mul_overflow(x, y, r);
    case TD_OP_DIV:
        if (x < 0 || y <= 0)
            return false;
        *r = x / y;
        return true;
    case TD_OP_MOD:
        if (x < 0 || y <= 0)
            return false;
        *r = x % y;
        return true;
    case TD_OP_MAX: *r = x > y ? x : y; return true;
    case TD_OP_MIN: *r = x < y ? x : y; return true;
    case TD_OP_LT: *r = x < y; return true;
    case TD_OP_LE: *r = x <= y; return true;
    case TD_OP_EQ: *r = x == y; return true;
    case TD_OP_NE: *r = x != y; return true;
    case TD_OP_AND: *r = x != 0 && y != 0; return true;
    case TD_OP_OR: *r = x != 0 || y != 0; return true;
    case TD_OP_SHL:
        if (x < 0 || y < 0 || y > 62 || x > (INT64_MAX >> y))
            return false;
        *r = x << y;
        return true;
    case TD_OP_BITAND: *r = x & y; return true;
    case TD_OP_XOR:
        if (x < 0 || y < 0)
            return false;
        *r = x ^ y;
        return true;
    }
    return false;
}

static const td_expr *copy_with(td__arena *a, const td_expr *e,
                                const td_expr *x, const td_expr *y)
{
    td_expr *n = td__arena_alloc(a, sizeof *n);
    if (n != NULL) {
        *n = *e;
        n->a = x;
        n->b = y;
    }
    return n;
}

/* Structural equality of pure integer index expressions. */
static bool same_index(const td_expr *x, const td_expr *y)
{
    if (x == y)
        return true;
    if (x == NULL || y == NULL || x->kind != y->kind || x->impure || y->impure)
        return false;
    switch (x->kind) {
    case TD__E_INT:
        return x->i == y->i;
    case TD__E_VAR:
        return x->var == y->var;
    case TD__E_BIN:
        return x->op == y->op && same_index(x->a, y->a) &&
               same_index(x->b, y->b);
    default:
        return false;
    }
}

/* Splits e into (term, k) for e = term * k with a constant k (k = 1 when e
 * is not such a product). */
static const td_expr *scaled(const td_expr *e, int64_t *k)
{
    if (e->kind == TD__E_BIN && e->op == TD_OP_MUL && td__is_int(e->b, k))
        return e->a;
    *k = 1;
    return e;
}

/* Recognises (v / c) * (c * k) + (v % c) * k, which is v * k for any c > 0
 * under both C's truncating and Python's flooring division (the identity
 * (v / c) * c + v % c == v holds in each).  It appears when an index is
 * unflattened over one shape and flattened again over the same extents. */
static const td_expr *undo_split(td__arena *a, const td_expr *hi,
                                 const td_expr *lo)
{
    int64_t khi = 0, klo = 0, c = 0, c2 = 0;
    const td_expr *div = scaled(hi, &khi);
    const td_expr *mod = scaled(lo, &klo);
    if (div->kind != TD__E_BIN || div->op != TD_OP_DIV ||
        mod->kind != TD__E_BIN || mod->op != TD_OP_MOD ||
        !td__is_int(div->b, &c) || !td__is_int(mod->b, &c2) || c != c2 ||
        c <= 0 || klo <= 0 || __builtin_mul_overflow(c, klo, &c2) ||
        c2 != khi || !same_index(div->a, mod->a))
        return NULL;
    if (klo == 1)
        return div->a;
    return td__mk_bin(a, TD_OP_MUL, div->a, td__mk_int(a, klo));
}

static const td_expr *fold_bin(td__arena *a, const td_expr *e,
                               const td_expr *x, const td_expr *y)
{
    int64_t vx = 0, vy = 0, r;
    bool cx = td__is_int(x, &vx), cy = td__is_int(y, &vy);
    bool ints = !td_dtype_is_float(x->dtype) && !td_dtype_is_float(y->dtype);
    if (cx && cy && eval(e->op, vx, vy, &r))
        return td__mk_int(a, r);
    if (ints) {
        switch (e->op) {
        case TD_OP_ADD: {
            if (cy && vy == 0)
                return x;
            if (cx && vx == 0)
                return y;
            const td_expr *v = undo_split(a, x, y);
            if (v == NULL)
                v = undo_split(a, y, x);
            if (v != NULL)
                return v;
            break;
        }
        case TD_OP_SUB:
        case TD_OP_SHL:
            if (cy && vy == 0)
                return x;
            break;
        case TD_OP_MUL:
            if (cy && vy == 1)
                return x;
            if (cx && vx == 1)
                return y;
            if ((cy && vy == 0 && !x->impure) || (cx && vx == 0 && !y->impure))
                return td__mk_int(a, 0);
            break;
        case TD_OP_DIV:
            if (cy && vy == 1)
                return x;
            break;
        case TD_OP_MOD:
            if (cy && vy == 1 && !x->impure)
                return td__mk_int(a, 0);
            break;
        case TD_OP_XOR:
            if (cy && vy == 0)
                return x;
            if (cx && vx == 0)
                return y;
            break;
        default:
            break;
        }
    }
    if (x == e->a && y == e->b)
        return e;
    return copy_with(a, e, x, y);
}

/* Folds each argument; copies the node only if one of them changed. */
static const td_expr *fold_args(td__arena *a, const td_expr *e,
                                const unsigned char *zero)
{
    const td_expr **args = NULL;
    for (int i = 0; i < e->nargs; i++) {
        const td_expr *f = td__fold(a, e->args[i], zero);
        if (f == NULL)
            return NULL;
        if (f != e->args[i] && args == NULL) {
            args = td__arena_alloc(a, sizeof *args * (size_t)e->nargs);
            if (args == NULL)
                return NULL;
            memcpy(args, e->args, sizeof *args * (size_t)e->nargs);
        }
        if (args != NULL)
            args[i] = f;
    }
    if (args == NULL)
        return e;
    td_expr *n = td__arena_alloc(a, sizeof *n);
    if (n != NULL) {
        *n = *e;
        n->args = args;
    }
    return n;
}

const td_expr *td__fold(td__arena *a, const td_expr *e,
                        const unsigned char *zero)
{
    switch (e->kind) {
    case TD__E_INT:
    case TD__E_CONST:
    case TD__E_LANE:
    case TD__E_PAIR:
    case TD__E_PARAM:
        return e;
    case TD__E_VAR:
        if (zero != NULL && zero[e->var->id])
            return td__mk_int(a, 0);
        return e;
    case TD__E_BIN:
    case TD__E_COMBINE:
    case TD__E_VALOP: {
        const td_expr *x = td__fold(a, e->a, zero);
        const td_expr *y = x ? td__fold(a, e->b, zero) : NULL;
        if (y == NULL)
            return NULL;
        if (e->kind == TD__E_BIN)
            return fold_bin(a, e, x, y);
        if (x == e->a && y == e->b)
            return e;
        return copy_with(a, e, x, y);
    }
    case TD__E_MATH:
    case TD__E_CAST:
    case TD__E_SPLAT: {
        const td_expr *x = td__fold(a, e->a, zero);
        if (x == NULL)
            return NULL;
        return x == e->a ? e : copy_with(a, e, x, NULL);
    }
    case TD__E_LOAD:
    case TD__E_INTRIN:
    case TD__E_CALL:
    case TD__E_F32X2:
        return fold_args(a, e, zero);
    }
    return e;
}
