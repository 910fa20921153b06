/*
 * The TIRx printer: TVMScript-like text for reading.  Loops keep their
 * extent-1 form, buffers keep multi-dimensional indices, identities print
 * as T.min_value / T.max_value, PTX accesses as TVM's positional
 * T.ptx.ld / st / ldmatrix / stmatrix, and Python's precedence decides the
 * parentheses.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

typedef struct tirx {
    td__pctx *p;
    td_buf line;
    /* Per variable: an integer let's value, and whether any statement
     * assigns the variable (then its let's value is not its value). */
    const td_expr **letval;
    unsigned char *assigned;
    bool inline_lets;   /* printing a vector index: spell lets' values */
} tirx;

/* Python precedence levels (higher binds tighter). */
enum {
    P_LOWEST = 0,
    P_OR = 4,
    P_AND = 5,
    P_CMP = 8,
    P_XOR = 9,
    P_BITAND = 10,
    P_SHIFT = 11,
    P_ADD = 12,
    P_MUL = 13,
    P_UNARY = 14,
    P_PRIMARY = 16
};

static const struct {
    const char *text;
    int prec;
} binops[] = {
    [TD_OP_ADD] = {"+", P_ADD},       [TD_OP_SUB] = {"-", P_ADD},
    [TD_OP_MUL] = {"*", P_MUL},       [TD_OP_DIV] = {"//", P_MUL},
    [TD_OP_MOD] = {"%", P_MUL},       [TD_OP_MAX] = {"T.max", P_PRIMARY},
    [TD_OP_MIN] = {"T.min", P_PRIMARY}, [TD_OP_LT] = {"<", P_CMP},
    [TD_OP_LE] = {"<=", P_CMP},       [TD_OP_EQ] = {"==", P_CMP},
    [TD_OP_NE] = {"!=", P_CMP},       [TD_OP_AND] = {"and", P_AND},
    [TD_OP_OR] = {"or", P_OR},        [TD_OP_SHL] = {"<<", P_SHIFT},
    [TD_OP_BITAND] = {"&", P_BITAND}, [TD_OP_XOR] = {"^", P_XOR}};

static void fail(tirx *x, int code)
{
    if (x->p->err == 0)
        x->p->err = code;
}

/* A Python float literal that reads back as the same value of the
 * dtype's precision. */
static void spell_float(char *b, size_t cap, double v, bool single)
{
    if (isnan(v)) {
        snprintf(b, cap, "\"nan\"");
    } else if (isinf(v)) {
        snprintf(b, cap, "%s", v > 0 ? "\"inf\"" : "\"-inf\"");
    } else if (v == 0 && signbit(v)) {
        snprintf(b, cap, "-0.0");
    } else if (v == (double)(int64_t)v && fabs(v) < 1e16) {
        snprintf(b, cap, "%.0f", v);
    } else {
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(b, cap, "%.*g", prec, v);
            if (single ? strtof(b, NULL) == (float)v : strtod(b, NULL) == v)
                break;
        }
    }
}

static void spell_const(const td_expr *e, char *b, size_t cap)
{
    const char *dt = td_dtype_name(e->dtype);
    char v[64];
    switch (e->ident) {
    case TD__IDENT_ZERO:
        snprintf(b, cap, "T.%s(0)", dt);
        return;
    case TD__IDENT_LOWEST:
        snprintf(b, cap, "T.min_value(\"%s\")", dt);
        return;
    case TD__IDENT_HIGHEST:
        snprintf(b, cap, "T.max_value(\"%s\")", dt);
        return;
    case TD__IDENT_NONE:
        break;
    }
    if (td_dtype_is_float(e->dtype)) {
        bool single = e->dtype != TD_F64;
        spell_float(v, sizeof v, single ? (double)(float)e->f : e->f, single);
    } else if (td_dtype_is_signed(e->dtype)) {
        snprintf(v, sizeof v, "%lld", (long long)e->i);
    } else {
        snprintf(v, sizeof v, "%llu", (unsigned long long)e->u);
    }
    snprintf(b, cap, "T.%s(%s)", dt, v);
}

static int prec(const td_expr *e)
{
    switch (e->kind) {
    case TD__E_INT:
        return e->i < 0 ? P_UNARY : P_PRIMARY;
    case TD__E_BIN:
        return binops[e->op].prec;
    case TD__E_COMBINE:
        return e->comb == TD_COMBINE_SUM ? P_ADD : P_PRIMARY;
    case TD__E_VALOP:
        switch (e->valop) {
        case TD_VAL_ADD:
        case TD_VAL_SUB: return P_ADD;
        case TD_VAL_MUL: return P_MUL;
        case TD_VAL_DIV:
            return td_dtype_is_float(e->dtype) ? P_MUL : P_PRIMARY;
        default: return P_PRIMARY;
        }
    default:
        return P_PRIMARY;
    }
}

static void expr(tirx *x, td_buf *o, const td_expr *e, int minprec);

static void arglist(tirx *x, td_buf *o, int n, const td_expr *const *a)
{
    for (int i = 0; i < n; i++) {
        if (i > 0)
            td__buf_puts(o, ", ");
        expr(x, o, a[i], P_LOWEST);
    }
}

/* Whether `e` reads a variable some statement assigns. */
static bool reads_assigned(const tirx *x, const td_expr *e)
{
    if (e == NULL)
        return false;
    if (e->kind == TD__E_VAR)
        return x->assigned[e->var->id] != 0;
    if (reads_assigned(x, e->a) || reads_assigned(x, e->b))
        return true;
    if (e->kind == TD__E_LOAD || e->kind == TD__E_INTRIN ||
        e->kind == TD__E_CALL || e->kind == TD__E_F32X2)
        for (int i = 0; i < e->nargs; i++)
            if (reads_assigned(x, e->args[i]))
                return true;
    return false;
}

