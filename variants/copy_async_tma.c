/*
 * The copy_async variants `tma_auto` and `tma_explicit` (upstream
 * copy_async/tma.py, priority 10): one thread copies a tile between global
 * and shared memory with TMA tensor instructions through a tensor map.
 * Their two predicates are TVM's (validate_tma_copy_op: a global<->shared
 * pair; single_thread: thread scope), registered once and named by both
 * rules.  The emitter reads the config as TVM's _runtime_config does, in
 * its order and with its texts, adds our refusals (a multicast without a
 * cluster, gather4, a cache policy PTX has no constant for, an mbarrier
 * that is no shared uint64 element), plans the map
 * (copy_async_tma_plan.c) and issues one TMA instruction per issue of the
 * plan: a load completing on the caller's mbarrier, or a store or
 * reduction in a bulk group.  Nothing waits: the caller arms the barrier
 * with the byte count and waits on it, or commits and waits on the bulk
 * group; the note an accepted call leaves says so.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "copy_async_tma_plan.h"
#include "td_internal.h"
#include "variants.h"

/* TVM's _COMMON_CONFIG; tma_explicit adds gather4 and src_selector. */
static const char *const common_keys[] = {
    "cache_hint",  "cta_group",          "cta_mask",
    "mbar",        "mbarrier_addr",      "oob",
    "prefetch_tensormap", "tensormap_l2_promotion", "tma_dtype",
    "use_tma_reduce"};

static bool is_shared(const char *scope)
{
    return strncmp(scope, "shared", 6) == 0;
}

/* ---- predicates (TVM's names and texts) ----------------------------------- */

static bool tma_copy_op_pred(const td_call *call, const td_args *args,
                             void *user, td_reason *why)
{
    (void)args;
    (void)user;
    const td_region *sr = td__copy_src_region(call);
    const char *s = call->buffers[sr->buffer].scope;
    const char *d = td__copy_dst(call)->scope;
    bool g2s = strcmp(s, "global") == 0 && is_shared(d);
    bool s2g = is_shared(s) && strcmp(d, "global") == 0;
    if (!g2s && !s2g) {
        td_reason_set(why, "not a global<->shared TMA copy");
        return false;
    }
    return true;
}

static bool single_thread_pred(const td_call *call, const td_args *args,
                               void *user, td_reason *why)
{
    (void)args;
    (void)user;
    if (call->scope != TD_SCOPE_THREAD) {
        /* TVM formats the ExecScope object here, not its kind. */
        td_reason_set(why,
                      "unsupported exec_scope T.ExecScope(\"%s\"), expected "
                      "single thread",
                      td_exec_scope_name(call->scope));
        return false;
    }
    return true;
}

/* Registered with tma_auto; tma_explicit's rule names the same two, and
 * dsmem's names single_thread, since a predicate name is one registration. */
static const td_pred_desc tma_preds[] = {
    {.name = "validate_tma_copy_op", .fn = tma_copy_op_pred},
    {.name = "single_thread", .fn = single_thread_pred},
};

/* ---- the config (_runtime_config) ------------------------------------------ */

/* What the emitter takes from the config once it passed. */
typedef struct tma_cfg {
    int cta_group;
    bool multicast;          /* cta_mask is no constant 0 */
    const td_config_entry *mask; /* cta_mask (an int or an expression) */
    const td_config_entry *mbar;
    td_tma_op op;
    bool has_policy;
    uint64_t policy;
    bool prefetch;
} tma_cfg;

static bool known_key(const char *k, bool explicit_map)
{
    /* The program generator's keys (kernel_specials) are no variant's. */
    if (strncmp(k, "kernel_", 7) == 0)
        return true;
    for (size_t i = 0; i < sizeof common_keys / sizeof *common_keys; i++)
        if (strcmp(k, common_keys[i]) == 0)
            return true;
    return explicit_map &&
           (strcmp(k, "gather4") == 0 || strcmp(k, "src_selector") == 0);
}

/* "['a', 'b']": the unknown keys sorted, as Python prints the list. */
static bool unknown_keys(const td_call *call, bool explicit_map, char *buf,
                         size_t cap)
{
    const char *u[TD_MAX_CONFIG];
    int n = 0;
    for (int i = 0; i < call->nconfig && n < TD_MAX_CONFIG; i++)
        if (!known_key(call->config[i].key, explicit_map))
            u[n++] = call->config[i].key;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(u[j - 1], u[j]) > 0; j--) {
            const char *t = u[j];
            u[j] = u[j - 1];
            u[j - 1] = t;
        }
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s'%s'", i ? ", " : "",
                              u[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
    return n > 0;
}

