/*
 * test_gradcheck_ops.c - smelt_gradcheck over every op of the table, on
 * the op's own cases (tests/ops/<Op>_*: model.ir and input_<i>.npy, the
 * odd shapes, broadcasting and attributes scripts/gen_op_tests.py made).
 *
 * - An op with a gradient rule: each case with a float input is checked
 *   with respect to every float input (loss: the sum of the first float
 *   output) against float64 central differences, eps 1e-6, atol 1e-5,
 *   rtol 1e-3, at most 128 elements per value. Any value out of
 *   tolerance fails the test, naming the op, the case and the element.
 *   Float inputs that configure an op (Resize's scales, Dropout's ratio:
 *   config_inputs below) are bound as constants instead. Cases whose
 *   inputs or outputs hold inf or nan are left out and counted, and so
 *   are cases a rule declines by name with SMELT_ERR_UNSUPPORTED (an
 *   attribute value it does not differentiate, such as Scatter's
 *   reduction 'max'); every other failure to build or run fails.
 * - An op marked sm_grad_todo is skipped and counted (the list prints).
 * - An op whose rule differentiates a surrogate on purpose (FakeQuantize's
 *   straight-through rule: surrogate_rules below) is named with its
 *   reason; its own test checks the rule against the surrogate.
 * - An op marked sm_grad_zero or sm_grad_none: the marking is checked
 *   numerically on the widened (f64) case. Moving any float input
 *   element by eps up or down must leave every float output unchanged on
 *   at least one side (derivative zero almost everywhere: a step of
 *   Floor or Round sits on one side only); an op with no float input or
 *   no float output passes as it is.
 *
 * Kinks: cases sit on points where the forward is not differentiable
 * (relu at 0, ties of Max, Clip at its bounds). smelt_gradcheck leaves
 * out each element where the one-sided differences (f(x+eps) - f(x)) /
 * eps and (f(x) - f(x-eps)) / eps disagree beyond the tolerance (no
 * derivative exists there) and counts it; inputs are used unchanged, so
 * the choice is deterministic. A value whose every element sits on a
 * kink fails: it would check nothing.
 *
 * SMELT_GRAD_OP=<Op> restricts the run to one op.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#include "autograd/grad.h"
#include "autograd/promote.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "ir/op.h"

#define OPS_DIR SMELT_TEST_DIR "/ops"
#define MAX_IO 32
#define SAMPLES 128 /* elements checked per value at most */

/* Markings the numeric check disputes that the table keeps on purpose,
 * each with its reason; they print as "known", never pass silently. */
static const struct {
    const char *op, *why;
} known_markings[] = {
    {"Range", "a float Range's elements move with start and delta, but "
              "like torch.arange it is a shape path and gets no gradient"},
    {"DynamicQuantizeLinear",
     "its f32 y_scale moves with the range of x, but quantization "
     "parameters computed from the data get no gradient"},
    {"AttentionGrad",
     "Attention's backward: its outputs move with every input, but no "
     "second derivative of attention is provided (a gradient through it "
     "stops there, and smelt_graph_grad names the node)"},
};

/* Rules that differentiate a surrogate on purpose, not the op: central
 * differences of the op cannot check them, their own test checks them
 * against the surrogate's; they print as "surrogate". */
static const struct {
    const char *op, *why;
} surrogate_rules[] = {
    {"FakeQuantize",
     "straight-through (round has derivative 1) and LSQ for the scale; "
     "test_grad_fakequant checks them against the surrogate's central "
     "differences"},
    {"FusedQMatMul",
     "an f32 A's gradient is straight-through (its quantization frozen), "
     "and the op runs in f32 only, not on the widened f64 cases; "
     "test_grad_qmatmul checks every gradient against an f64 model's "
     "central differences"},
};

