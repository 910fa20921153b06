/*
 * The tcgen05.mma statements (ir_umma.c) in CUDA and TIRx.  CUDA: calls
 * of prelude helpers (the descriptor's encode, its warp-uniform low word,
 * the 16-byte offset added to it, one helper per kind and CTA group) whose
 * PTX runs under __CUDA_ARCH__ and which trap in a host build (tensor
 * memory has no stand-in); TIRx: TVM's statements, as its gemm_async
 * lowering prints them (T.cuda.tcgen05.encode_matrix_descriptor,
 * T.ptx.tcgen05(..., "mma", "cta_group::N", "kind::K", "", "pN")).
 */
#include <inttypes.h>
#include <string.h>

#include "codegen_internal.h"

/* Helper bits of td__cuda_needs.umma: the MMA of (kind, cta_group) at
 * bit 2 * kind + cta_group - 1 (U_TS << that with A in tensor memory), the
 * descriptor helpers, the .ws MMA of a kind at U_WS << kind (U_WS_TS <<
 * kind with A in tensor memory). */
enum { U_ENCODE = 1u << 8, U_UNIFORM = 1u << 9, U_ADD = 1u << 10,
       U_WS = 1u << 11, U_TS = 1u << 14, U_WS_TS = 1u << 20 };

/* TVM's table of the descriptor's layout type by swizzle mode. */
static const int layout_type[4] = {0, 6, 4, 2};

/* ts: A in tensor memory (PTX's [a_tmem] operand). */
static void mma_name(td_buf *b, td_umma_kind k, int cta_group, bool ws,
                     bool ts)
{
    td__buf_printf(b, "td_tcgen05_mma_%s%scg%d_%s", ws ? "ws_" : "",
                   ts ? "ts_" : "", cta_group, td_umma_kind_name(k));
}

/* A tensor-memory address: NAME_taddr + (lane << 16) + column. */
static void cuda_taddr(td_buf *l, const td_ir_buf *b, int64_t lane,
                       int64_t column)
{
    td__buf_printf(l, "%s_taddr", b->name);
    if (lane != 0)
        td__buf_printf(l, " + (%" PRId64 "u << 16)", lane);
    if (column != 0)
        td__buf_printf(l, " + %" PRId64, column);
}

/* ---- CUDA ----------------------------------------------------------- */

static void cuda_operand(const td__async_out *o, const td_ir_desc_operand *d,
                         unsigned *need)
{
    td_buf *l = o->line;
    if (d->form == TD_IR_DESC_TMEM) {
        cuda_taddr(l, d->tmem, d->lane, d->column);
        return;
    }
    if (d->form == TD_IR_DESC_ADD) {
        *need |= U_ADD;
        td__buf_printf(l, "td_tcgen05_smem_desc_add(%s, %" PRId64 "u)",
                       d->desc->name, d->off16);
        return;
    }
    *need |= U_ENCODE;
    td__buf_printf(l, "td_tcgen05_smem_desc(%s_ptr, %" PRId64 "u, %d, %d, %d)",
                   d->smem->name, d->off16, d->ldo, d->sdo, d->swizzle);
}

/* Bits of td__cuda_needs.umma_bs: the block-scaled MMA of (ts, kind,
 * cta_group) at bit 6 * ts + 2 * kind + cta_group - 1, the descriptor's
 * encode and its sf_id patch. */
enum { B_IDESC = 1u << 12, B_SF_ID = 1u << 13 };

static void bs_name(td_buf *b, td_umma_bs_kind k, int cta_group, bool ts)
{
    td__buf_printf(b, "td_tcgen05_mma_bs_%scg%d_%s", ts ? "ts_" : "",
                   cta_group, td_umma_bs_kind_name(k));
}

static void cuda_bs_mma(const td__async_out *o, const td_ir_umma *m,
                        td__cuda_needs *need)
{
    td_buf *l = o->line;
    bool ts = m->a.form == TD_IR_DESC_TMEM;
    need->umma_bs |= 1u << (6 * ts + 2 * m->bs_kind + m->cta_group - 1);
    bs_name(l, m->bs_kind, m->cta_group, ts);
    td__buf_puts(l, "(");
    cuda_taddr(l, m->tmem, m->lane, m->column);
    td__buf_puts(l, ", ");
    cuda_operand(o, &m->a, &need->umma);
    td__buf_puts(l, ", ");
    cuda_operand(o, &m->b, &need->umma);
    if (m->idesc_var != NULL)
        td__buf_printf(l, ", %s, ", m->idesc_var->name);
    else
        td__buf_printf(l, ", %" PRIu32 "u, ", m->idesc);
    cuda_taddr(l, m->sfa.tmem, m->sfa.lane, m->sfa.column);
    td__buf_puts(l, ", ");
    cuda_taddr(l, m->sfb.tmem, m->sfb.lane, m->sfb.column);
    td__buf_puts(l, ", ");
    o->expr(o->ctx, l, m->accum, 0);
    td__buf_puts(l, ")");
}

