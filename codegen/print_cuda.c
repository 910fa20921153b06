/*
 * The CUDA C printer: the body as statements for a device function, with
 * call buffers spelled NAME_ptr and indexed row-major (or through their
 * layout, td_ir_buffer_layout, and swizzle), loops of extent 1 dropped,
 * PTX accesses as calls of their helpers, and a prelude (includes and
 * helper functions, each once, in a fixed order) requested by what the
 * body uses.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

/* Room for the longest literal spelling. */
#define SPELL_MAX 128

typedef struct cuda {
    td__pctx *p;
    td_buf line;                  /* the line being composed */
    td__cuda_needs need;          /* what the prelude must provide */
} cuda;

/* C precedence levels (higher binds tighter). */
enum {
    P_LOWEST = 0,
    P_OR = 4,
    P_AND = 5,
    P_XOR = 7,
    P_BITAND = 8,
    P_EQ = 9,
    P_REL = 10,
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
    [TD_OP_ADD] = {"+", P_ADD},     [TD_OP_SUB] = {"-", P_ADD},
    [TD_OP_MUL] = {"*", P_MUL},     [TD_OP_DIV] = {"/", P_MUL},
    [TD_OP_MOD] = {"%", P_MUL},     [TD_OP_MAX] = {"max", P_PRIMARY},
    [TD_OP_MIN] = {"min", P_PRIMARY}, [TD_OP_LT] = {"<", P_REL},
    [TD_OP_LE] = {"<=", P_REL},     [TD_OP_EQ] = {"==", P_EQ},
    [TD_OP_NE] = {"!=", P_EQ},      [TD_OP_AND] = {"&&", P_AND},
    [TD_OP_OR] = {"||", P_OR},      [TD_OP_SHL] = {"<<", P_SHIFT},
    [TD_OP_BITAND] = {"&", P_BITAND}, [TD_OP_XOR] = {"^", P_XOR}};

static bool small_int(td_dtype t)
{
    return t == TD_I8 || t == TD_I16 || t == TD_U8 || t == TD_U16;
}

/* Requests the header a dtype's spelling needs. */
static void need_type(cuda *c, td_dtype t)
{
    int inc = td__cuda_type_include(t);
    if (inc >= 0)
        c->need.inc[inc] = true;
}

static void fail(cuda *c, int code)
{
    if (c->p->err == 0)
        c->p->err = code;
}

/* ---- literals ----------------------------------------------------------- */

/* The shortest of "%e" and "%.8e" that reads back as the same float. */
static void spell_f32(char *b, size_t cap, float x)
{
    if (isnan(x)) {
        snprintf(b, cap, "__int_as_float(0x7fffffff)");
    } else if (isinf(x)) {
        snprintf(b, cap, "%s", x > 0 ? "__int_as_float(0x7f800000)"
                                     : "__int_as_float((int)0xff800000u)");
    } else {
        snprintf(b, cap, "%e", (double)x);
        if (strtof(b, NULL) != x)
            snprintf(b, cap, "%.8e", (double)x);
        size_t n = strlen(b);
        if (n + 1 < cap) {
            b[n] = 'f';
            b[n + 1] = '\0';
        }
    }
}

static void spell_f64(char *b, size_t cap, double x)
{
    if (isnan(x)) {
        snprintf(b, cap, "__longlong_as_double(0x7ff8000000000000LL)");
    } else if (isinf(x)) {
        snprintf(b, cap, "%s",
                 x > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                       : "__longlong_as_double((long long)"
                         "0xfff0000000000000ULL)");
    } else {
        snprintf(b, cap, "%e", x);
        if (strtod(b, NULL) != x)
            snprintf(b, cap, "%.16e", x);
    }
}

static void spell_int(char *b, size_t cap, int64_t v)
{
    if (v == INT64_MIN)
        snprintf(b, cap, "(-9223372036854775807LL - 1)");
    else if (v < INT32_MIN || v > INT32_MAX)
        snprintf(b, cap, "%lldLL", (long long)v);
    else if (v == INT32_MIN)
        snprintf(b, cap, "(-2147483647 - 1)");
    else
        snprintf(b, cap, "%lld", (long long)v);
}

static void spell_const(cuda *c, const td_expr *e, char *b, size_t cap)
{
    char f[48];
    bool low = e->ident == TD__IDENT_LOWEST;
    bool named = low || e->ident == TD__IDENT_HIGHEST;
    switch (e->dtype) {
    case TD_F32:
        if (named) {
            c->need.inc[TD__INC_CFLOAT] = true;
            snprintf(b, cap, "%s", low ? "-FLT_MAX" : "FLT_MAX");
        } else {
            spell_f32(b, cap, (float)e->f);
        }
        return;
    case TD_F64:
        if (named) {
            c->need.inc[TD__INC_CFLOAT] = true;
            snprintf(b, cap, "%s", low ? "-DBL_MAX" : "DBL_MAX");
        } else {
            spell_f64(b, cap, e->f);
        }
        return;
    case TD_F16:
    case TD_BF16:
        if (named && e->dtype == TD_F16)
            snprintf(f, sizeof f, "%s", low ? "-65504.0f" : "65504.0f");
        else if (named)
            snprintf(f, sizeof f, "%s",
                     low ? "-3.38953139e38f" : "3.38953139e38f");
        else
            spell_f32(f, sizeof f, (float)e->f);
        snprintf(b, cap, "%s(%s)",
                 e->dtype == TD_F16 ? "__float2half" : "__float2bfloat16", f);
        return;
    case TD_I32:
        spell_int(b, cap, e->i);
        return;
    case TD_I64:
        if (e->i == INT64_MIN)
            snprintf(b, cap, "(-9223372036854775807LL - 1)");
        else
            snprintf(b, cap, "%lldLL", (long long)e->i);
        return;
    case TD_U32:
        snprintf(b, cap, "%lluu", (unsigned long long)e->u);
        return;
    case TD_U64:
        snprintf(b, cap, "%lluULL", (unsigned long long)e->u);
        return;
    case TD_I8:
    case TD_I16:
        snprintf(b, cap, e->i < 0 ? "(%s)(%lld)" : "(%s)%lld",
                 td__cuda_type(e->dtype), (long long)e->i);
        return;
    case TD_U8:
    case TD_U16:
        snprintf(b, cap, "(%s)%llu", td__cuda_type(e->dtype),
                 (unsigned long long)e->u);
        return;
    case TD_F8E4M3:
    case TD_F8E5M2:
        /* The constructor rounds to nearest even, saturating to the
         * largest finite value (__NV_SATFINITE); no ordering identities
         * exist for float8 (td_identity refuses them). */
        c->need.inc[TD__INC_FP8] = true;
        spell_f32(f, sizeof f, (float)e->f);
        snprintf(b, cap, "%s(%s)", td__cuda_type(e->dtype), f);
        return;
    case TD_F8E8M0: /* confined (td_dtype_is_confined): the IR builds */
    case TD_F4E2M1: /* no constant of them; a second guard */
    case TD_DTYPE_COUNT:
        fail(c, TD_EINVAL);
        break;
    }
    snprintf(b, cap, "0");
}

