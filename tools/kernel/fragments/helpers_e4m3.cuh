//! Programs whose reference reads float8_e4m3 values (the gemm family; the
//! bit-exact families move float8 as bits): its double conversions.  To
//! float8 is CUDA's conversion (round to nearest even, saturating to the
//! largest finite value); every float8 value is exact in float and double.
static inline double td_to_double(__nv_fp8_e4m3 v) { return (double)(float)v; }
template <> __nv_fp8_e4m3 td_from_double<__nv_fp8_e4m3>(double v)
{
    return __nv_fp8_e4m3((float)v);
}
