/*
 * verify.c - checks every IR invariant: values defined once and before use
 * in a visible scope, unique names, op arity, attributes against the op
 * schema, sub-block signatures of control ops, constants matching their
 * types, and output types consistent with what the op's shape function
 * infers from the inputs.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/infer.h"
#include "ir/ir.h"

typedef struct verifier {
    smelt_ctx_t *ctx;
    const sm_graph *g;
    /* state[id]: 0 unseen, 1 defined and visible, 2 defined out of scope */
    unsigned char *state;
} verifier;

static smelt_status fail_at(verifier *v, const sm_node *n, smelt_status code,
                            const char *fmt, const char *arg)
{
    char where[160];
    if (n)
        sm_node_where(n, where, sizeof where);
    else
        snprintf(where, sizeof where, "graph '%s'", v->g->name);
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    return sm_err(v->ctx, code, "%s: %s", where, msg);
}

static smelt_status define(verifier *v, const sm_node *n, sm_value *val,
                           const sm_block *b)
{
    if (val->id < 0 || val->id >= v->g->n_values ||
        v->g->values[val->id] != val)
        return fail_at(v, n, SMELT_ERR_VERIFY,
                       "value %%%s is not owned by this graph", val->name);
    if (v->state[val->id])
        return fail_at(v, n, SMELT_ERR_VERIFY, "value %%%s is defined twice",
                       val->name);
    if (val->block != b)
        return fail_at(v, n, SMELT_ERR_VERIFY,
                       "value %%%s records the wrong defining block",
                       val->name);
    v->state[val->id] = 1;
    return SMELT_OK;
}

static smelt_status use(verifier *v, const sm_node *n, const sm_value *val)
{
    if (!val)
        return SMELT_OK;
    if (val->id < 0 || val->id >= v->g->n_values || v->state[val->id] != 1)
        return fail_at(v, n, SMELT_ERR_VERIFY,
                       "value %%%s is used before it is defined or outside "
                       "its scope",
                       val->name);
    return SMELT_OK;
}

static smelt_status check_attrs(verifier *v, const sm_node *n)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    for (int i = 0; i < n->n_attr; i++) {
        const sm_attr *a = &n->attrs[i];
        const sm_attr_spec *sp = sm_op_attr_spec(n->op, a->name);
        if (!sp)
            return fail_at(v, n, SMELT_ERR_VERIFY, "unknown attribute '%s'",
                           a->name);
        if (sp->kind != a->kind) {
            char msg[128];
            snprintf(msg, sizeof msg, "attribute '%%s' must be %s, not %s",
                     sm_attr_kind_name(sp->kind), sm_attr_kind_name(a->kind));
            return fail_at(v, n, SMELT_ERR_VERIFY, msg, a->name);
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(n->attrs[j].name, a->name))
                return fail_at(v, n, SMELT_ERR_VERIFY,
                               "attribute '%s' is given twice", a->name);
    }
    for (int i = 0; i < info->n_spec; i++)
        if (info->spec[i].required && !sm_node_attr(n, info->spec[i].name))
            return fail_at(v, n, SMELT_ERR_VERIFY,
                           "required attribute '%s' is missing",
                           info->spec[i].name);
    return SMELT_OK;
}

static smelt_status check_arity(verifier *v, const sm_node *n)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    char msg[160];
    if (sm_op_arity_error(n->op, n->n_in, n->n_out, msg, sizeof msg))
        return fail_at(v, n, SMELT_ERR_VERIFY, "%s", msg);
    /* Required inputs are present; Loop's M and cond are optional. */
    for (int i = 0; i < info->in_min && i < n->n_in; i++)
        if (!n->in[i] && n->op != SM_OP_Loop) {
            snprintf(msg, sizeof msg, "required input %d is absent", i);
            return fail_at(v, n, SMELT_ERR_VERIFY, "%s", msg);
        }
    if (n->n_blocks != info->n_blocks) {
        snprintf(msg, sizeof msg, "must own %d sub-blocks, owns %d",
                 info->n_blocks, n->n_blocks);
        return fail_at(v, n, SMELT_ERR_VERIFY, "%s", msg);
    }
    for (int i = 0; i < n->n_out; i++)
        if (!n->out[i] || n->out[i]->def != n || n->out[i]->def_index != i)
            return fail_at(v, n, SMELT_ERR_VERIFY,
                           "output %s does not point back at its node",
                           n->out[i] ? n->out[i]->name : "(null)");
    return SMELT_OK;
}

