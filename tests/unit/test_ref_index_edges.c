/*
 * test_ref_index_edges.c - the indexing, gathering and sequence ops (the
 * ops.def section of that name): what tests/ops' generated cases do not
 * reach. Error paths of the shape functions (bad indices, k, scales,
 * shapes, attributes: right status, a message naming the op and the
 * values), the kernels' own re-checks when called without their shape
 * function, inference with symbolic and unknown dims, outputs sized from
 * values, a few hand-computed values, and allocation failures.
 */
#include "test_ref_movement.h"

#include "core/alloc.h"

#define F(n, ...) tf(F32, 1, D(n), V(__VA_ARGS__))
#define NO_DATA NULL

/* A zero-filled tensor. */
static sm_tensor *zeros(smelt_dtype dt, int ndim, const int64_t *dims)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(NULL, dt, ndim, dims, &t), SMELT_OK);
    return t;
}

/* Calls op's kernel directly (no shape function) on in[] with the
 * preallocated outputs out[]; expects status want and words. Frees
 * nothing. */
static void kernel_fail(sm_op op, const sm_attr *at, int n_at, int n_in,
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

static void free_all(int n, sm_tensor **t)
{
    for (int i = 0; i < n; i++)
        sm_tensor_free(t[i]);
}

static void test_gatherelements(void **state)
{
    (void)state;
    sm_op op = SM_OP_GatherElements;
    /* [[1,2],[3,4]] along axis 1 with [[0,0],[1,0]]: [[1,1],[4,3]] */
    expect(run1(op, ATTRS(a_int("axis", 1)),
                INS(tf(F32, 2, D(2, 2), V(1, 2, 3, 4)),
                    ti(I64, 2, D(2, 2), D(0, 0, 1, 0)))),
           F32, 2, D(2, 2), V(1, 1, 4, 3), 0);
    run_fail(op, ATTRS(a_int("axis", 1)),
             INS(iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(0, 3))), 1,
             SMELT_ERR_INVALID_ARG, "index 3|element 1|axis 1 of size 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(-3, 0))),
             1, SMELT_ERR_INVALID_ARG, "index -3|axis 0 of size 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), ti(I64, 1, D(2), D(0, 1))), 1,
             SMELT_ERR_SHAPE, "rank 1|rank 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(I64, 2, D(1, 4))), 1,
             SMELT_ERR_SHAPE, "indices dim 1 is 4|data's 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(F32, 2, D(1, 3))), 1,
             SMELT_ERR_TYPE, "indices must be i32 or i64|f32");
    run_fail(op, ATTRS(a_int("axis", 2)),
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(1, 3))), 1, SMELT_ERR_SHAPE,
             "axis 2");
    /* the kernel re-checks what the shape function would have refused */
    sm_tensor *in[2] = {iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(0, 7))};
    sm_tensor *y = iota(2, D(1, 2));
    kernel_fail(op, ATTRS(a_int("axis", 1)), 2, in, 1, &y, SMELT_ERR_RUNTIME,
                "index 7|size 3");
    free_all(2, in);
    sm_tensor_free(y);
    infer(op, ATTRS(a_int("axis", 1)), 2, TYPES("f32[n,4]", "i64[n,2]"),
          NO_DATA, 1, "f32[n,2]");
    infer(op, NO_ATTRS, 2, TYPES("f32[*]", "i32[3,k]"), NO_DATA, 1, "f32[3,k]");
    infer_fail(op, NO_ATTRS, 2, TYPES("f32[*]", "i64[]"), NO_DATA,
               SMELT_ERR_SHAPE, "indices must have rank 1 or more");
}

static void test_gathernd(void **state)
{
    (void)state;
    sm_op op = SM_OP_GatherND;
    /* [[0,1],[2,3]] at (1,0) and (0,1): [2, 1] */
    expect(run1(op, NO_ATTRS,
                INS(tf(F32, 2, D(2, 2), V(0, 1, 2, 3)),
                    ti(I64, 2, D(2, 2), D(1, 0, 0, 1)))),
           F32, 1, D(2), V(2, 1), 0);
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(1, 3))),
             1, SMELT_ERR_INVALID_ARG, "index 3|element 1|axis 1 of size 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(I64, 2, D(1, 3))), 1,
             SMELT_ERR_SHAPE, "tuples of 3 values|rank 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), zeros(I32, 2, D(1, 2))), 1,
             SMELT_ERR_TYPE, "indices must be i64, got i32");
    run_fail(op, ATTRS(a_int("batch_dims", 2)),
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(2, 1))), 1,
             SMELT_ERR_INVALID_ARG, "batch_dims 2");
    run_fail(op, ATTRS(a_int("batch_dims", 1)),
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(3, 1))), 1, SMELT_ERR_SHAPE,
             "batch dim of indices is 3|2");
    /* batch index 1 picks row 1 of data: element (1, 2) = 5 */
    expect(run1(op, ATTRS(a_int("batch_dims", 1)),
                INS(iota(2, D(2, 3)), ti(I64, 2, D(2, 1), D(0, 2)))),
           F32, 1, D(2), V(0, 5), 0);
    sm_tensor *in[2] = {iota(2, D(2, 3)), ti(I64, 2, D(1, 2), D(2, 0))};
    sm_tensor *y = iota(1, D(1));
    kernel_fail(op, NO_ATTRS, 2, in, 1, &y, SMELT_ERR_RUNTIME,
                "index 2|axis 0 of size 2");
    free_all(2, in);
    sm_tensor_free(y);
    infer(op, ATTRS(a_int("batch_dims", 1)), 2,
          TYPES("f32[b,3,4]", "i64[b,5,2]"), NO_DATA, 1, "f32[b,5]");
    infer(op, NO_ATTRS, 2, TYPES("f32[b,3,4]", "i64[7,1]"), NO_DATA, 1,
          "f32[7,3,4]");
    infer(op, NO_ATTRS, 2, TYPES("f32[b,3,4]", "i64[7,m]"), NO_DATA, 1,
          "f32[*]");
}

