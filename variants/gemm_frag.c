/*
 * The mma.sync fragments as layouts: the instruction table, the carving
 * specs as data and TVM's fragment analysis (mma_m16n8k_.py: _slice_group,
 * _split, _align, _canon, _region_totals, _frag_group, _same_iters,
 * _reg_layout).  Contracts in gemm_frag.h; tests/layout/test_gemm_frag.c
 * replays TVM's own values (tests/upstream/data/gemm_frag.txt).
 */
#include <stdio.h>
#include <string.h>

#include "gemm_frag.h"

const td_mma_inst td__mma_insts[] = {
    {"m16n8k16.bf16", 16, 8, 16, 2, TD_BF16, TD_BF16, TD_F32, TD_F32, 80, true},
    {"m16n8k16.f16", 16, 8, 16, 2, TD_F16, TD_F16, TD_F32, TD_F32, 80, true},
    {"m16n8k8.bf16", 16, 8, 8, 2, TD_BF16, TD_BF16, TD_F32, TD_F32, 80, true},
    {"m16n8k8.f16", 16, 8, 8, 2, TD_F16, TD_F16, TD_F32, TD_F32, 75, true},
    /* tiledispatch only (design/gemm/plan.md 1.6; variant mma_ext.m16n8k*,
     * off in rules/upstream.yaml): float16 accumulation, tf32 (float32 in
     * memory, with allow_tf32), 8-bit integers, 8-bit floats. */
    {"m16n8k16.f16acc", 16, 8, 16, 2, TD_F16, TD_F16, TD_F16, TD_F16, 80, false},
    {"m16n8k8.f16acc", 16, 8, 8, 2, TD_F16, TD_F16, TD_F16, TD_F16, 75, false},
    {"m16n8k8.tf32", 16, 8, 8, 1, TD_F32, TD_F32, TD_F32, TD_F32, 80, false},
    {"m16n8k32.s8", 16, 8, 32, 4, TD_I8, TD_I8, TD_I32, TD_I32, 80, false},
    {"m16n8k32.u8", 16, 8, 32, 4, TD_U8, TD_U8, TD_I32, TD_I32, 80, false},
    {"m16n8k32.e4m3", 16, 8, 32, 4, TD_F8E4M3, TD_F8E4M3, TD_F32, TD_F32, 89,
     false},
    {"m16n8k32.e5m2", 16, 8, 32, 4, TD_F8E5M2, TD_F8E5M2, TD_F32, TD_F32, 89,
     false},
};
const int td__mma_ninsts = (int)(sizeof td__mma_insts / sizeof td__mma_insts[0]);

static const char *const DIM_NAMES[TD_MMA_NDIMS] = {
    "D.M", "D.N", "C.M", "C.N", "A.M", "A.K", "B.K", "B.N"};

const char *td__mma_dim_name(td_mma_dim d)
{
    return d >= 0 && d < TD_MMA_NDIMS ? DIM_NAMES[d] : "?";
}

/* ---- the carving specs, as data ------------------------------------ */

/* An extent is a literal or one of the instruction's register counts. */
typedef enum { X_LIT, X_M8, X_N4, X_KHI, X_KPACK } ext_kind;

typedef struct part_def {
    ext_kind kind;
    int64_t lit;
    int64_t stride; /* 0: any */
    bool thread;
} part_def;

typedef struct spec_def {
    int nlane, nmem;
    part_def lane[2];
    part_def mem[2];
} spec_def;

/* M = g + 8*rM: lanes g (8, stride 4), registers rM (m/8, any stride). */
static const spec_def SPEC_M = {1, 1, {{X_LIT, 8, 4, true}}, {{X_M8, 0, 0, false}}};
/* N = 2*t + rN: lanes t (4, stride 1), registers rN (n/4, stride 1). */
static const spec_def SPEC_N = {1, 1, {{X_LIT, 4, 1, true}}, {{X_N4, 0, 1, false}}};
/* K = k_pack*t + p + 4*k_pack*kHi: lanes t, registers kHi (any), p (1). */
static const spec_def SPEC_K = {
    1, 2, {{X_LIT, 4, 1, true}}, {{X_KHI, 0, 0, false}, {X_KPACK, 0, 1, false}}};
