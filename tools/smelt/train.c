/*
 * train.c - `smelt train MODEL --input NAME=X.npy --target Y.npy ...`
 * (docs/CLI.md, docs/TRAINING.md): a thin caller of the library's
 * trainer (smelt_trainer_*, src/train/): it reads the options and the
 * .npy files, prints the trainer's progress from its callback (a line
 * every --log-every steps, a summary per epoch), saves the trained model,
 * and with --json and --profile times the steps.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "inputs.h"
#include "prof.h"

void cli_train_help(FILE *out)
{
    fprintf(out,
            "train a model's floating-point initializers on .npy data\n\n"
            "usage: smelt train MODEL --input NAME=X.npy --target Y.npy "
            "[options]\n\n"
            "Appends the loss to MODEL's first output, differentiates it\n"
            "ahead of time, appends the optimizer's update, and compiles\n"
            "the whole step once into a plan for --batch-size samples. Each\n"
            "epoch shuffles the training samples (seeded), runs the step on\n"
            "every full batch (a last partial batch is dropped), prints\n"
            "progress and evaluates the held-out samples. --save writes the\n"
            "model with its trained weights as a standard ONNX file.\n");
    cli_options_help(out, "train");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How many of a run's first steps --json and --profile leave out: the
 * first touches the arena's pages and the kernels' workspaces, so it
 * times the set-up as much as the step. */
#define TRAIN_TIMING_SKIP 2

/* The running figures of one progress line. */
typedef struct meter {
    double loss_sum, t0;
    int64_t steps, ok, judged, samples;
} meter;

/* The CLI's side of a run: its options, the data it read, the trainer,
 * the progress meter, and the timings of --json and --profile (each
 * step's time in ms, and with --profile the plan steps' times of every
 * step but the first TRAIN_TIMING_SKIP, each a run of the profiler). */
typedef struct cli_train_run {
    smelt_ctx_t *ctx;
    cli_args *a;
    smelt_train_options o;
    smelt_optim_options oo;
    smelt_graph_t *model;
    smelt_tensor_t **x, *y;
    int n_x;
    smelt_trainer_t *tr;
    int64_t log_every, kill_at;
    meter m;
    int fresh; /* the meter starts at the next step (an epoch's first) */
    int json, profile;
    double setup_ms;
    double *step_ms;
    int64_t n_step_ms, cap_step_ms;
    cli_prof prof;
    int prof_runs;
} cli_train_run;

/* Prints "smelt train: <ctx error>" with the library's names of options
 * given as the CLI's flags, and returns 1. */
static int fail(cli_train_run *r)
{
    static const char *const names[][2] = {{"resume: ", "--resume: "},
                                           {"freeze '", "--freeze '"},
                                           {"batch_size ", "--batch-size "}};
    const char *msg = smelt_ctx_error(r->ctx);
    fprintf(stderr, "smelt train: ");
    while (*msg) {
        size_t i = 0, n = sizeof names / sizeof *names;
        while (i < n && strncmp(msg, names[i][0], strlen(names[i][0])))
            i++;
        if (i < n) {
            fputs(names[i][1], stderr);
            msg += strlen(names[i][0]);
        } else {
            fputc(*msg++, stderr);
        }
    }
    fputc('\n', stderr);
    return 1;
}

/* The optimizer's options from the command line. */
static int optim_options(cli_train_run *r)
{
    smelt_optim_options *o = &r->oo;
    cli_args *a = r->a;
    smelt_optim_options_default(o);
    const char *k =
        a->str[CLI_OPT_optimizer] ? a->str[CLI_OPT_optimizer] : "sgd";
    if (!strcmp(k, "sgd"))
        o->kind = SMELT_OPTIM_SGD;
    else if (!strcmp(k, "adam"))
        o->kind = SMELT_OPTIM_ADAM;
    else if (!strcmp(k, "adamw"))
        o->kind = SMELT_OPTIM_ADAMW;
    else
        return cli_usage_error("train",
                               "--optimizer %s: not sgd, adam or adamw", k);
    o->momentum = cli_real(a, CLI_OPT_momentum, 0);
    o->nesterov = a->given[CLI_OPT_nesterov] > 0;
    o->weight_decay = cli_real(a, CLI_OPT_weight_decay,
                               o->kind == SMELT_OPTIM_ADAMW ? 0.01 : 0);
    o->clip_norm = cli_real(a, CLI_OPT_clip_norm, 0);
    if (o->kind != SMELT_OPTIM_SGD &&
        (a->given[CLI_OPT_momentum] || a->given[CLI_OPT_nesterov]))
        return cli_usage_error("train", "--momentum and --nesterov are SGD's");
    r->o.optim = o;
    return 0;
}

