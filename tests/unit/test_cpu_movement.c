/*
 * test_cpu_movement.c - the data-movement kernels (kernels/cpu/movement.c:
 * Slice, Gather, Where, Concat, Split, Expand) against the reference
 * kernels on the same inputs, with no pool and pools of 2 and 3 threads:
 * odd sizes, negative axes, indices and steps, broadcasting, element
 * sizes 1, 2, 4 and 8, empty tensors, copies large enough to split over
 * the pool; bad indices fail cleanly, in the kernel and in a plan. And
 * Transpose (kernels/cpu/movement_transpose.c) on every ISA entry, and
 * Pad (kernels/cpu/movement_pad.c) in every mode.
 */
#include <string.h>

#include "cpu_harness.h"

#define EXACT 0, 0
#define U8 SMELT_DTYPE_U8

/* A 1-D integer tensor (i32 or i64) holding v[0..n). */
static sm_tensor *ints(smelt_dtype dt, int n, const double *v)
{
    return nn_tensor(dt, 1, (const int64_t[]){n}, v);
}

/* A bool tensor, true where (i * 7 + seed) % 3 != 0: both values often. */
static sm_tensor *mask(int ndim, const int64_t *dims, unsigned seed)
{
    sm_tensor *t = nn_tensor(BOOL, ndim, dims, NULL);
    unsigned char *p = t->data;
    for (int64_t i = 0; i < t->numel; i++)
        p[i] = (unsigned char)((i * 7 + seed) % 3 != 0);
    return t;
}

/* ---- Slice -----------------------------------------------------------------
 */

/* Slice of x by starts/ends (and axes, steps when na, ns > 0), through
 * the kernel and the reference. */
static void check_slice(sm_tensor *x, smelt_dtype it, int n, const double *st,
                        const double *en, const double *ax, const double *sp)
{
    sm_tensor *in[5] = {x, ints(it, n, st), ints(it, n, en),
                        ax ? ints(it, n, ax) : NULL,
                        sp ? ints(it, n, sp) : NULL};
    int n_in = sp ? 5 : ax ? 4 : 3;
    CK_CHECK(SM_OP_Slice, n_in, in, 1, NO_ATTRS, CK_ONE(slice), 0, EXACT);
}

static void test_slice(void **state)
{
    (void)state;
    const double big = 9.2e18; /* INT64_MAX as exporters write it */
    /* bert's q/k/v split: the middle third of the last axis */
    check_slice(ck_rand(3, D(32, 2, 768), 1), I64, 1, V(256), V(512), V(2),
                NULL);
    /* odd sizes, every axis, steps 2 and 3 */
    check_slice(ck_rand(3, D(5, 7, 9), 2), I64, 3, V(1, 0, 2), V(5, 7, 9),
                V(0, 1, 2), V(2, 3, 2));
    /* negative steps and indices, negative axes, axes out of order */
    check_slice(ck_rand(3, D(5, 7, 9), 3), I32, 2, V(-1, 8), V(-big, 0),
                V(-1, 0), V(-2, -1));
    check_slice(ck_rand(3, D(5, 7, 9), 4), I64, 2, V(-2, -1), V(-9, 1),
                V(-2, -3), V(-1, -3));
    /* starts and ends only (every axis), ends past the end clamp */
    check_slice(ck_rand(2, D(6, 11), 5), I64, 2, V(1, -4), V(big, 100), NULL,
                NULL);
    /* axes without steps, the outermost axis (one contiguous run) */
    check_slice(ck_rand(3, D(9, 3, 5), 6), I32, 1, V(2), V(7), V(0), NULL);
    /* empty: start == end, and start past a negative-step end */
    check_slice(ck_rand(2, D(4, 6), 7), I64, 1, V(3), V(3), V(1), NULL);
    check_slice(ck_rand(2, D(4, 6), 8), I64, 1, V(0), V(2), V(0), V(-1));
    /* element sizes 1, 2 and 8 (bool, f16, i64, f64) */
    smelt_dtype dts[] = {BOOL, I8, F16, I64, F64};
    for (int i = 0; i < N_OF(dts); i++)
        check_slice(nn_pattern(dts[i], 3, D(4, 5, 7), (unsigned)i), I64, 2,
                    V(3, 1), V(0, 6), V(0, 2), V(-1, 2));
    /* large enough to split over the pool: rows, and pieces of one run */
    check_slice(ck_rand(2, D(300, 301), 9), I64, 1, V(1), V(big), V(1), V(2));
    check_slice(ck_rand(2, D(64, 1024), 10), I64, 1, V(3), V(60), V(0), NULL);
    check_slice(ck_rand(2, D(257, 300), 11), I64, 2, V(-1, -1), V(-big, -big),
                V(0, 1), V(-1, -1));
}

