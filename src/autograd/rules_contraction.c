/*
 * rules_contraction.c - gradient rules of the contractions. MatMul's
 * gradients are MatMuls by the transposed other operand, summed over the
 * batch dimensions that broadcasting added; Gemm's are Gemms, with the
 * transpositions folded into transA / transB. (Conv and ConvTranspose:
 * rules_conv.c.)
 */
#include "autograd/rules_nn.h"

/* x with its last two axes swapped. */
static sm_value *swap_last(sm_grad_ctx *g, sm_value *x)
{
    if (!x)
        return NULL;
    int r = x->type.ndim;
    int64_t perm[SMELT_MAX_DIMS];
    for (int i = 0; i < r; i++)
        perm[i] = i;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    sm_node *n = sm_g_node(g, SM_OP_Transpose, 1, &x, 1);
    if (n && !sm_node_set_ints(n, "perm", perm, r) && g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    return sm_g_done(g, n);
}

/* x with a trailing (end) or leading axis of 1 added. */
static sm_value *unsqueeze(sm_grad_ctx *g, sm_value *x, int end)
{
    int64_t axis = end ? -1 : 0;
    return sm_g_op2(g, SM_OP_Unsqueeze, x, sm_g_ints(g, &axis, 1));
}

/* alpha * op(a) op(b), a Gemm without C (alpha 1 left unset). */
static sm_value *gemm(sm_grad_ctx *g, sm_value *a, sm_value *b, double alpha,
                      int ta, int tb)
{
    sm_value *in[2] = {a, b};
    sm_node *n = sm_g_node(g, SM_OP_Gemm, 2, in, 1);
    if (n &&
        ((alpha != 1 && !sm_node_set_float(n, "alpha", alpha)) ||
         (ta && !sm_node_set_int(n, "transA", 1)) ||
         (tb && !sm_node_set_int(n, "transB", 1))) &&
        g->st == SMELT_OK)
        g->st = sm_err_nomem(g->ctx);
    return sm_g_done(g, n);
}

/* x [..., c] as the matrix [rows, c]. */
static sm_value *as_rows(sm_grad_ctx *g, sm_value *x, int64_t c)
{
    return sm_g_reshape(g, x, sm_g_ints(g, (int64_t[]){-1, c}, 2));
}

/*
 * A [..., K] times a matrix B [K, N] (a linear layer on a batch of
 * sequences): the batch dims are rows of one product, so each gradient
 * is one Gemm over the rows seen as a [rows, K] matrix. dB = A^T dY then
 * sums over every row inside the product (K = rows deep), where the
 * batched form computed one [K, N] product per batch element (as many
 * as 128, each only batch-size deep) into a tensor that many times the
 * weight's size and summed it in a ReduceSum, after copying A transposed
 * in a Transpose. Returns 0 (nothing built) when K or N is unknown or
 * 0 (a reshape to [-1, 0] would not say how many rows).
 */
static int rows_fold(sm_grad_ctx *g, sm_value *a, sm_value *b)
{
    int64_t K = b->type.dims[0].size, N = b->type.dims[1].size;
    if (K <= 0 || N <= 0 || a->type.dims[a->type.ndim - 1].size != K)
        return 0;
    sm_value *dy = as_rows(g, g->dy[0], N);
    if (g->need[0])
        sm_g_set(g, 0, sm_g_reshape_like(g, gemm(g, dy, b, 1, 0, 1), a));
    if (g->need[1])
        sm_g_set(g, 1, gemm(g, as_rows(g, a, K), dy, 1, 1, 0));
    return 1;
}

/* matmul: dA = dY B^T, dB = A^T dY, with 1-D operands made 2-D first
 * (as numpy does) and the result summed down to each operand's shape. */
smelt_status sm_grad_matmul(sm_grad_ctx *g)
{
    sm_value *a = g->n->in[0], *b = g->n->in[1], *dy = g->dy[0];
    if (a->type.ndim < 1 || b->type.ndim < 1)
        return sm_g_fail(g, SMELT_ERR_SHAPE, "operand ranks are unknown");
    sm_value *a2 = a->type.ndim == 1 ? unsqueeze(g, a, 0) : a;
    sm_value *b2 = b->type.ndim == 1 ? unsqueeze(g, b, 1) : b;
    sm_value *dy2 = dy;
    if (a->type.ndim == 1)
        dy2 = sm_g_op2(
            g, SM_OP_Unsqueeze, dy2,
            sm_g_ints(g,
                      (int64_t[]){dy->type.ndim - (b->type.ndim == 1 ? 0 : 1)},
                      1));
    if (b->type.ndim == 1)
        dy2 = unsqueeze(g, dy2, 1);
    if (a->type.ndim == 2 && b->type.ndim == 2) {
        /* One Gemm each, whose trans flags read the operand transposed
         * in place: no Transpose step copies it first. */
        if (g->need[0])
            sm_g_set(g, 0, gemm(g, dy, b, 1, 0, 1));
        if (g->need[1])
            sm_g_set(g, 1, gemm(g, a, dy, 1, 1, 0));
        return g->st;
    }
    if (b->type.ndim == 2 && a->type.ndim > 2 && rows_fold(g, a, b))
        return g->st;
    if (g->need[0]) {
        sm_value *d = sm_g_op2(g, SM_OP_MatMul, dy2, swap_last(g, b2));
        d = sm_g_unbroadcast(g, d, a2);
        sm_g_set(g, 0, a2 != a ? sm_g_reshape_like(g, d, a) : d);
    }
    if (g->need[1]) {
        sm_value *d = sm_g_op2(g, SM_OP_MatMul, swap_last(g, a2), dy2);
        d = sm_g_unbroadcast(g, d, b2);
        sm_g_set(g, 1, b2 != b ? sm_g_reshape_like(g, d, b) : d);
    }
    return g->st;
}

/*
 * Y = alpha * A' B' + beta * C, A' = A^T under transA, B' likewise:
 *   dA' = alpha dY B'^T, dB' = alpha A'^T dY, dC = beta dY summed to C;
 * dA is dA' transposed back under transA (= alpha B' dY^T), dB likewise
 * (= alpha dY^T A'), each one Gemm whose trans flags absorb the
 * transpositions.
 */
smelt_status sm_gn_gemm_grads(sm_grad_ctx *g, sm_value *dy)
{
    const sm_node *n = g->n;
    sm_attrs at = sm_node_attrs(n);
    double alpha = sm_attrs_float(&at, "alpha", 1);
    double beta = sm_attrs_float(&at, "beta", 1);
    int ta = sm_attrs_int(&at, "transA", 0) != 0;
    int tb = sm_attrs_int(&at, "transB", 0) != 0;
    sm_value *a = n->in[0], *b = n->in[1];
    if (g->need[0])
        sm_g_set(g, 0,
                 ta ? gemm(g, b, dy, alpha, tb, 1)
                    : gemm(g, dy, b, alpha, 0, !tb));
    if (g->need[1])
        sm_g_set(g, 1,
                 tb ? gemm(g, dy, a, alpha, 1, ta)
                    : gemm(g, a, dy, alpha, !ta, 0));
    if (n->n_in > 2 && n->in[2] && g->need[2]) {
        sm_value *d = sm_g_unbroadcast(g, dy, n->in[2]);
        if (beta != 1)
            d = sm_g_op2(g, SM_OP_Mul, d, sm_g_scalar_like(g, dy, beta));
        sm_g_set(g, 2, d);
    }
    return g->st;
}

smelt_status sm_grad_gemm(sm_grad_ctx *g)
{
    return sm_gn_gemm_grads(g, g->dy[0]);
}
