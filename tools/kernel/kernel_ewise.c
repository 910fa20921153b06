/*
 * Self-checking programs for elementwise calls (the rows of
 * variants/ewise_table.h): the family's hooks (td__kp_ewise).  The shared
 * files stage the buffers (through their layouts, per scope instance), run
 * the body and compare; this file decides which buffers and scalars the
 * program has, how each buffer's inputs are generated (the row's roles),
 * and writes the host reference around the row's formula:
 *
 *   - every region operand's buffer is staged once (a buffer used twice is
 *     one input); a dst buffer that no operand reads starts filled with a
 *     sentinel, so an element the body never writes, and one outside the
 *     dst region that it does write, both show as mismatches;
 *   - named scalars become kernel parameters with fixed values (below);
 *     literals are used as written, rounded to their dtype;
 *   - the reference reads each operand by NumPy's right-aligned
 *     broadcasting over the dst region, computes op(x * scale + bias) (or
 *     the binary / ternary op) in double from the values as stored, and
 *     rounds the result to the dst dtype (round to nearest even; float to
 *     integer truncates, as a C conversion does);
 *   - each dst element is allowed ULPS ulps of the compute dtype at the
 *     reference value, plus the propagated rounding of the op's argument
 *     where an extra or a wider operand makes one (docs/verification.md,
 *     "Elementwise programs", has the table).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ewise.h"
#include "kp.h"
#include "kp_fragments.h"

/* ---- dtypes ------------------------------------------------------------ */

/* Significand bits (with the implicit one), the smallest normal's
 * exponent and the largest finite value of a float dtype; p = 0 for the
 * integer dtypes. */
static void ew_fmt(td_dtype t, int *p, int *emin, double *maxv)
{
    switch (t) {
    case TD_F64: *p = 53; *emin = -1022; *maxv = 1.7976931348623157e308; break;
    case TD_F32: *p = 24; *emin = -126; *maxv = 3.4028234663852886e38; break;
    case TD_F16: *p = 11; *emin = -14; *maxv = 65504.0; break;
    case TD_BF16: *p = 8; *emin = -126; *maxv = 3.3895313892515355e38; break;
    default: *p = 0; *emin = 0; *maxv = 0.0; break;
    }
}

/* x rounded to nearest even in dtype t (the generator's copy of the
 * program's td_round_float); integers truncate. */
static double ew_round(double x, td_dtype t)
{
    int p, emin;
    double maxv;
    ew_fmt(t, &p, &emin, &maxv);
    if (p == 0)
        return trunc(x);
    if (x == 0.0 || !isfinite(x))
        return x;
    int e;
    frexp(x, &e);
    int lead = e - 1 < emin ? emin : e - 1;
    double q = ldexp(1.0, lead - p + 1);
    double r = nearbyint(x / q) * q;
    if (fabs(r) > maxv)
        r = r > 0 ? INFINITY : -INFINITY;
    return r;
}

/* The largest value an integer dtype holds, capped at 2^62. */
static int64_t ew_int_max(td_dtype t)
{
    int bits = td_dtype_bits(t);
    bool sgn = td_dtype_is_signed(t);
    int vb = sgn ? bits - 1 : bits;
    return vb >= 63 ? ((int64_t)1 << 62) : (((int64_t)1 << vb) - 1);
}

/* The dst sentinel of dtype t: a value no op here produces from the
 * generated inputs (floats -1984, exact in every float dtype; signed
 * integers their maximum, unsigned 2^(bits-1)). */
static double ew_sentinel(td_dtype t)
{
    if (td_dtype_is_float(t))
        return -1984.0;
    if (td_dtype_is_signed(t))
        return (double)ew_int_max(t);
    return ldexp(1.0, td_dtype_bits(t) - 1);
}

/* ---- the plan ----------------------------------------------------------- */

/* One operand as the program's reference sees it. */
typedef struct ew_opnd {
    td_operand_kind kind;  /* REGION, LITERAL or SCALAR; NONE: absent */
    int buf;               /* REGION: index into the staged buffers */
    td_region r;           /* REGION (a copy: in place, it is the dst) */
    td_dtype dtype;
    double value;          /* LITERAL, SCALAR: as rounded to dtype */
} ew_opnd;

