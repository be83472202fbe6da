/*
 * onnx_internal.h - what the files of the ONNX frontend share: the
 * protobuf-c types generated at build time from Debian's onnx.proto, the
 * loader's state, and the opset tables.
 */
#ifndef SM_ONNX_INTERNAL_H
#define SM_ONNX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/strmap.h"
#include "frontends/onnx/onnx.h"
#include "ir/ir.h"
#include "onnx/onnx.pb-c.h"

/* Protobuf messages nested deeper than this are refused before protobuf-c
 * (which recurses without a limit) sees them. One subgraph level costs
 * three messages (Graph > Node > Attribute). */
#define SM_ONNX_MAX_MSG_DEPTH (3 * SM_ONNX_MAX_DEPTH + 24)
/* Inputs, outputs or attributes of one node, list attributes' lengths. */
#define SM_ONNX_MAX_LIST (1 << 24)

/* ---- proto.c: decoding with limits ------------------------------------- */

/* The bytes a model is read from: the caller's buffer, or a read-only
 * mapping of the model file. Large raw_data payloads stay there while the
 * model is imported (lean.c), so they must outlive the unpacked message's
 * use. */
typedef struct sm_onnx_src {
    const uint8_t *data;
    size_t len;
    int mapped; /* data is a mapping of len bytes (munmap'd by unmap) */
} sm_onnx_src;

/* Decodes the ModelProto in src, allocating through the library's hook;
 * raw_data payloads of SM_ONNX_RAW_REF_MIN bytes or more are not copied
 * but referenced (sm_onnx_raw_ref). */
smelt_status sm_onnx_unpack(smelt_ctx_t *ctx, const sm_onnx_src *src,
                            Onnx__ModelProto **out);
void sm_onnx_model_free(Onnx__ModelProto *m);
/* Releases memory protobuf-c allocated for an unpacked message's field
 * (used to drop a tensor's raw bytes once they are copied). */
void sm_onnx_proto_free(void *p);
/* Decodes buf as a TensorProto (a .pb file of the ONNX test data), and
 * releases one. */
smelt_status sm_onnx_tensor_unpack(smelt_ctx_t *ctx, const void *buf,
                                   size_t len, Onnx__TensorProto **out);
void sm_onnx_tensor_proto_free(Onnx__TensorProto *t);
/* Reads a whole model file (regular file, at most SM_ONNX_MAX_MODEL_BYTES). */
smelt_status sm_onnx_read_file(smelt_ctx_t *ctx, const char *path, void **buf,
                               size_t *len);
/* Maps a model file read-only (same checks as sm_onnx_read_file), and
 * unmaps it (a no-op for a source that is not a mapping). */
smelt_status sm_onnx_map_file(smelt_ctx_t *ctx, const char *path,
                              sm_onnx_src *src);
void sm_onnx_unmap(sm_onnx_src *src);
/* Tells the kernel that bytes [off, off + len) of a mapped source will
 * not be read again, so their pages leave the resident set. */
void sm_onnx_src_done(const sm_onnx_src *src, size_t off, size_t len);

/* ---- lean.c: raw_data left in the source ------------------------------- */

/* raw_data of at least this many bytes is referenced, not copied. */
#define SM_ONNX_RAW_REF_MIN 64
/* The (unknown) TensorProto field number a reference is written under. */
#define SM_ONNX_RAW_REF_FIELD 536870911u
/* A copy of the checked ModelProto bytes buf[0, len) in which large
 * raw_data payloads are replaced by references to where they lie in buf;
 * *out is sm_malloc'd. */
smelt_status sm_onnx_lean_copy(smelt_ctx_t *ctx, const void *buf, size_t len,
                               void **out, size_t *out_len);
/* Whether tp's raw_data was left in the source: its offset and length
 * there. */
int sm_onnx_raw_ref(const Onnx__TensorProto *tp, uint64_t *off, uint64_t *len);

/* ---- the loader -------------------------------------------------------- */

/* The value of a name reserved but not defined yet. */
extern char sm_onnx_reserved;
#define SM_ONNX_RESERVED ((void *)&sm_onnx_reserved)

typedef struct sm_onnx_loader {
    smelt_ctx_t *ctx;
    sm_graph *g;
    const char *base_dir;   /* NULL: external data is refused */
    const sm_onnx_src *src; /* where referenced raw_data lies (or NULL) */
    int64_t opset;          /* of the default domain */
    int depth;              /* subgraph nesting */
    /* Every value name of the model -> its sm_value once defined, or
     * SM_ONNX_RESERVED before (all are reserved up front, so generated
     * names never collide with one the model defines later). */
    sm_strmap names;
    const sm_strmap *vinfo; /* value_info of the graph being loaded */
} sm_onnx_loader;

/* A node between its NodeProto and its sm_node, while opset differences
 * are normalized: inputs resolved, attributes that became inputs marked
 * skipped, attributes the op table needs set explicitly. */
