/*
 * train_loop.c - the epochs of `smelt train`: each epoch's seeded order,
 * the batches gathered into the step's buffers, the learning-rate
 * schedule fed as an input, the swap of new weights and states into the
 * inputs, progress lines, validation, checkpoints and the stop on a
 * non-finite loss.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "train_run.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The learning rate of step s (from 0) of total: linear warm-up to the
 * peak over the first `warmup` steps, then constant or a cosine decay
 * reaching 0 at the end of the run. */
static double schedule(const trainer *t, int64_t s, int64_t total)
{
    if (s < t->warmup)
        return t->lr * (double)(s + 1) / (double)t->warmup;
    if (!t->cosine || total <= t->warmup)
        return t->lr;
    double prog = (double)(s - t->warmup) / (double)(total - t->warmup);
    return t->lr * 0.5 * (1 + cos(3.14159265358979323846 * prog));
}

/* Correct predictions among the rows of pred against targets y (count
 * of rows for cross_entropy: argmax; of elements for bce_with_logits:
 * sign). *n gets how many were judged; 0 for mse. */
static int64_t correct(const trainer *t, smelt_tensor_t *pred,
                       smelt_tensor_t *y, int64_t rows, int64_t *n)
{
    *n = 0;
    int64_t ok = 0;
    if (!strcmp(t->loss, "cross_entropy")) {
        int64_t c = smelt_tensor_dim(pred, 1);
        const int64_t *cls = smelt_tensor_data(y);
        for (int64_t r = 0; r < rows; r++) {
            int64_t best = 0;
            for (int64_t k = 1; k < c; k++)
                if (smelt_tensor_get_f64(pred, r * c + k) >
                    smelt_tensor_get_f64(pred, r * c + best))
                    best = k;
            ok += best == cls[r];
        }
        *n = rows;
    } else if (!strcmp(t->loss, "bce_with_logits")) {
        int64_t per = smelt_tensor_numel(pred) / smelt_tensor_dim(pred, 0);
        for (int64_t e = 0; e < rows * per; e++)
            ok += (smelt_tensor_get_f64(pred, e) > 0) ==
                  (smelt_tensor_get_f64(y, e) > 0.5);
        *n = rows * per;
    }
    return ok;
}

/* Evaluates the validation samples in batches of at most the training
 * batch, with the current weights: the mean loss and the accuracy. */
static int validate(trainer *t, double *loss, double *acc)
{
    train_data *d = &t->d;
    int n_in = smelt_graph_num_inputs(t->eval_g);
    int n_out = smelt_graph_num_outputs(t->eval_g);
    smelt_tensor_t **in = calloc((size_t)n_in, sizeof *in);
    smelt_tensor_t **out = calloc((size_t)n_out, sizeof *out);
    smelt_plan_t *plan = NULL;
    int rc = !in || !out;
    double sum = 0;
    int64_t ok = 0, judged = 0, plan_rows = -1;
    for (int64_t at = 0; rc == 0 && at < d->n_val;) {
        int64_t rows = d->n_val - at < t->batch ? d->n_val - at : t->batch;
        if (rows != plan_rows) {
            /* one plan for the full batches, one for the remainder */
            for (int i = 0; i <= d->n_x; i++)
                smelt_tensor_free(in[i]);
            smelt_plan_free(plan);
            plan = NULL;
            for (int i = 0; i <= d->n_x; i++) {
                smelt_tensor_t *src = i < d->n_x ? d->x[i] : d->y;
                int nd = smelt_tensor_ndim(src);
                int64_t dims[SMELT_MAX_DIMS];
                for (int a = 0; a < nd; a++)
                    dims[a] = a ? smelt_tensor_dim(src, a) : rows;
                in[i] = NULL;
                if (smelt_tensor_init(t->ctx, smelt_tensor_dtype(src), nd, dims,
                                      &in[i]) != SMELT_OK)
                    rc = 1;
            }
            for (int i = 0; i < t->np; i++)
                in[d->n_x + 1 + i] =
                    t->in[smelt_graph_optim_param_input(t->step_g, i)];
            smelt_plan_options po;
            smelt_plan_options_default(&po);
            po.threads = (int32_t)cli_num(t->a, CLI_OPT_threads, 1);
            po.inputs = in;
            po.n_inputs = n_in;
            if (rc ||
                smelt_plan_compile(t->ctx, t->eval_g, &po, &plan) != SMELT_OK) {
                rc = 1;
                break;
            }
            plan_rows = rows;
        }
        for (int i = 0; i <= d->n_x; i++)
            train_gather(i < d->n_x ? d->x[i] : d->y, d->val + at, rows, in[i]);
        if (smelt_plan_run(t->ctx, plan, in, n_in, out, n_out) != SMELT_OK) {
            rc = 1;
            break;
        }
        sum += smelt_tensor_get_f64(out[0], 0) * (double)rows;
        int64_t n = 0;
        ok += correct(t, out[1], in[d->n_x], rows, &n);
        judged += n;
        for (int i = 0; i < n_out; i++) {
            smelt_tensor_free(out[i]);
            out[i] = NULL;
        }
        at += rows;
    }
    if (rc)
        fprintf(stderr, "smelt train: validation: %s\n",
                smelt_ctx_error(t->ctx));
    for (int i = 0; in && i <= d->n_x; i++)
        smelt_tensor_free(in[i]);
    smelt_plan_free(plan);
    free(in);
    free(out);
    *loss = d->n_val ? sum / (double)d->n_val : 0;
    *acc = judged ? (double)ok / (double)judged : -1;
    return rc;
}

