/*
 * Self-checking programs for TMA copies (copy_async calls whose body goes
 * through tensor maps): the family's hooks (td__kp_copy_async).  A TMA
 * copy is a copy, so the program checks what the copy family's programs
 * check, with the copy family's own tables, generator, reference and
 * check (kernel_copy.c, reached through its hook table, not duplicated):
 * every dst position holds its source element's bits or the sentinel,
 * the source comes back unchanged, guards around every buffer stay.
 * What this family adds is what a TMA copy needs around the body:
 *
 *   - one scope instance per block: the tile is the block's and one
 *     thread issues the copy, whatever the call's exec scope;
 *   - the host encodes each tensor map of the IR with the C the library
 *     prints (td__tmap_print_c) through the runtime's driver entry point
 *     (fragments/async_encode.cuh), and passes it by value as a
 *     `const __grid_constant__ CUtensorMap` parameter;
 *   - the dynamic shared memory's base is aligned to 1024 bytes (a
 *     swizzled tile is swizzled by address bits) and the mbarrier sits
 *     after the staged buffers;
 *   - the protocol, printed from the IR's own async nodes so that its
 *     text is the library's: every thread fences its staging writes for
 *     the async proxy (fence.proxy.async) and syncs; a load has thread 0
 *     initialise the mbarrier (count 1) and fence.mbarrier_init, a
 *     barrier, then thread 0 arms it with arrive.expect_tx(the boxes'
 *     bytes) and runs the body, and every thread waits for phase 0; a
 *     store or reduction has thread 0 run the body, commit the bulk group
 *     and wait until its reads are done, then until its writes are
 *     (cp.async.bulk.wait_group 0);
 *   - a reduction's data are small exact values (fragments/
 *     async_reduce.cuh) and its dst starts with data of its own: the
 *     reference is old OP src.
 *
 * 16-bit and 8-bit float buffers of a plain load or store are staged as
 * unsigned integers of their width: the copy moves bits and never looks
 * at a value, and the CPU stand-in (tests/cuda/emu) has no __half.  A
 * reduction keeps its dtype.
 *
 * A load whose program runs several sets of the scalars' values (the
 * copy family's sets: every combination, or its covering sweep) takes
 * the round's set as a kernel parameter (td_ca_set) and initialises,
 * arms and waits on the barrier config mbar names at that set
 * (td_ca_mbar_dev); a multicast's receivers are per set too.  Each round
 * is a launch of its own, so the barrier's phase 0 is the round's
 * whichever barrier the previous round used.
 *
 * A multicast load (cta_mask not a static 0, in a cluster launch, which
 * the program makes with cudaLaunchKernelEx): cta_mask is evaluated at
 * the issuing CTA, rank 0 of each cluster; every CTA initialises its
 * barrier before a cluster sync, each CTA the mask names arms its own and
 * waits, rank 0's thread 0 runs the body, a cluster sync ends the kernel;
 * a receiver's tile must hold the box, every other CTA's dst the sentinel.
 *
 * Refused with a reason (message "has no self-checking program yet"):
 * cta_group 2 or sm_100 maps, a reduction other than add / min / max,
 * over an unsupported dtype, or by more than one block (each would add
 * into the same tile), a multicast tile that moves with the block ids.
 * A unicast copy in a cluster launch is launched as clusters and checked
 * CTA by CTA, as without one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kp.h"
#include "kp_fragments.h"
#include "model.h"
#include "tensor_map.h"
#include "tensor_map_print.h"

#define CA_MAX_MAPS 8

typedef struct ca_plan {
    bool load;              /* global -> shared (else shared -> global) */
    td_tma_op op;           /* a store's operation */
    int nmaps;
    char maps[CA_MAX_MAPS][TD_NAME_MAX + 16]; /* GLOBAL_tensormap[_k] */
    int global;             /* the staged buffer the maps address */
    int64_t bytes;          /* the boxes' bytes, one phase of a load */
    char mbar[TD_NAME_MAX]; /* the load's mbarrier buffer */
    int64_t mbar_off;       /* its byte offset in the aligned shared base */
    /* A load run at several sets of the scalars' values (kp_plan.nsv > 1):
     * the kernel takes the round's set (td_ca_set) and the protocol uses
     * the barrier config mbar names at that set (midx[set]). */
    bool per_set;
    int nsets;              /* sets the tables below hold (at least 1) */
    int64_t midx[KP_MAX_SV];
    td_buf encode;          /* the encode functions (file scope) */
    /* The protocol's text, printed from IR async nodes: its helpers
     * (file scope) and the statements around the body. */
    td_buf prelude;
    char *fence, *init, *arm, *wait, *tail;
    td_buffer raw[2];       /* staged copies of 16/8-bit float buffers */
    /* A multicast load (cta_mask not a static 0, a cluster launch): the
     * CTA of rank 0 of each cluster issues, every CTA its mask names
     * receives the tile (recv[set * nblocks + block] 1) and arms its own
     * barrier. */
    bool multicast;
    unsigned char *recv;
    char *sync;             /* the cluster sync, printed from the IR */
} ca_plan;

