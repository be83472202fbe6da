/*
 * known.c - the value of a small forward value that does not depend on
 * any input's data, for rules whose exact form needs constants.
 *
 * PyTorch's exporter writes shape arithmetic into the graph (Shape ->
 * Gather -> Div -> Mul giving a Slice's bounds: nn.MultiheadAttention
 * splits its packed projection so). smelt_graph_grad differentiates
 * before any folding, so such a Slice's bounds are not constants and its
 * rule fell back to the index map (Range, ScatterElements into zeros,
 * sized while running: 230 ms of a 630 ms transformer training step).
 * Once every dim is known (smelt train binds the batch), those bounds
 * are fixed: this evaluates them as shape inference does, with the
 * reference kernels, over constants and the Shape of typed values.
 */
#include "autograd/grad.h"
#include "core/alloc.h"
#include "ir/eval.h"
#include "ir/shape_util.h"

/* How deep the walk back goes, the largest value it evaluates and the
 * largest constant it reads. */
#define KNOWN_DEPTH 16
#define KNOWN_MAX_NUMEL 64
#define KNOWN_MAX_CONST 4096

/* A small-enough, fully typed value. */
static int small(const sm_value *v)
{
    return sm_type_known(&v->type) &&
           sm_type_numel(&v->type) <= KNOWN_MAX_NUMEL;
}

/* Shape(x) from x's type: dims start..end (ONNX's clamping). */
static sm_tensor *shape_of(smelt_ctx_t *ctx, const sm_node *n)
{
    const sm_value *x = n->in[0];
    if (!x || x->type.ndim < 0)
        return NULL;
    sm_attrs at = sm_node_attrs(n);
    int64_t r = x->type.ndim;
    int64_t s = sm_attrs_int(&at, "start", 0), e = sm_attrs_int(&at, "end", r);
    s = s < 0 ? s + r : s;
    e = e < 0 ? e + r : e;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < s ? s : e > r ? r : e;
    int64_t len = e - s;
    sm_tensor *t = NULL;
    if (sm_tensor_new(ctx, SMELT_DTYPE_I64, 1, &len, &t) != SMELT_OK)
        return NULL;
    int64_t *p = t->data;
    for (int64_t i = s; i < e; i++) {
        if (x->type.dims[i].size < 0) {
            sm_tensor_free(t);
            return NULL;
        }
        p[i - s] = x->type.dims[i].size;
    }
    return t;
}

static sm_tensor *known(smelt_ctx_t *ctx, const sm_value *v, int depth)
{
    sm_tensor *t = NULL;
    if (!v)
        return NULL;
    if (v->data) /* a constant; a large one (a weight) is no shape */
        return v->data->numel <= KNOWN_MAX_CONST &&
                       sm_tensor_clone(ctx, v->data, &t) == SMELT_OK
                   ? t
                   : NULL;
    const sm_node *n = v->def;
    if (!n || depth >= KNOWN_DEPTH || !small(v) || n->n_blocks)
        return NULL;
    if (n->op == SM_OP_Shape)
        return shape_of(ctx, n);
    if (n->n_in > 8 || n->n_out > 4)
        return NULL;
    sm_tensor *args[8] = {0}, *outs[4] = {0};
    int ok = 1;
    for (int i = 0; ok && i < n->n_in; i++)
        if (n->in[i])
            ok = (args[i] = known(ctx, n->in[i], depth + 1)) != NULL;
    if (ok && sm_eval_node(ctx, n, args, outs, 4096) == SMELT_OK) {
        t = outs[v->def_index];
        outs[v->def_index] = NULL;
    }
    for (int i = 0; i < n->n_in; i++)
        sm_tensor_free(args[i]);
    for (int i = 0; i < n->n_out; i++)
        sm_tensor_free(outs[i]);
    return t;
}

sm_tensor *sm_g_known(sm_grad_ctx *g, const sm_value *v)
{
    /* Failing to know a value is no error: the caller takes its general
     * form. Keep the context's message of a failed evaluation out. */
    smelt_ctx_t *quiet = smelt_ctx_init();
    if (!quiet)
        return NULL;
    sm_tensor *t = known(quiet, v, 0);
    smelt_ctx_free(quiet);
    (void)g;
    return t;
}
