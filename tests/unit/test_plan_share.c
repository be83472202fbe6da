/*
 * test_plan_share.c - the plan's memory decisions (plan/plan.c): which
 * outputs are written in place over a dying input, which buffers share
 * arena bytes, and the figures smelt_plan_get_stats reports for them.
 *
 * Exact figures on chains (one buffer in place; two alternating ones
 * where no kernel may write in place), the in-place rule's refusals op by
 * op, liveness through an If's branches, and an exhaustive check on many
 * random graphs: every slot's lifetime is recomputed naively, buffers
 * live at once never share a byte unless one took the other over in
 * place (or as a view) where it died, workspaces overlap nothing live,
 * the shared-buffer count is recounted pair by pair, and the plan still
 * computes what the reference interpreter does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "plan/plan.h"

static smelt_plan_t *compile_text(smelt_ctx_t *ctx, const char *text,
                                  int reference, smelt_graph_t **g)
{
    assert_int_equal(smelt_graph_parse(ctx, text, strlen(text), "t.ir", g),
                     SMELT_OK);
    smelt_plan_options o;
    smelt_plan_options_default(&o);
    o.level = 0; /* the graph as written */
    o.reference = reference;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile(ctx, *g, &o, &p) != SMELT_OK)
        fail_msg("compile: %s\n%s", smelt_ctx_error(ctx), text);
    return p;
}

/* The slot of the value named `name`. */
static int slot_named(const sm_plan *p, const char *name)
{
    for (int s = 0; s < p->n_slots; s++)
        if (!strcmp(p->slots[s].v->name, name))
            return s;
    fail_msg("no slot %%%s", name);
    return -1;
}

static int root_of(const sm_plan *p, int s)
{
    while (p->slots[s].share >= 0)
        s = p->slots[s].share;
    return s;
}

/* ---- soundness ------------------------------------------------------------
 */

/* Whether block b (and its sub-blocks) reads slot s. */
static int block_reads(const sm_plan *p, const sm_block *b, int s)
{
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] && p->slot_of[n->in[k]->id] == s)
                return 1;
        for (int k = 0; k < n->n_blocks; k++)
            if (block_reads(p, n->blocks[k], s))
                return 1;
    }
    for (int i = 0; i < b->n_ret; i++)
        if (p->slot_of[b->ret[i]->id] == s)
            return 1;
    return 0;
}

/* The steps that write slot s first and read it last, by a walk over
 * every step (and every control step's branches). */
static void naive_life(const sm_plan *p, int s, int *first, int *last)
{
    *first = *last = -1;
    for (int j = 0; j < p->n_steps; j++) {
        const sm_step *st = &p->steps[j];
        for (int i = 0; i < st->n_out; i++)
            if (st->out[i] == s && *first < 0)
                *first = j;
        int used = 0;
        for (int i = 0; i < st->n_in; i++)
            used |= st->in[i] == s;
        for (int k = 0; st->kind == SM_STEP_CONTROL && k < st->node->n_blocks;
             k++)
            used |= block_reads(p, st->node->blocks[k], s);
        if (used)
            *last = j;
    }
    if (*last < *first)
        *last = *first;
}

/* A buffer of the arena: a root slot or a step's workspace. */
typedef struct span {
    int64_t off, size;
    int first, last; /* every sharer's lifetime, joined */
    int slot;        /* -1: workspace of step `first` */
} span;

static int spans_of(const sm_plan *p, span *sp)
{
    int n = 0;
    for (int s = 0; s < p->n_slots; s++) {
        const sm_slot *sl = &p->slots[s];
        if (sl->kind != SM_SLOT_ARENA || sl->share >= 0 || !sl->nbytes)
            continue;
        span *a = &sp[n++];
        *a = (span){sl->offset, (int64_t)sl->nbytes, sl->first, sl->last, s};
        for (int t = 0; t < p->n_slots; t++)
            if (p->slots[t].kind == SM_SLOT_ARENA && root_of(p, t) == s) {
                if (p->slots[t].first < a->first)
                    a->first = p->slots[t].first;
                if (p->slots[t].last > a->last)
                    a->last = p->slots[t].last;
            }
    }
    for (int j = 0; j < p->n_steps; j++)
        if (p->steps[j].ws_bytes)
            sp[n++] = (span){p->steps[j].ws_offset,
                             (int64_t)p->steps[j].ws_bytes, j, j, -1};
    return n;
}