/* NAME[i, j] with each index folded; a vector access (lanes > 1) spells
 * its last index as TVMScript's vector index T.ramp(j, 1, lanes), with
 * the values of the integer lets it reads (one level): TVM's CUDA codegen
 * loads a vector at once only where it proves the base a multiple of the
 * lanes, and cannot see through `red: T.int32 = lane * 4` (a local
 * scalar in TVMScript), so `T.ramp(lane * 4, 1, 4)`. */
static void access(tirx *x, td_buf *o, const td_ir_buf *b, int n,
                   const td_expr *const *idx, int lanes)
{
    td__buf_puts(o, b->name);
    td__buf_puts(o, "[");
    for (int i = 0; i < n; i++) {
        const td_expr *f = td__fold(&x->p->arena, idx[i], NULL);
        if (f == NULL) {
            fail(x, TD_ENOMEM);
            return;
        }
        if (i > 0)
            td__buf_puts(o, ", ");
        bool ramp = lanes > 1 && i == n - 1;
        if (ramp)
            td__buf_puts(o, "T.ramp(");
        x->inline_lets = ramp;
        expr(x, o, f, P_LOWEST);
        x->inline_lets = false;
        if (ramp)
            td__buf_printf(o, ", 1, %d)", lanes);
    }
    td__buf_puts(o, "]");
}

/* A vector access of a swizzled buffer, one lane: NAME[i, j + td_k].
 * TVM lowers a buffer's layout (its ComposeLayout swizzle) index by
 * index and refuses a T.ramp index there, so the printer spells such an
 * access as a T.vectorized loop over the lanes (TVM then emits one
 * access per lane, each through the swizzle). */
static void access_lane(tirx *x, td_buf *o, const td_ir_buf *b, int n,
                        const td_expr *const *idx)
{
    access(x, o, b, n, idx, 1);
    if (o->data == NULL || o->len < 1 || x->p->err != 0)
        return;
    o->len--;                       /* the closing bracket */
    o->data[o->len] = '\0';
    td__buf_puts(o, " + td_k]");
}

static bool swizzled(const td_ir_buf *b)
{
    return b != NULL && b->swz_bits > 0;
}

static const char *const intrin_names[TD_INTRIN_COUNT] = {
    [TD_INTRIN_THREAD_IDX_X] = "threadIdx.x",
    [TD_INTRIN_ACTIVEMASK] = "T.tvm_warp_activemask",
    [TD_INTRIN_SHFL_XOR] = "T.tvm_warp_shuffle_xor",
    [TD_INTRIN_WARP_REDUCE] = "T.cuda.warp_reduce",
    [TD_INTRIN_SYNCTHREADS] = "T.tvm_storage_sync",
    [TD_INTRIN_SYNCWARP] = "T.tvm_storage_sync",
    [TD_INTRIN_BARRIER_SYNC] = "T.ptx.bar.sync",
    [TD_INTRIN_PTX_PACK_F32X2] = "T.ptx.mov.b64.pack",
    [TD_INTRIN_PTX_UNPACK_LO] = "T.ptx.mov.b64.unpack_lo",
    [TD_INTRIN_PTX_UNPACK_HI] = "T.ptx.mov.b64.unpack_hi",
    [TD_INTRIN_PTX_ADD_F32X2] = "T.ptx.add.rn.ftz.f32x2",
    [TD_INTRIN_PTX_MAX3_F32] = "T.ptx.max.f32",
    [TD_INTRIN_PTX_MIN3_F32] = "T.ptx.min.f32",
    [TD_INTRIN_WARP_SUM_F64MMA] = "T.cuda.warp_reduce",
    [TD_INTRIN_WARP_MAX_REDUX] = "T.cuda.warp_reduce",
    [TD_INTRIN_WARP_MIN_REDUX] = "T.cuda.warp_reduce",
    [TD_INTRIN_CP_ASYNC_COMMIT] = "T.ptx.cp",
    [TD_INTRIN_CP_ASYNC_WAIT] = "T.ptx.cp",
    [TD_INTRIN_CP_ASYNC_WAIT_ALL] = "T.ptx.cp",
    [TD_INTRIN_BLOCK_IDX_X] = "blockIdx.x",
    [TD_INTRIN_BLOCK_IDX_Y] = "blockIdx.y",
    [TD_INTRIN_BLOCK_IDX_Z] = "blockIdx.z",
    [TD_INTRIN_CLUSTER_CTAID_X] = "cbx",
    [TD_INTRIN_CLUSTER_CTAID_Y] = "cby",
    [TD_INTRIN_CLUSTER_CTAID_Z] = "cbz",
    [TD_INTRIN_ELECT_SYNC] = "T.cuda.elect_sync"};

