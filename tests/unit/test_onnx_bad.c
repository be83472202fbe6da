/*
 * test_onnx_bad.c - hostile ONNX input. The corpus under tests/onnx/bad
 * (from scripts/gen_onnx_tests.py), symlinks made at run time, failing
 * allocations and random corruptions must each be refused with the right
 * status and a message naming the problem, with no crash and no leak.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/tensor.h"
#include "frontends/onnx/onnx.h"
#include "ir/infer.h"
#include "ir/ir.h"
#include "onnx_util.h"

/* ---- hostile input ----------------------------------------------------- */

static const struct {
    const char *file;
    smelt_status status;
    const char *msg; /* a part of the message */
} bad[] = {
    {"truncated", SMELT_ERR_PARSE, "truncated"},
    {"wire_type", SMELT_ERR_PARSE, "wire type"},
    {"neg_dim", SMELT_ERR_SHAPE, "initializer 'w': dimension 0 is negative"},
    {"huge_dim", SMELT_ERR_LIMIT, "initializer 'w'"},
    {"overflow_dims", SMELT_ERR_LIMIT, "overflows"},
    {"too_many_dims", SMELT_ERR_LIMIT, "rank 9"},
    {"raw_mismatch", SMELT_ERR_PARSE, "raw_data holds 20 bytes"},
    {"claim_10gb", SMELT_ERR_PARSE, "needs 10737418240"},
    {"claim_10gb_no_data", SMELT_ERR_PARSE, "float_data holds 0 values"},
    {"typed_count", SMELT_ERR_PARSE, "float_data holds 5 values"},
    {"string_tensor", SMELT_ERR_UNSUPPORTED, "string tensors"},
    {"ext_abs", SMELT_ERR_INVALID_ARG, "'/etc/passwd' is an absolute path"},
    {"ext_dotdot", SMELT_ERR_INVALID_ARG, "'..' component"},
    {"ext_dotdot_mid", SMELT_ERR_INVALID_ARG, "'..' component"},
    {"ext_past_end", SMELT_ERR_PARSE,
     "24 bytes at offset 8 lies past the end of 'small.bin' (16 bytes)"},
    {"ext_offset_huge", SMELT_ERR_PARSE, "past the end"},
    {"ext_length_mismatch", SMELT_ERR_PARSE, "length 12 does not match"},
    {"ext_missing", SMELT_ERR_IO, "missing.bin"},
    {"claim_10gb_ext", SMELT_ERR_PARSE, "10737418240 bytes at offset 0"},
    {"nested_if_100", SMELT_ERR_LIMIT, "nested too deeply"},
    {"nested_if_33", SMELT_ERR_LIMIT, "deeper than 32 levels"},
    {"unknown_op", SMELT_ERR_UNSUPPORTED, "node 'foo' (FooBar): op 'FooBar'"},
    {"domain", SMELT_ERR_UNSUPPORTED,
     "node 'fused' (FusedMatMul): op FusedMatMul of domain 'com.microsoft'"},
    {"undefined_input", SMELT_ERR_PARSE, "value 'nope' is not defined"},
    {"duplicate", SMELT_ERR_PARSE, "node 'r2' (Relu): value 'y' is defined"},
    {"attr_kind", SMELT_ERR_TYPE, "attribute 'axis' is a string"},
    {"unknown_attr", SMELT_ERR_UNSUPPORTED, "attribute 'foo'"},
    {"no_opset", SMELT_ERR_UNSUPPORTED,
     "no opset of the default domain, only of domain 'com.microsoft'"},
    {"old_opset", SMELT_ERR_UNSUPPORTED,
     "node 'drop' (Dropout): Dropout at opset 5 is not supported"},
    {"sequence_input", SMELT_ERR_UNSUPPORTED, "sequence"},
    {"sibling_scope", SMELT_ERR_PARSE, "another subgraph"},
    {"if_missing_branch", SMELT_ERR_PARSE,
     "missing graph attribute "
     "'else_branch'"},
    {"not_onnx", SMELT_ERR_PARSE, ""},
    {"dup_attr", SMELT_ERR_PARSE,
     "node 'sm' (Softmax): attribute 'axis' appears more than once"},
    {"float_attr_no_value", SMELT_ERR_PARSE,
     "node 'lrelu' (LeakyRelu): attribute 'alpha' is declared a float but "
     "holds no value"},
    {"int32_u8_range", SMELT_ERR_PARSE,
     "initializer 'w': int32_data[1] = 300 is out of range for u8 (0..255)"},
    {"int32_i8_range", SMELT_ERR_PARSE,
     "initializer 'w': int32_data[1] = -129 is out of range for i8"},
    {"int32_f16_range", SMELT_ERR_PARSE,
     "initializer 'w': int32_data[1] = 65536 is out of range for f16 "
     "(0..65535"},
    {"quant_zero_point_range", SMELT_ERR_PARSE,
     "initializer 'z': int32_data[0] = 300 is out of range for u8 (0..255)"},
};

