//! main (bit-exact families): the expected bits of every dst position, and
//! the loop over rounds (the first round with a mismatch is the last).
    unsigned long long *td_want = (unsigned long long *)malloc(sizeof(unsigned long long) * TD_DST_ELEMS);
    double *td_tol = (double *)malloc(sizeof(double)); /* unused: bit-exact */
    if (td_want == NULL || td_tol == NULL) {
        printf("FAIL %s host out of memory\n", TD_NAME);
        return TD_EXIT_FAIL;
    }
    for (td_round = 0; td_round < TD_ROUNDS && td_round < td_rounds_max &&
                      td_mismatches == 0;
         ++td_round) {
