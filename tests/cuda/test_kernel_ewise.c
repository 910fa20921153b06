/*
 * Unit tests of td_kernel_program for elementwise calls (tools/kernel/
 * kernel_ewise.c): the buffers and scalars a program stages, the generators, the
 * reference's tables and tolerances, the refusals.  A fake elementwise
 * variant lowers the calls (thread scope, 1-D register buffers), so these
 * tests do not depend on the real modules; the real modules' programs run
 * in the cuda suites (tests/conformance/ewise_*.yaml).
 *
 * With TD_EWISE_DUMP=DIR set, every program is also written to
 * DIR/NAME.cu (for running by hand on the CPU stand-in or a GPU).
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
#include "tiledispatch/td_kernel.h"

static td_call *parse(const char *name, const char *text)
{
    td_call *c = NULL;
    td_diag d;
    td_diag_clear(&d);
    if (td_call_parse(name, text, strlen(text), &c, &d) != 0)
        fail_msg("call did not parse: %s", d.msg);
    return c;
}

/* The fake lowering: dst[i] = op(operands at i), i over the 1-D dst
 * region; a region operand of extent 1 broadcasts. */
static td_expr *operand(td_ir *ir, const td_call *c, const td_operand *o,
                        const td_var *i)
{
    switch (o->kind) {
    case TD_OPERAND_REGION: {
        const td_buffer *b = &c->buffers[o->region.buffer];
        const td_ir_buf *ib = td_ir_buffer(ir, b->name, b->dtype, b->scope,
                                           b->ndim, b->shape);
        td_expr *idx = o->region.extent[0] == 1
                           ? td_int(ir, o->region.start[0])
                           : td_add(ir, td_int(ir, o->region.start[0]),
                                    td_var_ref(ir, i));
        return td_load1(ir, ib, idx);
    }
    case TD_OPERAND_LITERAL:
        return td_const_f(ir, o->dtype, o->value);
    case TD_OPERAND_SCALAR:
        return td_param(ir, o->name, o->dtype);
    default:
        return td_const_f(ir, TD_F32, 0.0); /* absent: refused later */
    }
}

static int fake_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user,
                     td_reason *why)
{
    (void)plan;
    (void)op;
    (void)user;
    (void)why;
    const td_buffer *db = &call->buffers[call->dst.buffer];
    const td_ir_buf *d = td_ir_buffer(ir, db->name, db->dtype, db->scope,
                                      db->ndim, db->shape);
    td_var *i = td_ir_for(ir, "i", td_int(ir, call->dst.extent[0]),
                          TD_LOOP_SERIAL);
    td_expr *v;
    if (strcmp(call->op, "zero") == 0 || call->nsrcs == 0) {
        v = td_const_f(ir, db->dtype, 0.0);
    } else if (strcmp(call->op, "add") == 0) {
        v = td_binary(ir, TD_OP_ADD, operand(ir, call, &call->srcs[0], i),
                      operand(ir, call, &call->srcs[1], i));
    } else if (strcmp(call->op, "exp") == 0) {
        td_expr *t = operand(ir, call, &call->srcs[0], i);
        if (call->scale.kind != TD_OPERAND_NONE)
            t = td_binary(ir, TD_OP_MUL, t,
                          operand(ir, call, &call->scale, i));
        if (call->bias.kind != TD_OPERAND_NONE)
            t = td_binary(ir, TD_OP_ADD, t, operand(ir, call, &call->bias, i));
        v = td_extern_call(ir, "expf", TD_F32, 1, &t);
    } else {
        v = operand(ir, call, &call->srcs[0], i);
    }
    td_expr *idx = td_add(ir, td_int(ir, call->dst.start[0]), td_var_ref(ir, i));
    td_ir_store1(ir, d, idx, v);
    td_ir_end_for(ir);
    return td_ir_status(ir);
}

