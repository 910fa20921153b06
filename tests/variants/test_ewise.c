/*
 * The elementwise family (variants/ewise_*.c): the ops' operand checks,
 * upstream's normalisation, the reg and smem plans' rejections and
 * choices, and what the emitters write.  Calls are built by hand.  The
 * op tables' rows (variants/ewise_table.h, and beside it the reduction
 * table variants/reduce_ops.h) are checked here too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ewise.h"
#include "fixture.h"
#include "reduce_ops.h"
#include "variants.h"

/* ---- helpers ------------------------------------------------------------ */

static void src_region(td_call *c, int i, int buf)
{
    c->srcs[i].kind = TD_OPERAND_REGION;
    fx_full(c, &c->srcs[i].region, buf);
    c->srcs[i].dtype = c->buffers[buf].dtype;
    c->srcs[i].pos = (td_pos){10 + i, 7};
    if (c->nsrcs <= i)
        c->nsrcs = i + 1;
}

static void src_literal(td_call *c, int i, td_dtype t, double v)
{
    c->srcs[i].kind = TD_OPERAND_LITERAL;
    c->srcs[i].dtype = t;
    c->srcs[i].value = v;
    c->srcs[i].ivalue = (int64_t)v;
    c->srcs[i].pos = (td_pos){10 + i, 7};
    if (c->nsrcs <= i)
        c->nsrcs = i + 1;
}

static void src_named(td_call *c, int i, const char *name, td_dtype t)
{
    c->srcs[i].kind = TD_OPERAND_SCALAR;
    c->srcs[i].dtype = t;
    strcpy(c->srcs[i].name, name);
    if (c->nsrcs <= i)
        c->nsrcs = i + 1;
}

static void set_layout(td_call *c, int buf, const char *text)
{
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_layout_parse(text, &c->buffers[buf].layout, &d), 0);
    c->buffers[buf].has_layout = true;
    snprintf(c->buffers[buf].layout_text, sizeof c->buffers[buf].layout_text,
             "%s", text);
}

static td_call *cta_call(const char *op, int64_t threads)
{
    td_call *c = fx_call(op, "cuda", TD_SCOPE_CTA);
    c->launch[TD_LAUNCH_TX].extent = threads;
    strcpy(c->arch, "sm_90a");
    c->sm_version = 90;
    c->naxes = 0;
    return c;
}

static bool check(const td_call *c, td_pos *where, char *why)
{
    const td_op_desc *op = td__ewise_op_named(c->op);
    assert_non_null(op);
    td_reason r;
    memset(&r, 0, sizeof r);
    *where = (td_pos){0, 0};
    bool ok = op->check(c, op, where, &r);
    strcpy(why, r.text);
    return ok;
}

/* Plans c with impl; returns the plan (caller frees) or NULL with why. */
static void *plan(const td_impl_desc *impl, const td_call *c, char *why)
{
    void *p = calloc(1, impl->plan_size);
    assert_non_null(p);
    td_reason r;
    memset(&r, 0, sizeof r);
    int rc = impl->plan(c, td__ewise_op_named(c->op), p, NULL, &r);
    strcpy(why, r.text);
    if (rc != 0) {
        assert_int_equal(rc, TD_EDECLINED);
        free(p);
        return NULL;
    }
    return p;
}

static void expect_decline(const td_impl_desc *impl, const td_call *c,
                           const char *want)
{
    char why[TD_REASON_MAX];
    void *p = plan(impl, c, why);
    if (p != NULL)
        fail_msg("%s accepted; expected \"%s\"", impl->name, want);
    if (strstr(why, want) == NULL)
        fail_msg("reason \"%s\" lacks \"%s\"", why, want);
    /* the predicate says the same */
    td_reason r;
    memset(&r, 0, sizeof r);
    assert_false(impl->preds[0].fn(c, NULL, NULL, &r));
    assert_string_equal(r.text, why);
}

typedef struct out {
    char *cuda, *tirx, *prelude;
} out;

static out emit(const td_impl_desc *impl, const td_call *c)
{
    char why[TD_REASON_MAX];
    void *p = plan(impl, c, why);
    if (p == NULL)
        fail_msg("%s declined: %s", impl->name, why);
    td_reason r;
    memset(&r, 0, sizeof r);
    assert_true(impl->preds[0].fn(c, NULL, NULL, &r));
    td_ir *ir = td_ir_new();
    assert_non_null(ir);
    int rc = impl->emit(c, td__ewise_op_named(c->op), p, ir, NULL, &r);
    if (rc != 0)
        fail_msg("emit %d: %s", rc, r.text);
    out o = {0};
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &o.cuda, &o.prelude), 0);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &o.tirx, NULL), 0);
    td_ir_free(ir);
    free(p);
    return o;
}

static void out_free(out *o)
{
    td_free(o->cuda);
    td_free(o->tirx);
    td_free(o->prelude);
}

