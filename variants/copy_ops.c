/*
 * The copy ops (upstream tirx.tile.copy and tirx.tile.copy_async, whose
 * front ends check the same operands): their descriptors, the operand check
 * (upstream's front end, run by the registry before any variant through
 * td_op_desc.check) and the checks and buffer declarations the copy
 * variants share (copy.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "common.h"
#include "copy.h"
#include "layout.h"

static bool copy_check(const td_call *call, const td_op_desc *op,
                       td_pos *where, td_reason *why);

const td_op_desc td__copy_ops[] = {
    {.name = "copy", .kind = TD_OP_KIND_COPY, .check = copy_check},
    {.name = "copy_async", .kind = TD_OP_KIND_COPY, .check = copy_check},
};
const size_t td__copy_ops_count = sizeof td__copy_ops / sizeof *td__copy_ops;

/* ---- operands ------------------------------------------------------------ */

const td_region *td__copy_src_region(const td_call *call)
{
    if (call->nsrcs >= 1 && call->srcs[0].kind == TD_OPERAND_REGION)
        return &call->srcs[0].region;
    return &call->src;
}

const td_buffer *td__copy_src(const td_call *call)
{
    return &call->buffers[td__copy_src_region(call)->buffer];
}

const td_buffer *td__copy_dst(const td_call *call)
{
    return &call->buffers[call->dst.buffer];
}

int td__copy_squeeze(const td_region *r, int64_t *ext, int *dims)
{
    int n = 0;
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++) {
        if (r->extent[d] == 1)
            continue;
        ext[n] = r->extent[d];
        if (dims != NULL)
            dims[n] = d;
        n++;
    }
    return n;
}

/* "['4', '8']": the extents as TVM's front end prints them. */
static void shape_text(char *buf, size_t cap, const int64_t *ext, int n)
{
    size_t len = 0;
    int k = snprintf(buf, cap, "[");
    len = k > 0 ? (size_t)k : 0;
    for (int i = 0; i < n && len < cap; i++) {
        k = snprintf(buf + len, cap - len, "%s'%" PRId64 "'", i ? ", " : "",
                     ext[i]);
        if (k < 0)
            return;
        len += (size_t)k;
    }
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
}

/* Upstream's front end (tirx.py, copy and copy_async): one source region,
 * nothing else, and regions of identical squeezed shape.  The config keys
 * are each variant's business (copy_async's variants read different
 * ones). */
static bool copy_check(const td_call *call, const td_op_desc *op,
                       td_pos *where, td_reason *why)
{
    if (!td__one_region_source(call, where, why))
        return false;
    if (!(call->naxes == 1 && call->axes[0] == -1)) {
        td_reason_set(why, "takes no axes (a copy moves every element of "
                           "its region)");
        return false;
    }
    if (call->accum) {
        td_reason_set(why, "takes no accum (a copy overwrites its "
                           "destination)");
        return false;
    }
    int64_t de[TD_MAX_RANK], se[TD_MAX_RANK];
    int dn = td__copy_squeeze(&call->dst, de, NULL);
    int sn = td__copy_squeeze(&call->srcs[0].region, se, NULL);
    bool same = dn == sn;
    for (int i = 0; same && i < dn; i++)
        same = de[i] == se[i];
    if (!same) {
        char dt[200], st[200];
        shape_text(dt, sizeof dt, de, dn);
        shape_text(st, sizeof st, se, sn);
        if (call->pos_srcs.line > 0)
            *where = call->pos_srcs;
        td_reason_set(why,
                      "%s: dst region shape %s != src region shape %s; "
                      "copy operands must cover identical regions - reshape "
                      "via buffer views (unflatten/select/narrow/...) "
                      "instead",
                      op->name, dt, st);
        return false;
    }
    return true;
}

/* ---- shared checks ------------------------------------------------------- */

