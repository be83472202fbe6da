/*
 * executor.c - sessions, and running a plan through one.
 *
 * A session holds what changes while a plan runs: the arena, a tensor
 * view per slot (arena views are set once; input and output views are
 * pointed at the caller's tensors at each run), the argument arrays of
 * every step, the thread pool and the profiler's times. A run then walks
 * the steps calling each one's kernel on views: kernels, reference
 * kernels on planned buffers and copies allocate nothing. Control steps
 * (If, Loop) and steps whose output shape depends on data go through the
 * reference path and allocate; their results are copied into planned
 * buffers, or kept as the session's tensors until the run ends.
 */
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/deadline.h"
#include "core/sized.h"
#include "ir/eval.h"
#include "runtime/executor.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void view_of_slot(sm_tensor *t, const sm_slot *sl)
{
    memset(t, 0, sizeof *t);
    t->dtype = sl->dtype;
    t->ndim = sl->ndim;
    memcpy(t->dims, sl->dims, sizeof t->dims);
    t->numel = sl->numel;
    t->nbytes = sl->nbytes;
}

void sm_session_free_internal(sm_session *s)
{
    if (!s)
        return;
    sm_threadpool_free(s->tp);
    for (int i = 0; s->owned && i < s->p->n_slots; i++)
        sm_tensor_free(s->owned[i]);
    sm_free(s->owned);
    sm_free(s->views);
    sm_free(s->args);
    sm_free(s->ctl);
    sm_free(s->env);
    sm_free(s->env_owned);
    sm_free(s->t0);
    sm_free(s->t1);
    sm_free(s->spans);
    sm_free(s->arena_raw);
    sm_free(s);
}

void smelt_session_free(smelt_session_t *s)
{
    sm_session_free_internal(s);
}

/* Points every step's argument slots at the views of its slots. */
static void wire_args(sm_session *s)
{
    const sm_plan *p = s->p;
    size_t at = 0;
    for (int j = 0; j < p->n_steps; j++) {
        const sm_step *st = &p->steps[j];
        for (int i = 0; i < st->n_in; i++)
            s->args[at++] = st->in[i] >= 0 ? &s->views[st->in[i]] : NULL;
        for (int i = 0; i < st->n_out; i++)
            s->args[at++] = &s->views[st->out[i]];
        if (st->n_out > s->max_out)
            s->max_out = st->n_out;
    }
}

