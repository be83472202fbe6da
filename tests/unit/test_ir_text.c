/*
 * test_ir_text.c - the IR text form (lexer, parser, printer), DOT export,
 * the file reader, the string builder and the string map.
 *
 * Every allocation of the library is counted through the allocator hook,
 * so each test also proves that what it made was freed, error paths
 * included, without needing a leak checker.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/file.h"
#include "core/strbuf.h"
#include "core/strmap.h"
#include "ir/ir.h"
#include "ir/lex.h"
#include "ir/text.h"

/* ---- counting allocator ------------------------------------------------ */

static long live_allocs;

static void *counting_alloc(void *user, void *ptr, size_t size)
{
    (void)user;
    if (size == 0) {
        if (ptr)
            live_allocs--;
        free(ptr);
        return NULL;
    }
    void *p = realloc(ptr, size);
    if (p && !ptr)
        live_allocs++;
    return p;
}

static int setup(void **state)
{
    (void)state;
    smelt_set_allocator(counting_alloc, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    smelt_set_allocator(NULL, NULL);
    return 0;
}

/* ---- helpers ----------------------------------------------------------- */

typedef struct file_list {
    char **paths;
    int n, cap;
} file_list;

static void list_add(file_list *l, const char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->paths = realloc(l->paths, sizeof(char *) * (size_t)l->cap);
        assert_non_null(l->paths);
    }
    l->paths[l->n] = strdup(path);
    assert_non_null(l->paths[l->n]);
    l->n++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.ir file under dir (recursively), skipping directories named
 * `skip` (NULL: none), sorted. */
static void collect_ir(const char *dir, const char *skip, file_list *l)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (!skip || strcmp(e->d_name, skip) != 0)
                collect_ir(path, skip, l);
            continue;
        }
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".ir") == 0)
            list_add(l, path);
    }
    closedir(d);
    qsort(l->paths, (size_t)l->n, sizeof(char *), cmp_str);
}

static void list_free(file_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
}

static char *read_or_fail(const char *path, size_t *len)
{
    char *s = tu_read_file(path, len);
    if (!s)
        fail_msg("cannot read %s", path);
    return s;
}

static sm_graph *parse_ok(smelt_ctx_t *ctx, const char *text)
{
    sm_graph *g = NULL;
    smelt_status s = smelt_graph_parse(ctx, text, strlen(text), "t.ir", &g);
    if (s != SMELT_OK)
        fail_msg("parse failed: %s", smelt_ctx_error(ctx));
    return g;
}

/* Parses text expecting SMELT_ERR_PARSE with a message holding both
 * fragments (the location "L:C" and the text). */
static void parse_fails(smelt_ctx_t *ctx, const char *text, const char *loc,
                        const char *msg)
{
    sm_graph *g = (sm_graph *)0x1;
    long before = live_allocs;
    smelt_status s = smelt_graph_parse(ctx, text, strlen(text), "t.ir", &g);
    assert_null(g);
    assert_int_equal(live_allocs, before);
    if (s != SMELT_ERR_PARSE || !strstr(smelt_ctx_error(ctx), loc) ||
        !strstr(smelt_ctx_error(ctx), msg))
        fail_msg("status %d, message '%s'; wanted '%s' and '%s'", (int)s,
                 smelt_ctx_error(ctx), loc, msg);
}

static sm_node *top_node(sm_graph *g, int i)
{
    assert_true(i < g->top->n_nodes);
    return g->top->nodes[i];
}

static sm_value *find(sm_graph *g, const char *name)
{
    sm_value *v = sm_graph_find_value(g, name);
    if (!v)
        fail_msg("no value %%%s", name);
    return v;
}

static uint32_t f32_bits(sm_tensor *t, int i)
{
    uint32_t u;
    memcpy(&u, (float *)t->data + i, 4);
    return u;
}

/* ---- structure of parsed graphs ---------------------------------------- */

static void test_tiny_structure(void **state)
{
    (void)state;
    long before = live_allocs;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g;
    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/tiny.ir"), &g),
                     SMELT_OK);
    assert_string_equal(smelt_graph_name(g), "tiny");
    assert_int_equal(smelt_graph_num_inputs(g), 2);
    assert_int_equal(smelt_graph_num_outputs(g), 1);
    assert_string_equal(smelt_graph_input_name(g, 0), "x");
    assert_string_equal(smelt_graph_input_name(g, 1), "c");
    assert_string_equal(smelt_graph_output_name(g, 0), "r");
    assert_null(smelt_graph_input_name(g, 2));
    assert_null(smelt_graph_output_name(g, -1));
    /* MatMul, LeakyRelu, Split, If at the top, Mul in then_branch */
    assert_int_equal(smelt_graph_num_nodes(g), 5);
    assert_int_equal(g->top->n_consts, 2);

    sm_value *x = g->top->params[0];
    assert_int_equal(x->type.dtype, SMELT_DTYPE_F32);
    assert_int_equal(x->type.ndim, 2);
    assert_string_equal(x->type.dims[0].sym, "batch");
    assert_true(x->type.dims[0].size < 0);
    assert_int_equal(x->type.dims[1].size, 4);
    sm_value *c = g->top->params[1];
    assert_int_equal(c->type.dtype, SMELT_DTYPE_BOOL);
    assert_int_equal(c->type.ndim, 0);

    sm_value *w = g->top->consts[0];
    assert_string_equal(w->name, "w");
    assert_int_equal(w->data->dtype, SMELT_DTYPE_F32);
    assert_int_equal(w->data->ndim, 2);
    assert_int_equal(w->data->dims[0], 4);
    assert_int_equal(w->data->dims[1], 2);
    for (int i = 0; i < 8; i++)
        assert_true(((float *)w->data->data)[i] == (float)(i + 1));
    sm_value *k = g->top->consts[1];
    assert_int_equal(k->data->ndim, 0);
    assert_true(((float *)k->data->data)[0] == 0.5f);

    sm_node *mm = top_node(g, 0);
    assert_int_equal(mm->op, SM_OP_MatMul);
    assert_string_equal(mm->name, "mm1");
    assert_int_equal(mm->n_in, 2);
    assert_ptr_equal(mm->in[0], x);
    assert_ptr_equal(mm->in[1], w);
    assert_string_equal(mm->out[0]->name, "h");
    /* the symbolic dim is shared, not copied per use */
    assert_ptr_equal(mm->out[0]->type.dims[0].sym, x->type.dims[0].sym);

    sm_node *lr = top_node(g, 1);
    assert_int_equal(lr->op, SM_OP_LeakyRelu);
    assert_null(lr->name);
    assert_int_equal(lr->n_attr, 1);
    assert_string_equal(lr->attrs[0].name, "alpha");
    assert_int_equal(lr->attrs[0].kind, SM_ATTR_FLOAT);
    assert_true(lr->attrs[0].v.f == 0.1);

    sm_node *sp = top_node(g, 2);
    assert_int_equal(sp->n_out, 2);
    assert_string_equal(sp->out[1]->name, "q");
    assert_int_equal(sp->out[1]->def_index, 1);
    assert_int_equal(sm_node_attr(sp, "axis")->kind, SM_ATTR_INT);
    assert_int_equal(sm_node_attr(sp, "axis")->v.i, 1);

    sm_node *nif = top_node(g, 3);
    assert_int_equal(nif->op, SM_OP_If);
    assert_int_equal(nif->n_blocks, 2);
    sm_block *th = nif->blocks[0], *el = nif->blocks[1];
    assert_string_equal(th->label, "then_branch");
    assert_string_equal(el->label, "else_branch");
    assert_ptr_equal(th->parent, nif);
    assert_int_equal(th->n_params, 0);
    assert_int_equal(th->n_nodes, 1);
    sm_node *mul = th->nodes[0];
    assert_int_equal(mul->op, SM_OP_Mul);
    assert_ptr_equal(mul->in[0], sp->out[0]); /* outer value */
    assert_ptr_equal(mul->in[1], k);
    assert_ptr_equal(th->ret[0], mul->out[0]);
    assert_int_equal(el->n_nodes, 0);
    assert_ptr_equal(el->ret[0], sp->out[1]);
    assert_ptr_equal(g->top->ret[0], nif->out[0]);
    assert_int_equal(nif->out[0]->type.dims[1].size, 1);

    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    assert_int_equal(live_allocs, before);
}

