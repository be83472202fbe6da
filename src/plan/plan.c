/*
 * plan.c - the plan's memory: liveness of every slot over the steps,
 * in-place reuse where the chosen kernel allows it, and one arena in
 * which buffers whose lifetimes do not overlap share memory; then what a
 * plan says about itself (stats, steps, its text form) and freeing it.
 *
 * This is the one place where Smelt decides memory: the optimizer's
 * passes only rewrite the graph. Planning happens over steps rather than
 * graph nodes, because a fused region expanded into its body's nodes,
 * kernel workspaces (live for one step), views, the kernel chosen for a
 * node (whether it may write over its input) and graph outputs (written
 * into the caller's tensors, outside the arena) only exist at this level.
 * Offsets come from core/interval_fit (greedy best fit, largest first).
 */
#include "core/interval_fit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dump_dir.h"
#include "core/sized.h"
#include "core/strbuf.h"
#include "plan/plan.h"

#define ALIGN 64

typedef sm_interval buffer;

static int64_t round_up(size_t n)
{
    return ((int64_t)n + ALIGN - 1) / ALIGN * ALIGN;
}

void sm_plan_block_reads(const sm_plan *p, const sm_block *b,
                         void (*fn)(void *arg, int slot), void *arg)
{
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] && p->slot_of[n->in[k]->id] >= 0)
                fn(arg, p->slot_of[n->in[k]->id]);
        for (int k = 0; k < n->n_blocks; k++)
            sm_plan_block_reads(p, n->blocks[k], fn, arg);
    }
    for (int i = 0; i < b->n_ret; i++)
        if (p->slot_of[b->ret[i]->id] >= 0)
            fn(arg, p->slot_of[b->ret[i]->id]);
}

/* A slot that the blocks of a control node read at step `at`. */
typedef struct block_use {
    sm_plan *p;
    int at;
} block_use;

/* The slot is live until the control step that reads it. */
static void live_at(void *arg, int slot)
{
    block_use *u = arg;
    u->p->slots[slot].last = u->at;
}

static void liveness(sm_plan *p)
{
    for (int j = 0; j < p->n_steps; j++) {
        const sm_step *st = &p->steps[j];
        for (int i = 0; i < st->n_out; i++)
            if (p->slots[st->out[i]].first < 0)
                p->slots[st->out[i]].first = j;
        for (int i = 0; i < st->n_in; i++)
            if (st->in[i] >= 0)
                p->slots[st->in[i]].last = j;
        block_use u = {p, j};
        if (st->kind == SM_STEP_CONTROL)
            for (int k = 0; k < st->node->n_blocks; k++)
                sm_plan_block_reads(p, st->node->blocks[k], live_at, &u);
    }
    for (int s = 0; s < p->n_slots; s++)
        if (p->slots[s].last < p->slots[s].first)
            p->slots[s].last = p->slots[s].first;
}

static int root(const sm_plan *p, int s)
{
    while (p->slots[s].share >= 0)
        s = p->slots[s].share;
    return s;
}

