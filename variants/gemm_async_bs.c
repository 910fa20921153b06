/*
 * Block scaling of the tcgen05 variant (design/gemm/plan.md 3.7): the
 * 8-argument gemm_async, C = (A x SFA) (B x SFB) with the scale factors
 * SFA, SFB in tensor memory (sources 3 and 4), issued as
 * tcgen05.mma.cta_group::G.kind::{mxf8f6f4, mxf4, mxf4nvf4}.block_scale.
 * scale_vec::{1, 2, 4}X.  gemm_async.c calls these at its hook points, in
 * TVM's order: the A / B dtypes (bs_dtypes), the scale factors (bs_sf:
 * scopes, dtypes, sf_mma_k, each slice the atom's direct sum), the SF
 * rows and K extents (bs_extents, after K), then at emission's turn
 * smem_desc, the kind and the shape rule TVM's encoder checks (bs_final);
 * emission encodes the instruction descriptor at run time (as TVM does)
 * and per MMA names the scale factors' cells, patching sf_id where
 * several K steps share one 32-bit cell.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "gemm.h"
#include "gemm_async.h"
#include "layout.h"
#include "model.h"

#define DECLINE(...)                                                           \
    do {                                                                       \
        td_reason_set(why, __VA_ARGS__);                                       \
        return TD_EDECLINED;                                                   \
    } while (0)

/* Block scaling is upstream's 8-argument form: the scale factors are
 * sources 3 and 4 (TD_GEMM_ASYNC_SFA, _SFB). */
bool td__ga_is_block_scaled(const td_call *call)
{
    return call->nsrcs > TD_GEMM_ASYNC_SFB;
}

static const td_region *sf_region(const td_call *call, int i)
{
    return &call->srcs[TD_GEMM_ASYNC_SFA + i].region;
}

/* TVM's _BLOCK_SCALED_DTYPES check (replacing the dense list). */
int td__ga_bs_dtypes(const td_call *call, td_reason *why)
{
    for (int i = 0; i < 2; i++) {
        const td_buffer *b = td__region_buffer(call, &call->srcs[i].region);
        if (b == NULL)
            return TD_EINVAL;
        if (b->dtype != TD_F4E2M1 && b->dtype != TD_F8E4M3)
            DECLINE("tcgen05 block-scaled schedule expected %c_type in "
                    "['float4_e2m1fn', 'float8_e4m3fn'], got %s",
                    "AB"[i], td_dtype_name(b->dtype));
    }
    return 0;
}

/* TVM's _compute_sf_mma_k: scale factors per MMA K step. */
static int sf_mma_k(td_dtype data, td_dtype sf)
{
    if (data != TD_F4E2M1)
        return 1;
    return sf == TD_F8E8M0 ? 2 : 4;
}

/* TVM's _validate_sf_tmem_layout: the slice (rows, K) must be the direct
 * sum atom (+) outer over [rows / 32, 32, K / s, s], the atom
 * S[(32, s) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]. */
static int sf_layout(const td_layout *slice, bool sliced, int64_t rows,
                     int64_t k_total, int s, const char *name,
                     td_reason *why)
{
    if (!sliced)
        DECLINE("%s: sliced layout must be TileLayout, got <class "
                "'NoneType'>",
                name);
    if (k_total % s != 0)
        DECLINE("%s: sf_K_total=%" PRId64 " must be divisible by "
                "sf_mma_k=%d",
                name, k_total, s);
    char text[96];
    td_layout atom;
    snprintf(text, sizeof text,
             "S[(32, %d) : (1@TLane, 1@TCol)] + R[4 : 32@TLane]", s);
    if (td__ga_parse(text, &atom) != 0)
        return TD_EINVAL;
    const int64_t inter[4] = {rows / 32, 32, k_total / s, s};
    const int64_t right[2] = {32, s};
    int rc = rows / 32 > 0
                 ? td__lay_is_direct_sum_right(&atom, slice, inter, right, 2,
                                               NULL)
                 : 0;
    if (rc != 1)
        DECLINE("%s: layout does not match atom direct_sum outer pattern",
                name);
    return 0;
}

