/*
 * The Blackwell packed reductions (upstream reduction/sm100_packed.py):
 * `packed_add_sum` (sum via add.rn.ftz.f32x2) and `3input_maxmin`
 * (max/min via the 3-input max.f32 / min.f32).  They bring no predicates
 * of their own; the rules bind the generic ones (exec_scope, local_scope,
 * dst_len, src_ndim, dtype, sm_version, reduction_len).
 *
 * Both read the source in chunks of eight from the region start.  Their
 * plan function repeats the gate's checks, so a call outside it is
 * declined, and rules that bind them without the gate never get
 * Blackwell-only code for a call it cannot handle (or out-of-bounds reads
 * for fewer than eight elements).
 */
#include <inttypes.h>
#include <string.h>

#include "reduce_common.h"
#include "variants.h"

/* The gate of rules.yaml: minimum SM version and source length. */
#define PACKED_MIN_SM 100
#define PACKED_MIN_LEN 8

/* The checks the rules' predicates make, in the same order and wording,
 * plus the ones the index arithmetic relies on. */
static bool packed_gate(const td_call *call, const td_op_desc *op,
                        td_combiner want1, td_combiner want2, td_reason *why)
{
    if (op == NULL || op->kind != TD_OP_KIND_REDUCTION ||
        (op->combiner != want1 && op->combiner != want2)) {
        td_reason_set(why, "op %s is not served by this variant",
                      op != NULL && op->name != NULL ? op->name : "?");
        return false;
    }
    if (call->scope != TD_SCOPE_THREAD) {
        td_reason_set(why, "unsupported exec_scope %s",
                      td_exec_scope_name(call->scope));
        return false;
    }
    const td_buffer *db = td__region_buffer(call, &call->dst);
    const td_buffer *sb = td__region_buffer(call, &call->src);
    if (db == NULL || sb == NULL) {
        td_reason_set(why, "%s", td__regions_missing(call));
        return false;
    }
    if (!td__name_is(db->scope, "local") || !td__name_is(sb->scope, "local") ||
        db->dtype != sb->dtype || !td__name_is(call->target, "cuda")) {
        td_reason_set(why,
                      "src/dst must be local scope with matching dtype on "
                      "CUDA");
        return false;
    }
    int64_t dst_len = td__region_elems(&call->dst);
    if (dst_len != 1) {
        td_reason_set(why, "dst_len %" PRId64 " != 1", dst_len);
        return false;
    }
    if (call->src.ndim != 1) {
        td_reason_set(why, "src ndim %d != 1", call->src.ndim);
        return false;
    }
    if (sb->dtype != TD_F32) {
        td_reason_set(why, "dtype %s != float32", td_dtype_name(sb->dtype));
        return false;
    }
    if (call->sm_version < PACKED_MIN_SM) {
        td_reason_set(why, "sm_version %d < %d", call->sm_version,
                      PACKED_MIN_SM);
        return false;
    }
    int64_t n = td__region_elems(&call->src);
    if (n < PACKED_MIN_LEN) {
        td_reason_set(why, "reduction_len %" PRId64 " < %d", n,
                      PACKED_MIN_LEN);
        return false;
    }
    return true;
}

/* What both emitters share: the checked call, its buffers and the chunking
 * of the 1-D source. */
typedef struct packed {
    const td_call *call;
    td_ir_buf *dbuf, *sbuf;
    int64_t base;      /* src region start */
    int64_t full, rem; /* chunks of eight, elements left over */
} packed;

/* The plan: the gate passed and the call's shape is checked. */
typedef struct packed_plan {
    td__red_shape sh;
} packed_plan;

static int packed_plan_for(const td_call *call, const td_op_desc *op,
                           td_combiner want1, td_combiner want2,
                           packed_plan *p, td_reason *why)
{
    if (!packed_gate(call, op, want1, want2, why))
        return TD_EDECLINED;
    /* Bounds, axes and the dst size: the same checks as every reduction
     * emitter. */
    int rc = td__reduce_check(call, op->combiner, &p->sh, why);
    if (rc != 0)
        return rc;
    const td_buffer *db = td__region_buffer(call, &call->dst);
    const td_buffer *sb = td__region_buffer(call, &call->src);
    /* The accumulators load src[base + i]: registers in row-major order. */
    if (!td__row_major_storage(sb, why) || !td__row_major_storage(db, why))
        return TD_EDECLINED;
    return 0;
}

