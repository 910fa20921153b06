/*
 * Self-checking programs for gemm calls (ops of kind TD_OP_KIND_GEMM,
 * D = alpha * A' B' + beta * C with A' = A or its transpose, B' likewise):
 * the family's hooks (td__kp_gemm).
 *
 * Every operand is a register buffer with a fragment layout; the shared
 * staging (stage.c, write.c) gives each thread of the scope instance the
 * slots its layout says (the emitter declares each operand as a 1-D local
 * of its per-thread storage, the layout's slots) and stages them back
 * after the body, so D is checked in every slot of every lane, and A, B
 * and C must come back unchanged.  This family adds:
 *
 *   - the tables: for every (row, col) of the logical matrices D, A', B'
 *     and C, the element of its buffer (row-major over the buffer's
 *     shape, inside the call's region) that holds it;
 *   - the data, per dtype signature (GM_SIGS: TVM's float16 / bfloat16
 *     into float32, and the extension instructions' float16 accumulator,
 *     tf32, int8 / uint8 into int32 and the 8-bit floats): --data exact
 *     draws integers small enough that every product and partial sum is
 *     exact in the accumulator (the check is ==; the 8-bit integers take
 *     their whole range), --data random uniform values in [-1, 1]
 *     rounded to the dtype (tf32: float32 values with all their bits),
 *     checked against K + 1 times the signature's per-addition bound
 *     (fragments/gemm_reference.cuh says why; int32: exact, with C drawn
 *     near the ends of its range so that sums wrap);
 *   - adversarial staging: D's region starts as NaN (an int32 D as
 *     INT32_MIN), so a body that reads the old D (an accumulation it must
 *     not make) poisons its result; with beta = 0 C's region is poisoned
 *     as well, so a body that reads C when it must not fails; with beta =
 *     1 C holds its own values (D in place, c naming the dst region, keeps
 *     them as the accumulator);
 *   - the reference, in double.
 *
 * The register arrays are 16-byte aligned (kp_plan.reg_align): the body
 * reads A and B through 32-bit word views.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kp.h"
#include "kp_fragments.h"

/* A gemm's operands in the call: the dst and three source regions. */
enum { GM_A, GM_B, GM_C, GM_NSRC };

/*
 * The dtype signatures that have a reference, one row each: the inputs'
 * dtype (A and B), the accumulators' (C and D), and how the program draws
 * and checks its data.
 *
 *   exact      exact data: integers in [-exact, exact] in every float
 *              operand (halved to 1 when a partial sum could leave the
 *              exact integers; refused when even 1 could); 0: integers,
 *              the inputs over their dtype's whole range
 *   exact_bits partial sums (at most exact^2 K + exact) must stay below
 *              2^exact_bits: the accumulator's significand (float32 24,
 *              float16 11)
 *   unit       random data: each of the K + 1 additions errs by at most
 *              unit (sum |a b| + |beta c|) + floor: twice float32's unit
 *              roundoff of a truncating add (2^-22) for float32
 *              accumulators (the 8-bit floats' too: mma.sync's e4m3 /
 *              e5m2 sums on the H200 stayed within K 2^-22 sum |a b|,
 *              bench/gpu/results/h200-2026-12-02-mma-sync.txt, unlike the
 *              ~14 bits reported for Hopper's wgmma FP8 adds); one
 *              float16 ulp (2^-10) for float16 ones, with its subnormal
 *              step 2^-24 as the floor; 0 for int32
 */
typedef struct gm_sig {
    td_dtype ab, cd;
    const char *what;
    int exact;
    int exact_bits;
    double unit, floor;
    bool tf32;       /* float32 storage read as tf32: needs allow_tf32 */
} gm_sig;

