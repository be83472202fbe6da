/*
 * shape_resize.c - shape functions and cost of the resampling ops Resize
 * and its older form Upsample. The output size comes from the values of
 * the scales or sizes input (kernels/ref/resize.h sizes both the inference
 * and the kernel); when they are not known only the rank is.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_check.h"
#include "kernels/ref/resize.h"

/* Whether input i is present and certainly empty by its type. */
static int known_empty(const sm_shape_ctx *s, int i)
{
    const sm_type *t = sm_shape_in(s, i);
    return t && sm_type_known(t) && sm_type_numel(t) == 0;
}

/* Resize(X, roi?, scales?, sizes?) (upsample 0) or Upsample(X, scales?)
 * {scales?}: X's dtype and rank, each dim floor(dim * scale) or the
 * given size. */
static smelt_status resize_shape(sm_shape_ctx *s, int upsample)
{
    const sm_type *x;
    SM_TRY(sm_movement_input(s, 0, &x));
    sm_resize r;
    SM_TRY(sm_resize_attrs(s->ctx, SMELT_ERR_INVALID_ARG, s->op->name,
                           &s->attrs, upsample, &r));
    int i_roi = upsample ? -1 : 1, i_sc = upsample ? 1 : 2, i_sz = 3;
    sm_resize_args args = {NULL, NULL, NULL, NULL, 0};
    const sm_type *t;
    if (i_roi > 0 && (t = sm_shape_in(s, i_roi))) {
        SM_TRY(sm_check_float_type(s, t, "roi"));
        args.roi = s->in[i_roi].data;
    }
    int unknown = 0;
    if ((t = sm_shape_in(s, i_sc))) {
        SM_TRY(sm_check_float_type(s, t, "scales"));
        SM_TRY(sm_check_rank(s, t, "scales", 1, 1));
        args.scales = s->in[i_sc].data;
        unknown |= !args.scales && !known_empty(s, i_sc);
    } else if (upsample) {
        args.n_scale_attr =
            sm_attrs_floats(&s->attrs, "scales", &args.scale_attr);
        args.n_scale_attr = args.n_scale_attr < 0 ? 0 : args.n_scale_attr;
    }
    if (!upsample && (t = sm_shape_in(s, i_sz))) {
        if (t->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != SMELT_DTYPE_I64)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "Resize: sizes must be i64, got %s",
                          smelt_dtype_name(t->dtype));
        SM_TRY(sm_check_rank(s, t, "sizes", 1, 1));
        args.sizes = s->in[i_sz].data;
        unknown |= !args.sizes && !known_empty(s, i_sz);
    }
    sm_movement_unknown(s->out, x->dtype, x->ndim);
    if (x->ndim < 0 || unknown)
        return SMELT_OK;
    int64_t in[SMELT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        in[d] = x->dims[d].size;
    SM_TRY(sm_resize_plan(s->ctx, SMELT_ERR_INVALID_ARG, s->op->name, x->ndim,
                          in, &args, &r));
    for (int d = 0; d < x->ndim; d++)
        s->out->dims[d] = r.out[d] < 0 && r.scale[d] == 1
                              ? x->dims[d]
                              : (sm_dim){r.out[d], NULL};
    return sm_movement_check_size(s, s->out);
}

smelt_status sm_shape_resize(sm_shape_ctx *s)
{
    return resize_shape(s, 0);
}

smelt_status sm_shape_upsample(sm_shape_ctx *s)
{
    return resize_shape(s, 1);
}

/* Resize: per output element, one weighted read per tap, taps per axis
 * (1 nearest, 2 linear, 4 cubic) multiplied over the resized axes. */
void sm_cost_resize(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *x = sm_shape_in(s, 0);
    const char *mode = sm_attrs_string(&s->attrs, "mode", "nearest");
    double taps = strcmp(mode, "cubic") == 0    ? 4
                  : strcmp(mode, "linear") == 0 ? 2
                                                : 1;
    double per = 1;
    for (int d = 0; x && d < x->ndim && d < s->out->ndim; d++)
        if (x->dims[d].size != s->out->dims[d].size)
            per *= taps;
    c->flops = 2 * per * sm_type_numel(s->out);
    c->bytes_read = x ? sm_type_bytes(x) : 0;
    c->bytes_write = sm_type_bytes(s->out);
}
