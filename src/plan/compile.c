/*
 * compile.c - from a graph to a plan: specialize the graph's symbolic
 * dims to concrete sizes, optimize it, then lower its top block to steps
 * over slots, choosing a CPU kernel per node (registry.h); pack.c then
 * prepacks the weights once.
 *
 * A FusedElementwise that no CPU kernel takes is expanded: its body's
 * nodes become steps of their own over arena buffers, so running it
 * allocates nothing. If, Loop and nodes whose output shape depends on
 * data run through the reference path at run time (SM_STEP_CONTROL,
 * SM_STEP_DYNAMIC) and are the only steps that allocate while running.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/dump_dir.h"
#include "core/sized.h"
#include "ir/dims.h"
#include "ir/infer.h"
#include "ir/rewrite.h"
#include "ir/shape_util.h"
#include "plan/fused_prog.h"
#include "plan/plan.h"

/* The first version of smelt_plan_options ends with `reference`. */
#define PLAN_OPTIONS_V1 SM_FIELD_END(smelt_plan_options, reference)

/* This library's defaults, in a struct of its own size. */
static void plan_options_defaults(smelt_plan_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->threads = 1;
    o->level = 3;
}

smelt_status smelt_plan_options_init(smelt_plan_options *o, size_t struct_size)
{
    smelt_plan_options d;
    plan_options_defaults(&d);
    return sm_sized_init(o, struct_size, &d, sizeof d, PLAN_OPTIONS_V1);
}

/* Binds each symbolic dim of input p to the size the example input has,
 * after checking that the example fits p's declared type. */
static smelt_status bind_example(smelt_ctx_t *ctx, sm_value *p,
                                 const sm_tensor *t, sm_dim_binds *bs)
{
    sm_type *ty = &p->type;
    char want[160], got[160];
    sm_type_str(ty, want, sizeof want);
    sm_shape_str(t->dtype, t->ndim, t->dims, got, sizeof got);
    int ok = ty->dtype == SMELT_DTYPE_UNDEFINED || ty->dtype == t->dtype;
    ok = ok && (ty->ndim < 0 || ty->ndim == t->ndim);
    for (int d = 0; ok && ty->ndim >= 0 && d < t->ndim; d++)
        ok = ty->dims[d].size < 0 || ty->dims[d].size == t->dims[d];
    if (!ok)
        return sm_err(ctx, SMELT_ERR_SHAPE, "input '%s': expected %s, got %s",
                      p->name, want, got);
    for (int d = 0; ty->ndim >= 0 && d < t->ndim; d++) {
        const char *sym = ty->dims[d].sym;
        if (!sym || ty->dims[d].size >= 0)
            continue;
        const sm_dim_bind *b = sm_dims_find(bs, sym);
        if (b && b->size != t->dims[d])
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "plan: dim '%s' is %lld, but input '%s' has %lld",
                          sym, (long long)b->size, p->name,
                          (long long)t->dims[d]);
        if (!b && bs->n < SM_DIMS_MAX && strlen(sym) < sizeof bs->b[0].name) {
            strcpy(bs->b[bs->n].name, sym);
            bs->b[bs->n++].size = t->dims[d];
        }
    }
    sm_type_from_tensor(ty, t);
    return SMELT_OK;
}

/* Gives every symbolic dim of every value its bound size, then checks
 * that each graph input is concrete. */
static smelt_status specialize(smelt_ctx_t *ctx, sm_graph *g,
                               const smelt_plan_options *o)
{
    sm_dim_binds bs = {0};
    SM_TRY(sm_dims_parse(ctx, "plan", o->dims, &bs));
    const sm_block *top = g->top;
    if (o->inputs) {
        if (o->n_inputs != top->n_params)
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "plan: graph '%s' takes %d inputs, %d given", g->name,
                          top->n_params, o->n_inputs);
        for (int i = 0; i < top->n_params; i++) {
            if (!o->inputs[i])
                return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                              "plan: input '%s' is NULL", top->params[i]->name);
            SM_TRY(bind_example(ctx, top->params[i], o->inputs[i], &bs));
        }
    }
    sm_dims_apply(g, &bs);
    for (int i = 0; i < top->n_params; i++) {
        const sm_type *t = &top->params[i]->type;
        if (sm_type_known(t))
            continue;
        char ts[160];
        sm_type_str(t, ts, sizeof ts);
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "plan: input '%s' is %s; a plan needs concrete shapes "
                      "(bind symbolic dims with dims=\"name=size\" or give "
                      "example inputs)",
                      top->params[i]->name, ts);
    }
    return SMELT_OK;
}

