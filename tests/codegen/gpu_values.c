/*
 * Checks the values the printed CUDA of the elementwise builders computes,
 * on a GPU: every cast between two dtypes, the four paired casts, every
 * value op of every dtype, the math functions of the floats and a
 * parameter, each a kernel over edge inputs (gpu_values_ref.h), compared
 * with exact, correctly rounded references computed on the host.
 *
 * Usage: codegen_gpu_values NVCC REFDIR OUTDIR [--run]
 * writes OUTDIR/gpu_values.cu (REFDIR holds gpu_values_ref.h), compiles it
 * for sm_90 with NVCC and, with --run, runs it: exit 0 when every value
 * matched, 1 otherwise, 77 without a CUDA device.  An empty NVCC means
 * nvcc was not found: SKIP, exit 77.  Not part of a plain `meson test`
 * (suite cuda-full compiles it; the run needs a GPU).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tiledispatch.h"
#include "codegen_internal.h"

enum kind { K_CAST, K_PAIR, K_VALOP, K_MATH, K_PARAM };

static const char *const valop_names[] = {"add", "sub", "mul",
                                          "div", "max", "min"};
static const char *const math_names[] = {"exp", "exp2", "log2", "sqrt"};

/* The dtypes without a reference here: float8 (no reference rounding
 * yet) and the confined dtypes (no values at all). */
static bool no_values(td_dtype t)
{
    return td_dtype_is_float8(t) || td_dtype_is_confined(t);
}

static int ncases;
static td_buf table;

/* The preludes of the bodies must be includes gpu_values_ref.h has. */
static int prelude_ok(const char *p)
{
    static const char *const known[] = {
        "#include <cfloat>\n", "#include <cstdint>\n",
        "#include <cuda_fp16.h>\n", "#include <cuda_bf16.h>\n"};
    while (*p) {
        size_t k = 0;
        while (k < 4 && strncmp(p, known[k], strlen(known[k])) != 0)
            k++;
        if (k == 4)
            return 0;
        p += strlen(known[k]);
    }
    return 1;
}

