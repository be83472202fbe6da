/*
 * plan_cli.c - parsing the options shared by the verbs that run a model.
 */
#include "plan_cli.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_plan_opts_init(cli_plan_opts *c)
{
    memset(c, 0, sizeof *c);
    smelt_plan_options_default(&c->o);
}

void cli_plan_opts_help(FILE *out)
{
    fprintf(out,
            "  --threads N         threads for intra-op parallelism (default "
            "1;\n"
            "                      0: every CPU)\n"
            "  -O N, --level N     optimizer level before planning, 0..3 "
            "(default 3)\n"
            "  --isa NAME          scalar, avx2 or avx512: use kernels no "
            "wider\n"
            "  --dim NAME=SIZE     size of a symbolic dimension (repeat)\n"
            "  --plan              run a compiled plan (the default)\n"
            "  --reference         run the reference interpreter instead\n"
            "  --timeout SECONDS   stop a run that takes longer (a Loop with "
            "no\n"
            "                      bound) with an error\n");
}

int cli_parse_timeout(const char *s, const char *verb, int64_t *ms)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || v > 1e9) {
        cli_usage_error(verb, "--timeout needs a number of seconds > 0, got "
                              "'%s'",
                        s);
        return -1;
    }
    *ms = (int64_t)(v * 1000.0 + 0.999);
    return 0;
}

/* A whole number in [lo, hi] from s, else -1 after a usage error. */
static int parse_int(const char *s, int lo, int hi, const char *verb,
                     const char *opt)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        cli_usage_error(verb, "%s needs a number in %d..%d, got '%s'", opt, lo,
                        hi, s);
        return -1;
    }
    return (int)v;
}

int cli_plan_opt(cli_plan_opts *c, int argc, char **argv, int *i,
                 const char *verb)
{
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--reference")) {
        c->reference = 1;
        return 1;
    }
    if (!strcmp(a, "--plan")) {
        c->reference = 0;
        return 1;
    }
    if (!strcmp(a, "--timeout")) {
        if (!(v = cli_option_value(argc, argv, i, verb)))
            return -1;
        return cli_parse_timeout(v, verb, &c->o.timeout_ms) ? -1 : 1;
    }
    int is_threads = !strcmp(a, "--threads") || !strcmp(a, "-j");
    int is_level = !strcmp(a, "--level") || !strcmp(a, "-O");
    if (!is_threads && !is_level && strcmp(a, "--isa") && strcmp(a, "--dim"))
        return 0;
    if (!(v = cli_option_value(argc, argv, i, verb)))
        return -1;
    if (is_threads) {
        int n = parse_int(v, 0, 1024, verb, a);
        if (n < 0)
            return -1;
        c->o.threads = n;
    } else if (is_level) {
        int n = parse_int(v, 0, 3, verb, a);
        if (n < 0)
            return -1;
        c->o.level = n;
    } else if (!strcmp(a, "--isa")) {
        c->o.isa = v;
    } else {
        const char *eq = strchr(v, '=');
        size_t len = strlen(c->dims);
        if (!eq || eq == v || !eq[1] || len + strlen(v) + 2 >= sizeof c->dims) {
            cli_usage_error(verb, "--dim needs NAME=SIZE, got '%s'", v);
            return -1;
        }
        snprintf(c->dims + len, sizeof c->dims - len, "%s%s", len ? "," : "",
                 v);
        c->o.dims = c->dims;
    }
    return 1;
}

long long cli_plan_dim(const cli_plan_opts *c, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = c->dims; name && *p;) {
        const char *eq = strchr(p, '=');
        if (!eq)
            break;
        if ((size_t)(eq - p) == n && !strncmp(p, name, n))
            return atoll(eq + 1);
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return -1;
}
