/*
 * test_ref_reduce.c - shape functions, reference kernels and cost of
 * ReduceSum, ReduceMean, ReduceMax, ReduceMin and ArgMax.
 *
 * reduce() runs one node as the reference interpreter will: shape
 * function on the concrete inputs, outputs allocated from it, kernel.
 * Expected values are computed by hand.
 */
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
#define I32 SMELT_DTYPE_I32
#define I64 SMELT_DTYPE_I64
#define BOOL SMELT_DTYPE_BOOL

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))
#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define I64S(...) ((int64_t[]){__VA_ARGS__})

/* Attribute lists: ATTRS(AXES(1), KEEP(0)) expands to "list, count". */
#define AXES(...)                                                              \
    {                                                                          \
        "axes", SM_ATTR_INTS, N_OF(I64S(__VA_ARGS__)),                         \
        {                                                                      \
            .ints = I64S(__VA_ARGS__)                                          \
        }                                                                      \
    }
#define INT_ATTR(name, x)                                                      \
    {                                                                          \
        name, SM_ATTR_INT, 0,                                                  \
        {                                                                      \
            .i = (x)                                                           \
        }                                                                      \
    }
#define KEEP(k) INT_ATTR("keepdims", k)
#define NOOP(k) INT_ATTR("noop_with_empty_axes", k)
#define ATTRS(...)                                                             \
    (const sm_attr[]){__VA_ARGS__}, N_OF(((const sm_attr[]){__VA_ARGS__}))
#define NO_ATTRS NULL, 0

static sm_tensor *tensor(smelt_dtype dt, int ndim, const int64_t *dims,
                         const double *v)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, dt, ndim, dims, &t), SMELT_OK);
    for (int64_t i = 0; i < t->numel; i++)
        sm_store_f64(dt, t->data, i, v[i]);
    return t;
}

/* A 1-D int64 axes tensor. */
static sm_tensor *axes_tensor(int n, const int64_t *v)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, I64, 1, (int64_t[]){n}, &t), SMELT_OK);
    if (n)
        memcpy(t->data, v, (size_t)n * sizeof *v);
    return t;
}

/*
 * Runs reduction op on x (and the axes input when not NULL) with the
 * given attributes: shape function with data, output allocation, kernel,
 * cost. Frees the inputs; *out is the result, NULL on failure.
 */
static smelt_status reduce(smelt_ctx_t *ctx, sm_op op, sm_tensor *x,
                           sm_tensor *axes, const sm_attr *at, int n_at,
                           sm_tensor **out, sm_cost *cost)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_tensor *in[2] = {x, axes};
    int n_in = axes ? 2 : 1;
    sm_type types[2], ty_out;
    sm_operand opnd[2];
    for (int i = 0; i < n_in; i++) {
        sm_type_from_tensor(&types[i], in[i]);
        opnd[i] = (sm_operand){1, &types[i], in[i]};
    }
    sm_type_unknown(&ty_out);
    sm_shape_ctx s = {info, {at, n_at, info->spec, info->n_spec},
                      n_in, opnd,
                      1,    &ty_out,
                      NULL, ctx};
    *out = NULL;
    smelt_status st = info->shape(&s);
    if (st == SMELT_OK) {
        assert_true(sm_type_known(&ty_out));
        int64_t dims[SMELT_MAX_DIMS];
        for (int d = 0; d < ty_out.ndim; d++)
            dims[d] = ty_out.dims[d].size;
        st = sm_tensor_new(ctx, ty_out.dtype, ty_out.ndim, dims, out);
    }
    if (st == SMELT_OK) {
        sm_kargs k = {info->name, s.attrs, n_in, in,   1,
                      out,        ctx,     NULL, NULL, 0};
        st = info->ref(&k);
        if (cost)
            info->cost(&s, cost);
    }
    if (st != SMELT_OK) {
        sm_tensor_free(*out);
        *out = NULL;
    }
    sm_tensor_free(x);
    sm_tensor_free(axes);
    return st;
}

/* reduce() that must succeed. */
static sm_tensor *R(sm_op op, sm_tensor *x, sm_tensor *axes, const sm_attr *at,
                    int n_at)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out;
    if (reduce(ctx, op, x, axes, at, n_at, &out, NULL) != SMELT_OK)
        fail_msg("%s: %s", sm_op_info_get(op)->name, smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
    return out;
}

