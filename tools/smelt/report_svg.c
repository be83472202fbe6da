/*
 * report_svg.c - the pictures of `smelt report` (report.h): the graph
 * through Graphviz in pages, and the roofline and memory timeline drawn
 * here as inline SVG (no script, no network: the page stands alone).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

/* ---- the graph ------------------------------------------------------------
 */

/* A line of the DOT text smelt_graph_dot writes: a node ("  ID [...]"),
 * an edge ("  A -> B [...]") or anything else (header, closing brace). */
typedef struct dot_line {
    const char *s;
    int len;
    char a[32], b[32]; /* node id, or an edge's ends */
    int edge, node;
    int pa, pb; /* the page of the node or of the edge's ends (-1: a value
                   node, drawn with whatever it touches) */
} dot_line;

/* Op nodes ("n12"; values are "v3", "out0") go REPORT_PAGE_NODES to a
 * page in the order the DOT text lists them (topological). */
static int is_op(const char *id)
{
    return id[0] == 'n' && id[1] >= '0' && id[1] <= '9';
}

/* The page of node id among lines L[0..n), -1 for values. */
static int find_page(const dot_line *L, int n, const char *id)
{
    if (!is_op(id))
        return -1;
    for (int i = 0; i < n; i++)
        if (L[i].node && !strcmp(L[i].a, id))
            return L[i].pa;
    return -1;
}

/* Splits text into lines and classifies them; *n lines. NULL when out of
 * memory. */
static dot_line *dot_lines(const char *text, int *n)
{
    int cap = 1;
    for (const char *c = text; *c; c++)
        cap += *c == '\n';
    dot_line *L = calloc((size_t)cap + 1, sizeof *L);
    if (!L)
        return NULL;
    int k = 0;
    for (const char *c = text; *c && k < cap;) {
        const char *e = strchr(c, '\n');
        int len = e ? (int)(e - c) : (int)strlen(c);
        dot_line *l = &L[k++];
        l->s = c;
        l->len = len;
        char rest[8];
        if (sscanf(c, "  %31[A-Za-z0-9_] -> %31[A-Za-z0-9_] %1[[]", l->a, l->b,
                   rest) == 3)
            l->edge = 1;
        else if (sscanf(c, "  %31[A-Za-z0-9_] %1[[]", l->a, rest) == 2)
            l->node = 1;
        c += len + (e != NULL);
    }
    int ops = 0;
    for (int i = 0; i < k; i++)
        if (L[i].node)
            L[i].pa = is_op(L[i].a) ? ops++ / REPORT_PAGE_NODES : -1;
    for (int i = 0; i < k; i++)
        if (L[i].edge) {
            L[i].pa = find_page(L, k, L[i].a);
            L[i].pb = find_page(L, k, L[i].b);
        }
    *n = k;
    return L;
}

/* Whether node `id` is drawn on page pg: an op node of the page, or a
 * value node (input, constant, output) an edge of the page touches. */
static int on_page(const dot_line *L, int n, const char *id, int pg)
{
    int p = find_page(L, n, id);
    if (p >= 0)
        return p == pg;
    for (int i = 0; i < n; i++)
        if (L[i].edge && (!strcmp(L[i].a, id) || !strcmp(L[i].b, id)) &&
            (L[i].pa == pg || L[i].pb == pg))
            return 1;
    return 0;
}

/* The DOT text of page pg into f: the header, the page's nodes, its
 * edges, and each op node of another page that an edge reaches, dashed
 * and labelled with its page. */
