/*
 * Self-checking programs for cluster copies (variant dsmem: shared ->
 * shared into a peer CTA of the cluster by mapa and cp.async.bulk
 * shared::cluster, completing on the peer's mbarrier): the family's hooks
 * (td__kp_dsmem).  A cluster copy is a copy, so the program checks what
 * the copy family's programs check with the copy family's tables,
 * generator and check (kernel_copy.c, through its hook table): every dst
 * position of every CTA holds its source element's bits or what it held
 * before, the source comes back unchanged, the guards after every buffer
 * stay.  What this family adds:
 *
 *   - one scope instance per CTA, launched as clusters
 *     (cudaLaunchKernelEx, kernel.c and write.c); thread 0 issues;
 *   - the peer table: config remote_cta_id evaluated for every CTA (its
 *     block and cluster ids, the scalars' values) gives the CTA it copies
 *     into; the map must be one-to-one within each cluster (a CTA nobody
 *     copies into would wait forever, one copied into twice would expect
 *     the bytes once), and the reference of a CTA reads the source of the
 *     CTA that copies into it (td_ds_from);
 *   - the caller's protocol of docs/copy_async.md, printed from the IR's
 *     own nodes, outside the marked braces of the body: every thread
 *     fences its staging writes for the async proxy and the block syncs;
 *     thread 0 initialises its barrier (count 1) and fences the init for
 *     the cluster; the block syncs; a cluster sync (every CTA's barrier
 *     exists before any peer's copy completes on it); thread 0 arms its
 *     own barrier with expect_tx(the region's bytes) and runs the body
 *     (which copies into the peer and completes on the peer's barrier);
 *     every thread waits for phase 0 of its own barrier; a cluster sync
 *     (no CTA leaves while a peer still copies out of it);
 *   - when the data arrives (docs/verification.md, "Cluster copies: a
 *     wrong barrier"): thread 0 of cluster rank r issues after r * 20 us
 *     (td_ds_stagger), every thread snapshots the dst's storage right
 *     after its wait; after the closing sync the snapshot is written back
 *     for the host to check, and a byte that changed after the wait sets
 *     the dst's guard flag to 2;
 *   - one buffer holding both tiles (a row copied into another row of the
 *     peer's copy of the buffer): the buffer is source and dst; outside
 *     the dst region every element must keep the CTA's own value;
 *   - a program that runs several sets of the scalars' values (the copy
 *     family's) takes the round's set (td_ds_set): the barrier config
 *     mbar names and the peer map are those of the set (td_ds_mbar_dev,
 *     td_ds_from_set, the host's pick before each check);
 *   - 16- and 8-bit floats are staged as unsigned integers of their
 *     width (bits are copied, never looked at), as the TMA programs do.
 *
 * Refused with a reason ("has no self-checking program yet"): a peer
 * rank that names a kernel parameter (its value is the caller's), one
 * that leaves the cluster, or a peer map that is not one-to-one (a thread
 * id in the rank reads 0: thread 0 issues).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kp.h"
#include "kp_fragments.h"
#include "model.h"

typedef struct ds_plan {
    int src, dst;           /* staged buffers (the same: one buffer) */
    bool one;               /* one buffer holds both tiles */
    int64_t bytes;          /* the bytes each CTA receives (one phase) */
    char mbar[TD_NAME_MAX]; /* the barrier's buffer */
    int64_t mbar_off;       /* its byte offset in dynamic shared memory */
    int64_t snap_off;       /* the dst's snapshot after the wait: offset */
    int64_t snap_bytes;     /* and bytes (the dst's storage) */
    int *from;              /* per instance: the instance copying into it
                               (per set, nsets rows of nblocks) */
    /* Several sets of the scalars' values (kp_plan.nsv > 1): the kernel
     * takes the round's set (td_ds_set); the barrier config mbar names
     * and the peer map are those of that set. */
    bool per_set;
    int nsets;              /* rows of from and midx (at least 1) */
    int64_t midx[KP_MAX_SV];
    td_buf prelude;         /* the protocol's helpers (file scope) */
    char *fence, *init, *sync, *arm, *wait;
    td_buffer raw[2];       /* staged copies of 16/8-bit float buffers */
} ds_plan;

