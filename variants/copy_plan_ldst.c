/*
 * The ldstmatrix planner: TVM's ldstmatrix_applicable and the emitter's
 * fit of a register fragment and a shared tile to ldmatrix / stmatrix
 * m8n8 (ld_stmatrix.py: the [T/32, 8, 4, M/(2 num), num, 2] grouping, the
 * "sorted" variant, the x4/x2/x1 search), with D2 (the fragment covers the
 * scope's threads) and D3 (16-bit elements only).  Contracts in
 * copy_plan.h; design in design/copy/planner.md.
 */
#include <stdio.h>
#include <string.h>

#include "copy_plan.h"

#define WHY(...) td__lay_why(why, whylen, __VA_ARGS__)

static const char *const ldst_pairs[] = {"local", "shared*", "shared*",
                                         "local", NULL};

bool td__copy_check_ldst(const td_copy_req *q, char *why, size_t whylen)
{
    if (!q->cuda) {
        WHY("non-cuda target");
        return false;
    }
    if (q->scope != TD_SCOPE_WARP && q->scope != TD_SCOPE_WARPGROUP &&
        q->scope != TD_SCOPE_CTA) {
        WHY("unsupported exec_scope %s (need warp, warpgroup, or cta)",
            td_exec_scope_name(q->scope));
        return false;
    }
    return td__copy_threads_active(q, why, whylen) && td__copy_req_valid(q, why, whylen) &&
           td__copy_scope_allowed(q, ldst_pairs, why, whylen);
}

/* A layout of the iters it[0..n) (offsets zero). */
static void from_iters(td_layout *l, const td_iter *it, int n)
{
    memset(l, 0, sizeof *l);
    l->nshard = n;
    memcpy(l->shard, it, sizeof(td_iter) * (size_t)n);
}

/* Segment k of a grouped layout is one iter; its stride in *st. */
static bool one_iter(const td_layout *l, const int *seps, int k, int64_t *st)
{
    if (seps[k + 1] - seps[k] != 1)
        return false;
    *st = l->shard[seps[k]].stride;
    return true;
}

/* TVM's _try_num: the [T/32, 8, 4, M/(2 num), num, 2] fit. */
static bool try_num(const td_layout *rin, const td_layout *sin, int64_t tt,
                    int64_t mt, int num, td_copy_ldst_plan *p)
{
    int64_t gs[6] = {tt / 32, 8, 4, mt / (2 * num), num, 2};
    int64_t r8, r4, r2, s8, s4, s2;
    td_layout rg, sg;
    int rsep[7], ssep[7];

    if (td__lay_group(rin, gs, 6, &rg, rsep) < 0 ||
        td__lay_group(sin, gs, 6, &sg, ssep) < 0)
        return false;
    if (tt > 32 &&
        (rsep[1] - rsep[0] != 1 || rg.shard[rsep[0]].stride != 32))
        return false;
    if (!one_iter(&rg, rsep, 1, &r8) || !one_iter(&rg, rsep, 2, &r4) ||
        !one_iter(&rg, rsep, 5, &r2) || !one_iter(&sg, ssep, 1, &s8) ||
        !one_iter(&sg, ssep, 2, &s4) || !one_iter(&sg, ssep, 5, &s2))
        return false;
    if (r8 != 4 || r4 != 1 || r2 != 1)
        return false;
    if (num > 1)
        for (int i = ssep[4]; i < ssep[5]; i++)
            if (sg.shard[i].stride <= 0 || sg.shard[i].stride % 8 != 0)
                return false;
    for (int i = ssep[3]; i < ssep[4]; i++)
        if (sg.shard[i].extent != 1 && sg.shard[i].stride % 8 != 0)
            return false;
    if (s4 == 2 && s2 == 1 && s8 > 0 && s8 % 8 == 0) {
        p->trans = false;
        p->row_stride = s8;
    } else if (s8 == 1 && s2 > 0 && s2 % 8 == 0 && s4 == 2 * s2) {
        p->trans = true;
        p->row_stride = s2;
    } else {
        return false;
    }
    p->num = num;
    p->r = rg;
    p->s = sg;
    memcpy(p->r_seps, rsep, sizeof rsep);
    memcpy(p->s_seps, ssep, sizeof ssep);
    return true;
}

