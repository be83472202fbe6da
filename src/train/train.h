/*
 * train.h - the training loop behind smelt_trainer_* (docs/TRAINING.md):
 * the data set and its batches (data.c), the checkpoint file (ckpt.c),
 * the learning-rate schedule and accuracy (schedule.c), the set-up of
 * the step (trainer.c) and the epochs that drive it (loop.c).
 */
#ifndef SM_TRAIN_H
#define SM_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "smelt.h"

/* ---- data (data.c) ----------------------------------------------------- */

/* The samples: one tensor per model input and the target, each with the
 * samples along dimension 0 (the caller's, read only, except y when it
 * had to be widened: then y_owned), and the split into training and
 * validation indices. */
typedef struct train_data {
    int n_x;
    const smelt_tensor_t **x;
    const smelt_tensor_t *y;
    smelt_tensor_t *y_owned;
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

/* ---- checkpoints (ckpt.c) ---------------------------------------------- */

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

/* ---- the trainer (trainer.c, loop.c) ----------------------------------- */

/* The history of a trainer's steps and epochs (growing arrays). */
typedef struct train_hist {
    double *loss, *acc;
    int64_t n, cap;
    double *e_loss, *e_acc, *v_loss, *v_acc, *sps;
    int64_t ne, ecap;
} train_hist;

struct smelt_trainer {
    smelt_train_options o; /* its strings point into the copies below */
    smelt_optim_options optim;
    char *loss, *freeze, *ckpt_dir;
    smelt_graph_t *model;  /* a clone of the caller's */
    smelt_graph_t *step_g; /* the training step */
    smelt_graph_t *eval_g; /* model + loss, weights as inputs */
    smelt_plan_t *plan;
    smelt_session_t *sess;
    train_data d;
    char **names; /* the trained initializers */
    int np, ns;   /* parameters, states per parameter */
    int64_t n_weights;
    int n_in, n_out;
    smelt_tensor_t **in;  /* the step's inputs: batch, weights, ... */
    smelt_tensor_t **out; /* its outputs; new weights swap into in */
    int n_ck;             /* checkpointed tensors: weights and states */
    char **ck_names;
    int *ck_in, *ck_out; /* their step input and output */
    uint64_t fingerprint;
    int64_t spe, total; /* steps per epoch, in all */
    int64_t *order;     /* this epoch's order of the training samples */
    train_pos p;        /* where the next step is */
    int64_t last_ckpt;  /* step of the last checkpoint (-1: none) */
    int resumed, cancelled;
    int64_t resumed_step, resumed_epoch, resumed_batch;
    train_hist h;
};

/* Loads the checkpoint into the weights and states when resuming. */
smelt_status train_resume(smelt_ctx_t *ctx, smelt_trainer_t *t);

/* ---- schedule and accuracy (schedule.c) -------------------------------- */

/* The learning rate of step s (from 0) of total: linear warm-up to the
 * peak over the first `warmup` steps, then constant or a cosine decay
 * reaching 0 at the end of the run. */
double train_lr_at(const smelt_train_options *o, int64_t s, int64_t total);
/* Correct predictions among the first rows of pred against targets y
 * for `loss`; *n gets how many were judged (0 for mse). */
int64_t train_correct(const char *loss, const smelt_tensor_t *pred,
                      const smelt_tensor_t *y, int64_t rows, int64_t *n);

#endif
