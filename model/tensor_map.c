/*
 * TMA tensor maps: the planner that turns a global buffer, a copied box
 * and the shared tile's layout into the arguments of
 * cuTensorMapEncodeTiled, and the static validator with TVM's rule names
 * and messages (tensor_map.h says what each does).  The choices follow
 * apache-tvm 0.27's tma_auto/tma_explicit, learned by running TVM on its
 * own golden and validator matrices (tests/tma/ holds both).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "td_internal.h"
#include "tensor_map.h"

/* ---- dtypes ---------------------------------------------------------------- */

/* The descriptor dtypes TVM accepts, with their bits and the
 * CUtensorMapDataType each encodes as. */
static const struct {
    const char *name;
    int bits;
    int cu;
    const char *cu_name;
} dtypes[] = {
    {"int8", 8, 0, "CU_TENSOR_MAP_DATA_TYPE_UINT8"},
    {"int32", 32, 3, "CU_TENSOR_MAP_DATA_TYPE_INT32"},
    {"int64", 64, 5, "CU_TENSOR_MAP_DATA_TYPE_INT64"},
    {"uint8", 8, 0, "CU_TENSOR_MAP_DATA_TYPE_UINT8"},
    {"uint16", 16, 1, "CU_TENSOR_MAP_DATA_TYPE_UINT16"},
    {"uint32", 32, 2, "CU_TENSOR_MAP_DATA_TYPE_UINT32"},
    {"uint64", 64, 4, "CU_TENSOR_MAP_DATA_TYPE_UINT64"},
    {"float16", 16, 6, "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"},
    {"float32", 32, 7, "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"},
    {"float64", 64, 8, "CU_TENSOR_MAP_DATA_TYPE_FLOAT64"},
    {"bfloat16", 16, 9, "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"},
    {"float8_e4m3fn", 8, 0, "CU_TENSOR_MAP_DATA_TYPE_UINT8"},
    {"float8_e5m2", 8, 0, "CU_TENSOR_MAP_DATA_TYPE_UINT8"},
    {"float4_e2m1fn", 4, 14, "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B"},
};
#define NDTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

