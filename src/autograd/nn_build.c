/*
 * nn_build.c - builders the convolution, pooling and fused-op gradient
 * rules share (rules_nn.h): window geometry for static shapes, nodes
 * with attributes, and the convolutions every backward pass of a
 * sliding-window op is made of: a Conv that lands on a given output
 * size, a Conv's input gradient (a Conv over dY spread out, or a
 * ConvTranspose that lands on the size), and a Conv's kernel gradient.
 */
#include <string.h>

#include "autograd/rules_nn.h"
#include "core/alloc.h"
#include "core/dtype.h"

/* Records st (a failure the context already describes) as g's first. */
static void keep(sm_grad_ctx *g, smelt_status st)
{
    if (st != SMELT_OK && g->st == SMELT_OK)
        g->st = st;
}

/* Records a failed attribute store (out of memory). */
static void attr_ok(sm_grad_ctx *g, int ok)
{
    if (!ok)
        keep(g, sm_err_nomem(g->ctx));
}

/* Whether the spatial sizes of v (dims 2..) are all known; copies them. */
static int spatial(const sm_value *v, int64_t *out)
{
    if (!v || v->type.ndim < 3)
        return 0;
    for (int d = 2; d < v->type.ndim; d++) {
        if (v->type.dims[d].size < 0)
            return 0;
        out[d - 2] = v->type.dims[d].size;
    }
    return 1;
}

smelt_status sm_gn_window(sm_grad_ctx *g, sm_window_kind kind, int with_kernel,
                          sm_window *w)
{
    const sm_node *n = g->n;
    const sm_value *x = n->in[0], *k = with_kernel ? n->in[1] : NULL;
    int64_t in[SMELT_MAX_DIMS], ks[SMELT_MAX_DIMS];
    if (!spatial(x, in) ||
        (with_kernel && (!spatial(k, ks) || k->type.ndim != x->type.ndim)))
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "the spatial sizes of '%s'%s%s are not known "
                         "before running; only static spatial sizes are "
                         "differentiated (bind them with --dim)",
                         x->name, with_kernel ? " and of the kernel " : "",
                         with_kernel ? k->name : "");
    sm_attrs at = sm_node_attrs(n);
    keep(g, sm_window_init(g->ctx, sm_op_info_get(n->op)->name, &at, kind,
                           x->type.ndim - 2, in, with_kernel ? ks : NULL, w));
    return g->st;
}

sm_value *sm_gn_transpose(sm_grad_ctx *g, sm_value *x, const int64_t *perm)
{
    sm_node *n = sm_g_node(g, SM_OP_Transpose, 1, &x, 1);
    if (n)
        attr_ok(g, sm_node_set_ints(n, "perm", perm, x->type.ndim));
    return sm_g_done(g, n);
}

sm_value *sm_gn_swap01(sm_grad_ctx *g, sm_value *x)
{
    if (!x)
        return NULL;
    int64_t perm[SMELT_MAX_DIMS];
    for (int i = 0; i < x->type.ndim; i++)
        perm[i] = i;
    perm[0] = 1;
    perm[1] = 0;
    return sm_gn_transpose(g, x, perm);
}

sm_value *sm_gn_slice(sm_grad_ctx *g, sm_value *x, const int64_t *axes,
                      const int64_t *starts, const int64_t *ends, int n)
{
    if (n == 0)
        return x;
    sm_value *in[4] = {x, sm_g_ints(g, starts, n), sm_g_ints(g, ends, n),
                       sm_g_ints(g, axes, n)};
    return sm_g_done(g, sm_g_node(g, SM_OP_Slice, 4, in, 1));
}

sm_value *sm_gn_reshape(sm_grad_ctx *g, sm_value *x, const int64_t *dims, int n)
{
    return sm_g_op2(g, SM_OP_Reshape, x, sm_g_ints(g, dims, n));
}

sm_value *sm_gn_const(sm_grad_ctx *g, smelt_dtype dt, int ndim,
                      const int64_t *dims, const double *v)
{
    if (g->st != SMELT_OK)
        return NULL;
    sm_tensor *t;
    smelt_status st = sm_tensor_new(g->ctx, dt, ndim, dims, &t);
    if (st != SMELT_OK) {
        keep(g, st);
        return NULL;
    }
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_f64(dt, t->data, i, v[i]);
    sm_value *c = sm_rw_add_const(g->rw, g->b, "g_const", t);
    if (!c)
        keep(g, sm_err_nomem(g->ctx));
    return c;
}

