/*
 * The `smem` variant of the elementwise ops (upstream elementwise/smem.py):
 * every operand in shared memory; the scope's T threads stride over the
 * dst region's elements in chunks of `vec`:
 *
 *   tid = threadIdx.x (cta) | threadIdx.x % 32 (warp) | % 128 (warpgroup)
 *   for s in serial(ceil(total / (vec * T))):
 *       for v in unroll(vec):
 *           fused = s*vec*T + tid*vec + v
 *           if fused < total:                 (only when it can fail)
 *               dst[unflatten(fused)] = cast(op(srcs at the same element))
 *   the scope's barrier
 *
 * vec is upstream's widest chunk (128, 64, ... bits) that divides every
 * operand's innermost extent and the per-thread share.  Where each
 * operand's chunk is one aligned access (plan_wide), the v loop goes: one
 * vector load per source, the op lane by lane or, for float16 / bfloat16,
 * pair by pair (ewise_vec.c), one vector store; otherwise the scalar loop
 * above.  Where the op has an f32x2 emit that applies (add/sub/mul/fma on
 * sm_100+) two elements go through one instruction; paired
 * f32 <-> f16/bf16 casts where the vector path does not apply.  Thread
 * scope is T = 1, tid = 0, no barrier.  Public headers only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ewise.h"
#include "ewise_vec.h"
#include "variants.h"

typedef struct smem_plan {
    const ew_info *info;
    ew_operands o;
    int64_t total;   /* dst elements */
    int64_t threads; /* T */
    int vec;         /* elements per thread per step */
    ew_pack pack;    /* EW_PACK_NONE: the scalar path */
    const char *rnd; /* rounding of the packed path */
    bool wide;       /* the vector path: one access per operand chunk */
    bool paired;     /* ... with float16 / bfloat16 pair arithmetic */
    bool bcast[EW_MAX_OPERANDS]; /* a source the chunk reads as one value */
} smem_plan;

/* Row-major storage: no layout, or a plain stride-1 chain on m with no
 * replica or offset (the printers index shared buffers row-major over
 * their shape), possibly swizzled (TVM's ComposeLayout; the CUDA printer
 * XORs the flat index, td_ir_buffer_swizzle).  A swizzle must keep every
 * offset inside the buffer: its n elements are whole blocks of
 * 2^(m+b) (the bits it changes) or all below 2^(m+s) (where it changes
 * nothing).  TVM takes any layout and lets its buffer resolve the
 * indices; a non-row-major tile under the swizzle is still refused here. */
static bool row_major(const td_buffer *b, td_reason *why)
{
    if (!b->has_layout)
        return true;
    const td_layout *l = &b->layout;
    bool ok = l->nrep == 0 && l->nshard > 0;
    int64_t run = 1;
    for (int i = l->nshard - 1; ok && i >= 0; i--) {
        const td_iter *it = &l->shard[i];
        if (it->extent == 1)
            continue;
        ok = it->axis == TD_AXIS_M && it->stride == run &&
             !__builtin_mul_overflow(run, it->extent, &run);
    }
    for (int a = 0; ok && a < TD_AXIS_COUNT; a++)
        ok = l->offset[a] == 0;
    int64_t n = 1;
    for (int d = 0; ok && d < b->ndim && d < TD_MAX_RANK; d++)
        ok = !__builtin_mul_overflow(n, b->shape[d], &n);
    ok = ok && run == n;
    if (!ok) {
        td_reason_set(why,
                      "layout of %.*s is not row-major storage (%.*s); this "
                      "path indexes its elements in row-major order",
                      (int)strnlen(b->name, TD_NAME_MAX), b->name,
                      (int)strnlen(b->layout_text, sizeof b->layout_text),
                      b->layout_text);
        return false;
    }
    if (l->swizzle) {
        int zb = l->swizzle_bits[0], zm = l->swizzle_bits[1];
        int zs = l->swizzle_bits[2];
        bool fits = zm + zs >= 40 || n <= ((int64_t)1 << (zm + zs)) ||
                    (zm + zb < 40 && n % ((int64_t)1 << (zm + zb)) == 0);
        if (!fits) {
            td_reason_set(why,
                          "the swizzle of %.*s (%.*s) would move elements "
                          "past its end: its %" PRId64 " elements are not "
                          "whole blocks of %lld",
                          (int)strnlen(b->name, TD_NAME_MAX), b->name,
                          (int)strnlen(b->layout_text, sizeof b->layout_text),
                          b->layout_text, n, 1LL << (zm + zb));
            return false;
        }
    }
    return true;
}

