/*
 * dump.c - writing the debug dump files and their index.
 */
#include "passes/dump.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/alloc.h"
#include "ir/rewrite.h"

extern char **environ;

struct sm_pass_dumper {
    smelt_ctx_t *ctx;
    char *dir;
    FILE *index;
    int have_dot; /* Graphviz's `dot` is on PATH */
};

/* Whether an executable named `prog` is on PATH. */
static int on_path(const char *prog)
{
    const char *path = getenv("PATH");
    char buf[4096];
    while (path && *path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if (len && len + strlen(prog) + 2 < sizeof buf) {
            snprintf(buf, sizeof buf, "%.*s/%s", (int)len, path, prog);
            if (access(buf, X_OK) == 0)
                return 1;
        }
        path = end ? end + 1 : NULL;
    }
    return 0;
}

smelt_status sm_dump_open(smelt_ctx_t *ctx, const char *dir,
                          sm_pass_dumper **out)
{
    *out = NULL;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return sm_err(ctx, SMELT_ERR_IO, "debug dump: cannot create %s: %s",
                      dir, strerror(errno));
    sm_pass_dumper *d = sm_calloc(1, sizeof *d);
    if (!d || !(d->dir = sm_strdup(dir))) {
        sm_free(d);
        return sm_err_nomem(ctx);
    }
    d->ctx = ctx;
    size_t n = strlen(dir) + 16;
    char *p = sm_malloc(n);
    if (p) {
        snprintf(p, n, "%s/index.txt", dir);
        d->index = fopen(p, "w");
    }
    sm_free(p);
    if (!d->index) {
        smelt_status st =
            p ? sm_err(ctx, SMELT_ERR_IO,
                       "debug dump: cannot write %s/index.txt", dir)
              : sm_err_nomem(ctx);
        sm_dump_close(d);
        return st;
    }
    fprintf(d->index, "# smelt debug dump: file, pass, nodes after it\n");
    d->have_dot = on_path("dot");
    *out = d;
    return SMELT_OK;
}

void sm_dump_close(sm_pass_dumper *d)
{
    if (!d)
        return;
    if (d->index)
        fclose(d->index);
    sm_free(d->dir);
    sm_free(d);
}

/* Writes len bytes of text to dir/name and lists it in the index. */
static smelt_status write_file(sm_pass_dumper *d, const char *name,
                               const char *label, int nodes, const char *text,
                               size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", d->dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return sm_err(d->ctx, SMELT_ERR_IO, "debug dump: cannot write %s: %s",
                      path, strerror(errno));
    size_t w = fwrite(text, 1, len, f);
    if (fclose(f) != 0 || w != len)
        return sm_err(d->ctx, SMELT_ERR_IO, "debug dump: cannot write %s",
                      path);
    if (nodes >= 0)
        fprintf(d->index, "%s\t%s\tnodes=%d\n", name, label, nodes);
    else
        fprintf(d->index, "%s\t%s\n", name, label);
    fflush(d->index);
    return SMELT_OK;
}

/* Renders dir/base.dot into dir/base.svg with Graphviz; a failure only
 * means no picture. */
static void render_svg(sm_pass_dumper *d, const char *base, const char *label,
                       int nodes)
{
    char dot[4096], svg[4096];
    snprintf(dot, sizeof dot, "%s/%s.dot", d->dir, base);
    snprintf(svg, sizeof svg, "%s/%s.svg", d->dir, base);
    char *argv[] = {"dot", "-Tsvg", "-o", svg, dot, NULL};
    pid_t pid;
    int status = 0;
    if (posix_spawnp(&pid, "dot", NULL, NULL, argv, environ) != 0)
        return;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0)
        fprintf(d->index, "%s.svg\t%s\tnodes=%d\n", base, label, nodes);
}

smelt_status sm_dump_graph(sm_pass_dumper *d, const sm_graph *g, int step,
                           const char *label)
{
    char base[256], name[300];
    snprintf(base, sizeof base, "%03d-%s", step, label);
    int nodes = sm_block_count_nodes(g->top);
    char *text = NULL;
    SM_TRY(smelt_graph_print(d->ctx, g, &text));
    snprintf(name, sizeof name, "%s.ir", base);
    smelt_status st = write_file(d, name, label, nodes, text, strlen(text));
    smelt_string_free(text);
    text = NULL;
    if (st == SMELT_OK)
        st = smelt_graph_dot(d->ctx, g, &text);
    if (st == SMELT_OK) {
        snprintf(name, sizeof name, "%s.dot", base);
        st = write_file(d, name, label, nodes, text, strlen(text));
        smelt_string_free(text);
    }
    if (st == SMELT_OK && d->have_dot)
        render_svg(d, base, label, nodes);
    return st;
}

smelt_status sm_pass_dump_file(sm_pass_ctx *pc, const char *suffix,
                               const char *text, size_t len)
{
    if (!pc->dump)
        return SMELT_OK;
    char name[300];
    snprintf(name, sizeof name, "%03d-%s.%s", pc->step,
             pc->pass_name ? pc->pass_name : "pass", suffix);
    return write_file(pc->dump, name, pc->pass_name ? pc->pass_name : "", -1,
                      text, len);
}
