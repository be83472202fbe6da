/*
 * test_grad_qmatmul.c - the gradient rule of FusedQMatMul
 * (src/autograd/rules_qmatmul.c), checked by central differences of a
 * float64 model of the op:
 *
 *   loss = sum_ij w_ij act(acc_ij sa sb_j + bias_j + res_ij)
 *
 * with acc the integer product of the quantized A and B. The op runs in
 * f32 only (the gradcheck sweep, which widens cases to f64, names it as
 * checked here), so the joint graph runs in f32 and the model in double;
 * the tolerance is f32's. B's scale, the bias and an integer A's scale
 * enter linearly and are checked against the op's own function. An f32
 * A, quantized inside, gets the straight-through gradient: it is checked
 * against the surrogate in which A's quantization is frozen at the point
 * (qa - za = A / sa + c, c fixed), the dequantized product's derivative.
 * Cases: f32, u8 and i8 A of ranks 1 to 3, odd sizes, B u8 and i8 with
 * and without zero points, scales per tensor and per column, bias per
 * tensor and per column or none, activations none, relu and gelu; then
 * the joint graph compiled at -O2 (the backward's FusedQMatMul on the
 * int8 kernels) against the reference interpreter.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradutil.h"

#define QCAP (1 << 16)

/* One case. a_dt: "f32", "u8" or "i8"; A is [rows..., K] (a_rank 1 to
 * 3, dims a_dims), B [K, N]. */
typedef struct qg_case {
    const char *a_dt;
    int a_rank;
    int64_t a_dims[3];
    int64_t n;
    const char *b_dt;
    int zb;          /* B's zero point per column */
    int sb_per;      /* B's scale per column (else one value) */
    int bias;        /* 0 none, 1 one value, 2 per column */
    const char *act; /* none, relu, gelu */
    int res;         /* a residual (input 7) of the result's shape */
} qg_case;

/* Everything the model reads, in double. */
typedef struct qg_data {
    int64_t m, k, n; /* rows (A's leading dims), depth, columns */
    double *a, *qa;  /* A (f32 A's values) and its quantized integers */
    double *b, *zb;  /* B and its zero points (per column) */
    double *sb, *bias, *w, *res; /* res: m * n, zero when absent */
    int64_t n_sb, n_bias;
    double sa, za; /* A's scale and zero point */
    double *c;     /* the surrogate's frozen offsets, m * k */
} qg_data;

static double act_of(const char *act, double z)
{
    if (!strcmp(act, "relu"))
        return z > 0 ? z : 0;
    if (!strcmp(act, "gelu"))
        return 0.5 * z * (1 + erf(z / sqrt(2.0)));
    return z;
}

/* The loss of the model; with sur, an f32 A enters through the frozen
 * surrogate qa - za = a / sa + c. */
static double model(const qg_case *t, const qg_data *d, int sur)
{
    double sum = 0;
    sur = sur && !strcmp(t->a_dt, "f32");
    for (int64_t i = 0; i < d->m; i++)
        for (int64_t j = 0; j < d->n; j++) {
            double acc = 0;
            for (int64_t kk = 0; kk < d->k; kk++) {
                int64_t at = i * d->k + kk;
                double x =
                    sur ? d->a[at] / d->sa + d->c[at] : d->qa[at] - d->za;
                acc += x * (d->b[kk * d->n + j] - d->zb[j]);
            }
            double z = acc * d->sa * d->sb[d->n_sb > 1 ? j : 0];
            if (d->n_bias)
                z += d->bias[d->n_bias > 1 ? j : 0];
            z += d->res[i * d->n + j];
            sum += d->w[i * d->n + j] * act_of(t->act, z);
        }
    return sum;
}

/* Appends "[v0, ...]" (integers when ints). */
static size_t put_list(char *s, size_t cap, const double *v, int64_t n,
                       int ints)
{
    size_t len = (size_t)snprintf(s, cap, "[");
    for (int64_t i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, ints ? "%s%.0f" : "%s%.9g",
                                i ? ", " : "", v[i]);
    return len + (size_t)snprintf(s + len, cap - len, "]");
}

