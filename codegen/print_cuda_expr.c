/*
 * The CUDA printer's expressions (print_cuda.c prints the statements):
 * literals spelled so that they read back exactly, C precedence and
 * parentheses, casts between value dtypes, buffer accesses through their
 * layout and swizzle, intrinsics, vector lanes and f32 pairs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

/* Room for the longest literal spelling. */
#define SPELL_MAX 128

static const struct {
    const char *text;
    int prec;
} binops[] = {
    [TD_OP_ADD] = {"+", TD__CP_ADD},
    [TD_OP_SUB] = {"-", TD__CP_ADD},
    [TD_OP_MUL] = {"*", TD__CP_MUL},
    [TD_OP_DIV] = {"/", TD__CP_MUL},
    [TD_OP_MOD] = {"%", TD__CP_MUL},
    [TD_OP_MAX] = {"max", TD__CP_PRIMARY},
    [TD_OP_MIN] = {"min", TD__CP_PRIMARY},
    [TD_OP_LT] = {"<", TD__CP_REL},
    [TD_OP_LE] = {"<=", TD__CP_REL},
    [TD_OP_EQ] = {"==", TD__CP_EQ},
    [TD_OP_NE] = {"!=", TD__CP_EQ},
    [TD_OP_AND] = {"&&", TD__CP_AND},
    [TD_OP_OR] = {"||", TD__CP_OR},
    [TD_OP_SHL] = {"<<", TD__CP_SHIFT},
    [TD_OP_BITAND] = {"&", TD__CP_BITAND},
    [TD_OP_XOR] = {"^", TD__CP_XOR}
};

static bool small_int(td_dtype t)
{
    return t == TD_I8 || t == TD_I16 || t == TD_U8 || t == TD_U16;
}

/* Requests the header a dtype's spelling needs. */
void td__cuda_need_type(td__cuda *c, td_dtype t)
{
    int inc = td__cuda_type_include(t);
    if (inc >= 0)
        c->need.inc[inc] = true;
}

void td__cuda_fail(td__cuda *c, int code)
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

static void spell_const(td__cuda *c, const td_expr *e, char *b, size_t cap)
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
        td__cuda_fail(c, TD_EINVAL);
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

static int prec(td__cuda *c, const td_expr *e)
{
    char b[SPELL_MAX];
    switch (e->kind) {
    case TD__E_INT:
    case TD__E_CONST:
        if (e->kind == TD__E_INT)
            spell_int(b, sizeof b, e->i);
        else
            spell_const(c, e, b, sizeof b);
        return b[0] == '-' || b[0] == '(' ? TD__CP_UNARY : TD__CP_PRIMARY;
    case TD__E_BIN:
        return binops[e->op].prec;
    case TD__E_COMBINE:
        if (small_int(e->dtype))
            return TD__CP_UNARY;
        return e->comb == TD_COMBINE_SUM ? TD__CP_ADD : TD__CP_PRIMARY;
    case TD__E_INTRIN:
        return (e->intrin == TD_INTRIN_THREAD_IDX_X ||
                e->intrin == TD_INTRIN_BLOCK_IDX_X ||
                e->intrin == TD_INTRIN_BLOCK_IDX_Y ||
                e->intrin == TD_INTRIN_BLOCK_IDX_Z)
                   ? TD__CP_UNARY
                   : TD__CP_PRIMARY;
    case TD__E_LOAD:
        return e->lanes > 1 ? TD__CP_UNARY : TD__CP_PRIMARY;
    case TD__E_VALOP:
        if (td__is_pair(e))
            return TD__CP_PRIMARY;
        if (small_int(e->dtype))
            return TD__CP_UNARY;
        switch (e->valop) {
        case TD_VAL_ADD:
        case TD_VAL_SUB: return TD__CP_ADD;
        case TD_VAL_MUL:
        case TD_VAL_DIV: return TD__CP_MUL;
        default: return TD__CP_PRIMARY;
        }
    case TD__E_CAST:
    {
        bool via;
        if (td__is_pair(e))
            return TD__CP_PRIMARY;
        return cast_form(e->a->dtype, e->dtype, &via) ? TD__CP_PRIMARY
                                                      : TD__CP_UNARY;
    }
    default:
        return TD__CP_PRIMARY;
    }
}

static void args(td__cuda *c, td_buf *o, const td_expr *e)
{
    td__buf_puts(o, "(");
    for (int i = 0; i < e->nargs; i++) {
        if (i > 0)
            td__buf_puts(o, ", ");
        td__cuda_expr(c, o, e->args[i], TD__CP_LOWEST);
    }
    td__buf_puts(o, ")");
}

