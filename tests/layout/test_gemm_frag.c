/*
 * Unit tests for the gemm fragment analysis (variants/gemm_frag.c) and the
 * layout algebra it stands on (tile_to, the thread-left order): every line
 * of tests/upstream/data/gemm_frag.txt, which is what TVM 0.27 computes for
 * the operands of every tiling and orientation of upstream's
 * test_gemm_mma_m16n8k_.py plus derived layouts
 * (tests/upstream/dump_gemm_frag.py), is replayed here and must agree:
 * tile_to results, _canon_perm, the prepared dimensions and totals, each
 * instruction's carve groups or its failing check, the warp-tiling verdict
 * and the register layouts.  argv[1] is the data file.
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
#include "gemm_frag.h"
#include "layout.h"

static const char *data_path;

static td_layout P(const char *text)
{
    td_layout l;
    td_diag d;

    if (td_layout_parse(text, &l, &d) != 0)
        fail_msg("cannot parse layout '%s'", text);
    return l;
}

static void fmt(const td_layout *l, char *buf, size_t cap)
{
    td_layout_format(l, buf, cap);
}

/* The same layout written twice must print the same. */
static void expect_layout(const td_layout *got, const char *want_text,
                          int line)
{
    char a[512], b[512];
    td_layout want = P(want_text);

    fmt(got, a, sizeof a);
    fmt(&want, b, sizeof b);
    if (strcmp(a, b) != 0)
        fail_msg("line %d: got %s, TVM %s", line, a, b);
}

/* [8:4@laneid, 2:2] as the dump writes iters. */
static size_t iters_text(const td_iter *it, int n, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");

    for (int i = 0; i < n && len < cap; i++) {
        if (td_axis_is_thread(it[i].axis))
            len += (size_t)snprintf(buf + len, cap - len, "%s%lld:%lld@%s",
                                    i ? ", " : "", (long long)it[i].extent,
                                    (long long)it[i].stride,
                                    td_axis_name(it[i].axis));
        else
            len += (size_t)snprintf(buf + len, cap - len, "%s%lld:%lld",
                                    i ? ", " : "", (long long)it[i].extent,
                                    (long long)it[i].stride);
    }
    if (len < cap)
        len += (size_t)snprintf(buf + len, cap - len, "]");
    return len;
}

static void groups_text(const td_mma_carved *c, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int g = 0; g < c->ngroups && len < cap; g++) {
        if (g)
            len += (size_t)snprintf(buf + len, cap - len, " | ");
        if (len < cap)
            len += iters_text(&c->grouped.shard[c->seps[g]],
                              c->seps[g + 1] - c->seps[g], buf + len, cap - len);
    }
}

static int parse_ints(const char *s, int64_t *out, int max)
{
    int n = 0;

    while (*s && n < max) {
        char *end;

        out[n++] = strtoll(s, &end, 10);
        if (end == s)
            fail_msg("bad integer list '%s'", s);
        s = end;
        while (*s == ',' || *s == ' ')
            s++;
    }
    return n;
}

static int dim_index(const char *name)
{
    for (int d = 0; d < TD_MMA_NDIMS; d++)
        if (strncmp(name, td__mma_dim_name((td_mma_dim)d), 3) == 0)
            return d;
    fail_msg("unknown dimension '%.3s'", name);
    return -1;
}

static const td_mma_inst *inst_named(const char *name)
{
    for (int i = 0; i < td__mma_ninsts; i++)
        if (strcmp(td__mma_insts[i].name, name) == 0)
            return &td__mma_insts[i];
    fail_msg("unknown instruction '%s'", name);
    return NULL;
}

/* One case of the data file. */
typedef struct gcase {
    char name[64];
    int64_t m, n, k;
    int ta, tb;
    td_layout lay[TD_MMA_NOPS];
    bool has_buf[TD_MMA_NOPS];
    int64_t buf_shape[TD_MMA_NOPS][2], start[TD_MMA_NOPS][2],
        extent[TD_MMA_NOPS][2];
    bool prepared;
    int prep_rc;
    char prep_why[1024];
    td_mma_dims dims;
    const td_mma_inst *inst;
    int fit_rc;
    char fit_why[1024];
    td_mma_frag frag;
} gcase;

