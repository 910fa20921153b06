/*
 * Self-checking programs for copy calls (ops of kind TD_OP_KIND_COPY): the
 * family's hooks (td__kp_copy).  A copy moves bits, so the program checks
 * bits (kp_family.bits: the host keeps raw bits, never doubles):
 *
 *   - the source's elements get distinct bit patterns (--data exact: the
 *     element's index scrambled to the dtype's width; --data random: a hash
 *     of the index, the round and the seed); float sources stay finite and
 *     normal unless config kernel_specials mixes in NaN payloads, +-inf,
 *     +-0 and subnormals;
 *   - the destination's whole storage starts as a sentinel no source value
 *     has (a negative NaN for floats): every element outside the region,
 *     every register slot no element owns, every guard element around a
 *     global array;
 *   - after the launch every dst position must hold the bits of its paired
 *     source element (the k-th element of the dst region pairs with the
 *     k-th of the src region, both row-major; unit dims change nothing) or,
 *     outside the region, still the sentinel ("written outside the
 *     region"); the source must come back unchanged;
 *   - global operands are kernel parameters (one array for every
 *     instance).  When the dst is global every instance writes the same
 *     array, so every instance's source gets the same data (the key of an
 *     element is its index in the instance, not in the program).  A
 *     source region whose start depends on the block ids is each block's
 *     own tile of the global source: the reference of an instance reads
 *     it at the offset its block adds.  A dst region of that kind is each
 *     block's own tile of the global dst: the expected array has every
 *     block's tile (cp_tables_fill).  A source start that depends on the
 *     call's declared scalars is read where the program's values put it:
 *     each scalar is a kernel parameter.  Where every declared scalar has
 *     a range and the ranges give at most KP_MAX_SV_ALL sets of values,
 *     the program runs every set (set r / 2 in rounds r, two rounds each,
 *     with tables per set: td_sv_use), so a predicate or an offset that
 *     is wrong at one value inside the range fails there; otherwise a
 *     covering sweep of at most KP_MAX_SV sets (cp_scalar_sets: each
 *     scalar through its values, the others at the last of their
 *     ranges), stated in the program's header.  A predicate expression over
 *     the scalars is evaluated at each set: where it is 0 the copy is
 *     skipped and the whole dst must keep the sentinel (not run with
 *     fill_mode zero, whose zero fill has no source to check); a
 *     predicate over the thread or block ids is refused (it may skip
 *     part of the copy).
 *
 * The shared staging puts a barrier after the body before any buffer is
 * staged out (the emitted copy has none of its own).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kp.h"
#include "kp_fragments.h"

typedef struct cp_plan {
    int src, dst;           /* indices into the staged buffers */
    int64_t region;         /* elements of either region */
    int64_t nwant;          /* dst positions per instance (TD_DST_ELEMS) */
    int *dlog, *slog, *sidx; /* per dst position; -1: none (see tables);
                                slog and sidx: nsv tables of nwant */
    bool specials;
    bool blocked;           /* the src region's start depends on the block
                               ids: each block copies its own tile */
    int64_t blk[3];         /* the src elements blockIdx.x, .y, .z add */
    bool dst_blocked;       /* the dst region's too: the tables cover every
                               block's tile of the global dst */
    int64_t sdyn[KP_MAX_SV]; /* the src elements the declared scalars add
                               at each set of values the program passes */
    bool skip[KP_MAX_SV];   /* the predicate is 0 at that set */
    int nsv;                /* sets of scalar values (at least 1) */
    int cover;              /* 0: every combination; else the covering
                               sweep's run length (cp_scalar_sets) */
} cp_plan;

/* The longest run of a scalar's values a covering sweep keeps, tried in
 * this order until the sets fit KP_MAX_SV (cp_scalar_sets). */
static const int cp_cover_lens[] = {16, 13, 5, 2};

