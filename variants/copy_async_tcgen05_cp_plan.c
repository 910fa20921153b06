/*
 * The plan of the copy_async variant `smem->tmem` (upstream
 * copy_async/tcgen05_cp.py's _build_plan): which tcgen05.cp shape copies
 * the call's tile, the shared memory descriptor's fields and every copy's
 * tensor-memory address and shared start.
 *
 * Every shape of TVM's table is planned: 128x256b, 4x256b, 128x128b,
 * 64x128b.warpx2::02_13 / ::01_23 and 32x128b.warpx4, the multicast ones
 * writing the lane replicas the tmem buffer's layout declares
 * (R[4 : 32@TLane]); a tmem buffer without a layout is datapath D.
 * Without a `shape` config the first shape that fits is taken, in TVM's
 * candidate order (widest atom first).  Shared tiles may be unswizzled or
 * in the canonical 32-, 64- and 128-byte swizzles of the MMA atoms.
 *
 * TVM derives the descriptor through its layout algebra; here every
 * element of the region is placed instead: its tensor-memory cell gives
 * its copy (the lane base and the block of columns) and its row and
 * column within the atom, and its shared offset before the swizzle must
 * be where the descriptor reads it (8-row core matrices of 16-byte units:
 * rows atom_K bytes apart, 8-row groups SBO apart, a 256-bit row's second
 * unit LBO after its first).  The strides are read off the first copy and
 * TVM's checks keep TVM's texts.  Our decisions beyond TVM
 * (docs/copy_async.md): the call needs sm_100a-class tensor memory (TVM
 * has no arch check), cta_group 2 needs a launch of CTA pairs (a cluster
 * of an even size), and unknown config keys are refused, not ignored.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "copy_async_tcgen05_cp_plan.h"
#include "layout.h"
#include "td_internal.h"

/* TVM's shape table, in its inference order (_CP_SHAPE_CANDIDATES), with
 * what one copy writes: `lane` the lane pattern of its rows (the text
 * TVM prints), `rep` the replica the tmem layout must declare (extent,
 * stride on TLane; 0: none). */
static const struct {
    const char *name;
    const char *multicast;
    int rows, bits;
    td_ir_cp_shape ir;
    const char *lane;
    int rep_ext, rep_stride;
} shapes[] = {
    {"128x256b", "", 128, 256, TD_IR_CP_128X256B, "['(128, 1@TLane)']", 0, 0},
    {"4x256b", "", 4, 256, TD_IR_CP_4X256B, "['(4, 32@TLane)']", 0, 0},
    {"128x128b", "", 128, 128, TD_IR_CP_128X128B, "['(128, 1@TLane)']", 0, 0},
    {"64x128b", "warpx2::02_13", 64, 128, TD_IR_CP_64X128B_02_13,
     "['(64, 1@TLane)']", 2, 64},
    {"64x128b", "warpx2::01_23", 64, 128, TD_IR_CP_64X128B_01_23,
     "['(2, 64@TLane)', '(32, 1@TLane)']", 2, 32},
    {"32x128b", "warpx4", 32, 128, TD_IR_CP_32X128B_WARPX4,
     "['(32, 1@TLane)']", 4, 32},
};
#define NSHAPES ((int)(sizeof shapes / sizeof *shapes))

/* The most copy slots (column blocks x lane bases) a plan indexes. */
#define CP_SLOTS 4096

/* A lane `l` past the region's first lane, as shape i's copies write
 * it: the row of the atom and the copy's lane base (past that first lane).
 * Row r lands at lane r (128x, 64x128b.warpx2::02_13, 32x128b), 32r
 * (4x256b) or r / 32 * 64 + r % 32 (64x128b.warpx2::01_23). */
static bool lane_row(int i, int64_t l, int64_t *r, int64_t *lb)
{
    int rows = shapes[i].rows;
    if (rows == 4) {
        *lb = l % 32;
        *r = l / 32;
        return *r < 4;
    }
    *lb = 0;
    if (shapes[i].ir == TD_IR_CP_64X128B_01_23) {
        *r = l / 64 * 32 + l % 32;
        return l < 96 && l % 64 < 32;
    }
    *r = l;
    return l < rows;
}

