/*
 * attr.h - node attributes and attribute schemas. Kept in core so that
 * kernels can read attributes without seeing the graph.
 */
#ifndef SM_ATTR_H
#define SM_ATTR_H

#include <stdint.h>

#include "core/tensor.h"

typedef enum sm_attr_kind {
    SM_ATTR_INT,
    SM_ATTR_FLOAT,
    SM_ATTR_STRING,
    SM_ATTR_INTS,
    SM_ATTR_FLOATS,
    SM_ATTR_STRINGS,
    SM_ATTR_TENSOR,
    SM_ATTR_KIND_COUNT
} sm_attr_kind;

typedef struct sm_attr {
    const char *name;
    sm_attr_kind kind;
    int n; /* element count of list kinds */
    union {
        int64_t i;
        double f;
        const char *s;
        int64_t *ints;
        double *floats;
        const char **strs;
        sm_tensor *t;
    } v;
} sm_attr;

/* One attribute of an op's schema, parsed from the schema string of its
 * ops.def row: "name:kind" (required), "name:kind=default" (optional with
 * default) or "name:kind?" (optional, no default). */
typedef struct sm_attr_spec {
    const char *name;
    sm_attr_kind kind;
    int required;
    int has_default;
    sm_attr def; /* the default, when has_default */
} sm_attr_spec;

const char *sm_attr_kind_name(sm_attr_kind k);

/* The attributes a kernel or shape function reads: the node's own plus the
 * op's schema, whose defaults fill what the node leaves out. */
typedef struct sm_attrs {
    const sm_attr *list;
    int n;
    const sm_attr_spec *spec;
    int n_spec;
} sm_attrs;

/* The attribute `name` from the node, else the schema default, else NULL. */
const sm_attr *sm_attrs_find(const sm_attrs *a, const char *name);
int64_t sm_attrs_int(const sm_attrs *a, const char *name, int64_t def);
double sm_attrs_float(const sm_attrs *a, const char *name, double def);
const char *sm_attrs_string(const sm_attrs *a, const char *name,
                            const char *def);
/* List attributes: the element count, or -1 when absent; *out points at
 * the elements. */
int sm_attrs_ints(const sm_attrs *a, const char *name, const int64_t **out);
int sm_attrs_floats(const sm_attrs *a, const char *name, const double **out);

#endif
