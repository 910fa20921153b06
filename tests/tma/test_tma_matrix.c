/*
 * tma_auto's plan from a call's operands (variants/copy_async_tma_plan.c)
 * against TVM's 52-case TMA matrix (upstream test_tma.py's TMA_CASES) as
 * the apache-tvm 0.27 wheel answers it: tests/upstream/data/tma_matrix.tsv,
 * written by tests/upstream/tma_matrix.py, one row per case with its
 * inputs (shapes, TileLayouts as TVM prints them, regions, config) and
 * TVM's encoded map or its error.  Every row's layouts go through our
 * layout parser and the plan; an accepted map must equal TVM's field by
 * field, a refusal must carry TVM's message exactly.
 *
 * Rows where tiledispatch deliberately differs (a deviation of
 * design/copy_async/plan.md section 4) are listed in `deviations` with our
 * message, which the plan must give instead of TVM's answer.
 *
 * Rows the plan does not match yet are listed in `pending` with the step
 * that is to plan them; the test counts them, prints them, and fails when
 * a listed row starts to agree (so the list stays true) or an unlisted row
 * disagrees.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "copy_async_tma_plan.h"
#include "layout.h"
#include "td_internal.h"

/* Rows the plan is not expected to match yet, with the step due to plan
 * them.  Empty when every row agrees. */
static const struct {
    const char *id;
    const char *why;
} pending[] = {
    {NULL, NULL},
};

/* Rows where tiledispatch deliberately answers otherwise than TVM
 * (design/copy_async/plan.md section 4): the deviation and our message. */
static const struct {
    const char *id;
    const char *deviation;
    const char *message;
} deviations[] = {
    {"derived-a6-f32-swizzle-333", "A6",
     "shared swizzle ComposeLayout(3, 3, 3) moves 32-byte chunks; TMA "
     "swizzles 16-byte chunks"},
};

enum {
    C_ID, C_VARIANT, C_DIR, C_DTYPE, C_SDTYPE, C_GSHAPE, C_GLAYOUT, C_GREGION,
    C_GOFF, C_SSHAPE, C_SLAYOUT, C_SREGION, C_SOFF, C_CONFIG, C_ARCH,
    C_RESULT, C_DESC, C_DIMS, C_STRIDES, C_BOXES, C_ESTRIDES, C_COORDS,
    C_ENUMS, C_ISSUE, C_SMEM_START, C_NTMA, C_NISSUE, C_BASE, C_SMEM_OFFSET,
    C_SAMPLES, C_COUNT
};

static const char *matrix_path, *lowering_path;

typedef struct counts {
    int rows, agree, auto_agree, explicit_agree, pending_fail, bad;
} counts;

