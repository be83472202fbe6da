/*
 * quantize.c - Model._quantize, _quantize_qat and _quantize_convert:
 * smelt.quantize's C side (python/smelt), each one call of the C API's
 * int8 section (smelt_quantize_report, smelt_graph_quantize,
 * smelt_graph_quantize_qat, smelt_graph_quantize_convert) on a copy.
 */
#include <string.h>

#include "ext.h"

/* The calibration arrays (a sequence, one per input of m in order, or a
 * dict by input name) as
 * tensors into in[]: 0, or -1 with an exception set. arrs[i] keep the
 * arrays alive until the caller drops them. */
static int calib_inputs(smelt_ctx_t *ctx, smx_model *m, PyObject *seq,
                        PyArrayObject **arrs, smelt_tensor_t **in)
{
    int n = smelt_graph_num_inputs(m->g);
    PyObject *names = PyTuple_New(n);
    smelt_dtype *want = PyMem_Calloc((size_t)n + 1, sizeof *want);
    int rc = names && want ? 0 : -1;
    if (rc == 0 && want == NULL)
        PyErr_NoMemory();
    for (int i = 0; rc == 0 && i < n; i++) {
        PyObject *s = PyUnicode_FromString(smelt_graph_input_name(m->g, i));
        if (!s)
            rc = -1;
        else
            PyTuple_SET_ITEM(names, i, s);
        want[i] = smelt_graph_input_dtype(m->g, i);
    }
    int named = PyDict_Check(seq);
    PyObject *tup = rc == 0 && !named ? PySequence_Tuple(seq) : NULL;
    if (rc == 0 && !named && !tup)
        rc = -1;
    if (rc == 0 &&
        smx_collect(tup, named ? seq : NULL, names, want, 0, arrs) < 0)
        rc = -1;
    Py_XDECREF(tup);
    for (int i = 0; rc == 0 && i < n; i++)
        if (!(in[i] = smx_wrap(ctx, arrs[i])))
            rc = -1;
    PyMem_Free(want);
    Py_XDECREF(names);
    return rc;
}

/* Calibration buffers for m's n inputs and the context of one call. */
typedef struct calib {
    int n;
    PyArrayObject **arrs;
    smelt_tensor_t **in;
    smelt_ctx_t *ctx;
} calib;

/* Makes c's buffers and context: 0, or -1 with an exception set (and
 * nothing left to free). */
static int calib_open(calib *c, smx_model *m)
{
    c->n = smelt_graph_num_inputs(m->g);
    c->arrs = PyMem_Calloc((size_t)c->n + 1, sizeof *c->arrs);
    c->in = PyMem_Calloc((size_t)c->n + 1, sizeof *c->in);
    c->ctx = c->arrs && c->in ? smx_ctx() : NULL;
    if (c->ctx)
        return 0;
    if (!c->arrs || !c->in)
        PyErr_NoMemory();
    PyMem_Free(c->arrs);
    PyMem_Free(c->in);
    return -1;
}

/* Releases what calib_open and calib_inputs made. */
static void calib_close(calib *c)
{
    for (int i = 0; i < c->n; i++) {
        smelt_tensor_free(c->in[i]);
        Py_XDECREF(c->arrs[i]);
    }
    PyMem_Free(c->arrs);
    PyMem_Free(c->in);
    smelt_ctx_free(c->ctx);
}

/* The report's rows: [(layer, mse, cosine, kept_f32)] and the last,
 * (None, mse, cosine, False) of all the quantized layers together. */
static PyObject *report_rows(const smelt_quantize_report_t *r)
{
    int n = smelt_quantize_report_num_layers(r);
    PyObject *list = PyList_New(n + 1);
    for (int i = -1; list && i < n; i++) {
        const char *name = i < 0 ? NULL : smelt_quantize_report_layer(r, i);
        PyObject *row = Py_BuildValue(
            "(zddN)", name, smelt_quantize_report_mse(r, i),
            smelt_quantize_report_cosine(r, i),
            PyBool_FromLong(smelt_quantize_report_kept_f32(r, i)));
        if (!row) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i < 0 ? n : i, row);
    }
    return list;
}

/* quantize(per_channel=False, conv=False, exclude=None, only=None,
 * inputs=None, tolerance=-1) -> (a new int8 Model, the names of the
 * nodes rewritten, the report's rows or None). With inputs (a sequence,
 * one array per input, or a dict) each layer is measured
 * (smelt_quantize_report) and those over a tolerance >= 0 stay f32. */
