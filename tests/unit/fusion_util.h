/*
 * fusion_util.h - helpers for the fusion tests (test_fusion.c): graphs
 * from text, seeded random inputs, running the reference interpreter,
 * running passes, comparing.
 *
 * Everything is static inline so that each test uses what it needs.
 */
#ifndef SM_FUSION_UTIL_H
#define SM_FUSION_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "runtime/interp.h"

#define FU_MAX_IO 16

/* "[v, v, ...]": n multiples of 1/16 in [-scale, scale] (in (0, scale]
 * when positive), from seed. malloc'd. */
static inline char *fu_lit(int n, unsigned seed, double scale, int positive)
{
    char *s = malloc((size_t)n * 24 + 4);
    assert_non_null(s);
    size_t k = 0;
    unsigned x = seed * 2654435761u + 977u;
    s[k++] = '[';
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        double v = (double)((int)((x >> 16) % 33) - 16) / 16.0 * scale;
        if (positive)
            v = fabs(v) + scale / 16.0;
        k += (size_t)sprintf(s + k, "%s%.6f", i ? ", " : "", v);
    }
    s[k++] = ']';
    s[k] = 0;
    return s;
}

/* Parses, infers and verifies text; fails the test on any error. */
static inline sm_graph *fu_parse(const char *text)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = NULL;
    if (smelt_graph_parse(ctx, text, strlen(text), "test", &g) != SMELT_OK ||
        sm_graph_infer(ctx, g) != SMELT_OK ||
        sm_graph_verify(ctx, g) != SMELT_OK)
        fail_msg("%s\n--- in ---\n%s", smelt_ctx_error(ctx), text);
    smelt_ctx_free(ctx);
    return g;
}

/* One seeded random tensor per graph input (known shapes), floats in
 * [-2, 2). */
static inline int fu_inputs(const sm_graph *g, unsigned seed, sm_tensor **in)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < g->top->n_params; i++) {
        const sm_type *t = &g->top->params[i]->type;
        assert_true(sm_type_known(t));
        int64_t dims[SMELT_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++)
            dims[d] = t->dims[d].size;
        assert_int_equal(sm_tensor_new(NULL, t->dtype, t->ndim, dims, &in[i]),
                         SMELT_OK);
        for (int64_t k = 0; k < in[i]->numel; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double v = (double)(int64_t)((s >> 33) % 1024) / 256.0 - 2.0;
            sm_store_f64(t->dtype, in[i]->data, k, v);
        }
    }
    return g->top->n_params;
}

/* Runs g on in[]; fails the test when the interpreter does. */
static inline void fu_run(const sm_graph *g, sm_tensor **in, sm_tensor **out)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (sm_interp_run(ctx, g, in, g->top->n_params, out, g->top->n_ret) !=
        SMELT_OK)
        fail_msg("run failed: %s", smelt_ctx_error(ctx));
    smelt_ctx_free(ctx);
}

/* Largest |a - b| / max(1, |a|) over the elements (shapes must agree). */
static inline double fu_err(const sm_tensor *a, const sm_tensor *b)
{
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->numel, b->numel);
    double m = 0;
    for (int64_t i = 0; i < a->numel; i++) {
        double x = sm_load_f64(a->dtype, a->data, i);
        double y = sm_load_f64(b->dtype, b->data, i);
        double e = fabs(x - y) / (fabs(x) > 1 ? fabs(x) : 1);
        if (isnan(x) != isnan(y))
            e = INFINITY;
        if (e > m)
            m = e;
    }
    return m;
}

/* Runs a and b on the same seeded inputs (a's parameters) and returns the
 * largest error over all outputs. */
static inline double fu_compare(const sm_graph *a, const sm_graph *b,
                                unsigned seed)
{
    sm_tensor *in[FU_MAX_IO] = {0}, *oa[FU_MAX_IO] = {0}, *ob[FU_MAX_IO] = {0};
    assert_true(a->top->n_params <= FU_MAX_IO && a->top->n_ret <= FU_MAX_IO);
    assert_int_equal(a->top->n_ret, b->top->n_ret);
    fu_inputs(a, seed, in);
    fu_run(a, in, oa);
    fu_run(b, in, ob);
    double m = 0;
    for (int i = 0; i < a->top->n_ret; i++) {
        double e = fu_err(oa[i], ob[i]);
        m = e > m ? e : m;
    }
    for (int i = 0; i < FU_MAX_IO; i++) {
        sm_tensor_free(in[i]);
        sm_tensor_free(oa[i]);
        sm_tensor_free(ob[i]);
    }
    return m;
}

/* Runs the comma list of passes over g (why_not_fused as given); the
 * report is kept in *rep when rep is not NULL. */
static inline void fu_passes(sm_graph *g, const char *passes, int why,
                             sm_pass_report *rep)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_pass_options opt;
    sm_pass_options_default(&opt);
    opt.verify_each = 1;
    opt.why_not_fused = why;
    const sm_pass_info **list;
    int n;
    if (sm_pipeline_resolve(ctx, 0, passes, &list, &n) != SMELT_OK ||
        sm_pass_run(ctx, g, &opt, list, n, rep) != SMELT_OK)
        fail_msg("passes %s: %s", passes, smelt_ctx_error(ctx));
    sm_free(list);
    smelt_ctx_free(ctx);
}

/* Nodes applying op in b and its sub-blocks. */
static inline int fu_count(const sm_block *b, sm_op op)
{
    int k = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        k += b->nodes[i]->op == op;
        for (int j = 0; j < b->nodes[i]->n_blocks; j++)
            k += fu_count(b->nodes[i]->blocks[j], op);
    }
    return k;
}

#endif
