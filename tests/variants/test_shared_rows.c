/*
 * Unit tests of the `shared_rows` variant (issue 12): what its predicate
 * accepts and rejects (with the reasons explain shows), the plan's
 * choices as they show in the emitted code (group size, vector width,
 * swizzle, cross-warp scratch, barriers), and the IR features it brought
 * (xor, vector lets and lanes, shared scratch) in both printers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "emit_check.h"
#include "tiledispatch.h"
#include "reduce_common.h"
#include "variants.h"

static const td_impl_desc *rows = &td__variant_shared_rows;

/* A shared call: A (ROWS x COLS of DTYPE) -> B (ROWS), last axis. */
static td_call *rows_call(const char *op, const char *scope,
                          const char *launch, const char *dtype, int rows_n,
                          int cols, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "op: %s\ntarget: cuda\narch: sm_90a\nscope: %s\n"
             "launch: %s\nbuffers:\n"
             "  A: {scope: shared, dtype: %s, shape: [%d, %d]}\n"
             "  B: {scope: shared, dtype: %s, shape: [%d]}\n"
             "dst: B\nsrc: A\naxes: [-1]\n%s",
             op, scope, launch, dtype, rows_n, cols, dtype, rows_n,
             extra ? extra : "");
    return ec_parse(text);
}

/* The predicate's verdict and reason. */
static void expect_valid(const td_call *c, const char *reason)
{
    const td_pred_desc *p = &rows->preds[0];
    assert_string_equal(p->name, "shared_rows_valid");
    td_reason why;
    memset(&why, 0, sizeof why);
    bool ok = p->fn(c, NULL, p->user, &why);
    if (reason == NULL) {
        if (!ok)
            fail_msg("rejected: %s", why.text);
        return;
    }
    assert_false(ok);
    assert_string_equal(why.text, reason);
    /* The emitter (through its plan) declines with the same reason. */
    ec_declines(rows, c, ec_op(c), reason);
}

static void test_accepts(void **state)
{
    (void)state;
    static const char *const scopes[] = {"cta", "warpgroup", "warp"};
    static const char *const launches[] = {
        "{threadIdx.x: 96}", "{threadIdx.x: 256}", "{threadIdx.x: 64}"};
    static const char *const dtypes[] = {"float32", "float16", "bfloat16",
                                         "int32", "float64"};
    for (int s = 0; s < 3; s++)
        for (int d = 0; d < 5; d++) {
            td_call *c = rows_call("max", scopes[s], launches[s], dtypes[d],
                                   6, 40, NULL);
            expect_valid(c, NULL);
            free(c);
        }
    /* A symbolic extent is fine at warp scope. */
    td_call *c = rows_call("sum", "warp", "{threadIdx.x: n}", "float32", 4,
                           64, NULL);
    expect_valid(c, NULL);
    free(c);
}

