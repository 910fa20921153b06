/*
 * The tcgen05.mma statements (sm_100a): a shared memory descriptor's
 * declaration and the instruction itself.  The builders check their
 * operands and append one TD__S_UMMA statement; the printers
 * (print_umma.c) spell them in CUDA and TIRx.
 */
#include <string.h>

#include "codegen_internal.h"

static const char *const kind_names[TD_UMMA_KIND_COUNT] = {"f16", "tf32",
                                                           "f8f6f4"};

const char *td_umma_kind_name(td_umma_kind k)
{
    return (unsigned)k < TD_UMMA_KIND_COUNT ? kind_names[k] : NULL;
}

static const char *const bs_names[TD_UMMA_BS_KIND_COUNT] = {
    "mxf8f6f4", "mxf4", "mxf4nvf4"};

const char *td_umma_bs_kind_name(td_umma_bs_kind k)
{
    return (unsigned)k < TD_UMMA_BS_KIND_COUNT ? bs_names[k] : NULL;
}

int td_umma_bs_scale_vec(td_umma_bs_kind k)
{
    return k == TD_UMMA_MXF8F6F4 ? 1 : k == TD_UMMA_MXF4 ? 2
                                   : k == TD_UMMA_MXF4NVF4 ? 4 : 0;
}

/* A shared call buffer of this IR. */
static bool shared_buf(const td_ir *ir, const td_ir_buf *b)
{
    return b != NULL && b->owner == ir && !b->scratch &&
           strncmp(b->scope, "shared", 6) == 0;
}

static bool desc_fields(int ldo, int sdo, int swizzle)
{
    return ldo >= 0 && ldo < (1 << 14) && sdo >= 0 && sdo < (1 << 14) &&
           swizzle >= 0 && swizzle <= 3;
}

static td__umma *add(td_ir *ir)
{
    td__stmt *s = td__ir_stmt(ir, TD__S_UMMA);
    td__umma *u = s != NULL ? td__arena_alloc(&ir->arena, sizeof *u) : NULL;
    if (u == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return NULL;
    }
    memset(u, 0, sizeof *u);
    s->umma = u;
    td__ir_append(ir, s);
    return u;
}