void td__cuda_umma(const td__async_out *o, const td__stmt *s,
                   td__cuda_needs *need)
{
    const td__umma *u = s->umma;
    td_buf *l = o->line;
    need->inc[TD__INC_CSTDINT] = true;
    if (u->what == TD__UMMA_IDESC) {
        const td_ir_idesc_bs *d = &u->idesc;
        o->p->live[u->var->id] = 1;
        if (d->given) {
            td__buf_printf(l, "unsigned int %s = %" PRIu32 "u", u->var->name,
                           d->value);
            return;
        }
        need->umma_bs |= B_IDESC;
        td__buf_printf(l,
                       "unsigned int %s = td_tcgen05_idesc_bs(%du, %du, %du, "
                       "%du, %du, %du, %d, %d)",
                       u->var->name, d->m, d->n, d->k, d->a_format,
                       d->b_format, d->s_format, d->trans_a, d->trans_b);
        return;
    }
    if (u->what == TD__UMMA_SF_ID) {
        need->umma_bs |= B_SF_ID;
        td__buf_printf(l, "td_tcgen05_idesc_sf_id(&%s, %du)",
                       u->patched->name, u->sf_id);
        return;
    }
    if (u->mma && u->m.bs) {
        cuda_bs_mma(o, &u->m, need);
        return;
    }
    if (!u->mma) {
        need->umma |= U_ENCODE | (u->uniform ? U_UNIFORM : 0u);
        td__buf_printf(l, "unsigned long long %s = ", u->var->name);
        if (u->uniform)
            td__buf_puts(l, "td_tcgen05_smem_desc_uniform(");
        td__buf_printf(l, "td_tcgen05_smem_desc(%s_ptr, 0u, %d, %d, %d)",
                       u->smem->name, u->ldo, u->sdo, u->swizzle);
        if (u->uniform)
            td__buf_puts(l, ")");
        o->p->live[u->var->id] = 1;
        return;
    }
    const td_ir_umma *m = &u->m;
    bool ts = m->a.form == TD_IR_DESC_TMEM;
    unsigned bit = m->ws ? (ts ? (unsigned)U_WS_TS : (unsigned)U_WS) << m->kind
                         : (ts ? (unsigned)U_TS : 1u)
                               << (2 * m->kind + m->cta_group - 1);
    need->umma |= bit;
    mma_name(l, m->kind, m->cta_group, m->ws, ts);
    td__buf_puts(l, "(");
    cuda_taddr(l, m->tmem, m->lane, m->column);
    td__buf_puts(l, ", ");
    cuda_operand(o, &m->a, &need->umma);
    td__buf_puts(l, ", ");
    cuda_operand(o, &m->b, &need->umma);
    td__buf_printf(l, ", %" PRIu32 "u, ", m->idesc);
    o->expr(o->ctx, l, m->accum, 0);
    td__buf_puts(l, ")");
}

/* The helper's parameters up to idesc; A is a descriptor (a_desc, "l")
 * or, ts, a tensor-memory address (a_tmem, "r") PTX reads as [%1]. */
static void helper_head(td_buf *o, td_umma_kind k, int cg, bool ws, bool ts)
{
    td__buf_puts(o, "\n__forceinline__ __device__ void ");
    mma_name(o, k, cg, ws, ts);
    td__buf_printf(o,
                   "(unsigned int d_tmem, %s, unsigned long long b_desc, "
                   "unsigned int idesc, int enable_input_d) {\n"
                   "#ifdef __CUDA_ARCH__\n",
                   ts ? "unsigned int a_tmem" : "unsigned long long a_desc");
}