/* Whether accesses of `vec` consecutive elements (starting at multiples
 * of vec) of buffer b stay contiguous: always without a swizzle; with one
 * when its XOR unit, 2^m elements, holds a whole vector (the XOR only
 * changes bits m and up).  A 16-byte vector of float16 needs m >= 3, as
 * TVM's usual 128-byte swizzle ComposeLayout(3, 3, 3, ...) has. */
static bool swizzle_keeps(const td_buffer *b, int vec)
{
    if (!b->has_layout || !b->layout.swizzle)
        return true;
    return b->layout.swizzle_bits[1] >= 31 ||
           vec <= (1 << b->layout.swizzle_bits[1]);
}

/* upstream _max_layout_vec */
static int max_layout_vec(const td_call *call, const ew_operands *o,
                          int64_t total, int64_t T)
{
    const td_region *d = &call->dst;
    int bits = td_dtype_bits(call->buffers[d->buffer].dtype);
    for (int i = 0; i < o->n; i++)
        if (o->src[i].kind == TD_OPERAND_REGION &&
            td_dtype_bits(o->src[i].dtype) > bits)
            bits = td_dtype_bits(o->src[i].dtype);
    if (T <= 0 || total % T != 0)
        return 1;
    int64_t per_thread = total / T;
    static const int cands[] = {128, 64, 32, 16, 8};
    for (size_t c = 0; c < 5; c++) {
        int n = cands[c] / bits;
        if (n <= 0 || per_thread % n != 0 || d->extent[d->ndim - 1] % n != 0)
            continue;
        bool all = true;
        for (int i = 0; i < o->n && all; i++)
            if (o->src[i].kind == TD_OPERAND_REGION)
                all = o->src[i].region.extent[o->src[i].region.ndim - 1] % n == 0;
        if (all)
            return n;
    }
    return 1;
}

/* A pair of a region starts at an even flat index whenever its first
 * lane's index in the last dimension is even. */
static bool pair_aligned(const td_call *call, const td_region *r)
{
    const td_buffer *b = &call->buffers[r->buffer];
    int last = r->ndim - 1;
    return r->start[last] % 2 == 0 && (r->ndim == 1 || b->shape[last] % 2 == 0);
}

/* Whether `vec` consecutive elements of region r along its last
 * dimension, starting at a multiple of vec there, are one aligned vector
 * access: a dtype vector variables take, vec * size 4, 8 or 16 bytes, and
 * both the region's start and the row pitch multiples of vec (every
 * shared buffer starts 16-byte aligned). */
static bool wide_ok(const td_call *call, const td_region *r, int vec)
{
    const td_buffer *b = &call->buffers[r->buffer];
    int bytes = vec * td_dtype_bits(b->dtype) / 8;
    int last = r->ndim - 1;
    /* the dtypes the printers spell as vector lanes; 64-bit lanes only two
     * to a 16-byte vector (double2, longlong2, ulonglong2) */
    bool dt;
    switch (b->dtype) {
    case TD_F32: case TD_F16: case TD_BF16:
    case TD_I8: case TD_I16: case TD_I32:
    case TD_U8: case TD_U16: case TD_U32:
        dt = true;
        break;
    case TD_F64: case TD_I64: case TD_U64:
        dt = vec == 2;
        break;
    default:
        dt = false;
        break;
    }
    return dt && (bytes == 4 || bytes == 8 || bytes == 16) &&
           r->start[last] % vec == 0 && b->shape[last] % vec == 0 &&
           swizzle_keeps(b, vec);
}

/* The vector path (CUTLASS's epilogue habit): each chunk of vec elements
 * is one load per source, one store, and for float16 / bfloat16 add, sub,
 * mul, fma and maximum in one dtype pair arithmetic (same rounding per
 * lane as the scalar ops); a float32 -> float16 / bfloat16 cast converts
 * pairs.  A source with extent 1 in the last dimension is read once per
 * chunk. */
