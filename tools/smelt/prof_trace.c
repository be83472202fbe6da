/*
 * prof_trace.c - the timed runs as a Chrome trace (prof.h): what
 * chrome://tracing and Perfetto open. Thread 0 (the thread that called
 * run) shows a span per run and, nested in it, a span per step; each
 * pool worker has its own lane with its work items, and thread 0's own
 * work items nest inside its steps. Times are microseconds.
 */
#include <stdlib.h>
#include <string.h>

#include "prof.h"

/* Names the process and each thread lane (metadata events). */
static void lane_names(FILE *f, int threads)
{
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
               "\"args\":{\"name\":\"smelt\"}}");
    for (int t = 0; t < threads; t++)
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,"
                "\"tid\":%d,\"args\":{\"name\":\"%s %d\"}}",
                t, t ? "worker" : "main", t);
}

/* One step of run r as an "X" event with its operands and cost. */
static void step_event(FILE *f, const smelt_plan_t *p, const cli_prof *pr,
                       int r, int i)
{
    smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
    smelt_plan_step(p, i, &si);
    char shapes[512];
    smelt_plan_step_shapes(p, i, shapes, sizeof shapes);
    size_t at = (size_t)r * (size_t)pr->n_steps + (size_t)i;
    fprintf(f, ",\n{\"name\":");
    cli_json_str(f, si.op);
    fprintf(f, ",\"cat\":");
    cli_json_str(f, si.kernel);
    fprintf(f,
            ",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":0,"
            "\"args\":{\"step\":%d,\"run\":%d,\"node\":",
            (pr->start[r] + pr->t0[at]) * 1e3, (pr->t1[at] - pr->t0[at]) * 1e3,
            i, r);
    cli_json_str(f, si.name);
    fprintf(f, ",\"kernel\":");
    cli_json_str(f, si.kernel);
    fprintf(f, ",\"shapes\":");
    cli_json_str(f, shapes);
    fprintf(f, ",\"flops\":%.0f,\"bytes\":%.0f}}", si.flops,
            si.bytes_read + si.bytes_write);
}

/* Work item k as an "X" event on its thread's lane. */
static void item_event(FILE *f, const smelt_plan_t *p, const cli_prof *pr,
                       int k)
{
    const smelt_work_item *w = &pr->items[k];
    int r = pr->item_run[k];
    smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
    if (smelt_plan_step(p, w->step, &si) != SMELT_OK)
        si.op = si.name = "?";
    fprintf(f, ",\n{\"name\":");
    cli_json_str(f, si.op);
    fprintf(f,
            ",\"cat\":\"work\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
            "\"pid\":1,\"tid\":%d,\"args\":{\"step\":%d,\"run\":%d,"
            "\"node\":",
            (pr->start[r] + w->start_ms) * 1e3, (w->end_ms - w->start_ms) * 1e3,
            w->thread, w->step, r);
    cli_json_str(f, si.name);
    fprintf(f, "}}");
}

int cli_prof_trace(FILE *f, const char *path, const smelt_plan_t *p,
                   const cli_prof *pr)
{
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    int threads = st.threads > 0 ? st.threads : 1;
    fprintf(f, "{\"traceEvents\":[\n");
    lane_names(f, threads);
    for (int r = 0; r < pr->runs; r++) {
        fprintf(f,
                ",\n{\"name\":\"run %d\",\"cat\":\"run\",\"ph\":\"X\","
                "\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":0,"
                "\"args\":{\"run\":%d}}",
                r, pr->start[r] * 1e3, pr->lat[r] * 1e3, r);
        for (int i = 0; pr->steps_kept && i < pr->n_steps; i++)
            step_event(f, p, pr, r, i);
    }
    for (int k = 0; k < pr->n_items; k++)
        item_event(f, p, pr, k);
    fprintf(f,
            "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"threads\":%d,"
            "\"dropped_work_items\":%d}}\n",
            threads, pr->dropped_items);
    if (ferror(f) | (fclose(f) != 0)) {
        perror(path);
        return 1;
    }
    return 0;
}
