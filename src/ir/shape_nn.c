/*
 * shape_nn.c - shape and dtype inference, and cost functions, for the
 * contractions (MatMul, Gemm, Conv, ConvTranspose), pooling and the
 * normalizations (BatchNormalization, LayerNormalization; Softmax shares
 * sm_shape_unary). The window arithmetic of Conv and pooling lives in
 * kernels/ref/window.h, shared with the reference kernels.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"
#include "kernels/ref/window.h"

/* Which dtypes nn_dtype accepts. */
enum {
    NN_FLOAT = 1, /* f32, f64, f16, bf16 */
    NN_INT = 2,   /* every integer dtype */
    NN_INT8 = 4   /* i8 and u8 (MaxPool) */
};

/* Input i's type; fails when the input is absent. */
static smelt_status nn_input(sm_shape_ctx *s, int i, const sm_type **t)
{
    *t = sm_shape_in(s, i);
    if (!*t)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "%s: input %d is missing",
                      s->op->name, i);
    return SMELT_OK;
}

/* Whether allow (NN_ flags) admits dt. */
static int dtype_allowed(smelt_dtype dt, int allow)
{
    if (sm_dtype_is_float(dt))
        return allow & NN_FLOAT;
    if (dt == SMELT_DTYPE_I8 || dt == SMELT_DTYPE_U8)
        return allow & (NN_INT | NN_INT8);
    return sm_dtype_is_int(dt) && (allow & NN_INT);
}

/* The common dtype of inputs first..last that are present with a known
 * dtype (UNDEFINED when none is); fails when one is not allowed or two
 * differ. */
static smelt_status nn_dtype(sm_shape_ctx *s, int first, int last, int allow,
                             smelt_dtype *out)
{
    static const char *const what[] = {"", "a float", "an integer",
                                       "a float or integer"};
    *out = SMELT_DTYPE_UNDEFINED;
    int which = -1;
    for (int i = first; i <= last; i++) {
        const sm_type *t = sm_shape_in(s, i);
        if (!t || t->dtype == SMELT_DTYPE_UNDEFINED)
            continue;
        if (!dtype_allowed(t->dtype, allow))
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: input %d has dtype %s; expected %s dtype%s",
                          s->op->name, i, smelt_dtype_name(t->dtype),
                          what[allow & 3], allow & NN_INT8 ? " or i8/u8" : "");
        if (which >= 0 && t->dtype != *out)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: inputs %d and %d must have the same dtype, got "
                          "%s and %s",
                          s->op->name, which, i, smelt_dtype_name(*out),
                          smelt_dtype_name(t->dtype));
        if (which < 0) {
            which = i;
            *out = t->dtype;
        }
    }
    return SMELT_OK;
}

/* Size of dim i of t; -1 when unknown or t's rank is unknown or short. */
static int64_t nn_size(const sm_type *t, int i)
{
    return t && i >= 0 && i < t->ndim && t->dims[i].size >= 0 ? t->dims[i].size
                                                              : -1;
}

/* Dim i of t, or an unknown dim. */
static sm_dim nn_dim(const sm_type *t, int i)
{
    if (t && i >= 0 && i < t->ndim)
        return t->dims[i];
    return (sm_dim){-1, NULL};
}

/* Fails when the contracted dims, A's dim ia and B's dim ib, are both
 * known and differ. */
static smelt_status check_inner(sm_shape_ctx *s, const sm_type *a,
                                const sm_type *b, int ia, int ib)
{
    int64_t x = nn_size(a, ia), y = nn_size(b, ib);
    if (x < 0 || y < 0 || x == y)
        return SMELT_OK;
    char sa[160], sb[160];
    sm_type_str(a, sa, sizeof sa);
    sm_type_str(b, sb, sizeof sb);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: inner dimensions differ: A %s has %lld at dim %d, B %s "
                  "has %lld at dim %d",
                  s->op->name, sa, (long long)x, ia, sb, (long long)y, ib);
}

/*
 * MatMul as numpy matmul: a 1-D A is promoted to [1, K] and a 1-D B to
 * [K, 1], the added dim dropped from the result; dims before the last two
 * broadcast (symbolic ones propagate). Floats and integers.
 */
