/*
 * The elementwise ops (upstream elementwise/ops/): the op descriptors made
 * from the rows of ewise_table.h, each op's operand check (upstream's
 * parse, run by the registry before any variant through
 * td_op_desc.check), the checks both variants share and the scalar compute
 * of the fallback path.  Public headers only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ewise.h"
#include "ewise_table.h"

#define EW_MAX_THREADS 1024
#define EW_MAX_BARRIER 15
#define EW_INDEX_MAX INT32_MAX

static bool ewise_check(const td_call *call, const td_op_desc *op,
                        td_pos *where, td_reason *why);

/* Each row of ewise_table.h becomes the op's description (its ew_info)
 * and its descriptor, which points at the description by name. */
#define EW_INFO(nm, ...) static const ew_info ew_info_##nm = {__VA_ARGS__};
TD_EWISE_OPS(EW_INFO)
#undef EW_INFO

#define EW_DESC(nm, ...)                                                     \
    {.name = #nm, .kind = TD_OP_KIND_ELEMENTWISE, .check = ewise_check,      \
     .data = &ew_info_##nm},
const td_op_desc td__ewise_ops[] = {TD_EWISE_OPS(EW_DESC)};
#undef EW_DESC
const size_t td__ewise_ops_count = sizeof td__ewise_ops / sizeof *td__ewise_ops;

const td_op_desc *td__ewise_op_named(const char *name)
{
    for (size_t i = 0; i < td__ewise_ops_count; i++)
        if (strncmp(td__ewise_ops[i].name, name, TD_NAME_MAX) == 0)
            return &td__ewise_ops[i];
    return NULL;
}

const ew_info *td__ewise_info(const td_op_desc *op)
{
    if (op == NULL || op->kind != TD_OP_KIND_ELEMENTWISE)
        return NULL;
    for (size_t i = 0; i < td__ewise_ops_count; i++)
        if (op->data == td__ewise_ops[i].data)
            return op->data;
    return NULL;
}

/* ---- small helpers ------------------------------------------------------ */

static size_t name_len(const char *f)
{
    return strnlen(f, TD_NAME_MAX);
}

const td_buffer *td__ewise_buffer(const td_call *call, const td_region *r)
{
    if (r->buffer < 0 || r->buffer >= call->nbuffers ||
        r->buffer >= TD_MAX_BUFFERS)
        return NULL;
    const td_buffer *b = &call->buffers[r->buffer];
    if (r->ndim != b->ndim || r->ndim < 1 || r->ndim > TD_MAX_RANK)
        return NULL;
    return b;
}

int64_t td__ewise_elems(const td_region *r)
{
    int64_t n = 1;
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++) {
        if (r->extent[d] <= 0)
            return 0;
        if (n > INT64_MAX / r->extent[d])
            return INT64_MAX;
        n *= r->extent[d];
    }
    return n;
}

static td_pos pos_or(td_pos p, td_pos dflt)
{
    return p.line > 0 ? p : dflt;
}

/* ---- parse: upstream's per-op parse and this project's arity checks ------ */

static bool region_ok(const td_call *call, const td_operand *o,
                      const char *role, td_pos *where, td_pos dflt,
                      td_reason *why)
{
    if (td__ewise_buffer(call, &o->region) == NULL) {
        if (where != NULL)
            *where = pos_or(o->pos, dflt);
        td_reason_set(why, "malformed call: %s region does not name a buffer",
                      role);
        return false;
    }
    return true;
}

