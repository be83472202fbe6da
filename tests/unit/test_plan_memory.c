/*
 * test_plan_memory.c - how many copies of the weights loading and
 * compiling keep, counted in bytes through the allocator hook: an ONNX
 * load holds the weights once (raw_data is copied from the file's mapping
 * or the caller's buffer, not unpacked by protobuf-c first), and a plan
 * keeps a weight that only packed kernels read in its packed form alone
 * (smelt_plan_compile_take never copies the graph; smelt_plan_compile's
 * copy drops it too). Plans still compute what the reference interpreter
 * does, after the caller's graph is gone. Also: a raw_data reference
 * forged in the model is not followed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/tensor.h"
#include "ir/ir.h"

/* ---- a counting allocator ---------------------------------------------- */

/* Bytes live and their high-water mark, of blocks made through the hook
 * (each carries its size in a header). */
static size_t live, peak;

#define HDR 16

static void *counting(void *user, void *ptr, size_t size)
{
    (void)user;
    size_t old = 0;
    char *b = ptr ? (char *)ptr - HDR : NULL;
    if (b)
        memcpy(&old, b, sizeof old);
    if (size == 0) {
        live -= old;
        free(b);
        return NULL;
    }
    char *n = realloc(b, size + HDR);
    if (!n)
        return NULL;
    memcpy(n, &size, sizeof size);
    live = live - old + size;
    if (live > peak)
        peak = live;
    return n + HDR;
}

/* Starts a new high-water mark at the bytes live now. */
static size_t mark(void)
{
    peak = live;
    return live;
}

#define KIB ((size_t)1024)
#define MIB (KIB * KIB)

/* ---- the model: x[4,512] -> MatMul w1[512,1024] -> Relu -> Gemm w2, b --- */

enum { BATCH = 4, IN = 512, HID = 1024, OUT = 256 };
#define W1_BYTES ((size_t)IN * HID * 4)
#define WEIGHTS (W1_BYTES + (size_t)HID * OUT * 4 + (size_t)OUT * 4)

static sm_tensor *filled(smelt_ctx_t *ctx, int ndim, const int64_t *dims,
                         unsigned seed)
{
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(ctx, SMELT_DTYPE_F32, ndim, dims, &t),
                     SMELT_OK);
    float *f = t->data;
    for (int64_t i = 0; i < t->numel; i++) {
        seed = seed * 1664525u + 1013904223u;
        f[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    return t;
}

/* The model with `scale` times smaller layers. */
static sm_graph *build(smelt_ctx_t *ctx, int scale)
{
    sm_graph *g;
    int64_t in = IN / scale, hid = HID / scale, out = OUT / scale;
    assert_int_equal(sm_graph_new(ctx, "mem", &g), SMELT_OK);
    sm_type t = {SMELT_DTYPE_F32, 2, {{BATCH, NULL}, {in, NULL}}};
    sm_value *x = sm_block_add_param(g->top, "x", &t);
    sm_value *w1 = sm_block_add_const(g->top, "w1",
                                      filled(ctx, 2, (int64_t[]){in, hid}, 1));
    sm_value *w2 = sm_block_add_const(g->top, "w2",
                                      filled(ctx, 2, (int64_t[]){hid, out}, 2));
    sm_value *b =
        sm_block_add_const(g->top, "b", filled(ctx, 1, (int64_t[]){out}, 3));
    sm_node *mm = sm_node_new(g->top, SM_OP_MatMul, "mm", 2,
                              (sm_value *[]){x, w1}, 1, NULL);
    sm_node *r = sm_node_new(g->top, SM_OP_Relu, "r", 1, mm->out, 1, NULL);
    sm_node *gm =
        sm_node_new(g->top, SM_OP_Gemm, "gm", 3,
                    (sm_value *[]){r->out[0], w2, b}, 1, (const char *[]){"y"});
    assert_non_null(gm);
    assert_true(sm_block_add_return(g->top, gm->out[0]));
    assert_int_equal(smelt_graph_infer(ctx, g), SMELT_OK);
    return g;
}

/* The model (layers `scale` times smaller) written to a temporary file
 * (its path, static). */
static const char *model_file(smelt_ctx_t *ctx, int scale)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/smelt_mem_%d.onnx", (int)getpid());
    sm_graph *g = build(ctx, scale);
    assert_int_equal(smelt_onnx_save(ctx, g, path), SMELT_OK);
    sm_graph_free(g);
    return path;
}

static void assert_close(const sm_tensor *a, const sm_tensor *b)
{
    assert_int_equal(a->numel, b->numel);
    const float *x = a->data, *y = b->data;
    for (int64_t i = 0; i < a->numel; i++)
        assert_true(fabsf(x[i] - y[i]) <= 1e-4f * (1 + fabsf(y[i])));
}

