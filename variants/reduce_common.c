/*
 * Reduction helpers shared by the variant modules: the axes and size
 * analysis, and the thread-wise emitter (upstream's
 * _emit_reduction_local_thread_wise), kept here so that `local` and
 * `shared` share one copy of it.
 */
#include <inttypes.h>
#include <string.h>

#include "common.h"
#include "reduce_common.h"

bool td__reduce_shape(const td_call *call, td__red_shape *out,
                      td_reason *why)
{
    memset(out, 0, sizeof *out);
    char msg[TD_REASON_MAX];
    msg[0] = '\0';
    if (td_call_axes(call, out->reduce, &out->nreduce, out->spatial,
                     &out->nspatial, msg, sizeof msg) != 0) {
        td_reason_set(why, "%s", msg[0] != '\0' ? msg : "invalid reduce axes");
        return false;
    }
    /* td_call_axes promises dims in range; a dim outside the source rank
     * would index past the extents below, so do not take it on trust. */
    int nd = call->src.ndim;
    if (out->nreduce < 0 || out->nspatial < 0 ||
        out->nreduce + out->nspatial != nd || nd > TD_MAX_RANK) {
        td_reason_set(why, "invalid reduce axes");
        return false;
    }
    out->spatial_len = 1;
    out->reduction_len = 1;
    for (int i = 0; i < out->nspatial; i++) {
        int d = out->spatial[i];
        if (d < 0 || d >= nd) {
            td_reason_set(why, "invalid reduce axes");
            return false;
        }
        out->spatial_len = td__mul_sat(out->spatial_len, call->src.extent[d]);
    }
    for (int i = 0; i < out->nreduce; i++) {
        int d = out->reduce[i];
        if (d < 0 || d >= nd) {
            td_reason_set(why, "invalid reduce axes");
            return false;
        }
        out->reduction_len =
            td__mul_sat(out->reduction_len, call->src.extent[d]);
    }
    out->dst_len = td__region_elems(&call->dst);
    if (out->dst_len != out->spatial_len) {
        td_reason_set(why,
                      "dst size %" PRId64 " != expected spatial size %" PRId64,
                      out->dst_len, out->spatial_len);
        return false;
    }
    return true;
}

/* Loop variables and CUDA indices are int; refuse anything larger. */
#define TD__INDEX_MAX INT32_MAX

/* Checks that a region lies inside its buffer, is non-empty and that the
 * buffer can be indexed with 32-bit flat indices. */
static bool region_ok(const td_region *r, const td_buffer *b,
                      const char *role, td_reason *why)
{
    int64_t elems = 1;
    for (int d = 0; d < b->ndim; d++) {
        if (r->extent[d] < 1 || r->start[d] < 0 ||
            b->shape[d] < 1 || r->start[d] > b->shape[d] - r->extent[d]) {
            td_reason_set(why, "%s region out of bounds for %.*s", role,
                          TD__FIELD(b->name));
            return false;
        }
        elems = td__mul_sat(elems, b->shape[d]);
    }
    if (elems > TD__INDEX_MAX) {
        td_reason_set(why, "%s buffer %.*s is too large for 32-bit indices",
                      role, TD__FIELD(b->name));
        return false;
    }
    return true;
}

static td_expr *plus_const(td_ir *ir, td_expr *e, int64_t c)
{
    return c == 0 ? e : td_add(ir, e, td_int(ir, c));
}

static td_expr *var_ref(td_ir *ir, const void *v)
{
    return td_var_ref(ir, v);
}

/* Unflattens the loop variable v row-major over ext[0..n) (common.h). */
static void unflatten(td_ir *ir, const td_var *v, int n, const int64_t *ext,
                      td_expr **out)
{
    td__unflatten(ir, var_ref, v, n, ext, NULL, out);
}

/* The dst indices of spatial position spa: unflattened over the dst
 * region's own extents (upstream never relates them to the src dims), plus
 * the region start.  Built afresh for each use so that no IR node is
 * shared between statements. */
static void dst_index(td_ir *ir, const td_region *r, const td_var *spa,
                      td_expr **idx)
{
    unflatten(ir, spa, r->ndim, r->extent, idx);
    for (int d = 0; d < r->ndim; d++)
        idx[d] = plus_const(ir, idx[d], r->start[d]);
}

