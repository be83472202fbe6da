/*
 * test_npy.c - .npy reading and writing: round trips of every dtype numpy
 * has, and a clear error for each kind of malformed file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/tensor.h"

/* An .npy v1.0 image with the given header dict and data bytes. */
static size_t make_npy(unsigned char *buf, const char *dict, const void *data,
                       size_t n)
{
    size_t hl = strlen(dict);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    memcpy(buf + 10, dict, hl);
    if (n)
        memcpy(buf + 10 + hl, data, n);
    return 10 + hl + n;
}

static void expect_error(const void *buf, size_t len, smelt_status code,
                         const char *fragment)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_npy_parse(ctx, buf, len, "x.npy", &t), code);
    assert_null(t);
    if (!strstr(smelt_ctx_error(ctx), fragment))
        fail_msg("error '%s' lacks '%s'", smelt_ctx_error(ctx), fragment);
    assert_non_null(strstr(smelt_ctx_error(ctx), "x.npy"));
    smelt_ctx_free(ctx);
}

static void test_parse_valid(void **state)
{
    (void)state;
    unsigned char buf[256];
    const float v[6] = {1, 2, 3, 4, 5, 6};
    size_t n = make_npy(buf,
                        "{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (2, 3), }\n",
                        v, sizeof v);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t;
    assert_int_equal(smelt_npy_parse(ctx, buf, n, "x.npy", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_F32);
    assert_int_equal(smelt_tensor_ndim(t), 2);
    assert_int_equal(smelt_tensor_dim(t, 1), 3);
    assert_true(smelt_tensor_get_f64(t, 5) == 6.0);
    smelt_tensor_free(t);
    /* a scalar */
    const int64_t s = -7;
    n = make_npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                 &s, sizeof s);
    assert_int_equal(smelt_npy_parse(ctx, buf, n, "x.npy", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_ndim(t), 0);
    assert_true(smelt_tensor_get_f64(t, 0) == -7.0);
    smelt_tensor_free(t);
    /* '<u8' is u64 (numpy's uint64), beyond INT64_MAX */
    const uint64_t u = UINT64_C(18446744073709551615);
    n = make_npy(buf, "{'descr': '<u8', 'fortran_order': False, 'shape': (), }",
                 &u, sizeof u);
    assert_int_equal(smelt_npy_parse(ctx, buf, n, "x.npy", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_U64);
    assert_true(*(const uint64_t *)smelt_tensor_data(t) == u);
    assert_true(smelt_tensor_get_f64(t, 0) == 18446744073709551616.0);
    smelt_tensor_free(t);
    smelt_ctx_free(ctx);
}

static void test_round_trip_all_dtypes(void **state)
{
    (void)state;
    const smelt_dtype dts[] = {
        SMELT_DTYPE_F32,  SMELT_DTYPE_F64, SMELT_DTYPE_F16, SMELT_DTYPE_I8,
        SMELT_DTYPE_U8,   SMELT_DTYPE_I16, SMELT_DTYPE_I32, SMELT_DTYPE_I64,
        SMELT_DTYPE_BOOL, SMELT_DTYPE_U16, SMELT_DTYPE_U32, SMELT_DTYPE_U64};
    smelt_ctx_t *ctx = smelt_ctx_init();
    char path[256];
    snprintf(path, sizeof path, "%s/npy_round_trip.npy", SMELT_BUILD_DIR);
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        int64_t dims[3] = {2, 1, 3};
        smelt_tensor_t *t, *back;
        assert_int_equal(smelt_tensor_init(ctx, dts[k], 3, dims, &t), 0);
        unsigned char *d = smelt_tensor_data(t);
        for (size_t i = 0; i < 6 * smelt_dtype_size(dts[k]); i++)
            d[i] = (unsigned char)(i * 37 + k);
        if (dts[k] == SMELT_DTYPE_BOOL)
            for (int i = 0; i < 6; i++)
                d[i] &= 1;
        assert_int_equal(smelt_npy_save(ctx, path, t), SMELT_OK);
        assert_int_equal(smelt_npy_load(ctx, path, &back), SMELT_OK);
        assert_true(sm_tensor_equal(t, back));
        smelt_tensor_free(t);
        smelt_tensor_free(back);
    }
    /* numpy has no bfloat16: saving one is a clear error */
    smelt_tensor_t *t;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_BF16, 0, NULL, &t), 0);
    assert_int_equal(smelt_npy_save(ctx, path, t), SMELT_ERR_UNSUPPORTED);
    assert_non_null(strstr(smelt_ctx_error(ctx), "bf16"));
    smelt_tensor_free(t);
    remove(path);
    smelt_ctx_free(ctx);
}