static void test_scatterelements(void **state)
{
    (void)state;
    sm_op op = SM_OP_ScatterElements;
    /* zeros[1,4], add 1 and 2 both at index 1, 5 at index 3 */
    expect(run1(op, ATTRS(a_int("axis", 1), a_str("reduction", "add")),
                INS(zeros(F32, 2, D(1, 4)), ti(I64, 2, D(1, 3), D(1, 1, 3)),
                    tf(F32, 2, D(1, 3), V(1, 2, 5)))),
           F32, 2, D(1, 4), V(0, 3, 0, 5), 0);
    /* int64 stays exact under mul */
    expect_i(run1(op, ATTRS(a_str("reduction", "mul")),
                  INS(ti(I64, 1, D(2), D(1LL << 40, 3)), ti(I64, 1, D(1), D(0)),
                      ti(I64, 1, D(1), D(1LL << 20)))),
             I64, 1, D(2), D(1LL << 60, 3));
    run_fail(op, ATTRS(a_int("axis", 1)),
             INS(iota(2, D(2, 2)), ti(I64, 2, D(1, 1), D(2)), iota(2, D(1, 1))),
             1, SMELT_ERR_INVALID_ARG, "index 2|axis 1 of size 2");
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 2)), zeros(I64, 2, D(1, 2)), iota(2, D(2, 1))), 1,
             SMELT_ERR_SHAPE, "dim of updates is 2|1");
    run_fail(op, ATTRS(a_str("reduction", "sub")),
             INS(iota(1, D(2)), zeros(I64, 1, D(1)), iota(1, D(1))), 1,
             SMELT_ERR_INVALID_ARG, "unknown reduction 'sub'");
    run_fail(op, NO_ATTRS,
             INS(iota(1, D(2)), zeros(I64, 1, D(1)), zeros(I64, 1, D(1))), 1,
             SMELT_ERR_TYPE, "updates is i64|data is f32");
    run_fail(SM_OP_Scatter, NO_ATTRS,
             INS(iota(1, D(2)), ti(I64, 1, D(1), D(-3)), iota(1, D(1))), 1,
             SMELT_ERR_INVALID_ARG, "Scatter: index -3");
    sm_tensor *in[3] = {iota(1, D(2)), ti(I64, 1, D(1), D(5)), iota(1, D(1))};
    sm_tensor *y = iota(1, D(2));
    kernel_fail(op, NO_ATTRS, 3, in, 1, &y, SMELT_ERR_RUNTIME, "index 5");
    free_all(3, in);
    sm_tensor_free(y);
    infer(op, NO_ATTRS, 3, TYPES("f32[n,3]", "i64[k,3]", "f32[k,3]"), NO_DATA,
          1, "f32[n,3]");
}

static void test_scatternd(void **state)
{
    (void)state;
    sm_op op = SM_OP_ScatterND;
    /* [[0,1],[2,3]], (1,0) becomes 9 and (0,1) max'ed with 0 */
    expect(run1(op, ATTRS(a_str("reduction", "max")),
                INS(tf(F32, 2, D(2, 2), V(0, 1, 2, 3)),
                    ti(I64, 2, D(2, 2), D(1, 0, 0, 1)), F(2, 9, 0))),
           F32, 2, D(2, 2), V(0, 1, 9, 3), 0);
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 3)), ti(I64, 2, D(2, 2), D(0, 1, 1, -4)),
                 iota(1, D(2))),
             1, SMELT_ERR_INVALID_ARG, "index -4|element 3|axis 1 of size 3");
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(2, 1)), iota(1, D(2))), 1,
             SMELT_ERR_SHAPE, "updates have rank 1|need 2");
    run_fail(op, NO_ATTRS,
             INS(iota(2, D(2, 3)), zeros(I64, 2, D(2, 1)), iota(2, D(2, 4))), 1,
             SMELT_ERR_SHAPE, "dim of updates is 4|3");
    run_fail(op, NO_ATTRS,
             INS(iota(1, D(3)), zeros(I64, 2, D(1, 2)), iota(1, D(1))), 1,
             SMELT_ERR_SHAPE, "tuples of 2 values|rank 1");
    sm_tensor *in[3] = {iota(1, D(3)), ti(I64, 2, D(1, 1), D(3)),
                        iota(1, D(1))};
    sm_tensor *y = iota(1, D(3));
    kernel_fail(op, NO_ATTRS, 3, in, 1, &y, SMELT_ERR_RUNTIME,
                "index 3|axis 0 of size 3");
    free_all(3, in);
    sm_tensor_free(y);
}