static int emit_case(FILE *f, enum kind k, td_dtype from, td_dtype to,
                     int op)
{
    td_ir *ir = td_ir_new();
    int64_t s[] = {2048};
    td_ir_buf *X = td_ir_buffer(ir, "X", from, "global", 1, s);
    td_ir_buf *W = td_ir_buffer(ir, "W", from, "global", 1, s);
    td_ir_buf *Y = td_ir_buffer(ir, "Y", to, "global", 1, s);
    td_var *tid = td_ir_let(ir, "tid", TD_I32,
                            td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32,
                                         0, NULL));
    td_expr *t = td_var_ref(ir, tid);
    td_expr *x = td_load1(ir, X, t);
    char name[128];
    switch (k) {
    case K_CAST:
        td_ir_store1(ir, Y, t, td_cast(ir, to, x));
        snprintf(name, sizeof name, "cast %s -> %s", td_dtype_name(from),
                 td_dtype_name(to));
        break;
    case K_PAIR: {
        td_expr *two = td_mul(ir, t, td_int(ir, 2));
        td_ir_cast_pair(ir, Y, 1, &two, X, 1, &two);
        snprintf(name, sizeof name, "cast_pair %s -> %s",
                 td_dtype_name(from), td_dtype_name(to));
        break;
    }
    case K_VALOP:
        td_ir_store1(ir, Y, t,
                     td_value_op(ir, (td_valop)op, x,
                                 td_load1(ir, W, td_var_ref(ir, tid))));
        snprintf(name, sizeof name, "%s %s", valop_names[op],
                 td_dtype_name(from));
        break;
    case K_MATH:
        td_ir_store1(ir, Y, t, td_math(ir, (td_mathfn)op, x));
        snprintf(name, sizeof name, "%s %s", math_names[op],
                 td_dtype_name(from));
        break;
    case K_PARAM:
        td_ir_store1(ir, Y, t,
                     td_value_op(ir, TD_VAL_MUL, x,
                                 td_param(ir, "alpha", TD_F32)));
        snprintf(name, sizeof name, "mul %s by a parameter",
                 td_dtype_name(from));
        break;
    }
    char *body = NULL, *prelude = NULL;
    int err = td_ir_status(ir);
    if (err == 0)
        err = td_ir_print(ir, TD_LANG_CUDA, 1, &body, &prelude);
    if (err != 0 || !prelude_ok(prelude)) {
        fprintf(stderr, "%s: %s\n", name,
                err ? td_strerror(err) : "unexpected prelude");
        td_free(body);
        td_free(prelude);
        td_ir_free(ir);
        return 1;
    }
    const char *ft = td__cuda_type(from), *tt = td__cuda_type(to);
    int n = ncases++;
    fprintf(f,
            "// %s\n"
            "__global__ void k%d(const %s *X_ptr, const %s *W_ptr, %s *Y_ptr, "
            "float alpha) {\n%s}\n"
            "static void l%d(const void *x, const void *w, void *y, int n, "
            "float alpha) {\n"
            "  k%d<<<1, n>>>((const %s *)x, (const %s *)w, (%s *)y, alpha);\n"
            "}\n\n",
            name, n, ft, ft, tt, body, n, n, ft, ft, tt);
    static const char *const kinds[] = {"K_CAST", "K_PAIR", "K_VALOP",
                                        "K_MATH", "K_PARAM"};
    td__buf_printf(&table, "    {\"%s\", %s, V_%s, V_%s, %d, l%d},\n", name,
                   kinds[k], td_dtype_name(from), td_dtype_name(to), op, n);
    td_free(body);
    td_free(prelude);
    td_ir_free(ir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "--run"))) {
        fprintf(stderr, "usage: %s NVCC REFDIR OUTDIR [--run]\n", argv[0]);
        return 2;
    }
    if (argv[1][0] == '\0') {
        printf("SKIP: nvcc not found\n");
        return 77;
    }
    char path[4096], exe[4096];
    snprintf(path, sizeof path, "%s/gpu_values.cu", argv[3]);
    snprintf(exe, sizeof exe, "%s/gpu_values", argv[3]);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    td__buf_init(&table);
    fputs("// Written by tests/codegen/gpu_values.c.\n"
          "#include \"gpu_values_ref.h\"\n\n",
          f);
    int bad = 0;
    /* The float8 dtypes are left out: gpu_values_ref.h has no float8
     * reference rounding yet (their casts are compiled by
     * test_codegen_nvcc and checked end to end by the float8 kernel
     * programs of the conformance corpus). */
    /* The confined dtypes (td_dtype_is_confined) have no casts, values
     * or math at all: the IR refuses them. */
    for (int from = 0; from < TD_DTYPE_COUNT; from++)
        for (int to = 0; to < TD_DTYPE_COUNT; to++)
            if (!no_values((td_dtype)from) && !no_values((td_dtype)to))
                bad |= emit_case(f, K_CAST, (td_dtype)from, (td_dtype)to, 0);
    static const td_dtype pairs[][2] = {{TD_F32, TD_F16}, {TD_F16, TD_F32},
                                        {TD_F32, TD_BF16}, {TD_BF16, TD_F32}};
    for (int k = 0; k < 4; k++)
        bad |= emit_case(f, K_PAIR, pairs[k][0], pairs[k][1], 0);
    for (int t = 0; t < TD_DTYPE_COUNT; t++)
        for (int op = TD_VAL_ADD; op <= TD_VAL_MIN && !no_values((td_dtype)t); op++)
            bad |= emit_case(f, K_VALOP, (td_dtype)t, (td_dtype)t, op);
    for (int t = 0; t < TD_DTYPE_COUNT; t++)
        if (td_dtype_is_float((td_dtype)t) && !no_values((td_dtype)t))
            for (int fn = TD_MATH_EXP; fn <= TD_MATH_SQRT; fn++)
                bad |= emit_case(f, K_MATH, (td_dtype)t, (td_dtype)t, fn);
    bad |= emit_case(f, K_PARAM, TD_F32, TD_F32, 0);
    fprintf(f,
            "static const vcase cases[] = {\n%s};\n\n"
            "int main(void) {\n"
            "  return run_all(cases, (int)(sizeof cases / sizeof cases[0]));\n"
            "}\n",
            table.data != NULL ? table.data : "");
    fclose(f);
    td__buf_free(&table);
    if (bad)
        return 1;

    char cmd[4 * 4096];
    snprintf(cmd, sizeof cmd,
             "'%s' -O2 -arch=compute_90 -code=sm_90,compute_90 -I'%s' '%s' "
             "-o '%s'",
             argv[1], argv[2], path, exe);
    printf("%s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        fprintf(stderr, "nvcc failed on %s\n", path);
        return 1;
    }
    printf("compiled %s: %d cases\n", exe, ncases);
    if (argc < 5)
        return 0;
    fflush(stdout);
    rc = system(exe);
    if (rc == -1 || !WIFEXITED(rc))
        return 1;
    return WEXITSTATUS(rc);
}
