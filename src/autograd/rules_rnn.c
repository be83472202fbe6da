/*
 * rules_rnn.c - the gradient rules of RNN, GRU and LSTM (docs/AUTOGRAD.md,
 * "Rules: Det, recurrent ops, sampling").
 *
 * A recurrent op is its cell applied step after step. The rule rebuilds
 * that from ops of the table, inside the backward block: the sequence
 * unrolled (its length must be known), each step's gates as MatMuls,
 * Slices, the named activations and elementwise ops, exactly as the
 * reference kernel (kernels/ref/rnn.c) computes them - every direction,
 * layout, clip, activation with its alpha and beta, sequence_lens,
 * initial states, LSTM peepholes and input_forget, GRU's
 * linear_before_reset. The engine then differentiates that copy from
 * the gradients of the op's outputs, like any other graph (rebuild.h).
 *
 * Steps past a row's sequence length keep the state (Where on a mask
 * Less(t, sequence_lens)) and give Y zero; a reverse direction walks t
 * from the last step down, which with the same mask starts each row at
 * its own last step, as the kernel does.
 */
#include <string.h>

#include "autograd/build_move.h"
#include "autograd/rebuild.h"
#include "autograd/rules_nn.h"
#include "autograd/rules_norm.h"
#include "core/alloc.h"
#include "kernels/ref/rnn.h"

/* Longest sequence the rule unrolls: each step is a few tens of nodes. */
#define RNN_MAX_SEQ 4096

/* The forward node read: attributes, sizes and the leaves the copy is
 * built on (NULL: input absent). */
typedef struct rnn_spec {
    const sm_rnn_kind *kind;
    int dirs, reverse, layout, lbr, input_forget, has_clip;
    double clip;
    int64_t seq, batch, hid;
    sm_rnn_act f[6];
    sm_value *x, *w, *r, *b, *lens, *h0, *c0, *p; /* layout 0 */
} rnn_spec;

/* The state of one direction while the steps are built. */
typedef struct rnn_dir {
    sm_value *xw;   /* [seq, batch, G*H]: X W^T and the biases added there */
    sm_value *rt;   /* [H, G*H]: R^T */
    sm_value *rb_h; /* GRU: [H], the recurrence bias of the h gate */
    sm_value *pi, *po, *pf; /* LSTM peepholes [H] */
    sm_value *h, *c;        /* [batch, H] */
    sm_value *mask;         /* [seq, batch, 1] bool, or NULL */
} rnn_dir;

static sm_value *gather_at(sm_grad_ctx *g, sm_value *v, int64_t i)
{
    return sm_g_op2(g, SM_OP_Gather, v,
                    sm_g_scalar(g, SMELT_DTYPE_I64, (double)i));
}

/* v[..., a:b] along axis. */
static sm_value *cut(sm_grad_ctx *g, sm_value *v, int64_t axis, int64_t a,
                     int64_t b)
{
    return sm_gn_slice(g, v, &axis, &a, &b, 1);
}

static sm_value *unsq(sm_grad_ctx *g, sm_value *v, int64_t axis)
{
    return nn_unsqueeze(g, v, &axis, 1);
}

/* One-input op with a float attribute alpha (and beta when given). */
static sm_value *op_ab(sm_grad_ctx *g, sm_op op, sm_value *x, double alpha,
                       const double *beta)
{
    sm_node *nd = sm_g_node(g, op, 1, &x, 1);
    if (nd && (!sm_node_set_float(nd, "alpha", alpha) ||
               (beta && !sm_node_set_float(nd, "beta", *beta))))
        return nn_nomem(g);
    return sm_g_done(g, nd);
}

/* The activation f applied to x, from ops of the table. */
static sm_value *act(sm_grad_ctx *g, const sm_rnn_act *f, sm_value *x)
{
    switch (f->kind) {
    case SM_RNN_ACT_RELU: return sm_g_op1(g, SM_OP_Relu, x);
    case SM_RNN_ACT_TANH: return sm_g_op1(g, SM_OP_Tanh, x);
    case SM_RNN_ACT_SIGMOID: return sm_g_op1(g, SM_OP_Sigmoid, x);
    case SM_RNN_ACT_AFFINE:
        return nn_add(g, nn_scale(g, x, f->alpha),
                      sm_g_scalar_like(g, x, f->beta));
    case SM_RNN_ACT_LEAKYRELU:
        return op_ab(g, SM_OP_LeakyRelu, x, f->alpha, NULL);
    case SM_RNN_ACT_THRESHOLDEDRELU:
        return op_ab(g, SM_OP_ThresholdedRelu, x, f->alpha, NULL);
    case SM_RNN_ACT_SCALEDTANH:
        return nn_scale(g, sm_g_op1(g, SM_OP_Tanh, nn_scale(g, x, f->beta)),
                        f->alpha);
    case SM_RNN_ACT_HARDSIGMOID:
        return op_ab(g, SM_OP_HardSigmoid, x, f->alpha, &f->beta);
    case SM_RNN_ACT_ELU: return op_ab(g, SM_OP_Elu, x, f->alpha, NULL);
    case SM_RNN_ACT_SOFTSIGN: return sm_g_op1(g, SM_OP_Softsign, x);
    case SM_RNN_ACT_SOFTPLUS: return sm_g_op1(g, SM_OP_Softplus, x);
    case SM_RNN_ACT_COUNT: break;
    }
    sm_g_fail(g, SMELT_ERR_UNSUPPORTED, "unknown activation");
    return NULL;
}