bool td__ewise_parse(const td_call *call, const td_op_desc *op,
                     ew_operands *out, td_pos *where, td_reason *why)
{
    const ew_info *info = td__ewise_info(op);
    memset(out, 0, sizeof *out);
    if (info == NULL) {
        td_reason_set(why, "op %s is not an elementwise op",
                      op != NULL && op->name != NULL ? op->name : "?");
        return false;
    }
    const char *name = op->name;
    int n = call->nsrcs;
    td_pos ps = pos_or(call->pos_srcs, call->pos_op);
    if (n < 0 || n > TD_MAX_SRCS) {
        td_reason_set(why, "malformed call: %d sources", n);
        return false;
    }
    if (td__ewise_buffer(call, &call->dst) == NULL) {
        td_reason_set(why, "malformed call: dst region does not name a buffer");
        return false;
    }
    for (int i = 0; i < n; i++) {
        const td_operand *s = &call->srcs[i];
        if (s->kind != TD_OPERAND_REGION && s->kind != TD_OPERAND_LITERAL &&
            s->kind != TD_OPERAND_SCALAR) {
            if (where != NULL)
                *where = pos_or(s->pos, ps);
            td_reason_set(why, "malformed call: source %d is absent", i);
            return false;
        }
        char role[32];
        snprintf(role, sizeof role, "source %d", i);
        if (s->kind == TD_OPERAND_REGION &&
            !region_ok(call, s, role, where, ps, why))
            return false;
    }
    bool has_extras = call->bias.kind != TD_OPERAND_NONE ||
                      call->scale.kind != TD_OPERAND_NONE;
    if (has_extras && !info->extras) {
        if (where != NULL)
            *where = pos_or(call->bias.kind != TD_OPERAND_NONE
                                ? call->bias.pos
                                : call->scale.pos,
                            pos_or(call->pos_extras, call->pos_op));
        td_reason_set(why,
                      "%s takes no extras (bias and scale apply to sqrt, exp, "
                      "exp2 and log2)",
                      name);
        return false;
    }

    switch (info->kind) {
    case EW_KIND_UNARY: {
        int lo = info->src_optional ? 0 : 1;
        if (n < lo || n > 1) {
            if (where != NULL)
                *where = ps;
            if (lo == 0)
                td_reason_set(why, "%s takes 0 or 1 sources, got %d", name, n);
            else
                td_reason_set(why, "%s takes 1 source, got %d", name, n);
            return false;
        }
        if (n == 0) {
            /* upstream: no src means src = dst (in place) */
            out->src[0].kind = TD_OPERAND_REGION;
            out->src[0].region = call->dst;
            out->src[0].dtype = call->buffers[call->dst.buffer].dtype;
        } else {
            if (call->srcs[0].kind != TD_OPERAND_REGION && !info->src_scalar_ok) {
                if (where != NULL)
                    *where = pos_or(call->srcs[0].pos, ps);
                td_reason_set(why, "%s src must be a buffer region", name);
                return false;
            }
            out->src[0] = call->srcs[0];
        }
        out->n = 1;
        if (call->scale.kind != TD_OPERAND_NONE) {
            if (call->scale.kind == TD_OPERAND_REGION) {
                if (where != NULL)
                    *where = pos_or(call->scale.pos, call->pos_extras);
                td_reason_set(why, "scale must be a scalar (a literal or a "
                                   "named scalar)");
                return false;
            }
            out->scale = call->scale;
        }
        if (call->bias.kind == TD_OPERAND_REGION) {
            if (!region_ok(call, &call->bias, "bias", where, call->pos_extras,
                           why))
                return false;
            out->src[out->n++] = call->bias;
            out->bias_region = true;
        } else if (call->bias.kind != TD_OPERAND_NONE) {
            out->bias = call->bias;
        }
        break;
    }
    case EW_KIND_BINARY: {
        if (n != 2) {
            if (where != NULL)
                *where = ps;
            td_reason_set(why, "%s takes 2 sources, got %d", name, n);
            return false;
        }
        td_operand a = call->srcs[0], b = call->srcs[1];
        bool as = a.kind != TD_OPERAND_REGION, bs = b.kind != TD_OPERAND_REGION;
        if (as && bs) {
            if (where != NULL)
                *where = ps;
            td_reason_set(why, "both inputs are constants");
            return false;
        }
        if (as) {
            if (!info->commutative) {
                if (where != NULL)
                    *where = pos_or(a.pos, ps);
                td_reason_set(why,
                              "non-commutative op %s cannot have constant lhs",
                              name);
                return false;
            }
            td_operand t = a;
            a = b;
            b = t;
            bs = true;
        }
        if (!bs && td__ewise_elems(&a.region) < td__ewise_elems(&b.region)) {
            if (!info->commutative) {
                if (where != NULL)
                    *where = pos_or(a.pos, ps);
                td_reason_set(why,
                              "non-commutative op %s cannot swap to broadcast",
                              name);
                return false;
            }
            td_operand t = a;
            a = b;
            b = t;
        }
        out->src[0] = a;
        out->src[1] = b;
        out->n = 2;
        break;
    }
    case EW_KIND_CAST:
        if (n != 1) {
            if (where != NULL)
                *where = ps;
            td_reason_set(why, "cast takes 1 source, got %d", n);
            return false;
        }
        if (call->srcs[0].kind != TD_OPERAND_REGION) {
            if (where != NULL)
                *where = pos_or(call->srcs[0].pos, ps);
            td_reason_set(why, "cast src must be a buffer region");
            return false;
        }
        out->src[0] = call->srcs[0];
        out->n = 1;
        break;
    case EW_KIND_FMA:
        if (n != 3) {
            if (where != NULL)
                *where = ps;
            td_reason_set(why, "fma takes 3 sources (a*b + c), got %d", n);
            return false;
        }
        if (call->srcs[0].kind != TD_OPERAND_REGION) {
            if (where != NULL)
                *where = pos_or(call->srcs[0].pos, ps);
            td_reason_set(why, "fma src a must be a buffer region");
            return false;
        }
        for (int i = 0; i < 3; i++)
            out->src[i] = call->srcs[i];
        out->n = 3;
        break;
    }

    /* Region operands carry their buffer's dtype. */
    for (int i = 0; i < out->n; i++)
        if (out->src[i].kind == TD_OPERAND_REGION)
            out->src[i].dtype = call->buffers[out->src[i].region.buffer].dtype;

    /* upstream compute_dtype_of: the widest of dst and the sources (region
     * or scalar), dst winning ties, then the sources in order. */
    td_dtype c = call->buffers[call->dst.buffer].dtype;
    for (int i = 0; i < out->n; i++)
        if (td_dtype_bits(out->src[i].dtype) > td_dtype_bits(c))
            c = out->src[i].dtype;
    out->compute = c;
    return true;
}