static int add_sum_plan(const td_call *call, const td_op_desc *op,
                        void *plan, void *user, td_reason *why)
{
    (void)user;
    return packed_plan_for(call, op, TD_COMBINE_SUM, TD_COMBINE_SUM, plan,
                           why);
}

static int maxmin_plan(const td_call *call, const td_op_desc *op, void *plan,
                       void *user, td_reason *why)
{
    (void)user;
    return packed_plan_for(call, op, TD_COMBINE_MAX, TD_COMBINE_MIN, plan,
                           why);
}

/* The buffers and chunking of a planned call. */
static int packed_setup(const td_call *call, const void *plan, td_ir *ir,
                        packed *pk, td_reason *why)
{
    if (plan == NULL) {
        td_reason_set(why, "packed emitter called without its plan");
        return TD_EINVAL;
    }
    const td_buffer *db = td__region_buffer(call, &call->dst);
    const td_buffer *sb = td__region_buffer(call, &call->src);
    pk->call = call;
    pk->dbuf = td_ir_buffer(ir, db->name, db->dtype, db->scope, db->ndim,
                            db->shape);
    pk->sbuf = call->src.buffer == call->dst.buffer
                   ? pk->dbuf
                   : td_ir_buffer(ir, sb->name, sb->dtype, sb->scope,
                                  sb->ndim, sb->shape);
    int64_t n = call->src.extent[0];
    pk->base = call->src.start[0];
    pk->full = n / 8;
    pk->rem = n % 8;
    return 0;
}

static td_expr *src_at(td_ir *ir, const packed *pk, int64_t k)
{
    return td_load1(ir, pk->sbuf, td_int(ir, pk->base + k));
}

/* src[outer * 8 + scale * j + (base + off)]: element off + scale*j of
 * chunk outer + 1 when off counts the chunk's leading 8. */
static td_expr *src_chunk(td_ir *ir, const packed *pk, const td_var *outer,
                          const td_var *j, int64_t scale, int64_t off)
{
    td_expr *e = td_mul(ir, td_var_ref(ir, outer), td_int(ir, 8));
    e = td_add(ir, e, td_mul(ir, td_var_ref(ir, j), td_int(ir, scale)));
    return td_add(ir, e, td_int(ir, pk->base + off));
}

/* The dst region holds one element (the gate checked): its start. */
static void dst_idx(td_ir *ir, const packed *pk, td_expr **idx)
{
    for (int d = 0; d < pk->call->dst.ndim; d++)
        idx[d] = td_int(ir, pk->call->dst.start[d]);
}

static td_expr *dst_load(td_ir *ir, const packed *pk)
{
    td_expr *idx[TD_MAX_RANK];
    dst_idx(ir, pk, idx);
    return td_load(ir, pk->dbuf, pk->call->dst.ndim, idx);
}

static void dst_store(td_ir *ir, const packed *pk, td_expr *v)
{
    td_expr *idx[TD_MAX_RANK];
    dst_idx(ir, pk, idx);
    td_ir_store(ir, pk->dbuf, pk->call->dst.ndim, idx, v);
}

/* acc[i0], acc[i1] as index expressions built from j (scale*j + off). */
static td_expr *jidx(td_ir *ir, const td_var *j, int64_t scale, int64_t off)
{
    td_expr *e = td_mul(ir, td_var_ref(ir, j), td_int(ir, scale));
    return td_add(ir, e, td_int(ir, off));
}

/*
 * One packed add: (acc[a0], acc[a1]) += (b0, b1) as upstream writes it
 * since #20103: mov.b64 packs both pairs, add.rn.ftz.f32x2 adds them,
 * mov.b64 unpacks the sum.  a0/a1 are used twice each, so the caller
 * passes builders rather than nodes.
 */
typedef td_expr *(*idx_fn)(td_ir *ir, const void *ctx, int which);