/* f(clip(x)): the gates' inputs are clipped before their activation. */
static sm_value *gate(sm_grad_ctx *g, const rnn_spec *s, const sm_rnn_act *f,
                      sm_value *x)
{
    if (s->has_clip)
        x = sm_g_op3(g, SM_OP_Clip, x, sm_g_scalar_like(g, x, -s->clip),
                     sm_g_scalar_like(g, x, s->clip));
    return act(g, f, x);
}

/* Reads the node's attributes and sizes into s; fails naming what is not
 * supported. */
static smelt_status read_spec(sm_grad_ctx *g, int kind, rnn_spec *s)
{
    const sm_node *n = g->n;
    sm_attrs at = sm_node_attrs(n);
    s->kind = &sm_rnn_kinds[kind];
    const char *dir = sm_attrs_string(&at, "direction", "forward");
    s->dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    s->reverse = !strcmp(dir, "reverse");
    s->layout = (int)sm_attrs_int(&at, "layout", 0);
    s->lbr = sm_attrs_int(&at, "linear_before_reset", 0) != 0;
    s->input_forget = sm_attrs_int(&at, "input_forget", 0) != 0;
    s->has_clip = sm_attrs_find(&at, "clip") != NULL;
    s->clip = sm_attrs_float(&at, "clip", 0);
    if (s->layout != 0 && s->layout != 1)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED, "layout %d", s->layout);
    const sm_type *x = &n->in[0]->type, *r = &n->in[2]->type;
    if (x->ndim != 3 || r->ndim != 3)
        return sm_g_fail(g, SMELT_ERR_SHAPE, "X and R must have rank 3");
    s->seq = x->dims[s->layout].size;
    s->batch = x->dims[1 - s->layout].size;
    s->hid = r->dims[2].size;
    if (s->seq < 0 || s->batch < 0 || s->hid < 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the sequence length, batch and hidden sizes must be "
                         "known before running: the rule unrolls the sequence "
                         "(bind them with --dim)");
    if (s->seq > RNN_MAX_SEQ)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "sequences longer than %d steps (the rule unrolls "
                         "them)",
                         RNN_MAX_SEQ);
    smelt_status st = sm_rnn_read_acts(g->ctx, sm_op_info_get(n->op)->name, &at,
                                       s->kind, s->dirs, s->f);
    if (st != SMELT_OK)
        g->st = st;
    return st;
}

/* v, a [batch, dirs, ...] state of layout 1, as layout 0's [dirs, batch,
 * ...] (and back: the swap is its own inverse). */
static sm_value *swap_layout(sm_grad_ctx *g, const rnn_spec *s, sm_value *v)
{
    return s->layout && v ? sm_gn_swap01(g, v) : v;
}

/* The weights of direction d: X W^T plus the input-side biases for every
 * step at once, R^T, the biases left for the steps and the peepholes. */
static void dir_setup(sm_grad_ctx *g, const rnn_spec *s, int d, rnn_dir *o)
{
    int64_t h = s->hid, gh = s->kind->gates * h;
    const int64_t t2[2] = {1, 0};
    sm_value *wt = sm_gn_transpose(g, gather_at(g, s->w, d), t2);
    o->rt = sm_gn_transpose(g, gather_at(g, s->r, d), t2);
    o->xw = sm_g_op2(g, SM_OP_MatMul, s->x, wt);
    o->rb_h = NULL;
    if (s->b) {
        sm_value *bd = gather_at(g, s->b, d);
        sm_value *wb = cut(g, bd, 0, 0, gh), *rb = cut(g, bd, 0, gh, 2 * gh);
        if (s->kind->gates == 3) { /* GRU: Rb_h stays with the recurrence */
            o->rb_h = cut(g, rb, 0, 2 * h, 3 * h);
            rb = cut(g, rb, 0, 0, 2 * h);
            sm_value *pad[2] = {rb, sm_g_zeros_like(g, o->rb_h)};
            rb = mv_concat(g, pad, 2, 0);
        }
        o->xw = nn_add(g, o->xw, nn_add(g, wb, rb));
    }
    o->pi = o->po = o->pf = NULL;
    if (s->p) {
        sm_value *pd = gather_at(g, s->p, d);
        o->pi = cut(g, pd, 0, 0, h);
        o->po = cut(g, pd, 0, h, 2 * h);
        o->pf = cut(g, pd, 0, 2 * h, 3 * h);
    }
    int64_t dims[2] = {s->batch, h};
    sm_value *zero = NULL;
    if (!s->h0 || (s->kind->gates == 4 && !s->c0)) {
        double *z = sm_calloc((size_t)(s->batch * h + 1), sizeof *z);
        zero = z ? sm_gn_const(g, g->n->in[0]->type.dtype, 2, dims, z)
                 : nn_nomem(g);
        sm_free(z);
    }
    o->h = s->h0 ? gather_at(g, s->h0, d) : zero;
    o->c = s->c0 ? gather_at(g, s->c0, d) : zero;
}

