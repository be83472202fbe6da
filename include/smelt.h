/*
 * smelt.h - the public API of Smelt, a graph compiler and runtime for
 * neural networks.
 *
 * Every handle is opaque. Every function that can fail returns a
 * smelt_status; the detail (what went wrong and where) is kept on the
 * smelt_ctx passed in and read with smelt_ctx_error(). The library never
 * prints, never exits and frees what it allocated on every error path.
 *
 * Structs that grow. Every struct passed by pointer that a caller fills
 * (options) or the library fills (stats, info) begins with
 * `size_t struct_size`: the sizeof the caller was compiled with. Options
 * get it from their `_default` macro (which passes sizeof to the
 * `_init` function), results from SMELT_STRUCT_INIT. New fields are only
 * ever appended, so the library reads and writes only the bytes the
 * caller's size covers: an older caller's missing fields take their
 * defaults, a newer caller's unknown fields must be left zero. A size
 * smaller than the struct's first version (or absurdly large, as an
 * uninitialized field is) is refused with SMELT_ERR_INVALID_ARG and,
 * where the call takes a ctx, a message naming the struct. smelt_attr, passed
 * in arrays the library indexes, keeps one size and grows into its zeroed
 * `reserved` slots.
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

/* A result struct ready to pass: struct_size set, every field zero.
 * smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats); */
/* clang-format off */
#define SMELT_STRUCT_INIT(type) {.struct_size = sizeof(type)}
/* clang-format on */

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
    SMELT_DTYPE_U16,
    SMELT_DTYPE_U32,
    SMELT_DTYPE_U64,
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
/* Every run made with ctx from now on (smelt_plan_run, smelt_session_run,
 * smelt_graph_run_reference) stops with SMELT_ERR_LIMIT once it has taken
 * timeout_ms milliseconds, instead of running on (a Loop with no bound);
 * 0 removes the limit. A plan's own timeout_ms option takes precedence. */
void smelt_ctx_set_timeout(smelt_ctx_t *ctx, int64_t timeout_ms);
/* Every run made with ctx from now on calls cancel(user) where it checks
 * its time limit (before each step of a plan, each iteration of a Loop);
 * a nonzero answer stops the run with SMELT_ERR_LIMIT ("cancelled").
 * cancel is called on the thread that called run, and should be cheap
 * (a binding polls for Ctrl-C with it). NULL removes it. */
void smelt_ctx_set_cancel(smelt_ctx_t *ctx, int (*cancel)(void *user),
                          void *user);

/* Replace the allocator every allocation of the library goes through.
 * realloc_fn(ptr, 0) must free ptr. Passing NULL restores the default. */
typedef void *(*smelt_alloc_fn)(void *user, void *ptr, size_t size);
void smelt_set_allocator(smelt_alloc_fn fn, void *user);

/* ---- dtypes and tensors ------------------------------------------------ */

const char *smelt_dtype_name(smelt_dtype dt);
size_t smelt_dtype_size(smelt_dtype dt);

smelt_status smelt_tensor_init(smelt_ctx_t *ctx, smelt_dtype dt, int ndim,
                               const int64_t *dims, smelt_tensor_t **out);
/* A tensor over the caller's bytes (C order, dims as for
 * smelt_tensor_init), for passing a binding's arrays to a run without a
 * copy: data must outlive the tensor, and smelt_tensor_free frees only
 * the tensor. Runs read input tensors and never write them. */
smelt_status smelt_tensor_wrap(smelt_ctx_t *ctx, smelt_dtype dt, int ndim,
                               const int64_t *dims, void *data,
                               smelt_tensor_t **out);
void smelt_tensor_free(smelt_tensor_t *t);
smelt_dtype smelt_tensor_dtype(const smelt_tensor_t *t);
int smelt_tensor_ndim(const smelt_tensor_t *t);
int64_t smelt_tensor_dim(const smelt_tensor_t *t, int axis);
int64_t smelt_tensor_numel(const smelt_tensor_t *t);
void *smelt_tensor_data(smelt_tensor_t *t);
/* Element i converted to double (any dtype). */
double smelt_tensor_get_f64(const smelt_tensor_t *t, int64_t i);

/* Reads a numpy .npy file (v1-3; C or Fortran order, the latter
 * transposed into C order). path must be a regular file: a directory,
 * FIFO or device fails at once with SMELT_ERR_IO. */
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
/* The text form for reading: a constant of more than max_values values
 * prints as one line with its count, an FNV-1a checksum of its bytes and
 * its first (up to 8) values (`const <N values, fnv1a H> [a, b, ...]`),
 * which does not parse back; smelt_graph_print gives every value. */
smelt_status smelt_graph_print_summary(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                       int64_t max_values, char **out);
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

/* Load an ONNX model (ModelProto, default-domain opsets 1 to 21). External
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
/* How Smelt's own ops (FusedConv, FusedGemm, FusedElementwise, and Gelu
 * below opset 20) are written. By default they keep their form in
 * Smelt's domain "ai.smelt" (version 1, declared in opset_import), which
 * onnx.checker accepts and smelt_onnx_load reads back; with `standard`
 * set they are decomposed into standard ONNX ops (Conv, Gemm or MatMul,
 * Add, Mul, activations, a FusedElementwise's body inlined), so that
 * other runtimes can run the file. */
typedef struct smelt_onnx_save_options {
    size_t struct_size; /* sizeof(smelt_onnx_save_options), set by
                           smelt_onnx_save_options_default */
    int32_t standard;   /* decompose Smelt's own ops (default 0) */
} smelt_onnx_save_options;

/* Fills o with the defaults; struct_size is the caller's
 * sizeof(smelt_onnx_save_options), which the macro passes. */
smelt_status smelt_onnx_save_options_init(smelt_onnx_save_options *o,
                                          size_t struct_size);
#define smelt_onnx_save_options_default(o)                                     \
    smelt_onnx_save_options_init((o), sizeof(smelt_onnx_save_options))
/* smelt_onnx_save and smelt_onnx_save_buffer with options (NULL: the
 * defaults). */
smelt_status smelt_onnx_save_opt(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                 const smelt_onnx_save_options *o,
                                 const char *path);
smelt_status smelt_onnx_save_buffer_opt(smelt_ctx_t *ctx,
                                        const smelt_graph_t *g,
                                        const smelt_onnx_save_options *o,
                                        void **out, size_t *len);
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
    size_t struct_size;       /* sizeof(smelt_opt_options), set by
                                 smelt_opt_options_default */
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
    const char *disable;      /* passes left out of the pipeline, comma
                                 separated ("fuse_attention,cse"); a name
                                 that is no pass is an error listing them */
} smelt_opt_options;

/* Fills o with the defaults; struct_size is the caller's
 * sizeof(smelt_opt_options), which the macro passes. */
