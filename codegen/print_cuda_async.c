/*
 * The CUDA of the asynchronous nodes (ir_async.c): each node is a call of
 * a prelude helper whose body is the PTX under __CUDA_ARCH__ and, in a
 * host build (the CPU stand-in, tests/cuda/emu), a call of the stand-in's
 * td_emu_* function, nothing (fences, bulk groups, prefetch), or a trap
 * where tensor memory is touched (tcgen05.ld / st and tcgen05.cp,
 * sm_100a).  The cluster's nodes (mapa, the cluster copy, cluster sync,
 * a multicast load) call the stand-in under `#elif defined(TD_EMU)` (it
 * runs a cluster's CTAs together) and trap in any other host build.  The
 * expressions are written by
 * the calling printer (print_cuda.c) through td__async_out.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

/* Writes e through the caller's expression printer. */
static void ex(const td__async_out *o, const td_expr *e, int level)
{
    o->expr(o->ctx, o->line, e, level);
}

/* NAME_ptr, or NAME_ptr + offset. */
static void addr(const td__async_out *o, const td__addr *a)
{
    const td_expr *f = td__fold(&o->p->arena, a->offset, o->p->zero);
    int64_t v;
    td__buf_printf(o->line, "%s_ptr", a->buf->name);
    if (f != NULL && td__is_int(f, &v) && v == 0)
        return;
    td__buf_puts(o->line, " + ");
    ex(o, a->offset, 1);
}

/* The helper's name for the key's node. */
static void helper_name(td_buf *b, const td__async *a)
{
    static const char *const fixed[TD__A_COUNT] = {
        [TD__A_MBAR_INIT] = "td_mbar_init",
        [TD__A_MBAR_EXPECT_TX] = "td_mbar_arrive_expect_tx",
        [TD__A_MBAR_WAIT] = "td_mbar_wait",
        [TD__A_FENCE_PROXY_ASYNC] = "td_fence_proxy_async",
        [TD__A_FENCE_MBAR_INIT] = "td_fence_mbarrier_init",
        [TD__A_CLUSTER_SYNC] = "td_cluster_sync",
        [TD__A_BULK_COMMIT] = "td_bulk_commit_group",
        [TD__A_BULK_WAIT_READ] = "td_bulk_wait_group_read",
        [TD__A_PREFETCH_TMAP] = "td_prefetch_tensormap",
        [TD__A_MAPA] = "td_mapa_shared_cluster",
        [TD__A_BULK_S2C] = "td_bulk_copy_s2c"};
    if (a->kind == TD__A_TCGEN05_LD || a->kind == TD__A_TCGEN05_ST) {
        td__buf_printf(b, "td_tcgen05_%s_%s_x%d",
                       a->kind == TD__A_TCGEN05_LD ? "ld" : "st",
                       td_ir_tcgen05_ldst_shape(a->shape), a->num);
        return;
    }
    if (a->kind == TD__A_TCGEN05_CP) {
        /* td_tcgen05_cp[_cg2]_64x128b_warpx2_02_13: the qualifier's
         * "::" as "_". */
        const char *mc = td_ir_tcgen05_cp_multicast((td_ir_cp_shape)a->num);
        td__buf_printf(b, "td_tcgen05_cp%s_%s", a->cta_group == 2 ? "_cg2" : "",
                       td_ir_tcgen05_cp_shape((td_ir_cp_shape)a->num));
        if (mc[0] != '\0')
            td__buf_puts(b, "_");
        for (const char *c = mc; *c != '\0'; c++)
            if (*c != ':' || c[1] != ':')
                td__buf_printf(b, "%c", *c == ':' ? '_' : *c);
        return;
    }
    if (a->kind == TD__A_TMA_LOAD) {
        td__buf_printf(b, "td_tma_load_%dd", a->rank);
        if (a->cta_mask != NULL)
            td__buf_puts(b, "_multicast");
        if (a->cta_group != 0)
            td__buf_printf(b, "_cta_group%d", a->cta_group);
    } else if (a->kind == TD__A_TMA_STORE) {
        if (a->op == TD_TMA_STORE)
            td__buf_printf(b, "td_tma_store_%dd", a->rank);
        else
            td__buf_printf(b, "td_tma_reduce_%s_%dd", td_tma_op_name(a->op),
                           a->rank);
    } else {
        td__buf_puts(b, fixed[a->kind]);
        return;
    }
    if (a->policy != NULL)
        td__buf_puts(b, "_cache_hint");
}

