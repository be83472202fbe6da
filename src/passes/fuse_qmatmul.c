/*
 * fuse_qmatmul.c - the fuse_qmatmul pass: an int8 product, its
 * dequantizing rescale and what follows become one FusedQMatMul node
 * (ops.def), which the plan runs as one int8 GEMM with an f32 epilogue
 * (kernels/cpu/quant_fused.c):
 *
 *   dynamic (ONNX Runtime's quantize_dynamic, `smelt quantize --dynamic`):
 *     xq, sx, zx = DynamicQuantizeLinear(x)
 *     Mul(Cast(MatMulInteger(xq, W, zx, zw?), f32), Mul(sx, sw))
 *       -> FusedQMatMul(x, W, sw, zw?)
 *   static (the qdq pass's output, or a file written that way):
 *     Mul(Cast(MatMulInteger(xq, W, zx?, zw?), f32), s), s a constant
 *       -> FusedQMatMul(xq, W, s, zw?, _, _, zx?)
 *
 * then, each while the value before it has no other user: an Add of a
 * constant f32 bias with one value or one per column (rank <= 1), an Add
 * of any other f32 of the result's very shape (the residual of a
 * transformer's feed-forward block: its own step and a pass over the
 * result saved), and an activation of core/act.def. sw and s hold one value or
 * one per column (rank <= 1), each positive and finite (a Mul by any other
 * constant is left alone: FusedQMatMul would refuse it as a scale). The
 * DynamicQuantizeLinear stays while another node reads it and goes with its
 * last product. The result is the chain's: the integer sums, the scale product
 * and the bias sum are the same f32 operations (docs/QUANTIZATION.md). It runs
 * at -O2 before the epilogue and elementwise fusions, which would otherwise
 * take the Mul and Add.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/tensor.h"
#include "passes/pattern.h"

#define MAX_DEAD 12

/* Whether v is a constant f32 of rank <= 1 holding one value or n. */
static int const_vec(const sm_value *v, int64_t n)
{
    return v && v->data && v->data->dtype == SMELT_DTYPE_F32 &&
           v->data->ndim <= 1 && (v->data->numel == 1 || v->data->numel == n);
}

/* const_vec, every value a valid scale (positive and finite): a Mul by
 * anything else is legal ONNX, but FusedQMatMul refuses such a scale,
 * so the chain stays as it is. */
static int const_scale(const sm_value *v, int64_t n)
{
    if (!const_vec(v, n))
        return 0;
    const float *p = v->data->data;
    for (int64_t i = 0; i < v->data->numel; i++)
        if (!(p[i] > 0 && p[i] < INFINITY))
            return 0;
    return 1;
}

/* What a match found. */
typedef struct qmm_match {
    sm_node *dead[MAX_DEAD]; /* absorbed nodes, in graph order */
    int n_dead;
    sm_value *in[8];    /* the fused node's inputs (NULL: absent) */
    sm_node *dq, *smul; /* DynamicQuantizeLinear and scale Mul to retire */
    sm_value *out;
    sm_act act;
} qmm_match;

/* The scale operand s of the rescale: a constant (static form), or
 * Mul(sx, sw) with sx the scale of the DynamicQuantizeLinear that makes
 * the product's A and its zero point (dynamic form). */
static int match_scale(sm_node *mi, sm_value *s, int64_t n, qmm_match *m)
{
    sm_value *za = mi->n_in > 2 ? mi->in[2] : NULL;
    if (const_scale(s, n)) {
        m->in[0] = mi->in[0];
        m->in[2] = s;
        m->in[6] = za;
        return 1;
    }
    sm_node *dq = mi->in[0]->def;
    if (!dq || dq->op != SM_OP_DynamicQuantizeLinear || dq->n_out < 3 ||
        mi->in[0] != dq->out[0] || za != dq->out[2] || !s->def ||
        s->def->op != SM_OP_Mul || dq->in[0]->type.dtype != SMELT_DTYPE_F32)
        return 0;
    sm_node *sm = s->def;
    sm_value *sw = sm->in[0] == dq->out[1]   ? sm->in[1]
                   : sm->in[1] == dq->out[1] ? sm->in[0]
                                             : NULL;
    if (!const_scale(sw, n))
        return 0;
    m->in[0] = dq->in[0];
    m->in[2] = sw;
    m->dq = dq;
    m->smul = sm;
    return 1;
}