/* The mask [seq, batch, 1]: step t of row b is inside its sequence. */
static sm_value *length_mask(sm_grad_ctx *g, const rnn_spec *s)
{
    double *t = sm_calloc((size_t)(s->seq + 1), sizeof *t);
    if (!t)
        return nn_nomem(g);
    for (int64_t i = 0; i < s->seq; i++)
        t[i] = (double)i;
    int64_t dims[2] = {s->seq, 1};
    sm_value *steps = sm_gn_const(g, SMELT_DTYPE_I64, 2, dims, t);
    sm_free(t);
    sm_value *lens = unsq(g, sm_g_cast(g, s->lens, SMELT_DTYPE_I64), 0);
    return unsq(g, sm_g_op2(g, SM_OP_Less, steps, lens), 2);
}

/* One step's new state from gates = x W^T + biases + h R^T (RNN, LSTM)
 * or the GRU cell; *c_out gets LSTM's new cell state. */
static sm_value *cell(sm_grad_ctx *g, const rnn_spec *s, const rnn_dir *o,
                      const sm_rnn_act *f, sm_value *xt, sm_value **c_out)
{
    int64_t h = s->hid;
    sm_value *hp = o->h;
    if (s->kind->gates == 1)
        return gate(g, s, &f[0],
                    nn_add(g, xt, sm_g_op2(g, SM_OP_MatMul, hp, o->rt)));
    if (s->kind->gates == 3) { /* GRU: z, r, h */
        sm_value *rt_zr = cut(g, o->rt, 1, 0, 2 * h);
        sm_value *rt_h = cut(g, o->rt, 1, 2 * h, 3 * h);
        sm_value *zr = nn_add(g, cut(g, xt, 1, 0, 2 * h),
                              sm_g_op2(g, SM_OP_MatMul, hp, rt_zr));
        sm_value *z = gate(g, s, &f[0], cut(g, zr, 1, 0, h));
        sm_value *r = gate(g, s, &f[0], cut(g, zr, 1, h, 2 * h));
        sm_value *hr;
        if (s->lbr) {
            hr = sm_g_op2(g, SM_OP_MatMul, hp, rt_h);
            hr = nn_mul(g, r, o->rb_h ? nn_add(g, hr, o->rb_h) : hr);
        } else {
            hr = sm_g_op2(g, SM_OP_MatMul, nn_mul(g, r, hp), rt_h);
            hr = o->rb_h ? nn_add(g, hr, o->rb_h) : hr;
        }
        sm_value *hh =
            gate(g, s, &f[1], nn_add(g, cut(g, xt, 1, 2 * h, 3 * h), hr));
        return nn_add(g, hh, nn_mul(g, z, nn_sub(g, hp, hh)));
    }
    /* LSTM: i, o, f, c; peepholes i, o, f on the cell state */
    sm_value *gs = nn_add(g, xt, sm_g_op2(g, SM_OP_MatMul, hp, o->rt));
    sm_value *gi = cut(g, gs, 1, 0, h), *go = cut(g, gs, 1, h, 2 * h);
    sm_value *gf = cut(g, gs, 1, 2 * h, 3 * h);
    sm_value *gc = cut(g, gs, 1, 3 * h, 4 * h);
    if (o->pi) {
        gi = nn_add(g, gi, nn_mul(g, o->pi, o->c));
        gf = nn_add(g, gf, nn_mul(g, o->pf, o->c));
    }
    sm_value *vi = gate(g, s, &f[0], gi);
    sm_value *vf = s->input_forget ? nn_sub(g, sm_g_scalar_like(g, vi, 1), vi)
                                   : gate(g, s, &f[0], gf);
    sm_value *cn =
        nn_add(g, nn_mul(g, vf, o->c), nn_mul(g, vi, gate(g, s, &f[1], gc)));
    if (o->po)
        go = nn_add(g, go, nn_mul(g, o->po, cn));
    *c_out = cn;
    return nn_mul(g, gate(g, s, &f[0], go), act(g, &f[2], cn));
}

