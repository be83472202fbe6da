/*
 * plan.c - smelt.Plan (a compiled plan) and smelt.Session (one thread's
 * run context), and the run path every call takes: convert the inputs,
 * release the GIL, run, hand the outputs to numpy without a copy.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ext.h"

PyObject *smx_plan_class = (PyObject *)&smx_plan_type;

/* ---- collecting inputs ------------------------------------------------- */

int smx_collect(PyObject *args, PyObject *named, PyObject *in_names,
                const smelt_dtype *want, int cast, PyArrayObject **arrs)
{
    Py_ssize_t n = PyTuple_GET_SIZE(in_names);
    Py_ssize_t na = args ? PyTuple_GET_SIZE(args) : 0;
    PyObject **objs = PyMem_Calloc((size_t)n + 1, sizeof *objs);
    if (!objs) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = -1;
    if (na > n) {
        PyErr_Format(PyExc_TypeError, "the model takes %zd inputs, %zd given",
                     n, na);
        goto done;
    }
    for (Py_ssize_t i = 0; i < na; i++)
        objs[i] = PyTuple_GET_ITEM(args, i);
    if (named) {
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(named, &pos, &key, &val)) {
            Py_ssize_t i = 0;
            while (i < n &&
                   PyUnicode_Compare(PyTuple_GET_ITEM(in_names, i), key) != 0)
                i++;
            if (PyErr_Occurred())
                goto done;
            if (i == n) {
                PyErr_Format(PyExc_TypeError,
                             "no input named %R (the inputs: %R)", key,
                             in_names);
                goto done;
            }
            if (objs[i]) {
                PyErr_Format(PyExc_TypeError, "input %R given twice", key);
                goto done;
            }
            objs[i] = val;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(in_names, i));
        if (!name)
            goto done;
        if (!objs[i]) {
            PyErr_Format(PyExc_TypeError, "input '%s' is missing", name);
            goto done;
        }
        arrs[i] = smx_as_input(objs[i], name, want ? want[i] : 0, cast);
        if (!arrs[i])
            goto done;
    }
    rc = 0;
done:
    if (rc < 0)
        for (Py_ssize_t i = 0; i < n; i++)
            Py_CLEAR(arrs[i]);
    PyMem_Free(objs);
    return rc;
}

/* Input i's dtype and shape against what plan p was compiled for: a
 * TypeError naming both, else 0. */
static int check_shape(const smelt_plan_t *p, int i, const char *name,
                       PyArrayObject *a)
{
    int nd = smelt_plan_input_ndim(p, i);
    int ok = nd < 0 || nd == PyArray_NDIM(a);
    for (int k = 0; ok && nd > 0 && k < nd; k++) {
        int64_t d = smelt_plan_input_dim(p, i, k);
        ok = d < 0 || d == (int64_t)PyArray_DIM(a, k);
    }
    if (ok)
        return 0;
    char want[256], have[256];
    int n = snprintf(want, sizeof want, "%s[",
                     smelt_dtype_name(smelt_plan_input_dtype(p, i)));
    for (int k = 0; k < nd && (size_t)n < sizeof want; k++)
        n += snprintf(want + n, sizeof want - (size_t)n, k ? ",%lld" : "%lld",
                      (long long)smelt_plan_input_dim(p, i, k));
    if ((size_t)n < sizeof want)
        snprintf(want + n, sizeof want - (size_t)n, "]");
    smx_array_str(a, have, sizeof have);
    PyErr_Format(PyExc_TypeError,
                 "input '%s': expected shape %s, given %s (the plan was "
                 "compiled for it: compile another)",
                 name, want, have);
    return -1;
}

/* ---- running ----------------------------------------------------------- */

static unsigned long main_thread;

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The run's cancellation hook (smelt_ctx_set_cancel), on the main thread
 * only: at most every 20 ms it takes the GIL and lets Python run its
 * signal handlers; a handler that raised (Ctrl-C: KeyboardInterrupt)
 * stops the run, and the exception stays set for the caller. */