/* Quantized models that load but whose parameters are wrong
 * (scripts/gen_quant_tests.py): refused when the graph is inferred,
 * naming the node. */
static const struct {
    const char *file;
    smelt_status status;
    const char *msg;
} bad_quant[] = {
    {"quant_zero_scale", SMELT_ERR_INVALID_ARG,
     "node 'q' (QuantizeLinear): QuantizeLinear: scale (input 1) element 0 "
     "is 0; a scale must be positive and finite"},
    {"quant_neg_scale", SMELT_ERR_INVALID_ARG,
     "node 'q' (QuantizeLinear): QuantizeLinear: scale (input 1) element 0 "
     "is -0.5"},
    {"quant_nan_scale", SMELT_ERR_INVALID_ARG,
     "node 'dq' (DequantizeLinear): DequantizeLinear: scale (input 1) "
     "element 1 is nan"},
    {"quant_neg_channel_scale", SMELT_ERR_INVALID_ARG,
     "node 'qmm' (QLinearMatMul): QLinearMatMul: scale (input 4) element 1 "
     "is -0.1"},
    {"quant_axis_len", SMELT_ERR_SHAPE,
     "node 'dq' (DequantizeLinear): DequantizeLinear: input 1 must hold one "
     "value or be 1-D with 3, got f32[2]"},
    {"quant_i32_zero_point", SMELT_ERR_INVALID_ARG,
     "node 'dq' (DequantizeLinear): DequantizeLinear: the zero point of an "
     "i32 input must be 0"},
    {"quant_mmi_zero_point_len", SMELT_ERR_SHAPE,
     "node 'mmi' (MatMulInteger): MatMulInteger: input 3 must hold one value "
     "or be 1-D with 3, got i8[2]"},
};

static void test_bad_quant_params(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (size_t i = 0; i < sizeof bad_quant / sizeof *bad_quant; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "onnx/bad/%s.onnx", bad_quant[i].file);
        sm_graph *g = NULL;
        assert_int_equal(smelt_onnx_load(ctx, tu_path(rel), &g), SMELT_OK);
        smelt_status s = sm_graph_infer(ctx, g);
        if (s != bad_quant[i].status ||
            !strstr(smelt_ctx_error(ctx), bad_quant[i].msg))
            fail_msg("%s: got %s \"%s\", expected %s \"%s\"", bad_quant[i].file,
                     smelt_status_name(s), smelt_ctx_error(ctx),
                     smelt_status_name(bad_quant[i].status), bad_quant[i].msg);
        smelt_graph_free(g);
    }
    smelt_ctx_free(ctx);
}

