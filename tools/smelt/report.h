/*
 * report.h - `smelt report`: one self-contained HTML page about a model
 * (report.c gathers, report_html.c writes the page, report_svg.c draws
 * the charts and pages the Graphviz drawings).
 */
#ifndef SMELT_CLI_REPORT_H
#define SMELT_CLI_REPORT_H

#include <stdio.h>

#include "prof.h"
#include "smelt.h"

/* Op nodes drawn per graph page: a Graphviz drawing of more gets slow to
 * lay out and to open, so bigger graphs are split into pages. */
#define REPORT_PAGE_NODES 60

/* Everything the page shows. */
typedef struct report_data {
    const char *file;
    const smelt_graph_t *before, *after; /* as loaded; as optimized */
    const smelt_opt_report_t *passes;    /* what each pass did */
    const smelt_plan_t *plan;
    const cli_prof *prof;
    cli_prof_row *rows; /* the per-node profile */
    int n_rows;
    double gflops, gbs, compile_ms;
    int level;
    const char *check_out; /* `smelt check`'s report (NULL: not run) */
    int check_rc;
} report_data;

/* Writes the page; 0, or 1 after printing the error. */
int report_write_html(FILE *f, const report_data *d);

/* Text with &, <, >, " escaped for HTML. */
void report_esc(FILE *f, const char *s);

/* The roofline: a point per profiled node (intensity, achieved GFLOP/s)
 * under the roofs of peak compute and bandwidth, on log-log axes. */
void report_roofline_svg(FILE *f, const report_data *d);

/* The memory timeline: each arena region as a box from the step that
 * creates it to its last reader, at its offset; live bytes per step. */
void report_memory_svg(FILE *f, const smelt_plan_t *p);

/* The graph drawn by Graphviz, REPORT_PAGE_NODES op nodes a page, each
 * page a <div class="page"> holding its SVG (id names the set). Returns
 * the pages drawn (0 when dot is missing or fails: a note says so). */
int report_graph_pages(FILE *f, const smelt_graph_t *g, const char *id);

#endif
