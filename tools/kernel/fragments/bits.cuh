//! Bit-exact families (copy): a value's raw bits and back, on the host and
//! the device.  memcpy moves the bytes as they are, so NaN payloads, -0 and
//! subnormals pass unchanged (a conversion through float or double would
//! not promise that).
template <typename T> __host__ __device__ static inline unsigned long long td_bits(T v)
{
    unsigned long long u = 0;
    memcpy(&u, &v, sizeof v);
    return u;
}
template <typename T> __host__ __device__ static inline T td_from_bits(unsigned long long u)
{
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}
