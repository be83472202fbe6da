/* TEMPORARY: weak placeholders for public functions still being written. */
#include "core/status.h"
#define MISSING(name) sm_err(ctx, SMELT_ERR_UNSUPPORTED, name " not written yet")
__attribute__((weak)) smelt_status smelt_graph_parse(smelt_ctx_t *ctx, const char *text, size_t len, const char *filename, smelt_graph_t **out) { (void)text; (void)len; (void)filename; (void)out; return MISSING("parse"); }
__attribute__((weak)) smelt_status smelt_graph_load(smelt_ctx_t *ctx, const char *path, smelt_graph_t **out) { (void)path; (void)out; return MISSING("load"); }
__attribute__((weak)) smelt_status smelt_graph_print(smelt_ctx_t *ctx, const smelt_graph_t *g, char **out) { (void)g; (void)out; return MISSING("print"); }
__attribute__((weak)) smelt_status smelt_graph_dot(smelt_ctx_t *ctx, const smelt_graph_t *g, char **out) { (void)g; (void)out; return MISSING("dot"); }
__attribute__((weak)) void smelt_string_free(char *s) { (void)s; }
__attribute__((weak)) const char *smelt_graph_name(const smelt_graph_t *g) { (void)g; return ""; }
__attribute__((weak)) int smelt_graph_num_inputs(const smelt_graph_t *g) { (void)g; return 0; }
__attribute__((weak)) int smelt_graph_num_outputs(const smelt_graph_t *g) { (void)g; return 0; }
__attribute__((weak)) const char *smelt_graph_input_name(const smelt_graph_t *g, int i) { (void)g; (void)i; return ""; }
__attribute__((weak)) const char *smelt_graph_output_name(const smelt_graph_t *g, int i) { (void)g; (void)i; return ""; }
__attribute__((weak)) int smelt_graph_num_nodes(const smelt_graph_t *g) { (void)g; return 0; }
