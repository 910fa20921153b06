/*
 * An elementwise variant module written against the public API only:
 * "binary_flat", a CTA-scope lowering of the built-in binary elementwise
 * ops add, sub, mul, fdiv and maximum on shared memory.  Every thread of
 * the block takes the elements tid, tid + T, tid + 2T, ... of buffers
 * that the call covers whole, as if they were flat arrays, with a guard
 * for the last round; a source may also be a literal or a named scalar.
 *
 * It shows what an elementwise module uses that a reduction does not:
 * the call's operands (call->srcs, each a region, a literal or a named
 * scalar), the launch (call->launch[TD_LAUNCH_TX]), a plan worked out
 * once by its predicate and handed to the emitter, value arithmetic
 * (td_value_op), scalar locals (td_ir_let), a guard (td_ir_if) and a
 * barrier (a void intrinsic).  The ops stay the built-in ones, so
 * `tiledispatch kernel` writes a self-checking program for its calls
 * with the built-in reference (docs/plugins.md shows how to run it on
 * the CPU stand-in).
 *
 *   tiledispatch --plugin build/examples/plugins/libewise_binary.so \
 *       --rules examples/rules-with-ewise-binary.yaml \
 *       emit examples/calls/cta_smem_add_bcast.yaml
 *
 * examples/rules-with-ewise-binary.yaml puts it above `smem` for calls of
 * at most 64 elements a thread; nothing else changes.  It is written to
 * show the API, not to beat `smem`, which lowers the same calls with
 * wider accesses where it can.
 */
#include <string.h>

#include "tiledispatch/td_plugin.h"

/* ---- the plan -------------------------------------------------------------- */

/* What the check works out and the emitter uses. */
typedef struct flat_plan {
    td_valop op;       /* the arithmetic of the call's op */
    int64_t n;         /* elements of dst (and of each region source) */
    int64_t threads;   /* threadIdx.x extent */
} flat_plan;

/* The op's arithmetic; false for an op this module does not lower. */
static bool op_valop(const char *name, td_valop *out)
{
    static const struct {
        const char *name;
        td_valop op;
    } ops[] = {
        {"add", TD_VAL_ADD}, {"sub", TD_VAL_SUB},     {"mul", TD_VAL_MUL},
        {"fdiv", TD_VAL_DIV}, {"maximum", TD_VAL_MAX},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(name, ops[i].name) == 0) {
            *out = ops[i].op;
            return true;
        }
    return false;
}

/* True when the region covers its whole buffer, which is in shared
 * memory; so the flat index of an element is the same in every operand. */
static bool whole_shared(const td_call *call, const td_region *r,
                         const char *role, td_reason *why)
{
    if (r->buffer < 0 || r->buffer >= call->nbuffers) {
        td_reason_set(why, "%s is not a buffer region", role);
        return false;
    }
    const td_buffer *b = &call->buffers[r->buffer];
    if (strncmp(b->scope, "shared", 6) != 0) {
        td_reason_set(why, "%s %s is in %s memory, not shared", role,
                      b->name, b->scope);
        return false;
    }
    for (int d = 0; d < r->ndim; d++)
        if (r->start[d] != 0 || r->extent[d] != b->shape[d]) {
            td_reason_set(why, "%s covers part of %s", role, b->name);
            return false;
        }
    return true;
}

/* Every check the emitter relies on, for the op named `opname`; fills
 * *p on success. */