smelt_status smelt_session_init(smelt_ctx_t *ctx, const smelt_plan_t *p,
                                smelt_session_t **out)
{
    if (!out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_session_init: NULL");
    *out = NULL;
    if (!p)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_session_init: NULL plan");
    sm_session *s = sm_calloc(1, sizeof *s);
    if (!s)
        return sm_err_nomem(ctx);
    s->p = p;
    size_t n_args = 0;
    for (int j = 0; j < p->n_steps; j++)
        n_args += (size_t)p->steps[j].n_in + (size_t)p->steps[j].n_out;
    size_t nv = (size_t)p->g->n_values + 1, ns = (size_t)p->n_slots + 1;
    /* An arena of several MiB (a CNN's activations, touched by every
     * step) starts on a huge page and asks for huge pages (alloc.h). */
    size_t align =
        (size_t)p->arena_bytes >= 2 * SM_HUGE_ALIGN ? SM_HUGE_ALIGN : 64;
    s->arena_raw = sm_malloc((size_t)p->arena_bytes + align);
    s->views = sm_calloc(ns, sizeof *s->views);
    s->owned = sm_calloc(ns, sizeof *s->owned);
    s->args = sm_calloc(n_args + 1, sizeof *s->args);
    s->env = sm_calloc(nv, sizeof *s->env);
    s->env_owned = sm_calloc(nv, 1);
    s->t0 = sm_calloc((size_t)p->n_steps + 1, sizeof *s->t0);
    s->t1 = sm_calloc((size_t)p->n_steps + 1, sizeof *s->t1);
    smelt_status st = SMELT_OK;
    if (!s->arena_raw || !s->views || !s->owned || !s->args || !s->env ||
        !s->env_owned || !s->t0 || !s->t1)
        st = sm_err_nomem(ctx);
    if (st == SMELT_OK) {
        uintptr_t a =
            ((uintptr_t)s->arena_raw + align - 1) & ~(uintptr_t)(align - 1);
        s->arena = (char *)a;
        if (align > 64)
            sm_advise_huge(s->arena, (size_t)p->arena_bytes);
        for (int i = 0; i < p->n_slots; i++) {
            const sm_slot *sl = &p->slots[i];
            if (sl->kind == SM_SLOT_CONST) {
                s->views[i] = *sl->data;
                continue;
            }
            if (sl->kind == SM_SLOT_DYNAMIC)
                continue;
            view_of_slot(&s->views[i], sl);
            if (sl->kind == SM_SLOT_ARENA)
                s->views[i].data = s->arena + sl->offset;
            if (sl->kind == SM_SLOT_ALIAS &&
                p->slots[sl->alias].kind == SM_SLOT_CONST)
                s->views[i].data = p->slots[sl->alias].data->data;
        }
        wire_args(s);
        s->ctl = sm_calloc((size_t)s->max_out + 1, sizeof *s->ctl);
        if (!s->ctl)
            st = sm_err_nomem(ctx);
    }
    if (st == SMELT_OK && p->threads > 1)
        st = sm_threadpool_new(ctx, p->threads, &s->tp);
    if (st != SMELT_OK) {
        sm_session_free_internal(s);
        return st;
    }
    *out = s;
    return SMELT_OK;
}

/* Work items the pool may record in one run: a few parallel_fors per
 * step on every thread; more are counted, not kept. */
static int span_capacity(const sm_session *s)
{
    int64_t cap = (int64_t)s->p->n_steps * sm_threadpool_size(s->tp) * 8;
    return cap < 4096 ? 4096 : cap > (1 << 20) ? 1 << 20 : (int)cap;
}

/* Profiling also records the thread pool's work items, into a buffer
 * made here so the runs themselves allocate nothing. Without memory for
 * it the step times are still kept. */
void smelt_session_set_profiling(smelt_session_t *s, int on)
{
    if (!s)
        return;
    s->profiling = on != 0;
    if (on && s->tp && !s->spans) {
        s->spans = sm_calloc((size_t)span_capacity(s), sizeof *s->spans);
        s->span_cap = s->spans ? span_capacity(s) : 0;
    }
    sm_threadpool_trace(s->tp, on ? s->spans : NULL, on ? s->span_cap : 0);
    s->n_spans = 0;
}

int smelt_session_num_work_items(const smelt_session_t *s)
{
    if (!s)
        return 0;
    return s->n_spans < s->span_cap ? s->n_spans : s->span_cap;
}

int smelt_session_dropped_work_items(const smelt_session_t *s)
{
    return s && s->n_spans > s->span_cap ? s->n_spans - s->span_cap : 0;
}

#define WORK_ITEM_V1 SM_FIELD_END(smelt_work_item, end_ms)

smelt_status smelt_session_work_item(const smelt_session_t *s, int i,
                                     smelt_work_item *caller)
{
    if (!s || !caller || i < 0 || i >= smelt_session_num_work_items(s))
        return SMELT_ERR_INVALID_ARG;
    SM_TRY(sm_sized_check(NULL, "smelt_work_item", caller, WORK_ITEM_V1));
    const sm_pool_span *sp = &s->spans[i];
    smelt_work_item w = {.struct_size = sizeof w,
                         .step = sp->tag,
                         .thread = sp->thread,
                         .start_ms = sp->t0 - s->origin,
                         .end_ms = sp->t1 - s->origin};
    sm_sized_out(caller, &w, sizeof w);
    return SMELT_OK;
}

smelt_status smelt_session_step_time(const smelt_session_t *s, int i,
                                     double *start_ms, double *end_ms)
{
    if (!s || i < 0 || i >= s->p->n_steps || !start_ms || !end_ms)
        return SMELT_ERR_INVALID_ARG;
    *start_ms = s->t0[i];
    *end_ms = s->t1[i];
    return SMELT_OK;
}

/* ---- running ------------------------------------------------------------- */

static int fits(const sm_tensor *t, const sm_slot *sl)
{
    if (t->dtype != sl->dtype || t->ndim != sl->ndim)
        return 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->dims[d] != sl->dims[d])
            return 0;
    return 1;
}

