/*
 * Unit tests for the copy planners (variants/copy_plan.c): for every copy
 * of TVM 0.27's inventories (design/copy/inv*.tsv) that TVM moves with
 * vec_auto or ldstmatrix, the planner picks TVM's access width (and num /
 * trans); the algorithm-level expectations of upstream's test_reg.py; the
 * offsets TVM prints for its probes, evaluated at a few (round, thread)
 * points; and the reasons of the checks, including the deviations D1, D2,
 * D3 and D7 (design/copy/plan.md section 4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "copy_plan.h"
#include "layout.h"

typedef struct cside {
    const char *name, *scope, *dtype;
    int ndim;
    int64_t shape[TD_MAX_RANK], start[TD_MAX_RANK], ext[TD_MAX_RANK];
    const char *layout;
    int p, s, a; /* swizzle; p < 0: none */
} cside;

typedef struct crow {
    const char *name;
    int kind;
    td_exec_scope scope;
    int64_t tx, vec;
    int num, trans;
    cside src, dst;
} crow;

/* Swizzled rows carry TVM's printed ComposeLayout (through our parser);
 * the hand-written tests below give the swizzle as p (-1: none). */
static const crow rows[] = {
#include "copy_plan_cases.h"
};

static void mkside(const cside *c, td_copy_side *s)
{
    td_layout l;
    td_diag d;
    td_dtype dt;
    td_lay_swz z = {c->p >= 0, c->p, c->s, c->a, true};

    assert_int_equal(td_dtype_parse(c->dtype, &dt), 0);
    if (c->layout != NULL)
        assert_int_equal(td_layout_parse(c->layout, &l, &d), 0);
    assert_int_equal(td__copy_side_init(s, c->name, c->scope, dt, c->ndim,
                                        c->shape, c->start, c->ext,
                                        c->layout ? &l : NULL,
                                        c->p >= 0 ? &z : NULL),
                     0);
}

static void mkreq(const crow *r, td_copy_req *q)
{
    memset(q, 0, sizeof *q);
    q->cuda = true;
    q->scope = r->scope;
    q->threads_x = r->tx;
    q->threads_yz = 1;
    mkside(&r->src, &q->src);
    mkside(&r->dst, &q->dst);
}


/* A side from a compact spec (layout text may be NULL; p < 0: no swizzle). */
static cside S2(const char *name, const char *scope, const char *dt, int nd,
                const int64_t *shape, const int64_t *start, const int64_t *ext,
                const char *layout, int p)
{
    cside c;

    memset(&c, 0, sizeof c);
    c.name = name;
    c.scope = scope;
    c.dtype = dt;
    c.ndim = nd;
    for (int d = 0; d < nd; d++) {
        c.shape[d] = shape[d];
        c.start[d] = start ? start[d] : 0;
        c.ext[d] = ext ? ext[d] : shape[d];
    }
    c.layout = layout;
    c.p = p;
    c.s = 3;
    c.a = 3;
    return c;
}

static td_copy_req REQ(td_exec_scope scope, int64_t tx, cside src, cside dst)
{
    crow r;
    td_copy_req q;

    memset(&r, 0, sizeof r);
    r.scope = scope;
    r.tx = tx;
    r.src = src;
    r.dst = dst;
    mkreq(&r, &q);
    return q;
}

#define SH(...) ((const int64_t[]){__VA_ARGS__})

/* cases1.py gs_warp_swz: warp, f16 [32, 64] global -> shared
 * ComposeLayout(3, 3, 3, TileLayout(S[32, 64])).  TVM prints 8 rounds of v4,
 * g_lin = f * 256 + tid * 8,
 * s_off = f * 256 + tid // 8 * 64 + (tid % 8 * 8 ^ (f * 4 + tid // 8 & 7) << 3). */
static void test_gs_swizzled_offsets(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARP, 32,
                        S2("A", "global", "float16", 2, SH(32, 64), NULL, NULL, NULL, -1),
                        S2("S", "shared", "float16", 2, SH(32, 64), NULL, NULL,
                           "S[(32, 64) : (64, 1)]", 3));
    td_copy_gs_plan p;
    char why[256];

    (void)state;
    assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
    assert_true(p.g_is_src);
    assert_int_equal(p.vec, 8);
    assert_int_equal(p.rounds, 8);
    assert_int_equal(p.threads, 32);
    for (int64_t f = 0; f < 8; f++)
        for (int64_t tid = 0; tid < 32; tid++) {
            int64_t g, s;
            assert_int_equal(td__copy_gs_offsets(&p, f, tid, &g, &s), 0);
            assert_int_equal(g, f * 256 + tid * 8);
            assert_int_equal(s, f * 256 + tid / 8 * 64 +
                                    ((tid % 8 * 8) ^ (((f * 4 + tid / 8) & 7) << 3)));
        }
}

/* cases3.py gs_ktiled: warpgroup, f16 [128, 64] global -> shared
 * S[(128, 8, 8) : (8, 1024, 1)]: g_lin = f * 1024 + tid * 8,
 * s_off = tid % 8 * 1024 + f * 128 + tid // 8 * 8 (v4). */
static void test_gs_ktiled_offsets(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARPGROUP, 128,
                        S2("A", "global", "float16", 2, SH(128, 64), NULL, NULL, NULL, -1),
                        S2("S", "shared", "float16", 2, SH(128, 64), NULL, NULL,
                           "S[(128, 8, 8) : (8, 1024, 1)]", -1));
    td_copy_gs_plan p;
    char why[256];

    (void)state;
    assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.vec, 8);
    assert_int_equal(p.rounds, 8);
    for (int64_t f = 0; f < 8; f++)
        for (int64_t tid = 0; tid < 128; tid += 5) {
            int64_t g, s;
            assert_int_equal(td__copy_gs_offsets(&p, f, tid, &g, &s), 0);
            assert_int_equal(g, f * 1024 + tid * 8);
            assert_int_equal(s, tid % 8 * 1024 + f * 128 + tid / 8 * 8);
        }
}

/* gs_off3: warp, A[0:4, 3:35] of f16 [4, 35] -> S[0:4, 0:32]: TVM uses
 * scalar u16 accesses, 4 rounds (the start 3 is not aligned). */
static void test_gs_misaligned_start(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARP, 32,
                        S2("A", "global", "float16", 2, SH(4, 35), SH(0, 3), SH(4, 32), NULL, -1),
                        S2("S", "shared", "float16", 2, SH(4, 32), NULL, NULL, NULL, -1));
    td_copy_gs_plan p;
    char why[256];

    (void)state;
    assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.vec, 1);
    assert_int_equal(p.rounds, 4);
    for (int64_t f = 0; f < 4; f++)
        for (int64_t tid = 0; tid < 32; tid++) {
            int64_t g, s;
            assert_int_equal(td__copy_gs_offsets(&p, f, tid, &g, &s), 0);
            assert_int_equal(g, f * 35 + 3 + tid);
            assert_int_equal(s, f * 32 + tid);
        }
}

/* test_gmem_smem.py's algorithm tests (plan section 5.1 c): the swizzle
 * chunk caps the width at 2^p elements (p = 2: .v2.u32, 1: .u32, 0: .u16);
 * a row stride of 20 f16 elements allows 4 (.v2.u32); a start of 3 forces
 * scalars. */
