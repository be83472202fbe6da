/*
 * test_onnx_conformance.c - what the ONNX conformance suite relies on:
 * smelt_onnx_tensor_load on TensorProto files (values of every encoding,
 * malformed files, allocation failures), models of old opsets and of
 * other domains, and the `smelt conformance` verb run as the built binary
 * on a small hand-made test folder. Protobufs are encoded here by hand,
 * so the test needs no Python.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"

/* ---- a tiny protobuf writer ------------------------------------------- */

typedef struct pb {
    uint8_t b[8192];
    size_t n;
} pb;

enum { WT_VARINT = 0, WT_64 = 1, WT_LEN = 2, WT_32 = 5 };

static void pb_varint(pb *p, uint64_t v)
{
    do {
        assert_true(p->n < sizeof p->b);
        p->b[p->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void pb_tag(pb *p, int field, int wt)
{
    pb_varint(p, (uint64_t)field << 3 | (uint64_t)wt);
}

static void pb_int(pb *p, int field, int64_t v)
{
    pb_tag(p, field, WT_VARINT);
    pb_varint(p, (uint64_t)v);
}

static void pb_bytes(pb *p, int field, const void *d, size_t n)
{
    pb_tag(p, field, WT_LEN);
    pb_varint(p, n);
    assert_true(p->n + n <= sizeof p->b);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void pb_str(pb *p, int field, const char *s)
{
    pb_bytes(p, field, s, strlen(s));
}

static void pb_msg(pb *p, int field, const pb *sub)
{
    pb_bytes(p, field, sub->b, sub->n);
}

/* n little-endian words of `size` bytes from the host values in v. */
static void pb_le(pb *p, int field, const void *v, size_t n, size_t size)
{
    uint8_t buf[512];
    assert_true(n * size <= sizeof buf);
    for (size_t i = 0; i < n; i++) {
        uint64_t w = 0;
        memcpy(&w, (const uint8_t *)v + i * size, size); /* little host */
        for (size_t k = 0; k < size; k++)
            buf[i * size + k] = (uint8_t)(w >> (8 * k));
    }
    pb_bytes(p, field, buf, n * size);
}

/* TensorProto fields */
enum {
    TP_DIMS = 1,
    TP_DTYPE = 2,
    TP_FLOAT = 4,
    TP_INT32 = 5,
    TP_INT64 = 7,
    TP_NAME = 8,
    TP_RAW = 9,
    TP_DOUBLE = 10,
    TP_UINT64 = 11,
    TP_EXTERNAL = 13,
    TP_LOCATION = 14
};
/* ONNX data types */
enum { DT_FLOAT = 1, DT_UINT8 = 2, DT_UINT16 = 4, DT_INT32 = 6 };
enum { DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9, DT_F16 = 10, DT_F64 = 11 };
enum { DT_UINT32 = 12, DT_UINT64 = 13, DT_COMPLEX64 = 14 };

static void tensor_head(pb *p, int dtype, int ndim, const int64_t *dims)
{
    for (int i = 0; i < ndim; i++)
        pb_int(p, TP_DIMS, dims[i]);
    pb_int(p, TP_DTYPE, dtype);
}

/* A TensorProto of f32 values carried in raw_data. */
static pb f32_tensor(const char *name, int ndim, const int64_t *dims,
                     const float *v, size_t n)
{
    pb p = {0};
    tensor_head(&p, DT_FLOAT, ndim, dims);
    pb_str(&p, TP_NAME, name);
    pb_le(&p, TP_RAW, v, n, 4);
    return p;
}

static char dir[64];

static void write_file(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    fclose(f);
}

static const char *in_dir(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* Writes p as file `name` of the scratch folder and loads it. */
static smelt_status load_pb(smelt_ctx_t *ctx, const pb *p, const char *name,
                            smelt_tensor_t **t)
{
    write_file(in_dir(name), p->b, p->n);
    return smelt_onnx_tensor_load(ctx, in_dir(name), t);
}

static void expect_error(smelt_ctx_t *ctx, const pb *p, smelt_status want,
                         const char *msg)
{
    smelt_tensor_t *t = (smelt_tensor_t *)1;
    smelt_status s = load_pb(ctx, p, "bad.pb", &t);
    if (s != want || !strstr(smelt_ctx_error(ctx), msg))
        fail_msg("got %s \"%s\", expected %s \"%s\"", smelt_status_name(s),
                 smelt_ctx_error(ctx), smelt_status_name(want), msg);
    assert_null(t);
}

/* ---- smelt_onnx_tensor_load ------------------------------------------- */

static void test_tensor_values(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *t;

    /* f32 [2,3] in raw_data */
    const float f[6] = {1.5f, -2.0f, 0.25f, 1e-30f, -0.0f, 3e38f};
    const int64_t d23[2] = {2, 3};
    pb p = f32_tensor("x", 2, d23, f, 6);
    assert_int_equal(load_pb(ctx, &p, "f32.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_F32);
    assert_int_equal(smelt_tensor_ndim(t), 2);
    assert_int_equal(smelt_tensor_dim(t, 0), 2);
    assert_int_equal(smelt_tensor_dim(t, 1), 3);
    assert_memory_equal(smelt_tensor_data(t), f, sizeof f);
    smelt_tensor_free(t);

    /* i64 [3] in int64_data: exact beyond 2^53, negative */
    const int64_t i64[3] = {(INT64_C(1) << 62) + 1, -7, 0};
    const int64_t d3[1] = {3};
    p = (pb){0};
    tensor_head(&p, DT_INT64, 1, d3);
    for (int i = 0; i < 3; i++)
        pb_int(&p, TP_INT64, i64[i]);
    assert_int_equal(load_pb(ctx, &p, "i64.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_I64);
    assert_memory_equal(smelt_tensor_data(t), i64, sizeof i64);
    smelt_tensor_free(t);

    /* u64 [2] in uint64_data (as the ONNX spec says), beyond INT64_MAX;
     * u32 [1] there too; u16 [1] in int32_data */
    const uint64_t u64[2] = {UINT64_MAX, 5};
    const int64_t d2u[1] = {2}, d1u[1] = {1};
    p = (pb){0};
    tensor_head(&p, DT_UINT64, 1, d2u);
    for (int i = 0; i < 2; i++)
        pb_int(&p, TP_UINT64, (int64_t)u64[i]);
    assert_int_equal(load_pb(ctx, &p, "u64.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_U64);
    assert_memory_equal(smelt_tensor_data(t), u64, sizeof u64);
    smelt_tensor_free(t);
    p = (pb){0};
    tensor_head(&p, DT_UINT32, 1, d1u);
    pb_int(&p, TP_UINT64, 4294967295);
    assert_int_equal(load_pb(ctx, &p, "u32.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_U32);
    assert_true(*(const uint32_t *)smelt_tensor_data(t) == UINT32_MAX);
    smelt_tensor_free(t);
    p = (pb){0};
    tensor_head(&p, DT_UINT16, 1, d1u);
    pb_int(&p, TP_INT32, 65535);
    assert_int_equal(load_pb(ctx, &p, "u16.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_U16);
    assert_true(*(const uint16_t *)smelt_tensor_data(t) == 65535);
    smelt_tensor_free(t);

    /* bool [4] in raw_data: any nonzero byte is true */
    const uint8_t b[4] = {0, 1, 2, 0};
    const int64_t d4[1] = {4};
    p = (pb){0};
    tensor_head(&p, DT_BOOL, 1, d4);
    pb_bytes(&p, TP_RAW, b, 4);
    assert_int_equal(load_pb(ctx, &p, "bool.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_BOOL);
    const uint8_t want_b[4] = {0, 1, 1, 0};
    assert_memory_equal(smelt_tensor_data(t), want_b, 4);
    smelt_tensor_free(t);

    /* f16 [2] in int32_data (the 16 bits of each value) */
    const int64_t d2[1] = {2};
    p = (pb){0};
    tensor_head(&p, DT_F16, 1, d2);
    pb_int(&p, TP_INT32, 0x3c00); /* 1.0 */
    pb_int(&p, TP_INT32, 0xc100); /* -2.5 */
    assert_int_equal(load_pb(ctx, &p, "f16.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_dtype(t), SMELT_DTYPE_F16);
    assert_true(smelt_tensor_get_f64(t, 0) == 1.0);
    assert_true(smelt_tensor_get_f64(t, 1) == -2.5);
    smelt_tensor_free(t);

    /* i32 scalar (no dims) in int32_data, negative (sign-extended) */
    p = (pb){0};
    tensor_head(&p, DT_INT32, 0, NULL);
    pb_int(&p, TP_INT32, -123456);
    assert_int_equal(load_pb(ctx, &p, "i32.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_ndim(t), 0);
    assert_int_equal(smelt_tensor_numel(t), 1);
    assert_int_equal(((int32_t *)smelt_tensor_data(t))[0], -123456);
    smelt_tensor_free(t);

    /* f64 [2] in packed double_data; u8 [0] (empty) */
    const double dv[2] = {0.1, -1e300};
    p = (pb){0};
    tensor_head(&p, DT_F64, 1, d2);
    pb_le(&p, TP_DOUBLE, dv, 2, 8);
    assert_int_equal(load_pb(ctx, &p, "f64.pb", &t), SMELT_OK);
    assert_memory_equal(smelt_tensor_data(t), dv, sizeof dv);
    smelt_tensor_free(t);
    const int64_t d0[2] = {3, 0};
    p = (pb){0};
    tensor_head(&p, DT_UINT8, 2, d0);
    assert_int_equal(load_pb(ctx, &p, "empty.pb", &t), SMELT_OK);
    assert_int_equal(smelt_tensor_numel(t), 0);
    assert_int_equal(smelt_tensor_dim(t, 0), 3);
    smelt_tensor_free(t);

    /* f32 [2] in float_data (packed) */
    p = (pb){0};
    tensor_head(&p, DT_FLOAT, 1, d2);
    pb_le(&p, TP_FLOAT, f, 2, 4);
    assert_int_equal(load_pb(ctx, &p, "floatdata.pb", &t), SMELT_OK);
    assert_memory_equal(smelt_tensor_data(t), f, 2 * sizeof *f);
    smelt_tensor_free(t);
    smelt_ctx_free(ctx);
}

/* External data beside the .pb file loads; a path out of its folder does
 * not. */
static void test_tensor_external(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const float v[3] = {4.0f, 5.0f, 6.0f};
    uint8_t le[12];
    for (int i = 0; i < 3; i++) {
        uint32_t w;
        memcpy(&w, &v[i], 4);
        for (int k = 0; k < 4; k++)
            le[4 * i + k] = (uint8_t)(w >> (8 * k));
    }
    write_file(in_dir("data.bin"), le, sizeof le);
    const int64_t d3[1] = {3};
    for (int bad = 0; bad < 2; bad++) {
        pb p = {0}, kv = {0};
        tensor_head(&p, DT_FLOAT, 1, d3);
        pb_str(&kv, 1, "location");
        pb_str(&kv, 2, bad ? "../data.bin" : "data.bin");
        pb_msg(&p, TP_EXTERNAL, &kv);
        pb_int(&p, TP_LOCATION, 1);
        smelt_tensor_t *t = NULL;
        smelt_status s = load_pb(ctx, &p, "ext.pb", &t);
        if (bad) {
            assert_int_equal(s, SMELT_ERR_INVALID_ARG);
            assert_non_null(strstr(smelt_ctx_error(ctx), "'..' component"));
            assert_null(t);
        } else {
            assert_int_equal(s, SMELT_OK);
            assert_memory_equal(smelt_tensor_data(t), v, sizeof v);
            smelt_tensor_free(t);
        }
    }
    smelt_ctx_free(ctx);
}

static void test_tensor_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const int64_t d3[1] = {3};
    const float f[2] = {1, 2};

    pb p = f32_tensor("short", 1, d3, f, 2); /* 8 bytes for 3 floats */
    expect_error(ctx, &p, SMELT_ERR_PARSE,
                 "short: raw_data holds 8 bytes, but f32[3] needs 12");
    p = (pb){0};
    tensor_head(&p, DT_INT64, 1, d3);
    pb_int(&p, TP_INT64, 1);
    expect_error(ctx, &p, SMELT_ERR_PARSE, "int64_data holds 1 values");
    p = (pb){0};
    tensor_head(&p, DT_STRING, 1, d3);
    expect_error(ctx, &p, SMELT_ERR_UNSUPPORTED, "string tensors");
    p = (pb){0};
    tensor_head(&p, DT_COMPLEX64, 1, d3);
    expect_error(ctx, &p, SMELT_ERR_UNSUPPORTED,
                 "data type 14 (complex64) is not supported");
    /* u64 values belong in uint64_data, not int64_data */
    p = (pb){0};
    tensor_head(&p, DT_UINT64, 1, d3);
    for (int i = 0; i < 3; i++)
        pb_int(&p, TP_INT64, i);
    expect_error(ctx, &p, SMELT_ERR_PARSE, "uint64_data holds 0 values");
    /* the path names the file in the message */
    assert_non_null(strstr(smelt_ctx_error(ctx), "/bad.pb: onnx: "));
    p = (pb){0};
    pb_int(&p, TP_DIMS, 2);
    expect_error(ctx, &p, SMELT_ERR_PARSE, "no data type");
    /* a length running past the end */
    p = (pb){0};
    pb_tag(&p, TP_RAW, WT_LEN);
    pb_varint(&p, 100);
    expect_error(ctx, &p, SMELT_ERR_PARSE, "not a valid TensorProto");
    /* a field with the wrong wire type */
    p = (pb){0};
    pb_tag(&p, TP_DTYPE, WT_LEN);
    pb_varint(&p, 1);
    pb_varint(&p, 1);
    expect_error(ctx, &p, SMELT_ERR_PARSE, "not a valid TensorProto");

    smelt_tensor_t *t = (smelt_tensor_t *)1;
    assert_int_equal(smelt_onnx_tensor_load(ctx, in_dir("none.pb"), &t),
                     SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "none.pb"));
    assert_null(t);
    assert_int_equal(smelt_onnx_tensor_load(ctx, dir, &t), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "not a regular file"));
    assert_int_equal(smelt_onnx_tensor_load(ctx, NULL, &t),
                     SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_onnx_tensor_load(ctx, dir, NULL),
                     SMELT_ERR_INVALID_ARG);
    smelt_ctx_free(ctx);
}

/* Every allocation of a load fails in turn: out of memory, no leak. */
static void test_tensor_alloc_failures(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const float f[4] = {1, 2, 3, 4};
    const int64_t d[2] = {2, 2};
    pb p = f32_tensor("x", 2, d, f, 4);
    write_file(in_dir("oom.pb"), p.b, p.n);
    long k = 0;
    for (;; k++) {
        smelt_tensor_t *t = NULL;
        sm_alloc_fail_after(k);
        smelt_status s = smelt_onnx_tensor_load(ctx, in_dir("oom.pb"), &t);
        sm_alloc_fail_after(-1);
        if (s == SMELT_OK) {
            assert_memory_equal(smelt_tensor_data(t), f, sizeof f);
            smelt_tensor_free(t);
            break;
        }
        assert_int_equal(s, SMELT_ERR_NOMEM);
        assert_null(t);
    }
    assert_true(k >= 3);
    smelt_ctx_free(ctx);
}

/* ---- models ----------------------------------------------------------- */

/* ValueInfoProto `name`: a float tensor of shape dims. */
static pb value_info(const char *name, int ndim, const int64_t *dims)
{
    pb shape = {0}, tt = {0}, type = {0}, vi = {0};
    for (int i = 0; i < ndim; i++) {
        pb dim = {0};
        pb_int(&dim, 1, dims[i]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tt, 1, DT_FLOAT);
    pb_msg(&tt, 2, &shape);
    pb_msg(&type, 1, &tt);
    pb_str(&vi, 1, name);
    pb_msg(&vi, 2, &type);
    return vi;
}

/* A model of one node `op` (x [, x]) -> y over f32[n], at `opset` of the
 * default domain (0: none) plus `domain` (NULL: none); `attr` an int
 * attribute (NULL: none). */
static pb one_node_model(const char *op, int n_in, int64_t n, int opset,
                         const char *domain, const char *attr, int64_t val)
{
    pb node = {0}, g = {0}, m = {0}, vx, vy;
    for (int i = 0; i < n_in; i++)
        pb_str(&node, 1, "x");
    pb_str(&node, 2, "y");
    pb_str(&node, 4, op);
    if (attr) {
        pb a = {0};
        pb_str(&a, 1, attr);
        pb_int(&a, 3, val);
        pb_int(&a, 20, 2); /* INT */
        pb_msg(&node, 5, &a);
    }
    int64_t dy = n_in * n;
    vx = value_info("x", 1, &n);
    vy = value_info("y", 1, strcmp(op, "Concat") ? &n : &dy);
    pb_msg(&g, 1, &node);
    pb_str(&g, 2, "g");
    pb_msg(&g, 11, &vx);
    pb_msg(&g, 12, &vy);
    pb_int(&m, 1, opset < 7 ? 3 : 7); /* ir_version */
    if (opset) {
        pb o = {0};
        pb_str(&o, 1, "");
        pb_int(&o, 2, opset);
        pb_msg(&m, 8, &o);
    }
    if (domain) {
        pb o = {0};
        pb_str(&o, 1, domain);
        pb_int(&o, 2, 1);
        pb_msg(&m, 8, &o);
    }
    pb_msg(&m, 7, &g);
    return m;
}

static void expect_load(smelt_ctx_t *ctx, const pb *m, smelt_status want,
                        const char *msg)
{
    smelt_graph_t *g = (smelt_graph_t *)1;
    smelt_status s = smelt_onnx_load_buffer(ctx, m->b, m->n, NULL, &g);
    if (s != want || (msg && !strstr(smelt_ctx_error(ctx), msg)))
        fail_msg("got %s \"%s\", expected %s \"%s\"", smelt_status_name(s),
                 smelt_ctx_error(ctx), smelt_status_name(want), msg ? msg : "");
    if (s == SMELT_OK)
        smelt_graph_free(g);
    else
        assert_null(g);
}

/* Opsets below 7 load where the op's old form means what Smelt's does
 * (Not-1, Softplus-1 of the ONNX node tests); forms that differ in a way
 * the node does not show are refused as unsupported. A model of other
 * domains only is unsupported, one with no opset at all malformed. */
static void test_old_opsets_and_domains(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    pb m = one_node_model("Softplus", 1, 3, 1, NULL, NULL, 0);
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_onnx_load_buffer(ctx, m.b, m.n, NULL, &g), SMELT_OK);
    assert_int_equal(smelt_graph_verify(ctx, g), SMELT_OK);
    const int64_t d3[1] = {3};
    smelt_tensor_t *x, *y = NULL;
    assert_int_equal(smelt_tensor_init(ctx, SMELT_DTYPE_F32, 1, d3, &x),
                     SMELT_OK);
    float *xv = smelt_tensor_data(x);
    xv[0] = 0;
    xv[1] = 1;
    xv[2] = -30;
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, &y, 1), SMELT_OK);
    assert_float_equal(smelt_tensor_get_f64(y, 0), log(2.0), 1e-6);
    assert_float_equal(smelt_tensor_get_f64(y, 1), log(1 + exp(1.0)), 1e-6);
    assert_float_equal(smelt_tensor_get_f64(y, 2), exp(-30.0), 1e-18);
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_graph_free(g);

    m = one_node_model("Dropout", 1, 3, 6, NULL, NULL, 0);
    expect_load(ctx, &m, SMELT_ERR_UNSUPPORTED,
                "Dropout at opset 6 is not supported (Smelt reads it from "
                "opset 7)");
    m = one_node_model("Dropout", 1, 3, 7, NULL, NULL, 0);
    expect_load(ctx, &m, SMELT_OK, NULL);
    m = one_node_model("Concat", 2, 3, 3, NULL, "axis", 0);
    expect_load(ctx, &m, SMELT_ERR_UNSUPPORTED, "Concat at opset 3");
    m = one_node_model("Concat", 2, 3, 4, NULL, "axis", 0);
    expect_load(ctx, &m, SMELT_OK, NULL);
    /* Relu-1's consumed_inputs: an attribute Smelt does not know */
    m = one_node_model("Relu", 1, 3, 1, NULL, "consumed_inputs", 0);
    expect_load(ctx, &m, SMELT_ERR_UNSUPPORTED,
                "attribute 'consumed_inputs' is not supported");
    m = one_node_model("Relu", 1, 3, 0, "ai.onnx.preview.training", NULL, 0);
    expect_load(ctx, &m, SMELT_ERR_UNSUPPORTED,
                "no opset of the default domain, only of domain "
                "'ai.onnx.preview.training', which is not supported");
    m = one_node_model("Relu", 1, 3, 0, NULL, NULL, 0);
    expect_load(ctx, &m, SMELT_ERR_PARSE, "no opset of the default domain");
    m = one_node_model("Relu", 1, 3, 22, NULL, NULL, 0);
    expect_load(ctx, &m, SMELT_ERR_UNSUPPORTED, "opset 22 is not supported");
    smelt_ctx_free(ctx);
}

/* ---- the smelt conformance verb --------------------------------------- */

#define SMELT SMELT_BUILD_DIR "/smelt"

static int sh(const char *cmd, char **out)
{
    return tu_sh(dir, cmd, out);
}

/* Writes test folder suite/name: a model of one op over f32[3] and one
 * data set with input x and expected output y. */
static void write_test(const char *name, const char *op, const float *x,
                       const float *y)
{
    char path[512];
    snprintf(path, sizeof path, "%s/suite/%s", dir, name);
    assert_int_equal(mkdir(path, 0777), 0);
    pb m = one_node_model(op, 1, 3, 13, NULL, NULL, 0);
    snprintf(path, sizeof path, "%s/suite/%s/model.onnx", dir, name);
    write_file(path, m.b, m.n);
    snprintf(path, sizeof path, "%s/suite/%s/test_data_set_0", dir, name);
    assert_int_equal(mkdir(path, 0777), 0);
    const int64_t d3[1] = {3};
    pb in = f32_tensor("x", 1, d3, x, 3), out = f32_tensor("y", 1, d3, y, 3);
    snprintf(path, sizeof path, "%s/suite/%s/test_data_set_0/input_0.pb", dir,
             name);
    write_file(path, in.b, in.n);
    snprintf(path, sizeof path, "%s/suite/%s/test_data_set_0/output_0.pb", dir,
             name);
    write_file(path, out.b, out.n);
}

static void test_cli_conformance(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/suite", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    const float x[3] = {-1, 0, 2}, relu[3] = {0, 0, 2};
    const float near[3] = {0, 0, 2.0015f}, wrong[3] = {0, 5, 2};
    const float nan_in[3] = {NAN, 1, 2}, nan_out[3] = {NAN, 1, 2};
    write_test("test_relu", "Relu", x, relu);
    write_test("test_relu_near", "Relu", x, near); /* within rtol 1e-3 */
    write_test("test_relu_wrong", "Relu", x, wrong);
    write_test("test_identity_nan", "Identity", nan_in, nan_out);
    write_test("test_foo", "FooBar", x, relu);
    write_test("test_foo_excluded", "FooBar", x, relu);
    const char *ex = "# comment\n\ntest_foo_excluded # a reason\n"
                     "test_gone # not in the folder\n";
    write_file(in_dir("ex.txt"), ex, strlen(ex));
    ex = "test_foo_excluded # a reason\ntest_relu_wrong #  known \n";
    write_file(in_dir("ex2.txt"), ex, strlen(ex));
    write_file(in_dir("noreason.txt"), "test_relu\n", 10);

    char *out;
    assert_int_equal(sh(SMELT " conformance suite --exclude ex.txt", &out), 1);
    assert_non_null(strstr(out, "passed      test_relu\n"));
    assert_non_null(strstr(out, "failed      test_relu_wrong\n"));
    assert_non_null(strstr(out, "unsupported test_foo\n"));
    assert_non_null(strstr(out, "excluded    test_foo_excluded\n"));
    assert_non_null(strstr(out, "warning: excluded test 'test_gone'"));
    assert_non_null(
        strstr(out, "test_relu_wrong: output 'y' f32[3]: element [1] is 0, "
                    "expected 5 (1 of 3 elements differ)"));
    assert_non_null(strstr(out, "unsupported: missing ops (1 tests):\n"
                                "     1  FooBar"));
    assert_non_null(strstr(out, "  passed          3  ( 50.0%)\n"
                                "  failed          1  ( 16.7%)\n"
                                "  unsupported     1  ( 16.7%)\n"
                                "  excluded        1  ( 16.7%)\n"));
    assert_non_null(strstr(out, "FAIL: 1 tests outside the exclusion list"));
    free(out);

    /* --filter; --min-pass-rate met and missed; --verbose reasons */
    assert_int_equal(sh(SMELT " conformance suite --filter relu_n", &out), 0);
    assert_non_null(strstr(out, "conformance: 1 tests in suite"));
    free(out);
    assert_int_equal(sh(SMELT " conformance suite --exclude ex2.txt"
                              " --min-pass-rate 75 -v",
                        &out),
                     1);
    assert_non_null(strstr(out, "unsupported test_foo: load: "));
    assert_non_null(strstr(out, "excluded    test_relu_wrong: known\n"));
    assert_null(strstr(out, "failed      test_"));
    assert_non_null(strstr(out, "FAIL: pass rate 50.0% is below "
                                "--min-pass-rate 75%"));
    free(out);
    assert_int_equal(
        sh(SMELT " conformance suite --exclude ex2.txt --min-pass-rate 50",
           &out),
        0);
    free(out);

    /* --list runs nothing */
    assert_int_equal(
        sh(SMELT " conformance suite --list --exclude ex.txt", &out), 0);
    assert_non_null(strstr(out, "test_foo_excluded  (excluded: a reason)\n"));
    assert_non_null(strstr(out, "6 tests\n"));
    assert_null(strstr(out, "passed"));
    free(out);

    /* usage and setup errors */
    assert_int_equal(
        sh(SMELT " conformance suite --exclude noreason.txt", &out), 1);
    assert_non_null(strstr(out, "noreason.txt:1: 'test_relu' has no reason"));
    free(out);
    assert_int_equal(sh(SMELT " conformance", &out), 2);
    assert_non_null(strstr(out, "no DIR given"));
    free(out);
    assert_int_equal(sh(SMELT " conformance suite --min-pass-rate x", &out), 2);
    free(out);
    assert_int_equal(sh(SMELT " conformance nowhere", &out), 1);
    assert_non_null(strstr(out, "cannot read 'nowhere'"));
    free(out);
    assert_int_equal(sh(SMELT " conformance suite --filter zzz", &out), 1);
    assert_non_null(strstr(out, "no tests matching zzz"));
    free(out);
    assert_int_equal(sh(SMELT " conformance --help", &out), 0);
    assert_non_null(strstr(out, "--min-pass-rate P"));
    free(out);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/smelt-conf-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_values),
        cmocka_unit_test(test_tensor_external),
        cmocka_unit_test(test_tensor_errors),
        cmocka_unit_test(test_tensor_alloc_failures),
        cmocka_unit_test(test_old_opsets_and_domains),
        cmocka_unit_test(test_cli_conformance),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
