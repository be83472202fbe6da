/*
 * load.c - ONNX import: ModelProto to an IR graph. Graph inputs become
 * parameters (except those that are initializers), initializers become
 * constants, nodes become nodes (load_node.c), If/Loop subgraphs become
 * sub-blocks, and value_info/input/output types become value types.
 *
 * Value names are SSA over the whole model (subgraphs included); a hash
 * map resolves them, and a sub-block may read values of the blocks that
 * enclose it but not of its siblings.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "frontends/onnx/onnx_internal.h"

char sm_onnx_reserved;

/* What m holds under name (NULL: nothing). */
static void *map_get(const sm_strmap *m, const char *name)
{
    return sm_strmap_get(m, name, strlen(name));
}

static int map_put(sm_strmap *m, const char *name, void *val)
{
    return sm_strmap_put(m, name, strlen(name), val);
}

smelt_status sm_onnx_lookup(sm_onnx_loader *L, const sm_block *b,
                            const char *name, const char *where, sm_value **out)
{
    sm_value *v = map_get(&L->names, name);
    *out = NULL;
    if (!v || v == SM_ONNX_RESERVED)
        return sm_err(L->ctx, SMELT_ERR_PARSE,
                      "onnx: %s: value '%s' is not defined before its use",
                      where, name);
    for (const sm_block *blk = b; blk;
         blk = blk->parent ? blk->parent->owner : NULL)
        if (v->block == blk) {
            *out = v;
            return SMELT_OK;
        }
    return sm_err(L->ctx, SMELT_ERR_PARSE,
                  "onnx: %s: value '%s' belongs to another subgraph and is "
                  "not visible here",
                  where, name);
}

const char *sm_onnx_fresh_name(sm_onnx_loader *L, const char *base,
                               const char *suffix)
{
    char buf[256];
    for (int i = 0;; i++) {
        if (i == 0)
            snprintf(buf, sizeof buf, "%.200s%s", base, suffix);
        else
            snprintf(buf, sizeof buf, "%.200s%s_%d", base, suffix, i);
        if (!map_get(&L->names, buf))
            break;
    }
    char *name = sm_arena_strdup(&L->g->arena, buf);
    if (!name || !map_put(&L->names, name, SM_ONNX_RESERVED))
        return NULL;
    return name;
}

smelt_status sm_onnx_define(sm_onnx_loader *L, sm_value *v, const char *where)
{
    void *old = map_get(&L->names, v->name);
    if (old && old != SM_ONNX_RESERVED)
        return sm_err(L->ctx, SMELT_ERR_PARSE,
                      "onnx: %s: value '%s' is defined twice", where, v->name);
    if (!map_put(&L->names, v->name, v))
        return sm_err_nomem(L->ctx);
    return SMELT_OK;
}

/* Merges a declared type into v's: fills the dtype and the shape where v
 * has none yet. */
static void merge_type(sm_value *v, const sm_type *t)
{
    if (v->type.dtype == SMELT_DTYPE_UNDEFINED)
        v->type.dtype = t->dtype;
    if (v->type.ndim < 0 && t->ndim >= 0) {
        v->type.ndim = t->ndim;
        memcpy(v->type.dims, t->dims, sizeof t->dims);
    }
}

smelt_status sm_onnx_bind_outputs(sm_onnx_loader *L, sm_node *n,
                                  const char *where)
{
    for (int i = 0; i < n->n_out; i++) {
        sm_value *v = n->out[i];
        const Onnx__ValueInfoProto *vi =
            L->vinfo ? map_get(L->vinfo, v->name) : NULL;
        if (vi) {
            char what[320];
            snprintf(what, sizeof what, "value_info of '%s'", v->name);
            sm_type t;
            SM_TRY(sm_onnx_type_load(L, vi->type, what, &t));
            merge_type(v, &t);
        }
        SM_TRY(sm_onnx_define(L, v, where));
    }
    return SMELT_OK;
}

/* Reserves every value name of graph gp and its subgraphs, so generated
 * names never take one the model defines later. */
static int reserve_names(sm_strmap *m, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_input; i++)
        if (gp->input[i]->name &&
            !map_put(m, gp->input[i]->name, SM_ONNX_RESERVED))
            return 0;
    for (size_t i = 0; i < gp->n_initializer; i++)
        if (gp->initializer[i]->name &&
            !map_put(m, gp->initializer[i]->name, SM_ONNX_RESERVED))
            return 0;
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t k = 0; k < np->n_output; k++)
            if (np->output[k][0] &&
                !map_put(m, np->output[k], SM_ONNX_RESERVED))
                return 0;
        for (size_t k = 0; k < np->n_attribute; k++)
            if (np->attribute[k]->g && !reserve_names(m, np->attribute[k]->g))
                return 0;
    }
    return 1;
}

