/*
 * The tma_auto plan: a copy_async call's operands read the way TVM 0.27's
 * _build_auto_plan reads them (copy_async/tma.py), handed to the model's
 * tensor-map planner.  The shared side gives the swizzle mode and, sliced
 * to its region and canonicalised, the iterators the map's box is made
 * of, each refined by the copy shape and so owned by one copy dimension;
 * the global side gives its strided runs, one view dimension each.  The
 * search over prefixes, the repairs and the validator are the model's
 * (model/tensor_map.c).  tma_explicit's shared check and TVM's own
 * refusals of the swizzle (deviation A6) are here too;
 * copy_async_tma_plan.h says what goes in and out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "copy.h"
#include "copy_async_tma_plan.h"
#include "td_internal.h"

#define AUTO_TAIL                                                              \
    "; use dispatch=\"tma_explicit\" when the mapping or hardware legality "   \
    "is only known at runtime"

void td__tma_plan_in_init(td_tma_plan_in *in)
{
    memset(in, 0, sizeof *in);
    in->direction = TD_TMAP_G2S;
    in->l2_promotion = TD_TMAP_L2_DEFAULT;
    in->sm = 90;
    in->cta_group = 1;
    in->has_mbar = 1;
}

static int is_shared(const char *scope)
{
    return strncmp(scope, "shared", 6) == 0;
}

/* The gcd of |a| and |b| (0 with 0). */
static int64_t gcd64(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b != 0) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int td__tma_plan_in_from_call(const td_call *call, td_tma_plan_in *in,
                              td_diag *d)
{
    td_copy_req q;
    if (call == NULL || in == NULL || td__copy_req_from_call(call, &q) != 0)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: the call has no region source");
    td__tma_plan_in_init(in);
    if (strcmp(q.src.scope, "global") == 0 && is_shared(q.dst.scope)) {
        in->direction = TD_TMAP_G2S;
        in->global = q.src;
        in->shared = q.dst;
    } else if (is_shared(q.src.scope) && strcmp(q.dst.scope, "global") == 0) {
        in->direction = TD_TMAP_S2G;
        in->global = q.dst;
        in->shared = q.src;
    } else {
        return td__fail(d, TD_EINVAL, NULL, "not a global<->shared TMA copy");
    }
    if (in->shared.block_align != 0)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: the shared region's start depends on "
                        "the block ids or a scalar; it must be constant");
    const td_region *gr = in->direction == TD_TMAP_G2S
                              ? td__copy_src_region(call)
                              : &call->dst;
    for (int g = 0; g < gr->ndim && g < TD_MAX_RANK; g++) {
        int64_t a = 0;
        for (int k = 0; k < 3; k++)
            a = gcd64(a, gr->block_coef[g][k]);
        for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++)
            a = gcd64(a, gr->scalar_coef[g][j]);
        in->g_start_align[g] = a;
        if (a != 0)
            td__region_bound_text(call, gr, g, 0, in->g_start_text[g],
                                  sizeof in->g_start_text[g]);
    }
    if (call->sm_version > 0)
        in->sm = call->sm_version;
    in->has_mbar = 0;
    for (int i = 0; i < call->nconfig; i++)
        if (strcmp(call->config[i].key, "mbar") == 0)
            in->has_mbar = 1;
    return 0;
}

/* TVM's _auto_fail (and tma_explicit's prefix without the hint). */
static int stage_fail(td_diag *d, const td_tma_plan_in *in, const char *stage,
                      const char *detail)
{
    if (in->explicit_map)
        return td__fail(d, TD_EINVAL, NULL, "tma_explicit stage=%s: %s",
                        stage, detail);
    return td__fail(d, TD_EINVAL, NULL, "tma_auto stage=%s: %s" AUTO_TAIL,
                    stage, detail);
}