static const char *surrogate_rule(const char *op)
{
    for (size_t i = 0; i < sizeof surrogate_rules / sizeof *surrogate_rules;
         i++)
        if (!strcmp(surrogate_rules[i].op, op))
            return surrogate_rules[i].why;
    return NULL;
}

static const char *known_marking(const char *op)
{
    for (size_t i = 0; i < sizeof known_markings / sizeof *known_markings; i++)
        if (!strcmp(known_markings[i].op, op))
            return known_markings[i].why;
    return NULL;
}

/* Float inputs that configure an op rather than feed its values: they
 * get no gradient (as in PyTorch, where they are Python numbers or
 * non-differentiable arguments) and are bound as constants, not checked;
 * and RoiAlign's boxes, whose values its rule reads when sampling_ratio
 * is 0. */
static const struct {
    const char *op;
    int input;
    const char *why;
} config_inputs[] = {
    {"Resize", 1, "roi: coordinates of the crop"},
    {"Resize", 2, "scales: the output size"},
    {"Upsample", 1, "scales: the output size"},
    {"Dropout", 1, "ratio: a probability"},
    {"RoiAlign", 1,
     "rois: boxes, bound so that sampling_ratio 0 builds (the rule needs "
     "their values); test_grad_roialign checks their gradient"},
};

static int config_input(const char *op, int i)
{
    for (size_t k = 0; k < sizeof config_inputs / sizeof *config_inputs; k++)
        if (!strcmp(config_inputs[k].op, op) && config_inputs[k].input == i)
            return 1;
    return 0;
}

/* Cases where float64 finite differences cannot see the derivative,
 * left out and counted with their reason. */
static const struct {
    const char *name, *why;
} blind_cases[] = {
    {"Attention_float_min_row",
     "a row masked with -3.4e38: the mask swamps every score even in "
     "float64, so the row is constant to finite differences, while the "
     "softmax (invariant to a shift) still has its derivative"},
};

static const char *blind_case(const char *name)
{
    for (size_t i = 0; i < sizeof blind_cases / sizeof *blind_cases; i++)
        if (!strcmp(blind_cases[i].name, name))
            return blind_cases[i].why;
    return NULL;
}

typedef struct tally {
    int ops_checked, cases_checked, values_checked, domain;
    int todo, marked_ok, failed, unsupported;
    char unsupported_list[4096];
    char todo_list[4096];
    char failed_list[4096];
} tally;

static void list_add(char *list, size_t size, const char *s)
{
    size_t n = strlen(list);
    snprintf(list + n, size - n, "%s%s", n ? " " : "", s);
}

/* Case directories of op (name prefix "<Op>_"), sorted. */
static int list_cases(const char *op, char names[][256], int cap)
{
    DIR *dir = opendir(OPS_DIR);
    if (!dir)
        fail_msg("cannot open %s", OPS_DIR);
    size_t len = strlen(op);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && n < cap)
        if (!strncmp(e->d_name, op, len) && e->d_name[len] == '_')
            snprintf(names[n++], 256, "%s", e->d_name);
    closedir(dir);
    qsort(names, (size_t)n, sizeof names[0],
          (int (*)(const void *, const void *))strcmp);
    return n;
}

typedef struct op_case {
    smelt_graph_t *g;
    smelt_tensor_t *in[MAX_IO];
    int n_in;
} op_case;

static void case_free(op_case *c)
{
    for (int i = 0; i < c->n_in; i++)
        smelt_tensor_free(c->in[i]);
    smelt_graph_free(c->g);
}

