/*
 * trace.c - recording eager ops into a graph, the analogue of
 * torch.jit.trace: the trace state kept on a ctx, the map from tensors
 * to graph values, and the warning when the program reads a traced
 * tensor's data. Design in docs/TRACE.md.
 */
#include "frontends/trace/trace.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strbuf.h"
#include "core/strmap.h"
#include "ir/infer.h"

/* What a tensor the trace has seen stands for. */
typedef enum entry_kind { ENTRY_INPUT, ENTRY_CONST, ENTRY_NODE } entry_kind;

/* One seen tensor; lives in the trace's arena. The map's key is the 8
 * bytes of `uid`. */
typedef struct entry {
    uint64_t uid;
    sm_value *v;
    entry_kind kind;
    int warned; /* its read has been reported */
} entry;

struct sm_trace {
    sm_trace *next;  /* in the list of running traces */
    uint64_t serial; /* the watch tag of its tensors; never reused */
    int active;      /* between begin and end */
    smelt_status failed;
    char fail_msg[SM_ERR_MSG_MAX];
    sm_graph *g;
    sm_arena arena; /* entries */
    sm_strmap map;  /* uid -> entry */
    int n_names;    /* counter for generated value names */
    int n_ops;
    const char *last_op;
    sm_strbuf warnings;
};

/* Running traces of all ctxs, so that a read on any thread finds the
 * trace its tensor belongs to. The lock guards the list and, in each
 * running trace, what the read hook looks at: the map, value names,
 * op counts and warnings. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sm_trace *running;
static uint64_t last_serial;

static entry *lookup(const sm_trace *tr, uint64_t uid)
{
    if (!uid)
        return NULL;
    return sm_strmap_get(&tr->map, (const char *)&uid, sizeof uid);
}

/* The read hook (core/tensor.h): warns once per value when the program
 * reads the data of an input or intermediate of a running trace, since
 * whatever it decides from the data is baked into the graph. */
static void on_read(const sm_tensor *t)
{
    pthread_mutex_lock(&lock);
    for (sm_trace *tr = running; tr; tr = tr->next) {
        if (tr->serial != t->watch)
            continue;
        entry *e = lookup(tr, t->uid);
        if (e && e->kind != ENTRY_CONST && !e->warned) {
            e->warned = 1;
            sm_strbuf_appendf(&tr->warnings,
                              "trace '%s': the program read the data of %%%s "
                              "after op %d (%s); a branch on it is baked into "
                              "the graph\n",
                              tr->g->name, e->v->name, tr->n_ops,
                              tr->last_op ? tr->last_op : "none");
        }
        break;
    }
    pthread_mutex_unlock(&lock);
}

/* Records that tensor uid stands for v. A tensor without a uid (not made
 * by sm_tensor_new) is not remembered: it is captured again at each use. */
static smelt_status remember(sm_trace *tr, smelt_ctx_t *ctx, uint64_t uid,
                             sm_value *v, entry_kind kind)
{
    if (!uid)
        return SMELT_OK;
    entry *e = sm_arena_alloc(&tr->arena, sizeof *e);
    if (!e)
        return sm_err_nomem(ctx);
    e->uid = uid;
    e->v = v;
    e->kind = kind;
    pthread_mutex_lock(&lock);
    int ok = sm_strmap_put(&tr->map, (const char *)&e->uid, sizeof e->uid, e);
    pthread_mutex_unlock(&lock);
    return ok ? SMELT_OK : sm_err_nomem(ctx);
}

static int is_input_name(const sm_trace *tr, const char *name)
{
    const sm_block *top = tr->g->top;
    for (int i = 0; i < top->n_params; i++)
        if (!strcmp(top->params[i]->name, name))
            return 1;
    return 0;
}

/* "relu_7" for stem "Relu": lower case, then the trace's counter; never
 * the name of an input. */
static void fresh_name(sm_trace *tr, const char *stem, char *buf, size_t size)
{
    char low[48];
    size_t k = 0;
    for (; stem[k] && k + 1 < sizeof low; k++)
        low[k] = (char)tolower((unsigned char)stem[k]);
    low[k] = 0;
    do
        snprintf(buf, size, "%s_%d", low, tr->n_names++);
    while (is_input_name(tr, buf));
}

/* The value tensor t stands for; an unseen tensor becomes a constant
 * holding a copy of its data. */
static smelt_status value_of(sm_trace *tr, smelt_ctx_t *ctx, const sm_tensor *t,
                             sm_value **out)
{
    entry *e = lookup(tr, t->uid);
    if (e) {
        *out = e->v;
        return SMELT_OK;
    }
    sm_tensor *copy;
    SM_TRY(sm_tensor_clone(ctx, t, &copy));
    char name[64];
    fresh_name(tr, "const", name, sizeof name);
    sm_value *v = sm_block_add_const(tr->g->top, name, copy);
    if (!v)
        return sm_err_nomem(ctx);
    *out = v;
    return remember(tr, ctx, t->uid, v, ENTRY_CONST);
}

