/*
 * args.h - the one option parser of the CLI. Every option is a row of
 * options.def (which verbs take it, its value kind, its help); every verb
 * parses its argv with cli_args_parse and prints its options with
 * cli_options_help, so a verb's --help is generated from the same table
 * that decides what it accepts.
 */
#ifndef SMELT_CLI_ARGS_H
#define SMELT_CLI_ARGS_H

#include <stdio.h>

#include "smelt.h"

typedef enum cli_opt_key {
#define CLI_OPT(key, lng, shrt, kind, lo, hi, verbs, value, help) CLI_OPT_##key,
#include "options.def"
#undef CLI_OPT
    CLI_OPT_COUNT
} cli_opt_key;

typedef struct cli_dim {
    const char *name; /* points into argv; not NUL-terminated at len */
    int len;
    long long size;
} cli_dim;

typedef struct cli_args {
    const char *verb;
    int given[CLI_OPT_COUNT];       /* times each option was given */
    const char *str[CLI_OPT_COUNT]; /* STR: the last value */
    long long num[CLI_OPT_COUNT];   /* INT */
    double real[CLI_OPT_COUNT];     /* REAL */
    const char **inputs;            /* --input values, in order */
    int n_inputs;
    cli_dim *dims; /* --dim, in order, names distinct */
    int n_dims;
    const char **files; /* positional arguments */
    int n_files;
    char *dims_text; /* "a=1,b=2" for smelt_plan_options.dims */
} cli_args;

/* Parses argv[1..argc-1] for verb: options from the table that the verb
 * takes, the rest positional (between min_files and max_files of them,
 * named `what` in messages: "FILE", "DIR"). Returns 0, or 2 after printing
 * a usage error (unknown option, missing or malformed value, repeated
 * --dim, wrong number of positionals). Free with cli_args_free either way. */
int cli_args_parse(cli_args *a, const char *verb, int argc, char **argv,
                   int min_files, int max_files, const char *what);
void cli_args_free(cli_args *a);

/* The value of an INT option, or def when it was not given. */
long long cli_num(const cli_args *a, cli_opt_key k, long long def);
/* The value of a REAL option, or def. */
double cli_real(const cli_args *a, cli_opt_key k, double def);
/* The size --dim gave symbolic dim `name`, or -1. */
long long cli_dim_size(const cli_args *a, const char *name);

/* Checks every --dim names a symbolic dim of some input of g; prints the
 * error (listing the graph's symbolic dims) and returns 2 when not. */
int cli_check_dims(const cli_args *a, const smelt_graph_t *g);

/* The help lines of every option verb takes, from the table. */
void cli_options_help(FILE *out, const char *verb);
/* True when verb takes option k (per the table). */
int cli_verb_takes(const char *verb, cli_opt_key k);

#endif