static void prepare(gcase *c)
{
    int64_t shape[TD_MMA_NOPS][2] = {
        {c->m, c->n},
        {c->ta ? c->k : c->m, c->ta ? c->m : c->k},
        {c->tb ? c->n : c->k, c->tb ? c->k : c->n},
        {c->m, c->n}};
    int64_t zero[2] = {0, 0};
    td_mma_in in;

    memset(&in, 0, sizeof in);
    for (int o = 0; o < TD_MMA_NOPS; o++)
        in.op[o] = c->has_buf[o]
                       ? (td_mma_operand){&c->lay[o], c->buf_shape[o], 2,
                                          c->start[o], c->extent[o]}
                       : (td_mma_operand){&c->lay[o], shape[o], 2, zero, shape[o]};
    in.m = c->m;
    in.n = c->n;
    in.k = c->k;
    in.transpose_a = c->ta;
    in.transpose_b = c->tb;
    c->prep_why[0] = '\0';
    c->prep_rc = td__mma_prepare(&in, &c->dims, c->prep_why, sizeof c->prep_why);
    c->prepared = true;
}

static int op_index(char ch)
{
    switch (ch) {
    case 'D':
        return TD_MMA_OP_D;
    case 'A':
        return TD_MMA_OP_A;
    case 'B':
        return TD_MMA_OP_B;
    case 'C':
        return TD_MMA_OP_C;
    }
    fail_msg("unknown operand '%c'", ch);
    return -1;
}

/* Counts of what was compared, so that a truncated file cannot pass. */
static int n_cases, n_tile, n_canon, n_in, n_out, n_fails, n_fit, n_reg,
    n_prep_fails, n_regions, n_canonicalize, n_fragment;

static void line_tile_to(char *s, int line)
{
    /* tile_to BASE | to | cur -> RESULT */
    char *bar1 = strstr(s, " | "), *bar2, *arrow;
    int64_t to[TD_MAX_RANK], cur[TD_MAX_RANK];
    td_layout base, out;
    int n;

    assert_non_null(bar1);
    bar2 = strstr(bar1 + 3, " | ");
    assert_non_null(bar2);
    arrow = strstr(bar2, " -> ");
    assert_non_null(arrow);
    *bar1 = *bar2 = *arrow = '\0';
    base = P(s);
    n = parse_ints(bar1 + 3, to, TD_MAX_RANK);
    assert_int_equal(parse_ints(bar2 + 3, cur, TD_MAX_RANK), n);
    assert_int_equal(td__lay_tile_to(&base, to, cur, n, &out), 0);
    expect_layout(&out, arrow + 4, line);
    n_tile++;
}

static void line_tposed(char *s, int line)
{
    /* tposed L | M,K -> R: group by the shape, swap the two groups */
    char *bar = strstr(s, " | "), *arrow = strstr(s, " -> ");
    int64_t shape[2];
    int seps[3], oseps[3];
    td_layout l, g, out;

    assert_non_null(bar);
    assert_non_null(arrow);
    *bar = *arrow = '\0';
    l = P(s);
    assert_int_equal(parse_ints(bar + 3, shape, 2), 2);
    assert_int_equal(td__lay_group(&l, shape, 2, &g, seps), 0);
    assert_int_equal(td__lay_permute_by_groups(&g, seps, 2, (int[]){1, 0},
                                               &out, oseps),
                     0);
    expect_layout(&out, arrow + 4, line);
}

static void line_canon(char *s, int line)
{
    char *arrow = strstr(s, " -> ");
    int64_t want[TD_MAX_LAYOUT_ITERS];
    int perm[TD_MAX_LAYOUT_ITERS], n;
    td_layout l, out;

    assert_non_null(arrow);
    *arrow = '\0';
    l = P(s);
    n = parse_ints(arrow + 4, want, TD_MAX_LAYOUT_ITERS);
    assert_int_equal(n, l.nshard);
    assert_int_equal(td__lay_canon_perm(&l, perm), 0);
    for (int i = 0; i < n; i++)
        if (perm[i] != want[i])
            fail_msg("line %d: perm[%d] = %d, TVM %lld", line, i, perm[i],
                     (long long)want[i]);
    assert_int_equal(td__lay_thread_left(&l, &out, perm), 0);
    for (int i = 0; i < n; i++)
        assert_memory_equal(&out.shard[i], &l.shard[want[i]], sizeof(td_iter));
    n_canon++;
}

