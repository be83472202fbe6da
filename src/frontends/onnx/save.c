/*
 * save.c - ONNX export: any IR graph to a ModelProto (ir_version 8, the
 * default domain at opset 17, or the newer opset a node needs). Constants
 * become initializers, parameters and returns graph inputs and outputs,
 * typed values value_info, symbolic dimensions dim_param, sub-blocks graph
 * attributes. Operands whose form differs by opset are written in the
 * form of the opset written (opset.c).
 *
 * Smelt's own ops (fused ops, and ops the opset written lacks) go in
 * Smelt's domain "ai.smelt", declared in opset_import, which the loader
 * reads back; with the standard option they are decomposed into standard
 * ONNX ops instead (save_std.c), so other runtimes can run the file.
 *
 * The protobuf-c messages live in one arena freed after packing; tensor
 * bytes are referenced, not copied (on little-endian hosts).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/sized.h"
#include "core/status.h"
#include "frontends/onnx/save.h"

typedef sm_onnx_saver saver;

void *sm_onnx_save_alloc(saver *S, size_t n, size_t size)
{
    void *p = n ? sm_arena_alloc(&S->arena, n * size) : NULL;
    if (n && !p)
        S->nomem = 1;
    return p;
}

static Onnx__TypeProto *type_proto(saver *S, const sm_type *t)
{
    Onnx__TypeProto *tp = sm_onnx_save_alloc(S, 1, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = sm_onnx_save_alloc(S, 1, sizeof *tt);
    if (!tp || !tt)
        return NULL;
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (t->dtype != SMELT_DTYPE_UNDEFINED) {
        tt->has_elem_type = 1;
        tt->elem_type = (int32_t)sm_dtype_to_onnx(t->dtype);
    }
    if (t->ndim < 0)
        return tp;
    Onnx__TensorShapeProto *sh = sm_onnx_save_alloc(S, 1, sizeof *sh);
    Onnx__TensorShapeProto__Dimension *d =
        sm_onnx_save_alloc(S, (size_t)t->ndim, sizeof *d);
    if (!sh || (t->ndim && !d))
        return NULL;
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)t->ndim;
    sh->dim = sm_onnx_save_alloc(S, (size_t)t->ndim, sizeof *sh->dim);
    if (t->ndim && !sh->dim)
        return NULL;
    for (int i = 0; i < t->ndim; i++) {
        onnx__tensor_shape_proto__dimension__init(&d[i]);
        if (t->dims[i].size >= 0) {
            d[i].value_case =
                ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d[i].dim_value = t->dims[i].size;
        } else if (t->dims[i].sym) {
            d[i].value_case =
                ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d[i].dim_param = (char *)t->dims[i].sym;
        }
        sh->dim[i] = &d[i];
    }
    tt->shape = sh;
    return tp;
}

const char *sm_onnx_save_vname(const saver *S, const sm_value *v)
{
    return S->alias && S->alias[v->id] ? S->alias[v->id] : v->name;
}

static Onnx__ValueInfoProto *value_info(saver *S, const sm_value *v)
{
    Onnx__ValueInfoProto *vi = sm_onnx_save_alloc(S, 1, sizeof *vi);
    if (!vi)
        return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = (char *)sm_onnx_save_vname(S, v);
    vi->type = type_proto(S, &v->type);
    return vi;
}

Onnx__TensorProto *sm_onnx_save_tensor(saver *S, const sm_tensor *t,
                                       const char *name)
{
    Onnx__TensorProto *tp = sm_onnx_save_alloc(S, 1, sizeof *tp);
    if (!tp)
        return NULL;
    onnx__tensor_proto__init(tp);
    tp->name = (char *)name;
    tp->n_dims = (size_t)t->ndim;
    tp->dims = (int64_t *)t->dims;
    tp->has_data_type = 1;
    tp->data_type = (int32_t)sm_dtype_to_onnx(t->dtype);
    tp->has_raw_data = 1;
    tp->raw_data.len = t->nbytes;
    tp->raw_data.data = t->data;
    size_t es = smelt_dtype_size(t->dtype);
    const uint16_t one = 1;
    if (*(const unsigned char *)&one != 1 && es > 1 && t->nbytes) {
        uint8_t *d = sm_onnx_save_alloc(S, t->nbytes, 1);
        if (!d)
            return NULL;
        sm_onnx_copy_le(d, t->data, (size_t)t->numel, es);
        tp->raw_data.data = d;
    }
    return tp;
}

/* A name for an initializer the export adds, unused in the graph. */
const char *sm_onnx_save_fresh(saver *S, const char *base, const char *attr)
{
    char buf[256];
    for (int i = 0;; i++) {
        snprintf(buf, sizeof buf, i ? "%.200s_%s_%d" : "%.200s_%s", base, attr,
                 i);
        if (!sm_graph_find_value(S->g, buf) &&
            !sm_strmap_get(&S->made, buf, strlen(buf)))
            break;
    }
    char *name = sm_arena_strdup(&S->arena, buf);
    if (!name || !sm_strmap_put(&S->made, name, strlen(name), name)) {
        S->nomem = 1;
        return NULL;
    }
    return name;
}

