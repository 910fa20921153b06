//! Programs with a bfloat16 buffer or scalar: its double conversions.
static inline double td_to_double(__nv_bfloat16 v)
{
    return (double)__bfloat162float(v);
}
template <> __nv_bfloat16 td_from_double<__nv_bfloat16>(double v)
{
    return __float2bfloat16((float)v);
}