static void plan_wide(const td_call *call, smem_plan *p)
{
    const td_region *d = &call->dst;
    int vec = p->vec;
    p->wide = vec >= 2 && wide_ok(call, d, vec);
    td_dtype dt = call->buffers[d->buffer].dtype;
    p->paired = td__ewise_pairable(p->info, &p->o, dt);
    for (int i = 0; p->wide && i < p->o.n; i++) {
        const td_region *r = &p->o.src[i].region;
        if (p->o.src[i].kind != TD_OPERAND_REGION)
            continue;
        p->bcast[i] = r->extent[r->ndim - 1] == 1 && d->extent[d->ndim - 1] > 1;
        if (!p->bcast[i])
            p->wide = wide_ok(call, r, vec);
        else if (p->info->fn == EW_CAST)
            p->paired = false; /* a float32 value: converted lane by lane */
    }
    p->paired = p->paired && p->wide;
}

static bool smem_check(const td_call *call, const td_op_desc *op,
                       smem_plan *p, td_reason *why)
{
    if (!td__ewise_common(call, op, true, &p->o, why) ||
        !td__ewise_shapes(call, &p->o, why) ||
        !td__ewise_limits(call, &p->o, &p->rnd, why))
        return false;
    if (!row_major(&call->buffers[call->dst.buffer], why))
        return false;
    for (int i = 0; i < p->o.n; i++)
        if (p->o.src[i].kind == TD_OPERAND_REGION &&
            !row_major(&call->buffers[p->o.src[i].region.buffer], why))
            return false;
    p->info = td__ewise_info(op);
    p->total = td__ewise_elems(&call->dst);
    p->threads = td__scope_threads(call);
    int vmax = max_layout_vec(call, &p->o, p->total, p->threads);
    p->vec = vmax;
    p->pack = EW_PACK_NONE;
    plan_wide(call, p);
    /* The paired f32x2 ops of sm_100 stay (two lanes, one instruction);
     * paired casts go through the vector path where it applies. */
    if (p->info->pack != EW_PACK_NONE && vmax >= 2 && vmax % 2 == 0 &&
        !(p->wide && p->info->pack == EW_PACK_CAST2) &&
        td__ewise_pack_applies(call, p->info, &p->o)) {
        p->wide = p->paired = false;
        bool ok = true;
        if (p->info->pack == EW_PACK_CAST2)
            ok = pair_aligned(call, &call->dst) &&
                 pair_aligned(call, &p->o.src[0].region) &&
                 swizzle_keeps(&call->buffers[call->dst.buffer], 2) &&
                 swizzle_keeps(&call->buffers[p->o.src[0].region.buffer], 2);
        if (ok) {
            p->vec = 2;
            p->pack = p->info->pack;
        }
    }
    return true;
}

static int smem_plan_fn(const td_call *call, const td_op_desc *op, void *plan,
                        void *user, td_reason *why)
{
    (void)user;
    return smem_check(call, op, plan, why) ? 0 : TD_EDECLINED;
}

static bool smem_valid(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)args;
    (void)user;
    /* Predicates are not handed the op: find it by the call's op name. */
    smem_plan tmp;
    return smem_check(call, td__ewise_op_named(call->op), &tmp, why);
}

static const td_pred_desc smem_preds[] = {
    {"ewise_smem_valid", NULL, 0, smem_valid, NULL, NULL},
};

/* ---- emit ---------------------------------------------------------------- */

typedef struct smem_ctx {
    td_ir *ir;
    const td_call *call;
    const smem_plan *p;
    td_ir_buf *bufs[TD_MAX_BUFFERS];
    /* The element is fused + lane = s*step + b, b = tid*vec + v + lane,
     * and 0 <= b < step (tid < T, v and lane < vec); a broadcast source's
     * indices are split over s and b (split_index). */
    const td_var *fused;
    const td_var *s, *tid, *v;
    int64_t step;
    int lane;        /* added to fused and b */
    /* The vector path: each source's vector (or its one value) and the
     * lane or pair the compute reads. */
    const td_var *in[EW_MAX_OPERANDS];
    int at;
} smem_ctx;

static td_expr *flat(td_ir *ir, const void *c)
{
    const smem_ctx *x = c;
    td_expr *e = td_var_ref(ir, x->fused);
    return x->lane != 0 ? td_add(ir, e, td_int(ir, x->lane)) : e;
}

