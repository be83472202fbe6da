/*
 * train.h - the parts of `smelt train` (docs/CLI.md, docs/AUTOGRAD.md
 * "Training"): the data set and its batches (train_data.c), the
 * checkpoint file (train_ckpt.c), and the verb that drives the compiled
 * training step (train.c).
 */
#ifndef SMELT_CLI_TRAIN_H
#define SMELT_CLI_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "smelt.h"

/* ---- data (train_data.c) ---------------------------------------------- */

/* The samples: one tensor per model input and the target, each with the
 * samples along dimension 0, and the split into training and validation
 * indices. */
typedef struct train_data {
    int n_x;
    smelt_tensor_t **x;
    smelt_tensor_t *y;
    int64_t n;
    int64_t *train, n_train;
    int64_t *val, n_val;
} train_data;

/* The RNG of the run (splitmix64): its whole state is one word, which
 * the checkpoint stores. */
uint64_t train_rng_next(uint64_t *state);
/* A Fisher-Yates shuffle of idx[0..n) drawing from *rng. */
void train_shuffle(int64_t *idx, int64_t n, uint64_t *rng);
/* Splits the samples: a shuffle of 0..n-1 drawn from seed, its first
 * round(frac * n) the validation set (sorted), the rest the training set
 * (sorted: each epoch shuffles them again). 0, or 1 when out of memory. */
int train_data_split(train_data *d, double frac, uint64_t seed);
/* Bytes of one element of dt (0 for unknown). */
size_t train_dtype_size(smelt_dtype dt);
/* Copies samples idx[0..count) of src (rows along dim 0) into the first
 * count rows of dst. */
void train_gather(const smelt_tensor_t *src, const int64_t *idx, int64_t count,
                  smelt_tensor_t *dst);
void train_data_free(train_data *d);

/* ---- checkpoints (train_ckpt.c) --------------------------------------- */

/* Where a run stands: the next step to run is step `pos` of epoch
 * `epoch` (both from 0), after `step` steps in all; rng_epoch is the RNG
 * state before epoch `epoch` drew its order, so a resumed run draws the
 * same order; fingerprint identifies the run's set-up (model, data,
 * loss, optimizer, batch size, seed, split). */
typedef struct train_pos {
    uint64_t epoch, pos, step;
    uint64_t rng_epoch;
    uint64_t fingerprint;
} train_pos;

/* 64-bit FNV-1a of len bytes, continuing from h (start with
 * TRAIN_FNV_INIT). */
#define TRAIN_FNV_INIT 0xcbf29ce484222325ULL
uint64_t train_fnv(uint64_t h, const void *p, size_t len);

/* Writes DIR/checkpoint.smck atomically: a temporary file in DIR,
 * written, fsync'ed and renamed over the old one, then DIR fsync'ed.
 * Tensors t[0..n) under names[i]. 0, or 1 with the reason in err (the old
 * checkpoint is then untouched). */
int train_ckpt_write(const char *dir, const train_pos *pos, int n,
                     const char *const *names, smelt_tensor_t *const *t,
                     char *err, size_t err_len);
/* Reads DIR/checkpoint.smck into pos and into t[0..n) (each must be
 * there under names[i] with t[i]'s dtype and shape). Returns 0, -1 when
 * there is no checkpoint file, 1 with the reason in err when it is
 * unreadable, corrupt (checksum) or of another run (fingerprint). */
int train_ckpt_read(const char *dir, train_pos *pos, int n,
                    const char *const *names, smelt_tensor_t *const *t,
                    char *err, size_t err_len);

#endif
