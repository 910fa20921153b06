/*
 * The permute_layout variant `warp_xor_swizzle` (upstream
 * permute_layout/warp_xor_swizzle.py, priority 20): a warp moves a tile
 * from the source's layout to the destination's through registers.  Each
 * lane loads P = V / 32 elements, the warp syncs, each lane stores them,
 * the warp syncs; register slot r of lane l handles the flat index
 * l + 32 * (r ^ ((l >> (5 - k)) & (2^k - 1))), k the smallest XOR width
 * that leaves both phases free of shared-memory bank conflicts.
 *
 * Upstream has no predicates: its emitter works out a reason (_why_reject)
 * and fails with it, so every refusal is an emitter decline.  Here that is
 * the plan function (a plan that declines makes the candidate "declined by
 * emitter" in explain), with upstream's checks in upstream's order and
 * upstream's texts.
 *
 * Upstream's emitted code never lowers (it uses threadIdx.x without
 * declaring it: D1 of design/gemm/plan.md, docs/upstream.md); the
 * emission below is the algorithm of its docstring with the lane taken
 * from the kernel's thread index, as the other warp variants do.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "layout.h"
#include "permute.h"
#include "variants.h"

#define WARP 32

typedef struct permute_plan {
    int n;                                  /* shard dims of the iteration */
    int64_t extent[TD_MAX_LAYOUT_ITERS];
    int64_t src_str[TD_MAX_LAYOUT_ITERS];
    int64_t dst_str[TD_MAX_LAYOUT_ITERS];
    int64_t p;                              /* elements per lane */
    int k;                                  /* XOR bits */
    int bytes;                              /* element size */
    bool direct;                            /* shared 4/8-byte: ld/st.shared */
    int64_t src_off, dst_off;               /* the slices' storage offsets */
} permute_plan;

/* "[4, 32]": a list of integers as Python prints it. */
static void list_text(char *buf, size_t cap, const int64_t *v, int n)
{
    size_t len = 0;
    int w = snprintf(buf, cap, "[");
    len = w > 0 ? (size_t)w : 0;
    for (int i = 0; i < n && len < cap; i++) {
        w = snprintf(buf + len, cap - len, "%s%" PRId64, i ? ", " : "",
                     v[i]);
        if (w < 0)
            return;
        len += (size_t)w;
    }
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
}

static const td_region *src_region(const td_call *call)
{
    return &call->srcs[0].region;
}

/* A buffer declared without a layout has TVM's default, the row-major
 * TileLayout of its shape (decl_buffer's T.S[shape:row-major strides]);
 * a swizzled one (a ComposeLayout in TVM) is not a plain TileLayout. */
static bool plain_tile_layout(const td_buffer *b)
{
    return !b->has_layout || !b->layout.swizzle;
}

static void buffer_layout(const td_buffer *b, td_layout *out)
{
    if (b->has_layout) {
        *out = b->layout;
        return;
    }
    memset(out, 0, sizeof *out);
    out->nshard = b->ndim;
    int64_t stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        out->shard[d] = (td_iter){b->shape[d], stride, TD_AXIS_M};
        stride *= b->shape[d];
    }
}

/* Slice the buffer's layout to the region and canonicalize it. */
static int slice_canon(const td_buffer *b, const td_region *r, td_layout *out)
{
    td_layout l;
    buffer_layout(b, &l);
    int rc = td__lay_slice(&l, b->shape, b->ndim, r->start, r->extent, out);
    if (rc != 0)
        return rc;
    return td__lay_canonicalize(out, out);
}

/* Upstream's _why_reject, then _impl's k search: 0, or TD_EDECLINED with
 * upstream's text. */