/* NAME_ptr[flat] (NAME[i] for scratch), with the row-major flat index
 * built and folded in the print arena. */
void td__cuda_access(td__cuda *c, td_buf *o, const td_ir_buf *b, int n,
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
        td__cuda_fail(c, TD_ENOMEM);
        return;
    }
    td__buf_puts(o, b->name);
    if (!b->scratch)
        td__buf_puts(o, "_ptr");
    td__buf_puts(o, "[");
    td__cuda_expr(c, o, flat, TD__CP_LOWEST);
    td__buf_puts(o, "]");
}


static void combine(td__cuda *c, td_buf *o, const td_expr *e)
{
    td_dtype t = e->dtype;
    const char *ct = td__cuda_type(t);
    bool mx = e->comb == TD_COMBINE_MAX;
    if (e->comb == TD_COMBINE_SUM) {
        if (small_int(t))
            td__buf_printf(o, "(%s)(", ct);
        td__cuda_expr(c, o, e->a, TD__CP_ADD);
        td__buf_puts(o, " + ");
        td__cuda_expr(c, o, e->b, TD__CP_ADD + 1);
        if (small_int(t))
            td__buf_puts(o, ")");
        return;
    }
    if (small_int(t)) {
        td__buf_printf(o, "(%s)%s((int)", ct, mx ? "max" : "min");
        td__cuda_expr(c, o, e->a, TD__CP_UNARY);
        td__buf_puts(o, ", (int)");
        td__cuda_expr(c, o, e->b, TD__CP_UNARY);
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
    td__cuda_expr(c, o, e->a, TD__CP_LOWEST);
    td__buf_puts(o, ", ");
    td__cuda_expr(c, o, e->b, TD__CP_LOWEST);
    td__buf_puts(o, ")");
}

/* Value arithmetic: max / min as the combiners spell them; + - * / as
 * operators (cuda_fp16.h / cuda_bf16.h define them for the 16-bit
 * floats), narrowed back to the dtype for the integers C promotes. */
static void valop(td__cuda *c, td_buf *o, const td_expr *e)
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
    int p = e->valop == TD_VAL_ADD || e->valop == TD_VAL_SUB ? TD__CP_ADD
                                                             : TD__CP_MUL;
    if (small_int(e->dtype))
        td__buf_printf(o, "(%s)(", td__cuda_type(e->dtype));
    /* Two uint16 operands promote to int, whose product can overflow
     * (65535 * 65535 > INT_MAX, undefined behaviour): multiply unsigned. */
    bool wide = e->valop == TD_VAL_MUL && e->dtype == TD_U16;
    if (wide)
        td__buf_puts(o, "(unsigned int)");
    td__cuda_expr(c, o, e->a, wide ? TD__CP_UNARY : p);
    td__buf_printf(o, " %s ", text[e->valop]);
    td__cuda_expr(c, o, e->b, p + 1);
    if (small_int(e->dtype))
        td__buf_puts(o, ")");
}

static void math(td__cuda *c, td_buf *o, const td_expr *e)
{
    static const char *const names[3][4] = {
        {"expf", "exp2f", "log2f", "sqrtf"},  /* float32 */
        {"exp", "exp2", "log2", "sqrt"},      /* float64 */
        {"hexp", "hexp2", "hlog2", "hsqrt"}}; /* float16, bfloat16 */
    int k = e->dtype == TD_F32 ? 0 : e->dtype == TD_F64 ? 1 : 2;
    td__buf_printf(o, "%s(", names[k][e->math]);
    td__cuda_expr(c, o, e->a, TD__CP_LOWEST);
    td__buf_puts(o, ")");
}

