/*
 * pipelines.c - which passes -O0..-O3 run, and hand-made pipelines
 * (--passes=a,b,c).
 *
 * -O1 runs the cleanup sequence below: inference first (later passes
 * decide from types), folding before and after the passes that expose
 * constants, CSE, then DCE to sweep what the others left unused. A pass of
 * the sequence whose level is higher (unroll) joins it at that level.
 * -O2 and -O3 then add the passes.def rows of their level that are not in
 * the sequence (fusion), in table order. No row has level 3 today: -O3
 * is -O2 (memory and layout are the plan's, src/plan/).
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "passes/pass.h"

#define MAX_LEVEL 3

static const char *const cleanup[] = {"infer",    "fold", "if_const", "unroll",
                                      "simplify", "fold", "cse",      "dce"};

#define N_CLEANUP ((int)(sizeof cleanup / sizeof *cleanup))

static int in_cleanup(const char *name)
{
    for (int i = 0; i < N_CLEANUP; i++)
        if (!strcmp(cleanup[i], name))
            return 1;
    return 0;
}

/* Fills list (room for N_CLEANUP + sm_pass_count()) with -O level. */
static int level_pipeline(int level, const sm_pass_info **list)
{
    int n = 0;
    for (int i = 0; i < N_CLEANUP; i++) {
        const sm_pass_info *p = sm_pass_find(cleanup[i]);
        if (p && p->level >= 1 && p->level <= level)
            list[n++] = p;
    }
    for (int l = 2; l <= level; l++)
        for (int i = 0; i < sm_pass_count(); i++) {
            const sm_pass_info *p = sm_pass_get(i);
            if (p->level == l && !in_cleanup(p->name))
                list[n++] = p;
        }
    return n;
}

/* Parses a comma list of pass names into list (room for `cap`). */
static smelt_status named_pipeline(smelt_ctx_t *ctx, const char *passes,
                                   const sm_pass_info **list, int cap, int *n)
{
    *n = 0;
    const char *p = passes;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',' && *end != ' ')
            end++;
        if (end == p)
            break;
        char name[64];
        size_t len = (size_t)(end - p);
        if (len >= sizeof name)
            len = sizeof name - 1;
        memcpy(name, p, len);
        name[len] = 0;
        const sm_pass_info *info = sm_pass_find(name);
        if (!info)
            return sm_err(ctx, SMELT_ERR_NOT_FOUND,
                          "no pass named '%s' (smelt opt --list-passes "
                          "lists them)",
                          name);
        SM_ASSERT(*n < cap);
        list[(*n)++] = info;
        p = end;
    }
    (void)cap;
    return SMELT_OK;
}

smelt_status sm_pipeline_resolve(smelt_ctx_t *ctx, int level,
                                 const char *passes, const sm_pass_info ***out,
                                 int *n)
{
    *out = NULL;
    *n = 0;
    if (!passes && (level < 0 || level > MAX_LEVEL))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "optimization level %d is outside 0..%d", level,
                      MAX_LEVEL);
    /* a comma list has at most one name per two characters */
    int cap =
        passes ? (int)strlen(passes) / 2 + 1 : N_CLEANUP + sm_pass_count();
    const sm_pass_info **list = sm_calloc((size_t)cap, sizeof *list);
    if (!list)
        return sm_err_nomem(ctx);
    smelt_status st = SMELT_OK;
    if (passes)
        st = named_pipeline(ctx, passes, list, cap, n);
    else
        *n = level_pipeline(level, list);
    if (st != SMELT_OK || *n == 0) {
        sm_free(list);
        *n = 0;
        return st;
    }
    *out = list;
    return SMELT_OK;
}

/* Fails naming `name` (len bytes) and listing every pass of the table. */
static smelt_status unknown_disabled(smelt_ctx_t *ctx, const char *name,
                                     size_t len)
{
    char names[1024];
    size_t k = 0;
    names[0] = 0;
    for (int i = 0; i < sm_pass_count() && k + 2 < sizeof names; i++) {
        int w = snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "",
                         sm_pass_get(i)->name);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    return sm_err(ctx, SMELT_ERR_NOT_FOUND,
                  "cannot disable '%.*s': no pass has that name (the "
                  "passes: %s)",
                  (int)(len > 64 ? 64 : len), name, names);
}

smelt_status sm_pipeline_disable(smelt_ctx_t *ctx, const char *disable,
                                 const sm_pass_info **list, int *n)
{
    for (const char *p = disable; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',' && *end != ' ')
            end++;
        size_t len = (size_t)(end - p);
        if (!len)
            break;
        int known = 0;
        for (int i = 0; i < sm_pass_count() && !known; i++) {
            const char *nm = sm_pass_get(i)->name;
            known = strlen(nm) == len && !strncmp(nm, p, len);
        }
        if (!known)
            return unknown_disabled(ctx, p, len);
        int k = 0;
        for (int i = 0; i < *n; i++)
            if (!(strlen(list[i]->name) == len &&
                  !strncmp(list[i]->name, p, len)))
                list[k++] = list[i];
        *n = k;
        p = end;
    }
    return SMELT_OK;
}
