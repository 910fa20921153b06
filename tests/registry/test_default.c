/*
 * The built-in registry with the compiled-in default rules: the table is
 * the one of rules/rules.yaml in try order, and the seed call dispatches
 * to `local`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "../common/td_test_alloc.h"
#include "op_fixture.h"

static void test_default_table(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    /* 12 reduction entries, for each of the 15 elementwise ops reg then
     * smem (equal priority: by name), the copy entries and copy_async's
     * ldgsts, dsmem, smem->tmem, tma_auto, tma_explicit and tmem<->local
     * (TVM's try order), gemm's mma.m16n8k* and mma_ext.m16n8k*,
     * gemm_async's tcgen05 (single_thread_or_warp and our tcgen05_arch),
     * permute_layout's
     * warp_xor_swizzle (no predicates: it declines in its emitter, as
     * TVM's); ops in name order. */
    td_rule_info all[64], infos[12];
    assert_int_equal(td_registry_rules(reg, all, 64), 60);
    int nred = 0, new = 0, ncopy = 0, nasync = 0, ngemm = 0, nperm = 0;
    int ngasync = 0;
    for (int i = 0; i < 60; i++) {
        if (strcmp(all[i].op, "gemm_async") == 0) {
            assert_string_equal(all[i].name, "tcgen05");
            assert_int_equal(all[i].priority, 10);
            assert_int_equal(all[i].npreds, 2);
            assert_int_equal(td_registry_op(reg, "gemm_async")->kind,
                             TD_OP_KIND_GEMM);
            ngasync++;
            continue;
        }
        if (strcmp(all[i].op, "gemm") == 0) {
            /* TVM's two predicates: full_active_lanes, no_replica; then
             * tiledispatch's own instructions with the same two. */
            assert_true(ngemm < 2);
            assert_string_equal(all[i].name,
                                ngemm == 0 ? "mma.m16n8k*" : "mma_ext.m16n8k*");
            assert_int_equal(all[i].priority, ngemm == 0 ? 10 : 5);
            assert_int_equal(all[i].npreds, 2);
            assert_int_equal(td_registry_op(reg, "gemm")->kind,
                             TD_OP_KIND_GEMM);
            ngemm++;
            continue;
        }
        if (strcmp(all[i].op, "permute_layout") == 0) {
            assert_string_equal(all[i].name, "warp_xor_swizzle");
            assert_int_equal(all[i].priority, 20);
            assert_int_equal(all[i].npreds, 0);
            assert_int_equal(td_registry_op(reg, "permute_layout")->kind,
                             TD_OP_KIND_PERMUTE);
            nperm++;
            continue;
        }
        if (strcmp(all[i].op, "copy_async") == 0) {
            /* ldgsts (20) before dsmem (10, TVM's three predicates),
             * tcgen05.cp (10, two; 's' < 't'), the two TMA forms (10,
             * two each) and tcgen05.ld/st (10, three; by name, 'a' < 'e'
             * puts tma_* before tmem) */
            static const char *const async_names[6] = {
                "ldgsts", "dsmem", "smem->tmem", "tma_auto",
                "tma_explicit", "tmem<->local"};
            static const int async_prio[6] = {20, 10, 10, 10, 10, 10},
                             async_npreds[6] = {1, 3, 2, 2, 2, 3};
            assert_true(nasync < 6);
            assert_string_equal(all[i].name, async_names[nasync]);
            assert_int_equal(all[i].priority, async_prio[nasync]);
            assert_int_equal(all[i].npreds, async_npreds[nasync]);
            assert_int_equal(td_registry_op(reg, "copy_async")->kind,
                             TD_OP_KIND_COPY);
            nasync++;
            continue;
        }
        if (strcmp(all[i].op, "copy") == 0) {
            /* the five forced widths (by name), ldstmatrix and vec_auto
             * (by name), fallback */
            static const char *const copy_names[8] = {
                "vec_128b", "vec_16b", "vec_256b", "vec_32b", "vec_64b",
                "ldstmatrix", "vec_auto", "fallback"};
            static const int copy_prio[8] = {20, 20, 20, 20, 20, 10, 10, 0};
            assert_true(ncopy < 8);
            assert_string_equal(all[i].name, copy_names[ncopy]);
            assert_int_equal(all[i].priority, copy_prio[ncopy]);
            assert_int_equal(all[i].npreds, 1);
            assert_int_equal(td_registry_op(reg, "copy")->kind,
                             TD_OP_KIND_COPY);
            ncopy++;
            continue;
        }
        bool red = strcmp(all[i].op, "sum") == 0 ||
                   strcmp(all[i].op, "max") == 0 ||
                   strcmp(all[i].op, "min") == 0;
        if (red) {
            assert_true(nred < 12);
            infos[nred++] = all[i];
            continue;
        }
        assert_string_equal(all[i].name, new % 2 == 0 ? "reg" : "smem");
        assert_int_equal(all[i].priority, 10);
        assert_int_equal(all[i].npreds, 1);
        assert_non_null(td_registry_op(reg, all[i].op));
        assert_int_equal(td_registry_op(reg, all[i].op)->kind,
                         TD_OP_KIND_ELEMENTWISE);
        new++;
    }
    assert_int_equal(nred, 12);
    assert_int_equal(new, 30);
    assert_int_equal(ncopy, 8);
    assert_int_equal(nasync, 6);
    assert_int_equal(ngemm, 2);
    assert_int_equal(ngasync, 1);
    assert_int_equal(nperm, 1);
    static const char *const want[12][3] = {
        {"max", "cuda", "3input_maxmin"}, {"max", "cuda", "shared_rows"},
        {"max", "cuda", "local"},         {"max", "cuda", "shared"},
        {"min", "cuda", "3input_maxmin"}, {"min", "cuda", "shared_rows"},
        {"min", "cuda", "local"},         {"min", "cuda", "shared"},
        {"sum", "cuda", "packed_add_sum"}, {"sum", "cuda", "shared_rows"},
        {"sum", "cuda", "local"},         {"sum", "cuda", "shared"}};
    for (int i = 0; i < 12; i++) {
        assert_string_equal(infos[i].op, want[i][0]);
        assert_string_equal(infos[i].target, want[i][1]);
        assert_string_equal(infos[i].name, want[i][2]);
        assert_string_equal(infos[i].impl, want[i][2]);
        assert_true(infos[i].enabled);
        assert_string_equal(infos[i].file, "rules/rules.yaml");
    }
    /* sum: packed_add_sum, shared_rows, local, shared */
    assert_int_equal(infos[8].priority, 20);
    assert_int_equal(infos[8].npreds, 7);
    assert_int_equal(infos[9].priority, 15);
    assert_int_equal(infos[9].npreds, 3);
    assert_int_equal(infos[10].priority, 10);
    const char *name;
    char args[128];
    assert_int_equal(td_registry_rule_pred(reg, &infos[8], 0, &name, args,
                                           sizeof args), 0);
    assert_string_equal(name, "exec_scope");
    assert_string_equal(args, "{expected_scopes: [thread]}");
    assert_int_equal(td_registry_rule_pred(reg, &infos[9], 2, &name, args,
                                           sizeof args), 0);
    assert_string_equal(name, "shared_rows_valid");
    assert_string_equal(args, "");
    assert_int_equal(td_registry_rule_pred(reg, &infos[10], 0, &name, args,
                                           sizeof args), 0);
    assert_string_equal(name, "storage_scope");
    assert_string_equal(args, "{expected_scope: [local]}");
    assert_int_equal(td_registry_rule_pred(reg, &infos[10], 1, &name, args,
                                           sizeof args), 0);
    assert_string_equal(name, "local_valid");
    assert_string_equal(args, "");
    assert_int_equal(td_registry_rule_pred(reg, &infos[11], 0, &name, args,
                                           sizeof args), 0);
    assert_string_equal(args, "{expected_scope: [\"shared*\"]}");
    assert_non_null(td_registry_op(reg, "sum"));
    assert_int_equal(td_registry_op(reg, "max")->combiner, TD_COMBINE_MAX);
    td_registry_free(reg);
}

