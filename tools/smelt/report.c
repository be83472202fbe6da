/*
 * report.c - `smelt report FILE -o report.html`: everything the other
 * verbs say about a model, on one self-contained page (report.h).
 *
 * It loads FILE, optimizes a copy at the plan's level (noting near-miss
 * fusions) for the before/after drawings and the pass table, compiles
 * and profiles the plan (prof.c), and runs `smelt check` on the same
 * model and inputs as a child process, whose report the page quotes:
 * one implementation of each, the page only gathers them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"
#include "plan_cli.h"
#include "report.h"

void cli_report_help(FILE *out)
{
    fprintf(out,
            "write one HTML page about a model: graph, passes, profile, "
            "roofline, memory, check\n\n"
            "usage: smelt report FILE -o report.html [options]\n\n"
            "Loads FILE, draws it before and after optimization (Graphviz;\n"
            "big graphs in pages), lists what each pass changed and the\n"
            "near-miss fusions, profiles the compiled plan (--runs, default\n"
            "20), draws the roofline and the memory timeline, and quotes\n"
            "`smelt check` on the same inputs. The page has its CSS, script\n"
            "and pictures inline: it opens offline. See docs/PROFILING.md.\n");
    cli_options_help(out, "report");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Runs argv with stdout and stderr into *out (at most 1 MiB kept); the
 * exit status, or -1 when it could not run. */
