/*
 * The copy_async variant `smem->tmem` (upstream copy_async/tcgen05_cp.py,
 * priority 10): one thread copies a (128, C) tile from shared memory into
 * tensor memory with tcgen05.cp.cta_group::1 (sm_100a), one instruction
 * per 128-row atom of 256 or 128 bits a row, the shared side named by a
 * shared memory descriptor.  Its two predicates are TVM's:
 * validate_smem_tmem_copy (a bare check, no reason, as TVM's) and
 * exec_scope (ours under TVM's display name, with TVM's text).
 *
 * Of TVM's shapes these are 128x256b and 128x128b, the ones whose
 * destination is TVM's datapath D (row r in lane r), the layout the model
 * reads tmem buffers as; 4x256b, 64x128b (warpx2) and 32x128b (warpx4)
 * write replicated or scattered lanes that a tmem layout would have to
 * declare, so they are declined as not supported yet.  Without a `shape`
 * config the widest atom that fits is taken, as TVM infers it.
 *
 * The shared layout is checked element by element rather than by TVM's
 * layout algebra: every element of the region must sit where the
 * descriptor reads it (the no-swizzle core-matrix arrangement: rows of 16
 * bytes, 8-row groups SBO apart, a 256-bit row's halves LBO apart), and
 * each atom's first element gives that copy's start address.  Swizzled
 * shared layouts are declined as not supported yet.  Where TVM raises a
 * ValueError we decline with its text.  Our decisions beyond TVM
 * (docs/copy_async.md): the call needs sm_100a-class tensor memory (TVM
 * has no arch check), cta_group 2 is declined, and unknown config keys
 * are refused, not ignored.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "variants.h"

/* ---- predicates (TVM's texts) ------------------------------------------ */

/* TVM's validate_smem_tmem_copy: a shared source, a tmem destination and
 * equal element widths (the dtypes may differ); TVM gives no reason. */
static bool valid_pred(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)args;
    (void)user;
    (void)why;
    if (call->nsrcs != 1 || call->srcs[0].kind != TD_OPERAND_REGION)
        return false;
    const td_buffer *s = td__copy_src(call), *d = td__copy_dst(call);
    return strncmp(s->scope, "shared", 6) == 0 &&
           strcmp(d->scope, "tmem") == 0 &&
           td_dtype_bits(s->dtype) == td_dtype_bits(d->dtype);
}

static bool scope_pred(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)args;
    (void)user;
    if (call->scope == TD_SCOPE_THREAD)
        return true;
    td_reason_set(why, "expected thread exec_scope, got %s",
                  td_exec_scope_name(call->scope));
    return false;
}

static const td_pred_desc cp_preds[] = {
    {.name = "validate_smem_tmem_copy", .fn = valid_pred},
    {.name = "smem_tmem_exec_scope", .fn = scope_pred,
     .shown_as = "exec_scope"},
};

/* ---- the plan ---------------------------------------------------------- */

/* TVM's shape table, in its inference order; `ours` marks the shapes
 * tiledispatch plans. */
static const struct {
    const char *name;
    const char *multicast;
    int bits;
    bool ours;
} shapes[] = {
    {"128x256b", "", 256, true},
    {"4x256b", "", 256, false},
    {"128x128b", "", 128, true},
    {"64x128b", "warpx2::02_13", 128, false},
    {"64x128b", "warpx2::01_23", 128, false},
    {"32x128b", "warpx4", 128, false},
};
#define NSHAPES ((int)(sizeof shapes / sizeof *shapes))

typedef struct cp_plan {
    td_ir_cp_shape shape;
    int lbo, sbo;       /* descriptor strides, 16-byte units */
    int n;              /* copies */
    int64_t col0;       /* first 32-bit tmem column */
    int64_t col_step;   /* 32-bit columns per copy */
    int64_t base[64];   /* each copy's first shared element (storage) */
} cp_plan;

/* The storage offset of element (r, c) of the region (row-major over
 * 128 x C); false when the layout gives none. */
static bool smem_off(const td_call *call, int64_t cols, int64_t r, int64_t c,
                     int64_t *off)
{
    const td_region *sr = td__copy_src_region(call);
    return td__copy_phys(&call->buffers[sr->buffer],
                         td__copy_elem(call, sr, r * cols + c), off);
}

/* Plans shape i of the table; TD_EDECLINED with a reason when the call's
 * layouts do not fit it. */
