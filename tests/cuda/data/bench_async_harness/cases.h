/* The kernel list of the harness check (tests/cuda/bench_copy_async.py
   --harness), in gen/cases.h's form: a small workload and one kernel per
   way a kernel can go wrong (fake_kernels.cpp says how each behaves). */
#define ASYNC_TILES 2
#define ASYNC_CTAS 2
#define ASYNC_THREADS 128
#define ASYNC_TILE_ROWS 128
#define ASYNC_TILE_COLS 64
#define ASYNC_CHECK_LIMIT_S 2
#define ASYNC_CASES(X) \
    X(fake_good, 0, 2, "right checksums") \
    X(fake_fault, 1, 2, "faults at once (a sticky error)") \
    X(fake_wrong, 1, 2, "one checksum off") \
    X(fake_hang, 1, 2, "never returns") \
    X(fake_refuse, 1, 2, "its launcher refuses") \
    X(fake_late_fault, 1, 4, "right once, faults when timed") \
    X(fake_good2, 0, 4, "right checksums, after the others")