static void test_topk(void **state)
{
    (void)state;
    sm_op op = SM_OP_TopK;
    sm_tensor *out[2];
    smelt_ctx_t *ctx = smelt_ctx_init();
    /* NaN sorts above every number; ties keep the lower index first */
    assert_int_equal(
        run(ctx, op, NO_ATTRS, INS(F(5, 1, NAN, 3, 3, -1), L(1, 3)), 2, out),
        SMELT_OK);
    assert_true(isnan(((float *)out[0]->data)[0]));
    assert_true(((float *)out[0]->data)[1] == 3 &&
                ((float *)out[0]->data)[2] == 3);
    sm_tensor_free(out[0]);
    expect_i(out[1], I64, 1, D(3), D(1, 2, 3));
    smelt_ctx_free(ctx);
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(1, -1)), 2,
             SMELT_ERR_INVALID_ARG, "k -1 is negative");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(1, 4)), 2,
             SMELT_ERR_INVALID_ARG, "k 4 exceeds|size 3 of axis 1");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), L(2, 1, 1)), 2,
             SMELT_ERR_SHAPE, "K must hold one element|has 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3)), F(1, 1)), 2, SMELT_ERR_TYPE,
             "K must be i32 or i64");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 3))), 2, SMELT_ERR_INVALID_ARG,
             "K is required");
    run_fail(op, ATTRS(a_int("axis", 2)), INS(iota(2, D(2, 3)), L(1, 1)), 2,
             SMELT_ERR_SHAPE, "axis 2");
    run_fail(op, NO_ATTRS, INS(tf(F32, 0, NULL, V(1)), L(1, 1)), 2,
             SMELT_ERR_SHAPE, "rank 1 or more");
    /* a kernel given outputs larger than the input */
    sm_tensor *in[2] = {iota(1, D(2)), L(1, 2)};
    sm_tensor *o2[2] = {iota(1, D(3)), zeros(I64, 1, D(3))};
    kernel_fail(op, NO_ATTRS, 2, in, 2, o2, SMELT_ERR_RUNTIME,
                "outputs do not match");
    free_all(2, in);
    free_all(2, o2);
    infer(op, NO_ATTRS, 2, TYPES("f32[n,10]", "i64[1]"), NO_DATA, 2,
          "f32[n,?]|i64[n,?]");
    infer(op, ATTRS(a_int("axis", 0)), 2, TYPES("f32[n,10]", "i64[1]"),
          DATA(NULL, L(1, 3)), 2, "f32[3,10]|i64[3,10]");
}

static void test_nonzero_compress(void **state)
{
    (void)state;
    /* [[0,2],[3,0]]: (0,1) and (1,0) */
    expect_i(
        run1(SM_OP_NonZero, NO_ATTRS, INS(tf(F32, 2, D(2, 2), V(0, 2, 3, 0)))),
        I64, 2, D(2, 2), D(0, 1, 1, 0));
    expect_i(run1(SM_OP_NonZero, NO_ATTRS, INS(tf(F32, 0, NULL, V(5)))), I64, 2,
             D(0, 1), NULL);
    infer(SM_OP_NonZero, NO_ATTRS, 1, TYPES("f32[n,3]"), NO_DATA, 1,
          "i64[2,?]");
    infer(SM_OP_NonZero, NO_ATTRS, 1, TYPES("bool[*]"), NO_DATA, 1, "i64[?,?]");
    sm_op op = SM_OP_Compress;
    run_fail(op, ATTRS(a_int("axis", 0)),
             INS(iota(2, D(2, 2)), ti(BOOL, 1, D(3), D(0, 0, 1))), 1,
             SMELT_ERR_INVALID_ARG, "entry 2 is true|only 2");
    run_fail(op, NO_ATTRS, INS(iota(1, D(2)), zeros(I64, 1, D(2))), 1,
             SMELT_ERR_TYPE, "condition must be bool");
    run_fail(op, ATTRS(a_int("axis", -3)),
             INS(iota(2, D(2, 2)), zeros(BOOL, 1, D(2))), 1, SMELT_ERR_SHAPE,
             "axis -3");
    /* trailing false entries past the axis are fine */
    expect(run1(op, ATTRS(a_int("axis", 1)),
                INS(iota(2, D(2, 2)), ti(BOOL, 1, D(4), D(0, 1, 0, 0)))),
           F32, 2, D(2, 1), V(1, 3), 0);
    infer(op, ATTRS(a_int("axis", 1)), 2, TYPES("f32[n,4]", "bool[4]"), NO_DATA,
          1, "f32[n,?]");
    infer(op, NO_ATTRS, 2, TYPES("f32[2,3]", "bool[4]"),
          DATA(NULL, ti(BOOL, 1, D(4), D(1, 0, 1, 1))), 1, "f32[3]");
}

static void test_onehot(void **state)
{
    (void)state;
    sm_op op = SM_OP_OneHot;
    run_fail(op, NO_ATTRS, INS(L(2, 0, 1), L(1, -2), F(2, 0, 1)), 1,
             SMELT_ERR_INVALID_ARG, "depth -2 is negative");
    run_fail(op, NO_ATTRS, INS(L(2, 0, 1), L(1, 2), F(3, 0, 1, 2)), 1,
             SMELT_ERR_SHAPE, "values must be [off, on]");
    run_fail(op, NO_ATTRS, INS(L(2, 0, 1), L(2, 2, 2), F(2, 0, 1)), 1,
             SMELT_ERR_SHAPE, "depth must hold one element");
    run_fail(op, ATTRS(a_int("axis", 2)), INS(L(2, 0, 1), L(1, 2), F(2, 0, 1)),
             1, SMELT_ERR_SHAPE, "axis 2");
    infer(op, ATTRS(a_int("axis", 1)), 3, TYPES("i64[n,3]", "i64[]", "f32[2]"),
          DATA(NULL, ti(I64, 0, NULL, D(5)), NULL), 1, "f32[n,5,3]");
    infer(op, NO_ATTRS, 3, TYPES("i64[n]", "i64[]", "i32[2]"), NO_DATA, 1,
          "i32[n,?]");
}