static void page_dot(FILE *f, const dot_line *L, int n, int pg)
{
    for (int i = 0; i < n; i++) {
        const dot_line *l = &L[i];
        if (!l->edge && !l->node) {
            fprintf(f, "%.*s\n", l->len, l->s);
            continue;
        }
        if (l->node) {
            if (on_page(L, n, l->a, pg))
                fprintf(f, "%.*s\n", l->len, l->s);
            continue;
        }
        if (l->pa != pg && l->pb != pg)
            continue;
        /* an op node of another page at the far end: a dashed stand-in */
        int far_a = l->pa >= 0 && l->pa != pg;
        int far_b = l->pb >= 0 && l->pb != pg;
        if (far_a || far_b)
            fprintf(f, "  %s [shape=box, style=dashed, label=\"(page %d)\"];\n",
                    far_a ? l->a : l->b, (far_a ? l->pa : l->pb) + 1);
        fprintf(f, "%.*s\n", l->len, l->s);
    }
}

/* Runs `dot -Tsvg` on file in and copies the SVG element (from "<svg")
 * into f. 0, or 1 when dot cannot run or fails. */
static int render(FILE *f, const char *in)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execlp("dot", "dot", "-Tsvg", in, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *r = fdopen(fds[0], "r");
    int started = 0, c;
    const char *key = "<svg";
    int matched = 0;
    while (r && (c = fgetc(r)) != EOF) {
        if (!started) {
            matched = c == key[matched] ? matched + 1 : c == '<';
            if (matched == 4) {
                fputs(key, f);
                started = 1;
            }
            continue;
        }
        fputc(c, f);
    }
    if (r)
        fclose(r);
    else
        close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return !started || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int report_graph_pages(FILE *f, const smelt_graph_t *g, const char *id)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    char *text = NULL;
    int n = 0, drawn = 0;
    dot_line *L = NULL;
    if (!ctx || smelt_graph_dot(ctx, g, &text) != SMELT_OK ||
        !(L = dot_lines(text, &n))) {
        fprintf(f, "<p class=note>The graph could not be drawn.</p>\n");
        goto done;
    }
    /* control flow draws as clusters, which pages would cut: one page */
    int ops = 0, whole = strstr(text, "subgraph") != NULL;
    for (int i = 0; i < n; i++)
        if (L[i].node && L[i].pa + 1 > ops)
            ops = L[i].pa + 1;
    int pages = whole || ops == 0 ? 1 : ops;
    for (int pg = 0; pg < pages; pg++) {
        char tmp[] = "/tmp/smelt-report-XXXXXX";
        int fd = mkstemp(tmp);
        FILE *t = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!t) {
            if (fd >= 0)
                close(fd), unlink(tmp);
            break;
        }
        if (pages == 1)
            fputs(text, t);
        else
            page_dot(t, L, n, pg);
        fclose(t);
        fprintf(f, "<div class=page id=\"%s-p%d\"%s>\n", id, pg + 1,
                pg ? " hidden" : "");
        int bad = render(f, tmp);
        unlink(tmp);
        fprintf(f, "</div>\n");
        if (bad) {
            fprintf(f, "<p class=note>Graphviz's <code>dot</code> could not "
                       "draw this graph: install the graphviz package.</p>\n");
            break;
        }
        drawn++;
    }
done:
    free(L);
    smelt_string_free(text);
    smelt_ctx_free(ctx);
    return drawn;
}

/* ---- the roofline ---------------------------------------------------------
 */

enum { RW = 720, RH = 420, ML = 70, MR = 20, MT = 20, MB = 50 };

/* Pixel of a value on a log axis from 10^lo to 10^hi over [a, b]. */
static double log_px(double v, double lo, double hi, double a, double b)
{
    double t = (log10(v) - lo) / (hi - lo);
    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    return a + t * (b - a);
}

