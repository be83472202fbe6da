/*
 * test_grad_fakequant.c - FakeQuantize, the fake quantization of
 * quantization-aware training (src/autograd/rules_fakequant.c,
 * src/autograd/fakequant.c):
 *
 * - its forward equals QuantizeLinear -> DequantizeLinear bit for bit
 *   (per tensor and per axis, u8 and i8, values clamped at both ends);
 * - its straight-through gradients are checked against float64 central
 *   differences of the surrogate they differentiate: round(v) replaced
 *   by v + c with c = round(v0) - v0 frozen at the point, so the
 *   surrogate has FakeQuantize's value there and a derivative wherever
 *   the clamp does (dx = dy inside the range, 0 outside; d scale = LSQ's
 *   round(x/s) - x/s inside, qmin - z or qmax - z outside); sizes 1 to
 *   24, per tensor and per axis (first, middle and last axis);
 * - smelt_graph_grad turns a QDQ pair into FakeQuantize (the joint graph
 *   of a pair has the same gradients as the one of FakeQuantize), and
 *   the joint graph runs as a plan;
 * - a bad scale is refused in one line, and the op is written to ONNX in
 *   Smelt's domain or, with the standard option, as the QDQ pair (f32)
 *   or its arithmetic (f64), all reading back to the same outputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradutil.h"

/* One case: x of dims (rank r), scale per tensor (axis < 0 ... n_s 1) or
 * per axis, zero point dtype (u8 / i8) and values. */
typedef struct fq_case {
    int r;
    int64_t dims[4];
    int axis; /* the quantization axis, normalized; -1: per tensor */
    int i8;
    double s_base; /* scales are s_base * (1 + 0.25 c) */
} fq_case;

static int64_t numel(const fq_case *c)
{
    int64_t n = 1;
    for (int i = 0; i < c->r; i++)
        n *= c->dims[i];
    return n;
}

static int64_t n_scales(const fq_case *c)
{
    return c->axis < 0 ? 1 : c->dims[c->axis];
}

/* The channel of element i. */
static int64_t chan(const fq_case *c, int64_t i)
{
    if (c->axis < 0)
        return 0;
    int64_t inner = 1;
    for (int d = c->axis + 1; d < c->r; d++)
        inner *= c->dims[d];
    return (i / inner) % c->dims[c->axis];
}

static void fill(const fq_case *c, double *x, double *s, double *z, double *w)
{
    int64_t n = numel(c), ns = n_scales(c);
    for (int64_t k = 0; k < ns; k++) {
        s[k] = c->s_base * (1 + 0.25 * (double)k);
        z[k] = c->i8 ? (double)((k * 5) % 7) - 3 : (double)(100 + 13 * k);
    }
    /* values spanning past both clamp ends: the range is (qmin - z) s to
     * (qmax - z) s and x reaches 0.15 of it past either end; none on a
     * rounding tie (.5 of a step) or rounding onto qmin / qmax, where the
     * surrogate's clamp has its kink */
    for (int64_t i = 0; i < n; i++) {
        int64_t k = chan(c, i);
        double qmin = c->i8 ? -128 : 0, qmax = c->i8 ? 127 : 255;
        double lo = (qmin - z[k]) * s[k], hi = (qmax - z[k]) * s[k];
        double t = 0.5 + 0.65 * sin(2.1 * (double)i + 0.3);
        double v = lo + t * (hi - lo), u = v / s[k];
        if (fabs(u - floor(u) - 0.5) < 0.05)
            v += 0.2 * s[k];
        double q = nearbyint(v / s[k]) + z[k];
        if (q == qmax)
            v -= s[k];
        else if (q == qmin)
            v += s[k];
        x[i] = v;
        w[i] = 0.5 + 0.1 * (double)(i % 7);
    }
}

/* The surrogate loss sum_i w_i (clamp(x_i/s + c_i + z) - z) s, c frozen
 * from (x0, s0). */
static double surrogate(const fq_case *c, const double *x, const double *s,
                        const double *z, const double *w, const double *cr)
{
    double qmin = c->i8 ? -128 : 0, qmax = c->i8 ? 127 : 255, sum = 0;
    for (int64_t i = 0; i < numel(c); i++) {
        int64_t k = chan(c, i);
        double q = x[i] / s[k] + cr[i] + z[k];
        q = q < qmin ? qmin : q > qmax ? qmax : q;
        sum += w[i] * (q - z[k]) * s[k];
    }
    return sum;
}

/* Appends "[v0, v1, ...]" of n values (integers when ints). */
static size_t put_list(char *t, size_t cap, const double *v, int64_t n,
                       int ints)
{
    size_t len = (size_t)snprintf(t, cap, "[");
    for (int64_t i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, ints ? "%s%.0f" : "%s%.17g",
                                i ? ", " : "", v[i]);
    return len + (size_t)snprintf(t + len, cap - len, "]");
}

