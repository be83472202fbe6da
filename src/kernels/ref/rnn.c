/*
 * rnn.c - reference kernels of the recurrent ops RNN, GRU and LSTM, in
 * the forms ONNX defines: forward, reverse or bidirectional; layout 0
 * (X [seq, batch, input]) or 1 (X [batch, seq, input]); optional biases,
 * sequence lengths, initial states and LSTM peepholes; activation
 * functions by name with their alpha and beta; clip on the gates' inputs.
 *
 * The gate math is written plainly, in double, one batch row and one time
 * step at a time. Steps past a row's sequence length leave Y zero and the
 * state as it was, so Y_h (and Y_c) hold the state after the row's last
 * step (its initial state for length 0).
 */
#include "kernels/ref/rnn.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/kernel.h"

const sm_rnn_kind sm_rnn_kinds[3] = {
    {"RNN", 1, 1, {"Tanh", NULL, NULL}},
    {"GRU", 3, 2, {"Sigmoid", "Tanh", NULL}},
    {"LSTM", 4, 3, {"Sigmoid", "Tanh", "Tanh"}},
};

/* Names, and the defaults of alpha and beta for the functions that take
 * them (NAN: takes none). */
static const struct {
    const char *name;
    double alpha, beta;
} acts[SM_RNN_ACT_COUNT] = {
    {"relu", NAN, NAN},       {"tanh", NAN, NAN},
    {"sigmoid", NAN, NAN},    {"affine", 1.0, 0.0},
    {"leakyrelu", 0.01, NAN}, {"thresholdedrelu", 1.0, NAN},
    {"scaledtanh", 1.0, 1.0}, {"hardsigmoid", 0.2, 0.5},
    {"elu", 1.0, NAN},        {"softsign", NAN, NAN},
    {"softplus", NAN, NAN},
};

int sm_rnn_act_find(const char *name)
{
    for (int k = 0; name && k < SM_RNN_ACT_COUNT; k++) {
        const char *p = name, *q = acts[k].name;
        while (*p && tolower((unsigned char)*p) == *q) {
            p++;
            q++;
        }
        if (!*p && !*q)
            return k;
    }
    return -1;
}

typedef sm_rnn_act act;

static double act_apply(const act *f, double x)
{
    double a = f->alpha, b = f->beta;
    switch (f->kind) {
    case SM_RNN_ACT_RELU: return x > 0 ? x : 0;
    case SM_RNN_ACT_TANH: return tanh(x);
    case SM_RNN_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case SM_RNN_ACT_AFFINE: return a * x + b;
    case SM_RNN_ACT_LEAKYRELU: return x >= 0 ? x : a * x;
    case SM_RNN_ACT_THRESHOLDEDRELU: return x > a ? x : 0;
    case SM_RNN_ACT_SCALEDTANH: return a * tanh(b * x);
    case SM_RNN_ACT_HARDSIGMOID: return fmax(0, fmin(1, a * x + b));
    case SM_RNN_ACT_ELU: return x >= 0 ? x : a * (exp(x) - 1);
    case SM_RNN_ACT_SOFTSIGN: return x / (1 + fabs(x));
    case SM_RNN_ACT_SOFTPLUS: return log1p(exp(x));
    case SM_RNN_ACT_COUNT: break;
    }
    return x;
}

/* Everything one run needs, read and checked from the kernel's inputs. */
typedef struct rnn {
    const sm_rnn_kind *kind;
    const sm_tensor *x, *w, *r, *b, *lens, *h0, *c0, *p;
    sm_tensor *y, *yh, *yc;
    int64_t seq, batch, in, hid;
    int dirs, layout, reverse, lbr, input_forget;
    double clip; /* < 0: none */
    act f[6];    /* n_act per direction */
} rnn;

static smelt_status bad(const sm_kargs *a, const char *what)
{
    return sm_err(a->ctx, SMELT_ERR_RUNTIME, "%s: %s", a->op_name, what);
}

/* Whether t is absent or has exactly the given dims. */
static int dims_are(const sm_tensor *t, int ndim, int64_t d0, int64_t d1,
                    int64_t d2)
{
    const int64_t want[3] = {d0, d1, d2};
    if (!t)
        return 1;
    if (t->ndim != ndim)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (t->dims[d] != want[d])
            return 0;
    return 1;
}