/* ---- Gather ----------------------------------------------------------------
 */

static void check_gather(sm_tensor *x, sm_tensor *ind, int axis)
{
    CK_CHECK(SM_OP_Gather, 2, ((sm_tensor *[]){x, ind}), 1,
             ATTRS(A_INT("axis", axis)), CK_ONE(gather), 0, EXACT);
}

static void test_gather(void **state)
{
    (void)state;
    /* an embedding lookup: token ids [2, 4], negative ones count back */
    check_gather(ck_rand(2, D(50, 16), 1),
                 nn_tensor(I64, 2, D(2, 4), V(0, 49, -1, 7, 7, -50, 3, 12)), 0);
    /* the middle axis with i32 indices; the last axis as -1 */
    check_gather(ck_rand(3, D(3, 10, 4), 2),
                 nn_tensor(I32, 1, D(5), V(9, -10, 0, 4, -3)), 1);
    check_gather(ck_rand(3, D(3, 10, 5), 3),
                 nn_tensor(I64, 2, D(2, 2), V(4, -5, 0, 2)), -1);
    /* bert's pooler: a scalar index drops the axis */
    check_gather(ck_rand(3, D(2, 32, 256), 4), nn_tensor(I64, 0, NULL, V(0)),
                 1);
    /* element sizes 1, 2, 8 */
    smelt_dtype dts[] = {U8, F16, I64};
    for (int i = 0; i < N_OF(dts); i++)
        check_gather(nn_pattern(dts[i], 2, D(6, 3), (unsigned)i),
                     nn_tensor(I32, 1, D(4), V(5, -6, 2, 2)), -2);
    /* no indices; and rows large enough to split over the pool */
    check_gather(ck_rand(2, D(6, 3), 5), nn_tensor(I64, 1, D(0), NULL), 0);
    sm_tensor *ind = nn_tensor(I64, 1, D(700), NULL);
    for (int i = 0; i < 700; i++)
        ((int64_t *)ind->data)[i] = (i * 37) % 1000 - 500;
    check_gather(ck_rand(2, D(1000, 64), 6), ind, 0);
}

/* An index out of range fails the kernel with the reference's error,
 * before anything is written or read out of bounds. */
static void test_gather_bad_index(void **state)
{
    (void)state;
    const sm_op_info *info = sm_op_info_get(SM_OP_Gather);
    const double bad[][3] = {{0, 4, 1}, {0, -5, 1}, {1e9, 0, 0}};
    for (int b = 0; b < 3; b++) {
        sm_tensor *in[2] = {ck_rand(2, D(4, 3), 1),
                            nn_tensor(I64, 1, D(3), bad[b])};
        sm_tensor *out[1] = {nn_tensor(F32, 2, D(3, 3), NULL)};
        smelt_ctx_t *ctx = smelt_ctx_init();
        sm_kargs ka = {.op_name = info->name,
                       .attrs = {NULL, 0, info->spec, info->n_spec},
                       .n_in = 2,
                       .in = in,
                       .n_out = 1,
                       .out = out,
                       .ctx = ctx};
        sm_cpu_config cfg = {SM_CPU_ALGO_PLAIN, 0, 0, {0}, 0};
        for (int p = 0; p < 3; p++) {
            assert_int_equal(
                sm_cpu_kernel_run(CK_ANY(gather), &ka, &cfg, NULL, ck_pools[p]),
                SMELT_ERR_RUNTIME);
            assert_non_null(strstr(smelt_ctx_error(ctx), "out of range"));
        }
        smelt_ctx_free(ctx);
        sm_tensor_free(in[0]);
        sm_tensor_free(in[1]);
        sm_tensor_free(out[0]);
    }
}

