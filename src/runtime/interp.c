/*
 * interp.c - the reference interpreter: checks the caller's inputs
 * against the graph's declared types, then walks the top block with the
 * block walker (walk.c) over an environment of every value id. For each
 * node the op's shape function, given the concrete inputs, sizes the
 * outputs; the reference kernel fills them.
 */
#include "runtime/interp.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/deadline.h"
#include "ir/infer.h"
#include "runtime/walk.h"

/* Checks a caller's input against the declared type of graph input p. */
static smelt_status check_input(smelt_ctx_t *ctx, const sm_value *p,
                                const sm_tensor *t)
{
    const sm_type *ty = &p->type;
    int ok = ty->dtype == SMELT_DTYPE_UNDEFINED || ty->dtype == t->dtype;
    if (ok && ty->ndim >= 0) {
        ok = ty->ndim == t->ndim;
        for (int i = 0; ok && i < t->ndim; i++)
            ok = ty->dims[i].size < 0 || ty->dims[i].size == t->dims[i];
    }
    if (ok)
        return SMELT_OK;
    char want[160], got[160];
    sm_type_str(ty, want, sizeof want);
    sm_shape_str(t->dtype, t->ndim, t->dims, got, sizeof got);
    return sm_err(ctx, SMELT_ERR_SHAPE, "input '%s': expected %s, got %s",
                  p->name, want, got);
}

/* Each symbolic dimension name must bind to one size across inputs. */
static smelt_status check_symbols(smelt_ctx_t *ctx, const sm_block *top,
                                  sm_tensor *const *inputs)
{
    for (int i = 0; i < top->n_params; i++)
        for (int d = 0; d < top->params[i]->type.ndim; d++) {
            const char *sym = top->params[i]->type.dims[d].sym;
            if (!sym)
                continue;
            for (int j = 0; j <= i; j++)
                for (int e = 0; e < top->params[j]->type.ndim; e++) {
                    const char *s2 = top->params[j]->type.dims[e].sym;
                    if (s2 && !strcmp(sym, s2) &&
                        inputs[i]->dims[d] != inputs[j]->dims[e])
                        return sm_err(
                            ctx, SMELT_ERR_SHAPE,
                            "dimension '%s' is %lld in input '%s' but %lld "
                            "in input '%s'",
                            sym, (long long)inputs[j]->dims[e],
                            top->params[j]->name, (long long)inputs[i]->dims[d],
                            top->params[i]->name);
                }
        }
    return SMELT_OK;
}

smelt_status sm_interp_run(smelt_ctx_t *ctx, const sm_graph *g,
                           sm_tensor *const *inputs, int n_inputs,
                           sm_tensor **outputs, int n_outputs)
{
    const sm_block *top = g->top;
    if (n_inputs != top->n_params)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "graph '%s' takes %d inputs, %d given", g->name,
                      top->n_params, n_inputs);
    if (n_outputs != top->n_ret)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "graph '%s' gives %d outputs, %d requested", g->name,
                      top->n_ret, n_outputs);
    for (int i = 0; i < n_inputs; i++) {
        if (!inputs[i])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG, "input '%s' is NULL",
                          top->params[i]->name);
        SM_TRY(check_input(ctx, top->params[i], inputs[i]));
    }
    SM_TRY(check_symbols(ctx, top, inputs));
    sm_walk w = {.ctx = ctx,
                 .env = sm_calloc((size_t)g->n_values + 1, sizeof(sm_tensor *)),
                 .owned = sm_calloc((size_t)g->n_values + 1, 1)};
    smelt_status st = SMELT_OK;
    if (!w.env || !w.owned)
        st = sm_err_nomem(ctx);
    else {
        double outer = sm_run_begin(ctx, 0);
        st = sm_walk_block(&w, top, n_inputs, inputs, n_outputs, outputs);
        sm_run_end(ctx, outer);
    }
    /* the walk releases each block's values as it leaves it; this only
     * guards against one left behind */
    if (w.env && w.owned)
        for (int i = 0; i < g->n_values; i++)
            if (w.owned[i])
                sm_tensor_free(w.env[i]);
    sm_free(w.env);
    sm_free(w.owned);
    return st;
}

smelt_status smelt_graph_run_reference(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                       smelt_tensor_t *const *inputs,
                                       int n_inputs, smelt_tensor_t **outputs,
                                       int n_outputs)
{
    if (!g || (n_inputs && !inputs) || (n_outputs && !outputs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_run_reference: NULL argument");
    return sm_interp_run(ctx, g, inputs, n_inputs, outputs, n_outputs);
}