static void test_gs_algorithm_cases(void **state)
{
    static const int64_t want[] = {1, 2, 4, 8};
    td_copy_gs_plan p;
    char why[256];

    (void)state;
    for (int pe = 0; pe <= 3; pe++) {
        td_copy_req q = REQ(TD_SCOPE_WARP, 32,
                            S2("A", "global", "float16", 2, SH(32, 32), NULL, NULL, NULL, -1),
                            S2("S", "shared", "float16", 2, SH(32, 32), NULL, NULL,
                               "S[(32, 32) : (32, 1)]", pe));
        assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
        assert_int_equal(p.vec, want[pe]);
    }
    td_copy_req q = REQ(TD_SCOPE_THREAD, 1,
                        S2("A", "global", "float16", 2, SH(2, 16), NULL, NULL,
                           "S[(2, 16) : (20, 1)]", -1),
                        S2("S", "shared", "float16", 2, SH(2, 16), NULL, NULL,
                           "S[(2, 16) : (20, 1)]", -1));
    assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.vec, 4);
    assert_int_equal(p.rounds, 8);
    q = REQ(TD_SCOPE_THREAD, 1,
            S2("A", "global", "float16", 2, SH(4, 32), SH(0, 3), SH(4, 16), NULL, -1),
            S2("S", "shared", "float16", 2, SH(4, 16), NULL, NULL, NULL, -1));
    assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.vec, 1);
}

/* reg_warp_l2s_f16: Rg S[(32, 8) : (1@laneid, 1)] -> Sm [32, 8]:
 * s_base = v * 8, one round, ds = dr = 0, v4 (8 halves). */
static void test_reg_warp_offsets(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARP, 32,
                        S2("Rg", "local", "float16", 2, SH(32, 8), NULL, NULL,
                           "S[(32, 8) : (1@laneid, 1)]", -1),
                        S2("Sm", "shared", "float16", 2, SH(32, 8), NULL, NULL, NULL, -1));
    td_copy_reg_plan p;
    char why[256];

    (void)state;
    assert_int_equal(td__copy_plan_reg(&q, &p, why, sizeof why), 0);
    assert_true(p.r_is_src);
    assert_false(p.s_global);
    assert_int_equal(p.vec, 8);
    assert_int_equal(p.rounds, 1);
    assert_int_equal(p.r_slots, 8);
    for (int64_t v = 0; v < 32; v++) {
        int64_t s, r;
        assert_int_equal(td__copy_reg_offsets(&p, 0, v, &s, &r), 0);
        assert_int_equal(s, v * 8);
        assert_int_equal(r, 0);
    }
}

/* reg_thread_g2l: Tx.copy(Rg[0:8, 0:8], A[3:4, 8:16, 8:16]), f16: s_base =
 * 904 (3 * 256 + 8 * 16 + 8), 8 rounds, ds = f % 8 * 16, dr = f % 8 * 8. */
static void test_reg_thread_offsets(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_THREAD, 1,
                        S2("A", "global", "float16", 3, SH(4, 16, 16), SH(3, 8, 8),
                           SH(1, 8, 8), NULL, -1),
                        S2("Rg", "local", "float16", 2, SH(8, 8), NULL, NULL, NULL, -1));
    td_copy_reg_plan p;
    char why[256];
    int64_t base, ds, dr;

    (void)state;
    assert_int_equal(td__copy_plan_reg(&q, &p, why, sizeof why), 0);
    assert_false(p.r_is_src);
    assert_true(p.s_global);
    assert_int_equal(p.vec, 8);
    assert_int_equal(p.rounds, 8);
    assert_int_equal(td__copy_reg_thread_base(&p, 0, &base), 0);
    assert_int_equal(base, 904);
    for (int64_t f = 0; f < 8; f++) {
        assert_int_equal(td__copy_reg_round(&p, f, &ds, &dr), 0);
        assert_int_equal(ds, f % 8 * 16);
        assert_int_equal(dr, f % 8 * 8);
    }
    assert_int_equal(td__copy_reg_round(&p, 8, &ds, &dr), TD_EINVAL);
}

/* reg_wg_l2s_swz: Rg S[(128, 64) : (1@tid_in_wg, 1)] -> Sm
 * ComposeLayout(3, 3, 3, TileLayout(S[(512,)])) f16: 8 rounds,
 * s_off = v * 64 + (f * 8 ^ (v & 7) << 3); and the sliced variant
 * (columns 8:40) that TVM also moves with v4. */
static void test_reg_wg_swizzled_offsets(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARPGROUP, 128,
                        S2("Rg", "local", "float16", 2, SH(128, 64), NULL, NULL,
                           "S[(128, 64) : (1@tid_in_wg, 1)]", -1),
                        S2("Sm", "shared", "float16", 2, SH(128, 64), NULL, NULL,
                           "S[512 : 1]", 3));
    td_copy_reg_plan p;
    char why[256];

    (void)state;
    assert_int_equal(td__copy_plan_reg(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.vec, 8);
    assert_int_equal(p.rounds, 8);
    for (int64_t f = 0; f < 8; f++)
        for (int64_t v = 0; v < 128; v += 3) {
            int64_t s, r;
            assert_int_equal(td__copy_reg_offsets(&p, f, v, &s, &r), 0);
            assert_int_equal(s, v * 64 + ((f * 8) ^ ((v & 7) << 3)));
            assert_int_equal(r, f * 8);
        }
    q = REQ(TD_SCOPE_WARPGROUP, 128,
            S2("Rg", "local", "float16", 2, SH(128, 64), SH(0, 8), SH(128, 32),
               "S[(128, 64) : (1@tid_in_wg, 1)]", -1),
            S2("Sm", "shared", "float16", 2, SH(128, 64), SH(0, 8), SH(128, 32),
               "S[512 : 1]", 3));
    assert_int_equal(td__copy_plan_reg(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.vec, 8);
    assert_int_equal(p.rounds, 4);
    assert_int_equal(p.r_off_base, 8);
    for (int64_t f = 0; f < 4; f++)
        for (int64_t v = 0; v < 128; v += 7) {
            int64_t s, r, m = v * 64 + 8 + f * 8;
            assert_int_equal(td__copy_reg_offsets(&p, f, v, &s, &r), 0);
            assert_int_equal(s, m ^ (((m >> 6) & 7) << 3));
            assert_int_equal(r, 8 + f * 8);
        }
}

/* test_reg.py: _choose_vec_len(16, [(8, 1, 1)], S[8:1], S[8:1]) == 8, and
 * == 4 with max_vec_len=4; the tcgen05 D epilogue pairs the register
 * layout's three memory groups ([8, 2, 2]) with S, and TVM moves it with
 * st.shared.v2.u32 in 16 rounds. */
static void test_reg_algorithm(void **state)
{
    td_copy_atom a[] = {{8, 1, 1}};
    td_layout t;
    td_diag d;
    td_copy_reg_plan p;
    char why[256];

    (void)state;
    assert_int_equal(td_layout_parse("S[8 : 1]", &t, &d), 0);
    assert_int_equal(td__copy_choose_vec(16, a, 1, &t, &t, 0), 8);
    assert_int_equal(td__copy_choose_vec(16, a, 1, &t, &t, 4), 4);
    /* D7: registers 2 apart are not a vector (TVM would say 8) */
    a[0].r_mul = 2;
    assert_int_equal(td__copy_choose_vec(16, a, 1, &t, &t, 0), 1);

    td_copy_req q = REQ(TD_SCOPE_WARPGROUP, 128,
                        S2("Rg", "local", "float32", 2, SH(64, 64), NULL, NULL,
                           "S[(4, 2, 8, 8, 4, 2) : (1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]", -1),
                        S2("Sm", "shared", "float32", 2, SH(64, 64), NULL, NULL,
                           "S[(64, 2, 32) : (32, 2048, 1)]", 2));
    assert_int_equal(td__copy_plan_reg(&q, &p, why, sizeof why), 0);
    int64_t mem[TD_MAX_LAYOUT_ITERS];
    int nm = 0;
    for (int i = 0; i < p.r_perm.nshard; i++)
        if (!td_axis_is_thread(p.r_perm.shard[i].axis))
            mem[nm++] = p.r_perm.shard[i].extent;
    assert_int_equal(nm, 3);
    assert_int_equal(mem[0], 8);
    assert_int_equal(mem[1], 2);
    assert_int_equal(mem[2], 2);
    assert_int_equal(p.vec, 2);
    assert_int_equal(p.rounds, 16);
    /* every element is moved exactly once: the (thread, round, lane)
     * positions cover the 4096 swizzled shared offsets */
    static unsigned char seen[4096];
    memset(seen, 0, sizeof seen);
    for (int64_t v = 0; v < 128; v++)
        for (int64_t f = 0; f < 16; f++) {
            int64_t s, r;
            assert_int_equal(td__copy_reg_offsets(&p, f, v, &s, &r), 0);
            assert_true(s >= 0 && s + 1 < 4096);
            assert_true(r >= 0 && r + 1 < p.r_slots);
            seen[s]++;
            seen[s + 1]++;
        }
    for (int i = 0; i < 4096; i++)
        assert_int_equal(seen[i], 1);
}

/* ldsm_warp_x4: Sm S[(8, 4, 4, 2) : (32, 2, 8, 1)], Rg S[(8, 4, 4, 2) :
 * (4@laneid, 1@laneid, 2, 1)]: smem_off = w * 256 + laneid % 8 * 32 +
 * laneid // 8 * 8 + mm * 2, words r_words[0..3]. */
static void test_ldst_warp_x4(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARP, 32,
                        S2("Sm", "shared", "float16", 4, SH(8, 4, 4, 2), NULL, NULL,
                           "S[(8, 4, 4, 2) : (32, 2, 8, 1)]", -1),
                        S2("Rg", "local", "float16", 4, SH(8, 4, 4, 2), NULL, NULL,
                           "S[(8, 4, 4, 2) : (4@laneid, 1@laneid, 2, 1)]", -1));
    td_copy_ldst_plan p;
    char why[256];
    int64_t off, w;

    (void)state;
    assert_int_equal(td__copy_plan_ldst(&q, &p, why, sizeof why), 0);
    assert_true(p.ld);
    assert_int_equal(p.num, 4);
    assert_false(p.trans);
    assert_int_equal(p.m_outer, 1);
    assert_int_equal(p.lane_axis, TD_AXIS_LANEID);
    for (int64_t lane = 0; lane < 32; lane++) {
        assert_int_equal(td__copy_ldst_smem_off(&p, 0, lane, 0, &off), 0);
        assert_int_equal(off, lane % 8 * 32 + lane / 8 * 8);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(td__copy_ldst_word(&p, 0, i, &w), 0);
        assert_int_equal(w, i);
    }
}

