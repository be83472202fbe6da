/*
 * quantize_report.c - what dynamic int8 quantization costs, layer by
 * layer (smelt_quantize_report, `smelt quantize --report --tolerance`,
 * smelt.quantize(report=, tolerance=), docs/QUANTIZATION.md).
 *
 * Every layer smelt_graph_quantize would rewrite is measured alone: a
 * copy of the f32 graph with only that layer quantized runs in the
 * reference interpreter on the calibration inputs, and its outputs are
 * compared with the f32 graph's over all outputs (mean squared error,
 * and cosine similarity of the outputs as one vector). Layers whose
 * error exceeds the tolerance stay f32; the last measure is the graph
 * with every remaining layer quantized.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/sized.h"
#include "core/status.h"
#include "core/strbuf.h"

typedef struct qr_layer {
    char *name;
    double mse, cosine;
    int kept_f32;
} qr_layer;

struct smelt_quantize_report {
    qr_layer *layers;
    int n_layers;
    double mse, cosine; /* every layer not kept f32 quantized */
    char *exclude;      /* the options' exclude plus the kept layers */
};

void smelt_quantize_report_free(smelt_quantize_report_t *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_layers; i++)
        sm_free(r->layers[i].name);
    sm_free(r->layers);
    sm_free(r->exclude);
    sm_free(r);
}

int smelt_quantize_report_num_layers(const smelt_quantize_report_t *r)
{
    return r ? r->n_layers : 0;
}

/* Row i, or NULL when r is NULL or i is out of range. */
static const qr_layer *row(const smelt_quantize_report_t *r, int i)
{
    return r && i >= 0 && i < r->n_layers ? &r->layers[i] : NULL;
}

const char *smelt_quantize_report_layer(const smelt_quantize_report_t *r, int i)
{
    const qr_layer *l = row(r, i);
    return l ? l->name : NULL;
}

double smelt_quantize_report_mse(const smelt_quantize_report_t *r, int i)
{
    const qr_layer *l = row(r, i);
    return l ? l->mse : r && i == -1 ? r->mse : NAN;
}

double smelt_quantize_report_cosine(const smelt_quantize_report_t *r, int i)
{
    const qr_layer *l = row(r, i);
    return l ? l->cosine : r && i == -1 ? r->cosine : NAN;
}

int smelt_quantize_report_kept_f32(const smelt_quantize_report_t *r, int i)
{
    const qr_layer *l = row(r, i);
    return l ? l->kept_f32 : 0;
}

const char *smelt_quantize_report_exclude(const smelt_quantize_report_t *r)
{
    return r && r->exclude ? r->exclude : "";
}

static void free_all(smelt_tensor_t **t, int n)
{
    for (int i = 0; t && i < n; i++)
        smelt_tensor_free(t[i]);
}

/* MSE and cosine similarity of got against want over all n outputs, as
 * one vector (outputs whose sizes differ are skipped). */
static void compare(smelt_tensor_t **got, smelt_tensor_t **want, int n,
                    double *mse, double *cosine)
{
    double se = 0, dot = 0, gg = 0, ww = 0;
    int64_t count = 0;
    for (int o = 0; o < n; o++) {
        int64_t k = smelt_tensor_numel(want[o]);
        if (smelt_tensor_numel(got[o]) != k)
            continue;
        for (int64_t i = 0; i < k; i++) {
            double g = smelt_tensor_get_f64(got[o], i);
            double w = smelt_tensor_get_f64(want[o], i);
            se += (g - w) * (g - w);
            dot += g * w;
            gg += g * g;
            ww += w * w;
        }
        count += k;
    }
    *mse = count ? se / (double)count : 0;
    *cosine = gg > 0 && ww > 0 ? dot / sqrt(gg * ww) : (gg == ww ? 1 : 0);
}

/* A copy of g quantized with o, run on inputs, compared with want. */
static smelt_status measure(smelt_ctx_t *ctx, const smelt_graph_t *g,
                            const smelt_quantize_options *o,
                            smelt_tensor_t *const *inputs, int n_in,
                            smelt_tensor_t **want, double *mse, double *cosine)
{
    int n_out = smelt_graph_num_outputs(g);
    smelt_graph_t *q = NULL;
    smelt_tensor_t **got = sm_calloc((size_t)n_out + 1, sizeof *got);
    smelt_status st = got ? smelt_graph_clone(ctx, g, &q)
                          : sm_err(ctx, SMELT_ERR_NOMEM, "out of memory");
    if (st == SMELT_OK)
        st = smelt_graph_quantize(ctx, q, o, NULL);
    if (st == SMELT_OK)
        st = smelt_graph_run_reference(ctx, q, (smelt_tensor_t **)inputs, n_in,
                                       got, n_out);
    if (st == SMELT_OK)
        compare(got, want, n_out, mse, cosine);
    free_all(got, n_out);
    sm_free(got);
    smelt_graph_free(q);
    return st;
}