/* b: the element's offset within step s's chunk of the scope. */
static td_expr *inner_b(const smem_ctx *x)
{
    td_ir *ir = x->ir;
    td_expr *e = NULL;
    if (x->tid != NULL)
        e = x->p->vec > 1 ? td_mul(ir, td_var_ref(ir, x->tid),
                                   td_int(ir, x->p->vec))
                          : td_var_ref(ir, x->tid);
    if (x->v != NULL)
        e = e != NULL ? td_add(ir, e, td_var_ref(ir, x->v))
                      : td_var_ref(ir, x->v);
    if (x->lane != 0 || e == NULL)
        e = e != NULL ? td_add(ir, e, td_int(ir, x->lane))
                      : td_int(ir, x->lane);
    return e;
}

/* (fused / inner) % ext (the % left out for the outermost dimension),
 * fused = s*step + b with 0 <= b < step, written so that the part that
 * depends on s alone is separate from the thread's part: with step a
 * multiple of inner, fused / inner = s*(step/inner) + b/inner, and b/inner
 * is 0 when step == inner; with inner a multiple of step it is
 * s / (inner/step).  Then a compiler keeps the thread's part out of the
 * loop, and a broadcast operand indexed by the row reads one address a
 * step (TVM's smem loops read rmax[s] where fused >> 7 made every thread
 * compute its own address: 7% of a softmax on the H200). */
static td_expr *split_index(td_ir *ir, const void *c, int64_t inner,
                            int64_t ext, bool outermost)
{
    const smem_ctx *x = c;
    int64_t step = x->step;
    td_expr *sv = td_var_ref(ir, x->s);
    td_expr *e;
    if (step % inner == 0 && !outermost && step % (inner * ext) == 0) {
        /* s's part is a multiple of ext: only b remains */
        e = inner > 1 ? td_div(ir, inner_b(x), td_int(ir, inner))
                      : inner_b(x);
        return step == inner * ext ? e : td_mod(ir, e, td_int(ir, ext));
    }
    if (step % inner == 0) {
        e = step / inner > 1 ? td_mul(ir, sv, td_int(ir, step / inner)) : sv;
        if (step > inner)
            e = td_add(ir, e, inner > 1 ? td_div(ir, inner_b(x),
                                                 td_int(ir, inner))
                                        : inner_b(x));
    } else if (inner % step == 0) {
        e = inner / step > 1 ? td_div(ir, sv, td_int(ir, inner / step)) : sv;
    } else {
        e = td_add(ir, td_mul(ir, sv, td_int(ir, step)), inner_b(x));
        e = td_div(ir, e, td_int(ir, inner));
    }
    return outermost ? e : td_mod(ir, e, td_int(ir, ext));
}

/* The indices of region r at the current element (upstream get_indices,
 * or the right-aligned broadcast of dst's indices, split over s and the
 * thread's part so that a row-broadcast operand reads one address a
 * step). */
static void indices(smem_ctx *x, const td_region *r, td_expr **idx)
{
    const td_region *d = &x->call->dst;
    bool same = r->ndim == d->ndim;
    for (int k = 0; same && k < r->ndim; k++)
        same = r->extent[k] == d->extent[k];
    if (same) {
        td__unflatten(x->ir, flat, x, r->ndim, r->extent, r->start, idx);
        return;
    }
    td_expr *rel[TD_MAX_RANK];
    td__unflatten_by(x->ir, split_index, x, d->ndim, d->extent, NULL, rel);
    int pad = d->ndim - r->ndim;
    for (int k = 0; k < r->ndim; k++)
        idx[k] = r->extent[k] == 1
                     ? td_int(x->ir, r->start[k])
                     : (r->start[k] != 0 ? td_add(x->ir, rel[k + pad],
                                                  td_int(x->ir, r->start[k]))
                                         : rel[k + pad]);
}

static td_expr *src_value(void *c, int i)
{
    smem_ctx *x = c;
    const td_operand *o = &x->p->o.src[i];
    if (o->kind != TD_OPERAND_REGION)
        return td__ewise_scalar(x->ir, o);
    td_expr *idx[TD_MAX_RANK];
    indices(x, &o->region, idx);
    return td_load(x->ir, x->bufs[o->region.buffer], o->region.ndim, idx);
}

static td_ir_buf *declare(smem_ctx *x, int b)
{
    if (x->bufs[b] == NULL) {
        const td_buffer *tb = &x->call->buffers[b];
        x->bufs[b] = td_ir_buffer(x->ir, tb->name, tb->dtype, tb->scope,
                                  tb->ndim, tb->shape);
        if (x->bufs[b] != NULL && tb->has_layout && tb->layout.swizzle)
            td_ir_buffer_swizzle(x->ir, x->bufs[b], tb->layout.swizzle_bits[0],
                                 tb->layout.swizzle_bits[1],
                                 tb->layout.swizzle_bits[2]);
    }
    return x->bufs[b];
}