Onnx__AttributeProto *sm_onnx_save_attr(saver *S, const sm_attr *a)
{
    Onnx__AttributeProto *p = sm_onnx_save_alloc(S, 1, sizeof *p);
    if (!p)
        return NULL;
    onnx__attribute_proto__init(p);
    p->name = (char *)a->name;
    p->has_type = 1;
    switch (a->kind) {
    case SM_ATTR_INT:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        p->has_i = 1;
        p->i = a->v.i;
        break;
    case SM_ATTR_FLOAT:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        p->has_f = 1;
        p->f = (float)a->v.f;
        break;
    case SM_ATTR_STRING:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        p->has_s = 1;
        p->s.data = (uint8_t *)a->v.s;
        p->s.len = strlen(a->v.s);
        break;
    case SM_ATTR_INTS:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        p->n_ints = (size_t)a->n;
        p->ints = a->v.ints;
        break;
    case SM_ATTR_FLOATS:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
        p->n_floats = (size_t)a->n;
        p->floats = sm_onnx_save_alloc(S, (size_t)a->n, sizeof(float));
        for (int i = 0; p->floats && i < a->n; i++)
            p->floats[i] = (float)a->v.floats[i];
        break;
    case SM_ATTR_STRINGS:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
        p->n_strings = (size_t)a->n;
        p->strings = sm_onnx_save_alloc(S, (size_t)a->n, sizeof *p->strings);
        for (int i = 0; p->strings && i < a->n; i++) {
            p->strings[i].data = (uint8_t *)a->v.strs[i];
            p->strings[i].len = strlen(a->v.strs[i]);
        }
        break;
    case SM_ATTR_TENSOR:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
        p->t = sm_onnx_save_tensor(S, a->v.t, NULL);
        break;
    default: break;
    }
    return p;
}

/* An ints attribute from the constant input v (opset form change). */
static Onnx__AttributeProto *ints_attr(saver *S, const char *name,
                                       const sm_value *v)
{
    const sm_tensor *t = v->data;
    sm_attr a = {name, SM_ATTR_INTS, (int)t->numel, {0}};
    a.v.ints = sm_onnx_save_alloc(S, (size_t)t->numel, sizeof(int64_t));
    for (int64_t i = 0; a.v.ints && i < t->numel; i++)
        a.v.ints[i] = sm_load_i64(t->dtype, t->data, i);
    return sm_onnx_save_attr(S, &a);
}

static Onnx__GraphProto *graph_proto(saver *S, const sm_block *b,
                                     const char *name, int depth);

/* Whether attribute `name` moves or is dropped under plan x. */
static int attr_moved(const sm_onnx_xform *x, const char *name)
{
    for (int i = 0; i < x->n_to_input; i++)
        if (strcmp(x->to_input_attr[i], name) == 0)
            return 1;
    for (int i = 0; i < x->n_drop; i++)
        if (strcmp(x->drop[i], name) == 0)
            return 1;
    return 0;
}

/* Node n as a NodeProto appended to gp; initializers the opset form
 * needs go to gp as well. */