/* ---- expressions -------------------------------------------------------- */

static bool half_like(td_dtype t)
{
    return t == TD_F16 || t == TD_BF16;
}

/*
 * How a cast from `from` to `to` is written: the conversion function
 * (NULL for a C cast `(T)x`), and whether the operand goes through
 * float32 first (*via).  Narrowing to float16 / bfloat16 rounds to nearest
 * even once: from float32 and float64 with CUDA's _rn / double
 * conversions, from the other 16-bit float and from the integers through
 * float32 (exact there, or beyond float16's range either way), from the
 * 32- and 64-bit integers to bfloat16 with CUDA's integer conversions.
 * Everything else is a C cast: to float32 (a 16-bit float converts
 * exactly), to float64 (16-bit floats through float32), to integers (C's
 * truncation toward zero, 16-bit floats through float32; CUDA's cvt.rzi
 * saturates values out of range and gives 0 for NaN).
 */
static const char *cast_form(td_dtype from, td_dtype to, bool *via)
{
    const char *fn = NULL;
    if (td_dtype_is_float8(to)) {
        /* The __nv_fp8_* constructor from float or double rounds to
         * nearest even and saturates to the largest finite value
         * (__NV_SATFINITE, TVM's conversion too); every other dtype goes
         * through float32 first (exact for the 16-bit floats and float8). */
        *via = from != TD_F32 && from != TD_F64;
        return td__cuda_type(to);
    }
    if (to == TD_F16) {
        fn = from == TD_F64 ? "__double2half" : "__float2half_rn";
    } else if (to == TD_BF16) {
        switch (from) {
        case TD_F64: fn = "__double2bfloat16"; break;
        case TD_I32: fn = "__int2bfloat16_rn"; break;
        case TD_U32: fn = "__uint2bfloat16_rn"; break;
        case TD_I64: fn = "__ll2bfloat16_rn"; break;
        case TD_U64: fn = "__ull2bfloat16_rn"; break;
        default: fn = "__float2bfloat16_rn"; break;
        }
    }
    *via = ((half_like(from) || td_dtype_is_float8(from)) && to != TD_F32) ||
           (fn != NULL && from != TD_F32 && from != TD_F64 &&
            strstr(fn, "__float2") == fn);
    return fn;
}

static int prec(cuda *c, const td_expr *e)
{
    char b[SPELL_MAX];
    switch (e->kind) {
    case TD__E_INT:
    case TD__E_CONST:
        if (e->kind == TD__E_INT)
            spell_int(b, sizeof b, e->i);
        else
            spell_const(c, e, b, sizeof b);
        return b[0] == '-' || b[0] == '(' ? P_UNARY : P_PRIMARY;
    case TD__E_BIN:
        return binops[e->op].prec;
    case TD__E_COMBINE:
        if (small_int(e->dtype))
            return P_UNARY;
        return e->comb == TD_COMBINE_SUM ? P_ADD : P_PRIMARY;
    case TD__E_INTRIN:
        return (e->intrin == TD_INTRIN_THREAD_IDX_X ||
                e->intrin == TD_INTRIN_BLOCK_IDX_X ||
                e->intrin == TD_INTRIN_BLOCK_IDX_Y ||
                e->intrin == TD_INTRIN_BLOCK_IDX_Z) ? P_UNARY : P_PRIMARY;
    case TD__E_LOAD:
        return e->lanes > 1 ? P_UNARY : P_PRIMARY;
    case TD__E_VALOP:
        if (td__is_pair(e))
            return P_PRIMARY;
        if (small_int(e->dtype))
            return P_UNARY;
        switch (e->valop) {
        case TD_VAL_ADD:
        case TD_VAL_SUB: return P_ADD;
        case TD_VAL_MUL:
        case TD_VAL_DIV: return P_MUL;
        default: return P_PRIMARY;
        }
    case TD__E_CAST:
    {
        bool via;
        if (td__is_pair(e))
            return P_PRIMARY;
        return cast_form(e->a->dtype, e->dtype, &via) ? P_PRIMARY : P_UNARY;
    }
    default:
        return P_PRIMARY;
    }
}

static void expr(cuda *c, td_buf *o, const td_expr *e, int minprec);

static void args(cuda *c, td_buf *o, const td_expr *e)
{
    td__buf_puts(o, "(");
    for (int i = 0; i < e->nargs; i++) {
        if (i > 0)
            td__buf_puts(o, ", ");
        expr(c, o, e->args[i], P_LOWEST);
    }
    td__buf_puts(o, ")");
}

/* NAME_ptr[flat] (NAME[i] for scratch), with the row-major flat index
 * built and folded in the print arena. */
