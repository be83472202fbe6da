/*
 * quantize_qat.c - `smelt quantize --qat FILE -o QAT.onnx --input ...`
 * and `smelt quantize --convert QAT.onnx -o INT8.onnx`: the two ends of
 * quantization-aware training (docs/QUANTIZATION.md). --qat inserts fake
 * quantization with scales observed on the --input data
 * (smelt_graph_quantize_qat); `smelt train` trains the file; --convert
 * folds the weights to s8 (smelt_graph_quantize_convert).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "inputs.h"
#include "quantize_qat.h"

/* --qat: the model with fake quantization, written to out. */
static int qat(smelt_ctx_t *ctx, const cli_args *args, smelt_graph_t *g,
               const char *out)
{
    smelt_qat_options o;
    smelt_qat_options_default(&o);
    o.per_channel = args->given[CLI_OPT_q_per_channel] > 0;
    o.conv = args->given[CLI_OPT_q_conv] > 0;
    o.exclude = args->str[CLI_OPT_q_exclude];
    const char *obs = args->str[CLI_OPT_q_observer];
    if (obs && !strcmp(obs, "percentile"))
        o.observer = SMELT_QAT_PERCENTILE;
    else if (obs && strcmp(obs, "minmax"))
        return cli_usage_error("quantize",
                               "--observer %s: not minmax or percentile", obs);
    if (args->given[CLI_OPT_q_percentile])
        o.percentile = args->real[CLI_OPT_q_percentile];
    int n_in = smelt_graph_num_inputs(g);
    smelt_tensor_t **inputs = calloc((size_t)n_in + 1, sizeof *inputs);
    char *layers = NULL;
    int rc = !inputs;
    cli_input_rule rule = {0};
    rule.dim_default = -1;
    if (!rc)
        rc = cli_bind_inputs(ctx, args, g, &rule, inputs);
    if (!rc &&
        smelt_graph_quantize_qat(ctx, g, &o, inputs, n_in, &layers) != SMELT_OK)
        rc = cli_fail(ctx, args->files[0]);
    if (!rc && smelt_onnx_save(ctx, g, out) != SMELT_OK)
        rc = cli_fail(ctx, out);
    if (!rc) {
        int n = layers && *layers ? 1 : 0;
        for (const char *p = layers; p && *p; p++)
            n += *p == ',';
        fprintf(stderr,
                "smelt quantize: %d layer%s fake-quantized (weights and "
                "activations), written to %s\n",
                n, n == 1 ? "" : "s", out);
    }
    for (int i = 0; inputs && i < n_in; i++)
        smelt_tensor_free(inputs[i]);
    free(inputs);
    smelt_string_free(layers);
    return rc;
}

/* --convert: the int8 form of a QAT model, written to out. */
static int convert(smelt_ctx_t *ctx, const cli_args *args, smelt_graph_t *g,
                   const char *out)
{
    int nw = 0, na = 0;
    if (smelt_graph_quantize_convert(ctx, g, &nw, &na) != SMELT_OK)
        return cli_fail(ctx, args->files[0]);
    if (smelt_onnx_save(ctx, g, out) != SMELT_OK)
        return cli_fail(ctx, out);
    fprintf(stderr,
            "smelt quantize: %d weight%s folded to int8, %d activation "
            "pair%s kept, written to %s\n",
            nw, nw == 1 ? "" : "s", na, na == 1 ? "" : "s", out);
    return 0;
}

int cli_quantize_qat(const cli_args *args, const char *out)
{
    int is_qat = args->given[CLI_OPT_q_qat] > 0;
    if (!is_qat &&
        (args->given[CLI_OPT_q_observer] || args->given[CLI_OPT_q_percentile] ||
         args->given[CLI_OPT_q_per_channel] || args->given[CLI_OPT_q_conv] ||
         args->given[CLI_OPT_q_exclude] || args->n_inputs))
        return cli_usage_error("quantize",
                               "--convert takes the QAT model as it is: no "
                               "--input, --observer, --per-channel, --conv "
                               "or --exclude");
    if (args->given[CLI_OPT_q_report] || args->given[CLI_OPT_q_tolerance])
        return cli_usage_error("quantize", "--report and --tolerance are "
                                           "--dynamic's");
    if (is_qat && !args->n_inputs)
        return cli_usage_error("quantize",
                               "--qat needs --input calibration data to "
                               "observe the activations' ranges");
    if (args->given[CLI_OPT_q_percentile] &&
        !(args->str[CLI_OPT_q_observer] &&
          !strcmp(args->str[CLI_OPT_q_observer], "percentile")))
        return cli_usage_error("quantize",
                               "--percentile goes with --observer percentile");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    int rc = cli_load_graph(ctx, args->files[0], 1, &g);
    if (!rc)
        rc = is_qat ? qat(ctx, args, g, out) : convert(ctx, args, g, out);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return rc;
}
