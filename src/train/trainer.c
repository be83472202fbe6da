/*
 * trainer.c - smelt_trainer_create and what reads a trainer
 * (docs/TRAINING.md): the options checked and copied, the initializers
 * to train, the data checked against the model and split, the training
 * step built as one graph (the model bound to the batch size, the loss,
 * the backward pass, the optimizer's update) and compiled once, its
 * buffers, and the names and fingerprint of the checkpoint. Parameters
 * and optimizer states live in two buffers each, swapped after every
 * step, so steps allocate nothing. The epochs are in loop.c.
 */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/sized.h"
#include "core/status.h"
#include "train/train.h"

#define TRAIN_OPTIONS_V1 SM_FIELD_END(smelt_train_options, user)
#define OPTIM_OPTIONS_V1 SM_FIELD_END(smelt_optim_options, clip_norm)

static void train_defaults(smelt_train_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->loss = "mse";
    o->lr = 1e-3;
    o->epochs = 1;
    o->batch_size = 32;
    o->shuffle = 1;
    o->threads = 1;
}

smelt_status smelt_train_options_init(smelt_train_options *o,
                                      size_t struct_size)
{
    smelt_train_options d;
    train_defaults(&d);
    return sm_sized_init(o, struct_size, &d, sizeof d, TRAIN_OPTIONS_V1);
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

/* Copies the caller's options (and the optimizer's) into t, with their
 * strings, and refuses values no run can use. */
static smelt_status read_options(smelt_ctx_t *ctx, smelt_trainer_t *t,
                                 const smelt_train_options *opt)
{
    train_defaults(&t->o);
    SM_TRY(sm_sized_in(ctx, "smelt_train_options", &t->o, sizeof t->o,
                       TRAIN_OPTIONS_V1, opt));
    smelt_optim_options_default(&t->optim);
    if (t->o.optim)
        SM_TRY(sm_sized_in(ctx, "smelt_optim_options", &t->optim,
                           sizeof t->optim, OPTIM_OPTIONS_V1, t->o.optim));
    t->o.optim = &t->optim;
    smelt_train_options *o = &t->o;
    const char *loss = o->loss ? o->loss : "mse";
    if (strcmp(loss, "mse") && strcmp(loss, "cross_entropy") &&
        strcmp(loss, "bce_with_logits"))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "loss '%s': not mse, cross_entropy or bce_with_logits",
                      loss);
    const char *bad = NULL;
    if (o->schedule != SMELT_SCHEDULE_CONSTANT &&
        o->schedule != SMELT_SCHEDULE_COSINE)
        bad = "schedule is not constant or cosine";
    else if (!(o->lr >= 0 && o->lr < INFINITY))
        bad = "lr must be a finite number >= 0";
    else if (o->warmup < 0 || o->epochs < 0 || o->checkpoint_every < 0 ||
             o->memory_budget < 0 || o->threads < 0)
        bad = "warmup, epochs, checkpoint_every, memory_budget and threads "
              "must not be negative";
    else if (o->batch_size < 1)
        bad = "batch_size must be at least 1";
    else if (!(o->val_fraction >= 0 && o->val_fraction < 1))
        bad = "val_fraction must be in [0, 1)";
    else if ((o->resume || o->checkpoint_every) && !o->checkpoint_dir)
        bad = "resume and checkpoint_every need a checkpoint_dir";
    if (bad)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_train_options: %s",
                      bad);
    t->loss = sm_strdup(loss);
    t->freeze = o->freeze ? sm_strdup(o->freeze) : NULL;
    t->ckpt_dir = o->checkpoint_dir ? sm_strdup(o->checkpoint_dir) : NULL;
    if (!t->loss || (o->freeze && !t->freeze) ||
        (o->checkpoint_dir && !t->ckpt_dir))
        return sm_err_nomem(ctx);
    o->loss = t->loss;
    o->freeze = t->freeze;
    o->checkpoint_dir = t->ckpt_dir;
    return SMELT_OK;
}

