/*
 * The TIRx of the asynchronous nodes (ir_async.c), in the forms TVM 0.27
 * prints them (design/copy_async/probes): T.ptx.mbarrier, T.cuda.
 * mbarrier_wait, T.ptx.fence, T.cuda.cluster_sync, the positional
 * T.ptx.cp of the bulk copies (operands, then the chain's qualifiers in
 * order, "" where one is absent), T.ptx.mapa, T.ptx.prefetch and the
 * positional T.ptx.tcgen05 of tensor-memory loads and stores (the
 * impl's script as the wheel prints it for a .32x32b case) and of
 * tcgen05.cp (probes/out_tcgen05_cp.txt, its descriptor encoded where the
 * call's first copy is); the
 * body's tensor maps are declared as TVM declares them, NAME =
 * T.TensorMap().  The expressions are written by the calling printer
 * (print_tirx.c) through td__async_out.
 */
#include <stdio.h>
#include <string.h>

#include "codegen_internal.h"

static void ex(const td__async_out *o, const td_expr *e, int level)
{
    o->expr(o->ctx, o->line, e, level);
}

/* T.address_of(B[off]) for a 1-d buffer, T.address_of(B[0, 0]) at the
 * start of another, else T.ptr_byte_offset(T.address_of(B[0, 0]),
 * off * bytes, "dtype"), as the cp.async printer spells an offset. */
static void addr(const td__async_out *o, const td__addr *a)
{
    td_buf *l = o->line;
    const td_ir_buf *b = a->buf;
    const td_expr *f = td__fold(&o->p->arena, a->offset, NULL);
    int64_t v;
    bool zero = f != NULL && td__is_int(f, &v) && v == 0;
    if (b->ndim == 1) {
        td__buf_printf(l, "T.address_of(%s[", b->name);
        ex(o, a->offset, 0);
        td__buf_puts(l, "])");
        return;
    }
    if (!zero)
        td__buf_puts(l, "T.ptr_byte_offset(");
    td__buf_printf(l, "T.address_of(%s[", b->name);
    for (int d = 0; d < b->ndim; d++)
        td__buf_puts(l, d ? ", 0" : "0");
    td__buf_puts(l, "])");
    if (zero)
        return;
    int bytes = td_dtype_bits(b->dtype) / 8;
    td__buf_puts(l, ", ");
    if (f != NULL && td__is_int(f, &v)) {
        td__buf_printf(l, "%lld", (long long)v * bytes);
    } else if (bytes > 1) {
        ex(o, a->offset, 2);
        td__buf_printf(l, " * %d", bytes);
    } else {
        ex(o, a->offset, 0);
    }
    td__buf_printf(l, ", \"%s\")", td_dtype_name(b->dtype));
}

static void shared(const td__async_out *o, const td__addr *a)
{
    td__buf_puts(o->line, "T.cuda.cvta_generic_to_shared(");
    addr(o, a);
    td__buf_puts(o->line, ")");
}

/* A .u32 operand: T.uint32(v) for a constant, else T.Cast("uint32", e). */
static void u32(const td__async_out *o, const td_expr *e)
{
    const td_expr *f = td__fold(&o->p->arena, e, NULL);
    int64_t v;
    if (f != NULL && td__is_int(f, &v)) {
        td__buf_printf(o->line, "T.uint32(%lld)", (long long)v);
        return;
    }
    td__buf_puts(o->line, "T.Cast(\"uint32\", ");
    ex(o, e, 0);
    td__buf_puts(o->line, ")");
}

static void map_operand(const td__async_out *o, const td_ir_tmap *m)
{
    td__buf_printf(o->line, "T.reinterpret(T.handle().ty, T.address_of(%s))",
                   m->name);
}

static void coords(const td__async_out *o, const td__async *a)
{
    for (int i = 0; i < a->rank; i++) {
        td__buf_puts(o->line, ", ");
        ex(o, a->coords[i], 0);
    }
}