/* Runs plan p on x and compares with want. */
static void check_run(smelt_ctx_t *ctx, const smelt_plan_t *p, sm_tensor *x,
                      const sm_tensor *want)
{
    smelt_tensor_t *y = NULL;
    assert_int_equal(smelt_plan_run(ctx, p, &x, 1, &y, 1), SMELT_OK);
    assert_close(y, want);
    smelt_tensor_free(y);
}

/* ---- tests ------------------------------------------------------------- */

/* Load, compile (taking the graph and copying it), run: the bytes live
 * and the high-water mark of each stage against the weights' size. The
 * old path peaked at two copies while loading (file bytes and unpacked
 * raw_data) and three while compiling (graph, plan's copy, packed). */
static void test_weights_held_once(void **state)
{
    (void)state;
    smelt_set_allocator(counting, NULL);
    smelt_ctx_t *ctx = smelt_ctx_init();
    const char *path = model_file(ctx, 1);
    sm_tensor *x = filled(ctx, 2, (int64_t[]){BATCH, IN}, 4);
    size_t base = mark();

    /* loading: the weights once, plus the graph's bookkeeping */
    sm_graph *g = NULL;
    assert_int_equal(smelt_onnx_load(ctx, path, &g), SMELT_OK);
    assert_true(peak - base <= WEIGHTS + 256 * KIB);
    assert_true(live - base >= WEIGHTS);
    smelt_tensor_t *want = NULL;
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, &want, 1),
                     SMELT_OK);
    size_t loaded = mark();

    /* compile_take: packing w1 is the one moment a weight is held twice */
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile_take(ctx, g, NULL, &p), SMELT_OK);
    assert_true(peak - base <= WEIGHTS + W1_BYTES + 512 * KIB);
    assert_true(live <= loaded + WEIGHTS / 8); /* packed replaces raw */
    check_run(ctx, p, x, want);
    smelt_plan_free(p);

    /* compile (a copy): the caller's graph plus one packed copy; once the
     * graph is freed, the plan alone holds the weights, once */
    assert_int_equal(smelt_onnx_load(ctx, path, &g), SMELT_OK);
    size_t with_graph = mark();
    assert_int_equal(smelt_plan_compile(ctx, g, NULL, &p), SMELT_OK);
    assert_true(peak - with_graph <= WEIGHTS + W1_BYTES + 512 * KIB);
    assert_true(live - with_graph <= WEIGHTS + WEIGHTS / 8);
    sm_graph_free(g);
    assert_true(live - base <= WEIGHTS + WEIGHTS / 8 + 256 * KIB);
    check_run(ctx, p, x, want);
    smelt_plan_free(p);

    /* from the caller's buffer: its bytes are not copied either */
    size_t len;
    char *buf = tu_read_file(path, &len); /* libc: not counted */
    assert_non_null(buf);
    mark();
    assert_int_equal(smelt_onnx_load_buffer(ctx, buf, len, NULL, &g), SMELT_OK);
    assert_true(peak - base <= WEIGHTS + 256 * KIB);
    smelt_tensor_t *again = NULL;
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, &again, 1),
                     SMELT_OK);
    assert_close(again, want);
    smelt_tensor_free(again);
    sm_graph_free(g);
    free(buf);

    smelt_tensor_free(want);
    sm_tensor_free(x);
    smelt_ctx_free(ctx);
    assert_int_equal(live, 0);
    smelt_set_allocator(NULL, NULL);
    unlink(path);
}

/* A weight that something besides a packing kernel reads keeps its bytes:
 * here w1 is also a graph output, so the plan returns it whole. */
static void test_weight_read_raw_kept(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = build(ctx, 1);
    sm_value *w1 = sm_graph_find_value(g, "w1");
    assert_true(sm_block_add_return(g->top, w1));
    sm_tensor *x = filled(ctx, 2, (int64_t[]){BATCH, IN}, 4);
    smelt_tensor_t *want[2] = {0}, *got[2] = {0};
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, want, 2),
                     SMELT_OK);
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile_take(ctx, g, NULL, &p), SMELT_OK);
    assert_int_equal(smelt_plan_run(ctx, p, &x, 1, got, 2), SMELT_OK);
    assert_close(got[0], want[0]);
    assert_true(sm_tensor_equal(got[1], want[1]));
    for (int i = 0; i < 2; i++) {
        smelt_tensor_free(want[i]);
        smelt_tensor_free(got[i]);
    }
    smelt_plan_free(p);
    sm_tensor_free(x);
    smelt_ctx_free(ctx);
}