static size_t put_type(char *t, size_t cap, const char *dt, const int64_t *d,
                       int r)
{
    size_t len = (size_t)snprintf(t, cap, "%s[", dt);
    for (int i = 0; i < r; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%lld", i ? "," : "",
                                (long long)d[i]);
    return len + (size_t)snprintf(t + len, cap - len, "]");
}

/* The graph text: y = FakeQuantize(x, s, z) * w summed (pair = 0), or the
 * QuantizeLinear -> DequantizeLinear pair in its place (pair = 1). */
static char *fq_text(const fq_case *c, const char *fdt, const double *x,
                     const double *s, const double *z, const double *w,
                     int pair)
{
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    int64_t n = numel(c), ns = n_scales(c);
    const char *qdt = c->i8 ? "i8" : "u8";
    len += (size_t)snprintf(t + len, cap - len, "graph t() {\n  %%x: ");
    len += put_type(t + len, cap - len, fdt, c->dims, c->r);
    len += (size_t)snprintf(t + len, cap - len, " = const ");
    len += put_list(t + len, cap - len, x, n, 0);
    len += (size_t)snprintf(t + len, cap - len, "\n  %%w: ");
    len += put_type(t + len, cap - len, fdt, c->dims, c->r);
    len += (size_t)snprintf(t + len, cap - len, " = const ");
    len += put_list(t + len, cap - len, w, n, 0);
    len += (size_t)snprintf(t + len, cap - len, "\n  %%s: ");
    len += put_type(t + len, cap - len, fdt, &ns, c->axis < 0 ? 0 : 1);
    len += (size_t)snprintf(t + len, cap - len, " = const ");
    len += put_list(t + len, cap - len, s, ns, 0);
    len += (size_t)snprintf(t + len, cap - len, "\n  %%z: ");
    len += put_type(t + len, cap - len, qdt, &ns, c->axis < 0 ? 0 : 1);
    len += (size_t)snprintf(t + len, cap - len, " = const ");
    len += put_list(t + len, cap - len, z, ns, 1);
    int ax = c->axis < 0 ? 1 : c->axis;
    if (pair)
        len += (size_t)snprintf(
            t + len, cap - len,
            "\n  %%q = QuantizeLinear(%%x, %%s, %%z) {axis = %d}\n"
            "  %%f = DequantizeLinear(%%q, %%s, %%z) {axis = %d}\n",
            ax, ax);
    else
        len += (size_t)snprintf(
            t + len, cap - len,
            "\n  %%f = FakeQuantize(%%x, %%s, %%z) {axis = %d}\n", ax);
    len += (size_t)snprintf(t + len, cap - len,
                            "  %%y = Mul(%%f, %%w)\n  return %%y\n}\n");
    assert_true(len < cap - 1);
    return t;
}

static const char *const wrt_xs[] = {"x", "s"};

/* The gradients of the f64 FakeQuantize graph against the surrogate's
 * central differences. */
static void check_surrogate(const fq_case *c)
{
    int64_t n = numel(c), ns = n_scales(c);
    double *x = calloc((size_t)n, sizeof *x), *w = calloc((size_t)n, sizeof *w);
    double *cr = calloc((size_t)n, sizeof *cr);
    double s[64], z[64];
    assert_true(ns <= 64);
    fill(c, x, s, z, w);
    for (int64_t i = 0; i < n; i++) {
        double u = x[i] / s[chan(c, i)];
        cr[i] = nearbyint(u) - u;
    }
    char *t = fq_text(c, "f64", x, s, z, w, 0);
    smelt_graph_t *g = tu_parse(NULL, t);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *j = joint_of(ctx, g, wrt_xs, 2);
    smelt_tensor_t *out[8] = {0};
    int n_out = smelt_graph_num_outputs(j);
    if (smelt_graph_run_reference(ctx, j, NULL, 0, out, n_out) != SMELT_OK)
        fail_msg("run joint: %s", smelt_ctx_error(ctx));
    /* the loss is the surrogate's value at the point */
    double loss = smelt_tensor_get_f64(out[smelt_graph_loss_output(j)], 0);
    double sur = surrogate(c, x, s, z, w, cr);
    if (fabs(loss - sur) > 1e-9 * (1 + fabs(sur)))
        fail_msg("loss %.12g, surrogate %.12g", loss, sur);
    int inside = 0, outside = 0;
    for (int k = 0; k < smelt_graph_num_grads(j); k++) {
        const char *name = smelt_graph_grad_wrt(j, k);
        smelt_tensor_t *d = out[smelt_graph_grad_output(j, k)];
        int is_x = !strcmp(name, "x");
        double *v = is_x ? x : s;
        int64_t m = is_x ? n : ns;
        assert_int_equal(smelt_tensor_numel(d), m);
        for (int64_t i = 0; i < m; i++) {
            double keep = v[i];
            v[i] = keep + EPS;
            double up = surrogate(c, x, s, z, w, cr);
            v[i] = keep - EPS;
            double dn = surrogate(c, x, s, z, w, cr);
            v[i] = keep;
            double num = (up - dn) / (2 * EPS),
                   ana = smelt_tensor_get_f64(d, i);
            if (fabs(ana - num) > ATOL + RTOL * fabs(num))
                fail_msg("%s: d/d%s[%lld]: analytic %.9g, surrogate %.9g", t,
                         name, (long long)i, ana, num);
            if (is_x) {
                if (num != 0)
                    inside++;
                else
                    outside++;
            }
        }
    }
    /* the larger cases cover both sides of the clamp */
    if (n >= 8 && (!inside || !outside))
        fail_msg("%s: %d elements inside the range, %d outside", t, inside,
                 outside);
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    free(t);
    free(x);
    free(w);
    free(cr);
}