/* The seed: one thread, float32[4] -> float32[1]. */
static void seed_call(td_call *c, td_exec_scope scope)
{
    memset(c, 0, sizeof *c);
    strcpy(c->op, "sum");
    strcpy(c->target, "cuda");
    assert_int_equal(td_call_set_arch(c, "sm_90a"), 0);
    c->scope = scope;
    c->launch[TD_LAUNCH_TX].present = true;
    c->launch[TD_LAUNCH_TX].extent = 1;
    c->nbuffers = 2;
    strcpy(c->buffers[0].name, "B_local");
    strcpy(c->buffers[0].scope, "local");
    c->buffers[0].dtype = TD_F32;
    c->buffers[0].ndim = 1;
    c->buffers[0].shape[0] = 1;
    strcpy(c->buffers[1].name, "A_local");
    strcpy(c->buffers[1].scope, "local");
    c->buffers[1].dtype = TD_F32;
    c->buffers[1].ndim = 1;
    c->buffers[1].shape[0] = 4;
    c->dst = (td_region){0, 1, {0}, {1}, {{0}}, {{0}}};
    c->src = (td_region){1, 1, {0}, {4}, {{0}}, {{0}}};
    c->naxes = 1;
    c->axes[0] = -1;
}

static void test_seed_dispatch(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    td_call c;
    seed_call(&c, TD_SCOPE_THREAD);
    td_dispatch_result res;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_dispatch(reg, &c, &res, &d);
    if (rc != 0)
        fail_msg("%s", d.msg);
    assert_string_equal(res.variant, "local");
    assert_int_equal(res.priority, 10);
    assert_non_null(res.ir);
    td_ir_free(res.ir);

    /* Upstream's derived example: a cta-scope call forced to `local`. */
    seed_call(&c, TD_SCOPE_CTA);
    strcpy(c.dispatch, "local");
    td_diag_clear(&d);
    assert_int_equal(td_dispatch(reg, &c, &res, &d), TD_ENOMATCH);
    td_explain *ex;
    assert_int_equal(td_explain_call(reg, &c, &ex, &d), 0);
    assert_int_equal(td_explain_nrows(ex), 1);
    const td_explain_row *r = td_explain_get(ex, 0);
    assert_string_equal(r->variant, "local");
    assert_int_equal(r->status, TD_CAND_REJECTED);
    assert_non_null(strstr(r->message, "rejected: local_valid"));
    char *text;
    assert_int_equal(td_explain_format(ex, TD_EXPLAIN_TVM, &text), 0);
    assert_true(strncmp(text, "dispatch failed: op=sum target=cuda\n+", 37) == 0);
    td_free(text);
    td_explain_free(ex);

    /* Without the forced name: four rows in try order. */
    c.dispatch[0] = '\0';
    assert_int_equal(td_explain_call(reg, &c, &ex, &d), 0);
    assert_int_equal(td_explain_nrows(ex), 4);
    assert_string_equal(td_explain_get(ex, 0)->variant, "packed_add_sum");
    assert_non_null(strstr(td_explain_get(ex, 0)->message,
                           "rejected: exec_scope"));
    assert_string_equal(td_explain_get(ex, 1)->variant, "shared_rows");
    assert_string_equal(td_explain_get(ex, 2)->variant, "local");
    assert_string_equal(td_explain_get(ex, 3)->variant, "shared");
    td_explain_free(ex);
    td_registry_free(reg);
}