smelt_status sm_shape_matmul(sm_shape_ctx *s)
{
    const sm_type *a, *b;
    SM_TRY(nn_input(s, 0, &a));
    SM_TRY(nn_input(s, 1, &b));
    sm_type *y = &s->out[0];
    SM_TRY(nn_dtype(s, 0, 1, NN_FLOAT | NN_INT, &y->dtype));
    if (a->ndim < 0 || b->ndim < 0) {
        y->ndim = SM_RANK_UNKNOWN;
        return SMELT_OK;
    }
    int ra = a->ndim, rb = b->ndim;
    if (ra < 1 || rb < 1)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: operands must have rank >= 1, got ranks %d and %d",
                      s->op->name, ra, rb);
    SM_TRY(check_inner(s, a, b, ra - 1, rb > 1 ? rb - 2 : 0));
    sm_type ba = {0}, bb = {0};
    ba.ndim = ra > 2 ? ra - 2 : 0;
    bb.ndim = rb > 2 ? rb - 2 : 0;
    for (int d = 0; d < ba.ndim; d++)
        ba.dims[d] = a->dims[d];
    for (int d = 0; d < bb.ndim; d++)
        bb.dims[d] = b->dims[d];
    const sm_type *pair[2] = {&ba, &bb};
    SM_TRY(sm_shape_bcast(s, 2, pair, y));
    if (ra > 1)
        y->dims[y->ndim++] = a->dims[ra - 2];
    if (rb > 1)
        y->dims[y->ndim++] = b->dims[rb - 1];
    return SMELT_OK;
}

/* Fails unless t (when its rank is known) is 2-D. */
static smelt_status check_2d(sm_shape_ctx *s, const sm_type *t,
                             const char *name)
{
    if (t->ndim < 0 || t->ndim == 2)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: %s must be 2-D, got rank %d",
                  s->op->name, name, t->ndim);
}

/*
 * Gemm: Y[M, N] = alpha * op(A) op(B) + beta * C with op transposing
 * under transA / transB; C (optional) must broadcast one-way onto [M, N],
 * and a known C dim fills an M or N that A and B leave unknown.
 */
smelt_status sm_shape_gemm(sm_shape_ctx *s)
{
    const sm_type *a, *b, *c = sm_shape_in(s, 2);
    SM_TRY(nn_input(s, 0, &a));
    SM_TRY(nn_input(s, 1, &b));
    sm_type *y = &s->out[0];
    SM_TRY(nn_dtype(s, 0, 2, NN_FLOAT | NN_INT, &y->dtype));
    SM_TRY(check_2d(s, a, "A"));
    SM_TRY(check_2d(s, b, "B"));
    int ta = sm_attrs_int(&s->attrs, "transA", 0) != 0;
    int tb = sm_attrs_int(&s->attrs, "transB", 0) != 0;
    SM_TRY(check_inner(s, a, b, !ta, tb));
    y->ndim = 2;
    y->dims[0] = nn_dim(a, ta);
    y->dims[1] = nn_dim(b, !tb);
    if (!c || c->ndim < 0)
        return SMELT_OK;
    if (c->ndim > 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: C must have rank <= 2 to broadcast onto [M, N], "
                      "got rank %d",
                      s->op->name, c->ndim);
    for (int d = 0; d < c->ndim; d++) {
        sm_dim *want = &y->dims[d + 2 - c->ndim];
        int64_t cs = c->dims[d].size;
        if (cs < 0 || cs == 1)
            continue;
        if (want->size >= 0 && want->size != cs) {
            char buf[160];
            sm_type_str(c, buf, sizeof buf);
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: C %s cannot broadcast onto [M, N]: dim %d is "
                          "%lld, expected %lld or 1",
                          s->op->name, buf, d, (long long)cs,
                          (long long)want->size);
        }
        *want = c->dims[d];
    }
    return SMELT_OK;
}

/*
 * BatchNormalization: Y has X's type; scale, B, mean and var are 1-D of
 * X's channel count (dim 1; 1 for a 1-D X). In training mode (opset 14 and
 * later) the optional outputs running_mean and running_var have the types
 * of the mean and var inputs; in inference mode they do not exist.
 */
