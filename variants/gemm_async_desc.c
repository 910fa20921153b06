/*
 * gemm_async's shared-memory descriptors (variants/gemm_async.c's
 * operands in shared memory): TVM's compute_canonical_params, which
 * matches the region's layout against the swizzle atoms (K-major first,
 * then MN-major, by is_tile_inner) or takes TVM's two no-swizzle forms,
 * and the per-instruction 16-byte offsets of an operand's corners
 * (design/gemm/plan.md 3.3).  The declines carry TVM's ValueError texts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "gemm_async.h"
#include "layout.h"
#include "model.h"

#define DECLINE(...)                                                           \
    do {                                                                       \
        td_reason_set(why, __VA_ARGS__);                                       \
        return TD_EDECLINED;                                                   \
    } while (0)

/* TVM's list of nd extents, "[128, 64]". */
void td__ga_extents(const int64_t *e, int nd, char *buf, size_t cap)
{
    td_sbuf o = {buf, cap, 0};
    buf[0] = '\0';
    td__sbuf_printf(&o, "[");
    for (int d = 0; d < nd && d < TD_MAX_RANK; d++)
        td__sbuf_printf(&o, "%s%" PRId64, d ? ", " : "", e[d]);
    td__sbuf_printf(&o, "]");
}

/* A buffer's layout: its own, else the row-major one of its shape. */
static int buf_layout(const td_buffer *b, td_layout *out)
{
    if (b->has_layout) {
        *out = b->layout;
        return 0;
    }
    return td__lay_row_major(b->shape, b->ndim, out);
}

int td__ga_parse(const char *text, td_layout *out)
{
    td_diag d;
    memset(&d, 0, sizeof d);
    return td_layout_parse(text, out, &d) == 0 ? 0 : TD_EINVAL;
}

/* _try_atom: the atom (of atom_shape) tiles the region's layout with one
 * iter per tiler dim; ldo / sdo from the tiler's last / first dim. */
static int try_atom(const td_layout *atom, const int64_t *atom_shape,
                    const td_layout *slice, const int64_t *shape2,
                    int64_t elem_per_16b, int *ldo, int *sdo)
{
    if (shape2[0] % atom_shape[0] != 0 || shape2[1] % atom_shape[1] != 0)
        return TD_ENOMATCH;
    td_layout tiler, canon, grouped;
    char why[256];
    int rc = td__lay_is_tile_inner(atom, slice, shape2, atom_shape, 2, &tiler,
                                   why, sizeof why);
    if (rc != 0)
        return rc == TD_ENOMATCH || rc == TD_ELIMIT ? TD_ENOMATCH : rc;
    int64_t tshape[2] = {shape2[0] / atom_shape[0], shape2[1] / atom_shape[1]};
    int seps[3];
    if (td__lay_canonicalize(&tiler, &canon) != 0 ||
        td__lay_group(&canon, tshape, 2, &grouped, seps) != 0)
        return TD_ENOMATCH;
    if (seps[0] != 0 || seps[1] != 1 || seps[2] != 2)
        return TD_ENOMATCH;
    int64_t atom_size = atom_shape[0] * atom_shape[1];
    int64_t off[2];
    for (int d = 0; d < 2; d++) {
        const td_iter *it = &grouped.shard[d];
        off[d] = it->extent == 1 ? 0 : it->stride * atom_size / elem_per_16b;
        if (off[d] < 0 || off[d] >= (1 << 14))
            return TD_ENOMATCH;
    }
    *ldo = (int)off[1];
    *sdo = (int)off[0];
    return 0;
}