static void test_space(void **state)
{
    (void)state;
    run_fail(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 2)),
             INS(iota(4, D(1, 6, 1, 1))), 1, SMELT_ERR_SHAPE,
             "dim 1 of size 6|multiple of 4");
    run_fail(SM_OP_DepthToSpace,
             ATTRS(a_int("blocksize", 2), a_str("mode", "RDC")),
             INS(iota(4, D(1, 4, 1, 1))), 1, SMELT_ERR_INVALID_ARG,
             "unknown mode 'RDC'");
    run_fail(SM_OP_DepthToSpace, NO_ATTRS, INS(iota(4, D(1, 4, 1, 1))), 1,
             SMELT_ERR_INVALID_ARG, "blocksize is required");
    run_fail(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 0)),
             INS(iota(4, D(1, 4, 1, 1))), 1, SMELT_ERR_INVALID_ARG,
             "blocksize 0");
    run_fail(SM_OP_SpaceToDepth, ATTRS(a_int("blocksize", 2)),
             INS(iota(4, D(1, 1, 3, 2))), 1, SMELT_ERR_SHAPE,
             "dim 2 of size 3|multiple of 2");
    run_fail(SM_OP_SpaceToDepth, ATTRS(a_int("blocksize", 2)),
             INS(iota(3, D(1, 4, 4))), 1, SMELT_ERR_SHAPE, "rank 4");
    infer(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 2)), 1,
          TYPES("f32[n,8,h,3]"), NO_DATA, 1, "f32[n,2,?,6]");
    infer(SM_OP_SpaceToDepth, ATTRS(a_int("blocksize", 2)), 1,
          TYPES("f32[n,c,4,6]"), NO_DATA, 1, "f32[n,?,2,3]");
    /* the kernel refuses an output that does not fit */
    sm_tensor *x = iota(4, D(1, 4, 1, 1)), *y = iota(4, D(1, 4, 1, 1));
    kernel_fail(SM_OP_DepthToSpace, ATTRS(a_int("blocksize", 2)), 1, &x, 1, &y,
                SMELT_ERR_RUNTIME, "does not match");
    sm_tensor_free(x);
    sm_tensor_free(y);
}

static void test_cumsum_trilu_eyelike(void **state)
{
    (void)state;
    /* exclusive reverse of [1,2,3]: [5,3,0]; int64 exact near 2^62 */
    expect(run1(SM_OP_CumSum, ATTRS(a_int("exclusive", 1), a_int("reverse", 1)),
                INS(F(3, 1, 2, 3), ti(I32, 0, NULL, D(0)))),
           F32, 1, D(3), V(5, 3, 0), 0);
    expect_i(run1(SM_OP_CumSum, NO_ATTRS,
                  INS(ti(I64, 1, D(2), D((1LL << 62) + 1, 1)),
                      ti(I64, 0, NULL, D(-1)))),
             I64, 1, D(2), D((1LL << 62) + 1, (1LL << 62) + 2));
    run_fail(SM_OP_CumSum, NO_ATTRS, INS(F(3, 1, 2, 3), L(1, 1)), 1,
             SMELT_ERR_SHAPE, "axis 1");
    run_fail(SM_OP_CumSum, NO_ATTRS, INS(F(3, 1, 2, 3), F(1, 0)), 1,
             SMELT_ERR_TYPE, "axis must be i32 or i64");
    run_fail(SM_OP_CumSum, NO_ATTRS, INS(ti(BOOL, 1, D(2), D(1, 1)), L(1, 0)),
             1, SMELT_ERR_TYPE, "not bool");
    run_fail(SM_OP_Trilu, NO_ATTRS, INS(F(3, 1, 2, 3)), 1, SMELT_ERR_SHAPE,
             "rank 2 or more");
    run_fail(SM_OP_Trilu, NO_ATTRS, INS(iota(2, D(2, 2)), L(2, 1, 1)), 1,
             SMELT_ERR_SHAPE, "k must hold one element");
    /* k far past the matrix: everything (lower) or nothing (upper) */
    expect(run1(SM_OP_Trilu, ATTRS(a_int("upper", 0)),
                INS(iota(2, D(2, 2)), L(1, INT64_MAX))),
           F32, 2, D(2, 2), V(0, 1, 2, 3), 0);
    expect(run1(SM_OP_Trilu, NO_ATTRS, INS(iota(2, D(2, 2)), L(1, INT64_MAX))),
           F32, 2, D(2, 2), V(0, 0, 0, 0), 0);
    infer(SM_OP_Trilu, NO_ATTRS, 1, TYPES("f32[b,n,n]"), NO_DATA, 1,
          "f32[b,n,n]");
    run_fail(SM_OP_EyeLike, NO_ATTRS, INS(iota(3, D(1, 2, 2))), 1,
             SMELT_ERR_SHAPE, "rank 2");
    run_fail(SM_OP_EyeLike, ATTRS(a_int("dtype", 8)), INS(iota(2, D(2, 2))), 1,
             SMELT_ERR_UNSUPPORTED, "dtype 8");
    expect_i(run1(SM_OP_EyeLike, ATTRS(a_int("dtype", 7), a_int("k", -1)),
                  INS(iota(2, D(3, 2)))),
             I64, 2, D(3, 2), D(0, 0, 1, 0, 0, 1));
    infer(SM_OP_EyeLike, ATTRS(a_int("dtype", 9)), 1, TYPES("f32[n,m]"),
          NO_DATA, 1, "bool[n,m]");
    expect_i(run1(SM_OP_Size, NO_ATTRS, INS(iota(3, D(2, 3, 4)))), I64, 0, NULL,
             D(24));
    infer(SM_OP_Size, NO_ATTRS, 1, TYPES("f32[*]"), NO_DATA, 1, "i64[]");
}