/* "[a, b, c]" as TVM prints a list of integers. */
static void int_list(char *buf, size_t cap, const int64_t *v, int n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? ", " : "",
                              v[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
}

/* The shared swizzle as a TMA mode (tma_utils.get_swizzle_mode_from_layout):
 * no swizzle is mode 0, swizzle_len 1/2/3 the 32/64/128-byte modes. */
static int smem_kind(const td_tma_plan_in *in, td_tmap_smem *kind,
                     td_diag *d)
{
    const td_lay_swz *z = &in->shared.swz;
    static const td_tmap_smem modes[] = {TD_TMAP_SMEM_ROW, TD_TMAP_SMEM_SW32,
                                         TD_TMAP_SMEM_SW64,
                                         TD_TMAP_SMEM_SW128};
    if (!z->on || z->swizzle_len == 0) {
        *kind = TD_TMAP_SMEM_ROW;
        return 0;
    }
    if (!z->inner)
        return stage_fail(d, in, "shared-swizzle",
                          "swizzle direction mismatch: TMA swizzles the inner "
                          "(column) bits, the layout swizzles the outer ones");
    if (z->swizzle_len < 0 || z->swizzle_len > 3) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "cannot recognize shared swizzle in ComposeLayout(%d, %d, %d)",
                 z->per_element, z->swizzle_len, z->atom_len);
        return stage_fail(d, in, "shared-layout", msg);
    }
    /* TVM maps a swizzle to a mode by swizzle_len alone; the hardware
     * XORs 16-byte chunks in rows of 8, so a ComposeLayout that moves other
     * chunks (per_element) or repeats on other rows (atom_len) would land
     * data elsewhere than the layout says (deviation A6). */
    int64_t chunk_bits = ((int64_t)1 << z->per_element) *
                         td_dtype_bits(in->shared.dtype);
    if (chunk_bits != 128)
        return td__fail(d, TD_EINVAL, NULL,
                        "shared swizzle ComposeLayout(%d, %d, %d) moves "
                        "%" PRId64 "-%s chunks; TMA swizzles 16-byte chunks",
                        z->per_element, z->swizzle_len, z->atom_len,
                        chunk_bits % 8 == 0 ? chunk_bits / 8 : chunk_bits,
                        chunk_bits % 8 == 0 ? "byte" : "bit");
    if (z->atom_len != 3)
        return td__fail(d, TD_EINVAL, NULL,
                        "shared swizzle ComposeLayout(%d, %d, %d) repeats "
                        "every %d rows of 16-byte chunks; TMA's pattern "
                        "repeats every 8",
                        z->per_element, z->swizzle_len, z->atom_len,
                        1 << z->atom_len);
    *kind = modes[z->swizzle_len];
    return 0;
}

/* Every iterator and offset of a layout on the memory axis
 * (TVM's _assert_plain_memory_layout). */
static int memory_only(const td_layout *l)
{
    for (int i = 0; i < l->nshard; i++)
        if (l->shard[i].axis != TD_AXIS_M)
            return 0;
    for (int i = 0; i < l->nrep; i++)
        if (l->rep[i].axis != TD_AXIS_M)
            return 0;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        if (a != TD_AXIS_M && l->offset[a] != 0)
            return 0;
    return 1;
}

/*
 * The shared side as the planner's splits: the region's slice of the
 * tile (its offset is the shared pointer's), canonicalised without the
 * offset, then refined by the copy extents from the innermost end (TVM's
 * group_many): each piece is owned by one copy dimension.  The splits are
 * listed outermost first, as TVM numbers the refined iterators.
 */