/* Appends "  %name: dt[dims] = const [...]\n". */
static size_t put_const(char *s, size_t cap, const char *name, const char *dt,
                        const int64_t *dims, int r, const double *v, int ints)
{
    int64_t n = 1;
    size_t len = (size_t)snprintf(s, cap, "  %%%s: %s[", name, dt);
    for (int i = 0; i < r; i++) {
        len += (size_t)snprintf(s + len, cap - len, "%s%lld", i ? "," : "",
                                (long long)dims[i]);
        n *= dims[i];
    }
    len += (size_t)snprintf(s + len, cap - len, "] = const ");
    len += put_list(s + len, cap - len, v, n, ints);
    return len + (size_t)snprintf(s + len, cap - len, "\n");
}

/* A deterministic value in [lo, hi] (integers when ints). */
static double val(unsigned i, unsigned seed, double lo, double hi, int ints)
{
    double t = 0.5 + 0.5 * sin(1.7 * i + 0.37 * seed + 0.11 * i * i);
    double v = lo + t * (hi - lo);
    return ints ? nearbyint(v) : v;
}

/* The quantized integers, scale and zero point of an f32 A, as the op
 * computes them (DynamicQuantizeLinear by the reference interpreter). */
static void quantize_a(const char *atext, qg_data *d)
{
    char s[QCAP];
    snprintf(s, sizeof s,
             "graph q() {\n%s  %%q: u8[%lld], %%s: f32[], %%z: u8[] = "
             "DynamicQuantizeLinear(%%a)\n  return %%q, %%s, %%z\n}\n",
             atext, (long long)(d->m * d->k));
    smelt_graph_t *g = tu_parse(NULL, s);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *out[3] = {0};
    if (smelt_graph_run_reference(ctx, g, NULL, 0, out, 3) != SMELT_OK)
        fail_msg("quantize: %s", smelt_ctx_error(ctx));
    for (int64_t i = 0; i < d->m * d->k; i++)
        d->qa[i] = smelt_tensor_get_f64(out[0], i);
    d->sa = (double)(float)smelt_tensor_get_f64(out[1], 0);
    d->za = smelt_tensor_get_f64(out[2], 0);
    for (int i = 0; i < 3; i++)
        smelt_tensor_free(out[i]);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The graph of case t (loss: sum of w * y) into s; fills d. */
static void build(const qg_case *t, qg_data *d, char *s, size_t cap,
                  unsigned seed)
{
    int f32a = !strcmp(t->a_dt, "f32");
    d->k = t->a_dims[t->a_rank - 1];
    d->m = 1;
    for (int i = 0; i < t->a_rank - 1; i++)
        d->m *= t->a_dims[i];
    d->n = t->n;
    int64_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n;
    d->a = calloc((size_t)mk, sizeof(double));
    d->qa = calloc((size_t)mk, sizeof(double));
    d->c = calloc((size_t)mk, sizeof(double));
    d->b = calloc((size_t)kn, sizeof(double));
    d->zb = calloc((size_t)d->n, sizeof(double));
    d->sb = calloc((size_t)d->n, sizeof(double));
    d->bias = calloc((size_t)d->n, sizeof(double));
    d->w = calloc((size_t)mn, sizeof(double));
    d->res = calloc((size_t)mn, sizeof(double));
    int bu8 = !strcmp(t->b_dt, "u8"), au8 = !strcmp(t->a_dt, "u8");
    for (int64_t i = 0; i < kn; i++)
        d->b[i] = bu8 ? val((unsigned)i, seed, 0, 255, 1)
                      : val((unsigned)i, seed, -127, 127, 1);
    for (int64_t j = 0; j < d->n; j++) {
        d->zb[j] =
            t->zb ? (bu8 ? 128 + (double)(j % 5) : (double)(j % 3) - 1) : 0;
        d->sb[j] = 0.004 + 0.001 * (double)(j % 4);
        d->bias[j] = 0.3 * (double)(j % 5) - 0.5;
    }
    d->n_sb = t->sb_per ? d->n : 1;
    d->n_bias = t->bias == 2 ? d->n : t->bias;
    for (int64_t i = 0; i < mn; i++) {
        d->w[i] = 0.5 + 0.1 * (double)(i % 7);
        d->res[i] =
            t->res ? (double)(float)val((unsigned)i, seed + 5, -1, 1, 0) : 0;
    }
    size_t len = (size_t)snprintf(s, cap, "graph g() {\n");
    char atext[QCAP];
    if (f32a) {
        for (int64_t i = 0; i < mk; i++)
            d->a[i] = (double)(float)val((unsigned)i, seed + 9, -2.0, 3.0, 0);
        put_const(atext, sizeof atext, "a", "f32", (int64_t[]){mk}, 1, d->a, 0);
        quantize_a(atext, d);
        for (int64_t i = 0; i < mk; i++)
            d->c[i] = (d->qa[i] - d->za) - d->a[i] / d->sa;
    } else {
        for (int64_t i = 0; i < mk; i++)
            d->qa[i] = au8 ? val((unsigned)i, seed + 9, 0, 255, 1)
                           : val((unsigned)i, seed + 9, -128, 127, 1);
        d->sa = (double)0.03f;
        d->za = au8 ? 120 : -7;
    }
    len += put_const(s + len, cap - len, "a", t->a_dt, t->a_dims, t->a_rank,
                     f32a ? d->a : d->qa, !f32a);
    len += put_const(s + len, cap - len, "b", t->b_dt, (int64_t[]){d->k, d->n},
                     2, d->b, 1);
    len += put_const(s + len, cap - len, "sb", "f32", &d->n, t->sb_per ? 1 : 0,
                     d->sb, 0);
    if (t->zb)
        len += put_const(s + len, cap - len, "zb", t->b_dt, &d->n, 1, d->zb, 1);
    if (t->bias)
        len += put_const(s + len, cap - len, "bias", "f32", &d->n, t->bias == 2,
                         d->bias, 0);
    if (!f32a) {
        len += put_const(s + len, cap - len, "sa", "f32", NULL, 0, &d->sa, 0);
        len += put_const(s + len, cap - len, "za", t->a_dt, NULL, 0, &d->za, 1);
    }
    int64_t yd[3];
    memcpy(yd, t->a_dims, sizeof yd);
    yd[t->a_rank - 1] = d->n;
    len += put_const(s + len, cap - len, "w", "f32", yd, t->a_rank, d->w, 0);
    if (t->res)
        len += put_const(s + len, cap - len, "res", "f32", yd, t->a_rank,
                         d->res, 0);
    len += (size_t)snprintf(
        s + len, cap - len,
        "  %%y = FusedQMatMul(%%a, %%b, %%sb, %s, %s%s%s) {activation = "
        "\"%s\"}\n  %%l = Mul(%%y, %%w)\n  return %%l\n}\n",
        t->zb ? "%zb" : "_", t->bias ? "%bias" : "_",
        f32a ? (t->res ? ", _, _" : "") : ", %sa, %za", t->res ? ", %res" : "",
        t->act);
    assert_true(len < cap - 1);
}

static void free_data(qg_data *d)
{
    free(d->a);
    free(d->qa);
    free(d->c);
    free(d->b);
    free(d->zb);
    free(d->sb);
    free(d->bias);
    free(d->w);
    free(d->res);
}

/* The value of d named name, its element count. */
static double *param(const qg_case *t, qg_data *d, const char *name, int64_t *n)
{
    if (!strcmp(name, "a")) {
        *n = d->m * d->k;
        return d->a;
    }
    if (!strcmp(name, "sb")) {
        *n = d->n_sb;
        return d->sb;
    }
    if (!strcmp(name, "bias")) {
        *n = d->n_bias;
        return d->bias;
    }
    if (!strcmp(name, "res")) {
        *n = d->m * d->n;
        return d->res;
    }
    (void)t;
    *n = 1;
    return &d->sa;
}

/* Each gradient of the joint graph against central differences of the
 * model (the surrogate for an f32 A), step h relative to the value. */
static void check_case(const qg_case *t, unsigned seed)
{
    qg_data d;
    char *s = malloc(QCAP);
    build(t, &d, s, QCAP, seed);
    int f32a = !strcmp(t->a_dt, "f32");
    const char *wrt[4];
    int n_wrt = 0;
    wrt[n_wrt++] = f32a ? "a" : "sa";
    wrt[n_wrt++] = "sb";
    if (t->bias)
        wrt[n_wrt++] = "bias";
    if (t->res)
        wrt[n_wrt++] = "res";
    smelt_graph_t *g = tu_parse(NULL, s);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *j = joint_of(ctx, g, wrt, n_wrt);
    smelt_tensor_t *out[8] = {0};
    int n_out = smelt_graph_num_outputs(j);
    assert_true(n_out <= 8);
    if (smelt_graph_run_reference(ctx, j, NULL, 0, out, n_out) != SMELT_OK)
        fail_msg("run joint: %s", smelt_ctx_error(ctx));
    double loss = 0;
    smelt_tensor_t *lo = out[smelt_graph_loss_output(j)];
    for (int64_t i = 0; i < smelt_tensor_numel(lo); i++)
        loss += smelt_tensor_get_f64(lo, i);
    double want = model(t, &d, 0);
    if (fabs(loss - want) > 1e-4 * (1 + fabs(want)))
        fail_msg("%s: loss %.9g, model %.9g", s, loss, want);
    assert_int_equal(smelt_graph_num_grads(j), n_wrt);
    for (int k = 0; k < smelt_graph_num_grads(j); k++) {
        const char *name = smelt_graph_grad_wrt(j, k);
        smelt_tensor_t *dv = out[smelt_graph_grad_output(j, k)];
        int64_t n;
        double *v = param(t, &d, name, &n);
        assert_int_equal(smelt_tensor_numel(dv), n);
        double big = 0;
        for (int64_t i = 0; i < n; i++)
            big = fmax(big, fabs(smelt_tensor_get_f64(dv, i)));
        for (int64_t i = 0; i < n; i++) {
            double keep = v[i], h = 1e-4 * fmax(fabs(keep), 1e-2);
            v[i] = keep + h;
            double up = model(t, &d, 1);
            v[i] = keep - h;
            double dn = model(t, &d, 1);
            v[i] = keep;
            double num = (up - dn) / (2 * h);
            double ana = smelt_tensor_get_f64(dv, i);
            if (fabs(ana - num) > 1e-4 * big + 2e-3 * fabs(num))
                fail_msg("%s: d/d%s[%lld]: analytic %.9g, numeric %.9g", s,
                         name, (long long)i, ana, num);
        }
    }
    for (int i = 0; i < n_out; i++)
        smelt_tensor_free(out[i]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    free_data(&d);
    free(s);
}

static const qg_case cases[] = {
    {"f32", 2, {4, 7}, 5, "i8", 0, 1, 2, "none"},
    {"f32", 3, {2, 3, 6}, 9, "u8", 1, 0, 1, "gelu"},
    {"f32", 1, {11}, 3, "i8", 1, 1, 0, "relu"},
    {"f32", 2, {1, 1}, 1, "u8", 0, 0, 2, "none"},
    {"u8", 2, {5, 4}, 3, "i8", 0, 1, 2, "relu"},
    {"i8", 3, {2, 2, 13}, 6, "u8", 1, 1, 1, "gelu"},
    {"u8", 1, {6}, 4, "u8", 1, 0, 0, "none"},
    {"f32", 3, {2, 3, 6}, 9, "i8", 0, 1, 2, "gelu", 1},
    {"u8", 2, {5, 4}, 3, "i8", 1, 1, 0, "none", 1},
    {"f32", 2, {3, 5}, 4, "u8", 1, 0, 1, "relu", 1},
};

static void test_rule(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i], (unsigned)i + 1);
}

/* The joint graph compiled at -O2 (its FusedQMatMul steps on the int8
 * kernels) gives the reference interpreter's outputs. */
static void test_plan(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i += 2) {
        qg_data d;
        char *s = malloc(QCAP);
        build(&cases[i], &d, s, QCAP, (unsigned)i + 1);
        const char *wrt[] = {!strcmp(cases[i].a_dt, "f32") ? "a" : "sa", "sb"};
        assert_true(check_plan(s, wrt, 2, 2, 1e-5) > 0);
        free_data(&d);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