static void test_reversesequence(void **state)
{
    (void)state;
    sm_op op = SM_OP_ReverseSequence;
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(2, 4, 1)), 1,
             SMELT_ERR_INVALID_ARG, "length 4 of batch 0|[0, 3]");
    run_fail(op, ATTRS(a_int("batch_axis", 0)),
             INS(iota(2, D(3, 2)), L(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "batch_axis 0 and time_axis 0");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), L(3, 1, 1, 1)), 1,
             SMELT_ERR_SHAPE, "sequence_lens is 3|batch dim is 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(3, 2)), F(2, 1, 1)), 1, SMELT_ERR_TYPE,
             "sequence_lens must be i32 or i64");
    sm_tensor *in[2] = {iota(2, D(3, 2)), L(2, -1, 1)};
    sm_tensor *y = iota(2, D(3, 2));
    kernel_fail(op, NO_ATTRS, 2, in, 1, &y, SMELT_ERR_RUNTIME,
                "length -1 of batch 0");
    free_all(2, in);
    sm_tensor_free(y);
}

static void test_unique(void **state)
{
    (void)state;
    sm_op op = SM_OP_Unique;
    sm_tensor *out[4];
    smelt_ctx_t *ctx = smelt_ctx_init();
    /* [2, nan, 1, 2, nan]: NaNs are one value, sorted last */
    assert_int_equal(
        run(ctx, op, NO_ATTRS, INS(F(5, 2, NAN, 1, 2, NAN)), 4, out), SMELT_OK);
    assert_int_equal(out[0]->numel, 3);
    assert_true(((float *)out[0]->data)[0] == 1 &&
                ((float *)out[0]->data)[1] == 2 &&
                isnan(((float *)out[0]->data)[2]));
    sm_tensor_free(out[0]);
    expect_i(out[1], I64, 1, D(3), D(2, 0, 1));
    expect_i(out[2], I64, 1, D(5), D(1, 2, 0, 1, 2));
    expect_i(out[3], I64, 1, D(3), D(1, 2, 2));
    smelt_ctx_free(ctx);
    run_fail(op, ATTRS(a_int("axis", 2)), INS(iota(2, D(2, 2))), 1,
             SMELT_ERR_SHAPE, "axis 2");
    infer(op, NO_ATTRS, 1, TYPES("f32[2,3]"), NO_DATA, 4,
          "f32[?]|i64[?]|i64[6]|i64[?]");
    infer(op, ATTRS(a_int("axis", 1)), 1, TYPES("f32[n,k]"), NO_DATA, 3,
          "f32[n,?]|i64[?]|i64[k]");
    infer(op, ATTRS(a_int("axis", 0)), 1, TYPES("i64[3,2]"),
          DATA(ti(I64, 2, D(3, 2), D(1, 2, 3, 4, 1, 2))), 2, "i64[2,2]|i64[2]");
}

static void test_resize(void **state)
{
    (void)state;
    sm_op op = SM_OP_Resize;
    /* linear, half_pixel, [1,3] up 2x: (x+0.5)/2-0.5 = -.25 .25 .75 1.25 */
    expect(run1(op, ATTRS(a_str("mode", "linear")),
                INS(tf(F32, 2, D(1, 2), V(1, 3)), NULL, F(2, 1, 2))),
           F32, 2, D(1, 4), V(1, 1.5, 2.5, 3), 1e-6);
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, 0)), 1,
             SMELT_ERR_INVALID_ARG, "scale 0 of axis 1|positive");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, -1, 2)), 1,
             SMELT_ERR_INVALID_ARG, "scale -1 of axis 0");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, NAN)), 1,
             SMELT_ERR_INVALID_ARG, "scale nan");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, INFINITY)), 1,
             SMELT_ERR_INVALID_ARG, "scale inf");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(3, 1, 1, 2)), 1,
             SMELT_ERR_INVALID_ARG, "3 scales|rank 2");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, 2), L(2, 2, 4)),
             1, SMELT_ERR_INVALID_ARG, "scales or sizes, not both");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2))), 1, SMELT_ERR_INVALID_ARG,
             "needs scales or sizes");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, NULL, L(2, 2, -4)), 1,
             SMELT_ERR_INVALID_ARG, "size -4 of axis 1");
    run_fail(op, NO_ATTRS, INS(zeros(F32, 2, D(0, 2)), NULL, NULL, L(2, 3, 2)),
             1, SMELT_ERR_INVALID_ARG, "empty axis 0 to 3");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, NULL, F(2, 2, 2)), 1,
             SMELT_ERR_TYPE, "sizes must be i64");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, L(2, 1, 1)), 1,
             SMELT_ERR_TYPE, "scales must be a float tensor");
    run_fail(op, ATTRS(a_str("mode", "area")),
             INS(iota(2, D(2, 2)), NULL, F(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "unknown mode 'area'");
    run_fail(op, ATTRS(a_str("coordinate_transformation_mode", "corner")),
             INS(iota(2, D(2, 2)), NULL, F(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "coordinate_transformation_mode 'corner'");
    run_fail(op, ATTRS(a_str("nearest_mode", "round")),
             INS(iota(2, D(2, 2)), NULL, F(2, 1, 1)), 1, SMELT_ERR_INVALID_ARG,
             "nearest_mode 'round'");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 1, 3e18)), 1,
             SMELT_ERR_LIMIT, "overflows");
    run_fail(op, NO_ATTRS, INS(iota(2, D(2, 2)), NULL, F(2, 3e5, 3e5)), 1,
             SMELT_ERR_LIMIT, "output");
    run_fail(
        op,
        ATTRS(a_str("coordinate_transformation_mode", "tf_crop_and_resize")),
        INS(iota(2, D(2, 2)), F(2, 0, 1), NULL, L(2, 2, 2)), 1,
        SMELT_ERR_INVALID_ARG, "roi must hold 4 floats");
    infer(op, NO_ATTRS, 3, TYPES("f32[n,3,8,8]", NULL, "f32[4]"),
          DATA(NULL, NULL, F(4, 1, 1, 2, 0.5)), 1, "f32[n,3,16,4]");
    infer(op, NO_ATTRS, 4, TYPES("f32[n,3,8,8]", NULL, NULL, "i64[4]"),
          DATA(NULL, NULL, NULL, L(4, 1, 3, 5, 5)), 1, "f32[1,3,5,5]");
    infer(op, NO_ATTRS, 3, TYPES("f32[n,3,8,8]", NULL, "f32[4]"), NO_DATA, 1,
          "f32[?,?,?,?]");
    /* an empty scales input beside unknown sizes: sizes decide */
    infer(op, NO_ATTRS, 4, TYPES("f32[n,3,8,8]", NULL, "f32[0]", "i64[4]"),
          NO_DATA, 1, "f32[?,?,?,?]");
    sm_op up = SM_OP_Upsample;
    run_fail(up, ATTRS(a_str("mode", "cubic")),
             INS(iota(2, D(2, 2)), F(2, 1, 2)), 1, SMELT_ERR_INVALID_ARG,
             "unknown mode 'cubic'|nearest, linear");
    run_fail(up, NO_ATTRS, INS(iota(2, D(2, 2))), 1, SMELT_ERR_INVALID_ARG,
             "Upsample: needs scales");
    run_fail(up, ATTRS(a_floats("scales", 2, V(1, 0.0))), INS(iota(2, D(2, 2))),
             1, SMELT_ERR_INVALID_ARG, "scale 0 of axis 1");
    /* nearest, asymmetric, floor: [1,2] x1.5 reads 0 0 1 */
    expect(run1(up, NO_ATTRS, INS(F(2, 1, 2), F(1, 1.5))), F32, 1, D(3),
           V(1, 1, 2), 0);
    /* a kernel given scales that disagree with its output */
    sm_tensor *in[3] = {iota(2, D(2, 2)), NULL, F(2, 1, 2)};
    sm_tensor *y = iota(2, D(2, 2));
    kernel_fail(op, NO_ATTRS, 3, in, 1, &y, SMELT_ERR_RUNTIME,
                "does not match the resized input");
    sm_tensor_free(in[0]);
    sm_tensor_free(in[2]);
    sm_tensor_free(y);
}