static void packed_add(td_ir *ir, td_ir_buf *acc, idx_fn aidx,
                       const void *actx, td_expr *b0, td_expr *b1)
{
    td_expr *pa[] = {td_load1(ir, acc, aidx(ir, actx, 0)),
                     td_load1(ir, acc, aidx(ir, actx, 1))};
    td_var *p = td_ir_let(ir, "pa", TD_U64,
                          td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                       2, pa));
    td_expr *pb[] = {b0, b1};
    td_var *q = td_ir_let(ir, "pb", TD_U64,
                          td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                       2, pb));
    td_expr *add[] = {td_var_ref(ir, p), td_var_ref(ir, q)};
    td_ir_assign(ir, p, td_intrinsic(ir, TD_INTRIN_PTX_ADD_F32X2, TD_U64, 2,
                                     add));
    td_expr *lo[] = {td_var_ref(ir, p)}, *hi[] = {td_var_ref(ir, p)};
    td_ir_store1(ir, acc, aidx(ir, actx, 0),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_LO, TD_F32, 1, lo));
    td_ir_store1(ir, acc, aidx(ir, actx, 1),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_HI, TD_F32, 1, hi));
}

/* Index builders for packed_add: a constant pair, or (2j, 2j + 1). */
static td_expr *pair_const(td_ir *ir, const void *ctx, int which)
{
    return td_int(ir, *(const int64_t *)ctx + which);
}

static td_expr *pair_loop(td_ir *ir, const void *ctx, int which)
{
    return jidx(ir, (const td_var *)ctx, 2, which);
}

/*
 * upstream _emit_reduction_local_thread_packed_add_sum:
 *
 *   acc8[0..7] = src[base + 0..7]        (accum: acc8[0] = src[base] + dst)
 *   for outer in serial(full - 1):
 *       for j in unroll(4): (acc8[2j], acc8[2j+1]) += src pair of chunk outer+1
 *   for i in serial(rem): acc8[0] += src[base + 8*full + i]
 *   (0,1) += (2,3); (4,5) += (6,7); (0,1) += (4,5); dst = acc8[0] + acc8[1]
 */
static int packed_add_sum_emit(const td_call *call, const td_op_desc *op,
                               const void *plan, td_ir *ir, void *user,
                               td_reason *why)
{
    (void)user;
    (void)op;
    packed pk;
    int rc = packed_setup(call, plan, ir, &pk, why);
    if (rc != 0)
        return rc;
    td_ir_buf *acc = td_ir_scratch(ir, "acc8", TD_F32, 8);
    for (int64_t i = 0; i < 8; i++) {
        td_expr *v = src_at(ir, &pk, i);
        if (i == 0 && call->accum)
            v = td_combine(ir, TD_COMBINE_SUM, v, dst_load(ir, &pk));
        td_ir_store1(ir, acc, td_int(ir, i), v);
    }
    if (pk.full > 1) {
        td_var *outer = td_ir_for(ir, "outer", td_int(ir, pk.full - 1),
                                  TD_LOOP_SERIAL);
        td_var *j = td_ir_for(ir, "j", td_int(ir, 4), TD_LOOP_UNROLL);
        packed_add(ir, acc, pair_loop, j,
                   td_load1(ir, pk.sbuf, src_chunk(ir, &pk, outer, j, 2, 8)),
                   td_load1(ir, pk.sbuf, src_chunk(ir, &pk, outer, j, 2, 9)));
        td_ir_end_for(ir);
        td_ir_end_for(ir);
    }
    if (pk.rem > 0) {
        td_var *i = td_ir_for(ir, "i", td_int(ir, pk.rem), TD_LOOP_SERIAL);
        td_ir_store1(
            ir, acc, td_int(ir, 0),
            td_combine(ir, TD_COMBINE_SUM, td_load1(ir, acc, td_int(ir, 0)),
                       td_load1(ir, pk.sbuf,
                                td_add(ir, td_var_ref(ir, i),
                                       td_int(ir, pk.base + 8 * pk.full)))));
        td_ir_end_for(ir);
    }
    static const int64_t tree[3][2] = {{0, 2}, {4, 6}, {0, 4}};
    for (int k = 0; k < 3; k++)
        packed_add(ir, acc, pair_const, &tree[k][0],
                   td_load1(ir, acc, td_int(ir, tree[k][1])),
                   td_load1(ir, acc, td_int(ir, tree[k][1] + 1)));
    dst_store(ir, &pk,
              td_combine(ir, TD_COMBINE_SUM, td_load1(ir, acc, td_int(ir, 0)),
                         td_load1(ir, acc, td_int(ir, 1))));
    return td_ir_status(ir);
}