static void record(td__cuda_needs *need, const td__async *a,
                   td__pctx *p)
{
    unsigned key = td__async_key(a);
    for (int i = 0; i < need->nasync; i++)
        if (need->async[i] == key)
            return;
    if (need->nasync == (int)(sizeof need->async / sizeof *need->async)) {
        if (p->err == 0)
            p->err = TD_EINVAL;
        return;
    }
    need->async[need->nasync++] = key;
}

void td__cuda_async(const td__async_out *o, const td__stmt *s,
                    td__cuda_needs *need)
{
    const td__async *a = s->async;
    td_buf *l = o->line;
    record(need, a, o->p);
    need->inc[TD__INC_CSTDINT] = true;
    if (a->kind == TD__A_TMA_LOAD || a->kind == TD__A_TMA_STORE ||
        a->kind == TD__A_PREFETCH_TMAP)
        need->inc[TD__INC_CUDA] = true;
    if (a->kind == TD__A_MAPA) {
        td__buf_printf(l, "unsigned int %s = ", a->var->name);
        o->p->live[a->var->id] = 1;
    }
    helper_name(l, a);
    if (a->kind == TD__A_BULK_WAIT_READ)
        td__buf_printf(l, "<%d>", a->n);
    td__buf_puts(l, "(");
    switch (a->kind) {
    case TD__A_MBAR_INIT:
    case TD__A_MBAR_EXPECT_TX:
    case TD__A_MBAR_WAIT:
    case TD__A_MAPA:
        addr(o, &a->a);
        td__buf_puts(l, ", ");
        ex(o, a->value, 0);
        break;
    case TD__A_PREFETCH_TMAP:
        td__buf_printf(l, "&%s", a->map->name);
        break;
    case TD__A_TMA_LOAD:
        addr(o, &a->a);
        td__buf_printf(l, ", &%s", a->map->name);
        for (int i = 0; i < a->rank; i++) {
            td__buf_puts(l, ", ");
            ex(o, a->coords[i], 0);
        }
        td__buf_puts(l, ", ");
        addr(o, &a->mbar);
        if (a->cta_mask != NULL) {
            td__buf_puts(l, ", ");
            ex(o, a->cta_mask, 0);
        }
        break;
    case TD__A_TMA_STORE:
        td__buf_printf(l, "&%s", a->map->name);
        for (int i = 0; i < a->rank; i++) {
            td__buf_puts(l, ", ");
            ex(o, a->coords[i], 0);
        }
        td__buf_puts(l, ", ");
        addr(o, &a->a);
        break;
    case TD__A_TCGEN05_LD:
    case TD__A_TCGEN05_ST: {
        /* The base address plus (row << 16 | column). */
        const td_expr *f = td__fold(&o->p->arena, a->a.offset, o->p->zero);
        int64_t v;
        td__buf_printf(l, "%s_taddr", a->a.buf->name);
        if (a->row != 0)
            td__buf_printf(l, " + (%du << 16)", a->row);
        if (f == NULL || !td__is_int(f, &v) || v != 0) {
            td__buf_puts(l, " + ");
            ex(o, a->a.offset, 1);
        }
        td__buf_printf(l, ", (unsigned int *)%s_ptr", a->regs->name);
        f = td__fold(&o->p->arena, a->word, o->p->zero);
        if (f == NULL || !td__is_int(f, &v) || v != 0) {
            td__buf_puts(l, " + ");
            ex(o, a->word, 1);
        }
        break;
    }
    case TD__A_TCGEN05_CP: {
        const td_expr *f = td__fold(&o->p->arena, a->a.offset, o->p->zero);
        int64_t v;
        td__buf_printf(l, "%s_taddr", a->a.buf->name);
        if (f == NULL || !td__is_int(f, &v) || v != 0) {
            td__buf_puts(l, " + ");
            ex(o, a->a.offset, 1);
        }
        td__buf_puts(l, ", ");
        addr(o, &a->mbar);
        td__buf_printf(l, ", %d, %d, %d", a->lbo, a->sbo,
                       a->swizzle == 0 ? 0 : 8 - 2 * a->swizzle);
        break;
    }
    case TD__A_BULK_S2C:
        ex(o, a->dst, 0);
        td__buf_puts(l, ", ");
        addr(o, &a->a);
        td__buf_puts(l, ", ");
        ex(o, a->value, 0);
        td__buf_puts(l, ", ");
        ex(o, a->cbar, 0);
        break;
    default:
        break;
    }
    if ((a->kind == TD__A_TMA_LOAD || a->kind == TD__A_TMA_STORE) &&
        a->policy != NULL) {
        td__buf_puts(l, ", ");
        ex(o, a->policy, 0);
    }
    td__buf_puts(l, ")");
}

