/*
 * fused_prog.c - a FusedElementwise body as the program the fused CPU
 * kernel runs (kernels/cpu/fused_ew.h), or a refusal, after which the
 * plan expands the body into steps (compile.c).
 *
 * A body becomes a program when every node is one of the ops whose own
 * CPU kernel is a unary or binary row function (elementwise.c), with the
 * same function and parameters that kernel would pick, so the fused run
 * is bit-identical to the expanded one; every value is f32 with the
 * output's element count, except node inputs of one element (a fused
 * input or a body constant) and fused inputs that are a row of the
 * output's last dimension (a bias), which broadcast; every return is a distinct
 * value a body node computes. Intermediates get tile buffers, reused once
 * their last reader has run (a row function may write over its input).
 */
#include <math.h>
#include <string.h>

#include "core/act.h"
#include "ir/shape_util.h"
#include "kernels/cpu/cpu_ops.h"
#include "plan/fused_prog.h"

/* A value's element count, or -1 when it is not a concrete f32. */
static int64_t f32_numel(const sm_value *v)
{
    if (!v || !sm_type_known(&v->type) || v->type.dtype != SMELT_DTYPE_F32)
        return -1;
    return (int64_t)sm_type_numel(&v->type);
}

/* The one f32 element of constant v into *x; 0 when v is not one. */
static int const_scalar(const sm_value *v, float *x)
{
    if (!v || !v->data || f32_numel(v) != 1 || !v->data->data)
        return 0;
    *x = *(const float *)v->data->data;
    return 1;
}

/* Node m as an instruction's function (the choice elementwise.c's kernel
 * for m's op makes); 0 when m's op has no row function here. */
static int instr_fn(const sm_node *m, sm_ew_instr *I)
{
    sm_attrs at = sm_node_attrs(m);
    I->binary = 0;
    switch (m->op) {
    case SM_OP_Relu: I->f = SM_ACT_RELU; return m->n_in == 1;
    case SM_OP_Sigmoid: I->f = SM_ACT_SIGMOID; return m->n_in == 1;
    case SM_OP_Tanh: I->f = SM_ACT_TANH; return m->n_in == 1;
    case SM_OP_Exp: I->f = SM_UNARY_EXP; return m->n_in == 1;
    case SM_OP_Neg: I->f = SM_UNARY_NEG; return m->n_in == 1;
    case SM_OP_Abs: I->f = SM_UNARY_ABS; return m->n_in == 1;
    case SM_OP_Sqrt: I->f = SM_UNARY_SQRT; return m->n_in == 1;
    case SM_OP_Erf: I->f = SM_UNARY_ERF; return m->n_in == 1;
    case SM_OP_Reciprocal: I->f = SM_UNARY_RECIP; return m->n_in == 1;
    case SM_OP_LeakyRelu:
        I->f = SM_ACT_LEAKYRELU;
        I->a = (float)sm_attrs_float(&at, "alpha", 0.01);
        return m->n_in == 1;
    case SM_OP_Gelu: {
        const char *ap = sm_attrs_string(&at, "approximate", "none");
        if (!strcmp(ap, "none"))
            I->f = SM_ACT_GELU;
        else if (!strcmp(ap, "tanh"))
            I->f = SM_ACT_GELU_TANH;
        else
            return 0;
        return m->n_in == 1;
    }
    case SM_OP_Clip:
        /* bounds: absent, or one-element constants (the unfused kernel
         * reads them at run time; a constant's value is the same) */
        I->f = SM_ACT_CLIP;
        I->a = -INFINITY;
        I->b = INFINITY;
        if (m->n_attr != 0 || m->n_in < 1 || m->n_in > 3)
            return 0;
        if (m->n_in > 1 && m->in[1] && !const_scalar(m->in[1], &I->a))
            return 0;
        if (m->n_in > 2 && m->in[2] && !const_scalar(m->in[2], &I->b))
            return 0;
        return 1;
    default: break;
    }
    I->binary = 1;
    switch (m->op) {
    case SM_OP_Add: I->f = SM_BIN_ADD; break;
    case SM_OP_Sub: I->f = SM_BIN_SUB; break;
    case SM_OP_Mul: I->f = SM_BIN_MUL; break;
    case SM_OP_Div: I->f = SM_BIN_DIV; break;
    case SM_OP_Max: I->f = SM_BIN_MAX; break;
    case SM_OP_Min: I->f = SM_BIN_MIN; break;
    default: return 0;
    }
    return m->n_in == 2;
}

/* What the builder knows of each value it has placed. */
typedef struct placed {
    const sm_value *v;
    sm_ew_ref r;
    int last; /* TEMP: the last instruction reading it */
} placed;

typedef struct builder {
    const sm_block *body;
    sm_ew_prog *pg;
    placed *vals;
    int n_vals;
    int busy[SM_EW_MAX_INSTR]; /* temp buffers in use */
} builder;

static placed *find(builder *b, const sm_value *v)
{
    for (int i = 0; i < b->n_vals; i++)
        if (b->vals[i].v == v)
            return &b->vals[i];
    return NULL;
}

/* The ref an instruction reads v through (a body constant of one element
 * is added to the program's constants); 0 when v cannot be read. */
static int ref_of(builder *b, const sm_value *v, sm_ew_ref *r)
{
    placed *p = find(b, v);
    if (p) {
        *r = p->r;
        return 1;
    }
    float x;
    if (!const_scalar(v, &x) || b->pg->n_consts >= SM_EW_MAX_CONSTS)
        return 0;
    sm_ew_prog *pg = b->pg;
    pg->consts[pg->n_consts] = x;
    *r = (sm_ew_ref){SM_EW_CONST, (int8_t)pg->n_consts++};
    b->vals[b->n_vals++] = (placed){v, *r, -1};
    return 1;
}