void sm_gn_copy_attrs(sm_grad_ctx *g, sm_node *m, const sm_node *n,
                      const char *const *skip)
{
    if (!m)
        return;
    for (int i = 0; i < n->n_attr && g->st == SMELT_OK; i++) {
        const sm_attr *a = &n->attrs[i];
        int skipped = 0;
        for (int k = 0; skip && skip[k]; k++)
            skipped |= strcmp(skip[k], a->name) == 0;
        if (skipped)
            continue;
        switch (a->kind) {
        case SM_ATTR_INT:
            attr_ok(g, sm_node_set_int(m, a->name, a->v.i));
            break;
        case SM_ATTR_FLOAT:
            attr_ok(g, sm_node_set_float(m, a->name, a->v.f));
            break;
        case SM_ATTR_STRING:
            attr_ok(g, sm_node_set_string(m, a->name, a->v.s));
            break;
        case SM_ATTR_INTS:
            attr_ok(g, sm_node_set_ints(m, a->name, a->v.ints, a->n));
            break;
        case SM_ATTR_FLOATS:
            attr_ok(g, sm_node_set_floats(m, a->name, a->v.floats, a->n));
            break;
        case SM_ATTR_STRINGS:
            attr_ok(g, sm_node_set_strings(m, a->name, a->v.strs, a->n));
            break;
        default:
            sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                      "attribute '%s' of a tensor kind cannot be copied",
                      a->name);
        }
    }
}

sm_value *sm_gn_like_out(sm_grad_ctx *g, sm_value *v)
{
    const sm_value *y = g->n->out[0];
    if (!v || y->type.ndim < 1 || v->type.ndim != y->type.ndim)
        return v;
    int64_t dims[SMELT_MAX_DIMS];
    int lost = 0;
    dims[0] = 0;
    for (int d = 1; d < y->type.ndim; d++) {
        dims[d] = y->type.dims[d].size;
        if (dims[d] < 0)
            return v; /* the output's type does not know more */
        lost |= v->type.dims[d].size < 0;
    }
    return lost ? sm_gn_reshape(g, v, dims, y->type.ndim) : v;
}

sm_value *sm_gn_sum_but_channels(sm_grad_ctx *g, sm_value *x)
{
    if (!x)
        return NULL;
    int64_t axes[SMELT_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < x->type.ndim; i++)
        if (i != 1)
            axes[k++] = i;
    return sm_g_reduce_sum(g, x, axes, k, 0);
}

/* Sets the window attributes of a Conv or ConvTranspose node m. */
static void set_window(sm_grad_ctx *g, sm_node *m, int nsp, int64_t group,
                       const int64_t *s, const int64_t *dil,
                       const int64_t *pads)
{
    if (!m)
        return;
    attr_ok(g, sm_node_set_int(m, "group", group));
    attr_ok(g, sm_node_set_ints(m, "strides", s, nsp));
    attr_ok(g, sm_node_set_ints(m, "dilations", dil, nsp));
    attr_ok(g, sm_node_set_ints(m, "pads", pads, 2 * nsp));
}

/* The static spatial sizes of x and of kernel w (both must be known). */
static int conv_sizes(sm_grad_ctx *g, const sm_value *x, const sm_value *w,
                      int64_t *xs, int64_t *ks)
{
    if (!x || !w)
        return 0;
    if (!spatial(x, xs) || !spatial(w, ks) || w->type.ndim != x->type.ndim) {
        sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                  "a backward convolution over '%s' needs its spatial "
                  "sizes before running",
                  x->name);
        return 0;
    }
    return 1;
}

