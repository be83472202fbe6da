/*
 * transform.c - new graphs and weights from a Model: the gradient graph,
 * the pieces of a training step (loss, optimizer update, their roles),
 * initializers in and out, bound sizes (int8 quantization: quantize.c). Each is
 * one call of the C API on a copy; smelt.train (python/smelt) drives them.
 */
#include <string.h>

#include "ext.h"

/* Builds a list of C strings from a sequence of str (kept alive by seq). */
static const char **str_array(PyObject *seq, int *n)
{
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    const char **a = PyMem_Calloc((size_t)len + 1, sizeof *a);
    if (!a) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        a[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (!a[i]) {
            PyMem_Free(a);
            return NULL;
        }
    }
    *n = (int)len;
    return a;
}

/* grad(loss=None, wrt=None, reduce="sum", params_as_inputs=False) ->
 * the joint graph (a new Model): outputs, loss, one gradient per wrt. */
PyObject *smx_grad(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"loss", "wrt", "reduce", "params_as_inputs", NULL};
    const char *loss = NULL, *reduce = "sum";
    PyObject *wrt = Py_None;
    int pai = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zOsp", kw, &loss, &wrt,
                                     &reduce, &pai))
        return NULL;
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.loss = loss;
    o.params_as_inputs = pai;
    if (strcmp(reduce, "sum") == 0)
        o.loss_reduce = SMELT_LOSS_SUM;
    else if (strcmp(reduce, "mean") == 0)
        o.loss_reduce = SMELT_LOSS_MEAN;
    else {
        PyErr_Format(PyExc_ValueError, "reduce: 'sum' or 'mean', not '%s'",
                     reduce);
        return NULL;
    }
    PyObject *seq = NULL;
    const char **names = NULL;
    if (wrt != Py_None) {
        seq = PySequence_Fast(wrt, "wrt: a list of value names");
        int n = 0;
        if (!seq || !(names = str_array(seq, &n))) {
            Py_XDECREF(seq);
            return NULL;
        }
        o.wrt = names;
        o.n_wrt = n;
    }
    smelt_ctx_t *ctx = smx_ctx();
    PyObject *r = NULL;
    if (ctx) {
        smelt_graph_t *j = NULL;
        smelt_status st = smelt_graph_grad(ctx, self->g, &o, &j);
        r = st == SMELT_OK ? smx_model_new(j) : smx_raise(ctx, st);
        smelt_ctx_free(ctx);
    }
    PyMem_Free(names);
    Py_XDECREF(seq);
    return r;
}

/* _add_loss(kind) -> a new Model: the loss (first output, "loss") over
 * the first output and a new last input "target". */
PyObject *smx_add_loss(smx_model *self, PyObject *args)
{
    const char *kind;
    if (!PyArg_ParseTuple(args, "s", &kind))
        return NULL;
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx)
        return NULL;
    smelt_graph_t *g = NULL;
    smelt_status st = smelt_graph_add_loss(ctx, self->g, kind, &g);
    PyObject *r = st == SMELT_OK ? smx_model_new(g) : smx_raise(ctx, st);
    smelt_ctx_free(ctx);
    return r;
}

/* _add_optimizer(kind, momentum, nesterov, weight_decay, beta1, beta2,
 * eps, clip_norm) -> the training step of a joint graph made with
 * params_as_inputs (smelt_graph_add_optimizer); weight_decay < 0 keeps
 * the default. */
PyObject *smx_add_optimizer(smx_model *self, PyObject *args)
{
    smelt_optim_options o;
    smelt_optim_options_default(&o);
    int kind, nesterov;
    double momentum, wd, b1, b2, eps, clip;
    if (!PyArg_ParseTuple(args,
                          "idpdddd"
                          "d",
                          &kind, &momentum, &nesterov, &wd, &b1, &b2, &eps,
                          &clip))
        return NULL;
    o.kind = kind;
    o.momentum = momentum;
    o.nesterov = nesterov;
    if (wd >= 0)
        o.weight_decay = wd;
    o.beta1 = b1;
    o.beta2 = b2;
    o.eps = eps;
    o.clip_norm = clip;
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx)
        return NULL;
    smelt_graph_t *g = NULL;
    smelt_status st = smelt_graph_add_optimizer(ctx, self->g, &o, &g);
    PyObject *r = st == SMELT_OK ? smx_model_new(g) : smx_raise(ctx, st);
    smelt_ctx_free(ctx);
    return r;
}

/* The roles of a training-step graph: {"lr": i, "step": i, "norm": i or
 * -1, "states": [names], "params": [(input, output, [(in, out)...])]}. */
