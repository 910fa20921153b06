//! Copy programs: the end of main, the PASS line (max_err is 0: every
//! comparison is of bits).
    printf("PASS %s max_err=0 bit-exact: %lld region elements, %d round(s)%s\n", TD_NAME, (long long)TD_CP_REGION, td_round, td_data);
    return TD_EXIT_PASS;
}
