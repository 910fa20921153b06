/*
 * The call file's sections other than its operands: `buffers` (scope,
 * dtype, shape and the optional layout, checked to cover the buffer),
 * `launch` (extents or symbols per launch tag), `axes` (the reduce axes,
 * checked against the source's rank), `scalars` (the integer values of the
 * caller that region starts and config expressions may use, with their
 * ranges) and `config` (integers, booleans, strings and, for the
 * expression keys, expressions and buffer elements, by key).  call_load.c calls each once the key was found.
 */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "call_reader.h"
#include "layout.h"

/* The largest element count of one buffer (2^40): larger buffers cannot be
 * staged by any kernel and products beyond it could overflow later. */
#define CALL_MAX_ELEMS TD_MAX_ELEMENTS

/* ---- buffers ------------------------------------------------------------ */

static const char *const g_storage_scopes[] = {"local", "shared", "shared.dyn",
                                               "global", "tmem"};

/* Tensor memory (sm_100): 128 lanes of 512 columns of 32-bit cells. */
#define TMEM_LANES 128
#define TMEM_COLUMNS 512

static int cl_layout(td__cl *c, const td_ynode *n, td_buffer *b,
                     int64_t elems);

/* Whether a layout names a tensor-memory axis (TLane, TCol). */
static bool lay_names_tmem(const td_layout *l)
{
    for (int i = 0; i < l->nshard; i++)
        if (l->shard[i].axis == TD_AXIS_TLANE ||
            l->shard[i].axis == TD_AXIS_TCOL)
            return true;
    for (int i = 0; i < l->nrep; i++)
        if (l->rep[i].axis == TD_AXIS_TLANE || l->rep[i].axis == TD_AXIS_TCOL)
            return true;
    return l->offset[TD_AXIS_TLANE] != 0 || l->offset[TD_AXIS_TCOL] != 0;
}

/* The largest coordinate a layout reaches on `axis` (its iters' strides
 * and the offset are checked non-negative first). */
static int64_t lay_reach(const td_layout *l, td_axis axis, bool *neg)
{
    int64_t hi = l->offset[axis];
    *neg |= hi < 0;
    for (int i = 0; i < l->nshard + l->nrep; i++) {
        const td_iter *it = i < l->nshard ? &l->shard[i]
                                          : &l->rep[i - l->nshard];
        if (it->axis != axis)
            continue;
        *neg |= it->stride < 0;
        hi += (it->extent - 1) * it->stride;
    }
    return hi;
}

/* Whether layout l maps what `want` (a layout's text) maps: both
 * canonicalized, then structurally equal. */
static bool lay_is(const td_layout *l, const char *want)
{
    td_layout w, cw, cl;
    td_diag d;
    td_diag_clear(&d);
    return td_layout_parse(want, &w, &d) == 0 &&
           td__lay_canonicalize(&w, &cw) == 0 &&
           td__lay_canonicalize(l, &cl) == 0 && td__lay_same(&cw, &cl);
}

/*
 * The datapath a tmem buffer's layout is: TVM's tmem_datapath_layout of
 * the buffer's (rows, columns), compared as TVM compares layouts
 * (structurally): D `S[(128, N) : (1@TLane, 1@TCol)]`, F `S[(4, 16, N) :
 * (32@TLane, 1@TLane, 1@TCol)]` (`+ 16@TLane` for the upper sub-slab), B
 * `S[(64, 2, N/2) : (1@TLane, 64@TLane, 1@TCol)]`; TD_TMEM_OTHER when it is
 * none of them (the lane replicas tcgen05.cp writes, say).
 */
