/*
 * The lowered IR's expression builders: constants and identities,
 * variable references, binary and combiner nodes, loads, intrinsics, warp
 * reductions and extern calls, the elementwise value arithmetic (value
 * ops, math functions, casts) and the packed f32x2 PTX ops.  The IR's
 * life cycle, buffers, parameters and statements are in ir.c, whose
 * sticky failure and operand checks these use (td__ir_*).
 *
 * Expression builders pass NULL operands through (they return NULL).
 */
#include <float.h>
#include <string.h>

#include "codegen_internal.h"

/* float8 (stored and converted, never computed on) and the confined
 * dtypes (no arithmetic, conversion or constant at all). */
static bool no_arith(td_dtype t)
{
    return td_dtype_is_float8(t) || td_dtype_is_confined(t);
}

/* A new expression over the operands args[0..n), checked and copied into
 * the arena; impure when one of them is. */
static td_expr *new_args_expr(td_ir *ir, td__ekind kind, td_dtype t, int n,
                              td_expr *const *args)
{
    bool impure;
    const td_expr *const *a = td__ir_copy_args(ir, n, args, &impure);
    if (a == NULL)
        return NULL;
    td_expr *e = td__ir_expr(ir, kind, t);
    if (e != NULL) {
        e->nargs = n;
        e->args = a;
        e->impure = impure;
    }
    return e;
}

/* ---- expressions -------------------------------------------------------- */

td_expr *td_int(td_ir *ir, int64_t v)
{
    if (!td__ir_live(ir))
        return NULL;
    td_expr *e = td__ir_expr(ir, TD__E_INT, TD_I32);
    if (e != NULL)
        e->i = v;
    return e;
}

/* The range of an integer dtype. */
static void int_range(td_dtype t, int64_t *lo, uint64_t *hi)
{
    int bits = td_dtype_bits(t);
    if (td_dtype_is_signed(t)) {
        *lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        *hi = bits == 64 ? (uint64_t)INT64_MAX
                         : ((uint64_t)1 << (bits - 1)) - 1;
    } else {
        *lo = 0;
        *hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    }
}

/* A typed constant from a sign and magnitude pair; TD_EINVAL when the
 * value does not fit an integer dtype. */
static td_expr *make_const(td_ir *ir, td_dtype t, bool neg, uint64_t mag,
                           double f, bool is_float_value)
{
    if (!td__ir_live(ir))
        return NULL;
    /* No constant has a confined dtype (td_dtype_is_confined). */
    if (!td__ir_valid_dtype(t) || td_dtype_is_confined(t)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_CONST, t);
    if (e == NULL)
        return NULL;
    if (td_dtype_is_float(t)) {
        e->f = is_float_value ? f
                              : (neg ? -(double)mag : (double)mag);
        return e;
    }
    if (is_float_value) {
        /* Only integral values in range convert to an integer dtype.
         * Every double in [2^63, 2^64) is integral. */
        bool ok = f >= -9223372036854775808.0 && f < 18446744073709551616.0;
        if (ok && f < 9223372036854775808.0)
            ok = (double)(int64_t)f == f;
        if (!ok) {
            td__ir_fail(ir, TD_EINVAL);
            return NULL;
        }
        neg = f < 0;
        mag = neg ? (uint64_t)0 - (uint64_t)(int64_t)f : (uint64_t)f;
    }
    int64_t lo;
    uint64_t hi;
    int_range(t, &lo, &hi);
    if (neg ? (mag > (uint64_t)0 - (uint64_t)lo) : mag > hi) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    if (td_dtype_is_signed(t))
        e->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    else
        e->u = mag;
    return e;
}

td_expr *td_const_f(td_ir *ir, td_dtype t, double v)
{
    return make_const(ir, t, false, 0, v, true);
}

td_expr *td_const_i(td_ir *ir, td_dtype t, int64_t v)
{
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return make_const(ir, t, v < 0, mag, 0, false);
}

td_expr *td_const_u(td_ir *ir, td_dtype t, uint64_t v)
{
    return make_const(ir, t, false, v, 0, false);
}

