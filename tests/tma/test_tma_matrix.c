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

static const char *matrix_path, *lowering_path, *random_path;

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

/* The element offset a layout gives the row-major index idx of shape
 * (as TVM's apply: the outermost iterator takes the rest unreduced). */
static int64_t layout_offset(const td_layout *l, const int64_t *shape,
                             int n, const int64_t *idx)
{
    int64_t flat = 0, off = l->offset[TD_AXIS_M];
    for (int i = 0; i < n; i++)
        flat = flat * shape[i] + idx[i];
    for (int i = l->nshard - 1; i >= 0; i--) {
        int64_t c = i > 0 ? flat % l->shard[i].extent : flat;
        flat /= l->shard[i].extent;
        off += c * l->shard[i].stride;
    }
    return off;
}

/* The region's flat index f as indices of the side's buffer. */
static void region_index(const td_copy_side *s, int64_t f, int64_t *idx)
{
    for (int i = s->ndim - 1; i >= 0; i--) {
        idx[i] = s->start[i] + f % s->extent[i];
        f /= s->extent[i];
    }
}

/*
 * What the plan's instructions move, byte by byte, against what the two
 * layouts say: the copy pairs the regions' elements in row-major order;
 * each issue's box lands in shared memory contiguously (dimension 0
 * fastest) from the slice's offset plus the issue's, and reads global
 * memory at the map's base plus coordinates times byte strides.  Every
 * shared byte of the region must be written once, from the global byte
 * the layouts pair it with.  Swizzles are the hardware's on both sides of
 * that statement, so the tiles are compared without them.  Returns 1 when
 * the moves are right (or the copy is too large to check here).
 */
