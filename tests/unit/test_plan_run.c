/*
 * test_plan_run.c - what a plan promises beyond matching the reference:
 * buffer sharing in the arena, one plan run from several threads, no
 * allocation while running, symbolic dims bound at compile time, the
 * thread pool, and the error paths of compile and run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/threadpool.h"
#include "testutil.h"

static smelt_tensor_t *filled(int ndim, const int64_t *dims, float base)
{
    smelt_tensor_t *t = NULL;
    assert_int_equal(smelt_tensor_init(NULL, SMELT_DTYPE_F32, ndim, dims, &t),
                     SMELT_OK);
    float *p = smelt_tensor_data(t);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++)
        p[i] = base + (float)(i % 17) * 0.25f - 2.0f;
    return t;
}

static smelt_plan_t *compile(smelt_ctx_t *ctx, smelt_graph_t *g, int level,
                             int threads)
{
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = level;
    o.threads = threads;
    smelt_plan_t *p = NULL;
    smelt_status st = smelt_plan_compile(ctx, g, &o, &p);
    if (st != SMELT_OK)
        fail_msg("compile: %s", smelt_ctx_error(ctx));
    return p;
}

/* Five unary ops in a chain over f32[1024]: the four intermediates live
 * one step each past their definition, so two 4 KiB buffers suffice; the
 * last value is the graph output and lives in the caller's tensor. */
static const char *chain = "graph chain(%x: f32[1024]) {\n"
                           "  %a: f32[1024] = Relu(%x)\n"
                           "  %b: f32[1024] = Neg(%a)\n"
                           "  %c: f32[1024] = Abs(%b)\n"
                           "  %d: f32[1024] = Neg(%c)\n"
                           "  %e: f32[1024] = Abs(%d)\n"
                           "  return %e\n"
                           "}\n";

static void test_arena_reuse(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, chain);
    smelt_plan_t *p = compile(ctx, g, 0, 1);
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    assert_int_equal(s.steps, 5);
    assert_int_equal(s.unshared_bytes, 4 * 4096);
    assert_true(s.arena_bytes < s.unshared_bytes);
    /* in place (a kernel that allows it) needs one buffer, else two */
    assert_true(s.arena_bytes == 2 * 4096 ||
                (s.inplace > 0 && s.arena_bytes == 4096));
    assert_int_equal(s.dynamic_steps, 0);
    /* values: e = |-(|-(relu x)|)| = relu(x) */
    int64_t dims[1] = {1024};
    smelt_tensor_t *x = filled(1, dims, 0), *y = NULL;
    assert_int_equal(smelt_plan_run(ctx, p, &x, 1, &y, 1), SMELT_OK);
    const float *xv = smelt_tensor_data(x), *yv = smelt_tensor_data(y);
    for (int i = 0; i < 1024; i++)
        assert_true(yv[i] == (xv[i] > 0 ? xv[i] : 0));
    char *text = NULL;
    assert_int_equal(smelt_plan_print(ctx, p, &text), SMELT_OK);
    assert_non_null(strstr(text, "Relu"));
    assert_non_null(strstr(text, "output 0"));
    smelt_string_free(text);
    smelt_tensor_free(x);
    smelt_tensor_free(y);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* A small MLP with a residual and a softmax (x: f32[8,64]; outputs y and
 * o, both f32[8,16]), its weights a fixed pattern: enough kinds of steps.
 * The text is made here because a literal lists every element. */
static void append_list(char *buf, size_t size, int n, double scale)
{
    size_t at = strlen(buf);
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%g", i ? ", " : "[",
                               scale * ((i * 37 % 23) - 11));
    snprintf(buf + at, size - at, "]\n");
}