static const gm_sig GM_SIGS[] = {
    {TD_F16, TD_F32, "float16 into float32", 2, 24, 0x1p-22, 0, false},
    {TD_BF16, TD_F32, "bfloat16 into float32", 2, 24, 0x1p-22, 0, false},
    {TD_F16, TD_F16, "float16 into float16", 2, 11, 0x1p-10, 0x1p-24, false},
    {TD_F32, TD_F32, "tf32 (float32 storage) into float32", 8, 24, 0x1p-22, 0,
     true},
    {TD_I8, TD_I32, "int8 into int32", 0, 0, 0, 0, false},
    {TD_U8, TD_I32, "uint8 into int32", 0, 0, 0, 0, false},
    {TD_F8E4M3, TD_F32, "float8_e4m3fn into float32", 4, 24, 0x1p-22, 0,
     false},
    {TD_F8E5M2, TD_F32, "float8_e5m2 into float32", 4, 24, 0x1p-22, 0, false},
};

typedef struct gm_plan {
    const gm_sig *sig;
    int exact;               /* exact data's bound (float signatures) */
    int d, a, b, c;          /* indices into the staged buffers */
    int64_t m, n, k;
    double alpha, beta;
    /* c names the dst region itself (D accumulates in place). */
    bool in_place;
    /* Per logical position: the element of the buffer's instance. */
    int *dix, *cix;          /* [m][n] */
    int *aix;                /* [m][k] of A' */
    int *bix;                /* [k][n] of B' */
} gm_plan;

static gm_plan *gm_of(const kp_plan *p)
{
    return (gm_plan *)p->fam_data;
}

/* A literal's value (alpha, beta), false when the operand is none. */
static bool gm_literal(const td_operand *l, double *v)
{
    if (l->kind != TD_OPERAND_LITERAL)
        return false;
    *v = td_dtype_is_float(l->dtype) ? l->value : (double)l->ivalue;
    return true;
}

/* The two dimensions of region r whose extents are not 1 (TVM's
 * _mat_extents), into d0, d1; a 2-D region with an extent of 1 is its
 * own two dimensions.  False when neither holds. */
static bool gm_dims(const td_region *r, int *d0, int *d1)
{
    int n = 0, dims[TD_MAX_RANK];
    for (int d = 0; d < r->ndim; d++)
        if (r->extent[d] != 1)
            dims[n++] = d;
    if (n == 2) {
        *d0 = dims[0];
        *d1 = dims[1];
        return true;
    }
    if (r->ndim == 2) {
        *d0 = 0;
        *d1 = 1;
        return true;
    }
    return false;
}

/* Row-major element in buffer b of position (x, y) of region r's matrix
 * (dimensions d0, d1). */
static int64_t gm_elem(const td_buffer *b, const td_region *r, int d0, int d1,
                       int64_t x, int64_t y)
{
    int64_t e = 0;
    for (int d = 0; d < b->ndim; d++) {
        int64_t i = r->start[d] + (d == d0 ? x : d == d1 ? y : 0);
        e = e * b->shape[d] + i;
    }
    return e;
}

/* The table of region r: rows x cols positions, entry (x, y) at
 * x * cols + y, of the matrix or (transposed) of its transpose. */
static int *gm_table(const td_buffer *b, const td_region *r, int d0, int d1,
                     int64_t rows, int64_t cols, bool transposed)
{
    int *t = td__malloc((size_t)(rows * cols) * sizeof *t);
    if (t == NULL)
        return NULL;
    for (int64_t x = 0; x < rows; x++)
        for (int64_t y = 0; y < cols; y++)
            t[x * cols + y] = (int)(transposed
                                        ? gm_elem(b, r, d0, d1, y, x)
                                        : gm_elem(b, r, d0, d1, x, y));
    return t;
}

static const char *const GM_NAMES[] = {"a", "b", "c"};

/* mma.sync is warp-collective: every warp of the scope instance issues it
 * with its own registers.  A fragment whose layout names only the lanes of
 * one warp (laneid, or a thread axis of extent 32 at cta scope) is the
 * same fragment in every warp (TVM's choice: every warp computes the same
 * tile; docs/gemm.md), so each warp is staged, and D checked, as the
 * first. */
