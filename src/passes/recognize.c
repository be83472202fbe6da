/*
 * recognize.c - the recognize pass: the decomposed forms PyTorch exports
 * for layer normalization and GELU become LayerNormalization and Gelu.
 *
 * LayerNormalization (torch.nn.LayerNorm exported below opset 17):
 *
 *   m = ReduceMean(x, axes)          d = Sub(x, m)
 *   p = Pow(d, 2) (or Mul(d, d))     v = ReduceMean(p, axes)
 *   s = Sqrt(Add(v, eps))            n = Div(d, s)
 *   y = Add(Mul(n, gamma), beta)     (Mul and Add optional)
 *
 * with the same trailing axes, keepdims = 1 and every intermediate used
 * only inside the pattern. gamma and beta must broadcast onto the
 * normalized dims; without the Mul a constant of ones is the scale.
 *
 * Gelu, erf form (torch.nn.GELU()):
 *   x * 0.5 * (1 + Erf(x / sqrt 2))      (or x * (1 / sqrt 2) inside)
 * Gelu, tanh form (GELU(approximate='tanh'), GPT-2's gelu_new):
 *   x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 * x^3 as Pow(x, 3) or x * x * x; the product x * 0.5 * (...) in any
 * association. Constants match within a relative 1e-4.
 *
 * A pattern matched in part is a near miss for --why-not-fused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "passes/pattern.h"

#define MAX_NODES 12

/* The nodes a match retires, in graph order. */
typedef struct match {
    sm_node *nodes[MAX_NODES];
    int n;
} match;

static void take(match *m, sm_node *n)
{
    if (m->n < MAX_NODES)
        m->nodes[m->n++] = n;
}

/* v's defining node when it applies op. */
static sm_node *def_op(sm_rw *rw, const sm_value *v, sm_op op)
{
    sm_node *d = v ? v->def : NULL;
    return d && d->op == op && !sm_rw_is_removed(rw, d) ? d : NULL;
}

/* For a binary node: the operand other than a constant scalar close to
 * want, or NULL. */
static sm_value *beside_scalar(const sm_node *n, double want)
{
    if (!n || n->n_in != 2)
        return NULL;
    if (sm_pat_scalar_is(n->in[1], want))
        return n->in[0];
    if (sm_pat_scalar_is(n->in[0], want))
        return n->in[1];
    return NULL;
}