sm_value *sm_gn_conv_to(sm_grad_ctx *g, sm_value *x, sm_value *w, int64_t group,
                        const int64_t *s, const int64_t *dil, const int64_t *p0,
                        const int64_t *want)
{
    int64_t xs[SMELT_MAX_DIMS], ks[SMELT_MAX_DIMS], out[SMELT_MAX_DIMS];
    int64_t pads[2 * SMELT_MAX_DIMS], ax[SMELT_MAX_DIMS], st[SMELT_MAX_DIMS],
        en[SMELT_MAX_DIMS];
    if (!conv_sizes(g, x, w, xs, ks))
        return NULL;
    int nsp = x->type.ndim - 2, ncut = 0, nout = 0;
    for (int d = 0; d < nsp; d++) {
        int64_t p = p0[d];
        if (p < 0) { /* the window starts -p elements in: cut them off */
            ax[ncut] = d + 2;
            st[ncut] = -p;
            en[ncut++] = xs[d];
            xs[d] += p;
            p = 0;
        }
        if (xs[d] < 1) {
            sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                      "a backward convolution window starts past the end "
                      "of '%s' (spatial dim %d)",
                      x->name, d);
            return NULL;
        }
        int64_t dk = (ks[d] - 1) * dil[d] + 1;
        int64_t need = (want[d] - 1) * s[d] + dk - xs[d] - p;
        pads[d] = p;
        pads[d + nsp] = need > 0 ? need : 0;
        out[d] = (xs[d] + p + pads[d + nsp] - dk) / s[d] + 1;
    }
    sm_value *in[2] = {sm_gn_slice(g, x, ax, st, en, ncut), w};
    sm_node *m = sm_g_node(g, SM_OP_Conv, 2, in, 1);
    set_window(g, m, nsp, group, s, dil, pads);
    sm_value *y = sm_g_done(g, m);
    for (int d = 0; d < nsp; d++)
        if (out[d] > want[d]) { /* the end padding reached past want */
            ax[nout] = d + 2;
            st[nout] = 0;
            en[nout++] = want[d];
        }
    return sm_gn_slice(g, y, ax, st, en, nout);
}

sm_value *sm_gn_convt_to(sm_grad_ctx *g, sm_value *x, sm_value *w,
                         int64_t group, const int64_t *s, const int64_t *dil,
                         const int64_t *p0, const int64_t *want)
{
    int64_t xs[SMELT_MAX_DIMS], ks[SMELT_MAX_DIMS], opad[SMELT_MAX_DIMS];
    int64_t pads[2 * SMELT_MAX_DIMS];
    if (!conv_sizes(g, x, w, xs, ks))
        return NULL;
    int nsp = x->type.ndim - 2, any_opad = 0;
    for (int d = 0; d < nsp; d++) {
        /* output size s*(in-1) + opad + dk - p0 - p1 must be want */
        int64_t dk = (ks[d] - 1) * dil[d] + 1;
        int64_t t = s[d] * (xs[d] - 1) + dk - p0[d] - want[d];
        pads[d] = p0[d];
        pads[d + nsp] = t > 0 ? t : 0;
        opad[d] = t < 0 ? -t : 0;
        any_opad |= opad[d] != 0;
        if (p0[d] < 0 || (opad[d] >= s[d] && opad[d] >= dil[d])) {
            sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                      "the backward ConvTranspose of spatial dim %d cannot "
                      "reach size %lld (pad %lld, output_padding %lld)",
                      d, (long long)want[d], (long long)p0[d],
                      (long long)opad[d]);
            return NULL;
        }
    }
    sm_value *in[2] = {x, w};
    sm_node *m = sm_g_node(g, SM_OP_ConvTranspose, 2, in, 1);
    set_window(g, m, nsp, group, s, dil, pads);
    if (m && any_opad)
        attr_ok(g, sm_node_set_ints(m, "output_padding", opad, nsp));
    return sm_g_done(g, m);
}

/* Conv's kernel w [M, cg, k...] (group g) as the kernel of the Conv
 * that computes the input gradient: [g*cg, M/g, k...], each group's
 * in/out channels swapped and the taps reversed. */
