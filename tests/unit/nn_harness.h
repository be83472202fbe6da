/*
 * nn_harness.h - runs one op node the way the reference interpreter does
 * (shape function on the concrete inputs and their data, outputs allocated
 * from the inferred types, reference kernel, cost function), for the unit
 * tests of the contraction, pooling and normalization ops
 * (test_ref_matmul.c, test_ref_conv.c, test_ref_pool.c, test_ref_norm.c).
 *
 * Everything is static inline so that each test uses what it needs.
 */
#ifndef SM_NN_HARNESS_H
#define SM_NN_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/ir.h"
#include "ir/shape_util.h"

#define F32 SMELT_DTYPE_F32
#define F64 SMELT_DTYPE_F64
#define F16 SMELT_DTYPE_F16
#define BF16 SMELT_DTYPE_BF16
#define I8 SMELT_DTYPE_I8
#define I32 SMELT_DTYPE_I32
#define I64 SMELT_DTYPE_I64
#define BOOL SMELT_DTYPE_BOOL

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))
#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define I64S(...) ((int64_t[]){__VA_ARGS__})

/* Attributes: ATTRS(A_INT("group", 2), A_INTS("pads", 1, 1)) expands to
 * "list, count"; NO_ATTRS to none. */
#define A_INT(nm, x)                                                           \
    {                                                                          \
        .name = (nm), .kind = SM_ATTR_INT, .v.i = (x)                          \
    }
#define A_FLOAT(nm, x)                                                         \
    {                                                                          \
        .name = (nm), .kind = SM_ATTR_FLOAT, .v.f = (x)                        \
    }
#define A_STR(nm, x)                                                           \
    {                                                                          \
        .name = (nm), .kind = SM_ATTR_STRING, .v.s = (x)                       \
    }
#define A_INTS(nm, ...)                                                        \
    {                                                                          \
        .name = (nm), .kind = SM_ATTR_INTS, .n = N_OF(I64S(__VA_ARGS__)),      \
        .v.ints = I64S(__VA_ARGS__)                                            \
    }
#define ATTRS(...)                                                             \
    (const sm_attr[]){__VA_ARGS__}, N_OF(((const sm_attr[]){__VA_ARGS__}))
#define NO_ATTRS NULL, 0

/* A new tensor of dtype dt and the given dims holding v (numel values;
 * v may be NULL for zeros). */
static inline sm_tensor *nn_tensor(smelt_dtype dt, int ndim,
                                   const int64_t *dims, const double *v)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, dt, ndim, dims, &t), SMELT_OK);
    for (int64_t i = 0; v && i < t->numel; i++)
        sm_store_f64(dt, t->data, i, v[i]);
    return t;
}

/* A tensor filled with a reproducible pattern of small values (multiples
 * of 1/8 in [-2, 2), exact in every float dtype) seeded by `seed`. */
static inline sm_tensor *nn_pattern(smelt_dtype dt, int ndim,
                                    const int64_t *dims, unsigned seed)
{
    sm_tensor *t = nn_tensor(dt, ndim, dims, NULL);
    unsigned x = seed * 2654435761u + 12345u;
    for (int64_t i = 0; i < t->numel; i++) {
        x = x * 1103515245u + 12345u;
        sm_store_f64(dt, t->data, i, (double)((x >> 16) % 32) / 8.0 - 2.0);
    }
    return t;
}

/* Element i of t as a double. */
static inline double nn_at(const sm_tensor *t, int64_t i)
{
    return sm_load_f64(t->dtype, t->data, i);
}

/* The outcome of running one node. */
typedef struct nn_result {
    smelt_status st;
    sm_tensor *out[3];
    sm_type type[3];
    sm_cost cost;
    char msg[SM_ERR_MSG_MAX];
} nn_result;

/*
 * Runs op on inputs in[0..n_in) (NULL entries are absent optional inputs)
 * with n_out outputs and the given attributes. Frees the inputs; the
 * caller frees the result with nn_free.
 */
static inline nn_result nn_run(sm_op op, int n_in, sm_tensor **in, int n_out,
                               const sm_attr *at, int n_at)
{
    const sm_op_info *info = sm_op_info_get(op);
    nn_result r;
    memset(&r, 0, sizeof r);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_type types[8];
    sm_operand opnd[8];
    for (int i = 0; i < n_in; i++) {
        if (in[i])
            sm_type_from_tensor(&types[i], in[i]);
        opnd[i] = (sm_operand){in[i] != NULL, in[i] ? &types[i] : NULL, in[i]};
    }
    for (int j = 0; j < n_out; j++)
        sm_type_unknown(&r.type[j]);
    sm_shape_ctx s = {.op = info,
                      .attrs = {at, n_at, info->spec, info->n_spec},
                      .n_in = n_in,
                      .in = opnd,
                      .n_out = n_out,
                      .out = r.type,
                      .ctx = ctx};
    r.st = info->shape(&s);
    for (int j = 0; r.st == SMELT_OK && j < n_out; j++) {
        assert_true(sm_type_known(&r.type[j]));
        int64_t dims[SMELT_MAX_DIMS];
        for (int d = 0; d < r.type[j].ndim; d++)
            dims[d] = r.type[j].dims[d].size;
        r.st = sm_tensor_new(ctx, r.type[j].dtype, r.type[j].ndim, dims,
                             &r.out[j]);
    }
    if (r.st == SMELT_OK) {
        sm_kargs k = {.op_name = info->name,
                      .attrs = s.attrs,
                      .n_in = n_in,
                      .in = in,
                      .n_out = n_out,
                      .out = r.out,
                      .ctx = ctx};
        r.st = info->ref(&k);
        info->cost(&s, &r.cost);
    }
    snprintf(r.msg, sizeof r.msg, "%s", smelt_ctx_error(ctx));
    if (r.st != SMELT_OK) {
        for (int j = 0; j < n_out; j++) {
            sm_tensor_free(r.out[j]);
            r.out[j] = NULL;
        }
    }
    for (int i = 0; i < n_in; i++)
        sm_tensor_free(in[i]);
    smelt_ctx_free(ctx);
    return r;
}