/* stsm_warp_x2_trans: Sm [8, 4, 2, 2] S[(8, 4, 2, 2) : (1, 32, 8, 16)]:
 * smem_off = mm * 32 + laneid % 8 * 16 + laneid // 8 * 8 + w * 8, x2.trans. */
static void test_ldst_warp_x2_trans(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARP, 32,
                        S2("Rg", "local", "float16", 4, SH(8, 4, 2, 2), NULL, NULL,
                           "S[(8, 4, 2, 2) : (4@laneid, 1@laneid, 2, 1)]", -1),
                        S2("Sm", "shared", "float16", 4, SH(8, 4, 2, 2), NULL, NULL,
                           "S[(8, 4, 2, 2) : (1, 32, 8, 16)]", -1));
    td_copy_ldst_plan p;
    char why[256];
    int64_t off, w;

    (void)state;
    assert_int_equal(td__copy_plan_ldst(&q, &p, why, sizeof why), 0);
    assert_false(p.ld);
    assert_int_equal(p.num, 2);
    assert_true(p.trans);
    assert_int_equal(p.row_stride, 16);
    for (int64_t lane = 0; lane < 32; lane++) {
        assert_int_equal(td__copy_ldst_smem_off(&p, 0, lane, 0, &off), 0);
        if (lane < 16) /* x2 reads the addresses of lanes 0-15 */
            assert_int_equal(off, lane % 8 * 16 + lane / 8 * 8);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(td__copy_ldst_word(&p, 0, i, &w), 0);
        assert_int_equal(w, i);
    }
}

/* ldsm_wg_x1_swz: Sm ComposeLayout(3, 3, 3, TileLayout(S[(4, 8, 4, 1, 2) :
 * (64, 8, 2, 8, 1)])), Rg S[(4, 8, 4, 1, 2) : (32@tid_in_wg, 4@tid_in_wg,
 * 1@tid_in_wg, 2, 1)]: smem_off = w * 64 + (laneid % 8 * 8 ^ (w & 7) << 3)
 * with w = warp_id_in_wg, x1. */
static void test_ldst_wg_x1_swizzled(void **state)
{
    td_copy_req q = REQ(TD_SCOPE_WARPGROUP, 128,
                        S2("Sm", "shared", "float16", 5, SH(4, 8, 4, 1, 2), NULL, NULL,
                           "S[(4, 8, 4, 1, 2) : (64, 8, 2, 8, 1)]", 3),
                        S2("Rg", "local", "float16", 5, SH(4, 8, 4, 1, 2), NULL, NULL,
                           "S[(4, 8, 4, 1, 2) : (32@tid_in_wg, 4@tid_in_wg, 1@tid_in_wg, 2, 1)]",
                           -1));
    td_copy_ldst_plan p;
    char why[256];
    int64_t off;

    (void)state;
    assert_int_equal(td__copy_plan_ldst(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.num, 1);
    assert_int_equal(p.lane_axis, TD_AXIS_TID_IN_WG);
    for (int64_t w = 0; w < 4; w++)
        for (int64_t lane = 0; lane < 32; lane++) {
            assert_int_equal(td__copy_ldst_smem_off(&p, w, lane, 0, &off), 0);
            assert_int_equal(off, w * 64 + ((lane % 8 * 8) ^ ((w & 7) << 3)));
        }
}

/* Every inventory row: TVM's width / num / trans. */
static void test_inventory(void **state)
{
    int bad = 0, n = 0;
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const crow *r = &rows[i];
        td_copy_req q;
        char why[512] = "";
        int rc;

        mkreq(r, &q);
        n++;
        if (r->kind == 0) {
            td_copy_gs_plan p;
            rc = td__copy_plan_gs(&q, &p, why, sizeof why);
            if (rc != 0 || p.vec != r->vec) {
                printf("%s: gs rc=%d vec=%lld want %lld (%s)\n", r->name, rc,
                       rc ? 0LL : (long long)p.vec, (long long)r->vec, why);
                bad++;
            }
        } else if (r->kind == 1) {
            td_copy_reg_plan p;
            rc = td__copy_plan_reg(&q, &p, why, sizeof why);
            if (rc != 0 || p.vec != r->vec) {
                printf("%s: reg rc=%d vec=%lld want %lld (%s)\n", r->name, rc,
                       rc ? 0LL : (long long)p.vec, (long long)r->vec, why);
                bad++;
            }
        } else {
            td_copy_ldst_plan p;
            rc = td__copy_plan_ldst(&q, &p, why, sizeof why);
            if (rc != 0 || p.num != r->num || (int)p.trans != r->trans) {
                printf("%s: ldst rc=%d num=%d trans=%d want %d %d (%s)\n",
                       r->name, rc, rc ? 0 : p.num, rc ? 0 : p.trans, r->num,
                       r->trans, why);
                bad++;
            }
        }
    }
    printf("inventory: %d rows, %d differ\n", n, bad);
    assert_int_equal(n, 346);
    assert_int_equal(bad, 0);
}


