/*
 * test_memplan.c - the in-place marks and the liveness-based memory plan.
 *
 * Exact figures on a chain (two alternating buffers, or one in place),
 * the in-place rule's refusals, and an exhaustive check on many graphs
 * (hand-made ones with sub-blocks and several outputs, random DAGs): every
 * entry's lifetime is recomputed naively, and no two entries whose
 * lifetimes overlap share a byte unless one took the other's buffer in
 * place as it died.
 */
#include "fusion_util.h"

#include "core/alloc.h"
#include "ir/shape_util.h"
#include "passes/memplan.h"

/* The last position that reads v: a naive walk over every node (and
 * everything inside its sub-blocks) of the top block. */
static int reads(const sm_block *b, const sm_value *v)
{
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == v)
                return 1;
        for (int k = 0; k < n->n_blocks; k++)
            if (reads(n->blocks[k], v))
                return 1;
    }
    for (int i = 0; i < b->n_ret; i++)
        if (b->ret[i] == v)
            return 1;
    return 0;
}

static int naive_last(const sm_graph *g, const sm_value *v, int first)
{
    const sm_block *top = g->top;
    for (int i = 0; i < top->n_ret; i++)
        if (top->ret[i] == v)
            return top->n_nodes;
    int last = first;
    for (int j = 0; j < top->n_nodes; j++) {
        const sm_node *n = top->nodes[j];
        int used = 0;
        for (int k = 0; k < n->n_in; k++)
            used |= n->in[k] == v;
        for (int k = 0; k < n->n_blocks; k++)
            used |= reads(n->blocks[k], v);
        if (used)
            last = j;
    }
    return last;
}

/* The plan of g is sound: lifetimes match the naive ones, sizes fit the
 * types, everything lies below the peak, and entries that are live at
 * once occupy disjoint bytes unless one reuses the other in place. */
static void check_plan(const sm_graph *g, const sm_memplan *p)
{
    int64_t total = 0, top = 0;
    for (int i = 0; i < p->n; i++) {
        const sm_mem_entry *e = &p->e[i];
        assert_true(e->v->def && e->v->def->owner == g->top);
        assert_int_equal(g->top->nodes[e->first], e->v->def);
        assert_int_equal(e->last, naive_last(g, e->v, e->first));
        assert_true(e->size >= (int64_t)sm_type_bytes(&e->v->type));
        assert_true(e->size % SM_MEM_ALIGN == 0 && e->offset >= 0);
        assert_true(e->offset % SM_MEM_ALIGN == 0);
        total += e->size;
        if (e->offset + e->size > top)
            top = e->offset + e->size;
    }
    assert_int_equal(total, p->total_bytes);
    assert_int_equal(top, p->peak_bytes);
    for (int i = 0; i < p->n; i++)
        for (int j = i + 1; j < p->n; j++) {
            const sm_mem_entry *a = &p->e[i], *b = &p->e[j];
            int live = a->first <= b->last && b->first <= a->last;
            int apart = a->offset + a->size <= b->offset ||
                        b->offset + b->size <= a->offset || !a->size ||
                        !b->size;
            if (!live || apart)
                continue;
            /* sharing is only allowed as an in-place hand-over: b takes
             * the buffer exactly when the value before it dies */
            int handover = a->buffer == b->buffer && a->offset == b->offset &&
                           (b->inplace || a->inplace);
            if (!handover)
                fail_msg("%%%s [%d, %d] at %lld and %%%s [%d, %d] at %lld "
                         "overlap",
                         a->v->name, a->first, a->last, (long long)a->offset,
                         b->v->name, b->first, b->last, (long long)b->offset);
        }
    /* in a hand-over chain lifetimes meet at one position only */
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < p->n; j++)
            if (i != j && p->e[i].buffer == p->e[j].buffer &&
                p->e[i].first < p->e[j].first)
                assert_true(p->e[i].last <= p->e[j].first);
}

static sm_memplan plan_of(const sm_graph *g)
{
    sm_memplan p;
    smelt_ctx_t *ctx = smelt_ctx_init();
    assert_int_equal(sm_memplan_build(ctx, g, &p), SMELT_OK);
    smelt_ctx_free(ctx);
    check_plan(g, &p);
    return p;
}

static const char *chain =
    "graph chain(%x: f32[64,64]) {\n"
    "  %a = Relu(%x)\n  %b = Neg(%a)\n  %c = Exp(%b)\n  %d = Neg(%c)\n"
    "  %e = Sigmoid(%d)\n  %f = Tanh(%e)\n  return %f\n}\n";

