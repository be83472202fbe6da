/*
 * save.h - the ONNX exporter's state and the helpers its two files share:
 * save.c writes the graph, save_std.c writes Smelt's own ops either in
 * Smelt's domain or decomposed into standard ONNX ops.
 */
#ifndef SM_ONNX_SAVE_H
#define SM_ONNX_SAVE_H

#include "core/arena.h"
#include "frontends/onnx/onnx_internal.h"

typedef struct sm_onnx_saver {
    smelt_ctx_t *ctx;
    const sm_graph *g;
    sm_arena arena;
    int64_t opset;
    int standard;   /* decompose Smelt's own ops into standard ones */
    int uses_smelt; /* a node was written in Smelt's domain */
    int nomem;
    smelt_status err;   /* first error other than out of memory */
    sm_strmap made;     /* names of initializers the export adds */
    unsigned char *ret; /* by value id: a return of the block being written */
    const char **alias; /* by value id: the name written for it, or NULL */
} sm_onnx_saver;

/* n elements of size bytes from the export arena (NULL and nomem set
 * when out of memory; NULL for n == 0). */
void *sm_onnx_save_alloc(sm_onnx_saver *S, size_t n, size_t size);
/* A TensorProto of t (bytes referenced) named name. */
Onnx__TensorProto *sm_onnx_save_tensor(sm_onnx_saver *S, const sm_tensor *t,
                                       const char *name);
/* An AttributeProto of a. */
Onnx__AttributeProto *sm_onnx_save_attr(sm_onnx_saver *S, const sm_attr *a);
/* A name "<base>_<attr>[_k]" unused in the graph and by the export. */
const char *sm_onnx_save_fresh(sm_onnx_saver *S, const char *base,
                               const char *attr);
/* The name value v is written under. */
const char *sm_onnx_save_vname(const sm_onnx_saver *S, const sm_value *v);
/* Appends node n of a block at depth to gp as it is (Smelt's own ops in
 * Smelt's domain); NULL when out of memory or on an error. */
Onnx__NodeProto *sm_onnx_save_node(sm_onnx_saver *S, const sm_node *n,
                                   Onnx__GraphProto *gp, int depth);

/* save_std.c */

/* Upper bounds of the nodes and initializers writing n adds to its graph
 * (more than one node where n is decomposed). */
void sm_onnx_std_bound(const sm_onnx_saver *S, const sm_node *n, size_t *nodes,
                       size_t *inits);
/* Appends n to gp: decomposed into standard ops when S->standard and n
 * is Smelt's own, else as sm_onnx_save_node writes it. 0 on failure
 * (nomem or err set). */
int sm_onnx_std_write(sm_onnx_saver *S, const sm_node *n, Onnx__GraphProto *gp,
                      int depth);

#endif
