/*
 * Shared by the robustness tests: the corpus of call files (the examples,
 * the golden cases, the conformance corpus) and one "everything" operation
 * on a call: dispatch, print the IR in both languages, explain (text and
 * JSON) and write the kernel program, collecting every result into one
 * text so that runs can be compared byte for byte.
 */
#ifndef TD_ROBUST_CORPUS_H
#define TD_ROBUST_CORPUS_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiledispatch.h"
#include "tiledispatch/td_kernel.h"

#ifndef SRC_ROOT
#error "SRC_ROOT must be defined by the build"
#endif

/* ---- a growable string owned by the test (plain malloc) ---------------- */

typedef struct tstr {
    char *s;
    size_t len, cap;
} tstr;

static inline void tstr_add(tstr *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->s, cap);
        if (p == NULL)
            abort();
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

static inline void tstr_printf(tstr *t, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tstr_add(t, buf);
}

/* ---- the corpus -------------------------------------------------------- */

static inline int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends every *.yaml of dir (sorted) to *paths. */
static inline void corpus_add_dir(const char *dir, char ***paths, size_t *n)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    size_t start = *n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        char **np = realloc(*paths, (*n + 1) * sizeof **paths);
        if (np == NULL)
            abort();
        *paths = np;
        size_t plen = strlen(dir) + len + 2;
        (*paths)[*n] = malloc(plen);
        if ((*paths)[*n] == NULL)
            abort();
        snprintf((*paths)[*n], plen, "%s/%s", dir, e->d_name);
        (*n)++;
    }
    closedir(d);
    qsort(*paths + start, *n - start, sizeof **paths, cmp_path);
}

static inline void corpus_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

/* ---- everything the library does with one call ------------------------- */

typedef void (*text_free_fn)(void *);

/*
 * The operations run_everything runs on a call, as steps that each run on
 * the results of the steps before them, kept in a run_state: the
 * allocation-failure test fails each step's allocations in turn on one
 * prepared state instead of replaying every step before it.
 */
enum {
    RUN_DISPATCH,
    RUN_PRINT_TIRX,
    RUN_PRINT_CUDA,
    RUN_KERNEL,
    RUN_EXPLAIN,
    RUN_STEPS
};

typedef struct run_state {
    const td_registry *reg;
    const td_call *call;
    int dispatched;          /* the result of RUN_DISPATCH is kept */
    int dispatch_rc;         /* 0, TD_ENOMATCH or TD_ESCHEMA */
    td_dispatch_result res;  /* res.ir when dispatch_rc is 0 */
} run_state;

static inline void run_state_free(run_state *st)
{
    if (st->dispatched && st->dispatch_rc == 0)
        td_ir_free(st->res.ir);
    st->dispatched = 0;
}

/*
 * Runs step k of `st`, appending its result to out.  RUN_DISPATCH keeps
 * its result in st when `keep` is set (run_state_free releases it) and
 * releases it otherwise; every other step needs a kept dispatch and keeps
 * nothing.  A step that does not apply to the dispatch's outcome (printing
 * an unmatched call) appends nothing.  Returns 0, or the error code with
 * the failing operation in *step.  An unmatched call is a result (its
 * explanation), not an error, and so is a call the op's operand check
 * refuses (TD_ESCHEMA from dispatch: its message, and no further step).
 */