static void gm_replicate_warps(kp_plan *p)
{
    if (p->tpi <= 32 || p->tpi % 32 != 0)
        return;
    for (int i = 0; i < p->nbufs; i++) {
        kp_buf *kb = &p->bufs[i];
        if (kb->map == NULL)
            continue;
        int64_t first = 32 * kb->slots, all = p->tpi * kb->slots;
        bool rest_empty = true;
        for (int64_t j = first; j < all && rest_empty; j++)
            rest_empty = kb->map[j] < 0;
        if (!rest_empty)
            continue;
        for (int64_t j = first; j < all; j++)
            kb->map[j] = kb->map[j % first];
    }
}

static int gm_plan_fn(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *call = p->call;
    gm_plan *g = td__kp_fam_data(p, sizeof *g);
    if (g == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    if (call->nsrcs != GM_NSRC)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "a gemm takes the regions a, b and c");
    const td_region *reg[4] = {&call->dst, &call->srcs[GM_A].region,
                               &call->srcs[GM_B].region,
                               &call->srcs[GM_C].region};
    const td_buffer *buf[4];
    int d0[4], d1[4];
    for (int i = 0; i < 4; i++) {
        const char *what = i == 0 ? "dst" : GM_NAMES[i - 1];
        if (i > 0 && call->srcs[i - 1].kind != TD_OPERAND_REGION)
            return td__kp_fail(diag, call, TD_EINVAL,
                               "gemm operand %s is not a region", what);
        buf[i] = td__region_buffer(call, reg[i]);
        if (buf[i] == NULL)
            return td__kp_fail(diag, call, TD_EINVAL,
                               "gemm operand %s does not name a buffer", what);
        if (td__region_symbolic(reg[i]) || td__region_dynamic(reg[i]))
            return td__kp_fail(diag, call, TD_EINVAL,
                               "gemm operand %s: a region whose start depends "
                               "on the block ids or a scalar has no program",
                               what);
        if (!gm_dims(reg[i], &d0[i], &d1[i]))
            return td__kp_fail(diag, call, TD_EINVAL,
                               "gemm operand %s: the region is not a matrix "
                               "(two extents other than 1)", what);
    }
    if (buf[1] == buf[0] || buf[2] == buf[0])
        return td__kp_fail(diag, call, TD_EINVAL,
                           "gemm: A or B is the dst buffer %s",
                           buf[0]->name);
    /* A signature of GM_SIGS: A and B of one dtype, C and D of one. */
    if (buf[1]->dtype != buf[2]->dtype || buf[0]->dtype != buf[3]->dtype)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "no gemm reference for inputs %s x %s into %s / "
                           "%s (A and B, C and D of one dtype each): the "
                           "call has no self-checking program yet",
                           td_dtype_name(buf[1]->dtype),
                           td_dtype_name(buf[2]->dtype),
                           td_dtype_name(buf[3]->dtype),
                           td_dtype_name(buf[0]->dtype));
    for (size_t i = 0; i < sizeof GM_SIGS / sizeof *GM_SIGS; i++)
        if (GM_SIGS[i].ab == buf[1]->dtype && GM_SIGS[i].cd == buf[0]->dtype)
            g->sig = &GM_SIGS[i];
    if (g->sig == NULL)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "no gemm reference for %s inputs into a %s "
                           "accumulator (buffers %s, %s): the call has no "
                           "self-checking program yet",
                           td_dtype_name(buf[1]->dtype),
                           td_dtype_name(buf[0]->dtype), buf[1]->name,
                           buf[0]->name);
    /* float32 inputs compute in tf32 only with the opt-in (the mma_ext
     * variant's rule); another variant would compute in float32, which
     * this reference does not model. */
    if (g->sig->tf32 && !td_call_config_bool(call, "allow_tf32", false))
        return td__kp_fail(diag, call, TD_EINVAL,
                           "no gemm reference for float32 inputs without "
                           "config allow_tf32: true (the reference reads "
                           "them as tf32): the call has no self-checking "
                           "program yet");
    if (!gm_literal(&call->alpha, &g->alpha) ||
        !gm_literal(&call->beta, &g->beta) || !isfinite(g->alpha) ||
        !isfinite(g->beta))
        return td__kp_fail(diag, call, TD_EINVAL,
                           "gemm alpha and beta must be finite literals");
    const td_region *ra = reg[1], *rb = reg[2], *rd = reg[0], *rc = reg[3];
    int64_t da0 = ra->extent[d0[1]], da1 = ra->extent[d1[1]];
    int64_t db0 = rb->extent[d0[2]], db1 = rb->extent[d1[2]];
    g->m = call->transpose_a ? da1 : da0;
    g->k = call->transpose_a ? da0 : da1;
    g->n = call->transpose_b ? db0 : db1;
    int64_t kb = call->transpose_b ? db1 : db0;
    if (kb != g->k || rd->extent[d0[0]] != g->m ||
        rd->extent[d1[0]] != g->n || rc->extent[d0[3]] != g->m ||
        rc->extent[d1[3]] != g->n)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "gemm shapes disagree (M %" PRId64 ", N %" PRId64
                           ", K %" PRId64 ")", g->m, g->n, g->k);
    if (g->m * g->n > KP_MAX_TABLE || g->m * g->k > KP_MAX_TABLE ||
        g->k * g->n > KP_MAX_TABLE)
        return td__kp_fail(diag, call, TD_ELIMIT,
                           "gemm of %" PRId64 " x %" PRId64 " x %" PRId64
                           " is too large for a program", g->m, g->n, g->k);
    /* Exact data: every partial sum of products of integers in [-r, r]
     * (at most r^2 K + r with C) must be an exact integer of the
     * accumulator. */
    const gm_sig *sig = g->sig;
    g->exact = sig->exact;
    if (g->exact > 0 &&
        (double)g->exact * g->exact * (double)g->k + g->exact >
            ldexp(1.0, sig->exact_bits))
        g->exact = 1;
    if (g->exact > 0 &&
        (double)g->k + 1 > ldexp(1.0, sig->exact_bits))
        return td__kp_fail(diag, call, TD_ELIMIT,
                           "gemm of K %" PRId64 " %s: a sum of K + 1 terms "
                           "of magnitude 1 leaves the accumulator's exact "
                           "integers (2^%d), so exact data has no exact "
                           "reference", g->k, sig->what, sig->exact_bits);
    if (sig->cd == TD_I32 &&
        (g->alpha != floor(g->alpha) || g->beta != floor(g->beta)))
        return td__kp_fail(diag, call, TD_EINVAL,
                           "gemm into int32 with alpha %g, beta %g: the "
                           "reference needs integer alpha and beta",
                           g->alpha, g->beta);
    p->nbufs = 0;
    kp_buf *ka = td__kp_add_buf(p, buf[1], true, false);
    kp_buf *kbb = td__kp_add_buf(p, buf[2], true, false);
    kp_buf *kc = td__kp_add_buf(p, buf[3], true, false);
    kp_buf *kd = td__kp_add_buf(p, buf[0], false, true);
    if (ka == NULL || kbb == NULL || kc == NULL || kd == NULL)
        return td__kp_fail(diag, call, TD_ELIMIT, "too many buffers");
    g->a = (int)(ka - p->bufs);
    g->b = (int)(kbb - p->bufs);
    g->c = (int)(kc - p->bufs);
    g->d = (int)(kd - p->bufs);
    for (int i = 0; i < p->nbufs; i++)
        if (strcmp(p->bufs[i].b->scope, "local") != 0)
            return td__kp_fail(diag, call, TD_EINVAL,
                               "gemm buffer %s: scope '%s' (the program "
                               "stages register fragments)",
                               p->bufs[i].b->name, p->bufs[i].b->scope);
    p->reg_align = 16;
    int err = td__kp_check_bufs(p, ir, diag);
    if (err != 0)
        return err;
    gm_replicate_warps(p);
    g->dix = gm_table(buf[0], rd, d0[0], d1[0], g->m, g->n, false);
    g->cix = gm_table(buf[3], rc, d0[3], d1[3], g->m, g->n, false);
    g->aix = gm_table(buf[1], ra, d0[1], d1[1], g->m, g->k,
                      call->transpose_a);
    g->bix = gm_table(buf[2], rb, d0[2], d1[2], g->k, g->n,
                      call->transpose_b);
    if (g->dix == NULL || g->cix == NULL || g->aix == NULL || g->bix == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    /* C in D's buffer: the dst region itself (in place, nothing
     * poisoned), or apart from it (D's region poisoned, C's kept). */
    if (g->c == g->d) {
        size_t n = (size_t)(g->m * g->n);
        g->in_place = memcmp(g->dix, g->cix, n * sizeof *g->dix) == 0;
        for (size_t i = 0; i < n && !g->in_place; i++)
            for (size_t j = 0; j < n; j++)
                if (g->cix[i] == g->dix[j])
                    return td__kp_fail(diag, call, TD_EINVAL,
                                       "gemm: c overlaps the dst region "
                                       "without being it (buffer %s)",
                                       buf[0]->name);
    }
    return 0;
}

