/*
 * The auto-vectorised copy `vec_auto` (upstream copy/vec_auto*.py,
 * priority 10): its predicate vec_auto_applicable (the planner's check G,
 * global <-> shared, or R, registers <-> shared/global, with TVM's
 * composed reason) and its two emitters.  Global <-> shared: every thread
 * of the scope moves `vec` consecutive elements per round through a
 * scratch of containers (ld then st), a serial loop over the rounds, the
 * offsets g_lin and s_off printed as TVM prints them (the swizzle as an
 * XOR).  Registers <-> memory: the register layout says which thread owns
 * what; each round is one PTX access between the thread's storage, viewed
 * as containers, and memory at s_base + ds.  The plans come from
 * copy_plan.c (design/copy/planner.md); no barrier is emitted.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "copy_plan.h"
#include "variants.h"

static bool vec_auto_pred(const td_call *call, const td_args *args,
                          void *user, td_reason *why)
{
    (void)args;
    (void)user;
    td_copy_req q;
    char w[TD_REASON_MAX];
    if (td__copy_req_from_call(call, &q) != 0) {
        td_reason_set(why, "vec_auto: the source is not a region");
        return false;
    }
    if (!td__copy_vec_auto_applicable(&q, w, sizeof w)) {
        td_reason_set(why, "%s", w);
        return false;
    }
    return true;
}

static const td_pred_desc vec_auto_preds[] = {
    {.name = "vec_auto_applicable", .fn = vec_auto_pred},
};

/* The scope's thread id: lane, thread in the warpgroup, threadIdx.x; NULL
 * at thread scope (the emitters print 0). */
static td_expr *thread_id(const td_call *call, td_ir *ir)
{
    if (call->scope == TD_SCOPE_THREAD)
        return NULL;
    td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
    if (call->scope == TD_SCOPE_WARP)
        tx = td_mod(ir, tx, td_int(ir, 32));
    else if (call->scope == TD_SCOPE_WARPGROUP)
        tx = td_mod(ir, tx, td_int(ir, 128));
    return td_var_ref(ir, td_ir_let(ir, "tid", TD_I32, tx));
}

/* The sum over iters[0..n) of v's digits times their strides, less the
 * terms keep() rejects (it gets each term, its stride and the largest
 * value of its mixed-radix digit, and may record it elsewhere). */
typedef bool (*keep_fn)(void *ctx, td_expr *term, int64_t stride,
                        int64_t dmax);

static td_expr *split(td_ir *ir, td_expr *acc, td_expr *v, int64_t vmax,
                      const td_iter *iters, int n, keep_fn keep, void *ctx)
{
    int64_t inner = 1;
    for (int k = n - 1; k >= 0; k--) {
        const td_iter *it = &iters[k];
        /* The digit is (v / inner) % extent, the outermost one v / inner
         * unreduced: at most vmax / inner either way. */
        int64_t dmax = vmax / inner;
        if (k > 0 && dmax > it->extent - 1)
            dmax = it->extent - 1;
        if (it->extent > 1 && it->stride != 0) {
            td_expr *d = inner > 1 ? td_div(ir, v, td_int(ir, inner)) : v;
            if (k > 0)
                d = td_mod(ir, d, td_int(ir, it->extent));
            d = td_mul(ir, d, td_int(ir, it->stride));
            if (keep == NULL || keep(ctx, d, it->stride, dmax))
                acc = acc != NULL ? td_add(ir, acc, d) : d;
        }
        inner = td__mul_sat(inner, it->extent);
    }
    return acc;
}

td_expr *td__copy_split_expr(td_ir *ir, td_expr *acc, td_expr *v,
                             const td_iter *iters, int n)
{
    return split(ir, acc, v, INT64_MAX, iters, n, NULL, NULL);
}

static td_expr *plus(td_ir *ir, td_expr *a, int64_t c)
{
    if (a == NULL)
        return td_int(ir, c);
    return c != 0 ? td_add(ir, a, td_int(ir, c)) : a;
}

int64_t td__copy_swizzle_mod(const td_lay_swz *z)
{
    if (!z->on || z->swizzle_len == 0)
        return 0;
    return (int64_t)1 << (z->per_element + z->atom_len + z->swizzle_len);
}

