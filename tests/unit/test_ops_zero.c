/*
 * test_ops_zero.c - every op case of tests/ops with one input dimension
 * set to 0.
 *
 * For each case and each dimension of each input (one at a time), the
 * input becomes empty along that dimension (the other inputs keep the
 * case's values), the graph's declared types are forgotten and inferred
 * again, and the variant runs through the reference interpreter and
 * through compiled plans at -O0 and -O3 under each ISA (scalar, avx2,
 * avx512; a level above what the CPU has runs the lower path), with two
 * threads so the kernels' work splitting runs too. What must hold:
 *
 *  - nothing crashes and the sanitizers stay quiet (the ASan build runs
 *    this test as well);
 *  - a refusal is a status with a message, and the reference and every
 *    plan agree on whether the variant is refused;
 *  - when it runs, the reference's outputs have the shapes inference
 *    gave the graph's outputs, and every plan's outputs equal the
 *    reference's (shapes exactly; floats within 1e-4 relative, as
 *    test_plan compares).
 *
 * Which empty shapes an op accepts and what it returns for them (ONNX
 * Runtime's choices) is pinned by hand-written cases in test_ref_*.c
 * and by the *_empty cases of tests/ops; this sweep proves that every
 * path handles them the same way and safely.
 *
 * SMELT_OP_CASE=<prefix> restricts the walk; SMELT_ZERO_VERBOSE=1 prints
 * what the reference did with each variant.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#include "ir/infer.h"
#include "ir/ir.h"

#define RTOL 1e-4
#define ATOL 1e-5
#define MAX_IO 32
#define PATH_LEN 4096
#define WHY_LEN 1024

static const char *const isas[] = {"scalar", "avx2", "avx512"};
static const int levels[] = {0, 3};

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The case directories under tests/ops (sorted); *n of them. */
static char **list_cases(int *n)
{
    const char *root = SMELT_TEST_DIR "/ops";
    DIR *d = opendir(root);
    *n = 0;
    if (!d)
        return NULL;
    char **v = NULL, path[PATH_LEN];
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s/model.ir", root, e->d_name);
        if (e->d_name[0] == '.' || !file_exists(path))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            v = realloc(v, (size_t)cap * sizeof *v);
            assert_non_null(v);
        }
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(v, (size_t)*n, sizeof *v, cmp_str);
    return v;
}

static void free_all(smelt_tensor_t **t, int n)
{
    for (int i = 0; i < n; i++) {
        smelt_tensor_free(t[i]);
        t[i] = NULL;
    }
}

static int is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
           dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
}

