/*
 * test_grad_movement.c - gradient rules of the data-movement and indexing
 * ops (src/autograd/rules_movement.c, rules_index.c) against float64
 * central differences: odd shapes, negative axes and indices, repeated
 * gather indices, steps of -1 and 2, every mode that changes the math,
 * every input that can take a gradient; int shape paths that need none;
 * and a joint graph (head split and embedding lookup) compiled into a
 * plan that gives the reference's numbers.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gradutil.h"

typedef grad_leaf leaf;

/* The graph text: the leaves (distinct values, no ties, so TopK and
 * max-like selections are stable under eps), then body, which defines
 * %y; the output is y * y, so every element of the gradient differs. */
static char *graph_text(const leaf *l, int n_leaf, const char *body)
{
    return leaf_graph_text(l, n_leaf, 1.5, 0.7, 0.01, body,
                           "  %z = Mul(%y, %y)\n  return %z\n");
}

/* check_graph with the gradients taken with respect to the leaves only
 * (float constants such as a resize's scales are not differentiated):
 * the number of gradient elements checked. */
static int check_wrt(const char *text, const leaf *l, int n_leaf,
                     smelt_tensor_t *const *in, int n_in)
{
    const char *names[8];
    assert_true(n_leaf <= 8);
    for (int k = 0; k < n_leaf; k++)
        names[k] = l[k].name;
    return check_graph(text, names, n_leaf, in, n_in);
}

/* Checks every gradient of the graph; every leaf element is checked. */
static void check(const leaf *l, int n_leaf, const char *body)
{
    char *t = graph_text(l, n_leaf, body);
    int want = 0;
    for (int k = 0; k < n_leaf; k++)
        want += l[k].n;
    int got = check_wrt(t, l, n_leaf, NULL, 0);
    if (got != want)
        fail_msg("checked %d gradient elements, expected %d in\n%s", got, want,
                 t);
    free(t);
}

#define CHECK1(name, type, n, body)                                            \
    do {                                                                       \
        leaf l_[1] = {{name, type, n}};                                        \
        check(l_, 1, body);                                                    \
    } while (0)

static void test_reshapes(void **state)
{
    (void)state;
    CHECK1("x", "f64[2,3,4]", 24,
           "  %s: i64[2] = const [4, -1]\n"
           "  %a = Reshape(%x, %s)\n"
           "  %ua: i64[2] = const [0, -1]\n"
           "  %b = Unsqueeze(%a, %ua)\n"
           "  %sa: i64[1] = const [0]\n"
           "  %c = Squeeze(%b, %sa)\n"
           "  %d = Transpose(%c)\n"
           "  %e = Transpose(%d) {perm = [2, 0, 1]}\n"
           "  %f = Flatten(%e) {axis = 2}\n"
           "  %g = Unsqueeze(%f) {axes = [1]}\n"
           "  %y = Squeeze(%g)\n");
    /* a shape computed through an int path: Shape -> Gather -> Concat ->
     * Reshape needs no gradient of its own */
    CHECK1("x", "f64[3,5]", 15,
           "  %sh = Shape(%x)\n"
           "  %i: i64[1] = const [1]\n"
           "  %n = Gather(%sh, %i)\n"
           "  %m: i64[1] = const [-1]\n"
           "  %s = Concat(%n, %m) {axis = 0}\n"
           "  %y = Reshape(%x, %s)\n");
}

static void test_concat_split(void **state)
{
    (void)state;
    leaf l[3] = {
        {"a", "f64[2,3]", 6}, {"b", "f64[2,1]", 2}, {"c", "f64[2,2]", 4}};
    check(l, 3, "  %y = Concat(%a, %b, %c, %a) {axis = -1}\n");
    /* a symbolic size: Compress keeps a number of columns known only
     * when running, so the offsets come from Shape */
    leaf s[2] = {{"a", "f64[2,5]", 10}, {"b", "f64[2,2]", 4}};
    check(s, 2,
          "  %zero: f64[] = const [0]\n"
          "  %row: i64[] = const [0]\n"
          "  %r0 = Gather(%a, %row) {axis = 0}\n"
          "  %keep = Greater(%r0, %zero)\n"
          "  %k = Compress(%a, %keep) {axis = 1}\n"
          "  %y = Concat(%b, %k, %b) {axis = 1}\n");
    CHECK1("x", "f64[5,3]", 15,
           "  %sp: i64[3] = const [1, 3, 1]\n"
           "  %p, %q, %r = Split(%x, %sp) {axis = -2}\n"
           "  %y = Concat(%r, %p) {axis = 0}\n");
    CHECK1("x", "f64[2,6]", 12,
           "  %p, %q = Split(%x) {axis = 1, split = [2, 4]}\n"
           "  %y = Identity(%q)\n");
}