#define HAS(text, want)                                                      \
    do {                                                                     \
        if (strstr((text), (want)) == NULL)                                  \
            fail_msg("missing \"%s\" in:\n%s", (want), (text));              \
    } while (0)
#define HASNT(text, want)                                                    \
    do {                                                                     \
        if (strstr((text), (want)) != NULL)                                  \
            fail_msg("unexpected \"%s\" in:\n%s", (want), (text));           \
    } while (0)

/* ---- the op table and the operand checks -------------------------------- */

static void test_op_table(void **state)
{
    (void)state;
    static const char *const names[] = {
        "zero", "fill", "reciprocal", "sqrt",  "exp",     "exp2", "log2", "silu",
        "add",  "sub",  "mul",        "fdiv",  "maximum", "cast", "fma"};
    assert_int_equal(td__ewise_ops_count, 15);
    for (size_t i = 0; i < 15; i++) {
        assert_string_equal(td__ewise_ops[i].name, names[i]);
        assert_int_equal(td__ewise_ops[i].kind, TD_OP_KIND_ELEMENTWISE);
        assert_non_null(td__ewise_ops[i].check);
        const ew_info *info = td__ewise_info(&td__ewise_ops[i]);
        assert_non_null(info);
        /* Every row carries the reference the self-checking programs
         * check against (tools/kernel/kernel_ewise.c). */
        assert_non_null(info->f);
        if (info->ref == EW_REF_BINARY || info->ref == EW_REF_FMA)
            assert_non_null(info->dt);
    }
    assert_null(td__ewise_op_named("sum"));
    static const td_op_desc sum = {.name = "sum", .kind = TD_OP_KIND_REDUCTION};
    assert_null(td__ewise_info(&sum));
}

/* The reduction table: each combiner once, each with its own reference
 * code, and the lookup the program generator uses. */
static void test_reduce_table(void **state)
{
    (void)state;
    static const char *const names[] = {"sum", "max", "min"};
    assert_int_equal(td__reduce_ops_count, 3);
    for (size_t i = 0; i < td__reduce_ops_count; i++) {
        const red_info *row = td__reduce_ops[i].data;
        assert_string_equal(td__reduce_ops[i].name, names[i]);
        assert_string_equal(row->name, names[i]);
        assert_int_equal(td__reduce_ops[i].kind, TD_OP_KIND_REDUCTION);
        assert_int_equal(td__reduce_ops[i].combiner, row->combiner);
        assert_ptr_equal(td__reduce_info(row->combiner), row);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(
                ((const red_info *)td__reduce_ops[j].data)->ref, row->ref);
    }
}

static void test_check_reasons(void **state)
{
    (void)state;
    td_call *c = cta_call("add", 128);
    int a = fx_buf(c, "A", "shared", TD_F32, 1, (int64_t)64);
    int b = fx_buf(c, "B", "shared", TD_F32, 1, (int64_t)64);
    fx_full(c, &c->dst, b);
    c->pos_srcs = (td_pos){9, 7};
    td_pos w;
    char why[TD_REASON_MAX];

    src_region(c, 0, a);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "add takes 2 sources, got 1");
    assert_int_equal(w.line, 9);

    src_literal(c, 0, TD_F32, 1.0);
    src_literal(c, 1, TD_F32, 2.0);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "both inputs are constants");

    strcpy(c->op, "sub");
    src_region(c, 1, a);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "non-commutative op sub cannot have constant lhs");
    assert_int_equal(w.line, 10);

    /* a smaller lhs region: commutative ops swap, others cannot */
    int s = fx_buf(c, "S", "shared", TD_F32, 1, (int64_t)1);
    src_region(c, 0, s);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "non-commutative op sub cannot swap to broadcast");
    strcpy(c->op, "mul");
    assert_true(check(c, &w, why));

    strcpy(c->op, "cast");
    c->nsrcs = 0;
    src_literal(c, 0, TD_F32, 1.0);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "cast src must be a buffer region");
    assert_int_equal(w.line, 10);

    strcpy(c->op, "exp");
    assert_false(check(c, &w, why));
    assert_string_equal(why, "exp src must be a buffer region");
    strcpy(c->op, "fill");
    assert_true(check(c, &w, why));

    strcpy(c->op, "silu");
    src_region(c, 0, a);
    c->bias.kind = TD_OPERAND_LITERAL;
    c->bias.dtype = TD_F32;
    c->bias.pos = (td_pos){14, 9};
    assert_false(check(c, &w, why));
    assert_string_equal(why, "silu takes no extras (bias and scale apply to "
                             "sqrt, exp, exp2 and log2)");
    assert_int_equal(w.line, 14);
    strcpy(c->op, "exp");
    assert_true(check(c, &w, why));
    c->scale.kind = TD_OPERAND_REGION;
    fx_full(c, &c->scale.region, a);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "scale must be a scalar (a literal or a named "
                             "scalar)");
    c->scale.kind = TD_OPERAND_NONE;
    c->bias.kind = TD_OPERAND_NONE;

    strcpy(c->op, "fma");
    assert_false(check(c, &w, why));
    assert_string_equal(why, "fma takes 3 sources (a*b + c), got 1");
    src_literal(c, 0, TD_F32, 1.0);
    src_region(c, 1, a);
    src_region(c, 2, a);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "fma src a must be a buffer region");

    strcpy(c->op, "zero");
    c->nsrcs = 0;
    assert_true(check(c, &w, why)); /* in place */
    strcpy(c->op, "silu");
    assert_false(check(c, &w, why));
    assert_string_equal(why, "silu takes 1 source, got 0");
    strcpy(c->op, "sqrt");
    src_region(c, 0, a);
    src_region(c, 1, a);
    assert_false(check(c, &w, why));
    assert_string_equal(why, "sqrt takes 0 or 1 sources, got 2");
    free(c);
}

