/*
 * pass_manager.c - the pass registry, and running a list of passes over a
 * graph: stats per pass, the verifier after each pass when asked, and the
 * debug dumps (SMELT_DEBUG / --debug-dir).
 */
#include "passes/pass.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/strbuf.h"
#include "ir/infer.h"
#include "ir/rewrite.h"
#include "passes/dump.h"

static const sm_pass_info registry[] = {
#define PASS(name, fn, level, summary) {#name, fn, level, summary},
#include "passes/passes.def"
#undef PASS
};

#define N_PASSES ((int)(sizeof registry / sizeof *registry))

/* Found by name only while SMELT_TEST_BROKEN_PASS=1: it exists so that the
 * tests can prove `smelt check` finds a pass that changes the results. */
static const sm_pass_info broken_pass = {
    "break_add", sm_pass_break_add, 0,
    "TEST ONLY: turns every Add into Sub (a deliberately wrong pass)"};

int sm_pass_count(void)
{
    return N_PASSES;
}

const sm_pass_info *sm_pass_get(int i)
{
    return i >= 0 && i < N_PASSES ? &registry[i] : NULL;
}

const sm_pass_info *sm_pass_find(const char *name)
{
    for (int i = 0; i < N_PASSES; i++)
        if (!strcmp(registry[i].name, name))
            return &registry[i];
    const char *env = getenv("SMELT_TEST_BROKEN_PASS");
    if (env && !strcmp(env, "1") && !strcmp(name, broken_pass.name))
        return &broken_pass;
    return NULL;
}

void sm_pass_options_default(sm_pass_options *o)
{
    memset(o, 0, sizeof *o);
    o->fold_max_bytes = SM_FOLD_MAX_BYTES_DEFAULT;
    o->unroll_max_trips = SM_UNROLL_MAX_TRIPS_DEFAULT;
#ifndef NDEBUG
    o->verify_each = 1;
#endif
}

void sm_pass_log(sm_pass_ctx *pc, const char *fmt, ...)
{
    sm_pass_stats *s = pc->stats;
    if (!s)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    size_t n = (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
    char *p = sm_realloc(s->log, s->log_len + n + 2);
    if (!p)
        return;
    memcpy(p + s->log_len, line, n);
    p[s->log_len + n] = '\n';
    p[s->log_len + n + 1] = 0;
    s->log = p;
    s->log_len += n + 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void stats_free(sm_pass_stats *s)
{
    sm_free(s->log);
    s->log = NULL;
    s->log_len = 0;
}

void sm_pass_report_free(sm_pass_report *rep)
{
    if (!rep)
        return;
    for (int i = 0; i < rep->n; i++)
        stats_free(&rep->steps[i].stats);
    sm_free(rep->steps);
    rep->steps = NULL;
    rep->n = 0;
}

/* Runs one pass with its stats, the verifier and the dump. */
static smelt_status run_one(smelt_ctx_t *ctx, sm_graph *g,
                            const sm_pass_options *opt, int step,
                            sm_pass_step *ps, sm_pass_dumper *dump)
{
    sm_pass_stats *st = &ps->stats;
    memset(st, 0, sizeof *st);
    st->nodes_before = sm_block_count_nodes(g->top);
    sm_pass_ctx pc = {ctx, opt, st, ps->pass->name, step, dump};
    double t0 = now_ms();
    smelt_status s = ps->pass->run(&pc, g);
    ps->ms = now_ms() - t0;
    if (s != SMELT_OK)
        return s == SMELT_ERR_NOMEM
                   ? s
                   : sm_err_prefix(ctx, "pass '%s': ", ps->pass->name);
    st->nodes_after = sm_block_count_nodes(g->top);
    if (st->nodes_after != st->nodes_before)
        st->changed = 1;
    if (opt->verify_each && (s = sm_graph_verify(ctx, g)) != SMELT_OK)
        return s == SMELT_ERR_NOMEM
                   ? s
                   : sm_err_prefix(ctx,
                                   "the graph is invalid after pass '%s': ",
                                   ps->pass->name);
    return dump ? sm_dump_graph(dump, g, step, ps->pass->name) : SMELT_OK;
}

smelt_status sm_pass_run(smelt_ctx_t *ctx, sm_graph *g,
                         const sm_pass_options *opt,
                         const sm_pass_info *const *list, int n,
                         sm_pass_report *rep)
{
    sm_pass_options defaults;
    if (!opt) {
        sm_pass_options_default(&defaults);
        opt = &defaults;
    }
    if (rep) {
        rep->n = 0;
        rep->steps = n ? sm_calloc((size_t)n, sizeof *rep->steps) : NULL;
        if (n && !rep->steps)
            return sm_err_nomem(ctx);
    }
    sm_pass_dumper *dump = NULL;
    smelt_status st = SMELT_OK;
    if (opt->debug_dir) {
        st = sm_dump_open(ctx, opt->debug_dir, &dump);
        if (st == SMELT_OK)
            st = sm_dump_graph(dump, g, 0, "captured");
    }
    for (int i = 0; i < n && st == SMELT_OK; i++) {
        sm_pass_step local = {list[i], {0}, 0};
        sm_pass_step *ps = rep ? &rep->steps[i] : &local;
        ps->pass = list[i];
        if (rep)
            rep->n = i + 1;
        st = run_one(ctx, g, opt, i + 1, ps, dump);
        if (!rep)
            stats_free(&local.stats);
    }
    sm_dump_close(dump);
    return st;
}