/* Sizes only known when running (a graph input of symbolic size n):
 * Concat's offsets come from Shape, Slice and Tile go by the index map,
 * Gather's zeros take their shape from Shape. */
static void test_symbolic(void **state)
{
    (void)state;
    const char *t =
        "graph t(%x: f64[n,3]) {\n"
        "  %w: f64[2,3] = const [0.5, -1.0, 2.0, 0.25, 1.5, -0.75]\n"
        "  %v: f64[1,3] = const [0.3, -0.2, 0.9]\n"
        "  %c = Concat(%w, %x, %v, %w) {axis = 0}\n"
        "  %st: i64[1] = const [1]\n"
        "  %en: i64[1] = const [-1]\n"
        "  %ax: i64[1] = const [0]\n"
        "  %s = Slice(%c, %st, %en, %ax)\n"
        "  %i: i64[4] = const [0, 2, 2, -1]\n"
        "  %ga = Gather(%s, %i) {axis = 1}\n"
        "  %r: i64[2] = const [2, 1]\n"
        "  %tl = Tile(%ga, %r)\n"
        "  %y = Exp(%tl)\n"
        "  return %y\n"
        "}\n";
    leaf l[2] = {{"w", "", 6}, {"v", "", 3}};
    smelt_tensor_t *x = NULL;
    int64_t dims[2] = {4, 3};
    assert_int_equal(smelt_tensor_init(NULL, SMELT_DTYPE_F64, 2, dims, &x),
                     SMELT_OK);
    double *p = smelt_tensor_data(x);
    for (int i = 0; i < 12; i++)
        p[i] = 0.1 * i - 0.55;
    assert_int_equal(check_wrt(t, l, 2, &x, 1), 9);
    /* a negative start on a symbolic axis (pads computed when running),
     * a step of 2 on one (the index map) */
    const char *u =
        "graph u(%x: f64[n,3]) {\n"
        "  %w: f64[2,3] = const [0.5, -1.0, 2.0, 0.25, 1.5, -0.75]\n"
        "  %c = Concat(%x, %w) {axis = 0}\n"
        "  %s0: i64[1] = const [-3]\n"
        "  %e0: i64[1] = const [9223372036854775807]\n"
        "  %ax: i64[1] = const [0]\n"
        "  %a = Slice(%c, %s0, %e0, %ax)\n"
        "  %s1: i64[1] = const [1]\n"
        "  %e1: i64[1] = const [100]\n"
        "  %st: i64[1] = const [2]\n"
        "  %b = Slice(%c, %s1, %e1, %ax, %st)\n"
        "  %k = Concat(%a, %b) {axis = 0}\n"
        "  %y = Exp(%k)\n"
        "  return %y\n"
        "}\n";
    assert_int_equal(check_wrt(u, l, 1, &x, 1), 6);
    smelt_tensor_free(x);
}

/* Nodes of op in block b. */
static int count_op(const sm_block *b, sm_op op)
{
    int k = 0;
    for (int i = 0; i < b->n_nodes; i++)
        k += b->nodes[i]->op == op;
    return k;
}

/*
 * A packed weight cut into q, k, v pieces along axis 0 (2, 3 and 1 rows)
 * and its bias likewise: the gradients of the Slices are padded back and
 * summed, which -O2's concat_pads turns into one Concat each. The
 * gradients match central differences, the joint graph optimized at -O2
 * gives the reference's numbers before optimizing, and the step-2 Slices
 * of %u (whose gradients overlap when padded) keep their Pads.
 */