static int poll_signals(void *user)
{
    smx_poll *ps = user;
    double now = mono_ms();
    if (now - ps->last_ms < 20)
        return 0;
    ps->last_ms = now;
    PyGILState_STATE g = PyGILState_Ensure();
    if (PyErr_CheckSignals() < 0)
        ps->raised = 1;
    PyGILState_Release(g);
    return ps->raised;
}

void smx_poll_begin(smelt_ctx_t *ctx, smx_poll *ps)
{
    ps->last_ms = mono_ms();
    ps->raised = 0;
    if (PyThread_get_thread_ident() == main_thread)
        smelt_ctx_set_cancel(ctx, poll_signals, ps);
}

int smx_poll_end(smelt_ctx_t *ctx, smx_poll *ps, smelt_status st)
{
    smelt_ctx_set_cancel(ctx, NULL, NULL);
    if (ps->raised || (st == SMELT_OK && PyErr_CheckSignals() < 0)) {
        if (!PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        return -1;
    }
    return 0;
}

PyObject *smx_plan_exec(smx_plan *plan, smelt_session_t *s,
                        PyArrayObject **arrs, int as_dict)
{
    int n_in = (int)PyTuple_GET_SIZE(plan->in_names);
    int n_out = (int)PyTuple_GET_SIZE(plan->out_names);
    smelt_tensor_t *stack_in[8], *stack_out[8];
    smelt_tensor_t **in = stack_in, **out = stack_out;
    if (n_in > 8 || n_out > 8) {
        in = PyMem_Calloc((size_t)n_in + 1, sizeof *in);
        out = PyMem_Calloc((size_t)n_out + 1, sizeof *out);
        if (!in || !out) {
            PyMem_Free(in);
            PyMem_Free(out);
            return PyErr_NoMemory();
        }
    }
    memset(in, 0, sizeof *in * (size_t)(n_in > 8 ? n_in : 8));
    memset(out, 0, sizeof *out * (size_t)(n_out > 8 ? n_out : 8));
    PyObject *result = NULL;
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx)
        goto done;
    for (int i = 0; i < n_in; i++) {
        const char *name =
            PyUnicode_AsUTF8(PyTuple_GET_ITEM(plan->in_names, i));
        if (check_shape(plan->p, i, name, arrs[i]) < 0)
            goto done;
        in[i] = smx_wrap(ctx, arrs[i]);
        if (!in[i])
            goto done;
    }
    smx_poll ps;
    smx_poll_begin(ctx, &ps);
    smelt_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = s ? smelt_session_run(ctx, s, in, n_in, out, n_out)
           : smelt_plan_run(ctx, plan->p, in, n_in, out, n_out);
    Py_END_ALLOW_THREADS;
    if (smx_poll_end(ctx, &ps, st) < 0)
        goto done;
    if (st != SMELT_OK) {
        smx_raise(ctx, st);
        goto done;
    }
    result = as_dict ? PyDict_New() : n_out == 1 ? NULL : PyTuple_New(n_out);
    if (!result && (as_dict || n_out != 1))
        goto done;
    for (int i = 0; i < n_out; i++) {
        PyObject *a = smx_from_tensor(out[i]);
        out[i] = NULL;
        if (!a) {
            Py_CLEAR(result);
            goto done;
        }
        if (as_dict) {
            int rc =
                PyDict_SetItem(result, PyTuple_GET_ITEM(plan->out_names, i), a);
            Py_DECREF(a);
            if (rc < 0) {
                Py_CLEAR(result);
                goto done;
            }
        } else if (n_out == 1) {
            result = a;
        } else {
            PyTuple_SET_ITEM(result, i, a);
        }
    }
done:
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    if (in != stack_in) {
        PyMem_Free(in);
        PyMem_Free(out);
    }
    smelt_ctx_free(ctx);
    return result;
}

/* The wanted dtypes of p's inputs into want[] (n entries). */
static void plan_dtypes(const smelt_plan_t *p, smelt_dtype *want, int n)
{
    for (int i = 0; i < n; i++)
        want[i] = smelt_plan_input_dtype(p, i);
}