static void test_malformed(void **state)
{
    (void)state;
    unsigned char buf[512];
    float v[4] = {0};
    expect_error("hello", 5, SMELT_ERR_PARSE, "bad magic");
    expect_error("\x93NUMPYxx", 8, SMELT_ERR_PARSE, "bad magic");
    size_t n = make_npy(buf,
                        "{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (2, 2), }",
                        v, sizeof v);
    buf[6] = 9;
    expect_error(buf, n, SMELT_ERR_UNSUPPORTED, "version 9");
    buf[6] = 1;
    expect_error(buf, 20, SMELT_ERR_PARSE, "runs past the end");
    expect_error(buf, n - 1, SMELT_ERR_PARSE, "truncated data");
    n = make_npy(buf,
                 "{'descr': '<c8', 'fortran_order': False, "
                 "'shape': (2,), }",
                 v, 16);
    expect_error(buf, n, SMELT_ERR_UNSUPPORTED, "unsupported dtype '<c8'");
    n = make_npy(buf,
                 "{'descr': '>f4', 'fortran_order': False, "
                 "'shape': (2,), }",
                 v, 8);
    expect_error(buf, n, SMELT_ERR_UNSUPPORTED, "big-endian");
    n = make_npy(buf,
                 "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (4611686018427387904, 4), }",
                 v, 16);
    expect_error(buf, n, SMELT_ERR_LIMIT, "overflow");
    /* empty (a zero dim) but the other dims' product overflows: refused,
     * since kernels take partial products of dims (fuzz_npy's finding) */
    n = make_npy(buf,
                 "{'descr': '<f8', 'fortran_order': False, "
                 "'shape': (2444443, 4444444444444, 0), }",
                 v, 0);
    expect_error(buf, n, SMELT_ERR_LIMIT, "overflow");
    n = make_npy(buf,
                 "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (99999999999999999999,), }",
                 v, 16);
    expect_error(buf, n, SMELT_ERR_LIMIT, "does not fit");
    n = make_npy(buf,
                 "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (1,1,1,1,1,1,1,1,1), }",
                 v, 4);
    expect_error(buf, n, SMELT_ERR_LIMIT, "more than 8 dimensions");
    n = make_npy(buf,
                 "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (2, x), }",
                 v, 8);
    expect_error(buf, n, SMELT_ERR_PARSE, "expected a dimension");
    n = make_npy(buf, "{'fortran_order': False, 'shape': (2,), }", v, 8);
    expect_error(buf, n, SMELT_ERR_PARSE, "no 'descr'");
    n = make_npy(buf, "{'descr': '<f4', 'shape': (2,), }", v, 8);
    expect_error(buf, n, SMELT_ERR_PARSE, "no 'fortran_order'");
    n = make_npy(buf, "{'descr': '<f4', 'fortran_order': False, }", v, 8);
    expect_error(buf, n, SMELT_ERR_PARSE, "no 'shape'");
    /* 10 GB promised, 16 bytes given: rejected before allocating */
    n = make_npy(buf,
                 "{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (2500000000,), }",
                 v, 16);
    expect_error(buf, n, SMELT_ERR_PARSE, "truncated data");

    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t;
    assert_int_equal(smelt_npy_load(ctx, "/nonexistent/x.npy", &t),
                     SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "/nonexistent/x.npy"));
    smelt_ctx_free(ctx);
}

/* The header dict is parsed, not searched: duplicate and unknown keys,
 * keys hidden inside other strings, values of the wrong kind and text after
 * the dict are errors, and so are bytes after the data. */