/* TVM's positional T.ptx.cp of a TMA load, store or reduction. */
static void tma(const td__async_out *o, const td__async *a)
{
    td_buf *l = o->line;
    const char *hint = a->policy != NULL ? "L2::cache_hint" : "";
    td__buf_puts(l, "T.ptx.cp(");
    if (a->kind == TD__A_TMA_LOAD) {
        shared(o, &a->a);
        td__buf_puts(l, ", ");
        map_operand(o, a->map);
        coords(o, a);
        td__buf_puts(l, ", ");
        shared(o, &a->mbar);
        if (a->cta_mask != NULL) {
            td__buf_puts(l, ", ");
            ex(o, a->cta_mask, 0);
        }
    } else {
        map_operand(o, a->map);
        coords(o, a);
        td__buf_puts(l, ", ");
        shared(o, &a->a);
    }
    if (a->policy != NULL) {
        td__buf_puts(l, ", ");
        ex(o, a->policy, 0);
    }
    if (a->kind == TD__A_TMA_LOAD) {
        char group[16] = "";
        if (a->cta_group != 0)
            snprintf(group, sizeof group, "cta_group::%d", a->cta_group);
        td__buf_printf(l,
                       ", \"async\", \"bulk\", \"tensor\", \"%dd\", "
                       "\"shared::cluster\", \"global\", \"\", "
                       "\"mbarrier::complete_tx::bytes\", \"%s\", \"%s\", "
                       "\"%s\", \"\")",
                       a->rank, a->cta_mask != NULL ? "multicast::cluster" : "",
                       group, hint);
    } else if (a->op == TD_TMA_STORE) {
        td__buf_printf(l,
                       ", \"async\", \"bulk\", \"tensor\", \"%dd\", "
                       "\"global\", \"shared::cta\", \"tile\", "
                       "\"bulk_group\", \"%s\", \"\")",
                       a->rank, hint);
    } else {
        td__buf_printf(l,
                       ", \"reduce\", \"async\", \"bulk\", \"tensor\", "
                       "\"%dd\", \"global\", \"shared::cta\", \"%s\", "
                       "\"tile\", \"bulk_group\", \"%s\", \"\")",
                       a->rank, td_tma_op_name(a->op), hint);
    }
}

/* TVM's T.ptx.tcgen05 of a tensor-memory load or store: the registers
 * (words of the local buffer's uint32 view; TVM prints its own views'
 * names, local_32b[i] or local_storage[i]) before the address for a load,
 * after it for a store; the address is the allocated one (TVM prints the
 * allocated_addr element as the buffer's name), composed with the row and
 * column by T.cuda.get_tmem_addr (for .32x32b only where the column is
 * not 0, as TVM). */
static void tcgen05(const td__async_out *o, const td__async *a)
{
    td_buf *l = o->line;
    bool ld = a->kind == TD__A_TCGEN05_LD;
    int n = td_ir_tcgen05_regs(a->shape, a->num);
    const td_expr *w = td__fold(&o->p->arena, a->word, NULL);
    const td_expr *c = td__fold(&o->p->arena, a->a.offset, NULL);
    int64_t wv = 0, cv = 0;
    bool wconst = w != NULL && td__is_int(w, &wv);
    /* TVM's .16x*b path composes always (its row is the slab loop's
     * expression), its .32x32b path only for a nonzero column. */
    bool czero = c != NULL && td__is_int(c, &cv) && cv == 0 &&
                 a->shape == TD_IR_LDST_32X32B;
    td__buf_puts(l, "T.ptx.tcgen05(");
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) != ld) {
            if (!czero)
                td__buf_puts(l, "T.cuda.get_tmem_addr(");
            td__buf_printf(l, "%s_taddr", a->a.buf->name);
            if (!czero) {
                td__buf_printf(l, ", %d, ", a->row);
                ex(o, a->a.offset, 0);
                td__buf_puts(l, ")");
            }
            td__buf_puts(l, pass == 0 ? ", " : "");
            continue;
        }
        for (int i = 0; i < n; i++) {
            td__buf_printf(l, "%s%s.view(\"uint32\")[",
                           i ? ", " : "", a->regs->name);
            if (wconst) {
                td__buf_printf(l, "%lld", (long long)(wv + i));
            } else {
                ex(o, a->word, 1);
                if (i)
                    td__buf_printf(l, " + %d", i);
            }
            td__buf_puts(l, "]");
        }
        if (pass == 0)
            td__buf_puts(l, ", ");
    }
    td__buf_printf(l, ", \"%s\", \"sync\", \"aligned\", \"%s\", "
                      "\"x%d\", \"\", \"b32\", \"\")",
                   ld ? "ld" : "st", td_ir_tcgen05_ldst_shape(a->shape),
                   a->num);
}