static int permute_plan_fn(const td_call *call, const td_op_desc *op,
                           void *planp, void *user, td_reason *why)
{
    (void)op;
    (void)user;
    permute_plan *pl = planp;
    memset(pl, 0, sizeof *pl);
    if (call->scope != TD_SCOPE_WARP) {
        td_reason_set(why, "scope '%s' is not 'warp'",
                      td_exec_scope_name(call->scope));
        return TD_EDECLINED;
    }
    if (call->launch[TD_LAUNCH_TY].present ||
        call->launch[TD_LAUNCH_TZ].present) {
        td_reason_set(why, "multi-dim threadIdx is not supported");
        return TD_EDECLINED;
    }
    const td_region *sr = src_region(call), *dr = &call->dst;
    const td_buffer *sb = &call->buffers[sr->buffer];
    const td_buffer *db = &call->buffers[dr->buffer];
    if (sb->dtype != db->dtype) {
        td_reason_set(why, "dtype mismatch: dst=%s vs src=%s",
                      td_dtype_name(db->dtype), td_dtype_name(sb->dtype));
        return TD_EDECLINED;
    }
    /* Region extents are integers in a call file: upstream's "extents
     * must be compile-time integers" cannot arise. */
    bool same = sr->ndim == dr->ndim;
    for (int d = 0; same && d < sr->ndim; d++)
        same = sr->extent[d] == dr->extent[d];
    if (!same) {
        char st[160], dt[160];
        list_text(st, sizeof st, sr->extent, sr->ndim);
        list_text(dt, sizeof dt, dr->extent, dr->ndim);
        td_reason_set(why, "slice shape mismatch: src=%s vs dst=%s", st, dt);
        return TD_EDECLINED;
    }
    int bytes = td_dtype_bits(sb->dtype) / 8;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 &&
        bytes != 16) {
        td_reason_set(why, "unsupported dtype byte width: %d", bytes);
        return TD_EDECLINED;
    }
    if (!plain_tile_layout(sb)) {
        td_reason_set(why, "src buffer's layout is not a plain TileLayout");
        return TD_EDECLINED;
    }
    if (!plain_tile_layout(db)) {
        td_reason_set(why, "dst buffer's layout is not a plain TileLayout");
        return TD_EDECLINED;
    }
    td_layout ss, ds;
    if (slice_canon(sb, sr, &ss) != 0 || slice_canon(db, dr, &ds) != 0) {
        td_reason_set(why, "layout.slice failed");
        return TD_EDECLINED;
    }
    int64_t iter_ext[TD_MAX_RANK];
    int niter = 0;
    for (int d = 0; d < sr->ndim; d++)
        if (sr->extent[d] != 1)
            iter_ext[niter++] = sr->extent[d];
    td_layout dg, sg;
    int dseps[TD_MAX_LAYOUT_ITERS + 1], sseps[TD_MAX_LAYOUT_ITERS + 1];
    char e[TD_REASON_MAX - 40];
    e[0] = '\0';
    if (td__lay_group_why(&ds, iter_ext, niter, &dg, dseps, e, sizeof e) !=
        0) {
        td_reason_set(why, "layout.group failed: %s", e);
        return TD_EDECLINED;
    }
    int64_t dext[TD_MAX_LAYOUT_ITERS], sext[TD_MAX_LAYOUT_ITERS];
    for (int i = 0; i < dg.nshard; i++)
        dext[i] = dg.shard[i].extent;
    if (td__lay_group_why(&ss, dext, dg.nshard, &sg, sseps, e, sizeof e) !=
        0) {
        td_reason_set(why, "layout.group failed: %s", e);
        return TD_EDECLINED;
    }
    for (int i = 0; i < sg.nshard; i++)
        sext[i] = sg.shard[i].extent;
    same = sg.nshard == dg.nshard;
    for (int i = 0; same && i < dg.nshard; i++)
        same = sext[i] == dext[i];
    if (!same) {
        char st[200], dt[200];
        list_text(st, sizeof st, sext, sg.nshard);
        list_text(dt, sizeof dt, dext, dg.nshard);
        td_reason_set(why,
                      "src shard %s doesn't match dst shard %s after "
                      "regrouping",
                      st, dt);
        return TD_EDECLINED;
    }
    pl->n = dg.nshard;
    int64_t v = 1;
    for (int i = 0; i < pl->n; i++) {
        pl->extent[i] = dext[i];
        pl->src_str[i] = sg.shard[i].stride;
        pl->dst_str[i] = dg.shard[i].stride;
        v *= dext[i];
    }
    if (v == 0 || v % WARP != 0) {
        td_reason_set(why, "volume %" PRId64 " not divisible by warp size 32",
                      v);
        return TD_EDECLINED;
    }
    pl->p = v / WARP;
    if (!td__lay_is_pow2(pl->p) || pl->p > WARP) {
        td_reason_set(why,
                      "per-thread count %" PRId64
                      " must be power of 2 in [1, 32]",
                      pl->p);
        return TD_EDECLINED;
    }
    if (!td__permute_bijection(pl->extent, pl->src_str, pl->n)) {
        td_reason_set(why,
                      "src layout (regrouped) is not a bijection on the "
                      "slice");
        return TD_EDECLINED;
    }
    if (!td__permute_bijection(pl->extent, pl->dst_str, pl->n)) {
        td_reason_set(why, "dst layout is not a bijection on the slice");
        return TD_EDECLINED;
    }
    pl->bytes = bytes;
    pl->k = td__permute_choose_xor_k(pl->extent, pl->src_str, pl->dst_str,
                                     pl->n, bytes, pl->p);
    if (pl->k < 0) {
        int log2p = 0;
        while (((int64_t)1 << (log2p + 1)) <= pl->p)
            log2p++;
        td_reason_set(why,
                      "no XOR-bits k \xe2\x88\x88 [0, log2(P)=%d] makes both "
                      "phases bank-free",
                      log2p);
        return TD_EDECLINED;
    }
    pl->direct = (bytes == 4 || bytes == 8) && td__copy_is_shared(sb) &&
                 td__copy_is_shared(db);
    pl->src_off = sg.offset[TD_AXIS_M];
    pl->dst_off = dg.offset[TD_AXIS_M];
    return 0;
}