static void intrin(tirx *x, td_buf *o, const td_expr *e)
{
    const char *name = intrin_names[e->intrin];
    switch (e->intrin) {
    case TD_INTRIN_THREAD_IDX_X:
    case TD_INTRIN_BLOCK_IDX_X:
    case TD_INTRIN_BLOCK_IDX_Y:
    case TD_INTRIN_BLOCK_IDX_Z:
    case TD_INTRIN_CLUSTER_CTAID_X:
    case TD_INTRIN_CLUSTER_CTAID_Y:
    case TD_INTRIN_CLUSTER_CTAID_Z:
        /* TVM's names of T.cta_id_in_cluster's variables, as a cluster
         * kernel declares them (`cbx = T.cta_id_in_cluster([2])`). */
        td__buf_puts(o, name);
        return;
    case TD_INTRIN_SYNCTHREADS:
        td__buf_printf(o, "%s(\"shared\")", name);
        return;
    case TD_INTRIN_ELECT_SYNC:
        td__buf_printf(o, "%s()", name);
        return;
    case TD_INTRIN_SYNCWARP:
        td__buf_printf(o, "%s(\"warp\")", name);
        return;
    case TD_INTRIN_CP_ASYNC_COMMIT:
        td__buf_printf(o, "%s(\"async\", \"commit_group\", \"\")", name);
        return;
    case TD_INTRIN_CP_ASYNC_WAIT:
        td__buf_printf(o, "%s(%lld, \"async\", \"wait_group\", \"\")", name,
                       (long long)e->args[0]->i);
        return;
    case TD_INTRIN_CP_ASYNC_WAIT_ALL:
        td__buf_printf(o, "%s(\"async\", \"wait_all\", \"\")", name);
        return;
    case TD_INTRIN_BARRIER_SYNC:
        /* PTX's barrier id is a .u32: a computed id is cast, as TVM's
         * T.ptx.bar.sync requires (a literal converts by itself). */
        td__buf_printf(o, "%s(", name);
        if (e->args[0]->kind == TD__E_INT) {
            expr(x, o, e->args[0], P_LOWEST);
        } else {
            td__buf_puts(o, "T.Cast(\"uint32\", ");
            expr(x, o, e->args[0], P_LOWEST);
            td__buf_puts(o, ")");
        }
        td__buf_puts(o, ", ");
        expr(x, o, e->args[1], P_LOWEST);
        td__buf_puts(o, ")");
        return;
    case TD_INTRIN_WARP_REDUCE:
        td__buf_printf(o, "%s(", name);
        arglist(x, o, e->nargs, e->args);
        td__buf_printf(o, ", \"%s\", %d)", td_combiner_name(e->comb),
                       e->width);
        return;
    case TD_INTRIN_SHFL_XOR:
        td__buf_printf(o, "%s(", name);
        arglist(x, o, e->nargs, e->args);
        td__buf_puts(o, ", 32)");
        return;
    case TD_INTRIN_WARP_SUM_F64MMA:
    case TD_INTRIN_WARP_MAX_REDUX:
    case TD_INTRIN_WARP_MIN_REDUX:
        /* The same reduction, left to TVM's lowering (shuffles). */
        td__buf_printf(o, "%s(", name);
        arglist(x, o, e->nargs, e->args);
        td__buf_printf(o, ", \"%s\", 32)",
                       e->intrin == TD_INTRIN_WARP_SUM_F64MMA ? "sum"
                       : e->intrin == TD_INTRIN_WARP_MAX_REDUX ? "max"
                                                               : "min");
        return;
    default:
        td__buf_printf(o, "%s(", name);
        arglist(x, o, e->nargs, e->args);
        td__buf_puts(o, ")");
        return;
    }
}

/* NAME(a, b) */
static void call2(tirx *x, td_buf *o, const char *name, const td_expr *a,
                  const td_expr *b)
{
    td__buf_printf(o, "%s(", name);
    expr(x, o, a, P_LOWEST);
    td__buf_puts(o, ", ");
    expr(x, o, b, P_LOWEST);
    td__buf_puts(o, ")");
}

/* Value arithmetic: a + b, a - b, a * b, a / b (T.Div(a, b) for integers,
 * C's truncating division, which TVMScript does not spell with `/`),
 * T.max(a, b), T.min(a, b). */
static void valop(tirx *x, td_buf *o, const td_expr *e)
{
    static const char *const text[] = {
        [TD_VAL_ADD] = "+", [TD_VAL_SUB] = "-", [TD_VAL_MUL] = "*",
        [TD_VAL_DIV] = "/"};
    switch (e->valop) {
    case TD_VAL_MAX:
        call2(x, o, "T.max", e->a, e->b);
        return;
    case TD_VAL_MIN:
        call2(x, o, "T.min", e->a, e->b);
        return;
    case TD_VAL_DIV:
        if (!td_dtype_is_float(e->dtype)) {
            call2(x, o, "T.Div", e->a, e->b);
            return;
        }
        break;
    default:
        break;
    }
    int p = prec(e);
    expr(x, o, e->a, p);
    td__buf_printf(o, " %s ", text[e->valop]);
    expr(x, o, e->b, p + 1);
}

