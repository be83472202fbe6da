/*
 * gradcheck.c - smelt_gradcheck: the gradients smelt_graph_grad builds,
 * checked against float64 central differences of the forward graph, as
 * PyTorch's torch.autograd.gradcheck does (docs/AUTOGRAD.md).
 *
 * The steps: copy the graph; bind its inputs (given or generated); turn
 * every input that is not checked into a constant, so rules see the
 * fixed integer operands (axes, shapes, indices) as constants; widen the
 * copy to f64 (promote.c); build the joint graph and run it on the
 * reference interpreter; then, per checked element, run the widened
 * forward graph at x+eps and x-eps and compare.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "autograd/promote.h"
#include "core/alloc.h"
#include "core/dtype.h"
#include "core/sized.h"
#include "ir/infer.h"
#include "ir/rewrite.h"

#define GRADCHECK_OPTIONS_V1 SM_FIELD_END(smelt_gradcheck_options, rtol)
#define GRADCHECK_VALUE_V1 SM_FIELD_END(smelt_gradcheck_value, worst_numeric)

struct smelt_gradcheck_report {
    int n, n_failed;
    double loss;
    smelt_gradcheck_value *v; /* names are sm_strdup'd */
};

static void gradcheck_defaults(smelt_gradcheck_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->low = -1.0;
    o->high = 1.0;
    o->loss_reduce = SMELT_LOSS_SUM;
    o->eps = 1e-6;
    o->atol = 1e-5;
    o->rtol = 1e-3;
}

smelt_status smelt_gradcheck_options_init(smelt_gradcheck_options *o,
                                          size_t struct_size)
{
    smelt_gradcheck_options d;
    gradcheck_defaults(&d);
    return sm_sized_init(o, struct_size, &d, sizeof d, GRADCHECK_OPTIONS_V1);
}

typedef struct gc_job {
    smelt_ctx_t *ctx;
    smelt_gradcheck_options o;
    const sm_graph *orig;
    sm_graph *g;    /* the copy: inputs baked, then widened to f64 */
    sm_tensor **in; /* by input of g */
    int n_in;
    int n_wrt;
    const char **wrt; /* names (strings of orig or the caller) */
    int loss_out;     /* output of g that is the loss */
    uint64_t rng;
    smelt_gradcheck_report_t *r;
} gc_job;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A uniform double in [0, 1). */
static double uniform01(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Input i of the copy: the caller's tensor, or a generated one (uniform
 * floats, zero integers) of the declared type, which must be concrete. */
static smelt_status bind_input(gc_job *j, int i)
{
    sm_value *p = j->g->top->params[i];
    char ts[128];
    sm_type_str(&p->type, ts, sizeof ts);
    smelt_tensor_t *given =
        j->o.inputs && i < j->o.n_inputs ? j->o.inputs[i] : NULL;
    if (given) {
        smelt_dtype want = p->type.dtype, got = given->dtype;
        int fw = sm_dtype_is_float(want), fg = sm_dtype_is_float(got);
        if (want != SMELT_DTYPE_UNDEFINED && want != got && !(fw && fg))
            return sm_err(j->ctx, SMELT_ERR_TYPE,
                          "gradcheck: input '%s' is %s, the tensor given for "
                          "it is %s",
                          p->name, ts, smelt_dtype_name(got));
        /* The graph is checked at this shape: symbolic dims become the
         * tensor's, so rules can tell which dims broadcast. */
        sm_type_from_tensor(&j->g->top->params[i]->type, given);
        return sm_tensor_clone(j->ctx, given, &j->in[i]);
    }
    if (!sm_type_known(&p->type))
        return sm_err(j->ctx, SMELT_ERR_SHAPE,
                      "gradcheck: input '%s' is %s: give a tensor for it, "
                      "a value is only made for a concrete type",
                      p->name, ts);
    int64_t dims[SMELT_MAX_DIMS];
    for (int d = 0; d < p->type.ndim; d++)
        dims[d] = p->type.dims[d].size;
    sm_tensor *t = NULL;
    SM_TRY(sm_tensor_new(j->ctx, p->type.dtype, p->type.ndim, dims, &t));
    if (sm_dtype_is_float(t->dtype))
        for (int64_t k = 0; k < t->numel; k++)
            sm_store_f64(t->dtype, t->data, k,
                         j->o.low +
                             (j->o.high - j->o.low) * uniform01(&j->rng));
    j->in[i] = t;
    return SMELT_OK;
}