static inline void nn_free(nn_result *r)
{
    for (int j = 0; j < 3; j++)
        sm_tensor_free(r->out[j]);
}

/* nn_run that must succeed. */
static inline nn_result nn_ok(sm_op op, int n_in, sm_tensor **in, int n_out,
                              const sm_attr *at, int n_at)
{
    nn_result r = nn_run(op, n_in, in, n_out, at, n_at);
    if (r.st != SMELT_OK)
        fail_msg("%s failed: %s", sm_op_info_get(op)->name, r.msg);
    return r;
}

/* Asserts that msg holds every '|'-separated word of words. */
static inline void nn_has_words(const char *msg, const char *words)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, "|"); w; w = strtok(NULL, "|"))
        if (!strstr(msg, w))
            fail_msg("message \"%s\" lacks \"%s\"", msg, w);
}

/* nn_run that must fail with status want and a message holding each
 * '|'-separated word of words. */
static inline void nn_fail(sm_op op, int n_in, sm_tensor **in, int n_out,
                           const sm_attr *at, int n_at, smelt_status want,
                           const char *words)
{
    nn_result r = nn_run(op, n_in, in, n_out, at, n_at);
    if (r.st != want)
        fail_msg("%s: status %s, expected %s (%s)", sm_op_info_get(op)->name,
                 smelt_status_name(r.st), smelt_status_name(want), r.msg);
    nn_has_words(r.msg, words);
    nn_free(&r);
}

/* Asserts t has the given shape and values within tol (absolute plus
 * relative). */
static inline void nn_expect(const sm_tensor *t, int ndim, const int64_t *dims,
                             const double *want, double tol)
{
    assert_non_null(t);
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(t->dims[d], dims[d]);
    for (int64_t i = 0; i < t->numel; i++) {
        double got = nn_at(t, i);
        if (!(fabs(got - want[i]) <= tol * (1 + fabs(want[i]))))
            fail_msg("element %lld: got %.17g, expected %.17g", (long long)i,
                     got, want[i]);
    }
}

/* Asserts t's values equal want[0..t->numel) within tol. */
static inline void nn_expect_values(const sm_tensor *t, const double *want,
                                    double tol)
{
    nn_expect(t, t->ndim, t->dims, want, tol);
}

/*
 * Builds a type from text: dims separated by commas, each a size, '?'
 * (unknown) or a symbolic name; "*" is unknown rank and "" rank 0.
 * Symbolic names point into a static pool that lives for the program.
 */
static inline sm_type nn_type(smelt_dtype dt, const char *spec)
{
    static char pool[64][16];
    static int used;
    sm_type t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    if (strcmp(spec, "*") == 0) {
        t.ndim = SM_RANK_UNKNOWN;
        return t;
    }
    for (const char *p = spec; *p;) {
        size_t n = strcspn(p, ",");
        sm_dim *d = &t.dims[t.ndim++];
        if (*p == '?') {
            *d = (sm_dim){-1, NULL};
        } else if (*p >= '0' && *p <= '9') {
            *d = (sm_dim){strtoll(p, NULL, 10), NULL};
        } else {
            char *name = pool[used++ % 64];
            snprintf(name, sizeof pool[0], "%.*s", (int)n, p);
            *d = (sm_dim){-1, name};
        }
        p += n + (p[n] == ',');
    }
    return t;
}

/* Runs only op's shape function on types (NULL entries absent), writing
 * n_out output types; the error message goes to msg (may be NULL). */
static inline smelt_status nn_shape(sm_op op, int n_in,
                                    const sm_type *const *types, int n_out,
                                    sm_type *out, const sm_attr *at, int n_at,
                                    char *msg)
{
    const sm_op_info *info = sm_op_info_get(op);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_operand opnd[8];
    for (int i = 0; i < n_in; i++)
        opnd[i] = (sm_operand){types[i] != NULL, types[i], NULL};
    for (int j = 0; j < n_out; j++)
        sm_type_unknown(&out[j]);
    sm_shape_ctx s = {.op = info,
                      .attrs = {at, n_at, info->spec, info->n_spec},
                      .n_in = n_in,
                      .in = opnd,
                      .n_out = n_out,
                      .out = out,
                      .ctx = ctx};
    smelt_status st = info->shape(&s);
    if (msg)
        snprintf(msg, SM_ERR_MSG_MAX, "%s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return st;
}

/* Asserts that t prints as want ("f32[batch,8,?,32]"). */
static inline void nn_type_is(const sm_type *t, const char *want)
{
    char buf[256];
    sm_type_str(t, buf, sizeof buf);
    assert_string_equal(buf, want);
}

#endif