static int is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64;
}

/* The initializers to train: every f32/f64 one the freeze globs spare. */
static smelt_status pick_params(smelt_ctx_t *ctx, smelt_trainer_t *t,
                                const smelt_graph_t *m)
{
    int n = smelt_graph_num_initializers(m), floats = 0;
    t->names = sm_calloc((size_t)(n > 0 ? n : 1), sizeof *t->names);
    if (!t->names)
        return sm_err_nomem(ctx);
    for (int i = 0; i < n; i++) {
        if (!is_float(smelt_graph_initializer_dtype(m, i)))
            continue;
        floats++;
        const char *nm = smelt_graph_initializer_name(m, i);
        if (frozen(t->freeze, nm))
            continue;
        if (!(t->names[t->np++] = sm_strdup(nm)))
            return sm_err_nomem(ctx);
    }
    if (t->np)
        return SMELT_OK;
    if (floats)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "freeze '%s' freezes every floating-point initializer "
                      "of the model: nothing to train",
                      t->freeze);
    return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                  "the model has no floating-point initializers to train");
}

/* The target as the loss takes it: int32 classes of cross_entropy
 * widened to int64 (numpy's int on some platforms). */
static smelt_status take_target(smelt_ctx_t *ctx, smelt_trainer_t *t,
                                const smelt_tensor_t *y)
{
    train_data *d = &t->d;
    d->y = y;
    if (strcmp(t->loss, "cross_entropy") ||
        smelt_tensor_dtype(y) != SMELT_DTYPE_I32)
        return SMELT_OK;
    int nd = smelt_tensor_ndim(y);
    int64_t dims[SMELT_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        dims[i] = smelt_tensor_dim(y, i);
    SM_TRY(smelt_tensor_init(ctx, SMELT_DTYPE_I64, nd, dims, &d->y_owned));
    const int32_t *s = smelt_tensor_data((smelt_tensor_t *)y); /* read */
    int64_t *o = smelt_tensor_data(d->y_owned);
    for (int64_t i = 0; i < smelt_tensor_numel(y); i++)
        o[i] = s[i];
    d->y = d->y_owned;
    return SMELT_OK;
}

/* Checks input i's samples against the model's input: dtype, rank, the
 * dims after the first, a fixed batch dim. */
static smelt_status check_input(smelt_ctx_t *ctx, const smelt_trainer_t *t,
                                const smelt_graph_t *m, int i)
{
    const train_data *d = &t->d;
    const smelt_tensor_t *x = d->x[i];
    const char *nm = smelt_graph_input_name(m, i);
    int nd = smelt_graph_input_ndim(m, i);
    if (smelt_tensor_ndim(x) < 1 || smelt_tensor_dim(x, 0) != d->n)
        return sm_err(
            ctx, SMELT_ERR_SHAPE,
            "input '%s' has %lld samples (dim 0), the target %lld", nm,
            (long long)(smelt_tensor_ndim(x) ? smelt_tensor_dim(x, 0) : 0),
            (long long)d->n);
    if (smelt_graph_input_dtype(m, i) != smelt_tensor_dtype(x))
        return sm_err(ctx, SMELT_ERR_TYPE,
                      "input '%s' is %s in the model, %s "
                      "in the data",
                      nm, smelt_dtype_name(smelt_graph_input_dtype(m, i)),
                      smelt_dtype_name(smelt_tensor_dtype(x)));
    if (nd >= 0 && nd != smelt_tensor_ndim(x))
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "input '%s' has rank %d in the model, %d in its file", nm,
                      nd, smelt_tensor_ndim(x));
    for (int a = 1; a < nd; a++) {
        int64_t want = smelt_graph_input_dim(m, i, a);
        if (want >= 0 && want != smelt_tensor_dim(x, a))
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "input '%s' dim %d is %lld in the model, %lld in "
                          "its file",
                          nm, a, (long long)want,
                          (long long)smelt_tensor_dim(x, a));
    }
    int64_t b0 = nd > 0 ? smelt_graph_input_dim(m, i, 0) : -1;
    if (b0 >= 0 && b0 != t->o.batch_size)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "input '%s' has a fixed batch of %lld; batch_size "
                      "must be %lld",
                      nm, (long long)b0, (long long)b0);
    return SMELT_OK;
}

