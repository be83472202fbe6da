/*
 * loop.c - smelt_trainer_run: the epochs of a training run (each
 * epoch's seeded order, the batches gathered into the step's buffers,
 * the learning-rate schedule fed as an input, the swap of new weights
 * and states into the inputs), validation, checkpoints, the history, the
 * callback, cancellation at a step boundary and the stop on a
 * non-finite loss; and the resume from a checkpoint.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/status.h"
#include "train/train.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Appends v to the growing array *a of *n (capacity *cap); 0, or 1 when
 * out of memory. */
static int push(double **a, int64_t n, int64_t *cap, double v)
{
    if (n >= *cap) {
        int64_t c = *cap ? *cap * 2 : 64;
        double *p = sm_realloc(*a, (size_t)c * sizeof *p);
        if (!p)
            return 1;
        *a = p;
        *cap = c;
    }
    (*a)[n] = v;
    return 0;
}

/* Records a step in the history. */
static smelt_status hist_step(smelt_ctx_t *ctx, train_hist *h, double loss,
                              int64_t ok, int64_t judged)
{
    int64_t cap = h->cap;
    if (push(&h->loss, h->n, &cap, loss))
        return sm_err_nomem(ctx);
    cap = h->cap;
    if (push(&h->acc, h->n, &cap, judged ? (double)ok / (double)judged : NAN))
        return sm_err_nomem(ctx);
    h->cap = cap;
    h->n++;
    return SMELT_OK;
}

/* Records an epoch in the history. */
static smelt_status hist_epoch(smelt_ctx_t *ctx, train_hist *h,
                               const double v[5])
{
    double **a[5] = {&h->e_loss, &h->e_acc, &h->v_loss, &h->v_acc, &h->sps};
    int64_t cap = h->ecap;
    for (int i = 0; i < 5; i++) {
        cap = h->ecap;
        if (push(a[i], h->ne, &cap, v[i]))
            return sm_err_nomem(ctx);
    }
    h->ecap = cap;
    h->ne++;
    return SMELT_OK;
}

/* Evaluates the validation samples in batches of at most the training
 * batch, with the current weights: the mean loss and the counts of the
 * accuracy. */
static smelt_status validate(smelt_ctx_t *ctx, smelt_trainer_t *t,
                             smelt_train_progress *pg)
{
    train_data *d = &t->d;
    int n_in = smelt_graph_num_inputs(t->eval_g);
    int n_out = smelt_graph_num_outputs(t->eval_g);
    smelt_tensor_t **in = sm_calloc((size_t)n_in, sizeof *in);
    smelt_tensor_t **out = sm_calloc((size_t)n_out, sizeof *out);
    smelt_plan_t *plan = NULL;
    smelt_status st = !in || !out ? sm_err_nomem(ctx) : SMELT_OK;
    double sum = 0;
    int64_t ok = 0, judged = 0, plan_rows = -1, batch = t->o.batch_size;
    for (int64_t at = 0; st == SMELT_OK && at < d->n_val;) {
        int64_t rows = d->n_val - at < batch ? d->n_val - at : batch;
        if (rows != plan_rows) {
            /* one plan for the full batches, one for the remainder */
            for (int i = 0; i <= d->n_x; i++) {
                smelt_tensor_free(in[i]);
                in[i] = NULL;
            }
            smelt_plan_free(plan);
            plan = NULL;
            for (int i = 0; st == SMELT_OK && i <= d->n_x; i++) {
                const smelt_tensor_t *src = i < d->n_x ? d->x[i] : d->y;
                int nd = smelt_tensor_ndim(src);
                int64_t dims[SMELT_MAX_DIMS];
                for (int a = 0; a < nd; a++)
                    dims[a] = a ? smelt_tensor_dim(src, a) : rows;
                st = smelt_tensor_init(ctx, smelt_tensor_dtype(src), nd, dims,
                                       &in[i]);
            }
            for (int i = 0; i < t->np; i++)
                in[d->n_x + 1 + i] =
                    t->in[smelt_graph_optim_param_input(t->step_g, i)];
            smelt_plan_options po;
            smelt_plan_options_default(&po);
            po.threads = t->o.threads > 0 ? t->o.threads : 1;
            po.inputs = in;
            po.n_inputs = n_in;
            if (st == SMELT_OK)
                st = smelt_plan_compile(ctx, t->eval_g, &po, &plan);
            if (st != SMELT_OK)
                break;
            plan_rows = rows;
        }
        for (int i = 0; i <= d->n_x; i++)
            train_gather(i < d->n_x ? d->x[i] : d->y, d->val + at, rows, in[i]);
        st = smelt_plan_run(ctx, plan, in, n_in, out, n_out);
        if (st != SMELT_OK)
            break;
        sum += smelt_tensor_get_f64(out[0], 0) * (double)rows;
        int64_t n = 0;
        ok += train_correct(t->loss, out[1], in[d->n_x], rows, &n);
        judged += n;
        for (int i = 0; i < n_out; i++) {
            smelt_tensor_free(out[i]);
            out[i] = NULL;
        }
        at += rows;
    }
    if (st != SMELT_OK)
        sm_err_prefix(ctx, "validation: ");
    for (int i = 0; in && i <= d->n_x; i++)
        smelt_tensor_free(in[i]);
    smelt_plan_free(plan);
    sm_free(in);
    sm_free(out);
    pg->n_val = d->n_val;
    pg->val_loss = d->n_val ? sum / (double)d->n_val : 0;
    pg->val_correct = ok;
    pg->val_judged = judged;
    return st;
}

