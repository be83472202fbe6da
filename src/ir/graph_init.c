/*
 * graph_init.c - the public view of a graph's initializers (its top
 * block's constants): listing them, reading a copy and replacing their
 * data. Training reads the weights it starts from here and writes the
 * trained ones back before saving the model (docs/AUTOGRAD.md).
 */
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "ir/dims.h"
#include "ir/ir.h"
#include "ir/infer.h"
#include "ir/rewrite.h"

/* The i-th constant of the top block that holds data (a constant a
 * rewrite dropped keeps its slot without data), or NULL. */
static const sm_value *nth_init(const smelt_graph_t *g, int i)
{
    for (int k = 0; g && i >= 0 && k < g->top->n_consts; k++)
        if (g->top->consts[k]->data && i-- == 0)
            return g->top->consts[k];
    return NULL;
}

int smelt_graph_num_initializers(const smelt_graph_t *g)
{
    int n = 0;
    for (int k = 0; g && k < g->top->n_consts; k++)
        n += g->top->consts[k]->data != NULL;
    return n;
}

const char *smelt_graph_initializer_name(const smelt_graph_t *g, int i)
{
    const sm_value *v = nth_init(g, i);
    return v ? v->name : NULL;
}

smelt_dtype smelt_graph_initializer_dtype(const smelt_graph_t *g, int i)
{
    const sm_value *v = nth_init(g, i);
    return v ? v->type.dtype : SMELT_DTYPE_UNDEFINED;
}

/* The top-level constant named name, or NULL with the error set. */
static sm_value *find_init(smelt_ctx_t *ctx, const smelt_graph_t *g,
                           const char *name)
{
    if (!g || !name) {
        sm_err(ctx, SMELT_ERR_INVALID_ARG, "initializer: NULL argument");
        return NULL;
    }
    for (int i = 0; i < g->top->n_consts; i++)
        if (strcmp(g->top->consts[i]->name, name) == 0 &&
            g->top->consts[i]->data)
            return g->top->consts[i];
    sm_err(ctx, SMELT_ERR_INVALID_ARG, "the graph has no initializer '%s'",
           name);
    return NULL;
}

smelt_status smelt_graph_initializer_get(smelt_ctx_t *ctx,
                                         const smelt_graph_t *g,
                                         const char *name, smelt_tensor_t **out)
{
    if (!out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "initializer: NULL out");
    *out = NULL;
    sm_value *v = find_init(ctx, g, name);
    if (!v)
        return smelt_ctx_status(ctx);
    return sm_tensor_clone(ctx, v->data, out);
}

smelt_status smelt_graph_initializer_set(smelt_ctx_t *ctx, smelt_graph_t *g,
                                         const char *name,
                                         const smelt_tensor_t *t)
{
    sm_value *v = find_init(ctx, g, name);
    if (!v)
        return smelt_ctx_status(ctx);
    if (!t)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "initializer '%s': NULL",
                      name);
    sm_tensor *d = v->data;
    int same = t->dtype == d->dtype && t->ndim == d->ndim;
    for (int i = 0; same && i < d->ndim; i++)
        same = t->dims[i] == d->dims[i];
    if (!same)
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "initializer '%s': the new data's dtype or shape "
                      "differs from the initializer's",
                      name);
    if (d->nbytes)
        memcpy(d->data, t->data, d->nbytes);
    return SMELT_OK;
}

/* Turns the initializers named in names[0..n) into graph inputs of the
 * same names, appended after the others in that order, on a copy of g:
 * the forward graph a training run evaluates with its current weights
 * (docs/AUTOGRAD.md, "Training"), where smelt_graph_grad's
 * params_as_inputs does the same for the step itself. */
smelt_status smelt_graph_lift_initializers(smelt_ctx_t *ctx,
                                           const smelt_graph_t *g,
                                           const char *const *names, int n,
                                           smelt_graph_t **out)
{
    if (!g || !out || (n > 0 && !names))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_lift_initializers: NULL");
    *out = NULL;
    sm_graph *c;
    SM_TRY(sm_graph_clone(ctx, g, &c));
    sm_rw *rw = NULL;
    smelt_status st = sm_rw_new(ctx, c, &rw);
    for (int i = 0; st == SMELT_OK && i < n; i++) {
        sm_value *v = find_init(ctx, c, names[i]);
        if (!v) {
            st = smelt_ctx_status(ctx);
            break;
        }
        if (!sm_rw_lift_const(rw, v)) {
            st = sm_err_nomem(ctx);
            break;
        }
    }
    sm_rw_free(rw);
    if (st == SMELT_OK)
        st = sm_graph_verify(ctx, c);
    if (st != SMELT_OK) {
        sm_graph_free(c);
        return st;
    }
    *out = c;
    return SMELT_OK;
}

/* Binds symbolic dimensions ("batch=16,seq=128") in g itself, then
 * infers again, so that what is built on g afterwards (a loss, a
 * backward pass whose rules need sizes) sees concrete shapes. */
smelt_status smelt_graph_bind_dims(smelt_ctx_t *ctx, smelt_graph_t *g,
                                   const char *dims)
{
    if (!g || !dims)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_bind_dims: NULL");
    sm_dim_binds bs = {0};
    SM_TRY(sm_dims_parse(ctx, "smelt_graph_bind_dims", dims, &bs));
    sm_dims_apply(g, &bs);
    return sm_graph_infer(ctx, g);
}