static void expr(tirx *x, td_buf *o, const td_expr *e, int minprec)
{
    bool paren = prec(e) < minprec;
    char b[96];
    if (paren)
        td__buf_puts(o, "(");
    switch (e->kind) {
    case TD__E_INT:
        td__buf_printf(o, "%lld", (long long)e->i);
        break;
    case TD__E_CONST:
        spell_const(e, b, sizeof b);
        td__buf_puts(o, b);
        break;
    case TD__E_VAR: {
        if (!x->p->live[e->var->id])
            fail(x, TD_EINVAL); /* used outside its scope */
        const td_expr *v = x->inline_lets ? x->letval[e->var->id] : NULL;
        if (v != NULL && !x->assigned[e->var->id] && !reads_assigned(x, v)) {
            const td_expr *f = td__fold(&x->p->arena, v, NULL);
            if (f == NULL) {
                fail(x, TD_ENOMEM);
                break;
            }
            x->inline_lets = false;
            expr(x, o, f, minprec);
            x->inline_lets = true;
            break;
        }
        td__buf_puts(o, e->var->name);
        break;
    }
    case TD__E_BIN: {
        int p = binops[e->op].prec;
        if (p == P_PRIMARY) {
            td__buf_printf(o, "%s(", binops[e->op].text);
            arglist(x, o, 1, &e->a);
            td__buf_puts(o, ", ");
            arglist(x, o, 1, &e->b);
            td__buf_puts(o, ")");
            break;
        }
        /* Python chains comparisons; shifts read better grouped too. */
        bool chain = p == P_CMP || p == P_SHIFT;
        expr(x, o, e->a, chain ? p + 1 : p);
        td__buf_printf(o, " %s ", binops[e->op].text);
        expr(x, o, e->b, p + 1);
        break;
    }
    case TD__E_COMBINE:
        if (e->comb == TD_COMBINE_SUM) {
            expr(x, o, e->a, P_ADD);
            td__buf_puts(o, " + ");
            expr(x, o, e->b, P_ADD + 1);
        } else {
            td__buf_puts(o, e->comb == TD_COMBINE_MAX ? "T.max(" : "T.min(");
            arglist(x, o, 1, &e->a);
            td__buf_puts(o, ", ");
            arglist(x, o, 1, &e->b);
            td__buf_puts(o, ")");
        }
        break;
    case TD__E_LOAD:
        access(x, o, e->buf, e->nargs, e->args, e->lanes);
        break;
    case TD__E_LANE:
        if (!x->p->live[e->var->id])
            fail(x, TD_EINVAL); /* used outside its scope */
        td__buf_printf(o, "%s[%lld]", e->var->name, (long long)e->i);
        break;
    case TD__E_INTRIN:
        intrin(x, o, e);
        break;
    case TD__E_CALL:
        td__buf_printf(o, "%s(", e->name);
        arglist(x, o, e->nargs, e->args);
        td__buf_puts(o, ")");
        break;
    case TD__E_VALOP:
        valop(x, o, e);
        break;
    case TD__E_MATH: {
        static const char *const names[] = {
            [TD_MATH_EXP] = "T.exp", [TD_MATH_EXP2] = "T.exp2",
            [TD_MATH_LOG2] = "T.log2", [TD_MATH_SQRT] = "T.sqrt"};
        td__buf_printf(o, "%s(", names[e->math]);
        expr(x, o, e->a, P_LOWEST);
        td__buf_puts(o, ")");
        break;
    }
    case TD__E_PAIR:
        if (!x->p->live[e->var->id])
            fail(x, TD_EINVAL); /* used outside its scope */
        td__buf_printf(o, "%s[T.ramp(%lld, 1, 2)]", e->var->name,
                       (long long)e->i * 2);
        break;
    case TD__E_SPLAT:
        td__buf_puts(o, "T.Broadcast(");
        expr(x, o, e->a, P_LOWEST);
        td__buf_puts(o, ", 2)");
        break;
    case TD__E_CAST:
        td__buf_printf(o, "T.Cast(\"%s%s\", ", td_dtype_name(e->dtype),
                       td__is_pair(e) ? "x2" : "");
        expr(x, o, e->a, P_LOWEST);
        td__buf_puts(o, ")");
        break;
    case TD__E_PARAM:
        td__buf_puts(o, e->name);
        break;
    case TD__E_F32X2:
        td__buf_printf(o, "T.ptx.%s.%s.ftz.f32x2(", td__f32x2_ops[e->xop],
                       td__f32x2_rnds[e->xrnd]);
        arglist(x, o, e->nargs, e->args);
        td__buf_puts(o, ")");
        break;
    }
    if (paren)
        td__buf_puts(o, ")");
}

static void top_expr(tirx *x, const td_expr *e, int minprec)
{
    const td_expr *f = td__fold(&x->p->arena, e, NULL);
    if (f == NULL) {
        fail(x, TD_ENOMEM);
        return;
    }
    expr(x, &x->line, f, minprec);
}

static const char *line_text(tirx *x)
{
    return x->line.data != NULL ? x->line.data : "";
}

static void block(tirx *x, const td__stmt *s);

/* The PTX that TVMScript writes as statements with the destination
 * first, as TVM's own sm100 reductions and f32x2 elementwise ops do:
 * T.ptx.mov.b64(d, lo, hi) packs two floats, T.ptx.add.rn.ftz.f32x2(d, a,
 * b) (any f32x2 op and rounding), T.ptx.max.f32(d, a, b, c).  Writes the
 * name to `b` and returns it; NULL for any other value (which then prints
 * as a call that returns it, as it does inside an expression). */
static const char *ptx_stmt_name(const td_expr *e, char *b, size_t cap)
{
    const char *n = NULL;
    if (e == NULL)
        return NULL;
    if (e->kind == TD__E_F32X2) {
        snprintf(b, cap, "T.ptx.%s.%s.ftz.f32x2", td__f32x2_ops[e->xop],
                 td__f32x2_rnds[e->xrnd]);
        return b;
    }
    if (e->kind != TD__E_INTRIN)
        return NULL;
    switch (e->intrin) {
    case TD_INTRIN_PTX_PACK_F32X2: n = "T.ptx.mov.b64"; break;
    case TD_INTRIN_PTX_ADD_F32X2: n = "T.ptx.add.rn.ftz.f32x2"; break;
    case TD_INTRIN_PTX_MAX3_F32: n = "T.ptx.max.f32"; break;
    case TD_INTRIN_PTX_MIN3_F32: n = "T.ptx.min.f32"; break;
    default: return NULL;
    }
    snprintf(b, cap, "%s", n);
    return b;
}

