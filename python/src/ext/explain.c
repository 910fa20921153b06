/*
 * tiledispatch._core: explanations.  Registry.explain's rows
 * (ExplainRow, PredicateOutcome: struct sequences over the library's
 * td_explain_row and td_pred_outcome, whose parts the library records),
 * explain_text's formatted tables, and DispatchError, which carries both
 * for a call nothing matched.
 */
/* Python.h (through ext.h) comes before any system header. */
#include "ext.h"

#include <string.h>

static PyObject *utf8(const char *s)
{
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* The reasons column of row r, as the library recorded it. */
static PyObject *row_reasons(const td_explain_row *r)
{
    PyObject *t = PyTuple_New((Py_ssize_t)r->nreasons);
    for (size_t k = 0; t != NULL && k < r->nreasons; k++) {
        PyObject *one = utf8(r->reasons[k]);
        if (one == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SetItem(t, (Py_ssize_t)k, one);
    }
    return t;
}

static PyObject *make_row(const td_explain *ex, size_t i)
{
    const td_explain_row *r = td_explain_get(ex, i);
    PyObject *row = PyStructSequence_New(tdpy_ExplainRow_Type);
    if (row == NULL)
        return NULL;
    PyObject *preds = PyTuple_New((Py_ssize_t)r->npreds);
    if (preds == NULL)
        goto fail;
    PyStructSequence_SetItem(row, 4, preds);
    for (size_t k = 0; k < r->npreds; k++) {
        PyObject *p = PyStructSequence_New(tdpy_PredOutcome_Type);
        if (p == NULL)
            goto fail;
        PyTuple_SetItem(preds, (Py_ssize_t)k, p);
        PyObject *name = PyUnicode_FromString(r->preds[k].name);
        if (name == NULL)
            goto fail;
        PyStructSequence_SetItem(p, 0, name);
        PyObject *ok = PyBool_FromLong(r->preds[k].ok);
        PyStructSequence_SetItem(p, 1, ok);
        PyObject *why = utf8(r->preds[k].reason);
        if (why == NULL)
            goto fail;
        PyStructSequence_SetItem(p, 2, why);
        PyObject *args = utf8(r->preds[k].args);
        if (args == NULL)
            goto fail;
        PyStructSequence_SetItem(p, 3, args);
        PyObject *shown = PyUnicode_FromString(r->preds[k].shown);
        if (shown == NULL)
            goto fail;
        PyStructSequence_SetItem(p, 4, shown);
    }
    PyObject *v;
    if ((v = PyUnicode_FromString(r->variant)) == NULL)
        goto fail;
    PyStructSequence_SetItem(row, 0, v);
    if ((v = PyLong_FromLong(r->priority)) == NULL)
        goto fail;
    PyStructSequence_SetItem(row, 1, v);
    if ((v = PyUnicode_FromString(td_cand_status_name(r->status))) == NULL)
        goto fail;
    PyStructSequence_SetItem(row, 2, v);
    if ((v = row_reasons(r)) == NULL)
        goto fail;
    PyStructSequence_SetItem(row, 3, v);
    if ((v = PyUnicode_FromString(r->message)) == NULL)
        goto fail;
    PyStructSequence_SetItem(row, 5, v);
    return row;
fail:
    Py_DECREF(row);
    return NULL;
}

PyObject *tdpy_make_rows(const td_explain *ex)
{
    size_t n = td_explain_nrows(ex);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (list == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *row = make_row(ex, i);
        if (row == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SetItem(list, (Py_ssize_t)i, row);
    }
    return list;
}

/* Runs explain with the GIL released; raises on failure. */
td_explain *tdpy_run_explain(const RegistryObject *reg, const CallObject *call)
{
    td_explain *ex = NULL;
    td_diag d;
    int err;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_explain_call(reg->reg, call->call, &ex, &d);
    Py_END_ALLOW_THREADS
    if (err != 0) {
        tdpy_raise_td(err, &d, call);
        return NULL;
    }
    return ex;
}

PyObject *tdpy_format_explain(const td_explain *ex, td_explain_style style)
{
    char *text = NULL;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = td_explain_format(ex, style, &text);
    Py_END_ALLOW_THREADS
    if (err != 0)
        return tdpy_raise_td(err, NULL, NULL);
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
                                       "replace");
    tdpy_release(text);
    return s;
}

/* Raises DispatchError for a call nothing matched: the explanation's rows
 * and the command line's text. */
PyObject *tdpy_raise_no_match(RegistryObject *reg, CallObject *call)
{
    td_explain *ex = tdpy_run_explain(reg, call);
    if (ex == NULL)
        return NULL;
    PyObject *text = tdpy_format_explain(ex, TD_EXPLAIN_TEXT);
    PyObject *rows = text ? tdpy_make_rows(ex) : NULL;
    PyObject *reason = rows ? tdpy_str_or_none(td_explain_empty_reason(ex)) : NULL;
    td_explain_free(ex);
    if (reason == NULL) {
        Py_XDECREF(text);
        Py_XDECREF(rows);
        return NULL;
    }
    /* str(exc) is the text without its final line break. */
    Py_ssize_t n = PyUnicode_GetLength(text);
    while (n > 0 && PyUnicode_ReadChar(text, n - 1) == '\n')
        n--;
    PyObject *msg = PyUnicode_Substring(text, 0, n);
    PyObject *exc =
        msg ? PyObject_CallFunctionObjArgs(tdpy_DispatchError_Type, msg, NULL) : NULL;
    Py_XDECREF(msg);
    if (exc != NULL &&
        (PyObject_SetAttrString(exc, "rows", rows) < 0 ||
         PyObject_SetAttrString(exc, "text", text) < 0 ||
         PyObject_SetAttrString(exc, "reason", reason) < 0 ||
         PyObject_SetAttrString(exc, "call", (PyObject *)call) < 0))
        Py_CLEAR(exc);
    Py_DECREF(rows);
    Py_DECREF(text);
    Py_DECREF(reason);
    if (exc == NULL)
        return NULL;
    PyErr_SetObject(tdpy_DispatchError_Type, exc);
    Py_DECREF(exc);
    return NULL;
}

static PyStructSequence_Field ExplainRow_fields[] = {
    {"variant", "the variant name"},
    {"priority", "its priority"},
    {"status", "selected, rejected, declined, failed, not_tried or disabled"},
    {"reasons", "tuple of str: the lines of the table's reasons column"},
    {"predicates", "tuple of PredicateOutcome, in `when:` order"},
    {"message", "the library's one-line message for the row"},
    {NULL, NULL}};

PyStructSequence_Desc tdpy_ExplainRow_desc = {
    "tiledispatch.ExplainRow",
    "One candidate of an explanation: (variant, priority, status, reasons),\n"
    "plus .predicates and .message.",
    ExplainRow_fields, 4};

static PyStructSequence_Field PredOutcome_fields[] = {
    {"name", "the predicate name"},
    {"ok", "whether it passed"},
    {"reason", "why it failed ('' when it passed)"},
    {"args", "the arguments the rules bind, as `rules` lists them "
             "('{expected_scope: [local]}'; '' when none)"},
    {"shown", "the name explanations print: the predicate's shown_as, or "
              "its name"},
    {NULL, NULL}};

PyStructSequence_Desc tdpy_PredOutcome_desc = {
    "tiledispatch.PredicateOutcome", "One predicate of an ExplainRow.",
    PredOutcome_fields, 3};