/* B's N = g, aligned to D.N's lane 4 x register 2: lanes g_hi (4, stride
 * 8) and, in the register slot, lanes g_lo (2, stride 4). */
static const spec_def SPEC_BN = {1, 1, {{X_LIT, 4, 8, true}}, {{X_LIT, 2, 4, true}}};

static const spec_def *const SPECS[TD_MMA_NDIMS] = {
    &SPEC_M, &SPEC_N, &SPEC_M, &SPEC_N, &SPEC_M, &SPEC_K, &SPEC_K, &SPEC_BN};

/* Which anchor's totals a dimension uses: 0 M, 1 N, 2 K. */
static const int DIM_AXIS[TD_MMA_NDIMS] = {0, 1, 0, 1, 0, 2, 2, 1};

static int64_t resolve(const td_mma_inst *inst, const part_def *p)
{
    switch (p->kind) {
    case X_LIT:
        return p->lit;
    case X_M8:
        return inst->m / 8;
    case X_N4:
        return inst->n / 4;
    case X_KHI:
        return inst->k / (4 * inst->k_pack);
    case X_KPACK:
        return inst->k_pack;
    }
    return 0;
}

int td__mma_spec(const td_mma_inst *inst, td_mma_dim dim, td_mma_spec *out)
{
    const spec_def *s;

    if (inst == NULL || out == NULL || dim < 0 || dim >= TD_MMA_NDIMS ||
        inst->m % 8 || inst->n % 8 || inst->k % 8 || inst->k_pack < 1 ||
        inst->k % (4 * inst->k_pack))
        return TD_EINVAL;
    s = SPECS[dim];
    memset(out, 0, sizeof *out);
    out->nlane = s->nlane;
    out->nmem = s->nmem;
    for (int i = 0; i < s->nlane; i++)
        out->lane[i] = (td_mma_part){resolve(inst, &s->lane[i]),
                                     s->lane[i].stride, s->lane[i].thread};
    for (int i = 0; i < s->nmem; i++)
        out->mem[i] = (td_mma_part){resolve(inst, &s->mem[i]),
                                    s->mem[i].stride, s->mem[i].thread};
    return 0;
}

/* ---- _frag_group ----------------------------------------------------- */

static int check_part(const td_mma_carved *c, int idx, const td_mma_part *p,
                      char *why, size_t whylen)
{
    const td_iter *it = &c->grouped.shard[c->seps[idx]];

    if (c->seps[idx + 1] - c->seps[idx] != 1) {
        td__lay_why(why, whylen, "frag group %d is not a single iter", idx);
        return TD_ENOMATCH;
    }
    /* An extent-1 group iterates nothing (k8's kHi): its axis and stride
     * mean nothing. */
    if (it->extent == 1)
        return 0;
    if (td_axis_is_thread(it->axis) != p->thread) {
        td__lay_why(why, whylen, "frag group %d thread/memory axis mismatch",
                    idx);
        return TD_ENOMATCH;
    }
    if (p->stride != 0 && it->stride != p->stride) {
        td__lay_why(why, whylen, "frag group %d stride %lld != %lld", idx,
                    (long long)it->stride, (long long)p->stride);
        return TD_ENOMATCH;
    }
    return 0;
}

