/*
 * The plan of the copy_async variant `smem->tmem` (tcgen05.cp): the shape,
 * the shared memory descriptor's fields and every copy, derived from the
 * call's layouts (copy_async_tcgen05_cp_plan.c).  Pure: it reads the call
 * and writes the plan; it builds no IR.
 */
#ifndef TILEDISPATCH_COPY_ASYNC_TCGEN05_CP_PLAN_H
#define TILEDISPATCH_COPY_ASYNC_TCGEN05_CP_PLAN_H

#include <stdint.h>

#include "tiledispatch/td_ir.h"
#include "tiledispatch/td_module.h"

/* The most copies one call unrolls. */
#define TD_CP_MAX 128

typedef struct td_cp_plan {
    td_ir_cp_shape shape;
    int lbo, sbo, swizzle;     /* descriptor fields (16-byte units, mode) */
    int n;                     /* copies */
    int cta_group;             /* 1 or 2 */
    int64_t taddr[TD_CP_MAX];  /* each copy's offset from NAME_taddr */
    int64_t base[TD_CP_MAX];   /* each copy's first shared element (linear) */
} td_cp_plan;

/* Plans the call (a shared -> tmem copy_async the predicates accepted): 0,
 * or TD_EDECLINED with the reason (TVM's text where TVM raises), or
 * TD_ENOMEM. */
int td__cp_plan(const td_call *call, td_cp_plan *p, td_reason *why);

#endif
