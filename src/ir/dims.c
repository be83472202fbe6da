/*
 * dims.c - the parser of symbolic dimension bindings ("batch=16,seq=128")
 * and their application to a graph's value types (dims.h).
 */
#include "ir/dims.h"

#include <stdlib.h>
#include <string.h>

smelt_status sm_dims_parse(smelt_ctx_t *ctx, const char *who, const char *s,
                           sm_dim_binds *bs)
{
    const char *all = s;
    while (s && *s) {
        while (*s == ',' || *s == ' ')
            s++;
        if (!*s)
            break;
        size_t len = strcspn(s, "=,");
        char *end = NULL;
        long long v = s[len] == '=' ? strtoll(s + len + 1, &end, 10) : -1;
        if (len == 0 || s[len] != '=' || end == s + len + 1 || v < 0 ||
            (*end && *end != ','))
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: dims '%s': expected name=size[,name=size] "
                          "with sizes >= 0",
                          who, all);
        if (len >= sizeof bs->b[0].name)
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: dims '%s': a name is longer than %d bytes", who,
                          all, (int)sizeof bs->b[0].name - 1);
        if (bs->n == SM_DIMS_MAX)
            return sm_err(ctx, SMELT_ERR_LIMIT, "%s: more than %d dims", who,
                          SM_DIMS_MAX);
        sm_dim_bind *b = &bs->b[bs->n++];
        memcpy(b->name, s, len);
        b->name[len] = 0;
        b->size = v;
        s = end;
    }
    return SMELT_OK;
}

const sm_dim_bind *sm_dims_find(const sm_dim_binds *bs, const char *name)
{
    for (int i = 0; name && i < bs->n; i++)
        if (!strcmp(bs->b[i].name, name))
            return &bs->b[i];
    return NULL;
}

void sm_dims_apply(sm_graph *g, const sm_dim_binds *bs)
{
    for (int i = 0; i < g->n_values; i++) {
        sm_type *t = &g->values[i]->type;
        for (int d = 0; d < t->ndim; d++) {
            const sm_dim_bind *b = sm_dims_find(bs, t->dims[d].sym);
            if (b && t->dims[d].size < 0) {
                t->dims[d].size = b->size;
                t->dims[d].sym = NULL;
            }
        }
    }
}
