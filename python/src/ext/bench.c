/*
 * tiledispatch._core: the benchmark hook bench/bench_python.py calls to
 * time dispatch in a C loop next to its Python figure.  Not part of the
 * package's API (the name starts with an underscore).
 */
/* Python.h (through ext.h) comes before any system header. */
#include "ext.h"

#include <time.h>

const char tdpy_bench_c_dispatch_doc[] =
    "_bench_c_dispatch(registry, call, n, /)\n--\n\n"
    "For bench/bench_python.py: runs n dispatches of call in a C loop (what\n"
    "bench/bench_dispatch times: clear the diagnostic, td_dispatch, free the\n"
    "IR) with the GIL released and returns (wall, cpu) nanoseconds per\n"
    "dispatch, cpu being this thread's CPU time.";

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

PyObject *tdpy_bench_c_dispatch(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *reg, *call;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "O!O!n:_bench_c_dispatch", tdpy_Registry_Type, &reg,
                          tdpy_Call_Type, &call, &n))
        return NULL;
    if (n <= 0) {
        PyErr_SetString(PyExc_ValueError, "n must be positive");
        return NULL;
    }
    const td_registry *r = ((RegistryObject *)reg)->reg;
    const td_call *c = ((CallObject *)call)->call;
    double w0, c0, w1, c1;
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    w0 = clock_ns(CLOCK_MONOTONIC);
    c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (Py_ssize_t i = 0; i < n && (err == 0 || err == TD_ENOMATCH); i++) {
        td_dispatch_result res;
        td_diag d;
        td_diag_clear(&d);
        err = td_dispatch(r, c, &res, &d);
        if (err == 0)
            td_ir_free(res.ir);
    }
    c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    w1 = clock_ns(CLOCK_MONOTONIC);
    Py_END_ALLOW_THREADS
    if (err != 0 && err != TD_ENOMATCH)
        return tdpy_raise_td(err, NULL, NULL);
    return Py_BuildValue("(dd)", (w1 - w0) / (double)n, (c1 - c0) / (double)n);
}