static sm_value *adjoint_kernel(sm_grad_ctx *g, sm_value *w, int64_t group)
{
    int r = w->type.ndim, nsp = r - 2;
    int64_t m = w->type.dims[0].size, cg = w->type.dims[1].size;
    int64_t dims[SMELT_MAX_DIMS], perm[SMELT_MAX_DIMS];
    sm_value *t;
    if (group == 1) {
        t = sm_gn_swap01(g, w);
    } else {
        dims[0] = group;
        dims[1] = m / group;
        dims[2] = cg;
        for (int d = 0; d < nsp; d++)
            dims[d + 3] = w->type.dims[d + 2].size;
        for (int d = 0; d <= r; d++)
            perm[d] = d;
        perm[1] = 2;
        perm[2] = 1;
        t = sm_gn_transpose(g, sm_gn_reshape(g, w, dims, r + 1), perm);
        dims[0] = group * cg;
        dims[1] = m / group;
        for (int d = 0; d < nsp; d++)
            dims[d + 2] = w->type.dims[d + 2].size;
        t = sm_gn_reshape(g, t, dims, r);
    }
    int64_t axes[SMELT_MAX_DIMS], st[SMELT_MAX_DIMS], en[SMELT_MAX_DIMS],
        step[SMELT_MAX_DIMS];
    for (int d = 0; d < nsp; d++) {
        axes[d] = d + 2;
        st[d] = -1;
        en[d] = INT64_MIN;
        step[d] = -1;
    }
    sm_value *in[5] = {t, sm_g_ints(g, st, nsp), sm_g_ints(g, en, nsp),
                       sm_g_ints(g, axes, nsp), sm_g_ints(g, step, nsp)};
    return sm_g_done(g, sm_g_node(g, SM_OP_Slice, 5, in, 1));
}

/* dy [N, M, O...] with s - 1 zeros after each element along every
 * spatial dim: [N, M, O*s...], dy[i] at i*s (Reshape to [N, M, O1, 1,
 * O2, 1, ...], Pad the unit axes at their end, Reshape back). */
static sm_value *spread_out(sm_grad_ctx *g, sm_value *dy, const int64_t *s)
{
    int nsp = dy->type.ndim - 2, r = 2 + 2 * nsp;
    int64_t dims[SMELT_MAX_DIMS], pads[2 * SMELT_MAX_DIMS] = {0};
    dims[0] = dims[1] = 0;
    for (int d = 0; d < nsp; d++) {
        dims[2 + 2 * d] = dy->type.dims[d + 2].size;
        dims[3 + 2 * d] = 1;
        pads[r + 3 + 2 * d] = s[d] - 1;
    }
    sm_value *v = sm_g_op2(g, SM_OP_Pad, sm_gn_reshape(g, dy, dims, r),
                           sm_g_ints(g, pads, 2 * r));
    for (int d = 0; d < nsp; d++)
        dims[d + 2] = dy->type.dims[d + 2].size * s[d];
    return sm_gn_reshape(g, v, dims, nsp + 2);
}

sm_value *sm_gn_conv_dx(sm_grad_ctx *g, sm_value *dy, sm_value *w,
                        int64_t group, const int64_t *s, const int64_t *dil,
                        const int64_t *p0, const int64_t *want)
{
    int64_t xs[SMELT_MAX_DIMS], ks[SMELT_MAX_DIMS], one[SMELT_MAX_DIMS],
        q0[SMELT_MAX_DIMS];
    if (!conv_sizes(g, dy, w, xs, ks))
        return NULL;
    int nsp = dy->type.ndim - 2, unit = 1;
    for (int d = 0; d < nsp; d++) {
        unit &= s[d] == 1;
        one[d] = 1;
        /* tap k reads z[q + p0 - k*dil]: reversed, q - q0 + k'*dil */
        q0[d] = (ks[d] - 1) * dil[d] - p0[d];
    }
    /* strided f32 runs ConvTranspose as GEMMs and col2im (kernels/cpu/
     * conv_transpose.c): no stride^2 times the work on a spread dY. At
     * stride 1 the Conv form is as much work and, with constant weights
     * (its adjoint kernel folded), gets the forward's algorithms
     * (Winograd); with weights that are graph values (a training step)
     * it would reverse and transpose them every run (a Slice and a
     * Transpose: 23 ms of resnet18's 136 ms step at batch 8, more than
     * the Conv itself), so f32 takes ConvTranspose there too */
    int w_varies = w->data == NULL;
    if (w->type.dims[0].size < 0 || w->type.dims[1].size < 0 ||
        (dy->type.dtype == SMELT_DTYPE_F32 && (!unit || w_varies)) ||
        dy->type.ndim + (unit ? 1 : nsp) > SMELT_MAX_DIMS)
        return sm_gn_convt_to(g, dy, w, group, s, dil, p0, want);
    /* strided: dY spread out to z[i*s] = dY[i] (s^nsp times the
     * multiplies of a ConvTranspose, on the optimized Conv kernels) */
    sm_value *z = unit ? dy : spread_out(g, dy, s);
    return sm_gn_conv_to(g, z, adjoint_kernel(g, w, group), group, one, dil, q0,
                         want);
}