/* The tensor-memory cell (lane, column in elements) of element k of the
 * call's tmem region, replicas aside. */
static bool tmem_cell(const td_call *call, int64_t k, int64_t *lane,
                      int64_t *col)
{
    const td_buffer *tb = td__copy_dst(call);
    int64_t flat = td__copy_elem(call, &call->dst, k);
    if (!tb->has_layout) {
        *lane = flat / tb->shape[1];
        *col = flat % tb->shape[1];
        return true;
    }
    int64_t c[TD_AXIS_COUNT];
    if (td__lay_map(&tb->layout, flat, c) != 0)
        return false;
    *lane = c[TD_AXIS_TLANE];
    *col = c[TD_AXIS_TCOL];
    return true;
}

/* The shared offset of element k of the source region before the
 * swizzle (the address the descriptor is given), in elements. */
static bool smem_lin(const td_call *call, const td_lay_swz *z, int64_t k,
                     int64_t *off)
{
    const td_region *sr = td__copy_src_region(call);
    int64_t phys;
    if (!td__copy_phys(&call->buffers[sr->buffer],
                       td__copy_elem(call, sr, k), &phys))
        return false;
    return td__lay_swz_apply(z, phys, off) == 0;
}

/* Where TVM's planner raises for one shape: the reason and a decline. */
#define CP_FAIL(...)                                                           \
    do {                                                                       \
        td_reason_set(why, __VA_ARGS__);                                       \
        rc = TD_EDECLINED;                                                     \
        goto done;                                                             \
    } while (0)

/* Plans shape i of the table; TD_EDECLINED with a reason (TVM's text
 * where TVM raises) when the call's layouts do not fit it. */