typedef struct ew_plan {
    const ew_info *op;     /* the op's row */
    const char *name;
    int n;                 /* operands: sources, then bias, scale */
    ew_opnd o[TD_MAX_SRCS + 2];
    int bias, scale;       /* index into o, or -1 */
    int nsrc;              /* o[0..nsrc) are the op's sources */
    bool int_compute;      /* upstream's compute dtype is an integer */
    td_dtype cdt;          /* compute dtype: narrowest float involved */
    bool cfloat;           /* some float is involved */
} ew_plan;

static ew_plan *ew_of(const kp_plan *p)
{
    return (ew_plan *)p->fam_data;
}

/* The fixed value of a named scalar by its first role (documented in
 * docs/verification.md). */
static double ew_scalar_value(td_dtype t, int role_src, bool is_bias)
{
    bool fl = td_dtype_is_float(t);
    if (role_src < 0)
        return is_bias ? (fl ? 0.25 : 1.0) : (fl ? 0.5 : 2.0);
    static const double fv[] = {1.5, 0.5, -0.75, 1.25};
    static const double iv[] = {3.0, 2.0, -1.0, 4.0};
    double v = fl ? fv[role_src % 4] : iv[role_src % 4];
    if (!fl && !td_dtype_is_signed(t) && v < 0)
        v = -v;
    return v;
}

static int ew_add_scalar(kp_plan *p, const td_operand *od, int role_src,
                         bool is_bias, td_diag *diag)
{
    const td_call *c = p->call;
    for (int i = 0; i < p->nscalars; i++) {
        if (strcmp(p->scalars[i].name, od->name) == 0) {
            if (p->scalars[i].dtype != od->dtype)
                return td__kp_fail(diag, c, TD_EINVAL,
                                   "scalar %s is used with two dtypes",
                                   od->name);
            return 0;
        }
    }
    if (!td__kp_ident(od->name) || strlen(od->name) > 48 ||
        strncmp(od->name, "td_", 3) == 0)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "scalar name '%s' is not a short C identifier "
                           "outside the program's own (td_*)",
                           od->name);
    for (int i = 0; i < c->nbuffers; i++) {
        char ptr[TD_NAME_MAX + 8];
        snprintf(ptr, sizeof ptr, "%s_ptr", c->buffers[i].name);
        if (strcmp(ptr, od->name) == 0 ||
            strcmp(c->buffers[i].name, od->name) == 0)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "scalar name '%s' collides with buffer %s",
                               od->name, c->buffers[i].name);
    }
    if (td__kp_ctype(od->dtype) == NULL)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "scalar %s has an unsupported dtype", od->name);
    kp_scalar *s = &p->scalars[p->nscalars++];
    s->name = od->name;
    s->dtype = od->dtype;
    s->value = ew_round(ew_scalar_value(od->dtype, role_src, is_bias),
                        od->dtype);
    if (od->dtype == TD_F16)
        p->half = true;
    if (od->dtype == TD_BF16)
        p->bf16 = true;
    return 0;
}

/* Right-aligned broadcasting of region r over the dst region. */
static int ew_check_bcast(const kp_plan *p, const td_region *r,
                          const char *what, td_diag *diag)
{
    const td_region *d = &p->call->dst;
    for (int j = 0; j < r->ndim; j++) {
        int dd = d->ndim - r->ndim + j;
        int64_t de = dd >= 0 ? d->extent[dd] : 1;
        if (r->extent[j] != 1 && r->extent[j] != de)
            return td__kp_fail(diag, p->call, TD_EINVAL,
                               "%s region extent %" PRId64 " (dim %d) does "
                               "not broadcast to the dst region's %" PRId64,
                               what, r->extent[j], j, de);
    }
    return 0;
}