static void test_parse_normalises(void **state)
{
    (void)state;
    td_call *c = cta_call("add", 128);
    int a = fx_buf(c, "A", "shared", TD_F16, 2, (int64_t)4, (int64_t)8);
    int r = fx_buf(c, "R", "shared", TD_F16, 2, (int64_t)1, (int64_t)8);
    int d = fx_buf(c, "D", "shared", TD_F16, 2, (int64_t)4, (int64_t)8);
    fx_full(c, &c->dst, d);
    src_literal(c, 0, TD_F32, 2.0);
    src_region(c, 1, a);
    ew_operands o;
    td_reason why;
    assert_true(td__ewise_parse(c, td__ewise_op_named("add"), &o, NULL, &why));
    assert_int_equal(o.n, 2);
    assert_int_equal(o.src[0].kind, TD_OPERAND_REGION); /* constant to rhs */
    assert_int_equal(o.src[1].kind, TD_OPERAND_LITERAL);
    assert_int_equal(o.compute, TD_F32); /* the f32 literal is widest */

    src_region(c, 0, r);
    src_region(c, 1, a);
    assert_true(td__ewise_parse(c, td__ewise_op_named("mul"), &o, NULL, &why));
    assert_int_equal(o.src[0].region.buffer, a); /* the bigger one first */
    assert_int_equal(o.compute, TD_F16);

    c->buffers[d].dtype = TD_BF16; /* a tie: dst wins */
    assert_true(td__ewise_parse(c, td__ewise_op_named("mul"), &o, NULL, &why));
    assert_int_equal(o.compute, TD_BF16);
    free(c);
}

/* ---- smem ---------------------------------------------------------------- */

static td_call *smem_add(int64_t threads)
{
    td_call *c = cta_call("add", threads);
    int a = fx_buf(c, "A", "shared", TD_F32, 2, (int64_t)16, (int64_t)64);
    int b = fx_buf(c, "B", "shared", TD_F32, 2, (int64_t)1, (int64_t)64);
    int d = fx_buf(c, "C", "shared", TD_F32, 2, (int64_t)16, (int64_t)64);
    fx_full(c, &c->dst, d);
    src_region(c, 0, a);
    src_region(c, 1, b);
    return c;
}

/* A [16, 128] tile minus its [16, 1] row column, as a softmax does: the
 * column's index is split over the loop, so every thread of a step reads
 * the same address (rmax[s], TVM's form) instead of computing fused / 128
 * each (7% of a softmax on the H200). */
static void test_smem_row_broadcast(void **state)
{
    (void)state;
    td_call *c = cta_call("sub", 128);
    int a = fx_buf(c, "A", "shared", TD_F32, 2, (int64_t)16, (int64_t)128);
    int r = fx_buf(c, "R", "shared", TD_F32, 2, (int64_t)16, (int64_t)1);
    fx_full(c, &c->dst, a);
    src_region(c, 0, a);
    src_region(c, 1, r);
    out o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "int fused = s * 128 + tid;");
    HAS(o.cuda, "A_ptr[fused] = A_ptr[fused] - R_ptr[s];");
    HAS(o.tirx, "R[s, 0]");
    out_free(&o);
    /* 96 threads: a step covers 3/4 of a row, the row is fused / 128 */
    c->launch[TD_LAUNCH_TX].extent = 96;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "if (fused < 2048)");
    HAS(o.cuda, "R_ptr[(s * 96 + tid) / 128]");
    out_free(&o);
    /* 256 threads: two rows a step, the thread's row within it */
    c->launch[TD_LAUNCH_TX].extent = 256;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "R_ptr[s * 2 + tid / 128]");
    out_free(&o);
    free(c);
}