/* ---- steps and slots ----------------------------------------------------- */

typedef struct builder {
    smelt_ctx_t *ctx;
    sm_plan *p;
    int cap_slots, cap_steps;
    int reference;
    unsigned char *is_output; /* by value id: the graph returns it */
} builder;

/* Ops whose output is their first input's bytes with another shape: the
 * plan makes the output a view, and the step does nothing. */
static const sm_op view_ops[] = {SM_OP_Identity, SM_OP_Reshape, SM_OP_Flatten,
                                 SM_OP_Squeeze, SM_OP_Unsqueeze};

/* A new slot for v of the given kind, typed from v. */
static int add_slot(builder *b, const sm_value *v, sm_slot_kind kind)
{
    SM_ASSERT(b->p->n_slots < b->cap_slots);
    int s = b->p->n_slots++;
    sm_slot *sl = &b->p->slots[s];
    sl->kind = kind;
    sl->v = v;
    sl->share = -1;
    sl->alias = -1;
    sl->index = -1;
    sl->first = sl->last = -1;
    sl->dtype = v->type.dtype;
    sl->ndim = v->type.ndim;
    if (kind != SM_SLOT_DYNAMIC) {
        sl->numel = 1;
        for (int d = 0; d < sl->ndim; d++) {
            sl->dims[d] = v->type.dims[d].size;
            sl->numel *= sl->dims[d];
        }
        sl->nbytes = (size_t)sl->numel * smelt_dtype_size(sl->dtype);
    }
    b->p->slot_of[v->id] = s;
    return s;
}

static int add_const(builder *b, const sm_value *v)
{
    int s = add_slot(b, v, SM_SLOT_CONST);
    b->p->slots[s].data = v->data;
    b->p->weight_bytes += (int64_t)v->data->nbytes;
    return s;
}

/* Whether v's type is concrete and small enough to plan. */
static int plannable(const sm_value *v)
{
    return sm_type_known(&v->type) &&
           sm_type_bytes(&v->type) < (double)SM_ALLOC_LIMIT;
}

/* The slot kind for a node output v: a graph output is written straight
 * into the caller's tensor, others go into the arena, and values whose
 * shape only the run knows are dynamic. */
static sm_slot_kind out_kind(const builder *b, const sm_value *v)
{
    if (!plannable(v))
        return SM_SLOT_DYNAMIC;
    return b->is_output[v->id] ? SM_SLOT_OUTPUT : SM_SLOT_ARENA;
}

/* Makes step st (a view op) a view: its output shares its input's
 * memory, when the bytes are the same and the output is an arena value.
 * Returns whether it did. */
static int make_view(builder *b, sm_step *st)
{
    int is_view = 0;
    for (size_t i = 0; i < sizeof view_ops / sizeof view_ops[0]; i++)
        is_view |= st->node->op == view_ops[i];
    if (!is_view || st->n_out != 1 || st->in[0] < 0)
        return 0;
    sm_slot *in = &b->p->slots[st->in[0]], *out = &b->p->slots[st->out[0]];
    if (out->kind != SM_SLOT_ARENA || in->kind == SM_SLOT_DYNAMIC ||
        in->dtype != out->dtype || in->nbytes != out->nbytes)
        return 0;
    if (in->kind == SM_SLOT_ARENA) {
        out->share = st->in[0];
        out->view = 1;
    } else {
        out->kind = SM_SLOT_ALIAS;
        out->alias = in->kind == SM_SLOT_ALIAS ? in->alias : st->in[0];
    }
    st->kind = SM_STEP_VIEW;
    return 1;
}