/* u16 / u32 / u64 literals: the full unsigned range parses and prints
 * back (u64 beyond INT64_MAX too), and values outside it are refused. */
static void test_unsigned_literals(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    const char *in = "graph g() {\n"
                     "  %a: u16[2] = const [0, 65535]\n"
                     "  %b: u32[] = const 4294967295\n"
                     "  %c: u64[2] = const [18446744073709551615, 7]\n"
                     "  return %a, %b, %c\n"
                     "}\n";
    sm_graph *g = parse_ok(ctx, in);
    assert_true(((uint16_t *)find(g, "a")->data->data)[1] == 65535);
    assert_true(((uint32_t *)find(g, "b")->data->data)[0] == UINT32_MAX);
    assert_true(((uint64_t *)find(g, "c")->data->data)[0] == UINT64_MAX);
    char *out;
    assert_int_equal(smelt_graph_print(ctx, g, &out), SMELT_OK);
    assert_non_null(strstr(out, "const [18446744073709551615, 7]"));
    assert_non_null(strstr(out, "const 4294967295"));
    smelt_string_free(out);
    smelt_graph_free(g);
    parse_fails(ctx, "graph g() {\n  %k: u16[] = const 65536\n  return %k\n}",
                "t.ir:2:21: error: ", "value 65536 is out of range for u16");
    parse_fails(ctx, "graph g() {\n  %k: u32[] = const -1\n  return %k\n}",
                "t.ir:2:21: error: ", "value -1 is out of range for u32");
    parse_fails(ctx, "graph g() {\n  %k: u64[] = const -1\n  return %k\n}",
                "t.ir:2:21: error: ", "out of range for u64");
    parse_fails(ctx,
                "graph g() {\n  %k: u64[] = const 18446744073709551616\n"
                "  return %k\n}",
                "t.ir:2:21: error: ", "out of range for u64");
    smelt_ctx_free(ctx);
}