/* The rest of NAME(dst, a, b...) after the destination: ", a, b)". */
static void ptx_operands(tirx *x, const td_expr *e)
{
    for (int i = 0; i < e->nargs; i++) {
        td__buf_puts(&x->line, ", ");
        top_expr(x, e->args[i], P_LOWEST);
    }
    td__buf_puts(&x->line, ")");
}

/* The variable a T.ptx.mov.b64 unpack reads, when `s` stores its low half
 * and the next statement its high half: TVMScript unpacks both at once,
 * T.ptx.mov.b64(lo_dst, hi_dst, v). */
static const td_var *unpack_pair(const td__stmt *s)
{
    const td__stmt *n = s->next;
    const td_expr *lo = s->value, *hi = n != NULL ? n->value : NULL;
    if (s->kind != TD__S_STORE || n == NULL || n->kind != TD__S_STORE ||
        lo->kind != TD__E_INTRIN || lo->intrin != TD_INTRIN_PTX_UNPACK_LO ||
        hi->kind != TD__E_INTRIN || hi->intrin != TD_INTRIN_PTX_UNPACK_HI ||
        lo->args[0]->kind != TD__E_VAR || hi->args[0]->kind != TD__E_VAR ||
        lo->args[0]->var != hi->args[0]->var)
        return NULL;
    return lo->args[0]->var;
}

/* Prints `s` (with the statement after it, for an unpack pair); returns
 * the last statement printed. */
/* Container i of a register buffer: tmp[i] when its elements are the
 * containers, else Rg.view("uint32")[i] (TVM views the buffer so). */
static void ptx_reg(tirx *x, const td__ptx *t, int lane)
{
    static const td_dtype cdt[3] = {TD_U8, TD_U16, TD_U32};
    td_dtype c = cdt[t->bits == 8 ? 0 : t->bits == 16 ? 1 : 2];
    td__arena *a = &x->p->arena;
    const td_expr *sum =
        t->words != NULL ? t->words[lane]
                         : td__mk_bin(a, TD_OP_ADD, t->word, td__mk_int(a, lane));
    const td_expr *i = sum != NULL ? td__fold(a, sum, NULL) : NULL;
    if (i == NULL) {
        fail(x, TD_ENOMEM);
        return;
    }
    if (t->regs->dtype == c)
        td__buf_printf(&x->line, "%s[", t->regs->name);
    else
        td__buf_printf(&x->line, "%s.view(\"%s\")[", t->regs->name,
                       td_dtype_name(c));
    expr(x, &x->line, i, P_LOWEST);
    td__buf_puts(&x->line, "]");
}

/* The access's address: T.address_of(A[i, j]), or a byte offset from the
 * buffer's first element when the emitter computed the storage offset. */
static void ptx_addr(tirx *x, const td__stmt *s)
{
    if (s->ptx->offset == NULL) {
        td__buf_puts(&x->line, "T.address_of(");
        access(x, &x->line, s->buf, s->nidx, s->idx, 1);
        td__buf_puts(&x->line, ")");
        return;
    }
    /* The element offset from the buffer's first element, as a byte offset
     * through TVM's T.ptr_byte_offset: TVM's own copy passes it to a
     * `tvm_builtin_pointer_offset` helper whose builder wants the helper's
     * CUDA source, which a printed body cannot carry; ptr_byte_offset is a
     * TVM intrinsic (`(T*)((char*)p + bytes)` in CUDA), so TVM builds and
     * compiles this text as it is. */
    td__buf_printf(&x->line, "T.ptr_byte_offset(T.address_of(%s[", s->buf->name);
    for (int d = 0; d < s->buf->ndim; d++)
        td__buf_puts(&x->line, d ? ", 0" : "0");
    td__buf_puts(&x->line, "]), ");
    int bytes = td_dtype_bits(s->buf->dtype) / 8;
    const td_expr *off = td__fold(&x->p->arena, s->ptx->offset, NULL);
    if (off == NULL) {
        fail(x, TD_ENOMEM);
        return;
    }
    if (off->kind == TD__E_INT) {
        td__buf_printf(&x->line, "%lld", (long long)off->i * bytes);
    } else if (bytes > 1) {
        expr(x, &x->line, off, P_MUL);
        td__buf_printf(&x->line, " * %d", bytes);
    } else {
        expr(x, &x->line, off, P_LOWEST);
    }
    td__buf_printf(&x->line, ", \"%s\")", td_dtype_name(s->buf->dtype));
}

/* T.ptr_byte_offset(T.address_of(B[0, 0]), bytes, "dtype"): a storage
 * offset of a call buffer (see ptx_addr). */
static void byte_ptr(tirx *x, const td_ir_buf *b, const td_expr *offset)
{
    td__buf_printf(&x->line, "T.ptr_byte_offset(T.address_of(%s[", b->name);
    for (int d = 0; d < b->ndim; d++)
        td__buf_puts(&x->line, d ? ", 0" : "0");
    td__buf_puts(&x->line, "]), ");
    int bytes = td_dtype_bits(b->dtype) / 8;
    const td_expr *off = td__fold(&x->p->arena, offset, NULL);
    if (off == NULL) {
        fail(x, TD_ENOMEM);
        return;
    }
    if (off->kind == TD__E_INT) {
        td__buf_printf(&x->line, "%lld", (long long)off->i * bytes);
    } else if (bytes > 1) {
        expr(x, &x->line, off, P_MUL);
        td__buf_printf(&x->line, " * %d", bytes);
    } else {
        expr(x, &x->line, off, P_LOWEST);
    }
    td__buf_printf(&x->line, ", \"%s\")", td_dtype_name(b->dtype));
}

