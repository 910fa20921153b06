/*
 * Unit tests of the call file loader.  Bad call files live in data/bad/,
 * each starting with
 *   # expect: LINE:COL: MESSAGE SUBSTRING
 *   # code: TD_E...
 * and the test walks the directory.  Run with --print to see what the loader
 * says about each bad file (for writing new cases); that mode checks the
 * files too and exits 1 when one does not fail as expected (test call-print).
 */
#include <dirent.h>
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
              TD_EPARSE, 8, 19, "unknown layout axis 'lane'");
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

/* ---- bad files ---------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
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
    DIR *dp = opendir(dir);
    if (dp == NULL) {
        print_error("%s: cannot open\n", dir);
        return -1;
    }
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL && n < 256) {
        size_t len = strlen(de->d_name);
        if (len > 5 && strcmp(de->d_name + len - 5, ".yaml") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
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
        "dst: B\nsrc: A\naxes: [0]\nconfig: {a: [1, 2]}\n";
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
    if (argc > 1 && strcmp(argv[1], "--print") == 0)
        return check_bad_files(true) == 0 ? 0 : 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_launch_config_dispatch),
        cmocka_unit_test(test_layouts_in_calls),
        cmocka_unit_test(test_axes_helper),
        cmocka_unit_test(test_inline_errors),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