static ds_plan *ds_of(const kp_plan *p)
{
    return (ds_plan *)p->ext;
}

static int ds_refuse(kp_plan *p, td_diag *diag, const char *fmt, long long a,
                     long long b)
{
    char why[256];
    snprintf(why, sizeof why, fmt, a, b);
    return td__kp_fail(diag, p->call, TD_EINVAL,
                       "variant %s copies into a peer CTA of the cluster "
                       "and has no self-checking program yet: %s; "
                       "`tiledispatch emit` prints its body",
                       p->variant, why);
}

/* The storage type of a 16- or 8-bit float buffer (bits only). */
static td_dtype ds_raw_dtype(td_dtype t)
{
    if (td_dtype_is_float(t) && td_dtype_bits(t) == 16)
        return TD_U16;
    if (td_dtype_is_float(t) && td_dtype_bits(t) == 8)
        return TD_U8;
    return t;
}

/* The barrier: config mbar names an element of a shared uint64 buffer
 * (the variant checked it); its index a constant at the scalars'
 * values. */
static int ds_mbar(kp_plan *p, ds_plan *c, const int64_t *sv, td_diag *diag,
                   int64_t *index, const td_buffer **buf)
{
    const td_call *call = p->call;
    const td_config_entry *e = td_call_config(call, "mbar");
    if (e == NULL || e->kind != TD_VALUE_ELEM || e->elem_buffer < 0 ||
        e->elem_buffer >= call->nbuffers)
        return ds_refuse(p, diag, "config mbar is not an element of a "
                                  "shared buffer", 0, 0);
    const td_buffer *b = &call->buffers[e->elem_buffer];
    int64_t idx = 0, stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        int64_t v = 0;
        if (!td__cexpr_eval(call, &e->expr, e->elem_index[d], sv, &v))
            return ds_refuse(p, diag, "config mbar's index is not a "
                                      "constant", 0, 0);
        if (v < 0 || v >= b->shape[d])
            return ds_refuse(p, diag, "config mbar's index is out of its "
                                      "buffer", 0, 0);
        idx += v * stride;
        stride *= b->shape[d];
    }
    td__strlcpy(c->mbar, b->name, sizeof c->mbar);
    *index = idx;
    *buf = b;
    return 0;
}

/* The peer table at set `set` of the scalars' values sv: remote_cta_id
 * for every CTA, mapped to instances. */
static int ds_peers(kp_plan *p, ds_plan *c, const int64_t *sv, int set,
                    td_diag *diag)
{
    const td_call *call = p->call;
    const td_config_entry *e = td_call_config(call, "remote_cta_id");
    if (e == NULL || (e->kind != TD_VALUE_INT && e->kind != TD_VALUE_EXPR))
        return ds_refuse(p, diag, "remote_cta_id is not a number or an "
                                  "expression of the ids and scalars (a "
                                  "kernel parameter's value is the "
                                  "caller's)", 0, 0);
    int *from = c->from + (int64_t)set * p->nblocks;
    const int64_t *g = p->grid, *cl = p->cluster;
    for (int64_t blk = 0; blk < p->nblocks; blk++) {
        int64_t id[TD_AXIS_COUNT] = {0};
        int64_t b[3] = {blk % g[0], blk / g[0] % g[1], blk / (g[0] * g[1])};
        int64_t cb[3] = {b[0] % cl[0], b[1] % cl[1], b[2] % cl[2]};
        id[TD_AXIS_BX] = b[0];
        id[TD_AXIS_BY] = b[1];
        id[TD_AXIS_BZ] = b[2];
        id[TD_AXIS_CBX] = cb[0];
        id[TD_AXIS_CBY] = cb[1];
        id[TD_AXIS_CBZ] = cb[2];
        /* Thread 0 issues: the thread ids are 0 (already). */
        int64_t r = e->i;
        if (e->kind == TD_VALUE_EXPR &&
            !td__cexpr_eval_ids(call, &e->expr, e->expr.n - 1, sv, id, &r))
            return ds_refuse(p, diag, "remote_cta_id cannot be evaluated "
                                      "for CTA %lld", (long long)blk, 0);
        if (r < 0 || r >= p->csize)
            return ds_refuse(p, diag, "remote_cta_id is %lld for CTA %lld, "
                                      "outside its cluster",
                             (long long)r, (long long)blk);
        int64_t pb[3] = {b[0] - cb[0] + r % cl[0],
                         b[1] - cb[1] + r / cl[0] % cl[1],
                         b[2] - cb[2] + r / (cl[0] * cl[1])};
        int64_t peer = pb[0] + g[0] * (pb[1] + g[1] * pb[2]);
        if (from[peer] >= 0)
            return ds_refuse(p, diag, "CTAs %lld and %lld copy into the "
                                      "same CTA (its barrier expects one "
                                      "copy's bytes)",
                             (long long)from[peer], (long long)blk);
        from[peer] = (int)blk;
    }
    /* Each CTA copies into one: a map into itself, one-to-one within the
     * cluster, reaches every CTA (no barrier left waiting). */
    return 0;
}

