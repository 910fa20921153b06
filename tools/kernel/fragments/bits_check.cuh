//! Bit-exact families: the check of a value that must come back unchanged
//! (a source), on raw bits (never == on floats: NaN, -0).
static inline void td_check_bits(const char *buf, long long inst, long long elem,
                                 long long thread, long long slot,
                                 unsigned long long got, unsigned long long want,
                                 double tol)
{
    (void)tol;
    if (got == want || td_mismatches++ != 0)
        return;
    char who[96] = "";
    if (inst >= 0)
        snprintf(who, sizeof who, " instance=%lld", inst);
    if (thread >= 0)
        snprintf(td_first, sizeof td_first,
                 "round=%d%s buffer=%s element=%lld thread=%lld slot=%lld "
                 "got=0x%llx want=0x%llx (bit-exact; the buffer must not change)",
                 td_round, who, buf, elem, thread, slot, got, want);
    else
        snprintf(td_first, sizeof td_first,
                 "round=%d%s buffer=%s element=%lld got=0x%llx want=0x%llx "
                 "(bit-exact; the buffer must not change)",
                 td_round, who, buf, elem, got, want);
}