static void helper_tail(td_buf *o, bool ts)
{
    td__buf_printf(o,
                   " : \"memory\");\n#else\n"
                   "  (void)d_tmem;\n  (void)%s;\n  (void)b_desc;\n"
                   "  (void)idesc;\n  (void)enable_input_d;\n"
                   "  __builtin_trap(); /* tensor memory: no host stand-in */\n"
                   "#endif\n}\n",
                   ts ? "a_tmem" : "a_desc");
}

/* The weight-stationary form: enable_input_d, then the zero column mask
 * (0: every column kept), no disable-output-lane words. */
static void ws_helper(td_buf *o, td_umma_kind k, bool ts)
{
    helper_head(o, k, 1, true, ts);
    td__buf_printf(o,
                   "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%4, 0; "
                   "tcgen05.mma.ws.cta_group::1.kind::%s [%%0], %s, %%2, %%3, "
                   "p, %%5; }\"\n      : : \"r\"(d_tmem), %s, "
                   "\"l\"(b_desc), \"r\"(idesc), \"r\"(enable_input_d), "
                   "\"l\"(0ull)",
                   td_umma_kind_name(k), ts ? "[%1]" : "%1",
                   ts ? "\"r\"(a_tmem)" : "\"l\"(a_desc)");
    helper_tail(o, ts);
}

static void mma_helper(td_buf *o, td_umma_kind k, int cg, bool ts)
{
    int nmask = cg == 2 ? 8 : 4;
    helper_head(o, k, cg, false, ts);
    td__buf_printf(o,
                   "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; "
                   "tcgen05.mma.cta_group::%d.kind::%s [%%0], %s, %%2, %%3, {",
                   4 + nmask, cg, td_umma_kind_name(k), ts ? "[%1]" : "%1");
    for (int i = 0; i < nmask; i++)
        td__buf_printf(o, "%s%%%d", i ? ", " : "", 4 + i);
    td__buf_printf(o, "}, p; }\"\n      : : \"r\"(d_tmem), %s, "
                      "\"l\"(b_desc), \"r\"(idesc)",
                   ts ? "\"r\"(a_tmem)" : "\"l\"(a_desc)");
    for (int i = 0; i < nmask; i++)
        td__buf_puts(o, ", \"r\"(0u)");
    td__buf_puts(o, ", \"r\"(enable_input_d)");
    helper_tail(o, ts);
}

/* The block-scaled MMA: the scale factors' tensor-memory cells [%4],
 * [%5], then the predicate; no disable-output-lane words. */
static void bs_helper(td_buf *o, td_umma_bs_kind k, int cg, bool ts)
{
    td__buf_puts(o, "\n__forceinline__ __device__ void ");
    bs_name(o, k, cg, ts);
    td__buf_printf(o,
                   "(unsigned int d_tmem, %s, unsigned long long b_desc, "
                   "unsigned int idesc, unsigned int sfa_tmem, unsigned int "
                   "sfb_tmem, int enable_input_d) {\n"
                   "#ifdef __CUDA_ARCH__\n"
                   "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%6, 0; "
                   "tcgen05.mma.cta_group::%d.kind::%s.block_scale."
                   "scale_vec::%dX [%%0], %s, %%2, %%3, [%%4], [%%5], p; }\"\n"
                   "      : : \"r\"(d_tmem), %s, \"l\"(b_desc), "
                   "\"r\"(idesc), \"r\"(sfa_tmem), \"r\"(sfb_tmem), "
                   "\"r\"(enable_input_d) : \"memory\");\n#else\n"
                   "  (void)d_tmem;\n  (void)%s;\n  (void)b_desc;\n"
                   "  (void)idesc;\n  (void)sfa_tmem;\n  (void)sfb_tmem;\n"
                   "  (void)enable_input_d;\n"
                   "  __builtin_trap(); /* tensor memory: no host stand-in */\n"
                   "#endif\n}\n",
                   ts ? "unsigned int a_tmem" : "unsigned long long a_desc",
                   cg, td_umma_bs_kind_name(k), td_umma_bs_scale_vec(k),
                   ts ? "[%1]" : "%1",
                   ts ? "\"r\"(a_tmem)" : "\"l\"(a_desc)",
                   ts ? "a_tmem" : "a_desc");
}