/* Prints a protocol IR into *text and appends its helpers to the
 * prelude. */
static int ds_print(ds_plan *c, td_ir *ir, int indent, char **text)
{
    char *pre = NULL;
    int err = td_ir_status(ir);
    if (err == 0)
        err = td_ir_print(ir, TD_LANG_CUDA, indent, text, &pre);
    if (err == 0 && pre != NULL)
        td__buf_puts(&c->prelude, pre);
    td_free(pre);
    td_ir_free(ir);
    return err;
}

/* The protocol's statements, each from the IR's async nodes. */
static int ds_protocol(kp_plan *p, ds_plan *c, td_diag *diag,
                       const td_buffer *mb)
{
    td_ir *ir[5];
    for (int i = 0; i < 5; i++)
        ir[i] = td_ir_new();
    for (int i = 0; i < 5; i++)
        if (ir[i] == NULL) {
            for (int k = 0; k < 5; k++)
                td_ir_free(ir[k]);
            return td__fail(diag, TD_ENOMEM, p->call->file, "out of memory");
        }
    td_ir_addr bar[3];
    for (int i = 0; i < 3; i++) {
        td_ir *r = ir[i == 0 ? 1 : i == 1 ? 3 : 4];
        const td_ir_buf *b = td_ir_buffer(r, mb->name, TD_U64, "shared",
                                          mb->ndim, mb->shape);
        /* The round's barrier (td_ds_mbar_idx) or the one set's. */
        td_expr *at = c->per_set ? td_param(r, "td_ds_mbar_idx", TD_I32)
                                 : td_int(r, c->midx[0]);
        bar[i] = (td_ir_addr){b, at};
    }
    td_ir_fence_proxy_async(ir[0]);
    td_ir_mbar_init(ir[1], bar[0], td_int(ir[1], 1));
    td_ir_fence_mbarrier_init(ir[1]);
    td_ir_cluster_sync(ir[2]);
    td_ir_mbar_arrive_expect_tx(ir[3], bar[1], td_int(ir[3], c->bytes));
    td_ir_mbar_wait(ir[4], bar[2], td_int(ir[4], 0));
    int e0 = ds_print(c, ir[0], 2, &c->fence);
    int e1 = ds_print(c, ir[1], 4, &c->init);
    int e2 = ds_print(c, ir[2], 2, &c->sync);
    int e3 = ds_print(c, ir[3], 4, &c->arm);
    int e4 = ds_print(c, ir[4], 2, &c->wait);
    int err = e0 ? e0 : e1 ? e1 : e2 ? e2 : e3 ? e3 : e4;
    if (err == 0)
        err = c->prelude.err;
    if (err != 0)
        return td__fail(diag, err, p->call->file,
                        "kernel: printing the cluster protocol failed: %s",
                        td_strerror(err));
    return 0;
}

