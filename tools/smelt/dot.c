/*
 * dot.c - `smelt dot FILE -o g.dot | --svg g.svg`: the graph as a picture.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "plan_cli.h"

void cli_dot_help(FILE *out)
{
    fprintf(out,
            "draw a model as a Graphviz graph\n\n"
            "usage: smelt dot FILE [-O N | --passes a,b] [-o OUT.dot] "
            "[--svg OUT.svg]\n\n"
            "Writes the graph in DOT (to stdout without -o or --svg) and,\n"
            "with --svg, renders it through Graphviz's `dot` program. With\n"
            "-O N or --passes it draws the graph as optimized (default: as\n"
            "loaded).\n");
    cli_options_help(out, "dot");
}

/* Pipes text through `dot -Tsvg -o path`. */
static int render_svg(const char *text, const char *path)
{
    int fds[2];
    if (pipe(fds) != 0)
        return fprintf(stderr, "smelt dot: pipe: %s\n", strerror(errno)), 1;
    pid_t pid = fork();
    if (pid < 0)
        return fprintf(stderr, "smelt dot: fork: %s\n", strerror(errno)), 1;
    if (pid == 0) {
        dup2(fds[0], 0);
        close(fds[0]);
        close(fds[1]);
        execlp("dot", "dot", "-Tsvg", "-o", path, (char *)NULL);
        fprintf(stderr,
                "smelt dot: cannot run Graphviz 'dot' (%s); install the "
                "graphviz package\n",
                strerror(errno));
        _exit(127);
    }
    close(fds[0]);
    size_t len = strlen(text);
    int ok = write(fds[1], text, len) == (ssize_t)len;
    close(fds[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status) && WEXITSTATUS(status) != 127)
            fprintf(stderr, "smelt dot: Graphviz failed to render %s\n", path);
        return 1;
    }
    return 0;
}

int cli_dot(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&a, "dot", argc, argv, 1, 1, "FILE");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *file = a.files[0], *out = a.str[CLI_OPT_out],
               *svg = a.str[CLI_OPT_svg];
    int optimize = a.given[CLI_OPT_level] || a.given[CLI_OPT_passes];
    smelt_opt_options o;
    cli_opt_options(&a, &o, 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g;
    rc = cli_load_graph(ctx, file, 1, &g);
    char *text = NULL;
    if (!rc && optimize && smelt_graph_optimize(ctx, g, &o, NULL) != SMELT_OK)
        rc = cli_fail(ctx, file);
    if (!rc && smelt_graph_dot(ctx, g, &text) != SMELT_OK)
        rc = cli_fail(ctx, file);
    if (!rc && out) {
        FILE *f = fopen(out, "w");
        if (!f || fputs(text, f) < 0) {
            fprintf(stderr, "smelt dot: %s: %s\n", out, strerror(errno));
            rc = 1;
        }
        if (f && fclose(f) != 0 && !rc) {
            fprintf(stderr, "smelt dot: %s: %s\n", out, strerror(errno));
            rc = 1;
        }
    } else if (!rc && !svg) {
        fputs(text, stdout);
    }
    if (!rc && svg)
        rc = render_svg(text, svg);
    smelt_string_free(text);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a);
    return rc;
}
