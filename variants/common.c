/*
 * What the variant families share (common.h): the scope's threads and
 * barrier, the unflattening of flat indices.  Public headers only.
 */
#include <inttypes.h>

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
    return e;
}
