/*
 * plan_cli.h - smelt_plan_options and smelt_opt_options from the parsed
 * options (args.h), for every verb that plans or optimizes.
 */
#ifndef SMELT_PLAN_CLI_H
#define SMELT_PLAN_CLI_H

#include "args.h"

/* Defaults, then --threads, -O, --isa, --dim, --timeout (a must outlive o: the
 * strings are a's). */
void cli_plan_options(const cli_args *a, smelt_plan_options *o);
/* Defaults with level default_level, then -O, --passes, --fold-max-bytes,
 * --unroll-max-trips, --verify-each, --debug-dir. */
/* Prints plan p (smelt_plan_print: steps, kernels and what each decided,
 * memory map) on stdout; 0, or 1 after reporting an error. */
int cli_plan_print(smelt_ctx_t *ctx, const smelt_plan_t *p);
void cli_opt_options(const cli_args *a, smelt_opt_options *o,
                     int default_level);

#endif
