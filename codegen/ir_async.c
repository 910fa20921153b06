/*
 * The builders of the asynchronous nodes: TMA tensor loads and stores, the
 * cluster copy and mapa, the mbarrier, fence, cluster and bulk-group
 * synchronisation around them, the tensor maps a body uses (one per
 * distinct encode, which a kernel takes as parameters), and the tensor
 * memory loads and stores of sm_100 (tcgen05.ld / tcgen05.st) and its
 * shared -> tensor memory copy (tcgen05.cp).  Each builder
 * checks its operands and appends one TD__S_ASYNC statement; the printers
 * are print_cuda_async.c and print_tirx_async.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "codegen_internal.h"
#include "tensor_map.h"
#include "tensor_map_print.h"

static const char *const op_names[TD_TMA_OP_COUNT] = {
    "", "add", "min", "max", "inc", "dec", "and", "or", "xor"};

const char *td_tma_op_name(td_tma_op op)
{
    return (unsigned)op < TD_TMA_OP_COUNT ? op_names[op] : NULL;
}

unsigned td__async_key(const td__async *a)
{
    if (a->kind == TD__A_TCGEN05_LD || a->kind == TD__A_TCGEN05_ST) {
        unsigned lg = 0;
        while ((1 << lg) < a->num)
            lg++;
        return (unsigned)a->kind | lg << 11 | (unsigned)a->shape << 14;
    }
    if (a->kind == TD__A_TCGEN05_CP)
        return (unsigned)a->kind | (unsigned)(a->cta_group == 2) << 4 |
               (unsigned)a->num << 11;
    return (unsigned)a->kind | (unsigned)a->rank << 4 |
           (unsigned)(a->cta_mask != NULL) << 7 |
           (unsigned)a->cta_group << 8 | (unsigned)(a->policy != NULL) << 10 |
           (unsigned)a->op << 11;
}

/* ---- tensor maps ----------------------------------------------------------- */

/* Two maps encode alike: every argument of cuTensorMapEncodeTiled. */
static bool same_encode(const td_tmap *x, const td_tmap *y)
{
    if (strcmp(x->dtype, y->dtype) != 0 || x->bits != y->bits ||
        x->packed != y->packed || x->force_cu_dtype != y->force_cu_dtype ||
        x->base_byte_offset != y->base_byte_offset || x->rank != y->rank ||
        x->interleave != y->interleave || x->swizzle != y->swizzle ||
        x->l2_promotion != y->l2_promotion || x->oob_fill != y->oob_fill)
        return false;
    for (int i = 0; i < x->rank; i++)
        if (x->global_dims[i] != y->global_dims[i] ||
            x->box_dims[i] != y->box_dims[i] ||
            x->element_strides[i] != y->element_strides[i] ||
            (i + 1 < x->rank && x->global_strides[i] != y->global_strides[i]))
            return false;
    return true;
}

const td_ir_tmap *td_ir_tensor_map(td_ir *ir, const td_ir_buf *global,
                                   const struct td_tmap *spec)
{
    if (!td__ir_live(ir))
        return NULL;
    if (global == NULL || spec == NULL || global->owner != ir ||
        global->scratch || strcmp(global->scope, "global") != 0 ||
        spec->rank < 1 || spec->rank > TD_TMAP_MAX_RANK) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_ir_tmap **tail = &ir->tmaps;
    for (td_ir_tmap *m = ir->tmaps; m != NULL; m = m->next) {
        if (m->global == global && same_encode(m->spec, spec))
            return m;
        tail = &m->next;
    }
    char base[TD__IR_NAME_MAX + 16];
    snprintf(base, sizeof base, "%s_tensormap", global->name);
    td_ir_tmap *m = td__arena_alloc(&ir->arena, sizeof *m);
    td_tmap *copy = td__arena_alloc(&ir->arena, sizeof *copy);
    if (m == NULL || copy == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return NULL;
    }
    m->name = td__ir_unique_name(ir, base);
    if (m->name == NULL)
        return NULL;
    memcpy(copy, spec, sizeof *copy);
    m->global = global;
    m->spec = copy;
    *tail = m;
    return m;
}

int td_ir_tensor_map_count(const td_ir *ir)
{
    int n = 0;
    for (const td_ir_tmap *m = ir != NULL ? ir->tmaps : NULL; m != NULL;
         m = m->next)
        n++;
    return n;
}