static ca_plan *ca_of(const kp_plan *p)
{
    return (ca_plan *)p->ext;
}

/* The refusal every front-end recognises as "no program for this call"
 * (tests/conformance/run.py compiles the body alone then). */
static int ca_refuse(kp_plan *p, td_diag *diag, const char *why)
{
    return td__kp_fail(diag, p->call, TD_EINVAL,
                       "variant %s copies through a TMA tensor map and "
                       "has no self-checking program yet: %s; `tiledispatch "
                       "emit` prints its body",
                       p->variant, why);
}

/* Prints a protocol IR into *text (the statements, at indentation
 * `indent`) and appends its helpers to the plan's prelude. */
static int ca_print(ca_plan *c, td_ir *ir, int indent, char **text)
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

/* The load's mbarrier: config mbar names an element of a shared uint64
 * buffer of the call (the variant checked that); its index a constant at
 * the scalars' values sv (each set's in turn). */
static int ca_mbar(kp_plan *p, ca_plan *c, const int64_t *sv, td_diag *diag,
                   int64_t *index, const td_buffer **buf)
{
    const td_call *call = p->call;
    const td_config_entry *e = td_call_config(call, "mbar");
    if (e == NULL || e->kind != TD_VALUE_ELEM || e->elem_buffer < 0 ||
        e->elem_buffer >= call->nbuffers)
        return ca_refuse(p, diag, "config mbar is not an element of a "
                                  "shared buffer");
    const td_buffer *b = &call->buffers[e->elem_buffer];
    int64_t idx = 0, stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        int64_t v = 0;
        if (!td__cexpr_eval(call, &e->expr, e->elem_index[d], sv, &v))
            return ca_refuse(p, diag, "config mbar's index is not a "
                                      "constant");
        if (v < 0 || v >= b->shape[d])
            return ca_refuse(p, diag, "config mbar's index is out of its "
                                      "buffer");
        idx += v * stride;
        stride *= b->shape[d];
    }
    td__strlcpy(c->mbar, b->name, sizeof c->mbar);
    *index = idx;
    *buf = b;
    return 0;
}