static void operand_of(const sm_slot *s, sm_kernel_operand *o)
{
    memset(o, 0, sizeof *o);
    o->present = 1;
    o->dtype = s->dtype;
    o->ndim = s->ndim;
    memcpy(o->dims, s->dims, sizeof o->dims);
    o->is_const = s->kind == SM_SLOT_CONST;
    o->data = o->is_const && s->data ? s->data->data : NULL;
}

/* The cost of step st from its slots' types. */
static void step_cost(const sm_plan *p, sm_step *st)
{
    sm_type tin[SM_KERNEL_MAX_OPERANDS], tout[SM_KERNEL_MAX_OPERANDS];
    sm_operand ops[SM_KERNEL_MAX_OPERANDS];
    const sm_node *n = st->node;
    for (int i = 0; i < st->n_in; i++) {
        ops[i].present = st->in[i] >= 0;
        ops[i].type = &tin[i];
        ops[i].data = NULL;
        if (n->in[i])
            tin[i] = n->in[i]->type;
        else
            sm_type_unknown(&tin[i]);
        if (st->in[i] >= 0 && p->slots[st->in[i]].kind == SM_SLOT_CONST)
            ops[i].data = p->slots[st->in[i]].data;
    }
    for (int i = 0; i < st->n_out; i++)
        tout[i] = n->out[i]->type;
    sm_shape_ctx s = {
        st->info, sm_node_attrs(n), st->n_in, ops, st->n_out, tout, n, NULL};
    memset(&st->cost, 0, sizeof st->cost);
    if (st->info->cost)
        st->info->cost(&s, &st->cost);
}

void sm_plan_step_desc(const sm_plan *p, const sm_step *st, sm_kernel_desc *d,
                       sm_kernel_operand *in, sm_kernel_operand *out)
{
    for (int i = 0; i < st->n_in; i++) {
        if (st->in[i] < 0)
            memset(&in[i], 0, sizeof in[i]);
        else
            operand_of(&p->slots[st->in[i]], &in[i]);
    }
    for (int i = 0; i < st->n_out; i++)
        operand_of(&p->slots[st->out[i]], &out[i]);
    *d = (sm_kernel_desc){st->node->op, sm_node_attrs(st->node),
                          st->n_in,     st->n_out,
                          in,           out,
                          p->threads,   st->nhwc,
                          st->ew};
}

/* Whether an operand of d holds no element. Optimized kernels never get
 * one: they split work by images, rows and channels and size scratch
 * from them (the direct convolution divided by the batch), and an empty
 * tensor is never a hot path, so such a step runs the reference kernel,
 * which test_ops_zero checks on every op with each dimension empty. */
static int desc_has_empty(const sm_kernel_desc *d)
{
    for (int i = 0; i < d->n_in + d->n_out; i++) {
        const sm_kernel_operand *o =
            i < d->n_in ? &d->in[i] : &d->out[i - d->n_in];
        for (int k = 0; o->present && k < o->ndim; k++)
            if (o->dims[k] == 0)
                return 1;
    }
    return 0;
}

/* The kernel for step st (all slots static); st->k stays NULL when the
 * reference runs it. The kernel decides how it runs once the operand
 * formats are chosen (sm_plan_configure), and weights are prepacked once
 * every step exists (pack.c), so that the plan knows who else reads
 * them. */
static void choose_kernel(builder *b, sm_step *st)
{
    sm_plan *p = b->p;
    sm_kernel_operand in[SM_KERNEL_MAX_OPERANDS], out[SM_KERNEL_MAX_OPERANDS];
    sm_kernel_desc d;
    sm_plan_step_desc(p, st, &d, in, out);
    st->k = b->reference || desc_has_empty(&d)
                ? NULL
                : sm_cpu_kernel_choose(&d, p->features);
    if (!st->k)
        return;
    st->kind = SM_STEP_KERNEL;
}

void sm_plan_configure(sm_plan *p)
{
    for (int j = 0; j < p->n_steps; j++) {
        sm_step *st = &p->steps[j];
        if (st->kind != SM_STEP_KERNEL)
            continue;
        sm_kernel_operand in[SM_KERNEL_MAX_OPERANDS],
            out[SM_KERNEL_MAX_OPERANDS];
        sm_kernel_desc d;
        sm_plan_step_desc(p, st, &d, in, out);
        sm_cpu_kernel_configure(st->k, &d, &st->cfg);
        st->ws_bytes = st->cfg.ws_bytes;
    }
}