static bool ewise_check(const td_call *call, const td_op_desc *op,
                        td_pos *where, td_reason *why)
{
    ew_operands o;
    return td__ewise_parse(call, op, &o, where, why);
}

/* ---- the checks both variants share ------------------------------------ */

/* upstream _all_threads_active, in the call model's terms, plus a 1-D
 * thread launch (upstream's smem emit asserts it) and whole warps /
 * warpgroups (a partial one would never complete its barrier). */
static bool threads_ok(const td_call *call, td_reason *why)
{
    if (call->scope == TD_SCOPE_THREAD)
        return true;
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    if (!tx->present) {
        td_reason_set(why,
                      "%s scope: no threadIdx.x in the call's launch (add "
                      "`launch: {threadIdx.x: N}`)",
                      td_exec_scope_name(call->scope));
        return false;
    }
    if (tx->symbolic) {
        td_reason_set(why, "non-static threadIdx.x extent: %.*s",
                      (int)name_len(tx->symbol), tx->symbol);
        return false;
    }
    if (tx->extent < 1 || tx->extent > EW_MAX_THREADS) {
        td_reason_set(why, "threadIdx.x extent %" PRId64 " out of range [1, %d]",
                      tx->extent, EW_MAX_THREADS);
        return false;
    }
    if (tx->extent < 32) {
        td_reason_set(why, "laneid narrowed to [0, %" PRId64 ") vs full [0, 32)",
                      tx->extent);
        return false;
    }
    if (call->scope == TD_SCOPE_WARPGROUP && tx->extent < 128) {
        td_reason_set(why,
                      "wid_in_wg narrowed to [0, %" PRId64 ") vs full [0, 4)",
                      tx->extent / 32);
        return false;
    }
    if (!td__whole_scope_units(call, "elementwise", why))
        return false;
    if (call->launch[TD_LAUNCH_TY].present || call->launch[TD_LAUNCH_TZ].present) {
        td_reason_set(why, "multi-dimensional thread binding not supported "
                           "for elementwise ops");
        return false;
    }
    return true;
}

/* The `barrier_id` config entry, as the `shared` reduction reads it. */
static bool barrier_ok(const td_call *call, td_reason *why)
{
    if (call->scope != TD_SCOPE_WARPGROUP)
        return true;
    const td_config_entry *e = td_call_config(call, "barrier_id");
    if (e != NULL && e->kind != TD_VALUE_INT) {
        td_reason_set(why, "barrier_id must be an integer");
        return false;
    }
    int64_t id = e != NULL ? e->i : EW_DEFAULT_BARRIER;
    int64_t n = td__warpgroups_per_block(call);
    if (id < 0 || id + n - 1 > EW_MAX_BARRIER) {
        td_reason_set(why,
                      "barrier ids %" PRId64 "..%" PRId64 " for %" PRId64
                      " warpgroups outside [0, %d] (set barrier_id)",
                      id, id + n - 1, n, EW_MAX_BARRIER);
        return false;
    }
    return true;
}

