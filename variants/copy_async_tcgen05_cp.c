/*
 * The copy_async variant `smem->tmem` (upstream copy_async/tcgen05_cp.py,
 * priority 10): one thread copies a tile from shared memory into tensor
 * memory with tcgen05.cp (sm_100a), one instruction per atom of the tile,
 * the shared side named by a shared memory descriptor.  Its two
 * predicates are TVM's: validate_smem_tmem_copy (a bare check, no reason,
 * as TVM's) and exec_scope (ours under TVM's display name, with TVM's
 * text).  The plan (every shape of TVM's table, the shared layout's
 * descriptor, the copies) is copy_async_tcgen05_cp_plan.c's; this file
 * builds the IR from it and says what the caller owns.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "copy.h"
#include "copy_async_tcgen05_cp_plan.h"
#include "variants.h"

/* ---- predicates (TVM's texts) ------------------------------------------ */

/* TVM's validate_smem_tmem_copy: a shared source, a tmem destination and
 * equal element widths (the dtypes may differ); TVM gives no reason. */
static bool valid_pred(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)args;
    (void)user;
    (void)why;
    if (call->nsrcs != 1 || call->srcs[0].kind != TD_OPERAND_REGION)
        return false;
    const td_buffer *s = td__copy_src(call), *d = td__copy_dst(call);
    return strncmp(s->scope, "shared", 6) == 0 &&
           strcmp(d->scope, "tmem") == 0 &&
           td_dtype_bits(s->dtype) == td_dtype_bits(d->dtype);
}

static bool scope_pred(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)args;
    (void)user;
    if (call->scope == TD_SCOPE_THREAD)
        return true;
    td_reason_set(why, "expected thread exec_scope, got %s",
                  td_exec_scope_name(call->scope));
    return false;
}

static const td_pred_desc cp_preds[] = {
    {.name = "validate_smem_tmem_copy", .fn = valid_pred},
    {.name = "smem_tmem_exec_scope", .fn = scope_pred,
     .shown_as = "exec_scope"},
};

/* ---- emission ---------------------------------------------------------- */

/* What the caller owns (explain's note): the commit, the wait, the
 * allocation and the shared tile's alignment; for cta_group 2 the pair. */
static void cp_note(const td_call *call, const td_cp_plan *p, td_reason *why)
{
    const td_buffer *tb = td__copy_dst(call), *sb = td__copy_src(call);
    int tn = (int)strnlen(tb->name, TD_NAME_MAX);
    int sn = (int)strnlen(sb->name, TD_NAME_MAX);
    char align[64];
    if (p->swizzle == 0)
        snprintf(align, sizeof align, "16-byte aligned");
    else
        snprintf(align, sizeof align,
                 "aligned to its %d-byte swizzle period",
                 8 * (16 << p->swizzle));
    if (p->cta_group == 2) {
        td_reason_set(why,
                      "tcgen05.cp.cta_group::2 is asynchronous and "
                      "pair-collective: one thread of one CTA of the pair "
                      "(TVM's: cbx == 0) issues it and each CTA copies its "
                      "own %.*s into its own %.*s; the issuer commits it "
                      "(tcgen05.commit.cta_group::2...multicast::cluster, "
                      "mask 3) and both CTAs wait before reading %.*s; "
                      "%.*s_taddr is what tcgen05.alloc.cta_group::2 wrote; "
                      "%.*s stays unwritten until then and is %s",
                      sn, sb->name, tn, tb->name, tn, tb->name, tn, tb->name,
                      sn, sb->name, align);
        return;
    }
    td_reason_set(why,
                  "tcgen05.cp is asynchronous: the issuing thread commits it "
                  "(tcgen05.commit.cta_group::1.mbarrier::arrive::one on a "
                  "barrier) and the readers wait on that barrier before %.*s "
                  "is read; %.*s_taddr is the base address tcgen05.alloc "
                  "wrote; %.*s stays unwritten until then, and its shared "
                  "allocation is %s (the descriptor holds address >> 4)",
                  tn, tb->name, tn, tb->name, sn, sb->name, align);
}

static int cp_emit(const td_call *call, const td_op_desc *op,
                   const void *unused, td_ir *ir, void *user, td_reason *why)
{
    (void)op;
    (void)unused;
    (void)user;
    td_cp_plan p;
    int rc = td__cp_plan(call, &p, why);
    if (rc != 0)
        return rc;
    const td_region *sr = td__copy_src_region(call);
    const td_buffer *tb = td__copy_dst(call);
    td_ir_buf *t = td_ir_buffer(ir, tb->name, tb->dtype, "tmem", tb->ndim,
                                tb->shape);
    td_ir_buf *s = t != NULL ? td__copy_declare(call, sr->buffer, ir, why)
                             : NULL;
    if (s == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_EDECLINED;
    for (int j = 0; j < p.n; j++) {
        td_ir_tmem_cp c = {
            .tmem = t,
            .column = td_int(ir, p.taddr[j]),
            .smem = {s, td_int(ir, p.base[j])},
            .shape = p.shape,
            .lbo = p.lbo,
            .sbo = p.sbo,
            .swizzle = p.swizzle,
            .cta_group = p.cta_group,
            .desc = "cp_desc",
            .first = j == 0,
        };
        td_ir_tcgen05_cp(ir, &c);
    }
    rc = td_ir_status(ir);
    if (rc != 0)
        return rc;
    cp_note(call, &p, why);
    return 0;
}

const td_impl_desc td__variant_copy_async_smem_tmem = {
    .name = "smem->tmem",
    .emit = cp_emit,
    .preds = cp_preds,
    .npreds = sizeof cp_preds / sizeof *cp_preds,
};
