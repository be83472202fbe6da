/*
 * fuse_attention.c - the fuse_attention pass: scaled dot-product attention
 * as exporters write it becomes one Attention node (docs/ATTENTION.md).
 *
 * The core, found from each Softmax on the last axis:
 *
 *   s = MatMul(Q', Kt')            Q' = Q scaled, Kt' = K^T scaled
 *   s = s * c  or  s / c           any number of constant scalars
 *   s = s + mask                   an additive float mask, or
 *   s = Where(c, -inf, s)          masked_fill (c true = hidden), or
 *   s = Where(c, s, -inf)          (c true = visible); a finite fill
 *                                  <= -1e30 (float min) is additive
 *   p = Softmax(s, axis = -1)
 *   o = MatMul(p, V)
 *
 * with every intermediate read only by the next step (a second reader of
 * the scores or probabilities keeps them). The scale may sit on Q, on K
 * (before or after its transpose) or on the scores, as Mul or Div, or on
 * several of them: the node's scale is the product. K^T is a Transpose of
 * K (undone by reading K directly, or a Transpose with the composed
 * permutation) or a value already laid out [.., D, Tk] (a Transpose is
 * inserted). At most two mask steps: one may be a constant that is
 * exactly the causal pattern for the lengths (bottom-right aligned:
 * j <= i + Tk - Tq), which becomes causal = 1; the other is the mask.
 *
 * The core may be 4-D ([B, H, T, D], heads already split), 3-D ([B*H,
 * T, D], as nn.MultiheadAttention exports it) or 2-D; 3-D and 2-D cores
 * get Unsqueeze nodes (views in plans) to [1, N, T, D] and a Squeeze
 * after. Batch dims must agree; K and V may have fewer heads than Q when
 * they are 1 (MatMul's broadcast) or when they are repeated per query
 * head by Unsqueeze + Expand + Reshape (repeat_kv, repeat_interleave) or
 * a Tile of one head: then the node reads the unrepeated K and V.
 *
 * Each Softmax that is partly such a core but fails a condition is a near
 * miss for --why-not-fused, with the reason.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "ir/infer.h"
#include "passes/pattern.h"

#define MAX_DEAD 24
#define MAX_MASKS 2

/* One mask step between the scores and the Softmax. */
typedef struct mask_step {
    sm_node *node;   /* the Add or Where */
    sm_value *value; /* the mask operand (Add) or condition (Where) */
    int kind;        /* MASK_ADD, MASK_HIDE (cond true = hidden), MASK_KEEP */
    double fill;     /* Where's fill: -inf, or finite <= -1e30 */
} mask_step;

enum { MASK_ADD, MASK_HIDE, MASK_KEEP };

/* What a match found. */
typedef struct attn_match {
    sm_node *softmax, *qk, *pv;
    sm_value *q, *k, *v; /* the node's inputs before any rank change */
    sm_value *k_orig;    /* K as resolved, before undoing a repeat */
    int64_t k_perm[SMELT_MAX_DIMS];
    int k_needs_transpose; /* 0: k is K; 1: Transpose(kt_src or k, k_perm) */
    double scale;
    mask_step masks[MAX_MASKS];
    int n_masks;
    int rank;
    sm_node *dead[MAX_DEAD]; /* nodes retired, in graph order */
    int n_dead;
} attn_match;

static void retire(attn_match *m, sm_node *n)
{
    if (m->n_dead < MAX_DEAD)
        m->dead[m->n_dead++] = n;
}

/* v's defining node when it applies op and is still there. */
static sm_node *def_op(sm_rw *rw, const sm_value *v, sm_op op)
{
    sm_node *d = v ? v->def : NULL;
    return d && d->op == op && !sm_rw_is_removed(rw, d) ? d : NULL;
}

/*
 * When node n is Mul(x, c), Mul(c, x) or Div(x, c) with c a constant
 * scalar that leaves x's shape as it is (a [1, 1, 1, 1] c would raise a
 * 3-D x's rank): x into *x and the factor (c or 1/c) into *f. Returns 0
 * otherwise.
 */