static sm_step *new_step(builder *b, const sm_node *n, sm_step_kind kind,
                         int n_in, int n_out)
{
    SM_ASSERT(b->p->n_steps < b->cap_steps);
    sm_step *st = &b->p->steps[b->p->n_steps++];
    st->kind = kind;
    st->node = n;
    st->info = sm_op_info_get(n->op);
    st->n_in = n_in;
    st->n_out = n_out;
    st->ew = NULL;
    st->in = sm_arena_alloc(&b->p->arena, sizeof(int) * ((size_t)n_in + 1));
    st->out = sm_arena_alloc(&b->p->arena, sizeof(int) * ((size_t)n_out + 1));
    return st->in && st->out ? st : NULL;
}

/* One step for node n; its outputs get new slots unless a fused body's
 * return already mapped them. */
static smelt_status add_node_step(builder *b, const sm_node *n)
{
    sm_plan *p = b->p;
    const sm_op_info *info = sm_op_info_get(n->op);
    if (n->n_in > SM_KERNEL_MAX_OPERANDS || n->n_out > SM_KERNEL_MAX_OPERANDS)
        return sm_err(b->ctx, SMELT_ERR_LIMIT,
                      "plan: %s has more than %d "
                      "operands",
                      info->name, SM_KERNEL_MAX_OPERANDS);
    sm_step *st = new_step(b, n, SM_STEP_REF, n->n_in, n->n_out);
    if (!st)
        return sm_err_nomem(b->ctx);
    int dyn_in = 0, dyn_out = 0;
    for (int i = 0; i < n->n_in; i++) {
        st->in[i] = n->in[i] ? p->slot_of[n->in[i]->id] : -1;
        if (n->in[i] && st->in[i] < 0)
            return sm_err(b->ctx, SMELT_ERR_VERIFY,
                          "plan: %s reads %%%s, which nothing defines "
                          "before it",
                          info->name, n->in[i]->name);
        dyn_in |= st->in[i] >= 0 && p->slots[st->in[i]].kind == SM_SLOT_DYNAMIC;
    }
    for (int i = 0; i < n->n_out; i++) {
        int s = p->slot_of[n->out[i]->id];
        if (s < 0)
            s = add_slot(b, n->out[i], out_kind(b, n->out[i]));
        st->out[i] = s;
        dyn_out |= p->slots[s].kind == SM_SLOT_DYNAMIC;
    }
    step_cost(p, st);
    if (n->op == SM_OP_FusedElementwise && !b->reference) {
        sm_ew_prog *pg = sm_arena_alloc(&p->arena, sizeof *pg);
        if (!pg)
            return sm_err_nomem(b->ctx);
        st->ew = sm_ew_prog_make(n, pg) ? pg : NULL;
    }
    if (!dyn_in && !dyn_out && !b->reference && make_view(b, st))
        return SMELT_OK;
    if (!dyn_in && !dyn_out)
        choose_kernel(b, st);
    if (st->kind == SM_STEP_KERNEL)
        return SMELT_OK;
    if (info->cls == SM_CLASS_CONTROL) {
        st->kind = SM_STEP_CONTROL;
        st->hints = sm_arena_alloc(&p->arena, sizeof(sm_out_hint) *
                                                  ((size_t)n->n_out + 1));
        if (!st->hints)
            return sm_err_nomem(b->ctx);
        for (int i = 0; i < n->n_out; i++) {
            const sm_type *t = &n->out[i]->type;
            st->hints[i].dtype = t->dtype;
            st->hints[i].ndim = t->ndim;
            for (int d = 0; d < t->ndim; d++)
                st->hints[i].dims[d] = t->dims[d].size;
        }
    } else if (dyn_out) {
        st->kind = SM_STEP_DYNAMIC;
    }
    if (st->kind != SM_STEP_REF)
        p->n_dynamic++;
    return SMELT_OK;
}

/* Whether FusedElementwise n can run as its body's nodes: the fused CPU
 * kernel cannot run its body (no program for it, fused_prog.h), and the
 * body is control-free with concrete types. */
