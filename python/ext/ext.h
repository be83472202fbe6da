/*
 * ext.h - what the files of the _smelt extension module share: the
 * object types (Model over a graph, Plan over a compiled plan, Session
 * over a run context), error conversion and numpy conversion. Everything
 * goes through the public C API (include/smelt.h).
 */
#ifndef SMX_EXT_H
#define SMX_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL smx_ARRAY_API
#ifndef SMX_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "smelt.h"

/* A graph: what load, from_torch and script give. The plan of its last
 * call is kept (`plan`) and compiled again when input shapes change.
 * `readers` counts the calls that read g with the GIL released
 * (compiling, the reference interpreter); while it is not 0, what would
 * free or rewrite g (optimize, set_initializer) is refused. */
typedef struct smx_model {
    PyObject_HEAD smelt_graph_t *g;
    PyObject *plan; /* smx_plan or NULL */
    int readers;
} smx_model;

/* A RuntimeError when another thread reads m's graph; else 0. */
int smx_model_check_unused(const smx_model *m, const char *what);

/* A compiled plan, immutable; input and output names kept as tuples. */
typedef struct smx_plan {
    PyObject_HEAD smelt_plan_t *p;
    PyObject *in_names, *out_names; /* tuples of str */
} smx_plan;

/* One thread's run context over a plan; `busy` (read and set with the
 * GIL held) refuses a second thread using it at once. */
typedef struct smx_session {
    PyObject_HEAD smx_plan *plan;
    smelt_session_t *s;
    int busy;
    int profiling;
} smx_session;

extern PyTypeObject smx_model_type, smx_plan_type, smx_session_type;
extern PyObject *smx_error; /* smelt.Error */

/* errors.c: raise smelt.Error from ctx's message and status (file,
 * line and column parsed from "FILE:LINE:COL: ..."); returns NULL. */
PyObject *smx_raise(smelt_ctx_t *ctx, smelt_status st);
int smx_errors_init(PyObject *module);
/* A new ctx, or NULL with MemoryError set. */
smelt_ctx_t *smx_ctx(void);

/* convert.c */
/* (name, dtype, shape) of one graph or plan input or output: shape None
 * when nd < 0, else a tuple of dims[a], or syms[a] (when syms is given
 * and names one) or None where dims[a] < 0. */
PyObject *smx_value_tuple(const char *name, smelt_dtype dt, int nd,
                          const int64_t *dims, const char *const *syms);
int smx_dtype_to_npy(smelt_dtype dt);
smelt_dtype smx_npy_to_dtype(int npy);
/* obj as an array fit to pass as input `name`: C-contiguous, aligned,
 * of dtype `want` (UNDEFINED: any Smelt dtype). A different dtype is a
 * TypeError unless `cast`. New reference, or NULL with an error set. */
PyArrayObject *smx_as_input(PyObject *obj, const char *name, smelt_dtype want,
                            int cast);
/* A tensor viewing arr's bytes (freed with smelt_tensor_free; arr must
 * outlive it). */
smelt_tensor_t *smx_wrap(smelt_ctx_t *ctx, PyArrayObject *arr);
/* A numpy array taking t over (t freed with the array). */
PyObject *smx_from_tensor(smelt_tensor_t *t);
/* "f32[1,3,224,224]" of an array. */
void smx_array_str(PyArrayObject *a, char *buf, size_t size);

/* plan.c */
/* Ctrl-C during a run: between smx_poll_begin and smx_poll_end (GIL
 * released between them), a run on ctx made on the main thread polls
 * Python's signal handlers; smx_poll_end gives -1 with the handler's
 * exception (KeyboardInterrupt) set when one raised, else 0. */
typedef struct smx_poll {
    double last_ms;
    int raised;
} smx_poll;
void smx_poll_begin(smelt_ctx_t *ctx, smx_poll *ps);
int smx_poll_end(smelt_ctx_t *ctx, smx_poll *ps, smelt_status st);
PyObject *smx_plan_new(smelt_plan_t *p, const smelt_graph_t *g);
/* Runs plan (on session s, or the plan's own when NULL) with arrays
 * already converted; returns the outputs as one array, a tuple, or a
 * dict when as_dict. Releases the GIL while running. */
PyObject *smx_plan_exec(smx_plan *plan, smelt_session_t *s,
                        PyArrayObject **arrs, int as_dict);
/* Collects and converts the inputs of a call: positional args, then the
 * names in kwargs (or a dict `named`); arrs[i] new references. */
int smx_collect(PyObject *args, PyObject *named, PyObject *in_names,
                const smelt_dtype *want, int cast, PyArrayObject **arrs);

/* model.c */
PyObject *smx_model_new(smelt_graph_t *g);
/* dims given as {"batch": 1} or "batch=1" into a string (*out, owned by
 * the new reference *keep); None: NULL. */
int smx_dims_string(PyObject *dims, PyObject **keep, const char **out);

/* quantize.c: Model._quantize, _quantize_qat, _quantize_convert */
PyObject *smx_quantize(smx_model *self, PyObject *args, PyObject *kwargs);
PyObject *smx_quantize_qat(smx_model *self, PyObject *args, PyObject *kwargs);
PyObject *smx_quantize_convert(smx_model *self, PyObject *unused);

/* transform.c: Model methods that make graphs or move weights */
PyObject *smx_grad(smx_model *self, PyObject *args, PyObject *kwargs);
PyObject *smx_add_loss(smx_model *self, PyObject *args);
PyObject *smx_add_optimizer(smx_model *self, PyObject *args);
PyObject *smx_optim_roles(smx_model *self, PyObject *unused);
PyObject *smx_initializers(smx_model *self, void *unused);
PyObject *smx_get_initializer(smx_model *self, PyObject *args);
PyObject *smx_set_initializer(smx_model *self, PyObject *args,
                              PyObject *kwargs);
PyObject *smx_bind_dims(smx_model *self, PyObject *args);

/* train.c: Model._train, smelt.train's C side (smelt_trainer_*) */
PyObject *smx_train(smx_model *self, PyObject *args, PyObject *kwargs);

#endif