bool td__copy_valid(const td_call *call, td_reason *why)
{
    if (call->nsrcs != 1 || call->srcs[0].kind != TD_OPERAND_REGION) {
        td_reason_set(why, "validate_copy_op failed");
        return false;
    }
    const td_buffer *s = td__copy_src(call), *d = td__copy_dst(call);
    /* A tmem buffer whose layout is none of TVM's datapaths D, F and B
     * (lanes replicated or scattered, which only smem->tmem plans) has no
     * rows the copies that take this check could read or write. */
    const td_buffer *t = strcmp(s->scope, "tmem") == 0   ? s
                         : strcmp(d->scope, "tmem") == 0 ? d
                                                         : NULL;
    if (t != NULL && t->datapath == TD_TMEM_OTHER) {
        td_reason_set(why,
                      "validate_copy_op failed: tmem buffer %.*s has a "
                      "layout that is none of the datapaths D, F and B",
                      (int)strnlen(t->name, TD_NAME_MAX), t->name);
        return false;
    }
    int64_t de[TD_MAX_RANK], se[TD_MAX_RANK];
    int dn = td__copy_squeeze(&call->dst, de, NULL);
    int sn = td__copy_squeeze(td__copy_src_region(call), se, NULL);
    bool ok = s->dtype == d->dtype && dn == sn;
    for (int i = 0; ok && i < dn; i++)
        ok = de[i] == se[i];
    if (!ok)
        td_reason_set(why, "validate_copy_op failed");
    return ok;
}

bool td__copy_is_shared(const td_buffer *b)
{
    return strncmp(b->scope, "shared", 6) == 0;
}

bool td__copy_is_local(const td_buffer *b)
{
    return strncmp(b->scope, "local", TD_NAME_MAX) == 0;
}

bool td__copy_is_global(const td_buffer *b)
{
    return strncmp(b->scope, "global", TD_NAME_MAX) == 0;
}

bool td__copy_scope_match(const char *pattern, const char *scope)
{
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*')
        return strncmp(pattern, scope, n - 1) == 0;
    return strncmp(pattern, scope, TD_NAME_MAX) == 0;
}

bool td__copy_thread_axis(const td_buffer *b, const char **axis)
{
    if (!b->has_layout)
        return false;
    const td_layout *l = &b->layout;
    for (int i = 0; i < l->nshard; i++)
        if (td_axis_is_thread(l->shard[i].axis) && l->shard[i].extent > 1) {
            *axis = td_axis_name(l->shard[i].axis);
            return true;
        }
    for (int i = 0; i < l->nrep; i++)
        if (td_axis_is_thread(l->rep[i].axis) && l->rep[i].extent > 1) {
            *axis = td_axis_name(l->rep[i].axis);
            return true;
        }
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (td_axis_is_thread((td_axis)a) && l->offset[a] != 0) {
            *axis = td_axis_name((td_axis)a);
            return true;
        }
    return false;
}

bool td__copy_global_ok(const td_call *call, td_reason *why)
{
    const td_buffer *ops[2] = {td__copy_dst(call), td__copy_src(call)};
    for (int i = 0; i < 2; i++) {
        const td_buffer *b = ops[i];
        const char *axis;
        if (!td__copy_is_global(b))
            continue;
        if ((b->has_layout && b->layout.swizzle) ||
            td__copy_thread_axis(b, &axis)) {
            td_reason_set(why,
                          "global operand %.*s: a swizzled/thread layout is "
                          "not supported in global memory",
                          (int)strnlen(b->name, TD_NAME_MAX), b->name);
            return false;
        }
    }
    return true;
}

bool td__copy_phys(const td_buffer *b, int64_t flat, int64_t *off)
{
    if (!b->has_layout) {
        *off = flat;
        return true;
    }
    const td_layout *l = &b->layout;
    const char *axis;
    if (td__copy_thread_axis(b, &axis) || l->nrep > 0)
        return false;
    int64_t size = 1, elems = 1;
    for (int k = 0; k < l->nshard; k++)
        size *= l->shard[k].extent;
    for (int d = 0; d < b->ndim; d++)
        elems *= b->shape[d];
    if (size != elems && l->swizzle && l->nshard == 1 &&
        l->shard[0].stride == 1 && l->offset[TD_AXIS_M] == 0)
        return td__lay_swizzle(l, flat, off) == 0; /* a bare swizzle */
    int64_t c[TD_AXIS_COUNT];
    if (size != elems || td__lay_map(l, flat, c) != 0)
        return false;
    *off = c[TD_AXIS_M];
    return true;
}