static td_tmem_datapath tmem_datapath(const td_buffer *b, int *sub_slab)
{
    char want[160];
    *sub_slab = 0;
    if (b->ndim != 2)
        return TD_TMEM_OTHER;
    long long r = (long long)b->shape[0], n = (long long)b->shape[1];
    if (r == TMEM_LANES) {
        snprintf(want, sizeof want, "S[(128, %lld) : (1@TLane, 1@TCol)]", n);
        return lay_is(&b->layout, want) ? TD_TMEM_D : TD_TMEM_OTHER;
    }
    if (r != 64)
        return TD_TMEM_OTHER;
    if (n % 2 == 0) {
        snprintf(want, sizeof want,
                 "S[(64, 2, %lld) : (1@TLane, 64@TLane, 1@TCol)]", n / 2);
        if (lay_is(&b->layout, want))
            return TD_TMEM_B;
    }
    snprintf(want, sizeof want,
             "S[(4, 16, %lld) : (32@TLane, 1@TLane, 1@TCol)]", n);
    if (lay_is(&b->layout, want))
        return TD_TMEM_F;
    strncat(want, " + 16@TLane", sizeof want - strlen(want) - 1);
    if (!lay_is(&b->layout, want))
        return TD_TMEM_OTHER;
    *sub_slab = 1;
    return TD_TMEM_F;
}

/*
 * A tmem buffer without a layout is lanes x columns, as TVM's datapath
 * layout D reads it: row r is lane r, and the elements of a row pack into
 * the lane's 32-bit cells (two 16-bit or four 8-bit elements a cell).
 * With a layout (TVM's T.decl_buffer(..., scope="tmem", layout=...)), the
 * layout maps the buffer's logical shape to TLane and TCol (the column in
 * elements), and may replicate lanes (R[4 : 32@TLane], the copies a
 * multicast tcgen05.cp writes); every lane it reaches is below 128 and
 * every column in a lane's 512 cells.  The layout is then classified as
 * TVM's datapaths (td_buffer.datapath, .sub_slab): D of a (128, C) buffer
 * is the buffer without one; F and B (64 rows) keep their layout; any other
 * is TD_TMEM_OTHER, which only smem->tmem takes (td__copy_valid refuses it
 * for the copies that read tensor memory as a datapath).
 */
