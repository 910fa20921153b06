/*
 * Self-checking programs for elementwise calls: the parts that
 * differ from a reduction's program.  kernel.c stages the buffers (through
 * their layouts, per scope instance), runs the body and compares; this
 * file decides which buffers and scalars the program has, how each
 * buffer's inputs are generated, and writes the host reference:
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

#include "kp.h"

/* ---- the ops ---------------------------------------------------------- */

typedef enum ew_class {
    EW_ZERO,   /* no source */
    EW_FILL,   /* one source: a value or a region, copied (broadcast) */
    EW_UNARY,  /* f(x * scale + bias); x = dst when no source is given */
    EW_SILU,   /* f(x) */
    EW_CAST,   /* x converted to the dst dtype */
    EW_BINARY, /* f(a, b) */
    EW_FMA     /* a * b + c */
} ew_class;

/* How the inputs of a buffer are generated (its first use decides). */
typedef enum ew_role {
    ROLE_SENTINEL, /* dst only: a value no op here produces */
    ROLE_ANY,      /* exact k/8 in [-2, 2]; random normal */
    ROLE_FMA,      /* exact k/4 in [-2, 2] (a*b+c exact in bfloat16) */
    ROLE_DIVISOR,  /* exact +-2^j, j in [-2, 2]; random +-2^U(-2, 2) */
    ROLE_POS,      /* exact 2^j, j in [-4, 4]; random 2^U(-4, 4) */
    ROLE_SQRT,     /* exact (k/8)^2, k in [1, 16]; random 2^U(-4, 4) */
    ROLE_EXP,      /* exact k/8 in [-2, 2]; random U(-4, 4) */
    ROLE_EXP2,     /* exact integers in [-8, 8]; random U(-8, 8) */
    ROLE_SILU,     /* exact k/8 in [-4, 4]; random U(-5, 5) */
    ROLE_TOINT,    /* float to integer dst: exact k/8, random uniform, in
                      the dst's range clamped to [-100, 100] */
    ROLE_BIAS,     /* exact k/8 in [-1, 1]; random U(-1, 1) */
    ROLE_BIAS_POS  /* exact k/8 in [0, 1]; random U(0, 1) */
} ew_role;

typedef struct ew_op {
    const char *name;
    ew_class cls;
    ew_role x;          /* role of the first source (unary, binary a) */
    ew_role y;          /* second source (binary b) */
    /* ulps of the compute dtype allowed: float32/float64 compute, 16-bit
     * compute; for exp and silu float32 adds ceil(1.2 |t|) */
    double ulps32, ulps16;
    const char *f;      /* C of the reference: r, and d = |f'(t)| */
    bool extras;        /* applies bias and scale (upstream: sqrt, exp,
                           exp2, log2; the others ignore them) */
} ew_op;

static const ew_op ew_ops[] = {
    {"zero", EW_ZERO, ROLE_ANY, ROLE_ANY, 0, 0, "r = 0.0;", false},
    {"fill", EW_FILL, ROLE_ANY, ROLE_ANY, 0, 0, "r = t;", false},
    {"cast", EW_CAST, ROLE_ANY, ROLE_ANY, 0, 0, "r = t;", false},
    {"reciprocal", EW_UNARY, ROLE_POS, ROLE_ANY, 1, 1,
     "r = 1.0 / t; d = 1.0 / (t * t);", false},
    {"sqrt", EW_UNARY, ROLE_SQRT, ROLE_ANY, 1, 1,
     "r = sqrt(t); d = t > 0.0 ? 0.5 / sqrt(t) : 0.0;", true},
    {"exp", EW_UNARY, ROLE_EXP, ROLE_ANY, 2, 2, "r = exp(t); d = r;", true},
    {"exp2", EW_UNARY, ROLE_EXP2, ROLE_ANY, 4, 2,
     "r = exp2(t); d = 0.6931471805599453 * r;", true},
    {"log2", EW_UNARY, ROLE_POS, ROLE_ANY, 2, 2,
     "r = log2(t); d = 1.0 / (fabs(t) * 0.6931471805599453);", true},
    {"silu", EW_SILU, ROLE_SILU, ROLE_ANY, 4, 6,
     "{ const double sg = 1.0 / (1.0 + exp(-t)); r = t * sg;"
     " d = fabs(sg * (1.0 + t * (1.0 - sg))); }", false},
    {"add", EW_BINARY, ROLE_ANY, ROLE_ANY, 0, 1, "r = a + b;", false},
    {"sub", EW_BINARY, ROLE_ANY, ROLE_ANY, 0, 1, "r = a - b;", false},
    {"mul", EW_BINARY, ROLE_ANY, ROLE_ANY, 0, 1, "r = a * b;", false},
    {"fdiv", EW_BINARY, ROLE_ANY, ROLE_DIVISOR, 2, 1, "r = a / b;", false},
    {"maximum", EW_BINARY, ROLE_ANY, ROLE_ANY, 0, 0,
     "r = a != a ? b : b != b ? a : (a > b ? a : b);", false},
    {"fma", EW_FMA, ROLE_FMA, ROLE_FMA, 1, 1, "r = a * b + c;", false},
};

