/*
 * test_train_api.c - the training loop as a library call (smelt_trainer_*,
 * docs/TRAINING.md): a run's progress events, schedule and history; a
 * run stopped by its callback or by the ctx's cancel hook and continued,
 * and one resumed from its checkpoint, ending with the same bytes as an
 * uninterrupted run; the errors of bad models, data and options; a NaN
 * loss; and every allocation failure of create and run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"

/* A tanh MLP 3 -> 6 -> 2 over a symbolic batch. */
static const char *MLP =
    "graph mlp(%x: f32[batch,3]) {\n"
    "  %w0: f32[3,6] = const [0.5, -0.3, 0.8, 0.1, -0.6, 0.4, 0.2, 0.7, "
    "-0.5, 0.3, 0.9, -0.2, -0.4, 0.6, 0.1, -0.8, 0.3, 0.5]\n"
    "  %b0: f32[6] = const [0.05, -0.1, 0.0, 0.1, -0.05, 0.02]\n"
    "  %w1: f32[6,2] = const [0.3, -0.2, 0.4, 0.6, -0.5, 0.1, 0.2, -0.7, "
    "0.8, 0.05, -0.3, 0.4]\n"
    "  %b1: f32[2] = const [0.0, 0.1]\n"
    "  %m0: f32[batch,6] = MatMul(%x, %w0)\n"
    "  %a0: f32[batch,6] = Add(%m0, %b0)\n"
    "  %t0: f32[batch,6] = Tanh(%a0)\n"
    "  %m1: f32[batch,2] = MatMul(%t0, %w1)\n"
    "  %y: f32[batch,2] = Add(%m1, %b1)\n"
    "  return %y\n"
    "}\n";

#define N 45

/* N samples of 3 features and their regression target (2 values) or
 * class (0 or 1), from a fixed generator. */
static void make_data(smelt_ctx_t *ctx, smelt_tensor_t **x,
                      smelt_tensor_t **reg, smelt_tensor_t **cls)
{
    int64_t dx[2] = {N, 3}, dy[2] = {N, 2}, dc[1] = {N};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dx, x),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dy, reg),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 1, dc, cls),
                     SMELT_OK);
    float *xv = smelt_tensor_data(*x), *yv = smelt_tensor_data(*reg);
    int64_t *cv = smelt_tensor_data(*cls);
    uint64_t s = 12345;
    for (int i = 0; i < N * 3; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        xv[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1);
    }
    for (int i = 0; i < N; i++) {
        yv[2 * i] = tanhf(xv[3 * i] + 0.5f * xv[3 * i + 1]);
        yv[2 * i + 1] = xv[3 * i + 2] * xv[3 * i];
        cv[i] = xv[3 * i] + xv[3 * i + 1] > 0;
    }
}

/* What the callback saw, and when it stops the run. */
typedef struct seen {
    int steps, epochs;
    int64_t last_step, stop_at;
    double lr[64], loss[64];
    int flag_at_stop; /* set `flag` instead of answering */
    int flag;
    const smelt_train_options *o;
} seen;

static int on_progress(void *user, const smelt_train_progress *p)
{
    seen *s = user;
    assert_true(p->struct_size == sizeof *p);
    if (p->event == SMELT_TRAIN_EPOCH) {
        s->epochs++;
        assert_int_equal(p->batch, p->steps_per_epoch);
        assert_true(p->steps >= 0 && p->steps <= p->steps_per_epoch);
        return 0;
    }
    assert_int_equal(p->event, SMELT_TRAIN_STEP);
    assert_int_equal(p->step, s->last_step + 1);
    assert_true(p->batch >= 1 && p->batch <= p->steps_per_epoch);
    assert_int_equal(p->total_steps, p->epochs * p->steps_per_epoch);
    assert_true(isfinite(p->loss) && p->seconds >= 0);
    s->last_step = p->step;
    if (p->step <= 64) {
        s->lr[p->step - 1] = p->lr;
        s->loss[p->step - 1] = p->loss;
    }
    s->steps++;
    if (p->step == s->stop_at) {
        if (s->flag_at_stop) {
            s->flag = 1;
            return 0;
        }
        return 1;
    }
    return 0;
}

static int cancel_hook(void *user)
{
    return ((seen *)user)->flag;
}

/* Options of the runs below: Adam, warm-up and cosine, a validation
 * split, batches of 6 (36 training samples: 6 steps an epoch). */