/* The top-level input or constant named name, or NULL. */
static sm_value *find_leaf(const sm_graph *g, const char *name)
{
    const sm_block *top = g->top;
    for (int i = 0; i < top->n_params; i++)
        if (!strcmp(top->params[i]->name, name))
            return top->params[i];
    for (int i = 0; i < top->n_consts; i++)
        if (!strcmp(top->consts[i]->name, name))
            return top->consts[i];
    return NULL;
}

/* The values to check: the caller's, each a float input or initializer,
 * or by default every float initializer and float input. */
static smelt_status find_wrt(gc_job *j)
{
    const sm_block *top = j->g->top;
    int cap = j->o.wrt ? j->o.n_wrt : top->n_consts + top->n_params;
    if (j->o.wrt && cap <= 0)
        return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_gradcheck: n_wrt is %d with a wrt list", cap);
    j->wrt = sm_calloc((size_t)(cap > 0 ? cap : 1), sizeof *j->wrt);
    if (!j->wrt)
        return sm_err_nomem(j->ctx);
    if (j->o.wrt) {
        for (int i = 0; i < cap; i++) {
            const char *name = j->o.wrt[i];
            sm_value *v = name ? find_leaf(j->g, name) : NULL;
            if (!v)
                return sm_err(j->ctx, SMELT_ERR_NOT_FOUND,
                              "gradcheck: no graph input or initializer is "
                              "named '%s'",
                              name ? name : "(null)");
            if (!sm_dtype_is_float(v->type.dtype))
                return sm_err(j->ctx, SMELT_ERR_TYPE,
                              "gradcheck: '%s' is %s: only floating-point "
                              "values have gradients",
                              name, smelt_dtype_name(v->type.dtype));
            for (int k = 0; k < j->n_wrt; k++)
                if (!strcmp(j->wrt[k], name))
                    return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                                  "gradcheck: '%s' is named twice", name);
            j->wrt[j->n_wrt++] = name;
        }
        return SMELT_OK;
    }
    for (int i = 0; i < top->n_consts; i++)
        if (sm_dtype_is_float(top->consts[i]->type.dtype))
            j->wrt[j->n_wrt++] = top->consts[i]->name;
    for (int i = 0; i < top->n_params; i++)
        if (sm_dtype_is_float(top->params[i]->type.dtype))
            j->wrt[j->n_wrt++] = top->params[i]->name;
    if (!j->n_wrt)
        return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                      "gradcheck: the model has no floating-point input or "
                      "initializer to check");
    return SMELT_OK;
}

static int is_wrt(const gc_job *j, const char *name)
{
    for (int k = 0; k < j->n_wrt; k++)
        if (!strcmp(j->wrt[k], name))
            return 1;
    return 0;
}

/* Turns every input that is not checked into a constant holding its
 * bound value (the input's name moves to the constant), so that rules
 * which need static operands (axes, shapes) find them, and the inputs
 * left are exactly the checked ones. */
static smelt_status bake_inputs(gc_job *j)
{
    sm_rw *rw = NULL;
    SM_TRY(sm_rw_new(j->ctx, j->g, &rw));
    sm_block *top = j->g->top;
    smelt_status st = SMELT_OK;
    for (int i = top->n_params - 1; st == SMELT_OK && i >= 0; i--) {
        sm_value *p = top->params[i];
        if (is_wrt(j, p->name))
            continue;
        sm_value *c = sm_rw_add_const(rw, top, "baked", j->in[i]);
        j->in[i] = NULL; /* the constant owns it, also on failure */
        if (!c) {
            st = sm_err_nomem(j->ctx);
            break;
        }
        const char *name = p->name;
        p->name = c->name;
        c->name = name;
        sm_rw_replace_uses(rw, p, c);
        sm_rw_remove_param(rw, top, i);
        memmove(&j->in[i], &j->in[i + 1],
                (size_t)(j->n_in - i - 1) * sizeof *j->in);
        j->in[--j->n_in] = NULL;
    }
    sm_rw_free(rw);
    return st;
}

