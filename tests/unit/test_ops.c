/*
 * test_ops.c - the per-op reference suite. Every case directory under
 * tests/ops/ (written by scripts/gen_op_tests.py, expected values computed
 * by numpy / PyTorch) holds model.ir, input_<i>.npy and expected_<i>.npy;
 * each is loaded, verified and run through the reference interpreter, and
 * every output is compared with its expected tensor. A failing case is
 * reported (case, output, first mismatching element, both values) and the
 * walk goes on, so one broken op does not hide the others; the test fails
 * at the end with the count. A second test checks that every op of
 * src/ir/ops.def has at least one case.
 *
 * Only the public API of smelt.h is used. SMELT_OP_CASE=<prefix> in the
 * environment restricts the run to the cases whose name starts with it.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#define OPS_DIR SMELT_TEST_DIR "/ops"
#define OPS_DEF SMELT_TEST_DIR "/../src/ir/ops.def"
#define RTOL 1e-4
#define ATOL 1e-5
#define MAX_IO 32
#define PATH_LEN 4096

/* A growable list of strings (test code: plain malloc). */
typedef struct strlist {
    char **v;
    int n, cap;
} strlist;

static void strlist_add(strlist *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    char *c = malloc(len + 1);
    assert_non_null(c);
    memcpy(c, s, len);
    c[len] = 0;
    l->v[l->n++] = c;
}

static void strlist_free(strlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The case directories under tests/ops, sorted so the report is stable. */
static void list_cases(strlist *out)
{
    DIR *dir = opendir(OPS_DIR);
    if (!dir)
        fail_msg("cannot open %s", OPS_DIR);
    struct dirent *e;
    char path[PATH_LEN];
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/model.ir", OPS_DIR, e->d_name);
        if (file_exists(path))
            strlist_add(out, e->d_name, strlen(e->d_name));
    }
    closedir(dir);
    qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_str);
}

/* The op names of ops.def, read at run time: the first identifier of each
 * line whose first non-blank text is "OP(". */
static void list_ops(strlist *out)
{
    char *text = tu_read_file(OPS_DEF, NULL);
    if (!text)
        fail_msg("cannot read %s", OPS_DEF);
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "OP(", 3) == 0) {
            p += 3;
            while (*p == ' ')
                p++;
            size_t n = strcspn(p, " ,)\n");
            if (n > 0)
                strlist_add(out, p, n);
        }
        line = next ? next + 1 : NULL;
    }
    free(text);
}

static int is_float_dtype(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
           dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
}

/* Element i of an integer or bool tensor, exactly (doubles would round
 * int64 values past 2^53). */
static int64_t get_i64(smelt_tensor_t *t, int64_t i)
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

static void shape_str(const smelt_tensor_t *t, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s[", smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t) && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "," : "",
                      (long long)smelt_tensor_dim(t, i));
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
}

/* Whether got matches want: same dtype and shape; floats within
 * ATOL + RTOL * |want| (nan equals nan, infinities must match exactly),
 * integers and bools exactly. On a mismatch writes what differs (the
 * first mismatching element and both values) into why and returns 0. */
static int tensors_match(smelt_tensor_t *got, smelt_tensor_t *want, char *why,
                         size_t size)
{
    char gs[128], ws[128];
    shape_str(got, gs, sizeof gs);
    shape_str(want, ws, sizeof ws);
    int same = smelt_tensor_dtype(got) == smelt_tensor_dtype(want) &&
               smelt_tensor_ndim(got) == smelt_tensor_ndim(want);
    for (int i = 0; same && i < smelt_tensor_ndim(got); i++)
        same = smelt_tensor_dim(got, i) == smelt_tensor_dim(want, i);
    if (!same) {
        snprintf(why, size, "got %s, expected %s", gs, ws);
        return 0;
    }
    int64_t n = smelt_tensor_numel(want);
    int fl = is_float_dtype(smelt_tensor_dtype(want));
    for (int64_t i = 0; i < n; i++) {
        if (fl) {
            double a = smelt_tensor_get_f64(got, i);
            double e = smelt_tensor_get_f64(want, i);
            if (a == e || (isnan(a) && isnan(e)))
                continue;
            if (!isinf(a) && !isinf(e) && fabs(a - e) <= ATOL + RTOL * fabs(e))
                continue;
            snprintf(why, size,
                     "%s: element %lld: got %.9g, expected %.9g (|diff| %.3g)",
                     ws, (long long)i, a, e, fabs(a - e));
            return 0;
        }
        int64_t a = get_i64(got, i), e = get_i64(want, i);
        if (a != e) {
            snprintf(why, size, "%s: element %lld: got %lld, expected %lld", ws,
                     (long long)i, (long long)a, (long long)e);
            return 0;
        }
    }
    return 1;
}