static int ds_plan_fn(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *call = p->call;
    ds_plan *c = td__calloc(1, sizeof *c);
    if (c == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    p->ext = c;
    td__buf_init(&c->prelude);
    if (p->cluster[0] <= 0)
        return ds_refuse(p, diag, "the call has no cluster launch", 0, 0);
    /* One instance per CTA: its tiles, one issuing thread. */
    p->tpi = p->nthreads;
    int err = td__kp_copy.plan(p, ir, diag);
    if (err != 0)
        return err;
    c->src = c->dst = -1;
    for (int i = 0; i < p->nbufs; i++) {
        if (p->bufs[i].is_dst)
            c->dst = i;
        if (p->bufs[i].is_src)
            c->src = i;
    }
    if (c->src < 0 || c->dst < 0 || !p->bufs[c->src].shared ||
        !p->bufs[c->dst].shared)
        return ds_refuse(p, diag, "a cluster copy moves between shared "
                                  "buffers", 0, 0);
    c->one = c->src == c->dst;
    td_dtype t = p->bufs[c->dst].b->dtype;
    c->bytes = td_dtype_bits(t) / 8;
    for (int d = 0; d < call->dst.ndim; d++)
        c->bytes = td__mul_sat(c->bytes, call->dst.extent[d]);
    /* The bits of a copy, whatever they mean. */
    for (int k = 0; k < (c->one ? 1 : 2); k++) {
        kp_buf *kb = &p->bufs[k == 0 ? c->src : c->dst];
        c->raw[k] = *kb->b;
        c->raw[k].dtype = ds_raw_dtype(kb->b->dtype);
        kb->b = &c->raw[k];
    }
    p->half = p->bf16 = p->fp8 = false;
    /* The sets of the scalars' values the rounds pass (the copy family's
     * kp_plan.sv), or their one fixed set. */
    c->nsets = p->nsv > 1 ? p->nsv : 1;
    c->per_set = p->nsv > 1;
    int64_t sv[KP_MAX_SV][TD_MAX_SCALARS] = {{0}};
    for (int set = 0; set < c->nsets; set++)
        for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS &&
                        j < p->nscalars; j++)
            sv[set][j] = p->nsv > 1 ? (int64_t)p->sv[set][j]
                                    : (int64_t)p->scalars[j].value;
    size_t n = (size_t)(c->nsets * p->nblocks);
    c->from = td__malloc(n * sizeof *c->from);
    if (c->from == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    for (size_t i = 0; i < n; i++)
        c->from[i] = -1;
    const td_buffer *mb = NULL;
    for (int set = 0; set < c->nsets && err == 0; set++) {
        err = ds_peers(p, c, sv[set], set, diag);
        if (err == 0)
            err = ds_mbar(p, c, sv[set], diag, &c->midx[set], &mb);
    }
    if (err != 0)
        return err;
    int64_t elems = 1;
    for (int d = 0; d < mb->ndim; d++)
        elems = td__mul_sat(elems, mb->shape[d]);
    c->mbar_off = (p->smem + 7) / 8 * 8;
    p->smem = c->mbar_off + 8 * elems;
    /* The snapshot of the dst's storage right after the barrier wait. */
    const kp_buf *dk = &p->bufs[c->dst];
    c->snap_bytes = td__mul_sat(td__kp_shared_elems(dk),
                                td_dtype_bits(dk->b->dtype) / 8);
    c->snap_off = (p->smem + 15) / 16 * 16;
    p->smem = c->snap_off + c->snap_bytes;
    if (p->smem > KP_MAX_SHARED)
        return td__kp_fail(diag, call, TD_ELIMIT,
                           "%" PRId64 " bytes of shared memory per block "
                           "(at most %" PRId64 ")",
                           p->smem, KP_MAX_SHARED);
    return ds_protocol(p, c, diag, mb);
}

static void ds_header(td_buf *o, const kp_plan *p)
{
    const ds_plan *c = ds_of(p);
    td__kp_copy.header(o, p);
    td__buf_printf(o,
                   " * Cluster copy: one instance per CTA; thread 0 arms its "
                   "own barrier with\n"
                   " * the %" PRId64 " bytes it receives and copies into its "
                   "peer; every CTA's\n"
                   " * dst must hold the source of the CTA that copies into "
                   "it (td_ds_from)%s.\n",
                   c->bytes,
                   c->one ? ",\n * and the rest of its one buffer its own "
                            "values" : "");
}

static void ds_tables(td_buf *o, const kp_plan *p)
{
    const ds_plan *c = ds_of(p);
    td__kp_copy.tables(o, p);
    td__buf_printf(o,
                   "#define TD_DS_ONE_BUFFER %d /* one buffer holds both "
                   "tiles */\n"
                   "/* Per instance (CTA): the one whose copy lands in it "
                   "(remote_cta_id\n"
                   " * evaluated for every CTA)%s. */\n",
                   c->one ? 1 : 0,
                   c->per_set ? "; a row per set of the scalars' values, "
                                "the round's\n * picked before its check"
                              : "");
    if (!c->per_set) {
        td__buf_puts(o, "static const int td_ds_from[] = {");
        for (int64_t i = 0; i < p->nblocks; i++)
            td__buf_printf(o, "%s%d", i ? ", " : "", c->from[i]);
        td__buf_puts(o, "};\n\n");
        return;
    }
    td__buf_printf(o, "static const int td_ds_from_set[%d][%" PRId64 "] = {",
                   c->nsets, p->nblocks);
    for (int set = 0; set < c->nsets; set++) {
        td__buf_puts(o, set ? ", {" : "{");
        for (int64_t i = 0; i < p->nblocks; i++)
            td__buf_printf(o, "%s%d", i ? ", " : "",
                           c->from[(int64_t)set * p->nblocks + i]);
        td__buf_puts(o, "}");
    }
    td__buf_printf(o,
                   "};\n"
                   "static const int *td_ds_from = td_ds_from_set[0];\n"
                   "/* The barrier at each set: the element of %s that "
                   "config mbar names\n"
                   " * there.  Each round is a launch of its own, which "
                   "initialises that\n"
                   " * barrier alone, so its phase 0 completes once whichever "
                   "barrier the\n"
                   " * previous round used. */\n"
                   "__device__ const int td_ds_mbar_dev[%d] = {",
                   c->mbar, c->nsets);
    for (int set = 0; set < c->nsets; set++)
        td__buf_printf(o, "%s%" PRId64, set ? ", " : "", c->midx[set]);
    td__buf_puts(o, "};\n\n");
}

static void ds_reference(td_buf *o, const kp_plan *p)
{
    td__kp_copy.reference(o, p);
}

static void ds_helpers(td_buf *o, const kp_plan *p)
{
    const ds_plan *c = ds_of(p);
    td__kp_copy.helpers(o, p);
    td__buf_puts(o, td__kp_frag_dsmem);
    td__buf_puts(o, "\n");
    td__buf_puts(o, c->prelude.data != NULL ? c->prelude.data : "");
    td__buf_puts(o, "\n");
}

/* A source gets the copy's bits (one buffer: everywhere, so that what
 * lies outside the dst region is the CTA's own), a dst of its own the
 * sentinel. */
static void ds_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    if (kb->is_src)
        td__buf_puts(o, "td_cp_gen((unsigned long long)i, td_seed)");
    else
        td__kp_copy.gen_expr(o, p, kb);
}

