/*
 * tiledispatch._core: the Registry type (the built-in variant modules,
 * plugins and loaded rules, immutable once made, so any number of threads
 * may dispatch through one at once) and Rule, one entry of its table.
 * Dispatch, select and explain release the GIL while the library works;
 * the Registry and the Call they read stay alive through the references
 * the calling thread holds.
 */
/* Python.h (through ext.h) comes before any system header. */
#include "ext.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* Registry(rules=None, plugins=None, *, default_rules=True,
 * environment=True): the library's layered load (td_registry_load), so the
 * order and the environment variables are the command line's. */
static PyObject *Registry_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"rules", "plugins", "default_rules",
                             "environment", NULL};
    PyObject *rules = Py_None, *plugins = Py_None;
    int default_rules = 1, environment = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$pp:Registry", kwlist,
                                     &rules, &plugins, &default_rules,
                                     &environment))
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
    const char **paths =
        PyMem_Malloc(sizeof *paths * (size_t)(nrules + nplugins + 1));
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
    for (Py_ssize_t i = 0; i < nplugins; i++)
        paths[nrules + i] = PyBytes_AsString(PyList_GetItem(plugin_paths, i));
    /* Whether any plugin will load: the library reads the variable itself
     * below; here it only decides whether plugins need the symbols. */
    const char *env_plugins = environment ? getenv("TILEDISPATCH_PLUGINS")
                                          : NULL;
    bool any_plugin =
        nplugins > 0 || (env_plugins != NULL && env_plugins[0] != '\0');
    if (any_plugin && tdpy_export_library_symbols() < 0)
        goto out;
    td_load_options lo = {
        .plugins = paths + nrules,
        .nplugins = (size_t)nplugins,
        .rules = paths,
        .nrules = (size_t)nrules,
        .no_default_rules = !default_rules,
        .no_env_plugins = !environment,
        .no_env_rules = !environment,
    };
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_registry_load(&lo, &reg, &d);
    Py_END_ALLOW_THREADS
    if (err != 0) {
        tdpy_raise_td(err, &d, NULL);
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
    tdpy_generic_dealloc(self);
}

static CallObject *as_call(PyObject *o)
{
    if (!PyObject_TypeCheck(o, tdpy_Call_Type)) {
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

/* Dispatches `call` with the GIL released (keeping the IR only when
 * keep_ir): 0 and *res, or -1 with DispatchError / InputError raised. */
static int dispatch_call(RegistryObject *reg, CallObject *call, bool keep_ir,
                         td_dispatch_result *res)
{
    td_diag d;
    int err;
    Py_BEGIN_ALLOW_THREADS
    td_diag_clear(&d);
    err = td_dispatch(reg->reg, call->call, res, &d);
    if (err == 0 && !keep_ir) {
        td_ir_free(res->ir);
        res->ir = NULL;
    }
    Py_END_ALLOW_THREADS
    if (err == TD_ENOMATCH) {
        tdpy_raise_no_match(reg, call);
        return -1;
    }
    if (err != 0) {
        tdpy_raise_td(err, &d, call);
        return -1;
    }
    return 0;
}

static PyObject *Registry_dispatch(PyObject *self, PyObject *arg)
{
    CallObject *call = as_call(arg);
    if (call == NULL)
        return NULL;
    td_dispatch_result res;
    if (dispatch_call((RegistryObject *)self, call, true, &res) != 0)
        return NULL;
    DispatchObject *o = (DispatchObject *)tdpy_dispatch_alloc(tdpy_Dispatch_Type, 0);
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
    td_dispatch_result res;
    if (dispatch_call((RegistryObject *)self, call, false, &res) != 0)
        return NULL;
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
    td_explain *ex = tdpy_run_explain((RegistryObject *)self, call);
    if (ex == NULL)
        return NULL;
    PyObject *rows = tdpy_make_rows(ex);
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
    if (td_explain_style_parse(format, &style) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "format '%s': expected 'text', 'json' or 'tvm'", format);
        return NULL;
    }
    CallObject *call = as_call(arg);
    if (call == NULL)
        return NULL;
    td_explain *ex = tdpy_run_explain((RegistryObject *)self, call);
    if (ex == NULL)
        return NULL;
    PyObject *text = tdpy_format_explain(ex, style);
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
        PyObject *rule = preds ? PyStructSequence_New(tdpy_Rule_Type) : NULL;
        if (rule == NULL) {
            Py_XDECREF(preds);
            Py_CLEAR(list);
            break;
        }
        PyObject *vals[9] = {
            PyUnicode_FromString(r->op),       PyUnicode_FromString(r->target),
            PyUnicode_FromString(r->name),     tdpy_str_or_none(r->impl),
            PyLong_FromLong(r->priority),      PyBool_FromLong(r->enabled),
            preds,                             tdpy_str_or_none(r->file),
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

PyDoc_STRVAR(Registry_listing_doc,
"listing($self, what='rules', format='text')\n--\n\n"
"What `tiledispatch rules`, `predicates` or `impls` prints for this\n"
"registry (`what`): format 'text', or 'json' (their --json).");

static PyObject *Registry_listing(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"what", "format", NULL};
    const char *what = "rules", *format = "text";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|ss:listing", kwlist, &what,
                                     &format))
        return NULL;
    int (*list)(const td_registry *, td_list_style, char **);
    if (strcmp(what, "rules") == 0)
        list = td_registry_list_rules;
    else if (strcmp(what, "predicates") == 0)
        list = td_registry_list_predicates;
    else if (strcmp(what, "impls") == 0)
        list = td_registry_list_impls;
    else {
        PyErr_Format(PyExc_ValueError,
                     "what '%s': expected 'rules', 'predicates' or 'impls'",
                     what);
        return NULL;
    }
    td_list_style style;
    if (strcmp(format, "text") == 0)
        style = TD_LIST_TEXT;
    else if (strcmp(format, "json") == 0)
        style = TD_LIST_JSON;
    else {
        PyErr_Format(PyExc_ValueError, "format '%s': expected 'text' or 'json'",
                     format);
        return NULL;
    }
    char *text = NULL;
    int err = list(((RegistryObject *)self)->reg, style, &text);
    if (err != 0)
        return tdpy_raise_td(err, NULL, NULL);
    PyObject *r = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
                                       "replace");
    tdpy_release(text);
    return r;
}