static void access(cuda *c, td_buf *o, const td_ir_buf *b, int n,
                   const td_expr *const *idx)
{
    td__arena *a = &c->p->arena;
    const td_expr *flat = NULL;
    if (b->lay_n > 0 && n == b->ndim) {
        /* A layout (td_ir_buffer_layout): each dim's index split over its
         * iters. */
        flat = td__mk_int(a, b->lay_off);
        for (int k = 0; k < n; k++) {
            int64_t inner = 1;
            for (int j = b->lay_sep[k + 1] - 1; j >= b->lay_sep[k]; j--) {
                const td_expr *t = idx[k];
                if (inner > 1)
                    t = td__mk_bin(a, TD_OP_DIV, t, td__mk_int(a, inner));
                if (j > b->lay_sep[k])
                    t = td__mk_bin(a, TD_OP_MOD, t,
                                   td__mk_int(a, b->lay_ext[j]));
                t = td__mk_bin(a, TD_OP_MUL, t, td__mk_int(a, b->lay_str[j]));
                flat = td__mk_bin(a, TD_OP_ADD, flat, t);
                inner *= b->lay_ext[j];
            }
        }
    } else {
        for (int k = 0; k < n; k++) {
            const td_expr *t =
                td__mk_bin(a, TD_OP_MUL, idx[k], td__mk_int(a, b->stride[k]));
            flat = k == 0 ? t : td__mk_bin(a, TD_OP_ADD, flat, t);
        }
    }
    flat = flat != NULL ? td__fold(a, flat, c->p->zero) : NULL;
    /* A swizzled buffer: flat ^ (flat / 2^(m+s) % 2^b * 2^m).  Offsets
     * stay below 2^31, so a swizzle whose source bits start there is the
     * identity. */
    int zb = b->swz_bits, zm = b->swz_base, zs = b->swz_shift;
    if (flat != NULL && zb > 0 && zm + zs < 31) {
        const td_expr *hi = td__mk_bin(
            a, TD_OP_MOD,
            td__mk_bin(a, TD_OP_DIV, flat,
                       td__mk_int(a, (int64_t)1 << (zm + zs))),
            td__mk_int(a, (int64_t)1 << zb));
        if (zm > 0)
            hi = td__mk_bin(a, TD_OP_MUL, hi, td__mk_int(a, (int64_t)1 << zm));
        const td_expr *x = td__mk_bin(a, TD_OP_XOR, flat, hi);
        flat = x != NULL ? td__fold(a, x, c->p->zero) : NULL;
    }
    if (flat == NULL) {
        fail(c, TD_ENOMEM);
        return;
    }
    td__buf_puts(o, b->name);
    if (!b->scratch)
        td__buf_puts(o, "_ptr");
    td__buf_puts(o, "[");
    expr(c, o, flat, P_LOWEST);
    td__buf_puts(o, "]");
}


static void combine(cuda *c, td_buf *o, const td_expr *e)
{
    td_dtype t = e->dtype;
    const char *ct = td__cuda_type(t);
    bool mx = e->comb == TD_COMBINE_MAX;
    if (e->comb == TD_COMBINE_SUM) {
        if (small_int(t))
            td__buf_printf(o, "(%s)(", ct);
        expr(c, o, e->a, P_ADD);
        td__buf_puts(o, " + ");
        expr(c, o, e->b, P_ADD + 1);
        if (small_int(t))
            td__buf_puts(o, ")");
        return;
    }
    if (small_int(t)) {
        td__buf_printf(o, "(%s)%s((int)", ct, mx ? "max" : "min");
        expr(c, o, e->a, P_UNARY);
        td__buf_puts(o, ", (int)");
        expr(c, o, e->b, P_UNARY);
        td__buf_puts(o, ")");
        return;
    }
    const char *fn;
    switch (t) {
    case TD_F32: fn = mx ? "fmaxf" : "fminf"; break;
    case TD_F64: fn = mx ? "fmax" : "fmin"; break;
    case TD_F16:
    case TD_BF16: fn = mx ? "__hmax" : "__hmin"; break;
    default: fn = mx ? "max" : "min"; break;
    }
    td__buf_printf(o, "%s(", fn);
    expr(c, o, e->a, P_LOWEST);
    td__buf_puts(o, ", ");
    expr(c, o, e->b, P_LOWEST);
    td__buf_puts(o, ")");
}

/* Value arithmetic: max / min as the combiners spell them; + - * / as
 * operators (cuda_fp16.h / cuda_bf16.h define them for the 16-bit
 * floats), narrowed back to the dtype for the integers C promotes. */
static void valop(cuda *c, td_buf *o, const td_expr *e)
{
    static const char *const text[] = {
        [TD_VAL_ADD] = "+", [TD_VAL_SUB] = "-", [TD_VAL_MUL] = "*",
        [TD_VAL_DIV] = "/"};
    if (e->valop == TD_VAL_MAX || e->valop == TD_VAL_MIN) {
        td_expr m = *e;
        m.kind = TD__E_COMBINE;
        m.comb = e->valop == TD_VAL_MAX ? TD_COMBINE_MAX : TD_COMBINE_MIN;
        combine(c, o, &m);
        return;
    }
    int p = e->valop == TD_VAL_ADD || e->valop == TD_VAL_SUB ? P_ADD : P_MUL;
    if (small_int(e->dtype))
        td__buf_printf(o, "(%s)(", td__cuda_type(e->dtype));
    /* Two uint16 operands promote to int, whose product can overflow
     * (65535 * 65535 > INT_MAX, undefined behaviour): multiply unsigned. */
    bool wide = e->valop == TD_VAL_MUL && e->dtype == TD_U16;
    if (wide)
        td__buf_puts(o, "(unsigned int)");
    expr(c, o, e->a, wide ? P_UNARY : p);
    td__buf_printf(o, " %s ", text[e->valop]);
    expr(c, o, e->b, p + 1);
    if (small_int(e->dtype))
        td__buf_puts(o, ")");
}

static void math(cuda *c, td_buf *o, const td_expr *e)
{
    static const char *const names[3][4] = {
        {"expf", "exp2f", "log2f", "sqrtf"},  /* float32 */
        {"exp", "exp2", "log2", "sqrt"},      /* float64 */
        {"hexp", "hexp2", "hlog2", "hsqrt"}}; /* float16, bfloat16 */
    int k = e->dtype == TD_F32 ? 0 : e->dtype == TD_F64 ? 1 : 2;
    td__buf_printf(o, "%s(", names[k][e->math]);
    expr(c, o, e->a, P_LOWEST);
    td__buf_puts(o, ")");
}

