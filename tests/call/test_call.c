/*
 * Unit tests of the call file loader.  Bad call files live in data/bad/,
 * each starting with
 *   # expect: LINE:COL: MESSAGE SUBSTRING
 *   # code: TD_E...
 * and the test walks the directory.  Good call files with several operands
 * live in data/good/, each starting with
 *   # script: THE CALL AS td_call_format_script WRITES IT
 * (walked the same way).  Run with --print to see what the loader
 * says about each bad file (for writing new cases); that mode checks the
 * files too and exits 1 when one does not fail as expected (test call-print).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "td_internal.h"

#include "../common/td_test_alloc.h"

#ifndef TD_CALL_DATA
#error "TD_CALL_DATA must name tests/call/data"
#endif
#ifndef TD_EXAMPLES
#error "TD_EXAMPLES must name examples/calls"
#endif

/* ---- helpers ------------------------------------------------------------ */

static td_call *parse_ok(const char *text)
{
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_call_parse("t.yaml", text, strlen(text), &call, &d);
    if (rc != 0) {
        char buf[1024];
        td_diag_format(&d, buf, sizeof buf);
        print_error("unexpected failure: %s\n", buf);
    }
    assert_int_equal(rc, 0);
    assert_non_null(call);
    return call;
}

static void parse_bad(const char *text, int code, int line, int col,
                      const char *msg)
{
    td_call *call = (td_call *)1;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_call_parse("t.yaml", text, strlen(text), &call, &d);
    if (rc != code || d.line != line || d.col != col ||
        strcmp(d.msg, msg) != 0)
        print_error("got %s %d:%d: %s\n", td_err_name(rc), d.line, d.col,
                    d.msg);
    assert_null(call);
    assert_int_equal(rc, code);
    assert_int_equal(d.code, code);
    assert_string_equal(d.file, "t.yaml");
    assert_int_equal(d.line, line);
    assert_int_equal(d.col, col);
    assert_string_equal(d.msg, msg);
}

static void assert_script(const td_call *call, const char *want)
{
    char buf[512];
    size_t n = td_call_format_script(call, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
    /* Truncation keeps the full length and terminates the text. */
    char small[8];
    assert_int_equal(td_call_format_script(call, small, sizeof small),
                     strlen(want));
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, want, sizeof small - 1);
}

/* ---- good calls --------------------------------------------------------- */

static void test_seed(void **state)
{
    (void)state;
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    const char *path = TD_EXAMPLES "/seed_local_sum.yaml";
    assert_int_equal(td_call_load_file(path, &call, &d), 0);
    assert_string_equal(call->file, path);
    assert_string_equal(call->op, "sum");
    assert_string_equal(call->target, "cuda");
    assert_string_equal(call->arch, "sm_90a");
    assert_int_equal(call->sm_version, 90);
    assert_int_equal(call->scope, TD_SCOPE_THREAD);
    assert_true(call->launch[TD_LAUNCH_TX].present);
    assert_false(call->launch[TD_LAUNCH_TX].symbolic);
    assert_int_equal(call->launch[TD_LAUNCH_TX].extent, 1);
    assert_false(call->launch[TD_LAUNCH_TY].present);
    assert_int_equal(call->nbuffers, 2);
    assert_string_equal(call->buffers[0].name, "A_local");
    assert_string_equal(call->buffers[0].scope, "local");
    assert_int_equal(call->buffers[0].dtype, TD_F32);
    assert_int_equal(call->buffers[0].ndim, 1);
    assert_int_equal(call->buffers[0].shape[0], 4);
    assert_false(call->buffers[0].has_layout);
    assert_ptr_equal(td_call_dst_buffer(call), &call->buffers[1]);
    assert_ptr_equal(td_call_src_buffer(call), &call->buffers[0]);
    assert_int_equal(call->src.ndim, 1);
    assert_int_equal(call->src.start[0], 0);
    assert_int_equal(call->src.extent[0], 4);
    assert_int_equal(td_region_size(&call->src), 4);
    assert_int_equal(td_region_size(&call->dst), 1);
    assert_int_equal(call->naxes, 1);
    assert_int_equal(call->axes[0], -1);
    assert_false(call->accum);
    assert_int_equal(call->nconfig, 0);
    assert_string_equal(call->dispatch, "");
    /* The positions of values: "op: sum" is on line 3 of the seed. */
    assert_int_equal(call->pos_op.line, 3);
    assert_int_equal(call->pos_op.col, 5);
    assert_int_equal(call->pos_target.line, 4);
    assert_int_equal(call->pos_target.col, 9);
    assert_int_equal(call->pos_dispatch.line, 0);
    assert_script(call, "Tx.sum(B_local[0:1], A_local[0:4], axes=[-1], "
                        "accum=False)");
    /* A loaded call is plain data: a memcpy is a full copy. */
    td_call copy;
    memcpy(&copy, call, sizeof copy);
    td_call_free(call);
    assert_string_equal(copy.buffers[1].name, "B_local");
    td_call_free(NULL);
}

static void test_regions(void **state)
{
    (void)state;
    td_call *call = parse_ok(
        "op: max\ntarget: cuda\nscope: cta\n"
        "buffers:\n"
        "  A: {scope: shared.dyn, dtype: float16, shape: [8, 32]}\n"
        "  B: {scope: global, dtype: float16, shape: [8]}\n"
        "dst: 'B[ 2 : 6 ]'\n"
        "src: \"A[2:6, 16:]\"\n"
        "axes: 1\n"
        "accum: true\n");
    assert_int_equal(call->scope, TD_SCOPE_CTA);
    assert_string_equal(call->arch, "");
    assert_int_equal(call->sm_version, 0);
    assert_int_equal(call->dst.buffer, 1);
    assert_int_equal(call->dst.start[0], 2);
    assert_int_equal(call->dst.extent[0], 4);
    assert_int_equal(call->src.buffer, 0);
    assert_int_equal(call->src.ndim, 2);
    assert_int_equal(call->src.start[0], 2);
    assert_int_equal(call->src.extent[0], 4);
    assert_int_equal(call->src.start[1], 16);
    assert_int_equal(call->src.extent[1], 16);
    assert_int_equal(td_region_size(&call->src), 64);
    assert_int_equal(call->naxes, 1);
    assert_int_equal(call->axes[0], 1);
    assert_true(call->accum);
    assert_script(call, "Tx.cta.max(B[2:6], A[2:6, 16:32], axes=[1], "
                        "accum=True)");
    td_call_free(call);

    call = parse_ok("op: sum\ntarget: cuda\nbuffers:\n"
                    "  A: {scope: local, dtype: float32, shape: [4, 8]}\n"
                    "dst: A[2, :1]\nsrc: A[:, 0:8]\n");
    assert_int_equal(call->dst.start[0], 2);
    assert_int_equal(call->dst.extent[0], 1);
    assert_int_equal(call->dst.start[1], 0);
    assert_int_equal(call->dst.extent[1], 1);
    assert_int_equal(call->src.extent[0], 4);
    assert_int_equal(call->src.extent[1], 8);
    /* Default axes: [-1]. */
    assert_int_equal(call->naxes, 1);
    assert_int_equal(call->axes[0], -1);
    assert_script(call, "Tx.sum(A[2:3, 0:1], A[0:4, 0:8], axes=[-1], "
                        "accum=False)");
    td_call_free(call);
}

