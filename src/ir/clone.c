/*
 * clone.c - fresh value names, copies of nodes with their sub-blocks (loop
 * unrolling inlines a body this way), and deep copies of whole graphs.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/rewrite.h"
#include "ir/rewrite_impl.h"

/* Records every current value name (names of dead values too: reusing
 * them would only confuse a reader of the dumps). */
static int build_names(sm_rw *rw)
{
    for (int i = 0; i < rw->g->n_values; i++) {
        const char *nm = rw->g->values[i]->name;
        if (!sm_strmap_put(&rw->names, nm, strlen(nm), rw->g->values[i]))
            return 0;
    }
    rw->names_built = 1;
    return 1;
}

const char *sm_rw_unique_name(sm_rw *rw, const char *base)
{
    if (!rw->names_built && !build_names(rw)) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    size_t len = strlen(base);
    char *buf = sm_malloc(len + 16);
    if (!buf) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    memcpy(buf, base, len + 1);
    while (sm_strmap_get(&rw->names, buf, strlen(buf)))
        snprintf(buf + len, 16, "_%u", ++rw->uniq);
    char *nm = sm_arena_strdup(&rw->g->arena, buf);
    sm_free(buf);
    if (!nm || !sm_strmap_put(&rw->names, nm, strlen(nm), nm)) {
        sm_err_nomem(rw->ctx);
        return NULL;
    }
    return nm;
}

/* base + suffix in a new string (sm_free it); NULL when out of memory. */
static char *suffixed(const char *base, const char *suffix)
{
    size_t a = strlen(base), b = suffix ? strlen(suffix) : 0;
    char *buf = sm_malloc(a + b + 1);
    if (buf) {
        memcpy(buf, base, a);
        if (b)
            memcpy(buf + a, suffix, b);
        buf[a + b] = 0;
    }
    return buf;
}

static sm_value *mapped(sm_rw *rw, sm_value *v, sm_value **map, int map_n)
{
    if (v && v->id < map_n && map[v->id])
        return map[v->id];
    SM_ASSERT(!v || v->block->graph == rw->g);
    (void)rw;
    return v;
}

