/*
 * ref_harness.h - the harness of the reference-kernel tests that write
 * their tensors inline (test_ref_movement.c, test_ref_reshape.c,
 * test_ref_index.c, test_ref_const.c, test_ref_gather.c, test_ref_scatter.c,
 * test_ref_topk.c, test_ref_space.c, test_ref_resize.c,
 * test_ref_gridsample.c, test_ref_rnn.c, test_ref_roi.c, test_hostile.c):
 * tensor and attribute builders, run() doing what the reference
 * interpreter does for one node, infer() for shape inference on symbolic
 * types written as text ("f32[batch,3,?]", "i64[*]"), kernel_fail() for a
 * kernel's own re-checks, and alloc_walk() for allocation failures.
 */
#ifndef SM_REF_HARNESS_H
#define SM_REF_HARNESS_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/ir.h"

#define F32 SMELT_DTYPE_F32
#define F64 SMELT_DTYPE_F64
#define F16 SMELT_DTYPE_F16
#define U8 SMELT_DTYPE_U8
#define I32 SMELT_DTYPE_I32
#define I64 SMELT_DTYPE_I64
#define BOOL SMELT_DTYPE_BOOL

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define NOF(a) ((int)(sizeof(a) / sizeof *(a)))
#define ATTRS(...)                                                             \
    (const sm_attr[]){__VA_ARGS__}, NOF(((sm_attr[]){__VA_ARGS__}))
#define NO_ATTRS NULL, 0
#define INS(...)                                                               \
    NOF(((sm_tensor *[]){__VA_ARGS__})), ((sm_tensor *[]){__VA_ARGS__})

/* A tensor of dtype dt and shape dims holding the doubles f, or else the
 * int64s i (stored with C conversions). */
static inline sm_tensor *tnew(smelt_dtype dt, int ndim, const int64_t *dims,
                              const double *f, const int64_t *i)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, dt, ndim, dims, &t), SMELT_OK);
    for (int64_t k = 0; k < t->numel; k++) {
        if (f)
            sm_store_f64(dt, t->data, k, f[k]);
        else
            sm_store_i64(dt, t->data, k, i[k]);
    }
    return t;
}

#define tf(dt, ndim, dims, f) tnew(dt, ndim, dims, f, NULL)
#define ti(dt, ndim, dims, i) tnew(dt, ndim, dims, NULL, i)

/* An f32 tensor holding 0, 1, 2, ... */
static inline sm_tensor *iota(int ndim, const int64_t *dims)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, F32, ndim, dims, &t), SMELT_OK);
    for (int64_t i = 0; i < t->numel; i++)
        ((float *)t->data)[i] = (float)i;
    return t;
}

/* A 1-D i64 tensor: L(3, 1, 2, 3). */
#define L(n, ...) ti(I64, 1, D(n), D(__VA_ARGS__))
/* An empty 1-D i64 tensor. */
#define L0() ti(I64, 1, D(0), NULL)

static inline sm_attr a_int(const char *name, int64_t v)
{
    sm_attr a = {.name = name, .kind = SM_ATTR_INT};
    a.v.i = v;
    return a;
}

static inline sm_attr a_float(const char *name, double v)
{
    sm_attr a = {.name = name, .kind = SM_ATTR_FLOAT};
    a.v.f = v;
    return a;
}

static inline sm_attr a_str(const char *name, const char *v)
{
    sm_attr a = {.name = name, .kind = SM_ATTR_STRING};
    a.v.s = v;
    return a;
}

static inline sm_attr a_ints(const char *name, int n, const int64_t *v)
{
    sm_attr a = {.name = name, .kind = SM_ATTR_INTS, .n = n};
    a.v.ints = (int64_t *)v;
    return a;
}

static inline sm_attr a_floats(const char *name, int n, const double *v)
{
    sm_attr a = {.name = name, .kind = SM_ATTR_FLOATS, .n = n};
    a.v.floats = (double *)v;
    return a;
}