int64_t td__copy_elem(const td_call *call, const td_region *r, int64_t k)
{
    const td_buffer *b = &call->buffers[r->buffer];
    int64_t flat = 0;
    int64_t rest = k;
    int64_t coord[TD_MAX_RANK];
    for (int d = r->ndim - 1; d >= 0; d--) {
        coord[d] = r->start[d] + rest % r->extent[d];
        rest /= r->extent[d];
    }
    for (int d = 0; d < r->ndim; d++)
        flat = flat * b->shape[d] + coord[d];
    return flat;
}

/* ---- declarations -------------------------------------------------------- */

static bool row_major(const int64_t *ext, const int64_t *str, int n,
                      int64_t off)
{
    int64_t s = 1;
    for (int k = n - 1; k >= 0; k--) {
        if (ext[k] > 1 && str[k] != s)
            return false;
        s *= ext[k];
    }
    return off == 0;
}

td_ir_buf *td__copy_declare(const td_call *call, int bi, td_ir *ir,
                            td_reason *why)
{
    const td_buffer *b = &call->buffers[bi];
    int nm = (int)strnlen(b->name, TD_NAME_MAX);
    td_ir_buf *out =
        td_ir_buffer(ir, b->name, b->dtype, b->scope, b->ndim, b->shape);
    if (out == NULL || !b->has_layout)
        return out;
    const td_layout *l = &b->layout;
    const char *axis;
    if (td__copy_thread_axis(b, &axis)) {
        td_reason_set(why, "the layout of %.*s has the thread axis %s",
                      nm, b->name, axis);
        return NULL;
    }
    if (l->nrep > 0) {
        td_reason_set(why, "the layout of %.*s has replica iters", nm,
                      b->name);
        return NULL;
    }
    int64_t size = 1, elems = 1;
    for (int k = 0; k < l->nshard; k++)
        size *= l->shard[k].extent;
    for (int d = 0; d < b->ndim; d++)
        elems *= b->shape[d];
    int64_t ext[TD_MAX_LAYOUT_ITERS], str[TD_MAX_LAYOUT_ITERS];
    int seps[TD_MAX_RANK + 1], n = 0;
    bool plain = false;
    if (size != elems && l->swizzle && l->nshard == 1 &&
        l->shard[0].stride == 1 && l->offset[TD_AXIS_M] == 0) {
        /* A bare swizzle over a tile of another size (TVM's
         * ComposeLayout(.., TileLayout(S[512:1]))): row-major storage. */
        plain = true;
    } else {
        td_layout g;
        if (td__lay_group(l, b->shape, b->ndim, &g, seps) != 0) {
            td_reason_set(why, "the layout of %.*s (%s) does not fit its "
                               "shape",
                          nm, b->name, b->layout_text);
            return NULL;
        }
        n = g.nshard;
        for (int k = 0; k < n; k++) {
            ext[k] = g.shard[k].extent;
            str[k] = g.shard[k].stride;
            if (str[k] < 0) {
                td_reason_set(why, "the layout of %.*s has a negative stride",
                              nm, b->name);
                return NULL;
            }
        }
        plain = row_major(ext, str, n, l->offset[TD_AXIS_M]);
    }
    if (!plain && td_ir_buffer_layout(ir, out, n, ext, str, seps,
                                      l->offset[TD_AXIS_M]) != 0) {
        td_reason_set(why, "the layout of %.*s cannot be addressed", nm,
                      b->name);
        return NULL;
    }
    if (l->swizzle)
        td_ir_buffer_swizzle(ir, out, l->swizzle_bits[0], l->swizzle_bits[1],
                             l->swizzle_bits[2]);
    return out;
}

bool td__copy_tmem_arch(const td_call *call)
{
    return td__tmem_arch(call);
}
