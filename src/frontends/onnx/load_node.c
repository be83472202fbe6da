/*
 * load_node.c - one NodeProto to one IR node (or, for Softmax of old
 * opsets, a few): op lookup, inputs resolved by name, attributes mapped to
 * the kinds the op's schema expects, If/Loop graphs to sub-blocks in the
 * order the op table expects them.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "core/strmap.h"
#include "frontends/onnx/onnx_internal.h"

/* The attribute's type: the declared one, or for old files that left it
 * out, the one its set field shows. */
static Onnx__AttributeProto__AttributeType
attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type && a->type)
        return a->type;
    if (a->has_f)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->n_floats)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_strings)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static const char *attr_type_name(Onnx__AttributeProto__AttributeType t)
{
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "a float";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "an int";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "a string";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "a tensor";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "a graph";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "floats";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "ints";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "strings";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "tensors";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "graphs";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
        return "a sparse tensor";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
        return "sparse tensors";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "a type";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "types";
    default: return "untyped";
    }
}

/* Sets a string-valued attribute from protobuf bytes (not NUL-ended). */
static int set_string(sm_node *node, const char *name,
                      const ProtobufCBinaryData *b)
{
    char *s = sm_strndup((const char *)b->data, b->len);
    int ok = s && sm_node_set_string(node, name, s);
    sm_free(s);
    return ok;
}

static int set_strings(sm_node *node, const char *name,
                       const ProtobufCBinaryData *b, size_t n)
{
    char **v = sm_calloc(n ? n : 1, sizeof *v);
    int ok = v != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = (v[i] = sm_strndup((const char *)b[i].data, b[i].len)) != NULL;
    ok = ok && sm_node_set_strings(node, name, (const char *const *)v, (int)n);
    for (size_t i = 0; v && i < n; i++)
        sm_free(v[i]);
    sm_free(v);
    return ok;
}

static int set_floats(sm_node *node, const char *name, const float *f,
                      const int64_t *i, size_t n)
{
    double *v = sm_malloc(sizeof *v * (n ? n : 1));
    if (!v)
        return 0;
    for (size_t k = 0; k < n; k++)
        v[k] = f ? (double)f[k] : (double)i[k];
    int ok = sm_node_set_floats(node, name, v, (int)n);
    sm_free(v);
    return ok;
}

/* A scalar attribute declared INT, FLOAT or STRING must carry its value:
 * protobuf would read the missing field as 0 or "", a value the model
 * never gave (the op's default is what leaving the attribute out means). */
static smelt_status check_has_value(smelt_ctx_t *ctx,
                                    const Onnx__AttributeProto *a,
                                    Onnx__AttributeProto__AttributeType t,
                                    const char *where)
{
    int has = t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT      ? a->has_i
              : t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT  ? a->has_f
              : t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING ? a->has_s
                                                                   : 1;
    if (!has)
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: attribute '%s' is declared %s but holds no "
                      "value",
                      where, a->name, attr_type_name(t));
    return SMELT_OK;
}

/* Fails when two attributes of np share a name: ONNX allows each once,
 * and taking either one would be a guess. A map past a few attributes,
 * so a hostile node with very many stays linear. */
static smelt_status check_unique_attrs(smelt_ctx_t *ctx,
                                       const Onnx__NodeProto *np,
                                       const char *where)
{
    size_t n = np->n_attribute;
    sm_strmap seen;
    sm_strmap_init(&seen);
    smelt_status st = SMELT_OK;
    for (size_t k = 0; k < n && st == SMELT_OK; k++) {
        const char *name = np->attribute[k]->name;
        size_t len = strlen(name);
        int dup = 0;
        if (n <= 16) {
            for (size_t j = 0; j < k && !dup; j++)
                dup = strcmp(np->attribute[j]->name, name) == 0;
        } else {
            dup = sm_strmap_get(&seen, name, len) != NULL;
            if (!dup && !sm_strmap_put(&seen, name, len, (void *)name))
                st = sm_err_nomem(ctx);
        }
        if (dup)
            st = sm_err(ctx, SMELT_ERR_PARSE,
                        "onnx: %s: attribute '%.80s' appears more than once",
                        where, name);
    }
    sm_strmap_free(&seen);
    return st;
}

