/*
 * train.c - Model._train: smelt.train's C side, a caller of the library's
 * trainer (smelt_trainer_*, docs/TRAINING.md). The arrays are viewed,
 * not copied; the GIL is released while the trainer builds, compiles and
 * runs, and taken again only for the progress callback, which also lets
 * Python's signal handlers run at each step boundary (Ctrl-C raises
 * KeyboardInterrupt there, the checkpoints intact; a run in the middle
 * of a step polls them too, as every run of the package does).
 */
#include <math.h>

#include "ext.h"

/* The callback's state: the Python callable (or None) and whether it or
 * a signal handler raised. */
typedef struct train_cb {
    PyObject *fn;
    int raised;
} train_cb;

/* The progress as a dict for the Python callback. */
static PyObject *progress_dict(const smelt_train_progress *p)
{
    int epoch = p->event == SMELT_TRAIN_EPOCH;
    PyObject *d = Py_BuildValue(
        "{sssLsLsLsLsLsLsdsLsLsdsd}", "event", epoch ? "epoch" : "step",
        "epoch", (long long)p->epoch, "epochs", (long long)p->epochs, "batch",
        (long long)p->batch, "steps_per_epoch", (long long)p->steps_per_epoch,
        "step", (long long)p->step, "total_steps", (long long)p->total_steps,
        "loss", p->loss, "correct", (long long)p->correct, "judged",
        (long long)p->judged, "seconds", p->seconds, "samples_per_s",
        p->seconds > 0 ? (double)p->samples / p->seconds : 0.0);
    if (!d)
        return NULL;
    PyObject *acc = PyFloat_FromDouble(
        p->judged ? (double)p->correct / (double)p->judged : NAN);
    int bad = !acc || PyDict_SetItemString(d, "accuracy", acc) < 0;
    Py_XDECREF(acc);
    if (!bad && !epoch) {
        PyObject *lr = PyFloat_FromDouble(p->lr);
        bad = !lr || PyDict_SetItemString(d, "lr", lr) < 0;
        Py_XDECREF(lr);
    }
    if (!bad && epoch && p->n_val) {
        PyObject *vl = PyFloat_FromDouble(p->val_loss);
        PyObject *va = PyFloat_FromDouble(
            p->val_judged ? (double)p->val_correct / (double)p->val_judged
                          : NAN);
        bad = !vl || !va || PyDict_SetItemString(d, "val_loss", vl) < 0 ||
              PyDict_SetItemString(d, "val_accuracy", va) < 0;
        Py_XDECREF(vl);
        Py_XDECREF(va);
    }
    if (bad)
        Py_CLEAR(d);
    return d;
}

/* The trainer's callback, with the GIL released around it: Python's
 * signal handlers, then the Python callback; a true answer stops the
 * run, an exception stops it and stays set for the caller. */
static int on_progress(void *user, const smelt_train_progress *p)
{
    train_cb *cb = user;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    if (PyErr_CheckSignals() < 0) {
        cb->raised = stop = 1;
    } else if (cb->fn != Py_None) {
        PyObject *d = progress_dict(p);
        PyObject *r = d ? PyObject_CallOneArg(cb->fn, d) : NULL;
        Py_XDECREF(d);
        int t = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        if (t < 0)
            cb->raised = stop = 1;
        else
            stop = t;
    }
    PyGILState_Release(g);
    return stop;
}

/* A list of n doubles (NaN kept). */
static PyObject *floats(const double *v, int64_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; l && i < n; i++) {
        PyObject *f = PyFloat_FromDouble(v[i]);
        if (!f) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, f);
    }
    return l;
}

/* The trainer's history and position as a dict. */
static PyObject *history(const smelt_trainer_t *tr)
{
    smelt_train_info in = SMELT_STRUCT_INIT(smelt_train_info);
    smelt_trainer_get_info(tr, &in);
    PyObject *vi = PyList_New((Py_ssize_t)in.n_val);
    for (int64_t i = 0; vi && i < in.n_val; i++) {
        PyObject *k = PyLong_FromLongLong(in.val_index[i]);
        if (!k) {
            Py_CLEAR(vi);
            break;
        }
        PyList_SET_ITEM(vi, (Py_ssize_t)i, k);
    }
    if (!vi)
        return NULL;
    return Py_BuildValue(
        "{sNsNsNsNsNsNsNsNsLsLsLsLsLsisisisLsL}", "step_loss",
        floats(in.step_loss, in.n_steps_run), "step_accuracy",
        floats(in.step_accuracy, in.n_steps_run), "epoch_loss",
        floats(in.epoch_loss, in.n_epochs_run), "epoch_accuracy",
        floats(in.epoch_accuracy, in.n_epochs_run), "val_loss",
        floats(in.val_loss, in.n_epochs_run), "val_accuracy",
        floats(in.val_accuracy, in.n_epochs_run), "samples_per_s",
        floats(in.samples_per_s, in.n_epochs_run), "val_index", vi, "step",
        (long long)in.step, "total_steps", (long long)in.total_steps,
        "steps_per_epoch", (long long)in.steps_per_epoch, "n_train",
        (long long)in.n_train, "n_weights", (long long)in.n_weights, "n_params",
        (int)in.n_params, "cancelled", (int)in.cancelled, "resumed",
        (int)in.resumed, "resumed_step", (long long)in.resumed_step,
        "checkpoint_step", (long long)in.checkpoint_step);
}

/* _train(inputs, target, **options) -> (trained Model, history dict).
 * inputs: a sequence of arrays, one per model input (dtypes as the
 * model's; cast on request); target: an array. The options are
 * smelt_train_options' and smelt_optim_options' (docs/PYTHON.md). */
