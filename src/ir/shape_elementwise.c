/*
 * shape_elementwise.c - shape and dtype inference for the elementwise ops
 * (unary, Cast, CastLike, Dropout) and the broadcasting ops (arithmetic,
 * Min/Max/Sum, comparisons, logic, Where), plus their cost functions.
 *
 * The dtypes an op accepts sit in one table indexed by op, so the shape
 * functions stay shared by whole families without testing op names.
 */
#include <string.h>

#include "core/dtype.h"
#include "ir/shape_util.h"

/* Which dtypes an op's data inputs accept. */
enum {
    ACCEPT_ANY = 0, /* every dtype (the default for ops not listed) */
    ACCEPT_FLOAT,   /* f32, f64, f16, bf16 */
    ACCEPT_NUMBER,  /* floats and integers, not bool */
    ACCEPT_BOOL,    /* bool only */
    ACCEPT_MASK = 7,
    MIXED_DTYPES = 8 /* flag: inputs need not share a dtype (Pow) */
};

static const unsigned char op_accepts[SM_OP_COUNT] = {
    [SM_OP_Neg] = ACCEPT_NUMBER,
    [SM_OP_Abs] = ACCEPT_NUMBER,
    [SM_OP_Sqrt] = ACCEPT_FLOAT,
    [SM_OP_Exp] = ACCEPT_FLOAT,
    [SM_OP_Log] = ACCEPT_FLOAT,
    [SM_OP_Tanh] = ACCEPT_FLOAT,
    [SM_OP_Sigmoid] = ACCEPT_FLOAT,
    [SM_OP_Relu] = ACCEPT_NUMBER,
    [SM_OP_LeakyRelu] = ACCEPT_FLOAT,
    [SM_OP_Erf] = ACCEPT_FLOAT,
    [SM_OP_Reciprocal] = ACCEPT_FLOAT,
    [SM_OP_Floor] = ACCEPT_FLOAT,
    [SM_OP_Ceil] = ACCEPT_FLOAT,
    [SM_OP_Sin] = ACCEPT_FLOAT,
    [SM_OP_Cos] = ACCEPT_FLOAT,
    [SM_OP_Softplus] = ACCEPT_FLOAT,
    [SM_OP_Not] = ACCEPT_BOOL,
    [SM_OP_Clip] = ACCEPT_NUMBER,
    [SM_OP_Softmax] = ACCEPT_FLOAT,
    [SM_OP_LogSoftmax] = ACCEPT_FLOAT,
    [SM_OP_Add] = ACCEPT_NUMBER,
    [SM_OP_Sub] = ACCEPT_NUMBER,
    [SM_OP_Mul] = ACCEPT_NUMBER,
    [SM_OP_Div] = ACCEPT_NUMBER,
    [SM_OP_Pow] = ACCEPT_NUMBER | MIXED_DTYPES,
    [SM_OP_Min] = ACCEPT_NUMBER,
    [SM_OP_Max] = ACCEPT_NUMBER,
    [SM_OP_Sum] = ACCEPT_NUMBER,
    [SM_OP_Less] = ACCEPT_NUMBER,
    [SM_OP_Greater] = ACCEPT_NUMBER,
    [SM_OP_And] = ACCEPT_BOOL,
    [SM_OP_Or] = ACCEPT_BOOL,
};

static const char *const accept_name[] = {"any", "a float", "a numeric",
                                          "bool"};

/* The op's row of op_accepts: an ACCEPT_ class and flags. */
static int accept_flags(const sm_shape_ctx *s)
{
    sm_op op = sm_op_from_name(s->op->name, (int)strlen(s->op->name));
    return op < SM_OP_COUNT ? op_accepts[op] : ACCEPT_ANY;
}

static int accept_class(const sm_shape_ctx *s)
{
    return accept_flags(s) & ACCEPT_MASK;
}

static int dtype_in_class(smelt_dtype dt, int cls)
{
    switch (cls) {
    case ACCEPT_FLOAT: return sm_dtype_is_float(dt);
    case ACCEPT_NUMBER: return sm_dtype_is_float(dt) || sm_dtype_is_int(dt);
    case ACCEPT_BOOL: return dt == SMELT_DTYPE_BOOL;
    default: return 1;
    }
}

/* Fails when input i's dtype is known and outside class cls. */
static smelt_status check_class(sm_shape_ctx *s, int i, int cls)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->dtype == SMELT_DTYPE_UNDEFINED ||
        dtype_in_class(t->dtype, cls))
        return SMELT_OK;
    return sm_err(s->ctx, SMELT_ERR_TYPE,
                  "%s: input %d has dtype %s, expected %s dtype", s->op->name,
                  i, smelt_dtype_name(t->dtype), accept_name[cls]);
}

