/*
 * The copy_async variant `dsmem` (upstream copy_async/dsmem.py, priority
 * 10): a shared -> shared copy from the issuing CTA into a peer CTA of its
 * cluster, by cp.async.bulk.shared::cluster.shared::cta completing on the
 * peer's mbarrier.  Its three predicates are TVM's (validate_copy_op,
 * single_thread, is_shared_to_shared, with TVM's texts); the registered
 * names are our own where copy already holds TVM's (validate_copy_op) and
 * the display names are TVM's.  single_thread is the TMA variants' check
 * with the same text, registered once by tma_auto (copy_async_tma.c): a
 * predicate name is one registration, and the rule names it.
 *
 * The plan is TVM's: the region's elements decomposed into strided shards
 * in both operands, the contiguous chain of each (from stride 1, the shard
 * whose stride is the running product, again and again), their common
 * prefix is one chunk of bytes, and the other shards are a loop nest
 * around one bulk copy per chunk.  Where TVM slices and groups the
 * TileLayouts, we read the layouts' storage offsets of the region's
 * elements (td__copy_phys) and factor them into shards; a layout that is
 * not strided over the region (a swizzle) has none and is declined.
 *
 * Our decisions beyond TVM (docs/copy_async.md, docs/upstream.md):
 * addresses are mapped with mapa.shared::cluster.u32 on shared addresses,
 * not mapa.u64 on generic ones truncated to 32 bits; the call needs
 * sm_90, a cluster launch and, for a constant peer, a rank inside the
 * cluster; every chunk starts 16-byte aligned in both operands; config
 * keys other than mbar and remote_cta_id are refused, not ignored.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "variants.h"

/* The most shards a region decomposes into (each at least 2 elements,
 * so at most log2 of the largest region in elements). */
#define MAX_SHARDS 40

typedef struct shard {
    int64_t extent;
    int64_t stride[2]; /* [0] source, [1] destination (elements) */
} shard;

typedef struct dsmem_plan {
    int nshards;
    shard sh[MAX_SHARDS];  /* outermost first */
    int64_t base[2];       /* storage offset of the first element */
    int nouter;
    int outer[MAX_SHARDS]; /* indices into sh, outermost first */
    int64_t chunk_elems;
    int elem_bytes;
} dsmem_plan;

/* ---- predicates (TVM's texts) ------------------------------------------ */

static bool valid_pred(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)args;
    (void)user;
    if (!td__copy_valid(call, why)) {
        td_reason_set(why, "not a valid copy op");
        return false;
    }
    return true;
}

static bool s2s_pred(const td_call *call, const td_args *args, void *user,
                     td_reason *why)
{
    (void)args;
    (void)user;
    if (call->nsrcs == 1 && call->srcs[0].kind == TD_OPERAND_REGION &&
        td__copy_is_shared(td__copy_src(call)) &&
        td__copy_is_shared(td__copy_dst(call)))
        return true;
    td_reason_set(why, "not a shared-to-shared copy");
    return false;
}

static const td_pred_desc dsmem_preds[] = {
    {.name = "dsmem_valid_copy_op", .fn = valid_pred,
     .shown_as = "validate_copy_op"},
    {.name = "is_shared_to_shared", .fn = s2s_pred},
};

/* ---- the plan ---------------------------------------------------------- */

/* Storage offset of the region's k-th element (row-major over the
 * region) in operand w (0 source, 1 destination). */
static bool elem_off(const td_call *call, int w, int64_t k, int64_t *off)
{
    const td_region *r = w == 0 ? td__copy_src_region(call) : &call->dst;
    return td__copy_phys(&call->buffers[r->buffer], td__copy_elem(call, r, k),
                         off);
}

/* Whether element m * step sits at m * stride from element 0 in both
 * operands. */
static bool affine_at(const td_call *call, int64_t step, int64_t m,
                      const int64_t *base, const int64_t *stride)
{
    for (int w = 0; w < 2; w++) {
        int64_t o;
        if (!elem_off(call, w, m * step, &o) || o != base[w] + m * stride[w])
            return false;
    }
    return true;
}

/* Factors the region (squeezed extents ext[0..n), outermost first) into
 * strided shards, each dimension inner part first; then checks that every
 * element sits where its shard digits say.  False: not strided. */