/* The tensor stays the caller's. */
static inline sm_attr a_tensor(const char *name, sm_tensor *t)
{
    sm_attr a = {.name = name, .kind = SM_ATTR_TENSOR};
    a.v.t = t;
    return a;
}

/*
 * Runs op as the interpreter will: the shape function on the concrete
 * input types with their values, outputs allocated from its result, then
 * the kernel. Frees the inputs; on success out[] holds n_out new tensors,
 * on failure every out[j] is NULL.
 */
static inline smelt_status run(smelt_ctx_t *ctx, sm_op op, const sm_attr *at,
                               int n_at, int n_in, sm_tensor **in, int n_out,
                               sm_tensor **out)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_type tin[8], tout[8];
    sm_operand opnd[8];
    for (int i = 0; i < n_in; i++) {
        if (in[i])
            sm_type_from_tensor(&tin[i], in[i]);
        opnd[i] = (sm_operand){in[i] != NULL, in[i] ? &tin[i] : NULL, in[i]};
    }
    for (int j = 0; j < n_out; j++) {
        sm_type_unknown(&tout[j]);
        out[j] = NULL;
    }
    sm_shape_ctx s = {.op = info,
                      .attrs = {at, n_at, info->spec, info->n_spec},
                      .n_in = n_in,
                      .in = opnd,
                      .n_out = n_out,
                      .out = tout,
                      .ctx = ctx};
    smelt_status st = info->shape(&s);
    for (int j = 0; st == SMELT_OK && j < n_out; j++) {
        if (!sm_type_known(&tout[j]))
            fail_msg("%s: output %d not concrete", info->name, j);
        int64_t dims[SMELT_MAX_DIMS];
        for (int d = 0; d < tout[j].ndim; d++)
            dims[d] = tout[j].dims[d].size;
        st = sm_tensor_new(ctx, tout[j].dtype, tout[j].ndim, dims, &out[j]);
    }
    if (st == SMELT_OK) {
        sm_kargs k = {.op_name = info->name,
                      .attrs = s.attrs,
                      .n_in = n_in,
                      .in = in,
                      .n_out = n_out,
                      .out = out,
                      .ctx = ctx};
        st = info->ref(&k);
    }
    for (int i = 0; i < n_in; i++)
        sm_tensor_free(in[i]);
    for (int j = 0; st != SMELT_OK && j < n_out; j++) {
        sm_tensor_free(out[j]);
        out[j] = NULL;
    }
    return st;
}

/* Runs a one-output op that must succeed; returns its output. */
static inline sm_tensor *run1(sm_op op, const sm_attr *at, int n_at, int n_in,
                              sm_tensor **in)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out;
    if (run(ctx, op, at, n_at, n_in, in, 1, &out) != SMELT_OK)
        fail_msg("%s failed: %s", sm_op_info_get(op)->name,
                 smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return out;
}

/* Asserts msg holds every '|'-separated word of words. */
static inline void has_words(const char *msg, const char *words)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, "|"); w; w = strtok(NULL, "|"))
        if (!strstr(msg, w))
            fail_msg("message '%s' lacks '%s'", msg, w);
}

/* Runs op (n_out outputs) expecting status want and a message naming the
 * op and holding words. */
static inline void run_fail(sm_op op, const sm_attr *at, int n_at, int n_in,
                            sm_tensor **in, int n_out, smelt_status want,
                            const char *words)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out[8];
    smelt_status st = run(ctx, op, at, n_at, n_in, in, n_out, out);
    if (st != want)
        fail_msg("%s: got status %d (%s), want %d", sm_op_info_get(op)->name,
                 st, smelt_ctx_error(ctx), want);
    has_words(smelt_ctx_error(ctx), sm_op_info_get(op)->name);
    has_words(smelt_ctx_error(ctx), words);
    smelt_ctx_free(ctx);
}

