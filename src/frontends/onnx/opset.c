/*
 * opset.c - differences between ONNX opsets, as tables.
 *
 * Smelt's op table follows opset 17. Older opsets kept some operands as
 * attributes: where the op table takes only the input form (Slice < 10,
 * Pad < 11, Clip < 11, Dropout < 12) the importer turns the attribute into
 * a constant input; where the op table takes both forms (Squeeze,
 * Unsqueeze, Split, Reduce*) it keeps what the file has. The exporter
 * writes each such operand in the form of the opset it writes.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/onnx/onnx_internal.h"

typedef enum form_kind {
    FORM_INTS,        /* ints attribute <-> 1-D int64 input */
    FORM_SCALAR_LIKE, /* float attribute <-> scalar of the data's dtype */
    FORM_SCALAR_F32   /* float attribute <-> f32 scalar */
} form_kind;

/* One operand that moved from attribute to input at opset `since`. */
typedef struct form {
    sm_op op;
    const char *attr;
    int input;
    int since;
    form_kind kind;
    int on_import; /* the op table takes only the input form */
} form;

static const form forms[] = {
    {SM_OP_Slice, "starts", 1, 10, FORM_INTS, 1},
    {SM_OP_Slice, "ends", 2, 10, FORM_INTS, 1},
    {SM_OP_Slice, "axes", 3, 10, FORM_INTS, 1},
    {SM_OP_Pad, "pads", 1, 11, FORM_INTS, 1},
    {SM_OP_Pad, "value", 2, 11, FORM_SCALAR_LIKE, 1},
    {SM_OP_Clip, "min", 1, 11, FORM_SCALAR_LIKE, 1},
    {SM_OP_Clip, "max", 2, 11, FORM_SCALAR_LIKE, 1},
    {SM_OP_Dropout, "ratio", 1, 12, FORM_SCALAR_F32, 1},
    {SM_OP_Squeeze, "axes", 1, 13, FORM_INTS, 0},
    {SM_OP_Unsqueeze, "axes", 1, 13, FORM_INTS, 0},
    {SM_OP_Split, "split", 1, 13, FORM_INTS, 0},
    {SM_OP_ReduceSum, "axes", 1, 13, FORM_INTS, 0},
    {SM_OP_TopK, "k", 1, 10, FORM_INTS, 0}, /* an int: a 1-element input */
    {SM_OP_ReduceMean, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceMax, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceMin, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceProd, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceL1, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceL2, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceLogSum, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceLogSumExp, "axes", 1, 18, FORM_INTS, 0},
    {SM_OP_ReduceSumSquare, "axes", 1, 18, FORM_INTS, 0},
};
#define N_FORMS ((int)(sizeof forms / sizeof *forms))

/* Operands that only newer opsets have: a node using one needs `since`. */
static const struct {
    sm_op op;
    const char *attr; /* NULL: the input below */
    int input;
    int since;
} newer[] = {
    {SM_OP_Split, "num_outputs", -1, 18},
    {SM_OP_Pad, NULL, 3, 18},
    {SM_OP_LpPool, "ceil_mode", -1, 18},
    {SM_OP_LpPool, "dilations", -1, 18},
    {SM_OP_AveragePool, "dilations", -1, 19},
    /* ReduceSum has had it since 13, the others since 18 */
    {SM_OP_ReduceMean, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceMax, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceMin, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceProd, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceL1, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceL2, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceLogSum, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceLogSumExp, "noop_with_empty_axes", -1, 18},
    {SM_OP_ReduceSumSquare, "noop_with_empty_axes", -1, 18},
    /* input 0: the op itself is that new */
    {SM_OP_Mish, NULL, 0, 18},
    {SM_OP_BitwiseAnd, NULL, 0, 18},
    {SM_OP_BitwiseOr, NULL, 0, 18},
    {SM_OP_BitwiseXor, NULL, 0, 18},
    {SM_OP_BitwiseNot, NULL, 0, 18},
};