int td__mma_carve(const td_layout *dim, const td_mma_spec *spec,
                  int64_t thread_total, int64_t mem_total, td_mma_carved *out,
                  char *why, size_t whylen)
{
    int64_t shape[TD_MMA_MAX_GROUPS], lanes = 1, mems = 1;
    int n = 0, rc;

    if (dim == NULL || spec == NULL || out == NULL || spec->nlane < 0 ||
        spec->nlane > 2 || spec->nmem < 0 || spec->nmem > 2 ||
        thread_total < 1 || mem_total < 1 || td__lay_check(dim, NULL, 0) < 0)
        return TD_EINVAL;
    for (int i = 0; i < spec->nlane; i++)
        if (spec->lane[i].extent < 1 ||
            !td__lay_mul64(lanes, spec->lane[i].extent, &lanes))
            return TD_EINVAL;
    for (int i = 0; i < spec->nmem; i++)
        if (spec->mem[i].extent < 1 ||
            !td__lay_mul64(mems, spec->mem[i].extent, &mems))
            return TD_EINVAL;
    /* TVM floor-divides; a total the parts do not divide cannot group. */
    if (thread_total % lanes || mem_total % mems) {
        td__lay_why(why, whylen,
                    "thread total %lld / memory total %lld not divisible by "
                    "the fragment's %lld lanes / %lld registers",
                    (long long)thread_total, (long long)mem_total,
                    (long long)lanes, (long long)mems);
        return TD_ENOMATCH;
    }
    shape[n++] = thread_total / lanes;
    for (int i = 0; i < spec->nlane; i++)
        shape[n++] = spec->lane[i].extent;
    shape[n++] = mem_total / mems;
    for (int i = 0; i < spec->nmem; i++)
        shape[n++] = spec->mem[i].extent;
    memset(out, 0, sizeof *out);
    rc = td__lay_group_why(dim, shape, n, &out->grouped, out->seps, why,
                           whylen);
    if (rc == TD_EINVAL)
        return TD_ENOMATCH;
    if (rc < 0)
        return rc;
    out->ngroups = n;
    for (int i = 0; i < spec->nlane; i++)
        if ((rc = check_part(out, 1 + i, &spec->lane[i], why, whylen)) < 0)
            return rc;
    for (int i = 0; i < spec->nmem; i++)
        if ((rc = check_part(out, 2 + spec->nlane + i, &spec->mem[i], why,
                             whylen)) < 0)
            return rc;
    return 0;
}

/* ---- the instruction-independent analysis ---------------------------- */

static const char *const OP_NAMES[TD_MMA_NOPS] = {"D", "A", "B", "C"};

/* The sub-layout of group g: its iters alone, no replica, no offset. */
static void split_group(const td_layout *g, const int *seps, int i,
                        td_layout *out)
{
    memset(out, 0, sizeof *out);
    out->nshard = seps[i + 1] - seps[i];
    memcpy(out->shard, &g->shard[seps[i]], sizeof(td_iter) * (size_t)out->nshard);
}