void td__cuda_umma_prelude(td_buf *o, const td__cuda_needs *need)
{
    if (need->umma & U_ENCODE)
        td__buf_puts(
            o,
            "\n/* The sm_100 shared memory descriptor of the matrix at smem + "
            "off16 * 16\n * bytes: ldo, sdo in 16-byte units, TVM's swizzle "
            "mode 0..3. */\n"
            "__forceinline__ __device__ unsigned long long "
            "td_tcgen05_smem_desc(const void *smem, unsigned int off16, "
            "unsigned int ldo, unsigned int sdo, unsigned int swizzle) {\n"
            "#ifdef __CUDA_ARCH__\n"
            "  const unsigned int layout[4] = {0, 6, 4, 2};\n"
            "  unsigned int addr = (unsigned int)__cvta_generic_to_shared(smem) "
            "+ off16 * 16;\n"
            "  return (unsigned long long)((addr >> 4) & 0x3FFF) |\n"
            "         (unsigned long long)(ldo & 0x3FFF) << 16 |\n"
            "         (unsigned long long)(sdo & 0x3FFF) << 32 | 1ull << 46 |\n"
            "         (unsigned long long)layout[swizzle & 3] << 61;\n"
            "#else\n"
            "  (void)smem;\n  (void)off16;\n  (void)ldo;\n  (void)sdo;\n"
            "  (void)swizzle;\n"
            "  __builtin_trap(); /* shared addresses: no host stand-in */\n"
            "  return 0;\n"
            "#endif\n}\n");
    if (need->umma & U_UNIFORM)
        td__buf_puts(
            o,
            "\n/* The descriptor with lane 0's low word (the start address) in "
            "every lane:\n * one elected lane issues the MMA. */\n"
            "__forceinline__ __device__ unsigned long long "
            "td_tcgen05_smem_desc_uniform(unsigned long long desc) {\n"
            "#ifdef __CUDA_ARCH__\n"
            "  unsigned int lo, hi;\n"
            "  asm volatile(\"mov.b64 {%0, %1}, %2;\" : \"=r\"(lo), "
            "\"=r\"(hi) : \"l\"(desc));\n"
            "  asm volatile(\"shfl.sync.idx.b32 %0, %0, 0, 0x1F, "
            "0xFFFFFFFF;\" : \"+r\"(lo));\n"
            "  asm volatile(\"mov.b64 %0, {%1, %2};\" : \"=l\"(desc) : "
            "\"r\"(lo), \"r\"(hi));\n"
            "#endif\n"
            "  return desc;\n}\n");
    if (need->umma & U_ADD)
        td__buf_puts(
            o,
            "\n/* off16 added to the descriptor's low word (its start "
            "address), without\n * carrying into the high word. */\n"
            "__forceinline__ __device__ unsigned long long "
            "td_tcgen05_smem_desc_add(unsigned long long desc, unsigned int "
            "off16) {\n"
            "  return (desc & 0xFFFFFFFF00000000ull) |\n"
            "         (unsigned int)((unsigned int)desc + off16);\n}\n");
    if (need->umma_bs & B_IDESC)
        td__buf_puts(
            o,
            "\n/* The block-scaled instruction descriptor (PTX ISA, "
            "tcgen05 instruction\n * descriptor, .kind::mxf8f6f4 / mxf4 / "
            "mxf4nvf4): dense, sf ids 0, no\n * negation; a_format bits "
            "7-9, b_format 10-12, MN-major A, B bits 15, 16,\n * N >> 3 "
            "bits 17-22, the scale format bit 23 (0 E4M3, 1 UE8M0), M >> 4 "
            "bits\n * 24-28, K = 96 bit 31 (never: k is 32 or 64). */\n"
            "__forceinline__ __device__ unsigned int td_tcgen05_idesc_bs("
            "unsigned int m, unsigned int n, unsigned int k, unsigned int "
            "a_format, unsigned int b_format, unsigned int s_format, int "
            "trans_a, int trans_b) {\n"
            "  return (a_format & 7u) << 7 | (b_format & 7u) << 10 |\n"
            "         (unsigned int)(trans_a != 0) << 15 | "
            "(unsigned int)(trans_b != 0) << 16 |\n"
            "         ((n >> 3) & 0x3Fu) << 17 | (s_format & 1u) << 23 | "
            "((m >> 4) & 0x1Fu) << 24 |\n"
            "         (unsigned int)(k == 96) << 31;\n}\n");
    if (need->umma_bs & B_SF_ID)
        td__buf_puts(
            o,
            "\n/* Which 8-bit scale factor of each 32-bit cell the next "
            "block-scaled MMA\n * reads: A's id (bits 29-30) and B's (bits "
            "4-5) set to sf_id. */\n"
            "__forceinline__ __device__ void td_tcgen05_idesc_sf_id("
            "unsigned int *idesc, unsigned int sf_id) {\n"
            "  *idesc = (*idesc & ~0x60000030u) | (sf_id & 3u) << 29 | "
            "(sf_id & 3u) << 4;\n}\n");
    for (int ts = 0; ts < 2; ts++)
        for (int k = 0; k < TD_UMMA_BS_KIND_COUNT; k++)
            for (int cg = 1; cg <= 2; cg++)
                if (need->umma_bs & 1u << (6 * ts + 2 * k + cg - 1))
                    bs_helper(o, (td_umma_bs_kind)k, cg, ts);
    for (int ts = 0; ts < 2; ts++) {
        unsigned base = ts ? (unsigned)U_TS : 1u;
        for (int k = 0; k < TD_UMMA_KIND_COUNT; k++)
            for (int cg = 1; cg <= 2; cg++)
                if (need->umma & base << (2 * k + cg - 1))
                    mma_helper(o, (td_umma_kind)k, cg, ts);
        base = ts ? (unsigned)U_WS_TS : (unsigned)U_WS;
        for (int k = 0; k < TD_UMMA_KIND_COUNT; k++)
            if (need->umma & base << k)
                ws_helper(o, (td_umma_kind)k, ts);
    }
}