static void options(smelt_train_options *o, smelt_optim_options *oo, seen *s)
{
    smelt_train_options_default(o);
    smelt_optim_options_default(oo);
    oo->kind = SMELT_OPTIM_ADAM;
    o->optim = oo;
    o->lr = 0.02;
    o->warmup = 3;
    o->schedule = SMELT_SCHEDULE_COSINE;
    o->epochs = 4;
    o->batch_size = 6;
    o->seed = 17;
    o->val_fraction = 0.2;
    o->callback = on_progress;
    o->user = s;
    memset(s, 0, sizeof *s);
    s->o = o;
}

/* The trained weights of t, as bytes of the model's initializers. */
static void weights(smelt_ctx_t *ctx, smelt_trainer_t *t,
                    const smelt_graph_t *m, char *buf, size_t cap, size_t *len)
{
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_clone(ctx, m, &g), SMELT_OK);
    assert_int_equal(smelt_trainer_write_weights(ctx, t, g), SMELT_OK);
    *len = 0;
    for (int i = 0; i < smelt_graph_num_initializers(g); i++) {
        smelt_tensor_t *w = NULL;
        assert_int_equal(smelt_graph_initializer_get(
                             ctx, g, smelt_graph_initializer_name(g, i), &w),
                         SMELT_OK);
        size_t n = (size_t)smelt_tensor_numel(w) * 4;
        assert_true(*len + n <= cap);
        memcpy(buf + *len, smelt_tensor_data(w), n);
        *len += n;
        smelt_tensor_free(w);
    }
    smelt_graph_free(g);
}

static void test_run_and_history(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *m = tu_parse(ctx, MLP);
    smelt_tensor_t *x, *y, *c;
    make_data(ctx, &x, &y, &c);
    smelt_train_options o;
    smelt_optim_options oo;
    seen s;
    options(&o, &oo, &s);
    smelt_trainer_t *t = NULL;
    const smelt_tensor_t *in[1] = {x};
    if (smelt_trainer_create(ctx, m, in, 1, y, &o, &t) != SMELT_OK)
        fail_msg("create: %s", smelt_ctx_error(ctx));
    smelt_train_info i = SMELT_STRUCT_INIT(smelt_train_info);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_int_equal(i.n_params, 4);
    assert_int_equal(i.n_weights, 18 + 6 + 12 + 2);
    assert_int_equal(i.n_states, 2); /* Adam's exp_avg, exp_avg_sq */
    assert_int_equal(i.n_val, 9);
    assert_int_equal(i.n_train, 36);
    assert_int_equal(i.steps_per_epoch, 6);
    assert_int_equal(i.total_steps, 24);
    assert_int_equal(i.step, 0);
    assert_int_equal(i.resumed, 0);
    assert_int_equal(i.checkpoint_step, -1);
    assert_non_null(smelt_trainer_plan(t));
    assert_non_null(smelt_trainer_session(t));
    /* the held-out samples: distinct, sorted, in range */
    for (int64_t k = 0; k < i.n_val; k++) {
        assert_true(i.val_index[k] >= 0 && i.val_index[k] < N);
        if (k)
            assert_true(i.val_index[k] > i.val_index[k - 1]);
    }
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_OK);
    assert_int_equal(s.steps, 24);
    assert_int_equal(s.epochs, 4);
    /* the schedule: warm-up 1/3, 2/3, 1 of the peak, then cosine to 0 */
    assert_true(fabs(s.lr[0] - 0.02 / 3) < 1e-15);
    assert_true(fabs(s.lr[2] - 0.02) < 1e-15);
    double mid = 0.02 * 0.5 * (1 + cos(3.14159265358979323846 * 10 / 21));
    assert_true(fabs(s.lr[13] - mid) < 1e-15);
    assert_true(s.lr[23] < s.lr[13] && s.lr[23] > 0);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_true(i.finished && !i.cancelled);
    assert_int_equal(i.step, 24);
    assert_int_equal(i.n_steps_run, 24);
    assert_int_equal(i.n_epochs_run, 4);
    for (int k = 0; k < 24; k++) {
        assert_true(i.step_loss[k] == s.loss[k]);
        assert_true(isnan(i.step_accuracy[k])); /* mse judges nothing */
    }
    assert_true(i.epoch_loss[3] < i.epoch_loss[0]);
    assert_true(i.val_loss[3] < i.val_loss[0]);
    assert_true(isnan(i.val_accuracy[0]) && i.samples_per_s[0] > 0);
    /* a second run has nothing left to do */
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_OK);
    assert_int_equal(s.steps, 24);
    smelt_trainer_free(t);

    /* cross_entropy with int32 classes (widened), SGD, no shuffle: the
     * accuracy is judged, and the run learns the two classes */
    int64_t dc[2] = {N, 2};
    smelt_tensor_t *c32 = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I32, 1, dc, &c32),
                     SMELT_OK);
    for (int k = 0; k < N; k++)
        ((int32_t *)smelt_tensor_data(c32))[k] =
            (int32_t)((int64_t *)smelt_tensor_data(c))[k];
    options(&o, &oo, &s);
    oo.kind = SMELT_OPTIM_SGD;
    oo.momentum = 0.9;
    o.loss = "cross_entropy";
    o.lr = 0.2;
    o.warmup = 0;
    o.schedule = SMELT_SCHEDULE_CONSTANT;
    o.epochs = 12;
    o.batch_size = 9;
    o.val_fraction = 0;
    o.shuffle = 0;
    o.callback = NULL;
    if (smelt_trainer_create(ctx, m, in, 1, c32, &o, &t) != SMELT_OK)
        fail_msg("create: %s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_OK);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_int_equal(i.n_val, 0);
    assert_int_equal(i.n_steps_run, 12 * 5);
    assert_true(i.step_accuracy[0] >= 0 && i.step_accuracy[0] <= 1);
    assert_true(i.epoch_accuracy[11] >= 0.9);
    assert_true(isnan(i.val_loss[0]));
    smelt_trainer_free(t);
    smelt_tensor_free(c32);
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_tensor_free(c);
    smelt_graph_free(m);
    smelt_ctx_free(ctx);
}

