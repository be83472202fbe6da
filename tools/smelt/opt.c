/*
 * opt.c - `smelt opt FILE [-O2] [--passes=a,b] [-o out.ir|out.onnx]
 * [--stats] [--why-not-fused] [--debug-dir DIR]`: optimizes a model and
 * reports what each pass changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "args.h"
#include "opt_plan.h"
#include "plan_cli.h"

void cli_opt_help(FILE *out)
{
    fprintf(out,
            "optimize a model and report what each pass changed\n\n"
            "usage: smelt opt FILE [-O N | --passes a,b,c] [-o OUT] "
            "[options]\n\n"
            "Loads FILE (text IR, ONNX or a script), runs the pipeline\n"
            "(default -O1) and writes the result to OUT (.ir: text IR,\n"
            ".onnx: ONNX) or, without -o, prints it as text IR (large\n"
            "constants summarized unless --weights). -O1 cleans\n"
            "up (inference, folding, CSE, DCE...), -O2 adds fusion,\n"
            "-O3 everything. --stats adds what the plan of the result\n"
            "decides: arena, buffers shared, steps in place, layouts.\n"
            "Fused ops go to ONNX in Smelt's domain ai.smelt, or with\n"
            "--onnx-standard as standard ONNX ops (for other runtimes).\n");
    cli_options_help(out, "opt");
}

static void list_passes(void)
{
    printf("%-12s %-5s %s\n", "pass", "level", "what it does");
    for (int i = 0; i < smelt_pass_count(); i++)
        printf("%-12s -O%-3d %s\n", smelt_pass_name(i), smelt_pass_level(i),
               smelt_pass_summary(i));
    for (int l = 0; l <= 3; l++) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_opt_options o;
        smelt_opt_options_default(&o);
        o.level = l;
        char *p = NULL;
        if (ctx && smelt_opt_pipeline(ctx, &o, &p) == SMELT_OK)
            printf("%s-O%d: %s\n", l ? "" : "\n", l, *p ? p : "(nothing)");
        smelt_string_free(p);
        smelt_ctx_free(ctx);
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Writes g to path as ONNX or text IR, by the name's extension. */
static int write_model(smelt_ctx_t *ctx, const smelt_graph_t *g,
                       const char *path, int standard)
{
    smelt_onnx_save_options so;
    smelt_onnx_save_options_default(&so);
    so.standard = standard;
    if (ends_with(path, ".onnx"))
        return smelt_onnx_save_opt(ctx, g, &so, path) == SMELT_OK
                   ? 0
                   : cli_fail(ctx, path);
    if (!ends_with(path, ".ir")) {
        fprintf(stderr, "smelt opt: %s: the output must end in .ir or .onnx\n",
                path);
        return 1;
    }
    char *text = NULL;
    if (smelt_graph_print(ctx, g, &text) != SMELT_OK)
        return cli_fail(ctx, "print");
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f || fputs(text, f) == EOF) {
        fprintf(stderr, "smelt opt: %s: %s\n", path, strerror(errno));
        rc = 1;
    }
    if (f && fclose(f) != 0 && !rc) {
        fprintf(stderr, "smelt opt: %s: %s\n", path, strerror(errno));
        rc = 1;
    }
    smelt_string_free(text);
    return rc;
}

int cli_opt(int argc, char **argv)
{
    cli_args args;
    int rc = cli_args_parse(&args, "opt", argc, argv, 0, 1, "FILE");
    if (!rc && !args.n_files && !args.given[CLI_OPT_list_passes])
        rc = cli_usage_error("opt", "no FILE given");
    if (rc || args.given[CLI_OPT_list_passes]) {
        if (!rc)
            list_passes();
        cli_args_free(&args);
        return rc;
    }
    struct {
        const char *file, *out;
        int stats;
        smelt_opt_options o;
    } a = {args.files[0],
           args.str[CLI_OPT_out],
           args.given[CLI_OPT_stats] > 0,
           {0}};
    cli_opt_options(&args, &a.o, 1);
    a.o.why_not_fused = args.given[CLI_OPT_why_not_fused] > 0;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_opt_report_t *rep = NULL;
    rc = cli_load_graph(ctx, a.file, 1, &g);
    int before = g ? smelt_graph_num_nodes(g) : 0;
    if (!rc && smelt_graph_optimize(ctx, g, &a.o, &rep) != SMELT_OK)
        rc = cli_fail(ctx, a.file);
    /* the model goes to stdout without -o, so the report goes to stderr */
    FILE *info = a.out ? stdout : stderr;
    char *table = NULL;
    if (!rc && (a.stats || a.o.why_not_fused)) {
        if (smelt_opt_report_print(ctx, rep, a.o.why_not_fused, &table) !=
            SMELT_OK)
            rc = cli_fail(ctx, "report");
        else
            fputs(table, info);
    }
    /* the plan's memory and layout decisions (--stats), and plan.txt in
     * a debug dump */
    if (!rc && (rc = cli_check_dims(&args, g)) == 0)
        rc = cli_opt_plan_report(ctx, g, &args, a.o.debug_dir,
                                 a.stats ? info : NULL);
    if (!rc && a.out)
        rc = write_model(ctx, g, a.out, args.given[CLI_OPT_onnx_standard] > 0);
    else if (!rc)
        rc = cli_print_graph(ctx, g, args.given[CLI_OPT_weights] > 0);
    if (!rc)
        fprintf(info, "%s: %d -> %d nodes in %d passes%s%s\n", a.file, before,
                smelt_graph_num_nodes(g), smelt_opt_report_num_passes(rep),
                a.out ? ", wrote " : "", a.out ? a.out : "");
    smelt_string_free(table);
    smelt_opt_report_free(rep);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&args);
    return rc;
}
