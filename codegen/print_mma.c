/*
 * The text of the mma.sync node (ir_mma.c) in both languages.  CUDA: a
 * call of a prelude helper per instruction whose body is the inline PTX
 * under __CUDA_ARCH__ (TVM's asm, operand for operand), the CPU
 * stand-in's td_emu_mma_* in a host build against it (TD_EMU: the
 * stand-in runs a thread per lane and the function meets the warp's 32
 * lanes), and a trap in any other host build (one thread cannot stand in
 * for a warp).  TIRx: TVM's positional T.ptx.mma, as TVM prints it back
 * (tests/upstream/mma_tirx.py parses it with TVM).  The expressions are
 * written by the calling printer through td__async_out.
 */
#include <string.h>

#include "codegen_internal.h"

/* "mma_sync_aligned_m16n8k16_row_col_f32_f16_f16_f32" (D, A, B, C). */
static void suffix(td_buf *o, const td_mma_info *f)
{
    td__buf_printf(o, "mma_sync_aligned_%s_row_col_%s_%s_%s_%s", f->shape,
                   f->cd_ptx, f->ab_ptx, f->ab_ptx, f->cd_ptx);
}

/* The C type and asm constraint of a C / D register. */
static const char *cd_type(const td_mma_info *f)
{
    return f->cd_packed ? "unsigned int" : f->cd == TD_I32 ? "int" : "float";
}

static const char *cd_constraint(const td_mma_info *f)
{
    return f->cd == TD_F32 && !f->cd_packed ? "f" : "r";
}

/* Register i of operand o as the CUDA call's argument: the element
 * (D_ptr[i]) when the register is one, else the 32-bit word
 * ((unsigned int *)A_ptr)[i]. */
static void cuda_reg(const td__async_out *o, const td__mma *x, int op,
                     int i, bool word)
{
    const td_ir_buf *b = x->buf[op];
    const char *sfx = b->scratch ? "" : "_ptr";
    if (word && b->dtype != TD_U32)
        td__buf_printf(o->line, "((unsigned int *)%s%s)[", b->name, sfx);
    else
        td__buf_printf(o->line, "%s%s[", b->name, sfx);
    o->expr(o->ctx, o->line, x->reg[op][i], 0);
    td__buf_puts(o->line, "]");
}

/* How many registers operand o has, and whether they are words. */
static int count(const td_mma_info *f, int op, bool *word)
{
    *word = op == TD__MMA_A || op == TD__MMA_B || f->cd_packed;
    return op == TD__MMA_A ? f->a_words
           : op == TD__MMA_B ? f->b_words
                             : f->cd_regs;
}

void td__cuda_mma(const td__async_out *o, const td__stmt *s,
                  td__cuda_needs *need)
{
    const td__mma *x = s->mma;
    const td_mma_info *f = td_mma_info_of(x->kind);
    need->mma |= 1u << x->kind;
    /* The headers of the operands' types, as any access requests them
     * (the code around the body declares the buffers). */
    for (int op = 0; op < 4; op++) {
        td_dtype t = x->buf[op]->dtype;
        if (t == TD_F16)
            need->inc[TD__INC_FP16] = true;
        else if (t == TD_BF16)
            need->inc[TD__INC_BF16] = true;
        else if (td_dtype_is_float8(t))
            need->inc[TD__INC_FP8] = true;
        else if (t == TD_I8 || t == TD_U8)
            need->inc[TD__INC_CSTDINT] = true;
    }
    td__buf_puts(o->line, "td_ptx_");
    suffix(o->line, f);
    td__buf_puts(o->line, "(");
    for (int op = 0; op < 4; op++) {
        bool word;
        int n = count(f, op, &word);
        for (int i = 0; i < n; i++) {
            if (op > 0 || i > 0)
                td__buf_puts(o->line, ", ");
            cuda_reg(o, x, op, i, word);
        }
    }
    td__buf_puts(o->line, ")");
}

/* One helper: the PTX under __CUDA_ARCH__, the stand-in's function in a
 * TD_EMU host build (registers through 32-bit word arrays), a trap in
 * any other host build. */