static void test_rejects(void **state)
{
    (void)state;
    td_call *c = rows_call("sum", "thread", "{threadIdx.x: 1}", "float32", 4,
                           8, NULL);
    expect_valid(c, "unsupported exec_scope thread (shared_rows serves cta, "
                    "warpgroup and warp)");
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: 40}", "float32", 4, 8, NULL);
    expect_valid(c, "threadIdx.x extent 40 is not a multiple of 32 "
                    "(shared_rows shuffles across whole warps)");
    free(c);
    c = rows_call("sum", "warpgroup", "{threadIdx.x: 192}", "float32", 4, 8,
                  NULL);
    expect_valid(c, "threadIdx.x extent 192 is not a multiple of 128 "
                    "(shared_rows shuffles across whole warpgroups)");
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: n}", "float32", 4, 8, NULL);
    expect_valid(c, "threadIdx.x extent is symbolic (n); shared_rows needs a "
                    "constant at cta scope");
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: 2048}", "float32", 4, 8, NULL);
    expect_valid(c, "threadIdx.x extent 2048 out of range [1, 1024]");
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: 32, threadIdx.y: 2}",
                  "float32", 4, 8, NULL);
    expect_valid(c, "multi-dimensional thread binding not supported for "
                    "shared_rows");
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: 32}", "float32", 4, 8,
                  "config: {vector_bytes: 32}\n");
    expect_valid(c, "vector_bytes must be 0, 4, 8 or 16");
    free(c);
    c = rows_call("sum", "warpgroup", "{threadIdx.x: 256}", "float32", 4, 8,
                  "config: {barrier_id: 15}\n");
    expect_valid(c, "barrier ids 15..16 for 2 warpgroup(s) outside [0, 15]");
    free(c);
    c = ec_parse("op: sum\ntarget: cuda\nscope: cta\n"
                 "launch: {threadIdx.x: 32}\nbuffers:\n"
                 "  A: {scope: local, dtype: float32, shape: [4, 8]}\n"
                 "  B: {scope: shared, dtype: float32, shape: [4]}\n"
                 "dst: B\nsrc: A\n");
    expect_valid(c, "expected shared scope for both src and dst");
    free(c);
    c = ec_parse("op: sum\ntarget: cuda\nscope: cta\n"
                 "launch: {threadIdx.x: 32}\nbuffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [4, 8]}\n"
                 "  B: {scope: shared, dtype: float16, shape: [4]}\n"
                 "dst: B\nsrc: A\n");
    expect_valid(c, "dtype mismatch: src=float32 dst=float16");
    free(c);
    /* In place over an overlapping region. */
    c = ec_parse("op: sum\ntarget: cuda\nscope: cta\n"
                 "launch: {threadIdx.x: 32}\nbuffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [4, 8]}\n"
                 "dst: \"A[0:4, 0:1]\"\nsrc: A\naxes: [-1]\n"
                 "config: {}\n");
    td_reason why;
    memset(&why, 0, sizeof why);
    assert_false(rows->preds[0].fn(c, NULL, NULL, &why));
    free(c);
}

/* G = 1 on [32, 32] / 32: one row a thread, 16-byte loads (all eight
 * issued before the first add), XOR swizzle, no shuffles, two
 * accumulators. */
static void test_bench_32x32(void **state)
{
    (void)state;
    td_call *c = rows_call("sum", "cta", "{threadIdx.x: 32}", "float32", 32,
                           32, NULL);
    ec_out o = ec_emit(rows, c);
    assert_string_equal(
        o.cuda,
        "int tid = (int)threadIdx.x;\n"
        "int row = tid;\n"
        "float acc0 = 0.000000e+00f;\n"
        "float acc1 = 0.000000e+00f;\n"
        "int sw = row & 7;\n"
        "int red0 = sw * 4;\n"
        "uint4 v0 = *(const uint4 *)&A_ptr[row * 32 + red0];\n"
        "int red1 = (1 ^ sw) * 4;\n"
        "uint4 v1 = *(const uint4 *)&A_ptr[row * 32 + red1];\n"
        "int red2 = (2 ^ sw) * 4;\n"
        "uint4 v2 = *(const uint4 *)&A_ptr[row * 32 + red2];\n"
        "int red3 = (3 ^ sw) * 4;\n"
        "uint4 v3 = *(const uint4 *)&A_ptr[row * 32 + red3];\n"
        "int red4 = (4 ^ sw) * 4;\n"
        "uint4 v4 = *(const uint4 *)&A_ptr[row * 32 + red4];\n"
        "int red5 = (5 ^ sw) * 4;\n"
        "uint4 v5 = *(const uint4 *)&A_ptr[row * 32 + red5];\n"
        "int red6 = (6 ^ sw) * 4;\n"
        "uint4 v6 = *(const uint4 *)&A_ptr[row * 32 + red6];\n"
        "int red7 = (7 ^ sw) * 4;\n"
        "uint4 v7 = *(const uint4 *)&A_ptr[row * 32 + red7];\n"
        "acc0 = acc0 + (__uint_as_float(v0.x) + __uint_as_float(v0.y) + (__uint_as_float(v0.z) + __uint_as_float(v0.w)));\n"
        "acc1 = acc1 + (__uint_as_float(v1.x) + __uint_as_float(v1.y) + (__uint_as_float(v1.z) + __uint_as_float(v1.w)));\n"
        "acc0 = acc0 + (__uint_as_float(v2.x) + __uint_as_float(v2.y) + (__uint_as_float(v2.z) + __uint_as_float(v2.w)));\n"
        "acc1 = acc1 + (__uint_as_float(v3.x) + __uint_as_float(v3.y) + (__uint_as_float(v3.z) + __uint_as_float(v3.w)));\n"
        "acc0 = acc0 + (__uint_as_float(v4.x) + __uint_as_float(v4.y) + (__uint_as_float(v4.z) + __uint_as_float(v4.w)));\n"
        "acc1 = acc1 + (__uint_as_float(v5.x) + __uint_as_float(v5.y) + (__uint_as_float(v5.z) + __uint_as_float(v5.w)));\n"
        "acc0 = acc0 + (__uint_as_float(v6.x) + __uint_as_float(v6.y) + (__uint_as_float(v6.z) + __uint_as_float(v6.w)));\n"
        "acc1 = acc1 + (__uint_as_float(v7.x) + __uint_as_float(v7.y) + (__uint_as_float(v7.z) + __uint_as_float(v7.w)));\n"
        "acc0 = acc0 + acc1;\n"
        "B_ptr[row] = acc0;\n"
        "__syncthreads();\n");
    ec_has(o.tirx, "v0 = T.alloc_buffer((4,), \"float32\", scope=\"local\")\n"
                   "v0[T.ramp(0, 1, 4)] = A[row, T.ramp(sw * 4, 1, 4)]\n");
    ec_has(o.tirx, "red1: T.int32 = (1 ^ sw) * 4\n");
    ec_has(o.tirx, "acc0 = acc0 + (v0[0] + v0[1] + (v0[2] + v0[3]))\n");
    ec_free(&o);
    free(c);
}

