/*
 * smelt.h - the public API of Smelt, a graph compiler and runtime for
 * neural networks.
 *
 * Every handle is opaque. Every function that can fail returns a
 * smelt_status; the detail (what went wrong and where) is kept on the
 * smelt_ctx passed in and read with smelt_ctx_error(). The library never
 * prints, never exits and frees what it allocated on every error path.
 */
#ifndef SMELT_H
#define SMELT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SMELT_VERSION_MAJOR 0
#define SMELT_VERSION_MINOR 1
#define SMELT_VERSION_PATCH 0
#define SMELT_MAX_DIMS 8

typedef enum smelt_status {
    SMELT_OK = 0,
    SMELT_ERR_INVALID_ARG, /* a caller passed something unusable */
    SMELT_ERR_NOMEM,       /* an allocation failed */
    SMELT_ERR_IO,          /* a file could not be read or written */
    SMELT_ERR_PARSE,       /* malformed text or file contents */
    SMELT_ERR_TYPE,        /* dtype mismatch */
    SMELT_ERR_SHAPE,       /* shape mismatch or invalid shape */
    SMELT_ERR_VERIFY,      /* a graph breaks an IR invariant */
    SMELT_ERR_UNSUPPORTED, /* valid, but not implemented */
    SMELT_ERR_LIMIT,       /* a size or resource limit was exceeded */
    SMELT_ERR_RUNTIME,     /* an op failed while running */
    SMELT_ERR_NOT_FOUND    /* a named thing does not exist */
} smelt_status;

typedef enum smelt_dtype {
    SMELT_DTYPE_UNDEFINED = 0,
    SMELT_DTYPE_F32,
    SMELT_DTYPE_F64,
    SMELT_DTYPE_F16,
    SMELT_DTYPE_BF16,
    SMELT_DTYPE_I8,
    SMELT_DTYPE_U8,
    SMELT_DTYPE_I16,
    SMELT_DTYPE_I32,
    SMELT_DTYPE_I64,
    SMELT_DTYPE_BOOL,
    SMELT_DTYPE_COUNT
} smelt_dtype;

typedef struct smelt_ctx smelt_ctx_t;
typedef struct smelt_tensor smelt_tensor_t;
typedef struct smelt_graph smelt_graph_t;

/* ---- context and errors ------------------------------------------------ */

smelt_ctx_t *smelt_ctx_init(void);
void smelt_ctx_free(smelt_ctx_t *ctx);
/* The message of the last error recorded on ctx ("" when none). */
const char *smelt_ctx_error(const smelt_ctx_t *ctx);
smelt_status smelt_ctx_status(const smelt_ctx_t *ctx);
const char *smelt_status_name(smelt_status s);

/* Replace the allocator every allocation of the library goes through.
 * realloc_fn(ptr, 0) must free ptr. Passing NULL restores the default. */
typedef void *(*smelt_alloc_fn)(void *user, void *ptr, size_t size);
void smelt_set_allocator(smelt_alloc_fn fn, void *user);

/* ---- dtypes and tensors ------------------------------------------------ */

const char *smelt_dtype_name(smelt_dtype dt);
size_t smelt_dtype_size(smelt_dtype dt);

smelt_status smelt_tensor_init(smelt_ctx_t *ctx, smelt_dtype dt, int ndim,
                               const int64_t *dims, smelt_tensor_t **out);
void smelt_tensor_free(smelt_tensor_t *t);
smelt_dtype smelt_tensor_dtype(const smelt_tensor_t *t);
int smelt_tensor_ndim(const smelt_tensor_t *t);
int64_t smelt_tensor_dim(const smelt_tensor_t *t, int axis);
int64_t smelt_tensor_numel(const smelt_tensor_t *t);
void *smelt_tensor_data(smelt_tensor_t *t);
/* Element i converted to double (any dtype). */
double smelt_tensor_get_f64(const smelt_tensor_t *t, int64_t i);

smelt_status smelt_npy_load(smelt_ctx_t *ctx, const char *path,
                            smelt_tensor_t **out);
smelt_status smelt_npy_save(smelt_ctx_t *ctx, const char *path,
                            const smelt_tensor_t *t);
