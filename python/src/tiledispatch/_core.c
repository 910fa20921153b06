/*
 * tiledispatch._core: the CPython extension over the C library.
 *
 * Written against the limited API (abi3, CPython >= 3.10) and linked with
 * the static library.  Four types and three exceptions:
 *
 *   Registry   the built-in variant modules, plugins and loaded rules;
 *              immutable once constructed, so any number of threads may
 *              dispatch through one registry at once.
 *   Call       one tile-primitive call (td_call, plain data); immutable.
 *   Dispatch   the result of a successful dispatch: the winner and its IR,
 *              printed on demand (td_ir_print reads the IR only).
 *   ExplainRow / PredicateOutcome / Rule   struct sequences.
 *
 *   Error > InputError (bad call or rules input, with a position),
 *   Error > DispatchError (no variant matched, with the table).
 *
 * The GIL is released around every call into the library that can take
 * time (loading, dispatch, explain, printing); the objects the library
 * reads are kept alive by references the calling thread holds.
 */
#define PY_SSIZE_T_CLEAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <Python.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiledispatch.h"

/* Strings the library returns through char ** are released here, and only
 * here, with the library's td_free(). */
static void td_release(void *p)
{
    td_free(p);
}

/* ---- module-wide state --------------------------------------------------
 * The module is single-phase and keeps its types in statics: one copy per
 * process, which is all the library's static build supports anyway. */
static PyTypeObject *Registry_Type;
static PyTypeObject *Call_Type;
static PyTypeObject *Dispatch_Type;
static PyTypeObject *ExplainRow_Type;
static PyTypeObject *PredOutcome_Type;
static PyTypeObject *Rule_Type;
static PyObject *Error_Type;
static PyObject *InputError_Type;
static PyObject *DispatchError_Type;
static allocfunc dispatch_alloc;

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

static void generic_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* ---- errors ------------------------------------------------------------- */

