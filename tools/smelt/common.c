/*
 * common.c - helpers shared by the verbs: loading and checking a model.
 */
#include <string.h>

#include "cli.h"

const char *cli_script_fn;

int cli_load_graph(smelt_ctx_t *ctx, const char *path, int infer,
                   smelt_graph_t **g)
{
    *g = NULL;
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

const char *cli_option_value(int argc, char **argv, int *i, const char *verb)
{
    if (*i + 1 >= argc) {
        cli_usage_error(verb, "option %s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}