static int ew_operand(kp_plan *p, ew_plan *e, const td_operand *od,
                      ew_role role, int role_src, bool is_bias,
                      const char *what, td_diag *diag)
{
    const td_call *c = p->call;
    ew_opnd *o = &e->o[e->n++];
    o->kind = od->kind;
    o->dtype = od->dtype;
    o->buf = -1;
    switch (od->kind) {
    case TD_OPERAND_REGION: {
        const td_buffer *b = td__region_buffer(c, &od->region);
        if (b == NULL)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "%s region does not name a buffer", what);
        o->dtype = b->dtype;
        o->r = od->region;
        int err = ew_check_bcast(p, &od->region, what, diag);
        if (err != 0)
            return err;
        bool fresh = true;
        for (int i = 0; i < p->nbufs; i++)
            if (p->bufs[i].b == b)
                fresh = false;
        kp_buf *kb = td__kp_add_buf(p, b, true, false);
        if (kb == NULL)
            return td__kp_fail(diag, c, TD_ELIMIT, "too many buffers");
        if (fresh)
            kb->role = role;
        o->buf = (int)(kb - p->bufs);
        break;
    }
    case TD_OPERAND_LITERAL:
        o->value = td_dtype_is_float(od->dtype) ? ew_round(od->value, od->dtype)
                                                : (double)od->ivalue;
        break;
    case TD_OPERAND_SCALAR: {
        int err = ew_add_scalar(p, od, role_src, is_bias, diag);
        if (err != 0)
            return err;
        for (int i = 0; i < p->nscalars; i++)
            if (strcmp(p->scalars[i].name, od->name) == 0)
                o->value = p->scalars[i].value;
        break;
    }
    default:
        return td__kp_fail(diag, c, TD_EINVAL, "%s is missing", what);
    }
    if (td_dtype_is_float(o->dtype)) {
        int pc, pe, emin;
        double mx;
        ew_fmt(o->dtype, &pe, &emin, &mx);
        ew_fmt(e->cdt, &pc, &emin, &mx);
        if (!e->cfloat || pe < pc)
            e->cdt = o->dtype;
        e->cfloat = true;
    }
    return 0;
}

static void ew_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb);

/* Sources the op takes: [lo, hi].  zero may name one (ignored); the
 * other unary math ops without one work in place on the dst. */
static void ew_arity(const ew_info *op, int *lo, int *hi)
{
    switch (op->kind) {
    case EW_KIND_UNARY: *lo = op->src_optional ? 0 : 1; *hi = 1; break;
    case EW_KIND_BINARY: *lo = *hi = 2; break;
    case EW_KIND_FMA: *lo = *hi = 3; break;
    default: *lo = *hi = 1; break;
    }
}