static void test_constant_values(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g;
    assert_int_equal(
        smelt_graph_load(ctx, tu_path("graphs/consts_dtypes.ir"), &g),
        SMELT_OK);
    sm_tensor *f = find(g, "f32")->data;
    assert_true(((float *)f->data)[0] == 0.1f);
    assert_int_equal(f32_bits(f, 1), 0x80000000u); /* -0.0 */
    assert_true(isnan(((float *)f->data)[2]));
    assert_true(isinf(((float *)f->data)[3]) && ((float *)f->data)[3] > 0);
    assert_true(isinf(((float *)f->data)[4]) && ((float *)f->data)[4] < 0);
    assert_int_equal(f32_bits(f, 5), 0x7f7fffffu); /* FLT_MAX */
    assert_int_equal(f32_bits(f, 6), 1u);          /* smallest subnormal */
    sm_tensor *d = find(g, "f64")->data;
    assert_true(((double *)d->data)[0] == 0.1);
    assert_true(signbit(((double *)d->data)[1]));
    assert_true(((double *)d->data)[6] == 4.9406564584124654e-324);
    uint16_t *h = find(g, "f16")->data->data;
    assert_int_equal(h[0], 0x3c00);
    assert_int_equal(h[1], 0xc100); /* -2.5 */
    assert_int_equal(h[2], 0x7bff); /* 65504 */
    assert_int_equal(h[3], 0x0400); /* smallest normal */
    assert_int_equal(h[4], 0x0001); /* smallest subnormal */
    assert_int_equal(h[6], 0x8000);
    uint16_t *hs = find(g, "f16s")->data->data;
    assert_true((hs[0] & 0x7c00) == 0x7c00 && (hs[0] & 0x3ff));
    assert_int_equal(hs[1], 0x7c00);
    assert_int_equal(hs[2], 0xfc00);
    uint16_t *bf = find(g, "bf16")->data->data;
    assert_int_equal(bf[0], 0x3f80);
    assert_int_equal(bf[1], 0x4049); /* 3.140625 */
    assert_int_equal(bf[2], 0x8000);
    assert_int_equal(bf[3], 0x7f7f); /* largest bf16 */
    int8_t *i8 = find(g, "i8")->data->data;
    assert_int_equal(i8[0], -128);
    assert_int_equal(i8[1], 127);
    uint8_t *u8 = find(g, "u8")->data->data;
    assert_int_equal(u8[1], 255);
    int64_t *i64 = find(g, "i64")->data->data;
    assert_true(i64[0] == INT64_MIN && i64[1] == INT64_MAX);
    uint8_t *b = find(g, "b")->data->data;
    assert_true(b[0] == 1 && b[1] == 0 && b[2] == 0 && b[3] == 1);
    sm_tensor *e = find(g, "empty2")->data;
    assert_int_equal(e->ndim, 2);
    assert_int_equal(e->numel, 0);
    sm_tensor *one = find(g, "one")->data;
    assert_int_equal(one->ndim, 1);
    assert_true(((float *)one->data)[0] == 4.0f);
    assert_int_equal(*(int64_t *)find(g, "iscalar")->data->data, -7);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_attributes(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g;
    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/attrs.ir"), &g),
                     SMELT_OK);
    sm_node *conv = find(g, "conv")->def;
    assert_string_equal(conv->name, "conv0");
    assert_int_equal(conv->n_attr, 6);
    assert_string_equal(conv->attrs[0].name, "auto_pad"); /* text order */
    assert_int_equal(conv->attrs[0].kind, SM_ATTR_STRING);
    assert_string_equal(conv->attrs[0].v.s, "NOTSET");
    const sm_attr *pads = sm_node_attr(conv, "pads");
    assert_int_equal(pads->kind, SM_ATTR_INTS);
    assert_int_equal(pads->n, 4);
    /* an int where the schema wants a float becomes a float */
    const sm_attr *alpha = sm_node_attr(find(g, "lr")->def, "alpha");
    assert_int_equal(alpha->kind, SM_ATTR_FLOAT);
    assert_true(alpha->v.f == 1.0);
    const sm_attr *neg = sm_node_attr(find(g, "red")->def, "axes");
    assert_int_equal(neg->v.ints[0], -1);
    /* an empty list takes the schema's kind */
    const sm_attr *axes = sm_node_attr(find(g, "noax")->def, "axes");
    assert_int_equal(axes->kind, SM_ATTR_INTS);
    assert_int_equal(axes->n, 0);
    const sm_attr *fl = sm_node_attr(find(g, "kfs")->def, "value_floats");
    assert_int_equal(fl->kind, SM_ATTR_FLOATS);
    assert_true(fl->v.floats[0] == 1.0 && fl->v.floats[1] == 2.5);
    sm_node *k = find(g, "k")->def;
    assert_int_equal(k->n_in, 0);
    const sm_attr *t = sm_node_attr(k, "value");
    assert_int_equal(t->kind, SM_ATTR_TENSOR);
    assert_int_equal(t->v.t->dtype, SMELT_DTYPE_F32);
    assert_int_equal(t->v.t->numel, 4);
    assert_true(((float *)t->v.t->data)[1] == -2.0f);
    assert_true(isnan(((float *)t->v.t->data)[3]));
    const sm_attr *kt = sm_node_attr(find(g, "kt")->def, "value");
    assert_int_equal(kt->v.t->ndim, 0);
    assert_int_equal(*(int64_t *)kt->v.t->data, 42);
    smelt_graph_free(g);

    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/attr_kinds.ir"), &g),
                     SMELT_OK);
    sm_node *a = find(g, "a")->def;
    assert_int_equal(sm_node_attr(a, "big")->v.i, INT64_MAX);
    assert_true(signbit(sm_node_attr(a, "neg")->v.f));
    assert_true(isnan(sm_node_attr(a, "n")->v.f));
    assert_true(sm_node_attr(a, "minf")->v.f == -INFINITY);
    assert_string_equal(sm_node_attr(a, "s")->v.s,
                        "text with \"quotes\", \\ and \t tab");
    assert_string_equal(sm_node_attr(a, "u")->v.s,
                        "caf\xc3\xa9 \xc3\xa9 \xe4\xb8\xad ok \x01\x7f");
    const sm_attr *strs = sm_node_attr(a, "strs");
    assert_int_equal(strs->kind, SM_ATTR_STRINGS);
    assert_int_equal(strs->n, 3);
    assert_string_equal(strs->v.strs[1], "b c");
    assert_string_equal(strs->v.strs[2], "");
    const sm_attr *empty = sm_node_attr(a, "empty"); /* no schema: ints */
    assert_int_equal(empty->kind, SM_ATTR_INTS);
    assert_int_equal(empty->n, 0);
    const sm_attr *floats = sm_node_attr(a, "floats");
    assert_int_equal(floats->kind, SM_ATTR_FLOATS);
    assert_true(floats->v.floats[1] == 2.0 && floats->v.floats[2] == -3.25e10);
    const sm_attr *tb = sm_node_attr(a, "tb");
    assert_int_equal(tb->v.t->dtype, SMELT_DTYPE_BOOL);
    assert_int_equal(((uint8_t *)tb->v.t->data)[0], 1);
    assert_int_equal(sm_node_attr(a, "te")->v.t->numel, 0);
    sm_node *b = find(g, "b")->def;
    assert_int_equal(sm_node_attr(b, "quoted name")->v.i, 1);
    assert_int_equal(sm_node_attr(b, "mixed")->kind, SM_ATTR_FLOATS);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_names(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g;
    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/names.ir"), &g),
                     SMELT_OK);
    assert_string_equal(g->name, "my-graph.v2 (test)");
    assert_string_equal(g->top->params[0]->name, "input.1");
    assert_string_equal(g->top->params[1]->name, "with space");
    assert_string_equal(g->top->params[2]->name, "0");
    assert_string_equal(g->top->consts[0]->name, "conv/weight:0");
    assert_string_equal(top_node(g, 0)->out[0]->name, "quote\"d");
    assert_string_equal(top_node(g, 0)->name, "node \"A\"");
    assert_string_equal(top_node(g, 1)->out[0]->name, "back\\slash");
    assert_string_equal(top_node(g, 1)->name, "layer1/mul.0");
    assert_string_equal(top_node(g, 2)->out[0]->name, "ends with colon:");
    assert_string_equal(top_node(g, 2)->name, "tab\there");
    assert_string_equal(top_node(g, 3)->out[0]->name, "caf\xc3\xa9");
    assert_string_equal(top_node(g, 4)->out[0]->name, "esc\x01\x7f\xff");
    assert_null(top_node(g, 4)->name);
    assert_string_equal(top_node(g, 5)->out[0]->name, "a-b_c.d/e:f");
    assert_string_equal(top_node(g, 5)->name, "");
    assert_string_equal(top_node(g, 6)->out[0]->name, "");
    /* "%x:f32: f32[2]" names x:f32; "%y:f32[2]" is y with a type */
    assert_string_equal(top_node(g, 7)->out[0]->name, "x:f32");
    assert_string_equal(top_node(g, 8)->out[0]->name, "y");
    assert_int_equal(top_node(g, 8)->out[0]->type.dims[0].size, 2);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_types(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g;
    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/symbolic.ir"), &g),
                     SMELT_OK);
    sm_value *y = g->top->params[1], *z = g->top->params[2];
    sm_value *u = g->top->params[3], *v = g->top->params[4];
    sm_value *w = g->top->params[5];
    assert_int_equal(y->type.ndim, 2);
    assert_true(y->type.dims[0].size < 0 && !y->type.dims[0].sym);
    assert_int_equal(z->type.ndim, SM_RANK_UNKNOWN);
    assert_int_equal(z->type.dtype, SMELT_DTYPE_F32);
    assert_int_equal(u->type.dtype, SMELT_DTYPE_UNDEFINED);
    assert_int_equal(u->type.ndim, SM_RANK_UNKNOWN);
    assert_int_equal(v->type.dtype, SMELT_DTYPE_UNDEFINED);
    assert_string_equal(v->type.dims[1].sym, "n");
    assert_string_equal(w->type.dims[0].sym, "dim/with spaces");
    sm_value *a = find(g, "a"); /* no type written: unknown */
    assert_int_equal(a->type.dtype, SMELT_DTYPE_UNDEFINED);
    assert_int_equal(a->type.ndim, SM_RANK_UNKNOWN);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

static void test_control_flow(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g;
    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/loop.ir"), &g),
                     SMELT_OK);
    sm_node *loop = top_node(g, 0);
    assert_int_equal(loop->op, SM_OP_Loop);
    assert_string_equal(loop->name, "main_loop");
    assert_int_equal(loop->n_out, 3);
    assert_int_equal(loop->n_blocks, 1);
    sm_block *body = loop->blocks[0];
    assert_string_equal(body->label, "body");
    assert_int_equal(body->n_params, 4);
    assert_string_equal(body->params[1]->name, "cond");
    assert_int_equal(body->params[0]->type.dtype, SMELT_DTYPE_I64);
    assert_int_equal(body->n_ret, 4);
    assert_int_equal(body->n_consts, 1); /* %one_i */
    assert_int_equal(body->nodes[0]->op, SM_OP_Constant);
    assert_int_equal(body->nodes[0]->n_in, 0);
    sm_node *nif = body->nodes[6];
    assert_int_equal(nif->op, SM_OP_If);
    assert_ptr_equal(nif->blocks[0]->ret[0], body->nodes[2]->out[0]);
    assert_ptr_equal(body->nodes[4]->in[1], g->top->params[2]); /* %limit */
    sm_node *once = top_node(g, 1);
    assert_null(once->in[0]); /* absent trip count */
    sm_node *none = top_node(g, 2);
    assert_int_equal(none->n_out, 0);
    /* 3 loops; 8 nodes in the main body and 1 in its If; 2 in the next */
    assert_int_equal(smelt_graph_num_nodes(g), 3 + 8 + 1 + 2);
    smelt_graph_free(g);

    assert_int_equal(smelt_graph_load(ctx, tu_path("graphs/nested.ir"), &g),
                     SMELT_OK);
    assert_int_equal(smelt_graph_num_nodes(g), 10);
    sm_node *l = top_node(g, 0);
    sm_node *if1 = l->blocks[0]->nodes[1];
    sm_node *if2 = if1->blocks[0]->nodes[1];
    sm_node *deep = if2->blocks[0]->nodes[0];
    assert_int_equal(deep->op, SM_OP_Loop);
    sm_node *w2 = deep->blocks[0]->nodes[0];
    assert_ptr_equal(w2->in[1], l->blocks[0]->nodes[0]->out[0]); /* %a */
    sm_node *w3 = deep->blocks[0]->nodes[1];
    assert_ptr_equal(w3->in[1], l->blocks[0]->params[2]); /* %v */
    smelt_graph_free(g);

    sm_node *n;
    assert_int_equal(
        smelt_graph_load(ctx, tu_path("graphs/optional_inputs.ir"), &g),
        SMELT_OK);
    n = find(g, "slice")->def;
    assert_int_equal(n->n_in, 5);
    assert_null(n->in[3]);
    assert_non_null(n->in[4]);
    n = find(g, "drop")->def;
    assert_int_equal(n->n_in, 3);
    assert_true(!n->in[1] && !n->in[2]);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

