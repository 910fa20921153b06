/*
 * The built-in variant modules (internal): the one place they are listed.
 * Each module is one file of this folder defining one or more
 * `const td_impl_desc` (its emitter and the predicates it brings).  To add
 * a module: write variants/NAME.c, add its descriptor to the list below,
 * and its file to meson.build (docs/extending.md).  The registry's builtin
 * table (registry/builtin.c) registers every listed descriptor.
 */
#ifndef TILEDISPATCH_VARIANTS_H
#define TILEDISPATCH_VARIANTS_H

#include "tiledispatch/td_module.h"

#define TD_BUILTIN_MODULES(X)                                              \
    X(td__variant_local)          /* register reductions; local_valid */   \
    X(td__variant_shared)         /* shared-memory trees; shared_valid */  \
    X(td__variant_shared_rows)    /* fast shared rows; shared_rows_valid */\
    X(td__variant_packed_add_sum) /* Blackwell packed sum */               \
    X(td__variant_3input_maxmin)  /* Blackwell 3-input max/min */     \
    X(td__variant_ewise_reg)      /* elementwise, registers */         \
    X(td__variant_ewise_smem)     /* elementwise, shared memory */    \
    X(td__variant_copy_fallback)  /* copy, one thread, scalar */    \
    X(td__variant_copy_vec_auto)  /* copy, auto-vectorised */       \
    X(td__variant_copy_ldstmatrix) /* copy, ldmatrix / stmatrix */   \
    X(td__variant_copy_vec_16b)   /* copy, forced 2-byte access */    \
    X(td__variant_copy_vec_32b)   /* copy, forced 4-byte access */    \
    X(td__variant_copy_vec_64b)   /* copy, forced 8-byte access */    \
    X(td__variant_copy_vec_128b)  /* copy, forced 16-byte access */   \
    X(td__variant_copy_vec_256b)  /* copy, forced 32-byte access */   \
    X(td__variant_copy_async_ldgsts) /* copy_async, cp.async */      \
    X(td__variant_copy_async_dsmem) /* copy_async, cluster bulk copy */ \
    X(td__variant_copy_async_smem_tmem) /* copy_async, tcgen05.cp */ \
    X(td__variant_copy_async_tma_auto) /* copy_async, TMA, planned map */ \
    X(td__variant_copy_async_tma_explicit) /* copy_async, TMA, as declared */ \
    X(td__variant_copy_async_tmem_local) /* copy_async, tcgen05.ld/st */ \
    X(td__variant_gemm_mma)       /* gemm, mma.sync m16n8k* */      \
    X(td__variant_gemm_mma_ext)   /* gemm, tiledispatch's mma.sync */ \
    X(td__variant_gemm_async_tcgen05) /* gemm_async, tcgen05.mma */  \
    X(td__variant_permute_warp_xor_swizzle) /* permute_layout, warp */

#define TD__DECLARE_MODULE(desc) extern const td_impl_desc desc;
TD_BUILTIN_MODULES(TD__DECLARE_MODULE)
#undef TD__DECLARE_MODULE

#endif
