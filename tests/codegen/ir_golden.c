/*
 * Builds IR directly (no call, no variant) and prints it as a golden case
 * prints (tests/golden/check.py renders the cases/ir_*.ir files through
 * it): the IR nodes whose variants come later, checked byte for byte.
 *
 *   ir_golden mma KIND MT NT KT C
 *     one mma.sync of KIND (td_mma_info's name, "m16n8k16.f16") per tile
 *     of an MT x NT x KT tiling, in unrolled loops m, n, k, with the
 *     registers in TVM's order: D / C register (m*NT + n)*regs + i, A word
 *     (m*KT + k)*words + i, B word (k*NT + n)*words + i.  D is a local
 *     [16*MT, 8*NT], A [16*MT, K*KT], B [K*KT, 8*NT]; C is "D"
 *     (accumulation in place) or "C" (a buffer of its own).
 *   ir_golden mma-prelude
 *     the CUDA prelude of one mma.sync of every kind (the helpers that
 *     tests/cuda/emu/mma_sync.cu calls on the stand-in and on a GPU).
 *
 * Exit 0, or 2 on a usage error, 1 when the IR or its printing fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiledispatch.h"

static int kind_of(const char *name)
{
    for (int k = 0; k < TD_MMA_KIND_COUNT; k++)
        if (strcmp(td_mma_info_of((td_mma_kind)k)->name, name) == 0)
            return k;
    return -1;
}

/* regs[i] = base * count + i. */
static void regs(td_ir *ir, td_expr *base, int count, td_expr **out)
{
    for (int i = 0; i < count; i++)
        out[i] = td_add(ir, td_mul(ir, base, td_int(ir, count)),
                        td_int(ir, i));
}

static td_ir *build_mma(int kind, int mt, int nt, int kt, bool own_c)
{
    const td_mma_info *f = td_mma_info_of((td_mma_kind)kind);
    td_ir *ir = td_ir_new();
    td_ir_buf *D = td_ir_buffer(ir, "D", f->cd, "local", 2,
                                (int64_t[]){16 * mt, 8 * nt});
    td_ir_buf *A = td_ir_buffer(ir, "A", f->ab, "local", 2,
                                (int64_t[]){16 * mt, f->k * kt});
    td_ir_buf *B = td_ir_buffer(ir, "B", f->ab, "local", 2,
                                (int64_t[]){f->k * kt, 8 * nt});
    td_ir_buf *C = own_c ? td_ir_buffer(ir, "C", f->cd, "local", 2,
                                        (int64_t[]){16 * mt, 8 * nt})
                         : D;
    td_var *m = td_ir_for(ir, "m", td_int(ir, mt), TD_LOOP_UNROLL);
    td_var *n = td_ir_for(ir, "n", td_int(ir, nt), TD_LOOP_UNROLL);
    td_var *k = td_ir_for(ir, "k", td_int(ir, kt), TD_LOOP_UNROLL);
    td_expr *vm = td_var_ref(ir, m), *vn = td_var_ref(ir, n),
            *vk = td_var_ref(ir, k);
    td_expr *d[4], *c[4], *a[4], *b[2];
    td_expr *tile = td_add(ir, td_mul(ir, vm, td_int(ir, nt)), vn);
    regs(ir, tile, f->cd_regs, d);
    regs(ir, tile, f->cd_regs, c);
    regs(ir, td_add(ir, td_mul(ir, vm, td_int(ir, kt)), vk), f->a_words, a);
    regs(ir, td_add(ir, td_mul(ir, vk, td_int(ir, nt)), vn), f->b_words, b);
    td_ptx_mma x = {.kind = (td_mma_kind)kind, .d = D, .a = A, .b = B,
                    .c = C, .d_regs = d, .a_words = a, .b_words = b,
                    .c_regs = c};
    td_ir_mma(ir, &x);
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    td_ir_end_for(ir);
    return ir;
}

/* One mma of every kind, each on buffers of its own. */
static td_ir *build_all(void)
{
    td_ir *ir = td_ir_new();
    for (int kind = 0; kind < TD_MMA_KIND_COUNT; kind++) {
        const td_mma_info *f = td_mma_info_of((td_mma_kind)kind);
        td_ir_buf *D = td_ir_scratch(ir, "d", f->cd, 4);
        td_ir_buf *A = td_ir_scratch(ir, "a", f->ab, 16);
        td_ir_buf *B = td_ir_scratch(ir, "b", f->ab, 8);
        td_expr *r[4];
        for (int i = 0; i < 4; i++)
            r[i] = td_int(ir, i);
        td_ptx_mma x = {.kind = (td_mma_kind)kind, .d = D, .a = A, .b = B,
                        .c = D, .d_regs = r, .a_words = r, .b_words = r,
                        .c_regs = r};
        td_ir_mma(ir, &x);
    }
    return ir;
}

int main(int argc, char **argv)
{
    td_ir *ir = NULL;
    bool prelude_only = false;
    if (argc == 2 && strcmp(argv[1], "mma-prelude") == 0) {
        ir = build_all();
        prelude_only = true;
    } else if (argc == 7 && strcmp(argv[1], "mma") == 0) {
        int kind = kind_of(argv[2]);
        int mt = atoi(argv[3]), nt = atoi(argv[4]), kt = atoi(argv[5]);
        bool own_c = strcmp(argv[6], "C") == 0;
        if (kind < 0 || mt < 1 || nt < 1 || kt < 1 ||
            (!own_c && strcmp(argv[6], "D") != 0)) {
            fprintf(stderr, "ir_golden: bad mma case\n");
            return 2;
        }
        ir = build_mma(kind, mt, nt, kt, own_c);
    } else {
        fprintf(stderr, "usage: ir_golden mma KIND MT NT KT C|D\n"
                        "       ir_golden mma-prelude\n");
        return 2;
    }
    char *tb = NULL, *cb = NULL, *cp = NULL;
    int err = td_ir_status(ir);
    if (err == 0 && !prelude_only)
        err = td_ir_print(ir, TD_LANG_TIRX, 0, &tb, NULL);
    if (err == 0)
        err = td_ir_print(ir, TD_LANG_CUDA, 0, &cb, &cp);
    if (err == 0 && prelude_only)
        fputs(cp, stdout);
    else if (err == 0)
        printf("== variant\n(ir)\n== tirx\n%s== cuda\n%s%s%s", tb, cp,
               cp[0] ? "\n" : "", cb);
    else
        fprintf(stderr, "ir_golden: %s\n", td_strerror(err));
    td_free(tb);
    td_free(cb);
    td_free(cp);
    td_ir_free(ir);
    return err == 0 ? 0 : 1;
}