/* The same through a plan: the step runs gather_any, and a bad token id
 * is an error naming the node, not a crash. */
static void test_gather_plan(void **state)
{
    (void)state;
    static const char *text =
        "graph g(%ids: i64[3]) {\n"
        "  %w: f32[4,2] = const [1, 2, 3, 4, 5, 6, 7, 8]\n"
        "  %y: f32[3,2] = Gather(%w, %ids) @emb\n"
        "  %z: f32[3,2] = Neg(%y)\n"
        "  return %z\n"
        "}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, text, strlen(text), "g.ir", &g),
                     SMELT_OK);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.threads = 2;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_OK);
    int found = 0;
    for (int i = 0; i < smelt_plan_num_steps(p); i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        assert_int_equal(smelt_plan_step(p, i, &si), SMELT_OK);
        found += !strcmp(si.kernel, "gather_any");
    }
    assert_int_equal(found, 1);
    smelt_tensor_t *ids = NULL, *y = NULL;
    int64_t n = 3;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 1, &n, &ids),
                     SMELT_OK);
    int64_t *id = smelt_tensor_data(ids);
    id[0] = 3, id[1] = -4, id[2] = 1;
    assert_int_equal(smelt_plan_run(ctx, p, &ids, 1, &y, 1), SMELT_OK);
    const float want[6] = {-7, -8, -1, -2, -3, -4};
    assert_memory_equal(smelt_tensor_data(y), want, sizeof want);
    smelt_tensor_free(y);
    y = NULL;
    id[1] = 4;
    assert_int_equal(smelt_plan_run(ctx, p, &ids, 1, &y, 1), SMELT_ERR_RUNTIME);
    assert_null(y);
    assert_non_null(strstr(smelt_ctx_error(ctx), "emb"));
    assert_non_null(strstr(smelt_ctx_error(ctx), "index 4 is out of range"));
    smelt_tensor_free(ids);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- Where -----------------------------------------------------------------
 */

static void check_where(sm_tensor *c, sm_tensor *x, sm_tensor *y)
{
    CK_CHECK(SM_OP_Where, 3, ((sm_tensor *[]){c, x, y}), 1, NO_ATTRS,
             CK_ONE(where), 0, EXACT);
}