void report_roofline_svg(FILE *f, const report_data *d)
{
    double ylo = -3, yhi = ceil(log10(d->gflops > 0 ? d->gflops : 1)) + 0.5;
    double xlo = -2, xhi = 3;
    double x0 = ML, x1 = RW - MR, y0 = RH - MB, y1 = MT;
    fprintf(
        f,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=roofline "
        "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
        "font-family=\"sans-serif\" font-size=\"11\">\n"
        "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#fafafa\" "
        "stroke=\"#999\"/>\n",
        RW, RH, RW, RH, x0, y1, x1 - x0, y0 - y1);
    for (int e = (int)xlo; e <= (int)xhi; e++) {
        double x = log_px(pow(10, e), xlo, xhi, x0, x1);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" "
                "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%g\" "
                "text-anchor=\"middle\">1e%d</text>\n",
                x, y0, x, y1, x, y0 + 15, e);
    }
    for (int e = (int)ylo; e <= (int)floor(yhi); e++) {
        double y = log_px(pow(10, e), ylo, yhi, y0, y1);
        fprintf(f,
                "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" "
                "stroke=\"#ddd\"/><text x=\"%g\" y=\"%.1f\" "
                "text-anchor=\"end\">1e%d</text>\n",
                x0, y, x1, y, x0 - 5, y + 4, e);
    }
    fprintf(f,
            "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\">arithmetic "
            "intensity (FLOP/byte)</text>\n"
            "<text transform=\"translate(15,%g) rotate(-90)\" "
            "text-anchor=\"middle\">achieved GFLOP/s</text>\n",
            (x0 + x1) / 2, RH - 10, (y0 + y1) / 2);
    /* the roofs: bandwidth x intensity, capped by peak compute */
    if (d->gflops > 0 && d->gbs > 0) {
        fprintf(f, "<polyline class=roof fill=\"none\" stroke=\"#c33\" "
                   "stroke-width=\"2\" points=\"");
        for (double lx = xlo; lx <= xhi + 1e-9; lx += 0.05) {
            double v = fmin(d->gflops, pow(10, lx) * d->gbs);
            fprintf(f, "%.1f,%.1f ", log_px(pow(10, lx), xlo, xhi, x0, x1),
                    log_px(v, ylo, yhi, y0, y1));
        }
        fprintf(f,
                "\"/>\n<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\" "
                "fill=\"#c33\">peak %.1f GFLOP/s, %.1f GB/s</text>\n",
                x1 - 5, log_px(d->gflops, ylo, yhi, y0, y1) - 6, d->gflops,
                d->gbs);
    }
    for (int k = 0; k < d->n_rows; k++) {
        const cli_prof_row *r = &d->rows[k];
        double s = r->total_ms / (d->prof->runs ? d->prof->runs : 1) / 1e3;
        if (r->overhead || r->flops <= 0 || r->bytes <= 0 || s <= 0)
            continue;
        double ai = r->flops / r->bytes, gf = r->flops / s / 1e9;
        int compute = d->gbs > 0 && ai >= d->gflops / d->gbs;
        fprintf(f,
                "<circle class=pt data-node=\"%d\" cx=\"%.1f\" cy=\"%.1f\" "
                "r=\"4\" fill=\"%s\" fill-opacity=\"0.7\"><title>",
                r->first_step, log_px(ai, xlo, xhi, x0, x1),
                log_px(gf, ylo, yhi, y0, y1), compute ? "#36c" : "#e80");
        report_esc(f, r->name);
        fprintf(f, " (");
        report_esc(f, r->op);
        fprintf(f, "): %.2f FLOP/B, %.2f GFLOP/s</title></circle>\n", ai, gf);
    }
    fprintf(f, "</svg>\n");
}

/* ---- the memory timeline --------------------------------------------------
 */

enum { MW = 900, MH = 360, LH = 120 };

/* Live arena bytes per step as a line under the timeline, on the same
 * step axis, the peak marked. */