/* Maps one attribute onto the kind node's op schema gives it. */
static smelt_status load_attr(sm_onnx_loader *L, sm_node *node,
                              const Onnx__AttributeProto *a, const char *where)
{
    smelt_ctx_t *ctx = L->ctx;
    const char *name = a->name;
    Onnx__AttributeProto__AttributeType t = attr_type(a);
    if (a->ref_attr_name && a->ref_attr_name[0])
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: attribute '%s' refers to a function "
                      "attribute, which is not supported",
                      where, name);
    const sm_attr_spec *sp = sm_op_attr_spec(node->op, name);
    if (!sp)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: attribute '%s' is not supported", where, name);
    if (a->n_floats > SM_ONNX_MAX_LIST || a->n_ints > SM_ONNX_MAX_LIST ||
        a->n_strings > SM_ONNX_MAX_LIST)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "onnx: %s: attribute '%s' has too many elements", where,
                      name);
    int list = sp->kind == SM_ATTR_INTS || sp->kind == SM_ATTR_FLOATS ||
               sp->kind == SM_ATTR_STRINGS;
    int empty_list = (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS ||
                      t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS ||
                      t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS) &&
                     !a->n_ints && !a->n_floats && !a->n_strings;
    int ok = -1; /* -1: the kinds do not match */
    if (list && empty_list) {
        ok = sp->kind == SM_ATTR_INTS ? sm_node_set_ints(node, name, NULL, 0)
             : sp->kind == SM_ATTR_FLOATS
                 ? sm_node_set_floats(node, name, NULL, 0)
                 : sm_node_set_strings(node, name, NULL, 0);
    } else if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR &&
               sp->kind == SM_ATTR_TENSOR) {
        char what[320];
        snprintf(what, sizeof what, "%s attribute '%s'", where, name);
        if (!a->t)
            return sm_err(ctx, SMELT_ERR_PARSE, "onnx: %s: no tensor", what);
        sm_tensor *x;
        SM_TRY(sm_onnx_tensor_load(L, a->t, what, &x));
        ok = sm_node_set_tensor(node, name, x);
    } else {
        SM_TRY(check_has_value(ctx, a, t, where));
        switch (sp->kind) {
        case SM_ATTR_INT:
            if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
                ok = sm_node_set_int(node, name, a->i);
            break;
        case SM_ATTR_FLOAT:
            if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
                ok = sm_node_set_float(node, name, (double)a->f);
            else if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
                ok = sm_node_set_float(node, name, (double)a->i);
            break;
        case SM_ATTR_STRING:
            if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
                ok = set_string(node, name, &a->s);
            break;
        case SM_ATTR_INTS:
            if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
                ok = sm_node_set_ints(node, name, a->ints, (int)a->n_ints);
            break;
        case SM_ATTR_FLOATS:
            if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
                ok = set_floats(node, name, a->floats, NULL, a->n_floats);
            else if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
                ok = set_floats(node, name, NULL, a->ints, a->n_ints);
            break;
        case SM_ATTR_STRINGS:
            if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS)
                ok = set_strings(node, name, a->strings, a->n_strings);
            break;
        default: break;
        }
    }
    if (ok < 0)
        return sm_err(ctx, SMELT_ERR_TYPE,
                      "onnx: %s: attribute '%s' is %s, the op takes %s", where,
                      name, attr_type_name(t), sm_attr_kind_name(sp->kind));
    return ok ? SMELT_OK : sm_err_nomem(ctx);
}

/* Creates the sub-blocks of node from its graph attributes, in the order
 * of the op table; any other graph attribute is an error. */