static int cl_tmem(td__cl *c, const td_ynode *dtype, const td_ynode *shape,
                   const td_ynode *layout, td_buffer *b)
{
    int bits = td_dtype_bits(b->dtype);
    if (bits > 32 || 32 % bits != 0)
        return cl_err(c, TD_ESCHEMA, dtype,
                      "tmem buffer '%s': tensor memory holds 32-bit cells, "
                      "%s (%d bits) does not pack into them",
                      b->name, td_dtype_name(b->dtype), bits);
    int per = 32 / bits;
    b->datapath = TD_TMEM_D;
    b->sub_slab = 0;
    if (layout != NULL) {
        int64_t elems = 1;
        for (int d = 0; d < b->ndim; d++)
            elems *= b->shape[d];
        int rc = cl_layout(c, layout, b, elems);
        if (rc)
            return rc;
        const td_layout *l = &b->layout;
        bool other = l->nshard == 0;
        for (int i = 0; i < l->nshard; i++)
            other |= l->shard[i].axis != TD_AXIS_TLANE &&
                     l->shard[i].axis != TD_AXIS_TCOL;
        for (int i = 0; i < l->nrep; i++)
            other |= l->rep[i].axis != TD_AXIS_TLANE;
        for (int a = 0; a < TD_AXIS_COUNT; a++)
            other |= a != TD_AXIS_TLANE && a != TD_AXIS_TCOL &&
                     l->offset[a] != 0;
        if (other)
            return cl_err(c, TD_ESCHEMA, layout,
                          "tmem buffer '%s': its layout maps to TLane and "
                          "TCol only (S[(128, N) : (1@TLane, 1@TCol)], "
                          "replicas on TLane: + R[4 : 32@TLane])",
                          b->name);
        bool neg = false;
        int64_t lanes = lay_reach(l, TD_AXIS_TLANE, &neg) + 1;
        int64_t cols = lay_reach(l, TD_AXIS_TCOL, &neg) + 1;
        if (neg)
            return cl_err(c, TD_ESCHEMA, layout,
                          "tmem buffer '%s': its layout has a negative "
                          "stride or offset",
                          b->name);
        if (lanes > TMEM_LANES)
            return cl_err(c, TD_ESCHEMA, layout,
                          "tmem buffer '%s': its layout reaches lane %lld; "
                          "tensor memory has %d lanes",
                          b->name, (long long)(lanes - 1), TMEM_LANES);
        if ((cols + per - 1) / per > TMEM_COLUMNS)
            return cl_err(c, TD_ESCHEMA, layout,
                          "tmem buffer '%s': its layout needs %lld 32-bit "
                          "columns; a lane of tensor memory has %d",
                          b->name, (long long)((cols + per - 1) / per),
                          TMEM_COLUMNS);
        b->datapath = tmem_datapath(b, &b->sub_slab);
        /* A datapath's rows pack into whole cells of their lanes. */
        if (b->datapath != TD_TMEM_OTHER && b->shape[1] % per != 0)
            return cl_err(c, TD_ESCHEMA, shape->kids[1],
                          "tmem buffer '%s': %lld %s columns do not fill "
                          "whole 32-bit cells (%d to a cell)",
                          b->name, (long long)b->shape[1],
                          td_dtype_name(b->dtype), per);
        /* Datapath D of a (128, C) buffer: the buffer without a layout. */
        if (b->datapath == TD_TMEM_D) {
            b->has_layout = false;
            b->layout_text[0] = '\0';
        }
        return 0;
    }
    if (b->ndim != 2)
        return cl_err(c, TD_ESCHEMA, shape,
                      "tmem buffer '%s' must be lanes x columns (2 extents) "
                      "or declare a layout over TLane and TCol, got %d "
                      "extents",
                      b->name, b->ndim);
    if (b->shape[0] != TMEM_LANES)
        return cl_err(c, TD_ESCHEMA, shape->kids[0],
                      "tmem buffer '%s' has %lld rows; without a layout "
                      "tiledispatch reads tensor memory as TVM's datapath "
                      "D, %d lanes (64 rows take the layout of datapath F "
                      "or B)",
                      b->name, (long long)b->shape[0], TMEM_LANES);
    if (b->shape[1] % per != 0)
        return cl_err(c, TD_ESCHEMA, shape->kids[1],
                      "tmem buffer '%s': %lld %s columns do not fill whole "
                      "32-bit cells (%d to a cell)",
                      b->name, (long long)b->shape[1],
                      td_dtype_name(b->dtype), per);
    if (b->shape[1] / per > TMEM_COLUMNS)
        return cl_err(c, TD_ESCHEMA, shape->kids[1],
                      "tmem buffer '%s' needs %lld 32-bit columns; a lane "
                      "of tensor memory has %d",
                      b->name, (long long)(b->shape[1] / per), TMEM_COLUMNS);
    return 0;
}

static int cl_shape(td__cl *c, const td_ynode *n, td_buffer *b)
{
    if (n->kind != TD_YSEQ || n->n == 0)
        return cl_err(c, TD_ESCHEMA, n,
                      "shape must be a non-empty list of positive integers");
    if (n->n > TD_MAX_RANK)
        return cl_err(c, TD_ELIMIT, n, "rank %zu exceeds the limit of %d",
                      n->n, TD_MAX_RANK);
    int64_t prod = 1;
    for (size_t i = 0; i < n->n; i++) {
        const td_ynode *e = n->kids[i];
        int64_t v = 0;
        bool ovf;
        td_ytype t = td__yclass(e, &v, NULL, &ovf);
        if (t != TD_YT_INT)
            return cl_err(c, TD_ESCHEMA, e,
                          "shape extent must be a positive integer, not %s",
                          td__ytype_name(t));
        if (ovf || v > TD_MAX_EXTENT)
            return cl_err(c, TD_ELIMIT, e,
                          "shape extent %s exceeds the limit of %lld", e->str,
                          (long long)TD_MAX_EXTENT);
        if (v <= 0)
            return cl_err(c, TD_ESCHEMA, e,
                          "shape extent must be positive, got %lld",
                          (long long)v);
        if (prod > CALL_MAX_ELEMS / v)
            return cl_err(c, TD_ELIMIT, e,
                          "buffer '%s' has more than 2^40 elements", b->name);
        prod *= v;
        b->shape[i] = v;
    }
    b->ndim = (int)n->n;
    return 0;
}