/* The protocol's statements, each from the IR's async nodes. */
static int ca_protocol(kp_plan *p, ca_plan *c, td_diag *diag,
                       const td_buffer *mb)
{
    td_ir *ir[5] = {td_ir_new(), NULL, NULL, NULL, NULL};
    int n = c->load ? (c->multicast ? 5 : 4) : 2;
    for (int i = 1; i < n; i++)
        ir[i] = td_ir_new();
    for (int i = 0; i < n; i++)
        if (ir[i] == NULL) {
            for (int k = 0; k < n; k++)
                td_ir_free(ir[k]);
            return td__fail(diag, TD_ENOMEM, p->call->file, "out of memory");
        }
    td_ir_fence_proxy_async(ir[0]);
    int err = ca_print(c, ir[0], 2, &c->fence);
    if (c->load) {
        td_ir_addr bar[3];
        for (int i = 1; i < 4; i++) {
            const td_ir_buf *b = td_ir_buffer(ir[i], mb->name, TD_U64,
                                              "shared", mb->ndim, mb->shape);
            /* The round's barrier (td_ca_mbar_idx, set where the kernel
             * starts) or the one fixed set's. */
            td_expr *at = c->per_set
                              ? td_param(ir[i], "td_ca_mbar_idx", TD_I32)
                              : td_int(ir[i], c->midx[0]);
            bar[i - 1] = (td_ir_addr){b, at};
        }
        td_ir_mbar_init(ir[1], bar[0], td_int(ir[1], 1));
        td_ir_fence_mbarrier_init(ir[1]);
        td_ir_mbar_arrive_expect_tx(ir[2], bar[1], td_int(ir[2], c->bytes));
        td_ir_mbar_wait(ir[3], bar[2], td_int(ir[3], 0));
        int e1 = ca_print(c, ir[1], 4, &c->init);
        int e2 = ca_print(c, ir[2], 4, &c->arm);
        int e3 = ca_print(c, ir[3], c->multicast ? 4 : 2, &c->wait);
        int e4 = 0;
        if (c->multicast) {
            td_ir_cluster_sync(ir[4]);
            e4 = ca_print(c, ir[4], 2, &c->sync);
        }
        err = err ? err : e1 ? e1 : e2 ? e2 : e3 ? e3 : e4;
    } else {
        td_ir_bulk_commit(ir[1]);
        td_ir_bulk_wait_read(ir[1], 0);
        int e1 = ca_print(c, ir[1], 4, &c->tail);
        err = err ? err : e1;
    }
    if (err == 0)
        err = c->prelude.err;
    if (err != 0)
        return td__fail(diag, err, p->call->file,
                        "kernel: printing the TMA protocol failed: %s",
                        td_strerror(err));
    return 0;
}

/* The storage type of a 16- or 8-bit float buffer of a plain copy. */
static td_dtype ca_raw_dtype(td_dtype t)
{
    if (td_dtype_is_float(t) && td_dtype_bits(t) == 16)
        return TD_U16;
    if (td_dtype_is_float(t) && td_dtype_bits(t) == 8)
        return TD_U8;
    return t;
}

/* The reduction's operation from config use_tma_reduce (the variant
 * accepted it). */
static td_tma_op ca_op(const td_call *call)
{
    const td_config_entry *e = td_call_config(call, "use_tma_reduce");
    if (e == NULL || e->kind != TD_VALUE_STRING)
        return TD_TMA_STORE;
    for (int k = TD_TMA_ADD; k < TD_TMA_OP_COUNT; k++)
        if (strcmp(e->s, td_tma_op_name((td_tma_op)k)) == 0)
            return (td_tma_op)k;
    return TD_TMA_OP_COUNT;
}

/* The maps: each refused or printed as an encode function; the bytes one
 * load phase moves. */
static int ca_maps(kp_plan *p, ca_plan *c, const td_ir *ir, td_diag *diag)
{
    int n = td_ir_tensor_map_count(ir);
    if (n > CA_MAX_MAPS)
        return ca_refuse(p, diag, "more tensor maps than a program takes");
    c->nmaps = n;
    c->bytes = 0;
    for (int i = 0; i < n; i++) {
        const td_tmap *m = td__ir_tensor_map_spec(ir, i);
        const char *name = td_ir_tensor_map_name(ir, i);
        if (m == NULL || name == NULL)
            return ca_refuse(p, diag, "a tensor map of the body is missing");
        if (m->sm >= 100)
            return ca_refuse(p, diag, "its maps are for sm_100 (the programs "
                                      "run on sm_90)");
        if (m->cta_group == 2)
            return ca_refuse(p, diag, "cta_group 2 needs a CTA pair "
                                      "(sm_100)");
        snprintf(c->maps[i], sizeof c->maps[i], "%s", name);
        char fn[TD_NAME_MAX + 32];
        snprintf(fn, sizeof fn, "td_encode_%s", name);
        int err = td__tmap_print_c(m, fn, 0, &c->encode);
        if (err != 0)
            return td__kp_fail(diag, p->call, err,
                               "tensor map %s cannot be printed as C", name);
        int64_t box = (m->bits + 7) / 8;
        for (int d = 0; d < m->rank; d++) {
            int64_t es = m->element_strides[d] > 0 ? m->element_strides[d] : 1;
            box = td__mul_sat(box, (m->box_dims[d] + es - 1) / es);
        }
        for (int k = 0; k < m->nissue; k++)
            box = td__mul_sat(box, m->issue[k].extent);
        c->bytes += box;
    }
    return 0;
}