/* Group sizes from the shape: 4 busy warps, a row in one warp unless a
 * thread would pass 32 accesses, then as many warps as that needs; max
 * and min (redux.sync) a warp a row when every row can have one; sums
 * keep the narrower group.  8-byte accesses for 16 or more 16-byte
 * accesses a thread with one busy warp, one thread a row, or a warp a
 * row. */
static void test_group_sizes(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int rows, cols, threads;
        const char *lane; /* NULL: G = 1 */
        const char *width;
    } cases[] = {
        {"max", 64, 128, 128, "int lane = tid % 2;\n", "uint4 v0 = "},
        {"max", 128, 64, 128, NULL, "uint2 v0 = "},
        {"sum", 128, 64, 128, NULL, "uint2 v0 = "},
        {"max", 32, 32, 32, NULL, "uint4 v0 = "},
        {"max", 8, 1024, 512, "int lane = tid % 32;\n", "uint4 v0 = "},
        {"sum", 8, 1024, 512, "int lane = tid % 16;\n", "uint4 v0 = "},
        {"max", 16, 256, 512, "int lane = tid % 32;\n", "uint4 v0 = "},
        {"min", 16, 256, 512, "int lane = tid % 32;\n", "uint4 v0 = "},
        {"sum", 16, 256, 512, "int lane = tid % 8;\n", "uint4 v0 = "},
        {"max", 4, 4096, 256, "int lane = tid % 32;\n", "uint2 v0 = "},
        {"max", 1, 4096, 256, "int lane = tid % 32;\n", "uint2 v0 = "},
        {"max", 1, 8192, 256, "int lane = tid % 128;\n", "uint4 v0 = "},
        {"max", 1, 32768, 1024, "int lane = tid % 256;\n", "uint4 v0 = "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char launch[64];
        snprintf(launch, sizeof launch, "{threadIdx.x: %d}",
                 cases[i].threads);
        td_call *c = rows_call(cases[i].op, "cta", launch, "float32",
                               cases[i].rows, cases[i].cols, NULL);
        ec_out o = ec_emit(rows, c);
        if (cases[i].lane != NULL)
            ec_has(o.cuda, cases[i].lane);
        else
            ec_lacks(o.cuda, "lane");
        ec_has(o.cuda, cases[i].width);
        ec_free(&o);
        free(c);
    }
}

/* The access width when a thread makes 16 or more 16-byte accesses of a
 * row: 8 bytes with one busy warp (S * G <= 32), one thread a row, or a
 * warp a row ending in the whole-warp reduction; 16 otherwise, or what
 * vector_bytes says. */
