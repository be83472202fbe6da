/*
 * eager.c - ops callable from C that compute at once: smelt_op runs any op
 * of the table on concrete tensors by building one node (in a scratch
 * graph, or in the trace graph while tracing) and evaluating it with
 * sm_eval_node, the step the interpreter and constant folding share. The
 * typed helpers (smelt_relu, smelt_matmul, ...) are generated from the
 * lists below. Design in docs/TRACE.md.
 */
#include <string.h>

#include "frontends/trace/trace.h"
#include "ir/eval.h"

static const char *kind_name(smelt_attr_kind k)
{
    static const char *names[] = {"int",  "float",  "string",
                                  "ints", "floats", "tensor"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

/* Whether public attribute a can fill schema kind `want`, and a's list
 * (if any) is well formed. */
static int kind_fits(sm_attr_kind want, const smelt_attr *a)
{
    switch (want) {
    case SM_ATTR_INT: return a->kind == SMELT_ATTR_INT;
    case SM_ATTR_FLOAT:
        return a->kind == SMELT_ATTR_FLOAT || a->kind == SMELT_ATTR_INT;
    case SM_ATTR_STRING: return a->kind == SMELT_ATTR_STRING && a->s;
    case SM_ATTR_INTS:
        return a->kind == SMELT_ATTR_INTS && a->n >= 0 && (!a->n || a->ints);
    case SM_ATTR_FLOATS:
        return a->kind == SMELT_ATTR_FLOATS && a->n >= 0 &&
               (!a->n || a->floats);
    case SM_ATTR_TENSOR: return a->kind == SMELT_ATTR_TENSOR && a->t;
    default: return 0; /* no public form of string lists */
    }
}

/* Checks attribute a against n's op schema and copies it onto n. */
static smelt_status set_attr(smelt_ctx_t *ctx, sm_node *n, const char *op,
                             const smelt_attr *a)
{
    if (!a->name)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "%s: attribute without name",
                      op);
    /* Later versions put fields there: a value now is garbage. */
    if (a->reserved[0] || a->reserved[1])
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: attribute '%s' has non-NULL reserved fields "
                      "(initialize smelt_attr with designated initializers)",
                      op, a->name);
    const sm_attr_spec *sp = sm_op_attr_spec(n->op, a->name);
    if (!sp)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "%s: unknown attribute '%s'",
                      op, a->name);
    if (sm_node_attr(n, a->name))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: attribute '%s' is given twice", op, a->name);
    if (!kind_fits(sp->kind, a)) {
        const char *want = sm_attr_kind_name(sp->kind);
        const char *got = kind_name(a->kind);
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: attribute '%s' must be %s, not %s%s", op, a->name,
                      want, got,
                      strcmp(want, got) ? "" : " (NULL or negative count)");
    }
    int ok = 0;
    sm_tensor *copy;
    switch (sp->kind) {
    case SM_ATTR_INT: ok = sm_node_set_int(n, a->name, a->i); break;
    case SM_ATTR_FLOAT:
        ok = sm_node_set_float(n, a->name,
                               a->kind == SMELT_ATTR_INT ? (double)a->i : a->f);
        break;
    case SM_ATTR_STRING: ok = sm_node_set_string(n, a->name, a->s); break;
    case SM_ATTR_INTS: ok = sm_node_set_ints(n, a->name, a->ints, a->n); break;
    case SM_ATTR_FLOATS:
        ok = sm_node_set_floats(n, a->name, a->floats, a->n);
        break;
    default:
        SM_TRY(sm_tensor_clone(ctx, a->t, &copy));
        ok = sm_node_set_tensor(n, a->name, copy);
        break;
    }
    return ok ? SMELT_OK : sm_err_nomem(ctx);
}

/* The op named op_name, checked for what eager mode needs: a known op
 * that is not a control op, fitting input and output counts, required
 * inputs present. */