/* Takes the inputs and the target, checks they agree with the model and
 * with each other, and splits the samples. */
static smelt_status take_data(smelt_ctx_t *ctx, smelt_trainer_t *t,
                              const smelt_graph_t *m,
                              const smelt_tensor_t *const *inputs, int n_inputs,
                              const smelt_tensor_t *target)
{
    train_data *d = &t->d;
    if (n_inputs != smelt_graph_num_inputs(m))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "the model has %d inputs, the data %d",
                      smelt_graph_num_inputs(m), n_inputs);
    d->x = sm_calloc((size_t)(n_inputs > 0 ? n_inputs : 1), sizeof *d->x);
    if (!d->x)
        return sm_err_nomem(ctx);
    d->n_x = n_inputs;
    for (int i = 0; i < n_inputs; i++) {
        if (!inputs[i])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG, "input %d is NULL", i);
        d->x[i] = inputs[i];
    }
    SM_TRY(take_target(ctx, t, target));
    SM_TRY(smelt_loss_check_target(ctx, m, t->loss, d->y));
    d->n = smelt_tensor_ndim(d->y) > 0 ? smelt_tensor_dim(d->y, 0) : 0;
    for (int i = 0; i < d->n_x; i++)
        SM_TRY(check_input(ctx, t, m, i));
    if (train_data_split(d, t->o.val_fraction, t->o.seed))
        return sm_err_nomem(ctx);
    if (d->n_train < t->o.batch_size)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "batch_size %lld is more than the %lld training "
                      "samples",
                      (long long)t->o.batch_size, (long long)d->n_train);
    return SMELT_OK;
}

/* The model with its symbolic batch dims bound to the batch size (the
 * backward rules need sizes), in *out. */
static smelt_status bind_batch(smelt_ctx_t *ctx, const smelt_trainer_t *t,
                               const smelt_graph_t *m, smelt_graph_t **out)
{
    SM_TRY(smelt_graph_clone(ctx, m, out));
    char dims[1024] = "";
    size_t k = 0;
    for (int i = 0; i < smelt_graph_num_inputs(m); i++) {
        const char *sym = smelt_graph_input_dim_name(m, i, 0);
        if (smelt_graph_input_dim(m, i, 0) >= 0)
            continue;
        if (!sym)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "input '%s' has an unknown dim 0 without a name; "
                          "the batch dim must be fixed or named",
                          smelt_graph_input_name(m, i));
        k += (size_t)snprintf(dims + k, k < sizeof dims ? sizeof dims - k : 0,
                              "%s%s=%lld", k ? "," : "", sym,
                              (long long)t->o.batch_size);
    }
    if (k >= sizeof dims)
        return sm_err(ctx, SMELT_ERR_LIMIT, "too many batch dims");
    if (k)
        SM_TRY(smelt_graph_bind_dims(ctx, *out, dims));
    return SMELT_OK;
}

/* The training step (on the model bound to the batch size) and the
 * evaluation graph (symbolic: it also runs a last partial batch). */
