/*
 * Compiles printed CUDA with nvcc: the prelude plus a __global__ kernel
 * around a body.  Mode sm_90a uses every intrinsic but the packed PTX ones
 * and every dtype's identities, combiners, lets and warp reductions, value
 * ops, math functions, casts (every pair of dtypes), parameters and the
 * paired casts; mode sm_100a uses the packed PTX helpers (the f32x2 ops of
 * td_ptx_f32x2 with every rounding, add.rn.ftz.f32x2 and the 3-input
 * max/min exist only there).
 *
 * Usage: test_codegen_nvcc NVCC ARCH OUTDIR.  An empty NVCC means nvcc
 * was not found: the test prints SKIP and exits 77.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tiledispatch.h"
#include "codegen_internal.h"

#define NBUF TD_DTYPE_COUNT

static td_ir_buf *bufs[NBUF];

/* The next free element of each buffer of build_all: each value op
 * stores to its own element, so that no store is dead and nvcc compiles
 * every one. */
static int next_slot[NBUF];

static td_expr *slot(td_ir *ir, int t)
{
    return td_int(ir, next_slot[t]++);
}

/* The elementwise builders over the buffers of build_all: every value op
 * of every dtype, the math functions of the floats (on a product with a
 * parameter), every cast between two dtypes and the four paired casts. */
static void add_value_ops(td_ir *ir)
{
    for (int t = 0; t < NBUF; t++)
        next_slot[t] = 2;
    for (int t = 0; t < NBUF; t++) {
        td_ir_buf *P = bufs[t];
        if (P == NULL)
            continue; /* a confined dtype (build_all) */
        td_expr *p0 = td_load1(ir, P, td_int(ir, 0));
        td_expr *p1 = td_load1(ir, P, td_int(ir, 1));
        if (td_dtype_is_float8((td_dtype)t))
            continue; /* no arithmetic: the casts below */
        for (int op = TD_VAL_ADD; op <= TD_VAL_MIN; op++)
            td_ir_store1(ir, P, slot(ir, t),
                         td_value_op(ir, (td_valop)op, p0, p1));
        if (!td_dtype_is_float((td_dtype)t))
            continue;
        char name[64];
        snprintf(name, sizeof name, "s_%s", td_dtype_name((td_dtype)t));
        td_expr *x = td_value_op(ir, TD_VAL_MUL, p0,
                                 td_param(ir, name, (td_dtype)t));
        for (int f = TD_MATH_EXP; f <= TD_MATH_SQRT; f++)
            td_ir_store1(ir, P, slot(ir, t), td_math(ir, (td_mathfn)f, x));
    }
    for (int from = 0; from < NBUF; from++)
        for (int to = 0; to < NBUF; to++)
            if (bufs[from] != NULL && bufs[to] != NULL)
                td_ir_store1(ir, bufs[to], slot(ir, to),
                             td_cast(ir, (td_dtype)to,
                                     td_load1(ir, bufs[from],
                                              td_int(ir, 1))));
    /* The pairs start at even elements (aligned to the pair's size). */
    static const td_dtype pairs[][2] = {{TD_F16, TD_F32}, {TD_F32, TD_F16},
                                        {TD_BF16, TD_F32}, {TD_F32, TD_BF16}};
    for (int k = 0; k < 4; k++) {
        int d = pairs[k][0], f = pairs[k][1];
        next_slot[d] += next_slot[d] & 1;
        td_expr *di = slot(ir, d), *si = td_int(ir, 0);
        next_slot[d]++;
        td_ir_cast_pair(ir, bufs[d], 1, &di, bufs[f], 1, &si);
    }
}