static int cl_layout(td__cl *c, const td_ynode *n, td_buffer *b,
                     int64_t elems)
{
    int rc = cl_string(c, n, "layout", b->layout_text, sizeof b->layout_text);
    if (rc)
        return rc;
    td_diag ld;
    td_diag_clear(&ld);
    rc = td_layout_parse(b->layout_text, &b->layout, &ld);
    if (rc)
        return cl_err_at(c, rc, n->line, td__ycol_in(n, (size_t)(ld.col - 1)),
                         "%s", ld.msg);
    b->has_layout = true;
    if (strcmp(b->scope, "tmem") != 0 && lay_names_tmem(&b->layout))
        return cl_err(c, TD_ESCHEMA, n,
                      "TLane and TCol are the axes of tensor memory, but "
                      "'%s' is %s",
                      b->name, b->scope);
    /* A swizzle permutes shared-memory offsets (TVM's ComposeLayout); on a
     * register or global buffer it would mean nothing we lower. */
    if (b->layout.swizzle && strncmp(b->scope, "shared", 6) != 0)
        return cl_err(c, TD_ESCHEMA, n,
                      "a swizzled layout needs a shared buffer, but '%s' "
                      "is %s",
                      b->name, b->scope);
    if (b->layout.nshard == 0)
        return 0; /* A bare swizzle covers whatever it is applied to. */
    int64_t cover = 1;
    bool big = false;
    for (int i = 0; i < b->layout.nshard; i++) {
        int64_t e = b->layout.shard[i].extent;
        if (cover > CALL_MAX_ELEMS / e) {
            big = true;
            break;
        }
        cover *= e;
    }
    if (big)
        return cl_err(c, TD_ESCHEMA, n,
                      "layout covers more than 2^40 elements but buffer '%s' "
                      "has %lld",
                      b->name, (long long)elems);
    if (cover != elems)
        return cl_err(c, TD_ESCHEMA, n,
                      "layout covers %lld elements but buffer '%s' has %lld",
                      (long long)cover, b->name, (long long)elems);
    return 0;
}

static int cl_buffer(td__cl *c, const td_ynode *key, const td_ynode *val,
                     td_buffer *b)
{
    if (!td__is_ident(key->str, false))
        return cl_err(c, TD_ESCHEMA, key,
                      "buffer name '%.64s' is not an identifier", key->str);
    if (key->len >= TD_NAME_MAX)
        return cl_err(c, TD_ELIMIT, key,
                      "buffer name '%.64s...' is longer than %d bytes",
                      key->str, TD_NAME_MAX - 1);
    memcpy(b->name, key->str, key->len + 1);
    if (val->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, val, "buffer '%s' must be a mapping, not %s",
                      b->name, td__ytype_name(yv_kind(val)));

    static const char *const keys[] = {"scope", "dtype", "shape", "layout"};
    const td_ynode *slot[4] = {NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < val->n / 2; i++) {
        const td_ynode *k = val->kids[2 * i];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        int which = -1;
        for (int j = 0; j < 4; j++)
            if (strcmp(k->str, keys[j]) == 0)
                which = j;
        if (which < 0) {
            char hint[128];
            return cl_err(c, TD_ESCHEMA, k,
                          "unknown key '%.64s' in buffer '%s'%s", k->str,
                          b->name,
                          td__yhint(hint, sizeof hint, k->str, keys, 4));
        }
        if (slot[which] != NULL)
            return cl_err(c, TD_ESCHEMA, k, "duplicate key '%s'", keys[which]);
        slot[which] = val->kids[2 * i + 1];
    }
    for (int j = 0; j < 3; j++)
        if (slot[j] == NULL)
            return cl_err(c, TD_ESCHEMA, val, "buffer '%s' is missing '%s'",
                          b->name, keys[j]);

    int rc = cl_string(c, slot[0], "scope", b->scope, sizeof b->scope);
    if (rc)
        return rc;
    bool known = false;
    for (size_t j = 0; j < sizeof g_storage_scopes / sizeof *g_storage_scopes;
         j++)
        if (strcmp(b->scope, g_storage_scopes[j]) == 0)
            known = true;
    char hint[160];
    if (!known)
        return cl_err(c, TD_ESCHEMA, slot[0], "unknown storage scope '%s'%s",
                      b->scope,
                      td__yhint(hint, sizeof hint, b->scope, g_storage_scopes,
                                sizeof g_storage_scopes /
                                    sizeof *g_storage_scopes));

    char dt[TD_NAME_MAX];
    rc = cl_string(c, slot[1], "dtype", dt, sizeof dt);
    if (rc)
        return rc;
    if (td_dtype_parse(dt, &b->dtype) != 0)
        return cl_err(c, TD_ESCHEMA, slot[1], "unknown dtype '%s'%s", dt,
                      td__dtype_hint(hint, sizeof hint, dt));
    c->dtype_pos[b - c->call->buffers] = (td_pos){slot[1]->line, slot[1]->col};

    rc = cl_shape(c, slot[2], b);
    if (rc)
        return rc;
    if (strcmp(b->scope, "tmem") == 0)
        return cl_tmem(c, slot[1], slot[2], slot[3], b);
    if (slot[3] != NULL) {
        int64_t elems = 1;
        for (int d = 0; d < b->ndim; d++)
            elems *= b->shape[d];
        rc = cl_layout(c, slot[3], b, elems);
        if (rc)
            return rc;
    }
    return 0;
}