static int ew_plan_fn(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *c = p->call;
    /* The row by the call's op name: the built-in table's, whoever
     * registered the op. */
    const td_op_desc *desc = td__ewise_op_named(c->op);
    const ew_info *op = td__ewise_info(desc);
    if (op == NULL || op->f == NULL)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "no reference for the elementwise op '%.*s'",
                           (int)TD_NAME_MAX, c->op);
    ew_plan *e = td__kp_fam_data(p, sizeof *e);
    if (e == NULL)
        return td__fail(diag, TD_ENOMEM, c->file, "out of memory");
    e->op = op;
    e->name = desc->name;
    e->bias = e->scale = -1;
    const td_buffer *db = td__region_buffer(c, &c->dst);
    if (db == NULL)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "dst region does not name a buffer");
    if (td_dtype_is_float(db->dtype)) {
        e->cdt = db->dtype;
        e->cfloat = true;
    }
    int lo, hi;
    ew_arity(op, &lo, &hi);
    if (c->nsrcs < lo || c->nsrcs > hi)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "%s takes %d%s source operand%s, the call has %d",
                           e->name, hi, lo == hi ? "" : " or fewer",
                           hi == 1 ? "" : "s", c->nsrcs);
    const td_config_entry *sp = td_call_config(c, "kernel_specials");
    if (sp != NULL && sp->kind == TD_VALUE_BOOL && sp->b)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "config kernel_specials applies to reductions "
                           "only");
    p->nbufs = 0;
    /* In place: x is the dst region. */
    td_operand self;
    memset(&self, 0, sizeof self);
    self.kind = TD_OPERAND_REGION;
    self.region = c->dst;
    self.dtype = db->dtype;
    int nsrcs = !op->reads_src ? 0 : c->nsrcs;
    const td_operand *srcs = c->srcs;
    if (op->reads_src && op->src_optional && c->nsrcs == 0) {
        nsrcs = 1;
        srcs = &self;
    }
    if (!op->reads_src && c->nsrcs == 1 &&
        c->srcs[0].kind == TD_OPERAND_REGION) {
        /* zero reads no source; a named one must come back unchanged */
        const td_buffer *b = td__region_buffer(c, &c->srcs[0].region);
        if (b == NULL)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "source 0 region does not name a buffer");
        kp_buf *kb = td__kp_add_buf(p, b, true, false);
        if (kb == NULL)
            return td__kp_fail(diag, c, TD_ELIMIT, "too many buffers");
        kb->role = EW_ROLE_ANY;
    }
    /* upstream's compute dtype: the widest of the dst and the sources,
     * the dst winning ties; an integer one converts every source. */
    td_dtype cu = db->dtype;
    for (int i = 0; i < nsrcs; i++) {
        td_dtype t = srcs[i].kind == TD_OPERAND_REGION &&
                             srcs[i].region.buffer >= 0 &&
                             srcs[i].region.buffer < c->nbuffers
                         ? c->buffers[srcs[i].region.buffer].dtype
                         : srcs[i].dtype;
        if (td_dtype_bits(t) > td_dtype_bits(cu))
            cu = t;
    }
    e->int_compute = !td_dtype_is_float(cu);
    for (int i = 0; i < nsrcs; i++) {
        ew_role role = i == 0 ? op->x : op->y;
        char what[32];
        snprintf(what, sizeof what, "source %d", i);
        if (srcs[i].kind == TD_OPERAND_REGION &&
            (srcs[i].region.buffer < 0 ||
             srcs[i].region.buffer >= c->nbuffers))
            return td__kp_fail(diag, c, TD_EINVAL,
                               "%s region does not name a buffer", what);
        if ((op->ref == EW_REF_COPY || e->int_compute) &&
            !td_dtype_is_float(cu) &&
            td_dtype_is_float(srcs[i].kind == TD_OPERAND_REGION
                                  ? c->buffers[srcs[i].region.buffer].dtype
                                  : srcs[i].dtype))
            role = EW_ROLE_TOINT;
        int err = ew_operand(p, e, &srcs[i], role, i, false, what, diag);
        if (err != 0)
            return err;
    }
    e->nsrc = e->n;
    bool extras = op->ref == EW_REF_MATH && op->extras;
    if (c->bias.kind != TD_OPERAND_NONE && extras) {
        e->bias = e->n;
        bool pos = op->x == EW_ROLE_POS || op->x == EW_ROLE_SQRT;
        int err = ew_operand(p, e, &c->bias, pos ? EW_ROLE_BIAS_POS : EW_ROLE_BIAS,
                             -1, true, "bias", diag);
        if (err != 0)
            return err;
    }
    if (c->scale.kind != TD_OPERAND_NONE && extras) {
        e->scale = e->n;
        int err = ew_operand(p, e, &c->scale, EW_ROLE_ANY, -1, false, "scale",
                             diag);
        if (err != 0)
            return err;
    }
    /* The dst: read too when an operand is the dst buffer (in place). */
    kp_buf *dk = td__kp_add_buf(p, db, false, true);
    if (dk == NULL)
        return td__kp_fail(diag, c, TD_ELIMIT, "too many buffers");
    if (!dk->is_src)
        dk->role = EW_ROLE_SENTINEL;
    return td__kp_check_bufs(p, ir, diag);
}

/* ---- text --------------------------------------------------------------- */