/* reduce() that must fail with status want and a message holding every
 * '|'-separated word of words. */
static void R_fail(sm_op op, sm_tensor *x, sm_tensor *axes, const sm_attr *at,
                   int n_at, smelt_status want, const char *words)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out;
    assert_int_equal(reduce(ctx, op, x, axes, at, n_at, &out, NULL), want);
    assert_null(out);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", words);
    for (char *w = strtok(buf, "|"); w; w = strtok(NULL, "|"))
        if (!strstr(smelt_ctx_error(ctx), w))
            fail_msg("message '%s' lacks '%s'", smelt_ctx_error(ctx), w);
    smelt_ctx_free(ctx);
}

/* Checks dtype, shape and values (exact, nan matches nan), frees t. */
static void check(sm_tensor *t, smelt_dtype dt, int ndim, const int64_t *dims,
                  const double *want)
{
    assert_non_null(t);
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(t->dims[d], dims[d]);
    for (int64_t i = 0; i < t->numel; i++) {
        double got = sm_load_f64(dt, t->data, i);
        if (!(got == want[i] || (isnan(got) && isnan(want[i]))))
            fail_msg("element %lld: got %.17g, want %.17g", (long long)i, got,
                     want[i]);
    }
    sm_tensor_free(t);
}

/* [[1, 2, 3], [4, 5, 6]] */
#define X23 tensor(F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6))

static void test_reduce_sum(void **state)
{
    (void)state;
    check(R(SM_OP_ReduceSum, X23, NULL, ATTRS(AXES(1))), F32, 2, D(2, 1),
          V(6, 15));
    check(R(SM_OP_ReduceSum, X23, NULL, ATTRS(AXES(1), KEEP(0))), F32, 1, D(2),
          V(6, 15));
    check(R(SM_OP_ReduceSum, X23, NULL, ATTRS(AXES(-1), KEEP(0))), F32, 1, D(2),
          V(6, 15));
    /* axes as input 1 (opset 13+) */
    check(R(SM_OP_ReduceSum, X23, axes_tensor(1, I64S(0)), NO_ATTRS), F32, 2,
          D(1, 3), V(5, 7, 9));
    /* no axes: everything */
    check(R(SM_OP_ReduceSum, X23, NULL, NO_ATTRS), F32, 2, D(1, 1), V(21));
    check(R(SM_OP_ReduceSum, X23, NULL, ATTRS(KEEP(0))), F32, 0, NULL, V(21));
    check(R(SM_OP_ReduceSum, X23, axes_tensor(0, NULL), ATTRS(KEEP(0))), F32, 0,
          NULL, V(21));
    /* no axes with noop_with_empty_axes: the identity */
    check(R(SM_OP_ReduceSum, X23, NULL, ATTRS(NOOP(1))), F32, 2, D(2, 3),
          V(1, 2, 3, 4, 5, 6));
    check(R(SM_OP_ReduceSum, X23, axes_tensor(0, NULL), ATTRS(NOOP(1))), F32, 2,
          D(2, 3), V(1, 2, 3, 4, 5, 6));
    /* 3-D over two axes, one negative: [2,2,2] -> [2] */
    check(R(SM_OP_ReduceSum,
            tensor(I32, 3, D(2, 2, 2), V(1, 2, 3, 4, 10, 20, 30, 40)),
            axes_tensor(2, I64S(-1, 0)), ATTRS(KEEP(0))),
          I32, 1, D(2), V(33, 77));
    /* int64 stays exact, f16 rounds once, empty axes sum to 0 */
    int64_t p53 = (int64_t)1 << 53;
    sm_tensor *big = axes_tensor(3, I64S(p53 + 1, 1, -1));
    sm_tensor *sum = R(SM_OP_ReduceSum, big, NULL, ATTRS(KEEP(0)));
    assert_true(((int64_t *)sum->data)[0] == p53 + 1);
    sm_tensor_free(sum);
    check(R(SM_OP_ReduceSum, tensor(F16, 1, D(3), V(0.5, 0.25, 2)), NULL,
            NO_ATTRS),
          F16, 1, D(1), V(2.75));
    check(
        R(SM_OP_ReduceSum, tensor(F32, 2, D(0, 3), NULL), NULL, ATTRS(AXES(0))),
        F32, 2, D(1, 3), V(0, 0, 0));
    /* a scalar reduces to itself */
    check(R(SM_OP_ReduceSum, tensor(F64, 0, NULL, V(-2.5)), NULL, NO_ATTRS),
          F64, 0, NULL, V(-2.5));
}