static smelt_status load_blocks(sm_onnx_loader *L, sm_node *node,
                                const sm_onnx_node *n)
{
    const char *const *labels;
    int nl = sm_onnx_block_labels(node->op, &labels);
    const Onnx__NodeProto *np = n->np;
    for (size_t k = 0; k < np->n_attribute; k++) {
        const Onnx__AttributeProto *a = np->attribute[k];
        if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)
            continue;
        int known = 0;
        for (int i = 0; i < nl; i++)
            known |= strcmp(labels[i], a->name) == 0;
        if (!known)
            return sm_err(L->ctx, SMELT_ERR_UNSUPPORTED,
                          "onnx: %s: graph attribute '%s' is not supported",
                          n->where, a->name);
        if (!a->g)
            return sm_err(L->ctx, SMELT_ERR_PARSE,
                          "onnx: %s: graph attribute '%s' holds no graph",
                          n->where, a->name);
    }
    for (int i = 0; i < nl; i++) {
        const Onnx__GraphProto *g = NULL;
        for (size_t k = 0; k < np->n_attribute && !g; k++)
            if (strcmp(np->attribute[k]->name, labels[i]) == 0)
                g = np->attribute[k]->g;
        if (!g)
            return sm_err(L->ctx, SMELT_ERR_PARSE,
                          "onnx: %s: missing graph attribute '%s'", n->where,
                          labels[i]);
        SM_TRY(sm_onnx_load_subgraph(L, node, labels[i], g, n->where));
    }
    return SMELT_OK;
}

/* Checks the input and output counts against the op table. */
static smelt_status check_arity(smelt_ctx_t *ctx, const sm_onnx_node *n,
                                int n_out)
{
    const sm_op_info *info = sm_op_info_get(n->op);
    if (n->n_in < info->in_min || (info->in_max >= 0 && n->n_in > info->in_max))
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: %d inputs, the op takes %d to %d", n->where,
                      n->n_in, info->in_min, info->in_max);
    if (n_out < info->out_min || (info->out_max >= 0 && n_out > info->out_max))
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: %d outputs, the op gives %d to %d", n->where,
                      n_out, info->out_min, info->out_max);
    return SMELT_OK;
}

/* Creates the IR node for n (normalized) and everything it owns. */
static smelt_status build_node(sm_onnx_loader *L, sm_block *b, sm_onnx_node *n)
{
    const Onnx__NodeProto *np = n->np;
    while (n->n_in > 0 && !n->in[n->n_in - 1])
        n->n_in--; /* trailing absent inputs */
    int n_out = (int)np->n_output;
    while (n_out > 0 && !np->output[n_out - 1][0])
        n_out--;
    SM_TRY(check_arity(L->ctx, n, n_out));
    const char **names = sm_calloc((size_t)n_out + 1, sizeof *names);
    if (!names)
        return sm_err_nomem(L->ctx);
    smelt_status s = SMELT_OK;
    for (int i = 0; i < n_out && s == SMELT_OK; i++) {
        names[i] = np->output[i];
        if (!names[i][0] &&
            !(names[i] = sm_onnx_fresh_name(L, np->op_type, "_unused")))
            s = sm_err_nomem(L->ctx);
    }
    sm_node *node = NULL;
    if (s == SMELT_OK) {
        node = sm_node_new(b, n->op, np->name && np->name[0] ? np->name : NULL,
                           n->n_in, n->in, n_out, names);
        if (!node)
            s = sm_err_nomem(L->ctx);
    }
    sm_free(names);
    for (size_t k = 0; k < np->n_attribute && s == SMELT_OK; k++)
        if (!n->skip[k] && attr_type(np->attribute[k]) !=
                               ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)
            s = load_attr(L, node, np->attribute[k], n->where);
    for (int i = 0; i < n->n_extra && s == SMELT_OK; i++)
        if (!sm_node_set_int(node, n->extra_name[i], n->extra_val[i]))
            s = sm_err_nomem(L->ctx);
    if (s == SMELT_OK)
        s = load_blocks(L, node, n);
    if (s == SMELT_OK)
        s = sm_onnx_bind_outputs(L, node, n->where);
    return s;
}

