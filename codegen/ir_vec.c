/*
 * The vector and pair builders of the lowered IR: a vector variable read
 * from a buffer with one access (td_ir_let_vector) or built from its lanes
 * or pairs (td_ir_let_vector_of), its lanes and pairs, pair arithmetic's
 * operands (td_pair_splat), the vector store and the paired conversion
 * between buffers.  What they need of the IR's core comes from ir.c
 * through codegen_internal.h; td_value_op and td_cast (ir.c) take pairs.
 */
#include <string.h>

#include "codegen_internal.h"

bool td__vec_dtype(td_dtype t)
{
    switch (t) {
    case TD_F32: case TD_F16: case TD_BF16: case TD_F64:
    case TD_I8: case TD_I16: case TD_I32: case TD_I64:
    case TD_U8: case TD_U16: case TD_U32: case TD_U64:
        return true;
    default:
        return false;
    }
}

td_var *td_ir_let_vector(td_ir *ir, const char *name, const td_ir_buf *b,
                         int n, td_expr *const *idx, int lanes)
{
    if (!td__ir_live(ir))
        return NULL;
    int bytes = b != NULL ? lanes * (td_dtype_bits(b->dtype) / 8) : 0;
    if (b == NULL ||
        !td__vec_dtype(b->dtype) ||
        lanes < 2 || (bytes != 4 && bytes != 8 && bytes != 16)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td_load(ir, b, n, idx);
    if (e == NULL)
        return NULL;
    e->lanes = lanes;
    td__stmt *s = td__ir_stmt(ir, TD__S_LET);
    td_var *v = s ? td__ir_var(ir, name, b->dtype) : NULL;
    if (v == NULL)
        return NULL;
    v->lanes = lanes;
    s->var = v;
    s->value = e;
    td__ir_append(ir, s);
    return v;
}

td_expr *td_vec_lane(td_ir *ir, const td_var *v, int lane)
{
    if (!td__ir_live(ir) || v == NULL)
        return NULL;
    if (v->owner != ir || v->lanes < 2 || lane < 0 || lane >= v->lanes) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_LANE, v->dtype);
    if (e != NULL) {
        e->var = v;
        e->i = lane;
    }
    return e;
}

const char *td__pair_fn(td_dtype from, td_dtype to)
{
    if (from == TD_F32)
        return to == TD_F16 ? "__float22half2_rn" : "__float22bfloat162_rn";
    return from == TD_F16 ? "__half22float2" : "__bfloat1622float2";
}

const char *td__pair_type(td_dtype t)
{
    return t == TD_F32 ? "float2" : t == TD_F16 ? "__half2" : "__nv_bfloat162";
}

/* A pair access: b indexed with its rank, two elements along the last
 * dimension (a constant last index must leave room for the second). */
static bool pair_access(td_ir *ir, const td_ir_buf *b, int n,
                        td_expr *const *idx)
{
    if (b == NULL || idx == NULL || n != b->ndim) {
        td__ir_fail(ir, TD_EINVAL);
        return false;
    }
    for (int i = 0; i < n; i++)
        if (!td__ir_stmt_operand(ir, idx[i]))
            return false;
    if (td__ir_idx(ir, b, n, idx) == NULL)
        return false;
    const td_expr *last = idx[n - 1];
    if (b->shape[n - 1] < 2 ||
        (last->kind == TD__E_INT &&
         (last->i < 0 || last->i > b->shape[n - 1] - 2))) {
        td__ir_fail(ir, TD_EINVAL);
        return false;
    }
    return true;
}

