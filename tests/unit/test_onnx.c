/*
 * test_onnx.c - ONNX import and export.
 *
 * The models under tests/onnx/models come from scripts/gen_onnx_tests.py
 * (built with python3-onnx, expected outputs computed with numpy); they are
 * loaded, checked for structure, run with the reference interpreter, and
 * written back and reloaded. Hostile input: test_onnx_bad.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "frontends/onnx/onnx.h"
#include "ir/ir.h"
#include "onnx_util.h"

/* ---- structural comparison of two graphs ------------------------------- */

static void assert_attr_equal(const sm_attr *a, const sm_attr *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->kind, b->kind);
    switch (a->kind) {
    case SM_ATTR_INT: assert_int_equal(a->v.i, b->v.i); break;
    case SM_ATTR_FLOAT: assert_true(a->v.f == b->v.f); break;
    case SM_ATTR_STRING: assert_string_equal(a->v.s, b->v.s); break;
    case SM_ATTR_INTS:
        assert_int_equal(a->n, b->n);
        for (int i = 0; i < a->n; i++)
            assert_int_equal(a->v.ints[i], b->v.ints[i]);
        break;
    case SM_ATTR_FLOATS:
        assert_int_equal(a->n, b->n);
        for (int i = 0; i < a->n; i++)
            assert_true(a->v.floats[i] == b->v.floats[i]);
        break;
    case SM_ATTR_STRINGS:
        assert_int_equal(a->n, b->n);
        for (int i = 0; i < a->n; i++)
            assert_string_equal(a->v.strs[i], b->v.strs[i]);
        break;
    case SM_ATTR_TENSOR: assert_true(sm_tensor_equal(a->v.t, b->v.t)); break;
    default: fail();
    }
}

static void assert_value_equal(const sm_value *a, const sm_value *b)
{
    if (!a || !b) {
        assert_true(a == b);
        return;
    }
    assert_string_equal(a->name, b->name);
    if (!sm_type_equal(&a->type, &b->type)) {
        char x[128], y[128];
        sm_type_str(&a->type, x, sizeof x);
        sm_type_str(&b->type, y, sizeof y);
        fail_msg("value %s: type %s != %s", a->name, x, y);
    }
}

static void assert_block_equal(const sm_block *a, const sm_block *b)
{
    assert_true((a->label == NULL) == (b->label == NULL));
    if (a->label)
        assert_string_equal(a->label, b->label);
    assert_int_equal(a->n_params, b->n_params);
    for (int i = 0; i < a->n_params; i++)
        assert_value_equal(a->params[i], b->params[i]);
    assert_int_equal(a->n_consts, b->n_consts);
    for (int i = 0; i < a->n_consts; i++) {
        assert_value_equal(a->consts[i], b->consts[i]);
        assert_true(sm_tensor_equal(a->consts[i]->data, b->consts[i]->data));
    }
    assert_int_equal(a->n_nodes, b->n_nodes);
    for (int i = 0; i < a->n_nodes; i++) {
        const sm_node *x = a->nodes[i], *y = b->nodes[i];
        assert_int_equal(x->op, y->op);
        assert_true((x->name == NULL) == (y->name == NULL));
        if (x->name)
            assert_string_equal(x->name, y->name);
        assert_int_equal(x->n_in, y->n_in);
        for (int k = 0; k < x->n_in; k++)
            assert_value_equal(x->in[k], y->in[k]);
        assert_int_equal(x->n_out, y->n_out);
        for (int k = 0; k < x->n_out; k++)
            assert_value_equal(x->out[k], y->out[k]);
        assert_int_equal(x->n_attr, y->n_attr);
        for (int k = 0; k < x->n_attr; k++)
            assert_attr_equal(&x->attrs[k], &y->attrs[k]);
        assert_int_equal(x->n_blocks, y->n_blocks);
        for (int k = 0; k < x->n_blocks; k++)
            assert_block_equal(x->blocks[k], y->blocks[k]);
    }
    assert_int_equal(a->n_ret, b->n_ret);
    for (int i = 0; i < a->n_ret; i++)
        assert_value_equal(a->ret[i], b->ret[i]);
}