/* TVM's T.ptx.cp(dst, src, size[, guard], "async", "cg"|"ca", "shared",
 * "global", "", prefetch, "pred"|""): the guard is the int itself after
 * the size with "pred" last, or with a zero fill the src-size operand
 * T.Cast("uint32", T.if_then_else(p != 0, size, 0)), as TVM prints them. */
static void cp_async(tirx *x, const td__stmt *s)
{
    const td__ptx *t = s->ptx;
    int bytes = t->bits * t->lanes / 8;
    td__buf_puts(&x->line, "T.ptx.cp(T.cuda.cvta_generic_to_shared(");
    byte_ptr(x, s->buf, t->offset);
    td__buf_puts(&x->line, "), ");
    byte_ptr(x, t->src, t->src_offset);
    td__buf_printf(&x->line, ", %d", bytes);
    const td_expr *p = NULL;
    if (t->pred != NULL) {
        p = td__fold(&x->p->arena, t->pred, NULL);
        if (p == NULL) {
            fail(x, TD_ENOMEM);
            return;
        }
        td__buf_puts(&x->line, ", ");
        if (t->zfill) {
            td__buf_puts(&x->line, "T.Cast(\"uint32\", T.if_then_else(");
            expr(x, &x->line, p, P_CMP + 1);
            td__buf_printf(&x->line, " != 0, %d, 0))", bytes);
        } else {
            expr(x, &x->line, p, P_LOWEST);
        }
    }
    td__buf_printf(&x->line,
                   ", \"async\", \"%s\", \"shared\", \"global\", \"\", "
                   "\"%s\", \"%s\")",
                   bytes == 16 ? "cg" : "ca", td_ptx_prefetch_name(t->prefetch),
                   t->pred != NULL && !t->zfill ? "pred" : "");
}

/* TVM's positional T.ptx.ld / T.ptx.st: the registers and the address,
 * then the qualifier slots (scalar and vector forms differ in number;
 * 256-bit loads have an L2 eviction slot). */
static void ptx(tirx *x, const td__stmt *s)
{
    const td__ptx *t = s->ptx;
    if (t->cp_async) {
        cp_async(x, s);
        return;
    }
    static const char *const vec[4] = {"", "v2", "v4", "v8"};
    const char *type = t->untyped ? (t->bits == 8    ? "b8"
                                     : t->bits == 16 ? "b16"
                                                     : "b32")
                                  : (t->bits == 8    ? "u8"
                                     : t->bits == 16 ? "u16"
                                                     : "u32");
    const char *space = t->shared ? "shared" : "global";
    td__buf_printf(&x->line, "T.ptx.%s(",
                   t->matrix ? (t->store ? "stmatrix" : "ldmatrix")
                             : (t->store ? "st" : "ld"));
    int nreg = t->lanes;
    for (int k = 0; k <= nreg; k++) {
        bool addr = t->store ? k == 0 : k == nreg;
        if (k > 0)
            td__buf_puts(&x->line, ", ");
        if (!addr) {
            ptx_reg(x, t, t->store ? k - 1 : k);
            continue;
        }
        if (t->shared)
            td__buf_puts(&x->line, "T.cuda.cvta_generic_to_shared(");
        ptx_addr(x, s);
        if (t->shared)
            td__buf_puts(&x->line, ")");
    }
    if (t->matrix) {
        td__buf_printf(&x->line,
                       ", \"sync\", \"aligned\", \"m8n8\", \"x%d\", \"%s\", "
                       "\"shared\", \"b16\", \"\")",
                       t->lanes, t->trans ? "trans" : "");
        return;
    }
    const char *nc = t->nc ? "nc" : "";
    const char *l1 = td_ptx_l1_name(t->l1), *l2 = td_ptx_l2_name(t->l2);
    const char *pf = td_ptx_prefetch_name(t->prefetch);
    if (t->lanes == 1 && t->store)
        td__buf_printf(&x->line,
                       ", \"\", \"\", \"\", \"%s\", \"\", \"\", \"\", \"%s\", \"\")",
                       space, type);
    else if (t->store)
        td__buf_printf(&x->line,
                       ", \"\", \"\", \"%s\", \"\", \"\", \"\", \"%s\", \"%s\", \"\")",
                       space, vec[t->lanes == 2 ? 1 : t->lanes == 4 ? 2 : 3],
                       type);
    else if (t->lanes == 1)
        td__buf_printf(&x->line,
                       ", \"\", \"\", \"\", \"%s\", \"\", \"%s\", \"%s\", \"\", "
                       "\"%s\", \"%s\", \"\")",
                       space, nc, l1, pf, type);
    else if (t->lanes == 8)
        td__buf_printf(&x->line,
                       ", \"\", \"\", \"%s\", \"\", \"%s\", \"%s\", \"%s\", \"\", "
                       "\"%s\", \"v8\", \"%s\", \"\")",
                       space, nc, l1, l2, pf, type);
    else
        td__buf_printf(&x->line,
                       ", \"\", \"\", \"%s\", \"\", \"%s\", \"%s\", \"\", \"%s\", "
                       "\"%s\", \"%s\", \"\")",
                       space, nc, l1, pf, vec[t->lanes == 2 ? 1 : 2], type);
}