static void test_smem_rejections(void **state)
{
    (void)state;
    td_call *c = smem_add(128);
    c->scope = TD_SCOPE_CLUSTER;
    expect_decline(&td__variant_ewise_smem, c, "unsupported scope cluster");
    c->scope = TD_SCOPE_CTA;
    c->launch[TD_LAUNCH_TX].extent = 16;
    expect_decline(&td__variant_ewise_smem, c,
                   "laneid narrowed to [0, 16) vs full [0, 32)");
    c->launch[TD_LAUNCH_TX].extent = 128;
    c->launch[TD_LAUNCH_TX].symbolic = true;
    strcpy(c->launch[TD_LAUNCH_TX].symbol, "n");
    expect_decline(&td__variant_ewise_smem, c, "non-static threadIdx.x extent: n");
    c->launch[TD_LAUNCH_TX].symbolic = false;
    /* No threadIdx.x at all: the reason names the call file's key. */
    c->launch[TD_LAUNCH_TX].present = false;
    expect_decline(&td__variant_ewise_smem, c,
                   "cta scope: no threadIdx.x in the call's launch (add "
                   "`launch: {threadIdx.x: N}`)");
    expect_decline(&td__variant_ewise_reg, c,
                   "cta scope: no threadIdx.x in the call's launch");
    c->launch[TD_LAUNCH_TX].present = true;
    strcpy(c->buffers[0].scope, "local");
    expect_decline(&td__variant_ewise_smem, c, "operand scope local != shared*");
    expect_decline(&td__variant_ewise_reg, c, "operand scope shared != local");
    strcpy(c->buffers[0].scope, "shared.dyn");
    c->srcs[1].region.extent[1] = 3;
    c->srcs[1].region.extent[0] = 1;
    expect_decline(&td__variant_ewise_smem, c,
                   "shape incompat: dim 1: op extent 3 vs anchor 64 (need "
                   "equal or 1)");
    src_region(c, 1, 1);
    c->srcs[0].region.extent[0] = 8;
    c->srcs[0].region.start[0] = 4;
    fx_slice(c, &c->dst, 0, (int64_t)0, (int64_t)8, (int64_t)0, (int64_t)64);
    /* dst A[0:8] overlaps src A[4:12] */
    expect_decline(&td__variant_ewise_smem, c, "overlap");
    free(c);

    c = smem_add(128);
    strcpy(c->op, "exp");
    c->nsrcs = 1;
    c->scale.kind = TD_OPERAND_LITERAL;
    c->scale.dtype = TD_F16;
    expect_decline(&td__variant_ewise_smem, c,
                   "scale dtype float16 != compute dtype float32");
    c->scale.kind = TD_OPERAND_NONE;
    for (int i = 0; i < 3; i++)
        c->buffers[i].dtype = TD_I32;
    expect_decline(&td__variant_ewise_smem, c,
                   "exp needs a floating-point compute dtype, got int32");
    free(c);

    c = smem_add(256);
    c->scope = TD_SCOPE_WARPGROUP;
    td_config_entry *e = &c->config[c->nconfig++];
    strcpy(e->key, "barrier_id");
    e->kind = TD_VALUE_INT;
    e->i = 15;
    expect_decline(&td__variant_ewise_smem, c, "barrier ids 15..16");
    strcpy(e->key, "rounding_mode");
    e->kind = TD_VALUE_STRING;
    strcpy(e->s, "rx");
    expect_decline(&td__variant_ewise_smem, c,
                   "rounding_mode must be one of rn, rz, rm, rp");
    free(c);
}

static void test_smem_cta_scalar(void **state)
{
    (void)state;
    td_call *c = smem_add(128);
    out o = emit(&td__variant_ewise_smem, c);
    /* 1024 elements, 128 threads, 4 floats (128 bits) a chunk, one
     * 16-byte access per operand */
    HAS(o.cuda, "int tid = (int)threadIdx.x;");
    HAS(o.cuda, "for (int s = 0; s < 2; ++s)");
    HASNT(o.cuda, "for (int vec");
    HAS(o.cuda, "int fused = s * 512 + tid * 4;");
    HAS(o.cuda, "uint4 va = *(const uint4 *)&A_ptr[fused];");
    HAS(o.cuda, "uint4 vb = *(const uint4 *)&B_ptr[tid * 4 % 64];");
    HAS(o.cuda, "__float_as_uint(__uint_as_float(va.w) + "
                "__uint_as_float(vb.w))");
    HAS(o.cuda, "*(uint4 *)&C_ptr[fused] = vr;");
    HAS(o.cuda, "__syncthreads();");
    HASNT(o.cuda, "if (fused");
    HAS(o.tirx, "vr[3] = va[3] + vb[3]");
    HAS(o.tirx, "C[fused // 64, T.ramp((s * 512 + tid * 4) % 64, 1, 4)] = "
                "vr[T.ramp(0, 1, 4)]");
    out_free(&o);
    /* a start off the vector: the scalar chunks again */
    c->dst.start[1] = 0;
    c->buffers[c->dst.buffer].shape[1] = 66;
    c->dst.start[1] = 2;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "for (int vec = 0; vec < 4; ++vec)");
    HASNT(o.cuda, "uint4");
    c->dst.start[1] = 0;
    c->buffers[c->dst.buffer].shape[1] = 64;
    out_free(&o);
    /* a per-thread share that is not whole: chunks of one, guarded */
    c->launch[TD_LAUNCH_TX].extent = 96;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "for (int s = 0; s < 11; ++s)");
    HAS(o.cuda, "if (fused < 1024)");
    HASNT(o.cuda, "vec");
    out_free(&o);
    free(c);
}