static td_registry *fake_registry(void)
{
    td_registry *reg = NULL;
    assert_int_equal(td_registry_new_empty(&reg), 0);
    static const char *const names[] = {"zero", "add", "exp", "cast", "sum",
                                        "frobnicate"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        td_op_desc op = {.name = names[k],
                         .kind = strcmp(names[k], "sum") == 0
                                     ? TD_OP_KIND_REDUCTION
                                     : TD_OP_KIND_ELEMENTWISE,
                         .combiner = TD_COMBINE_SUM};
        assert_int_equal(td_register_op(reg, &op), 0);
    }
    td_impl_desc impl = {.name = "fake", .emit = fake_emit};
    assert_int_equal(td_register_impl(reg, &impl), 0);
    static const char rules[] = "version: 1\n"
                                "variants:\n"
                                "  - name: fake\n"
                                "    ops: [zero, add, exp, cast, sum, frobnicate]\n"
                                "    target: cuda\n"
                                "    priority: 1\n";
    td_diag d;
    td_diag_clear(&d);
    if (td_registry_load_rules_text(reg, "fake.yaml", rules, sizeof rules - 1,
                                    &d) != 0)
        fail_msg("fake rules: %s", d.msg);
    return reg;
}

/* A call over buffers A, B (float32[8]) and C; the operands are set by
 * hand (the loader of `srcs:` comes with the elementwise model). */
static td_call *ewise_call(const char *name, const char *op,
                           const char *cdtype)
{
    char text[1024];
    snprintf(text, sizeof text,
             "op: sum\n"
             "target: cuda\n"
             "arch: sm_90a\n"
             "scope: thread\n"
             "launch: {threadIdx.x: 4, blockIdx.x: 2}\n"
             "buffers:\n"
             "  A: {scope: local, dtype: float32, shape: [8]}\n"
             "  B: {scope: local, dtype: float32, shape: [8]}\n"
             "  C: {scope: local, dtype: %s, shape: [10]}\n"
             "dst: \"C[1:9]\"\n"
             "src: A\n",
             cdtype);
    td_call *c = parse(name, text);
    snprintf(c->op, sizeof c->op, "%s", op);
    c->nsrcs = 0;
    c->src.buffer = -1;
    return c;
}

static td_operand region(const td_call *c, const char *buf, int64_t start,
                         int64_t extent)
{
    td_operand o;
    memset(&o, 0, sizeof o);
    o.kind = TD_OPERAND_REGION;
    for (int i = 0; i < c->nbuffers; i++)
        if (strcmp(c->buffers[i].name, buf) == 0)
            o.region.buffer = i;
    o.dtype = c->buffers[o.region.buffer].dtype;
    o.region.ndim = 1;
    o.region.start[0] = start;
    o.region.extent[0] = extent;
    return o;
}

static td_operand literal(td_dtype t, double v)
{
    td_operand o;
    memset(&o, 0, sizeof o);
    o.kind = TD_OPERAND_LITERAL;
    o.dtype = t;
    o.value = v;
    o.ivalue = (int64_t)v;
    return o;
}

static td_operand scalar(const char *name, td_dtype t)
{
    td_operand o;
    memset(&o, 0, sizeof o);
    o.kind = TD_OPERAND_SCALAR;
    o.dtype = t;
    snprintf(o.name, sizeof o.name, "%s", name);
    return o;
}

static void assert_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("missing from the program: %s", needle);
}

static char *program(const td_registry *reg, const td_call *c)
{
    char *prog = NULL;
    td_diag d;
    td_diag_clear(&d);
    if (td_kernel_program(reg, c, &prog, &d) != 0)
        fail_msg("kernel: %s", d.msg);
    const char *dir = getenv("TD_EWISE_DUMP");
    if (dir != NULL && dir[0] != '\0' && strncmp(c->file, "text_", 5) != 0) {
        char path[512];
        const char *base = strrchr(c->file, '/');
        base = base ? base + 1 : c->file;
        snprintf(path, sizeof path, "%s/%.*s.cu", dir,
                 (int)(strlen(base) - 5), base);
        FILE *f = fopen(path, "w");
        if (f != NULL) {
            fputs(prog, f);
            fclose(f);
        }
    }
    return prog;
}

