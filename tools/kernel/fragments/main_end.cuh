//! main: freeing and the FAIL line.
    free(td_want);
    free(td_tol);
    char td_data[64] = "";
    if (td_data_random)
        snprintf(td_data, sizeof td_data, " data=random seed=0x%llx", td_seed);
    if (td_mismatches != 0) {
        printf("FAIL %s %s (%lld mismatches)%s\n", TD_NAME, td_first, td_mismatches, td_data);
        return TD_EXIT_FAIL;
    }