static int shared_splits(const td_tma_plan_in *in, td_tmap_request *r,
                         int64_t *smem_offset, td_diag *d)
{
    const td_copy_side *s = &in->shared;
    td_layout sliced, canon;
    char msg[320], a[96], b[96];

    if (!memory_only(&s->tile))
        return stage_fail(d, in, "shared-layout",
                          "shared layout must be a plain memory layout");
    if (td__lay_slice(&s->tile, s->shape, s->ndim, s->start, s->extent,
                      &sliced) != 0) {
        int_list(a, sizeof a, s->start, s->ndim);
        int_list(b, sizeof b, s->extent, s->ndim);
        snprintf(msg, sizeof msg,
                 "shared layout cannot be sliced at start=%s, extent=%s", a, b);
        return stage_fail(d, in, "shared-slice", msg);
    }
    *smem_offset = sliced.offset[TD_AXIS_M];
    memset(sliced.offset, 0, sizeof sliced.offset);
    if (td__lay_canonicalize(&sliced, &canon) != 0)
        return stage_fail(d, in, "shared-canonicalize",
                          "canonical sliced shared layout is not a TileLayout");

    td_tmap_split rev[TD_TMAP_MAX_DIMS];
    int n = 0, si = canon.nshard - 1;
    int64_t rs = si >= 0 ? canon.shard[si].extent : 1;
    int64_t stride = si >= 0 ? canon.shard[si].stride : 0;
    for (int g = r->rank - 1; g >= 0; g--) {
        int64_t rc = r->extent[g];
        while (rc > 1) {
            if (rs == 1) {
                if (--si < 0)
                    break;
                rs = canon.shard[si].extent;
                stride = canon.shard[si].stride;
                continue;
            }
            int64_t piece = rs % rc == 0 ? rc : rc % rs == 0 ? rs : 0;
            if (piece == 0 || n == TD_TMAP_MAX_DIMS)
                break;
            rev[n++] = (td_tmap_split){g, piece, stride};
            if (!td__lay_mul64(stride, piece, &stride))
                break;
            rs /= piece;
            rc /= piece;
        }
        if (rc > 1) {
            int64_t shape[TD_MAX_LAYOUT_ITERS];
            for (int i = 0; i < canon.nshard; i++)
                shape[i] = canon.shard[i].extent;
            int_list(a, sizeof a, shape, canon.nshard);
            int_list(b, sizeof b, r->extent, r->rank);
            snprintf(msg, sizeof msg,
                     "cannot refine canonical shared shape=%s with copy "
                     "shape=%s",
                     a, b);
            return stage_fail(d, in, "group-shared", msg);
        }
    }
    /* A copy of one element leaves no iterator (and the planner would read
     * an empty list as "no splits given"). */
    if (n == 0)
        return stage_fail(d, in, "shared-chain",
                          "copy region has no non-unit shared memory iterator");
    for (int i = 0; i < n; i++)
        r->splits[i] = rev[n - 1 - i];
    r->nsplits = n;
    return 0;
}

/*
 * The global side as the planner's view: the layout grouped by the
 * buffer's shape, each dimension cut into its strided runs (iterators
 * whose strides chain); a dimension of one run stays as it is, one of
 * several becomes one view dimension per run, outermost first, and the
 * copied range is split over them as TVM's grouping of the sliced global
 * layout splits it (the inner runs whole, or the range inside one run).
 * The layout's offset joins the view's.
 */