static const fq_case cases[] = {
    {1, {1}, -1, 0, 0.05},           {1, {24}, -1, 0, 0.01},
    {1, {24}, -1, 1, 0.02},          {2, {3, 5}, -1, 1, 0.03},
    {2, {3, 5}, 0, 1, 0.02},         {2, {4, 3}, 1, 0, 0.01},
    {3, {2, 3, 4}, 1, 1, 0.015},     {3, {2, 3, 4}, 2, 0, 0.02},
    {4, {2, 3, 2, 2}, 1, 1, 0.0125}, {2, {7, 1}, 0, 0, 0.04},
};

static void test_surrogate(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_surrogate(&cases[i]);
}

/* Runs the first output of text (f32) by the reference interpreter. */
static smelt_tensor_t *run_first(smelt_ctx_t *ctx, const char *text)
{
    smelt_graph_t *g = tu_parse(NULL, text);
    smelt_tensor_t *out[1] = {0};
    if (smelt_graph_run_reference(ctx, g, NULL, 0, out, 1) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    smelt_graph_free(g);
    return out[0];
}

/* f32: FakeQuantize's forward equals the pair's bit for bit, and the
 * joint graph of the pair (which smelt_graph_grad rewrites) has the same
 * gradients as the joint graph of FakeQuantize. */
static void test_pair(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const fq_case *c = &cases[ci];
        int64_t n = numel(c);
        double *x = calloc((size_t)n, sizeof *x),
               *w = calloc((size_t)n, sizeof *w);
        double s[64], z[64];
        fill(c, x, s, z, w);
        /* through f32 so that both graphs hold the same values */
        for (int64_t i = 0; i < n; i++)
            x[i] = (double)(float)x[i];
        for (int64_t k = 0; k < n_scales(c); k++)
            s[k] = (double)(float)s[k];
        char *tf = fq_text(c, "f32", x, s, z, w, 0);
        char *tp = fq_text(c, "f32", x, s, z, w, 1);
        smelt_tensor_t *a = run_first(ctx, tf), *b = run_first(ctx, tp);
        for (int64_t i = 0; i < n; i++)
            if (smelt_tensor_get_f64(a, i) != smelt_tensor_get_f64(b, i))
                fail_msg("%s: element %lld: FakeQuantize %.9g, pair %.9g", tp,
                         (long long)i, smelt_tensor_get_f64(a, i),
                         smelt_tensor_get_f64(b, i));
        smelt_tensor_free(a);
        smelt_tensor_free(b);
        smelt_graph_t *gf = tu_parse(NULL, tf), *gp = tu_parse(NULL, tp);
        smelt_graph_t *jf = joint_of(ctx, gf, wrt_xs, 2);
        smelt_graph_t *jp = joint_of(ctx, gp, wrt_xs, 2);
        int no = smelt_graph_num_outputs(jf);
        assert_int_equal(smelt_graph_num_outputs(jp), no);
        smelt_tensor_t *of[8] = {0}, *op[8] = {0};
        assert_int_equal(smelt_graph_run_reference(ctx, jf, NULL, 0, of, no),
                         SMELT_OK);
        assert_int_equal(smelt_graph_run_reference(ctx, jp, NULL, 0, op, no),
                         SMELT_OK);
        for (int k = 0; k < no; k++) {
            assert_int_equal(smelt_tensor_numel(of[k]),
                             smelt_tensor_numel(op[k]));
            for (int64_t i = 0; i < smelt_tensor_numel(of[k]); i++)
                assert_true(smelt_tensor_get_f64(of[k], i) ==
                            smelt_tensor_get_f64(op[k], i));
            smelt_tensor_free(of[k]);
            smelt_tensor_free(op[k]);
        }
        smelt_graph_free(jf);
        smelt_graph_free(jp);
        smelt_graph_free(gf);
        smelt_graph_free(gp);
        free(tf);
        free(tp);
        free(x);
        free(w);
    }
    smelt_ctx_free(ctx);
}