static PyObject *str_or_none(const char *s)
{
    if (s == NULL || s[0] == '\0')
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static PyObject *int_or_none(int v)
{
    if (v <= 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(v);
}

/* Line `line` (1-based) of text, without its line break, into out. */
static void copy_line(const char *text, size_t len, int line, char *out,
                      size_t cap)
{
    size_t i = 0;
    for (int n = 1; n < line && i < len; i++)
        if (text[i] == '\n')
            n++;
    if (i >= len && line > 1)
        return;
    size_t j = i;
    while (j < len && text[j] != '\n' && text[j] != '\r')
        j++;
    size_t k = j - i < cap - 1 ? j - i : cap - 1;
    memcpy(out, text + i, k);
    out[k] = '\0';
}

/* The library fills the source line where it has the text; messages about
 * a loaded call (unknown op, forced variant) are positioned in the call's
 * text, which the Call keeps (or, for a file, is read back). */
static void fill_source_line(td_diag *d, const CallObject *call)
{
    if (d->source_line[0] != '\0' || d->line <= 0)
        return;
    if (call != NULL && call->source != NULL &&
        strcmp(d->file, call->call->file) == 0) {
        Py_ssize_t len = 0;
        const char *text = PyUnicode_AsUTF8AndSize(call->source, &len);
        if (text == NULL) {
            PyErr_Clear();
            return;
        }
        copy_line(text, (size_t)len, d->line, d->source_line,
                  sizeof d->source_line);
        return;
    }
    if (d->file[0] == '\0')
        return;
    FILE *f = fopen(d->file, "r");
    if (f == NULL)
        return;
    char line[sizeof d->source_line];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        size_t len = strlen(line);
        int whole = len > 0 && line[len - 1] == '\n';
        if (++n == d->line) {
            line[strcspn(line, "\r\n")] = '\0';
            memcpy(d->source_line, line, sizeof line);
            break;
        }
        while (!whole && fgets(line, sizeof line, f) != NULL) {
            len = strlen(line);
            whole = len > 0 && line[len - 1] == '\n';
        }
    }
    fclose(f);
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
    PyObject *exc = PyObject_CallFunctionObjArgs(InputError_Type, text, NULL);
    Py_DECREF(text);
    if (exc == NULL)
        return NULL;
    if (set_attr_steal(exc, "path", str_or_none(d->file)) < 0 ||
        set_attr_steal(exc, "line", int_or_none(d->line)) < 0 ||
        set_attr_steal(exc, "column", int_or_none(d->col)) < 0 ||
        set_attr_steal(exc, "message", str_or_none(d->msg)) < 0 ||
        set_attr_steal(exc, "source_line", str_or_none(d->source_line)) < 0 ||
        set_attr_steal(exc, "code", PyUnicode_FromString(td_err_name(err))) < 0) {
        Py_DECREF(exc);
        return NULL;
    }
    PyErr_SetObject(InputError_Type, exc);
    Py_DECREF(exc);
    return NULL;
}

static int is_input_code(int err)
{
    switch (err) {
    case TD_EINVAL:
    case TD_EPARSE:
    case TD_ESCHEMA:
    case TD_ELIMIT:
    case TD_EIO:
    case TD_ENOENT:
    case TD_EEXIST:
        return 1;
    default:
        return 0;
    }
}

/* Raises the exception a failing library call deserves (not ENOMATCH). */
static PyObject *raise_td(int err, td_diag *d, const CallObject *call)
{
    if (err == TD_ENOMEM)
        return PyErr_NoMemory();
    if (is_input_code(err))
        return raise_input_error(d, err, call);
    if (d != NULL && d->msg[0] != '\0')
        PyErr_Format(Error_Type, "%s: %s", td_err_name(err), d->msg);
    else
        PyErr_Format(Error_Type, "%s: %s", td_err_name(err), td_strerror(err));
    return NULL;
}

/* ---- explain rows ------------------------------------------------------- */

static PyObject *row_reasons(const td_explain *ex, size_t i)
{
    const td_explain_row *r = td_explain_get(ex, i);
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    PyObject *s = NULL;
    switch (r->status) {
    case TD_CAND_SELECTED:
        if (r->npreds == 0)
            s = PyUnicode_FromString("no predicates; the emitter accepted");
        else
            s = PyUnicode_FromFormat("%zu of %zu predicates passed; the "
                                     "emitter accepted",
                                     r->npreds, r->npreds);
        break;
    case TD_CAND_REJECTED:
        for (size_t k = 0; k < r->npreds; k++) {
            if (r->preds[k].ok)
                continue;
            PyObject *one =
                r->preds[k].reason[0]
                    ? PyUnicode_FromFormat("%s: %s", r->preds[k].name,
                                           r->preds[k].reason)
                    : PyUnicode_FromString(r->preds[k].name);
            if (one == NULL || PyList_Append(list, one) < 0) {
                Py_XDECREF(one);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(one);
        }
        break;
    case TD_CAND_NOT_TRIED: {
        int failed = 0;
        for (size_t k = 0; k < i; k++)
            if (td_explain_get(ex, k)->status == TD_CAND_FAILED)
                failed = 1;
        s = PyUnicode_FromString(failed ? "an earlier candidate failed"
                                        : "an earlier candidate won");
        break;
    }
    case TD_CAND_DISABLED:
        s = PyUnicode_FromFormat("enabled: false in the rules (%s:%d)",
                                 r->file ? r->file : "?", r->line);
        break;
    case TD_CAND_DECLINED:
    case TD_CAND_FAILED: {
        const char *dash = strstr(r->message, " \xe2\x80\x94 ");
        s = PyUnicode_FromString(dash ? dash + 5 : "no reason given");
        break;
    }
    }
    if (s != NULL) {
        int rc = PyList_Append(list, s);
        Py_DECREF(s);
        if (rc < 0) {
            Py_DECREF(list);
            return NULL;
        }
    } else if (PyErr_Occurred()) {
        Py_DECREF(list);
        return NULL;
    }
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

static PyObject *make_row(const td_explain *ex, size_t i)
{
    const td_explain_row *r = td_explain_get(ex, i);
    PyObject *row = PyStructSequence_New(ExplainRow_Type);
    if (row == NULL)
        return NULL;
    PyObject *preds = PyTuple_New((Py_ssize_t)r->npreds);
    if (preds == NULL)
        goto fail;
    PyStructSequence_SetItem(row, 4, preds);
    for (size_t k = 0; k < r->npreds; k++) {
        PyObject *p = PyStructSequence_New(PredOutcome_Type);
        if (p == NULL)
            goto fail;
        PyTuple_SetItem(preds, (Py_ssize_t)k, p);
        PyObject *name = PyUnicode_FromString(r->preds[k].name);
        if (name == NULL)
            goto fail;
        PyStructSequence_SetItem(p, 0, name);
        PyObject *ok = PyBool_FromLong(r->preds[k].ok);
        PyStructSequence_SetItem(p, 1, ok);
        PyObject *why = PyUnicode_FromString(r->preds[k].reason);
        if (why == NULL)
            goto fail;
        PyStructSequence_SetItem(p, 2, why);
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
    if ((v = row_reasons(ex, i)) == NULL)
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

static PyObject *make_rows(const td_explain *ex)
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
static td_explain *run_explain(const RegistryObject *reg, const CallObject *call)
{
    td_explain *ex = NULL;
    td_diag d;
    int err;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_explain_call(reg->reg, call->call, &ex, &d);
    Py_END_ALLOW_THREADS
    if (err != 0) {
        raise_td(err, &d, call);
        return NULL;
    }
    return ex;
}

static PyObject *format_explain(const td_explain *ex, td_explain_style style)
{
    char *text = NULL;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = td_explain_format(ex, style, &text);
    Py_END_ALLOW_THREADS
    if (err != 0)
        return raise_td(err, NULL, NULL);
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
                                       "replace");
    td_release(text);
    return s;
}

/* Raises DispatchError for a call nothing matched: the explanation's rows
 * and the command line's text. */
static PyObject *raise_no_match(RegistryObject *reg, CallObject *call)
{
    td_explain *ex = run_explain(reg, call);
    if (ex == NULL)
        return NULL;
    PyObject *text = format_explain(ex, TD_EXPLAIN_TEXT);
    PyObject *rows = text ? make_rows(ex) : NULL;
    PyObject *reason = rows ? str_or_none(td_explain_empty_reason(ex)) : NULL;
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
        msg ? PyObject_CallFunctionObjArgs(DispatchError_Type, msg, NULL) : NULL;
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
    PyErr_SetObject(DispatchError_Type, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- Call ------------------------------------------------------------- */

static CallObject *call_wrap(PyTypeObject *type, td_call *loaded,
                             PyObject *source)
{
    td_call *own = PyMem_Malloc(sizeof *own);
    if (own == NULL) {
        td_call_free(loaded);
        return (CallObject *)PyErr_NoMemory();
    }
    memcpy(own, loaded, sizeof *own);
    td_call_free(loaded);
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    CallObject *self = (CallObject *)alloc(type, 0);
    if (self == NULL) {
        PyMem_Free(own);
        return NULL;
    }
    self->call = own;
    Py_XINCREF(source);
    self->source = source;
    return self;
}

/* Parses text (a str) with the GIL released. */
static PyObject *call_from_text(PyTypeObject *type, PyObject *text,
                                const char *name)
{
    Py_ssize_t len = 0;
    const char *s = PyUnicode_AsUTF8AndSize(text, &len);
    if (s == NULL)
        return NULL;
    td_call *call = NULL;
    td_diag d;
    int err;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_call_parse(name, s, (size_t)len, &call, &d);
    Py_END_ALLOW_THREADS
    if (err != 0)
        return raise_td(err, &d, NULL);
    return (PyObject *)call_wrap(type, call, text);
}

static const char *const call_keys[] = {
    "op",   "target", "arch", "scope", "launch",   "buffers", "dst",
    "src",  "srcs",   "extras", "axes", "accum", "config", "dispatch", NULL};

/* json.dumps writes non-finite floats as the bare tokens Infinity,
 * -Infinity and NaN, which YAML reads as strings (here: a region name).
 * Rewrites those tokens outside quoted strings as YAML's .inf and .nan, so
 * that a literal operand of inf or nan means what it says.  Returns a new
 * reference. */
static PyObject *yaml_nonfinite(PyObject *text)
{
    Py_ssize_t n = 0;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    if (s == NULL)
        return NULL;
    char *out = PyMem_Malloc(2 * (size_t)n + 1); /* NaN grows 3 -> 4 */
    if (out == NULL)
        return PyErr_NoMemory();
    Py_ssize_t o = 0;
    int in_str = 0;
    for (Py_ssize_t i = 0; i < n;) {
        char c = s[i];
        if (in_str) {
            out[o++] = c;
            if (c == '\\' && i + 1 < n)
                out[o++] = s[++i];
            else if (c == '"')
                in_str = 0;
            i++;
        } else if (n - i >= 8 && memcmp(s + i, "Infinity", 8) == 0) {
            memcpy(out + o, ".inf", 4);
            o += 4;
            i += 8;
        } else if (n - i >= 3 && memcmp(s + i, "NaN", 3) == 0) {
            memcpy(out + o, ".nan", 4);
            o += 4;
            i += 3;
        } else {
            in_str = c == '"';
            out[o++] = c;
            i++;
        }
    }
    PyObject *r = PyUnicode_FromStringAndSize(out, o);
    PyMem_Free(out);
    return r;
}

/* Call(op=..., buffers=..., ...): the fields of a call file as keywords,
 * written out as one YAML (JSON) document and read by the library's own
 * loader, so keyword calls are checked exactly like files. */
static PyObject *Call_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if (args != NULL && PyTuple_Size(args) != 0) {
        PyErr_SetString(PyExc_TypeError,
                        "Call() takes keyword arguments only (op=..., "
                        "buffers=..., dst=..., src=...); use "
                        "Call.from_yaml(path) or Call.from_text(text) for "
                        "call files");
        return NULL;
    }
    PyObject *doc = PyDict_New();
    if (doc == NULL)
        return NULL;
    PyObject *default_target = PyUnicode_FromString("cuda");
    if (default_target == NULL)
        goto fail;
    if (kw != NULL) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kw, &pos, &key, &value)) {
            const char *k = PyUnicode_AsUTF8AndSize(key, NULL);
            if (k == NULL)
                goto fail;
            int known = 0;
            for (int i = 0; call_keys[i] != NULL; i++)
                known |= strcmp(k, call_keys[i]) == 0;
            if (!known) {
                PyErr_Format(PyExc_TypeError,
                             "Call() got an unexpected keyword argument '%s'",
                             k);
                goto fail;
            }
        }
        for (int i = 0; call_keys[i] != NULL; i++) {
            PyObject *v = PyDict_GetItemString(kw, call_keys[i]);
            if (v == NULL && strcmp(call_keys[i], "target") == 0)
                v = default_target;
            if (v != NULL && v != Py_None &&
                PyDict_SetItemString(doc, call_keys[i], v) < 0)
                goto fail;
        }
    }
    Py_CLEAR(default_target);
    PyObject *json = PyImport_ImportModule("json");
    if (json == NULL)
        goto fail;
    PyObject *dumps = PyObject_GetAttrString(json, "dumps");
    Py_DECREF(json);
    if (dumps == NULL)
        goto fail;
    PyObject *pos_args = PyTuple_Pack(1, doc);
    PyObject *kwargs = Py_BuildValue("{s:i}", "indent", 1);
    PyObject *text = NULL;
    if (pos_args != NULL && kwargs != NULL)
        text = PyObject_Call(dumps, pos_args, kwargs);
    Py_XDECREF(pos_args);
    Py_XDECREF(kwargs);
    Py_DECREF(dumps);
    Py_DECREF(doc);
    if (text == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) ||
            PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyObject *t, *v, *tb;
            PyErr_Fetch(&t, &v, &tb);
            PyErr_Format(PyExc_TypeError,
                         "Call(): a field is not plain data "
                         "(str, int, bool, list, dict): %S",
                         v ? v : Py_None);
            Py_XDECREF(t);
            Py_XDECREF(v);
            Py_XDECREF(tb);
        }
        return NULL;
    }
    PyObject *yaml = yaml_nonfinite(text);
    Py_DECREF(text);
    if (yaml == NULL)
        return NULL;
    PyObject *call = call_from_text(type, yaml, "<Call>");
    Py_DECREF(yaml);
    return call;
fail:
    Py_XDECREF(default_target);
    Py_DECREF(doc);
    return NULL;
}