/* The sets of values the program passes for the declared scalars, into
 * sv (at most KP_MAX_SV); returns how many.  *cover is 0 when they are
 * every combination of the ranges' values (the first scalar slowest):
 * every scalar has a range and the combinations are at most
 * KP_MAX_SV_ALL.  Otherwise a covering sweep, *cover its run length L:
 * each scalar with a range of two values or more runs through its
 * values with every other scalar at its base value (the last of its
 * range, where the bounds were checked; 0 without one), then the base
 * set; a scalar's values are every value of its range when it has at
 * most L of them, else its first L - 1 (every residue mod 2 to L - 1)
 * and its last.  L is the first of cp_cover_lens whose sets fit
 * KP_MAX_SV. */
static int cp_scalar_sets(const td_call *call,
                          int64_t sv[KP_MAX_SV][TD_MAX_SCALARS], int *cover)
{
    int n = call->nscalars < TD_MAX_SCALARS ? call->nscalars
                                            : TD_MAX_SCALARS;
    int64_t sets = 1;
    *cover = 0;
    for (int j = 0; j < n; j++) {
        const td_scalar *s = &call->scalars[j];
        if (!s->has_range || s->hi - s->lo < 1 ||
            s->hi - s->lo > KP_MAX_SV_ALL) {
            sets = 0;
            break;
        }
        sets *= s->hi - s->lo;
        if (sets > KP_MAX_SV_ALL) {
            sets = 0;
            break;
        }
    }
    if (sets >= 1) {
        for (int64_t k = 0; k < sets; k++) {
            int64_t q = k;
            for (int j = n - 1; j >= 0; j--) {
                const td_scalar *s = &call->scalars[j];
                sv[k][j] = s->lo + q % (s->hi - s->lo);
                q /= s->hi - s->lo;
            }
        }
        return (int)sets;
    }
    /* The covering sweep: run lengths per scalar (0: it stays at its
     * base value). */
    int64_t len[TD_MAX_SCALARS] = {0};
    for (int j = 0; j < n; j++) {
        const td_scalar *s = &call->scalars[j];
        len[j] = s->has_range && s->hi - s->lo >= 2 ? s->hi - s->lo : 0;
    }
    int L = 0;
    for (size_t i = 0; i < sizeof cp_cover_lens / sizeof *cp_cover_lens;
         i++) {
        int64_t total = 1;
        for (int j = 0; j < n; j++)
            if (len[j] > 0)
                total += (len[j] < cp_cover_lens[i] ? len[j]
                                                    : cp_cover_lens[i]) - 1;
        if (total <= KP_MAX_SV) {
            L = cp_cover_lens[i];
            break;
        }
    }
    int k = 0;
    for (int j = 0; j < n && L > 0; j++) {
        if (len[j] == 0)
            continue;
        /* Every value but the base (the last): lo, lo + 1, ... */
        int64_t run = (len[j] < L ? len[j] : L) - 1;
        for (int64_t t = 0; t < run; t++, k++) {
            for (int i = 0; i < n; i++)
                sv[k][i] = call->scalars[i].has_range
                               ? call->scalars[i].hi - 1 : 0;
            sv[k][j] = call->scalars[j].lo + t;
        }
    }
    for (int i = 0; i < n; i++)
        sv[k][i] = call->scalars[i].has_range ? call->scalars[i].hi - 1 : 0;
    *cover = k > 0 ? L : 0;
    return k + 1;
}

/* The row-major element offset region r of buffer b moves by when the
 * call's scalars take the values sv. */
static int64_t cp_scalar_off(const td_call *call, const td_buffer *b,
                             const td_region *r, const int64_t *sv)
{
    int64_t off = 0, stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++)
            off += r->scalar_coef[d][j] * sv[j] * stride;
        stride *= b->shape[d];
    }
    return off;
}

static cp_plan *cp_of(const kp_plan *p)
{
    return (cp_plan *)p->fam_data;
}

/* The sentinel and the gap bits of a dtype: for floats a negative NaN
 * (0xA5.. in its payload), which no exact or random source value is; for
 * integers 0xA5.. (the generator steps off it). */