static const char *mlp_text(void)
{
    static char buf[1 << 16];
    if (buf[0])
        return buf;
    snprintf(buf, sizeof buf,
             "graph mlp(%%x: f32[8,64]) {\n"
             "  %%w1: f32[64,64] = const ");
    append_list(buf, sizeof buf, 64 * 64, 0.01);
    strcat(buf, "  %b1: f32[64] = const ");
    append_list(buf, sizeof buf, 64, 0.05);
    strcat(buf, "  %w2: f32[64,16] = const ");
    append_list(buf, sizeof buf, 64 * 16, 0.02);
    strcat(buf, "  %h: f32[8,64] = MatMul(%x, %w1)\n"
                "  %hb: f32[8,64] = Add(%h, %b1)\n"
                "  %r: f32[8,64] = Relu(%hb)\n"
                "  %s: f32[8,64] = Add(%r, %x)\n"
                "  %o: f32[8,16] = MatMul(%s, %w2)\n"
                "  %y: f32[8,16] = Softmax(%o)\n"
                "  return %y, %o\n"
                "}\n");
    return buf;
}

typedef struct worker_arg {
    const smelt_plan_t *p;
    smelt_tensor_t *x;
    const float *want; /* 8 * 16 */
    int mismatches, errors;
} worker_arg;

static void *worker(void *v)
{
    worker_arg *w = v;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_session_t *s = NULL;
    if (smelt_session_init(ctx, w->p, &s) != SMELT_OK) {
        w->errors++;
        smelt_ctx_free(ctx);
        return NULL;
    }
    int64_t d0[2] = {8, 16};
    smelt_tensor_t *out[2] = {NULL, NULL};
    smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d0, &out[0]);
    smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d0, &out[1]);
    for (int it = 0; it < 50; it++) {
        if (smelt_session_run_into(ctx, s, &w->x, 1, out, 2) != SMELT_OK) {
            w->errors++;
            break;
        }
        if (memcmp(smelt_tensor_data(out[0]), w->want, 8 * 16 * 4) != 0)
            w->mismatches++;
    }
    smelt_tensor_free(out[0]);
    smelt_tensor_free(out[1]);
    smelt_session_free(s);
    smelt_ctx_free(ctx);
    return NULL;
}

static void test_threads_share_plan(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, mlp_text());
    smelt_plan_t *p = compile(ctx, g, 3, 2);
    int64_t dims[2] = {8, 64};
    smelt_tensor_t *x = filled(2, dims, 0.5f), *y[2] = {NULL, NULL};
    assert_int_equal(smelt_plan_run(ctx, p, &x, 1, y, 2), SMELT_OK);
    /* against the reference interpreter */
    smelt_tensor_t *r[2] = {NULL, NULL};
    assert_int_equal(smelt_graph_run_reference(ctx, g, &x, 1, r, 2), SMELT_OK);
    for (int i = 0; i < 8 * 16; i++) {
        double a = smelt_tensor_get_f64(y[0], i),
               e = smelt_tensor_get_f64(r[0], i);
        assert_true(a - e < 1e-5 + 1e-4 * e && e - a < 1e-5 + 1e-4 * e);
    }
    worker_arg w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker_arg){p, x, smelt_tensor_data(y[0]), 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].errors, 0);
        assert_int_equal(w[i].mismatches, 0);
    }
    for (int i = 0; i < 2; i++) {
        smelt_tensor_free(y[i]);
        smelt_tensor_free(r[i]);
    }
    smelt_tensor_free(x);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* After the first run, a run into the caller's tensors makes no
 * allocation at all (counted through the allocator hook), with one
 * thread or with a pool; a run into new tensors makes only those. */