/* Direction d unrolled: its Y [seq, 1, batch, H], final h and c [1,
 * batch, H] in ys, yh, yc. */
static void run_dir(sm_grad_ctx *g, const rnn_spec *s, int d, sm_value *mask,
                    sm_value **ys, sm_value **yh, sm_value **yc)
{
    rnn_dir o;
    dir_setup(g, s, d, &o);
    const sm_rnn_act *f = &s->f[d * s->kind->n_act];
    int rev = s->reverse || d == 1;
    sm_value **steps = sm_calloc((size_t)(s->seq + 1), sizeof *steps);
    if (!steps) {
        nn_nomem(g);
        return;
    }
    for (int64_t k = 0; k < s->seq && g->st == SMELT_OK; k++) {
        int64_t t = rev ? s->seq - 1 - k : k;
        sm_value *cn = NULL;
        sm_value *hn = cell(g, s, &o, f, gather_at(g, o.xw, t), &cn);
        sm_value *y = hn;
        if (mask) {
            sm_value *m = gather_at(g, mask, t);
            y = sm_g_op3(g, SM_OP_Where, m, hn, sm_g_scalar_like(g, hn, 0));
            hn = sm_g_op3(g, SM_OP_Where, m, hn, o.h);
            if (cn)
                cn = sm_g_op3(g, SM_OP_Where, m, cn, o.c);
        }
        o.h = hn;
        if (cn)
            o.c = cn;
        steps[t] = unsq(g, y, 0);
    }
    if (g->st == SMELT_OK)
        *ys = unsq(g, mv_concat(g, steps, (int)s->seq, 0), 1);
    sm_free(steps);
    *yh = unsq(g, o.h, 0);
    *yc = s->kind->gates == 4 ? unsq(g, o.c, 0) : NULL;
}

/* The op's outputs rebuilt from s's leaves, in the forward node's
 * layout: out[0] Y, out[1] Y_h, out[2] Y_c (NULL where not built). */
static void rebuild(sm_grad_ctx *g, const rnn_spec *s, sm_value **out)
{
    sm_value *ys[2] = {NULL, NULL}, *yh[2] = {NULL, NULL},
             *yc[2] = {NULL, NULL};
    sm_value *mask = s->lens ? length_mask(g, s) : NULL;
    for (int d = 0; d < s->dirs && g->st == SMELT_OK; d++)
        run_dir(g, s, d, mask, &ys[d], &yh[d], &yc[d]);
    if (g->st != SMELT_OK)
        return;
    sm_value *y = s->dirs == 2 ? mv_concat(g, ys, 2, 1) : ys[0];
    const int64_t y1[4] = {2, 0, 1, 3};
    out[0] = s->layout ? sm_gn_transpose(g, y, y1) : y;
    out[1] = swap_layout(g, s, s->dirs == 2 ? mv_concat(g, yh, 2, 0) : yh[0]);
    out[2] =
        yc[0] ? swap_layout(g, s, s->dirs == 2 ? mv_concat(g, yc, 2, 0) : yc[0])
              : NULL;
}

/* The rule: the op rebuilt on leaves of its float inputs (not
 * sequence_lens), differentiated from the outputs' gradients. */
static smelt_status rnn_rule(sm_grad_ctx *g, int kind)
{
    rnn_spec s = {0};
    SM_TRY(read_spec(g, kind, &s));
    const sm_node *n = g->n;
    sm_rebuild rb;
    sm_rebuild_begin(g, &rb, 0xffu & ~(1u << 4));
    sm_value *const *leaf = rb.leaf;
    const int64_t x1[3] = {1, 0, 2};
    s.x = s.layout ? sm_gn_transpose(g, leaf[0], x1) : leaf[0];
    s.w = leaf[1];
    s.r = leaf[2];
    s.b = leaf[3];
    s.lens = n->n_in > 4 ? n->in[4] : NULL;
    s.h0 = swap_layout(g, &s, leaf[5]);
    if (kind == SM_RNN_LSTM) {
        s.c0 = swap_layout(g, &s, leaf[6]);
        s.p = leaf[7];
    }
    sm_value *out[3] = {NULL, NULL, NULL};
    rebuild(g, &s, out);
    return sm_rebuild_finish(g, &rb, out, 3);
}

smelt_status sm_grad_rnn(sm_grad_ctx *g)
{
    return rnn_rule(g, SM_RNN_RNN);
}

smelt_status sm_grad_gru(sm_grad_ctx *g)
{
    return rnn_rule(g, SM_RNN_GRU);
}

smelt_status sm_grad_lstm(sm_grad_ctx *g)
{
    return rnn_rule(g, SM_RNN_LSTM);
}