/* The common dtype of inputs first..n-1 (absent ones skipped), or
 * UNDEFINED while none is known; fails when two known dtypes differ. */
static smelt_status same_dtype(sm_shape_ctx *s, int first, int n,
                               smelt_dtype *out)
{
    *out = SMELT_DTYPE_UNDEFINED;
    int which = -1;
    for (int i = first; i < n; i++) {
        const sm_type *t = sm_shape_in(s, i);
        if (!t || t->dtype == SMELT_DTYPE_UNDEFINED)
            continue;
        if (which < 0) {
            *out = t->dtype;
            which = i;
        } else if (t->dtype != *out) {
            return sm_err(s->ctx, SMELT_ERR_TYPE,
                          "%s: inputs %d and %d must have the same dtype, "
                          "got %s and %s",
                          s->op->name, which, i, smelt_dtype_name(*out),
                          smelt_dtype_name(t->dtype));
        }
    }
    return SMELT_OK;
}

/* Input 0's type, which every op here requires. */
static smelt_status first_input(sm_shape_ctx *s, const sm_type **t)
{
    *t = sm_shape_in(s, 0);
    if (!*t)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "%s: input 0 is missing",
                      s->op->name);
    return SMELT_OK;
}

/* Fails when input i is present with a known shape of more than one
 * element: Clip's bounds and Dropout's ratio are scalars. */
static smelt_status check_scalar(sm_shape_ctx *s, int i)
{
    const sm_type *t = sm_shape_in(s, i);
    if (!t || t->ndim < 0)
        return SMELT_OK;
    double n = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (t->dims[d].size < 0)
            return SMELT_OK;
        n *= (double)t->dims[d].size;
    }
    if (n == 1)
        return SMELT_OK;
    char buf[128];
    sm_type_str(t, buf, sizeof buf);
    return sm_err(s->ctx, SMELT_ERR_SHAPE,
                  "%s: input %d must be a scalar, got %s", s->op->name, i, buf);
}

/*
 * Output 0 is input 0's type. Used by the elementwise unary ops and by
 * Softmax/LogSoftmax: checks input 0's dtype against the op's class, an
 * `axis` attribute (when the op has one) against the rank, and extra
 * inputs (Clip's min and max) for being scalars of input 0's dtype.
 */
smelt_status sm_shape_unary(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(first_input(s, &x));
    SM_TRY(check_class(s, 0, accept_class(s)));
    smelt_dtype dt;
    SM_TRY(same_dtype(s, 0, s->n_in, &dt));
    for (int i = 1; i < s->n_in; i++)
        SM_TRY(check_scalar(s, i));
    const sm_attr *axis = sm_attrs_find(&s->attrs, "axis");
    if (axis && axis->kind == SM_ATTR_INT && x->ndim >= 0) {
        int ax;
        SM_TRY(sm_shape_axis(s, axis->v.i, x->ndim, &ax));
    }
    s->out[0] = *x;
    return SMELT_OK;
}

/* Cast: input 0's shape with the dtype named by `to` (an ONNX TensorProto
 * code). */
smelt_status sm_shape_cast(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(first_input(s, &x));
    int64_t code = sm_attrs_int(&s->attrs, "to", 0);
    smelt_dtype to = sm_dtype_from_onnx(code);
    if (to == SMELT_DTYPE_UNDEFINED)
        return sm_err(s->ctx, SMELT_ERR_UNSUPPORTED,
                      "%s: unsupported target dtype code %lld in attribute "
                      "'to'",
                      s->op->name, (long long)code);
    s->out[0] = *x;
    s->out[0].dtype = to;
    return SMELT_OK;
}

/* CastLike(input, target_type): input's shape in target_type's dtype. */
smelt_status sm_shape_castlike(sm_shape_ctx *s)
{
    const sm_type *x, *like;
    SM_TRY(sm_shape_need(s, 0, &x));
    SM_TRY(sm_shape_need(s, 1, &like));
    s->out[0] = *x;
    s->out[0].dtype = like->dtype;
    return SMELT_OK;
}

/*
 * Dropout(data, ratio?, training_mode?): output 0 has data's type, the
 * optional mask output its shape in bool. Ratio must be a float scalar in
 * [0, 1) and training_mode a bool scalar.
 */
smelt_status sm_shape_dropout(sm_shape_ctx *s)
{
    const sm_type *x;
    SM_TRY(first_input(s, &x));
    SM_TRY(check_class(s, 1, ACCEPT_FLOAT));
    SM_TRY(check_class(s, 2, ACCEPT_BOOL));
    SM_TRY(check_scalar(s, 1));
    SM_TRY(check_scalar(s, 2));
    const sm_tensor *r = s->n_in > 1 && s->in[1].present ? s->in[1].data : NULL;
    if (r && r->numel == 1) {
        double ratio = sm_load_f64(r->dtype, r->data, 0);
        if (!(ratio >= 0 && ratio < 1))
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: ratio %g is outside [0, 1)", s->op->name, ratio);
    }
    s->out[0] = *x;
    if (s->n_out > 1) {
        s->out[1] = *x;
        s->out[1].dtype = SMELT_DTYPE_BOOL;
    }
    return SMELT_OK;
}