/* ---- printing ---------------------------------------------------------- */

static void test_print_canonical(void **state)
{
    (void)state;
    long before = live_allocs;
    smelt_ctx_t *ctx = smelt_ctx_init();
    /* loose spacing, comments, a constant after a node, odd names */
    const char *in = "# leading comment\n"
                     "graph  t ( %x:f32[2] ,%n : i64[] ){%y=Relu( %x )#c\n"
                     "%k : f32 [ 2 ] = const[1,-0.0]\n"
                     "%big: f32[3] = const [100000000, 1e20, 16777217]\n"
                     "%d: f64[2] = const [0.1, 1e300]\n"
                     "%z: f32[2] = Add(%y, %k) {alpha = 1e-7, s = \"a\\x41\","
                     " l = [0.1, 1], e = []} @\"my node\"\n"
                     "Loop(%n, _) body(%i: i64[], %c: bool[]) {\n"
                     "%q: f32[2] = Neg(%z)\n"
                     "return %c}\n"
                     "return %z, %\"y\"}";
    const char *want =
        "graph t(%x: f32[2], %n: i64[]) {\n"
        "  %k: f32[2] = const [1.0, -0.0]\n"
        "  %big: f32[3] = const [100000000.0, 1.00000002e+20, 16777216.0]\n"
        "  %d: f64[2] = const [0.10000000000000001, 1.0000000000000001e+300]\n"
        "  %y = Relu(%x)\n"
        "  %z: f32[2] = Add(%y, %k) {alpha = 1e-07, s = \"aA\", l = [0.1, "
        "1.0], e = []} @\"my node\"\n"
        "  Loop(%n, _) body(%i: i64[], %c: bool[]) {\n"
        "    %q: f32[2] = Neg(%z)\n"
        "    return %c\n"
        "  }\n"
        "  return %z, %y\n"
        "}\n";
    sm_graph *g = parse_ok(ctx, in);
    char *out;
    assert_int_equal(smelt_graph_print(ctx, g, &out), SMELT_OK);
    assert_string_equal(out, want);
    smelt_string_free(out);
    smelt_graph_free(g);

    /* a graph built through the API: generated names, unknown types,
     * NULL labels */
    sm_graph *h;
    assert_int_equal(sm_graph_new(ctx, "built", &h), SMELT_OK);
    sm_type t;
    sm_type_unknown(&t);
    sm_value *p = sm_block_add_param(h->top, "in put", &t);
    sm_node *r = sm_node_new(h->top, SM_OP_Relu, NULL, 1, &p, 1, NULL);
    assert_non_null(r);
    assert_true(sm_block_add_return(h->top, r->out[0]));
    assert_int_equal(smelt_graph_print(ctx, h, &out), SMELT_OK);
    assert_string_equal(out, "graph built(%\"in put\": undef[*]) {\n"
                             "  %v1 = Relu(%\"in put\")\n"
                             "  return %v1\n"
                             "}\n");
    sm_graph *back = parse_ok(ctx, out);
    smelt_string_free(out);
    smelt_graph_free(back);
    smelt_graph_free(h);

    assert_int_equal(smelt_graph_print(ctx, NULL, &out), SMELT_ERR_INVALID_ARG);
    smelt_ctx_free(ctx);
    assert_int_equal(live_allocs, before);
}

/* Bitwise equality of two attributes (nan == nan, -0.0 != 0.0). */
static int attr_same(const sm_attr *a, const sm_attr *b)
{
    if (strcmp(a->name, b->name) != 0 || a->kind != b->kind || a->n != b->n)
        return 0;
    switch (a->kind) {
    case SM_ATTR_INT: return a->v.i == b->v.i;
    case SM_ATTR_FLOAT: return memcmp(&a->v.f, &b->v.f, 8) == 0;
    case SM_ATTR_STRING: return strcmp(a->v.s, b->v.s) == 0;
    case SM_ATTR_INTS:
        return !a->n || !memcmp(a->v.ints, b->v.ints, 8 * (size_t)a->n);
    case SM_ATTR_FLOATS:
        return !a->n || !memcmp(a->v.floats, b->v.floats, 8 * (size_t)a->n);
    case SM_ATTR_STRINGS:
        for (int i = 0; i < a->n; i++)
            if (strcmp(a->v.strs[i], b->v.strs[i]) != 0)
                return 0;
        return 1;
    case SM_ATTR_TENSOR: return sm_tensor_equal(a->v.t, b->v.t);
    default: return 0;
    }
}

/* Same structure, names, types, constants (bitwise) and attributes. */
static void assert_graphs_same(const sm_graph *a, const sm_graph *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->n_values, b->n_values);
    assert_int_equal(a->n_nodes_all, b->n_nodes_all);
    for (int i = 0; i < a->n_values; i++) {
        const sm_value *x = a->values[i];
        const sm_value *y = sm_graph_find_value(b, x->name);
        assert_non_null(y);
        assert_true(sm_type_equal(&x->type, &y->type));
        assert_true(!x->data == !y->data);
        if (x->data)
            assert_true(sm_tensor_equal(x->data, y->data));
    }
    for (int i = 0; i < a->n_nodes_all; i++) {
        const sm_node *m = a->nodes_all[i], *n = b->nodes_all[i];
        assert_int_equal(m->op, n->op);
        assert_int_equal(m->n_attr, n->n_attr);
        for (int j = 0; j < m->n_attr; j++)
            assert_true(attr_same(&m->attrs[j], &n->attrs[j]));
    }
}

/* print(parse(print(g))) == print(g) for every graph file under tests/
 * (other suites' files too, found at run time); files outside
 * tests/graphs that do not parse (not meant for this parser) are
 * skipped. */
static void test_round_trip(void **state)
{
    (void)state;
    file_list files = {0};
    collect_ir(SMELT_TEST_DIR, "ir_bad", &files);
    smelt_ctx_t *ctx = smelt_ctx_init();
    int checked = 0;
    for (int i = 0; i < files.n; i++) {
        const char *path = files.paths[i];
        long before = live_allocs;
        sm_graph *g;
        smelt_status s = smelt_graph_load(ctx, path, &g);
        if (s != SMELT_OK) {
            if (strstr(path, "/graphs/"))
                fail_msg("%s: %s", path, smelt_ctx_error(ctx));
            continue;
        }
        char *p1, *p2;
        assert_int_equal(smelt_graph_print(ctx, g, &p1), SMELT_OK);
        sm_graph *g2;
        s = smelt_graph_parse(ctx, p1, strlen(p1), "printed", &g2);
        if (s != SMELT_OK)
            fail_msg("%s: printed form does not parse: %s\n%s", path,
                     smelt_ctx_error(ctx), p1);
        assert_int_equal(smelt_graph_print(ctx, g2, &p2), SMELT_OK);
        if (strcmp(p1, p2) != 0)
            fail_msg("%s: print is not stable:\n%s\n---\n%s", path, p1, p2);
        assert_graphs_same(g, g2);
        assert_int_equal(smelt_graph_num_nodes(g), smelt_graph_num_nodes(g2));
        smelt_string_free(p1);
        smelt_string_free(p2);
        smelt_graph_free(g);
        smelt_graph_free(g2);
        assert_int_equal(live_allocs, before);
        checked++;
    }
    assert_true(checked >= 12);
    smelt_ctx_free(ctx);
    list_free(&files);
}

