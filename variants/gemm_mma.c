/*
 * The `mma.m16n8k*` variant of gemm (upstream gemm/mma_m16n8k_.py,
 * design/gemm/plan.md 1.1-1.5): a warp-level matrix product of register
 * tiles, one mma.sync per 16 x 8 output tile and instruction K step.
 *
 * Predicates, in TVM's order: full_active_lanes (the active thread set is
 * complete: mma.sync.aligned is collective over the warp) and no_replica.
 * The emitter declines in TVM's order with TVM's texts: register scope,
 * alpha = 1, beta in {0, 1}, 2-D operands, the fragment analysis of
 * gemm_frag.c (slice, group, align), then the instruction search over
 * TVM's four m16n8k* entries (td__mma_insts), first fit wins.
 *
 * Where TVM is wrong we refuse with a reason (docs/upstream.md): thread
 * scope (TVM's full-lanes check passes vacuously there, D3) and an
 * instruction the call's arch does not have (TVM checks no arch, D2: the
 * search skips it, using td_mma_info's sm column, and the decline names
 * the arch when that is why nothing fits).
 *
 * What it emits is TVM's lowering after its unrolling: per output tile
 * (m, n), D's registers set from C (beta = 1) or to zero, then one
 * mma.sync per K tile accumulating in place, the register numbers taken
 * from TVM's register layouts (td__mma_reg_layout) as constants.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "gemm.h"
#include "gemm_frag.h"
#include "model.h"

static const char OP_NAMES[TD_MMA_NOPS] = {'D', 'A', 'B', 'C'};

/* The region of operand `op` (D, A, B, C order). */
static const td_region *op_region(const td_call *call, int op)
{
    switch (op) {
    case TD_MMA_OP_D:
        return &call->dst;
    case TD_MMA_OP_A:
        return &call->srcs[TD_GEMM_A].region;
    case TD_MMA_OP_B:
        return &call->srcs[TD_GEMM_B].region;
    default:
        return &call->srcs[TD_GEMM_C].region;
    }
}

/* ---- predicates ------------------------------------------------------- */

/* The scope's own conditions, TVM's and ours: thread scope is refused
 * (D3), and so is a partial warp (mma.sync.aligned needs every lane of
 * the warp; TVM does not check: docs/upstream.md). */
static bool scope_reaches(const td_call *call, td_reason *why)
{
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    switch (call->scope) {
    case TD_SCOPE_THREAD:
        /* TVM's active set is empty here and its check passes; one thread
         * cannot issue a warp-collective instruction (D3). */
        td_reason_set(why, "mma.sync is warp-collective; thread scope is "
                           "not supported");
        return false;
    case TD_SCOPE_WARP:
    case TD_SCOPE_WARPGROUP:
        return td__whole_scope_units(call, "mma.sync", why);
    case TD_SCOPE_CTA:
    case TD_SCOPE_CLUSTER:
        if (!tx->present) {
            td_reason_set(why, "cta scope needs threadIdx.x in launch_params");
            return false;
        }
        if (tx->symbolic) {
            td_reason_set(why, "non-static threadIdx.x extent %.*s",
                          TD__FIELD(tx->symbol));
            return false;
        }
        if (call->scope == TD_SCOPE_CLUSTER) {
            td_reason_set(why, "unsupported active-set axis 'cta_id'");
            return false;
        }
        if (tx->extent % 32 != 0) {
            td_reason_set(why,
                          "threadIdx.x extent %" PRId64 " is not a multiple "
                          "of 32 (cta-scope mma.sync needs whole warps)",
                          tx->extent);
            return false;
        }
        return true;
    default:
        td_reason_set(why, "unsupported scope");
        return false;
    }
}

/* The full extent of `axis` in the scope's active set (laneid 32;
 * wid_in_wg 4 at warpgroup scope; warpid the launch's warps at cta
 * scope), 0 for an axis the set does not have. */
static int64_t full_extent(const td_call *call, td_axis axis)
{
    if (axis == TD_AXIS_LANEID)
        return 32;
    if (axis == TD_AXIS_WID_IN_WG && call->scope == TD_SCOPE_WARPGROUP)
        return 4;
    if (axis == TD_AXIS_WARPID && call->scope == TD_SCOPE_CTA)
        return call->launch[TD_LAUNCH_TX].extent / 32;
    return 0;
}