static void test_slice_partition(void **state)
{
    (void)state;
    const char *t =
        "graph qkv(%x: f64[4,4]) {\n"
        "  %w: f64[6,4] = const [0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8,\n"
        "    0.9, 0.15, -0.25, 0.35, 0.45, 0.55, -0.65, 0.75, 0.85, -0.95,\n"
        "    0.05, 0.12, -0.22, 0.32, 0.42, -0.52]\n"
        "  %b: f64[6] = const [0.3, -0.1, 0.2, 0.5, -0.4, 0.6]\n"
        "  %u: f64[12] = const [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,\n"
        "    1.0, 1.1, 1.2]\n"
        "  %ax: i64[1] = const [0]\n"
        "  %s0: i64[1] = const [0]\n"
        "  %e0: i64[1] = const [2]\n"
        "  %e1: i64[1] = const [5]\n"
        "  %e2: i64[1] = const [6]\n"
        "  %w0 = Slice(%w, %s0, %e0, %ax)\n"
        "  %w1 = Slice(%w, %e0, %e1, %ax)\n"
        "  %w2 = Slice(%w, %e1, %e2, %ax)\n"
        "  %b0 = Slice(%b, %s0, %e0, %ax)\n"
        "  %b1 = Slice(%b, %e0, %e1, %ax)\n"
        "  %b2 = Slice(%b, %e1, %e2, %ax)\n"
        "  %q = Gemm(%x, %w0, %b0) {transB = 1}\n"
        "  %k = Gemm(%x, %w1, %b1) {transB = 1}\n"
        "  %v = Gemm(%x, %w2, %b2) {transB = 1}\n"
        "  %tq = Tanh(%q)\n"
        "  %sk = Sin(%k)\n"
        "  %ev = Exp(%v)\n"
        "  %c = Concat(%tq, %sk, %ev) {axis = 1}\n"
        "  %one: i64[1] = const [1]\n"
        "  %e12: i64[1] = const [12]\n"
        "  %two: i64[1] = const [2]\n"
        "  %ue = Slice(%u, %s0, %e12, %ax, %two)\n"
        "  %uo = Slice(%u, %one, %e12, %ax, %two)\n"
        "  %uu = Mul(%ue, %uo)\n"
        "  %y = Add(%c, %uu)\n"
        "  %z = Mul(%y, %y)\n"
        "  return %z\n"
        "}\n";
    smelt_tensor_t *x = NULL;
    int64_t dims[2] = {4, 4};
    assert_int_equal(smelt_tensor_init(NULL, SMELT_DTYPE_F64, 2, dims, &x),
                     SMELT_OK);
    double *p = smelt_tensor_data(x);
    for (int i = 0; i < 16; i++)
        p[i] = 0.13 * i - 0.9;
    const char *wrt[3] = {"w", "b", "u"};
    assert_int_equal(check_graph(t, wrt, 3, &x, 1), 24 + 6 + 12);

    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(NULL, t);
    smelt_graph_t *j = joint_of(ctx, g, wrt, 3);
    int n_out = smelt_graph_num_outputs(j);
    smelt_tensor_t *want[8] = {0}, *got[8] = {0};
    assert_true(n_out <= 8);
    assert_int_equal(smelt_graph_run_reference(ctx, j, &x, 1, want, n_out),
                     SMELT_OK);
    int pads = count_op(((sm_graph *)j)->top, SM_OP_Pad);
    int concats = count_op(((sm_graph *)j)->top, SM_OP_Concat);
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = 2;
    assert_int_equal(smelt_graph_optimize(ctx, j, &o, NULL), SMELT_OK);
    /* w's and b's three Pads each are gone, u's step-2 Pads stay */
    assert_int_equal(count_op(((sm_graph *)j)->top, SM_OP_Pad), pads - 6);
    assert_true(pads - 6 > 0);
    assert_int_equal(count_op(((sm_graph *)j)->top, SM_OP_Concat), concats + 2);
    assert_int_equal(smelt_graph_run_reference(ctx, j, &x, 1, got, n_out),
                     SMELT_OK);
    for (int k = 0; k < n_out; k++) {
        assert_int_equal(smelt_tensor_numel(got[k]),
                         smelt_tensor_numel(want[k]));
        for (int64_t i = 0; i < smelt_tensor_numel(got[k]); i++)
            assert_true(fabs(smelt_tensor_get_f64(got[k], i) -
                             smelt_tensor_get_f64(want[k], i)) <= 1e-12);
        smelt_tensor_free(got[k]);
        smelt_tensor_free(want[k]);
    }
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    smelt_tensor_free(x);
}

static void test_slice(void **state)
{
    (void)state;
    /* steps 2 and -1, a negative start, a negative axis, clamped ends */
    CHECK1("x", "f64[5,7,3]", 105,
           "  %st: i64[3] = const [1, -1, -100]\n"
           "  %en: i64[3] = const [100, -9223372036854775808, 100]\n"
           "  %ax: i64[3] = const [0, 1, -1]\n"
           "  %sp: i64[3] = const [2, -1, 1]\n"
           "  %y = Slice(%x, %st, %en, %ax, %sp)\n");
    /* step -2 from a clamped start, step 3, offset ends */
    CHECK1("x", "f64[6,8]", 48,
           "  %st: i64[2] = const [100, 1]\n"
           "  %en: i64[2] = const [0, 7]\n"
           "  %ax: i64[2] = const [0, 1]\n"
           "  %sp: i64[2] = const [-2, 3]\n"
           "  %y = Slice(%x, %st, %en, %ax, %sp)\n");
    /* no axes or steps; an axis read once with a huge step */
    CHECK1("x", "f64[4,5]", 20,
           "  %st: i64[2] = const [1, 2]\n"
           "  %en: i64[2] = const [-1, 3]\n"
           "  %y = Slice(%x, %st, %en)\n");
    /* ends known only when running: the index map */
    CHECK1("x", "f64[4,5]", 20,
           "  %sh = Shape(%x)\n"
           "  %one: i64[1] = const [1]\n"
           "  %en = Sub(%sh, %one)\n"
           "  %st: i64[2] = const [0, 1]\n"
           "  %y = Slice(%x, %st, %en)\n");
}