/* The single user of v when it applies op. */
static sm_node *user_op(sm_rw *rw, const sm_value *v, sm_op op)
{
    sm_node *u = sm_pat_user(rw, v);
    return u && u->op == op ? u : NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The axes ReduceMean n reduces with keepdims = 1, normalized to
 * [0, rank) and sorted, from the attribute or a constant second input;
 * -1 when they are not known. */
static int reduce_axes(const sm_node *n, int rank, int64_t *ax)
{
    sm_attrs at = sm_node_attrs(n);
    if (sm_attrs_int(&at, "keepdims", 1) != 1)
        return -1;
    const int64_t *a;
    int cnt = sm_attrs_ints(&at, "axes", &a);
    if (cnt > SMELT_MAX_DIMS)
        return -1;
    if (cnt >= 0) {
        if (cnt) /* an empty list may come with no array */
            memcpy(ax, a, sizeof(int64_t) * (size_t)cnt);
    } else if (n->n_in > 1 && n->in[1] && n->in[1]->data &&
               n->in[1]->data->numel <= SMELT_MAX_DIMS &&
               !sm_dtype_is_float(n->in[1]->data->dtype)) {
        cnt = (int)n->in[1]->data->numel;
        for (int i = 0; i < cnt; i++)
            ax[i] = sm_load_i64(n->in[1]->data->dtype, n->in[1]->data->data, i);
    }
    if (cnt <= 0)
        return -1;
    for (int i = 0; i < cnt; i++) {
        if (ax[i] < -rank || ax[i] >= rank)
            return -1;
        ax[i] = ax[i] < 0 ? ax[i] + rank : ax[i];
    }
    qsort(ax, (size_t)cnt, sizeof *ax, cmp_i64);
    return cnt;
}

/* ---- LayerNormalization
 * ------------------------------------------------------ */

typedef struct ln_match {
    match m;
    sm_value *x, *gamma, *beta, *out;
    double eps;
    int axis;
} ln_match;

/* The trailing axis the two ReduceMeans share, or a reason. */
static const char *ln_axis(const sm_node *rm1, const sm_node *rm2,
                           const sm_value *x, int *axis)
{
    int rank = x->type.ndim;
    int64_t a1[SMELT_MAX_DIMS], a2[SMELT_MAX_DIMS];
    if (rank < 1)
        return "the input's rank is not known";
    int n1 = reduce_axes(rm1, rank, a1), n2 = reduce_axes(rm2, rank, a2);
    if (n1 < 0 || n1 != n2 || memcmp(a1, a2, sizeof(int64_t) * (size_t)n1))
        return "the two ReduceMeans do not reduce the same known axes with "
               "keepdims = 1";
    for (int i = 0; i < n1; i++)
        if (a1[i] != rank - n1 + i)
            return "the reduced axes are not the trailing ones";
    *axis = rank - n1;
    return NULL;
}

/* The variance half: s = Sqrt(Add(ReduceMean(d^2), eps)). */
static const char *ln_variance(sm_rw *rw, ln_match *lm, sm_value *d,
                               sm_value *s, sm_node **rm2)
{
    sm_node *sq = def_op(rw, s, SM_OP_Sqrt);
    sm_node *ae = sq ? def_op(rw, sq->in[0], SM_OP_Add) : NULL;
    if (!ae)
        return "the divisor is not Sqrt(Add(variance, epsilon))";
    sm_value *v = NULL;
    for (int k = 0; k < 2 && !v; k++)
        if (sm_pat_scalar(ae->in[k], &lm->eps))
            v = ae->in[1 - k];
    *rm2 = def_op(rw, v, SM_OP_ReduceMean);
    if (!*rm2)
        return "epsilon is not a constant scalar added to a ReduceMean";
    sm_value *p = (*rm2)->in[0];
    sm_node *pw = def_op(rw, p, SM_OP_Pow), *sqr = def_op(rw, p, SM_OP_Mul);
    int square = (pw && pw->in[0] == d && sm_pat_scalar_is(pw->in[1], 2.0)) ||
                 (sqr && sqr->in[0] == d && sqr->in[1] == d);
    if (!square)
        return "the variance does not average Pow(x - mean, 2)";
    if (sm_rw_uses(rw, p) != 1 || sm_rw_uses(rw, v) != 1 ||
        sm_rw_uses(rw, ae->out[0]) != 1 || sm_rw_uses(rw, s) != 1 ||
        sm_rw_uses(rw, d) != (pw ? 2 : 3))
        return "an intermediate of the variance has users outside the "
               "pattern";
    take(&lm->m, pw ? pw : sqr);
    take(&lm->m, *rm2);
    take(&lm->m, ae);
    take(&lm->m, sq);
    return NULL;
}

/* The shortest decimal that reads back as the same f32 as x, so that an
 * f32 epsilon of 1e-05 becomes the attribute 1e-05, not 9.99999975e-06. */
static double shortest_f32(double x)
{
    char buf[32];
    for (int digits = 1; digits < 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, x);
        double y = strtod(buf, NULL);
        if ((float)y == (float)x)
            return y;
    }
    return x;
}

/* gamma (or beta) fits the normalized dims from `axis` on. */
static int fits_normalized(const sm_value *t, const ln_match *lm)
{
    return t->type.dtype == lm->x->type.dtype &&
           t->type.ndim <= lm->x->type.ndim - lm->axis &&
           sm_pat_fits_onto(&t->type, &lm->x->type);
}

/* The optional Mul(., gamma) and Add(., beta) after the Div. */
static void ln_affine(sm_rw *rw, ln_match *lm)
{
    sm_node *mul = user_op(rw, lm->out, SM_OP_Mul);
    sm_value *g = mul ? sm_pat_other(mul, lm->out) : NULL;
    if (!g || !fits_normalized(g, lm))
        return;
    take(&lm->m, mul);
    lm->gamma = g;
    lm->out = mul->out[0];
    sm_node *add = user_op(rw, lm->out, SM_OP_Add);
    sm_value *b = add ? sm_pat_other(add, lm->out) : NULL;
    if (!b || !fits_normalized(b, lm))
        return;
    take(&lm->m, add);
    lm->beta = b;
    lm->out = add->out[0];
}

/* Matches the pattern ending in Div node dv. NULL when it matched; the
 * reason otherwise (*partial tells whether enough matched to call it a
 * near miss). */
static const char *ln_match_at(sm_rw *rw, sm_node *dv, ln_match *lm,
                               int *partial)
{
    *partial = 0;
    sm_node *sub = def_op(rw, dv->in[0], SM_OP_Sub);
    sm_node *rm1 = sub ? def_op(rw, sub->in[1], SM_OP_ReduceMean) : NULL;
    if (!rm1 || rm1->in[0] != sub->in[0])
        return "no x - ReduceMean(x) numerator";
    *partial = 1;
    lm->x = sub->in[0];
    if (!sm_pat_is_float(lm->x))
        return "x is not a float tensor";
    if (sm_rw_uses(rw, rm1->out[0]) != 1)
        return "the mean has users outside the pattern";
    take(&lm->m, rm1);
    take(&lm->m, sub);
    sm_node *rm2;
    const char *why = ln_variance(rw, lm, sub->out[0], dv->in[1], &rm2);
    if (!why)
        why = ln_axis(rm1, rm2, lm->x, &lm->axis);
    if (why)
        return why;
    take(&lm->m, dv);
    lm->out = dv->out[0];
    ln_affine(rw, lm);
    if (!lm->gamma) {
        const sm_type *t = &lm->x->type;
        for (int d = lm->axis; d < t->ndim; d++)
            if (t->dims[d].size < 0)
                return "no Mul by a scale follows and the normalized dims "
                       "are not known";
    }
    return NULL;
}

