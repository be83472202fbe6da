/*
 * script.c - `smelt script FILE.py [--fn NAME] [-O1] [--raw]`: compiles a
 * function of a script (docs/SCRIPT.md) and prints its graph as text IR,
 * with branches and loops as If and Loop blocks.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opt_common.h"

void cli_script_help(FILE *out)
{
    fprintf(out,
            "compile a script function to the IR and print it\n\n"
            "usage: smelt script FILE.py [--fn NAME] [-O0|-O1|-O2|-O3]\n"
            "                    [--passes=a,b] [--raw]\n\n"
            "Compiles function NAME of FILE.py (a Python subset in the\n"
            "manner of TorchScript, see docs/SCRIPT.md; without --fn, the\n"
            "last function of the file), infers dtypes and shapes and\n"
            "prints the graph as text IR. if/while and for loops over a\n"
            "run-time range(n) stay If and Loop blocks; for loops over a\n"
            "constant range(n) with n <= 16 are unrolled. Errors show the\n"
            "source line with a caret and a hint.\n\n"
            "  --fn NAME       the function to compile\n"
            "  -O0 .. -O3      optimize before printing (default -O0: the\n"
            "                  graph as captured; -O1 folds constants)\n"
            "  --passes=a,b    run exactly these passes before printing\n"
            "  --raw           print without the final verification\n");
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
    const char *file = NULL, *fn = cli_script_fn; /* the global --fn */
    int raw = 0, optimize = 0;
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = 0;
    for (int i = 1; i < argc; i++) {
        int r = cli_opt_option(argc, argv, &i, "script", &o);
        if (r < 0)
            return 2;
        if (r > 0) {
            optimize = 1;
            continue;
        }
        if (!strcmp(argv[i], "--fn")) {
            if (!(fn = cli_option_value(argc, argv, &i, "script")))
                return 2;
        } else if (!strncmp(argv[i], "--fn=", 5)) {
            fn = argv[i] + 5;
        } else if (!strcmp(argv[i], "--raw")) {
            raw = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("script", "unknown option '%s'", argv[i]);
        } else if (file) {
            return cli_usage_error("script", "more than one FILE given");
        } else {
            file = argv[i];
        }
    }
    if (!file)
        return cli_usage_error("script", "no FILE given");
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx) {
        fprintf(stderr, "smelt script: out of memory\n");
        return 1;
    }
    smelt_graph_t *g = NULL;
    char *text = NULL;
    int rc = 0;
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
    return rc;
}