static void test_no_alloc_when_running(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 3; threads += 2) {
        smelt_ctx_t *ctx = smelt_ctx_init();
        smelt_graph_t *g = tu_parse(ctx, mlp_text());
        smelt_plan_t *p = compile(ctx, g, 3, threads);
        smelt_session_t *s = NULL;
        assert_int_equal(smelt_session_init(ctx, p, &s), SMELT_OK);
        int64_t dims[2] = {8, 64}, d0[2] = {8, 16};
        smelt_tensor_t *x = filled(2, dims, 0), *out[2];
        smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d0, &out[0]);
        smelt_tensor_init(ctx, SMELT_DTYPE_F32, 2, d0, &out[1]);
        assert_int_equal(smelt_session_run_into(ctx, s, &x, 1, out, 2),
                         SMELT_OK);
        sm_alloc_fail_after(-1);
        for (int i = 0; i < 5; i++)
            assert_int_equal(smelt_session_run_into(ctx, s, &x, 1, out, 2),
                             SMELT_OK);
        assert_int_equal(sm_alloc_fail_after(-1), 0);
        smelt_tensor_t *fresh[2] = {NULL, NULL};
        assert_int_equal(smelt_session_run(ctx, s, &x, 1, fresh, 2), SMELT_OK);
        /* a tensor is two allocations (header and data) */
        assert_int_equal(sm_alloc_fail_after(-1), 4);
        assert_memory_equal(smelt_tensor_data(fresh[0]),
                            smelt_tensor_data(out[0]), 8 * 16 * 4);
        smelt_tensor_free(fresh[0]);
        smelt_tensor_free(fresh[1]);
        smelt_tensor_free(out[0]);
        smelt_tensor_free(out[1]);
        smelt_tensor_free(x);
        smelt_session_free(s);
        smelt_plan_free(p);
        smelt_graph_free(g);
        smelt_ctx_free(ctx);
    }
}

static const char *symbolic =
    "graph sym(%x: f32[batch,4], %y: f32[batch,4]) {\n"
    "  %s: f32[batch,4] = Add(%x, %y)\n"
    "  %t: f32[batch,4] = Mul(%s, %s)\n"
    "  return %t\n"
    "}\n";

static void test_symbolic_dims(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, symbolic);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    smelt_plan_t *p = NULL;
    /* unbound: refused, naming the input and how to bind it */
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_ERR_SHAPE);
    assert_null(p);
    assert_non_null(strstr(smelt_ctx_error(ctx), "input 'x'"));
    assert_non_null(strstr(smelt_ctx_error(ctx), "dims="));
    o.dims = "batch=3";
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_OK);
    assert_int_equal(smelt_plan_input_dim(p, 0, 0), 3);
    assert_int_equal(smelt_plan_output_dim(p, 0, 0), 3);
    int64_t d3[2] = {3, 4}, d5[2] = {5, 4};
    smelt_tensor_t *in[2] = {filled(2, d3, 1), filled(2, d3, 0)}, *y = NULL;
    assert_int_equal(smelt_plan_run(ctx, p, in, 2, &y, 1), SMELT_OK);
    const float *a = smelt_tensor_data(in[0]), *b = smelt_tensor_data(in[1]);
    const float *yv = smelt_tensor_data(y);
    for (int i = 0; i < 12; i++)
        assert_true(yv[i] == (a[i] + b[i]) * (a[i] + b[i]));
    smelt_tensor_free(y);
    y = NULL;
    /* other shapes: refused with both shapes named */
    smelt_tensor_t *in5[2] = {filled(2, d5, 0), filled(2, d5, 0)};
    assert_int_equal(smelt_plan_run(ctx, p, in5, 2, &y, 1), SMELT_ERR_SHAPE);
    assert_null(y);
    assert_non_null(strstr(smelt_ctx_error(ctx), "f32[3,4]"));
    assert_non_null(strstr(smelt_ctx_error(ctx), "f32[5,4]"));
    smelt_plan_free(p);
    /* example inputs bind the dims as well */
    o.dims = NULL;
    o.inputs = in5;
    o.n_inputs = 2;
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_OK);
    assert_int_equal(smelt_plan_run(ctx, p, in5, 2, &y, 1), SMELT_OK);
    assert_int_equal(smelt_tensor_dim(y, 0), 5);
    smelt_tensor_free(y);
    smelt_plan_free(p);
    for (int i = 0; i < 2; i++) {
        smelt_tensor_free(in[i]);
        smelt_tensor_free(in5[i]);
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, chain);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    smelt_plan_t *p = NULL;
    o.isa = "sse9";
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "isa 'sse9'"));
    smelt_plan_options_default(&o);
    o.threads = -2;
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "threads"));
    smelt_plan_options_default(&o);
    o.level = 7;
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_ERR_INVALID_ARG);
    smelt_plan_options_default(&o);
    o.dims = "batch";
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "name=size"));
    assert_int_equal(smelt_plan_compile(ctx, NULL, NULL, &p),
                     SMELT_ERR_INVALID_ARG);
    assert_null(p);
    p = compile(ctx, g, 1, 1);
    int64_t dims[1] = {1024}, bad[1] = {1000};
    smelt_tensor_t *x = filled(1, dims, 0), *xb = filled(1, bad, 0);
    smelt_tensor_t *y = NULL;
    assert_int_equal(smelt_plan_run(ctx, p, &x, 0, &y, 1),
                     SMELT_ERR_INVALID_ARG);
    assert_non_null(strstr(smelt_ctx_error(ctx), "takes 1 inputs"));
    assert_int_equal(smelt_plan_run(ctx, p, &xb, 1, &y, 1), SMELT_ERR_SHAPE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "input 'x'"));
    smelt_tensor_t *nul = NULL;
    assert_int_equal(smelt_plan_run(ctx, p, &nul, 1, &y, 1),
                     SMELT_ERR_INVALID_ARG);
    /* run_into: the caller's output must have the output's shape */
    smelt_session_t *s = NULL;
    assert_int_equal(smelt_session_init(ctx, p, &s), SMELT_OK);
    assert_int_equal(smelt_session_run_into(ctx, s, &x, 1, &xb, 1),
                     SMELT_ERR_SHAPE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "output 'e'"));
    assert_int_equal(smelt_session_run_into(ctx, s, &x, 1, &nul, 1),
                     SMELT_ERR_INVALID_ARG);
    smelt_session_free(s);
    smelt_tensor_free(x);
    smelt_tensor_free(xb);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Every allocation of compile, session_init and run failing in turn:
 * NOMEM, nothing leaked (ASan), and the next attempt works. */
