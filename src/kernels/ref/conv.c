/*
 * conv.c - reference Conv and ConvTranspose over any number of spatial
 * dims (1-D, 2-D, 3-D... alike), and the window geometry of window.h that
 * they share with pooling and with the shape functions.
 *
 * Both kernels gather: each output element sums its taps directly, in
 * double, so there is no scratch buffer and no order dependence.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"
#include "kernels/ref/window.h"

enum { PAD_NOTSET, PAD_VALID, PAD_SAME_UPPER, PAD_SAME_LOWER };

static smelt_status parse_auto_pad(smelt_ctx_t *ctx, const char *op,
                                   const sm_attrs *at, int *mode)
{
    static const char *const names[] = {"NOTSET", "VALID", "SAME_UPPER",
                                        "SAME_LOWER"};
    const char *s = sm_attrs_string(at, "auto_pad", "NOTSET");
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, names[i]) == 0) {
            *mode = i;
            return SMELT_OK;
        }
    }
    return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                  "%s: auto_pad '%s' is not NOTSET, VALID, SAME_UPPER or "
                  "SAME_LOWER",
                  op, s);
}

/*
 * Reads the list attribute `name` into v[0..n): def everywhere when the
 * node does not set it. Fails when it has another length than n (one
 * value per spatial dim, or two for pads) or a value outside
 * [lo, SM_WINDOW_MAX]. *given (may be NULL) tells whether it was set.
 */
static smelt_status read_list(smelt_ctx_t *ctx, const char *op,
                              const sm_attrs *at, const char *name, int n,
                              int64_t def, int64_t lo, int64_t *v, int *given)
{
    const int64_t *p;
    int cnt = sm_attrs_ints(at, name, &p);
    if (given)
        *given = cnt >= 0;
    if (cnt < 0) {
        for (int i = 0; i < n; i++)
            v[i] = def;
        return SMELT_OK;
    }
    if (cnt != n)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: %s has %d values, expected %d for %d spatial "
                      "dims",
                      op, name, cnt, n, strcmp(name, "pads") ? n : n / 2);
    for (int i = 0; i < n; i++) {
        if (p[i] < lo || p[i] > SM_WINDOW_MAX)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "%s: %s[%d] = %lld is outside [%lld, %lld]", op, name,
                          i, (long long)p[i], (long long)lo,
                          (long long)SM_WINDOW_MAX);
        v[i] = p[i];
    }
    return SMELT_OK;
}

/* ConvTranspose's output_shape: one value per spatial dim, or the whole
 * output shape (N, C first), of which the spatial part is used. */
static smelt_status read_output_shape(smelt_ctx_t *ctx, const char *op,
                                      const sm_attrs *at, int nsp, int64_t *v,
                                      int *given)
{
    const int64_t *p;
    int cnt = sm_attrs_ints(at, "output_shape", &p);
    *given = cnt >= 0;
    if (cnt < 0)
        return SMELT_OK;
    if (cnt != nsp && cnt != nsp + 2)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: output_shape has %d values, expected %d (one per "
                      "spatial dim)",
                      op, cnt, nsp);
    for (int i = 0; i < nsp; i++) {
        int64_t x = p[cnt - nsp + i];
        if (x < 1 || x > SM_WINDOW_MAX)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "%s: output_shape value %lld is outside [1, %lld]",
                          op, (long long)x, (long long)SM_WINDOW_MAX);
        v[i] = x;
    }
    return SMELT_OK;
}

/* Floor division by 2 (Python's //), for paddings that may be negative. */
static int64_t half_floor(int64_t x)
{
    return x >= 0 ? x / 2 : -((1 - x) / 2);
}

/*
 * One spatial dim of Conv or pooling. SAME_*: output ceil(in / stride),
 * the total padding that needs split evenly with the odd one at the end
 * (UPPER) or the start (LOWER). Otherwise floor (or, pooling with
 * ceil_mode, ceil) of the padded span over the stride plus one, where a
 * ceil_mode window that would start in the end padding is dropped, as
 * ONNX and PyTorch do.
 */
