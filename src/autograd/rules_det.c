/*
 * rules_det.c - the gradient rule of Det (docs/AUTOGRAD.md, "Rules: Det,
 * recurrent ops, sampling").
 *
 * d det(X) / dX is the cofactor matrix C (C[i,j] = (-1)^(i+j) times the
 * determinant of X without row i and column j), which equals
 * det(X) inv(X)^T where X is invertible but, unlike that product, stays
 * exact where det(X) = 0. The rule builds the n*n minors with two
 * Gathers (each row's and each column's n-1 survivors), takes their
 * determinants with Det itself and signs them: only ops of the table,
 * so the plan runs it and Det's own rule gives second derivatives.
 */
#include "autograd/rules_nn.h"
#include "autograd/rules_norm.h"

/* The largest matrix side the rule builds minors for: n^4 elements of
 * minors (1 Mi at 32), O(n^5) work. */
#define DET_MAX_N 32

/* A node of op on x and a constant index with an integer axis. */
static sm_value *gather_axis(sm_grad_ctx *g, sm_value *x, sm_value *idx,
                             int64_t axis)
{
    sm_value *in[2] = {x, idx};
    sm_node *nd = sm_g_node(g, SM_OP_Gather, 2, in, 1);
    if (nd && !sm_node_set_int(nd, "axis", axis))
        return nn_nomem(g);
    return sm_g_done(g, nd);
}

/* The cofactor matrices of x [..., n, n] (rank r, n >= 2). */
static sm_value *cofactors(sm_grad_ctx *g, sm_value *x, int r, int64_t n)
{
    double idx[DET_MAX_N * (DET_MAX_N - 1)], sign[DET_MAX_N * DET_MAX_N];
    for (int64_t i = 0, k = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            if (j != i)
                idx[k++] = (double)j;
            sign[i * n + j] = (i + j) % 2 ? -1 : 1;
        }
    int64_t idims[2] = {n, n - 1}, sdims[2] = {n, n};
    sm_value *keep = sm_gn_const(g, SMELT_DTYPE_I64, 2, idims, idx);
    /* [..., i, row, col] then [..., i, row, j, col] */
    sm_value *rows = gather_axis(g, x, keep, r - 2);
    sm_value *both = gather_axis(g, rows, keep, r);
    int64_t perm[SMELT_MAX_DIMS + 2];
    for (int d = 0; d < r - 2; d++)
        perm[d] = d;
    perm[r - 2] = r - 2; /* i */
    perm[r - 1] = r;     /* j */
    perm[r] = r - 1;     /* row */
    perm[r + 1] = r + 1; /* col */
    sm_value *minors = sm_g_op1(g, SM_OP_Det, sm_gn_transpose(g, both, perm));
    return nn_mul(g, minors, sm_gn_const(g, x->type.dtype, 2, sdims, sign));
}

/* dX = dY C, C the cofactors of X (n = 1: C = 1; n = 0: nothing). */
smelt_status sm_grad_det(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *dy = g->dy[0];
    int r = nn_rank(g, 0);
    if (r < 0)
        return g->st;
    int64_t n = x->type.dims[r - 1].size;
    if (n < 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the matrix size is not known before running (bind "
                         "it with --dim)");
    if (n > DET_MAX_N)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "matrices larger than %dx%d (the rule builds every "
                         "minor)",
                         DET_MAX_N, DET_MAX_N);
    if (n == 0) {
        sm_g_set(g, 0, sm_g_zeros_like(g, x));
        return g->st;
    }
    int64_t axes[2] = {r - 2, r - 1};
    sm_value *d = nn_unsqueeze(g, dy, axes, 2);
    sm_g_set(g, 0,
             n == 1 ? sm_g_expand_like(g, d, x)
                    : nn_mul(g, d, cofactors(g, x, r, n)));
    return g->st;
}
