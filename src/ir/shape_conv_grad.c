/*
 * shape_conv_grad.c - shape and dtype inference, and cost, of
 * ConvGradWeight, Conv's kernel gradient as one op (ops.def): the window
 * is Conv's over X, and the result has the kernel's shape.
 */
#include "ir/shape_util.h"
#include "kernels/ref/window.h"

/*
 * ConvGradWeight(X [N, C, S...], dY [N, M, O...]) -> [M, C/group, k...],
 * k the kernel_shape. Checks the ranks, the batch, the channel counts
 * against group and, where known, that Conv's window over X gives dY's
 * spatial sizes.
 */
smelt_status sm_shape_convgradweight(sm_shape_ctx *s)
{
    const sm_type *x, *dy;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &dy));
    sm_type *y = &s->out[0];
    SM_TRY(sm_shape_dtype(s, 0, 1, SM_SHAPE_FLOAT, &y->dtype));
    int rank = x->ndim >= 0 ? x->ndim : dy->ndim;
    y->ndim = SM_RANK_UNKNOWN;
    if (rank < 0)
        return SMELT_OK;
    if (rank < 3 || (dy->ndim >= 0 && dy->ndim != rank))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X and dY must share one rank >= 3 (N, C, spatial "
                      "dims...), got ranks %d and %d",
                      s->op->name, x->ndim, dy->ndim);
    int nsp = rank - 2;
    const int64_t *ks = NULL;
    if (sm_attrs_ints(&s->attrs, "kernel_shape", &ks) != nsp)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: kernel_shape must hold %d values (one per spatial "
                      "dim)",
                      s->op->name, nsp);
    int64_t group = sm_attrs_int(&s->attrs, "group", 1);
    if (group < 1 || group > SM_WINDOW_MAX)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: group = %lld must be in [1, %lld]", s->op->name,
                      (long long)group, (long long)SM_WINDOW_MAX);
    int64_t n0 = sm_type_size(x, 0), n1 = sm_type_size(dy, 0);
    int64_t c = sm_type_size(x, 1), m = sm_type_size(dy, 1);
    if (n0 >= 0 && n1 >= 0 && n0 != n1)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X's batch is %lld but dY's is %lld", s->op->name,
                      (long long)n0, (long long)n1);
    if ((c >= 0 && c % group) || (m >= 0 && m % group))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X's %lld and dY's %lld channels must both divide "
                      "into group %lld",
                      s->op->name, (long long)c, (long long)m,
                      (long long)group);
    int64_t in[SMELT_MAX_DIMS], want[SMELT_MAX_DIMS];
    sm_shape_spatial_sizes(x, nsp, in);
    sm_shape_spatial_sizes(dy, nsp, want);
    sm_window w;
    SM_TRY(sm_window_init(s->ctx, s->op->name, &s->attrs, SM_WINDOW_CONV, nsp,
                          in, ks, &w));
    for (int d = 0; d < nsp; d++)
        if (w.out[d] >= 0 && want[d] >= 0 && w.out[d] != want[d])
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: the window over X gives %lld positions in "
                          "spatial dim %d but dY has %lld",
                          s->op->name, (long long)w.out[d], d,
                          (long long)want[d]);
    y->ndim = rank;
    y->dims[0] = sm_type_dim(dy, 1);
    y->dims[1] = (sm_dim){c >= 0 ? c / group : -1, NULL};
    for (int d = 0; d < nsp; d++)
        y->dims[d + 2] = (sm_dim){ks[d], NULL};
    return SMELT_OK;
}

/* ConvGradWeight: every element of dY meets C/group * kernel volume
 * elements of X, one multiply-add each. */
void sm_cost_convgradweight(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *dy = sm_shape_in(s, 1);
    double macs = (dy ? sm_type_numel(dy) : 1) * sm_type_factor(&s->out[0], 1) *
                  sm_type_tail_volume(&s->out[0], 2);
    sm_cost_io(s, c, 2 * macs);
}