/* The lowest bit the swizzle's XOR reads. */
static int swizzle_from(const td_lay_swz *z)
{
    return z->inner ? z->per_element + z->atom_len : z->per_element;
}

void td__copy_low_init(td_copy_low *l, const td_lay_swz *z)
{
    *l = (td_copy_low){.mod = td__copy_swizzle_mod(z)};
    l->from = l->mod > 0 ? swizzle_from(z) : 0;
}

/* Records a term that is not a multiple of mod (the others never reach
 * the bits the XOR reads); past TD_COPY_LOW_MAX terms none is left out. */
static bool low_keep(void *ctx, td_expr *term, int64_t stride, int64_t dmax)
{
    td_copy_low *l = ctx;
    if (stride % l->mod == 0)
        return false;
    if (l->n < TD_COPY_LOW_MAX)
        l->terms[l->n] = (td_copy_low_term){term, stride, dmax};
    else
        l->many = true;
    l->n++;
    return true;
}

void td__copy_low_split(td_ir *ir, td_copy_low *l, td_expr *v, int64_t vmax,
                        const td_iter *iters, int n)
{
    if (l->mod > 0)
        l->all = split(ir, l->all, v, vmax, iters, n, low_keep, l);
}

void td__copy_low_term(td_ir *ir, td_copy_low *l, td_expr *d, int64_t dmax,
                       int64_t stride)
{
    if (l->mod == 0 || stride == 0)
        return;
    td_expr *t = td_mul(ir, d, td_int(ir, stride));
    if (low_keep(l, t, stride, dmax))
        l->all = l->all != NULL ? td_add(ir, l->all, t) : t;
}

void td__copy_low_const(td_copy_low *l, int64_t c)
{
    if (l->mod > 0)
        l->c = (l->c + c % l->mod) % l->mod;
}

/* Whether the terms that are not multiples of 2^b, non-negative, plus the
 * constant's part below 2^b stay below 2^b for every value of their
 * digits: then adding them to the rest (a multiple of 2^b) carries
 * nothing into bit b, and bits b and up are the rest's. */
static bool low_below(const td_copy_low *l, int b)
{
    const int64_t g = (int64_t)1 << b;
    int64_t sum = l->c % g;
    if (l->c < 0 || l->many)
        return false;
    for (int i = 0; i < l->n; i++) {
        const td_copy_low_term *t = &l->terms[i];
        if (t->stride % g == 0)
            continue;
        if (t->stride < 0 || t->dmax < 0 || t->dmax >= g || t->stride >= g)
            return false;
        sum += t->dmax * t->stride;
        if (sum >= g)
            return false;
    }
    return true;
}

/* The row term: low's terms less, for the highest b <= from that
 * low_below allows, those that are not multiples of 2^b and the
 * constant's part below 2^b (bits from and up are the same); NULL when
 * no term is left, *k the constant. */
static td_expr *low_row(td_ir *ir, const td_copy_low *l, int64_t *k)
{
    for (int b = l->from; b >= 1; b--) {
        if (!low_below(l, b))
            continue;
        const int64_t g = (int64_t)1 << b;
        td_expr *t = NULL;
        for (int i = 0; i < l->n; i++)
            if (l->terms[i].stride % g == 0)
                t = t != NULL ? td_add(ir, t, l->terms[i].t) : l->terms[i].t;
        *k = l->c - l->c % g;
        return t;
    }
    *k = l->c;
    return l->all;
}