/* vec_auto_applicable's composed reason and the ldstmatrix check, with the
 * texts TVM 0.27 gives for the same probes (its predicates' return values,
 * recorded on this machine). */
static void va_reason(const td_copy_req *q, const char *want)
{
    char why[1024] = "";

    assert_false(td__copy_vec_auto_applicable(q, why, sizeof why));
    assert_string_equal(why, want);
}

static void ldst_reason(const td_copy_req *q, const char *want)
{
    td_copy_ldst_plan p;
    char why[1024] = "";

    assert_int_equal(td__copy_plan_ldst(q, &p, why, sizeof why), TD_ENOMATCH);
    assert_string_equal(why, want);
}

static void test_reasons_tvm(void **state)
{
    const char *lane4 = "S[(32, 4) : (1@laneid, 1)]";
    td_copy_req q;

    (void)state;
    /* rej_r_laneid_thread: a laneid layout at thread scope */
    q = REQ(TD_SCOPE_THREAD, 32,
            S2("Rg", "local", "float32", 2, SH(32, 4), NULL, NULL, lane4, -1),
            S2("Sm", "shared", "float32", 2, SH(32, 4), NULL, NULL, NULL, -1));
    va_reason(&q, "gmem_smem: unsupported memory scopes src=local dst=shared; "
                  "allowed: global->shared*, shared*->global; reg: R thread "
                  "axis 'laneid' scope='warp' > exec 'thread'");
    ldst_reason(&q, "unsupported exec_scope thread (need warp, warpgroup, or cta)");
    /* rej_r_offset: Sm[1:2, 0:4] <- Rg[1:2, 0:4] of that layout, warp */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("Rg", "local", "float32", 2, SH(32, 4), SH(1, 0), SH(1, 4), lane4, -1),
            S2("Sm", "shared", "float32", 2, SH(32, 4), SH(1, 0), SH(1, 4), NULL, -1));
    va_reason(&q, "gmem_smem: unsupported memory scopes src=local dst=shared; "
                  "allowed: global->shared*, shared*->global; reg: R sliced "
                  "offset on thread axis 'laneid' = 1");
    q.src.dtype = q.dst.dtype = TD_F16;
    ldst_reason(&q, "R must have exactly one thread axis name; got []");
    /* rej_s2s: shared -> shared */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("A", "shared", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1),
            S2("Sm", "shared", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1));
    va_reason(&q, "gmem_smem: unsupported memory scopes src=shared dst=shared; "
                  "allowed: global->shared*, shared*->global; reg: unsupported "
                  "memory scopes src=shared dst=shared; allowed: local->shared*, "
                  "shared*->local, local->global, global->local");
    ldst_reason(&q, "unsupported memory scopes src=shared dst=shared; allowed: "
                    "local->shared*, shared*->local");
    /* rej_dtype_mismatch */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("A", "global", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1),
            S2("Sm", "shared", "float16", 2, SH(32, 8), NULL, NULL, NULL, -1));
    va_reason(&q, "gmem_smem: validate_copy_op failed; reg: validate_copy_op failed");
    /* cluster scope */
    q = REQ(TD_SCOPE_CLUSTER, 64,
            S2("A", "global", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1),
            S2("Sm", "shared", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1));
    va_reason(&q, "gmem_smem: unsupported exec_scope cluster; reg: unsupported "
                  "exec_scope cluster");
    ldst_reason(&q, "unsupported exec_scope cluster (need warp, warpgroup, or cta)");
    /* rej_ldst_fit: a row per lane is no mma fragment */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("Sm", "shared", "float16", 2, SH(32, 8), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float16", 2, SH(32, 8), NULL, NULL,
               "S[(32, 8) : (1@laneid, 1)]", -1));
    ldst_reason(&q, "ldstmatrix layout doesn't fit any num \xe2\x88\x88 {4,2,1}");
    /* rej_ldst_swz2 */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("Sm", "shared", "float16", 4, SH(8, 4, 4, 2), NULL, NULL,
               "S[(8, 4, 4, 2) : (32, 2, 8, 1)]", 2),
            S2("Rg", "local", "float16", 4, SH(8, 4, 4, 2), NULL, NULL,
               "S[(8, 4, 4, 2) : (4@laneid, 1@laneid, 2, 1)]", -1));
    ldst_reason(&q, "swizzle per_element=2 < 3 incompatible with .b16 "
                    "ldmatrix/stmatrix (need 8-fp16 chunk integrity)");
    /* rej_ldst_warpid */
    q = REQ(TD_SCOPE_CTA, 128,
            S2("Sm", "shared", "float16", 2, SH(32, 8), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float16", 2, SH(32, 8), NULL, NULL,
               "S[(32, 8) : (1@warpid, 1)]", -1));
    ldst_reason(&q, "R thread axis 'warpid' not in ['laneid', 'tid_in_wg', 'tx']");
    /* rej_bx */
    q = REQ(TD_SCOPE_CTA, 128,
            S2("Sm", "shared", "float32", 2, SH(2, 8), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float32", 2, SH(2, 8), NULL, NULL,
               "S[(2, 8) : (1@bx, 1)]", -1));
    va_reason(&q, "gmem_smem: unsupported memory scopes src=shared dst=local; "
                  "allowed: global->shared*, shared*->global; reg: R thread "
                  "axis 'bx' subscope='cta' (not register-level)");
    q.src.dtype = q.dst.dtype = TD_F16;
    ldst_reason(&q, "R thread axis 'bx' not in ['laneid', 'tid_in_wg', 'tx']");
    /* rej_g2l_warp: a plain local buffer at warp scope (every lane loads
     * the whole region) is vec_auto's */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("A", "global", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1));
    char why[512];
    td_copy_reg_plan rp;
    assert_true(td__copy_vec_auto_applicable(&q, why, sizeof why));
    assert_int_equal(td__copy_plan_reg(&q, &rp, why, sizeof why), 0);
    assert_int_equal(rp.vec, 4);
    assert_int_equal(rp.rounds, 64);
    int64_t so, ro;
    assert_int_equal(td__copy_reg_offsets(&rp, 3, 17, &so, &ro), 0);
    assert_int_equal(so, 12);
    assert_int_equal(ro, 12);
}

/* A swizzled register layout (the call parser refuses one; a hand-built
 * request may carry it): TVM's two texts. */