static void test_single_warp_width(void **state)
{
    (void)state;
    static const struct {
        int rows, cols, threads;
        const char *config, *want;
    } cases[] = {
        {1, 4096, 256, NULL, "uint2 v0 = "},  /* 32 accesses of 16 bytes */
        {1, 2048, 256, NULL, "uint2 v0 = "},  /* 16 */
        {1, 1024, 256, NULL, "uint4 v0 = "},  /* 8: stays 16 bytes */
        {4, 4096, 256, NULL, "uint2 v0 = "},  /* a warp a row, 32 */
        {4, 4096, 256, "config: {fast_warp_reduce: false}\n",
         "uint4 v0 = "},                      /* shuffles: stays */
        {64, 128, 128, NULL, "uint4 v0 = "},  /* G = 2: stays */
        {128, 64, 128, NULL, "uint2 v0 = "},  /* a thread a row, 16 */
        {1, 4096, 256, "config: {vector_bytes: 16}\n", "uint4 v0 = "},
        {1, 4096, 256, "config: {vector_bytes: 4}\n", "float x0 = "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char launch[64];
        snprintf(launch, sizeof launch, "{threadIdx.x: %d}",
                 cases[i].threads);
        td_call *c = rows_call("sum", "cta", launch, "float32", cases[i].rows,
                               cases[i].cols, cases[i].config);
        ec_out o = ec_emit(rows, c);
        ec_has(o.cuda, cases[i].want);
        ec_free(&o);
        free(c);
    }
}

/* config one_block_per_sm: rows held by whole warps that leave warps idle
 * spread over every warp (the scratch combine, a pairwise tree); other
 * shapes keep their plan; a bad value is a rejection. */
static void test_one_block_knob(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int rows, cols, threads;
        const char *lane, *width;
    } cases[] = {
        {"sum", 1, 4096, 256, "int lane = tid % 256;\n", "uint4 v0 = "},
        {"max", 1, 4096, 256, "int lane = tid % 256;\n", "uint4 v0 = "},
        {"sum", 4, 4096, 256, "int lane = tid % 64;\n", "uint4 v0 = "},
        {"sum", 8, 1024, 256, "int lane = tid % 32;\n", "uint4 v0 = "},
        {"sum", 16, 256, 512, "int lane = tid % 8;\n", "uint4 v0 = "},
        {"sum", 128, 64, 128, NULL, "uint2 v0 = "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char launch[64];
        snprintf(launch, sizeof launch, "{threadIdx.x: %d}",
                 cases[i].threads);
        td_call *c = rows_call(cases[i].op, "cta", launch, "float32",
                               cases[i].rows, cases[i].cols,
                               "config: {one_block_per_sm: true}\n");
        ec_out o = ec_emit(rows, c);
        if (cases[i].lane != NULL)
            ec_has(o.cuda, cases[i].lane);
        else
            ec_lacks(o.cuda, "lane");
        ec_has(o.cuda, cases[i].width);
        ec_free(&o);
        free(c);
    }
    td_call *c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32", 1,
                           4096, "config: {one_block_per_sm: true}\n");
    ec_out o = ec_emit(rows, c);
    ec_has(o.cuda, "__shared__ float red_part[8];\n");
    ec_has(o.cuda, "float total = red_part[base] + red_part[base + 1] + "
                   "(red_part[base + 2] + red_part[base + 3]) + "
                   "(red_part[base + 4] + red_part[base + 5] + "
                   "(red_part[base + 6] + red_part[base + 7]));\n");
    ec_free(&o);
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32", 1, 4096,
                  "config: {one_block_per_sm: 1}\n");
    ec_declines(rows, c, ec_op(c), "one_block_per_sm must be true or false");
    free(c);
}

/* config group_size fixes G: checked, and it overrides the plan (and the
 * hand-over of one-row-per-warp shapes to `shared`). */
