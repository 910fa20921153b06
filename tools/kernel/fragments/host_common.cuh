//! Every program, after the reference: td_check, the generators and the
//! options.
static double td_max_err = 0.0;
static double td_max_ratio = 0.0; /* largest err / tol where tol > 0 */
static long long td_mismatches = 0;
static char td_first[512];
/* The round being checked (each round stages new data, launches and
 * checks; a FAIL line names its round). */
static int td_round = 0;
/* --rounds N: at most N of the TD_ROUNDS rounds (a quicker, weaker run;
 * the CPU stand-in uses it). */
static long long td_rounds_max = TD_ROUNDS;

/* Compares one staged-back value; remembers the first mismatch. */
static inline void td_check(const char *buf, long long inst, long long elem,
                     long long thread, long long slot, double got,
                     double want, double tol)
{
    /* Equal infinities and two NaNs match too. */
    const double err = got == want || (got != got && want != want)
                           ? 0.0 : fabs(got - want);
    if (err <= tol) {
        if (err > td_max_err)
            td_max_err = err;
        if (tol > 0.0 && err / tol > td_max_ratio)
            td_max_ratio = err / tol;
        return;
    }
    if (td_mismatches++ == 0) {
        if (thread >= 0)
            snprintf(td_first, sizeof td_first,
                     "round=%d instance=%lld buffer=%s element=%lld "
                     "thread=%lld slot=%lld got=%.9g want=%.9g tol=%.3g",
                     td_round, inst, buf, elem, thread, slot, got, want, tol);
        else
            snprintf(td_first, sizeof td_first,
                     "round=%d instance=%lld buffer=%s element=%lld "
                     "got=%.9g want=%.9g tol=%.3g",
                     td_round, inst, buf, elem, got, want, tol);
    }
}

/* A buffer's guard flag after a launch: set when the body wrote past the
 * end of the buffer (a thread's register slots or an instance's copy in
 * shared memory), which the values inside it cannot show. */
static inline void td_guard_check(const char *buf, int flag)
{
    if (flag == 2 && td_mismatches++ == 0)
        snprintf(td_first, sizeof td_first,
                 "round=%d buffer=%s: it changed after its barrier wait (a "
                 "copy landed after the barrier had completed)",
                 td_round, buf);
    else if (flag != 0 && td_mismatches++ == 0)
        snprintf(td_first, sizeof td_first,
                 "round=%d buffer=%s: the body wrote past the end of the "
                 "buffer (its guard bytes changed)",
                 td_round, buf);
}

/* A deterministic 64-bit LCG (Knuth's MMIX constants); --seed N
 * replaces the initial state. */
static unsigned long long td_rng_state = 0x9E3779B97F4A7C15ULL;
static inline unsigned long long td_rng(void)
{
    td_rng_state = td_rng_state * 6364136223846793005ULL +
                   1442695040888963407ULL;
    return td_rng_state >> 33;
}
/* With TD_SPECIALS, about 1 source value in 64 each is NaN, +inf, -inf. */
__attribute__((unused)) static inline double td_special(double v)
{
    const unsigned long long r = td_rng() % 64;
    return r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : v;
}
/* --data exact: a float that every dtype here holds exactly: k/64,
 * k in [-128, 128].  Each buffer uses one of the generators. */
__attribute__((unused)) static inline double td_rand_float(void)
{
    return (double)((long long)(td_rng() % 257) - 128) / 64.0;
}
/* --data random: a standard normal value (Box-Muller over two 53-bit
 * uniforms in (0, 1)); rounded to the buffer's dtype when staged. */
__attribute__((unused)) static inline double td_rand_u01(void)
{
    const unsigned long long hi = td_rng(), lo = td_rng();
    return ((double)((hi << 22) ^ lo) + 0.5) / 9007199254740992.0;
}
__attribute__((unused)) static inline double td_rand_normal(void)
{
    const double u1 = td_rand_u01(), u2 = td_rand_u01();
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
__attribute__((unused)) static inline double td_rand_int(long long lo,
                                                         long long hi)
{
    return (double)(lo + (long long)(td_rng() %
                                     (unsigned long long)(hi - lo + 1)));
}

/* The options: --data exact|random, --seed N, --rounds N (also
 * --data=..., --seed=..., --rounds=...). */
static inline const char *td_opt(int argc, char **argv, int *i,
                                 const char *name)
{
    const size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0' || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}
static inline bool td_options(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const char *v;
        char *end;
        if ((v = td_opt(argc, argv, &i, "--data")) != NULL) {
            if (strcmp(v, "exact") == 0)
                td_data_random = false;
            else if (strcmp(v, "random") == 0)
                td_data_random = true;
            else
                return false;
        } else if ((v = td_opt(argc, argv, &i, "--seed")) != NULL) {
            errno = 0;
            td_rng_state = strtoull(v, &end, 0);
            if (errno != 0 || end == v || *end != '\0' || v[0] == '-')
                return false;
        } else if ((v = td_opt(argc, argv, &i, "--rounds")) != NULL) {
            errno = 0;
            td_rounds_max = strtoll(v, &end, 10);
            if (errno != 0 || end == v || *end != '\0' || td_rounds_max < 1)
                return false;
        } else {
            return false;
        }
    }
    return true;
}