static void gm_tables(td_buf *o, const kp_plan *p)
{
    const gm_plan *g = gm_of(p);
    const gm_sig *sig = g->sig;
    const td_call *call = p->call;
    td__buf_printf(o,
                   "/* gemm D = %.17g * A%s B%s + %.17g * C, M %" PRId64
                   ", N %" PRId64 ", K %" PRId64 ": %s. */\n"
                   "#define TD_GM_M %" PRId64 "\n#define TD_GM_N %" PRId64
                   "\n#define TD_GM_K %" PRId64 "\n"
                   "#define TD_GM_ALPHA %.17g\n#define TD_GM_BETA %.17g\n",
                   g->alpha, call->transpose_a ? "^T" : "",
                   call->transpose_b ? "^T" : "", g->beta, g->m, g->n, g->k,
                   sig->what, g->m, g->n, g->k, g->alpha, g->beta);
    td__buf_printf(o,
                   "/* A and B read as tf32 (their low 13 mantissa bits "
                   "dropped): %d; int32\n * accumulators (exact, wrapping): "
                   "%d. */\n"
                   "#define TD_GM_TF32 %d\n#define TD_GM_INT %d\n",
                   sig->tf32, sig->cd == TD_I32, sig->tf32,
                   sig->cd == TD_I32);
    if (sig->cd == TD_I32)
        td__buf_puts(o, "/* Random data is exact too (tolerance 0). */\n"
                        "#define TD_GM_TOL_UNIT 0.0\n"
                        "#define TD_GM_TOL_FLOOR 0.0\n"
                        "/* The poison of D's region (and C's at beta 0): "
                        "int32 has no NaN. */\n"
                        "#define TD_GM_POISON (-2147483648.0)\n");
    else
        td__buf_printf(o,
                       "/* Random data: each of the K + 1 additions errs by "
                       "at most\n * TD_GM_TOL_UNIT (sum |a b| + |beta c|) + "
                       "TD_GM_TOL_FLOOR (%s). */\n"
                       "#define TD_GM_TOL_UNIT %.17g /* 2^%d */\n"
                       "#define TD_GM_TOL_FLOOR %.17g\n"
                       "#define TD_GM_POISON NAN\n",
                       sig->cd == TD_F16
                           ? "one float16 ulp; its subnormal step"
                           : "twice float32's unit roundoff of a truncating "
                             "add",
                       sig->unit, (int)log2(sig->unit), sig->floor);
    td__buf_printf(o,
                   "#define TD_DST_ELEMS %" PRId64 "LL /* D elements per "
                   "instance */\n"
                   "/* 16-bit floats are only stored and converted here (the "
                   "mma reads\n * them as words): the CPU stand-in runs it "
                   "(tests/cuda/emu.py). */\n"
                   "#define TD_EMU_16BIT_STORAGE 1\n",
                   p->bufs[g->d].elems);
    if (p->fp8)
        td__buf_puts(o, "/* So are the 8-bit floats. */\n"
                        "#define TD_EMU_FP8_STORAGE 1\n");
    td__buf_puts(o, "/* The element of each buffer's instance that holds "
                    "position (row, col) of\n"
                    " * D, C ([M][N]), A' ([M][K]) and B' ([K][N]): row-major "
                    "over the buffer's\n"
                    " * shape, inside the call's region (A' and B' through "
                    "the transposes). */\n");
    td__kp_int_table(o, "td_gm_d", g->dix, g->m * g->n);
    td__kp_int_table(o, "td_gm_c", g->cix, g->m * g->n);
    td__kp_int_table(o, "td_gm_a", g->aix, g->m * g->k);
    td__kp_int_table(o, "td_gm_b", g->bix, g->k * g->n);
    td__buf_puts(o, "\n");
}