td_var *td_ir_smem_desc(td_ir *ir, const char *name, const td_ir_buf *smem,
                        int ldo, int sdo, int swizzle, bool uniform)
{
    if (!td__ir_live(ir))
        return NULL;
    if (name == NULL || name[0] == '\0' || !shared_buf(ir, smem) ||
        !desc_fields(ldo, sdo, swizzle)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_var *v = td__ir_var(ir, name, TD_U64);
    td__umma *u = v != NULL ? add(ir) : NULL;
    if (u == NULL)
        return NULL;
    u->var = v;
    u->smem = smem;
    u->ldo = ldo;
    u->sdo = sdo;
    u->swizzle = swizzle;
    u->uniform = uniform;
    return v;
}

/* A tensor-memory call buffer of this IR. */
static bool tmem_buf(const td_ir *ir, const td_ir_buf *b)
{
    return b != NULL && b->owner == ir && !b->scratch &&
           strcmp(b->scope, "tmem") == 0;
}

static bool operand(const td_ir *ir, const td_ir_desc_operand *d)
{
    switch (d->form) {
    case TD_IR_DESC_TMEM:
        return tmem_buf(ir, d->tmem) && d->lane >= 0 && d->lane < 128 &&
               d->column >= 0 && d->column < 512;
    case TD_IR_DESC_ADD:
        return d->desc != NULL && d->desc->owner == ir &&
               d->desc->dtype == TD_U64 && d->off16 >= 0 &&
               d->off16 < ((int64_t)1 << 32);
    case TD_IR_DESC_ENCODE:
    case TD_IR_DESC_RECOMPUTE:
        return shared_buf(ir, d->smem) && d->off16 >= 0 &&
               d->off16 < (1 << 14) &&
               desc_fields(d->ldo, d->sdo, d->swizzle);
    }
    return false;
}

void td_ir_tcgen05_mma(td_ir *ir, const td_ir_umma *m)
{
    if (!td__ir_live(ir))
        return;
    bool ok = m != NULL &&
              (m->bs ? (unsigned)m->bs_kind < TD_UMMA_BS_KIND_COUNT && !m->ws &&
                           m->sfa.form == TD_IR_DESC_TMEM &&
                           m->sfb.form == TD_IR_DESC_TMEM &&
                           operand(ir, &m->sfa) && operand(ir, &m->sfb) &&
                           (m->idesc_var == NULL ||
                            (m->idesc_var->owner == ir &&
                             m->idesc_var->dtype == TD_U32))
                     : (unsigned)m->kind < TD_UMMA_KIND_COUNT) &&
              (m->cta_group == 1 || (m->cta_group == 2 && !m->ws)) &&
              tmem_buf(ir, m->tmem) && m->lane >= 0 &&
              m->lane < 128 && m->column >= 0 && m->column < 512 &&
              operand(ir, &m->a) && operand(ir, &m->b) &&
              m->b.form != TD_IR_DESC_TMEM && m->accum != NULL &&
              td__ir_stmt_operand(ir, m->accum) &&
              (m->accum->dtype == TD_I32 || m->accum->dtype == TD_U32);
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    /* An encoded operand is a local of its own in TIRx (TVM's per-MMA
     * T.alloc_local); CUDA passes the value. */
    const char *enc[2] = {NULL, NULL};
    const td_ir_desc_operand *ops[2] = {&m->a, &m->b};
    for (int i = 0; i < 2; i++)
        if (ops[i]->form == TD_IR_DESC_ENCODE &&
            (enc[i] = td__ir_unique_name(ir, i ? "descB" : "descA")) == NULL)
            return;
    td__umma *u = add(ir);
    if (u == NULL)
        return;
    u->what = TD__UMMA_MMA;
    u->mma = true;
    u->m = *m;
    u->enc[0] = enc[0];
    u->enc[1] = enc[1];
}

td_var *td_ir_idesc_block_scaled(td_ir *ir, const char *name,
                                 const td_ir_idesc_bs *d)
{
    if (!td__ir_live(ir))
        return NULL;
    /* The shape is the PTX table's (m 128 or 256, n a multiple of 8 up to
     * 256, k 32 or 64: the checks are the variant's), the fields fit
     * their bits. */
    bool ok = name != NULL && name[0] != '\0' && d != NULL &&
              (d->given ||
               ((d->m == 64 || d->m == 128 || d->m == 256) && d->n >= 8 &&
                d->n <= 256 && d->n % 8 == 0 && (d->k == 32 || d->k == 64) &&
                d->a_format >= 0 && d->a_format < 8 && d->b_format >= 0 &&
                d->b_format < 8 && (d->s_format == 0 || d->s_format == 1) &&
                (d->cta_group == 1 || d->cta_group == 2))) &&
              d->sfa.form == TD_IR_DESC_TMEM && d->sfb.form == TD_IR_DESC_TMEM &&
              operand(ir, &d->sfa) && operand(ir, &d->sfb);
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_var *v = td__ir_var(ir, name, TD_U32);
    td__umma *u = v != NULL ? add(ir) : NULL;
    if (u == NULL)
        return NULL;
    u->what = TD__UMMA_IDESC;
    u->var = v;
    u->idesc = *d;
    return v;
}

void td_ir_idesc_sf_id(td_ir *ir, const td_var *idesc, int sf_id)
{
    if (!td__ir_live(ir))
        return;
    if (idesc == NULL || idesc->owner != ir || idesc->dtype != TD_U32 ||
        sf_id < 0 || sf_id > 3) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__umma *u = add(ir);
    if (u == NULL)
        return;
    u->what = TD__UMMA_SF_ID;
    u->patched = idesc;
    u->sf_id = sf_id;
}
