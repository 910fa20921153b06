/*
 * The copy_async variant `tmem<->local` (upstream copy_async/
 * tcgen05_ldst.py, priority 10): a warpgroup moves a tile between tensor
 * memory and its registers with tcgen05.ld or tcgen05.st (sm_100a).  The
 * register buffer's layout picks the instruction, as TVM's
 * _match_tcgen05_atom_layout does: a .16x64b / .16x128b / .16x256b atom
 * layout (TVM's tcgen05_atom_layout, 64 rows: one 16-lane half of each
 * warp's slab, one instruction; 128 rows: both halves, two instructions,
 * rows 0 and 16) is tried first, in that order, then the .32x32b path
 * (thread t of the warpgroup holds row t, whose W elements are N 32-bit
 * cells of lane t).  Its three predicates are TVM's, with TVM's texts:
 * validate_copy_op (registered under our name, copy holds TVM's),
 * exec_scope (the generic predicate with its argument, warpgroup) and
 * storage_scope (ours under a display name: TVM's is the pair form, the
 * generic one is not).
 *
 * The tmem buffer's datapath (the loader reads it from its layout) is
 * TVM's: D (M = 128) pairs with .32x32b and 128-row .16x*b fragments; F
 * (M = 64, one 16-lane half of each warp's slab) with a 64-row .16x*b
 * fragment, its upper sub-slab issued at row 16; B (cta_group::2's
 * M = 64, two column halves in the two lane halves) takes its own path
 * first, one .32x32b.x(N/2) of the whole tile into the (64, N) register
 * image.  Where TVM asserts (a bare AssertionError row) we decline with a
 * reason; where it raises, with its text.  Our decisions beyond TVM
 * (docs/copy_async.md): the register buffer must carry a
 * fragment layout (TVM's .32x32b path reads only its shape), the call
 * needs sm_100a-class tensor memory (TVM has no arch check), config keys
 * are refused, not ignored, a .16x*b column slice must start a rep
 * (TVM moves the registers the layout gives other columns), and a 64-row
 * .16x*b fragment needs datapath F (TVM pairs it with D, whose rows 0:64
 * are other lanes than the instruction moves).
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "variants.h"

/* The register layout of a .32x32b fragment of width W: row 32w + l is
 * lane l of warp w, column c its c-th register element; TVM's tests spell
 * it with the thread's id in the warpgroup. */
static const char *const frag_layouts[] = {
    "S[(4, 32, %lld) : (1@wid_in_wg, 1@laneid, 1)]",
    "S[(128, %lld) : (1@tid_in_wg, 1)]"};

/* Whether b's layout is one of the fragment layouts of width W. */
static bool frag_layout_ok(const td_buffer *b, long long w, char *want,
                           size_t cap)
{
    char have[160] = "", wantc[160];
    if (b->has_layout)
        td_layout_format(&b->layout, have, sizeof have);
    bool ok = false;
    for (size_t i = 0; i < sizeof frag_layouts / sizeof *frag_layouts; i++) {
        td_layout wl;
        td_diag d;
        td_diag_clear(&d);
        snprintf(want, cap, frag_layouts[i], w);
        if (td_layout_parse(want, &wl, &d) != 0)
            continue;
        td_layout_format(&wl, wantc, sizeof wantc);
        ok |= b->has_layout && strcmp(have, wantc) == 0;
    }
    snprintf(want, cap, frag_layouts[0], w);
    return ok;
}

/* ---- the .16x*b atoms (TVM's tcgen05_atom_layout) -------------------- */

/* Per shape (td_ir_ldst_shape order): fp32 columns a rep covers, and the
 * iters of the register layout in fp32 units (register strides in 32-bit
 * registers), rows then columns, high to low; an extent of -1 is the rep
 * count N.  Row = lane bits + 8 * (a register or lane bit) + 16 * warp,
 * as the PTX ISA's fragment figures for the three shapes. */