/* Signatures of sub-blocks as ONNX defines them for If and Loop. */
static smelt_status check_blocks(verifier *v, const sm_node *n)
{
    char msg[200];
    for (int b = 0; b < n->n_blocks; b++) {
        const char *want = sm_op_block_label(n->op, b);
        const char *have = n->blocks[b]->label;
        if (want && (!have || strcmp(have, want) != 0)) {
            snprintf(msg, sizeof msg,
                     "sub-block %d must be labelled '%s', is '%.60s'", b, want,
                     have ? have : "(none)");
            return fail_at(v, n, SMELT_ERR_VERIFY, "%s", msg);
        }
    }
    if (n->op == SM_OP_If) {
        for (int b = 0; b < 2; b++)
            if (n->blocks[b]->n_params || n->blocks[b]->n_ret != n->n_out) {
                snprintf(msg, sizeof msg,
                         "%s must take no parameters and return %d values "
                         "(takes %d, returns %d)",
                         b ? "else_branch" : "then_branch", n->n_out,
                         n->blocks[b]->n_params, n->blocks[b]->n_ret);
                return fail_at(v, n, SMELT_ERR_VERIFY, "%s", msg);
            }
    } else if (n->op == SM_OP_Loop) {
        const sm_block *body = n->blocks[0];
        int carried = n->n_in - 2, scans = n->n_out - carried;
        if (scans < 0 || body->n_params != carried + 2 ||
            body->n_ret != 1 + carried + scans) {
            snprintf(msg, sizeof msg,
                     "body must take %d parameters (iteration, condition, %d "
                     "carried) and return %d (condition, carried, scans); it "
                     "takes %d and returns %d",
                     carried + 2, carried, 1 + n->n_out, body->n_params,
                     body->n_ret);
            return fail_at(v, n, SMELT_ERR_VERIFY, "%s", msg);
        }
    } else if (n->op == SM_OP_FusedElementwise) {
        const sm_block *body = n->blocks[0];
        if (body->n_params != n->n_in || body->n_ret != n->n_out) {
            snprintf(msg, sizeof msg,
                     "body must take %d parameters (one per input) and "
                     "return %d (one per output); it takes %d and returns %d",
                     n->n_in, n->n_out, body->n_params, body->n_ret);
            return fail_at(v, n, SMELT_ERR_VERIFY, "%s", msg);
        }
    }
    return SMELT_OK;
}

static smelt_status verify_block(verifier *v, const sm_block *b, int depth);

static smelt_status verify_node(verifier *v, const sm_block *b,
                                const sm_node *n, int depth)
{
    if ((unsigned)n->op >= SM_OP_COUNT)
        return fail_at(v, NULL, SMELT_ERR_VERIFY, "node with invalid op%s", "");
    if (n->owner != b)
        return fail_at(v, n, SMELT_ERR_VERIFY,
                       "node records the wrong owning block%s", "");
    SM_TRY(check_arity(v, n));
    SM_TRY(check_attrs(v, n));
    SM_TRY(check_blocks(v, n));
    for (int i = 0; i < n->n_in; i++)
        SM_TRY(use(v, n, n->in[i]));
    for (int i = 0; i < n->n_blocks; i++) {
        if (n->blocks[i]->parent != n)
            return fail_at(v, n, SMELT_ERR_VERIFY,
                           "sub-block %s does not point back at its node",
                           n->blocks[i]->label ? n->blocks[i]->label : "");
        SM_TRY(verify_block(v, n->blocks[i], depth + 1));
    }
    for (int i = 0; i < n->n_out; i++)
        SM_TRY(define(v, n, n->out[i], b));
    return sm_infer_check_node(v->ctx, n);
}

