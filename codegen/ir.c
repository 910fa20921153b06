/*
 * The lowered IR: the builder that emitters drive (nodes live in the
 * IR's arena, arena.c; print.c hands a finished tree to a printer).  This
 * file holds its life cycle, names, buffers, parameters and statements;
 * the expression builders are in ir_expr.c.
 *
 * Builders never fail loudly.  The first failure (TD_ENOMEM, or TD_EINVAL
 * for misuse) is kept in ir->status and turns every later builder into a
 * no-op returning NULL, so an emitter checks td_ir_status once.  Expression
 * builders pass NULL operands through (they return NULL); statement
 * builders treat a NULL operand as misuse.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

/* ---- life cycle --------------------------------------------------------- */

td_ir *td_ir_new(void)
{
    td_ir *ir = td__malloc(sizeof *ir);
    if (ir == NULL)
        return NULL;
    memset(ir, 0, offsetof(td_ir, stack));
    td__arena_seed(&ir->arena, ir->first_block, sizeof ir->first_block);
    ir->stack[0].owner = NULL;
    ir->stack[0].in_else = false;
    ir->stack[0].tail = &ir->root;
    ir->bufs_tail = &ir->bufs;
    return ir;
}

void td_ir_free(td_ir *ir)
{
    if (ir == NULL)
        return;
    td__arena_free(&ir->arena);
    td__free(ir);
}

int td_ir_status(const td_ir *ir)
{
    return ir == NULL ? TD_EINVAL : ir->status;
}

/* ---- helpers ------------------------------------------------------------ */

static void fail(td_ir *ir, int code)
{
    if (ir->status == 0)
        ir->status = code;
}

/* True when builders may run: an IR without a sticky error. */
static bool live(td_ir *ir)
{
    return ir != NULL && ir->status == 0;
}

static void *alloc(td_ir *ir, size_t n)
{
    void *p = td__arena_alloc(&ir->arena, n);
    if (p == NULL)
        fail(ir, TD_ENOMEM);
    return p;
}

static bool valid_dtype(td_dtype t)
{
    return (unsigned)t < TD_DTYPE_COUNT;
}

static bool is_ident(const char *s)
{
    size_t n = 0;
    if (s == NULL || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                       *s == '_'))
        return false;
    for (; *s; s++, n++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return n <= TD__IR_NAME_MAX;
}

/* The names handed out live in a small hash table (FNV-1a, chained): an
 * emitter that declares a few dozen variables must not pay a quadratic
 * search. */
static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* s was handed out (h = name_hash(s)). */
static bool name_used(const td_ir *ir, const char *s, unsigned h)
{
    for (const td__name *n = ir->names[h % TD__IR_NAME_BUCKETS]; n != NULL;
         n = n->next)
        if (n->hash == h && strcmp(n->s, s) == 0)
            return true;
    return false;
}

static bool name_taken(const td_ir *ir, const char *s)
{
    return name_used(ir, s, name_hash(s)) || td__is_reserved_name(s);
}

static const char *add_name(td_ir *ir, const char *s)
{
    unsigned h = name_hash(s);
    td__name *n = alloc(ir, sizeof *n);
    char *d = n ? td__arena_strdup(&ir->arena, s) : NULL;
    if (d == NULL) {
        fail(ir, TD_ENOMEM);
        return NULL;
    }
    n->s = d;
    n->hash = h;
    n->next = ir->names[h % TD__IR_NAME_BUCKETS];
    ir->names[h % TD__IR_NAME_BUCKETS] = n;
    return d;
}

/* `base`, or `base_1`, `base_2`, ... whichever is free first. */
static const char *unique_name(td_ir *ir, const char *base)
{
    if (!is_ident(base)) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    if (!name_taken(ir, base))
        return add_name(ir, base);
    char tmp[TD__IR_NAME_MAX + 24];
    for (unsigned long k = 1;; k++) {
        snprintf(tmp, sizeof tmp, "%s_%lu", base, k);
        if (!name_taken(ir, tmp))
            return add_name(ir, tmp);
    }
}

/* A value operand is usable when present and not a statement-only
 * intrinsic; it may be a pair (ir_vec.c). */
static bool value_operand(td_ir *ir, const td_expr *e)
{
    if (e == NULL)
        return false;
    if (e->is_void) {
        fail(ir, TD_EINVAL);
        return false;
    }
    return true;
}