static void cast(cuda *c, td_buf *o, const td_expr *e)
{
    bool via;
    const char *fn = cast_form(e->a->dtype, e->dtype, &via);
    if (fn != NULL)
        td__buf_printf(o, "%s(", fn);
    else
        td__buf_printf(o, "(%s)", td__cuda_type(e->dtype));
    if (via)
        td__buf_puts(o, "(float)");
    expr(c, o, e->a, fn != NULL && !via ? P_LOWEST : P_UNARY);
    if (fn != NULL)
        td__buf_puts(o, ")");
}

static const char *const intrin_names[TD_INTRIN_COUNT] = {
    [TD_INTRIN_THREAD_IDX_X] = "(int)threadIdx.x",
    [TD_INTRIN_ACTIVEMASK] = "__activemask",
    [TD_INTRIN_SHFL_XOR] = "__shfl_xor_sync",
    [TD_INTRIN_WARP_REDUCE] = "tvm_builtin_cuda_warp_reduce",
    [TD_INTRIN_SYNCTHREADS] = "__syncthreads",
    [TD_INTRIN_SYNCWARP] = "__syncwarp",
    [TD_INTRIN_BARRIER_SYNC] = "asm volatile",
    [TD_INTRIN_PTX_PACK_F32X2] = "tvm_builtin_ptx_mov_b64_pack",
    [TD_INTRIN_PTX_UNPACK_LO] = "tvm_builtin_ptx_mov_b64_unpack_lo",
    [TD_INTRIN_PTX_UNPACK_HI] = "tvm_builtin_ptx_mov_b64_unpack_hi",
    [TD_INTRIN_PTX_ADD_F32X2] = "tvm_builtin_ptx_add_rn_ftz_f32x2",
    [TD_INTRIN_PTX_MAX3_F32] = "tvm_builtin_ptx_max3_f32",
    [TD_INTRIN_PTX_MIN3_F32] = "tvm_builtin_ptx_min3_f32",
    [TD_INTRIN_WARP_SUM_F64MMA] = "td_warp_sum_f64mma",
    [TD_INTRIN_WARP_MAX_REDUX] = "td_warp_max_redux",
    [TD_INTRIN_WARP_MIN_REDUX] = "td_warp_min_redux",
    [TD_INTRIN_CP_ASYNC_COMMIT] = "td_cp_async_commit_group",
    [TD_INTRIN_CP_ASYNC_WAIT] = "td_cp_async_wait_group",
    [TD_INTRIN_CP_ASYNC_WAIT_ALL] = "td_cp_async_wait_all",
    [TD_INTRIN_BLOCK_IDX_X] = "(int)blockIdx.x",
    [TD_INTRIN_BLOCK_IDX_Y] = "(int)blockIdx.y",
    [TD_INTRIN_BLOCK_IDX_Z] = "(int)blockIdx.z",
    [TD_INTRIN_CLUSTER_CTAID_X] = "td_cluster_ctaid_x",
    [TD_INTRIN_CLUSTER_CTAID_Y] = "td_cluster_ctaid_y",
    [TD_INTRIN_CLUSTER_CTAID_Z] = "td_cluster_ctaid_z",
    [TD_INTRIN_ELECT_SYNC] = "td_elect_sync"};

static void intrin(cuda *c, td_buf *o, const td_expr *e)
{
    c->need.intrin[e->intrin] = true;
    if (e->intrin == TD_INTRIN_PTX_ADD_F32X2)
        c->need.f32x2[0] |= 1u; /* add.rn */
    switch (e->intrin) {
    case TD_INTRIN_THREAD_IDX_X:
    case TD_INTRIN_BLOCK_IDX_X:
    case TD_INTRIN_BLOCK_IDX_Y:
    case TD_INTRIN_BLOCK_IDX_Z:
        td__buf_puts(o, intrin_names[e->intrin]);
        return;
    case TD_INTRIN_WARP_REDUCE: {
        int lg = 0;
        while ((1 << lg) < e->width)
            lg++;
        c->need.warp[e->comb] |= 1u << lg;
        if (e->comb != TD_COMBINE_SUM)
            c->need.maxmin = true;
        td__buf_printf(o, "tvm_builtin_cuda_warp_reduce_%s_%d",
                       td__comb_names[e->comb], e->width);
        args(c, o, e);
        return;
    }
    case TD_INTRIN_CP_ASYNC_WAIT:
        /* the count is a template argument: an immediate in the PTX */
        td__buf_printf(o, "%s<%lld>()", intrin_names[e->intrin],
                       (long long)e->args[0]->i);
        return;
    case TD_INTRIN_BARRIER_SYNC:
        td__buf_puts(o, "asm volatile(\"bar.sync %0, %1;\" :: \"r\"(");
        expr(c, o, e->args[0], P_LOWEST);
        td__buf_puts(o, "), \"r\"(");
        expr(c, o, e->args[1], P_LOWEST);
        td__buf_puts(o, ") : \"memory\")");
        return;
    default:
        td__buf_puts(o, intrin_names[e->intrin]);
        args(c, o, e);
        return;
    }
}

/* The type of a vector variable: two 64-bit lanes are a CUDA vector of
 * their own type (double2, longlong2, ulonglong2); narrower lanes live in
 * unsigned words (4, 8 or 16 bytes). */
static const char *vec_type(td_dtype t, int lanes)
{
    if (td_dtype_bits(t) == 64)
        return t == TD_F64 ? "double2" : t == TD_I64 ? "longlong2" : "ulonglong2";
    switch (lanes * td_dtype_bits(t) / 8) {
    case 4: return "unsigned int";
    case 8: return "uint2";
    default: return "uint4";
    }
}

/* The C type an 8- or 16-bit integer lane is cut to. */
static const char *int_lane_type(td_dtype t)
{
    switch (t) {
    case TD_I8: return "int8_t";
    case TD_U8: return "uint8_t";
    case TD_I16: return "int16_t";
    default: return "uint16_t";
    }
}

/* Lane i of a vector variable: its own field (64-bit lanes), its 32-bit
 * word reinterpreted (float32, int32), or the word's bits shifted down and
 * cut (float16, bfloat16, 8- and 16-bit integers). */