/* TVM's tcgen05.cp: T.ptx.tcgen05 of the allocated address (plus the
 * column, cast as TVM casts it) and the descriptor with its start address
 * patched to the shared source (TVM encodes the descriptor once at shared
 * address 0 and ORs in cvta(address) >> 4 per copy); the first copy of a
 * call encodes the descriptor, as TVM's hoisted statement does.  The
 * descriptor is read as its element, cp_desc[0]: TVMScript takes no
 * buffer as an operand of `&`. */
static void tcgen05_cp(const td__async_out *o, const td__async *a)
{
    td_buf *l = o->line;
    const td_ir_buf *sb = a->mbar.buf;
    if (a->first) {
        td__w_line(&o->p->w, "%s = T.alloc_buffer((1,), \"uint64\", "
                             "scope=\"local\")", a->desc);
        td__w_line(&o->p->w,
                   "T.cuda.tcgen05.encode_matrix_descriptor(%s.data, "
                   "T.reinterpret(\"handle\", T.uint64(0)), %d, %d, %d)",
                   a->desc, a->lbo, a->sbo, a->swizzle);
    }
    const td_expr *c = td__fold(&o->p->arena, a->a.offset, NULL);
    const td_expr *f = td__fold(&o->p->arena, a->mbar.offset, NULL);
    int64_t cv = 0, fv = 0;
    td__buf_printf(l, "T.ptx.tcgen05(%s_taddr", a->a.buf->name);
    if (c == NULL || !td__is_int(c, &cv) || cv != 0) {
        td__buf_puts(l, " + T.Cast(\"uint32\", ");
        ex(o, a->a.offset, 0);
        td__buf_puts(l, ")");
    }
    td__buf_printf(l, ", %s[0] & ~T.uint64(16383) | T.Cast(\"uint64\", "
                      "T.cuda.cvta_generic_to_shared(T.ptr_byte_offset("
                      "T.address_of(%s[",
                   a->desc, sb->name);
    for (int i = 0; i < sb->ndim; i++)
        td__buf_puts(l, i ? ", 0" : "0");
    td__buf_puts(l, "]), ");
    int bytes = td_dtype_bits(sb->dtype) / 8;
    if (f != NULL && td__is_int(f, &fv)) {
        td__buf_printf(l, "%lld", (long long)fv * bytes);
    } else {
        ex(o, a->mbar.offset, 1);
        td__buf_printf(l, " * %d", bytes);
    }
    td__buf_printf(l, ", T.type_annotation(\"%s\"))) >> T.uint32(4) & "
                      "T.uint32(16383)), \"cp\", \"cta_group::%d\", "
                      "\"%s\", \"%s\", \"\", \"\", \"\")",
                   td_dtype_name(sb->dtype), a->cta_group == 2 ? 2 : 1,
                   td_ir_tcgen05_cp_shape((td_ir_cp_shape)a->num),
                   td_ir_tcgen05_cp_multicast((td_ir_cp_shape)a->num));
}

