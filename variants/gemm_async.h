/*
 * The tcgen05 variant of gemm_async, split by concern: gemm_async.c (the
 * predicates, the checks in TVM's order, tensor memory, emission),
 * gemm_async_desc.c (the shared-memory descriptors, a tensor-memory
 * region's layout) and gemm_async_bs.c (block scaling).  Internal to
 * variants/.
 */
#ifndef TD_VARIANTS_GEMM_ASYNC_H
#define TD_VARIANTS_GEMM_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tiledispatch/td_ir.h"
#include "tiledispatch/td_module.h"

/* One shared operand's descriptor: TVM's compute_canonical_params. */
typedef struct td__ga_desc {
    int swizzle, ldo, sdo;
    bool mn_major;
    td_layout tile; /* the region's pre-swizzle layout (offsets) */
    int64_t extent[TD_MAX_RANK];
    int ndim;
    int elem_per_16b;
} td__ga_desc;

/* TVM's list of nd extents e, "[128, 64]", into buf (cap bytes). */
void td__ga_extents(const int64_t *e, int nd, char *buf, size_t cap);

/* A layout's text parsed; TD_EINVAL when it does not parse. */
int td__ga_parse(const char *text, td_layout *out);

/* The descriptor of source `which` (0 A, 1 B) of a gemm_async call in
 * shared memory, `transposed` its transA / transB: 0, TD_EDECLINED with
 * TVM's text in why, or another negative code. */
int td__ga_canonical_params(const td_call *call, int which, bool transposed,
                            td__ga_desc *g, td_reason *why);

/* The offset from the buffer's start, in 16-byte units, of the operand's
 * element at flat index `linear` of its region (the region's pre-swizzle
 * tile); -1 when it does not apply. */
int64_t td__ga_off16_at(const td__ga_desc *g, int64_t linear);

/* ---- block scaling (gemm_async_bs.c) ---------------------------------- */

/* A block-scaled call's scale factors and what emission needs of them. */
typedef struct td__ga_bs {
    int sf_mma_k;              /* scale factors per MMA K step: 1, 2, 4 */
    int kind;                  /* td_umma_bs_kind, -1 when none fits */
    td_dtype a, b, sf[2];
    const td_buffer *tmem[2];  /* SFA, SFB */
    td_layout slice[2];        /* their regions' layouts */
    int64_t rows[2], k_total[2], per_ki[2];
    bool sf_id;                /* rotate sf_id per K step */
    bool given;                /* descI given: `value` */
    uint32_t value;
    td_ir_idesc_bs idesc;      /* the run-time encode's fields */
    const td_ir_buf *buf[2];   /* emission: the IR's SFA, SFB */
    const td_var *var;         /* emission: the descriptor local */
} td__ga_bs;

/* A call with SFA and SFB (sources 3 and 4). */
bool td__ga_is_block_scaled(const td_call *call);
/* The checks, each 0 or TD_EDECLINED with TVM's text in why (or another
 * negative code), in TVM's order: the A / B dtypes; the scale factors;
 * their rows and K extents (after K: m, n the call's, k_iters its K
 * steps); smem_desc, the kind, and the encoder's shape and transpose
 * rules for the instruction (m_instr x n_instr x mma_k, A / B MN-major). */
int td__ga_bs_dtypes(const td_call *call, td_reason *why);
int td__ga_bs_sf(const td_call *call, td__ga_bs *bs, td_reason *why);
int td__ga_bs_extents(td__ga_bs *bs, int64_t m, int64_t n, int64_t k_iters,
                      td_reason *why);
/* The kind and the block-scaled shape table (TVM's text). */
int td__ga_bs_shape(const td__ga_bs *bs, int cta_group, int64_t m_instr,
                    int64_t n_instr, int64_t mma_k, td_reason *why);
int td__ga_bs_final(const td_call *call, td__ga_bs *bs, int cta_group,
                    int64_t m_instr, int64_t n_instr, int64_t mma_k,
                    bool a_mn, bool b_mn, td_reason *why);
/* Emission: the scale factors' IR buffers and the descriptor local
 * (before the MMAs); per MMA (mi, ni, ki) the block-scale fields of u
 * (m_mma the instruction's rows per CTA, n_cta its columns per CTA), the
 * sf_id patch first where it rotates. */
int td__ga_bs_begin(td_ir *ir, td__ga_bs *bs);
int td__ga_bs_mma(td_ir *ir, const td__ga_bs *bs, int64_t mi, int64_t ni,
                  int64_t ki, int64_t m_mma, int64_t n_cta, td_ir_umma *u);

/* The layout of tensor-memory region r (TVM's buffer.layout.slice): of
 * the buffer's layout, or of datapath D's identity for a buffer declared
 * without one.  Nonzero when it does not slice. */
int td__ga_tmem_slice(const td_call *call, const td_region *r,
                      td_layout *out);

#endif