/* Writes a checkpoint; 0, or 1 after printing why. */
static int checkpoint(trainer *t, const train_pos *p)
{
    if (!t->ckpt_dir)
        return 0;
    smelt_tensor_t **ts = calloc((size_t)t->n_ck, sizeof *ts);
    if (!ts)
        return 1;
    for (int i = 0; i < t->n_ck; i++)
        ts[i] = t->in[t->ck_in[i]];
    char err[512];
    int rc =
        train_ckpt_write(t->ckpt_dir, p, t->n_ck,
                         (const char *const *)t->ck_names, ts, err, sizeof err);
    free(ts);
    if (rc)
        fprintf(stderr, "smelt train: checkpoint: %s\n", err);
    return rc;
}

/* Loads the checkpoint into the weights and states when --resume; p
 * keeps the fresh start when there is none yet. */
static int resume(trainer *t, train_pos *p)
{
    if (!t->a->given[CLI_OPT_resume])
        return 0;
    smelt_tensor_t **ts = calloc((size_t)t->n_ck, sizeof *ts);
    if (!ts)
        return 1;
    for (int i = 0; i < t->n_ck; i++)
        ts[i] = t->in[t->ck_in[i]];
    char err[512];
    int rc =
        train_ckpt_read(t->ckpt_dir, p, t->n_ck,
                        (const char *const *)t->ck_names, ts, err, sizeof err);
    free(ts);
    if (rc < 0) {
        printf("no checkpoint in %s: starting at step 0\n", t->ckpt_dir);
        return 0;
    }
    if (rc) {
        fprintf(stderr, "smelt train: --resume: %s\n", err);
        return 1;
    }
    printf("resumed from %s/checkpoint.smck at step %llu (epoch %llu, "
           "batch %llu)\n",
           t->ckpt_dir, (unsigned long long)p->step,
           (unsigned long long)p->epoch + 1, (unsigned long long)p->pos);
    return 0;
}

/* Swaps each new weight and state into the step's inputs: the old
 * buffer becomes the next step's output buffer. */
static void swap_state(trainer *t)
{
    for (int i = 0; i < t->n_ck; i++) {
        smelt_tensor_t *x = t->in[t->ck_in[i]];
        t->in[t->ck_in[i]] = t->out[t->ck_out[i]];
        t->out[t->ck_out[i]] = x;
    }
}

/* The running figures of one progress line. */
typedef struct meter {
    double loss_sum, t0;
    int64_t steps, ok, judged, samples;
} meter;

static void progress(const trainer *t, meter *m, int64_t epoch, int64_t step,
                     int64_t total, int end_of_line)
{
    int tty = isatty(STDOUT_FILENO);
    char line[256];
    double dt = now_s() - m->t0;
    int k = snprintf(
        line, sizeof line, "epoch %lld/%lld  step %lld/%lld  loss %.6g",
        (long long)epoch + 1, (long long)t->epochs, (long long)step,
        (long long)total, m->steps ? m->loss_sum / (double)m->steps : 0.0);
    if (m->judged && k > 0 && (size_t)k < sizeof line)
        k += snprintf(line + k, sizeof line - (size_t)k, "  acc %.2f%%",
                      100.0 * (double)m->ok / (double)m->judged);
    if (k > 0 && (size_t)k < sizeof line)
        snprintf(line + k, sizeof line - (size_t)k, "  %.0f samples/s",
                 dt > 0 ? (double)m->samples / dt : 0.0);
    if (tty)
        printf("\r%s\033[K%s", line, end_of_line ? "\n" : "");
    else
        printf("%s\n", line);
    fflush(stdout);
    *m = (meter){.t0 = now_s()};
}

