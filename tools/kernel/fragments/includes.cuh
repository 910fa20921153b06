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