static void test_group_knob(void **state)
{
    (void)state;
    static const char *bad[] = {"config: {group_size: 0}\n",
                                "config: {group_size: 48}\n",
                                "config: {group_size: 2048}\n",
                                "config: {group_size: true}\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        td_call *c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32",
                               8, 1024, bad[i]);
        expect_valid(c, "group_size must be a power of two in [1, 1024]");
        free(c);
    }
    td_call *c = rows_call("sum", "cta", "{threadIdx.x: 64}", "float32", 4,
                           64, "config: {group_size: 32}\n");
    expect_valid(c, "group_size 32 exceeds the 16 accesses of a row or the "
                    "64 threads of the scope");
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32", 8, 1024,
                  "config: {group_size: 32}\n");
    ec_out o = ec_emit(rows, c);
    ec_has(o.cuda, "int lane = tid % 32;\n");
    ec_has(o.cuda, "uint4 v0 = ");
    ec_free(&o);
    free(c);
    c = rows_call("max", "cta", "{threadIdx.x: 256}", "float32", 1, 8192,
                  "config: {group_size: 256}\n");
    o = ec_emit(rows, c);
    ec_has(o.cuda, "__shared__ float red_part[8];\n");
    ec_free(&o);
    free(c);
}

/* One row per warp of 32-bit rows of 1024 or more, where the plan would
 * pack rows two to a warp: with a whole-warp reduction (float32 on
 * sm_90a) every warp gets its row; without one, left to `shared`; the
 * neighbours are not. */
static void test_warp_per_row(void **state)
{
    (void)state;
    static const char reason[] =
        "one row per warp (8 rows of 1024, 256 threads): `shared` keeps "
        "every warp busy, this plan (G = 16) would leave 4 of the 8 warps "
        "idle; left to `shared`";
    td_call *c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32", 8,
                           1024, NULL);
    ec_out o = ec_emit(rows, c);
    ec_has(o.cuda, "int lane = tid % 32;\n");
    ec_has(o.cuda, "acc0 = td_warp_sum_f64mma(acc0);\n");
    ec_has(o.tirx, "acc0 = T.cuda.warp_reduce(acc0, \"sum\", 32)\n");
    ec_lacks(o.cuda, "__shfl_xor_sync");
    ec_free(&o);
    free(c);
    c = rows_call("max", "cta", "{threadIdx.x: 256}", "float32", 8, 1024,
                  NULL);
    o = ec_emit(rows, c);
    ec_has(o.cuda, "acc0 = td_warp_max_redux(acc0);\n");
    ec_free(&o);
    free(c);
    /* No whole-warp reduction: config turns it off, or the chip has no
     * float64 tensor core (sm_89). */
    c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32", 8, 1024,
                  "config: {fast_warp_reduce: false}\n");
    expect_valid(c, reason);
    free(c);
    c = ec_parse("op: sum\ntarget: cuda\narch: sm_89\nscope: cta\n"
                 "launch: {threadIdx.x: 256}\nbuffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [8, 1024]}\n"
                 "  B: {scope: shared, dtype: float32, shape: [8]}\n"
                 "dst: B\nsrc: A\naxes: [-1]\n");
    expect_valid(c, reason);
    free(c);
    c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32", 8, 1024,
                  "config: {fast_warp_reduce: 1}\n");
    expect_valid(c, "fast_warp_reduce must be true or false");
    free(c);
    static const struct {
        int rows, cols, threads;
        const char *scope, *dtype;
    } kept[] = {
        {8, 1024, 512, "cta", "float32"},    /* 16 warps for 8 rows */
        {8, 512, 256, "cta", "float32"},     /* rows under 1024 */
        {8, 4096, 256, "cta", "float32"},    /* G = 32 already */
        {8, 1024, 256, "cta", "float16"},    /* 16-bit values */
        {4, 1024, 128, "warpgroup", "float32"}, /* G = 32 already */
        {1, 4096, 256, "cta", "float32"},    /* fewer rows than warps */
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        char launch[64];
        snprintf(launch, sizeof launch, "{threadIdx.x: %d}", kept[i].threads);
        c = rows_call("sum", kept[i].scope, launch, kept[i].dtype,
                      kept[i].rows, kept[i].cols,
                      "config: {fast_warp_reduce: false}\n");
        o = ec_emit(rows, c);
        ec_free(&o);
        free(c);
    }
}

/* Which whole-warp reduction, if any, replaces the shuffles: a row in a
 * whole warp (G >= 32) of float32, the sum on sm_80, sm_90 and sm_100
 * (float64 tensor cores), max and min on sm_80 and newer. */