/* Reports a non-finite loss: the step, and which checkpoint is kept. */
static int non_finite(const trainer *t, double loss, int64_t step,
                      int64_t epoch, int64_t pos, int64_t last_ckpt)
{
    char kept[512];
    if (!t->ckpt_dir)
        snprintf(kept, sizeof kept, "no checkpoint was asked for");
    else if (last_ckpt < 0)
        snprintf(kept, sizeof kept, "no checkpoint was written in this run");
    else
        snprintf(kept, sizeof kept,
                 "the last checkpoint (step %lld) in %s is kept",
                 (long long)last_ckpt, t->ckpt_dir);
    fprintf(stderr,
            "smelt train: the loss is %s at step %lld (epoch %lld, batch "
            "%lld); stopped, %s\n",
            isnan(loss) ? "NaN" : "infinite", (long long)step,
            (long long)epoch + 1, (long long)pos + 1, kept);
    return 1;
}

/* How many of a run's first steps --json and --profile leave out: the
 * first touches the arena's pages and the kernels' workspaces, so it
 * times the set-up as much as the step. */
#define TRAIN_TIMING_SKIP 2

/* Keeps the time of the step that just ran, and with --profile its plan
 * steps' times as one run of the profiler (from step TRAIN_TIMING_SKIP). */
static void record_step(trainer *t, double ms)
{
    if (!t->step_ms)
        return;
    int64_t k = t->n_step_ms++;
    t->step_ms[k] = ms;
    if (!t->profile || k < TRAIN_TIMING_SKIP || t->prof_runs >= t->prof.runs)
        return;
    int r = t->prof_runs++, n = t->prof.n_steps;
    t->prof.lat[r] = ms;
    for (int i = 0; i < n; i++) {
        size_t at = (size_t)r * (size_t)n + (size_t)i;
        smelt_session_step_time(t->sess, i, &t->prof.t0[at], &t->prof.t1[at]);
    }
}

/* The buffers of --json and --profile for a run of `steps` steps. */
static int timing_init(trainer *t, int64_t steps)
{
    if (!t->json && !t->profile)
        return 0;
    t->step_ms = calloc((size_t)(steps > 0 ? steps : 1), sizeof *t->step_ms);
    if (!t->step_ms)
        return 1;
    if (!t->profile)
        return 0;
    int64_t runs = steps > TRAIN_TIMING_SKIP ? steps - TRAIN_TIMING_SKIP : 1;
    if (cli_prof_init(&t->prof, runs > 1000000 ? 1000000 : (int)runs,
                      smelt_plan_num_steps(t->plan), 1))
        return 1;
    smelt_session_set_profiling(t->sess, 1);
    return 0;
}

