/*
 * prof.h - the CLI's profiler, shared by `smelt bench` and `smelt
 * profile` (one implementation): timed runs of a plan with per-step and
 * per-work-item times, the per-node or per-op table against this
 * machine's peaks (roofline), the Chrome trace and the memory history.
 */
#ifndef SMELT_CLI_PROF_H
#define SMELT_CLI_PROF_H

#include <stdio.h>

#include "progress.h"
#include "smelt.h"

/* What timed runs recorded. */
typedef struct cli_prof {
    int runs, n_steps, steps_kept; /* steps_kept: per-step times recorded */
    double *lat;                   /* runs: each run whole, ms */
    double *start;   /* runs: each run's start, ms from the first */
    double *t0, *t1; /* runs x steps (steps_kept), ms from the run's start */
    smelt_work_item *items; /* the pool's work items of every run */
    int *item_run;          /* the run each item belongs to */
    int n_items, cap_items, dropped_items;
} cli_prof;

/* Allocates for runs x n_steps; per-step times only when `steps`. 0, or
 * 1 after printing "out of memory". */
int cli_prof_init(cli_prof *pr, int runs, int n_steps, int steps);
void cli_prof_free(cli_prof *pr);

/* Runs p warmup times untimed, then pr->runs times timed on a session of
 * its own, keeping each run's latency (and per-step times and work items
 * when pr->steps_kept). Progress goes to pg (may be NULL). 0, or 1 after
 * printing the error (what names the model). */
int cli_prof_run(smelt_ctx_t *ctx, const smelt_plan_t *p,
                 smelt_tensor_t *const *in, int n_in, int warmup,
                 const char *what, cli_progress *pg, cli_prof *pr);

/* The median and minimum of the timed runs' latencies. */
void cli_prof_latency(const cli_prof *pr, double *median, double *min,
                      double *mean);

/* This machine's peak compute (GFLOP/s) and bandwidth (GB/s) for plans
 * of `threads` threads: given (> 0), else read from the cache under
 * $XDG_CACHE_HOME/smelt (~/.cache/smelt), else measured once by a short
 * probe (a large MatMul and a large Add through plans) and cached. */
void cli_peaks(smelt_ctx_t *ctx, int threads, double *gflops, double *gbs);

/* One row of the profile table (a node, or an op and kernel). */
typedef struct cli_prof_row {
    const char *name, *op, *kernel;         /* name "" when by op */
    int first_step;                         /* a step of the row (the first) */
    int steps;                              /* steps in the row */
    long calls;                             /* steps x runs */
    double total_ms, min_ms, p50, p90, p99; /* per call for min and pcts */
    double flops, bytes;                    /* per run */
    int overhead;                           /* the executor's own time */
} cli_prof_row;

/* The table: rows sorted by total time, the overhead row last (shares
 * of the runs' whole time add to 100% with it). by_op groups steps by op
 * and kernel, else one row per step. *rows is the caller's to free. */
int cli_prof_rows(const smelt_plan_t *p, const cli_prof *pr, int by_op,
                  cli_prof_row **rows, int *n_rows);

/* Prints the table (text), or with json the whole profile as one JSON
 * document, against peaks gflops and gbs. */
void cli_prof_print(FILE *f, const smelt_plan_t *p, const cli_prof *pr,
                    int by_op, double gflops, double gbs, int json);

/* Writes the timed runs as a Chrome trace (Perfetto): a span per run and
 * per step on thread 0, the pool's work items on each worker's lane,
 * args with shapes, dtypes, FLOPs and bytes. f is closed. 0, or 1 after
 * printing the error. */
int cli_prof_trace(FILE *f, const char *path, const smelt_plan_t *p,
                   const cli_prof *pr);

/* Writes the plan's memory history as JSON (buffers with lifetimes and
 * arena places, live bytes per step, planned peak and its step, the
 * measured peak RSS). f is closed. 0, or 1 after printing the error. */
int cli_memory_write(FILE *f, const char *path, const smelt_plan_t *p);

/* The arena bytes live at each step into live[0..steps) (regions and
 * workspaces live there); 0, or 1 when out of memory. */
int cli_memory_live(const smelt_plan_t *p, int64_t *live);

/* The planned peak: the most arena bytes live at one step, and the
 * first step where it is reached (-1 for a plan without arena use). */
int64_t cli_memory_peak(const smelt_plan_t *p, int *step);

/* The process's peak resident set so far, in bytes. */
int64_t cli_peak_rss(void);

/* Writes s as a JSON string (quotes and escapes included). */
void cli_json_str(FILE *f, const char *s);

#endif