/* An operand of anything but pair arithmetic: a value, not a pair. */
static bool operand(td_ir *ir, const td_expr *e)
{
    if (!value_operand(ir, e))
        return false;
    if (td__is_pair(e)) {
        fail(ir, TD_EINVAL);
        return false;
    }
    return true;
}

static td_expr *new_expr(td_ir *ir, td__ekind kind, td_dtype t)
{
    td_expr *e = alloc(ir, sizeof *e);
    if (e != NULL) {
        e->kind = kind;
        e->dtype = t;
    }
    return e;
}

/* Copies an operand array into the arena after checking every entry. */
static const td_expr *const *copy_args(td_ir *ir, int n,
                                       td_expr *const *args, bool *impure)
{
    *impure = false;
    if (n < 0 || n > TD__IR_MAX_ARGS || (n > 0 && args == NULL)) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (!operand(ir, args[i]))
            return NULL;
        *impure = *impure || args[i]->impure;
    }
    const td_expr **d = alloc(ir, sizeof *d * (size_t)(n ? n : 1));
    if (d != NULL)
        for (int i = 0; i < n; i++)
            d[i] = args[i];
    return d;
}

/* ---- buffers ------------------------------------------------------------ */

static td_ir_buf *find_buf(const td_ir *ir, const char *name)
{
    for (td_ir_buf *b = ir->bufs; b != NULL; b = b->next)
        if (strcmp(b->name, name) == 0)
            return b;
    return NULL;
}

static void link_buf(td_ir *ir, td_ir_buf *b)
{
    *ir->bufs_tail = b;
    ir->bufs_tail = &b->next;
}

td_ir_buf *td_ir_buffer(td_ir *ir, const char *name, td_dtype dtype,
                        const char *scope, int ndim, const int64_t *shape)
{
    if (!live(ir))
        return NULL;
    if (!is_ident(name) || !valid_dtype(dtype) || ndim < 1 ||
        ndim > TD_MAX_RANK || shape == NULL) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    int64_t stride[TD_MAX_RANK];
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] < 1 || shape[d] > TD_MAX_EXTENT) {
            fail(ir, TD_EINVAL);
            return NULL;
        }
        stride[d] = s;
        if (d > 0 && __builtin_mul_overflow(s, shape[d], &s)) {
            fail(ir, TD_EINVAL);
            return NULL;
        }
    }
    /* Declaring the same buffer twice (an in-place call) yields the same
     * handle; a clash with another name is misuse. */
    td_ir_buf *old = find_buf(ir, name);
    if (old != NULL) {
        bool same = !old->scratch && old->dtype == dtype &&
                    old->ndim == ndim &&
                    memcmp(old->shape, shape, sizeof *shape * (size_t)ndim) ==
                        0;
        if (!same)
            fail(ir, TD_EINVAL);
        return same ? old : NULL;
    }
    /* name_ptr, without printf (is_ident bounds the length). */
    char ptr[TD__IR_NAME_MAX + 8];
    size_t len = strlen(name);
    memcpy(ptr, name, len);
    memcpy(ptr + len, "_ptr", 5);
    if (name_used(ir, name, name_hash(name)) ||
        name_used(ir, ptr, name_hash(ptr))) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    td_ir_buf *b = alloc(ir, sizeof *b);
    if (b == NULL)
        return NULL;
    b->name = add_name(ir, name);
    if (add_name(ir, ptr) == NULL || b->name == NULL)
        return NULL;
    b->scope = td__arena_strdup(&ir->arena, scope ? scope : "local");
    if (b->scope == NULL) {
        fail(ir, TD_ENOMEM);
        return NULL;
    }
    b->owner = ir;
    b->dtype = dtype;
    b->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        b->shape[d] = shape[d];
        b->stride[d] = stride[d];
    }
    link_buf(ir, b);
    return b;
}

int td_ir_buffer_swizzle(td_ir *ir, td_ir_buf *b, int bits, int base,
                         int shift)
{
    if (!live(ir))
        return td_ir_status(ir);
    if (b == NULL || b->owner != ir || b->scratch || bits < 0 ||
        bits > shift || shift > 31 || base < 0 || base > 31 ||
        (b->swz_bits != 0 && (b->swz_bits != bits || b->swz_base != base ||
                              b->swz_shift != shift))) {
        fail(ir, TD_EINVAL);
        return TD_EINVAL;
    }
    b->swz_bits = bits;
    b->swz_base = base;
    b->swz_shift = shift;
    return 0;
}