static void test_gather(void **state)
{
    (void)state;
    /* repeated and negative indices accumulate */
    CHECK1("x", "f64[3,4]", 12,
           "  %i: i64[2,2] = const [0, -1, 2, 0]\n"
           "  %y = Gather(%x, %i) {axis = 0}\n");
    CHECK1("x", "f64[2,5,3]", 30,
           "  %i: i32[3,2] = const [4, -1, 0, 4, 2, 2]\n"
           "  %y = Gather(%x, %i) {axis = -2}\n");
    CHECK1("x", "f64[2,3,4]", 24,
           "  %i: i64[] = const [3]\n"
           "  %y = Gather(%x, %i) {axis = 2}\n");
    CHECK1("x", "f64[3,4]", 12,
           "  %i: i64[3,4] = const [0, 1, 2, 0, 2, 2, 1, 0, -1, 0, 0, 1]\n"
           "  %y = GatherElements(%x, %i) {axis = 0}\n");
    CHECK1("x", "f64[3,4]", 12,
           "  %i: i64[3,2] = const [3, 3, 0, -4, 1, 2]\n"
           "  %y = GatherElements(%x, %i) {axis = -1}\n");
    CHECK1("x", "f64[3,4,2]", 24,
           "  %i: i64[3,2] = const [0, 1, 2, -1, 0, 1]\n"
           "  %y = GatherND(%x, %i)\n");
    CHECK1("x", "f64[2,3,4]", 24,
           "  %i: i64[2,2,1] = const [1, 1, 0, 2]\n"
           "  %y = GatherND(%x, %i) {batch_dims = 1}\n");
}

static void test_scatter(void **state)
{
    (void)state;
    /* repeated indices with no reduction: the last update wins, the
     * others get no gradient */
    leaf l[2] = {{"d", "f64[3,4]", 12}, {"u", "f64[2,3]", 6}};
    check(l, 2,
          "  %i: i64[2,3] = const [1, 0, 2, 1, 2, 2]\n"
          "  %y = ScatterElements(%d, %i, %u) {axis = 0}\n");
    check(l, 2,
          "  %i: i64[2,3] = const [1, 0, 2, 1, 2, 2]\n"
          "  %y = ScatterElements(%d, %i, %u) {axis = 0, reduction = "
          "\"add\"}\n");
    check(l, 2,
          "  %i: i64[2,3] = const [3, 0, -1, 1, 1, 2]\n"
          "  %y = Scatter(%d, %i, %u) {axis = -1}\n");
    leaf n[2] = {{"d", "f64[4,3]", 12}, {"u", "f64[3,3]", 9}};
    check(n, 2,
          "  %i: i64[3,1] = const [2, 0, 2]\n"
          "  %y = ScatterND(%d, %i, %u)\n");
    check(n, 2,
          "  %i: i64[3,1] = const [2, 0, -2]\n"
          "  %y = ScatterND(%d, %i, %u) {reduction = \"add\"}\n");
    leaf e[2] = {{"d", "f64[2,3]", 6}, {"u", "f64[2]", 2}};
    check(e, 2,
          "  %i: i64[2,2] = const [1, 2, 0, 0]\n"
          "  %y = ScatterND(%d, %i, %u)\n");
}