smelt_status smelt_opt_options_init(smelt_opt_options *o, size_t struct_size);
#define smelt_opt_options_default(o)                                           \
    smelt_opt_options_init((o), sizeof(smelt_opt_options))

/* What each pass of a smelt_graph_optimize run did. */
typedef struct smelt_opt_report smelt_opt_report_t;

typedef struct smelt_pass_stats {
    size_t struct_size; /* SMELT_STRUCT_INIT(smelt_pass_stats) */
    const char *name;
    int32_t nodes_before, nodes_after; /* in all blocks */
    int32_t changed, folded, removed, fused;
    int64_t peak_bytes; /* always 0: no pass plans memory any more (the
                           plan does: smelt_plan_stats); kept so the
                           fields after it stay where they were */
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
/* Stats of pass i (strings valid while r lives); out->struct_size must
 * be set (SMELT_STRUCT_INIT). */
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

/* ---- int8 quantization (docs/QUANTIZATION.md) ------------------------- */

/* How smelt_graph_quantize rewrites a graph. */
typedef struct smelt_quantize_options {
    size_t struct_size;  /* sizeof(smelt_quantize_options), set by
                            smelt_quantize_options_default */
    int32_t per_channel; /* one weight scale per output channel (default
                            0: one per tensor) */
    int32_t conv;        /* also Conv, as ConvInteger (default 0) */
    const char *exclude; /* node names kept in f32, comma separated */
    const char *only;    /* NULL: every eligible node; else only these */
} smelt_quantize_options;

/* Fills o with the defaults; struct_size is the caller's
 * sizeof(smelt_quantize_options), which the macro passes. */
smelt_status smelt_quantize_options_init(smelt_quantize_options *o,
                                         size_t struct_size);
#define smelt_quantize_options_default(o)                                      \
    smelt_quantize_options_init((o), sizeof(smelt_quantize_options))

/* Dynamic int8 quantization of g, in place: after the -O1 cleanup
 * (folding makes weights passed through Identity or Transpose
 * constants), every MatMul and Gemm with constant f32 weights (and Conv
 * with o->conv) becomes
 * DynamicQuantizeLinear + MatMulInteger (ConvInteger) + Cast + Mul, as
 * ONNX Runtime's quantizer writes them, weights s8 symmetric. layers
 * (may be NULL) receives the names of the nodes rewritten, comma
 * separated (release with smelt_string_free). On failure g must only be
 * freed. */
smelt_status smelt_graph_quantize(smelt_ctx_t *ctx, smelt_graph_t *g,
                                  const smelt_quantize_options *o,
                                  char **layers);

/* What dynamic quantization costs, layer by layer (smelt_quantize_report). */
typedef struct smelt_quantize_report smelt_quantize_report_t;

/* Measures every layer smelt_graph_quantize(o) would rewrite in g, alone:
 * a copy of g with only that layer quantized, run by the reference
 * interpreter on the calibration inputs (n_inputs, g's inputs in order),
 * against g over all outputs (MSE, and cosine similarity of the outputs
 * as one vector). With tolerance >= 0 the layers whose MSE exceeds it are
 * kept f32 (negative: none is; NaN is refused). Last, g with every other
 * layer quantized is measured (row -1). g is not changed; pass
 * smelt_quantize_report_exclude as o->exclude to smelt_graph_quantize.
 * Release *out with smelt_quantize_report_free. */
smelt_status smelt_quantize_report(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                   const smelt_quantize_options *o,
                                   smelt_tensor_t *const *inputs, int n_inputs,
                                   double tolerance,
                                   smelt_quantize_report_t **out);
void smelt_quantize_report_free(smelt_quantize_report_t *r);
/* The layers measured, in graph order; row i's node name, MSE, cosine
 * and whether it is kept f32 (over the tolerance). mse and cosine of row
 * -1 are those of all the quantized layers together; NaN (NULL, 0) out
 * of range. */
int smelt_quantize_report_num_layers(const smelt_quantize_report_t *r);
const char *smelt_quantize_report_layer(const smelt_quantize_report_t *r,
                                        int i);
double smelt_quantize_report_mse(const smelt_quantize_report_t *r, int i);
double smelt_quantize_report_cosine(const smelt_quantize_report_t *r, int i);
int smelt_quantize_report_kept_f32(const smelt_quantize_report_t *r, int i);
/* o->exclude plus the layers kept f32, comma separated ("" for none). */
const char *smelt_quantize_report_exclude(const smelt_quantize_report_t *r);

/* Observers of activation ranges for smelt_graph_quantize_qat. */
typedef enum smelt_qat_observer {
    SMELT_QAT_MINMAX = 0,    /* the smallest and largest value seen */
    SMELT_QAT_PERCENTILE = 1 /* the percentile-th and (100 - it)-th */
} smelt_qat_observer;

/* How smelt_graph_quantize_qat inserts fake quantization. */
typedef struct smelt_qat_options {
    size_t struct_size;  /* sizeof(smelt_qat_options), set by
                            smelt_qat_options_default */
    int32_t per_channel; /* one weight scale per output channel */
    int32_t conv;        /* also Conv (default 0: MatMul and Gemm) */
    const char *exclude; /* node names left in f32, comma separated */
    int32_t observer;    /* smelt_qat_observer (default MINMAX) */
    double percentile;   /* PERCENTILE's, in (50, 100] (default 99.99) */
} smelt_qat_options;

smelt_status smelt_qat_options_init(smelt_qat_options *o, size_t struct_size);
#define smelt_qat_options_default(o)                                           \
    smelt_qat_options_init((o), sizeof(smelt_qat_options))

/* Quantization-aware training, step 1 (docs/QUANTIZATION.md): after the
 * -O1 cleanup, the activation (input 0) of every MatMul and Gemm with a
 * constant f32 weight (and Conv with o->conv) goes through
 * QuantizeLinear -> DequantizeLinear, u8 per tensor with a scale and
 * zero point from the range the observer sees when the reference
 * interpreter runs g on inputs (n_inputs, g's inputs in order); the
 * weight likewise, s8 symmetric (zero point 0), per tensor or per
 * channel. Each scale is Exp of an f32 initializer holding its
 * logarithm (NAME_qat_log_scale), which training learns (the weights
 * stay f32). layers (may be NULL) receives the nodes' names,
 * comma separated. On failure g must only be freed. */
smelt_status smelt_graph_quantize_qat(smelt_ctx_t *ctx, smelt_graph_t *g,
                                      const smelt_qat_options *o,
                                      smelt_tensor_t *const *inputs,
                                      int n_inputs, char **layers);

/* Quantization-aware training, step 3: every fake-quantized constant
 * weight (QuantizeLinear -> DequantizeLinear of an f32 initializer)
 * becomes its quantized initializer read by the DequantizeLinear (the
 * form the qdq pass runs on the int8 kernels); activation pairs stay.
 * Scales computed from constants alone are folded first.
 * Fails when g holds no fake-quantize pair, or a pair's scale is not a
 * positive finite constant. *weights and *activations (may be NULL)
 * receive the counts. On failure g must only be freed. */
smelt_status smelt_graph_quantize_convert(smelt_ctx_t *ctx, smelt_graph_t *g,
                                          int *weights, int *activations);

/* A deep copy of g (values, names, types, constant data). */
smelt_status smelt_graph_clone(smelt_ctx_t *ctx, const smelt_graph_t *g,
                               smelt_graph_t **out);

/* Declared types of graph inputs, so tools can make inputs: dtype
 * (UNDEFINED when unknown), rank (-1 when unknown), dimension `axis` (-1
 * when not a known size) and its symbolic name (NULL when none). */
smelt_dtype smelt_graph_input_dtype(const smelt_graph_t *g, int i);
int smelt_graph_input_ndim(const smelt_graph_t *g, int i);
int64_t smelt_graph_input_dim(const smelt_graph_t *g, int i, int axis);
const char *smelt_graph_input_dim_name(const smelt_graph_t *g, int i, int axis);

/* ---- autograd (docs/AUTOGRAD.md) ---------------------------------------- */

/* How a loss that is not a scalar becomes one. */
typedef enum smelt_loss_reduce {
    SMELT_LOSS_SUM = 0,
    SMELT_LOSS_MEAN = 1
} smelt_loss_reduce;

/* Options of smelt_graph_grad; fill with smelt_grad_options_default. */
typedef struct smelt_grad_options {
    size_t struct_size;  /* sizeof(smelt_grad_options), set by the macro */
    const char *loss;    /* the value differentiated (NULL: the first
                            output), reduced to a scalar by loss_reduce */
    int32_t loss_reduce; /* smelt_loss_reduce (default SMELT_LOSS_SUM) */
    int32_t n_wrt;
    const char *const *wrt;   /* the values (graph inputs or initializers)
                                 to differentiate with respect to; NULL:
                                 every floating-point initializer */
    int32_t params_as_inputs; /* the initializers among wrt become graph
                                 inputs (appended, same names), so a
                                 training loop can feed updated weights */
} smelt_grad_options;

smelt_status smelt_grad_options_init(smelt_grad_options *o, size_t struct_size);
#define smelt_grad_options_default(o)                                          \
    smelt_grad_options_init((o), sizeof(smelt_grad_options))

/* The joint graph of g (not modified): g's forward computation, then the
 * backward pass of the loss. Its outputs are g's outputs, then the loss
 * (a scalar named "loss"), then one gradient per wrt value, in order,
 * named after it with ".grad" appended (made unique). It is an ordinary
 * graph: it prints, verifies, optimizes, plans and runs. Fails with a
 * message naming the node when the loss does not depend on the wrt values
 * through differentiable ops or an op on the path has no gradient rule. */
smelt_status smelt_graph_grad(smelt_ctx_t *ctx, const smelt_graph_t *g,
                              const smelt_grad_options *opt,
                              smelt_graph_t **out);
/* The roles of a joint graph's outputs (0 / -1 / NULL on other graphs):
 * how many gradients, the output holding the loss, and for gradient i the
 * value it differentiates, its output, and the input that value became
 * (params_as_inputs; -1 when it did not). */
int smelt_graph_num_grads(const smelt_graph_t *g);
int smelt_graph_loss_output(const smelt_graph_t *g);
const char *smelt_graph_grad_wrt(const smelt_graph_t *g, int i);
int smelt_graph_grad_output(const smelt_graph_t *g, int i);
int smelt_graph_grad_input(const smelt_graph_t *g, int i);

/* ---- gradcheck (docs/AUTOGRAD.md) -------------------------------------- */

/* Options of smelt_gradcheck; fill with smelt_gradcheck_options_default. */
typedef struct smelt_gradcheck_options {
    size_t struct_size; /* sizeof(smelt_gradcheck_options), set by the macro */
    /* inputs[i] binds graph input i (any float dtype is widened to f64;
     * integer and boolean ones are used as they are); NULL array or NULL
     * entry: generated. Generated float inputs are uniform in [low, high)
     * from `seed`, integer and boolean ones are zero; the declared shape
     * must be concrete. Choosing a range inside the domain of the model
     * (positive for Log and Sqrt, say) is the caller's concern. */
    smelt_tensor_t *const *inputs;
    int32_t n_inputs;
    uint64_t seed;    /* of generated inputs and of sampling (default 0) */
    double low, high; /* range of generated float inputs (default -1, 1) */
    int32_t n_wrt;
    const char *const *wrt; /* graph inputs or initializers to check; NULL:
                               every float initializer and float input */
    const char *loss;       /* the output differentiated (NULL: the first) */
    int32_t loss_reduce;    /* smelt_loss_reduce (default SMELT_LOSS_SUM) */
    int64_t samples;   /* check at most this many elements of each value, one
                          drawn at random in each of `samples` equal slices
                          (default 0: every element) */
    double eps;        /* central-difference step (default 1e-6) */
    double atol, rtol; /* element passes when |analytic - numeric| <=
                          atol + rtol * |numeric| (default 1e-5, 1e-3) */
} smelt_gradcheck_options;

smelt_status smelt_gradcheck_options_init(smelt_gradcheck_options *o,
                                          size_t struct_size);
#define smelt_gradcheck_options_default(o)                                     \
    smelt_gradcheck_options_init((o), sizeof(smelt_gradcheck_options))

/* The outcome of a check, value by value. */
typedef struct smelt_gradcheck_report smelt_gradcheck_report_t;

typedef struct smelt_gradcheck_value {
    size_t struct_size; /* SMELT_STRUCT_INIT(smelt_gradcheck_value) */
    const char *name;   /* the value checked (valid while the report lives) */
    smelt_dtype dtype;  /* its dtype in the model (the check ran in f64) */
    int32_t ndim;
    int64_t dims[SMELT_MAX_DIMS];
    int64_t checked;    /* elements compared */
    int64_t kinks;      /* elements left out: the forward is not smooth
                           there (one-sided differences disagree) */
    double max_abs_err; /* max |analytic - numeric| over checked elements */
    double max_rel_err; /* max |analytic - numeric| / |numeric|, over the
                           elements whose numeric gradient is not 0 */
    int32_t passed;     /* every checked element within tolerance */
    int64_t worst;      /* flat index of the element furthest out of
                           tolerance (or with the largest error) */
    double worst_analytic, worst_numeric;
} smelt_gradcheck_value;

/* Checks the gradients smelt_graph_grad builds for g against central
 * differences (f(x+eps) - f(x-eps)) / 2eps, PyTorch's gradcheck in
 * float64: a copy of g is widened to f64 (every float value, constant,
 * input and Cast), the inputs not checked become constants, the joint
 * graph runs on the reference interpreter, and each checked element is
 * compared with the difference of two runs of the widened forward graph.
 * An element where the forward has a kink or a jump (relu at 0, a tie of
 * Max) is left out and counted: there the one-sided differences
 * (f(x+eps) - f(x)) / eps and (f(x) - f(x-eps)) / eps disagree by more
 * than the tolerance (never less than PyTorch's), and no derivative
 * exists to compare with. *out
 * receives the report (SMELT_OK even when values fail: see
 * smelt_gradcheck_num_failed); an error means the check could not run
 * (a bad option, an op without a gradient rule, a run that failed). */
smelt_status smelt_gradcheck(smelt_ctx_t *ctx, const smelt_graph_t *g,
                             const smelt_gradcheck_options *opt,
                             smelt_gradcheck_report_t **out);
int smelt_gradcheck_num_values(const smelt_gradcheck_report_t *r);
int smelt_gradcheck_num_failed(const smelt_gradcheck_report_t *r);
/* The loss at the point checked. */
double smelt_gradcheck_loss(const smelt_gradcheck_report_t *r);
/* Value i; out->struct_size must be set (SMELT_STRUCT_INIT). */
smelt_status smelt_gradcheck_get(const smelt_gradcheck_report_t *r, int i,
                                 smelt_gradcheck_value *out);
void smelt_gradcheck_report_free(smelt_gradcheck_report_t *r);

/* ---- training (docs/AUTOGRAD.md, "Training") --------------------------- */

/* A model graph with a loss appended over its first output and a new
 * input "target" (the last input; dim 0 the output's batch dim): the
 * loss, a scalar named "loss", becomes the first output, the model's
 * outputs follow. kind: "mse" (mean of (y - target)^2; target of y's
 * dtype and shape), "cross_entropy" (mean over the batch of -log
 * softmax(y)[target]; y [N,C] floating, target int64 [N] class indices)
 * or "bce_with_logits" (mean of max(y,0) - y*target + log(1 + exp(-|y|));
 * target of y's dtype and shape). */
smelt_status smelt_graph_add_loss(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                  const char *kind, smelt_graph_t **out);
/* Checks a target tensor for the loss `kind` over g's first output, the
 * first dimension (the samples) left free: one-line SMELT_ERR_SHAPE or
 * SMELT_ERR_TYPE naming what was expected and what came, or, for
 * cross_entropy, a class index outside [0, C). */
smelt_status smelt_loss_check_target(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                     const char *kind,
                                     const smelt_tensor_t *target);

typedef enum smelt_optimizer {
    SMELT_OPTIM_SGD = 0,
    SMELT_OPTIM_ADAM = 1,
    SMELT_OPTIM_ADAMW = 2
} smelt_optimizer;

/* Options of smelt_graph_add_optimizer; fill with
 * smelt_optim_options_default. The formulas are torch.optim's (1.13). */
typedef struct smelt_optim_options {
    size_t struct_size;  /* sizeof(smelt_optim_options), set by the macro */
    int32_t kind;        /* smelt_optimizer (default SGD) */
    double momentum;     /* SGD (default 0: no momentum state) */
    int32_t nesterov;    /* SGD with momentum */
    double weight_decay; /* SGD and Adam: added to the gradient; AdamW:
                            decoupled, the weights shrink by lr * wd */
    double beta1, beta2; /* Adam(W) (default 0.9, 0.999) */
    double eps;          /* Adam(W) (default 1e-8) */
    double clip_norm;    /* > 0: gradients scaled together to this
                            global L2 norm at most, before the update */
} smelt_optim_options;

smelt_status smelt_optim_options_init(smelt_optim_options *o,
                                      size_t struct_size);
#define smelt_optim_options_default(o)                                         \
    smelt_optim_options_init((o), sizeof(smelt_optim_options))

/* The training step of a joint graph made with params_as_inputs (not
 * modified): the joint graph, then per parameter (gradient i) the
 * optimizer's update as graph nodes. New inputs: "lr" and "step" (f64
 * scalars: the learning rate of this step and its 1-based number), then
 * each parameter's states ("PARAM.momentum"; "PARAM.exp_avg",
 * "PARAM.exp_avg_sq"), zeros before the first step. New outputs:
 * "grad_norm" when clipping, then per parameter "PARAM.new" and its new
 * states ("PARAM.exp_avg.new"...). Roles are queryable below and survive
 * smelt_graph_clone. */
smelt_status smelt_graph_add_optimizer(smelt_ctx_t *ctx,
                                       const smelt_graph_t *joint,
                                       const smelt_optim_options *opt,
                                       smelt_graph_t **out);
/* The roles of a training-step graph (-1 / 0 / NULL on other graphs):
 * the lr and step inputs, the global-norm output, the states each
 * parameter has and their names ("momentum", "exp_avg", "exp_avg_sq"),
 * and for parameter i (gradient i of smelt_graph_grad_*) its input, the
 * output of its new value, and state k's input and output. */
int smelt_graph_optim_lr_input(const smelt_graph_t *g);
int smelt_graph_optim_step_input(const smelt_graph_t *g);
int smelt_graph_optim_norm_output(const smelt_graph_t *g);
int smelt_graph_optim_num_params(const smelt_graph_t *g);
int smelt_graph_optim_num_states(const smelt_graph_t *g);
const char *smelt_graph_optim_state_name(const smelt_graph_t *g, int k);
int smelt_graph_optim_param_input(const smelt_graph_t *g, int i);
int smelt_graph_optim_param_output(const smelt_graph_t *g, int i);
int smelt_graph_optim_state_input(const smelt_graph_t *g, int i, int k);
int smelt_graph_optim_state_output(const smelt_graph_t *g, int i, int k);

/* ---- the training loop (docs/TRAINING.md) ------------------------------ */

/* What `smelt train` does, as a library call: the training step (loss,
 * backward pass, optimizer update) built and compiled once for the batch
 * size, then run over seeded epochs with a learning-rate schedule,
 * validation, atomic checkpoints and a bit-exact resume. */
typedef struct smelt_trainer smelt_trainer_t;
typedef struct smelt_plan smelt_plan_t;       /* below, "plans" */
typedef struct smelt_session smelt_session_t; /* below, "sessions" */

typedef enum smelt_lr_schedule {
    SMELT_SCHEDULE_CONSTANT = 0, /* the peak lr after the warm-up */
    SMELT_SCHEDULE_COSINE = 1    /* a cosine decay to 0 at the last step */
} smelt_lr_schedule;

typedef enum smelt_train_event {
    SMELT_TRAIN_STEP = 0, /* a step ran (and its checkpoint, if due) */
    SMELT_TRAIN_EPOCH = 1 /* an epoch ended and was validated */
} smelt_train_event;

/* What the callback is told; struct_size is the library's. Accuracy
 * counts are of rows (cross_entropy: argmax) or elements
 * (bce_with_logits: sign); judged is 0 for mse. */
typedef struct smelt_train_progress {
    size_t struct_size;
    int32_t event;           /* smelt_train_event */
    int64_t epoch, epochs;   /* this epoch (from 0) and how many in all */
    int64_t batch;           /* STEP: batches of this epoch done */
    int64_t steps_per_epoch; /* full batches an epoch */
    int64_t step;            /* steps done in all (a resumed run's too) */
    int64_t total_steps;     /* epochs * steps_per_epoch */
    int64_t samples;         /* STEP: the batch size; EPOCH: samples run */
    int64_t steps;           /* 1, or EPOCH: the epoch's steps run */
    double loss;             /* STEP: its loss; EPOCH: the mean of its
                                steps' (0 when none ran in this run) */
    int64_t correct, judged; /* the step's or the epoch's */
    double seconds;          /* STEP: the step's run; EPOCH: its steps' */
    double lr;               /* STEP: the learning rate it ran with */
    int64_t n_val;           /* EPOCH: validation samples (0: none) */
    double val_loss;         /* EPOCH: mean loss over them */
    int64_t val_correct, val_judged;
    int64_t checkpoint_step; /* the last checkpoint's step (-1: none) */
} smelt_train_progress;

/* Nonzero from the callback stops the run at this boundary. */
typedef int (*smelt_train_callback)(void *user, const smelt_train_progress *p);

/* Options of smelt_trainer_create; fill with smelt_train_options_default.
 * Strings are copied. */
typedef struct smelt_train_options {
    size_t struct_size; /* sizeof(smelt_train_options), set by the macro */
    const char *loss;   /* "mse" (default), "cross_entropy",
                           "bce_with_logits" (smelt_graph_add_loss) */
    const smelt_optim_options *optim; /* NULL: plain SGD */
    double lr;                        /* peak learning rate (default 1e-3) */
    int64_t warmup;                   /* linear warm-up steps (0) */
    int32_t schedule;                 /* smelt_lr_schedule (constant) */
    int64_t epochs;                   /* default 1 */
    int64_t batch_size;               /* default 32; a last partial batch of an
                                         epoch is dropped */
    uint64_t seed;                    /* the split and every epoch's order */
    int32_t shuffle;                  /* default 1; 0: each epoch in order */
    double val_fraction;              /* held out, in [0, 1) (default 0) */
    const char *freeze;               /* comma-separated fnmatch globs of
                                         initializers not trained (NULL: none) */
    int32_t threads;                  /* of the compiled step (default 1) */
    int64_t memory_budget;            /* smelt_plan_options's (0: none) */
    const char *checkpoint_dir;       /* NULL: no checkpoints */
    int64_t checkpoint_every;         /* also every N steps (0: epoch ends) */
    int32_t resume;                   /* start from checkpoint_dir's checkpoint
                                         when there is one */
    smelt_train_callback callback;    /* after each step and epoch, or NULL */
    void *user;                       /* callback's first argument */
} smelt_train_options;

smelt_status smelt_train_options_init(smelt_train_options *o,
                                      size_t struct_size);
#define smelt_train_options_default(o)                                         \
    smelt_train_options_init((o), sizeof(smelt_train_options))

/* Where a trainer stands, and its history; the arrays stay valid until
 * the next smelt_trainer_run or smelt_trainer_free. */
typedef struct smelt_train_info {
    size_t struct_size; /* SMELT_STRUCT_INIT(smelt_train_info) */
    int32_t n_params;   /* initializers trained */
    int64_t n_weights;  /* their elements */
    int32_t n_states;   /* optimizer states per parameter */
    int64_t n_train, n_val, steps_per_epoch, dropped, total_steps;
    int64_t step;         /* steps done in all */
    int64_t epoch, batch; /* the next step's epoch (from 0) and batch */
    int32_t finished;     /* every epoch done */
    int32_t cancelled;    /* the last run stopped by the callback or the
                             ctx's cancel hook */
    int32_t resumed;      /* 1: from a checkpoint; -1: resume asked but
                             no checkpoint yet; 0: not asked */
    int64_t resumed_step, resumed_epoch, resumed_batch;
    int64_t checkpoint_step; /* the last checkpoint written or read (-1) */
    /* every step run by this trainer: loss, accuracy (NaN: not judged) */
    int64_t n_steps_run;
    const double *step_loss, *step_accuracy;
    /* every epoch ended by this trainer: mean training loss, accuracy,
     * validation loss and accuracy (NaN: none), samples per second */
    int64_t n_epochs_run;
    const double *epoch_loss, *epoch_accuracy, *val_loss, *val_accuracy;
    const double *samples_per_s;
    const int64_t *val_index; /* the held-out samples, n_val of them */
} smelt_train_info;

/* Builds the training step for model (not modified) and compiles it:
 * every floating-point initializer not frozen is trained. inputs[i] holds
 * model input i's samples along dim 0, target one per sample (checked
 * with smelt_loss_check_target; int32 classes are widened). The tensors
 * are read, not copied, and must live as long as the trainer. With
 * resume, the checkpoint is read here. One-line errors name what is
 * wrong: no weights to train, a target or input that does not fit, a
 * batch larger than the training set, a checkpoint of another set-up. */
smelt_status smelt_trainer_create(smelt_ctx_t *ctx, const smelt_graph_t *model,
                                  const smelt_tensor_t *const *inputs,
                                  int n_inputs, const smelt_tensor_t *target,
                                  const smelt_train_options *opt,
                                  smelt_trainer_t **out);
/* Runs the remaining steps: each epoch's order, each full batch through
 * the compiled step, validation and checkpoints (every checkpoint_every
 * steps and at each epoch's end, written atomically). A NaN or infinite
 * loss stops with SMELT_ERR_RUNTIME naming the step, the last checkpoint
 * kept. The callback returning nonzero, or the ctx's cancel hook, stops
 * at a step boundary with SMELT_ERR_LIMIT ("cancelled"), the weights
 * those of the last step completed and the checkpoints intact; calling
 * run again continues from there. */
smelt_status smelt_trainer_run(smelt_ctx_t *ctx, smelt_trainer_t *t);
smelt_status smelt_trainer_get_info(const smelt_trainer_t *t,
                                    smelt_train_info *out);
/* Writes the current trained weights into g's initializers of the same
 * names (g: the model or a clone of it). */
smelt_status smelt_trainer_write_weights(smelt_ctx_t *ctx,
                                         const smelt_trainer_t *t,
                                         smelt_graph_t *g);
/* The compiled step and the session that runs it (profiling). */
const smelt_plan_t *smelt_trainer_plan(const smelt_trainer_t *t);
smelt_session_t *smelt_trainer_session(smelt_trainer_t *t);
void smelt_trainer_free(smelt_trainer_t *t);

/* Initializers (the top block's constants): how many, name and dtype of
 * the i-th, a copy of its data (*out owned by the caller), and its data
 * replaced by t's (same dtype and shape, else SMELT_ERR_SHAPE). */
int smelt_graph_num_initializers(const smelt_graph_t *g);
const char *smelt_graph_initializer_name(const smelt_graph_t *g, int i);
smelt_dtype smelt_graph_initializer_dtype(const smelt_graph_t *g, int i);
smelt_status smelt_graph_initializer_get(smelt_ctx_t *ctx,
                                         const smelt_graph_t *g,
                                         const char *name,
                                         smelt_tensor_t **out);
smelt_status smelt_graph_initializer_set(smelt_ctx_t *ctx, smelt_graph_t *g,
                                         const char *name,
                                         const smelt_tensor_t *t);
/* A copy of g whose initializers names[0..n) are graph inputs of the
 * same names instead, appended in that order (a forward graph fed the
 * current weights, as smelt_graph_grad's params_as_inputs does). */
/* Binds symbolic dims of g itself ("batch=16,seq=128": every value's
 * dimension of that name gets the size) and infers again: what is built
 * on g afterwards (a loss, a backward pass) sees concrete shapes. */
smelt_status smelt_graph_bind_dims(smelt_ctx_t *ctx, smelt_graph_t *g,
                                   const char *dims);
smelt_status smelt_graph_lift_initializers(smelt_ctx_t *ctx,
                                           const smelt_graph_t *g,
                                           const char *const *names, int n,
                                           smelt_graph_t **out);

/* ---- plans: compiled graphs (docs/RUNTIME.md) --------------------------- */

/* A plan is a graph compiled for concrete input shapes: a kernel chosen
 * per node (the fastest the CPU supports, else the reference kernel),
 * weights prepacked once, every intermediate an offset into one arena.
 * A plan is immutable once compiled. It runs through a session, which
 * owns the arena and a thread pool; several threads may run one plan at
 * once, each with its own session. */
typedef struct smelt_plan smelt_plan_t;
typedef struct smelt_session smelt_session_t;

typedef struct smelt_plan_options {
    size_t struct_size; /* sizeof(smelt_plan_options), set by
                           smelt_plan_options_default */
    int32_t threads;    /* threads per session (default 1; 0: every CPU) */
    int32_t level;      /* optimizer level run before planning, 0..3
                           (default 3); -1: none, not even inference */
    const char *isa;    /* "scalar", "avx2", "avx512" or NULL (what the CPU
                           has); never above what the CPU has. SMELT_ISA in
                           the environment lowers it as well */
    const char *dims;   /* sizes of symbolic dims: "batch=1,seq=128" */
    /* When set, compile for these inputs' dtypes and shapes (their
     * values are not read); otherwise the declared input types, with
     * `dims` bound, must be concrete. */
    smelt_tensor_t *const *inputs;
    int32_t n_inputs;
    int32_t reference; /* run every node with its reference kernel */
    /* Debug dump (docs/PASSES.md): the optimizer's graphs and the plan
     * (plan.txt: steps, kernels, memory map and layouts, or why no plan
     * compiled) go here; NULL: ./smelt-debug when SMELT_DEBUG=1, else
     * none. */
    const char *debug_dir;
    int64_t timeout_ms;    /* each run of the plan stops with SMELT_ERR_LIMIT
                              after this many milliseconds (default 0: the
                              ctx's limit, smelt_ctx_set_timeout) */
    int64_t memory_budget; /* when the arena would exceed this many bytes,
                              recompute intermediates before their late
                              readers instead of keeping them alive, where
                              that frees memory (0: never; docs/AUTOGRAD.md) */
    const char *disable;   /* passes the optimizer leaves out, as
                              smelt_opt_options.disable */
} smelt_plan_options;

/* Fills o with the defaults; struct_size is the caller's
 * sizeof(smelt_plan_options), which the macro passes. */
smelt_status smelt_plan_options_init(smelt_plan_options *o, size_t struct_size);
#define smelt_plan_options_default(o)                                          \
    smelt_plan_options_init((o), sizeof(smelt_plan_options))

/* Compiles g (not modified; the plan keeps its own copy). */
smelt_status smelt_plan_compile(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                const smelt_plan_options *opt,
                                smelt_plan_t **out);
/* Compiles g as smelt_plan_compile does, but takes g instead of copying
 * it: g belongs to the plan from the call on (freed with it, or at once
 * when compiling fails) and the caller must not use it again. For a graph
 * loaded only to be run: its weights are never held twice. */
smelt_status smelt_plan_compile_take(smelt_ctx_t *ctx, smelt_graph_t *g,
                                     const smelt_plan_options *opt,
                                     smelt_plan_t **out);
void smelt_plan_free(smelt_plan_t *p);

/* Runs the plan on the plan's own session (made at the first run); when
 * another thread holds it, on a temporary one. outputs[] receive new
 * tensors owned by the caller. Inputs must have the dtypes and shapes the
 * plan was compiled for (SMELT_ERR_SHAPE otherwise). */
smelt_status smelt_plan_run(smelt_ctx_t *ctx, const smelt_plan_t *p,
                            smelt_tensor_t *const *inputs, int n_inputs,
                            smelt_tensor_t **outputs, int n_outputs);

/* A run context for one thread: the arena, the thread pool, the
 * profiler's times. */
smelt_status smelt_session_init(smelt_ctx_t *ctx, const smelt_plan_t *p,
                                smelt_session_t **out);
void smelt_session_free(smelt_session_t *s);
/* Like smelt_plan_run; outputs[] receive new tensors. */
smelt_status smelt_session_run(smelt_ctx_t *ctx, smelt_session_t *s,
                               smelt_tensor_t *const *inputs, int n_inputs,
                               smelt_tensor_t **outputs, int n_outputs);
/* Writes into the caller's tensors outputs[i], which must have the
 * output's dtype and shape (smelt_plan_output_* give them). Allocates
 * nothing unless the plan has dynamic steps (smelt_plan_stats). */
smelt_status smelt_session_run_into(smelt_ctx_t *ctx, smelt_session_t *s,
                                    smelt_tensor_t *const *inputs, int n_inputs,
                                    smelt_tensor_t *const *outputs,
                                    int n_outputs);
/* Record per-step times in the runs that follow (off by default). */
void smelt_session_set_profiling(smelt_session_t *s, int on);
/* Step i's times in the session's last profiled run, in milliseconds
 * from the run's start. */
smelt_status smelt_session_step_time(const smelt_session_t *s, int i,
                                     double *start_ms, double *end_ms);

typedef struct smelt_plan_stats {
    size_t struct_size;     /* SMELT_STRUCT_INIT(smelt_plan_stats) */
    int64_t arena_bytes;    /* one session's arena */
    int64_t unshared_bytes; /* the same buffers without any sharing */
    int64_t weight_bytes;   /* constants the plan reads */
    int32_t steps;
    int32_t kernel_steps;  /* run by an optimized CPU kernel */
    int32_t ref_steps;     /* run by a reference kernel */
    int32_t dynamic_steps; /* allocate while running: control flow
                              (If, Loop) and data-dependent shapes */
    int32_t inplace;       /* outputs written over a dying input */
    int32_t threads;
    int32_t channels_last;   /* values kernels pass as NHWC, not NCHW */
    char isa[64];            /* the CPU features kernels were chosen for */
    int32_t arena_buffers;   /* buffers placed in the arena (workspaces too) */
    int32_t shared_buffers;  /* of those, the ones whose bytes another
                                buffer reuses while it is dead */
    int32_t channel_blocked; /* values passed in channel blocks, not NCHW */
    int32_t recomputed;      /* values computed again before a late reader
                                instead of kept alive (memory_budget) */
} smelt_plan_stats;

/* out->struct_size must be set (SMELT_STRUCT_INIT). */
smelt_status smelt_plan_get_stats(const smelt_plan_t *p, smelt_plan_stats *out);

typedef struct smelt_plan_step_info {
    size_t struct_size; /* SMELT_STRUCT_INIT(smelt_plan_step_info) */
    const char *name;   /* the node's name, else its first output's */
    const char *op;
    const char *kernel; /* "ref", "copy", "dynamic" or the CPU kernel */
    double flops, bytes_read, bytes_write; /* from the op's cost function */
    int32_t recompute_of; /* the step this one repeats to recompute its
                             output (memory_budget), -1 for the others */
    const char *value;    /* its first output's name ("" when none) */
    int64_t value_bytes;  /* and that output's bytes */
} smelt_plan_step_info;

int smelt_plan_num_steps(const smelt_plan_t *p);
/* Step i; out->struct_size must be set (SMELT_STRUCT_INIT). */
smelt_status smelt_plan_step(const smelt_plan_t *p, int i,
                             smelt_plan_step_info *out);
/* The dtype and shape output i has (as for tensors made with
 * smelt_tensor_init); -1 / UNDEFINED when only known while running. */
int smelt_plan_num_inputs(const smelt_plan_t *p);
int smelt_plan_num_outputs(const smelt_plan_t *p);
smelt_dtype smelt_plan_input_dtype(const smelt_plan_t *p, int i);
int smelt_plan_input_ndim(const smelt_plan_t *p, int i);
int64_t smelt_plan_input_dim(const smelt_plan_t *p, int i, int axis);
smelt_dtype smelt_plan_output_dtype(const smelt_plan_t *p, int i);
int smelt_plan_output_ndim(const smelt_plan_t *p, int i);
int64_t smelt_plan_output_dim(const smelt_plan_t *p, int i, int axis);
/* The plan as text: steps with their kernels and buffers (the memory
 * map). Release *out with smelt_string_free(). */
smelt_status smelt_plan_print(smelt_ctx_t *ctx, const smelt_plan_t *p,
                              char **out);

/* ---- profiling and memory history (docs/PROFILING.md) ------------------- */

/* One thread's turn in a step's parallel work, recorded in a profiled
 * run when the session has a thread pool (threads > 1): thread 0 is the
 * thread that called run, 1.. the pool's workers. */
typedef struct smelt_work_item {
    size_t struct_size; /* SMELT_STRUCT_INIT(smelt_work_item) */
    int32_t step;       /* the step it worked for */
    int32_t thread;
    double start_ms, end_ms; /* from the run's start, as step times */
} smelt_work_item;

/* The work items of the session's last profiled run (0 without a pool),
 * and how many did not fit the buffer made by set_profiling. */
int smelt_session_num_work_items(const smelt_session_t *s);
int smelt_session_dropped_work_items(const smelt_session_t *s);
/* Item i; out->struct_size must be set (SMELT_STRUCT_INIT). */
smelt_status smelt_session_work_item(const smelt_session_t *s, int i,
                                     smelt_work_item *out);

/* Step i's operands as text, "f32[1,3,8,8], f32[4,3,3,3] -> f32[1,4,6,6]"
 * (absent optional inputs as "-", shapes known only while running as
 * "?"), cut to fit buf (size bytes, NUL-terminated). */
smelt_status smelt_plan_step_shapes(const smelt_plan_t *p, int i, char *buf,
                                    size_t size);

/* Where a plan buffer's bytes live. */
typedef enum smelt_buffer_kind {
    SMELT_BUFFER_ARENA,     /* an intermediate at `offset` in the arena */
    SMELT_BUFFER_WORKSPACE, /* a step's scratch in the arena, live in it only */
    SMELT_BUFFER_WEIGHT,    /* a constant of the graph */
    SMELT_BUFFER_INPUT,     /* the caller's input tensor */
    SMELT_BUFFER_OUTPUT,    /* the output tensor the caller receives */
    SMELT_BUFFER_DYNAMIC,   /* allocated while running (data-dependent) */
    SMELT_BUFFER_VIEW       /* another buffer's bytes seen with a new shape */
} smelt_buffer_kind;

/* One buffer of a plan's memory history: which step creates it and the
 * last step that reads it (it is free after that step). An arena buffer
 * that reuses another's bytes in place, or views them, names that
 * buffer in `shares` (-1 otherwise): such buffers form one arena region
 * live from the earliest creation to the latest read among them;
 * regions live at the same step never overlap in the arena. */
typedef struct smelt_plan_buffer_info {
    size_t struct_size;  /* SMELT_STRUCT_INIT(smelt_plan_buffer_info) */
    const char *name;    /* the value's name; a workspace's step's node */
    int32_t kind;        /* smelt_buffer_kind */
    int32_t first, last; /* steps; -1 for weights and inputs no step reads */
    int32_t shares;
    int64_t offset; /* ARENA and WORKSPACE: bytes into the arena, else -1 */
    int64_t bytes;
} smelt_plan_buffer_info;

/* Every value slot of the plan, then every step's workspace. */
int smelt_plan_num_buffers(const smelt_plan_t *p);
/* Buffer i; out->struct_size must be set (SMELT_STRUCT_INIT). */
smelt_status smelt_plan_buffer(const smelt_plan_t *p, int i,
                               smelt_plan_buffer_info *out);

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

/* ---- eager ops and tracing (docs/TRACE.md) ---------------------------- */

/* An op attribute, written with designated initializers:
 * {.name = "axis", .kind = SMELT_ATTR_INT, .i = 1}. */
typedef enum smelt_attr_kind {
    SMELT_ATTR_INT,    /* .i */
    SMELT_ATTR_FLOAT,  /* .f (an INT is accepted where a float is due) */
    SMELT_ATTR_STRING, /* .s */
    SMELT_ATTR_INTS,   /* .ints, .n elements */
    SMELT_ATTR_FLOATS, /* .floats, .n elements */
    SMELT_ATTR_TENSOR  /* .t (copied) */
} smelt_attr_kind;

typedef struct smelt_attr {
    const char *name;
    smelt_attr_kind kind;
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints;
    const double *floats;
    int32_t n;
    const smelt_tensor_t *t;
    /* Room for later fields without changing the size (the library
     * indexes arrays of smelt_attr): must be NULL, as designated
     * initializers leave it. */
    const void *reserved[2];
} smelt_attr;

/* Runs op `op_name` of the op table (any but If, Loop, FusedElementwise)
 * at once on concrete tensors with the reference kernel. inputs[i] NULL:
 * an absent optional input. outputs[j] receive new tensors owned by the
 * caller (all NULL on failure). While ctx is tracing, the op is also
 * recorded. */
smelt_status smelt_op(smelt_ctx_t *ctx, const char *op_name,
                      smelt_tensor_t *const *inputs, int n_in,
                      const smelt_attr *attrs, int n_attrs,
                      smelt_tensor_t **outputs, int n_out);

/* Typed forms of common ops: *out receives a new tensor. */
smelt_status smelt_neg(smelt_ctx_t *ctx, smelt_tensor_t *x,
                       smelt_tensor_t **out);
smelt_status smelt_abs(smelt_ctx_t *ctx, smelt_tensor_t *x,
                       smelt_tensor_t **out);
smelt_status smelt_sqrt(smelt_ctx_t *ctx, smelt_tensor_t *x,
                        smelt_tensor_t **out);
smelt_status smelt_exp(smelt_ctx_t *ctx, smelt_tensor_t *x,
                       smelt_tensor_t **out);
smelt_status smelt_log(smelt_ctx_t *ctx, smelt_tensor_t *x,
                       smelt_tensor_t **out);
smelt_status smelt_tanh(smelt_ctx_t *ctx, smelt_tensor_t *x,
                        smelt_tensor_t **out);
smelt_status smelt_sigmoid(smelt_ctx_t *ctx, smelt_tensor_t *x,
                           smelt_tensor_t **out);
smelt_status smelt_relu(smelt_ctx_t *ctx, smelt_tensor_t *x,
                        smelt_tensor_t **out);
smelt_status smelt_erf(smelt_ctx_t *ctx, smelt_tensor_t *x,
                       smelt_tensor_t **out);
smelt_status smelt_reciprocal(smelt_ctx_t *ctx, smelt_tensor_t *x,
                              smelt_tensor_t **out);
smelt_status smelt_gelu(smelt_ctx_t *ctx, smelt_tensor_t *x,
                        smelt_tensor_t **out);
/* Numpy broadcasting; matmul as numpy.matmul. */
smelt_status smelt_add(smelt_ctx_t *ctx, smelt_tensor_t *a, smelt_tensor_t *b,
                       smelt_tensor_t **out);
smelt_status smelt_sub(smelt_ctx_t *ctx, smelt_tensor_t *a, smelt_tensor_t *b,
                       smelt_tensor_t **out);
smelt_status smelt_mul(smelt_ctx_t *ctx, smelt_tensor_t *a, smelt_tensor_t *b,
                       smelt_tensor_t **out);
smelt_status smelt_div(smelt_ctx_t *ctx, smelt_tensor_t *a, smelt_tensor_t *b,
                       smelt_tensor_t **out);
smelt_status smelt_pow(smelt_ctx_t *ctx, smelt_tensor_t *a, smelt_tensor_t *b,
                       smelt_tensor_t **out);
smelt_status smelt_matmul(smelt_ctx_t *ctx, smelt_tensor_t *a,
                          smelt_tensor_t *b, smelt_tensor_t **out);
/* One axis attribute (negative counts from the end). */
smelt_status smelt_softmax(smelt_ctx_t *ctx, smelt_tensor_t *x, int64_t axis,
                           smelt_tensor_t **out);
smelt_status smelt_log_softmax(smelt_ctx_t *ctx, smelt_tensor_t *x,
                               int64_t axis, smelt_tensor_t **out);
smelt_status smelt_flatten(smelt_ctx_t *ctx, smelt_tensor_t *x, int64_t axis,
                           smelt_tensor_t **out);
/* perm NULL: reverse the axes. */
smelt_status smelt_transpose(smelt_ctx_t *ctx, smelt_tensor_t *x,
                             const int64_t *perm, int n_perm,
                             smelt_tensor_t **out);
/* ONNX Reshape: 0 copies the input's dim, -1 is inferred. */
smelt_status smelt_reshape(smelt_ctx_t *ctx, smelt_tensor_t *x,
                           const int64_t *shape, int ndim,
                           smelt_tensor_t **out);

/* Starts recording the ops run on ctx into a graph named `name` (one
 * trace per ctx). Tensors marked with smelt_trace_input become the
 * graph's inputs; every other tensor an op reads that the trace did not
 * make becomes a constant, captured by value at its first use. */
smelt_status smelt_trace_begin(smelt_ctx_t *ctx, const char *name);
/* Marks t as the next graph input, named `name`; before t is used. */
smelt_status smelt_trace_input(smelt_ctx_t *ctx, smelt_tensor_t *t,
                               const char *name);
/* Ends the trace: outputs become the graph's returns, *graph a verified
 * graph with every shape concrete (free with smelt_graph_free). Fails,
 * freeing the partial graph, when any op of the trace failed. */
smelt_status smelt_trace_end(smelt_ctx_t *ctx, smelt_tensor_t *const *outputs,
                             int n_out, smelt_graph_t **graph);
/* Warnings of the running or last trace on ctx, one a line ("" when
 * none): reads of traced tensors' data, whose branches the graph bakes
 * in. Valid until the next read of traced data or the next
 * smelt_trace_end / smelt_trace_begin on ctx. */
const char *smelt_trace_warnings(const smelt_ctx_t *ctx);

/* ---- graph inspection (smelt info) ------------------------------------- */

/* Types of graph outputs (known after smelt_graph_infer), as for inputs:
 * dtype, rank (-1 when unknown), dimension size (-1 when not known) and
 * its symbolic name (NULL when none). */
smelt_dtype smelt_graph_output_dtype(const smelt_graph_t *g, int i);
int smelt_graph_output_ndim(const smelt_graph_t *g, int i);
int64_t smelt_graph_output_dim(const smelt_graph_t *g, int i, int axis);
const char *smelt_graph_output_dim_name(const smelt_graph_t *g, int i,
                                        int axis);
/* The op name of node i, 0 <= i < smelt_graph_num_nodes(g), counting each
 * node and then the nodes of its sub-blocks; NULL when out of range. */
const char *smelt_graph_node_op(const smelt_graph_t *g, int i);
/* The op names of the first n nodes, in the order smelt_graph_node_op
 * counts them, stored into ops[]; returns how many were stored. One walk
 * of the graph, where calling smelt_graph_node_op for every i walks it
 * once per node. */
int smelt_graph_node_ops(const smelt_graph_t *g, const char **ops, int n);
/* The constants (weights) of every block: how many, their total element
 * count and their bytes. Any pointer may be NULL. */
void smelt_graph_constants(const smelt_graph_t *g, int64_t *count,
                           int64_t *numel, int64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