static smelt_status conv_dim(smelt_ctx_t *ctx, const char *op, sm_window *w,
                             int d, int mode, int ceil_mode, int pool)
{
    int64_t in = w->in[d], k = w->kernel[d], s = w->stride[d];
    int64_t dk = k < 0 ? -1 : (k - 1) * w->dil[d] + 1;
    w->out[d] = -1;
    if (w->same) {
        w->pad0[d] = w->pad1[d] = 0;
        if (in < 0)
            return SMELT_OK;
        w->out[d] = (in + s - 1) / s;
        if (dk < 0)
            return SMELT_OK;
        int64_t total = (w->out[d] - 1) * s + dk - in;
        if (total < 0)
            total = 0;
        w->pad0[d] = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
        w->pad1[d] = total - w->pad0[d];
        return SMELT_OK;
    }
    if (pool && k >= 0 && (w->pad0[d] >= k || w->pad1[d] >= k))
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: pads %lld and %lld of spatial dim %d must be "
                      "smaller than kernel_shape[%d] = %lld",
                      op, (long long)w->pad0[d], (long long)w->pad1[d], d, d,
                      (long long)k);
    if (in < 0 || dk < 0)
        return SMELT_OK;
    int64_t span = in + w->pad0[d] + w->pad1[d] - dk;
    if (span < 0)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: spatial dim %d: input size %lld padded by %lld+%lld "
                      "is smaller than the dilated kernel %lld, so the output "
                      "would be empty",
                      op, d, (long long)in, (long long)w->pad0[d],
                      (long long)w->pad1[d], (long long)dk);
    w->out[d] = span / s + 1;
    if (ceil_mode && span % s) {
        w->out[d]++;
        if ((w->out[d] - 1) * s >= in + w->pad0[d])
            w->out[d]--;
    }
    return SMELT_OK;
}

/*
 * One spatial dim of ConvTranspose: with output_shape (or SAME_*, whose
 * output is in * stride) the pads follow from the wanted size,
 * total = stride*(in-1) + output_padding + dilated kernel - out, split as
 * ONNX specifies (SAME_UPPER: the smaller half first; otherwise the
 * larger); without, out = stride*(in-1) + output_padding + dilated
 * kernel - pads.
 */
static smelt_status convt_dim(smelt_ctx_t *ctx, const char *op, sm_window *w,
                              int d, int mode, int64_t opad, int64_t oshape)
{
    int64_t in = w->in[d], k = w->kernel[d], s = w->stride[d];
    int64_t dk = k < 0 ? -1 : (k - 1) * w->dil[d] + 1;
    if (opad >= s && opad >= w->dil[d])
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: output_padding[%d] = %lld must be smaller than the "
                      "stride (%lld) or the dilation (%lld)",
                      op, d, (long long)opad, (long long)s,
                      (long long)w->dil[d]);
    w->out[d] = -1;
    if (oshape > 0 || w->same) {
        w->out[d] = oshape > 0 ? oshape : in < 0 ? -1 : in * s;
        w->pad0[d] = w->pad1[d] = 0;
        if (in < 0 || dk < 0)
            return SMELT_OK;
        int64_t total = s * (in - 1) + opad + dk - w->out[d];
        w->pad0[d] = mode == PAD_SAME_UPPER ? half_floor(total)
                                            : total - half_floor(total);
        w->pad1[d] = total - w->pad0[d];
        return SMELT_OK;
    }
    if (in < 0 || dk < 0)
        return SMELT_OK;
    int64_t out = s * (in - 1) + opad + dk - w->pad0[d] - w->pad1[d];
    if (out < 1)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: spatial dim %d: output size %lld (stride %lld x "
                      "(input %lld - 1) + output_padding %lld + dilated "
                      "kernel %lld - pads %lld - %lld) is below 1",
                      op, d, (long long)out, (long long)s, (long long)in,
                      (long long)opad, (long long)dk, (long long)w->pad0[d],
                      (long long)w->pad1[d]);
    w->out[d] = out;
    return SMELT_OK;
}