/* The weights of an uninterrupted run of the options above into buf. */
static void reference_run(smelt_ctx_t *ctx, const smelt_graph_t *m,
                          smelt_tensor_t *x, smelt_tensor_t *y, const char *dir,
                          char *buf, size_t cap, size_t *len)
{
    smelt_train_options o;
    smelt_optim_options oo;
    seen s;
    options(&o, &oo, &s);
    o.checkpoint_dir = dir;
    o.checkpoint_every = dir ? 4 : 0;
    smelt_trainer_t *t = NULL;
    const smelt_tensor_t *in[1] = {x};
    assert_int_equal(smelt_trainer_create(ctx, m, in, 1, y, &o, &t), SMELT_OK);
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_OK);
    weights(ctx, t, m, buf, cap, len);
    smelt_trainer_free(t);
}

static void test_cancel_and_continue(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *m = tu_parse(ctx, MLP);
    smelt_tensor_t *x, *y, *c;
    make_data(ctx, &x, &y, &c);
    char want[1024], got[1024];
    size_t nw, ng;
    reference_run(ctx, m, x, y, NULL, want, sizeof want, &nw);
    const smelt_tensor_t *in[1] = {x};
    /* stopped by the callback (at step 5, mid-epoch; at step 12, an
     * epoch's end), then by the ctx's cancel hook (step 19), each time
     * continued by calling run again */
    smelt_train_options o;
    smelt_optim_options oo;
    seen s;
    options(&o, &oo, &s);
    smelt_trainer_t *t = NULL;
    assert_int_equal(smelt_trainer_create(ctx, m, in, 1, y, &o, &t), SMELT_OK);
    int64_t stops[2] = {5, 12};
    smelt_train_info i = SMELT_STRUCT_INIT(smelt_train_info);
    for (int k = 0; k < 2; k++) {
        s.stop_at = stops[k];
        assert_int_equal(smelt_trainer_run(ctx, t), SMELT_ERR_LIMIT);
        assert_non_null(strstr(smelt_ctx_error(ctx), "cancelled after step"));
        assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
        assert_true(i.cancelled && !i.finished);
        assert_int_equal(i.step, stops[k]);
    }
    s.stop_at = 19;
    s.flag_at_stop = 1;
    smelt_ctx_set_cancel(ctx, cancel_hook, &s);
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_ERR_LIMIT);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_int_equal(i.step, 19);
    assert_int_equal(i.epoch, 3);
    assert_int_equal(i.batch, 1);
    smelt_ctx_set_cancel(ctx, NULL, NULL);
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_OK);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_true(i.finished && !i.cancelled);
    assert_int_equal(i.n_steps_run, 24);
    weights(ctx, t, m, got, sizeof got, &ng);
    assert_int_equal(ng, nw);
    assert_memory_equal(got, want, nw);
    smelt_trainer_free(t);
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_tensor_free(c);
    smelt_graph_free(m);
    smelt_ctx_free(ctx);
}