/* Element i of a non-float tensor, exactly. */
static int64_t get_int(smelt_tensor_t *t, int64_t i)
{
    const void *p = smelt_tensor_data(t);
    switch (smelt_tensor_dtype(t)) {
    case SMELT_DTYPE_I8: return ((const int8_t *)p)[i];
    case SMELT_DTYPE_U8: return ((const uint8_t *)p)[i];
    case SMELT_DTYPE_I16: return ((const int16_t *)p)[i];
    case SMELT_DTYPE_I32: return ((const int32_t *)p)[i];
    case SMELT_DTYPE_I64: return ((const int64_t *)p)[i];
    case SMELT_DTYPE_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

static void shape_str(smelt_tensor_t *t, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s[", smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t) && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "," : "",
                      (long long)smelt_tensor_dim(t, i));
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
}

/* Whether got equals want (dtype, shape, values); why says what differs. */
static int match(smelt_tensor_t *got, smelt_tensor_t *want, char *why,
                 size_t size)
{
    char gs[128], ws[128];
    shape_str(got, gs, sizeof gs);
    shape_str(want, ws, sizeof ws);
    if (strcmp(gs, ws) != 0) {
        snprintf(why, size, "got %s, reference %s", gs, ws);
        return 0;
    }
    int fl = is_float(smelt_tensor_dtype(want));
    for (int64_t i = 0; i < smelt_tensor_numel(want); i++) {
        if (!fl) {
            if (get_int(got, i) == get_int(want, i))
                continue;
        } else {
            double a = smelt_tensor_get_f64(got, i);
            double e = smelt_tensor_get_f64(want, i);
            if (a == e || (isnan(a) && isnan(e)))
                continue;
            if (!isinf(a) && !isinf(e) && fabs(a - e) <= ATOL + RTOL * fabs(e))
                continue;
        }
        snprintf(why, size, "%s: element %lld: got %.9g, reference %.9g", ws,
                 (long long)i, smelt_tensor_get_f64(got, i),
                 smelt_tensor_get_f64(want, i));
        return 0;
    }
    return 1;
}

/* The result of one path on one variant: its status and message, and
 * its outputs when it ran. */
typedef struct outcome {
    smelt_status st;
    char msg[WHY_LEN];
    smelt_tensor_t *out[MAX_IO];
} outcome;

static void outcome_set(outcome *o, smelt_status st, const char *stage,
                        smelt_ctx_t *ctx)
{
    o->st = st;
    snprintf(o->msg, sizeof o->msg, "%s: %s: %s", stage, smelt_status_name(st),
             smelt_ctx_error(ctx));
}

/* g with some input dims empty: zero[i] has bit d set when input i is
 * empty along d. The declared dims become 0 and every type inference can
 * derive again is forgotten (node outputs, the parameters of fused
 * regions and the carried values of loop bodies, which take their types
 * from the node's inputs), so inference and the plan derive them anew. */
static smelt_graph_t *zero_variant(smelt_ctx_t *ctx, const smelt_graph_t *orig,
                                   const unsigned *zero)
{
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_clone(ctx, orig, &g), SMELT_OK);
    for (int i = 0; i < g->top->n_params; i++) {
        sm_type *t = &g->top->params[i]->type;
        for (int d = 0; d < t->ndim; d++)
            if ((zero[i] >> d) & 1)
                t->dims[d] = (sm_dim){0, NULL};
    }
    for (int k = 0; k < g->n_nodes_all; k++) {
        sm_node *n = g->nodes_all[k];
        for (int j = 0; j < n->n_out; j++)
            sm_type_unknown(&n->out[j]->type);
        int first = n->op == SM_OP_FusedElementwise ? 0
                    : n->op == SM_OP_Loop           ? 2
                                                    : -1;
        for (int b = 0; first >= 0 && b < n->n_blocks; b++)
            for (int j = first; j < n->blocks[b]->n_params; j++)
                sm_type_unknown(&n->blocks[b]->params[j]->type);
    }
    return g;
}

/* The reference on variant g: inference, then the interpreter. On
 * success checks that every output has the shape inference gave it. */
static void run_reference(smelt_graph_t *g, smelt_tensor_t **in, int n_in,
                          int n_out, outcome *o, char *why, size_t size)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_status st = sm_graph_infer(ctx, g);
    if (st != SMELT_OK) {
        outcome_set(o, st, "infer", ctx);
        smelt_ctx_free(ctx);
        return;
    }
    st = smelt_graph_run_reference(ctx, g, in, n_in, o->out, n_out);
    if (st != SMELT_OK) {
        memset(o->out, 0, sizeof o->out);
        outcome_set(o, st, "reference", ctx);
        smelt_ctx_free(ctx);
        return;
    }
    o->st = SMELT_OK;
    for (int j = 0; j < n_out && !*why; j++) {
        const sm_type *t = &g->top->ret[j]->type;
        smelt_tensor_t *x = o->out[j];
        int same = t->ndim < 0 || t->ndim == smelt_tensor_ndim(x);
        for (int d = 0; same && t->ndim >= 0 && d < t->ndim; d++)
            same = t->dims[d].size < 0 ||
                   t->dims[d].size == smelt_tensor_dim(x, d);
        if (!same) {
            char ts[160], xs[128];
            sm_type_str(t, ts, sizeof ts);
            shape_str(x, xs, sizeof xs);
            snprintf(why, size, "output %d: inferred %s, reference gave %s", j,
                     ts, xs);
        }
    }
    smelt_ctx_free(ctx);
}

/* A plan of variant g at `level` for `isa` on inputs in, run twice (the
 * second run reuses the session's arena). */