static void lane(cuda *c, td_buf *o, const td_expr *e)
{
    static const char *const field[] = {".x", ".y", ".z", ".w"};
    const td_var *v = e->var;
    if (!c->p->live[v->id])
        fail(c, TD_EINVAL); /* used outside its scope */
    int bits = td_dtype_bits(v->dtype);
    if (bits == 64) {
        td__buf_printf(o, "%s%s", v->name, field[e->i & 1]);
        return;
    }
    int word = (int)e->i * bits / 32;
    const char *f = v->lanes * bits == 32 ? "" : field[word & 3];
    if (bits == 32) {
        td__buf_printf(o, v->dtype == TD_F32   ? "__uint_as_float(%s%s)"
                          : v->dtype == TD_I32 ? "(int)%s%s"
                                               : "%s%s",
                       v->name, f);
        return;
    }
    int shift = (int)(e->i * bits) % 32;
    if (v->dtype != TD_F16 && v->dtype != TD_BF16) {
        if (shift != 0)
            td__buf_printf(o, "(%s)(%s%s >> %d)", int_lane_type(v->dtype),
                           v->name, f, shift);
        else
            td__buf_printf(o, "(%s)%s%s", int_lane_type(v->dtype), v->name, f);
        return;
    }
    td__buf_printf(o, "%s((unsigned short)(%s%s%s))",
                   v->dtype == TD_F16 ? "__ushort_as_half"
                                      : "__ushort_as_bfloat16",
                   v->name, f, shift != 0 ? " >> 16" : "");
}

static void expr(cuda *c, td_buf *o, const td_expr *e, int minprec);

/* The 32-bit word w of a vector variable: NAME.x ... (NAME alone when the
 * vector is one word). */
static void word(td_buf *o, const td_var *v, int w)
{
    static const char *const field[] = {".x", ".y", ".z", ".w"};
    td__buf_printf(o, "%s%s", v->name,
                   v->lanes * td_dtype_bits(v->dtype) == 32 ? ""
                                                            : field[w & 3]);
}

/* A pair: of a vector variable (td_bits_half2(v.y), or a float2 of two
 * words), a splat (__half2half2(a)), paired arithmetic (__hadd2(a, b),
 * h2exp(a)) or a paired conversion (__float22half2_rn(p)). */
static void pair(cuda *c, td_buf *o, const td_expr *e)
{
    static const char *const ops[] = {
        [TD_VAL_ADD] = "__hadd2", [TD_VAL_SUB] = "__hsub2",
        [TD_VAL_MUL] = "__hmul2", [TD_VAL_MAX] = "__hmax2",
        [TD_VAL_MIN] = "__hmin2"};
    bool h = e->dtype == TD_F16;
    switch (e->kind) {
    case TD__E_PAIR:
        if (!c->p->live[e->var->id])
            fail(c, TD_EINVAL); /* used outside its scope */
        if (e->dtype == TD_F32) {
            td__buf_puts(o, "make_float2(__uint_as_float(");
            word(o, e->var, (int)e->i * 2);
            td__buf_puts(o, "), __uint_as_float(");
            word(o, e->var, (int)e->i * 2 + 1);
            td__buf_puts(o, "))");
            return;
        }
        c->need.bits2[!h] = true;
        td__buf_puts(o, h ? "td_bits_half2(" : "td_bits_bfloat162(");
        word(o, e->var, (int)e->i);
        td__buf_puts(o, ")");
        return;
    case TD__E_SPLAT:
        td__buf_puts(o, h ? "__half2half2(" : "__bfloat162bfloat162(");
        expr(c, o, e->a, P_LOWEST);
        td__buf_puts(o, ")");
        return;
    case TD__E_MATH:
        td__buf_puts(o, e->math == TD_MATH_EXP ? "h2exp(" : "h2exp2(");
        expr(c, o, e->a, P_LOWEST);
        td__buf_puts(o, ")");
        return;
    case TD__E_VALOP:
        td__buf_printf(o, "%s(", ops[e->valop]);
        expr(c, o, e->a, P_LOWEST);
        td__buf_puts(o, ", ");
        expr(c, o, e->b, P_LOWEST);
        td__buf_puts(o, ")");
        return;
    default: /* TD__E_CAST */
        td__buf_printf(o, "%s(", td__pair_fn(e->a->dtype, e->dtype));
        expr(c, o, e->a, P_LOWEST);
        td__buf_puts(o, ")");
        return;
    }
}

static void expr(cuda *c, td_buf *o, const td_expr *e, int minprec)
{
    bool paren = prec(c, e) < minprec;
    char b[SPELL_MAX];
    need_type(c, e->dtype);
    if (td__is_pair(e)) {
        pair(c, o, e);
        return;
    }
    if (paren)
        td__buf_puts(o, "(");
    switch (e->kind) {
    case TD__E_INT:
        spell_int(b, sizeof b, e->i);
        td__buf_puts(o, b);
        break;
    case TD__E_CONST:
        spell_const(c, e, b, sizeof b);
        td__buf_puts(o, b);
        break;
    case TD__E_VAR:
        if (!c->p->live[e->var->id])
            fail(c, TD_EINVAL); /* used outside its scope */
        td__buf_puts(o, e->var->name);
        break;
    case TD__E_BIN: {
        int p = binops[e->op].prec;
        if (e->op == TD_OP_MAX || e->op == TD_OP_MIN) {
            td__buf_printf(o, "%s(", binops[e->op].text);
            expr(c, o, e->a, P_LOWEST);
            td__buf_puts(o, ", ");
            expr(c, o, e->b, P_LOWEST);
            td__buf_puts(o, ")");
            break;
        }
        /* Comparisons and shifts do not chain: both sides bind tighter.
         * An xor groups its operands whatever they are, for the reader
         * (C's ^ binds looser than arithmetic, which few remember). */
        if (e->op == TD_OP_XOR) {
            expr(c, o, e->a, P_UNARY);
            td__buf_puts(o, " ^ ");
            expr(c, o, e->b, P_UNARY);
            break;
        }
        bool chain = p == P_REL || p == P_EQ || p == P_SHIFT;
        expr(c, o, e->a, chain ? p + 1 : p);
        td__buf_printf(o, " %s ", binops[e->op].text);
        expr(c, o, e->b, p + 1);
        break;
    }
    case TD__E_COMBINE:
        combine(c, o, e);
        break;
    case TD__E_LOAD:
        if (e->lanes > 1)
            td__buf_printf(o, "*(const %s *)&",
                           vec_type(e->dtype, e->lanes));
        access(c, o, e->buf, e->nargs, e->args);
        break;
    case TD__E_INTRIN:
        intrin(c, o, e);
        break;
    case TD__E_CALL:
        td__buf_puts(o, e->name);
        args(c, o, e);
        break;
    case TD__E_LANE:
        lane(c, o, e);
        break;
    case TD__E_VALOP:
        valop(c, o, e);
        break;
    case TD__E_MATH:
        math(c, o, e);
        break;
    case TD__E_CAST:
        cast(c, o, e);
        break;
    case TD__E_PARAM:
        td__buf_puts(o, e->name);
        break;
    case TD__E_F32X2:
        c->need.f32x2[e->xop] |= 1u << e->xrnd;
        td__f32x2_name(o, e->xop, e->xrnd);
        args(c, o, e);
        break;
    case TD__E_PAIR:  /* pairs are printed above */
    case TD__E_SPLAT:
        break;
    }
    if (paren)
        td__buf_puts(o, ")");
}