typedef struct atom_iter {
    int ext;     /* -1: N */
    int stride;  /* on m: in fp32 registers */
    td_axis axis;
} atom_iter;

static const struct atom_desc {
    int col_factor;         /* fp32 columns per rep */
    int nrow, ncol;
    atom_iter row[3], col[3];
} atoms[TD_IR_LDST_SHAPE_COUNT] = {
    [TD_IR_LDST_16X64B] = {2, 3, 2,
                           {{4, 1, TD_AXIS_WID_IN_WG},
                            {2, 1, TD_AXIS_LANEID},
                            {8, 4, TD_AXIS_LANEID}},
                           {{-1, 1, TD_AXIS_M}, {2, 2, TD_AXIS_LANEID}}},
    [TD_IR_LDST_16X128B] = {4, 3, 2,
                            {{4, 1, TD_AXIS_WID_IN_WG},
                             {2, 1, TD_AXIS_M},
                             {8, 4, TD_AXIS_LANEID}},
                            {{-1, 2, TD_AXIS_M}, {4, 1, TD_AXIS_LANEID}}},
    [TD_IR_LDST_16X256B] = {8, 3, 3,
                            {{4, 1, TD_AXIS_WID_IN_WG},
                             {2, 2, TD_AXIS_M},
                             {8, 4, TD_AXIS_LANEID}},
                            {{-1, 4, TD_AXIS_M},
                             {4, 1, TD_AXIS_LANEID},
                             {2, 1, TD_AXIS_M}}},
};

static void push_iter(td_layout *l, int64_t ext, int64_t stride, td_axis ax)
{
    l->shard[l->nshard++] = (td_iter){ext, stride, ax};
}

/* The register layout of SHAPE.xNUM for a (rows, cols) fragment of
 * `bits`-bit elements into *out; false where TVM's factory raises (rows
 * not 64 or 128, bits not 16 or 32, cols not a Table 49 count of reps). */
static bool atom_layout(td_ir_ldst_shape shape, int64_t rows, int64_t cols,
                        int bits, td_layout *out, int *num)
{
    const struct atom_desc *a = &atoms[shape];
    if ((rows != 64 && rows != 128) || (bits != 16 && bits != 32))
        return false;
    int epb = 32 / bits;
    int64_t f = (int64_t)a->col_factor * epb;
    if (cols % f != 0 || cols / f > 128 ||
        td_ir_tcgen05_regs(shape, (int)(cols / f)) == 0)
        return false;
    int n = (int)(cols / f);
    /* Registers one 16-row slab uses: the rep's registers times N. */
    int64_t used = (int64_t)td_ir_tcgen05_regs(shape, n);
    memset(out, 0, sizeof *out);
    for (int i = 0; i < a->nrow; i++) {
        const atom_iter *t = &a->row[i];
        push_iter(out, t->ext, t->axis == TD_AXIS_M ? t->stride * epb
                                                    : t->stride,
                  t->axis);
        /* 128 rows: the second slab is the next row bit above the warp's
         * and the high half of the registers. */
        if (rows == 128 && t->axis == TD_AXIS_WID_IN_WG)
            push_iter(out, 2, used * epb, TD_AXIS_M);
    }
    for (int i = 0; i < a->ncol; i++) {
        const atom_iter *t = &a->col[i];
        push_iter(out, t->ext < 0 ? n : t->ext,
                  t->axis == TD_AXIS_M ? t->stride * epb : t->stride,
                  t->axis);
    }
    if (epb > 1)
        push_iter(out, epb, 1, TD_AXIS_M);
    *num = n;
    return td__lay_canonicalize(out, out) == 0;
}

/* The .16x*b shape whose atom layout b carries, tried in TVM's order
 * (16x64b, 16x128b, 16x256b), with its rep count; -1 when none. */