/* The last body node at or after `from` that reads v, or -1. */
static int last_reader(const sm_block *body, const sm_value *v, int from)
{
    int last = -1;
    for (int j = from; j < body->n_nodes; j++)
        for (int k = 0; k < body->nodes[j]->n_in; k++)
            if (body->nodes[j]->in[k] == v)
                last = j;
    return last;
}

/* Body node j as instruction j: its sources, the temps freed by it, and
 * its destination (the fused output it is returned as, or a free temp). */
static int place_node(builder *b, int j)
{
    const sm_node *m = b->body->nodes[j];
    sm_ew_prog *pg = b->pg;
    sm_ew_instr *I = &pg->ins[j];
    if (m->n_out != 1 || m->n_blocks != 0 || !instr_fn(m, I) ||
        f32_numel(m->out[0]) != pg->numel)
        return 0;
    int n_src = I->binary ? 2 : 1;
    if (!m->in[0] || !ref_of(b, m->in[0], &I->x))
        return 0;
    if (n_src == 2 && (!m->in[1] || !ref_of(b, m->in[1], &I->y)))
        return 0;
    /* a unary row function reads a whole tile */
    if (!I->binary && (I->x.loc == SM_EW_CONST ||
                       (I->x.loc == SM_EW_IN && pg->in_bcast[I->x.idx])))
        return 0;
    for (int k = 0; k < n_src; k++) {
        placed *p = find(b, m->in[k]);
        if (p && p->r.loc == SM_EW_TEMP && p->last <= j)
            b->busy[p->r.idx] = 0;
    }
    const sm_value *v = m->out[0];
    for (int i = 0; i < b->body->n_ret; i++)
        if (b->body->ret[i] == v) {
            I->dst = (sm_ew_ref){SM_EW_OUT, (int8_t)i};
            b->vals[b->n_vals++] = (placed){v, I->dst, -1};
            return 1;
        }
    int t = 0;
    while (b->busy[t])
        t++;
    b->busy[t] = 1;
    if (t + 1 > pg->n_temps)
        pg->n_temps = t + 1;
    I->dst = (sm_ew_ref){SM_EW_TEMP, (int8_t)t};
    int last = last_reader(b->body, v, j + 1);
    if (last < 0) /* read by nobody: its buffer is free again */
        b->busy[t] = 0;
    b->vals[b->n_vals++] = (placed){v, I->dst, last};
    return 1;
}

/* Whether t is a row of y's last dimension (ones before it), at least
 * SM_EW_MIN_ROW long, that broadcasts along y's other dimensions. */
static int is_row(const sm_type *t, const sm_type *y)
{
    if (t->ndim < 1 || y->ndim < 2 || t->ndim > y->ndim)
        return 0;
    for (int d = 0; d + 1 < t->ndim; d++)
        if (t->dims[d].size != 1)
            return 0;
    int64_t c = t->dims[t->ndim - 1].size;
    return c == y->dims[y->ndim - 1].size && c >= SM_EW_MIN_ROW;
}

/* Checks the fused node's signature and places its inputs. */
static int place_io(builder *b, const sm_node *n)
{
    const sm_block *body = b->body;
    sm_ew_prog *pg = b->pg;
    if (n->n_in > SM_EW_MAX_IO || n->n_out > SM_EW_MAX_IO || n->n_out < 1 ||
        body->n_params != n->n_in || body->n_ret != n->n_out ||
        body->n_nodes < 1 || body->n_nodes > SM_EW_MAX_INSTR)
        return 0;
    pg->n_in = n->n_in;
    pg->n_out = n->n_out;
    pg->n_instr = body->n_nodes;
    pg->numel = f32_numel(n->out[0]);
    if (pg->numel <= 0)
        return 0;
    for (int i = 0; i < n->n_out; i++) {
        const sm_value *r = body->ret[i];
        if (f32_numel(n->out[i]) != pg->numel || !r->def ||
            r->def->owner != body)
            return 0;
        for (int k = 0; k < i; k++)
            if (body->ret[k] == r)
                return 0;
    }
    const sm_type *yt = &n->out[0]->type;
    pg->row = yt->ndim > 0 ? yt->dims[yt->ndim - 1].size : 1;
    for (int i = 0; i < n->n_in; i++) {
        int64_t ne = f32_numel(n->in[i]);
        if (f32_numel(body->params[i]) != ne)
            return 0;
        if (ne == pg->numel)
            pg->in_bcast[i] = SM_EW_FULL;
        else if (ne == 1)
            pg->in_bcast[i] = SM_EW_BCAST_ONE;
        else if (is_row(&n->in[i]->type, yt))
            pg->in_bcast[i] = SM_EW_BCAST_ROW;
        else
            return 0;
        sm_ew_ref r = {SM_EW_IN, (int8_t)i};
        b->vals[b->n_vals++] = (placed){body->params[i], r, -1};
    }
    return 1;
}

int sm_ew_prog_make(const sm_node *n, sm_ew_prog *pg)
{
    if (n->op != SM_OP_FusedElementwise || n->n_blocks != 1)
        return 0;
    placed vals[SM_EW_MAX_IO + SM_EW_MAX_CONSTS + SM_EW_MAX_INSTR];
    builder b = {n->blocks[0], pg, vals, 0, {0}};
    memset(pg, 0, sizeof *pg);
    if (!place_io(&b, n))
        return 0;
    for (int j = 0; j < b.body->n_nodes; j++)
        if (!place_node(&b, j))
            return 0;
    return 1;
}
