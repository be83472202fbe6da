/*
 * opt_plan.h - the plan's decisions for the graph `smelt opt` optimized
 * (opt_plan.c).
 */
#ifndef SMELT_CLI_OPT_PLAN_H
#define SMELT_CLI_OPT_PLAN_H

#include <stdio.h>

#include "args.h"

/* Compiles g (already optimized) into a plan with the --dim sizes of a,
 * dumping it into debug_dir (NULL: ./smelt-debug under SMELT_DEBUG=1,
 * else no dump), and prints the plan's memory and layout decisions to
 * out (NULL: print nothing; with no dump either, compiles nothing). Symbolic
 * dims left unbound are reported, not guessed, and are no error. Returns 0, or
 * 1 after printing why the plan failed otherwise. */
int cli_opt_plan_report(smelt_ctx_t *ctx, const smelt_graph_t *g,
                        const cli_args *a, const char *debug_dir, FILE *out);

#endif