static td_ir *build_all(void)
{
    td_ir *ir = td_ir_new();
    int64_t s2[] = {64};
    td_var *tid = td_ir_let(ir, "tid", TD_I32,
                            td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32,
                                         0, NULL));
    td_var *mask = td_ir_let(ir, "mask", TD_U32,
                             td_intrinsic(ir, TD_INTRIN_ACTIVEMASK, TD_U32, 0,
                                          NULL));
    td_ir_buf *acc = td_ir_scratch(ir, "acc", TD_F32, 4);
    for (int t = 0; t < NBUF; t++) {
        char name[64];
        /* The confined dtypes (block-scaled MMA's) have no values, casts
         * or arithmetic in the IR: no buffer of them here. */
        bufs[t] = NULL;
        if (td_dtype_is_confined((td_dtype)t))
            continue;
        snprintf(name, sizeof name, "P_%s", td_dtype_name((td_dtype)t));
        td_ir_buf *P = bufs[t] =
            td_ir_buffer(ir, name, (td_dtype)t, "local", 1, s2);
        td_expr *p0 = td_load1(ir, P, td_int(ir, 0));
        if (td_dtype_is_float8((td_dtype)t)) {
            /* float8 stores, converts and has a zero; nothing computes on
             * it (the IR refuses combiners, shuffles and arithmetic). */
            td_ir_store1(ir, P, td_int(ir, 0),
                         td_identity(ir, TD_COMBINE_SUM, (td_dtype)t));
            td_ir_store1(ir, P, td_int(ir, 1), td_const_f(ir, (td_dtype)t, -1.5));
            continue;
        }
        for (int c = 0; c < 3; c++) {
            td_ir_store1(ir, P, td_int(ir, 0),
                         td_identity(ir, (td_combiner)c, (td_dtype)t));
            td_ir_store1(ir, P, td_int(ir, 0),
                         td_combine(ir, (td_combiner)c, p0,
                                    td_load1(ir, P, td_int(ir, 1))));
            td_ir_store1(ir, P, td_int(ir, 1),
                         td_warp_reduce(ir, (td_combiner)c, 32 >> c, p0,
                                        (td_dtype)t));
        }
        snprintf(name, sizeof name, "x_%s", td_dtype_name((td_dtype)t));
        td_var *x = td_ir_let(ir, name, (td_dtype)t, p0);
        td_expr *sh[] = {td_var_ref(ir, mask), td_var_ref(ir, x),
                         td_int(ir, 1), td_int(ir, 32)};
        td_ir_assign(ir, x, td_intrinsic(ir, TD_INTRIN_SHFL_XOR, (td_dtype)t,
                                         4, sh));
        td_ir_store1(ir, P, td_mod(ir, td_var_ref(ir, tid), td_int(ir, 2)),
                     td_var_ref(ir, x));
        td_ir_store1(ir, P, td_int(ir, 1),
                     td_const_i(ir, (td_dtype)t,
                                td_dtype_is_signed((td_dtype)t) ? -1 : 1));
    }
    td_var *i = td_ir_for(ir, "i", td_int(ir, 4), TD_LOOP_UNROLL);
    td_ir_if(ir, td_binary(ir, TD_OP_AND,
                           td_lt(ir, td_var_ref(ir, i), td_int(ir, 2)),
                           td_eq(ir, td_binary(ir, TD_OP_BITAND,
                                               td_var_ref(ir, tid),
                                               td_int(ir, 1)),
                                 td_int(ir, 0))));
    td_ir_store1(ir, acc, td_var_ref(ir, i),
                 td_extern_call(ir, "user_fn", TD_F32, 1,
                                (td_expr *[]){td_const_f(ir, TD_F32, 0.1)}));
    td_ir_else(ir);
    td_ir_store1(ir, acc, td_var_ref(ir, i), td_const_f(ir, TD_F32, 1e-30));
    td_ir_end_if(ir);
    td_ir_end_for(ir);
    add_value_ops(ir);
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0, NULL));
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCWARP, TD_I32, 0, NULL));
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_BARRIER_SYNC, TD_I32, 2,
                                (td_expr *[]){td_int(ir, 8),
                                              td_int(ir, 128)}));
    td_ir_store1(ir, bufs[TD_F32], td_int(ir, 0),
                 td_load1(ir, acc, td_int(ir, 3)));
    return ir;
}