static void store_dst(void *c, td_expr *v)
{
    smem_ctx *x = c;
    td_expr *idx[TD_MAX_RANK];
    const td_region *d = &x->call->dst;
    indices(x, d, idx);
    td_ir_store(x->ir, x->bufs[d->buffer], d->ndim, idx, v);
}

/* Source i at lane x->at of the chunk (the vector path). */
static td_expr *src_lane(void *c, int i)
{
    smem_ctx *x = c;
    const td_operand *o = &x->p->o.src[i];
    if (o->kind != TD_OPERAND_REGION)
        return td__ewise_scalar(x->ir, o);
    if (x->p->bcast[i])
        return td_var_ref(x->ir, x->in[i]);
    return td_vec_lane(x->ir, x->in[i], x->at);
}

/* Source i at pair x->at of the chunk (a region's). */
static td_expr *src_pair(void *c, int i)
{
    smem_ctx *x = c;
    if (x->p->bcast[i])
        return td_pair_splat(x->ir, td_var_ref(x->ir, x->in[i]));
    return td_vec_pair(x->ir, x->in[i], x->at);
}

/* One chunk of vec elements: a vector load per source (a broadcast one
 * read once), the op per lane or per pair, one vector store. */
static void emit_wide(smem_ctx *x, td_dtype dt)
{
    td_ir *ir = x->ir;
    const smem_plan *p = x->p;
    const td_region *d = &x->call->dst;
    td_expr *idx[TD_MAX_RANK];
    static const char *const names[] = {"va", "vb", "vc", "vd", "ve"};
    x->lane = 0;
    for (int i = 0; i < p->o.n && p->info->reads_src; i++) {
        const td_operand *o = &p->o.src[i];
        if (o->kind != TD_OPERAND_REGION)
            continue;
        indices(x, &o->region, idx);
        const td_ir_buf *b = x->bufs[o->region.buffer];
        x->in[i] = p->bcast[i]
                       ? td_ir_let(ir, names[i], o->dtype,
                                   td_load(ir, b, o->region.ndim, idx))
                       : td_ir_let_vector(ir, names[i], b, o->region.ndim,
                                          idx, (int)p->vec);
    }
    td_expr *vals[16];
    int n = p->paired ? p->vec / 2 : p->vec;
    for (int k = 0; k < n && k < 16; k++) {
        x->at = k;
        vals[k] = p->paired ? td__ewise_pair(ir, p->info, &p->o, dt,
                                             src_pair, x)
                            : td__ewise_compute(ir, p->info, &p->o, dt,
                                                src_lane, x);
    }
    const td_var *out = td_ir_let_vector_of(ir, "vr", dt, p->vec, n, vals);
    indices(x, d, idx);
    td_ir_store_vector(ir, x->bufs[d->buffer], d->ndim, idx, out);
}

static void emit_packed(smem_ctx *x)
{
    td_ir *ir = x->ir;
    const smem_plan *p = x->p;
    if (p->pack == EW_PACK_CAST2) {
        td_expr *didx[TD_MAX_RANK], *sidx[TD_MAX_RANK];
        const td_region *s = &p->o.src[0].region, *d = &x->call->dst;
        x->lane = 0;
        indices(x, d, didx);
        indices(x, s, sidx);
        td_ir_cast_pair(ir, x->bufs[d->buffer], d->ndim, didx,
                        x->bufs[s->buffer], s->ndim, sidx);
        return;
    }
    td__ewise_emit_f32x2(ir, p->info, &p->o, p->rnd, src_value, store_dst, x,
                         &x->lane);
}

/* Says in the emitted code how swizzled operands are read and written:
 * whole vectors (each vector inside one XOR unit of the swizzle) or one
 * element at a time (a unit smaller than the vector would split it, or
 * the plan has no vector path anyway). */