/* ---- the helpers ------------------------------------------------------------ */

#define CVTA(x) "(unsigned int)__cvta_generic_to_shared(" x ")"

/*
 * The checked mode (docs/copy_async.md): with TD_CHECKED defined, the
 * cluster helpers trap on what PTX leaves undefined and the hardware
 * would silently wrap or round: a mapa rank outside the cluster
 * (%cluster_nctarank; a negative rank is a huge unsigned one) or of an
 * address that is not shared; a cluster copy of a size that is not a
 * positive multiple of 16, an operand not 16-byte aligned (the barrier
 * 8), or a barrier in another CTA than the destination (getctarank: the
 * copy completes on the barrier of the CTA it writes into); a multicast
 * mask that is 0 or names a rank outside the cluster.  Without the macro
 * the helpers are the same instructions as before.  The self-checking
 * programs define it; the stand-in (tests/cuda/emu) checks the same
 * always.
 */
#define CHECKED_NCTARANK \
    "    unsigned int td_n;\n" \
    "    asm volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(td_n));\n"
#define CHECKED_MAPA \
    "#ifdef TD_CHECKED\n" \
    "  {\n" CHECKED_NCTARANK \
    "    if (rank >= td_n || !__isShared(p))\n" \
    "      __trap(); /* TD_CHECKED: mapa outside the cluster or of a non-shared address */\n" \
    "  }\n" \
    "#endif\n"
#define CHECKED_S2C \
    "#ifdef TD_CHECKED\n" \
    "  {\n" \
    "    unsigned int td_rd, td_rb;\n" \
    "    asm volatile(\"getctarank.shared::cluster.u32 %0, %1;\" : \"=r\"(td_rd) : \"r\"(dst));\n" \
    "    asm volatile(\"getctarank.shared::cluster.u32 %0, %1;\" : \"=r\"(td_rb) : \"r\"(bar));\n" \
    "    if (bytes == 0 || bytes % 16 != 0 || dst % 16 != 0 || !__isShared(src) ||\n" \
    "        " CVTA("src") " % 16 != 0 || bar % 8 != 0 || td_rd != td_rb)\n" \
    "      __trap(); /* TD_CHECKED: a cluster copy PTX leaves undefined */\n" \
    "  }\n" \
    "#endif\n"
#define CHECKED_MULTICAST \
    "#ifdef TD_CHECKED\n" \
    "  {\n" CHECKED_NCTARANK \
    "    if (mask == 0 || (td_n < 16 && (mask >> td_n) != 0) || " CVTA("bar") " % 8 != 0)\n" \
    "      __trap(); /* TD_CHECKED: a multicast mask outside the cluster */\n" \
    "  }\n" \
    "#endif\n"

