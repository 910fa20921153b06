/*
 * Self-checking programs for reductions (sum, max, min: the rows of
 * variants/reduce_ops.h): the src and the dst buffer are staged, the
 * reference reduces each dst element's source elements in double
 * precision (fragments/reduce_reference.cuh, the op picked by its row's
 * TD_OP code) and allows atol * max(1, sum |terms|) for float sums, or with
 * --data random 2 n u sum|terms| + n tiny, and nothing for max / min and
 * integers.  config kernel_specials puts NaN and infinities among the
 * source values.  The driver reaches this file through td__kp_reduce.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kp.h"
#include "kp_fragments.h"
#include "model.h"
#include "reduce_ops.h"
#include "tiledispatch.h"

/* The reference's view of the call. */
typedef struct red_plan {
    const red_info *row;
    int nreduce, reduce[TD_MAX_RANK];
    int nspatial, spatial[TD_MAX_RANK];
    int64_t red_len;
    int64_t spa_len;
    bool bcast;         /* dst keeps the src rank: reduced dims broadcast */
    double atol;
    bool specials;      /* NaN and infinities among the source values */
} red_plan;

static red_plan *red_of(const kp_plan *p)
{
    return (red_plan *)p->fam_data;
}

/* A reduction stages its src and its dst buffer. */
static int red_buffers(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *c = p->call;
    const td_buffer *src = td__region_buffer(c, &c->src);
    const td_buffer *dst = td__region_buffer(c, &c->dst);
    if (src == NULL || dst == NULL)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "%s region does not name a buffer",
                           src == NULL ? "src" : "dst");
    p->nbufs = 0;
    td__kp_add_buf(p, src, true, false);
    td__kp_add_buf(p, dst, false, true);
    return td__kp_check_bufs(p, ir, diag);
}

/* The reference's view of the reduction: reduced and spatial dims, and how
 * a dst element finds its spatial position. */
static int red_axes(kp_plan *p, red_plan *r, td_diag *diag)
{
    const td_call *c = p->call;
    char why[TD_REASON_MAX];
    why[0] = '\0';
    if (td_call_axes(c, r->reduce, &r->nreduce, r->spatial, &r->nspatial, why,
                     sizeof why) != 0)
        return td__kp_fail(diag, c, TD_EINVAL, "%s",
                           why[0] != '\0' ? why : "invalid reduce axes");
    if (c->src.ndim < 1 || c->src.ndim > TD_MAX_RANK || c->dst.ndim < 1 ||
        c->dst.ndim > TD_MAX_RANK ||
        r->nreduce + r->nspatial != c->src.ndim)
        return td__kp_fail(diag, c, TD_EINVAL, "malformed regions");
    r->red_len = 1;
    r->spa_len = 1;
    for (int i = 0; i < r->nreduce; i++)
        r->red_len = td__mul_sat(r->red_len, c->src.extent[r->reduce[i]]);
    for (int i = 0; i < r->nspatial; i++)
        r->spa_len = td__mul_sat(r->spa_len, c->src.extent[r->spatial[i]]);
    int64_t dst_len = td__region_elems(&c->dst);
    /* Same rank with matching spatial extents: the dst keeps the reduced
     * dims (extent 1, or a lane extent a warp view replicates across), and
     * the result is broadcast along them.  Otherwise the dst region, read
     * row-major, lists the spatial positions in order. */
    r->bcast = c->dst.ndim == c->src.ndim;
    for (int i = 0; r->bcast && i < r->nspatial; i++) {
        int d = r->spatial[i];
        if (c->dst.extent[d] != c->src.extent[d])
            r->bcast = false;
    }
    if (!r->bcast && dst_len != r->spa_len)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "dst region holds %" PRId64
                           " elements, the reduction produces %" PRId64,
                           dst_len, r->spa_len);
    return 0;
}

static double red_atol(const kp_plan *p, td_dtype t)
{
    switch (t) {
    case TD_F32:
        /* Packed sums (ftz) and shuffle trees reassociate: upstream uses
         * 1e-4 for them. */
        if (strcmp(p->variant, "packed_add_sum") == 0 ||
            p->call->scope != TD_SCOPE_THREAD)
            return 1e-4;
        return 1e-5;
    case TD_F64: return 1e-9;
    case TD_F16:
    case TD_BF16: return 1e-1;
    default: return 0.0;
    }
}