int td__ga_bs_sf(const td_call *call, td__ga_bs *bs, td_reason *why)
{
    const td_buffer *sb[2];
    memset(bs, 0, sizeof *bs);
    for (int i = 0; i < 2; i++)
        if ((sb[i] = td__region_buffer(call, sf_region(call, i))) == NULL)
            return TD_EINVAL;
    if (!td__name_is(sb[0]->scope, "tmem") ||
        !td__name_is(sb[1]->scope, "tmem"))
        DECLINE("tcgen05 block-scaled schedule expected SFA_scope=tmem, "
                "SFB_scope=tmem, got SFA_scope=%.*s, SFB_scope=%.*s",
                TD__FIELD(sb[0]->scope), TD__FIELD(sb[1]->scope));
    for (int i = 0; i < 2; i++)
        if (sb[i]->dtype != TD_F8E8M0 && sb[i]->dtype != TD_F8E4M3)
            DECLINE("tcgen05 block-scaled schedule expected SF%c_type in "
                    "['float8_e8m0fnu', 'float8_e4m3fn'], got %s",
                    "AB"[i], td_dtype_name(sb[i]->dtype));
    const td_buffer *ab = td__region_buffer(call, &call->srcs[0].region);
    const td_buffer *bb = td__region_buffer(call, &call->srcs[1].region);
    int sa = sf_mma_k(ab->dtype, sb[0]->dtype);
    int sbk = sf_mma_k(bb->dtype, sb[1]->dtype);
    if (sa != sbk)
        DECLINE("SFA and SFB must have same sf_mma_k, got sfa=%d, sfb=%d", sa,
                sbk);
    bs->sf_mma_k = sa;
    bs->a = ab->dtype;
    bs->b = bb->dtype;
    for (int i = 0; i < 2; i++) {
        const td_region *r = sf_region(call, i);
        bs->sf[i] = sb[i]->dtype;
        bs->tmem[i] = sb[i];
        bs->rows[i] = r->ndim >= 2 ? r->extent[r->ndim - 2] : 1;
        bs->k_total[i] = r->extent[r->ndim - 1];
        bool sliced = td__ga_tmem_slice(call, r, &bs->slice[i]) == 0;
        int rc = sf_layout(&bs->slice[i], sliced, bs->rows[i],
                           bs->k_total[i], sa, i ? "SFB" : "SFA", why);
        if (rc != 0)
            return rc;
    }
    /* The kind, by TVM's _TCGEN05_MMA_RULES (looked up where TVM does,
     * bs_final; -1: none). */
    td_dtype s = bs->sf[0];
    bs->kind = -1;
    if (bs->sf[0] == bs->sf[1] && bs->a == bs->b) {
        if (bs->a == TD_F8E4M3 && s == TD_F8E8M0)
            bs->kind = TD_UMMA_MXF8F6F4;
        else if (bs->a == TD_F4E2M1 && s == TD_F8E8M0)
            bs->kind = TD_UMMA_MXF4;
        else if (bs->a == TD_F4E2M1 && s == TD_F8E4M3)
            bs->kind = TD_UMMA_MXF4NVF4;
    }
    return 0;
}

/* TVM's shape asserts of the scale factors, after K. */
int td__ga_bs_extents(td__ga_bs *bs, int64_t m, int64_t n, int64_t k_iters,
                      td_reason *why)
{
    if (bs->rows[0] != m)
        DECLINE("tcgen05: SFA rows=%" PRId64 " must equal M=%" PRId64,
                bs->rows[0], m);
    if (bs->rows[1] < n)
        DECLINE("tcgen05: SFB rows=%" PRId64 " must be >= N=%" PRId64,
                bs->rows[1], n);
    for (int i = 0; i < 2; i++) {
        /* {s, s * K_iters, s * K_iters * 4} as Python prints the set: in
         * the order of its 8-slot hash table (an int hashes to itself;
         * a taken slot moves on to (5 i + 1 + perturb) & 7). */
        int64_t v[3] = {bs->sf_mma_k, bs->sf_mma_k * k_iters,
                        bs->sf_mma_k * k_iters * 4};
        int64_t slot[8];
        bool used[8] = {false};
        bool ok = false;
        for (int j = 0; j < 3; j++) {
            ok = ok || bs->k_total[i] == v[j];
            bool dup = false;
            for (int q = 0; q < 8; q++)
                dup = dup || (used[q] && slot[q] == v[j]);
            if (dup)
                continue;
            uint64_t perturb = (uint64_t)v[j];
            size_t at = (size_t)((uint64_t)v[j] & 7u);
            while (used[at]) {
                perturb >>= 5;
                at = (size_t)((at * 5 + 1 + perturb) & 7u);
            }
            used[at] = true;
            slot[at] = v[j];
        }
        if (ok)
            continue;
        char set[96];
        size_t len = 0;
        for (int q = 0; q < 8; q++)
            if (used[q] && len < sizeof set)
                len += (size_t)snprintf(set + len, sizeof set - len,
                                        "%s%" PRId64, len ? ", " : "",
                                        slot[q]);
        DECLINE("tcgen05: SF%c K extent=%" PRId64 " must be in {%s}", "AB"[i],
                bs->k_total[i], set);
    }
    bs->per_ki[0] = k_iters > 0 ? bs->k_total[0] / k_iters : 0;
    bs->per_ki[1] = k_iters > 0 ? bs->k_total[1] / k_iters : 0;
    /* Several K steps share one 32-bit cell: rotate sf_id. */
    bs->sf_id = bs->sf_mma_k < 4 && bs->per_ki[0] > 0;
    return 0;
}

