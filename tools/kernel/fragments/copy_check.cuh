//! Copy programs: the check of a dst position, on raw bits; the first
//! mismatch names the element (its coordinates), both values and, inside
//! the region, the source element it pairs with; outside the region it
//! says "written outside the region".
static inline void td_cp_coords(char *out, size_t cap, const long long *shape,
                                int ndim, long long e)
{
    long long idx[8] = {0};
    for (int d = ndim - 1; d >= 0; --d) {
        idx[d] = e % shape[d];
        e /= shape[d];
    }
    size_t n = (size_t)snprintf(out, cap, "[");
    for (int d = 0; d < ndim && n < cap; ++d)
        n += (size_t)snprintf(out + n, cap - n, "%s%lld", d ? ", " : "", idx[d]);
    if (n < cap)
        snprintf(out + n, cap - n, "]");
}

static inline void td_cp_check(const char *buf, long long inst, long long e,
                               long long thread, long long slot,
                               unsigned long long got, unsigned long long want,
                               double tol)
{
    (void)tol;
    if (got == want || td_mismatches++ != 0)
        return;
    const int w = (TD_CP_BITS + 3) / 4;
    char who[128] = "", at[96] = "", src[96] = "";
    if (inst >= 0)
        snprintf(who, sizeof who, " instance=%lld", inst);
    if (thread >= 0) {
        const size_t n = strlen(who);
        snprintf(who + n, sizeof who - n, " thread=%lld slot=%lld", thread, slot);
    }
    if (e < 0 || td_cp_dlog[e] < 0) {
        if (e < 0 && thread < 0)
            snprintf(at, sizeof at, "offset %lld of the shared storage, a hole no element has", slot);
        else if (e < 0)
            snprintf(at, sizeof at, "a register slot no element owns");
        else if (e < TD_CP_DST_PAD)
            snprintf(at, sizeof at, "guard element %lld before the array", TD_CP_DST_PAD - e);
        else if (e >= TD_DST_ELEMS - TD_CP_DST_PAD)
            snprintf(at, sizeof at, "guard element %lld after the array", e - (TD_DST_ELEMS - TD_CP_DST_PAD) + 1);
        else
            snprintf(at, sizeof at, "offset %lld, a hole of the storage", e - TD_CP_DST_PAD);
        snprintf(td_first, sizeof td_first,
                 "round=%d%s buffer=%s %s: got 0x%0*llx want 0x%0*llx (the "
                 "sentinel): written outside the region",
                 td_round, who, buf, at, w, got, w, want);
        return;
    }
    td_cp_coords(at, sizeof at, td_dst_shape, TD_CP_DST_NDIM, td_cp_dlog[e]);
    if (td_cp_slog[e] < 0) {
        snprintf(td_first, sizeof td_first,
                 "round=%d%s %s%s: got 0x%0*llx want 0x%0*llx (the sentinel): "
                 "written outside the region",
                 td_round, who, buf, at, w, got, w, want);
        return;
    }
    td_cp_coords(src, sizeof src, td_src_shape, TD_CP_SRC_NDIM, td_cp_slog[e]);
    snprintf(td_first, sizeof td_first,
             "round=%d%s first mismatch at %s%s: got 0x%0*llx want 0x%0*llx (%s%s)",
             td_round, who, buf, at, w, got, w, want, TD_CP_SRC_NAME, src);
}
