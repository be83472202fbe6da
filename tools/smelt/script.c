/*
 * script.c - `smelt script FILE.py [--fn NAME] [-O1] [--raw]`: compiles a
 * function of a script (docs/SCRIPT.md) and prints its graph as text IR,
 * with branches and loops as If and Loop blocks.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "args.h"
#include "plan_cli.h"

void cli_script_help(FILE *out)
{
    fprintf(out,
            "compile a script function to the IR and print it\n\n"
            "usage: smelt script FILE.py [--fn NAME] [-O N | --passes a,b] "
            "[--raw]\n\n"
            "Compiles function NAME of FILE.py (a Python subset in the\n"
            "manner of TorchScript, see docs/SCRIPT.md; without --fn, the\n"
            "last function of the file), infers dtypes and shapes and\n"
            "prints the graph as text IR. if/while and for loops over a\n"
            "run-time range(n) stay If and Loop blocks; for loops over a\n"
            "constant range(n) with n <= 16 are unrolled. Errors show the\n"
            "source line with a caret and a hint. -O N or --passes optimize\n"
            "before printing (default: the graph as captured).\n");
    cli_options_help(out, "script");
}

/* Prints a compile error: the message already holds file:line:col, the
 * source line, the caret and the hint. */
static int script_fail(smelt_ctx_t *ctx)
{
    fprintf(stderr, "%s\n", smelt_ctx_error(ctx));
    return 1;
}

int cli_script(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&a, "script", argc, argv, 1, 1, "FILE");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *file = a.files[0], *fn = a.str[CLI_OPT_fn];
    int raw = a.given[CLI_OPT_raw] > 0;
    int optimize = a.given[CLI_OPT_level] || a.given[CLI_OPT_passes];
    smelt_opt_options o;
    cli_opt_options(&a, &o, 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx) {
        fprintf(stderr, "smelt script: out of memory\n");
        cli_args_free(&a);
        return 1;
    }
    smelt_graph_t *g = NULL;
    char *text = NULL;
    if (smelt_script_load(ctx, file, fn, &g) != SMELT_OK)
        rc = script_fail(ctx);
    if (!rc && optimize && (o.level > 0 || o.passes) &&
        smelt_graph_optimize(ctx, g, &o, NULL) != SMELT_OK)
        rc = cli_fail(ctx, file);
    if (!rc && !raw && smelt_graph_verify(ctx, g) != SMELT_OK)
        rc = cli_fail(ctx, file);
    if (!rc && smelt_graph_print(ctx, g, &text) != SMELT_OK)
        rc = cli_fail(ctx, file);
    if (!rc)
        fputs(text, stdout);
    smelt_string_free(text);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a);
    return rc;
}