static int global_view(const td_tma_plan_in *in, td_tmap_request *r,
                       td_tma_plan *out, td_diag *d)
{
    const td_copy_side *g = &in->global;
    td_layout grouped;
    int seps[TD_MAX_RANK + 1];
    char msg[200];

    if (in->global.swz.on || !memory_only(&g->tile))
        return stage_fail(d, in, "global-layout",
                          "global layout must be a plain memory TileLayout");
    if (td__lay_group(&g->tile, g->shape, g->ndim, &grouped, seps) != 0) {
        char a[96];
        int_list(a, sizeof a, g->shape, g->ndim);
        snprintf(msg, sizeof msg,
                 "cannot group the global layout by its shape=%s", a);
        return stage_fail(d, in, "group-global", msg);
    }
    int n = 0;
    for (int dim = 0; dim < g->ndim; dim++) {
        /* The runs of this dimension, innermost first. */
        int64_t ext[TD_MAX_LAYOUT_ITERS], str[TD_MAX_LAYOUT_ITERS];
        int nr = 0;
        for (int k = seps[dim + 1] - 1; k >= seps[dim]; k--) {
            const td_iter *it = &grouped.shard[k];
            if (it->extent == 1)
                continue;
            int64_t next;
            if (nr > 0 && td__lay_mul64(str[nr - 1], ext[nr - 1], &next) &&
                next == it->stride) {
                if (!td__lay_mul64(ext[nr - 1], it->extent, &ext[nr - 1]))
                    return td__fail(d, TD_ELIMIT, NULL,
                                    "tensor map: global extent overflows");
                continue;
            }
            ext[nr] = it->extent;
            str[nr++] = it->stride;
        }
        if (nr == 0) { /* a dimension of extent 1 */
            ext[0] = 1;
            str[0] = seps[dim + 1] > seps[dim]
                         ? grouped.shard[seps[dim + 1] - 1].stride
                         : 0;
            nr = 1;
        }
        if (n + nr > TD_TMAP_MAX_IN)
            return td__fail(d, TD_ELIMIT, NULL,
                            "tensor map: the global layout has more than %d "
                            "strided runs",
                            TD_TMAP_MAX_IN);
        /* The copied range over the runs, innermost first.  A start that
         * is not constant moves its non-constant part out to the outermost
         * run, which the inner runs' extents must divide. */
        int64_t start = g->start[dim], extent = g->extent[dim];
        int64_t align = in->g_start_align[dim], div = 1;
        for (int j = 0; j < nr; j++) {
            int v = n + nr - 1 - j;
            r->shape[v] = ext[j];
            r->strides[v] = str[j];
            out->view_dim[v] = dim;
            out->view_div[v] = div;
            r->start_align[v] = 0;
            r->start_text[v] = NULL;
            if (align != 0 && j == nr - 1) {
                r->start_align[v] = align / div;
                r->start_text[v] = in->g_start_text[dim];
            } else if (align != 0 && (align / div) % ext[j] != 0) {
                snprintf(msg, sizeof msg,
                         "group=%d start=%s is not divisible by "
                         "inner_product=%" PRId64 " (unknown)",
                         dim, in->g_start_text[dim], div * ext[j]);
                return stage_fail(d, in, "coordinate", msg);
            } else if (align != 0) {
                div *= ext[j];
            }
            if (extent >= ext[j] || j == nr - 1) {
                if (j < nr - 1 && (start % ext[j] != 0 || extent % ext[j] != 0)) {
                    snprintf(msg, sizeof msg,
                             "global dimension %d: the range %" PRId64
                             "+%" PRId64 " does not cover its inner run of "
                             "%" PRId64 " whole",
                             dim, start, extent, ext[j]);
                    return stage_fail(d, in, "copy-group", msg);
                }
                r->start[v] = j < nr - 1 ? 0 : start;
                r->extent[v] = j < nr - 1 ? ext[j] : extent;
                if (j < nr - 1) {
                    start /= ext[j];
                    extent /= ext[j];
                }
            } else {
                if (start % ext[j] + extent > ext[j]) {
                    snprintf(msg, sizeof msg,
                             "global dimension %d: the range %" PRId64
                             "+%" PRId64 " crosses its inner run of %" PRId64,
                             dim, start, extent, ext[j]);
                    return stage_fail(d, in, "copy-group", msg);
                }
                r->start[v] = start % ext[j];
                r->extent[v] = extent;
                start /= ext[j];
                extent = 1;
            }
        }
        n += nr;
    }
    r->rank = n;
    if (!td__lay_add64(in->g_elem_offset, grouped.offset[TD_AXIS_M],
                       &r->elem_offset))
        return td__fail(d, TD_ELIMIT, NULL,
                        "tensor map: global offset overflows");
    return 0;
}

/* tma_explicit's view: the declared dimensions, one stride each (TVM's
 * _direct_global_layout needs the layout to have the tensor's rank). */
static int explicit_view(const td_tma_plan_in *in, td_tmap_request *r,
                         td_tma_plan *out, td_diag *d)
{
    td_tmap_request v = *r;
    int rc = global_view(in, &v, out, d);
    if (rc != 0)
        return rc;
    if (v.rank != in->global.ndim) {
        char msg[160];
        snprintf(msg, sizeof msg, "tensor rank %d != memory-layout rank %d",
                 in->global.ndim, v.rank);
        return stage_fail(d, in, "global-layout", msg);
    }
    for (int i = 0; i < v.rank; i++) {
        r->strides[i] = v.strides[i];
        r->start_align[i] = v.start_align[i];
        r->start_text[i] = v.start_text[i];
    }
    r->elem_offset = v.elem_offset;
    return 0;
}

/* A memory layout as TVM prints it, T.TileLayout(T.S[(4, 64):(128, 1)])
 * (one iterator: T.S[64:1]); ours when it has replicas or offsets. */