static bool flat_check(const td_call *call, const char *opname, flat_plan *p,
                       td_reason *why)
{
    if (!op_valop(opname, &p->op)) {
        td_reason_set(why, "binary_flat lowers add, sub, mul, fdiv and "
                           "maximum, not %s", opname);
        return false;
    }
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    if (call->scope != TD_SCOPE_CTA || !tx->present || tx->symbolic ||
        tx->extent < 1) {
        td_reason_set(why, "binary_flat needs cta scope and a known "
                           "threadIdx.x extent");
        return false;
    }
    if (call->nsrcs != 2 || call->bias.kind != TD_OPERAND_NONE ||
        call->scale.kind != TD_OPERAND_NONE) {
        td_reason_set(why, "binary_flat takes two sources and no extras");
        return false;
    }
    if (!whole_shared(call, &call->dst, "dst", why))
        return false;
    const td_buffer *dst = td_call_dst_buffer(call);
    p->n = td_region_size(&call->dst);
    p->threads = tx->extent;
    for (int i = 0; i < 2; i++) {
        const td_operand *s = &call->srcs[i];
        if (s->dtype != dst->dtype) {
            td_reason_set(why, "source %d is %s, dst %s", i,
                          td_dtype_name(s->dtype), td_dtype_name(dst->dtype));
            return false;
        }
        if (s->kind != TD_OPERAND_REGION)
            continue; /* a literal or a named scalar */
        if (!whole_shared(call, &s->region, i == 0 ? "source 0" : "source 1",
                          why))
            return false;
        if (td_region_size(&s->region) != p->n) {
            td_reason_set(why, "source %d has %lld elements, dst %lld", i,
                          (long long)td_region_size(&s->region),
                          (long long)p->n);
            return false;
        }
    }
    return true;
}

/* The plan function: dispatch calls it once per candidate, in place of
 * the predicate flat_binary_valid when the rules list it (plan_pred). */
static int flat_plan_fn(const td_call *call, const td_op_desc *op, void *out,
                        void *user, td_reason *why)
{
    (void)user;
    if (op->kind != TD_OP_KIND_ELEMENTWISE) {
        td_reason_set(why, "%s is not an elementwise op", op->name);
        return TD_EDECLINED;
    }
    return flat_check(call, op->name, out, why) ? 0 : TD_EDECLINED;
}

/* ---- the predicates -------------------------------------------------------- */

/* The same checks as a predicate, so a rules entry can list them and
 * `explain` shows their reason.  Predicates are not handed the op: it is
 * the call's op name. */
static bool flat_binary_valid(const td_call *call, const td_args *args,
                              void *user, td_reason *why)
{
    (void)args, (void)user;
    flat_plan p;
    return flat_check(call, call->op, &p, why);
}

static const td_arg_spec per_thread_args[] = {
    {.name = "limit", .type = TD_ARG_INT, .required = true},
};

/* At most `limit` elements a thread: above that another variant does
 * better (this one has no vector accesses). */
static bool elems_per_thread_at_most(const td_call *call, const td_args *args,
                                     void *user, td_reason *why)
{
    (void)user;
    const td_launch_param *tx = &call->launch[TD_LAUNCH_TX];
    int64_t limit = td_args_int(args, "limit", 0);
    if (!tx->present || tx->symbolic || tx->extent < 1) {
        td_reason_set(why, "no known threadIdx.x extent");
        return false;
    }
    int64_t n = td_region_size(&call->dst);
    int64_t per = (n + tx->extent - 1) / tx->extent;
    if (per <= limit)
        return true;
    td_reason_set(why, "%lld elements a thread > %lld", (long long)per,
                  (long long)limit);
    return false;
}

static const td_pred_desc flat_preds[] = {
    {.name = "flat_binary_valid", .fn = flat_binary_valid},
    {
        .name = "elems_per_thread_at_most",
        .args = per_thread_args,
        .nargs = sizeof per_thread_args / sizeof per_thread_args[0],
        .fn = elems_per_thread_at_most,
    },
};

/* ---- the emitter ----------------------------------------------------------- */

/* The index of flat element `at` in buffer b (row-major): the printers
 * take one index per dimension (CUDA flattens them again, TIRx keeps
 * them). */
static int unflatten(td_ir *ir, const td_buffer *b, td_expr *at,
                     td_expr **idx)
{
    int64_t inner = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        td_expr *q = inner == 1 ? at : td_div(ir, at, td_int(ir, inner));
        idx[d] = d == 0 ? q : td_mod(ir, q, td_int(ir, b->shape[d]));
        inner *= b->shape[d];
    }
    return b->ndim;
}