PyObject *smx_optim_roles(smx_model *self, PyObject *unused)
{
    (void)unused;
    const smelt_graph_t *g = self->g;
    int np = smelt_graph_optim_num_params(g),
        ns = smelt_graph_optim_num_states(g);
    PyObject *states = PyList_New(ns), *params = PyList_New(np);
    for (int k = 0; states && k < ns; k++)
        PyList_SET_ITEM(
            states, k,
            PyUnicode_FromString(smelt_graph_optim_state_name(g, k)));
    for (int i = 0; params && i < np; i++) {
        PyObject *st = PyList_New(ns);
        for (int k = 0; st && k < ns; k++)
            PyList_SET_ITEM(
                st, k,
                Py_BuildValue("(ii)", smelt_graph_optim_state_input(g, i, k),
                              smelt_graph_optim_state_output(g, i, k)));
        PyList_SET_ITEM(
            params, i,
            Py_BuildValue("(iiN)", smelt_graph_optim_param_input(g, i),
                          smelt_graph_optim_param_output(g, i), st));
    }
    if (!states || !params || PyErr_Occurred()) {
        Py_XDECREF(states);
        Py_XDECREF(params);
        return NULL;
    }
    return Py_BuildValue("{sisisisNsN}", "lr", smelt_graph_optim_lr_input(g),
                         "step", smelt_graph_optim_step_input(g), "norm",
                         smelt_graph_optim_norm_output(g), "states", states,
                         "params", params);
}

/* The initializers: [(name, dtype)]. */
PyObject *smx_initializers(smx_model *self, void *unused)
{
    (void)unused;
    int n = smelt_graph_num_initializers(self->g);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *t = Py_BuildValue(
            "(ss)", smelt_graph_initializer_name(self->g, i),
            smelt_dtype_name(smelt_graph_initializer_dtype(self->g, i)));
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return list;
}

/* get_initializer(name) -> a copy of its data as an array. */
PyObject *smx_get_initializer(smx_model *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx)
        return NULL;
    smelt_tensor_t *t = NULL;
    smelt_status st = smelt_graph_initializer_get(ctx, self->g, name, &t);
    PyObject *r = st == SMELT_OK ? smx_from_tensor(t) : smx_raise(ctx, st);
    smelt_ctx_free(ctx);
    return r;
}

/* set_initializer(name, array, cast=False): same dtype and shape. */
PyObject *smx_set_initializer(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "value", "cast", NULL};
    const char *name;
    PyObject *value;
    int cast = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|p", kw, &name, &value,
                                     &cast))
        return NULL;
    if (smx_model_check_unused(self, "set_initializer") < 0)
        return NULL;
    smelt_dtype want = SMELT_DTYPE_UNDEFINED;
    for (int i = 0; i < smelt_graph_num_initializers(self->g); i++)
        if (strcmp(smelt_graph_initializer_name(self->g, i), name) == 0)
            want = smelt_graph_initializer_dtype(self->g, i);
    PyArrayObject *a = smx_as_input(value, name, want, cast);
    if (!a)
        return NULL;
    smelt_ctx_t *ctx = smx_ctx();
    smelt_tensor_t *t = ctx ? smx_wrap(ctx, a) : NULL;
    PyObject *r = NULL;
    if (t) {
        smelt_status st = smelt_graph_initializer_set(ctx, self->g, name, t);
        r = st == SMELT_OK ? Py_NewRef(Py_None) : smx_raise(ctx, st);
        if (st == SMELT_OK)
            Py_CLEAR(self->plan);
    }
    smelt_tensor_free(t);
    smelt_ctx_free(ctx);
    Py_DECREF(a);
    return r;
}

/* bind_dims(dims) -> a copy with symbolic sizes bound. */
PyObject *smx_bind_dims(smx_model *self, PyObject *args)
{
    PyObject *dims, *keep = NULL;
    const char *s = NULL;
    if (!PyArg_ParseTuple(args, "O", &dims) ||
        smx_dims_string(dims, &keep, &s) < 0)
        return NULL;
    smelt_ctx_t *ctx = smx_ctx();
    smelt_graph_t *g = NULL;
    PyObject *r = NULL;
    if (ctx) {
        smelt_status st = smelt_graph_clone(ctx, self->g, &g);
        if (st == SMELT_OK && s)
            st = smelt_graph_bind_dims(ctx, g, s);
        if (st == SMELT_OK) {
            r = smx_model_new(g);
        } else {
            smelt_graph_free(g);
            smx_raise(ctx, st);
        }
    }
    smelt_ctx_free(ctx);
    Py_XDECREF(keep);
    return r;
}