static void test_checkpoint_resume(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/smelt_train_api_XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *m = tu_parse(ctx, MLP);
    smelt_tensor_t *x, *y, *c;
    make_data(ctx, &x, &y, &c);
    char want[1024], got[1024];
    size_t nw, ng;
    reference_run(ctx, m, x, y, a, want, sizeof want, &nw);
    const smelt_tensor_t *in[1] = {x};
    smelt_train_options o;
    smelt_optim_options oo;
    seen s;
    /* stopped at step 10: the last checkpoint is step 8's */
    options(&o, &oo, &s);
    o.checkpoint_dir = b;
    o.checkpoint_every = 4;
    s.stop_at = 10;
    smelt_trainer_t *t = NULL;
    assert_int_equal(smelt_trainer_create(ctx, m, in, 1, y, &o, &t), SMELT_OK);
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_ERR_LIMIT);
    smelt_train_info i = SMELT_STRUCT_INIT(smelt_train_info);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_int_equal(i.checkpoint_step, 8);
    smelt_trainer_free(t);
    /* a new trainer resumes from step 8 and ends as the reference */
    options(&o, &oo, &s);
    o.checkpoint_dir = b;
    o.checkpoint_every = 4;
    o.resume = 1;
    s.last_step = 8;
    assert_int_equal(smelt_trainer_create(ctx, m, in, 1, y, &o, &t), SMELT_OK);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_int_equal(i.resumed, 1);
    assert_int_equal(i.resumed_step, 8);
    assert_int_equal(i.resumed_epoch, 1);
    assert_int_equal(i.resumed_batch, 2);
    assert_int_equal(i.step, 8);
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_OK);
    assert_int_equal(s.steps, 16);
    weights(ctx, t, m, got, sizeof got, &ng);
    assert_int_equal(ng, nw);
    assert_memory_equal(got, want, nw);
    smelt_trainer_free(t);
    /* the final checkpoints are the same bytes */
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/checkpoint.smck", a);
    snprintf(pb, sizeof pb, "%s/checkpoint.smck", b);
    size_t la = 0, lb = 0;
    char *ca = tu_read_file(pa, &la), *cb = tu_read_file(pb, &lb);
    assert_non_null(ca);
    assert_non_null(cb);
    assert_int_equal(la, lb);
    assert_memory_equal(ca, cb, la);
    free(ca);
    free(cb);
    /* another batch size is another set-up: refused, the file kept */
    options(&o, &oo, &s);
    o.checkpoint_dir = b;
    o.resume = 1;
    o.batch_size = 5;
    assert_int_not_equal(smelt_trainer_create(ctx, m, in, 1, y, &o, &t),
                         SMELT_OK);
    assert_null(t);
    assert_non_null(strstr(smelt_ctx_error(ctx), "resume: "));
    assert_non_null(strstr(smelt_ctx_error(ctx), "another set-up"));
    cb = tu_read_file(pb, &lb);
    assert_int_equal(la, lb);
    free(cb);
    /* resume with no checkpoint yet: from step 0 */
    snprintf(pa, sizeof pa, "%s/none", dir);
    options(&o, &oo, &s);
    o.checkpoint_dir = pa;
    o.resume = 1;
    o.epochs = 1;
    assert_int_equal(smelt_trainer_create(ctx, m, in, 1, y, &o, &t), SMELT_OK);
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_int_equal(i.resumed, -1);
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_OK);
    smelt_trainer_free(t);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    char *out = NULL;
    assert_int_equal(tu_sh(NULL, cmd, &out), 0);
    free(out);
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_tensor_free(c);
    smelt_graph_free(m);
    smelt_ctx_free(ctx);
}

/* create fails with a message holding `what`, and *out NULL. */
static void expect_fail(smelt_ctx_t *ctx, const smelt_graph_t *m,
                        const smelt_tensor_t *const *in, int n,
                        const smelt_tensor_t *y, const smelt_train_options *o,
                        const char *what)
{
    smelt_trainer_t *t = (smelt_trainer_t *)1;
    smelt_status st = smelt_trainer_create(ctx, m, in, n, y, o, &t);
    if (st == SMELT_OK)
        fail_msg("created, expected an error with '%s'", what);
    assert_null(t);
    if (!strstr(smelt_ctx_error(ctx), what))
        fail_msg("error '%s' lacks '%s'", smelt_ctx_error(ctx), what);
    assert_null(strchr(smelt_ctx_error(ctx), '\n'));
}