static int op_index(char ch);

static void line_fragment(char *s, int line)
{
    /* fragment INST OP a,b T -> LAYOUT */
    char name[64], opc;
    long long a, b;
    int t;
    char *arrow = strstr(s, " -> ");
    td_layout out;

    assert_non_null(arrow);
    if (sscanf(s, "%63s %c %lld,%lld %d", name, &opc, &a, &b, &t) != 5)
        fail_msg("line %d: bad fragment line", line);
    assert_int_equal(td__mma_tile_layout(inst_named(name), op_index(opc),
                                         (int64_t[]){a, b}, t != 0, &out),
                     0);
    expect_layout(&out, arrow + 4, line);
    n_fragment++;
}

static void line_canonicalize(char *s, int line)
{
    char *arrow = strstr(s, " -> "), *fails = strstr(s, " FAILS ");
    td_layout l, out;

    if (fails != NULL) {
        char why[512] = "";

        *fails = '\0';
        l = P(s);
        if (td__lay_canonicalize_cuda(&l, &out, why, sizeof why) != TD_EINVAL ||
            strcmp(why, fails + 7) != 0)
            fail_msg("line %d: %s: '%s', TVM '%s'", line, s, why, fails + 7);
    } else {
        assert_non_null(arrow);
        *arrow = '\0';
        l = P(s);
        assert_int_equal(td__lay_canonicalize_cuda(&l, &out, NULL, 0), 0);
        expect_layout(&out, arrow + 4, line);
    }
    n_canonicalize++;
}