static void Call_dealloc(PyObject *self)
{
    CallObject *c = (CallObject *)self;
    PyMem_Free(c->call);
    Py_CLEAR(c->source);
    generic_dealloc(self);
}

PyDoc_STRVAR(Call_from_yaml_doc,
"from_yaml($cls, path, /)\n--\n\n"
"Load a call file (YAML, see docs/contract.md).\n\n"
"Raises InputError (with .path, .line, .column) when the file cannot be\n"
"read or does not follow the contract.");

static PyObject *Call_from_yaml(PyObject *cls, PyObject *path)
{
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(path, &bytes))
        return NULL;
    const char *p = PyBytes_AsString(bytes);
    td_call *call = NULL;
    td_diag d;
    int err;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_call_load_file(p, &call, &d);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (err != 0)
        return raise_td(err, &d, NULL);
    return (PyObject *)call_wrap((PyTypeObject *)cls, call, NULL);
}

PyDoc_STRVAR(Call_from_text_doc,
"from_text($cls, text, name='<text>')\n--\n\n"
"Parse a call from YAML text; `name` stands for the file in messages.");

static PyObject *Call_from_text(PyObject *cls, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"text", "name", NULL};
    PyObject *text;
    const char *name = "<text>";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:from_text", kwlist, &text,
                                     &name))
        return NULL;
    if (PyBytes_Check(text)) {
        PyObject *s = PyUnicode_DecodeUTF8(PyBytes_AsString(text),
                                           PyBytes_Size(text), "strict");
        if (s == NULL)
            return NULL;
        PyObject *r = call_from_text((PyTypeObject *)cls, s, name);
        Py_DECREF(s);
        return r;
    }
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "from_text() expects str or bytes");
        return NULL;
    }
    return call_from_text((PyTypeObject *)cls, text, name);
}

PyDoc_STRVAR(Call_with_arch_doc,
"with_arch($self, arch, /)\n--\n\n"
"A copy of the call with `arch` (e.g. 'sm_100a') in place of its own, like\n"
"the command line's --arch.  Raises ValueError unless arch has sm_NN.");

static PyObject *Call_with_arch(PyObject *self, PyObject *arg)
{
    const char *arch = PyUnicode_AsUTF8AndSize(arg, NULL);
    if (arch == NULL)
        return NULL;
    td_call *copy = PyMem_Malloc(sizeof *copy);
    if (copy == NULL)
        return PyErr_NoMemory();
    memcpy(copy, ((CallObject *)self)->call, sizeof *copy);
    if (td_call_set_arch(copy, arch) != 0) {
        PyMem_Free(copy);
        PyErr_Format(PyExc_ValueError,
                     "arch '%s': expected sm_NN (e.g. sm_90a)", arch);
        return NULL;
    }
    PyTypeObject *tp = Py_TYPE(self);
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    CallObject *c = (CallObject *)alloc(tp, 0);
    if (c == NULL) {
        PyMem_Free(copy);
        return NULL;
    }
    c->call = copy;
    c->source = ((CallObject *)self)->source;
    Py_XINCREF(c->source);
    return (PyObject *)c;
}

static PyObject *region_text(const td_call *call, const td_region *r)
{
    char buf[TD_NAME_MAX + TD_MAX_RANK * 48 + 8];
    size_t n = 0;
    if (r->buffer < 0 || r->buffer >= call->nbuffers)
        Py_RETURN_NONE;
    n += (size_t)snprintf(buf, sizeof buf, "%s[",
                          call->buffers[r->buffer].name);
    for (int i = 0; i < r->ndim && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld:%lld",
                              i ? ", " : "", (long long)r->start[i],
                              (long long)(r->start[i] + r->extent[i]));
    if (n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, "]");
    return PyUnicode_FromString(buf);
}

#define CALL(o) (((CallObject *)(o))->call)

static PyObject *Call_get_op(PyObject *s, void *c)
{
    (void)c;
    return PyUnicode_FromString(CALL(s)->op);
}
static PyObject *Call_get_target(PyObject *s, void *c)
{
    (void)c;
    return PyUnicode_FromString(CALL(s)->target);
}
static PyObject *Call_get_arch(PyObject *s, void *c)
{
    (void)c;
    return str_or_none(CALL(s)->arch);
}
static PyObject *Call_get_sm_version(PyObject *s, void *c)
{
    (void)c;
    return int_or_none(CALL(s)->sm_version);
}
static PyObject *Call_get_scope(PyObject *s, void *c)
{
    (void)c;
    return PyUnicode_FromString(td_exec_scope_name(CALL(s)->scope));
}
static PyObject *Call_get_accum(PyObject *s, void *c)
{
    (void)c;
    return PyBool_FromLong(CALL(s)->accum);
}
static PyObject *Call_get_dispatch(PyObject *s, void *c)
{
    (void)c;
    return str_or_none(CALL(s)->dispatch);
}
static PyObject *Call_get_file(PyObject *s, void *c)
{
    (void)c;
    return str_or_none(CALL(s)->file);
}
static PyObject *Call_get_dst(PyObject *s, void *c)
{
    (void)c;
    return region_text(CALL(s), &CALL(s)->dst);
}
static PyObject *Call_get_src(PyObject *s, void *c)
{
    (void)c;
    return region_text(CALL(s), &CALL(s)->src);
}
/* One operand as the call file writes it: a region 'A[0:4]', a literal
 * {'value': V, 'dtype': T}, a named scalar {'scalar': NAME, 'dtype': T};
 * None when absent. */
