/*
 * plan_cli.c - planner and optimizer options from the command line.
 */
#include "plan_cli.h"

#include <stdio.h>

#include "cli.h"

void cli_plan_options(const cli_args *a, smelt_plan_options *o)
{
    smelt_plan_options_default(o);
    o->threads = (int32_t)cli_num(a, CLI_OPT_threads, o->threads);
    o->level = (int32_t)cli_num(a, CLI_OPT_level, o->level);
    if (a->str[CLI_OPT_isa])
        o->isa = a->str[CLI_OPT_isa];
    if (a->n_dims)
        o->dims = a->dims_text;
    /* whole milliseconds, rounded up so that a short limit stays one */
    double t = cli_real(a, CLI_OPT_timeout, 0);
    if (t > 0)
        o->timeout_ms = (int64_t)(t * 1000.0 + 0.999);
    o->memory_budget = cli_num(a, CLI_OPT_memory_budget, 0);
    o->disable = a->str[CLI_OPT_disable];
}

void cli_opt_options(const cli_args *a, smelt_opt_options *o, int default_level)
{
    smelt_opt_options_default(o);
    o->level = (int32_t)cli_num(a, CLI_OPT_level, default_level);
    if (a->str[CLI_OPT_passes])
        o->passes = a->str[CLI_OPT_passes];
    if (a->given[CLI_OPT_fold_max_bytes]) {
        long long n = a->num[CLI_OPT_fold_max_bytes];
        o->fold_max_bytes = (uint64_t)(n ? n : 1);
    }
    o->unroll_max_trips =
        (int32_t)cli_num(a, CLI_OPT_unroll_max_trips, o->unroll_max_trips);
    if (a->given[CLI_OPT_verify_each])
        o->verify_each = 1;
    if (a->str[CLI_OPT_debug_dir])
        o->debug_dir = a->str[CLI_OPT_debug_dir];
    o->disable = a->str[CLI_OPT_disable];
}

int cli_plan_print(smelt_ctx_t *ctx, const smelt_plan_t *p)
{
    char *text = NULL;
    int rc = 0;
    if (smelt_plan_print(ctx, p, &text) != SMELT_OK)
        rc = cli_fail(ctx, "plan");
    else
        fputs(text, stdout);
    smelt_string_free(text);
    return rc;
}