/* ---- errors ------------------------------------------------------------ */

/* Every tests/ir_bad/ file fails with the message its first line gives:
 * "# expect: L:C: text". */
static void test_bad_files(void **state)
{
    (void)state;
    file_list files = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ir_bad", SMELT_TEST_DIR);
    collect_ir(dir, NULL, &files);
    assert_true(files.n >= 25);
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (int i = 0; i < files.n; i++) {
        const char *path = files.paths[i];
        size_t len;
        char *text = read_or_fail(path, &len);
        const char *tag = "# expect: ";
        if (strncmp(text, tag, strlen(tag)) != 0)
            fail_msg("%s: first line is not '# expect: L:C: text'", path);
        char *exp = text + strlen(tag);
        char *eol = strchr(exp, '\n');
        assert_non_null(eol);
        *eol = 0;
        int line, col, k = 0;
        if (sscanf(exp, "%d:%d: %n", &line, &col, &k) != 2 || k == 0)
            fail_msg("%s: bad expect line", path);
        char loc[64];
        snprintf(loc, sizeof loc, "%s:%d:%d: error: ", path, line, col);
        long before = live_allocs;
        sm_graph *g = NULL;
        smelt_status s = smelt_graph_load(ctx, path, &g);
        const char *msg = smelt_ctx_error(ctx);
        if (s != SMELT_ERR_PARSE || !strstr(msg, loc) || !strstr(msg, exp + k))
            fail_msg("%s: status %s, message\n  %s\nwanted\n  %s%s", path,
                     smelt_status_name(s), msg, loc, exp + k);
        assert_ptr_equal(strstr(msg, path), msg); /* starts FILE: */
        assert_null(g);
        assert_int_equal(live_allocs, before);
        free(text);
    }
    smelt_ctx_free(ctx);
    list_free(&files);
}

static void test_scoping_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    /* a Loop body sees outer values and its parameters, not later ones */
    parse_fails(ctx,
                "graph g(%n: i64[], %c: bool[], %x: f32[]) {\n"
                "  %y: f32[] = Loop(%n, %c, %x) body(%i: i64[], %ci: bool[], "
                "%v: f32[]) {\n"
                "    %s: f32[] = Add(%v, %later)\n"
                "    return %ci, %s\n  }\n"
                "  %later: f32[] = Neg(%x)\n  return %y\n}\n",
                "t.ir:3:25: error: ", "undefined value %later");
    /* body parameters end with the body */
    parse_fails(ctx,
                "graph g(%n: i64[], %c: bool[], %x: f32[]) {\n"
                "  %y: f32[] = Loop(%n, %c, %x) body(%i: i64[], %ci: bool[], "
                "%v: f32[]) {\n"
                "    return %ci, %v\n  }\n"
                "  return %v\n}\n",
                "t.ir:5:10: error: ", "%v (defined at 2:61) is not visible");
    /* names are unique across blocks: a branch may not reuse an outer
     * name, nor two sibling branches share one */
    parse_fails(
        ctx,
        "graph g(%c: bool[], %x: f32[]) {\n"
        "  %r: f32[] = If(%c) then_branch() {\n"
        "    %t: f32[] = Neg(%x)\n    return %t\n"
        "  } else_branch() {\n"
        "    %t: f32[] = Abs(%x)\n    return %t\n  }\n"
        "  return %r\n}\n",
        "t.ir:6:5: error: ", "redefinition of %t (first defined at 3:5)");
    parse_fails(ctx, "graph g(%x: f32[], %x: f32[]) {\n  return %x\n}\n",
                "t.ir:1:20: error: ", "redefinition of %x");
    parse_fails(ctx,
                "graph g(%x: f32[]) {\n  %a: f32[], %a: f32[] = Split(%x)\n"
                "  return %a\n}\n",
                "t.ir:2:14: error: ", "redefinition of %a");
    /* a name reads the same bare or quoted */
    parse_fails(ctx, "graph g(%x: f32[]) {\n  %\"x\" = Neg(%x)\n  return %x\n}",
                "t.ir:2:3: error: ", "redefinition of %x");
    smelt_ctx_free(ctx);
}

/* A node with 40,000 attributes took seconds to parse (each name
 * checked against all before it); past SM_PARSE_MAX_ATTRS it fails at
 * the first attribute too many. */
static void test_too_many_attrs(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    size_t cap = 40000 * 16 + 128, k = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    k += (size_t)snprintf(text, cap,
                          "graph g(%%x: f32[]) {\n  %%y = Neg(%%x) {");
    for (int i = 0; i < 40000; i++)
        k += (size_t)snprintf(text + k, cap - k, "%sa%d = 1", i ? ", " : "", i);
    snprintf(text + k, cap - k, "}\n  return %%y\n}\n");
    /* "  %y = Neg(%x) {" is 16 columns; attribute i (i < 10) is 8 wide */
    char loc[64];
    int col = 17 + 10 * 8 + 90 * 9 + 900 * 10 + (1024 - 1000) * 11;
    snprintf(loc, sizeof loc, "t.ir:2:%d: error: ", col);
    parse_fails(ctx, text, loc, "more than 1024 attributes on one node");
    free(text);
    smelt_ctx_free(ctx);
}

