/*
 * quantize.c - `smelt quantize FILE -o OUT.onnx --dynamic [--per-channel]
 * [--conv] [--exclude NODE,...] [--report] [--tolerance T] [--input ...]`:
 * writes the model dynamically quantized to int8 (smelt_graph_quantize)
 * as standard ONNX.
 *
 * --report and --tolerance measure each layer's added error on the
 * --input data (smelt_quantize_report): the model with that layer alone
 * quantized, run by the reference interpreter, against the f32 model,
 * over all outputs (MSE, and cosine similarity of the outputs as one
 * vector). With --tolerance the layers whose MSE exceeds T stay f32.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "inputs.h"
#include "quantize_qat.h"

void cli_quantize_help(FILE *out)
{
    fprintf(out,
            "quantize a model's MatMul / Gemm (and Conv) layers to int8\n\n"
            "usage: smelt quantize FILE -o OUT.onnx --dynamic [options]\n"
            "       smelt quantize FILE -o QAT.onnx --qat --input X.npy "
            "[options]\n"
            "       smelt quantize QAT.onnx -o INT8.onnx --convert\n\n"
            "Weights become s8 (symmetric, per tensor or --per-channel),\n"
            "activations are quantized to u8 when the model runs: the\n"
            "file holds DynamicQuantizeLinear, MatMulInteger or\n"
            "ConvInteger, Cast and Mul, standard ONNX as ONNX Runtime's\n"
            "quantizer writes it. --report prints each layer's added\n"
            "error on the --input data; --tolerance T keeps in f32 the\n"
            "layers whose added MSE exceeds T.\n\n"
            "--qat inserts fake quantization (QuantizeLinear ->\n"
            "DequantizeLinear) on the weights and activations of the same\n"
            "layers, scales observed on the --input data; smelt train\n"
            "trains the weights and scales (straight-through gradients);\n"
            "--convert then folds the weights to s8.\n");
    cli_options_help(out, "quantize");
}

/* Appends name to the comma-separated *list (grown with realloc). */
static int append_name(char **list, const char *name, size_t len)
{
    size_t have = *list ? strlen(*list) : 0;
    char *p = realloc(*list, have + len + 2);
    if (!p)
        return 1;
    if (have)
        p[have++] = ',';
    memcpy(p + have, name, len);
    p[have + len] = 0;
    *list = p;
    return 0;
}

/*
 * The per-layer report (smelt_quantize_report on the --input data),
 * printed with print; the layers over the tolerance (tol >= 0) are
 * appended to *exclude.
 */
static int report(smelt_ctx_t *ctx, const cli_args *args,
                  const smelt_graph_t *g, const smelt_quantize_options *base,
                  double tol, int print, char **exclude)
{
    int n_in = smelt_graph_num_inputs(g);
    smelt_tensor_t **inputs = calloc((size_t)n_in + 1, sizeof *inputs);
    smelt_quantize_report_t *r = NULL;
    int rc = !inputs;
    cli_input_rule rule = {0};
    rule.dim_default = -1;
    if (!rc)
        rc = cli_bind_inputs(ctx, args, g, &rule, inputs);
    if (!rc &&
        smelt_quantize_report(ctx, g, base, inputs, n_in, tol, &r) != SMELT_OK)
        rc = cli_fail(ctx, "quantize");
    if (!rc && print)
        printf("%-32s %14s %10s  %s\n", "layer", "output MSE", "cosine",
               "kept");
    int n = smelt_quantize_report_num_layers(r);
    for (int i = 0; !rc && i < n; i++) {
        const char *name = smelt_quantize_report_layer(r, i);
        int kept = smelt_quantize_report_kept_f32(r, i);
        if (print)
            printf("%-32s %14.6g %10.6f  %s\n", name,
                   smelt_quantize_report_mse(r, i),
                   smelt_quantize_report_cosine(r, i),
                   kept ? "f32 (over tolerance)" : "int8");
        if (kept && append_name(exclude, name, strlen(name)))
            rc = 1;
    }
    if (!rc && print)
        printf("%-32s %14.6g %10.6f\n", "(all quantized layers)",
               smelt_quantize_report_mse(r, -1),
               smelt_quantize_report_cosine(r, -1));
    smelt_quantize_report_free(r);
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(inputs ? inputs[i] : NULL);
    free(inputs);
    return rc;
}

int cli_quantize(int argc, char **argv)
{
    cli_args args;
    int rc = cli_args_parse(&args, "quantize", argc, argv, 1, 1, "FILE");
    if (rc)
        return rc;
    const char *out = args.str[CLI_OPT_out];
    size_t ol = out ? strlen(out) : 0;
    int modes = (args.given[CLI_OPT_q_dynamic] > 0) +
                (args.given[CLI_OPT_q_qat] > 0) +
                (args.given[CLI_OPT_q_convert] > 0);
    if (modes != 1)
        rc = cli_usage_error("quantize",
                             "give one of --dynamic, --qat or --convert");
    else if (!out || ol < 5 || strcmp(out + ol - 5, ".onnx"))
        rc = cli_usage_error("quantize", "give -o OUT.onnx");
    else if (!args.given[CLI_OPT_q_dynamic]) {
        rc = cli_quantize_qat(&args, out);
        cli_args_free(&args);
        return rc;
    } else if (args.given[CLI_OPT_q_observer] ||
               args.given[CLI_OPT_q_percentile])
        rc = cli_usage_error("quantize", "--observer and --percentile are "
                                         "--qat's");
    else if ((args.given[CLI_OPT_q_report] ||
              args.given[CLI_OPT_q_tolerance]) &&
             !args.n_inputs)
        rc = cli_usage_error("quantize",
                             "--report and --tolerance need --input data");
    if (rc) {
        cli_args_free(&args);
        return rc;
    }
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    char *exclude = NULL, *layers = NULL;
    smelt_quantize_options o;
    smelt_quantize_options_default(&o);
    o.per_channel = args.given[CLI_OPT_q_per_channel] > 0;
    o.conv = args.given[CLI_OPT_q_conv] > 0;
    const char *ex = args.str[CLI_OPT_q_exclude];
    if (ex && *ex && append_name(&exclude, ex, strlen(ex)))
        rc = 1;
    if (!rc)
        rc = cli_load_graph(ctx, args.files[0], 1, &g);
    if (!rc &&
        (args.given[CLI_OPT_q_report] || args.given[CLI_OPT_q_tolerance])) {
        o.exclude = exclude;
        double tol = args.given[CLI_OPT_q_tolerance]
                         ? args.real[CLI_OPT_q_tolerance]
                         : -1;
        rc = report(ctx, &args, g, &o, tol, args.given[CLI_OPT_q_report] > 0,
                    &exclude);
    }
    o.exclude = exclude;
    if (!rc && smelt_graph_quantize(ctx, g, &o, &layers) != SMELT_OK)
        rc = cli_fail(ctx, args.files[0]);
    if (!rc && smelt_onnx_save(ctx, g, out) != SMELT_OK)
        rc = cli_fail(ctx, out);
    if (!rc) {
        int n = 0;
        for (const char *p = layers; p && *p; p++)
            n += *p == ',';
        fprintf(stderr, "smelt quantize: %d layer%s quantized, written to %s\n",
                layers && *layers ? n + 1 : 0,
                layers && *layers && n == 0 ? "" : "s", out);
    }
    smelt_string_free(layers);
    free(exclude);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&args);
    return rc;
}