static void line_case(gcase *c, char *s, int line)
{
    char got[2200];

    if (strncmp(s, "layout ", 7) == 0) {
        c->lay[op_index(s[7])] = P(s + 9);
        return;
    }
    if (strncmp(s, "buffer ", 7) == 0) {
        /* buffer X 32,16 16:32,8:16: the operand is that region */
        int o = op_index(s[7]);
        long long s0, s1, b0, e0, b1, e1;

        if (sscanf(s + 9, "%lld,%lld %lld:%lld,%lld:%lld", &s0, &s1, &b0, &e0,
                   &b1, &e1) != 6)
            fail_msg("line %d: bad buffer line '%s'", line, s);
        c->has_buf[o] = true;
        c->buf_shape[o][0] = s0;
        c->buf_shape[o][1] = s1;
        c->start[o][0] = b0;
        c->start[o][1] = b1;
        c->extent[o][0] = e0 - b0;
        c->extent[o][1] = e1 - b1;
        n_regions++;
        return;
    }
    if (!c->prepared)
        prepare(c);
    if (strncmp(s, "prep FAILS: ", 12) == 0) {
        if (c->prep_rc != TD_ENOMATCH || strcmp(c->prep_why, s + 12) != 0)
            fail_msg("line %d (%s): prepare rc %d '%s', TVM '%s'", line,
                     c->name, c->prep_rc, c->prep_why, s + 12);
        n_prep_fails++;
        return;
    }
    if (c->prep_rc != 0)
        fail_msg("line %d (%s): prepare failed (%d): %s", line, c->name,
                 c->prep_rc, c->prep_why);
    if (strncmp(s, "totals ", 7) == 0) {
        snprintf(got, sizeof got, "M=(%lld,%lld) N=(%lld,%lld) K=(%lld,%lld)",
                 (long long)c->dims.thr[0], (long long)c->dims.mem[0],
                 (long long)c->dims.thr[1], (long long)c->dims.mem[1],
                 (long long)c->dims.thr[2], (long long)c->dims.mem[2]);
        if (strcmp(got, s + 7) != 0)
            fail_msg("line %d (%s): totals %s, TVM %s", line, c->name, got, s + 7);
        return;
    }
    if (strncmp(s, "inst ", 5) == 0) {
        c->inst = inst_named(s + 5);
        memset(&c->frag, 0, sizeof c->frag);
        c->fit_why[0] = '\0';
        c->fit_rc = td__mma_fit(c->inst, &c->dims, &c->frag, c->fit_why,
                                sizeof c->fit_why);
        return;
    }
    if (strncmp(s, "fit: ", 5) == 0) {
        bool yes = strcmp(s + 5, "yes") == 0;

        if (yes ? c->fit_rc != 0
                : c->fit_rc != TD_ENOMATCH ||
                      strncmp(c->fit_why, s + 5, strlen(s + 5)) != 0)
            fail_msg("line %d (%s, %s): fit rc %d '%s', TVM %s", line, c->name,
                     c->inst->name, c->fit_rc, c->fit_why, s + 5);
        n_fit++;
        return;
    }
    if (strncmp(s, "reg ", 4) == 0) {
        /* reg X LAYOUT | shape */
        char *bar = strstr(s, " | ");
        int64_t want[5], shape[5];
        int n, nd;
        td_layout r;

        assert_non_null(bar);
        *bar = '\0';
        n = parse_ints(bar + 3, want, 5);
        assert_int_equal(c->fit_rc, 0);
        assert_int_equal(td__mma_reg_layout(&c->frag, &c->dims, op_index(s[4]),
                                            &r, shape, &nd),
                         0);
        expect_layout(&r, s + 6, line);
        assert_int_equal(nd, n);
        for (int i = 0; i < n; i++)
            if (shape[i] != want[i])
                fail_msg("line %d (%s): %c view dim %d = %lld, TVM %lld", line,
                         c->name, s[4], i, (long long)shape[i],
                         (long long)want[i]);
        n_reg++;
        return;
    }
    /* X.Y in : / out: / FAILS: */
    int d = dim_index(s);
    const char *rest = s + 4;

    if (strncmp(rest, "in : ", 5) == 0) {
        const td_layout *l = &c->dims.dim[d];

        iters_text(l->shard, l->nshard, got, sizeof got);
        if (strcmp(got, rest + 5) != 0)
            fail_msg("line %d (%s): %s in %s, TVM %s", line, c->name, s, got,
                     rest + 5);
        n_in++;
    } else if (strncmp(rest, "out: ", 5) == 0) {
        groups_text(&c->frag.dim[d], got, sizeof got);
        if (strcmp(got, rest + 5) != 0)
            fail_msg("line %d (%s, %s): %.3s out %s, TVM %s", line, c->name,
                     c->inst->name, s, got, rest + 5);
        n_out++;
    } else if (strncmp(rest, "FAILS: ", 7) == 0) {
        snprintf(got, sizeof got, "%.3s: %s", s, rest + 7);
        if (c->fit_rc != TD_ENOMATCH || strcmp(c->fit_why, got) != 0)
            fail_msg("line %d (%s, %s): rc %d '%s', TVM '%s'", line, c->name,
                     c->inst->name, c->fit_rc, c->fit_why, got);
        n_fails++;
    } else {
        fail_msg("line %d: unknown line '%s'", line, s);
    }
}

static void test_tvm_values(void **state)
{
    FILE *f = fopen(data_path, "r");
    char buf[2048];
    int line = 0;
    gcase *c = calloc(1, sizeof *c);

    (void)state;
    assert_non_null(f);
    assert_non_null(c);
    while (fgets(buf, sizeof buf, f) != NULL) {
        char *s = buf;
        size_t len = strlen(s);

        line++;
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
            s[--len] = '\0';
        if (len == 0)
            continue;
        if (strncmp(s, "tile_to ", 8) == 0) {
            line_tile_to(s + 8, line);
        } else if (strncmp(s, "tposed ", 7) == 0) {
            line_tposed(s + 7, line);
        } else if (strncmp(s, "fragment ", 9) == 0) {
            line_fragment(s + 9, line);
        } else if (strncmp(s, "canonicalize ", 13) == 0) {
            line_canonicalize(s + 13, line);
        } else if (strncmp(s, "canon ", 6) == 0) {
            line_canon(s + 6, line);
        } else if (strncmp(s, "case ", 5) == 0) {
            long long m, n, k;
            int ta, tb;

            memset(c, 0, sizeof *c);
            if (sscanf(s + 5, "%63s M=%lld N=%lld K=%lld tA=%d tB=%d", c->name,
                       &m, &n, &k, &ta, &tb) != 6)
                fail_msg("line %d: bad case line '%s'", line, s);
            c->m = m;
            c->n = n;
            c->k = k;
            c->ta = ta;
            c->tb = tb;
            n_cases++;
        } else if (strncmp(s, "  ", 2) == 0 && n_cases > 0) {
            line_case(c, s + 2, line);
        } else {
            fail_msg("line %d: unknown line '%s'", line, s);
        }
    }
    fclose(f);
    free(c);
    /* What the dump holds today (tests/upstream/data/gemm_frag.txt): 12
     * upstream tilings and orientations plus 22 derived layouts. */
    assert_true(n_cases >= 30);
    assert_true(n_tile >= 30);
    assert_int_equal(n_canon, 4);
    assert_int_equal(n_canonicalize, 14);
    assert_int_equal(n_fragment, 45);
    assert_true(n_in >= 8 * 20);
    assert_true(n_out >= 8 * 30);
    assert_true(n_fails >= 8);
    assert_true(n_prep_fails >= 5);
    assert_true(n_regions >= 10);
    assert_true(n_fit >= 30);
    assert_true(n_reg >= 4 * 29);
}