static void test_rnn(void **state)
{
    (void)state;
    /* RNN, H = I = 1, W = 1, R = 0.5, no bias: h1 = tanh(1), h2 =
     * tanh(2 + 0.5 h1) */
    double h1 = tanh(1.0), h2 = tanh(2.0 + 0.5 * tanh(1.0));
    sm_tensor *out[3];
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_equal(
        run(ctx, SM_OP_RNN, NO_ATTRS,
            INS(tf(F32, 3, D(2, 1, 1), V(1, 2)), tf(F32, 3, D(1, 1, 1), V(1)),
                tf(F32, 3, D(1, 1, 1), V(0.5))),
            2, out),
        SMELT_OK);
    expect(out[0], F32, 4, D(2, 1, 1, 1), V(h1, h2), 1e-6);
    expect(out[1], F32, 3, D(1, 1, 1), V(h2), 1e-6);
    smelt_ctx_free(ctx);
    sm_op op = SM_OP_GRU;
    run_fail(op, ATTRS(a_str("direction", "sideways")),
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_INVALID_ARG, "unknown direction 'sideways'");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 4, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "dim 1 of W is 4|expected 3");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 2)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "input size is 1|2");
    run_fail(op, ATTRS(a_str("direction", "bidirectional")),
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "direction dim of W is 1|expected 2");
    run_fail(op, ATTRS(a_int("hidden_size", 2)),
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_SHAPE, "hidden size");
    const char *bad[] = {"Sigmoid", "Cube"};
    sm_attr acts = {.name = "activations", .kind = SM_ATTR_STRINGS, .n = 2};
    acts.v.strs = bad;
    run_fail(op, &acts, 1,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_INVALID_ARG, "unknown activation 'Cube'");
    acts.n = 1;
    run_fail(op, &acts, 1,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1))),
             2, SMELT_ERR_INVALID_ARG, "name 2 functions|has 1");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 3, 1)), iota(3, D(1, 3, 1)),
                 NULL, ti(I32, 1, D(1), D(3))),
             2, SMELT_ERR_INVALID_ARG, "length 3 of batch 0|[0, 2]");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), zeros(I64, 3, D(1, 3, 1)),
                 iota(3, D(1, 3, 1))),
             2, SMELT_ERR_TYPE, "W is i64|X is f32");
    run_fail(SM_OP_LSTM, NO_ATTRS,
             INS(iota(3, D(2, 1, 1)), iota(3, D(1, 4, 1)), iota(3, D(1, 4, 1)),
                 NULL, NULL, NULL, NULL, iota(2, D(1, 2))),
             3, SMELT_ERR_SHAPE, "dim 1 of P is 2|expected 3");
    infer(op, NO_ATTRS, 3,
          TYPES("f32[seq,batch,4]", "f32[1,9,4]", "f32[1,9,3]"), NO_DATA, 2,
          "f32[seq,1,batch,3]|f32[1,batch,3]");
    infer(SM_OP_LSTM,
          ATTRS(a_int("layout", 1), a_str("direction", "bidirectional")), 3,
          TYPES("f32[b,s,4]", "f32[*]", "f32[*]"), NO_DATA, 3,
          "f32[b,s,2,?]|f32[b,2,?]|f32[b,2,?]");
    /* the kernel alone re-checks the shapes */
    sm_tensor *in[3] = {iota(3, D(2, 1, 1)), iota(3, D(1, 3, 2)),
                        iota(3, D(1, 3, 1))};
    sm_tensor *o[2] = {iota(4, D(2, 1, 1, 1)), iota(3, D(1, 1, 1))};
    kernel_fail(op, NO_ATTRS, 3, in, 2, o, SMELT_ERR_RUNTIME,
                "shapes do not agree");
    free_all(3, in);
    free_all(2, o);
}