static void test_where(void **state)
{
    (void)state;
    /* gpt's causal mask: a [1,1,T,T] condition, a scalar fill */
    check_where(mask(4, D(1, 1, 9, 9), 1), nn_tensor(F32, 0, NULL, V(-1e30)),
                ck_rand(4, D(2, 3, 9, 9), 2));
    /* same shapes; a 2-D mask under a 3-D input; both sources broadcast */
    check_where(mask(2, D(7, 13), 2), ck_rand(2, D(7, 13), 3),
                ck_rand(2, D(7, 13), 4));
    check_where(mask(2, D(5, 1), 3), ck_rand(3, D(2, 5, 6), 5),
                ck_rand(1, D(6), 6));
    check_where(mask(1, D(11), 4), ck_rand(2, D(3, 1), 7),
                ck_rand(2, D(1, 11), 8));
    /* a scalar second source; both scalars; i32 */
    check_where(mask(2, D(4, 7), 5), ck_rand(2, D(4, 7), 9),
                nn_tensor(F32, 0, NULL, V(0.5)));
    check_where(mask(1, D(9), 6), nn_tensor(F32, 0, NULL, V(2)),
                nn_tensor(F32, 1, D(1), V(-3)));
    check_where(mask(2, D(3, 6), 7), nn_pattern(I32, 2, D(3, 6), 1),
                nn_pattern(I32, 2, D(3, 6), 2));
    /* element sizes 1, 2, 8 */
    smelt_dtype dts[] = {I8, BF16, I64, F64};
    for (int i = 0; i < N_OF(dts); i++)
        check_where(mask(3, D(2, 1, 5), (unsigned)i),
                    nn_pattern(dts[i], 2, D(3, 5), (unsigned)i + 1),
                    nn_pattern(dts[i], 1, D(1), (unsigned)i + 2));
    /* empty; and large enough to split over the pool */
    check_where(mask(2, D(0, 4), 5), ck_rand(1, D(4), 9),
                ck_rand(2, D(1, 4), 10));
    check_where(mask(2, D(64, 1), 6), ck_rand(2, D(64, 1030), 11),
                ck_rand(1, D(1030), 12));
    check_where(mask(1, D(70001), 7), ck_rand(1, D(70001), 13),
                ck_rand(1, D(70001), 14));
}

/* ---- Concat, Split, Expand ----------------------------------------------- */

static void test_concat(void **state)
{
    (void)state;
    CK_CHECK(
        SM_OP_Concat, 3,
        ((sm_tensor *[]){ck_rand(3, D(2, 3, 5), 1), ck_rand(3, D(2, 1, 5), 2),
                         ck_rand(3, D(2, 4, 5), 3)}),
        1, ATTRS(A_INT("axis", -2)), CK_ONE(concat), 0, EXACT);
    /* the outermost axis (contiguous parts), an empty part, i64 */
    CK_CHECK(SM_OP_Concat, 3,
             ((sm_tensor *[]){nn_pattern(I64, 2, D(3, 7), 1),
                              nn_pattern(I64, 2, D(0, 7), 2),
                              nn_pattern(I64, 2, D(4, 7), 3)}),
             1, ATTRS(A_INT("axis", 0)), CK_ONE(concat), 0, EXACT);
    /* the last axis, 1-byte elements; and large parts over the pool */
    CK_CHECK(SM_OP_Concat, 2,
             ((sm_tensor *[]){nn_pattern(U8, 2, D(5, 3), 4),
                              nn_pattern(U8, 2, D(5, 8), 5)}),
             1, ATTRS(A_INT("axis", 1)), CK_ONE(concat), 0, EXACT);
    CK_CHECK(SM_OP_Concat, 2,
             ((sm_tensor *[]){ck_rand(2, D(100, 300), 6),
                              ck_rand(2, D(100, 257), 7)}),
             1, ATTRS(A_INT("axis", 1)), CK_ONE(concat), 0, EXACT);
}

static void test_split(void **state)
{
    (void)state;
    /* gpt's qkv split: three equal parts of the last axis */
    CK_CHECK(SM_OP_Split, 2,
             ((sm_tensor *[]){ck_rand(3, D(2, 32, 768), 1),
                              ints(I64, 3, V(256, 256, 256))}),
             3, ATTRS(A_INT("axis", -1)), CK_ONE(split), 0, EXACT);
    /* unequal parts, one empty, the middle axis, f16 */
    CK_CHECK(SM_OP_Split, 2,
             ((sm_tensor *[]){nn_pattern(F16, 3, D(3, 10, 3), 2),
                              ints(I64, 4, V(2, 0, 7, 1))}),
             4, ATTRS(A_INT("axis", 1)), CK_ONE(split), 0, EXACT);
    /* no split input: equal parts of the outermost axis; and large */
    CK_CHECK(SM_OP_Split, 1, ((sm_tensor *[]){ck_rand(2, D(6, 5), 3)}), 3,
             ATTRS(A_INT("axis", 0)), CK_ONE(split), 0, EXACT);
    CK_CHECK(SM_OP_Split, 1, ((sm_tensor *[]){ck_rand(2, D(200, 600), 4)}), 2,
             ATTRS(A_INT("axis", 1)), CK_ONE(split), 0, EXACT);
}

