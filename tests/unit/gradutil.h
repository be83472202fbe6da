/*
 * gradutil.h - checks gradients of small f64 text-IR graphs against
 * central differences, for the autograd tests (test_grad*.c). Header
 * only: each test program includes it once.
 */
#ifndef GRADUTIL_H
#define GRADUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/tensor.h"
#include "ir/ir.h"

#define EPS 1e-6
#define ATOL 1e-5
#define RTOL 1e-3

/* The sum of g's first output run on inputs in[0..n_in) (the forward
 * loss). */
static inline double run_sum_in(smelt_graph_t *g, smelt_tensor_t *const *in,
                                int n_in)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *out[8] = {0};
    int n_out = smelt_graph_num_outputs(g);
    assert_true(n_out <= 8);
    if (smelt_graph_run_reference(ctx, g, in, n_in, out, n_out) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    double s = 0;
    for (int64_t i = 0; i < smelt_tensor_numel(out[0]); i++)
        s += smelt_tensor_get_f64(out[0], i);
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    smelt_ctx_free(ctx);
    return s;
}

/* The joint graph of g (loss: the sum of its first output) with respect
 * to wrt[0..n_wrt) (NULL: every float constant); fails the test when
 * smelt_graph_grad does. */
static inline smelt_graph_t *joint_of(smelt_ctx_t *ctx, smelt_graph_t *g,
                                      const char *const *wrt, int n_wrt)
{
    smelt_graph_t *j = NULL;
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.wrt = wrt;
    o.n_wrt = n_wrt;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    return j;
}

/* Checks every gradient of the joint graph of `text` (loss: the sum of
 * its first output) with respect to the constants wrt[0..n_wrt) (NULL:
 * every float constant), the graph's inputs bound to in[0..n_in), against
 * central differences; returns the number of gradient elements checked. */
static inline int check_graph(const char *text, const char *const *wrt,
                              int n_wrt, smelt_tensor_t *const *in, int n_in)
{
    smelt_graph_t *g = tu_parse(NULL, text);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *j = joint_of(ctx, g, wrt, n_wrt);
    assert_int_equal(smelt_graph_verify(ctx, j), SMELT_OK);
    int n_out = smelt_graph_num_outputs(j);
    smelt_tensor_t *out[32] = {0};
    assert_true(n_out <= 32);
    if (smelt_graph_run_reference(ctx, j, in, n_in, out, n_out) != SMELT_OK)
        fail_msg("run joint: %s", smelt_ctx_error(ctx));
    int checked = 0;
    for (int k = 0; k < smelt_graph_num_grads(j); k++) {
        const char *name = smelt_graph_grad_wrt(j, k);
        smelt_tensor_t *d = out[smelt_graph_grad_output(j, k)];
        sm_value *c = sm_graph_find_value(g, name);
        assert_non_null(c);
        assert_non_null(c->data);
        assert_int_equal(smelt_tensor_numel(d), c->data->numel);
        double *w = c->data->data;
        for (int64_t i = 0; i < c->data->numel; i++) {
            double keep = w[i];
            w[i] = keep + EPS;
            double up = run_sum_in(g, in, n_in);
            w[i] = keep - EPS;
            double dn = run_sum_in(g, in, n_in);
            w[i] = keep;
            double num = (up - dn) / (2 * EPS);
            double ana = smelt_tensor_get_f64(d, i);
            if (fabs(ana - num) > ATOL + RTOL * fabs(num))
                fail_msg("d/d%s[%lld]: analytic %.9g, numeric %.9g", name,
                         (long long)i, ana, num);
            checked++;
        }
    }
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return checked;
}

/* check_graph with respect to every float constant, no inputs. */
static inline int check_text(const char *text)
{
    return check_graph(text, NULL, 0, NULL, 0);
}

/* Compiles the joint graph of `text` (loss: the sum of its first output;
 * gradients with respect to wrt[0..n_wrt), NULL: every float constant)
 * into a plan at `level` and checks that every output of the plan is
 * within tol (relative to the output's largest magnitude) of the
 * reference interpreter's: the backward ops run on the compiled-plan
 * runtime too. Returns the number of outputs compared. */