/* Loads a case's graph (inferred) and its input files. */
static void case_load(smelt_ctx_t *ctx, const char *name, op_case *c)
{
    char path[1024];
    memset(c, 0, sizeof *c);
    snprintf(path, sizeof path, "%s/%s/model.ir", OPS_DIR, name);
    if (smelt_graph_load(ctx, path, &c->g) != SMELT_OK ||
        smelt_graph_infer(ctx, c->g) != SMELT_OK)
        fail_msg("%s: %s", name, smelt_ctx_error(ctx));
    c->n_in = smelt_graph_num_inputs(c->g);
    assert_true(c->n_in <= MAX_IO);
    for (int i = 0; i < c->n_in; i++) {
        snprintf(path, sizeof path, "%s/%s/input_%d.npy", OPS_DIR, name, i);
        if (smelt_npy_load(ctx, path, &c->in[i]) != SMELT_OK)
            fail_msg("%s: %s", name, smelt_ctx_error(ctx));
    }
}

static int first_float_output(const smelt_graph_t *g)
{
    for (int i = 0; i < smelt_graph_num_outputs(g); i++)
        if (sm_dtype_is_float(smelt_graph_output_dtype(g, i)))
            return i;
    return -1;
}

static int all_finite(const smelt_tensor_t *t)
{
    if (!sm_dtype_is_float(t->dtype))
        return 1;
    for (int64_t k = 0; k < t->numel; k++)
        if (!isfinite(smelt_tensor_get_f64(t, k)))
            return 0;
    return 1;
}

/* Whether every float input and output of the case is finite: cases of
 * special values (log(0), x/0, exp(inf)) test the forward's edges, where
 * no derivative is to be checked. */