static void test_reasons_reg_swizzle(void **state)
{
    td_copy_req q;
    char why[512];

    (void)state;
    q = REQ(TD_SCOPE_THREAD, 1,
            S2("Sm", "shared", "float16", 2, SH(8, 64), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float16", 2, SH(8, 64), NULL, NULL, "S[512 : 1]", 3));
    assert_false(td__copy_check_reg(&q, why, sizeof why));
    assert_string_equal(why, "R layout is swizzle");
    q = REQ(TD_SCOPE_THREAD, 1,
            S2("Sm", "shared", "float16", 2, SH(8, 64), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float16", 2, SH(8, 64), NULL, NULL,
               "S[(8, 64) : (1, 8)]", 3));
    assert_false(td__copy_check_reg(&q, why, sizeof why));
    assert_string_equal(why, "R layout is ComposeLayout, not TileLayout");
}

/* The launch checks (H1) as plan section 1.1 maps them, and a non-cuda
 * target. */
static void test_reasons_launch(void **state)
{
    td_copy_req q;
    char why[512];

    (void)state;
    q = REQ(TD_SCOPE_WARP, 16,
            S2("A", "global", "float32", 1, SH(32), NULL, NULL, NULL, -1),
            S2("Sm", "shared", "float32", 1, SH(32), NULL, NULL, NULL, -1));
    assert_false(td__copy_check_gs(&q, why, sizeof why));
    assert_string_equal(why, "laneid narrowed to [0, 16) vs full [0, 32)");
    q.scope = TD_SCOPE_WARPGROUP;
    q.threads_x = 64;
    assert_false(td__copy_check_gs(&q, why, sizeof why));
    assert_string_equal(why, "wid_in_wg narrowed to [0, 2) vs full [0, 4)");
    q.scope = TD_SCOPE_CTA;
    q.threads_x = 0;
    assert_false(td__copy_check_gs(&q, why, sizeof why));
    assert_string_equal(why, "cta scope missing threadIdx.x launch_params");
    q.threads_x = 32;
    assert_true(td__copy_check_gs(&q, why, sizeof why));
    q.threads_yz = 2;
    assert_false(td__copy_check_gs(&q, why, sizeof why));
    assert_string_equal(why, "a multi-dimensional thread launch (threadIdx.y "
                             "or threadIdx.z) is not supported by copy");
    q.threads_yz = 1;
    q.cuda = false;
    assert_false(td__copy_check_gs(&q, why, sizeof why));
    assert_string_equal(why, "non-cuda target");
    assert_false(td__copy_check_ldst(&q, why, sizeof why));
    assert_string_equal(why, "non-cuda target");
}

/* Where we differ from TVM on purpose (design/copy/plan.md section 4). */
static void test_deviations(void **state)
{
    td_copy_req q;
    td_copy_reg_plan rp;
    td_copy_gs_plan gp;
    char why[512];

    (void)state;
    /* A column of a wider global array (probe col_g2s: thread scope,
     * Sm[0:64, 0:1] <- A[0:64, 2:3] of f16 [64, 5], Sm S[(64, 1) : (1, 64)]):
     * TVM loads a u32 at g_lin = f * 10 + 2, two elements of one row; the
     * column's elements are 5 apart, so we move one at a time. */
    q = REQ(TD_SCOPE_THREAD, 1,
            S2("A", "global", "float16", 2, SH(64, 5), SH(0, 2), SH(64, 1), NULL, -1),
            S2("Sm", "shared", "float16", 2, SH(64, 1), NULL, NULL,
               "S[(64, 1) : (1, 64)]", -1));
    assert_int_equal(td__copy_plan_gs(&q, &gp, why, sizeof why), 0);
    assert_int_equal(gp.vec, 1);
    assert_int_equal(gp.rounds, 64);
    for (int64_t f = 0; f < 64; f++) {
        int64_t go, so;
        assert_int_equal(td__copy_gs_offsets(&gp, f, 0, &go, &so), 0);
        assert_int_equal(go, f * 5 + 2);
        assert_int_equal(so, f);
    }
    /* D1 (d_cta48): TVM takes 32 * (48 // 32) = 32 threads and writes past
     * the tile; we count the 48 real threads, so 256 elements do not split. */
    q = REQ(TD_SCOPE_CTA, 48,
            S2("A", "global", "float32", 2, SH(16, 16), NULL, NULL, NULL, -1),
            S2("Sm", "shared", "float32", 2, SH(16, 16), NULL, NULL, NULL, -1));
    va_reason(&q, "gmem_smem: region size 256 not divisible by thread_cnt=48; "
                  "reg: unsupported memory scopes src=global dst=shared; "
                  "allowed: local->shared*, shared*->local, local->global, "
                  "global->local");
    /* D2 (d_reg_wg_half, d_reg_warp_16): TVM lets threads 64-127 (lanes
     * 16-31) read past the buffer. */
    q = REQ(TD_SCOPE_WARPGROUP, 128,
            S2("Sm", "shared", "float32", 2, SH(64, 8), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float32", 2, SH(64, 8), NULL, NULL,
               "S[(64, 8) : (1@tid_in_wg, 1)]", -1));
    va_reason(&q, "gmem_smem: unsupported memory scopes src=shared dst=local; "
                  "allowed: global->shared*, shared*->global; reg: register "
                  "layout of Rg covers 64 of the warpgroup's 128 threads");
    q = REQ(TD_SCOPE_WARP, 32,
            S2("Sm", "shared", "float32", 2, SH(16, 8), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float32", 2, SH(16, 8), NULL, NULL,
               "S[(16, 8) : (1@laneid, 1)]", -1));
    assert_false(td__copy_check_reg(&q, why, sizeof why));
    assert_string_equal(why, "register layout of Rg covers 16 of the warp's 32 threads");
    /* lanes in a stride-2 order cover the warp, but not one to one */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("Sm", "shared", "float32", 2, SH(32, 8), NULL, NULL, NULL, -1),
            S2("Rg", "local", "float32", 2, SH(32, 8), NULL, NULL,
               "S[(32, 8) : (2@laneid, 1)]", -1));
    assert_false(td__copy_check_reg(&q, why, sizeof why));
    assert_string_equal(why, "register layout of Rg does not map the warp's "
                             "32 threads one to one");
    /* D2 for ldstmatrix: a one-warp fragment at warpgroup scope */
    q = REQ(TD_SCOPE_WARPGROUP, 128,
            S2("Sm", "shared", "float16", 4, SH(8, 4, 4, 2), NULL, NULL,
               "S[(8, 4, 4, 2) : (32, 2, 8, 1)]", -1),
            S2("Rg", "local", "float16", 4, SH(8, 4, 4, 2), NULL, NULL,
               "S[(8, 4, 4, 2) : (4@laneid, 1@laneid, 2, 1)]", -1));
    ldst_reason(&q, "register layout of Rg covers 32 of the warpgroup's 128 threads");
    /* D3 (d_ldsm_f32): TVM issues ldmatrix .b16 on a float32 fragment */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("Sm", "shared", "float32", 4, SH(8, 4, 4, 2), NULL, NULL,
               "S[(8, 4, 4, 2) : (32, 2, 8, 1)]", -1),
            S2("Rg", "local", "float32", 4, SH(8, 4, 4, 2), NULL, NULL,
               "S[(8, 4, 4, 2) : (4@laneid, 1@laneid, 2, 1)]", -1));
    ldst_reason(&q, "ldstmatrix moves 16-bit elements (.b16); Rg is float32");
    /* D7 (d_reg_gapped_vec): the 4 elements sit in registers 0, 2, 4, 6;
     * TVM stores r_words[0..3] with st.shared.v4; we move one at a time. */
    q = REQ(TD_SCOPE_WARP, 32,
            S2("Rg", "local", "float32", 2, SH(32, 4), NULL, NULL,
               "S[(32, 4) : (1@laneid, 2)]", -1),
            S2("Sm", "shared", "float32", 2, SH(32, 4), NULL, NULL, NULL, -1));
    assert_int_equal(td__copy_plan_reg(&q, &rp, why, sizeof why), 0);
    assert_int_equal(rp.vec, 1);
    assert_int_equal(rp.rounds, 4);
    assert_int_equal(rp.r_slots, 7);
    for (int64_t f = 0; f < 4; f++) {
        int64_t so, ro;
        assert_int_equal(td__copy_reg_offsets(&rp, f, 5, &so, &ro), 0);
        assert_int_equal(so, 5 * 4 + f);
        assert_int_equal(ro, 2 * f);
    }
}


