//! Programs with a float16 buffer or scalar: its double conversions.
static inline double td_to_double(__half v) { return (double)__half2float(v); }
template <> __half td_from_double<__half>(double v)
{
    return __float2half((float)v);
}
