/*
 * rules_index.c - gradient rules of the ops that index: Slice, the
 * Gathers, the Scatters, Compress, TopK, OneHot and DequantizeLinear's
 * scale. A gather's gradient scatters back with reduction "add", so
 * repeated indices sum their contributions; a scatter's gradient gathers.
 */
#include <string.h>

#include "autograd/build_move.h"
#include "core/dtype.h"
#include "kernels/ref/movement.h"

/* The rank of v, or a failure naming it when unknown. */
static int known_rank(sm_grad_ctx *g, const sm_value *v)
{
    if (v->type.ndim < 0)
        sm_g_fail(g, SMELT_ERR_SHAPE, "the rank of '%s' is unknown", v->name);
    return v->type.ndim;
}

/* axis normalized for rank r; -1 after a failure. */
static int norm_axis(sm_grad_ctx *g, int64_t a, int r)
{
    if (r < 0)
        return -1;
    if (a < -r || a >= r) {
        sm_g_fail(g, SMELT_ERR_SHAPE, "axis %lld is out of range for rank %d",
                  (long long)a, r);
        return -1;
    }
    return (int)(a < 0 ? a + r : a);
}

/* ---- Slice ------------------------------------------------------------ */

/* d spread back along axis ax where the forward read count elements
 * from `first` every `step`: reversed first for a negative step, then
 * each element followed by m - 1 zeros (Unsqueeze, Pad, Reshape) and the
 * trailing zeros cut; *begin receives the position of the first. */
static sm_value *unstride(sm_grad_ctx *g, sm_value *d, int r, int ax,
                          int64_t first, int64_t count, int64_t step,
                          int64_t *begin)
{
    int64_t m = count <= 1 ? 1 : step, axv[1] = {ax};
    *begin = first;
    if (m < 0) {
        int64_t s = -1, e = INT64_MIN, k = -1;
        d = mv_slice(g, d, &s, &e, axv, &k, 1);
        *begin = first + (count - 1) * m;
        m = -m;
    }
    if (m == 1)
        return d;
    int64_t up[1] = {ax + 1}, pads[2 * (SMELT_MAX_DIMS + 1)] = {0};
    int64_t mul[SMELT_MAX_DIMS];
    if (r + 1 > SMELT_MAX_DIMS) {
        sm_g_fail(g, SMELT_ERR_SHAPE, "rank %d is too large to unstride", r);
        return NULL;
    }
    for (int i = 0; i < r; i++)
        mul[i] = i == ax ? m : 1;
    pads[(r + 1) + ax + 1] = m - 1;
    sm_value *shape =
        sm_g_op2(g, SM_OP_Mul, sm_g_shape_of(g, d), sm_g_ints(g, mul, r));
    sm_value *u = sm_g_op2(g, SM_OP_Unsqueeze, d, sm_g_ints(g, up, 1));
    u = sm_g_op2(g, SM_OP_Pad, u, sm_g_ints(g, pads, 2 * (r + 1)));
    u = sm_g_reshape(g, u, shape);
    int64_t s = 0, e = (count - 1) * m + 1;
    return mv_slice(g, u, &s, &e, axv, NULL, 1);
}

/* Where a step-1 slice of a symbolic axis of size D began, from its
 * constant start s, when running: min(s, D), or max(s + D, 0) for a
 * negative s (ONNX's clamping). */
static sm_value *runtime_begin(sm_grad_ctx *g, sm_value *dim, int64_t s)
{
    int64_t zero = 0;
    if (s >= 0)
        return sm_g_op2(g, SM_OP_Min, sm_g_ints(g, &s, 1), dim);
    return sm_g_op2(g, SM_OP_Max,
                    sm_g_op2(g, SM_OP_Add, sm_g_ints(g, &s, 1), dim),
                    sm_g_ints(g, &zero, 1));
}

/* slice with constant parameters (or ones that follow from known shapes:
 * sm_g_known): each element back where it was read,
 * by reversal, unstriding and one Pad with zeros. The pads are constants
 * on axes of known size; a step-1 axis of symbolic size D gets pads
 * computed when running (begin as runtime_begin, end D - begin -
 * count). NULL with *fallback set when a parameter is not constant or a
 * symbolic axis has another step. */