/* ---- every plan moves each element to its place ---------------------- */

/* A (key, value) pair: where an element is on one side and the other. */
typedef struct pair {
    int64_t a, b, c;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    if (p->c != q->c)
        return p->c < q->c ? -1 : 1;
    return 0;
}

#define MAXE 16384

/* Element e (row-major over the side's region) of a side: its memory
 * offset (swizzled) and, for a register side, the owning thread. */
static void place(const td_copy_side *sd, int64_t e, int64_t *off,
                  int64_t *tid)
{
    td_layout t = sd->tile, sl;
    int64_t c[TD_AXIS_COUNT], n = 1, size;

    /* a bare swizzle's trivial tile stands for the buffer's row-major order */
    for (int d = 0; d < sd->ndim; d++)
        n *= sd->shape[d];
    assert_int_equal(td__lay_size(&t, &size), 0);
    if (sd->swz.on && td__lay_is_trivial(&t) && size != n)
        assert_int_equal(td__lay_row_major(sd->shape, sd->ndim, &t), 0);
    assert_int_equal(td__lay_slice(&t, sd->shape, sd->ndim, sd->start,
                                   sd->extent, &sl), 0);
    assert_int_equal(td__lay_map(&sl, e, c), 0);
    assert_int_equal(td__lay_swz_apply(&sd->swz, c[TD_AXIS_M], off), 0);
    c[TD_AXIS_M] = 0;
    assert_int_equal(td__lay_thread_id(c, tid), 0);
}

static int64_t region_elems(const td_copy_side *sd)
{
    int64_t n = 1;
    for (int d = 0; d < sd->ndim; d++)
        n *= sd->extent[d];
    return n;
}

/* The pairs the copy must make: (src place, dst place) per element, with
 * the register side as (thread, slot). */
static int64_t want_pairs(const td_copy_req *q, bool reg, pair *w)
{
    const td_copy_side *r = td__copy_local_side(q), *o = td__copy_other_side(q);
    int64_t n = region_elems(&q->src);

    assert_true(n <= MAXE);
    for (int64_t e = 0; e < n; e++) {
        int64_t a, ta, b, tb;
        if (reg) {
            place(r, e, &a, &ta);
            place(o, e, &b, &tb);
            w[e] = (pair){ta, a, b};
        } else {
            place(&q->src, e, &a, &ta);
            place(&q->dst, e, &b, &tb);
            w[e] = (pair){0, a, b};
        }
    }
    qsort(w, (size_t)n, sizeof *w, pair_cmp);
    return n;
}

static bool same(pair *g, int64_t ng, pair *w, int64_t nw)
{
    if (ng != nw)
        return false;
    qsort(g, (size_t)ng, sizeof *g, pair_cmp);
    return memcmp(g, w, sizeof(pair) * (size_t)ng) == 0;
}

static bool gs_moves_all(const td_copy_req *q, const td_copy_gs_plan *p,
                         pair *g, pair *w)
{
    int64_t n = 0, nw = want_pairs(q, false, w);

    for (int64_t f = 0; f < p->rounds; f++)
        for (int64_t t = 0; t < p->threads; t++) {
            int64_t go, so;
            assert_int_equal(td__copy_gs_offsets(p, f, t, &go, &so), 0);
            for (int64_t l = 0; l < p->vec && n < MAXE; l++, n++)
                g[n] = p->g_is_src ? (pair){0, go + l, so + l}
                                   : (pair){0, so + l, go + l};
        }
    return same(g, n, w, nw);
}

static bool reg_moves_all(const td_copy_req *q, const td_copy_reg_plan *p,
                          pair *g, pair *w)
{
    int64_t n = 0, nw = want_pairs(q, true, w);
    bool per_thread = p->r.nshard == 0 || !td_axis_is_thread(p->r.shard[0].axis);
    int64_t nt = per_thread ? 1 : p->threads;

    for (int64_t f = 0; f < p->rounds; f++)
        for (int64_t t = 0; t < nt; t++) {
            int64_t so, ro;
            assert_int_equal(td__copy_reg_offsets(p, f, t, &so, &ro), 0);
            for (int64_t l = 0; l < p->vec && n < MAXE; l++, n++) {
                assert_true(ro + l < p->r_slots);
                g[n] = (pair){t, ro + l, so + l};
            }
        }
    return same(g, n, w, nw);
}

/*
 * ldmatrix / stmatrix semantics: matrix i's row r is at the address lane
 * 8 i + r gives; thread t's word i holds that matrix's elements
 * (t / 4, 2 (t % 4)) and (t / 4, 2 (t % 4) + 1), or with .trans
 * (2 (t % 4), t / 4) and (2 (t % 4) + 1, t / 4), in its registers 2 w,
 * 2 w + 1.
 */
static bool ldst_moves_all(const td_copy_req *q, const td_copy_ldst_plan *p,
                           pair *g, pair *w)
{
    int64_t n = 0, nw = want_pairs(q, true, w);

    for (int64_t wp = 0; wp < p->t_total / 32; wp++)
        for (int64_t mm = 0; mm < p->m_outer; mm++)
            for (int i = 0; i < p->num; i++) {
                int64_t word;
                assert_int_equal(td__copy_ldst_word(p, mm, i, &word), 0);
                for (int64_t t = 0; t < 32; t++)
                    for (int k = 0; k < 2; k++) {
                        int64_t row, col, addr;
                        if (!p->trans) {
                            row = t / 4;
                            col = 2 * (t % 4) + k;
                        } else {
                            row = 2 * (t % 4) + k;
                            col = t / 4;
                        }
                        assert_int_equal(td__copy_ldst_smem_off(p, wp, 8 * i + row,
                                                                mm, &addr), 0);
                        if (n < MAXE)
                            g[n++] = (pair){wp * 32 + t, 2 * word + k, addr + col};
                    }
            }
    return same(g, n, w, nw);
}

/* Every inventory plan pairs each source element with its destination:
 * the semantics, not only the width. */
static void test_inventory_moves(void **state)
{
    static pair g[MAXE], w[MAXE];
    int checked = 0;

    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const crow *r = &rows[i];
        td_copy_req q;
        char why[512];
        bool ok;

        mkreq(r, &q);
        if (region_elems(&q.src) > MAXE)
            continue;
        if (r->kind == 0) {
            td_copy_gs_plan p;
            assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
            ok = gs_moves_all(&q, &p, g, w);
        } else if (r->kind == 1) {
            td_copy_reg_plan p;
            assert_int_equal(td__copy_plan_reg(&q, &p, why, sizeof why), 0);
            ok = reg_moves_all(&q, &p, g, w);
        } else {
            td_copy_ldst_plan p;
            assert_int_equal(td__copy_plan_ldst(&q, &p, why, sizeof why), 0);
            ok = ldst_moves_all(&q, &p, g, w);
        }
        if (!ok)
            printf("%s: the plan does not move every element to its place\n",
                   r->name);
        assert_true(ok);
        checked++;
    }
    printf("moves: %d plans checked\n", checked);
    assert_true(checked > 300);
}


/* ---- random copies: whatever plan comes out is right ------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static int64_t rnd(int64_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (int64_t)((rng >> 33) % (uint64_t)n);
}

/*
 * A random bijective layout of a 2-D shape: each dim split into factors,
 * the factor iters given the strides of a random order (axes: memory, or
 * for `nthr` > 1 the thread chain 1..nthr on `ax` taken by the innermost
 * iters of the chosen order).
 */