/* Reads the options that shape the run into the trainer's options. */
static int read_options(cli_train_run *r)
{
    cli_args *a = r->a;
    smelt_train_options *o = &r->o;
    smelt_train_options_default(o);
    o->loss = a->str[CLI_OPT_loss] ? a->str[CLI_OPT_loss] : "mse";
    if (strcmp(o->loss, "mse") && strcmp(o->loss, "cross_entropy") &&
        strcmp(o->loss, "bce_with_logits"))
        return cli_usage_error("train",
                               "--loss %s: not mse, cross_entropy or "
                               "bce_with_logits",
                               o->loss);
    const char *sch =
        a->str[CLI_OPT_schedule] ? a->str[CLI_OPT_schedule] : "constant";
    if (strcmp(sch, "constant") && strcmp(sch, "cosine"))
        return cli_usage_error("train", "--schedule %s: not constant or cosine",
                               sch);
    o->schedule =
        strcmp(sch, "cosine") ? SMELT_SCHEDULE_CONSTANT : SMELT_SCHEDULE_COSINE;
    o->lr = cli_real(a, CLI_OPT_lr, 1e-3);
    o->warmup = cli_num(a, CLI_OPT_train_warmup, 0);
    o->epochs = cli_num(a, CLI_OPT_epochs, 1);
    o->batch_size = cli_num(a, CLI_OPT_batch_size, 32);
    o->seed = (uint64_t)cli_num(a, CLI_OPT_train_seed, 0);
    o->val_fraction = cli_real(a, CLI_OPT_val_fraction, 0);
    o->freeze = a->str[CLI_OPT_freeze];
    o->threads = (int32_t)cli_num(a, CLI_OPT_threads, 1);
    o->memory_budget = cli_num(a, CLI_OPT_memory_budget, 0);
    o->checkpoint_every = cli_num(a, CLI_OPT_checkpoint_every, 0);
    o->checkpoint_dir = a->str[CLI_OPT_checkpoint];
    o->resume = a->given[CLI_OPT_resume] > 0;
    r->log_every = cli_num(a, CLI_OPT_log_every, 10);
    r->json = a->given[CLI_OPT_json] > 0;
    r->profile = a->given[CLI_OPT_profile] > 0;
    if (o->resume && !o->checkpoint_dir)
        return cli_usage_error("train", "--resume needs --checkpoint DIR");
    if (a->given[CLI_OPT_checkpoint_every] && !o->checkpoint_dir)
        return cli_usage_error("train",
                               "--checkpoint-every needs --checkpoint DIR");
    return optim_options(r);
}

/* Loads the inputs and the target (the trainer checks them). */
static int load_data(cli_train_run *r)
{
    r->n_x = smelt_graph_num_inputs(r->model);
    r->x = calloc((size_t)(r->n_x > 0 ? r->n_x : 1), sizeof *r->x);
    if (!r->x)
        return 1;
    cli_input_rule rule = {.random = 0, .dim_default = -1};
    if (cli_bind_inputs(r->ctx, r->a, r->model, &rule, r->x))
        return 1;
    if (!r->a->str[CLI_OPT_target]) {
        fprintf(stderr, "smelt train: no --target Y.npy given\n");
        return 1;
    }
    if (smelt_npy_load(r->ctx, r->a->str[CLI_OPT_target], &r->y) != SMELT_OK) {
        fprintf(stderr, "smelt train: target: %s\n", smelt_ctx_error(r->ctx));
        return 1;
    }
    return 0;
}

/* Keeps the time of the step that just ran, and with --profile its plan
 * steps' times as one run of the profiler (from step TRAIN_TIMING_SKIP). */
static void record_step(cli_train_run *r, double ms)
{
    if (!r->step_ms || r->n_step_ms >= r->cap_step_ms)
        return;
    int64_t k = r->n_step_ms++;
    r->step_ms[k] = ms;
    if (!r->profile || k < TRAIN_TIMING_SKIP || r->prof_runs >= r->prof.runs)
        return;
    int i = r->prof_runs++, n = r->prof.n_steps;
    r->prof.lat[i] = ms;
    smelt_session_t *s = smelt_trainer_session(r->tr);
    for (int j = 0; j < n; j++) {
        size_t at = (size_t)i * (size_t)n + (size_t)j;
        smelt_session_step_time(s, j, &r->prof.t0[at], &r->prof.t1[at]);
    }
}