/* Parse an .npy image held in memory (len bytes). */
smelt_status smelt_npy_parse(smelt_ctx_t *ctx, const void *buf, size_t len,
                             const char *name, smelt_tensor_t **out);

/* ---- graphs ------------------------------------------------------------ */

/* Parse the text form of a graph; `filename` is used in error locations. */
smelt_status smelt_graph_parse(smelt_ctx_t *ctx, const char *text, size_t len,
                               const char *filename, smelt_graph_t **out);
/* Load a graph from a file (text IR). */
smelt_status smelt_graph_load(smelt_ctx_t *ctx, const char *path,
                              smelt_graph_t **out);
void smelt_graph_free(smelt_graph_t *g);
/* Check every IR invariant (SSA, types, shapes, op schemas). */
smelt_status smelt_graph_verify(smelt_ctx_t *ctx, const smelt_graph_t *g);
/* Infer dtypes and shapes of every value that lacks them. */
smelt_status smelt_graph_infer(smelt_ctx_t *ctx, smelt_graph_t *g);
/* Text form and DOT form; *out is a NUL-terminated string to release with
 * smelt_string_free(). */
smelt_status smelt_graph_print(smelt_ctx_t *ctx, const smelt_graph_t *g,
                               char **out);
smelt_status smelt_graph_dot(smelt_ctx_t *ctx, const smelt_graph_t *g,
                             char **out);
void smelt_string_free(char *s);

const char *smelt_graph_name(const smelt_graph_t *g);
int smelt_graph_num_inputs(const smelt_graph_t *g);
int smelt_graph_num_outputs(const smelt_graph_t *g);
const char *smelt_graph_input_name(const smelt_graph_t *g, int i);
const char *smelt_graph_output_name(const smelt_graph_t *g, int i);
int smelt_graph_num_nodes(const smelt_graph_t *g);

/* Run the graph with the reference interpreter. inputs[i] binds the i-th
 * graph input; outputs[] receives one new tensor per graph output, owned
 * by the caller. */
smelt_status smelt_graph_run_reference(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                       smelt_tensor_t *const *inputs,
                                       int n_inputs, smelt_tensor_t **outputs,
                                       int n_outputs);

/* ---- ONNX -------------------------------------------------------------- */

/* Load an ONNX model (ModelProto, default-domain opsets 7 to 21). External
 * tensor data is read from files inside the model's folder only. */
smelt_status smelt_onnx_load(smelt_ctx_t *ctx, const char *path,
                             smelt_graph_t **out);
/* The same from len bytes in memory; external data is looked up under
 * base_dir (NULL: a model with external data is refused). */
smelt_status smelt_onnx_load_buffer(smelt_ctx_t *ctx, const void *buf,
                                    size_t len, const char *base_dir,
                                    smelt_graph_t **out);
/* Write g as an ONNX model (ir_version 8, opset 17 unless a node needs a
 * newer one). */
smelt_status smelt_onnx_save(smelt_ctx_t *ctx, const smelt_graph_t *g,
                             const char *path);
/* The same into a new buffer *out of *len bytes, released with
 * smelt_onnx_buffer_free(). */
smelt_status smelt_onnx_save_buffer(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                    void **out, size_t *len);
void smelt_onnx_buffer_free(void *buf);
/* Read a serialized TensorProto (the input_<i>.pb / output_<i>.pb files of
 * ONNX's backend tests) into a new tensor owned by the caller. External
 * data is read from files inside path's folder only. String tensors and
 * dtypes Smelt lacks give SMELT_ERR_UNSUPPORTED. */
smelt_status smelt_onnx_tensor_load(smelt_ctx_t *ctx, const char *path,
                                    smelt_tensor_t **out);

/* ---- optimizer --------------------------------------------------------- */

/* Options of smelt_graph_optimize; fill with smelt_opt_options_default
 * first, then change what you need. */