static int capture(char *const *argv, char **out)
{
    enum { CAP = 1 << 20 };
    *out = NULL;
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    char *buf = malloc(CAP + 1);
    size_t n = 0;
    ssize_t k;
    char sink[4096];
    while ((k = read(fds[0], buf && n < CAP ? buf + n : sink,
                     buf && n < CAP ? CAP - n : sizeof sink)) > 0)
        if (buf && n < CAP)
            n += (size_t)k;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (buf)
        buf[n] = '\0';
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* `smelt check FILE` with the model options this report was given. */
static int run_check(const cli_args *a, const char *file, char **out)
{
    int n = 0, cap = 9 + 2 * (a->n_inputs + a->n_dims);
    char **argv = calloc((size_t)cap, sizeof *argv);
    char **owned = calloc((size_t)a->n_dims + 1, sizeof *owned);
    int rc = -1;
    if (!argv || !owned)
        goto done;
    argv[n++] = "/proc/self/exe";
    argv[n++] = "check";
    argv[n++] = (char *)file;
    argv[n++] = "--quiet";
    for (int i = 0; i < a->n_inputs; i++) {
        argv[n++] = "--input";
        argv[n++] = (char *)a->inputs[i];
    }
    for (int i = 0; i < a->n_dims; i++) {
        const cli_dim *d = &a->dims[i];
        size_t len = (size_t)d->len + 32;
        if (!(owned[i] = malloc(len)))
            goto done;
        snprintf(owned[i], len, "%.*s=%lld", d->len, d->name, d->size);
        argv[n++] = "--dim";
        argv[n++] = owned[i];
    }
    if (a->given[CLI_OPT_cast])
        argv[n++] = "--cast";
    if (a->str[CLI_OPT_fn]) {
        argv[n++] = "--fn";
        argv[n++] = (char *)a->str[CLI_OPT_fn];
    }
    argv[n] = NULL;
    rc = capture(argv, out);
done:
    for (int i = 0; owned && i < a->n_dims; i++)
        free(owned[i]);
    free(owned);
    free(argv);
    return rc;
}

typedef struct report_args {
    const char *file, *out;
    int runs, warmup, quiet;
    double gflops, gbs;
    cli_args args;
    smelt_plan_options po;
} report_args;

static int parse_args(int argc, char **argv, report_args *a)
{
    memset(a, 0, sizeof *a);
    int rc = cli_args_parse(&a->args, "report", argc, argv, 1, 1, "FILE");
    if (rc)
        return rc;
    const cli_args *c = &a->args;
    a->file = c->files[0];
    a->out = c->str[CLI_OPT_out];
    if (!a->out)
        return cli_usage_error("report", "no -o OUT.html given");
    a->runs = (int)cli_num(c, CLI_OPT_runs, 20);
    a->warmup = (int)cli_num(c, CLI_OPT_warmup, 3);
    a->quiet = c->given[CLI_OPT_quiet] > 0;
    a->gflops = cli_real(c, CLI_OPT_peak_gflops, 0);
    a->gbs = cli_real(c, CLI_OPT_peak_gbs, 0);
    cli_plan_options(c, &a->po);
    return 0;
}

/* The optimized copy of g at the plan's level, with what each pass did
 * and its near misses. 0, or 1 after the error. */
static int optimize_copy(smelt_ctx_t *ctx, const report_args *a,
                         const smelt_graph_t *g, smelt_graph_t **after,
                         smelt_opt_report_t **rep)
{
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = a->po.level;
    o.why_not_fused = 1;
    if (smelt_graph_clone(ctx, g, after) != SMELT_OK)
        return cli_fail(ctx, a->file);
    if (a->args.dims_text &&
        smelt_graph_bind_dims(ctx, *after, a->args.dims_text) != SMELT_OK)
        return cli_fail(ctx, a->file);
    if (smelt_graph_optimize(ctx, *after, &o, rep) != SMELT_OK)
        return cli_fail(ctx, a->file);
    return 0;
}

/* Loads, binds inputs, optimizes a copy and compiles the plan. */
static int prepare(smelt_ctx_t *ctx, report_args *a, smelt_graph_t **g,
                   smelt_graph_t **after, smelt_opt_report_t **rep,
                   smelt_tensor_t ***in, int *n_in, smelt_plan_t **p,
                   double *compile_ms)
{
    int rc = cli_load_graph(ctx, a->file, 1, g);
    *n_in = *g ? smelt_graph_num_inputs(*g) : 0;
    if (!rc)
        rc = cli_check_dims(&a->args, *g);
    if (!rc && !(*in = calloc((size_t)*n_in + 1, sizeof **in))) {
        fprintf(stderr, "smelt report: out of memory\n");
        rc = 1;
    }
    cli_input_rule rule = {
        .random = 1, .seed = 42, .dim_default = 1, .dim_notice = 1};
    if (!rc)
        rc = cli_bind_inputs(ctx, &a->args, *g, &rule, *in);
    if (!rc)
        rc = optimize_copy(ctx, a, *g, after, rep);
    if (!rc) {
        a->po.inputs = *in;
        a->po.n_inputs = *n_in;
        double t0 = now_ms();
        if (smelt_plan_compile(ctx, *g, &a->po, p) != SMELT_OK)
            rc = cli_fail(ctx, a->file);
        *compile_ms = now_ms() - t0;
    }
    return rc;
}

int cli_report(int argc, char **argv)
{
    report_args a;
    int rc = parse_args(argc, argv, &a);
    FILE *out = NULL;
    if (!rc && !(out = fopen(a.out, "w"))) {
        fprintf(stderr, "smelt report: -o %s: %s\n", a.out, strerror(errno));
        rc = 1;
    }
    smelt_ctx_t *ctx = rc ? NULL : smelt_ctx_init();
    if (ctx)
        smelt_ctx_set_timeout(ctx, a.po.timeout_ms);
    smelt_graph_t *g = NULL, *after = NULL;
    smelt_opt_report_t *rep = NULL;
    smelt_plan_t *p = NULL;
    smelt_tensor_t **in = NULL;
    int n_in = 0;
    cli_prof pr = {0};
    report_data d = {.file = a.file, .level = a.po.level};
    char *check_out = NULL;
    if (!rc)
        rc = prepare(ctx, &a, &g, &after, &rep, &in, &n_in, &p, &d.compile_ms);
    if (!rc)
        rc = cli_prof_init(&pr, a.runs, smelt_plan_num_steps(p), 1);
    if (!rc) {
        cli_progress pg;
        cli_progress_start(&pg, "report", "runs", a.warmup + a.runs, a.quiet);
        rc = cli_prof_run(ctx, p, in, n_in, a.warmup, a.file, &pg, &pr);
        cli_progress_end(&pg);
    }
    if (!rc)
        rc = cli_prof_rows(p, &pr, 0, &d.rows, &d.n_rows);
    if (!rc) {
        smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
        smelt_plan_get_stats(p, &st);
        d.gflops = a.gflops;
        d.gbs = a.gbs;
        cli_peaks(ctx, st.threads, &d.gflops, &d.gbs);
        d.check_rc = run_check(&a.args, a.file, &check_out);
        d.check_out = check_out;
        d.before = g;
        d.after = after;
        d.passes = rep;
        d.plan = p;
        d.prof = &pr;
        rc = report_write_html(out, &d);
    }
    if (out) {
        if ((ferror(out) | (fclose(out) != 0)) && !rc) {
            perror(a.out);
            rc = 1;
        }
        if (rc)
            remove(a.out);
        else if (!a.quiet)
            printf("report: %s\n", a.out);
    }
    free(check_out);
    free(d.rows);
    cli_prof_free(&pr);
    for (int i = 0; in && i < n_in; i++)
        smelt_tensor_free(in[i]);
    free(in);
    smelt_plan_free(p);
    smelt_opt_report_free(rep);
    smelt_graph_free(after);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a.args);
    return rc;
}