static int same_shape(const sm_slot *a, const sm_slot *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

/* Output 0 of a kernel flagged SM_CPU_KERNEL_INPLACE takes the buffer of
 * an input of its shape that dies at that step: the input and every view
 * of its buffer (rlast, by root slot) are read for the last time there. */
static void share_inplace(sm_plan *p, int *rlast)
{
    for (int s = 0; s < p->n_slots; s++)
        rlast[s] = -1;
    for (int s = 0; s < p->n_slots; s++)
        if (p->slots[s].kind == SM_SLOT_ARENA &&
            p->slots[s].last > rlast[root(p, s)])
            rlast[root(p, s)] = p->slots[s].last;
    for (int j = 0; j < p->n_steps; j++) {
        const sm_step *st = &p->steps[j];
        if (st->kind != SM_STEP_KERNEL || st->n_out < 1 ||
            !(st->k->flags & SM_CPU_KERNEL_INPLACE))
            continue;
        sm_slot *o = &p->slots[st->out[0]];
        if (o->kind != SM_SLOT_ARENA || o->first != j || o->share >= 0)
            continue;
        for (int i = 0; i < st->n_in; i++) {
            int s = st->in[i];
            if (s < 0 || p->slots[s].kind != SM_SLOT_ARENA ||
                rlast[root(p, s)] != j || !same_shape(&p->slots[s], o) ||
                p->slots[root(p, s)].nbytes != o->nbytes)
                continue;
            int r = root(p, s);
            o->share = r;
            if (rlast[st->out[0]] > rlast[r])
                rlast[r] = rlast[st->out[0]];
            p->n_inplace++;
            break;
        }
    }
}

static int by_start(const void *a, const void *b)
{
    const buffer *x = *(const buffer *const *)a, *y = *(const buffer *const *)b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

/* Counts the arena's buffers (slot roots and workspaces, empty ones left
 * out) and those whose bytes another buffer also uses at another time:
 * sorted by offset, a buffer overlaps an earlier one when it starts below
 * the highest end seen so far, and a later one when the next buffer
 * starts below its own end. */
static smelt_status count_shared(smelt_ctx_t *ctx, sm_plan *p, buffer *bufs,
                                 int n)
{
    buffer **order = sm_malloc(sizeof *order * ((size_t)n + 1));
    if (!order)
        return sm_err_nomem(ctx);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (bufs[i].size > 0 && bufs[i].last >= bufs[i].first)
            order[k++] = &bufs[i];
    qsort(order, (size_t)k, sizeof *order, by_start);
    int64_t high = 0;
    p->n_buffers = k;
    p->n_shared = 0;
    for (int i = 0; i < k; i++) {
        int64_t end = order[i]->offset + order[i]->size;
        p->n_shared += (i > 0 && order[i]->offset < high) ||
                       (i + 1 < k && order[i + 1]->offset < end);
        if (end > high)
            high = end;
    }
    sm_free(order);
    return SMELT_OK;
}

smelt_status sm_plan_assign_memory(smelt_ctx_t *ctx, sm_plan *p)
{
    /* buffers 0..n_slots) belong to slots (empty unless an arena root),
     * then one per step for its workspace */
    int n = p->n_slots + p->n_steps;
    buffer *bufs = sm_calloc((size_t)n + 1, sizeof *bufs);
    void *scratch = sm_malloc(sm_interval_fit_scratch(n));
    int *rlast = sm_calloc((size_t)p->n_slots + 1, sizeof *rlast);
    if (!bufs || !scratch || !rlast) {
        sm_free(bufs);
        sm_free(scratch);
        sm_free(rlast);
        return sm_err_nomem(ctx);
    }
    /* start over: remat.c plans memory again after adding steps */
    p->n_inplace = 0;
    p->unshared_bytes = 0;
    for (int s = 0; s < p->n_slots; s++) {
        sm_slot *sl = &p->slots[s];
        sl->first = sl->last = -1;
        if (!sl->view)
            sl->share = -1;
    }
    liveness(p);
    share_inplace(p, rlast);
    sm_free(rlast);
    /* Every buffer starts empty before any slot extends its root's: a
     * slot may share a root with a higher index (an expanded fused
     * region's output slot is made before its body's values), and
     * clearing the root on reaching it would forget the sharers' uses. */
    for (int s = 0; s < p->n_slots; s++) {
        bufs[s].first = p->slots[s].first;
        bufs[s].last = -1;
    }
    for (int s = 0; s < p->n_slots; s++) {
        const sm_slot *sl = &p->slots[s];
        if (sl->kind != SM_SLOT_ARENA)
            continue;
        if (__builtin_add_overflow(p->unshared_bytes, round_up(sl->nbytes),
                                   &p->unshared_bytes))
            p->unshared_bytes = INT64_MAX;
        buffer *r = &bufs[root(p, s)];
        if (sl->share < 0)
            r->size = round_up(sl->nbytes);
        if (sl->last > r->last)
            r->last = sl->last;
    }
    for (int j = 0; j < p->n_steps; j++) {
        buffer *b = &bufs[p->n_slots + j];
        b->first = b->last = j;
        b->size = round_up(p->steps[j].ws_bytes);
        p->unshared_bytes += b->size;
    }
    p->arena_bytes = sm_interval_fit(bufs, n, scratch);
    smelt_status st = count_shared(ctx, p, bufs, n);
    for (int s = 0; s < p->n_slots; s++)
        if (p->slots[s].kind == SM_SLOT_ARENA)
            p->slots[s].offset = bufs[root(p, s)].offset;
    for (int j = 0; j < p->n_steps; j++)
        p->steps[j].ws_offset = bufs[p->n_slots + j].offset;
    sm_free(scratch);
    sm_free(bufs);
    return st;
}

void sm_plan_free_steps(sm_plan *p)
{
    for (int j = 0; p->steps && j < p->n_steps; j++) {
        sm_step *st = &p->steps[j];
        if (!st->copy_of)
            sm_free(st->packed); /* one block (registry.h) */
        st->packed = NULL;
    }
}

void smelt_plan_free(smelt_plan_t *p)
{
    if (!p)
        return;
    sm_session_free_internal(p->own);
    sm_plan_free_steps(p);
    pthread_mutex_destroy(&p->mu);
    sm_graph_free(p->g);
    sm_arena_free(&p->arena);
    sm_free(p);
}

/* ---- what a plan says about itself --------------------------------------- */

/* The first versions of the result structs end with these fields. */
#define PLAN_STATS_V1 SM_FIELD_END(smelt_plan_stats, isa)
#define PLAN_STEP_INFO_V1 SM_FIELD_END(smelt_plan_step_info, bytes_write)

smelt_status smelt_plan_get_stats(const smelt_plan_t *p,
                                  smelt_plan_stats *caller)
{
    if (!p || !caller)
        return SMELT_ERR_INVALID_ARG;
    SM_TRY(sm_sized_check(NULL, "smelt_plan_stats", caller, PLAN_STATS_V1));
    smelt_plan_stats s, *out = &s;
    memset(out, 0, sizeof *out);
    out->arena_bytes = p->arena_bytes;
    out->unshared_bytes = p->unshared_bytes;
    out->weight_bytes = p->weight_bytes;
    out->steps = p->n_steps;
    out->dynamic_steps = p->n_dynamic;
    out->inplace = p->n_inplace;
    out->channels_last = p->n_nhwc;
    out->channel_blocked = p->n_blocked;
    out->recomputed = p->n_recomputed;
    out->arena_buffers = p->n_buffers;
    out->shared_buffers = p->n_shared;
    out->threads = p->threads;
    for (int j = 0; j < p->n_steps; j++) {
        out->kernel_steps += p->steps[j].kind == SM_STEP_KERNEL;
        out->ref_steps += p->steps[j].kind == SM_STEP_REF;
    }
    sm_cpu_features_str(p->features, out->isa, sizeof out->isa);
    sm_sized_out(caller, out, sizeof *out);
    return SMELT_OK;
}

int smelt_plan_num_steps(const smelt_plan_t *p)
{
    return p ? p->n_steps : 0;
}

static const char *step_kernel_name(const sm_step *st)
{
    switch (st->kind) {
    case SM_STEP_KERNEL: return st->k->name;
    case SM_STEP_REF: return "ref";
    case SM_STEP_CONTROL: return "control";
    case SM_STEP_DYNAMIC: return "dynamic";
    case SM_STEP_COPY: return "copy";
    case SM_STEP_VIEW: return "view";
    }
    return "?";
}

smelt_status smelt_plan_step(const smelt_plan_t *p, int i,
                             smelt_plan_step_info *caller)
{
    if (!p || !caller || i < 0 || i >= p->n_steps)
        return SMELT_ERR_INVALID_ARG;
    SM_TRY(sm_sized_check(NULL, "smelt_plan_step_info", caller,
                          PLAN_STEP_INFO_V1));
    const sm_step *st = &p->steps[i];
    smelt_plan_step_info s, *out = &s;
    memset(out, 0, sizeof *out);
    out->name = st->node->name ? st->node->name
                : st->n_out    ? p->slots[st->out[0]].v->name
                               : "";
    out->op = st->kind == SM_STEP_COPY ? "Copy" : st->info->name;
    out->recompute_of = st->copy_of - 1;
    out->value = st->n_out ? p->slots[st->out[0]].v->name : "";
    out->value_bytes = st->n_out ? (int64_t)p->slots[st->out[0]].nbytes : 0;
    out->kernel = step_kernel_name(st);
    if (st->kind != SM_STEP_COPY) {
        out->flops = st->cost.flops;
        out->bytes_read = st->cost.bytes_read;
        out->bytes_write = st->cost.bytes_write;
    }
    sm_sized_out(caller, out, sizeof *out);
    return SMELT_OK;
}

int smelt_plan_num_inputs(const smelt_plan_t *p)
{
    return p ? p->n_inputs : 0;
}

int smelt_plan_num_outputs(const smelt_plan_t *p)
{
    return p ? p->n_outputs : 0;
}

static const sm_slot *io_slot(const smelt_plan_t *p, int i, int output)
{
    if (!p || i < 0 || i >= (output ? p->n_outputs : p->n_inputs))
        return NULL;
    return &p->slots[output ? p->out_slot[i] : p->in_slot[i]];
}

#define IO_GETTERS(which, output)                                              \
    smelt_dtype smelt_plan_##which##_dtype(const smelt_plan_t *p, int i)       \
    {                                                                          \
        const sm_slot *s = io_slot(p, i, output);                              \
        return s && s->kind != SM_SLOT_DYNAMIC ? s->dtype                      \
                                               : SMELT_DTYPE_UNDEFINED;        \
    }                                                                          \
    int smelt_plan_##which##_ndim(const smelt_plan_t *p, int i)                \
    {                                                                          \
        const sm_slot *s = io_slot(p, i, output);                              \
        return s && s->kind != SM_SLOT_DYNAMIC ? s->ndim : -1;                 \
    }                                                                          \
    int64_t smelt_plan_##which##_dim(const smelt_plan_t *p, int i, int axis)   \
    {                                                                          \
        const sm_slot *s = io_slot(p, i, output);                              \
        return s && s->kind != SM_SLOT_DYNAMIC && axis >= 0 && axis < s->ndim  \
                   ? s->dims[axis]                                             \
                   : -1;                                                       \
    }

IO_GETTERS(input, 0)
IO_GETTERS(output, 1)

static const char *slot_where(const sm_slot *s, char *buf, size_t size)
{
    switch (s->kind) {
    case SM_SLOT_INPUT: snprintf(buf, size, "input %d", s->index); break;
    case SM_SLOT_CONST: snprintf(buf, size, "const"); break;
    case SM_SLOT_OUTPUT: snprintf(buf, size, "output %d", s->index); break;
    case SM_SLOT_DYNAMIC: snprintf(buf, size, "dynamic"); break;
    case SM_SLOT_ALIAS: snprintf(buf, size, "view of slot %d", s->alias); break;
    case SM_SLOT_ARENA:
        snprintf(buf, size, "@%lld%s", (long long)s->offset,
                 s->share >= 0 ? " (shared)" : "");
        break;
    }
    return buf;
}

/* The formats of a step's operands (layout.c): " nhwc:in,out",
 * " nhwc:in b16:out", ... */
static void layout_str(sm_strbuf *b, unsigned bits)
{
    const char *in = bits & SM_NHWC_IN ? "nhwc" : bits & SM_B16_IN ? "b16" : 0;
    const char *out = bits & SM_NHWC_OUT  ? "nhwc"
                      : bits & SM_B16_OUT ? "b16"
                                          : 0;
    if (in && out && !strcmp(in, out))
        sm_strbuf_appendf(b, " %s:in,out", in);
    else {
        if (in)
            sm_strbuf_appendf(b, " %s:in", in);
        if (out)
            sm_strbuf_appendf(b, " %s:out", out);
    }
}

smelt_status smelt_plan_print(smelt_ctx_t *ctx, const smelt_plan_t *p,
                              char **out)
{
    if (!p || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_plan_print: NULL");
    smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &s);
    sm_strbuf b;
    sm_strbuf_init(&b);
    sm_strbuf_appendf(
        &b,
        "# plan '%s': %d steps (%d optimized, %d reference, %d "
        "dynamic), %d threads, isa %s\n"
        "# arena %lld bytes (unshared %lld), weights %lld "
        "bytes, %d of %d buffers shared, %d in place\n"
        "# layout: %d values channels-last, %d channel-blocked, "
        "the others NCHW\n"
        "# recomputed: %d values (memory budget %lld bytes)\n",
        p->g->name ? p->g->name : "", s.steps, s.kernel_steps, s.ref_steps,
        s.dynamic_steps, s.threads, s.isa, (long long)s.arena_bytes,
        (long long)s.unshared_bytes, (long long)s.weight_bytes,
        s.shared_buffers, s.arena_buffers, s.inplace, s.channels_last,
        s.channel_blocked, s.recomputed, (long long)p->memory_budget);
    for (int j = 0; j < p->n_steps; j++) {
        const sm_step *st = &p->steps[j];
        smelt_plan_step_info info = SMELT_STRUCT_INIT(smelt_plan_step_info);
        smelt_plan_step(p, j, &info);
        sm_strbuf_appendf(&b, "%4d %-18s %-22s", j, info.op, info.kernel);
        if (st->kind == SM_STEP_KERNEL) { /* the kernel's decision */
            char cs[160];
            sm_cpu_config_str(&st->cfg, cs, sizeof cs);
            if (cs[0])
                sm_strbuf_appendf(&b, " [%s]", cs);
        }
        if (st->nhwc)
            layout_str(&b, st->nhwc);
        for (int i = 0; i < st->n_out; i++) {
            const sm_slot *sl = &p->slots[st->out[i]];
            char ts[160], w[64];
            sm_shape_str(sl->dtype, sl->ndim, sl->dims, ts, sizeof ts);
            sm_strbuf_appendf(&b, " %%%s:%s %s [%d..%d]", sl->v->name,
                              sl->kind == SM_SLOT_DYNAMIC ? "?" : ts,
                              slot_where(sl, w, sizeof w), sl->first, sl->last);
        }
        sm_strbuf_puts(&b, " <-");
        for (int i = 0; i < st->n_in; i++)
            sm_strbuf_appendf(&b, " %s%s", st->in[i] < 0 ? "_" : "%",
                              st->in[i] < 0 ? "" : p->slots[st->in[i]].v->name);
        if (st->ws_bytes)
            sm_strbuf_appendf(&b, " ws %zu@%lld", st->ws_bytes,
                              (long long)st->ws_offset);
        if (st->copy_of)
            sm_strbuf_appendf(&b, " recompute of step %d", st->copy_of - 1);
        if (st->kind == SM_STEP_KERNEL && st->cfg.why)
            sm_strbuf_appendf(&b, " (%s)", st->cfg.why);
        sm_strbuf_putc(&b, '\n');
    }
    return sm_strbuf_take(&b, ctx, out);
}

smelt_status sm_plan_dump(smelt_ctx_t *ctx, const sm_plan *p, const char *dir,
                          const char *why)
{
    char *text = NULL;
    if (p) {
        SM_TRY(smelt_plan_print(ctx, p, &text));
        smelt_status st = sm_dump_append(ctx, dir, "plan.txt", "plan", text);
        sm_free(text);
        return st;
    }
    sm_strbuf b;
    sm_strbuf_init(&b);
    sm_strbuf_appendf(&b, "# no plan: %s\n", why ? why : "");
    if (sm_strbuf_take(&b, NULL, &text) != SMELT_OK)
        return SMELT_ERR_NOMEM;
    smelt_status st = sm_dump_append(NULL, dir, "plan.txt", "plan", text);
    sm_free(text);
    return st;
}