/* ---- TIRx ----------------------------------------------------------- */

/* T.address_of(A[0, 0]): the buffer's first element. */
static void first_elem(td_buf *l, const td_ir_buf *b)
{
    td__buf_printf(l, "T.address_of(%s[", b->name);
    for (int i = 0; i < b->ndim; i++)
        td__buf_puts(l, i ? ", 0" : "0");
    td__buf_puts(l, "])");
}

/* TVM's encode of descriptor `name`, written as a line of its own, or
 * left in o->line when `own` (the statement's line). */
static void encode_line(const td__async_out *o, const char *name,
                        const td_ir_buf *smem, int64_t off16, int ldo,
                        int sdo, int swizzle, bool own)
{
    td_buf *l = o->line;
    size_t keep = l->len;
    td__buf_printf(l, "T.cuda.tcgen05.encode_matrix_descriptor("
                      "T.address_of(%s[0]), ",
                   name);
    if (off16 != 0)
        td__buf_puts(l, "T.handle_add_byte_offset(");
    first_elem(l, smem);
    if (off16 != 0)
        td__buf_printf(l, ", %" PRId64 ")", off16 * 16);
    td__buf_printf(l, ", %d, %d, %d)", ldo, sdo, swizzle);
    if (own || l->data == NULL)
        return;
    td__w_line(&o->p->w, "%s", l->data + keep);
    l->len = keep;
    l->data[keep] = '\0';
}

/* A tensor-memory address as TVM's lowering writes it: the base, base +
 * column, or get_tmem_addr(base, lane, column). */
static void tirx_taddr(td_buf *l, const td_ir_buf *b, int64_t lane,
                       int64_t column)
{
    if (lane != 0)
        td__buf_printf(l, "T.cuda.get_tmem_addr(%s_taddr, %" PRId64
                          ", %" PRId64 ")",
                       b->name, lane, column);
    else if (column != 0)
        td__buf_printf(l, "%s_taddr + T.Cast(\"uint32\", %" PRId64 ")",
                       b->name, column);
    else
        td__buf_printf(l, "%s_taddr", b->name);
}