void td_ir_cast_pair(td_ir *ir, const td_ir_buf *dst, int dn,
                     td_expr *const *didx, const td_ir_buf *src, int sn,
                     td_expr *const *sidx)
{
    if (!td__ir_live(ir) || !pair_access(ir, dst, dn, didx) ||
        !pair_access(ir, src, sn, sidx))
        return;
    td_dtype d = dst->dtype, s = src->dtype;
    bool ok = (s == TD_F32 && (d == TD_F16 || d == TD_BF16)) ||
              (d == TD_F32 && (s == TD_F16 || s == TD_BF16));
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    const td_expr *const *di = td__ir_idx(ir, dst, dn, didx);
    td_expr *from = di ? td_load(ir, src, sn, sidx) : NULL;
    td__stmt *st = from ? td__ir_stmt(ir, TD__S_CAST_PAIR) : NULL;
    if (st == NULL)
        return;
    from->lanes = 2;
    st->buf = dst;
    st->nidx = dn;
    st->idx = di;
    st->value = from;
    td__ir_append(ir, st);
}


td_var *td_ir_let_vector_of(td_ir *ir, const char *name, td_dtype t,
                            int lanes, int n, td_expr *const *vals)
{
    if (!td__ir_live(ir))
        return NULL;
    int bytes = lanes * (td__vec_dtype(t) ? td_dtype_bits(t) / 8 : 0);
    bool pairs = n > 0 && n * 2 == lanes && (t == TD_F16 || t == TD_BF16);
    if ((bytes != 4 && bytes != 8 && bytes != 16) || lanes < 2 ||
        (n != lanes && !pairs) || vals == NULL) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    const td_expr **v = NULL;
    td__stmt *s = td__ir_stmt(ir, TD__S_VEC_LET);
    if (s != NULL)
        v = td__arena_alloc(&ir->arena, sizeof *v * (size_t)n);
    if (v == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const td_expr *e = vals[i];
        if (e == NULL || e->is_void || e->dtype != t ||
            td__is_pair(e) != pairs) {
            td__ir_fail(ir, TD_EINVAL);
            return NULL;
        }
        v[i] = e;
    }
    td_var *var = td__ir_var(ir, name, t);
    if (var == NULL)
        return NULL;
    var->lanes = lanes;
    s->var = var;
    s->nvals = n;
    s->vals = v;
    td__ir_append(ir, s);
    return var;
}

void td_ir_store_vector(td_ir *ir, const td_ir_buf *b, int n,
                        td_expr *const *idx, const td_var *v)
{
    if (!td__ir_live(ir))
        return;
    if (v == NULL || b == NULL || v->owner != ir || v->lanes < 2 ||
        v->dtype != b->dtype) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    for (int i = 0; idx != NULL && i < n; i++)
        if (!td__ir_stmt_operand(ir, idx[i]))
            return;
    const td_expr *const *di = td__ir_idx(ir, b, n, idx);
    td__stmt *s = di ? td__ir_stmt(ir, TD__S_VEC_STORE) : NULL;
    if (s == NULL)
        return;
    s->buf = b;
    s->nidx = n;
    s->idx = di;
    s->var = (td_var *)v;
    td__ir_append(ir, s);
}

td_expr *td_vec_pair(td_ir *ir, const td_var *v, int pair)
{
    if (!td__ir_live(ir) || v == NULL)
        return NULL;
    if (v->owner != ir || v->lanes < 2 || v->lanes % 2 != 0 || pair < 0 ||
        pair >= v->lanes / 2 ||
        (v->dtype != TD_F32 && v->dtype != TD_F16 && v->dtype != TD_BF16)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_PAIR, v->dtype);
    if (e != NULL) {
        e->var = v;
        e->i = pair;
        e->lanes = 2;
    }
    return e;
}

td_expr *td_pair_splat(td_ir *ir, td_expr *a)
{
    if (!td__ir_live(ir) || a == NULL)
        return NULL;
    if (a->is_void || td__is_pair(a) ||
        (a->dtype != TD_F16 && a->dtype != TD_BF16)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_expr *e = td__ir_expr(ir, TD__E_SPLAT, a->dtype);
    if (e != NULL) {
        e->a = a;
        e->impure = a->impure;
        e->lanes = 2;
    }
    return e;
}