static sm_value *slice_static(sm_grad_ctx *g, int *fallback)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *d = g->dy[0];
    int r = x->type.ndim;
    *fallback = 1;
    if (r < 0 || n->n_in > 5)
        return NULL;
    /* the parameters: constants, or computed from shapes alone */
    sm_tensor *pt[5] = {0};
    int ok = 1;
    for (int i = 1; ok && i < n->n_in; i++)
        if (n->in[i])
            ok = (pt[i] = sm_g_known(g, n->in[i])) != NULL;
    int64_t start[SMELT_MAX_DIMS], end[SMELT_MAX_DIMS], step[SMELT_MAX_DIMS];
    if (ok)
        ok = sm_slice_read(g->ctx, r, pt[1], pt[2], pt[3], pt[4], start, end,
                           step) == SMELT_OK;
    for (int i = 1; i < 5; i++)
        sm_tensor_free(pt[i]);
    if (!ok)
        return NULL;
    for (int i = 0; i < r; i++) {
        if (x->type.dims[i].size < 0 &&
            !sm_slice_whole(start[i], end[i], step[i]) && step[i] != 1)
            return NULL;
        /* unstriding adds an axis */
        if (r + 1 > SMELT_MAX_DIMS && step[i] != 1 && step[i] != -1)
            return NULL;
    }
    *fallback = 0;
    int64_t pads[2 * SMELT_MAX_DIMS] = {0};
    sm_value *pv[2 * SMELT_MAX_DIMS] = {0}; /* pads known when running */
    int any_pad = 0, any_runtime = 0;
    for (int i = 0; i < r && g->st == SMELT_OK; i++) {
        int64_t dim = x->type.dims[i].size, first, count, begin;
        if (sm_slice_whole(start[i], end[i], step[i])) {
            if (step[i] == -1)
                d = unstride(g, d, r, i, 0, 2, -1, &begin);
            continue;
        }
        if (dim < 0) {
            sm_value *dv = mv_axis_len(g, x, i);
            pv[i] = runtime_begin(g, dv, start[i]);
            pv[r + i] =
                sm_g_op2(g, SM_OP_Sub, sm_g_op2(g, SM_OP_Sub, dv, pv[i]),
                         mv_axis_len(g, d, i));
            any_pad = any_runtime = 1;
            continue;
        }
        sm_slice_dim(dim, start[i], end[i], step[i], &first, &count);
        if (count == 0)
            return sm_g_zeros_like(g, x);
        d = unstride(g, d, r, i, first, count, step[i], &begin);
        int64_t m = count <= 1 ? 1 : step[i] < 0 ? -step[i] : step[i];
        pads[i] = begin;
        pads[r + i] = dim - (begin + (count - 1) * m + 1);
        any_pad |= pads[i] != 0 || pads[r + i] != 0;
    }
    if (!any_pad)
        return d;
    sm_value *padv;
    if (any_runtime) {
        for (int i = 0; i < 2 * r; i++)
            if (!pv[i])
                pv[i] = sm_g_ints(g, &pads[i], 1);
        padv = mv_concat(g, pv, 2 * r, 0);
    } else {
        padv = sm_g_ints(g, pads, 2 * r);
    }
    return sm_g_op2(g, SM_OP_Pad, d, padv);
}

/* slice: exact for any step (negative, > 1) and clamped bounds; when a
 * parameter is only known when running, or a symbolic axis has a step
 * other than 1, the index map. */
smelt_status sm_grad_slice(sm_grad_ctx *g)
{
    int fallback;
    sm_value *d = slice_static(g, &fallback);
    if (fallback)
        d = mv_gradient_by_map(g, NULL);
    sm_g_set(g, 0, d);
    return g->st;
}

/* ---- gathers ---------------------------------------------------------- */

/* A scatter of op into base at indices ind with updates u and the given
 * reduction (axis for ScatterElements, ignored when < 0). */
static sm_value *scatter(sm_grad_ctx *g, sm_op op, sm_value *base,
                         sm_value *ind, sm_value *u, int axis,
                         const char *reduction)
{
    sm_value *in[3] = {base, ind, u};
    sm_node *n = sm_g_node(g, op, 3, in, 1);
    if (axis >= 0)
        mv_set_int(g, n, "axis", axis);
    mv_set_string(g, n, "reduction", reduction);
    return sm_g_done(g, n);
}

/* gather along axis a: dx = zeros with dy's slices added at the indices
 * (ScatterND, reduction add, so repeated indices sum). ScatterND indexes
 * leading axes, so axis a goes first in x and the index axes first in dy,
 * and the result is moved back. */
