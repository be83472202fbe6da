/*
 * shape_conv.c - shape and dtype inference, and costs, of Conv and
 * ConvTranspose over any number of spatial dims. The window arithmetic
 * lives in kernels/ref/window.h, shared with the reference kernels and
 * the pooling ops.
 */
#include "ir/shape_util.h"
#include "kernels/ref/window.h"

/* Fails when X's c channels do not fit W's channel dim wc (C/group for
 * Conv, C for ConvTranspose), or W's channel count `split` (M for Conv,
 * C for ConvTranspose) does not divide into groups. */
static smelt_status check_channels(sm_shape_ctx *s, int transposed,
                                   int64_t group, int64_t c, int64_t wc,
                                   int64_t split)
{
    if (c >= 0 && wc >= 0 && transposed && c != wc)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X has %lld channels but W's dim 0 is %lld",
                      s->op->name, (long long)c, (long long)wc);
    if (c >= 0 && wc >= 0 && !transposed && (c % group || c / group != wc))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X has %lld channels but W's dim 1 (%lld) x group "
                      "(%lld) differs",
                      s->op->name, (long long)c, (long long)wc,
                      (long long)group);
    if (split >= 0 && split % group)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: W's %s channel count %lld is not divisible by "
                      "group %lld",
                      s->op->name, transposed ? "input" : "output",
                      (long long)split, (long long)group);
    return SMELT_OK;
}

/*
 * Conv (X [N, C, D...], W [M, C/group, k...]) and ConvTranspose (W [C,
 * M/group, k...]): Y is [N, M, spatial...], the window giving the spatial
 * sizes. Checks the ranks, the channel counts against group and B's
 * length M.
 */
static smelt_status conv_like(sm_shape_ctx *s, sm_window_kind kind)
{
    const sm_type *x, *w, *b = sm_shape_in(s, 2);
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &w));
    sm_type *y = &s->out[0];
    SM_TRY(sm_shape_dtype(s, 0, 2, SM_SHAPE_FLOAT, &y->dtype));
    int rank = x->ndim >= 0 ? x->ndim : w->ndim;
    y->ndim = SM_RANK_UNKNOWN;
    if (rank < 0)
        return SMELT_OK;
    if (rank < 3 || (w->ndim >= 0 && w->ndim != rank))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X and W must share one rank >= 3 (N, C, spatial "
                      "dims...), got ranks %d and %d",
                      s->op->name, x->ndim, w->ndim);
    int64_t group = sm_attrs_int(&s->attrs, "group", 1);
    if (group < 1 || group > SM_WINDOW_MAX)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: group = %lld must be in [1, %lld]", s->op->name,
                      (long long)group, (long long)SM_WINDOW_MAX);
    int t = kind == SM_WINDOW_CONVT;
    int64_t c = sm_type_size(x, 1), w0 = sm_type_size(w, 0),
            w1 = sm_type_size(w, 1);
    SM_TRY(check_channels(s, t, group, c, t ? w0 : w1, w0));
    sm_dim m = sm_type_dim(w, 0); /* Conv: M is W's dim 0 */
    if (t && group == 1)
        m = sm_type_dim(w, 1);
    else if (t) /* ConvTranspose: M is W's dim 1 times group */
        m = w1 >= 0 && w1 <= INT64_MAX / group ? (sm_dim){w1 * group, NULL}
                                               : (sm_dim){-1, NULL};
    int64_t bn = sm_type_size(b, 0);
    if (b && b->ndim >= 0 &&
        (b->ndim != 1 || (bn >= 0 && m.size >= 0 && bn != m.size)))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: B must be 1-D with M = %lld values, got rank %d "
                      "with %lld",
                      s->op->name, (long long)m.size, b->ndim, (long long)bn);
    int64_t in[SMELT_MAX_DIMS], k[SMELT_MAX_DIMS];
    sm_shape_spatial_sizes(x, rank - 2, in);
    sm_shape_spatial_sizes(w, rank - 2, k);
    sm_window win;
    SM_TRY(sm_window_init(s->ctx, s->op->name, &s->attrs, kind, rank - 2, in, k,
                          &win));
    y->ndim = rank;
    y->dims[0] = sm_type_dim(x, 0);
    y->dims[1] = m;
    sm_shape_window_dims(y, &win, x);
    return SMELT_OK;
}

smelt_status sm_shape_conv(sm_shape_ctx *s)
{
    return conv_like(s, SM_WINDOW_CONV);
}

smelt_status sm_shape_convtranspose(sm_shape_ctx *s)
{
    return conv_like(s, SM_WINDOW_CONVT);
}

/* ---- costs -------------------------------------------------------------- */

/* Conv: every output element takes (C/group) * kernel volume multiply-adds
 * (W is [M, C/group, k...]), plus the bias add. */
void sm_cost_conv(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *w = sm_shape_in(s, 1);
    double out = sm_type_numel(&s->out[0]);
    double macs = out * sm_type_factor(w, 1) * sm_type_tail_volume(w, 2);
    sm_cost_io(s, c, 2 * macs + (sm_shape_in(s, 2) ? out : 0));
}

/* ConvTranspose: every input element feeds (M/group) * kernel volume
 * multiply-adds (W is [C, M/group, k...]), plus the bias add. */
void sm_cost_convtranspose(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0), *w = sm_shape_in(s, 1);
    double macs = (x ? sm_type_numel(x) : 1) * sm_type_factor(w, 1) *
                  sm_type_tail_volume(w, 2);
    double out = sm_type_numel(&s->out[0]);
    sm_cost_io(s, c, 2 * macs + (sm_shape_in(s, 2) ? out : 0));
}
