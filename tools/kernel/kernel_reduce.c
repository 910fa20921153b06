/*
 * Self-checking programs for reductions (sum, max, min: the rows of
 * variants/reduce_ops.h): the src and the dst buffer are staged, the
 * reference reduces each dst element's source elements in double
 * precision (fragments/reduce_reference.cuh, the op picked by its row's
 * TD_OP code).  The data decides how tight the check is
 * (fragments/reduce_fill.cuh, docs/verification.md "What a PASS means"):
 *
 *   - float sums, --data exact: nonzero integers k in [-M, M] scaled by a
 *     power of two, with n M <= 2^p (n terms, p the significand bits of
 *     the narrower of src and dst), so every partial sum in any order is
 *     exact and the check is ==; where no such M >= 1 exists, and with
 *     --data random, the worst case of any summation order,
 *     ((1 + u)^(n-1) - 1) sum|terms| (one more rounding per term when
 *     src and dst dtypes differ) plus the final rounding to the dst;
 *   - max / min: every row's extreme is unique, differs from its
 *     neighbours' and sits at a position that moves with the row and the
 *     round, so that across rounds (and rows) it visits every position of
 *     the reduced row, the accumulated dst value included;
 *   - accum: false: the dst region starts poisoned (NaN for float sums,
 *     +inf / -inf for max / min, the dtype's extreme for integers), so a
 *     body that reads the dst before writing it fails.
 *
 * config kernel_specials puts NaN and infinities among the source values.
 * The driver reaches this file through td__kp_reduce.
 */
#include <inttypes.h>
#include <math.h>
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
    bool specials;      /* NaN and infinities among the source values */
    bool is_float;      /* the dst dtype is a float */
    int rounds;
    int64_t positions;  /* terms of a row: red_len, plus the dst (accum) */
    /* Sums: nonzero k in [-sum_m, sum_m] times 2^-sum_q; exact when every
     * partial sum is representable. */
    int64_t sum_m;
    int sum_q;
    bool sum_exact;
    /* Sums of rows too long for every term nonzero (n > 2^p): round j
     * keeps the terms red of row g with (red + g + j) % sum_sparse == 0
     * and zeroes the others (0: every term nonzero). */
    int64_t sum_sparse;
    /* Max / min: the grid [lo, hi] (times `scale`) and how many distinct
     * extremes neighbouring rows get. */
    int64_t lo, hi, spread;
    double scale;
    double poison;      /* the dst region's staged value (accum: false) */
    /* Max / min: td_position's step through a row's positions, coprime
     * with their number (a bijection, far from 1: see red_stride). */
    int64_t stride;
    /* Integer max / min: round 1 stages every term at `ident`, the op's
     * identity in the narrower of src and dst (the dtype's lowest for
     * max, highest for min), so a body whose identity is off fails. */
    bool ident_round;
    double ident;
} red_plan;

/* Rounds of a max / min program at least: per-row coverage of every
 * position when the row is at most this long. */
#define RED_MIN_ROUNDS 16
/* Elements staged and checked over all rounds at most (some seconds of
 * host time): longer rows get fewer rounds than positions.  Every max /
 * min of the corpus fits (the largest, two rows of 16384 with accum,
 * needs 8193 rounds of 32770 elements). */
#define RED_ROUND_BUDGET ((int64_t)1 << 29)
/* Sparse sums: how many times the rounds put each term nonzero, with new
 * signs each time (a slot's terms cancelling in all of them: about one
 * time in 8,000). */
#define RED_SPARSE_PASSES 3
/* The magnitude bound M of exact sum data at most (a larger M would not
 * make the check stricter). */
#define RED_SUM_M_MAX 256

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

/* An input value (before td_fill reworks the regions): for sums nonzero
 * grid values (td_sum_value) or normal ones, nonzero integers; for max /
 * min k/64 or normal, small integers; with specials, about 1 source
 * value in 64 each is NaN, +inf, -inf. */
