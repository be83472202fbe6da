/*
 * module.c - the _smelt extension module: loading graphs (ONNX, text IR,
 * script), the types, and the hooks the Python layer sets.
 */
#define SMX_IMPORT_ARRAY
#include <string.h>

#include "ext.h"

extern PyObject *smx_model_class, *smx_plan_class;
void smx_plan_init_main_thread(void);

/* Infers the graph's types and binds `dims` ("batch=1"), as loading
 * for the CLI does. Takes g; returns a Model or NULL. */
static PyObject *finish(smelt_ctx_t *ctx, smelt_status st, smelt_graph_t *g,
                        const char *dims)
{
    if (st == SMELT_OK && dims && *dims)
        st = smelt_graph_bind_dims(ctx, g, dims);
    else if (st == SMELT_OK)
        st = smelt_graph_infer(ctx, g);
    if (st != SMELT_OK) {
        smelt_graph_free(g);
        return smx_raise(ctx, st);
    }
    return smx_model_new(g);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* load_file(path, kind=None, fn=None, dims=None): kind "onnx", "ir" or
 * "script"; None: by the file's suffix (.onnx, .py, else IR). */
static PyObject *load_file(PyObject *mod, PyObject *args, PyObject *kwargs)
{
    (void)mod;
    static char *kw[] = {"path", "kind", "fn", "dims", NULL};
    PyObject *path;
    const char *kind = NULL, *fn = NULL, *dims = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|zzz", kw,
                                     PyUnicode_FSConverter, &path, &kind, &fn,
                                     &dims))
        return NULL;
    const char *p = PyBytes_AS_STRING(path);
    if (!kind)
        kind = ends_with(p, ".onnx") ? "onnx"
               : ends_with(p, ".py") ? "script"
                                     : "ir";
    smelt_ctx_t *ctx = smx_ctx();
    PyObject *r = NULL;
    if (ctx) {
        smelt_graph_t *g = NULL;
        smelt_status st;
        if (strcmp(kind, "onnx") == 0) {
            Py_BEGIN_ALLOW_THREADS;
            st = smelt_onnx_load(ctx, p, &g);
            Py_END_ALLOW_THREADS;
        } else if (strcmp(kind, "script") == 0) {
            st = smelt_script_load(ctx, p, fn, &g);
        } else if (strcmp(kind, "ir") == 0) {
            st = smelt_graph_load(ctx, p, &g);
        } else {
            PyErr_Format(PyExc_ValueError,
                         "kind: 'onnx', 'ir' or 'script', not '%s'", kind);
            goto done;
        }
        r = finish(ctx, st, g, dims);
    }
done:
    smelt_ctx_free(ctx);
    Py_DECREF(path);
    return r;
}

/* load_bytes(data, kind, name="<bytes>", fn=None, dims=None): the same
 * from memory; kind "onnx", "ir" or "script"; name is the file name
 * diagnostics print. */
static PyObject *load_bytes(PyObject *mod, PyObject *args, PyObject *kwargs)
{
    (void)mod;
    static char *kw[] = {"data", "kind", "name", "fn", "dims", NULL};
    Py_buffer buf;
    const char *kind, *name = "<bytes>", *fn = NULL, *dims = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s*s|zzz", kw, &buf, &kind,
                                     &name, &fn, &dims))
        return NULL;
    smelt_ctx_t *ctx = smx_ctx();
    PyObject *r = NULL;
    if (ctx) {
        smelt_graph_t *g = NULL;
        smelt_status st;
        if (strcmp(kind, "onnx") == 0) {
            Py_BEGIN_ALLOW_THREADS;
            st =
                smelt_onnx_load_buffer(ctx, buf.buf, (size_t)buf.len, NULL, &g);
            Py_END_ALLOW_THREADS;
        } else if (strcmp(kind, "script") == 0) {
            st = smelt_script_compile(ctx, buf.buf, (size_t)buf.len, name, fn,
                                      &g);
        } else if (strcmp(kind, "ir") == 0) {
            st = smelt_graph_parse(ctx, buf.buf, (size_t)buf.len, name, &g);
        } else {
            PyErr_Format(PyExc_ValueError,
                         "kind: 'onnx', 'ir' or 'script', not '%s'", kind);
            goto done;
        }
        r = finish(ctx, st, g, dims);
    }
done:
    smelt_ctx_free(ctx);
    PyBuffer_Release(&buf);
    return r;
}

/* The registered passes: (name, level, summary). */
static PyObject *passes(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    int n = smelt_pass_count();
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *t = Py_BuildValue("(sis)", smelt_pass_name(i),
                                    smelt_pass_level(i), smelt_pass_summary(i));
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return list;
}

/* The Python layer's subclasses of Model and Plan, which C then makes. */
static PyObject *set_classes(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *m, *p;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &m, &PyType_Type, &p))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)m, &smx_model_type) ||
        !PyType_IsSubtype((PyTypeObject *)p, &smx_plan_type)) {
        PyErr_SetString(PyExc_TypeError, "subclasses of Model and Plan");
        return NULL;
    }
    Py_INCREF(m);
    Py_INCREF(p);
    smx_model_class = m;
    smx_plan_class = p;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"load_file", (PyCFunction)(void (*)(void))load_file,
     METH_VARARGS | METH_KEYWORDS,
     "load_file(path, kind=None, fn=None, dims=None)"},
    {"load_bytes", (PyCFunction)(void (*)(void))load_bytes,
     METH_VARARGS | METH_KEYWORDS,
     "load_bytes(data, kind, name='<bytes>', fn=None, dims=None)"},
    {"passes", passes, METH_NOARGS, "the optimizer's passes"},
    {"_set_classes", set_classes, METH_VARARGS, "the Python subclasses"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_smelt",
    "Smelt's C API for Python (use the smelt package).",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__smelt(void);
PyMODINIT_FUNC PyInit__smelt(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    smx_plan_init_main_thread();
    if (smx_errors_init(m) < 0 || PyType_Ready(&smx_model_type) < 0 ||
        PyType_Ready(&smx_plan_type) < 0 || PyType_Ready(&smx_session_type) < 0)
        goto fail;
    PyTypeObject *types[] = {&smx_model_type, &smx_plan_type,
                             &smx_session_type};
    const char *names[] = {"Model", "Plan", "Session"};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            goto fail;
        }
    }
    if (PyModule_AddStringConstant(m, "__version__", "0.1.0") < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
