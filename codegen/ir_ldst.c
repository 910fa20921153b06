/*
 * The warp-collective matrix loads and stores ldmatrix / stmatrix
 * (td_ir_ldstmatrix): the builder, which checks an instruction, and what
 * the CUDA printer needs of it, the helper's name and text (one prelude
 * helper per instruction form, as for the PTX container accesses of
 * ir_ptx.c).  The instruction always moves 16-bit elements, two to a
 * 32-bit register word.
 */
#include <stdio.h>
#include <string.h>

#include "codegen_internal.h"

unsigned td__ldst_key(const td__ldst *x)
{
    unsigned n = x->num == 1 ? 0 : x->num == 2 ? 1 : 2;
    return (unsigned)x->store * 6 + (unsigned)x->trans * 3 + n;
}

static void unkey(unsigned key, td__ldst *x)
{
    memset(x, 0, sizeof *x);
    x->store = key / 6 != 0;
    x->trans = key / 3 % 2 != 0;
    x->num = 1 << (key % 3);
}

void td__ldst_helper_name(td_buf *o, const td__ldst *x)
{
    td__buf_printf(o, "td_%s_x%d%s", x->store ? "stmatrix" : "ldmatrix",
                   x->num, x->trans ? "_trans" : "");
}

/* ldmatrix: words out, address in; stmatrix: address and words in.  A
 * host build has no warp to run the instruction with: it traps. */
void td__ldst_helper(td_buf *o, unsigned key)
{
    td__ldst x;
    unkey(key, &x);
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_puts(o, "__forceinline__ __device__ void ");
    td__ldst_helper_name(o, &x);
    td__buf_puts(o, "(");
    if (x.store)
        td__buf_puts(o, "void *addr");
    for (int i = 0; i < x.num; i++)
        td__buf_printf(o, "%sunsigned int %s%d", i > 0 || x.store ? ", " : "",
                       x.store ? "s" : "&d", i);
    if (!x.store)
        td__buf_puts(o, ", const void *addr");
    td__buf_puts(o, ") {\n#ifdef __CUDA_ARCH__\n"
                    "  unsigned int a = (unsigned int)"
                    "__cvta_generic_to_shared(addr);\n"
                    "  asm volatile(\"");
    td__buf_printf(o, "%s.sync.aligned.m8n8.x%d%s.shared.b16 ",
                   x.store ? "stmatrix" : "ldmatrix", x.num,
                   x.trans ? ".trans" : "");
    int first = x.store ? 1 : 0;
    char regs[64];
    size_t rn = (size_t)snprintf(regs, sizeof regs, "{");
    for (int i = 0; i < x.num; i++)
        rn += (size_t)snprintf(regs + rn, sizeof regs - rn, "%s%%%d",
                               i ? ", " : "", first + i);
    snprintf(regs + rn, sizeof regs - rn, "}");
    if (x.store) {
        td__buf_printf(o, "[%%0], %s;\"\n      : : \"r\"(a)", regs);
        for (int i = 0; i < x.num; i++)
            td__buf_printf(o, ", \"r\"(s%d)", i);
    } else {
        td__buf_printf(o, "%s, [%%%d];\"\n      : ", regs, x.num);
        for (int i = 0; i < x.num; i++)
            td__buf_printf(o, "%s\"=r\"(d%d)", i ? ", " : "", i);
        td__buf_puts(o, " : \"r\"(a)");
    }
    td__buf_puts(o, " : \"memory\");\n#else\n  (void)addr;\n");
    for (int i = 0; i < x.num; i++)
        if (x.store)
            td__buf_printf(o, "  (void)s%d;\n", i);
        else
            td__buf_printf(o, "  d%d = 0;\n", i);
    td__buf_puts(o, "  __builtin_trap();\n#endif\n}\n");
}

static bool valid(const td_ir *ir, const td_ldst_access *a)
{
    if (a == NULL || a->mem == NULL || a->regs == NULL ||
        a->offset == NULL || a->words == NULL || a->mem->owner != ir ||
        a->regs->owner != ir)
        return false;
    if (a->num != 1 && a->num != 2 && a->num != 4)
        return false;
    if (a->mem->scratch || strncmp(a->mem->scope, "shared", 6) != 0 ||
        strcmp(a->regs->scope, "local") != 0)
        return false;
    return td_dtype_bits(a->mem->dtype) == 16 &&
           td_dtype_bits(a->regs->dtype) == 16;
}

void td_ir_ldstmatrix(td_ir *ir, const td_ldst_access *a)
{
    if (!td__ir_live(ir))
        return;
    if (!valid(ir, a) || !td__ir_stmt_operand(ir, a->offset)) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    for (int i = 0; i < a->num; i++)
        if (a->words[i] == NULL || !td__ir_stmt_operand(ir, a->words[i])) {
            td__ir_fail(ir, TD_EINVAL);
            return;
        }
    td__arena *ar = &ir->arena;
    td__stmt *s = td__ir_stmt(ir, TD__S_LDST);
    td__ldst *x = td__arena_alloc(ar, sizeof *x);
    const td_expr **idx = td__arena_alloc(ar, sizeof *idx);
    const td_expr **w = td__arena_alloc(ar, sizeof *w * (size_t)a->num);
    if (s == NULL || x == NULL || idx == NULL || w == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return;
    }
    x->store = a->store;
    x->trans = a->trans;
    x->num = a->num;
    x->regs = a->regs;
    idx[0] = a->offset;
    for (int i = 0; i < a->num; i++)
        w[i] = a->words[i];
    s->buf = a->mem;
    s->nidx = 1;
    s->idx = idx;
    s->nvals = a->num;
    s->vals = w;
    s->ldst = x;
    td__ir_append(ir, s);
}