static smelt_status misfit(smelt_ctx_t *ctx, const char *what,
                           const sm_slot *sl, const sm_tensor *t)
{
    char want[160], got[160];
    sm_shape_str(sl->dtype, sl->ndim, sl->dims, want, sizeof want);
    sm_shape_str(t->dtype, t->ndim, t->dims, got, sizeof got);
    return sm_err(ctx, SMELT_ERR_SHAPE,
                  "%s '%s': the plan was compiled for %s, got %s (compile "
                  "another plan for these shapes)",
                  what, sl->v->name, want, got);
}

/* Takes the new tensors a control or dynamic step made: a dynamic slot
 * keeps its tensor until the run ends, a planned one gets a copy. */
static smelt_status store_outputs(smelt_ctx_t *ctx, sm_session *s,
                                  const sm_step *st, sm_tensor **news)
{
    smelt_status rc = SMELT_OK;
    for (int i = 0; i < st->n_out; i++) {
        int k = st->out[i];
        const sm_slot *sl = &s->p->slots[k];
        if (rc == SMELT_OK && sl->kind == SM_SLOT_DYNAMIC) {
            sm_tensor_free(s->owned[k]);
            s->owned[k] = news[i];
            s->views[k] = *news[i];
            news[i] = NULL;
            continue;
        }
        if (rc == SMELT_OK && !fits(news[i], sl))
            rc = misfit(ctx, "value", sl, news[i]);
        if (rc == SMELT_OK && sl->nbytes)
            memcpy(s->views[k].data, news[i]->data, sl->nbytes);
        sm_tensor_free(news[i]);
        news[i] = NULL;
    }
    return rc;
}

static smelt_status run_step(smelt_ctx_t *ctx, sm_session *s, const sm_step *st,
                             sm_tensor **a)
{
    sm_kargs ka = {.op_name = st->info->name,
                   .attrs = sm_node_attrs(st->node),
                   .n_in = st->n_in,
                   .in = a,
                   .n_out = st->n_out,
                   .out = a + st->n_in,
                   .ctx = ctx};
    switch (st->kind) {
    case SM_STEP_KERNEL:
        ka.workspace = st->ws_bytes ? s->arena + st->ws_offset : NULL;
        ka.workspace_bytes = st->ws_bytes;
        ka.nhwc = st->nhwc;
        return sm_cpu_kernel_run(st->k, &ka, &st->cfg, st->packed, s->tp);
    case SM_STEP_REF:
        /* reference kernels may rely on zero-filled outputs */
        for (int i = 0; i < st->n_out; i++)
            memset(a[st->n_in + i]->data, 0, a[st->n_in + i]->nbytes);
        return st->info->ref(&ka);
    case SM_STEP_COPY:
        if (a[1]->data != a[0]->data && a[0]->nbytes)
            memmove(a[1]->data, a[0]->data, a[0]->nbytes);
        return SMELT_OK;
    case SM_STEP_VIEW: return SMELT_OK;
    case SM_STEP_CONTROL:
        SM_TRY(sm_exec_control(ctx, s, st, s->ctl));
        return store_outputs(ctx, s, st, s->ctl);
    case SM_STEP_DYNAMIC:
        SM_TRY(sm_eval_node(ctx, st->node, a, s->ctl, 0));
        return store_outputs(ctx, s, st, s->ctl);
    }
    return SMELT_OK;
}