/* _slice_group: slice, canonicalize, one thread axis, group by shape2d. */
static int slice_group(const td_mma_operand *o, const char *name,
                       const int64_t shape2d[2], td_layout *grouped,
                       int *seps, char *why, size_t whylen)
{
    char e[768];
    td_layout sliced, canon, tmp;
    int tseps[TD_MAX_RANK + 1], rc;
    bool axes[TD_AXIS_COUNT] = {false};
    int naxes = 0;

    if (o->layout == NULL || o->shape == NULL || o->start == NULL ||
        o->extent == NULL || o->ndim < 1 || o->ndim > TD_MAX_RANK)
        return TD_EINVAL;
    for (int d = 0; d < o->ndim; d++)
        if (o->shape[d] < 1 || o->shape[d] > TD_MAX_EXTENT)
            return TD_EINVAL;
    /* slice() canonicalizes the layout and groups it by the buffer's
     * shape first: that is the text its ICHECK gives. */
    if (td__lay_check(o->layout, NULL, 0) < 0)
        return TD_EINVAL;
    rc = td__lay_canonicalize_cuda(o->layout, &canon, e, sizeof e);
    if (rc == 0)
        rc = td__lay_group_why(&canon, o->shape, o->ndim, &tmp, tseps, e,
                               sizeof e);
    if (rc == TD_EINVAL) {
        td__lay_why(why, whylen, "gemm mma: %s layout not tileable as (%lld, %lld): %s",
                    name, (long long)shape2d[0], (long long)shape2d[1], e);
        return TD_ENOMATCH;
    }
    if (rc < 0)
        return rc;
    rc = td__lay_slice(&canon, o->shape, o->ndim, o->start, o->extent,
                       &sliced);
    if (rc == TD_ENOMATCH) {
        td__lay_why(why, whylen, "gemm mma: cannot slice %s layout to its region",
                    name);
        return TD_ENOMATCH;
    }
    if (rc < 0)
        return rc;
    /* The emitter canonicalizes the slice again: a layout whose fused axes
     * no longer form one scope chain (wgid + warpid) fails there. */
    rc = td__lay_canonicalize_cuda(&sliced, &canon, e, sizeof e);
    if (rc == TD_EINVAL) {
        td__lay_why(why, whylen, "gemm mma: %s layout not tileable as (%lld, %lld): %s",
                    name, (long long)shape2d[0], (long long)shape2d[1], e);
        return TD_ENOMATCH;
    }
    if (rc < 0)
        return rc;
    for (int i = 0; i < canon.nshard; i++) {
        td_axis a = canon.shard[i].axis;

        if (td_axis_is_thread(a) && !axes[a]) {
            axes[a] = true;
            naxes++;
        }
    }
    if (naxes > 1) {
        /* Python's sorted() of the axis names. */
        char list[256] = "";
        const char *names[TD_AXIS_COUNT];
        size_t len = 0;
        int k = 0;

        for (int a = 0; a < TD_AXIS_COUNT; a++)
            if (axes[a]) {
                int j = k++;

                while (j > 0 && strcmp(names[j - 1], td_axis_name((td_axis)a)) > 0) {
                    names[j] = names[j - 1];
                    j--;
                }
                names[j] = td_axis_name((td_axis)a);
            }
        for (int i = 0; i < k && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'",
                                    i ? ", " : "", names[i]);
        td__lay_why(why, whylen,
                    "gemm mma: %s has >1 thread axis [%s], only one supported",
                    name, list);
        return TD_ENOMATCH;
    }
    rc = td__lay_group_why(&canon, shape2d, 2, grouped, seps, e, sizeof e);
    if (rc == TD_EINVAL) {
        td__lay_why(why, whylen, "gemm mma: %s layout not tileable as (%lld, %lld): %s",
                    name, (long long)shape2d[0], (long long)shape2d[1], e);
        return TD_ENOMATCH;
    }
    return rc;
}

/* _align: group the follower by the anchor's iter extents, then order the
 * groups as the anchor's thread-left order. */
static int align(const td_layout *anchor, td_layout *follower,
                 const char *name, char *why, size_t whylen)
{
    int64_t ext[TD_MAX_LAYOUT_ITERS];
    int perm[TD_MAX_LAYOUT_ITERS], seps[TD_MAX_RANK + 1], rc, n = anchor->nshard;
    char e[768], list[256] = "";
    size_t len = 0;
    td_layout g;

    if (n < 1 || n > TD_MAX_RANK)
        return TD_ELIMIT;
    for (int i = 0; i < n; i++) {
        ext[i] = anchor->shard[i].extent;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld",
                                    i ? ", " : "", (long long)ext[i]);
    }
    if ((rc = td__lay_canon_perm(anchor, perm)) < 0)
        return rc;
    rc = td__lay_group_why(follower, ext, n, &g, seps, e, sizeof e);
    if (rc == TD_EINVAL) {
        td__lay_why(why, whylen,
                    "gemm mma: %s not alignable to anchor extents [%s]: %s",
                    name, list, e);
        return TD_ENOMATCH;
    }
    if (rc < 0)
        return rc;
    return td__lay_permute_by_groups(&g, seps, n, perm, follower, NULL);
}

