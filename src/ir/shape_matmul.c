/*
 * shape_matmul.c - shape and dtype inference, and costs, of the
 * contractions MatMul (numpy matmul: 1-D operands promoted, batch dims
 * broadcast) and Gemm (transposes, C broadcast onto [M, N]).
 */
#include "core/dtype.h"
#include "ir/shape_util.h"

/* Fails when the contracted dims, A's dim ia and B's dim ib, are both
 * known and differ. */
static smelt_status check_inner(sm_shape_ctx *s, const sm_type *a,
                                const sm_type *b, int ia, int ib)
{
    int64_t x = sm_type_size(a, ia), y = sm_type_size(b, ib);
    if (x < 0 || y < 0 || x == y)
        return SMELT_OK;
    char sa[160], sb[160];
    sm_type_str(a, sa, sizeof sa);
    sm_type_str(b, sb, sizeof sb);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: inner dimensions differ: A %s has %lld at dim %d, B %s "
                  "has %lld at dim %d",
                  s->op->name, sa, (long long)x, ia, sb, (long long)y, ib);
}

/*
 * MatMul as numpy matmul: a 1-D A is promoted to [1, K] and a 1-D B to
 * [K, 1], the added dim dropped from the result; dims before the last two
 * broadcast (symbolic ones propagate). Floats and integers.
 */
smelt_status sm_shape_matmul(sm_shape_ctx *s)
{
    const sm_type *a, *b;
    SM_TRY(sm_shape_need(s, 0, &a));
    SM_TRY(sm_shape_need(s, 1, &b));
    sm_type *y = &s->out[0];
    SM_TRY(sm_shape_dtype(s, 0, 1, SM_SHAPE_FLOAT | SM_SHAPE_INT, &y->dtype));
    if (a->ndim < 0 || b->ndim < 0) {
        y->ndim = SM_RANK_UNKNOWN;
        return SMELT_OK;
    }
    int ra = a->ndim, rb = b->ndim;
    if (ra < 1 || rb < 1)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: operands must have rank >= 1, got ranks %d and %d",
                      s->op->name, ra, rb);
    SM_TRY(check_inner(s, a, b, ra - 1, rb > 1 ? rb - 2 : 0));
    sm_type ba = {0}, bb = {0};
    ba.ndim = ra > 2 ? ra - 2 : 0;
    bb.ndim = rb > 2 ? rb - 2 : 0;
    for (int d = 0; d < ba.ndim; d++)
        ba.dims[d] = a->dims[d];
    for (int d = 0; d < bb.ndim; d++)
        bb.dims[d] = b->dims[d];
    const sm_type *pair[2] = {&ba, &bb};
    SM_TRY(sm_shape_bcast(s, 2, pair, y));
    if (ra > 1)
        y->dims[y->ndim++] = a->dims[ra - 2];
    if (rb > 1)
        y->dims[y->ndim++] = b->dims[rb - 1];
    return SMELT_OK;
}

/* Fails unless t (when its rank is known) is 2-D. */
static smelt_status check_2d(sm_shape_ctx *s, const sm_type *t,
                             const char *name)
{
    if (t->ndim < 0 || t->ndim == 2)
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: %s must be 2-D, got rank %d",
                  s->op->name, name, t->ndim);
}

/*
 * Gemm: Y[M, N] = alpha * op(A) op(B) + beta * C with op transposing
 * under transA / transB; C (optional) must broadcast one-way onto [M, N],
 * and a known C dim fills an M or N that A and B leave unknown.
 */
smelt_status sm_shape_gemm(sm_shape_ctx *s)
{
    const sm_type *a, *b, *c = sm_shape_in(s, 2);
    SM_TRY(sm_shape_need(s, 0, &a));
    SM_TRY(sm_shape_need(s, 1, &b));
    sm_type *y = &s->out[0];
    SM_TRY(sm_shape_dtype(s, 0, 2, SM_SHAPE_FLOAT | SM_SHAPE_INT, &y->dtype));
    SM_TRY(check_2d(s, a, "A"));
    SM_TRY(check_2d(s, b, "B"));
    int ta = sm_attrs_int(&s->attrs, "transA", 0) != 0;
    int tb = sm_attrs_int(&s->attrs, "transB", 0) != 0;
    SM_TRY(check_inner(s, a, b, !ta, tb));
    y->ndim = 2;
    y->dims[0] = sm_type_dim(a, ta);
    y->dims[1] = sm_type_dim(b, !tb);
    if (!c || c->ndim < 0)
        return SMELT_OK;
    if (c->ndim > 2)
        return sm_err(s->ctx, SMELT_ERR_SHAPE,
                      "%s: C must have rank <= 2 to broadcast onto [M, N], "
                      "got rank %d",
                      s->op->name, c->ndim);
    for (int d = 0; d < c->ndim; d++) {
        sm_dim *want = &y->dims[d + 2 - c->ndim];
        int64_t cs = c->dims[d].size;
        if (cs < 0 || cs == 1)
            continue;
        if (want->size >= 0 && want->size != cs) {
            char buf[160];
            sm_type_str(c, buf, sizeof buf);
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "%s: C %s cannot broadcast onto [M, N]: dim %d is "
                          "%lld, expected %lld or 1",
                          s->op->name, buf, d, (long long)cs,
                          (long long)want->size);
        }
        *want = c->dims[d];
    }
    return SMELT_OK;
}
/* ---- costs -------------------------------------------------------------- */

/* MatMul: 2*K flops per output element (batch * M * N of them). */
void sm_cost_matmul(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *a = sm_shape_in(s, 0);
    double k = a && a->ndim > 0 ? sm_type_factor(a, a->ndim - 1) : 1;
    sm_cost_io(s, c, 2 * sm_type_numel(&s->out[0]) * k);
}

/* Gemm: 2*M*N*K, plus one add per output element when C is given. */
void sm_cost_gemm(const sm_shape_ctx *s, sm_cost *c)
{
    const sm_type *a = sm_shape_in(s, 0);
    int ta = sm_attrs_int(&s->attrs, "transA", 0) != 0;
    double k = a ? sm_type_factor(a, !ta) : 1, mn = sm_type_numel(&s->out[0]);
    sm_cost_io(s, c, 2 * mn * k + (sm_shape_in(s, 2) ? mn : 0));
}
