/*
 * pass.h - optimizer passes: functions over a graph, registered by name in
 * passes.def, grouped into pipelines -O0..-O3 (pipelines.c).
 *
 * A pass gets the graph and a context with the options and a stats record
 * to fill. It must leave the graph verified and computing what it computed
 * before; the manager (pass_manager.c) checks the first after every pass
 * when opt->verify_each is set, and `smelt check` the second.
 */
#ifndef SM_PASS_H
#define SM_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Knobs every pass may read. */
typedef struct sm_pass_options {
    size_t fold_max_bytes; /* constant folding never makes a bigger constant
                              (default 64 MiB) */
    int unroll_max_trips;  /* Loops with a constant trip count up to this
                              are unrolled (default 16) */
    int verify_each;       /* run the verifier after every pass (default: on
                              in debug builds, i.e. without NDEBUG) */
    int why_not_fused;     /* fusion passes record near misses */
    const char *debug_dir; /* write a dump per pass here (NULL: none) */
} sm_pass_options;

#define SM_FOLD_MAX_BYTES_DEFAULT ((size_t)64 << 20)
#define SM_UNROLL_MAX_TRIPS_DEFAULT 16
/* Unrolling never makes more than this many nodes out of one Loop. */
#define SM_UNROLL_MAX_NODES 4096

void sm_pass_options_default(sm_pass_options *o);

/* What one pass did; the manager fills nodes_before/after, the pass the
 * rest. `log` collects free-form lines (near misses, notes). */
typedef struct sm_pass_stats {
    int nodes_before, nodes_after; /* nodes in all blocks */
    int changed;                   /* nonzero when the graph changed */
    int folded;                    /* constants produced by folding */
    int removed;                   /* nodes removed */
    int fused;                     /* nodes absorbed into fused nodes */
    char *log;                     /* owned, NUL-terminated, may be NULL */
    size_t log_len;
} sm_pass_stats;

struct sm_pass_dumper;

typedef struct sm_pass_ctx {
    smelt_ctx_t *ctx;
    const sm_pass_options *opt;
    sm_pass_stats *stats;
    /* set by the manager: */
    const char *pass_name;
    int step;                    /* position in the pipeline, from 1 */
    struct sm_pass_dumper *dump; /* NULL unless dumping */
} sm_pass_ctx;

typedef smelt_status (*sm_pass_fn)(sm_pass_ctx *pc, sm_graph *g);

typedef struct sm_pass_info {
    const char *name;
    sm_pass_fn run;
    int level; /* the lowest -O level whose pipeline includes it (0: only
                  when named with --passes) */
    const char *summary;
} sm_pass_info;

/* Appends a printf-style line to pc->stats->log (ignored when out of
 * memory: logs are advisory). */
void sm_pass_log(sm_pass_ctx *pc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* When the manager is dumping (SMELT_DEBUG / --debug-dir), writes `text`
 * to "<step>-<pass>.<suffix>" in the dump folder and lists it in the
 * index (generated code, say). A no-op otherwise. */
smelt_status sm_pass_dump_file(sm_pass_ctx *pc, const char *suffix,
                               const char *text, size_t len);

#define PASS(name, fn, level, summary)                                         \
    smelt_status fn(sm_pass_ctx *pc, sm_graph *g);
#include "passes/passes.def"
#undef PASS

/* Helpers shared by passes (fold.c): the dims Shape node `shape` returns,
 * from its input's type, as an i64 tensor with -1 for each dim that is
 * not a known size; *out is NULL when the input's rank is unknown. */
smelt_status sm_pass_shape_dims(smelt_ctx_t *ctx, const sm_node *shape,
                                sm_tensor **out);

/* TEST ONLY, never in the registry: turns every Add into Sub, so that a
 * test can prove `smelt check` names a pass that breaks the numerics. */
smelt_status sm_pass_break_add(sm_pass_ctx *pc, sm_graph *g);

/* The registry: every row of passes.def, in table order. */
int sm_pass_count(void);
const sm_pass_info *sm_pass_get(int i);
/* A pass by name, NULL when there is none. The deliberately broken test
 * pass `break_add` is found only while the environment variable
 * SMELT_TEST_BROKEN_PASS is 1 (see docs/PASSES.md). */
const sm_pass_info *sm_pass_find(const char *name);

/* ---- pipelines (pipelines.c) --------------------------------------------- */

/* The passes of a pipeline: `passes` (a comma list of names) when not
 * NULL, else the -O`level` pipeline. *out is an sm_malloc'd array of *n
 * entries (NULL when n is 0). Unknown names fail with SMELT_ERR_NOT_FOUND. */
smelt_status sm_pipeline_resolve(smelt_ctx_t *ctx, int level,
                                 const char *passes, const sm_pass_info ***out,
                                 int *n);

/* Removes from list (n entries) every pass named in `disable` (a comma
 * list; NULL or "": none). A name that is no pass fails with
 * SMELT_ERR_NOT_FOUND and a message listing the passes. */
smelt_status sm_pipeline_disable(smelt_ctx_t *ctx, const char *disable,
                                 const sm_pass_info **list, int *n);

/* ---- running (pass_manager.c) -------------------------------------------- */

typedef struct sm_pass_step {
    const sm_pass_info *pass;
    sm_pass_stats stats;
    double ms;
} sm_pass_step;

typedef struct sm_pass_report {
    int n;
    sm_pass_step *steps;
} sm_pass_report;

/* Runs list[0..n) over g in order, with stats per pass in rep (which may be
 * NULL), the verifier after each pass when opt->verify_each, and a dump
 * per pass when opt->debug_dir. On failure the error names the pass; the
 * graph may then be half-rewritten and must only be freed. */
smelt_status sm_pass_run(smelt_ctx_t *ctx, sm_graph *g,
                         const sm_pass_options *opt,
                         const sm_pass_info *const *list, int n,
                         sm_pass_report *rep);
void sm_pass_report_free(sm_pass_report *rep);

#endif