int td__mma_prepare(const td_mma_in *in, td_mma_dims *out, char *why,
                    size_t whylen)
{
    /* The emitter's order: A, B, C, D. */
    static const int order[TD_MMA_NOPS] = {TD_MMA_OP_A, TD_MMA_OP_B,
                                           TD_MMA_OP_C, TD_MMA_OP_D};
    td_layout g[TD_MMA_NOPS], sub[TD_MMA_NOPS][2];
    int seps[TD_MMA_NOPS][TD_MAX_RANK + 1], rc;
    td_layout *d;

    if (in == NULL || out == NULL || in->m < 1 || in->n < 1 || in->k < 1)
        return TD_EINVAL;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < TD_MMA_NOPS; i++) {
        int op = order[i];
        int64_t shape2d[2] = {in->m, in->n};

        if (op == TD_MMA_OP_A) {
            shape2d[0] = in->transpose_a ? in->k : in->m;
            shape2d[1] = in->transpose_a ? in->m : in->k;
        } else if (op == TD_MMA_OP_B) {
            shape2d[0] = in->transpose_b ? in->n : in->k;
            shape2d[1] = in->transpose_b ? in->k : in->n;
        }
        rc = slice_group(&in->op[op], OP_NAMES[op], shape2d, &g[op], seps[op],
                         why, whylen);
        if (rc < 0)
            return rc;
        split_group(&g[op], seps[op], 0, &sub[op][0]);
        split_group(&g[op], seps[op], 1, &sub[op][1]);
        memcpy(out->offset[op], g[op].offset, sizeof out->offset[op]);
    }
    d = out->dim;
    d[TD_MMA_DM] = sub[TD_MMA_OP_D][0];
    d[TD_MMA_DN] = sub[TD_MMA_OP_D][1];
    d[TD_MMA_CM] = sub[TD_MMA_OP_C][0];
    d[TD_MMA_CN] = sub[TD_MMA_OP_C][1];
    d[TD_MMA_AM] = sub[TD_MMA_OP_A][in->transpose_a ? 1 : 0];
    d[TD_MMA_AK] = sub[TD_MMA_OP_A][in->transpose_a ? 0 : 1];
    d[TD_MMA_BK] = sub[TD_MMA_OP_B][in->transpose_b ? 1 : 0];
    d[TD_MMA_BN] = sub[TD_MMA_OP_B][in->transpose_b ? 0 : 1];
    if ((rc = align(&d[TD_MMA_DM], &d[TD_MMA_AM], "A.M", why, whylen)) < 0 ||
        (rc = align(&d[TD_MMA_DM], &d[TD_MMA_CM], "C.M", why, whylen)) < 0 ||
        (rc = align(&d[TD_MMA_DN], &d[TD_MMA_BN], "B.N", why, whylen)) < 0 ||
        (rc = align(&d[TD_MMA_DN], &d[TD_MMA_CN], "C.N", why, whylen)) < 0 ||
        (rc = align(&d[TD_MMA_AK], &d[TD_MMA_BK], "B.K", why, whylen)) < 0)
        return rc;
    if ((rc = td__lay_thread_left(&d[TD_MMA_DM], &d[TD_MMA_DM], NULL)) < 0 ||
        (rc = td__lay_thread_left(&d[TD_MMA_DN], &d[TD_MMA_DN], NULL)) < 0 ||
        (rc = td__lay_thread_left(&d[TD_MMA_AK], &d[TD_MMA_AK], NULL)) < 0)
        return rc;
    /* _region_totals of the anchors: the followers reuse them, so that B's
     * N (whose "register" slot is a lane) still tiles. */
    for (int a = 0; a < 3; a++) {
        static const td_mma_dim anchor[3] = {TD_MMA_DM, TD_MMA_DN, TD_MMA_AK};
        const td_layout *l = &d[anchor[a]];

        out->thr[a] = out->mem[a] = 1;
        for (int i = 0; i < l->nshard; i++) {
            int64_t *t = td_axis_is_thread(l->shard[i].axis) ? &out->thr[a]
                                                              : &out->mem[a];
            if (!td__lay_mul64(*t, l->shard[i].extent, t))
                return TD_ELIMIT;
        }
    }
    return 0;
}

