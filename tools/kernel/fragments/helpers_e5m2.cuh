//! Programs whose reference reads float8_e5m2 values (the gemm family; the
//! bit-exact families move float8 as bits): its double conversions.  To
//! float8 is CUDA's conversion (round to nearest even, saturating to the
//! largest finite value); every float8 value is exact in float and double.
static inline double td_to_double(__nv_fp8_e5m2 v) { return (double)(float)v; }
template <> __nv_fp8_e5m2 td_from_double<__nv_fp8_e5m2>(double v)
{
    return __nv_fp8_e5m2((float)v);
}