/* The region's logical indices of flat index `flat` (row-major over its
 * non-unit extents) plus its start: upstream's _project, which folds the
 * shard index back onto the buffer's dims by dst's group separators,
 * amounts to this as the groups follow the dims in order. */
static void region_index(td_ir *ir, const td_region *r, td_expr *flat,
                         td_expr **idx)
{
    int64_t inner = 1;
    for (int d = r->ndim - 1; d >= 0; d--) {
        idx[d] = td__region_start_expr(ir, r, d, 0);
        if (r->extent[d] == 1)
            continue;
        td_expr *q = inner == 1 ? flat : td_div(ir, flat, td_int(ir, inner));
        bool outermost = true;
        for (int o = 0; o < d; o++)
            outermost = outermost && r->extent[o] == 1;
        if (!outermost)
            q = td_mod(ir, q, td_int(ir, r->extent[d]));
        idx[d] = td_add(ir, idx[d], q);
        inner *= r->extent[d];
    }
}

/* The direct path's storage offset of flat index `flat`: its shard
 * index (row-major over the shard extents) dotted with the layout's
 * strides, plus the slice's offset (upstream: ptr_to(start) plus
 * off * bytes, a T.ptr_byte_offset). */
static td_expr *shard_offset(td_ir *ir, const permute_plan *pl,
                             const int64_t *stride, int64_t base,
                             td_expr *flat)
{
    td_expr *off = base != 0 ? td_int(ir, base) : NULL;
    int64_t inner = 1;
    for (int i = pl->n - 1; i >= 0; i--) {
        if (pl->extent[i] != 1 && stride[i] != 0) {
            td_expr *q = inner == 1 ? flat
                                    : td_div(ir, flat, td_int(ir, inner));
            if (i > 0)
                q = td_mod(ir, q, td_int(ir, pl->extent[i]));
            if (stride[i] != 1)
                q = td_mul(ir, q, td_int(ir, stride[i]));
            off = off == NULL ? q : td_add(ir, off, q);
        }
        inner *= pl->extent[i];
    }
    return off != NULL ? off : td_int(ir, 0);
}

