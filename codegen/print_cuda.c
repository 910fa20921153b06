/*
 * The CUDA C printer: the body as statements for a device function, with
 * call buffers spelled NAME_ptr and indexed row-major (or through their
 * layout, td_ir_buffer_layout, and swizzle), loops of extent 1 dropped,
 * PTX accesses as calls of their helpers, and a prelude (includes and
 * helper functions, each once, in a fixed order) requested by what the
 * body uses.  Expressions are written by print_cuda_expr.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

/* ---- statements --------------------------------------------------------- */

static void line_reset(td__cuda *c)
{
    c->line.len = 0;
    if (c->line.data != NULL)
        c->line.data[0] = '\0';
}

static const char *line_text(td__cuda *c)
{
    return c->line.data != NULL ? c->line.data : "";
}

static void block(td__cuda *c, const td__stmt *s);
static void ptx(td__cuda *c, const td__stmt *s);

/* Folds n indices into out; false (and ENOMEM) when the arena fails. */
static bool fold_idx(td__cuda *c, int n, const td_expr *const *idx,
                     const td_expr **out)
{
    for (int k = 0; k < n; k++) {
        out[k] = td__fold(&c->p->arena, idx[k], c->p->zero);
        if (out[k] == NULL) {
            td__cuda_fail(c, TD_ENOMEM);
            return false;
        }
    }
    return true;
}

/* *(__half2 *)&D_ptr[i] = __float22half2_rn(*(const float2 *)&S_ptr[j]) */
static void cast_pair(td__cuda *c, const td__stmt *s)
{
    const td_expr *di[TD_MAX_RANK], *si[TD_MAX_RANK];
    const td_expr *from = s->value;
    td_dtype d = s->buf->dtype, f = from->dtype;
    const char *fn = td__pair_fn(f, d);
    if (!fold_idx(c, s->nidx, s->idx, di) ||
        !fold_idx(c, from->nargs, from->args, si))
        return;
    td__cuda_need_type(c, d);
    td__cuda_need_type(c, f);
    td__buf_printf(&c->line, "*(%s *)&", td__pair_type(d));
    td__cuda_access(c, &c->line, s->buf, s->nidx, di);
    td__buf_printf(&c->line, " = %s(*(const %s *)&", fn, td__pair_type(f));
    td__cuda_access(c, &c->line, from->buf, from->nargs, si);
    td__buf_puts(&c->line, ")");
}

/* One 32-bit word of a vector built from values: value w (a pair) or
 * values 2w, 2w+1 (16-bit lanes), or value w (a 32-bit lane), as bits;
 * 8- and 16-bit integer lanes are cut to their width and shifted into
 * place. */
static void vec_word(td__cuda *c, const td__stmt *s, int w)
{
    const td_var *v = s->var;
    const td_expr *f[4];
    bool pairs = s->nvals * 2 == v->lanes;
    int bits = td_dtype_bits(v->dtype), n = pairs ? 1 : 32 / bits;
    for (int k = 0; k < n; k++) {
        f[k] = td__fold(&c->p->arena, s->vals[w * n + k], c->p->zero);
        if (f[k] == NULL) {
            td__cuda_fail(c, TD_ENOMEM);
            return;
        }
    }
    td_buf *o = &c->line;
    if (bits == 32) {
        td__buf_puts(o, v->dtype == TD_F32   ? "__float_as_uint("
                        : v->dtype == TD_I32 ? "(unsigned int)("
                                             : "(");
        td__cuda_expr(c, o, f[0], TD__CP_LOWEST);
        td__buf_puts(o, ")");
        return;
    }
    if (v->dtype != TD_F16 && v->dtype != TD_BF16) {
        /* (unsigned int)(uint8_t)(a) | (unsigned int)(uint8_t)(b) << 8 ... */
        const char *u = bits == 8 ? "uint8_t" : "uint16_t";
        td__buf_puts(o, "(");
        for (int k = 0; k < n; k++) {
            td__buf_printf(o, "%s(unsigned int)(%s)(", k > 0 ? " | " : "", u);
            td__cuda_expr(c, o, f[k], TD__CP_LOWEST);
            td__buf_puts(o, ")");
            if (k > 0)
                td__buf_printf(o, " << %d", k * bits);
        }
        td__buf_puts(o, ")");
        return;
    }
    bool h = v->dtype == TD_F16;
    c->need.bits2[!h] = true;
    td__buf_puts(o, h ? "td_half2_bits(" : "td_bfloat162_bits(");
    if (!pairs)
        td__buf_puts(o, h ? "__halves2half2(" : "__halves2bfloat162(");
    td__cuda_expr(c, o, f[0], TD__CP_LOWEST);
    if (!pairs) {
        td__buf_puts(o, ", ");
        td__cuda_expr(c, o, f[1], TD__CP_LOWEST);
        td__buf_puts(o, ")");
    }
    td__buf_puts(o, ")");
}

