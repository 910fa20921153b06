/*
 * What the variant families share (common.h): the scope's threads and
 * barrier, the unflattening of flat indices.  Public headers only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

int64_t td__scope_threads(const td_call *call)
{
    switch (call->scope) {
    case TD_SCOPE_THREAD:
        return 1;
    case TD_SCOPE_WARP:
        return 32;
    case TD_SCOPE_WARPGROUP:
        return 128;
    default:
        return call->launch[TD_LAUNCH_TX].extent;
    }
}

int64_t td__warpgroups_per_block(const td_call *call)
{
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    if (call->scope != TD_SCOPE_WARPGROUP || !tx->present || tx->symbolic ||
        tx->extent < 128)
        return 1;
    return tx->extent / 128;
}

bool td__whole_scope_units(const td_call *call, const char *what,
                           td_reason *why)
{
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    int64_t unit = call->scope == TD_SCOPE_WARP        ? 32
                   : call->scope == TD_SCOPE_WARPGROUP ? 128
                                                       : 1;
    if (tx->extent % unit != 0) {
        td_reason_set(why,
                      "threadIdx.x extent %" PRId64 " is not a multiple of %"
                      PRId64 " (%s-scope %s needs whole %ss)",
                      tx->extent, unit, td_exec_scope_name(call->scope), what,
                      td_exec_scope_name(call->scope));
        return false;
    }
    return true;
}

void td__scope_barrier(const td_call *call, td_ir *ir, int64_t default_id)
{
    switch (call->scope) {
    case TD_SCOPE_CTA:
        td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0, NULL));
        break;
    case TD_SCOPE_WARPGROUP: {
        /* One named barrier per warpgroup of the block (upstream gives
         * every warpgroup id 8). */
        td_expr *id = td_int(ir, td_call_config_int(call, "barrier_id",
                                                    default_id));
        if (td__warpgroups_per_block(call) > 1)
            id = td_add(ir, id,
                        td_div(ir,
                               td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32,
                                            0, NULL),
                               td_int(ir, 128)));
        td_expr *a[] = {id, td_int(ir, 128)};
        td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_BARRIER_SYNC, TD_I32, 2, a));
        break;
    }
    case TD_SCOPE_WARP:
        td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCWARP, TD_I32, 0, NULL));
        break;
    default:
        break;
    }
}

typedef struct flat_dims {
    td__flat_fn q;
    const void *qctx;
} flat_dims;

static td_expr *flat_dim(td_ir *ir, const void *ctx, int64_t inner,
                         int64_t ext, bool outermost)
{
    const flat_dims *f = ctx;
    td_expr *e = f->q(ir, f->qctx);
    if (inner > 1)
        e = td_div(ir, e, td_int(ir, inner));
    return outermost ? e : td_mod(ir, e, td_int(ir, ext));
}

void td__unflatten(td_ir *ir, td__flat_fn q, const void *qctx, int n,
                   const int64_t *ext, const int64_t *start, td_expr **out)
{
    flat_dims f = {q, qctx};
    td__unflatten_by(ir, flat_dim, &f, n, ext, start, out);
}

void td__unflatten_by(td_ir *ir, td__dim_fn dim, const void *ctx, int n,
                      const int64_t *ext, const int64_t *start,
                      td_expr **out)
{
    int outer = -1;
    for (int k = 0; k < n; k++)
        if (ext[k] > 1) {
            outer = k;
            break;
        }
    int64_t inner = 1; /* product of ext[k+1..n-1] */
    for (int k = n - 1; k >= 0; k--) {
        td_expr *e;
        if (ext[k] <= 1) {
            e = td_int(ir, 0);
        } else {
            e = dim(ir, ctx, inner, ext[k], k == outer);
            inner *= ext[k];
        }
        if (start != NULL && start[k] != 0)
            e = td_add(ir, e, td_int(ir, start[k]));
        out[k] = e;
    }
}

/* Declared scalar j of the call as an int32 value (a kernel parameter of
 * its dtype, converted). */
static td_expr *scalar_ref(td_ir *ir, const td_call *call, int j)
{
    char name[TD_NAME_MAX];
    snprintf(name, sizeof name, "%.*s", TD_NAME_MAX - 1,
             call->scalars[j].name);
    return td_cast(ir, TD_I32, td_param(ir, name, call->scalars[j].dtype));
}

static const td_intrin cluster_ids[3] = {
    TD_INTRIN_CLUSTER_CTAID_X, TD_INTRIN_CLUSTER_CTAID_Y,
    TD_INTRIN_CLUSTER_CTAID_Z};