static int plan_shape(const td_call *call, int i, td_cp_plan *p, td_reason *why)
{
    const td_buffer *tb = td__copy_dst(call), *sb = td__copy_src(call);
    const td_region *sr = td__copy_src_region(call);
    int bits = td_dtype_bits(sb->dtype), eb = bits / 8;
    int64_t per32 = 32 / bits, unit = 128 / bits;
    int64_t rows = shapes[i].rows, epa = shapes[i].bits / bits;
    int64_t atom = rows * epa;
    const char *dot = shapes[i].multicast[0] ? "." : "";
    const char *mc = shapes[i].multicast;
    unsigned char *seen = NULL;
    int rc = 0;

    /* B: the replicas the tmem layout declares are the shape's. */
    td_layout tl;
    tl.nrep = 0;
    if (tb->has_layout && td__lay_canonicalize(&tb->layout, &tl) != 0)
        CP_FAIL("smem->tmem: the layout of %s is not canonical", tb->name);
    bool rep_ok = shapes[i].rep_ext == 0
                      ? tl.nrep == 0
                      : tl.nrep == 1 && tl.rep[0].axis == TD_AXIS_TLANE &&
                            tl.rep[0].extent == shapes[i].rep_ext &&
                            tl.rep[0].stride == shapes[i].rep_stride;
    if (!rep_ok) {
        char got[160] = "";
        size_t u = 0;
        for (int k = 0; k < tl.nrep && u < sizeof got; k++) {
            int w = snprintf(got + u, sizeof got - u, "%s(%lld, %lld, '%s')",
                             k ? ", " : "", (long long)tl.rep[k].extent,
                             (long long)tl.rep[k].stride,
                             td_axis_name(tl.rep[k].axis));
            u = w < 0 ? sizeof got : u + (size_t)w;
        }
        if (shapes[i].rep_ext == 0)
            CP_FAIL("replica mismatch for tcgen05.cp %s%s%s: expected [], "
                    "got t.replica = [%s]",
                    shapes[i].name, dot, mc, got);
        CP_FAIL("replica mismatch for tcgen05.cp %s%s%s: expected ['(%d, "
                "%d@TLane)'], got t.replica = [%s]",
                shapes[i].name, dot, mc, shapes[i].rep_ext,
                shapes[i].rep_stride, got);
    }

    /* F: whole atoms on both sides. */
    int64_t total = td_region_size(&call->dst);
    int64_t stotal = td_region_size(sr);
    if (total < atom || total % atom != 0)
        CP_FAIL("t region (%lld elems) is not a multiple of one %s atom "
                "(%lldx%lld elems)",
                (long long)total, shapes[i].name, (long long)rows,
                (long long)epa);
    if (stotal != total)
        CP_FAIL("s region (%lld elems) differs from the t region (%lld "
                "elems)",
                (long long)stotal, (long long)total);
    int64_t n = total / atom;

    /* The region's first lane and column: the copies' offsets from it. */
    int64_t lmin = INT64_MAX, cmin = INT64_MAX, lmax = 0, cmax = 0;
    for (int64_t k = 0; k < total; k++) {
        int64_t l, c;
        if (!tmem_cell(call, k, &l, &c))
            CP_FAIL("smem->tmem: the layout of %s does not place element "
                    "%lld",
                    tb->name, (long long)k);
        lmin = l < lmin ? l : lmin;
        lmax = l > lmax ? l : lmax;
        cmin = c < cmin ? c : cmin;
        cmax = c > cmax ? c : cmax;
    }
    int64_t ncolb = (cmax - cmin) / epa + 1, nlb = rows == 4 ? 32 : 1;
    if (ncolb * nlb > CP_SLOTS || n > TD_CP_MAX)
        CP_FAIL("smem->tmem: %lld copies of %s; tiledispatch unrolls at "
                "most %d",
                (long long)n, shapes[i].name, TD_CP_MAX);
    int64_t lanes = lmax - lmin + 1, cols = cmax - cmin + 1;
    seen = td__calloc((size_t)(lanes * cols + 7) / 8, 1);
    short slot[CP_SLOTS];
    for (int k = 0; k < CP_SLOTS; k++)
        slot[k] = -1;
    if (seen == NULL) {
        rc = TD_ENOMEM;
        goto done;
    }

    /* F.1: each element's copy, row and column within the atom. */
    td_lay_swz z = {0};
    if (sb->has_layout)
        td__lay_swz_from_layout(&sb->layout, &z);
    int nk = 0;
    int64_t first = -1, s0 = 0, s_r1 = -1, s_r8 = -1, s_cu = -1;
    for (int64_t k = 0; k < total; k++) {
        int64_t l, c, r, lb, lin;
        tmem_cell(call, k, &l, &c);
        if (!lane_row(i, l - lmin, &r, &lb))
            CP_FAIL("t_lane for tcgen05.cp %s%s%s must canonicalize to %s, "
                    "got lane %lld for element %lld of the region",
                    shapes[i].name, dot, mc, shapes[i].lane, (long long)l,
                    (long long)k);
        int64_t cc = (c - cmin) % epa, id = (c - cmin) / epa * nlb + lb;
        int64_t bit = (l - lmin) * cols + (c - cmin);
        if (seen[bit / 8] & (1 << bit % 8))
            CP_FAIL("smem->tmem: two elements of the region land in one "
                    "tensor-memory cell (lane %lld, column %lld)",
                    (long long)l, (long long)c);
        seen[bit / 8] |= (unsigned char)(1 << bit % 8);
        if (slot[id] < 0) {
            if (nk == n)
                CP_FAIL("t_col must be (%lld, 1@TCol): the region's cells "
                        "do not form whole %s atoms",
                        (long long)epa, shapes[i].name);
            slot[id] = (short)nk++;
        }
        if (!smem_lin(call, &z, k, &lin))
            CP_FAIL("smem->tmem: the shared layout does not map the region "
                    "to memory offsets");
        if (k == 0) {
            first = id;
            s0 = lin;
        }
        if (id == first && cc == 0 && r == 1)
            s_r1 = lin;
        if (id == first && cc == 0 && r == 8)
            s_r8 = lin;
        if (id == first && cc == unit && r == 0)
            s_cu = lin;
    }
    if (nk != n || s_r1 < 0 || (rows > 8 && s_r8 < 0) ||
        (epa > unit && s_cu < 0))
        CP_FAIL("t_col must be (%lld, 1@TCol): the region's cells do not "
                "form whole %s atoms",
                (long long)epa, shapes[i].name);

    /* F.2: the descriptor's strides, read off the first copy. */
    int64_t k_byte = (s_r1 - s0) * eb;
    int64_t sdo = rows > 8 ? (s_r8 - s0) * eb : 0;
    if (sdo % 16 != 0 || sdo < 0 || sdo / 16 >= (1 << 14))
        CP_FAIL("s_lane row-group stride %lldB not 16B-aligned (descriptor "
                "SBO is encoded in 16B units)",
                (long long)sdo);
    int sw = k_byte == 16 ? 0 : k_byte == 32 ? 1 : k_byte == 64 ? 2
                                                : k_byte == 128 ? 3 : -1;
    if (sw < 0)
        CP_FAIL("atom_K_byte %lld not in {16,32,64,128}", (long long)k_byte);
    int lay_sw = z.on ? z.swizzle_len : 0;
    if (lay_sw != sw)
        CP_FAIL("swizzle mode mismatch: s_layout swizzle_len=%d but "
                "atom_K_byte=%lld implies sw=%d",
                lay_sw, (long long)k_byte, sw);
    if (z.on) {
        int pe = 0;
        while ((1 << (pe + 1)) <= unit)
            pe++;
        if (z.per_element != pe || z.atom_len != 3)
            CP_FAIL("swizzle family mismatch: expected canonical mma atom "
                    "ComposeLayout(per_element=%d, swizzle_len=%d, "
                    "atom_len=3); got per_element=%d, atom_len=%d",
                    pe, sw, z.per_element, z.atom_len);
    }
    /* F.3: a 256-bit row's two 16-byte units. */
    int64_t ldo = 0;
    if (epa > unit) {
        int64_t ldo_byte = (s_cu - s0) * eb;
        if (ldo_byte % 16 != 0 || ldo_byte < 0 || ldo_byte / 16 >= (1 << 14))
            CP_FAIL("s_col unit stride %lldB not 16B-aligned",
                    (long long)ldo_byte);
        if (sw == 0)
            ldo = ldo_byte / 16;
        else if (ldo_byte != 16)
            CP_FAIL("swizzled %db atom requires the two 16B units adjacent "
                    "in the linear layout, got stride %lldB",
                    shapes[i].bits, (long long)ldo_byte);
        else
            ldo = 1; /* ignored by the hardware when swizzled */
    }

    /* G: alignments. */
    if (cmin % (4 * per32) != 0)
        CP_FAIL("t TCol offset %lld not provably 128b-aligned",
                (long long)cmin);
    int64_t span = (lmax - lmin + 1) +
                   (shapes[i].rep_ext - (shapes[i].rep_ext > 0)) *
                       shapes[i].rep_stride;
    if (lmin + span > 128)
        CP_FAIL("t TLane offset %lld overflows the 128-lane space "
                "(footprint spans %lld lanes)",
                (long long)lmin, (long long)span);
    int64_t align = sw == 0 ? unit : 8 * k_byte / eb;
    if (s0 % align != 0) {
        if (sw == 0)
            CP_FAIL("s offset %lld not provably aligned to 16B (%lld %s "
                    "elements)",
                    (long long)s0, (long long)align, td_dtype_name(sb->dtype));
        CP_FAIL("s offset %lld not provably aligned to atom=%lldB (%lld %s "
                "elements)",
                (long long)s0, (long long)(8 * k_byte), (long long)align,
                td_dtype_name(sb->dtype));
    }

    /* Every element where the descriptor reads it; each copy's start. */
    for (int k = 0; k < n; k++)
        p->base[k] = -1;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t k = 0; k < total; k++) {
            int64_t l, c, r, lb, lin;
            tmem_cell(call, k, &l, &c);
            lane_row(i, l - lmin, &r, &lb);
            int64_t cc = (c - cmin) % epa, cb = (c - cmin) / epa;
            int j = slot[cb * nlb + lb];
            smem_lin(call, &z, k, &lin);
            if (pass == 0) {
                if (r == 0 && cc == 0) {
                    p->base[j] = lin;
                    p->taddr[j] = (cmin + cb * epa) / per32 +
                                  ((lmin + lb) << 16);
                }
                continue;
            }
            int64_t want =
                p->base[j] +
                ((r / 8) * sdo + (r % 8) * k_byte +
                 (cc / unit) * (sw == 0 ? ldo * 16 : 16)) / eb + cc % unit;
            if (lin != want)
                CP_FAIL("smem->tmem: element %lld of the region (row %lld, "
                        "column %lld of a %s atom) is at shared offset %lld; "
                        "the descriptor (atom_K %lldB, SBO %lldB%s) reads "
                        "%lld",
                        (long long)k, (long long)r, (long long)cc,
                        shapes[i].name, (long long)lin, (long long)k_byte,
                        (long long)sdo, epa > unit ? ", LBO" : "",
                        (long long)want);
            if ((p->base[j] * eb) % 16 != 0)
                CP_FAIL("s_middle start %lldB not 16B-aligned",
                        (long long)(p->base[j] * eb));
        }

    /* The copies in slot order: the lane base fastest, then the columns. */
    int64_t tb_[TD_CP_MAX], bb_[TD_CP_MAX];
    int m = 0;
    for (int k = 0; k < CP_SLOTS && m < n; k++)
        if (slot[k] >= 0) {
            tb_[m] = p->taddr[slot[k]];
            bb_[m++] = p->base[slot[k]];
        }
    memcpy(p->taddr, tb_, sizeof *tb_ * (size_t)n);
    memcpy(p->base, bb_, sizeof *bb_ * (size_t)n);
    p->shape = shapes[i].ir;
    p->lbo = (int)ldo;
    p->sbo = (int)(sdo / 16);
    p->swizzle = sw;
    p->n = (int)n;