Onnx__NodeProto *sm_onnx_save_node(saver *S, const sm_node *n,
                                   Onnx__GraphProto *gp, int depth)
{
    Onnx__NodeProto *np = sm_onnx_save_alloc(S, 1, sizeof *np);
    sm_onnx_xform x;
    sm_onnx_export_plan(n, S->opset, &x);
    int n_in = n->n_in;
    for (int i = 0; i < x.n_to_input; i++)
        if (x.to_input_index[i] + 1 > n_in)
            n_in = x.to_input_index[i] + 1;
    char **in = sm_onnx_save_alloc(S, (size_t)n_in + 1, sizeof *in);
    char **out = sm_onnx_save_alloc(S, (size_t)n->n_out + 1, sizeof *out);
    Onnx__AttributeProto **at = sm_onnx_save_alloc(
        S, (size_t)(n->n_attr + x.n_to_attr + n->n_blocks) + 1, sizeof *at);
    if (!np || !in || !out || !at)
        return NULL;
    onnx__node_proto__init(np);
    np->op_type = (char *)sm_op_info_get(n->op)->name;
    if (n->op == SM_OP_Scatter) /* deprecated since opset 11; the same op */
        np->op_type = "ScatterElements";
    if (sm_onnx_is_smelt_op(n->op, S->opset)) {
        np->domain = SM_ONNX_SMELT_DOMAIN;
        S->uses_smelt = 1;
    }
    np->name = (char *)n->name;
    for (int i = 0; i < n_in; i++)
        in[i] = i < n->n_in && n->in[i]
                    ? (char *)sm_onnx_save_vname(S, n->in[i])
                    : "";
    for (int i = 0; i < x.n_to_attr; i++) {
        const sm_value *v = n->in[x.to_attr_index[i]];
        if (v->data->numel > 0) /* empty: as absent (see below) */
            at[np->n_attribute++] = ints_attr(S, x.to_attr_name[i], v);
        in[x.to_attr_index[i]] = "";
    }
    for (int i = 0; i < x.n_to_input; i++) {
        const sm_attr *a = sm_node_attr(n, x.to_input_attr[i]);
        sm_tensor *t = sm_onnx_save_alloc(S, 1, sizeof *t);
        const char *nm = sm_onnx_save_fresh(S, n->out[0]->name, a->name);
        if (!t || !nm)
            return NULL;
        t->dtype = SMELT_DTYPE_I64;
        t->ndim = 1;
        int one = a->kind == SM_ATTR_INT; /* TopK's k */
        t->dims[0] = t->numel = one ? 1 : a->n;
        t->nbytes = sizeof(int64_t) * (size_t)t->numel;
        t->data = one ? (void *)&a->v.i : (void *)a->v.ints;
        gp->initializer[gp->n_initializer++] = sm_onnx_save_tensor(S, t, nm);
        in[x.to_input_index[i]] = (char *)nm;
    }
    while (n_in > 0 && !in[n_in - 1][0])
        n_in--;
    np->n_input = (size_t)n_in;
    np->input = in;
    for (int i = 0; i < n->n_out; i++)
        out[i] = (char *)sm_onnx_save_vname(S, n->out[i]);
    np->n_output = (size_t)n->n_out;
    np->output = out;
    /* an empty list is not a valid ONNX attribute (onnx.checker wants
     * the field set); where Smelt's ops take one it means what the
     * attribute's absence means */
    for (int i = 0; i < n->n_attr; i++) {
        const sm_attr *a = &n->attrs[i];
        int empty = (a->kind == SM_ATTR_INTS || a->kind == SM_ATTR_FLOATS ||
                     a->kind == SM_ATTR_STRINGS) &&
                    a->n == 0;
        if (!attr_moved(&x, a->name) && !empty)
            at[np->n_attribute++] = sm_onnx_save_attr(S, a);
    }
    const char *const *labels;
    int nl = sm_onnx_block_labels(n->op, &labels);
    for (int k = 0; k < n->n_blocks; k++) {
        const sm_block *blk = n->blocks[k];
        Onnx__AttributeProto *a = sm_onnx_save_alloc(S, 1, sizeof *a);
        if (!a)
            return NULL;
        onnx__attribute_proto__init(a);
        a->name = (char *)(blk->label ? blk->label
                           : k < nl   ? labels[k]
                                      : "body");
        a->has_type = 1;
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
        a->g = graph_proto(S, blk, a->name, depth + 1);
        at[np->n_attribute++] = a;
    }
    np->attribute = at;
    gp->node[gp->n_node++] = np;
    return np;
}