/* Source i at flat element `at`: a load, or the scalar itself. */
static td_expr *operand(td_ir *ir, const td_call *call, int i,
                        td_ir_buf *const *bufs, td_expr *at)
{
    const td_operand *s = &call->srcs[i];
    td_expr *idx[TD_MAX_RANK];
    switch (s->kind) {
    case TD_OPERAND_REGION: {
        int n = unflatten(ir, &call->buffers[s->region.buffer], at, idx);
        return td_load(ir, bufs[i], n, idx);
    }
    case TD_OPERAND_SCALAR:
        return td_param(ir, s->name, s->dtype); /* a kernel parameter */
    case TD_OPERAND_LITERAL:
        if (td_dtype_is_float(s->dtype))
            return td_const_f(ir, s->dtype, s->value);
        if (td_dtype_is_signed(s->dtype))
            return td_const_i(ir, s->dtype, s->ivalue);
        return td_const_u(ir, s->dtype, (uint64_t)s->ivalue);
    default:
        return NULL; /* the plan refused it; NULL makes td_ir_status fail */
    }
}

/* A buffer of the call, declared in the IR with its shape. */
static td_ir_buf *declare(td_ir *ir, const td_buffer *b)
{
    return td_ir_buffer(ir, b->name, b->dtype, b->scope, b->ndim, b->shape);
}

static int emit_flat(const td_call *call, const td_op_desc *op,
                     const void *plan, td_ir *ir, void *user, td_reason *why)
{
    (void)op, (void)user, (void)why;
    const flat_plan *p = plan; /* never NULL: the module has a plan */
    const td_buffer *dst = td_call_dst_buffer(call);
    td_ir_buf *d = declare(ir, dst);
    td_ir_buf *s[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        if (call->srcs[i].kind == TD_OPERAND_REGION)
            s[i] = declare(ir, &call->buffers[call->srcs[i].region.buffer]);

    /* int tid = (int)threadIdx.x;  (a value intrinsic: its dtype is the
     * result's, int32 for indices) */
    td_var *tid = td_ir_let(ir, "tid", TD_I32,
                            td_intrinsic(ir, TD_INTRIN_THREAD_IDX_X, TD_I32,
                                         0, NULL));
    int64_t rounds = (p->n + p->threads - 1) / p->threads;
    td_var *k = td_ir_for(ir, "k", td_int(ir, rounds), TD_LOOP_SERIAL);
    td_var *i = td_ir_let(ir, "i", TD_I32,
                          td_add(ir, td_mul(ir, td_var_ref(ir, k),
                                            td_int(ir, p->threads)),
                                 td_var_ref(ir, tid)));
    bool ragged = p->n % p->threads != 0;
    if (ragged) /* only the last round runs past the end */
        td_ir_if(ir, td_lt(ir, td_var_ref(ir, i), td_int(ir, p->n)));
    td_expr *a = operand(ir, call, 0, s, td_var_ref(ir, i));
    td_expr *b = operand(ir, call, 1, s, td_var_ref(ir, i));
    td_expr *at[TD_MAX_RANK];
    int n = unflatten(ir, dst, td_var_ref(ir, i), at);
    td_ir_store(ir, d, n, at, td_value_op(ir, p->op, a, b));
    if (ragged)
        td_ir_end_if(ir);
    td_ir_end_for(ir);
    /* __syncthreads(): a void intrinsic, evaluated for its effect; it
     * takes no arguments and, by convention, the dtype int32. */
    td_ir_eval(ir, td_intrinsic(ir, TD_INTRIN_SYNCTHREADS, TD_I32, 0, NULL));
    return td_ir_status(ir);
}

static const td_impl_desc binary_flat_impl = {
    .name = "binary_flat",
    .emit = emit_flat,
    .preds = flat_preds,
    .npreds = sizeof flat_preds / sizeof flat_preds[0],
    .plan = flat_plan_fn,
    .plan_size = sizeof(flat_plan),
    .plan_pred = "flat_binary_valid",
};

/* ---- the plugin entry points ----------------------------------------------- */

TD_PLUGIN_ABI;

TD_PLUGIN_EXPORT int td_plugin_init(td_registry *reg)
{
    return td_register_impl(reg, &binary_flat_impl);
}