smelt_status sm_shape_batchnorm(sm_shape_ctx *s)
{
    int training = sm_attrs_int(&s->attrs, "training_mode", 0) != 0;
    if (!training && s->n_out > 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: outputs running_mean and running_var exist only in "
                      "training mode, but the node has %d outputs",
                      s->op->name, s->n_out);
    const sm_type *x, *p;
    smelt_dtype dt;
    SM_TRY(nn_input(s, 0, &x));
    SM_TRY(nn_dtype(s, 0, 0, NN_FLOAT, &dt));
    SM_TRY(nn_dtype(s, 1, 2, NN_FLOAT, &dt));
    SM_TRY(nn_dtype(s, 3, 4, NN_FLOAT, &dt));
    if (x->ndim == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: X must have rank >= 1",
                      s->op->name);
    int64_t c = x->ndim == 1 ? 1 : nn_size(x, 1);
    for (int i = 1; i < 5; i++) {
        SM_TRY(nn_input(s, i, &p));
        int64_t n = nn_size(p, 0);
        if (p->ndim >= 0 && (p->ndim != 1 || (n >= 0 && c >= 0 && n != c)))
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: input %d must be 1-D with C = %lld values, got "
                          "rank %d with %lld",
                          s->op->name, i, (long long)c, p->ndim, (long long)n);
        if (i >= 3 && i - 2 < s->n_out)
            s->out[i - 2] = *p; /* running_mean, running_var */
    }
    s->out[0] = *x;
    return SMELT_OK;
}

/* The dtype LayerNormalization's stash_type (an ONNX code) names. */
static smelt_status stash_dtype(sm_shape_ctx *s, smelt_dtype *out)
{
    int64_t code = sm_attrs_int(&s->attrs, "stash_type", 1);
    *out = code == 1    ? SMELT_DTYPE_F32
           : code == 10 ? SMELT_DTYPE_F16
           : code == 11 ? SMELT_DTYPE_F64
           : code == 16 ? SMELT_DTYPE_BF16
                        : SMELT_DTYPE_UNDEFINED;
    if (*out == SMELT_DTYPE_UNDEFINED)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: stash_type %lld is not a float dtype code (1, 10, "
                      "11 or 16)",
                      s->op->name, (long long)code);
    return SMELT_OK;
}

/* Fails unless input i (when present with a known rank) broadcasts
 * one-way onto x. */
static smelt_status check_onto(sm_shape_ctx *s, int i, const sm_type *x)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->ndim < 0)
        return SMELT_OK;
    int bad = t->ndim > x->ndim;
    for (int d = 0; !bad && d < t->ndim; d++) {
        int64_t ts = t->dims[d].size;
        int64_t xs = x->dims[d + x->ndim - t->ndim].size;
        bad = ts >= 0 && ts != 1 && xs >= 0 && ts != xs;
    }
    if (!bad)
        return SMELT_OK;
    char bt[160], bx[160];
    sm_type_str(t, bt, sizeof bt);
    sm_type_str(x, bx, sizeof bx);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: input %d %s does not broadcast onto X %s", s->op->name,
                  i, bt, bx);
}

/*
 * LayerNormalization: Y has X's type; Scale and B broadcast onto X (in
 * practice they have the normalized shape X.shape[axis:]); the optional
 * Mean and InvStdDev have X's dims before axis and 1 from axis on, in the
 * stash_type dtype.
 */
smelt_status sm_shape_layernorm(sm_shape_ctx *s)
{
    const sm_type *x, *scale;
    smelt_dtype dt, st;
    SM_TRY(nn_input(s, 0, &x));
    SM_TRY(nn_input(s, 1, &scale));
    SM_TRY(nn_dtype(s, 0, 2, NN_FLOAT, &dt));
    SM_TRY(stash_dtype(s, &st));
    s->out[0] = *x;
    s->out[0].dtype = dt;
    for (int j = 1; j < s->n_out; j++) {
        sm_type_unknown(&s->out[j]);
        s->out[j].dtype = st;
    }
    if (x->ndim < 0)
        return SMELT_OK;
    if (x->ndim == 0)
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: X must have rank >= 1",
                      s->op->name);
    int ax;
    SM_TRY(sm_shape_axis(s, sm_attrs_int(&s->attrs, "axis", -1), x->ndim, &ax));
    SM_TRY(check_onto(s, 1, x));
    SM_TRY(check_onto(s, 2, x));
    for (int j = 1; j < s->n_out; j++) {
        s->out[j].ndim = x->ndim;
        for (int d = 0; d < x->ndim; d++)
            s->out[j].dims[d] = d < ax ? x->dims[d] : (sm_dim){1, NULL};
    }
    return SMELT_OK;
}

/* The output's spatial dims from the window; a size it leaves unknown is
 * the input's (maybe symbolic) dim under SAME padding with stride 1. */