static void swizzle_note(const td_call *call, const smem_plan *p, td_ir *ir)
{
    const td_buffer *bs[EW_MAX_OPERANDS + 1];
    int n = 0;
    bs[n++] = &call->buffers[call->dst.buffer];
    for (int i = 0; i < p->o.n && n <= EW_MAX_OPERANDS; i++)
        if (p->o.src[i].kind == TD_OPERAND_REGION)
            bs[n++] = &call->buffers[p->o.src[i].region.buffer];
    const td_buffer *z = NULL;
    for (int i = 0; i < n && z == NULL; i++)
        if (bs[i]->has_layout && bs[i]->layout.swizzle)
            z = bs[i];
    if (z == NULL)
        return;
    char text[200];
    int unit = td_dtype_bits(z->dtype) / 8 << z->layout.swizzle_bits[1];
    if (p->wide)
        snprintf(text, sizeof text,
                 "swizzled %s: %d-byte vector accesses (each inside one "
                 "%d-byte XOR unit)",
                 z->name, (int)(p->vec * td_dtype_bits(z->dtype) / 8), unit);
    else if (p->pack == EW_PACK_CAST2)
        snprintf(text, sizeof text,
                 "swizzled %s: pair accesses (each inside one %d-byte XOR "
                 "unit)",
                 z->name, unit);
    else
        snprintf(text, sizeof text,
                 "swizzled %s: element accesses (%d-byte XOR unit)", z->name,
                 unit);
    td_ir_comment(ir, text);
}

static int smem_emit(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)user;
    (void)op;
    const smem_plan *p = plan;
    if (p == NULL) {
        td_reason_set(why, "smem emitter called without its plan");
        return TD_EINVAL;
    }
    smem_ctx x = {.ir = ir, .call = call, .p = p};
    td_dtype dt = call->buffers[call->dst.buffer].dtype;
    swizzle_note(call, p, ir);
    declare(&x, call->dst.buffer);
    for (int i = 0; i < p->o.n; i++)
        if (p->o.src[i].kind == TD_OPERAND_REGION)
            declare(&x, p->o.src[i].region.buffer);

    int64_t T = p->threads, vec = p->vec;
    int64_t step = vec * T;
    int64_t n_outer = (p->total + step - 1) / step;
    td_var *tid = NULL;
    if (call->scope != TD_SCOPE_THREAD) {
        td_expr *tx = td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32, 0, NULL);
        if (call->scope != TD_SCOPE_CTA)
            tx = td_mod(ir, tx, td_int(ir, T));
        tid = td_ir_let(ir, "tid", TD_I32, tx);
    }
    /* Pair arithmetic unrolls a short outer loop, so that the chunks'
     * loads are in flight together: float16 exp with one block per SM
     * took 1.45x the time of the unrolled loop (float32 lost 2% by it,
     * so its loop stays serial). */
    td_var *s = td_ir_for(ir, "s", td_int(ir, n_outer),
                          p->paired && n_outer <= 16 ? TD_LOOP_UNROLL
                                                     : TD_LOOP_SERIAL);
    td_var *v = NULL;
    if (p->pack == EW_PACK_NONE && !p->wide && vec > 1)
        v = td_ir_for(ir, "vec", td_int(ir, vec), TD_LOOP_UNROLL);
    x.s = s;
    x.tid = tid;
    x.v = v;
    x.step = step;
    x.lane = 0;
    td_expr *f = td_mul(ir, td_var_ref(ir, s), td_int(ir, step));
    if (tid != NULL)
        f = td_add(ir, f, td_mul(ir, td_var_ref(ir, tid), td_int(ir, vec)));
    if (v != NULL)
        f = td_add(ir, f, td_var_ref(ir, v));
    td_var *fused = td_ir_let(ir, "fused", TD_I32, f);
    x.fused = fused;
    bool guard = p->total % step != 0;
    if (guard)
        td_ir_if(ir, td_lt(ir, td_var_ref(ir, fused), td_int(ir, p->total)));
    if (p->pack != EW_PACK_NONE)
        emit_packed(&x);
    else if (p->wide)
        emit_wide(&x, dt);
    else
        store_dst(&x, td__ewise_compute(ir, p->info, &p->o, dt, src_value, &x));
    if (guard)
        td_ir_end_if(ir);
    if (v != NULL)
        td_ir_end_for(ir);
    td_ir_end_for(ir);
    td__scope_barrier(call, ir, EW_DEFAULT_BARRIER);
    return td_ir_status(ir);
}

const td_impl_desc td__variant_ewise_smem = {
    .name = "smem",
    .emit = smem_emit,
    .preds = smem_preds,
    .npreds = sizeof smem_preds / sizeof *smem_preds,
    .plan = smem_plan_fn,
    .plan_size = sizeof(smem_plan),
    .plan_pred = "ewise_smem_valid",
};