static void test_expand_tile_pad(void **state)
{
    (void)state;
    CHECK1("x", "f64[3,1]", 3,
           "  %s: i64[3] = const [2, 3, 4]\n"
           "  %y = Expand(%x, %s)\n");
    CHECK1("x", "f64[2,3,1]", 6,
           "  %r: i64[3] = const [2, 1, 3]\n"
           "  %y = Tile(%x, %r)\n");
    /* repeats known only when running: the index map */
    CHECK1("x", "f64[2,3]", 6,
           "  %r = Shape(%x)\n"
           "  %y = Tile(%x, %r)\n");
    leaf l[2] = {{"x", "f64[3,4]", 12}, {"v", "f64[]", 1}};
    /* a crop (negative pad) and a constant fill of its own */
    check(l, 2,
          "  %p: i64[4] = const [1, -1, 2, 2]\n"
          "  %y = Pad(%x, %p, %v)\n");
    check(l, 2,
          "  %p: i64[2] = const [-2, 3]\n"
          "  %a: i64[1] = const [-1]\n"
          "  %y = Pad(%x, %p, %v, %a)\n");
    CHECK1("x", "f64[3,4]", 12,
           "  %p: i64[4] = const [2, 3, 1, 3]\n"
           "  %y = Pad(%x, %p) {mode = \"reflect\"}\n");
    CHECK1("x", "f64[3,4]", 12,
           "  %p: i64[4] = const [2, -1, 1, 3]\n"
           "  %y = Pad(%x, %p) {mode = \"edge\"}\n");
    CHECK1("x", "f64[2,3]", 6,
           "  %p: i64[4] = const [1, 4, 3, 2]\n"
           "  %y = Pad(%x, %p) {mode = \"wrap\"}\n");
}

static void test_cumsum_trilu(void **state)
{
    (void)state;
    static const char *modes[] = {"", " {exclusive = 1}", " {reverse = 1}",
                                  " {exclusive = 1, reverse = 1}"};
    for (int m = 0; m < 4; m++) {
        char body[256];
        snprintf(body, sizeof body,
                 "  %%a: i64[] = const [-1]\n"
                 "  %%y = CumSum(%%x, %%a)%s\n",
                 modes[m]);
        CHECK1("x", "f64[3,5]", 15, body);
    }
    CHECK1("x", "f64[2,3,4]", 24,
           "  %k: i64[] = const [1]\n"
           "  %y = Trilu(%x, %k)\n");
    CHECK1("x", "f64[4,3]", 12,
           "  %k: i64[] = const [-1]\n"
           "  %y = Trilu(%x, %k) {upper = 0}\n");
    CHECK1("x", "f64[3,3]", 9, "  %y = Trilu(%x) {upper = 0}\n");
}

static void test_space_sequence(void **state)
{
    (void)state;
    CHECK1("x", "f64[1,8,2,3]", 48,
           "  %y = DepthToSpace(%x) {blocksize = 2}\n");
    CHECK1("x", "f64[2,4,1,3]", 24,
           "  %y = DepthToSpace(%x) {blocksize = 2, mode = \"CRD\"}\n");
    CHECK1("x", "f64[1,2,4,6]", 48,
           "  %y = SpaceToDepth(%x) {blocksize = 2}\n");
    CHECK1("x", "f64[4,3,2]", 24,
           "  %l: i64[3] = const [4, 1, 2]\n"
           "  %y = ReverseSequence(%x, %l) {batch_axis = 1, time_axis = 0}\n");
    CHECK1("x", "f64[3,5]", 15,
           "  %c: bool[4] = const [1, 0, 1, 1]\n"
           "  %y = Compress(%x, %c) {axis = -1}\n");
    CHECK1("x", "f64[3,5]", 15,
           "  %c: bool[7] = const [0, 1, 1, 0, 0, 1, 1]\n"
           "  %y = Compress(%x, %c)\n");
}

static void test_select(void **state)
{
    (void)state;
    CHECK1("x", "f64[3,5]", 15,
           "  %k: i64[1] = const [2]\n"
           "  %y, %i = TopK(%x, %k)\n");
    CHECK1("x", "f64[4,3]", 12,
           "  %k: i64[1] = const [3]\n"
           "  %y, %i = TopK(%x, %k) {axis = 0, largest = 0}\n");
    CHECK1("v", "f64[2]", 2,
           "  %i: i64[2,2] = const [0, 3, -1, 5]\n"
           "  %d: i64[] = const [4]\n"
           "  %y = OneHot(%i, %d, %v) {axis = 1}\n");
    /* per-tensor and per-axis scales */
    CHECK1("s", "f64[]", 1,
           "  %q: i8[2,3] = const [1, -5, 7, 0, 3, -2]\n"
           "  %zp: i8[] = const [2]\n"
           "  %y = DequantizeLinear(%q, %s, %zp)\n");
    CHECK1("s", "f64[3]", 3,
           "  %q: u8[2,3,2] = const [1, 5, 7, 0, 3, 2, 9, 4, 8, 6, 2, 1]\n"
           "  %zp: u8[3] = const [2, 0, 4]\n"
           "  %y = DequantizeLinear(%q, %s, %zp) {axis = -2}\n");
}