/* The kernel gradient as one Conv of x by dy, the batch contracted as
 * the channel: dy's spatial extent is that Conv's kernel, the taps its
 * outputs (any kernel size). */
static sm_value *kernel_grad_conv(sm_grad_ctx *g, sm_value *x, sm_value *dy,
                                  int64_t group, const int64_t *s,
                                  const int64_t *dil, const int64_t *p0,
                                  const int64_t *k)
{
    int r = x->type.ndim, nsp = r - 2;
    int64_t c = r >= 3 ? x->type.dims[1].size : -1;
    sm_value *in = NULL;
    if (group == 1) {
        in = sm_gn_swap01(g, x); /* [C, N, S...] */
    } else {
        /* [N, G*cg, S...] -> [cg, G*N, S...]: the groups, batch-major
         * inside, become the channels of a grouped convolution */
        if (c < 0 || r + 1 > SMELT_MAX_DIMS) {
            sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                      "the channels of '%s' must be known (and its rank "
                      "below %d) to differentiate a grouped kernel",
                      x->name, SMELT_MAX_DIMS);
            return NULL;
        }
        int64_t dims[SMELT_MAX_DIMS], perm[SMELT_MAX_DIMS];
        dims[0] = 0;
        dims[1] = group;
        dims[2] = c / group;
        for (int d = 0; d < nsp; d++)
            dims[d + 3] = x->type.dims[d + 2].size;
        sm_value *v = sm_gn_reshape(g, x, dims, r + 1);
        perm[0] = 2;
        perm[1] = 1;
        perm[2] = 0;
        for (int d = 3; d < r + 1; d++)
            perm[d] = d;
        v = sm_gn_transpose(g, v, perm);
        dims[0] = c / group;
        dims[1] = -1;
        for (int d = 0; d < nsp; d++)
            dims[d + 2] = x->type.dims[d + 2].size;
        in = sm_gn_reshape(g, v, dims, r);
    }
    /* output position k reads x at k*dil - p0 + i*s: stride and
     * dilation trade places */
    sm_value *y =
        sm_gn_conv_to(g, in, sm_gn_swap01(g, dy), group, dil, s, p0, k);
    return sm_gn_swap01(g, y); /* [cg, M, k...] -> [M, cg, k...] */
}

/* Kernels of up to this many taps take the columns form (its one-hot
 * kernel has taps^2 values). */
#define COLS_MAX_TAPS 128

/*
 * The kernel gradient through the columns of x: a Conv of every plane
 * of x by a one-hot kernel (output channel k is tap k: the window's
 * strides, dilations and pads do the gathering, cols[n*C + c, k, o] =
 * x[n, c, o*s - p0 + k*dil]), then per group one batched MatMul
 * contracting the output positions with dY's, summed over the batch:
 * GEMMs as wide as the kernel's channels times taps, where the
 * convolution form's are as wide as the taps alone.
 */
static sm_value *kernel_grad_cols(sm_grad_ctx *g, sm_value *x, sm_value *dy,
                                  int64_t group, const int64_t *s,
                                  const int64_t *dil, const int64_t *p0,
                                  const int64_t *k, int64_t taps)
{
    int r = x->type.ndim, nsp = r - 2;
    int64_t c = x->type.dims[1].size, m = dy->type.dims[1].size;
    int64_t cg = c / group, mg = m / group, osz = 1;
    int64_t dims[SMELT_MAX_DIMS], want[SMELT_MAX_DIMS];
    dims[0] = -1;
    dims[1] = 1;
    for (int d = 0; d < nsp; d++) {
        dims[d + 2] = x->type.dims[d + 2].size;
        want[d] = dy->type.dims[d + 2].size;
        osz *= want[d];
    }
    sm_value *planes = sm_gn_reshape(g, x, dims, r); /* [N*C, 1, S...] */
    double *hot = sm_calloc((size_t)(taps * taps), sizeof *hot);
    if (!hot) {
        sm_g_fail(g, SMELT_ERR_NOMEM, "no memory for a %lld-tap kernel",
                  (long long)taps);
        return NULL;
    }
    for (int64_t t = 0; t < taps; t++)
        hot[t * taps + t] = 1;
    dims[0] = taps;
    for (int d = 0; d < nsp; d++)
        dims[d + 2] = k[d];
    sm_value *eye = sm_gn_const(g, x->type.dtype, r, dims, hot);
    sm_free(hot);
    sm_value *cols = sm_gn_conv_to(g, planes, eye, 1, s, dil, p0, want);
    int64_t cd[4] = {-1, group, cg * taps, osz}, yd[4] = {0, group, mg, osz};
    int64_t swap_last[4] = {0, 1, 3, 2}, axis0 = 0;
    sm_value *dyt = sm_gn_transpose(g, sm_gn_reshape(g, dy, yd, 4), swap_last);
    sm_value *prod = sm_g_op2(g, SM_OP_MatMul, sm_gn_reshape(g, cols, cd, 4),
                              dyt); /* [N, G, cg*taps, mg] */
    sm_value *sum = sm_g_reduce_sum(g, prod, &axis0, 1, 0);
    int64_t perm[3] = {0, 2, 1};
    sm_value *t = sm_gn_transpose(g, sum, perm); /* [G, mg, cg*taps] */
    dims[0] = m;
    dims[1] = cg;
    for (int d = 0; d < nsp; d++)
        dims[d + 2] = k[d];
    return sm_gn_reshape(g, t, dims, r);
}