/*
 * The "sorted" variant: segment 3 (the mm iters) of r sub-grouped by s's
 * mm extents and both reordered by s stride descending.  False when that
 * grouping fails or changes nothing.
 */
static bool sorted_variant(const td_layout *r, const td_layout *s, int64_t tt,
                           int64_t mt, td_layout *rs_out, td_layout *ss_out)
{
    int64_t g5[5] = {tt / 32, 8, 4, mt / 2, 2}, sext[TD_MAX_LAYOUT_ITERS];
    td_layout rg, sg, rm, rmg, rmp;
    int rsep[6], ssep[6], msep[TD_MAX_LAYOUT_ITERS + 1];
    int perm[TD_MAX_LAYOUT_ITERS], ns, n;
    bool ident = true;
    td_iter sm[TD_MAX_LAYOUT_ITERS];

    if (mt % 2 != 0 || td__lay_group(r, g5, 5, &rg, rsep) < 0 ||
        td__lay_group(s, g5, 5, &sg, ssep) < 0)
        return false;
    ns = ssep[4] - ssep[3];
    if (ns > TD_MAX_RANK)
        return false;
    for (int i = 0; i < ns; i++) {
        sm[i] = sg.shard[ssep[3] + i];
        sext[i] = sm[i].extent;
    }
    from_iters(&rm, &rg.shard[rsep[3]], rsep[4] - rsep[3]);
    if (td__lay_group(&rm, sext, ns, &rmg, msep) < 0)
        return false;
    /* stable sort of s's mm iters by stride descending */
    for (int i = 0; i < ns; i++) {
        int j = i;
        while (j > 0 && sm[perm[j - 1]].stride < sm[i].stride) {
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = i;
    }
    for (int i = 0; i < ns; i++)
        ident = ident && perm[i] == i;
    if (ident ||
        td__lay_permute_by_groups(&rmg, msep, ns, perm, &rmp, NULL) < 0)
        return false;
    *rs_out = rg;
    n = rsep[3];
    for (int i = 0; i < rmp.nshard; i++)
        rs_out->shard[n++] = rmp.shard[i];
    for (int i = rsep[4]; i < rg.nshard; i++)
        rs_out->shard[n++] = rg.shard[i];
    if (n > TD_MAX_LAYOUT_ITERS)
        return false;
    rs_out->nshard = n;
    *ss_out = sg;
    n = ssep[3];
    for (int i = 0; i < ns; i++)
        ss_out->shard[n++] = sm[perm[i]];
    for (int i = ssep[4]; i < sg.nshard; i++)
        ss_out->shard[n++] = sg.shard[i];
    ss_out->nshard = n;
    return true;
}

int td__copy_plan_ldst(const td_copy_req *q, td_copy_ldst_plan *out,
                       char *why, size_t whylen)
{
    const td_copy_side *rs, *ss;
    td_layout r, s, sg, rsort, ssort;
    int seps[TD_MAX_LAYOUT_ITERS + 1], perm[TD_MAX_LAYOUT_ITERS];
    int64_t shape[TD_MAX_LAYOUT_ITERS], tt = 1, mt = 1;
    td_axis lane = TD_AXIS_M;
    bool have_sort, found = false;

    if (q == NULL || out == NULL)
        return TD_EINVAL;
    if (!td__copy_check_ldst(q, why, whylen))
        return TD_ENOMATCH;
    memset(out, 0, sizeof *out);
    rs = td__copy_local_side(q);
    ss = td__copy_other_side(q);
    out->ld = rs == &q->dst;
    out->swz = ss->swz;
    /* D3: the instruction moves 16-bit elements. */
    if (td_dtype_bits(rs->dtype) != 16) {
        WHY("ldstmatrix moves 16-bit elements (.b16); %s is %s", rs->name,
            td_dtype_name(rs->dtype));
        return TD_ENOMATCH;
    }
    if (td__copy_reg_layout(q, rs, &r) < 0 || td__copy_side_tile(ss, &s) < 0 ||
        td__lay_canonicalize(&s, &s) < 0) {
        WHY("the layouts of %s and %s cannot be sliced to the regions",
            rs->name, ss->name);
        return TD_ENOMATCH;
    }
    if (ss->swz.on && ss->swz.per_element < 3) {
        WHY("swizzle per_element=%d < 3 incompatible with .b16 "
            "ldmatrix/stmatrix (need 8-fp16 chunk integrity)",
            ss->swz.per_element);
        return TD_ENOMATCH;
    }
    if (r.nrep != 0 || s.nrep != 0) {
        WHY("%s layout has replica; ldstmatrix requires no replica",
            r.nrep ? "R" : "S");
        return TD_ENOMATCH;
    }
    {
        /* the distinct thread axis names, sorted as Python sorts them */
        const char *names[TD_AXIS_COUNT];
        int nn = 0;
        for (int a = 1; a < TD_AXIS_COUNT; a++)
            for (int i = 0; i < r.nshard; i++)
                if (r.shard[i].axis == (td_axis)a) {
                    names[nn++] = td_axis_name((td_axis)a);
                    break;
                }
        if (nn != 1) {
            char list[128] = "";
            size_t used = 0;
            for (int i = 0; i < nn; i++)
                for (int j = i + 1; j < nn; j++)
                    if (strcmp(names[j], names[i]) < 0) {
                        const char *t = names[i];
                        names[i] = names[j];
                        names[j] = t;
                    }
            for (int i = 0; i < nn; i++) {
                int k = snprintf(list + used, sizeof list - used, "%s'%s'",
                                 i ? ", " : "", names[i]);
                if (k > 0 && (size_t)k < sizeof list - used)
                    used += (size_t)k;
            }
            WHY("R must have exactly one thread axis name; got [%s]", list);
            return TD_ENOMATCH;
        }
        for (int i = 0; i < r.nshard; i++)
            if (td_axis_is_thread(r.shard[i].axis))
                lane = r.shard[i].axis;
        if (lane != TD_AXIS_LANEID && lane != TD_AXIS_TID_IN_WG &&
            lane != TD_AXIS_TX) {
            WHY("R thread axis '%s' not in ['laneid', 'tid_in_wg', 'tx']",
                td_axis_name(lane));
            return TD_ENOMATCH;
        }
    }
    out->lane_axis = lane;
    for (int i = 0; i < r.nshard; i++)
        shape[i] = r.shard[i].extent;
    if (r.nshard > TD_MAX_RANK ||
        td__lay_group(&s, shape, r.nshard, &sg, seps) < 0) {
        WHY("S layout cannot be grouped by the register layout's iters");
        return TD_ENOMATCH;
    }
    td__copy_thread_first_perm(&r, perm);
    if (td__lay_permute_dims(&r, perm, r.nshard, &r) < 0 ||
        td__lay_permute_by_groups(&sg, seps, r.nshard, perm, &s, NULL) < 0 ||
        td__lay_canonicalize(&r, &r) < 0 || td__lay_canonicalize(&s, &s) < 0)
        return TD_EINVAL;
    for (int i = 0; i < r.nshard; i++) {
        if (td_axis_is_thread(r.shard[i].axis))
            tt = td__mul_sat(tt, r.shard[i].extent);
        else
            mt = td__mul_sat(mt, r.shard[i].extent);
    }
    if (tt % 32 != 0) {
        WHY("R thread section total %lld not divisible by 32", (long long)tt);
        return TD_ENOMATCH;
    }
    /* D2: every thread of the scope owns a fragment, once. */
    if (tt != td__copy_thread_count(q)) {
        WHY("register layout of %s covers %lld of the %s's %lld threads",
            rs->name, (long long)tt, td_exec_scope_name(q->scope),
            (long long)td__copy_thread_count(q));
        return TD_ENOMATCH;
    }
    out->t_total = tt;
    out->m_total = mt;
    have_sort = sorted_variant(&r, &s, tt, mt, &rsort, &ssort);
    for (int num = 4; num >= 1 && !found; num /= 2) {
        if (mt % (2 * num) != 0)
            continue;
        if (have_sort && try_num(&rsort, &ssort, tt, mt, num, out))
            found = true;
        else if (try_num(&r, &s, tt, mt, num, out))
            found = true;
    }
    if (!found) {
        WHY("ldstmatrix layout doesn't fit any num \xe2\x88\x88 {4,2,1}");
        return TD_ENOMATCH;
    }
    out->m_outer = mt / (2 * out->num);
    /* Segment 4 (the num words) by register stride descending, so that the
     * words are consecutive registers. */
    {
        int a = out->r_seps[4], b = out->r_seps[5], sa = out->s_seps[4];
        td_iter ri[TD_MAX_LAYOUT_ITERS], si[TD_MAX_LAYOUT_ITERS];
        int ord[TD_MAX_LAYOUT_ITERS];

        if (b - a == out->s_seps[5] - sa && b - a > 1) {
            for (int i = 0; i < b - a; i++) {
                int j = i;
                while (j > 0 && out->r.shard[a + ord[j - 1]].stride <
                                    out->r.shard[a + i].stride) {
                    ord[j] = ord[j - 1];
                    j--;
                }
                ord[j] = i;
            }
            for (int i = 0; i < b - a; i++) {
                ri[i] = out->r.shard[a + ord[i]];
                si[i] = out->s.shard[sa + ord[i]];
            }
            memcpy(&out->r.shard[a], ri, sizeof(td_iter) * (size_t)(b - a));
            memcpy(&out->s.shard[sa], si, sizeof(td_iter) * (size_t)(b - a));
        }
    }
    return 0;
}

int td__copy_ldst_smem_off(const td_copy_ldst_plan *p, int64_t warp,
                           int64_t lane, int64_t mm, int64_t *off)
{
    /* Lanes past 8 * num give no address to the instruction (x1 reads
     * lanes 0-7, x2 0-15); TVM's `lane // 8` runs past segment 4 for them.
     * Here they repeat the first 8 * num lanes, which stays in bounds. */
    int64_t c[6] = {warp, 0, 0, mm, (lane / 8) % p->num, 0};
    int64_t sh[6] = {p->t_total / 32, 8, 4, p->m_outer, p->num, 2};
    int64_t out[TD_AXIS_COUNT];
    int rc;

    if (lane < 0 || lane >= 32)
        return TD_EINVAL;
    if ((rc = td__lay_apply_shape(&p->s, c, sh, 6, out)) < 0)
        return rc;
    return td__lay_swz_apply(&p->swz,
                             out[TD_AXIS_M] + (lane % 8) * p->row_stride, off);
}

int td__copy_ldst_word(const td_copy_ldst_plan *p, int64_t mm, int i,
                       int64_t *word)
{
    int64_t c[6] = {0, 0, 0, mm, i, 0};
    int64_t sh[6] = {p->t_total / 32, 8, 4, p->m_outer, p->num, 2};
    int64_t out[TD_AXIS_COUNT];
    int rc;

    if ((rc = td__lay_apply_shape(&p->r, c, sh, 6, out)) < 0)
        return rc;
    *word = out[TD_AXIS_M] / 2;
    return 0;
}
