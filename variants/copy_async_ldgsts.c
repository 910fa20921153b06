/*
 * The copy_async variant `ldgsts` (upstream copy_async/ldgsts.py, priority
 * 20): global -> shared copies by `cp.async` (SASS LDGSTS) in pieces of 4,
 * 8 or 16 bytes.  Its predicate ldgsts_applicable runs TVM's checks in
 * TVM's order with TVM's reasons (target, scope, threads, validate_copy_op,
 * the one scope pair, the thread split), then ours: the config keys it
 * reads and their values, the mbarrier it would never arrive on, the
 * direct form's region.  The emitter shares vec_auto's plan (copy_plan.c)
 * with the widths cp.async can move and issues one cp.async per round of
 * each thread, or, with `direct`, one from the region starts.  Nothing
 * waits: the caller commits the group, waits on it and synchronises the
 * threads before reading the tile, as TVM's ldgsts leaves it.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "copy_plan.h"
#include "variants.h"

/* cp.async moves 4, 8 or 16 bytes (TVM's _LDGSTS_VEC_BITS). */
static const int ldgsts_bits[] = {128, 64, 32};

/* The config keys ldgsts reads; TVM takes any other silently. */
static const char *const known_keys[] = {"direct", "prefetch_size",
                                         "predicate", "fill_mode"};

static bool known_key(const char *k)
{
    /* The program generator's keys (kernel_specials) are no variant's. */
    if (strncmp(k, "kernel_", 7) == 0)
        return true;
    for (size_t i = 0; i < sizeof known_keys / sizeof *known_keys; i++)
        if (strncmp(k, known_keys[i], TD_NAME_MAX) == 0)
            return true;
    return false;
}

static bool cfg_true(const td_config_entry *e)
{
    if (e == NULL)
        return false;
    return e->kind == TD_VALUE_BOOL ? e->b : e->kind == TD_VALUE_INT && e->i != 0;
}

/* The region's bytes when they are one run in storage (row-major over the
 * region, through the buffer's layout and swizzle) starting at *off
 * (elements); -1 otherwise. */
static int64_t run_bytes(const td_call *call, const td_region *r,
                         int64_t *off)
{
    const td_buffer *b = &call->buffers[r->buffer];
    int64_t n = td_region_size(r), first = 0;
    if (n <= 0 || n > 16)
        return -1;
    for (int64_t k = 0; k < n; k++) {
        int64_t o;
        if (!td__copy_phys(b, td__copy_elem(call, r, k), &o))
            return -1;
        if (k == 0)
            first = o;
        else if (o != first + k)
            return -1;
    }
    *off = first;
    return n * td_dtype_bits(b->dtype) / 8;
}

/* direct=True: TVM's thread-scope form, one cp.async from the region
 * starts; TVM checks only the element count, we check that both regions
 * are one run of 4, 8 or 16 bytes at an address of that alignment. */
