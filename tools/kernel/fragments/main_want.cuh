//! main: the expected values and tolerances, and the loop over rounds (the
//! first round with a mismatch is the last).
    double *td_want = (double *)malloc(sizeof(double) * TD_DST_ELEMS);
    double *td_tol = (double *)malloc(sizeof(double) * TD_DST_ELEMS);
    if (td_want == NULL || td_tol == NULL) {
        printf("FAIL %s host out of memory\n", TD_NAME);
        return TD_EXIT_FAIL;
    }
    for (td_round = 0; td_round < TD_ROUNDS && td_round < td_rounds_max &&
                      td_mismatches == 0;
         ++td_round) {
