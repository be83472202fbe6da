/*
 * cli.h - the smelt command-line tool: one file per verb, each calling only
 * the public API (smelt.h).
 */
#ifndef SMELT_CLI_H
#define SMELT_CLI_H

#include <stdio.h>

#include "smelt.h"

typedef struct cli_verb {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the verb */
    void (*help)(FILE *out);
} cli_verb;

/* Prints "smelt: <what>: <ctx error>" to stderr and returns 1. */
int cli_fail(smelt_ctx_t *ctx, const char *what);
/* Prints "smelt VERB: message" to stderr and returns 2 (usage error). */
int cli_usage_error(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The script function chosen by --fn NAME (NULL: the file's last
 * function); set by cli_args_parse. */
extern const char *cli_script_fn;

/* Loads FILE (text IR, ONNX, or a script: see cli_script_fn), infers shapes
 * when asked, verifies; on failure prints the error and returns nonzero with *g
 * NULL. --fn on a file that is not a script is a usage error (2). */
int cli_load_graph(smelt_ctx_t *ctx, const char *path, int infer,
                   smelt_graph_t **g);
/* Constants of more values than this print summarized (smelt print and
 * smelt opt without --weights). */
#define CLI_SUMMARY_VALUES 16
/* Prints g as text IR to stdout: every value of every constant with
 * weights, else the larger constants summarized. 0, or 1 after printing
 * the error. */
int cli_print_graph(smelt_ctx_t *ctx, const smelt_graph_t *g, int weights);

/* --loss sum|mean (NULL: sum) as a smelt_loss_reduce; -1 after printing
 * the usage error for anything else (gradcheck, grad). */
int cli_loss_reduce(const char *verb, const char *s);

#define CLI_VERB(name)                                                         \
    int cli_##name(int argc, char **argv);                                     \
    void cli_##name##_help(FILE *out);
#include "verbs.def"
#undef CLI_VERB

#endif