static Onnx__GraphProto *graph_proto(saver *S, const sm_block *b,
                                     const char *name, int depth)
{
    if (depth > SM_ONNX_MAX_DEPTH) {
        if (!S->err)
            S->err = sm_err(S->ctx, SMELT_ERR_LIMIT,
                            "onnx: sub-blocks nest deeper than %d levels",
                            SM_ONNX_MAX_DEPTH);
        return NULL;
    }
    Onnx__GraphProto *gp = sm_onnx_save_alloc(S, 1, sizeof *gp);
    if (!gp)
        return NULL;
    onnx__graph_proto__init(gp);
    gp->name = (char *)name;
    size_t extra = 0, n_vi = 0, n_nodes = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        size_t nodes, inits;
        sm_onnx_std_bound(S, b->nodes[i], &nodes, &inits);
        extra += inits;
        n_nodes += nodes;
        n_vi += (size_t)b->nodes[i]->n_out;
    }
    gp->input =
        sm_onnx_save_alloc(S, (size_t)b->n_params + 1, sizeof *gp->input);
    gp->initializer = sm_onnx_save_alloc(S, (size_t)b->n_consts + extra + 1,
                                         sizeof *gp->initializer);
    gp->node = sm_onnx_save_alloc(S, n_nodes + 1, sizeof *gp->node);
    gp->output =
        sm_onnx_save_alloc(S, (size_t)b->n_ret + 1, sizeof *gp->output);
    gp->value_info = sm_onnx_save_alloc(S, n_vi + 1, sizeof *gp->value_info);
    if (!gp->input || !gp->initializer || !gp->node || !gp->output ||
        !gp->value_info)
        return NULL;
    for (int i = 0; i < b->n_params; i++)
        gp->input[gp->n_input++] = value_info(S, b->params[i]);
    for (int i = 0; i < b->n_consts; i++)
        gp->initializer[gp->n_initializer++] =
            sm_onnx_save_tensor(S, b->consts[i]->data, b->consts[i]->name);
    for (int i = 0; i < b->n_ret; i++) /* returns get no value_info */
        S->ret[b->ret[i]->id] = 1;
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        if (!sm_onnx_std_write(S, n, gp, depth))
            return NULL;
        for (int k = 0; k < n->n_out; k++) {
            const sm_value *v = n->out[k];
            if ((v->type.dtype != SMELT_DTYPE_UNDEFINED || v->type.ndim >= 0) &&
                !S->ret[v->id])
                gp->value_info[gp->n_value_info++] = value_info(S, v);
        }
    }
    for (int i = 0; i < b->n_ret; i++)
        S->ret[b->ret[i]->id] = 0;
    for (int i = 0; i < b->n_ret; i++)
        gp->output[gp->n_output++] = value_info(S, b->ret[i]);
    return gp;
}