static void test_launch_config_dispatch(void **state)
{
    (void)state;
    td_call *call = parse_ok(
        "op: min\ntarget: cuda\narch: sm_100a\nscope: warpgroup\n"
        "launch: {threadIdx.x: 128, blockIdx.y: n_blocks, blockIdx.z: 3}\n"
        "buffers:\n"
        "  A: {scope: local, dtype: int32, shape: [3, 4, 5]}\n"
        "  B: {scope: local, dtype: int32, shape: [4]}\n"
        "dst: B\nsrc: A\naxes: [0, -1]\n"
        "config: {thread_reduce: true, barrier_id: 8, mode: \"fast\", "
        "neg: -3}\n"
        "dispatch: 3input_maxmin\n");
    assert_int_equal(call->sm_version, 100);
    assert_string_equal(call->arch, "sm_100a");
    assert_int_equal(call->scope, TD_SCOPE_WARPGROUP);
    assert_int_equal(call->launch[TD_LAUNCH_TX].extent, 128);
    assert_true(call->launch[TD_LAUNCH_BY].present);
    assert_true(call->launch[TD_LAUNCH_BY].symbolic);
    assert_string_equal(call->launch[TD_LAUNCH_BY].symbol, "n_blocks");
    assert_int_equal(call->launch[TD_LAUNCH_BZ].extent, 3);
    assert_false(call->launch[TD_LAUNCH_BX].present);
    assert_int_equal(call->cluster[0], 0); /* no cluster launch */
    assert_int_equal(call->buffers[0].dtype, TD_I32);
    assert_int_equal(call->naxes, 2);
    assert_int_equal(call->axes[0], 0);
    assert_int_equal(call->axes[1], -1);
    assert_int_equal(call->nconfig, 4);
    assert_true(td_call_config_bool(call, "thread_reduce", false));
    assert_false(td_call_config_bool(call, "absent", false));
    assert_true(td_call_config_bool(call, "barrier_id", true)); /* not bool */
    assert_int_equal(td_call_config_int(call, "barrier_id", 0), 8);
    assert_int_equal(td_call_config_int(call, "neg", 0), -3);
    assert_int_equal(td_call_config_int(call, "mode", 7), 7);
    const td_config_entry *e = td_call_config(call, "mode");
    assert_non_null(e);
    assert_int_equal(e->kind, TD_VALUE_STRING);
    assert_string_equal(e->s, "fast");
    assert_null(td_call_config(call, "nope"));
    assert_string_equal(call->dispatch, "3input_maxmin");
    assert_int_equal(call->pos_dispatch.line, 13);
    assert_int_equal(call->pos_dispatch.col, 11);
    assert_script(call,
                  "Tx.wg.min(B[0:4], A[0:3, 0:4, 0:5], axes=[0, -1], "
                  "accum=False, dispatch=\"3input_maxmin\", thread_reduce=True, "
                  "barrier_id=8, mode=\"fast\", neg=-3)");

    int red[TD_MAX_RANK], spa[TD_MAX_RANK], nr = -1, ns = -1;
    assert_int_equal(td_call_axes(call, red, &nr, spa, &ns, NULL, 0), 0);
    assert_int_equal(nr, 2);
    assert_int_equal(red[0], 0);
    assert_int_equal(red[1], 2);
    assert_int_equal(ns, 1);
    assert_int_equal(spa[0], 1);

    /* --arch overrides. */
    assert_int_equal(td_call_set_arch(call, "sm_80"), 0);
    assert_int_equal(call->sm_version, 80);
    assert_string_equal(call->arch, "sm_80");
    assert_int_equal(td_call_set_arch(call, "nvidia/sm_120a"), 0);
    assert_int_equal(call->sm_version, 120);
    assert_int_equal(td_call_set_arch(call, "gfx90a"), TD_EINVAL);
    assert_int_equal(td_call_set_arch(call, "sm_"), TD_EINVAL);
    assert_int_equal(td_call_set_arch(call, "sm_99999999999"), TD_EINVAL);
    assert_int_equal(call->sm_version, 120); /* unchanged on failure */
    td_call_free(call);

    /* Each exec scope's script prefix. */
    static const char *const scopes[] = {"thread", "warp", "warpgroup", "cta",
                                         "cluster"};
    static const char *const want[] = {"Tx.sum(", "Tx.warp.sum(", "Tx.wg.sum(",
                                       "Tx.cta.sum(", "Tx.cluster.sum("};
    for (int i = 0; i < 5; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "op: sum\ntarget: cuda\nscope: %s\nbuffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [4]}\n"
                 "dst: A[0:1]\nsrc: A\n",
                 scopes[i]);
        call = parse_ok(text);
        char buf[256];
        td_call_format_script(call, buf, sizeof buf);
        assert_memory_equal(buf, want[i], strlen(want[i]));
        td_call_free(call);
    }
}

/* `launch: {cluster: [...]}`: missing extents are 1, and the cluster ids
 * become usable in config expressions. */
static void test_launch_cluster(void **state)
{
    (void)state;
    td_call *call = parse_ok(
        "op: copy_async\ntarget: cuda\narch: sm_90a\nscope: thread\n"
        "launch: {threadIdx.x: 32, blockIdx.x: 4, cluster: [2]}\n"
        "buffers:\n"
        "  S: {scope: shared, dtype: float16, shape: [64]}\n"
        "  D: {scope: shared, dtype: float16, shape: [64]}\n"
        "  mbar: {scope: shared, dtype: uint64, shape: [1]}\n"
        "dst: D\nsrc: S\n"
        "config: {mbar: \"mbar[0]\", remote_cta_id: \"1 - cbx\"}\n");
    assert_int_equal(call->cluster[0], 2);
    assert_int_equal(call->cluster[1], 1);
    assert_int_equal(call->cluster[2], 1);
    const td_config_entry *e = td_call_config(call, "remote_cta_id");
    assert_non_null(e);
    assert_int_equal(e->kind, TD_VALUE_EXPR);
    td_call_free(call);
    /* The limit itself loads: 16 CTAs (launch_cluster_* in data/bad go
     * one past it). */
    call = parse_ok("op: copy_async\ntarget: cuda\narch: sm_90a\n"
                    "launch: {threadIdx.x: 32, cluster: [4, 2, 2]}\n"
                    "buffers:\n"
                    "  S: {scope: shared, dtype: float16, shape: [64]}\n"
                    "  D: {scope: shared, dtype: float16, shape: [64]}\n"
                    "dst: D\nsrc: S\n");
    assert_int_equal(call->cluster[0] * call->cluster[1] * call->cluster[2],
                     TD_MAX_CLUSTER);
    td_call_free(call);
}

static void test_layouts_in_calls(void **state)
{
    (void)state;
    td_call *call = parse_ok(
        "op: sum\ntarget: cuda\nscope: warp\nlaunch: {threadIdx.x: 32}\n"
        "buffers:\n"
        "  A: {scope: local, dtype: float32, shape: [128],\n"
        "      layout: \"S[(32, 4) : (1@laneid, 1)]\"}\n"
        "  B:\n"
        "    scope: local\n"
        "    dtype: float32\n"
        "    shape: [4]\n"
        "    layout: S[4:1] + R[32:1@laneid]\n"
        "dst: B\nsrc: A\n");
    const td_buffer *a = td_call_src_buffer(call);
    assert_true(a->has_layout);
    assert_string_equal(a->layout_text, "S[(32, 4) : (1@laneid, 1)]");
    assert_int_equal(a->layout.nshard, 2);
    assert_int_equal(a->layout.shard[0].axis, TD_AXIS_LANEID);
    assert_int_equal(a->layout.shard[1].axis, TD_AXIS_M);
    const td_buffer *b = td_call_dst_buffer(call);
    assert_int_equal(b->layout.nrep, 1);
    assert_int_equal(b->layout.rep[0].extent, 32);
    td_call_free(call);

    /* Errors inside a plain layout scalar point into the string. */
    parse_bad("op: sum\ntarget: cuda\nbuffers:\n"
              "  A:\n    scope: local\n    dtype: float32\n    shape: [4]\n"
              "    layout: S[4:1@lane]\n"
              "dst: A[0:1]\nsrc: A\n",
              TD_EPARSE, 8, 19,
              "unknown layout axis 'lane' (did you mean 'laneid'?)");
    parse_bad("op: sum\ntarget: cuda\nbuffers:\n"
              "  A:\n    scope: local\n    dtype: float32\n    shape: [4]\n"
              "    layout: S[4:1@q]\n"
              "dst: A[0:1]\nsrc: A\n",
              TD_EPARSE, 8, 19,
              "unknown layout axis 'q' (expected one of: m, laneid, warpid, "
              "tx, wgid, tid_in_wg, wid_in_wg, bx, by, bz, cbx, cby, cbz, TLane, TCol)");
}