/* Copies every attribute of src onto n (tensors deep-copied). */
static int copy_attrs(sm_node *n, const sm_node *src)
{
    for (int i = 0; i < src->n_attr; i++) {
        const sm_attr *a = &src->attrs[i];
        int ok = 0;
        switch (a->kind) {
        case SM_ATTR_INT: ok = sm_node_set_int(n, a->name, a->v.i); break;
        case SM_ATTR_FLOAT: ok = sm_node_set_float(n, a->name, a->v.f); break;
        case SM_ATTR_STRING: ok = sm_node_set_string(n, a->name, a->v.s); break;
        case SM_ATTR_INTS:
            ok = sm_node_set_ints(n, a->name, a->v.ints, a->n);
            break;
        case SM_ATTR_FLOATS:
            ok = sm_node_set_floats(n, a->name, a->v.floats, a->n);
            break;
        case SM_ATTR_STRINGS:
            ok = sm_node_set_strings(n, a->name, a->v.strs, a->n);
            break;
        case SM_ATTR_TENSOR: {
            sm_tensor *t = NULL;
            ok = sm_tensor_clone(NULL, a->v.t, &t) == SMELT_OK &&
                 sm_node_set_tensor(n, a->name, t);
            break;
        }
        default: break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

static smelt_status clone_block(sm_rw *rw, sm_block *dst, const sm_block *src,
                                sm_value **map, int map_n, const char *suffix)
{
    for (int i = 0; i < src->n_params; i++) {
        const sm_value *p = src->params[i];
        char *nm = suffixed(p->name, suffix);
        sm_value *q = nm ? sm_rw_add_param(rw, dst, nm, &p->type) : NULL;
        sm_free(nm);
        if (!q)
            return sm_err_nomem(rw->ctx);
        if (p->id < map_n)
            map[p->id] = q;
    }
    for (int i = 0; i < src->n_consts; i++) {
        const sm_value *c = src->consts[i];
        sm_tensor *t;
        SM_TRY(sm_tensor_clone(rw->ctx, c->data, &t));
        char *nm = suffixed(c->name, suffix);
        sm_value *q =
            nm ? sm_rw_add_const(rw, dst, nm, t) : (sm_tensor_free(t), NULL);
        sm_free(nm);
        if (!q)
            return sm_err_nomem(rw->ctx);
        if (c->id < map_n)
            map[c->id] = q;
    }
    /* Within the rewriter's graph the block's live list is authoritative;
     * a block of another graph is read from its array. */
    int same = sm_rw_binfo(rw, src) != NULL;
    sm_node *n = same ? sm_rw_first(rw, src) : NULL;
    for (int i = 0; same ? n != NULL : i < src->n_nodes; i++) {
        const sm_node *s = same ? n : src->nodes[i];
        if (!sm_rw_clone_node(rw, dst, NULL, s, map, map_n, suffix))
            return sm_err_nomem(rw->ctx);
        if (same)
            n = sm_rw_next(rw, n);
    }
    for (int i = 0; i < src->n_ret; i++)
        SM_TRY(sm_rw_add_ret(rw, dst, mapped(rw, src->ret[i], map, map_n)));
    return SMELT_OK;
}

sm_node *sm_rw_clone_node(sm_rw *rw, sm_block *b, sm_node *before,
                          const sm_node *src, sm_value **map, int map_n,
                          const char *suffix)
{
    enum { STACK = 16 };
    sm_value *stack_in[STACK];
    char *stack_names[STACK] = {0};
    sm_value **in = stack_in;
    char **names = stack_names;
    sm_node *n = NULL;
    if (src->n_in > STACK)
        in = sm_calloc((size_t)src->n_in, sizeof *in);
    if (src->n_out > STACK)
        names = sm_calloc((size_t)src->n_out, sizeof *names);
    int ok = in && names;
    for (int i = 0; ok && i < src->n_in; i++)
        in[i] = mapped(rw, src->in[i], map, map_n);
    for (int i = 0; ok && i < src->n_out; i++)
        ok = (names[i] = suffixed(src->out[i]->name, suffix)) != NULL;
    char *nname = NULL;
    if (ok && src->name)
        ok = (nname = suffixed(src->name, suffix)) != NULL;
    if (ok)
        n = sm_rw_node_new(rw, b, before, src->op, nname, src->n_in, in,
                           src->n_out, (const char *const *)names);
    sm_free(nname);
    for (int i = 0; names && i < src->n_out; i++)
        sm_free(names[i]);
    if (n && !copy_attrs(n, src))
        n = NULL;
    for (int i = 0; n && i < src->n_out; i++) {
        n->out[i]->type = src->out[i]->type;
        if (src->out[i]->id < map_n)
            map[src->out[i]->id] = n->out[i];
    }
    for (int i = 0; n && i < src->n_blocks; i++) {
        const sm_block *sb = src->blocks[i];
        sm_block *nb = sm_rw_block_new(rw, n, sb->label);
        if (!nb || clone_block(rw, nb, sb, map, map_n, suffix) != SMELT_OK)
            n = NULL;
    }
    if (in != stack_in)
        sm_free(in);
    if (names != stack_names)
        sm_free(names);
    if (!n)
        sm_err_nomem(rw->ctx);
    return n;
}

/* A copy of a joint graph's signature in dst's arena. */
static smelt_status copy_grad_sig(smelt_ctx_t *ctx, sm_graph *dst,
                                  const sm_grad_sig *src)
{
    sm_arena *a = &dst->arena;
    sm_grad_sig *s = sm_arena_alloc(a, sizeof *s);
    size_t n = (size_t)(src->n > 0 ? src->n : 1);
    if (!s)
        return sm_err_nomem(ctx);
    *s = *src;
    s->wrt = sm_arena_alloc(a, n * sizeof *s->wrt);
    s->grad_out = sm_arena_alloc(a, n * sizeof *s->grad_out);
    s->wrt_in = sm_arena_alloc(a, n * sizeof *s->wrt_in);
    if (!s->wrt || !s->grad_out || !s->wrt_in)
        return sm_err_nomem(ctx);
    for (int i = 0; i < src->n; i++) {
        s->wrt[i] = sm_arena_strdup(a, src->wrt[i]);
        if (!s->wrt[i])
            return sm_err_nomem(ctx);
        s->grad_out[i] = src->grad_out[i];
        s->wrt_in[i] = src->wrt_in[i];
    }
    dst->grad = s;
    return SMELT_OK;
}

/* A copy of n ints in a's memory (NULL when out of memory). */
static int *copy_ints(sm_arena *a, const int *src, int n)
{
    int *d = sm_arena_alloc(a, (size_t)(n > 0 ? n : 1) * sizeof *d);
    if (d && n > 0)
        memcpy(d, src, (size_t)n * sizeof *d);
    return d;
}

/* A copy of a training-step graph's optimizer signature in dst's arena. */
static smelt_status copy_optim_sig(smelt_ctx_t *ctx, sm_graph *dst,
                                   const sm_optim_sig *src)
{
    sm_arena *a = &dst->arena;
    sm_optim_sig *s = sm_arena_alloc(a, sizeof *s);
    if (!s)
        return sm_err_nomem(ctx);
    *s = *src;
    int ns = src->n * src->n_state;
    s->param_in = copy_ints(a, src->param_in, src->n);
    s->param_out = copy_ints(a, src->param_out, src->n);
    s->state_in = copy_ints(a, src->state_in, ns);
    s->state_out = copy_ints(a, src->state_out, ns);
    s->state_name = sm_arena_alloc(
        a, (size_t)(src->n_state > 0 ? src->n_state : 1) * sizeof(char *));
    if (!s->param_in || !s->param_out || !s->state_in || !s->state_out ||
        !s->state_name)
        return sm_err_nomem(ctx);
    for (int k = 0; k < src->n_state; k++)
        if (!(s->state_name[k] = sm_arena_strdup(a, src->state_name[k])))
            return sm_err_nomem(ctx);
    dst->optim = s;
    return SMELT_OK;
}

/* Types are copied by value, so the symbolic dimension names of the
 * copy still point into the source graph's arena; this gives the copy
 * its own, one string per name (uses share it, as the parser makes
 * them), so that the copy outlives the source. */
static smelt_status own_syms(smelt_ctx_t *ctx, sm_graph *dst)
{
    const char **seen = NULL; /* pairs: the source's pointer, ours */
    int n_seen = 0, cap = 0;
    smelt_status st = SMELT_OK;
    for (int v = 0; v < dst->n_values && st == SMELT_OK; v++) {
        sm_value *val = dst->values[v];
        if (!val)
            continue;
        for (int d = 0; d < val->type.ndim && st == SMELT_OK; d++) {
            const char *sym = val->type.dims[d].sym;
            if (!sym)
                continue;
            int k = 0;
            while (k < n_seen && seen[2 * k] != sym &&
                   strcmp(seen[2 * k + 1], sym) != 0)
                k++;
            if (k == n_seen) {
                if (n_seen == cap) {
                    cap = cap ? 2 * cap : 8;
                    const char **grown =
                        sm_realloc(seen, sizeof *seen * 2 * (size_t)cap);
                    if (!grown) {
                        st = sm_err_nomem(ctx);
                        break;
                    }
                    seen = grown;
                }
                char *own = sm_arena_strdup(&dst->arena, sym);
                if (!own) {
                    st = sm_err_nomem(ctx);
                    break;
                }
                seen[2 * k] = sym;
                seen[2 * k + 1] = own;
                n_seen++;
            }
            val->type.dims[d].sym = seen[2 * k + 1];
        }
    }
    sm_free(seen);
    return st;
}

smelt_status sm_graph_clone(smelt_ctx_t *ctx, const sm_graph *g, sm_graph **out)
{
    *out = NULL;
    sm_graph *dst = NULL;
    sm_rw *rw = NULL;
    SM_TRY(sm_graph_new(ctx, g->name, &dst));
    sm_value **map = sm_calloc((size_t)g->n_values + 1, sizeof *map);
    smelt_status st = map ? sm_rw_new(ctx, dst, &rw) : sm_err_nomem(ctx);
    if (st == SMELT_OK)
        st = clone_block(rw, dst->top, g->top, map, g->n_values, NULL);
    sm_rw_free(rw);
    if (st == SMELT_OK)
        st = own_syms(ctx, dst);
    sm_free(map);
    if (st == SMELT_OK && g->grad)
        st = copy_grad_sig(ctx, dst, g->grad);
    if (st == SMELT_OK && g->optim)
        st = copy_optim_sig(ctx, dst, g->optim);
    if (st != SMELT_OK) {
        sm_graph_free(dst);
        return st;
    }
    *out = dst;
    return SMELT_OK;
}