/* Swizzled shared operands: indexed through the swizzle; 16-byte vectors
 * only where the swizzle's XOR unit (2^m elements) holds a vector, else
 * element by element; a swizzle that would move elements past the buffer
 * is refused, as is a non-row-major tile under it, and float8 arithmetic. */
static void test_smem_swizzle(void **state)
{
    (void)state;
    td_call *c = smem_add(128);
    /* float32, 4 a vector (16 bytes): m = 2 keeps them whole */
    set_layout(c, 0, "ComposeLayout(2, 3, 4, TileLayout(S[(16, 64):(64, 1)]))");
    set_layout(c, 2, "S[(16, 64) : (64, 1)] + Swizzle(3, 2, 4)");
    out o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "uint4 va = *(const uint4 *)&A_ptr[fused ^ (fused / 64 % 8 * 4)];");
    HAS(o.cuda, "uint4 vb = *(const uint4 *)&B_ptr[tid * 4 % 64];");
    HAS(o.cuda, "*(uint4 *)&C_ptr[fused ^ (fused / 64 % 8 * 4)] = vr;");
    HAS(o.cuda, "// swizzled C: 16-byte vector accesses (each inside one "
                "16-byte XOR unit)");
    /* TIRx keeps the logical indices (the buffer's layout resolves them);
     * a swizzled buffer's vector access is a T.vectorized loop over its
     * lanes (TVM refuses a T.ramp index into a ComposeLayout), an
     * unswizzled one's stays one T.ramp access */
    HAS(o.tirx, "    for td_k in T.vectorized(4):\n"
                "        va[td_k] = A[fused // 64, fused % 64 + td_k]\n");
    HAS(o.tirx, "    for td_k in T.vectorized(4):\n"
                "        C[fused // 64, fused % 64 + td_k] = vr[td_k]\n");
    HAS(o.tirx, "vb[T.ramp(0, 1, 4)] = B[0, T.ramp(threadIdx.x * 4 % 64, 1, 4)]");
    HASNT(o.tirx, "C[fused // 64, T.ramp(");
    out_free(&o);
    /* m = 1: a unit of two floats splits the vector: elements */
    set_layout(c, 2, "S[(16, 64) : (64, 1)] + Swizzle(2, 1, 4)");
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "for (int vec = 0; vec < 4; ++vec)");
    HAS(o.cuda, "C_ptr[fused ^ (fused / 32 % 4 * 2)] = ");
    HAS(o.cuda, "A_ptr[fused ^ (fused / 64 % 8 * 4)]");
    HAS(o.cuda, "// swizzled C: element accesses (8-byte XOR unit)");
    HASNT(o.cuda, "uint4");
    out_free(&o);
    /* all below 2^(m+s) = 2^11: the identity, accepted (printed as is) */
    set_layout(c, 2, "S[(16, 64) : (64, 1)] + Swizzle(2, 2, 9)");
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "C_ptr[fused ^ (fused / 2048 % 4 * 4)]");
    out_free(&o);
    /* whole blocks: 16 x 48 = 768 elements are not blocks of 2^(m+b) =
     * 512, and 768 > 2^(m+s) */
    for (int i = 0; i < 3; i++)
        c->buffers[i].shape[1] = 48;
    c->dst.extent[1] = c->srcs[0].region.extent[1] =
        c->srcs[1].region.extent[1] = 48;
    set_layout(c, 0, "S[(16, 48) : (48, 1)]");
    set_layout(c, 2, "S[(16, 48) : (48, 1)] + Swizzle(5, 4, 5)");
    expect_decline(&td__variant_ewise_smem, c,
                   "the swizzle of C (S[(16, 48) : (48, 1)] + Swizzle(5, 4, "
                   "5)) would move elements past its end: its 768 elements "
                   "are not whole blocks of 512");
    set_layout(c, 2, "S[(16, 48) : (48, 1)] + Swizzle(4, 4, 4)");
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "C_ptr[fused ^ (fused / 256 % 16 * 16)]");
    out_free(&o);
    set_layout(c, 2, "ComposeLayout(3, 3, 3, TileLayout(S[(16, 64):(1, 16)]))");
    expect_decline(&td__variant_ewise_smem, c,
                   "layout of C is not row-major storage");
    free(c);

    /* float8: a cast converts (element by element); add would compute in
     * float8 and is refused */
    c = smem_add(128);
    strcpy(c->op, "cast");
    c->nsrcs = 1;
    c->buffers[0].dtype = TD_F8E4M3;
    c->buffers[2].dtype = TD_F16;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "C_ptr[fused] = __float2half_rn((float)A_ptr[fused]);");
    HAS(o.prelude, "#include <cuda_fp8.h>");
    HAS(o.tirx, "T.Cast(\"float16\", A[");
    out_free(&o);
    c->buffers[0].dtype = TD_F16;
    c->buffers[2].dtype = TD_F8E5M2;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "C_ptr[fused] = __nv_fp8_e5m2((float)A_ptr[fused]);");
    out_free(&o);
    free(c);
    c = smem_add(128);
    for (int i = 0; i < 3; i++)
        c->buffers[i].dtype = TD_F8E4M3;
    expect_decline(&td__variant_ewise_smem, c,
                   "add computes in float8_e4m3fn, which has no arithmetic "
                   "in CUDA (cast the operands to float16 or float32 first)");
    /* a wider compute dtype converts the float8 operand */
    c->buffers[1].dtype = TD_F32;
    c->buffers[2].dtype = TD_F32;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "(float)A_ptr[");
    out_free(&o);
    free(c);
}

