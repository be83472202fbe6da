/*
 * opt_common.h - optimizer options shared by `smelt opt` and
 * `smelt check` (defined in opt.c).
 */
#ifndef SMELT_CLI_OPT_COMMON_H
#define SMELT_CLI_OPT_COMMON_H

#include "smelt.h"

/* Applies argv[*i] when it is an optimizer option (-O0..-O3, --passes,
 * --fold-max-bytes, --unroll-max-trips, --verify-each, --debug-dir),
 * advancing *i past its value. Returns 1 when it was one, 0 when not, -1
 * after printing a usage error. */
int cli_opt_option(int argc, char **argv, int *i, const char *verb,
                   smelt_opt_options *o);

#endif
