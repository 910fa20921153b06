/*
 * The extension's shared declarations: the object layouts of its types,
 * the type and exception objects (module-wide statics, made once by
 * PyInit__core in module.c), and the few helpers more than one file
 * calls.  Names shared between the files start with tdpy_; the library's
 * are td_*.
 *
 * The files, one responsibility each: module.c (the module, its
 * functions, the export of the library to plugins), errors.c (library
 * errors to Python exceptions), call.c (Call), registry.c (Registry and
 * Rule), dispatch.c (Dispatch), explain.c (ExplainRow, PredicateOutcome
 * and DispatchError), bench.c (the benchmark hook).
 */
#ifndef TDPY_EXT_H
#define TDPY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tiledispatch.h"

/* ---- the objects ---------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    td_registry *reg;
    Py_ssize_t nrules;
} RegistryObject;

typedef struct {
    PyObject_HEAD
    td_call *call;     /* owned: PyMem_Malloc'd copy */
    PyObject *source;  /* str the call was parsed from, or NULL */
} CallObject;

typedef struct {
    PyObject_HEAD
    td_ir *ir;         /* owned */
    const char *variant; /* owned by the registry */
    const char *impl;
    int priority;
    PyObject *registry; /* keeps variant/impl alive */
    PyObject *call;
} DispatchObject;

/* ---- module-wide state ----------------------------------------------
 * The module is single-phase and keeps its types in statics: one copy per
 * process, which is all the library's static build supports anyway. */
extern PyTypeObject *tdpy_Registry_Type;
extern PyTypeObject *tdpy_Call_Type;
extern PyTypeObject *tdpy_Dispatch_Type;
extern PyTypeObject *tdpy_ExplainRow_Type;
extern PyTypeObject *tdpy_PredOutcome_Type;
extern PyTypeObject *tdpy_Rule_Type;
extern PyObject *tdpy_Error_Type;
extern PyObject *tdpy_InputError_Type;
extern PyObject *tdpy_DispatchError_Type;
extern allocfunc tdpy_dispatch_alloc;

/* The specs the module makes its types from. */
extern PyType_Spec tdpy_Registry_spec;
extern PyType_Spec tdpy_Call_spec;
extern PyType_Spec tdpy_Dispatch_spec;
extern PyStructSequence_Desc tdpy_ExplainRow_desc;
extern PyStructSequence_Desc tdpy_PredOutcome_desc;
extern PyStructSequence_Desc tdpy_Rule_desc;

/* ---- helpers (module.c, errors.c) ----------------------------------- */

/* Strings the library returns through char ** are released here, and only
 * here, with the library's td_free(). */
void tdpy_release(void *p);
/* tp_dealloc of the heap types: frees the object, drops its type. */
void tdpy_generic_dealloc(PyObject *self);
/* None for NULL or "" (or v <= 0), else the str (int). */
PyObject *tdpy_str_or_none(const char *s);
PyObject *tdpy_int_or_none(int v);
/* Promotes the extension (which carries the library) to RTLD_GLOBAL
 * before the first plugin loads; 0, or -1 with an exception set. */
int tdpy_export_library_symbols(void);

/* ---- errors (errors.c) ---------------------------------------------- */

/* Raises the exception a failing library call deserves (not ENOMATCH):
 * MemoryError, InputError for an input error (with the source line from
 * call's text when the message is about it), else Error.  Returns NULL. */
PyObject *tdpy_raise_td(int err, td_diag *d, const CallObject *call);

/* ---- explain (explain.c) -------------------------------------------- */

/* Runs explain with the GIL released; raises and returns NULL on
 * failure. */
td_explain *tdpy_run_explain(const RegistryObject *reg,
                             const CallObject *call);
/* The explanation formatted in style, as a str. */
PyObject *tdpy_format_explain(const td_explain *ex, td_explain_style style);
/* The rows as a list of ExplainRow. */
PyObject *tdpy_make_rows(const td_explain *ex);
/* Raises DispatchError for a call nothing matched; returns NULL. */
PyObject *tdpy_raise_no_match(RegistryObject *reg, CallObject *call);

/* ---- the benchmark hook (bench.c) ----------------------------------- */

PyObject *tdpy_bench_c_dispatch(PyObject *m, PyObject *args);
extern const char tdpy_bench_c_dispatch_doc[];

#endif