/* Folds e (dropped loop variables become 0) and appends it to the line. */
static void top_expr(cuda *c, const td_expr *e)
{
    const td_expr *f = td__fold(&c->p->arena, e, c->p->zero);
    if (f == NULL) {
        fail(c, TD_ENOMEM);
        return;
    }
    expr(c, &c->line, f, P_LOWEST);
}

/* ---- statements --------------------------------------------------------- */

static void line_reset(cuda *c)
{
    c->line.len = 0;
    if (c->line.data != NULL)
        c->line.data[0] = '\0';
}

static const char *line_text(cuda *c)
{
    return c->line.data != NULL ? c->line.data : "";
}

static void block(cuda *c, const td__stmt *s);
static void ptx(cuda *c, const td__stmt *s);

/* Folds n indices into out; false (and ENOMEM) when the arena fails. */
static bool fold_idx(cuda *c, int n, const td_expr *const *idx,
                     const td_expr **out)
{
    for (int k = 0; k < n; k++) {
        out[k] = td__fold(&c->p->arena, idx[k], c->p->zero);
        if (out[k] == NULL) {
            fail(c, TD_ENOMEM);
            return false;
        }
    }
    return true;
}

/* *(__half2 *)&D_ptr[i] = __float22half2_rn(*(const float2 *)&S_ptr[j]) */
static void cast_pair(cuda *c, const td__stmt *s)
{
    const td_expr *di[TD_MAX_RANK], *si[TD_MAX_RANK];
    const td_expr *from = s->value;
    td_dtype d = s->buf->dtype, f = from->dtype;
    const char *fn = td__pair_fn(f, d);
    if (!fold_idx(c, s->nidx, s->idx, di) ||
        !fold_idx(c, from->nargs, from->args, si))
        return;
    need_type(c, d);
    need_type(c, f);
    td__buf_printf(&c->line, "*(%s *)&", td__pair_type(d));
    access(c, &c->line, s->buf, s->nidx, di);
    td__buf_printf(&c->line, " = %s(*(const %s *)&", fn, td__pair_type(f));
    access(c, &c->line, from->buf, from->nargs, si);
    td__buf_puts(&c->line, ")");
}

/* One 32-bit word of a vector built from values: value w (a pair) or
 * values 2w, 2w+1 (16-bit lanes), or value w (a 32-bit lane), as bits;
 * 8- and 16-bit integer lanes are cut to their width and shifted into
 * place. */
static void vec_word(cuda *c, const td__stmt *s, int w)
{
    const td_var *v = s->var;
    const td_expr *f[4];
    bool pairs = s->nvals * 2 == v->lanes;
    int bits = td_dtype_bits(v->dtype), n = pairs ? 1 : 32 / bits;
    for (int k = 0; k < n; k++) {
        f[k] = td__fold(&c->p->arena, s->vals[w * n + k], c->p->zero);
        if (f[k] == NULL) {
            fail(c, TD_ENOMEM);
            return;
        }
    }
    td_buf *o = &c->line;
    if (bits == 32) {
        td__buf_puts(o, v->dtype == TD_F32   ? "__float_as_uint("
                        : v->dtype == TD_I32 ? "(unsigned int)("
                                             : "(");
        expr(c, o, f[0], P_LOWEST);
        td__buf_puts(o, ")");
        return;
    }
    if (v->dtype != TD_F16 && v->dtype != TD_BF16) {
        /* (unsigned int)(uint8_t)(a) | (unsigned int)(uint8_t)(b) << 8 ... */
        const char *u = bits == 8 ? "uint8_t" : "uint16_t";
        td__buf_puts(o, "(");
        for (int k = 0; k < n; k++) {
            td__buf_printf(o, "%s(unsigned int)(%s)(", k > 0 ? " | " : "", u);
            expr(c, o, f[k], P_LOWEST);
            td__buf_puts(o, ")");
            if (k > 0)
                td__buf_printf(o, " << %d", k * bits);
        }
        td__buf_puts(o, ")");
        return;
    }
    bool h = v->dtype == TD_F16;
    c->need.bits2[!h] = true;
    td__buf_puts(o, h ? "td_half2_bits(" : "td_bfloat162_bits(");
    if (!pairs)
        td__buf_puts(o, h ? "__halves2half2(" : "__halves2bfloat162(");
    expr(c, o, f[0], P_LOWEST);
    if (!pairs) {
        td__buf_puts(o, ", ");
        expr(c, o, f[1], P_LOWEST);
        td__buf_puts(o, ")");
    }
    td__buf_puts(o, ")");
}

/* uint4 r = make_uint4(w0, w1, w2, w3); two 64-bit lanes:
 * double2 r = make_double2(a, b) */