PyObject *smx_quantize(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"per_channel", "conv",      "exclude", "only",
                         "inputs",      "tolerance", NULL};
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    int pc = 0, conv = 0;
    PyObject *seq = Py_None;
    double tol = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ppzzOd", kw, &pc, &conv,
                                     &o.exclude, &o.only, &seq, &tol))
        return NULL;
    o.per_channel = pc;
    o.conv = conv;
    calib c;
    if (calib_open(&c, self) < 0)
        return NULL;
    smelt_ctx_t *ctx = c.ctx;
    smelt_graph_t *g = NULL;
    smelt_quantize_report_t *rep = NULL;
    char *layers = NULL;
    PyObject *r = NULL, *rows = NULL;
    smelt_status st = SMELT_OK;
    if (seq != Py_None) {
        if (calib_inputs(ctx, self, seq, c.arrs, c.in) < 0)
            goto done;
        self->readers++;
        Py_BEGIN_ALLOW_THREADS;
        st = smelt_quantize_report(ctx, self->g, &o, c.in, c.n, tol, &rep);
        Py_END_ALLOW_THREADS;
        self->readers--;
        if (st == SMELT_OK && !(rows = report_rows(rep)))
            goto done;
        if (st == SMELT_OK)
            o.exclude = smelt_quantize_report_exclude(rep);
    }
    if (st == SMELT_OK)
        st = smelt_graph_clone(ctx, self->g, &g);
    if (st == SMELT_OK)
        st = smelt_graph_quantize(ctx, g, &o, &layers);
    if (st == SMELT_OK) {
        PyObject *m = smx_model_new(g);
        g = NULL;
        r = m ? Py_BuildValue("(NsO)", m, layers ? layers : "",
                              rows ? rows : Py_None)
              : NULL;
    } else {
        smx_raise(ctx, st);
    }
done:
    Py_XDECREF(rows);
    smelt_graph_free(g);
    smelt_string_free(layers);
    smelt_quantize_report_free(rep);
    calib_close(&c);
    return r;
}

/* _quantize_qat(inputs, per_channel=False, conv=False, exclude=None,
 * observer="minmax", percentile=99.99) -> (a new Model with fake
 * quantization, the names of the layers). */
PyObject *smx_quantize_qat(smx_model *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"inputs",   "per_channel", "conv", "exclude",
                         "observer", "percentile",  NULL};
    smelt_qat_options o;
    smelt_qat_options_default(&o);
    int pc = 0, conv = 0;
    PyObject *seq;
    const char *obs = "minmax";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|ppzsd", kw, &seq, &pc,
                                     &conv, &o.exclude, &obs, &o.percentile))
        return NULL;
    o.per_channel = pc;
    o.conv = conv;
    if (strcmp(obs, "percentile") == 0)
        o.observer = SMELT_QAT_PERCENTILE;
    else if (strcmp(obs, "minmax") != 0) {
        PyErr_Format(PyExc_ValueError,
                     "observer: 'minmax' or 'percentile', not '%s'", obs);
        return NULL;
    }
    calib c;
    if (calib_open(&c, self) < 0)
        return NULL;
    smelt_ctx_t *ctx = c.ctx;
    smelt_graph_t *g = NULL;
    char *layers = NULL;
    PyObject *r = NULL;
    if (calib_inputs(ctx, self, seq, c.arrs, c.in) == 0) {
        smelt_status st = smelt_graph_clone(ctx, self->g, &g);
        if (st == SMELT_OK) {
            Py_BEGIN_ALLOW_THREADS;
            st = smelt_graph_quantize_qat(ctx, g, &o, c.in, c.n, &layers);
            Py_END_ALLOW_THREADS;
        }
        if (st == SMELT_OK) {
            PyObject *m = smx_model_new(g);
            g = NULL;
            r = m ? Py_BuildValue("(Ns)", m, layers ? layers : "") : NULL;
        } else {
            smx_raise(ctx, st);
        }
    }
    smelt_graph_free(g);
    smelt_string_free(layers);
    calib_close(&c);
    return r;
}

/* _quantize_convert() -> (the int8 form of a QAT Model, the number of
 * weights folded, the number of activation pairs kept). */
PyObject *smx_quantize_convert(smx_model *self, PyObject *unused)
{
    (void)unused;
    smelt_ctx_t *ctx = smx_ctx();
    if (!ctx)
        return NULL;
    smelt_graph_t *g = NULL;
    int nw = 0, na = 0;
    smelt_status st = smelt_graph_clone(ctx, self->g, &g);
    if (st == SMELT_OK)
        st = smelt_graph_quantize_convert(ctx, g, &nw, &na);
    PyObject *r = NULL;
    if (st == SMELT_OK) {
        PyObject *m = smx_model_new(g);
        g = NULL;
        r = m ? Py_BuildValue("(Nii)", m, nw, na) : NULL;
    } else {
        smx_raise(ctx, st);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return r;
}