/* uint4 r = make_uint4(w0, w1, w2, w3); two 64-bit lanes:
 * double2 r = make_double2(a, b) */
static void vec_let(td__cuda *c, const td__stmt *s)
{
    const td_var *v = s->var;
    td__cuda_need_type(c, v->dtype);
    const char *t = td__cuda_vec_type(v->dtype, v->lanes);
    if (td_dtype_bits(v->dtype) == 64) {
        td__buf_printf(&c->line, "%s %s = make_%s(", t, v->name, t);
        for (int l = 0; l < 2; l++) {
            const td_expr *x = td__fold(&c->p->arena, s->vals[l], c->p->zero);
            if (x == NULL) {
                td__cuda_fail(c, TD_ENOMEM);
                return;
            }
            if (l > 0)
                td__buf_puts(&c->line, ", ");
            td__cuda_expr(c, &c->line, x, TD__CP_LOWEST);
        }
        td__buf_puts(&c->line, ")");
        c->p->live[v->id] = 1;
        return;
    }
    int words = v->lanes * td_dtype_bits(v->dtype) / 32;
    if (words > 1 && td_dtype_bits(v->dtype) < 32) {
        /* Words of several lanes each get a line of their own:
         * unsigned int vr0 = ...; ... uint4 vr = make_uint4(vr0, ...) */
        for (int w = 0; w < words; w++) {
            line_reset(c);
            vec_word(c, s, w);
            td__w_line(&c->p->w, "unsigned int %s%d = %s;", v->name, w,
                       line_text(c));
        }
        line_reset(c);
        td__buf_printf(&c->line, "%s %s = make_%s(", t, v->name, t);
        for (int w = 0; w < words; w++)
            td__buf_printf(&c->line, "%s%s%d", w > 0 ? ", " : "", v->name, w);
        td__buf_puts(&c->line, ")");
        c->p->live[v->id] = 1;
        return;
    }
    td__buf_printf(&c->line, "%s %s = %s", t, v->name,
                   words == 4 ? "make_uint4(" : words == 2 ? "make_uint2(" : "");
    for (int w = 0; w < words; w++) {
        if (w > 0)
            td__buf_puts(&c->line, ", ");
        vec_word(c, s, w);
    }
    if (words > 1)
        td__buf_puts(&c->line, ")");
    c->p->live[v->id] = 1;
}

/* The expression writer of the async printer (print_cuda_async.c). */
static void async_expr(void *ctx, td_buf *o, const td_expr *e, int level)
{
    td__cuda *c = ctx;
    const td_expr *f = td__fold(&c->p->arena, e, c->p->zero);
    if (f == NULL)
        td__cuda_fail(c, TD_ENOMEM);
    else
        td__cuda_expr(c, o, f,
                      level == 0   ? TD__CP_LOWEST
                      : level == 1 ? TD__CP_ADD + 1
                                   : TD__CP_MUL);
}