static int dtype_index(const char *name)
{
    for (int i = 0; name != NULL && i < NDTYPES; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return i;
    return -1;
}

static int is_float(const char *name)
{
    return strcmp(name, "float16") == 0 || strcmp(name, "float32") == 0 ||
           strcmp(name, "float64") == 0 || strcmp(name, "bfloat16") == 0;
}

int td__tmap_cu_dtype(const td_tmap *m, const char **name)
{
    if (m->force_cu_dtype == 11) {
        if (name != NULL)
            *name = "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32";
        return 11;
    }
    int i = dtype_index(m->dtype);
    if (name != NULL)
        *name = i < 0 ? NULL : dtypes[i].cu_name;
    return i < 0 ? -1 : dtypes[i].cu;
}

/* ---- validator -------------------------------------------------------------- */

typedef struct findings {
    td_tmap_finding *out;
    int cap;
    int n;
} findings;

static void fail_rule(findings *f, int ok, const char *rule, const char *fmt,
                      ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void fail_rule(findings *f, int ok, const char *rule, const char *fmt,
                      ...)
{
    if (ok)
        return;
    if (f->n < f->cap) {
        td_tmap_finding *x = &f->out[f->n];
        x->rule = rule;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->message, sizeof x->message, fmt, ap);
        va_end(ap);
    }
    f->n++;
}

/* TVM prints the target as its arch string; tiledispatch keeps the number. */
static void arch_name(char *buf, size_t cap, int sm)
{
    snprintf(buf, cap, "'sm_%d%s'", sm, sm >= 90 ? "a" : "");
}

static int64_t floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

int td__tmap_validate(const td_tmap *m, td_tmap_finding *out, int cap)
{
    findings f = {out, cap, 0};
    int rank = m->rank;
    char arch[32];
    arch_name(arch, sizeof arch, m->sm);

    fail_rule(&f, rank >= 1 && rank <= TD_TMAP_MAX_RANK, "rank",
              "descriptor rank must be in [1, 5], got %d", rank);
    int di = dtype_index(m->dtype);
    if (di < 0) {
        fail_rule(&f, 0, "dtype", "unsupported descriptor dtype %s", m->dtype);
    } else {
        fail_rule(&f, m->bits == dtypes[di].bits, "dtype_bits",
                  "descriptor dtype %s requires %d bits, got %d", m->dtype,
                  dtypes[di].bits, m->bits);
        fail_rule(&f, m->effective_bytes == (m->bits + 7) / 8,
                  "effective_bytes",
                  "effective bytes %d do not match %d-bit descriptor units",
                  m->effective_bytes, m->bits);
    }
    int want_packed = strcmp(m->dtype, "float4_e2m1fn") == 0;
    fail_rule(&f, m->packed == want_packed, "packed_kind",
              "descriptor dtype %s requires packed_kind=%s, got %s", m->dtype,
              want_packed ? "'16u4_align16'" : "None",
              m->packed ? "'16u4_align16'" : "None");
    fail_rule(&f,
              m->force_cu_dtype == -1 ||
                  (m->force_cu_dtype == 11 &&
                   strcmp(m->dtype, "float32") == 0 && m->bits == 32),
              "forced_cuda_dtype",
              "forced CUDA dtype must be -1, or TFLOAT32 (11) for a float32 "
              "descriptor");
    int nstr = rank > 0 ? rank - 1 : 0;
    fail_rule(&f, m->nglobal_strides == nstr && m->ncoordinates == rank,
              "array_lengths",
              "TensorMap arrays must contain rank global dimensions, boxes, "
              "element strides, and coordinates, plus rank-1 byte strides");
    int align = (m->interleave == 2 || m->packed) ? 32 : 16;
    fail_rule(&f, floormod(m->base_byte_offset, align) == 0,
              "global_base_alignment",
              "view base byte offset %" PRId64 " must preserve %dB global "
              "alignment",
              m->base_byte_offset, align);
    int nd = rank < TD_TMAP_MAX_DIMS ? rank : TD_TMAP_MAX_DIMS;
    for (int i = 0; i < nd; i++)
        fail_rule(&f, m->global_dims[i] > 0 &&
                          m->global_dims[i] <= (INT64_C(1) << 32),
                  "global_dim", "globalDim[%d]=%" PRId64 " must be in (0, 2^32]",
                  i, m->global_dims[i]);
    int ns = m->nglobal_strides < TD_TMAP_MAX_DIMS ? m->nglobal_strides
                                                   : TD_TMAP_MAX_DIMS;
    for (int i = 0; i < ns; i++) {
        int64_t s = m->global_strides[i];
        fail_rule(&f, s >= 0, "global_stride_range",
                  "globalStrides[%d]=%" PRId64 " must be non-negative", i, s);
        fail_rule(&f, s < (INT64_C(1) << 40), "global_stride_range",
                  "globalStrides[%d]=%" PRId64 " must be less than 2^40", i, s);
        fail_rule(&f, floormod(s, align) == 0, "global_stride_alignment",
                  "globalStrides[%d]=%" PRId64 " must be a multiple of %dB", i,
                  s, align);
    }
    fail_rule(&f, m->inner_stride == 1, "inner_stride",
              "innermost global element stride must be 1, got %" PRId64,
              m->inner_stride);
    for (int i = 0; i < nd; i++)
        fail_rule(&f, m->box_dims[i] >= 1 && m->box_dims[i] <= 256, "box_dim",
                  "boxDim[%d]=%" PRId64 " must be in [1, 256]", i,
                  m->box_dims[i]);
    for (int i = 0; i < nd; i++)
        fail_rule(&f, m->element_strides[i] >= 1 && m->element_strides[i] <= 8,
                  "element_stride",
                  "elementStride[%d]=%" PRId64 " must be in [1, 8]", i,
                  m->element_strides[i]);
    if (nd > 0)
        fail_rule(&f, m->element_strides[0] == 1, "inner_stride",
                  "innermost elementStride must be 1, got %" PRId64,
                  m->element_strides[0]);
    fail_rule(&f, m->interleave >= 0 && m->interleave <= 2, "interleave",
              "interleave enum %d is invalid", m->interleave);
    fail_rule(&f, m->swizzle >= 0 && m->swizzle <= 3, "swizzle",
              "swizzle enum %d is invalid", m->swizzle);
    fail_rule(&f, m->l2_promotion >= 0 && m->l2_promotion <= 3,
              "l2_promotion", "L2 promotion enum %d is invalid",
              m->l2_promotion);
    fail_rule(&f, m->oob_fill == 0 || m->oob_fill == 1, "oob",
              "OOB enum %d is invalid", m->oob_fill);
    if (m->interleave != 0)
        fail_rule(&f, rank >= 3, "interleave_rank",
                  "interleaved TensorMaps require rank >= 3");
    if (m->interleave == 2)
        fail_rule(&f, m->swizzle == 1, "interleave_swizzle",
                  "32B interleave requires the 32B swizzle mode");
    /* The inner box's bytes, for a box and unit size the other rules can
     * still judge (absurd ones fail box_dim or effective_bytes first). */
    int sane = nd > 0 && m->box_dims[0] >= -(INT64_C(1) << 40) &&
               m->box_dims[0] <= (INT64_C(1) << 40) &&
               m->effective_bytes >= 0 && m->effective_bytes <= 64;
    if (sane && m->interleave == 0 && !m->packed) {
        int64_t inner = m->box_dims[0] * m->effective_bytes;
        fail_rule(&f, floormod(inner, 16) == 0, "inner_box_bytes",
                  "innermost box is %" PRId64 "B; non-interleaved TensorMaps "
                  "require a 16B multiple",
                  inner);
        int atom = m->swizzle == 1 ? 32 : m->swizzle == 2 ? 64
                 : m->swizzle == 3 ? 128 : 0;
        if (atom != 0)
            fail_rule(&f, inner <= atom, "swizzle_inner_box",
                      "innermost box %" PRId64 "B exceeds the %dB swizzle atom",
                      inner, atom);
    }
    if (m->packed && nd > 0) {
        fail_rule(&f, floormod(m->global_dims[0], 128) == 0, "packed_shape",
                  "packed 16U4 align16 requires globalDim[0] to be a multiple "
                  "of 128");
        fail_rule(&f, m->box_dims[0] == 128, "packed_box",
                  "packed 16U4 align16 requires boxDim[0] == 128");
        fail_rule(&f, m->swizzle == 0 || m->swizzle == 3, "packed_swizzle",
                  "packed 16U4 align16 supports only NONE or 128B swizzle in "
                  "this layout model");
        fail_rule(&f, m->direction == TD_TMAP_G2S, "packed_direction",
                  "packed 16U4 align16 TensorMaps are load-only");
    }
    if (m->oob_fill == 1)
        fail_rule(&f, (is_float(m->dtype) || m->force_cu_dtype == 11) &&
                          !m->packed,
                  "nan_oob_dtype",
                  "NaN OOB fill requires a non-packed floating-point "
                  "descriptor");
    fail_rule(&f, m->ncoordinates == rank, "coordinate_count",
              "coordinate count %d must equal rank %d", m->ncoordinates, rank);
    fail_rule(&f, m->sm >= 90, "target", "TMA requires SM90+, got %s", arch);
    fail_rule(&f, m->cta_group == 1 || m->cta_group == 2, "cta_group",
              "cta_group must be 1 or 2, got %d", m->cta_group);
    if (m->cta_group == 2)
        fail_rule(&f, m->sm >= 100, "target",
                  "cta_group=2 requires SM100+, got %s", arch);
    if (m->direction == TD_TMAP_G2S)
        fail_rule(&f, m->has_mbar, "mbar", "global-to-shared TMA requires mbar");
    return f.n;
}

void td__tmap_join(const td_tmap_finding *f, int n, char *buf, size_t cap)
{
    td_sbuf o = {buf, cap, 0};
    if (cap > 0)
        buf[0] = '\0';
    for (int i = 0; i < n; i++)
        td__sbuf_printf(&o, "%s%s: %s [disproven]", i ? "; " : "", f[i].rule,
                        f[i].message);
}

/* ---- planner ---------------------------------------------------------------- */

/* One tensor-map dimension while planning: extent in the global tensor,
 * stride in elements, box extent and the box's origin. */
typedef struct dim {
    int64_t gdim, stride, box, coord;
    int64_t issue; /* > 0: an issue loop of this extent walks the dimension */
    int64_t smem_stride; /* the shared tile's stride of that loop, elements */
    /* The origin's non-constant part (td_tmap's coord_src, coord_mul,
     * coord_div; dsrc 0: none) and a number dividing all its values. */
    int dsrc;
    int64_t dmul, ddiv, dalign;
} dim;

/* A dimension with a constant origin and no issue loop. */
static dim mkdim(int64_t gdim, int64_t stride, int64_t box, int64_t coord)
{
    dim x;
    memset(&x, 0, sizeof x);
    x.gdim = gdim;
    x.stride = stride;
    x.box = box;
    x.coord = coord;
    return x;
}

/* Gives x the non-constant part of request start g divided by div (the
 * caller proved it divisible). */
static void set_dyn(dim *x, const td_tmap_request *r, int g, int64_t div)
{
    if (r->start_align[g] <= 0)
        return;
    x->dsrc = g + 1;
    x->dmul = 1;
    x->ddiv = div;
    x->dalign = r->start_align[g] / div;
}

/* TVM's coordinate stage: start g must be provably divisible by inner.
 * A constant part that is not: disproven; a non-constant part whose
 * coefficients are not all multiples: unknown (the analyzer can neither
 * prove nor refute it). */
static int start_divisible(const td_tmap_request *r, int g, int64_t inner,
                           td_diag *d);

#define AUTO_HINT                                                               \
    "; use dispatch=\"tma_explicit\" when the mapping or hardware legality "    \
    "is only known at runtime"

static int plan_fail(td_diag *d, const td_tmap_request *r, const char *stage,
                     const char *detail)
{
    if (r->explicit_map)
        return td__fail(d, TD_EINVAL, NULL, "tma_explicit stage=%s: %s", stage,
                        detail);
    return td__fail(d, TD_EINVAL, NULL, "tma_auto stage=%s: %s" AUTO_HINT,
                    stage, detail);
}

void td__tmap_request_init(td_tmap_request *r)
{
    memset(r, 0, sizeof *r);
    r->smem = TD_TMAP_SMEM_ROW;
    r->direction = TD_TMAP_G2S;
    r->l2_promotion = TD_TMAP_L2_DEFAULT;
    r->sm = 90;
    r->cta_group = 1;
    r->has_mbar = 1;
}

/* The config checks TVM makes before it plans (_runtime_config and
 * _dtype_contract), with its messages. */
static int check_config(const td_tmap_request *r, td_tmap *m, td_diag *d)
{
    if (!r->explicit_map && r->oob != NULL)
        return td__fail(d, TD_EINVAL, NULL,
                        "tma_auto does not support non-default oob; use "
                        "dispatch=\"tma_explicit\"");
    if (r->direction != TD_TMAP_G2S && r->oob != NULL)
        return td__fail(d, TD_EINVAL, NULL,
                        "TensorMap oob is only valid for explicit "
                        "global-to-shared copies");
    int cta_group = r->cta_group == 0 ? 1 : r->cta_group;
    if (cta_group != 1 && cta_group != 2)
        return td__fail(d, TD_EINVAL, NULL, "cta_group must be 1 or 2, got %d",
                        cta_group);
    if (r->direction == TD_TMAP_G2S && !r->has_mbar)
        return td__fail(d, TD_EINVAL, NULL,
                        "global-to-shared TMA requires mbar");
    if (r->direction != TD_TMAP_G2S && r->has_mbar)
        return td__fail(d, TD_EINVAL, NULL,
                        "mbar is only valid for global-to-shared TMA");
    if (r->l2_promotion != TD_TMAP_L2_DEFAULT &&
        (r->l2_promotion < 0 || r->l2_promotion > 3))
        return td__fail(d, TD_EINVAL, NULL,
                        "TensorMap L2 promotion integer must be in [0, 3]");
    int oob = TD_TMAP_OOB_ZERO;
    if (r->oob != NULL && strcmp(r->oob, "nan") == 0)
        oob = TD_TMAP_OOB_NAN;
    else if (r->oob != NULL && strcmp(r->oob, "zero") != 0)
        return td__fail(d, TD_EINVAL, NULL,
                        "unsupported TensorMap oob='%s'; expected None, "
                        "'zero', or 'nan'",
                        r->oob);
    int di = dtype_index(r->dtype);
    if (di < 0)
        return td__fail(d, TD_EINVAL, NULL,
                        "unsupported TensorMap descriptor dtype %s",
                        r->dtype != NULL ? r->dtype : "(none)");
    int force = -1;
    if (r->tma_dtype != NULL) {
        if (strcmp(r->tma_dtype, "tf32") != 0 &&
            strcmp(r->tma_dtype, "tfloat32") != 0)
            return td__fail(d, TD_EINVAL, NULL,
                            "tma_dtype must be 'tf32' or 'tfloat32'");
        if (strcmp(r->dtype, "float32") != 0)
            return td__fail(d, TD_EINVAL, NULL,
                            "tma_dtype='%s' requires a float32 global buffer, "
                            "got %s",
                            r->tma_dtype, r->dtype);
        force = 11;
    }
    memset(m, 0, sizeof *m);
    td__strlcpy(m->dtype, dtypes[di].name, sizeof m->dtype);
    m->bits = dtypes[di].bits;
    m->effective_bytes = (m->bits + 7) / 8;
    m->packed = strcmp(m->dtype, "float4_e2m1fn") == 0;
    m->force_cu_dtype = force;
    m->oob_fill = oob;
    m->l2_promotion =
        r->l2_promotion == TD_TMAP_L2_DEFAULT ? TD_TMAP_L2_128B : r->l2_promotion;
    m->direction = r->direction;
    m->sm = r->sm;
    m->cta_group = cta_group;
    m->has_mbar = r->has_mbar;
    return 0;
}

int td__tmap_check_config(const td_tmap_request *r, td_diag *d)
{
    td_tmap m;
    return check_config(r, &m, d);
}

/* The atom width in bytes of each shared layout (0: row-major, no atoms)
 * and the swizzle mode it encodes. */
static int atom_bytes(td_tmap_smem s)
{
    static const int bytes[] = {0, 16, 32, 64, 128};
    return (int)s >= 0 && (int)s <= 4 ? bytes[s] : -1;
}

static int smem_swizzle(td_tmap_smem s)
{
    return s == TD_TMAP_SMEM_SW32 ? 1 : s == TD_TMAP_SMEM_SW64 ? 2
         : s == TD_TMAP_SMEM_SW128 ? 3 : 0;
}

static int check_request(const td_tmap_request *r, td_diag *d)
{
    if (r->rank < 1 || r->rank > TD_TMAP_MAX_IN)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: the global buffer has %d dimensions; "
                        "1 to %d are supported",
                        r->rank, TD_TMAP_MAX_IN);
    if (atom_bytes(r->smem) < 0)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: unknown shared layout %d", (int)r->smem);
    for (int i = 0; i < r->rank; i++) {
        if (r->shape[i] < 1 || r->extent[i] < 1 || r->start[i] < 0)
            return td__fail(d, TD_EINVAL, NULL,
                            "tensor map: dimension %d has shape %" PRId64
                            ", start %" PRId64 " and extent %" PRId64
                            "; shapes and extents must be positive and "
                            "starts non-negative",
                            i, r->shape[i], r->start[i], r->extent[i]);
    }
    if (r->elem_offset < 0)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: the view's element offset %" PRId64
                        " is negative",
                        r->elem_offset);
    for (int i = 0; i < r->rank; i++)
        if (r->strides[i] < 0 ||
            (r->smem_strides_set && r->smem_strides[i] < 0))
            return td__fail(d, TD_EINVAL, NULL,
                            "tensor map: dimension %d has a negative stride; "
                            "global and shared strides must be non-negative",
                            i);
    if (r->order_set) {
        int seen[TD_TMAP_MAX_IN] = {0};
        for (int i = 0; i < r->rank; i++) {
            int o = r->order[i];
            if (o < 0 || o >= r->rank || seen[o]++)
                return td__fail(d, TD_EINVAL, NULL,
                                "tensor map: the shared order is not a "
                                "permutation of the %d copy dimensions",
                                r->rank);
        }
    }
    return 0;
}

