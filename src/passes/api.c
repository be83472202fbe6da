/*
 * api.c - the optimizer's public entry points (smelt.h): options,
 * smelt_graph_optimize and its report, the pass list, graph copies and
 * the input-type queries tools use to make inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dump_dir.h"
#include "core/sized.h"
#include "core/strbuf.h"
#include "ir/rewrite.h"
#include "passes/pass.h"

struct smelt_opt_report {
    sm_pass_report rep;
};

/* The first versions of the sized structs end with these fields. */
#define OPT_OPTIONS_V1 SM_FIELD_END(smelt_opt_options, debug_dir)
#define PASS_STATS_V1 SM_FIELD_END(smelt_pass_stats, log)

/* This library's defaults, in a struct of its own size. */
static void opt_options_defaults(smelt_opt_options *o)
{
    sm_pass_options d;
    sm_pass_options_default(&d);
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->level = 1;
    o->fold_max_bytes = d.fold_max_bytes;
    o->unroll_max_trips = d.unroll_max_trips;
    o->verify_each = d.verify_each;
}

smelt_status smelt_opt_options_init(smelt_opt_options *o, size_t struct_size)
{
    smelt_opt_options d;
    opt_options_defaults(&d);
    return sm_sized_init(o, struct_size, &d, sizeof d, OPT_OPTIONS_V1);
}

/* The caller's options (NULL: the defaults) as a struct of this
 * library's size in *o. */
static smelt_status read_opt_options(smelt_ctx_t *ctx,
                                     const smelt_opt_options *opt,
                                     smelt_opt_options *o)
{
    opt_options_defaults(o);
    if (!opt)
        return SMELT_OK;
    return sm_sized_in(ctx, "smelt_opt_options", o, sizeof *o, OPT_OPTIONS_V1,
                       opt);
}

/* The internal options for o, with SMELT_DEBUG applied. */
static void to_pass_options(const smelt_opt_options *o, sm_pass_options *p)
{
    sm_pass_options_default(p);
    if (o->fold_max_bytes)
        p->fold_max_bytes = (size_t)o->fold_max_bytes;
    if (o->unroll_max_trips >= 0)
        p->unroll_max_trips = o->unroll_max_trips;
    p->verify_each = o->verify_each != 0;
    p->why_not_fused = o->why_not_fused != 0;
    p->debug_dir = sm_dump_dir(o->debug_dir);
    if (sm_dump_dir(NULL))
        p->verify_each = 1;
}

smelt_status smelt_graph_optimize(smelt_ctx_t *ctx, smelt_graph_t *g,
                                  const smelt_opt_options *opt,
                                  smelt_opt_report_t **report)
{
    if (report)
        *report = NULL;
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_optimize: NULL graph");
    smelt_opt_options d;
    SM_TRY(read_opt_options(ctx, opt, &d));
    opt = &d;
    sm_pass_options po;
    to_pass_options(opt, &po);
    const sm_pass_info **list;
    int n;
    SM_TRY(sm_pipeline_resolve(ctx, opt->level, opt->passes, &list, &n));
    if (sm_pipeline_disable(ctx, opt->disable, list, &n) != SMELT_OK) {
        sm_free(list);
        return SMELT_ERR_NOT_FOUND;
    }
    smelt_opt_report_t *r = report ? sm_calloc(1, sizeof *r) : NULL;
    smelt_status st =
        report && !r ? sm_err_nomem(ctx)
                     : sm_pass_run(ctx, g, &po, list, n, r ? &r->rep : NULL);
    sm_free(list);
    if (st != SMELT_OK || !report) {
        smelt_opt_report_free(r);
        return st;
    }
    *report = r;
    return SMELT_OK;
}

void smelt_opt_report_free(smelt_opt_report_t *r)
{
    if (!r)
        return;
    sm_pass_report_free(&r->rep);
    sm_free(r);
}

int smelt_opt_report_num_passes(const smelt_opt_report_t *r)
{
    return r ? r->rep.n : 0;
}