/* Builds the fused node and retires what it replaces. */
static smelt_status rewrite(sm_pass_ctx *pc, sm_rw *rw, sm_node *mi,
                            qmm_match *m)
{
    int n_in = 8;
    while (n_in > 3 && !m->in[n_in - 1])
        n_in--;
    sm_node *last = m->dead[m->n_dead - 1];
    sm_node *f = sm_rw_node_new(rw, mi->owner, last, SM_OP_FusedQMatMul,
                                mi->name, n_in, m->in, 1, &m->out->name);
    if (!f || !sm_pat_set_act(f, &m->act))
        return sm_err_nomem(pc->ctx);
    f->out[0]->type = m->out->type;
    SM_TRY(sm_rw_infer_node(rw, f));
    sm_pat_replace(rw, f, m->out, m->dead, m->n_dead);
    if (m->smul)
        pc->stats->removed += sm_rw_remove_if_dead(rw, m->smul);
    if (m->dq)
        pc->stats->removed += sm_rw_remove_if_dead(rw, m->dq);
    pc->stats->fused += m->n_dead;
    pc->stats->changed = 1;
    return SMELT_OK;
}

static int starts(const void *arg, const sm_node *n)
{
    (void)arg;
    return n->op == SM_OP_MatMulInteger;
}

/* Matches the chain from MatMulInteger mi and fuses it. */
static smelt_status fuse_one(sm_pass_ctx *pc, sm_rw *rw, const sm_pat_silu *si,
                             const void *arg, sm_node *mi)
{
    (void)arg;
    qmm_match m;
    memset(&m, 0, sizeof m);
    m.act.kind = SM_ACT_NONE;
    const sm_type *bt = &mi->in[1]->type;
    if (bt->ndim != 2 || bt->dims[1].size < 1)
        return SMELT_OK;
    int64_t n = bt->dims[1].size;
    sm_node *cast = sm_pat_user(rw, mi->out[0]);
    if (!cast || cast->op != SM_OP_Cast ||
        cast->out[0]->type.dtype != SMELT_DTYPE_F32) {
        sm_pat_miss(pc, mi, "its i32 result is not cast to f32 alone");
        return SMELT_OK;
    }
    sm_node *mul = sm_pat_user(rw, cast->out[0]);
    if (!mul || mul->op != SM_OP_Mul) {
        sm_pat_miss(pc, mi, "the cast result is not rescaled by one Mul");
        return SMELT_OK;
    }
    if (!match_scale(mi, sm_pat_other(mul, cast->out[0]), n, &m)) {
        sm_pat_miss(pc, mi,
                    "the rescale is neither a constant per tensor or column "
                    "nor the DynamicQuantizeLinear scale times one");
        return SMELT_OK;
    }
    m.in[1] = mi->in[1];
    m.in[3] = mi->n_in > 3 ? mi->in[3] : NULL;
    m.dead[m.n_dead++] = mi;
    m.dead[m.n_dead++] = cast;
    m.dead[m.n_dead++] = mul;
    m.out = mul->out[0];
    sm_node *add = sm_pat_user(rw, m.out);
    if (add && add->op == SM_OP_Add) {
        sm_value *b = sm_pat_other(add, m.out);
        if (const_vec(b, n) && sm_pat_fits_onto(&b->type, &m.out->type)) {
            m.in[4] = b;
            m.dead[m.n_dead++] = add;
            m.out = add->out[0];
        }
    }
    add = sm_pat_user(rw, m.out);
    if (add && add->op == SM_OP_Add) {
        sm_value *r = sm_pat_other(add, m.out);
        if (r && r != m.out && r->type.dtype == SMELT_DTYPE_F32 &&
            sm_pat_same_shape(&r->type, &m.out->type) &&
            sm_pat_same_shape(&add->out[0]->type, &m.out->type)) {
            m.in[7] = r;
            m.dead[m.n_dead++] = add;
            m.out = add->out[0];
        }
    }
    sm_pat_act_match act;
    char why[200];
    if (sm_pat_match_act(rw, si, m.out, &act, why, sizeof why) &&
        m.n_dead + act.n <= MAX_DEAD) {
        m.act = act.act;
        for (int k = 0; k < act.n; k++)
            m.dead[m.n_dead++] = act.nodes[k];
        m.out = act.out;
    }
    return rewrite(pc, rw, mi, &m);
}

smelt_status sm_pass_fuse_qmatmul(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_run_chains(pc, g, starts, fuse_one, NULL);
}