static void cast(td__cuda *c, td_buf *o, const td_expr *e)
{
    bool via;
    const char *fn = cast_form(e->a->dtype, e->dtype, &via);
    if (fn != NULL)
        td__buf_printf(o, "%s(", fn);
    else
        td__buf_printf(o, "(%s)", td__cuda_type(e->dtype));
    if (via)
        td__buf_puts(o, "(float)");
    td__cuda_expr(c, o, e->a,
                  fn != NULL && !via ? TD__CP_LOWEST : TD__CP_UNARY);
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

static void intrin(td__cuda *c, td_buf *o, const td_expr *e)
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
        td__cuda_expr(c, o, e->args[0], TD__CP_LOWEST);
        td__buf_puts(o, "), \"r\"(");
        td__cuda_expr(c, o, e->args[1], TD__CP_LOWEST);
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
const char *td__cuda_vec_type(td_dtype t, int lanes)
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
static void lane(td__cuda *c, td_buf *o, const td_expr *e)
{
    static const char *const field[] = {".x", ".y", ".z", ".w"};
    const td_var *v = e->var;
    if (!c->p->live[v->id])
        td__cuda_fail(c, TD_EINVAL); /* used outside its scope */
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
static void pair(td__cuda *c, td_buf *o, const td_expr *e)
{
    static const char *const ops[] = {
        [TD_VAL_ADD] = "__hadd2", [TD_VAL_SUB] = "__hsub2",
        [TD_VAL_MUL] = "__hmul2", [TD_VAL_MAX] = "__hmax2",
        [TD_VAL_MIN] = "__hmin2"};
    bool h = e->dtype == TD_F16;
    switch (e->kind) {
    case TD__E_PAIR:
        if (!c->p->live[e->var->id])
            td__cuda_fail(c, TD_EINVAL); /* used outside its scope */
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
        td__cuda_expr(c, o, e->a, TD__CP_LOWEST);
        td__buf_puts(o, ")");
        return;
    case TD__E_MATH:
        td__buf_puts(o, e->math == TD_MATH_EXP ? "h2exp(" : "h2exp2(");
        td__cuda_expr(c, o, e->a, TD__CP_LOWEST);
        td__buf_puts(o, ")");
        return;
    case TD__E_VALOP:
        td__buf_printf(o, "%s(", ops[e->valop]);
        td__cuda_expr(c, o, e->a, TD__CP_LOWEST);
        td__buf_puts(o, ", ");
        td__cuda_expr(c, o, e->b, TD__CP_LOWEST);
        td__buf_puts(o, ")");
        return;
    default: /* TD__E_CAST */
        td__buf_printf(o, "%s(", td__pair_fn(e->a->dtype, e->dtype));
        td__cuda_expr(c, o, e->a, TD__CP_LOWEST);
        td__buf_puts(o, ")");
        return;
    }
}

void td__cuda_expr(td__cuda *c, td_buf *o, const td_expr *e, int minprec)
{
    bool paren = prec(c, e) < minprec;
    char b[SPELL_MAX];
    td__cuda_need_type(c, e->dtype);
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
            td__cuda_fail(c, TD_EINVAL); /* used outside its scope */
        td__buf_puts(o, e->var->name);
        break;
    case TD__E_BIN: {
        int p = binops[e->op].prec;
        if (e->op == TD_OP_MAX || e->op == TD_OP_MIN) {
            td__buf_printf(o, "%s(", binops[e->op].text);
            td__cuda_expr(c, o, e->a, TD__CP_LOWEST);
            td__buf_puts(o, ", ");
            td__cuda_expr(c, o, e->b, TD__CP_LOWEST);
            td__buf_puts(o, ")");
            break;
        }
        /* Comparisons and shifts do not chain: both sides bind tighter.
         * An xor groups its operands whatever they are, for the reader
         * (C's ^ binds looser than arithmetic, which few remember). */
        if (e->op == TD_OP_XOR) {
            td__cuda_expr(c, o, e->a, TD__CP_UNARY);
            td__buf_puts(o, " ^ ");
            td__cuda_expr(c, o, e->b, TD__CP_UNARY);
            break;
        }
        bool chain = p == TD__CP_REL || p == TD__CP_EQ || p == TD__CP_SHIFT;
        td__cuda_expr(c, o, e->a, chain ? p + 1 : p);
        td__buf_printf(o, " %s ", binops[e->op].text);
        td__cuda_expr(c, o, e->b, p + 1);
        break;
    }
    case TD__E_COMBINE:
        combine(c, o, e);
        break;
    case TD__E_LOAD:
        if (e->lanes > 1)
            td__buf_printf(o, "*(const %s *)&",
                           td__cuda_vec_type(e->dtype, e->lanes));
        td__cuda_access(c, o, e->buf, e->nargs, e->args);
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
void td__cuda_top_expr(td__cuda *c, const td_expr *e)
{
    const td_expr *f = td__fold(&c->p->arena, e, c->p->zero);
    if (f == NULL) {
        td__cuda_fail(c, TD_ENOMEM);
        return;
    }
    td__cuda_expr(c, &c->line, f, TD__CP_LOWEST);
}