/* Checks t's dtype, shape and values (within tol), then frees it. */
static inline void expect(sm_tensor *t, smelt_dtype dt, int ndim,
                          const int64_t *dims, const double *want, double tol)
{
    assert_non_null(t);
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(t->dims[d], dims[d]);
    for (int64_t i = 0; i < t->numel; i++) {
        double got = sm_load_f64(dt, t->data, i);
        if (!(fabs(got - want[i]) <= tol))
            fail_msg("element %lld: got %.17g, want %.17g", (long long)i, got,
                     want[i]);
    }
    sm_tensor_free(t);
}

/* Same, exactly, for integer values. */
static inline void expect_i(sm_tensor *t, smelt_dtype dt, int ndim,
                            const int64_t *dims, const int64_t *want)
{
    assert_non_null(t);
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(t->dims[d], dims[d]);
    for (int64_t i = 0; i < t->numel; i++)
        if (sm_load_i64(dt, t->data, i) != want[i])
            fail_msg("element %lld: got %lld, want %lld", (long long)i,
                     (long long)sm_load_i64(dt, t->data, i),
                     (long long)want[i]);
    sm_tensor_free(t);
}

/* A type from its text form: "f32[batch,3,?]", "i64[*]". Symbol names
 * live in a static pool for the whole test program. */
static inline sm_type ty(const char *s)
{
    static char pool[4096];
    static size_t used;
    sm_type t;
    sm_type_unknown(&t);
    const char *b = strchr(s, '[');
    t.dtype = sm_dtype_from_name(s, (int)(b - s));
    if (b[1] == '*')
        return t;
    t.ndim = 0;
    for (const char *p = b + 1; *p != ']';) {
        const char *q = p;
        while (*q != ',' && *q != ']')
            q++;
        sm_dim d = {-1, NULL};
        if (isdigit((unsigned char)*p)) {
            d.size = strtoll(p, NULL, 10);
        } else if (*p != '?') {
            assert_true(used + (size_t)(q - p) + 1 <= sizeof pool);
            memcpy(pool + used, p, (size_t)(q - p));
            pool[used + (size_t)(q - p)] = 0;
            d.sym = pool + used;
            used += (size_t)(q - p) + 1;
        }
        t.dims[t.ndim++] = d;
        p = *q == ',' ? q + 1 : q;
    }
    return t;
}

/*
 * Shape inference on text types (NULL: absent input) with the values
 * data[i] where known (NULL otherwise, or data itself NULL); the outputs'
 * types print into want, '|'-separated (all n_out of them). Frees data.
 * Returns the status; on failure the message is left on ctx.
 */
static inline smelt_status infer_on(smelt_ctx_t *ctx, sm_op op,
                                    const sm_attr *at, int n_at, int n_in,
                                    const char *const *types,
                                    sm_tensor *const *data, int n_out,
                                    char *got, size_t size)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_type tin[8], tout[8];
    sm_operand opnd[8];
    for (int i = 0; i < n_in; i++) {
        if (types[i])
            tin[i] = ty(types[i]);
        opnd[i] = (sm_operand){types[i] != NULL, types[i] ? &tin[i] : NULL,
                               data ? data[i] : NULL};
    }
    for (int j = 0; j < n_out; j++)
        sm_type_unknown(&tout[j]);
    sm_shape_ctx s = {.op = info,
                      .attrs = {at, n_at, info->spec, info->n_spec},
                      .n_in = n_in,
                      .in = opnd,
                      .n_out = n_out,
                      .out = tout,
                      .ctx = ctx};
    smelt_status st = info->shape(&s);
    size_t k = 0;
    got[0] = 0;
    for (int j = 0; st == SMELT_OK && j < n_out && k < size; j++) {
        if (j)
            got[k++] = '|';
        sm_type_str(&tout[j], got + k, size - k);
        k += strlen(got + k);
    }
    for (int i = 0; data && i < n_in; i++)
        sm_tensor_free(data[i]);
    return st;
}