static bool direct_ok(const td_call *call, td_reason *why)
{
    const td_region *sr = td__copy_src_region(call), *dr = &call->dst;
    const td_buffer *d = td__copy_dst(call);
    int eb = td_dtype_bits(d->dtype);
    int64_t n = td_region_size(dr);
    if (call->scope != TD_SCOPE_THREAD) {
        td_reason_set(why, "ldgsts direct=True is only valid in thread scope");
        return false;
    }
    int64_t cp = n * eb / 8;
    if (n * eb % 8 != 0 || (cp != 4 && cp != 8 && cp != 16)) {
        td_reason_set(why,
                      "ldgsts direct=True requires a 4/8/16-byte region, got "
                      "%lld elements of %d bits",
                      (long long)n, eb);
        return false;
    }
    const td_region *rs[2] = {dr, sr};
    for (int i = 0; i < 2; i++) {
        const td_buffer *b = &call->buffers[rs[i]->buffer];
        int nm = (int)strnlen(b->name, TD_NAME_MAX);
        int64_t off = 0;
        if (run_bytes(call, rs[i], &off) != cp) {
            td_reason_set(why,
                          "ldgsts direct=True: region of %.*s is not one run "
                          "of %lld bytes in memory (TVM copies %lld bytes "
                          "from its first element regardless)",
                          nm, b->name, (long long)cp, (long long)cp);
            return false;
        }
        if (off * eb / 8 % cp != 0) {
            td_reason_set(why,
                          "ldgsts direct=True: region of %.*s starts at byte "
                          "%lld, not %lld-byte aligned",
                          nm, b->name, (long long)(off * eb / 8),
                          (long long)cp);
            return false;
        }
        /* What the block ids add must keep every block's start aligned. */
        int64_t blk = td__region_block_align(call, rs[i]);
        if (blk > 0 && blk * eb / 8 % cp != 0) {
            bool dyn = td__region_dynamic(rs[i]);
            td_reason_set(why,
                          "ldgsts direct=True: region of %.*s is not "
                          "%lld-byte aligned in every %s (the %s move its "
                          "start by a multiple of %lld bytes)",
                          nm, b->name, (long long)cp,
                          dyn ? "block and for every scalar value" : "block",
                          dyn ? "block ids and scalars" : "block ids",
                          (long long)(blk * eb / 8));
            return false;
        }
    }
    return true;
}

/* Our checks of the config, after TVM's: keys we do not read, the
 * mbarrier, and values PTX cannot spell. */
static bool config_ok(const td_call *call, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "mbar");
    if (e != NULL) {
        td_reason_set(why,
                      "ldgsts does not arrive on an mbarrier; TVM takes the "
                      "call and never arrives on it, so a thread waiting "
                      "on it hangs (drop mbar and wait with "
                      "cp.async.wait_group, or use a TMA copy)");
        return false;
    }
    for (int i = 0; i < call->nconfig; i++) {
        const char *k = call->config[i].key;
        if (!known_key(k)) {
            td_reason_set(why,
                          "ldgsts: unknown config key '%.*s' (TVM ignores it "
                          "silently); ldgsts reads direct, prefetch_size, "
                          "predicate, fill_mode",
                          (int)strnlen(k, TD_NAME_MAX), k);
            return false;
        }
    }
    e = td_call_config(call, "prefetch_size");
    if (e != NULL && !(e->kind == TD_VALUE_INT &&
                       (e->i == -1 || e->i == 64 || e->i == 128 ||
                        e->i == 256))) {
        td_reason_set(why, "ldgsts: prefetch_size must be 64, 128 or 256 "
                           "bytes (PTX .L2::64B/128B/256B) or -1 for none; "
                           "TVM takes the call and fails while lowering it "
                           "(KeyError on the qualifier)");
        return false;
    }
    e = td_call_config(call, "fill_mode");
    if (e != NULL && !(e->kind == TD_VALUE_STRING &&
                       (e->s[0] == '\0' || strcmp(e->s, "zero") == 0))) {
        td_reason_set(why, "ldgsts: fill_mode must be \"zero\" or \"\"; TVM "
                           "treats any other value as no fill");
        return false;
    }
    e = td_call_config(call, "predicate");
    if (e != NULL && ((e->kind == TD_VALUE_STRING && e->s[0] == '\0') ||
                      e->kind == TD_VALUE_ELEM)) {
        td_reason_set(why, "ldgsts: predicate must name an int parameter, "
                           "be a constant or an expression (not a buffer "
                           "element)");
        return false;
    }
    for (int i = 0; e != NULL && e->kind == TD_VALUE_EXPR && i < e->expr.n &&
                    i < TD_MAX_EXPR_NODES;
         i++) {
        const td_cx_node *x = &e->expr.node[i];
        if (x->op == TD_CX_ID && x->v >= TD_AXIS_CBX) {
            td_reason_set(why, "ldgsts: predicate uses the cluster id %s, "
                               "which ldgsts cannot compute (it launches "
                               "no cluster)",
                          td_axis_name((td_axis)x->v));
            return false;
        }
    }
    e = td_call_config(call, "direct");
    if (e != NULL && e->kind == TD_VALUE_STRING) {
        td_reason_set(why, "ldgsts: direct must be true or false");
        return false;
    }
    return true;
}