int sm_onnx_block_labels(sm_op op, const char *const **labels)
{
    static const char *const if_labels[] = {"then_branch", "else_branch"};
    static const char *const loop_labels[] = {"body"};
    switch (op) {
    case SM_OP_If: *labels = if_labels; return 2;
    case SM_OP_Loop:
    case SM_OP_FusedElementwise: *labels = loop_labels; return 1;
    default: *labels = NULL; return 0;
    }
}

/* The index of attribute `name` among np's not-yet-skipped attributes. */
static int find_attr(const sm_onnx_node *n, const char *name)
{
    for (size_t k = 0; k < n->np->n_attribute; k++)
        if (!n->skip[k] && strcmp(n->np->attribute[k]->name, name) == 0)
            return (int)k;
    return -1;
}

/* The tensor an attribute becomes as input, following the row's kind. */
static smelt_status attr_tensor(sm_onnx_loader *L, const sm_onnx_node *n,
                                const form *f, const Onnx__AttributeProto *a,
                                sm_tensor **out)
{
    if (f->kind == FORM_INTS) {
        if (a->n_ints > SM_ONNX_MAX_LIST ||
            (a->has_type &&
             a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS))
            return sm_err(L->ctx, SMELT_ERR_TYPE,
                          "onnx: %s: attribute '%s' must be ints", n->where,
                          f->attr);
        int64_t d = (int64_t)a->n_ints;
        SM_TRY(sm_tensor_new(L->ctx, SMELT_DTYPE_I64, 1, &d, out));
        if (d)
            memcpy((*out)->data, a->ints, sizeof(int64_t) * (size_t)d);
        return SMELT_OK;
    }
    double v;
    if (a->has_f || (a->has_type &&
                     a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT))
        v = a->f;
    else if (a->has_i)
        v = (double)a->i;
    else
        return sm_err(L->ctx, SMELT_ERR_TYPE,
                      "onnx: %s: attribute '%s' must be a float", n->where,
                      f->attr);
    smelt_dtype dt = SMELT_DTYPE_F32;
    if (f->kind == FORM_SCALAR_LIKE && n->n_in > 0 && n->in[0] &&
        n->in[0]->type.dtype != SMELT_DTYPE_UNDEFINED)
        dt = n->in[0]->type.dtype;
    SM_TRY(sm_tensor_new(L->ctx, dt, 0, NULL, out));
    sm_store_f64(dt, (*out)->data, 0, v);
    return SMELT_OK;
}

/* A constant of b holding t, named after the node and `suffix`. */
static smelt_status add_const(sm_onnx_loader *L, sm_block *b,
                              const sm_onnx_node *n, const char *suffix,
                              sm_tensor *t, sm_value **out)
{
    const Onnx__NodeProto *np = n->np;
    const char *base = np->n_output && np->output[0][0] ? np->output[0]
                       : np->name && np->name[0]        ? np->name
                                                        : np->op_type;
    const char *name = sm_onnx_fresh_name(L, base, suffix);
    if (!name) {
        sm_tensor_free(t);
        return sm_err_nomem(L->ctx);
    }
    *out = sm_block_add_const(b, name, t);
    if (!*out)
        return sm_err_nomem(L->ctx);
    return sm_onnx_define(L, *out, n->where);
}

/* Ops whose forms before opset `since` differ from the op table's in a
 * way no attribute or input of the node shows, so the importer cannot
 * tell: Dropout and BatchNormalization trained by default (is_test = 0),
 * Cast's `to` was a string, Concat's axis defaulted to 1, Tile took
 * (tiles, axis), Resize took (X, scales) with other coordinate rules,
 * RoiAlign had no coordinate_transformation_mode and used
 * output_half_pixel. Other old forms differ by attributes the op table
 * lacks (broadcast, consumed_inputs, is_test, paddings, shape...), which
 * the importer refuses as unsupported attributes. */
