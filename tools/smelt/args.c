/*
 * args.c - the table-driven option parser shared by every verb
 * (options.def), and the option part of each verb's --help.
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { FLAG, STR, INT, REAL, LIST, DIM };

typedef struct opt_row {
    const char *lng, *shrt;
    int kind;
    double lo, hi;
    const char *verbs, *value, *help;
} opt_row;

static const opt_row opts[CLI_OPT_COUNT] = {
#define CLI_OPT(key, lng, shrt, kind, lo, hi, verbs, value, help)              \
    {lng, shrt, kind, (double)(lo), (double)(hi), verbs, value, help},
#include "options.def"
#undef CLI_OPT
};

/* True when the space-separated word list holds word. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && !strncmp(p, word, n))
            return 1;
        p += k;
        p += strspn(p, " ");
    }
    return 0;
}

int cli_verb_takes(const char *verb, cli_opt_key k)
{
    return (unsigned)k < CLI_OPT_COUNT && has_word(opts[k].verbs, verb);
}

/* The option arg names, for verb: its key, and in *attached the value
 * written into the same argument ("--runs=5", "-O3"), else NULL. -1 when
 * it is none of the verb's options. */
static int find_option(const char *verb, const char *arg, const char **attached)
{
    *attached = NULL;
    for (int k = 0; k < CLI_OPT_COUNT; k++) {
        const opt_row *o = &opts[k];
        if (!has_word(o->verbs, verb))
            continue;
        size_t n = strlen(o->lng);
        if (!strncmp(arg, o->lng, n) && (!arg[n] || arg[n] == '=')) {
            if (arg[n] == '=')
                *attached = arg + n + 1;
            return k;
        }
        if (o->shrt && !strncmp(arg, o->shrt, 2) &&
            (!arg[2] || o->kind != FLAG)) {
            if (arg[2])
                *attached = arg + 2;
            return k;
        }
    }
    return -1;
}

/* Whether arg names an option of any verb (for "unknown option" wording
 * and for telling a missing value from a value). */
static int any_verb_option(const char *arg)
{
    for (int k = 0; k < CLI_OPT_COUNT; k++) {
        size_t n = strlen(opts[k].lng);
        if ((!strncmp(arg, opts[k].lng, n) && (!arg[n] || arg[n] == '=')) ||
            (opts[k].shrt && !strncmp(arg, opts[k].shrt, 2)))
            return k;
    }
    return -1;
}

/* A whole number in lo..hi, else a usage error. */
static int parse_int(const char *verb, const char *opt, const char *s,
                     double lo, double hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || (double)v < lo || (double)v > hi) {
        if (hi >= 1e18) /* no useful upper bound to state */
            return cli_usage_error(verb,
                                   "%s needs a whole number >= %.0f, "
                                   "got '%s'",
                                   opt, lo, s);
        return cli_usage_error(verb,
                               "%s needs a whole number in %.0f..%.0f, "
                               "got '%s'",
                               opt, lo, hi, s);
    }
    *out = v;
    return 0;
}

static int parse_real(const char *verb, const char *opt, const char *s,
                      double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi) || isinf(v)) {
        if (hi >= 1e300)
            return cli_usage_error(verb, "%s needs a number >= %g, got '%s'",
                                   opt, lo, s);
        return cli_usage_error(verb, "%s needs a number in %g..%g, got '%s'",
                               opt, lo, hi, s);
    }
    *out = v;
    return 0;
}

/* --dim NAME=SIZE: a name, a whole size >= 0, each name once. */
static int parse_dim(cli_args *a, const char *s)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1])
        return cli_usage_error(a->verb, "--dim needs NAME=SIZE, got '%s'", s);
    char *end;
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (*end || errno || v < 0 || v > ((long long)1 << 40))
        return cli_usage_error(a->verb,
                               "--dim %s: the size must be a whole number "
                               ">= 0, got '%s'",
                               s, eq + 1);
    int len = (int)(eq - s);
    for (int i = 0; i < a->n_dims; i++)
        if (a->dims[i].len == len && !strncmp(a->dims[i].name, s, (size_t)len))
            return cli_usage_error(a->verb, "--dim %.*s is given twice", len,
                                   s);
    a->dims[a->n_dims++] = (cli_dim){s, len, v};
    return 0;
}