static int expandable(builder *b, const sm_node *n)
{
    if (n->op != SM_OP_FusedElementwise || n->n_blocks != 1)
        return 0;
    const sm_block *body = n->blocks[0];
    if (body->n_params != n->n_in || body->n_ret != n->n_out)
        return 0;
    for (int i = 0; i < n->n_in; i++)
        if (!n->in[i] || b->p->slot_of[n->in[i]->id] < 0 ||
            b->p->slots[b->p->slot_of[n->in[i]->id]].kind == SM_SLOT_DYNAMIC)
            return 0;
    for (int i = 0; i < n->n_out; i++)
        if (!plannable(n->out[i]))
            return 0;
    for (int i = 0; i < body->n_nodes; i++) {
        const sm_node *m = body->nodes[i];
        if (sm_op_info_get(m->op)->cls == SM_CLASS_CONTROL)
            return 0;
        for (int k = 0; k < m->n_out; k++)
            if (!plannable(m->out[k]))
                return 0;
    }
    if (b->reference)
        return 1;
    /* the fused CPU kernel (fused_ew.c) wins where it takes the body */
    sm_ew_prog pg;
    return !sm_ew_prog_make(n, &pg);
}

/* The body of FusedElementwise n as steps: parameters alias n's inputs,
 * a return computed by a body node writes n's output directly, other
 * returns (a parameter, a constant, a value returned twice) are copied. */
static smelt_status expand_fused(builder *b, const sm_node *n)
{
    sm_plan *p = b->p;
    const sm_block *body = n->blocks[0];
    for (int i = 0; i < n->n_in; i++)
        p->slot_of[body->params[i]->id] = p->slot_of[n->in[i]->id];
    for (int i = 0; i < body->n_consts; i++)
        add_const(b, body->consts[i]);
    int *copy = sm_calloc((size_t)n->n_out + 1, sizeof *copy);
    if (!copy)
        return sm_err_nomem(b->ctx);
    for (int i = 0; i < n->n_out; i++) {
        const sm_value *r = body->ret[i];
        int s = add_slot(b, n->out[i], out_kind(b, n->out[i]));
        if (r->def && r->def->owner == body && p->slot_of[r->id] < 0)
            p->slot_of[r->id] = s;
        else
            copy[i] = 1;
    }
    smelt_status st = SMELT_OK;
    for (int i = 0; i < body->n_nodes && st == SMELT_OK; i++)
        st = add_node_step(b, body->nodes[i]);
    for (int i = 0; i < n->n_out && st == SMELT_OK; i++) {
        if (!copy[i])
            continue;
        sm_step *c = new_step(b, n, SM_STEP_COPY, 1, 1);
        if (!c) {
            st = sm_err_nomem(b->ctx);
            break;
        }
        c->in[0] = p->slot_of[body->ret[i]->id];
        c->out[0] = p->slot_of[n->out[i]->id];
    }
    sm_free(copy);
    return st;
}

/* Graph outputs: a slot a step writes was made an OUTPUT slot, the
 * caller's tensor; any other (an input, a constant, a dynamic value, a
 * view, a value returned twice) is copied out at the end of a run. */
static smelt_status bind_outputs(builder *b)
{
    sm_plan *p = b->p;
    const sm_block *top = p->g->top;
    p->n_outputs = top->n_ret;
    p->out_slot =
        sm_arena_alloc(&p->arena, sizeof(int) * (size_t)(top->n_ret + 1));
    p->out_copy =
        sm_arena_alloc(&p->arena, sizeof(int) * (size_t)(top->n_ret + 1));
    if (!p->out_slot || !p->out_copy)
        return sm_err_nomem(b->ctx);
    for (int i = 0; i < top->n_ret; i++) {
        int s = p->slot_of[top->ret[i]->id];
        if (s < 0)
            return sm_err(b->ctx, SMELT_ERR_VERIFY,
                          "plan: output %%%s has no value", top->ret[i]->name);
        p->out_slot[i] = s;
        if (p->slots[s].kind == SM_SLOT_OUTPUT && p->slots[s].index < 0)
            p->slots[s].index = i;
        else
            p->out_copy[i] = 1;
    }
    return SMELT_OK;
}

