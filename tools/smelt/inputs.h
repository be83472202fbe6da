/*
 * inputs.h - binding a model's inputs for run, bench and check: --input
 * files (by name or in order), --cast, random values for the rest, and
 * symbolic dims from --dim.
 */
#ifndef SMELT_CLI_INPUTS_H
#define SMELT_CLI_INPUTS_H

#include <stdint.h>

#include "args.h"

typedef struct cli_input_rule {
    int random;            /* inputs without a file get random values */
    uint64_t seed;         /* of those values */
    long long dim_default; /* size of a symbolic dim --dim leaves unbound;
                              -1: an error */
    int dim_notice;        /* say so when dim_default is used */
    int n_random;          /* out: how many inputs were made random */
} cli_input_rule;

/* Fills inputs[0..num_inputs(g)) (NULL on entry; the caller frees them
 * all, also on failure). Returns 0, or 1 after printing the problem:
 * an unknown input name, one given twice, a .npy that fails to load, a
 * float file of another dtype than the input's without --cast, an input
 * with no value. */
int cli_bind_inputs(smelt_ctx_t *ctx, const cli_args *a, const smelt_graph_t *g,
                    cli_input_rule *rule, smelt_tensor_t **inputs);

/* Graph input `name` (len bytes), -1 when none. */
int cli_input_index(const smelt_graph_t *g, const char *name, size_t len);

#endif
