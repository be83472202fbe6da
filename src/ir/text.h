/*
 * text.h - the IR's text form (docs/IR.md) and its DOT export: internal
 * entry points behind smelt_graph_parse / _print / _dot.
 */
#ifndef SM_TEXT_H
#define SM_TEXT_H

#include <stddef.h>

#include "ir/ir.h"

/* Deepest nesting of sub-blocks the parser accepts. */
#define SM_PARSE_MAX_DEPTH 64
/* Most attributes one node may carry: far above any op's schema (an
 * attribute outside it fails verification anyway), and low enough that
 * the per-node name checks stay cheap on hostile input. */
#define SM_PARSE_MAX_ATTRS 1024

/* Parses len bytes of text (not necessarily NUL-terminated) into a new
 * graph. Errors read "FILE:LINE:COL: error: message" (SMELT_ERR_PARSE,
 * or SMELT_ERR_NOMEM when memory ran out); nothing is leaked then. */
smelt_status sm_ir_parse(smelt_ctx_t *ctx, const char *text, size_t len,
                         const char *filename, sm_graph **out);
/* The canonical text form; *out is released with sm_free. */
smelt_status sm_ir_print(smelt_ctx_t *ctx, const sm_graph *g, char **out);
/* Graphviz DOT; *out is released with sm_free. */
smelt_status sm_ir_dot(smelt_ctx_t *ctx, const sm_graph *g, char **out);

#endif
