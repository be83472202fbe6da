/*
 * dce.c - the `dce` pass: dead code elimination.
 *
 * Ops have no side effects, so a node none of whose outputs is used goes,
 * and so does an unused constant. Blocks are walked backwards, so a chain
 * of dead nodes goes in one walk; a live control node's sub-blocks are
 * cleaned before the nodes above it, because their uses of outer values
 * may disappear.
 *
 * Control nodes also lose the outputs nobody uses:
 * - If: output j goes with return j of both branches.
 * - Loop: a scan output goes with its body return. A carried value goes
 *   (with its input, body parameter, body return and output) when its
 *   final value is unused and nothing the loop still produces depends on
 *   it: not the condition, not a scan, not a carried value that stays
 *   (see live_carried). Its own update chain in the body then dies.
 */
#include <string.h>

#include "core/alloc.h"
#include "ir/rewrite.h"
#include "passes/pass.h"

typedef struct dce {
    smelt_ctx_t *ctx;
    sm_rw *rw;
    int outputs, consts;
    unsigned char *seen; /* by value id, for live_carried; kept all zero */
    int rw_values;       /* entries of seen */
} dce;

static smelt_status dce_block(dce *d, sm_block *b);

static int used(const sm_rw *rw, const sm_node *n)
{
    for (int i = 0; i < n->n_out; i++)
        if (sm_rw_uses(rw, n->out[i]))
            return 1;
    return 0;
}

static smelt_status trim_if(dce *d, sm_node *n)
{
    for (int j = n->n_out - 1; j >= 0; j--) {
        if (sm_rw_uses(d->rw, n->out[j]))
            continue;
        SM_TRY(sm_rw_remove_ret(d->rw, n->blocks[0], j));
        SM_TRY(sm_rw_remove_ret(d->rw, n->blocks[1], j));
        sm_rw_remove_output(d->rw, n, j);
        d->outputs++;
    }
    SM_TRY(dce_block(d, n->blocks[0]));
    return dce_block(d, n->blocks[1]);
}

/* A stack of values still to mark. */
typedef struct vstack {
    sm_value **v;
    int n, cap;
} vstack;

static int vpush(vstack *s, sm_value *v)
{
    if (!v)
        return 1;
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 64;
        sm_value **p = sm_realloc(s->v, sizeof *p * (size_t)nc);
        if (!p)
            return 0;
        s->v = p;
        s->cap = nc;
    }
    s->v[s->n++] = v;
    return 1;
}

/* Pushes every value a node's sub-blocks read (inputs and returns). */
static int push_block_uses(sm_rw *rw, vstack *s, const sm_block *b)
{
    for (int i = 0; i < b->n_ret; i++)
        if (!vpush(s, b->ret[i]))
            return 0;
    for (sm_node *m = sm_rw_first(rw, b); m; m = sm_rw_next(rw, m)) {
        for (int i = 0; i < m->n_in; i++)
            if (!vpush(s, m->in[i]))
                return 0;
        for (int i = 0; i < m->n_blocks; i++)
            if (!push_block_uses(rw, s, m->blocks[i]))
                return 0;
    }
    return 1;
}

/* Whether v is defined in block `in` or in a block nested in it. */
static int defined_within(const sm_value *v, const sm_block *in)
{
    for (const sm_block *b = v->block; b;
         b = b->parent ? b->parent->owner : NULL)
        if (b == in)
            return 1;
    return 0;
}

/*
 * Decides which carried values of Loop n are live: those whose final
 * value is used, and those the body needs to compute the condition, the
 * scans or another live carried value. Marks from those roots backwards
 * through the body (a node with sub-blocks needs everything they read);
 * reaching the parameter of a carried value makes it live, and its
 * return a new root. live[j] receives the result.
 */
