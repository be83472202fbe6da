/*
 * shape_rnn.c - shape functions of the recurrent ops RNN, GRU and LSTM.
 *
 * Inputs: X [seq, batch, input] (layout 0) or [batch, seq, input]
 * (layout 1); W [dirs, G*H, input]; R [dirs, G*H, H]; B [dirs, 2*G*H]?;
 * sequence_lens [batch]?; initial_h [dirs, batch, H]? (layout 1:
 * [batch, dirs, H]); for LSTM initial_c like initial_h and P [dirs, 3*H]?.
 * G is the gate count (1, 3, 4), dirs 2 for bidirectional. Outputs, each
 * optional: Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]),
 * Y_h and (LSTM) Y_c shaped like initial_h.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_check.h"
#include "kernels/ref/rnn.h"

/* What the known dims say, gathered from every input. */
typedef struct rnn_dims {
    sm_dim seq, batch, in, hid;
    int dirs, layout, gates;
} rnn_dims;

/* Merges x into *into (a known size wins; known sizes must agree). */
static smelt_status merge(sm_shape_ctx *s, sm_dim *into, sm_dim x,
                          const char *what)
{
    if (x.size >= 0 && into->size >= 0 && x.size != into->size)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: %s is %lld in one input and %lld in another",
                      s->op->name, what, (long long)x.size,
                      (long long)into->size);
    if (into->size < 0 && (x.size >= 0 || (!into->sym && x.sym)))
        *into = x;
    return SMELT_OK;
}

/* Checks that known dim x equals k times the hidden size (k > 0) or the
 * direction count (k = 0). */
static smelt_status expect(sm_shape_ctx *s, const rnn_dims *d, sm_dim x,
                           int64_t k, const char *what)
{
    int64_t want = k == 0 ? d->dirs : d->hid.size >= 0 ? k * d->hid.size : -1;
    if (x.size >= 0 && want >= 0 && x.size != want)
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: %s is %lld, expected %lld",
                      s->op->name, what, (long long)x.size, (long long)want);
    return SMELT_OK;
}

/* The optional float input i of rank `rank`, checked against X's dtype. */
static const sm_type *float_in(sm_shape_ctx *s, int i, int rank,
                               const char *what, const sm_type *x,
                               smelt_status *st)
{
    const sm_type *t = i < s->n_in ? sm_shape_in(s, i) : NULL;
    *st = SMELT_OK;
    if (!t)
        return NULL;
    if ((*st = sm_check_same_type(s, t, what, x, "X")) == SMELT_OK)
        *st = sm_check_rank(s, t, what, rank, rank);
    return t->ndim == rank ? t : NULL;
}

/* Direction, layout, hidden size and activations from the attributes. */
static smelt_status rnn_attrs(sm_shape_ctx *s, const sm_rnn_kind *k,
                              rnn_dims *d)
{
    const char *dir = sm_attrs_string(&s->attrs, "direction", "forward");
    if (strcmp(dir, "forward") && strcmp(dir, "reverse") &&
        strcmp(dir, "bidirectional"))
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: unknown direction '%s' (forward, reverse, "
                      "bidirectional)",
                      s->op->name, dir);
    d->dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    d->gates = k->gates;
    int64_t layout = sm_attrs_int(&s->attrs, "layout", 0);
    if (layout != 0 && layout != 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: layout %lld must be 0 or 1", s->op->name,
                      (long long)layout);
    d->layout = (int)layout;
    d->seq = d->batch = d->in = d->hid = (sm_dim){-1, NULL};
    if (sm_attrs_find(&s->attrs, "hidden_size")) {
        int64_t h = sm_attrs_int(&s->attrs, "hidden_size", 0);
        if (h <= 0)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: hidden_size %lld must be positive", s->op->name,
                          (long long)h);
        d->hid.size = h;
    }
    const sm_attr *names = sm_attrs_find(&s->attrs, "activations");
    if (!names)
        return SMELT_OK;
    int want = k->n_act * d->dirs;
    if (names->kind != SM_ATTR_STRINGS || names->n != want)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: activations must name %d functions, it has %d",
                      s->op->name, want, names->n);
    for (int i = 0; i < names->n; i++)
        if (sm_rnn_act_find(names->v.strs[i]) < 0)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: unknown activation '%s'", s->op->name,
                          names->v.strs[i]);
    return SMELT_OK;
}

/* Checks a state input or output shape [dirs, batch, H] (or layout 1's
 * [batch, dirs, H]) against d, merging its batch dim. */
static smelt_status state_dims(sm_shape_ctx *s, rnn_dims *d, const sm_type *t,
                               const char *what)
{
    if (!t)
        return SMELT_OK;
    SM_TRY(expect(s, d, t->dims[d->layout], 0, what));
    SM_TRY(merge(s, &d->batch, t->dims[1 - d->layout], "the batch size"));
    return merge(s, &d->hid, t->dims[2], "the hidden size");
}