/* The helpers of the nodes with one form, by kind. */
static const char *const fixed_helpers[TD__A_COUNT] = {
    [TD__A_MBAR_INIT] =
        "__forceinline__ __device__ void td_mbar_init(unsigned long long "
        "*bar, unsigned int count) {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"mbarrier.init.shared.b64 [%0], %1;\" : : \"r\"("
        CVTA("bar") "), \"r\"(count) : \"memory\");\n"
        "#else\n"
        "  td_emu_mbar_init((uint64_t *)bar, count);\n"
        "#endif\n}\n",
    [TD__A_MBAR_EXPECT_TX] =
        "__forceinline__ __device__ void td_mbar_arrive_expect_tx(unsigned "
        "long long *bar, unsigned int bytes) {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"mbarrier.arrive.expect_tx.shared.b64 _, [%0], "
        "%1;\" : : \"r\"(" CVTA("bar") "), \"r\"(bytes) : \"memory\");\n"
        "#else\n"
        "  td_emu_mbar_arrive_expect_tx((uint64_t *)bar, bytes);\n"
        "#endif\n}\n",
    [TD__A_MBAR_WAIT] =
        "__forceinline__ __device__ void td_mbar_wait(unsigned long long "
        "*bar, unsigned int parity) {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  unsigned int a = " CVTA("bar") ", done = 0;\n"
        "  while (!done)\n"
        "    asm volatile(\"{\\n  .reg .pred p;\\n  mbarrier.try_wait.parity."
        "shared::cta.b64 p, [%1], %2;\\n  selp.u32 %0, 1, 0, p;\\n}\"\n"
        "                 : \"=r\"(done) : \"r\"(a), \"r\"(parity) : "
        "\"memory\");\n"
        "#else\n"
        "  while (!td_emu_mbar_try_wait((uint64_t *)bar, parity)) {\n  }\n"
        "#endif\n}\n",
    [TD__A_FENCE_PROXY_ASYNC] =
        "__forceinline__ __device__ void td_fence_proxy_async() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"fence.proxy.async.shared::cta;\" : : : "
        "\"memory\");\n"
        "#else\n#endif\n}\n",
    [TD__A_FENCE_MBAR_INIT] =
        "__forceinline__ __device__ void td_fence_mbarrier_init() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"fence.mbarrier_init.release.cluster;\" : : : "
        "\"memory\");\n"
        "#else\n#endif\n}\n",
    [TD__A_CLUSTER_SYNC] =
        "__forceinline__ __device__ void td_cluster_sync() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"barrier.cluster.arrive.release.aligned;\" : : : "
        "\"memory\");\n"
        "  asm volatile(\"barrier.cluster.wait.acquire.aligned;\" : : : "
        "\"memory\");\n"
        "#elif defined(TD_EMU)\n"
        "  td_emu_cluster_sync();\n"
        "#else\n"
        "  __builtin_trap(); /* a cluster: no host stand-in */\n"
        "#endif\n}\n",
    [TD__A_BULK_COMMIT] =
        "__forceinline__ __device__ void td_bulk_commit_group() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"cp.async.bulk.commit_group;\" : : : \"memory\");\n"
        "#else\n#endif\n}\n",
    [TD__A_BULK_WAIT_READ] =
        "template <int N>\n"
        "__forceinline__ __device__ void td_bulk_wait_group_read() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"cp.async.bulk.wait_group.read %0;\" : : \"n\"(N) : "
        "\"memory\");\n"
        "#else\n#endif\n}\n",
    [TD__A_PREFETCH_TMAP] =
        "__forceinline__ __device__ void td_prefetch_tensormap(const void "
        "*map) {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"prefetch.tensormap [%0];\" : : \"l\"(map) : "
        "\"memory\");\n"
        "#else\n  (void)map;\n#endif\n}\n",
    [TD__A_MAPA] =
        "__forceinline__ __device__ unsigned int td_mapa_shared_cluster("
        "const void *p, unsigned int rank) {\n"
        "#ifdef __CUDA_ARCH__\n"
        CHECKED_MAPA
        "  unsigned int d;\n"
        "  asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\" : \"=r\"(d) "
        ": \"r\"(" CVTA("p") "), \"r\"(rank));\n"
        "  return d;\n"
        "#elif defined(TD_EMU)\n"
        "  return td_emu_mapa(p, rank);\n"
        "#else\n"
        "  (void)p;\n  (void)rank;\n"
        "  __builtin_trap(); /* a cluster: no host stand-in */\n"
        "  return 0;\n"
        "#endif\n}\n",
    [TD__A_BULK_S2C] =
        "__forceinline__ __device__ void td_bulk_copy_s2c(unsigned int dst, "
        "const void *src, unsigned int bytes, unsigned int bar) {\n"
        "#ifdef __CUDA_ARCH__\n"
        CHECKED_S2C
        "  asm volatile(\"cp.async.bulk.shared::cluster.shared::cta."
        "mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\"\n"
        "               : : \"r\"(dst), \"r\"(" CVTA("src") "), \"r\"(bytes), "
        "\"r\"(bar) : \"memory\");\n"
        "#elif defined(TD_EMU)\n"
        "  td_emu_bulk_s2c(dst, src, bytes, bar);\n"
        "#else\n"
        "  (void)dst;\n  (void)src;\n  (void)bytes;\n  (void)bar;\n"
        "  __builtin_trap(); /* a cluster: no host stand-in */\n"
        "#endif\n}\n"};