const char *td_ir_tensor_map_name(const td_ir *ir, int i)
{
    for (const td_ir_tmap *m = ir != NULL ? ir->tmaps : NULL; m != NULL;
         m = m->next)
        if (i-- == 0)
            return m->name;
    return NULL;
}

const struct td_tmap *td__ir_tensor_map_spec(const td_ir *ir, int i)
{
    for (const td_ir_tmap *m = ir != NULL ? ir->tmaps : NULL; m != NULL;
         m = m->next)
        if (i-- == 0)
            return m->spec;
    return NULL;
}

/* TVM's host statements of one map (its _get_or_encode_descriptor): the
 * stack allocation and T.tensormap_encode_tiled with the dims, strides,
 * box and element strides as positional operands. */
static void tirx_host(td_buf *b, const td_ir_tmap *m)
{
    const td_tmap *t = m->spec;
    td__buf_printf(b,
                   "%s: T.let[T.TensorMap()] = T.tvm_stack_alloca("
                   "\"tensormap\", 1)\n"
                   "T.tensormap_encode_tiled(%s, T.handle_add_byte_offset("
                   "%s.data, %" PRId64 ")",
                   m->name, m->name, m->global->name, t->base_byte_offset);
    for (int i = 0; i < t->rank; i++)
        td__buf_printf(b, ", %" PRId64, t->global_dims[i]);
    for (int i = 0; i + 1 < t->rank; i++)
        td__buf_printf(b, ", %" PRId64, t->global_strides[i]);
    for (int i = 0; i < t->rank; i++)
        td__buf_printf(b, ", %" PRId64, t->box_dims[i]);
    for (int i = 0; i < t->rank; i++)
        td__buf_printf(b, ", %" PRId64, t->element_strides[i]);
    td__buf_printf(b,
                   ", descriptor_dtype=\"%s\", rank=%d, interleave=%d, "
                   "swizzle=%d, l2_promotion=%d, oob_fill=%d, "
                   "force_cu_dtype=%d)\n",
                   t->dtype, t->rank, t->interleave, t->swizzle,
                   t->l2_promotion, t->oob_fill, t->force_cu_dtype);
}

int td_ir_print_tensor_maps(const td_ir *ir, td_lang lang, char **out)
{
    if (ir == NULL || out == NULL ||
        (lang != TD_LANG_CUDA && lang != TD_LANG_TIRX))
        return TD_EINVAL;
    *out = NULL;
    td_buf b;
    td__buf_init(&b);
    for (const td_ir_tmap *m = ir->tmaps; m != NULL; m = m->next) {
        if (lang == TD_LANG_CUDA)
            td__buf_printf(&b, "%sconst __grid_constant__ CUtensorMap %s",
                           m == ir->tmaps ? "" : ", ", m->name);
        else
            tirx_host(&b, m);
    }
    return td__buf_take(&b, out);
}

/* The host's C encode function of every map, or their JSON array. */
int td_ir_print_tensor_map_host(const td_ir *ir, td_tmap_host_form form,
                                char **out)
{
    if (out != NULL)
        *out = NULL;
    if (ir == NULL || out == NULL ||
        (form != TD_TMAP_HOST_C && form != TD_TMAP_HOST_JSON))
        return TD_EINVAL;
    td_buf b;
    td__buf_init(&b);
    if (form == TD_TMAP_HOST_C)
        td__buf_puts(&b, ir->tmaps != NULL
                             ? "#include <cuda.h>\n#include <stdint.h>\n"
                             : "/* The call uses no tensor map. */\n");
    else
        td__buf_puts(&b, "[");
    int err = 0;
    for (const td_ir_tmap *m = ir->tmaps; m != NULL && err == 0;
         m = m->next) {
        if (form == TD_TMAP_HOST_C) {
            char fn[TD__IR_NAME_MAX + 32];
            snprintf(fn, sizeof fn, "%s_encode", m->name);
            td__buf_puts(&b, "\n");
            err = td__tmap_print_c(m->spec, fn, 0, &b);
            continue;
        }
        /* The map's own object, its name and buffer put in front. */
        td_buf one;
        td__buf_init(&one);
        err = td__tmap_print_json(m->spec, &one);
        char *obj = NULL;
        if (err == 0)
            err = td__buf_take(&one, &obj);
        else
            td__buf_free(&one);
        if (err != 0)
            break;
        td__buf_puts(&b, m == ir->tmaps ? "{\"name\": " : ",\n {\"name\": ");
        td__buf_json_str(&b, m->name);
        td__buf_puts(&b, ", \"buffer\": ");
        td__buf_json_str(&b, m->global->name);
        td__buf_printf(&b, ", %s", obj + 1);
        td__free(obj);
    }
    if (form == TD_TMAP_HOST_JSON)
        td__buf_puts(&b, "]\n");
    if (err != 0) {
        td__buf_free(&b);
        return err;
    }
    return td__buf_take(&b, out);
}

