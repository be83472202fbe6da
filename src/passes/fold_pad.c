/*
 * fold_pad.c - the fold_pad pass: an explicit zero Pad of the spatial
 * axes before a Conv or an AveragePool becomes the consumer's own pads,
 *
 *   Conv(Pad(x, p), W, B) {pads = q}        -> Conv(x, W, B) {pads = q + p}
 *   AveragePool(Pad(x, p)) {pads = q}       -> AveragePool(x)
 *                                              {pads = q + p,
 *                                               count_include_pad = 1}
 *
 * Exports of F.pad, nn.ZeroPad2d and ConstantPad write such Pads; each
 * costs a full copy of its input (two of them were 31 of a pooling
 * model's 640 us). Exact: a Conv's own padding is zeros, and an average
 * that counts its padded taps divides by the window's size, as it does
 * over an explicitly padded tensor. So:
 *
 * - the Pad: mode constant, value 0 or absent, constant non-negative pads
 *   (on the axes of a constant axes input when there is one), zero on
 *   axes 0 and 1 (batch and channels), its rank at least 3;
 * - every use of its output is input 0 of a consumer in its block (not a
 *   graph output), and every consumer qualifies: a Conv with auto_pad
 *   NOTSET; an AveragePool with auto_pad NOTSET, ceil_mode 0 and either
 *   count_include_pad 1 or no pads of its own (with count_include_pad 0
 *   its own padded taps are left out of the count, the Pad's are not),
 *   and the summed pads below its kernel_shape, as ONNX requires.
 *
 * A MaxPool never qualifies: the Pad's zeros take part in its max, its
 * own padding does not. Anything else leaves the Pad as it is. The pass
 * runs before fuse_epilogue, so a folded Conv still becomes a FusedConv.
 */
#include <string.h>

#include "core/attr.h"
#include "core/dtype.h"
#include "passes/pattern.h"

/* The most consumers of one Pad folded. */
#define MAX_USERS 16

/* The spatial pads of Pad node p of rank r into sp[0 .. 2(r-2)) in the
 * Conv layout (begins, then ends); 0 when p does not qualify. */
static int pad_spatial(const sm_node *p, int r, int64_t *sp)
{
    sm_attrs a = sm_node_attrs(p);
    const char *mode = sm_attrs_string(&a, "mode", "constant");
    if (!mode || strcmp(mode, "constant") || r < 3 || r > SMELT_MAX_DIMS)
        return 0;
    const sm_value *pads = p->in[1];
    const sm_value *axes = p->n_in > 3 ? p->in[3] : NULL;
    if (!pads || !pads->data ||
        !sm_pat_zero_or_absent(p->n_in > 2 ? p->in[2] : NULL))
        return 0;
    int k = r;
    if (axes) {
        if (!axes->data || axes->data->numel < 1 || axes->data->numel > r)
            return 0;
        k = (int)axes->data->numel;
    }
    if (pads->data->numel != 2 * k)
        return 0;
    int64_t b[SMELT_MAX_DIMS] = {0}, e[SMELT_MAX_DIMS] = {0};
    int seen[SMELT_MAX_DIMS] = {0};
    for (int i = 0; i < k; i++) {
        int64_t d =
            axes ? sm_load_i64(axes->data->dtype, axes->data->data, i) : i;
        if (d < 0)
            d += r;
        if (d < 0 || d >= r || seen[d])
            return 0;
        seen[d] = 1;
        b[d] = sm_load_i64(pads->data->dtype, pads->data->data, i);
        e[d] = sm_load_i64(pads->data->dtype, pads->data->data, k + i);
        if (b[d] < 0 || e[d] < 0)
            return 0;
    }
    if (b[0] || e[0] || b[1] || e[1])
        return 0;
    for (int d = 2; d < r; d++) {
        sp[d - 2] = b[d];
        sp[r - 2 + d - 2] = e[d];
    }
    return 1;
}

/* Whether consumer u of padded value v (rank r) can take the Pad's
 * spatial pads sp into its own; its pads plus sp into sum[0 .. 2(r-2)). */
