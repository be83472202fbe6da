/*
 * shape_control.c - shape functions and cost of the control ops If and
 * Loop, whose output types come from their sub-blocks.
 */
#include <string.h>

#include "ir/shape_util.h"

/* The type both a and b satisfy: equal facts kept, differing dims
 * unknown. Different dtypes or ranks are an error. */
static smelt_status join(sm_shape_ctx *s, const sm_type *a, const sm_type *b,
                         sm_type *out, int index)
{
    *out = *a;
    if (a->dtype != SMELT_DTYPE_UNDEFINED &&
        b->dtype != SMELT_DTYPE_UNDEFINED && a->dtype != b->dtype)
        return sm_err(s->ctx, SMELT_ERR_TYPE,
                      "%s: result %d is %s on one path and %s on the other",
                      s->op->name, index, smelt_dtype_name(a->dtype),
                      smelt_dtype_name(b->dtype));
    if (out->dtype == SMELT_DTYPE_UNDEFINED)
        out->dtype = b->dtype;
    if (a->ndim != b->ndim) {
        out->ndim = SM_RANK_UNKNOWN;
        return SMELT_OK;
    }
    for (int i = 0; i < a->ndim; i++) {
        const sm_dim *x = &a->dims[i], *y = &b->dims[i];
        int same =
            x->size == y->size &&
            (x->size >= 0 || (x->sym && y->sym && !strcmp(x->sym, y->sym)));
        if (!same)
            out->dims[i] = (sm_dim){-1, NULL};
    }
    return SMELT_OK;
}

static smelt_status check_scalar(sm_shape_ctx *s, int i, smelt_dtype dt,
                                 const char *what)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t)
        return SMELT_OK;
    if (t->dtype != SMELT_DTYPE_UNDEFINED && t->dtype != dt)
        return sm_err(s->ctx, SMELT_ERR_TYPE, "%s: %s must be %s, not %s",
                      s->op->name, what, smelt_dtype_name(dt),
                      smelt_dtype_name(t->dtype));
    if (sm_type_known(t) && sm_type_numel(t) != 1)
        return sm_err(s->ctx, SMELT_ERR_SHAPE, "%s: %s must hold one element",
                      s->op->name, what);
    return SMELT_OK;
}

smelt_status sm_shape_if(sm_shape_ctx *s)
{
    SM_TRY(check_scalar(s, 0, SMELT_DTYPE_BOOL, "the condition"));
    if (!s->node) /* at run time the kernel sizes its own outputs */
        return SMELT_OK;
    const sm_block *t = s->node->blocks[0], *e = s->node->blocks[1];
    for (int i = 0; i < s->n_out && i < t->n_ret && i < e->n_ret; i++)
        SM_TRY(join(s, &t->ret[i]->type, &e->ret[i]->type, &s->out[i], i));
    return SMELT_OK;
}

smelt_status sm_shape_loop(sm_shape_ctx *s)
{
    SM_TRY(check_scalar(s, 0, SMELT_DTYPE_I64, "the trip count M"));
    SM_TRY(check_scalar(s, 1, SMELT_DTYPE_BOOL, "the condition"));
    if (!s->node)
        return SMELT_OK;
    const sm_block *body = s->node->blocks[0];
    int carried = s->n_in - 2;
    if (body->n_ret != 1 + s->n_out || carried > s->n_out)
        return SMELT_OK; /* the verifier names the signature mismatch */
    for (int i = 0; i < carried; i++) {
        const sm_type *init = sm_shape_in(s, 2 + i);
        if (init)
            SM_TRY(join(s, init, &body->ret[1 + i]->type, &s->out[i], i));
        else
            s->out[i] = body->ret[1 + i]->type;
    }
    /* Scan outputs stack each iteration's value on a new first axis, whose
     * length is the trip count when M is a known constant and no
     * condition can stop the loop early. */
    int64_t trips = -1;
    if (s->in[0].present && s->in[0].data && !s->in[1].present)
        sm_shape_read_ints(s, s->in[0].data, &trips, 1);
    for (int i = carried; i < s->n_out; i++) {
        const sm_type *t = &body->ret[1 + i]->type;
        sm_type *o = &s->out[i];
        sm_type_unknown(o);
        o->dtype = t->dtype;
        if (t->ndim < 0)
            continue;
        if (t->ndim + 1 > SMELT_MAX_DIMS)
            return sm_err(s->ctx, SMELT_ERR_SHAPE,
                          "Loop: scan output %d would have more than %d dims",
                          i, SMELT_MAX_DIMS);
        o->ndim = t->ndim + 1;
        o->dims[0] = (sm_dim){trips, NULL};
        memcpy(&o->dims[1], t->dims, sizeof(sm_dim) * (size_t)t->ndim);
    }
    return SMELT_OK;
}

/* Control ops cost what their blocks cost; the profiler attributes that
 * to the nodes inside, so the op itself moves only its outputs. */
void sm_cost_control(const sm_shape_ctx *s, sm_cost *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < s->n_out; i++)
        c->bytes_write += sm_type_bytes(&s->out[i]);
}
