/*
 * plan_cli.h - the options every verb that runs a model shares (run,
 * bench): threads, optimizer level, ISA, symbolic dim sizes, and the
 * reference interpreter instead of a plan.
 */
#ifndef SMELT_PLAN_CLI_H
#define SMELT_PLAN_CLI_H

#include <stdio.h>

#include "smelt.h"

#define CLI_MAX_DIMS 64

typedef struct cli_plan_opts {
    smelt_plan_options o;
    int reference;   /* --reference: the interpreter, no plan */
    char dims[1024]; /* --dim a=1 --dim b=2 joined: "a=1,b=2" */
} cli_plan_opts;

void cli_plan_opts_init(cli_plan_opts *c);
/* If argv[*i] is one of the shared options, consumes it (and its value,
 * advancing *i) and returns 1; returns 0 when it is not one, -1 after
 * printing a usage error. */
int cli_plan_opt(cli_plan_opts *c, int argc, char **argv, int *i,
                 const char *verb);
/* The help lines of the shared options. */
void cli_plan_opts_help(FILE *out);
/* --timeout's SECONDS into *ms; -1 after printing a usage error. */
int cli_parse_timeout(const char *s, const char *verb, int64_t *ms);
/* The size bound to symbolic dim `name` by --dim, or -1. */
long long cli_plan_dim(const cli_plan_opts *c, const char *name);

#endif