int td__cl_buffers(td__cl *c, const td_ynode *n)
{
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'buffers' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    if (n->n == 0)
        return cl_err(c, TD_ESCHEMA, n,
                      "'buffers' must declare at least one buffer");
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        if (i >= TD_MAX_BUFFERS)
            return cl_err(c, TD_ELIMIT, k, "too many buffers (max %d)",
                          TD_MAX_BUFFERS);
        rc = td__ydup(&c->doc, n, i);
        if (rc)
            return rc;
        rc = cl_buffer(c, k, n->kids[2 * i + 1], &c->call->buffers[i]);
        if (rc)
            return rc;
        c->call->nbuffers = (int)i + 1;
    }
    return 0;
}

/* ---- the other sections ------------------------------------------------- */

/* `cluster: [x, y, z]` (1 to 3 positive extents, the rest 1). */
static int cl_cluster(td__cl *c, const td_ynode *v)
{
    if (v->kind != TD_YSEQ || v->n < 1 || v->n > 3)
        return cl_err(c, TD_ESCHEMA, v,
                      "launch cluster must be a list of 1 to 3 positive "
                      "extents (x, y, z), e.g. [2, 1, 1]");
    int64_t total = 1;
    for (int d = 0; d < 3; d++) {
        int64_t x = 1;
        if ((size_t)d < v->n) {
            const td_ynode *e = v->kids[d];
            bool ovf;
            if (td__yclass(e, &x, NULL, &ovf) != TD_YT_INT || x <= 0)
                return cl_err(c, TD_ESCHEMA, e,
                              "launch cluster extent must be a positive "
                              "integer, got '%.32s'",
                              e->str != NULL ? e->str : "?");
            if (ovf || x > TD_MAX_CLUSTER)
                return cl_err(c, TD_ELIMIT, e,
                              "launch cluster extent %.32s exceeds the limit "
                              "of %d",
                              e->str != NULL ? e->str : "?", TD_MAX_CLUSTER);
        }
        c->call->cluster[d] = (int)x;
        total *= x;
    }
    if (total > TD_MAX_CLUSTER)
        return cl_err(c, TD_ELIMIT, v,
                      "launch cluster of %lld CTAs exceeds the limit of %d "
                      "(the hardware's largest; 8 portable)",
                      (long long)total, TD_MAX_CLUSTER);
    return 0;
}

/* The grid must tile into clusters: blockIdx extents, where given, are
 * multiples of the cluster's. */
static int cl_cluster_grid(td__cl *c, const td_ynode *n)
{
    const td_call *call = c->call;
    if (call->cluster[0] == 0)
        return 0;
    for (int d = 0; d < 3; d++) {
        const td_launch_param *lp = &call->launch[TD_LAUNCH_BX + d];
        if (lp->present && !lp->symbolic &&
            lp->extent % call->cluster[d] != 0)
            return cl_err(c, TD_ESCHEMA, n,
                          "launch %s = %lld is not a multiple of the "
                          "cluster's %d (the grid is made of whole "
                          "clusters)",
                          td_launch_tag_name((td_launch_tag)(TD_LAUNCH_BX + d)),
                          (long long)lp->extent, call->cluster[d]);
    }
    return 0;
}

