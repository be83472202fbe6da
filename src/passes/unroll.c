/*
 * unroll.c - the `unroll` pass: a Loop that certainly runs a constant
 * number of times, at most opt->unroll_max_trips, is replaced by copies of
 * its body.
 *
 * "Certainly" means: the trip count M is a constant, the condition input
 * is absent or a constant true, and the body returns as its condition
 * either its condition parameter unchanged or a constant true - so the
 * loop can only stop after M trips. Copy k binds the iteration number to
 * a constant k, the condition to true, and the carried values to what
 * copy k-1 returned; body constants are shared by all copies (moved into
 * the enclosing block once). Each scan output becomes a Concat along a new
 * axis 0 of its per-trip values (Unsqueeze). A loop whose copies would
 * exceed SM_UNROLL_MAX_NODES nodes is kept. Inner loops are unrolled first.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "ir/rewrite.h"
#include "passes/pass.h"

typedef struct unroller {
    sm_pass_ctx *pc;
    sm_rw *rw;
    int unrolled, kept;
    sm_value **map; /* by value id: a body value's copy in this trip */
    int map_cap;
} unroller;

static int truthy(const sm_value *v)
{
    return v && v->data && v->data->numel == 1 &&
           sm_load_f64(v->data->dtype, v->data->data, 0) != 0;
}

static int live_nodes(sm_rw *rw, const sm_block *b)
{
    int k = 0;
    for (sm_node *n = sm_rw_first(rw, b); n; n = sm_rw_next(rw, n)) {
        k++;
        for (int i = 0; i < n->n_blocks; i++)
            k += live_nodes(rw, n->blocks[i]);
    }
    return k;
}

/* The trip count when n can be unrolled, else -1. */
static int64_t trips_of(unroller *u, const sm_node *n)
{
    const sm_value *m = n->in[0];
    const sm_block *body = n->blocks[0];
    if (!m || !m->data || m->data->numel != 1)
        return -1;
    int64_t trips = sm_load_i64(m->data->dtype, m->data->data, 0);
    if (trips < 0 || trips > u->pc->opt->unroll_max_trips)
        return -1;
    if (n->in[1] && !truthy(n->in[1]))
        return -1;
    if (body->ret[0] != body->params[1] && !truthy(body->ret[0]))
        return -1;
    int scans = n->n_out - (n->n_in - 2);
    if (trips == 0 && scans > 0)
        return -1; /* the empty scans' shapes may be unknown */
    int64_t size = trips * (live_nodes(u->rw, body) + scans) + scans;
    if (size > SM_UNROLL_MAX_NODES) {
        u->kept++;
        return -1;
    }
    return trips;
}

static sm_value *mapped(sm_value *v, sm_value **map, int map_n)
{
    return v && v->id < map_n && map[v->id] ? map[v->id] : v;
}

static sm_value *scalar_const(unroller *u, sm_block *b, const char *name,
                              smelt_dtype dt, int64_t v)
{
    sm_tensor *t;
    if (sm_tensor_new(u->pc->ctx, dt, 0, NULL, &t) != SMELT_OK)
        return NULL;
    sm_store_i64(dt, t->data, 0, v);
    return sm_rw_add_const(u->rw, b, name, t);
}

/* Stacks vals[0..trips) along a new axis 0, before `before`. */
static sm_value *stack(unroller *u, sm_node *before, sm_value **vals,
                       int64_t trips, const char *name)
{
    sm_block *b = before->owner;
    const int64_t zero = 0;
    for (int64_t i = 0; i < trips; i++) {
        sm_node *uq = sm_rw_node_new(u->rw, b, before, SM_OP_Unsqueeze, NULL, 1,
                                     &vals[i], 1, &name);
        if (!uq || !sm_node_set_ints(uq, "axes", &zero, 1) ||
            sm_rw_infer_node(u->rw, uq) != SMELT_OK)
            return NULL;
        vals[i] = uq->out[0];
    }
    if (trips == 1)
        return vals[0];
    sm_node *cat = sm_rw_node_new(u->rw, b, before, SM_OP_Concat, NULL,
                                  (int)trips, vals, 1, &name);
    if (!cat || !sm_node_set_int(cat, "axis", 0) ||
        sm_rw_infer_node(u->rw, cat) != SMELT_OK)
        return NULL;
    return cat->out[0];
}