static unsigned long long cp_sentinel(td_dtype t)
{
    switch (t) {
    case TD_F32: return 0xFFA5A5A5ULL;
    case TD_F16: return 0xFDA5ULL;
    case TD_BF16: return 0xFFA5ULL;
    case TD_F64: return 0xFFF5A5A5A5A5A5A5ULL;
    case TD_F8E4M3: return 0xFFULL;
    case TD_F8E5M2: return 0xFDULL;
    default: break;
    }
    int bits = td_dtype_bits(t);
    unsigned long long a = 0xA5A5A5A5A5A5A5A5ULL;
    return bits >= 64 ? a : a & ((1ULL << bits) - 1);
}

/* Exponent and mantissa bits of a float dtype (0, 0: an integer). */
static void cp_fmt(td_dtype t, int *ebits, int *mbits)
{
    switch (t) {
    case TD_F32: *ebits = 8; *mbits = 23; break;
    case TD_F16: *ebits = 5; *mbits = 10; break;
    case TD_BF16: *ebits = 8; *mbits = 7; break;
    case TD_F64: *ebits = 11; *mbits = 52; break;
    case TD_F8E4M3: *ebits = 4; *mbits = 3; break;
    case TD_F8E5M2: *ebits = 5; *mbits = 2; break;
    default: *ebits = 0; *mbits = 0; break;
    }
}

/* Row-major flat index in buffer b of the k-th element of region r. */
static int64_t cp_elem(const td_buffer *b, const td_region *r, int64_t k)
{
    int64_t idx[TD_MAX_RANK];
    for (int d = r->ndim - 1; d >= 0; d--) {
        idx[d] = r->start[d] + k % r->extent[d];
        k /= r->extent[d];
    }
    int64_t e = 0;
    for (int d = 0; d < b->ndim; d++)
        e = e * b->shape[d] + idx[d];
    return e;
}

/* The row-major element offset the block ids of block `blk` (x fastest)
 * add to the start of region r of buffer b. */
static int64_t cp_block_off(const kp_plan *p, const td_buffer *b,
                            const td_region *r, int64_t blk)
{
    int64_t id[3] = {blk % p->grid[0], blk / p->grid[0] % p->grid[1],
                     blk / (p->grid[0] * p->grid[1])};
    int64_t off = 0, stride = 1;
    for (int d = b->ndim - 1; d >= 0; d--) {
        for (int k = 0; k < 3; k++)
            off += r->block_coef[d][k] * id[k] * stride;
        stride *= b->shape[d];
    }
    return off;
}

/* The src tables of one set of scalar values (cp_tables_fill). */
static void cp_tables_set(const kp_plan *p, const cp_plan *c, int set,
                          int *slog, int *sidx)
{
    const td_call *call = p->call;
    const kp_buf *sk = &p->bufs[c->src], *dk = &p->bufs[c->dst];
    const td_region *sr = &call->srcs[0].region;
    int64_t nb = c->dst_blocked ? p->nblocks : 1;
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t doff = 0, soff = 0;
        if (c->dst_blocked) {
            doff = cp_block_off(p, dk->b, &call->dst, blk);
            soff = c->blocked ? cp_block_off(p, sk->b, sr, blk) : 0;
        }
        for (int64_t k = 0; k < c->region; k++) {
            int64_t de = cp_elem(dk->b, &call->dst, k) + doff;
            int64_t se = cp_elem(sk->b, sr, k) + soff + c->sdyn[set];
            int64_t pos = dk->global
                              ? dk->gpad + (dk->phys ? dk->phys[de] : de)
                              : de;
            slog[pos] = (int)se;
            sidx[pos] = (int)(sk->global ? sk->gpad + (sk->phys
                                                           ? sk->phys[se]
                                                           : se)
                                         : se);
        }
    }
}

/* The per-position tables: for every position of the dst's host array of
 * one instance, the dst element there, the src element it pairs with and
 * where that is in the src's host array.  A block-tiled dst (global) has
 * every block's tile in them: each block writes its own, and every
 * instance's source holds the same data, so one table serves every
 * instance (a block-tiled src is then read at its block's offset there,
 * not in the reference call). */