static const ew_op *ew_find(const char *name)
{
    for (size_t i = 0; i < sizeof ew_ops / sizeof ew_ops[0]; i++)
        if (strcmp(ew_ops[i].name, name) == 0)
            return &ew_ops[i];
    return NULL;
}

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
    const ew_op *op;
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
    return (ew_plan *)p->ew;
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
static void ew_arity(const ew_op *op, int *lo, int *hi)
{
    switch (op->cls) {
    case EW_ZERO: *lo = 0; *hi = 1; break;
    case EW_UNARY: *lo = 0; *hi = 1; break;
    case EW_BINARY: *lo = *hi = 2; break;
    case EW_FMA: *lo = *hi = 3; break;
    default: *lo = *hi = 1; break;
    }
}

int td__kp_ewise_plan(kp_plan *p, const td_op_desc *opd, const td_ir *ir,
                      td_diag *diag)
{
    (void)opd;
    const td_call *c = p->call;
    const ew_op *op = ew_find(c->op);
    if (op == NULL)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "no reference for the elementwise op '%.*s'",
                           (int)TD_NAME_MAX, c->op);
    ew_plan *e = td__calloc(1, sizeof *e);
    if (e == NULL)
        return td__fail(diag, TD_ENOMEM, c->file, "out of memory");
    p->ew = e;
    p->ewise = true;
    p->gen_expr = ew_gen_expr;
    e->op = op;
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
                           op->name, hi, lo == hi ? "" : " or fewer",
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
    int nsrcs = op->cls == EW_ZERO ? 0 : c->nsrcs;
    const td_operand *srcs = c->srcs;
    if (op->cls == EW_UNARY && c->nsrcs == 0) {
        nsrcs = 1;
        srcs = &self;
    }
    if (op->cls == EW_ZERO && c->nsrcs == 1 &&
        c->srcs[0].kind == TD_OPERAND_REGION) {
        /* zero reads no source; a named one must come back unchanged */
        const td_buffer *b = td__region_buffer(c, &c->srcs[0].region);
        if (b == NULL)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "source 0 region does not name a buffer");
        kp_buf *kb = td__kp_add_buf(p, b, true, false);
        if (kb == NULL)
            return td__kp_fail(diag, c, TD_ELIMIT, "too many buffers");
        kb->role = ROLE_ANY;
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
        if ((op->cls == EW_CAST || op->cls == EW_FILL || e->int_compute) &&
            !td_dtype_is_float(cu) &&
            td_dtype_is_float(srcs[i].kind == TD_OPERAND_REGION
                                  ? c->buffers[srcs[i].region.buffer].dtype
                                  : srcs[i].dtype))
            role = ROLE_TOINT;
        int err = ew_operand(p, e, &srcs[i], role, i, false, what, diag);
        if (err != 0)
            return err;
    }
    e->nsrc = e->n;
    bool extras = op->cls == EW_UNARY && op->extras;
    if (c->bias.kind != TD_OPERAND_NONE && extras) {
        e->bias = e->n;
        bool pos = op->x == ROLE_POS || op->x == ROLE_SQRT;
        int err = ew_operand(p, e, &c->bias, pos ? ROLE_BIAS_POS : ROLE_BIAS,
                             -1, true, "bias", diag);
        if (err != 0)
            return err;
    }
    if (c->scale.kind != TD_OPERAND_NONE && extras) {
        e->scale = e->n;
        int err = ew_operand(p, e, &c->scale, ROLE_ANY, -1, false, "scale",
                             diag);
        if (err != 0)
            return err;
    }
    /* The dst: read too when an operand is the dst buffer (in place). */
    kp_buf *dk = td__kp_add_buf(p, db, false, true);
    if (dk == NULL)
        return td__kp_fail(diag, c, TD_ELIMIT, "too many buffers");
    if (!dk->is_src)
        dk->role = ROLE_SENTINEL;
    return td__kp_check_bufs(p, ir, diag);
}

