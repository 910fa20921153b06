//! Every reference: the row-major flat index of region coordinates.
/* Row-major flat index of coords (start + c) in a buffer of `shape`. */
static inline long long td_flat(int nd, const long long *shape,
                         const long long *start, const long long *c)
{
    long long f = 0;
    for (int d = 0; d < nd; ++d)
        f = f * shape[d] + start[d] + c[d];
    return f;
}