/* "node 'conv1' (Conv)", or for a nameless node the op and its first
 * output. */
static void node_where(const Onnx__NodeProto *np, int index, char *buf,
                       size_t size)
{
    const char *op = np->op_type ? np->op_type : "?";
    if (np->name && np->name[0])
        snprintf(buf, size, "node '%.80s' (%.60s)", np->name, op);
    else if (np->n_output && np->output[0][0])
        snprintf(buf, size, "%.60s node #%d defining '%.80s'", op, index,
                 np->output[0]);
    else
        snprintf(buf, size, "%.60s node #%d", op, index);
}

smelt_status sm_onnx_load_node(sm_onnx_loader *L, sm_block *b,
                               const Onnx__NodeProto *np, int index)
{
    smelt_ctx_t *ctx = L->ctx;
    sm_onnx_node n = {0};
    n.np = np;
    node_where(np, index, n.where, sizeof n.where);
    const char *dom = np->domain ? np->domain : "";
    int smelt_dom = strcmp(dom, SM_ONNX_SMELT_DOMAIN) == 0;
    if (dom[0] && strcmp(dom, "ai.onnx") != 0 && !smelt_dom)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: op %s of domain '%s' is not supported "
                      "(only the default ONNX domain and Smelt's '%s' are)",
                      n.where, np->op_type ? np->op_type : "?", dom,
                      SM_ONNX_SMELT_DOMAIN);
    const char *op = np->op_type ? np->op_type : "";
    n.op = sm_op_from_name(op, (int)strlen(op));
    if (n.op == SM_OP_COUNT)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: op '%s' is not supported", n.where, op);
    /* Smelt's domain holds Smelt's own ops only (the files it writes) */
    if (smelt_dom && !sm_onnx_is_smelt_op(n.op, 0))
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: op '%s' is not one of domain '%s' (its ops: "
                      "FusedConv, FusedGemm, FusedQMatMul, FusedElementwise, "
                      "Attention, AttentionGrad, FakeQuantize, "
                      "ConvGradWeight, Gelu)",
                      n.where, op, SM_ONNX_SMELT_DOMAIN);
    /* ONNX's own Attention (opset 23) has other inputs and semantics */
    if (!smelt_dom && n.op == SM_OP_Attention)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "onnx: %s: ONNX's Attention (opset 23) is not "
                      "supported; Smelt's own Attention is of domain '%s'",
                      n.where, SM_ONNX_SMELT_DOMAIN);
    if (np->n_input > SM_ONNX_MAX_LIST || np->n_output > SM_ONNX_MAX_LIST ||
        np->n_attribute > SM_ONNX_MAX_LIST)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "onnx: %s: too many inputs, outputs or attributes",
                      n.where);
    for (size_t k = 0; k < np->n_attribute; k++)
        if (!np->attribute[k]->name || !np->attribute[k]->name[0])
            return sm_err(ctx, SMELT_ERR_PARSE,
                          "onnx: %s: attribute #%zu has no name", n.where, k);
    SM_TRY(check_unique_attrs(ctx, np, n.where));
    n.cap_in = (int)np->n_input + 4;
    n.in = sm_calloc((size_t)n.cap_in, sizeof *n.in);
    n.skip = sm_calloc(np->n_attribute + 1, 1);
    smelt_status s = n.in && n.skip ? SMELT_OK : sm_err_nomem(ctx);
    for (size_t i = 0; i < np->n_input && s == SMELT_OK; i++) {
        if (np->input[i][0])
            s = sm_onnx_lookup(L, b, np->input[i], n.where, &n.in[i]);
        n.n_in = (int)i + 1;
    }
    int done = 0;
    if (s == SMELT_OK)
        s = sm_onnx_legacy_softmax(L, b, &n, &done);
    if (s == SMELT_OK && !done)
        s = sm_onnx_import_fix(L, b, &n);
    if (s == SMELT_OK && !done)
        s = build_node(L, b, &n);
    sm_free(n.in);
    sm_free(n.skip);
    return s;
}