static void test_reduce_mean(void **state)
{
    (void)state;
    check(R(SM_OP_ReduceMean, X23, NULL, ATTRS(AXES(1), KEEP(0))), F32, 1, D(2),
          V(2, 5));
    check(R(SM_OP_ReduceMean, X23, NULL, NO_ATTRS), F32, 2, D(1, 1), V(3.5));
    check(R(SM_OP_ReduceMean, tensor(F64, 2, D(2, 2), V(1, 2, 4, 8)), NULL,
            ATTRS(AXES(0))),
          F64, 2, D(1, 2), V(2.5, 5));
    /* integers: the int64 sum divided, truncating toward zero */
    check(R(SM_OP_ReduceMean, tensor(I32, 2, D(2, 2), V(1, 2, -1, -2)), NULL,
            ATTRS(AXES(1), KEEP(0))),
          I32, 1, D(2), V(1, -1));
    /* the mean of nothing is nan */
    check(R(SM_OP_ReduceMean, tensor(F32, 2, D(2, 0), NULL), NULL,
            ATTRS(AXES(1), KEEP(0))),
          F32, 1, D(2), V(NAN, NAN));
}

static void test_reduce_max_min(void **state)
{
    (void)state;
#define X222 tensor(F32, 3, D(2, 2, 2), V(1, 8, 3, 4, 5, 6, 7, 2))
    check(R(SM_OP_ReduceMax, X222, NULL, ATTRS(AXES(0, 2))), F32, 3, D(1, 2, 1),
          V(8, 7));
    check(R(SM_OP_ReduceMin, X222, NULL, ATTRS(AXES(0, 2))), F32, 3, D(1, 2, 1),
          V(1, 2));
    check(R(SM_OP_ReduceMin, X222, NULL, ATTRS(AXES(1), KEEP(0))), F32, 2,
          D(2, 2), V(1, 4, 5, 2));
#undef X222
    check(
        R(SM_OP_ReduceMax, tensor(F32, 1, D(3), V(1, NAN, 3)), NULL, NO_ATTRS),
        F32, 1, D(1), V(NAN));
    check(R(SM_OP_ReduceMin, tensor(F64, 2, D(1, 3), V(0, -INFINITY, 1)), NULL,
            ATTRS(KEEP(0))),
          F64, 0, NULL, V(-INFINITY));
    int64_t p53 = (int64_t)1 << 53;
    sm_tensor *m =
        R(SM_OP_ReduceMax, axes_tensor(2, I64S(p53, p53 + 1)), NULL, NO_ATTRS);
    assert_true(((int64_t *)m->data)[0] == p53 + 1);
    sm_tensor_free(m);
    check(R(SM_OP_ReduceMax, tensor(BOOL, 1, D(3), V(0, 1, 0)), NULL, NO_ATTRS),
          BOOL, 1, D(1), V(1));
    check(
        R(SM_OP_ReduceMin, tensor(I32, 1, D(3), V(-4, 9, -7)), NULL, NO_ATTRS),
        I32, 1, D(1), V(-7));
    /* no maximum over an empty axis */
    R_fail(SM_OP_ReduceMax, tensor(F32, 2, D(2, 0), NULL), NULL, ATTRS(AXES(1)),
           SMELT_ERR_SHAPE, "ReduceMax|axis 1|size 0");
    R_fail(SM_OP_ReduceMin, tensor(F32, 2, D(0, 2), NULL), NULL, NO_ATTRS,
           SMELT_ERR_SHAPE, "ReduceMin|axis 0|size 0");
}