PyDoc_STRVAR(Registry_has_op_doc,
"has_op($self, name, /)\n--\n\n"
"Whether the registry has the op `name` (a built-in op or one a plugin\n"
"registered), rules or not: the ops a call may name.");

static PyObject *Registry_has_op(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8AndSize(arg, NULL);
    if (name == NULL)
        return NULL;
    return PyBool_FromLong(
        td_registry_op(((RegistryObject *)self)->reg, name) != NULL);
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
    {"has_op", Registry_has_op, METH_O, Registry_has_op_doc},
    {"listing", (PyCFunction)(void (*)(void))Registry_listing,
     METH_VARARGS | METH_KEYWORDS, Registry_listing_doc},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(Registry_doc,
"Registry(rules=None, plugins=None, *, default_rules=True, environment=True)\n"
"--\n\n"
"The dispatch table: the built-in variant modules, the variant-module\n"
"plugins given (paths of shared objects, loaded in order), and the rules.\n\n"
"rules: paths of rules files (see docs/contract.md), loaded in order, as\n"
"layers over the built-in rules (rules/rules.yaml, compiled into the\n"
"library), like the command line's --rules (an entry with\n"
"`override: true` changes a loaded one); with default_rules=False (the\n"
"command line's --no-default-rules) the files alone make the table.\n\n"
"Like the command line, the plugins of TILEDISPATCH_PLUGINS load before\n"
"`plugins`, and the layers of TILEDISPATCH_RULES before `rules` (both\n"
"colon-separated); environment=False ignores both variables.\n\n"
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

PyType_Spec tdpy_Registry_spec = {"tiledispatch.Registry",
                                    sizeof(RegistryObject), 0,
                                    Py_TPFLAGS_DEFAULT, Registry_slots};

static PyStructSequence_Field Rule_fields[] = {
    {"op", NULL},       {"target", NULL},
    {"name", "the variant name"},
    {"impl", "the variant module it binds"},
    {"priority", NULL}, {"enabled", NULL},
    {"predicates", "tuple of (name, args_text) in `when:` order"},
    {"file", "where the entry was declared"},
    {"line", NULL},     {NULL, NULL}};

PyStructSequence_Desc tdpy_Rule_desc = {
    "tiledispatch.Rule", "One entry of the loaded dispatch table.", Rule_fields,
    9};