/* ---- one instruction ------------------------------------------------- */

/* _same_iters over group 0 of two carves, extent-1 iters dropped. */
static bool same_to(const td_mma_carved *x, const td_mma_carved *y)
{
    int i = x->seps[0], j = y->seps[0];

    for (;;) {
        while (i < x->seps[1] && x->grouped.shard[i].extent == 1)
            i++;
        while (j < y->seps[1] && y->grouped.shard[j].extent == 1)
            j++;
        if (i == x->seps[1] || j == y->seps[1])
            return i == x->seps[1] && j == y->seps[1];
        if (x->grouped.shard[i].extent != y->grouped.shard[j].extent ||
            x->grouped.shard[i].stride != y->grouped.shard[j].stride ||
            x->grouped.shard[i].axis != y->grouped.shard[j].axis)
            return false;
        i++;
        j++;
    }
}

int td__mma_fit(const td_mma_inst *inst, const td_mma_dims *dims,
                td_mma_frag *out, char *why, size_t whylen)
{
    const td_mma_carved *c;

    if (inst == NULL || dims == NULL || out == NULL)
        return TD_EINVAL;
    for (int d = 0; d < TD_MMA_NDIMS; d++) {
        td_mma_spec spec;
        char e[768];
        int a = DIM_AXIS[d], rc;

        if ((rc = td__mma_spec(inst, (td_mma_dim)d, &spec)) < 0)
            return rc;
        rc = td__mma_carve(&dims->dim[d], &spec, dims->thr[a], dims->mem[a],
                           &out->dim[d], e, sizeof e);
        if (rc < 0) {
            if (rc == TD_ENOMATCH)
                td__lay_why(why, whylen, "%s: %s", DIM_NAMES[d], e);
            return rc;
        }
    }
    c = out->dim;
    if (!same_to(&c[TD_MMA_DM], &c[TD_MMA_AM]) ||
        !same_to(&c[TD_MMA_DM], &c[TD_MMA_CM])) {
        td__lay_why(why, whylen,
                    "M.to: the warp tiling of M differs between D, A and C");
        return TD_ENOMATCH;
    }
    if (!same_to(&c[TD_MMA_DN], &c[TD_MMA_BN]) ||
        !same_to(&c[TD_MMA_DN], &c[TD_MMA_CN])) {
        td__lay_why(why, whylen,
                    "N.to: the warp tiling of N differs between D, B and C");
        return TD_ENOMATCH;
    }
    if (!same_to(&c[TD_MMA_AK], &c[TD_MMA_BK])) {
        td__lay_why(why, whylen,
                    "K.to: the warp tiling of K differs between A and B");
        return TD_ENOMATCH;
    }
    return 0;
}

/* ---- register layouts ------------------------------------------------ */