static void test_reduce_errors(void **state)
{
    (void)state;
    R_fail(SM_OP_ReduceSum, X23, NULL, ATTRS(AXES(2)), SMELT_ERR_SHAPE,
           "ReduceSum|axis 2|rank 2");
    R_fail(SM_OP_ReduceMean, X23, axes_tensor(1, I64S(-3)), NO_ATTRS,
           SMELT_ERR_SHAPE, "ReduceMean|axis -3|rank 2");
    R_fail(SM_OP_ReduceSum, X23, NULL, ATTRS(AXES(1, -1)),
           SMELT_ERR_INVALID_ARG, "ReduceSum|repeated");
    R_fail(SM_OP_ReduceSum, X23, axes_tensor(1, I64S(0)), ATTRS(AXES(1)),
           SMELT_ERR_INVALID_ARG, "ReduceSum|both");
    R_fail(SM_OP_ReduceSum, tensor(BOOL, 1, D(2), V(1, 0)), NULL, NO_ATTRS,
           SMELT_ERR_TYPE, "ReduceSum|bool");
    R_fail(SM_OP_ReduceSum, X23, tensor(F32, 1, D(1), V(0)), NO_ATTRS,
           SMELT_ERR_TYPE, "ReduceSum|axes|f32");
}

static void test_argmax(void **state)
{
    (void)state;
#define A23 tensor(F32, 2, D(2, 3), V(1, 3, 3, 7, 0, 7))
    check(R(SM_OP_ArgMax, A23, NULL, ATTRS(INT_ATTR("axis", 1))), I64, 2,
          D(2, 1), V(1, 0));
    check(R(SM_OP_ArgMax, A23, NULL,
            ATTRS(INT_ATTR("axis", 1), INT_ATTR("select_last_index", 1))),
          I64, 2, D(2, 1), V(2, 2));
    check(R(SM_OP_ArgMax, A23, NULL, ATTRS(KEEP(0))), I64, 1, D(3), V(1, 0, 1));
    check(R(SM_OP_ArgMax, A23, NULL, ATTRS(INT_ATTR("axis", -1), KEEP(0))), I64,
          1, D(2), V(1, 0));
#undef A23
    /* middle axis of [2,3,2] */
    check(R(SM_OP_ArgMax,
            tensor(I32, 3, D(2, 3, 2), V(0, 9, 5, 1, 2, 3, 4, 4, 8, 4, 1, 9)),
            NULL, ATTRS(INT_ATTR("axis", 1), KEEP(0))),
          I64, 2, D(2, 2), V(1, 0, 1, 2));
    /* nan is the largest, int64 compares exactly */
    check(R(SM_OP_ArgMax, tensor(F32, 1, D(4), V(1, NAN, 5, NAN)), NULL,
            NO_ATTRS),
          I64, 1, D(1), V(1));
    int64_t p53 = (int64_t)1 << 53;
    check(R(SM_OP_ArgMax, axes_tensor(3, I64S(p53, p53 + 1, p53)), NULL,
            ATTRS(KEEP(0))),
          I64, 0, NULL, V(1));
    R_fail(SM_OP_ArgMax, X23, NULL, ATTRS(INT_ATTR("axis", 2)), SMELT_ERR_SHAPE,
           "ArgMax|axis 2|rank 2");
    R_fail(SM_OP_ArgMax, tensor(F32, 2, D(2, 0), NULL), NULL,
           ATTRS(INT_ATTR("axis", 1)), SMELT_ERR_SHAPE, "ArgMax|size 0");
    R_fail(SM_OP_ArgMax, tensor(BOOL, 1, D(1), V(1)), NULL, NO_ATTRS,
           SMELT_ERR_TYPE, "ArgMax|bool");
}

/* A type whose dims are given by a string: "batch,3,?" or "*". */
static sm_type type_of(smelt_dtype dt, const char *dims)
{
    sm_type t;
    sm_type_unknown(&t);
    t.dtype = dt;
    if (*dims == '*')
        return t;
    t.ndim = 0;
    for (const char *p = dims; *p; p += *p == ',') {
        sm_dim *d = &t.dims[t.ndim++];
        *d = (sm_dim){-1, NULL};
        if (strncmp(p, "batch", 5) == 0)
            d->sym = "batch";
        else if (*p != '?')
            d->size = strtoll(p, NULL, 10);
        p += strcspn(p, ",");
    }
    return t;
}

/* Infers op's output from x's type and an axes input (type only, data
 * unknown, when axes is not NULL) and compares its text form with want;
 * want starting with '!' names the expected failure's message word. */
