/*
 * test_plan.c - compiled plans against the reference interpreter.
 *
 * Every per-op case under tests/ops/ and every graph under tests/graphs/
 * and tests/passes/ is compiled into a plan and run, under each ISA level
 * that SMELT_ISA can force (scalar, avx2, avx512; a level above what the
 * CPU has runs the lower path), and its outputs are compared with the
 * reference interpreter's: floats within 1e-4 relative, integers and
 * bools exactly. Then the plan's own promises: buffers share memory
 * along a chain, one plan runs from four threads at once with identical
 * results, a run into caller tensors allocates nothing, and bad inputs
 * and options fail with the right status and message.
 *
 * SMELT_OP_CASE=<prefix> restricts the op walk.
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#define RTOL 1e-4
#define ATOL 1e-5
#define MAX_IO 32
#define PATH_LEN 4096

static const char *const isas[] = {"scalar", "avx2", "avx512"};
#define N_ISAS 3

static int is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
           dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
}

/* Whether got matches want (shapes, then values); why says what differs. */
static int match(smelt_tensor_t *got, smelt_tensor_t *want, char *why,
                 size_t size)
{
    int same = smelt_tensor_dtype(got) == smelt_tensor_dtype(want) &&
               smelt_tensor_ndim(got) == smelt_tensor_ndim(want);
    for (int i = 0; same && i < smelt_tensor_ndim(got); i++)
        same = smelt_tensor_dim(got, i) == smelt_tensor_dim(want, i);
    if (!same) {
        snprintf(why, size, "dtype or shape differs");
        return 0;
    }
    int fl = is_float(smelt_tensor_dtype(want));
    for (int64_t i = 0; i < smelt_tensor_numel(want); i++) {
        double a = smelt_tensor_get_f64(got, i);
        double e = smelt_tensor_get_f64(want, i);
        if (a == e || (isnan(a) && isnan(e)))
            continue;
        if (fl && !isinf(a) && !isinf(e) &&
            fabs(a - e) <= ATOL + RTOL * fabs(e))
            continue;
        if (!fl && smelt_tensor_dtype(want) == SMELT_DTYPE_I64 &&
            ((int64_t *)smelt_tensor_data(got))[i] ==
                ((int64_t *)smelt_tensor_data(want))[i])
            continue;
        snprintf(why, size, "element %lld: got %.9g, expected %.9g",
                 (long long)i, a, e);
        return 0;
    }
    return 1;
}

static void free_all(smelt_tensor_t **t, int n)
{
    for (int i = 0; i < n; i++) {
        smelt_tensor_free(t[i]);
        t[i] = NULL;
    }
}

/* Compiles g at `level` under SMELT_ISA=isa for inputs `in`, runs it and
 * compares with want[]. Returns 1 on a match, else 0 with why set. */
static int plan_matches(smelt_graph_t *g, int level, const char *isa,
                        smelt_tensor_t **in, int n_in, smelt_tensor_t **want,
                        int n_out, char *why, size_t size)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    setenv("SMELT_ISA", isa, 1);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = level;
    o.inputs = in;
    o.n_inputs = n_in;
    smelt_plan_t *p = NULL;
    smelt_tensor_t *got[MAX_IO] = {0};
    int ok = 0;
    smelt_status st = smelt_plan_compile(ctx, g, &o, &p);
    unsetenv("SMELT_ISA");
    if (st != SMELT_OK) {
        snprintf(why, size, "-O%d %s: compile: %s: %s", level, isa,
                 smelt_status_name(st), smelt_ctx_error(ctx));
        goto done;
    }
    /* twice: the second run reuses the session and its arena */
    for (int run = 0; run < 2; run++) {
        free_all(got, n_out);
        st = smelt_plan_run(ctx, p, in, n_in, got, n_out);
        if (st != SMELT_OK) {
            snprintf(why, size, "-O%d %s: run: %s: %s", level, isa,
                     smelt_status_name(st), smelt_ctx_error(ctx));
            goto done;
        }
    }
    ok = 1;
    for (int j = 0; j < n_out && ok; j++) {
        char d[512];
        if (!match(got[j], want[j], d, sizeof d)) {
            snprintf(why, size, "-O%d %s: output %d: %s", level, isa, j, d);
            ok = 0;
        }
    }
done:
    free_all(got, n_out);
    smelt_plan_free(p);
    smelt_ctx_free(ctx);
    return ok;
}

/* The reference outputs of g on in, then the plan at each level and ISA.
 * Returns -1 when the reference itself fails (nothing to compare). */
static int check_graph(smelt_graph_t *g, smelt_tensor_t **in, int n_in,
                       const int *levels, int n_levels, char *why, size_t size)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    int n_out = smelt_graph_num_outputs(g);
    smelt_tensor_t *want[MAX_IO] = {0};
    assert_true(n_out <= MAX_IO);
    if (smelt_graph_run_reference(ctx, g, in, n_in, want, n_out) != SMELT_OK) {
        smelt_ctx_free(ctx);
        return -1;
    }
    int ok = 1;
    for (int l = 0; l < n_levels && ok; l++)
        for (int k = 0; k < N_ISAS && ok; k++)
            ok = plan_matches(g, levels[l], isas[k], in, n_in, want, n_out, why,
                              size);
    free_all(want, n_out);
    smelt_ctx_free(ctx);
    return ok;
}

/* ---- the per-op cases ------------------------------------------------------
 */

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the entries of dir (sorted) that `want` accepts; *n of them. */
static char **list_dir(const char *dir,
                       int (*want)(const char *dir, const char *name), int *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (!d)
        return NULL;
    char **v = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !want(dir, e->d_name))
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

static void free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int is_case(const char *dir, const char *name)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/%s/model.ir", dir, name);
    return file_exists(path);
}

