//! Reductions: the end of main, the PASS line.
    if (td_data_random)
        printf("PASS %s max_err=%.3g%s max_err/tol=%.3g\n", TD_NAME, td_max_err, td_data, td_max_ratio);
    else
        printf("PASS %s max_err=%.3g\n", TD_NAME, td_max_err);
    return TD_EXIT_PASS;
}