smelt_status sm_plan_build(smelt_ctx_t *ctx, sm_plan *p)
{
    const sm_block *top = p->g->top;
    builder b = {ctx, p, p->g->n_values + 1, 1, 0, NULL};
    for (int j = 0; j < top->n_nodes; j++) {
        const sm_node *n = top->nodes[j];
        b.cap_steps += 1 + n->n_out;
        for (int k = 0; k < n->n_blocks; k++)
            b.cap_steps += sm_block_count_nodes(n->blocks[k]);
    }
    b.reference = p->reference;
    p->slots = sm_arena_alloc(&p->arena, sizeof(sm_slot) * (size_t)b.cap_slots);
    p->steps = sm_arena_alloc(&p->arena, sizeof(sm_step) * (size_t)b.cap_steps);
    p->slot_of = sm_arena_alloc(&p->arena, sizeof(int) * (size_t)b.cap_slots);
    p->in_slot =
        sm_arena_alloc(&p->arena, sizeof(int) * ((size_t)top->n_params + 1));
    b.is_output = sm_arena_alloc(&p->arena, (size_t)b.cap_slots);
    if (!p->slots || !p->steps || !p->slot_of || !p->in_slot || !b.is_output)
        return sm_err_nomem(ctx);
    for (int i = 0; i < top->n_ret; i++)
        b.is_output[top->ret[i]->id] = 1;
    for (int i = 0; i < b.cap_slots; i++)
        p->slot_of[i] = -1;
    p->n_inputs = top->n_params;
    for (int i = 0; i < top->n_params; i++) {
        p->in_slot[i] = add_slot(&b, top->params[i], SM_SLOT_INPUT);
        p->slots[p->in_slot[i]].index = i;
    }
    for (int i = 0; i < top->n_consts; i++)
        add_const(&b, top->consts[i]);
    for (int j = 0; j < top->n_nodes; j++) {
        const sm_node *n = top->nodes[j];
        smelt_status st =
            expandable(&b, n) ? expand_fused(&b, n) : add_node_step(&b, n);
        if (st != SMELT_OK)
            return st;
    }
    return bind_outputs(&b);
}

/* ---- compile ----------------------------------------------------------- */

/* Node outputs of the top block whose type is not concrete. */
static int count_unknown(const sm_graph *g)
{
    int n = 0;
    for (int j = 0; j < g->top->n_nodes; j++)
        for (int k = 0; k < g->top->nodes[j]->n_out; k++)
            n += !sm_type_known(&g->top->nodes[j]->out[k]->type);
    return n;
}

/* The optimizer at `level`, then inference again: folding may have made
 * constants of what decides a shape (a Slice's ends, a Reshape's shape
 * computed from Shape nodes), and the shapes learnt let the next round
 * fold more. Rounds go on while they make more shapes concrete. */
static smelt_status optimize(smelt_ctx_t *ctx, sm_graph *g, int level,
                             const char *debug_dir, const char *disable)
{
    smelt_opt_options oo;
    smelt_opt_options_default(&oo);
    oo.level = level;
    oo.debug_dir = debug_dir;
    oo.disable = disable;
    int unknown = count_unknown(g);
    for (int round = 0; round < 4; round++) {
        SM_TRY(smelt_graph_optimize(ctx, g, &oo, NULL));
        SM_TRY(sm_graph_infer(ctx, g));
        int now = count_unknown(g);
        if (now == 0 || now >= unknown)
            break;
        unknown = now;
    }
    return SMELT_OK;
}