smelt_status smelt_opt_report_get(const smelt_opt_report_t *r, int i,
                                  smelt_pass_stats *caller)
{
    if (!r || !caller || i < 0 || i >= r->rep.n)
        return SMELT_ERR_INVALID_ARG;
    SM_TRY(sm_sized_check(NULL, "smelt_pass_stats", caller, PASS_STATS_V1));
    const sm_pass_step *s = &r->rep.steps[i];
    smelt_pass_stats st, *out = &st;
    memset(out, 0, sizeof *out);
    out->name = s->pass->name;
    out->nodes_before = s->stats.nodes_before;
    out->nodes_after = s->stats.nodes_after;
    out->changed = s->stats.changed;
    out->folded = s->stats.folded;
    out->removed = s->stats.removed;
    out->fused = s->stats.fused;
    out->ms = s->ms;
    out->log = s->stats.log ? s->stats.log : "";
    sm_sized_out(caller, out, sizeof *out);
    return SMELT_OK;
}

smelt_status smelt_opt_report_print(smelt_ctx_t *ctx,
                                    const smelt_opt_report_t *r, int notes,
                                    char **out)
{
    *out = NULL;
    if (!r)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_opt_report_print: NULL report");
    int w = 12; /* the widest pass name */
    for (int i = 0; i < r->rep.n; i++) {
        int k = (int)strlen(r->rep.steps[i].pass->name);
        w = k > w ? k : w;
    }
    sm_strbuf b;
    sm_strbuf_init(&b);
    sm_strbuf_appendf(&b, "%-*s %15s %7s %8s %6s %10s\n", w, "pass", "nodes",
                      "folded", "removed", "fused", "time");
    double total = 0;
    for (int i = 0; i < r->rep.n; i++) {
        const sm_pass_step *s = &r->rep.steps[i];
        char nodes[32];
        snprintf(nodes, sizeof nodes, "%d -> %d", s->stats.nodes_before,
                 s->stats.nodes_after);
        sm_strbuf_appendf(&b, "%-*s %15s %7d %8d %6d %7.2f ms\n", w,
                          s->pass->name, nodes, s->stats.folded,
                          s->stats.removed, s->stats.fused, s->ms);
        total += s->ms;
        if (notes && s->stats.log) {
            const char *p = s->stats.log;
            while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                sm_strbuf_appendf(&b, "    %.*s\n", (int)len, p);
                p += len + (nl != NULL);
            }
        }
    }
    if (r->rep.n)
        sm_strbuf_appendf(&b, "%-*s %15s %7s %8s %6s %7.2f ms\n", w, "total",
                          "", "", "", "", total);
    return sm_strbuf_take(&b, ctx, out);
}

smelt_status smelt_opt_pipeline(smelt_ctx_t *ctx, const smelt_opt_options *opt,
                                char **out)
{
    *out = NULL;
    smelt_opt_options d;
    SM_TRY(read_opt_options(ctx, opt, &d));
    opt = &d;
    const sm_pass_info **list;
    int n;
    SM_TRY(sm_pipeline_resolve(ctx, opt->level, opt->passes, &list, &n));
    if (sm_pipeline_disable(ctx, opt->disable, list, &n) != SMELT_OK) {
        sm_free(list);
        return SMELT_ERR_NOT_FOUND;
    }
    sm_strbuf b;
    sm_strbuf_init(&b);
    for (int i = 0; i < n; i++)
        sm_strbuf_appendf(&b, "%s%s", i ? "," : "", list[i]->name);
    sm_free(list);
    sm_strbuf_puts(&b, "");
    if (!n && !b.failed) {
        char *empty = sm_strdup("");
        sm_strbuf_free(&b);
        *out = empty;
        return empty ? SMELT_OK : sm_err_nomem(ctx);
    }
    return sm_strbuf_take(&b, ctx, out);
}

int smelt_pass_count(void)
{
    return sm_pass_count();
}

const char *smelt_pass_name(int i)
{
    const sm_pass_info *p = sm_pass_get(i);
    return p ? p->name : NULL;
}

int smelt_pass_level(int i)
{
    const sm_pass_info *p = sm_pass_get(i);
    return p ? p->level : -1;
}

const char *smelt_pass_summary(int i)
{
    const sm_pass_info *p = sm_pass_get(i);
    return p ? p->summary : NULL;
}

smelt_status smelt_graph_clone(smelt_ctx_t *ctx, const smelt_graph_t *g,
                               smelt_graph_t **out)
{
    if (!out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_graph_clone: NULL");
    *out = NULL;
    if (!g)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_graph_clone: NULL");
    return sm_graph_clone(ctx, g, out);
}
