/*
 * dims.h - symbolic dimensions bound by name ("batch=16,seq=128"): the
 * one parser of that text, shared by smelt_graph_bind_dims (graph_init.c)
 * and the plan's dims option (plan/compile.c), so `smelt run`, `bench`,
 * `grad`, `gradcheck` and `train` read --dim the same way.
 */
#ifndef SM_IR_DIMS_H
#define SM_IR_DIMS_H

#include "ir/ir.h"

#define SM_DIMS_MAX 64

typedef struct sm_dim_bind {
    char name[64];
    int64_t size;
} sm_dim_bind;

typedef struct sm_dim_binds {
    int n;
    sm_dim_bind b[SM_DIMS_MAX];
} sm_dim_binds;

/* Appends the bindings of s ("name=size[,name=size]", spaces and empty
 * items skipped; NULL is none) to bs. Errors start with `who` and name
 * the text. */
smelt_status sm_dims_parse(smelt_ctx_t *ctx, const char *who, const char *s,
                           sm_dim_binds *bs);

/* The binding of name, or NULL. */
const sm_dim_bind *sm_dims_find(const sm_dim_binds *bs, const char *name);

/* Gives every symbolic dimension of every value of g that bs binds its
 * size (the dimension stops being symbolic). */
void sm_dims_apply(sm_graph *g, const sm_dim_binds *bs);

#endif