static void test_binary(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = ewise_call("ew_add.yaml", "add", "float32");
    c->nsrcs = 2;
    c->srcs[0] = region(c, "A", 0, 8);
    c->srcs[1] = region(c, "B", 3, 1); /* broadcast */
    char *prog = program(reg, c);
    assert_contains(prog, " * Elementwise: PASS also prints max_ulp");
    /* Sources, then the dst; the dst starts as the sentinel. */
    assert_contains(prog, "__global__ void td_kernel(const float *__restrict__ "
                          "td_in_A, float *td_out_A,\n");
    assert_contains(prog, "v_in_A[i] = td_data_random ? "
                          "td_rand_normal() : td_ew_grid(8, -16, 16);\n");
    assert_contains(prog, "v_in_C[i] = TD_EW_SENTINEL;\n");
    assert_contains(prog, "#define TD_EW_SENTINEL -1984 ");
    assert_contains(prog, "    {1, 1, {8}, {3}, {1}, 0.0, 0}, /* B */\n");
    assert_contains(prog, "r = a + b;");
    /* add is exact on the exact grid: == where the result is
     * representable. */
    assert_contains(prog, "#define TD_EW_EXACT_OP 1 ");
    assert_contains(prog, "#define TD_ROUNDS 2 ");
    /* float32 add of float32 operands: correctly rounded, exact. */
    assert_contains(prog, "#define TD_EW_ULPS(r) 0\n");
    assert_contains(prog, "td_ew_reference(td_bufs, td_bufs[2], td_want, "
                          "td_tol);\n");
    assert_contains(prog, "td_ew_check(\"C\", inst, e, t, s, ");
    assert_contains(prog, "td_check(\"A\", inst, e, t, s, ");
    assert_contains(prog, "printf(\"PASS %s max_err=%.3g max_ulp=%.3g%s "
                          "max_err/tol=%.3g\\n\"");
    assert_null(strstr(prog, "td_reference("));
    td_free(prog);
    /* A float16 dst: 16-bit compute, one ulp; a literal operand. */
    td_call_free(c);
    c = ewise_call("ew_add_f16.yaml", "add", "float16");
    c->nsrcs = 2;
    c->srcs[0] = region(c, "A", 0, 8);
    c->srcs[1] = literal(TD_F32, 0.1);
    prog = program(reg, c);
    assert_contains(prog, "#define TD_C_P 11 ");
    assert_contains(prog, "#define TD_EW_ULPS(r) 1\n");
    assert_contains(prog, "v_in_C[i] = TD_EW_SENTINEL;\n");
    /* The literal as float32 holds it. */
    assert_contains(prog, "    {-1, 0, {0}, {0}, {0}, 0.10000000149011612, 1}, "
                          "/* literal */\n");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

static void test_unary_extras_scalars(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = ewise_call("ew_exp_scalar.yaml", "exp", "float32");
    c->nsrcs = 1;
    c->srcs[0] = region(c, "A", 0, 8);
    c->scale = scalar("alpha", TD_F32);
    c->bias = region(c, "B", 0, 8);
    char *prog = program(reg, c);
    assert_contains(prog, " * scalar:  alpha = 0.5 (float32), a kernel parameter\n");
    /* exp keeps its ULP bound on exact data too. */
    assert_contains(prog, "#define TD_EW_EXACT_OP 0 ");
    assert_contains(prog, "float *td_out_C,\n                          int *td_guard, int td_gpat,\n                          const float alpha)\n");
    assert_contains(prog, "    const float td_sv_alpha = td_from_double<float>(0.5);\n");
    assert_contains(prog, "d_out_C, d_guard, td_round % 2 ? 0xCF : 0x4F, td_sv_alpha);\n");
    assert_contains(prog, "td_data_random ? td_ew_unif(-4.0, 4.0) : "
                          "td_ew_grid(8, -16, 16)");
    assert_contains(prog, "td_data_random ? td_ew_unif(-1.0, 1.0) : "
                          "td_ew_grid(8, -8, 8)");
    assert_contains(prog, "    const double t = x * s + b;\n    r = exp(t); d = r;\n");
    assert_contains(prog, "#define TD_EW_ULPS(r) (2 + ceil(1.2 * "
                          "fabs(td_ew_arg(v))))\n");
    assert_contains(prog, "    return v[0] * v[2] + v[1];\n");
    td_free(prog);
    td_call_free(c);
    /* A literal scale: a program the CPU stand-in can run. */
    c = ewise_call("ew_exp.yaml", "exp", "float32");
    c->nsrcs = 1;
    c->srcs[0] = region(c, "A", 0, 8);
    c->scale = literal(TD_F32, 0.75);
    c->bias = region(c, "B", 0, 8);
    prog = program(reg, c);
    assert_contains(prog, "    {-1, 0, {0}, {0}, {0}, 0.75, 0}, /* literal */\n");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

static void test_in_place_and_zero(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = ewise_call("ew_inplace.yaml", "add", "float32");
    c->nsrcs = 2;
    c->srcs[0] = region(c, "C", 1, 8);
    c->srcs[1] = region(c, "C", 1, 8);
    char *prog = program(reg, c);
    /* One buffer, staged once with data (not the sentinel). */
    assert_contains(prog, "__global__ void td_kernel(const float *__restrict__ "
                          "td_in_C, float *td_out_C,\n                          int *td_guard, int td_gpat)\n");
    assert_contains(prog, "#define TD_EW_SENTINEL NAN ");
    assert_null(strstr(prog, "= TD_EW_SENTINEL;"));
    td_free(prog);
    td_call_free(c);
    c = ewise_call("ew_zero.yaml", "zero", "int8");
    prog = program(reg, c);
    assert_contains(prog, "v_in_C[i] = TD_EW_SENTINEL;\n");
    assert_contains(prog, "#define TD_EW_SENTINEL 127 ");
    assert_contains(prog, "#define TD_DST_P 0 ");
    assert_contains(prog, "#define TD_EW_ULPS(r) 0\n");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

/* Thread scope, shared buffers: 64 threads' copies of 8 KiB do not fit in
 * 227 KiB; the program launches 28 threads. */
static void test_thread_shared_fewer_threads(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = parse("text_sh.yaml",
                       "op: sum\n"
                       "target: cuda\n"
                       "scope: thread\n"
                       "launch: {threadIdx.x: 64}\n"
                       "buffers:\n"
                       "  A: {scope: shared, dtype: float16, shape: [2048]}\n"
                       "  B: {scope: shared, dtype: float16, shape: [2048]}\n"
                       "dst: A\n"
                       "src: B\n");
    snprintf(c->op, sizeof c->op, "add");
    c->nsrcs = 2;
    c->srcs[0] = region(c, "A", 0, 2048);
    c->srcs[1] = region(c, "B", 0, 2048);
    char *prog = program(reg, c);
    assert_contains(prog, " * The call launches 64 threads a block; their "
                          "shared copies do not fit,\n"
                          " * so the program launches 28 (thread scope: the "
                          "body does not depend on it).\n");
    assert_contains(prog, "#define TD_IPB 28 ");
    assert_contains(prog, "td_kernel<<<dim3(1, 1, 1), dim3(28, 1, 1), 230272>>>");
    td_free(prog);
    td_call_free(c);
    td_registry_free(reg);
}

static void expect_refusal(const td_registry *reg, td_call *c,
                           const char *msg)
{
    char *prog = (char *)1;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_kernel_program(reg, c, &prog, &d), TD_EINVAL);
    assert_null(prog);
    if (strstr(d.msg, msg) == NULL)
        fail_msg("message '%s' lacks '%s'", d.msg, msg);
    td_call_free(c);
}

static void test_refusals(void **state)
{
    (void)state;
    td_registry *reg = fake_registry();
    td_call *c = ewise_call("r1.yaml", "frobnicate", "float32");
    expect_refusal(reg, c, "kernel: no reference for the elementwise op "
                           "'frobnicate'");
    c = ewise_call("r2.yaml", "add", "float32");
    c->nsrcs = 1;
    c->srcs[0] = region(c, "A", 0, 8);
    expect_refusal(reg, c, "kernel: add takes 2 source operands, the call "
                           "has 1");
    c = ewise_call("r3.yaml", "add", "float32");
    c->nsrcs = 2;
    c->srcs[0] = region(c, "A", 0, 8);
    c->srcs[1] = region(c, "B", 0, 4);
    expect_refusal(reg, c, "kernel: source 1 region extent 4 (dim 0) does "
                           "not broadcast to the dst region's 8");
    c = ewise_call("r4.yaml", "add", "float32");
    c->nsrcs = 2;
    c->srcs[0] = region(c, "A", 0, 8);
    c->srcs[1] = scalar("td_x", TD_F32);
    expect_refusal(reg, c, "kernel: scalar name 'td_x' is not a short C "
                           "identifier");
    c = ewise_call("r5.yaml", "add", "float32");
    c->nsrcs = 2;
    c->srcs[0] = region(c, "A", 0, 8);
    c->srcs[1] = scalar("B", TD_F32);
    expect_refusal(reg, c, "kernel: scalar name 'B' collides with buffer B");
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_unary_extras_scalars),
        cmocka_unit_test(test_in_place_and_zero),
        cmocka_unit_test(test_thread_shared_fewer_threads),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