done:
    td__free(seen);
    return rc;
}

static const char *cfg_str(const td_config_entry *e)
{
    return e != NULL && e->kind == TD_VALUE_STRING ? e->s : NULL;
}

/* cta_group 1, or 2 where the launch pairs CTAs: a cluster of an even
 * number of CTAs (the pair is the CTA and its rank's neighbour, rank ^ 1);
 * 0 with a reason otherwise. */
static int cta_group_of(const td_call *call, td_reason *why)
{
    const td_config_entry *cg = td_call_config(call, "cta_group");
    if (cg == NULL || (cg->kind == TD_VALUE_INT && cg->i == 1))
        return 1;
    if (cg->kind != TD_VALUE_INT || cg->i != 2) {
        td_reason_set(why, "smem->tmem: cta_group must be 1 or 2, got %s",
                      cg->kind == TD_VALUE_INT ? "another integer"
                                               : "a non-integer");
        return 0;
    }
    int64_t size = (int64_t)call->cluster[0] * call->cluster[1] *
                   call->cluster[2];
    if (call->cluster[0] == 0 || size % 2 != 0) {
        td_reason_set(why,
                      "smem->tmem: cta_group 2 copies into the tensor memory "
                      "of a CTA pair, which needs a cluster launch of an "
                      "even number of CTAs (launch: {cluster: [2]}); this "
                      "call has %s",
                      call->cluster[0] == 0 ? "no cluster" : "an odd cluster");
        return 0;
    }
    return 2;
}