static void test_fast_warp(void **state)
{
    (void)state;
    static const struct {
        const char *op, *arch, *dtype;
        int rows, cols, threads;
        const char *want; /* NULL: the shuffles */
    } cases[] = {
        {"sum", "sm_90a", "float32", 4, 4096, 256, "td_warp_sum_f64mma"},
        {"sum", "sm_80", "float32", 4, 4096, 256, "td_warp_sum_f64mma"},
        {"sum", "sm_100a", "float32", 4, 4096, 256, "td_warp_sum_f64mma"},
        {"sum", "sm_89", "float32", 4, 4096, 256, NULL},
        {"sum", "sm_120", "float32", 4, 4096, 256, NULL},
        {"max", "sm_89", "float32", 4, 4096, 256, "td_warp_max_redux"},
        {"min", "sm_120", "float32", 4, 4096, 256, "td_warp_min_redux"},
        {"max", "sm_75", "float32", 4, 4096, 256, NULL},
        {"sum", "sm_90a", "float16", 4, 4096, 256, NULL},
        {"max", "sm_90a", "bfloat16", 4, 4096, 256, NULL},
        {"sum", "sm_90a", "float32", 1, 8192, 256, "td_warp_sum_f64mma"},
        {"sum", "sm_90a", "float32", 64, 128, 128, NULL}, /* G = 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "op: %s\ntarget: cuda\narch: %s\nscope: cta\n"
                 "launch: {threadIdx.x: %d}\nbuffers:\n"
                 "  A: {scope: shared, dtype: %s, shape: [%d, %d]}\n"
                 "  B: {scope: shared, dtype: %s, shape: [%d]}\n"
                 "dst: B\nsrc: A\naxes: [-1]\n",
                 cases[i].op, cases[i].arch, cases[i].threads,
                 cases[i].dtype, cases[i].rows, cases[i].cols,
                 cases[i].dtype, cases[i].rows);
        td_call *c = ec_parse(text);
        ec_out o = ec_emit(rows, c);
        if (cases[i].want != NULL) {
            ec_has(o.cuda, cases[i].want);
            ec_lacks(o.cuda, "__shfl_xor_sync(4294967295u, acc0, 16");
        } else {
            ec_lacks(o.cuda, "td_warp_");
        }
        ec_free(&o);
        free(c);
    }
}

/* A row spanning warps: per-warp partials in the body's own shared
 * scratch, the barrier, one thread a row combines and writes. */
static void test_cross_warp(void **state)
{
    (void)state;
    td_call *c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float32", 1,
                           8192, "accum: true\n");
    ec_out o = ec_emit(rows, c);
    ec_has(o.cuda, "__shared__ float red_part[4];\n");
    /* Warps 4..7 have no row: they skip to the barrier. */
    ec_has(o.cuda, "if (row < 1) {\n");
    ec_has(o.cuda, "  if (lane % 32 == 0) {\n"
                   "    red_part[row * 4 + lane / 32] = acc0;\n  }\n}\n"
                   "__syncthreads();\n");
    ec_has(o.cuda, "  B_ptr[0] = B_ptr[0] + total;\n}\n__syncthreads();\n");
    assert_int_equal(ec_count(o.cuda, "__syncthreads();"), 2);
    ec_has(o.tirx, "red_part = T.alloc_buffer((4,), \"float32\", "
                   "scope=\"shared\")\n");
    ec_free(&o);
    free(c);

    /* Two warpgroups: each its own scratch half and barrier id. */
    c = rows_call("max", "warpgroup", "{threadIdx.x: 256}", "float32", 1,
                  8192, NULL);
    o = ec_emit(rows, c);
    ec_has(o.cuda, "__shared__ float red_part[8];\n");
    ec_has(o.cuda, "red_part[row * 4 + lane / 32 + (int)threadIdx.x / 128 * 4]");
    ec_has(o.cuda, "asm volatile(\"bar.sync %0, %1;\" :: "
                   "\"r\"(8 + (int)threadIdx.x / 128), \"r\"(128) : "
                   "\"memory\");\n");
    ec_free(&o);
    free(c);
}

/* Vector widths: float16 8 lanes, bfloat16 rows of 100 get 4, an odd row
 * stride or vector_bytes 0 scalar, a row of 30 in a buffer of 32 a tail. */
static void test_vectors(void **state)
{
    (void)state;
    td_call *c = rows_call("sum", "cta", "{threadIdx.x: 128}", "float16", 16,
                           256, NULL);
    ec_out o = ec_emit(rows, c);
    ec_has(o.cuda, "uint4 v0 = *(const uint4 *)&A_ptr[");
    ec_has(o.cuda, "__ushort_as_half((unsigned short)(v0.w >> 16))");
    ec_has(o.tirx, "v0[T.ramp(0, 1, 8)] = A[row, T.ramp(lane * 8, 1, 8)]");
    ec_free(&o);
    free(c);

    c = rows_call("min", "cta", "{threadIdx.x: 32}", "bfloat16", 4, 100,
                  NULL);
    o = ec_emit(rows, c);
    ec_has(o.cuda, "uint2 v = *(const uint2 *)&A_ptr[");
    ec_has(o.cuda, "__ushort_as_bfloat16((unsigned short)(v.y))");
    ec_free(&o);
    free(c);

    c = rows_call("sum", "cta", "{threadIdx.x: 32}", "float32", 9, 7, NULL);
    o = ec_emit(rows, c);
    ec_lacks(o.cuda, "uint");
    ec_has(o.cuda, "A_ptr[row * 7 + red]");
    ec_free(&o);
    free(c);

    c = rows_call("sum", "cta", "{threadIdx.x: 32}", "float32", 8, 64,
                  "config: {vector_bytes: 0}\n");
    o = ec_emit(rows, c);
    ec_lacks(o.cuda, "uint");
    ec_free(&o);
    free(c);

    c = ec_parse("op: sum\ntarget: cuda\nscope: cta\n"
                 "launch: {threadIdx.x: 128}\nbuffers:\n"
                 "  A: {scope: shared, dtype: float32, shape: [12, 32]}\n"
                 "  B: {scope: shared, dtype: float32, shape: [12]}\n"
                 "dst: B\nsrc: \"A[0:12, 0:30]\"\n");
    o = ec_emit(rows, c);
    /* 7 float4 then elements 28 and 29, one per lane. */
    ec_has(o.cuda, "if (c < 7) {\n");
    ec_has(o.cuda, "  int t = lane;\n  if (t < 2) {\n    int red_1 = t + 28;\n"
                   "    acc1 = acc1 + A_ptr[row * 32 + red_1];\n");
    ec_free(&o);
    free(c);
}

/* Warp scope: the instance is a warp (tid % 32), __syncwarp ends it. */
static void test_warp(void **state)
{
    (void)state;
    td_call *c = rows_call("sum", "warp", "{threadIdx.x: 64}", "float32", 4,
                           64, NULL);
    ec_out o = ec_emit(rows, c);
    ec_has(o.cuda, "int tid = (int)threadIdx.x % 32;\n");
    ec_has(o.cuda, "__shfl_xor_sync(4294967295u, acc0, 4, 32)");
    ec_has(o.cuda, "__syncwarp();\n");
    ec_lacks(o.cuda, "__shared__");
    ec_free(&o);
    free(c);
}

/* The IR pieces on their own: misuse is an error, not wrong code. */
static void test_ir(void **state)
{
    (void)state;
    td_ir *ir = td_ir_new();
    int64_t shape[] = {4, 8};
    td_ir_buf *b = td_ir_buffer(ir, "X", TD_I64, "shared", 2, shape);
    td_expr *idx[] = {td_int(ir, 0), td_int(ir, 0)};
    /* int64 vectors are not supported. */
    assert_null(td_ir_let_vector(ir, "v", b, 2, idx, 4));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);

    ir = td_ir_new();
    b = td_ir_buffer(ir, "X", TD_F32, "shared", 2, shape);
    td_expr *idx2[] = {td_int(ir, 1), td_int(ir, 4)};
    td_var *v = td_ir_let_vector(ir, "v", b, 2, idx2, 4);
    assert_non_null(v);
    /* A vector is read through its lanes only. */
    assert_null(td_var_ref(ir, v));
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);

    ir = td_ir_new();
    b = td_ir_buffer(ir, "X", TD_F32, "shared", 2, shape);
    td_expr *idx3[] = {td_int(ir, 1), td_int(ir, 4)};
    v = td_ir_let_vector(ir, "v", b, 2, idx3, 2);
    td_ir_buf *s = td_ir_shared_scratch(ir, "part", TD_F32, 3);
    td_ir_store1(ir, s, td_binary(ir, TD_OP_XOR, td_int(ir, 3), td_int(ir, 1)),
                 td_vec_lane(ir, v, 1));
    td_ir_store1(ir, s, td_binary(ir, TD_OP_XOR, td_int(ir, 5), td_int(ir, 0)),
                 td_vec_lane(ir, v, 0));
    assert_null(td_vec_lane(ir, v, 2)); /* out of range */
    assert_int_equal(td_ir_status(ir), TD_EINVAL);
    td_ir_free(ir);

    ir = td_ir_new();
    b = td_ir_buffer(ir, "X", TD_F32, "shared", 2, shape);
    td_expr *idx4[] = {td_int(ir, 1), td_int(ir, 4)};
    v = td_ir_let_vector(ir, "v", b, 2, idx4, 2);
    s = td_ir_shared_scratch(ir, "part", TD_F32, 3);
    td_var *i = td_ir_let(ir, "i", TD_I32, td_int(ir, 1));
    td_ir_store1(ir, s,
                 td_binary(ir, TD_OP_XOR, td_var_ref(ir, i), td_int(ir, 1)),
                 td_vec_lane(ir, v, 1));
    /* Constant xor folds; xor with 0 drops. */
    td_ir_store1(ir, s, td_binary(ir, TD_OP_XOR, td_int(ir, 3), td_int(ir, 1)),
                 td_vec_lane(ir, v, 0));
    td_ir_store1(ir, s,
                 td_binary(ir, TD_OP_XOR, td_var_ref(ir, i), td_int(ir, 0)),
                 td_vec_lane(ir, v, 0));
    assert_int_equal(td_ir_status(ir), 0);
    char *cuda = NULL, *tirx = NULL;
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &cuda, NULL), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &tirx, NULL), 0);
    assert_string_equal(cuda,
                        "__shared__ float part[3];\n"
                        "uint2 v = *(const uint2 *)&X_ptr[12];\n"
                        "int i = 1;\n"
                        "part[i ^ 1] = __uint_as_float(v.y);\n"
                        "part[2] = __uint_as_float(v.x);\n"
                        "part[i] = __uint_as_float(v.x);\n");
    assert_string_equal(tirx,
                        "part = T.alloc_buffer((3,), \"float32\", "
                        "scope=\"shared\")\n"
                        "v = T.alloc_buffer((2,), \"float32\", scope=\"local\")\n"
                        "v[T.ramp(0, 1, 2)] = X[1, T.ramp(4, 1, 2)]\n"
                        "i: T.int32 = 1\n"
                        "part[i ^ 1] = v[1]\n"
                        "part[2] = v[0]\n"
                        "part[i] = v[0]\n");
    free(cuda);
    free(tirx);
    td_ir_free(ir);
}