static void check_expand(sm_tensor *x, int n, const double *shape)
{
    CK_CHECK(SM_OP_Expand, 2, ((sm_tensor *[]){x, ints(I64, n, shape)}), 1,
             NO_ATTRS, CK_ONE(expand), 0, EXACT);
}

static void test_expand(void **state)
{
    (void)state;
    check_expand(ck_rand(2, D(3, 1), 1), 3, V(2, 3, 4));
    check_expand(ck_rand(1, D(1), 2), 2, V(5, 7));
    check_expand(ck_rand(3, D(2, 1, 3), 3), 3, V(2, 4, 3));
    check_expand(nn_pattern(I8, 2, D(1, 5), 4), 2, V(3, 1));
    check_expand(nn_pattern(I64, 1, D(3), 5), 3, V(2, 0, 3));
    check_expand(ck_rand(2, D(1, 1000), 6), 2, V(70, 1000));
    check_expand(ck_rand(2, D(1000, 1), 7), 2, V(1000, 40));
}

/* Pad of x by pads (2 * n values; over the axes ax when given) in mode,
 * with the constant cv when given, through the kernel and the reference. */
static void check_pad(sm_tensor *x, const char *mode, int n, const double *pads,
                      sm_tensor *cv, const double *ax)
{
    sm_tensor *in[4] = {x, ints(I64, 2 * n, pads), cv,
                        ax ? ints(I64, n, ax) : NULL};
    int n_in = ax ? 4 : cv ? 3 : 2;
    CK_CHECK(SM_OP_Pad, n_in, in, 1, ATTRS(A_STR("mode", mode)), CK_ONE(pad), 0,
             EXACT);
}

static void test_pad(void **state)
{
    (void)state;
    const char *modes[] = {"constant", "reflect", "edge", "wrap"};
    for (int m = 0; m < 4; m++) {
        /* NCHW spatial padding, as a pool or conv export writes it */
        check_pad(ck_rand(4, D(2, 3, 5, 6), 1), modes[m], 4,
                  V(0, 0, 1, 2, 0, 0, 2, 1), NULL, NULL);
        /* every axis, padding wider than reflect's period */
        check_pad(ck_rand(3, D(3, 4, 5), 2), modes[m], 3, V(1, 2, 7, 2, 1, 6),
                  NULL, NULL);
        /* negative pads crop first */
        check_pad(ck_rand(2, D(6, 9), 3), modes[m], 2, V(-1, 2, 1, -3), NULL,
                  NULL);
        /* 1-D, one element */
        check_pad(ck_rand(1, D(1), 4), modes[m], 1, V(3, 2), NULL, NULL);
    }
    /* a nonzero constant; other element sizes */
    check_pad(ck_rand(3, D(2, 3, 4), 5), "constant", 3, V(1, 0, 2, 0, 1, 3),
              nn_tensor(F32, 0, NULL, V(-1.5)), NULL);
    check_pad(nn_pattern(I8, 2, D(3, 5), 6), "constant", 2, V(1, 1, 2, 2),
              nn_tensor(I8, 0, NULL, V(7)), NULL);
    check_pad(nn_pattern(I64, 3, D(2, 3, 4), 7), "reflect", 3,
              V(0, 1, 2, 0, 1, 3), NULL, NULL);
    /* opset 18's axes; a constant-pad whose whole rows are the fill */
    check_pad(ck_rand(3, D(4, 5, 6), 8), "edge", 2, V(1, -2, 3, 1), NULL,
              V(2, 0));
    check_pad(ck_rand(3, D(0, 5, 6), 9), "constant", 3, V(1, 0, 0, 2, 0, 0),
              NULL, NULL);
    /* large enough to split over the pool */
    check_pad(ck_rand(4, D(1, 32, 128, 128), 10), "constant", 4,
              V(0, 0, 1, 1, 0, 0, 1, 1), NULL, NULL);
}

