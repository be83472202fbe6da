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
#include "autograd/fakequant.h"
#include "passes/qat_pair.h"

smelt_status sm_grad_fold_fakequant(smelt_ctx_t *ctx, sm_graph *g, sm_rw *rw)
{
    for (sm_node *n = sm_rw_first(rw, g->top); n;) {
        sm_node *next = sm_rw_next(rw, n);
        sm_node *q = sm_fakequant_pair(n);
        if (q) {
            sm_value *in[3] = {q->in[0], q->in[1],
                               q->n_in > 2 ? q->in[2] : NULL};
            const char *names[1] = {n->out[0]->name};
            sm_node *f = sm_rw_node_new(rw, g->top, n, SM_OP_FakeQuantize,
                                        n->name, in[2] ? 3 : 2, in, 1, names);
            sm_attrs at = sm_node_attrs(q);
            if (!f || !sm_node_set_int(f, "axis", sm_attrs_int(&at, "axis", 1)))
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