/* The output that is the loss: the named one or the first. */
static smelt_status find_loss(gc_job *j)
{
    const sm_block *top = j->g->top;
    j->loss_out = -1;
    if (!j->o.loss)
        j->loss_out = top->n_ret > 0 ? 0 : -1;
    for (int i = 0; j->o.loss && i < top->n_ret; i++)
        if (!strcmp(top->ret[i]->name, j->o.loss)) {
            j->loss_out = i;
            break;
        }
    if (j->loss_out < 0)
        return j->o.loss ? sm_err(j->ctx, SMELT_ERR_NOT_FOUND,
                                  "gradcheck: the graph has no output named "
                                  "'%s' to use as the loss",
                                  j->o.loss)
                         : sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                                  "gradcheck: the graph has no outputs");
    return SMELT_OK;
}

/* The loss of the widened forward graph at the current inputs and
 * constants: its loss output summed or averaged. */
static smelt_status forward_loss(gc_job *j, double *loss)
{
    int n_out = j->g->top->n_ret;
    smelt_tensor_t **out = sm_calloc((size_t)n_out, sizeof *out);
    if (!out)
        return sm_err_nomem(j->ctx);
    smelt_status st =
        smelt_graph_run_reference(j->ctx, j->g, j->in, j->n_in, out, n_out);
    if (st == SMELT_OK) {
        const sm_tensor *t = out[j->loss_out];
        double s = 0;
        for (int64_t i = 0; i < t->numel; i++)
            s += sm_load_f64(t->dtype, t->data, i);
        if (j->o.loss_reduce == SMELT_LOSS_MEAN && t->numel > 0)
            s /= (double)t->numel;
        *loss = s;
    }
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    sm_free(out);
    return st;
}

/* The f64 elements of checked value `name` in the copy: a constant's
 * data or the bound input's. */
static double *value_data(gc_job *j, const char *name, int64_t *numel)
{
    sm_value *v = find_leaf(j->g, name);
    sm_tensor *t = NULL;
    if (v && v->data)
        t = v->data;
    for (int i = 0; v && !t && i < j->g->top->n_params; i++)
        if (j->g->top->params[i] == v)
            t = j->in[i];
    if (!t || t->dtype != SMELT_DTYPE_F64)
        return NULL;
    *numel = t->numel;
    return t->data;
}

/* Element k of the `n` checked of a value of numel elements: all of
 * them, or one at random in each of n equal slices (distinct, spread
 * over the whole tensor). */
static int64_t sample_index(gc_job *j, int64_t k, int64_t n, int64_t numel)
{
    if (n == numel)
        return k;
    int64_t lo = (int64_t)((double)k * (double)numel / (double)n);
    int64_t hi = (int64_t)((double)(k + 1) * (double)numel / (double)n);
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(splitmix64(&j->rng) % (uint64_t)(hi - lo));
}

/* Compares gradient d (the joint graph's, f64) of checked value w with
 * central differences, filling the report's entry v. */