/* A constant of ones over x's dims from axis on. */
static sm_value *ones(sm_rw *rw, const ln_match *lm, sm_block *b)
{
    const sm_type *t = &lm->x->type;
    int64_t dims[SMELT_MAX_DIMS];
    int nd = t->ndim - lm->axis;
    for (int d = 0; d < nd; d++)
        dims[d] = t->dims[lm->axis + d].size;
    sm_tensor *o;
    if (sm_tensor_new(NULL, t->dtype, nd, dims, &o) != SMELT_OK)
        return NULL;
    for (int64_t i = 0; i < o->numel; i++)
        sm_store_f64(o->dtype, o->data, i, 1.0);
    return sm_rw_add_const(rw, b, "ln_scale", o);
}

static smelt_status layernorm_at(sm_pass_ctx *pc, sm_rw *rw, sm_node *dv)
{
    ln_match lm = {0};
    int partial;
    const char *why = ln_match_at(rw, dv, &lm, &partial);
    if (why) {
        if (partial)
            sm_pat_miss(pc, dv, "LayerNormalization pattern stops: %s", why);
        return SMELT_OK;
    }
    sm_node *last = lm.m.nodes[lm.m.n - 1];
    sm_value *scale = lm.gamma ? lm.gamma : ones(rw, &lm, dv->owner);
    if (!scale)
        return sm_err_nomem(pc->ctx);
    sm_value *in[3] = {lm.x, scale, lm.beta};
    sm_node *ln =
        sm_rw_node_new(rw, dv->owner, last, SM_OP_LayerNormalization,
                       last->name, lm.beta ? 3 : 2, in, 1, &lm.out->name);
    if (!ln || !sm_node_set_int(ln, "axis", lm.axis) ||
        !sm_node_set_float(ln, "epsilon",
                           lm.x->type.dtype == SMELT_DTYPE_F64
                               ? lm.eps
                               : shortest_f32(lm.eps)))
        return sm_err_nomem(pc->ctx);
    ln->out[0]->type = lm.out->type;
    SM_TRY(sm_rw_infer_node(rw, ln));
    sm_pat_replace(rw, ln, lm.out, lm.m.nodes, lm.m.n);
    pc->stats->fused += lm.m.n;
    pc->stats->changed = 1;
    return SMELT_OK;
}

/* ---- Gelu
 * --------------------------------------------------------------------- */

/* The tail x * 0.5 * u in any association, u = 1 + f; the root of the
 * product, or NULL. */
static sm_node *half_product(sm_rw *rw, sm_value *u, sm_value *x, match *m)
{
    sm_node *m1 = user_op(rw, u, SM_OP_Mul);
    sm_value *o = m1 ? sm_pat_other(m1, u) : NULL;
    if (!o)
        return NULL;
    if (o == x || sm_pat_scalar_is(o, 0.5)) { /* (x * u) * 0.5, (u*0.5) * x */
        sm_node *m2 = user_op(rw, m1->out[0], SM_OP_Mul);
        sm_value *o2 = m2 ? sm_pat_other(m2, m1->out[0]) : NULL;
        if (!o2 || (o == x ? !sm_pat_scalar_is(o2, 0.5) : o2 != x))
            return NULL;
        take(m, m1);
        take(m, m2);
        return m2;
    }
    sm_node *h = def_op(rw, o, SM_OP_Mul); /* (x * 0.5) * u */
    if (!h || sm_pat_user(rw, o) != m1 || beside_scalar(h, 0.5) != x)
        return NULL;
    take(m, h);
    take(m, m1);
    return m1;
}

/* x^3 as Pow(x, 3) or x * x * x; the nodes are taken into m. */
static int cube_of(sm_rw *rw, const sm_value *c, sm_value **x, match *m)
{
    sm_node *pw = def_op(rw, c, SM_OP_Pow);
    if (pw && sm_pat_scalar_is(pw->in[1], 3.0) && sm_rw_uses(rw, c) == 1) {
        *x = pw->in[0];
        take(m, pw);
        return 1;
    }
    sm_node *mul = def_op(rw, c, SM_OP_Mul);
    if (!mul || sm_rw_uses(rw, c) != 1)
        return 0;
    for (int k = 0; k < 2; k++) {
        sm_node *sq = def_op(rw, mul->in[k], SM_OP_Mul);
        sm_value *v = mul->in[1 - k];
        if (sq && sq->in[0] == v && sq->in[1] == v &&
            sm_rw_uses(rw, mul->in[k]) == 1) {
            *x = v;
            take(m, sq);
            take(m, mul);
            return 1;
        }
    }
    return 0;
}