static td_ir *build_packed(void)
{
    td_ir *ir = td_ir_new();
    int64_t s8[] = {8};
    for (int t = 0; t < NBUF; t++)
        bufs[t] = NULL;
    td_ir_buf *A = bufs[TD_F32] =
        td_ir_buffer(ir, "A_local", TD_F32, "local", 1, s8);
    td_expr *l[8];
    for (int k = 0; k < 8; k++)
        l[k] = td_load1(ir, A, td_int(ir, k));
    td_var *p = td_ir_let(ir, "p", TD_U64,
                          td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                       2, (td_expr *[]){l[0], l[1]}));
    td_var *q = td_ir_let(ir, "q", TD_U64,
                          td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                       2, (td_expr *[]){l[2], l[3]}));
    td_ir_assign(ir, p,
                 td_intrinsic(ir, TD_INTRIN_PTX_ADD_F32X2, TD_U64, 2,
                              (td_expr *[]){td_var_ref(ir, p),
                                            td_var_ref(ir, q)}));
    td_ir_store1(ir, A, td_int(ir, 0),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_LO, TD_F32, 1,
                              (td_expr *[]){td_var_ref(ir, p)}));
    td_ir_store1(ir, A, td_int(ir, 1),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_HI, TD_F32, 1,
                              (td_expr *[]){td_var_ref(ir, p)}));
    td_ir_store1(ir, A, td_int(ir, 2),
                 td_intrinsic(ir, TD_INTRIN_PTX_MAX3_F32, TD_F32, 3,
                              (td_expr *[]){l[4], l[5], l[6]}));
    td_ir_store1(ir, A, td_int(ir, 3),
                 td_intrinsic(ir, TD_INTRIN_PTX_MIN3_F32, TD_F32, 3,
                              (td_expr *[]){l[4], l[5], l[7]}));
    /* td_ptx_f32x2: every op with every rounding, on a pair packed with
     * a parameter. */
    td_var *r = td_ir_let(ir, "r", TD_U64,
                          td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                       2, (td_expr *[]){l[6],
                                                        td_param(ir, "alpha",
                                                                 TD_F32)}));
    static const char *const ops[] = {"add", "sub", "mul", "fma"};
    static const char *const rnds[] = {"rn", "rz", "rm", "rp"};
    for (int op = 0; op < 4; op++)
        for (int k = 0; k < 4; k++)
            td_ir_assign(ir, r,
                         td_ptx_f32x2(ir, ops[op], rnds[k], op == 3 ? 3 : 2,
                                      (td_expr *[]){td_var_ref(ir, r),
                                                    td_var_ref(ir, p),
                                                    td_var_ref(ir, q)}));
    td_ir_store1(ir, A, td_int(ir, 4),
                 td_intrinsic(ir, TD_INTRIN_PTX_UNPACK_HI, TD_F32, 1,
                              (td_expr *[]){td_var_ref(ir, r)}));
    return ir;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s NVCC ARCH OUTDIR\n", argv[0]);
        return 2;
    }
    if (argv[1][0] == '\0') {
        printf("SKIP: nvcc not found\n");
        return 77;
    }
    bool packed = strcmp(argv[2], "sm_100a") == 0;
    td_ir *ir = packed ? build_packed() : build_all();
    if (td_ir_status(ir) != 0) {
        fprintf(stderr, "building the IR failed: %s\n",
                td_strerror(td_ir_status(ir)));
        return 1;
    }
    char *body = NULL, *prelude = NULL;
    int err = td_ir_print(ir, TD_LANG_CUDA, 1, &body, &prelude);
    if (err != 0) {
        fprintf(stderr, "printing failed: %s\n", td_strerror(err));
        return 1;
    }
    char path[4096], obj[4096];
    snprintf(path, sizeof path, "%s/codegen_%s.cu", argv[3], argv[2]);
    snprintf(obj, sizeof obj, "%s/codegen_%s.o", argv[3], argv[2]);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    fputs(prelude, f);
    fputs("\n__device__ float user_fn(float x) { return x * 2.0f; }\n\n"
          "extern \"C\" __global__ void td_test_kernel(float *out",
          f);
    /* The buffers are global memory and the parameters the body refers to
     * (td_param) are the kernel's: every store is kept, so ptxas sees
     * every instruction the body uses. */
    for (int t = 0; t < NBUF; t++)
        if (bufs[t] != NULL)
            fprintf(f, ", %s *%s_ptr", td__cuda_type((td_dtype)t),
                    bufs[t]->name);
    for (const td__param *prm = ir->params; prm != NULL; prm = prm->next)
        fprintf(f, ", %s %s", td__cuda_type(prm->dtype), prm->name);
    fputs(") {\n", f);
    fputs(body, f);
    for (int t = 0; t < NBUF; t++)
        if (bufs[t] != NULL)
            fprintf(f, "  out[%d] = (float)%s_ptr[0];\n", t, bufs[t]->name);
    fputs("}\n", f);
    fclose(f);
    td_free(body);
    td_free(prelude);

    char cmd[3 * 4096];
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s -c '%s' -o '%s'", argv[1],
             argv[2], path, obj);
    printf("%s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        fprintf(stderr, "nvcc failed on %s\n", path);
        td_ir_free(ir);
        return 1;
    }
    td_ir_free(ir);
    printf("PASS: %s compiles for %s\n", path, argv[2]);
    return 0;
}