/*
 * The fragments against the PTX ISA's tables (mma.m16n8k8 / k16 / k32,
 * "Matrix Fragments for mma.m16n8k*"): for every element of one tile the
 * lane (4g + t) and the register element index must be the ISA's, also for
 * the k_pack 1 (tf32) and 4 (8-bit) shapes tiledispatch adds (plan 1.6),
 * and every instruction's own fragments must carve and fit.
 */
static void test_ptx_fragments(void **state)
{
    static const td_mma_inst insts[] = {
        {"m16n8k16.f16", 16, 8, 16, 2, TD_F16, TD_F16, TD_F32, TD_F32, 80, true},
        {"m16n8k8.f16", 16, 8, 8, 2, TD_F16, TD_F16, TD_F32, TD_F32, 75, true},
        {"m16n8k8.tf32", 16, 8, 8, 1, TD_F32, TD_F32, TD_F32, TD_F32, 80, false},
        {"m16n8k32.s8", 16, 8, 32, 4, TD_I8, TD_I8, TD_I32, TD_I32, 80, false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof insts / sizeof insts[0]; i++) {
        const td_mma_inst *in = &insts[i];
        int64_t kp = in->k_pack;

        for (int op = 0; op < TD_MMA_NOPS; op++) {
            int64_t rows = op == TD_MMA_OP_B ? in->k : in->m;
            int64_t cols = op == TD_MMA_OP_A ? in->k : in->n;
            td_layout l;

            assert_int_equal(td__mma_tile_layout(in, op, (int64_t[]){1, 1},
                                                 false, &l),
                             0);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < cols; c++) {
                    int64_t co[TD_AXIS_COUNT], lane, idx;

                    assert_int_equal(td__lay_apply_shape(&l, (int64_t[]){r, c},
                                                         (int64_t[]){rows, cols},
                                                         2, co),
                                     0);
                    if (op == TD_MMA_OP_A) { /* (g + 8 rM, kp t + p + 4 kp kHi) */
                        lane = 4 * (r % 8) + (c % (4 * kp)) / kp;
                        idx = c % kp + kp * (r / 8) + 2 * kp * (c / (4 * kp));
                    } else if (op == TD_MMA_OP_B) { /* (kp t + p + 4 kp kHi, g) */
                        lane = 4 * c + (r % (4 * kp)) / kp;
                        idx = r % kp + kp * (r / (4 * kp));
                    } else { /* (g + 8 rM, 2 t + rN) */
                        lane = 4 * (r % 8) + c / 2;
                        idx = 2 * (r / 8) + c % 2;
                    }
                    if (co[TD_AXIS_LANEID] != lane || co[TD_AXIS_M] != idx)
                        fail_msg("%s op %d (%lld, %lld): lane %lld reg %lld, "
                                 "ISA lane %lld reg %lld",
                                 in->name, op, (long long)r, (long long)c,
                                 (long long)co[TD_AXIS_LANEID],
                                 (long long)co[TD_AXIS_M], (long long)lane,
                                 (long long)idx);
                }
        }
        /* A 2 x 2 x 2 tiling of its own fragments fits, stored as is and
         * transposed. */
        for (int t = 0; t < 4; t++) {
            bool ta = t & 1, tb = t & 2;
            td_layout lay[TD_MMA_NOPS];
            int64_t m = 2 * in->m, n = 2 * in->n, k = 2 * in->k;
            int64_t shape[TD_MMA_NOPS][2] = {{m, n},
                                             {ta ? k : m, ta ? m : k},
                                             {tb ? n : k, tb ? k : n},
                                             {m, n}};
            int64_t z[2] = {0, 0};
            td_mma_in mi;
            td_mma_dims dims;
            td_mma_frag frag;
            char why[512] = "";

            memset(&mi, 0, sizeof mi);
            for (int op = 0; op < TD_MMA_NOPS; op++) {
                bool tr = (op == TD_MMA_OP_A && ta) || (op == TD_MMA_OP_B && tb);

                assert_int_equal(td__mma_tile_layout(in, op, (int64_t[]){2, 2},
                                                     tr, &lay[op]),
                                 0);
                mi.op[op] = (td_mma_operand){&lay[op], shape[op], 2, z, shape[op]};
            }
            mi.m = m, mi.n = n, mi.k = k, mi.transpose_a = ta, mi.transpose_b = tb;
            assert_int_equal(td__mma_prepare(&mi, &dims, why, sizeof why), 0);
            if (td__mma_fit(in, &dims, &frag, why, sizeof why) != 0)
                fail_msg("%s tA=%d tB=%d: %s", in->name, ta, tb, why);
        }
    }
}