static bool entry_int(const td_config_entry *e, int64_t *v)
{
    if (e == NULL)
        return false;
    if (e->kind == TD_VALUE_INT) {
        *v = e->i;
        return true;
    }
    if (e->kind == TD_VALUE_BOOL) {
        *v = e->b;
        return true;
    }
    return false;
}

static const char *const reduce_ops[] = {"add", "min", "max", "inc",
                                         "dec", "and", "or",  "xor"};

/* The L2 cache policies PTX's createpolicy gives for TVM's built-in names
 * (backend/cuda/op.py _PTX_CACHE_POLICY). */
static const struct {
    const char *name;
    uint64_t policy;
} policies[] = {
    {"evict_normal", 0x1000000000000000ull},
    {"evict_first", 0x12F0000000000000ull},
    {"evict_last", 0x14F0000000000000ull},
};

/* TVM's _normalize_l2_promotion. */
static bool l2_promotion(const td_config_entry *e, int *out, td_reason *why)
{
    static const struct {
        const char *name;
        int v;
    } names[] = {{"none", 0},     {"L2::none", 0}, {"L2::64B", 1},
                 {"L2::128B", 2}, {"L2::256B", 3}};
    int64_t v;
    *out = TD_TMAP_L2_DEFAULT;
    if (e == NULL)
        return true;
    if (e->kind == TD_VALUE_INT) {
        v = e->i;
        if (v < 0 || v > 3) {
            td_reason_set(why, "TensorMap L2 promotion integer must be in "
                               "[0, 3]");
            return false;
        }
        *out = (int)v;
        return true;
    }
    if (e->kind == TD_VALUE_STRING)
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (strcmp(e->s, names[i].name) == 0) {
                *out = names[i].v;
                return true;
            }
    td_reason_set(why, "TensorMap L2 promotion must be None, 0..3, 'none', "
                       "'L2::64B', 'L2::128B', or 'L2::256B'");
    return false;
}

/*
 * TVM's _runtime_config in its order, then tma_auto's gather4 refusal and
 * ours.  Fills *c and the plan input's config fields; false with the
 * reason in why.
 */
