/*
 * TMA tensor maps: what cuTensorMapEncodeTiled takes for one bulk tensor
 * copy between a global buffer and a shared tile, planned the way TVM's
 * tma_auto and tma_explicit variants plan it (apache-tvm 0.27), and the
 * static validator that refuses maps the hardware would reject, with TVM's
 * rule names and messages.  Pure functions over integers: no call, no
 * variant, no printing (the C and JSON printers are in codegen/).
 */
#ifndef TD_MODEL_TENSOR_MAP_H
#define TD_MODEL_TENSOR_MAP_H

#include <stdint.h>

#include "tiledispatch/td_error.h"

/* The hardware's rank limit is 5; the working arrays hold more so that a
 * plan that needs 6 dimensions can be reported as such ("got 6"). */
#define TD_TMAP_MAX_RANK 5
#define TD_TMAP_MAX_DIMS 16
/* The most dimensions a request's global buffer may have. */
#define TD_TMAP_MAX_IN 8

typedef enum td_tmap_dir {
    TD_TMAP_G2S = 0, /* global -> shared (a load completing on an mbarrier) */
    TD_TMAP_S2G = 1  /* shared -> global (a store through a bulk group) */
} td_tmap_dir;

/* The shared operand's layout, in TVM's forms: a compact row-major tile,
 * or mma_shared_layout(dtype, swizzle, shape), the tile cut into atoms one
 * swizzle span wide (16 B without swizzle, 32/64/128 B with it) whose
 * column blocks are the outermost shared dimension. */
typedef enum td_tmap_smem {
    TD_TMAP_SMEM_ROW = 0,
    TD_TMAP_SMEM_ATOM16,
    TD_TMAP_SMEM_SW32,
    TD_TMAP_SMEM_SW64,
    TD_TMAP_SMEM_SW128
} td_tmap_smem;

/* CUtensorMapSwizzle / CUtensorMapL2promotion / CUtensorMapFloatOOBfill
 * values, as TVM and the driver number them. */
enum {
    TD_TMAP_SWIZZLE_NONE = 0,
    TD_TMAP_SWIZZLE_32B = 1,
    TD_TMAP_SWIZZLE_64B = 2,
    TD_TMAP_SWIZZLE_128B = 3
};
enum { TD_TMAP_L2_DEFAULT = -1, TD_TMAP_L2_128B = 2 };
enum { TD_TMAP_OOB_ZERO = 0, TD_TMAP_OOB_NAN = 1 };

/* One piece of a copy dimension in the shared tile: a TileLayout iterator
 * of the shared tile grouped by the copy's shape (extent, stride in
 * elements), belonging to copy dimension `dim`. */
typedef struct td_tmap_split {
    int dim;
    int64_t extent;
    int64_t stride;
} td_tmap_split;

/*
 * One copy to plan.  Arrays are in the global buffer's dimension order,
 * outermost first.  `strides` are in elements; all zero means compact
 * row-major.  `order`, when order_set, lists the copy dimensions in the
 * shared tile's order, outermost first (a transposed tile is {1, 0});
 * otherwise the shared tile follows the global order.
 */
typedef struct td_tmap_request {
    const char *dtype; /* TVM's name: float16, bfloat16, int8, ... */
    int rank;
    int64_t shape[TD_TMAP_MAX_IN];
    int64_t strides[TD_TMAP_MAX_IN];
    int64_t start[TD_TMAP_MAX_IN];
    int64_t extent[TD_TMAP_MAX_IN];
    /* A start that is not constant (a region over block ids or scalars):
     * start[i] is its constant part and start_align[i] > 0 a number that
     * divides every value the rest takes (the gcd of its coefficients);
     * start_text[i], when not NULL, the whole start as TVM prints it, for
     * the messages.  0: the start is start[i]. */
    int64_t start_align[TD_TMAP_MAX_IN];
    const char *start_text[TD_TMAP_MAX_IN];
    int order[TD_TMAP_MAX_IN];
    int order_set;
    /* With smem_strides_set, a row-major-kind shared tile's strides in
     * elements, one per copy dimension: the shared order follows them
     * (smallest innermost) and they must chain without gaps. */
    int64_t smem_strides[TD_TMAP_MAX_IN];
    int smem_strides_set;
    /* With nsplits > 0, the shared tile in general form: its iterators,
     * each copy dimension's listed outermost first, whose extents multiply
     * to the copy extent (a TileLayout such as TVM's nested atom tilings;
     * `smem` then only gives the swizzle mode). */
    td_tmap_split splits[TD_TMAP_MAX_DIMS];
    int nsplits;
    td_tmap_smem smem;
    int64_t elem_offset; /* the global view's element offset */
    td_tmap_dir direction;
    int explicit_map;      /* 1: tma_explicit's rules, 0: tma_auto's */
    const char *oob;       /* NULL, "zero" or "nan" (config key oob) */
    int l2_promotion;      /* TD_TMAP_L2_DEFAULT or 0..3 */
    const char *tma_dtype; /* NULL, "tf32" or "tfloat32" */
    int sm;                /* target arch number: 90 for sm_90a */
    int cta_group;         /* 1 or 2; 0 means 1 */
    int has_mbar;          /* a g2s copy needs its mbarrier */
} td_tmap_request;