static void test_axes_helper(void **state)
{
    (void)state;
    /* The reference's examples, on hand-built calls. */
    static const struct {
        int ndim, naxes, axes[3];
        int nr, red[3], ns, spa[3];
    } cases[] = {
        {3, 1, {-1}, 1, {2}, 2, {0, 1}},
        {3, 2, {0, 2}, 2, {0, 2}, 1, {1}},
        {2, 2, {1, -1}, 1, {1}, 1, {0}},
        {1, 1, {0}, 1, {0}, 0, {0}},
        {4, 3, {-4, 3, 1}, 3, {0, 1, 3}, 1, {2}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        td_call call;
        memset(&call, 0, sizeof call);
        call.src.ndim = cases[i].ndim;
        call.naxes = cases[i].naxes;
        memcpy(call.axes, cases[i].axes, sizeof cases[i].axes);
        int red[TD_MAX_RANK], spa[TD_MAX_RANK], nr, ns;
        char why[64] = "";
        assert_int_equal(
            td_call_axes(&call, red, &nr, spa, &ns, why, sizeof why), 0);
        assert_int_equal(nr, cases[i].nr);
        assert_int_equal(ns, cases[i].ns);
        assert_memory_equal(red, cases[i].red, (size_t)nr * sizeof(int));
        assert_memory_equal(spa, cases[i].spa, (size_t)ns * sizeof(int));
    }
    td_call call;
    memset(&call, 0, sizeof call);
    call.src.ndim = 2;
    call.naxes = 2;
    call.axes[0] = 0;
    call.axes[1] = 3;
    int red[TD_MAX_RANK], spa[TD_MAX_RANK], nr, ns;
    char why[64];
    assert_int_equal(td_call_axes(&call, red, &nr, spa, &ns, why, sizeof why),
                     TD_EINVAL);
    assert_string_equal(why, "reduce axis 3 out of range for ndim=2");
    call.axes[1] = -3;
    assert_int_equal(td_call_axes(&call, red, &nr, spa, &ns, why, sizeof why),
                     TD_EINVAL);
    assert_string_equal(why, "reduce axis -3 out of range for ndim=2");
}

static void test_inline_errors(void **state)
{
    (void)state;
    /* Position of a missing key: the top-level mapping's start. */
    parse_bad("\n  op: sum\n  target: cuda\n", TD_ESCHEMA, 2, 3,
              "missing required key 'buffers'");
    parse_bad("", TD_ESCHEMA, 1, 1, "empty call file");
    parse_bad("---\n", TD_ESCHEMA, 1, 1, "empty call file");
    parse_bad("17\n", TD_ESCHEMA, 1, 1,
              "a call file must be a mapping, not an integer");
    /* A NUL byte inside a quoted value. */
    const char nul[] = "op: \"s\\0m\"\ntarget: cuda\nbuffers: {A: {scope: "
                       "local, dtype: int8, shape: [1]}}\ndst: A\nsrc: A\n";
    parse_bad(nul, TD_ESCHEMA, 1, 5, "'op' contains a NUL byte");
    /* Control bytes are a YAML reader error with a position. */
    td_call *call = (td_call *)1;
    td_diag d;
    td_diag_clear(&d);
    const char bin[] = "op: sum\ntar\x01get: x\n";
    assert_int_equal(td_call_parse("b", bin, sizeof bin - 1, &call, &d),
                     TD_EPARSE);
    assert_null(call);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 4);
    /* Over the size limit. */
    size_t big = TD_CALL_FILE_MAX + 1;
    char *text = calloc(1, big + 1);
    assert_non_null(text);
    memset(text, '#', big);
    td_diag_clear(&d);
    assert_int_equal(td_call_parse("big", text, big, &call, &d), TD_ELIMIT);
    free(text);
    /* A missing file. */
    td_diag_clear(&d);
    assert_int_equal(td_call_load_file(TD_CALL_DATA "/no/such.yaml", &call, &d),
                     TD_EIO);
    assert_null(call);
}

/* A tmem buffer's layout names its datapath (TVM's tmem_datapath_layout,
 * compared structurally: any spelling that canonicalizes to it): D for 128
 * rows (then the buffer has no layout), F (either sub-slab) and B for 64;
 * any other TLane/TCol layout is none of them (lane replicas, which
 * smem->tmem writes). */
static void test_tmem_datapaths(void **state)
{
    (void)state;
    static const struct {
        const char *rows_cols, *layout;
        td_tmem_datapath dp;
        int sub_slab;
    } cases[] = {
        {"[128, 64]", "", TD_TMEM_D, 0},
        {"[128, 64]", ", layout: \"S[(128, 64) : (1@TLane, 1@TCol)]\"",
         TD_TMEM_D, 0},
        {"[64, 32]", ", layout: \"S[(4, 16, 32) : (32@TLane, 1@TLane, "
                     "1@TCol)]\"", TD_TMEM_F, 0},
        {"[64, 32]", ", layout: \"S[(4,16,32):(32@TLane,1@TLane,"
                     "1@TCol)]+16@TLane\"",
         TD_TMEM_F, 1},
        {"[64, 128]", ", layout: \"S[(64, 2, 64) : (1@TLane, 64@TLane, "
                      "1@TCol)]\"", TD_TMEM_B, 0},
        /* D and F spelled otherwise: the same layouts. */
        {"[128, 64]", ", layout: \"S[(2, 64, 64) : (64@TLane, 1@TLane, "
                      "1@TCol)]\"", TD_TMEM_D, 0},
        {"[64, 32]", ", layout: \"S[(4, 16, 2, 16) : (32@TLane, 1@TLane, "
                     "16@TCol, 1@TCol)] + 16@TLane\"", TD_TMEM_F, 1},
        /* None of them: 64 rows in lanes 0..63, F's offset on 128 rows'
         * D, lane replicas. */
        {"[64, 32]", ", layout: \"S[(64, 32) : (1@TLane, 1@TCol)]\"",
         TD_TMEM_OTHER, 0},
        {"[64, 32]", ", layout: \"S[(4, 16, 32) : (32@TLane, 1@TLane, "
                     "1@TCol)] + 8@TLane\"", TD_TMEM_OTHER, 0},
        {"[32, 16]", ", layout: \"S[(32, 16) : (1@TLane, 1@TCol)] + "
                     "R[4 : 32@TLane]\"", TD_TMEM_OTHER, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "op: copy_async\ntarget: cuda\nbuffers:\n  Acc: {scope: tmem, "
                 "dtype: float32, shape: %s%s}\n  Rg: {scope: local, dtype: "
                 "float32, shape: [128, 8]}\ndst: \"Rg[0:1, 0:8]\"\nsrc: "
                 "\"Acc[0:1, 0:8]\"\n",
                 cases[i].rows_cols, cases[i].layout);
        td_call *call = NULL;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_call_parse("t", text, strlen(text), &call, &d);
        if (rc != 0)
            print_error("%s: %s\n", text, d.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(call->buffers[0].datapath, cases[i].dp);
        assert_int_equal(call->buffers[0].sub_slab, cases[i].sub_slab);
        assert_int_equal(call->buffers[0].has_layout,
                         cases[i].dp != TD_TMEM_D);
        td_call_free(call);
    }
}

static void test_examples(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        const char *script;
    } ex[] = {
        {"seed_local_sum.yaml",
         "Tx.sum(B_local[0:1], A_local[0:4], axes=[-1], accum=False)"},
        {"thread_sum_3d_axes_0_2.yaml",
         "Tx.sum(B_local[0:4], A_local[0:3, 0:4, 0:5], axes=[0, 2], "
         "accum=False)"},
        {"thread_max_last_axis.yaml",
         "Tx.max(B_local[0:2, 0:3], A_local[0:2, 0:3, 0:4], axes=[-1], "
         "accum=False)"},
        {"thread_sum_region.yaml",
         "Tx.sum(B_local[2:4], A_local[1:3, 2:6], axes=[-1], accum=True)"},
        {"thread_min_int32.yaml",
         "Tx.min(B_local[0:1], A_local[0:8], axes=[-1], accum=False)"},
        {"cta_local_sum.yaml",
         "Tx.cta.sum(B_local[0:1], A_local[0:4], axes=[-1], accum=False)"},
    };
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TD_EXAMPLES, ex[i].file);
        td_call *call = NULL;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_call_load_file(path, &call, &d);
        if (rc)
            print_error("%s: %d:%d: %s\n", path, d.line, d.col, d.msg);
        assert_int_equal(rc, 0);
        assert_script(call, ex[i].script);
        /* The spatial dims of the source match the destination's size. */
        int red[TD_MAX_RANK], spa[TD_MAX_RANK], nr, ns;
        assert_int_equal(td_call_axes(call, red, &nr, spa, &ns, NULL, 0), 0);
        int64_t spatial = 1;
        for (int k = 0; k < ns; k++)
            spatial *= call->src.extent[spa[k]];
        assert_int_equal(spatial, td_region_size(&call->dst));
        td_call_free(call);
    }
}


/* ---- several operands (srcs, extras) ------------------------------------ */

#define EW_HEAD                                                                \
    "op: add\ntarget: cuda\nbuffers:\n"                                        \
    "  A: {scope: local, dtype: float32, shape: [4]}\n"                        \
    "  B: {scope: local, dtype: float32, shape: [4]}\n"                        \
    "  I: {scope: local, dtype: int8, shape: [2, 4]}\n"                        \
    "dst: B\n"