/* Numpy broadcasting of inputs first..n_in-1 into out, folding one input
 * at a time so that any number of inputs works (Sum, Min, Max). */
static smelt_status broadcast_inputs(sm_shape_ctx *s, int first, sm_type *out)
{
    const sm_type *t0 = sm_shape_in(s, first);
    if (!t0)
        return sm_err(s->ctx, SMELT_ERR_INVALID_ARG, "%s: input %d is missing",
                      s->op->name, first);
    smelt_dtype dt = out->dtype;
    *out = *t0;
    for (int i = first + 1; i < s->n_in; i++) {
        const sm_type *t = sm_shape_in(s, i);
        if (!t)
            return sm_err(s->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: input %d is missing", s->op->name, i);
        sm_type acc = *out;
        const sm_type *pair[2] = {&acc, t};
        SM_TRY(sm_shape_bcast(s, 2, pair, out));
    }
    out->dtype = dt;
    return SMELT_OK;
}

/*
 * Arithmetic, Min/Max/Sum and And/Or: inputs share one dtype (Pow's
 * exponent may differ from its base, as in ONNX), the output has it and
 * the broadcast shape of all inputs.
 */
smelt_status sm_shape_broadcast(sm_shape_ctx *s)
{
    int cls = accept_class(s);
    for (int i = 0; i < s->n_in; i++)
        SM_TRY(check_class(s, i, cls));
    smelt_dtype dt;
    if (accept_flags(s) & MIXED_DTYPES) {
        const sm_type *base;
        SM_TRY(first_input(s, &base));
        dt = base->dtype;
    } else {
        SM_TRY(same_dtype(s, 0, s->n_in, &dt));
    }
    s->out[0].dtype = dt;
    return broadcast_inputs(s, 0, &s->out[0]);
}

/* Equal, Less, Greater: inputs of one dtype, bool output of the broadcast
 * shape. */
smelt_status sm_shape_compare(sm_shape_ctx *s)
{
    int cls = accept_class(s);
    for (int i = 0; i < s->n_in; i++)
        SM_TRY(check_class(s, i, cls));
    smelt_dtype dt;
    SM_TRY(same_dtype(s, 0, s->n_in, &dt));
    s->out[0].dtype = SMELT_DTYPE_BOOL;
    return broadcast_inputs(s, 0, &s->out[0]);
}

/* Where(cond, x, y): cond is bool, x and y share the output's dtype; the
 * shape broadcasts all three. */
smelt_status sm_shape_where(sm_shape_ctx *s)
{
    SM_TRY(check_class(s, 0, ACCEPT_BOOL));
    smelt_dtype dt;
    SM_TRY(same_dtype(s, 1, s->n_in, &dt));
    s->out[0].dtype = dt;
    return broadcast_inputs(s, 0, &s->out[0]);
}

static double inputs_bytes(const sm_shape_ctx *s)
{
    double b = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i].present)
            b += sm_type_bytes(s->in[i].type);
    return b;
}

static double outputs_bytes(const sm_shape_ctx *s)
{
    double b = 0;
    for (int i = 0; i < s->n_out; i++)
        b += sm_type_bytes(&s->out[i]);
    return b;
}

/* One operation per output element; reads every input, writes outputs. */
void sm_cost_unary(const sm_shape_ctx *s, sm_cost *c)
{
    c->flops = s->n_out > 0 ? sm_type_numel(&s->out[0]) : 0;
    c->bytes_read = inputs_bytes(s);
    c->bytes_write = outputs_bytes(s);
}

/* An n-input broadcasting op does n-1 operations per output element
 * (one for two inputs; Where counts two, the test and the select). */
void sm_cost_binary(const sm_shape_ctx *s, sm_cost *c)
{
    int n = 0;
    for (int i = 0; i < s->n_in; i++)
        n += s->in[i].present;
    double per = n > 2 ? n - 1 : 1;
    c->flops = s->n_out > 0 ? per * sm_type_numel(&s->out[0]) : 0;
    c->bytes_read = inputs_bytes(s);
    c->bytes_write = outputs_bytes(s);
}

/* Data movement only: the bytes written are read once, no arithmetic.
 * Shared by Identity, Dropout and the data-movement ops. */
void sm_cost_copy(const sm_shape_ctx *s, sm_cost *c)
{
    c->flops = 0;
    c->bytes_write = outputs_bytes(s);
    c->bytes_read = c->bytes_write;
}