static smelt_status check_value(gc_job *j, const char *name, const sm_tensor *d,
                                double f0, smelt_gradcheck_value *v)
{
    int64_t numel = 0;
    double *x = value_data(j, name, &numel);
    if (!x || d->numel != numel)
        return sm_err(j->ctx, SMELT_ERR_RUNTIME,
                      "gradcheck: the gradient of '%s' has %lld elements, "
                      "the value %lld",
                      name, (long long)d->numel, (long long)numel);
    const smelt_gradcheck_options *o = &j->o;
    int64_t n = o->samples > 0 && o->samples < numel ? o->samples : numel;
    double worst_excess = -INFINITY;
    v->passed = 1;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = sample_index(j, k, n, numel);
        double keep = x[i], fp = 0, fm = 0;
        x[i] = keep + o->eps;
        smelt_status st = forward_loss(j, &fp);
        x[i] = keep - o->eps;
        if (st == SMELT_OK)
            st = forward_loss(j, &fm);
        x[i] = keep;
        SM_TRY(st);
        double num = (fp - fm) / (2 * o->eps);
        double ana = sm_load_f64(d->dtype, d->data, i);
        double left = (f0 - fm) / o->eps, right = (fp - f0) / o->eps;
        double side = fmax(fabs(left), fabs(right));
        /* A kink, by PyTorch's tolerances at least: a check made
         * stricter still compares every smooth point. */
        double kink = fmax(o->atol, 1e-5) + fmax(o->rtol, 1e-3) * side;
        if (isfinite(num) && isfinite(ana) && fabs(right - left) > kink) {
            v->kinks++;
            continue;
        }
        v->checked++;
        double err = fabs(ana - num);
        double excess = err - (o->atol + o->rtol * fabs(num));
        if (!isfinite(num) || !isfinite(ana)) {
            err = INFINITY;
            excess = INFINITY;
        }
        if (excess > 0)
            v->passed = 0;
        v->max_abs_err = fmax(v->max_abs_err, err);
        if (num != 0)
            v->max_rel_err = fmax(v->max_rel_err, err / fabs(num));
        if (excess > worst_excess) {
            worst_excess = excess;
            v->worst = i;
            v->worst_analytic = ana;
            v->worst_numeric = num;
        }
    }
    return SMELT_OK;
}

/* Builds and runs the joint graph, then checks every value. */
static smelt_status check_all(gc_job *j)
{
    smelt_grad_options go;
    smelt_grad_options_default(&go);
    go.loss = j->g->top->ret[j->loss_out]->name;
    go.loss_reduce = j->o.loss_reduce;
    go.n_wrt = j->n_wrt;
    go.wrt = j->wrt;
    smelt_graph_t *joint = NULL;
    SM_TRY(smelt_graph_grad(j->ctx, j->g, &go, &joint));
    int n_out = smelt_graph_num_outputs(joint);
    smelt_tensor_t **out = sm_calloc((size_t)n_out, sizeof *out);
    smelt_status st = out ? SMELT_OK : sm_err_nomem(j->ctx);
    if (st == SMELT_OK)
        st = smelt_graph_run_reference(j->ctx, joint, j->in, j->n_in, out,
                                       n_out);
    double f0 = 0;
    if (st == SMELT_OK)
        st = forward_loss(j, &f0);
    j->r->loss = f0;
    for (int k = 0; st == SMELT_OK && k < j->n_wrt; k++) {
        smelt_gradcheck_value *v = &j->r->v[k];
        const sm_value *ov = find_leaf(j->orig, j->wrt[k]);
        v->struct_size = sizeof *v;
        v->name = sm_strdup(j->wrt[k]);
        if (!v->name) {
            st = sm_err_nomem(j->ctx);
            break;
        }
        j->r->n = k + 1;
        v->dtype = ov ? ov->type.dtype : SMELT_DTYPE_F64;
        const sm_tensor *d = out[smelt_graph_grad_output(joint, k)];
        v->ndim = d->ndim;
        memcpy(v->dims, d->dims, sizeof v->dims);
        st = check_value(j, j->wrt[k], d, f0, v);
        j->r->n_failed += st == SMELT_OK && !v->passed;
    }
    for (int i = 0; out && i < n_out; i++)
        smelt_tensor_free(out[i]);
    sm_free(out);
    smelt_graph_free(joint);
    return st;
}

/* Checks the options a caller can get wrong. */
static smelt_status check_options(smelt_ctx_t *ctx,
                                  const smelt_gradcheck_options *o)
{
    if (!(o->eps > 0) || !isfinite(o->eps))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_gradcheck: eps must be positive (it is %g)",
                      o->eps);
    if (!(o->atol >= 0) || !(o->rtol >= 0))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_gradcheck: atol and rtol must be at least 0");
    if (!(o->low < o->high) || !isfinite(o->low) || !isfinite(o->high))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_gradcheck: the input range [%g, %g) is empty",
                      o->low, o->high);
    if (o->samples < 0 || o->n_inputs < 0)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_gradcheck: samples and n_inputs must be at "
                      "least 0");
    if (o->loss_reduce != SMELT_LOSS_SUM && o->loss_reduce != SMELT_LOSS_MEAN)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_gradcheck: loss_reduce %d is neither "
                      "SMELT_LOSS_SUM nor SMELT_LOSS_MEAN",
                      (int)o->loss_reduce);
    return SMELT_OK;
}