static void test_misc_errors(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    parse_fails(ctx,
                "graph g() {\n  %w: f32[2] = const [1, 2,]\n  return %w\n}",
                "t.ir:2:28: error: ", "expected a number for f32, found ']'");
    parse_fails(ctx, "graph g(%x: f32[]) {\n  %y = Neg(%x) {}\n  return %y\n}",
                "t.ir:2:17: error: ", "expected an attribute name, found '}'");
    parse_fails(ctx, "graph g(%x: f32[]) {\n  %y = Neg(%x) {a = [1,]}\n}",
                "t.ir:2:24: error: ", "expected a list element, found ']'");
    parse_fails(ctx, "graph g(%x: f32[]) {\n  %y = Neg(%x) {a = foo}\n}",
                "t.ir:2:21: error: ",
                "expected a value for attribute 'a', found 'foo'");
    parse_fails(ctx, "graph g(%x: f32[],) {\n  return %x\n}",
                "t.ir:1:19: error: ", "expected a parameter after ','");
    parse_fails(ctx, "graph g(%x: f32[]) {\n  return %x,\n}",
                "t.ir:3:1: error: ", "expected a value after ','");
    parse_fails(ctx, "graph g(%x: f32[]) {\n  %y = Neg(%x\n",
                "t.ir:3:1: error: ",
                "expected ',' or ')' after the inputs, found end of input");
    parse_fails(ctx, "graph g(%x: f32[2) {}", "t.ir:1:18: error: ",
                "expected ',' or ']' in the shape, found ')'");
    parse_fails(ctx, "graph g(%x: f32) {}", "t.ir:1:16: error: ",
                "expected '[' after the dtype, found ')'");
    parse_fails(
        ctx, "graph g() {\n  %k: f32[] = const true\n  return %k\n}",
        "t.ir:2:21: error: ", "expected a number for f32, found 'true'");
    parse_fails(
        ctx, "graph g() {\n  %k: i8[] = const nan\n  return %k\n}",
        "t.ir:2:20: error: ", "float literal 'nan' in an integer (i8) tensor");
    parse_fails(ctx, "graph g() {\n  %k: bf16[] = const 1e39\n  return %k\n}",
                "t.ir:2:22: error: ", "out of range for bf16");
    parse_fails(ctx, "graph g() {\n  %k: f32[] = const 1.5e\n  return %k\n}",
                "t.ir:2:21: error: ", "malformed number '1.5e'");
    parse_fails(ctx, "graph g() {\n  %k: undef[2] = const [1, 2]\n}",
                "t.ir:2:7: error: ",
                "the type of constant %k must be fully known, not undef[2]");
    parse_fails(ctx, "graph g() {\n  %k: f32[*] = const 1.0\n}",
                "t.ir:2:7: error: ", "must be fully known, not f32[*]");
    parse_fails(ctx, "graph g() {\n  - \n}",
                "t.ir:2:3: error: ", "unexpected '-'");
    parse_fails(ctx, "graph g() {\n  \x01\n}",
                "t.ir:2:3: error: ", "unexpected control byte 0x01");
    /* only control ops own blocks: a label after Relu is a statement */
    parse_fails(ctx, "graph g() {\n  Relu() then_branch() {\n",
                "t.ir:2:10: error: ", "unknown op 'then_branch'");
    /* a huge type with a short literal fails without allocating it */
    parse_fails(ctx,
                "graph g() {\n  %w: f32[1000000000,2] = const [1.0]\n"
                "  return %w\n}",
                "t.ir:2:33: error: ",
                "type f32[1000000000,2] has 2000000000 elements but the "
                "literal has 1 values");
    /* a leading UTF-8 byte order mark is skipped; elsewhere it is not text */
    sm_graph *bom = parse_ok(ctx, "\xEF\xBB\xBFgraph g() {\n  return\n}\n");
    smelt_graph_free(bom);
    parse_fails(ctx, "graph g() {\n\xEF\xBB\xBF  return\n}\n",
                "t.ir:2:1: error: ",
                "unexpected byte 0xEF outside a string or comment");
    /* the parser reads exactly len bytes: no NUL terminator needed */
    const char *text = "graph g(%x: f32[]) {\n  return %x\n}XXXX";
    sm_graph *g = NULL;
    assert_int_equal(smelt_graph_parse(ctx, text, strlen(text) - 4, NULL, &g),
                     SMELT_OK);
    smelt_graph_free(g);
    assert_int_equal(smelt_graph_parse(ctx, text, strlen(text), NULL, &g),
                     SMELT_ERR_PARSE);
    assert_non_null(strstr(smelt_ctx_error(ctx), "<input>:3:2: error: "));
    assert_int_equal(smelt_graph_parse(ctx, NULL, 5, NULL, &g),
                     SMELT_ERR_INVALID_ARG);
    assert_int_equal(smelt_graph_parse(ctx, text, 0, NULL, NULL),
                     SMELT_ERR_INVALID_ARG);
    smelt_ctx_free(ctx);
}

/* Nesting of 64 blocks parses; 65 is refused with a clear message. */
static void test_nesting_limit(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    for (int depth = SM_PARSE_MAX_DEPTH; depth <= SM_PARSE_MAX_DEPTH + 1;
         depth++) {
        sm_strbuf b;
        sm_strbuf_init(&b);
        sm_strbuf_puts(&b, "graph deep(%c: bool[], %x: f32[]) {\n");
        for (int d = 0; d < depth; d++)
            sm_strbuf_appendf(&b, "%%r%d: f32[] = If(%%c) then_branch() {\n",
                              d);
        sm_strbuf_puts(&b, "return %x\n");
        for (int d = depth - 1; d >= 0; d--)
            sm_strbuf_appendf(
                &b, "} else_branch() { return %%x }\nreturn %%r%d\n", d);
        sm_strbuf_puts(&b, "}\n");
        char *text;
        assert_int_equal(sm_strbuf_take(&b, ctx, &text), SMELT_OK);
        sm_graph *g = NULL;
        smelt_status s = smelt_graph_parse(ctx, text, strlen(text), "d", &g);
        if (depth == SM_PARSE_MAX_DEPTH) {
            assert_int_equal(s, SMELT_OK);
            assert_int_equal(smelt_graph_num_nodes(g), depth);
        } else {
            assert_int_equal(s, SMELT_ERR_PARSE);
            assert_non_null(strstr(smelt_ctx_error(ctx),
                                   "d:66:22: error: blocks nested deeper "
                                   "than 64"));
        }
        smelt_graph_free(g);
        smelt_string_free(text);
    }
    smelt_ctx_free(ctx);
}

/* Every prefix of every valid graph either parses or fails cleanly; so
 * does every file with one byte replaced by a troublesome one. */
static void test_fuzz_prefixes(void **state)
{
    (void)state;
    file_list files = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/graphs", SMELT_TEST_DIR);
    collect_ir(dir, NULL, &files);
    assert_true(files.n >= 10);
    smelt_ctx_t *ctx = smelt_ctx_init();
    static const char bytes[] = {0,          '}', '{', '%',  '"', '\\',
                                 (char)0xff, '[', ',', '\n', '#', '9'};
    long before = live_allocs;
    for (int i = 0; i < files.n; i++) {
        size_t len;
        char *text = read_or_fail(files.paths[i], &len);
        for (size_t k = 0; k < len; k++) {
            sm_graph *g = NULL;
            smelt_status s = smelt_graph_parse(ctx, text, k, "p", &g);
            assert_true(s == SMELT_OK || s == SMELT_ERR_PARSE);
            assert_true((s == SMELT_OK) == (g != NULL));
            smelt_graph_free(g);
        }
        /* one-byte mutations: every position of the small files, every
         * 7th of the large one */
        size_t step = len > 2000 ? 7 : 1;
        for (size_t k = 0; k < len; k += step)
            for (size_t j = 0; j < sizeof bytes; j++) {
                char save = text[k];
                text[k] = bytes[j];
                sm_graph *g = NULL;
                smelt_status s = smelt_graph_parse(ctx, text, len, "m", &g);
                assert_true(s == SMELT_OK || s == SMELT_ERR_PARSE);
                if (g) {
                    char *out;
                    assert_int_equal(smelt_graph_print(ctx, g, &out), SMELT_OK);
                    smelt_string_free(out);
                }
                smelt_graph_free(g);
                text[k] = save;
            }
        free(text);
        assert_int_equal(live_allocs, before);
    }
    smelt_ctx_free(ctx);
    list_free(&files);
}

/* Fail the k-th allocation for k = 0, 1, 2, ...: parsing, printing and
 * DOT export report SMELT_ERR_NOMEM and free everything, until they
 * succeed. */
