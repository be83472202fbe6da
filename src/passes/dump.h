/*
 * dump.h - the debug dump of a compile (SMELT_DEBUG=1 or --debug-dir):
 * the graph as captured and after each pass, as text IR, DOT and (when
 * Graphviz is installed) SVG, numbered in pass order, whatever passes add
 * (generated code), and the plan compiled from the result (plan.txt,
 * written by the plan through core/dump_dir.h), all listed in index.txt.
 */
#ifndef SM_DUMP_H
#define SM_DUMP_H

#include "passes/pass.h"

typedef struct sm_pass_dumper sm_pass_dumper;

/* Creates dir when missing and starts its index.txt. */
smelt_status sm_dump_open(smelt_ctx_t *ctx, const char *dir,
                          sm_pass_dumper **out);
/* Writes NNN-label.ir, .dot and .svg for g at pipeline step `step`. */
smelt_status sm_dump_graph(sm_pass_dumper *d, const sm_graph *g, int step,
                           const char *label);
void sm_dump_close(sm_pass_dumper *d);

#endif