/* ---- nodes ------------------------------------------------------------------ */

static bool is_map(const td_ir *ir, const td_ir_tmap *map)
{
    for (const td_ir_tmap *m = ir->tmaps; m != NULL; m = m->next)
        if (m == map)
            return true;
    return false;
}

/* A call buffer of the IR in a shared scope (of dtype `t` unless
 * TD_DTYPE_COUNT), with an offset. */
static bool shared_addr(td_ir *ir, td_ir_addr a, td_dtype t)
{
    return a.buf != NULL && a.offset != NULL && a.buf->owner == ir &&
           !a.buf->scratch && strncmp(a.buf->scope, "shared", 6) == 0 &&
           (t == TD_DTYPE_COUNT || a.buf->dtype == t) &&
           td__ir_stmt_operand(ir, a.offset);
}

/* An int32 index operand (td_int, loop variables, parameters...). */
static bool index_operand(td_ir *ir, const td_expr *e)
{
    return e != NULL && td__ir_stmt_operand(ir, e) &&
           (e->dtype == TD_I32 || e->dtype == TD_U32);
}

static td__async *add(td_ir *ir, td__akind kind)
{
    td__stmt *s = td__ir_stmt(ir, TD__S_ASYNC);
    td__async *a = s != NULL ? td__arena_alloc(&ir->arena, sizeof *a) : NULL;
    if (a == NULL) {
        td__ir_fail(ir, TD_ENOMEM);
        return NULL;
    }
    memset(a, 0, sizeof *a);
    a->kind = kind;
    s->async = a;
    td__ir_append(ir, s);
    return a;
}

/* A barrier node: bar a shared uint64, value an int32 operand. */
static void mbar_node(td_ir *ir, td__akind kind, td_ir_addr bar,
                      td_expr *value)
{
    if (!td__ir_live(ir))
        return;
    if (!shared_addr(ir, bar, TD_U64) || !index_operand(ir, value)) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__async *a = add(ir, kind);
    if (a != NULL) {
        a->a = (td__addr){bar.buf, bar.offset};
        a->value = value;
    }
}

void td_ir_mbar_init(td_ir *ir, td_ir_addr bar, td_expr *count)
{
    mbar_node(ir, TD__A_MBAR_INIT, bar, count);
}

void td_ir_mbar_arrive_expect_tx(td_ir *ir, td_ir_addr bar, td_expr *bytes)
{
    mbar_node(ir, TD__A_MBAR_EXPECT_TX, bar, bytes);
}

void td_ir_mbar_wait(td_ir *ir, td_ir_addr bar, td_expr *parity)
{
    mbar_node(ir, TD__A_MBAR_WAIT, bar, parity);
}

static void bare(td_ir *ir, td__akind kind)
{
    if (td__ir_live(ir))
        add(ir, kind);
}

void td_ir_fence_proxy_async(td_ir *ir)
{
    bare(ir, TD__A_FENCE_PROXY_ASYNC);
}

void td_ir_fence_mbarrier_init(td_ir *ir)
{
    bare(ir, TD__A_FENCE_MBAR_INIT);
}

void td_ir_cluster_sync(td_ir *ir)
{
    bare(ir, TD__A_CLUSTER_SYNC);
}

void td_ir_bulk_commit(td_ir *ir)
{
    bare(ir, TD__A_BULK_COMMIT);
}

void td_ir_bulk_wait_read(td_ir *ir, int n)
{
    if (!td__ir_live(ir))
        return;
    /* an immediate of the instruction, as cp.async's wait_group */
    if (n < 0 || n > 7) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__async *a = add(ir, TD__A_BULK_WAIT_READ);
    if (a != NULL)
        a->n = n;
}