static smelt_status check_call(smelt_ctx_t *ctx, const char *op_name,
                               smelt_tensor_t *const *inputs, int n_in,
                               int n_out, sm_op *op)
{
    if (!op_name)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "smelt_op: op name is NULL");
    *op = sm_op_from_name(op_name, (int)strlen(op_name));
    if (*op == SM_OP_COUNT)
        return sm_err(ctx, SMELT_ERR_NOT_FOUND, "smelt_op: no op named '%s'",
                      op_name);
    const sm_op_info *info = sm_op_info_get(*op);
    if (info->cls == SM_CLASS_CONTROL)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "%s: control ops own sub-blocks and do not run eagerly",
                      op_name);
    int in_max = info->in_max < 0 ? SM_TRACE_MAX_OPERANDS : info->in_max;
    int out_max = info->out_max < 0 ? SM_TRACE_MAX_OPERANDS : info->out_max;
    if (n_in < info->in_min || n_in > in_max)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: takes %d..%d inputs, was given %d", op_name,
                      info->in_min, in_max, n_in);
    if (n_out < info->out_min || n_out > out_max)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: gives %d..%d outputs, %d were asked for", op_name,
                      info->out_min, out_max, n_out);
    for (int i = 0; i < info->in_min; i++)
        if (!inputs[i])
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: required input %d is NULL", op_name, i);
    return SMELT_OK;
}

/* A node of op in a scratch graph of its own; its inputs are absent
 * values: sm_eval_node reads the tensors, not the values. */
static smelt_status scratch_node(smelt_ctx_t *ctx, sm_op op, int n_in,
                                 int n_out, sm_graph **g, sm_node **n)
{
    static sm_value *const none[SM_TRACE_MAX_OPERANDS];
    SM_TRY(sm_graph_new(ctx, "eager", g));
    *n = sm_node_new((*g)->top, op, NULL, n_in, none, n_out, NULL);
    return *n ? SMELT_OK : sm_err_nomem(ctx);
}

/* Attributes onto n, then the schema's required ones checked. */
static smelt_status set_attrs(smelt_ctx_t *ctx, sm_node *n, const char *op,
                              const smelt_attr *attrs, int n_attrs)
{
    if (n_attrs < 0 || (n_attrs && !attrs))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: %d attributes given at %p", op, n_attrs,
                      (const void *)attrs);
    for (int i = 0; i < n_attrs; i++)
        SM_TRY(set_attr(ctx, n, op, &attrs[i]));
    const sm_op_info *info = sm_op_info_get(n->op);
    for (int i = 0; i < info->n_spec; i++)
        if (info->spec[i].required && !sm_node_attr(n, info->spec[i].name))
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: required attribute '%s' is missing", op,
                          info->spec[i].name);
    return SMELT_OK;
}

smelt_status smelt_op(smelt_ctx_t *ctx, const char *op_name,
                      smelt_tensor_t *const *inputs, int n_in,
                      const smelt_attr *attrs, int n_attrs,
                      smelt_tensor_t **outputs, int n_out)
{
    sm_trace *tr = sm_trace_recording(ctx);
    if (!outputs || n_out < 0 || n_out > SM_TRACE_MAX_OPERANDS || n_in < 0 ||
        n_in > SM_TRACE_MAX_OPERANDS || (n_in && !inputs))
        return sm_trace_fail(
            tr, ctx,
            sm_err(ctx, SMELT_ERR_INVALID_ARG,
                   "smelt_op: %s: %d inputs at %p, %d outputs at %p (at most "
                   "%d each, arrays not NULL)",
                   op_name ? op_name : "(null)", n_in, (const void *)inputs,
                   n_out, (void *)outputs, SM_TRACE_MAX_OPERANDS));
    /* inputs first, so that outputs may be the same array */
    sm_tensor *in[SM_TRACE_MAX_OPERANDS];
    for (int i = 0; i < n_in; i++)
        in[i] = inputs[i];
    for (int j = 0; j < n_out; j++)
        outputs[j] = NULL;
    sm_op op = SM_OP_COUNT;
    smelt_status st = check_call(ctx, op_name, in, n_in, n_out, &op);
    sm_graph *scratch = NULL;
    sm_node *n = NULL;
    if (st == SMELT_OK)
        st = tr ? sm_trace_add_node(tr, ctx, op, in, n_in, n_out, &n)
                : scratch_node(ctx, op, n_in, n_out, &scratch, &n);
    if (st == SMELT_OK)
        st = set_attrs(ctx, n, op_name, attrs, n_attrs);
    if (st == SMELT_OK)
        st = sm_eval_node(ctx, n, in, outputs, 0);
    if (st == SMELT_OK && tr)
        st = sm_trace_bind_outputs(tr, ctx, n, outputs);
    if (st != SMELT_OK)
        for (int j = 0; j < n_out; j++) {
            sm_tensor_free(outputs[j]);
            outputs[j] = NULL;
        }
    sm_graph_free(scratch);
    return sm_trace_fail(tr, ctx, st);
}