/* The expression writer of the async printer (print_tirx_async.c). */
static void async_expr(void *ctx, td_buf *o, const td_expr *e, int level)
{
    tirx *x = ctx;
    const td_expr *f = td__fold(&x->p->arena, e, NULL);
    if (f == NULL)
        fail(x, TD_ENOMEM);
    else
        expr(x, o, f, level == 0 ? P_LOWEST : level == 1 ? P_ADD + 1 : P_MUL);
}

static const td__stmt *stmt(tirx *x, const td__stmt *s)
{
    td__writer *w = &x->p->w;
    td__pctx *p = x->p;
    char pn[64];
    x->line.len = 0;
    if (x->line.data != NULL)
        x->line.data[0] = '\0';
    switch (s->kind) {
    case TD__S_FOR:
        top_expr(x, s->extent, P_LOWEST);
        td__w_open(w, "for %s in T.%s(%s)", s->var->name,
                   s->loop == TD_LOOP_UNROLL ? "unroll" : "serial",
                   line_text(x));
        p->live[s->var->id] = 1;
        block(x, s->body);
        p->live[s->var->id] = 0;
        td__w_close(w);
        return s;
    case TD__S_IF:
        top_expr(x, s->cond, P_LOWEST);
        td__w_open(w, "if %s", line_text(x));
        block(x, s->body);
        if (s->orelse != NULL) {
            td__w_mid(w, "else");
            block(x, s->orelse);
        }
        td__w_close(w);
        return s;
    case TD__S_STORE: {
        const char *ptx = ptx_stmt_name(s->value, pn, sizeof pn);
        const td_var *pk = unpack_pair(s);
        if (pk != NULL) {
            if (!p->live[pk->id])
                fail(x, TD_EINVAL);
            td__buf_puts(&x->line, "T.ptx.mov.b64(");
            access(x, &x->line, s->buf, s->nidx, s->idx, 1);
            td__buf_puts(&x->line, ", ");
            access(x, &x->line, s->next->buf, s->next->nidx, s->next->idx, 1);
            td__buf_printf(&x->line, ", %s)", pk->name);
            td__w_line(w, "%s", line_text(x));
            return s->next;
        }
        if (ptx != NULL) {
            td__buf_printf(&x->line, "%s(", ptx);
            access(x, &x->line, s->buf, s->nidx, s->idx, 1);
            ptx_operands(x, s->value);
            break;
        }
        access(x, &x->line, s->buf, s->nidx, s->idx, 1);
        td__buf_puts(&x->line, " = ");
        top_expr(x, s->value, P_LOWEST);
        break;
    }
    case TD__S_EVAL:
        top_expr(x, s->value, P_LOWEST);
        break;
    case TD__S_LET:
        if (s->var->lanes > 1 && s->value->kind == TD__E_LOAD &&
            swizzled(s->value->buf)) {
            td__w_line(w, "%s = T.alloc_buffer((%d,), \"%s\", scope=\"local\")",
                       s->var->name, s->var->lanes,
                       td_dtype_name(s->var->dtype));
            td__w_open(w, "for td_k in T.vectorized(%d)", s->var->lanes);
            td__buf_printf(&x->line, "%s[td_k] = ", s->var->name);
            access_lane(x, &x->line, s->value->buf, s->value->nargs,
                        (const td_expr *const *)s->value->args);
            td__w_line(w, "%s", line_text(x));
            td__w_close(w);
            p->live[s->var->id] = 1;
            return s;
        }
        if (s->var->lanes > 1) {
            /* A vector: a local buffer of its lanes, stored at once
             * (v[T.ramp(0, 1, n)] = B[i, T.ramp(j, 1, n)]); a lane reads
             * as v[k]. */
            td__w_line(w, "%s = T.alloc_buffer((%d,), \"%s\", scope=\"local\")",
                       s->var->name, s->var->lanes,
                       td_dtype_name(s->var->dtype));
            td__buf_printf(&x->line, "%s[T.ramp(0, 1, %d)] = ", s->var->name,
                           s->var->lanes);
            top_expr(x, s->value, P_LOWEST);
            p->live[s->var->id] = 1;
            break;
        }
        td__buf_printf(&x->line, "%s: T.%s", s->var->name,
                       td_dtype_name(s->var->dtype));
        if (ptx_stmt_name(s->value, pn, sizeof pn) != NULL) {
            /* Declared, then written by the PTX statement. */
            td__w_line(w, "%s", line_text(x));
            x->line.len = 0;
            if (x->line.data != NULL)
                x->line.data[0] = '\0';
            p->live[s->var->id] = 1;
            td__buf_printf(&x->line, "%s(%s", pn, s->var->name);
            ptx_operands(x, s->value);
            break;
        }
        td__buf_puts(&x->line, " = ");
        top_expr(x, s->value, P_LOWEST);
        p->live[s->var->id] = 1;
        if (!td_dtype_is_float(s->var->dtype))
            x->letval[s->var->id] = s->value;
        break;
    case TD__S_ASSIGN:
        if (!p->live[s->var->id])
            fail(x, TD_EINVAL);
        if (ptx_stmt_name(s->value, pn, sizeof pn) != NULL) {
            td__buf_printf(&x->line, "%s(%s", pn, s->var->name);
            ptx_operands(x, s->value);
            break;
        }
        td__buf_printf(&x->line, "%s = ", s->var->name);
        top_expr(x, s->value, P_LOWEST);
        break;
    case TD__S_COMMENT:
        td__w_line(w, "#%s%s", s->text[0] ? " " : "", s->text);
        return s;
    case TD__S_VEC_LET: {
        /* A local buffer of its lanes, written lane by lane or pair by
         * pair (v[T.ramp(2, 1, 2)] = ...). */
        const td_var *v = s->var;
        bool pairs = s->nvals * 2 == v->lanes;
        td__w_line(w, "%s = T.alloc_buffer((%d,), \"%s\", scope=\"local\")",
                   v->name, v->lanes, td_dtype_name(v->dtype));
        p->live[v->id] = 1;
        for (int i = 0; i < s->nvals; i++) {
            x->line.len = 0;
            if (x->line.data != NULL)
                x->line.data[0] = '\0';
            if (pairs)
                td__buf_printf(&x->line, "%s[T.ramp(%d, 1, 2)] = ", v->name,
                               2 * i);
            else
                td__buf_printf(&x->line, "%s[%d] = ", v->name, i);
            top_expr(x, s->vals[i], P_LOWEST);
            td__w_line(w, "%s", line_text(x));
        }
        return s;
    }
    case TD__S_VEC_STORE:
        if (!p->live[s->var->id])
            fail(x, TD_EINVAL);
        if (swizzled(s->buf)) {
            td__w_open(w, "for td_k in T.vectorized(%d)", s->var->lanes);
            access_lane(x, &x->line, s->buf, s->nidx, s->idx);
            td__buf_printf(&x->line, " = %s[td_k]", s->var->name);
            td__w_line(w, "%s", line_text(x));
            td__w_close(w);
            return s;
        }
        access(x, &x->line, s->buf, s->nidx, s->idx, s->var->lanes);
        td__buf_printf(&x->line, " = %s[T.ramp(0, 1, %d)]", s->var->name,
                       s->var->lanes);
        break;
    case TD__S_PTX:
        ptx(x, s);
        break;
    case TD__S_ASYNC:
        td__tirx_async(&(td__async_out){p, &x->line, async_expr, x}, s);
        break;
    case TD__S_MMA:
        td__tirx_mma(&(td__async_out){p, &x->line, async_expr, x}, s);
        break;
    case TD__S_UMMA:
        td__tirx_umma(&(td__async_out){p, &x->line, async_expr, x}, s);
        break;
    case TD__S_CAST_PAIR: {
        /* As TVM's elementwise cast writes the pair conversion: a call of
         * a helper named by the two pair types on the addresses of the
         * first elements, with the helper's CUDA source (TVM puts it in
         * the prelude; the string ends with an escaped newline). */
        td_dtype d = s->buf->dtype, f = s->value->dtype;
        char fn[64];
        snprintf(fn, sizeof fn, "tvm_builtin_cast_%sx2_%sx2",
                 td_dtype_name(f), td_dtype_name(d));
        td__buf_printf(&x->line, "T.cuda.func_call(\"%s\", T.address_of(",
                       fn);
        access(x, &x->line, s->buf, s->nidx, s->idx, 1);
        td__buf_puts(&x->line, "), T.address_of(");
        access(x, &x->line, s->value->buf, s->value->nargs, s->value->args,
               1);
        td__buf_printf(&x->line,
                       "), source_code=\"__forceinline__ __device__ void "
                       "%s(void *dst, void *src) { *(%s *)dst = "
                       "%s(*(const %s *)src); }\\n\")",
                       fn, td__pair_type(d), td__pair_fn(f, d),
                       td__pair_type(f));
        break;
    }
    }
    td__w_line(w, "%s", line_text(x));
    return s;
}

