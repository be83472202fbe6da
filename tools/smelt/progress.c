/*
 * progress.c - the progress bar and its plain-line form (progress.h).
 */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *pg, const char *what, const char *unit,
                        long total, int quiet)
{
    pg->what = what;
    pg->unit = unit;
    pg->total = total;
    pg->done = 0;
    pg->tty = isatty(STDERR_FILENO);
    pg->quiet = quiet;
    pg->drawn = 0;
    pg->note[0] = '\0';
    pg->t_start = pg->t_last = now_s();
}

/* "12.5 runs/s, ETA 3s" for what is done after `el` seconds. */
static void rate_eta(const cli_progress *pg, double el, char *buf, size_t n)
{
    double rate = el > 0 ? (double)pg->done / el : 0;
    double eta = rate > 0 ? (double)(pg->total - pg->done) / rate : 0;
    snprintf(buf, n, "%.1f %s/s, ETA %.0fs", rate, pg->unit, eta);
}

/* One bar on the terminal's line: what, [####....], done/total, rate. */
static void draw(cli_progress *pg, double el)
{
    enum { WIDTH = 30 };
    char re[64];
    rate_eta(pg, el, re, sizeof re);
    int fill = pg->total > 0 ? (int)(WIDTH * pg->done / pg->total) : 0;
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%s [%s] %ld/%ld %s, %s%s%.60s\033[K", pg->what, bar,
            pg->done, pg->total, pg->unit, re, pg->note[0] ? "  " : "",
            pg->note);
    fflush(stderr);
}

void cli_progress_update(cli_progress *pg, long done)
{
    pg->done = done;
    if (pg->quiet)
        return;
    double t = now_s(), el = t - pg->t_start;
    if (pg->tty) {
        if (el < 0.5 || t - pg->t_last < 0.2)
            return;
        draw(pg, el);
    } else {
        if (el < 2 || t - pg->t_last < 5)
            return;
        char re[64];
        rate_eta(pg, el, re, sizeof re);
        fprintf(stderr, "%s: %ld/%ld %s, %s%s%s\n", pg->what, pg->done,
                pg->total, pg->unit, re, pg->note[0] ? "; " : "", pg->note);
    }
    pg->t_last = t;
    pg->drawn = 1;
}

void cli_progress_clear(cli_progress *pg)
{
    if (!pg->quiet && pg->tty && pg->drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}

void cli_progress_end(cli_progress *pg)
{
    if (pg->quiet || !pg->drawn)
        return;
    if (pg->tty)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "%s: %ld/%ld %s done in %.1fs\n", pg->what, pg->done,
                pg->total, pg->unit, now_s() - pg->t_start);
    fflush(stderr);
}
