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
#include "opt_common.h"

void cli_opt_help(FILE *out)
{
    fprintf(
        out,
        "optimize a model and report what each pass changed\n\n"
        "usage: smelt opt FILE [-O0|-O1|-O2|-O3] [--passes=a,b,c] [-o OUT]\n"
        "                 [--stats] [--why-not-fused] [--debug-dir DIR]\n"
        "                 [--onnx-standard]\n\n"
        "Loads FILE (text IR or ONNX), runs the pipeline and writes the\n"
        "result to OUT (.ir: text IR, .onnx: ONNX) or, without -o, prints\n"
        "it as text IR. -O1 cleans up (inference, folding, CSE, DCE...),\n"
        "-O2 adds fusion and layout passes, -O3 everything.\n\n"
        "  -O0 .. -O3              the pipeline (default -O1)\n"
        "  --passes=a,b,c          run exactly these passes instead\n"
        "  -o OUT                  write the optimized model to OUT\n"
        "  --onnx-standard         write fused ops as standard ONNX ops (for\n"
        "                          other runtimes); by default they go in\n"
        "                          Smelt's domain ai.smelt\n"
        "  --stats                 per pass: nodes before -> after, constants\n"
        "                          folded, nodes removed and fused, planned\n"
        "                          peak memory, time\n"
        "  --why-not-fused         list each fusion rule's near misses\n"
        "  --debug-dir DIR         dump the graph after every pass into DIR\n"
        "                          (SMELT_DEBUG=1 dumps into ./smelt-debug)\n"
        "  --fold-max-bytes N      never fold into a constant above N bytes\n"
        "                          (default 64 MiB)\n"
        "  --unroll-max-trips N    unroll Loops of at most N trips (def. 16)\n"
        "  --verify-each           verify the graph after every pass\n"
        "  --list-passes           list the passes and their levels\n");
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

/* Parses a non-negative integer option value; -1 when malformed. */
static long long parse_count(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return (errno || end == s || *end || v < 0) ? -1 : v;
}

int cli_opt_option(int argc, char **argv, int *i, const char *verb,
                   smelt_opt_options *o)
{
    const char *a = argv[*i];
    if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
        o->level = a[2] - '0';
        return 1;
    }
    if (!strncmp(a, "--passes=", 9)) {
        o->passes = a + 9;
        return 1;
    }
    if (!strcmp(a, "--passes")) {
        o->passes = cli_option_value(argc, argv, i, verb);
        return o->passes ? 1 : -1;
    }
    if (!strcmp(a, "--fold-max-bytes") || !strcmp(a, "--unroll-max-trips")) {
        const char *v = cli_option_value(argc, argv, i, verb);
        long long n = v ? parse_count(v) : -1;
        if (n < 0 || (a[2] == 'u' && n > 1000000)) {
            if (v)
                cli_usage_error(verb, "%s needs a count, not '%s'", a, v);
            return -1;
        }
        if (a[2] == 'f')
            o->fold_max_bytes = (uint64_t)(n ? n : 1);
        else
            o->unroll_max_trips = (int32_t)n;
        return 1;
    }
    if (!strcmp(a, "--verify-each")) {
        o->verify_each = 1;
        return 1;
    }
    if (!strcmp(a, "--debug-dir")) {
        o->debug_dir = cli_option_value(argc, argv, i, verb);
        return o->debug_dir ? 1 : -1;
    }
    return 0;
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

typedef struct opt_args {
    const char *file, *out;
    int stats, list, standard;
    smelt_opt_options o;
} opt_args;

static int parse_args(int argc, char **argv, opt_args *a)
{
    for (int i = 1; i < argc; i++) {
        int r = cli_opt_option(argc, argv, &i, "opt", &a->o);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "-o")) {
            if (!(a->out = cli_option_value(argc, argv, &i, "opt")))
                return 2;
        } else if (!strcmp(argv[i], "--stats")) {
            a->stats = 1;
        } else if (!strcmp(argv[i], "--why-not-fused")) {
            a->o.why_not_fused = 1;
        } else if (!strcmp(argv[i], "--onnx-standard")) {
            a->standard = 1;
        } else if (!strcmp(argv[i], "--list-passes")) {
            a->list = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("opt", "unknown option '%s'", argv[i]);
        } else if (a->file) {
            return cli_usage_error("opt", "more than one FILE given");
        } else {
            a->file = argv[i];
        }
    }
    if (!a->file && !a->list)
        return cli_usage_error("opt", "no FILE given");
    return 0;
}

int cli_opt(int argc, char **argv)
{
    opt_args a = {0};
    smelt_opt_options_default(&a.o);
    int rc = parse_args(argc, argv, &a);
    if (rc || a.list) {
        if (!rc)
            list_passes();
        return rc;
    }
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
    if (!rc && a.out)
        rc = write_model(ctx, g, a.out, a.standard);
    else if (!rc) {
        char *text = NULL;
        if (smelt_graph_print(ctx, g, &text) != SMELT_OK)
            rc = cli_fail(ctx, "print");
        else
            fputs(text, stdout);
        smelt_string_free(text);
    }
    if (!rc)
        fprintf(info, "%s: %d -> %d nodes in %d passes%s%s\n", a.file, before,
                smelt_graph_num_nodes(g), smelt_opt_report_num_passes(rep),
                a.out ? ", wrote " : "", a.out ? a.out : "");
    smelt_string_free(table);
    smelt_opt_report_free(rep);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return rc;
}