static int match_atom(const td_buffer *b, int *num)
{
    td_layout have, want;
    char hs[256], ws[256];
    if (!b->has_layout || b->ndim != 2 ||
        td__lay_canonicalize(&b->layout, &have) != 0)
        return -1;
    td_layout_format(&have, hs, sizeof hs);
    for (int s = TD_IR_LDST_16X64B; s < TD_IR_LDST_SHAPE_COUNT; s++) {
        if (!atom_layout((td_ir_ldst_shape)s, b->shape[0], b->shape[1],
                         td_dtype_bits(b->dtype), &want, num))
            continue;
        td_layout_format(&want, ws, sizeof ws);
        if (strcmp(hs, ws) == 0)
            return s;
    }
    return -1;
}

static bool is_tmem(const td_buffer *b)
{
    return strcmp(b->scope, "tmem") == 0;
}

/* ---- predicates (TVM's texts) ------------------------------------------ */

static bool valid_pred(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)args;
    (void)user;
    return td__copy_valid(call, why);
}

static bool scopes_pred(const td_call *call, const td_args *args, void *user,
                        td_reason *why)
{
    (void)args;
    (void)user;
    const char *s = call->nsrcs == 1 && call->srcs[0].kind == TD_OPERAND_REGION
                        ? td__copy_src(call)->scope
                        : "none";
    const char *d = td__copy_dst(call)->scope;
    if ((strcmp(s, "tmem") == 0 && strcmp(d, "local") == 0) ||
        (strcmp(s, "local") == 0 && strcmp(d, "tmem") == 0))
        return true;
    td_reason_set(why,
                  "unsupported memory scopes src=%.*s dst=%.*s; allowed: "
                  "tmem->local, local->tmem",
                  (int)strnlen(s, TD_NAME_MAX), s,
                  (int)strnlen(d, TD_NAME_MAX), d);
    return false;
}

static const td_pred_desc ldst_preds[] = {
    {.name = "tmem_local_valid_copy_op", .fn = valid_pred,
     .shown_as = "validate_copy_op"},
    {.name = "tmem_local_storage_scope", .fn = scopes_pred,
     .shown_as = "storage_scope"},
};

/* ---- the plan ---------------------------------------------------------- */

typedef struct ldst_plan {
    bool load;              /* tmem -> local */
    int tmem, regs;         /* buffer indices */
    td_ir_ldst_shape shape;
    int num;                /* .xNUM of each instruction */
    int nissue;             /* 1, or 2: a 128-row .16x*b fragment */
    int row;                /* the first issue's lane in each warp's slab */
    int64_t regs_per_slab;  /* 32-bit words between the two issues */
    int64_t column;         /* 32-bit column of the tmem window */
    int64_t word;           /* first 32-bit register word */
} ldst_plan;

static int decline(td_reason *why, const char *fmt, long long a, long long b)
{
    td_reason_set(why, fmt, a, b);
    return TD_EDECLINED;
}

/* TVM's _tmem_window: the tmem region is frag_rows rows; its datapath
 * (D for 128 rows, F for 64: B has its own path) must pair with the atom
 * (.32x32b reads whole 32-lane slabs, which F half fills; a 128-row
 * .16x*b fragment reads F's empty half-slab too); its lane offset, 0 or
 * datapath F's 16 of the upper sub-slab, goes to the instruction's row.
 * *sub_slab is that offset / 16. */