int td__cp_plan(const td_call *call, td_cp_plan *p, td_reason *why)
{
    if (!td__copy_tmem_arch(call)) {
        td_reason_set(why,
                      "smem->tmem: tcgen05.cp needs tensor memory (sm_100a, "
                      "sm_101a, sm_103a or sm_110a), got %.*s",
                      call->sm_version == 0 ? 7
                                            : (int)strnlen(call->arch,
                                                           TD_NAME_MAX),
                      call->sm_version == 0 ? "unknown" : call->arch);
        return TD_EDECLINED;
    }
    for (int i = 0; i < call->nconfig; i++) {
        const char *k = call->config[i].key;
        if (strcmp(k, "shape") != 0 && strcmp(k, "multicast") != 0 &&
            strcmp(k, "cta_group") != 0 && strcmp(k, "decompress") != 0 &&
            strncmp(k, "kernel_", 7) != 0) {
            td_reason_set(why,
                          "smem->tmem: unknown config key '%.*s' (TVM "
                          "ignores it silently); smem->tmem reads shape, "
                          "multicast, cta_group and decompress",
                          (int)strnlen(k, TD_NAME_MAX), k);
            return TD_EDECLINED;
        }
    }
    const td_config_entry *dc = td_call_config(call, "decompress");
    if (dc != NULL && (dc->kind != TD_VALUE_BOOL || dc->b)) {
        td_reason_set(why, "tcgen05.cp planner does not support decompress");
        return TD_EDECLINED;
    }
    int cta_group = cta_group_of(call, why);
    if (cta_group == 0)
        return TD_EDECLINED;
    const td_config_entry *se = td_call_config(call, "shape");
    const td_config_entry *me = td_call_config(call, "multicast");
    const char *shape = cfg_str(se), *mc = cfg_str(me);
    if ((se != NULL && shape == NULL) || (me != NULL && mc == NULL)) {
        td_reason_set(why, "smem->tmem: shape and multicast are strings");
        return TD_EDECLINED;
    }
    if (shape != NULL) {
        int first = -1, count = 0;
        for (int i = 0; i < NSHAPES; i++)
            if (strcmp(shapes[i].name, shape) == 0) {
                first = first < 0 ? i : first;
                count++;
            }
        if (first < 0) {
            td_reason_set(why,
                          "unknown tcgen05.cp shape '%s'; expected one of "
                          "['128x128b', '128x256b', '32x128b', '4x256b', "
                          "'64x128b']",
                          shape);
            return TD_EDECLINED;
        }
        if (mc == NULL && count > 1) {
            td_reason_set(why,
                          "tcgen05.cp shape '%s' requires an explicit "
                          "multicast config; choose one of "
                          "['warpx2::02_13', 'warpx2::01_23']",
                          shape);
            return TD_EDECLINED;
        }
        int pick = -1;
        for (int i = first; i < first + count; i++)
            if (mc == NULL || strcmp(shapes[i].multicast, mc) == 0)
                pick = i;
        if (pick < 0) {
            if (count > 1)
                td_reason_set(why,
                              "illegal multicast '%s' for tcgen05.cp shape "
                              "'%s'; allowed: ['warpx2::02_13', "
                              "'warpx2::01_23']",
                              mc, shape);
            else
                td_reason_set(why,
                              "illegal multicast '%s' for tcgen05.cp shape "
                              "'%s'; allowed: ['%s']",
                              mc, shape, shapes[first].multicast);
            return TD_EDECLINED;
        }
        int rc = plan_shape(call, pick, p, why);
        if (rc == 0)
            p->cta_group = cta_group;
        return rc;
    }
    /* No shape: the widest atom that fits, TVM's candidates in order. */
    char all[TD_REASON_MAX] = "";
    size_t used = 0;
    for (int i = 0; i < NSHAPES; i++) {
        if (mc != NULL && strcmp(shapes[i].multicast, mc) != 0)
            continue;
        td_reason one;
        int rc = plan_shape(call, i, p, &one);
        if (rc == 0) {
            p->cta_group = cta_group;
            return 0;
        }
        if (rc != TD_EDECLINED)
            return rc;
        /* TVM puts each on its own line; a reason is one line here, and
         * a replica mismatch (the tmem layout declares another shape's
         * lanes) is said in two words so that the others fit. */
        bool rep = strncmp(one.text, "replica mismatch", 16) == 0;
        int k = snprintf(all + used, sizeof all - used, "%s %s%s%s: %s",
                         used ? ";" : "", shapes[i].name,
                         shapes[i].multicast[0] ? "." : "",
                         shapes[i].multicast,
                         rep ? "replica mismatch" : one.text);
        used = k < 0 || (size_t)k >= sizeof all - used ? sizeof all - 1
                                                       : used + (size_t)k;
    }
    td_reason_set(why,
                  "no tcgen05.cp shape fits the given layouts; candidates "
                  "rejected:%s",
                  all);
    return TD_EDECLINED;
}