static int split_tabs(char *line, char **cols, int cap)
{
    int n = 0;
    char *p = line;
    while (n < cap) {
        cols[n++] = p;
        char *t = strchr(p, '\t');
        if (t == NULL)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

/* "a,b,c" into v; returns the count (-1 on a malformed list). */
static int ints(const char *s, int64_t *v, int cap)
{
    int n = 0;
    while (*s != '\0' && n < cap) {
        char *end;
        v[n++] = strtoll(s, &end, 10);
        if (end == s)
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* "s:e,s:e" into starts and extents. */
static int region(const char *s, int64_t *start, int64_t *extent, int cap)
{
    int n = 0;
    while (*s != '\0' && n < cap) {
        char *end;
        start[n] = strtoll(s, &end, 10);
        if (*end != ':')
            return -1;
        extent[n++] = strtoll(end + 1, &end, 10);
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static int side(td_copy_side *out, const char *name, const char *scope,
                const char *dtype, const char *shape_s, const char *layout_s,
                const char *region_s)
{
    int64_t shape[TD_MAX_RANK], start[TD_MAX_RANK], extent[TD_MAX_RANK];
    td_dtype dt;
    td_layout l;
    td_diag d = {0};
    int n = ints(shape_s, shape, TD_MAX_RANK);
    if (n < 1 || region(region_s, start, extent, TD_MAX_RANK) != n ||
        td_dtype_parse(dtype, &dt) != 0)
        return -1;
    /* TVM prints a plain layout as T.TileLayout(X); the notation is X (a
     * ComposeLayout keeps its TileLayout inside, which the parser reads). */
    char text[512];
    const char *wrap = "T.TileLayout(";
    size_t len = strlen(layout_s), wl = strlen(wrap);
    if (strncmp(layout_s, wrap, wl) == 0 && len > wl &&
        len - wl < sizeof text && layout_s[len - 1] == ')') {
        memcpy(text, layout_s + wl, len - wl - 1);
        text[len - wl - 1] = '\0';
        layout_s = text;
    }
    if (td_layout_parse(layout_s, &l, &d) != 0) {
        fprintf(stderr, "layout %s: %s\n", layout_s, d.msg);
        return -1;
    }
    /* TVM's oob cases read a box that runs past the global tensor (TMA
     * fills the rest); td__copy_side_init refuses such a region, so the
     * side is made with the region at 0 and the real one set after. */
    int past = 0;
    for (int i = 0; i < n; i++)
        past |= start[i] + extent[i] > shape[i];
    if (!past)
        return td__copy_side_init(out, name, scope, dt, n, shape, start,
                                  extent, &l, NULL);
    if (td__copy_side_init(out, name, scope, dt, n, shape, NULL, NULL, &l,
                           NULL) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        out->start[i] = start[i];
        out->extent[i] = extent[i];
    }
    return 0;
}

static void fmt_ints(char *buf, size_t cap, const int64_t *v, int n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? "," : "",
                              v[i]);
}

/* Compares one field; writes the first difference into why. */
static int same(const char *field, const char *want, const char *got,
                char *why, size_t cap)
{
    if (strcmp(want, got) == 0)
        return 1;
    /* A long difference is cut short: the field names it anyway. */
    if (why[0] == '\0' &&
        snprintf(why, cap, "%s: TVM %s, ours %s", field, want, got) < 0)
        why[0] = '\0';
    return 0;
}

/* Runs one row; returns 1 when the plan agrees with TVM. */
static int run_row(char **c, char *why, size_t cap)
{
    td_tma_plan_in in;
    td_tma_plan plan;
    td_diag d = {0};
    char buf[256];
    int s2g = strcmp(c[C_DIR], "s2g") == 0;

    td__tma_plan_in_init(&in);
    if (side(&in.global, "A", "global", c[C_DTYPE], c[C_GSHAPE], c[C_GLAYOUT],
             c[C_GREGION]) != 0 ||
        side(&in.shared, "A_smem", "shared.dyn", c[C_SDTYPE], c[C_SSHAPE],
             c[C_SLAYOUT], c[C_SREGION]) != 0) {
        snprintf(why, cap, "the row's operands do not load");
        return 0;
    }
    in.g_elem_offset = strtoll(c[C_GOFF], NULL, 10);
    in.direction = s2g ? TD_TMAP_S2G : TD_TMAP_G2S;
    in.has_mbar = !s2g;
    in.explicit_map = strcmp(c[C_VARIANT], "tma_explicit") == 0;
    char oob[32] = "";
    const char *o = strstr(c[C_CONFIG], "oob=");
    if (o != NULL) {
        snprintf(oob, sizeof oob, "%s", o + 4);
        oob[strcspn(oob, ";")] = '\0';
        in.oob = oob;
    }
    if (strncmp(c[C_ARCH], "sm_", 3) == 0)
        in.sm = atoi(c[C_ARCH] + 3);

    int rc = td__tma_plan(&in, &plan, &d);
    for (size_t i = 0; i < sizeof deviations / sizeof deviations[0]; i++)
        if (strcmp(deviations[i].id, c[C_ID]) == 0) {
            if (rc == 0) {
                snprintf(why, cap, "deviation %s: ours plans",
                         deviations[i].deviation);
                return 0;
            }
            return same(deviations[i].deviation, deviations[i].message,
                        d.msg, why, cap);
        }
    if (strcmp(c[C_RESULT], "error") == 0) {
        if (rc == 0) {
            snprintf(why, cap, "TVM refuses (%s), ours plans", c[C_DESC]);
            return 0;
        }
        return same("error", c[C_DESC], d.msg, why, cap);
    }
    if (rc != 0) {
        snprintf(why, cap, "TVM plans, ours refuses: %s", d.msg);
        return 0;
    }
    const td_tmap *m = &plan.map;
    int ok = same("dtype", c[C_DESC], m->dtype, why, cap);
    fmt_ints(buf, sizeof buf, m->global_dims, m->rank);
    ok &= same("dims", c[C_DIMS], buf, why, cap);
    fmt_ints(buf, sizeof buf, m->global_strides, m->nglobal_strides);
    ok &= same("strides", c[C_STRIDES], buf, why, cap);
    fmt_ints(buf, sizeof buf, m->box_dims, m->rank);
    ok &= same("boxes", c[C_BOXES], buf, why, cap);
    fmt_ints(buf, sizeof buf, m->element_strides, m->rank);
    ok &= same("element strides", c[C_ESTRIDES], buf, why, cap);
    fmt_ints(buf, sizeof buf, m->coordinates, m->ncoordinates);
    ok &= same("coordinates", c[C_COORDS], buf, why, cap);
    int64_t enums[4] = {m->interleave, m->swizzle, m->l2_promotion,
                        m->oob_fill};
    fmt_ints(buf, sizeof buf, enums, 4);
    ok &= same("enums", c[C_ENUMS], buf, why, cap);
    /* Issue axes, innermost first in both. */
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < m->nissue && k < sizeof buf; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k,
                              "%s%" PRId64 "/%" PRId64 "@%d", k ? "," : "",
                              m->issue[i].extent, m->issue[i].smem_stride,
                              m->issue[i].dim);
    ok &= same("issue axes", c[C_ISSUE], m->nissue ? buf : "-", why, cap);
    /* TVM prints one TMA instruction, in a loop when there are issue
     * axes; the count of issues is the product of their extents. */
    snprintf(buf, sizeof buf, "%d", 1);
    ok &= same("TMA instructions", c[C_NTMA], buf, why, cap);
    snprintf(buf, sizeof buf, "%" PRId64, plan.n_issue);
    ok &= same("issues", c[C_NISSUE], buf, why, cap);
    snprintf(buf, sizeof buf, "%" PRId64, m->base_byte_offset);
    ok &= same("base byte offset", c[C_BASE], buf, why, cap);
    snprintf(buf, sizeof buf, "%" PRId64, plan.smem_offset);
    ok &= same("shared offset", c[C_SMEM_OFFSET], buf, why, cap);
    /* The sampled issues: i:offset:coords, as TVM's offsets_and_coords. */
    char samples[512] = "", one[160], cs[128];
    const char *p = c[C_SAMPLES];
    while (*p != '\0') {
        int64_t i = strtoll(p, NULL, 10), coords[TD_TMAP_MAX_DIMS], off = 0;
        if (td__tma_plan_issue(&plan, i, coords, &off) != 0) {
            snprintf(samples, sizeof samples, "issue %" PRId64 " out of range",
                     i);
            break;
        }
        fmt_ints(cs, sizeof cs, coords, m->rank);
        snprintf(one, sizeof one, "%s%" PRId64 ":%" PRId64 ":%s",
                 samples[0] ? " " : "", i, off, cs);
        strncat(samples, one, sizeof samples - strlen(samples) - 1);
        p = strchr(p, ' ');
        if (p == NULL)
            break;
        p++;
    }
    ok &= same("issue samples", c[C_SAMPLES], samples, why, cap);
    return ok;
}

static const char *pending_why(const char *id)
{
    for (size_t i = 0; i < sizeof pending / sizeof pending[0]; i++)
        if (pending[i].id != NULL && strcmp(pending[i].id, id) == 0)
            return pending[i].why;
    return NULL;
}

static void run_all(const char *tsv_path, counts *n)
{
    FILE *f = fopen(tsv_path, "r");
    assert_non_null(f);
    char line[4096];
    memset(n, 0, sizeof *n);
    int header = 1;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (header) {
            header = 0;
            continue;
        }
        char *c[C_COUNT + 1];
        int nc = split_tabs(line, c, C_COUNT + 1);
        if (nc != C_COUNT) {
            fprintf(stderr, "%s: a row with %d columns\n", tsv_path, nc);
            n->bad++;
            continue;
        }
        n->rows++;
        char why[600] = "";
        int ok = run_row(c, why, sizeof why);
        const char *due = pending_why(c[C_ID]);
        if (ok) {
            n->agree++;
            if (strcmp(c[C_VARIANT], "tma_explicit") == 0)
                n->explicit_agree++;
            else
                n->auto_agree++;
            if (due != NULL) {
                fprintf(stderr, "%s: agrees but is listed as pending (%s); "
                        "take it off the list\n", c[C_ID], due);
                n->bad++;
            }
        } else if (due != NULL) {
            n->pending_fail++;
            printf("pending %s (%s): %s\n", c[C_ID], due, why);
        } else {
            fprintf(stderr, "%s: %s\n", c[C_ID], why);
            n->bad++;
        }
    }
    fclose(f);
    printf("%s: %d rows, %d agree (tma_auto %d, tma_explicit %d), "
           "%d pending, %d unexplained\n",
           tsv_path, n->rows, n->agree, n->auto_agree, n->explicit_agree,
           n->pending_fail, n->bad);
}

static void test_matrix(void **state)
{
    (void)state;
    counts n;
    run_all(matrix_path, &n);
    assert_int_equal(n.rows, 52);
    assert_int_equal(n.bad, 0);
    assert_int_equal(n.agree + n.pending_fail, n.rows);
}

/* The static cases of TVM's tma_auto lowering tests (canonicalisation,
 * promotion, the issue loop, the chain and division refusals). */
static void test_lowering(void **state)
{
    (void)state;
    counts n;
    run_all(lowering_path, &n);
    assert_true(n.rows > 0);
    assert_int_equal(n.bad, 0);
    assert_int_equal(n.agree + n.pending_fail, n.rows);
}

/* The input from a loaded call: a store from a swizzled shared tile. */
static void test_from_call(void **state)
{
    static const char text[] =
        "op: copy_async\n"
        "target: cuda\n"
        "arch: sm_90a\n"
        "scope: thread\n"
        "buffers:\n"
        "  A: {scope: global, dtype: float16, shape: [3, 8, 256]}\n"
        "  S: {scope: shared.dyn, dtype: float16, shape: [8, 256],\n"
        "      layout: \"ComposeLayout(3, 3, 3, TileLayout(S[(8, 4, 64) : "
        "(64, 512, 1)]))\"}\n"
        "dst: \"A[1:2, 0:8, 0:256]\"\n"
        "src: \"S[0:8, 0:256]\"\n";
    td_call *call = NULL;
    td_diag d = {0};
    td_tma_plan_in in;
    td_tma_plan plan;

    (void)state;
    if (td_call_parse("t.yaml", text, sizeof text - 1, &call, &d) != 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    assert_int_equal(td__tma_plan_in_from_call(call, &in, &d), 0);
    assert_int_equal(in.direction, TD_TMAP_S2G);
    assert_int_equal(in.has_mbar, 0);
    assert_int_equal(in.sm, 90);
    assert_string_equal(in.global.name, "A");
    assert_int_equal(td__tma_plan(&in, &plan, &d), 0);
    /* TVM's s2g-multiphase-3x8x256 map, at phase 1. */
    static const int64_t dims[] = {64, 8, 4, 3}, box[] = {64, 8, 4, 1},
                         coords[] = {0, 0, 0, 1};
    assert_int_equal(plan.map.rank, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(plan.map.global_dims[i], dims[i]);
        assert_int_equal(plan.map.box_dims[i], box[i]);
        assert_int_equal(plan.map.coordinates[i], coords[i]);
    }
    assert_int_equal(plan.map.swizzle, TD_TMAP_SWIZZLE_128B);
    td_call_free(call);
}

/* A few refusals of the module's own stages (no TVM row reaches them). */
static void test_own_stages(void **state)
{
    (void)state;
    td_tma_plan_in in;
    td_tma_plan plan;
    td_diag d = {0};
    int64_t gshape[2] = {64, 64}, sshape[2] = {64, 64};
    td_layout gl, sl;
    td__tma_plan_in_init(&in);
    assert_int_equal(td_layout_parse("S[(64, 64):(64, 1)]", &gl, &d), 0);
    assert_int_equal(td_layout_parse("S[(64, 64):(64, 1)]", &sl, &d), 0);
    assert_int_equal(td__copy_side_init(&in.global, "A", "global", TD_F16, 2,
                                        gshape, NULL, NULL, &gl, NULL), 0);
    assert_int_equal(td__copy_side_init(&in.shared, "S", "shared", TD_F32, 2,
                                        sshape, NULL, NULL, &sl, NULL), 0);
    assert_int_equal(td__tma_plan(&in, &plan, &d), TD_EINVAL);
    assert_string_equal(d.msg,
                        "tma_auto stage=dtype: shared dtype=float32 and global "
                        "dtype=float16 differ; use dispatch=\"tma_explicit\" "
                        "when the mapping or hardware legality is only known "
                        "at runtime");

    /* The same tile copied whole: one box of 64 x 64, no issue loop. */
    in.shared.dtype = TD_F16;
    memset(&d, 0, sizeof d);
    assert_int_equal(td__tma_plan(&in, &plan, &d), 0);
    assert_int_equal(plan.map.rank, 2);
    assert_int_equal(plan.map.box_dims[0], 64);
    assert_int_equal(plan.map.box_dims[1], 64);
    assert_int_equal(plan.n_issue, 1);
    assert_int_equal(plan.smem_offset, 0);

    /* A shared slice that starts 8 bytes in breaks the 16-byte alignment. */
    int64_t start[2] = {0, 4}, extent[2] = {64, 32};
    assert_int_equal(td__copy_side_init(&in.shared, "S", "shared", TD_F16, 2,
                                        sshape, start, extent, &sl, NULL), 0);
    int64_t gext[2] = {64, 32};
    assert_int_equal(td__copy_side_init(&in.global, "A", "global", TD_F16, 2,
                                        gshape, NULL, gext, &gl, NULL), 0);
    memset(&d, 0, sizeof d);
    assert_int_equal(td__tma_plan(&in, &plan, &d), TD_EINVAL);
    assert_non_null(strstr(d.msg, "tma_auto stage=shared-pointer: shared "
                                  "slice offset=8B must preserve 16B "
                                  "alignment"));
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s tma_matrix.tsv tma_lowering.tsv\n",
                argv[0]);
        return 2;
    }
    matrix_path = argv[1];
    lowering_path = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix),
        cmocka_unit_test(test_lowering),
        cmocka_unit_test(test_from_call),
        cmocka_unit_test(test_own_stages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