static inline int check_plan(const char *text, const char *const *wrt,
                             int n_wrt, int level, double tol)
{
    smelt_graph_t *g = tu_parse(NULL, text);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *j = joint_of(ctx, g, wrt, n_wrt);
    int n_out = smelt_graph_num_outputs(j);
    smelt_tensor_t *ref[32] = {0}, *got[32] = {0};
    assert_true(n_out <= 32);
    if (smelt_graph_run_reference(ctx, j, NULL, 0, ref, n_out) != SMELT_OK)
        fail_msg("run joint: %s", smelt_ctx_error(ctx));
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.level = level;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, j, &po, &p) != SMELT_OK)
        fail_msg("plan compile: %s", smelt_ctx_error(ctx));
    if (smelt_plan_run(ctx, p, NULL, 0, got, n_out) != SMELT_OK)
        fail_msg("plan run: %s", smelt_ctx_error(ctx));
    for (int k = 0; k < n_out; k++) {
        int64_t n = smelt_tensor_numel(ref[k]);
        assert_int_equal(smelt_tensor_numel(got[k]), n);
        double big = 0;
        for (int64_t i = 0; i < n; i++)
            big = fmax(big, fabs(smelt_tensor_get_f64(ref[k], i)));
        for (int64_t i = 0; i < n; i++) {
            double a = smelt_tensor_get_f64(got[k], i);
            double b = smelt_tensor_get_f64(ref[k], i);
            if (!(fabs(a - b) <= tol * (big > 1 ? big : 1)))
                fail_msg("output %d [%lld]: plan %.9g, reference %.9g", k,
                         (long long)i, a, b);
        }
        smelt_tensor_free(ref[k]);
        smelt_tensor_free(got[k]);
    }
    smelt_plan_free(p);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return n_out;
}

/* A float leaf of a test graph: its name, its type and element count. */
typedef struct grad_leaf {
    const char *name, *type;
    int n;
} grad_leaf;

/* Graph text: each leaf an f64 constant of distinct values (element i of
 * leaf k: amp sin(1.3 i + kstep k + 0.4) + slope i, no ties), then body,
 * then tail (the lines that return). Free it. */
static inline char *leaf_graph_text(const grad_leaf *l, int n_leaf, double amp,
                                    double kstep, double slope,
                                    const char *body, const char *tail)
{
    size_t cap = 65536, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t + len, cap - len, "graph t() {\n");
    for (int k = 0; k < n_leaf; k++) {
        len += (size_t)snprintf(t + len, cap - len, "  %%%s: %s = const [",
                                l[k].name, l[k].type);
        for (int i = 0; i < l[k].n; i++)
            len += (size_t)snprintf(
                t + len, cap - len, "%s%.17g", i ? ", " : "",
                amp * sin(1.3 * i + kstep * k + 0.4) + slope * i);
        len += (size_t)snprintf(t + len, cap - len, "]\n");
    }
    len += (size_t)snprintf(t + len, cap - len, "%s%s}\n", body, tail);
    assert_true(len < cap - 1);
    return t;
}

/* check_graph of text with respect to the leaves; fails unless every
 * element of every leaf was checked. */
static inline void check_leaves(const char *text, const grad_leaf *l,
                                int n_leaf)
{
    const char *names[16];
    int want = 0;
    assert_true(n_leaf <= 16);
    for (int k = 0; k < n_leaf; k++) {
        names[k] = l[k].name;
        want += l[k].n;
    }
    int got = check_graph(text, names, n_leaf, NULL, 0);
    if (got != want)
        fail_msg("checked %d gradient elements, expected %d in\n%s", got, want,
                 text);
}

/* smelt_graph_grad of text with respect to wrt[0..n_wrt) (NULL: every
 * float constant) is declined with SMELT_ERR_UNSUPPORTED, its message
 * holding what and why. */
static inline void expect_declined(const char *text, const char *const *wrt,
                                   int n_wrt, const char *what, const char *why)
{
    smelt_graph_t *g = tu_parse(NULL, text);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *j = NULL;
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.wrt = wrt;
    o.n_wrt = n_wrt;
    assert_int_equal(smelt_graph_grad(ctx, g, &o, &j), SMELT_ERR_UNSUPPORTED);
    assert_null(j);
    if (!strstr(smelt_ctx_error(ctx), what) ||
        !strstr(smelt_ctx_error(ctx), why))
        fail_msg("error '%s' lacks '%s' or '%s'", smelt_ctx_error(ctx), what,
                 why);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

#endif