static void test_operands(void **state)
{
    (void)state;
    /* src: one region, as before: srcs[0] mirrors it. */
    td_call *call = parse_ok(EW_HEAD "src: A[1:3]\n");
    assert_int_equal(call->nsrcs, 1);
    assert_false(call->srcs_list);
    assert_int_equal(call->srcs[0].kind, TD_OPERAND_REGION);
    assert_int_equal(call->srcs[0].dtype, TD_F32);
    assert_int_equal(call->srcs[0].region.buffer, 0);
    assert_int_equal(call->srcs[0].region.start[0], 1);
    assert_int_equal(call->srcs[0].region.extent[0], 2);
    assert_memory_equal(&call->src, &call->srcs[0].region, sizeof call->src);
    assert_int_equal(call->srcs[0].pos.line, 8);
    assert_int_equal(call->srcs[0].pos.col, 6);
    assert_int_equal(call->pos_srcs.line, 8);
    assert_int_equal(call->bias.kind, TD_OPERAND_NONE);
    assert_int_equal(call->scale.kind, TD_OPERAND_NONE);
    assert_int_equal(call->pos_extras.line, 0);
    assert_ptr_equal(td_call_src_buffer(call), &call->buffers[0]);
    assert_script(call, "Tx.add(B[0:4], A[1:3], axes=[-1], accum=False)");
    td_call_free(call);

    /* srcs: regions, bare numbers (the dst's dtype), literal and scalar
     * mappings; extras. */
    call = parse_ok(EW_HEAD
                    "srcs: [\"I[1, :]\", -2.5, {value: 7, dtype: int8},\n"
                    "       {scalar: alpha, dtype: float16}]\n"
                    "extras: {bias: {scalar: beta, dtype: float32}, "
                    "scale: 0.25}\n");
    assert_true(call->srcs_list);
    assert_int_equal(call->nsrcs, 4);
    const td_operand *o = call->srcs;
    assert_int_equal(o[0].kind, TD_OPERAND_REGION);
    assert_int_equal(o[0].dtype, TD_I8);
    assert_int_equal(o[0].region.buffer, 2);
    assert_int_equal(o[0].region.start[0], 1);
    assert_int_equal(o[0].region.extent[0], 1);
    assert_int_equal(o[0].region.extent[1], 4);
    assert_int_equal(o[0].pos.line, 8);
    assert_int_equal(o[0].pos.col, 8);
    assert_int_equal(o[1].kind, TD_OPERAND_LITERAL);
    assert_int_equal(o[1].dtype, TD_F32);
    assert_true(o[1].value == -2.5);
    assert_int_equal(o[1].pos.col, 19);
    assert_int_equal(o[2].kind, TD_OPERAND_LITERAL);
    assert_int_equal(o[2].dtype, TD_I8);
    assert_int_equal(o[2].ivalue, 7);
    assert_true(o[2].value == 7.0);
    assert_int_equal(o[2].pos.col, 25);
    assert_int_equal(o[3].kind, TD_OPERAND_SCALAR);
    assert_int_equal(o[3].dtype, TD_F16);
    assert_string_equal(o[3].name, "alpha");
    assert_int_equal(o[3].pos.line, 9);
    assert_int_equal(o[3].pos.col, 8);
    assert_int_equal(call->pos_srcs.line, 8);
    assert_int_equal(call->pos_srcs.col, 7);
    /* The first source is a region: call->src is it. */
    assert_int_equal(call->src.buffer, 2);
    assert_int_equal(call->bias.kind, TD_OPERAND_SCALAR);
    assert_string_equal(call->bias.name, "beta");
    assert_int_equal(call->bias.dtype, TD_F32);
    assert_int_equal(call->bias.pos.line, 10);
    assert_int_equal(call->bias.pos.col, 16);
    assert_int_equal(call->scale.kind, TD_OPERAND_LITERAL);
    assert_int_equal(call->scale.dtype, TD_F32);
    assert_true(call->scale.value == 0.25);
    assert_int_equal(call->pos_extras.line, 10);
    assert_int_equal(call->pos_extras.col, 9);
    assert_script(call, "Tx.add(B[0:4], I[1:2, 0:4], T.float32(-2.5), "
                        "T.int8(7), alpha, beta, T.float32(0.25))");
    td_call_free(call);

    /* A first source that is not a region: no src region. */
    call = parse_ok(EW_HEAD "srcs: [{scalar: x, dtype: float32}, A]\n");
    assert_int_equal(call->src.buffer, -1);
    assert_null(td_call_src_buffer(call));
    assert_int_equal(call->nsrcs, 2);
    /* The default axes stay (reductions read them); td_call_axes refuses
     * them without a source region instead of reading past anything. */
    int red[TD_MAX_RANK], spa[TD_MAX_RANK], nr, ns;
    char why[64];
    assert_int_equal(td_call_axes(call, red, &nr, spa, &ns, why, sizeof why),
                     TD_EINVAL);
    td_call_free(call);

    /* No source at all. */
    call = parse_ok(EW_HEAD);
    assert_int_equal(call->nsrcs, 0);
    assert_int_equal(call->src.buffer, -1);
    assert_null(td_call_src_buffer(call));
    assert_int_equal(call->pos_srcs.line, 0);
    assert_script(call, "Tx.add(B[0:4])");
    td_call_free(call);

    /* Integer literals: every integer dtype's bounds; floats written as
     * integral values; uint64 past INT64_MAX keeps its bits. */
    static const struct {
        const char *text;
        td_dtype dt;
        int64_t iv;
    } ints[] = {
        {"{value: -128, dtype: int8}", TD_I8, -128},
        {"{value: 127, dtype: int8}", TD_I8, 127},
        {"{value: 255, dtype: uint8}", TD_U8, 255},
        {"{value: -32768, dtype: int16}", TD_I16, -32768},
        {"{value: 65535, dtype: uint16}", TD_U16, 65535},
        {"{value: -2147483648, dtype: int32}", TD_I32, INT32_MIN},
        {"{value: 4294967295, dtype: uint32}", TD_U32, 4294967295LL},
        {"{value: -9223372036854775808, dtype: int64}", TD_I64, INT64_MIN},
        {"{value: 9223372036854775807, dtype: int64}", TD_I64, INT64_MAX},
        {"{value: 18446744073709551615, dtype: uint64}", TD_U64, -1},
        {"{value: 4.0, dtype: int32}", TD_I32, 4},
        {"{value: -1e2, dtype: int16}", TD_I16, -100},
        {"{value: -0.0, dtype: uint8}", TD_U8, 0},
    };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        char text[512];
        snprintf(text, sizeof text, EW_HEAD "srcs: [%s]\n", ints[i].text);
        call = parse_ok(text);
        assert_int_equal(call->srcs[0].kind, TD_OPERAND_LITERAL);
        assert_int_equal(call->srcs[0].dtype, ints[i].dt);
        assert_int_equal(call->srcs[0].ivalue, ints[i].iv);
        td_call_free(call);
    }
    /* Floats: YAML's spellings of infinities and NaN; the float16 and
     * bfloat16 ranges; integers past int64 for a float dtype. */
    static const struct {
        const char *text;
        double v;
    } floats[] = {
        {".inf", INFINITY},
        {"-.Inf", -INFINITY},
        {"+.INF", INFINITY},
        {"{value: 65504, dtype: float16}", 65504.0},
        {"{value: -65504.0, dtype: float16}", -65504.0},
        {"{value: 3.3895313892515355e38, dtype: bfloat16}",
         3.3895313892515355e38},
        {"{value: 1.7976931348623157e308, dtype: float64}", 1.7976931348623157e308},
        {"{value: 100000000000000000000, dtype: float32}", 1e20},
        {"1.", 1.0},
        {".5", 0.5},
        {"+3E-2", 0.03},
    };
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++) {
        char text[512];
        snprintf(text, sizeof text, EW_HEAD "srcs: [%s]\n", floats[i].text);
        call = parse_ok(text);
        assert_int_equal(call->srcs[0].kind, TD_OPERAND_LITERAL);
        assert_true(call->srcs[0].value == floats[i].v);
        td_call_free(call);
    }
    static const char *const nans[] = {".nan", ".NaN", ".NAN",
                                       "{value: .nan, dtype: float16}"};
    for (size_t i = 0; i < sizeof nans / sizeof *nans; i++) {
        char text[512];
        snprintf(text, sizeof text, EW_HEAD "srcs: [%s]\n", nans[i]);
        call = parse_ok(text);
        assert_true(isnan(call->srcs[0].value));
        td_call_free(call);
    }
}