static int tmem_window(const td_buffer *tb, const td_region *tr,
                       int64_t frag_rows, bool atom16, int *sub_slab,
                       td_reason *why)
{
    if (tr->extent[0] != frag_rows) {
        td_reason_set(why, "tcgen05 ld/st: tmem row extent must be %lld, "
                           "got %lld",
                      (long long)frag_rows, (long long)tr->extent[0]);
        return TD_EDECLINED;
    }
    bool f = tb->shape[0] != 128;
    if (f && !(atom16 && frag_rows == 64)) {
        td_reason_set(why,
                      "tcgen05 dispatch: TMEM buffer with datapath='F' is "
                      "incompatible with atom='%s' (frag_rows=%lld). See PTX "
                      "ISA \u00a79.7.16.10.5 for datapath/atom pairings.",
                      atom16 ? "16x*b" : "32x32b", (long long)frag_rows);
        return TD_EDECLINED;
    }
    /* Datapath D's window at lane r0 carries the offset r0; datapath F's
     * (its whole 64 rows) its sub-slab's 16. */
    int64_t lane = f ? 16 * tb->sub_slab : tr->start[0];
    if (lane != 0 && lane != 16) {
        td_reason_set(why,
                      "tcgen05 dispatch: TMEM window has TLane offset %lld; "
                      "only 0 or 16 (the Layout F sub-slab selector) are "
                      "representable in the PTX row immediate.",
                      (long long)lane);
        return TD_EDECLINED;
    }
    if (lane != 0 && !f) {
        td_reason_set(why,
                      "tcgen05 dispatch: datapath='D' spans both sub-slabs "
                      "and cannot carry a TLane offset (got %lld).",
                      (long long)lane);
        return TD_EDECLINED;
    }
    /* TVM pairs datapath D with a 64-row .16x*b fragment too, reading
     * "the first half-slab": but the instruction moves lanes 32w..32w+15
     * of each warp w, fragment row r from lane 32 (r / 16) + r % 16, where
     * rows 0:64 of datapath D are lanes 0..63: a load returns other rows
     * than the region names, a store writes rows 64..111 outside it.
     * Datapath F names those lanes; refused with that pointer. */
    if (!f && atom16 && frag_rows == 64) {
        td_reason_set(why,
                      "tmem<->local: a 64-row .16x*b fragment moves lanes "
                      "32w..32w+15 of each warp w (fragment row r in lane "
                      "32 (r / 16) + r %% 16), but rows 0:64 of a datapath D "
                      "buffer are lanes 0..63 (TVM reads and writes rows "
                      "the region does not name); declare the tmem buffer "
                      "as datapath F, S[(4, 16, N) : (32@TLane, 1@TLane, "
                      "1@TCol)], to name the lanes it moves");
        return TD_EDECLINED;
    }
    *sub_slab = (int)(lane / 16);
    return 0;
}

/* TVM's _emit_datapath_b_path: datapath B's logical (64, N) tile is
 * physically (128, N/2), lanes 0..63 its first N/2 columns, 64..127 the
 * rest, one .32x32b.x(N/2) of the whole tile at column 0 moves it, thread
 * t lane t; the register fragment must be the matching image
 * (tcgen05_atom_layout('32x32b', (64, N), 'float32')). */