static smelt_status bind_io(smelt_ctx_t *ctx, sm_session *s,
                            sm_tensor *const *inputs, int n_in,
                            sm_tensor *const *outputs, int n_out)
{
    const sm_plan *p = s->p;
    if (n_in != p->n_inputs || (n_in && !inputs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan '%s' takes %d inputs, %d given", p->g->name,
                      p->n_inputs, n_in);
    if (n_out != p->n_outputs || (n_out && !outputs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan '%s' gives %d outputs, %d requested", p->g->name,
                      p->n_outputs, n_out);
    for (int i = 0; i < n_in; i++) {
        const sm_slot *sl = &p->slots[p->in_slot[i]];
        if (!inputs[i])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG, "input '%s' is NULL",
                          sl->v->name);
        if (!fits(inputs[i], sl))
            return misfit(ctx, "input", sl, inputs[i]);
        s->views[p->in_slot[i]].data = inputs[i]->data;
    }
    for (int i = 0; i < n_out; i++) {
        const sm_slot *sl = &p->slots[p->out_slot[i]];
        if (!outputs[i] || p->out_copy[i])
            continue;
        if (!fits(outputs[i], sl))
            return misfit(ctx, "output", sl, outputs[i]);
        s->views[p->out_slot[i]].data = outputs[i]->data;
    }
    /* views of inputs and outputs follow this run's tensors */
    for (int i = 0; i < p->n_slots; i++)
        if (p->slots[i].kind == SM_SLOT_ALIAS)
            s->views[i].data = s->views[p->slots[i].alias].data;
    return SMELT_OK;
}

/* Graph outputs that are not written in place: into outputs[i] when the
 * caller gave one, else into a new tensor there. */
static smelt_status copy_outputs(smelt_ctx_t *ctx, sm_session *s,
                                 sm_tensor **outputs)
{
    const sm_plan *p = s->p;
    for (int i = 0; i < p->n_outputs; i++) {
        if (!p->out_copy[i])
            continue;
        const sm_tensor *v = &s->views[p->out_slot[i]];
        if (!outputs[i]) {
            SM_TRY(sm_tensor_clone(ctx, v, &outputs[i]));
            continue;
        }
        sm_slot tmp = p->slots[p->out_slot[i]];
        tmp.dtype = v->dtype;
        tmp.ndim = v->ndim;
        memcpy(tmp.dims, v->dims, sizeof tmp.dims);
        if (!fits(outputs[i], &tmp))
            return misfit(ctx, "output", &tmp, outputs[i]);
        if (v->nbytes)
            memcpy(outputs[i]->data, v->data, v->nbytes);
    }
    return SMELT_OK;
}

/* Releases what the run allocated (dynamic values). */
static void end_run(sm_session *s)
{
    for (int i = 0; i < s->p->n_slots; i++)
        if (s->owned[i]) {
            sm_tensor_free(s->owned[i]);
            s->owned[i] = NULL;
            memset(&s->views[i], 0, sizeof s->views[i]);
        }
}

/* One run; outputs[i] NULL receive new tensors (only for outputs that are
 * copied out), others are written. */
static smelt_status exec(smelt_ctx_t *ctx, sm_session *s,
                         sm_tensor *const *inputs, int n_in,
                         sm_tensor **outputs, int n_out)
{
    SM_TRY(bind_io(ctx, s, inputs, n_in, outputs, n_out));
    const sm_plan *p = s->p;
    double start = s->profiling ? now_ms() : 0;
    s->origin = start;
    sm_threadpool_trace_count(s->tp, 1);
    double outer = sm_run_begin(ctx, p->timeout_ms);
    smelt_status st = SMELT_OK;
    size_t at = 0;
    for (int j = 0; j < p->n_steps && st == SMELT_OK; j++) {
        const sm_step *step = &p->steps[j];
        if (s->profiling) {
            sm_threadpool_trace_tag(s->tp, j);
            s->t0[j] = now_ms() - start;
        }
        st = sm_run_check_time(ctx, "before this step");
        if (st == SMELT_OK)
            st = run_step(ctx, s, step, s->args + at);
        if (s->profiling)
            s->t1[j] = now_ms() - start;
        at += (size_t)step->n_in + (size_t)step->n_out;
        if (st != SMELT_OK && st != SMELT_ERR_NOMEM) {
            char where[160];
            sm_node_where(step->node, where, sizeof where);
            sm_err_prefix(ctx, "%s: ", where);
        }
    }
    sm_run_end(ctx, outer);
    if (s->profiling)
        s->n_spans = sm_threadpool_trace_count(s->tp, 0);
    if (st == SMELT_OK)
        st = copy_outputs(ctx, s, outputs);
    end_run(s);
    return st;
}

smelt_status smelt_session_run_into(smelt_ctx_t *ctx, smelt_session_t *s,
                                    smelt_tensor_t *const *inputs, int n_inputs,
                                    smelt_tensor_t *const *outputs,
                                    int n_outputs)
{
    if (!s)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_session_run_into: NULL session");
    for (int i = 0; outputs && i < n_outputs; i++)
        if (!outputs[i])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "smelt_session_run_into: output %d is NULL", i);
    return exec(ctx, s, inputs, n_inputs, (sm_tensor **)outputs, n_outputs);
}