td_expr *td_identity(td_ir *ir, td_combiner c, td_dtype t)
{
    if (!td__ir_live(ir))
        return NULL;
    /* float8 has no ordering helpers (and no arithmetic): only its zero. */
    if (!td__ir_valid_dtype(t) || (unsigned)c > TD_COMBINE_MIN ||
        (no_arith(t) && (c != TD_COMBINE_SUM || td_dtype_is_confined(t)))) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_CONST, t);
    if (e == NULL)
        return NULL;
    if (c == TD_COMBINE_SUM) {
        e->ident = TD__IDENT_ZERO;
        return e;
    }
    bool low = c == TD_COMBINE_MAX;
    e->ident = low ? TD__IDENT_LOWEST : TD__IDENT_HIGHEST;
    double fmax;
    switch (t) {
    case TD_F32: fmax = FLT_MAX; break;
    case TD_F16: fmax = 65504.0; break;
    case TD_BF16: fmax = 3.3895313892515355e38; break; /* 0x7F7F */
    case TD_F64: fmax = DBL_MAX; break;
    default: {
        int64_t lo;
        uint64_t hi;
        int_range(t, &lo, &hi);
        if (td_dtype_is_signed(t))
            e->i = low ? lo : (int64_t)hi;
        else
            e->u = low ? 0 : hi;
        return e;
    }
    }
    e->f = low ? -fmax : fmax;
    return e;
}

td_expr *td_var_ref(td_ir *ir, const td_var *v)
{
    if (!td__ir_live(ir) || v == NULL)
        return NULL;
    if (v->owner != ir || v->lanes > 1) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_VAR, v->dtype);
    if (e != NULL)
        e->var = v;
    return e;
}

td_expr *td_binary(td_ir *ir, td_binop op, td_expr *a, td_expr *b)
{
    if (!td__ir_live(ir) || !td__ir_operand(ir, a) || !td__ir_operand(ir, b))
        return NULL;
    if ((unsigned)op > TD_OP_XOR) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    bool logical = op == TD_OP_LT || op == TD_OP_LE || op == TD_OP_EQ ||
                   op == TD_OP_NE || op == TD_OP_AND || op == TD_OP_OR;
    td_expr *e = td__ir_expr(ir, TD__E_BIN, logical ? TD_I32 : a->dtype);
    if (e != NULL) {
        e->op = op;
        e->a = a;
        e->b = b;
        e->impure = a->impure || b->impure;
    }
    return e;
}

td_expr *td_combine(td_ir *ir, td_combiner c, td_expr *a, td_expr *b)
{
    if (!td__ir_live(ir) || !td__ir_operand(ir, a) || !td__ir_operand(ir, b))
        return NULL;
    if ((unsigned)c > TD_COMBINE_MIN || no_arith(a->dtype)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_COMBINE, a->dtype);
    if (e != NULL) {
        e->comb = c;
        e->a = a;
        e->b = b;
        e->impure = a->impure || b->impure;
    }
    return e;
}