/* The kernel size of dim d: kernel_shape when given (checked against
 * W's), else W's; and the input size, both range-checked. */
static smelt_status dim_sizes(smelt_ctx_t *ctx, const char *op, sm_window *w,
                              int d, const int64_t *ks, int has_ks,
                              const int64_t *in, const int64_t *kernel)
{
    int64_t wk = kernel ? kernel[d] : -1;
    if (has_ks && wk >= 0 && wk != ks[d])
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: kernel_shape[%d] = %lld but W's spatial dim %d "
                      "is %lld",
                      op, d, (long long)ks[d], d, (long long)wk);
    w->kernel[d] = has_ks ? ks[d] : wk;
    if (w->kernel[d] == 0 || w->kernel[d] > SM_WINDOW_MAX)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: kernel spatial dim %d is %lld; expected 1 to %lld",
                      op, d, (long long)w->kernel[d], (long long)SM_WINDOW_MAX);
    w->in[d] = in[d];
    if (in[d] > SM_WINDOW_MAX)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "%s: input spatial dim %d is %lld, above the limit %lld",
                      op, d, (long long)in[d], (long long)SM_WINDOW_MAX);
    return SMELT_OK;
}

smelt_status sm_window_init(smelt_ctx_t *ctx, const char *op,
                            const sm_attrs *at, sm_window_kind kind, int nsp,
                            const int64_t *in, const int64_t *kernel,
                            sm_window *w)
{
    memset(w, 0, sizeof *w);
    if (nsp < 1 || nsp > SMELT_MAX_DIMS - 2)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: %d spatial dims; expected 1 to %d", op, nsp,
                      SMELT_MAX_DIMS - 2);
    w->nsp = nsp;
    int mode = 0, has_ks, has_os = 0;
    SM_TRY(parse_auto_pad(ctx, op, at, &mode));
    w->same = mode >= PAD_SAME_UPPER;
    int64_t ks[SMELT_MAX_DIMS], pads[2 * SMELT_MAX_DIMS];
    int64_t opad[SMELT_MAX_DIMS], oshape[SMELT_MAX_DIMS] = {0};
    SM_TRY(read_list(ctx, op, at, "kernel_shape", nsp, -1, 1, ks, &has_ks));
    if (!has_ks && !kernel)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: attribute kernel_shape is required", op);
    SM_TRY(read_list(ctx, op, at, "strides", nsp, 1, 1, w->stride, NULL));
    SM_TRY(read_list(ctx, op, at, "dilations", nsp, 1, 1, w->dil, NULL));
    SM_TRY(read_list(ctx, op, at, "pads", 2 * nsp, 0, 0, pads, NULL));
    SM_TRY(read_list(ctx, op, at, "output_padding", nsp, 0, 0, opad, NULL));
    if (kind == SM_WINDOW_CONVT)
        SM_TRY(read_output_shape(ctx, op, at, nsp, oshape, &has_os));
    int ceil_mode =
        kind == SM_WINDOW_POOL && sm_attrs_int(at, "ceil_mode", 0) != 0;
    for (int d = 0; d < nsp; d++) {
        SM_TRY(dim_sizes(ctx, op, w, d, ks, has_ks, in, kernel));
        w->pad0[d] = mode == PAD_NOTSET ? pads[d] : 0;
        w->pad1[d] = mode == PAD_NOTSET ? pads[d + nsp] : 0;
        if (kind == SM_WINDOW_CONVT)
            SM_TRY(convt_dim(ctx, op, w, d, mode, opad[d], oshape[d]));
        else
            SM_TRY(conv_dim(ctx, op, w, d, mode, ceil_mode,
                            kind == SM_WINDOW_POOL));
    }
    return SMELT_OK;
}

int64_t sm_window_tap(const sm_window *w, const int64_t *o, const int64_t *k)
{
    int64_t off = 0;
    int pad = 0;
    for (int d = 0; d < w->nsp; d++) {
        int64_t p = o[d] * w->stride[d] - w->pad0[d] + k[d] * w->dil[d];
        if (p >= w->in[d] + w->pad1[d])
            return SM_TAP_OUTSIDE;
        if (p < 0 || p >= w->in[d])
            pad = 1;
        off = off * w->in[d] + p;
    }
    return pad ? SM_TAP_PAD : off;
}