void td__kp_ewise_free(kp_plan *p)
{
    td__free((void *)p->ew);
    p->ew = NULL;
}

/* ---- text --------------------------------------------------------------- */

/* The value an input of buffer kb starts with (host expression). */
static void ew_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    td_dtype t = kb->b->dtype;
    bool fl = td_dtype_is_float(t);
    if (kb->role == ROLE_SENTINEL) {
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
        const ew_op *op = ew_of(p)->op;
        int64_t a = 100;
        if (strcmp(op->name, "mul") == 0 || op->cls == EW_FMA) {
            int64_t q = (int64_t)sqrt((double)lim / 2.0);
            if (q < a)
                a = q;
        } else if (lim / 4 < a) {
            a = lim / 4; /* sums and differences stay off the sentinel */
        }
        if (a < 1)
            a = 1;
        int64_t lo = td_dtype_is_signed(t) ? -a : 0;
        if (kb->role == ROLE_DIVISOR || kb->role == ROLE_POS ||
            kb->role == ROLE_SQRT)
            lo = 1;
        /* Math functions of integers: results that fit an int8. */
        if (kb->role == ROLE_EXP || kb->role == ROLE_SILU) {
            lo = td_dtype_is_signed(t) ? -4 : 0;
            a = 4;
        } else if (kb->role == ROLE_EXP2) {
            lo = td_dtype_is_signed(t) ? -2 : 0;
            a = 6;
        }
        td__buf_printf(o, "td_rand_int(%" PRId64 "LL, %" PRId64 "LL)", lo, a);
        return;
    }
    switch ((ew_role)kb->role) {
    case ROLE_FMA:
        td__buf_puts(o, "td_data_random ? td_rand_normal() : td_ew_grid(4, -8, 8)");
        break;
    case ROLE_DIVISOR:
        td__buf_puts(o, "td_ew_sign() * (td_data_random ? exp2(td_ew_unif(-2.0, 2.0)) : "
                        "exp2(td_ew_grid(1, -2, 2)))");
        break;
    case ROLE_POS:
        td__buf_puts(o, "td_data_random ? exp2(td_ew_unif(-4.0, 4.0)) : "
                        "exp2(td_ew_grid(1, -4, 4))");
        break;
    case ROLE_SQRT:
        td__buf_puts(o, "td_data_random ? exp2(td_ew_unif(-4.0, 4.0)) : "
                        "td_ew_sq(td_ew_grid(8, 1, 16))");
        break;
    case ROLE_EXP:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-4.0, 4.0) : td_ew_grid(8, -16, 16)");
        break;
    case ROLE_EXP2:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-8.0, 8.0) : td_ew_grid(1, -8, 8)");
        break;
    case ROLE_SILU:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-5.0, 5.0) : td_ew_grid(8, -32, 32)");
        break;
    case ROLE_TOINT: {
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
    case ROLE_BIAS:
        td__buf_puts(o, "td_data_random ? td_ew_unif(-1.0, 1.0) : td_ew_grid(8, -8, 8)");
        break;
    case ROLE_BIAS_POS:
        td__buf_puts(o, "td_data_random ? td_ew_unif(0.0, 1.0) : td_ew_grid(8, 0, 8)");
        break;
    default:
        td__buf_puts(o, "td_data_random ? td_rand_normal() : td_ew_grid(8, -16, 16)");
        break;
    }
}