static void test_resize(void **state)
{
    (void)state;
    static const char *attrs[] = {
        "mode = \"nearest\"",
        "mode = \"linear\"",
        "mode = \"linear\", coordinate_transformation_mode = "
        "\"align_corners\"",
        "mode = \"cubic\"",
        "mode = \"nearest\", coordinate_transformation_mode = "
        "\"asymmetric\", nearest_mode = \"ceil\"",
    };
    for (int a = 0; a < 5; a++) {
        char body[512];
        snprintf(body, sizeof body,
                 "  %%sc: f64[4] = const [1.0, 1.0, 2.0, 1.5]\n"
                 "  %%y = Resize(%%x, _, %%sc) {%s}\n",
                 attrs[a]);
        CHECK1("x", "f64[1,2,3,4]", 24, body);
    }
    /* nearest by the index map: a coordinate mode that moves even at
     * scale 1, and sizes computed when running */
    CHECK1("x", "f64[1,2,3,4]", 24,
           "  %sc: f64[4] = const [1.0, 1.0, 2.0, 1.5]\n"
           "  %y = Resize(%x, _, %sc) {coordinate_transformation_mode = "
           "\"tf_half_pixel_for_nn\", nearest_mode = \"ceil\"}\n");
    CHECK1("x", "f64[2,3,4]", 24,
           "  %sh = Shape(%x)\n"
           "  %f: i64[3] = const [1, 2, 1]\n"
           "  %sz = Mul(%sh, %f)\n"
           "  %y = Resize(%x, _, _, %sz)\n");
    CHECK1("x", "f64[2,3,4]", 24,
           "  %sz: i64[3] = const [2, 5, 3]\n"
           "  %y = Resize(%x, _, _, %sz) {mode = \"linear\"}\n");
    CHECK1("x", "f64[1,1,2,3]", 6,
           "  %sc: f32[4] = const [1.0, 1.0, 2.0, 2.0]\n"
           "  %y = Upsample(%x, %sc) {mode = \"linear\"}\n");
    CHECK1("x", "f64[1,1,2,3]", 6,
           "  %y = Upsample(%x) {mode = \"nearest\", scales = [1.0, 1.0, "
           "3.0, 2.0]}\n");
}

/* Expects the gradient of text to fail naming want. */
static void expect_fail(const char *text, const char *want)
{
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_not_equal(smelt_graph_grad(ctx, g, NULL, &j), SMELT_OK);
    if (!strstr(smelt_ctx_error(ctx), want))
        fail_msg("error '%s' lacks '%s'", smelt_ctx_error(ctx), want);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_unsupported(void **state)
{
    (void)state;
    expect_fail("graph t() {\n"
                "  %x: f64[2,3] = const [1, 2, 3, 4, 5, 6]\n"
                "  %sc: f64[2] = const [1.0, 2.0]\n"
                "  %y = Resize(%x, _, %sc) {mode = \"linear\", "
                "coordinate_transformation_mode = \"tf_half_pixel_for_nn\"}\n"
                "  return %y\n"
                "}\n",
                "tf_half_pixel_for_nn");
    /* every float constant is differentiated by default: scales too */
    expect_fail("graph t() {\n"
                "  %x: f64[2,3] = const [1, 2, 3, 4, 5, 6]\n"
                "  %sc: f64[2] = const [1.0, 2.0]\n"
                "  %y = Resize(%x, _, %sc)\n"
                "  return %y\n"
                "}\n",
                "with respect to 'sc'");
    expect_fail("graph t() {\n"
                "  %d: f64[3] = const [1, 2, 3]\n"
                "  %u: f64[1] = const [5]\n"
                "  %i: i64[1] = const [1]\n"
                "  %y = ScatterElements(%d, %i, %u) {reduction = \"mul\"}\n"
                "  return %y\n"
                "}\n",
                "reduction 'mul'");
}

/* Compiles the joint graph j into a plan (default options), runs it on
 * in[0..n_in) and checks every output against the reference run, whose
 * outputs are left in ref[] (at most 8). */
static void plan_matches_reference(smelt_ctx_t *ctx, smelt_graph_t *j,
                                   smelt_tensor_t *const *in, int n_in,
                                   smelt_tensor_t **ref)
{
    int n_out = smelt_graph_num_outputs(j);
    smelt_tensor_t *got[8] = {0};
    assert_true(n_out <= 8);
    if (smelt_graph_run_reference(ctx, j, in, n_in, ref, n_out) != SMELT_OK)
        fail_msg("reference: %s", smelt_ctx_error(ctx));
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, j, &po, &p) != SMELT_OK)
        fail_msg("compile: %s", smelt_ctx_error(ctx));
    if (smelt_plan_run(ctx, p, in, n_in, got, n_out) != SMELT_OK)
        fail_msg("plan run: %s", smelt_ctx_error(ctx));
    for (int k = 0; k < n_out; k++) {
        assert_int_equal(smelt_tensor_numel(got[k]),
                         smelt_tensor_numel(ref[k]));
        for (int64_t i = 0; i < smelt_tensor_numel(ref[k]); i++) {
            double a = smelt_tensor_get_f64(got[k], i);
            double b = smelt_tensor_get_f64(ref[k], i);
            if (fabs(a - b) > 1e-5 + 1e-4 * fabs(b))
                fail_msg("output %d [%lld]: plan %.9g, reference %.9g", k,
                         (long long)i, a, b);
        }
        smelt_tensor_free(got[k]);
    }
    smelt_plan_free(p);
}