static void run_plan(const smelt_graph_t *g, int level, const char *isa,
                     smelt_tensor_t **in, int n_in, int n_out, outcome *o)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_plan_options opt;
    smelt_plan_options_default(&opt);
    opt.level = level;
    opt.isa = isa;
    opt.threads = 2;
    opt.inputs = in;
    opt.n_inputs = n_in;
    smelt_plan_t *p = NULL;
    smelt_status st = smelt_plan_compile(ctx, g, &opt, &p);
    if (st != SMELT_OK) {
        outcome_set(o, st, "compile", ctx);
        smelt_ctx_free(ctx);
        return;
    }
    for (int run = 0; run < 2; run++) {
        free_all(o->out, n_out);
        st = smelt_plan_run(ctx, p, in, n_in, o->out, n_out);
        if (st != SMELT_OK) {
            memset(o->out, 0, sizeof o->out);
            outcome_set(o, st, "run", ctx);
            break;
        }
    }
    o->st = st;
    smelt_plan_free(p);
    smelt_ctx_free(ctx);
}

/* Whether a refusal says something: a status and a message. */
static int refusal_clear(const outcome *o)
{
    const char *colon = strrchr(o->msg, ':');
    return colon && colon[1] == ' ' && colon[2] != 0;
}

/* One variant (zero[] as zero_variant takes it): the reference, then
 * every plan; returns 1 when they agree as the header says, else 0 with
 * why set. */
static int check_variant(const smelt_graph_t *orig, smelt_tensor_t **case_in,
                         int n_in, const unsigned *zero, char *why, size_t size)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = zero_variant(ctx, orig, zero);
    smelt_tensor_t *in[MAX_IO] = {0}, *empty[MAX_IO] = {0};
    for (int i = 0; i < n_in; i++) {
        in[i] = case_in[i];
        if (!zero[i])
            continue;
        int64_t dims[SMELT_MAX_DIMS];
        int nd = smelt_tensor_ndim(case_in[i]);
        for (int d = 0; d < nd; d++)
            dims[d] = (zero[i] >> d) & 1 ? 0 : smelt_tensor_dim(case_in[i], d);
        assert_int_equal(smelt_tensor_init(ctx, smelt_tensor_dtype(case_in[i]),
                                           nd, dims, &empty[i]),
                         SMELT_OK);
        in[i] = empty[i];
    }
    int n_out = smelt_graph_num_outputs(g);
    assert_true(n_out <= MAX_IO);

    *why = 0;
    outcome ref = {0};
    run_reference(g, in, n_in, n_out, &ref, why, size);
    if (ref.st != SMELT_OK && !refusal_clear(&ref))
        snprintf(why, size, "reference refuses without a message (%s)",
                 ref.msg);
    for (size_t l = 0; l < sizeof levels / sizeof *levels && !*why; l++)
        for (size_t k = 0; k < sizeof isas / sizeof *isas && !*why; k++) {
            outcome pl = {0};
            run_plan(g, levels[l], isas[k], in, n_in, n_out, &pl);
            char tag[32];
            snprintf(tag, sizeof tag, "-O%d %s", levels[l], isas[k]);
            if (pl.st != SMELT_OK && !refusal_clear(&pl))
                snprintf(why, size, "%s refuses without a message (%s)", tag,
                         pl.msg);
            else if (ref.st == SMELT_OK && pl.st != SMELT_OK)
                snprintf(why, size, "the reference runs, %s refuses: %s", tag,
                         pl.msg);
            else if (ref.st != SMELT_OK && pl.st == SMELT_OK)
                snprintf(why, size, "the reference refuses (%s), %s runs",
                         ref.msg, tag);
            for (int j = 0; j < n_out && !*why && pl.st == SMELT_OK; j++) {
                char d[WHY_LEN / 2];
                if (!match(pl.out[j], ref.out[j], d, sizeof d))
                    snprintf(why, size, "%s: output %d: %s", tag, j, d);
            }
            free_all(pl.out, n_out);
        }
    if (getenv("SMELT_ZERO_VERBOSE"))
        print_message("%s: %s\n", g->name,
                      ref.st == SMELT_OK ? "runs" : ref.msg);
    free_all(ref.out, n_out);
    free_all(empty, n_in);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return !*why;
}