/* A request with TVM's defaults: row-major shared tile, g2s with an
 * mbarrier, default L2 promotion, sm_90, cta_group 1, compact strides. */
void td__tmap_request_init(td_tmap_request *r);

/* One issue loop of a tma_auto copy: `extent` TMA instructions, the i-th
 * at coordinate coordinates[dim] + i and shared element offset
 * i * smem_stride (innermost loop first). */
typedef struct td_tmap_issue {
    int64_t extent;
    int64_t smem_stride;
    int dim;
} td_tmap_issue;

/*
 * A tensor map in CUDA's order (dimension 0 innermost) with what TVM's
 * TensorMapSpec keeps of it.  global_strides holds rank-1 byte strides;
 * inner_stride is dimension 0's stride in elements (must be 1).
 */
typedef struct td_tmap {
    char dtype[24];   /* descriptor dtype (TVM's name) */
    int bits;         /* bits per element */
    int effective_bytes;
    int packed;       /* float4_e2m1fn: 16U4_ALIGN16B */
    int force_cu_dtype; /* -1, or 11 (TFLOAT32) */
    int64_t base_byte_offset;
    int rank;
    int64_t global_dims[TD_TMAP_MAX_DIMS];
    int64_t global_strides[TD_TMAP_MAX_DIMS]; /* rank-1 used */
    int nglobal_strides;
    int64_t inner_stride;
    int64_t box_dims[TD_TMAP_MAX_DIMS];
    int64_t element_strides[TD_TMAP_MAX_DIMS];
    int64_t coordinates[TD_TMAP_MAX_DIMS]; /* the box's origin */
    int ncoordinates;
    /* Coordinate i's part that is not constant: coord_src[i] = g + 1 when
     * it is the non-constant part of the request's start[g] times
     * coord_mul[i], divided (exactly) by coord_div[i]; 0 when coordinate i
     * is constant. */
    int coord_src[TD_TMAP_MAX_DIMS];
    int64_t coord_mul[TD_TMAP_MAX_DIMS];
    int64_t coord_div[TD_TMAP_MAX_DIMS];
    int interleave, swizzle, l2_promotion, oob_fill;
    td_tmap_dir direction;
    int sm;
    int cta_group;
    int has_mbar;
    td_tmap_issue issue[TD_TMAP_MAX_DIMS]; /* tma_auto's issue loops */
    int nissue;
} td_tmap;

/* The CUtensorMapDataType a map's dtype encodes as: its number and its
 * enumerator's name (CU_TENSOR_MAP_DATA_TYPE_FLOAT16).  int8 and the fp8
 * types travel as UINT8, as TVM sends them. */
int td__tmap_cu_dtype(const td_tmap *m, const char **name);

/* One failed rule: TVM's rule name and message. */
typedef struct td_tmap_finding {
    const char *rule;
    char message[200];
} td_tmap_finding;

/*
 * Checks every static rule on m (rank, dtype, array lengths, alignments,
 * ranges, boxes, element strides, enums, inner box bytes, swizzle span,
 * packed and interleave rules, NaN fill, arch, cta_group, mbarrier) in
 * TVM's order; writes at most cap failures to out and returns how many
 * rules failed (0: the map is legal).
 */
int td__tmap_validate(const td_tmap *m, td_tmap_finding *out, int cap);

/*
 * Joins failures as TVM raises them: "rule: message [disproven]; ...".
 */
void td__tmap_join(const td_tmap_finding *f, int n, char *buf, size_t cap);

/*
 * Only the config checks td__tmap_plan makes first (TVM's _runtime_config
 * and _dtype_contract: oob, cta_group, mbar, L2 promotion, the descriptor
 * dtype), for a caller that reads the operands before planning and must
 * refuse in TVM's order.  0 or TD_EINVAL with TVM's message.
 */
int td__tmap_check_config(const td_tmap_request *r, td_diag *d);

/*
 * Plans the map for r.  tma_explicit: the global view's dimensions
 * reversed, validated.  tma_auto: TVM's dimension order (the shared
 * tile's order, innermost first; swizzle atoms split the innermost copy
 * dimension, their column blocks outermost; unit copy dimensions last in
 * global order), then its prefix search (the largest innermost run of
 * shared dimensions that fits one legal box; the rest become issue loops),
 * each candidate canonicalised (unit global dimensions dropped, contiguous
 * neighbours merged while the box stays legal) and validated.
 * On success fills m and returns 0; otherwise returns TD_EINVAL with TVM's
 * message (its stage prefix included) in d.
 */
int td__tmap_plan(const td_tmap_request *r, td_tmap *m, td_diag *d);

#endif