/* Copies the body `trips` times before n and rewires n's outputs. */
static smelt_status unroll(unroller *u, sm_node *n, int64_t trips,
                           sm_value **map, int map_n, sm_value **cur,
                           sm_value **scan)
{
    sm_block *b = n->owner, *body = n->blocks[0];
    int carried = n->n_in - 2, scans = n->n_out - carried;
    for (int i = 0; i < body->n_consts; i++) {
        sm_value *c = body->consts[i];
        if (c->block == body && c->data)
            SM_TRY(sm_rw_move_const(u->rw, c, b));
    }
    sm_value *yes = scalar_const(u, b, "true", SMELT_DTYPE_BOOL, 1);
    if (!yes)
        return sm_err_nomem(u->pc->ctx);
    for (int j = 0; j < carried; j++)
        cur[j] = n->in[2 + j];
    for (int64_t it = 0; it < trips; it++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, ".%lld", (long long)it);
        sm_value *k = scalar_const(u, b, "iter", SMELT_DTYPE_I64, it);
        if (!k)
            return sm_err_nomem(u->pc->ctx);
        map[body->params[0]->id] = k;
        map[body->params[1]->id] = yes;
        for (int j = 0; j < carried; j++)
            map[body->params[2 + j]->id] = cur[j];
        for (sm_node *m = sm_rw_first(u->rw, body); m; m = sm_rw_next(u->rw, m))
            if (!sm_rw_clone_node(u->rw, b, n, m, map, map_n, suffix))
                return sm_err_nomem(u->pc->ctx);
        for (int j = 0; j < carried; j++)
            cur[j] = mapped(body->ret[1 + j], map, map_n);
        for (int s = 0; s < scans; s++)
            scan[(int64_t)s * trips + it] =
                mapped(body->ret[1 + carried + s], map, map_n);
    }
    for (int j = 0; j < carried; j++)
        SM_TRY(sm_rw_forward(u->rw, n->out[j], cur[j]));
    for (int s = 0; s < scans; s++) {
        sm_value *y = stack(u, n, &scan[(int64_t)s * trips], trips,
                            n->out[carried + s]->name);
        if (!y)
            return sm_err_nomem(u->pc->ctx);
        SM_TRY(sm_rw_forward(u->rw, n->out[carried + s], y));
    }
    sm_rw_remove_node(u->rw, n);
    u->unrolled++;
    return SMELT_OK;
}

/* Empties the map entries of every value b (and what it nests) defines,
 * so the next loop starts from an all-NULL map without a full clear. */
static void clear_map(sm_rw *rw, sm_value **map, int map_n, const sm_block *b)
{
    for (int i = 0; i < b->n_params; i++)
        if (b->params[i]->id < map_n)
            map[b->params[i]->id] = NULL;
    for (sm_node *n = sm_rw_first(rw, b); n; n = sm_rw_next(rw, n)) {
        for (int i = 0; i < n->n_out; i++)
            if (n->out[i]->id < map_n)
                map[n->out[i]->id] = NULL;
        for (int i = 0; i < n->n_blocks; i++)
            clear_map(rw, map, map_n, n->blocks[i]);
    }
}

static smelt_status try_unroll(unroller *u, sm_node *n)
{
    int64_t trips = trips_of(u, n);
    if (trips < 0)
        return SMELT_OK;
    /* the map covers every value so far: inner loops unrolled in this
     * body made new ones */
    int map_n = n->owner->graph->n_values;
    if (map_n > u->map_cap) {
        sm_value **p = sm_realloc(u->map, sizeof *p * (size_t)map_n);
        if (!p)
            return sm_err_nomem(u->pc->ctx);
        memset(p + u->map_cap, 0, sizeof *p * (size_t)(map_n - u->map_cap));
        u->map = p;
        u->map_cap = map_n;
    }
    int carried = n->n_in - 2, scans = n->n_out - carried;
    sm_value **cur = sm_calloc((size_t)carried + 1, sizeof *cur);
    sm_value **scan = sm_calloc((size_t)(scans * trips) + 1, sizeof *scan);
    sm_block *body = n->blocks[0];
    smelt_status st = cur && scan
                          ? unroll(u, n, trips, u->map, map_n, cur, scan)
                          : sm_err_nomem(u->pc->ctx);
    clear_map(u->rw, u->map, map_n, body);
    sm_free(cur);
    sm_free(scan);
    return st;
}

static smelt_status walk(unroller *u, sm_block *b)
{
    sm_node *n = sm_rw_first(u->rw, b);
    while (n) {
        sm_node *next = sm_rw_next(u->rw, n);
        for (int i = 0; i < n->n_blocks; i++)
            SM_TRY(walk(u, n->blocks[i]));
        if (n->op == SM_OP_Loop)
            SM_TRY(try_unroll(u, n));
        n = next;
    }
    return SMELT_OK;
}

smelt_status sm_pass_unroll(sm_pass_ctx *pc, sm_graph *g)
{
    unroller u = {pc, NULL, 0, 0, NULL, 0};
    SM_TRY(sm_rw_new(pc->ctx, g, &u.rw));
    smelt_status st = walk(&u, g->top);
    pc->stats->removed = sm_rw_removed(u.rw);
    pc->stats->changed = u.unrolled > 0;
    if (u.unrolled)
        sm_pass_log(pc, "unrolled %d Loop(s)", u.unrolled);
    if (u.kept)
        sm_pass_log(pc,
                    "kept %d Loop(s): unrolled they would exceed %d "
                    "nodes",
                    u.kept, SM_UNROLL_MAX_NODES);
    sm_rw_free(u.rw);
    sm_free(u.map);
    return st;
}
