/*
 * The warp-level mma.sync node: the table of the instructions the IR can
 * issue (their shapes, PTX types, per-lane register counts and the oldest
 * arch that has them) and the builder, which checks the operands against
 * the row.  The printers (print_mma.c) spell the node from the same row.
 */
#include <string.h>

#include "codegen_internal.h"

/* Per lane: A is 16 x k, B is k x 8, C / D 16 x 8; a 32-bit word holds
 * 32 / bits elements, so A takes 16*k*bits/1024 words, B k*8*bits/1024,
 * C / D 4 elements (2 words when two 16-bit elements share one). */
#define ROW(id, nm, k_, ab_, abp, cd_, cdp, bits, packed, sm_)               \
    [id] = {.name = nm, .shape = "m16n8k" #k_, .m = 16, .n = 8, .k = k_,     \
            .ab = ab_, .cd = cd_, .ab_ptx = abp, .cd_ptx = cdp,              \
            .k_pack = 32 / (bits), .a_words = 16 * (k_) * (bits) / 1024,     \
            .b_words = (k_) * 8 * (bits) / 1024, .cd_regs = (packed) ? 2 : 4, \
            .cd_packed = packed, .sm = sm_}

static const td_mma_info rows[TD_MMA_KIND_COUNT] = {
    ROW(TD_MMA_M16N8K16_BF16, "m16n8k16.bf16", 16, TD_BF16, "bf16", TD_F32,
        "f32", 16, false, 80),
    ROW(TD_MMA_M16N8K16_F16, "m16n8k16.f16", 16, TD_F16, "f16", TD_F32,
        "f32", 16, false, 80),
    ROW(TD_MMA_M16N8K8_BF16, "m16n8k8.bf16", 8, TD_BF16, "bf16", TD_F32,
        "f32", 16, false, 80),
    ROW(TD_MMA_M16N8K8_F16, "m16n8k8.f16", 8, TD_F16, "f16", TD_F32, "f32",
        16, false, 75),
    ROW(TD_MMA_M16N8K16_F16ACC, "m16n8k16.f16acc", 16, TD_F16, "f16", TD_F16,
        "f16", 16, true, 80),
    ROW(TD_MMA_M16N8K8_F16ACC, "m16n8k8.f16acc", 8, TD_F16, "f16", TD_F16,
        "f16", 16, true, 75),
    ROW(TD_MMA_M16N8K8_TF32, "m16n8k8.tf32", 8, TD_F32, "tf32", TD_F32,
        "f32", 32, false, 80),
    ROW(TD_MMA_M16N8K32_S8, "m16n8k32.s8", 32, TD_I8, "s8", TD_I32, "s32", 8,
        false, 80),
    ROW(TD_MMA_M16N8K32_U8, "m16n8k32.u8", 32, TD_U8, "u8", TD_I32, "s32", 8,
        false, 80),
    ROW(TD_MMA_M16N8K32_E4M3, "m16n8k32.e4m3", 32, TD_F8E4M3, "e4m3", TD_F32,
        "f32", 8, false, 89),
    ROW(TD_MMA_M16N8K32_E5M2, "m16n8k32.e5m2", 32, TD_F8E5M2, "e5m2", TD_F32,
        "f32", 8, false, 89),
};

const td_mma_info *td_mma_info_of(td_mma_kind k)
{
    return (unsigned)k < TD_MMA_KIND_COUNT ? &rows[k] : NULL;
}

/* A register operand: a local buffer of this IR (a call buffer or a
 * scratch array) of the row's dtype, and n index expressions. */
static bool operand(td_ir *ir, const td_ir_buf *b, td_dtype want,
                    td_expr *const *regs, int n)
{
    if (b == NULL || regs == NULL || b->owner != ir || b->dtype != want ||
        strcmp(b->scope, "local") != 0)
        return false;
    for (int i = 0; i < n; i++)
        if (regs[i] == NULL || !td__ir_stmt_operand(ir, regs[i]))
            return false;
    return true;
}

void td_ir_mma(td_ir *ir, const td_ptx_mma *m)
{
    if (!td__ir_live(ir))
        return;
    const td_mma_info *info = m != NULL ? td_mma_info_of(m->kind) : NULL;
    if (info == NULL ||
        !operand(ir, m->d, info->cd, m->d_regs, info->cd_regs) ||
        !operand(ir, m->a, info->ab, m->a_words, info->a_words) ||
        !operand(ir, m->b, info->ab, m->b_words, info->b_words) ||
        !operand(ir, m->c, info->cd, m->c_regs, info->cd_regs)) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    const td_ir_buf *bufs[4] = {m->d, m->a, m->b, m->c};
    td_expr *const *regs[4] = {m->d_regs, m->a_words, m->b_words, m->c_regs};
    int counts[4] = {info->cd_regs, info->a_words, info->b_words,
                     info->cd_regs};
    td__stmt *s = td__ir_stmt(ir, TD__S_MMA);
    td__mma *x = s != NULL ? td__arena_alloc(&ir->arena, sizeof *x) : NULL;
    if (s == NULL || x == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return;
    }
    x->kind = m->kind;
    for (int o = 0; o < 4; o++) {
        const td_expr **r =
            td__arena_alloc(&ir->arena, sizeof *r * (size_t)counts[o]);
        if (r == NULL) {
            td__ir_fail(ir, TD_ENOMEM);
            return;
        }
        for (int i = 0; i < counts[o]; i++)
            r[i] = regs[o][i];
        x->buf[o] = bufs[o];
        x->reg[o] = r;
    }
    s->mma = x;
    td__ir_append(ir, s);
}