smelt_status smelt_session_run(smelt_ctx_t *ctx, smelt_session_t *s,
                               smelt_tensor_t *const *inputs, int n_inputs,
                               smelt_tensor_t **outputs, int n_outputs)
{
    if (!s || (n_outputs && !outputs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_session_run: NULL");
    const sm_plan *p = s->p;
    if (n_outputs != p->n_outputs)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "plan '%s' gives %d outputs, %d requested", p->g->name,
                      p->n_outputs, n_outputs);
    smelt_status st = SMELT_OK;
    for (int i = 0; i < n_outputs; i++)
        outputs[i] = NULL;
    for (int i = 0; i < n_outputs && st == SMELT_OK; i++) {
        const sm_slot *sl = &p->slots[p->out_slot[i]];
        if (!p->out_copy[i])
            st = sm_tensor_new(ctx, sl->dtype, sl->ndim, sl->dims, &outputs[i]);
    }
    if (st == SMELT_OK)
        st = exec(ctx, s, inputs, n_inputs, outputs, n_outputs);
    if (st != SMELT_OK)
        for (int i = 0; i < n_outputs; i++) {
            sm_tensor_free(outputs[i]);
            outputs[i] = NULL;
        }
    return st;
}

smelt_status smelt_plan_run(smelt_ctx_t *ctx, const smelt_plan_t *p,
                            smelt_tensor_t *const *inputs, int n_inputs,
                            smelt_tensor_t **outputs, int n_outputs)
{
    if (!p)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_plan_run: NULL plan");
    sm_plan *mp = (sm_plan *)p; /* only its lock-guarded session changes */
    if (pthread_mutex_trylock(&mp->mu) == 0) {
        smelt_status st = SMELT_OK;
        if (!mp->own)
            st = smelt_session_init(ctx, p, &mp->own);
        if (st == SMELT_OK)
            st = smelt_session_run(ctx, mp->own, inputs, n_inputs, outputs,
                                   n_outputs);
        pthread_mutex_unlock(&mp->mu);
        return st;
    }
    smelt_session_t *s;
    SM_TRY(smelt_session_init(ctx, p, &s));
    smelt_status st =
        smelt_session_run(ctx, s, inputs, n_inputs, outputs, n_outputs);
    smelt_session_free(s);
    return st;
}
