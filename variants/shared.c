/*
 * The `shared` variant module: reductions over shared-memory buffers
 * (upstream reduction/shared.py).
 *
 * cta / warpgroup / warp scope: the scope's threads split into groups of
 * gs = min(next_pow2(R), 32, T) lanes; each group owns one output element
 * at a time, every lane folds a strided slice of the reduction into a
 * register, the group combines with XOR shuffles, lane 0 writes, and the
 * scope's barrier ends the call.  Thread scope is the sequential loop that
 * `local` uses (reduce_common.c).
 *
 * Three departures from upstream, each where upstream is wrong or brittle:
 * threads beyond the last whole group do not take part (upstream lets them
 * write partial results when T is not a multiple of gs); the warpgroup
 * barrier id is a config knob (`barrier_id`, default 8) instead of a
 * hard-coded 8; a symbolic thread extent at cta scope, or a warp or
 * warpgroup launch that is not made of whole warps / warpgroups, is a
 * rejection with a reason instead of a crash or a hang.
 */
#include <inttypes.h>
#include <string.h>

#include "reduce_common.h"
#include "common.h"
#include "variants.h"

/* The warpgroup barrier id when the call's config does not name one.
 * Upstream hard-codes 8 (its TODO says so); ids 0..15 exist, and 0 is the
 * one __syncthreads uses. */
#define SHARED_DEFAULT_BARRIER 8
#define SHARED_MAX_BARRIER 15
/* CUDA's limit on threads per block; larger extents cannot launch. */
#define SHARED_MAX_THREADS 1024

/* Checks the thread extent against what the scope's code relies on. */
static bool extent_ok(const td_call *call, td_reason *why)
{
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    if (tx->symbolic) {
        /* Warp and warpgroup code has a fixed thread count and works for
         * any launch of whole instances, which a symbol cannot deny; cta
         * code divides the block's threads into groups and needs the
         * number. */
        /* Warpgroup code also needs it: each warpgroup of the block gets
         * its own named barrier, and the ids must fit in [0, 15]. */
        if (call->scope == TD_SCOPE_CTA || call->scope == TD_SCOPE_WARPGROUP) {
            td_reason_set(why,
                          "threadIdx.x extent is symbolic (%.*s); shared "
                          "reduction needs a constant",
                          TD__FIELD(tx->symbol));
            return false;
        }
        return true;
    }
    if (tx->extent < 1 || tx->extent > SHARED_MAX_THREADS) {
        td_reason_set(why,
                      "threadIdx.x extent %" PRId64 " out of range [1, %d]",
                      tx->extent, SHARED_MAX_THREADS);
        return false;
    }
    /* A partial warp would shuffle with lanes that do not exist; a partial
     * warpgroup would never fill its 128-thread named barrier. */
    return td__whole_scope_units(call, "shared reduction", why);
}

/* The `barrier_id` config entry (any scope: a bad value is a mistake even
 * where it is not used). */
static bool barrier_ok(const td_call *call, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "barrier_id");
    if (e == NULL && td__warpgroups_per_block(call) == 1)
        return true;
    if (e != NULL && e->kind != TD_VALUE_INT) {
        td_reason_set(why, "barrier_id must be an integer");
        return false;
    }
    int64_t id = e != NULL ? e->i : SHARED_DEFAULT_BARRIER;
    if (id < 0 || id > SHARED_MAX_BARRIER) {
        td_reason_set(why, "barrier_id %" PRId64 " out of range [0, %d]", id,
                      SHARED_MAX_BARRIER);
        return false;
    }
    int64_t n = td__warpgroups_per_block(call);
    if (id + n - 1 > SHARED_MAX_BARRIER) {
        td_reason_set(why,
                      "barrier ids %" PRId64 "..%" PRId64 " for %" PRId64
                      " warpgroups exceed %d (lower barrier_id)",
                      id, id + n - 1, n, SHARED_MAX_BARRIER);
        return false;
    }
    return true;
}

/* upstream shared_valid, checks 1-6 in upstream's order, with the extent
 * checks after the launch checks and the barrier id last. */