/* Stops recording: leaves the list of running traces (first, so that no
 * read hook sees it half torn down), frees the map, and hands the graph to
 * *keep or frees it (keep NULL). Warnings stay. */
static void finish(sm_trace *tr, sm_graph **keep)
{
    pthread_mutex_lock(&lock);
    for (sm_trace **p = &running; *p; p = &(*p)->next)
        if (*p == tr) {
            *p = tr->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    tr->next = NULL;
    tr->active = 0;
    sm_strmap_free(&tr->map);
    sm_arena_free(&tr->arena);
    if (keep)
        *keep = tr->g;
    else
        sm_graph_free(tr->g);
    tr->g = NULL;
}

/* ctx->trace_free: a ctx freed while tracing ends its trace. */
static void trace_free(void *p)
{
    sm_trace *tr = p;
    if (tr->active)
        finish(tr, NULL);
    sm_strbuf_free(&tr->warnings);
    sm_free(tr);
}

sm_trace *sm_trace_recording(smelt_ctx_t *ctx)
{
    sm_trace *tr = ctx ? ctx->trace : NULL;
    return tr && tr->active && tr->failed == SMELT_OK ? tr : NULL;
}

smelt_status sm_trace_fail(sm_trace *tr, smelt_ctx_t *ctx, smelt_status st)
{
    if (tr && tr->failed == SMELT_OK && st != SMELT_OK) {
        tr->failed = st;
        snprintf(tr->fail_msg, sizeof tr->fail_msg, "%s", smelt_ctx_error(ctx));
    }
    return st;
}

smelt_status sm_trace_add_node(sm_trace *tr, smelt_ctx_t *ctx, sm_op op,
                               sm_tensor *const *in, int n_in, int n_out,
                               sm_node **out)
{
    SM_ASSERT(n_in <= SM_TRACE_MAX_OPERANDS && n_out <= SM_TRACE_MAX_OPERANDS);
    *out = NULL;
    sm_value *vals[SM_TRACE_MAX_OPERANDS];
    for (int i = 0; i < n_in; i++) {
        vals[i] = NULL;
        if (in[i])
            SM_TRY(value_of(tr, ctx, in[i], &vals[i]));
    }
    const char *op_name = sm_op_info_get(op)->name;
    char names[SM_TRACE_MAX_OPERANDS][64];
    const char *name_ptrs[SM_TRACE_MAX_OPERANDS];
    for (int j = 0; j < n_out; j++) {
        fresh_name(tr, op_name, names[j], sizeof names[j]);
        name_ptrs[j] = names[j];
    }
    *out = sm_node_new(tr->g->top, op, NULL, n_in, vals, n_out, name_ptrs);
    return *out ? SMELT_OK : sm_err_nomem(ctx);
}

smelt_status sm_trace_bind_outputs(sm_trace *tr, smelt_ctx_t *ctx, sm_node *n,
                                   sm_tensor *const *outs)
{
    for (int j = 0; j < n->n_out; j++) {
        sm_type_from_tensor(&n->out[j]->type, outs[j]);
        SM_TRY(remember(tr, ctx, outs[j]->uid, n->out[j], ENTRY_NODE));
        outs[j]->watch = tr->serial;
    }
    pthread_mutex_lock(&lock);
    tr->n_ops++;
    tr->last_op = sm_op_info_get(n->op)->name;
    pthread_mutex_unlock(&lock);
    return SMELT_OK;
}

/* ---- public entry points ----------------------------------------------- */

smelt_status smelt_trace_begin(smelt_ctx_t *ctx, const char *name)
{
    if (!ctx)
        return SMELT_ERR_INVALID_ARG;
    sm_trace *tr = ctx->trace;
    if (tr && tr->active)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trace_begin: this ctx is already tracing '%s' "
                      "(one trace per ctx)",
                      tr->g->name);
    if (!tr) {
        if (!(tr = sm_calloc(1, sizeof *tr)))
            return sm_err_nomem(ctx);
        sm_strbuf_init(&tr->warnings);
        ctx->trace = tr;
        ctx->trace_free = trace_free;
    }
    SM_TRY(sm_graph_new(ctx, name && *name ? name : "trace", &tr->g));
    sm_strbuf_free(&tr->warnings);
    sm_strbuf_init(&tr->warnings);
    sm_arena_init(&tr->arena);
    sm_strmap_init(&tr->map);
    tr->failed = SMELT_OK;
    tr->fail_msg[0] = 0;
    tr->n_names = tr->n_ops = 0;
    tr->last_op = NULL;
    tr->active = 1;
    sm_tensor_set_watch_hook(on_read);
    pthread_mutex_lock(&lock);
    tr->serial = ++last_serial;
    tr->next = running;
    running = tr;
    pthread_mutex_unlock(&lock);
    return SMELT_OK;
}