/* A transformer's front in f32: embedding lookup with repeated token
 * ids, projection, head split (Reshape, Transpose), scores, a slice and
 * a reversed slice concatenated. The joint graph (weights as inputs)
 * compiled into a plan at the default level gives the reference's
 * outputs, gradients included. */
static void test_plan_pipeline(void **state)
{
    (void)state;
    const char *text =
        "graph pipe(%ids: i64[2,3]) {\n"
        "  %emb: f32[5,8] = const [0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, "
        "-0.8, 0.9, -1.0, 0.15, 0.25, -0.35, 0.45, 0.55, -0.65, 0.75, 0.85, "
        "-0.95, 0.05, -0.15, 0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, 1.0, "
        "-0.1, 0.2, 0.35, -0.45, 0.55, 0.65, -0.75, 0.85, 0.95, -0.05]\n"
        "  %wq: f32[8,8] = const [0.1, 0.2, -0.3, 0.1, 0.0, 0.5, -0.1, 0.2, "
        "0.3, -0.2, 0.1, 0.4, -0.2, 0.1, 0.3, 0.0, -0.1, 0.2, 0.2, -0.3, 0.1, "
        "0.0, 0.4, 0.1, 0.2, 0.1, -0.2, 0.3, 0.3, -0.1, 0.0, 0.2, 0.0, 0.3, "
        "0.1, -0.1, 0.2, 0.4, 0.1, -0.3, 0.1, -0.1, 0.3, 0.2, 0.0, 0.1, 0.2, "
        "0.4, -0.2, 0.0, 0.1, 0.1, 0.3, -0.2, 0.2, 0.1, 0.4, 0.1, -0.1, 0.0, "
        "0.2, 0.3, -0.3, 0.1]\n"
        "  %e = Gather(%emb, %ids) {axis = 0}\n"
        "  %q = MatMul(%e, %wq)\n"
        "  %sh: i64[4] = const [2, 3, 2, 4]\n"
        "  %h = Reshape(%q, %sh)\n"
        "  %t = Transpose(%h) {perm = [0, 2, 1, 3]}\n"
        "  %k = Transpose(%t) {perm = [0, 1, 3, 2]}\n"
        "  %s = MatMul(%t, %k)\n"
        "  %st: i64[1] = const [0]\n"
        "  %en: i64[1] = const [2]\n"
        "  %ax: i64[1] = const [-1]\n"
        "  %sl = Slice(%s, %st, %en, %ax)\n"
        "  %rs: i64[1] = const [-1]\n"
        "  %re: i64[1] = const [-9223372036854775808]\n"
        "  %rp: i64[1] = const [-2]\n"
        "  %rv = Slice(%s, %rs, %re, %ax, %rp)\n"
        "  %c = Concat(%sl, %rv) {axis = -1}\n"
        "  %y = Tanh(%c)\n"
        "  return %y\n"
        "}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.params_as_inputs = 1;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    assert_int_equal(smelt_graph_num_grads(j), 2);
    assert_int_equal(smelt_graph_num_inputs(j), 3);
    /* inputs: ids (3 repeated twice, 0 three times), then the weights */
    smelt_tensor_t *in[3];
    int64_t di[2] = {2, 3}, de[2] = {5, 8}, dw[2] = {8, 8};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 2, di, &in[0]),
                     SMELT_OK);
    int64_t ids[6] = {3, 0, 3, 0, 4, 0};
    memcpy(smelt_tensor_data(in[0]), ids, sizeof ids);
    sm_value *ce = sm_graph_find_value(g, "emb"),
             *cw = sm_graph_find_value(g, "wq");
    assert_non_null(ce);
    assert_non_null(cw);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, de, &in[1]),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dw, &in[2]),
                     SMELT_OK);
    memcpy(smelt_tensor_data(in[1]), ce->data->data, 40 * sizeof(float));
    memcpy(smelt_tensor_data(in[2]), cw->data->data, 64 * sizeof(float));
    int n_out = smelt_graph_num_outputs(j);
    assert_int_equal(n_out, 4);
    smelt_tensor_t *ref[4] = {0};
    plan_matches_reference(ctx, j, in, 3, ref);
    /* token 1 and 2 are never looked up: their rows get no gradient;
     * token 0, looked up three times, gets one */
    const float *ge = smelt_tensor_data(ref[smelt_graph_grad_output(j, 0)]);
    assert_string_equal(smelt_graph_grad_wrt(j, 0), "emb");
    double row0 = 0;
    for (int i = 0; i < 8; i++) {
        assert_true(ge[8 + i] == 0.0f && ge[16 + i] == 0.0f);
        row0 += fabs(ge[i]);
    }
    assert_true(row0 > 0);
    for (int k = 0; k < n_out; k++)
        smelt_tensor_free(ref[k]);
    for (int i = 0; i < 3; i++)
        smelt_tensor_free(in[i]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* The rules built from less common ops in one plan: reflect Pad and a
 * strided Slice (the index map: Range, ScatterElements add), Tile,
 * CumSum, linear Resize (MatMul with resized identities), TopK and
 * a reverse Slice, on a graph input of 2x3x4. */
static void test_plan_mixed(void **state)
{
    (void)state;
    const char *text =
        "graph mix(%x: f32[2,3,4]) {\n"
        "  %w: f32[3,4] = const [0.5, -1.0, 2.0, 0.25, 1.5, -0.75, 0.3, "
        "0.9, -0.4, 1.1, 0.6, -0.2]\n"
        "  %a = Mul(%x, %w)\n"
        "  %p: i64[6] = const [0, 1, 2, 0, 2, 1]\n"
        "  %pd = Pad(%a, %p) {mode = \"reflect\"}\n"
        "  %st: i64[2] = const [-1, 0]\n"
        "  %en: i64[2] = const [-100, 100]\n"
        "  %ax: i64[2] = const [1, 2]\n"
        "  %sp: i64[2] = const [-2, 3]\n"
        "  %sl = Slice(%pd, %st, %en, %ax, %sp)\n"
        "  %r: i64[3] = const [1, 2, 1]\n"
        "  %tl = Tile(%sl, %r)\n"
        "  %cx: i64[] = const [1]\n"
        "  %cs = CumSum(%tl, %cx) {reverse = 1}\n"
        "  %sc: f32[3] = const [1.0, 1.5, 2.0]\n"
        "  %rz = Resize(%cs, _, %sc) {mode = \"linear\"}\n"
        "  %k: i64[1] = const [3]\n"
        "  %v, %i = TopK(%rz, %k)\n"
        "  %y = Tanh(%v)\n"
        "  return %y\n"
        "}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(NULL, text), *j = NULL;
    smelt_grad_options o;
    smelt_grad_options_default(&o);
    o.params_as_inputs = 1;
    const char *wrt[1] = {"w"};
    o.wrt = wrt;
    o.n_wrt = 1;
    if (smelt_graph_grad(ctx, g, &o, &j) != SMELT_OK)
        fail_msg("grad: %s", smelt_ctx_error(ctx));
    smelt_tensor_t *in[2];
    int64_t dx[3] = {2, 3, 4}, dw[2] = {3, 4};
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 3, dx, &in[0]),
                     SMELT_OK);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dw, &in[1]),
                     SMELT_OK);
    float *px = smelt_tensor_data(in[0]), *pw = smelt_tensor_data(in[1]);
    for (int i = 0; i < 24; i++)
        px[i] = (float)sin(0.9 * i + 0.2);
    for (int i = 0; i < 12; i++)
        pw[i] = (float)cos(1.7 * i);
    smelt_tensor_t *ref[8] = {0};
    plan_matches_reference(ctx, j, in, 2, ref);
    /* the gradient reaches w: not all zeros */
    smelt_tensor_t *gw = ref[smelt_graph_grad_output(j, 0)];
    double mag = 0;
    for (int64_t i = 0; i < smelt_tensor_numel(gw); i++)
        mag += fabs(smelt_tensor_get_f64(gw, i));
    assert_true(mag > 0);
    for (int k = 0; k < smelt_graph_num_outputs(j); k++)
        smelt_tensor_free(ref[k]);
    smelt_tensor_free(in[0]);
    smelt_tensor_free(in[1]);
    smelt_graph_free(j);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshapes),
        cmocka_unit_test(test_concat_split),
        cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_slice_partition),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_scatter),
        cmocka_unit_test(test_expand_tile_pad),
        cmocka_unit_test(test_cumsum_trilu),
        cmocka_unit_test(test_space_sequence),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_plan_pipeline),
        cmocka_unit_test(test_plan_mixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
