/*
 * ref_util.h - helpers for the scalar reference kernels.
 */
#ifndef SM_REF_UTIL_H
#define SM_REF_UTIL_H

#include <stdint.h>

#include "core/dtype.h"
#include "core/tensor.h"
#include "kernels/kernel.h"

/* Offset into input `t` of the element of a broadcast output whose
 * row-major multi-index is idx (output rank out_ndim). */
int64_t sm_bcast_offset(const sm_tensor *t, int out_ndim, const int64_t *idx);
/* Advances a multi-index over dims in row-major order; 0 at the end. */
int sm_index_next(int ndim, const int64_t *dims, int64_t *idx);
/* Fails with SMELT_ERR_RUNTIME: "<op>: output shape does not match
 * <what>", for a kernel whose output disagrees with its inputs. */
smelt_status sm_bad_output(const sm_kargs *a, const char *what);

#endif