/* A multicast's receivers at set `set` of the scalars' values sv:
 * cta_mask evaluated for the issuing CTA (rank 0 of each cluster: its
 * block and cluster ids, the scalars' values); every CTA whose rank the
 * mask names receives the tile. */
static int ca_receivers(kp_plan *p, ca_plan *c, const td_config_entry *mask,
                        const int64_t *sv, int set, td_diag *diag)
{
    const td_call *call = p->call;
    if (mask->kind != TD_VALUE_INT && mask->kind != TD_VALUE_EXPR)
        return ca_refuse(p, diag, "cta_mask is not a number or an "
                                  "expression of the ids and scalars");
    if (!p->bufs[c->global].is_src)
        return ca_refuse(p, diag, "a multicast is a load");
    if (td__region_symbolic(&call->srcs[0].region) ||
        td__region_symbolic(&call->dst))
        return ca_refuse(p, diag, "a multicast tile whose start depends "
                                  "on the block ids (every receiver gets "
                                  "the issuer's)");
    const int64_t *g = p->grid, *cl = p->cluster;
    for (int64_t blk = 0; blk < p->nblocks; blk++) {
        int64_t b[3] = {blk % g[0], blk / g[0] % g[1], blk / (g[0] * g[1])};
        int64_t base[3] = {b[0] - b[0] % cl[0], b[1] - b[1] % cl[1],
                           b[2] - b[2] % cl[2]};
        int64_t rank = (b[0] % cl[0]) + cl[0] * ((b[1] % cl[1]) +
                                                 cl[1] * (b[2] % cl[2]));
        /* The issuer's ids: rank 0 of this block's cluster, thread 0. */
        int64_t id[TD_AXIS_COUNT] = {0};
        id[TD_AXIS_BX] = base[0];
        id[TD_AXIS_BY] = base[1];
        id[TD_AXIS_BZ] = base[2];
        int64_t m = mask->i;
        if (mask->kind == TD_VALUE_EXPR &&
            !td__cexpr_eval_ids(call, &mask->expr, mask->expr.n - 1, sv, id,
                                &m))
            return ca_refuse(p, diag, "cta_mask cannot be evaluated at the "
                                      "issuing CTA");
        if (m <= 0 || m > 0xFFFF || (m >> p->csize) != 0)
            return ca_refuse(p, diag, "cta_mask at the values the program "
                                      "passes names no CTA, or ranks "
                                      "outside the cluster");
        c->recv[(int64_t)set * p->nblocks + blk] =
            (unsigned char)((m >> rank) & 1);
    }
    return 0;
}