/* Everything after the copy. */
static smelt_status run_job(gc_job *j)
{
    SM_TRY(sm_graph_infer(j->ctx, j->g));
    j->n_in = j->g->top->n_params;
    if (j->o.n_inputs > j->n_in)
        return sm_err(j->ctx, SMELT_ERR_INVALID_ARG,
                      "gradcheck: %d inputs given, the graph takes %d",
                      (int)j->o.n_inputs, j->n_in);
    j->in = sm_calloc((size_t)j->n_in + 1, sizeof *j->in);
    if (!j->in)
        return sm_err_nomem(j->ctx);
    for (int i = 0; i < j->n_in; i++)
        SM_TRY(bind_input(j, i));
    SM_TRY(find_wrt(j));
    SM_TRY(find_loss(j));
    SM_TRY(bake_inputs(j));
    SM_TRY(sm_graph_promote_f64(j->ctx, j->g));
    for (int i = 0; i < j->n_in; i++)
        if (sm_promote_dtype(j->in[i]->dtype)) {
            sm_tensor *t = NULL;
            SM_TRY(sm_tensor_promote_f64(j->ctx, j->in[i], &t));
            sm_tensor_free(j->in[i]);
            j->in[i] = t;
        }
    j->r = sm_calloc(1, sizeof *j->r);
    if (j->r)
        j->r->v = sm_calloc((size_t)j->n_wrt, sizeof *j->r->v);
    if (!j->r || !j->r->v)
        return sm_err_nomem(j->ctx);
    return check_all(j);
}

smelt_status smelt_gradcheck(smelt_ctx_t *ctx, const smelt_graph_t *g,
                             const smelt_gradcheck_options *opt,
                             smelt_gradcheck_report_t **out)
{
    if (!g || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_gradcheck: NULL");
    *out = NULL;
    gc_job j = {.ctx = ctx, .orig = g};
    gradcheck_defaults(&j.o);
    if (opt)
        SM_TRY(sm_sized_in(ctx, "smelt_gradcheck_options", &j.o, sizeof j.o,
                           GRADCHECK_OPTIONS_V1, opt));
    SM_TRY(check_options(ctx, &j.o));
    j.rng = j.o.seed;
    SM_TRY(sm_graph_clone(ctx, g, &j.g));
    smelt_status st = run_job(&j);
    for (int i = 0; j.in && i < j.n_in; i++)
        sm_tensor_free(j.in[i]);
    sm_free(j.in);
    sm_free(j.wrt);
    sm_graph_free(j.g);
    if (st != SMELT_OK) {
        smelt_gradcheck_report_free(j.r);
        return st;
    }
    *out = j.r;
    return SMELT_OK;
}

int smelt_gradcheck_num_values(const smelt_gradcheck_report_t *r)
{
    return r ? r->n : 0;
}

int smelt_gradcheck_num_failed(const smelt_gradcheck_report_t *r)
{
    return r ? r->n_failed : 0;
}

double smelt_gradcheck_loss(const smelt_gradcheck_report_t *r)
{
    return r ? r->loss : NAN;
}

smelt_status smelt_gradcheck_get(const smelt_gradcheck_report_t *r, int i,
                                 smelt_gradcheck_value *out)
{
    if (!r || !out || i < 0 || i >= r->n)
        return SMELT_ERR_INVALID_ARG;
    SM_TRY(
        sm_sized_check(NULL, "smelt_gradcheck_value", out, GRADCHECK_VALUE_V1));
    sm_sized_out(out, &r->v[i], sizeof r->v[i]);
    return SMELT_OK;
}

void smelt_gradcheck_report_free(smelt_gradcheck_report_t *r)
{
    if (!r)
        return;
    for (int i = 0; r->v && i < r->n; i++)
        sm_free((void *)r->v[i].name);
    sm_free(r->v);
    sm_free(r);
}