/* Six 16 KiB values: two buffers alternate; in place, one is enough. */
static void test_chain(void **state)
{
    (void)state;
    sm_graph *g = fu_parse(chain);
    sm_memplan p = plan_of(g);
    assert_int_equal(p.n, 6);
    assert_int_equal(p.total_bytes, 6 * 16384);
    assert_int_equal(p.peak_bytes, 2 * 16384);
    assert_int_equal(p.inplace, 0);
    sm_memplan_free(&p);
    sm_pass_report rep;
    fu_passes(g, "inplace,memplan", 0, &rep);
    assert_int_equal(rep.steps[1].stats.peak_bytes, 16384);
    assert_int_equal(rep.steps[1].stats.total_bytes, 6 * 16384);
    assert_non_null(strstr(rep.steps[1].stats.log, "planned peak 16384 bytes"));
    sm_pass_report_free(&rep);
    /* Relu reads the graph input: it may not write over it */
    assert_int_equal(g->top->nodes[0]->inplace, 0);
    for (int j = 1; j < 6; j++)
        assert_int_equal(g->top->nodes[j]->inplace, 1);
    p = plan_of(g);
    assert_int_equal(p.inplace, 5);
    assert_int_equal(p.peak_bytes, 16384);
    char *text;
    assert_int_equal(sm_memplan_text(NULL, &p, &text), SMELT_OK);
    assert_non_null(strstr(text, "peak 16384 bytes, total 98304 bytes"));
    assert_non_null(strstr(text, "%f"));
    assert_non_null(strstr(text, "in place"));
    sm_free(text);
    sm_memplan_free(&p);
    sm_graph_free(g);
}

/* Where the in-place rule says no: a value read later, a value the graph
 * returns, a smaller (broadcast) input, a constant, a non-elementwise op;
 * marks that went stale are ignored by the plan. */
static void test_inplace_rules(void **state)
{
    (void)state;
    sm_graph *g = fu_parse(
        "graph r(%x: f32[4,4], %v: f32[4]) {\n"
        "  %k: f32[4,4] = const [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0, 1.0, "
        "2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]\n"
        "  %a = Relu(%x)\n"       /* 0: graph input */
        "  %b = Neg(%a)\n"        /* 1: a is read again by 3 */
        "  %c = Add(%v, %k)\n"    /* 2: v input, k constant */
        "  %d = Mul(%a, %b)\n"    /* 3: a dies here: yes (input 0) */
        "  %e = Exp(%d)\n"        /* 4: d is returned */
        "  %s = Relu(%v)\n"       /* 5: f32[4] */
        "  %t = Add(%s, %e)\n"    /* 6: s is smaller; e dies: input 1 */
        "  %m = MatMul(%t, %t)\n" /* 7: not elementwise */
        "  return %d, %m, %c\n}\n");
    fu_passes(g, "inplace", 0, NULL);
    static const int want[] = {0, 0, 0, 1, 0, 0, 2, 0};
    for (int j = 0; j < 8; j++)
        if (g->top->nodes[j]->inplace != want[j])
            fail_msg("node %d: inplace %d, expected %d", j,
                     g->top->nodes[j]->inplace, want[j]);
    /* a stale mark (Neg on a value read later) is not honoured */
    g->top->nodes[1]->inplace = 1;
    sm_memplan p = plan_of(g);
    assert_int_equal(p.inplace, 2);
    sm_memplan_free(&p);
    sm_graph_free(g);
}

/* Liveness through sub-blocks and several outputs; unknown sizes are left
 * out and counted. */