static void rand_layout(const int64_t *shape, int64_t nthr, td_axis ax,
                        td_layout *l)
{
    td_iter it[8];
    int n = 0, order[8];
    int64_t st = 1, tst = 1;

    memset(l, 0, sizeof *l);
    for (int d = 0; d < 2; d++) {
        int64_t e = shape[d];
        if (e >= 4 && rnd(2)) {
            int64_t f = e >= 8 && rnd(2) ? 4 : 2;
            it[n++] = (td_iter){e / f, 0, TD_AXIS_M};
            it[n++] = (td_iter){f, 0, TD_AXIS_M};
        } else {
            it[n++] = (td_iter){e, 0, TD_AXIS_M};
        }
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd(i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    /* innermost first in `order` from its end */
    for (int k = n - 1; k >= 0; k--) {
        td_iter *x = &it[order[k]];
        if (nthr > 1 && tst < nthr && nthr % (tst * x->extent) == 0) {
            x->stride = tst;
            x->axis = ax;
            tst *= x->extent;
        } else {
            x->stride = st;
            st *= x->extent;
        }
    }
    l->nshard = n;
    memcpy(l->shard, it, sizeof(td_iter) * (size_t)n);
}

static void test_random_gs(void **state)
{
    static pair g[MAXE], w[MAXE];
    static const td_exec_scope sc[] = {TD_SCOPE_THREAD, TD_SCOPE_WARP,
                                       TD_SCOPE_WARPGROUP, TD_SCOPE_CTA};
    static const char *const dts[] = {"uint8", "float16", "float32"};
    int planned = 0, vec_hist[17] = {0};

    (void)state;
    for (int iter = 0; iter < 3000; iter++) {
        int64_t shape[2] = {(int64_t)1 << rnd(7), (int64_t)1 << rnd(7)};
        int64_t gshape[2], gstart[2];
        td_layout sl;
        td_copy_req q;
        td_copy_gs_plan p;
        char why[512];
        td_dtype dt;
        td_exec_scope scope = sc[rnd(4)];
        int64_t tx = scope == TD_SCOPE_CTA ? 32 * (1 + rnd(4))
                     : scope == TD_SCOPE_WARPGROUP ? 128
                     : scope == TD_SCOPE_WARP ? 32 : 1;
        td_lay_swz z = {false, 0, 0, 0, true};

        if (shape[0] * shape[1] > 4096)
            continue;
        for (int d = 0; d < 2; d++) {
            gshape[d] = shape[d] + (rnd(3) == 0 ? rnd(5) : 0);
            gstart[d] = rnd(gshape[d] - shape[d] + 1);
        }
        /* the shared buffer may be bigger than the region (by a power of
         * two, so that the random factorisations still apply) */
        int64_t sshape[2], sstart[2];
        for (int d = 0; d < 2; d++) {
            sshape[d] = shape[d] << (rnd(4) == 0 ? 1 : 0);
            sstart[d] = rnd(sshape[d] - shape[d] + 1);
        }
        rand_layout(sshape, 1, TD_AXIS_M, &sl);
        if (rnd(3) == 0) {
            z.on = true;
            z.per_element = (int)rnd(4);
            z.swizzle_len = 1 + (int)rnd(3);
            z.atom_len = z.swizzle_len + (int)rnd(2);
        }
        assert_int_equal(td_dtype_parse(dts[rnd(3)], &dt), 0);
        memset(&q, 0, sizeof q);
        q.cuda = true;
        q.scope = scope;
        q.threads_x = tx;
        q.threads_yz = 1;
        td_copy_side gsd, ssd;
        assert_int_equal(td__copy_side_init(&gsd, "A", "global", dt, 2, gshape,
                                            gstart, shape, NULL, NULL), 0);
        assert_int_equal(td__copy_side_init(&ssd, "S", "shared", dt, 2, sshape,
                                            sstart, shape, &sl, &z), 0);
        if (rnd(2)) {
            q.src = gsd;
            q.dst = ssd;
        } else {
            q.src = ssd;
            q.dst = gsd;
        }
        if (td__copy_plan_gs(&q, &p, why, sizeof why) != 0)
            continue;
        planned++;
        vec_hist[p.vec]++;
        if (!gs_moves_all(&q, &p, g, w)) {
            char b[256];
            td_layout_format(&sl, b, sizeof b);
            printf("random gs %d: scope %d tx %lld shape [%lld, %lld] S %s "
                   "swz %d/%d/%d vec %lld\n", iter, (int)scope, (long long)tx,
                   (long long)shape[0], (long long)shape[1], b, z.per_element,
                   z.swizzle_len, z.atom_len, (long long)p.vec);
            td_layout_format(&p.g, b, sizeof b);
            printf("  G [%lld, %lld] from [%lld, %lld]; plan g %s", (long long)gshape[0],
                   (long long)gshape[1], (long long)gstart[0], (long long)gstart[1], b);
            td_layout_format(&p.s, b, sizeof b);
            printf(" s %s rounds %lld T %lld\n", b, (long long)p.rounds,
                   (long long)p.threads);
            fail();
        }
    }
    printf("random gs: %d plans (vec 1: %d, 2: %d, 4: %d, 8: %d, 16: %d)\n",
           planned, vec_hist[1], vec_hist[2], vec_hist[4], vec_hist[8],
           vec_hist[16]);
    assert_true(planned > 500);
    assert_true(vec_hist[8] > 0 && vec_hist[1] > 0);
}

static void test_random_reg(void **state)
{
    static pair g[MAXE], w[MAXE];
    static const td_exec_scope sc[] = {TD_SCOPE_THREAD, TD_SCOPE_WARP,
                                       TD_SCOPE_WARPGROUP, TD_SCOPE_CTA};
    static const td_axis ax[] = {TD_AXIS_M, TD_AXIS_LANEID, TD_AXIS_TID_IN_WG,
                                 TD_AXIS_TX};
    static const char *const dts[] = {"uint8", "float16", "float32"};
    int planned = 0, wide = 0;

    (void)state;
    for (int iter = 0; iter < 3000; iter++) {
        int si = (int)rnd(4);
        int64_t nthr = si == 0 ? 1 : si == 1 ? 32 : si == 2 ? 128 : 64;
        int64_t shape[2] = {(int64_t)1 << rnd(8), (int64_t)1 << rnd(8)};
        td_layout rl, sl;
        td_copy_req q;
        td_copy_reg_plan p;
        char why[512];
        td_dtype dt;
        td_lay_swz z = {false, 0, 0, 0, true};

        if (shape[0] * shape[1] > 8192 || shape[0] * shape[1] < nthr)
            continue;
        int64_t rst[2] = {0, 0}, rex[2] = {shape[0], shape[1]};
        int64_t sshape[2], sst[2];
        rand_layout(shape, nthr, ax[si], &rl);
        /* sometimes a sub-box of the register buffer (most are refused:
         * they cut thread iters; the rest must still be right) */
        if (rnd(4) == 0)
            for (int d = 0; d < 2; d++) {
                rex[d] = shape[d] > 1 ? shape[d] >> rnd(2) : 1;
                rst[d] = rex[d] * rnd(shape[d] / rex[d]);
            }
        for (int d = 0; d < 2; d++) {
            sshape[d] = rex[d] << (rnd(4) == 0 ? 1 : 0);
            sst[d] = rnd(sshape[d] - rex[d] + 1);
        }
        rand_layout(sshape, 1, TD_AXIS_M, &sl);
        if (rnd(3) == 0) {
            z.on = true;
            z.per_element = (int)rnd(4);
            z.swizzle_len = 1 + (int)rnd(3);
            z.atom_len = z.swizzle_len + (int)rnd(2);
        }
        assert_int_equal(td_dtype_parse(dts[rnd(3)], &dt), 0);
        memset(&q, 0, sizeof q);
        q.cuda = true;
        q.scope = sc[si];
        q.threads_x = nthr;
        q.threads_yz = 1;
        td_copy_side rsd, ssd;
        assert_int_equal(td__copy_side_init(&rsd, "Rg", "local", dt, 2, shape,
                                            rst, rex, &rl, NULL), 0);
        assert_int_equal(td__copy_side_init(&ssd, "S",
                                            rnd(2) ? "shared" : "global", dt, 2,
                                            sshape, sst, rex, &sl, &z), 0);
        if (rnd(2)) {
            q.src = rsd;
            q.dst = ssd;
        } else {
            q.src = ssd;
            q.dst = rsd;
        }
        if (td__copy_plan_reg(&q, &p, why, sizeof why) != 0)
            continue;
        planned++;
        wide += p.vec > 1;
        if (!reg_moves_all(&q, &p, g, w)) {
            char b[256], c[256];
            td_layout_format(&rl, b, sizeof b);
            td_layout_format(&sl, c, sizeof c);
            printf("random reg %d: R %s S %s swz %d/%d/%d vec %lld\n", iter, b,
                   c, z.per_element, z.swizzle_len, z.atom_len,
                   (long long)p.vec);
            fail();
        }
    }
    printf("random reg: %d plans, %d wider than one element\n", planned, wide);
    assert_true(planned > 500);
    assert_true(wide > 100);
}


/* A loaded call file gives the same request as the hand-built one:
 * TVM's printed ComposeLayout on the shared buffer, the launch. */
static void test_req_from_call(void **state)
{
    static const char text[] =
        "op: add\n"
        "target: cuda\n"
        "arch: sm_90a\n"
        "scope: warp\n"
        "launch: {threadIdx.x: 32}\n"
        "buffers:\n"
        "  A: {scope: global, dtype: float16, shape: [32, 64]}\n"
        "  S: {scope: shared, dtype: float16, shape: [32, 64],\n"
        "      layout: \"ComposeLayout(3, 3, 3, TileLayout(S[(32, 64) : (64, 1)]))\"}\n"
        "dst: \"S[0:32, 0:64]\"\n"
        "srcs: [\"A[0:32, 0:64]\", \"A[0:32, 0:64]\"]\n";
    td_call *call = NULL;
    td_diag d;
    td_copy_req q;
    td_copy_gs_plan p;
    char why[256];

    (void)state;
    if (td_call_parse("t.yaml", text, sizeof text - 1, &call, &d) != 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    assert_int_equal(td__copy_req_from_call(call, &q), 0);
    assert_true(q.cuda);
    assert_int_equal(q.scope, TD_SCOPE_WARP);
    assert_int_equal(q.threads_x, 32);
    assert_int_equal(q.threads_yz, 1);
    assert_string_equal(q.src.name, "A");
    assert_string_equal(q.dst.scope, "shared");
    assert_true(q.dst.swz.on);
    assert_int_equal(q.dst.swz.per_element, 3);
    assert_int_equal(q.dst.swz.swizzle_len, 3);
    assert_int_equal(q.dst.swz.atom_len, 3);
    assert_false(q.dst.tile.swizzle);
    assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
    assert_int_equal(p.vec, 8);
    assert_int_equal(p.rounds, 8);
    td_call_free(call);
}


/* The segments an emitter prints from: for every carved inventory g2s/s2g
 * plan, f's digits over the outer iters and tid's over the thread iters
 * (and the same split on S through s_seps) give td__copy_gs_offsets; for
 * every register plan, tid split over s's first s_nthread iters gives the
 * thread base. */
static int64_t digits(const td_layout *l, int from, int to, int64_t x,
                      const int *seps)
{
    int64_t sum = 0;
    int a = seps ? seps[from] : from, b = seps ? seps[to] : to;

    for (int i = b - 1; i >= a; i--) {
        int64_t e = l->shard[i].extent;
        sum += (i > a ? x % e : x) * l->shard[i].stride;
        x /= e;
    }
    return sum;
}

static void test_emitter_segments(void **state)
{
    int checked = 0;

    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const crow *r = &rows[i];
        td_copy_req q;
        char why[512];

        mkreq(r, &q);
        if (r->kind == 0) {
            td_copy_gs_plan p;
            assert_int_equal(td__copy_plan_gs(&q, &p, why, sizeof why), 0);
            assert_true(p.carved);
            int no = p.n_outer, nt = p.n_thread;
            assert_int_equal(p.g.nshard, no + nt + 1);
            assert_int_equal(p.g.shard[no + nt].extent, p.vec);
            assert_int_equal(p.g.shard[no + nt].stride, 1);
            for (int64_t f = 0; f < p.rounds; f += 3)
                for (int64_t t = 0; t < p.threads; t += 7) {
                    int64_t go, so, g, s;
                    assert_int_equal(td__copy_gs_offsets(&p, f, t, &go, &so), 0);
                    g = digits(&p.g, 0, no, f, NULL) +
                        digits(&p.g, no, no + nt, t, NULL) + p.g.offset[TD_AXIS_M];
                    s = digits(&p.s, 0, no, f, p.s_seps) +
                        digits(&p.s, no, no + nt, t, p.s_seps) + p.s.offset[TD_AXIS_M];
                    assert_int_equal(go, g);
                    assert_int_equal(td__lay_swz_apply(&p.swz, s, &s), 0);
                    assert_int_equal(so, s);
                }
            checked++;
        } else if (r->kind == 1) {
            td_copy_reg_plan p;
            assert_int_equal(td__copy_plan_reg(&q, &p, why, sizeof why), 0);
            for (int64_t t = 0; t < p.threads; t += 5) {
                int64_t base;
                assert_int_equal(td__copy_reg_thread_base(&p, t, &base), 0);
                int ns = p.s_nthread;
                int64_t want = (ns ? digits(&p.s, 0, ns, t, NULL) : 0) +
                               p.s.offset[TD_AXIS_M];
                assert_int_equal(base, want);
            }
            checked++;
        }
    }
    assert_true(checked > 250);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inventory),
        cmocka_unit_test(test_req_from_call),
        cmocka_unit_test(test_emitter_segments),
        cmocka_unit_test(test_inventory_moves),
        cmocka_unit_test(test_random_gs),
        cmocka_unit_test(test_random_reg),
        cmocka_unit_test(test_gs_swizzled_offsets),
        cmocka_unit_test(test_gs_ktiled_offsets),
        cmocka_unit_test(test_gs_misaligned_start),
        cmocka_unit_test(test_gs_algorithm_cases),
        cmocka_unit_test(test_reg_warp_offsets),
        cmocka_unit_test(test_reg_thread_offsets),
        cmocka_unit_test(test_reg_wg_swizzled_offsets),
        cmocka_unit_test(test_reg_algorithm),
        cmocka_unit_test(test_ldst_warp_x4),
        cmocka_unit_test(test_ldst_warp_x2_trans),
        cmocka_unit_test(test_ldst_wg_x1_swizzled),
        cmocka_unit_test(test_reasons_tvm),
        cmocka_unit_test(test_reasons_reg_swizzle),
        cmocka_unit_test(test_reasons_launch),
        cmocka_unit_test(test_deviations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
