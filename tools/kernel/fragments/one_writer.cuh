//! Reductions with a shared dst: each dst element is written by one thread.
/* The body sees its dst through td_one_writer: NAME_ptr[i] reads and
 * writes the instance's shared copy as a pointer would, and each write
 * also records its thread (td_tid + 1) in the element's owner word
 * (td_guard after the buffers' flags, one word per element of every
 * instance, zeroed before each launch).  A write by a second thread to an
 * element another thread wrote in the same launch sets the conflict words:
 * the element + 1 and both threads.  Two threads storing one element is a
 * race whose loser no value can show (the hardware keeps one lane's store
 * of a warp's), so the program checks the writers instead: every dst
 * element of a reduction has one writer (the one that holds its row's
 * total).  Writes past the end are left to the guard bytes. */
template <typename T> struct td_one_ref {
    T *p;
    int *own; /* NULL: past the array (the guard bytes see it) */
    int *bad;
    int e, tid;
    __device__ operator T() const { return *p; }
    __device__ const td_one_ref &operator=(T v) const
    {
        *p = v;
        if (own != NULL) {
            const int o = atomicCAS(own, 0, tid + 1);
            if (o != 0 && o != tid + 1) {
                bad[0] = e + 1;
                bad[1] = o - 1;
                bad[2] = tid;
            }
        }
        return *this;
    }
    __device__ const td_one_ref &operator=(const td_one_ref &r) const
    {
        return *this = (T)r;
    }
};
template <typename T> struct td_one_writer {
    T *p;
    int *own, *bad;
    long long n;
    int tid;
    __device__ td_one_ref<T> operator[](long long i) const
    {
        return td_one_ref<T>{p + i, i >= 0 && i < n ? own + i : NULL, bad,
                             (int)i, tid};
    }
};

/* The conflict words after a launch: an element two threads wrote. */
static inline void td_writer_check(const char *buf, const int *bad)
{
    if (bad[0] != 0 && td_mismatches++ == 0)
        snprintf(td_first, sizeof td_first,
                 "round=%d buffer=%s element=%d: written by threads %d and "
                 "%d in one launch (each dst element has one writer)",
                 td_round, buf, bad[0] - 1, bad[1], bad[2]);
}