void td_ir_prefetch_tensormap(td_ir *ir, const td_ir_tmap *map)
{
    if (!td__ir_live(ir))
        return;
    if (map == NULL || !is_map(ir, map)) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__async *a = add(ir, TD__A_PREFETCH_TMAP);
    if (a != NULL)
        a->map = map;
}

static void tma(td_ir *ir, const td_ir_tma *t, bool load)
{
    if (!td__ir_live(ir))
        return;
    bool ok = t != NULL && t->map != NULL && is_map(ir, t->map) &&
              shared_addr(ir, t->smem, TD_DTYPE_COUNT) &&
              (unsigned)t->op < TD_TMA_OP_COUNT &&
              (t->policy == NULL || (td__ir_stmt_operand(ir, t->policy) &&
                                     t->policy->dtype == TD_U64));
    int rank = ok ? t->map->spec->rank : 0;
    for (int i = 0; ok && i < 5; i++)
        ok = i < rank ? index_operand(ir, t->coords[i]) : t->coords[i] == NULL;
    if (ok && load)
        ok = shared_addr(ir, t->mbar, TD_U64) && t->op == TD_TMA_STORE &&
             t->cta_group >= 0 && t->cta_group <= 2 &&
             (t->cta_mask == NULL || (td__ir_stmt_operand(ir, t->cta_mask) &&
                                      t->cta_mask->dtype == TD_U16));
    else if (ok)
        ok = t->mbar.buf == NULL && t->cta_mask == NULL && t->cta_group == 0;
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__async *a = add(ir, load ? TD__A_TMA_LOAD : TD__A_TMA_STORE);
    if (a == NULL)
        return;
    a->map = t->map;
    a->rank = rank;
    for (int i = 0; i < rank; i++)
        a->coords[i] = t->coords[i];
    a->a = (td__addr){t->smem.buf, t->smem.offset};
    a->mbar = (td__addr){t->mbar.buf, t->mbar.offset};
    a->cta_mask = t->cta_mask;
    a->cta_group = t->cta_group;
    a->policy = t->policy;
    a->op = t->op;
}

void td_ir_tma_load(td_ir *ir, const td_ir_tma *t)
{
    tma(ir, t, true);
}

void td_ir_tma_store(td_ir *ir, const td_ir_tma *t)
{
    tma(ir, t, false);
}

td_var *td_ir_mapa(td_ir *ir, const char *name, td_ir_addr addr,
                   td_expr *rank)
{
    if (!td__ir_live(ir))
        return NULL;
    if (name == NULL || !shared_addr(ir, addr, TD_DTYPE_COUNT) ||
        !index_operand(ir, rank)) {
        td__ir_fail(ir, TD_EINVAL);
        return NULL;
    }
    td_var *v = td__ir_var(ir, name, TD_U32);
    if (v == NULL)
        return NULL;
    td__async *a = add(ir, TD__A_MAPA);
    if (a == NULL)
        return NULL;
    a->a = (td__addr){addr.buf, addr.offset};
    a->value = rank;
    a->var = v;
    return v;
}

void td_ir_bulk_s2c(td_ir *ir, td_expr *dst, td_ir_addr src, td_expr *bytes,
                    td_expr *mbar)
{
    if (!td__ir_live(ir))
        return;
    if (!index_operand(ir, dst) || !index_operand(ir, mbar) ||
        !index_operand(ir, bytes) || !shared_addr(ir, src, TD_DTYPE_COUNT)) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__async *a = add(ir, TD__A_BULK_S2C);
    if (a == NULL)
        return;
    a->a = (td__addr){src.buf, src.offset};
    a->value = bytes;
    a->dst = dst;
    a->cbar = mbar;
}

static const char *const ldst_shapes[TD_IR_LDST_SHAPE_COUNT] = {
    "32x32b", "16x64b", "16x128b", "16x256b"};

const char *td_ir_tcgen05_ldst_shape(td_ir_ldst_shape s)
{
    return (unsigned)s < TD_IR_LDST_SHAPE_COUNT ? ldst_shapes[s] : NULL;
}