static int scalar_step(const sm_node *n, const sm_value *out, sm_value **x,
                       double *f)
{
    if (!n || (n->op != SM_OP_Mul && n->op != SM_OP_Div) || n->n_in != 2)
        return 0;
    for (int k = 0; k < 2; k++) {
        double c;
        const sm_value *cv = n->in[1 - k];
        if (!sm_pat_scalar(cv, &c) || cv->type.ndim > out->type.ndim)
            continue;
        if (n->op == SM_OP_Div && k == 1)
            return 0; /* c / x is not a scaling */
        if (n->op == SM_OP_Div && (c == 0 || !isfinite(c)))
            return 0;
        if (!sm_pat_same_shape(&n->in[k]->type, &out->type))
            return 0;
        *x = n->in[k];
        *f = n->op == SM_OP_Div ? 1.0 / c : c;
        return isfinite(*f);
    }
    return 0;
}

/* Walks back from v through single-use scalings, multiplying their
 * factors into m->scale and retiring them; the value before them. */
static sm_value *strip_scales(sm_rw *rw, attn_match *m, sm_value *v,
                              sm_node **taken, int *n_taken)
{
    for (;;) {
        sm_node *d = v->def;
        sm_value *x;
        double f;
        if (!d || sm_rw_is_removed(rw, d) || sm_rw_uses(rw, v) != 1 ||
            !scalar_step(d, v, &x, &f) || *n_taken >= 4)
            return v;
        m->scale *= f;
        taken[(*n_taken)++] = d;
        v = x;
    }
}

/* Retires the nodes strip_scales took, producers first. */
static void retire_scales(attn_match *m, sm_node **taken, int n)
{
    for (int i = n - 1; i >= 0; i--)
        retire(m, taken[i]);
}

/* Whether the constant scalar v is a fill that hides a score: -inf, or
 * finite and <= -1e30 (float min), which exp() turns into an exact 0. */
static int hiding_fill(const sm_value *v, double *fill)
{
    return sm_pat_scalar(v, fill) && *fill <= -1e30;
}

/* Whether x is (within a few single-use scalings, Adds and Wheres) the
 * product of a MatMul: the operand of a mask step that carries the
 * scores. */
static int leads_to_qk(sm_rw *rw, const sm_value *x, int depth)
{
    sm_node *d = x->def;
    if (!d || sm_rw_is_removed(rw, d) || depth > 6)
        return 0;
    if (d->op == SM_OP_MatMul)
        return 1;
    sm_value *y;
    double f;
    if (scalar_step(d, x, &y, &f))
        return leads_to_qk(rw, y, depth + 1);
    if (d->op == SM_OP_Add)
        return leads_to_qk(rw, d->in[0], depth + 1) ||
               leads_to_qk(rw, d->in[1], depth + 1);
    if (d->op == SM_OP_Where)
        return leads_to_qk(rw, d->in[1], depth + 1) ||
               leads_to_qk(rw, d->in[2], depth + 1);
    return 0;
}

/*
 * One mask step ending at s (the Softmax's input or a later step's): an
 * Add of a mask or a Where with a hiding fill. Fills *st and returns the
 * scores before the step; NULL with *why set when s's node is an Add or
 * Where that cannot be a mask step ("" when it is neither).
 */
static sm_value *mask_back(sm_rw *rw, sm_value *s, mask_step *st,
                           const char **why)
{
    *why = "";
    sm_node *d = s->def;
    if (!d || sm_rw_is_removed(rw, d))
        return NULL;
    if (d->op == SM_OP_Add) {
        /* the operand on the path to the MatMul is the one whose type is
         * the scores' own; the other broadcasts onto it */
        for (int k = 0; k < 2; k++) {
            sm_value *x = d->in[k], *mk = d->in[1 - k];
            if (x->type.ndim != s->type.ndim || !leads_to_qk(rw, x, 0))
                continue;
            if (!sm_pat_fits_onto(&mk->type, &x->type) ||
                !sm_pat_same_shape(&x->type, &s->type))
                break;
            *st = (mask_step){d, mk, MASK_ADD, 0};
            return x;
        }
        *why = "an Add before the Softmax adds a mask that does not "
               "broadcast onto the scores";
        return NULL;
    }
    if (d->op != SM_OP_Where)
        return NULL;
    double fill;
    sm_value *c = d->in[0];
    if (c->type.dtype != SMELT_DTYPE_BOOL ||
        !sm_pat_fits_onto(&c->type, &s->type) ||
        (!sm_pat_same_shape(&d->in[1]->type, &s->type) &&
         !sm_pat_same_shape(&d->in[2]->type, &s->type))) {
        *why = "a Where before the Softmax has a condition that does not "
               "broadcast onto the scores";
        return NULL;
    }
    for (int k = 1; k <= 2; k++) {
        if (!hiding_fill(d->in[k], &fill) ||
            !sm_pat_same_shape(&d->in[3 - k]->type, &s->type))
            continue;
        *st = (mask_step){d, c, k == 1 ? MASK_HIDE : MASK_KEEP, fill};
        return d->in[3 - k];
    }
    *why = "a Where before the Softmax fills with neither -inf nor a value "
           "<= -1e30 (a finite fill would change fully masked rows)";
    return NULL;
}