static void live_svg(FILE *f, const smelt_plan_t *p, double arena)
{
    int steps = smelt_plan_num_steps(p);
    int64_t *live = malloc(sizeof *live * ((size_t)steps + 1));
    if (!live || cli_memory_live(p, live)) {
        free(live);
        return;
    }
    double x0 = ML, x1 = MW - MR, y0 = 10, y1 = LH - 20;
    double sw = (x1 - x0) / (steps > 0 ? steps : 1);
    int peak = 0;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=memlive "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"11\">\n"
            "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
            "fill=\"#fafafa\" stroke=\"#999\"/>\n"
            "<text transform=\"translate(15,%g) rotate(-90)\" "
            "text-anchor=\"middle\">live</text>\n"
            "<polyline fill=\"none\" stroke=\"#36c\" stroke-width=\"1.5\" "
            "points=\"",
            MW, LH, MW, LH, x0, y0, x1 - x0, y1 - y0, (y0 + y1) / 2);
    for (int j = 0; j < steps; j++) {
        double y = y1 - (y1 - y0) * (double)live[j] / arena;
        fprintf(f, "%.1f,%.1f %.1f,%.1f ", x0 + sw * j, y, x0 + sw * (j + 1),
                y);
        if (live[j] > live[peak])
            peak = j;
    }
    fprintf(f, "\"/>\n");
    if (steps > 0)
        fprintf(f,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#c33\">"
                "<title>peak: %.2f MiB live at step %d</title></circle>\n",
                x0 + sw * (peak + 0.5),
                y1 - (y1 - y0) * (double)live[peak] / arena,
                (double)live[peak] / 1048576.0, peak);
    fprintf(f, "</svg>\n");
    free(live);
}

void report_memory_svg(FILE *f, const smelt_plan_t *p)
{
    int steps = smelt_plan_num_steps(p), n = smelt_plan_num_buffers(p);
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    double arena = st.arena_bytes > 0 ? (double)st.arena_bytes : 1;
    double x0 = ML, x1 = MW - MR, y0 = MT, y1 = MH - MB;
    double sw = (x1 - x0) / (steps > 0 ? steps : 1);
    fprintf(
        f,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=memmap "
        "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
        "font-family=\"sans-serif\" font-size=\"11\">\n"
        "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#fafafa\" "
        "stroke=\"#999\"/>\n"
        "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\">step</text>\n"
        "<text transform=\"translate(15,%g) rotate(-90)\" "
        "text-anchor=\"middle\">arena offset (MiB)</text>\n"
        "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">0</text>\n"
        "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.2f</text>\n"
        "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">0</text>\n"
        "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%d</text>\n",
        MW, MH, MW, MH, x0, y0, x1 - x0, y1 - y0, (x0 + x1) / 2, MH - 10,
        (y0 + y1) / 2, x0 - 5, y0 + 10, x0 - 5, y1, arena / 1048576.0, x0,
        y1 + 15, x1, y1 + 15, steps);
    for (int i = 0; i < n; i++) {
        smelt_plan_buffer_info b = SMELT_STRUCT_INIT(smelt_plan_buffer_info);
        smelt_plan_buffer(p, i, &b);
        int ws = b.kind == SMELT_BUFFER_WORKSPACE;
        if ((b.kind != SMELT_BUFFER_ARENA && !ws) || b.first < 0 ||
            b.bytes <= 0)
            continue;
        double h = (y1 - y0) * (double)b.bytes / arena;
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                "fill=\"%s\" fill-opacity=\"0.55\" stroke=\"#333\" "
                "stroke-width=\"0.3\"><title>",
                x0 + sw * b.first, y0 + (y1 - y0) * (double)b.offset / arena,
                sw * (b.last - b.first + 1), h < 0.5 ? 0.5 : h,
                ws ? "#e80" : "#36c");
        report_esc(f, b.name);
        fprintf(f, ": %s, %lld bytes at %lld, steps %d..%d</title></rect>\n",
                ws ? "workspace" : "arena", (long long)b.bytes,
                (long long)b.offset, b.first, b.last);
    }
    fprintf(f, "</svg>\n");
    live_svg(f, p, arena);
    int peak_step = -1;
    int64_t peak = cli_memory_peak(p, &peak_step);
    fprintf(f,
            "<p>Planned peak: <b>%.2f MiB</b> at step %d; the arena is %.2f "
            "MiB, weights %.2f MiB, peak RSS %.1f MiB.</p>\n",
            (double)peak / 1048576.0, peak_step, arena / 1048576.0,
            (double)st.weight_bytes / 1048576.0,
            (double)cli_peak_rss() / 1048576.0);
}