/* Writes a checkpoint of position c (when a folder was given). */
static smelt_status checkpoint(smelt_ctx_t *ctx, smelt_trainer_t *t,
                               const train_pos *c)
{
    if (!t->ckpt_dir)
        return SMELT_OK;
    smelt_tensor_t **ts = sm_calloc((size_t)t->n_ck, sizeof *ts);
    if (!ts)
        return sm_err_nomem(ctx);
    for (int i = 0; i < t->n_ck; i++)
        ts[i] = t->in[t->ck_in[i]];
    char err[512];
    int rc =
        train_ckpt_write(t->ckpt_dir, c, t->n_ck,
                         (const char *const *)t->ck_names, ts, err, sizeof err);
    sm_free(ts);
    if (rc)
        return sm_err(ctx, SMELT_ERR_IO, "checkpoint: %s", err);
    t->last_ckpt = (int64_t)c->step;
    return SMELT_OK;
}

smelt_status train_resume(smelt_ctx_t *ctx, smelt_trainer_t *t)
{
    smelt_tensor_t **ts = sm_calloc((size_t)t->n_ck, sizeof *ts);
    if (!ts)
        return sm_err_nomem(ctx);
    for (int i = 0; i < t->n_ck; i++)
        ts[i] = t->in[t->ck_in[i]];
    char err[512];
    train_pos p = t->p;
    int rc =
        train_ckpt_read(t->ckpt_dir, &p, t->n_ck,
                        (const char *const *)t->ck_names, ts, err, sizeof err);
    sm_free(ts);
    if (rc < 0) {
        t->resumed = -1;
        return SMELT_OK;
    }
    if (rc)
        return sm_err(ctx, SMELT_ERR_IO, "resume: %s", err);
    t->p = p;
    t->resumed = 1;
    t->resumed_step = (int64_t)p.step;
    t->resumed_epoch = (int64_t)p.epoch;
    t->resumed_batch = (int64_t)p.pos;
    t->last_ckpt = p.step ? (int64_t)p.step : -1;
    return SMELT_OK;
}

/* Swaps each new weight and state into the step's inputs: the old
 * buffer becomes the next step's output buffer. */
