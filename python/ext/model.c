/*
 * model.c - smelt.Model: a graph that runs (compiled for the shapes of
 * its last call), optimizes, compiles to a Plan, prints and saves.
 */
#include <stdio.h>
#include <string.h>

#include "ext.h"

PyObject *smx_model_class = (PyObject *)&smx_model_type;
int smx_pop_cast(PyObject **kwargs, int *cast);

PyObject *smx_model_new(smelt_graph_t *g)
{
    PyTypeObject *tp = (PyTypeObject *)smx_model_class;
    smx_model *self = (smx_model *)tp->tp_alloc(tp, 0);
    if (!self) {
        smelt_graph_free(g);
        return NULL;
    }
    self->g = g;
    return (PyObject *)self;
}

int smx_model_check_unused(const smx_model *m, const char *what)
{
    if (!m->readers)
        return 0;
    PyErr_Format(PyExc_RuntimeError,
                 "%s: another thread is compiling or running this model's "
                 "graph; wait for it, or work on m.clone()",
                 what);
    return -1;
}

static void model_dealloc(smx_model *self)
{
    smelt_graph_free(self->g);
    Py_XDECREF(self->plan);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The names of the graph's inputs as a tuple. */
static PyObject *input_names(const smelt_graph_t *g)
{
    int n = smelt_graph_num_inputs(g);
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *s = PyUnicode_FromString(smelt_graph_input_name(g, i));
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

/* A TypeError when input i's array contradicts a declared size. */
static int check_declared(const smelt_graph_t *g, int i, PyArrayObject *a)
{
    int nd = smelt_graph_input_ndim(g, i);
    int ok = nd < 0 || nd == PyArray_NDIM(a);
    for (int k = 0; ok && k < nd; k++) {
        int64_t d = smelt_graph_input_dim(g, i, k);
        ok = d < 0 || d == (int64_t)PyArray_DIM(a, k);
    }
    if (ok)
        return 0;
    char want[256], have[256];
    int n = snprintf(want, sizeof want, "%s[",
                     smelt_dtype_name(smelt_graph_input_dtype(g, i)));
    for (int k = 0; k < nd && (size_t)n < sizeof want; k++) {
        int64_t d = smelt_graph_input_dim(g, i, k);
        const char *sym = smelt_graph_input_dim_name(g, i, k);
        if (d >= 0)
            n += snprintf(want + n, sizeof want - (size_t)n,
                          k ? ",%lld" : "%lld", (long long)d);
        else
            n += snprintf(want + n, sizeof want - (size_t)n, k ? ",%s" : "%s",
                          sym ? sym : "?");
    }
    if ((size_t)n < sizeof want)
        snprintf(want + n, sizeof want - (size_t)n, "]");
    smx_array_str(a, have, sizeof have);
    PyErr_Format(PyExc_TypeError, "input '%s': expected shape %s, given %s",
                 smelt_graph_input_name(g, i), want, have);
    return -1;
}

/* Whether plan p was compiled for exactly these arrays' dtypes and
 * shapes. */
static int plan_fits(const smelt_plan_t *p, PyArrayObject **arrs, int n)
{
    if (smelt_plan_num_inputs(p) != n)
        return 0;
    for (int i = 0; i < n; i++) {
        if (smelt_plan_input_dtype(p, i) !=
                smx_npy_to_dtype(PyArray_TYPE(arrs[i])) ||
            smelt_plan_input_ndim(p, i) != PyArray_NDIM(arrs[i]))
            return 0;
        for (int k = 0; k < PyArray_NDIM(arrs[i]); k++)
            if (smelt_plan_input_dim(p, i, k) !=
                (int64_t)PyArray_DIM(arrs[i], k))
                return 0;
    }
    return 1;
}

/* The cached plan for these inputs, compiled anew (-O3, one thread) when
 * their shapes differ from the last call's. New reference. */
static PyObject *plan_for(smx_model *self, PyArrayObject **arrs, int n)
{
    if (self->plan && plan_fits(((smx_plan *)self->plan)->p, arrs, n))
        return Py_NewRef(self->plan);
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx)
        return NULL;
    smelt_tensor_t **in = PyMem_Calloc((size_t)n + 1, sizeof *in);
    PyObject *r = NULL;
    if (!in) {
        PyErr_NoMemory();
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (!(in[i] = smx_wrap(ctx, arrs[i])))
            goto done;
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.inputs = in;
    o.n_inputs = n;
    smelt_plan_t *p = NULL;
    smelt_status st;
    self->readers++;
    Py_BEGIN_ALLOW_THREADS;
    st = smelt_plan_compile(ctx, self->g, &o, &p);
    Py_END_ALLOW_THREADS;
    self->readers--;
    if (st != SMELT_OK) {
        smx_raise(ctx, st);
        goto done;
    }
    r = smx_plan_new(p, self->g);
    if (r) {
        Py_XSETREF(self->plan, Py_NewRef(r));
    }
done:
    for (int i = 0; in && i < n; i++)
        smelt_tensor_free(in[i]);
    PyMem_Free(in);
    smelt_ctx_free(ctx);
    return r;
}

/* A call: inputs by position and name, checked against the declared
 * dtypes and sizes, run on the plan for their shapes. */
static PyObject *model_exec(smx_model *self, PyObject *args, PyObject *named,
                            int cast, int as_dict)
{
    int n = smelt_graph_num_inputs(self->g);
    PyObject *names = input_names(self->g);
    PyArrayObject **arrs = PyMem_Calloc((size_t)n + 1, sizeof *arrs);
    smelt_dtype *want = PyMem_Calloc((size_t)n + 1, sizeof *want);
    PyObject *r = NULL, *plan = NULL;
    if (!names || !arrs || !want) {
        if (names)
            PyErr_NoMemory();
        goto done;
    }
    for (int i = 0; i < n; i++)
        want[i] = smelt_graph_input_dtype(self->g, i);
    if (smx_collect(args, named, names, want, cast, arrs) < 0)
        goto done;
    for (int i = 0; i < n; i++)
        if (check_declared(self->g, i, arrs[i]) < 0)
            goto done;
    plan = plan_for(self, arrs, n);
    if (plan)
        r = smx_plan_exec((smx_plan *)plan, NULL, arrs, as_dict);
done:
    for (int i = 0; arrs && i < n; i++)
        Py_XDECREF(arrs[i]);
    PyMem_Free(arrs);
    PyMem_Free(want);
    Py_XDECREF(names);
    Py_XDECREF(plan);
    return r;
}

static PyObject *model_call(smx_model *self, PyObject *args, PyObject *kwargs)
{
    int cast;
    if (smx_pop_cast(&kwargs, &cast) < 0)
        return NULL;
    PyObject *r = model_exec(self, args, kwargs, cast, 0);
    Py_XDECREF(kwargs);
    return r;
}

static PyObject *model_run(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"feed", "cast", NULL};
    PyObject *feed;
    int cast = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|p", kw, &PyDict_Type,
                                     &feed, &cast))
        return NULL;
    return model_exec(self, NULL, feed, cast, 1);
}