static bool factor(const td_call *call, const int64_t *ext, int n,
                   dsmem_plan *p)
{
    shard tmp[MAX_SHARDS];
    int nt = 0;
    int64_t step = 1; /* elements per index step of dimension d */
    for (int d = n - 1; d >= 0; d--) {
        int first = nt;
        int64_t pos = 1;
        while (pos < ext[d]) {
            int64_t s[2], at[2];
            for (int w = 0; w < 2; w++)
                if (!elem_off(call, w, 0, &p->base[w]) ||
                    !elem_off(call, w, pos * step, &at[w]))
                    return false;
            for (int w = 0; w < 2; w++)
                s[w] = at[w] - p->base[w];
            if (s[0] <= 0 || s[1] <= 0 || nt == MAX_SHARDS)
                return false;
            /* How far both operands step evenly, then the largest extent
             * not beyond it that divides what is left. */
            int64_t left = ext[d] / pos, run = 2;
            while (run < left && affine_at(call, pos * step, run, p->base, s))
                run++;
            int64_t a = run;
            while (a > 1 && left % a != 0)
                a--;
            if (a < 2)
                return false;
            tmp[nt++] = (shard){a, {s[0], s[1]}};
            pos *= a;
        }
        /* This dimension's shards were found inner first: outer first. */
        for (int i = first, j = nt - 1; i < j; i++, j--) {
            shard t = tmp[i];
            tmp[i] = tmp[j];
            tmp[j] = t;
        }
        step *= ext[d];
        /* Dimensions were walked innermost first: keep the outermost
         * shards in front by prepending this dimension's group. */
        shard grp[MAX_SHARDS];
        int ng = nt - first;
        memcpy(grp, tmp + first, sizeof *grp * (size_t)ng);
        memmove(tmp + ng, tmp, sizeof *tmp * (size_t)first);
        memcpy(tmp, grp, sizeof *grp * (size_t)ng);
    }
    p->nshards = nt;
    memcpy(p->sh, tmp, sizeof *tmp * (size_t)nt);
    for (int w = 0; w < 2; w++)
        if (!elem_off(call, w, 0, &p->base[w]))
            return false;
    /* Every element where its digits say (a swizzle fails here). */
    int64_t total = 1;
    for (int i = 0; i < nt; i++)
        total *= p->sh[i].extent;
    for (int64_t k = 0; k < total; k++) {
        int64_t want[2] = {p->base[0], p->base[1]}, rest = k;
        for (int i = nt - 1; i >= 0; i--) {
            int64_t dgt = rest % p->sh[i].extent;
            rest /= p->sh[i].extent;
            want[0] += dgt * p->sh[i].stride[0];
            want[1] += dgt * p->sh[i].stride[1];
        }
        for (int w = 0; w < 2; w++) {
            int64_t o;
            if (!elem_off(call, w, k, &o) || o != want[w])
                return false;
        }
    }
    return true;
}

/* TVM's find_contiguous_region over operand w's strides: from stride 1,
 * the first shard (in order) whose stride is the running product. */
static int chain(const dsmem_plan *p, int w, int *idx)
{
    bool used[MAX_SHARDS] = {false};
    int n = 0;
    int64_t expect = 1;
    for (;;) {
        int found = -1;
        for (int i = 0; i < p->nshards && found < 0; i++)
            if (!used[i] && p->sh[i].stride[w] == expect)
                found = i;
        if (found < 0)
            return n;
        used[found] = true;
        idx[n++] = found;
        expect *= p->sh[found].extent;
    }
}

static const char *buf_name(const td_call *call, const td_region *r, int *n)
{
    const char *s = call->buffers[r->buffer].name;
    *n = (int)strnlen(s, TD_NAME_MAX);
    return s;
}