static const char ew_roles_doc[] =
    "/* Input generators of elementwise programs (the first use of a buffer\n"
    " * picks one; docs/verification.md).  td_ew_grid(q, lo, hi): k/q with k\n"
    " * uniform in [lo, hi], exact in every float dtype; td_ew_unif(lo, hi):\n"
    " * uniform in [lo, hi). */\n"
    "__attribute__((unused)) static inline double td_ew_grid(int q, long long lo,\n"
    "                                                       long long hi)\n"
    "{\n"
    "    return (double)(lo + (long long)(td_rng() % (unsigned long long)(hi - lo + 1))) / q;\n"
    "}\n"
    "__attribute__((unused)) static inline double td_ew_unif(double lo, double hi)\n"
    "{\n"
    "    return lo + (hi - lo) * td_rand_u01();\n"
    "}\n"
    "__attribute__((unused)) static inline double td_ew_sign(void)\n"
    "{\n"
    "    return td_rng() % 2 ? -1.0 : 1.0;\n"
    "}\n"
    "__attribute__((unused)) static inline double td_ew_sq(double v)\n"
    "{\n"
    "    return v * v;\n"
    "}\n"
    "\n"
    "/* A dst value: checked as td_check does, and its error counted in ulps\n"
    " * of the compute dtype (td_ew_ulp). */\n"
    "static double td_max_ulp = 0.0;\n"
    "static inline void td_ew_check(const char *buf, long long inst, long long elem,\n"
    "                        long long thread, long long slot, double got,\n"
    "                        double want, double tol)\n"
    "{\n"
    "    const long long before = td_mismatches;\n"
    "    td_check(buf, inst, elem, thread, slot, got, want, tol);\n"
    "    if (before == 0 && td_mismatches == 1 && got == TD_EW_SENTINEL)\n"
    "        strncat(td_first, \" (the dst sentinel: never written)\",\n"
    "                sizeof td_first - strlen(td_first) - 1);\n"
    "    else if (before == 0 && td_mismatches == 1 && want == TD_EW_SENTINEL)\n"
    "        strncat(td_first, \" (outside the dst region: written)\",\n"
    "                sizeof td_first - strlen(td_first) - 1);\n"
    "    const double err = got == want || (got != got && want != want)\n"
    "                           ? 0.0 : fabs(got - want);\n"
    "    const double u = td_ew_ulp[elem];\n"
    "    if (err <= tol && u > 0.0 && err / u > td_max_ulp)\n"
    "        td_max_ulp = err / u;\n"
    "}\n";

