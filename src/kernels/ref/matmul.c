/*
 * matmul.c - reference MatMul (numpy matmul: 1-D operands promoted, batch
 * dims broadcast) and Gemm (alpha, beta, transA, transB, C broadcast onto
 * [M, N]). Floats accumulate in double; integers in int64 with two's
 * complement wrap-around, so int64 stays exact.
 */
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

/* A dot product's result: in f for float dtypes, in i for integers. */
typedef struct mm_val {
    double f;
    int64_t i;
} mm_val;

/* A row-major matrix view inside a tensor: element (r, c) sits at
 * base + r * rs + c * cs. */
typedef struct mm_view {
    const sm_tensor *t;
    int64_t base, rs, cs;
} mm_view;

/* Row r of a times column c of b over K terms. Two f32 operands are read
 * directly (most of the reference interpreter's time on real models goes
 * here); every other dtype through sm_load_*. Same sum, same order. */
static mm_val dot(const mm_view *a, const mm_view *b, int64_t r, int64_t c,
                  int64_t K, int is_float)
{
    mm_val v = {0, 0};
    uint64_t acc = 0;
    if (is_float && a->t->dtype == SMELT_DTYPE_F32 &&
        b->t->dtype == SMELT_DTYPE_F32) {
        const float *pa = (const float *)a->t->data + a->base + r * a->rs;
        const float *pb = (const float *)b->t->data + b->base + c * b->cs;
        for (int64_t k = 0; k < K; k++)
            v.f += (double)pa[k * a->cs] * (double)pb[k * b->rs];
        return v;
    }
    for (int64_t k = 0; k < K; k++) {
        int64_t ia = a->base + r * a->rs + k * a->cs;
        int64_t ib = b->base + k * b->rs + c * b->cs;
        if (is_float)
            v.f += sm_load_f64(a->t->dtype, a->t->data, ia) *
                   sm_load_f64(b->t->dtype, b->t->data, ib);
        else
            acc += (uint64_t)sm_load_i64(a->t->dtype, a->t->data, ia) *
                   (uint64_t)sm_load_i64(b->t->dtype, b->t->data, ib);
    }
    v.i = (int64_t)acc;
    return v;
}

/* Linear index, within the batch dims of an operand (its first nd dims),
 * of the broadcast batch multi-index idx of rank nb (nb >= nd). */
static int64_t batch_index(const int64_t *dims, int nd, const int64_t *idx,
                           int nb)
{
    int64_t lin = 0;
    for (int d = 0; d < nd; d++)
        lin = lin * dims[d] + (dims[d] == 1 ? 0 : idx[d + nb - nd]);
    return lin;
}

/* Whether an operand's nd batch dims broadcast onto Y's nb batch dims. */
static int batch_fits(const int64_t *dims, int nd, const sm_tensor *Y, int nb)
{
    if (nd > nb)
        return 0;
    for (int d = 0; d < nd; d++)
        if (dims[d] != 1 && dims[d] != Y->dims[d + nb - nd])
            return 0;
    return 1;
}

/*
 * MatMul: a 1-D A is a row [1, K] and a 1-D B a column [K, 1], the added
 * dim being absent from Y; the leading (batch) dims of A and B broadcast
 * to Y's. Y[batch, i, j] = sum over k of A[batch, i, k] * B[batch, k, j].
 */