static void vec_let(cuda *c, const td__stmt *s)
{
    const td_var *v = s->var;
    need_type(c, v->dtype);
    const char *t = vec_type(v->dtype, v->lanes);
    if (td_dtype_bits(v->dtype) == 64) {
        td__buf_printf(&c->line, "%s %s = make_%s(", t, v->name, t);
        for (int l = 0; l < 2; l++) {
            const td_expr *x = td__fold(&c->p->arena, s->vals[l], c->p->zero);
            if (x == NULL) {
                fail(c, TD_ENOMEM);
                return;
            }
            if (l > 0)
                td__buf_puts(&c->line, ", ");
            expr(c, &c->line, x, P_LOWEST);
        }
        td__buf_puts(&c->line, ")");
        c->p->live[v->id] = 1;
        return;
    }
    int words = v->lanes * td_dtype_bits(v->dtype) / 32;
    if (words > 1 && td_dtype_bits(v->dtype) < 32) {
        /* Words of several lanes each get a line of their own:
         * unsigned int vr0 = ...; ... uint4 vr = make_uint4(vr0, ...) */
        for (int w = 0; w < words; w++) {
            line_reset(c);
            vec_word(c, s, w);
            td__w_line(&c->p->w, "unsigned int %s%d = %s;", v->name, w,
                       line_text(c));
        }
        line_reset(c);
        td__buf_printf(&c->line, "%s %s = make_%s(", t, v->name, t);
        for (int w = 0; w < words; w++)
            td__buf_printf(&c->line, "%s%s%d", w > 0 ? ", " : "", v->name, w);
        td__buf_puts(&c->line, ")");
        c->p->live[v->id] = 1;
        return;
    }
    td__buf_printf(&c->line, "%s %s = %s", t, v->name,
                   words == 4 ? "make_uint4(" : words == 2 ? "make_uint2(" : "");
    for (int w = 0; w < words; w++) {
        if (w > 0)
            td__buf_puts(&c->line, ", ");
        vec_word(c, s, w);
    }
    if (words > 1)
        td__buf_puts(&c->line, ")");
    c->p->live[v->id] = 1;
}

/* The expression writer of the async printer (print_cuda_async.c). */
static void async_expr(void *ctx, td_buf *o, const td_expr *e, int level)
{
    cuda *c = ctx;
    const td_expr *f = td__fold(&c->p->arena, e, c->p->zero);
    if (f == NULL)
        fail(c, TD_ENOMEM);
    else
        expr(c, o, f, level == 0 ? P_LOWEST : level == 1 ? P_ADD + 1 : P_MUL);
}

static void stmt(cuda *c, const td__stmt *s)
{
    td__writer *w = &c->p->w;
    td__pctx *p = c->p;
    line_reset(c);
    switch (s->kind) {
    case TD__S_FOR: {
        const td_expr *ext = td__fold(&p->arena, s->extent, p->zero);
        int64_t v;
        if (ext == NULL) {
            fail(c, TD_ENOMEM);
            return;
        }
        int id = s->var->id;
        if (td__is_int(ext, &v) && v == 1) {
            /* A loop of one iteration: its body with the variable = 0. */
            p->zero[id] = p->live[id] = 1;
            block(c, s->body);
            p->zero[id] = p->live[id] = 0;
            return;
        }
        expr(c, &c->line, ext, P_REL + 1);
        if (s->loop == TD_LOOP_UNROLL)
            td__w_line(w, "#pragma unroll");
        const char *n = s->var->name;
        td__w_open(w, "for (int %s = 0; %s < %s; ++%s)", n, n, line_text(c),
                   n);
        p->live[id] = 1;
        block(c, s->body);
        p->live[id] = 0;
        td__w_close(w);
        return;
    }
    case TD__S_IF:
        top_expr(c, s->cond);
        td__w_open(w, "if (%s)", line_text(c));
        block(c, s->body);
        if (s->orelse != NULL) {
            td__w_mid(w, "else");
            block(c, s->orelse);
        }
        td__w_close(w);
        return;
    case TD__S_STORE: {
        const td_expr *idx[TD_MAX_RANK];
        if (!fold_idx(c, s->nidx, s->idx, idx))
            return;
        access(c, &c->line, s->buf, s->nidx, idx);
        td__buf_puts(&c->line, " = ");
        top_expr(c, s->value);
        break;
    }
    case TD__S_EVAL:
        top_expr(c, s->value);
        break;
    case TD__S_LET:
        need_type(c, s->var->dtype);
        td__buf_printf(&c->line, "%s %s = ",
                       s->var->lanes > 1
                           ? vec_type(s->var->dtype, s->var->lanes)
                           : td__cuda_type(s->var->dtype),
                       s->var->name);
        top_expr(c, s->value);
        p->live[s->var->id] = 1;
        break;
    case TD__S_ASSIGN:
        if (!p->live[s->var->id])
            fail(c, TD_EINVAL);
        td__buf_printf(&c->line, "%s = ", s->var->name);
        top_expr(c, s->value);
        break;
    case TD__S_COMMENT:
        td__w_line(w, "//%s%s", s->text[0] ? " " : "", s->text);
        return;
    case TD__S_CAST_PAIR:
        cast_pair(c, s);
        break;
    case TD__S_VEC_LET:
        vec_let(c, s);
        break;
    case TD__S_PTX:
        ptx(c, s);
        break;
    case TD__S_ASYNC:
        td__cuda_async(&(td__async_out){p, &c->line, async_expr, c}, s,
                       &c->need);
        break;
    case TD__S_MMA:
    case TD__S_UMMA:
        (s->kind == TD__S_MMA ? td__cuda_mma : td__cuda_umma)(
            &(td__async_out){p, &c->line, async_expr, c}, s, &c->need);
        break;
    case TD__S_VEC_STORE: {
        const td_expr *idx[TD_MAX_RANK];
        if (!fold_idx(c, s->nidx, s->idx, idx))
            return;
        if (!p->live[s->var->id])
            fail(c, TD_EINVAL);
        td__buf_printf(&c->line, "*(%s *)&",
                       vec_type(s->var->dtype, s->var->lanes));
        access(c, &c->line, s->buf, s->nidx, idx);
        td__buf_printf(&c->line, " = %s", s->var->name);
        break;
    }
    }
    td__w_line(w, "%s;", line_text(c));
}

/* Container i of a register buffer: tmp[i] when its elements are the
 * containers, else ((unsigned int *)Rg_ptr)[i]. */