/* The operands {%i, %i+1, ...} of the rank coordinates. */
static void coord_ops(td_buf *o, int first, int rank)
{
    td__buf_puts(o, "{");
    for (int i = 0; i < rank; i++)
        td__buf_printf(o, "%s%%%d", i ? ", " : "", first + i);
    td__buf_puts(o, "}");
}

/* A TMA load or store helper (the key's rank, multicast, cta_group, cache
 * hint and reduction). */
static void tma_helper(td_buf *o, const td__async *a)
{
    bool load = a->kind == TD__A_TMA_LOAD, mc = a->cta_mask != NULL;
    bool hint = a->policy != NULL;
    int r = a->rank;
    td__buf_puts(o, "__forceinline__ __device__ void ");
    helper_name(o, a);
    if (load)
        td__buf_puts(o, "(void *smem, const void *map");
    else
        td__buf_puts(o, "(const void *map");
    for (int i = 0; i < r; i++)
        td__buf_printf(o, ", int c%d", i);
    if (load)
        td__buf_puts(o, ", unsigned long long *bar");
    else
        td__buf_puts(o, ", const void *smem");
    if (mc)
        td__buf_puts(o, ", unsigned short mask");
    if (hint)
        td__buf_puts(o, ", unsigned long long policy");
    td__buf_puts(o, ") {\n#ifdef __CUDA_ARCH__\n");
    if (mc)
        td__buf_puts(o, CHECKED_MULTICAST);
    td__buf_puts(o, "  asm volatile(\"");
    int next;
    if (load) {
        td__buf_printf(o, "cp.async.bulk.tensor.%dd.shared::cluster.global."
                          "mbarrier::complete_tx::bytes%s",
                       r, mc ? ".multicast::cluster" : "");
        if (a->cta_group != 0)
            td__buf_printf(o, ".cta_group::%d", a->cta_group);
        td__buf_printf(o, "%s [%%0], [%%1, ", hint ? ".L2::cache_hint" : "");
        coord_ops(o, 2, r);
        td__buf_printf(o, "], [%%%d]", 2 + r);
        next = 3 + r;
    } else {
        if (a->op == TD_TMA_STORE)
            td__buf_printf(o, "cp.async.bulk.tensor.%dd.global.shared::cta."
                              "tile.bulk_group", r);
        else
            td__buf_printf(o, "cp.reduce.async.bulk.tensor.%dd.global."
                              "shared::cta.%s.tile.bulk_group",
                           r, td_tma_op_name(a->op));
        td__buf_printf(o, "%s [%%0, ", hint ? ".L2::cache_hint" : "");
        coord_ops(o, 1, r);
        td__buf_printf(o, "], [%%%d]", 1 + r);
        next = 2 + r;
    }
    if (mc)
        td__buf_printf(o, ", %%%d", next++);
    if (hint)
        td__buf_printf(o, ", %%%d", next);
    td__buf_puts(o, ";\"\n      : : ");
    if (load)
        td__buf_puts(o, "\"r\"(" CVTA("smem") "), ");
    td__buf_puts(o, "\"l\"(map)");
    for (int i = 0; i < r; i++)
        td__buf_printf(o, ", \"r\"(c%d)", i);
    td__buf_puts(o, load ? ", \"r\"(" CVTA("bar") ")"
                         : ", \"r\"(" CVTA("smem") ")");
    if (mc)
        td__buf_puts(o, ", \"h\"(mask)");
    if (hint)
        td__buf_puts(o, ", \"l\"(policy)");
    td__buf_puts(o, " : \"memory\");\n");
    if (mc) {
        /* The stand-in runs a cluster's CTAs together; another host
         * build cannot stand in for one. */
        td__buf_puts(o, "#elif defined(TD_EMU)\n");
        if (hint)
            td__buf_puts(o, "  (void)policy;\n");
        td__buf_printf(o, "  const int c[%d] = {", r);
        for (int i = 0; i < r; i++)
            td__buf_printf(o, "%sc%d", i ? ", " : "", i);
        td__buf_printf(o, "};\n"
                          "  td_emu_tma_load_multicast(smem, (const "
                          "CUtensorMap *)map, %d, c, (uint64_t *)bar, "
                          "mask);\n", r);
    }
    td__buf_puts(o, "#else\n");
    if (hint)
        td__buf_puts(o, "  (void)policy;\n");
    if (mc) {
        td__buf_puts(o, "  (void)smem;\n  (void)map;\n  (void)bar;\n"
                        "  (void)mask;\n");
        for (int i = 0; i < r; i++)
            td__buf_printf(o, "  (void)c%d;\n", i);
        td__buf_puts(o, "  __builtin_trap(); /* multicast: no host "
                        "stand-in */\n#endif\n}\n");
        return;
    }
    td__buf_printf(o, "  const int c[%d] = {", r);
    for (int i = 0; i < r; i++)
        td__buf_printf(o, "%sc%d", i ? ", " : "", i);
    td__buf_puts(o, "};\n");
    if (load)
        td__buf_printf(o, "  td_emu_tma_load(smem, (const CUtensorMap *)map, "
                          "%d, c, (uint64_t *)bar);\n", r);
    else
        td__buf_printf(o, "  td_emu_tma_store((const CUtensorMap *)map, %d, "
                          "c, smem, %d);\n", r, (int)a->op);
    td__buf_puts(o, "#endif\n}\n");
}