/* Is a box of `box` elements with a global extent `gdim` a legal innermost
 * dimension (TVM's _auto_inner_dimension_is_legal)? */
static int inner_legal(const td_tmap *m, int64_t gdim, int64_t box, int atom)
{
    if (m->packed)
        return gdim % 128 == 0 && box == 128;
    int64_t bytes = td__mul_sat(box, m->effective_bytes);
    return bytes % 16 == 0 && (atom <= 16 || bytes <= atom);
}

/* May dimensions i (inner) and i+1 (outer) become one?  Neither may be
 * walked by an issue loop; the inner one must be copied whole from 0, the
 * outer one's stride must follow it contiguously, the merged global extent
 * stay within 2^32 and, innermost, the merged box be a legal inner box;
 * then the merged box must be at most 256 (MERGE_BOX_BLOCKED if not). */
enum { MERGE_NO = 0, MERGE_OK = 1, MERGE_BOX_BLOCKED = 2 };

static int can_merge(const dim *v, int i, const td_tmap *m, int atom)
{
    const dim *a = &v[i], *b = &v[i + 1];
    if (a->issue || b->issue)
        return MERGE_NO;
    if (a->box != a->gdim || a->coord != 0 || a->dsrc != 0 ||
        b->stride != td__mul_sat(a->stride, a->gdim))
        return MERGE_NO;
    int64_t gdim = td__mul_sat(a->gdim, b->gdim);
    int64_t box = td__mul_sat(a->box, b->box);
    if (gdim > (INT64_C(1) << 32))
        return MERGE_NO;
    if (i == 0 && !inner_legal(m, gdim, box, atom))
        return MERGE_NO;
    return box > 256 ? MERGE_BOX_BLOCKED : MERGE_OK;
}

