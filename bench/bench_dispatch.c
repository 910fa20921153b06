/*
 * Dispatch benchmark: how long the library takes, per call, to
 *   - load the default rules into a new registry,
 *   - dispatch a call (predicates in try order + the winner's emitter),
 *   - dispatch and print the CUDA,
 *   - explain a call (every predicate of every candidate + the table text).
 *
 *   bench_dispatch [--cpu] [ITERATIONS] CALL.yaml...
 *
 * Prints one line per call and measurement: nanoseconds per operation
 * (best of 5 rounds).  Timings are CPU timings of this machine; compare
 * numbers measured side by side in one run, not across machines.  --cpu
 * reads the thread's CPU-time clock instead of the wall clock: on a
 * machine busy with other work, a round then does not count the time the
 * thread waited for a core.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiledispatch.h"

static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef int (*op_fn)(const td_registry *reg, const td_call *call);

static int op_load_rules(const td_registry *unused, const td_call *call)
{
    (void)unused;
    (void)call;
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_registry_new(&reg);
    if (err == 0)
        err = td_registry_load_default_rules(reg, &d);
    td_registry_free(reg);
    return err;
}

static int op_dispatch(const td_registry *reg, const td_call *call)
{
    td_dispatch_result res;
    td_diag d;
    td_diag_clear(&d);
    int err = td_dispatch(reg, call, &res, &d);
    if (err == 0)
        td_ir_free(res.ir);
    return err == TD_ENOMATCH ? 0 : err;
}

static int op_dispatch_print(const td_registry *reg, const td_call *call)
{
    td_dispatch_result res;
    td_diag d;
    td_diag_clear(&d);
    int err = td_dispatch(reg, call, &res, &d);
    if (err != 0)
        return err == TD_ENOMATCH ? 0 : err;
    char *body = NULL, *prelude = NULL;
    err = td_ir_print(res.ir, TD_LANG_CUDA, 0, &body, &prelude);
    td_free(body);
    td_free(prelude);
    td_ir_free(res.ir);
    return err;
}

static int op_explain(const td_registry *reg, const td_call *call)
{
    td_explain *ex = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_explain_call(reg, call, &ex, &d);
    if (err != 0)
        return err;
    char *text = NULL;
    err = td_explain_format(ex, TD_EXPLAIN_TEXT, &text);
    td_free(text);
    td_explain_free(ex);
    return err;
}

static double measure(op_fn fn, const td_registry *reg, const td_call *call,
                      long iters)
{
    double best = 0;
    for (int round = 0; round < 5; round++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            if (fn(reg, call) != 0) {
                fprintf(stderr, "bench: operation failed\n");
                exit(3);
            }
        double per = (now_ns() - t0) / (double)iters;
        if (round == 0 || per < best)
            best = per;
    }
    return best;
}

int main(int argc, char **argv)
{
    int first = 1;
    long iters = 20000;
    if (argc > first && strcmp(argv[first], "--cpu") == 0) {
        bench_clock = CLOCK_THREAD_CPUTIME_ID;
        first++;
    }
    if (argc > first &&
        strspn(argv[first], "0123456789") == strlen(argv[first])) {
        iters = atol(argv[first]);
        first++;
    }
    if (first >= argc || iters <= 0) {
        fprintf(stderr, "usage: %s [--cpu] [ITERATIONS] CALL.yaml...\n",
                argv[0]);
        return 2;
    }
    td_registry *reg = NULL;
    td_diag d;
    td_diag_clear(&d);
    if (td_registry_new(&reg) != 0 ||
        td_registry_load_default_rules(reg, &d) != 0) {
        fprintf(stderr, "bench: cannot load the default rules\n");
        return 3;
    }
    printf("%-36s %-18s %12s\n", "call", "operation", "ns/op");
    printf("%-36s %-18s %12.0f\n", "-", "load default rules",
           measure(op_load_rules, NULL, NULL, iters / 20 + 1));
    for (int i = first; i < argc; i++) {
        td_call *call = NULL;
        if (td_call_load_file(argv[i], &call, &d) != 0) {
            char buf[1024];
            td_diag_format(&d, buf, sizeof buf);
            fputs(buf, stderr);
            td_registry_free(reg);
            return 2;
        }
        const char *base = strrchr(argv[i], '/');
        base = base ? base + 1 : argv[i];
        printf("%-36s %-18s %12.0f\n", base, "dispatch",
               measure(op_dispatch, reg, call, iters));
        printf("%-36s %-18s %12.0f\n", base, "dispatch+cuda",
               measure(op_dispatch_print, reg, call, iters));
        printf("%-36s %-18s %12.0f\n", base, "explain+table",
               measure(op_explain, reg, call, iters / 4 + 1));
        td_call_free(call);
    }
    td_registry_free(reg);
    return 0;
}
