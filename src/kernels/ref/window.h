/*
 * window.h - sliding-window geometry shared by Conv, ConvTranspose and the
 * pooling ops: kernel, strides, dilations and pads resolved from the
 * attributes (auto_pad, ceil_mode, output_shape, output_padding) for one
 * input shape, and the output sizes that follow.
 *
 * The shape functions and the reference kernels both use it, so the shape
 * an output is allocated with and the loops that fill it cannot disagree.
 */
#ifndef SM_WINDOW_H
#define SM_WINDOW_H

#include <stdint.h>

#include "core/attr.h"
#include "core/status.h"

typedef enum sm_window_kind {
    SM_WINDOW_CONV, /* Conv: output = windows over the padded input */
    SM_WINDOW_POOL, /* MaxPool/AveragePool: as Conv, plus ceil_mode */
    SM_WINDOW_CONVT /* ConvTranspose: output_padding, output_shape */
} sm_window_kind;

/* Attribute values and sizes are capped so no geometry product overflows. */
#define SM_WINDOW_MAX ((int64_t)1 << 30)

/* Per spatial dim d < nsp; -1 marks a size not known (graph inference). */
typedef struct sm_window {
    int nsp;
    int same;                   /* auto_pad is SAME_UPPER or SAME_LOWER */
    int64_t in[SMELT_MAX_DIMS]; /* input spatial sizes */
    int64_t kernel[SMELT_MAX_DIMS];
    int64_t stride[SMELT_MAX_DIMS];
    int64_t dil[SMELT_MAX_DIMS];
    int64_t pad0[SMELT_MAX_DIMS]; /* padding before (may be < 0 for CONVT) */
    int64_t pad1[SMELT_MAX_DIMS]; /* padding after */
    int64_t out[SMELT_MAX_DIMS];  /* output spatial sizes */
} sm_window;

/*
 * Resolves the window of op `op` over nsp spatial dims with input sizes
 * in[] (-1: unknown) and, for Conv/ConvTranspose, the kernel sizes of W
 * (kernel[] entries -1 when unknown; NULL for pooling, whose kernel_shape
 * is required). Fails, naming op and the values, on bad attributes or an
 * output size below 1.
 */
smelt_status sm_window_init(smelt_ctx_t *ctx, const char *op,
                            const sm_attrs *at, sm_window_kind kind, int nsp,
                            const int64_t *in, const int64_t *kernel,
                            sm_window *w);

/* Tap k of the window at output position o (multi-indices over nsp dims):
 * the row-major offset of the input element it reads, SM_TAP_PAD when it
 * falls in the padding, SM_TAP_OUTSIDE when it lies beyond the padded
 * extent (windows that ceil_mode lets run past the end padding). */
#define SM_TAP_PAD (-1)
#define SM_TAP_OUTSIDE (-2)
int64_t sm_window_tap(const sm_window *w, const int64_t *o, const int64_t *k);
/* Product of v[0..n) (a window's element counts). */
int64_t sm_window_prod(int n, const int64_t *v);

#endif