/* Structure equal, and when the printer exists, text equal too. */
static void assert_graph_equal(smelt_ctx_t *ctx, const sm_graph *a,
                               const sm_graph *b)
{
    assert_string_equal(a->name, b->name);
    assert_block_equal(a->top, b->top);
    char *ta = NULL, *tb = NULL;
    smelt_status s = smelt_graph_print(ctx, a, &ta);
    if (not_written(ctx, s))
        return;
    assert_int_equal(s, SMELT_OK);
    assert_int_equal(smelt_graph_print(ctx, b, &tb), SMELT_OK);
    assert_string_equal(ta, tb);
    smelt_string_free(ta);
    smelt_string_free(tb);
}

/* save to a buffer and load it back. */
static sm_graph *reload(smelt_ctx_t *ctx, const sm_graph *g)
{
    void *buf;
    size_t len;
    assert_int_equal(smelt_onnx_save_buffer(ctx, g, &buf, &len), SMELT_OK);
    sm_graph *r = NULL;
    smelt_status s = smelt_onnx_load_buffer(ctx, buf, len, NULL, &r);
    if (s != SMELT_OK)
        fail_msg("reloading %s: %s", g->name, smelt_ctx_error(ctx));
    smelt_onnx_buffer_free(buf);
    return r;
}

/* ---- running the models ------------------------------------------------ */

static const struct {
    const char *name;
    int cases;
} models[] = {
    {"mlp", 1}, {"conv", 1}, {"typed", 1},    {"legacy9", 1}, {"opset11", 1},
    {"if", 2},  {"loop", 1}, {"external", 1}, {"opset17", 1},
};
#define N_MODELS (sizeof models / sizeof *models)

/* Loads NAME.CASE.{in,out}I.npy for I = 0, 1, ... into t (at most max). */
static int load_npys(smelt_ctx_t *ctx, const char *name, int c,
                     const char *kind, sm_tensor **t, int max)
{
    int n = 0;
    for (; n < max; n++) {
        char rel[256];
        snprintf(rel, sizeof rel, "onnx/models/%s.%d.%s%d.npy", name, c, kind,
                 n);
        if (access(tu_path(rel), R_OK) != 0)
            break;
        smelt_status s = smelt_npy_load(ctx, tu_path(rel), &t[n]);
        if (s != SMELT_OK)
            fail_msg("%s: %s", rel, smelt_ctx_error(ctx));
    }
    return n;
}

static void assert_close(const char *what, const sm_tensor *got,
                         const sm_tensor *want)
{
    char a[96], b[96];
    sm_shape_str(got->dtype, got->ndim, got->dims, a, sizeof a);
    sm_shape_str(want->dtype, want->ndim, want->dims, b, sizeof b);
    if (strcmp(a, b) != 0)
        fail_msg("%s: got %s, expected %s", what, a, b);
    for (int64_t i = 0; i < got->numel; i++) {
        if (!sm_dtype_is_float(got->dtype)) {
            int64_t x = sm_load_i64(got->dtype, got->data, i);
            int64_t y = sm_load_i64(want->dtype, want->data, i);
            if (x != y)
                fail_msg("%s[%lld]: got %lld, expected %lld", what,
                         (long long)i, (long long)x, (long long)y);
            continue;
        }
        double x = sm_load_f64(got->dtype, got->data, i);
        double y = sm_load_f64(want->dtype, want->data, i);
        if (!(fabs(x - y) <= 1e-5 + 1e-4 * fabs(y)))
            fail_msg("%s[%lld]: got %.9g, expected %.9g", what, (long long)i, x,
                     y);
    }
}

/* Runs every case of model `name` on g; 0 when the interpreter is not
 * written yet. */