static void tirx_operand(const td__async_out *o, const td_ir_desc_operand *d,
                         const char *enc)
{
    td_buf *l = o->line;
    switch (d->form) {
    case TD_IR_DESC_TMEM:
        tirx_taddr(l, d->tmem, d->lane, d->column);
        return;
    case TD_IR_DESC_ADD: {
        const char *n = d->desc->name;
        td__buf_printf(l,
                       "T.reinterpret(\"uint64\", T.Shuffle([T.Shuffle("
                       "[T.reinterpret(\"uint32x2\", %s[0])], [0]) + "
                       "T.Cast(\"uint32\", %" PRId64 "), T.Shuffle(["
                       "T.reinterpret(\"uint32x2\", %s[0])], [1])], [0, 1]))",
                       n, d->off16, n);
        return;
    }
    case TD_IR_DESC_ENCODE:
        td__buf_printf(l, "%s[0]", enc);
        return;
    case TD_IR_DESC_RECOMPUTE: {
        /* TVM's _uniform_desc: the constant high word and the low word's
         * ldo, or-ed with the start address. */
        unsigned hi = (unsigned)(d->sdo & 0x3FFF) | 1u << 14 |
                      (unsigned)layout_type[d->swizzle & 3] << 29;
        unsigned lo = (unsigned)(d->ldo & 0x3FFF) << 16;
        td__buf_printf(l, "T.bitwise_or(T.shift_left(T.uint64(%u), "
                          "T.uint64(32)), T.Cast(\"uint64\", ",
                       hi);
        if (lo)
            td__buf_printf(l, "T.bitwise_or(T.uint32(%u), ", lo);
        td__buf_puts(l, "T.bitwise_and(T.shift_right("
                        "T.cuda.cvta_generic_to_shared(");
        if (d->off16 != 0)
            td__buf_puts(l, "T.handle_add_byte_offset(");
        first_elem(l, d->smem);
        if (d->off16 != 0)
            td__buf_printf(l, ", %" PRId64 ")", d->off16 * 16);
        td__buf_puts(l, "), T.uint32(4)), T.uint32(16383))");
        if (lo)
            td__buf_puts(l, ")");
        td__buf_puts(l, "))");
        return;
    }
    }
}

static void tirx_bool(td_buf *l, bool v)
{
    td__buf_puts(l, v ? "T.bool(True)" : "T.bool(False)");
}

/* The enable-input-d flag: a constant as T.bool, else the expression. */
static void tirx_accum(const td__async_out *o, const td_expr *accum)
{
    int64_t v;
    const td_expr *f = td__fold(&o->p->arena, accum, NULL);
    if (f != NULL && td__is_int(f, &v))
        tirx_bool(o->line, v != 0);
    else
        o->expr(o->ctx, o->line, accum, 0);
}

/* TVM's block-scaled statements: the descriptor local (declared, then
 * encoded; or declared with the given value), its sf_id patch, the MMA. */
static bool tirx_bs(const td__async_out *o, const td__umma *u)
{
    td_buf *l = o->line;
    td__writer *w = &o->p->w;
    if (u->what == TD__UMMA_IDESC) {
        const td_ir_idesc_bs *d = &u->idesc;
        o->p->live[u->var->id] = 1;
        if (d->given) {
            td__buf_printf(l, "%s: T.uint32 = T.uint32(%" PRIu32 ")",
                           u->var->name, d->value);
            return true;
        }
        td__w_line(w, "%s: T.uint32", u->var->name);
        /* The keywords of TVM's lowering (its printer writes them
         * positionally, which its parser refuses). */
        td__buf_printf(l,
                       "T.cuda.tcgen05.encode_instr_descriptor_block_scaled("
                       "T.address_of(%s), d_dtype=\"float32\", "
                       "a_dtype=\"%s\", b_dtype=\"%s\", sfa_dtype=\"%s\", "
                       "sfb_dtype=\"%s\", sfa_tmem_addr=",
                       u->var->name, td_dtype_name(d->a), td_dtype_name(d->b),
                       td_dtype_name(d->sfa_dtype),
                       td_dtype_name(d->sfb_dtype));
        tirx_taddr(l, d->sfa.tmem, d->sfa.lane, d->sfa.column);
        td__buf_puts(l, ", sfb_tmem_addr=");
        tirx_taddr(l, d->sfb.tmem, d->sfb.lane, d->sfb.column);
        td__buf_printf(l, ", M=%d, N=%d, K=%d, trans_a=", d->m, d->n, d->k);
        tirx_bool(l, d->trans_a);
        td__buf_puts(l, ", trans_b=");
        tirx_bool(l, d->trans_b);
        td__buf_printf(l, ", n_cta_groups=%d)", d->cta_group);
        return true;
    }
    if (u->what == TD__UMMA_SF_ID) {
        td__buf_printf(l, "T.cuda.runtime_instr_desc(T.address_of(%s), %d)",
                       u->patched->name, u->sf_id);
        return true;
    }
    if (!u->mma || !u->m.bs)
        return false;
    const td_ir_umma *m = &u->m;
    td__buf_puts(l, "T.ptx.tcgen05(");
    tirx_taddr(l, m->tmem, m->lane, m->column);
    td__buf_puts(l, ", ");
    tirx_operand(o, &m->a, u->enc[0]);
    td__buf_puts(l, ", ");
    tirx_operand(o, &m->b, u->enc[1]);
    if (m->idesc_var != NULL)
        td__buf_printf(l, ", %s, ", m->idesc_var->name);
    else
        td__buf_printf(l, ", T.uint32(%" PRIu32 "), ", m->idesc);
    tirx_taddr(l, m->sfa.tmem, m->sfa.lane, m->sfa.column);
    td__buf_puts(l, ", ");
    tirx_taddr(l, m->sfb.tmem, m->sfb.lane, m->sfb.column);
    td__buf_puts(l, ", ");
    tirx_accum(o, m->accum);
    td__buf_printf(l, ", \"mma\", \"cta_group::%d\", \"kind::%s\", "
                      "\"block_scale\", \"scale_vec::%dX\", \"p6\")",
                   m->cta_group, td_umma_bs_kind_name(m->bs_kind),
                   td_umma_bs_scale_vec(m->bs_kind));
    return true;
}