static void stmt(td__cuda *c, const td__stmt *s)
{
    td__writer *w = &c->p->w;
    td__pctx *p = c->p;
    line_reset(c);
    switch (s->kind) {
    case TD__S_FOR: {
        const td_expr *ext = td__fold(&p->arena, s->extent, p->zero);
        int64_t v;
        if (ext == NULL) {
            td__cuda_fail(c, TD_ENOMEM);
            return;
        }
        int id = s->var->id;
        if (td__is_int(ext, &v) && v == 1) {
            /* A loop of one iteration: its body with the variable = 0. */
            p->zero[id] = p->live[id] = 1;
            block(c, s->body);
            p->zero[id] = p->live[id] = 0;
            return;
        }
        td__cuda_expr(c, &c->line, ext, TD__CP_REL + 1);
        if (s->loop == TD_LOOP_UNROLL)
            td__w_line(w, "#pragma unroll");
        const char *n = s->var->name;
        td__w_open(w, "for (int %s = 0; %s < %s; ++%s)", n, n, line_text(c),
                   n);
        p->live[id] = 1;
        block(c, s->body);
        p->live[id] = 0;
        td__w_close(w);
        return;
    }
    case TD__S_IF:
        td__cuda_top_expr(c, s->cond);
        td__w_open(w, "if (%s)", line_text(c));
        block(c, s->body);
        if (s->orelse != NULL) {
            td__w_mid(w, "else");
            block(c, s->orelse);
        }
        td__w_close(w);
        return;
    case TD__S_STORE: {
        const td_expr *idx[TD_MAX_RANK];
        if (!fold_idx(c, s->nidx, s->idx, idx))
            return;
        td__cuda_access(c, &c->line, s->buf, s->nidx, idx);
        td__buf_puts(&c->line, " = ");
        td__cuda_top_expr(c, s->value);
        break;
    }
    case TD__S_EVAL:
        td__cuda_top_expr(c, s->value);
        break;
    case TD__S_LET:
        td__cuda_need_type(c, s->var->dtype);
        td__buf_printf(&c->line, "%s %s = ",
                       s->var->lanes > 1
                           ? td__cuda_vec_type(s->var->dtype, s->var->lanes)
                           : td__cuda_type(s->var->dtype),
                       s->var->name);
        td__cuda_top_expr(c, s->value);
        p->live[s->var->id] = 1;
        break;
    case TD__S_ASSIGN:
        if (!p->live[s->var->id])
            td__cuda_fail(c, TD_EINVAL);
        td__buf_printf(&c->line, "%s = ", s->var->name);
        td__cuda_top_expr(c, s->value);
        break;
    case TD__S_COMMENT:
        td__w_line(w, "//%s%s", s->text[0] ? " " : "", s->text);
        return;
    case TD__S_CAST_PAIR:
        cast_pair(c, s);
        break;
    case TD__S_VEC_LET:
        vec_let(c, s);
        break;
    case TD__S_PTX:
        ptx(c, s);
        break;
    case TD__S_ASYNC:
        td__cuda_async(&(td__async_out){p, &c->line, async_expr, c}, s,
                       &c->need);
        break;
    case TD__S_MMA:
    case TD__S_UMMA:
        (s->kind == TD__S_MMA ? td__cuda_mma : td__cuda_umma)(
            &(td__async_out){p, &c->line, async_expr, c}, s, &c->need);
        break;
    case TD__S_VEC_STORE: {
        const td_expr *idx[TD_MAX_RANK];
        if (!fold_idx(c, s->nidx, s->idx, idx))
            return;
        if (!p->live[s->var->id])
            td__cuda_fail(c, TD_EINVAL);
        td__buf_printf(&c->line, "*(%s *)&",
                       td__cuda_vec_type(s->var->dtype, s->var->lanes));
        td__cuda_access(c, &c->line, s->buf, s->nidx, idx);
        td__buf_printf(&c->line, " = %s", s->var->name);
        break;
    }
    }
    td__w_line(w, "%s;", line_text(c));
}

/* Container i of a register buffer: tmp[i] when its elements are the
 * containers, else ((unsigned int *)Rg_ptr)[i]. */
static void ptx_reg(td__cuda *c, const td__ptx *x, int lane)
{
    static const char *const ctype[3] = {"unsigned char", "unsigned short",
                                         "unsigned int"};
    static const td_dtype cdt[3] = {TD_U8, TD_U16, TD_U32};
    int k = x->bits == 8 ? 0 : x->bits == 16 ? 1 : 2;
    td__arena *a = &c->p->arena;
    const td_expr *sum =
        x->words != NULL ? x->words[lane]
                         : td__mk_bin(a, TD_OP_ADD, x->word, td__mk_int(a, lane));
    const td_expr *i = sum != NULL ? td__fold(a, sum, c->p->zero) : NULL;
    if (i == NULL) {
        td__cuda_fail(c, TD_ENOMEM);
        return;
    }
    const char *suffix = x->regs->scratch ? "" : "_ptr";
    if (x->regs->dtype == cdt[k])
        td__buf_printf(&c->line, "%s%s[", x->regs->name, suffix);
    else
        td__buf_printf(&c->line, "((%s *)%s%s)[", ctype[k], x->regs->name,
                       suffix);
    td__cuda_expr(c, &c->line, i, TD__CP_LOWEST);
    td__buf_puts(&c->line, "]");
}

/* The access's address: &A_ptr[i] (logical indices through the layout)
 * or A_ptr + offset (a storage offset the emitter computed). */
static void ptx_addr(td__cuda *c, const td__stmt *s, const td_expr *const *idx)
{
    if (s->ptx->offset == NULL) {
        td__buf_puts(&c->line, "&");
        td__cuda_access(c, &c->line, s->buf, s->nidx, idx);
        return;
    }
    const td_expr *off = td__fold(&c->p->arena, s->ptx->offset, c->p->zero);
    if (off == NULL) {
        td__cuda_fail(c, TD_ENOMEM);
        return;
    }
    td__buf_printf(&c->line, "%s%s + ", s->buf->name,
                   s->buf->scratch ? "" : "_ptr");
    td__cuda_expr(c, &c->line, off, TD__CP_ADD + 1);
}