static void test_operand_errors(void **state)
{
    (void)state;
    /* Line 8 is the first after EW_HEAD. */
    parse_bad(EW_HEAD "srcs: [A, A, {value: 1.5, dtype: f32}]\n", TD_ESCHEMA, 8, 34, "srcs[2]: unknown dtype 'f32' (did you mean 'float32'?)");
    parse_bad(EW_HEAD "srcs: [A, A, A, A, A]\n", TD_ELIMIT, 8, 7,
              "'srcs' has 5 operands (at most 4)");
    parse_bad(EW_HEAD "src: A\nextras: {scale: A}\n", TD_ESCHEMA, 9, 17,
              "extras: 'scale' must be a literal or a named scalar, not a "
              "region");
    parse_bad(EW_HEAD "src: A\nsrcs: [A]\n", TD_ESCHEMA, 9, 1,
              "give 'src' (one region) or 'srcs' (a list of operands), not "
              "both");
    parse_bad(EW_HEAD "srcs: [A]\nsrc: A\n", TD_ESCHEMA, 9, 1,
              "give 'src' (one region) or 'srcs' (a list of operands), not "
              "both");
    parse_bad(EW_HEAD "srcs: {a: 1}\n", TD_ESCHEMA, 8, 7,
              "'srcs' must be a list of operands, not a mapping");
    parse_bad(EW_HEAD "srcs: [A, \"A[0:5]\"]\n", TD_ESCHEMA, 8, 14,
              "srcs[1]: slice 0:5 out of bounds for dimension 0 of extent 4");
    parse_bad(EW_HEAD "srcs: [C]\n", TD_ESCHEMA, 8, 8,
              "srcs[0]: unknown buffer 'C' (expected one of: A, B, I)");
    parse_bad(EW_HEAD "srcs: ['I[0, 0:4:2]']\n", TD_EPARSE, 8, 17, "srcs[0]: slice steps are not supported in regions");
    parse_bad(EW_HEAD "srcs: [~]\n", TD_ESCHEMA, 8, 8,
              "srcs[0]: an operand must be a region, a number or a mapping, "
              "not null");
    parse_bad(EW_HEAD "srcs: [nan]\n", TD_ESCHEMA, 8, 8,
              "srcs[0]: 'nan' is not a YAML number (write a decimal number, "
              ".inf, -.inf or .nan)");
    parse_bad(EW_HEAD "srcs: [-.nan]\n", TD_EPARSE, 8, 8,
              "srcs[0]: expected a buffer name, found '-'");
    parse_bad(EW_HEAD "srcs: [{value: 256, dtype: uint8}]\n", TD_ESCHEMA, 8,
              16, "srcs[0]: literal 256 is out of range for uint8 (0 to 255)");
    parse_bad(EW_HEAD "srcs: [{value: 9223372036854775808, dtype: int64}]\n",
              TD_ESCHEMA, 8, 16,
              "srcs[0]: literal 9223372036854775808 is out of range for int64 "
              "(-9223372036854775808 to 9223372036854775807)");
    parse_bad(EW_HEAD "srcs: [{value: 1e19, dtype: int64}]\n", TD_ESCHEMA, 8,
              16,
              "srcs[0]: literal 1e19 is out of range for int64 "
              "(-9223372036854775808 to 9223372036854775807)");
    parse_bad(EW_HEAD "srcs: [{value: 0.5, dtype: uint8}]\n", TD_ESCHEMA, 8,
              16, "srcs[0]: literal 0.5 is not an integer (dtype uint8)");
    parse_bad(EW_HEAD "srcs: [{value: -.inf, dtype: int8}]\n", TD_ESCHEMA, 8,
              16, "srcs[0]: literal -.inf is not an integer (dtype int8)");
    parse_bad(EW_HEAD "srcs: [{value: 65520, dtype: float16}]\n", TD_ESCHEMA,
              8, 16, "srcs[0]: literal 65520 is out of range for float16");
    parse_bad(EW_HEAD "srcs: [{value: 3.4e38, dtype: bfloat16}]\n",
              TD_ESCHEMA, 8, 16,
              "srcs[0]: literal 3.4e38 is out of range for bfloat16");
    parse_bad(EW_HEAD "srcs: [1e309]\n", TD_ESCHEMA, 8, 8,
              "srcs[0]: literal 1e309 is out of range for float32");
    parse_bad(EW_HEAD "srcs: [{value: true, dtype: float32}]\n", TD_ESCHEMA, 8,
              16, "srcs[0]: 'value' must be a number, not a boolean");
    parse_bad(EW_HEAD "srcs: [{scalar: x}]\n", TD_ESCHEMA, 8, 8,
              "srcs[0]: missing required key 'dtype'");
    parse_bad(EW_HEAD "srcs: [{scalar: x, dtype: [float32]}]\n", TD_ESCHEMA, 8,
              27, "srcs[0]: 'dtype' must be a string, not a list");
    parse_bad(EW_HEAD "srcs: [{scalar: 'a b', dtype: float32}]\n", TD_ESCHEMA,
              8, 17, "srcs[0]: scalar name 'a b' is not an identifier");
    parse_bad(EW_HEAD "srcs: [{scalar: I, dtype: int8}]\n", TD_ESCHEMA, 8, 17,
              "srcs[0]: scalar 'I' has the name of a buffer");
    parse_bad(EW_HEAD "src: A\nextras: {scale: {scalar: None, dtype: float32}}\n",
              TD_ESCHEMA, 9, 26,
              "extras.scale: scalar name 'None' is reserved (a keyword of "
              "CUDA C or TVMScript, or a name the printed code uses)");
    parse_bad(EW_HEAD "srcs: [{scalar: int, dtype: int8}]\n", TD_ESCHEMA, 8,
              17,
              "srcs[0]: scalar name 'int' is reserved (a keyword of CUDA C or "
              "TVMScript, or a name the printed code uses)");
    parse_bad(EW_HEAD "srcs: [{scalar: x, dtype: float32}]\n"
                      "extras: {bias: {scalar: x, dtype: int8}}\n", TD_ESCHEMA, 9, 35, "extras.bias: scalar 'x' is int8 here but float32 at 8:8");
    parse_bad(EW_HEAD "srcs: [{scalar: x, value: 1, dtype: float32}]\n",
              TD_ESCHEMA, 8, 8, "srcs[0]: give 'value' or 'scalar', not both");
    parse_bad(EW_HEAD "srcs: [{dtype: float32}]\n", TD_ESCHEMA, 8, 8,
              "srcs[0]: an operand mapping needs 'value' (a literal) or "
              "'scalar' (a named scalar)");
    parse_bad(EW_HEAD "srcs: [{value: 1, dtype: float32, x: 1}]\n", TD_ESCHEMA,
              8, 35,
              "srcs[0]: unknown key 'x' (expected one of: value, scalar, dtype)");
    parse_bad(EW_HEAD "src: A\nextras: 2\n", TD_ESCHEMA, 9, 9,
              "'extras' must be a mapping, not an integer");
    parse_bad(EW_HEAD "src: A\nextras: {shift: 2}\n", TD_ESCHEMA, 9, 10,
              "extras: unknown key 'shift' (expected one of: bias, scale)");
    parse_bad(EW_HEAD "src: A\nextras: {bias: [A]}\n", TD_ESCHEMA, 9, 16,
              "extras.bias: an operand must be a region, a number or a "
              "mapping, not a list");
    parse_bad(EW_HEAD "src: A\nextras: {bias: 1, bias: 2}\n", TD_ESCHEMA, 9,
              19, "duplicate key 'bias'");
    parse_bad(EW_HEAD "src: A\nextras: {scale: {value: x, dtype: float32}}\n", TD_ESCHEMA, 9, 25, "extras.scale: 'value' must be a number, not a string");
    parse_bad(EW_HEAD "srcs: [2]\naxes: [0]\n", TD_ESCHEMA, 9, 7,
              "'axes' needs a region as the first source");
    /* src still takes only a region, with its old messages. */
    parse_bad(EW_HEAD "src: 2\n", TD_ESCHEMA, 8, 6,
              "'src' must be a string, not an integer");
    parse_bad(EW_HEAD "src: C\n", TD_ESCHEMA, 8, 6,
              "unknown buffer 'C' (expected one of: A, B, I)");
}

/* The dtype table: each name parses back to its dtype; the bits and the
 * classes of the two confined dtypes of block-scaled MMA (TVM's names). */