static void test_nms_roialign(void **state)
{
    (void)state;
    sm_op op = SM_OP_NonMaxSuppression;
    sm_tensor *boxes = tf(F32, 3, D(1, 2, 4), V(0, 0, 1, 1, 0, 0, 1, 1));
    sm_tensor *scores = tf(F32, 3, D(1, 1, 2), V(0.5, 0.7));
    /* identical boxes: the better second one suppresses the first */
    expect_i(
        run1(op, NO_ATTRS, INS(boxes, scores, L(1, 5), F(1, 0.5), F(1, 0))),
        I64, 2, D(1, 3), D(0, 0, 1));
    run_fail(op, ATTRS(a_int("center_point_box", 2)),
             INS(iota(3, D(1, 2, 4)), iota(3, D(1, 1, 2))), 1,
             SMELT_ERR_INVALID_ARG, "center_point_box 2");
    run_fail(op, NO_ATTRS, INS(iota(3, D(1, 2, 3)), iota(3, D(1, 1, 2))), 1,
             SMELT_ERR_SHAPE, "last dim of boxes is 3");
    run_fail(op, NO_ATTRS, INS(iota(3, D(1, 2, 4)), iota(3, D(1, 1, 3))), 1,
             SMELT_ERR_SHAPE, "box dim of boxes is 2|3");
    run_fail(op, NO_ATTRS,
             INS(iota(3, D(1, 2, 4)), iota(3, D(1, 1, 2)), L(2, 1, 1)), 1,
             SMELT_ERR_SHAPE, "max_output_boxes_per_class must hold one");
    infer(op, NO_ATTRS, 2, TYPES("f32[b,n,4]", "f32[b,c,n]"), NO_DATA, 1,
          "i64[?,3]");
    sm_op ra = SM_OP_RoiAlign;
    run_fail(ra, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(1, 4)), L(1, 1)), 1,
             SMELT_ERR_INVALID_ARG, "index 1|axis 0 of size 1");
    run_fail(ra, ATTRS(a_str("mode", "sum")),
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(1, 4)), L(1, 0)), 1,
             SMELT_ERR_INVALID_ARG, "unknown mode 'sum'");
    run_fail(ra, ATTRS(a_int("output_height", 0)),
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(1, 4)), L(1, 0)), 1,
             SMELT_ERR_INVALID_ARG, "output_height 0");
    run_fail(ra, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), iota(2, D(2, 4)), L(1, 0)), 1,
             SMELT_ERR_SHAPE, "length of batch_indices is 1|2");
    /* a huge ROI with adaptive sampling is refused, not allocated */
    run_fail(ra, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)),
                 tf(F32, 2, D(1, 4), V(0, 0, 1e30, 1e30)), L(1, 0)),
             1, SMELT_ERR_LIMIT, "samples per bin");
    /* the whole 2x2 map [[0,1],[2,3]] as one bin, 2x2 samples at 0.5 and
     * 1.5 (output_half_pixel): 1.5, 2, 2.5 and 3 (1.5 clamps to the last
     * row or column), mean 2.25 */
    expect(
        run1(ra,
             ATTRS(a_str("coordinate_transformation_mode", "output_half_pixel"),
                   a_int("sampling_ratio", 2)),
             INS(iota(4, D(1, 1, 2, 2)), tf(F32, 2, D(1, 4), V(0, 0, 2, 2)),
                 L(1, 0))),
        F32, 4, D(1, 1, 1, 1), V(2.25), 1e-6);
    infer(ra, ATTRS(a_int("output_height", 2), a_int("output_width", 3)), 3,
          TYPES("f32[n,c,h,w]", "f32[r,4]", "i64[r]"), NO_DATA, 1,
          "f32[r,c,2,3]");
}