/* The reference interpreter on these inputs (what `smelt check` compares
 * with); a tuple of arrays. */
static PyObject *model_run_reference(smx_model *self, PyObject *args,
                                     PyObject *kwargs)
{
    int cast;
    if (smx_pop_cast(&kwargs, &cast) < 0)
        return NULL;
    int n = smelt_graph_num_inputs(self->g);
    int n_out = smelt_graph_num_outputs(self->g);
    PyObject *names = input_names(self->g);
    PyArrayObject **arrs = PyMem_Calloc((size_t)n + 1, sizeof *arrs);
    smelt_dtype *want = PyMem_Calloc((size_t)n + 1, sizeof *want);
    smelt_tensor_t **in = PyMem_Calloc((size_t)n + 1, sizeof *in);
    smelt_tensor_t **out = PyMem_Calloc((size_t)n_out + 1, sizeof *out);
    smelt_ctx_t *ctx = smx_ctx();
    PyObject *r = NULL;
    if (!names || !arrs || !want || !in || !out || !ctx) {
        if (names && ctx)
            PyErr_NoMemory();
        goto done;
    }
    for (int i = 0; i < n; i++)
        want[i] = smelt_graph_input_dtype(self->g, i);
    if (smx_collect(args, kwargs, names, want, cast, arrs) < 0)
        goto done;
    for (int i = 0; i < n; i++)
        if (!(in[i] = smx_wrap(ctx, arrs[i])))
            goto done;
    smelt_status st;
    smx_poll ps;
    smx_poll_begin(ctx, &ps);
    self->readers++;
    Py_BEGIN_ALLOW_THREADS;
    st = smelt_graph_run_reference(ctx, self->g, in, n, out, n_out);
    Py_END_ALLOW_THREADS;
    self->readers--;
    if (smx_poll_end(ctx, &ps, st) < 0)
        goto done;
    if (st != SMELT_OK) {
        smx_raise(ctx, st);
        goto done;
    }
    r = PyTuple_New(n_out);
    for (int i = 0; r && i < n_out; i++) {
        PyObject *a = smx_from_tensor(out[i]);
        out[i] = NULL;
        if (!a) {
            Py_CLEAR(r);
            break;
        }
        PyTuple_SET_ITEM(r, i, a);
    }
done:
    for (int i = 0; in && i < n; i++)
        smelt_tensor_free(in[i]);
    for (int i = 0; out && i < n_out; i++)
        smelt_tensor_free(out[i]);
    for (int i = 0; arrs && i < n; i++)
        Py_XDECREF(arrs[i]);
    PyMem_Free(arrs);
    PyMem_Free(want);
    PyMem_Free(in);
    PyMem_Free(out);
    Py_XDECREF(names);
    Py_XDECREF(kwargs);
    smelt_ctx_free(ctx);
    return r;
}