static void test_smem_packed(void **state)
{
    (void)state;
    td_call *c = smem_add(128);
    c->sm_version = 100;
    strcpy(c->arch, "sm_100a");
    out o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "int fused = s * 256 + tid * 2;");
    HAS(o.cuda, "tvm_builtin_ptx_mov_b64_pack(A_ptr[fused], A_ptr[fused + 1])");
    HAS(o.cuda, "tvm_builtin_ptx_add_rn_ftz_f32x2(pa, pb)");
    HAS(o.prelude, "add.rn.ftz.f32x2");
    HAS(o.cuda, "C_ptr[fused + 1] = tvm_builtin_ptx_mov_b64_unpack_hi(pr);");
    out_free(&o);
    td_config_entry *e = &c->config[c->nconfig++];
    strcpy(e->key, "rounding_mode");
    e->kind = TD_VALUE_STRING;
    strcpy(e->s, "rz");
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.prelude, "add.rz.ftz.f32x2");
    out_free(&o);
    /* fdiv has no packed form */
    strcpy(c->op, "fdiv");
    src_region(c, 1, 0);
    o = emit(&td__variant_ewise_smem, c);
    HASNT(o.cuda, "f32x2");
    HAS(o.cuda, "__uint_as_float(va.x) / __uint_as_float(vb.x)");
    out_free(&o);
    /* a float16 operand: no f32x2 */
    strcpy(c->op, "add");
    src_region(c, 1, 1);
    c->buffers[1].dtype = TD_F16;
    o = emit(&td__variant_ewise_smem, c);
    HASNT(o.cuda, "f32x2");
    out_free(&o);
    free(c);
}

static void test_smem_cast_pairs(void **state)
{
    (void)state;
    td_call *c = cta_call("cast", 32);
    int a = fx_buf(c, "A", "shared", TD_F32, 1, (int64_t)130);
    int h = fx_buf(c, "H", "shared", TD_F16, 1, (int64_t)128);
    fx_full(c, &c->dst, h);
    fx_slice(c, &c->srcs[0].region, a, (int64_t)2, (int64_t)130);
    c->srcs[0].kind = TD_OPERAND_REGION;
    c->nsrcs = 1;
    out o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "__float22half2_rn");
    out_free(&o);
    /* an odd start: no paired conversion, elementwise casts instead */
    fx_slice(c, &c->srcs[0].region, a, (int64_t)1, (int64_t)129);
    o = emit(&td__variant_ewise_smem, c);
    HASNT(o.cuda, "__float22half2_rn");
    HAS(o.cuda, "H_ptr[fused] = __float2half_rn(A_ptr[fused + 1]);");
    out_free(&o);
    free(c);
}

static void test_smem_scopes(void **state)
{
    (void)state;
    td_call *c = smem_add(256);
    c->scope = TD_SCOPE_WARPGROUP;
    out o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "int tid = (int)threadIdx.x % 128;");
    HAS(o.cuda, "bar.sync");
    HAS(o.cuda, "8 + (int)threadIdx.x / 128");
    out_free(&o);
    c->scope = TD_SCOPE_WARP;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "int tid = (int)threadIdx.x % 32;");
    HAS(o.cuda, "__syncwarp();");
    out_free(&o);
    c->scope = TD_SCOPE_THREAD;
    o = emit(&td__variant_ewise_smem, c);
    HASNT(o.cuda, "tid");
    HASNT(o.cuda, "sync");
    HAS(o.cuda, "for (int s = 0; s < 256; ++s)");
    out_free(&o);
    free(c);
}