/* The plan, or TD_EDECLINED with TVM's reason (or ours) in why. */
static int plan(const td_call *call, dsmem_plan *p, td_reason *why)
{
    memset(p, 0, sizeof *p);
    int64_t ext[TD_MAX_RANK];
    int n = td__copy_squeeze(&call->dst, ext, NULL);
    p->elem_bytes = td_dtype_bits(td__copy_dst(call)->dtype) / 8;
    if (p->elem_bytes <= 0) {
        td_reason_set(why, "dsmem: sub-byte elements cannot be copied in "
                           "bytes");
        return TD_EDECLINED;
    }
    if (!factor(call, ext, n, p)) {
        int nm;
        const char *s = buf_name(call, td__copy_src_region(call), &nm);
        int dm;
        const char *d = buf_name(call, &call->dst, &dm);
        td_reason_set(why,
                      "dsmem: the layouts of %.*s and %.*s are not strided "
                      "over the region (a swizzle or a thread axis), so "
                      "no chunk of bytes is contiguous in both",
                      nm, s, dm, d);
        return TD_EDECLINED;
    }
    int si[MAX_SHARDS], di[MAX_SHARDS];
    int ns = chain(p, 0, si), nd = chain(p, 1, di);
    int nc = 0;
    while (nc < ns && nc < nd && si[nc] == di[nc])
        nc++;
    bool in[MAX_SHARDS] = {false};
    p->chunk_elems = 1;
    for (int i = 0; i < nc; i++) {
        in[si[i]] = true;
        p->chunk_elems *= p->sh[si[i]].extent;
    }
    int64_t bytes = p->chunk_elems * p->elem_bytes;
    if (bytes < 16 || bytes % 16 != 0) {
        td_reason_set(why,
                      "Layouts not compatible for bulk DSMEM copy: "
                      "chunk_bytes=%lld (need >= 16 and multiple of 16)",
                      (long long)bytes);
        return TD_EDECLINED;
    }
    for (int i = 0; i < p->nshards; i++)
        if (!in[i])
            p->outer[p->nouter++] = i;
    /* cp.async.bulk needs 16-byte aligned addresses: every chunk's start,
     * the base plus any sum of outer strides, in both operands (A10). */
    for (int w = 0; w < 2; w++) {
        const td_region *r = w == 0 ? td__copy_src_region(call) : &call->dst;
        int nm;
        const char *s = buf_name(call, r, &nm);
        int64_t bad = -1;
        if (p->base[w] * p->elem_bytes % 16 != 0)
            bad = p->base[w] * p->elem_bytes;
        for (int j = 0; j < p->nouter && bad < 0; j++)
            if (p->sh[p->outer[j]].stride[w] * p->elem_bytes % 16 != 0)
                bad = (p->base[w] + p->sh[p->outer[j]].stride[w]) *
                      p->elem_bytes;
        if (bad >= 0) {
            td_reason_set(why,
                          "dsmem: a chunk of %.*s starts at byte %lld, not "
                          "16-byte aligned (cp.async.bulk needs 16-byte "
                          "aligned addresses; TVM issues it regardless)",
                          nm, s, (long long)bad);
            return TD_EDECLINED;
        }
    }
    return 0;
}

/* ---- the config -------------------------------------------------------- */

static bool known_key(const char *k)
{
    /* The program generator's keys (kernel_specials) are no variant's. */
    return strncmp(k, "kernel_", 7) == 0 ||
           strncmp(k, "mbar", TD_NAME_MAX) == 0 ||
           strncmp(k, "remote_cta_id", TD_NAME_MAX) == 0;
}

/* TVM's two missing-key declines, then ours: the arch, the cluster, the
 * peer's rank, the barrier's buffer, keys dsmem does not read. */
static int check_config(const td_call *call, td_reason *why)
{
    const td_config_entry *rk = td_call_config(call, "remote_cta_id");
    const td_config_entry *mb = td_call_config(call, "mbar");
    if (rk == NULL) {
        td_reason_set(why, "remote_cta_id not set in config");
        return TD_EDECLINED;
    }
    if (mb == NULL) {
        td_reason_set(why, "mbar not set in config");
        return TD_EDECLINED;
    }
    if (call->sm_version < 90) {
        td_reason_set(why, "dsmem requires sm_90 or newer, got %.*s",
                      call->sm_version == 0 ? 7
                                            : (int)strnlen(call->arch,
                                                           TD_NAME_MAX),
                      call->sm_version == 0 ? "unknown" : call->arch);
        return TD_EDECLINED;
    }
    int64_t size = (int64_t)call->cluster[0] * call->cluster[1] *
                   call->cluster[2];
    if (size <= 0) {
        td_reason_set(why, "dsmem: the call has no cluster launch (launch: "
                           "{cluster: [2, 1, 1]}); a cluster copy writes "
                           "into another CTA of the issuing CTA's cluster");
        return TD_EDECLINED;
    }
    if (rk->kind == TD_VALUE_INT && (rk->i < 0 || rk->i >= size)) {
        td_reason_set(why, "dsmem: remote_cta_id %lld is not a CTA of the "
                           "cluster of %lld",
                      (long long)rk->i, (long long)size);
        return TD_EDECLINED;
    }
    if (rk->kind != TD_VALUE_INT && rk->kind != TD_VALUE_EXPR &&
        rk->kind != TD_VALUE_STRING) {
        td_reason_set(why, "dsmem: remote_cta_id must be an integer, an int "
                           "parameter's name or an expression");
        return TD_EDECLINED;
    }
    if (mb->kind != TD_VALUE_ELEM || mb->elem_buffer < 0 ||
        mb->elem_buffer >= call->nbuffers ||
        !td__copy_is_shared(&call->buffers[mb->elem_buffer]) ||
        (call->buffers[mb->elem_buffer].dtype != TD_U64 &&
         call->buffers[mb->elem_buffer].dtype != TD_I64)) {
        td_reason_set(why, "dsmem: mbar must be an element of a shared "
                           "uint64 buffer the call declares (\"mbar[0]\")");
        return TD_EDECLINED;
    }
    for (int i = 0; i < call->nconfig; i++) {
        const char *k = call->config[i].key;
        if (!known_key(k)) {
            td_reason_set(why,
                          "dsmem: unknown config key '%.*s' (TVM ignores it "
                          "silently); dsmem reads mbar, remote_cta_id",
                          (int)strnlen(k, TD_NAME_MAX), k);
            return TD_EDECLINED;
        }
    }
    return 0;
}