/* The value an input of buffer kb starts with (host expression). */
static void ew_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    td_dtype t = kb->b->dtype;
    bool fl = td_dtype_is_float(t);
    if (kb->role == EW_ROLE_SENTINEL) {
        td__buf_puts(o, "TD_EW_SENTINEL");
        return;
    }
    if (!fl) {
        /* Integers: small enough that no result overflows the dst. */
        const td_buffer *db = td__region_buffer(p->call, &p->call->dst);
        int64_t lim = ew_int_max(td_dtype_is_float(db->dtype) ? t : db->dtype);
        int64_t lt = ew_int_max(t);
        if (lt < lim)
            lim = lt;
        const ew_info *op = ew_of(p)->op;
        int64_t a = 100;
        if (op->int_product) {
            int64_t q = (int64_t)sqrt((double)lim / 2.0);
            if (q < a)
                a = q;
        } else if (lim / 4 < a) {
            a = lim / 4; /* sums and differences stay off the sentinel */
        }
        if (a < 1)
            a = 1;
        int64_t lo = td_dtype_is_signed(t) ? -a : 0;
        if (kb->role == EW_ROLE_DIVISOR || kb->role == EW_ROLE_POS ||
            kb->role == EW_ROLE_SQRT)
            lo = 1;
        /* Math functions of integers: results that fit an int8. */
        if (kb->role == EW_ROLE_EXP || kb->role == EW_ROLE_SILU) {
            lo = td_dtype_is_signed(t) ? -4 : 0;
            a = 4;
        } else if (kb->role == EW_ROLE_EXP2) {
            lo = td_dtype_is_signed(t) ? -2 : 0;
            a = 6;
        }
        td__buf_printf(o, "td_rand_int(%" PRId64 "LL, %" PRId64 "LL)", lo, a);
        return;
    }
    switch ((ew_role)kb->role) {
    case EW_ROLE_FMA:
        td__buf_puts(o, "td_data_random ? td_rand_normal() : td_ew_grid(4, -8, 8)");
        break;
    case EW_ROLE_DIVISOR:
        td__buf_puts(o, "td_ew_sign() * (td_data_random ? exp2(td_ew_unif(-2.0, 2.0)) : "
                        "exp2(td_ew_grid(1, -2, 2)))");
        break;
    case EW_ROLE_POS:
        td__buf_puts(o, "td_data_random ? exp2(td_ew_unif(-4.0, 4.0)) : "
                        "exp2(td_ew_grid(1, -4, 4))");
        break;
    case EW_ROLE_SQRT:
        td__buf_puts(o, "td_data_random ? exp2(td_ew_unif(-4.0, 4.0)) : "
                        "td_ew_sq(td_ew_grid(8, 1, 16))");
        break;
    case EW_ROLE_EXP:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-4.0, 4.0) : td_ew_grid(8, -16, 16)");
        break;
    case EW_ROLE_EXP2:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-8.0, 8.0) : td_ew_grid(1, -8, 8)");
        break;
    case EW_ROLE_SILU:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-5.0, 5.0) : td_ew_grid(8, -32, 32)");
        break;
    case EW_ROLE_TOINT: {
        const td_buffer *db = td__region_buffer(p->call, &p->call->dst);
        int64_t a = ew_int_max(db->dtype);
        if (a > 100)
            a = 100;
        int64_t lo = td_dtype_is_signed(db->dtype) ? -a : 0;
        td__buf_printf(o,
                       "td_data_random ? td_ew_unif(%" PRId64 ".0, %" PRId64
                       ".0) : td_ew_grid(8, %" PRId64 ", %" PRId64 ")",
                       lo, a, lo * 8, a * 8);
        break;
    }
    case EW_ROLE_BIAS:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-1.0, 1.0) : td_ew_grid(8, -8, 8)");
        break;
    case EW_ROLE_BIAS_POS:
        td__buf_puts(o, "td_data_random ? td_ew_unif(0.0, 1.0) : td_ew_grid(8, 0, 8)");
        break;
    default:
        td__buf_puts(o, "td_data_random ? td_rand_normal() : td_ew_grid(8, -16, 16)");
        break;
    }
}

