/*
 * fuzz_npy.c - libFuzzer harness for .npy images: any bytes go to
 * smelt_npy_parse. What parses must be self-consistent (the shape's
 * product is the element count, every element reads back) and usable:
 * the eager Identity op copies it into a tensor of the same dtype and
 * shape. Built only with clang and -DSMELT_FUZZ=ON (docs/FUZZING.md).
 */
#include <stddef.h>
#include <stdint.h>

#include "smelt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Traps unless t's dims multiply to its element count and every element
 * reads back (ASan sees any read past the data). */
static void check_tensor(const smelt_tensor_t *t)
{
    int nd = smelt_tensor_ndim(t);
    if (nd < 0 || nd > SMELT_MAX_DIMS)
        __builtin_trap();
    int64_t numel = 1;
    for (int a = 0; a < nd; a++) {
        /* the library refuses shapes whose nonzero dims overflow int64,
         * even empty ones, so no partial product may overflow */
        if (smelt_tensor_dim(t, a) < 0 ||
            __builtin_mul_overflow(numel, smelt_tensor_dim(t, a), &numel))
            __builtin_trap();
    }
    if (numel != smelt_tensor_numel(t))
        __builtin_trap();
    double sum = 0;
    for (int64_t i = 0; i < numel; i++)
        sum += smelt_tensor_get_f64(t, i);
    (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx)
        return 0;
    smelt_tensor_t *t = NULL;
    if (smelt_npy_parse(ctx, data, size, "fuzz.npy", &t) == SMELT_OK) {
        check_tensor(t);
        smelt_tensor_t *copy = NULL;
        if (smelt_op(ctx, "Identity", &t, 1, NULL, 0, &copy, 1) == SMELT_OK) {
            if (smelt_tensor_dtype(copy) != smelt_tensor_dtype(t) ||
                smelt_tensor_numel(copy) != smelt_tensor_numel(t))
                __builtin_trap();
            smelt_tensor_free(copy);
        } else if (!smelt_ctx_error(ctx)[0]) {
            __builtin_trap();
        }
        smelt_tensor_free(t);
    } else if (!smelt_ctx_error(ctx)[0]) {
        __builtin_trap(); /* a failure must always say why */
    }
    smelt_ctx_free(ctx);
    return 0;
}