/* The plan's memory is sound and its counts are right. */
static void check_memory(const sm_plan *p)
{
    int inplace = 0;
    for (int s = 0; s < p->n_slots; s++) {
        const sm_slot *sl = &p->slots[s];
        int first, last;
        naive_life(p, s, &first, &last);
        if (sl->kind == SM_SLOT_ARENA && first >= 0) {
            if (sl->first != first || sl->last != last)
                fail_msg("%%%s lives [%d, %d], naively [%d, %d]", sl->v->name,
                         sl->first, sl->last, first, last);
            assert_true(sl->offset >= 0 && sl->offset % 64 == 0);
            assert_true(sl->offset + (int64_t)sl->nbytes <= p->arena_bytes);
        }
        if (sl->kind != SM_SLOT_ARENA || sl->share < 0)
            continue;
        /* a sharer is a view, or written in place by a kernel that allows
         * it over a value whose buffer dies at that step */
        assert_int_equal(sl->offset, p->slots[root_of(p, s)].offset);
        const sm_step *w = &p->steps[sl->first];
        if (w->kind == SM_STEP_VIEW)
            continue;
        assert_int_equal(w->kind, SM_STEP_KERNEL);
        assert_true(w->k->flags & SM_CPU_KERNEL_INPLACE);
        for (int t = 0; t < p->n_slots; t++)
            if (t != s && p->slots[t].kind == SM_SLOT_ARENA &&
                root_of(p, t) == sl->share && p->slots[t].first < sl->first &&
                p->slots[t].last > sl->first)
                fail_msg("%%%s is written over %%%s, which is read later",
                         sl->v->name, p->slots[t].v->name);
        inplace++;
    }
    assert_int_equal(inplace, p->n_inplace);
    span *sp = calloc((size_t)(p->n_slots + p->n_steps) + 1, sizeof *sp);
    assert_non_null(sp);
    int n = spans_of(p, sp), shared = 0;
    for (int a = 0; a < n; a++) {
        int overlaps = 0;
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            int bytes = sp[a].off < sp[b].off + sp[b].size &&
                        sp[b].off < sp[a].off + sp[a].size;
            int live = sp[a].first <= sp[b].last && sp[b].first <= sp[a].last;
            overlaps |= bytes;
            if (bytes && live)
                fail_msg("buffers of %s and %s overlap while both live",
                         sp[a].slot >= 0 ? p->slots[sp[a].slot].v->name : "ws",
                         sp[b].slot >= 0 ? p->slots[sp[b].slot].v->name : "ws");
        }
        shared += overlaps;
    }
    assert_int_equal(n, p->n_buffers);
    assert_int_equal(shared, p->n_shared);
    free(sp);
}

/* Runs p and the reference interpreter on g with the same inputs. */
static void check_outputs(smelt_ctx_t *ctx, const smelt_graph_t *g,
                          const smelt_plan_t *p, unsigned seed)
{
    enum { MAX = 16 };
    smelt_tensor_t *in[MAX] = {0}, *want[MAX] = {0}, *got[MAX] = {0};
    int ni = smelt_plan_num_inputs(p), no = smelt_plan_num_outputs(p);
    assert_true(ni <= MAX && no <= MAX);
    for (int i = 0; i < ni; i++) {
        int64_t dims[SMELT_MAX_DIMS];
        int nd = smelt_plan_input_ndim(p, i);
        for (int d = 0; d < nd; d++)
            dims[d] = smelt_plan_input_dim(p, i, d);
        assert_int_equal(smelt_tensor_init(ctx, smelt_plan_input_dtype(p, i),
                                           nd, dims, &in[i]),
                         SMELT_OK);
        float *f = smelt_tensor_data(in[i]);
        for (int64_t k = 0; k < smelt_tensor_numel(in[i]); k++) {
            seed = seed * 1664525u + 1013904223u;
            f[k] = (float)((seed >> 9) & 0xffff) / 16384.0f - 2.0f;
        }
    }
    assert_int_equal(smelt_graph_run_reference(ctx, g, in, ni, want, no),
                     SMELT_OK);
    if (smelt_plan_run(ctx, p, in, ni, got, no) != SMELT_OK)
        fail_msg("run: %s", smelt_ctx_error(ctx));
    for (int i = 0; i < no; i++) {
        assert_int_equal(smelt_tensor_numel(got[i]),
                         smelt_tensor_numel(want[i]));
        const float *a = smelt_tensor_data(got[i]);
        const float *b = smelt_tensor_data(want[i]);
        for (int64_t k = 0; k < smelt_tensor_numel(want[i]); k++)
            if (!(fabsf(a[k] - b[k]) <= 1e-5f * (1 + fabsf(b[k]))) &&
                !(isnan(a[k]) && isnan(b[k])))
                fail_msg("output %d element %lld: %g, reference %g", i,
                         (long long)k, (double)a[k], (double)b[k]);
    }
    for (int i = 0; i < MAX; i++) {
        smelt_tensor_free(in[i]);
        smelt_tensor_free(want[i]);
        smelt_tensor_free(got[i]);
    }
}