static void test_header_grammar(void **state)
{
    (void)state;
    unsigned char buf[512];
    float v[4] = {0};
    size_t n;
#define BAD(dict, nbytes, frag)                                                \
    n = make_npy(buf, dict, v, nbytes);                                        \
    expect_error(buf, n, SMELT_ERR_PARSE, frag)
    BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
        "'shape': (4,), }",
        16, "key 'shape' given twice");
    BAD("{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, "
        "'shape': (2,), }",
        8, "key 'descr' given twice");
    /* the old search found 'shape' inside the descr string */
    BAD("{'descr': '<f4', 'fortran_order': False, "
        "'x': 'shape': (2,), }",
        8, "unknown key 'x'");
    BAD("{'descr': '<f4', 'fortran_order': 'yes', 'shape': (2,), }", 8,
        "must be True or False");
    BAD("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,), }", 8,
        "must be True or False");
    BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", 8,
        "text after the closing");
    BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8,
        "needs its comma");
    BAD("{'descr': '<f4', 'fortran_order': False, 'shape': 2, }", 8,
        "must be a tuple");
    BAD("{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", 8,
        "expected ',' or '}'");
    BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12,
        "4 bytes of trailing data");
#undef BAD
    /* double quotes, no trailing comma, newline padding: still numpy */
    n = make_npy(buf,
                 "{\"descr\": \"<f4\", \"fortran_order\": False, "
                 "\"shape\": (2, 2)}   \n",
                 v, 16);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_npy_parse(ctx, buf, n, "x.npy", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_numel(t), 4);
    smelt_tensor_free(t);
    smelt_ctx_free(ctx);
}

/* Fortran-order (column-major) files are read and transposed into C
 * order: np.asfortranarray(np.arange(24).reshape(2, 3, 4)) holds its
 * values with the first index fastest. */
static void test_fortran_order(void **state)
{
    (void)state;
    unsigned char buf[512];
    int32_t f[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++)
                f[i + 2 * (j + 3 * k)] = i * 12 + j * 4 + k;
    size_t n = make_npy(buf,
                        "{'descr': '<i4', 'fortran_order': True, "
                        "'shape': (2, 3, 4), }",
                        f, sizeof f);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_npy_parse(ctx, buf, n, "x.npy", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_ndim(t), 3);
    for (int i = 0; i < 24; i++)
        assert_true(smelt_tensor_get_f64(t, i) == (double)i);
    smelt_tensor_free(t);
    /* 1-D and scalar Fortran arrays are the same bytes as C ones */
    n = make_npy(
        buf, "{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }", f, 12);
    assert_int_equal(smelt_npy_parse(ctx, buf, n, "x.npy", &t), SMELT_OK);
    assert_true(smelt_tensor_get_f64(t, 1) == (double)f[1]);
    smelt_tensor_free(t);
    smelt_ctx_free(ctx);
}

/* A directory, a FIFO (which nobody writes: open must not wait) and a
 * device are refused by name, at once. */
static void test_load_special_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/smelt-npy-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/in.npy", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_npy_load(ctx, dir, &t), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "Is a directory"));
    assert_int_equal(smelt_npy_load(ctx, fifo, &t), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "not a regular file"));
    assert_int_equal(smelt_npy_load(ctx, "/dev/null", &t), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "character device"));
    assert_null(t);
    smelt_ctx_free(ctx);
    unlink(fifo);
    rmdir(dir);
}

/* Every prefix of a valid file fails cleanly (or parses, for the whole). */
static void test_truncations(void **state)
{
    (void)state;
    unsigned char buf[256];
    const double v[3] = {1, 2, 3};
    size_t n = make_npy(buf,
                        "{'descr': '<f8', 'fortran_order': False, "
                        "'shape': (3,), }",
                        v, sizeof v);
    for (size_t k = 0; k <= n; k++) {
        smelt_tensor_t *t = NULL;
        smelt_status st = smelt_npy_parse(NULL, buf, k, NULL, &t);
        assert_int_equal(st == SMELT_OK, k == n);
        smelt_tensor_free(t);
    }
}

static void test_alloc_failure(void **state)
{
    (void)state;
    unsigned char buf[256];
    const float v[2] = {1, 2};
    size_t n = make_npy(buf,
                        "{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (2,), }",
                        v, sizeof v);
    for (long k = 0;; k++) {
        smelt_tensor_t *t = NULL;
        sm_alloc_fail_after(k);
        smelt_status st = smelt_npy_parse(NULL, buf, n, "x", &t);
        sm_alloc_fail_after(-1);
        smelt_tensor_free(t);
        if (st == SMELT_OK)
            break;
        assert_int_equal(st, SMELT_ERR_NOMEM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid),
        cmocka_unit_test(test_round_trip_all_dtypes),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_header_grammar),
        cmocka_unit_test(test_fortran_order),
        cmocka_unit_test(test_load_special_files),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