static int run_cases(smelt_ctx_t *ctx, const sm_graph *g, const char *name,
                     int cases)
{
    for (int c = 0; c < cases; c++) {
        sm_tensor *in[8] = {0}, *want[32] = {0}, *got[32] = {0};
        int ni = load_npys(ctx, name, c, "in", in, 8);
        int no = load_npys(ctx, name, c, "out", want, 32);
        assert_int_equal(ni, g->top->n_params);
        assert_int_equal(no, g->top->n_ret);
        smelt_status s = smelt_graph_run_reference(ctx, g, in, ni, got, no);
        if (not_written(ctx, s)) {
            for (int i = 0; i < ni; i++)
                smelt_tensor_free(in[i]);
            for (int i = 0; i < no; i++)
                smelt_tensor_free(want[i]);
            return 0;
        }
        if (s != SMELT_OK)
            fail_msg("running %s case %d: %s", name, c, smelt_ctx_error(ctx));
        for (int i = 0; i < no; i++) {
            char what[128];
            snprintf(what, sizeof what, "%s case %d output %d (%s)", name, c, i,
                     g->top->ret[i]->name);
            assert_close(what, got[i], want[i]);
            smelt_tensor_free(got[i]);
            smelt_tensor_free(want[i]);
        }
        for (int i = 0; i < ni; i++)
            smelt_tensor_free(in[i]);
    }
    return 1;
}

static void verify(smelt_ctx_t *ctx, const sm_graph *g)
{
    smelt_status s = smelt_graph_verify(ctx, g);
    if (!not_written(ctx, s) && s != SMELT_OK)
        fail_msg("verifying %s: %s", g->name, smelt_ctx_error(ctx));
}

/* Every model loads, verifies, and computes what numpy computed; so does
 * the model written back out and loaded again. */
static void test_models_run(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    int ran = 0;
    for (size_t m = 0; m < N_MODELS; m++) {
        sm_graph *g = load_model(ctx, models[m].name);
        verify(ctx, g);
        ran += run_cases(ctx, g, models[m].name, models[m].cases);
        sm_graph *r = reload(ctx, g);
        verify(ctx, r);
        run_cases(ctx, r, models[m].name, models[m].cases);
        smelt_graph_free(r);
        smelt_graph_free(g);
    }
    smelt_ctx_free(ctx);
    if (!ran)
        skip(); /* smelt_graph_run_reference not written yet */
}

/* load -> save -> load gives the same graph. Models of old opsets change
 * form once (attributes written as opset-17 inputs), then stay put. */
static void test_roundtrip(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (size_t m = 0; m < N_MODELS; m++) {
        sm_graph *g = load_model(ctx, models[m].name);
        sm_graph *r1 = reload(ctx, g);
        int legacy = strcmp(models[m].name, "legacy9") == 0 ||
                     strcmp(models[m].name, "opset11") == 0;
        if (!legacy)
            assert_graph_equal(ctx, g, r1);
        sm_graph *r2 = reload(ctx, r1);
        assert_graph_equal(ctx, r1, r2);
        /* the text form of an imported graph parses back to it */
        char *text = NULL;
        if (smelt_graph_print(ctx, g, &text) == SMELT_OK) {
            sm_graph *p = NULL;
            if (smelt_graph_parse(ctx, text, strlen(text), "t.ir", &p))
                fail_msg("%s: %s", models[m].name, smelt_ctx_error(ctx));
            assert_graph_equal(ctx, g, p);
            smelt_graph_free(p);
        }
        smelt_string_free(text);
        smelt_graph_free(r2);
        smelt_graph_free(r1);
        smelt_graph_free(g);
    }
    /* and through a file */
    char dir[] = "/tmp/smelt_onnx_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/mlp.onnx", dir);
    sm_graph *g = load_model(ctx, "mlp"), *r = NULL;
    assert_int_equal(smelt_onnx_save(ctx, g, path), SMELT_OK);
    assert_int_equal(smelt_onnx_load(ctx, path, &r), SMELT_OK);
    assert_graph_equal(ctx, g, r);
    smelt_graph_free(r);
    snprintf(path, sizeof path, "%s/no/such/dir.onnx", dir);
    assert_int_equal(smelt_onnx_save(ctx, g, path), SMELT_ERR_IO);
    assert_non_null(strstr(smelt_ctx_error(ctx), "cannot create"));
    smelt_graph_free(g);
    snprintf(path, sizeof path, "%s/mlp.onnx", dir);
    unlink(path);
    rmdir(dir);
    smelt_ctx_free(ctx);
}