/* dims given as {"batch": 1} or "batch=1" into a string (owned by *keep). */
int smx_dims_string(PyObject *dims, PyObject **keep, const char **out)
{
    *out = NULL;
    *keep = NULL;
    if (!dims || dims == Py_None)
        return 0;
    if (PyUnicode_Check(dims)) {
        *keep = Py_NewRef(dims);
    } else if (PyDict_Check(dims)) {
        PyObject *parts = PyList_New(0);
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (parts && PyDict_Next(dims, &pos, &k, &v)) {
            PyObject *s = PyUnicode_FromFormat("%S=%S", k, v);
            if (!s || PyList_Append(parts, s) < 0) {
                Py_XDECREF(s);
                Py_CLEAR(parts);
                break;
            }
            Py_DECREF(s);
        }
        if (!parts)
            return -1;
        PyObject *sep = PyUnicode_FromString(",");
        *keep = sep ? PyUnicode_Join(sep, parts) : NULL;
        Py_XDECREF(sep);
        Py_DECREF(parts);
    } else {
        PyErr_SetString(PyExc_TypeError, "dims: a dict or 'name=size,...'");
        return -1;
    }
    if (!*keep)
        return -1;
    *out = PyUnicode_AsUTF8(*keep);
    return *out ? 0 : -1;
}

/* compile(threads=1, dims=None, level=3, disable=None, reference=False,
 * timeout_ms=0, isa=None, memory_budget=0) -> Plan */