static void window_dims(sm_type *y, const sm_window *w, const sm_type *x)
{
    for (int d = 0; d < w->nsp; d++) {
        sm_dim *o = &y->dims[d + 2];
        if (w->out[d] >= 0)
            *o = (sm_dim){w->out[d], NULL};
        else if (w->same && w->stride[d] == 1)
            *o = nn_dim(x, d + 2);
        else
            *o = (sm_dim){-1, NULL};
    }
}

/* The sizes of t's spatial dims (2, 3, ...) into v, -1 where unknown. */
static void spatial_sizes(const sm_type *t, int nsp, int64_t *v)
{
    for (int d = 0; d < nsp; d++)
        v[d] = nn_size(t, d + 2);
}

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
    SM_TRY(nn_input(s, 0, &x));
    SM_TRY(nn_input(s, 1, &w));
    sm_type *y = &s->out[0];
    SM_TRY(nn_dtype(s, 0, 2, NN_FLOAT, &y->dtype));
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
    int64_t c = nn_size(x, 1), w0 = nn_size(w, 0), w1 = nn_size(w, 1);
    SM_TRY(check_channels(s, t, group, c, t ? w0 : w1, w0));
    sm_dim m = nn_dim(w, 0); /* Conv: M is W's dim 0 */
    if (t && group == 1)
        m = nn_dim(w, 1);
    else if (t) /* ConvTranspose: M is W's dim 1 times group */
        m = w1 >= 0 && w1 <= INT64_MAX / group ? (sm_dim){w1 * group, NULL}
                                               : (sm_dim){-1, NULL};
    int64_t bn = nn_size(b, 0);
    if (b && b->ndim >= 0 &&
        (b->ndim != 1 || (bn >= 0 && m.size >= 0 && bn != m.size)))
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: B must be 1-D with M = %lld values, got rank %d "
                      "with %lld",
                      s->op->name, (long long)m.size, b->ndim, (long long)bn);
    int64_t in[SMELT_MAX_DIMS], k[SMELT_MAX_DIMS];
    spatial_sizes(x, rank - 2, in);
    spatial_sizes(w, rank - 2, k);
    sm_window win;
    SM_TRY(sm_window_init(s->ctx, s->op->name, &s->attrs, kind, rank - 2, in, k,
                          &win));
    y->ndim = rank;
    y->dims[0] = nn_dim(x, 0);
    y->dims[1] = m;
    window_dims(y, &win, x);
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

/*
 * MaxPool and AveragePool: Y is [N, C, spatial...] with the window's
 * spatial sizes; the rank follows from kernel_shape when X's is unknown.
 * MaxPool also takes i8/u8 and may have an i64 Indices output of Y's
 * shape.
 */
smelt_status sm_shape_pool(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(nn_input(s, 0, &x));
    int is_max =
        sm_op_from_name(s->op->name, (int)strlen(s->op->name)) == SM_OP_MaxPool;
    sm_type *y = &s->out[0];
    SM_TRY(nn_dtype(s, 0, 0, NN_FLOAT | (is_max ? NN_INT8 : 0), &y->dtype));
    const int64_t *ks;
    int nsp = sm_attrs_ints(&s->attrs, "kernel_shape", &ks);
    if (nsp < 1 || nsp > SMELT_MAX_DIMS - 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: kernel_shape must have 1 to %d values (one per "
                      "spatial dim), got %d",
                      s->op->name, SMELT_MAX_DIMS - 2, nsp < 0 ? 0 : nsp);
    if (x->ndim >= 0 && x->ndim != nsp + 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X has rank %d but kernel_shape has %d values; "
                      "expected rank - 2 (N and C come first)",
                      s->op->name, x->ndim, nsp);
    int64_t order = sm_attrs_int(&s->attrs, "storage_order", 0);
    if (order != 0 && order != 1)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: storage_order = %lld must be 0 or 1", s->op->name,
                      (long long)order);
    int64_t in[SMELT_MAX_DIMS];
    spatial_sizes(x, nsp, in);
    sm_window win;
    SM_TRY(sm_window_init(s->ctx, s->op->name, &s->attrs, SM_WINDOW_POOL, nsp,
                          in, NULL, &win));
    y->ndim = nsp + 2;
    y->dims[0] = nn_dim(x, 0);
    y->dims[1] = nn_dim(x, 1);
    window_dims(y, &win, x);
    for (int j = 1; j < s->n_out; j++) {
        s->out[j] = *y;
        s->out[j].dtype = SMELT_DTYPE_I64;
    }
    return SMELT_OK;
}