typedef struct case_io {
    smelt_graph_t *g;
    smelt_tensor_t *in[MAX_IO];
    smelt_tensor_t *out[MAX_IO];
    smelt_tensor_t *want[MAX_IO];
    int n_in, n_out, n_want;
} case_io;

static void case_io_free(case_io *io)
{
    for (int i = 0; i < MAX_IO; i++) {
        smelt_tensor_free(io->in[i]);
        smelt_tensor_free(io->out[i]);
        smelt_tensor_free(io->want[i]);
    }
    smelt_graph_free(io->g);
}

/* Loads <dir>/<prefix>_<i>.npy for i = 0.. while the files exist (at most
 * MAX_IO); returns the count, or -1 with why set when one fails to load. */
static int load_npys(smelt_ctx_t *ctx, const char *dir, const char *prefix,
                     smelt_tensor_t **t, char *why, size_t size)
{
    char path[PATH_LEN];
    int i;
    for (i = 0; i < MAX_IO; i++) {
        snprintf(path, sizeof path, "%s/%s_%d.npy", dir, prefix, i);
        if (!file_exists(path))
            break;
        smelt_status st = smelt_npy_load(ctx, path, &t[i]);
        if (st != SMELT_OK) {
            t[i] = NULL;
            snprintf(why, size, "loading %s_%d.npy: %s: %s", prefix, i,
                     smelt_status_name(st), smelt_ctx_error(ctx));
            return -1;
        }
    }
    return i;
}

/* Runs one case; returns 1 when it passes, else 0 after printing why. */
static int run_case(const char *name)
{
    char dir[PATH_LEN / 2], path[PATH_LEN], why[1024] = "";
    snprintf(dir, sizeof dir, "%s/%s", OPS_DIR, name);
    snprintf(path, sizeof path, "%s/model.ir", dir);
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_non_null(ctx);
    case_io io;
    memset(&io, 0, sizeof io);
    int ok = 0;
    smelt_status st = smelt_graph_load(ctx, path, &io.g);
    if (st != SMELT_OK) {
        io.g = NULL;
        snprintf(why, sizeof why, "load: %s: %s", smelt_status_name(st),
                 smelt_ctx_error(ctx));
        goto done;
    }
    st = smelt_graph_verify(ctx, io.g);
    if (st != SMELT_OK) {
        snprintf(why, sizeof why, "verify: %s: %s", smelt_status_name(st),
                 smelt_ctx_error(ctx));
        goto done;
    }
    int n_files = load_npys(ctx, dir, "input", io.in, why, sizeof why);
    if (n_files < 0)
        goto done;
    io.n_in = smelt_graph_num_inputs(io.g);
    if (io.n_in != n_files) {
        snprintf(why, sizeof why, "graph has %d inputs, case has %d files",
                 io.n_in, n_files);
        goto done;
    }
    io.n_want = load_npys(ctx, dir, "expected", io.want, why, sizeof why);
    if (io.n_want < 0)
        goto done;
    io.n_out = smelt_graph_num_outputs(io.g);
    if (io.n_out != io.n_want) {
        snprintf(why, sizeof why, "graph has %d outputs, case expects %d",
                 io.n_out, io.n_want);
        goto done;
    }
    st = smelt_graph_run_reference(ctx, io.g, io.in, io.n_in, io.out, io.n_out);
    if (st != SMELT_OK) {
        memset(io.out, 0, sizeof io.out); /* outputs undefined on error */
        snprintf(why, sizeof why, "run: %s: %s", smelt_status_name(st),
                 smelt_ctx_error(ctx));
        goto done;
    }
    ok = 1;
    for (int j = 0; j < io.n_out && ok; j++) {
        char diff[768];
        if (!io.out[j]) {
            snprintf(why, sizeof why, "output %d: not produced", j);
            ok = 0;
        } else if (!tensors_match(io.out[j], io.want[j], diff, sizeof diff)) {
            snprintf(why, sizeof why, "output %d: %s", j, diff);
            ok = 0;
        }
    }
done:
    if (!ok)
        print_error("FAIL %s: %s\n", name, why);
    case_io_free(&io);
    smelt_ctx_free(ctx);
    return ok;
}