/* Checks one variant, printing it when it fails; returns 1 then. */
static int variant_fails(const char *name, const smelt_graph_t *g,
                         smelt_tensor_t **in, int n_in, const unsigned *zero,
                         int *ran)
{
    char why[WHY_LEN], which[256] = "";
    int n = 0;
    for (int i = 0; i < n_in; i++)
        for (int d = 0; d < SMELT_MAX_DIMS; d++)
            if ((zero[i] >> d) & 1 && n >= 0 && (size_t)n < sizeof which)
                n += snprintf(which + n, sizeof which - (size_t)n,
                              "%sinput %d dim %d", n ? ", " : "", i, d);
    (*ran)++;
    if (check_variant(g, in, n_in, zero, why, sizeof why))
        return 0;
    print_error("FAIL %s, %s = 0: %s\n", name, which, why);
    return 1;
}

/* Every variant of graph g on inputs in[]: each dim of each input alone,
 * then each size's dims together. Returns the number that failed (each
 * printed) and adds the number checked to *ran. */
static int sweep_graph(const char *name, const smelt_graph_t *g,
                       smelt_tensor_t **in, int n_in, int *ran)
{
    int failed = 0;
    /* one dim of one input at a time */
    for (int i = 0; i < n_in; i++)
        for (int d = 0; d < smelt_tensor_ndim(in[i]); d++) {
            if (smelt_tensor_dim(in[i], d) == 0)
                continue;
            unsigned zero[MAX_IO] = {0};
            zero[i] = 1u << d;
            failed += variant_fails(name, g, in, n_in, zero, ran);
        }
    /* every dim of one size in every input at once: the dims an op
     * pairs (a matmul's inner dims, a broadcast's, a weight's channels)
     * empty together, so the op has an empty shape it accepts */
    int64_t seen[MAX_IO * SMELT_MAX_DIMS];
    int n_seen = 0;
    for (int i = 0; i < n_in; i++)
        for (int d = 0; d < smelt_tensor_ndim(in[i]); d++) {
            int64_t size = smelt_tensor_dim(in[i], d);
            int k = 0;
            while (k < n_seen && seen[k] != size)
                k++;
            if (size <= 1 || k < n_seen)
                continue;
            seen[n_seen++] = size;
            unsigned zero[MAX_IO] = {0};
            int many = 0;
            for (int i2 = 0; i2 < n_in; i2++)
                for (int d2 = 0; d2 < smelt_tensor_ndim(in[i2]); d2++)
                    if (smelt_tensor_dim(in[i2], d2) == size) {
                        zero[i2] |= 1u << d2;
                        many += i2 != i || d2 != d;
                    }
            if (many) /* else the first family had it */
                failed += variant_fails(name, g, in, n_in, zero, ran);
        }
    return failed;
}

/* Every variant of op case `name` (its model.ir and input_<i>.npy). */
static int run_case(const char *name, int *ran)
{
    char dir[PATH_LEN / 2], path[PATH_LEN];
    snprintf(dir, sizeof dir, "%s/ops/%s", SMELT_TEST_DIR, name);
    snprintf(path, sizeof path, "%s/model.ir", dir);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_tensor_t *in[MAX_IO] = {0};
    int n_in = 0;
    if (smelt_graph_load(ctx, path, &g) != SMELT_OK)
        fail_msg("%s: %s", name, smelt_ctx_error(ctx));
    for (n_in = 0; n_in < MAX_IO; n_in++) {
        snprintf(path, sizeof path, "%s/input_%d.npy", dir, n_in);
        if (!file_exists(path))
            break;
        if (smelt_npy_load(ctx, path, &in[n_in]) != SMELT_OK)
            fail_msg("%s: %s", path, smelt_ctx_error(ctx));
    }
    assert_int_equal(n_in, smelt_graph_num_inputs(g));
    int failed = sweep_graph(name, g, in, n_in, ran);
    free_all(in, MAX_IO);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return failed;
}

