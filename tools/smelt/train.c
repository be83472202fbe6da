/*
 * train.c - `smelt train MODEL --input NAME=X.npy --target Y.npy ...`
 * (docs/CLI.md, docs/AUTOGRAD.md "Training"): builds the training step
 * as one graph (the model, the loss, the backward pass and the
 * optimizer's update), compiles it once into a plan for the batch size,
 * and feeds it batches; parameters and optimizer states live in two
 * buffers each, swapped after every step, so steps allocate nothing.
 * The set-up and the graphs are here; the loop, validation, progress and
 * checkpoints are in train_loop.c.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_util.h"
#include "cli.h"
#include "inputs.h"
#include "train_run.h"

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

/* Prints "smelt train: <ctx error>" and returns 1. */
static int fail(trainer *t)
{
    fprintf(stderr, "smelt train: %s\n", smelt_ctx_error(t->ctx));
    return 1;
}

/* Whether name matches one of the comma-separated globs of pats. */
static int frozen(const char *pats, const char *name)
{
    if (!pats)
        return 0;
    char buf[1024];
    const char *p = pats;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = 0;
            if (n && fnmatch(buf, name, 0) == 0)
                return 1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

static int is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64;
}

/* The initializers to train: every f32/f64 one --freeze spares. */
static int pick_params(trainer *t)
{
    const smelt_graph_t *m = t->model;
    int n = smelt_graph_num_initializers(m), floats = 0;
    t->names = calloc((size_t)(n > 0 ? n : 1), sizeof *t->names);
    if (!t->names)
        return 1;
    for (int i = 0; i < n; i++) {
        if (!is_float(smelt_graph_initializer_dtype(m, i)))
            continue;
        floats++;
        const char *nm = smelt_graph_initializer_name(m, i);
        if (!frozen(t->a->str[CLI_OPT_freeze], nm))
            t->names[t->np++] = nm;
    }
    if (t->np)
        return 0;
    if (floats)
        fprintf(stderr,
                "smelt train: --freeze '%s' freezes every floating-point "
                "initializer of the model: nothing to train\n",
                t->a->str[CLI_OPT_freeze]);
    else
        fprintf(stderr, "smelt train: the model has no floating-point "
                        "initializers to train\n");
    return 1;
}

/* Loads the inputs and the target, checks they agree with the model and
 * with each other, and splits the samples. */