static void gm_reference(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_tol);
    td__buf_puts(o, td__kp_frag_gemm_reference);
    td__buf_puts(o, "\n");
}

/* Float signatures: exact integers in [-r, r] (gm_plan.exact), random
 * uniform in [-1, 1] (rounded to the dtype when staged; tf32 keeps all of
 * float32's bits).  8-bit integers: their whole range in both modes.
 * int32 accumulators: exact within 2^24 of 0 (no sum wraps), random
 * td_gm_rand_s32 (some sums wrap).  D's region and, with beta = 0, C's
 * are poisoned by gm_fill. */
static void gm_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    const gm_plan *g = gm_of(p);
    switch (kb->b->dtype) {
    case TD_I8:
        td__buf_puts(o, "td_rand_int(-128, 127)");
        return;
    case TD_U8:
        td__buf_puts(o, "td_rand_int(0, 255)");
        return;
    case TD_I32:
        td__buf_puts(o, "td_data_random ? td_gm_rand_s32() : "
                        "td_rand_int(-16777216, 16777216)");
        return;
    default:
        td__buf_printf(o,
                       "td_data_random ? 2.0 * td_rand_u01() - 1.0 : "
                       "td_rand_int(-%d, %d)",
                       g->exact, g->exact);
        return;
    }
}

