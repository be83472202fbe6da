/*
 * reshape.c - the reference kernel of the ops that view the same row-major
 * bytes under another shape: Reshape, Flatten, Squeeze, Unsqueeze (plans
 * make them views; the interpreter copies).
 */
#include <string.h>

#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

/* Reshape, Flatten, Squeeze, Unsqueeze: the output is preallocated with
 * the new shape, so the row-major bytes are simply copied. */
smelt_status sm_ref_reshape(const sm_kargs *a)
{
    const sm_tensor *x = a->in[0];
    sm_tensor *y = a->out[0];
    if (x->dtype != y->dtype || x->numel != y->numel)
        return sm_bad_output(a, "the input's element count");
    if (x->nbytes)
        memcpy(y->data, x->data, x->nbytes);
    return SMELT_OK;
}
