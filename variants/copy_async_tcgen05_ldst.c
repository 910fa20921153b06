/*
 * The copy_async variant `tmem<->local` (upstream copy_async/
 * tcgen05_ldst.py, priority 10): a warpgroup moves a (128, W) tile between
 * tensor memory and its registers with one tcgen05.ld or tcgen05.st
 * .32x32b.xN (sm_100a): thread t of the warpgroup holds row t, whose W
 * elements are N 32-bit cells of lane t.  Its three predicates are TVM's,
 * with TVM's texts: validate_copy_op (registered under our name, copy
 * holds TVM's), exec_scope (the generic predicate with its argument,
 * warpgroup) and storage_scope (ours under a display name: TVM's is the
 * pair form, the generic one is not).
 *
 * Of TVM's paths this is the .32x32b one (datapath D, M = 128, the
 * accumulator layout the model reads tmem buffers as); TVM's .16x64b /
 * .16x128b / .16x256b atoms and datapaths F and B are declined as not
 * supported yet.  Where TVM asserts (a bare AssertionError row) we decline
 * with a reason.  Our decisions beyond TVM (docs/copy_async.md): the
 * register buffer must carry the .32x32b register layout (TVM reads only
 * its shape), the call needs sm_100a-class tensor memory (TVM has no arch
 * check), and config keys are refused, not ignored.
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
    bool load;          /* tmem -> local */
    int tmem, regs;     /* buffer indices */
    int num;            /* 32-bit cells per thread: .xNUM */
    int64_t column;     /* 32-bit column of the tmem window */
    int64_t word;       /* first 32-bit register word */
} ldst_plan;

static int decline(td_reason *why, const char *fmt, long long a, long long b)
{
    td_reason_set(why, fmt, a, b);
    return TD_EDECLINED;
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
    p->load = is_tmem(&call->buffers[sr->buffer]);
    const td_region *tr = p->load ? sr : &call->dst;
    const td_region *lr = p->load ? &call->dst : sr;
    p->tmem = tr->buffer;
    p->regs = lr->buffer;
    const td_buffer *tb = &call->buffers[tr->buffer];
    const td_buffer *lb = &call->buffers[lr->buffer];
    int bits = td_dtype_bits(lb->dtype);
    int64_t per = 32 / bits; /* elements per 32-bit cell */
    if (lb->ndim != 2 || lb->shape[0] != 128)
        return decline(why,
                       "tmem<->local: the register buffer must be (128, W), "
                       "one row per thread of the warpgroup (the .32x32b "
                       "fragment), got rank %lld, %lld rows; TVM's .16x64b/"
                       ".16x128b/.16x256b fragments are not supported by "
                       "tiledispatch yet",
                       lb->ndim, lb->shape[0]);
    char want[128];
    if (!frag_layout_ok(lb, (long long)lb->shape[1], want, sizeof want)) {
        td_reason_set(why,
                      "tmem<->local: register buffer %.*s needs the .32x32b "
                      "fragment layout %s (row 32w + l in lane l of warp w, "
                      "columns in registers); TVM's .16x64b/.16x128b/"
                      ".16x256b fragments are not supported by tiledispatch "
                      "yet",
                      (int)strnlen(lb->name, TD_NAME_MAX), lb->name, want);
        return TD_EDECLINED;
    }
    if (tr->extent[0] != 128) {
        td_reason_set(why, "tcgen05 ld/st: tmem row extent must be 128, "
                           "got %lld",
                      (long long)tr->extent[0]);
        return TD_EDECLINED;
    }
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
    (void)tb;
    p->num = (int)n;
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
    td_ir_buf *r = t != NULL ? td_ir_buffer(ir, lb->name, lb->dtype, "local",
                                            1, &lb->shape[1])
                             : NULL;
    if (r == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_ENOMEM;
    td_ir_tmem_ldst x = {.tmem = t, .column = td_int(ir, p.column),
                         .num = p.num, .regs = r,
                         .word = td_int(ir, p.word)};
    if (p.load)
        td_ir_tcgen05_ld(ir, &x);
    else
        td_ir_tcgen05_st(ir, &x);
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