int td__cl_active(td__cl *c, const td_ynode *n)
{
    td_call *call = c->call;
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n,
                      "'active' must be a mapping of thread axes to [begin, "
                      "end), e.g. {laneid: [0, 16]}, not %s",
                      td__ytype_name(yv_kind(n)));
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
        int rc = td__ykey(&c->doc, k);
        if (rc || (rc = td__ydup(&c->doc, n, i)) != 0)
            return rc;
        td_axis ax;
        char hint[128];
        if (td_axis_parse(k->str, &ax) != 0)
            return cl_err(c, TD_ESCHEMA, k, "unknown axis '%.64s'%s", k->str,
                          td__axis_hint(hint, sizeof hint, k->str));
        if (!td_axis_is_thread(ax))
            return cl_err(c, TD_ESCHEMA, k,
                          "active: '%s' is not a thread axis", k->str);
        if (call->nactive >= TD_MAX_ACTIVE)
            return cl_err(c, TD_ELIMIT, k,
                          "active: more than %d axes", TD_MAX_ACTIVE);
        int64_t r[2] = {0, 0};
        bool ovf = false;
        if (v->kind != TD_YSEQ || v->n != 2 ||
            td__yclass(v->kids[0], &r[0], NULL, &ovf) != TD_YT_INT || ovf ||
            td__yclass(v->kids[1], &r[1], NULL, &ovf) != TD_YT_INT || ovf ||
            r[0] < 0 || r[1] <= r[0] || r[1] > INT32_MAX)
            return cl_err(c, TD_ESCHEMA, v,
                          "active %s must be [begin, end) as two integers, "
                          "0 <= begin < end, e.g. [0, 16]",
                          k->str);
        td_active_range *a = &call->active[call->nactive++];
        a->axis = ax;
        a->begin = r[0];
        a->end = r[1];
        a->pos.line = k->line;
        a->pos.col = k->col;
    }
    return 0;
}

int td__cl_launch(td__cl *c, const td_ynode *n)
{
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'launch' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        if (strcmp(k->str, "cluster") == 0) {
            if ((rc = td__ydup(&c->doc, n, i)) != 0 ||
                (rc = cl_cluster(c, v)) != 0)
                return rc;
            continue;
        }
        int tag = -1;
        for (int t = 0; t < TD_LAUNCH_COUNT; t++)
            if (strcmp(k->str, td_launch_tag_name((td_launch_tag)t)) == 0)
                tag = t;
        if (tag < 0) {
            char hint[128];
            return cl_err(c, TD_ESCHEMA, k, "unknown launch tag '%.64s'%s",
                          k->str,
                          td__launch_tag_hint(hint, sizeof hint, k->str));
        }
        rc = td__ydup(&c->doc, n, i);
        if (rc)
            return rc;
        td_launch_param *lp = &c->call->launch[tag];
        int64_t x = 0;
        bool ovf;
        td_ytype t = td__yclass(v, &x, NULL, &ovf);
        if (t == TD_YT_INT) {
            if (ovf || x > INT32_MAX)
                return cl_err(c, TD_ELIMIT, v,
                              "launch extent %s for %s exceeds the limit of %d",
                              v->str, k->str, INT32_MAX);
            if (x <= 0)
                return cl_err(c, TD_ESCHEMA, v,
                              "launch extent for %s must be positive, got %lld",
                              k->str, (long long)x);
            lp->extent = x;
        } else if (t == TD_YT_STR && td__is_ident(v->str, false)) {
            if (v->len >= TD_NAME_MAX)
                return cl_err(c, TD_ELIMIT, v,
                              "launch symbol is longer than %d bytes",
                              TD_NAME_MAX - 1);
            memcpy(lp->symbol, v->str, v->len + 1);
            lp->symbolic = true;
        } else {
            return cl_err(c, TD_ESCHEMA, v,
                          "launch extent for %s must be a positive integer or "
                          "a name, not %s",
                          k->str, td__ytype_name(t));
        }
        lp->present = true;
    }
    return cl_cluster_grid(c, n);
}