static void test_smem_scalars(void **state)
{
    (void)state;
    td_call *c = smem_add(128);
    strcpy(c->op, "mul");
    src_named(c, 0, "alpha", TD_F32);
    src_region(c, 1, 0);
    out o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "__float_as_uint(__uint_as_float(va.x) * alpha)");
    out_free(&o);
    /* float16 dst and source, a float32 literal: computed in float32 */
    c->buffers[0].dtype = TD_F16;
    c->buffers[2].dtype = TD_F16;
    src_region(c, 0, 0);
    src_literal(c, 1, TD_F32, 0.5);
    c->srcs[1].dtype = TD_F32;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.cuda, "__float2half_rn((float)__ushort_as_half((unsigned short)"
                "(va.x)) * 5.000000e-01f)");
    out_free(&o);
    /* zero in place; fill with an int literal */
    strcpy(c->op, "zero");
    c->nsrcs = 0;
    o = emit(&td__variant_ewise_smem, c);
    HAS(o.tirx, "vr[7] = T.float16(0)");
    HASNT(o.tirx, "va");
    out_free(&o);
    free(c);
}

/* ---- reg ----------------------------------------------------------------- */

static td_call *reg_warp(const char *op)
{
    td_call *c = fx_call(op, "cuda", TD_SCOPE_WARP);
    c->launch[TD_LAUNCH_TX].extent = 32;
    strcpy(c->arch, "sm_90a");
    c->sm_version = 90;
    c->naxes = 0;
    int x = fx_buf(c, "X", "local", TD_F32, 2, (int64_t)32, (int64_t)8);
    int y = fx_buf(c, "Y", "local", TD_F32, 2, (int64_t)32, (int64_t)8);
    set_layout(c, x, "S[(32, 8) : (1@laneid, 1)]");
    set_layout(c, y, "S[(32, 8) : (1@laneid, 1)]");
    fx_full(c, &c->dst, y);
    src_region(c, 0, x);
    return c;
}

static void test_reg_rejections(void **state)
{
    (void)state;
    td_call *c = reg_warp("exp");
    c->buffers[1].has_layout = false;
    expect_decline(&td__variant_ewise_reg, c,
                   "warp-scope op needs a warp-level operand whose layout "
                   "carries thread axes (laneid composing to 32:1)");
    set_layout(c, 1, "S[(32, 8) : (2@laneid, 1)]");
    expect_decline(&td__variant_ewise_reg, c,
                   "warp-scope op operand thread axes do not tile a complete "
                   "32:1 (sorted by stride: expected 1, got 2)");
    set_layout(c, 1, "S[(32, 8) : (1@tx, 1)]");
    expect_decline(&td__variant_ewise_reg, c,
                   "warp-scope op operand carries thread axes ['tx']; after "
                   "canonicalization a warp-level layout must use only "
                   "'laneid'");
    set_layout(c, 1, "S[(32, 8) : (1@laneid, 1)]");
    c->buffers[0].has_layout = false;
    expect_decline(&td__variant_ewise_reg, c,
                   "thread part mismatch between anchor and operand after "
                   "alignment");
    set_layout(c, 0, "S[(32, 8) : (1@laneid, 1)] + R[2 : 1@warpid]");
    expect_decline(&td__variant_ewise_reg, c,
                   "replica sig mismatch (different number of replica iters)");
    set_layout(c, 0, "S[(32, 8) : (1@laneid, 1)]");
    c->buffers[0].shape[1] = 4;
    set_layout(c, 0, "S[(32, 4) : (1@laneid, 1)]");
    src_region(c, 0, 0);
    expect_decline(&td__variant_ewise_reg, c,
                   "shape incompat: dim 1: op extent 4 vs anchor 8");
    c->scope = TD_SCOPE_CLUSTER;
    expect_decline(&td__variant_ewise_reg, c, "unsupported scope cluster");
    free(c);

    /* hostile: a 2^40 stride sliced 2^30 elements in overflows int64 */
    c = fx_call("exp", "cuda", TD_SCOPE_THREAD);
    c->naxes = 0;
    int h = fx_buf(c, "H", "local", TD_F32, 1, (int64_t)1 << 31);
    c->buffers[h].has_layout = true;
    c->buffers[h].layout.nshard = 1;
    c->buffers[h].layout.shard[0] =
        (td_iter){(int64_t)1 << 31, (int64_t)1 << 40, TD_AXIS_M};
    fx_slice(c, &c->dst, h, (int64_t)1 << 30, ((int64_t)1 << 30) + 1);
    expect_decline(&td__variant_ewise_reg, c, "cannot be sliced");
    free(c);
}

