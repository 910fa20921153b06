//! Every reference: the tolerance scale switch and the --data mode flag.
#ifndef TD_TOL_SCALE
#define TD_TOL_SCALE 1.0
#endif
static bool td_data_random = false; /* --data random */