/* Inference that must succeed and give want. */
static inline void infer(sm_op op, const sm_attr *at, int n_at, int n_in,
                         const char *const *types, sm_tensor *const *data,
                         int n_out, const char *want)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    char got[256];
    smelt_status st =
        infer_on(ctx, op, at, n_at, n_in, types, data, n_out, got, sizeof got);
    if (st != SMELT_OK)
        fail_msg("%s inference failed: %s", sm_op_info_get(op)->name,
                 smelt_ctx_error(ctx));
    if (strcmp(got, want) != 0)
        fail_msg("%s: inferred %s, want %s", sm_op_info_get(op)->name, got,
                 want);
    smelt_ctx_free(ctx);
}

/* Inference that must fail with status want and words in the message. */
static inline void infer_fail(sm_op op, const sm_attr *at, int n_at, int n_in,
                              const char *const *types, sm_tensor *const *data,
                              smelt_status want, const char *words)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    char got[256];
    smelt_status st =
        infer_on(ctx, op, at, n_at, n_in, types, data, 1, got, sizeof got);
    if (st != want)
        fail_msg("%s: got status %d (%s), want %d", sm_op_info_get(op)->name,
                 st, smelt_ctx_error(ctx), want);
    has_words(smelt_ctx_error(ctx), sm_op_info_get(op)->name);
    has_words(smelt_ctx_error(ctx), words);
    smelt_ctx_free(ctx);
}

#define TYPES(...) ((const char *const[]){__VA_ARGS__})
#define DATA(...) ((sm_tensor *const[]){__VA_ARGS__})

/* A zero-filled tensor. */
static inline sm_tensor *zeros(smelt_dtype dt, int ndim, const int64_t *dims)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, dt, ndim, dims, &t), SMELT_OK);
    return t;
}
/* Calls op's kernel directly (no shape function) on in[] with the
 * preallocated outputs out[]; expects status want and words. Frees
 * nothing. */
static inline void kernel_fail(sm_op op, const sm_attr *at, int n_at, int n_in,
                               sm_tensor **in, int n_out, sm_tensor **out,
                               smelt_status want, const char *words)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    const sm_op_info *info = sm_op_info_get(op);
    sm_kargs k = {.op_name = info->name,
                  .attrs = {at, n_at, info->spec, info->n_spec},
                  .n_in = n_in,
                  .in = in,
                  .n_out = n_out,
                  .out = out,
                  .ctx = ctx};
    assert_int_equal(info->ref(&k), want);
    has_words(smelt_ctx_error(ctx), info->name);
    has_words(smelt_ctx_error(ctx), words);
    smelt_ctx_free(ctx);
}
static inline void free_all(int n, sm_tensor **t)
{
    for (int i = 0; i < n; i++)
        sm_tensor_free(t[i]);
}
/* Every allocation of a run that allocates scratch fails in turn:
 * SMELT_ERR_NOMEM each time, nothing leaked (ASan says so), then a clean
 * run succeeds. */
static inline void alloc_walk(sm_op op, const sm_attr *at, int n_at, int n_out,
                              sm_tensor *(*make)(int i), int n_in)
{
    for (long k = 0;; k++) {
        sm_tensor *in[8], *out[8];
        for (int i = 0; i < n_in; i++)
            in[i] = make(i);
        smelt_ctx_t *ctx = smelt_ctx_init();
        sm_alloc_fail_after(k);
        smelt_status st = run(ctx, op, at, n_at, n_in, in, n_out, out);
        sm_alloc_fail_after(-1);
        smelt_ctx_free(ctx);
        if (st == SMELT_OK) {
            free_all(n_out, out);
            assert_true(k > 0);
            return;
        }
        assert_int_equal(st, SMELT_ERR_NOMEM);
        assert_true(k < 100);
    }
}

#endif