/* ---- causal constants ---------------------------------------------------- */

/* Whether key j is hidden from query i at element e of mask step st
 * (index into its data), given the step's semantics; -1 when the value
 * is neither clearly visible nor clearly hidden. */
static int hidden_at(const mask_step *st, int64_t e)
{
    const sm_tensor *t = st->value->data;
    double v = sm_load_f64(t->dtype, t->data, e);
    if (st->kind == MASK_HIDE)
        return v != 0;
    if (st->kind == MASK_KEEP)
        return v == 0;
    if (v == 0)
        return 0;
    return v <= -1e30 ? 1 : -1;
}

/*
 * Whether mask step st is a constant that is exactly the causal pattern
 * for scores of type s: its last two dims are [Tq, Tk] and in every
 * leading slice key j is hidden from query i iff j > i + Tk - Tq. A
 * finite hiding value is accepted only when no row is fully hidden
 * (Tk >= Tq), where causal's NaN rows would differ from a uniform softmax.
 */
static int is_causal(const mask_step *st, const sm_type *s)
{
    const sm_tensor *t = st->value->data;
    if (!t || s->ndim < 2 || t->ndim < 2)
        return 0;
    int64_t tq = s->dims[s->ndim - 2].size, tk = s->dims[s->ndim - 1].size;
    if (tq < 1 || tk < 1 || t->dims[t->ndim - 2] != tq ||
        t->dims[t->ndim - 1] != tk)
        return 0;
    int finite = 0;
    for (int64_t e = 0; e < t->numel; e++) {
        int64_t j = e % tk, i = (e / tk) % tq;
        int h = hidden_at(st, e);
        if (h != (j > i + tk - tq))
            return 0;
        if (h && st->kind == MASK_ADD)
            finite |= isfinite(sm_load_f64(t->dtype, t->data, e));
        if (h && st->kind != MASK_ADD)
            finite |= isfinite(st->fill);
    }
    return !finite || tk >= tq;
}

/* ---- K and V ------------------------------------------------------------- */

/*
 * K^T as the first MatMul reads it (its scalings stripped): when it is a
 * Transpose of X with permutation p, K is X transposed by p with its last
 * two entries swapped (X itself when that is the identity), and when the
 * Transpose has no other reader it retires with the scalings of X below
 * it; otherwise K^T gets a Transpose of its last two axes.
 */
static void resolve_k(sm_rw *rw, attn_match *m, sm_value *kt)
{
    int r = kt->type.ndim;
    sm_node *tr = def_op(rw, kt, SM_OP_Transpose);
    const int64_t *p = NULL;
    sm_attrs at = tr ? sm_node_attrs(tr) : (sm_attrs){0};
    int np = tr ? sm_attrs_ints(&at, "perm", &p) : -1;
    int ident = 1;
    for (int i = 0; i < r; i++) {
        int si = i < r - 2 ? i : (i == r - 2 ? r - 1 : r - 2);
        m->k_perm[i] = tr && np == r ? p[si] : si;
        ident &= m->k_perm[i] == i;
    }
    if (!tr || np != r) {
        m->k = kt;
        m->k_needs_transpose = 1;
        return;
    }
    m->k = tr->in[0];
    m->k_needs_transpose = !ident;
    if (sm_rw_uses(rw, kt) != 1)
        return;
    sm_node *below[4];
    int n = 0;
    m->k = strip_scales(rw, m, tr->in[0], below, &n);
    retire_scales(m, below, n);
    retire(m, tr);
}

