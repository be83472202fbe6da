/*
 * testutil.c - helpers shared by the cmocka unit tests.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

const char *tu_path(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", SMELT_TEST_DIR, rel);
    return buf;
}

int tu_sh(const char *dir, const char *cmd, char **out)
{
    char full[4096];
    if (dir)
        snprintf(full, sizeof full, "cd %s && %s 2>&1", dir, cmd);
    else
        snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap);
    assert_non_null(buf);
    while ((k = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (n + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    buf[n] = 0;
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

smelt_graph_t *tu_parse(smelt_ctx_t *ctx, const char *text)
{
    smelt_ctx_t *own = ctx ? NULL : smelt_ctx_init();
    smelt_graph_t *g = NULL;
    if (smelt_graph_parse(ctx ? ctx : own, text, strlen(text), "t.ir", &g) !=
        SMELT_OK)
        fail_msg("parse: %s\n%s", smelt_ctx_error(ctx ? ctx : own), text);
    smelt_ctx_free(own);
    return g;
}