smelt_status sm_rnn_read_acts(smelt_ctx_t *ctx, const char *op,
                              const sm_attrs *attrs, const sm_rnn_kind *kind,
                              int dirs, sm_rnn_act *f)
{
    int n = kind->n_act * dirs;
    const sm_attr *names = sm_attrs_find(attrs, "activations");
    const double *al = NULL, *be = NULL;
    int nal = sm_attrs_floats(attrs, "activation_alpha", &al);
    int nbe = sm_attrs_floats(attrs, "activation_beta", &be);
    if (names && (names->kind != SM_ATTR_STRINGS || names->n != n))
        return sm_err(ctx, SMELT_ERR_RUNTIME, "%s: activations needs %d names",
                      op, n);
    for (int i = 0, ia = 0, ib = 0; i < n; i++) {
        const char *name =
            names ? names->v.strs[i] : kind->act_default[i % kind->n_act];
        int k = sm_rnn_act_find(name);
        if (k < 0)
            return sm_err(ctx, SMELT_ERR_RUNTIME, "%s: unknown activation '%s'",
                          op, name);
        f[i].kind = (sm_rnn_act_kind)k;
        f[i].alpha = acts[k].alpha;
        f[i].beta = acts[k].beta;
        if (!isnan(f[i].alpha) && ia < nal)
            f[i].alpha = al[ia++];
        if (!isnan(f[i].beta) && ib < nbe)
            f[i].beta = be[ib++];
    }
    return SMELT_OK;
}

/* Reads the inputs, outputs and attributes of one RNN, GRU (kind 1) or
 * LSTM (kind 2) call into m, re-checking every shape the loops index
 * with: the kernel may run without its shape function. */
static smelt_status rnn_setup(const sm_kargs *a, int kind, rnn *m)
{
    const sm_tensor *in[8] = {NULL};
    for (int i = 0; i < a->n_in && i < 8; i++)
        in[i] = a->in[i];
    memset(m, 0, sizeof *m);
    m->kind = &sm_rnn_kinds[kind];
    m->x = in[0];
    m->w = in[1];
    m->r = in[2];
    m->b = in[3];
    m->lens = in[4];
    m->h0 = in[5];
    m->c0 = kind == SM_RNN_LSTM ? in[6] : NULL;
    m->p = kind == SM_RNN_LSTM ? in[7] : NULL;
    m->y = a->n_out > 0 ? a->out[0] : NULL;
    m->yh = a->n_out > 1 ? a->out[1] : NULL;
    m->yc = a->n_out > 2 ? a->out[2] : NULL;
    const char *dir = sm_attrs_string(&a->attrs, "direction", "forward");
    m->dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    m->reverse = strcmp(dir, "reverse") == 0;
    m->layout = (int)sm_attrs_int(&a->attrs, "layout", 0);
    m->lbr = sm_attrs_int(&a->attrs, "linear_before_reset", 0) != 0;
    m->input_forget = sm_attrs_int(&a->attrs, "input_forget", 0) != 0;
    m->clip = sm_attrs_find(&a->attrs, "clip")
                  ? sm_attrs_float(&a->attrs, "clip", 0)
                  : -1;
    if (m->x->ndim != 3 || m->r->ndim != 3 ||
        (m->layout != 0 && m->layout != 1))
        return bad(a, "X and R must have rank 3");
    m->seq = m->x->dims[m->layout];
    m->batch = m->x->dims[1 - m->layout];
    m->in = m->x->dims[2];
    m->hid = m->r->dims[2];
    if (sm_attrs_find(&a->attrs, "hidden_size") &&
        sm_attrs_int(&a->attrs, "hidden_size", 0) != m->hid)
        return bad(a, "hidden_size does not match R");
    int64_t g = m->kind->gates, h = m->hid, nd = m->dirs;
    int64_t sb = m->layout ? m->batch : nd, sd = m->layout ? nd : m->batch;
    if (!dims_are(m->w, 3, nd, g * h, m->in) ||
        !dims_are(m->r, 3, nd, g * h, h) ||
        !dims_are(m->b, 2, nd, 2 * g * h, 0) ||
        !dims_are(m->lens, 1, m->batch, 0, 0) ||
        !dims_are(m->h0, 3, sb, sd, h) || !dims_are(m->c0, 3, sb, sd, h) ||
        !dims_are(m->p, 2, nd, 3 * h, 0))
        return bad(a, "the inputs' shapes do not agree");
    const sm_tensor *ts[] = {m->w, m->r, m->b, m->h0, m->c0, m->p};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        if (ts[i] && ts[i]->dtype != m->x->dtype)
            return bad(a, "the float inputs' dtypes differ");
    if (m->lens && !sm_dtype_is_int(m->lens->dtype))
        return bad(a, "sequence_lens must be integers");
    for (int64_t b = 0; m->lens && b < m->batch; b++) {
        int64_t len = sm_load_i64(m->lens->dtype, m->lens->data, b);
        if (len < 0 || len > m->seq)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: sequence length %lld of batch %lld is outside "
                          "[0, %lld]",
                          a->op_name, (long long)len, (long long)b,
                          (long long)m->seq);
    }
    int64_t ys = m->layout ? m->batch : m->seq;
    if ((m->y && !(m->y->ndim == 4 && m->y->dims[0] == ys &&
                   m->y->dims[1] == (m->layout ? m->seq : nd) &&
                   m->y->dims[2] == (m->layout ? nd : m->batch) &&
                   m->y->dims[3] == h)) ||
        (m->yh && !dims_are(m->yh, 3, sb, sd, h)) ||
        (m->yc && !dims_are(m->yc, 3, sb, sd, h)))
        return bad(a, "the outputs' shapes do not match the inputs");
    return sm_rnn_read_acts(a->ctx, a->op_name, &a->attrs, m->kind, m->dirs,
                            m->f);
}