static bool shared_check(const td_call *call, td__red_shape *sh,
                         td_reason *why)
{
    switch (call->scope) {
    case TD_SCOPE_CTA:
    case TD_SCOPE_WARPGROUP:
    case TD_SCOPE_WARP:
    case TD_SCOPE_THREAD:
        break;
    default:
        td_reason_set(why, "unsupported exec_scope %s for shared reduction",
                      td_exec_scope_name(call->scope));
        return false;
    }
    const td_buffer *dst, *src;
    if (!td__shared_operands(call, &dst, &src, why))
        return false;
    if (dst->dtype != src->dtype) {
        td_reason_set(why, "dtype mismatch: src=%s dst=%s",
                      td_dtype_name(src->dtype), td_dtype_name(dst->dtype));
        return false;
    }
    /* Upstream checks the launch even at thread scope. */
    if (!call->launch[TD_LAUNCH_TX].present) {
        td_reason_set(why, "no threadIdx.x in the call's launch (add `launch: {threadIdx.x: N}`)");
        return false;
    }
    if (call->launch[TD_LAUNCH_TY].present ||
        call->launch[TD_LAUNCH_TZ].present) {
        td_reason_set(why, "multi-dimensional thread binding not supported "
                           "for shared reduction");
        return false;
    }
    if (call->scope != TD_SCOPE_THREAD && !extent_ok(call, why))
        return false;
    if (!td__reduce_shape(call, sh, why))
        return false;
    /* The emitter indexes shared memory row-major and reads src while
     * other threads already write dst. */
    if (!td__row_major_storage(src, why) || !td__row_major_storage(dst, why) ||
        td__regions_overlap(call, why))
        return false;
    return barrier_ok(call, why);
}

/* The plan is the shape shared_valid's checks work out. */
static int shared_plan(const td_call *call, const td_op_desc *op, void *plan,
                       void *user, td_reason *why)
{
    (void)op;
    (void)user;
    return shared_check(call, plan, why) ? 0 : TD_EDECLINED;
}

static bool shared_valid(const td_call *call, const td_args *args, void *user,
                         td_reason *why)
{
    (void)args;
    (void)user;
    td__red_shape sh;
    return shared_check(call, &sh, why);
}

static const td_pred_desc shared_preds[] = {
    {"shared_valid", NULL, 0, shared_valid, NULL, NULL},
};