/* B_ptr + offset: a storage offset of a call buffer. */
static void ptr_plus(td__cuda *c, const td_ir_buf *b, const td_expr *offset)
{
    const td_expr *off = td__fold(&c->p->arena, offset, c->p->zero);
    if (off == NULL) {
        td__cuda_fail(c, TD_ENOMEM);
        return;
    }
    td__buf_printf(&c->line, "%s%s + ", b->name, b->scratch ? "" : "_ptr");
    td__cuda_expr(c, &c->line, off, TD__CP_ADD + 1);
}

/* td_ptx_ld_global_v4_u32(regs..., &A_ptr[i]) or
 * td_ptx_st_shared_u32(&S_ptr[i], regs...); the helper is recorded.
 * cp.async: td_ptx_cp_async_cg_shared_global_16(S_ptr + d, A_ptr + s[,
 * pred]). */
static void ptx(td__cuda *c, const td__stmt *s)
{
    const td__ptx *x = s->ptx;
    const td_expr *idx[TD_MAX_RANK];
    if (x->offset == NULL && !fold_idx(c, s->nidx, s->idx, idx))
        return;
    unsigned key = td__ptx_key(x);
    bool known = false;
    for (int i = 0; i < c->need.nptx; i++)
        known |= c->need.ptx[i] == key;
    if (!known) {
        if (c->need.nptx == (int)(sizeof c->need.ptx / sizeof *c->need.ptx)) {
            td__cuda_fail(c, TD_EINVAL);
            return;
        }
        c->need.ptx[c->need.nptx++] = key;
    }
    c->need.inc[TD__INC_CSTRING] = true;
    td__cuda_need_type(c, s->buf->dtype);
    td__ptx_helper_name(&c->line, x);
    td__buf_puts(&c->line, "(");
    if (x->cp_async) {
        td__cuda_need_type(c, x->src->dtype);
        ptr_plus(c, s->buf, x->offset);
        td__buf_puts(&c->line, ", ");
        ptr_plus(c, x->src, x->src_offset);
        if (x->pred != NULL) {
            const td_expr *p = td__fold(&c->p->arena, x->pred, c->p->zero);
            if (p == NULL) {
                td__cuda_fail(c, TD_ENOMEM);
                return;
            }
            td__buf_puts(&c->line, ", ");
            td__cuda_expr(c, &c->line, p, TD__CP_LOWEST);
        }
        td__buf_puts(&c->line, ")");
        return;
    }
    if (x->store)
        ptx_addr(c, s, idx);
    for (int l = 0; l < x->lanes; l++) {
        if (l > 0 || x->store)
            td__buf_puts(&c->line, ", ");
        ptx_reg(c, x, l);
    }
    if (!x->store) {
        td__buf_puts(&c->line, ", ");
        ptx_addr(c, s, idx);
    }
    td__buf_puts(&c->line, ")");
}

/* Prints a block; its lets go out of scope at its end. */
static void block(td__cuda *c, const td__stmt *s)
{
    for (const td__stmt *t = s; t != NULL; t = t->next)
        stmt(c, t);
    for (const td__stmt *t = s; t != NULL; t = t->next)
        if (t->kind == TD__S_LET || t->kind == TD__S_VEC_LET)
            c->p->live[t->var->id] = 0;
}

int td__print_cuda(td__pctx *p)
{
    td__cuda c;
    memset(&c, 0, sizeof c);
    c.p = p;
    td__buf_init(&c.line);
    /* Scratch arrays are declared where the body starts. */
    for (const td_ir_buf *b = p->ir->bufs; b != NULL; b = b->next)
        if (b->scratch) {
            td__cuda_need_type(&c, b->dtype);
            td__w_line(&p->w, "%s%s %s[%lld];",
                       strcmp(b->scope, "shared") == 0 ? "__shared__ " : "",
                       td__cuda_type(b->dtype), b->name,
                       (long long)b->shape[0]);
        }
    block(&c, p->ir->root);
    c.need.inc[TD__INC_CUDA] |= p->ir->tmaps != NULL; /* CUtensorMap */
    int err = td__w_finish(&p->w);
    if (p->err == 0 && c.line.err)
        p->err = c.line.err;
    if (p->err == 0 && p->arena.err)
        p->err = p->arena.err;
    td__buf_free(&c.line);
    if (p->err != 0)
        return p->err;
    if (err != 0)
        return err;
    td__cuda_prelude(&p->prelude, &c.need);
    return p->prelude.err;
}