static bool ldgsts_pred(const td_call *call, const td_args *args, void *user,
                        td_reason *why)
{
    (void)args;
    (void)user;
    static const char *const pairs[] = {"global", "shared*", NULL};
    td_copy_req q;
    char w[TD_REASON_MAX];
    if (td__copy_req_from_call(call, &q) != 0) {
        td_reason_set(why, "ldgsts: the source is not a region");
        return false;
    }
    if (!q.cuda) {
        td_reason_set(why, "non-cuda target");
        return false;
    }
    if (q.scope == TD_SCOPE_CLUSTER || q.scope >= TD_SCOPE_COUNT) {
        td_reason_set(why, "unsupported exec_scope %s",
                      td_exec_scope_name(q.scope));
        return false;
    }
    if (!td__copy_threads_active(&q, w, sizeof w) ||
        !td__copy_req_valid(&q, w, sizeof w) ||
        !td__copy_scope_allowed(&q, pairs, w, sizeof w)) {
        td_reason_set(why, "%s", w);
        return false;
    }
    /* TVM's _divides_thread_cnt_ldgsts, with the scope's real thread
     * count (TVM's cta count is 32 * (threadIdx.x // 32): deviation D1). */
    int64_t t = td__copy_thread_count(&q);
    if (t <= 0) {
        td_reason_set(why, "degenerate thread_cnt=%lld (scope has empty "
                           "intra)",
                      (long long)t);
        return false;
    }
    int64_t n = td_region_size(td__copy_src_region(call));
    if (n % t != 0) {
        td_reason_set(why, "region size %lld not divisible by thread_cnt=%lld",
                      (long long)n, (long long)t);
        return false;
    }
    if (!config_ok(call, why))
        return false;
    if (cfg_true(td_call_config(call, "direct")) && !direct_ok(call, why))
        return false;
    return true;
}

static const td_pred_desc ldgsts_preds[] = {
    {.name = "ldgsts_applicable", .fn = ldgsts_pred},
};

/* The guard: a named int parameter, a constant or an expression over the
 * call's scalars and ids (TVM's predicate expression); NULL when there is
 * none (TVM's default -1).  ldgsts_applicable refused the expressions
 * td__config_expr cannot build. */
static td_expr *guard(const td_call *call, td_ir *ir, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "predicate");
    if (e == NULL)
        return NULL;
    if (e->kind == TD_VALUE_EXPR)
        return td__config_expr(ir, call, e, -1, why);
    if (e->kind == TD_VALUE_STRING)
        return td_param(ir, e->s, TD_I32);
    int64_t v = e->kind == TD_VALUE_BOOL ? (int64_t)e->b : e->i;
    return v == -1 ? NULL : td_int(ir, v);
}

/* The chain's qualifiers and guard; TD_EDECLINED (why says) when the
 * guard expression cannot be built. */
static int settings(const td_call *call, td_ir *ir, td_ptx_cp_async *c,
                    td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "prefetch_size");
    int64_t pf = e != NULL ? e->i : -1;
    c->prefetch = pf == 64    ? TD_PTX_PREFETCH_64B
                  : pf == 128 ? TD_PTX_PREFETCH_128B
                  : pf == 256 ? TD_PTX_PREFETCH_256B
                              : TD_PTX_PREFETCH_NONE;
    c->pred = guard(call, ir, why);
    const td_config_entry *pe = td_call_config(call, "predicate");
    if (c->pred == NULL && pe != NULL && pe->kind == TD_VALUE_EXPR)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    e = td_call_config(call, "fill_mode");
    c->zfill = c->pred != NULL && e != NULL && strcmp(e->s, "zero") == 0;
    return 0;
}

static const char *const note =
    "cp.async is asynchronous and nothing waits: before any thread reads "
    "%.*s the caller commits the group (cp.async.commit_group), waits "
    "(cp.async.wait_group 0 or wait_all) and synchronises the threads "
    "(__syncthreads())";