static int plan_datapath_b(const td_call *call, ldst_plan *p,
                           td_reason *why)
{
    const td_region *sr = td__copy_src_region(call);
    const td_region *tr = p->load ? sr : &call->dst;
    const td_region *lr = p->load ? &call->dst : sr;
    const td_buffer *lb = &call->buffers[lr->buffer];
    const td_buffer *tb = &call->buffers[tr->buffer];
    if (td_dtype_bits(lb->dtype) != 32) {
        td_reason_set(why,
                      "datapath B readback expects an fp32 fragment (32-bit "
                      "cells), got dtype=dtype('%s')",
                      td_dtype_name(lb->dtype));
        return TD_EDECLINED;
    }
    if (lb->ndim != 2 || lb->shape[0] != 64) {
        td_reason_set(why,
                      "datapath B (.cta_group::2 M=64) fragment must be "
                      "(64, N); a 128-row .32x32b fragment reads the wrong "
                      "region. Got rows=%lld. Allocate it with "
                      "T.alloc_tcgen05_ldst_frag('32x32b', (64, N), "
                      "'float32').",
                      (long long)lb->shape[0]);
        return TD_EDECLINED;
    }
    int64_t n = lb->shape[1], half = n / 2;
    char want[160], ws[256], hs[256];
    td_layout wl, hl;
    td_diag d;
    td_diag_clear(&d);
    snprintf(want, sizeof want,
             "S[(64, 2, %lld) : (1@tid_in_wg, 64@tid_in_wg, 1)]",
             (long long)half);
    bool ok = n % 2 == 0 && half >= 1 && half <= 128 &&
              (half & (half - 1)) == 0 && lb->has_layout &&
              td_layout_parse(want, &wl, &d) == 0 &&
              td__lay_canonicalize(&wl, &wl) == 0 &&
              td__lay_canonicalize(&lb->layout, &hl) == 0;
    if (ok) {
        td_layout_format(&wl, ws, sizeof ws);
        td_layout_format(&hl, hs, sizeof hs);
        ok = strcmp(ws, hs) == 0;
    }
    if (!ok) {
        td_reason_set(why,
                      "datapath B (.cta_group::2 M=64) requires a matching "
                      "Layout B register fragment. Allocate it with "
                      "T.alloc_tcgen05_ldst_frag('32x32b', (64, N), "
                      "'float32'); a .16x*b fragment reads the wrong "
                      "physical lanes and columns. (fragment layout "
                      "mismatch: %.*s is not %s)",
                      (int)strnlen(lb->layout_text, 100), lb->layout_text,
                      want);
        return TD_EDECLINED;
    }
    if (tr->start[0] != 0 || tr->start[1] != 0 || tr->extent[0] != 64 ||
        tr->extent[1] != n || tb->shape[1] != n) {
        td_reason_set(why,
                      "datapath B copy must cover the full (64, N) TMEM "
                      "buffer");
        return TD_EDECLINED;
    }
    if (lr->start[0] != 0 || lr->start[1] != 0 || lr->extent[0] != 64 ||
        lr->extent[1] != n) {
        td_reason_set(why, "datapath B copy must cover the full (64, N) "
                           "register fragment");
        return TD_EDECLINED;
    }
    p->shape = TD_IR_LDST_32X32B;
    p->num = (int)half;
    p->nissue = 1;
    return 0;
}

/* TVM's _emit_16xnb_path: a 64-row fragment is one issue in lanes 0..15
 * of each warp's slab, a 128-row one two (rows 0 and 16), the second
 * slab's registers regs_per_slab words on.  A column slice of the
 * fragment is num_eff reps at the slice's register offset. */
static int plan_16xnb(const td_call *call, ldst_plan *p, int shape, int num,
                      td_reason *why)
{
    const td_region *sr = td__copy_src_region(call);
    const td_region *tr = p->load ? sr : &call->dst;
    const td_region *lr = p->load ? &call->dst : sr;
    const td_buffer *lb = &call->buffers[lr->buffer];
    int64_t per = 32 / td_dtype_bits(lb->dtype);
    int64_t frag_rows = lb->shape[0];
    int64_t rep_cols = atoms[shape].col_factor * per; /* columns a rep */
    int64_t width = rep_cols * num;                   /* the atom's */
    int64_t slab_regs = td_ir_tcgen05_regs((td_ir_ldst_shape)shape, num);
    int sub_slab = 0;
    int rc = tmem_window(&call->buffers[tr->buffer], tr, frag_rows, true,
                         &sub_slab, why);
    if (rc != 0)
        return rc;
    if (lr->start[0] != 0 || lr->extent[0] != frag_rows) {
        td_reason_set(why,
                      "tmem<->local: the register region must cover the "
                      "fragment's rows 0:%lld, got %lld:%lld",
                      (long long)frag_rows, (long long)lr->start[0],
                      (long long)(lr->start[0] + lr->extent[0]));
        return TD_EDECLINED;
    }
    int64_t w = lr->extent[1];
    if (width % w != 0) {
        td_reason_set(why, "slice width %lld must divide atom width %lld",
                      (long long)w, (long long)width);
        return TD_EDECLINED;
    }
    if (tr->start[1] % per != 0 || lr->start[1] % per != 0)
        return decline(why,
                       "tmem<->local: 16-bit columns travel packed in "
                       "32-bit cells: the tmem column %lld and the register "
                       "column %lld must start a cell",
                       tr->start[1], lr->start[1]);
    if (w % rep_cols != 0 || lr->start[1] % rep_cols != 0) {
        td_reason_set(why,
                      "tmem<->local: a column slice of a .%s fragment must "
                      "cover whole reps of %lld columns, got columns "
                      "%lld:%lld (TVM fails on .x0 for a narrower slice and "
                      "moves registers the layout gives other columns for "
                      "an unaligned one)",
                      td_ir_tcgen05_ldst_shape((td_ir_ldst_shape)shape),
                      (long long)rep_cols, (long long)lr->start[1],
                      (long long)(lr->start[1] + w));
        return TD_EDECLINED;
    }
    p->shape = (td_ir_ldst_shape)shape;
    p->num = (int)(w / rep_cols);
    p->nissue = (int)(frag_rows / 64);
    p->row = 16 * sub_slab;
    p->regs_per_slab = slab_regs;
    p->column = tr->start[1] / per;
    p->word = lr->start[1] / rep_cols * (slab_regs / num);
    return 0;
}

