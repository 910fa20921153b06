/*
 * tiledispatch._core: library errors as Python exceptions.  An input error
 * (td_err_is_input: a bad call, rules file, plugin or name) becomes
 * InputError carrying the diagnostic's parts and the command line's text
 * of it; running out of memory MemoryError; anything else Error.
 */
/* Python.h (through ext.h) comes before any system header. */
#include "ext.h"

#include <stdio.h>
#include <string.h>

PyObject *tdpy_str_or_none(const char *s)
{
    if (s == NULL || s[0] == '\0')
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject *tdpy_int_or_none(int v)
{
    if (v <= 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(v);
}

/* The library quotes the source line where it has the text; messages
 * about a loaded call (unknown op, forced variant) are positioned in the
 * call's text, which the Call keeps (or, for a file, the library reads
 * back). */
static void fill_source_line(td_diag *d, const CallObject *call)
{
    const char *text = NULL;
    Py_ssize_t len = 0;
    if (call != NULL && call->source != NULL &&
        strcmp(d->file, call->call->file) == 0) {
        text = PyUnicode_AsUTF8AndSize(call->source, &len);
        if (text == NULL) {
            PyErr_Clear();
            return;
        }
    }
    td_diag_fill_source_line(d, text, (size_t)len);
}

static int set_attr_steal(PyObject *o, const char *name, PyObject *v)
{
    if (v == NULL)
        return -1;
    int rc = PyObject_SetAttrString(o, name, v);
    Py_DECREF(v);
    return rc;
}

/* Raises InputError from a filled diagnostic. */
static PyObject *raise_input_error(td_diag *d, int err, const CallObject *call)
{
    fill_source_line(d, call);
    if (d->code == 0)
        d->code = err;
    if (d->msg[0] == '\0')
        snprintf(d->msg, sizeof d->msg, "%s", td_strerror(err));
    char buf[2048];
    td_diag_format(d, buf, sizeof buf);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    PyObject *text = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)n, "replace");
    if (text == NULL)
        return NULL;
    PyObject *exc = PyObject_CallFunctionObjArgs(tdpy_InputError_Type, text, NULL);
    Py_DECREF(text);
    if (exc == NULL)
        return NULL;
    if (set_attr_steal(exc, "path", tdpy_str_or_none(d->file)) < 0 ||
        set_attr_steal(exc, "line", tdpy_int_or_none(d->line)) < 0 ||
        set_attr_steal(exc, "column", tdpy_int_or_none(d->col)) < 0 ||
        set_attr_steal(exc, "message", tdpy_str_or_none(d->msg)) < 0 ||
        set_attr_steal(exc, "source_line", tdpy_str_or_none(d->source_line)) < 0 ||
        set_attr_steal(exc, "code", PyUnicode_FromString(td_err_name(err))) < 0) {
        Py_DECREF(exc);
        return NULL;
    }
    PyErr_SetObject(tdpy_InputError_Type, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *tdpy_raise_td(int err, td_diag *d, const CallObject *call)
{
    if (err == TD_ENOMEM)
        return PyErr_NoMemory();
    if (td_err_is_input(err)) {
        td_diag none;
        td_diag_clear(&none);
        return raise_input_error(d != NULL ? d : &none, err, call);
    }
    if (d != NULL && d->msg[0] != '\0')
        PyErr_Format(tdpy_Error_Type, "%s: %s", td_err_name(err), d->msg);
    else
        PyErr_Format(tdpy_Error_Type, "%s: %s", td_err_name(err), td_strerror(err));
    return NULL;
}