td_expr *td_load(td_ir *ir, const td_ir_buf *b, int n, td_expr *const *idx)
{
    if (!td__ir_live(ir))
        return NULL;
    if (b == NULL || !td__ir_buf_access(ir, b, n, idx))
        return NULL;
    if (td_dtype_bits(b->dtype) < 8) { /* a 4-bit element is not a value */
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = new_args_expr(ir, TD__E_LOAD, b->dtype, n, idx);
    if (e != NULL)
        e->buf = b;
    return e;
}

td_expr *td_load1(td_ir *ir, const td_ir_buf *b, td_expr *idx)
{
    return td_load(ir, b, 1, &idx);
}

/* Argument counts of the intrinsics (-1: not through td_intrinsic). */
static const int intrin_arity[TD_INTRIN_COUNT] = {
    [TD_INTRIN_THREAD_IDX_X] = 0, [TD_INTRIN_ACTIVEMASK] = 0,
    [TD_INTRIN_SHFL_XOR] = 4,     [TD_INTRIN_WARP_REDUCE] = -1,
    [TD_INTRIN_SYNCTHREADS] = 0,  [TD_INTRIN_SYNCWARP] = 0,
    [TD_INTRIN_BARRIER_SYNC] = 2, [TD_INTRIN_PTX_PACK_F32X2] = 2,
    [TD_INTRIN_PTX_UNPACK_LO] = 1, [TD_INTRIN_PTX_UNPACK_HI] = 1,
    [TD_INTRIN_PTX_ADD_F32X2] = 2, [TD_INTRIN_PTX_MAX3_F32] = 3,
    [TD_INTRIN_PTX_MIN3_F32] = 3, [TD_INTRIN_WARP_SUM_F64MMA] = 1,
    [TD_INTRIN_WARP_MAX_REDUX] = 1, [TD_INTRIN_WARP_MIN_REDUX] = 1,
    [TD_INTRIN_CP_ASYNC_COMMIT] = 0, [TD_INTRIN_CP_ASYNC_WAIT] = 1,
    [TD_INTRIN_CP_ASYNC_WAIT_ALL] = 0,
    [TD_INTRIN_BLOCK_IDX_X] = 0,   [TD_INTRIN_BLOCK_IDX_Y] = 0,
    [TD_INTRIN_BLOCK_IDX_Z] = 0,   [TD_INTRIN_CLUSTER_CTAID_X] = 0,
    [TD_INTRIN_CLUSTER_CTAID_Y] = 0, [TD_INTRIN_CLUSTER_CTAID_Z] = 0,
    [TD_INTRIN_ELECT_SYNC] = 0};

/* The whole-warp float32 all-reductions take and give float32 only. */
static bool f32_only(td_intrin k)
{
    return k == TD_INTRIN_WARP_SUM_F64MMA || k == TD_INTRIN_WARP_MAX_REDUX ||
           k == TD_INTRIN_WARP_MIN_REDUX;
}

static td_expr *make_intrin(td_ir *ir, td_intrin k, td_dtype dtype,
                            int nargs, td_expr *const *args)
{
    td_expr *e = new_args_expr(ir, TD__E_INTRIN, dtype, nargs, args);
    if (e != NULL) {
        e->intrin = k;
        e->is_void = k == TD_INTRIN_SYNCTHREADS || k == TD_INTRIN_SYNCWARP ||
                     k == TD_INTRIN_BARRIER_SYNC ||
                     k == TD_INTRIN_CP_ASYNC_COMMIT ||
                     k == TD_INTRIN_CP_ASYNC_WAIT ||
                     k == TD_INTRIN_CP_ASYNC_WAIT_ALL;
    }
    return e;
}

td_expr *td_intrinsic(td_ir *ir, td_intrin k, td_dtype dtype, int nargs,
                      td_expr *const *args)
{
    if (!td__ir_live(ir))
        return NULL;
    if ((unsigned)k >= TD_INTRIN_COUNT || intrin_arity[k] < 0 ||
        nargs != intrin_arity[k] || !td__ir_valid_dtype(dtype) ||
        (f32_only(k) && dtype != TD_F32) ||
        (k == TD_INTRIN_SHFL_XOR && no_arith(dtype))) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    /* wait_group's count is an immediate of the instruction. */
    if (k == TD_INTRIN_CP_ASYNC_WAIT &&
        (args == NULL || args[0] == NULL || args[0]->kind != TD__E_INT ||
         args[0]->i < 0 || args[0]->i > 7)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    return make_intrin(ir, k, dtype, nargs, args);
}

td_expr *td_warp_reduce(td_ir *ir, td_combiner c, int width, td_expr *value,
                        td_dtype dtype)
{
    if (!td__ir_live(ir))
        return NULL;
    if ((unsigned)c > TD_COMBINE_MIN || width < 2 || width > 32 ||
        (width & (width - 1)) != 0 || !td__ir_valid_dtype(dtype) ||
        no_arith(dtype)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    if (value == NULL)
        return NULL;
    td_expr *e = make_intrin(ir, TD_INTRIN_WARP_REDUCE, dtype, 1, &value);
    if (e != NULL) {
        e->comb = c;
        e->width = width;
    }
    return e;
}

td_expr *td_extern_call(td_ir *ir, const char *name, td_dtype dtype,
                        int nargs, td_expr *const *args)
{
    if (!td__ir_live(ir))
        return NULL;
    if (!td__ir_is_ident(name) || !td__ir_valid_dtype(dtype)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    bool impure;
    const td_expr *const *a = td__ir_copy_args(ir, nargs, args, &impure);
    if (a == NULL)
        return NULL;
    char *n = td__arena_strdup(&ir->arena, name);
    td_expr *e = n ? td__ir_expr(ir, TD__E_CALL, dtype) : NULL;
    if (e == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return NULL;
    }
    e->name = n;
    e->nargs = nargs;
    e->args = a;
    e->impure = true;
    return e;
}

/* ---- value arithmetic (elementwise ops) ---------------------------------- */

td_expr *td_value_op(td_ir *ir, td_valop op, td_expr *a, td_expr *b)
{
    if (!td__ir_live(ir))
        return NULL;
    if ((unsigned)op > TD_VAL_MIN) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    if (!td__ir_value_operand(ir, a) || !td__ir_value_operand(ir, b))
        return NULL;
    /* Pairs: float16 or bfloat16 add, sub, mul, max, min, each lane
     * rounded as the scalar op rounds it. */
    bool pair = td__is_pair(a);
    /* CUDA's float8 types convert but do not compute: the caller computes
     * in a wider dtype and casts. */
    if (a->dtype != b->dtype || !td__ir_valid_dtype(a->dtype) ||
        no_arith(a->dtype) ||
        pair != td__is_pair(b) ||
        (pair && ((a->dtype != TD_F16 && a->dtype != TD_BF16) ||
                  op == TD_VAL_DIV))) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_VALOP, a->dtype);
    if (e != NULL) {
        e->lanes = pair ? 2 : 0;
        e->valop = (uint8_t)op;
        e->a = a;
        e->b = b;
        e->impure = a->impure || b->impure;
    }
    return e;
}

td_expr *td_math(td_ir *ir, td_mathfn f, td_expr *a)
{
    if (!td__ir_live(ir))
        return NULL;
    if ((unsigned)f > TD_MATH_SQRT) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    if (!td__ir_value_operand(ir, a))
        return NULL;
    /* Pairs: exp and exp2 of float16 / bfloat16 (h2exp, h2exp2: the same
     * per-lane sequence as hexp, hexp2). */
    bool pair = td__is_pair(a);
    if (!td_dtype_is_float(a->dtype) || no_arith(a->dtype) ||
        (pair && ((a->dtype != TD_F16 && a->dtype != TD_BF16) ||
                  (f != TD_MATH_EXP && f != TD_MATH_EXP2)))) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_MATH, a->dtype);
    if (e != NULL) {
        e->lanes = pair ? 2 : 0;
        e->math = (uint8_t)f;
        e->a = a;
        e->impure = a->impure;
    }
    return e;
}

td_expr *td_cast(td_ir *ir, td_dtype t, td_expr *a)
{
    if (!td__ir_live(ir))
        return NULL;
    /* No conversion to or from a confined dtype exists here (make_const). */
    if (!td__ir_valid_dtype(t) || td_dtype_is_confined(t) ||
        (a != NULL && td_dtype_is_confined(a->dtype))) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    if (!td__ir_value_operand(ir, a))
        return NULL;
    if (a->dtype == t)
        return a;
    /* A pair converts only float32 -> float16 / bfloat16 (td__pair_fn). */
    bool pair = td__is_pair(a);
    if (pair && (a->dtype != TD_F32 || (t != TD_F16 && t != TD_BF16))) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_CAST, t);
    if (e != NULL) {
        e->lanes = pair ? 2 : 0;
        e->a = a;
        e->impure = a->impure;
    }
    return e;
}


const char *const td__f32x2_ops[TD__F32X2_NOPS] = {"add", "sub", "mul",
                                                   "fma"};
const char *const td__f32x2_rnds[TD__F32X2_NRNDS] = {"rn", "rz", "rm", "rp"};

static int find_word(const char *const *words, int n, const char *s)
{
    for (int i = 0; s != NULL && i < n; i++)
        if (strcmp(words[i], s) == 0)
            return i;
    return -1;
}

td_expr *td_ptx_f32x2(td_ir *ir, const char *op, const char *rnd, int nargs,
                      td_expr *const *args)
{
    if (!td__ir_live(ir))
        return NULL;
    int xop = find_word(td__f32x2_ops, TD__F32X2_NOPS, op);
    int xrnd = find_word(td__f32x2_rnds, TD__F32X2_NRNDS, rnd);
    if (xop < 0 || xrnd < 0 ||
        nargs != (xop == TD__F32X2_FMA ? 3 : 2) || args == NULL) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    /* NULL operands pass through; present ones are 64-bit integers (the
     * packed pairs). */
    for (int i = 0; i < nargs; i++) {
        if (!td__ir_operand(ir, args[i]))
            return NULL;
        if (args[i]->dtype != TD_U64 && args[i]->dtype != TD_I64) {
            td__ir_fail(ir, TD_EINVAL);
            return NULL;
        }
    }
    td_expr *e = new_args_expr(ir, TD__E_F32X2, TD_U64, nargs, args);
    if (e != NULL) {
        e->xop = (uint8_t)xop;
        e->xrnd = (uint8_t)xrnd;
    }
    return e;
}