/* ---- exact decisions -------------------------------------------------------
 */

/* Six elementwise ops over 16 KiB: with kernels that may write in place
 * the five intermediates hand one buffer down the chain; on reference
 * kernels (which get zeroed outputs, so never in place) two buffers
 * alternate and all five share one with another value. */
static void test_chain(void **state)
{
    (void)state;
    static const char *chain =
        "graph chain(%x: f32[64,64]) {\n"
        "  %a = Relu(%x)\n  %b = Neg(%a)\n  %c = Exp(%b)\n  %d = Neg(%c)\n"
        "  %e = Sigmoid(%d)\n  %f = Tanh(%e)\n  return %f\n}\n";
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = compile_text(ctx, chain, 0, &g);
    check_memory(p);
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    assert_int_equal(s.unshared_bytes, 5 * 16384);
    assert_int_equal(s.arena_bytes, 16384);
    assert_int_equal(s.inplace, 4);
    assert_int_equal(s.arena_buffers, 1);
    assert_int_equal(s.shared_buffers, 0);
    for (const char *v = "bcde"; *v; v++) {
        char name[2] = {*v, 0};
        assert_int_equal(root_of(p, slot_named(p, name)), slot_named(p, "a"));
    }
    char *text = NULL;
    assert_int_equal(smelt_plan_print(ctx, p, &text), SMELT_OK);
    assert_non_null(strstr(text, "bytes, 0 of 1 buffers shared, 4 in place\n"));
    assert_non_null(strstr(text, "%b:f32[64,64] @0 (shared) [1..2]"));
    smelt_string_free(text);
    check_outputs(ctx, g, p, 1);
    smelt_plan_free(p);
    smelt_graph_free(g);

    p = compile_text(ctx, chain, 1, &g);
    check_memory(p);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    assert_int_equal(s.arena_bytes, 2 * 16384);
    assert_int_equal(s.inplace, 0);
    assert_int_equal(s.arena_buffers, 5);
    assert_int_equal(s.shared_buffers, 5);
    assert_int_equal(p->slots[slot_named(p, "a")].offset,
                     p->slots[slot_named(p, "c")].offset);
    check_outputs(ctx, g, p, 2);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Kernels that may not write in place (Softmax reads a whole row after
 * writing part of it) still share: values whose lives do not meet take
 * the same bytes. */
static void test_sharing_without_in_place(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = compile_text(
        ctx,
        "graph sm(%x: f32[64,64]) {\n"
        "  %a = Softmax(%x)\n  %b = Softmax(%a)\n  %c = Softmax(%b)\n"
        "  %d = Softmax(%c)\n  %e = Softmax(%d)\n  return %e\n}\n",
        0, &g);
    check_memory(p);
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    assert_int_equal(smelt_plan_get_stats(p, &s), SMELT_OK);
    assert_int_equal(s.kernel_steps, 5);
    assert_int_equal(s.inplace, 0);
    assert_int_equal(s.unshared_bytes, 4 * 16384);
    assert_int_equal(s.arena_bytes, 2 * 16384);
    assert_int_equal(s.arena_buffers, 4);
    assert_int_equal(s.shared_buffers, 4);
    check_outputs(ctx, g, p, 3);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Where the in-place rule says yes and no, op by op. */
static void test_in_place_rules(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = compile_text(
        ctx,
        "graph r(%x: f32[4,4], %v: f32[4]) {\n"
        "  %k: f32[4,4] = const [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0, "
        "1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]\n"
        "  %a = Relu(%x)\n"          /* x is the caller's: no */
        "  %b = Neg(%a)\n"           /* a is read again by d: no */
        "  %c = Add(%v, %k)\n"       /* an input and a constant: no */
        "  %d = Mul(%a, %b)\n"       /* a dies here: yes */
        "  %e = Exp(%d)\n"           /* yes */
        "  %s = Relu(%v)\n"          /* no: v is an input */
        "  %t = Add(%s, %e)\n"       /* s is smaller; e dies: yes */
        "  %g = Greater(%t, %k)\n"   /* reference kernel, bool: no */
        "  %u = Neg(%t)\n"           /* t dies: yes */
        "  %w = Where(%g, %u, %k)\n" /* u dies: yes (g is bool) */
        "  %f = Floor(%w)\n"         /* reference kernel: no */
        "  %m = MatMul(%f, %f)\n"    /* no kernel flag; an output */
        "  return %m, %c\n}\n",
        0, &g);
    check_memory(p);
    int a = slot_named(p, "a");
    static const char *yes[] = {"d", "e", "t", "u", "w"};
    static const char *no[] = {"a", "b", "s", "g", "f"};
    for (size_t i = 0; i < 5; i++) {
        if (root_of(p, slot_named(p, yes[i])) != a)
            fail_msg("%%%s is not written over %%a", yes[i]);
        if (p->slots[slot_named(p, no[i])].share >= 0)
            fail_msg("%%%s is written in place", no[i]);
    }
    assert_int_equal(p->n_inplace, 5);
    assert_int_equal(p->slots[slot_named(p, "c")].kind, SM_SLOT_OUTPUT);
    check_outputs(ctx, g, p, 4);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* Values an If's branches read live until the If; a plan needs concrete
 * shapes and says which input lacks them. */
static void test_control_and_symbolic(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_plan_t *p =
        compile_text(ctx,
                     "graph s(%x: f32[8,8], %c: bool[]) {\n"
                     "  %a = Relu(%x)\n  %b = Neg(%x)\n  %z = Exp(%x)\n"
                     "  %r = If(%c) then_branch() {\n    %t = Add(%a, %a)\n"
                     "    return %t\n  } else_branch() {\n    return %z\n  }\n"
                     "  %w = Neg(%b)\n  return %r, %w\n}\n",
                     0, &g);
    check_memory(p);
    int at = -1;
    for (int j = 0; j < p->n_steps; j++)
        if (p->steps[j].kind == SM_STEP_CONTROL)
            at = j;
    assert_true(at >= 0);
    assert_int_equal(p->slots[slot_named(p, "a")].last, at);
    assert_int_equal(p->slots[slot_named(p, "z")].last, at);
    smelt_plan_free(p);
    smelt_graph_free(g);

    const char *sym = "graph u(%x: f32[batch,4]) {\n  %a = Relu(%x)\n"
                      "  return %a\n}\n";
    assert_int_equal(smelt_graph_parse(ctx, sym, strlen(sym), "u.ir", &g),
                     SMELT_OK);
    assert_int_equal(smelt_plan_compile(ctx, g, NULL, &p), SMELT_ERR_SHAPE);
    assert_null(p);
    assert_non_null(strstr(smelt_ctx_error(ctx), "input 'x' is f32[batch,4]"));
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- random graphs ---------------------------------------------------------
 */

/* A random DAG of elementwise, broadcasting and select ops over three
 * shapes, returning a random subset of its values. malloc'd. */
static char *random_dag(unsigned seed, int n)
{
    static const char *unary[] = {"Relu", "Neg", "Exp", "Tanh", "Floor"};
    static const char *binary[] = {"Add", "Mul", "Sub", "Max"};
    char *t = malloc(65536);
    assert_non_null(t);
    size_t k = (size_t)sprintf(t, "graph dag(%%v0: f32[3,4,8], %%v1: f32[4,8], "
                                  "%%v2: f32[8]) {\n");
    unsigned x = seed * 2654435761u + 7;
#define NEXT() (x = x * 1103515245u + 12345u, (x >> 16) & 0x7fff)
    for (int i = 3; i < n + 3; i++) {
        int a = (int)(NEXT() % (unsigned)i), b = (int)(NEXT() % (unsigned)i);
        unsigned kind = NEXT() % 5;
        if (kind == 0)
            k += (size_t)sprintf(t + k, "  %%v%d = %s(%%v%d)\n", i,
                                 unary[NEXT() % 5], a);
        else if (kind == 1)
            k += (size_t)sprintf(t + k,
                                 "  %%m%d = Greater(%%v%d, %%v%d)\n"
                                 "  %%v%d = Where(%%m%d, %%v%d, %%v%d)\n",
                                 i, a, b, i, i, a, b);
        else
            k += (size_t)sprintf(t + k, "  %%v%d = %s(%%v%d, %%v%d)\n", i,
                                 binary[NEXT() % 4], a, b);
    }
    k += (size_t)sprintf(t + k, "  return %%v%d", n + 2);
    for (int i = 3; i < n + 2; i++)
        if (NEXT() % 7 == 0)
            k += (size_t)sprintf(t + k, ", %%v%d", i);
    sprintf(t + k, "\n}\n");
#undef NEXT
    return t;
}

/* Sound plans with the right counts over many random graphs, computing
 * what the reference does; in place and sharing both happen, Where's
 * among it. */
static void test_random_dags(void **state)
{
    (void)state;
    int inplace = 0, where = 0;
    int64_t arena = 0, unshared = 0;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (unsigned seed = 1; seed <= 40; seed++) {
        char *text = random_dag(seed, 40);
        smelt_graph_t *g = NULL;
        smelt_plan_t *p = compile_text(ctx, text, 0, &g);
        check_memory(p);
        check_outputs(ctx, g, p, seed);
        inplace += p->n_inplace;
        arena += p->arena_bytes;
        unshared += p->unshared_bytes;
        for (int j = 0; j < p->n_steps; j++)
            where += p->steps[j].node->op == SM_OP_Where &&
                     p->slots[p->steps[j].out[0]].share >= 0;
        smelt_plan_free(p);
        smelt_graph_free(g);
        free(text);
    }
    assert_true(inplace > 40);
    assert_true(where > 5);
    assert_true(arena * 2 < unshared);
    smelt_ctx_free(ctx);
}

/* A fused region expanded into steps: its output slot is made before the
 * body's values, so an in-place body step gives the region's output a
 * root of higher slot index. The root's buffer must then live as long as
 * the region's output is read (softmax as ONNX expands it: the sum below
 * once took the exponentials' bytes while Div still read them). */
static void test_expanded_region_in_place(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    smelt_plan_t *p = compile_text(
        ctx,
        "graph sm(%x: f32[3,4,5]) {\n"
        "  %axes: i64[1] = const [0]\n"
        "  %m: f32[1,4,5] = ReduceMax(%x) {keepdims = 1, axes = [0]}\n"
        "  %e: f32[3,4,5] = FusedElementwise(%x, %m) body(%xi: f32[3,4,5], "
        "%mi: f32[1,4,5]) {\n"
        "    %d: f32[3,4,5] = Sub(%xi, %mi)\n"
        "    %ed: f32[3,4,5] = Exp(%d)\n"
        "    return %ed\n"
        "  }\n"
        "  %s: f32[1,4,5] = ReduceSum(%e, %axes) {keepdims = 1}\n"
        "  %y: f32[3,4,5] = Div(%e, %s)\n"
        "  return %y\n}\n",
        0, &g);
    check_memory(p);
    check_outputs(ctx, g, p, 11);
    smelt_plan_free(p);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_sharing_without_in_place),
        cmocka_unit_test(test_in_place_rules),
        cmocka_unit_test(test_expanded_region_in_place),
        cmocka_unit_test(test_control_and_symbolic),
        cmocka_unit_test(test_random_dags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