void td__tirx_umma(const td__async_out *o, const td__stmt *s)
{
    const td__umma *u = s->umma;
    td_buf *l = o->line;
    td__writer *w = &o->p->w;
    if (tirx_bs(o, u))
        return;
    if (!u->mma) {
        const char *n = u->var->name;
        o->p->live[u->var->id] = 1;
        td__w_line(w, "%s = T.alloc_buffer((1,), \"uint64\", scope=\"local\")",
                   n);
        encode_line(o, n, u->smem, 0, u->ldo, u->sdo, u->swizzle,
                    !u->uniform);
        if (!u->uniform)
            return;
        td__w_line(w, "%s_lo = T.alloc_buffer((1,), \"uint32\", "
                      "scope=\"local\")", n);
        td__w_line(w, "%s_hi = T.alloc_buffer((1,), \"uint32\", "
                      "scope=\"local\")", n);
        td__w_line(w, "T.ptx.mov(%s_lo[0], %s_hi[0], %s[0], \"b64\", \"\")",
                   n, n, n);
        td__w_line(w, "T.ptx.shfl_sync(%s_lo[0], %s_lo[0], T.uint32(0), "
                      "T.uint32(31), T.uint32(4294967295), \"idx\", \"b32\", "
                      "\"\")", n, n);
        td__buf_printf(l, "T.ptx.mov(%s[0], %s_lo[0], %s_hi[0], \"b64\", "
                          "\"\")", n, n, n);
        return;
    }
    const td_ir_umma *m = &u->m;
    const td_ir_desc_operand *ops[2] = {&m->a, &m->b};
    /* TVM encodes B's descriptor first. */
    for (int i = 1; i >= 0; i--)
        if (ops[i]->form == TD_IR_DESC_ENCODE) {
            td__w_line(w, "%s = T.alloc_buffer((1,), \"uint64\", "
                          "scope=\"local\")", u->enc[i]);
            encode_line(o, u->enc[i], ops[i]->smem, ops[i]->off16,
                        ops[i]->ldo, ops[i]->sdo, ops[i]->swizzle, false);
        }
    td__buf_puts(l, "T.ptx.tcgen05(");
    tirx_taddr(l, m->tmem, m->lane, m->column);
    for (int i = 0; i < 2; i++) {
        td__buf_puts(l, ", ");
        tirx_operand(o, ops[i], u->enc[i]);
    }
    td__buf_printf(l, ", T.uint32(%" PRIu32 ")", m->idesc);
    int nmask = m->ws ? 0 : m->cta_group == 2 ? 8 : 4;
    for (int i = 0; i < nmask; i++)
        td__buf_puts(l, ", T.uint32(0)");
    td__buf_puts(l, ", ");
    int64_t v;
    const td_expr *f = td__fold(&o->p->arena, m->accum, NULL);
    if (f != NULL && td__is_int(f, &v))
        td__buf_puts(l, v ? "T.bool(True)" : "T.bool(False)");
    else
        o->expr(o->ctx, l, m->accum, 0);
    /* TVM's .ws form: the zero column mask after the flag, "ws" after
     * "mma", the predicate operand %4. */
    td__buf_printf(l, "%s, \"mma\", %s\"cta_group::%d\", \"kind::%s\", "
                      "\"\", \"p%d\")",
                   m->ws ? ", T.uint64(0)" : "", m->ws ? "\"ws\", " : "",
                   m->cta_group, td_umma_kind_name(m->kind), 4 + nmask);
}