/* Stores one option's value (v NULL for flags); `as` is the option as the
 * user wrote it, for messages. */
static int take_value(cli_args *a, int k, const char *as, const char *v)
{
    const opt_row *o = &opts[k];
    a->given[k]++;
    switch (o->kind) {
    case FLAG: return 0;
    case STR: a->str[k] = v; return 0;
    case INT: return parse_int(a->verb, as, v, o->lo, o->hi, &a->num[k]);
    case REAL: return parse_real(a->verb, as, v, o->lo, o->hi, &a->real[k]);
    case LIST: a->inputs[a->n_inputs++] = v; return 0;
    default: return parse_dim(a, v);
    }
}

/* "a=1,b=2" from the --dim options, for smelt_plan_options.dims. */
static int join_dims(cli_args *a)
{
    size_t n = 1;
    for (int i = 0; i < a->n_dims; i++)
        n += (size_t)a->dims[i].len + 24;
    if (!(a->dims_text = malloc(n)))
        return 1;
    size_t k = 0;
    a->dims_text[0] = 0;
    for (int i = 0; i < a->n_dims; i++)
        k += (size_t)snprintf(a->dims_text + k, n - k, "%s%.*s=%lld",
                              i ? "," : "", a->dims[i].len, a->dims[i].name,
                              a->dims[i].size);
    return 0;
}

/* The usage error for a wrong number of positionals. */
static int files_error(const cli_args *a, int min, int max, const char *what)
{
    if (a->n_files < min && min == max && min == 2)
        return cli_usage_error(a->verb, "two %s are needed, got %d", what,
                               a->n_files);
    if (a->n_files < min)
        return cli_usage_error(a->verb, "no %s given", what);
    return cli_usage_error(a->verb, "more than %s %s given",
                           max == 1 ? "one" : "two", what);
}

int cli_args_parse(cli_args *a, const char *verb, int argc, char **argv,
                   int min_files, int max_files, const char *what)
{
    memset(a, 0, sizeof *a);
    a->verb = verb;
    size_t n = (size_t)(argc > 0 ? argc : 1);
    a->inputs = calloc(n, sizeof *a->inputs);
    a->dims = calloc(n, sizeof *a->dims);
    a->files = calloc(n, sizeof *a->files);
    if (!a->inputs || !a->dims || !a->files) {
        fprintf(stderr, "smelt %s: out of memory\n", verb);
        return 2;
    }
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (only_files || arg[0] != '-' || !arg[1]) {
            a->files[a->n_files++] = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            only_files = 1;
            continue;
        }
        int k = find_option(verb, arg, &v);
        if (k < 0) {
            int other = any_verb_option(arg);
            if (other >= 0)
                return cli_usage_error(verb, "'smelt %s' takes no %s option",
                                       verb, opts[other].lng);
            return cli_usage_error(verb, "unknown option '%s'", arg);
        }
        if (opts[k].kind == FLAG && v)
            return cli_usage_error(verb, "%s takes no value", opts[k].lng);
        if (opts[k].kind != FLAG && !v) {
            /* the next argument is the value, unless it is an option */
            const char *next = i + 1 < argc ? argv[i + 1] : NULL;
            const char *dummy;
            if (!next || (next[0] == '-' && next[1] == '-') ||
                (next[0] == '-' && find_option(verb, next, &dummy) >= 0))
                return cli_usage_error(verb, "option %s needs a value (%s)",
                                       arg, opts[k].value);
            v = argv[++i];
        }
        if (take_value(a, k, arg[1] == '-' ? opts[k].lng : opts[k].shrt, v))
            return 2;
    }
    if (a->n_files < min_files || a->n_files > max_files)
        return files_error(a, min_files, max_files, what);
    if (join_dims(a)) {
        fprintf(stderr, "smelt %s: out of memory\n", verb);
        return 2;
    }
    if (a->str[CLI_OPT_fn])
        cli_script_fn = a->str[CLI_OPT_fn];
    return 0;
}