/* A tcgen05.ld / st helper of the key's shape and NUM: the registers
 * through a pointer (the helper is inlined, so constant indices keep them
 * in registers); a host build traps, tensor memory has no stand-in. */
static void tcgen05_helper(td_buf *o, const td__async *a)
{
    bool ld = a->kind == TD__A_TCGEN05_LD;
    int n = td_ir_tcgen05_regs(a->shape, a->num);
    td__buf_puts(o, "__forceinline__ __device__ void ");
    helper_name(o, a);
    td__buf_printf(o, "(unsigned int taddr, unsigned int *r) {\n"
                      "#ifdef __CUDA_ARCH__\n"
                      "  asm volatile(\"tcgen05.%s.sync.aligned.%s.x%d"
                      ".b32 ",
                   ld ? "ld" : "st", td_ir_tcgen05_ldst_shape(a->shape),
                   a->num);
    /* ld: {regs}, [taddr]; st: [taddr], {regs}. */
    int first = ld ? 0 : 1;
    if (!ld)
        td__buf_puts(o, "[%0], ");
    td__buf_puts(o, "{");
    for (int i = 0; i < n; i++)
        td__buf_printf(o, "%s%%%d", i ? ", " : "", first + i);
    td__buf_puts(o, "}");
    if (ld)
        td__buf_printf(o, ", [%%%d]", n);
    td__buf_puts(o, ";\"\n      : ");
    for (int i = 0; ld && i < n; i++)
        td__buf_printf(o, "%s\"=r\"(r[%d])", i ? ", " : "", i);
    td__buf_puts(o, ld ? " : " : ": ");
    td__buf_puts(o, "\"r\"(taddr)");
    for (int i = 0; !ld && i < n; i++)
        td__buf_printf(o, ", \"r\"(r[%d])", i);
    td__buf_puts(o, " : \"memory\");\n#else\n"
                    "  (void)taddr;\n  (void)r;\n"
                    "  __builtin_trap(); /* tensor memory: no host stand-in */\n"
                    "#endif\n}\n");
}

/* A tcgen05.cp helper of the key's shape and CTA group: it builds the
 * shared memory descriptor of sm_100 (start address >> 4 in bits 0-13,
 * leading byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45,
 * the fixed 0b001 at 46, base offset 0, the layout type in 61-63: 0 no
 * swizzle, 6, 4, 2 the 32-, 64- and 128-byte swizzles) from the address,
 * the two strides in 16-byte units and the layout type; a host build
 * traps. */