/* Promotes the descriptor units once, two elements becoming one of twice
 * the size (uint8 -> uint16 -> uint32 -> uint64), keeping every byte
 * address (TVM's _promote_auto_once): only for 1/2/4-byte unpacked,
 * uninterleaved maps without NaN fill or a forced dtype whose innermost
 * dimension is contiguous, not walked by an issue loop, and even in
 * extent, box and coordinate, and whose byte strides are multiples of the
 * new unit.  Returns 1 when it promoted. */
static int promote(dim *v, int n, td_tmap *m)
{
    static const struct {
        int bytes;
        const char *name;
    } to[] = {{1, "uint16"}, {2, "uint32"}, {4, "uint64"}};
    int t = -1;
    for (int i = 0; i < 3; i++)
        if (m->effective_bytes == to[i].bytes && m->bits == 8 * to[i].bytes)
            t = i;
    if (t < 0 || m->packed || m->interleave != 0 || m->oob_fill != 0 ||
        m->force_cu_dtype >= 0 || v[0].stride != 1 || v[0].issue)
        return 0;
    if (v[0].gdim % 2 != 0 || v[0].box % 2 != 0 || v[0].coord % 2 != 0 ||
        (v[0].dsrc != 0 && v[0].dalign % 2 != 0))
        return 0;
    for (int i = 1; i < n; i++)
        if (v[i].stride % 2 != 0) /* byte stride % (2 * unit) */
            return 0;
    v[0].gdim /= 2;
    v[0].box /= 2;
    v[0].coord /= 2;
    if (v[0].dsrc != 0) {
        v[0].ddiv *= 2;
        v[0].dalign /= 2;
    }
    for (int i = 1; i < n; i++)
        v[i].stride /= 2;
    td__strlcpy(m->dtype, to[t].name, sizeof m->dtype);
    m->bits *= 2;
    m->effective_bytes *= 2;
    return 1;
}

