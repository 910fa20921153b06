/*
 * tiledispatch._core: the Call type, one tile-primitive call (a td_call,
 * plain data, immutable).  Calls come from a file, from YAML text, or from
 * keywords written out as one YAML document, so that every way of making
 * one goes through the library's own loader; the properties give the
 * fields back in the forms a call file writes them.
 */
/* Python.h (through ext.h) comes before any system header. */
#include "ext.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
        return tdpy_raise_td(err, &d, NULL);
    return (PyObject *)call_wrap(type, call, text);
}

static const char *const call_keys[] = {
    "op",   "target", "arch", "scope", "launch",   "buffers", "dst",
    "src",  "srcs",   "extras", "axes", "accum", "config", "dispatch",
    "scalars", "a", "b", "c", "transpose_A", "transpose_B", "alpha", "beta",
    "active", "transA", "transB", "sfa", "sfb", NULL};

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

/* A growing ASCII text, for the encoder below. */
typedef struct {
    char *s;
    size_t n, cap;
} jbuf;

static int jput(jbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 512;
        while (b->n + n + 1 > cap)
            cap *= 2;
        char *s2 = PyMem_Realloc(b->s, cap);
        if (s2 == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->s = s2;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    return 0;
}

static int jputs(jbuf *b, const char *s) { return jput(b, s, strlen(s)); }

/* Appends str(o) of an object whose text is ASCII (an int's or a float's
 * repr, a quoted JSON string); steals o. */
static int jput_obj(jbuf *b, PyObject *o)
{
    if (o == NULL)
        return -1;
    Py_ssize_t n = 0;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    int rc = s == NULL ? -1 : jput(b, s, (size_t)n);
    Py_DECREF(o);
    return rc;
}

static int jindent(jbuf *b, int level)
{
    if (jput(b, "\n", 1) < 0)
        return -1;
    for (int i = 0; i < level; i++)
        if (jput(b, " ", 1) < 0)
            return -1;
    return 0;
}

/* json's float text: NaN, Infinity, -Infinity, else float.__repr__. */
static int jput_float(jbuf *b, PyObject *o)
{
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    if (isnan(v))
        return jputs(b, "NaN");
    if (isinf(v))
        return jputs(b, v > 0 ? "Infinity" : "-Infinity");
    /* float.__repr__ of a subclass too: repr of the plain float. */
    PyObject *plain = PyFloat_FromDouble(v);
    if (plain == NULL)
        return -1;
    PyObject *r = PyObject_Repr(plain);
    Py_DECREF(plain);
    return jput_obj(b, r);
}

/* int.__repr__ (an IntEnum writes its number, as json does). */
static int jput_int(jbuf *b, PyObject *o)
{
    PyObject *plain = PyNumber_Index(o); /* an exact int since 3.10 */
    if (plain == NULL)
        return -1;
    PyObject *r = PyObject_Repr(plain);
    Py_DECREF(plain);
    return jput_obj(b, r);
}

/* Writes `o` exactly as json.dumps(o, indent=1) does (ensure_ascii, the
 * keys in order), for the plain data a call file holds: str, int, bool,
 * float, None, list, tuple and dict (json's own TypeError / ValueError
 * otherwise).  In C because Python's json runs its pure-Python encoder
 * whenever an indent is asked for, which was most of the cost of a
 * keyword Call; the indented text is kept because a diagnostic quotes
 * the line of the field it is about. */
static int jencode(jbuf *b, PyObject *o, int level, PyObject *quote)
{
    if (PyUnicode_Check(o))
        return jput_obj(b, PyObject_CallFunctionObjArgs(quote, o, NULL));
    if (o == Py_None)
        return jputs(b, "null");
    if (o == Py_True)
        return jputs(b, "true");
    if (o == Py_False)
        return jputs(b, "false");
    if (PyLong_Check(o))
        return jput_int(b, o);
    if (PyFloat_Check(o))
        return jput_float(b, o);
    if (level > 100) {
        PyErr_SetString(PyExc_ValueError, "Circular reference detected");
        return -1;
    }
    if (PyList_Check(o) || PyTuple_Check(o)) {
        int list = PyList_Check(o);
        Py_ssize_t n = list ? PyList_Size(o) : PyTuple_Size(o);
        int rc = n < 0 ? -1 : jputs(b, "[");
        for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
            if (i > 0)
                rc = jputs(b, ",");
            if (rc == 0)
                rc = jindent(b, level + 1);
            if (rc == 0)
                rc = jencode(b, list ? PyList_GetItem(o, i) : PyTuple_GetItem(o, i),
                             level + 1, quote);
        }
        if (rc == 0 && n > 0)
            rc = jindent(b, level);
        if (rc == 0)
            rc = jputs(b, "]");
        return rc;
    }
    if (PyDict_Check(o)) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        int first = 1;
        if (jputs(b, "{") < 0)
            return -1;
        while (PyDict_Next(o, &pos, &key, &value)) {
            if ((!first && jputs(b, ",") < 0) || jindent(b, level + 1) < 0)
                return -1;
            first = 0;
            int rc;
            if (PyUnicode_Check(key))
                rc = jput_obj(b, PyObject_CallFunctionObjArgs(quote, key, NULL));
            else {
                /* json writes a non-string key as the string of its
                 * JSON text. */
                jbuf k = {0};
                if (PyFloat_Check(key))
                    rc = jput_float(&k, key);
                else if (key == Py_True || key == Py_False || key == Py_None)
                    rc = jputs(&k, key == Py_True    ? "true"
                                   : key == Py_False ? "false"
                                                     : "null");
                else if (PyLong_Check(key))
                    rc = jput_int(&k, key);
                else {
                    PyObject *name = PyObject_GetAttrString(
                        (PyObject *)Py_TYPE(key), "__name__");
                    if (name != NULL)
                        PyErr_Format(PyExc_TypeError,
                                     "keys must be str, int, float, bool or "
                                     "None, not %S",
                                     name);
                    Py_XDECREF(name);
                    rc = -1;
                }
                if (rc == 0)
                    rc = jput(b, "\"", 1) < 0 || jput(b, k.s, k.n) < 0 ||
                                 jput(b, "\"", 1) < 0
                             ? -1
                             : 0;
                PyMem_Free(k.s);
            }
            if (rc < 0 || jputs(b, ": ") < 0 ||
                jencode(b, value, level + 1, quote) < 0)
                return -1;
        }
        if (!first && jindent(b, level) < 0)
            return -1;
        return jputs(b, "}");
    }
    PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
    if (name != NULL)
        PyErr_Format(PyExc_TypeError, "Object of type %S is not JSON serializable",
                     name);
    Py_XDECREF(name);
    return -1;
}