smelt_status sm_ref_matmul(const sm_kargs *a)
{
    const sm_tensor *A = a->in[0], *B = a->in[1];
    sm_tensor *Y = a->out[0];
    int ra = A->ndim, rb = B->ndim;
    if (ra < 1 || rb < 1)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: operands must have rank >= 1", a->op_name);
    int64_t M = ra > 1 ? A->dims[ra - 2] : 1, K = A->dims[ra - 1];
    int64_t N = rb > 1 ? B->dims[rb - 1] : 1;
    int na = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    int nb = Y->ndim - (ra > 1) - (rb > 1);
    int64_t batch = 1;
    for (int d = 0; d < nb; d++)
        batch *= Y->dims[d];
    if (B->dims[rb > 1 ? rb - 2 : 0] != K || !batch_fits(A->dims, na, Y, nb) ||
        !batch_fits(B->dims, nbb, Y, nb) || Y->numel != batch * M * N)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: operand and output shapes do not fit", a->op_name);
    int is_float = sm_dtype_is_float(Y->dtype);
    int64_t idx[SMELT_MAX_DIMS] = {0};
    for (int64_t bt = 0; bt < batch; bt++, sm_index_next(nb, Y->dims, idx)) {
        mm_view va = {A, batch_index(A->dims, na, idx, nb) * M * K, K, 1};
        mm_view vb = {B, batch_index(B->dims, nbb, idx, nb) * K * N, N, 1};
        for (int64_t i = 0; i < M; i++) {
            for (int64_t j = 0; j < N; j++) {
                mm_val v = dot(&va, &vb, i, j, K, is_float);
                int64_t yi = (bt * M + i) * N + j;
                if (is_float)
                    sm_store_f64(Y->dtype, Y->data, yi, v.f);
                else
                    sm_store_i64(Y->dtype, Y->data, yi, v.i);
            }
        }
    }
    return SMELT_OK;
}

/* Whether x is a whole number that fits int64. */
static int whole(double x)
{
    return x > -9e18 && x < 9e18 && x == (double)(int64_t)x;
}

/*
 * Gemm: Y = alpha * op(A) op(B) + beta * C, op transposing when transA /
 * transB is set; C (optional) broadcasts onto [M, N]. For integer dtypes
 * the result is exact when alpha and beta are whole numbers, and computed
 * in double (then truncated) otherwise.
 */
smelt_status sm_ref_gemm(const sm_kargs *a)
{
    const sm_tensor *A = a->in[0], *B = a->in[1];
    const sm_tensor *C = a->n_in > 2 ? a->in[2] : NULL;
    sm_tensor *Y = a->out[0];
    int ta = sm_attrs_int(&a->attrs, "transA", 0) != 0;
    int tb = sm_attrs_int(&a->attrs, "transB", 0) != 0;
    double alpha = sm_attrs_float(&a->attrs, "alpha", 1);
    double beta = sm_attrs_float(&a->attrs, "beta", 1);
    if (A->ndim != 2 || B->ndim != 2 || Y->ndim != 2 || (C && C->ndim > 2))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: A, B and Y must be 2-D, C at most 2-D", a->op_name);
    int64_t M = A->dims[ta], K = A->dims[!ta], N = B->dims[!tb];
    int cbad = 0;
    for (int d = 0; C && d < C->ndim; d++) {
        int64_t want = d + 2 - C->ndim == 0 ? M : N; /* C aligns right */
        cbad |= C->dims[d] != 1 && C->dims[d] != want;
    }
    if (B->dims[tb] != K || Y->dims[0] != M || Y->dims[1] != N || cbad)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: operand and output shapes do not fit", a->op_name);
    int is_float = sm_dtype_is_float(Y->dtype);
    int exact = !is_float && whole(alpha) && whole(beta);
    mm_view va = {A, 0, ta ? 1 : K, ta ? M : 1};
    mm_view vb = {B, 0, tb ? 1 : N, tb ? K : 1};
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            int64_t ij[2] = {i, j}, yi = i * N + j;
            int64_t ci = C ? sm_bcast_offset(C, 2, ij) : 0;
            mm_val v = dot(&va, &vb, i, j, K, is_float);
            if (exact) {
                uint64_t r = (uint64_t)(int64_t)alpha * (uint64_t)v.i;
                if (C)
                    r += (uint64_t)(int64_t)beta *
                         (uint64_t)sm_load_i64(C->dtype, C->data, ci);
                sm_store_i64(Y->dtype, Y->data, yi, (int64_t)r);
                continue;
            }
            double f = alpha * (is_float ? v.f : (double)v.i);
            if (C)
                f += beta * sm_load_f64(C->dtype, C->data, ci);
            sm_store_f64(Y->dtype, Y->data, yi, f);
        }
    }
    return SMELT_OK;
}