static int cp_tables_fill(kp_plan *p, cp_plan *c, td_diag *diag)
{
    const td_call *call = p->call;
    const kp_buf *dk = &p->bufs[c->dst];
    c->nwant = dk->global ? td__kp_nin(p, dk) : dk->elems;
    if (c->nwant > KP_MAX_TABLE)
        return td__kp_fail(diag, call, TD_ELIMIT,
                           "dst buffer %s: %" PRId64 " positions to check "
                           "(at most %" PRId64 ")",
                           dk->b->name, c->nwant, KP_MAX_TABLE);
    /* Tables per set past the limit: the last set the predicate keeps
     * alone (as the scalars' fixed values). */
    if (c->nsv > 1 && c->nsv * c->nwant > KP_MAX_TABLE) {
        int last = c->nsv - 1;
        while (last > 0 && c->skip[last])
            last--;
        c->sdyn[0] = c->sdyn[last];
        c->skip[0] = false;
        for (int i = 0; i < p->nscalars; i++)
            p->scalars[i].value = p->sv[last][i];
        c->nsv = 1;
        p->nsv = 0;
    }
    size_t n = (size_t)c->nwant, ns = (size_t)c->nsv;
    c->dlog = td__malloc(n * sizeof *c->dlog);
    c->slog = td__malloc(ns * n * sizeof *c->slog);
    c->sidx = td__malloc(ns * n * sizeof *c->sidx);
    if (c->dlog == NULL || c->slog == NULL || c->sidx == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    for (size_t i = 0; i < n; i++)
        c->dlog[i] = -1;
    for (size_t i = 0; i < ns * n; i++)
        c->slog[i] = c->sidx[i] = -1;
    for (int64_t e = 0; e < dk->elems; e++) {
        int64_t pos = dk->global ? dk->gpad + (dk->phys ? dk->phys[e] : e) : e;
        c->dlog[pos] = (int)e;
    }
    /* A set whose predicate is 0 copies nothing: its tables stay -1 (the
     * whole dst keeps the sentinel). */
    for (int set = 0; set < c->nsv; set++)
        if (!c->skip[set])
            cp_tables_set(p, c, set, c->slog + (size_t)set * n,
                          c->sidx + (size_t)set * n);
    return 0;
}

static int cp_plan_fn(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *call = p->call;
    cp_plan *c = td__kp_fam_data(p, sizeof *c);
    if (c == NULL)
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    if (call->nsrcs != 1 || call->srcs[0].kind != TD_OPERAND_REGION)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "a copy takes one source region");
    const td_region *sr = &call->srcs[0].region;
    const td_buffer *sb = td__region_buffer(call, sr);
    const td_buffer *db = td__region_buffer(call, &call->dst);
    if (sb == NULL || db == NULL)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "a copy region does not name a buffer");
    if (sb == db && !p->fam->same_buffer)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "a copy within one buffer (%s) is not checked by "
                           "kernel programs", sb->name);
    if (sb->dtype != db->dtype)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "a copy from %s to %s has no bit-exact reference",
                           td_dtype_name(sb->dtype), td_dtype_name(db->dtype));
    int64_t sn = 1, dn = 1;
    for (int d = 0; d < sr->ndim; d++)
        sn = td__mul_sat(sn, sr->extent[d]);
    for (int d = 0; d < call->dst.ndim; d++)
        dn = td__mul_sat(dn, call->dst.extent[d]);
    if (sn != dn || sn < 1)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "the src region has %" PRId64 " elements, the dst "
                           "region %" PRId64, sn, dn);
    c->region = dn;
    /* A start that moves with the caller's scalars (a loop variable):
     * the program passes each set of values (cp_scalar_sets) and checks
     * the region there.  Only a global source has one (the loader's
     * rule), read at that offset like a block's tile. */
    if (td__region_dynamic(&call->dst))
        return td__kp_fail(diag, call, TD_EINVAL,
                           "a dst region whose start depends on a declared "
                           "scalar has no program");
    int64_t sv[KP_MAX_SV][TD_MAX_SCALARS] = {{0}};
    c->nsv = cp_scalar_sets(call, sv, &c->cover);
    for (int set = 0; set < c->nsv; set++)
        c->sdyn[set] = cp_scalar_off(call, sb, sr, sv[set]);
    c->dst_blocked = td__region_symbolic(&call->dst);
    c->blocked = td__region_symbolic(sr);
    for (int k = 0; k < 3 && c->blocked; k++) {
        int64_t stride = 1;
        c->blk[k] = 0;
        for (int d = sb->ndim - 1; d >= 0; d--) {
            c->blk[k] += sr->block_coef[d][k] * stride;
            stride *= sb->shape[d];
        }
    }
    p->nbufs = 0;
    kp_buf *sk = td__kp_add_buf(p, sb, true, false);
    kp_buf *dk = td__kp_add_buf(p, db, false, true);
    if (sk == NULL || dk == NULL)
        return td__kp_fail(diag, call, TD_ELIMIT, "too many buffers");
    c->src = (int)(sk - p->bufs);
    c->dst = (int)(dk - p->bufs);
    const td_config_entry *sp = td_call_config(call, "kernel_specials");
    if (sp != NULL && sp->kind != TD_VALUE_BOOL)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "config kernel_specials must be true or false");
    c->specials = sp != NULL && sp->b;
    if (c->specials && !td_dtype_is_float(db->dtype))
        return td__kp_fail(diag, call, TD_EINVAL,
                           "config kernel_specials needs a float dtype, "
                           "not %s", td_dtype_name(db->dtype));
    /* copy_async's guard (config predicate naming an int): a kernel
     * parameter of value 1, so that the program checks the copy it
     * guards (a zero fill leaves nothing of the source to check). */
    const td_config_entry *pr = td_call_config(call, "predicate");
    if (pr != NULL && ((pr->kind == TD_VALUE_INT && pr->i == 0) ||
                       (pr->kind == TD_VALUE_BOOL && !pr->b)))
        return td__kp_fail(diag, call, TD_EINVAL,
                           "config predicate is 0: the copy is skipped (or "
                           "only zero-filled), which this program cannot "
                           "check against its source");
    if (pr != NULL && pr->kind == TD_VALUE_ELEM)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "config predicate is a buffer element");
    /* The predicate at each set: where it is 0 the copy is skipped (the
     * dst keeps the sentinel); a zero fill there has no source to check,
     * so with fill_mode zero such a set is left out. */
    const td_config_entry *fm = td_call_config(call, "fill_mode");
    bool zfill = fm != NULL && fm->kind == TD_VALUE_STRING &&
                 strcmp(fm->s, "zero") == 0;
    int kept = 0;
    for (int set = 0; set < c->nsv; set++) {
        int64_t pv = 1;
        if (pr != NULL && pr->kind == TD_VALUE_EXPR &&
            !td__cexpr_eval(call, &pr->expr, pr->expr.n - 1, sv[set], &pv))
            return td__kp_fail(diag, call, TD_EINVAL,
                               "config predicate depends on the thread or "
                               "block ids: it may skip part of the copy, "
                               "which this program cannot check against its "
                               "source");
        if (pv == 0 && (zfill || c->nsv == 1))
            continue;
        c->skip[kept] = pv == 0;
        c->sdyn[kept] = c->sdyn[set];
        for (int j = 0; j < TD_MAX_SCALARS; j++)
            sv[kept][j] = sv[set][j];
        kept++;
    }
    bool any = false;
    for (int set = 0; set < kept; set++)
        any = any || !c->skip[set];
    if (!any)
        return td__kp_fail(diag, call, TD_EINVAL,
                           "config predicate is 0 at every set of the "
                           "scalars' values the program passes (%s): the "
                           "copy is skipped, which this program cannot "
                           "check against its source",
                           c->nsv > 1 ? "every value of their ranges"
                                      : "the last of each range");
    c->nsv = kept;
    for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++) {
        if (p->nscalars >= (int)(sizeof p->scalars / sizeof *p->scalars))
            return td__kp_fail(diag, call, TD_ELIMIT, "too many scalars");
        p->scalars[p->nscalars++] =
            (kp_scalar){.name = call->scalars[j].name,
                        .dtype = call->scalars[j].dtype,
                        .value = (double)sv[kept - 1][j]};
    }
    if (pr != NULL && pr->kind == TD_VALUE_STRING && pr->s[0] != '\0') {
        if (p->nscalars >= (int)(sizeof p->scalars / sizeof *p->scalars))
            return td__kp_fail(diag, call, TD_ELIMIT, "too many scalars");
        p->scalars[p->nscalars++] =
            (kp_scalar){.name = pr->s, .dtype = TD_I32, .value = 1.0};
    }
    /* More than one set: main passes them round by round. */
    if (c->nsv > 1) {
        p->nsv = c->nsv;
        for (int set = 0; set < c->nsv; set++) {
            int i = 0;
            for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++)
                p->sv[set][i++] = (double)sv[set][j];
            for (; i < p->nscalars; i++)
                p->sv[set][i] = p->scalars[i].value;
        }
    }
    int err = td__kp_check_bufs(p, ir, diag);
    if (err == 0)
        err = cp_tables_fill(p, c, diag);
    return err;
}