static int is_ir(const char *dir, const char *name)
{
    (void)dir;
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".ir");
}

/* One op case: 1 pass, 0 fail (why set), -1 nothing to compare. */
static int run_op_case(const char *name, char *why, size_t size)
{
    char dir[PATH_LEN / 2], path[PATH_LEN];
    snprintf(dir, sizeof dir, "%s/ops/%s", SMELT_TEST_DIR, name);
    snprintf(path, sizeof path, "%s/model.ir", dir);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_tensor_t *in[MAX_IO] = {0};
    int n_in = 0, rc = -1;
    if (smelt_graph_load(ctx, path, &g) != SMELT_OK)
        goto done;
    for (n_in = 0; n_in < MAX_IO; n_in++) {
        snprintf(path, sizeof path, "%s/input_%d.npy", dir, n_in);
        if (!file_exists(path) ||
            smelt_npy_load(ctx, path, &in[n_in]) != SMELT_OK)
            break;
    }
    if (n_in != smelt_graph_num_inputs(g))
        goto done;
    /* -O0: each op on its own kernel; -O3: what the optimizer makes */
    static const int levels[] = {0, 3};
    rc = check_graph(g, in, n_in, levels, 2, why, size);
done:
    free_all(in, MAX_IO);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return rc;
}

static void test_plan_op_cases(void **state)
{
    (void)state;
    int n, ran = 0, failed = 0;
    char **cases = list_dir(SMELT_TEST_DIR "/ops", is_case, &n);
    assert_true(n > 0);
    const char *only = getenv("SMELT_OP_CASE");
    for (int i = 0; i < n; i++) {
        if (only && strncmp(cases[i], only, strlen(only)) != 0)
            continue;
        char why[1024] = "";
        int rc = run_op_case(cases[i], why, sizeof why);
        ran += rc >= 0;
        if (rc == 0) {
            print_error("FAIL %s: %s\n", cases[i], why);
            failed++;
        }
    }
    free_list(cases, n);
    print_message("%d op cases compared with the reference\n", ran);
    if (!only)
        assert_true(ran > 400);
    if (failed)
        fail_msg("%d of %d op cases differ from the reference", failed, ran);
}

/* ---- whole graphs with random inputs ------------------------------------- */

/* A deterministic input for graph input i: floats in [-1, 1), integers in
 * [0, 3), bools 0/1; symbolic dims are 2. NULL when the input's type is
 * not known. */
static smelt_tensor_t *random_input(smelt_graph_t *g, int i, unsigned *seed)
{
    smelt_dtype dt = smelt_graph_input_dtype(g, i);
    int nd = smelt_graph_input_ndim(g, i);
    if (dt == SMELT_DTYPE_UNDEFINED || nd < 0)
        return NULL;
    int64_t dims[SMELT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        dims[d] = smelt_graph_input_dim(g, i, d);
        if (dims[d] < 0)
            dims[d] = 2;
    }
    smelt_tensor_t *t = NULL;
    if (smelt_tensor_init(NULL, dt, nd, dims, &t) != SMELT_OK)
        return NULL;
    void *p = smelt_tensor_data(t);
    for (int64_t k = 0; k < smelt_tensor_numel(t); k++) {
        *seed = *seed * 1103515245u + 12345u;
        unsigned r = (*seed >> 8) & 0xffff;
        double f = r / 32768.0 - 1.0;
        switch (dt) {
        case SMELT_DTYPE_F32: ((float *)p)[k] = (float)f; break;
        case SMELT_DTYPE_F64: ((double *)p)[k] = f; break;
        case SMELT_DTYPE_I32: ((int32_t *)p)[k] = (int32_t)(r % 3); break;
        case SMELT_DTYPE_I64: ((int64_t *)p)[k] = (int64_t)(r % 3); break;
        case SMELT_DTYPE_BOOL: ((uint8_t *)p)[k] = (uint8_t)(r & 1); break;
        default: break; /* zeros */
        }
    }
    return t;
}

/* Every .ir graph of dir through plans at -O0 and -O3; returns how many
 * were compared. */
static int walk_graphs(const char *dir, int *failed)
{
    int n, compared = 0;
    char **files = list_dir(dir, is_ir, &n);
    for (int i = 0; i < n; i++) {
        char path[PATH_LEN], why[1024] = "";
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_graph_t *g = NULL;
        smelt_tensor_t *in[MAX_IO] = {0};
        int n_in = 0, ok = 1;
        if (smelt_graph_load(ctx, path, &g) == SMELT_OK &&
            smelt_graph_verify(ctx, g) == SMELT_OK &&
            smelt_graph_num_inputs(g) <= MAX_IO) {
            unsigned seed = 1234u + (unsigned)i;
            n_in = smelt_graph_num_inputs(g);
            for (int k = 0; k < n_in && ok; k++)
                ok = (in[k] = random_input(g, k, &seed)) != NULL;
            static const int levels[] = {0, 3};
            int rc =
                ok ? check_graph(g, in, n_in, levels, 2, why, sizeof why) : -1;
            compared += rc >= 0;
            if (rc == 0) {
                print_error("FAIL %s: %s\n", path, why);
                (*failed)++;
            }
        }
        free_all(in, MAX_IO);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
    free_list(files, n);
    return compared;
}

static void test_plan_graphs(void **state)
{
    (void)state;
    int failed = 0;
    int a = walk_graphs(SMELT_TEST_DIR "/graphs", &failed);
    int b = walk_graphs(SMELT_TEST_DIR "/passes", &failed);
    print_message("%d + %d graphs compared with the reference\n", a, b);
    assert_true(a >= 8);
    assert_true(b >= 10);
    if (failed)
        fail_msg("%d graphs differ from the reference", failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_op_cases),
        cmocka_unit_test(test_plan_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
