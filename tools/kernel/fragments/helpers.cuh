//! Every program: exit codes, the no-device test, TD_CHECK and the double
//! conversions.
/* Exit codes: 0 PASS, 1 FAIL, 2 usage error, 77 SKIP (no usable CUDA
 * device: the automake / meson skip code). */
#define TD_EXIT_PASS 0
#define TD_EXIT_FAIL 1
#define TD_EXIT_USAGE 2
#define TD_EXIT_SKIP 77

/* Errors that say there is no usable device (no GPU, no driver or one
 * too old, no kernel image or PTX this device can run): the program
 * skips, it does not fail. */
static inline bool td_no_device(cudaError_t e)
{
    switch (e) {
    case cudaErrorInitializationError:
    case cudaErrorStubLibrary:
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoDevice:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorSystemNotReady:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        return true;
    default:
        return false;
    }
}

#define TD_CHECK(expr)                                                     \
    do {                                                                   \
        cudaError_t td_err_ = (expr);                                      \
        if (td_err_ != cudaSuccess) {                                      \
            if (td_no_device(td_err_)) {                                   \
                printf("SKIP %s: no CUDA device (%s: %s)\n", TD_NAME,     \
                       cudaGetErrorName(td_err_),                          \
                       cudaGetErrorString(td_err_));                       \
                return TD_EXIT_SKIP;                                       \
            }                                                              \
            printf("FAIL %s CUDA error %s at line %d (%s): %s\n", TD_NAME, \
                   cudaGetErrorName(td_err_), __LINE__, #expr,             \
                   cudaGetErrorString(td_err_));                           \
            return TD_EXIT_FAIL;                                           \
        }                                                                  \
    } while (0)

template <typename T> static inline double td_to_double(T v) { return (double)v; }
/* A 64-bit integer that a double does not hold exactly reads as NaN,
 * which matches no wanted value: the check compares doubles, and without
 * this an identity off by a few units near -2^63 would compare equal. */
__attribute__((unused)) static inline double td_to_double(long long v)
{
    const double d = (double)v;
    return d >= 9223372036854775808.0 || (long long)d != v ? NAN : d;
}
__attribute__((unused)) static inline double td_to_double(long v) { return td_to_double((long long)v); }
__attribute__((unused)) static inline double td_to_double(unsigned long long v)
{
    const double d = (double)v;
    return d >= 18446744073709551616.0 || (unsigned long long)d != v ? NAN : d;
}
__attribute__((unused)) static inline double td_to_double(unsigned long v)
{
    return td_to_double((unsigned long long)v);
}
template <typename T> static inline T td_from_double(double v) { return (T)v; }