/* Whether the len bytes at buf hold the string s. */
static int holds(const void *buf, size_t len, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp((const char *)buf + i, s, n) == 0)
            return 1;
    return 0;
}

/* The number of nodes of g (all blocks) whose op is op. */
static int count_op(const sm_block *b, sm_op op)
{
    int n = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        n += b->nodes[i]->op == op;
        for (int k = 0; k < b->nodes[i]->n_blocks; k++)
            n += count_op(b->nodes[i]->blocks[k], op);
    }
    return n;
}

/* Every model optimized at -O3 is written both ways and read back: with
 * Smelt's own ops in domain ai.smelt (declared in opset_import; the fused
 * ops survive the round trip), and decomposed into standard ONNX ops (no
 * ai.smelt, no fused op after reloading); both reloads compute what numpy
 * computed. */
static void test_export_smelt_ops(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_opt_options oo;
    smelt_opt_options_default(&oo);
    oo.level = 3;
    int fused_models = 0;
    for (size_t m = 0; m < N_MODELS; m++) {
        sm_graph *g = load_model(ctx, models[m].name);
        if (smelt_graph_optimize(ctx, g, &oo, NULL) != SMELT_OK)
            fail_msg("%s: %s", models[m].name, smelt_ctx_error(ctx));
        int fused = count_op(g->top, SM_OP_FusedConv) +
                    count_op(g->top, SM_OP_FusedGemm) +
                    count_op(g->top, SM_OP_FusedElementwise);
        fused_models += fused > 0;
        for (int standard = 0; standard <= 1; standard++) {
            smelt_onnx_save_options so;
            smelt_onnx_save_options_default(&so);
            so.standard = standard;
            void *buf;
            size_t len;
            if (smelt_onnx_save_buffer_opt(ctx, g, &so, &buf, &len))
                fail_msg("%s: %s", models[m].name, smelt_ctx_error(ctx));
            assert_int_equal(holds(buf, len, "ai.smelt"), !standard && fused);
            sm_graph *r = NULL;
            if (smelt_onnx_load_buffer(ctx, buf, len, NULL, &r) != SMELT_OK)
                fail_msg("reloading %s (standard %d): %s", models[m].name,
                         standard, smelt_ctx_error(ctx));
            smelt_onnx_buffer_free(buf);
            int back = count_op(r->top, SM_OP_FusedConv) +
                       count_op(r->top, SM_OP_FusedGemm) +
                       count_op(r->top, SM_OP_FusedElementwise);
            assert_int_equal(back, standard ? 0 : fused);
            verify(ctx, r);
            run_cases(ctx, r, models[m].name, models[m].cases);
            smelt_graph_free(r);
        }
        smelt_graph_free(g);
    }
    assert_true(fused_models >= 2); /* conv and mlp fuse at -O3 */
    smelt_ctx_free(ctx);
}

static const sm_node *find_node(const sm_block *b, const char *name)
{
    for (int i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->name && strcmp(b->nodes[i]->name, name) == 0)
            return b->nodes[i];
    fail_msg("no node %s", name);
    return NULL;
}

static void assert_type(const sm_value *v, const char *want)
{
    char buf[128];
    sm_type_str(&v->type, buf, sizeof buf);
    assert_string_equal(buf, want);
}

/* Names, types (symbolic, known and unknown dims), constants, attributes
 * mapped onto the schema's kinds. */