td_ir_buf *td_ir_scratch(td_ir *ir, const char *name, td_dtype dtype,
                         int64_t size)
{
    if (!live(ir))
        return NULL;
    if (!valid_dtype(dtype) || size < 1 || size > TD_MAX_EXTENT) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    td_ir_buf *b = alloc(ir, sizeof *b);
    if (b == NULL)
        return NULL;
    b->name = unique_name(ir, name);
    if (b->name == NULL)
        return NULL;
    b->owner = ir;
    b->scope = "local";
    b->dtype = dtype;
    b->scratch = true;
    b->ndim = 1;
    b->shape[0] = size;
    b->stride[0] = 1;
    link_buf(ir, b);
    return b;
}

td_ir_buf *td_ir_shared_scratch(td_ir *ir, const char *name, td_dtype dtype,
                                int64_t size)
{
    td_ir_buf *b = td_ir_scratch(ir, name, dtype, size);
    if (b != NULL)
        b->scope = "shared";
    return b;
}

int64_t td_ir_shared_scratch_bytes(const td_ir *ir)
{
    if (ir == NULL)
        return 0;
    int64_t total = 0;
    for (const td_ir_buf *b = ir->bufs; b != NULL; b = b->next) {
        if (!b->scratch || strcmp(b->scope, "shared") != 0)
            continue;
        int64_t esize = td_dtype_bits(b->dtype) / 8;
        if (esize < 1)
            esize = 1;
        int64_t n = b->shape[0] > 0 ? b->shape[0] : 0;
        if (n > (INT64_MAX - 15) / esize)
            return INT64_MAX;
        int64_t bytes = (n * esize + 15) / 16 * 16;
        if (total > INT64_MAX - bytes)
            return INT64_MAX;
        total += bytes;
    }
    return total;
}

td_dtype td_ir_buf_dtype(const td_ir_buf *b)
{
    return b != NULL ? b->dtype : TD_DTYPE_COUNT;
}

const char *td_combiner_name(td_combiner c)
{
    switch (c) {
    case TD_COMBINE_SUM: return "sum";
    case TD_COMBINE_MAX: return "max";
    case TD_COMBINE_MIN: return "min";
    }
    return "?";
}

int64_t td_ir_buffer_elems(const td_ir *ir, const char *name)
{
    if (ir == NULL || name == NULL)
        return 0;
    for (const td_ir_buf *b = ir->bufs; b != NULL; b = b->next) {
        if (b->scratch || b->name == NULL || strcmp(b->name, name) != 0)
            continue;
        int64_t n = 1;
        for (int d = 0; d < b->ndim; d++) {
            if (b->shape[d] <= 0)
                return 0;
            n = b->shape[d] > INT64_MAX / n ? INT64_MAX : n * b->shape[d];
        }
        return n;
    }
    return 0;
}

/* Checks that b is a buffer of this IR indexed with its rank. */
static bool buf_access(td_ir *ir, const td_ir_buf *b, int n,
                       td_expr *const *idx)
{
    if (b == NULL || b->owner != ir || n != b->ndim || idx == NULL) {
        fail(ir, TD_EINVAL);
        return false;
    }
    return true;
}

/* A kernel parameter is an expression, but declaring one takes its name
 * for good, as a buffer's is taken. */
td_expr *td_param(td_ir *ir, const char *name, td_dtype t)
{
    if (!live(ir))
        return NULL;
    if (!is_ident(name) || !valid_dtype(t)) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    /* The same parameter may be referred to any number of times; its name
     * is taken for good, so no buffer or variable can shadow it. */
    const td__param *p = ir->params;
    while (p != NULL && strcmp(p->name, name) != 0)
        p = p->next;
    if (p != NULL && p->dtype != t) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    if (p == NULL) {
        if (name_taken(ir, name)) {
            fail(ir, TD_EINVAL);
            return NULL;
        }
        td__param *n = alloc(ir, sizeof *n);
        const char *s = n != NULL ? add_name(ir, name) : NULL;
        if (s == NULL)
            return NULL;
        n->name = s;
        n->dtype = t;
        n->next = ir->params;
        ir->params = n;
        p = n;
    }
    td_expr *e = new_expr(ir, TD__E_PARAM, t);
    if (e != NULL)
        e->name = p->name;
    return e;
}

/* ---- statements --------------------------------------------------------- */