static void red_int_list(td_buf *o, const int *v, int n)
{
    td__buf_puts(o, "{");
    for (int i = 0; i < n; i++)
        td__buf_printf(o, "%s%d", i ? ", " : "", v[i]);
    if (n == 0)
        td__buf_puts(o, "0");
    td__buf_puts(o, "}");
}

/* Value range of the random integers of dtype t: small enough that no
 * partial sum of the reduction overflows. */
static void red_int_range(const red_plan *r, td_dtype t, int64_t *lo,
                          int64_t *hi)
{
    int bits = td_dtype_bits(t);
    bool sgn = td_dtype_is_signed(t);
    int64_t lim = bits >= 63 ? INT64_MAX : (((int64_t)1 << (sgn ? bits - 1 : bits)) - 1);
    int64_t a = 100;
    if (r->row->grows) {
        int64_t terms = td__mul_sat(r->red_len, 1) + 1;
        int64_t q = lim / terms;
        if (q < a)
            a = q;
    }
    if (a > lim)
        a = lim;
    if (a < 1)
        a = 1;
    *lo = sgn ? -a : 0;
    *hi = a;
}

/* An input value: exact k/64 or normal for floats, small integers; with
 * specials, about 1 source value in 64 each is NaN, +inf, -inf. */
static void red_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    const red_plan *r = red_of(p);
    td_dtype t = kb->b->dtype;
    bool special = r->specials && kb->is_src;
    if (special)
        td__buf_puts(o, "td_special(");
    if (td_dtype_is_float(t)) {
        td__buf_puts(o, "td_data_random ? td_rand_normal() : td_rand_float()");
    } else {
        int64_t lo, hi;
        red_int_range(r, t, &lo, &hi);
        td__buf_printf(o, "td_rand_int(%" PRId64 "LL, %" PRId64 "LL)", lo, hi);
    }
    if (special)
        td__buf_puts(o, ")");
}

/* The unit roundoff (2^-p, p the significand bits) and the smallest normal
 * of a float dtype; 0 for the others. */
static void red_float_limits(td_dtype t, double *u, double *tiny)
{
    switch (t) {
    case TD_F64: *u = 0x1p-53; *tiny = 0x1p-1022; break;
    case TD_F32: *u = 0x1p-24; *tiny = 0x1p-126; break;
    case TD_F16: *u = 0x1p-11; *tiny = 0x1p-14; break;
    case TD_BF16: *u = 0x1p-8; *tiny = 0x1p-126; break;
    default: *u = 0.0; *tiny = 0.0; break;
    }
}