static int cmp_ms(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void train_report_timing(const trainer *t)
{
    if (!t->step_ms)
        return;
    /* the timed steps: all but the first TRAIN_TIMING_SKIP when more */
    int64_t skip = t->n_step_ms > TRAIN_TIMING_SKIP ? TRAIN_TIMING_SKIP : 0;
    int64_t n = t->n_step_ms - skip;
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return;
    double med = 0, mn = 0, mean = 0;
    if (n > 0) {
        memcpy(v, t->step_ms + skip, (size_t)n * sizeof *v);
        qsort(v, (size_t)n, sizeof *v, cmp_ms);
        med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        mn = v[0];
        for (int64_t i = 0; i < n; i++)
            mean += v[i] / (double)n;
    }
    free(v);
    if (t->profile && t->prof_runs) {
        cli_prof pr = t->prof;
        pr.runs = t->prof_runs; /* the steps profiled */
        cli_prof_print(stdout, t->plan, &pr, 1, 0, 0, 0);
    }
    if (!t->json)
        return;
    smelt_plan_stats ps = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(t->plan, &ps);
    printf("{\"step_median_ms\":%.4f,\"step_min_ms\":%.4f,"
           "\"step_mean_ms\":%.4f,\"steps_timed\":%lld,\"batch\":%lld,"
           "\"threads\":%d,\"setup_ms\":%.1f,\"arena_bytes\":%lld,"
           "\"plan_steps\":%d,\"ref_steps\":%d,\"recomputed\":%d,"
           "\"peak_rss_mib\":%.1f}\n",
           med, mn, mean, (long long)n, (long long)t->batch, ps.threads,
           t->setup_ms, (long long)ps.arena_bytes, ps.steps, ps.ref_steps,
           ps.recomputed, (double)cli_peak_rss() / (1024.0 * 1024.0));
    fflush(stdout);
}

int train_run(trainer *t)
{
    train_data *d = &t->d;
    smelt_graph_t *s = t->step_g;
    int64_t spe = d->n_train / t->batch, total = spe * t->epochs;
    train_pos p = {.rng_epoch = t->seed, .fingerprint = t->fingerprint};
    if (resume(t, &p))
        return 1;
    int64_t weights = 0;
    for (int i = 0; i < t->np; i++)
        weights +=
            smelt_tensor_numel(t->in[smelt_graph_optim_param_input(s, i)]);
    printf("training %d tensors (%lld weights): %lld training samples, %lld "
           "validation; %lld steps per epoch of %lld (%lld samples dropped)\n",
           t->np, (long long)weights, (long long)d->n_train,
           (long long)d->n_val, (long long)spe, (long long)t->batch,
           (long long)(d->n_train - spe * t->batch));
    smelt_plan_stats ps = SMELT_STRUCT_INIT(smelt_plan_stats);
    if (smelt_plan_get_stats(t->plan, &ps) == SMELT_OK)
        printf("the step compiled once: %d plan steps (%d allocating while "
               "running), arena %.1f KiB, %d values recomputed\n",
               ps.steps, ps.dynamic_steps, (double)ps.arena_bytes / 1024.0,
               ps.recomputed);
    if (timing_init(t, total - (int64_t)p.step))
        return 1;
    int64_t *order = malloc((size_t)d->n_train * sizeof *order);
    if (!order)
        return 1;
    const char *kill_env = getenv("SMELT_TRAIN_KILL_AT_STEP");
    int64_t kill_at = kill_env ? atoll(kill_env) : -1;
    int lr_in = smelt_graph_optim_lr_input(s);
    int step_in = smelt_graph_optim_step_input(s);
    int loss_out = smelt_graph_loss_output(s);
    int64_t step = (int64_t)p.step, last_ckpt = p.step ? (int64_t)p.step : -1;
    int rc = 0;
    for (int64_t e = (int64_t)p.epoch; rc == 0 && e < t->epochs; e++) {
        uint64_t rng = p.rng_epoch; /* this epoch's start */
        memcpy(order, d->train, (size_t)d->n_train * sizeof *order);
        train_shuffle(order, d->n_train, &rng);
        meter m = {.t0 = now_s()}, ep = {.t0 = m.t0};
        for (int64_t b = (int64_t)p.pos; b < spe; b++) {
            for (int i = 0; i <= d->n_x; i++)
                train_gather(i < d->n_x ? d->x[i] : d->y, order + b * t->batch,
                             t->batch, t->in[i]);
            *(double *)smelt_tensor_data(t->in[lr_in]) =
                schedule(t, step, total);
            *(double *)smelt_tensor_data(t->in[step_in]) = (double)(step + 1);
            double t0 = now_s();
            if (smelt_session_run_into(t->ctx, t->sess, t->in, t->n_in, t->out,
                                       t->n_out) != SMELT_OK) {
                fprintf(stderr, "smelt train: step %lld: %s\n",
                        (long long)step + 1, smelt_ctx_error(t->ctx));
                rc = 1;
                break;
            }
            record_step(t, (now_s() - t0) * 1e3);
            double loss = smelt_tensor_get_f64(t->out[loss_out], 0);
            if (!isfinite(loss)) {
                rc = non_finite(t, loss, step + 1, e, b, last_ckpt);
                break;
            }
            int64_t n = 0,
                    ok = correct(t, t->out[1], t->in[d->n_x], t->batch, &n);
            m.loss_sum += loss, ep.loss_sum += loss;
            m.ok += ok, ep.ok += ok;
            m.judged += n, ep.judged += n;
            m.steps++, ep.steps++;
            m.samples += t->batch;
            swap_state(t);
            step++;
            if (step % t->log_every == 0 || b + 1 == spe)
                progress(t, &m, e, step, total, b + 1 == spe);
            if (t->ckpt_every && step % t->ckpt_every == 0 && b + 1 < spe) {
                train_pos c = {.epoch = (uint64_t)e,
                               .pos = (uint64_t)b + 1,
                               .step = (uint64_t)step,
                               .rng_epoch = p.rng_epoch,
                               .fingerprint = t->fingerprint};
                if ((rc = checkpoint(t, &c)) != 0)
                    break;
                last_ckpt = step;
            }
            if (step == kill_at) /* the checkpoint test's crash */
                raise(SIGKILL);
        }
        if (rc)
            break;
        p.pos = 0;
        p.rng_epoch = rng;
        double vl = 0, va = -1;
        if (d->n_val && (rc = validate(t, &vl, &va)) != 0)
            break;
        printf("epoch %lld/%lld: train loss %.6g", (long long)e + 1,
               (long long)t->epochs,
               ep.steps ? ep.loss_sum / (double)ep.steps : 0.0);
        if (ep.judged)
            printf(" acc %.2f%%", 100.0 * (double)ep.ok / (double)ep.judged);
        if (d->n_val) {
            printf(", val loss %.6g", vl);
            if (va >= 0)
                printf(" acc %.2f%%", 100.0 * va);
        }
        printf("\n");
        fflush(stdout);
        train_pos c = {.epoch = (uint64_t)e + 1,
                       .pos = 0,
                       .step = (uint64_t)step,
                       .rng_epoch = rng,
                       .fingerprint = t->fingerprint};
        if ((rc = checkpoint(t, &c)) != 0)
            break;
        last_ckpt = step;
    }
    free(order);
    return rc;
}