static bool scope_matches(const td_buffer *b, bool shared)
{
    if (shared)
        return strncmp(b->scope, "shared", 6) == 0;
    return strncmp(b->scope, "local", TD_NAME_MAX) == 0;
}

static bool extras_ok(const ew_operands *o, td_reason *why)
{
    if (o->scale.kind != TD_OPERAND_NONE && o->scale.dtype != o->compute) {
        td_reason_set(why, "scale dtype %s != compute dtype %s",
                      td_dtype_name(o->scale.dtype), td_dtype_name(o->compute));
        return false;
    }
    if (o->bias.kind != TD_OPERAND_NONE && o->bias.dtype != o->compute) {
        td_reason_set(why, "bias_const dtype %s != compute dtype %s",
                      td_dtype_name(o->bias.dtype), td_dtype_name(o->compute));
        return false;
    }
    return true;
}

bool td__ewise_common(const td_call *call, const td_op_desc *op, bool shared,
                      ew_operands *o, td_reason *why)
{
    switch (call->scope) {
    case TD_SCOPE_THREAD:
    case TD_SCOPE_WARP:
    case TD_SCOPE_WARPGROUP:
    case TD_SCOPE_CTA:
        break;
    default:
        td_reason_set(why, "unsupported scope %s",
                      td_exec_scope_name(call->scope));
        return false;
    }
    if (!threads_ok(call, why))
        return false;
    if (!td__ewise_parse(call, op, o, NULL, why))
        return false;
    const td_buffer *db = &call->buffers[call->dst.buffer];
    if (!scope_matches(db, shared)) {
        td_reason_set(why, "operand scope %.*s != %s",
                      (int)name_len(db->scope), db->scope,
                      shared ? "shared*" : "local");
        return false;
    }
    for (int i = 0; i < o->n; i++) {
        if (o->src[i].kind != TD_OPERAND_REGION)
            continue;
        const td_buffer *b = &call->buffers[o->src[i].region.buffer];
        if (!scope_matches(b, shared)) {
            td_reason_set(why, "operand scope %.*s != %s",
                          (int)name_len(b->scope), b->scope,
                          shared ? "shared*" : "local");
            return false;
        }
    }
    if (!extras_ok(o, why))
        return false;
    const ew_info *info = td__ewise_info(op);
    /* float8 stores and converts (zero, fill, cast) but has no CUDA
     * arithmetic; an op computing in a wider dtype converts its float8
     * operands to it. */
    if (td_dtype_is_float8(o->compute) && info->fn != EW_ZERO &&
        info->fn != EW_FILL && info->fn != EW_CAST) {
        td_reason_set(why, "%s computes in %s, which has no arithmetic in "
                      "CUDA (cast the operands to float16 or float32 first)",
                      op->name, td_dtype_name(o->compute));
        return false;
    }
    if (info->float_only && !td_dtype_is_float(o->compute)) {
        td_reason_set(why, "%s needs a floating-point compute dtype, got %s",
                      op->name, td_dtype_name(o->compute));
        return false;
    }
    return true;
}

bool td__ewise_shapes(const td_call *call, const ew_operands *o,
                      td_reason *why)
{
    const td_region *d = &call->dst;
    for (int i = 0; i < o->n; i++) {
        if (o->src[i].kind != TD_OPERAND_REGION)
            continue;
        const td_region *r = &o->src[i].region;
        int pad = d->ndim - r->ndim;
        if (pad < 0) {
            td_reason_set(why, "shape incompat: op rank %d > anchor rank %d",
                          r->ndim, d->ndim);
            return false;
        }
        for (int k = 0; k < r->ndim; k++) {
            int64_t e = r->extent[k], a = d->extent[pad + k];
            if (e != a && e != 1) {
                td_reason_set(why,
                              "shape incompat: dim %d: op extent %" PRId64
                              " vs anchor %" PRId64 " (need equal or 1)",
                              k, e, a);
                return false;
            }
        }
    }
    return true;
}