static int emit_direct(const td_call *call, td_ir *ir, td_reason *why)
{
    const td_region *sr = td__copy_src_region(call), *dr = &call->dst;
    td_ir_buf *gb = td__copy_declare(call, sr->buffer, ir, why);
    td_ir_buf *sb = gb != NULL ? td__copy_declare(call, dr->buffer, ir, why)
                               : NULL;
    if (gb == NULL || sb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    int64_t so = 0, go = 0;
    int64_t cp = run_bytes(call, dr, &so);
    if (cp < 0 || run_bytes(call, sr, &go) != cp)
        return TD_EDECLINED;
    /* A block-tiled source: the block ids' offset first, as in the
     * loop form. */
    td_expr *blk = td__region_block_offset(ir, call, sr);
    td_expr *src_off = td_int(ir, go);
    if (blk != NULL)
        src_off = go != 0 ? td_add(ir, blk, src_off) : blk;
    td_ptx_cp_async c = {.dst = sb, .dst_offset = td_int(ir, so),
                         .src = gb, .src_offset = src_off,
                         .bytes = (int)cp};
    int rc = settings(call, ir, &c, why);
    if (rc != 0)
        return rc;
    td_ir_cp_async(ir, &c);
    return td_ir_status(ir);
}

static int ldgsts_emit(const td_call *call, const td_op_desc *op,
                       const void *plan, td_ir *ir, void *user,
                       td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    const td_buffer *d = td__copy_dst(call);
    int rc;
    if (cfg_true(td_call_config(call, "direct"))) {
        rc = emit_direct(call, ir, why);
    } else {
        td_copy_req q;
        td_copy_gs_plan p;
        char w[TD_REASON_MAX];
        if (td__copy_req_from_call(call, &q) != 0)
            return TD_EDECLINED;
        rc = td__copy_plan_gs_bits(&q, ldgsts_bits, 3, &p, w, sizeof w);
        if (rc != 0) {
            td_reason_set(why, "%s", w);
            return rc == TD_ENOMATCH ? TD_EDECLINED : rc;
        }
        int64_t cp = p.vec * p.elem_bits / 8;
        if (p.vec * p.elem_bits % 8 != 0 || (cp != 4 && cp != 8 && cp != 16)) {
            td_reason_set(why, "ldgsts: cannot find a cp.async-compatible "
                               "vec_len for elem_bits=%d",
                          p.elem_bits);
            return TD_EDECLINED;
        }
        const td_region *sr = td__copy_src_region(call);
        td_ir_buf *gb = td__copy_declare(call, sr->buffer, ir, why);
        td_ir_buf *sb = gb != NULL
                            ? td__copy_declare(call, call->dst.buffer, ir, why)
                            : NULL;
        if (gb == NULL || sb == NULL)
            return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
        /* TVM's `for f in T.unroll(total_outer)`: its UnrollLoop pass
         * writes the rounds out with f a constant in each.  A serial loop
         * here cost the two-stage GEMM (bench/gpu/gemm, td2) 28 bytes of
         * ptxas spill at 255 registers; see docs/performance.md. */
        td_var *gv, *sv;
        td__copy_gs_loop(call, &p, TD_LOOP_UNROLL, ir, &gv, &sv);
        td_ptx_cp_async c = {.dst = sb, .dst_offset = td_var_ref(ir, sv),
                             .src = gb, .src_offset = td_var_ref(ir, gv),
                             .bytes = (int)cp};
        rc = settings(call, ir, &c, why);
        if (rc != 0)
            return rc;
        td_ir_cp_async(ir, &c);
        td_ir_end_for(ir);
        rc = td_ir_status(ir);
    }
    if (rc != 0)
        return rc;
    td_reason_set(why, note, (int)strnlen(d->name, TD_NAME_MAX), d->name);
    return 0;
}

const td_impl_desc td__variant_copy_async_ldgsts = {
    .name = "ldgsts",
    .emit = ldgsts_emit,
    .preds = ldgsts_preds,
    .npreds = sizeof ldgsts_preds / sizeof *ldgsts_preds,
};