/* The constants and the per-position tables the reference reads. */
static void cp_tables(td_buf *o, const kp_plan *p)
{
    const cp_plan *c = cp_of(p);
    const kp_buf *sk = &p->bufs[c->src], *dk = &p->bufs[c->dst];
    td_dtype t = dk->b->dtype;
    int eb, mb;
    cp_fmt(t, &eb, &mb);
    td__buf_printf(o,
                   "/* Copy %s -> %s (%s, %s -> %s), checked bit for bit. */\n"
                   "#define TD_CP_SRC_NAME \"%s\"\n"
                   "#define TD_CP_BITS %d\n"
                   "#define TD_CP_EBITS %d /* exponent bits; 0: an integer */\n"
                   "#define TD_CP_MBITS %d\n"
                   "#define TD_CP_SPECIALS %d /* config kernel_specials */\n"
                   "#define TD_CP_SENTINEL 0x%llxULL /* the dst's bits where "
                   "nothing may be written */\n"
                   "#define TD_CP_REGION %" PRId64 "LL /* elements copied */\n"
                   "#define TD_DST_ELEMS %" PRId64 "LL /* dst positions "
                   "checked per instance */\n"
                   "#define TD_CP_DST_PAD %" PRId64 "LL /* guard elements "
                   "on each side of a global dst */\n"
                   "#define TD_CP_DST_NDIM %d\n#define TD_CP_SRC_NDIM %d\n",
                   sk->b->name, dk->b->name, td_dtype_name(t),
                   sk->global ? "global" : sk->shared ? "shared" : "registers",
                   dk->global ? "global" : dk->shared ? "shared" : "registers",
                   sk->b->name, td_dtype_bits(t), eb, mb, c->specials ? 1 : 0,
                   cp_sentinel(t), c->region, c->nwant,
                   dk->global ? dk->gpad : (int64_t)0, dk->b->ndim,
                   sk->b->ndim);
    /* The shapes name an element's coordinates in a FAIL line. */
    td__buf_puts(o, "static const long long td_dst_shape[] = ");
    td__kp_i64_list(o, dk->b->shape, dk->b->ndim);
    td__buf_puts(o, ";\nstatic const long long td_src_shape[] = ");
    td__kp_i64_list(o, sk->b->shape, sk->b->ndim);
    td__buf_puts(o, ";\n");
    td__buf_puts(o, "/* Per dst position (its host array of one instance; "
                    "a global dst: guards,\n"
                    " * storage, guards): the dst element there, the src "
                    "element it pairs\n"
                    " * with and that one's index in the src's host array; "
                    "-1: none. */\n");
    td__kp_int_table(o, "td_cp_dlog", c->dlog, c->nwant);
    if (c->nsv <= 1) {
        td__kp_int_table(o, "td_cp_slog", c->slog, c->nwant);
        td__kp_int_table(o, "td_cp_sidx", c->sidx, c->nwant);
    } else {
        /* One slog and sidx table per set of scalar values; main picks
         * the round's (td_sv_use).  A set whose predicate is 0 has none:
         * the whole dst keeps the sentinel. */
        char nm[64];
        for (int set = 0; set < c->nsv; set++) {
            snprintf(nm, sizeof nm, "td_cp_slog_%d", set);
            td__kp_int_table(o, nm, c->slog + (size_t)set * (size_t)c->nwant,
                         c->nwant);
            snprintf(nm, sizeof nm, "td_cp_sidx_%d", set);
            td__kp_int_table(o, nm, c->sidx + (size_t)set * (size_t)c->nwant,
                         c->nwant);
        }
        td__buf_printf(o, "static const int *const td_cp_slog_set[%d] = {",
                       c->nsv);
        for (int set = 0; set < c->nsv; set++)
            td__buf_printf(o, "%std_cp_slog_%d", set ? ", " : "", set);
        td__buf_printf(o, "};\nstatic const int *const td_cp_sidx_set[%d] = {",
                       c->nsv);
        for (int set = 0; set < c->nsv; set++)
            td__buf_printf(o, "%std_cp_sidx_%d", set ? ", " : "", set);
        td__buf_puts(o, "};\n"
                        "static const int *td_cp_slog = td_cp_slog_0;\n"
                        "static const int *td_cp_sidx = td_cp_sidx_0;\n"
                        "/* The tables of set s of the scalars' values. */\n"
                        "static inline void td_sv_use(int s)\n"
                        "{\n"
                        "    td_cp_slog = td_cp_slog_set[s];\n"
                        "    td_cp_sidx = td_cp_sidx_set[s];\n"
                        "}\n");
    }
    if (c->blocked && !c->dst_blocked)
        td__buf_printf(o,
                       "/* The src elements the block ids add to the "
                       "region's start, for the\n"
                       " * block that runs instance inst: each block copies "
                       "its own tile. */\n"
                       "static long long td_cp_block_off(long long inst)\n"
                       "{\n"
                       "    const long long b = inst / TD_IPB;\n"
                       "    return b %% %" PRId64 "LL * %" PRId64 "LL + "
                       "b / %" PRId64 "LL %% %" PRId64 "LL * %" PRId64 "LL"
                       " + b / %" PRId64 "LL * %" PRId64 "LL;\n"
                       "}\n",
                       p->grid[0], c->blk[0], p->grid[0], p->grid[1],
                       c->blk[1], td__mul_sat(p->grid[0], p->grid[1]),
                       c->blk[2]);
    td__buf_puts(o, "\n");
}