static bool in_bounds(const td_call *call, const td_region *r,
                      td_reason *why)
{
    const td_buffer *b = &call->buffers[r->buffer];
    int64_t elems = 1;
    for (int d = 0; d < b->ndim; d++) {
        if (r->extent[d] < 1 || r->start[d] < 0 || b->shape[d] < 1 ||
            r->start[d] > b->shape[d] - r->extent[d]) {
            td_reason_set(why, "region out of bounds for %.*s",
                          (int)name_len(b->name), b->name);
            return false;
        }
        if (elems > EW_INDEX_MAX / b->shape[d]) {
            td_reason_set(why, "buffer %.*s is too large for 32-bit indices",
                          (int)name_len(b->name), b->name);
            return false;
        }
        elems *= b->shape[d];
    }
    return true;
}

static bool same_region(const td_region *a, const td_region *b)
{
    if (a->buffer != b->buffer || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->start[d] != b->start[d] || a->extent[d] != b->extent[d])
            return false;
    return true;
}

static bool overlap(const td_region *a, const td_region *b)
{
    if (a->buffer != b->buffer || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->start[d] + a->extent[d] <= b->start[d] ||
            b->start[d] + b->extent[d] <= a->start[d])
            return false;
    return true;
}

bool td__ewise_limits(const td_call *call, const ew_operands *o,
                      const char **rnd, td_reason *why)
{
    if (!in_bounds(call, &call->dst, why))
        return false;
    for (int i = 0; i < o->n; i++) {
        if (o->src[i].kind != TD_OPERAND_REGION)
            continue;
        const td_region *r = &o->src[i].region;
        if (!in_bounds(call, r, why))
            return false;
        /* In place (the same region) reads each element before writing
         * it; any other overlap would read values already overwritten. */
        if (!same_region(r, &call->dst) && overlap(r, &call->dst)) {
            const td_buffer *b = &call->buffers[r->buffer];
            td_reason_set(why,
                          "dst and a source overlap in %.*s without being the "
                          "same region; the result would depend on the order "
                          "of the writes",
                          (int)name_len(b->name), b->name);
            return false;
        }
    }
    if (td__ewise_elems(&call->dst) > EW_INDEX_MAX) {
        td_reason_set(why, "dst region too large for 32-bit loop indices");
        return false;
    }
    const td_config_entry *e = td_call_config(call, "rounding_mode");
    const char *r = "rn";
    if (e != NULL) {
        static const char *const modes[] = {"rn", "rz", "rm", "rp"};
        r = NULL;
        for (size_t i = 0; e->kind == TD_VALUE_STRING && i < 4; i++)
            if (strncmp(e->s, modes[i], TD_NAME_MAX) == 0)
                r = modes[i];
        if (r == NULL) {
            td_reason_set(why, "rounding_mode must be one of rn, rz, rm, rp");
            return false;
        }
    }
    if (rnd != NULL)
        *rnd = r;
    return barrier_ok(call, why);
}

/* ---- compute ------------------------------------------------------------ */

td_expr *td__ewise_scalar(td_ir *ir, const td_operand *o)
{
    if (o->kind == TD_OPERAND_SCALAR) {
        char nm[TD_NAME_MAX];
        snprintf(nm, sizeof nm, "%.*s", (int)name_len(o->name), o->name);
        return td_param(ir, nm, o->dtype);
    }
    if (td_dtype_is_float(o->dtype))
        return td_const_f(ir, o->dtype, o->value);
    if (td_dtype_is_signed(o->dtype))
        return td_const_i(ir, o->dtype, o->ivalue);
    return td_const_u(ir, o->dtype, (uint64_t)o->ivalue);
}

static td_expr *konst(td_ir *ir, td_dtype t, double v)
{
    if (td_dtype_is_float(t))
        return td_const_f(ir, t, v);
    if (td_dtype_is_signed(t))
        return td_const_i(ir, t, (int64_t)v);
    return td_const_u(ir, t, (uint64_t)v);
}