/* Gathers and cross-checks the dims of every input. */
static smelt_status rnn_inputs(sm_shape_ctx *s, int kind, rnn_dims *d,
                               const sm_type **x)
{
    const sm_rnn_kind *k = &sm_rnn_kinds[kind];
    const sm_type *w, *r, *t;
    smelt_status st;
    SM_TRY(sm_movement_input(s, 0, x));
    SM_TRY(sm_movement_input(s, 1, &w));
    SM_TRY(sm_movement_input(s, 2, &r));
    SM_TRY(sm_check_float_type(s, *x, "X"));
    SM_TRY(sm_check_rank(s, *x, "X", 3, 3));
    SM_TRY(rnn_attrs(s, k, d));
    if ((*x)->ndim == 3) {
        d->seq = (*x)->dims[d->layout];
        d->batch = (*x)->dims[1 - d->layout];
        d->in = (*x)->dims[2];
    }
    const sm_type *rt = float_in(s, 2, 3, "R", *x, &st);
    SM_TRY(st);
    if (rt)
        SM_TRY(merge(s, &d->hid, rt->dims[2], "the hidden size"));
    const sm_type *wt = float_in(s, 1, 3, "W", *x, &st);
    SM_TRY(st);
    if (wt) {
        SM_TRY(merge(s, &d->in, wt->dims[2], "the input size"));
        SM_TRY(expect(s, d, wt->dims[0], 0, "the direction dim of W"));
        SM_TRY(expect(s, d, wt->dims[1], d->gates, "dim 1 of W"));
    }
    if (rt) {
        SM_TRY(expect(s, d, rt->dims[0], 0, "the direction dim of R"));
        SM_TRY(expect(s, d, rt->dims[1], d->gates, "dim 1 of R"));
    }
    if ((t = float_in(s, 3, 2, "B", *x, &st))) {
        SM_TRY(expect(s, d, t->dims[0], 0, "the direction dim of B"));
        SM_TRY(expect(s, d, t->dims[1], 2 * d->gates, "dim 1 of B"));
    }
    SM_TRY(st);
    if ((t = 4 < s->n_in ? sm_shape_in(s, 4) : NULL)) {
        SM_TRY(sm_check_index_type(s, t, "sequence_lens"));
        SM_TRY(sm_check_rank(s, t, "sequence_lens", 1, 1));
        if (t->ndim == 1)
            SM_TRY(merge(s, &d->batch, t->dims[0], "the batch size"));
    }
    t = float_in(s, 5, 3, "initial_h", *x, &st);
    SM_TRY(st);
    SM_TRY(state_dims(s, d, t, "the direction dim of initial_h"));
    if (kind != SM_RNN_LSTM)
        return SMELT_OK;
    t = float_in(s, 6, 3, "initial_c", *x, &st);
    SM_TRY(st);
    SM_TRY(state_dims(s, d, t, "the direction dim of initial_c"));
    if ((t = float_in(s, 7, 2, "P", *x, &st))) {
        SM_TRY(expect(s, d, t->dims[0], 0, "the direction dim of P"));
        SM_TRY(expect(s, d, t->dims[1], 3, "dim 1 of P"));
    }
    return st;
}

/* Known sequence lengths must lie in [0, seq]. */
static smelt_status check_lens(sm_shape_ctx *s, const rnn_dims *d)
{
    const sm_tensor *lens =
        4 < s->n_in && sm_shape_in(s, 4) ? s->in[4].data : NULL;
    for (int64_t b = 0; lens && d->seq.size >= 0 && b < lens->numel; b++) {
        int64_t len = sm_load_i64(lens->dtype, lens->data, b);
        if (len < 0 || len > d->seq.size)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: sequence length %lld of batch %lld is outside "
                          "[0, %lld]",
                          s->op->name, (long long)len, (long long)b,
                          (long long)d->seq.size);
    }
    return SMELT_OK;
}

static smelt_status rnn_shape(sm_shape_ctx *s, int kind)
{
    const sm_type *x;
    rnn_dims d;
    SM_TRY(rnn_inputs(s, kind, &d, &x));
    SM_TRY(check_lens(s, &d));
    sm_dim dirs = {d.dirs, NULL};
    for (int j = 0; j < s->n_out; j++) {
        sm_type *o = &s->out[j];
        if (j == 0) {
            sm_movement_unknown(o, x->dtype, 4);
            o->dims[0] = d.layout ? d.batch : d.seq;
            o->dims[1] = d.layout ? d.seq : dirs;
            o->dims[2] = d.layout ? dirs : d.batch;
            o->dims[3] = d.hid;
        } else {
            sm_movement_unknown(o, x->dtype, 3);
            o->dims[0] = d.layout ? d.batch : dirs;
            o->dims[1] = d.layout ? dirs : d.batch;
            o->dims[2] = d.hid;
        }
        SM_TRY(sm_movement_check_size(s, o));
    }
    return SMELT_OK;
}

smelt_status sm_shape_rnn(sm_shape_ctx *s)
{
    return rnn_shape(s, SM_RNN_RNN);
}

smelt_status sm_shape_gru(sm_shape_ctx *s)
{
    return rnn_shape(s, SM_RNN_GRU);
}

smelt_status sm_shape_lstm(sm_shape_ctx *s)
{
    return rnn_shape(s, SM_RNN_LSTM);
}

/* Per time step, batch row and direction: the input and recurrent
 * products (2 flops per multiply-add) of every gate, plus a few flops
 * per gate for the activations and the state update. */
void sm_cost_rnn(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0), *w = sm_shape_in(s, 1);
    const sm_type *r = sm_shape_in(s, 2);
    double steps = 1, gh = 1, in = 1, hid = 1, dirs = 1;
    if (x && x->ndim == 3)
        for (int d = 0; d < 2; d++)
            steps *= x->dims[d].size > 0 ? (double)x->dims[d].size : 1;
    if (w && w->ndim == 3) {
        dirs = w->dims[0].size > 0 ? (double)w->dims[0].size : 1;
        gh = w->dims[1].size > 0 ? (double)w->dims[1].size : 1;
        in = w->dims[2].size > 0 ? (double)w->dims[2].size : 1;
    }
    if (r && r->ndim == 3 && r->dims[2].size > 0)
        hid = (double)r->dims[2].size;
    c->flops = steps * dirs * gh * (2 * (in + hid) + 8);
    c->bytes_read = 0;
    c->bytes_write = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            c->bytes_read += sm_type_bytes(s->in[i].type);
    for (int j = 0; j < s->n_out; j++)
        c->bytes_write += sm_type_bytes(&s->out[j]);
}
