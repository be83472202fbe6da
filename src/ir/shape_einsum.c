/*
 * shape_einsum.c - shape inference and cost of Einsum. The equation is
 * parsed by kernels/ref/einsum.h, shared with the reference kernel.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"
#include "kernels/ref/einsum.h"

/* Parses the node's equation against its inputs' ranks. */
static smelt_status parse(sm_shape_ctx *s, sm_einsum *e)
{
    const char *eq = sm_attrs_string(&s->attrs, "equation", NULL);
    if (!eq)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: attribute equation is required", s->op->name);
    int rank[SM_EINSUM_MAX_IN];
    for (int k = 0; k < s->n_in && k < SM_EINSUM_MAX_IN; k++) {
        const sm_type *t = sm_shape_in(s, k);
        if (!t)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: input %d is missing", s->op->name, k);
        rank[k] = t->ndim;
    }
    return sm_einsum_parse(s->ctx, s->op->name, eq, s->n_in, rank, e);
}

/* The output dim of label l: its size when known, else a symbolic dim
 * that carries it in some operand (all unknown ones agree when the graph
 * is right), else unknown. */
static sm_dim label_dim(const sm_shape_ctx *s, const sm_einsum *e, int l,
                        int64_t size)
{
    if (size >= 0)
        return (sm_dim){size, NULL};
    for (int k = 0; k < e->n_in; k++)
        for (int d = 0; d < e->rank[k]; d++)
            if (e->label[k][d] == l && s->in[k].type->ndim > d &&
                s->in[k].type->dims[d].sym)
                return s->in[k].type->dims[d];
    return (sm_dim){-1, NULL};
}

/*
 * Einsum: numeric inputs of one dtype; the output has that dtype and one
 * dim per output label, sized from the operands (letters must agree,
 * ellipsis dims broadcast). An input of unknown rank under "..." leaves
 * the output's rank unknown.
 */
smelt_status sm_shape_einsum(sm_shape_ctx *s)
{
    sm_type *y = &s->out[0];
    y->dtype = SMELT_DTYPE_UNDEFINED;
    y->ndim = SM_RANK_UNKNOWN;
    int which = -1;
    for (int k = 0; k < s->n_in; k++) {
        const sm_type *t = sm_shape_in(s, k);
        if (!t || t->dtype == SMELT_DTYPE_UNDEFINED)
            continue;
        if (!sm_dtype_is_float(t->dtype) && !sm_dtype_is_int(t->dtype))
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: input %d has dtype %s, expected a numeric "
                          "dtype",
                          s->op->name, k, smelt_dtype_name(t->dtype));
        if (which >= 0 && t->dtype != y->dtype)
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: inputs %d and %d must have the same dtype, got "
                          "%s and %s",
                          s->op->name, which, k, smelt_dtype_name(y->dtype),
                          smelt_dtype_name(t->dtype));
        if (which < 0) {
            which = k;
            y->dtype = t->dtype;
        }
    }
    sm_einsum e;
    SM_TRY(parse(s, &e));
    if (e.rank_unknown)
        return SMELT_OK;
    int64_t dims[SM_EINSUM_MAX_IN][SMELT_MAX_DIMS], size[SM_EINSUM_MAX_LABELS];
    const int64_t *dp[SM_EINSUM_MAX_IN];
    for (int k = 0; k < e.n_in; k++) {
        const sm_type *t = s->in[k].type;
        for (int d = 0; d < e.rank[k]; d++)
            dims[k][d] = t->ndim >= 0 ? t->dims[d].size : -1;
        dp[k] = dims[k];
    }
    SM_TRY(sm_einsum_sizes(s->ctx, s->op->name, &e, dp, size));
    y->ndim = e.out_rank;
    for (int d = 0; d < e.out_rank; d++)
        y->dims[d] = label_dim(s, &e, e.out_label[d], size[e.out_label[d]]);
    return SMELT_OK;
}

/* One multiply per operand beyond the first and one add at every point of
 * the label space (unknown sizes count as 1). */
void sm_cost_einsum(const sm_shape_ctx *s, sm_cost *c)
{
    sm_einsum e;
    double points = 0;
    c->bytes_read = 0;
    for (int k = 0; k < s->n_in; k++)
        if (s->in[k].present)
            c->bytes_read += sm_type_bytes(s->in[k].type);
    c->bytes_write = sm_type_bytes(&s->out[0]);
    sm_shape_ctx q = *s;
    q.ctx = NULL; /* a failure is no error here: the cost is then 0 */
    if (parse(&q, &e) == SMELT_OK && !e.rank_unknown) {
        int64_t dims[SM_EINSUM_MAX_IN][SMELT_MAX_DIMS];
        int64_t size[SM_EINSUM_MAX_LABELS];
        const int64_t *dp[SM_EINSUM_MAX_IN];
        for (int k = 0; k < e.n_in; k++) {
            const sm_type *t = s->in[k].type;
            for (int d = 0; d < e.rank[k]; d++)
                dims[k][d] = t->ndim >= 0 ? t->dims[d].size : -1;
            dp[k] = dims[k];
        }
        if (sm_einsum_sizes(NULL, s->op->name, &e, dp, size) == SMELT_OK) {
            points = 1;
            for (int l = 0; l < e.n_labels; l++)
                points *= size[l] < 0 ? 1 : (double)size[l];
        }
    }
    c->flops = points * (double)(s->n_in > 1 ? s->n_in : 1);
}