/* The generic part of the reference (file scope, before td_check). */
static const char ew_reference[] =
    "/* x rounded to nearest even with p significand bits, normal exponents\n"
    " * down to emin (below: the subnormal spacing) and overflow to inf. */\n"
    "static inline double td_round_float(double x, int p, int emin, double maxv)\n"
    "{\n"
    "    if (x == 0.0 || !std::isfinite(x))\n"
    "        return x;\n"
    "    int e;\n"
    "    frexp(x, &e);\n"
    "    const int lead = e - 1 < emin ? emin : e - 1;\n"
    "    const double q = ldexp(1.0, lead - p + 1);\n"
    "    const double r = nearbyint(x / q) * q;\n"
    "    return fabs(r) > maxv ? (r > 0 ? INFINITY : -INFINITY) : r;\n"
    "}\n"
    "/* The reference value as the dst dtype holds it: floats round to\n"
    " * nearest even, integers truncate (a C conversion) and wrap. */\n"
    "static inline double td_round_dst(double x)\n"
    "{\n"
    "    if (TD_DST_P > 0)\n"
    "        return td_round_float(x, TD_DST_P, TD_DST_EMIN, TD_DST_MAXV);\n"
    "    if (!std::isfinite(x))\n"
    "        return x;\n"
    "    x = trunc(x);\n"
    "    if (TD_DST_BITS >= 64)\n"
    "        return x;\n"
    "    const double m = ldexp(1.0, TD_DST_BITS);\n"
    "    x = fmod(x, m);\n"
    "    if (x < 0)\n"
    "        x += m;\n"
    "    if (TD_DST_SIGNED && x >= m / 2)\n"
    "        x -= m;\n"
    "    return x;\n"
    "}\n"
    "/* One ulp of the compute dtype at y (0 without a float). */\n"
    "static inline double td_ulp_c(double y)\n"
    "{\n"
    "    if (TD_C_P == 0)\n"
    "        return 0.0;\n"
    "    int e = TD_C_EMIN + 1;\n"
    "    if (y != 0.0 && std::isfinite(y))\n"
    "        frexp(y, &e);\n"
    "    const int lead = e - 1 < TD_C_EMIN ? TD_C_EMIN : e - 1;\n"
    "    return ldexp(1.0, lead - TD_C_P + 1);\n"
    "}\n"
    "/* Operand i's value for the dst element at region coordinates cd:\n"
    " * NumPy's right-aligned broadcasting (extent-1 dims repeat). */\n"
    "static inline double td_ew_operand(int i, const double *const *bufs,\n"
    "                                   const long long *cd)\n"
    "{\n"
    "    const td_ew_opnd *o = &td_ew_opnds[i];\n"
    "    if (o->buf < 0)\n"
    "        return o->value;\n"
    "    long long f = 0;\n"
    "    for (int j = 0; j < o->ndim; ++j) {\n"
    "        const int dd = TD_DST_NDIM - o->ndim + j;\n"
    "        const long long c = o->ext[j] == 1 || dd < 0 ? 0 : cd[dd];\n"
    "        f = f * o->shape[j] + o->start[j] + c;\n"
    "    }\n"
    "    return bufs[o->buf][f];\n"
    "}\n"
    "static double *td_ew_ulp; /* per dst element: one ulp (compute dtype) */\n"
    "/*\n"
    " * The expected dst of one instance: `init` (the staged values) with\n"
    " * every dst region element replaced by td_round_dst(op(operands)),\n"
    " * computed in double from the stored inputs.  tol[e] is ULPS ulps of\n"
    " * the compute dtype at the reference plus |f'(t)| times the rounding\n"
    " * the argument t may have taken (td_ew_f); 0 outside the region.\n"
    " * TD_TOL_SCALE (default 1) scales it (tests build with 0).\n"
    " */\n"
    "static inline void td_ew_reference(const double *const *bufs,\n"
    "                                   const double *init, double *want,\n"
    "                                   double *tol)\n"
    "{\n"
    "    if (td_ew_ulp == NULL)\n"
    "        td_ew_ulp = (double *)calloc(TD_DST_ELEMS, sizeof(double));\n"
    "    if (td_ew_ulp == NULL) {\n"
    "        printf(\"FAIL %s host out of memory\\n\", TD_NAME);\n"
    "        exit(TD_EXIT_FAIL);\n"
    "    }\n"
    "    for (long long e = 0; e < TD_DST_ELEMS; ++e) {\n"
    "        want[e] = init[e];\n"
    "        tol[e] = 0.0;\n"
    "        td_ew_ulp[e] = 0.0;\n"
    "    }\n"
    "    long long n = 1, cd[TD_DST_NDIM];\n"
    "    for (int d = 0; d < TD_DST_NDIM; ++d)\n"
    "        n *= td_dst_ext[d];\n"
    "    double v[TD_EW_NOPND + 1];\n"
    "    for (long long k = 0; k < n; ++k) {\n"
    "        long long q = k;\n"
    "        for (int d = TD_DST_NDIM - 1; d >= 0; --d) {\n"
    "            cd[d] = q % td_dst_ext[d];\n"
    "            q /= td_dst_ext[d];\n"
    "        }\n"
    "        for (int i = 0; i < TD_EW_NOPND; ++i)\n"
    "            v[i] = td_ew_operand(i, bufs, cd);\n"
    "        for (int i = 0; TD_EW_INT_COMPUTE && i < TD_EW_NSRC; ++i)\n"
    "            v[i] = trunc(v[i]);\n"
    "        double r = 0.0, dt = 0.0;\n"
    "        td_ew_f(v, &r, &dt);\n"
    "        const long long de = td_flat(TD_DST_NDIM, td_dst_shape, td_dst_start, cd);\n"
    "        want[de] = td_round_dst(r);\n"
    "        td_ew_ulp[de] = td_ulp_c(want[de]);\n"
    "        /* A rounded argument moves the reference's own rounding too:\n"
    "         * one more ulp where dt > 0. */\n"
    "        tol[de] = TD_TOL_SCALE * ((TD_EW_ULPS(r) + (dt > 0.0 ? 1.0 : 0.0)) *\n"
    "                                  td_ulp_c(want[de]) + dt + TD_EW_TINY) +\n"
    "                  TD_EW_INT_TOL;\n"
    "    }\n"
    "}\n";

