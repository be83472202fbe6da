/*
 * testutil.h - helpers shared by the cmocka unit tests.
 */
#ifndef SM_TESTUTIL_H
#define SM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "smelt.h"

/* Reads a whole file (NUL-terminated); NULL when it cannot be read. */
char *tu_read_file(const char *path, size_t *len);
/* Path under tests/: tu_path("ir/x.ir") -> ".../tests/passes/x.ir" (static). */
const char *tu_path(const char *rel);

/* Runs `cmd` through the shell in folder dir (NULL: the current one) with
 * stderr joined to stdout; returns the exit code (-1 when killed) and the
 * output in *out (free it). */
int tu_sh(const char *dir, const char *cmd, char **out);

/* Parses IR text into a graph, failing the test (with the error and the
 * text) when it does not parse. ctx NULL: a context of its own, so the
 * graph outlives nothing but itself. */
smelt_graph_t *tu_parse(smelt_ctx_t *ctx, const char *text);

#endif