static int ca_plan_fn(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *call = p->call;
    ca_plan *c = td__calloc(1, sizeof *c);
    if (c == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    p->ext = c;
    td__buf_init(&c->encode);
    td__buf_init(&c->prelude);
    /* A static cta_mask of 0 is unicast (the variant's reading). */
    const td_config_entry *mask = td_call_config(call, "cta_mask");
    c->multicast = mask != NULL && !(mask->kind == TD_VALUE_INT &&
                                     mask->i == 0);
    if (c->multicast && p->cluster[0] <= 0)
        return ca_refuse(p, diag, "a multicast needs a cluster's CTAs, "
                                  "and the call declares no cluster launch");
    c->op = ca_op(call);
    /* One instance per block: the block's tile, one issuing thread. */
    p->tpi = p->nthreads;
    int err = td__kp_copy.plan(p, ir, diag);
    if (err != 0)
        return err;
    int src = -1, dst = -1;
    for (int i = 0; i < p->nbufs; i++) {
        if (p->bufs[i].is_dst)
            dst = i;
        else if (p->bufs[i].is_src)
            src = i;
    }
    if (src < 0 || dst < 0 || p->bufs[src].shared == p->bufs[dst].shared)
        return ca_refuse(p, diag, "a TMA copy moves between a global and a "
                                  "shared buffer");
    c->load = p->bufs[dst].shared;
    c->global = c->load ? src : dst;
    if (c->op == TD_TMA_OP_COUNT || c->op == TD_TMA_INC ||
        c->op == TD_TMA_DEC || c->op == TD_TMA_AND || c->op == TD_TMA_OR ||
        c->op == TD_TMA_XOR)
        return ca_refuse(p, diag, "the reduction has no reference here "
                                  "(add, min and max do)");
    td_dtype t = p->bufs[dst].b->dtype;
    if (c->op != TD_TMA_STORE) {
        /* The data (async_reduce.cuh) are small integers in [-1000,
         * 2000]: exact in float16, bfloat16 (as rounded once), float32
         * and 32-bit integers; an 8- or 16-bit integer cannot hold them
         * (and PTX's bulk tensor reductions take no such type). */
        if (td_dtype_is_float8(t) || td_dtype_bits(t) > 32 ||
            (!td_dtype_is_float(t) && td_dtype_bits(t) < 32))
            return ca_refuse(p, diag, "the reduction's dtype has no "
                                      "reference here (float16, bfloat16, "
                                      "float32 and 32-bit integers do)");
        if (p->nblocks != 1)
            return ca_refuse(p, diag, "a reduction by more than one block "
                                      "adds into the same tile each time");
    } else {
        /* The bits of a plain copy, whatever they mean. */
        for (int k = 0; k < 2; k++) {
            kp_buf *kb = &p->bufs[k == 0 ? src : dst];
            c->raw[k] = *kb->b;
            c->raw[k].dtype = ca_raw_dtype(kb->b->dtype);
            kb->b = &c->raw[k];
        }
        p->half = p->bf16 = p->fp8 = false;
    }
    err = ca_maps(p, c, ir, diag);
    if (err != 0)
        return err;
    /* The region's bytes and the boxes' must agree: a load's phase
     * completes on the bytes the boxes move. */
    int64_t region = td_dtype_bits(t) / 8;
    for (int d = 0; d < call->dst.ndim; d++)
        region = td__mul_sat(region, call->dst.extent[d]);
    if (c->load && c->bytes != region)
        return ca_refuse(p, diag, "its boxes move other bytes than the "
                                  "region holds");
    /* The sets of the scalars' values the rounds pass (the copy family's
     * kp_plan.sv), or their one fixed set. */
    c->nsets = p->nsv > 1 ? p->nsv : 1;
    c->per_set = c->load && p->nsv > 1;
    int64_t sv[KP_MAX_SV][TD_MAX_SCALARS] = {{0}};
    for (int set = 0; set < c->nsets; set++)
        for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS &&
                        j < p->nscalars; j++)
            sv[set][j] = p->nsv > 1 ? (int64_t)p->sv[set][j]
                                    : (int64_t)p->scalars[j].value;
    if (c->multicast) {
        c->recv = td__calloc((size_t)(c->nsets * p->nblocks), 1);
        if (c->recv == NULL)
            return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
        for (int set = 0; set < c->nsets && err == 0; set++)
            err = ca_receivers(p, c, mask, sv[set], set, diag);
        if (err != 0)
            return err;
    }
    const td_buffer *mb = NULL;
    if (c->load) {
        for (int set = 0; set < c->nsets && err == 0; set++)
            err = ca_mbar(p, c, sv[set], diag, &c->midx[set], &mb);
        if (err != 0)
            return err;
        int64_t elems = 1;
        for (int d = 0; d < mb->ndim; d++)
            elems = td__mul_sat(elems, mb->shape[d]);
        c->mbar_off = (p->smem + 7) / 8 * 8;
        p->smem = c->mbar_off + 8 * elems;
    }
    /* The aligned base may start up to 1008 bytes into the segment. */
    p->smem_align = 1024;
    p->smem += 1024;
    if (p->smem > KP_MAX_SHARED)
        return td__kp_fail(diag, call, TD_ELIMIT,
                           "%" PRId64 " bytes of shared memory per block "
                           "(at most %" PRId64 ")",
                           p->smem, KP_MAX_SHARED);
    return ca_protocol(p, c, diag, mb);
}