static void test_reg_warp(void **state)
{
    (void)state;
    td_call *c = reg_warp("exp");
    out o = emit(&td__variant_ewise_reg, c);
    HAS(o.cuda, "for (int f = 0; f < 8; ++f) {\n  Y_ptr[f] = expf(X_ptr[f]);");
    HAS(o.tirx, "Y[f] = T.exp(X[f])");
    HASNT(o.cuda, "sync");
    out_free(&o);
    /* a permuted register order in the source: indices follow its layout */
    c->buffers[0].shape[0] = 32;
    set_layout(c, 0, "S[(32, 2, 4) : (1@laneid, 1, 2)]");
    c->buffers[0].ndim = 3;
    c->buffers[0].shape[1] = 2;
    c->buffers[0].shape[2] = 4;
    /* a [32, 8] view of it is not this call's business: use a 3-D dst */
    c->buffers[1].ndim = 3;
    c->buffers[1].shape[1] = 2;
    c->buffers[1].shape[2] = 4;
    set_layout(c, 1, "S[(32, 2, 4) : (1@laneid, 4, 1)]");
    fx_full(c, &c->dst, 1);
    src_region(c, 0, 0);
    o = emit(&td__variant_ewise_reg, c);
    HAS(o.cuda, "Y_ptr[f] = expf(X_ptr[f % 4 * 2 + f / 4]);");
    out_free(&o);
    free(c);
}

static void test_reg_packed_and_broadcast(void **state)
{
    (void)state;
    td_call *c = reg_warp("mul");
    src_literal(c, 1, TD_F32, 3.0);
    out o = emit(&td__variant_ewise_reg, c);
    HASNT(o.cuda, "f32x2");
    out_free(&o);
    c->sm_version = 100;
    o = emit(&td__variant_ewise_reg, c);
    HAS(o.cuda, "for (int f = 0; f < 4; ++f)");
    HAS(o.cuda, "tvm_builtin_ptx_mov_b64_pack(X_ptr[f * 2], X_ptr[f * 2 + 1])");
    HAS(o.prelude, "mul.rn.ftz.f32x2");
    out_free(&o);
    free(c);

    /* thread scope, a [4, 8] register tile plus a [8] bias row */
    c = fx_call("exp", "cuda", TD_SCOPE_THREAD);
    c->naxes = 0;
    int x = fx_buf(c, "X", "local", TD_F32, 2, (int64_t)4, (int64_t)8);
    int b = fx_buf(c, "b", "local", TD_F32, 1, (int64_t)8);
    fx_full(c, &c->dst, x);
    c->bias.kind = TD_OPERAND_REGION;
    fx_full(c, &c->bias.region, b);
    c->bias.dtype = TD_F32;
    c->scale.kind = TD_OPERAND_SCALAR;
    c->scale.dtype = TD_F32;
    strcpy(c->scale.name, "scale");
    o = emit(&td__variant_ewise_reg, c);
    HAS(o.cuda, "for (int f = 0; f < 32; ++f) {\n  X_ptr[f] = expf(X_ptr[f] * "
                "scale + b_ptr[f % 8]);");
    out_free(&o);
    free(c);
}

static void test_reg_cast_pairs(void **state)
{
    (void)state;
    td_call *c = reg_warp("cast");
    c->buffers[1].dtype = TD_BF16;
    out o = emit(&td__variant_ewise_reg, c);
    HAS(o.cuda, "__float22bfloat162_rn");
    HAS(o.cuda, "for (int f = 0; f < 4; ++f)");
    out_free(&o);
    free(c);
}

/* Dispatch through the default registry picks by storage scope. */
static void test_dispatch(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);
    td_call *c = smem_add(128);
    td_dispatch_result res;
    assert_int_equal(td_dispatch(reg, c, &res, &d), 0);
    assert_string_equal(res.variant, "smem");
    td_ir_free(res.ir);
    free(c);
    c = reg_warp("sqrt");
    assert_int_equal(td_dispatch(reg, c, &res, &d), 0);
    assert_string_equal(res.variant, "reg");
    td_ir_free(res.ir);
    free(c);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_table),
        cmocka_unit_test(test_reduce_table),
        cmocka_unit_test(test_check_reasons),
        cmocka_unit_test(test_parse_normalises),
        cmocka_unit_test(test_smem_row_broadcast),
        cmocka_unit_test(test_smem_rejections),
        cmocka_unit_test(test_smem_cta_scalar),
        cmocka_unit_test(test_smem_swizzle),
        cmocka_unit_test(test_smem_packed),
        cmocka_unit_test(test_smem_cast_pairs),
        cmocka_unit_test(test_smem_scopes),
        cmocka_unit_test(test_smem_scalars),
        cmocka_unit_test(test_reg_rejections),
        cmocka_unit_test(test_reg_warp),
        cmocka_unit_test(test_reg_packed_and_broadcast),
        cmocka_unit_test(test_reg_cast_pairs),
        cmocka_unit_test(test_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