static sm_value *unrepeat(sm_rw *rw, sm_value *x);

/*
 * repeat_interleave as torch exports it for several kv heads: K0 split
 * into its heads, each repeated G times, concatenated on the heads axis
 * in order. K0, or NULL.
 */
static sm_value *unrepeat_concat(sm_rw *rw, const sm_node *cat,
                                 const sm_type *t)
{
    sm_attrs at = sm_node_attrs(cat);
    int64_t axis = sm_attrs_int(&at, "axis", 0);
    if ((axis != 1 && axis != -3) || cat->n_in < 2)
        return NULL;
    const sm_node *split = NULL;
    for (int j = 0; j < cat->n_in; j++) {
        sm_value *u = unrepeat(rw, cat->in[j]);
        if (!u || !u->def || u->def->op != SM_OP_Split || u->def_index != j ||
            u->type.ndim != 4 || u->type.dims[1].size != 1 ||
            (split && u->def != split))
            return NULL;
        split = u->def;
    }
    sm_attrs sa = sm_node_attrs(split);
    int64_t sax = sm_attrs_int(&sa, "axis", 0);
    const sm_type *k0 = &split->in[0]->type;
    if ((sax != 1 && sax != -3) || split->n_out != cat->n_in || k0->ndim != 4 ||
        k0->dims[1].size != cat->n_in ||
        !sm_pat_same_dim(&k0->dims[0], &t->dims[0]) ||
        !sm_pat_same_dim(&k0->dims[2], &t->dims[2]) ||
        !sm_pat_same_dim(&k0->dims[3], &t->dims[3]))
        return NULL;
    return split->in[0];
}

/*
 * When x ([B, H, T, d]) is its input repeated per query head, the
 * unrepeated value ([B, Hkv, T, d], head h serving heads h G .. h G + G
 * - 1): Reshape(Expand(Unsqueeze or Reshape to [B, Hkv, 1, T, d]) to
 * [B, Hkv, G, T, d]) to [B, Hkv G, T, d], or Tile / Expand of a single
 * head. NULL when x is none of these.
 */
static sm_value *unrepeat(sm_rw *rw, sm_value *x)
{
    const sm_type *t = &x->type;
    if (t->ndim != 4)
        return NULL;
    sm_node *tile = def_op(rw, x, SM_OP_Tile),
            *ex = def_op(rw, x, SM_OP_Expand);
    sm_node *one = tile ? tile : ex;
    if (one) {
        const sm_type *u = &one->in[0]->type;
        if (u->ndim == 4 && u->dims[1].size == 1 &&
            sm_pat_same_dim(&u->dims[0], &t->dims[0]) &&
            sm_pat_same_dim(&u->dims[2], &t->dims[2]) &&
            sm_pat_same_dim(&u->dims[3], &t->dims[3]))
            return one->in[0];
        return NULL;
    }
    sm_node *cat = def_op(rw, x, SM_OP_Concat);
    if (cat)
        return unrepeat_concat(rw, cat, t);
    sm_node *rs = def_op(rw, x, SM_OP_Reshape);
    sm_node *e = rs ? def_op(rw, rs->in[0], SM_OP_Expand) : NULL;
    if (!e)
        return NULL;
    sm_node *un = def_op(rw, e->in[0], SM_OP_Unsqueeze);
    if (!un)
        un = def_op(rw, e->in[0], SM_OP_Reshape);
    if (!un)
        return NULL;
    const sm_type *et = &e->out[0]->type, *ut = &un->out[0]->type;
    const sm_type *k0 = &un->in[0]->type;
    if (et->ndim != 5 || ut->ndim != 5 || k0->ndim != 4)
        return NULL;
    int64_t hkv = k0->dims[1].size, g = et->dims[2].size;
    if (hkv < 1 || g < 1 || ut->dims[2].size != 1 || t->dims[1].size != hkv * g)
        return NULL;
    static const int u_of[5] = {0, 1, -1, 2, 3};
    for (int d = 0; d < 5; d++) {
        if (d == 2)
            continue;
        if (!sm_pat_same_dim(&ut->dims[d], &k0->dims[u_of[d]]) ||
            !sm_pat_same_dim(&et->dims[d], &k0->dims[u_of[d]]))
            return NULL;
    }
    if (!sm_pat_same_dim(&t->dims[0], &k0->dims[0]) ||
        !sm_pat_same_dim(&t->dims[2], &k0->dims[2]) ||
        !sm_pat_same_dim(&t->dims[3], &k0->dims[3]))
        return NULL;
    return un->in[0];
}