/* Hostile and malformed inputs: an error code, never a crash. */
static void test_bad_inputs(void **state)
{
    const td_mma_inst *k16 = &td__mma_insts[1];
    td_mma_inst bad = *k16;
    td_mma_spec spec;
    td_mma_carved carved;
    td_mma_dims dims;
    td_mma_frag frag;
    td_mma_in in;
    td_layout l = P("S[(8, 2) : (4@laneid, 2)]"), r;
    int64_t shape[5];
    int nd;
    char why[256];

    (void)state;
    assert_int_equal(td__mma_spec(NULL, TD_MMA_DM, &spec), TD_EINVAL);
    assert_int_equal(td__mma_spec(k16, TD_MMA_NDIMS, &spec), TD_EINVAL);
    bad.k = 12; /* not a multiple of 8 */
    assert_int_equal(td__mma_spec(&bad, TD_MMA_AK, &spec), TD_EINVAL);
    bad = *k16;
    bad.k_pack = 0;
    assert_int_equal(td__mma_spec(&bad, TD_MMA_AK, &spec), TD_EINVAL);
    assert_string_equal(td__mma_dim_name(TD_MMA_NDIMS), "?");

    assert_int_equal(td__mma_spec(k16, TD_MMA_DM, &spec), 0);
    assert_int_equal(td__mma_carve(NULL, &spec, 8, 2, &carved, NULL, 0), TD_EINVAL);
    assert_int_equal(td__mma_carve(&l, &spec, 0, 2, &carved, NULL, 0), TD_EINVAL);
    /* 12 threads do not hold 8 lanes a whole number of times */
    why[0] = '\0';
    assert_int_equal(td__mma_carve(&l, &spec, 12, 2, &carved, why, sizeof why),
                     TD_ENOMATCH);
    assert_non_null(strstr(why, "not divisible"));
    spec.nlane = 3;
    assert_int_equal(td__mma_carve(&l, &spec, 8, 2, &carved, NULL, 0), TD_EINVAL);
    assert_int_equal(td__mma_spec(k16, TD_MMA_DM, &spec), 0);
    r = l;
    r.shard[0].extent = 0; /* malformed */
    assert_int_equal(td__mma_carve(&r, &spec, 8, 2, &carved, NULL, 0), TD_EINVAL);
    assert_int_equal(td__mma_carve(&l, &spec, 8, 2, &carved, NULL, 0), 0);

    memset(&in, 0, sizeof in);
    assert_int_equal(td__mma_prepare(NULL, &dims, NULL, 0), TD_EINVAL);
    assert_int_equal(td__mma_prepare(&in, &dims, NULL, 0), TD_EINVAL);
    in.m = 16, in.n = 8, in.k = 16;
    assert_int_equal(td__mma_prepare(&in, &dims, NULL, 0), TD_EINVAL);
    /* A region past the buffer is malformed, not a decline. */
    td_layout d = P("S[(2, 32, 2) : (2, 1@laneid, 1)]");
    td_layout a = P("S[(2, 8, 2, 4, 2) : (2, 4@laneid, 4, 1@laneid, 1)]");
    td_layout b = P("S[(2, 4, 2, 8) : (2, 1@laneid, 1, 4@laneid)]");
    int64_t sd[2] = {16, 8}, sa[2] = {16, 16}, sb[2] = {16, 8}, z[2] = {0, 0},
            past[2] = {8, 0};
    in.op[TD_MMA_OP_D] = (td_mma_operand){&d, sd, 2, z, sd};
    in.op[TD_MMA_OP_C] = (td_mma_operand){&d, sd, 2, z, sd};
    in.op[TD_MMA_OP_A] = (td_mma_operand){&a, sa, 2, z, sa};
    in.op[TD_MMA_OP_B] = (td_mma_operand){&b, sb, 2, past, sb};
    assert_int_equal(td__mma_prepare(&in, &dims, NULL, 0), TD_EINVAL);
    in.op[TD_MMA_OP_B].start = z;
    in.op[TD_MMA_OP_B].ndim = TD_MAX_RANK + 1;
    assert_int_equal(td__mma_prepare(&in, &dims, NULL, 0), TD_EINVAL);
    in.op[TD_MMA_OP_B].ndim = 2;
    assert_int_equal(td__mma_prepare(&in, &dims, NULL, 0), 0);

    /* A zeroed analysis carves nothing. */
    memset(&dims, 0, sizeof dims);
    assert_int_equal(td__mma_fit(k16, &dims, &frag, NULL, 0), TD_EINVAL);
    memset(&frag, 0, sizeof frag);
    assert_int_equal(td__mma_reg_layout(&frag, &dims, TD_MMA_OP_D, &r, shape, &nd),
                     TD_EINVAL);
    assert_int_equal(td__mma_reg_layout(&frag, &dims, TD_MMA_NOPS, &r, shape, &nd),
                     TD_EINVAL);

    /* The CUDA canonicalize: strides the fusion pushes past the limit. */
    memset(&r, 0, sizeof r);
    r.nshard = 2;
    r.shard[0] = (td_iter){2, TD_LAY_MAX_STRIDE / 2, TD_AXIS_WARPID};
    r.shard[1] = (td_iter){32, 1, TD_AXIS_LANEID};
    assert_int_equal(td__lay_canonicalize_cuda(&r, &l, NULL, 0), TD_ELIMIT);
    assert_int_equal(td__lay_canonicalize_cuda(NULL, &l, NULL, 0), TD_EINVAL);
    assert_int_equal(td__lay_fuse_axes_by_scope(NULL, NULL, 0), TD_EINVAL);
    /* bx with tx: a cyclic scope chain (TVM's canonicalize never
     * returns). */
    r = P("S[(2, 32) : (1@bx, 1@tx)]");
    why[0] = '\0';
    assert_int_equal(td__lay_canonicalize_cuda(&r, &l, why, sizeof why), TD_EINVAL);
    assert_string_equal(why, "Ill-formed tile layout: cyclic scope chain");
    /* tile_to past the iter limit or int64. */
    r = P("S[(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2) : "
          "(32768, 16384, 8192, 4096, 2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1)]");
    assert_int_equal(td__lay_tile_to(&r, (int64_t[]){131072}, (int64_t[]){65536},
                                     1, &l),
                     0); /* fuses back to one iter */
    /* outer strides scaled by a 2^38 span pass the stride limit */
    memset(&r, 0, sizeof r);
    r.nshard = 2;
    r.shard[0] = (td_iter){2, (int64_t)1 << 38, TD_AXIS_M};
    r.shard[1] = (td_iter){2, 1, TD_AXIS_M};
    assert_int_equal(td__lay_tile_to(&r, (int64_t[]){4, (int64_t)1 << 21},
                                     (int64_t[]){2, 2}, 2, &l),
                     TD_ELIMIT);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tvm_values),
        cmocka_unit_test(test_ptx_fragments),
        cmocka_unit_test(test_bad_inputs),
    };

    if (argc < 2) {
        fprintf(stderr, "usage: %s gemm_frag.txt\n", argv[0]);
        return 2;
    }
    data_path = argv[1];
    return cmocka_run_group_tests(tests, NULL, NULL);
}