static const struct {
    sm_op op;
    int since;
} first_opset[] = {
    {SM_OP_BatchNormalization, 7},
    {SM_OP_Dropout, 7},
    {SM_OP_Cast, 6},
    {SM_OP_Concat, 4},
    {SM_OP_Tile, 6},
    {SM_OP_Resize, 11},
    {SM_OP_RoiAlign, 16},
};

smelt_status sm_onnx_import_fix(sm_onnx_loader *L, sm_block *b, sm_onnx_node *n)
{
    for (size_t r = 0; r < sizeof first_opset / sizeof *first_opset; r++)
        if (first_opset[r].op == n->op && L->opset < first_opset[r].since)
            return sm_err(L->ctx, SMELT_ERR_UNSUPPORTED,
                          "onnx: %s: %s at opset %lld is not supported "
                          "(Smelt reads it from opset %d)",
                          n->where, sm_op_info_get(n->op)->name,
                          (long long)L->opset, first_opset[r].since);
    for (int r = 0; r < N_FORMS; r++) {
        const form *f = &forms[r];
        if (f->op != n->op || !f->on_import || L->opset >= f->since)
            continue;
        int k = find_attr(n, f->attr);
        if (k < 0)
            continue;
        if (f->input < n->n_in && n->in[f->input])
            return sm_err(L->ctx, SMELT_ERR_PARSE,
                          "onnx: %s: '%s' given both as attribute and input",
                          n->where, f->attr);
        sm_tensor *t;
        SM_TRY(attr_tensor(L, n, f, n->np->attribute[k], &t));
        char suffix[32];
        snprintf(suffix, sizeof suffix, "_%s", f->attr);
        sm_value *v = NULL;
        SM_TRY(add_const(L, b, n, suffix, t, &v));
        SM_ASSERT(f->input < n->cap_in);
        while (n->n_in <= f->input)
            n->in[n->n_in++] = NULL;
        n->in[f->input] = v;
        n->skip[k] = 1;
    }
    if (n->op == SM_OP_BatchNormalization && L->opset < 9) {
        int k = find_attr(n, "spatial");
        if (k >= 0 &&
            (!n->np->attribute[k]->has_i || n->np->attribute[k]->i != 1))
            return sm_err(L->ctx, SMELT_ERR_UNSUPPORTED,
                          "onnx: %s: spatial = %lld is not supported", n->where,
                          (long long)n->np->attribute[k]->i);
        if (k >= 0)
            n->skip[k] = 1;
    }
    return SMELT_OK;
}

/* Adds a node of one output named `out` (NULL: fresh from n's output
 * with `suffix`) to b. */
static smelt_status add_node(sm_onnx_loader *L, sm_block *b,
                             const sm_onnx_node *n, sm_op op, const char *name,
                             int n_in, sm_value *const *in, const char *out,
                             const char *suffix, sm_node **node)
{
    if (!out && !(out = sm_onnx_fresh_name(L, n->np->output[0], suffix)))
        return sm_err_nomem(L->ctx);
    *node = sm_node_new(b, op, name, n_in, in, 1, &out);
    if (!*node)
        return sm_err_nomem(L->ctx);
    return suffix ? sm_onnx_define(L, (*node)->out[0], n->where)
                  : sm_onnx_bind_outputs(L, *node, n->where);
}