td_expr *td__copy_swizzle_expr(td_ir *ir, td_expr *m, const td_copy_low *low,
                               const td_lay_swz *z)
{
    if (!z->on || z->swizzle_len == 0)
        return m;
    int from = swizzle_from(z);
    int to = z->inner ? z->per_element : z->per_element + z->atom_len;
    int64_t mask = ((int64_t)1 << z->swizzle_len) - 1;
    /* The XOR reads bits [from, from + len) of m.  The row term has the
     * same bits there and leaves out what cannot change them: the terms
     * that are multiples of 2^(from + len), and those below a bit b <=
     * from that no carry from them can cross (low_row).  The source bits
     * are masked where they are, then moved: the same value as
     * (m >> from & mask) << to, but the quotient's operand is
     * non-negative on its face (m is an int in the CUDA text), so nvcc
     * shifts where m / 2^from costs a signed division's sign fix-up. */
    td_expr *row = m;
    if (low != NULL) {
        int64_t k;
        td_expr *t = low_row(ir, low, &k);
        if (t == NULL) {
            /* A constant row term: its XOR folds into one number. */
            int64_t b = k & (mask << from);
            b = from > to ? b >> (from - to) : b << (to - from);
            return b != 0 ? td_binary(ir, TD_OP_XOR, m, td_int(ir, b)) : m;
        }
        row = plus(ir, t, k);
    }
    td_expr *bits = td_binary(ir, TD_OP_BITAND, row, td_int(ir, mask << from));
    td_expr *moved =
        from > to   ? td_div(ir, bits, td_int(ir, (int64_t)1 << (from - to)))
        : from < to ? td_binary(ir, TD_OP_SHL, bits, td_int(ir, to - from))
                    : bits;
    return td_binary(ir, TD_OP_XOR, m, moved);
}

/* Whether the iters' terms are all whole multiples of 2^(the highest bit
 * the swizzle reads or flips + 1), so that adding them commutes with it
 * (false when there is no swizzle: nothing to gain). */
static bool above_swizzle(const td_iter *iters, int n, const td_lay_swz *z)
{
    if (!z->on || z->swizzle_len == 0)
        return false;
    int64_t span = (int64_t)1 << (z->per_element + z->atom_len +
                                  z->swizzle_len);
    for (int k = 0; k < n; k++)
        if (iters[k].extent > 1 && iters[k].stride % span != 0)
            return false;
    return true;
}

/* The PTX container form of `bytes` bytes (TVM's copy_ptx_form). */
static void form(int64_t bytes, int *bits, int *lanes)
{
    *bits = bytes >= 4 ? 32 : (int)bytes * 8;
    *lanes = bytes >= 4 ? (int)(bytes / 4) : 1;
}

static td_dtype container(int bits)
{
    return bits == 32 ? TD_U32 : bits == 16 ? TD_U16 : TD_U8;
}

static const char *const note_mem =
    "no barrier is emitted: the caller synchronises (__syncwarp() for "
    "readers in the same warp, a named barrier or __syncthreads() for "
    "others) before other threads read %.*s (%s)";

/* config keys the global <-> shared path does not apply (TVM reads none
 * of them there), for explain's note. */
static void unused_hints(const td_call *call, char *buf, size_t cap)
{
    static const char *const keys[] = {"cache", "l1_evict", "l2_evict",
                                       "prefetch_size"};
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (td_call_config(call, keys[i]) != NULL && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s",
                                  n > 0 ? ", " : "", keys[i]);
}

/* The loop of a global <-> shared plan (TVM's _emit_gmem_smem): the
 * scope's thread id, `for f in range(rounds)` or, with TD_LOOP_UNROLL,
 * `T.unroll(rounds)` (left open: the caller writes the accesses and closes
 * it) and the lets g_lin and s_off (element offsets in storage, the
 * swizzle applied) of this thread's vector in round f.  vec_auto (serial,
 * as TVM's: "T.unroll floods the kernel") and ldgsts (unrolled, as TVM's
 * ldgsts) share it. */