/* sqrt(2/pi) * (x + 0.044715 * x^3) feeding Tanh node t; x, or NULL. */
static sm_value *tanh_argument(sm_rw *rw, const sm_node *t, match *m)
{
    sm_node *zm = def_op(rw, t->in[0], SM_OP_Mul);
    sm_value *inner = beside_scalar(zm, 0.7978845608028654);
    sm_node *add = inner ? def_op(rw, inner, SM_OP_Add) : NULL;
    if (!add || sm_rw_uses(rw, t->in[0]) != 1 || sm_rw_uses(rw, inner) != 1)
        return NULL;
    for (int k = 0; k < 2; k++) {
        sm_node *cm = def_op(rw, add->in[k], SM_OP_Mul);
        sm_value *cube = beside_scalar(cm, 0.044715), *x = NULL;
        if (!cube || sm_rw_uses(rw, add->in[k]) != 1)
            continue;
        match save = *m;
        if (cube_of(rw, cube, &x, m) && x == add->in[1 - k]) {
            take(m, cm);
            take(m, add);
            take(m, zm);
            return x;
        }
        *m = save;
    }
    return NULL;
}

/* x / sqrt 2 (or x * (1/sqrt 2)) feeding Erf node e; x, or NULL. */
static sm_value *erf_argument(sm_rw *rw, const sm_node *e, match *m)
{
    sm_value *a = e->in[0];
    sm_node *dv = def_op(rw, a, SM_OP_Div), *ml = def_op(rw, a, SM_OP_Mul);
    sm_value *x = NULL;
    if (dv && sm_pat_scalar_is(dv->in[1], 1.4142135623730951))
        x = dv->in[0];
    else if (ml)
        x = beside_scalar(ml, 0.7071067811865476);
    if (!x || sm_rw_uses(rw, a) != 1)
        return NULL;
    take(m, dv ? dv : ml);
    return x;
}

/* Gelu around Erf or Tanh node f. */
static smelt_status gelu_at(sm_pass_ctx *pc, sm_rw *rw, sm_node *f)
{
    match m = {0};
    int tanh_form = f->op == SM_OP_Tanh;
    sm_value *x =
        tanh_form ? tanh_argument(rw, f, &m) : erf_argument(rw, f, &m);
    if (!x || !sm_pat_is_float(x))
        return SMELT_OK;
    const char *form = tanh_form ? "tanh" : "erf";
    take(&m, f);
    sm_node *one = user_op(rw, f->out[0], SM_OP_Add);
    if (!one || !beside_scalar(one, 1.0)) {
        sm_pat_miss(pc, f,
                    "Gelu (%s form) pattern stops: the %s is not followed by "
                    "its only user Add(., 1)",
                    form, sm_op_info_get(f->op)->name);
        return SMELT_OK;
    }
    take(&m, one);
    int uses = sm_rw_uses(rw, one->out[0]);
    if (uses != 1) {
        sm_pat_miss(pc, f,
                    "Gelu (%s form) pattern stops: 1 + %s(...) has %d "
                    "users",
                    form, sm_op_info_get(f->op)->name, uses);
        return SMELT_OK;
    }
    sm_node *root = half_product(rw, one->out[0], x, &m);
    if (!root) {
        sm_pat_miss(pc, f,
                    "Gelu (%s form) pattern stops: 1 + %s(...) is not "
                    "multiplied by x and 0.5, each intermediate used once",
                    form, sm_op_info_get(f->op)->name);
        return SMELT_OK;
    }
    sm_node *gl = sm_rw_node_new(rw, f->owner, root, SM_OP_Gelu, root->name, 1,
                                 &x, 1, &root->out[0]->name);
    if (!gl || (tanh_form && !sm_node_set_string(gl, "approximate", "tanh")))
        return sm_err_nomem(pc->ctx);
    gl->out[0]->type = root->out[0]->type;
    SM_TRY(sm_rw_infer_node(rw, gl));
    sm_pat_replace(rw, gl, root->out[0], m.nodes, m.n);
    pc->stats->fused += m.n;
    pc->stats->changed = 1;
    return SMELT_OK;
}

static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *x)
{
    if (x->op == SM_OP_Div)
        return layernorm_at(pc, rw, x);
    if (x->op == SM_OP_Erf || x->op == SM_OP_Tanh)
        return gelu_at(pc, rw, x);
    return SMELT_OK;
}

smelt_status sm_pass_recognize(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_for_nodes(pc, g, visit);
}