static const td_intrin block_ids[3] = {
    TD_INTRIN_BLOCK_IDX_X, TD_INTRIN_BLOCK_IDX_Y, TD_INTRIN_BLOCK_IDX_Z};

/* sum + c * blockIdx.k (sum may be NULL). */
static td_expr *add_block_term(td_ir *ir, td_expr *sum, int k, int64_t c)
{
    td_expr *t = td_intrinsic(ir, block_ids[k], TD_I32, 0, NULL);
    if (c != 1)
        t = td_mul(ir, t, td_int(ir, c));
    return sum != NULL ? td_add(ir, sum, t) : t;
}

/* sum + c * scalar j of the call (sum may be NULL). */
static td_expr *add_scalar_term(td_ir *ir, const td_call *call, td_expr *sum,
                                int j, int64_t c)
{
    td_expr *t = scalar_ref(ir, call, j);
    if (c != 1)
        t = td_mul(ir, t, td_int(ir, c));
    return sum != NULL ? td_add(ir, sum, t) : t;
}

td_expr *td__region_start_expr(td_ir *ir, const td_region *r, int d,
                               int64_t add)
{
    td_expr *e = NULL;
    for (int k = 0; k < 3; k++)
        if (r->block_coef[d][k] != 0)
            e = add_block_term(ir, e, k, r->block_coef[d][k]);
    int64_t c = r->start[d] + add;
    if (e == NULL)
        return td_int(ir, c);
    return c != 0 ? td_add(ir, e, td_int(ir, c)) : e;
}

td_expr *td__region_start_scaled(td_ir *ir, const td_call *call,
                                 const td_region *r, int d, int64_t num,
                                 int64_t den)
{
    td_expr *e = NULL;
    if (d < 0 || d >= r->ndim || den == 0)
        return NULL;
    for (int k = 0; k < 3; k++)
        if (r->block_coef[d][k] != 0)
            e = add_block_term(ir, e, k, r->block_coef[d][k] * num / den);
    for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++)
        if (r->scalar_coef[d][j] != 0)
            e = add_scalar_term(ir, call, e, j,
                                r->scalar_coef[d][j] * num / den);
    return e;
}

td_expr *td__region_block_offset(td_ir *ir, const td_call *call,
                                 const td_region *r)
{
    if (r->buffer < 0 || r->buffer >= call->nbuffers)
        return NULL;
    const td_buffer *b = &call->buffers[r->buffer];
    td_expr *e = NULL;
    for (int k = 0; k < 3; k++) {
        int64_t c = 0, stride = 1;
        for (int d = b->ndim - 1; d >= 0 && d < r->ndim; d--) {
            c += r->block_coef[d][k] * stride;
            stride *= b->shape[d];
        }
        if (c != 0)
            e = add_block_term(ir, e, k, c);
    }
    for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++) {
        int64_t c = 0, stride = 1;
        for (int d = b->ndim - 1; d >= 0 && d < r->ndim; d--) {
            c += r->scalar_coef[d][j] * stride;
            stride *= b->shape[d];
        }
        if (c != 0)
            e = add_scalar_term(ir, call, e, j, c);
    }
    return e;
}