static int plan_shape(const td_call *call, int i, cp_plan *p, td_reason *why)
{
    const td_region *tr = &call->dst;
    const td_buffer *sb = td__copy_src(call);
    int bits = td_dtype_bits(sb->dtype);
    int64_t per32 = 32 / bits, unit = 128 / bits;
    int64_t epa = shapes[i].bits / bits; /* elements a row, one copy */
    int64_t cols = tr->extent[1];
    int64_t total = tr->extent[0] * cols;
    if (!shapes[i].ours) {
        td_reason_set(why,
                      "tcgen05.cp %s%s%s writes replicated or scattered "
                      "lanes; tiledispatch reads tensor memory as datapath "
                      "D and supports 128x256b and 128x128b only",
                      shapes[i].name, shapes[i].multicast[0] ? "." : "",
                      shapes[i].multicast);
        return TD_EDECLINED;
    }
    if (total < 128 * epa || total % (128 * epa) != 0 ||
        td_region_size(td__copy_src_region(call)) != total) {
        td_reason_set(why,
                      "t region (%lld elems) is not a multiple of one %s "
                      "atom (128x%lld elems)",
                      (long long)total, shapes[i].name, (long long)epa);
        return TD_EDECLINED;
    }
    if (tr->start[0] != 0) {
        td_reason_set(why,
                      "t TLane offset %lld overflows the 128-lane space "
                      "(footprint spans 128 lanes)",
                      (long long)tr->start[0]);
        return TD_EDECLINED;
    }
    if (tr->extent[0] != 128 || cols % epa != 0) {
        td_reason_set(why,
                      "t_lane for tcgen05.cp %s must canonicalize to "
                      "['(128, 1@TLane)']: the tmem region must be rows "
                      "0:128 and whole atoms of %lld columns, got %lld x "
                      "%lld",
                      shapes[i].name, (long long)epa,
                      (long long)tr->extent[0], (long long)cols);
        return TD_EDECLINED;
    }
    if (tr->start[1] % (4 * per32) != 0) {
        td_reason_set(why, "t TCol offset %lld not provably 128b-aligned",
                      (long long)tr->start[1]);
        return TD_EDECLINED;
    }
    td_lay_swz z = {0};
    if (sb->has_layout)
        td__lay_swz_from_layout(&sb->layout, &z);
    if (z.on) {
        td_reason_set(why, "smem->tmem: swizzled shared layouts are not "
                           "supported by tiledispatch yet (the descriptor's "
                           "no-swizzle mode only)");
        return TD_EDECLINED;
    }
    int64_t o00, o10, o80 = 0, o0u = 0;
    if (!smem_off(call, cols, 0, 0, &o00) ||
        !smem_off(call, cols, 1, 0, &o10) ||
        !smem_off(call, cols, 8, 0, &o80) ||
        (epa > unit && !smem_off(call, cols, 0, unit, &o0u))) {
        td_reason_set(why, "smem->tmem: the shared layout does not map the "
                           "region to memory offsets");
        return TD_EDECLINED;
    }
    int eb = bits / 8;
    int64_t k_byte = (o10 - o00) * eb;
    if (k_byte != 16) {
        if (k_byte == 32 || k_byte == 64 || k_byte == 128)
            td_reason_set(why,
                          "swizzle mode mismatch: s_layout swizzle_len=0 but "
                          "atom_K_byte=%lld implies sw=%d",
                          (long long)k_byte,
                          k_byte == 32 ? 1 : k_byte == 64 ? 2 : 3);
        else
            td_reason_set(why, "atom_K_byte %lld not in {16,32,64,128}",
                          (long long)k_byte);
        return TD_EDECLINED;
    }
    int64_t sbo = (o80 - o00) * eb, lbo = epa > unit ? (o0u - o00) * eb : 0;
    if (sbo % 16 != 0 || sbo < 0 || sbo / 16 >= (1 << 14)) {
        td_reason_set(why,
                      "s_lane row-group stride %lldB not 16B-aligned "
                      "(descriptor SBO is encoded in 16B units)",
                      (long long)sbo);
        return TD_EDECLINED;
    }
    if (lbo % 16 != 0 || lbo < 0 || lbo / 16 >= (1 << 14)) {
        td_reason_set(why, "s_col unit stride %lldB not 16B-aligned",
                      (long long)lbo);
        return TD_EDECLINED;
    }
    int64_t n = cols / epa;
    if (n > (int64_t)(sizeof p->base / sizeof *p->base)) {
        td_reason_set(why,
                      "smem->tmem: %lld copies; tiledispatch unrolls at "
                      "most %d",
                      (long long)n, (int)(sizeof p->base / sizeof *p->base));
        return TD_EDECLINED;
    }
    /* Every element where the descriptor reads it. */
    for (int64_t j = 0; j < n; j++) {
        int64_t b;
        if (!smem_off(call, cols, 0, j * epa, &b))
            return TD_EDECLINED;
        if ((b * eb) % 16 != 0) {
            td_reason_set(why,
                          "s offset %lld not provably aligned to 16B (%lld "
                          "%s elements)",
                          (long long)b, (long long)unit,
                          td_dtype_name(sb->dtype));
            return TD_EDECLINED;
        }
        for (int64_t r = 0; r < 128; r++)
            for (int64_t c = 0; c < epa; c++) {
                int64_t want = b + (r / 8) * (sbo / eb) + (r % 8) * unit +
                               (c / unit) * (lbo / eb) + c % unit, have;
                if (!smem_off(call, cols, r, j * epa + c, &have) ||
                    have != want) {
                    td_reason_set(why,
                                  "smem->tmem: the shared layout is not the "
                                  "no-swizzle core-matrix arrangement of %s "
                                  "(16-byte rows, 8-row groups %lldB apart"
                                  "%s): element (%lld, %lld) of the region "
                                  "is at offset %lld, the descriptor reads "
                                  "%lld",
                                  shapes[i].name, (long long)sbo,
                                  epa > unit ? ", halves LBO apart" : "",
                                  (long long)r, (long long)(j * epa + c),
                                  (long long)have, (long long)want);
                    return TD_EDECLINED;
                }
            }
        p->base[j] = b;
    }
    p->shape = shapes[i].bits == 256 ? TD_IR_CP_128X256B : TD_IR_CP_128X128B;
    p->lbo = (int)(lbo / 16);
    p->sbo = (int)(sbo / 16);
    p->n = (int)n;
    p->col0 = tr->start[1] / per32;
    p->col_step = epa / per32;
    return 0;
}