static void test_subblocks_and_unknown(void **state)
{
    (void)state;
    sm_graph *g = fu_parse(
        "graph s(%x: f32[8,8], %c: bool[]) {\n"
        "  %a = Relu(%x)\n  %b = Neg(%x)\n  %p, %q = Split(%b) {axis = 0, "
        "num_outputs = 2}\n  %z = Exp(%x)\n"
        "  %r = If(%c) then_branch() {\n    %t = Add(%a, %a)\n"
        "    return %t\n  } else_branch() {\n    return %z\n  }\n"
        "  %w = Neg(%p)\n  return %r, %w\n}\n");
    sm_memplan p = plan_of(g);
    assert_int_equal(p.n, 7);
    assert_int_equal(p.unplanned, 0);
    /* %a and %z are read inside the If at position 4 */
    for (int i = 0; i < p.n; i++)
        if (!strcmp(p.e[i].v->name, "a") || !strcmp(p.e[i].v->name, "z"))
            assert_int_equal(p.e[i].last, 4);
    sm_memplan_free(&p);
    sm_graph_free(g);
    g = fu_parse("graph u(%x: f32[batch,4]) {\n  %a = Relu(%x)\n"
                 "  %b = Neg(%a)\n  return %b\n}\n");
    p = plan_of(g);
    assert_int_equal(p.n, 0);
    assert_int_equal(p.unplanned, 2);
    assert_int_equal(p.peak_bytes, 0);
    sm_memplan_free(&p);
    sm_graph_free(g);
}

/* A random DAG of elementwise and broadcasting ops over three shapes,
 * returning a random subset of its values. */
static char *random_dag(unsigned seed, int n)
{
    static const char *unary[] = {"Relu", "Neg", "Exp", "Tanh", "Sigmoid"};
    static const char *binary[] = {"Add", "Mul", "Sub", "Max"};
    char *t = malloc(65536);
    assert_non_null(t);
    size_t k = (size_t)sprintf(t, "graph dag(%%v0: f32[3,4,8], %%v1: f32[4,8], "
                                  "%%v2: f32[8]) {\n");
    unsigned x = seed * 2654435761u + 7;
#define NEXT() (x = x * 1103515245u + 12345u, (x >> 16) & 0x7fff)
    for (int i = 3; i < n + 3; i++) {
        int a = (int)(NEXT() % (unsigned)i), b = (int)(NEXT() % (unsigned)i);
        if (NEXT() % 3 == 0) {
            k += (size_t)sprintf(t + k, "  %%v%d = %s(%%v%d)\n", i,
                                 unary[NEXT() % 5], a);
        } else {
            k += (size_t)sprintf(t + k, "  %%v%d = %s(%%v%d, %%v%d)\n", i,
                                 binary[NEXT() % 4], a, b);
        }
    }
    k += (size_t)sprintf(t + k, "  return %%v%d", n + 2);
    for (int i = 3; i < n + 2; i++)
        if (NEXT() % 7 == 0)
            k += (size_t)sprintf(t + k, ", %%v%d", i);
    sprintf(t + k, "\n}\n");
#undef NEXT
    return t;
}

/* Exhaustive checks over many random graphs, without and with in-place
 * marks; sharing must actually save memory on graphs this size. */
static void test_random_dags(void **state)
{
    (void)state;
    int shared = 0;
    for (unsigned seed = 1; seed <= 40; seed++) {
        char *text = random_dag(seed, 40);
        sm_graph *g = fu_parse(text);
        sm_memplan p = plan_of(g);
        assert_true(p.peak_bytes < p.total_bytes);
        sm_memplan_free(&p);
        fu_passes(g, "inplace", 0, NULL);
        p = plan_of(g);
        assert_true(p.peak_bytes <= p.total_bytes);
        shared += p.inplace;
        sm_memplan_free(&p);
        sm_graph_free(g);
        free(text);
    }
    assert_true(shared > 40); /* the hand-over case is exercised */
}

/* The pass writes the plan into the debug dump. */
static void test_dump(void **state)
{
    (void)state;
    char dir[] = "/tmp/smelt_memplan_XXXXXX";
    assert_non_null(mkdtemp(dir));
    sm_graph *g = fu_parse(chain);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_pass_options opt;
    sm_pass_options_default(&opt);
    opt.debug_dir = dir;
    const sm_pass_info *list[2] = {sm_pass_find("inplace"),
                                   sm_pass_find("memplan")};
    assert_int_equal(sm_pass_run(ctx, g, &opt, list, 2, NULL), SMELT_OK);
    char path[256];
    snprintf(path, sizeof path, "%s/002-memplan.plan.txt", dir);
    char *text = tu_read_file(path, NULL);
    if (!text)
        fail_msg("no %s", path);
    assert_non_null(strstr(text, "# memory plan: 6 values, peak 16384"));
    free(text);
    smelt_ctx_free(ctx);
    sm_graph_free(g);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_inplace_rules),
        cmocka_unit_test(test_subblocks_and_unknown),
        cmocka_unit_test(test_random_dags),
        cmocka_unit_test(test_dump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
