/*
 * tiledispatch._core: the CPython extension over the C library, and this
 * file its module: the type and exception objects, the module functions,
 * and the export of the library's symbols to plugins.
 *
 * Written against the limited API (abi3, CPython >= 3.10) and linked with
 * the static library.  Four types and three exceptions:
 *
 *   Registry   the built-in variant modules, plugins and loaded rules;
 *              immutable once constructed, so any number of threads may
 *              dispatch through one registry at once (registry.c).
 *   Call       one tile-primitive call (td_call, plain data); immutable
 *              (call.c).
 *   Dispatch   the result of a successful dispatch: the winner and its IR,
 *              printed on demand (dispatch.c).
 *   ExplainRow / PredicateOutcome / Rule   struct sequences (explain.c,
 *              registry.c).
 *
 *   Error > InputError (bad call or rules input, with a position),
 *   Error > DispatchError (no variant matched, with the table); errors.c
 *   maps the library's codes onto them.
 *
 * The GIL is released around every call into the library that can take
 * time (loading, dispatch, explain, printing); the objects the library
 * reads are kept alive by references the calling thread holds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "ext.h"

#include <dlfcn.h>

PyTypeObject *tdpy_Registry_Type;
PyTypeObject *tdpy_Call_Type;
PyTypeObject *tdpy_Dispatch_Type;
PyTypeObject *tdpy_ExplainRow_Type;
PyTypeObject *tdpy_PredOutcome_Type;
PyTypeObject *tdpy_Rule_Type;
PyObject *tdpy_Error_Type;
PyObject *tdpy_InputError_Type;
PyObject *tdpy_DispatchError_Type;
allocfunc tdpy_dispatch_alloc;

void tdpy_release(void *p)
{
    td_free(p);
}

void tdpy_generic_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* A plugin resolves the td_* functions it calls in the process's global
 * symbols; CPython loads extension modules RTLD_LOCAL, so the first plugin
 * load promotes this module (which carries the library) to RTLD_GLOBAL. */
int tdpy_export_library_symbols(void)
{
    static int done;
    if (done)
        return 0;
    Dl_info info;
    if (dladdr((void *)&td_registry_new, &info) == 0 || info.dli_fname == NULL) {
        PyErr_SetString(tdpy_Error_Type, "cannot locate the tiledispatch extension "
                                    "module to export its symbols to plugins");
        return -1;
    }
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    if (h == NULL) {
        PyErr_Format(tdpy_Error_Type, "cannot export the library to plugins: %s",
                     dlerror());
        return -1;
    }
    /* The handle stays open: the module is never unloaded anyway. */
    done = 1;
    return 0;
}

PyDoc_STRVAR(default_rules_doc,
"default_rules()\n--\n\n"
"The built-in rules text (rules/rules.yaml, compiled into the library).");

static PyObject *mod_default_rules(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    size_t len = 0;
    const char *text = td_default_rules(&len);
    return PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "strict");
}

static PyMethodDef module_methods[] = {
    {"default_rules", mod_default_rules, METH_NOARGS, default_rules_doc},
    {"_bench_c_dispatch", tdpy_bench_c_dispatch, METH_VARARGS,
     tdpy_bench_c_dispatch_doc},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(module_doc,
"tiledispatch._core: the C extension over the tiledispatch library.\n"
"Import `tiledispatch`, not this module.");

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "tiledispatch._core", module_doc, -1,
    module_methods, NULL, NULL, NULL, NULL};

static int add_type(PyObject *m, const char *name, PyObject *type)
{
    if (type == NULL)
        return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    tdpy_Error_Type = PyErr_NewExceptionWithDoc(
        "tiledispatch.Error", "Base class of tiledispatch's errors.", NULL,
        NULL);
    if (tdpy_Error_Type == NULL)
        goto fail;
    PyObject *bases = PyTuple_Pack(2, tdpy_Error_Type, PyExc_ValueError);
    if (bases == NULL)
        goto fail;
    tdpy_InputError_Type = PyErr_NewExceptionWithDoc(
        "tiledispatch.InputError",
        "A call or rules file (or text, or plugin) the library refused.\n\n"
        "str() is the command line's message: FILE:LINE:COL: error: MESSAGE,\n"
        "the source line and a caret.  Attributes: path, line, column (None\n"
        "when unknown), message, source_line, code ('TD_EPARSE', ...).",
        bases, NULL);
    Py_DECREF(bases);
    tdpy_DispatchError_Type = PyErr_NewExceptionWithDoc(
        "tiledispatch.DispatchError",
        "No variant matched the call.\n\n"
        "str() is the table `tiledispatch dispatch` prints; .rows is the same\n"
        "table as a list of ExplainRow, .text the full text, .reason why no\n"
        "candidate could be tried (None when candidates were tried), .call\n"
        "the Call.",
        tdpy_Error_Type, NULL);
    if (tdpy_InputError_Type == NULL || tdpy_DispatchError_Type == NULL)
        goto fail;
    tdpy_Registry_Type = (PyTypeObject *)PyType_FromSpec(&tdpy_Registry_spec);
    tdpy_Call_Type = (PyTypeObject *)PyType_FromSpec(&tdpy_Call_spec);
    tdpy_Dispatch_Type = (PyTypeObject *)PyType_FromSpec(&tdpy_Dispatch_spec);
    tdpy_ExplainRow_Type = PyStructSequence_NewType(&tdpy_ExplainRow_desc);
    tdpy_PredOutcome_Type = PyStructSequence_NewType(&tdpy_PredOutcome_desc);
    tdpy_Rule_Type = PyStructSequence_NewType(&tdpy_Rule_desc);
    if (tdpy_Registry_Type == NULL || tdpy_Call_Type == NULL || tdpy_Dispatch_Type == NULL ||
        tdpy_ExplainRow_Type == NULL || tdpy_PredOutcome_Type == NULL || tdpy_Rule_Type == NULL)
        goto fail;
    tdpy_dispatch_alloc = (allocfunc)PyType_GetSlot(tdpy_Dispatch_Type, Py_tp_alloc);
    if (add_type(m, "Error", tdpy_Error_Type) < 0 ||
        add_type(m, "InputError", tdpy_InputError_Type) < 0 ||
        add_type(m, "DispatchError", tdpy_DispatchError_Type) < 0 ||
        add_type(m, "Registry", (PyObject *)tdpy_Registry_Type) < 0 ||
        add_type(m, "Call", (PyObject *)tdpy_Call_Type) < 0 ||
        add_type(m, "Dispatch", (PyObject *)tdpy_Dispatch_Type) < 0 ||
        add_type(m, "ExplainRow", (PyObject *)tdpy_ExplainRow_Type) < 0 ||
        add_type(m, "PredicateOutcome", (PyObject *)tdpy_PredOutcome_Type) < 0 ||
        add_type(m, "Rule", (PyObject *)tdpy_Rule_Type) < 0)
        goto fail;
    if (PyModule_AddStringConstant(m, "__version__", TD_VERSION_STRING) < 0 ||
        PyModule_AddStringConstant(m, "library_version", TD_VERSION_STRING) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
