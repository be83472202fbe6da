/*
 * rules_movement.c - gradient rules of the ops that move data without
 * indexing it by values: reshapes, Transpose, Concat and Split, Expand
 * and Tile, Pad, CumSum, Trilu, the depth/space shuffles,
 * ReverseSequence, and Resize/Upsample. Each gradient is the transposed
 * map: an inverse permutation, a slice of a concatenation, a sum over
 * copies. The indexing ops are in rules_index.c.
 */
#include <string.h>

#include "autograd/build_move.h"
#include "core/alloc.h"
#include "core/dtype.h"

/* The rank of v, or a failure naming it when unknown. */
static int rank_of(sm_grad_ctx *g, const sm_value *v)
{
    if (v->type.ndim < 0)
        sm_g_fail(g, SMELT_ERR_SHAPE, "the rank of '%s' is unknown", v->name);
    return v->type.ndim;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same
 * order, so dx = reshape(dy, shape(x)). */
static smelt_status reshape_back(sm_grad_ctx *g)
{
    sm_g_set(g, 0, sm_g_reshape_like(g, g->dy[0], g->n->in[0]));
    return g->st;
}

smelt_status sm_grad_reshape(sm_grad_ctx *g)
{
    return reshape_back(g);
}

smelt_status sm_grad_flatten(sm_grad_ctx *g)
{
    return reshape_back(g);
}

smelt_status sm_grad_squeeze(sm_grad_ctx *g)
{
    return reshape_back(g);
}

smelt_status sm_grad_unsqueeze(sm_grad_ctx *g)
{
    return reshape_back(g);
}

/* transpose: dx = transpose(dy, perm^-1); without perm (reversed axes)
 * the permutation is its own inverse. */
smelt_status sm_grad_transpose(sm_grad_ctx *g)
{
    sm_attrs at = sm_node_attrs(g->n);
    const int64_t *perm = NULL;
    int r = sm_attrs_ints(&at, "perm", &perm);
    if (!perm || r <= 0) {
        sm_g_set(g, 0, sm_g_op1(g, SM_OP_Transpose, g->dy[0]));
        return g->st;
    }
    int64_t inv[SMELT_MAX_DIMS];
    if (r > SMELT_MAX_DIMS)
        return sm_g_fail(g, SMELT_ERR_SHAPE, "perm has %d entries", r);
    for (int i = 0; i < r; i++) {
        if (perm[i] < 0 || perm[i] >= r)
            return sm_g_fail(g, SMELT_ERR_SHAPE, "perm entry %lld is invalid",
                             (long long)perm[i]);
        inv[perm[i]] = i;
    }
    sm_g_set(g, 0, mv_transpose(g, g->dy[0], inv, r));
    return g->st;
}

/* The axis attribute of g->n normalized for rank r (-1 after a failure). */
static int node_axis(sm_grad_ctx *g, int r, int64_t def)
{
    int64_t a = mv_attr_int(g->n, "axis", def);
    if (r < 0)
        return -1;
    if (a < -r || a >= r) {
        sm_g_fail(g, SMELT_ERR_SHAPE, "axis %lld is out of range for rank %d",
                  (long long)a, r);
        return -1;
    }
    return (int)(a < 0 ? a + r : a);
}

/* concat: dx_i = dy[..., off_i : off_i + len_i, ...] along the axis. The
 * offsets are constants when the sizes before input i are known, sums of
 * Shape values otherwise (symbolic sizes). */
smelt_status sm_grad_concat(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    int r = rank_of(g, n->out[0]);
    int axis = node_axis(g, r, 0);
    if (axis < 0)
        return g->st;
    int64_t off = 0;        /* the offset while every size is known */
    sm_value *off_v = NULL; /* the offset as i64[1] once one is not */
    int64_t ax[1] = {axis};
    for (int i = 0; i < n->n_in && g->st == SMELT_OK; i++) {
        sm_value *x = n->in[i];
        if (rank_of(g, x) != r)
            return sm_g_fail(g, SMELT_ERR_SHAPE, "input %d has another rank",
                             i);
        int64_t len = x->type.dims[axis].size;
        if (g->need[i]) {
            sm_value *d;
            if (!off_v && len >= 0) {
                int64_t e = off + len;
                d = mv_slice(g, g->dy[0], &off, &e, ax, NULL, 1);
            } else {
                sm_value *start = off_v ? off_v : sm_g_ints(g, &off, 1);
                sm_value *end =
                    sm_g_op2(g, SM_OP_Add, start, mv_axis_len(g, x, axis));
                sm_value *in[4] = {g->dy[0], start, end, sm_g_ints(g, ax, 1)};
                d = sm_g_done(g, sm_g_node(g, SM_OP_Slice, 4, in, 1));
            }
            sm_g_set(g, i, d);
        }
        if (i + 1 == n->n_in)
            break;
        if (!off_v && len >= 0) {
            off += len;
        } else {
            sm_value *start = off_v ? off_v : sm_g_ints(g, &off, 1);
            off_v = sm_g_op2(g, SM_OP_Add, start, mv_axis_len(g, x, axis));
        }
    }
    return g->st;
}

/* split: dx = concat of the output gradients, zeros for an output no
 * gradient reaches. */
smelt_status sm_grad_split(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    int axis = node_axis(g, rank_of(g, n->in[0]), 0);
    if (axis < 0)
        return g->st;
    sm_value *st[8], **parts = st;
    if (n->n_out > 8 && !(parts = sm_calloc((size_t)n->n_out, sizeof *parts)))
        return sm_g_fail(g, SMELT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n->n_out; k++)
        parts[k] = g->dy[k] ? g->dy[k] : sm_g_zeros_like(g, n->out[k]);
    sm_g_set(g, 0,
             n->n_out == 1 ? parts[0] : mv_concat(g, parts, n->n_out, axis));
    if (parts != st)
        sm_free(parts);
    return g->st;
}

/* expand: the broadcast copies summed back, as for a broadcasting
 * binary op. */
smelt_status sm_grad_expand(sm_grad_ctx *g)
{
    sm_g_set(g, 0, sm_g_unbroadcast(g, g->dy[0], g->n->in[0]));
    return g->st;
}

/* tile: dy viewed as [r0, d0, r1, d1, ...] summed over the repeat
 * axes. The interleaved shape is a constant when the repeats and sizes
 * are known, else built when running (the columns [repeats, Shape(x)]
 * flattened). Only a rank too large to interleave takes the index map. */
smelt_status sm_grad_tile(sm_grad_ctx *g)
{
    sm_value *x = g->n->in[0], *reps = g->n->in[1];
    int64_t rep[SMELT_MAX_DIMS], shape[2 * SMELT_MAX_DIMS],
        axes[SMELT_MAX_DIMS];
    int r = x->type.ndim;
    if (r < 0 || 2 * r > SMELT_MAX_DIMS) {
        sm_g_set(g, 0, mv_gradient_by_map(g, NULL));
        return g->st;
    }
    if (r == 0) {
        sm_g_set(g, 0, g->dy[0]);
        return g->st;
    }
    int known = mv_const_ints(reps, rep, SMELT_MAX_DIMS) == r;
    for (int i = 0; i < r; i++) {
        known = known && x->type.dims[i].size >= 0;
        if (known) {
            shape[2 * i] = rep[i];
            shape[2 * i + 1] = x->type.dims[i].size;
        }
        axes[i] = 2 * i;
    }
    sm_value *sv;
    if (known) {
        sv = sm_g_ints(g, shape, 2 * r);
    } else {
        static const int64_t one[1] = {1}, flat[1] = {-1};
        sm_value *cols[2] = {
            sm_g_op2(g, SM_OP_Unsqueeze, sm_g_cast(g, reps, SMELT_DTYPE_I64),
                     sm_g_ints(g, one, 1)),
            sm_g_op2(g, SM_OP_Unsqueeze, sm_g_op1(g, SM_OP_Shape, x),
                     sm_g_ints(g, one, 1))};
        sv = sm_g_op2(g, SM_OP_Reshape, mv_concat(g, cols, 2, 1),
                      sm_g_ints(g, flat, 1));
    }
    sm_value *v = sm_g_reshape(g, g->dy[0], sv);
    sm_g_set(g, 0, sm_g_reduce_sum(g, v, axes, r, 0));
    return g->st;
}

/* pad, constant mode: padding by -pads crops the padding away and puts
 * zeros where the forward cropped, so dx = Pad(dy, -pads); the constant
 * gets the gradient of every padded element, sum(dy) - sum(dx). Other
 * modes (reflect, edge, wrap) read input elements several times: the
 * index map sums those copies. */
smelt_status sm_grad_pad(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_attrs at = sm_node_attrs(n);
    const char *mode = sm_attrs_string(&at, "mode", "constant");
    sm_value *dy = g->dy[0];
    if (strcmp(mode, "constant") != 0) {
        unsigned char drop[4] = {0, 0, 1, 0}; /* the fill is unused */
        sm_g_set(g, 0, mv_gradient_by_map(g, drop));
        return g->st;
    }
    sm_value *neg = sm_g_op1(g, SM_OP_Neg, n->in[1]);
    sm_value *in[4] = {dy, neg, NULL, n->n_in > 3 ? n->in[3] : NULL};
    sm_value *dx = sm_g_done(g, sm_g_node(g, SM_OP_Pad, 4, in, 1));
    sm_g_set(g, 0, dx);
    if (n->n_in > 2 && n->in[2] && g->need[2]) {
        sm_value *all = sm_g_reduce_sum(g, dy, NULL, 0, 0);
        sm_value *kept = sm_g_reduce_sum(g, dx, NULL, 0, 0);
        sm_value *d = sm_g_op2(g, SM_OP_Sub, all, kept);
        sm_g_set(g, 2, sm_g_reshape_like(g, d, n->in[2]));
    }
    return g->st;
}

/* cumsum: an inclusive (exclusive) running sum forward is one backward
 * in the other direction: dx = cumsum(dy, reverse = !reverse). */
smelt_status sm_grad_cumsum(sm_grad_ctx *g)
{
    sm_value *in[2] = {g->dy[0], g->n->in[1]};
    sm_node *c = sm_g_node(g, SM_OP_CumSum, 2, in, 1);
    mv_set_int(g, c, "exclusive", mv_attr_int(g->n, "exclusive", 0) != 0);
    mv_set_int(g, c, "reverse", mv_attr_int(g->n, "reverse", 0) == 0);
    sm_g_set(g, 0, sm_g_done(g, c));
    return g->st;
}

/* trilu keeps a triangle and zeros the rest: dx = trilu(dy), same k. */
smelt_status sm_grad_trilu(sm_grad_ctx *g)
{
    sm_value *in[2] = {g->dy[0], g->n->n_in > 1 ? g->n->in[1] : NULL};
    sm_g_set(g, 0, mv_replay(g, in, g->n->n_in));
    return g->st;
}

/* reversesequence reverses a prefix of each sequence: its own inverse. */
smelt_status sm_grad_reversesequence(sm_grad_ctx *g)
{
    sm_value *in[2] = {g->dy[0], g->n->in[1]};
    sm_g_set(g, 0, mv_replay(g, in, 2));
    return g->st;
}

/* depthtospace (DCR) and spacetodepth are each other's inverse
 * permutations; CRD goes by the index map. */
smelt_status sm_grad_depthtospace(sm_grad_ctx *g)
{
    sm_attrs at = sm_node_attrs(g->n);
    if (strcmp(sm_attrs_string(&at, "mode", "DCR"), "DCR") != 0) {
        sm_g_set(g, 0, mv_gradient_by_map(g, NULL));
        return g->st;
    }
    sm_node *s = sm_g_node(g, SM_OP_SpaceToDepth, 1, &g->dy[0], 1);
    mv_set_int(g, s, "blocksize", mv_attr_int(g->n, "blocksize", 1));
    sm_g_set(g, 0, sm_g_done(g, s));
    return g->st;
}

smelt_status sm_grad_spacetodepth(sm_grad_ctx *g)
{
    sm_node *s = sm_g_node(g, SM_OP_DepthToSpace, 1, &g->dy[0], 1);
    mv_set_int(g, s, "blocksize", mv_attr_int(g->n, "blocksize", 1));
    mv_set_string(g, s, "mode", "DCR");
    sm_g_set(g, 0, sm_g_done(g, s));
    return g->st;
}

/* The identity matrix [n, n] of dtype dt. */
static sm_value *eye(sm_grad_ctx *g, smelt_dtype dt, int64_t n)
{
    if (g->st != SMELT_OK)
        return NULL;
    sm_tensor *t;
    int64_t dims[2] = {n, n};
    smelt_status st = sm_tensor_new(g->ctx, dt, 2, dims, &t);
    if (st != SMELT_OK) {
        sm_g_fail(g, st, "an identity of %lld x %lld", (long long)n,
                  (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        sm_store_f64(dt, t->data, i * n + i, 1.0);
    sm_value *v = sm_rw_add_const(g->rw, g->b, "g_eye", t);
    if (!v)
        sm_g_fail(g, SMELT_ERR_NOMEM, "out of memory");
    return v;
}

/* resize, upsample in nearest mode by the index map: the op replayed on
 * an f64 iota (exact up to 2^53 elements) names, for each output
 * element, the input element it copied. Works for any coordinate mode
 * but tf_crop_and_resize (its fill is not a copy) and any scales or
 * sizes, known or not before running. */
static smelt_status nearest_by_map(sm_grad_ctx *g)
{
    const sm_node *n = g->n;
    sm_value *in[4] = {NULL, NULL, NULL, NULL};
    for (int i = 1; i < n->n_in && i < 4; i++)
        in[i] = n->in[i];
    in[0] = sm_g_cast(g, mv_iota(g, n->in[0]), SMELT_DTYPE_F64);
    sm_value *map = sm_g_cast(g, mv_replay(g, in, n->n_in), SMELT_DTYPE_I64);
    sm_g_set(g, 0, mv_scatter_back(g, n->in[0], map, g->dy[0]));
    return g->st;
}

/* resize, upsample: every mode Smelt has (nearest, linear, cubic) is a
 * tensor product of one matrix W_a per axis, y = x x_a W_a. Each W_a is
 * built by resizing an identity [L, L] along its second axis with that
 * axis' scale or size (so M = W_a^T, [L, out]), and dx = dy contracted
 * with M^T on each resized axis. That needs the scales or sizes and the
 * resized sizes before running, and a coordinate mode that is the
 * identity at scale 1 (not tf_half_pixel_for_nn); nearest mode goes by
 * the index map where it does not hold. tf_crop_and_resize (an roi and
 * an extrapolated fill) fails. */
static smelt_status resize_back(sm_grad_ctx *g, int upsample)
{
    const sm_node *n = g->n;
    sm_value *x = n->in[0];
    sm_attrs at = sm_node_attrs(n);
    const char *coord =
        upsample ? "asymmetric"
                 : sm_attrs_string(&at, "coordinate_transformation_mode",
                                   "half_pixel");
    int nearest =
        strcmp(sm_attrs_string(&at, "mode", "nearest"), "nearest") == 0;
    if (strcmp(coord, "tf_crop_and_resize") == 0 ||
        (!nearest && strcmp(coord, "tf_half_pixel_for_nn") == 0))
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "coordinate_transformation_mode '%s' is not "
                         "differentiated",
                         coord);
    for (int i = 1; i < n->n_in; i++)
        if (g->need[i])
            return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                             "the gradient with respect to '%s' (roi or "
                             "scales) is not computed",
                             n->in[i]->name);
    int r = rank_of(g, x);
    if (r < 0)
        return g->st;
    /* the scales (as given) or sizes of every axis */
    const sm_value *sv = upsample ? (n->n_in > 1 ? n->in[1] : NULL)
                                  : (n->n_in > 2 ? n->in[2] : NULL);
    const sm_value *zv = !upsample && n->n_in > 3 ? n->in[3] : NULL;
    double scale[SMELT_MAX_DIMS];
    int64_t size[SMELT_MAX_DIMS];
    int use_sizes = 0, cnt = -1;
    smelt_dtype sdt = SMELT_DTYPE_F32;
    if (sv && sv->data && sv->data->numel > 0) {
        const sm_tensor *t = sv->data;
        sdt = t->dtype;
        cnt = t->numel == r && sm_dtype_is_float(sdt) ? r : -1;
        for (int i = 0; cnt == r && i < r; i++)
            scale[i] = sm_load_f64(sdt, t->data, i);
    } else if (zv && zv->data) {
        use_sizes = 1;
        cnt = mv_const_ints(zv, size, SMELT_MAX_DIMS);
    } else if (upsample) {
        const double *f = NULL;
        cnt = sm_attrs_floats(&at, "scales", &f);
        for (int i = 0; f && i < cnt && i < r; i++)
            scale[i] = f[i];
    }
    int unknown_axis = -1;
    for (int a = 0; cnt == r && a < r; a++)
        if (x->type.dims[a].size < 0 &&
            !(use_sizes ? size[a] == x->type.dims[a].size : scale[a] == 1.0))
            unknown_axis = a;
    if (nearest && (cnt != r || unknown_axis >= 0 ||
                    strcmp(coord, "tf_half_pixel_for_nn") == 0))
        return nearest_by_map(g);
    if (cnt != r)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the scales or sizes are computed at run time; only "
                         "constant ones are differentiated in mode '%s'",
                         sm_attrs_string(&at, "mode", "nearest"));
    if (unknown_axis >= 0)
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the size of resized axis %d is not known before "
                         "running (bind it with --dim)",
                         unknown_axis);
    sm_value *d = g->dy[0];
    for (int a = 0; a < r && g->st == SMELT_OK; a++) {
        int64_t L = x->type.dims[a].size;
        if (use_sizes ? size[a] == L : scale[a] == 1.0)
            continue;
        sm_value *in[4] = {eye(g, x->type.dtype, L), NULL, NULL, NULL};
        sm_value *m;
        if (upsample) {
            in[1] =
                sv && sv->data ? mv_float_pair(g, sdt, 1.0, scale[a]) : NULL;
            sm_node *u = sm_g_node(g, SM_OP_Upsample, in[1] ? 2 : 1, in, 1);
            mv_set_string(g, u, "mode",
                          sm_attrs_string(&at, "mode", "nearest"));
            if (!in[1]) {
                double two[2] = {1.0, scale[a]};
                if (u && !sm_node_set_floats(u, "scales", two, 2))
                    sm_g_fail(g, SMELT_ERR_NOMEM, "out of memory");
            }
            m = sm_g_done(g, u);
        } else {
            int64_t sz[2] = {L, size[a]};
            if (use_sizes)
                in[3] = sm_g_ints(g, sz, 2);
            else
                in[2] = mv_float_pair(g, sdt, 1.0, scale[a]);
            m = mv_replay(g, in, 4);
        }
        /* move axis a last, contract with M^T, move it back */
        int64_t perm[SMELT_MAX_DIMS];
        for (int i = 0; i < r; i++)
            perm[i] = i;
        perm[a] = r - 1;
        perm[r - 1] = a;
        sm_value *t = a == r - 1 ? d : mv_transpose(g, d, perm, r);
        static const int64_t swap[2] = {1, 0};
        t = sm_g_op2(g, SM_OP_MatMul, t, mv_transpose(g, m, swap, 2));
        d = a == r - 1 ? t : mv_transpose(g, t, perm, r);
    }
    sm_g_set(g, 0, d);
    return g->st;
}

smelt_status sm_grad_resize(sm_grad_ctx *g)
{
    return resize_back(g, 0);
}

smelt_status sm_grad_upsample(sm_grad_ctx *g)
{
    return resize_back(g, 1);
}