static const char *cfg_str(const td_config_entry *e)
{
    return e != NULL && e->kind == TD_VALUE_STRING ? e->s : NULL;
}

static int plan_cp(const td_call *call, cp_plan *p, td_reason *why)
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
    const td_config_entry *cg = td_call_config(call, "cta_group");
    if (cg != NULL && (cg->kind != TD_VALUE_INT || cg->i != 1)) {
        td_reason_set(why,
                      "smem->tmem: cta_group %lld is not supported by "
                      "tiledispatch (cta_group 1 only)",
                      cg->kind == TD_VALUE_INT ? (long long)cg->i : -1LL);
        return TD_EDECLINED;
    }
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
        return plan_shape(call, pick, p, why);
    }
    /* No shape: the widest atom that fits, TVM's candidates in order. */
    char all[TD_REASON_MAX] = "";
    size_t used = 0;
    for (int i = 0; i < NSHAPES; i++) {
        if (mc != NULL && strcmp(shapes[i].multicast, mc) != 0)
            continue;
        td_reason one;
        if (plan_shape(call, i, p, &one) == 0)
            return 0;
        if (!shapes[i].ours)
            continue; /* its decline says only "not ours" */
        /* TVM puts each on its own line; a reason is one line here. */
        int k = snprintf(all + used, sizeof all - used, "%s %s: %s",
                         used ? ";" : "", shapes[i].name, one.text);
        used = k < 0 || (size_t)k >= sizeof all - used ? sizeof all - 1
                                                       : used + (size_t)k;
    }
    td_reason_set(why,
                  "no tcgen05.cp shape fits the given layouts; candidates "
                  "rejected:%s",
                  all);
    return TD_EDECLINED;
}

/* ---- emission ---------------------------------------------------------- */

static const char *const note =
    "tcgen05.cp is asynchronous: the issuing thread commits it "
    "(tcgen05.commit.cta_group::1.mbarrier::arrive::one on a barrier) and "
    "the readers wait on that barrier before %.*s is read; %.*s_taddr is "
    "the base address tcgen05.alloc wrote; %.*s stays unwritten until "
    "then, and its shared allocation is 16-byte aligned (the descriptor "
    "holds address >> 4)";

static int cp_emit(const td_call *call, const td_op_desc *op,
                   const void *unused, td_ir *ir, void *user, td_reason *why)
{
    (void)op;
    (void)unused;
    (void)user;
    cp_plan p;
    int rc = plan_cp(call, &p, why);
    if (rc != 0)
        return rc;
    const td_region *sr = td__copy_src_region(call);
    const td_buffer *tb = td__copy_dst(call);
    const td_buffer *sb = &call->buffers[sr->buffer];
    td_ir_buf *t = td_ir_buffer(ir, tb->name, tb->dtype, "tmem", tb->ndim,
                                tb->shape);
    td_ir_buf *s = t != NULL ? td__copy_declare(call, sr->buffer, ir, why)
                             : NULL;
    if (s == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    for (int j = 0; j < p.n; j++) {
        td_ir_tmem_cp c = {
            .tmem = t,
            .column = td_int(ir, p.col0 + j * p.col_step),
            .smem = {s, td_int(ir, p.base[j])},
            .shape = p.shape,
            .lbo = p.lbo,
            .sbo = p.sbo,
            .desc = "cp_desc",
            .first = j == 0,
        };
        td_ir_tcgen05_cp(ir, &c);
    }
    rc = td_ir_status(ir);
    if (rc != 0)
        return rc;
    int tn = (int)strnlen(tb->name, TD_NAME_MAX);
    int sn = (int)strnlen(sb->name, TD_NAME_MAX);
    td_reason_set(why, note, tn, tb->name, tn, tb->name, sn, sb->name);
    return 0;
}

const td_impl_desc td__variant_copy_async_smem_tmem = {
    .name = "smem->tmem",
    .emit = cp_emit,
    .preds = cp_preds,
    .npreds = sizeof cp_preds / sizeof *cp_preds,
};