static void ca_header(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    td__kp_copy.header(o, p);
    td__buf_printf(o,
                   " * TMA: one instance per block; the host encodes the "
                   "tensor map(s) and\n"
                   " * passes them as __grid_constant__ parameters; %s\n",
                   c->load ? "thread 0 initialises the mbarrier, arms it "
                             "with the boxes'\n"
                             " * bytes and issues; every thread waits for "
                             "phase 0, then the\n"
                             " * shared tile is checked through its layout "
                             "(swizzle included)."
                   : c->op == TD_TMA_STORE
                       ? "the shared tile is fenced for the\n"
                         " * async proxy, thread 0 issues, commits and waits "
                         "for the group;\n"
                         " * the global dst and its sentinels are checked."
                       : "the shared tile is fenced for the\n"
                         " * async proxy, thread 0 issues, commits and waits "
                         "for the group;\n"
                         " * the global dst must hold old OP src in the "
                         "region, old elsewhere.");
}

static void ca_tables(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    td__kp_copy.tables(o, p);
    if (c->per_set) {
        td__buf_printf(o,
                       "/* The load's barrier at each set of the scalars' "
                       "values: the element of\n"
                       " * %s that config mbar names there.  Each round is "
                       "a launch of its own,\n"
                       " * which initialises that barrier alone, so its "
                       "phase 0 completes once\n"
                       " * whichever barrier the previous round used. */\n"
                       "__device__ const int td_ca_mbar_dev[%d] = {",
                       c->mbar, c->nsets);
        for (int set = 0; set < c->nsets; set++)
            td__buf_printf(o, "%s%" PRId64, set ? ", " : "", c->midx[set]);
        td__buf_puts(o, "};\n\n");
    }
    if (!c->multicast)
        return;
    td__buf_printf(o,
                   "/* Multicast: per CTA, 1 when the issuer's cta_mask "
                   "names it (it receives\n"
                   " * the tile), 0 when its dst must keep the sentinel; "
                   "its rank in the cluster\n"
                   " * of (%" PRId64 ", %" PRId64 ", %" PRId64 ")%s. */\n"
                   "#define TD_CA_RECV_INIT {",
                   p->cluster[0], p->cluster[1], p->cluster[2],
                   c->per_set ? "; a row per set of the scalars' values" : "");
    for (int set = 0; set < c->nsets; set++) {
        if (c->per_set)
            td__buf_puts(o, set ? ", {" : "{");
        for (int64_t i = 0; i < p->nblocks; i++)
            td__buf_printf(o, "%s%d", i ? ", " : "",
                           c->recv[(int64_t)set * p->nblocks + i]);
        if (c->per_set)
            td__buf_puts(o, "}");
    }
    char dims[48] = "[]";
    if (c->per_set)
        snprintf(dims, sizeof dims, "[%d][%" PRId64 "]", c->nsets,
                 p->nblocks);
    td__buf_printf(o,
                   "}\n"
                   "__device__ const unsigned char td_ca_recv_dev%s = "
                   "TD_CA_RECV_INIT;\n"
                   "static const unsigned char td_ca_recv_host%s = "
                   "TD_CA_RECV_INIT;\n",
                   dims, dims);
    td__buf_printf(o,
                   "#define TD_CA_RANK(x, y, z) ((x) %% %" PRId64 " + %"
                   PRId64 " * ((y) %% %" PRId64 " + %" PRId64 " * ((z) %% %"
                   PRId64 ")))\n\n",
                   p->cluster[0], p->cluster[0], p->cluster[1],
                   p->cluster[1], p->cluster[2]);
}

static void ca_reference(td_buf *o, const kp_plan *p)
{
    td__kp_copy.reference(o, p);
}

/* After the copy family's helpers: the reduction's data and reference,
 * the encoder, the encode functions and the protocol's helpers. */
static void ca_helpers(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    td__kp_copy.helpers(o, p);
    if (c->op != TD_TMA_STORE) {
        td_dtype t = p->bufs[c->global].b->dtype;
        td__buf_printf(o,
                       "#define TD_CA_T %s\n"
                       "#define TD_CA_OP %d /* 1 add, 2 min, 3 max */\n"
                       "#define TD_CA_SCALE %s\n"
                       "#define TD_CA_UNSIGNED %d\n",
                       td__kp_ctype(t), (int)c->op,
                       td_dtype_is_float(t) ? "8.0" : "1.0",
                       td_dtype_is_signed(t) ? 0 : 1);
        td__buf_puts(o, td__kp_frag_async_reduce);
        td__buf_puts(o, "\n");
    } else {
        td__buf_puts(o, "/* A plain load or store: the copy's check. */\n"
                        "#define td_ca_check td_cp_check\n\n");
    }
    td__buf_puts(o, td__kp_frag_async_encode);
    td__buf_puts(o, "\n");
    td__buf_puts(o, c->encode.data != NULL ? c->encode.data : "");
    td__buf_puts(o, "\n");
    td__buf_puts(o, c->prelude.data != NULL ? c->prelude.data : "");
    td__buf_puts(o, "\n");
}