/* Nodes a kernel must leave to the reference: mixed dtypes, a non-bool
 * condition, float indices. */
static void test_refusals(void **state)
{
    (void)state;
    sm_tensor *c = nn_tensor(I32, 1, D(4), NULL), *f = ck_rand(1, D(4), 1);
    sm_tensor *in[3] = {c, f, f}, *out[1] = {f};
    assert_false(
        ck_supports(CK_ANY(where), SM_OP_Where, 3, in, 1, out, NO_ATTRS));
    in[0] = f;
    in[1] = f;
    assert_false(
        ck_supports(CK_ANY(gather), SM_OP_Gather, 2, in, 1, out, NO_ATTRS));
    in[1] = c;
    assert_true(
        ck_supports(CK_ANY(gather), SM_OP_Gather, 2, in, 1, out, NO_ATTRS));
    out[0] = c;
    assert_false(
        ck_supports(CK_ANY(gather), SM_OP_Gather, 2, in, 1, out, NO_ATTRS));
    assert_false(ck_supports(CK_ANY(concat), SM_OP_Concat, 2, in, 1, out,
                             ATTRS(A_INT("axis", 0))));
    sm_tensor_free(c);
    sm_tensor_free(f);
}

/* ---- Transpose (movement_transpose.c) ----------------------------------- */

static void test_transpose(void **state)
{
    (void)state;
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(2, D(37, 19), 1)}), 1,
             NO_ATTRS, CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 5, 3, 17), 2)}), 1,
             ATTRS(A_INTS("perm", 0, 2, 1, 3)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 5, 3, 17), 3)}), 1,
             ATTRS(A_INTS("perm", 3, 1, 0, 2)), CK_ENTRIES(transpose), 0, 0, 0);
    /* attention's [B, S, H, D] -> [B, H, S, D] and -> [B, H, D, S] */
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(2, 33, 4, 16), 4)}), 1,
             ATTRS(A_INTS("perm", 0, 2, 3, 1)), CK_ENTRIES(transpose), 0, 0, 0);
    /* the last two dims swapped over several tiles with ragged edges
     * (4 x 4 register blocks and the rest), and BERT's key transpose */
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(3, D(3, 45, 70), 6)}),
             1, ATTRS(A_INTS("perm", 0, 2, 1)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(3, D(32, 8, 64), 7)}),
             1, ATTRS(A_INTS("perm", 1, 2, 0)), CK_ENTRIES(transpose), 0, 0, 0);
    /* rows kept whole, long (a memcpy each) and short (inline), enough
     * of them to split over the threads */
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(3, D(3, 40, 300), 8)}), 1,
             ATTRS(A_INTS("perm", 1, 0, 2)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1,
             ((sm_tensor *[]){ck_rand(4, D(8, 8, 16, 48), 9)}), 1,
             ATTRS(A_INTS("perm", 2, 0, 1, 3)), CK_ENTRIES(transpose), 0, 0, 0);
    CK_CHECK(SM_OP_Transpose, 1, ((sm_tensor *[]){ck_rand(3, D(1, 40, 1), 5)}),
             1, ATTRS(A_INTS("perm", 2, 0, 1)), CK_ENTRIES(transpose), 0, 0, 0);
    /* a bad perm is refused */
    sm_tensor *in[1] = {nn_tensor(F32, 2, D(2, 3), NULL)};
    sm_tensor *out[1] = {nn_tensor(F32, 2, D(3, 2), NULL)};
    assert_false(ck_supports(CK_K(transpose, scalar), SM_OP_Transpose, 1, in, 1,
                             out, ATTRS(A_INTS("perm", 1, 1))));
    sm_tensor_free(in[0]);
    sm_tensor_free(out[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_gather_bad_index),
        cmocka_unit_test(test_gather_plan),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_transpose),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
