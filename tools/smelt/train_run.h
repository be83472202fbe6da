/*
 * train_run.h - the state of one `smelt train` run, shared by its set-up
 * (train.c) and its loop (train_loop.c).
 */
#ifndef SMELT_CLI_TRAIN_RUN_H
#define SMELT_CLI_TRAIN_RUN_H

#include "args.h"
#include "prof.h"
#include "train.h"

typedef struct trainer {
    smelt_ctx_t *ctx;
    cli_args *a;
    const char *loss; /* mse, cross_entropy, bce_with_logits */
    int optim_kind;   /* smelt_optimizer */
    double lr;        /* the schedule's peak */
    int64_t warmup;   /* linear warm-up steps */
    int cosine;       /* cosine decay after warm-up */
    int64_t epochs, batch, log_every, ckpt_every;
    uint64_t seed;
    const char *ckpt_dir;
    smelt_graph_t *model;  /* as loaded; its weights replaced to save */
    smelt_graph_t *step_g; /* the training step */
    smelt_graph_t *eval_g; /* model + loss, weights as inputs */
    smelt_plan_t *plan;
    smelt_session_t *sess;
    train_data d;
    const char **names; /* the trained initializers */
    int np, ns;         /* parameters, states per parameter */
    int n_in, n_out;
    smelt_tensor_t **in;  /* the step's inputs: batch, weights, ... */
    smelt_tensor_t **out; /* its outputs; new weights swap into in */
    int n_ck;             /* checkpointed tensors: weights and states */
    char **ck_names;
    int *ck_in, *ck_out; /* their step input and output */
    uint64_t fingerprint;
    /* --json and --profile: each step's time this run (ms), and with
     * --profile the plan steps' times of every step but the first two,
     * each a run of the CLI's profiler (prof.h) */
    int json, profile;
    double setup_ms; /* loading, building the graphs, compiling */
    double *step_ms;
    int64_t n_step_ms;
    cli_prof prof;
    int prof_runs;
} trainer;

/* The epochs: returns 0, or 1 after printing the error (a NaN loss, a
 * failed step or checkpoint). */
int train_run(trainer *t);
/* --json's line and --profile's table, after the run. */
void train_report_timing(const trainer *t);

#endif