/* Walks b; values it defines go out of scope again when it ends. */
static smelt_status verify_block(verifier *v, const sm_block *b, int depth)
{
    if (depth > SM_MAX_BLOCK_DEPTH)
        return fail_at(v, b->parent, SMELT_ERR_LIMIT,
                       "sub-blocks nest deeper than %s", "the limit");
    smelt_status st = SMELT_OK;
    for (int i = 0; i < b->n_params && !st; i++)
        st = define(v, b->parent, b->params[i], b);
    for (int i = 0; i < b->n_consts && !st; i++) {
        sm_value *c = b->consts[i];
        st = define(v, b->parent, c, b);
        sm_type t;
        if (!st && !c->data)
            st = fail_at(v, b->parent, SMELT_ERR_VERIFY,
                         "constant %%%s has no data", c->name);
        else if (!st && (sm_type_from_tensor(&t, c->data),
                         !sm_type_equal(&t, &c->type)))
            st = fail_at(v, b->parent, SMELT_ERR_VERIFY,
                         "constant %%%s's type does not match its data",
                         c->name);
    }
    for (int i = 0; i < b->n_nodes && !st; i++)
        st = verify_node(v, b, b->nodes[i], depth);
    for (int i = 0; i < b->n_ret && !st; i++)
        st = use(v, b->parent, b->ret[i]);
    if (!st && !b->parent && b->n_ret == 0)
        st = fail_at(v, NULL, SMELT_ERR_VERIFY, "the graph returns nothing%s",
                     "");
    /* leave scope */
    for (int i = 0; i < b->n_params; i++)
        v->state[b->params[i]->id] = 2;
    for (int i = 0; i < b->n_consts; i++)
        v->state[b->consts[i]->id] = 2;
    for (int i = 0; i < b->n_nodes; i++)
        for (int j = 0; j < b->nodes[i]->n_out; j++)
            v->state[b->nodes[i]->out[j]->id] = 2;
    return st;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

/* Every value reachable in the graph has a unique name (open addressing
 * over the values array, linear time). */
static smelt_status check_names(verifier *v)
{
    const sm_graph *g = v->g;
    size_t cap = 16;
    while (cap < (size_t)g->n_values * 2)
        cap *= 2;
    const sm_value **slots = sm_calloc(cap, sizeof *slots);
    if (!slots)
        return sm_err_nomem(v->ctx);
    smelt_status st = SMELT_OK;
    for (int i = 0; i < g->n_values && !st; i++) {
        const sm_value *val = g->values[i];
        if (v->state[val->id] == 0)
            continue; /* not in the graph any more */
        size_t h = (size_t)name_hash(val->name) & (cap - 1);
        while (slots[h] && strcmp(slots[h]->name, val->name))
            h = (h + 1) & (cap - 1);
        if (slots[h])
            st = fail_at(v, val->def, SMELT_ERR_VERIFY,
                         "two values are named %%%s", val->name);
        slots[h] = val;
    }
    sm_free(slots);
    return st;
}

smelt_status sm_graph_verify(smelt_ctx_t *ctx, const sm_graph *g)
{
    verifier v = {ctx, g, sm_calloc((size_t)g->n_values + 1, 1)};
    if (!v.state)
        return sm_err_nomem(ctx);
    smelt_status st = verify_block(&v, g->top, 0);
    if (st == SMELT_OK)
        st = check_names(&v);
    sm_free(v.state);
    return st;
}

smelt_status smelt_graph_verify(smelt_ctx_t *ctx, const smelt_graph_t *g)
{
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_graph_verify: NULL");
    return sm_graph_verify(ctx, g);
}