td_expr *td__ewise_compute(td_ir *ir, const ew_info *info,
                           const ew_operands *o, td_dtype dst_dtype,
                           ew_src_fn src, void *ctx)
{
    td_dtype c = o->compute;
#define IN(i) td_cast(ir, c, src(ctx, (i)))
    td_expr *v = NULL;
    switch (info->fn) {
    case EW_ZERO:
        return konst(ir, dst_dtype, 0.0);
    case EW_FILL:
    case EW_CAST:
        return td_cast(ir, dst_dtype, src(ctx, 0));
    case EW_RECIPROCAL:
        v = td_value_op(ir, TD_VAL_DIV, konst(ir, c, 1.0), IN(0));
        break;
    case EW_SQRT:
    case EW_EXP:
    case EW_EXP2:
    case EW_LOG2: {
        td_expr *x = IN(0);
        if (o->scale.kind != TD_OPERAND_NONE)
            x = td_value_op(ir, TD_VAL_MUL, x,
                            td_cast(ir, c, td__ewise_scalar(ir, &o->scale)));
        if (o->bias_region)
            x = td_value_op(ir, TD_VAL_ADD, x, IN(1));
        else if (o->bias.kind != TD_OPERAND_NONE)
            x = td_value_op(ir, TD_VAL_ADD, x,
                            td_cast(ir, c, td__ewise_scalar(ir, &o->bias)));
        td_mathfn f = info->fn == EW_SQRT   ? TD_MATH_SQRT
                      : info->fn == EW_EXP  ? TD_MATH_EXP
                      : info->fn == EW_EXP2 ? TD_MATH_EXP2
                                            : TD_MATH_LOG2;
        v = td_math(ir, f, x);
        break;
    }
    case EW_SILU:
        /* x / (1 + exp(0 - x)), as upstream writes it */
        v = td_value_op(
            ir, TD_VAL_DIV, IN(0),
            td_value_op(ir, TD_VAL_ADD, konst(ir, c, 1.0),
                        td_math(ir, TD_MATH_EXP,
                                td_value_op(ir, TD_VAL_SUB, konst(ir, c, 0.0),
                                            IN(0)))));
        break;
    case EW_ADD:
        v = td_value_op(ir, TD_VAL_ADD, IN(0), IN(1));
        break;
    case EW_SUB:
        v = td_value_op(ir, TD_VAL_SUB, IN(0), IN(1));
        break;
    case EW_MUL:
        v = td_value_op(ir, TD_VAL_MUL, IN(0), IN(1));
        break;
    case EW_FDIV:
        v = td_value_op(ir, TD_VAL_DIV, IN(0), IN(1));
        break;
    case EW_MAXIMUM:
        v = td_value_op(ir, TD_VAL_MAX, IN(0), IN(1));
        break;
    case EW_FMA:
        v = td_value_op(ir, TD_VAL_ADD,
                        td_value_op(ir, TD_VAL_MUL, IN(0), IN(1)), IN(2));
        break;
    }
#undef IN
    return td_cast(ir, dst_dtype, v);
}

/* upstream's applies() of binary_f32x2 / fma_f32x2 / cast_vec2. */
bool td__ewise_pack_applies(const td_call *call, const ew_info *info,
                            const ew_operands *o)
{
    td_dtype dt = call->buffers[call->dst.buffer].dtype;
    switch (info->pack) {
    case EW_PACK_F32X2:
        if (dt != TD_F32 || call->sm_version < 100)
            return false;
        for (int i = 0; i < o->n; i++)
            if (o->src[i].dtype != TD_F32)
                return false;
        return true;
    case EW_PACK_CAST2: {
        td_dtype s = o->src[0].dtype;
        return (s == TD_F32 && (dt == TD_F16 || dt == TD_BF16)) ||
               (dt == TD_F32 && (s == TD_F16 || s == TD_BF16));
    }
    default:
        return false;
    }
}

void td__ewise_emit_f32x2(td_ir *ir, const ew_info *info,
                          const ew_operands *o, const char *rnd,
                          ew_src_fn src, ew_store_fn store, void *ctx,
                          int *lane)
{
    static const char *const names[] = {"pa", "pb", "pc"};
    td_expr *args[3];
    for (int i = 0; i < o->n && i < 3; i++) {
        td_expr *l[2];
        for (int k = 0; k < 2; k++) {
            *lane = k;
            l[k] = src(ctx, i);
        }
        td_var *v = td_ir_let(ir, names[i], TD_U64,
                              td_intrinsic(ir, TD_INTRIN_PTX_PACK_F32X2, TD_U64,
                                           2, l));
        args[i] = td_var_ref(ir, v);
    }
    td_var *r = td_ir_let(ir, "pr", TD_U64,
                          td_ptx_f32x2(ir, info->ptx, rnd, o->n, args));
    for (int k = 0; k < 2; k++) {
        *lane = k;
        td_expr *a[] = {td_var_ref(ir, r)};
        store(ctx, td_intrinsic(ir, k == 0 ? TD_INTRIN_PTX_UNPACK_LO
                                           : TD_INTRIN_PTX_UNPACK_HI,
                                TD_F32, 1, a));
    }
    *lane = 0;
}