smelt_status sm_grad_gather(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *dy = g->dy[0];
    int r = known_rank(g, x), q = known_rank(g, n->in[1]);
    int a = norm_axis(g, mv_attr_int(n, "axis", 0), r);
    if (a < 0 || q < 0)
        return g->st;
    static const int64_t last[1] = {-1};
    sm_value *ind = sm_g_cast(g, n->in[1], SMELT_DTYPE_I64);
    ind = sm_g_op2(g, SM_OP_Unsqueeze, ind, sm_g_ints(g, last, 1));
    if (a == 0) {
        sm_g_set(g, 0,
                 scatter(g, SM_OP_ScatterND, sm_g_zeros_like(g, x), ind, dy, -1,
                         "add"));
        return g->st;
    }
    int64_t pdy[2 * SMELT_MAX_DIMS], px[SMELT_MAX_DIMS], inv[SMELT_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < q; i++)
        pdy[k++] = a + i;
    for (int i = 0; i < a; i++)
        pdy[k++] = i;
    for (int i = a + q; i < r + q - 1; i++)
        pdy[k++] = i;
    px[0] = a;
    for (int i = 0, j = 1; i < r; i++)
        if (i != a)
            px[j++] = i;
    for (int i = 0; i < r; i++)
        inv[px[i]] = i;
    sm_value *shape =
        sm_g_op2(g, SM_OP_Gather, sm_g_shape_of(g, x), sm_g_ints(g, px, r));
    sm_value *base = mv_fill(g, shape, x->type.dtype, 0);
    sm_value *s = scatter(g, SM_OP_ScatterND, base, ind,
                          mv_transpose(g, dy, pdy, k), -1, "add");
    sm_g_set(g, 0, mv_transpose(g, s, inv, r));
    return g->st;
}

/* gatherelements: dx = zeros + dy added at the indices along the axis. */
smelt_status sm_grad_gatherelements(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0];
    int a = norm_axis(g, mv_attr_int(g->n, "axis", 0), known_rank(g, x));
    if (a < 0)
        return g->st;
    sm_g_set(g, 0,
             scatter(g, SM_OP_ScatterElements, sm_g_zeros_like(g, x),
                     sm_g_cast(g, g->n->in[1], SMELT_DTYPE_I64), g->dy[0], a,
                     "add"));
    return g->st;
}

/* gathernd: dx = zeros + dy added at the index tuples (ScatterND add);
 * with batch_dims the index map (the batch coordinates are implicit). */
smelt_status sm_grad_gathernd(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0];
    if (mv_attr_int(g->n, "batch_dims", 0) != 0) {
        sm_g_set(g, 0, mv_gradient_by_map(g, NULL));
        return g->st;
    }
    sm_g_set(g, 0,
             scatter(g, SM_OP_ScatterND, sm_g_zeros_like(g, x),
                     sm_g_cast(g, g->n->in[1], SMELT_DTYPE_I64), g->dy[0], -1,
                     "add"));
    return g->st;
}

/* compress: the kept elements go back where they came from (index map). */
smelt_status sm_grad_compress(sm_grad_ctx *g)
{
    sm_g_set(g, 0, mv_gradient_by_map(g, NULL));
    return g->st;
}

/* topk: the values' gradient goes back to the positions the indices
 * output names, along the axis. */
smelt_status sm_grad_topk(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0];
    int a = norm_axis(g, mv_attr_int(g->n, "axis", -1), known_rank(g, x));
    if (a < 0 || !g->dy[0])
        return g->st;
    sm_g_set(g, 0,
             scatter(g, SM_OP_ScatterElements, sm_g_zeros_like(g, x),
                     g->n->out[1], g->dy[0], a, "add"));
    return g->st;
}

/* ---- scatters --------------------------------------------------------- */

/* ScatterElements / Scatter (elements = 1) and ScatterND. With reduction
 * none, data's overwritten elements get no gradient (dy scattered over
 * with zeros), and with repeated indices only the update that won (the
 * last) gets one: each target records the id of its winner by scattering
 * the updates' iota the same way, and each update compares. With add,
 * dd = dy and each update gets dy at its target. */