/* flat = lane + 32 * (r ^ ((lane >> shift) & mask)) */
static td_expr *flat_index(td_ir *ir, const permute_plan *pl, td_var *lane,
                           td_var *r)
{
    td_expr *j = td_var_ref(ir, r);
    if (pl->k > 0) {
        td_expr *hi = td_div(ir, td_var_ref(ir, lane),
                             td_int(ir, (int64_t)1 << (5 - pl->k)));
        td_expr *sel = td_binary(ir, TD_OP_BITAND, hi,
                                 td_int(ir, ((int64_t)1 << pl->k) - 1));
        j = td_binary(ir, TD_OP_XOR, j, sel);
    }
    return td_add(ir, td_var_ref(ir, lane), td_mul(ir, j, td_int(ir, WARP)));
}

static int permute_emit(const td_call *call, const td_op_desc *op,
                        const void *planp, td_ir *ir, void *user,
                        td_reason *why)
{
    (void)op;
    (void)user;
    const permute_plan *pl = planp;
    const td_region *sr = src_region(call), *dr = &call->dst;
    td_ir_buf *db = td__copy_declare(call, dr->buffer, ir, why);
    if (db == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_ir_buf *sb = sr->buffer == dr->buffer
                        ? db
                        : td__copy_declare(call, sr->buffer, ir, why);
    if (sb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_dtype dt = call->buffers[sr->buffer].dtype;
    /* The direct path moves bits: 32-bit containers, one or two each. */
    int lanes = pl->bytes / 4;
    td_ir_buf *regs = pl->direct ? td_ir_scratch(ir, "regs", TD_U32,
                                                 pl->p * lanes)
                                 : td_ir_scratch(ir, "regs", dt, pl->p);
    td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    td_var *lane = td_ir_let(ir, "lane_id", TD_I32,
                             td_mod(ir, tx, td_int(ir, WARP)));
    for (int phase = 0; phase < 2; phase++) {
        const td_region *r = phase == 0 ? sr : dr;
        const td_ir_buf *mem = phase == 0 ? sb : db;
        td_var *rv = td_ir_for(ir, "r", td_int(ir, pl->p), TD_LOOP_UNROLL);
        td_expr *idx[TD_MAX_RANK];
        td_expr *flat = flat_index(ir, pl, lane, rv);
        if (pl->direct) {
            td_expr *off =
                phase == 0
                    ? shard_offset(ir, pl, pl->src_str, pl->src_off, flat)
                    : shard_offset(ir, pl, pl->dst_str, pl->dst_off, flat);
            td_ptx_access a = {
                .mem = mem, .offset = off, .bits = 32,
                .lanes = lanes, .regs = regs,
                .word = td_mul(ir, td_var_ref(ir, rv), td_int(ir, lanes)),
                .untyped = true,
            };
            if (phase == 0)
                td_ir_ptx_ld(ir, &a);
            else
                td_ir_ptx_st(ir, &a);
        } else {
            region_index(ir, r, flat, idx);
            if (phase == 0)
                td_ir_store1(ir, regs, td_var_ref(ir, rv),
                             td_load(ir, mem, r->ndim, idx));
            else
                td_ir_store(ir, mem, r->ndim, idx,
                            td_load1(ir, regs, td_var_ref(ir, rv)));
        }
        td_ir_end_for(ir);
        td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCWARP, TD_I32, 0, NULL));
    }
    int rc = td_ir_status(ir);
    if (rc == 0)
        td_reason_set(why,
                      "P=%" PRId64 " per lane, XOR bits k=%d (shift %d, mask "
                      "%d)%s",
                      pl->p, pl->k, 5 - pl->k, (1 << pl->k) - 1,
                      pl->direct ? "; shared ld/st of 32-bit containers" : "");
    return rc;
}

const td_impl_desc td__variant_permute_warp_xor_swizzle = {
    .name = "warp_xor_swizzle",
    .emit = permute_emit,
    .plan = permute_plan_fn,
    .plan_size = sizeof(permute_plan),
};