static int finite_case(smelt_ctx_t *ctx, op_case *c)
{
    int ok = 1, n_out = smelt_graph_num_outputs(c->g);
    smelt_tensor_t *out[MAX_IO] = {0};
    assert_true(n_out <= MAX_IO);
    for (int i = 0; i < c->n_in; i++)
        ok &= all_finite(c->in[i]);
    if (smelt_graph_run_reference(ctx, c->g, c->in, c->n_in, out, n_out) !=
        SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    for (int i = 0; i < n_out; i++) {
        ok &= all_finite(out[i]);
        smelt_tensor_free(out[i]);
    }
    return ok;
}

/* gradcheck of one case of an op with a rule: returns 1 when it ran a
 * check (0: no float input or output to check), failing the test's
 * tally on any value out of tolerance. */
static int check_case(smelt_ctx_t *ctx, const char *op, const char *name,
                      tally *t)
{
    op_case c;
    case_load(ctx, name, &c);
    const char *wrt[MAX_IO];
    int n_wrt = 0;
    for (int i = 0; i < c.n_in; i++)
        if (sm_dtype_is_float(smelt_tensor_dtype(c.in[i])) &&
            !config_input(op, i))
            wrt[n_wrt++] = smelt_graph_input_name(c.g, i);
    int out = first_float_output(c.g);
    if (!n_wrt || out < 0) {
        case_free(&c);
        return 0;
    }
    if (!finite_case(ctx, &c)) {
        print_message("  %s: skipped: an input or output is inf or nan "
                      "(outside the differentiable domain)\n",
                      name);
        t->domain++;
        case_free(&c);
        return 0;
    }
    const char *blind = blind_case(name);
    if (blind) {
        print_message("  %s: skipped: %s\n", name, blind);
        t->domain++;
        case_free(&c);
        return 0;
    }
    smelt_gradcheck_options o;
    assert_int_equal(smelt_gradcheck_options_default(&o), SMELT_OK);
    o.inputs = c.in;
    o.n_inputs = c.n_in;
    o.wrt = wrt;
    o.n_wrt = n_wrt;
    o.loss = smelt_graph_output_name(c.g, out);
    o.samples = SAMPLES;
    smelt_gradcheck_report_t *r = NULL;
    smelt_status st = smelt_gradcheck(ctx, c.g, &o, &r);
    if (st == SMELT_ERR_UNSUPPORTED) {
        /* a case the rule declines by name (an attribute value it does
         * not differentiate): counted and listed, not a wrong gradient */
        print_message("  unsupported %s: %s\n", name, smelt_ctx_error(ctx));
        t->unsupported++;
        list_add(t->unsupported_list, sizeof t->unsupported_list, name);
        case_free(&c);
        return 1;
    }
    if (st != SMELT_OK) {
        print_error("FAIL %s: gradcheck could not run: %s\n", name,
                    smelt_ctx_error(ctx));
        t->failed++;
        list_add(t->failed_list, sizeof t->failed_list, name);
        case_free(&c);
        return 1;
    }
    int bad = 0;
    for (int k = 0; k < smelt_gradcheck_num_values(r); k++) {
        smelt_gradcheck_value v = SMELT_STRUCT_INIT(smelt_gradcheck_value);
        assert_int_equal(smelt_gradcheck_get(r, k, &v), SMELT_OK);
        t->values_checked++;
        if (!v.passed) {
            print_error("FAIL %s: d/d%s[%lld]: analytic %.9g, numeric %.9g "
                        "(max abs err %.3g)\n",
                        name, v.name, (long long)v.worst, v.worst_analytic,
                        v.worst_numeric, v.max_abs_err);
            bad = 1;
        } else if (v.checked == 0 && v.kinks > 0) {
            print_error("FAIL %s: every element of %s sits on a kink: "
                        "nothing was checked\n",
                        name, v.name);
            bad = 1;
        } else if (v.kinks) {
            print_message("  %s: %s: %lld elements at kinks left out\n", name,
                          v.name, (long long)v.kinks);
        }
    }
    if (bad) {
        t->failed++;
        list_add(t->failed_list, sizeof t->failed_list, name);
    }
    smelt_gradcheck_report_free(r);
    case_free(&c);
    return 1;
}

/* Runs graph g (f64) on in and returns its outputs in out. */
static void run(smelt_ctx_t *ctx, smelt_graph_t *g, smelt_tensor_t **in,
                int n_in, smelt_tensor_t **out, int n_out)
{
    if (smelt_graph_run_reference(ctx, g, in, n_in, out, n_out) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
}

/* Whether some float output element of b moved from a by a slope's
 * amount: more than nothing, at most SLOPE_MAX (an input step of 1e-6
 * times a derivative up to 1000). A step (Floor at an integer, Sign at
 * 0) moves it by far more, an unchanged output not at all. */
#define SLOPE_MAX 1e-3
static int moved_by_slope(smelt_tensor_t **a, smelt_tensor_t **b, int n)
{
    for (int i = 0; i < n; i++) {
        if (!sm_dtype_is_float(a[i]->dtype) || a[i]->numel != b[i]->numel)
            continue;
        for (int64_t k = 0; k < a[i]->numel; k++) {
            double d = fabs(smelt_tensor_get_f64(a[i], k) -
                            smelt_tensor_get_f64(b[i], k));
            if (d > 0 && d <= SLOPE_MAX)
                return 1;
        }
    }
    return 0;
}

static void free_all(smelt_tensor_t **t, int n)
{
    for (int i = 0; i < n; i++) {
        smelt_tensor_free(t[i]);
        t[i] = NULL;
    }
}

/* The numeric check of a none/zero marking on one case: 1 when the
 * marking holds, 0 after printing the element that breaks it (`known`:
 * the reason the table keeps the marking anyway). */
static int check_marking(smelt_ctx_t *ctx, const char *name, const char *known)
{
    op_case c;
    case_load(ctx, name, &c);
    int n_out = smelt_graph_num_outputs(c.g), n_float_in = 0;
    for (int i = 0; i < c.n_in; i++)
        n_float_in += sm_dtype_is_float(smelt_tensor_dtype(c.in[i]));
    if (first_float_output(c.g) < 0 || !n_float_in) {
        case_free(&c);
        return 1;
    }
    assert_true(n_out <= MAX_IO);
    if (sm_graph_promote_f64(ctx, c.g) != SMELT_OK)
        fail_msg("%s: promote: %s", name, smelt_ctx_error(ctx));
    for (int i = 0; i < c.n_in; i++) {
        sm_tensor *w = NULL;
        assert_int_equal(sm_tensor_promote_f64(ctx, c.in[i], &w), SMELT_OK);
        smelt_tensor_free(c.in[i]);
        c.in[i] = w;
    }
    smelt_tensor_t *base[MAX_IO] = {0}, *up[MAX_IO] = {0}, *dn[MAX_IO] = {0};
    run(ctx, c.g, c.in, c.n_in, base, n_out);
    int ok = 1;
    for (int i = 0; ok && i < c.n_in; i++) {
        if (smelt_tensor_dtype(c.in[i]) != SMELT_DTYPE_F64)
            continue;
        double *x = smelt_tensor_data(c.in[i]);
        for (int64_t k = 0; ok && k < smelt_tensor_numel(c.in[i]); k++) {
            double keep = x[k];
            x[k] = keep + 1e-6;
            run(ctx, c.g, c.in, c.n_in, up, n_out);
            x[k] = keep - 1e-6;
            run(ctx, c.g, c.in, c.n_in, dn, n_out);
            x[k] = keep;
            if (moved_by_slope(base, up, n_out) ||
                moved_by_slope(base, dn, n_out)) {
                print_error("%s %s: moving input %d element %lld by 1e-6 "
                            "moves a float output by a slope's amount: the "
                            "op is differentiable there%s%s\n",
                            known ? "known" : "FAIL", name, i, (long long)k,
                            known ? "; " : "", known ? known : "");
                ok = 0;
            }
            free_all(up, n_out);
            free_all(dn, n_out);
        }
    }
    free_all(base, n_out);
    case_free(&c);
    return ok;
}

static void test_every_op(void **state)
{
    (void)state;
    static char cases[64][256];
    tally t;
    memset(&t, 0, sizeof t);
    const char *only = getenv("SMELT_GRAD_OP");
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (int op = 0; op < SM_OP_COUNT; op++) {
        const char *name = sm_op_info_get((sm_op)op)->name;
        if (only && strcmp(only, name))
            continue;
        sm_grad_fn rule = sm_grad_rule((sm_op)op);
        if (rule == sm_grad_todo) {
            t.todo++;
            list_add(t.todo_list, sizeof t.todo_list, name);
            continue;
        }
        int n = list_cases(name, cases, 64);
        if (rule == sm_grad_none || rule == sm_grad_zero) {
            const char *known = known_marking(name);
            int ok = 1;
            for (int i = 0; i < n; i++)
                ok &= check_marking(ctx, cases[i], known);
            if (ok || known) {
                t.marked_ok += ok;
            } else {
                t.failed++;
                list_add(t.failed_list, sizeof t.failed_list, name);
            }
            continue;
        }
        const char *sur = surrogate_rule(name);
        if (sur) {
            print_message("  surrogate %s: %s\n", name, sur);
            continue;
        }
        int ran = 0;
        for (int i = 0; i < n; i++)
            ran += check_case(ctx, name, cases[i], &t);
        t.cases_checked += ran;
        t.ops_checked++;
        if (!ran)
            print_message("  %s: no case has a float input and output to "
                          "check\n",
                          name);
    }
    smelt_ctx_free(ctx);
    print_message("gradcheck: %d ops with rules (%d cases, %d values; %d "
                  "cases of inf/nan left out), %d none/zero markings "
                  "confirmed, %d ops skipped (sm_grad_todo)\n",
                  t.ops_checked, t.cases_checked, t.values_checked, t.domain,
                  t.marked_ok, t.todo);
    if (t.todo)
        print_message("skipped, no rule yet: %s\n", t.todo_list);
    if (t.unsupported)
        print_message("%d cases the rules decline (SMELT_ERR_UNSUPPORTED): "
                      "%s\n",
                      t.unsupported, t.unsupported_list);
    if (t.failed)
        fail_msg("%d failed: %s", t.failed, t.failed_list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
