/*
 * attr.c - attribute lookup with schema defaults.
 */
#include "core/attr.h"

#include <string.h>

const char *sm_attr_kind_name(sm_attr_kind k)
{
    static const char *names[SM_ATTR_KIND_COUNT] = {
        "int", "float", "string", "ints", "floats", "strings", "tensor"};
    return (unsigned)k < SM_ATTR_KIND_COUNT ? names[k] : "?";
}

const sm_attr *sm_attrs_find(const sm_attrs *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->list[i].name, name) == 0)
            return &a->list[i];
    for (int i = 0; i < a->n_spec; i++)
        if (a->spec[i].has_default && strcmp(a->spec[i].name, name) == 0)
            return &a->spec[i].def;
    return NULL;
}

int64_t sm_attrs_int(const sm_attrs *a, const char *name, int64_t def)
{
    const sm_attr *x = sm_attrs_find(a, name);
    return x && x->kind == SM_ATTR_INT ? x->v.i : def;
}

double sm_attrs_float(const sm_attrs *a, const char *name, double def)
{
    const sm_attr *x = sm_attrs_find(a, name);
    if (x && x->kind == SM_ATTR_FLOAT)
        return x->v.f;
    if (x && x->kind == SM_ATTR_INT)
        return (double)x->v.i;
    return def;
}

const char *sm_attrs_string(const sm_attrs *a, const char *name,
                            const char *def)
{
    const sm_attr *x = sm_attrs_find(a, name);
    return x && x->kind == SM_ATTR_STRING ? x->v.s : def;
}

int sm_attrs_ints(const sm_attrs *a, const char *name, const int64_t **out)
{
    const sm_attr *x = sm_attrs_find(a, name);
    if (!x || x->kind != SM_ATTR_INTS)
        return -1;
    *out = x->v.ints;
    return x->n;
}

int sm_attrs_floats(const sm_attrs *a, const char *name, const double **out)
{
    const sm_attr *x = sm_attrs_find(a, name);
    if (!x || x->kind != SM_ATTR_FLOATS)
        return -1;
    *out = x->v.floats;
    return x->n;
}