static int64_t next_pow2(int64_t x)
{
    int64_t p = 1;
    while (p < x && p < ((int64_t)1 << 62))
        p <<= 1;
    return p;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/*
 * The group shuffle tree (upstream _emit_reduction_shared_cta, with the
 * tail-group fix):
 *
 *   tid = threadIdx.x (cta) | threadIdx.x % T;  group = tid / gs;
 *   lane = tid % gs
 *   for step in serial(ceil(S / par)):
 *       spa = step * par + group
 *       if spa < S and group < par:          (each half only when needed)
 *           acc = identity
 *           for t in serial(ceil(R / gs)):
 *               red = t * gs + lane
 *               if red < R: acc = op(acc, src[...])   (guard when R % gs)
 *           acc = op(acc, shfl_xor(activemask, acc, 1 << i, gs))  i = 0..
 *           if lane == 0: dst[...] = accum ? op(dst[...], acc) : acc
 *   barrier of the scope
 */
static int emit_tree(const td_call *call, td_combiner comb,
                     const td__red_shape *sh, td_ir *ir, td_reason *why)
{
    const td_buffer *db = td__region_buffer(call, &call->dst);
    const td_buffer *sb = td__region_buffer(call, &call->src);
    int64_t T = td__scope_threads(call);
    if (T < 1 || T > SHARED_MAX_THREADS) {
        td_reason_set(why, "threadIdx.x extent %" PRId64 " out of range [1, %d]",
                      T, SHARED_MAX_THREADS);
        return TD_EDECLINED;
    }
    int64_t S = sh->spatial_len, R = sh->reduction_len;
    int64_t gs = next_pow2(R);
    if (gs > 32)
        gs = 32;
    if (gs > T)
        gs = T;
    /* T need not be a power of two at cta scope: gs must be, so that the
     * XOR partners of a lane stay inside its group. */
    while (gs & (gs - 1))
        gs &= gs - 1;
    int64_t par = T / gs;
    td_dtype dt = db->dtype;

    td_ir_buf *dbuf = td_ir_buffer(ir, db->name, db->dtype, db->scope,
                                   db->ndim, db->shape);
    td_ir_buf *sbuf = call->src.buffer == call->dst.buffer
                          ? dbuf
                          : td_ir_buffer(ir, sb->name, sb->dtype, sb->scope,
                                         sb->ndim, sb->shape);
    td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    if (call->scope != TD_SCOPE_CTA)
        tx = td_mod(ir, tx, td_int(ir, T));
    td_var *tid = td_ir_let(ir, "tid", TD_I32, tx);
    td_var *group = tid;
    td_var *lane = NULL;
    if (gs > 1) {
        group = td_ir_let(ir, "group", TD_I32,
                          td_div(ir, td_var_ref(ir, tid), td_int(ir, gs)));
        lane = td_ir_let(ir, "lane", TD_I32,
                         td_mod(ir, td_var_ref(ir, tid), td_int(ir, gs)));
    }

    td_var *step = td_ir_for(ir, "step", td_int(ir, ceil_div(S, par)),
                             TD_LOOP_SERIAL);
    td_var *spa = td_ir_let(
        ir, "spa", TD_I32,
        td_add(ir, td_mul(ir, td_var_ref(ir, step), td_int(ir, par)),
               td_var_ref(ir, group)));
    td_expr *cond = NULL;
    if (S % par != 0)
        cond = td_lt(ir, td_var_ref(ir, spa), td_int(ir, S));
    if (T % gs != 0) {
        /* The fix: the threads past the last whole group sit out. */
        td_expr *g = td_lt(ir, td_var_ref(ir, group), td_int(ir, par));
        cond = cond == NULL ? g : td_binary(ir, TD_OP_AND, cond, g);
    }
    if (cond != NULL)
        td_ir_if(ir, cond);

    td_var *acc = td_ir_let(ir, "acc", dt, td_identity(ir, comb, dt));
    td_var *t = td_ir_for(ir, "t", td_int(ir, ceil_div(R, gs)),
                          TD_LOOP_SERIAL);
    td_expr *rv = td_mul(ir, td_var_ref(ir, t), td_int(ir, gs));
    if (lane != NULL)
        rv = td_add(ir, rv, td_var_ref(ir, lane));
    td_var *red = td_ir_let(ir, "red", TD_I32, rv);
    if (R % gs != 0)
        td_ir_if(ir, td_lt(ir, td_var_ref(ir, red), td_int(ir, R)));
    td_expr *sidx[TD_MAX_RANK];
    td__reduce_src_index(ir, &call->src, sh, spa, red, sidx);
    td_ir_assign(ir, acc,
                 td_combine(ir, comb, td_var_ref(ir, acc),
                            td_load(ir, sbuf, call->src.ndim, sidx)));
    if (R % gs != 0)
        td_ir_end_if(ir);
    td_ir_end_for(ir);

    /* Masks ascend 1, 2, 4, ... as upstream; width gs keeps each group's
     * exchange inside its own gs lanes. */
    for (int64_t m = 1; m < gs; m <<= 1) {
        td_expr *a[] = {
            td_intrinsic(ir, TD_INTRIN_ACTIVEMASK, TD_U32, 0, NULL),
            td_var_ref(ir, acc), td_int(ir, m), td_int(ir, gs)};
        td_ir_assign(ir, acc,
                     td_combine(ir, comb, td_var_ref(ir, acc),
                                td_intrinsic(ir, TD_INTRIN_SHFL_XOR, dt, 4,
                                             a)));
    }

    if (lane != NULL)
        td_ir_if(ir, td_eq(ir, td_var_ref(ir, lane), td_int(ir, 0)));
    td_expr *didx[TD_MAX_RANK], *lidx[TD_MAX_RANK];
    td__reduce_dst_index(ir, &call->dst, spa, didx);
    td_expr *v = td_var_ref(ir, acc);
    if (call->accum) {
        td__reduce_dst_index(ir, &call->dst, spa, lidx);
        v = td_combine(ir, comb, td_load(ir, dbuf, call->dst.ndim, lidx), v);
    }
    td_ir_store(ir, dbuf, call->dst.ndim, didx, v);
    if (lane != NULL)
        td_ir_end_if(ir);
    if (cond != NULL)
        td_ir_end_if(ir);
    td_ir_end_for(ir);

    td__scope_barrier(call, ir, SHARED_DEFAULT_BARRIER);
    return td_ir_status(ir);
}

static int shared_emit(const td_call *call, const td_op_desc *op,
                       const void *plan, td_ir *ir, void *user,
                       td_reason *why)
{
    (void)user;
    /* The registry hands over the plan of shared_valid's checks, also when
     * the rules bind the impl without its predicate. */
    const td__red_shape *sh = plan;
    int rc = td__reduce_emit_start("shared", plan, op, why);
    if (rc == 0)
        rc = td__reduce_limits(call, op->combiner, sh, why);
    if (rc != 0)
        return rc;
    if (call->scope == TD_SCOPE_THREAD)
        return td__emit_thread_wise(call, op->combiner, sh, ir);
    return emit_tree(call, op->combiner, sh, ir, why);
}

const td_impl_desc td__variant_shared = {
    .name = "shared",
    .emit = shared_emit,
    .preds = shared_preds,
    .npreds = sizeof(shared_preds) / sizeof(shared_preds[0]),
    .plan = shared_plan,
    .plan_size = sizeof(td__red_shape),
    .plan_pred = "shared_valid",
};
