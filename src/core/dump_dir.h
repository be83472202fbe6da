/*
 * dump_dir.h - where the debug dump goes (SMELT_DEBUG=1 or --debug-dir),
 * and adding a file to it from any layer: the optimizer writes the
 * graphs (passes/dump.c), the plan its plan.txt (plan/plan.c).
 */
#ifndef SM_DUMP_DIR_H
#define SM_DUMP_DIR_H

#include "core/status.h"

/* The dump folder in effect: `given` when set, else ./smelt-debug when
 * SMELT_DEBUG is set (and not "0"), else NULL (no dump). */
const char *sm_dump_dir(const char *given);

/* Writes text to dir/name (creating dir) and appends "name<TAB>label" to
 * dir/index.txt, starting the index when there is none: for what is
 * dumped after the pipeline ran (the plan). */
smelt_status sm_dump_append(smelt_ctx_t *ctx, const char *dir, const char *name,
                            const char *label, const char *text);

#endif