static void infer(sm_op op, sm_type x, const sm_type *axes, const sm_attr *at,
                  int n_at, const char *want)
{
    const sm_op_info *info = sm_op_info_get(op);
    sm_operand opnd[2] = {{1, &x, NULL}, {1, axes, NULL}};
    sm_type out;
    sm_type_unknown(&out);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_shape_ctx s = {info,
                      {at, n_at, info->spec, info->n_spec},
                      axes ? 2 : 1,
                      opnd,
                      1,
                      &out,
                      NULL,
                      ctx};
    smelt_status st = info->shape(&s);
    if (want[0] == '!') {
        assert_int_not_equal(st, SMELT_OK);
        assert_non_null(strstr(smelt_ctx_error(ctx), want + 1));
    } else {
        if (st != SMELT_OK)
            fail_msg("%s: %s", info->name, smelt_ctx_error(ctx));
        char buf[128];
        sm_type_str(&out, buf, sizeof buf);
        assert_string_equal(buf, want);
    }
    smelt_ctx_free(ctx);
}

static void test_infer_reduce(void **state)
{
    (void)state;
    sm_type x = type_of(F32, "batch,3,4");
    infer(SM_OP_ReduceSum, x, NULL, ATTRS(AXES(1), KEEP(0)), "f32[batch,4]");
    infer(SM_OP_ReduceMax, x, NULL, ATTRS(AXES(-1)), "f32[batch,3,1]");
    infer(SM_OP_ReduceMean, x, NULL, ATTRS(AXES(0), KEEP(0)), "f32[3,4]");
    infer(SM_OP_ReduceMin, x, NULL, NO_ATTRS, "f32[1,1,1]");
    infer(SM_OP_ReduceSum, x, NULL, ATTRS(NOOP(1)), "f32[batch,3,4]");
    infer(SM_OP_ReduceSum, type_of(F32, "*"), NULL, ATTRS(AXES(1)), "f32[*]");
    /* axes as an input whose data is unknown */
    sm_type ax1 = type_of(I64, "1"), ax2 = type_of(I64, "2");
    sm_type ax_unknown = type_of(I64, "?"), ax0 = type_of(I64, "0");
    infer(SM_OP_ReduceSum, type_of(F32, "batch,1,4"), &ax1, NO_ATTRS,
          "f32[?,1,?]");
    infer(SM_OP_ReduceSum, x, &ax2, ATTRS(KEEP(0)), "f32[*]");
    infer(SM_OP_ReduceSum, x, &ax_unknown, ATTRS(KEEP(0)), "f32[*]");
    infer(SM_OP_ReduceSum, x, &ax_unknown, NO_ATTRS, "f32[?,?,?]");
    infer(SM_OP_ReduceSum, x, &ax0, ATTRS(KEEP(0)), "f32[]");
    infer(SM_OP_ReduceSum, x, &ax0, ATTRS(NOOP(1)), "f32[batch,3,4]");
    infer(SM_OP_ReduceSum, x, NULL, ATTRS(AXES(3)), "!axis 3");
    infer(SM_OP_ArgMax, type_of(F32, "batch,5"), NULL,
          ATTRS(INT_ATTR("axis", 1), KEEP(0)), "i64[batch]");
    infer(SM_OP_ArgMax, type_of(F16, "batch,5"), NULL, NO_ATTRS, "i64[1,5]");
    infer(SM_OP_ArgMax, type_of(F32, "*"), NULL, NO_ATTRS, "i64[*]");
}

static void test_cost_reduce(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_tensor *out;
    sm_cost c = {-1, -1, -1};
    double v[32] = {0};
    assert_int_equal(reduce(ctx, SM_OP_ReduceSum, tensor(F32, 2, D(4, 8), v),
                            NULL, ATTRS(AXES(1), KEEP(0)), &out, &c),
                     SMELT_OK);
    assert_true(c.flops == 32 && c.bytes_read == 128 && c.bytes_write == 16);
    sm_tensor_free(out);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_sum),
        cmocka_unit_test(test_reduce_mean),
        cmocka_unit_test(test_reduce_max_min),
        cmocka_unit_test(test_reduce_errors),
        cmocka_unit_test(test_argmax),
        cmocka_unit_test(test_infer_reduce),
        cmocka_unit_test(test_cost_reduce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