/*
 * The batch and head dims of Q, K and V: the same batch (rank 4: dim 0;
 * rank 3 and 2: every leading dim), and K's and V's heads equal and
 * dividing Q's, after undoing a repeat per query head. NULL when they
 * fit, else why not.
 */
static const char *fit_heads(sm_rw *rw, attn_match *m)
{
    const sm_type *q = &m->q->type, *v = &m->v->type;
    sm_type kp = m->k->type; /* K as the node reads it */
    const sm_type *k = &kp;
    int r = m->rank;
    if (kp.ndim != r || v->ndim != r)
        return "Q, K and V do not have the same rank";
    if (m->k_needs_transpose)
        for (int i = 0; i < r; i++)
            kp.dims[i] = m->k->type.dims[m->k_perm[i]];
    if (!sm_pat_same_dim(&q->dims[r - 1], &k->dims[r - 1]))
        return "Q and K differ in the head dim";
    if (!sm_pat_same_dim(&k->dims[r - 2], &v->dims[r - 2]))
        return "K and V differ in the key length";
    m->k_orig = m->k;
    if (r == 4 && !m->k_needs_transpose) {
        sm_value *k0 = unrepeat(rw, m->k), *v0 = unrepeat(rw, m->v);
        if (k0 && v0 && sm_pat_same_dim(&k0->type.dims[1], &v0->type.dims[1])) {
            m->k = k0;
            m->v = v0;
            k = &k0->type;
            v = &v0->type;
        }
    }
    int lead = r == 4 ? 1 : r - 2; /* dims that must match exactly */
    for (int d = 0; d < lead; d++)
        if (!sm_pat_same_dim(&q->dims[d], &k->dims[d]) ||
            !sm_pat_same_dim(&q->dims[d], &v->dims[d]))
            return "Q, K and V differ in a batch dim (broadcast batches are "
                   "not fused)";
    int h = r - 3; /* the heads dim: rank 4 dim 1, rank 3 dim 0 */
    if (h < 0)
        return NULL;
    if (!sm_pat_same_dim(&k->dims[h], &v->dims[h]))
        return "K and V have different numbers of heads";
    int64_t hq = q->dims[h].size, hkv = k->dims[h].size;
    if (sm_pat_same_dim(&q->dims[h], &k->dims[h]) ||
        (hkv >= 1 && hq >= 0 && hq % hkv == 0))
        return NULL;
    return "Q's heads are not a known multiple of K's and V's";
}

/* ---- matching ------------------------------------------------------------ */

/*
 * Matches the core around Softmax node sm into *m. NULL when it matched;
 * otherwise why not, with *partial set when enough matched to call it a
 * near miss.
 */