typedef struct smelt_opt_options {
    int32_t level;            /* 0..3: the -O pipeline (default 1) */
    const char *passes;       /* "fold,cse,dce": run exactly these; NULL:
                                 the level's pipeline */
    uint64_t fold_max_bytes;  /* folding never makes a larger constant
                                 (default 64 MiB; 0: the default) */
    int32_t unroll_max_trips; /* Loops with at most this many trips are
                                 unrolled (default 16) */
    int32_t verify_each;      /* verify the graph after every pass (default:
                                 on in debug builds; SMELT_DEBUG sets it) */
    int32_t why_not_fused;    /* fusion passes note their near misses */
    const char *debug_dir;    /* dump the graph after every pass here; NULL:
                                 ./smelt-debug when SMELT_DEBUG=1, else none */
} smelt_opt_options;

void smelt_opt_options_default(smelt_opt_options *o);

/* What each pass of a smelt_graph_optimize run did. */
typedef struct smelt_opt_report smelt_opt_report_t;

typedef struct smelt_pass_stats {
    const char *name;
    int32_t nodes_before, nodes_after; /* in all blocks */
    int32_t changed, folded, removed, fused;
    int64_t peak_bytes; /* planned peak memory (memory-plan pass), else 0 */
    double ms;
    const char *log; /* the pass's notes, one per line ("" when none) */
} smelt_pass_stats;

/* Optimizes g in place with the pipeline opt describes (NULL: defaults).
 * report (may be NULL) receives what each pass did. On failure the error
 * names the pass, and g must only be freed. */
smelt_status smelt_graph_optimize(smelt_ctx_t *ctx, smelt_graph_t *g,
                                  const smelt_opt_options *opt,
                                  smelt_opt_report_t **report);
int smelt_opt_report_num_passes(const smelt_opt_report_t *r);
/* Stats of pass i (strings valid while r lives). */
smelt_status smelt_opt_report_get(const smelt_opt_report_t *r, int i,
                                  smelt_pass_stats *out);
/* The report as a table, one line per pass; with `notes`, each pass's
 * notes below its line. Release *out with smelt_string_free(). */
smelt_status smelt_opt_report_print(smelt_ctx_t *ctx,
                                    const smelt_opt_report_t *r, int notes,
                                    char **out);
void smelt_opt_report_free(smelt_opt_report_t *r);

/* The passes opt selects, comma separated ("" for none). Release *out with
 * smelt_string_free(). */
smelt_status smelt_opt_pipeline(smelt_ctx_t *ctx, const smelt_opt_options *opt,
                                char **out);
/* The registered passes. */
int smelt_pass_count(void);
const char *smelt_pass_name(int i);
int smelt_pass_level(int i); /* lowest -O level that runs it */
const char *smelt_pass_summary(int i);

/* A deep copy of g (values, names, types, constant data). */
smelt_status smelt_graph_clone(smelt_ctx_t *ctx, const smelt_graph_t *g,
                               smelt_graph_t **out);

/* Declared types of graph inputs, so tools can make inputs: dtype
 * (UNDEFINED when unknown), rank (-1 when unknown), dimension `axis` (-1
 * when not a known size) and its symbolic name (NULL when none). */
smelt_dtype smelt_graph_input_dtype(const smelt_graph_t *g, int i);
int smelt_graph_input_ndim(const smelt_graph_t *g, int i);
int64_t smelt_graph_input_dim(const smelt_graph_t *g, int i, int axis);
const char *smelt_graph_input_dim_name(const smelt_graph_t *g, int i,
                                       int axis);

/* ---- script frontend (docs/SCRIPT.md) ---------------------------------- */

/* Compiles function `fn` of a script (a Python subset in the manner of
 * TorchScript) into a graph with loops and branches as Loop and If nodes;
 * fn NULL takes the last function of the file. `filename` is used in
 * error locations: errors read "FILE:LINE:COL: error: message", then the
 * source line, a caret under the column and a hint. */
smelt_status smelt_script_compile(smelt_ctx_t *ctx, const char *source,
                                  size_t len, const char *filename,
                                  const char *fn, smelt_graph_t **out);
/* Reads the script at path and compiles function fn of it. */
smelt_status smelt_script_load(smelt_ctx_t *ctx, const char *path,
                               const char *fn, smelt_graph_t **out);

#ifdef __cplusplus
}
#endif
#endif
