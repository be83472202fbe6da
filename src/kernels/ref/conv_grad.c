/*
 * conv_grad.c - reference ConvGradWeight over any number of spatial dims:
 * Conv's kernel gradient, each element of dW summed directly in double
 * over the batch and dY's positions, so no scratch holds partial sums
 * and the order is fixed.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"
#include "kernels/ref/window.h"

/*
 * dW[m, c, k] = sum over n and o of dY[n, m, o] * X[n, ic0 + c, tap(o, k)],
 * ic0 the first input channel of m's group and tap the element Conv's
 * window over X reads at output o through tap k (none in the padding).
 * The shapes are checked again here, so the loops stay in bounds whatever
 * calls them.
 */
smelt_status sm_ref_convgradweight(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0], *dy = a->in[1];
    sm_tensor *dw = a->out[0];
    int r = x->ndim, nsp = r - 2;
    if (r < 3 || dy->ndim != r || dw->ndim != r)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: X, dY and dW must share one rank >= 3, got %d, %d "
                      "and %d",
                      a->op_name, x->ndim, dy->ndim, dw->ndim);
    const int64_t *ks = NULL;
    if (sm_attrs_ints(&a->attrs, "kernel_shape", &ks) != nsp)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: kernel_shape must hold %d values", a->op_name, nsp);
    sm_window w;
    SM_TRY(sm_window_init(a->ctx, a->op_name, &a->attrs, SM_WINDOW_CONV, nsp,
                          x->dims + 2, ks, &w));
    int64_t group = sm_attrs_int(&a->attrs, "group", 1);
    int64_t nb = x->dims[0], c = x->dims[1], m = dy->dims[1];
    int ok = group >= 1 && dy->dims[0] == nb && c % group == 0 &&
             m % group == 0 && dw->dims[0] == m && dw->dims[1] == c / group;
    for (int d = 0; ok && d < nsp; d++)
        ok = dy->dims[d + 2] == w.out[d] && dw->dims[d + 2] == ks[d];
    if (!ok)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the shapes of X, dY and dW do not fit the window "
                      "and group %lld",
                      a->op_name, (long long)group);
    int64_t cg = c / group, mg = m / group;
    int64_t isz = sm_window_prod(nsp, w.in), osz = sm_window_prod(nsp, w.out);
    int64_t ksz = sm_window_prod(nsp, w.kernel);
    int64_t kk[SMELT_MAX_DIMS], o[SMELT_MAX_DIMS];
    memset(kk, 0, sizeof kk);
    for (int64_t kp = 0; kp < ksz; kp++, sm_index_next(nsp, w.kernel, kk)) {
        for (int64_t mm = 0; mm < m; mm++) {
            int64_t ic0 = mm / mg * cg;
            for (int64_t cc = 0; cc < cg; cc++) {
                double acc = 0;
                for (int64_t n = 0; n < nb; n++) {
                    int64_t xb = (n * c + ic0 + cc) * isz;
                    int64_t yb = (n * m + mm) * osz;
                    memset(o, 0, sizeof o);
                    for (int64_t op = 0; op < osz;
                         op++, sm_index_next(nsp, w.out, o)) {
                        int64_t t = sm_window_tap(&w, o, kk);
                        if (t >= 0)
                            acc += sm_load_f64(dy->dtype, dy->data, yb + op) *
                                   sm_load_f64(x->dtype, x->data, xb + t);
                    }
                }
                sm_store_f64(dw->dtype, dw->data, (mm * cg + cc) * ksz + kp,
                             acc);
            }
        }
    }
    return SMELT_OK;
}