PyObject *smx_train(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {
        "inputs",   "target",        "loss",         "optimizer",
        "momentum", "nesterov",      "weight_decay", "beta1",
        "beta2",    "eps",           "clip_norm",    "lr",
        "warmup",   "cosine",        "epochs",       "batch_size",
        "seed",     "shuffle",       "val_fraction", "freeze",
        "threads",  "memory_budget", "checkpoint",   "checkpoint_every",
        "resume",   "cast",          "callback",     NULL};
    PyObject *inputs, *target, *callback = Py_None;
    smelt_train_options o;
    smelt_train_options_default(&o);
    smelt_optim_options oo;
    smelt_optim_options_default(&oo);
    int kind = 0, nesterov = 0, cosine = 0, shuffle = 1, resume = 0, cast = 0;
    int threads = 1;
    double wd = -1;
    long long warmup = 0, epochs = 1, batch = 32, budget = 0, every = 0;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "OO|$sidpddddddLpLLKpdziLzLppO", kw, &inputs, &target,
            &o.loss, &kind, &oo.momentum, &nesterov, &wd, &oo.beta1, &oo.beta2,
            &oo.eps, &oo.clip_norm, &o.lr, &warmup, &cosine, &epochs, &batch,
            &seed, &shuffle, &o.val_fraction, &o.freeze, &threads, &budget,
            &o.checkpoint_dir, &every, &resume, &cast, &callback))
        return NULL;
    if (callback != Py_None && !PyCallable_Check(callback))
        return PyErr_Format(PyExc_TypeError,
                            "train: callback must be callable or None");
    oo.kind = kind;
    oo.nesterov = nesterov;
    if (wd >= 0)
        oo.weight_decay = wd;
    else if (kind == SMELT_OPTIM_ADAMW)
        oo.weight_decay = 0.01;
    o.optim = &oo;
    o.warmup = warmup;
    o.schedule = cosine ? SMELT_SCHEDULE_COSINE : SMELT_SCHEDULE_CONSTANT;
    o.epochs = epochs;
    o.batch_size = batch;
    o.seed = seed;
    o.shuffle = shuffle;
    o.threads = threads;
    o.memory_budget = budget;
    o.checkpoint_every = every;
    o.resume = resume;
    train_cb cb = {.fn = callback};
    o.callback = on_progress;
    o.user = &cb;

    PyObject *seq = PySequence_Fast(inputs, "train: inputs must be a list");
    if (!seq)
        return NULL;
    int n = (int)PySequence_Fast_GET_SIZE(seq);
    int want = smelt_graph_num_inputs(self->g);
    if (n != want) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_TypeError,
                            "train: the model takes %d inputs, %d given", want,
                            n);
    }
    PyArrayObject **arrs = PyMem_Calloc((size_t)n + 2, sizeof *arrs);
    smelt_tensor_t **ts = PyMem_Calloc((size_t)n + 2, sizeof *ts);
    smelt_ctx_t *ctx = smx_ctx();
    smelt_trainer_t *tr = NULL;
    smelt_graph_t *g = NULL;
    PyObject *r = NULL;
    if (!arrs || !ts) {
        PyErr_NoMemory();
        goto done;
    }
    if (!ctx)
        goto done;
    for (int i = 0; i < n; i++) {
        arrs[i] = smx_as_input(PySequence_Fast_GET_ITEM(seq, i),
                               smelt_graph_input_name(self->g, i),
                               smelt_graph_input_dtype(self->g, i), cast);
        if (!arrs[i] || !(ts[i] = smx_wrap(ctx, arrs[i])))
            goto done;
    }
    arrs[n] = smx_as_input(target, "target", SMELT_DTYPE_UNDEFINED, 0);
    if (!arrs[n] || !(ts[n] = smx_wrap(ctx, arrs[n])))
        goto done;
    smelt_status st;
    self->readers++;
    Py_BEGIN_ALLOW_THREADS;
    st = smelt_trainer_create(ctx, self->g, (const smelt_tensor_t *const *)ts,
                              n, ts[n], &o, &tr);
    Py_END_ALLOW_THREADS;
    self->readers--;
    if (st != SMELT_OK) {
        smx_raise(ctx, st);
        goto done;
    }
    smx_poll ps;
    smx_poll_begin(ctx, &ps);
    Py_BEGIN_ALLOW_THREADS;
    st = smelt_trainer_run(ctx, tr);
    Py_END_ALLOW_THREADS;
    if (cb.raised || smx_poll_end(ctx, &ps, SMELT_OK) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetNone(PyExc_KeyboardInterrupt);
        goto done;
    }
    smelt_train_info in = SMELT_STRUCT_INIT(smelt_train_info);
    smelt_trainer_get_info(tr, &in);
    if (st != SMELT_OK && !(st == SMELT_ERR_LIMIT && in.cancelled)) {
        smx_raise(ctx, st);
        goto done;
    }
    if (smelt_graph_clone(ctx, self->g, &g) != SMELT_OK ||
        smelt_trainer_write_weights(ctx, tr, g) != SMELT_OK) {
        smx_raise(ctx, smelt_ctx_status(ctx));
        goto done;
    }
    PyObject *m = smx_model_new(g);
    g = NULL;
    PyObject *h = m ? history(tr) : NULL;
    if (m && h)
        r = Py_BuildValue("(NN)", m, h);
    else {
        Py_XDECREF(m);
        Py_XDECREF(h);
    }
done:
    smelt_graph_free(g);
    smelt_trainer_free(tr);
    for (int i = 0; ts && i <= n; i++)
        smelt_tensor_free(ts[i]);
    for (int i = 0; arrs && i <= n; i++)
        Py_XDECREF(arrs[i]);
    PyMem_Free(ts);
    PyMem_Free(arrs);
    Py_DECREF(seq);
    smelt_ctx_free(ctx);
    return r;
}