static void ptx_reg(cuda *c, const td__ptx *x, int lane)
{
    static const char *const ctype[3] = {"unsigned char", "unsigned short",
                                         "unsigned int"};
    static const td_dtype cdt[3] = {TD_U8, TD_U16, TD_U32};
    int k = x->bits == 8 ? 0 : x->bits == 16 ? 1 : 2;
    td__arena *a = &c->p->arena;
    const td_expr *sum =
        x->words != NULL ? x->words[lane]
                         : td__mk_bin(a, TD_OP_ADD, x->word, td__mk_int(a, lane));
    const td_expr *i = sum != NULL ? td__fold(a, sum, c->p->zero) : NULL;
    if (i == NULL) {
        fail(c, TD_ENOMEM);
        return;
    }
    const char *suffix = x->regs->scratch ? "" : "_ptr";
    if (x->regs->dtype == cdt[k])
        td__buf_printf(&c->line, "%s%s[", x->regs->name, suffix);
    else
        td__buf_printf(&c->line, "((%s *)%s%s)[", ctype[k], x->regs->name,
                       suffix);
    expr(c, &c->line, i, P_LOWEST);
    td__buf_puts(&c->line, "]");
}

/* The access's address: &A_ptr[i] (logical indices through the layout)
 * or A_ptr + offset (a storage offset the emitter computed). */
static void ptx_addr(cuda *c, const td__stmt *s, const td_expr *const *idx)
{
    if (s->ptx->offset == NULL) {
        td__buf_puts(&c->line, "&");
        access(c, &c->line, s->buf, s->nidx, idx);
        return;
    }
    const td_expr *off = td__fold(&c->p->arena, s->ptx->offset, c->p->zero);
    if (off == NULL) {
        fail(c, TD_ENOMEM);
        return;
    }
    td__buf_printf(&c->line, "%s%s + ", s->buf->name,
                   s->buf->scratch ? "" : "_ptr");
    expr(c, &c->line, off, P_ADD + 1);
}

/* B_ptr + offset: a storage offset of a call buffer. */
static void ptr_plus(cuda *c, const td_ir_buf *b, const td_expr *offset)
{
    const td_expr *off = td__fold(&c->p->arena, offset, c->p->zero);
    if (off == NULL) {
        fail(c, TD_ENOMEM);
        return;
    }
    td__buf_printf(&c->line, "%s%s + ", b->name, b->scratch ? "" : "_ptr");
    expr(c, &c->line, off, P_ADD + 1);
}

/* td_ptx_ld_global_v4_u32(regs..., &A_ptr[i]) or
 * td_ptx_st_shared_u32(&S_ptr[i], regs...); the helper is recorded.
 * cp.async: td_ptx_cp_async_cg_shared_global_16(S_ptr + d, A_ptr + s[,
 * pred]). */
static void ptx(cuda *c, const td__stmt *s)
{
    const td__ptx *x = s->ptx;
    const td_expr *idx[TD_MAX_RANK];
    if (x->offset == NULL && !fold_idx(c, s->nidx, s->idx, idx))
        return;
    unsigned key = td__ptx_key(x);
    bool known = false;
    for (int i = 0; i < c->need.nptx; i++)
        known |= c->need.ptx[i] == key;
    if (!known) {
        if (c->need.nptx == (int)(sizeof c->need.ptx / sizeof *c->need.ptx)) {
            fail(c, TD_EINVAL);
            return;
        }
        c->need.ptx[c->need.nptx++] = key;
    }
    c->need.inc[TD__INC_CSTRING] = true;
    need_type(c, s->buf->dtype);
    td__ptx_helper_name(&c->line, x);
    td__buf_puts(&c->line, "(");
    if (x->cp_async) {
        need_type(c, x->src->dtype);
        ptr_plus(c, s->buf, x->offset);
        td__buf_puts(&c->line, ", ");
        ptr_plus(c, x->src, x->src_offset);
        if (x->pred != NULL) {
            const td_expr *p = td__fold(&c->p->arena, x->pred, c->p->zero);
            if (p == NULL) {
                fail(c, TD_ENOMEM);
                return;
            }
            td__buf_puts(&c->line, ", ");
            expr(c, &c->line, p, P_LOWEST);
        }
        td__buf_puts(&c->line, ")");
        return;
    }
    if (x->store)
        ptx_addr(c, s, idx);
    for (int l = 0; l < x->lanes; l++) {
        if (l > 0 || x->store)
            td__buf_puts(&c->line, ", ");
        ptx_reg(c, x, l);
    }
    if (!x->store) {
        td__buf_puts(&c->line, ", ");
        ptx_addr(c, s, idx);
    }
    td__buf_puts(&c->line, ")");
}

/* Prints a block; its lets go out of scope at its end. */
static void block(cuda *c, const td__stmt *s)
{
    for (const td__stmt *t = s; t != NULL; t = t->next)
        stmt(c, t);
    for (const td__stmt *t = s; t != NULL; t = t->next)
        if (t->kind == TD__S_LET || t->kind == TD__S_VEC_LET)
            c->p->live[t->var->id] = 0;
}

int td__print_cuda(td__pctx *p)
{
    cuda c;
    memset(&c, 0, sizeof c);
    c.p = p;
    td__buf_init(&c.line);
    /* Scratch arrays are declared where the body starts. */
    for (const td_ir_buf *b = p->ir->bufs; b != NULL; b = b->next)
        if (b->scratch) {
            need_type(&c, b->dtype);
            td__w_line(&p->w, "%s%s %s[%lld];",
                       strcmp(b->scope, "shared") == 0 ? "__shared__ " : "",
                       td__cuda_type(b->dtype), b->name,
                       (long long)b->shape[0]);
        }
    block(&c, p->ir->root);
    c.need.inc[TD__INC_CUDA] |= p->ir->tmaps != NULL; /* CUtensorMap */
    int err = td__w_finish(&p->w);
    if (p->err == 0 && c.line.err)
        p->err = c.line.err;
    if (p->err == 0 && p->arena.err)
        p->err = p->arena.err;
    td__buf_free(&c.line);
    if (p->err != 0)
        return p->err;
    if (err != 0)
        return err;
    td__cuda_prelude(&p->prelude, &c.need);
    return p->prelude.err;
}