/*
 * The kernel gradient as one ConvGradWeight node, which the CPU runs as
 * GEMMs over x's columns: Conv's window over x with begin pads p0 and end
 * pads just large enough to give dy's sizes. NULL (and nothing built)
 * where no such window exists: a negative p0 (ConvTranspose's cropped
 * output) or sizes that need a negative end pad.
 */
static sm_value *kernel_grad_op(sm_grad_ctx *g, sm_value *x, sm_value *dy,
                                int64_t group, const int64_t *s,
                                const int64_t *dil, const int64_t *p0,
                                const int64_t *k)
{
    int nsp = x->type.ndim - 2;
    int64_t pads[2 * SMELT_MAX_DIMS];
    for (int d = 0; d < nsp; d++) {
        int64_t in = x->type.dims[d + 2].size, want = dy->type.dims[d + 2].size;
        int64_t dk = (k[d] - 1) * dil[d] + 1;
        int64_t p1 = (want - 1) * s[d] + dk - in - p0[d];
        if (p0[d] < 0)
            return NULL;
        if (p1 < 0) /* the floor may drop the rest: try no end pad */
            p1 = 0;
        int64_t span = in + p0[d] + p1 - dk;
        if (span < 0 || span / s[d] + 1 != want)
            return NULL;
        pads[d] = p0[d];
        pads[d + nsp] = p1;
    }
    sm_value *in[2] = {x, dy};
    sm_node *m = sm_g_node(g, SM_OP_ConvGradWeight, 2, in, 1);
    set_window(g, m, nsp, group, s, dil, pads);
    if (m)
        attr_ok(g, sm_node_set_ints(m, "kernel_shape", k, nsp));
    return sm_g_done(g, m);
}

sm_value *sm_gn_kernel_grad(sm_grad_ctx *g, sm_value *x, sm_value *dy,
                            int64_t group, const int64_t *s, const int64_t *dil,
                            const int64_t *p0, const int64_t *k)
{
    if (!x || !dy)
        return NULL;
    int64_t taps = 1;
    for (int d = 0; d + 2 < x->type.ndim; d++)
        taps *= k[d];
    int known = x->type.ndim >= 3 && dy->type.ndim == x->type.ndim &&
                x->type.dims[1].size > 0 && dy->type.dims[1].size > 0;
    for (int d = 2; known && d < x->type.ndim; d++)
        known = x->type.dims[d].size >= 0 && dy->type.dims[d].size >= 0;
    /* depthwise (one input channel per group) keeps the columns form:
     * its GEMMs would be one row tall */
    int depthwise = group > 1 && known && x->type.dims[1].size == group;
    if (known && !depthwise) {
        sm_value *v = kernel_grad_op(g, x, dy, group, s, dil, p0, k);
        if (v || g->st != SMELT_OK)
            return v;
    }
    if (known && taps <= COLS_MAX_TAPS)
        return kernel_grad_cols(g, x, dy, group, s, dil, p0, k, taps);
    return kernel_grad_conv(g, x, dy, group, s, dil, p0, k);
}