static smelt_status live_carried(dce *d, const sm_node *n, unsigned char *live)
{
    const sm_block *body = n->blocks[0];
    int carried = n->n_in - 2;
    unsigned char *seen = d->seen;
    vstack s = {0}, marked = {0};
    int ok = 1;
    for (int j = 0; j < carried; j++)
        if ((live[j] = sm_rw_uses(d->rw, n->out[j]) > 0))
            ok = ok && vpush(&s, body->ret[1 + j]);
    for (int i = 0; i < body->n_ret && ok; i++)
        if (i == 0 || i > carried)
            ok = vpush(&s, body->ret[i]);
    while (ok && s.n) {
        sm_value *v = s.v[--s.n];
        if (seen[v->id] || !defined_within(v, body))
            continue;
        seen[v->id] = 1;
        if (!(ok = vpush(&marked, v)))
            break;
        for (int j = 0; j < carried && ok; j++)
            if (v == body->params[2 + j] && !live[j]) {
                live[j] = 1;
                ok = vpush(&s, body->ret[1 + j]);
            }
        const sm_node *def = v->def;
        for (int i = 0; def && ok && i < def->n_in; i++)
            ok = vpush(&s, def->in[i]);
        for (int i = 0; def && ok && i < def->n_blocks; i++)
            ok = push_block_uses(d->rw, &s, def->blocks[i]);
    }
    for (int i = 0; i < marked.n; i++)
        seen[marked.v[i]->id] = 0;
    if (!ok) /* a value marked but not recorded */
        memset(seen, 0, (size_t)d->rw_values);
    sm_free(s.v);
    sm_free(marked.v);
    return ok ? SMELT_OK : sm_err_nomem(d->ctx);
}

static smelt_status trim_loop(dce *d, sm_node *n)
{
    sm_block *body = n->blocks[0];
    int carried = n->n_in - 2;
    for (int j = n->n_out - 1; j >= carried; j--) {
        if (sm_rw_uses(d->rw, n->out[j]))
            continue;
        SM_TRY(sm_rw_remove_ret(d->rw, body, 1 + j));
        sm_rw_remove_output(d->rw, n, j);
        d->outputs++;
    }
    unsigned char *live = sm_calloc((size_t)carried + 1, 1);
    if (!live)
        return sm_err_nomem(d->ctx);
    smelt_status st = live_carried(d, n, live);
    for (int j = carried - 1; j >= 0 && st == SMELT_OK; j--) {
        if (live[j])
            continue;
        /* the return goes first: it may be the parameter itself */
        st = sm_rw_remove_ret(d->rw, body, 1 + j);
        if (st == SMELT_OK)
            st = dce_block(d, body);
        if (st != SMELT_OK)
            break;
        sm_rw_remove_param(d->rw, body, 2 + j);
        st = sm_rw_remove_input(d->rw, n, 2 + j);
        sm_rw_remove_output(d->rw, n, j);
        d->outputs++;
    }
    sm_free(live);
    return st == SMELT_OK ? dce_block(d, body) : st;
}

static smelt_status dce_block(dce *d, sm_block *b)
{
    sm_node *n = sm_rw_last(d->rw, b);
    while (n) {
        sm_node *prev = sm_rw_prev(d->rw, n);
        if (!used(d->rw, n))
            sm_rw_remove_node(d->rw, n);
        else if (n->op == SM_OP_If)
            SM_TRY(trim_if(d, n));
        else if (n->op == SM_OP_Loop)
            SM_TRY(trim_loop(d, n));
        else
            for (int i = 0; i < n->n_blocks; i++)
                SM_TRY(dce_block(d, n->blocks[i]));
        n = prev;
    }
    for (int i = 0; i < b->n_consts; i++)
        if (b->consts[i]->block == b)
            d->consts += sm_rw_drop_const_if_dead(d->rw, b->consts[i]);
    return SMELT_OK;
}

smelt_status sm_pass_dce(sm_pass_ctx *pc, sm_graph *g)
{
    /* DCE makes no values, so one table covers every id */
    dce d = {pc->ctx,        NULL, 0, 0, sm_calloc((size_t)g->n_values + 1, 1),
             g->n_values + 1};
    if (!d.seen)
        return sm_err_nomem(pc->ctx);
    smelt_status st = sm_rw_new(pc->ctx, g, &d.rw);
    if (st != SMELT_OK) {
        sm_free(d.seen);
        return st;
    }
    st = dce_block(&d, g->top);
    pc->stats->removed = sm_rw_removed(d.rw);
    pc->stats->changed = pc->stats->removed || d.outputs || d.consts;
    if (d.outputs)
        sm_pass_log(pc, "removed %d unused If/Loop output(s)", d.outputs);
    if (d.consts)
        sm_pass_log(pc, "removed %d unused constant(s)", d.consts);
    sm_rw_free(d.rw);
    sm_free(d.seen);
    return st;
}