static td_expr *op3(td_ir *ir, td_combiner c, td_expr *a, td_expr *b,
                    td_expr *d)
{
    td_expr *args[] = {a, b, d};
    return td_intrinsic(ir,
                        c == TD_COMBINE_MAX ? TD_INTRIN_PTX_MAX3_F32
                                            : TD_INTRIN_PTX_MIN3_F32,
                        TD_F32, 3, args);
}

/*
 * upstream _emit_reduction_local_thread_3input_maxmin:
 *
 *   t[i] = op(src[2i], src[2i+1]), i < 4   (accum: t[0] = op3(src[0], src[1], dst))
 *   for outer in serial(full - 1):
 *       for i in unroll(4): t[i] = op3(t[i], src pair i of chunk outer+1)
 *   for i in serial(rem): t[0] = op(t[0], src[8*full + i])
 *   dst = op(t[0], t[1]); dst = op3(dst, t[2], t[3])
 */
static int maxmin_emit(const td_call *call, const td_op_desc *op,
                       const void *plan, td_ir *ir, void *user,
                       td_reason *why)
{
    (void)user;
    packed pk;
    int rc = packed_setup(call, plan, ir, &pk, why);
    if (rc != 0)
        return rc;
    td_combiner c = op->combiner;
    td_ir_buf *t = td_ir_scratch(ir, "acc4", TD_F32, 4);
    for (int64_t i = 0; i < 4; i++) {
        td_expr *v = i == 0 && call->accum
                         ? op3(ir, c, src_at(ir, &pk, 0), src_at(ir, &pk, 1),
                               dst_load(ir, &pk))
                         : td_combine(ir, c, src_at(ir, &pk, 2 * i),
                                      src_at(ir, &pk, 2 * i + 1));
        td_ir_store1(ir, t, td_int(ir, i), v);
    }
    if (pk.full > 1) {
        td_var *outer = td_ir_for(ir, "outer", td_int(ir, pk.full - 1),
                                  TD_LOOP_SERIAL);
        td_var *j = td_ir_for(ir, "j", td_int(ir, 4), TD_LOOP_UNROLL);
        td_ir_store1(
            ir, t, td_var_ref(ir, j),
            op3(ir, c, td_load1(ir, t, td_var_ref(ir, j)),
                td_load1(ir, pk.sbuf, src_chunk(ir, &pk, outer, j, 2, 8)),
                td_load1(ir, pk.sbuf, src_chunk(ir, &pk, outer, j, 2, 9))));
        td_ir_end_for(ir);
        td_ir_end_for(ir);
    }
    if (pk.rem > 0) {
        td_var *i = td_ir_for(ir, "i", td_int(ir, pk.rem), TD_LOOP_SERIAL);
        td_ir_store1(ir, t, td_int(ir, 0),
                     td_combine(ir, c, td_load1(ir, t, td_int(ir, 0)),
                                td_load1(ir, pk.sbuf,
                                         td_add(ir, td_var_ref(ir, i),
                                                td_int(ir, pk.base +
                                                               8 * pk.full)))));
        td_ir_end_for(ir);
    }
    dst_store(ir, &pk,
              td_combine(ir, c, td_load1(ir, t, td_int(ir, 0)),
                         td_load1(ir, t, td_int(ir, 1))));
    dst_store(ir, &pk,
              op3(ir, c, dst_load(ir, &pk), td_load1(ir, t, td_int(ir, 2)),
                  td_load1(ir, t, td_int(ir, 3))));
    return td_ir_status(ir);
}

const td_impl_desc td__variant_packed_add_sum = {
    .name = "packed_add_sum",
    .emit = packed_add_sum_emit,
    .plan = add_sum_plan,
    .plan_size = sizeof(packed_plan),
};

const td_impl_desc td__variant_3input_maxmin = {
    .name = "3input_maxmin",
    .emit = maxmin_emit,
    .plan = maxmin_plan,
    .plan_size = sizeof(packed_plan),
};
