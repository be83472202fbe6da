/*
 * report_html.c - the page `smelt report` writes (report.h): one HTML
 * file with its CSS, script and pictures inline, so it opens anywhere,
 * offline, by double-click. Sections: summary, graph before and after
 * optimization (Graphviz, paged; clicking a node jumps to its profile
 * row), what each pass changed and the near-miss fusions, the sortable
 * profile table, the roofline, the memory timeline, and smelt check's
 * comparison and checklist.
 */
#include <string.h>

#include "report.h"

void report_esc(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

static const char css[] =
    "body{font:14px/1.4 sans-serif;margin:0 2em 4em;color:#222}"
    "h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:2em}"
    "nav a{margin-right:1em}table{border-collapse:collapse;font-size:12px}"
    "td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}"
    "td.l,th.l{text-align:left}th{background:#f0f0f0;cursor:pointer;"
    "user-select:none}th.asc:after{content:' \\25b2'}"
    "th.desc:after{content:' \\25bc'}tr.hl{background:#ffe9a8}"
    "tr.over{color:#777;font-style:italic}.page{overflow:auto;"
    "max-height:80vh;border:1px solid #eee}.page svg{max-width:none}"
    "pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}"
    ".note{color:#a40}.pager button{margin-right:.5em}"
    "g.node{cursor:pointer}circle.pt{cursor:pointer}";

/* The page's behaviour: sorting the profile table by a clicked header,
 * paging graphs, and jumping from a graph node or roofline point to its
 * profile row. No library, no network. */
static const char script[] =
    "function sortBy(th){var t=th.closest('table'),i=th.cellIndex,"
    "num=th.dataset.t==='n',b=t.tBodies[0],asc=!th.classList.contains('asc');"
    "t.querySelectorAll('th').forEach(function(h){h.classList.remove('asc',"
    "'desc')});th.classList.add(asc?'asc':'desc');"
    "var rows=Array.prototype.slice.call(b.rows);rows.sort(function(x,y){"
    "var a=x.cells[i].dataset.v||x.cells[i].textContent,"
    "c=y.cells[i].dataset.v||y.cells[i].textContent;"
    "var r=num?(parseFloat(a)-parseFloat(c)):a.localeCompare(c);"
    "return asc?r:-r});rows.forEach(function(r){b.appendChild(r)})}\n"
    "document.querySelectorAll('table.sortable th').forEach(function(th){"
    "th.addEventListener('click',function(){sortBy(th)})});\n"
    "function show(set,k){var ps=document.querySelectorAll('#'+set+' .page');"
    "ps.forEach(function(p,i){p.hidden=i!==k});"
    "var l=document.getElementById(set+'-at');if(l)l.textContent="
    "'page '+(k+1)+' of '+ps.length;document.getElementById(set)"
    ".dataset.at=k}\n"
    "document.querySelectorAll('.pager button').forEach(function(b){"
    "b.addEventListener('click',function(){var set=b.dataset.set,"
    "n=document.querySelectorAll('#'+set+' .page').length,"
    "k=+(document.getElementById(set).dataset.at||0)+(+b.dataset.d);"
    "if(k>=0&&k<n)show(set,k)})});\n"
    "function jump(name){var r=document.querySelector('tr[data-node=\"'+"
    "CSS.escape(name)+'\"]');if(!r)return;document.querySelectorAll('tr.hl')"
    ".forEach(function(x){x.classList.remove('hl')});r.classList.add('hl');"
    "r.scrollIntoView({block:'center'})}\n"
    "document.querySelectorAll('g.node').forEach(function(g){var n=null;"
    "g.querySelectorAll('text').forEach(function(t){var s=t.textContent;"
    "if(s.charAt(0)==='@')n=s.slice(1)});if(n){g.addEventListener('click',"
    "function(){jump(n)});g.setAttribute('data-node',n)}});\n"
    "document.querySelectorAll('circle.pt').forEach(function(c){"
    "c.addEventListener('click',function(){var r=document.getElementById("
    "'step-'+c.dataset.node);if(r)jump(r.dataset.node)})});\n";

/* Summary facts: model, sizes, plan, latency. */
static void summary(FILE *f, const report_data *d)
{
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(d->plan, &st);
    double med, mn, mean;
    cli_prof_latency(d->prof, &med, &mn, &mean);
    fprintf(f, "<h2 id=summary>Summary</h2>\n<table>\n<tr><th class=l>model"
               "</th><td class=l>");
    report_esc(f, d->file);
    fprintf(f, "</td></tr>\n<tr><th class=l>inputs</th><td class=l>");
    for (int i = 0; i < smelt_plan_num_inputs(d->plan); i++) {
        fprintf(f, "%s", i ? ", " : "");
        report_esc(f, smelt_graph_input_name(d->before, i));
        fprintf(f, " %s[",
                smelt_dtype_name(smelt_plan_input_dtype(d->plan, i)));
        for (int k = 0; k < smelt_plan_input_ndim(d->plan, i); k++)
            fprintf(f, "%s%lld", k ? "," : "",
                    (long long)smelt_plan_input_dim(d->plan, i, k));
        fprintf(f, "]");
    }
    fprintf(f,
            "</td></tr>\n<tr><th class=l>nodes</th><td class=l>%d as "
            "loaded, %d after -O%d</td></tr>\n"
            "<tr><th class=l>plan</th><td class=l>%d steps (%d optimized "
            "kernels, %d reference, %d dynamic), %d threads, isa %s, "
            "compiled in %.1f ms</td></tr>\n"
            "<tr><th class=l>latency</th><td class=l>median %.3f ms, min "
            "%.3f ms (%d runs)</td></tr>\n"
            "<tr><th class=l>memory</th><td class=l>arena %.2f MiB "
            "(%.2f MiB without sharing), weights %.2f MiB</td></tr>\n"
            "<tr><th class=l>peaks</th><td class=l>%.1f GFLOP/s, %.1f "
            "GB/s</td></tr>\n</table>\n",
            smelt_graph_num_nodes(d->before), smelt_graph_num_nodes(d->after),
            d->level, st.steps, st.kernel_steps, st.ref_steps, st.dynamic_steps,
            st.threads, st.isa, d->compile_ms, med, mn, d->prof->runs,
            (double)st.arena_bytes / 1048576.0,
            (double)st.unshared_bytes / 1048576.0,
            (double)st.weight_bytes / 1048576.0, d->gflops, d->gbs);
}

/* A graph section: pager buttons and the pages. */
static void graph_section(FILE *f, const smelt_graph_t *g, const char *id,
                          const char *title)
{
    fprintf(f, "<h3>%s (%d nodes)</h3>\n<div id=%s>\n", title,
            smelt_graph_num_nodes(g), id);
    int pages = report_graph_pages(f, g, id);
    fprintf(f, "</div>\n");
    if (pages > 1)
        fprintf(f,
                "<p class=pager><button data-set=%s data-d=-1>previous"
                "</button><button data-set=%s data-d=1>next</button>"
                "<span id=%s-at>page 1 of %d</span> (%d op nodes a page; "
                "dashed boxes are nodes on other pages)</p>\n",
                id, id, id, pages, REPORT_PAGE_NODES);
}

/* What each pass did, and the fusion passes' notes (near misses). */
static void passes(FILE *f, const report_data *d)
{
    fprintf(f, "<h2 id=passes>Passes</h2>\n<table>\n<tr><th class=l>pass"
               "</th><th>nodes before</th><th>after</th><th>changed</th>"
               "<th>folded</th><th>removed</th><th>fused</th><th>ms</th>"
               "</tr>\n");
    int n = smelt_opt_report_num_passes(d->passes), notes = 0;
    for (int i = 0; i < n; i++) {
        smelt_pass_stats ps = SMELT_STRUCT_INIT(smelt_pass_stats);
        if (smelt_opt_report_get(d->passes, i, &ps) != SMELT_OK)
            continue;
        fprintf(f, "<tr><td class=l>");
        report_esc(f, ps.name);
        fprintf(f,
                "</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d"
                "</td><td>%d</td><td>%.2f</td></tr>\n",
                ps.nodes_before, ps.nodes_after, ps.changed, ps.folded,
                ps.removed, ps.fused, ps.ms);
        notes += ps.log && *ps.log;
    }
    fprintf(f, "</table>\n<h3>Near-miss fusions and other notes</h3>\n");
    if (!notes)
        fprintf(f, "<p>No pass left a note.</p>\n");
    for (int i = 0; i < n; i++) {
        smelt_pass_stats ps = SMELT_STRUCT_INIT(smelt_pass_stats);
        if (smelt_opt_report_get(d->passes, i, &ps) != SMELT_OK || !ps.log ||
            !*ps.log)
            continue;
        fprintf(f, "<p><b>");
        report_esc(f, ps.name);
        fprintf(f, "</b></p><pre>");
        report_esc(f, ps.log);
        fprintf(f, "</pre>\n");
    }
}

/* The sortable per-node table; rows carry the node name for the links. */
static void profile_table(FILE *f, const report_data *d)
{
    static const char *const head[] = {
        "node",   "op",     "kernel",  "calls", "total ms", "mean ms",
        "min ms", "p50",    "p90",     "p99",   "%",        "MFLOP",
        "MB",     "FLOP/B", "GFLOP/s", "GB/s",  "bound"};
    double total = 0;
    for (int k = 0; k < d->n_rows; k++)
        total += d->rows[k].total_ms;
    fprintf(f,
            "<h2 id=profile>Profile</h2>\n<p>Per node over %d runs; "
            "click a header to sort, a graph node or a roofline point to "
            "find its row.</p>\n<table class=sortable id=prof>\n<thead>"
            "<tr>",
            d->prof->runs);
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        fprintf(f, "<th%s data-t=%s>%s</th>",
                i < 3 || i == 16 ? " class=l" : "",
                i < 3 || i == 16 ? "s" : "n", head[i]);
    fprintf(f, "</tr></thead>\n<tbody>\n");
    int runs = d->prof->runs ? d->prof->runs : 1;
    for (int k = 0; k < d->n_rows; k++) {
        const cli_prof_row *r = &d->rows[k];
        double s = r->total_ms / runs / 1e3;
        const char *bound =
            r->overhead || r->bytes <= 0 ? "-"
            : d->gbs > 0 && r->flops / r->bytes >= d->gflops / d->gbs
                ? "compute"
                : "memory";
        fprintf(f, "<tr id=\"step-%d\" data-node=\"", r->first_step);
        report_esc(f, r->name);
        fprintf(f, "\"%s><td class=l>", r->overhead ? " class=over" : "");
        report_esc(f, r->name);
        fprintf(f, "</td><td class=l>");
        report_esc(f, r->op);
        fprintf(f, "</td><td class=l>");
        report_esc(f, r->kernel);
        fprintf(f,
                "</td><td>%ld</td><td>%.4f</td><td>%.5f</td><td>%.5f</td>"
                "<td>%.5f</td><td>%.5f</td><td>%.5f</td><td>%.1f</td>"
                "<td>%.3f</td><td>%.3f</td><td>%.2f</td><td>%.2f</td>"
                "<td>%.2f</td><td class=l>%s</td></tr>\n",
                r->calls, r->total_ms,
                r->calls ? r->total_ms / (double)r->calls : 0, r->min_ms,
                r->p50, r->p90, r->p99,
                total > 0 ? 100 * r->total_ms / total : 0, r->flops / 1e6,
                r->bytes / 1e6, r->bytes > 0 ? r->flops / r->bytes : 0,
                s > 0 ? r->flops / s / 1e9 : 0, s > 0 ? r->bytes / s / 1e9 : 0,
                bound);
    }
    fprintf(f, "</tbody></table>\n");
}

int report_write_html(FILE *f, const report_data *d)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
               "<title>smelt report: ");
    report_esc(f, d->file);
    fprintf(
        f, "</title>\n<style>%s</style></head><body>\n<h1>smelt report: ", css);
    report_esc(f, d->file);
    fprintf(f, "</h1>\n<nav><a href=#summary>summary</a><a href=#graphs>"
               "graph</a><a href=#passes>passes</a><a href=#profile>profile"
               "</a><a href=#roof>roofline</a><a href=#memory>memory</a>"
               "<a href=#check>check</a></nav>\n");
    summary(f, d);
    fprintf(f, "<h2 id=graphs>Graph</h2>\n<p>Click a node to find its "
               "profile row.</p>\n");
    graph_section(f, d->before, "g-before", "As loaded");
    graph_section(f, d->after, "g-after", "After optimization");
    passes(f, d);
    profile_table(f, d);
    fprintf(f, "<h2 id=roof>Roofline</h2>\n<p>Each node at its arithmetic "
               "intensity and achieved rate; blue under the compute roof, "
               "orange under the bandwidth roof. Click a point to find its "
               "row.</p>\n");
    report_roofline_svg(f, d);
    fprintf(f, "<h2 id=memory>Memory</h2>\n<p>Each arena buffer from the step "
               "that creates it to its last reader, at its offset (blue: "
               "values, orange: workspaces); below, the bytes live at each "
               "step, the peak marked.</p>\n");
    report_memory_svg(f, d->plan);
    fprintf(f, "<h2 id=check>Check</h2>\n");
    if (d->check_out) {
        fprintf(f, "<p>smelt check %s (exit %d):</p>\n<pre>",
                d->check_rc ? "found a problem" : "passed", d->check_rc);
        report_esc(f, d->check_out);
        fprintf(f, "</pre>\n");
    } else {
        fprintf(f, "<p class=note>smelt check could not run.</p>\n");
    }
    fprintf(f, "<script>\n%s</script>\n</body></html>\n", script);
    return 0;
}