/* Drops dimensions of global extent 1 and merges contiguous neighbours
 * until nothing changes; the byte address of every box element stays the
 * same.  When the innermost merge is blocked only by the 256-element box
 * limit (rank > 2, the outer dimension whole from 0), the descriptor is
 * promoted first if that makes the merge fit, as TVM does. */
static void canonicalize(dim *v, int *n, td_tmap *m, int atom)
{
    for (;;) {
        int changed = 0;
        for (int i = 0; i < *n && *n > 1; i++) {
            if (v[i].gdim != 1 || v[i].box != 1 || v[i].issue)
                continue;
            if (i == 0 && (v[1].stride != v[0].stride ||
                           !inner_legal(m, v[1].gdim, v[1].box, atom)))
                continue;
            memmove(&v[i], &v[i + 1], (size_t)(*n - i - 1) * sizeof *v);
            (*n)--;
            changed = 1;
            break;
        }
        if (changed)
            continue;
        for (int i = 0; i + 1 < *n; i++) {
            int why = can_merge(v, i, m, atom);
            if (why == MERGE_BOX_BLOCKED && i == 0 && *n > 2 &&
                v[1].box == v[1].gdim && v[1].coord == 0 && v[1].dsrc == 0) {
                dim w[TD_TMAP_MAX_DIMS];
                td_tmap pm = *m;
                memcpy(w, v, (size_t)*n * sizeof *v);
                if (promote(w, *n, &pm)) {
                    int64_t gdim = td__mul_sat(w[0].gdim, w[1].gdim);
                    int64_t box = td__mul_sat(w[0].box, w[1].box);
                    if (box <= 256 && gdim <= (INT64_C(1) << 32) &&
                        inner_legal(&pm, gdim, box, atom)) {
                        memcpy(v, w, (size_t)*n * sizeof *v);
                        *m = pm;
                        changed = 1;
                        break;
                    }
                }
            }
            if (why != MERGE_OK)
                continue;
            dim merged = {td__mul_sat(v[i].gdim, v[i + 1].gdim), v[i].stride,
                          td__mul_sat(v[i].box, v[i + 1].box),
                          td__mul_sat(v[i + 1].coord, v[i].gdim),
                          0, 0, v[i + 1].dsrc,
                          td__mul_sat(v[i + 1].dmul, v[i].gdim),
                          v[i + 1].ddiv,
                          td__mul_sat(v[i + 1].dalign, v[i].gdim)};
            v[i] = merged;
            memmove(&v[i + 1], &v[i + 2], (size_t)(*n - i - 2) * sizeof *v);
            (*n)--;
            changed = 1;
            break;
        }
        if (!changed)
            return;
    }
}

/* The view's byte offset from its allocation (TVM's view base), which
 * the map's base address must keep aligned. */
static int base_offset(const td_tmap_request *r, td_tmap *m, td_diag *d)
{
    int64_t off_bits = td__mul_sat(r->elem_offset, m->bits);
    if (off_bits % 8 != 0) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "view base offset=%" PRId64 " elements at %d bits is not "
                 "provably byte aligned",
                 r->elem_offset, m->bits);
        return plan_fail(d, r, "global-base", msg);
    }
    m->base_byte_offset = off_bits / 8;
    m->swizzle = smem_swizzle(r->smem);
    return 0;
}

/* Fills m's arrays from the planned dimensions (innermost first) and its
 * issue loops in the same order. */