static void ds_ref_call(td_buf *o, const kp_plan *p)
{
    const ds_plan *c = ds_of(p);
    const kp_buf *sk = &p->bufs[c->src], *dk = &p->bufs[c->dst];
    if (c->per_set)
        td__buf_puts(o, "            td_ds_from = td_ds_from_set[td_svi];\n");
    td__buf_printf(o,
                   "            td_ds_reference(v_in_%s + td_ds_from[inst] * "
                   "%" PRId64 "LL, v_in_%s + inst * %" PRId64 "LL, "
                   "td_want);\n",
                   sk->b->name, sk->elems, dk->b->name, dk->elems);
}

static int ds_rounds(const kp_plan *p)
{
    return td__kp_copy.rounds(p);
}

static void ds_pass(td_buf *o, const kp_plan *p)
{
    td__kp_copy.pass(o, p);
}

static unsigned long long ds_gap_bits(td_dtype t)
{
    return td__kp_copy.gap_bits(t);
}

static void ds_body_open(td_buf *o, const kp_plan *p)
{
    const ds_plan *c = ds_of(p);
    td__buf_puts(o, "    /* The staged tiles, written by the generic proxy, "
                    "before a bulk copy\n"
                    "     * reads them. */\n");
    td__buf_puts(o, c->fence);
    td__buf_puts(o, "    __syncthreads();\n");
    td__buf_printf(o,
                   "    unsigned long long *const %s_ptr = (unsigned long "
                   "long *)(td_smem + %" PRId64 "LL);\n"
                   "    unsigned char *const td_ds_snap = td_smem + %" PRId64
                   "LL;\n",
                   c->mbar, c->mbar_off, c->snap_off);
    if (c->per_set)
        td__buf_puts(o, "    /* The barrier of this round's set of the "
                        "scalars' values. */\n"
                        "    const int td_ds_mbar_idx = "
                        "td_ds_mbar_dev[td_ds_set];\n");
    td__buf_puts(o, "    if (td_tid == 0) {\n");
    td__buf_puts(o, c->init);
    td__buf_puts(o, "    }\n    __syncthreads();\n"
                    "    /* Every CTA's barrier exists before a peer's copy "
                    "completes on it. */\n");
    td__buf_puts(o, c->sync);
    td__buf_printf(o, "    if (td_tid == 0) {\n"
                      "        /* one phase: the %" PRId64
                      " bytes the peer copies in */\n",
                   c->bytes);
    td__buf_puts(o, c->arm);
    td__buf_puts(o, "        /* The CTAs issue one after another, by cluster "
                    "rank: a copy\n"
                    "         * completing on another CTA's barrier lets a "
                    "CTA pass its wait\n"
                    "         * before its own bytes land "
                    "(docs/verification.md). */\n"
                    "        td_ds_stagger();\n");
}