static void test_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *m = tu_parse(ctx, MLP);
    smelt_tensor_t *x, *y, *c;
    make_data(ctx, &x, &y, &c);
    const smelt_tensor_t *in[2] = {x, x};
    smelt_train_options o;
    smelt_train_options_default(&o);
    o.batch_size = 8;
    expect_fail(ctx, NULL, in, 1, y, &o, "NULL");
    expect_fail(ctx, m, in, 1, NULL, &o, "NULL");
    expect_fail(ctx, m, in, 1, y, NULL, "NULL");
    assert_int_equal(smelt_trainer_create(ctx, m, in, 1, y, &o, NULL),
                     SMELT_ERR_INVALID_ARG);
    o.loss = "hinge";
    expect_fail(ctx, m, in, 1, y, &o, "loss 'hinge'");
    o.loss = "mse";
    o.batch_size = 0;
    expect_fail(ctx, m, in, 1, y, &o, "batch_size must be at least 1");
    o.batch_size = 8;
    o.val_fraction = 1.0;
    expect_fail(ctx, m, in, 1, y, &o, "val_fraction");
    o.val_fraction = 0;
    o.resume = 1;
    expect_fail(ctx, m, in, 1, y, &o, "need a checkpoint_dir");
    o.resume = 0;
    o.schedule = 7;
    expect_fail(ctx, m, in, 1, y, &o, "schedule");
    o.schedule = 0;
    o.lr = NAN;
    expect_fail(ctx, m, in, 1, y, &o, "lr must be");
    o.lr = 0.01;
    smelt_train_options garbage = o;
    garbage.struct_size = 3;
    expect_fail(ctx, m, in, 1, y, &garbage, "smelt_train_options");
    smelt_optim_options oo;
    smelt_optim_options_default(&oo);
    oo.kind = 9;
    o.optim = &oo;
    expect_fail(ctx, m, in, 1, y, &o, "SGD, Adam or AdamW");
    o.optim = NULL;
    /* data against the model */
    expect_fail(ctx, m, in, 2, y, &o, "the model has 1 inputs, the data 2");
    expect_fail(ctx, m, in, 1, c, &o, "target: mse");
    o.loss = "cross_entropy";
    expect_fail(ctx, m, in, 1, y, &o, "class indices");
    o.loss = "mse";
    int64_t d_short[2] = {20, 2}, d_wide[2] = {N, 4};
    smelt_tensor_t *ys = NULL, *xw = NULL, *x64 = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d_short, &ys),
                     SMELT_OK);
    memset(smelt_tensor_data(ys), 0, 20 * 2 * 4);
    expect_fail(ctx, m, in, 1, ys, &o,
                "input 'x' has 45 samples (dim 0), the target 20");
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d_wide, &xw),
                     SMELT_OK);
    memset(smelt_tensor_data(xw), 0, N * 4 * 4);
    const smelt_tensor_t *inw[1] = {xw};
    expect_fail(ctx, m, inw, 1, y, &o, "input 'x' dim 1 is 3 in the model, 4");
    int64_t d64[2] = {N, 3};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F64, 2, d64, &x64),
                     SMELT_OK);
    memset(smelt_tensor_data(x64), 0, N * 3 * 8);
    const smelt_tensor_t *in64[1] = {x64};
    expect_fail(ctx, m, in64, 1, y, &o, "input 'x' is f32 in the model, f64");
    o.batch_size = 40;
    o.val_fraction = 0.2;
    expect_fail(ctx, m, in, 1, y, &o,
                "batch_size 40 is more than the 36 training samples");
    o.batch_size = 8;
    o.val_fraction = 0;
    o.freeze = "w*,b*";
    expect_fail(ctx, m, in, 1, y, &o, "freezes every floating-point");
    o.freeze = NULL;
    smelt_graph_t *noinit = tu_parse(ctx, "graph n(%x: f32[batch,3]) {\n"
                                          "  %y: f32[batch,3] = Relu(%x)\n"
                                          "  return %y\n}\n");
    int64_t d3[2] = {N, 3};
    smelt_tensor_t *y3 = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d3, &y3),
                     SMELT_OK);
    memset(smelt_tensor_data(y3), 0, N * 3 * 4);
    expect_fail(ctx, noinit, in, 1, y3, &o, "no floating-point initializers");
    /* run, info and weights with NULLs */
    assert_int_equal(smelt_trainer_run(ctx, NULL), SMELT_ERR_INVALID_ARG);
    smelt_train_info i = SMELT_STRUCT_INIT(smelt_train_info);
    assert_int_not_equal(smelt_trainer_get_info(NULL, &i), SMELT_OK);
    assert_int_not_equal(smelt_trainer_get_info(NULL, NULL), SMELT_OK);
    smelt_train_info tiny = {.struct_size = 3};
    assert_int_equal(smelt_trainer_get_info(NULL, &tiny),
                     SMELT_ERR_INVALID_ARG);
    /* options of an older or newer caller: the init fills only its size */
    unsigned char opts[sizeof(smelt_train_options) + 16];
    memset(opts, 0xA5, sizeof opts);
    assert_int_equal(smelt_train_options_init((smelt_train_options *)opts,
                                              sizeof(smelt_train_options)),
                     SMELT_OK);
    assert_int_equal(opts[sizeof(smelt_train_options)], 0xA5);
    assert_int_equal(((smelt_train_options *)opts)->batch_size, 32);
    assert_int_equal(smelt_train_options_init((smelt_train_options *)opts, 2),
                     SMELT_ERR_INVALID_ARG);
    assert_int_not_equal(smelt_trainer_write_weights(ctx, NULL, m), SMELT_OK);
    assert_null(smelt_trainer_plan(NULL));
    assert_null(smelt_trainer_session(NULL));
    smelt_trainer_free(NULL);
    /* a loss that blows up stops at its step, naming it */
    o.lr = 1e30;
    o.epochs = 5;
    smelt_trainer_t *t = NULL;
    smelt_tensor_t *big = NULL;
    int64_t dy[2] = {N, 2};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dy, &big),
                     SMELT_OK);
    for (int k = 0; k < N * 2; k++)
        ((float *)smelt_tensor_data(big))[k] = 1e30f;
    assert_int_equal(smelt_trainer_create(ctx, m, in, 1, big, &o, &t),
                     SMELT_OK);
    assert_int_equal(smelt_trainer_run(ctx, t), SMELT_ERR_RUNTIME);
    assert_non_null(strstr(smelt_ctx_error(ctx), "the loss is"));
    assert_non_null(strstr(smelt_ctx_error(ctx), "no checkpoint was asked"));
    assert_int_equal(smelt_trainer_get_info(t, &i), SMELT_OK);
    assert_false(i.finished);
    smelt_trainer_free(t);
    smelt_tensor_free(big);
    smelt_tensor_free(y3);
    smelt_graph_free(noinit);
    smelt_tensor_free(ys);
    smelt_tensor_free(xw);
    smelt_tensor_free(x64);
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_tensor_free(c);
    smelt_graph_free(m);
    smelt_ctx_free(ctx);
}

