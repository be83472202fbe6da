/*
 * check_util.h - pieces of `smelt check`: comparing tensors with
 * assert_close tolerances, making seeded random inputs, and measuring the
 * library's memory through the allocator hook.
 */
#ifndef SMELT_CLI_CHECK_UTIL_H
#define SMELT_CLI_CHECK_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "smelt.h"

typedef struct cli_cmp {
    int ok;
    double max_abs, max_rel; /* over all elements */
    double rtol, atol;       /* the tolerances applied */
    char why[160];           /* when !ok */
} cli_cmp;

/* Default tolerances of a dtype (torch.testing.assert_close's). */
void cli_tolerance(smelt_dtype dt, double *rtol, double *atol);
/* Compares got with want: same dtype and shape, and every element within
 * atol + rtol * |want| (NaN matches NaN, infinities must be equal). A
 * negative rtol or atol takes the dtype's default. */
void cli_cmp_tensors(const smelt_tensor_t *want, const smelt_tensor_t *got,
                     double rtol, double atol, cli_cmp *r);
/* Fills t with seeded random values of its dtype (shared by `smelt
 * check` and `smelt bench`): floats k/256 in [-1, 1), integers in
 * [0, 4), bools 0/1; state advances. */
void cli_fill_random(smelt_tensor_t *t, uint64_t *state);
/* "f32[2,3]" */
void cli_tensor_type_str(const smelt_tensor_t *t, char *buf, size_t size);
/* "1.5 MiB" */
void cli_human_size(char *buf, size_t size, int64_t bytes);

/* A copy of float tensor t converted to float dtype dt (--cast); 0, or
 * 1 when either dtype is not a float or allocation failed. */
int cli_cast_float(smelt_ctx_t *ctx, const smelt_tensor_t *t, smelt_dtype dt,
                   smelt_tensor_t **out);

/* Routes the library's allocations through a counter (call before the
 * first allocation; stop after the last free). */
void cli_mem_track_start(void);
void cli_mem_track_stop(void);
/* Bytes in use now, which also becomes the new peak baseline. */
int64_t cli_mem_reset_peak(void);
/* The most bytes in use since the last reset. */
int64_t cli_mem_peak(void);

#endif