/* ConvTranspose's tap: the input element that output position o reads
 * through kernel tap k (o = i*stride - pad0 + k*dilation), or -1. */
static int64_t convt_tap(const sm_window *w, const int64_t *o, const int64_t *k)
{
    int64_t off = 0;
    for (int d = 0; d < w->nsp; d++) {
        int64_t t = o[d] + w->pad0[d] - k[d] * w->dil[d];
        if (t < 0 || t % w->stride[d] != 0 || t / w->stride[d] >= w->in[d])
            return -1;
        off = off * w->in[d] + t / w->stride[d];
    }
    return off;
}

int64_t sm_window_prod(int n, const int64_t *v)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= v[i];
    return p;
}

/* What both kernels need: the window, and the channel counts checked
 * against the tensors (the shape function did it; this keeps the loops
 * memory-safe whatever calls them). */
typedef struct conv_geom {
    sm_window w;
    int64_t batch, c_in, c_out, group, cg, mg; /* cg, mg: per group */
} conv_geom;

static smelt_status conv_setup(const sm_kargs *a, sm_window_kind kind,
                               conv_geom *g)
{
    const sm_tensor *x = a->in[0], *wt = a->in[1];
    const sm_tensor *b = a->n_in > 2 ? a->in[2] : NULL;
    const sm_tensor *y = a->out[0];
    if (x->ndim < 3 || wt->ndim != x->ndim || y->ndim != x->ndim)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X, W and Y must share one rank >= 3, got %d, %d "
                      "and %d",
                      a->op_name, x->ndim, wt->ndim, y->ndim);
    SM_TRY(sm_window_init(a->ctx, a->op_name, &a->attrs, kind, x->ndim - 2,
                          x->dims + 2, wt->dims + 2, &g->w));
    g->group = sm_attrs_int(&a->attrs, "group", 1);
    g->batch = x->dims[0];
    g->c_in = x->dims[1];
    int t = kind == SM_WINDOW_CONVT;
    int64_t wc = wt->dims[t ? 0 : 1], wm = wt->dims[t ? 1 : 0];
    if (g->group < 1 || (t ? wc != g->c_in || wc % g->group
                           : wc * g->group != g->c_in || wm % g->group))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X's %lld channels do not fit W's dims %lld, %lld "
                      "with group %lld",
                      a->op_name, (long long)g->c_in, (long long)wt->dims[0],
                      (long long)wt->dims[1], (long long)g->group);
    g->c_out = t ? wm * g->group : wm;
    g->cg = t ? wc / g->group : wc;
    g->mg = t ? wm : wm / g->group;
    int bad = y->dims[0] != g->batch || y->dims[1] != g->c_out ||
              (b && b->numel != g->c_out);
    for (int d = 0; d < g->w.nsp; d++)
        bad |= y->dims[d + 2] != g->w.out[d];
    if (bad)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output or bias shape does not match the inputs",
                      a->op_name);
    return SMELT_OK;
}

/*
 * The input offset (within one channel plane) that each kernel tap reads
 * at output position o, in W's row-major tap order; negative for a tap in
 * the padding. It does not depend on the channel, so conv_run computes it
 * once per output position instead of once per channel.
 */
static void fill_taps(const sm_window *w, int t, const int64_t *o, int64_t ksz,
                      int64_t *taps)
{
    int64_t k[SMELT_MAX_DIMS] = {0};
    for (int64_t kp = 0; kp < ksz; kp++, sm_index_next(w->nsp, w->kernel, k))
        taps[kp] = t ? convt_tap(w, o, k) : sm_window_tap(w, o, k);
}

/*
 * acc + the sum over the cg input channels c of a group and the taps kp of
 * x[xb + c * xs + taps[kp]] * W[wb + c * ws + kp], skipping padding taps,
 * in double, channel by channel in tap order. The f32 case reads the
 * floats directly (the common case, and most of the reference
 * interpreter's time); every other dtype goes through sm_load_f64. Same
 * sum either way.
 */