/* Element offsets by layout: X (t, b, i), Y (t, dir, b, j) and the
 * states (dir, b, j). */
static int64_t x_at(const rnn *m, int64_t t, int64_t b, int64_t i)
{
    return ((m->layout ? b * m->seq + t : t * m->batch + b)) * m->in + i;
}

static int64_t y_at(const rnn *m, int64_t t, int dir, int64_t b, int64_t j)
{
    int64_t row = m->layout ? (b * m->seq + t) * m->dirs + dir
                            : (t * m->dirs + dir) * m->batch + b;
    return row * m->hid + j;
}

static int64_t s_at(const rnn *m, int dir, int64_t b, int64_t j)
{
    int64_t row = m->layout ? b * m->dirs + dir : dir * m->batch + b;
    return row * m->hid + j;
}

static double opt_at(const sm_tensor *t, int64_t i)
{
    return t ? sm_load_f64(t->dtype, t->data, i) : 0;
}

/* Scratch for one direction: its weights in double and the per-step
 * vectors. */
typedef struct work {
    double *w, *r;      /* [g*H, I] and [g*H, H] */
    double *xw, *hr;    /* [g*H]: x W^T + Wb, h R^T + Rb */
    double *h, *c, *hn; /* state and the next h, [H] */
} work;

static double clipped(const rnn *m, double v)
{
    if (m->clip < 0)
        return v;
    return v > m->clip ? m->clip : v < -m->clip ? -m->clip : v;
}

/* out[k] = sum_j v[j] * mat[k][j] + bias[k] for rows [from, to). */
static void affine(const double *mat, const double *v, int64_t n,
                   const sm_tensor *bias, int64_t boff, int64_t from,
                   int64_t to, double *out)
{
    for (int64_t k = from; k < to; k++) {
        double s = opt_at(bias, boff + k);
        for (int64_t j = 0; j < n; j++)
            s += mat[k * n + j] * v[j];
        out[k] = s;
    }
}

/* One time step of row b, direction dir: wk->h (and wk->c) advance. */
static void step(const rnn *m, work *wk, int dir, int64_t t, int64_t b)
{
    int64_t h = m->hid, g = m->kind->gates, gh = g * h;
    int64_t wb = dir * 2 * gh, rb = wb + gh;
    const act *f = &m->f[dir * m->kind->n_act];
    double *xr = wk->xw + gh; /* the x row, after xw */
    for (int64_t i = 0; i < m->in; i++)
        xr[i] = sm_load_f64(m->x->dtype, m->x->data, x_at(m, t, b, i));
    affine(wk->w, xr, m->in, m->b, wb, 0, gh, wk->xw);
    affine(wk->r, wk->h, h, m->b, rb, 0, gh, wk->hr);
    if (g == 1) {
        for (int64_t j = 0; j < h; j++)
            wk->hn[j] = act_apply(&f[0], clipped(m, wk->xw[j] + wk->hr[j]));
    } else if (g == 3) {    /* GRU: gates z, r, h */
        double *rh = wk->c; /* r (.) h, GRU keeps no cell state */
        for (int64_t j = 0; j < h; j++)
            rh[j] =
                act_apply(&f[0], clipped(m, wk->xw[h + j] + wk->hr[h + j])) *
                wk->h[j];
        if (!m->lbr) /* (r (.) h) R_h^T + Rb_h */
            affine(wk->r, rh, h, m->b, rb, 2 * h, 3 * h, wk->hr);
        for (int64_t j = 0; j < h; j++) {
            double z = act_apply(&f[0], clipped(m, wk->xw[j] + wk->hr[j]));
            double r =
                act_apply(&f[0], clipped(m, wk->xw[h + j] + wk->hr[h + j]));
            double hh = m->lbr ? wk->xw[2 * h + j] + r * wk->hr[2 * h + j]
                               : wk->xw[2 * h + j] + wk->hr[2 * h + j];
            hh = act_apply(&f[1], clipped(m, hh));
            wk->hn[j] = (1 - z) * hh + z * wk->h[j];
        }
    } else { /* LSTM: gates i, o, f, c; peepholes i, o, f */
        int64_t po = dir * 3 * h;
        for (int64_t j = 0; j < h; j++) {
            double c = wk->c[j];
            double gi = wk->xw[j] + wk->hr[j] + opt_at(m->p, po + j) * c;
            double gf = wk->xw[2 * h + j] + wk->hr[2 * h + j] +
                        opt_at(m->p, po + 2 * h + j) * c;
            double gc = wk->xw[3 * h + j] + wk->hr[3 * h + j];
            double vi = act_apply(&f[0], clipped(m, gi));
            double vf =
                m->input_forget ? 1 - vi : act_apply(&f[0], clipped(m, gf));
            double cn = vf * c + vi * act_apply(&f[1], clipped(m, gc));
            double go =
                wk->xw[h + j] + wk->hr[h + j] + opt_at(m->p, po + h + j) * cn;
            double vo = act_apply(&f[0], clipped(m, go));
            wk->c[j] = cn;
            wk->hn[j] = vo * act_apply(&f[2], cn);
        }
    }
    memcpy(wk->h, wk->hn, sizeof *wk->h * (size_t)h);
}

