/*
 * rules_pool.c - gradient rules of the pooling ops, in terms of ops the
 * table has:
 *
 * - MaxPool sends each output's gradient to the input element its
 *   Indices output names (the first maximum of the window, as PyTorch
 *   does): ScatterElements with reduction "add" into zeros of X's size.
 * - AveragePool and LpPool spread each output's (scaled) gradient over
 *   its window: the input gradient of a convolution by a kernel of ones
 *   over the planes (batch and channels folded into one axis), landing
 *   on X's size, so taps in the padding or past it (ceil_mode) drop out
 *   by themselves.
 * - The global forms broadcast dY back over the spatial dims.
 */
#include "autograd/rules_nn.h"
#include "core/alloc.h"

/* Along dim d of window w at output position o: the number of taps that
 * read the input (*in) and that lie inside the padded extent (*padded);
 * the reference kernel's rule (kernels/ref/pool.c). */
static void taps_1d(const sm_window *w, int d, int64_t o, int64_t *in,
                    int64_t *padded)
{
    int64_t dl = w->dil[d], k = w->kernel[d];
    int64_t base = o * w->stride[d] - w->pad0[d];
    int64_t a = base >= 0 ? 0 : (-base + dl - 1) / dl;
    int64_t b = w->in[d] - base <= 0 ? 0 : (w->in[d] - base - 1) / dl + 1;
    int64_t end = w->in[d] + w->pad1[d] - base;
    int64_t c = end <= 0 ? 0 : (end - 1) / dl + 1;
    a = a < k ? a : k;
    b = b < k ? b : k;
    *in = b > a ? b - a : 0;
    *padded = c < k ? c : k;
}

/* The planes of dy ([N, C, O...] -> [N*C, 1, O...]) spread over their
 * windows: x[p, q] = scale * sum of dy[p, o] over the windows o that
 * contain q, as a tensor of X's shape. */
static sm_value *spread(sm_grad_ctx *g, const sm_window *w, sm_value *dy,
                        double scale)
{
    const sm_value *x = g->n->in[0];
    int nsp = w->nsp;
    int64_t dims[SMELT_MAX_DIMS], one[SMELT_MAX_DIMS], s[SMELT_MAX_DIMS];
    dims[0] = -1;
    dims[1] = 1;
    for (int d = 0; d < nsp; d++)
        dims[d + 2] = w->out[d];
    sm_value *planes = sm_gn_reshape(g, dy, dims, nsp + 2);
    int64_t ksz = sm_window_prod(nsp, w->kernel);
    double *ones = sm_malloc((size_t)ksz * sizeof *ones);
    if (!ones) {
        sm_g_fail(g, SMELT_ERR_NOMEM, "no memory for a %lld-tap kernel",
                  (long long)ksz);
        return NULL;
    }
    for (int64_t i = 0; i < ksz; i++)
        ones[i] = scale;
    one[0] = one[1] = 1;
    for (int d = 0; d < nsp; d++) {
        one[d + 2] = w->kernel[d];
        s[d] = w->stride[d];
    }
    sm_value *k = sm_gn_const(g, x->type.dtype, nsp + 2, one, ones);
    sm_free(ones);
    sm_value *r = sm_gn_conv_dx(g, planes, k, 1, s, w->dil, w->pad0, w->in);
    return sm_g_reshape_like(g, r, x);
}

/* MaxPool: dX = ScatterElements(0, Indices, dY, reduction add). The
 * forward node's own Indices serve when it has them in row-major order;
 * otherwise a second MaxPool makes them. A window wholly in the padding
 * (SAME with large dilations) has index -1: its gradient is masked. */