static smelt_status build_graphs(smelt_ctx_t *ctx, smelt_trainer_t *t,
                                 const smelt_graph_t *m)
{
    smelt_graph_t *mb = NULL, *l = NULL, *j = NULL, *le = NULL;
    smelt_grad_options go;
    smelt_grad_options_default(&go);
    go.wrt = (const char *const *)t->names;
    go.n_wrt = t->np;
    go.params_as_inputs = 1;
    smelt_status st = bind_batch(ctx, t, m, &mb);
    if (st == SMELT_OK)
        st = smelt_graph_add_loss(ctx, mb, t->loss, &l);
    if (st == SMELT_OK)
        st = smelt_graph_grad(ctx, l, &go, &j);
    if (st == SMELT_OK)
        st = smelt_graph_add_optimizer(ctx, j, &t->optim, &t->step_g);
    if (st == SMELT_OK)
        st = smelt_graph_add_loss(ctx, m, t->loss, &le);
    if (st == SMELT_OK)
        st = smelt_graph_lift_initializers(
            ctx, le, (const char *const *)t->names, t->np, &t->eval_g);
    smelt_graph_free(mb);
    smelt_graph_free(l);
    smelt_graph_free(j);
    smelt_graph_free(le);
    return st;
}

/* A zeroed tensor of src's dtype and shape with dim 0 set to rows (when
 * rows >= 0), in *out. */
static smelt_status rows_like(smelt_ctx_t *ctx, const smelt_tensor_t *src,
                              int64_t rows, smelt_tensor_t **out)
{
    int nd = smelt_tensor_ndim(src);
    int64_t dims[SMELT_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        dims[i] = smelt_tensor_dim(src, i);
    if (nd > 0 && rows >= 0)
        dims[0] = rows;
    SM_TRY(smelt_tensor_init(ctx, smelt_tensor_dtype(src), nd, dims, out));
    memset(smelt_tensor_data(*out), 0,
           (size_t)smelt_tensor_numel(*out) *
               train_dtype_size(smelt_tensor_dtype(*out)));
    return SMELT_OK;
}

/* The step's input buffers (a batch, the weights, zero states, lr and
 * step), the plan compiled for them, and its output buffers. */
static smelt_status compile_step(smelt_ctx_t *ctx, smelt_trainer_t *t,
                                 const smelt_graph_t *m)
{
    smelt_graph_t *s = t->step_g;
    t->n_in = smelt_graph_num_inputs(s);
    t->n_out = smelt_graph_num_outputs(s);
    t->in = sm_calloc((size_t)t->n_in, sizeof *t->in);
    t->out = sm_calloc((size_t)t->n_out, sizeof *t->out);
    if (!t->in || !t->out)
        return sm_err_nomem(ctx);
    for (int i = 0; i < t->d.n_x; i++)
        SM_TRY(rows_like(ctx, t->d.x[i], t->o.batch_size, &t->in[i]));
    SM_TRY(rows_like(ctx, t->d.y, t->o.batch_size, &t->in[t->d.n_x]));
    t->ns = smelt_graph_optim_num_states(s);
    for (int i = 0; i < t->np; i++) {
        int pi = smelt_graph_optim_param_input(s, i);
        SM_TRY(smelt_graph_initializer_get(ctx, m, t->names[i], &t->in[pi]));
        t->n_weights += smelt_tensor_numel(t->in[pi]);
        for (int k = 0; k < t->ns; k++)
            SM_TRY(rows_like(ctx, t->in[pi], -1,
                             &t->in[smelt_graph_optim_state_input(s, i, k)]));
    }
    int64_t none[1] = {0};
    SM_TRY(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 0, none,
                             &t->in[smelt_graph_optim_lr_input(s)]));
    SM_TRY(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 0, none,
                             &t->in[smelt_graph_optim_step_input(s)]));
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = t->o.threads > 0 ? t->o.threads : 1;
    po.inputs = t->in;
    po.n_inputs = t->n_in;
    po.memory_budget = t->o.memory_budget;
    SM_TRY(smelt_plan_compile(ctx, s, &po, &t->plan));
    SM_TRY(smelt_session_init(ctx, t->plan, &t->sess));
    for (int i = 0; i < t->n_out; i++) {
        int nd = smelt_plan_output_ndim(t->plan, i);
        int64_t dims[SMELT_MAX_DIMS];
        for (int a = 0; a < nd; a++)
            dims[a] = smelt_plan_output_dim(t->plan, i, a);
        SM_TRY(smelt_tensor_init(ctx, smelt_plan_output_dtype(t->plan, i), nd,
                                 dims, &t->out[i]));
    }
    return SMELT_OK;
}