static void test_dtype_table(void **state)
{
    (void)state;
    for (int t = 0; t < TD_DTYPE_COUNT; t++) {
        td_dtype back = TD_DTYPE_COUNT;
        assert_int_equal(td_dtype_parse(td_dtype_name((td_dtype)t), &back),
                         0);
        assert_int_equal(back, t);
        assert_true(td_dtype_bits((td_dtype)t) >= 4);
        assert_int_equal(td_dtype_is_confined((td_dtype)t),
                         t == TD_F8E8M0 || t == TD_F4E2M1);
    }
    assert_string_equal(td_dtype_name(TD_F8E8M0), "float8_e8m0fnu");
    assert_string_equal(td_dtype_name(TD_F4E2M1), "float4_e2m1fn");
    assert_int_equal(td_dtype_bits(TD_F8E8M0), 8);
    assert_int_equal(td_dtype_bits(TD_F4E2M1), 4);
    /* Floating formats, but not float8 for the float8 paths (copies,
     * casts, the program generator); e8m0 has no sign. */
    assert_true(td_dtype_is_float(TD_F8E8M0));
    assert_true(td_dtype_is_float(TD_F4E2M1));
    assert_false(td_dtype_is_float8(TD_F8E8M0));
    assert_false(td_dtype_is_float8(TD_F4E2M1));
    assert_false(td_dtype_is_signed(TD_F8E8M0));
    assert_true(td_dtype_is_signed(TD_F4E2M1));
    assert_true(td_dtype_is_float8(TD_F8E4M3));
    assert_false(td_dtype_is_confined(TD_F8E4M3));
}


/* Every unknown name gets the one close valid name, or the list of them;
 * the spellings of other tools (fp32, half, blockDim.x, hopper) get a hint
 * and are still refused. */
static void test_unknown_name_hints(void **state)
{
    (void)state;
#define HINT_BUFS                                                              \
    "op: sum\ntarget: cuda\nbuffers:\n"                                        \
    "  A_local: {scope: local, dtype: float32, shape: [4]}\n"                  \
    "  B_local: {scope: local, dtype: float32, shape: [1]}\n"
#define HINT_TAIL "dst: B_local\nsrc: A_local\n"
    parse_bad(HINT_BUFS HINT_TAIL "axis: [-1]\n", TD_ESCHEMA, 8, 1,
              "unknown key 'axis' (did you mean 'axes'?)");
    parse_bad("version: 1\nvariants: []\n", TD_ESCHEMA, 1, 1,
              "unknown key 'version' (this looks like a rules file, not a "
              "call file)");
    parse_bad(HINT_BUFS HINT_TAIL "lauch: {threadIdx.x: 32}\n", TD_ESCHEMA, 8,
              1, "unknown key 'lauch' (did you mean 'launch'?)");
    parse_bad("op: sum\ntarget: cuda\nbuffers:\n"
              "  A: {scope: local, dtpye: float32, shape: [4]}\n" HINT_TAIL,
              TD_ESCHEMA, 4, 21,
              "unknown key 'dtpye' in buffer 'A' (did you mean 'dtype'?)");
    static const struct {
        const char *dtype, *msg;
    } dtypes[] = {
        {"fp32", "unknown dtype 'fp32' (did you mean 'float32'?)"},
        {"FP16", "unknown dtype 'FP16' (did you mean 'float16'?)"},
        {"half", "unknown dtype 'half' (did you mean 'float16'?)"},
        {"bf16", "unknown dtype 'bf16' (did you mean 'bfloat16'?)"},
        {"i32", "unknown dtype 'i32' (did you mean 'int32'?)"},
        {"int", "unknown dtype 'int' (did you mean 'int32'?)"},
        {"u8", "unknown dtype 'u8' (did you mean 'uint8'?)"},
        {"double", "unknown dtype 'double' (did you mean 'float64'?)"},
        {"Float32", "unknown dtype 'Float32' (did you mean 'float32'?)"},
        {"flaot32", "unknown dtype 'flaot32' (did you mean 'float32'?)"},
        {"fp3", "unknown dtype 'fp3' (expected one of: float32, float16, "
                "bfloat16, float64, int8, int16, int32, int64, uint8, "
                "uint16, uint32, uint64, float8_e4m3fn, float8_e5m2, ...)"},
        {"fp8", "unknown dtype 'fp8' (did you mean 'float8_e4m3fn'?)"},
        {"e5m2", "unknown dtype 'e5m2' (did you mean 'float8_e5m2'?)"},
        {"fp4", "unknown dtype 'fp4' (did you mean 'float4_e2m1fn'?)"},
        {"e8m0", "unknown dtype 'e8m0' (did you mean 'float8_e8m0fnu'?)"},
        {"float8_e8m0", "unknown dtype 'float8_e8m0' (did you mean "
                        "'float8_e8m0fnu'?)"},
    };
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "op: sum\ntarget: cuda\nbuffers:\n"
                 "  A: {scope: local, dtype: %s, shape: [4]}\n" HINT_TAIL,
                 dtypes[i].dtype);
        parse_bad(text, TD_ESCHEMA, 4, 28, dtypes[i].msg);
    }
    parse_bad(EW_HEAD "srcs: [A, {value: 1, dtype: bf16}]\n", TD_ESCHEMA, 8,
              29, "srcs[1]: unknown dtype 'bf16' (did you mean 'bfloat16'?)");
    parse_bad("op: sum\ntarget: cuda\nbuffers:\n"
              "  A: {scope: shard, dtype: float32, shape: [4]}\n" HINT_TAIL,
              TD_ESCHEMA, 4, 14,
              "unknown storage scope 'shard' (did you mean 'shared'?)");
    parse_bad("op: sum\ntarget: cuda\nbuffers:\n"
              "  A: {scope: SHARED, dtype: float32, shape: [4]}\n" HINT_TAIL,
              TD_ESCHEMA, 4, 14,
              "unknown storage scope 'SHARED' (did you mean 'shared'?)");
    parse_bad(HINT_BUFS HINT_TAIL "DST: B_local\n", TD_ESCHEMA, 8, 1,
              "unknown key 'DST' (did you mean 'dst'?)");
    parse_bad(HINT_BUFS HINT_TAIL "scope: warp_group\n", TD_ESCHEMA, 8, 8,
              "unknown exec scope 'warp_group' (did you mean 'warpgroup'?)");
    parse_bad(HINT_BUFS HINT_TAIL "scope: CTA\n", TD_ESCHEMA, 8, 8,
              "unknown exec scope 'CTA' (did you mean 'cta'?)");
    parse_bad(HINT_BUFS HINT_TAIL "launch: {threadidx.x: 32}\n", TD_ESCHEMA,
              8, 10,
              "unknown launch tag 'threadidx.x' (did you mean 'threadIdx.x'?)");
    parse_bad(HINT_BUFS HINT_TAIL "launch: {blockDim.x: 32}\n", TD_ESCHEMA, 8,
              10, "unknown launch tag 'blockDim.x' (did you mean 'threadIdx.x'?)");
    parse_bad(HINT_BUFS HINT_TAIL "launch: {gridDim.y: 2}\n", TD_ESCHEMA, 8,
              10, "unknown launch tag 'gridDim.y' (did you mean 'blockIdx.y'?)");
    parse_bad("op: sum\ntarget: cuda\nbuffers:\n"
              "  A: {scope: local, dtype: float32, shape: [4], "
              "layout: \"S[4 : 1@laneId]\"}\n" HINT_TAIL,
              TD_EPARSE, 4, 66,
              "unknown layout axis 'laneId' (did you mean 'laneid'?)");
    parse_bad(HINT_BUFS "dst: B_local\nsrc: A_locl\n", TD_ESCHEMA, 7, 6,
              "unknown buffer 'A_locl' (did you mean 'A_local'?)");
    parse_bad(HINT_BUFS "dst: B_local[0:1]\nsrcs: [A_lcal]\n", TD_ESCHEMA, 7,
              8, "srcs[0]: unknown buffer 'A_lcal' (did you mean 'A_local'?)");
    parse_bad(EW_HEAD "srcs: [A, {scaler: alpha, dtype: float32}]\n",
              TD_ESCHEMA, 8, 12,
              "srcs[1]: unknown key 'scaler' (did you mean 'scalar'?)");
    parse_bad(EW_HEAD "src: A\nextras: {bais: A}\n", TD_ESCHEMA, 9, 10,
              "extras: unknown key 'bais' (did you mean 'bias'?)");
    static const struct {
        const char *arch, *msg;
    } archs[] = {
        {"hopper", "arch 'hopper' has no sm_NN version (did you mean "
                   "'sm_90a'?)"},
        {"H100", "arch 'H100' has no sm_NN version (did you mean 'sm_90a'?)"},
        {"A100", "arch 'A100' has no sm_NN version (did you mean 'sm_80'?)"},
        {"SM_90a", "arch 'SM_90a' has no sm_NN version (did you mean "
                   "'sm_90a'?)"},
        {"sm90", "arch 'sm90' has no sm_NN version (did you mean 'sm_90'?)"},
        {"compute_80", "arch 'compute_80' has no sm_NN version (did you mean "
                       "'sm_80'?)"},
        {"90a", "arch '90a' has no sm_NN version (did you mean 'sm_90a'?)"},
        {"sm_x", "arch 'sm_x' has no sm_NN version (expected sm_NN, e.g. "
                 "sm_80 or sm_90a)"},
    };
    for (size_t i = 0; i < sizeof archs / sizeof *archs; i++) {
        char text[512];
        snprintf(text, sizeof text, "arch: '%s'\n" HINT_BUFS HINT_TAIL,
                 archs[i].arch);
        parse_bad(text, TD_ESCHEMA, 1, 7, archs[i].msg);
    }
