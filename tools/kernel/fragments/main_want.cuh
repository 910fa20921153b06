//! main: the expected values and tolerances, and the loop over instances.
    double *td_want = (double *)malloc(sizeof(double) * TD_DST_ELEMS);
    double *td_tol = (double *)malloc(sizeof(double) * TD_DST_ELEMS);
    if (td_want == NULL || td_tol == NULL) {
        printf("FAIL %s host out of memory\n", TD_NAME);
        return TD_EXIT_FAIL;
    }
    for (long long inst = 0; inst < TD_INSTANCES; ++inst) {