/* ---- raw_data references --------------------------------------------- */

/* A tiny protobuf writer: a field's key, a varint, length-prefixed bytes. */
static size_t varint(uint8_t *o, uint64_t v)
{
    size_t k = 0;
    do {
        o[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return k;
}

static size_t field_bytes(uint8_t *o, unsigned num, const void *b, size_t n)
{
    size_t k = varint(o, (uint64_t)num << 3 | 2);
    k += varint(o + k, n);
    memcpy(o + k, b, n);
    return k + n;
}

static size_t field_int(uint8_t *o, unsigned num, uint64_t v)
{
    size_t k = varint(o, (uint64_t)num << 3);
    return k + varint(o + k, v);
}

/* A model whose one initializer 'w' (f32[n]) is its output; with forge,
 * the TensorProto carries a reference field of Smelt's own number instead
 * of data (pointing at the model's first 4n bytes), else raw_data. */
static size_t tiny_model(uint8_t *out, int n, const float *vals, int forge)
{
    uint8_t tp[1024], vi[64], graph[1200], opset[16];
    size_t k = field_int(tp, 1, (uint64_t)n); /* dims */
    k += field_int(tp + k, 2, 1);             /* data_type float */
    k += field_bytes(tp + k, 8, "w", 1);      /* name */
    if (forge) {
        uint8_t ref[16] = {0};
        ref[8] = (uint8_t)(4 * n); /* offset 0, length 4n (LE) */
        k += field_bytes(tp + k, 536870911u, ref, sizeof ref);
    } else {
        k += field_bytes(tp + k, 9, vals, (size_t)n * 4); /* raw_data */
    }
    size_t kv = field_bytes(vi, 1, "w", 1);
    size_t kg = field_bytes(graph, 5, tp, k);  /* initializer */
    kg += field_bytes(graph + kg, 12, vi, kv); /* output */
    size_t ko = field_int(opset, 2, 17);
    size_t km = field_int(out, 1, 8);          /* ir_version */
    km += field_bytes(out + km, 8, opset, ko); /* opset_import */
    km += field_bytes(out + km, 7, graph, kg); /* graph */
    return km;
}

static void test_raw_refs(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    uint8_t buf[2048];
    float vals[100];
    for (int i = 0; i < 100; i++)
        vals[i] = (float)i * 0.25f - 3.0f;
    /* 8 floats (32 bytes: unpacked as usual) and 100 (referenced) */
    int sizes[] = {8, 100};
    for (int s = 0; s < 2; s++) {
        size_t len = tiny_model(buf, sizes[s], vals, 0);
        sm_graph *g = NULL;
        assert_int_equal(smelt_onnx_load_buffer(ctx, buf, len, NULL, &g),
                         SMELT_OK);
        sm_value *w = sm_graph_find_value(g, "w");
        assert_non_null(w);
        assert_non_null(w->data);
        assert_int_equal(w->data->numel, sizes[s]);
        assert_memory_equal(w->data->data, vals, (size_t)sizes[s] * 4);
        sm_graph_free(g);
    }
    /* a forged reference is dropped, never followed */
    size_t len = tiny_model(buf, 8, vals, 1);
    sm_graph *g = (sm_graph *)1;
    assert_int_equal(smelt_onnx_load_buffer(ctx, buf, len, NULL, &g),
                     SMELT_ERR_PARSE);
    assert_null(g);
    assert_non_null(strstr(smelt_ctx_error(ctx),
                           "float_data holds 0 values, but f32[8] needs 8"));
    smelt_ctx_free(ctx);
}

/* Every allocation of loading (from a mapped file, with references) and
 * of compile_take failing in turn: each fails cleanly, leaks nothing
 * (the sanitizer build checks) and compile_take frees the graph it took. */
static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const char *path = model_file(ctx, 16);
    for (long k = 0;; k++) {
        sm_alloc_fail_after(k);
        sm_graph *g = NULL;
        smelt_plan_t *p = NULL;
        smelt_status s = smelt_onnx_load(ctx, path, &g);
        if (s == SMELT_OK)
            s = smelt_plan_compile_take(ctx, g, NULL, &p);
        sm_alloc_fail_after(-1);
        smelt_plan_free(p);
        if (s == SMELT_OK)
            break;
        assert_int_equal(s, SMELT_ERR_NOMEM);
        assert_true(k < 100000);
    }
    unlink(path);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_held_once),
        cmocka_unit_test(test_weight_read_raw_kept),
        cmocka_unit_test(test_raw_refs),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