int td__mma_reg_layout(const td_mma_frag *frag, const td_mma_dims *dims,
                       int op, td_layout *out, int64_t *shape, int *ndim)
{
    /* (dimension, group) per local-view dimension, outermost first. */
    static const struct {
        int n;
        td_mma_dim dim[5];
        int grp[5];
    } VIEW[TD_MMA_NOPS] = {
        [TD_MMA_OP_D] = {4, {TD_MMA_DM, TD_MMA_DN, TD_MMA_DM, TD_MMA_DN}, {2, 2, 3, 3}},
        [TD_MMA_OP_A] = {5,
                         {TD_MMA_AM, TD_MMA_AK, TD_MMA_AM, TD_MMA_AK, TD_MMA_AK},
                         {2, 2, 3, 3, 4}},
        [TD_MMA_OP_B] = {4, {TD_MMA_BK, TD_MMA_BN, TD_MMA_BK, TD_MMA_BK}, {2, 2, 3, 4}},
        [TD_MMA_OP_C] = {4, {TD_MMA_CM, TD_MMA_CN, TD_MMA_CM, TD_MMA_CN}, {2, 2, 3, 3}},
    };
    td_layout r;

    if (frag == NULL || dims == NULL || out == NULL || shape == NULL ||
        ndim == NULL || op < 0 || op >= TD_MMA_NOPS)
        return TD_EINVAL;
    memset(&r, 0, sizeof r);
    for (int v = 0; v < VIEW[op].n; v++) {
        const td_mma_carved *c = &frag->dim[VIEW[op].dim[v]];
        int g = VIEW[op].grp[v];

        if (g >= c->ngroups)
            return TD_EINVAL;
        shape[v] = 1;
        for (int k = c->seps[g]; k < c->seps[g + 1]; k++) {
            const td_iter *it = &c->grouped.shard[k];

            if (!td__lay_mul64(shape[v], it->extent, &shape[v]))
                return TD_ELIMIT;
            if (it->extent == 1)
                continue;
            if (r.nshard >= TD_MAX_LAYOUT_ITERS)
                return TD_ELIMIT;
            r.shard[r.nshard++] = *it;
        }
    }
    /* Thread-axis offsets are the lane's, not the register's. */
    r.offset[TD_AXIS_M] = dims->offset[op][TD_AXIS_M];
    *ndim = VIEW[op].n;
    *out = r;
    return 0;
}

/* ---- the fragments of upstream's tests ------------------------------- */

int td__mma_tile_layout(const td_mma_inst *inst, int op, const int64_t tiles[2],
                        bool transposed, td_layout *out)
{
    const td_axis L = TD_AXIS_LANEID, M = TD_AXIS_M;
    td_layout base, tiled, g;
    int64_t shape[2], to[2], rm, rn, khi, kp;
    int seps[3], n = 0;

    if (inst == NULL || tiles == NULL || out == NULL || op < 0 ||
        op >= TD_MMA_NOPS || inst->n != 8 || inst->m % 8 || inst->k_pack < 1 ||
        inst->k % (4 * inst->k_pack) || (transposed && op != TD_MMA_OP_A &&
                                         op != TD_MMA_OP_B))
        return TD_EINVAL;
    rm = inst->m / 8;
    rn = inst->n / 4;
    kp = inst->k_pack;
    khi = inst->k / (4 * kp);
    memset(&base, 0, sizeof base);
#define IT(e, s, a) (base.shard[n++] = (td_iter){(e), (s), (a)})
    if (op == TD_MMA_OP_A) {
        IT(rm, kp, M), IT(8, 4, L), IT(khi, rm * kp, M), IT(4, 1, L), IT(kp, 1, M);
        shape[0] = inst->m, shape[1] = inst->k;
    } else if (op == TD_MMA_OP_B) {
        IT(khi, kp, M), IT(4, 1, L), IT(kp, 1, M), IT(8, 4, L);
        shape[0] = inst->k, shape[1] = inst->n;
    } else {
        IT(rm, rn, M), IT(8, 4, L), IT(4, 1, L), IT(rn, 1, M);
        shape[0] = inst->m, shape[1] = inst->n;
    }
#undef IT
    base.nshard = n;
    for (int d = 0; d < 2; d++)
        if (tiles[d] < 1 || !td__lay_mul64(tiles[d], shape[d], &to[d]) ||
            to[d] > TD_MAX_EXTENT)
            return TD_EINVAL;
    int rc = td__lay_tile_to(&base, to, shape, 2, &tiled);
    if (rc < 0 || !transposed) {
        if (rc == 0)
            *out = tiled;
        return rc;
    }
    if ((rc = td__lay_group(&tiled, to, 2, &g, seps)) < 0)
        return rc;
    return td__lay_permute_by_groups(&g, seps, 2, (const int[]){1, 0}, out, NULL);
}
