/*
 * concat_pads.c - the concat_pads pass: a sum of zero-padded pieces that
 * tile one axis becomes one Concat of the pieces:
 *
 *   Pad(a, [0 .. e_a]) + Pad(b, [s_b .. e_b]) + Pad(c, [s_c .. 0])
 *       = Concat(a, b, c)   when a, b, c cover the axis end to end
 *
 * The gradient of a Slice with step 1 is its output gradient padded with
 * zeros back to the input's shape, and the gradients reaching one value
 * are summed (an Add chain, or Sum). When several Slices partition a value
 * - the q, k and v pieces of a transformer's packed in-projection weight
 * and bias - the sum of their padded gradients writes and reads the full
 * tensor once per piece; the Concat writes it once. Exact: every element
 * of the sum is one piece's element plus zeros.
 *
 * The sum is a tree of Add (no broadcasting) and Sum nodes whose inner
 * nodes have no other use; every leaf must be a Pad used only there, of
 * mode constant with value 0 (or none), constant non-negative pads
 * nonzero on one axis only (the same for all), no axes input, and the
 * pieces, sorted by their start, must meet end to end from 0 to the
 * axis's size: a gap, an overlap or a nonzero pad value leaves the sum as
 * it is (as do strided Slices, whose gradients are not such Pads).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/dtype.h"
#include "passes/pattern.h"

/* The most pieces one sum is rebuilt from. */
#define MAX_PIECES 64

typedef struct piece {
    sm_node *pad;  /* the leaf */
    int64_t begin; /* where its input starts along the axis */
} piece;

typedef struct sum_tree {
    sm_node *inner[MAX_PIECES]; /* the Add/Sum nodes below the root */
    int n_inner;
    piece leaf[MAX_PIECES];
    int n_leaf;
    int axis; /* the padded axis; -1 until the first leaf */
} sum_tree;

/* Whether v's type is fully known and equal to t. */
static int same_type(const sm_value *v, const sm_type *t)
{
    return v && sm_type_known(&v->type) && sm_type_equal(&v->type, t);
}

/* Adds Pad p (a leaf of the sum, of type t) to the tree when it pads
 * with zeros along one axis only; 0 when it does not qualify. */
static int add_leaf(sum_tree *st, const sm_rw *rw, sm_node *p, const sm_type *t)
{
    int r = t->ndim;
    if (p->op != SM_OP_Pad || st->n_leaf == MAX_PIECES ||
        sm_rw_single_user(rw, p->out[0]) == NULL ||
        sm_rw_is_output(rw, p->out[0]))
        return 0;
    sm_attrs a = sm_node_attrs(p);
    const char *mode = sm_attrs_string(&a, "mode", "constant");
    if (!mode || strcmp(mode, "constant"))
        return 0;
    const sm_value *pads = p->in[1];
    if (!pads || !pads->data || pads->data->numel != 2 * r ||
        !sm_pat_zero_or_absent(p->n_in > 2 ? p->in[2] : NULL) ||
        (p->n_in > 3 && p->in[3]))
        return 0;
    const sm_value *x = p->in[0];
    if (!sm_type_known(&x->type) || x->type.ndim != r ||
        x->type.dtype != t->dtype)
        return 0;
    int axis = -1;
    int64_t begin = 0;
    for (int i = 0; i < r; i++) {
        int64_t b = sm_load_i64(pads->data->dtype, pads->data->data, i);
        int64_t e = sm_load_i64(pads->data->dtype, pads->data->data, r + i);
        if (b < 0 || e < 0)
            return 0;
        if (b == 0 && e == 0)
            continue;
        if (axis >= 0)
            return 0;
        axis = i;
        begin = b;
    }
    if (axis < 0 || (st->axis >= 0 && axis != st->axis))
        return 0;
    st->axis = axis;
    st->leaf[st->n_leaf++] = (piece){p, begin};
    return 1;
}

/* Collects the leaves under value v (an operand of the sum of type t):
 * inner Add/Sum nodes are followed, anything else must be a Pad leaf. 0
 * when some operand does not qualify. */