void cli_args_free(cli_args *a)
{
    free(a->inputs);
    free(a->dims);
    free(a->files);
    free(a->dims_text);
    memset(a, 0, sizeof *a);
}

long long cli_num(const cli_args *a, cli_opt_key k, long long def)
{
    return a->given[k] ? a->num[k] : def;
}

double cli_real(const cli_args *a, cli_opt_key k, double def)
{
    return a->given[k] ? a->real[k] : def;
}

long long cli_dim_size(const cli_args *a, const char *name)
{
    size_t n = name ? strlen(name) : 0;
    for (int i = 0; name && i < a->n_dims; i++)
        if ((size_t)a->dims[i].len == n && !strncmp(a->dims[i].name, name, n))
            return a->dims[i].size;
    return -1;
}

/* Whether some input of g has a dim named name (len bytes). */
static int graph_has_dim(const smelt_graph_t *g, const char *name, int len)
{
    for (int i = 0; i < smelt_graph_num_inputs(g); i++)
        for (int d = 0; d < smelt_graph_input_ndim(g, i); d++) {
            const char *s = smelt_graph_input_dim_name(g, i, d);
            if (s && (int)strlen(s) == len && !strncmp(s, name, (size_t)len))
                return 1;
        }
    return 0;
}

int cli_check_dims(const cli_args *a, const smelt_graph_t *g)
{
    for (int i = 0; i < a->n_dims; i++) {
        if (graph_has_dim(g, a->dims[i].name, a->dims[i].len))
            continue;
        fprintf(stderr,
                "smelt %s: --dim %.*s: no input has a dimension "
                "named '%.*s'; the inputs' symbolic dims are:",
                a->verb, a->dims[i].len, a->dims[i].name, a->dims[i].len,
                a->dims[i].name);
        int any = 0;
        for (int j = 0; j < smelt_graph_num_inputs(g); j++)
            for (int d = 0; d < smelt_graph_input_ndim(g, j); d++) {
                const char *s = smelt_graph_input_dim_name(g, j, d);
                if (s && smelt_graph_input_dim(g, j, d) < 0)
                    fprintf(stderr, "%s %s", any++ ? "," : "", s);
            }
        fprintf(stderr, "%s\n", any ? "" : " (none)");
        return 2;
    }
    return 0;
}

/* Writes text from column col, wrapped to width columns, continuation
 * lines indented to indent. */
static void wrap(FILE *out, const char *text, int col, int indent, int width)
{
    int first = 1;
    for (const char *p = text + strspn(text, " "); *p;) {
        int w = (int)strcspn(p, " ");
        if (!first && col + 1 + w > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", w, p);
        col += w;
        first = 0;
        p += w;
        p += strspn(p, " ");
    }
    fputc('\n', out);
}

void cli_options_help(FILE *out, const char *verb)
{
    enum { COL = 24, WIDTH = 78 };
    int any = 0;
    for (int k = 0; k < CLI_OPT_COUNT; k++) {
        const opt_row *o = &opts[k];
        if (!has_word(o->verbs, verb))
            continue;
        if (!any++)
            fprintf(out, "\noptions:\n");
        char head[64];
        if (o->shrt && o->value)
            snprintf(head, sizeof head, "  %s %s, %s %s", o->shrt, o->value,
                     o->lng, o->value);
        else if (o->shrt)
            snprintf(head, sizeof head, "  %s, %s", o->shrt, o->lng);
        else if (o->value)
            snprintf(head, sizeof head, "  %s %s", o->lng, o->value);
        else
            snprintf(head, sizeof head, "  %s", o->lng);
        int col = (int)strlen(head);
        fputs(head, out);
        if (col + 2 > COL) {
            fprintf(out, "\n%*s", COL, "");
            col = COL;
        } else {
            fprintf(out, "%*s", COL - col, "");
            col = COL;
        }
        wrap(out, o->help, col, COL, WIDTH);
    }
}