static void test_alloc_failures(void **state)
{
    (void)state;
    size_t len;
    char *text = read_or_fail(tu_path("graphs/cnn_small.ir"), &len);
    smelt_ctx_t *ctx = smelt_ctx_init();
    long before = live_allocs;
    sm_graph *g = NULL;
    long k;
    for (k = 0;; k++) {
        sm_alloc_fail_after(k);
        smelt_status s = smelt_graph_parse(ctx, text, len, "cnn", &g);
        sm_alloc_fail_after(-1);
        if (s == SMELT_OK)
            break;
        assert_int_equal(s, SMELT_ERR_NOMEM);
        assert_null(g);
        assert_non_null(strstr(smelt_ctx_error(ctx), "out of memory"));
        assert_int_equal(live_allocs, before);
        assert_true(k < 100000);
    }
    assert_true(k > 10); /* the walk went through many failure points */
    smelt_status (*fns[2])(smelt_ctx_t *, const smelt_graph_t *,
                           char **) = {smelt_graph_print, smelt_graph_dot};
    for (int f = 0; f < 2; f++) {
        long base = live_allocs;
        for (k = 0;; k++) {
            char *out = NULL;
            sm_alloc_fail_after(k);
            smelt_status s = fns[f](ctx, g, &out);
            sm_alloc_fail_after(-1);
            if (s == SMELT_OK) {
                smelt_string_free(out);
                break;
            }
            assert_int_equal(s, SMELT_ERR_NOMEM);
            assert_null(out);
            assert_int_equal(live_allocs, base);
        }
        assert_true(k > 0);
    }
    smelt_graph_free(g);
    assert_int_equal(live_allocs, before);
    smelt_ctx_free(ctx);
    free(text);
}

/* ---- DOT --------------------------------------------------------------- */

static char *dot_of(smelt_ctx_t *ctx, const char *path)
{
    sm_graph *g;
    if (smelt_graph_load(ctx, path, &g) != SMELT_OK)
        fail_msg("%s: %s", path, smelt_ctx_error(ctx));
    char *out;
    assert_int_equal(smelt_graph_dot(ctx, g, &out), SMELT_OK);
    smelt_graph_free(g);
    return out;
}

static void test_dot(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    char *d = dot_of(ctx, tu_path("graphs/tiny.ir"));
    static const char *const want[] = {
        "digraph \"tiny\" {\n",
        "v0 [shape=ellipse, label=\"%x\\nf32[batch,4]\"];",
        ("v2 [shape=box, style=filled, fillcolor=\"#eeeeee\", fontsize=8, "
         "height=0.2, label=\"%w\\nf32[4,2]\"];"),
        "label=\"MatMul\\n@mm1\\nf32[batch,2]\"];",
        "label=\"Split\\nf32[batch,1]\\nf32[batch,1]\"];",
        "v0 -> n0 [label=\"%x\"];",
        "v2 -> n0 [label=\"%w\"];",
        "n0 -> n1 [label=\"%h\"];",
        "subgraph cluster_0 {",
        "label=\"If: then_branch\";",
        "subgraph cluster_1 {",
        "n2 -> n4 [label=\"%p\"];", /* sub-block reading an outer value */
        "n2 -> ret1 [label=\"%q\"];",
        "ret0 -> n3 [style=dotted];",
        "out0 [shape=ellipse, style=bold, label=\"%r\\nf32[batch,1]\"];",
        "n3 -> out0 [label=\"%r\"];",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(d, want[i]))
            fail_msg("DOT lacks '%s':\n%s", want[i], d);
    assert_string_equal(d + strlen(d) - 2, "}\n");
    smelt_string_free(d);

    d = dot_of(ctx, tu_path("graphs/names.ir"));
    assert_non_null(strstr(d, "digraph \"my-graph.v2 (test)\""));
    assert_non_null(strstr(d, "label=\"%quote\\\"d\""));
    assert_non_null(strstr(d, "\\n@node \\\"A\\\"\\n"));
    assert_non_null(strstr(d, "label=\"%back\\\\slash\""));
    assert_non_null(strstr(d, "label=\"%esc  ?\"")); /* \x01 \x7f \xff */
    smelt_string_free(d);

    d = dot_of(ctx, tu_path("graphs/nested.ir"));
    assert_non_null(strstr(d, "subgraph cluster_5 {")); /* 6 blocks */
    assert_null(strstr(d, "cluster_6"));
    assert_non_null(strstr(d, "label=\"Loop: body\";"));
    assert_non_null(strstr(d, "shape=ellipse, style=dashed, label=\"%i2"));
    smelt_string_free(d);

    /* Graphviz accepts the DOT of every test graph */
    if (access("/usr/bin/dot", X_OK) == 0) {
        file_list files = {0};
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/graphs", SMELT_TEST_DIR);
        collect_ir(dir, NULL, &files);
        for (int i = 0; i < files.n; i++) {
            char tmpl[] = "/tmp/smelt_dot_XXXXXX";
            int fd = mkstemp(tmpl);
            assert_true(fd >= 0);
            d = dot_of(ctx, files.paths[i]);
            FILE *f = fdopen(fd, "w");
            fputs(d, f);
            fclose(f);
            smelt_string_free(d);
            char cmd[4200];
            snprintf(cmd, sizeof cmd,
                     "/usr/bin/dot -Tsvg %s -o /dev/null 2>/dev/null", tmpl);
            int rc = system(cmd);
            unlink(tmpl);
            if (rc != 0)
                fail_msg("dot rejects the DOT of %s", files.paths[i]);
        }
        list_free(&files);
    }
    smelt_ctx_free(ctx);
}

/* ---- files, strings, maps ---------------------------------------------- */

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void test_read_file(void **state)
{
    (void)state;
    long before = live_allocs;
    smelt_ctx_t *ctx = smelt_ctx_init();
    char *data;
    size_t len;
    char path[] = "/tmp/smelt_read_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, "hello\0world", 11);
    assert_int_equal(sm_read_file(ctx, path, 11, &data, &len), SMELT_OK);
    assert_int_equal(len, 11);
    assert_memory_equal(data, "hello\0world", 12); /* NUL after the end */
    sm_free(data);
    assert_int_equal(sm_read_file(ctx, path, 10, &data, &len), SMELT_ERR_LIMIT);
    assert_null(data);
    assert_non_null(strstr(smelt_ctx_error(ctx), path));
    write_file(path, "", 0);
    assert_int_equal(sm_read_file(ctx, path, 10, &data, &len), SMELT_OK);
    assert_int_equal(len, 0);
    assert_int_equal(data[0], 0);
    sm_free(data);
    /* larger than the first buffer, read in several steps */
    char *big = malloc(100000);
    for (int i = 0; i < 100000; i++)
        big[i] = (char)('a' + i % 26);
    write_file(path, big, 100000);
    assert_int_equal(sm_read_file(ctx, path, 100000, &data, &len), SMELT_OK);
    assert_int_equal(len, 100000);
    assert_memory_equal(data, big, 100000);
    sm_free(data);
    free(big);
    /* a file that is not a graph fails as a parse error naming the path */
    write_file(path, "graph", 5);
    sm_graph *g;
    assert_int_equal(smelt_graph_load(ctx, path, &g), SMELT_ERR_PARSE);
    assert_ptr_equal(strstr(smelt_ctx_error(ctx), path), smelt_ctx_error(ctx));
    unlink(path);

    assert_int_equal(smelt_graph_load(ctx, "/nonexistent/x.ir", &g),
                     SMELT_ERR_IO);
    assert_null(g);
    assert_string_equal(smelt_ctx_error(ctx),
                        "/nonexistent/x.ir: No such file or directory");
    assert_int_equal(smelt_graph_load(ctx, "/tmp", &g), SMELT_ERR_IO);
    assert_string_equal(smelt_ctx_error(ctx), "/tmp: Is a directory");
    assert_int_equal(smelt_graph_load(ctx, NULL, &g), SMELT_ERR_INVALID_ARG);
    smelt_ctx_free(ctx);
    assert_int_equal(live_allocs, before);
}