static bool runtime_config(const td_call *call, td_tma_plan_in *pin,
                           bool explicit_map, tma_cfg *c, td_reason *why)
{
    const char *vname = explicit_map ? "tma_explicit" : "tma_auto";
    bool g2s = pin->direction == TD_TMAP_G2S;
    char keys[TD_REASON_MAX / 2];
    memset(c, 0, sizeof *c);
    if (unknown_keys(call, explicit_map, keys, sizeof keys)) {
        td_reason_set(why, "dispatch=%s does not support config key(s) %s",
                      vname, keys);
        return false;
    }
    const td_config_entry *oob = td_call_config(call, "oob");
    if (!explicit_map && oob != NULL) {
        td_reason_set(why, "tma_auto does not support non-default oob; use "
                           "dispatch=\"tma_explicit\"");
        return false;
    }
    if (!g2s && oob != NULL) {
        td_reason_set(why, "TensorMap oob is only valid for explicit "
                           "global-to-shared copies");
        return false;
    }
    if (oob != NULL && oob->kind != TD_VALUE_STRING) {
        td_reason_set(why, "unsupported TensorMap oob; expected None, "
                           "'zero', or 'nan'");
        return false;
    }
    pin->oob = oob != NULL ? oob->s : NULL;

    int64_t v = 1;
    const td_config_entry *e = td_call_config(call, "cta_group");
    if (e != NULL && !entry_int(e, &v)) {
        td_reason_set(why, "cta_group must be 1 or 2, got %s", e->s);
        return false;
    }
    if (v != 1 && v != 2) {
        td_reason_set(why, "cta_group must be 1 or 2, got %lld",
                      (long long)v);
        return false;
    }
    c->cta_group = (int)v;
    pin->cta_group = (int)v;

    /* cta_mask: a static 0 is unicast; anything else multicasts. */
    e = td_call_config(call, "cta_mask");
    bool mask_zero = true;
    if (e != NULL) {
        if (entry_int(e, &v)) {
            if (v < 0 || v > 0xFFFF) {
                td_reason_set(why, "cta_mask must fit uint16, got %lld",
                              (long long)v);
                return false;
            }
            mask_zero = v == 0;
        } else if (e->kind == TD_VALUE_EXPR ||
                   (e->kind == TD_VALUE_STRING && e->s[0] != '\0')) {
            mask_zero = false;
        } else {
            td_reason_set(why, "cta_mask must be an integer or TIR "
                               "expression");
            return false;
        }
    }
    const td_config_entry *ma = td_call_config(call, "mbarrier_addr");
    bool ma_set = false;
    if (ma != NULL) {
        if (entry_int(ma, &v))
            ma_set = v != 0;
        else if (ma->kind == TD_VALUE_EXPR)
            ma_set = true;
        else {
            td_reason_set(why, "mbarrier_addr must be bool or Expr");
            return false;
        }
    }
    c->mbar = td_call_config(call, "mbar");
    if (g2s) {
        if (c->mbar == NULL) {
            td_reason_set(why, "global-to-shared TMA requires mbar");
            return false;
        }
    } else {
        if (c->mbar != NULL) {
            td_reason_set(why, "mbar is only valid for global-to-shared TMA");
            return false;
        }
        if (ma_set) {
            td_reason_set(why, "mbarrier_addr is only valid for "
                               "global-to-shared TMA");
            return false;
        }
        if (!mask_zero) {
            td_reason_set(why, "cta_mask is only valid for global-to-shared "
                               "TMA");
            return false;
        }
    }
    e = td_call_config(call, "use_tma_reduce");
    c->op = TD_TMA_STORE;
    if (e != NULL) {
        if (g2s) {
            td_reason_set(why, "use_tma_reduce is only valid for "
                               "shared-to-global TMA");
            return false;
        }
        for (size_t i = 0; e->kind == TD_VALUE_STRING &&
                           i < sizeof reduce_ops / sizeof *reduce_ops;
             i++)
            if (strcmp(e->s, reduce_ops[i]) == 0)
                c->op = (td_tma_op)(TD_TMA_ADD + (int)i);
        if (c->op == TD_TMA_STORE) {
            td_reason_set(why, "unsupported TMA reduce operation '%s'",
                          e->kind == TD_VALUE_STRING ? e->s : "?");
            return false;
        }
    }
    e = td_call_config(call, "cache_hint");
    if (e != NULL && e->kind != TD_VALUE_STRING) {
        td_reason_set(why, "cache_hint must be a string or TIR expression, "
                           "got %s",
                      e->kind == TD_VALUE_BOOL ? "bool" : "int");
        return false;
    }
    if (e != NULL && e->s[0] != '\0') {
        for (size_t i = 0; i < sizeof policies / sizeof *policies; i++)
            if (strcmp(e->s, policies[i].name) == 0) {
                c->has_policy = true;
                c->policy = policies[i].policy;
            }
        if (!c->has_policy) {
            /* TVM raises this while emitting (an exception row); we
             * decline with its text at the config stage. */
            td_reason_set(why, "Unsupported built-in cache policy '%s'; pass "
                               "cache_policy explicitly",
                          e->s);
            return false;
        }
    }
    if (!l2_promotion(td_call_config(call, "tensormap_l2_promotion"),
                      &pin->l2_promotion, why))
        return false;
    e = td_call_config(call, "prefetch_tensormap");
    if (e != NULL) {
        if (!entry_int(e, &v)) {
            td_reason_set(why, "prefetch_tensormap must be true or false");
            return false;
        }
        c->prefetch = v != 0;
    }
    e = td_call_config(call, "tma_dtype");
    if (e != NULL && e->kind != TD_VALUE_STRING) {
        td_reason_set(why, "tma_dtype must be a dtype name");
        return false;
    }
    pin->tma_dtype = e != NULL ? e->s : NULL;

    bool g4 = td_call_config(call, "gather4") != NULL ||
              td_call_config(call, "src_selector") != NULL;
    if (g4 && !explicit_map) {
        td_reason_set(why, "gather4 and src_selector are only supported by "
                           "dispatch=\"tma_explicit\"");
        return false;
    }
    if (g4) {
        td_reason_set(why, "gather4/src_selector are not supported by "
                           "tiledispatch yet (sm_100 gather4 and map "
                           "selection)");
        return false;
    }
    /* Ours: TVM multicasts without checking that the kernel is launched as
     * a cluster, so the CTAs a mask names may not exist.  With a cluster
     * launch a constant mask must name CTAs of the cluster only (their
     * ranks are 0 .. x*y*z - 1); an expression cannot be checked here. */
    if (!mask_zero && call->cluster[0] == 0) {
        td_reason_set(why, "cta_mask multicasts to the CTAs of a cluster, "
                           "but the call declares no cluster launch "
                           "(TVM emits .multicast::cluster without one)");
        return false;
    }
    if (!mask_zero) {
        int64_t ncta = 1;
        for (int k = 0; k < 3; k++)
            ncta *= call->cluster[k] > 0 ? call->cluster[k] : 1;
        const td_config_entry *me = td_call_config(call, "cta_mask");
        if (entry_int(me, &v) && ncta < 16 && (v >> ncta) != 0) {
            td_reason_set(why, "cta_mask 0x%llx names CTA ranks outside the "
                               "cluster of %lld CTAs (bits 0 to %lld)",
                          (unsigned long long)v, (long long)ncta,
                          (long long)ncta - 1);
            return false;
        }
        if (me->kind == TD_VALUE_STRING) {
            td_reason_set(why, "cta_mask must be an integer or an "
                               "expression of the call's scalars and ids");
            return false;
        }
        c->multicast = true;
        c->mask = me;
    }
    if (g2s && c->mbar->kind != TD_VALUE_ELEM) {
        td_reason_set(why, "mbar must be an element of a shared uint64 "
                           "buffer the call declares (e.g. mbar[0])");
        return false;
    }
    if (g2s) {
        const td_buffer *b = &call->buffers[c->mbar->elem_buffer];
        if (b->dtype != TD_U64 || !is_shared(b->scope)) {
            td_reason_set(why, "mbar must be an element of a shared uint64 "
                               "buffer; %.*s is %s %s",
                          (int)strnlen(b->name, TD_NAME_MAX), b->name,
                          b->scope, td_dtype_name(b->dtype));
            return false;
        }
    }
    return true;
}