static void test_alloc_failures(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, mlp_text());
    int64_t dims[2] = {8, 64};
    smelt_tensor_t *x = filled(2, dims, 0);
    int ok = 0;
    for (long k = 0; !ok && k < 100000; k++) {
        smelt_plan_t *p = NULL;
        smelt_tensor_t *y[2] = {NULL, NULL};
        sm_alloc_fail_after(k);
        smelt_plan_options o;
        smelt_plan_options_default(&o);
        o.threads = 2;
        smelt_status st = smelt_plan_compile(ctx, g, &o, &p);
        if (st == SMELT_OK)
            st = smelt_plan_run(ctx, p, &x, 1, y, 2);
        sm_alloc_fail_after(-1);
        ok = st == SMELT_OK;
        if (!ok)
            assert_int_equal(st, SMELT_ERR_NOMEM);
        smelt_tensor_free(y[0]);
        smelt_tensor_free(y[1]);
        smelt_plan_free(p);
    }
    assert_true(ok);
    smelt_tensor_free(x);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Counts plan steps whose kernel is `kernel`. */
static int count_kernel(const smelt_plan_t *p, const char *kernel)
{
    int n = 0;
    for (int i = 0; i < smelt_plan_num_steps(p); i++) {
        smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
        assert_int_equal(smelt_plan_step(p, i, &si), SMELT_OK);
        n += !strcmp(si.kernel, kernel);
    }
    return n;
}

/* A FusedElementwise runs as its body's steps, over arena buffers: no
 * dynamic step; a return that is a parameter is copied. */
static const char *fused =
    "graph f(%x: f32[3,5], %y: f32[3,5]) {\n"
    "  %shape: i64[1] = const [15]\n"
    "  %a: f32[3,5], %b: f32[3,5], %c: f32[3,5] = FusedElementwise(%x, %y) "
    "body(%p: f32[3,5], %q: f32[3,5]) {\n"
    "    %k: f32[] = const 0.5\n"
    "    %t: f32[3,5] = Mul(%p, %q)\n"
    "    %u: f32[3,5] = Mul(%t, %k)\n"
    "    %v: f32[3,5] = Sub(%u, %p)\n"
    "    return %u, %v, %p\n"
    "  }\n"
    "  %r: f32[15] = Reshape(%b, %shape)\n"
    "  %s: f32[15] = Neg(%r)\n"
    "  return %a, %s, %c\n"
    "}\n";

