/*
 * compile.c - the public entry points of the script frontend:
 * smelt_script_compile() and smelt_script_load().
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/file.h"
#include "core/status.h"
#include "frontends/script/script.h"
#include "ir/ir.h"

/* Lists the functions of m into buf, for "no function 'x'" messages. */
static void list_funcs(const sm_ast_module *m, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = 0;
    for (const sm_ast_func *f = m->funcs; f && k + 1 < size; f = f->next) {
        int w = snprintf(buf + k, size - k, "%s%s", k ? ", " : "", f->name);
        k += w > 0 ? (size_t)w : 0;
    }
}

smelt_status smelt_script_compile(smelt_ctx_t *ctx, const char *source,
                                  size_t len, const char *filename,
                                  const char *fn, smelt_graph_t **out)
{
    if (!out || (!source && len))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_script_compile: NULL argument");
    *out = NULL;
    sm_script_src src = {ctx, filename ? filename : "<script>",
                         source ? source : "", len};
    sm_arena arena;
    sm_arena_init(&arena);
    sm_ast_module *m;
    smelt_status st = sm_script_parse(&src, &arena, &m);
    if (!st) {
        const sm_ast_func *f = sm_script_find_func(m, fn);
        if (f) {
            st = sm_script_lower(&src, m, f, out);
        } else {
            char names[256];
            list_funcs(m, names, sizeof names);
            st = fn ? sm_err(ctx, SMELT_ERR_NOT_FOUND,
                             "%.200s: no function '%.100s' (the file "
                             "defines: %s)",
                             src.file, fn, names[0] ? names : "nothing")
                    : sm_err(ctx, SMELT_ERR_NOT_FOUND,
                             "%.200s: the file defines no function", src.file);
        }
    }
    sm_arena_free(&arena);
    return st;
}

smelt_status smelt_script_load(smelt_ctx_t *ctx, const char *path,
                               const char *fn, smelt_graph_t **out)
{
    if (!path || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_script_load: NULL argument");
    *out = NULL;
    char *text;
    size_t len;
    SM_TRY(sm_read_file(ctx, path, SM_SCRIPT_MAX_BYTES, &text, &len));
    smelt_status st = smelt_script_compile(ctx, text, len, path, fn, out);
    sm_free(text);
    return st;
}