/* Packs g into a new buffer (sm_malloc'd). */
static smelt_status pack_graph(smelt_ctx_t *ctx, const sm_graph *g,
                               const smelt_onnx_save_options *o, void **out,
                               size_t *len)
{
    *out = NULL;
    *len = 0;
    saver S = {0};
    S.ctx = ctx;
    sm_strmap_init(&S.made);
    S.g = g;
    sm_arena_init(&S.arena);
    S.opset = sm_onnx_export_opset(g);
    S.standard = o && o->standard;
    S.ret = sm_calloc((size_t)g->n_values + 1, 1);
    S.alias = sm_calloc((size_t)g->n_values + 1, sizeof *S.alias);
    if (!S.ret || !S.alias) {
        sm_free(S.ret);
        sm_free(S.alias);
        return sm_err_nomem(ctx);
    }
    Onnx__ModelProto m;
    Onnx__OperatorSetIdProto op[2];
    Onnx__OperatorSetIdProto *ops[2] = {&op[0], &op[1]};
    onnx__model_proto__init(&m);
    onnx__operator_set_id_proto__init(&op[0]);
    onnx__operator_set_id_proto__init(&op[1]);
    op[0].domain = "";
    op[0].has_version = 1;
    op[0].version = S.opset;
    op[1].domain = SM_ONNX_SMELT_DOMAIN;
    op[1].has_version = 1;
    op[1].version = SM_ONNX_SMELT_VERSION;
    m.has_ir_version = 1;
    m.ir_version = SM_ONNX_EXPORT_IR_VERSION;
    m.opset_import = ops;
    m.producer_name = "smelt";
    m.producer_version = "0.1.0";
    m.graph = graph_proto(&S, g->top, g->name, 0);
    m.n_opset_import = S.uses_smelt ? 2 : 1;
    smelt_status s = SMELT_OK;
    if (S.err)
        s = S.err;
    else if (S.nomem || !m.graph)
        s = sm_err_nomem(ctx);
    size_t n = s == SMELT_OK ? onnx__model_proto__get_packed_size(&m) : 0;
    if (s == SMELT_OK && n > SM_ONNX_MAX_MODEL_BYTES)
        s = sm_err(ctx, SMELT_ERR_LIMIT,
                   "onnx: the model needs %zu bytes, over protobuf's %zu-byte "
                   "limit",
                   n, (size_t)SM_ONNX_MAX_MODEL_BYTES);
    void *buf = s == SMELT_OK ? sm_malloc(n ? n : 1) : NULL;
    if (s == SMELT_OK && !buf)
        s = sm_err_nomem(ctx);
    if (s == SMELT_OK) {
        size_t w = onnx__model_proto__pack(&m, buf);
        SM_ASSERT(w == n);
        (void)w;
        *out = buf;
        *len = n;
    }
    sm_strmap_free(&S.made);
    sm_arena_free(&S.arena);
    sm_free(S.ret);
    sm_free(S.alias);
    return s;
}

/* The first version of smelt_onnx_save_options ends after `standard`. */
#define SAVE_OPTIONS_V1 SM_FIELD_END(smelt_onnx_save_options, standard)

smelt_status smelt_onnx_save_options_init(smelt_onnx_save_options *o,
                                          size_t struct_size)
{
    smelt_onnx_save_options d = {sizeof d, 0};
    return sm_sized_init(o, struct_size, &d, sizeof d, SAVE_OPTIONS_V1);
}

smelt_status smelt_onnx_save_buffer_opt(smelt_ctx_t *ctx,
                                        const smelt_graph_t *g,
                                        const smelt_onnx_save_options *o,
                                        void **out, size_t *len)
{
    if (!g || !out || !len)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_onnx_save_buffer: NULL argument");
    smelt_onnx_save_options so = {sizeof so, 0};
    if (o)
        SM_TRY(sm_sized_in(ctx, "smelt_onnx_save_options", &so, sizeof so,
                           SAVE_OPTIONS_V1, o));
    return pack_graph(ctx, g, &so, out, len);
}

smelt_status smelt_onnx_save_buffer(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                    void **out, size_t *len)
{
    return smelt_onnx_save_buffer_opt(ctx, g, NULL, out, len);
}

void smelt_onnx_buffer_free(void *buf)
{
    sm_free(buf);
}

smelt_status smelt_onnx_save(smelt_ctx_t *ctx, const smelt_graph_t *g,
                             const char *path)
{
    return smelt_onnx_save_opt(ctx, g, NULL, path);
}

smelt_status smelt_onnx_save_opt(smelt_ctx_t *ctx, const smelt_graph_t *g,
                                 const smelt_onnx_save_options *o,
                                 const char *path)
{
    if (!g || !path)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_onnx_save: NULL argument");
    void *buf;
    size_t len;
    SM_TRY(smelt_onnx_save_buffer_opt(ctx, g, o, &buf, &len));
    FILE *f = fopen(path, "wb");
    smelt_status s = SMELT_OK;
    if (!f)
        s = sm_err(ctx, SMELT_ERR_IO, "onnx: cannot create '%s': %s", path,
                   strerror(errno));
    else if (fwrite(buf, 1, len, f) != len)
        s = sm_err(ctx, SMELT_ERR_IO, "onnx: cannot write '%s': %s", path,
                   strerror(errno));
    if (f && fclose(f) != 0 && s == SMELT_OK)
        s = sm_err(ctx, SMELT_ERR_IO, "onnx: cannot write '%s': %s", path,
                   strerror(errno));
    sm_free(buf);
    return s;
}