/* Checks the options, filling p's threads, features and reference. */
static smelt_status read_options(smelt_ctx_t *ctx, const smelt_plan_options *o,
                                 sm_plan *p)
{
    int ok;
    unsigned mask = sm_cpu_level_mask(o->isa, &ok);
    if (!ok)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan: unknown isa '%s' (scalar, avx2, avx512)", o->isa);
    if (o->threads < 0 || o->threads > 1024)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan: threads must be 0..1024, got %d", o->threads);
    if (o->level < 0 || o->level > 3)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan: level must be 0..3, got %d", o->level);
    if (o->n_inputs < 0 || (o->n_inputs > 0 && !o->inputs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan: %d example inputs but no array", o->n_inputs);
    p->features = sm_cpu_features() & mask;
    p->threads = o->threads ? o->threads : sm_cpu_count();
    p->reference = o->reference != 0;
    if (o->timeout_ms < 0)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan: timeout_ms must be >= 0, got %lld",
                      (long long)o->timeout_ms);
    p->timeout_ms = o->timeout_ms;
    if (o->memory_budget < 0)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan: memory_budget must be >= 0, got %lld",
                      (long long)o->memory_budget);
    p->memory_budget = o->memory_budget;
    return SMELT_OK;
}

/* With a debug dump in effect, writes the plan to it, or why compiling
 * failed (status st, whose error it keeps). Returns the status of the
 * whole compile. */
static smelt_status dump(smelt_ctx_t *ctx, const sm_plan *p,
                         const smelt_plan_options *opt, smelt_status st)
{
    const char *dir = sm_dump_dir(opt->debug_dir);
    if (!dir)
        return st;
    if (st == SMELT_OK)
        return sm_plan_dump(ctx, p, dir, NULL);
    sm_plan_dump(ctx, NULL, dir, smelt_ctx_error(ctx));
    return st;
}

/* Compiles into a new plan either a copy of graph `copy` or, with copy
 * NULL, graph `own` itself, which the plan then owns (freed with the
 * plan, or here when compiling fails). */
static smelt_status compile(smelt_ctx_t *ctx, const sm_graph *copy,
                            sm_graph *own, const smelt_plan_options *opt,
                            smelt_plan_t **out)
{
    smelt_plan_options d;
    plan_options_defaults(&d);
    smelt_status st = opt ? sm_sized_in(ctx, "smelt_plan_options", &d, sizeof d,
                                        PLAN_OPTIONS_V1, opt)
                          : SMELT_OK;
    if (st != SMELT_OK) {
        sm_graph_free(own);
        return st;
    }
    opt = &d;
    sm_plan *p = sm_calloc(1, sizeof *p);
    if (!p) {
        sm_graph_free(own);
        return sm_err_nomem(ctx);
    }
    sm_arena_init(&p->arena);
    pthread_mutex_init(&p->mu, NULL);
    p->g = own;
    st = read_options(ctx, opt, p);
    if (st == SMELT_OK && copy)
        st = sm_graph_clone(ctx, copy, &p->g);
    if (st == SMELT_OK)
        st = specialize(ctx, p->g, opt);
    if (st == SMELT_OK)
        st = sm_graph_infer(ctx, p->g);
    if (st == SMELT_OK && opt->level > 0)
        st = optimize(ctx, p->g, opt->level, opt->debug_dir, opt->disable);
    if (st == SMELT_OK)
        st = sm_graph_verify(ctx, p->g);
    if (st == SMELT_OK)
        st = sm_plan_build(ctx, p);
    if (st == SMELT_OK) {
        sm_plan_choose_layouts(p);
        sm_plan_configure(p);
        st = sm_plan_prepack(ctx, p);
    }
    if (st == SMELT_OK)
        st = sm_plan_recompute(ctx, p, opt->memory_budget);
    st = dump(ctx, p, opt, st);
    if (st != SMELT_OK) {
        smelt_plan_free(p);
        return st;
    }
    *out = p;
    return SMELT_OK;
}

smelt_status smelt_plan_compile(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                const smelt_plan_options *opt,
                                smelt_plan_t **out)
{
    if (!out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_plan_compile: NULL");
    *out = NULL;
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_plan_compile: NULL graph");
    return compile(ctx, g, NULL, opt, out);
}

smelt_status smelt_plan_compile_take(smelt_ctx_t *ctx, smelt_graph_t *g,
                                     const smelt_plan_options *opt,
                                     smelt_plan_t **out)
{
    if (!out) {
        sm_graph_free(g);
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_plan_compile_take: NULL");
    }
    *out = NULL;
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_plan_compile_take: NULL graph");
    return compile(ctx, NULL, g, opt, out);
}