static void swap_state(smelt_trainer_t *t)
{
    for (int i = 0; i < t->n_ck; i++) {
        smelt_tensor_t *x = t->in[t->ck_in[i]];
        t->in[t->ck_in[i]] = t->out[t->ck_out[i]];
        t->out[t->ck_out[i]] = x;
    }
}

/* The error of a non-finite loss: the step, and which checkpoint is
 * kept. */
static smelt_status non_finite(smelt_ctx_t *ctx, const smelt_trainer_t *t,
                               double loss, int64_t step, int64_t epoch,
                               int64_t pos)
{
    char kept[512];
    if (!t->ckpt_dir)
        snprintf(kept, sizeof kept, "no checkpoint was asked for");
    else if (t->last_ckpt < 0)
        snprintf(kept, sizeof kept, "no checkpoint was written in this run");
    else
        snprintf(kept, sizeof kept,
                 "the last checkpoint (step %lld) in %s is kept",
                 (long long)t->last_ckpt, t->ckpt_dir);
    return sm_err(ctx, SMELT_ERR_RUNTIME,
                  "the loss is %s at step %lld (epoch %lld, batch %lld); "
                  "stopped, %s",
                  isnan(loss) ? "NaN" : "infinite", (long long)step,
                  (long long)epoch + 1, (long long)pos + 1, kept);
}

/* Whether the caller asked to stop: the callback's answer or the ctx's
 * cancel hook. */
static int stop_asked(smelt_ctx_t *ctx, const smelt_trainer_t *t,
                      const smelt_train_progress *pg)
{
    if (t->o.callback && t->o.callback(t->o.user, pg))
        return 1;
    return ctx && ctx->cancel && ctx->cancel(ctx->cancel_user);
}

static smelt_status cancelled(smelt_ctx_t *ctx, smelt_trainer_t *t)
{
    t->cancelled = 1;
    return sm_err(ctx, SMELT_ERR_LIMIT,
                  "training cancelled after step %lld (epoch %lld, batch "
                  "%lld)",
                  (long long)t->p.step, (long long)t->p.epoch + 1,
                  (long long)t->p.pos);
}

/* Runs one step: batch b of the epoch's order; fills pg's step fields. */
static smelt_status one_step(smelt_ctx_t *ctx, smelt_trainer_t *t, int64_t b,
                             smelt_train_progress *pg)
{
    train_data *d = &t->d;
    smelt_graph_t *s = t->step_g;
    int64_t batch = t->o.batch_size, step = (int64_t)t->p.step;
    for (int i = 0; i <= d->n_x; i++)
        train_gather(i < d->n_x ? d->x[i] : d->y, t->order + b * batch, batch,
                     t->in[i]);
    double lr = train_lr_at(&t->o, step, t->total);
    *(double *)smelt_tensor_data(t->in[smelt_graph_optim_lr_input(s)]) = lr;
    *(double *)smelt_tensor_data(t->in[smelt_graph_optim_step_input(s)]) =
        (double)(step + 1);
    double t0 = now_s();
    smelt_status st =
        smelt_session_run_into(ctx, t->sess, t->in, t->n_in, t->out, t->n_out);
    if (st != SMELT_OK) {
        if (st == SMELT_ERR_LIMIT && strstr(smelt_ctx_error(ctx), "cancelled"))
            return cancelled(ctx, t); /* the weights are the last step's */
        return sm_err_prefix(ctx, "step %lld: ", (long long)step + 1);
    }
    pg->seconds = now_s() - t0;
    double loss = smelt_tensor_get_f64(t->out[smelt_graph_loss_output(s)], 0);
    if (!isfinite(loss))
        return non_finite(ctx, t, loss, step + 1, (int64_t)t->p.epoch, b);
    pg->loss = loss;
    pg->correct =
        train_correct(t->loss, t->out[1], t->in[d->n_x], batch, &pg->judged);
    pg->lr = lr;
    SM_TRY(hist_step(ctx, &t->h, loss, pg->correct, pg->judged));
    swap_state(t);
    t->p.step++;
    t->p.pos = (uint64_t)b + 1;
    return SMELT_OK;
}