/* The constants and tables td_reference reads. */
static void red_tables(td_buf *o, const kp_plan *p)
{
    const red_plan *r = red_of(p);
    const td_call *c = p->call;
    const td_buffer *sb = td__region_buffer(c, &c->src);
    const td_buffer *db = td__region_buffer(c, &c->dst);
    td__buf_printf(o, "#define TD_SRC_NDIM %d\n#define TD_DST_NDIM %d\n",
                   c->src.ndim, c->dst.ndim);
    int64_t dst_elems = 1;
    for (int d = 0; d < db->ndim; d++)
        dst_elems *= db->shape[d];
    td__buf_printf(o, "#define TD_DST_ELEMS %" PRId64 "LL\n", dst_elems);
    td__buf_printf(o, "#define TD_NRED %d\n#define TD_NSPA %d\n", r->nreduce,
                   r->nspatial);
    td__buf_printf(o, "#define TD_RED_LEN %" PRId64 "LL\n", r->red_len);
    td__buf_printf(o, "#define TD_BCAST %d\n#define TD_ACCUM %d\n",
                   r->bcast ? 1 : 0, c->accum ? 1 : 0);
    /* The row's code selects its formula in td_reference; the comment
     * lists every row's. */
    td__buf_printf(o, "#define TD_OP %d /* ", r->row->ref);
    for (size_t i = 0; i < td__reduce_ops_count; i++) {
        const red_info *row = td__reduce_ops[i].data;
        td__buf_printf(o, "%s%d %s", i ? ", " : "", row->ref, row->name);
    }
    td__buf_puts(o, " */\n");
    td__buf_printf(o, "#define TD_ATOL %.17g\n", r->atol);
    /* --data random: the rounding of the narrower of src and dst. */
    double us, ts, ud, tdn;
    red_float_limits(sb->dtype, &us, &ts);
    red_float_limits(db->dtype, &ud, &tdn);
    td__buf_printf(o, "#define TD_UNIT_ROUNDOFF %.17g\n#define TD_TINY %.17g\n",
                   us > ud ? us : ud, ts > tdn ? ts : tdn);
    /* With specials, max / min start from the identity, the lowest
     * (highest) finite value, as the emitted code does (TVM's
     * min_value / max_value), and skip NaN as fmaxf / __hmax do. */
    double lowest = db->dtype == TD_F16    ? 65504.0
                    : db->dtype == TD_BF16 ? 3.3895313892515355e+38
                    : db->dtype == TD_F64  ? 1.7976931348623157e+308
                                           : 3.4028234663852886e+38;
    td__buf_printf(o, "#define TD_SPECIALS %d\n#define TD_FINITE_MAX %.17g\n",
                   r->specials ? 1 : 0, lowest);
    td__kp_region_arrays(o, "src", sb, &c->src);
    td__kp_region_arrays(o, "dst", db, &c->dst);
    td__buf_puts(o, "static const int td_red[] = ");
    red_int_list(o, r->reduce, r->nreduce);
    td__buf_puts(o, ";\nstatic const int td_spa[] = ");
    red_int_list(o, r->spatial, r->nspatial);
    td__buf_puts(o, ";\n\n");
}


static void red_reference(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_flat);
    td__buf_puts(o, td__kp_frag_reduce_doc);
    td__buf_puts(o, td__kp_frag_tol);
    td__buf_puts(o, td__kp_frag_reduce_reference);
}

/* td_reference(src, init, want, tol) of instance inst. */
static void red_ref_call(td_buf *o, const kp_plan *p)
{
    const kp_buf *sk = &p->bufs[0];
    const kp_buf *dk = p->nbufs > 1 ? &p->bufs[1] : &p->bufs[0];
    td__buf_printf(o,
                   "        td_reference(v_in_%s + inst * %" PRId64 "LL, "
                   "v_in_%s + inst * %" PRId64 "LL, td_want, td_tol);\n",
                   sk->b->name, sk->elems, dk->b->name, dk->elems);
}

static void red_pass(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_reduce_pass);
}

static int red_plan_fn(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *call = p->call;
    red_plan *r = td__kp_fam_data(p, sizeof *r);
    if (r == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    r->row = td__reduce_info(p->op->combiner);
    if (r->row == NULL)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "no reference for the reduction op '%.*s'",
                           (int)TD_NAME_MAX, call->op);
    int err = red_buffers(p, ir, diag);
    if (err == 0)
        err = red_axes(p, r, diag);
    if (err != 0)
        return err;
    const td_buffer *db = td__region_buffer(call, &call->dst);
    r->atol = red_atol(p, db->dtype);
    /* config kernel_specials: the source gets NaN and infinities. */
    const td_config_entry *sp = td_call_config(call, "kernel_specials");
    if (sp != NULL && sp->kind != TD_VALUE_BOOL)
        err = td__fail(diag, TD_EINVAL, call->file,
                       "kernel: config kernel_specials must be true or "
                       "false");
    else if (sp != NULL && sp->b && !td_dtype_is_float(db->dtype))
        err = td__fail(diag, TD_EINVAL, call->file,
                       "kernel: config kernel_specials needs a float "
                       "dtype, not %s",
                       td_dtype_name(db->dtype));
    r->specials = sp != NULL && sp->kind == TD_VALUE_BOOL && sp->b;
    return err;
}

const kp_family td__kp_reduce = {
    .kind = TD_OP_KIND_REDUCTION,
    .what = "a reduction",
    .plan = red_plan_fn,
    .tables = red_tables,
    .reference = red_reference,
    .gen_expr = red_gen_expr,
    .ref_call = red_ref_call,
    .dst_check = "td_check",
    .pass = red_pass,
};