static PyObject *model_compile(smx_model *self, PyObject *args,
                               PyObject *kwargs)
{
    static char *kw[] = {"threads",   "dims",       "level", "disable",
                         "reference", "timeout_ms", "isa",   "memory_budget",
                         "inputs",    NULL};
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    PyObject *dims = NULL, *keep = NULL, *inputs = Py_None, *seq = NULL;
    int threads = 1, level = 3, reference = 0;
    long long timeout = 0, budget = 0;
    const char *disable = NULL, *isa = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|iOizpLzLO", kw, &threads,
                                     &dims, &level, &disable, &reference,
                                     &timeout, &isa, &budget, &inputs))
        return NULL;
    if (smx_dims_string(dims, &keep, &o.dims) < 0)
        return NULL;
    /* example arrays: compile for their dtypes and shapes */
    smelt_tensor_t **in = NULL;
    PyArrayObject **arrs = NULL;
    Py_ssize_t n_in = 0;
    smelt_ctx_t *ctx = smx_ctx();
    PyObject *r = NULL;
    if (!ctx)
        goto done;
    if (inputs != Py_None) {
        seq = PySequence_Fast(inputs, "inputs: a sequence of arrays");
        if (!seq)
            goto done;
        n_in = PySequence_Fast_GET_SIZE(seq);
        in = PyMem_Calloc((size_t)n_in + 1, sizeof *in);
        arrs = PyMem_Calloc((size_t)n_in + 1, sizeof *arrs);
        if (!in || !arrs) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n_in; i++) {
            int gi = (int)i;
            smelt_dtype want = gi < smelt_graph_num_inputs(self->g)
                                   ? smelt_graph_input_dtype(self->g, gi)
                                   : SMELT_DTYPE_UNDEFINED;
            const char *name = gi < smelt_graph_num_inputs(self->g)
                                   ? smelt_graph_input_name(self->g, gi)
                                   : "?";
            arrs[i] =
                smx_as_input(PySequence_Fast_GET_ITEM(seq, i), name, want, 1);
            if (!arrs[i] || !(in[i] = smx_wrap(ctx, arrs[i])))
                goto done;
        }
        o.inputs = in;
        o.n_inputs = (int32_t)n_in;
    }
    o.threads = threads;
    o.level = level;
    o.disable = disable;
    o.reference = reference;
    o.timeout_ms = timeout;
    o.isa = isa;
    o.memory_budget = budget;
    smelt_plan_t *p = NULL;
    smelt_status st;
    self->readers++;
    Py_BEGIN_ALLOW_THREADS;
    st = smelt_plan_compile(ctx, self->g, &o, &p);
    Py_END_ALLOW_THREADS;
    self->readers--;
    r = st == SMELT_OK ? smx_plan_new(p, self->g) : smx_raise(ctx, st);
done:
    for (Py_ssize_t i = 0; i < n_in; i++) {
        if (in)
            smelt_tensor_free(in[i]);
        if (arrs)
            Py_XDECREF(arrs[i]);
    }
    PyMem_Free(in);
    PyMem_Free(arrs);
    Py_XDECREF(seq);
    smelt_ctx_free(ctx);
    Py_XDECREF(keep);
    return r;
}

/* optimize(level=3, disable=None, passes=None) -> the report as text;
 * rewrites the graph in place. */
static PyObject *model_optimize(smx_model *self, PyObject *args,
                                PyObject *kwargs)
{
    static char *kw[] = {"level", "disable", "passes", NULL};
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    int level = 3;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|izz", kw, &level,
                                     &o.disable, &o.passes))
        return NULL;
    o.level = level;
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx)
        return NULL;
    smelt_graph_t *copy = NULL;
    smelt_opt_report_t *rep = NULL;
    char *text = NULL;
    PyObject *r = NULL;
    /* on a copy: a failed pass leaves the graph only fit to be freed */
    smelt_status st = smelt_graph_clone(ctx, self->g, &copy);
    if (st == SMELT_OK) {
        Py_BEGIN_ALLOW_THREADS;
        st = smelt_graph_optimize(ctx, copy, &o, &rep);
        Py_END_ALLOW_THREADS;
    }
    if (st == SMELT_OK)
        st = smelt_opt_report_print(ctx, rep, 0, &text);
    if (st != SMELT_OK) {
        smx_raise(ctx, st);
    } else if (smx_model_check_unused(self, "optimize") == 0) {
        /* no thread reads the old graph now (checked with the GIL held) */
        r = PyUnicode_FromString(text);
        smelt_graph_free(self->g);
        self->g = copy;
        copy = NULL;
        Py_CLEAR(self->plan);
    }
    smelt_graph_free(copy);
    smelt_opt_report_free(rep);
    smelt_string_free(text);
    smelt_ctx_free(ctx);
    return r;
}