static int load_data(trainer *t)
{
    train_data *d = &t->d;
    d->n_x = smelt_graph_num_inputs(t->model);
    d->x = calloc((size_t)(d->n_x > 0 ? d->n_x : 1), sizeof *d->x);
    if (!d->x)
        return 1;
    cli_input_rule rule = {.random = 0, .dim_default = -1};
    if (cli_bind_inputs(t->ctx, t->a, t->model, &rule, d->x))
        return 1;
    if (!t->a->str[CLI_OPT_target]) {
        fprintf(stderr, "smelt train: no --target Y.npy given\n");
        return 1;
    }
    if (smelt_npy_load(t->ctx, t->a->str[CLI_OPT_target], &d->y) != SMELT_OK) {
        fprintf(stderr, "smelt train: target: %s\n", smelt_ctx_error(t->ctx));
        return 1;
    }
    if (!strcmp(t->loss, "cross_entropy") &&
        smelt_tensor_dtype(d->y) == SMELT_DTYPE_I32) {
        /* numpy's int on some platforms: widen to the int64 classes */
        smelt_tensor_t *w = NULL;
        int nd = smelt_tensor_ndim(d->y);
        int64_t dims[SMELT_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            dims[i] = smelt_tensor_dim(d->y, i);
        if (smelt_tensor_init(t->ctx, SMELT_DTYPE_I64, nd, dims, &w) !=
            SMELT_OK)
            return fail(t);
        const int32_t *s = smelt_tensor_data(d->y);
        int64_t *o = smelt_tensor_data(w);
        for (int64_t i = 0; i < smelt_tensor_numel(w); i++)
            o[i] = s[i];
        smelt_tensor_free(d->y);
        d->y = w;
    }
    if (smelt_loss_check_target(t->ctx, t->model, t->loss, d->y) != SMELT_OK)
        return fail(t);
    d->n = smelt_tensor_ndim(d->y) > 0 ? smelt_tensor_dim(d->y, 0) : 0;
    for (int i = 0; i < d->n_x; i++) {
        const char *nm = smelt_graph_input_name(t->model, i);
        int nd = smelt_graph_input_ndim(t->model, i);
        if (smelt_tensor_ndim(d->x[i]) < 1 ||
            smelt_tensor_dim(d->x[i], 0) != d->n) {
            fprintf(stderr,
                    "smelt train: input '%s' has %lld samples (dim 0), the "
                    "target %lld\n",
                    nm,
                    (long long)(smelt_tensor_ndim(d->x[i])
                                    ? smelt_tensor_dim(d->x[i], 0)
                                    : 0),
                    (long long)d->n);
            return 1;
        }
        if (nd >= 0 && nd != smelt_tensor_ndim(d->x[i])) {
            fprintf(stderr,
                    "smelt train: input '%s' has rank %d in the model, %d in "
                    "its file\n",
                    nm, nd, smelt_tensor_ndim(d->x[i]));
            return 1;
        }
        for (int a = 1; a < nd; a++) {
            int64_t want = smelt_graph_input_dim(t->model, i, a);
            if (want >= 0 && want != smelt_tensor_dim(d->x[i], a)) {
                fprintf(stderr,
                        "smelt train: input '%s' dim %d is %lld in the "
                        "model, %lld in its file\n",
                        nm, a, (long long)want,
                        (long long)smelt_tensor_dim(d->x[i], a));
                return 1;
            }
        }
        int64_t b0 = nd > 0 ? smelt_graph_input_dim(t->model, i, 0) : -1;
        if (b0 >= 0 && b0 != t->batch) {
            fprintf(stderr,
                    "smelt train: input '%s' has a fixed batch of %lld; "
                    "--batch-size must be %lld\n",
                    nm, (long long)b0, (long long)b0);
            return 1;
        }
    }
    if (train_data_split(d, cli_real(t->a, CLI_OPT_val_fraction, 0), t->seed))
        return 1;
    if (d->n_train < t->batch) {
        fprintf(stderr,
                "smelt train: --batch-size %lld is more than the %lld "
                "training samples\n",
                (long long)t->batch, (long long)d->n_train);
        return 1;
    }
    return 0;
}

/* The optimizer's options from the command line. */
static int optim_options(trainer *t, smelt_optim_options *o)
{
    smelt_optim_options_default(o);
    const char *k =
        t->a->str[CLI_OPT_optimizer] ? t->a->str[CLI_OPT_optimizer] : "sgd";
    if (!strcmp(k, "sgd"))
        o->kind = SMELT_OPTIM_SGD;
    else if (!strcmp(k, "adam"))
        o->kind = SMELT_OPTIM_ADAM;
    else if (!strcmp(k, "adamw"))
        o->kind = SMELT_OPTIM_ADAMW;
    else
        return cli_usage_error("train",
                               "--optimizer %s: not sgd, adam or adamw", k);
    o->momentum = cli_real(t->a, CLI_OPT_momentum, 0);
    o->nesterov = t->a->given[CLI_OPT_nesterov] > 0;
    o->weight_decay = cli_real(t->a, CLI_OPT_weight_decay,
                               o->kind == SMELT_OPTIM_ADAMW ? 0.01 : 0);
    o->clip_norm = cli_real(t->a, CLI_OPT_clip_norm, 0);
    if (o->kind != SMELT_OPTIM_SGD &&
        (t->a->given[CLI_OPT_momentum] || t->a->given[CLI_OPT_nesterov]))
        return cli_usage_error("train", "--momentum and --nesterov are SGD's");
    t->optim_kind = o->kind;
    return 0;
}

/* The model with its symbolic batch dims bound to the batch size (the
 * backward rules need sizes), in *out. */
static int bind_batch(trainer *t, smelt_graph_t **out)
{
    if (smelt_graph_clone(t->ctx, t->model, out) != SMELT_OK)
        return fail(t);
    char dims[1024] = "";
    size_t k = 0;
    for (int i = 0; i < smelt_graph_num_inputs(t->model); i++) {
        const char *sym = smelt_graph_input_dim_name(t->model, i, 0);
        if (smelt_graph_input_dim(t->model, i, 0) >= 0)
            continue;
        if (!sym) {
            fprintf(stderr,
                    "smelt train: input '%s' has an unknown dim 0 without a "
                    "name; the batch dim must be fixed or named\n",
                    smelt_graph_input_name(t->model, i));
            return 1;
        }
        k += (size_t)snprintf(dims + k, k < sizeof dims ? sizeof dims - k : 0,
                              "%s%s=%lld", k ? "," : "", sym,
                              (long long)t->batch);
    }
    if (k >= sizeof dims) {
        fprintf(stderr, "smelt train: too many batch dims\n");
        return 1;
    }
    if (k && smelt_graph_bind_dims(t->ctx, *out, dims) != SMELT_OK)
        return fail(t);
    return 0;
}

/* The training step (on the model bound to the batch size) and the
 * evaluation graph (symbolic: it also runs a last partial batch). */
static int build_graphs(trainer *t, const smelt_optim_options *o)
{
    smelt_graph_t *mb = NULL, *l = NULL, *j = NULL, *le = NULL;
    if (bind_batch(t, &mb)) {
        smelt_graph_free(mb);
        return 1;
    }
    smelt_grad_options go;
    smelt_grad_options_default(&go);
    go.wrt = t->names;
    go.n_wrt = t->np;
    go.params_as_inputs = 1;
    int rc = 0;
    if (smelt_graph_add_loss(t->ctx, mb, t->loss, &l) != SMELT_OK ||
        smelt_graph_grad(t->ctx, l, &go, &j) != SMELT_OK ||
        smelt_graph_add_optimizer(t->ctx, j, o, &t->step_g) != SMELT_OK ||
        smelt_graph_add_loss(t->ctx, t->model, t->loss, &le) != SMELT_OK ||
        smelt_graph_lift_initializers(t->ctx, le, t->names, t->np,
                                      &t->eval_g) != SMELT_OK)
        rc = fail(t);
    smelt_graph_free(mb);
    smelt_graph_free(l);
    smelt_graph_free(j);
    smelt_graph_free(le);
    return rc;
}

/* A tensor of src's dtype and shape with dim 0 set to rows (zeros). */
static smelt_tensor_t *rows_like(trainer *t, const smelt_tensor_t *src,
                                 int64_t rows)
{
    int nd = smelt_tensor_ndim(src);
    int64_t dims[SMELT_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        dims[i] = smelt_tensor_dim(src, i);
    if (nd > 0 && rows >= 0)
        dims[0] = rows;
    smelt_tensor_t *o = NULL;
    if (smelt_tensor_init(t->ctx, smelt_tensor_dtype(src), nd, dims, &o) !=
        SMELT_OK)
        return NULL;
    memset(smelt_tensor_data(o), 0,
           (size_t)smelt_tensor_numel(o) *
               train_dtype_size(smelt_tensor_dtype(o)));
    return o;
}

/* The step's input buffers (a batch, the weights, zero states, lr and
 * step), the plan compiled for them, and its output buffers. */
static int compile_step(trainer *t)
{
    smelt_graph_t *s = t->step_g;
    t->n_in = smelt_graph_num_inputs(s);
    t->n_out = smelt_graph_num_outputs(s);
    t->in = calloc((size_t)t->n_in, sizeof *t->in);
    t->out = calloc((size_t)t->n_out, sizeof *t->out);
    if (!t->in || !t->out)
        return 1;
    for (int i = 0; i < t->d.n_x; i++)
        if (!(t->in[i] = rows_like(t, t->d.x[i], t->batch)))
            return fail(t);
    if (!(t->in[t->d.n_x] = rows_like(t, t->d.y, t->batch)))
        return fail(t);
    t->ns = smelt_graph_optim_num_states(s);
    for (int i = 0; i < t->np; i++) {
        int pi = smelt_graph_optim_param_input(s, i);
        if (smelt_graph_initializer_get(t->ctx, t->model, t->names[i],
                                        &t->in[pi]) != SMELT_OK)
            return fail(t);
        for (int k = 0; k < t->ns; k++)
            if (!(t->in[smelt_graph_optim_state_input(s, i, k)] =
                      rows_like(t, t->in[pi], -1)))
                return fail(t);
    }
    int64_t none[1] = {0};
    if (smelt_tensor_init(t->ctx, SMELT_DTYPE_F64, 0, none,
                          &t->in[smelt_graph_optim_lr_input(s)]) != SMELT_OK ||
        smelt_tensor_init(t->ctx, SMELT_DTYPE_F64, 0, none,
                          &t->in[smelt_graph_optim_step_input(s)]) != SMELT_OK)
        return fail(t);
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = (int32_t)cli_num(t->a, CLI_OPT_threads, 1);
    po.inputs = t->in;
    po.n_inputs = t->n_in;
    po.memory_budget = cli_num(t->a, CLI_OPT_memory_budget, 0);
    if (smelt_plan_compile(t->ctx, s, &po, &t->plan) != SMELT_OK ||
        smelt_session_init(t->ctx, t->plan, &t->sess) != SMELT_OK)
        return fail(t);
    for (int i = 0; i < t->n_out; i++) {
        int nd = smelt_plan_output_ndim(t->plan, i);
        int64_t dims[SMELT_MAX_DIMS];
        for (int a = 0; a < nd; a++)
            dims[a] = smelt_plan_output_dim(t->plan, i, a);
        if (smelt_tensor_init(t->ctx, smelt_plan_output_dtype(t->plan, i), nd,
                              dims, &t->out[i]) != SMELT_OK)
            return fail(t);
    }
    return 0;
}

/* The fingerprint of the set-up a checkpoint must share. */
static uint64_t fingerprint(const trainer *t)
{
    uint64_t h = train_fnv(TRAIN_FNV_INIT, t->loss, strlen(t->loss) + 1);
    int64_t v[5] = {t->optim_kind, t->batch, (int64_t)t->seed, t->d.n,
                    t->d.n_val};
    h = train_fnv(h, v, sizeof v);
    for (int i = 0; i < t->n_ck; i++) {
        h = train_fnv(h, t->ck_names[i], strlen(t->ck_names[i]) + 1);
        smelt_tensor_t *x = t->in[t->ck_in[i]];
        int64_t shape[SMELT_MAX_DIMS + 2] = {smelt_tensor_dtype(x),
                                             smelt_tensor_ndim(x)};
        for (int a = 0; a < smelt_tensor_ndim(x); a++)
            shape[2 + a] = smelt_tensor_dim(x, a);
        h = train_fnv(h, shape, sizeof shape);
    }
    return h;
}

/* The checkpointed tensors: each parameter, then its states, named
 * PARAM and PARAM.STATE. */
static int checkpoint_names(trainer *t)
{
    smelt_graph_t *s = t->step_g;
    t->n_ck = t->np * (1 + t->ns);
    t->ck_names = calloc((size_t)t->n_ck, sizeof *t->ck_names);
    t->ck_in = calloc((size_t)t->n_ck, sizeof *t->ck_in);
    t->ck_out = calloc((size_t)t->n_ck, sizeof *t->ck_out);
    if (!t->ck_names || !t->ck_in || !t->ck_out)
        return 1;
    int c = 0;
    for (int i = 0; i < t->np; i++) {
        t->ck_in[c] = smelt_graph_optim_param_input(s, i);
        t->ck_out[c] = smelt_graph_optim_param_output(s, i);
        t->ck_names[c] = strdup(smelt_graph_input_name(s, t->ck_in[c]));
        c++;
        for (int k = 0; k < t->ns; k++) {
            t->ck_in[c] = smelt_graph_optim_state_input(s, i, k);
            t->ck_out[c] = smelt_graph_optim_state_output(s, i, k);
            t->ck_names[c] = strdup(smelt_graph_input_name(s, t->ck_in[c]));
            c++;
        }
    }
    for (int i = 0; i < t->n_ck; i++)
        if (!t->ck_names[i])
            return 1;
    t->fingerprint = fingerprint(t);
    return 0;
}

/* Writes the trained weights into the model and saves it as ONNX. */
static int save_model(trainer *t)
{
    const char *path = t->a->str[CLI_OPT_save];
    if (!path)
        return 0;
    for (int i = 0; i < t->np; i++)
        if (smelt_graph_initializer_set(
                t->ctx, t->model, t->names[i],
                t->in[smelt_graph_optim_param_input(t->step_g, i)]) != SMELT_OK)
            return fail(t);
    if (smelt_onnx_save(t->ctx, t->model, path) != SMELT_OK)
        return fail(t);
    printf("saved %s\n", path);
    return 0;
}

static void trainer_free(trainer *t)
{
    for (int i = 0; t->in && i < t->n_in; i++)
        smelt_tensor_free(t->in[i]);
    for (int i = 0; t->out && i < t->n_out; i++)
        smelt_tensor_free(t->out[i]);
    free(t->in);
    free(t->out);
    for (int i = 0; t->ck_names && i < t->n_ck; i++)
        free(t->ck_names[i]);
    free(t->ck_names);
    free(t->ck_in);
    free(t->ck_out);
    free(t->names);
    free(t->step_ms);
    cli_prof_free(&t->prof);
    smelt_session_free(t->sess);
    smelt_plan_free(t->plan);
    smelt_graph_free(t->step_g);
    smelt_graph_free(t->eval_g);
    smelt_graph_free(t->model);
    train_data_free(&t->d);
}

/* Reads the options that shape the run. */
static int read_options(trainer *t)
{
    cli_args *a = t->a;
    t->loss = a->str[CLI_OPT_loss] ? a->str[CLI_OPT_loss] : "mse";
    if (strcmp(t->loss, "mse") && strcmp(t->loss, "cross_entropy") &&
        strcmp(t->loss, "bce_with_logits"))
        return cli_usage_error("train",
                               "--loss %s: not mse, cross_entropy or "
                               "bce_with_logits",
                               t->loss);
    const char *sch =
        a->str[CLI_OPT_schedule] ? a->str[CLI_OPT_schedule] : "constant";
    if (strcmp(sch, "constant") && strcmp(sch, "cosine"))
        return cli_usage_error("train", "--schedule %s: not constant or cosine",
                               sch);
    t->cosine = !strcmp(sch, "cosine");
    t->lr = cli_real(a, CLI_OPT_lr, 1e-3);
    t->warmup = cli_num(a, CLI_OPT_train_warmup, 0);
    t->epochs = cli_num(a, CLI_OPT_epochs, 1);
    t->batch = cli_num(a, CLI_OPT_batch_size, 32);
    t->seed = (uint64_t)cli_num(a, CLI_OPT_train_seed, 0);
    t->log_every = cli_num(a, CLI_OPT_log_every, 10);
    t->ckpt_every = cli_num(a, CLI_OPT_checkpoint_every, 0);
    t->ckpt_dir = a->str[CLI_OPT_checkpoint];
    t->json = a->given[CLI_OPT_json] > 0;
    t->profile = a->given[CLI_OPT_profile] > 0;
    if (a->given[CLI_OPT_resume] && !t->ckpt_dir)
        return cli_usage_error("train", "--resume needs --checkpoint DIR");
    if (a->given[CLI_OPT_checkpoint_every] && !t->ckpt_dir)
        return cli_usage_error("train",
                               "--checkpoint-every needs --checkpoint DIR");
    return 0;
}

int cli_train(int argc, char **argv)
{
    cli_args a;
    trainer t = {0};
    t.a = &a;
    int rc = cli_args_parse(&a, "train", argc, argv, 1, 1, "MODEL");
    if (rc == 0)
        rc = read_options(&t);
    smelt_optim_options oo;
    if (rc == 0)
        rc = optim_options(&t, &oo);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    t.ctx = smelt_ctx_init();
    if (!t.ctx) {
        cli_args_free(&a);
        return 1;
    }
    double t0 = now_s();
    rc = cli_load_graph(t.ctx, a.files[0], 1, &t.model);
    if (rc == 0)
        rc = pick_params(&t);
    if (rc == 0)
        rc = load_data(&t);
    if (rc == 0)
        rc = build_graphs(&t, &oo);
    if (rc == 0)
        rc = compile_step(&t);
    if (rc == 0 && checkpoint_names(&t)) {
        fprintf(stderr, "smelt train: out of memory\n");
        rc = 1;
    }
    t.setup_ms = (now_s() - t0) * 1e3;
    if (rc == 0)
        rc = train_run(&t);
    if (rc == 0)
        rc = save_model(&t);
    if (rc == 0)
        train_report_timing(&t);
    trainer_free(&t);
    smelt_ctx_free(t.ctx);
    cli_args_free(&a);
    return rc;
}
