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

/* A TMA copy's tensor maps as `tiledispatch emit` shows them ahead of
 * the body: TIRx's host statements as "# host: " lines, CUDA's kernel
 * parameters as "// kernel parameter: " lines; "" when the IR has none.
 * Returns a new reference, or NULL with an exception set. */
static PyObject *maps_comment(DispatchObject *self, td_lang lang)
{
    if (td_ir_tensor_map_count(self->ir) == 0)
        return PyUnicode_FromString("");
    char *maps = NULL;
    int err = td_ir_print_tensor_maps(self->ir, lang, &maps);
    if (err != 0) {
        tdpy_release(maps);
        tdpy_raise_td(err, NULL, NULL);
        return NULL;
    }
    bool cuda = lang == TD_LANG_CUDA;
    const char *tag = cuda ? "// kernel parameter: " : "# host: ";
    /* Each item gets its tag and a newline; a CUDA item loses its ", ". */
    size_t cap = strlen(maps) + 1, n = 0;
    for (const char *q = maps; *q != '\0'; q++)
        n += *q == '\n' || (cuda && *q == ',');
    cap += (n + 1) * (strlen(tag) + 1);
    char *buf = PyMem_Malloc(cap);
    if (buf == NULL) {
        tdpy_release(maps);
        return PyErr_NoMemory();
    }
    size_t len = 0;
    const char *p = maps;
    while (*p != '\0') {
        size_t k = strcspn(p, cuda ? ",\n" : "\n");
        len += (size_t)snprintf(buf + len, cap - len, "%s%.*s\n", tag,
                                (int)k, p);
        p += k;
        while (*p == '\n' || *p == ',' || (cuda && *p == ' '))
            p++;
    }
    tdpy_release(maps);
    PyObject *r = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    PyMem_Free(buf);
    return r;
}

PyDoc_STRVAR(Dispatch_emit_doc,
"emit($self, lang='cuda', *, indent=0, prelude=True)\n--\n\n"
"The lowered code of the call in `lang` ('cuda' or 'tirx').\n\n"
"With prelude=True the text is what `tiledispatch emit` prints: the CUDA\n"
"prelude (includes and helper functions, when the body needs any), a\n"
"blank line, a TMA copy's tensor maps as comment lines ('# host: ' in\n"
"TIRx, '// kernel parameter: ' in CUDA), then the body.  With\n"
"prelude=False, the body only.  `indent` is the body's starting\n"
"indentation level (2 spaces each).");

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
    if (!with_prelude) {
        Py_DECREF(prelude);
        return body;
    }
    PyObject *maps = maps_comment((DispatchObject *)self, lang);
    if (maps == NULL) {
        Py_DECREF(prelude);
        Py_DECREF(body);
        return NULL;
    }
    PyObject *r = PyUnicode_GetLength(prelude) == 0
                      ? PyUnicode_FromFormat("%U%U", maps, body)
                      : PyUnicode_FromFormat("%U\n%U%U", prelude, maps, body);
    Py_DECREF(prelude);
    Py_DECREF(maps);
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