void td__tirx_async(const td__async_out *o, const td__stmt *s)
{
    const td__async *a = s->async;
    td_buf *l = o->line;
    switch (a->kind) {
    case TD__A_MBAR_INIT:
    case TD__A_MBAR_EXPECT_TX:
        td__buf_puts(l, "T.ptx.mbarrier(");
        shared(o, &a->a);
        td__buf_puts(l, ", ");
        u32(o, a->value);
        td__buf_puts(l, a->kind == TD__A_MBAR_INIT
                            ? ", \"init\", \"\", \"shared\", \"b64\", \"\")"
                            : ", \"arrive\", \"expect_tx\", \"\", \"\", "
                              "\"shared\", \"b64\", \"\")");
        return;
    case TD__A_MBAR_WAIT:
        td__buf_puts(l, "T.cuda.mbarrier_wait(");
        addr(o, &a->a);
        td__buf_puts(l, ", ");
        ex(o, a->value, 0);
        td__buf_puts(l, ")");
        return;
    case TD__A_FENCE_PROXY_ASYNC:
        td__buf_puts(l, "T.ptx.fence(\"proxy\", \"async\", \"shared::cta\", "
                        "\"\")");
        return;
    case TD__A_FENCE_MBAR_INIT:
        td__buf_puts(l, "T.ptx.fence(\"mbarrier_init\", \"release\", "
                        "\"cluster\", \"\")");
        return;
    case TD__A_CLUSTER_SYNC:
        td__buf_puts(l, "T.cuda.cluster_sync()");
        return;
    case TD__A_BULK_COMMIT:
        td__buf_puts(l, "T.ptx.cp(\"async\", \"bulk\", \"commit_group\", "
                        "\"\")");
        return;
    case TD__A_BULK_WAIT_READ:
        td__buf_printf(l, "T.ptx.cp(%d, \"async\", \"bulk\", \"wait_group\", "
                          "\"read\", \"\")", a->n);
        return;
    case TD__A_PREFETCH_TMAP:
        /* TVM's prefetch.tensormap of T.address_of(map) prints back so */
        td__buf_puts(l, "T.ptx.prefetch(");
        map_operand(o, a->map);
        td__buf_puts(l, ", \"\", \"\", \"\", \"tensormap\", \"\")");
        return;
    case TD__A_TMA_LOAD:
    case TD__A_TMA_STORE:
        tma(o, a);
        return;
    case TD__A_MAPA:
        /* Declared, then written by the PTX statement (as a let that a
         * T.ptx statement fills). */
        td__w_line(&o->p->w, "%s: T.uint32", a->var->name);
        o->p->live[a->var->id] = 1;
        td__buf_printf(l, "T.ptx.mapa(%s, ", a->var->name);
        shared(o, &a->a);
        td__buf_puts(l, ", ");
        u32(o, a->value);
        td__buf_puts(l, ", \"shared::cluster\", \"u32\", \"\")");
        return;
    case TD__A_BULK_S2C:
        td__buf_puts(l, "T.ptx.cp(");
        ex(o, a->dst, 0);
        td__buf_puts(l, ", ");
        shared(o, &a->a);
        td__buf_puts(l, ", ");
        u32(o, a->value);
        td__buf_puts(l, ", ");
        ex(o, a->cbar, 0);
        td__buf_puts(l, ", \"async\", \"bulk\", \"\", \"\", "
                        "\"shared::cluster\", \"shared::cta\", "
                        "\"mbarrier::complete_tx::bytes\", \"\", \"\")");
        return;
    case TD__A_TCGEN05_LD:
    case TD__A_TCGEN05_ST:
        tcgen05(o, a);
        return;
    case TD__A_TCGEN05_CP:
        tcgen05_cp(o, a);
        return;
    case TD__A_COUNT:
        break;
    }
}

void td__tirx_tmap_decls(td__pctx *p)
{
    for (const td_ir_tmap *m = p->ir->tmaps; m != NULL; m = m->next)
        td__w_line(&p->w, "%s = T.TensorMap()", m->name);
}