static int fill(const td_tmap_request *r, td_tmap *m, const dim *v, int n,
                td_diag *d)
{
    m->rank = n;
    m->inner_stride = v[0].stride;
    m->nglobal_strides = n - 1;
    m->ncoordinates = n;
    m->nissue = 0;
    for (int i = 0; i < n; i++) {
        m->global_dims[i] = v[i].gdim;
        m->box_dims[i] = v[i].box;
        m->coordinates[i] = v[i].coord;
        m->coord_src[i] = v[i].dsrc;
        m->coord_mul[i] = v[i].dsrc != 0 ? v[i].dmul : 0;
        m->coord_div[i] = v[i].dsrc != 0 ? v[i].ddiv : 0;
        m->element_strides[i] = 1;
        if (v[i].issue > 0) {
            td_tmap_issue *x = &m->issue[m->nissue++];
            x->extent = v[i].issue;
            x->smem_stride = v[i].smem_stride;
            x->dim = i;
        }
        if (i > 0) {
            int64_t bits = td__mul_sat(v[i].stride, m->bits);
            if (bits % 8 != 0) {
                char msg[200];
                snprintf(msg, sizeof msg,
                         "global stride=%" PRId64 " elements at %d bits is not "
                         "provably byte aligned",
                         v[i].stride, m->bits);
                return plan_fail(d, r, "descriptor-stride", msg);
            }
            m->global_strides[i - 1] = bits / 8;
        }
    }
    return 0;
}

/* Validates m; on failure writes TVM's joined findings to msg and says
 * in *repairable whether every failed rule is one a promotion may repair
 * (rank, global_stride_alignment, box_dim, inner_box_bytes). */
static int failures(const td_tmap *m, char *msg, size_t cap, int *repairable)
{
    td_tmap_finding f[32];
    int nf = td__tmap_validate(m, f, 32);
    if (nf > 0)
        td__tmap_join(f, nf < 32 ? nf : 32, msg, cap);
    if (repairable != NULL) {
        *repairable = 1;
        for (int i = 0; i < nf && i < 32; i++)
            if (strcmp(f[i].rule, "rank") != 0 &&
                strcmp(f[i].rule, "global_stride_alignment") != 0 &&
                strcmp(f[i].rule, "box_dim") != 0 &&
                strcmp(f[i].rule, "inner_box_bytes") != 0)
                *repairable = 0;
    }
    return nf;
}

/* tma_explicit: the dimensions as given, validated. */
static int finish(const td_tmap_request *r, td_tmap *m, dim *v, int n,
                  td_diag *d)
{
    int rc = base_offset(r, m, d);
    if (rc == 0)
        rc = fill(r, m, v, n, d);
    if (rc != 0)
        return rc;
    char msg[TD_DIAG_MSG_MAX];
    if (failures(m, msg, sizeof msg, NULL) > 0)
        return plan_fail(d, r, "main-descriptor", msg);
    return 0;
}

/* tma_auto's prefix search: the first `prefix` shared dimensions
 * (innermost first) go into the box, every later one becomes an issue loop
 * with a box of 1; the largest prefix whose canonical map is legal wins,
 * and the search stops at the first failure after a success.  When none
 * is legal, the failures of the last one tried are the message. */
static int prefix_search(const td_tmap_request *r, td_tmap *m, const dim *v,
                         int n, int nactive, int atom, td_diag *d)
{
    int rc = base_offset(r, m, d);
    if (rc != 0)
        return rc;
    td_tmap best;
    int found = 0;
    char msg[TD_DIAG_MSG_MAX] = "";
    for (int prefix = 1; prefix <= nactive; prefix++) {
        dim w[TD_TMAP_MAX_DIMS];
        memcpy(w, v, (size_t)n * sizeof *v);
        int nw = n;
        int64_t covered = 1;
        for (int k = 0; k < nactive; k++) {
            if (k >= prefix) {
                w[k].issue = w[k].box;
                w[k].smem_stride = covered;
                w[k].box = 1;
            }
            covered = td__mul_sat(covered, v[k].box);
        }
        /* TVM's repair: canonicalise, validate, and while every failed
         * rule is repairable, promote the descriptor and try again. */
        td_tmap cand = *m;
        int ok = 0;
        for (;;) {
            canonicalize(w, &nw, &cand, atom);
            rc = fill(r, &cand, w, nw, d);
            if (rc != 0)
                return rc;
            int repairable = 0;
            if (failures(&cand, msg, sizeof msg, &repairable) == 0) {
                ok = 1;
                break;
            }
            if (!repairable || !promote(w, nw, &cand))
                break;
        }
        if (ok) {
            best = cand;
            found = 1;
            continue;
        }
        if (found)
            break;
    }
    if (!found)
        return plan_fail(d, r, "prefix-search", msg);
    *m = best;
    return 0;
}

/* The shared order TVM reads off a strided shared tile (_smem_iter_order):
 * the copy dimensions of extent > 1 sorted by stride, the smallest 1 and
 * each next one the previous stride times its extent; order[] gets them
 * outermost first, after the unit dimensions.  TVM numbers a dimension by
 * its place among the sliced shared iterators; here it is the copy
 * dimension's index (the same when the shared tile has one dimension per
 * copy dimension, as in TVM's matrix). */
