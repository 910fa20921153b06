/*
 * Paired arithmetic of the elementwise variants (ewise_vec.h): the calls
 * that may compute two float16 / bfloat16 lanes with one instruction
 * (__hadd2, __hmul2, h2exp, __float22half2_rn ...) and the op on one pair, written
 * as the scalar compute writes it (fma as a * b + c), so each lane rounds
 * as the scalar code rounds it.  Public headers only.
 */
#include "ewise_vec.h"

bool td__ewise_pairable(const ew_info *info, const ew_operands *o,
                        td_dtype dt)
{
    if (dt != TD_F16 && dt != TD_BF16)
        return false;
    if (info->fn == EW_CAST)
        return o->n == 1 && o->src[0].kind == TD_OPERAND_REGION &&
               o->src[0].dtype == TD_F32;
    /* exp and exp2 without scale or bias: h2exp is hexp per lane (with
     * them, the scalar a * s + b might contract where the pair does not) */
    bool math = (info->fn == EW_EXP || info->fn == EW_EXP2) &&
                o->scale.kind == TD_OPERAND_NONE &&
                o->bias.kind == TD_OPERAND_NONE && !o->bias_region;
    if (!math && info->fn != EW_ADD && info->fn != EW_SUB &&
        info->fn != EW_MUL && info->fn != EW_FMA && info->fn != EW_MAXIMUM)
        return false;
    if (o->compute != dt)
        return false;
    for (int i = 0; i < o->n; i++)
        if (o->src[i].kind == TD_OPERAND_REGION && o->src[i].dtype != dt)
            return false;
    return true;
}

/* Source i as a pair of the compute dtype. */
static td_expr *in(td_ir *ir, const ew_operands *o, ew_pair_fn src,
                   void *ctx, int i)
{
    if (o->src[i].kind != TD_OPERAND_REGION)
        return td_pair_splat(ir, td_cast(ir, o->compute,
                                         td__ewise_scalar(ir, &o->src[i])));
    return src(ctx, i);
}

td_expr *td__ewise_pair(td_ir *ir, const ew_info *info, const ew_operands *o,
                        td_dtype dt, ew_pair_fn src, void *ctx)
{
#define IN(i) in(ir, o, src, ctx, (i))
    switch (info->fn) {
    case EW_CAST:
        return td_cast(ir, dt, IN(0));
    case EW_EXP:
        return td_math(ir, TD_MATH_EXP, IN(0));
    case EW_EXP2:
        return td_math(ir, TD_MATH_EXP2, IN(0));
    case EW_ADD:
        return td_value_op(ir, TD_VAL_ADD, IN(0), IN(1));
    case EW_SUB:
        return td_value_op(ir, TD_VAL_SUB, IN(0), IN(1));
    case EW_MUL:
        return td_value_op(ir, TD_VAL_MUL, IN(0), IN(1));
    case EW_MAXIMUM:
        return td_value_op(ir, TD_VAL_MAX, IN(0), IN(1));
    default: /* EW_FMA, as the scalar compute writes it: a * b + c */
        return td_value_op(ir, TD_VAL_ADD,
                           td_value_op(ir, TD_VAL_MUL, IN(0), IN(1)), IN(2));
    }
#undef IN
}
