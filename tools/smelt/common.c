/*
 * common.c - helpers shared by the verbs: loading and checking a model.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_script_fn;

int cli_load_graph(smelt_ctx_t *ctx, const char *path, int infer,
                   smelt_graph_t **g)
{
    *g = NULL;
    size_t n = strlen(path);
    if (cli_script_fn && (n < 3 || strcmp(path + n - 3, ".py") != 0)) {
        fprintf(stderr,
                "smelt: --fn %s: --fn picks a function of a script (.py); "
                "%s is not one\n",
                cli_script_fn, path);
        return 2;
    }
    smelt_status st = cli_script_fn
                          ? smelt_script_load(ctx, path, cli_script_fn, g)
                          : smelt_graph_load(ctx, path, g);
    if (st != SMELT_OK)
        return cli_fail(ctx, path);
    if ((infer && smelt_graph_infer(ctx, *g) != SMELT_OK) ||
        smelt_graph_verify(ctx, *g) != SMELT_OK) {
        smelt_graph_free(*g);
        *g = NULL;
        return cli_fail(ctx, path);
    }
    return 0;
}

int cli_print_graph(smelt_ctx_t *ctx, const smelt_graph_t *g, int weights)
{
    char *text = NULL;
    smelt_status st =
        weights ? smelt_graph_print(ctx, g, &text)
                : smelt_graph_print_summary(ctx, g, CLI_SUMMARY_VALUES, &text);
    if (st != SMELT_OK)
        return cli_fail(ctx, "print");
    fputs(text, stdout);
    smelt_string_free(text);
    return 0;
}