/* The constants, the operand table and td_ew_f, the op in double. */
static void ew_tables(td_buf *o, const kp_plan *p)
{
    const td_call *c = p->call;
    const ew_plan *e = ew_of(p);
    const ew_info *op = e->op;
    const td_buffer *db = td__region_buffer(c, &c->dst);
    int dp, demin, cp = 0, cemin = 0;
    double dmax, cmax;
    ew_fmt(db->dtype, &dp, &demin, &dmax);
    if (e->cfloat)
        ew_fmt(e->cdt, &cp, &cemin, &cmax);
    int64_t dst_elems = 1;
    for (int d = 0; d < db->ndim; d++)
        dst_elems *= db->shape[d];
    td__buf_printf(o, "/* Elementwise op %s; dst %s %s, compute dtype %s. */\n",
                   e->name, db->name, td_dtype_name(db->dtype),
                   e->cfloat ? td_dtype_name(e->cdt) : "(integers)");
    td__buf_printf(o, "#define TD_DST_NDIM %d\n#define TD_DST_ELEMS %" PRId64
                      "LL\n",
                   c->dst.ndim, dst_elems);
    td__buf_printf(o,
                   "#define TD_DST_P %d /* significand bits; 0: integer */\n"
                   "#define TD_DST_EMIN %d\n#define TD_DST_MAXV %.17g\n"
                   "#define TD_DST_BITS %d\n#define TD_DST_SIGNED %d\n",
                   dp, demin, dmax, td_dtype_bits(db->dtype),
                   td_dtype_is_signed(db->dtype) ? 1 : 0);
    bool sentinel = false;
    for (int i = 0; i < p->nbufs; i++)
        if (p->bufs[i].is_dst && !p->bufs[i].is_src)
            sentinel = true;
    if (sentinel)
        td__buf_printf(o,
                       "#define TD_EW_SENTINEL %.17g /* the dst's initial "
                       "value */\n",
                       ew_sentinel(db->dtype));
    else
        td__buf_puts(o, "#define TD_EW_SENTINEL NAN /* none: the dst is "
                        "read (in place) */\n");
    td__buf_printf(o,
                   "#define TD_C_P %d /* the compute dtype's; 0: none */\n"
                   "#define TD_C_EMIN %d\n",
                   cp, cemin);
    td__kp_region_arrays(o, "dst", db, &c->dst);
    td__buf_puts(o, "\n");

    /* Operands. */
    td__buf_printf(o,
                   "/* Operands: the sources, then bias and scale where given.\n"
                   " * buf: the staged buffer (-1: a value); wider: a float\n"
                   " * finer than the compute dtype (its conversion rounds). */\n"
                   "typedef struct td_ew_opnd {\n"
                   "    int buf, ndim;\n"
                   "    long long shape[%d], start[%d], ext[%d];\n"
                   "    double value;\n"
                   "    int wider;\n"
                   "} td_ew_opnd;\n"
                   "#define TD_EW_NOPND %d\n",
                   TD_MAX_RANK, TD_MAX_RANK, TD_MAX_RANK, e->n);
    td__buf_puts(o, "static const td_ew_opnd td_ew_opnds[] = {\n");
    for (int i = 0; i < e->n; i++) {
        const ew_opnd *od = &e->o[i];
        int wider = 0;
        if (e->cfloat && td_dtype_is_float(od->dtype)) {
            int pp, em;
            double mx;
            ew_fmt(od->dtype, &pp, &em, &mx);
            wider = pp > cp;
        }
        if (od->kind == TD_OPERAND_REGION) {
            const td_buffer *b = p->bufs[od->buf].b;
            td__buf_printf(o, "    {%d, %d, ", od->buf, od->r.ndim);
            td__kp_i64_list(o, b->shape, b->ndim);
            td__buf_puts(o, ", ");
            td__kp_i64_list(o, od->r.start, od->r.ndim);
            td__buf_puts(o, ", ");
            td__kp_i64_list(o, od->r.extent, od->r.ndim);
            td__buf_printf(o, ", 0.0, %d}, /* %s */\n", wider, b->name);
        } else {
            td__buf_printf(o, "    {-1, 0, {0}, {0}, {0}, %.17g, %d}, /* %s */\n",
                           od->value, wider,
                           od->kind == TD_OPERAND_SCALAR ? "named scalar"
                                                          : "literal");
        }
    }
    if (e->n == 0)
        td__buf_puts(o, "    {-1, 0, {0}, {0}, {0}, 0.0, 0},\n");
    td__buf_puts(o, "};\n\n");

    /* The op: r and the propagated argument rounding dt. */
    bool c16 = e->cfloat && cp < 24;
    double ulps = c16 ? op->ulps16 : op->ulps32;
    bool same = true; /* every float operand has the dst's dtype */
    for (int i = 0; i < e->n; i++)
        if (e->o[i].dtype != db->dtype &&
            (td_dtype_is_float(e->o[i].dtype) || td_dtype_is_float(db->dtype)))
            same = false;
    if (!td_dtype_is_float(db->dtype) || !e->cfloat)
        ulps = 0;
    else if ((op->ref == EW_REF_BINARY || op->ref == EW_REF_FMA) && !same &&
             ulps < 1)
        ulps = 1; /* a conversion before or after the op rounds */
    else if (op->ref == EW_REF_COPY && e->n == 1 &&
             e->o[0].dtype == TD_F64 && dp < 24)
        ulps = 1; /* float64 -> 16 bits may go through float32 */
    /* config rounding_mode rz / rm / rp (the packed paths): one more. */
    const td_config_entry *rm = td_call_config(c, "rounding_mode");
    if (ulps > 0 || (op->ref == EW_REF_BINARY || op->ref == EW_REF_FMA))
        if (rm != NULL && rm->kind == TD_VALUE_STRING &&
            strcmp(rm->s, "rn") != 0 && td_dtype_is_float(db->dtype))
            ulps += 1;
    td__buf_printf(o,
                   "#define TD_EW_NSRC %d /* operands that are sources */\n"
                   "#define TD_EW_INT_COMPUTE %d /* upstream's compute dtype is "
                   "an integer: sources convert (truncate) first */\n"
                   "/* An integer dst of a math function: the float result "
                   "truncates, so one off near an integer. */\n"
                   "#define TD_EW_INT_TOL %d\n",
                   e->nsrc, e->int_compute ? 1 : 0,
                   !td_dtype_is_float(db->dtype) &&
                           op->ref == EW_REF_MATH
                       ? 1
                       : 0);
    td__buf_puts(o,
                 "/* The op in double: r, and dt = the error the rounding of its\n"
                 " * argument can carry into the result. */\n"
                 "static inline void td_ew_f(const double *v, double *rp, double *dtp)\n"
                 "{\n"
                 "    const double u = TD_C_P > 0 ? ldexp(1.0, -TD_C_P) : 0.0;\n"
                 "    double r = 0.0, dt = 0.0;\n"
                 "    (void)u;\n");
    if (op->ref == EW_REF_MATH)
        td__buf_puts(o, "    double d = 0.0; /* |f'(t)| */\n");
    switch (op->ref) {
    case EW_REF_ZERO:
        td__buf_printf(o, "    (void)v;\n    %s\n", op->f);
        break;
    case EW_REF_COPY:
        td__buf_printf(o, "    const double t = v[0];\n    %s\n", op->f);
        break;
    case EW_REF_MATH: {
        bool ext = e->bias >= 0 || e->scale >= 0;
        td__buf_puts(o, "    const double x = v[0];\n");
        if (e->scale >= 0)
            td__buf_printf(o, "    const double s = v[%d];\n", e->scale);
        else
            td__buf_puts(o, "    const double s = 1.0;\n");
        if (e->bias >= 0)
            td__buf_printf(o, "    const double b = v[%d];\n", e->bias);
        else
            td__buf_puts(o, "    const double b = 0.0;\n");
        td__buf_printf(o, "    const double t = x * s + b;\n    %s\n", op->f);
        if (ext)
            td__buf_puts(o, "    /* t = x * s + b rounds twice in the compute "
                            "dtype (or x converts) */\n"
                            "    dt = d * u * (2.0 * fabs(x * s) + fabs(b) + "
                            "fabs(t));\n");
        else
            td__buf_puts(o, "    dt = d * u * fabs(x) * td_ew_opnds[0].wider;\n");
        break;
    }
    case EW_REF_BINARY:
        td__buf_printf(o,
                       "    const double a = v[0], b = v[1];\n    %s\n"
                       "    const double wa = td_ew_opnds[0].wider, "
                       "wb = td_ew_opnds[1].wider;\n    %s\n",
                       op->f, op->dt);
        break;
    case EW_REF_FMA:
        td__buf_printf(o,
                       "    const double a = v[0], b = v[1], c = v[2];\n    %s\n"
                       "    /* a * b may round before the add (no fused "
                       "multiply-add) */\n    %s\n",
                       op->f, op->dt);
        break;
    }
    td__buf_puts(o, "    *rp = r;\n    *dtp = dt;\n}\n");
    /* Absolute terms: a flushed subnormal per math function; float32 log2
     * also __log2f's 2^-22 on [0.5, 2]. */
    double tiny = 0.0;
    if (op->ref == EW_REF_MATH)
        tiny = e->cfloat ? ldexp(1.0, cemin) : 0.0;
    if (cp == 24)
        tiny += op->tiny32;
    td__buf_printf(o, "#define TD_EW_TINY %.17g\n", tiny);
    /* Ops whose every step is exact when the result is representable
     * (on the exact grid data it is): checked with == there. */
    int exact_op = op->ref == EW_REF_FMA ? 2
                   : op->ref == EW_REF_ZERO || op->ref == EW_REF_COPY ||
                           (op->ref == EW_REF_BINARY &&
                            strcmp(e->name, "fdiv") != 0)
                       ? 1
                       : 0;
    td__buf_printf(o,
                   "#define TD_EW_EXACT_OP %d /* --data exact: == where "
                   "the result is representable (2: fma, its product "
                   "too) */\n",
                   exact_op);
    /* ULPS: a fixed count; float32 exp and silu add ceil(1.2 |t|)
     * (covers expf's 2 ulps and __expf's 2 + floor(1.173 |t|)). */
    bool grows = !c16 && cp == 24 && op->ulps_grow;
    if (grows) {
        td__buf_puts(o, "static inline double td_ew_arg(const double *v)\n{\n"
                        "    return v[0]");
        if (e->scale >= 0)
            td__buf_printf(o, " * v[%d]", e->scale);
        if (e->bias >= 0)
            td__buf_printf(o, " + v[%d]", e->bias);
        td__buf_printf(o, ";\n}\n#define TD_EW_ULPS(r) (%g + ceil(1.2 * "
                          "fabs(td_ew_arg(v))))\n",
                       ulps);
    } else {
        td__buf_printf(o, "#define TD_EW_ULPS(r) %g\n", ulps);
    }
    td__buf_puts(o, "\n");
}