static int plan_ldst(const td_call *call, ldst_plan *p, td_reason *why)
{
    if (!td__copy_tmem_arch(call)) {
        td_reason_set(why,
                      "tmem<->local: tcgen05.ld/st needs tensor memory "
                      "(sm_100a, sm_101a, sm_103a or sm_110a), got %.*s",
                      call->sm_version == 0 ? 7
                                            : (int)strnlen(call->arch,
                                                           TD_NAME_MAX),
                      call->sm_version == 0 ? "unknown" : call->arch);
        return TD_EDECLINED;
    }
    for (int i = 0; i < call->nconfig; i++) {
        const char *k = call->config[i].key;
        if (strncmp(k, "kernel_", 7) != 0) {
            td_reason_set(why,
                          "tmem<->local: unknown config key '%.*s' (TVM "
                          "ignores it silently); tmem<->local reads none",
                          (int)strnlen(k, TD_NAME_MAX), k);
            return TD_EDECLINED;
        }
    }
    const td_region *sr = td__copy_src_region(call);
    memset(p, 0, sizeof *p);
    p->load = is_tmem(&call->buffers[sr->buffer]);
    const td_region *tr = p->load ? sr : &call->dst;
    const td_region *lr = p->load ? &call->dst : sr;
    p->tmem = tr->buffer;
    p->regs = lr->buffer;
    const td_buffer *lb = &call->buffers[lr->buffer];
    /* Datapath B first: its (64, N) tile is a (128, N/2) .32x32b
     * transfer. */
    if (call->buffers[tr->buffer].datapath == TD_TMEM_B)
        return plan_datapath_b(call, p, why);
    int atom_num = 0;
    int atom = match_atom(lb, &atom_num);
    if (atom >= 0)
        return plan_16xnb(call, p, atom, atom_num, why);
    int bits = td_dtype_bits(lb->dtype);
    int64_t per = 32 / bits; /* elements per 32-bit cell */
    if (lb->ndim != 2 || lb->shape[0] != 128)
        return decline(why,
                       "tmem<->local: the register buffer must be a "
                       "tcgen05 fragment: (128, W) with the .32x32b layout, "
                       "or (64 or 128, W) with a .16x64b/.16x128b/.16x256b "
                       "atom layout of 16- or 32-bit elements; got rank "
                       "%lld, %lld rows",
                       lb->ndim, lb->shape[0]);
    char want[128];
    if (!frag_layout_ok(lb, (long long)lb->shape[1], want, sizeof want)) {
        td_reason_set(why,
                      "tmem<->local: register buffer %.*s needs the .32x32b "
                      "fragment layout %s (row 32w + l in lane l of warp w, "
                      "columns in registers) or a .16x64b/.16x128b/.16x256b "
                      "atom layout (TVM's tcgen05_atom_layout)",
                      (int)strnlen(lb->name, TD_NAME_MAX), lb->name, want);
        return TD_EDECLINED;
    }
    int sub_slab = 0;
    int rc = tmem_window(&call->buffers[tr->buffer], tr, 128, false,
                         &sub_slab, why);
    if (rc != 0)
        return rc;
    if (lr->start[0] != 0 || lr->extent[0] != 128)
        return decline(why,
                       "tmem<->local: the register region must cover rows "
                       "0:128, got %lld:%lld",
                       lr->start[0], lr->start[0] + lr->extent[0]);
    int64_t w = lr->extent[1];
    int64_t n = w / per;
    if (w % per != 0 || n < 1 || n > 128 || (n & (n - 1)) != 0) {
        td_reason_set(why,
                      "Width %lld is not valid for tcgen05.ld/st with shape "
                      "32x32b",
                      (long long)w);
        return TD_EDECLINED;
    }
    if (tr->start[1] % per != 0 || lr->start[1] % per != 0)
        return decline(why,
                       "tmem<->local: 16- and 8-bit columns travel packed in "
                       "32-bit cells: the tmem column %lld and the register "
                       "column %lld must start a cell",
                       tr->start[1], lr->start[1]);
    p->shape = TD_IR_LDST_32X32B;
    p->num = (int)n;
    p->nissue = 1;
    p->column = tr->start[1] / per;
    p->word = lr->start[1] / per;
    return 0;
}