static int check_moves(const td_tma_plan_in *in, const td_tma_plan *plan,
                       char *why, size_t cap)
{
    const td_copy_side *g = &in->global, *s = &in->shared;
    const td_tmap *m = &plan->map;
    int64_t ebytes = td_dtype_bits(g->dtype) / 8, n = 1, sbytes = 1;
    for (int i = 0; i < g->ndim; i++) {
        n *= g->extent[i];
        if (g->start[i] + g->extent[i] > g->shape[i])
            return 1; /* a box past the tensor: filled, not read */
    }
    for (int i = 0; i < s->ndim; i++)
        sbytes *= s->shape[i];
    sbytes *= ebytes;
    if (ebytes < 1 || sbytes > (INT64_C(1) << 24) || n > (INT64_C(1) << 20))
        return 1;
    int64_t *want = malloc((size_t)sbytes * sizeof *want);
    unsigned char *seen = calloc((size_t)sbytes, 1);
    int ok = want != NULL && seen != NULL;
    for (int64_t b = 0; ok && b < sbytes; b++)
        want[b] = -1;
    int64_t gi[TD_MAX_RANK], si[TD_MAX_RANK];
    for (int64_t f = 0; ok && f < n; f++) {
        region_index(g, f, gi);
        region_index(s, f, si);
        int64_t go = (in->g_elem_offset +
                      layout_offset(&g->tile, g->shape, g->ndim, gi)) * ebytes;
        int64_t so = layout_offset(&s->tile, s->shape, s->ndim, si) * ebytes;
        for (int64_t j = 0; j < ebytes; j++) {
            if (so + j < 0 || so + j >= sbytes) {
                snprintf(why, cap, "the shared layout leaves the buffer");
                ok = 0;
                break;
            }
            want[so + j] = go + j;
        }
    }
    int64_t dbytes = m->bits / 8, box = 1;
    for (int k = 0; k < m->rank; k++)
        box *= m->box_dims[k];
    for (int64_t i = 0; ok && i < plan->n_issue; i++) {
        int64_t c[TD_TMAP_MAX_DIMS], off;
        if (td__tma_plan_issue(plan, i, c, &off) != 0) {
            snprintf(why, cap, "issue %" PRId64 " has no coordinates", i);
            ok = 0;
            break;
        }
        for (int64_t e = 0; ok && e < box; e++) {
            int64_t rest = e, ga = m->base_byte_offset;
            for (int k = 0; k < m->rank; k++) {
                int64_t bk = rest % m->box_dims[k];
                rest /= m->box_dims[k];
                ga += (c[k] + bk) * (k == 0 ? dbytes : m->global_strides[k - 1]);
            }
            int64_t sa = (plan->smem_offset + off) * ebytes + e * dbytes;
            for (int64_t j = 0; j < dbytes; j++) {
                int64_t b = sa + j;
                if (b < 0 || b >= sbytes || want[b] != ga + j || seen[b]) {
                    snprintf(why, cap,
                             "issue %" PRId64 " box element %" PRId64
                             ": shared byte %" PRId64 " gets global byte %"
                             PRId64 ", the layouts say %" PRId64 "%s",
                             i, e, b, ga + j,
                             b >= 0 && b < sbytes ? want[b] : -1,
                             b >= 0 && b < sbytes && seen[b] ? " (twice)" : "");
                    ok = 0;
                    break;
                }
                seen[b] = 1;
            }
        }
    }
    for (int64_t b = 0; ok && b < sbytes; b++)
        if (want[b] >= 0 && !seen[b]) {
            snprintf(why, cap, "shared byte %" PRId64 " of the region is "
                     "never written", b);
            ok = 0;
        }
    free(want);
    free(seen);
    return ok;
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
    if (strcmp(c[C_NTMA], "-") != 0) /* '-': the row was not lowered */
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
    if (ok)
        ok = check_moves(&in, &plan, why, cap);
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

/* 450 random copies (150 into swizzled tiles) drawn by the generator with
 * fixed seeds and planned by the wheel: the same acceptance, maps and
 * messages. */
static void test_random_rows(void **state)
{
    (void)state;
    counts n;
    run_all(random_path, &n);
    assert_int_equal(n.rows, 450);
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

    /* Not global <-> shared: TVM's predicate text. */
    static const char s2s[] =
        "op: copy_async\n"
        "target: cuda\n"
        "arch: sm_90a\n"
        "scope: thread\n"
        "buffers:\n"
        "  S: {scope: shared, dtype: float16, shape: [64]}\n"
        "  T: {scope: shared.dyn, dtype: float16, shape: [64]}\n"
        "dst: T\n"
        "src: S\n";
    call = NULL;
    memset(&d, 0, sizeof d);
    if (td_call_parse("t.yaml", s2s, sizeof s2s - 1, &call, &d) != 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    assert_int_equal(td__tma_plan_in_from_call(call, &in, &d), TD_EINVAL);
    assert_string_equal(d.msg, "not a global<->shared TMA copy");
    td_call_free(call);

    /* A block-dependent start: taken, its non-constant part kept apart
     * (the gcd of its coefficients and its text); the plan's row
     * coordinate is that part, the constant one 0. */
    static const char tiled[] =
        "op: copy_async\n"
        "target: cuda\n"
        "arch: sm_90a\n"
        "scope: thread\n"
        "launch: {blockIdx.x: 4}\n"
        "buffers:\n"
        "  A: {scope: global, dtype: float16, shape: [256, 64]}\n"
        "  S: {scope: shared.dyn, dtype: float16, shape: [64, 64]}\n"
        "dst: S\n"
        "src: \"A[bx * 64:bx * 64 + 64, :]\"\n";
    call = NULL;
    memset(&d, 0, sizeof d);
    if (td_call_parse("t.yaml", tiled, sizeof tiled - 1, &call, &d) != 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    assert_int_equal(td__tma_plan_in_from_call(call, &in, &d), 0);
    assert_int_equal(in.g_start_align[0], 64);
    assert_int_equal(in.g_start_align[1], 0);
    assert_string_equal(in.g_start_text[0], "blockIdx.x * 64");
    in.has_mbar = 1; /* the call names none; a load needs one */
    if (td__tma_plan(&in, &plan, &d) != 0)
        fail_msg("%s", d.msg);
    assert_true(plan.dynamic);
    assert_int_equal(plan.map.rank, 2);
    assert_int_equal(plan.map.coordinates[1], 0);
    assert_int_equal(plan.map.coord_src[1], 1);
    assert_int_equal(plan.map.coord_mul[1], 1);
    assert_int_equal(plan.map.coord_div[1], 1);
    assert_int_equal(plan.map.coord_src[0], 0);
    assert_int_equal(plan.view_dim[0], 0);
    assert_int_equal(plan.view_div[0], 1);
    td_call_free(call);
}

/* A compact layout of shape whose dimensions lie in memory in the order
 * perm (perm[0] outermost), each stride padded by pad elements at the
 * second-innermost dimension. */
static void strided_layout(td_layout *l, const int64_t *shape, int n,
                           const int *perm, int64_t pad)
{
    memset(l, 0, sizeof *l);
    l->nshard = n;
    int64_t stride = 1;
    for (int k = n - 1; k >= 0; k--) {
        int d = perm[k];
        l->shard[d] = (td_iter){shape[d], stride, TD_AXIS_M};
        stride *= shape[d] + (k == n - 1 && n > 1 ? pad : 0);
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static int64_t rnd(int64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (int64_t)(rng_state % (uint64_t)n);
}

/* Random copies (global rank 1-4, dtypes of 1, 2 and 4 bytes, permuted
 * and padded layouts on both sides, random regions, both directions):
 * every plan the module accepts must move exactly the bytes the layouts
 * say (check_moves); every refusal must say why. */
static void test_random_moves(void **state)
{
    (void)state;
    static const int64_t sizes[] = {1, 2, 3, 4, 8, 16, 32, 64, 128, 256,
                                    512, 1024};
    static const td_dtype dts[] = {TD_F16, TD_U8, TD_F32};
    int accepted = 0, issued = 0, refused = 0;
    for (int t = 0; t < 2000; t++) {
        int n = 1 + (int)rnd(4);
        int64_t shape[4], start[4], extent[4], sshape[5], sstart[5];
        int64_t prod = 1;
        for (int i = 0; i < n; i++) {
            shape[i] = sizes[rnd(12)];
            if (prod * shape[i] > 65536)
                shape[i] = 1;
            prod *= shape[i];
            extent[i] = rnd(3) == 0 ? 1 + rnd(shape[i]) : shape[i];
            start[i] = rnd(shape[i] - extent[i] + 1);
        }
        int gperm[4], sperm[5];
        for (int i = 0; i < n; i++)
            gperm[i] = i;
        if (rnd(4) == 0 && n > 1) {
            int a = (int)rnd(n), b = (int)rnd(n), x = gperm[a];
            gperm[a] = gperm[b];
            gperm[b] = x;
        }
        /* The shared tile: the region's extents, sometimes behind a stage
         * dimension of 2 (copied at stage 1), row-major or permuted. */
        int staged = rnd(3) == 0, sn = n + staged;
        if (staged) {
            sshape[0] = 2;
            sstart[0] = 1;
        }
        for (int i = 0; i < n; i++) {
            sshape[staged + i] = extent[i];
            sstart[staged + i] = 0;
        }
        for (int i = 0; i < sn; i++)
            sperm[i] = i;
        if (rnd(4) == 0 && sn > 1) {
            int a = (int)rnd(sn), b = (int)rnd(sn), x = sperm[a];
            sperm[a] = sperm[b];
            sperm[b] = x;
        }
        td_layout gl, sl;
        strided_layout(&gl, shape, n, gperm, rnd(3) == 0 ? 8 : 0);
        strided_layout(&sl, sshape, sn, sperm, 0);
        td_tma_plan_in in;
        td_tma_plan plan;
        td_diag d = {0};
        td__tma_plan_in_init(&in);
        td_dtype dt = dts[rnd(3)];
        int64_t sext[5];
        for (int i = 0; i < sn; i++)
            sext[i] = i < staged ? 1 : sshape[i];
        assert_int_equal(td__copy_side_init(&in.global, "A", "global", dt, n,
                                            shape, start, extent, &gl, NULL),
                         0);
        assert_int_equal(td__copy_side_init(&in.shared, "S", "shared", dt, sn,
                                            sshape, sstart, sext, &sl, NULL),
                         0);
        if (rnd(2)) {
            in.direction = TD_TMAP_S2G;
            in.has_mbar = 0;
        }
        int rc = td__tma_plan(&in, &plan, &d);
        if (rc != 0) {
            assert_true(rc == TD_EINVAL || rc == TD_ELIMIT);
            /* A refusal names what failed (an empty list of failed rules
             * would read "prefix-search: ;"). */
            assert_null(strstr(d.msg, ": ;"));
            assert_true(d.msg[0] != '\0');
            refused++;
            continue;
        }
        char why[600] = "";
        if (!check_moves(&in, &plan, why, sizeof why)) {
            char gt[256], st[256];
            td_layout_format(&gl, gt, sizeof gt);
            td_layout_format(&sl, st, sizeof st);
            fail_msg("case %d (%s, global %s, shared %s): %s", t,
                     td_dtype_name(dt), gt, st, why);
        }
        accepted++;
        issued += plan.n_issue > 1;
    }
    printf("random copies: %d planned (%d with issue loops), %d refused\n",
           accepted, issued, refused);
    assert_true(accepted >= 200);
    assert_true(issued >= 30);
}

/* The move check itself can fail: a plan whose byte stride, shared
 * offset or coordinates are off by a little is caught. */
static void test_moves_catch_errors(void **state)
{
    (void)state;
    int64_t shape[2] = {512, 64};
    td_layout l;
    int perm[2] = {0, 1};
    strided_layout(&l, shape, 2, perm, 0);
    td_tma_plan_in in;
    td_tma_plan plan, bad;
    td_diag d = {0};
    char why[600];
    td__tma_plan_in_init(&in);
    assert_int_equal(td__copy_side_init(&in.global, "A", "global", TD_F16, 2,
                                        shape, NULL, NULL, &l, NULL), 0);
    assert_int_equal(td__copy_side_init(&in.shared, "S", "shared", TD_F16, 2,
                                        shape, NULL, NULL, &l, NULL), 0);
    assert_int_equal(td__tma_plan(&in, &plan, &d), 0);
    assert_int_equal(plan.n_issue, 512);
    why[0] = '\0';
    assert_true(check_moves(&in, &plan, why, sizeof why));
    bad = plan;
    bad.map.global_strides[0] += 16;
    why[0] = '\0';
    assert_false(check_moves(&in, &bad, why, sizeof why));
    bad = plan;
    bad.smem_offset += 8;
    why[0] = '\0';
    assert_false(check_moves(&in, &bad, why, sizeof why));
    bad = plan;
    bad.map.coordinates[1] += 1;
    why[0] = '\0';
    assert_false(check_moves(&in, &bad, why, sizeof why));
    bad = plan;
    bad.n_issue -= 1;
    why[0] = '\0';
    assert_false(check_moves(&in, &bad, why, sizeof why));
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

    /* A shared slice that starts 8 bytes into its rows: the rows no longer
     * chain (stride 64 after 32 elements), which TVM checks before the
     * pointer's alignment. */
    int64_t start[2] = {0, 4}, extent[2] = {64, 32};
    assert_int_equal(td__copy_side_init(&in.shared, "S", "shared", TD_F16, 2,
                                        sshape, start, extent, &sl, NULL), 0);
    int64_t gext[2] = {64, 32};
    assert_int_equal(td__copy_side_init(&in.global, "A", "global", TD_F16, 2,
                                        gshape, NULL, gext, &gl, NULL), 0);
    memset(&d, 0, sizeof d);
    assert_int_equal(td__tma_plan(&in, &plan, &d), TD_EINVAL);
    assert_non_null(strstr(d.msg, "tma_auto stage=shared-chain: shared "
                                  "iter 0 at sorted position 1 has "
                                  "stride=64, expected 32 after "
                                  "extent=32"));
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: %s tma_matrix.tsv tma_lowering.tsv tma_random.tsv\n",
                argv[0]);
        return 2;
    }
    matrix_path = argv[1];
    lowering_path = argv[2];
    random_path = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix),
        cmocka_unit_test(test_lowering),
        cmocka_unit_test(test_random_rows),
        cmocka_unit_test(test_from_call),
        cmocka_unit_test(test_random_moves),
        cmocka_unit_test(test_moves_catch_errors),
        cmocka_unit_test(test_own_stages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
