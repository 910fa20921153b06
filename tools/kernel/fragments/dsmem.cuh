//! Cluster copies (dsmem): the expected dst of one CTA and its check.
//! Every CTA's dst region receives the source region of the CTA that
//! copies into it (td_ds_from: the instance whose mapa names this one);
//! every other position keeps what it held: the sentinel in a dst buffer
//! of its own, the CTA's own values where one buffer holds both tiles.
static inline void td_ds_reference(const unsigned long long *src,
                                   const unsigned long long *old,
                                   unsigned long long *want)
{
    for (long long e = 0; e < TD_DST_ELEMS; ++e)
        want[e] = td_cp_sidx[e] >= 0 ? src[td_cp_sidx[e]] : old[e];
}
/* The copy's check, except that outside the region of a buffer that holds
 * both tiles the element must keep the CTA's own value (no sentinel). */
static inline void td_ds_check(const char *buf, long long inst, long long e,
                               long long thread, long long slot,
                               unsigned long long got, unsigned long long want,
                               double tol)
{
    if (TD_DS_ONE_BUFFER && got != want && e >= 0 && td_cp_slog[e] < 0 &&
        td_mismatches++ == 0) {
        char at[96] = "";
        td_cp_coords(at, sizeof at, td_dst_shape, TD_CP_DST_NDIM, td_cp_dlog[e]);
        snprintf(td_first, sizeof td_first,
                 "round=%d instance=%lld %s%s: got 0x%llx want 0x%llx (its own "
                 "value: outside the dst region, which only the peer writes)",
                 td_round, inst, buf, at, got, want);
        return;
    }
    const long long before = td_mismatches;
    td_cp_check(buf, inst, e, thread, slot, got, want, tol);
    /* The first mismatch in the region: say whose source it pairs with. */
    if (before == 0 && td_mismatches == 1 && e >= 0 && td_cp_slog[e] >= 0) {
        const size_t n = strlen(td_first);
        snprintf(td_first + n, sizeof td_first - n, ", copied by CTA %d",
                 td_ds_from[inst]);
    }
}

/* The issue's stagger (docs/verification.md, "when the data arrives"):
 * thread 0 of the CTA of cluster rank r spins r * TD_DS_STAGGER_NS
 * nanoseconds of the global timer after arming its barrier and before
 * issuing its copy, so a cluster's CTAs issue one after another.  The
 * wait orders what the program reads, never the stagger: the correct
 * program passes at any delay; a copy completing on the wrong barrier
 * lets some CTA pass its wait before its own bytes land, and the
 * snapshot taken right after the wait shows it.  On the host (the
 * stand-in) nothing: its copies land when issued, and it checks the
 * barrier's CTA itself. */
#ifndef TD_DS_STAGGER_NS
#define TD_DS_STAGGER_NS 20000ULL
#endif
__device__ __forceinline__ void td_ds_stagger()
{
#ifdef __CUDA_ARCH__
    unsigned int r;
    unsigned long long t0, t;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < (unsigned long long)r * TD_DS_STAGGER_NS);
#endif
}