/* The src indices of (spa, red): spa unflattened over the spatial extents,
 * red over the reduced extents, scattered back to their dims, plus the
 * region start (upstream build_src_indices). */
static void src_index(td_ir *ir, const td_region *r, const td__red_shape *sh,
                      const td_var *spa, const td_var *red, td_expr **idx)
{
    int64_t ext[TD_MAX_RANK];
    td_expr *part[TD_MAX_RANK];
    for (int i = 0; i < sh->nspatial; i++)
        ext[i] = r->extent[sh->spatial[i]];
    unflatten(ir, spa, sh->nspatial, ext, part);
    for (int i = 0; i < sh->nspatial; i++)
        idx[sh->spatial[i]] = part[i];
    for (int i = 0; i < sh->nreduce; i++)
        ext[i] = r->extent[sh->reduce[i]];
    unflatten(ir, red, sh->nreduce, ext, part);
    for (int i = 0; i < sh->nreduce; i++)
        idx[sh->reduce[i]] = part[i];
    for (int d = 0; d < r->ndim; d++)
        idx[d] = plus_const(ir, idx[d], r->start[d]);
}

int td__emit_thread_wise(const td_call *call, td_combiner comb,
                         const td__red_shape *shp, td_ir *ir)
{
    const td__red_shape sh = *shp;
    const td_buffer *db = &call->buffers[call->dst.buffer];
    const td_buffer *sb = &call->buffers[call->src.buffer];

    td_ir_buf *dbuf = td_ir_buffer(ir, db->name, db->dtype, db->scope,
                                   db->ndim, db->shape);
    td_ir_buf *sbuf = call->src.buffer == call->dst.buffer
                          ? dbuf
                          : td_ir_buffer(ir, sb->name, sb->dtype, sb->scope,
                                         sb->ndim, sb->shape);
    int dn = call->dst.ndim, sn = call->src.ndim;
    td_expr *didx[TD_MAX_RANK], *lidx[TD_MAX_RANK], *sidx[TD_MAX_RANK];

    td_var *spa = td_ir_for(ir, "spa", td_int(ir, sh.spatial_len),
                            TD_LOOP_SERIAL);
    if (!call->accum) {
        dst_index(ir, &call->dst, spa, didx);
        td_ir_store(ir, dbuf, dn, didx, td_identity(ir, comb, db->dtype));
    }
    td_var *red = td_ir_for(ir, "red", td_int(ir, sh.reduction_len),
                            TD_LOOP_SERIAL);
    dst_index(ir, &call->dst, spa, didx);
    dst_index(ir, &call->dst, spa, lidx);
    src_index(ir, &call->src, &sh, spa, red, sidx);
    td_ir_store(ir, dbuf, dn, didx,
                td_combine(ir, comb, td_load(ir, dbuf, dn, lidx),
                           td_load(ir, sbuf, sn, sidx)));
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    return td_ir_status(ir);
}

/* ---- shared with the shared-memory variant ------------------------------ */

int td__reduce_emit_start(const char *module, const void *plan,
                          const td_op_desc *op, td_reason *why)
{
    if (plan == NULL) {
        td_reason_set(why, "%s emitter called without its plan", module);
        return TD_EINVAL;
    }
    if (op == NULL || op->kind != TD_OP_KIND_REDUCTION ||
        (unsigned)op->combiner > TD_COMBINE_MIN) {
        td_reason_set(why, "op %s is not a reduction",
                      op != NULL && op->name != NULL ? op->name : "?");
        return TD_EDECLINED;
    }
    return 0;
}

/* td__reduce_check when `known` is NULL (the shape is worked out into
 * *sh); td__reduce_limits when the shape is already known. */