static void test_gridsample_maxunpool(void **state)
{
    (void)state;
    sm_op op = SM_OP_GridSample;
    /* a 2x2 map [[0,1],[2,3]] at its center (0, 0) with align_corners:
     * the mean 1.5; at (1, -1), the top-right corner, 1 */
    expect(run1(op, ATTRS(a_int("align_corners", 1)),
                INS(iota(4, D(1, 1, 2, 2)),
                    tf(F32, 4, D(1, 1, 2, 2), V(0, 0, 1, -1)))),
           F32, 4, D(1, 1, 1, 2), V(1.5, 1), 1e-6);
    /* far outside with zeros padding reads zeros; NaN stays in range */
    sm_tensor *t = run1(op, ATTRS(a_str("mode", "bicubic")),
                        INS(iota(4, D(1, 1, 2, 2)),
                            tf(F32, 4, D(1, 1, 2, 2), V(1e30, -1e30, NAN, 0))));
    assert_true(((float *)t->data)[0] == 0);
    sm_tensor_free(t);
    run_fail(op, ATTRS(a_str("mode", "area")),
             INS(iota(4, D(1, 1, 2, 2)), zeros(F32, 4, D(1, 1, 1, 2))), 1,
             SMELT_ERR_INVALID_ARG, "unknown mode 'area'");
    run_fail(op, ATTRS(a_str("padding_mode", "wrap")),
             INS(iota(4, D(1, 1, 2, 2)), zeros(F32, 4, D(1, 1, 1, 2))), 1,
             SMELT_ERR_INVALID_ARG, "padding_mode 'wrap'");
    run_fail(op, NO_ATTRS,
             INS(iota(5, D(1, 1, 2, 2, 2)), zeros(F32, 5, D(1, 1, 1, 1, 3))), 1,
             SMELT_ERR_UNSUPPORTED, "rank 5|only 4-D");
    run_fail(op, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), zeros(F32, 4, D(1, 1, 1, 3))), 1,
             SMELT_ERR_SHAPE, "last dim of grid is 3");
    run_fail(op, NO_ATTRS,
             INS(iota(4, D(1, 1, 2, 2)), zeros(I64, 4, D(1, 1, 1, 2))), 1,
             SMELT_ERR_TYPE, "grid must be a float tensor");
    infer(op, NO_ATTRS, 2, TYPES("f32[n,c,h,w]", "f32[n,5,6,2]"), NO_DATA, 1,
          "f32[n,c,5,6]");
    op = SM_OP_MaxUnpool;
    const sm_attr k22[] = {a_ints("kernel_shape", 2, D(2, 2)),
                           a_ints("strides", 2, D(2, 2))};
    /* [1,2] at flat 3 and 0 of the 2x2 unpooled map, in a 2x3 output */
    expect(run1(op, k22, 2,
                INS(tf(F32, 4, D(1, 1, 1, 1), V(7)),
                    ti(I64, 4, D(1, 1, 1, 1), D(3)), L(4, 1, 1, 2, 3))),
           F32, 4, D(1, 1, 2, 3), V(0, 0, 0, 0, 7, 0), 0);
    run_fail(op, k22, 2,
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(4))), 1,
             SMELT_ERR_INVALID_ARG, "index 4|size 4");
    run_fail(op, k22, 2,
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(0)),
                 L(4, 1, 1, 1, 2)),
             1, SMELT_ERR_SHAPE, "output_shape dim 2 is 1|unpooled 2");
    run_fail(op, NO_ATTRS,
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(0))), 1,
             SMELT_ERR_INVALID_ARG, "kernel_shape must have");
    run_fail(op, ATTRS(a_ints("kernel_shape", 1, D(2))),
             INS(iota(4, D(1, 1, 1, 1)), ti(I64, 4, D(1, 1, 1, 1), D(0))), 1,
             SMELT_ERR_SHAPE, "X must have rank 3");
    run_fail(op,
             ATTRS(a_ints("kernel_shape", 1, D(1)), a_ints("pads", 2, D(1, 1))),
             INS(iota(3, D(1, 1, 1)), ti(I64, 3, D(1, 1, 1), D(0))), 1,
             SMELT_ERR_INVALID_ARG, "leave nothing");
    infer(op, k22, 2, 2, TYPES("f32[n,c,3,4]", "i64[n,c,3,4]"), NO_DATA, 1,
          "f32[n,c,6,8]");
    /* the kernel alone: an index past the unpooled shape */
    sm_tensor *in[2] = {iota(4, D(1, 1, 1, 1)),
                        ti(I64, 4, D(1, 1, 1, 1), D(9))};
    sm_tensor *y = iota(4, D(1, 1, 4, 4));
    kernel_fail(op, k22, 2, 2, in, 1, &y, SMELT_ERR_RUNTIME, "index 9|size 4");
    free_all(2, in);
    sm_tensor_free(y);
}

/* Every allocation of a run that allocates scratch fails in turn:
 * SMELT_ERR_NOMEM each time, nothing leaked (ASan says so), then a clean
 * run succeeds. */
static void alloc_walk(sm_op op, const sm_attr *at, int n_at, int n_out,
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

static sm_tensor *make_unique(int i)
{
    (void)i;
    return F(6, 3, 1, 3, 2, 1, 0);
}

static sm_tensor *make_topk(int i)
{
    return i == 0 ? iota(2, D(2, 5)) : L(1, 2);
}

static sm_tensor *make_resize(int i)
{
    return i == 0 ? iota(2, D(2, 3)) : i == 1 ? NULL : F(2, 2, 1.5);
}

static sm_tensor *make_gru(int i)
{
    static const int64_t dims[3][3] = {{3, 2, 2}, {1, 6, 2}, {1, 6, 2}};
    return iota(3, dims[i]);
}

static sm_tensor *make_nms(int i)
{
    return i == 0   ? iota(3, D(1, 3, 4))
           : i == 1 ? iota(3, D(1, 2, 3))
                    : L(1, 2);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    alloc_walk(SM_OP_Unique, ATTRS(a_int("sorted", 0)), 4, make_unique, 1);
    alloc_walk(SM_OP_TopK, NO_ATTRS, 2, make_topk, 2);
    alloc_walk(SM_OP_Resize, ATTRS(a_str("mode", "cubic")), 1, make_resize, 3);
    alloc_walk(SM_OP_GRU, NO_ATTRS, 2, make_gru, 3);
    alloc_walk(SM_OP_NonMaxSuppression, NO_ATTRS, 1, make_nms, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gatherelements),
        cmocka_unit_test(test_gathernd),
        cmocka_unit_test(test_scatterelements),
        cmocka_unit_test(test_scatternd),
        cmocka_unit_test(test_topk),
        cmocka_unit_test(test_nonzero_compress),
        cmocka_unit_test(test_onehot),
        cmocka_unit_test(test_space),
        cmocka_unit_test(test_cumsum_trilu_eyelike),
        cmocka_unit_test(test_reversesequence),
        cmocka_unit_test(test_unique),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_rnn),
        cmocka_unit_test(test_nms_roialign),
        cmocka_unit_test(test_gridsample_maxunpool),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