/* Shared by Plan and Session calls: collect, convert, run. */
static PyObject *call_plan(smx_plan *plan, smelt_session_t *s, PyObject *args,
                           PyObject *named, int cast, int as_dict)
{
    int n = (int)PyTuple_GET_SIZE(plan->in_names);
    PyArrayObject **arrs = PyMem_Calloc((size_t)n + 1, sizeof *arrs);
    smelt_dtype *want = PyMem_Calloc((size_t)n + 1, sizeof *want);
    PyObject *r = NULL;
    if (!arrs || !want) {
        PyErr_NoMemory();
        goto done;
    }
    plan_dtypes(plan->p, want, n);
    if (smx_collect(args, named, plan->in_names, want, cast, arrs) == 0)
        r = smx_plan_exec(plan, s, arrs, as_dict);
    for (int i = 0; arrs && i < n; i++)
        Py_XDECREF(arrs[i]);
done:
    PyMem_Free(arrs);
    PyMem_Free(want);
    return r;
}

/* Pops the keyword `cast` out of a call's kwargs (a copy when needed). */
static int pop_cast(PyObject **kwargs, int *cast)
{
    *cast = 0;
    if (!*kwargs)
        return 0;
    PyObject *c = PyDict_GetItemString(*kwargs, "cast");
    if (!c) {
        Py_INCREF(*kwargs);
        return 0;
    }
    *cast = PyObject_IsTrue(c);
    PyObject *copy = PyDict_Copy(*kwargs);
    if (!copy || PyDict_DelItemString(copy, "cast") < 0) {
        Py_XDECREF(copy);
        return -1;
    }
    *kwargs = copy;
    return *cast < 0 ? -1 : 0;
}

int smx_pop_cast(PyObject **kwargs, int *cast);
int smx_pop_cast(PyObject **kwargs, int *cast)
{
    return pop_cast(kwargs, cast);
}

/* ---- Plan ---------------------------------------------------------------- */

static PyObject *names_tuple(int n,
                             const char *(*get)(const smelt_graph_t *, int),
                             const smelt_graph_t *g)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *s = PyUnicode_FromString(get(g, i));
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

PyObject *smx_plan_new(smelt_plan_t *p, const smelt_graph_t *g)
{
    PyObject *in =
        names_tuple(smelt_graph_num_inputs(g), smelt_graph_input_name, g);
    PyObject *out =
        names_tuple(smelt_graph_num_outputs(g), smelt_graph_output_name, g);
    PyTypeObject *tp = (PyTypeObject *)smx_plan_class;
    smx_plan *self = in && out ? (smx_plan *)tp->tp_alloc(tp, 0) : NULL;
    if (!self) {
        Py_XDECREF(in);
        Py_XDECREF(out);
        smelt_plan_free(p);
        return NULL;
    }
    self->p = p;
    self->in_names = in;
    self->out_names = out;
    return (PyObject *)self;
}

static void plan_dealloc(smx_plan *self)
{
    smelt_plan_free(self->p);
    Py_XDECREF(self->in_names);
    Py_XDECREF(self->out_names);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *plan_call(smx_plan *self, PyObject *args, PyObject *kwargs)
{
    int cast;
    if (pop_cast(&kwargs, &cast) < 0)
        return NULL;
    PyObject *r = call_plan(self, NULL, args, kwargs, cast, 0);
    Py_XDECREF(kwargs);
    return r;
}

static PyObject *plan_run(smx_plan *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"feed", "cast", NULL};
    PyObject *feed;
    int cast = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|p", kw, &PyDict_Type,
                                     &feed, &cast))
        return NULL;
    return call_plan(self, NULL, NULL, feed, cast, 1);
}

static PyObject *plan_session(smx_plan *self, PyObject *unused)
{
    (void)unused;
    return PyObject_CallFunctionObjArgs((PyObject *)&smx_session_type, self,
                                        NULL);
}

