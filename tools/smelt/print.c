/*
 * print.c - `smelt print FILE`: the graph as text IR.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"

void cli_print_help(FILE *out)
{
    fprintf(out,
            "print a model as text IR\n\n"
            "usage: smelt print FILE [options]\n\n"
            "Loads FILE, infers dtypes and shapes, verifies the graph and\n"
            "prints its text form (docs/IR.md). Constants of more than %d\n"
            "values print as one line: count, checksum and first values\n"
            "(--weights prints every value, text that parses back).\n",
            CLI_SUMMARY_VALUES);
    cli_options_help(out, "print");
}

int cli_print(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&a, "print", argc, argv, 1, 1, "FILE");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *file = a.files[0];
    int raw = a.given[CLI_OPT_raw] > 0;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g;
    rc = cli_load_graph(ctx, file, !raw, &g);
    if (!rc)
        rc = cli_print_graph(ctx, g, a.given[CLI_OPT_weights] > 0);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a);
    return rc;
}