/*
 * TVM's _full_active_lanes over the scope's active set: laneid (32) at
 * warp scope, plus wid_in_wg (4) at warpgroup scope and warpid (the
 * launch's threadIdx.x / 32) at cta scope, each of which the call's
 * `active:` may narrow (an enclosing guard); every axis must be whole.
 */
static bool pred_full_active_lanes(const td_call *call, const td_args *args,
                                   void *user, td_reason *why)
{
    (void)args;
    (void)user;
    if (!scope_reaches(call, why))
        return false;
    for (int i = 0; i < call->nactive && i < TD_MAX_ACTIVE; i++) {
        const td_active_range *a = &call->active[i];
        int64_t full = full_extent(call, a->axis);
        if (full == 0) {
            td_reason_set(why, "unsupported active-set axis '%s'",
                          td_axis_name(a->axis));
            return false;
        }
        if (a->begin != 0 || a->end != full) {
            td_reason_set(why,
                          "active %s is [%" PRId64 ", %" PRId64
                          "), need full [0, %" PRId64 ")",
                          td_axis_name(a->axis), a->begin, a->end, full);
            return false;
        }
    }
    return true;
}

/* One replica iter as TVM's Python prints it: T.Iter(2, 1, "warpid"). */
static void replica_text(const td_layout *l, char *buf, size_t cap)
{
    td_sbuf o = {buf, cap, 0};
    buf[0] = '\0';
    td__sbuf_printf(&o, "(");
    for (int i = 0; i < l->nrep && i < TD_MAX_LAYOUT_ITERS; i++)
        td__sbuf_printf(&o, "%sT.Iter(%" PRId64 ", %" PRId64 ", \"%s\")",
                        i > 0 ? ", " : "", l->rep[i].extent, l->rep[i].stride,
                        td_axis_name(l->rep[i].axis));
    td__sbuf_printf(&o, "%s)", l->nrep == 1 ? "," : "");
}

/* TVM's _no_replica: D, A, B, C in that order. */
static bool pred_no_replica(const td_call *call, const td_args *args,
                            void *user, td_reason *why)
{
    (void)args;
    (void)user;
    for (int op = 0; op < TD_MMA_NOPS; op++) {
        const td_buffer *b = td__region_buffer(call, op_region(call, op));
        if (b == NULL || !b->has_layout || b->layout.nrep == 0)
            continue;
        char rep[256];
        replica_text(&b->layout, rep, sizeof rep);
        td_reason_set(why, "%c layout has replica %s", OP_NAMES[op], rep);
        return false;
    }
    return true;
}

static const td_pred_desc mma_preds[] = {
    {.name = "full_active_lanes", .fn = pred_full_active_lanes},
    {.name = "no_replica", .fn = pred_no_replica},
};

/* ---- the emitter's checks ---------------------------------------------- */

/* Whether literal l is the constant v (TVM's _const_scalar; a named
 * scalar is no constant). */
static bool literal_is(const td_operand *l, double v)
{
    if (l->kind != TD_OPERAND_LITERAL)
        return false;
    if (td_dtype_is_float(l->dtype))
        return l->value == v;
    return (double)l->ivalue == v;
}

/* TVM's _mat_extents: the extents other than 1, "[16, 8, 2]". */
static bool two_d(const td_region *r, char name, td_reason *why)
{
    char ext[128];
    td_sbuf o = {ext, sizeof ext, 0};
    int n = 0;
    td__sbuf_printf(&o, "[");
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++)
        if (r->extent[d] != 1)
            td__sbuf_printf(&o, "%s%" PRId64, n++ > 0 ? ", " : "",
                            r->extent[d]);
    td__sbuf_printf(&o, "]");
    if (n == 2)
        return true;
    td_reason_set(why, "gemm mma expects 2D %c, got non-unit extents %s", name,
                  ext);
    return false;
}

/* The dtype signature as TVM's Python tuple prints it. */
static void sig_text(const td_dtype dt[4], char *buf, size_t cap)
{
    snprintf(buf, cap, "('%s', '%s', '%s', '%s')", td_dtype_name(dt[0]),
             td_dtype_name(dt[1]), td_dtype_name(dt[2]), td_dtype_name(dt[3]));
}