/* Through the default rules: shared_rows ranks above shared. */
static void test_dispatch(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    td_call *c = rows_call("max", "cta", "{threadIdx.x: 128}", "float32", 64,
                           128, NULL);
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(td_dispatch(reg, c, &res, &d), 0);
    assert_string_equal(res.variant, "shared_rows");
    td_ir_free(res.ir);
    free(c);
    /* A partial warp goes to shared. */
    c = rows_call("max", "cta", "{threadIdx.x: 40}", "float32", 4, 64, NULL);
    memset(&res, 0, sizeof res);
    assert_int_equal(td_dispatch(reg, c, &res, &d), 0);
    assert_string_equal(res.variant, "shared");
    td_ir_free(res.ir);
    free(c);
    td_registry_free(reg);
}

static void test_alloc_failure(void **state)
{
    (void)state;
    td_call *c = rows_call("sum", "cta", "{threadIdx.x: 256}", "float16", 2,
                           16384, "accum: true\n");
    ec_alloc_torture(rows, c);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_bench_32x32),
        cmocka_unit_test(test_group_sizes),
        cmocka_unit_test(test_single_warp_width),
        cmocka_unit_test(test_one_block_knob),
        cmocka_unit_test(test_group_knob),
        cmocka_unit_test(test_fast_warp),
        cmocka_unit_test(test_warp_per_row),
        cmocka_unit_test(test_cross_warp),
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_warp),
        cmocka_unit_test(test_ir),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