/* Allocations of create and run failing in turn (each of the first 64,
 * then ever sparser): SMELT_ERR_NOMEM
 * and nothing leaked (the sanitizer build checks), until one succeeds. */
static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *m = tu_parse(ctx, MLP);
    smelt_tensor_t *x, *y, *c;
    make_data(ctx, &x, &y, &c);
    const smelt_tensor_t *in[1] = {x};
    smelt_train_options o;
    smelt_optim_options oo;
    seen s;
    options(&o, &oo, &s);
    o.epochs = 1;
    o.callback = NULL;
    int done = 0;
    long k;
    for (k = 0; !done && k < 1000000; k += 1 + k / 64) {
        smelt_trainer_t *t = NULL;
        sm_alloc_fail_after(k);
        smelt_status st = smelt_trainer_create(ctx, m, in, 1, y, &o, &t);
        if (st == SMELT_OK)
            st = smelt_trainer_run(ctx, t);
        sm_alloc_fail_after(-1);
        done = st == SMELT_OK;
        if (!done && st != SMELT_ERR_NOMEM)
            fail_msg("allocation %ld: %s", k, smelt_ctx_error(ctx));
        smelt_trainer_free(t);
    }
    assert_true(done);
    assert_true(k > 100);
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_tensor_free(c);
    smelt_graph_free(m);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_and_history),
        cmocka_unit_test(test_cancel_and_continue),
        cmocka_unit_test(test_checkpoint_resume),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