int td__cl_axes(td__cl *c, const td_ynode *n)
{
    td_call *call = c->call;
    const td_ynode *items[TD_MAX_AXES];
    size_t count;
    if (n->kind == TD_YSEQ) {
        if (n->n == 0)
            return cl_err(c, TD_ESCHEMA, n, "'axes' must not be empty");
        if (n->n > TD_MAX_AXES)
            return cl_err(c, TD_ELIMIT, n, "too many reduce axes (max %d)",
                          TD_MAX_AXES);
        count = n->n;
        for (size_t i = 0; i < count; i++)
            items[i] = n->kids[i];
    } else {
        count = 1;
        items[0] = n;
    }
    int ndim = call->src.ndim;
    bool seen[TD_MAX_RANK] = {false};
    for (size_t i = 0; i < count; i++) {
        const td_ynode *e = items[i];
        int64_t ax = 0;
        bool ovf;
        td_ytype t = td__yclass(e, &ax, NULL, &ovf);
        if (t != TD_YT_INT)
            return cl_err(c, TD_ESCHEMA, e,
                          "reduce axis must be an integer, not %s", td__ytype_name(t));
        if (ovf)
            return cl_err(c, TD_ESCHEMA, e,
                          "reduce axis %s out of range for ndim=%d", e->str,
                          ndim);
        int64_t a = ax < 0 ? ax + ndim : ax;
        if (a < 0 || a >= ndim)
            return cl_err(c, TD_ESCHEMA, e,
                          "reduce axis %lld out of range for ndim=%d",
                          (long long)ax, ndim);
        if (seen[a])
            return cl_err(c, TD_ESCHEMA, e, "duplicate reduce axis %lld",
                          (long long)a);
        seen[a] = true;
        call->axes[i] = (int)ax;
    }
    call->naxes = (int)count;
    return 0;
}

int td__cl_config(td__cl *c, const td_ynode *n)
{
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'config' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        if (i >= TD_MAX_CONFIG)
            return cl_err(c, TD_ELIMIT, k, "too many config entries (max %d)",
                          TD_MAX_CONFIG);
        rc = td__ydup(&c->doc, n, i);
        if (rc)
            return rc;
        if (!td__is_ident(k->str, false))
            return cl_err(c, TD_ESCHEMA, k,
                          "config key '%.64s' is not an identifier", k->str);
        if (k->len >= TD_NAME_MAX)
            return cl_err(c, TD_ELIMIT, k,
                          "config key is longer than %d bytes",
                          TD_NAME_MAX - 1);
        td_config_entry *ce = &c->call->config[i];
        memcpy(ce->key, k->str, k->len + 1);
        ce->pos = (td_pos){v->line, v->col};
        ce->key_pos = (td_pos){k->line, k->col};
        bool ovf;
        td_ytype t = td__yclass(v, &ce->i, &ce->b, &ovf);
        if (t == TD_YT_INT) {
            if (ovf)
                return cl_err(c, TD_ELIMIT, v,
                              "config value %.64s does not fit in 64 bits",
                              v->str);
            ce->kind = TD_VALUE_INT;
        } else if (t == TD_YT_BOOL) {
            ce->kind = TD_VALUE_BOOL;
        } else if (t == TD_YT_STR) {
            rc = cl_string(c, v, ce->key, ce->s, sizeof ce->s);
            if (rc)
                return rc;
            ce->kind = TD_VALUE_STRING;
            if (td__cl_expr_key(ce->key) && (rc = td__cl_expr(c, v, ce)) != 0)
                return rc;
        } else {
            return cl_err(c, TD_ESCHEMA, v,
                          "config value '%s' must be an integer, a boolean or "
                          "a string, not %s",
                          ce->key, td__ytype_name(t));
        }
        c->call->nconfig = (int)i + 1;
    }
    return 0;
}

/* ---- scalars ------------------------------------------------------------ */