/* int32 accumulators: the random draw of C (and D outside its region). */
static void gm_helpers(td_buf *o, const kp_plan *p)
{
    if (gm_of(p)->sig->cd != TD_I32)
        return;
    td__buf_puts(o,
                 "/* Random int32 accumulator values: half uniform over "
                 "int32, half within\n"
                 " * 2^20 of its ends, so that some sums of K products wrap "
                 "(mma's int32\n"
                 " * add without .satfinite wraps; td_gm_wrap32). */\n"
                 "static double td_gm_rand_s32(void)\n"
                 "{\n"
                 "    /* td_rng's two top bits (of 31), then 32 bits of "
                 "two draws. */\n"
                 "    const unsigned long long r = td_rng() >> 29;\n"
                 "    if (r & 1) {\n"
                 "        const unsigned long long u = (td_rng() << 16 ^ "
                 "td_rng()) & 0xffffffffULL;\n"
                 "        return (double)(long long)u - 2147483648.0;\n"
                 "    }\n"
                 "    const double off = td_rand_int(0, (1 << 20) - 1);\n"
                 "    return r & 2 ? 2147483647.0 - off : -2147483648.0 + "
                 "off;\n"
                 "}\n\n");
}

static void gm_fill(td_buf *o, const kp_plan *p)
{
    const gm_plan *g = gm_of(p);
    const kp_buf *kd = &p->bufs[g->d], *kc = &p->bufs[g->c];
    bool in_place = g->in_place;
    td__buf_puts(o, "        /* Poison: D's region is TD_GM_POISON (a body "
                    "that reads the old D fails)");
    if (g->beta == 0.0 && !in_place)
        td__buf_puts(o, ", and so is C's\n         * (beta = 0: a body that "
                        "reads C fails)");
    if (in_place)
        td__buf_puts(o, ";\n         * not here: C is D's region in place "
                        "(beta = 1: the accumulator)");
    td__buf_puts(o, ". */\n");
    if (in_place && g->beta != 0.0)
        return;
    td__buf_printf(o,
                   "        for (long long inst = 0; inst < TD_INSTANCES; "
                   "++inst)\n"
                   "            for (int q = 0; q < TD_GM_M * TD_GM_N; ++q) {\n"
                   "                v_in_%s[inst * %" PRId64 "LL + td_gm_d[q]] = "
                   "TD_GM_POISON;\n",
                   kd->b->name, kd->elems);
    if (g->beta == 0.0 && !in_place)
        td__buf_printf(o,
                       "                v_in_%s[inst * %" PRId64
                       "LL + td_gm_c[q]] = TD_GM_POISON;\n",
                       kc->b->name, kc->elems);
    td__buf_puts(o, "            }\n");
}