static const char *match_core(sm_rw *rw, sm_node *sm, attn_match *m,
                              int *partial)
{
    *partial = 0;
    sm_value *p = sm->out[0], *s = sm->in[0];
    sm_node *pv = sm_pat_user(rw, p);
    int pv_ok =
        pv && pv->op == SM_OP_MatMul && pv->in[0] == p && pv->in[1] != p;
    m->softmax = sm;
    m->scale = 1;
    /* walk back: mask steps and scalings, in any order, to the MatMul */
    sm_node *chain[8];
    int n_chain = 0;
    const char *mask_why = NULL;
    int scaled_last = 0;
    for (int steps = 0; steps < 8; steps++) {
        sm_value *x;
        double f;
        sm_node *d = s->def;
        if (!d || sm_rw_is_removed(rw, d) || d->op == SM_OP_MatMul)
            break;
        if (sm_rw_uses(rw, s) != 1) {
            mask_why = "a scaled or masked form of the scores has a second "
                       "reader";
            break;
        }
        if (scalar_step(d, s, &x, &f)) {
            m->scale *= f;
            chain[n_chain++] = d;
            scaled_last = 1;
            s = x;
            continue;
        }
        mask_step st;
        const char *why;
        x = m->n_masks < MAX_MASKS ? mask_back(rw, s, &st, &why) : NULL;
        if (!x) {
            mask_why = m->n_masks < MAX_MASKS && why[0] ? why : NULL;
            if (m->n_masks >= MAX_MASKS)
                mask_why = "more than two mask steps before the Softmax";
            break;
        }
        if (scaled_last) {
            mask_why = "the scores are scaled after the mask is applied (the "
                       "mask would be scaled too)";
            break;
        }
        m->masks[m->n_masks++] = st;
        chain[n_chain++] = d;
        s = x;
    }
    sm_node *qk = def_op(rw, s, SM_OP_MatMul);
    if (!qk && !pv_ok)
        return "no MatMul on either side of the Softmax";
    *partial = 1;
    if (mask_why)
        return mask_why;
    if (!qk) {
        sm_node *d = s->def;
        if (d && (d->op == SM_OP_Mul || d->op == SM_OP_Div))
            return "the scores are scaled by a value that is not a constant "
                   "scalar";
        return "the Softmax's input is not MatMul(Q, K^T), optionally "
               "scaled and masked, each step read once";
    }
    if (sm_rw_uses(rw, s) != 1)
        return "the score matrix Q K^T has a second reader";
    if (!pv_ok) {
        int uses = sm_rw_uses(rw, p);
        if (uses != 1)
            return "the attention probabilities (the Softmax's output) have "
                   "a second reader";
        return "the Softmax's output is not the left operand of a MatMul "
               "with V";
    }
    if (sm_rw_uses(rw, pv->in[0]) != 1)
        return "the attention probabilities have a second reader";
    const sm_type *st = &s->type;
    int r = st->ndim;
    if (r < 2 || r > 4)
        return "the scores are not 2-D, 3-D or 4-D";
    sm_attrs at = sm_node_attrs(sm);
    int64_t axis = sm_attrs_int(&at, "axis", -1);
    if (axis != -1 && axis != r - 1)
        return "the Softmax is not over the last axis (the keys)";
    if (!sm_pat_is_float(s) ||
        (st->dtype != SMELT_DTYPE_F32 && st->dtype != SMELT_DTYPE_F64))
        return "the scores are not f32 or f64";
    if (qk->in[0]->type.ndim != r || qk->in[1]->type.ndim != r ||
        pv->in[1]->type.ndim != r)
        return "the MatMuls' operands do not all have the scores' rank";
    m->rank = r;
    m->qk = qk;
    m->pv = pv;
    /* K^T and Q, each with its scalings; retired producers first */
    sm_node *qs[4], *ks[4];
    int nq = 0, nk = 0;
    sm_value *kt = strip_scales(rw, m, qk->in[1], ks, &nk);
    resolve_k(rw, m, kt);
    retire_scales(m, ks, nk);
    m->q = strip_scales(rw, m, qk->in[0], qs, &nq);
    retire_scales(m, qs, nq);
    m->v = pv->in[1];
    const char *why = fit_heads(rw, m);
    if (why)
        return why;
    /* masks: at most one that is not causal */
    int generic = 0;
    for (int i = 0; i < m->n_masks; i++) {
        const mask_step *mk = &m->masks[i];
        if (mk->kind == MASK_ADD && mk->value->type.dtype != st->dtype)
            return "the additive mask's dtype is not the scores'";
        if (mk->value->type.ndim > 4)
            return "the mask has rank above 4";
        generic += !is_causal(mk, st);
    }
    if (generic > 1)
        return "two masks that are not the causal pattern";
    retire(m, qk);
    for (int i = n_chain - 1; i >= 0; i--)
        retire(m, chain[i]);
    retire(m, sm);
    retire(m, pv);
    if (m->n_dead >= MAX_DEAD)
        return "too many nodes";
    return NULL;
}

/* ---- rewriting ----------------------------------------------------------- */

/* A node op(in) with one output, placed before `before`, with an ints
 * attribute (name NULL: none); its output, NULL when out of memory. */