void td__copy_gs_loop(const td_call *call, const td_copy_gs_plan *p,
                      td_loop_kind kind, td_ir *ir, td_var **gv_out,
                      td_var **sv_out)
{
    td_expr *tid = p->threads > 1 ? thread_id(call, ir) : NULL;
    td_var *f = td_ir_for(ir, "f", td_int(ir, p->rounds), kind);
    td_expr *fv = td_var_ref(ir, f);
    td_expr *g = NULL, *s = NULL, *s_thread = NULL;
    bool split = false;
    /* The swizzle's row term: s less what cannot reach the bits it reads. */
    td_copy_low low;
    td__copy_low_init(&low, &p->swz);
    /* A start that depends on the block ids: their offset goes first in
     * the 32-bit index, as TVM prints a sliced buffer's symbolic base
     * (g_lin = blockIdx.x * 8192 + f * 512 + tid * 4). */
    const td_region *gr = p->g_is_src ? td__copy_src_region(call) : &call->dst;
    td_expr *blk = td__region_block_offset(ir, call, gr);
    if (p->carved) {
        int no = p->n_outer, nt = p->n_thread;
        g = td__copy_split_expr(ir, blk, fv, p->g.shard, no);
        if (tid != NULL)
            g = td__copy_split_expr(ir, g, tid, p->g.shard + no, nt);
        const td_iter *rounds = p->s.shard + p->s_seps[0];
        int n_rounds = p->s_seps[no] - p->s_seps[0];
        s = td__copy_split_expr(ir, NULL, fv, rounds, n_rounds);
        td__copy_low_split(ir, &low, fv, p->rounds - 1, rounds, n_rounds);
        split = above_swizzle(rounds, n_rounds, &p->swz);
        if (tid != NULL) {
            const td_iter *thr = p->s.shard + p->s_seps[no];
            int n_thr = p->s_seps[no + nt] - p->s_seps[no];
            s_thread = td__copy_split_expr(ir, split ? NULL : s, tid, thr,
                                           n_thr);
            td__copy_low_split(ir, &low, tid, p->threads - 1, thr, n_thr);
        }
        if (tid != NULL && !split)
            s = s_thread;
    } else {
        td_expr *flat = td_mul(ir, fv, td_int(ir, p->threads));
        if (tid != NULL)
            flat = td_add(ir, flat, tid);
        flat = td_mul(ir, flat, td_int(ir, p->vec));
        g = td__copy_split_expr(ir, blk, flat, p->g.shard, p->g.nshard);
        s = td__copy_split_expr(ir, NULL, flat, p->s.shard, p->s.nshard);
        td__copy_low_split(ir, &low, flat,
                           td__mul_sat(p->rounds * p->threads, p->vec) - 1,
                           p->s.shard, p->s.nshard);
    }
    g = plus(ir, g, p->g.offset[TD_AXIS_M]);
    const int64_t so = p->s.offset[TD_AXIS_M];
    td__copy_low_const(&low, so);
    if (split) {
        /* The rounds' part adds whole multiples of the swizzle's span,
         * which leave the bits it reads and flips alone: it stays out of
         * the XOR, as TVM prints it, and nvcc folds it into the unrolled
         * stores' immediate offsets. */
        td_expr *t = td__copy_swizzle_expr(ir, plus(ir, s_thread, so), &low,
                                           &p->swz);
        s = s != NULL ? td_add(ir, s, t) : t;
    } else {
        s = td__copy_swizzle_expr(ir, plus(ir, s, so), &low, &p->swz);
    }
    td_var *gv = td_ir_let(ir, "g_lin", TD_I32, g);
    td_var *sv = td_ir_let(ir, "s_off", TD_I32, s);
    *gv_out = gv;
    *sv_out = sv;
}