/* The joint graph of FakeQuantize as a plan matches the reference. */
static void test_plan(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci += 3) {
        const fq_case *c = &cases[ci];
        int64_t n = numel(c);
        double *x = calloc((size_t)n, sizeof *x),
               *w = calloc((size_t)n, sizeof *w);
        double s[64], z[64];
        fill(c, x, s, z, w);
        char *t = fq_text(c, "f64", x, s, z, w, 0);
        for (int level = 0; level <= 2; level += 2)
            assert_true(check_plan(t, wrt_xs, 2, level, 1e-12) >= 3);
        free(t);
        free(x);
        free(w);
    }
}

/* A bad scale is refused with the node named. */
static void test_bad_scale(void **state)
{
    (void)state;
    const char *bad[] = {"0", "-0.5"};
    for (int i = 0; i < 2; i++) {
        char t[512];
        snprintf(t, sizeof t,
                 "graph t() {\n  %%x: f32[2] = const [1, 2]\n"
                 "  %%s: f32[] = const [%s]\n  %%z: u8[] = const [3]\n"
                 "  %%f = FakeQuantize(%%x, %%s, %%z)\n  return %%f\n}\n",
                 bad[i]);
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_graph_t *g = NULL;
        smelt_status st = smelt_graph_parse(ctx, t, strlen(t), "t.ir", &g);
        if (st == SMELT_OK) {
            smelt_tensor_t *out[1] = {0};
            st = smelt_graph_run_reference(ctx, g, NULL, 0, out, 1);
            smelt_tensor_free(out[0]);
        }
        assert_int_not_equal(st, SMELT_OK);
        assert_non_null(strstr(smelt_ctx_error(ctx), "scale"));
        assert_null(strchr(smelt_ctx_error(ctx), '\n'));
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

/* Written as ONNX: in Smelt's domain by default (read back as
 * FakeQuantize), as the QDQ pair with the standard option; both compute
 * what the graph did. */
static void test_save(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci += 2) {
        const fq_case *c = &cases[ci];
        int64_t n = numel(c);
        double *x = calloc((size_t)n, sizeof *x),
               *w = calloc((size_t)n, sizeof *w);
        double s[64], z[64];
        fill(c, x, s, z, w);
        for (int f64 = 0; f64 < 2; f64++) {
            char *t = fq_text(c, f64 ? "f64" : "f32", x, s, z, w, 0);
            smelt_tensor_t *want = run_first(ctx, t);
            smelt_graph_t *g = tu_parse(NULL, t);
            for (int std = 0; std < 2; std++) {
                smelt_onnx_save_options o;
                smelt_onnx_save_options_default(&o);
                o.standard = std;
                void *buf = NULL;
                size_t len = 0;
                smelt_graph_t *back = NULL;
                if (smelt_onnx_save_buffer_opt(ctx, g, &o, &buf, &len) !=
                        SMELT_OK ||
                    smelt_onnx_load_buffer(ctx, buf, len, NULL, &back) !=
                        SMELT_OK)
                    fail_msg("save / load: %s", smelt_ctx_error(ctx));
                int fq = 0, q = 0, dq = 0;
                for (int i = 0; i < back->top->n_nodes; i++) {
                    sm_op op = back->top->nodes[i]->op;
                    fq += op == SM_OP_FakeQuantize;
                    q += op == SM_OP_QuantizeLinear;
                    dq += op == SM_OP_DequantizeLinear;
                }
                /* f64: QuantizeLinear takes no f64 (opset 17), the standard
                 * form is the arithmetic */
                assert_int_equal(fq, !std);
                assert_int_equal(q, std && !f64);
                assert_int_equal(dq, std && !f64);
                smelt_tensor_t *out[1] = {0};
                assert_int_equal(
                    smelt_graph_run_reference(ctx, back, NULL, 0, out, 1),
                    SMELT_OK);
                for (int64_t i = 0; i < n; i++)
                    assert_true(smelt_tensor_get_f64(out[0], i) ==
                                smelt_tensor_get_f64(want, i));
                smelt_tensor_free(out[0]);
                smelt_graph_free(back);
                smelt_onnx_buffer_free(buf);
            }
            smelt_tensor_free(want);
            smelt_graph_free(g);
            free(t);
        }
        free(x);
        free(w);
    }
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_surrogate), cmocka_unit_test(test_pair),
        cmocka_unit_test(test_plan),      cmocka_unit_test(test_bad_scale),
        cmocka_unit_test(test_save),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