/* ---- emission ------------------------------------------------------------ */

static int decline_diag(const td_diag *d, td_reason *why)
{
    td_reason_set(why, "%s", d->msg);
    return d->code == TD_ENOMEM ? TD_ENOMEM : TD_EDECLINED;
}

/* The issue loop's index for axis a: (issue / div) % extent, with the
 * trivial division and remainder left out. */
static td_expr *axis_index(td_ir *ir, td_var *issue, int64_t div,
                           int64_t ext, int64_t n)
{
    td_expr *x = td_var_ref(ir, issue);
    if (div > 1)
        x = td_div(ir, x, td_int(ir, div));
    if (div * ext < n)
        x = td_mod(ir, x, td_int(ir, ext));
    return x;
}

static int tma_emit(const td_call *call, td_ir *ir, bool explicit_map,
                    td_reason *why)
{
    td_tma_plan_in in;
    td_diag d;
    td_diag_clear(&d);
    if (td__tma_plan_in_from_call(call, &in, &d) != 0)
        return decline_diag(&d, why);
    in.explicit_map = explicit_map;
    tma_cfg c;
    memset(&c, 0, sizeof c);
    /* TVM compares the dtypes before it reads the config. */
    if (in.global.dtype == in.shared.dtype || explicit_map) {
        if (!runtime_config(call, &in, explicit_map, &c, why))
            return TD_EDECLINED;
    }
    td_tma_plan p;
    if (td__tma_plan(&in, &p, &d) != 0)
        return decline_diag(&d, why);

    bool g2s = in.direction == TD_TMAP_G2S;
    const td_region *sr = td__copy_src_region(call);
    int gi = g2s ? sr->buffer : call->dst.buffer;
    int si = g2s ? call->dst.buffer : sr->buffer;
    td_ir_buf *gb = td__copy_declare(call, gi, ir, why);
    td_ir_buf *sb = gb != NULL ? td__copy_declare(call, si, ir, why) : NULL;
    if (gb == NULL || sb == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    const td_ir_tmap *map = td_ir_tensor_map(ir, gb, &p.map);
    if (map == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_ENOMEM;

    td_ir_tma t = {.map = map, .op = c.op};
    if (g2s) {
        int mb = -1;
        td_expr *mi = td__config_elem_index(ir, call, c.mbar, &mb, why);
        if (mi == NULL)
            return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
        td_ir_buf *mbuf = td__copy_declare(call, mb, ir, why);
        if (mbuf == NULL)
            return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
        t.mbar = (td_ir_addr){mbuf, mi};
        /* .cta_group::N exists from sm_100 on; TVM spells it there only. */
        t.cta_group = in.sm >= 100 ? c.cta_group : 0;
    }
    if (c.multicast) {
        /* ctaMask is a .u16 operand (TVM casts the mask to uint16). */
        int64_t mv;
        if (entry_int(c.mask, &mv)) {
            t.cta_mask = td_const_u(ir, TD_U16, (uint64_t)mv);
        } else {
            td_expr *me = td__config_expr(ir, call, c.mask, -1, why);
            if (me == NULL)
                return td_ir_status(ir) != 0 ? td_ir_status(ir)
                                             : TD_EDECLINED;
            t.cta_mask = td_cast(ir, TD_U16, me);
        }
    }
    if (c.has_policy)
        t.policy = td_const_u(ir, TD_U64, c.policy);
    if (c.prefetch)
        td_ir_prefetch_tensormap(ir, map);

    const td_tmap *m = &p.map;
    td_var *issue = NULL;
    if (p.n_issue > 1)
        issue = td_ir_for(ir, "issue", td_int(ir, p.n_issue), TD_LOOP_UNROLL);
    td_expr *coord[TD_TMAP_MAX_DIMS];
    const td_region *gr = g2s ? sr : &call->dst;
    for (int k = 0; k < m->rank; k++) {
        /* A global start over block ids or scalars: the coordinate is its
         * non-constant part, scaled as the plan scaled the start, plus the
         * constant (TVM's simplified floordiv(start, inner)). */
        td_expr *dyn = NULL;
        if (m->coord_src[k] != 0) {
            int v = m->coord_src[k] - 1;
            dyn = td__region_start_scaled(ir, call, gr, p.view_dim[v],
                                          m->coord_mul[k],
                                          p.view_div[v] * m->coord_div[k]);
        }
        coord[k] = td_int(ir, m->coordinates[k]);
        if (dyn != NULL)
            coord[k] = m->coordinates[k] != 0 ? td_add(ir, dyn, coord[k])
                                              : dyn;
    }
    td_expr *soff = td_int(ir, p.smem_offset);
    int64_t div = 1;
    for (int a = m->nissue - 1; issue != NULL && a >= 0; a--) {
        const td_tmap_issue *x = &m->issue[a];
        td_expr *ix = axis_index(ir, issue, div, x->extent, p.n_issue);
        coord[x->dim] = td_add(ir, coord[x->dim], ix);
        soff = td_add(ir, soff, td_mul(ir, ix, td_int(ir, x->smem_stride)));
        div *= x->extent;
    }
    for (int k = 0; k < m->rank && k < 5; k++)
        t.coords[k] = coord[k];
    t.smem = (td_ir_addr){sb, soff};
    if (g2s)
        td_ir_tma_load(ir, &t);
    else
        td_ir_tma_store(ir, &t);
    if (issue != NULL)
        td_ir_end_for(ir);
    int rc = td_ir_status(ir);
    if (rc != 0)
        return rc;

    int64_t bytes = td_region_size(&call->dst) *
                    td_dtype_bits(call->buffers[call->dst.buffer].dtype) / 8;
    if (g2s && c.multicast) {
        const td_buffer *mbb = &call->buffers[c.mbar->elem_buffer];
        td_reason_set(why,
                      "the TMA load multicasts the tile to the CTAs of "
                      "cta_mask, into each one's tile at the same offset, and "
                      "completes on %.*s at the same offset in each: every "
                      "one of those CTAs arms its own with "
                      "mbarrier.arrive.expect_tx(%lld) and waits on its "
                      "phase; nothing waits here",
                      (int)strnlen(mbb->name, TD_NAME_MAX), mbb->name,
                      (long long)bytes);
    } else if (g2s) {
        const td_buffer *mbb = &call->buffers[c.mbar->elem_buffer];
        td_reason_set(why,
                      "the TMA load completes on %.*s and nothing waits: the "
                      "caller arms it with mbarrier.arrive.expect_tx(%lld) "
                      "and waits on its phase before reading the tile",
                      (int)strnlen(mbb->name, TD_NAME_MAX), mbb->name,
                      (long long)bytes);
    } else {
        td_reason_set(why,
                      "the TMA %s reads the shared tile asynchronously: "
                      "before it the writers' stores need "
                      "fence.proxy.async.shared::cta and a barrier; after "
                      "it the caller commits the bulk group "
                      "(cp.async.bulk.commit_group) and waits "
                      "(cp.async.bulk.wait_group.read 0) before reusing the "
                      "tile (%lld bytes)",
                      c.op == TD_TMA_STORE ? "store" : "reduction",
                      (long long)bytes);
    }
    return 0;
}

static int auto_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    return tma_emit(call, ir, false, why);
}

static int explicit_emit(const td_call *call, const td_op_desc *op,
                         const void *plan, td_ir *ir, void *user,
                         td_reason *why)
{
    (void)op;
    (void)plan;
    (void)user;
    return tma_emit(call, ir, true, why);
}

const td_impl_desc td__variant_copy_async_tma_auto = {
    .name = "tma_auto",
    .emit = auto_emit,
    .preds = tma_preds,
    .npreds = sizeof tma_preds / sizeof *tma_preds,
};

const td_impl_desc td__variant_copy_async_tma_explicit = {
    .name = "tma_explicit",
    .emit = explicit_emit,
};