/* GlobalAveragePool and GlobalMaxPool: X [N, C, D...] gives
 * [N, C, 1, ...]. */
smelt_status sm_shape_globalpool(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(nn_input(s, 0, &x));
    sm_type *y = &s->out[0];
    SM_TRY(nn_dtype(s, 0, 0, NN_FLOAT, &y->dtype));
    y->ndim = x->ndim;
    if (x->ndim < 0)
        return SMELT_OK;
    if (x->ndim < 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: X must have rank >= 2 (N, C, spatial dims...), got "
                      "%d",
                      s->op->name, x->ndim);
    for (int d = 0; d < x->ndim; d++)
        y->dims[d] = d < 2 ? x->dims[d] : (sm_dim){1, NULL};
    return SMELT_OK;
}

/* ---- costs -------------------------------------------------------------- */

/* Known size of dim i of t as a double, 1 when unknown. */
static double dsz(const sm_type *t, int i)
{
    int64_t n = nn_size(t, i);
    return n < 0 ? 1 : (double)n;
}

/* Sets flops and the bytes of every present input read and every output
 * written. */
static void cost_io(const sm_shape_ctx *s, sm_cost *c, double flops)
{
    c->flops = flops;
    c->bytes_read = c->bytes_write = 0;
    for (int i = 0; i < s->n_in; i++)
        if (sm_shape_in(s, i))
            c->bytes_read += sm_type_bytes(s->in[i].type);
    for (int j = 0; j < s->n_out; j++)
        c->bytes_write += sm_type_bytes(&s->out[j]);
}

/* The product of dims [from, ndim) of t (unknown ones as 1). */
static double tail_volume(const sm_type *t, int from)
{
    double v = 1;
    for (int d = from; t && d < t->ndim; d++)
        v *= dsz(t, d);
    return v;
}

/* MatMul: 2*K flops per output element (batch * M * N of them). */
void sm_cost_matmul(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *a = sm_shape_in(s, 0);
    double k = a && a->ndim > 0 ? dsz(a, a->ndim - 1) : 1;
    cost_io(s, c, 2 * sm_type_numel(&s->out[0]) * k);
}

/* Gemm: 2*M*N*K, plus one add per output element when C is given. */
void sm_cost_gemm(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *a = sm_shape_in(s, 0);
    int ta = sm_attrs_int(&s->attrs, "transA", 0) != 0;
    double k = a ? dsz(a, !ta) : 1, mn = sm_type_numel(&s->out[0]);
    cost_io(s, c, 2 * mn * k + (sm_shape_in(s, 2) ? mn : 0));
}

/* Conv: every output element takes (C/group) * kernel volume multiply-adds
 * (W is [M, C/group, k...]), plus the bias add. */
void sm_cost_conv(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *w = sm_shape_in(s, 1);
    double out = sm_type_numel(&s->out[0]);
    double macs = out * dsz(w, 1) * tail_volume(w, 2);
    cost_io(s, c, 2 * macs + (sm_shape_in(s, 2) ? out : 0));
}

/* ConvTranspose: every input element feeds (M/group) * kernel volume
 * multiply-adds (W is [C, M/group, k...]), plus the bias add. */
void sm_cost_convtranspose(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0), *w = sm_shape_in(s, 1);
    double macs = (x ? sm_type_numel(x) : 1) * dsz(w, 1) * tail_volume(w, 2);
    double out = sm_type_numel(&s->out[0]);
    cost_io(s, c, 2 * macs + (sm_shape_in(s, 2) ? out : 0));
}

/* Pooling: one operation per window element of every output element; the
 * global pools' window is a whole plane. */
void sm_cost_pool(const sm_shape_ctx *s, sm_cost *c)
{
    const int64_t *ks;
    int n = sm_attrs_ints(&s->attrs, "kernel_shape", &ks);
    double out = sm_type_numel(&s->out[0]), window = 1;
    for (int i = 0; i < n; i++)
        window *= (double)ks[i];
    if (n < 0) {
        const sm_type *x = sm_shape_in(s, 0);
        window = x ? tail_volume(x, 2) : 1;
    }
    cost_io(s, c, out * window);
}

/* Normalizations and softmax: a handful of operations per element (max or
 * mean, subtract, exp or square, sum, scale). */
void sm_cost_norm(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    cost_io(s, c, 5 * (x ? sm_type_numel(x) : 0));
}