static int collect(sum_tree *st, const sm_rw *rw, const sm_block *b,
                   sm_value *v, const sm_type *t, int depth)
{
    sm_node *d = v->def;
    if (!d || d->owner != b || !same_type(v, t) || depth > MAX_PIECES)
        return 0;
    if (depth > 0 && (d->op == SM_OP_Add || d->op == SM_OP_Sum)) {
        if (!sm_rw_single_user(rw, v) || sm_rw_is_output(rw, v) ||
            st->n_inner == MAX_PIECES)
            return 0;
        st->inner[st->n_inner++] = d;
    } else if (depth > 0) {
        return add_leaf(st, rw, d, t);
    }
    for (int i = 0; i < d->n_in; i++)
        if (!d->in[i] || !collect(st, rw, b, d->in[i], t, depth + 1))
            return 0;
    return 1;
}

static int by_begin(const void *a, const void *b)
{
    int64_t x = ((const piece *)a)->begin, y = ((const piece *)b)->begin;
    return (x > y) - (x < y);
}

/* Whether the sorted leaves meet end to end from 0 to size. */
static int tiles(sum_tree *st, int64_t size)
{
    qsort(st->leaf, (size_t)st->n_leaf, sizeof *st->leaf, by_begin);
    int64_t at = 0;
    for (int i = 0; i < st->n_leaf; i++) {
        const sm_value *x = st->leaf[i].pad->in[0];
        if (st->leaf[i].begin != at)
            return 0;
        at += x->type.dims[st->axis].size;
    }
    return at == size;
}

/* The sum rooted at Add/Sum node n into one Concat, when it qualifies. */
static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *n)
{
    if ((n->op != SM_OP_Add && n->op != SM_OP_Sum) ||
        !sm_type_known(&n->out[0]->type))
        return SMELT_OK;
    const sm_type *t = &n->out[0]->type;
    sum_tree st;
    st.n_inner = st.n_leaf = 0;
    st.axis = -1;
    if (!collect(&st, rw, n->owner, n->out[0], t, 0) || st.n_leaf < 2 ||
        !tiles(&st, t->dims[st.axis].size))
        return SMELT_OK;
    sm_value *in[MAX_PIECES];
    for (int i = 0; i < st.n_leaf; i++)
        in[i] = st.leaf[i].pad->in[0];
    char label[200];
    snprintf(label, sizeof label, "%s_concat", n->name ? n->name : "sum");
    const char *out_name = n->out[0]->name;
    sm_node *c = sm_rw_node_new(rw, n->owner, n, SM_OP_Concat, label, st.n_leaf,
                                in, 1, &out_name);
    if (!c || !sm_node_set_int(c, "axis", st.axis))
        return sm_err_nomem(pc->ctx);
    SM_TRY(sm_rw_infer_node(rw, c));
    if (!sm_rw_can_forward(rw, n->out[0], c->out[0])) {
        sm_rw_remove_node(rw, c);
        return SMELT_OK;
    }
    SM_TRY(sm_rw_forward(rw, n->out[0], c->out[0]));
    pc->stats->removed += sm_rw_remove_if_dead(rw, n);
    /* inner nodes were collected parents first */
    for (int i = 0; i < st.n_inner; i++)
        pc->stats->removed += sm_rw_remove_if_dead(rw, st.inner[i]);
    for (int i = 0; i < st.n_leaf; i++) {
        sm_value *pads = st.leaf[i].pad->in[1];
        pc->stats->removed += sm_rw_remove_if_dead(rw, st.leaf[i].pad);
        sm_rw_drop_const_if_dead(rw, pads);
    }
    pc->stats->changed = 1;
    sm_pass_log(pc, "%s: a sum of %d padded pieces into one Concat (axis %d)",
                n->out[0]->name, st.n_leaf, st.axis);
    return SMELT_OK;
}

smelt_status sm_pass_concat_pads(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_for_nodes(pc, g, visit);
}