typedef struct sm_onnx_node {
    const Onnx__NodeProto *np;
    sm_op op;
    char where[192]; /* "node 'x' (Conv)", for messages */
    int n_in, cap_in;
    sm_value **in;
    unsigned char *skip; /* one flag per np->attribute */
    int n_extra;         /* int attributes to set beside the node's own */
    const char *extra_name[2];
    int64_t extra_val[2];
} sm_onnx_node;

/* load.c */
/* The value named `name` as seen from block b (defined in b or a block
 * enclosing it); fails naming `where` otherwise. */
smelt_status sm_onnx_lookup(sm_onnx_loader *L, const sm_block *b,
                            const char *name, const char *where,
                            sm_value **out);
/* A name not used anywhere in the model, made from base and suffix;
 * reserved on return. NULL when out of memory. */
const char *sm_onnx_fresh_name(sm_onnx_loader *L, const char *base,
                               const char *suffix);
/* Defines v under its name (fails on a second definition). */
smelt_status sm_onnx_define(sm_onnx_loader *L, sm_value *v, const char *where);
/* Types n's outputs from value_info and defines their names. */
smelt_status sm_onnx_bind_outputs(sm_onnx_loader *L, sm_node *n,
                                  const char *where);
/* Loads g into the new sub-block `label` of node n. */
smelt_status sm_onnx_load_subgraph(sm_onnx_loader *L, sm_node *n,
                                   const char *label, const Onnx__GraphProto *g,
                                   const char *where);

/* load_node.c */
smelt_status sm_onnx_load_node(sm_onnx_loader *L, sm_block *b,
                               const Onnx__NodeProto *np, int index);

/* load_tensor.c */
smelt_status sm_onnx_tensor_load(sm_onnx_loader *L, Onnx__TensorProto *tp,
                                 const char *what, sm_tensor **out);
smelt_status sm_onnx_type_load(sm_onnx_loader *L, const Onnx__TypeProto *tp,
                               const char *what, sm_type *out);
/* Copies n elements of esize bytes from little-endian src to host order. */
void sm_onnx_copy_le(void *dst, const void *src, size_t n, size_t esize);
/* "float", "string", ... for an ONNX TensorProto data-type code. */
const char *sm_onnx_dtype_name(int64_t code);

/* external.c */
/* Reads the external data of tp (dtype dt, shape ndim/dims) into a new
 * tensor, after checking the location stays inside L->base_dir and the
 * range lies inside the file. */
smelt_status sm_onnx_external_load(sm_onnx_loader *L,
                                   const Onnx__TensorProto *tp, smelt_dtype dt,
                                   int ndim, const int64_t *dims,
                                   const char *what, sm_tensor **out);

/* opset.c: import side */
/* Rewrites attributes that older opsets had where the op table takes
 * inputs (Slice < 10, Pad < 11, Clip < 11, Dropout < 12), drops ones that
 * no longer mean anything (BatchNormalization.spatial = 1 before 9),
 * sets Softmax's axis explicitly, and refuses as unsupported the old
 * forms of ops that differ in ways the node does not show (Dropout < 7,
 * Concat < 4...). */
smelt_status sm_onnx_import_fix(sm_onnx_loader *L, sm_block *b,
                                sm_onnx_node *n);
/* Softmax/LogSoftmax/Hardmax before opset 13 (coerce to 2-D at `axis`)
 * over an input whose rank does not make that the last axis: emits
 * Flatten -> Softmax -> Reshape(Shape(x)). *done is set when it did. */
smelt_status sm_onnx_legacy_softmax(sm_onnx_loader *L, sm_block *b,
                                    sm_onnx_node *n, int *done);
/* Labels of the sub-blocks op takes, in the order the op table expects. */
int sm_onnx_block_labels(sm_op op, const char *const **labels);

/* opset.c: export side */
#define SM_ONNX_XFORM_MAX 4
typedef struct sm_onnx_xform {
    int n_to_input; /* attributes that become constant inputs */
    const char *to_input_attr[SM_ONNX_XFORM_MAX];
    int to_input_index[SM_ONNX_XFORM_MAX];
    int n_to_attr; /* constant inputs that become attributes */
    const char *to_attr_name[SM_ONNX_XFORM_MAX];
    int to_attr_index[SM_ONNX_XFORM_MAX];
    int n_drop; /* attributes the target opset does not have */
    const char *drop[SM_ONNX_XFORM_MAX];
} sm_onnx_xform;

/* What changes in node n to write it at opset T. */
void sm_onnx_export_plan(const sm_node *n, int64_t opset, sm_onnx_xform *x);

/* The domain of Smelt's own ops in the files it writes, and its version
 * (save.c declares it; the loader reads it back). */
#define SM_ONNX_SMELT_DOMAIN "ai.smelt"
#define SM_ONNX_SMELT_VERSION 1
/* Whether op is one of Smelt's own at `opset` (the fused ops; Gelu below
 * opset 20, where ONNX lacks it): written in Smelt's domain, or
 * decomposed (save_std.c). */
int sm_onnx_is_smelt_op(sm_op op, int64_t opset);

/* The folder of a model or tensor file (owned by the caller). */
char *sm_onnx_dir_of(const char *path);

#endif