static void test_strbuf(void **state)
{
    (void)state;
    long before = live_allocs;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_strbuf b;
    char *out;
    sm_strbuf_init(&b);
    assert_string_equal(sm_strbuf_str(&b), "");
    assert_int_equal(sm_strbuf_take(&b, ctx, &out), SMELT_OK);
    assert_string_equal(out, "");
    smelt_string_free(out);
    for (int i = 0; i < 1000; i++)
        sm_strbuf_appendf(&b, "%d,", i);
    sm_strbuf_putc(&b, '|');
    sm_strbuf_append(&b, "xyz", 2);
    char long_s[600];
    memset(long_s, 'q', sizeof long_s - 1);
    long_s[sizeof long_s - 1] = 0;
    sm_strbuf_appendf(&b, "<%s>", long_s);
    assert_int_equal(sm_strbuf_take(&b, ctx, &out), SMELT_OK);
    assert_int_equal(strncmp(out, "0,1,2,", 6), 0);
    assert_non_null(strstr(out, ",998,999,|xy<qqq"));
    assert_int_equal(strlen(out), 3890 + 1 + 2 + 601);
    assert_int_equal(b.len, 0); /* reset after take */
    smelt_string_free(out);
    /* a failed allocation sticks and is reported once at the end */
    sm_strbuf_init(&b);
    sm_strbuf_puts(&b, "abc");
    sm_alloc_fail_after(0);
    sm_strbuf_appendf(&b, "%0300d", 1);
    sm_alloc_fail_after(-1);
    assert_true(b.failed);
    sm_strbuf_puts(&b, "more");
    assert_int_equal(sm_strbuf_take(&b, ctx, &out), SMELT_ERR_NOMEM);
    assert_null(out);
    sm_strbuf_init(&b);
    sm_strbuf_puts(&b, "abc");
    sm_strbuf_free(&b);
    smelt_ctx_free(ctx);
    assert_int_equal(live_allocs, before);
}

static void test_strmap(void **state)
{
    (void)state;
    long before = live_allocs;
    sm_strmap m;
    sm_strmap_init(&m);
    assert_null(sm_strmap_get(&m, "a", 1));
    static char keys[5000][12];
    for (int i = 0; i < 5000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        assert_true(sm_strmap_put(&m, keys[i], strlen(keys[i]), keys[i]));
    }
    assert_int_equal(m.n, 5000);
    for (int i = 0; i < 5000; i++)
        assert_ptr_equal(sm_strmap_get(&m, keys[i], strlen(keys[i])), keys[i]);
    assert_null(sm_strmap_get(&m, "k5000", 5));
    assert_null(sm_strmap_get(&m, "k1", 1)); /* prefix of a key */
    assert_true(sm_strmap_put(&m, "k7", 2, keys[0]));
    assert_ptr_equal(sm_strmap_get(&m, "k7", 2), keys[0]);
    assert_int_equal(m.n, 5000);
    /* keys are byte strings: an embedded NUL is part of the key */
    assert_true(sm_strmap_put(&m, "a\0b", 3, keys[1]));
    assert_null(sm_strmap_get(&m, "a", 1));
    assert_ptr_equal(sm_strmap_get(&m, "a\0b", 3), keys[1]);
    sm_alloc_fail_after(0);
    int ok = 1;
    for (int i = 0; i < 5000 && ok; i++) /* the next growth fails */
        ok = sm_strmap_put(&m, keys[i] + 1, strlen(keys[i]) - 1, NULL);
    sm_alloc_fail_after(-1);
    assert_false(ok);
    assert_ptr_equal(sm_strmap_get(&m, keys[42], strlen(keys[42])), keys[42]);
    sm_strmap_free(&m);
    assert_int_equal(live_allocs, before);
}

static void test_lexer(void **state)
{
    (void)state;
    const char *src = "%a:b: f32[*] @\"n\\x41\" -inf 1e5 -3 _ %x:i64[2] # c\n?";
    sm_lexer lx;
    sm_token t;
    sm_lex_init(&lx, NULL, src, strlen(src), "f");
    static const struct {
        sm_tok_kind kind;
        const char *payload;
    } want[] = {
        {SM_TOK_VALUE, "a:b"},  {SM_TOK_COLON, ":"},    {SM_TOK_IDENT, "f32"},
        {SM_TOK_LBRACKET, "["}, {SM_TOK_STAR, "*"},     {SM_TOK_RBRACKET, "]"},
        {SM_TOK_AT, "n\\x41"},  {SM_TOK_FLOAT, "-inf"}, {SM_TOK_FLOAT, "1e5"},
        {SM_TOK_INT, "-3"},     {SM_TOK_IDENT, "_"},    {SM_TOK_VALUE, "x"},
        {SM_TOK_COLON, ":"},    {SM_TOK_IDENT, "i64"},  {SM_TOK_LBRACKET, "["},
        {SM_TOK_INT, "2"},      {SM_TOK_RBRACKET, "]"}, {SM_TOK_QUESTION, "?"},
        {SM_TOK_EOF, ""},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        assert_int_equal(sm_lex_next(&lx, &t), SMELT_OK);
        assert_int_equal(t.kind, want[i].kind);
        if (t.kind != SM_TOK_EOF) {
            assert_int_equal(t.n, strlen(want[i].payload));
            assert_memory_equal(t.s, want[i].payload, t.n);
        }
    }
    assert_int_equal(t.line, 2);
    assert_int_equal(t.col, 2);
    char out[8];
    assert_int_equal(sm_lex_unescape("a\\x41\\n\\\"", 9, out), 4);
    assert_string_equal(out, "aA\n\"");
    /* UTF-8: overlong, surrogate and out-of-range forms are invalid */
    assert_int_equal(sm_utf8_len((const unsigned char *)"\xc3\xa9", 2), 2);
    assert_int_equal(sm_utf8_len((const unsigned char *)"\xe4\xb8\xad", 3), 3);
    assert_int_equal(sm_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", 4),
                     4);
    assert_int_equal(sm_utf8_len((const unsigned char *)"\xc0\x80", 2), 0);
    assert_int_equal(sm_utf8_len((const unsigned char *)"\xed\xa0\x80", 3), 0);
    assert_int_equal(sm_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4),
                     0);
    assert_int_equal(sm_utf8_len((const unsigned char *)"\xe4\xb8", 2), 0);
}

/* A long chain parses (the name map keeps it linear) and prints back. */
static void test_large_graph(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_strbuf b;
    sm_strbuf_init(&b);
    sm_strbuf_puts(&b, "graph chain(%v0: f32[batch,16]) {\n");
    enum { N = 20000 };
    for (int i = 1; i <= N; i++)
        sm_strbuf_appendf(&b, "  %%v%d: f32[batch,16] = Relu(%%v%d)\n", i,
                          i - 1);
    sm_strbuf_appendf(&b, "  return %%v%d\n}\n", N);
    char *text;
    assert_int_equal(sm_strbuf_take(&b, ctx, &text), SMELT_OK);
    sm_graph *g = parse_ok(ctx, text);
    assert_int_equal(smelt_graph_num_nodes(g), N);
    assert_ptr_equal(g->top->nodes[N - 1]->in[0], g->top->nodes[N - 2]->out[0]);
    char *out;
    assert_int_equal(smelt_graph_print(ctx, g, &out), SMELT_OK);
    assert_string_equal(out, text);
    smelt_string_free(out);
    smelt_string_free(text);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lexer),
        cmocka_unit_test(test_tiny_structure),
        cmocka_unit_test(test_constant_values),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_control_flow),
        cmocka_unit_test(test_print_canonical),
        cmocka_unit_test(test_unsigned_literals),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_scoping_errors),
        cmocka_unit_test(test_misc_errors),
        cmocka_unit_test(test_too_many_attrs),
        cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_fuzz_prefixes),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_dot),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_strbuf),
        cmocka_unit_test(test_strmap),
        cmocka_unit_test(test_large_graph),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