/* The arguments' checks: one line naming what is wrong. */
static smelt_status check_args(smelt_ctx_t *ctx, const smelt_graph_t *g,
                               smelt_tensor_t *const *inputs, int n_inputs,
                               double tolerance, smelt_quantize_report_t **out)
{
    if (!out || !g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_quantize_report: NULL %s", g ? "out" : "graph");
    if (isnan(tolerance))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_quantize_report: tolerance is NaN");
    int n_in = smelt_graph_num_inputs(g);
    if (!inputs || n_inputs != n_in)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_quantize_report: %d calibration input%s for "
                      "a graph of %d",
                      inputs ? n_inputs : 0, inputs && n_inputs == 1 ? "" : "s",
                      n_in);
    for (int i = 0; i < n_in; i++)
        if (!inputs[i])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "smelt_quantize_report: input %d is NULL", i);
    return SMELT_OK;
}

/* Splits the comma-separated names into r->layers. */
static smelt_status split_layers(smelt_ctx_t *ctx, const char *names,
                                 smelt_quantize_report_t *r)
{
    int n = names && *names ? 1 : 0;
    for (const char *p = names; p && *p; p++)
        n += *p == ',';
    r->layers = sm_calloc((size_t)n + 1, sizeof *r->layers);
    if (!r->layers)
        return sm_err(ctx, SMELT_ERR_NOMEM, "out of memory");
    for (const char *p = names; p && *p && r->n_layers < n;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!(r->layers[r->n_layers].name = sm_strndup(p, len)))
            return sm_err(ctx, SMELT_ERR_NOMEM, "out of memory");
        r->layers[r->n_layers].cosine = 1;
        r->n_layers++;
        p = e ? e + 1 : p + len;
    }
    return SMELT_OK;
}

/* Measures every layer of r alone, marks those over tol (>= 0) kept f32
 * and appends them to *exclude (which starts as the options' own). */
static smelt_status measure_layers(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                   const smelt_quantize_options *base,
                                   smelt_tensor_t *const *inputs, int n_in,
                                   smelt_tensor_t **want, double tol,
                                   smelt_quantize_report_t *r,
                                   sm_strbuf *exclude)
{
    for (int i = 0; i < r->n_layers; i++) {
        qr_layer *l = &r->layers[i];
        smelt_quantize_options o = *base;
        o.only = l->name;
        SM_TRY(measure(ctx, g, &o, inputs, n_in, want, &l->mse, &l->cosine));
        l->kept_f32 = tol >= 0 && l->mse > tol;
        if (l->kept_f32) {
            if (sm_strbuf_str(exclude)[0])
                sm_strbuf_putc(exclude, ',');
            sm_strbuf_puts(exclude, l->name);
        }
    }
    return SMELT_OK;
}

smelt_status smelt_quantize_report(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                   const smelt_quantize_options *opt,
                                   smelt_tensor_t *const *inputs, int n_inputs,
                                   double tolerance,
                                   smelt_quantize_report_t **out)
{
    if (out)
        *out = NULL;
    SM_TRY(check_args(ctx, g, inputs, n_inputs, tolerance, out));
    smelt_quantize_options base;
    smelt_quantize_options_default(&base);
    if (opt)
        SM_TRY(sm_sized_in(ctx, "smelt_quantize_options", &base, sizeof base,
                           SM_FIELD_END(smelt_quantize_options, only), opt));
    int n_out = smelt_graph_num_outputs(g);
    smelt_tensor_t **want = sm_calloc((size_t)n_out + 1, sizeof *want);
    smelt_quantize_report_t *r = sm_calloc(1, sizeof *r);
    smelt_graph_t *probe = NULL;
    char *names = NULL;
    sm_strbuf exclude;
    sm_strbuf_init(&exclude);
    smelt_status st =
        want && r ? SMELT_OK : sm_err(ctx, SMELT_ERR_NOMEM, "out of memory");
    if (st == SMELT_OK)
        st = smelt_graph_run_reference(ctx, g, (smelt_tensor_t **)inputs,
                                       n_inputs, want, n_out);
    if (st == SMELT_OK)
        st = smelt_graph_clone(ctx, g, &probe);
    if (st == SMELT_OK)
        st = smelt_graph_quantize(ctx, probe, &base, &names);
    if (st == SMELT_OK)
        st = split_layers(ctx, names, r);
    if (st == SMELT_OK) {
        if (base.exclude)
            sm_strbuf_puts(&exclude, base.exclude);
        st = measure_layers(ctx, g, &base, inputs, n_inputs, want, tolerance, r,
                            &exclude);
    }
    if (st == SMELT_OK)
        st = sm_strbuf_take(&exclude, ctx, &r->exclude);
    if (st == SMELT_OK) {
        base.exclude = r->exclude;
        st =
            measure(ctx, g, &base, inputs, n_inputs, want, &r->mse, &r->cosine);
    }
    sm_strbuf_free(&exclude);
    smelt_string_free(names);
    smelt_graph_free(probe);
    free_all(want, n_out);
    sm_free(want);
    if (st != SMELT_OK) {
        smelt_quantize_report_free(r);
        return st;
    }
    *out = r;
    return SMELT_OK;
}