static PyObject *operand_obj(const td_call *call, const td_operand *o)
{
    switch (o->kind) {
    case TD_OPERAND_REGION:
        return region_text(call, &o->region);
    case TD_OPERAND_LITERAL: {
        PyObject *v;
        if (td_dtype_is_float(o->dtype))
            v = PyFloat_FromDouble(o->value);
        else if (o->dtype == TD_U64)
            v = PyLong_FromUnsignedLongLong((unsigned long long)(uint64_t)o->ivalue);
        else
            v = PyLong_FromLongLong(o->ivalue);
        if (v == NULL)
            return NULL;
        return Py_BuildValue("{s:N,s:s}", "value", v, "dtype",
                             td_dtype_name(o->dtype));
    }
    case TD_OPERAND_SCALAR:
        return Py_BuildValue("{s:s,s:s}", "scalar", o->name, "dtype",
                             td_dtype_name(o->dtype));
    default:
        Py_RETURN_NONE;
    }
}

static PyObject *Call_get_srcs(PyObject *s, void *c)
{
    (void)c;
    const td_call *call = CALL(s);
    int n = call->nsrcs;
    if (n < 0 || n > TD_MAX_SRCS)
        n = 0;
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *v = operand_obj(call, &call->srcs[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SetItem(t, i, v);
    }
    return t;
}

static PyObject *Call_get_extras(PyObject *s, void *c)
{
    (void)c;
    const td_call *call = CALL(s);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    const td_operand *ops[2] = {&call->bias, &call->scale};
    static const char *const names[2] = {"bias", "scale"};
    for (int i = 0; i < 2; i++) {
        if (ops[i]->kind == TD_OPERAND_NONE)
            continue;
        PyObject *v = operand_obj(call, ops[i]);
        if (v == NULL || PyDict_SetItemString(d, names[i], v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *Call_get_axes(PyObject *s, void *c)
{
    (void)c;
    const td_call *call = CALL(s);
    PyObject *t = PyTuple_New(call->naxes);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < call->naxes; i++) {
        PyObject *v = PyLong_FromLong(call->axes[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SetItem(t, i, v);
    }
    return t;
}

static PyObject *Call_get_launch(PyObject *s, void *c)
{
    (void)c;
    const td_call *call = CALL(s);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (int i = 0; i < TD_LAUNCH_COUNT; i++) {
        const td_launch_param *p = &call->launch[i];
        if (!p->present)
            continue;
        PyObject *v = p->symbolic ? PyUnicode_FromString(p->symbol)
                                  : PyLong_FromLongLong(p->extent);
        if (v == NULL ||
            PyDict_SetItemString(d, td_launch_tag_name((td_launch_tag)i), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *Call_get_config(PyObject *s, void *c)
{
    (void)c;
    const td_call *call = CALL(s);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (int i = 0; i < call->nconfig; i++) {
        const td_config_entry *e = &call->config[i];
        PyObject *v = e->kind == TD_VALUE_INT    ? PyLong_FromLongLong(e->i)
                      : e->kind == TD_VALUE_BOOL ? PyBool_FromLong(e->b)
                                                 : PyUnicode_FromString(e->s);
        if (v == NULL || PyDict_SetItemString(d, e->key, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *Call_get_buffers(PyObject *s, void *c)
{
    (void)c;
    const td_call *call = CALL(s);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (int i = 0; i < call->nbuffers; i++) {
        const td_buffer *b = &call->buffers[i];
        PyObject *shape = PyTuple_New(b->ndim);
        if (shape == NULL)
            goto fail;
        for (int k = 0; k < b->ndim; k++)
            PyTuple_SetItem(shape, k, PyLong_FromLongLong(b->shape[k]));
        PyObject *one =
            b->has_layout
                ? Py_BuildValue("{s:s,s:s,s:N,s:s}", "scope", b->scope,
                                "dtype", td_dtype_name(b->dtype), "shape",
                                shape, "layout", b->layout_text)
                : Py_BuildValue("{s:s,s:s,s:N}", "scope", b->scope, "dtype",
                                td_dtype_name(b->dtype), "shape", shape);
        if (one == NULL || PyDict_SetItemString(d, b->name, one) < 0) {
            Py_XDECREF(one);
            goto fail;
        }
        Py_DECREF(one);
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

static PyObject *Call_get_script(PyObject *s, void *c)
{
    (void)c;
    char buf[4096];
    td_call_format_script(CALL(s), buf, sizeof buf);
    return PyUnicode_FromString(buf);
}

static PyObject *Call_repr(PyObject *s)
{
    char buf[4096];
    td_call_format_script(CALL(s), buf, sizeof buf);
    const td_call *call = CALL(s);
    return PyUnicode_FromFormat("<tiledispatch.Call %s target=%s%s%s>", buf,
                                call->target, call->arch[0] ? " arch=" : "",
                                call->arch);
}

static PyGetSetDef Call_getset[] = {
    {"op", Call_get_op, NULL, "The op name ('sum', 'max', 'min').", NULL},
    {"target", Call_get_target, NULL, "The target ('cuda').", NULL},
    {"arch", Call_get_arch, NULL, "The arch ('sm_90a'), or None.", NULL},
    {"sm_version", Call_get_sm_version, NULL,
     "The number in sm_NN of arch, or None.", NULL},
    {"scope", Call_get_scope, NULL,
     "The execution scope: thread, warp, warpgroup, cta or cluster.", NULL},
    {"launch", Call_get_launch, NULL,
     "The launch extents: {'threadIdx.x': 128, ...} (str when symbolic).",
     NULL},
    {"buffers", Call_get_buffers, NULL,
     "The buffers: {name: {'scope', 'dtype', 'shape'[, 'layout']}}.", NULL},
    {"dst", Call_get_dst, NULL, "The destination region, 'B[0:1]'.", NULL},
    {"src", Call_get_src, NULL,
     "The source region, 'A[0:4]'; None when the first source is not a "
     "region or there is none.", NULL},
    {"srcs", Call_get_srcs, NULL,
     "The source operands: 'A[0:4]' (a region), {'value': V, 'dtype': T} "
     "(a literal), {'scalar': NAME, 'dtype': T} (a named scalar).", NULL},
    {"extras", Call_get_extras, NULL,
     "The op extras given: {'bias': OPERAND, 'scale': OPERAND}.", NULL},
    {"axes", Call_get_axes, NULL, "The reduce axes as written.", NULL},
    {"accum", Call_get_accum, NULL, "Whether the result accumulates into dst.",
     NULL},
    {"config", Call_get_config, NULL, "The config entries.", NULL},
    {"dispatch", Call_get_dispatch, NULL,
     "The forced variant name, or None.", NULL},
    {"file", Call_get_file, NULL,
     "The file the call was loaded from (or its name), or None.", NULL},
    {"script", Call_get_script, NULL,
     "The call as one line of TVMScript-like text.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Call_methods[] = {
    {"from_yaml", (PyCFunction)Call_from_yaml, METH_O | METH_CLASS,
     Call_from_yaml_doc},
    {"from_text", (PyCFunction)(void (*)(void))Call_from_text,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS, Call_from_text_doc},
    {"with_arch", Call_with_arch, METH_O, Call_with_arch_doc},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(Call_doc,
"Call(*, op, buffers, dst, src=None, srcs=None, extras=None, target='cuda',\n"
"     arch=None, scope=None, launch=None, axes=None, accum=None, config=None,\n"
"     dispatch=None)\n"
"--\n\n"
"One tile-primitive call, as a call file describes it (docs/contract.md).\n\n"
"Build one from keywords (the fields of a call file; checked by the\n"
"library's loader exactly like a file), or with Call.from_yaml(path) /\n"
"Call.from_text(text).  Calls are immutable and may be shared between\n"
"threads; with_arch() makes a copy with another arch.\n\n"
"    Call(op='sum', target='cuda', arch='sm_90a', scope='thread',\n"
"         launch={'threadIdx.x': 1},\n"
"         buffers={'A': {'scope': 'local', 'dtype': 'float32', 'shape': [4]},\n"
"                  'B': {'scope': 'local', 'dtype': 'float32', 'shape': [1]}},\n"
"         dst='B', src='A', axes=[-1], accum=False)");

static PyType_Slot Call_slots[] = {
    {Py_tp_new, Call_new},
    {Py_tp_dealloc, Call_dealloc},
    {Py_tp_repr, Call_repr},
    {Py_tp_getset, Call_getset},
    {Py_tp_methods, Call_methods},
    {Py_tp_doc, (void *)Call_doc},
    {0, NULL}};

static PyType_Spec Call_spec = {"tiledispatch.Call", sizeof(CallObject), 0,
                                Py_TPFLAGS_DEFAULT, Call_slots};

/* ---- Dispatch --------------------------------------------------------- */

static void Dispatch_dealloc(PyObject *self)
{
    DispatchObject *d = (DispatchObject *)self;
    td_ir_free(d->ir);
    Py_CLEAR(d->registry);
    Py_CLEAR(d->call);
    generic_dealloc(self);
}

static int parse_lang(const char *lang, td_lang *out)
{
    if (strcmp(lang, "cuda") == 0)
        *out = TD_LANG_CUDA;
    else if (strcmp(lang, "tirx") == 0)
        *out = TD_LANG_TIRX;
    else {
        PyErr_Format(PyExc_ValueError, "lang '%s': expected 'cuda' or 'tirx'",
                     lang);
        return -1;
    }
    return 0;
}

/* Prints with the GIL released; returns 0 and both strings, or raises. */
static int print_ir(DispatchObject *self, td_lang lang, int indent,
                    PyObject **prelude, PyObject **body)
{
    char *b = NULL, *p = NULL;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = td_ir_print(self->ir, lang, indent, &b, &p);
    Py_END_ALLOW_THREADS
    if (err != 0) {
        td_release(b);
        td_release(p);
        raise_td(err, NULL, NULL);
        return -1;
    }
    *body = PyUnicode_DecodeUTF8(b, (Py_ssize_t)strlen(b), "replace");
    *prelude = p ? PyUnicode_DecodeUTF8(p, (Py_ssize_t)strlen(p), "replace")
                 : PyUnicode_FromString("");
    td_release(b);
    td_release(p);
    if (*body == NULL || *prelude == NULL) {
        Py_CLEAR(*body);
        Py_CLEAR(*prelude);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(Dispatch_emit_doc,
"emit($self, lang='cuda', *, indent=0, prelude=True)\n--\n\n"
"The lowered code of the call in `lang` ('cuda' or 'tirx').\n\n"
"With prelude=True the text is what `tiledispatch emit` prints: the CUDA\n"
"prelude (includes and helper functions, when the body needs any), a\n"
"blank line, then the body.  With prelude=False, the body only.  `indent`\n"
"is the body's starting indentation level (2 spaces each).");

static PyObject *Dispatch_emit(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"lang", "indent", "prelude", NULL};
    const char *lang_name = "cuda";
    int indent = 0, with_prelude = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|s$ip:emit", kwlist,
                                     &lang_name, &indent, &with_prelude))
        return NULL;
    td_lang lang;
    if (parse_lang(lang_name, &lang) < 0)
        return NULL;
    if (indent < 0 || indent > 64) {
        PyErr_SetString(PyExc_ValueError, "indent must be in 0..64");
        return NULL;
    }
    PyObject *prelude, *body;
    if (print_ir((DispatchObject *)self, lang, indent, &prelude, &body) < 0)
        return NULL;
    if (!with_prelude || PyUnicode_GetLength(prelude) == 0) {
        Py_DECREF(prelude);
        return body;
    }
    PyObject *r = PyUnicode_FromFormat("%U\n%U", prelude, body);
    Py_DECREF(prelude);
    Py_DECREF(body);
    return r;
}

PyDoc_STRVAR(Dispatch_emit_parts_doc,
"emit_parts($self, lang='cuda', *, indent=0)\n--\n\n"
"(prelude, body) of the lowered code: the prelude goes at file scope\n"
"('' when none is needed), the body inside a kernel.");

static PyObject *Dispatch_emit_parts(PyObject *self, PyObject *args,
                                     PyObject *kw)
{
    static char *kwlist[] = {"lang", "indent", NULL};
    const char *lang_name = "cuda";
    int indent = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|s$i:emit_parts", kwlist,
                                     &lang_name, &indent))
        return NULL;
    td_lang lang;
    if (parse_lang(lang_name, &lang) < 0)
        return NULL;
    if (indent < 0 || indent > 64) {
        PyErr_SetString(PyExc_ValueError, "indent must be in 0..64");
        return NULL;
    }
    PyObject *prelude, *body;
    if (print_ir((DispatchObject *)self, lang, indent, &prelude, &body) < 0)
        return NULL;
    return Py_BuildValue("(NN)", prelude, body);
}

static PyObject *Dispatch_get_variant(PyObject *s, void *c)
{
    (void)c;
    return PyUnicode_FromString(((DispatchObject *)s)->variant);
}
static PyObject *Dispatch_get_impl(PyObject *s, void *c)
{
    (void)c;
    return str_or_none(((DispatchObject *)s)->impl);
}
static PyObject *Dispatch_get_priority(PyObject *s, void *c)
{
    (void)c;
    return PyLong_FromLong(((DispatchObject *)s)->priority);
}
static PyObject *Dispatch_get_call(PyObject *s, void *c)
{
    (void)c;
    PyObject *o = ((DispatchObject *)s)->call;
    Py_INCREF(o);
    return o;
}
static PyObject *Dispatch_get_registry(PyObject *s, void *c)
{
    (void)c;
    PyObject *o = ((DispatchObject *)s)->registry;
    Py_INCREF(o);
    return o;
}

static PyObject *Dispatch_repr(PyObject *s)
{
    DispatchObject *d = (DispatchObject *)s;
    return PyUnicode_FromFormat("<tiledispatch.Dispatch variant='%s' "
                                "priority=%d>",
                                d->variant, d->priority);
}

static PyGetSetDef Dispatch_getset[] = {
    {"variant", Dispatch_get_variant, NULL, "The selected variant's name.",
     NULL},
    {"impl", Dispatch_get_impl, NULL, "The variant module (emitter) it binds.",
     NULL},
    {"priority", Dispatch_get_priority, NULL, "The variant's priority.", NULL},
    {"call", Dispatch_get_call, NULL, "The Call that was dispatched.", NULL},
    {"registry", Dispatch_get_registry, NULL, "The Registry that dispatched.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Dispatch_methods[] = {
    {"emit", (PyCFunction)(void (*)(void))Dispatch_emit,
     METH_VARARGS | METH_KEYWORDS, Dispatch_emit_doc},
    {"emit_parts", (PyCFunction)(void (*)(void))Dispatch_emit_parts,
     METH_VARARGS | METH_KEYWORDS, Dispatch_emit_parts_doc},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(Dispatch_doc,
"The outcome of Registry.dispatch(): the selected variant and its lowered\n"
"IR.  emit('cuda') / emit('tirx') print it; printing does not change it,\n"
"so one Dispatch may be printed from several threads.");

static PyType_Slot Dispatch_slots[] = {
    {Py_tp_dealloc, Dispatch_dealloc},
    {Py_tp_repr, Dispatch_repr},
    {Py_tp_getset, Dispatch_getset},
    {Py_tp_methods, Dispatch_methods},
    {Py_tp_doc, (void *)Dispatch_doc},
    {0, NULL}};

static PyType_Spec Dispatch_spec = {
    "tiledispatch.Dispatch", sizeof(DispatchObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Dispatch_slots};

/* ---- Registry --------------------------------------------------------- */

/* A plugin resolves the td_* functions it calls in the process's global
 * symbols; CPython loads extension modules RTLD_LOCAL, so the first plugin
 * load promotes this module (which carries the library) to RTLD_GLOBAL. */
static int export_library_symbols(void)
{
    static int done;
    if (done)
        return 0;
    Dl_info info;
    if (dladdr((void *)&td_registry_new, &info) == 0 || info.dli_fname == NULL) {
        PyErr_SetString(Error_Type, "cannot locate the tiledispatch extension "
                                    "module to export its symbols to plugins");
        return -1;
    }
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    if (h == NULL) {
        PyErr_Format(Error_Type, "cannot export the library to plugins: %s",
                     dlerror());
        return -1;
    }
    /* The handle stays open: the module is never unloaded anyway. */
    done = 1;
    return 0;
}

/* Paths of an iterable of str / os.PathLike, as filesystem bytes. */
static PyObject *fs_paths(PyObject *seq, const char *what)
{
    if (seq == NULL || seq == Py_None)
        return PyList_New(0);
    if (PyUnicode_Check(seq) || PyBytes_Check(seq)) {
        PyErr_Format(PyExc_TypeError,
                     "%s= takes a list of paths, not one string", what);
        return NULL;
    }
    PyObject *it = PyObject_GetIter(seq);
    if (it == NULL)
        return NULL;
    PyObject *out = PyList_New(0), *item;
    while (out != NULL && (item = PyIter_Next(it)) != NULL) {
        PyObject *b = NULL;
        int ok = PyUnicode_FSConverter(item, &b);
        Py_DECREF(item);
        if (!ok || PyList_Append(out, b) < 0) {
            Py_XDECREF(b);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(b);
    }
    Py_DECREF(it);
    if (out != NULL && PyErr_Occurred())
        Py_CLEAR(out);
    return out;
}

/* Loads the rules of a new registry, like the command line: the built-in
 * rules unless default_rules is false, then one layer per rules file. */
static int load_rules(td_registry *reg, int default_rules,
                      const char *const *paths, size_t n, td_diag *d)
{
    int err = 0;
    if (default_rules)
        err = td_registry_load_default_rules(reg, d);
    if (err == 0 && n > 0)
        err = td_registry_add_rules(reg, paths, n, d);
    return err;
}

static PyObject *Registry_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"rules", "plugins", "default_rules", NULL};
    PyObject *rules = Py_None, *plugins = Py_None;
    int default_rules = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$p:Registry", kwlist,
                                     &rules, &plugins, &default_rules))
        return NULL;
    PyObject *rule_paths = fs_paths(rules, "rules");
    if (rule_paths == NULL)
        return NULL;
    PyObject *plugin_paths = fs_paths(plugins, "plugins");
    if (plugin_paths == NULL) {
        Py_DECREF(rule_paths);
        return NULL;
    }
    Py_ssize_t nrules = PyList_Size(rule_paths);
    Py_ssize_t nplugins = PyList_Size(plugin_paths);
    const char **paths = PyMem_Malloc(sizeof *paths * (size_t)(nrules + 1));
    RegistryObject *self = NULL;
    td_registry *reg = NULL;
    td_diag d;
    int err = 0;
    if (paths == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < nrules; i++)
        paths[i] = PyBytes_AsString(PyList_GetItem(rule_paths, i));
    if (nplugins > 0 && export_library_symbols() < 0)
        goto out;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_registry_new(&reg);
    for (Py_ssize_t i = 0; err == 0 && i < nplugins; i++)
        err = td_registry_load_plugin(
            reg, PyBytes_AsString(PyList_GetItem(plugin_paths, i)), &d);
    if (err == 0)
        err = load_rules(reg, default_rules, paths, (size_t)nrules, &d);
    Py_END_ALLOW_THREADS
    if (err != 0) {
        td_registry_free(reg);
        raise_td(err, &d, NULL);
        goto out;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    self = (RegistryObject *)alloc(type, 0);
    if (self == NULL) {
        td_registry_free(reg);
        goto out;
    }
    self->reg = reg;
    self->nrules = (Py_ssize_t)td_registry_rules(reg, NULL, 0);
out:
    PyMem_Free(paths);
    Py_DECREF(rule_paths);
    Py_DECREF(plugin_paths);
    return (PyObject *)self;
}

static void Registry_dealloc(PyObject *self)
{
    td_registry_free(((RegistryObject *)self)->reg);
    generic_dealloc(self);
}

static CallObject *as_call(PyObject *o)
{
    if (!PyObject_TypeCheck(o, Call_Type)) {
        PyErr_SetString(PyExc_TypeError,
                        "expected a tiledispatch.Call (Call.from_yaml(path), "
                        "Call.from_text(text) or Call(op=..., ...))");
        return NULL;
    }
    return (CallObject *)o;
}

PyDoc_STRVAR(Registry_dispatch_doc,
"dispatch($self, call, /)\n--\n\n"
"Select the variant for `call` and lower it: the highest-priority enabled\n"
"candidate whose predicates all pass and whose emitter accepts.\n\n"
"Returns a Dispatch (.variant, .emit('cuda'), .emit('tirx')).  Raises\n"
"DispatchError when no variant matched (.rows is the explain table,\n"
"str() the command line's text) and InputError when the call names an\n"
"op or variant the registry does not know.  The GIL is released while\n"
"the library works.");

static PyObject *Registry_dispatch(PyObject *self, PyObject *arg)
{
    CallObject *call = as_call(arg);
    if (call == NULL)
        return NULL;
    RegistryObject *reg = (RegistryObject *)self;
    td_dispatch_result res;
    td_diag d;
    int err;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_dispatch(reg->reg, call->call, &res, &d);
    Py_END_ALLOW_THREADS
    if (err == TD_ENOMATCH)
        return raise_no_match(reg, call);
    if (err != 0)
        return raise_td(err, &d, call);
    DispatchObject *o = (DispatchObject *)dispatch_alloc(Dispatch_Type, 0);
    if (o == NULL) {
        td_ir_free(res.ir);
        return NULL;
    }
    o->ir = res.ir;
    o->variant = res.variant;
    o->impl = res.impl;
    o->priority = res.priority;
    Py_INCREF(self);
    o->registry = self;
    Py_INCREF(arg);
    o->call = arg;
    return (PyObject *)o;
}

PyDoc_STRVAR(Registry_select_doc,
"select($self, call, /)\n--\n\n"
"The name of the variant dispatch() selects for `call` (what\n"
"`tiledispatch dispatch` prints); raises like dispatch().");

static PyObject *Registry_select(PyObject *self, PyObject *arg)
{
    CallObject *call = as_call(arg);
    if (call == NULL)
        return NULL;
    RegistryObject *reg = (RegistryObject *)self;
    td_dispatch_result res;
    td_diag d;
    int err;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_dispatch(reg->reg, call->call, &res, &d);
    if (err == 0)
        td_ir_free(res.ir);
    Py_END_ALLOW_THREADS
    if (err == TD_ENOMATCH)
        return raise_no_match(reg, call);
    if (err != 0)
        return raise_td(err, &d, call);
    return PyUnicode_FromString(res.variant);
}

PyDoc_STRVAR(Registry_explain_doc,
"explain($self, call, /)\n--\n\n"
"Every candidate for `call` in try order, as a list of ExplainRow\n"
"(variant, priority, status, reasons); every predicate is evaluated.\n"
"status is one of 'selected', 'rejected', 'declined', 'failed',\n"
"'not_tried', 'disabled'; reasons is a tuple of the lines the command\n"
"line's table shows.  Each row also has .predicates (PredicateOutcome\n"
"name, ok, reason) and .message.  Does not raise when nothing matches.");

static PyObject *Registry_explain(PyObject *self, PyObject *arg)
{
    CallObject *call = as_call(arg);
    if (call == NULL)
        return NULL;
    td_explain *ex = run_explain((RegistryObject *)self, call);
    if (ex == NULL)
        return NULL;
    PyObject *rows = make_rows(ex);
    td_explain_free(ex);
    return rows;
}

PyDoc_STRVAR(Registry_explain_text_doc,
"explain_text($self, call, format='text')\n--\n\n"
"The explanation as `tiledispatch explain` prints it: format 'text' (the\n"
"table), 'json' (one object) or 'tvm' (upstream TVM's failure table).");

static PyObject *Registry_explain_text(PyObject *self, PyObject *args,
                                       PyObject *kw)
{
    static char *kwlist[] = {"call", "format", NULL};
    PyObject *arg;
    const char *format = "text";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:explain_text", kwlist,
                                     &arg, &format))
        return NULL;
    td_explain_style style;
    if (strcmp(format, "text") == 0)
        style = TD_EXPLAIN_TEXT;
    else if (strcmp(format, "json") == 0)
        style = TD_EXPLAIN_JSON;
    else if (strcmp(format, "tvm") == 0)
        style = TD_EXPLAIN_TVM;
    else {
        PyErr_Format(PyExc_ValueError,
                     "format '%s': expected 'text', 'json' or 'tvm'", format);
        return NULL;
    }
    CallObject *call = as_call(arg);
    if (call == NULL)
        return NULL;
    td_explain *ex = run_explain((RegistryObject *)self, call);
    if (ex == NULL)
        return NULL;
    PyObject *text = format_explain(ex, style);
    td_explain_free(ex);
    return text;
}

PyDoc_STRVAR(Registry_rules_doc,
"rules($self, /)\n--\n\n"
"The loaded dispatch table in try order (what `tiledispatch rules`\n"
"lists), as a list of Rule (op, target, name, impl, priority, enabled,\n"
"predicates, file, line); predicates is a tuple of (name, args_text).");

static PyObject *Registry_rules(PyObject *self, PyObject *unused)
{
    (void)unused;
    const td_registry *reg = ((RegistryObject *)self)->reg;
    size_t n = td_registry_rules(reg, NULL, 0);
    td_rule_info *infos = PyMem_Calloc(n ? n : 1, sizeof *infos);
    if (infos == NULL)
        return PyErr_NoMemory();
    td_registry_rules(reg, infos, n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list != NULL && i < n; i++) {
        const td_rule_info *r = &infos[i];
        PyObject *preds = PyTuple_New((Py_ssize_t)r->npreds);
        for (size_t k = 0; preds != NULL && k < r->npreds; k++) {
            const char *name = NULL;
            char args_text[1024] = "";
            td_registry_rule_pred(reg, r, k, &name, args_text,
                                  sizeof args_text);
            PyObject *p = Py_BuildValue("(ss)", name ? name : "?", args_text);
            if (p == NULL) {
                Py_CLEAR(preds);
                break;
            }
            PyTuple_SetItem(preds, (Py_ssize_t)k, p);
        }
        PyObject *rule = preds ? PyStructSequence_New(Rule_Type) : NULL;
        if (rule == NULL) {
            Py_XDECREF(preds);
            Py_CLEAR(list);
            break;
        }
        PyObject *vals[9] = {
            PyUnicode_FromString(r->op),       PyUnicode_FromString(r->target),
            PyUnicode_FromString(r->name),     str_or_none(r->impl),
            PyLong_FromLong(r->priority),      PyBool_FromLong(r->enabled),
            preds,                             str_or_none(r->file),
            PyLong_FromLong(r->line)};
        int bad = 0;
        for (int k = 0; k < 9; k++) {
            if (vals[k] == NULL)
                bad = 1;
            else
                PyStructSequence_SetItem(rule, k, vals[k]);
        }
        PyList_SetItem(list, (Py_ssize_t)i, rule);
        if (bad)
            Py_CLEAR(list);
    }
    PyMem_Free(infos);
    return list;
}

static PyObject *Registry_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<tiledispatch.Registry with %zd rules>",
                                ((RegistryObject *)self)->nrules);
}

static PyMethodDef Registry_methods[] = {
    {"dispatch", Registry_dispatch, METH_O, Registry_dispatch_doc},
    {"select", Registry_select, METH_O, Registry_select_doc},
    {"explain", Registry_explain, METH_O, Registry_explain_doc},
    {"explain_text", (PyCFunction)(void (*)(void))Registry_explain_text,
     METH_VARARGS | METH_KEYWORDS, Registry_explain_text_doc},
    {"rules", Registry_rules, METH_NOARGS, Registry_rules_doc},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(Registry_doc,
"Registry(rules=None, plugins=None, *, default_rules=True)\n--\n\n"
"The dispatch table: the built-in variant modules, the variant-module\n"
"plugins given (paths of shared objects, loaded in order), and the rules.\n\n"
"rules: paths of rules files (see docs/contract.md), loaded in order, as\n"
"layers over the built-in rules (rules/rules.yaml, compiled into the\n"
"library), like the command line's --rules (an entry with\n"
"`override: true` changes a loaded one); with default_rules=False (the\n"
"command line's --no-default-rules) the files alone make the table.\n\n"
"A Registry is immutable once built: dispatch() and explain() may run\n"
"from any number of threads at once.  Raises InputError (with .path,\n"
".line, .column) for a bad rules file or plugin.");

static PyType_Slot Registry_slots[] = {
    {Py_tp_new, Registry_new},
    {Py_tp_dealloc, Registry_dealloc},
    {Py_tp_repr, Registry_repr},
    {Py_tp_methods, Registry_methods},
    {Py_tp_doc, (void *)Registry_doc},
    {0, NULL}};

static PyType_Spec Registry_spec = {"tiledispatch.Registry",
                                    sizeof(RegistryObject), 0,
                                    Py_TPFLAGS_DEFAULT, Registry_slots};

/* ---- struct sequences ------------------------------------------------- */

static PyStructSequence_Field ExplainRow_fields[] = {
    {"variant", "the variant name"},
    {"priority", "its priority"},
    {"status", "selected, rejected, declined, failed, not_tried or disabled"},
    {"reasons", "tuple of str: the lines of the table's reasons column"},
    {"predicates", "tuple of PredicateOutcome, in `when:` order"},
    {"message", "the library's one-line message for the row"},
    {NULL, NULL}};

static PyStructSequence_Desc ExplainRow_desc = {
    "tiledispatch.ExplainRow",
    "One candidate of an explanation: (variant, priority, status, reasons),\n"
    "plus .predicates and .message.",
    ExplainRow_fields, 4};

static PyStructSequence_Field PredOutcome_fields[] = {
    {"name", "the predicate name"},
    {"ok", "whether it passed"},
    {"reason", "why it failed ('' when it passed)"},
    {NULL, NULL}};

static PyStructSequence_Desc PredOutcome_desc = {
    "tiledispatch.PredicateOutcome", "One predicate of an ExplainRow.",
    PredOutcome_fields, 3};

static PyStructSequence_Field Rule_fields[] = {
    {"op", NULL},       {"target", NULL},
    {"name", "the variant name"},
    {"impl", "the variant module it binds"},
    {"priority", NULL}, {"enabled", NULL},
    {"predicates", "tuple of (name, args_text) in `when:` order"},
    {"file", "where the entry was declared"},
    {"line", NULL},     {NULL, NULL}};

static PyStructSequence_Desc Rule_desc = {
    "tiledispatch.Rule", "One entry of the loaded dispatch table.", Rule_fields,
    9};

/* ---- the module ------------------------------------------------------- */

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

PyDoc_STRVAR(bench_c_dispatch_doc,
"_bench_c_dispatch(registry, call, n, /)\n--\n\n"
"For bench/bench_python.py: runs n dispatches of call in a C loop (what\n"
"bench/bench_dispatch times: clear the diagnostic, td_dispatch, free the\n"
"IR) with the GIL released and returns (wall, cpu) nanoseconds per\n"
"dispatch, cpu being this thread's CPU time.");

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static PyObject *mod_bench_c_dispatch(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *reg, *call;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "O!O!n:_bench_c_dispatch", Registry_Type, &reg,
                          Call_Type, &call, &n))
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
        return raise_td(err, NULL, NULL);
    return Py_BuildValue("(dd)", (w1 - w0) / (double)n, (c1 - c0) / (double)n);
}

static PyMethodDef module_methods[] = {
    {"default_rules", mod_default_rules, METH_NOARGS, default_rules_doc},
    {"_bench_c_dispatch", mod_bench_c_dispatch, METH_VARARGS,
     bench_c_dispatch_doc},
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
    Error_Type = PyErr_NewExceptionWithDoc(
        "tiledispatch.Error", "Base class of tiledispatch's errors.", NULL,
        NULL);
    if (Error_Type == NULL)
        goto fail;
    PyObject *bases = PyTuple_Pack(2, Error_Type, PyExc_ValueError);
    if (bases == NULL)
        goto fail;
    InputError_Type = PyErr_NewExceptionWithDoc(
        "tiledispatch.InputError",
        "A call or rules file (or text, or plugin) the library refused.\n\n"
        "str() is the command line's message: FILE:LINE:COL: error: MESSAGE,\n"
        "the source line and a caret.  Attributes: path, line, column (None\n"
        "when unknown), message, source_line, code ('TD_EPARSE', ...).",
        bases, NULL);
    Py_DECREF(bases);
    DispatchError_Type = PyErr_NewExceptionWithDoc(
        "tiledispatch.DispatchError",
        "No variant matched the call.\n\n"
        "str() is the table `tiledispatch dispatch` prints; .rows is the same\n"
        "table as a list of ExplainRow, .text the full text, .reason why no\n"
        "candidate could be tried (None when candidates were tried), .call\n"
        "the Call.",
        Error_Type, NULL);
    if (InputError_Type == NULL || DispatchError_Type == NULL)
        goto fail;
    Registry_Type = (PyTypeObject *)PyType_FromSpec(&Registry_spec);
    Call_Type = (PyTypeObject *)PyType_FromSpec(&Call_spec);
    Dispatch_Type = (PyTypeObject *)PyType_FromSpec(&Dispatch_spec);
    ExplainRow_Type = PyStructSequence_NewType(&ExplainRow_desc);
    PredOutcome_Type = PyStructSequence_NewType(&PredOutcome_desc);
    Rule_Type = PyStructSequence_NewType(&Rule_desc);
    if (Registry_Type == NULL || Call_Type == NULL || Dispatch_Type == NULL ||
        ExplainRow_Type == NULL || PredOutcome_Type == NULL || Rule_Type == NULL)
        goto fail;
    dispatch_alloc = (allocfunc)PyType_GetSlot(Dispatch_Type, Py_tp_alloc);
    if (add_type(m, "Error", Error_Type) < 0 ||
        add_type(m, "InputError", InputError_Type) < 0 ||
        add_type(m, "DispatchError", DispatchError_Type) < 0 ||
        add_type(m, "Registry", (PyObject *)Registry_Type) < 0 ||
        add_type(m, "Call", (PyObject *)Call_Type) < 0 ||
        add_type(m, "Dispatch", (PyObject *)Dispatch_Type) < 0 ||
        add_type(m, "ExplainRow", (PyObject *)ExplainRow_Type) < 0 ||
        add_type(m, "PredicateOutcome", (PyObject *)PredOutcome_Type) < 0 ||
        add_type(m, "Rule", (PyObject *)Rule_Type) < 0)
        goto fail;
    if (PyModule_AddStringConstant(m, "__version__", TD_VERSION_STRING) < 0 ||
        PyModule_AddStringConstant(m, "library_version", TD_VERSION_STRING) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
