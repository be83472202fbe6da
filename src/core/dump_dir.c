/*
 * dump_dir.c - the debug dump's folder and files added to it after the
 * pipeline ran (see dump_dir.h).
 */
#include "core/dump_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sm_dump_dir(const char *given)
{
    const char *e = getenv("SMELT_DEBUG");
    if (given)
        return given;
    return e && *e && strcmp(e, "0") != 0 ? "smelt-debug" : NULL;
}

/* Writes len bytes of text to path. */
static smelt_status write_text(smelt_ctx_t *ctx, const char *path,
                               const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return sm_err(ctx, SMELT_ERR_IO, "debug dump: cannot write %s: %s",
                      path, strerror(errno));
    size_t w = fwrite(text, 1, len, f);
    if (fclose(f) != 0 || w != len)
        return sm_err(ctx, SMELT_ERR_IO, "debug dump: cannot write %s", path);
    return SMELT_OK;
}

smelt_status sm_dump_append(smelt_ctx_t *ctx, const char *dir, const char *name,
                            const char *label, const char *text)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return sm_err(ctx, SMELT_ERR_IO, "debug dump: cannot create %s: %s",
                      dir, strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    SM_TRY(write_text(ctx, path, text, strlen(text)));
    snprintf(path, sizeof path, "%s/index.txt", dir);
    int fresh = access(path, F_OK) != 0;
    FILE *index = fopen(path, "a");
    if (!index)
        return sm_err(ctx, SMELT_ERR_IO, "debug dump: cannot write %s: %s",
                      path, strerror(errno));
    if (fresh)
        fprintf(index, "# smelt debug dump: file, pass, nodes after it\n");
    fprintf(index, "%s\t%s\n", name, label);
    if (fclose(index) != 0)
        return sm_err(ctx, SMELT_ERR_IO, "debug dump: cannot write %s", path);
    return SMELT_OK;
}