void td__kp_ewise_tables(td_buf *o, const kp_plan *p)
{
    const td_call *c = p->call;
    const ew_plan *e = ew_of(p);
    const ew_op *op = e->op;
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
                   op->name, db->name, td_dtype_name(db->dtype),
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
    else if ((op->cls == EW_BINARY || op->cls == EW_FMA) && !same &&
             ulps < 1)
        ulps = 1; /* a conversion before or after the op rounds */
    else if ((op->cls == EW_CAST || op->cls == EW_FILL) && e->n == 1 &&
             e->o[0].dtype == TD_F64 && dp < 24)
        ulps = 1; /* float64 -> 16 bits may go through float32 */
    /* config rounding_mode rz / rm / rp (the packed paths): one more. */
    const td_config_entry *rm = td_call_config(c, "rounding_mode");
    if (ulps > 0 || (op->cls == EW_BINARY || op->cls == EW_FMA))
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
                           (op->cls == EW_UNARY || op->cls == EW_SILU)
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
    if (op->cls == EW_UNARY || op->cls == EW_SILU)
        td__buf_puts(o, "    double d = 0.0; /* |f'(t)| */\n");
    switch (op->cls) {
    case EW_ZERO:
        td__buf_printf(o, "    (void)v;\n    %s\n", op->f);
        break;
    case EW_FILL:
    case EW_CAST:
        td__buf_printf(o, "    const double t = v[0];\n    %s\n", op->f);
        break;
    case EW_SILU:
    case EW_UNARY: {
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
    case EW_BINARY:
        td__buf_printf(o,
                       "    const double a = v[0], b = v[1];\n    %s\n"
                       "    const double wa = td_ew_opnds[0].wider, "
                       "wb = td_ew_opnds[1].wider;\n",
                       op->f);
        if (strcmp(op->name, "add") == 0 || strcmp(op->name, "sub") == 0)
            td__buf_puts(o, "    dt = u * (fabs(a) * wa + fabs(b) * wb);\n");
        else if (strcmp(op->name, "maximum") == 0)
            td__buf_puts(o, "    dt = u * (fabs(a) * wa + fabs(b) * wb);\n");
        else
            td__buf_puts(o, "    dt = u * fabs(r) * (wa + wb);\n");
        break;
    case EW_FMA:
        td__buf_printf(o,
                       "    const double a = v[0], b = v[1], c = v[2];\n    %s\n"
                       "    /* a * b may round before the add (no fused "
                       "multiply-add) */\n"
                       "    dt = u * (fabs(a * b) * (1.0 + td_ew_opnds[0].wider + "
                       "td_ew_opnds[1].wider) + fabs(c) * td_ew_opnds[2].wider);\n",
                       op->f);
        break;
    }
    td__buf_puts(o, "    *rp = r;\n    *dtp = dt;\n}\n");
    /* Absolute terms: a flushed subnormal per math function; float32 log2
     * also __log2f's 2^-22 on [0.5, 2]. */
    double tiny = 0.0;
    if (op->cls == EW_UNARY || op->cls == EW_SILU)
        tiny = e->cfloat ? ldexp(1.0, cemin) : 0.0;
    if (strcmp(op->name, "log2") == 0 && cp == 24)
        tiny += ldexp(1.0, -22);
    td__buf_printf(o, "#define TD_EW_TINY %.17g\n", tiny);
    /* ULPS: a fixed count; float32 exp and silu add ceil(1.2 |t|)
     * (covers expf's 2 ulps and __expf's 2 + floor(1.173 |t|)). */
    bool grows = !c16 && cp == 24 && (strcmp(op->name, "exp") == 0 ||
                                      strcmp(op->name, "silu") == 0);
    if (grows) {
        td__buf_puts(o, "static inline double td_ew_arg(const double *v)\n{\n"
                        "    return v[0]");
        if (op->cls == EW_UNARY && e->scale >= 0)
            td__buf_printf(o, " * v[%d]", e->scale);
        if (op->cls == EW_UNARY && e->bias >= 0)
            td__buf_printf(o, " + v[%d]", e->bias);
        td__buf_printf(o, ";\n}\n#define TD_EW_ULPS(r) (%g + ceil(1.2 * "
                          "fabs(td_ew_arg(v))))\n",
                       ulps);
    } else {
        td__buf_printf(o, "#define TD_EW_ULPS(r) %g\n", ulps);
    }
    td__buf_puts(o, "\n");
}

void td__kp_ewise_ref_call(td_buf *o, const kp_plan *p)
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

void td__kp_ewise_helpers(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, ew_roles_doc);
}

const char *td__kp_ewise_reference_text(void)
{
    return ew_reference;
}