static void test_bad_corpus(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "onnx/bad/%s.onnx", bad[i].file);
        sm_graph *g = (sm_graph *)1;
        smelt_status s = smelt_onnx_load(ctx, tu_path(rel), &g);
        if (s != bad[i].status || !strstr(smelt_ctx_error(ctx), bad[i].msg))
            fail_msg("%s: got %s \"%s\", expected %s \"%s\"", bad[i].file,
                     smelt_status_name(s), smelt_ctx_error(ctx),
                     smelt_status_name(bad[i].status), bad[i].msg);
        /* the file is named once, not by every layer of the loader */
        const char *at = strstr(smelt_ctx_error(ctx), tu_path(rel));
        if (at && strstr(at + 1, tu_path(rel)))
            fail_msg("%s: path named twice: %s", bad[i].file,
                     smelt_ctx_error(ctx));
        assert_null(g);
    }
    /* the same bytes from memory, and nothing at all */
    sm_graph *g;
    size_t len;
    char *buf = tu_read_file(tu_path("onnx/bad/neg_dim.onnx"), &len);
    assert_int_equal(smelt_onnx_load_buffer(ctx, buf, len, NULL, &g),
                     SMELT_ERR_SHAPE);
    free(buf);
    assert_int_equal(smelt_onnx_load_buffer(ctx, "", 0, NULL, &g),
                     SMELT_ERR_PARSE);
    assert_int_equal(smelt_onnx_load(ctx, "/nonexistent.onnx", &g),
                     SMELT_ERR_IO);
    assert_int_equal(smelt_onnx_load(ctx, "/tmp", &g), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "not a regular file"));
    assert_int_equal(smelt_onnx_load(ctx, NULL, &g), SMELT_ERR_INVALID_ARG);

    /* a file over the size limit is refused before it is read (sparse) */
    char dir[] = "/tmp/smelt_onnx_big_XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/big.onnx", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)SM_ONNX_MAX_MODEL_BYTES + 1),
                     0);
    fclose(f);
    assert_int_equal(smelt_onnx_load(ctx, path, &g), SMELT_ERR_LIMIT);
    assert_non_null(strstr(smelt_ctx_error(ctx), "over the"));
    unlink(path);
    rmdir(dir);
    smelt_ctx_free(ctx);
}

/* Loads fine and verifies; the bad index only shows when run. */
static void test_gather_out_of_range(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = NULL;
    assert_int_equal(
        smelt_onnx_load(ctx, tu_path("onnx/bad/gather_oob.onnx"), &g),
        SMELT_OK);
    /* The verifier may already see it, the shape function reading the
     * constant indices; else running must. */
    smelt_status s = smelt_graph_verify(ctx, g);
    if (s != SMELT_OK && !not_written(ctx, s))
        assert_non_null(strstr(smelt_ctx_error(ctx), "index 5"));
    sm_tensor *out = NULL;
    s = smelt_graph_run_reference(ctx, g, NULL, 0, &out, 1);
    if (!not_written(ctx, s)) {
        assert_int_not_equal(s, SMELT_OK);
        assert_non_null(strstr(smelt_ctx_error(ctx), "Gather"));
        assert_null(out);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Writes len bytes to path. */
static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* A symlink out of the model's folder is refused; one inside is fine. */
static void test_external_symlink(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    char in_dir[] = "/tmp/smelt_onnx_in_XXXXXX";
    char out_dir[] = "/tmp/smelt_onnx_out_XXXXXX";
    assert_non_null(mkdtemp(in_dir));
    assert_non_null(mkdtemp(out_dir));
    char model[256], link[256], secret[256], inside[256];
    snprintf(model, sizeof model, "%s/m.onnx", in_dir);
    snprintf(link, sizeof link, "%s/link.bin", in_dir);
    snprintf(secret, sizeof secret, "%s/secret.bin", out_dir);
    snprintf(inside, sizeof inside, "%s/real.bin", in_dir);
    size_t len;
    char *bytes = tu_read_file(tu_path("onnx/bad/ext_symlink.onnx"), &len);
    assert_non_null(bytes);
    write_file(model, bytes, len);
    free(bytes);
    const float data[2] = {1.5f, -2.0f};
    write_file(secret, data, sizeof data);
    write_file(inside, data, sizeof data);

    sm_graph *g = NULL;
    assert_int_equal(symlink(secret, link), 0);
    assert_int_equal(smelt_onnx_load(ctx, model, &g), SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "outside the model's folder"));
    assert_null(g);

    unlink(link);
    assert_int_equal(symlink("real.bin", link), 0);
    assert_int_equal(smelt_onnx_load(ctx, model, &g), SMELT_OK);
    const sm_tensor *w = g->top->consts[0]->data;
    assert_true(smelt_tensor_get_f64(w, 0) == 1.5);
    assert_true(smelt_tensor_get_f64(w, 1) == -2.0);
    smelt_graph_free(g);

    /* a FIFO as the data file: refused at once, not waited on */
    unlink(link);
    assert_int_equal(mkfifo(link, 0600), 0);
    g = NULL;
    assert_int_equal(smelt_onnx_load(ctx, model, &g), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "not a regular file"));
    assert_null(g);
    unlink(link);
    assert_int_equal(symlink("real.bin", link), 0);

    /* a buffer without a folder cannot use external data */
    bytes = tu_read_file(model, &len);
    assert_int_equal(smelt_onnx_load_buffer(ctx, bytes, len, NULL, &g),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "needs the model's folder"));
    assert_int_equal(smelt_onnx_load_buffer(ctx, bytes, len, in_dir, &g),
                     SMELT_OK);
    smelt_graph_free(g);
    free(bytes);

    unlink(link);
    unlink(model);
    unlink(inside);
    unlink(secret);
    rmdir(in_dir);
    rmdir(out_dir);
    smelt_ctx_free(ctx);
}