static void ca_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    const ca_plan *c = ca_of(p);
    if (c->op == TD_TMA_STORE) {
        td__kp_copy.gen_expr(o, p, kb);
        return;
    }
    td__buf_printf(o, "td_ca_gen((unsigned long long)i, td_seed, %d)",
                   kb->is_dst ? 1 : 0);
}

static void ca_ref_call(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    if (c->multicast) {
        /* A CTA the mask leaves out receives nothing. */
        td__buf_puts(o, c->per_set
                            ? "            if (!td_ca_recv_host[td_svi][inst]) "
                              "{\n"
                            : "            if (!td_ca_recv_host[inst]) {\n");
        td__buf_puts(o, ""
                        "                for (long long e = 0; e < "
                        "TD_DST_ELEMS; ++e)\n"
                        "                    td_want[e] = TD_CP_SENTINEL;\n"
                        "            } else {\n    ");
        td__kp_copy.ref_call(o, p);
        td__buf_puts(o, "            }\n");
        return;
    }
    if (c->op == TD_TMA_STORE) {
        td__kp_copy.ref_call(o, p);
        return;
    }
    const kp_buf *sk = NULL;
    for (int i = 0; i < p->nbufs; i++)
        if (!p->bufs[i].is_dst)
            sk = &p->bufs[i];
    td__buf_printf(o,
                   "            td_ca_reduce_reference(v_in_%s + inst * %"
                   PRId64 "LL, v_in_%s, td_want);\n",
                   sk->b->name, sk->elems, p->bufs[c->global].b->name);
}

static int ca_rounds(const kp_plan *p)
{
    return td__kp_copy.rounds(p);
}

static void ca_pass(td_buf *o, const kp_plan *p)
{
    td__kp_copy.pass(o, p);
}

static unsigned long long ca_gap_bits(td_dtype t)
{
    return td__kp_copy.gap_bits(t);
}

static void ca_kernel_params(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    for (int i = 0; i < c->nmaps; i++)
        td__buf_printf(o, ",\n                          const "
                          "__grid_constant__ CUtensorMap %s",
                       c->maps[i]);
    if (c->per_set)
        td__buf_puts(o, ",\n                          const int td_ca_set");
}

static void ca_body_open(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    td__buf_puts(o, "    /* The staged tile, written by the generic proxy, "
                    "before the async proxy\n"
                    "     * reads or overwrites it. */\n");
    td__buf_puts(o, c->fence);
    td__buf_puts(o, "    __syncthreads();\n");
    if (c->load) {
        td__buf_printf(o,
                       "    unsigned long long *const %s_ptr = (unsigned long "
                       "long *)(td_smem_al + %" PRId64 "LL);\n",
                       c->mbar, c->mbar_off);
        if (c->per_set)
            td__buf_puts(o, "    /* The barrier of this round's set of the "
                            "scalars' values. */\n"
                            "    const int td_ca_mbar_idx = "
                            "td_ca_mbar_dev[td_ca_set];\n");
        td__buf_puts(o, "    if (td_tid == 0) {\n");
        td__buf_puts(o, c->init);
        td__buf_puts(o, "    }\n    __syncthreads();\n");
    }
    if (c->multicast) {
        td__buf_puts(o, "    /* Every receiver's barrier exists before the "
                        "issuer's copy completes on it. */\n");
        td__buf_puts(o, c->sync);
        td__buf_printf(o, "    const bool td_ca_recv = td_ca_recv_dev%s[td_blk] "
                          "!= 0;\n"
                          "    if (td_tid == 0 && td_ca_recv) {\n"
                          "        /* one phase: the boxes' %" PRId64
                          " bytes, from the issuer */\n",
                       c->per_set ? "[td_ca_set]" : "", c->bytes);
        td__buf_puts(o, c->arm);
        td__buf_puts(o, "    }\n"
                        "    /* Rank 0 of the cluster issues the multicast. */\n"
                        "    if (td_tid == 0 && TD_CA_RANK(blockIdx.x, "
                        "blockIdx.y, blockIdx.z) == 0) {\n");
    } else if (c->load) {
        td__buf_printf(o, "    if (td_tid == 0) {\n"
                          "        /* one phase: the boxes' %" PRId64
                          " bytes */\n",
                       c->bytes);
        td__buf_puts(o, c->arm);
    } else {
        td__buf_puts(o, "    if (td_tid == 0) {\n");
    }
}