/* The running sums of the epoch's steps run in this call. */
typedef struct epoch_sums {
    double loss, seconds, t0;
    int64_t steps, ok, judged;
} epoch_sums;

/* Runs what is left of epoch p.epoch: its steps, then validation, the
 * epoch's callback and its checkpoint. */
static smelt_status one_epoch(smelt_ctx_t *ctx, smelt_trainer_t *t,
                              epoch_sums *es)
{
    train_data *d = &t->d;
    int64_t e = (int64_t)t->p.epoch;
    uint64_t rng = t->p.rng_epoch; /* this epoch's start */
    memcpy(t->order, d->train, (size_t)d->n_train * sizeof *t->order);
    if (t->o.shuffle)
        train_shuffle(t->order, d->n_train, &rng);
    smelt_train_progress pg = SMELT_STRUCT_INIT(smelt_train_progress);
    pg.epoch = e;
    pg.epochs = t->o.epochs;
    pg.steps_per_epoch = t->spe;
    pg.total_steps = t->total;
    for (int64_t b = (int64_t)t->p.pos; b < t->spe; b++) {
        SM_TRY(one_step(ctx, t, b, &pg));
        es->loss += pg.loss;
        es->ok += pg.correct;
        es->judged += pg.judged;
        es->steps++;
        int64_t step = (int64_t)t->p.step;
        if (t->o.checkpoint_every && step % t->o.checkpoint_every == 0 &&
            b + 1 < t->spe)
            SM_TRY(checkpoint(ctx, t, &t->p));
        pg.event = SMELT_TRAIN_STEP;
        pg.batch = b + 1;
        pg.step = step;
        pg.samples = t->o.batch_size;
        pg.steps = 1;
        pg.checkpoint_step = t->last_ckpt;
        if (stop_asked(ctx, t, &pg))
            return cancelled(ctx, t);
    }
    double secs = now_s() - es->t0;
    smelt_train_progress ep = pg;
    ep.event = SMELT_TRAIN_EPOCH;
    ep.batch = t->spe;
    ep.step = (int64_t)t->p.step;
    ep.steps = es->steps;
    ep.samples = es->steps * t->o.batch_size;
    ep.loss = es->steps ? es->loss / (double)es->steps : 0.0;
    ep.correct = es->ok;
    ep.judged = es->judged;
    ep.seconds = secs;
    ep.lr = 0;
    if (d->n_val)
        SM_TRY(validate(ctx, t, &ep));
    double v[5] = {
        ep.loss, ep.judged ? (double)ep.correct / (double)ep.judged : NAN,
        d->n_val ? ep.val_loss : NAN,
        ep.val_judged ? (double)ep.val_correct / (double)ep.val_judged : NAN,
        secs > 0 ? (double)ep.samples / secs : 0.0};
    SM_TRY(hist_epoch(ctx, &t->h, v));
    t->p.epoch++;
    t->p.pos = 0;
    t->p.rng_epoch = rng;
    ep.checkpoint_step = t->last_ckpt;
    int stop = stop_asked(ctx, t, &ep);
    SM_TRY(checkpoint(ctx, t, &t->p));
    *es = (epoch_sums){.t0 = now_s()};
    return stop ? cancelled(ctx, t) : SMELT_OK;
}

smelt_status smelt_trainer_run(smelt_ctx_t *ctx, smelt_trainer_t *t)
{
    if (!t)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trainer_run: a NULL trainer");
    t->cancelled = 0;
    epoch_sums es = {.t0 = now_s()};
    while ((int64_t)t->p.epoch < t->o.epochs)
        SM_TRY(one_epoch(ctx, t, &es));
    return SMELT_OK;
}