static int user_ok(const sm_node *u, const sm_value *v, int r,
                   const int64_t *sp, int64_t *sum)
{
    if ((u->op != SM_OP_Conv && u->op != SM_OP_AveragePool) || u->in[0] != v)
        return 0;
    for (int i = 1; i < u->n_in; i++)
        if (u->in[i] == v)
            return 0;
    sm_attrs a = sm_node_attrs(u);
    const char *ap = sm_attrs_string(&a, "auto_pad", "NOTSET");
    if (!ap || strcmp(ap, "NOTSET"))
        return 0;
    const int64_t *q, *k;
    int n = sm_attrs_ints(&a, "pads", &q), any = 0, s = r - 2;
    if (n >= 0 && n != 2 * s)
        return 0;
    for (int i = 0; i < 2 * s; i++) {
        int64_t own = n > 0 ? q[i] : 0;
        if (own < 0)
            return 0;
        any |= own != 0;
        sum[i] = own + sp[i];
    }
    if (u->op == SM_OP_Conv)
        return 1;
    if (sm_attrs_int(&a, "ceil_mode", 0) != 0 ||
        (sm_attrs_int(&a, "count_include_pad", 0) != 1 && any) ||
        sm_attrs_ints(&a, "kernel_shape", &k) != s)
        return 0;
    /* a pool's pads must stay below its window (ONNX; our verifier): a
     * window wholly in the padding is not a pool's to compute */
    for (int i = 0; i < 2 * s; i++)
        if (sum[i] >= k[i % s])
            return 0;
    return 1;
}

/* Folds Pad node p into all its consumers, when it and they qualify. */
static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *p)
{
    if (p->op != SM_OP_Pad || p->n_in < 2)
        return SMELT_OK;
    sm_value *v = p->out[0];
    int r = v->type.ndim;
    int64_t sp[2 * SMELT_MAX_DIMS];
    int uses = sm_rw_uses(rw, v);
    if (r == SM_RANK_UNKNOWN || uses < 1 || uses > MAX_USERS ||
        sm_rw_is_output(rw, v) || !pad_spatial(p, r, sp))
        return SMELT_OK;
    /* every use must be input 0 of a qualifying node of p's block */
    sm_node *u[MAX_USERS];
    int64_t own[MAX_USERS][2 * SMELT_MAX_DIMS];
    int n = 0;
    for (sm_node *c = sm_rw_first(rw, p->owner); c; c = sm_rw_next(rw, c)) {
        int k = 0;
        for (int i = 0; i < c->n_in; i++)
            k += c->in[i] == v;
        if (!k)
            continue;
        if (n == uses || !user_ok(c, v, r, sp, own[n]))
            return SMELT_OK;
        u[n++] = c;
    }
    if (n != uses)
        return SMELT_OK; /* some use is in a sub-block */
    for (int j = 0; j < n; j++) {
        /* count_include_pad first: alone it changes nothing (the pool
         * has no pads of its own or already counts them), and a failed
         * set leaves an attribute as it was */
        if ((u[j]->op == SM_OP_AveragePool &&
             !sm_node_set_int(u[j], "count_include_pad", 1)) ||
            !sm_node_set_ints(u[j], "pads", own[j], 2 * (r - 2)))
            return sm_err_nomem(pc->ctx);
        SM_TRY(sm_rw_set_input(rw, u[j], 0, p->in[0]));
    }
    sm_pass_log(pc, "%s: zero Pad folded into %d consumer(s)' pads", v->name,
                n);
    sm_value *pads = p->in[1];
    sm_value *axes = p->n_in > 3 ? p->in[3] : NULL;
    sm_value *val = p->n_in > 2 ? p->in[2] : NULL;
    pc->stats->removed += sm_rw_remove_if_dead(rw, p);
    sm_rw_drop_const_if_dead(rw, pads);
    if (axes)
        sm_rw_drop_const_if_dead(rw, axes);
    if (val)
        sm_rw_drop_const_if_dead(rw, val);
    pc->stats->changed = 1;
    return SMELT_OK;
}

smelt_status sm_pass_fold_pad(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_for_nodes(pc, g, visit);
}
