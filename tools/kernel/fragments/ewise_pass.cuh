//! Elementwise ops: the end of main, the PASS line with max_ulp.
    printf("PASS %s max_err=%.3g max_ulp=%.3g%s max_err/tol=%.3g\n", TD_NAME, td_max_err, td_max_ulp, td_data, td_max_ratio);
    return TD_EXIT_PASS;
}