static td__stmt *new_stmt(td_ir *ir, td__skind kind)
{
    td__stmt *s = alloc(ir, sizeof *s);
    if (s != NULL)
        s->kind = kind;
    return s;
}

static void append(td_ir *ir, td__stmt *s)
{
    td__frame *f = &ir->stack[ir->depth];
    *f->tail = s;
    f->tail = &s->next;
}

/* Statement operands must be present; NULL is misuse (unless an earlier
 * failure produced it, which the sticky status already records). */
static bool stmt_operand(td_ir *ir, const td_expr *e)
{
    if (e == NULL) {
        fail(ir, TD_EINVAL);
        return false;
    }
    return operand(ir, e);
}

static bool push(td_ir *ir, td__stmt *owner, td__stmt **tail)
{
    if (ir->depth >= TD__IR_MAX_DEPTH) {
        fail(ir, TD_EINVAL);
        return false;
    }
    ir->depth++;
    ir->stack[ir->depth].owner = owner;
    ir->stack[ir->depth].in_else = false;
    ir->stack[ir->depth].tail = tail;
    return true;
}

static td_var *new_var(td_ir *ir, const char *name, td_dtype t, bool loop)
{
    td_var *v = alloc(ir, sizeof *v);
    if (v == NULL)
        return NULL;
    v->name = unique_name(ir, name);
    if (v->name == NULL)
        return NULL;
    v->owner = ir;
    v->dtype = t;
    v->is_loop = loop;
    v->id = ir->nvars++;
    return v;
}

td_var *td_ir_for(td_ir *ir, const char *name, td_expr *extent,
                  td_loop_kind kind)
{
    if (!live(ir) || !stmt_operand(ir, extent))
        return NULL;
    if ((unsigned)kind > TD_LOOP_UNROLL || ir->depth >= TD__IR_MAX_DEPTH) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    td__stmt *s = new_stmt(ir, TD__S_FOR);
    td_var *v = s ? new_var(ir, name, TD_I32, true) : NULL;
    if (v == NULL)
        return NULL;
    s->var = v;
    s->extent = extent;
    s->loop = kind;
    append(ir, s);
    push(ir, s, &s->body);
    return v;
}

static td__stmt *top_owner(td_ir *ir, td__skind kind)
{
    td__stmt *o = ir->depth > 0 ? ir->stack[ir->depth].owner : NULL;
    if (o == NULL || o->kind != kind) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    return o;
}

void td_ir_end_for(td_ir *ir)
{
    if (live(ir) && top_owner(ir, TD__S_FOR) != NULL)
        ir->depth--;
}

void td_ir_if(td_ir *ir, td_expr *cond)
{
    if (!live(ir) || !stmt_operand(ir, cond))
        return;
    if (ir->depth >= TD__IR_MAX_DEPTH) {
        fail(ir, TD_EINVAL);
        return;
    }
    td__stmt *s = new_stmt(ir, TD__S_IF);
    if (s == NULL)
        return;
    s->cond = cond;
    append(ir, s);
    push(ir, s, &s->body);
}

void td_ir_else(td_ir *ir)
{
    if (!live(ir))
        return;
    td__stmt *s = top_owner(ir, TD__S_IF);
    if (s == NULL)
        return;
    td__frame *f = &ir->stack[ir->depth];
    if (f->in_else) {
        fail(ir, TD_EINVAL);
        return;
    }
    f->in_else = true;
    f->tail = &s->orelse;
}

void td_ir_end_if(td_ir *ir)
{
    if (live(ir) && top_owner(ir, TD__S_IF) != NULL)
        ir->depth--;
}

void td_ir_store(td_ir *ir, const td_ir_buf *b, int n, td_expr *const *idx,
                 td_expr *value)
{
    if (!live(ir) || !buf_access(ir, b, n, idx) || !stmt_operand(ir, value))
        return;
    for (int i = 0; i < n; i++)
        if (!stmt_operand(ir, idx[i]))
            return;
    bool impure;
    const td_expr *const *a = copy_args(ir, n, idx, &impure);
    td__stmt *s = a ? new_stmt(ir, TD__S_STORE) : NULL;
    if (s == NULL)
        return;
    s->buf = b;
    s->nidx = n;
    s->idx = a;
    s->value = value;
    append(ir, s);
}

void td_ir_store1(td_ir *ir, const td_ir_buf *b, td_expr *idx,
                  td_expr *value)
{
    td_ir_store(ir, b, 1, &idx, value);
}