/* ---- typed helpers, generated ------------------------------------------ */

#define UNARY_OPS(X)                                                           \
    X(neg, "Neg")                                                              \
    X(abs, "Abs")                                                              \
    X(sqrt, "Sqrt")                                                            \
    X(exp, "Exp")                                                              \
    X(log, "Log")                                                              \
    X(tanh, "Tanh")                                                            \
    X(sigmoid, "Sigmoid")                                                      \
    X(relu, "Relu")                                                            \
    X(erf, "Erf")                                                              \
    X(reciprocal, "Reciprocal")                                                \
    X(gelu, "Gelu")

#define BINARY_OPS(X)                                                          \
    X(add, "Add")                                                              \
    X(sub, "Sub")                                                              \
    X(mul, "Mul")                                                              \
    X(div, "Div")                                                              \
    X(pow, "Pow")                                                              \
    X(matmul, "MatMul")

#define AXIS_OPS(X)                                                            \
    X(softmax, "Softmax")                                                      \
    X(log_softmax, "LogSoftmax")                                               \
    X(flatten, "Flatten")

#define DEFINE_UNARY(fn, op)                                                   \
    smelt_status smelt_##fn(smelt_ctx_t *ctx, smelt_tensor_t *x,               \
                            smelt_tensor_t **out)                              \
    {                                                                          \
        return smelt_op(ctx, op, &x, 1, NULL, 0, out, 1);                      \
    }
#define DEFINE_BINARY(fn, op)                                                  \
    smelt_status smelt_##fn(smelt_ctx_t *ctx, smelt_tensor_t *a,               \
                            smelt_tensor_t *b, smelt_tensor_t **out)           \
    {                                                                          \
        smelt_tensor_t *in[2] = {a, b};                                        \
        return smelt_op(ctx, op, in, 2, NULL, 0, out, 1);                      \
    }
#define DEFINE_AXIS(fn, op)                                                    \
    smelt_status smelt_##fn(smelt_ctx_t *ctx, smelt_tensor_t *x, int64_t axis, \
                            smelt_tensor_t **out)                              \
    {                                                                          \
        smelt_attr at = {.name = "axis", .kind = SMELT_ATTR_INT, .i = axis};   \
        return smelt_op(ctx, op, &x, 1, &at, 1, out, 1);                       \
    }

UNARY_OPS(DEFINE_UNARY)
BINARY_OPS(DEFINE_BINARY)
AXIS_OPS(DEFINE_AXIS)

smelt_status smelt_transpose(smelt_ctx_t *ctx, smelt_tensor_t *x,
                             const int64_t *perm, int n_perm,
                             smelt_tensor_t **out)
{
    smelt_attr at = {
        .name = "perm", .kind = SMELT_ATTR_INTS, .ints = perm, .n = n_perm};
    return smelt_op(ctx, "Transpose", &x, 1, &at, perm ? 1 : 0, out, 1);
}

/* The target shape goes in as an i64 tensor, which a trace captures as a
 * constant; it is freed at once (the trace keeps its copy). */
smelt_status smelt_reshape(smelt_ctx_t *ctx, smelt_tensor_t *x,
                           const int64_t *shape, int ndim, smelt_tensor_t **out)
{
    if (out)
        *out = NULL;
    if (ndim < 0 || ndim > SMELT_MAX_DIMS || (ndim && !shape))
        return sm_trace_fail(sm_trace_recording(ctx), ctx,
                             sm_err(ctx, SMELT_ERR_INVALID_ARG,
                                    "Reshape: target rank %d is outside "
                                    "0..%d or its shape is NULL",
                                    ndim, SMELT_MAX_DIMS));
    int64_t len = ndim;
    sm_tensor *s;
    smelt_status st = sm_tensor_new(ctx, SMELT_DTYPE_I64, 1, &len, &s);
    if (st != SMELT_OK)
        return sm_trace_fail(sm_trace_recording(ctx), ctx, st);
    if (ndim)
        memcpy(s->data, shape, sizeof(int64_t) * (size_t)ndim);
    smelt_tensor_t *in[2] = {x, s};
    st = smelt_op(ctx, "Reshape", in, 2, NULL, 0, out, 1);
    sm_tensor_free(s);
    return st;
}