static void ds_body_close(td_buf *o, const kp_plan *p)
{
    const ds_plan *c = ds_of(p);
    const kp_buf *dk = &p->bufs[c->dst];
    td__buf_puts(o, "    }\n");
    td__buf_puts(o, c->wait);
    td__buf_printf(o,
                   "    /* What had arrived when the barrier said it had: "
                   "the dst as every\n"
                   "     * thread sees it right after its wait. */\n"
                   "    for (int i = td_t; i < %" PRId64 "; i += TD_TPI)\n"
                   "        td_ds_snap[i] = ((const unsigned char *)%s_ptr)[i];\n",
                   c->snap_bytes, dk->b->name);
    td__buf_puts(o, "    /* No CTA leaves while a peer still copies out of "
                    "it. */\n");
    td__buf_puts(o, c->sync);
    td__buf_printf(o,
                   "    /* The host checks the snapshot; a byte that changed "
                   "after the wait\n"
                   "     * (a copy landing after its barrier completed) "
                   "fails as well. */\n"
                   "    for (int i = td_t; i < %" PRId64 "; i += TD_TPI) {\n"
                   "        if (((const unsigned char *)%s_ptr)[i] != "
                   "td_ds_snap[i])\n"
                   "            td_guard[%d] = 2;\n"
                   "        ((unsigned char *)%s_ptr)[i] = td_ds_snap[i];\n"
                   "    }\n",
                   c->snap_bytes, dk->b->name, c->dst, dk->b->name);
}

static void ds_kernel_params(td_buf *o, const kp_plan *p)
{
    if (ds_of(p)->per_set)
        td__buf_puts(o, ",\n                          const int td_ds_set");
}

static void ds_launch_args(td_buf *o, const kp_plan *p)
{
    if (ds_of(p)->per_set)
        td__buf_puts(o, ", td_svi");
}

static void ds_free(kp_plan *p)
{
    td__kp_copy.free(p);
    ds_plan *c = ds_of(p);
    if (c == NULL)
        return;
    td__buf_free(&c->prelude);
    td__free(c->from);
    td_free(c->fence);
    td_free(c->init);
    td_free(c->sync);
    td_free(c->arm);
    td_free(c->wait);
    td__free(c);
    p->ext = NULL;
}

const kp_family td__kp_dsmem = {
    .kind = TD_OP_KIND_COPY,
    .what = "a cluster copy",
    .plan = ds_plan_fn,
    .header = ds_header,
    .tables = ds_tables,
    .reference = ds_reference,
    .helpers = ds_helpers,
    .gen_expr = ds_gen_expr,
    .rounds = ds_rounds,
    .ref_call = ds_ref_call,
    .dst_check = "td_ds_check",
    .pass = ds_pass,
    .body_open = ds_body_open,
    .body_close = ds_body_close,
    .kernel_params = ds_kernel_params,
    .launch_args = ds_launch_args,
    .free = ds_free,
    .bits = true,
    .gap_bits = ds_gap_bits,
    .globals = true,
    .same_buffer = true,
};