/* td_ew_reference over the staged buffers of instance inst. */
static void ew_ref_call(td_buf *o, const kp_plan *p)
{
    td__buf_printf(o, "        const double *td_bufs[%d] = {", p->nbufs);
    int dst = 0;
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        td__buf_printf(o, "%sv_in_%s + inst * %" PRId64 "LL", i ? ", " : "",
                       kb->b->name, kb->elems);
        if (kb->is_dst)
            dst = i;
    }
    td__buf_printf(o, "};\n        td_ew_reference(td_bufs, td_bufs[%d], "
                      "td_want, td_tol);\n",
                   dst);
}

/* What an elementwise program adds to the header comment. */
static void ew_header(td_buf *o, const kp_plan *p)
{
    td__buf_puts(o, " * Elementwise: PASS also prints max_ulp (the largest error "
                    "in ulps of the\n * compute dtype) and max_err/tol; "
                    "docs/verification.md has the tolerances.\n");
    for (int i = 0; i < p->nscalars; i++)
        td__buf_printf(o, " * scalar:  %s = %.17g (%s), a kernel parameter\n",
                       p->scalars[i].name, p->scalars[i].value,
                       td_dtype_name(p->scalars[i].dtype));
}

static void ew_reference(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_flat);
    td__buf_puts(o, td__kp_frag_tol);
    td__buf_puts(o, td__kp_frag_ewise_reference);
    td__buf_puts(o, "\n");
}

/* After td_check: the input generators and td_ew_check. */
static void ew_helpers(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_ewise_helpers);
    td__buf_puts(o, "\n");
}

/* Two rounds: new data for every buffer in the second. */
static int ew_rounds(const kp_plan *p)
{
    (void)p;
    return 2;
}

static void ew_pass(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_ewise_pass);
}

const kp_family td__kp_ewise = {
    .kind = TD_OP_KIND_ELEMENTWISE,
    .what = "elementwise",
    .plan = ew_plan_fn,
    .header = ew_header,
    .tables = ew_tables,
    .reference = ew_reference,
    .helpers = ew_helpers,
    .gen_expr = ew_gen_expr,
    .rounds = ew_rounds,
    .ref_call = ew_ref_call,
    .dst_check = "td_ew_check",
    .pass = ew_pass,
};