smelt_status sm_grad_maxpool(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *dy = g->dy[0];
    sm_window w;
    if (sm_gn_window(g, SM_WINDOW_POOL, 0, &w) != SMELT_OK)
        return g->st;
    sm_attrs at = sm_node_attrs(n);
    sm_value *idx = NULL;
    if (n->n_out > 1 && n->out[1] && !sm_attrs_int(&at, "storage_order", 0)) {
        idx = n->out[1];
    } else {
        sm_node *m = sm_g_node(g, SM_OP_MaxPool, 1, &x, 2);
        static const char *const skip[] = {"storage_order", NULL};
        sm_gn_copy_attrs(g, m, n, skip);
        if (sm_g_done(g, m))
            idx = m->out[1];
    }
    int empty = 0;
    for (int d = 0; d < w.nsp; d++)
        for (int64_t o = 0; o < w.out[d]; o++) {
            int64_t cnt, padded;
            taps_1d(&w, d, o, &cnt, &padded);
            empty |= cnt == 0;
        }
    if (empty) {
        sm_value *none =
            sm_g_op2(g, SM_OP_Less, idx, sm_g_scalar(g, SMELT_DTYPE_I64, 0));
        dy = sm_g_op3(g, SM_OP_Where, none, sm_g_scalar_like(g, dy, 0), dy);
        idx = sm_g_op3(g, SM_OP_Where, none, sm_g_scalar(g, SMELT_DTYPE_I64, 0),
                       idx);
    }
    int64_t flat = -1;
    sm_value *in[3] = {sm_gn_reshape(g, sm_g_zeros_like(g, x), &flat, 1),
                       sm_gn_reshape(g, idx, &flat, 1),
                       sm_gn_reshape(g, dy, &flat, 1)};
    sm_node *sc = sm_g_node(g, SM_OP_ScatterElements, 3, in, 1);
    if (sc && !sm_node_set_string(sc, "reduction", "add"))
        sm_g_fail(g, SMELT_ERR_NOMEM, "no memory for an attribute");
    sm_g_set(g, 0, sm_g_reshape_like(g, sm_g_done(g, sc), x));
    return g->st;
}

/* AveragePool: each window's gradient dY / divisor spread over it. The
 * divisor (taps reading X, or with count_include_pad taps inside the
 * padded extent) is a product over the spatial dims; when it is the same
 * for every window it scales the kernel, else dY is scaled by a constant
 * map of 1 / divisor first. */
smelt_status sm_grad_averagepool(sm_grad_ctx *g)
{
    sm_value *dy = g->dy[0];
    sm_window w;
    if (sm_gn_window(g, SM_WINDOW_POOL, 0, &w) != SMELT_OK)
        return g->st;
    sm_attrs at = sm_node_attrs(g->n);
    int include_pad = sm_attrs_int(&at, "count_include_pad", 0) != 0;
    int64_t osz = sm_window_prod(w.nsp, w.out);
    double *inv = sm_malloc((size_t)osz * sizeof *inv);
    if (!inv)
        return sm_g_fail(g, SMELT_ERR_NOMEM, "no memory for %lld divisors",
                         (long long)osz);
    int64_t o[SMELT_MAX_DIMS] = {0};
    int uniform = 1;
    for (int64_t i = 0; i < osz; i++) {
        double div = 1;
        for (int d = 0; d < w.nsp; d++) {
            int64_t cnt, padded;
            taps_1d(&w, d, o[d], &cnt, &padded);
            div *= (double)(include_pad ? padded : cnt);
        }
        inv[i] = div > 0 ? 1 / div : 0; /* an empty window reads nothing */
        uniform &= inv[i] == inv[0];
        for (int d = w.nsp - 1; d >= 0 && ++o[d] == w.out[d]; d--)
            o[d] = 0;
    }
    double scale = inv[0];
    if (!uniform) {
        dy = sm_g_op2(g, SM_OP_Mul, dy,
                      sm_gn_const(g, dy->type.dtype, w.nsp, w.out, inv));
        scale = 1;
    }
    sm_free(inv);
    sm_g_set(g, 0, spread(g, &w, dy, scale));
    return g->st;
}

/* d|x|^p / dx over p-th power: sign(x) |x|^(p-1), times t. */
static sm_value *lp_factor(sm_grad_ctx *g, sm_value *x, sm_value *t, double p)
{
    if (p == 2)
        return sm_g_op2(g, SM_OP_Mul, x, t);
    sm_value *f = sm_g_op1(g, SM_OP_Sign, x);
    if (p != 1)
        f = sm_g_op2(g, SM_OP_Mul, f,
                     sm_g_op2(g, SM_OP_Pow, sm_g_op1(g, SM_OP_Abs, x),
                              sm_g_scalar_like(g, x, p - 1)));
    return sm_g_op2(g, SM_OP_Mul, f, t);
}

