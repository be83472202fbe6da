/*
 * resize.h - the sizes and coordinate maps of Resize and Upsample, shared
 * by their shape function (src/ir/shape_resize.c) and reference kernel
 * (resize.c), so that the size inferred and the elements read agree; and
 * GridSample's attributes (shape_gridsample.c, gridsample.c).
 */
#ifndef SM_REF_RESIZE_H
#define SM_REF_RESIZE_H

#include <stdint.h>

#include "core/attr.h"
#include "core/status.h"
#include "core/tensor.h"

typedef enum sm_resize_mode {
    SM_RESIZE_NEAREST,
    SM_RESIZE_LINEAR,
    SM_RESIZE_CUBIC
} sm_resize_mode;

typedef enum sm_resize_coord {
    SM_COORD_HALF_PIXEL,
    SM_COORD_ASYMMETRIC,
    SM_COORD_ALIGN_CORNERS,
    SM_COORD_PYTORCH_HALF_PIXEL,
    SM_COORD_TF_CROP_AND_RESIZE,
    SM_COORD_TF_HALF_PIXEL_FOR_NN
} sm_resize_coord;

typedef enum sm_resize_round {
    SM_ROUND_PREFER_FLOOR,
    SM_ROUND_PREFER_CEIL,
    SM_ROUND_FLOOR,
    SM_ROUND_CEIL
} sm_resize_round;

/* One resize: the attributes, then per axis the input and output sizes
 * (-1 when unknown), the scale (output over input) and the region of
 * interest of tf_crop_and_resize (0 and 1 otherwise). */
typedef struct sm_resize {
    sm_resize_mode mode;
    sm_resize_coord coord;
    sm_resize_round round;
    double cubic_a, extrapolation;
    int exclude_outside;
    int ndim;
    int64_t in[SMELT_MAX_DIMS], out[SMELT_MAX_DIMS];
    double scale[SMELT_MAX_DIMS];
    double roi_start[SMELT_MAX_DIMS], roi_len[SMELT_MAX_DIMS];
} sm_resize;

/* The operands that size a resize; NULL when absent. Upsample gives its
 * scales as input 1 (opset 9) or as the `scales` attribute (opset 7). */
typedef struct sm_resize_args {
    const sm_tensor *roi, *scales, *sizes;
    const double *scale_attr;
    int n_scale_attr;
} sm_resize_args;

/* Reads the attributes of Resize, or of Upsample (upsample = 1: modes
 * nearest and linear, asymmetric coordinates, nearest rounds down).
 * Failures carry `code` and name op. */
smelt_status sm_resize_attrs(smelt_ctx_t *ctx, smelt_status code,
                             const char *op, const sm_attrs *a, int upsample,
                             sm_resize *r);
/* Sizes r for an input of rank ndim and dims in (-1: unknown) from the
 * scales (out = floor(in * scale)) or the sizes (scale = out / in). */
smelt_status sm_resize_plan(smelt_ctx_t *ctx, smelt_status code, const char *op,
                            int ndim, const int64_t *in,
                            const sm_resize_args *args, sm_resize *r);

/* GridSample's attributes: mode 0 bilinear, 1 nearest, 2 bicubic (opset
 * 20's linear and cubic too), padding 0 zeros, 1 border, 2 reflection;
 * -1 for a name it does not know. */
void sm_gridsample_attrs(const sm_attrs *a, int *mode, int *pad, int *align);

#endif