int td_ir_tcgen05_regs(td_ir_ldst_shape s, int num)
{
    /* Registers a rep, and the largest .num (PTX ISA Table 49). */
    static const int per[TD_IR_LDST_SHAPE_COUNT] = {1, 1, 2, 4};
    static const int most[TD_IR_LDST_SHAPE_COUNT] = {128, 128, 64, 32};
    if ((unsigned)s >= TD_IR_LDST_SHAPE_COUNT || num < 1 ||
        num > most[s] || (num & (num - 1)) != 0)
        return 0;
    return per[s] * num;
}

/* A tcgen05.ld / st: tmem a call buffer in tensor memory, regs a local
 * call buffer (not a scratch array: the printers name call buffers'
 * pointers), a shape and num the instruction takes, row 0 (or 16 for the
 * 16-lane shapes). */
static void tcgen05(td_ir *ir, td__akind kind, const td_ir_tmem_ldst *t)
{
    if (!td__ir_live(ir))
        return;
    bool ok = t != NULL && t->tmem != NULL && t->tmem->owner == ir &&
              !t->tmem->scratch && strcmp(t->tmem->scope, "tmem") == 0 &&
              t->regs != NULL && t->regs->owner == ir && !t->regs->scratch &&
              strcmp(t->regs->scope, "local") == 0 &&
              index_operand(ir, t->column) && index_operand(ir, t->word) &&
              td_ir_tcgen05_regs(t->shape, t->num) > 0 &&
              (t->row == 0 || (t->row == 16 && t->shape != TD_IR_LDST_32X32B));
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    td__async *a = add(ir, kind);
    if (a == NULL)
        return;
    a->a = (td__addr){t->tmem, t->column};
    a->regs = t->regs;
    a->word = t->word;
    a->num = t->num;
    a->shape = t->shape;
    a->row = t->row;
}

void td_ir_tcgen05_ld(td_ir *ir, const td_ir_tmem_ldst *t)
{
    tcgen05(ir, TD__A_TCGEN05_LD, t);
}

void td_ir_tcgen05_st(td_ir *ir, const td_ir_tmem_ldst *t)
{
    tcgen05(ir, TD__A_TCGEN05_ST, t);
}

static const char *const cp_shapes[TD_IR_CP_SHAPE_COUNT][2] = {
    {"128x256b", ""},       {"128x128b", ""},
    {"4x256b", ""},         {"64x128b", "warpx2::02_13"},
    {"64x128b", "warpx2::01_23"}, {"32x128b", "warpx4"}};

const char *td_ir_tcgen05_cp_shape(td_ir_cp_shape s)
{
    return (unsigned)s < TD_IR_CP_SHAPE_COUNT ? cp_shapes[s][0] : NULL;
}

const char *td_ir_tcgen05_cp_multicast(td_ir_cp_shape s)
{
    return (unsigned)s < TD_IR_CP_SHAPE_COUNT ? cp_shapes[s][1] : NULL;
}

void td_ir_tcgen05_cp(td_ir *ir, const td_ir_tmem_cp *c)
{
    if (!td__ir_live(ir))
        return;
    bool ok = c != NULL && c->tmem != NULL && c->tmem->owner == ir &&
              !c->tmem->scratch && strcmp(c->tmem->scope, "tmem") == 0 &&
              index_operand(ir, c->column) &&
              shared_addr(ir, c->smem, TD_DTYPE_COUNT) &&
              (unsigned)c->shape < TD_IR_CP_SHAPE_COUNT && c->lbo >= 0 &&
              c->lbo < (1 << 14) && c->sbo >= 0 && c->sbo < (1 << 14) &&
              c->swizzle >= 0 && c->swizzle <= 3 && c->cta_group >= 0 &&
              c->cta_group <= 2 && c->desc != NULL && c->desc[0] != '\0';
    if (!ok) {
        td__ir_fail(ir, TD_EINVAL);
        return;
    }
    char *name = td__arena_strdup(&ir->arena, c->desc);
    td__async *a = name != NULL ? add(ir, TD__A_TCGEN05_CP) : NULL;
    if (a == NULL) {
        if (name == NULL)
            td__ir_fail(ir, TD_ENOMEM);
        return;
    }
    a->a = (td__addr){c->tmem, c->column};
    a->mbar = (td__addr){c->smem.buf, c->smem.offset};
    a->num = (int)c->shape;
    a->lbo = c->lbo;
    a->sbo = c->sbo;
    a->swizzle = c->swizzle;
    a->cta_group = c->cta_group == 2 ? 2 : 1;
    a->desc = name;
    a->first = c->first;
}
