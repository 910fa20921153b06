/*
 * tiledispatch: self-checking CUDA programs (contract section 6).
 */
#ifndef TILEDISPATCH_TD_KERNEL_H
#define TILEDISPATCH_TD_KERNEL_H

#include "tiledispatch/td_call.h"
#include "tiledispatch/td_error.h"
#include "tiledispatch/td_registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Dispatches `call` and writes a complete .cu program: a __global__ kernel
 * that stages deterministic inputs from global memory into the call's
 * buffers (following their layouts), runs the emitted body and stages the
 * results back, and a host main that computes the reference on the CPU in
 * double precision and prints "PASS name max_err=..." or "FAIL name ..."
 * (exit 0 / 1), or "SKIP name: no CUDA device (reason)" (exit 77) where no
 * usable device is found.  The program takes --data exact|random (exact
 * k/64 inputs, or normal ones with float sums checked against a documented
 * tolerance) and --seed N; contract section 6.  *out is allocated through the allocator hook (release it
 * with td_free()).  Returns
 * TD_ENOMATCH when no variant matched (use td_explain_call for why).
 */
int td_kernel_program(const td_registry *reg, const td_call *call,
                      char **out, td_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