static void test_op_cases(void **state)
{
    (void)state;
    strlist cases = {0}, failed = {0};
    list_cases(&cases);
    assert_true(cases.n > 0);
    const char *only = getenv("SMELT_OP_CASE");
    int ran = 0;
    for (int i = 0; i < cases.n; i++) {
        if (only && strncmp(cases.v[i], only, strlen(only)) != 0)
            continue;
        ran++;
        if (!run_case(cases.v[i]))
            strlist_add(&failed, cases.v[i], strlen(cases.v[i]));
    }
    int n_failed = failed.n;
    if (n_failed) {
        print_error("%d of %d op cases failed:", n_failed, ran);
        for (int i = 0; i < failed.n; i++)
            print_error(" %s", failed.v[i]);
        print_error("\n");
    }
    strlist_free(&failed);
    strlist_free(&cases);
    if (n_failed)
        fail_msg("%d of %d op cases failed", n_failed, ran);
}

/* Every op of ops.def has a case directory <Op>_<case>. Op names have no
 * '_', so "Conv_" cannot match a ConvTranspose case. */
static void test_op_coverage(void **state)
{
    (void)state;
    strlist ops = {0}, cases = {0};
    list_ops(&ops);
    list_cases(&cases);
    assert_true(ops.n > 0);
    int missing = 0;
    for (int i = 0; i < ops.n; i++) {
        size_t len = strlen(ops.v[i]);
        int found = 0;
        for (int j = 0; j < cases.n && !found; j++)
            found = strncmp(cases.v[j], ops.v[i], len) == 0 &&
                    cases.v[j][len] == '_';
        if (!found) {
            print_error("op %s has no case under tests/ops\n", ops.v[i]);
            missing++;
        }
    }
    strlist_free(&ops);
    strlist_free(&cases);
    if (missing)
        fail_msg("%d ops of ops.def lack a case in tests/ops "
                 "(run scripts/gen_op_tests.py)",
                 missing);
}

/* The comparison itself, on hand-made tensors: it must pass equal
 * tensors, tolerate rtol/atol, treat nan as equal to nan, and catch value,
 * shape, dtype and int64 differences naming the element. */
static void test_compare(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    int64_t dims[2] = {2, 2}, dims2[2] = {1, 4};
    smelt_tensor_t *a, *b, *c, *i1, *i2;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &a), 0);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims, &b), 0);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, dims2, &c), 0);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 1, dims, &i1), 0);
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_I64, 1, dims, &i2), 0);
    float *pa = smelt_tensor_data(a), *pb = smelt_tensor_data(b);
    const float va[4] = {1.0f, NAN, -INFINITY, 100.0f};
    memcpy(pa, va, sizeof va);
    memcpy(pb, va, sizeof va);
    char why[256];
    assert_true(tensors_match(a, b, why, sizeof why));
    pb[3] = 100.005f; /* within 1e-5 + 1e-4 * 100 */
    assert_true(tensors_match(a, b, why, sizeof why));
    pb[3] = 100.02f;
    assert_false(tensors_match(a, b, why, sizeof why));
    assert_non_null(strstr(why, "element 3"));
    pb[3] = 100.0f;
    pb[1] = 0.0f; /* nan vs 0 */
    assert_false(tensors_match(a, b, why, sizeof why));
    assert_non_null(strstr(why, "element 1"));
    pb[1] = NAN;
    pb[2] = INFINITY;
    assert_false(tensors_match(a, b, why, sizeof why));
    assert_non_null(strstr(why, "element 2"));
    assert_false(tensors_match(a, c, why, sizeof why));
    assert_non_null(strstr(why, "f32[1,4]"));
    assert_false(tensors_match(a, i1, why, sizeof why));
    int64_t *q1 = smelt_tensor_data(i1), *q2 = smelt_tensor_data(i2);
    q1[1] = q2[1] = (int64_t)1 << 53;
    assert_true(tensors_match(i1, i2, why, sizeof why));
    q2[1] += 1; /* equal as doubles, not as int64 */
    assert_false(tensors_match(i1, i2, why, sizeof why));
    assert_non_null(strstr(why, "9007199254740993"));
    smelt_tensor_free(a);
    smelt_tensor_free(b);
    smelt_tensor_free(c);
    smelt_tensor_free(i1);
    smelt_tensor_free(i2);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_op_coverage),
        cmocka_unit_test(test_op_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