smelt_status smelt_trace_input(smelt_ctx_t *ctx, smelt_tensor_t *t,
                               const char *name)
{
    sm_trace *tr = ctx ? ctx->trace : NULL;
    if (!tr || !tr->active)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trace_input: this ctx is not tracing");
    if (tr->failed != SMELT_OK)
        return SMELT_OK; /* smelt_trace_end reports the failure */
    smelt_status st = SMELT_OK;
    entry *e;
    if (!t || !name || !*name)
        st = sm_err(ctx, SMELT_ERR_INVALID_ARG,
                    "smelt_trace_input: NULL tensor or empty name");
    else if ((e = lookup(tr, t->uid)))
        st = sm_err(ctx, SMELT_ERR_INVALID_ARG,
                    "smelt_trace_input: the tensor for input '%s' is already "
                    "%%%s of trace '%s' (mark inputs before using them)",
                    name, e->v->name, tr->g->name);
    else if (sm_graph_find_value(tr->g, name))
        st = sm_err(ctx, SMELT_ERR_INVALID_ARG,
                    "smelt_trace_input: the name '%s' is taken in trace '%s'",
                    name, tr->g->name);
    if (st != SMELT_OK)
        return sm_trace_fail(tr, ctx, st);
    sm_type type;
    sm_type_from_tensor(&type, t);
    sm_value *v = sm_block_add_param(tr->g->top, name, &type);
    st = v ? remember(tr, ctx, t->uid, v, ENTRY_INPUT) : sm_err_nomem(ctx);
    if (st != SMELT_OK)
        return sm_trace_fail(tr, ctx, st);
    t->watch = tr->serial;
    return SMELT_OK;
}

/* Names node-made outputs out0, out1, ... where those names are free, so
 * the graph's interface reads well (inputs and constants keep theirs). */
static smelt_status name_outputs(sm_trace *tr, smelt_ctx_t *ctx)
{
    sm_block *top = tr->g->top;
    for (int j = 0; j < top->n_ret; j++) {
        sm_value *v = top->ret[j];
        int seen = 0;
        for (int i = 0; i < j; i++)
            seen |= top->ret[i] == v;
        char name[32];
        snprintf(name, sizeof name, "out%d", j);
        if (!v->def || seen || sm_graph_find_value(tr->g, name))
            continue;
        const char *s = sm_arena_strdup(&tr->g->arena, name);
        if (!s)
            return sm_err_nomem(ctx);
        pthread_mutex_lock(&lock);
        v->name = s;
        pthread_mutex_unlock(&lock);
    }
    return SMELT_OK;
}

/* The returns, names, inference and verification of the finished graph. */
static smelt_status complete(sm_trace *tr, smelt_ctx_t *ctx,
                             smelt_tensor_t *const *outputs, int n_out)
{
    if (!outputs || n_out < 1)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trace_end: trace '%s' needs at least one output",
                      tr->g->name);
    for (int j = 0; j < n_out; j++) {
        if (!outputs[j])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "smelt_trace_end: output %d is NULL", j);
        sm_value *v = NULL;
        SM_TRY(value_of(tr, ctx, outputs[j], &v));
        if (!sm_block_add_return(tr->g->top, v))
            return sm_err_nomem(ctx);
    }
    SM_TRY(name_outputs(tr, ctx));
    if (tr->g->top->n_params == 0) {
        pthread_mutex_lock(&lock);
        sm_strbuf_appendf(&tr->warnings,
                          "trace '%s': no tensor was marked with "
                          "smelt_trace_input; the graph has no inputs\n",
                          tr->g->name);
        pthread_mutex_unlock(&lock);
    }
    smelt_status st = sm_graph_infer(ctx, tr->g);
    if (st == SMELT_OK)
        st = sm_graph_verify(ctx, tr->g);
    return st == SMELT_OK ? st
                          : sm_err_prefix(ctx, "trace '%s': ", tr->g->name);
}

smelt_status smelt_trace_end(smelt_ctx_t *ctx, smelt_tensor_t *const *outputs,
                             int n_out, smelt_graph_t **graph)
{
    if (graph)
        *graph = NULL;
    sm_trace *tr = ctx ? ctx->trace : NULL;
    if (!tr || !tr->active)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_trace_end: this ctx is not tracing");
    smelt_status st;
    if (tr->failed != SMELT_OK)
        st = sm_err(ctx, tr->failed, "trace '%s' failed: %s", tr->g->name,
                    tr->fail_msg);
    else if (!graph)
        st = sm_err(ctx, SMELT_ERR_INVALID_ARG,
                    "smelt_trace_end: graph is NULL");
    else
        st = complete(tr, ctx, outputs, n_out);
    finish(tr, st == SMELT_OK ? graph : NULL);
    return st;
}

const char *smelt_trace_warnings(const smelt_ctx_t *ctx)
{
    const sm_trace *tr = ctx ? ctx->trace : NULL;
    if (!tr)
        return "";
    pthread_mutex_lock(&lock);
    const char *s = sm_strbuf_str(&tr->warnings);
    pthread_mutex_unlock(&lock);
    return s;
}