/* save(path, standard=False): ONNX for *.onnx, the text IR otherwise. */
static PyObject *model_save(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"path", "standard", NULL};
    PyObject *path;
    int standard = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|p", kw,
                                     PyUnicode_FSConverter, &path, &standard))
        return NULL;
    const char *p = PyBytes_AS_STRING(path);
    size_t len = strlen(p);
    smelt_ctx_t *ctx = smx_ctx();
    smelt_status st = SMELT_OK;
    if (!ctx) {
        Py_DECREF(path);
        return NULL;
    }
    if (len > 5 && strcmp(p + len - 5, ".onnx") == 0) {
        smelt_onnx_save_options o;
        smelt_onnx_save_options_default(&o);
        o.standard = standard;
        st = smelt_onnx_save_opt(ctx, self->g, &o, p);
    } else {
        char *text = NULL;
        st = smelt_graph_print(ctx, self->g, &text);
        if (st == SMELT_OK) {
            FILE *f = fopen(p, "w");
            if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                if (f)
                    fclose(f);
                PyErr_SetFromErrnoWithFilename(PyExc_OSError, p);
                smelt_string_free(text);
                smelt_ctx_free(ctx);
                Py_DECREF(path);
                return NULL;
            }
        }
        smelt_string_free(text);
    }
    PyObject *r = st == SMELT_OK ? Py_NewRef(Py_None) : smx_raise(ctx, st);
    smelt_ctx_free(ctx);
    Py_DECREF(path);
    return r;
}

/* text(max_values=None): the IR as text; with max_values, big constants
 * as one summary line. */
static PyObject *model_text(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"max_values", NULL};
    long long maxv = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|L", kw, &maxv))
        return NULL;
    smelt_ctx_t *ctx = smx_ctx();
    char *s = NULL;
    if (!ctx)
        return NULL;
    smelt_status st = maxv >= 0
                          ? smelt_graph_print_summary(ctx, self->g, maxv, &s)
                          : smelt_graph_print(ctx, self->g, &s);
    PyObject *r = st == SMELT_OK ? PyUnicode_FromString(s) : smx_raise(ctx, st);
    smelt_string_free(s);
    smelt_ctx_free(ctx);
    return r;
}

static PyObject *model_dot(smx_model *self, PyObject *unused)
{
    (void)unused;
    smelt_ctx_t *ctx = smx_ctx();
    char *s = NULL;
    if (!ctx)
        return NULL;
    smelt_status st = smelt_graph_dot(ctx, self->g, &s);
    PyObject *r = st == SMELT_OK ? PyUnicode_FromString(s) : smx_raise(ctx, st);
    smelt_string_free(s);
    smelt_ctx_free(ctx);
    return r;
}

static PyObject *model_clone(smx_model *self, PyObject *unused)
{
    (void)unused;
    smelt_ctx_t *ctx = smx_ctx();
    smelt_graph_t *g = NULL;
    if (!ctx)
        return NULL;
    smelt_status st = smelt_graph_clone(ctx, self->g, &g);
    PyObject *r = st == SMELT_OK ? smx_model_new(g) : smx_raise(ctx, st);
    smelt_ctx_free(ctx);
    return r;
}

/* (name, dtype, shape) per graph input or output; a dim is an int, its
 * symbolic name, or None. */
static PyObject *model_values(smx_model *self, int outputs)
{
    const smelt_graph_t *g = self->g;
    int n = outputs ? smelt_graph_num_outputs(g) : smelt_graph_num_inputs(g);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        int nd = outputs ? smelt_graph_output_ndim(g, i)
                         : smelt_graph_input_ndim(g, i);
        int64_t dims[SMELT_MAX_DIMS];
        const char *syms[SMELT_MAX_DIMS];
        if (nd > SMELT_MAX_DIMS)
            nd = -1;
        for (int a = 0; a < nd; a++) {
            dims[a] = outputs ? smelt_graph_output_dim(g, i, a)
                              : smelt_graph_input_dim(g, i, a);
            syms[a] = outputs ? smelt_graph_output_dim_name(g, i, a)
                              : smelt_graph_input_dim_name(g, i, a);
        }
        PyObject *item =
            smx_value_tuple(outputs ? smelt_graph_output_name(g, i)
                                    : smelt_graph_input_name(g, i),
                            outputs ? smelt_graph_output_dtype(g, i)
                                    : smelt_graph_input_dtype(g, i),
                            nd, dims, syms);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *model_inputs(smx_model *self, void *unused)
{
    (void)unused;
    return model_values(self, 0);
}

static PyObject *model_outputs(smx_model *self, void *unused)
{
    (void)unused;
    return model_values(self, 1);
}

static PyObject *model_name(smx_model *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(smelt_graph_name(self->g));
}

/* The op of every node, sub-blocks included, in order. */
static PyObject *model_ops(smx_model *self, void *unused)
{
    (void)unused;
    int n = smelt_graph_num_nodes(self->g);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *s = PyUnicode_FromString(smelt_graph_node_op(self->g, i));
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, s);
    }
    return list;
}