static void helper(td_buf *o, const td_mma_info *f)
{
    const char *t = cd_type(f), *cc = cd_constraint(f);
    int nc = f->cd_regs, na = f->a_words, nb = f->b_words;
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_puts(o, "__forceinline__ __device__ void td_ptx_");
    suffix(o, f);
    td__buf_puts(o, "(");
    for (int i = 0; i < nc; i++)
        td__buf_printf(o, "%s &d%d, ", t, i);
    for (int i = 0; i < na; i++)
        td__buf_printf(o, "unsigned int a%d, ", i);
    for (int i = 0; i < nb; i++)
        td__buf_printf(o, "unsigned int b%d, ", i);
    for (int i = 0; i < nc; i++)
        td__buf_printf(o, "%s c%d%s", t, i, i + 1 < nc ? ", " : "");
    td__buf_printf(o, ") {\n#ifdef __CUDA_ARCH__\n"
                      "  asm volatile(\"mma.sync.aligned.%s.row.col.%s.%s.%s.%s ",
                   f->shape, f->cd_ptx, f->ab_ptx, f->ab_ptx, f->cd_ptx);
    int next = 0;
    const int groups[4] = {nc, na, nb, nc};
    for (int g = 0; g < 4; g++) {
        td__buf_puts(o, g ? ", {" : "{");
        for (int i = 0; i < groups[g]; i++)
            td__buf_printf(o, "%s%%%d", i ? ", " : "", next++);
        td__buf_puts(o, "}");
    }
    td__buf_puts(o, ";\"\n      : ");
    for (int i = 0; i < nc; i++)
        td__buf_printf(o, "%s\"=%s\"(d%d)", i ? ", " : "", cc, i);
    td__buf_puts(o, "\n      : ");
    for (int i = 0; i < na; i++)
        td__buf_printf(o, "\"r\"(a%d), ", i);
    for (int i = 0; i < nb; i++)
        td__buf_printf(o, "\"r\"(b%d), ", i);
    for (int i = 0; i < nc; i++)
        td__buf_printf(o, "\"%s\"(c%d)%s", cc, i, i + 1 < nc ? ", " : "");
    td__buf_puts(o, ");\n#elif defined(TD_EMU)\n");
    td__buf_printf(o, "  const unsigned int a[%d] = {", na);
    for (int i = 0; i < na; i++)
        td__buf_printf(o, "%sa%d", i ? ", " : "", i);
    td__buf_printf(o, "}, b[%d] = {", nb);
    for (int i = 0; i < nb; i++)
        td__buf_printf(o, "%sb%d", i ? ", " : "", i);
    td__buf_printf(o, "};\n  const unsigned int c[%d] = {", nc);
    bool flt = f->cd == TD_F32 && !f->cd_packed;
    for (int i = 0; i < nc; i++)
        td__buf_printf(o, flt ? "%s__float_as_uint(c%d)"
                              : "%s(unsigned int)c%d",
                       i ? ", " : "", i);
    td__buf_printf(o, "};\n  unsigned int d[%d];\n  td_emu_", nc);
    suffix(o, f);
    td__buf_puts(o, "(d, a, b, c);\n");
    for (int i = 0; i < nc; i++) {
        if (flt)
            td__buf_printf(o, "  d%d = __uint_as_float(d[%d]);\n", i, i);
        else
            td__buf_printf(o, "  d%d = (%s)d[%d];\n", i, t, i);
    }
    td__buf_puts(o, "#else\n ");
    const char names[4] = {'d', 'a', 'b', 'c'};
    for (int g = 0; g < 4; g++)
        for (int i = 0; i < groups[g]; i++)
            td__buf_printf(o, " (void)%c%d;", names[g], i);
    td__buf_puts(o, "\n  __builtin_trap(); /* warp-collective: only the CPU "
                    "stand-in (TD_EMU) runs it on a host */\n#endif\n}\n");
}

void td__cuda_mma_prelude(td_buf *o, const td__cuda_needs *need)
{
    for (int k = 0; k < TD_MMA_KIND_COUNT; k++)
        if (need->mma >> k & 1)
            helper(o, td_mma_info_of((td_mma_kind)k));
}

/* Register i of operand o in TIRx: D.local()[i] (the lane's storage, as
 * TVM's gemm names it), A.local().view("uint32")[i] for a word of
 * narrower (or other 32-bit) elements; a scratch array is its own
 * storage.  TVM's T.ptx.mma takes every register but a float32 C / D as
 * uint32, int32 accumulators too (its mma_int operands). */
static void tirx_reg(const td__async_out *o, const td__mma *x, int op,
                     int i, bool word)
{
    const td_ir_buf *b = x->buf[op];
    td__buf_printf(o->line, "%s%s", b->name, b->scratch ? "" : ".local()");
    if (word && b->dtype != TD_U32)
        td__buf_puts(o->line, ".view(\"uint32\")");
    td__buf_puts(o->line, "[");
    o->expr(o->ctx, o->line, x->reg[op][i], 0);
    td__buf_puts(o->line, "]");
}

void td__tirx_mma(const td__async_out *o, const td__stmt *s)
{
    const td__mma *x = s->mma;
    const td_mma_info *f = td_mma_info_of(x->kind);
    td__buf_puts(o->line, "T.ptx.mma(");
    for (int op = 0; op < 4; op++) {
        bool word;
        int n = count(f, op, &word);
        word |= f->cd == TD_I32;
        for (int i = 0; i < n; i++) {
            if (op > 0 || i > 0)
                td__buf_puts(o->line, ", ");
            tirx_reg(o, x, op, i, word);
        }
    }
    /* The integer form has TVM's optional slots satfinite (before the
     * types), bitop and popc (after them), all empty. */
    bool in = f->cd == TD_I32;
    td__buf_printf(o->line,
                   ", \"sync\", \"aligned\", \"%s\", \"row\", \"col\", "
                   "%s\"%s\", \"%s\", \"%s\", \"%s\", \"\"%s)",
                   f->shape, in ? "\"\", " : "", f->cd_ptx, f->ab_ptx,
                   f->ab_ptx, f->cd_ptx, in ? ", \"\", \"\"" : "");
}