#undef HINT_BUFS
#undef HINT_TAIL
}

/* A gemm call (call_gemm.c): D is dst, A, B, C are srcs[0..2] in
 * upstream's order, with their positions; the literals and their
 * defaults; the script in upstream's Tx.gemm form whatever form is asked;
 * the config key's position (the op check points at it). */
static void test_gemm_call(void **state)
{
    (void)state;
    static const char head[] =
        "op: gemm\n"
        "target: cuda\n"
        "scope: warp\n"
        "buffers:\n"
        "  A: {scope: local, dtype: float16, shape: [32, 16]}\n"
        "  B: {scope: local, dtype: float16, shape: [16, 8]}\n"
        "  C: {scope: local, dtype: float32, shape: [16, 8]}\n"
        "  D: {scope: local, dtype: float32, shape: [2, 16, 8]}\n"
        "dst: \"D[1:2, 0:16, 0:8]\"\n";
    char text[1024];
    snprintf(text, sizeof text,
             "%sc: C\nb: B\na: \"A[16:32, 0:16]\"\ntranspose_B: true\n"
             "beta: 1\nconfig: {x: 1}\n",
             head);
    td_call *call = parse_ok(text);
    assert_int_equal(call->nsrcs, 3);
    static const char *const names[3] = {"A", "B", "C"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(call->srcs[i].kind, TD_OPERAND_REGION);
        assert_string_equal(call->buffers[call->srcs[i].region.buffer].name,
                            names[i]);
    }
    assert_int_equal(call->srcs[0].region.start[0], 16);
    assert_int_equal(call->srcs[0].dtype, TD_F16);
    assert_int_equal(call->srcs[2].dtype, TD_F32);
    /* Positions: a at 12:4, b at 11:4, c at 10:4, dst at 9:6. */
    assert_int_equal(call->srcs[0].pos.line, 12);
    assert_int_equal(call->srcs[0].pos.col, 4);
    assert_int_equal(call->srcs[1].pos.line, 11);
    assert_int_equal(call->srcs[2].pos.line, 10);
    assert_int_equal(call->pos_dst.line, 9);
    assert_int_equal(call->pos_dst.col, 6);
    /* src mirrors A, as it mirrors srcs[0] for the other ops. */
    assert_int_equal(call->src.buffer, call->srcs[0].region.buffer);
    assert_false(call->transpose_a);
    assert_true(call->transpose_b);
    assert_int_equal(call->alpha.kind, TD_OPERAND_LITERAL);
    assert_int_equal(call->alpha.dtype, TD_F32);
    assert_true(call->alpha.value == 1.0);
    /* An integer is an int32 literal (TVMScript's constant of a Python
     * int); its value is in both fields. */
    assert_int_equal(call->beta.kind, TD_OPERAND_LITERAL);
    assert_int_equal(call->beta.dtype, TD_I32);
    assert_int_equal(call->beta.ivalue, 1);
    assert_true(call->beta.value == 1.0);
    assert_int_equal(call->beta.pos.line, 14);
    assert_int_equal(call->nconfig, 1);
    assert_int_equal(call->config[0].key_pos.line, 15);
    assert_int_equal(call->config[0].key_pos.col, 10);
    assert_int_equal(call->config[0].pos.col, 13);
    static const char want[] =
        "Tx.warp.gemm(D[1:2, 0:16, 0:8], A[16:32, 0:16], B[0:16, 0:8], "
        "C[0:16, 0:8], False, True, T.float32(1.0), 1, x=1)";
    assert_script(call, want);
    char buf[512];
    td_call_format_script_as(call, TD_SCRIPT_REDUCTION, buf, sizeof buf);
    assert_string_equal(buf, want);
    td_call_free(call);

    /* Defaults: no transposes, alpha 1, beta 0. */
    snprintf(text, sizeof text, "%sa: A\nb: B\nc: C\n", head);
    call = parse_ok(text);
    assert_false(call->transpose_a);
    assert_false(call->transpose_b);
    assert_true(call->alpha.value == 1.0 && call->beta.value == 0.0);
    assert_int_equal(call->alpha.pos.line, 0);
    /* A hand-made change prints as it is: alpha as a named scalar, beta
     * as TVMScript prints a negative zero. */
    call->alpha.kind = TD_OPERAND_SCALAR;
    snprintf(call->alpha.name, sizeof call->alpha.name, "alpha");
    call->beta.value = -0.0;
    assert_script(call, "Tx.warp.gemm(D[1:2, 0:16, 0:8], A[0:32, 0:16], "
                        "B[0:16, 0:8], C[0:16, 0:8], False, False, alpha, "
                        "T.float32(-0.0))");
    td_call_free(call);

    /* Other ops keep alpha and beta empty. */
    call = parse_ok(EW_HEAD "srcs: [A]\n");
    assert_int_equal(call->alpha.kind, TD_OPERAND_NONE);
    assert_int_equal(call->beta.kind, TD_OPERAND_NONE);
    td_call_free(call);
}

static void test_script_forms(void **state)
{
    (void)state;
    td_call *call = parse_ok(EW_HEAD "srcs: [A]\n");
    /* Written as srcs: the operand form, the reduction form on request. */
    assert_script(call, "Tx.add(B[0:4], A[0:4])");
    char buf[256];
    td_call_format_script_as(call, TD_SCRIPT_REDUCTION, buf, sizeof buf);
    assert_string_equal(buf, "Tx.add(B[0:4], A[0:4], axes=[-1], accum=False)");
    td_call_format_script_as(call, TD_SCRIPT_OPERANDS, buf, sizeof buf);
    assert_string_equal(buf, "Tx.add(B[0:4], A[0:4])");
    assert_int_equal(td_call_format_script_as(call, TD_SCRIPT_AUTO, NULL, 0),
                     strlen("Tx.add(B[0:4], A[0:4])"));
    td_call_free(call);

    call = parse_ok(EW_HEAD "src: A\n");
    td_call_format_script_as(call, TD_SCRIPT_OPERANDS, buf, sizeof buf);
    assert_string_equal(buf, "Tx.add(B[0:4], A[0:4])");
    td_call_free(call);

    /* Operands one by one. */
    call = parse_ok(EW_HEAD
                    "srcs: [A, {value: -3, dtype: int64}, {value: 1.5e-7, "
                    "dtype: float64}, {scalar: s_1, dtype: uint8}]\n");
    static const char *const want[] = {"A[0:4]", "T.int64(-3)",
                                       "T.float64(1.5e-07)", "s_1"};
    for (int i = 0; i < 4; i++) {
        size_t n = td_operand_format(call, &call->srcs[i], buf, sizeof buf);
        assert_string_equal(buf, want[i]);
        assert_int_equal(n, strlen(want[i]));
    }
    assert_int_equal(td_operand_format(call, &call->bias, buf, sizeof buf), 4);
    assert_string_equal(buf, "None");
    char tiny[3];
    assert_int_equal(td_operand_format(call, &call->srcs[1], tiny, sizeof tiny),
                     strlen("T.int64(-3)"));
    assert_string_equal(tiny, "T.");
    td_call_free(call);

    /* A call built by hand with only call->src (as before srcs): the
     * reduction form, from src. */
    td_call hb;
    memset(&hb, 0, sizeof hb);
    strcpy(hb.op, "sum");
    hb.nbuffers = 2;
    strcpy(hb.buffers[0].name, "A");
    strcpy(hb.buffers[1].name, "B");
    hb.buffers[0].ndim = hb.buffers[1].ndim = 1;
    hb.buffers[0].shape[0] = 4;
    hb.buffers[1].shape[0] = 1;
    hb.src.buffer = 0;
    hb.src.ndim = 1;
    hb.src.extent[0] = 4;
    hb.dst.buffer = 1;
    hb.dst.ndim = 1;
    hb.dst.extent[0] = 1;
    hb.naxes = 1;
    hb.axes[0] = -1;
    assert_script(&hb, "Tx.sum(B[0:1], A[0:4], axes=[-1], accum=False)");
    /* Out-of-range counts are clamped, not trusted. */
    hb.nsrcs = 99;
    hb.naxes = -5;
    td_call_format_script(&hb, buf, sizeof buf);
    hb.nsrcs = -1;
    td_call_format_script(&hb, buf, sizeof buf);
}