static void tcgen05_cp_helper(td_buf *o, const td__async *a)
{
    const char *mc = td_ir_tcgen05_cp_multicast((td_ir_cp_shape)a->num);
    td__buf_puts(o, "__forceinline__ __device__ void ");
    helper_name(o, a);
    td__buf_printf(
        o,
        "(unsigned int taddr, const void *smem, unsigned int lbo, "
        "unsigned int sbo, unsigned int layout) {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  unsigned long long desc =\n"
        "      (unsigned long long)(((unsigned int)__cvta_generic_to_shared("
        "smem) >> 4) & 0x3FFF) |\n"
        "      (unsigned long long)(lbo & 0x3FFF) << 16 |\n"
        "      (unsigned long long)(sbo & 0x3FFF) << 32 | 1ull << 46 |\n"
        "      (unsigned long long)(layout & 7) << 61;\n"
        "  asm volatile(\"tcgen05.cp.cta_group::%d.%s%s%s [%%0], %%1;\"\n"
        "      : : \"r\"(taddr), \"l\"(desc) : \"memory\");\n"
        "#else\n"
        "  (void)taddr;\n  (void)smem;\n  (void)lbo;\n  (void)sbo;\n"
        "  (void)layout;\n"
        "  __builtin_trap(); /* tensor memory: no host stand-in */\n"
        "#endif\n}\n",
        a->cta_group == 2 ? 2 : 1,
        td_ir_tcgen05_cp_shape((td_ir_cp_shape)a->num), mc[0] ? "." : "", mc);
}

static void unkey(unsigned key, td__async *a)
{
    static const td_expr some;
    memset(a, 0, sizeof *a);
    a->kind = (td__akind)(key & 15);
    if (a->kind == TD__A_TCGEN05_LD || a->kind == TD__A_TCGEN05_ST) {
        a->num = 1 << (key >> 11 & 7);
        a->shape = (td_ir_ldst_shape)(key >> 14 & 3);
        return;
    }
    if (a->kind == TD__A_TCGEN05_CP) {
        a->num = (int)(key >> 11 & 15);
        a->cta_group = key >> 4 & 1 ? 2 : 1;
        return;
    }
    a->rank = (int)(key >> 4 & 7);
    a->cta_mask = key >> 7 & 1 ? &some : NULL;
    a->cta_group = (int)(key >> 8 & 3);
    a->policy = key >> 10 & 1 ? &some : NULL;
    a->op = (td_tma_op)(key >> 11 & 15);
}

static int cmp_key(const void *x, const void *y)
{
    unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;
    return a < b ? -1 : a > b;
}

void td__cuda_async_prelude(td_buf *o, const td__cuda_needs *need)
{
    unsigned keys[sizeof need->async / sizeof *need->async];
    int n = need->nasync;
    if (n == 0)
        return;
    memcpy(keys, need->async, sizeof *keys * (size_t)n);
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    /* What a host build calls: the CPU stand-in defines them (nvcc's host
     * pass only needs them declared: no host code calls these helpers).
     * The tensor-memory helpers call none (they trap). */
    bool emu = false;
    for (int i = 0; i < n; i++)
        emu |= (keys[i] & 15) != TD__A_TCGEN05_LD &&
               (keys[i] & 15) != TD__A_TCGEN05_ST &&
               (keys[i] & 15) != TD__A_TCGEN05_CP;
    if (emu)
        td__buf_puts(o, "\n#ifndef __CUDA_ARCH__\n"
                    "void td_emu_mbar_init(uint64_t *bar, unsigned count);\n"
                    "void td_emu_mbar_arrive_expect_tx(uint64_t *bar, "
                    "unsigned bytes);\n"
                    "bool td_emu_mbar_try_wait(uint64_t *bar, unsigned "
                    "parity);\n");
    bool maps = false;
    for (int i = 0; i < n; i++)
        maps |= (keys[i] & 15) == TD__A_TMA_LOAD ||
                (keys[i] & 15) == TD__A_TMA_STORE;
    if (maps)
        td__buf_puts(o, "void td_emu_tma_load(void *smem, const CUtensorMap "
                        "*map, int rank, const int *coords, uint64_t *bar);\n"
                        "void td_emu_tma_store(const CUtensorMap *map, int "
                        "rank, const int *coords, const void *smem, int "
                        "reduce_op);\n");
    if (emu)
        td__buf_puts(o, "#endif\n");
    for (int i = 0; i < n; i++) {
        td__async a;
        unkey(keys[i], &a);
        td__buf_puts(o, "\n");
        if (a.kind == TD__A_TMA_LOAD || a.kind == TD__A_TMA_STORE)
            tma_helper(o, &a);
        else if (a.kind == TD__A_TCGEN05_LD || a.kind == TD__A_TCGEN05_ST)
            tcgen05_helper(o, &a);
        else if (a.kind == TD__A_TCGEN05_CP)
            tcgen05_cp_helper(o, &a);
        else
            td__buf_puts(o, fixed_helpers[a.kind]);
    }
}
