/*
 * Compiles printed CUDA with nvcc: the prelude plus a __global__ kernel
 * around a body.  Mode sm_90a uses every intrinsic but the packed PTX ones
 * and every dtype's identities, combiners, lets and warp reductions; mode
 * sm_100a uses the packed PTX helpers (add.rn.ftz.f32x2 and the 3-input
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

static td_ir *build_all(void)
{
    td_ir *ir = td_ir_new();
    int64_t s2[] = {2};
    td_var *tid = td_ir_let(ir, "tid", TD_I32,
                            td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32,
                                         0, NULL));
    td_var *mask = td_ir_let(ir, "mask", TD_U32,
                             td_intrinsic(ir, TD_INTRIN_ACTIVEMASK, TD_U32, 0,
                                          NULL));
    td_ir_buf *acc = td_ir_scratch(ir, "acc", TD_F32, 4);
    for (int t = 0; t < NBUF; t++) {
        char name[64];
        snprintf(name, sizeof name, "P_%s", td_dtype_name((td_dtype)t));
        td_ir_buf *P = bufs[t] =
            td_ir_buffer(ir, name, (td_dtype)t, "local", 1, s2);
        td_expr *p0 = td_load1(ir, P, td_int(ir, 0));
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
          "extern \"C\" __global__ void td_test_kernel(float *out) {\n",
          f);
    for (int t = 0; t < NBUF; t++)
        if (bufs[t] != NULL)
            fprintf(f, "  %s %s_ptr[%lld] = {};\n",
                    td__cuda_type((td_dtype)t), bufs[t]->name,
                    (long long)bufs[t]->shape[0]);
    fputs(body, f);
    for (int t = 0; t < NBUF; t++)
        if (bufs[t] != NULL)
            fprintf(f, "  out[%d] = (float)%s_ptr[0];\n", t, bufs[t]->name);
    fputs("}\n", f);
    fclose(f);
    td_free(body);
    td_free(prelude);
    td_ir_free(ir);

    char cmd[3 * 4096];
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s -c '%s' -o '%s'", argv[1],
             argv[2], path, obj);
    printf("%s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        fprintf(stderr, "nvcc failed on %s\n", path);
        return 1;
    }
    printf("PASS: %s compiles for %s\n", path, argv[2]);
    return 0;
}