/* The fingerprint of the set-up a checkpoint must share. */
static uint64_t fingerprint(const smelt_trainer_t *t)
{
    uint64_t h = train_fnv(TRAIN_FNV_INIT, t->loss, strlen(t->loss) + 1);
    int64_t v[5] = {t->optim.kind, t->o.batch_size, (int64_t)t->o.seed, t->d.n,
                    t->d.n_val};
    h = train_fnv(h, v, sizeof v);
    if (!t->o.shuffle) /* only then, so shuffled runs keep their print */
        h = train_fnv(h, "in order", 9);
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
static smelt_status checkpoint_names(smelt_ctx_t *ctx, smelt_trainer_t *t)
{
    smelt_graph_t *s = t->step_g;
    t->n_ck = t->np * (1 + t->ns);
    t->ck_names = sm_calloc((size_t)t->n_ck, sizeof *t->ck_names);
    t->ck_in = sm_calloc((size_t)t->n_ck, sizeof *t->ck_in);
    t->ck_out = sm_calloc((size_t)t->n_ck, sizeof *t->ck_out);
    if (!t->ck_names || !t->ck_in || !t->ck_out)
        return sm_err_nomem(ctx);
    int c = 0;
    for (int i = 0; i < t->np; i++) {
        for (int k = -1; k < t->ns; k++, c++) {
            t->ck_in[c] = k < 0 ? smelt_graph_optim_param_input(s, i)
                                : smelt_graph_optim_state_input(s, i, k);
            t->ck_out[c] = k < 0 ? smelt_graph_optim_param_output(s, i)
                                 : smelt_graph_optim_state_output(s, i, k);
            t->ck_names[c] = sm_strdup(smelt_graph_input_name(s, t->ck_in[c]));
            if (!t->ck_names[c])
                return sm_err_nomem(ctx);
        }
    }
    t->fingerprint = fingerprint(t);
    return SMELT_OK;
}

smelt_status smelt_trainer_create(smelt_ctx_t *ctx, const smelt_graph_t *model,
                                  const smelt_tensor_t *const *inputs,
                                  int n_inputs, const smelt_tensor_t *target,
                                  const smelt_train_options *opt,
                                  smelt_trainer_t **out)
{
    if (!out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trainer_create: out is NULL");
    *out = NULL;
    if (!model || !target || !opt || n_inputs < 0 || (n_inputs && !inputs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trainer_create: a NULL model, target, inputs or "
                      "options");
    smelt_trainer_t *t = sm_calloc(1, sizeof *t);
    if (!t)
        return sm_err_nomem(ctx);
    t->last_ckpt = -1;
    smelt_status st = read_options(ctx, t, opt);
    if (st == SMELT_OK)
        st = pick_params(ctx, t, model);
    if (st == SMELT_OK)
        st = take_data(ctx, t, model, inputs, n_inputs, target);
    if (st == SMELT_OK)
        st = build_graphs(ctx, t, model);
    if (st == SMELT_OK)
        st = compile_step(ctx, t, model);
    if (st == SMELT_OK)
        st = checkpoint_names(ctx, t);
    if (st == SMELT_OK) {
        t->spe = t->d.n_train / t->o.batch_size;
        t->total = t->spe * t->o.epochs;
        t->p =
            (train_pos){.rng_epoch = t->o.seed, .fingerprint = t->fingerprint};
        t->order = sm_malloc((size_t)t->d.n_train * sizeof *t->order);
        if (!t->order)
            st = sm_err_nomem(ctx);
    }
    if (st == SMELT_OK && t->o.resume)
        st = train_resume(ctx, t);
    if (st != SMELT_OK) {
        smelt_trainer_free(t);
        return st;
    }
    *out = t;
    return SMELT_OK;
}

smelt_status smelt_trainer_get_info(const smelt_trainer_t *t,
                                    smelt_train_info *out)
{
    SM_TRY(sm_sized_check(NULL, "smelt_train_info", out,
                          SM_FIELD_END(smelt_train_info, val_index)));
    if (!t)
        return SMELT_ERR_INVALID_ARG;
    smelt_train_info i = {
        .struct_size = sizeof i,
        .n_params = t->np,
        .n_weights = t->n_weights,
        .n_states = t->ns,
        .n_train = t->d.n_train,
        .n_val = t->d.n_val,
        .steps_per_epoch = t->spe,
        .dropped = t->d.n_train - t->spe * t->o.batch_size,
        .total_steps = t->total,
        .step = (int64_t)t->p.step,
        .epoch = (int64_t)t->p.epoch,
        .batch = (int64_t)t->p.pos,
        .finished = (int64_t)t->p.epoch >= t->o.epochs,
        .cancelled = t->cancelled,
        .resumed = t->resumed,
        .resumed_step = t->resumed_step,
        .resumed_epoch = t->resumed_epoch,
        .resumed_batch = t->resumed_batch,
        .checkpoint_step = t->last_ckpt,
        .n_steps_run = t->h.n,
        .step_loss = t->h.loss,
        .step_accuracy = t->h.acc,
        .n_epochs_run = t->h.ne,
        .epoch_loss = t->h.e_loss,
        .epoch_accuracy = t->h.e_acc,
        .val_loss = t->h.v_loss,
        .val_accuracy = t->h.v_acc,
        .samples_per_s = t->h.sps,
        .val_index = t->d.val,
    };
    sm_sized_out(out, &i, sizeof i);
    return SMELT_OK;
}

smelt_status smelt_trainer_write_weights(smelt_ctx_t *ctx,
                                         const smelt_trainer_t *t,
                                         smelt_graph_t *g)
{
    if (!t || !g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trainer_write_weights: a NULL trainer or graph");
    for (int i = 0; i < t->np; i++)
        SM_TRY(smelt_graph_initializer_set(
            ctx, g, t->names[i],
            t->in[smelt_graph_optim_param_input(t->step_g, i)]));
    return SMELT_OK;
}

const smelt_plan_t *smelt_trainer_plan(const smelt_trainer_t *t)
{
    return t ? t->plan : NULL;
}

smelt_session_t *smelt_trainer_session(smelt_trainer_t *t)
{
    return t ? t->sess : NULL;
}

void smelt_trainer_free(smelt_trainer_t *t)
{
    if (!t)
        return;
    for (int i = 0; t->in && i < t->n_in; i++)
        smelt_tensor_free(t->in[i]);
    for (int i = 0; t->out && i < t->n_out; i++)
        smelt_tensor_free(t->out[i]);
    sm_free(t->in);
    sm_free(t->out);
    for (int i = 0; t->ck_names && i < t->n_ck; i++)
        sm_free(t->ck_names[i]);
    sm_free(t->ck_names);
    sm_free(t->ck_in);
    sm_free(t->ck_out);
    for (int i = 0; t->names && i < t->np; i++)
        sm_free(t->names[i]);
    sm_free(t->names);
    sm_free(t->order);
    train_hist *h = &t->h;
    double *arrs[] = {h->loss,   h->acc,   h->e_loss, h->e_acc,
                      h->v_loss, h->v_acc, h->sps};
    for (size_t i = 0; i < sizeof arrs / sizeof *arrs; i++)
        sm_free(arrs[i]);
    smelt_session_free(t->sess);
    smelt_plan_free(t->plan);
    smelt_graph_free(t->step_g);
    smelt_graph_free(t->eval_g);
    train_data_free(&t->d);
    sm_free(t->loss);
    sm_free(t->freeze);
    sm_free(t->ckpt_dir);
    sm_free(t);
}
