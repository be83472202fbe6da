/*
 * print.c - `smelt print FILE`: the graph as text IR.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cli_print_help(FILE *out)
{
    fprintf(out,
            "print a model as text IR\n\n"
            "usage: smelt print FILE [--raw]\n\n"
            "Loads FILE, infers dtypes and shapes, verifies the graph and\n"
            "prints its text form (docs/IR.md).\n\n"
            "  --raw   print the graph as loaded, without shape inference\n");
}

int cli_print(int argc, char **argv)
{
    const char *file = NULL;
    int raw = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--raw"))
            raw = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("print", "unknown option '%s'", argv[i]);
        else if (file)
            return cli_usage_error("print", "more than one FILE given");
        else
            file = argv[i];
    }
    if (!file)
        return cli_usage_error("print", "no FILE given");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g;
    int rc = cli_load_graph(ctx, file, !raw, &g);
    char *text = NULL;
    if (!rc && smelt_graph_print(ctx, g, &text) != SMELT_OK)
        rc = cli_fail(ctx, file);
    if (!rc)
        fputs(text, stdout);
    smelt_string_free(text);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return rc;
}