/* One `NAME: {dtype: T, range: [LO, HI]}` entry (both keys optional). */
static int cl_scalar(td__cl *c, const td_ynode *k, const td_ynode *v,
                     td_scalar *s)
{
    static const char *const keys[] = {"dtype", "range"};
    const td_ynode *vals[2];
    if (!td__is_ident(k->str, false))
        return cl_err(c, TD_ESCHEMA, k, "scalar name '%.64s' is not an "
                                        "identifier", k->str);
    if (k->len >= TD_NAME_MAX)
        return cl_err(c, TD_ELIMIT, k, "scalar name is longer than %d bytes",
                      TD_NAME_MAX - 1);
    if (td__is_reserved_name(k->str))
        return cl_err(c, TD_ESCHEMA, k,
                      "scalar name '%s' is reserved (a keyword of CUDA C or "
                      "TIRx)", k->str);
    td_axis ax;
    if (td_axis_parse(k->str, &ax) == 0 && td_axis_is_thread(ax))
        return cl_err(c, TD_ESCHEMA, k,
                      "scalar name '%s' is a thread, block or cluster id",
                      k->str);
    for (int i = 0; i < c->call->nbuffers; i++)
        if (td__name_is(c->call->buffers[i].name, k->str))
            return cl_err(c, TD_ESCHEMA, k,
                          "scalar '%s' has the name of a buffer", k->str);
    memcpy(s->name, k->str, k->len + 1);
    s->dtype = TD_I32;
    if (v->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, v,
                      "scalar '%s' must be a mapping ({dtype: int32, range: "
                      "[0, 8]}), not %s",
                      k->str, td__ytype_name(yv_kind(v)));
    int rc = td__ymap_read(&c->doc, v, keys, 2, vals, NULL);
    if (rc)
        return rc;
    if (vals[0] != NULL) {
        char dt[TD_NAME_MAX], hint[128];
        rc = cl_string(c, vals[0], "dtype", dt, sizeof dt);
        if (rc)
            return rc;
        if (td_dtype_parse(dt, &s->dtype) != 0)
            return cl_err(c, TD_ESCHEMA, vals[0], "unknown dtype '%s'%s", dt,
                          td__dtype_hint(hint, sizeof hint, dt));
        if (td_dtype_is_float(s->dtype) || td_dtype_bits(s->dtype) > 32)
            return cl_err(c, TD_ESCHEMA, vals[0],
                          "scalar '%s' must have an integer dtype of at most "
                          "32 bits (indices are int32), not %s",
                          k->str, dt);
    }
    const td_ynode *r = vals[1];
    if (r == NULL)
        return 0;
    if (r->kind != TD_YSEQ || r->n != 2)
        return cl_err(c, TD_ESCHEMA, r,
                      "the range of scalar '%s' must be a list [LO, HI] (LO "
                      "<= value < HI)",
                      k->str);
    int64_t lim = TD_MAX_EXTENT;
    if ((rc = td__yint(&c->doc, r->kids[0], "the range's low end", -lim, lim,
                       &s->lo)) != 0 ||
        (rc = td__yint(&c->doc, r->kids[1], "the range's high end", -lim, lim,
                       &s->hi)) != 0)
        return rc;
    if (s->hi <= s->lo)
        return cl_err(c, TD_ESCHEMA, r,
                      "the range of scalar '%s' is empty: [%lld, %lld) (LO "
                      "<= value < HI)",
                      k->str, (long long)s->lo, (long long)s->hi);
    s->has_range = true;
    return 0;
}

int td__cl_scalars(td__cl *c, const td_ynode *n)
{
    if (n->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, n, "'scalars' must be a mapping, not %s",
                      td__ytype_name(yv_kind(n)));
    for (size_t i = 0; i < n->n / 2; i++) {
        const td_ynode *k = n->kids[2 * i], *v = n->kids[2 * i + 1];
        int rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        if (i >= TD_MAX_SCALARS)
            return cl_err(c, TD_ELIMIT, k, "too many scalars (max %d)",
                          TD_MAX_SCALARS);
        if ((rc = td__ydup(&c->doc, n, i)) != 0)
            return rc;
        if ((rc = cl_scalar(c, k, v, &c->call->scalars[i])) != 0)
            return rc;
        c->call->nscalars = (int)i + 1;
    }
    return 0;
}
