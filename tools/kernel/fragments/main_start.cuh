//! main: the options and the SKIP when no device is usable.
int main(int argc, char **argv)
{
    if (!td_options(argc, argv)) {
        fprintf(stderr, "usage: %s [--data exact|random] [--seed N] [--rounds N]\n", argv[0]);
        return TD_EXIT_USAGE;
    }
    const unsigned long long td_seed = td_rng_state;
    /* No usable device: SKIP (exit 77), never FAIL. */
    int td_ndev = 0;
    const cudaError_t td_dev_err = cudaGetDeviceCount(&td_ndev);
    if (td_dev_err != cudaSuccess) {
        printf("SKIP %s: no CUDA device (%s: %s)\n", TD_NAME,
               cudaGetErrorName(td_dev_err), cudaGetErrorString(td_dev_err));
        return TD_EXIT_SKIP;
    }
    if (td_ndev < 1) {
        printf("SKIP %s: no CUDA device (cudaGetDeviceCount found none)\n", TD_NAME);
        return TD_EXIT_SKIP;
    }