/* ---- emission ---------------------------------------------------------- */

static const char *const note_ld =
    "tcgen05.ld is asynchronous: every thread of the warpgroup issues "
    "tcgen05.wait::ld.sync.aligned before it reads %.*s; %.*s_taddr is the "
    "base address tcgen05.alloc wrote";
static const char *const note_st =
    "tcgen05.st is asynchronous: every thread of the warpgroup issues "
    "tcgen05.wait::st.sync.aligned before %.*s is read (or an MMA uses it) "
    "and before %.*s is written again; %.*s_taddr is the base address "
    "tcgen05.alloc wrote";

static int ldst_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    ldst_plan p;
    int rc = plan_ldst(call, &p, why);
    if (rc != 0)
        return rc;
    const td_buffer *tb = &call->buffers[p.tmem];
    const td_buffer *lb = &call->buffers[p.regs];
    td_ir_buf *t = td_ir_buffer(ir, tb->name, tb->dtype, "tmem", tb->ndim,
                                tb->shape);
    /* The registers as one row of 32-bit-packed elements a thread. */
    int64_t elems = lb->shape[0] * lb->shape[1] / 128;
    td_ir_buf *r = t != NULL ? td_ir_buffer(ir, lb->name, lb->dtype, "local",
                                            1, &elems)
                             : NULL;
    if (r == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_ENOMEM;
    for (int i = 0; i < p.nissue; i++) {
        td_ir_tmem_ldst x = {.tmem = t, .column = td_int(ir, p.column),
                             .num = p.num, .regs = r,
                             .word = td_int(ir, p.word +
                                                    i * p.regs_per_slab),
                             .shape = p.shape, .row = p.row + 16 * i};
        if (p.load)
            td_ir_tcgen05_ld(ir, &x);
        else
            td_ir_tcgen05_st(ir, &x);
    }
    rc = td_ir_status(ir);
    if (rc != 0)
        return rc;
    int tn = (int)strnlen(tb->name, TD_NAME_MAX);
    int ln = (int)strnlen(lb->name, TD_NAME_MAX);
    if (p.load)
        td_reason_set(why, note_ld, ln, lb->name, tn, tb->name);
    else
        td_reason_set(why, note_st, tn, tb->name, ln, lb->name, tn, tb->name);
    return 0;
}

const td_impl_desc td__variant_copy_async_tmem_local = {
    .name = "tmem<->local",
    .emit = ldst_emit,
    .preds = ldst_preds,
    .npreds = sizeof ldst_preds / sizeof *ldst_preds,
};
