//! Every program: the C++ and CUDA runtime headers (fp16 and bf16 follow
//! where a buffer or scalar needs them).
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

/* The checked mode of the library's helpers (docs/copy_async.md): the
 * cluster helpers trap on a rank outside the cluster, a cluster copy's
 * size or alignment that PTX leaves undefined, a barrier in another CTA
 * than the copy's destination, instead of letting the hardware wrap. */
#ifndef TD_CHECKED
#define TD_CHECKED 1
#endif
