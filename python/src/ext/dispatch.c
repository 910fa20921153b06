/*
 * tiledispatch._core: the Dispatch type, the outcome of a successful
 * dispatch: the winner's name, module and priority and its IR, printed on
 * demand as CUDA or TIRx (td_ir_print only reads the IR, so one Dispatch
 * may be printed from several threads).
 */
/* Python.h (through ext.h) comes before any system header. */
#include "ext.h"

#include <string.h>

static void Dispatch_dealloc(PyObject *self)
{
    DispatchObject *d = (DispatchObject *)self;
    td_ir_free(d->ir);
    Py_CLEAR(d->registry);
    Py_CLEAR(d->call);
    tdpy_generic_dealloc(self);
}

static int parse_lang(const char *lang, td_lang *out)
{
    if (td_lang_parse(lang, out) != 0) {
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
        tdpy_release(b);
        tdpy_release(p);
        tdpy_raise_td(err, NULL, NULL);
        return -1;
    }
    *body = PyUnicode_DecodeUTF8(b, (Py_ssize_t)strlen(b), "replace");
    *prelude = p ? PyUnicode_DecodeUTF8(p, (Py_ssize_t)strlen(p), "replace")
                 : PyUnicode_FromString("");
    tdpy_release(b);
    tdpy_release(p);
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
    return tdpy_str_or_none(((DispatchObject *)s)->impl);
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

PyType_Spec tdpy_Dispatch_spec = {
    "tiledispatch.Dispatch", sizeof(DispatchObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Dispatch_slots};