static sm_value *add_node(sm_rw *rw, sm_node *before, sm_op op, int n_in,
                          sm_value *const *in, const char *name,
                          const char *attr, const int64_t *v, int cnt)
{
    sm_node *n =
        sm_rw_node_new(rw, before->owner, before, op, NULL, n_in, in, 1, &name);
    if (!n || (attr && !sm_node_set_ints(n, attr, v, cnt)))
        return NULL;
    return sm_rw_infer_node(rw, n) == SMELT_OK ? n->out[0] : NULL;
}

/* x with `lead` unit axes added in front (rank 3: one, rank 2: two). */
static sm_value *lift(sm_rw *rw, sm_node *before, sm_value *x, int lead,
                      const char *name)
{
    static const int64_t axes[2] = {0, 1};
    if (!lead)
        return x;
    return add_node(rw, before, SM_OP_Unsqueeze, 1, &x, name, "axes", axes,
                    lead);
}

/* The "may attend" mask of condition c (true = hidden): a constant
 * negated here, else Not(c) before `before`. NULL when out of memory. */
static sm_value *keep_of(sm_rw *rw, sm_node *before, sm_value *c)
{
    if (!c->data)
        return add_node(rw, before, SM_OP_Not, 1, &c, "attn_keep", NULL, NULL,
                        0);
    sm_tensor *t;
    if (sm_tensor_new(NULL, SMELT_DTYPE_BOOL, c->data->ndim, c->data->dims,
                      &t) != SMELT_OK)
        return NULL;
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_f64(t->dtype, t->data, i,
                     sm_load_f64(c->data->dtype, c->data->data, i) == 0);
    return sm_rw_add_const(rw, before->owner, "attn_keep", t);
}

/*
 * The mask input of the node from the steps that are not causal: an
 * additive mask as it is; Where(c, fill, .) as a bool "may attend" mask
 * (Not c; folded when c is a constant) for a -inf fill, or as the additive
 * Where(c, fill, 0) for a finite one. NULL with *out NULL when there is
 * none; nonzero status when out of memory.
 */
static smelt_status mask_input(smelt_ctx_t *ctx, sm_rw *rw, attn_match *m,
                               const sm_type *st, sm_value **out)
{
    *out = NULL;
    sm_node *before = m->pv;
    for (int i = 0; i < m->n_masks; i++) {
        mask_step *mk = &m->masks[i];
        if (is_causal(mk, st))
            continue;
        if (mk->kind == MASK_ADD) {
            *out = mk->value;
            return SMELT_OK;
        }
        if (isinf(mk->fill)) {
            if (mk->kind == MASK_KEEP) {
                *out = mk->value;
                return SMELT_OK;
            }
            *out = keep_of(rw, before, mk->value);
            return *out ? SMELT_OK : sm_err_nomem(ctx);
        }
        /* a finite fill: Where(c, fill, 0), or Where(c, 0, fill) */
        sm_tensor *f = NULL, *z = NULL;
        if (sm_tensor_new(NULL, st->dtype, 0, NULL, &f) != SMELT_OK ||
            sm_tensor_new(NULL, st->dtype, 0, NULL, &z) != SMELT_OK) {
            sm_tensor_free(f);
            return sm_err_nomem(ctx);
        }
        sm_store_f64(f->dtype, f->data, 0, mk->fill);
        sm_store_f64(z->dtype, z->data, 0, 0.0);
        sm_value *fv = sm_rw_add_const(rw, before->owner, "attn_fill", f);
        sm_value *zv = sm_rw_add_const(rw, before->owner, "attn_zero", z);
        if (!fv || !zv)
            return sm_err_nomem(ctx);
        sm_value *in[3] = {mk->value, mk->kind == MASK_HIDE ? fv : zv,
                           mk->kind == MASK_HIDE ? zv : fv};
        *out = add_node(rw, before, SM_OP_Where, 3, in, "attn_mask", NULL, NULL,
                        0);
        return *out ? SMELT_OK : sm_err_nomem(ctx);
    }
    return SMELT_OK;
}

/* Removes the node defining v when nothing reads its outputs any more,
 * then, the same way, the nodes before it (a few steps back, never a
 * node that owns sub-blocks): what fed K and V only (a repeat per query
 * head, a Transpose the node no longer reads) goes with the core. */
static void prune(sm_rw *rw, sm_value *v, int depth)
{
    sm_node *d = v ? v->def : NULL;
    if (!d || depth > 8 || d->n_blocks || sm_rw_is_removed(rw, d) ||
        !sm_rw_remove_if_dead(rw, d))
        return;
    for (int i = 0; i < d->n_in; i++)
        prune(rw, d->in[i], depth + 1);
}