static void ca_body_close(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    if (c->multicast) {
        td__buf_puts(o, "    }\n    if (td_ca_recv) {\n");
        td__buf_puts(o, c->wait);
        td__buf_puts(o, "    }\n"
                        "    /* The issuer leaves after every receiver has "
                        "its tile. */\n");
        td__buf_puts(o, c->sync);
    } else if (c->load) {
        td__buf_puts(o, "    }\n");
        td__buf_puts(o, c->wait);
    } else {
        td__buf_puts(o, c->tail);
        /* The IR prints the .read wait a caller needs before it reuses the
         * tile; the program also waits for the writes themselves, as the
         * plan's protocol does before exit (no node prints that form). */
        td__buf_puts(o, "#ifdef __CUDA_ARCH__\n"
                        "        asm volatile(\"cp.async.bulk.wait_group 0;\" "
                        ": : : \"memory\");\n"
                        "#else\n"
                        "        /* the stand-in's bulk copies are done when "
                        "issued */\n"
                        "#endif\n");
        td__buf_puts(o, "    }\n");
    }
}

static void ca_host_setup(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    const kp_buf *g = &p->bufs[c->global];
    for (int i = 0; i < c->nmaps; i++)
        td__buf_printf(o,
                       "    /* The tensor map, encoded once for the array's "
                       "first element. */\n"
                       "    CUtensorMap td_map_%s;\n"
                       "    memset(&td_map_%s, 0, sizeof td_map_%s);\n"
                       "    {\n"
                       "        const CUresult r = td_encode_%s(&td_map_%s, "
                       "d_in_%s + %" PRId64 ");\n"
                       "        if (r != CUDA_SUCCESS) {\n"
                       "            printf(\"FAIL %%s encoding tensor map %s: "
                       "CUresult %%d\\n\", TD_NAME, (int)r);\n"
                       "            return 1;\n"
                       "        }\n"
                       "    }\n",
                       c->maps[i], c->maps[i], c->maps[i], c->maps[i],
                       c->maps[i], g->b->name, g->gpad, c->maps[i]);
}

static void ca_launch_args(td_buf *o, const kp_plan *p)
{
    const ca_plan *c = ca_of(p);
    for (int i = 0; i < c->nmaps; i++)
        td__buf_printf(o, ", td_map_%s", c->maps[i]);
    if (c->per_set)
        td__buf_puts(o, ", td_svi");
}

static void ca_free(kp_plan *p)
{
    td__kp_copy.free(p);
    ca_plan *c = ca_of(p);
    if (c == NULL)
        return;
    td__buf_free(&c->encode);
    td__buf_free(&c->prelude);
    td_free(c->fence);
    td_free(c->init);
    td_free(c->arm);
    td_free(c->wait);
    td_free(c->tail);
    td_free(c->sync);
    td__free(c->recv);
    td__free(c);
    p->ext = NULL;
}

const kp_family td__kp_copy_async = {
    .kind = TD_OP_KIND_COPY,
    .what = "a TMA copy",
    .plan = ca_plan_fn,
    .header = ca_header,
    .tables = ca_tables,
    .reference = ca_reference,
    .helpers = ca_helpers,
    .gen_expr = ca_gen_expr,
    .rounds = ca_rounds,
    .ref_call = ca_ref_call,
    .dst_check = "td_ca_check",
    .pass = ca_pass,
    .kernel_params = ca_kernel_params,
    .body_open = ca_body_open,
    .body_close = ca_body_close,
    .host_setup = ca_host_setup,
    .launch_args = ca_launch_args,
    .free = ca_free,
    .bits = true,
    .gap_bits = ca_gap_bits,
    .globals = true,
};