/* The --data flag (the tolerance switch is unused: bits are equal or
 * not); the reference itself needs the shared checks' state (td_round),
 * so it follows them (cp_helpers). */
static void cp_reference(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_tol);
    td__buf_puts(o, "\n");
}

/* After the shared checks: the generator, the reference, td_cp_check. */
static void cp_helpers(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_copy_reference);
    td__buf_puts(o, td__kp_frag_copy_check);
    td__buf_puts(o, "\n");
}

static void cp_gen_expr(td_buf *o, const kp_plan *p, const kp_buf *kb)
{
    const cp_plan *c = cp_of(p);
    if (kb->is_dst) {
        td__buf_puts(o, "TD_CP_SENTINEL");
        return;
    }
    /* A global dst: every instance copies the same data into it. */
    if (!kb->global && p->bufs[c->dst].global)
        td__buf_printf(o, "td_cp_gen((unsigned long long)(i %% %" PRId64
                          "LL), td_seed)",
                       kb->elems);
    else
        td__buf_puts(o, "td_cp_gen((unsigned long long)i, td_seed)");
}

static void cp_ref_call(td_buf *o, const kp_plan *p)
{
    const cp_plan *c = cp_of(p);
    const kp_buf *sk = &p->bufs[c->src];
    if (sk->global && c->blocked && !c->dst_blocked)
        td__buf_printf(o, "            td_cp_reference(v_in_%s + "
                          "td_cp_block_off(inst), td_want);\n",
                       sk->b->name);
    else if (sk->global)
        td__buf_printf(o, "            td_cp_reference(v_in_%s, td_want);\n",
                       sk->b->name);
    else
        td__buf_printf(o,
                       "            td_cp_reference(v_in_%s + inst * %" PRId64
                       "LL, td_want);\n",
                       sk->b->name, sk->elems);
}