static int emit_gs(const td_call *call, const td_copy_req *q, td_ir *ir,
                   td_reason *why)
{
    td_copy_gs_plan p;
    char w[TD_REASON_MAX];
    int rc = td__copy_plan_gs(q, &p, w, sizeof w);
    if (rc != 0) {
        td_reason_set(why, "%s", w);
        return rc == TD_ENOMATCH ? TD_EDECLINED : rc;
    }
    const td_region *sr = td__copy_src_region(call), *dr = &call->dst;
    const td_region *gr = p.g_is_src ? sr : dr, *smr = p.g_is_src ? dr : sr;
    td_ir_buf *gb = td__copy_declare(call, gr->buffer, ir, why);
    td_ir_buf *sb = gb != NULL ? td__copy_declare(call, smr->buffer, ir, why)
                               : NULL;
    if (gb == NULL || sb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    int bits, lanes;
    form(p.vec * p.elem_bits / 8, &bits, &lanes);
    td_ir_buf *tmp = td_ir_scratch(ir, "tmp", container(bits), lanes);
    td_var *gv, *sv;
    td__copy_gs_loop(call, &p, TD_LOOP_SERIAL, ir, &gv, &sv);
    td_ptx_access ld = {.bits = bits, .lanes = lanes, .regs = tmp,
                        .word = td_int(ir, 0)};
    td_ptx_access st = ld;
    ld.mem = p.g_is_src ? gb : sb;
    ld.offset = td_var_ref(ir, p.g_is_src ? gv : sv);
    st.mem = p.g_is_src ? sb : gb;
    st.offset = td_var_ref(ir, p.g_is_src ? sv : gv);
    td_ir_ptx_ld(ir, &ld);
    td_ir_ptx_st(ir, &st);
    td_ir_end_for(ir);
    rc = td_ir_status(ir);
    if (rc != 0)
        return rc;
    const td_buffer *d = td__copy_dst(call);
    char hints[64], note[TD_REASON_MAX];
    unused_hints(call, hints, sizeof hints);
    snprintf(note, sizeof note, note_mem,
             (int)strnlen(d->name, TD_NAME_MAX), d->name, d->scope);
    if (hints[0] != '\0')
        td_reason_set(why, "%s; config %s not applied (the global <-> "
                           "shared path reads no cache hints, as TVM)",
                      note, hints);
    else
        td_reason_set(why, "%s", note);
    return 0;
}

/* The load hints of the register path: cache='nc' and the L1 / prefetch
 * hints on a global load; an L2 eviction priority needs a 256-bit load,
 * which vec_auto never makes. */
static bool reg_hints(const td_call *call, td_ptx_access *a, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "cache");
    if (e != NULL) {
        if (e->kind != TD_VALUE_STRING || strcmp(e->s, "nc") != 0) {
            td_reason_set(why, "vec_auto: unsupported cache config; "
                               "expected None or 'nc'");
            return false;
        }
        a->nc = true;
    }
    e = td_call_config(call, "l2_evict");
    if (e != NULL && !(e->kind == TD_VALUE_STRING && e->s[0] == '\0')) {
        td_reason_set(why, "config 'l2_evict' needs a 256-bit load "
                           "(vec_256b)");
        return false;
    }
    e = td_call_config(call, "l1_evict");
    if (e != NULL && e->kind == TD_VALUE_STRING && e->s[0] != '\0' &&
        td_ptx_l1_parse(e->s, &a->l1) != 0) {
        td_reason_set(why, "config 'l1_evict': '%.*s' is not an L1 hint",
                      (int)strnlen(e->s, TD_NAME_MAX), e->s);
        return false;
    }
    e = td_call_config(call, "prefetch_size");
    if (e != NULL && e->kind == TD_VALUE_STRING && e->s[0] != '\0' &&
        td_ptx_prefetch_parse(e->s, &a->prefetch) != 0) {
        td_reason_set(why, "config 'prefetch_size': '%.*s' is not a "
                           "prefetch size",
                      (int)strnlen(e->s, TD_NAME_MAX), e->s);
        return false;
    }
    return true;
}