/* Runs direction dir over every batch row. */
static void run_dir(const rnn *m, work *wk, int dir)
{
    int64_t h = m->hid, gh = m->kind->gates * h;
    int rev = m->reverse || dir == 1;
    for (int64_t k = 0; k < gh * m->in; k++)
        wk->w[k] = sm_load_f64(m->w->dtype, m->w->data, dir * gh * m->in + k);
    for (int64_t k = 0; k < gh * h; k++)
        wk->r[k] = sm_load_f64(m->r->dtype, m->r->data, dir * gh * h + k);
    for (int64_t b = 0; b < m->batch; b++) {
        int64_t len =
            m->lens ? sm_load_i64(m->lens->dtype, m->lens->data, b) : m->seq;
        for (int64_t j = 0; j < h; j++) {
            wk->h[j] = opt_at(m->h0, s_at(m, dir, b, j));
            wk->c[j] = opt_at(m->c0, s_at(m, dir, b, j));
        }
        for (int64_t s = 0; s < len; s++) {
            int64_t t = rev ? len - 1 - s : s;
            step(m, wk, dir, t, b);
            for (int64_t j = 0; m->y && j < h; j++)
                sm_store_f64(m->y->dtype, m->y->data, y_at(m, t, dir, b, j),
                             wk->h[j]);
        }
        for (int64_t j = 0; j < h; j++) {
            if (m->yh)
                sm_store_f64(m->yh->dtype, m->yh->data, s_at(m, dir, b, j),
                             wk->h[j]);
            if (m->yc)
                sm_store_f64(m->yc->dtype, m->yc->data, s_at(m, dir, b, j),
                             wk->c[j]);
        }
    }
}

static smelt_status rnn_run(const sm_kargs *a, int kind)
{
    rnn m;
    SM_TRY(rnn_setup(a, kind, &m));
    int64_t h = m.hid, gh = m.kind->gates * h;
    /* w, r, then xw (g*H) followed by the x row (I), hr, h, c, hn */
    size_t n = (size_t)(gh * m.in + gh * h + gh + m.in + gh + 3 * h);
    double *buf = sm_calloc(n ? n : 1, sizeof *buf);
    if (!buf)
        return sm_err_nomem(a->ctx);
    work wk;
    wk.w = buf;
    wk.r = wk.w + gh * m.in;
    wk.xw = wk.r + gh * h;
    wk.hr = wk.xw + gh + m.in;
    wk.h = wk.hr + gh;
    wk.c = wk.h + h;
    wk.hn = wk.c + h;
    if (m.y)
        memset(m.y->data, 0, m.y->nbytes);
    for (int dir = 0; dir < m.dirs; dir++)
        run_dir(&m, &wk, dir);
    sm_free(buf);
    return SMELT_OK;
}

smelt_status sm_ref_rnn(const sm_kargs *a)
{
    return rnn_run(a, SM_RNN_RNN);
}

smelt_status sm_ref_gru(const sm_kargs *a)
{
    return rnn_run(a, SM_RNN_GRU);
}

smelt_status sm_ref_lstm(const sm_kargs *a)
{
    return rnn_run(a, SM_RNN_LSTM);
}