static int smem_order(const td_tmap_request *r, int *order, td_diag *d)
{
    if (r->smem != TD_TMAP_SMEM_ROW)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: shared strides describe a row-major "
                        "shared tile; a swizzled tile has its atoms' order");
    int idx[TD_TMAP_MAX_IN], n = 0, k = 0;
    for (int g = 0; g < r->rank; g++)
        if (r->extent[g] == 1)
            order[k++] = g;
        else
            idx[n++] = g;
    for (int i = 1; i < n; i++) /* stable: ties keep the dimension order */
        for (int j = i; j > 0 && r->smem_strides[idx[j - 1]] >
                                     r->smem_strides[idx[j]]; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    char msg[200];
    if (n == 0)
        return plan_fail(d, r, "shared-chain",
                         "copy region has no non-unit shared memory iterator");
    if (r->smem_strides[idx[0]] != 1) {
        snprintf(msg, sizeof msg,
                 "smallest shared stride must be 1, got %" PRId64
                 " (disproven)",
                 r->smem_strides[idx[0]]);
        return plan_fail(d, r, "shared-chain", msg);
    }
    for (int p = 1; p < n; p++) {
        int64_t want = td__mul_sat(r->smem_strides[idx[p - 1]],
                                   r->extent[idx[p - 1]]);
        if (r->smem_strides[idx[p]] != want) {
            snprintf(msg, sizeof msg,
                     "shared iter %d at sorted position %d has stride=%" PRId64
                     ", expected %" PRId64 " after extent=%" PRId64
                     " (disproven)",
                     idx[p], p, r->smem_strides[idx[p]], want,
                     r->extent[idx[p - 1]]);
            return plan_fail(d, r, "shared-chain", msg);
        }
    }
    for (int p = n - 1; p >= 0; p--)
        order[k++] = idx[p];
    return 0;
}

/* The map's dimensions from the shared tile's iterators (r->splits), as
 * TVM's _build_auto_gt and _smem_iter_order derive them: the iterators of
 * extent > 1 sorted by shared stride (they must chain without gaps), each
 * a map dimension whose global stride is its copy dimension's stride times
 * the extents inside it; the outermost piece of a copy dimension spans the
 * rest of the global extent and carries the start.  Returns the number of
 * box dimensions in *nactive. */
static int from_splits(const td_tmap_request *r, const int64_t *strides,
                       dim *v, int *nv, int *nactive, td_diag *d)
{
    int act[TD_TMAP_MAX_DIMS], na = 0;
    int64_t inner[TD_TMAP_MAX_DIMS];
    int first[TD_TMAP_MAX_DIMS];
    char msg[200];
    if (r->nsplits > TD_TMAP_MAX_DIMS)
        return td__fail(d, TD_EINVAL, NULL,
                        "tensor map: %d shared iterators; at most %d",
                        r->nsplits, TD_TMAP_MAX_DIMS);
    for (int k = 0; k < r->nsplits; k++)
        if (r->splits[k].dim < 0 || r->splits[k].dim >= r->rank)
            return td__fail(d, TD_EINVAL, NULL,
                            "tensor map: shared iterator %d names copy "
                            "dimension %d of %d",
                            k, r->splits[k].dim, r->rank);
    for (int g = 0; g < r->rank; g++) {
        int64_t product = 1, in = 1;
        int firstk = -1;
        for (int k = r->nsplits - 1; k >= 0; k--) {
            const td_tmap_split *x = &r->splits[k];
            if (x->dim != g)
                continue;
            if (x->extent < 1 || x->stride < 0)
                return td__fail(d, TD_EINVAL, NULL,
                                "tensor map: shared iterator %d has extent %"
                                PRId64 " and stride %" PRId64
                                "; extents must be positive and strides "
                                "non-negative",
                                k, x->extent, x->stride);
            product = td__mul_sat(product, x->extent);
            inner[k] = in;
            in = td__mul_sat(in, x->extent);
            if (x->extent > 1)
                firstk = k;
        }
        if (product != r->extent[g])
            return td__fail(d, TD_EINVAL, NULL,
                            "tensor map: the shared iterators of copy "
                            "dimension %d multiply to %" PRId64
                            ", not its extent %" PRId64,
                            g, product, r->extent[g]);
        for (int k = 0; k < r->nsplits; k++)
            if (r->splits[k].dim == g)
                first[k] = k == firstk;
    }
    for (int k = 0; k < r->nsplits; k++)
        if (r->splits[k].extent > 1)
            act[na++] = k;
    for (int i = 1; i < na; i++) /* stable: ties keep the listed order */
        for (int j = i; j > 0 && r->splits[act[j - 1]].stride >
                                     r->splits[act[j]].stride; j--) {
            int t = act[j];
            act[j] = act[j - 1];
            act[j - 1] = t;
        }
    if (na == 0)
        return plan_fail(d, r, "shared-chain",
                         "copy region has no non-unit shared memory iterator");
    if (r->splits[act[0]].stride != 1) {
        snprintf(msg, sizeof msg,
                 "smallest shared stride must be 1, got %" PRId64
                 " (disproven)",
                 r->splits[act[0]].stride);
        return plan_fail(d, r, "shared-chain", msg);
    }
    for (int p = 1; p < na; p++) {
        const td_tmap_split *a = &r->splits[act[p - 1]];
        int64_t want = td__mul_sat(a->stride, a->extent);
        if (r->splits[act[p]].stride != want) {
            snprintf(msg, sizeof msg,
                     "shared iter %d at sorted position %d has stride=%" PRId64
                     ", expected %" PRId64 " after extent=%" PRId64
                     " (disproven)",
                     act[p], p, r->splits[act[p]].stride, want, a->extent);
            return plan_fail(d, r, "shared-chain", msg);
        }
    }
    int n = 0;
    for (int p = 0; p < na; p++) {
        int k = act[p];
        const td_tmap_split *x = &r->splits[k];
        int g = x->dim;
        dim y = mkdim(x->extent, td__mul_sat(strides[g], inner[k]),
                      x->extent, 0);
        if (first[k]) {
            int rc = start_divisible(r, g, inner[k], d);
            if (rc != 0)
                return rc;
            if (r->shape[g] % inner[k] != 0) {
                snprintf(msg, sizeof msg,
                         "group=%d tensor extent=%" PRId64 " is not divisible "
                         "by inner_product=%" PRId64 " (disproven)",
                         g, r->shape[g], inner[k]);
                return plan_fail(d, r, "global-shape", msg);
            }
            y.gdim = r->shape[g] / inner[k];
            y.coord = r->start[g] / inner[k];
            set_dyn(&y, r, g, inner[k]);
        }
        v[n++] = y;
    }
    *nactive = n;
    for (int g = 0; g < r->rank; g++)
        if (r->extent[g] == 1) {
            v[n] = mkdim(r->shape[g], strides[g], 1, r->start[g]);
            set_dyn(&v[n++], r, g, 1);
        }
    *nv = n;
    return 0;
}