int td__ga_canonical_params(const td_call *call, int which, bool transposed,
                            td__ga_desc *g, td_reason *why)
{
    const td_region *r = &call->srcs[which].region;
    const td_buffer *b = &call->buffers[r->buffer];
    const char *dt = td_dtype_name(b->dtype);
    int bits = td_dtype_bits(b->dtype);
    int64_t e16 = 128 / bits;
    int pe = 0;
    while ((1 << (pe + 1)) <= e16)
        pe++;
    g->elem_per_16b = (int)e16;
    td_layout whole;
    int rc = buf_layout(b, &whole);
    if (rc < 0)
        return rc;
    td_lay_swz z;
    td__lay_swz_from_layout(&whole, &z);
    int mode = z.on ? z.swizzle_len : 0;
    if (z.on && mode > 0 && !z.inner)
        DECLINE("swizzle direction mismatch: the hardware swizzle modes "
                "implement the swizzle_inner=True address permutation");
    if (mode > 3)
        DECLINE("gemm_async: swizzle_len %d of %c's layout is not a tcgen05 "
                "swizzle mode",
                mode, "AB"[which]);

    /* The descriptor's region: a sub-atom contiguous slice rounds up to
     * whole atoms from the buffer's origin (TVM's desc_region). */
    int nd = r->ndim, cax = nd - 1;
    int64_t dstart[TD_MAX_RANK], dext[TD_MAX_RANK];
    memcpy(dstart, r->start, sizeof dstart);
    memcpy(dext, r->extent, sizeof dext);
    if (mode > 0) {
        int64_t inner = (int64_t)(16 << mode) * 8 / bits;
        int64_t contig = r->extent[cax];
        int64_t rounded = (contig + inner - 1) / inner * inner;
        if (rounded != contig) {
            if (r->start[cax] % e16 != 0)
                DECLINE("gemm_async: contiguous-axis slice start %" PRId64
                        " is not 16B-aligned (=%" PRId64
                        " elements, dtype %s). A sub-atom contiguous slice "
                        "must start on a 16B boundary; otherwise keep that "
                        "axis full and split on a stride/outer axis instead "
                        "(lay the operand out MN-major).",
                        r->start[cax], e16, dt);
            dstart[cax] = 0;
            dext[cax] = rounded;
        }
    }
    td_layout slice;
    if ((rc = td__lay_slice(&whole, b->shape, nd, dstart, dext, &slice)) != 0)
        DECLINE("gemm_async: the layout of %.*s does not slice to the "
                "region of %c",
                TD__FIELD(b->name), "AB"[which]);
    int64_t shape2[2];
    int n2 = 0;
    for (int d = 0; d < nd; d++)
        if (dext[d] != 1) {
            if (n2 < 2)
                shape2[n2] = dext[d];
            n2++;
        }
    if (n2 != 2) {
        char t[128];
        td_region dr = *r;
        memcpy(dr.extent, dext, sizeof dext);
        td__ga_extents(dr.extent, dr.ndim, t, sizeof t);
        DECLINE("Expected exactly 2 non-unit dims in region %s", t);
    }

    /* The per-instruction offsets read the region's own pre-swizzle tile. */
    td_layout rslice;
    if (td__lay_slice(&whole, b->shape, nd, r->start, r->extent, &rslice) !=
            0 ||
        td__lay_strip_swizzle(&rslice, r->extent, nd, &g->tile) != 0)
        DECLINE("gemm_async: the layout of %.*s does not slice to the "
                "region of %c",
                TD__FIELD(b->name), "AB"[which]);
    memcpy(g->extent, r->extent, sizeof g->extent);
    g->ndim = nd;

    if (mode == 0) {
        /* TVM's no-swizzle branch: 16-byte packed, or the column-major
         * view of one 128-byte column. */
        if (whole.swizzle && z.on)
            DECLINE("gemm_async: no-swizzle SMEM descriptors require a "
                    "plain TileLayout");
        td_layout canon, grouped;
        int seps[3];
        if (td__lay_canonicalize(&slice, &canon) != 0 ||
            td__lay_group(&canon, shape2, 2, &grouped, seps) != 0)
            DECLINE("gemm_async: no MMA SMEM descriptor matches region shape "
                    "[%" PRId64 ", %" PRId64 "] for dtype %s.",
                    shape2[0], shape2[1], dt);
        int ns = grouped.nshard;
        const td_iter *sh = grouped.shard;
        if (ns >= 3) {
            const td_iter *d0 = &sh[ns - 3], *d1 = &sh[ns - 2],
                          *d2 = &sh[ns - 1];
            bool packed = d0->extent == shape2[0] && d0->stride == e16 &&
                          d1->extent * d2->extent == shape2[1] &&
                          d1->stride == shape2[0] * e16 &&
                          d2->extent == e16 && d2->stride == 1;
            if (packed) {
                if (e16 != 8)
                    DECLINE("gemm_async: no-swizzle packed-16B SMEM "
                            "descriptors are only supported for 16-bit "
                            "dtypes (8 elements per 16B line); got dtype %s "
                            "with %" PRId64 " elements per 16B line",
                            dt, e16);
                if (shape2[0] >= (1 << 14))
                    DECLINE("gemm_async: ldo %" PRId64 " does not fit the "
                            "descriptor", shape2[0]);
                g->swizzle = 0;
                g->ldo = (int)shape2[0];
                g->sdo = 8;
                g->mn_major = transposed;
                return 0;
            }
        }
        if (ns < 2 || !(sh[ns - 2].stride == 1 &&
                        sh[ns - 1].stride == shape2[0]))
            DECLINE("gemm_async: no-swizzle SMEM descriptors currently "
                    "require the penultimate matrix dimension to be "
                    "contiguous or 16B-packed");
        if (shape2[0] != 8 * e16)
            DECLINE("gemm_async: no-swizzle column-major-view SMEM "
                    "descriptors require the contiguous matrix dimension to "
                    "span exactly 128B (= %" PRId64 " elements for %s); got "
                    "%" PRId64 ". Use a swizzled or packed-16B layout for "
                    "larger tiles.",
                    8 * e16, dt, shape2[0]);
        if (sh[ns - 1].stride >= (1 << 14))
            DECLINE("gemm_async: ldo %" PRId64 " does not fit the descriptor",
                    sh[ns - 1].stride);
        g->swizzle = 0;
        g->ldo = (int)sh[ns - 1].stride;
        g->sdo = 8;
        g->mn_major = transposed;
        return 0;
    }

    /* The swizzle atoms, K-major first (TVM's _match, over the modes from
     * 128 B down; only the layout's own swizzle can match). */
    for (int m = 3; m >= 1; m--) {
        int64_t w = (int64_t)(16 << m) * 8 / bits;
        char k_text[96], mn_text[128];
        snprintf(k_text, sizeof k_text, "S[%" PRId64 " : 1] + Swizzle(%d, %d, 3)",
                 8 * w, m, pe);
        snprintf(mn_text, sizeof mn_text,
                 "S[(%" PRId64 ", 8) : (1, %" PRId64 ")] + Swizzle(%d, %d, 3)",
                 w, w, m, pe);
        td_layout k_atom, mn_atom;
        if (td__ga_parse(k_text, &k_atom) != 0 || td__ga_parse(mn_text, &mn_atom) != 0)
            return TD_EINVAL;
        const int64_t base[2] = {8, w}, swapped[2] = {w, 8};
        /* (is_mn_major, atom, shape) in TVM's candidate order */
        const td_layout *atoms[2] = {transposed ? &mn_atom : &k_atom,
                                     transposed ? &k_atom : &mn_atom};
        const int64_t *shapes[2] = {transposed ? swapped : base,
                                    transposed ? base : swapped};
        for (int c = 0; c < 2; c++) {
            int ldo, sdo;
            rc = try_atom(atoms[c], shapes[c], &slice, shape2, e16, &ldo, &sdo);
            if (rc == TD_ENOMATCH)
                continue;
            if (rc != 0)
                return rc;
            bool mn = c == 1;
            if (mn != transposed) {
                int t = ldo;
                ldo = sdo;
                sdo = t;
            }
            g->swizzle = m;
            g->ldo = ldo;
            g->sdo = sdo;
            g->mn_major = mn;
            return 0;
        }
    }
    int64_t inner = (int64_t)(16 << mode) * 8 / bits;
    static const char *const mode_names[4] = {
        "SWIZZLE_NONE", "SWIZZLE_32B_ATOM", "SWIZZLE_64B_ATOM",
        "SWIZZLE_128B_ATOM"};
    DECLINE("gemm_async: no MMA SMEM descriptor matches region shape [%" PRId64
            ", %" PRId64 "] for dtype %s. The buffer is physically "
            "%s-swizzled (contiguous atom = %" PRId64 " elements / %d B); the "
            "region's layout does not tile it.",
            shape2[0], shape2[1], dt, mode_names[mode], inner, 16 << mode);
}