static double group_dot(double acc, const sm_tensor *x, int64_t xb, int64_t xs,
                        const sm_tensor *wt, int64_t wb, int64_t ws, int64_t cg,
                        const int64_t *taps, int64_t ksz)
{
    if (x->dtype == SMELT_DTYPE_F32 && wt->dtype == SMELT_DTYPE_F32) {
        for (int64_t c = 0; c < cg; c++) {
            const float *xp = (const float *)x->data + xb + c * xs;
            const float *wp = (const float *)wt->data + wb + c * ws;
            for (int64_t kp = 0; kp < ksz; kp++)
                if (taps[kp] >= 0)
                    acc += (double)xp[taps[kp]] * (double)wp[kp];
        }
        return acc;
    }
    for (int64_t c = 0; c < cg; c++)
        for (int64_t kp = 0; kp < ksz; kp++)
            if (taps[kp] >= 0)
                acc += sm_load_f64(x->dtype, x->data, xb + c * xs + taps[kp]) *
                       sm_load_f64(wt->dtype, wt->data, wb + c * ws + kp);
    return acc;
}

/*
 * Conv and ConvTranspose: y[n, m, o] = B[m] + the sum over the input
 * channels c of m's group and the kernel taps k of x[n, c, tap] * W[...],
 * where W is [M, C/group, k...] for Conv and [C, M/group, k...] for
 * ConvTranspose, and tap comes from the window (or its transpose).
 */
static smelt_status conv_run(const sm_kargs *a, sm_window_kind kind)
{
    conv_geom g;
    SM_TRY(conv_setup(a, kind, &g));
    const sm_tensor *x = a->in[0], *wt = a->in[1];
    const sm_tensor *b = a->n_in > 2 ? a->in[2] : NULL;
    sm_tensor *y = a->out[0];
    const sm_window *w = &g.w;
    int nsp = w->nsp, t = kind == SM_WINDOW_CONVT;
    int64_t isz = sm_window_prod(nsp, w->in), osz = sm_window_prod(nsp, w->out);
    int64_t ksz = sm_window_prod(nsp, w->kernel);
    int64_t *taps = sm_malloc((size_t)ksz * sizeof *taps);
    if (!taps)
        return sm_err(a->ctx, SMELT_ERR_NOMEM,
                      "%s: out of memory for %lld kernel taps", a->op_name,
                      (long long)ksz);
    int64_t o[SMELT_MAX_DIMS];
    for (int64_t n = 0; n < g.batch; n++) {
        for (int64_t m = 0; m < g.c_out; m++) {
            /* input channel c of m's group: x at xb + c * isz, W at
             * wb + c * ws (W is [M, C/group, k...] for Conv, [C, M/group,
             * k...] for ConvTranspose) */
            int64_t ic0 = m / g.mg * g.cg;
            int64_t xb = (n * g.c_in + ic0) * isz;
            int64_t wb = (t ? ic0 * g.mg + m % g.mg : m * g.cg) * ksz;
            int64_t ws = (t ? g.mg : 1) * ksz;
            memset(o, 0, sizeof o);
            for (int64_t op = 0; op < osz;
                 op++, sm_index_next(nsp, w->out, o)) {
                fill_taps(w, t, o, ksz, taps);
                double acc = b ? sm_load_f64(b->dtype, b->data, m) : 0;
                acc = group_dot(acc, x, xb, isz, wt, wb, ws, g.cg, taps, ksz);
                sm_store_f64(y->dtype, y->data, (n * g.c_out + m) * osz + op,
                             acc);
            }
        }
    }
    sm_free(taps);
    return SMELT_OK;
}

smelt_status sm_ref_conv(const sm_kargs *a)
{
    return conv_run(a, SM_WINDOW_CONV);
}

smelt_status sm_ref_convtranspose(const sm_kargs *a)
{
    return conv_run(a, SM_WINDOW_CONVT);
}