/* The buffers of --json and --profile for a run of `steps` steps. */
static int timing_init(cli_train_run *r, int64_t steps)
{
    if (!r->json && !r->profile)
        return 0;
    r->cap_step_ms = steps > 0 ? steps : 1;
    r->step_ms = calloc((size_t)r->cap_step_ms, sizeof *r->step_ms);
    if (!r->step_ms)
        return 1;
    if (!r->profile)
        return 0;
    int64_t runs = steps > TRAIN_TIMING_SKIP ? steps - TRAIN_TIMING_SKIP : 1;
    if (cli_prof_init(&r->prof, runs > 1000000 ? 1000000 : (int)runs,
                      smelt_plan_num_steps(smelt_trainer_plan(r->tr)), 1))
        return 1;
    smelt_session_set_profiling(smelt_trainer_session(r->tr), 1);
    return 0;
}

static int cmp_ms(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* --profile's table and --json's line of step times. */
static void report_timing(const cli_train_run *r)
{
    if (!r->step_ms)
        return;
    /* the timed steps: all but the first TRAIN_TIMING_SKIP when more */
    int64_t skip = r->n_step_ms > TRAIN_TIMING_SKIP ? TRAIN_TIMING_SKIP : 0;
    int64_t n = r->n_step_ms - skip;
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return;
    double med = 0, mn = 0, mean = 0;
    if (n > 0) {
        memcpy(v, r->step_ms + skip, (size_t)n * sizeof *v);
        qsort(v, (size_t)n, sizeof *v, cmp_ms);
        med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        mn = v[0];
        for (int64_t i = 0; i < n; i++)
            mean += v[i] / (double)n;
    }
    free(v);
    const smelt_plan_t *plan = smelt_trainer_plan(r->tr);
    if (r->profile && r->prof_runs) {
        cli_prof pr = r->prof;
        pr.runs = r->prof_runs; /* the steps profiled */
        cli_prof_print(stdout, plan, &pr, 1, 0, 0, 0);
    }
    if (!r->json)
        return;
    smelt_plan_stats ps = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(plan, &ps);
    printf("{\"step_median_ms\":%.4f,\"step_min_ms\":%.4f,"
           "\"step_mean_ms\":%.4f,\"steps_timed\":%lld,\"batch\":%lld,"
           "\"threads\":%d,\"setup_ms\":%.1f,\"arena_bytes\":%lld,"
           "\"plan_steps\":%d,\"ref_steps\":%d,\"recomputed\":%d,"
           "\"peak_rss_mib\":%.1f}\n",
           med, mn, mean, (long long)n, (long long)r->o.batch_size, ps.threads,
           r->setup_ms, (long long)ps.arena_bytes, ps.steps, ps.ref_steps,
           ps.recomputed, (double)cli_peak_rss() / (1024.0 * 1024.0));
    fflush(stdout);
}

/* A progress line (on a terminal, redrawn in place) with the meter's
 * figures since the last one. */
static void progress_line(cli_train_run *r, const smelt_train_progress *p,
                          int end_of_line)
{
    meter *m = &r->m;
    int tty = isatty(STDOUT_FILENO);
    char line[256];
    double dt = now_s() - m->t0;
    int k = snprintf(line, sizeof line,
                     "epoch %lld/%lld  step %lld/%lld  loss %.6g",
                     (long long)p->epoch + 1, (long long)p->epochs,
                     (long long)p->step, (long long)p->total_steps,
                     m->steps ? m->loss_sum / (double)m->steps : 0.0);
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

/* The trainer's callback: a progress line every --log-every steps and
 * at each epoch's last, the epoch's summary, the timings; and the crash
 * of the checkpoint test (SMELT_TRAIN_KILL_AT_STEP). */
static int on_progress(void *user, const smelt_train_progress *p)
{
    cli_train_run *r = user;
    if (p->event == SMELT_TRAIN_EPOCH) {
        printf("epoch %lld/%lld: train loss %.6g", (long long)p->epoch + 1,
               (long long)p->epochs, p->loss);
        if (p->judged)
            printf(" acc %.2f%%",
                   100.0 * (double)p->correct / (double)p->judged);
        if (p->n_val) {
            printf(", val loss %.6g", p->val_loss);
            if (p->val_judged)
                printf(" acc %.2f%%",
                       100.0 * (double)p->val_correct / (double)p->val_judged);
        }
        printf("\n");
        fflush(stdout);
        r->fresh = 1;
        return 0;
    }
    record_step(r, p->seconds * 1e3);
    meter *m = &r->m;
    if (r->fresh) /* from this step's start: not the last epoch's end */
        *m = (meter){.t0 = now_s() - p->seconds};
    r->fresh = 0;
    m->loss_sum += p->loss;
    m->ok += p->correct;
    m->judged += p->judged;
    m->steps++;
    m->samples += p->samples;
    int last = p->batch == p->steps_per_epoch;
    if (p->step % r->log_every == 0 || last)
        progress_line(r, p, last);
    if (p->step == r->kill_at) /* the checkpoint test's crash */
        raise(SIGKILL);
    return 0;
}

/* What the trainer says before its first step: the resume, the data, the
 * compiled step. */
static void print_start(const cli_train_run *r)
{
    smelt_train_info in = SMELT_STRUCT_INIT(smelt_train_info);
    smelt_trainer_get_info(r->tr, &in);
    if (in.resumed < 0)
        printf("no checkpoint in %s: starting at step 0\n",
               r->o.checkpoint_dir);
    else if (in.resumed > 0)
        printf("resumed from %s/checkpoint.smck at step %lld (epoch %lld, "
               "batch %lld)\n",
               r->o.checkpoint_dir, (long long)in.resumed_step,
               (long long)in.resumed_epoch + 1, (long long)in.resumed_batch);
    printf("training %d tensors (%lld weights): %lld training samples, %lld "
           "validation; %lld steps per epoch of %lld (%lld samples dropped)\n",
           in.n_params, (long long)in.n_weights, (long long)in.n_train,
           (long long)in.n_val, (long long)in.steps_per_epoch,
           (long long)r->o.batch_size, (long long)in.dropped);
    smelt_plan_stats ps = SMELT_STRUCT_INIT(smelt_plan_stats);
    if (smelt_plan_get_stats(smelt_trainer_plan(r->tr), &ps) == SMELT_OK)
        printf("the step compiled once: %d plan steps (%d allocating while "
               "running), arena %.1f KiB, %d values recomputed\n",
               ps.steps, ps.dynamic_steps, (double)ps.arena_bytes / 1024.0,
               ps.recomputed);
}

/* Creates the trainer, runs it, saves the model. */
static int train(cli_train_run *r)
{
    double t0 = now_s();
    r->o.callback = on_progress;
    r->o.user = r;
    if (smelt_trainer_create(r->ctx, r->model,
                             (const smelt_tensor_t *const *)r->x, r->n_x, r->y,
                             &r->o, &r->tr) != SMELT_OK)
        return fail(r);
    r->setup_ms = (now_s() - t0) * 1e3;
    print_start(r);
    smelt_train_info in = SMELT_STRUCT_INIT(smelt_train_info);
    smelt_trainer_get_info(r->tr, &in);
    if (timing_init(r, in.total_steps - in.step))
        return 1;
    const char *kill_env = getenv("SMELT_TRAIN_KILL_AT_STEP");
    r->kill_at = kill_env ? atoll(kill_env) : -1;
    r->fresh = 1;
    if (smelt_trainer_run(r->ctx, r->tr) != SMELT_OK)
        return fail(r);
    const char *path = r->a->str[CLI_OPT_save];
    if (path) {
        if (smelt_trainer_write_weights(r->ctx, r->tr, r->model) != SMELT_OK ||
            smelt_onnx_save(r->ctx, r->model, path) != SMELT_OK)
            return fail(r);
        printf("saved %s\n", path);
    }
    report_timing(r);
    return 0;
}

int cli_train(int argc, char **argv)
{
    cli_args a;
    cli_train_run r = {.a = &a};
    int rc = cli_args_parse(&a, "train", argc, argv, 1, 1, "MODEL");
    if (rc == 0)
        rc = read_options(&r);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    r.ctx = smelt_ctx_init();
    if (!r.ctx) {
        cli_args_free(&a);
        return 1;
    }
    rc = cli_load_graph(r.ctx, a.files[0], 1, &r.model);
    if (rc == 0)
        rc = load_data(&r);
    if (rc == 0)
        rc = train(&r);
    smelt_trainer_free(r.tr);
    for (int i = 0; r.x && i < r.n_x; i++)
        smelt_tensor_free(r.x[i]);
    free(r.x);
    smelt_tensor_free(r.y);
    free(r.step_ms);
    cli_prof_free(&r.prof);
    smelt_graph_free(r.model);
    smelt_ctx_free(r.ctx);
    cli_args_free(&a);
    return rc;
}