void td_ir_eval(td_ir *ir, td_expr *e)
{
    if (!live(ir))
        return;
    if (e == NULL) {
        fail(ir, TD_EINVAL);
        return;
    }
    td__stmt *s = new_stmt(ir, TD__S_EVAL);
    if (s == NULL)
        return;
    s->value = e;
    append(ir, s);
}

td_var *td_ir_let(td_ir *ir, const char *name, td_dtype t, td_expr *init)
{
    if (!live(ir) || !stmt_operand(ir, init))
        return NULL;
    if (!valid_dtype(t)) {
        fail(ir, TD_EINVAL);
        return NULL;
    }
    td__stmt *s = new_stmt(ir, TD__S_LET);
    td_var *v = s ? new_var(ir, name, t, false) : NULL;
    if (v == NULL)
        return NULL;
    s->var = v;
    s->value = init;
    append(ir, s);
    return v;
}

void td_ir_assign(td_ir *ir, const td_var *v, td_expr *value)
{
    if (!live(ir))
        return;
    if (v == NULL || v->owner != ir || v->is_loop || v->lanes > 1) {
        fail(ir, TD_EINVAL);
        return;
    }
    if (!stmt_operand(ir, value))
        return;
    td__stmt *s = new_stmt(ir, TD__S_ASSIGN);
    if (s == NULL)
        return;
    s->var = (td_var *)v;
    s->value = value;
    append(ir, s);
}

void td_ir_comment(td_ir *ir, const char *text)
{
    if (!live(ir))
        return;
    if (text == NULL) {
        fail(ir, TD_EINVAL);
        return;
    }
    td__stmt *s = new_stmt(ir, TD__S_COMMENT);
    char *t = s ? td__arena_strdup(&ir->arena, text) : NULL;
    if (t == NULL) {
        fail(ir, TD_ENOMEM);
        return;
    }
    /* A comment stays on its line: control characters become spaces, and
     * a trailing backslash (which would splice the next C line into the
     * comment) becomes a slash. */
    size_t n = strlen(t);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)t[i] < 0x20 || t[i] == 0x7f)
            t[i] = ' ';
    while (n > 0 && t[n - 1] == ' ')
        t[--n] = '\0';
    if (n > 0 && t[n - 1] == '\\')
        t[n - 1] = '/';
    s->text = t;
    append(ir, s);
}

/* ---- what ir_vec.c and ir_expr.c share ---------------------------------- */

void td__ir_fail(td_ir *ir, int code)
{
    fail(ir, code);
}

bool td__ir_live(td_ir *ir)
{
    return live(ir);
}

td_expr *td__ir_expr(td_ir *ir, td__ekind kind, td_dtype t)
{
    return new_expr(ir, kind, t);
}

td__stmt *td__ir_stmt(td_ir *ir, td__skind kind)
{
    return new_stmt(ir, kind);
}

td_var *td__ir_var(td_ir *ir, const char *name, td_dtype t)
{
    return new_var(ir, name, t, false);
}

void td__ir_append(td_ir *ir, td__stmt *s)
{
    append(ir, s);
}

bool td__ir_stmt_operand(td_ir *ir, const td_expr *e)
{
    return stmt_operand(ir, e);
}

const char *td__ir_unique_name(td_ir *ir, const char *base)
{
    return unique_name(ir, base);
}

const td_expr *const *td__ir_idx(td_ir *ir, const td_ir_buf *b, int n,
                                 td_expr *const *idx)
{
    bool impure;
    if (!buf_access(ir, b, n, idx))
        return NULL;
    return copy_args(ir, n, idx, &impure);
}

void *td__ir_alloc(td_ir *ir, size_t n)
{
    return alloc(ir, n);
}

bool td__ir_valid_dtype(td_dtype t)
{
    return valid_dtype(t);
}

bool td__ir_is_ident(const char *s)
{
    return is_ident(s);
}

bool td__ir_value_operand(td_ir *ir, const td_expr *e)
{
    return value_operand(ir, e);
}

bool td__ir_operand(td_ir *ir, const td_expr *e)
{
    return operand(ir, e);
}

const td_expr *const *td__ir_copy_args(td_ir *ir, int n,
                                       td_expr *const *args, bool *impure)
{
    return copy_args(ir, n, args, impure);
}

bool td__ir_buf_access(td_ir *ir, const td_ir_buf *b, int n,
                       td_expr *const *idx)
{
    return buf_access(ir, b, n, idx);
}