static void tvm_layout_text(const td_layout *l, char *buf, size_t cap)
{
    int plain = l->nrep == 0;
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        plain &= l->offset[a] == 0;
    if (!plain || l->nshard < 1) {
        td_layout_format(l, buf, cap);
        return;
    }
    td_sbuf o = {buf, cap, 0};
    int many = l->nshard > 1;
    td__sbuf_printf(&o, "T.TileLayout(T.S[%s", many ? "(" : "");
    for (int i = 0; i < l->nshard; i++)
        td__sbuf_printf(&o, "%s%" PRId64, i ? ", " : "", l->shard[i].extent);
    td__sbuf_printf(&o, "%s:%s", many ? ")" : "", many ? "(" : "");
    for (int i = 0; i < l->nshard; i++)
        td__sbuf_printf(&o, "%s%" PRId64, i ? ", " : "", l->shard[i].stride);
    td__sbuf_printf(&o, "%s])", many ? ")" : "");
}

/* tma_explicit's shared side (_explicit_smem_layout): the slice, without
 * its offset, must be one contiguous run, and its offset keep the swizzle
 * atom's alignment. */
static int explicit_shared(const td_tma_plan_in *in, td_tmap_smem kind,
                           int64_t *smem_offset, td_diag *d)
{
    static const int align[] = {16, 16, 32, 64, 128};
    const td_copy_side *s = &in->shared;
    td_layout sliced, canon;
    char msg[400], text[256];
    if (!memory_only(&s->tile) ||
        td__lay_slice(&s->tile, s->shape, s->ndim, s->start, s->extent,
                      &sliced) != 0)
        return td__fail(d, TD_EINVAL, NULL,
                        "shared layout cannot be sliced to the copy region");
    *smem_offset = sliced.offset[TD_AXIS_M];
    memset(sliced.offset, 0, sizeof sliced.offset);
    if (td__lay_canonicalize(&sliced, &canon) != 0 ||
        !td__lay_is_trivial(&canon)) {
        tvm_layout_text(&canon, text, sizeof text);
        snprintf(msg, sizeof msg,
                 "sliced shared layout must canonicalize to trivial after "
                 "extracting its pointer offset; got %s",
                 text);
        return stage_fail(d, in, "shared-layout", msg);
    }
    int64_t bits;
    if (!td__lay_mul64(*smem_offset, td_dtype_bits(s->dtype), &bits) ||
        bits % 8 != 0 || (bits / 8) % align[kind] != 0) {
        snprintf(msg, sizeof msg,
                 "shared slice pointer offset %" PRId64 "B violates %dB "
                 "swizzle/base alignment",
                 bits / 8, align[kind]);
        return stage_fail(d, in, "shared-layout", msg);
    }
    return 0;
}

/* tma_auto's shared-pointer stage: the slice's start keeps the swizzle
 * atom's alignment (16 bytes without swizzle). */
static int shared_pointer(const td_tma_plan_in *in, int64_t off,
                          td_tmap_smem kind, td_diag *d)
{
    static const int align[] = {16, 16, 32, 64, 128};
    int64_t bits;
    char msg[200];
    if (!td__lay_mul64(off, td_dtype_bits(in->shared.dtype), &bits))
        return td__fail(d, TD_ELIMIT, NULL,
                        "tensor map: shared offset overflows");
    if (bits % 8 != 0) {
        snprintf(msg, sizeof msg,
                 "shared slice pointer offset=%" PRId64 " elements is not "
                 "provably byte aligned",
                 off);
        return stage_fail(d, in, "shared-pointer", msg);
    }
    if ((bits / 8) % align[kind] != 0) {
        snprintf(msg, sizeof msg,
                 "shared slice offset=%" PRId64 "B must preserve %dB "
                 "alignment (disproven)",
                 bits / 8, align[kind]);
        return stage_fail(d, in, "shared-pointer", msg);
    }
    return 0;
}

