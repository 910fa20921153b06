/*
 * Concurrent dispatch: the registry is loaded once; then 8 threads load,
 * dispatch, print (both languages), write the kernel program and explain
 * (text and JSON) every call of the corpus (examples, golden cases,
 * conformance) several times, each thread starting at a different call, and
 * every result must equal the single-threaded one byte for byte.  Run it
 * under ThreadSanitizer with scripts/test-tsan.  With TD_TEST_QUICK set (the
 * plain `meson test`) every call still gets its single-threaded result, but
 * the threads make one round over a quarter of the corpus each (every call
 * run about twice, by threads walking in opposite directions) instead of
 * three rounds over all of it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "corpus.h"

#define NTHREADS 8
#define ROUNDS 3

typedef struct shared {
    const td_registry *reg;
    char **paths;
    size_t np;
    int rounds;          /* rounds per thread */
    size_t steps;        /* calls per round per thread */
    char **want;         /* single-threaded results */
} shared;

typedef struct worker {
    const shared *sh;
    int id;
    long runs;
    long mismatches;
    char first[512];     /* the first mismatch, for the report */
} worker;

/* Loads and runs one call; the result text, or NULL with *err set. */
static char *one(const td_registry *reg, const char *path, int *err,
                 const char **step)
{
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    *step = "load call";
    *err = td_call_load_file(path, &call, &d);
    tstr t = {0};
    if (*err == TD_ESCHEMA) {
        /* A conformance case whose expectation is the loader's refusal
         * (a buffer past tensor memory): the positioned message is the
         * result. */
        *err = 0;
        tstr_printf(&t, "load: refused: %s\n", d.msg);
        return t.s;
    }
    if (*err != 0)
        return NULL;
    *err = run_everything(reg, call, &t, td_free, step);
    td_call_free(call);
    if (*err != 0) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

static void *work(void *arg)
{
    worker *w = arg;
    const shared *sh = w->sh;
    for (int round = 0; round < sh->rounds; round++) {
        for (size_t k = 0; k < sh->steps; k++) {
            /* Threads start at different calls and walk in different
             * directions, so different calls run at the same time too. */
            size_t off = (size_t)w->id * sh->np / NTHREADS;
            size_t i = (w->id % 2 ? sh->np - 1 - k : k) + off;
            i %= sh->np;
            int err;
            const char *step;
            char *got = one(sh->reg, sh->paths[i], &err, &step);
            w->runs++;
            if (got == NULL || strcmp(got, sh->want[i]) != 0) {
                if (w->mismatches++ == 0)
                    snprintf(w->first, sizeof w->first,
                             "thread %d: %s: %s", w->id, sh->paths[i],
                             got ? "result differs" : td_err_name(err));
            }
            free(got);
        }
    }
    return NULL;
}

static void test_concurrent_dispatch(void **state)
{
    (void)state;
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    assert_int_equal(td_registry_new(&reg), 0);
    assert_int_equal(td_registry_load_default_rules(reg, &d), 0);

    const char *quick = getenv("TD_TEST_QUICK");
    shared sh = {reg, NULL, 0, ROUNDS, 0, NULL};
    corpus_add_dir(SRC_ROOT "/examples/calls", &sh.paths, &sh.np);
    corpus_add_dir(SRC_ROOT "/tests/golden/cases", &sh.paths, &sh.np);
    corpus_add_dir(SRC_ROOT "/tests/conformance", &sh.paths, &sh.np);
    assert_true(sh.np >= 100);
    sh.steps = sh.np;
    if (quick != NULL && *quick != '\0' && strcmp(quick, "0") != 0) {
        sh.rounds = 1;
        sh.steps = (sh.np + 3) / 4;
    }
    sh.want = calloc(sh.np, sizeof *sh.want);
    assert_non_null(sh.want);
    for (size_t i = 0; i < sh.np; i++) {
        int err;
        const char *step;
        sh.want[i] = one(reg, sh.paths[i], &err, &step);
        if (sh.want[i] == NULL)
            fail_msg("%s: %s: %s", sh.paths[i], step, td_err_name(err));
    }

    pthread_t th[NTHREADS];
    worker w[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].sh = &sh;
        w[t].id = t;
        assert_int_equal(pthread_create(&th[t], NULL, work, &w[t]), 0);
    }
    long runs = 0, bad = 0;
    for (int t = 0; t < NTHREADS; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        runs += w[t].runs;
        bad += w[t].mismatches;
        if (w[t].mismatches)
            print_error("%s\n", w[t].first);
    }
    print_message("%d threads, %zu calls, %ld runs, %ld mismatches\n",
                  NTHREADS, sh.np, runs, bad);
    assert_int_equal(runs, (long)NTHREADS * sh.rounds * (long)sh.steps);
    assert_int_equal(bad, 0);

    for (size_t i = 0; i < sh.np; i++)
        free(sh.want[i]);
    free(sh.want);
    corpus_free(sh.paths, sh.np);
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