/* (name, dtype, shape) for each input or output; -1 dims as None. */
static PyObject *plan_values(smx_plan *self, int outputs)
{
    PyObject *names = outputs ? self->out_names : self->in_names;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        int k = (int)i;
        int nd = outputs ? smelt_plan_output_ndim(self->p, k)
                         : smelt_plan_input_ndim(self->p, k);
        int64_t dims[SMELT_MAX_DIMS];
        if (nd > SMELT_MAX_DIMS)
            nd = -1;
        for (int a = 0; a < nd; a++)
            dims[a] = outputs ? smelt_plan_output_dim(self->p, k, a)
                              : smelt_plan_input_dim(self->p, k, a);
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i));
        PyObject *item =
            name ? smx_value_tuple(name,
                                   outputs ? smelt_plan_output_dtype(self->p, k)
                                           : smelt_plan_input_dtype(self->p, k),
                                   nd, dims, NULL)
                 : NULL;
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *plan_inputs(smx_plan *self, void *unused)
{
    (void)unused;
    return plan_values(self, 0);
}

static PyObject *plan_outputs(smx_plan *self, void *unused)
{
    (void)unused;
    return plan_values(self, 1);
}

static PyObject *plan_stats(smx_plan *self, PyObject *unused)
{
    (void)unused;
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(self->p, &st);
    return Py_BuildValue(
        "{sLsLsLsisisisisisisisisisisiss}", "arena_bytes",
        (long long)st.arena_bytes, "unshared_bytes",
        (long long)st.unshared_bytes, "weight_bytes",
        (long long)st.weight_bytes, "steps", st.steps, "kernel_steps",
        st.kernel_steps, "ref_steps", st.ref_steps, "dynamic_steps",
        st.dynamic_steps, "inplace", st.inplace, "threads", st.threads,
        "channels_last", st.channels_last, "arena_buffers", st.arena_buffers,
        "shared_buffers", st.shared_buffers, "channel_blocked",
        st.channel_blocked, "recomputed", st.recomputed, "isa", st.isa);
}

/* One dict per step: name, op, kernel, flops, bytes, shapes. */
static PyObject *plan_steps(smx_plan *self, PyObject *unused)
{
    (void)unused;
    int n = smelt_plan_num_steps(self->p);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        char shapes[512] = "";
        smelt_plan_step(self->p, i, &si);
        smelt_plan_step_shapes(self->p, i, shapes, sizeof shapes);
        PyObject *d = Py_BuildValue(
            "{sisssssssdsdsdss}", "step", i, "name", si.name ? si.name : "",
            "op", si.op ? si.op : "", "kernel", si.kernel ? si.kernel : "",
            "flops", si.flops, "bytes_read", si.bytes_read, "bytes_write",
            si.bytes_write, "shapes", shapes);
        if (!d) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}

static PyObject *plan_text(smx_plan *self, PyObject *unused)
{
    (void)unused;
    smelt_ctx_t *ctx = smx_ctx();
    char *s = NULL;
    if (!ctx)
        return NULL;
    smelt_status st = smelt_plan_print(ctx, self->p, &s);
    PyObject *r = st == SMELT_OK ? PyUnicode_FromString(s) : smx_raise(ctx, st);
    smelt_string_free(s);
    smelt_ctx_free(ctx);
    return r;
}

static PyObject *plan_isa(smx_plan *self, void *unused)
{
    (void)unused;
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(self->p, &st);
    return PyUnicode_FromString(st.isa);
}