int td__tma_plan(const td_tma_plan_in *in, td_tma_plan *out, td_diag *d)
{
    if (in == NULL || out == NULL)
        return TD_EINVAL;
    memset(out, 0, sizeof *out);
    const td_copy_side *g = &in->global, *s = &in->shared;
    if (g->ndim < 1 || g->ndim > TD_TMAP_MAX_IN)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: the global buffer has %d dimensions; "
                        "1 to %d are supported",
                        g->ndim, TD_TMAP_MAX_IN);
    if (s->dtype != g->dtype && !in->explicit_map) {
        char msg[160];
        snprintf(msg, sizeof msg, "shared dtype=%s and global dtype=%s differ",
                 td_dtype_name(s->dtype), td_dtype_name(g->dtype));
        return stage_fail(d, in, "dtype", msg);
    }

    td_tmap_request r;
    td__tmap_request_init(&r);
    r.dtype = td_dtype_name(g->dtype);
    r.rank = g->ndim;
    for (int i = 0; i < g->ndim; i++) {
        r.shape[i] = g->shape[i];
        r.start[i] = g->start[i];
        r.extent[i] = g->extent[i];
        r.start_align[i] = in->g_start_align[i];
        r.start_text[i] = in->g_start_align[i] != 0 ? in->g_start_text[i]
                                                    : NULL;
        out->view_dim[i] = i;
        out->view_div[i] = 1;
    }
    r.direction = in->direction;
    r.explicit_map = in->explicit_map;
    r.oob = in->oob;
    r.l2_promotion = in->l2_promotion;
    r.tma_dtype = in->tma_dtype;
    r.sm = in->sm;
    r.cta_group = in->cta_group;
    r.has_mbar = in->has_mbar;

    /* TVM checks the config before it reads the operands' layouts;
     * tma_explicit encodes the global view as declared, tma_auto reads it
     * as its strided runs. */
    int rc = td__tmap_check_config(&r, d);
    if (rc == 0)
        rc = smem_kind(in, &r.smem, d);
    if (rc == 0 && !in->explicit_map)
        rc = global_view(in, &r, out, d);
    if (rc == 0 && in->explicit_map)
        rc = explicit_shared(in, r.smem, &out->smem_offset, d);
    if (rc == 0 && in->explicit_map)
        rc = explicit_view(in, &r, out, d);
    if (rc == 0 && !in->explicit_map)
        rc = shared_splits(in, &r, &out->smem_offset, d);
    if (rc != 0)
        return rc;
    /* TVM proves the shared pointer's alignment for each prefix, after the
     * chain and the global grouping and before the candidate is validated:
     * a misaligned slice is refused in place of any prefix-search failure
     * but after the planner's earlier stages. */
    td_diag pd = {0};
    rc = td__tmap_plan(&r, &out->map, &pd);
    if (!in->explicit_map &&
        (rc == 0 || strncmp(pd.msg, "tma_auto stage=prefix-search:", 29) == 0)) {
        int prc = shared_pointer(in, out->smem_offset, r.smem, d);
        if (prc != 0)
            return prc;
    }
    if (rc != 0) {
        if (d != NULL && d->code == 0)
            *d = pd;
        return rc;
    }
    for (int k = 0; k < out->map.rank; k++)
        if (out->map.coord_src[k] != 0)
            out->dynamic = 1;
    out->n_issue = 1;
    for (int i = 0; i < out->map.nissue; i++)
        if (!td__lay_mul64(out->n_issue, out->map.issue[i].extent,
                           &out->n_issue))
            return td__fail(d, TD_ELIMIT, NULL,
                            "tensor map: the issue count overflows");
    return 0;
}

int td__tma_plan_issue(const td_tma_plan *p, int64_t i, int64_t *coords,
                       int64_t *smem_off)
{
    if (p == NULL || coords == NULL || smem_off == NULL || i < 0 ||
        i >= p->n_issue)
        return TD_EINVAL;
    const td_tmap *m = &p->map;
    for (int k = 0; k < m->rank; k++)
        coords[k] = m->coordinates[k];
    *smem_off = 0;
    int64_t div = 1;
    for (int a = m->nissue - 1; a >= 0; a--) {
        const td_tmap_issue *x = &m->issue[a];
        int64_t v = (i / div) % x->extent;
        *smem_off += v * x->smem_stride; /* bounded by the tile's size */
        coords[x->dim] += v;
        div *= x->extent; /* at most n_issue, which fitted */
    }
    return 0;
}
