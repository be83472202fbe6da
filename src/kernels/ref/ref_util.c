/*
 * ref_util.c - helpers for the scalar reference kernels.
 */
#include "kernels/ref/ref_util.h"

int64_t sm_bcast_offset(const sm_tensor *t, int out_ndim, const int64_t *idx)
{
    int64_t off = 0, stride = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int k = d + out_ndim - t->ndim;
        if (t->dims[d] != 1)
            off += idx[k] * stride;
        stride *= t->dims[d];
    }
    return off;
}

int sm_index_next(int ndim, const int64_t *dims, int64_t *idx)
{
    for (int d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

smelt_status sm_bad_output(const sm_kargs *a, const char *what)
{
    return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                  "%s: output shape does not match %s", a->op_name, what);
}