static int emit_reg(const td_call *call, const td_copy_req *q, td_ir *ir,
                    td_reason *why)
{
    td_copy_reg_plan p;
    char w[TD_REASON_MAX];
    int rc = td__copy_plan_reg(q, &p, w, sizeof w);
    if (rc != 0) {
        td_reason_set(why, "%s", w);
        return rc == TD_ENOMATCH ? TD_EDECLINED : rc;
    }
    const td_region *sr = td__copy_src_region(call), *dr = &call->dst;
    const td_region *rr = p.r_is_src ? sr : dr, *mr = p.r_is_src ? dr : sr;
    const td_buffer *rb = &call->buffers[rr->buffer];
    td_ptx_access a = {0};
    if (!p.r_is_src && p.s_global && !reg_hints(call, &a, why))
        return TD_EDECLINED;
    td_ir_buf *mb = td__copy_declare(call, mr->buffer, ir, why);
    if (mb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_ir_buf *regs = td_ir_buffer(ir, rb->name, rb->dtype, rb->scope, 1,
                                   &p.r_slots);
    int bits, lanes;
    form(p.vec * p.elem_bits / 8, &bits, &lanes);
    td_expr *tid = p.s_nthread > 0 ? thread_id(call, ir) : NULL;
    /* A global start that depends on the block ids: their offset first. */
    td_expr *blk = td__region_block_offset(ir, call, mr);
    td_expr *base = tid != NULL ? td__copy_split_expr(ir, blk, tid, p.s.shard,
                                                      p.s_nthread)
                                : blk;
    base = plus(ir, base, p.s.offset[TD_AXIS_M]);
    bool swz = p.swz.on && p.swz.swizzle_len > 0;
    td_var *bv = swz ? NULL : td_ir_let(ir, "s_base", TD_I32, base);
    td_var *f = td_ir_for(ir, "f", td_int(ir, p.rounds), TD_LOOP_SERIAL);
    td_expr *fv = td_var_ref(ir, f), *ds = NULL, *drr = NULL;
    int64_t inner = 1;
    for (int k = p.nouter - 1; k >= 0; k--) {
        const td_copy_atom *at = &p.outer[k];
        if (at->extent > 1) {
            td_expr *d = inner > 1 ? td_div(ir, fv, td_int(ir, inner)) : fv;
            if (k > 0)
                d = td_mod(ir, d, td_int(ir, at->extent));
            if (at->s_stride != 0) {
                td_expr *t = td_mul(ir, d, td_int(ir, at->s_stride));
                ds = ds != NULL ? td_add(ir, ds, t) : t;
            }
            if (at->r_mul != 0) {
                td_expr *t = td_mul(ir, d, td_int(ir, at->r_mul));
                drr = drr != NULL ? td_add(ir, drr, t) : t;
            }
        }
        inner *= at->extent;
    }
    td_var *dsv = td_ir_let(ir, "ds", TD_I32, ds != NULL ? ds : td_int(ir, 0));
    td_var *drv = td_ir_let(ir, "dr", TD_I32, drr != NULL ? drr : td_int(ir, 0));
    td_expr *off = swz ? td_add(ir, base, td_var_ref(ir, dsv))
                       : td_add(ir, td_var_ref(ir, bv), td_var_ref(ir, dsv));
    off = td__copy_swizzle_expr(ir, off, NULL, &p.swz);
    td_expr *ov = swz ? td_var_ref(ir, td_ir_let(ir, "s_off", TD_I32, off))
                      : off;
    td_expr *slot = plus(ir, td_var_ref(ir, drv), p.r_off_base);
    td_expr *word = p.elem_bits == bits
                        ? slot
                        : p.elem_bits < bits
                              ? td_div(ir, slot, td_int(ir, bits / p.elem_bits))
                              : td_mul(ir, slot, td_int(ir, p.elem_bits / bits));
    td_var *wv = td_ir_let(ir, "r_w", TD_I32, word);
    a.mem = mb;
    a.offset = ov;
    a.bits = bits;
    a.lanes = lanes;
    a.regs = regs;
    a.word = td_var_ref(ir, wv);
    if (p.r_is_src)
        td_ir_ptx_st(ir, &a);
    else
        td_ir_ptx_ld(ir, &a);
    td_ir_end_for(ir);
    rc = td_ir_status(ir);
    if (rc != 0)
        return rc;
    const td_buffer *d = td__copy_dst(call);
    if (p.r_is_src)
        td_reason_set(why, note_mem, (int)strnlen(d->name, TD_NAME_MAX),
                      d->name, d->scope);
    else
        td_reason_set(why, "each thread loads its own registers; no barrier "
                           "is emitted");
    return 0;
}

static int vec_auto_emit(const td_call *call, const td_op_desc *op,
                         const void *plan, td_ir *ir, void *user,
                         td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    td_copy_req q;
    char w[TD_REASON_MAX];
    if (td__copy_req_from_call(call, &q) != 0) {
        td_reason_set(why, "vec_auto: the source is not a region");
        return TD_EDECLINED;
    }
    /* As TVM: G when it passes, else R. */
    if (td__copy_check_gs(&q, w, sizeof w))
        return emit_gs(call, &q, ir, why);
    return emit_reg(call, &q, ir, why);
}

const td_impl_desc td__variant_copy_vec_auto = {
    .name = "vec_auto",
    .emit = vec_auto_emit,
    .preds = vec_auto_preds,
    .npreds = sizeof vec_auto_preds / sizeof *vec_auto_preds,
};