static void gm_ref_call(td_buf *o, const kp_plan *p)
{
    const gm_plan *g = gm_of(p);
    const kp_buf *b[4] = {&p->bufs[g->a], &p->bufs[g->b], &p->bufs[g->c],
                          &p->bufs[g->d]};
    td__buf_puts(o, "            td_gm_reference(");
    for (int i = 0; i < 4; i++)
        td__buf_printf(o, "%sv_in_%s + inst * %" PRId64 "LL", i ? ", " : "",
                       b[i]->b->name, b[i]->elems);
    td__buf_puts(o, ", td_want, td_tol);\n");
}

static void gm_header(td_buf *o, const kp_plan *p)
{
    const gm_plan *g = gm_of(p);
    const bool integer = g->sig->cd == TD_I32;
    td__buf_printf(o,
                   " * gemm (%s): M %" PRId64 ", N %" PRId64 ", K %" PRId64
                   "; every slot of every\n"
                   " * operand staged through its layout; D's region starts "
                   "as %s%s;\n"
                   " * D must equal the reference (exact data: ==; random: "
                   "%s),\n"
                   " * A, B, C must come back unchanged.\n",
                   g->sig->what, g->m, g->n, g->k,
                   integer ? "INT32_MIN" : "NaN",
                   g->beta == 0.0 && !g->in_place ? ", and C's (beta = 0)"
                                                  : "",
                   integer ? "== too, with sums that wrap"
                   : g->sig->tf32
                       ? "inputs truncated to tf32, then the float32 bound"
                       : "the accumulation bound");
}

/* Four rounds, new data each, the guard bytes alternating. */
static int gm_rounds(const kp_plan *p)
{
    (void)p;
    return 4;
}

static void gm_pass(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_reduce_pass);
}

static void gm_free(kp_plan *p)
{
    gm_plan *g = gm_of(p);
    if (g == NULL)
        return;
    td__free(g->dix);
    td__free(g->cix);
    td__free(g->aix);
    td__free(g->bix);
    g->dix = g->cix = g->aix = g->bix = NULL;
}

const kp_family td__kp_gemm = {
    .kind = TD_OP_KIND_GEMM,
    .what = "a gemm",
    .plan = gm_plan_fn,
    .header = gm_header,
    .tables = gm_tables,
    .reference = gm_reference,
    .helpers = gm_helpers,
    .gen_expr = gm_gen_expr,
    .rounds = gm_rounds,
    .fill = gm_fill,
    .ref_call = gm_ref_call,
    .dst_check = "td_check",
    .pass = gm_pass,
    .free = gm_free,
    .float8 = true,
};