td_expr *td__config_expr(td_ir *ir, const td_call *call,
                         const td_config_entry *e, int i, td_reason *why)
{
    if (e == NULL || e->kind != TD_VALUE_EXPR || e->expr.n <= 0 ||
        e->expr.n > TD_MAX_EXPR_NODES) {
        td_reason_set(why, "config %.*s is not an expression",
                      TD_NAME_MAX - 1, e != NULL ? e->key : "?");
        return NULL;
    }
    if (i < 0)
        i = e->expr.n - 1;
    const td_cx_node *x = &e->expr.node[i];
    if ((x->op > TD_CX_ID && (x->a < 0 || x->a >= i)) ||
        (x->op > TD_CX_NOT && (x->b < 0 || x->b >= i))) {
        td_reason_set(why, "config %.*s: malformed expression",
                      TD_NAME_MAX - 1, e->key);
        return NULL;
    }
    td_expr *a = NULL, *b = NULL;
    if (x->op > TD_CX_ID &&
        (a = td__config_expr(ir, call, e, x->a, why)) == NULL)
        return NULL;
    if (x->op > TD_CX_NOT &&
        (b = td__config_expr(ir, call, e, x->b, why)) == NULL)
        return NULL;
    switch (x->op) {
    case TD_CX_INT:
        return td_int(ir, x->v);
    case TD_CX_SCALAR:
        if (x->v < 0 || x->v >= call->nscalars || x->v >= TD_MAX_SCALARS)
            break;
        return scalar_ref(ir, call, (int)x->v);
    case TD_CX_ID: {
        td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
        switch ((td_axis)x->v) {
        case TD_AXIS_TX:
            return tx;
        case TD_AXIS_LANEID:
            return td_binary(ir, TD_OP_MOD, tx, td_int(ir, 32));
        case TD_AXIS_WARPID:
            return td_binary(ir, TD_OP_DIV, tx, td_int(ir, 32));
        case TD_AXIS_BX:
        case TD_AXIS_BY:
        case TD_AXIS_BZ:
            return td_intrinsic(ir, block_ids[x->v - TD_AXIS_BX], TD_I32, 0,
                                NULL);
        case TD_AXIS_CBX:
        case TD_AXIS_CBY:
        case TD_AXIS_CBZ:
            /* The loader admits a cluster id only in a cluster launch. */
            if (call->cluster[x->v - TD_AXIS_CBX] <= 0) {
                td_reason_set(why, "config %.*s uses %s without a cluster "
                                   "launch",
                              TD_NAME_MAX - 1, e->key,
                              td_axis_name((td_axis)x->v));
                return NULL;
            }
            return td_intrinsic(ir,
                                cluster_ids[x->v - TD_AXIS_CBX], TD_I32, 0,
                                NULL);
        default:
            td_reason_set(why, "config %.*s uses %s, which this variant "
                               "cannot compute",
                          TD_NAME_MAX - 1, e->key,
                          td_axis_name((td_axis)x->v));
            return NULL;
        }
    }
    case TD_CX_NEG:
        return td_binary(ir, TD_OP_SUB, td_int(ir, 0), a);
    case TD_CX_NOT:
        return td_binary(ir, TD_OP_EQ, a, td_int(ir, 0));
    case TD_CX_ADD:
        return td_binary(ir, TD_OP_ADD, a, b);
    case TD_CX_SUB:
        return td_binary(ir, TD_OP_SUB, a, b);
    case TD_CX_MUL:
        return td_binary(ir, TD_OP_MUL, a, b);
    case TD_CX_DIV:
        return td_binary(ir, TD_OP_DIV, a, b);
    case TD_CX_MOD:
        return td_binary(ir, TD_OP_MOD, a, b);
    case TD_CX_LT:
        return td_binary(ir, TD_OP_LT, a, b);
    case TD_CX_LE:
        return td_binary(ir, TD_OP_LE, a, b);
    case TD_CX_GT:
        return td_binary(ir, TD_OP_LT, b, a);
    case TD_CX_GE:
        return td_binary(ir, TD_OP_LE, b, a);
    case TD_CX_EQ:
        return td_binary(ir, TD_OP_EQ, a, b);
    case TD_CX_NE:
        return td_binary(ir, TD_OP_NE, a, b);
    case TD_CX_AND:
        return td_binary(ir, TD_OP_AND, a, b);
    case TD_CX_OR:
        return td_binary(ir, TD_OP_OR, a, b);
    }
    td_reason_set(why, "config %.*s: malformed expression", TD_NAME_MAX - 1,
                  e->key);
    return NULL;
}

td_expr *td__config_elem_index(td_ir *ir, const td_call *call,
                               const td_config_entry *e, int *buffer,
                               td_reason *why)
{
    if (e == NULL || e->kind != TD_VALUE_ELEM || e->elem_buffer < 0 ||
        e->elem_buffer >= call->nbuffers || e->expr.n <= 0 ||
        e->expr.n > TD_MAX_EXPR_NODES) {
        td_reason_set(why, "config %.*s is not a buffer element",
                      TD_NAME_MAX - 1, e != NULL ? e->key : "?");
        return NULL;
    }
    const td_buffer *b = &call->buffers[e->elem_buffer];
    td_expr *sum = NULL;
    int64_t stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        /* The indices are expressions of their own (their roots in
         * elem_index); td__config_expr reads the same node array. */
        td_config_entry one = *e;
        one.kind = TD_VALUE_EXPR;
        td_expr *x = td__config_expr(ir, call, &one, e->elem_index[d], why);
        if (x == NULL)
            return NULL;
        if (stride != 1)
            x = td_mul(ir, x, td_int(ir, stride));
        sum = sum != NULL ? td_add(ir, x, sum) : x;
        stride *= b->shape[d];
    }
    *buffer = e->elem_buffer;
    return sum;
}

bool td__tmem_arch(const td_call *call)
{
    size_t n = strnlen(call->arch, TD_NAME_MAX);
    int v = call->sm_version;
    return (v == 100 || v == 101 || v == 103 || v == 110) && n > 0 &&
           (call->arch[n - 1] == 'a' || call->arch[n - 1] == 'f');
}