static void red_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    const red_plan *r = red_of(p);
    td_dtype t = kb->b->dtype;
    bool special = r->specials && kb->is_src;
    bool sum = r->row->ref == 0;
    if (special)
        td__buf_puts(o, "td_special(");
    if (td_dtype_is_float(t)) {
        td__buf_printf(o, "td_data_random ? td_rand_normal() : %s",
                       sum ? "td_sum_value()" : "td_rand_float()");
    } else {
        int64_t lo, hi;
        red_int_range(r, t, &lo, &hi);
        td__buf_printf(o, "%s(%" PRId64 "LL, %" PRId64 "LL)",
                       sum ? "td_rand_nonzero" : "td_rand_int", lo, hi);
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

/* The largest magnitude of an integer dtype the staged doubles hold
 * exactly (capped at 2^52). */
static int64_t red_int_lim(td_dtype t)
{
    int bits = td_dtype_bits(t);
    int vb = td_dtype_is_signed(t) ? bits - 1 : bits;
    return vb >= 52 ? ((int64_t)1 << 52) : (((int64_t)1 << vb) - 1);
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
    int64_t src_elems = 1, src_region = 1;
    for (int d = 0; d < sb->ndim; d++)
        src_elems *= sb->shape[d];
    for (int d = 0; d < c->src.ndim; d++)
        src_region *= c->src.extent[d];
    td__buf_printf(o, "#define TD_DST_ELEMS %" PRId64 "LL\n"
                      "#define TD_SRC_ELEMS %" PRId64 "LL\n"
                      "#define TD_SRC_OUTSIDE %d /* src elements outside "
                      "the region */\n",
                   dst_elems, src_elems, src_region < src_elems ? 1 : 0);
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
    /* The bound of inexact sums: the rounding of the narrower of src and
     * dst, one more per term where they differ (a conversion), and the
     * dst's own. */
    double us, ts, ud, tdn;
    red_float_limits(sb->dtype, &us, &ts);
    red_float_limits(db->dtype, &ud, &tdn);
    td__buf_printf(o, "#define TD_UNIT_ROUNDOFF %.17g\n#define TD_TINY %.17g\n"
                      "#define TD_DST_UNIT_ROUNDOFF %.17g\n"
                      "#define TD_CONVERT %d /* src and dst dtypes differ */\n",
                   us > ud ? us : ud, ts > tdn ? ts : tdn, ud,
                   sb->dtype != db->dtype ? 1 : 0);
    td__buf_printf(o,
                   "#define TD_SUM_M %" PRId64 "LL /* sums: k in [-M, M], k != 0 */\n"
                   "#define TD_SUM_SCALE %.17g /* times 2^-%d */\n"
                   "#define TD_SUM_EXACT %d /* exact data: every partial "
                   "sum is representable */\n"
                   "#define TD_SUM_SPARSE %" PRId64 "LL /* exact data: a "
                   "row's terms nonzero in a round: 1 in this many (0: "
                   "all) */\n",
                   r->sum_m, ldexp(1.0, -r->sum_q), r->sum_q,
                   r->sum_exact ? 1 : 0, r->sum_sparse);
    td__buf_printf(o,
                   "#define TD_SPA_LEN %" PRId64 "LL /* rows of an instance */\n"
                   "#define TD_POSITIONS %" PRId64 "LL /* terms of a row */\n"
                   "#define TD_IS_FLOAT %d\n"
                   "#define TD_FILL_LO %" PRId64 "LL /* max / min: grid [LO, HI] */\n"
                   "#define TD_FILL_HI %" PRId64 "LL\n"
                   "#define TD_FILL_SPREAD %" PRId64 "LL /* distinct extremes */\n"
                   "#define TD_FILL_SCALE %.17g\n"
                   "#define TD_POS_STRIDE %" PRId64 "LL /* td_position's step, "
                   "coprime with TD_POSITIONS */\n"
                   "#define TD_IDENT_ROUND %d /* integer max / min: the round "
                   "of identities, or -1 */\n"
                   "#define TD_IDENT %.17g\n",
                   r->spa_len, r->positions, r->is_float ? 1 : 0, r->lo, r->hi,
                   r->spread, r->scale, r->stride, r->ident_round ? 1 : -1,
                   r->ident_round ? r->ident : 0.0);
    /* Max / min: what the src elements outside the region hold, the
     * value that wins (the src dtype's highest for max, lowest for min;
     * infinities for floats). */
    if (td_dtype_is_float(sb->dtype))
        td__buf_printf(o, "#define TD_OUTSIDE %sINFINITY /* max / min: the src "
                          "outside its region */\n",
                       r->row->ref == 2 ? "-" : "");
    else
        td__buf_printf(o, "#define TD_OUTSIDE %.17g /* max / min: the src "
                          "outside its region */\n",
                       r->row->ref == 2 ? (td_dtype_is_signed(sb->dtype)
                                               ? -(double)red_int_lim(sb->dtype)
                                               : 0.0)
                                        : (double)red_int_lim(sb->dtype));
    if (isnan(r->poison))
        td__buf_puts(o, "#define TD_POISON NAN /* the dst region's staged "
                        "value (accum: false) */\n");
    else if (isinf(r->poison))
        td__buf_printf(o, "#define TD_POISON %sINFINITY /* the dst region's "
                          "staged value (accum: false) */\n",
                       r->poison < 0 ? "-" : "");
    else
        td__buf_printf(o, "#define TD_POISON %.17g /* the dst region's staged "
                          "value (accum: false) */\n",
                       r->poison);
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

/* Significand bits (with the implicit one) of a float dtype; 0 else. */
static int red_sig_bits(td_dtype t)
{
    switch (t) {
    case TD_F64: return 53;
    case TD_F32: return 24;
    case TD_F16: return 11;
    case TD_BF16: return 8;
    default: return 0;
    }
}

static int64_t red_gcd(int64_t a, int64_t b)
{
    while (b != 0) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* td_position's stride over P positions: the first integer from P / phi
 * up that is coprime with P.  Consecutive rounds then land far apart and
 * in every residue class of the small strides a body's lanes, vectors and
 * unrolled blocks use, so a run cut short (--rounds) still puts the
 * extreme into every class of positions a one-change body misses. */
static int64_t red_stride(int64_t positions)
{
    if (positions <= 2)
        return 1;
    int64_t s = (int64_t)((double)positions * 0.6180339887498949);
    if (s < 1)
        s = 1;
    while (red_gcd(positions, s) != 1)
        s++;
    return s;
}

/* The identity of an integer max (min) that both dtypes hold, and
 * whether a double holds it exactly (not so a 64-bit highest). */
static bool red_int_ident(td_dtype a, td_dtype b, int op, double *out)
{
    double v = 0.0;
    for (int i = 0; i < 2; i++) {
        td_dtype t = i ? b : a;
        int bits = td_dtype_bits(t);
        bool sgn = td_dtype_is_signed(t);
        double x = op == 1 ? (sgn ? -ldexp(1.0, bits - 1) : 0.0)
                           : ldexp(1.0, sgn ? bits - 1 : bits) - 1.0;
        if (op == 2 && bits > 52)
            return false;
        if (i == 0 || (op == 1 ? x > v : x < v))
            v = x;
    }
    *out = v;
    return true;
}

/* The data of the rounds: exact sum data, the max / min grid and its
 * extremes, the poisoned dst and the number of rounds. */
static void red_data(kp_plan *p, red_plan *r)
{
    const td_call *c = p->call;
    const td_buffer *sb = td__region_buffer(c, &c->src);
    const td_buffer *db = td__region_buffer(c, &c->dst);
    int op = r->row->ref;
    r->is_float = td_dtype_is_float(db->dtype);
    r->positions = td__mul_sat(r->red_len, 1) + (c->accum ? 1 : 0);
    /* Sums: n M <= 2^p with p of the narrower float. */
    int ps = red_sig_bits(sb->dtype), pd = red_sig_bits(db->dtype);
    int prec = ps == 0 ? pd : pd == 0 ? ps : (ps < pd ? ps : pd);
    r->sum_m = 1;
    r->sum_q = 0;
    r->sum_exact = !r->is_float;
    r->sum_sparse = 0;
    if (r->is_float && prec > 0) {
        int64_t m = (int64_t)(ldexp(1.0, prec) / (double)r->positions);
        if (m > RED_SUM_M_MAX)
            m = RED_SUM_M_MAX;
        r->sum_exact = true;
        if (m < 1) {
            /* More terms than 2^p: no data with every term nonzero is
             * exact (a 16-bit float sum of 8192 terms), and the
             * worst-case tolerance of inexact data exceeds the sum.  So
             * a round keeps at most 2^p - accum terms of a row nonzero
             * (+-1: every partial sum an integer of at most 2^p), the
             * others 0, and is exact; over sum_sparse rounds every term
             * is nonzero once. */
            int64_t k = (int64_t)ldexp(1.0, prec) - (c->accum ? 1 : 0);
            if (k < 1)
                k = 1;
            r->sum_sparse = op == 0 ? (r->red_len + k - 1) / k : 0;
            m = 1;
        }
        r->sum_m = m;
        /* |values| below 4: scaled by 2^-(floor(log2 M) - 1). */
        int q = 0;
        while (((int64_t)1 << (q + 2)) <= m)
            q++;
        r->sum_q = q;
    }
    /* Max / min: floats on the grid k/64, k in [-256, 255] (exact even in
     * bfloat16); integers in their range.  The top (bottom) `spread`
     * values are the extremes, the others lie strictly below (above). */
    if (r->is_float) {
        r->lo = -256;
        r->hi = 255;
        r->scale = 1.0 / 64.0;
    } else {
        /* Both dtypes hold the values. */
        int64_t l2, h2;
        red_int_range(r, db->dtype, &r->lo, &r->hi);
        red_int_range(r, sb->dtype, &l2, &h2);
        if (l2 > r->lo)
            r->lo = l2;
        if (h2 < r->hi)
            r->hi = h2;
        /* An unsigned min's poison is 0: keep the values above it. */
        if (op == 2 && !td_dtype_is_signed(db->dtype) && r->lo < 1)
            r->lo = 1;
        r->scale = 1.0;
    }
    r->spread = (r->hi - r->lo) / 3;
    if (r->spread > 64)
        r->spread = 64;
    if (r->spread < 1)
        r->spread = 1;
    /* What a body that reads the dst before writing it sees. */
    if (op == 0)
        r->poison = r->is_float ? NAN : (double)red_int_lim(db->dtype);
    else if (r->is_float)
        r->poison = op == 1 ? INFINITY : -INFINITY;
    else if (op == 1)
        r->poison = (double)red_int_lim(db->dtype);
    else
        r->poison = td_dtype_is_signed(db->dtype)
                        ? -(double)red_int_lim(db->dtype)
                        : 0.0;
    /* Rounds: sums two (every term is nonzero, so a dropped one shows in
     * any round), sparse sums RED_SPARSE_PASSES per nonzero phase; max / min enough that every position of the row holds
     * an extreme in some round and row, and every position of every row
     * where the row is at most RED_MIN_ROUNDS long. */
    r->stride = red_stride(r->positions);
    r->ident_round = op != 0 && !r->is_float &&
                     !td_dtype_is_float(sb->dtype) &&
                     red_int_ident(sb->dtype, db->dtype, op, &r->ident);
    if (op == 0) {
        /* Sparse sums: every term nonzero in RED_SPARSE_PASSES rounds of
         * the exact data (rounds j, j + D, ... keep the same terms, with
         * new signs), within the budget of staged elements.  One pass is
         * not enough: the +-1 terms a round keeps in one vector slot or
         * lane cancel (256 of them sum to 0 about one time in 20), and a
         * body that flips that slot's sign then passes the round. */
        int64_t n = r->sum_sparse > 1
                        ? td__mul_sat(r->sum_sparse, RED_SPARSE_PASSES)
                        : 2;
        int64_t work = 0;
        for (int i = 0; i < p->nbufs; i++)
            work = td__mul_sat(p->bufs[i].elems, p->instances) + work;
        int64_t most = RED_ROUND_BUDGET / (work > 0 ? work : 1);
        if (n > most)
            n = most > 2 ? most : 2;
        r->rounds = (int)n;
    } else {
        int64_t rows = td__mul_sat(p->instances, r->spa_len);
        int64_t cover = (r->positions + rows - 1) / (rows > 0 ? rows : 1);
        int64_t n = r->positions < RED_MIN_ROUNDS ? r->positions
                                                  : RED_MIN_ROUNDS;
        if (cover > n)
            n = cover;
        /* Each round stages and checks every element once: beyond the
         * budget, fewer rounds (coverage is then partial). */
        int64_t work = 0;
        for (int i = 0; i < p->nbufs; i++)
            work = td__mul_sat(p->bufs[i].elems, p->instances) + work;
        int64_t most = RED_ROUND_BUDGET / (work > 0 ? work : 1);
        if (most < RED_MIN_ROUNDS)
            most = RED_MIN_ROUNDS;
        if (n > most)
            n = most;
        r->rounds = n < 1 ? 1 : (int)n;
        /* The identity round comes on top (round 1, within any --rounds
         * cap of at least 2). */
        if (r->ident_round)
            r->rounds++;
    }
}

static int red_rounds(const kp_plan *p)
{
    return red_of(p)->rounds;
}

/* td_fill per instance: rework the round's src and dst regions. */
static void red_fill(td_buf *o, const kp_plan *p)
{
    const kp_buf *sk = &p->bufs[0];
    const kp_buf *dk = p->nbufs > 1 ? &p->bufs[1] : &p->bufs[0];
    td__buf_printf(o,
                   "        for (long long inst = 0; inst < TD_INSTANCES; "
                   "++inst)\n"
                   "            td_fill(v_in_%s + inst * %" PRId64 "LL, "
                   "v_in_%s + inst * %" PRId64 "LL, inst);\n",
                   sk->b->name, sk->elems, dk->b->name, dk->elems);
}

/* After the shared generators: td_sum_value and td_fill. */
static void red_helpers(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_reduce_fill);
    td__buf_puts(o, "\n");
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
    red_data(p, r);
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
    .helpers = red_helpers,
    .gen_expr = red_gen_expr,
    .rounds = red_rounds,
    .fill = red_fill,
    .ref_call = red_ref_call,
    .dst_check = "td_check",
    .pass = red_pass,
    .one_writer = true,
};