int td__ga_bs_shape(const td__ga_bs *bs, int cta_group, int64_t m_instr,
                    int64_t n_instr, int64_t mma_k, td_reason *why)
{
    if (bs->kind < 0)
        DECLINE("Invalid multiplicand data types for Tcgen05 MMA, check "
                "failed for d: float32, a: %s, b: %s, scale_a: %s, scale_b: "
                "%s",
                td_dtype_name(bs->a), td_dtype_name(bs->b),
                td_dtype_name(bs->sf[0]), td_dtype_name(bs->sf[1]));
    /* TVM's _TCGEN05_MMA_SHAPE_RULES for the block-scaled kinds */
    int64_t step = cta_group == 1 ? (m_instr == 128 ? 8 : 0)
                                  : (m_instr == 128 || m_instr == 256 ? 16 : 0);
    if (step == 0 || n_instr < step || n_instr > 256 || n_instr % step != 0)
        DECLINE("Invalid matrix shape for Tcgen05 MMA, check failed for "
                "kind: %s, is_sparse: False, cta_group: %d, M: %" PRId64
                ", N: %" PRId64 ", K: %" PRId64,
                td_umma_bs_kind_name((td_umma_bs_kind)bs->kind), cta_group,
                m_instr, n_instr, mma_k);
    return 0;
}

/* What TVM checks last: smem_desc='encode' (in its lowering), the kind
 * (there too), then what its encoder checks when the instruction
 * descriptor is encoded at run time: the shape table of the block-scaled
 * kinds, the transposes (8-bit data only). */
int td__ga_bs_final(const td_call *call, td__ga_bs *bs, int cta_group,
                    int64_t m_instr, int64_t n_instr, int64_t mma_k,
                    bool a_mn, bool b_mn, td_reason *why)
{
    const td_config_entry *sd = td_call_config(call, "smem_desc");
    if (sd != NULL && sd->kind == TD_VALUE_STRING &&
        strncmp(sd->s, "encode", TD_NAME_MAX) == 0)
        DECLINE("tcgen05 gemm_async smem_desc='encode' is only implemented "
                "for dense MMA");
    if (bs->kind < 0)
        return td__ga_bs_shape(bs, cta_group, m_instr, n_instr, mma_k, why);
    const td_config_entry *di = td_call_config(call, "descI");
    bs->given = di != NULL;
    if (bs->given) {
        if (di->kind != TD_VALUE_INT || di->i < 0 || di->i > UINT32_MAX)
            DECLINE("gemm_async: descI must be a uint32 instruction "
                    "descriptor");
        bs->value = (uint32_t)di->i;
        return 0; /* TVM encodes nothing: no encoder checks */
    }
    int rc = td__ga_bs_shape(bs, cta_group, m_instr, n_instr, mma_k, why);
    if (rc != 0)
        return rc;
    if (a_mn && bs->a != TD_F8E4M3)
        DECLINE("Invalid a_dtype for transpose: %s", td_dtype_name(bs->a));
    if (b_mn && bs->b != TD_F8E4M3)
        DECLINE("Invalid b_dtype for transpose: %s", td_dtype_name(bs->b));
    bs->idesc = (td_ir_idesc_bs){
        .m = (int)m_instr,
        .n = (int)n_instr,
        .k = (int)mma_k,
        /* kind::mxf8f6f4 spells E4M3 0; mxf4 and mxf4nvf4 E2M1 1 */
        .a_format = bs->kind == TD_UMMA_MXF8F6F4 ? 0 : 1,
        .b_format = bs->kind == TD_UMMA_MXF8F6F4 ? 0 : 1,
        .s_format = bs->sf[0] == TD_F8E8M0 ? 1 : 0,
        .trans_a = a_mn,
        .trans_b = b_mn,
        .cta_group = cta_group,
        .a = bs->a,
        .b = bs->b,
        .sfa_dtype = bs->sf[0],
        .sfb_dtype = bs->sf[1],
    };
    return 0;
}

