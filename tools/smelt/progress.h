/*
 * progress.h - progress of a long-running verb (bench, profile,
 * conformance, check): a bar with rate and ETA on a terminal, a plain
 * line every few seconds when stderr is not one, nothing when quiet.
 * It writes to stderr, so a verb's stdout (tables, JSON) stays clean.
 */
#ifndef SMELT_CLI_PROGRESS_H
#define SMELT_CLI_PROGRESS_H

typedef struct cli_progress {
    const char *what; /* "profile model.onnx" */
    const char *unit; /* "runs" */
    long total, done;
    int tty, quiet, drawn;
    double t_start, t_last; /* seconds */
    char note[128]; /* shown after the rate when set ("12 passed, 1 failed",
                       the stage running) */
} cli_progress;

/* Starts counting to total units; quiet draws nothing. */
void cli_progress_start(cli_progress *pg, const char *what, const char *unit,
                        long total, int quiet);
/* done units are finished now; redraws at most a few times a second on a
 * terminal, every 5 seconds otherwise (never before the first 2). */
void cli_progress_update(cli_progress *pg, long done);
/* Takes a stand on the terminal's line before other output: clears the
 * bar (it is drawn again at the next update). */
void cli_progress_clear(cli_progress *pg);
/* Clears the bar (a terminal) or prints the last line (when any was). */
void cli_progress_end(cli_progress *pg);

#endif