static inline int run_step(run_state *st, int k, tstr *out,
                           text_free_fn text_free, const char **step,
                           int keep)
{
    td_diag d;
    td_diag_clear(&d);
    if (k == RUN_DISPATCH) {
        td_dispatch_result res;
        memset(&res, 0, sizeof res);
        *step = "dispatch";
        int rc = td_dispatch(st->reg, st->call, &res, &d);
        if (rc == TD_ESCHEMA) {
            /* Refused by the op's operand check (a conformance case that
             * expects it): the positioned message is the result; explain
             * refuses the call the same way. */
            tstr_printf(out, "dispatch: refused: %s\n", d.msg);
        } else if (rc == TD_ENOMATCH) {
            tstr_printf(out, "dispatch: no match: %s\n", d.msg);
        } else if (rc != 0) {
            return rc;
        } else {
            tstr_printf(out, "dispatch: %s impl=%s prio=%d\n", res.variant,
                        res.impl, res.priority);
        }
        if (keep) {
            st->dispatched = 1;
            st->dispatch_rc = rc;
            st->res = res;
        } else if (rc == 0) {
            td_ir_free(res.ir);
        }
        return 0;
    }
    if (!st->dispatched)
        abort(); /* a test's misuse: the steps run in order */
    if (st->dispatch_rc == TD_ESCHEMA)
        return 0;
    if (k == RUN_PRINT_TIRX || k == RUN_PRINT_CUDA) {
        if (st->dispatch_rc != 0)
            return 0;
        char *body = NULL, *prelude = NULL;
        td_lang lang = k == RUN_PRINT_CUDA ? TD_LANG_CUDA : TD_LANG_TIRX;
        *step = k == RUN_PRINT_CUDA ? "print cuda" : "print tirx";
        int rc = td_ir_print(st->res.ir, lang, 1, &body, &prelude);
        if (rc != 0)
            return rc;
        tstr_add(out, prelude);
        tstr_add(out, body);
        text_free(body);
        text_free(prelude);
        return 0;
    }
    if (k == RUN_KERNEL) {
        if (st->dispatch_rc != 0)
            return 0;
        char *program = NULL;
        *step = "kernel program";
        int rc = td_kernel_program(st->reg, st->call, &program, &d);
        /* A call the program generator has no reference for (a float8
         * elementwise op, an op of a family it has no programs for yet, a
         * TMA copy or a cluster launch, tensor memory, a gemm of float32
         * inputs without allow_tf32) is refused the same way every
         * time: its message is part of the output. */
        if (rc == TD_EINVAL && program == NULL &&
            (strstr(d.msg, "no reference for the elementwise op") != NULL ||
             strstr(d.msg, "is neither") != NULL ||
             strstr(d.msg, "has no self-checking program yet") != NULL ||
             strstr(d.msg, "no self-checking program for a cluster") !=
                 NULL ||
             strstr(d.msg, "no self-checking program for tensor memory") !=
                 NULL)) {
            tstr_add(out, d.msg);
            return 0;
        }
        if (rc != 0)
            return rc;
        tstr_add(out, program);
        text_free(program);
        return 0;
    }
    td_explain *ex = NULL;
    *step = "explain";
    int rc = td_explain_call(st->reg, st->call, &ex, &d);
    if (rc != 0)
        return rc;
    static const td_explain_style styles[] = {TD_EXPLAIN_TEXT,
                                              TD_EXPLAIN_JSON, TD_EXPLAIN_TVM};
    static const char *const names[] = {"explain text", "explain json",
                                        "explain tvm"};
    for (int i = 0; i < 3; i++) {
        char *text = NULL;
        *step = names[i];
        rc = td_explain_format(ex, styles[i], &text);
        if (rc != 0) {
            td_explain_free(ex);
            return rc;
        }
        tstr_add(out, text);
        text_free(text);
    }
    td_explain_free(ex);
    return 0;
}

/* Runs every step on `call`, collecting every result into out; 0 or the
 * first error code with the failing operation in *step. */
static inline int run_everything(const td_registry *reg, const td_call *call,
                                 tstr *out, text_free_fn text_free,
                                 const char **step)
{
    run_state st;
    memset(&st, 0, sizeof st);
    st.reg = reg;
    st.call = call;
    int rc = 0;
    for (int k = 0; k < RUN_STEPS && rc == 0; k++)
        rc = run_step(&st, k, out, text_free, step, 1);
    run_state_free(&st);
    return rc;
}

#endif