static int reduce_checks(const td_call *call, td_combiner comb,
                         const td__red_shape *known, td__red_shape *sh,
                         td_reason *why)
{
    const td_buffer *db = td__region_buffer(call, &call->dst);
    const td_buffer *sb = td__region_buffer(call, &call->src);
    if (db == NULL || sb == NULL) {
        td_reason_set(why, "%s", td__regions_missing(call));
        return TD_EDECLINED;
    }
    if (comb != TD_COMBINE_SUM && comb != TD_COMBINE_MAX &&
        comb != TD_COMBINE_MIN) {
        td_reason_set(why, "unknown reduction combiner");
        return TD_EDECLINED;
    }
    /* CUDA's float8 types store and convert but have no arithmetic:
     * every reduction variant refuses them here, before its emitter. */
    if (td_dtype_is_float8(sb->dtype) || td_dtype_is_float8(db->dtype)) {
        td_reason_set(why, "%s reduction: float8 has no arithmetic in CUDA "
                      "(reduce a float16 or float32 copy)",
                      td_dtype_name(td_dtype_is_float8(sb->dtype) ? sb->dtype
                                                                  : db->dtype));
        return TD_EDECLINED;
    }
    if (known == NULL && db->dtype != sb->dtype) {
        td_reason_set(why, "dtype mismatch: src=%s dst=%s",
                      td_dtype_name(sb->dtype), td_dtype_name(db->dtype));
        return TD_EDECLINED;
    }
    if (!region_ok(&call->src, sb, "src", why) ||
        !region_ok(&call->dst, db, "dst", why))
        return TD_EDECLINED;
    if (known == NULL) {
        if (!td__reduce_shape(call, sh, why))
            return TD_EDECLINED;
        known = sh;
    }
    if (known->spatial_len > TD__INDEX_MAX ||
        known->reduction_len > TD__INDEX_MAX) {
        td_reason_set(why, "reduction too large for 32-bit loop indices");
        return TD_EDECLINED;
    }
    return 0;
}

int td__reduce_check(const td_call *call, td_combiner comb,
                     td__red_shape *sh, td_reason *why)
{
    return reduce_checks(call, comb, NULL, sh, why);
}

int td__reduce_limits(const td_call *call, td_combiner comb,
                      const td__red_shape *sh, td_reason *why)
{
    return reduce_checks(call, comb, sh, NULL, why);
}

void td__reduce_src_index(td_ir *ir, const td_region *r,
                          const td__red_shape *sh, const td_var *spa,
                          const td_var *red, td_expr **idx)
{
    src_index(ir, r, sh, spa, red, idx);
}

void td__reduce_dst_index(td_ir *ir, const td_region *r, const td_var *spa,
                          td_expr **idx)
{
    dst_index(ir, r, spa, idx);
}

/* ---- storage order and overlap --------------------------------------- */

bool td__row_major_storage(const td_buffer *b, td_reason *why)
{
    if (!b->has_layout)
        return true;
    td_layout c;
    bool ok = !b->layout.swizzle && td__lay_canonicalize(&b->layout, &c) == 0 &&
              c.nshard == 1 && c.shard[0].axis == TD_AXIS_M &&
              (c.shard[0].stride == 1 || c.shard[0].extent == 1) &&
              c.nrep == 0;
    for (int a = 0; ok && a < TD_AXIS_COUNT; a++)
        ok = c.offset[a] == 0;
    if (!ok)
        td_reason_set(why,
                      "layout of %.*s is not row-major storage (%.*s); this "
                      "path indexes its elements in row-major order",
                      TD__FIELD(b->name),
                      (int)strnlen(b->layout_text, sizeof b->layout_text),
                      b->layout_text);
    return ok;
}

bool td__regions_overlap(const td_call *call, td_reason *why)
{
    const td_region *d = &call->dst, *s = &call->src;
    if (d->buffer != s->buffer || d->ndim != s->ndim)
        return false;
    for (int i = 0; i < d->ndim && i < TD_MAX_RANK; i++)
        if (d->start[i] + d->extent[i] <= s->start[i] ||
            s->start[i] + s->extent[i] <= d->start[i])
            return false;
    const td_buffer *b = td__region_buffer(call, d);
    td_reason_set(why,
                  "dst and src regions of %.*s overlap; an in-place "
                  "reduction would overwrite its input before reading it",
                  TD__FIELD(b != NULL ? b->name : "?"));
    return true;
}

bool td__shared_operands(const td_call *call, const td_buffer **dst,
                         const td_buffer **src, td_reason *why)
{
    *dst = td__region_buffer(call, &call->dst);
    *src = td__region_buffer(call, &call->src);
    if (*dst == NULL || *src == NULL) {
        td_reason_set(why, "%s", td__regions_missing(call));
        return false;
    }
    if (strncmp((*dst)->scope, "shared", 6) != 0 ||
        strncmp((*src)->scope, "shared", 6) != 0) {
        td_reason_set(why, "expected shared scope for both src and dst");
        return false;
    }
    return true;
}