static void test_fused_and_views(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = tu_parse(ctx, fused);
    smelt_plan_t *p = compile(ctx, g, 0, 1);
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    assert_int_equal(st.dynamic_steps, 0);
    assert_int_equal(count_kernel(p, "copy"), 1); /* return %p */
    assert_int_equal(count_kernel(p, "view"), 1); /* the Reshape */
    assert_int_equal(count_kernel(p, "dynamic"), 0);
    int64_t d[2] = {3, 5};
    smelt_tensor_t *in[2] = {filled(2, d, 1), filled(2, d, -0.5f)};
    smelt_tensor_t *got[3] = {0}, *want[3] = {0};
    assert_int_equal(smelt_plan_run(ctx, p, in, 2, got, 3), SMELT_OK);
    assert_int_equal(smelt_graph_run_reference(ctx, g, in, 2, want, 3),
                     SMELT_OK);
    for (int j = 0; j < 3; j++) {
        assert_int_equal(smelt_tensor_numel(got[j]), 15);
        assert_memory_equal(smelt_tensor_data(got[j]),
                            smelt_tensor_data(want[j]), 15 * 4);
    }
    assert_int_equal(smelt_tensor_ndim(got[1]), 1);
    for (int j = 0; j < 3; j++) {
        smelt_tensor_free(got[j]);
        smelt_tensor_free(want[j]);
    }
    smelt_tensor_free(in[0]);
    smelt_tensor_free(in[1]);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* If runs as a control step (through the reference path); its results
 * land in planned buffers, and the stats say it allocates. */
static void test_control_step(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/if_else.ir"), &g),
                     SMELT_OK);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = 0;
    smelt_plan_t *p = NULL;
    assert_int_equal(smelt_plan_compile(ctx, g, &o, &p), SMELT_OK);
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    assert_true(st.dynamic_steps >= 1);
    assert_true(count_kernel(p, "control") >= 1);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- the thread pool -------------------------------------------------------
 */

typedef struct cover {
    int *hits;
    int max_tid;
    pthread_mutex_t mu;
} cover;

static void mark(void *arg, int64_t b, int64_t e, int tid)
{
    cover *c = arg;
    for (int64_t i = b; i < e; i++)
        __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&c->mu);
    if (tid > c->max_tid)
        c->max_tid = tid;
    pthread_mutex_unlock(&c->mu);
}

static void test_threadpool(void **state)
{
    (void)state;
    enum { N = 10007 };
    int *hits = calloc(N, sizeof *hits);
    cover c = {hits, 0, PTHREAD_MUTEX_INITIALIZER};
    sm_threadpool *tp = NULL;
    assert_int_equal(sm_threadpool_new(NULL, 4, &tp), SMELT_OK);
    assert_int_equal(sm_threadpool_size(tp), 4);
    for (int round = 0; round < 200; round++)
        sm_parallel_for(tp, N, round % 7 ? 13 : 0, mark, &c);
    for (int i = 0; i < N; i++)
        assert_int_equal(hits[i], 200);
    assert_true(c.max_tid < 4);
    /* NULL pool and one thread: inline, tid 0 */
    memset(hits, 0, N * sizeof *hits);
    c.max_tid = 0;
    sm_parallel_for(NULL, N, 5, mark, &c);
    sm_parallel_for(tp, 0, 5, mark, &c);
    for (int i = 0; i < N; i++)
        assert_int_equal(hits[i], 1);
    assert_int_equal(c.max_tid, 0);
    assert_int_equal(sm_threadpool_size(NULL), 1);
    sm_threadpool_free(tp);
    sm_threadpool_free(NULL);
    assert_int_equal(sm_threadpool_new(NULL, 5000, &tp), SMELT_ERR_INVALID_ARG);
    assert_null(tp);
    free(hits);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena_reuse),
        cmocka_unit_test(test_threads_share_plan),
        cmocka_unit_test(test_no_alloc_when_running),
        cmocka_unit_test(test_symbolic_dims),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_fused_and_views),
        cmocka_unit_test(test_control_step),
        cmocka_unit_test(test_threadpool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