/* The peer's rank as an int32 expression. */
static td_expr *rank(const td_call *call, td_ir *ir, td_reason *why)
{
    const td_config_entry *e = td_call_config(call, "remote_cta_id");
    if (e->kind == TD_VALUE_EXPR)
        return td__config_expr(ir, call, e, -1, why);
    if (e->kind == TD_VALUE_STRING)
        return td_param(ir, e->s, TD_I32);
    return td_int(ir, e->i);
}

/* ---- emission ---------------------------------------------------------- */

static const char *const note =
    "the copy completes on the peer's barrier: the peer CTA arms its own "
    "%.*s with mbarrier.arrive.expect_tx(%lld bytes) and waits on it; this "
    "CTA writes %.*s, then fence.proxy.async.shared::cta, before the copy; "
    "every CTA of the cluster places %.*s and %.*s at the same shared "
    "offsets (mapa maps this CTA's addresses), inits its barrier before a "
    "cluster sync, and exits only after a cluster sync";

static int dsmem_emit(const td_call *call, const td_op_desc *op,
                      const void *unused, td_ir *ir, void *user,
                      td_reason *why)
{
    (void)op;
    (void)unused;
    (void)user;
    dsmem_plan p;
    int rc = check_config(call, why);
    if (rc == 0)
        rc = plan(call, &p, why);
    if (rc != 0)
        return rc;
    const td_config_entry *mb = td_call_config(call, "mbar");
    const td_region *sr = td__copy_src_region(call);
    int mi = -1;
    td_expr *midx = td__config_elem_index(ir, call, mb, &mi, why);
    if (midx == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_ir_buf *sb = td__copy_declare(call, sr->buffer, ir, why);
    /* One buffer may be both: a tile copied into another part of the
     * peer's copy of the same buffer. */
    td_ir_buf *db = sb == NULL                      ? NULL
                    : call->dst.buffer == sr->buffer ? sb
                                                     : td__copy_declare(
                                                           call,
                                                           call->dst.buffer,
                                                           ir, why);
    td_ir_buf *mbuf = NULL;
    if (db != NULL)
        mbuf = mi == sr->buffer        ? sb
               : mi == call->dst.buffer ? db
                                        : td__copy_declare(call, mi, ir, why);
    td_expr *r1 = mbuf != NULL ? rank(call, ir, why) : NULL;
    td_expr *r2 = r1 != NULL ? rank(call, ir, why) : NULL;
    if (r2 == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    td_var *rbar = td_ir_mapa(ir, "remote_mbar", (td_ir_addr){mbuf, midx}, r1);
    td_expr *off[2] = {td_int(ir, p.base[0]), td_int(ir, p.base[1])};
    /* TVM's T.grid over the outer shards; a short loop is unrolled (fewer
     * address computations at run time). */
    for (int j = 0; j < p.nouter; j++) {
        const shard *s = &p.sh[p.outer[j]];
        char name[16];
        snprintf(name, sizeof name, "c%d", j);
        td_var *v = td_ir_for(ir, name, td_int(ir, s->extent),
                              s->extent <= 8 ? TD_LOOP_UNROLL
                                             : TD_LOOP_SERIAL);
        for (int w = 0; w < 2; w++)
            off[w] = td_add(ir, off[w],
                            td_mul(ir, td_var_ref(ir, v),
                                   td_int(ir, s->stride[w])));
    }
    td_var *dst = td_ir_mapa(ir, "cluster_dst", (td_ir_addr){db, off[1]}, r2);
    td_ir_bulk_s2c(ir, td_var_ref(ir, dst), (td_ir_addr){sb, off[0]},
                   td_int(ir, p.chunk_elems * p.elem_bytes),
                   td_var_ref(ir, rbar));
    for (int j = 0; j < p.nouter; j++)
        td_ir_end_for(ir);
    rc = td_ir_status(ir);
    if (rc != 0)
        return rc;
    int mn, sn, dn;
    const char *m = buf_name(call, &(td_region){.buffer = mi}, &mn);
    const char *s = buf_name(call, sr, &sn);
    const char *d = buf_name(call, &call->dst, &dn);
    td_reason_set(why, note, mn, m,
                  (long long)(td_region_size(&call->dst) * p.elem_bytes), sn,
                  s, mn, m, dn, d);
    return 0;
}

const td_impl_desc td__variant_copy_async_dsmem = {
    .name = "dsmem",
    .emit = dsmem_emit,
    .preds = dsmem_preds,
    .npreds = sizeof dsmem_preds / sizeof *dsmem_preds,
};