/* Loads the initializers of gp as constants of b. */
static smelt_status load_initializers(sm_onnx_loader *L, sm_block *b,
                                      const Onnx__GraphProto *gp)
{
    if (gp->n_sparse_initializer)
        return sm_err(L->ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: sparse initializers are not supported");
    for (size_t i = 0; i < gp->n_initializer; i++) {
        Onnx__TensorProto *tp = gp->initializer[i];
        char what[320];
        if (!tp->name || !tp->name[0])
            return sm_err(L->ctx, SMELT_ERR_PARSE,
                          "onnx: initializer #%zu has no name", i);
        snprintf(what, sizeof what, "initializer '%s'", tp->name);
        sm_tensor *t;
        SM_TRY(sm_onnx_tensor_load(L, tp, what, &t));
        sm_value *v = sm_block_add_const(b, tp->name, t);
        if (!v)
            return sm_err_nomem(L->ctx);
        SM_TRY(sm_onnx_define(L, v, what));
    }
    return SMELT_OK;
}

/* Graph inputs that are not initializers become parameters of b. */
static smelt_status load_inputs(sm_onnx_loader *L, sm_block *b,
                                const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        char what[320];
        if (!vi->name || !vi->name[0])
            return sm_err(L->ctx, SMELT_ERR_PARSE,
                          "onnx: graph input #%zu has no name", i);
        snprintf(what, sizeof what, "graph input '%s'", vi->name);
        const sm_value *init = map_get(&L->names, vi->name);
        if (init && init != SM_ONNX_RESERVED && init->data && init->block == b)
            continue; /* an initializer: a constant, not an input */
        sm_type t;
        SM_TRY(sm_onnx_type_load(L, vi->type, what, &t));
        sm_value *v = sm_block_add_param(b, vi->name, &t);
        if (!v)
            return sm_err_nomem(L->ctx);
        SM_TRY(sm_onnx_define(L, v, what));
    }
    return SMELT_OK;
}

/* Graph outputs become b's returns; their declared types fill what the
 * values defined in b lack. */
static smelt_status load_outputs(sm_onnx_loader *L, sm_block *b,
                                 const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        char what[320];
        if (!vi->name || !vi->name[0])
            return sm_err(L->ctx, SMELT_ERR_PARSE,
                          "onnx: graph output #%zu has no name", i);
        snprintf(what, sizeof what, "graph output '%s'", vi->name);
        sm_value *v;
        SM_TRY(sm_onnx_lookup(L, b, vi->name, what, &v));
        sm_type t;
        SM_TRY(sm_onnx_type_load(L, vi->type, what, &t));
        if (v->def && v->block == b)
            merge_type(v, &t);
        if (!sm_block_add_return(b, v))
            return sm_err_nomem(L->ctx);
    }
    return SMELT_OK;
}

/* Loads graph gp into block b. */
static smelt_status load_graph(sm_onnx_loader *L, sm_block *b,
                               const Onnx__GraphProto *gp)
{
    sm_strmap vinfo;
    sm_strmap_init(&vinfo);
    const sm_strmap *saved = L->vinfo;
    smelt_status s = SMELT_OK;
    for (size_t i = 0; i < gp->n_value_info && s == SMELT_OK; i++) {
        Onnx__ValueInfoProto *vi = gp->value_info[i];
        if (vi->name && !map_put(&vinfo, vi->name, vi))
            s = sm_err_nomem(L->ctx);
    }
    L->vinfo = &vinfo;
    if (s == SMELT_OK)
        s = load_initializers(L, b, gp);
    if (s == SMELT_OK)
        s = load_inputs(L, b, gp);
    for (size_t i = 0; i < gp->n_node && s == SMELT_OK; i++)
        s = sm_onnx_load_node(L, b, gp->node[i], (int)i);
    if (s == SMELT_OK)
        s = load_outputs(L, b, gp);
    L->vinfo = saved;
    sm_strmap_free(&vinfo);
    return s;
}

smelt_status sm_onnx_load_subgraph(sm_onnx_loader *L, sm_node *n,
                                   const char *label, const Onnx__GraphProto *g,
                                   const char *where)
{
    if (L->depth >= SM_ONNX_MAX_DEPTH)
        return sm_err(L->ctx, SMELT_ERR_LIMIT,
                      "onnx: %s: subgraphs nest deeper than %d levels", where,
                      SM_ONNX_MAX_DEPTH);
    sm_block *blk = sm_block_new(L->g, label, n);
    if (!blk || !sm_node_add_block(n, blk))
        return sm_err_nomem(L->ctx);
    L->depth++;
    smelt_status s = load_graph(L, blk, g);
    L->depth--;
    return s;
}