/* The corner's offset from the buffer's start in 16-byte units: the
 * region's pre-swizzle tile at flat index `linear`. */
int64_t td__ga_off16_at(const td__ga_desc *g, int64_t linear)
{
    int64_t total = 1;
    for (int d = 0; d < g->ndim; d++)
        total *= g->extent[d];
    int64_t c[TD_AXIS_COUNT];
    if (td__lay_apply_shape(&g->tile, &linear, &total, 1, c) != 0)
        return -1;
    return c[TD_AXIS_M] / g->elem_per_16b;
}

/* The layout of tensor-memory region r (TVM's buffer.layout.slice),
 * gemm_async.h. */
int td__ga_tmem_slice(const td_call *call, const td_region *r,
                      td_layout *out)
{
    const td_buffer *b = &call->buffers[r->buffer];
    td_layout whole;
    if (b->has_layout) {
        whole = b->layout;
    } else {
        char text[96];
        snprintf(text, sizeof text,
                 "S[(%" PRId64 ", %" PRId64 ") : (1@TLane, 1@TCol)]",
                 b->shape[0], b->shape[1]);
        if (td__ga_parse(text, &whole) != 0)
            return TD_EINVAL;
    }
    return td__lay_slice(&whole, b->shape, b->ndim, r->start, r->extent,
                         out);
}