/* dY * y^(1-p), the factor of y = (sum |x|^p)^(1/p) that every x of the
 * window shares. */
static sm_value *lp_outer(sm_grad_ctx *g, double p)
{
    sm_value *y = g->n->out[0], *dy = g->dy[0];
    if (p == 1)
        return dy;
    if (p == 2)
        return sm_g_op2(g, SM_OP_Div, dy, y);
    return sm_g_op2(g, SM_OP_Mul, dy,
                    sm_g_op2(g, SM_OP_Pow, y, sm_g_scalar_like(g, y, 1 - p)));
}

/* LpPool: dX = sign(x) |x|^(p-1) * (sum over the windows containing x of
 * dY y^(1-p)). */
smelt_status sm_grad_lppool(sm_grad_ctx *g)
{
    sm_window w;
    if (sm_gn_window(g, SM_WINDOW_POOL, 0, &w) != SMELT_OK)
        return g->st;
    sm_attrs at = sm_node_attrs(g->n);
    double p = (double)sm_attrs_int(&at, "p", 2);
    sm_value *s = spread(g, &w, lp_outer(g, p), 1);
    sm_g_set(g, 0, lp_factor(g, g->n->in[0], s, p));
    return g->st;
}

/* The number of spatial elements of x, -1 when not known. */
static double spatial_count(const sm_value *x)
{
    double c = 1;
    for (int d = 2; d < x->type.ndim; d++) {
        if (x->type.dims[d].size < 0)
            return -1;
        c *= (double)x->type.dims[d].size;
    }
    return x->type.ndim < 2 ? -1 : c;
}

/* GlobalAveragePool: dX = dY / (spatial size), broadcast over space. */
smelt_status sm_grad_globalaveragepool(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *dy = g->dy[0];
    double c = spatial_count(x);
    if (c <= 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the spatial sizes of '%s' are not known before "
                         "running (bind them with --dim)",
                         x->name);
    if (c != 1)
        dy = sm_g_op2(g, SM_OP_Mul, dy, sm_g_scalar_like(g, dy, 1 / c));
    sm_g_set(g, 0, sm_g_expand_like(g, dy, x));
    return g->st;
}

/* GlobalMaxPool: dY goes to the first maximum of each plane: ArgMax over
 * the flattened spatial dims, then ScatterElements into zeros. */
smelt_status sm_grad_globalmaxpool(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *dy = g->dy[0];
    int64_t dims[3] = {0, 0, -1};
    sm_value *flat = sm_gn_reshape(g, x, dims, 3);
    sm_node *am = sm_g_node(g, SM_OP_ArgMax, 1, &flat, 1);
    if (am && !sm_node_set_int(am, "axis", 2))
        sm_g_fail(g, SMELT_ERR_NOMEM, "no memory for an attribute");
    sm_value *in[3] = {sm_g_zeros_like(g, flat), sm_g_done(g, am),
                       sm_gn_reshape(g, dy, dims, 3)};
    sm_node *sc = sm_g_node(g, SM_OP_ScatterElements, 3, in, 1);
    if (sc && !sm_node_set_int(sc, "axis", 2))
        sm_g_fail(g, SMELT_ERR_NOMEM, "no memory for an attribute");
    sm_g_set(g, 0, sm_g_reshape_like(g, sm_g_done(g, sc), x));
    return g->st;
}

/* GlobalLpPool: as LpPool with one window over all of space. */
smelt_status sm_grad_globallppool(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0];
    sm_attrs at = sm_node_attrs(g->n);
    double p = (double)sm_attrs_int(&at, "p", 2);
    sm_value *s = sm_g_expand_like(g, lp_outer(g, p), x);
    sm_g_set(g, 0, lp_factor(g, x, s, p));
    return g->st;
}
