/*
 * prof_memory.c - a plan's memory history (prof.h): every buffer's
 * lifetime and arena place as the plan decided them, the arena bytes
 * live at each step, the planned peak and where it happens, against the
 * process's measured peak RSS.
 *
 * Buffers that share bytes (an output written in place over a dying
 * input, a view) form one region: live from the first creation to the
 * last read among them, as big as the largest. A step's live bytes are
 * the regions and workspaces live at it.
 */
#include <stdlib.h>
#include <string.h>

#include "prof.h"

static const char *kind_name(int k)
{
    switch (k) {
    case SMELT_BUFFER_ARENA: return "arena";
    case SMELT_BUFFER_WORKSPACE: return "workspace";
    case SMELT_BUFFER_WEIGHT: return "weight";
    case SMELT_BUFFER_INPUT: return "input";
    case SMELT_BUFFER_OUTPUT: return "output";
    case SMELT_BUFFER_DYNAMIC: return "dynamic";
    case SMELT_BUFFER_VIEW: return "view";
    }
    return "?";
}

int cli_memory_live(const smelt_plan_t *p, int64_t *live)
{
    int n = smelt_plan_num_buffers(p), steps = smelt_plan_num_steps(p);
    int *first = malloc(sizeof *first * ((size_t)n + 1));
    int *last = malloc(sizeof *last * ((size_t)n + 1));
    int64_t *bytes = calloc((size_t)n + 1, sizeof *bytes);
    if (!first || !last || !bytes) {
        free(first);
        free(last);
        free(bytes);
        return 1;
    }
    for (int i = 0; i < n; i++)
        first[i] = last[i] = -1;
    for (int i = 0; i < n; i++) {
        smelt_plan_buffer_info b = SMELT_STRUCT_INIT(smelt_plan_buffer_info);
        smelt_plan_buffer(p, i, &b);
        if ((b.kind != SMELT_BUFFER_ARENA &&
             b.kind != SMELT_BUFFER_WORKSPACE) ||
            b.first < 0)
            continue;
        int r = b.shares >= 0 ? b.shares : i;
        if (first[r] < 0 || b.first < first[r])
            first[r] = b.first;
        if (b.last > last[r])
            last[r] = b.last;
        if (b.bytes > bytes[r])
            bytes[r] = b.bytes;
    }
    memset(live, 0, sizeof *live * (size_t)steps);
    for (int r = 0; r < n; r++)
        for (int j = first[r]; j >= 0 && j <= last[r] && j < steps; j++)
            live[j] += bytes[r];
    free(first);
    free(last);
    free(bytes);
    return 0;
}

int64_t cli_memory_peak(const smelt_plan_t *p, int *step)
{
    int steps = smelt_plan_num_steps(p);
    int64_t *live = malloc(sizeof *live * ((size_t)steps + 1)), peak = 0;
    *step = -1;
    if (!live || cli_memory_live(p, live)) {
        free(live);
        return 0;
    }
    for (int j = 0; j < steps; j++)
        if (live[j] > peak)
            peak = live[j], *step = j;
    free(live);
    return peak;
}

int cli_memory_write(FILE *f, const char *path, const smelt_plan_t *p)
{
    int steps = smelt_plan_num_steps(p), n = smelt_plan_num_buffers(p);
    int64_t *live = malloc(sizeof *live * ((size_t)steps + 1));
    if (!live || cli_memory_live(p, live)) {
        free(live);
        fclose(f);
        fprintf(stderr, "smelt: out of memory\n");
        return 1;
    }
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    smelt_plan_get_stats(p, &st);
    int peak_step = -1;
    int64_t peak = cli_memory_peak(p, &peak_step);
    fprintf(f,
            "{\"arena_bytes\":%lld,\"unshared_bytes\":%lld,"
            "\"weight_bytes\":%lld,\"planned_peak_bytes\":%lld,"
            "\"peak_step\":%d,\"peak_node\":",
            (long long)st.arena_bytes, (long long)st.unshared_bytes,
            (long long)st.weight_bytes, (long long)peak, peak_step);
    smelt_plan_step_info si = SMELT_STRUCT_INIT(smelt_plan_step_info);
    cli_json_str(f, peak_step >= 0 &&
                            smelt_plan_step(p, peak_step, &si) == SMELT_OK
                        ? si.name
                        : "");
    fprintf(f, ",\"measured_peak_rss_bytes\":%lld,\n\"steps\":[",
            (long long)cli_peak_rss());
    for (int j = 0; j < steps; j++) {
        smelt_plan_step(p, j, &si);
        fprintf(f, "%s\n  {\"step\":%d,\"name\":", j ? "," : "", j);
        cli_json_str(f, si.name);
        fprintf(f, ",\"op\":");
        cli_json_str(f, si.op);
        fprintf(f, ",\"live_bytes\":%lld}", (long long)live[j]);
    }
    fprintf(f, "\n],\n\"buffers\":[");
    for (int i = 0; i < n; i++) {
        smelt_plan_buffer_info b = SMELT_STRUCT_INIT(smelt_plan_buffer_info);
        smelt_plan_buffer(p, i, &b);
        fprintf(f, "%s\n  {\"id\":%d,\"name\":", i ? "," : "", i);
        cli_json_str(f, b.name);
        fprintf(f,
                ",\"kind\":\"%s\",\"first\":%d,\"last\":%d,\"offset\":%lld,"
                "\"bytes\":%lld,\"shares\":%d}",
                kind_name(b.kind), b.first, b.last, (long long)b.offset,
                (long long)b.bytes, b.shares);
    }
    fprintf(f, "\n]}\n");
    free(live);
    if (ferror(f) | (fclose(f) != 0)) {
        perror(path);
        return 1;
    }
    return 0;
}