static smelt_status scatter_back(sm_grad_ctx *g, int elements)
{
    const sm_node *n = g->n;
    sm_value *data = n->in[0], *ind = n->in[1], *up = n->in[2], *dy = g->dy[0];
    sm_attrs at = sm_node_attrs(n);
    const char *red = sm_attrs_string(&at, "reduction", "none");
    int add = strcmp(red, "add") == 0;
    if (!add && strcmp(red, "none") != 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "reduction '%s' is not differentiated (none, add)",
                         red);
    int a = -1;
    if (elements &&
        (a = norm_axis(g, mv_attr_int(n, "axis", 0), known_rank(g, data))) < 0)
        return g->st;
    sm_op sop = elements ? SM_OP_ScatterElements : SM_OP_ScatterND;
    sm_op gop = elements ? SM_OP_GatherElements : SM_OP_GatherND;
    if (g->need[0])
        sm_g_set(
            g, 0,
            add ? dy
                : scatter(g, sop, dy, ind, sm_g_zeros_like(g, up), a, "none"));
    if (!g->need[2])
        return g->st;
    sm_value *in[2] = {dy, ind};
    sm_node *gn = sm_g_node(g, gop, 2, in, 1);
    if (elements)
        mv_set_int(g, gn, "axis", a);
    sm_value *du = sm_g_done(g, gn);
    if (!add) {
        sm_value *id = mv_iota(g, up);
        sm_value *win = scatter(
            g, sop, mv_fill(g, sm_g_shape_of(g, data), SMELT_DTYPE_I64, -1),
            ind, id, a, "none");
        sm_value *gin[2] = {win, ind};
        sm_node *wn = sm_g_node(g, gop, 2, gin, 1);
        if (elements)
            mv_set_int(g, wn, "axis", a);
        sm_value *won = sm_g_op2(g, SM_OP_Equal, sm_g_done(g, wn), id);
        du = sm_g_op3(g, SM_OP_Where, won, du, sm_g_scalar_like(g, up, 0));
    }
    sm_g_set(g, 2, du);
    return g->st;
}

smelt_status sm_grad_scatterelements(sm_grad_ctx *g)
{
    return scatter_back(g, 1);
}

smelt_status sm_grad_scatter(sm_grad_ctx *g)
{
    return scatter_back(g, 1);
}

smelt_status sm_grad_scatternd(sm_grad_ctx *g)
{
    return scatter_back(g, 0);
}

/* ---- OneHot, DequantizeLinear ---------------------------------------- */

/* onehot's values [off, on]: d_on = sum(dy * mask), d_off = sum(dy) -
 * d_on, the mask being OneHot itself with values [0, 1]. */
smelt_status sm_grad_onehot(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *v = n->in[2], *dy = g->dy[0];
    if (!g->need[2])
        return g->st;
    sm_value *in[3] = {n->in[0], n->in[1],
                       mv_float_pair(g, v->type.dtype, 0, 1)};
    sm_value *mask = mv_replay(g, in, 3);
    sm_value *on =
        sm_g_reduce_sum(g, sm_g_op2(g, SM_OP_Mul, dy, mask), NULL, 0, 0);
    sm_value *off =
        sm_g_op2(g, SM_OP_Sub, sm_g_reduce_sum(g, dy, NULL, 0, 0), on);
    static const int64_t zero[1] = {0};
    sm_value *parts[2] = {
        sm_g_op2(g, SM_OP_Unsqueeze, off, sm_g_ints(g, zero, 1)),
        sm_g_op2(g, SM_OP_Unsqueeze, on, sm_g_ints(g, zero, 1))};
    sm_g_set(g, 2, sm_g_reshape_like(g, mv_concat(g, parts, 2, 0), v));
    return g->st;
}

/* dequantizelinear, y = (x - zero_point) * scale: d_scale = dy * (x -
 * zero_point) summed over every axis but the quantization axis (all of
 * them for a per-tensor scale); x - zero_point is the op itself with a
 * scale of ones. The integer input has no gradient. */
smelt_status sm_grad_dequantizelinear(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0], *s = n->in[1];
    if (g->need[0])
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the quantized input '%s' is not differentiated",
                         x->name);
    if (!g->need[1])
        return g->st;
    int r = known_rank(g, x), rs = known_rank(g, s);
    if (r < 0 || rs < 0)
        return g->st;
    sm_value *in[3] = {x, mv_fill(g, sm_g_shape_of(g, s), s->type.dtype, 1),
                       n->n_in > 2 ? n->in[2] : NULL};
    sm_value *p = sm_g_op2(g, SM_OP_Mul, g->dy[0], mv_replay(g, in, n->n_in));
    int64_t axes[SMELT_MAX_DIMS];
    int k = 0;
    if (rs == 1 && s->type.dims[0].size != 1) {
        int a = norm_axis(g, mv_attr_int(n, "axis", 1), r);
        if (a < 0)
            return g->st;
        for (int i = 0; i < r; i++)
            if (i != a)
                axes[k++] = i;
        sm_g_set(g, 1, k ? sm_g_reduce_sum(g, p, axes, k, 0) : p);
    } else if (rs > 1) {
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "a scale of rank %d (blocked quantization)", rs);
    } else {
        sm_g_set(g, 1,
                 sm_g_reshape_like(g, sm_g_reduce_sum(g, p, NULL, 0, 0), s));
    }
    return g->st;
}