static void cp_header(td_buf *o, const kp_plan *p)
{
    const td_call *call = p->call;
    const cp_plan *c = cp_of(p);
    if (p->nsv > 1 && c->cover == 0) {
        td__buf_puts(o, " * scalars: every value of");
        for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++)
            td__buf_printf(o, "%s %s in [%" PRId64 ", %" PRId64 ")",
                           j ? "," : "", call->scalars[j].name,
                           call->scalars[j].lo, call->scalars[j].hi);
        td__buf_printf(o, ": %d sets, round r passes set r / 2 %% %d\n",
                       p->nsv, p->nsv);
    } else if (p->nsv > 1) {
        /* The covering sweep (cp_scalar_sets). */
        td__buf_puts(o, " * scalars:");
        for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++) {
            const td_scalar *s = &call->scalars[j];
            if (s->has_range)
                td__buf_printf(o, "%s %s in [%" PRId64 ", %" PRId64 ")",
                               j ? "," : "", s->name, s->lo, s->hi);
            else
                td__buf_printf(o, "%s %s (no range: 0)", j ? "," : "",
                               s->name);
        }
        bool cut = false;
        for (int j = 0; j < call->nscalars && j < TD_MAX_SCALARS; j++)
            cut = cut || (call->scalars[j].has_range &&
                          call->scalars[j].hi - call->scalars[j].lo >
                              c->cover);
        td__buf_printf(o,
                       ": more combinations than %d, so each\n"
                       " * scalar runs through its values with the others "
                       "at the last of their\n",
                       KP_MAX_SV_ALL);
        if (cut)
            td__buf_printf(o,
                           " * ranges (a range of more than %d values: its "
                           "first %d, every residue\n"
                           " * mod 2 to %d, and its last), then all at their "
                           "last: %d sets,\n",
                           c->cover, c->cover - 1, c->cover - 1, p->nsv);
        else
            td__buf_printf(o,
                           " * ranges (every value of each), then all at "
                           "their last: %d sets,\n",
                           p->nsv);
        td__buf_printf(o, " * round r passes set r / 2 %% %d\n", p->nsv);
    }
    td__buf_puts(o,
                 " * Copy: every dst element of the region must hold its "
                 "source element's\n"
                 " * bits, every other dst position (outside the region, "
                 "unowned register\n"
                 " * slots, guard elements) the sentinel, and the source "
                 "must not change;\n"
                 " * global buffers are one array for every instance "
                 "(kernel parameters).\n");
}

/* Four rounds: new bits each, the guard bytes alternating. */
static int cp_rounds(const kp_plan *p)
{
    (void)p;
    return 4;
}

static void cp_pass(td_buf *o, const kp_plan *p)
{
    (void)p;
    td__buf_puts(o, td__kp_frag_copy_pass);
}

static void cp_free(kp_plan *p)
{
    cp_plan *c = cp_of(p);
    if (c == NULL)
        return;
    td__free(c->dlog);
    td__free(c->slog);
    td__free(c->sidx);
    c->dlog = c->slog = c->sidx = NULL;
}

const kp_family td__kp_copy = {
    .kind = TD_OP_KIND_COPY,
    .what = "a copy",
    .plan = cp_plan_fn,
    .header = cp_header,
    .tables = cp_tables,
    .reference = cp_reference,
    .helpers = cp_helpers,
    .gen_expr = cp_gen_expr,
    .rounds = cp_rounds,
    .ref_call = cp_ref_call,
    .dst_check = "td_cp_check",
    .pass = cp_pass,
    .free = cp_free,
    .bits = true,
    .gap_bits = cp_sentinel,
    .globals = true,
};
