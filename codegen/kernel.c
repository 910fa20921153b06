/* placeholder: the kernel program generator (issue 6) is being written. */
#include "td_internal.h"

int td_kernel_program(const td_registry *reg, const td_call *call,
                      char **out, td_diag *diag)
{
    (void)reg;
    *out = NULL;
    return td__diag(diag, TD_EINVAL, call->file, 0, 0, NULL, 0,
                    "kernel programs are not available in this build yet");
}
