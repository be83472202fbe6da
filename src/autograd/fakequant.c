/*
 * fakequant.c - QuantizeLinear -> DequantizeLinear pairs become
 * FakeQuantize before a graph is differentiated (smelt_graph_grad).
 *
 * A QAT model (`smelt quantize --qat`) is standard ONNX: its fake
 * quantization is the QDQ pair ONNX Runtime and the `qdq` pass know.
 * The pair cannot be differentiated as two ops (the quantized value in
 * between is an integer, and DequantizeLinear's rule alone gives the
 * scale only its d/ds with round held fixed), so the copy of the graph
 * smelt_graph_grad builds on sees one FakeQuantize instead, the same
 * arithmetic with the straight-through rule (rules_fakequant.c). The
 * caller's graph, and the file a training run saves, keep the pair.
 */
#include <string.h>

#include "autograd/fakequant.h"
#include "core/dtype.h"
#include "ir/infer.h"

/* Whether a and b hold the same value: the same value, or constants with
 * equal dtype, shape and bytes; both absent counts as equal. */
static int same_param(const sm_value *a, const sm_value *b)
{
    if (a == b)
        return 1;
    if (!a || !b || !a->data || !b->data)
        return 0;
    const sm_tensor *x = a->data, *y = b->data;
    if (x->dtype != y->dtype || x->ndim != y->ndim || x->numel != y->numel)
        return 0;
    for (int i = 0; i < x->ndim; i++)
        if (x->dims[i] != y->dims[i])
            return 0;
    return !memcmp(x->data, y->data,
                   (size_t)x->numel * smelt_dtype_size(x->dtype));
}

static int64_t axis_of(const sm_node *n)
{
    sm_attrs at = sm_node_attrs(n);
    return sm_attrs_int(&at, "axis", 1);
}

sm_node *sm_fakequant_pair(const sm_node *dq)
{
    if (dq->op != SM_OP_DequantizeLinear || dq->n_in < 1)
        return NULL;
    sm_value *qv = dq->in[0];
    sm_node *q = qv ? qv->def : NULL;
    if (!q || q->op != SM_OP_QuantizeLinear || q->n_in < 2 || !q->in[0] ||
        !sm_dtype_is_float(q->in[0]->type.dtype) || dq->n_in < 2)
        return NULL;
    sm_value *qz = q->n_in > 2 ? q->in[2] : NULL;
    sm_value *dz = dq->n_in > 2 ? dq->in[2] : NULL;
    if (!same_param(q->in[1], dq->in[1]) || !same_param(qz, dz))
        return NULL;
    int per_axis = q->in[1]->type.ndim == 1 && q->in[1]->type.dims[0].size != 1;
    if (per_axis && axis_of(q) != axis_of(dq))
        return NULL;
    if (dq->out[0]->type.dtype != q->in[0]->type.dtype)
        return NULL;
    return q;
}

smelt_status sm_grad_fold_fakequant(smelt_ctx_t *ctx, sm_graph *g, sm_rw *rw)
{
    (void)ctx;
    for (sm_node *n = sm_rw_first(rw, g->top); n;) {
        sm_node *next = sm_rw_next(rw, n);
        sm_node *q = sm_fakequant_pair(n);
        if (q) {
            sm_value *in[3] = {q->in[0], q->in[1],
                               q->n_in > 2 ? q->in[2] : NULL};
            const char *names[1] = {n->out[0]->name};
            sm_node *f = sm_rw_node_new(rw, g->top, n, SM_OP_FakeQuantize,
                                        n->name, in[2] ? 3 : 2, in, 1, names);
            if (!f || !sm_node_set_int(f, "axis", axis_of(q)))
                return sm_err_nomem(ctx);
            SM_TRY(sm_rw_infer_node(rw, f));
            SM_TRY(sm_rw_forward(rw, n->out[0], f->out[0]));
            sm_rw_remove_node(rw, n);
            sm_rw_remove_if_dead(rw, q);
        }
        n = next;
    }
    return SMELT_OK;
}