/* ---- the fast path allocates nothing ----------------------------------- */

/* Evaluating predicates never allocates: a call every candidate rejects
 * (cta-scope registers: packed, local and shared all say no) is dispatched
 * with zero allocations; a call that matches allocates only for its IR,
 * which explain, building its table, exceeds. */
static void test_fast_path_allocates_nothing(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    td_call c;
    seed_call(&c, TD_SCOPE_CTA);
    td_dispatch_result res;
    td_diag d;
    td_diag_clear(&d);
    alloc_install();
    int rc = td_dispatch(reg, &c, &res, &d);
    long rejected_allocs = g_ca.calls;

    seed_call(&c, TD_SCOPE_THREAD);
    alloc_arm(0);
    int rc2 = td_dispatch(reg, &c, &res, &d);
    long matched_allocs = g_ca.calls;
    if (rc2 == 0)
        td_ir_free(res.ir);

    td_explain *ex = NULL;
    alloc_arm(0);
    int rc3 = td_explain_call(reg, &c, &ex, &d);
    long explain_allocs = g_ca.calls;
    td_explain_free(ex);
    long live = g_ca.live;
    td_set_allocator(NULL);

    assert_int_equal(rc, TD_ENOMATCH);
    assert_int_equal(rejected_allocs, 0);
    assert_int_equal(rc2, 0);
    assert_true(matched_allocs > 0);
    assert_int_equal(rc3, 0);
    assert_true(explain_allocs > matched_allocs);
    assert_int_equal(live, 0); /* the IR and the table were given back */
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_table),
        cmocka_unit_test(test_seed_dispatch),
        cmocka_unit_test(test_fast_path_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