/* Builds the Attention node for match m and retires the core. */
static smelt_status rewrite(sm_pass_ctx *pc, sm_rw *rw, attn_match *m)
{
    const sm_type st = m->qk->out[0]->type;
    sm_node *before = m->pv;
    int lead = 4 - m->rank;
    int causal = 0;
    for (int i = 0; i < m->n_masks; i++)
        causal |= is_causal(&m->masks[i], &st);
    sm_value *k = m->k;
    if (m->k_needs_transpose) {
        k = add_node(rw, before, SM_OP_Transpose, 1, &k, "attn_k", "perm",
                     m->k_perm, m->rank);
        if (!k)
            return sm_err_nomem(pc->ctx);
    }
    sm_value *mask;
    SM_TRY(mask_input(pc->ctx, rw, m, &st, &mask));
    sm_value *in[4] = {lift(rw, before, m->q, lead, "attn_q"),
                       lift(rw, before, k, lead, "attn_k"),
                       lift(rw, before, m->v, lead, "attn_v"), mask};
    if (!in[0] || !in[1] || !in[2])
        return sm_err_nomem(pc->ctx);
    sm_value *old = m->pv->out[0];
    const char *name = lead ? "attn_out" : old->name;
    sm_node *a = sm_rw_node_new(rw, before->owner, before, SM_OP_Attention,
                                m->pv->name, mask ? 4 : 3, in, 1, &name);
    if (!a || !sm_node_set_float(a, "scale", m->scale) ||
        (causal && !sm_node_set_int(a, "causal", 1)))
        return sm_err_nomem(pc->ctx);
    SM_TRY(sm_rw_infer_node(rw, a));
    sm_node *last = a;
    if (lead) {
        static const int64_t axes[2] = {0, 1};
        sm_value *o = a->out[0];
        last = sm_rw_node_new(rw, before->owner, before, SM_OP_Squeeze, NULL, 1,
                              &o, 1, &old->name);
        if (!last || !sm_node_set_ints(last, "axes", axes, lead))
            return sm_err_nomem(pc->ctx);
        SM_TRY(sm_rw_infer_node(rw, last));
    }
    sm_value *fed[3] = {m->qk->in[1], m->pv->in[1], m->k_orig};
    sm_pat_replace(rw, last, old, m->dead, m->n_dead);
    for (int i = 0; i < 3; i++)
        prune(rw, fed[i], 0);
    pc->stats->fused += m->n_dead;
    pc->stats->changed = 1;
    return SMELT_OK;
}

static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *n)
{
    if (n->op != SM_OP_Softmax)
        return SMELT_OK;
    attn_match m;
    memset(&m, 0, sizeof m);
    int partial;
    const char *why = match_core(rw, n, &m, &partial);
    if (why) {
        if (partial)
            sm_pat_miss(pc, n, "Attention pattern stops: %s", why);
        return SMELT_OK;
    }
    return rewrite(pc, rw, &m);
}

/* Whether some Softmax of block b (or its sub-blocks) reads a value with
 * a dim that is not known. */
static int softmax_unknown(const sm_block *b)
{
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        for (int k = 0; k < n->n_blocks; k++)
            if (softmax_unknown(n->blocks[k]))
                return 1;
        if (n->op != SM_OP_Softmax)
            continue;
        const sm_type *t = &n->in[0]->type;
        if (t->ndim < 0)
            return 1;
        for (int d = 0; d < t->ndim; d++)
            if (t->dims[d].size < 0 && !t->dims[d].sym)
                return 1;
    }
    return 0;
}

/*
 * The cleanup passes fold shape arithmetic into constants (a Reshape's
 * target, once a plan binds the dims) without inferring again, so the
 * core's types may still be unknown here; when a Softmax's are, types
 * are inferred once more first, since every check above compares dims.
 */
smelt_status sm_pass_fuse_attention(sm_pass_ctx *pc, sm_graph *g)
{
    if (softmax_unknown(g->top))
        SM_TRY(sm_graph_infer(pc->ctx, g));
    return sm_pat_for_nodes(pc, g, visit);
}