static void test_mlp_structure(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = load_model(ctx, "mlp");
    const sm_block *b = g->top;
    assert_string_equal(g->name, "mlp");
    assert_int_equal(b->n_params, 1); /* initializers are not inputs */
    assert_string_equal(b->params[0]->name, "x");
    assert_type(b->params[0], "f32[batch,4]");
    assert_int_equal(b->n_consts, 4);
    assert_string_equal(b->consts[0]->name, "w1");
    assert_type(b->consts[0], "f32[4,8]");
    assert_int_equal(b->n_nodes, 5);
    const sm_node *mm = find_node(b, "mm1");
    assert_int_equal(mm->op, SM_OP_MatMul);
    assert_ptr_equal(mm->in[0], b->params[0]);
    assert_ptr_equal(mm->in[1], b->consts[0]);
    assert_type(mm->out[0], "f32[batch,8]");               /* value_info */
    assert_type(find_node(b, "add1")->out[0], "undef[*]"); /* none given */
    assert_type(find_node(b, "relu1")->out[0], "f32[batch,?]");
    const sm_node *gemm = find_node(b, "gemm2");
    assert_int_equal(sm_node_attr(gemm, "transB")->kind, SM_ATTR_INT);
    assert_int_equal(sm_node_attr(gemm, "transB")->v.i, 1);
    assert_int_equal(sm_node_attr(gemm, "alpha")->kind, SM_ATTR_FLOAT);
    assert_true(sm_node_attr(gemm, "alpha")->v.f == 0.5);
    assert_int_equal(b->n_ret, 1);
    assert_string_equal(b->ret[0]->name, "y");
    assert_type(b->ret[0], "f32[batch,3]");
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Every dtype, from the typed fields and from raw_data, gives the same
 * tensor; a few values checked by hand. */
static void test_typed_tensors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = load_model(ctx, "typed");
    const sm_block *b = g->top;
    assert_int_equal(b->n_consts, 20);
    for (int i = 0; i < b->n_consts; i += 2) {
        const sm_value *typed = b->consts[i], *raw = b->consts[i + 1];
        assert_non_null(strstr(typed->name, "_typed"));
        assert_non_null(strstr(raw->name, "_raw"));
        if (!sm_tensor_equal(typed->data, raw->data))
            fail_msg("%s differs from %s", typed->name, raw->name);
    }
    const sm_tensor *f16 = sm_graph_find_value(g, "f16_typed")->data;
    assert_int_equal(f16->dtype, SMELT_DTYPE_F16);
    assert_int_equal(((uint16_t *)f16->data)[0], 0x3800); /* 0.5 */
    assert_int_equal(((uint16_t *)f16->data)[1], 0xfbff); /* -65504 */
    const sm_tensor *bf = sm_graph_find_value(g, "bf16_typed")->data;
    assert_int_equal(bf->dtype, SMELT_DTYPE_BF16);
    assert_int_equal(((uint16_t *)bf->data)[0], 0x3fc0); /* 1.5 */
    const sm_tensor *i64 = sm_graph_find_value(g, "i64_raw")->data;
    assert_true(((int64_t *)i64->data)[0] == INT64_MIN);
    assert_true(((int64_t *)i64->data)[1] == ((int64_t)1 << 62) + 1);
    const sm_tensor *i8 = sm_graph_find_value(g, "i8_typed")->data;
    assert_int_equal(((int8_t *)i8->data)[0], -128);
    const sm_tensor *bo = sm_graph_find_value(g, "bool_typed")->data;
    assert_int_equal(((uint8_t *)bo->data)[0], 1);
    assert_int_equal(((uint8_t *)bo->data)[1], 0);
    const sm_tensor *i32 = sm_graph_find_value(g, "i32_typed")->data;
    assert_int_equal(i32->ndim, 2);
    assert_true(((int32_t *)i32->data)[0] == INT32_MIN);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Opset 9 attributes became constant inputs; Softmax over a non-last axis
 * became Flatten -> Softmax -> Reshape(Shape). */
static void test_legacy_opsets(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = load_model(ctx, "legacy9");
    const sm_block *b = g->top;
    const sm_node *slice = find_node(b, "slice");
    assert_int_equal(slice->n_in, 4);
    assert_int_equal(slice->n_attr, 0);
    const sm_tensor *starts = slice->in[1]->data;
    assert_non_null(starts);
    assert_int_equal(starts->dtype, SMELT_DTYPE_I64);
    assert_int_equal(starts->numel, 2);
    assert_int_equal(((int64_t *)starts->data)[1], 1);
    assert_int_equal(((int64_t *)slice->in[3]->data->data)[0], 1); /* axes */
    const sm_node *pad = find_node(b, "pad");
    assert_int_equal(pad->n_in, 3);
    assert_int_equal(pad->in[1]->data->numel, 6);
    assert_int_equal(pad->in[2]->data->dtype, SMELT_DTYPE_F32);
    assert_true(smelt_tensor_get_f64(pad->in[2]->data, 0) == 1.5);
    const sm_node *clip = find_node(b, "clip");
    assert_int_equal(clip->n_in, 3);
    assert_true(smelt_tensor_get_f64(clip->in[1]->data, 0) == -0.5);
    assert_true(smelt_tensor_get_f64(clip->in[2]->data, 0) == 0.75);
    const sm_node *drop = find_node(b, "drop");
    assert_int_equal(drop->n_in, 2);
    assert_int_equal(drop->n_attr, 0);
    const sm_node *sm = find_node(b, "softmax");
    assert_int_equal(sm_node_attr(sm, "axis")->v.i, 1);
    assert_int_equal(sm->in[0]->def->op, SM_OP_Flatten);
    int reshape_sm = 0, logsoftmax = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        if (n->op == SM_OP_Reshape && strcmp(n->out[0]->name, "sm") == 0)
            reshape_sm = n->in[1]->def->op == SM_OP_Shape;
        logsoftmax += n->op == SM_OP_LogSoftmax;
    }
    assert_true(reshape_sm);
    assert_int_equal(logsoftmax, 1);
    /* Squeeze/Unsqueeze/ReduceSum keep their axes attributes */
    for (int i = 0; i < b->n_nodes; i++)
        if (b->nodes[i]->op == SM_OP_ReduceSum)
            assert_int_equal(sm_node_attr(b->nodes[i], "axes")->v.ints[0], 2);
    smelt_graph_free(g);

    /* opset 11: Softmax axis -1 is kept as one node */
    g = load_model(ctx, "opset11");
    int n_softmax = 0;
    for (int i = 0; i < g->top->n_nodes; i++)
        n_softmax += g->top->nodes[i]->op == SM_OP_Softmax;
    assert_int_equal(n_softmax, 1);
    sm_graph *r = reload(ctx, g); /* written at opset 17: axes as inputs */
    for (int i = 0; i < r->top->n_nodes; i++) {
        const sm_node *n = r->top->nodes[i];
        if (n->op == SM_OP_Squeeze || n->op == SM_OP_Split) {
            assert_int_equal(n->n_in, 2);
            assert_null(
                sm_node_attr(n, n->op == SM_OP_Split ? "split" : "axes"));
        }
        if (n->op == SM_OP_ReduceMean) /* still an attribute at 17 */
            assert_int_equal(sm_node_attr(n, "axes")->v.ints[0], 1);
    }
    smelt_graph_free(r);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* If and Loop graphs become sub-blocks in the op table's order; branches
 * read outer values; a branch's initializer is a constant of the branch. */
static void test_control_flow(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = load_model(ctx, "if");
    const sm_node *n = find_node(g->top, "if");
    assert_int_equal(n->n_blocks, 2);
    const sm_block *t = n->blocks[0], *e = n->blocks[1];
    assert_string_equal(t->label, "then_branch");
    assert_string_equal(e->label, "else_branch");
    assert_ptr_equal(t->parent, n);
    assert_int_equal(t->n_consts, 1);
    assert_string_equal(t->consts[0]->name, "two");
    assert_ptr_equal(t->nodes[0]->in[0], g->top->params[1]); /* outer x */
    assert_ptr_equal(e->nodes[0]->in[1], g->top->consts[0]); /* outer k */
    assert_int_equal(e->n_ret, 1);
    smelt_graph_free(g);

    g = load_model(ctx, "loop");
    n = find_node(g->top, "loop");
    assert_int_equal(n->n_blocks, 1);
    const sm_block *body = n->blocks[0];
    assert_string_equal(body->label, "body");
    assert_int_equal(body->n_params, 3);
    assert_type(body->params[0], "i64[]");
    assert_int_equal(body->n_ret, 3);
    assert_int_equal(n->n_out, 2);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A graph from text IR; NULL when the parser is not written yet. */
static sm_graph *parse(smelt_ctx_t *ctx, const char *text)
{
    sm_graph *g = NULL;
    smelt_status s = smelt_graph_parse(ctx, text, strlen(text), "t.ir", &g);
    if (not_written(ctx, s))
        return NULL;
    if (s != SMELT_OK)
        fail_msg("parse: %s", smelt_ctx_error(ctx));
    return g;
}

/* Operands written in the form of the opset written: a constant axes
 * input of ReduceMean becomes an attribute at 17, a computed one raises
 * the opset to 18; Cast.saturate (19) is dropped at 17. Absent optional
 * inputs, symbolic, unknown and rank-unknown types and quoted names
 * survive the round trip. */
static void test_export_forms(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = parse(ctx, "graph t(%x: f32[2,3]) {\n"
                             "  %a: i64[1] = const [1]\n"
                             "  %y = ReduceMean(%x, %a) {keepdims = 0}\n"
                             "  %z = Cast(%y) {to = 7, saturate = 1}\n"
                             "  return %z\n"
                             "}\n");
    if (!g) {
        smelt_ctx_free(ctx);
        skip();
    }
    assert_int_equal(sm_onnx_export_opset(g), 17);
    sm_graph *r = reload(ctx, g);
    const sm_node *n = r->top->nodes[0];
    assert_int_equal(n->op, SM_OP_ReduceMean);
    assert_int_equal(n->n_in, 1);
    assert_int_equal(sm_node_attr(n, "axes")->n, 1);
    assert_int_equal(sm_node_attr(n, "axes")->v.ints[0], 1);
    assert_null(sm_node_attr(r->top->nodes[1], "saturate"));
    assert_int_equal(sm_node_attr(r->top->nodes[1], "to")->v.i, 7);
    smelt_graph_free(r);
    smelt_graph_free(g);

    g = parse(ctx, "graph t(%x: f32[2,3], %a: i64[1]) {\n"
                   "  %y = ReduceMax(%x, %a)\n"
                   "  %p, %q = Split(%x) {axis = 1, num_outputs = 2}\n"
                   "  return %y, %p, %q\n"
                   "}\n");
    assert_int_equal(sm_onnx_export_opset(g), 18);
    r = reload(ctx, g);
    assert_graph_equal(ctx, g, r);
    smelt_graph_free(r);
    smelt_graph_free(g);

    g = parse(ctx, "graph t(%x: f32[batch,?], %m: f32[], %w: i64[*]) {\n"
                   "  %y: f32[batch,?] = Clip(%x, _, %m) @\"clip me\"\n"
                   "  %\"odd name\": f32[*] = Relu(%y)\n"
                   "  %s = Squeeze(%y) {axes = [1]}\n"
                   "  return %\"odd name\", %s, %w\n"
                   "}\n");
    r = reload(ctx, g);
    const sm_node *clip = r->top->nodes[0];
    assert_string_equal(clip->name, "clip me");
    assert_int_equal(clip->n_in, 3);
    assert_null(clip->in[1]);
    assert_type(r->top->params[0], "f32[batch,?]");
    assert_type(r->top->params[2], "i64[*]");
    assert_type(r->top->nodes[1]->out[0], "f32[*]");
    const sm_node *sq = r->top->nodes[2]; /* axes: an input at 17 */
    assert_int_equal(sq->n_in, 2);
    assert_int_equal(((int64_t *)sq->in[1]->data->data)[0], 1);
    smelt_graph_free(r);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_detect(void **state)
{
    (void)state;
    assert_true(sm_onnx_is_model("a/b/model.onnx", NULL, 0));
    assert_false(sm_onnx_is_model("x.ir", "graph g() {", 11));
    assert_false(sm_onnx_is_model("x.ir", "  # comment\n", 12));
    assert_true(sm_onnx_is_model("model.bin", "\x08\x08\x3a", 3));
    assert_false(sm_onnx_is_model("empty", "", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp_structure),
        cmocka_unit_test(test_typed_tensors),
        cmocka_unit_test(test_legacy_opsets),
        cmocka_unit_test(test_control_flow),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_export_smelt_ops),
        cmocka_unit_test(test_models_run),
        cmocka_unit_test(test_export_forms),
        cmocka_unit_test(test_detect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