/* The scale factor cell of element `linear` of SF slice i: its lane and
 * 32-bit column, and the byte in the cell. */
static int sf_cell(const td__ga_bs *bs, int i, int64_t linear,
                   td_ir_desc_operand *op, int *byte)
{
    int64_t c[TD_AXIS_COUNT];
    int rc = td__lay_map(&bs->slice[i], linear, c);
    if (rc != 0)
        return rc;
    int epc = 32 / td_dtype_bits(bs->sf[i]);
    int64_t col = c[TD_AXIS_TCOL];
    *op = (td_ir_desc_operand){.form = TD_IR_DESC_TMEM,
                               .lane = c[TD_AXIS_TLANE],
                               .column = col / epc};
    *byte = (int)(col % epc);
    return 0;
}

int td__ga_bs_begin(td_ir *ir, td__ga_bs *bs)
{
    bs->buf[0] = td_ir_buffer(ir, bs->tmem[0]->name, bs->tmem[0]->dtype,
                              "tmem", bs->tmem[0]->ndim, bs->tmem[0]->shape);
    bs->buf[1] = bs->tmem[1] == bs->tmem[0]
                     ? bs->buf[0]
                     : td_ir_buffer(ir, bs->tmem[1]->name,
                                    bs->tmem[1]->dtype, "tmem",
                                    bs->tmem[1]->ndim, bs->tmem[1]->shape);
    bs->var = NULL;
    if (bs->buf[0] == NULL || bs->buf[1] == NULL)
        return td_ir_status(ir) != 0 ? td_ir_status(ir) : TD_ENOMEM;
    /* A given descriptor without a rotation is the MMA's operand as it
     * is; otherwise a local (TVM's descI_local), encoded at run time from
     * the first scale factors' cells or starting as the given value. */
    if (bs->given && !bs->sf_id)
        return 0;
    td_ir_idesc_bs d = bs->idesc;
    int byte;
    int rc;
    if ((rc = sf_cell(bs, 0, 0, &d.sfa, &byte)) != 0 ||
        (rc = sf_cell(bs, 1, 0, &d.sfb, &byte)) != 0)
        return rc;
    d.sfa.tmem = bs->buf[0];
    d.sfb.tmem = bs->buf[1];
    d.given = bs->given;
    d.value = bs->value;
    bs->var = td_ir_idesc_block_scaled(ir, "descI_local", &d);
    return bs->var != NULL ? 0
                           : td_ir_status(ir) != 0 ? td_ir_status(ir)
                                                   : TD_EINVAL;
}

int td__ga_bs_mma(td_ir *ir, const td__ga_bs *bs, int64_t mi, int64_t ni,
                  int64_t ki, int64_t m_mma, int64_t n_cta, td_ir_umma *u)
{
    int64_t al = mi * m_mma * bs->k_total[0] + ki * bs->per_ki[0];
    int64_t bl = ni * n_cta * bs->k_total[1] + ki * bs->per_ki[1];
    int byte_a, byte_b, rc;
    if ((rc = sf_cell(bs, 0, al, &u->sfa, &byte_a)) != 0 ||
        (rc = sf_cell(bs, 1, bl, &u->sfb, &byte_b)) != 0)
        return rc;
    u->sfa.tmem = bs->buf[0];
    u->sfb.tmem = bs->buf[1];
    if (bs->sf_id)
        td_ir_idesc_sf_id(ir, bs->var, byte_a);
    u->bs = true;
    u->bs_kind = (td_umma_bs_kind)bs->kind;
    u->idesc_var = bs->var;
    u->idesc = bs->value;
    return td_ir_status(ir);
}