static int start_divisible(const td_tmap_request *r, int g, int64_t inner,
                           td_diag *d)
{
    int dyn_ok = r->start_align[g] <= 0 || r->start_align[g] % inner == 0;
    if (r->start[g] % inner == 0 && dyn_ok)
        return 0;
    char msg[300], num[32];
    const char *text = r->start_text[g];
    if (text == NULL) {
        snprintf(num, sizeof num, "%" PRId64, r->start[g]);
        text = num;
    }
    snprintf(msg, sizeof msg,
             "group=%d start=%s is not divisible by inner_product=%" PRId64
             " (%s)",
             g, text, inner, dyn_ok ? "disproven" : "unknown");
    return plan_fail(d, r, "coordinate", msg);
}

int td__tmap_plan(const td_tmap_request *r, td_tmap *m, td_diag *d)
{
    int rc = check_config(r, m, d);
    if (rc == 0)
        rc = check_request(r, d);
    if (rc != 0)
        return rc;

    int64_t strides[TD_TMAP_MAX_IN];
    int compact = 1;
    for (int i = 0; i < r->rank; i++)
        if (r->strides[i] != 0)
            compact = 0;
    for (int i = r->rank - 1; i >= 0; i--)
        strides[i] = compact ? (i == r->rank - 1 ? 1
                                                 : td__mul_sat(strides[i + 1], r->shape[i + 1]))
                             : r->strides[i];
    int order[TD_TMAP_MAX_IN];
    for (int i = 0; i < r->rank; i++)
        order[i] = r->order_set ? r->order[i] : i;
    if (r->smem_strides_set) {
        rc = smem_order(r, order, d);
        if (rc != 0)
            return rc;
    }

    dim v[TD_TMAP_MAX_DIMS];
    int n = 0;
    int atom = atom_bytes(r->smem);
    if (r->explicit_map) {
        /* tma_explicit encodes the global view as it is: its dimensions
         * reversed, the box the copy's extents, nothing split or merged. */
        if (strides[r->rank - 1] != 1) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "the innermost memory stride must be provably one because "
                     "CUDA omits it from globalStrides; got %" PRId64,
                     strides[r->rank - 1]);
            return plan_fail(d, r, "global-layout", msg);
        }
        for (int g = r->rank - 1; g >= 0; g--) {
            v[n] = mkdim(r->shape[g], strides[g], r->extent[g], r->start[g]);
            set_dyn(&v[n++], r, g, 1);
        }
        return finish(r, m, v, n, d);
    }

    if (r->nsplits > 0) {
        int nactive = 0;
        rc = from_splits(r, strides, v, &n, &nactive, d);
        if (rc != 0)
            return rc;
        return prefix_search(r, m, v, n, nactive, atom, d);
    }

    /* The shared tile's dimensions, innermost first: the copy dimensions
     * with extent > 1 in the shared order; the innermost of them is cut
     * into swizzle atoms whose column blocks go outermost. */
    int inner = -1;
    for (int k = r->rank - 1; k >= 0; k--)
        if (r->extent[order[k]] > 1) {
            inner = order[k];
            break;
        }
    int has_blocks = 0;
    dim blocks = mkdim(0, 0, 0, 0);
    for (int k = r->rank - 1; k >= 0; k--) {
        int g = order[k];
        if (r->extent[g] == 1)
            continue;
        dim x = mkdim(r->shape[g], strides[g], r->extent[g], r->start[g]);
        set_dyn(&x, r, g, 1);
        if (g == inner && atom > 0) {
            int64_t span = (int64_t)atom * 8 / m->bits;
            if (r->extent[g] % span != 0) {
                char msg[200];
                snprintf(msg, sizeof msg,
                         "the innermost copy extent %" PRId64 " is not a "
                         "multiple of the %dB atom (%" PRId64 " elements)",
                         r->extent[g], atom, span);
                return plan_fail(d, r, "shared-layout", msg);
            }
            if (r->extent[g] > span) {
                char msg[200];
                int rc = start_divisible(r, g, span, d);
                if (rc != 0)
                    return rc;
                if (r->shape[g] % span != 0) {
                    snprintf(msg, sizeof msg,
                             "group=%d tensor extent=%" PRId64 " is not "
                             "divisible by inner_product=%" PRId64
                             " (disproven)",
                             g, r->shape[g], span);
                    return plan_fail(d, r, "global-shape", msg);
                }
                dim a = mkdim(span, strides[g], span, 0);
                blocks = mkdim(r->shape[g] / span,
                               td__mul_sat(strides[g], span),
                               r->extent[g] / span, r->start[g] / span);
                set_dyn(&blocks, r, g, span);
                has_blocks = 1;
                x = a;
            }
        }
        v[n++] = x;
    }
    if (has_blocks)
        v[n++] = blocks;
    int nactive = n;
    for (int g = 0; g < r->rank; g++)
        if (r->extent[g] == 1) {
            v[n] = mkdim(r->shape[g], strides[g], 1, r->start[g]);
            set_dyn(&v[n++], r, g, 1);
        }
    return prefix_search(r, m, v, n, nactive, atom, d);
}