/* Every allocation of a load (protobuf-c's included) and of a save fails
 * in turn: each failure is reported as out of memory and leaks nothing. */
static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const char *names[] = {"if", "legacy9", "external"};
    for (size_t m = 0; m < sizeof names / sizeof *names; m++) {
        char rel[256];
        snprintf(rel, sizeof rel, "onnx/models/%s.onnx", names[m]);
        const char *path = tu_path(rel);
        long k = 0;
        for (;; k++) {
            sm_graph *g = NULL;
            sm_alloc_fail_after(k);
            smelt_status s = smelt_onnx_load(ctx, path, &g);
            sm_alloc_fail_after(-1);
            if (s == SMELT_OK) {
                smelt_graph_free(g);
                break;
            }
            if (s != SMELT_ERR_NOMEM)
                fail_msg("%s, allocation %ld failing: %s", names[m], k,
                         smelt_ctx_error(ctx));
            assert_null(g);
        }
        assert_true(k > 10);
        sm_graph *g = load_model(ctx, names[m]);
        for (k = 0;; k++) {
            void *buf = NULL;
            size_t len;
            sm_alloc_fail_after(k);
            smelt_status s = smelt_onnx_save_buffer(ctx, g, &buf, &len);
            sm_alloc_fail_after(-1);
            if (s == SMELT_OK) {
                smelt_onnx_buffer_free(buf);
                break;
            }
            assert_int_equal(s, SMELT_ERR_NOMEM);
        }
        smelt_graph_free(g);
    }
    smelt_ctx_free(ctx);
}

/* Random corruptions of a valid model never crash the loader (a small,
 * deterministic cousin of the libFuzzer harness). */
static void test_mutations(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    size_t len;
    unsigned char *orig =
        (unsigned char *)tu_read_file(tu_path("onnx/models/if.onnx"), &len);
    assert_non_null(orig);
    unsigned char *buf = malloc(len);
    uint32_t seed = 12345;
    int loaded = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(buf, orig, len);
        int flips = 1 + iter % 4;
        for (int f = 0; f < flips; f++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            buf[at] = (unsigned char)(seed >> 16);
        }
        size_t n = iter % 7 == 0 ? (seed >> 4) % len : len;
        sm_graph *g = NULL;
        if (smelt_onnx_load_buffer(ctx, buf, n, NULL, &g) == SMELT_OK) {
            loaded++;
            void *out;
            size_t olen;
            if (smelt_onnx_save_buffer(ctx, g, &out, &olen) == SMELT_OK)
                smelt_onnx_buffer_free(out);
            smelt_graph_free(g);
        } else {
            assert_true(smelt_ctx_error(ctx)[0] != 0);
        }
    }
    assert_true(loaded > 0);
    free(buf);
    free(orig);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_bad_quant_params),
        cmocka_unit_test(test_gather_out_of_range),
        cmocka_unit_test(test_external_symlink),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