/* The call document `doc` (a dict) as YAML text: json.dumps(doc,
 * indent=1), non-finite floats as YAML writes them.  Returns a new
 * reference, or NULL with TypeError when a field is not plain data. */
static PyObject *call_document(PyObject *doc)
{
    static PyObject *quote; /* json's encode_basestring_ascii, in C */
    if (quote == NULL) {
        PyObject *json = PyImport_ImportModule("json.encoder");
        if (json == NULL)
            return NULL;
        quote = PyObject_GetAttrString(json, "encode_basestring_ascii");
        Py_DECREF(json);
        if (quote == NULL)
            return NULL;
    }
    jbuf b = {0};
    PyObject *text = NULL;
    if (jencode(&b, doc, 0, quote) == 0)
        text = PyUnicode_FromStringAndSize(b.s, (Py_ssize_t)b.n);
    PyMem_Free(b.s);
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
    return yaml;
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
    PyObject *yaml = call_document(doc);
    Py_DECREF(doc);
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
    tdpy_generic_dealloc(self);
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
        return tdpy_raise_td(err, &d, NULL);
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

/* A region as the library writes it ("A[0:4, 2:6]"); None when it names
 * no buffer. */
static PyObject *region_text(const td_call *call, const td_region *r)
{
    if (r->buffer < 0 || r->buffer >= call->nbuffers)
        Py_RETURN_NONE;
    td_operand o;
    memset(&o, 0, sizeof o);
    o.kind = TD_OPERAND_REGION;
    o.region = *r;
    char buf[TD_NAME_MAX + TD_MAX_RANK * 160 + 8];
    size_t n = td_operand_format(call, &o, buf, sizeof buf);
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    return PyUnicode_DecodeUTF8(buf, (Py_ssize_t)n, "replace");
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
    return tdpy_str_or_none(CALL(s)->arch);
}
static PyObject *Call_get_sm_version(PyObject *s, void *c)
{
    (void)c;
    return tdpy_int_or_none(CALL(s)->sm_version);
}
static PyObject *Call_get_scope(PyObject *s, void *c)
{
    (void)c;
    return PyUnicode_FromString(td_exec_scope_name(CALL(s)->scope));
}
static PyObject *Call_get_accum(PyObject *s, void *c)
{
    (void)c;
    /* gemm_async's accum written as an expression: its text. */
    if (CALL(s)->accum_expr.kind == TD_VALUE_EXPR)
        return PyUnicode_FromString(CALL(s)->accum_expr.s);
    return PyBool_FromLong(CALL(s)->accum);
}
static PyObject *Call_get_dispatch(PyObject *s, void *c)
{
    (void)c;
    return tdpy_str_or_none(CALL(s)->dispatch);
}
static PyObject *Call_get_file(PyObject *s, void *c)
{
    (void)c;
    return tdpy_str_or_none(CALL(s)->file);
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

/* {axis: [begin, end]} of `active:` (empty: every thread of the scope). */
static PyObject *Call_get_active(PyObject *s, void *c)
{
    (void)c;
    const td_call *call = CALL(s);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (int i = 0; i < call->nactive; i++) {
        const td_active_range *a = &call->active[i];
        PyObject *r = Py_BuildValue("[LL]", (long long)a->begin, (long long)a->end);
        if (r == NULL || PyDict_SetItemString(d, td_axis_name(a->axis), r) < 0) {
            Py_XDECREF(r);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(r);
    }
    return d;
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
    if (call->cluster[0] != 0) {
        /* The cluster shape, as the call file writes it. */
        PyObject *v = Py_BuildValue("[iii]", call->cluster[0],
                                    call->cluster[1], call->cluster[2]);
        if (v == NULL || PyDict_SetItemString(d, "cluster", v) < 0) {
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
        /* A tmem buffer's layout (its datapath) is kept as written. */
        PyObject *one =
            b->has_layout || b->layout_text[0] != '\0'
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
     "The launch extents: {'threadIdx.x': 128, ...} (str when symbolic), and\n"
     "'cluster': [x, y, z] for a cluster launch.",
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
    {"accum", Call_get_accum, NULL,
     "Whether the result accumulates into dst (gemm_async: the expression's\n"
     "text, 'k > 0', where accum is one).",
     NULL},
    {"config", Call_get_config, NULL, "The config entries.", NULL},
    {"active", Call_get_active, NULL,
     "The active thread set, {'laneid': [0, 16]} (empty: all of the scope).",
     NULL},
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
"     dispatch=None, scalars=None, a=None, b=None, c=None, transpose_A=None,\n"
"     transpose_B=None, alpha=None, beta=None, active=None, transA=None,\n"
"     transB=None, sfa=None, sfb=None)\n"
"--\n\n"
"One tile-primitive call, as a call file describes it (docs/contract.md).\n"
"A gemm names its operands a, b, c (with dst) and takes transpose_A,\n"
"transpose_B, alpha and beta (docs/gemm.md); a gemm_async names a and b\n"
"(and, block-scaled, both scale factors sfa and sfb, regions like a and\n"
"b) and takes transA, transB and accum (a bool or an expression of its\n"
"scalars, 'k > 0'); active={'laneid': [0, 16]}\n"
"says which threads the guards around the call leave active.\n\n"
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

PyType_Spec tdpy_Call_spec = {"tiledispatch.Call", sizeof(CallObject), 0,
                                Py_TPFLAGS_DEFAULT, Call_slots};
