/*
 * main.c - dispatch of `smelt VERB ...` to the verb table in verbs.def.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_verb verbs[] = {
#define CLI_VERB(name) {#name, cli_##name, cli_##name##_help},
#include "verbs.def"
#undef CLI_VERB
};

#define N_VERBS ((int)(sizeof verbs / sizeof *verbs))

int cli_fail(smelt_ctx_t *ctx, const char *what)
{
    /* Loaders' messages begin with the file already ("m.onnx: onnx: ...",
     * "m.ir:3:5: error: ..."): name it once. */
    const char *msg = smelt_ctx_error(ctx);
    size_t n = strlen(what);
    if (strncmp(msg, what, n) == 0 && msg[n] == ':')
        fprintf(stderr, "smelt: %s\n", msg);
    else
        fprintf(stderr, "smelt: %s: %s\n", what, msg);
    return 1;
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "smelt %s: ", verb);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'smelt %s --help')\n", verb);
    va_end(ap);
    return 2;
}

/* True when argv has -h or --help. */
static int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: smelt VERB [options] [FILE]\n\n"
                 "Smelt compiles neural-network graphs and runs them.\n\n"
                 "verbs:\n");
    for (int i = 0; i < N_VERBS; i++) {
        fprintf(out, "  %-12s ", verbs[i].name);
        /* the first line of each verb's help is its summary */
        char buf[256] = "";
        FILE *mem = fmemopen(buf, sizeof buf - 1, "w");
        if (mem) {
            verbs[i].help(mem);
            fclose(mem);
        }
        char *nl = strchr(buf, '\n');
        if (nl)
            *nl = 0;
        fprintf(out, "%s\n", buf);
    }
    fprintf(out, "\nEvery verb that loads a model takes --fn NAME: the "
                 "function of a\nscript (.py) model to load.\n"
                 "\n'smelt VERB --help' describes one verb and lists its "
                 "options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("smelt %d.%d.%d\n", SMELT_VERSION_MAJOR, SMELT_VERSION_MINOR,
               SMELT_VERSION_PATCH);
        return 0;
    }
    for (int i = 0; i < N_VERBS; i++)
        if (!strcmp(argv[1], verbs[i].name)) {
            if (cli_wants_help(argc - 1, argv + 1)) {
                verbs[i].help(stdout);
                return 0;
            }
            return verbs[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "smelt: unknown verb '%s' (see 'smelt --help')\n", argv[1]);
    return 2;
}