static PyMethodDef plan_methods[] = {
    {"run", (PyCFunction)(void (*)(void))plan_run, METH_VARARGS | METH_KEYWORDS,
     "run(feed, cast=False) -> dict: runs with inputs by name"},
    {"session", (PyCFunction)plan_session, METH_NOARGS,
     "a new Session: one thread's run context"},
    {"stats", (PyCFunction)plan_stats, METH_NOARGS, "the plan's figures"},
    {"steps", (PyCFunction)plan_steps, METH_NOARGS, "the steps, as dicts"},
    {"text", (PyCFunction)plan_text, METH_NOARGS, "the plan as text"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef plan_getset[] = {
    {"inputs", (getter)plan_inputs, NULL, "(name, dtype, shape) per input",
     NULL},
    {"outputs", (getter)plan_outputs, NULL, "(name, dtype, shape) per output",
     NULL},
    {"isa", (getter)plan_isa, NULL, "the CPU features kernels use", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject smx_plan_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "smelt._smelt.Plan",
    .tp_basicsize = sizeof(smx_plan),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_call = (ternaryfunc)plan_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A compiled plan: call it with arrays.",
    .tp_methods = plan_methods,
    .tp_getset = plan_getset,
};

/* ---- Session ------------------------------------------------------------- */

static PyObject *session_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
    PyObject *plan;
    if (kw && PyDict_Size(kw)) {
        PyErr_SetString(PyExc_TypeError, "Session(plan) takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!", &smx_plan_type, &plan))
        return NULL;
    smx_session *self = (smx_session *)tp->tp_alloc(tp, 0);
    if (!self)
        return NULL;
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx) {
        Py_DECREF(self);
        return NULL;
    }
    smelt_status st = smelt_session_init(ctx, ((smx_plan *)plan)->p, &self->s);
    if (st != SMELT_OK) {
        smx_raise(ctx, st);
        smelt_ctx_free(ctx);
        Py_DECREF(self);
        return NULL;
    }
    smelt_ctx_free(ctx);
    self->plan = (smx_plan *)Py_NewRef(plan);
    return (PyObject *)self;
}

static void session_dealloc(smx_session *self)
{
    smelt_session_free(self->s);
    Py_XDECREF(self->plan);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Runs on the session, refusing a second thread while one runs on it. */
static PyObject *session_exec(smx_session *self, PyObject *args,
                              PyObject *named, int cast, int as_dict)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this Session is running on another thread: give "
                        "each thread its own (plan.session())");
        return NULL;
    }
    self->busy = 1;
    PyObject *r = call_plan(self->plan, self->s, args, named, cast, as_dict);
    self->busy = 0;
    return r;
}

static PyObject *session_call(smx_session *self, PyObject *args,
                              PyObject *kwargs)
{
    int cast;
    if (pop_cast(&kwargs, &cast) < 0)
        return NULL;
    PyObject *r = session_exec(self, args, kwargs, cast, 0);
    Py_XDECREF(kwargs);
    return r;
}

static PyObject *session_run(smx_session *self, PyObject *args,
                             PyObject *kwargs)
{
    static char *kw[] = {"feed", "cast", NULL};
    PyObject *feed;
    int cast = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|p", kw, &PyDict_Type,
                                     &feed, &cast))
        return NULL;
    return session_exec(self, NULL, feed, cast, 1);
}

static PyObject *session_set_profiling(smx_session *self, PyObject *on)
{
    int v = PyObject_IsTrue(on);
    if (v < 0)
        return NULL;
    smelt_session_set_profiling(self->s, v);
    self->profiling = v;
    Py_RETURN_NONE;
}

/* (start_ms, end_ms) of each step in the last profiled run. */
static PyObject *session_step_times(smx_session *self, PyObject *unused)
{
    (void)unused;
    if (!self->profiling) {
        PyErr_SetString(PyExc_RuntimeError,
                        "set_profiling(True) before the run to time its steps");
        return NULL;
    }
    int n = smelt_plan_num_steps(self->plan->p);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        double a = 0, b = 0;
        smelt_session_step_time(self->s, i, &a, &b);
        PyObject *t = Py_BuildValue("(dd)", a, b);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return list;
}

static PyObject *session_plan(smx_session *self, void *unused)
{
    (void)unused;
    return Py_NewRef(self->plan);
}

static PyMethodDef session_methods[] = {
    {"run", (PyCFunction)(void (*)(void))session_run,
     METH_VARARGS | METH_KEYWORDS, "run(feed, cast=False) -> dict"},
    {"set_profiling", (PyCFunction)session_set_profiling, METH_O,
     "record step times in the runs that follow"},
    {"step_times", (PyCFunction)session_step_times, METH_NOARGS,
     "(start_ms, end_ms) per step of the last profiled run"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef session_getset[] = {
    {"plan", (getter)session_plan, NULL, "the plan it runs", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject smx_session_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "smelt._smelt.Session",
    .tp_basicsize = sizeof(smx_session),
    .tp_dealloc = (destructor)session_dealloc,
    .tp_call = (ternaryfunc)session_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Session(plan): one thread's arena and thread pool.",
    .tp_methods = session_methods,
    .tp_getset = session_getset,
    .tp_new = session_new,
};

void smx_plan_init_main_thread(void);
void smx_plan_init_main_thread(void)
{
    main_thread = PyThread_get_thread_ident();
}