/* ---- whole graphs, at the sizes that pick the optimized kernels -------- */

/* Deterministic values in [-1, 1) (an LCG). */
static double lcg(unsigned *x)
{
    *x = *x * 1103515245u + 12345u;
    return (double)((*x >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* Writes `%name: f32[dims] = const [...]` with n values. */
static void put_const(FILE *f, const char *decl, int64_t n, unsigned *seed)
{
    fprintf(f, "  %s = const [", decl);
    for (int64_t i = 0; i < n; i++)
        fprintf(f, "%s%.4f", i ? ", " : "", 0.5 * lcg(seed));
    fprintf(f, "]\n");
}

/* A graph whose shapes select the optimized kernels (the direct, GEMM,
 * depthwise and pointwise convolutions, pooling, GEMM, batched matmul,
 * normalization, softmax rows, transpose, reductions, elementwise), so
 * an empty batch, sequence or plane reaches each of their plan-building
 * and run paths. Release with free(). */
static char *wide_graph_text(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    unsigned seed = 99;
    fprintf(f, "graph wide(%%x: f32[2,3,20,20], %%s: f32[3,40,64]) {\n");
    put_const(f, "%w1: f32[8,3,3,3]", 8 * 3 * 9, &seed);
    put_const(f, "%b1: f32[8]", 8, &seed);
    put_const(f, "%w2: f32[16,8,3,3]", 16 * 8 * 9, &seed);
    put_const(f, "%wd: f32[16,1,3,3]", 16 * 9, &seed);
    put_const(f, "%w4: f32[16,16,1,1]", 16 * 16, &seed);
    put_const(f, "%wf: f32[10,16]", 160, &seed);
    put_const(f, "%bf: f32[10]", 10, &seed);
    put_const(f, "%lns: f32[64]", 64, &seed);
    put_const(f, "%lnb: f32[64]", 64, &seed);
    put_const(f, "%wq: f32[64,64]", 64 * 64, &seed);
    fprintf(f,
            "  %%c1 = Conv(%%x, %%w1, %%b1) {pads = [1, 1, 1, 1]}\n"
            "  %%r1 = Relu(%%c1)\n"
            "  %%c2 = Conv(%%r1, %%w2) {pads = [1, 1, 1, 1]}\n"
            "  %%c3 = Conv(%%c2, %%wd) {group = 16, pads = [1, 1, 1, 1]}\n"
            "  %%c4 = Conv(%%c3, %%w4)\n"
            "  %%a4 = Sigmoid(%%c4)\n"
            "  %%p1 = MaxPool(%%a4) {kernel_shape = [3, 3], strides = [2, 2], "
            "pads = [1, 1, 1, 1]}\n"
            "  %%p2 = AveragePool(%%p1) {kernel_shape = [2, 2], "
            "strides = [2, 2]}\n"
            "  %%gp = GlobalAveragePool(%%p2)\n"
            "  %%fl = Flatten(%%gp)\n"
            "  %%fc = Gemm(%%fl, %%wf, %%bf) {transB = 1}\n"
            "  %%prob = Softmax(%%fc)\n"
            "  %%ln = LayerNormalization(%%s, %%lns, %%lnb) {axis = -1}\n"
            "  %%q = MatMul(%%ln, %%wq)\n"
            "  %%qt = Transpose(%%q) {perm = [0, 2, 1]}\n"
            "  %%att = MatMul(%%q, %%qt)\n"
            "  %%lsm = LogSoftmax(%%att) {axis = -1}\n"
            "  %%th = Tanh(%%lsm)\n"
            "  %%sum = ReduceSum(%%th) {axes = [1], keepdims = 0}\n"
            "  %%mx = ReduceMax(%%q) {axes = [-1], keepdims = 0}\n"
            "  %%cat = Concat(%%sum, %%mx) {axis = 1}\n"
            "  return %%prob, %%cat\n"
            "}\n");
    assert_int_equal(fclose(f), 0);
    return text;
}

/* An input for graph input i of g: its declared type, symbolic dims 2,
 * floats from the LCG, other dtypes zero (valid indices and flags). */
static smelt_tensor_t *graph_input(const smelt_graph_t *g, int i,
                                   unsigned *seed)
{
    int nd = smelt_graph_input_ndim(g, i);
    smelt_dtype dt = smelt_graph_input_dtype(g, i);
    int64_t dims[SMELT_MAX_DIMS];
    assert_true(nd >= 0 && dt != SMELT_DTYPE_UNDEFINED);
    for (int d = 0; d < nd; d++) {
        dims[d] = smelt_graph_input_dim(g, i, d);
        if (dims[d] < 0)
            dims[d] = 2;
    }
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(NULL, dt, nd, dims, &t), SMELT_OK);
    if (dt == SMELT_DTYPE_F32)
        for (int64_t k = 0; k < smelt_tensor_numel(t); k++)
            ((float *)smelt_tensor_data(t))[k] = (float)lcg(seed);
    return t;
}

/* The sweep over a whole graph (loaded from path, or parsed from text). */
static int sweep_model(const char *name, const char *path, const char *text,
                       int *ran)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_status st = text
                          ? smelt_graph_parse(ctx, text, strlen(text), name, &g)
                          : smelt_graph_load(ctx, path, &g);
    if (st != SMELT_OK)
        fail_msg("%s: %s", name, smelt_ctx_error(ctx));
    int n_in = smelt_graph_num_inputs(g);
    assert_true(n_in <= MAX_IO);
    smelt_tensor_t *in[MAX_IO] = {0};
    unsigned seed = 7;
    for (int i = 0; i < n_in; i++)
        in[i] = graph_input(g, i, &seed);
    if (text) {
        /* unchanged, the graph runs on optimized kernels (so its empty
         * variants do reach the plan paths that choose them) */
        smelt_plan_options opt;
        smelt_plan_options_default(&opt);
        smelt_plan_t *p = NULL;
        smelt_plan_stats stats = SMELT_STRUCT_INIT(smelt_plan_stats);
        if (smelt_plan_compile(ctx, g, &opt, &p) != SMELT_OK)
            fail_msg("%s: %s", name, smelt_ctx_error(ctx));
        assert_int_equal(smelt_plan_get_stats(p, &stats), SMELT_OK);
        assert_true(stats.kernel_steps >= 10);
        smelt_plan_free(p);
    }
    int failed = sweep_graph(name, g, in, n_in, ran);
    free_all(in, n_in);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return failed;
}

/* Models as a user meets them: the example CNN with an empty batch (it
 * died with SIGFPE while its plan was built), the small test CNN, and a
 * graph at the sizes that choose each family of optimized kernels. */
static void test_graphs_zero_dims(void **state)
{
    (void)state;
    int ran = 0, failed = 0;
    char *wide = wide_graph_text();
    failed +=
        sweep_model("digits_cnn", SMELT_TEST_DIR "/../examples/digits_cnn.onnx",
                    NULL, &ran);
    failed += sweep_model("cnn_small", SMELT_TEST_DIR "/graphs/cnn_small.ir",
                          NULL, &ran);
    failed += sweep_model("wide", NULL, wide, &ran);
    free(wide);
    print_message("%d empty-dimension variants of whole graphs checked\n", ran);
    assert_true(ran >= 10);
    if (failed)
        fail_msg("%d of %d empty-dimension variants failed", failed, ran);
}

static void test_ops_zero_dims(void **state)
{
    (void)state;
    int n, ran = 0, failed = 0;
    char **cases = list_cases(&n);
    assert_true(n > 0);
    const char *only = getenv("SMELT_OP_CASE");
    for (int i = 0; i < n; i++) {
        if (!only || strncmp(cases[i], only, strlen(only)) == 0)
            failed += run_case(cases[i], &ran);
        free(cases[i]);
    }
    free(cases);
    print_message("%d empty-dimension variants checked\n", ran);
    if (!only)
        assert_true(ran > 1000);
    if (failed)
        fail_msg("%d of %d empty-dimension variants failed", failed, ran);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_zero_dims),
        cmocka_unit_test(test_graphs_zero_dims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