smelt_status sm_onnx_legacy_softmax(sm_onnx_loader *L, sm_block *b,
                                    sm_onnx_node *n, int *done)
{
    *done = 0;
    if ((n->op != SM_OP_Softmax && n->op != SM_OP_LogSoftmax &&
         n->op != SM_OP_Hardmax) ||
        L->opset >= 13 || n->n_in != 1 || !n->in[0] || n->np->n_output != 1 ||
        !n->np->output[0][0])
        return SMELT_OK;
    int k = find_attr(n, "axis");
    if (k >= 0 && !n->np->attribute[k]->has_i)
        return SMELT_OK; /* not an int: the attribute mapping says so */
    int64_t axis = k >= 0 ? n->np->attribute[k]->i : 1;
    int r = n->in[0]->type.ndim;
    if (axis == -1 || (r >= 0 && (axis < 0 ? axis + r : axis) == r - 1)) {
        if (k < 0) { /* the op table's default is -1, the old one 1 */
            n->extra_name[n->n_extra] = "axis";
            n->extra_val[n->n_extra++] = axis;
        }
        return SMELT_OK;
    }
    for (size_t i = 0; i < n->np->n_attribute; i++)
        if ((int)i != k)
            return sm_err(L->ctx, SMELT_ERR_UNSUPPORTED,
                          "onnx: %s: attribute '%s' is not supported", n->where,
                          n->np->attribute[i]->name);
    /* y = Reshape(Softmax(Flatten(x, axis), axis=1), Shape(x)) */
    sm_value *x = n->in[0], *in[2];
    sm_node *flat = NULL, *soft = NULL, *shape = NULL, *back = NULL;
    SM_TRY(add_node(L, b, n, SM_OP_Flatten, NULL, 1, &x, NULL, "_2d", &flat));
    if (!sm_node_set_int(flat, "axis", axis))
        return sm_err_nomem(L->ctx);
    const char *name = n->np->name && n->np->name[0] ? n->np->name : NULL;
    SM_TRY(
        add_node(L, b, n, n->op, name, 1, flat->out, NULL, "_2d_out", &soft));
    if (!sm_node_set_int(soft, "axis", 1))
        return sm_err_nomem(L->ctx);
    SM_TRY(add_node(L, b, n, SM_OP_Shape, NULL, 1, &x, NULL, "_shape", &shape));
    in[0] = soft->out[0];
    in[1] = shape->out[0];
    SM_TRY(add_node(L, b, n, SM_OP_Reshape, NULL, 2, in, n->np->output[0], NULL,
                    &back));
    *done = 1;
    return SMELT_OK;
}

/* ---- export ------------------------------------------------------------ */

static int input_present(const sm_node *n, int i)
{
    return i >= 0 && i < n->n_in && n->in[i];
}

/* Raises *opset to what the nodes of b (and their sub-blocks) need. */
static void block_opset(const sm_block *b, int64_t *opset)
{
    for (int i = 0; i < b->n_nodes; i++) {
        const sm_node *n = b->nodes[i];
        for (int r = 0; r < N_FORMS; r++)
            if (forms[r].op == n->op && forms[r].since > *opset &&
                input_present(n, forms[r].input) &&
                !n->in[forms[r].input]->data)
                *opset = forms[r].since;
        for (size_t r = 0; r < sizeof newer / sizeof *newer; r++)
            if (newer[r].op == n->op && newer[r].since > *opset &&
                (newer[r].attr ? sm_node_attr(n, newer[r].attr) != NULL
                               : input_present(n, newer[r].input)))
                *opset = newer[r].since;
        for (int k = 0; k < n->n_blocks; k++)
            block_opset(n->blocks[k], opset);
    }
}

int64_t sm_onnx_export_opset(const sm_graph *g)
{
    int64_t opset = SM_ONNX_EXPORT_OPSET;
    block_opset(g->top, &opset);
    return opset;
}

void sm_onnx_export_plan(const sm_node *n, int64_t opset, sm_onnx_xform *x)
{
    memset(x, 0, sizeof *x);
    for (int r = 0; r < N_FORMS; r++) {
        const form *f = &forms[r];
        if (f->op != n->op)
            continue;
        if (opset >= f->since && sm_node_attr(n, f->attr) &&
            x->n_to_input < SM_ONNX_XFORM_MAX) {
            x->to_input_attr[x->n_to_input] = f->attr;
            x->to_input_index[x->n_to_input++] = f->input;
        } else if (opset < f->since && input_present(n, f->input) &&
                   n->in[f->input]->data && x->n_to_attr < SM_ONNX_XFORM_MAX) {
            x->to_attr_name[x->n_to_attr] = f->attr;
            x->to_attr_index[x->n_to_attr++] = f->input;
        }
    }
    if (n->op == SM_OP_Cast && opset < 19 && sm_node_attr(n, "saturate"))
        x->drop[x->n_drop++] = "saturate";
}