/* ---- bad files ---------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of dir's .yaml files (at most max, sorted, each to be freed),
 * or -1 when dir cannot be read. */
static int yaml_files(const char *dir, char **names, int max)
{
    DIR *dp = opendir(dir);
    if (dp == NULL) {
        print_error("%s: cannot open\n", dir);
        return -1;
    }
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL && n < max) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    return n;
}

/*
 * Loads every .yaml file of tests/call/data/bad and compares the error with the
 * file's `# expect:` and `# code:` lines.  Returns the number of files that
 * did not fail as expected (-1 when the directory cannot be read); with
 * `print`, also prints what the loader says for each file.
 */
static int check_bad_files(bool print)
{
    const char *dir = TD_CALL_DATA "/bad";
    char *names[256];
    int n = yaml_files(dir, names, 256);
    if (n < 0)
        return -1;
    int failures = 0;
    if (n < 22) {
        print_error("%s: %d bad files, expected at least 22\n", dir, n);
        failures++;
    }
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "r");
        char l1[512] = "", l2[512] = "";
        if (f == NULL || fgets(l1, sizeof l1, f) == NULL ||
            fgets(l2, sizeof l2, f) == NULL)
            l1[0] = '\0';
        if (f != NULL)
            fclose(f);
        l1[strcspn(l1, "\n")] = '\0';
        l2[strcspn(l2, "\n")] = '\0';

        td_call *call = (td_call *)1;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_call_load_file(path, &call, &d);
        if (print)
            printf("%-28s %s %d:%d: %s\n    %s\n", names[i], td_err_name(rc),
                   d.line, d.col, d.msg, d.source_line);
        int line = 0, col = 0, off = 0;
        char code[64] = "";
        bool ok = sscanf(l1, "# expect: %d:%d: %n", &line, &col, &off) == 2 &&
                  off > 0 && sscanf(l2, "# code: %63s", code) == 1;
        const char *want = ok ? l1 + off : "";
        if (!ok || rc >= 0 || call != NULL || d.line != line ||
            d.col != col || strstr(d.msg, want) == NULL ||
            strcmp(td_err_name(rc), code) != 0 ||
            strcmp(d.file, path) != 0 || d.source_line[0] == '\0') {
            print_error("%s: want %s %d:%d: %s\n      got %s %d:%d: %s\n",
                        names[i], code, line, col, want, td_err_name(rc),
                        d.line, d.col, d.msg);
            failures++;
        }
        if (rc >= 0)
            td_call_free(call); /* loaded although it should not have */
        free(names[i]);
    }
    return failures;
}

static void test_bad_files(void **state)
{
    (void)state;
    assert_int_equal(check_bad_files(false), 0);
}


/*
 * Loads every .yaml file of tests/call/data/good and compares
 * td_call_format_script with the file's `# script:` line.  Returns the
 * number of files that did not (-1 when the directory cannot be read).
 */
static int check_good_files(bool print)
{
    const char *dir = TD_CALL_DATA "/good";
    char *names[256];
    int n = yaml_files(dir, names, 256);
    if (n < 0)
        return -1;
    int failures = n < 10;
    if (n < 10)
        print_error("%s: %d good files, expected at least 10\n", dir, n);
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "r");
        char l1[512] = "";
        if (f == NULL || fgets(l1, sizeof l1, f) == NULL)
            l1[0] = '\0';
        if (f != NULL)
            fclose(f);
        l1[strcspn(l1, "\n")] = '\0';
        const char *want = strncmp(l1, "# script: ", 10) == 0 ? l1 + 10 : "";
        td_call *call = NULL;
        td_diag d;
        td_diag_clear(&d);
        int rc = td_call_load_file(path, &call, &d);
        char got[512] = "";
        if (rc == 0)
            td_call_format_script(call, got, sizeof got);
        if (print)
            printf("%-28s %s\n", names[i],
                   rc == 0 ? got : d.msg);
        if (rc != 0 || want[0] == '\0' || strcmp(got, want) != 0) {
            print_error("%s: want %s\n      got %s\n", names[i], want,
                        rc == 0 ? got : d.msg);
            failures++;
        }
        td_call_free(call);
        free(names[i]);
    }
    return failures;
}

/* The variant-name grammar: parts of letters, digits and '_' joined by
 * '->' or '<->'; every other spelling is refused. */
static void test_variant_names(void **state)
{
    (void)state;
    const char *ok[] = {"ldgsts", "vec_128b", "smem->tmem", "tmem<->local",
                        "a->b<->c", "2d", "_x", "mma.m16n8k*", "a.b",
                        "a.b.c", "x*", "a.b*->c*"};
    const char *bad[] = {"",      "->",     "a->",     "->a",  "a-b",
                         "a<-b",  "a-->b",  "a<->->b", "a b",  "a.",
                         "a<>b",  "a->>b",  "a<-->b",  "tmem<->", ".a",
                         "a..b",  "*",      "a*b",     "a**",  "a.*",
                         "*a",    "a*.b",   "a.b*.c",  NULL};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!td_variant_name_ok(ok[i]))
            fail_msg("'%s' refused", ok[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad - 1; i++)
        if (td_variant_name_ok(bad[i]))
            fail_msg("'%s' accepted", bad[i]);
    assert_false(td_variant_name_ok(NULL));
    /* A name must fit a call's dispatch field with its NUL. */
    char over[TD_NAME_MAX + 1];
    memset(over, 'a', TD_NAME_MAX);
    over[TD_NAME_MAX] = '\0';
    assert_false(td_variant_name_ok(over));
    assert_true(td_variant_name_ok(over + 1));
}

static void test_good_files(void **state)
{
    (void)state;
    assert_int_equal(check_good_files(false), 0);
}

/* ---- allocation failures ------------------------------------------------ */

static void test_alloc_failures(void **state)
{
    (void)state;
    const char *text =
        "op: sum\ntarget: cuda\nlaunch: {threadIdx.x: 32}\n"
        "buffers:\n"
        "  A: {scope: local, dtype: float32, shape: [128], layout: "
        "\"S[(32, 4) : (1@laneid, 1)]\"}\n"
        "  B: {scope: local, dtype: float32, shape: [4]}\n"
        "dst: B\nsrcs: [\"A[0:4]\", 1.5, {scalar: s, dtype: float32}]\n"
        "extras: {bias: {value: 2, dtype: int8},\n"
        "         scale: {scalar: s, dtype: float32}}\n"
        "axes: [0]\nconfig: {a: [1, 2]}\n";
    alloc_install();
    int rc = -1;
    long fail_at;
    for (fail_at = 1; fail_at < 10000; fail_at++) {
        alloc_arm(fail_at);
        g_ca.live = 0;
        td_call *call = NULL;
        td_diag d;
        td_diag_clear(&d);
        rc = td_call_parse("t", text, strlen(text), &call, &d);
        /* The text is invalid on purpose (config value a list), so the
         * walk goes through every stage; an injected failure must show up
         * as TD_ENOMEM, the real end as TD_ESCHEMA. */
        assert_null(call);
        assert_int_equal(g_ca.live, 0);
        if (rc != TD_ENOMEM)
            break;
    }
    td_set_allocator(NULL);
    assert_int_equal(rc, TD_ESCHEMA);
    assert_true(fail_at > 5);
}

int main(int argc, char **argv)
{
    /* --print: what the loader says for each bad file, checked as the
     * test checks it (exit 1 when one does not fail as expected). */
    if (argc > 1 && strcmp(argv[1], "--print") == 0) {
        int bad = check_bad_files(true);
        int good = check_good_files(true);
        return bad == 0 && good == 0 ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_launch_config_dispatch),
        cmocka_unit_test(test_launch_cluster),
        cmocka_unit_test(test_layouts_in_calls),
        cmocka_unit_test(test_axes_helper),
        cmocka_unit_test(test_inline_errors),
        cmocka_unit_test(test_tmem_datapaths),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_operands),
        cmocka_unit_test(test_operand_errors),
        cmocka_unit_test(test_unknown_name_hints),
        cmocka_unit_test(test_dtype_table),
        cmocka_unit_test(test_script_forms),
        cmocka_unit_test(test_gemm_call),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_good_files),
        cmocka_unit_test(test_variant_names),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