/* The IR's row of a gemm_frag instruction (the same names). */
static const td_mma_info *info_of(const td_mma_inst *inst, td_mma_kind *kind)
{
    for (int k = 0; k < TD_MMA_KIND_COUNT; k++) {
        const td_mma_info *f = td_mma_info_of((td_mma_kind)k);
        if (strcmp(f->name, inst->name) == 0) {
            *kind = (td_mma_kind)k;
            return f;
        }
    }
    return NULL;
}

/* What the search found. */
typedef struct mma_choice {
    const td_mma_inst *inst;
    const td_mma_info *info;
    td_mma_kind kind;
    td_mma_frag frag;
} mma_choice;

/*
 * One line of explain's per-candidate account (plan D8): why instruction
 * `in` was passed over.  Lines go after TVM's text, one per candidate,
 * separated by '\n': the explain row keeps the first line as its message
 * (TVM's words) and lists the others as reasons of their own.
 */
static void note_miss(td_sbuf *o, const td_mma_inst *in, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void note_miss(td_sbuf *o, const td_mma_inst *in, const char *fmt, ...)
{
    char text[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    td__sbuf_printf(o, "\n%s: %s", in->name, text);
}

/*
 * TVM's instruction loop: the first instruction whose shape divides M, N,
 * K, whose dtypes are the call's and whose fragments carve; then, ours,
 * the arch (an instruction above the call's sm is skipped; no arch: not
 * checked).  TD_EDECLINED with TVM's text, plus " on sm_75 (m16n8k16.f16
 * needs sm_80)" when an instruction fitting all but the arch was skipped,
 * and after it one line per instruction saying which check it failed
 * (TVM's text alone says "no mma instruction fits" for a fragment that
 * does not carve too, D8).
 */
static int search(const td_call *call, const td_mma_dims *dims, int64_t m,
                  int64_t n, int64_t k, const td_dtype dt[4], bool ext,
                  mma_choice *out, td_reason *why)
{
    const td_mma_inst *arch_miss = NULL;
    char notes[TD_REASON_MAX], others[TD_REASON_MAX / 2];
    td_sbuf o = {notes, sizeof notes, 0};
    td_sbuf other = {others, sizeof others, 0};
    notes[0] = others[0] = '\0';
    for (int i = 0; i < td__mma_ninsts; i++) {
        const td_mma_inst *in = &td__mma_insts[i];
        if (in->upstream == ext)
            continue; /* the other variant's instruction */
        /* The account names each instruction of the call's dtypes with
         * the check it failed, the others in one line at the end. */
        if (in->a != dt[0] || in->b != dt[1] || in->c != dt[2] ||
            in->d != dt[3]) {
            td__sbuf_printf(&other, "%s%s", other.len ? ", " : "", in->name);
            continue;
        }
        if (m % in->m || n % in->n || k % in->k) {
            const char dim = m % in->m ? 'M' : n % in->n ? 'N' : 'K';
            note_miss(&o, in, "%c=%" PRId64 " is not a multiple of %d", dim,
                      dim == 'M' ? m : dim == 'N' ? n : k,
                      dim == 'M' ? in->m : dim == 'N' ? in->n : in->k);
            continue;
        }
        /* float32 operands computed in tf32 (10 bits of mantissa) only
         * when the call says so, as CUTLASS makes it opt-in. */
        if (in->a == TD_F32 && !td_call_config_bool(call, "allow_tf32", false)) {
            note_miss(&o, in, "float32 operands compute in tf32 only with "
                              "allow_tf32: true");
            continue;
        }
        char fw[200];
        fw[0] = '\0';
        int rc = td__mma_fit(in, dims, &out->frag, fw, sizeof fw);
        if (rc == TD_ENOMATCH) {
            note_miss(&o, in, "fragment %s", fw[0] ? fw : "does not carve");
            continue;
        }
        if (rc < 0)
            return rc;
        const td_mma_info *f = info_of(in, &out->kind);
        if (f == NULL)
            return TD_EINVAL;
        if (call->sm_version > 0 && f->sm > call->sm_version) {
            if (arch_miss == NULL)
                arch_miss = in;
            note_miss(&o, in, "needs sm_%d", f->sm);
            continue;
        }
        out->inst = in;
        out->info = f;
        return 0;
    }
    if (other.len)
        td__sbuf_printf(&o, "\nother dtypes: %s", others);
    char sig[160];
    sig_text(dt, sig, sizeof sig);
    if (arch_miss != NULL) {
        td_mma_kind kk;
        td_reason_set(why,
                      "no mma instruction fits M=%" PRId64 ", N=%" PRId64
                      ", K=%" PRId64 ", dtypes=%s on %.*s (%s needs sm_%d)%s",
                      m, n, k, sig, TD__FIELD(call->arch), arch_miss->name,
                      info_of(arch_miss, &kk)->sm, notes);
    } else {
        td_reason_set(why,
                      "no mma instruction fits M=%" PRId64 ", N=%" PRId64
                      ", K=%" PRId64 ", dtypes=%s%s",
                      m, n, k, sig, notes);
    }
    return TD_EDECLINED;
}

/* ---- emission ---------------------------------------------------------- */

/* A buffer's layout, row-major when the call gives none. */
static int buffer_layout(const td_buffer *b, td_layout *out)
{
    if (b->has_layout) {
        *out = b->layout;
        return 0;
    }
    return td__lay_row_major(b->shape, b->ndim, out);
}

/* The registers one thread holds of layout l: the last memory offset +
 * 1 (what TVM allocates per thread). */
static int64_t thread_regs(const td_layout *l)
{
    int64_t top = l->offset[TD_AXIS_M];
    for (int i = 0; i < l->nshard; i++)
        if (l->shard[i].axis == TD_AXIS_M && l->shard[i].stride > 0)
            top += (l->shard[i].extent - 1) * l->shard[i].stride;
    return top + 1;
}

/* One operand in the IR: its buffer (declared once per call buffer), its
 * register layout and the local view's shape. */
typedef struct mma_operand {
    td_ir_buf *buf;
    td_layout reg;
    int64_t shape[5];
    int ndim;
    int64_t nregs;
} mma_operand;

/* Register of operand o at view coordinate c; -1 when past its storage. */
static int64_t reg_at(const mma_operand *o, const int64_t *c)
{
    int64_t coords[TD_AXIS_COUNT];
    if (td__lay_apply_shape(&o->reg, c, o->shape, o->ndim, coords) != 0)
        return -1;
    int64_t r = coords[TD_AXIS_M];
    return r >= 0 && r < o->nregs ? r : -1;
}

/* A's / B's 32-bit word at view coordinate c (its k_pack index 0). */
static int64_t word_at(const mma_operand *o, const int64_t *c, int k_pack)
{
    int64_t r = reg_at(o, c);
    return r >= 0 && r % k_pack == 0 ? r / k_pack : -1;
}

static int declare(const td_call *call, td_ir *ir, const mma_choice *ch,
                   const td_mma_dims *dims, mma_operand ops[TD_MMA_NOPS])
{
    td_ir_buf *by_index[TD_MAX_BUFFERS] = {0};
    for (int op = 0; op < TD_MMA_NOPS; op++) {
        const td_region *r = op_region(call, op);
        const td_buffer *b = td__region_buffer(call, r);
        td_layout whole;
        int rc;
        if (b == NULL)
            return TD_EINVAL;
        if ((rc = buffer_layout(b, &whole)) < 0)
            return rc;
        mma_operand *o = &ops[op];
        o->nregs = thread_regs(&whole);
        if ((rc = td__mma_reg_layout(&ch->frag, dims, op, &o->reg, o->shape,
                                     &o->ndim)) < 0)
            return rc;
        if (by_index[r->buffer] == NULL)
            by_index[r->buffer] =
                td_ir_buffer(ir, b->name, b->dtype, "local", 1, &o->nregs);
        o->buf = by_index[r->buffer];
        if (o->buf == NULL)
            return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_ENOMEM;
    }
    return 0;
}

static int emit_tiles(const td_call *call, td_ir *ir, const mma_choice *ch,
                      mma_operand ops[TD_MMA_NOPS], td_reason *why)
{
    const td_mma_info *f = ch->info;
    const int n_rm = ch->inst->m / 8, n_rn = ch->inst->n / 4;
    const int n_khi = ch->inst->k / (4 * ch->inst->k_pack);
    const mma_operand *D = &ops[TD_MMA_OP_D], *A = &ops[TD_MMA_OP_A],
                      *B = &ops[TD_MMA_OP_B], *C = &ops[TD_MMA_OP_C];
    const int64_t mt = D->shape[0], nt = D->shape[1], kt = A->shape[1];
    const bool use_c = literal_is(&call->beta, 1.0);
    /* Packed C / D (float16 accumulation): register 2*rM + rN is half of
     * word rM, the lower half rN = 0. */
    const int pack = f->cd_packed ? 2 : 1;
    if (f->cd_regs * pack != n_rm * n_rn || f->a_words != n_rm * n_khi ||
        f->b_words != n_khi || (f->cd_packed && n_rn != 2))
        return TD_EINVAL;
    for (int64_t m = 0; m < mt; m++)
        for (int64_t n = 0; n < nt; n++) {
            td_expr *dr[4];
            for (int rm = 0; rm < n_rm; rm++)
                for (int rn = 0; rn < n_rn; rn++) {
                    const int64_t c[4] = {m, n, rm, rn};
                    int64_t d = reg_at(D, c), s = reg_at(C, c);
                    if (d < 0 || s < 0)
                        goto past;
                    /* C in place (c: the dst region, beta = 1): D
                     * already holds it; TVM's copy of a register onto
                     * itself is left out. */
                    if (!use_c || C->buf != D->buf || s != d) {
                        td_expr *v =
                            use_c ? td_load1(ir, C->buf, td_int(ir, s))
                            : td_dtype_is_float(f->cd)
                                ? td_const_f(ir, f->cd, 0.0)
                                : td_const_i(ir, f->cd, 0);
                        td_ir_store1(ir, D->buf, td_int(ir, d), v);
                    }
                    if (pack == 1) {
                        dr[2 * rm + rn] = td_int(ir, d);
                    } else {
                        /* The pair of a word: even register first, its
                         * neighbour next (and C's likewise: C is read
                         * through D, which holds it now). */
                        const int64_t c1[4] = {m, n, rm, 1};
                        if (rn == 0 && (d % 2 != 0 || reg_at(D, c1) != d + 1)) {
                            td_reason_set(why,
                                          "gemm mma: %s takes D as 32-bit "
                                          "words of two float16, but D's "
                                          "registers %" PRId64 " and its "
                                          "neighbour are no such word",
                                          ch->inst->name, d);
                            return TD_EDECLINED;
                        }
                        if (rn == 0)
                            dr[rm] = td_int(ir, d / 2);
                    }
                }
            for (int64_t k = 0; k < kt; k++) {
                td_expr *aw[4], *bw[2];
                /* PTX order: A word rM + 2*kHi, B word kHi. */
                for (int kh = 0; kh < n_khi; kh++) {
                    for (int rm = 0; rm < n_rm; rm++) {
                        const int64_t c[5] = {m, k, rm, kh, 0};
                        int64_t w = word_at(A, c, ch->inst->k_pack);
                        if (w < 0)
                            goto past;
                        aw[rm + n_rm * kh] = td_int(ir, w);
                    }
                    const int64_t c[4] = {k, n, kh, 0};
                    int64_t w = word_at(B, c, ch->inst->k_pack);
                    if (w < 0)
                        goto past;
                    bw[kh] = td_int(ir, w);
                }
                td_ptx_mma x = {.kind = ch->kind, .d = D->buf, .a = A->buf,
                                .b = B->buf, .c = D->buf, .d_regs = dr,
                                .a_words = aw, .b_words = bw, .c_regs = dr};
                td_ir_mma(ir, &x);
            }
        }
    return td_ir_status(ir);
past:
    /* The analysis guarantees registers inside each fragment's storage;
     * a layout that maps past it is the analysis's bug, not the call's. */
    td_reason_set(why, "gemm mma: a register lies past its buffer's storage");
    return TD_EINVAL;
}

static int mma_emit(const td_call *call, const td_op_desc *op,
                    const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)op;
    (void)plan;
    const bool ext = user != NULL;
    const td_buffer *bufs[TD_MMA_NOPS];
    for (int o = 0; o < TD_MMA_NOPS; o++) {
        bufs[o] = td__region_buffer(call, op_region(call, o));
        if (bufs[o] == NULL)
            return TD_EINVAL;
    }
    /* TVM's order: register scope of D, A, B, C; alpha; beta; 2-D A, B,
     * D, C. */
    for (int o = 0; o < TD_MMA_NOPS; o++)
        if (!td__name_is(bufs[o]->scope, "local")) {
            td_reason_set(why,
                          "gemm mma requires %c in register (local) scope, "
                          "got %.*s",
                          OP_NAMES[o], TD__FIELD(bufs[o]->scope));
            return TD_EDECLINED;
        }
    char lit[64];
    if (!literal_is(&call->alpha, 1.0)) {
        td__gemm_literal_text(call, &call->alpha, lit, sizeof lit);
        td_reason_set(why, "gemm mma supports only alpha=1, got alpha=%s", lit);
        return TD_EDECLINED;
    }
    if (!literal_is(&call->beta, 0.0) && !literal_is(&call->beta, 1.0)) {
        td__gemm_literal_text(call, &call->beta, lit, sizeof lit);
        td_reason_set(why, "gemm mma supports only beta in {0, 1}, got beta=%s",
                      lit);
        return TD_EDECLINED;
    }
    static const int order_2d[4] = {TD_MMA_OP_A, TD_MMA_OP_B, TD_MMA_OP_D,
                                    TD_MMA_OP_C};
    for (int i = 0; i < 4; i++)
        if (!two_d(op_region(call, order_2d[i]), OP_NAMES[order_2d[i]], why))
            return TD_EDECLINED;
    int64_t m, n, k;
    if (!td__gemm_sizes(call, &m, &n, &k))
        return TD_EINVAL;

    /* The fragment analysis (slice, group, align: gemm_frag.c). */
    td_layout lay[TD_MMA_NOPS];
    td_mma_in in;
    memset(&in, 0, sizeof in);
    for (int o = 0; o < TD_MMA_NOPS; o++) {
        const td_region *r = op_region(call, o);
        int rc = buffer_layout(bufs[o], &lay[o]);
        if (rc < 0)
            return rc;
        in.op[o] = (td_mma_operand){&lay[o], bufs[o]->shape, bufs[o]->ndim,
                                    r->start, r->extent};
    }
    in.m = m, in.n = n, in.k = k;
    in.transpose_a = call->transpose_a;
    in.transpose_b = call->transpose_b;
    td_mma_dims dims;
    char w[TD_REASON_MAX];
    w[0] = '\0';
    int rc = td__mma_prepare(&in, &dims, w, sizeof w);
    if (rc == TD_ENOMATCH) {
        td_reason_set(why, "%s", w);
        return TD_EDECLINED;
    }
    if (rc < 0)
        return rc;

    const td_dtype dt[4] = {bufs[TD_MMA_OP_A]->dtype, bufs[TD_MMA_OP_B]->dtype,
                            bufs[TD_MMA_OP_C]->dtype, bufs[TD_MMA_OP_D]->dtype};
    mma_choice ch;
    if ((rc = search(call, &dims, m, n, k, dt, ext, &ch, why)) < 0)
        return rc;
    mma_operand ops[TD_MMA_NOPS];
    if ((rc = declare(call, ir, &ch, &dims, ops)) < 0)
        return rc;
    return emit_tiles(call, ir, &ch, ops, why);
}

const td_impl_desc td__variant_gemm_mma = {
    .name = "mma.m16n8k*",
    .emit = mma_emit,
    .preds = mma_preds,
    .npreds = sizeof mma_preds / sizeof *mma_preds,
};

/* tiledispatch's own instructions (design/gemm/plan.md 1.6), the same
 * analysis and emission: float16 accumulation, tf32 (allow_tf32), s8 /
 * u8, e4m3 / e5m2, each gated by the call's arch.  A variant of its own so
 * that TVM's stays TVM's (its search, its decline) and rules/upstream.yaml
 * can switch these off; its rules entry uses mma.m16n8k*'s predicates. */
const td_impl_desc td__variant_gemm_mma_ext = {
    .name = "mma_ext.m16n8k*",
    .emit = mma_emit,
    .user = (void *)&td__variant_gemm_mma_ext,
};