static PyMethodDef model_methods[] = {
    {"_add_loss", (PyCFunction)smx_add_loss, METH_VARARGS,
     "the model with a loss appended"},
    {"_add_optimizer", (PyCFunction)smx_add_optimizer, METH_VARARGS,
     "the training step of a joint graph"},
    {"_optim_roles", (PyCFunction)smx_optim_roles, METH_NOARGS,
     "the inputs and outputs of a training step"},
    {"_train", (PyCFunction)(void (*)(void))smx_train,
     METH_VARARGS | METH_KEYWORDS,
     "_train(inputs, target, **options) -> (Model, history)"},
    {"get_initializer", (PyCFunction)smx_get_initializer, METH_VARARGS,
     "get_initializer(name) -> a copy of its data"},
    {"set_initializer", (PyCFunction)(void (*)(void))smx_set_initializer,
     METH_VARARGS | METH_KEYWORDS, "set_initializer(name, array, cast=False)"},
    {"bind_dims", (PyCFunction)smx_bind_dims, METH_VARARGS,
     "bind_dims(dims) -> a copy with symbolic sizes bound"},
    {"run", (PyCFunction)(void (*)(void))model_run,
     METH_VARARGS | METH_KEYWORDS, "run(feed, cast=False) -> dict of outputs"},
    {"run_reference", (PyCFunction)(void (*)(void))model_run_reference,
     METH_VARARGS | METH_KEYWORDS, "outputs of the reference interpreter"},
    {"compile", (PyCFunction)(void (*)(void))model_compile,
     METH_VARARGS | METH_KEYWORDS,
     "compile(threads=1, dims=None, ...) -> Plan"},
    {"optimize", (PyCFunction)(void (*)(void))model_optimize,
     METH_VARARGS | METH_KEYWORDS,
     "optimize(level=3, disable=None, passes=None) -> report text"},
    {"save", (PyCFunction)(void (*)(void))model_save,
     METH_VARARGS | METH_KEYWORDS, "save(path, standard=False)"},
    {"text", (PyCFunction)(void (*)(void))model_text,
     METH_VARARGS | METH_KEYWORDS, "the IR as text"},
    {"dot", (PyCFunction)model_dot, METH_NOARGS, "the graph in DOT"},
    {"clone", (PyCFunction)model_clone, METH_NOARGS, "a deep copy"},
    {"_grad", (PyCFunction)(void (*)(void))smx_grad,
     METH_VARARGS | METH_KEYWORDS, "the joint forward+backward graph"},
    {"_quantize", (PyCFunction)(void (*)(void))smx_quantize,
     METH_VARARGS | METH_KEYWORDS, "a dynamically quantized copy"},
    {"_quantize_qat", (PyCFunction)(void (*)(void))smx_quantize_qat,
     METH_VARARGS | METH_KEYWORDS, "a copy with fake quantization"},
    {"_quantize_convert", (PyCFunction)smx_quantize_convert, METH_NOARGS,
     "the int8 form of a QAT model"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef model_getset[] = {
    {"inputs", (getter)model_inputs, NULL, "(name, dtype, shape) per input",
     NULL},
    {"outputs", (getter)model_outputs, NULL, "(name, dtype, shape) per output",
     NULL},
    {"name", (getter)model_name, NULL, "the graph's name", NULL},
    {"ops", (getter)model_ops, NULL, "the op of every node", NULL},
    {"initializers", (getter)smx_initializers, NULL,
     "(name, dtype) of each initializer", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject smx_model_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "smelt._smelt.Model",
    .tp_basicsize = sizeof(smx_model),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_call = (ternaryfunc)model_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A model: call it with arrays.",
    .tp_methods = model_methods,
    .tp_getset = model_getset,
};
