/*
 * data.c - the samples of a training run: the split into training and
 * validation sets, the seeded shuffle of each epoch, and gathering a
 * batch's rows into the step's input buffers.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "train/train.h"

uint64_t train_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void train_shuffle(int64_t *idx, int64_t n, uint64_t *rng)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(train_rng_next(rng) % (uint64_t)(i + 1));
        int64_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int train_data_split(train_data *d, double frac, uint64_t seed)
{
    int64_t *all = sm_malloc((size_t)(d->n > 0 ? d->n : 1) * sizeof *all);
    if (!all)
        return 1;
    for (int64_t i = 0; i < d->n; i++)
        all[i] = i;
    /* Its own stream, so the split does not move the epochs' orders. */
    uint64_t rng = seed ^ 0x5eed5eed5eed5eedULL;
    train_shuffle(all, d->n, &rng);
    d->n_val = (int64_t)(frac * (double)d->n + 0.5);
    d->n_train = d->n - d->n_val;
    d->val = sm_malloc((size_t)(d->n_val > 0 ? d->n_val : 1) * sizeof *d->val);
    d->train =
        sm_malloc((size_t)(d->n_train > 0 ? d->n_train : 1) * sizeof *d->train);
    if (!d->val || !d->train) {
        sm_free(all);
        return 1;
    }
    memcpy(d->val, all, (size_t)d->n_val * sizeof *all);
    memcpy(d->train, all + d->n_val, (size_t)d->n_train * sizeof *all);
    qsort(d->val, (size_t)d->n_val, sizeof *all, cmp_i64);
    qsort(d->train, (size_t)d->n_train, sizeof *all, cmp_i64);
    sm_free(all);
    return 0;
}

size_t train_dtype_size(smelt_dtype dt)
{
    switch (dt) {
    case SMELT_DTYPE_F64:
    case SMELT_DTYPE_I64:
    case SMELT_DTYPE_U64: return 8;
    case SMELT_DTYPE_F32:
    case SMELT_DTYPE_I32:
    case SMELT_DTYPE_U32: return 4;
    case SMELT_DTYPE_F16:
    case SMELT_DTYPE_BF16:
    case SMELT_DTYPE_I16:
    case SMELT_DTYPE_U16: return 2;
    case SMELT_DTYPE_I8:
    case SMELT_DTYPE_U8:
    case SMELT_DTYPE_BOOL: return 1;
    default: return 0;
    }
}

void train_gather(const smelt_tensor_t *src, const int64_t *idx, int64_t count,
                  smelt_tensor_t *dst)
{
    int64_t rows = smelt_tensor_dim(src, 0);
    size_t row = rows > 0 ? (size_t)smelt_tensor_numel(src) / (size_t)rows *
                                train_dtype_size(smelt_tensor_dtype(src))
                          : 0;
    const char *s = smelt_tensor_data((smelt_tensor_t *)src); /* read */
    char *o = smelt_tensor_data(dst);
    for (int64_t i = 0; i < count; i++)
        memcpy(o + (size_t)i * row, s + (size_t)idx[i] * row, row);
}

void train_data_free(train_data *d)
{
    sm_free(d->x);
    smelt_tensor_free(d->y_owned);
    sm_free(d->train);
    sm_free(d->val);
    memset(d, 0, sizeof *d);
}