/* Prints a block; its lets go out of scope at its end. */
static void block(tirx *x, const td__stmt *s)
{
    for (const td__stmt *t = s; t != NULL; t = t->next)
        t = stmt(x, t);
    for (const td__stmt *t = s; t != NULL; t = t->next)
        if (t->kind == TD__S_LET || t->kind == TD__S_VEC_LET) {
            x->p->live[t->var->id] = 0;
            x->letval[t->var->id] = NULL;
        }
}

/* Marks the variables some statement under `s` assigns. */
static void mark_assigned(tirx *x, const td__stmt *s)
{
    for (; s != NULL; s = s->next) {
        if (s->kind == TD__S_ASSIGN)
            x->assigned[s->var->id] = 1;
        mark_assigned(x, s->body);
        mark_assigned(x, s->orelse);
    }
}

int td__print_tirx(td__pctx *p)
{
    tirx x;
    memset(&x, 0, sizeof x);
    x.p = p;
    td__buf_init(&x.line);
    size_t nv = (size_t)(p->ir->nvars > 0 ? p->ir->nvars : 1);
    x.letval = td__calloc(nv, sizeof *x.letval);
    x.assigned = td__calloc(nv, 1);
    if (x.letval == NULL || x.assigned == NULL)
        fail(&x, TD_ENOMEM);
    if (p->err == 0) {
        mark_assigned(&x, p->ir->root);
        td__tirx_tmap_decls(p);
        for (const td_ir_buf *b = p->ir->bufs; b != NULL; b = b->next)
            if (b->scratch)
                td__w_line(&p->w,
                           "%s = T.alloc_buffer((%lld,), \"%s\", scope=\"%s\")",
                           b->name, (long long)b->shape[0],
                           td_dtype_name(b->dtype), b->scope);
        block(&x, p->ir->root);
    }
    int err = td__w_finish(&p->w);
    if (p->err == 0 && x.line.err)
        p->err = x.line.err;
    if (p->err == 0 && p->arena.err)
        p->err = p->arena.err;
    td__buf_free(&x.line);
    td__free(x.letval);
    td__free(x.assigned);
    if (p->err != 0)
        return p->err;
    /* TIRx needs no prelude; td_ir_print hands over "". */
    return err;
}