/* The default-domain opset the model imports. */
static smelt_status model_opset(smelt_ctx_t *ctx, const Onnx__ModelProto *m,
                                int64_t *opset)
{
    *opset = -1;
    const char *other = NULL;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        const char *d = o->domain ? o->domain : "";
        if (strcmp(d, "") == 0 || strcmp(d, "ai.onnx") == 0)
            *opset = o->has_version ? o->version : 1;
        else if (strcmp(d, SM_ONNX_SMELT_DOMAIN) != 0)
            other = d;
        else if (!o->has_version || o->version < 1 ||
                 o->version > SM_ONNX_SMELT_VERSION)
            return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                          "onnx: domain '%s' version %lld is not supported "
                          "(Smelt reads version %d)",
                          SM_ONNX_SMELT_DOMAIN,
                          (long long)(o->has_version ? o->version : 0),
                          SM_ONNX_SMELT_VERSION);
    }
    /* Only other domains (ai.onnx.preview.training, com.microsoft...):
     * a valid model, of ops Smelt does not have. */
    if (*opset < 0 && other)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: the model imports no opset of the default "
                      "domain, only of domain '%s', which is not supported",
                      other);
    if (*opset < 0)
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: the model imports no opset of the default "
                      "domain");
    if (*opset < SM_ONNX_OPSET_MIN || *opset > SM_ONNX_OPSET_MAX)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: opset %lld is not supported (Smelt reads "
                      "opsets %d to %d)",
                      (long long)*opset, SM_ONNX_OPSET_MIN, SM_ONNX_OPSET_MAX);
    return SMELT_OK;
}

/* The graph's name as an identifier of the text form. */
static void graph_name(const char *src, char *buf, size_t size)
{
    size_t k = 0;
    for (; src && src[k] && k + 1 < size; k++) {
        char c = src[k];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (k > 0 && c >= '0' && c <= '9');
        buf[k] = ok ? c : '_';
    }
    buf[k] = 0;
    if (k == 0)
        snprintf(buf, size, "main");
}

/* Builds the graph of an unpacked model. */
static smelt_status import_model(smelt_ctx_t *ctx, const Onnx__ModelProto *m,
                                 const char *base_dir, const sm_onnx_src *src,
                                 sm_graph **out)
{
    *out = NULL;
    if (m->has_ir_version && m->ir_version < 3)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: ir_version %lld is older than 3 (opset "
                      "imports), which Smelt requires",
                      (long long)m->ir_version);
    sm_onnx_loader L = {0};
    sm_strmap_init(&L.names);
    L.ctx = ctx;
    L.base_dir = base_dir;
    L.src = src;
    SM_TRY(model_opset(ctx, m, &L.opset));
    if (!m->graph)
        return sm_err(ctx, SMELT_ERR_PARSE, "onnx: the model has no graph");
    char name[128];
    graph_name(m->graph->name, name, sizeof name);
    SM_TRY(sm_graph_new(ctx, name, &L.g));
    smelt_status s = SMELT_OK;
    if (!reserve_names(&L.names, m->graph))
        s = sm_err_nomem(ctx);
    if (s == SMELT_OK)
        s = load_graph(&L, L.g->top, m->graph);
    sm_strmap_free(&L.names);
    if (s != SMELT_OK) {
        sm_graph_free(L.g);
        return s;
    }
    *out = L.g;
    return SMELT_OK;
}

smelt_status smelt_onnx_load_buffer(smelt_ctx_t *ctx, const void *buf,
                                    size_t len, const char *base_dir,
                                    smelt_graph_t **out)
{
    if (!out || (!buf && len))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_onnx_load_buffer: NULL argument");
    *out = NULL;
    Onnx__ModelProto *m;
    sm_onnx_src src = {buf, len, 0};
    SM_TRY(sm_onnx_unpack(ctx, &src, &m));
    smelt_status s = import_model(ctx, m, base_dir, &src, out);
    sm_onnx_model_free(m);
    return s;
}

/* The folder holding path ("." for a bare name), which external data
 * must stay inside; NULL when out of memory. */
char *sm_onnx_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash == path ? sm_strdup("/")
           : slash       ? sm_strndup(path, (size_t)(slash - path))
                         : sm_strdup(".");
}

smelt_status smelt_onnx_load(smelt_ctx_t *ctx, const char *path,
                             smelt_graph_t **out)
{
    if (!out || !path)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_onnx_load: NULL argument");
    *out = NULL;
    char *dir = sm_onnx_dir_of(path);
    if (!dir)
        return sm_err_nomem(ctx);
    /* Mapped, not read: the weights' bytes are paged in as each constant
     * is copied out of the mapping, then dropped (lean.c). */
    sm_onnx_src src;
    smelt_status s = sm_onnx_map_file(ctx, path, &src);
    Onnx__ModelProto *m = NULL;
    if (s == SMELT_OK)
        s = sm_onnx_unpack(ctx, &src, &m);
    if (s == SMELT_OK)
        s = import_model(ctx, m, dir, &src, out);
    if (s != SMELT_OK && ctx && ctx->code == s &&
        strncmp(ctx->msg, "onnx: ", 6) == 0 && !strstr(ctx->msg, path))
        sm_err_prefix(ctx, "%s: ", path);
    sm_onnx_model_free(m);
    sm_onnx_unmap(&src);
    sm_free(dir);
    return s;
}
