/*
 * save_std.c - Smelt's own ops in the files the exporter writes.
 *
 * Smelt's own ops are the fused ops the passes make (FusedConv, FusedGemm,
 * FusedQMatMul, FusedElementwise, Attention, AttentionGrad), Conv's kernel
 * gradient ConvGradWeight, FakeQuantize (quantization-aware training) and
 * Gelu below opset 20, where ONNX has no Gelu. By default they are written as
 * they are, in the domain "ai.smelt" (save.c declares it); with the standard
 * option they become standard ONNX ops:
 *
 *   FusedConv(X, W, B?, R?)   Conv(X, W, B) [+ R] -> activation
 *   FusedGemm(A, B, C?, R?)   Gemm(A, B) with transA / transB (alpha
 *                             applied), else MatMul(A, B) [* alpha];
 *                             [+ C * beta] [+ R] -> activation
 *   FusedQMatMul(A, B, ...)   [DynamicQuantizeLinear(A)] -> MatMulInteger
 *                             -> Cast -> Mul(scale product) [+ bias]
 *                             -> activation
 *   FusedElementwise          its body's nodes, inlined
 *   Attention(Q, K, V, m?)    Softmax(Q K^T * scale [+ m], axis 3) V, K
 *                             and V repeated per query head when grouped,
 *                             bool masks and causal through Where(., -inf)
 *   FakeQuantize(x, s, z)     DequantizeLinear(QuantizeLinear(x, s, z),
 *                             s, z), the pair it stands for (QAT); for a
 *                             non-f32 x, which QuantizeLinear does not
 *                             take, (Clip(Round(x / s) + z) - z) * s
 *   Gelu                      x/2 (1 + erf(x / sqrt 2)), or the tanh form
 *   Celu, not f32             Max(x, 0) + Min(0, alpha (Exp(x / alpha) - 1))
 *                             (ONNX's Celu takes f32 only; Smelt's any float)
 *
 * Upsample, deprecated since opset 10, is written in either case as the
 * Resize it stands for: asymmetric coordinates, nearest rounding down,
 * its scales (input or attribute) as Resize's scales.
 *
 * Activations: Relu, Clip (relu6, clip), Sigmoid, x * Sigmoid(x)
 * (silu), the Gelu forms above, LeakyRelu, Tanh. Smelt's `recognize` and
 * fusion passes turn these back into the fused ops when the file is
 * loaded and optimized again. Constants the forms need are scalar
 * initializers of the value's dtype. Intermediate values get fresh names
 * and no value_info.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "frontends/onnx/save.h"
#include "ir/shape_util.h"

typedef sm_onnx_saver saver;

/* The most nodes and initializers an activation or a decomposed op adds
 * (gelu_tanh: 9 nodes; Celu: 5 constants). */
enum { ACT_NODES = 9, ACT_INITS = 5 };

int sm_onnx_is_smelt_op(sm_op op, int64_t opset)
{
    return op == SM_OP_FusedConv || op == SM_OP_FusedGemm ||
           op == SM_OP_FusedQMatMul || op == SM_OP_FusedElementwise ||
           op == SM_OP_Attention || op == SM_OP_AttentionGrad ||
           op == SM_OP_FakeQuantize || op == SM_OP_ConvGradWeight ||
           (op == SM_OP_Gelu && opset < 20);
}

/* Whether n is decomposed when written with S's options. */
static int decomposed(const saver *S, const sm_node *n)
{
    return S->standard &&
           (sm_onnx_is_smelt_op(n->op, S->opset) ||
            (n->op == SM_OP_Celu && n->out[0]->type.dtype != SMELT_DTYPE_F32));
}

void sm_onnx_std_bound(const saver *S, const sm_node *n, size_t *nodes,
                       size_t *inits)
{
    sm_onnx_xform x;
    sm_onnx_export_plan(n, S->opset, &x);
    *nodes = 1;
    *inits = (size_t)x.n_to_input + (n->op == SM_OP_Upsample);
    if (!decomposed(S, n))
        return;
    switch (n->op) {
    case SM_OP_FusedConv:
        *nodes = 3 + ACT_NODES; /* Conv, Add, activation, Identity */
        *inits = ACT_INITS;
        break;
    case SM_OP_FusedGemm:
        *nodes = 5 + ACT_NODES;
        *inits = 2 + ACT_INITS;
        break;
    case SM_OP_FusedQMatMul: /* DynamicQuantizeLinear, MatMulInteger, Cast,
                                2 Mul, Add, activation, Identity */
        *nodes = 7 + ACT_NODES;
        *inits = ACT_INITS;
        break;
    case SM_OP_Attention: /* Transpose, 2 x 3 to repeat heads, MatMul,
                             Mul, mask, causal, Softmax, MatMul, Identity */
        *nodes = 16;
        *inits = 12;
        break;
    case SM_OP_FakeQuantize: /* QuantizeLinear, DequantizeLinear; not f32:
                                2 Cast, 2 Reshape, Div, Round, Add, Clip,
                                Sub, Mul, Identity */
        *nodes = 11;
        *inits = 4;
        break;
    case SM_OP_ConvGradWeight: /* Reshape, Transpose, Reshape, Transpose,
                                  Conv, Slice, Transpose, Identity */
        *nodes = 8;
        *inits = 5;
        break;
    case SM_OP_Celu:
    case SM_OP_Gelu:
        *nodes = 1 + ACT_NODES;
        *inits = ACT_INITS;
        break;
    default: { /* FusedElementwise: its body, plus an Identity per return */
        const sm_block *b = n->n_blocks ? n->blocks[0] : NULL;
        *nodes = b ? (size_t)b->n_ret : 0;
        *inits = b ? (size_t)b->n_consts : 0;
        for (int i = 0; b && i < b->n_nodes; i++) {
            size_t k, c;
            sm_onnx_std_bound(S, b->nodes[i], &k, &c);
            *nodes += k;
            *inits += c;
        }
        break;
    }
    }
}

/* The state of one decomposition: the graph it writes into, the node it
 * replaces (names derive from its first output), the dtype of the
 * constants it makes. */
typedef struct chain {
    saver *S;
    Onnx__GraphProto *gp;
    const sm_node *n;
    smelt_dtype dt;
} chain;

/* A fresh value name for an intermediate of c. */
static const char *temp(chain *c)
{
    return sm_onnx_save_fresh(c->S, c->n->out[0]->name, "smelt");
}

/* Appends op(in[0..n_in)) -> a fresh value to c's graph; the new node
 * (NULL when out of memory). Absent inputs are "". */
static Onnx__NodeProto *emit(chain *c, const char *op, const char *const *in,
                             int n_in, int max_attrs)
{
    saver *S = c->S;
    Onnx__NodeProto *np = sm_onnx_save_alloc(S, 1, sizeof *np);
    char **ins = sm_onnx_save_alloc(S, (size_t)n_in + 1, sizeof *ins);
    char **outs = sm_onnx_save_alloc(S, 1, sizeof *outs);
    Onnx__AttributeProto **at =
        sm_onnx_save_alloc(S, (size_t)max_attrs + 1, sizeof *at);
    const char *out = temp(c);
    if (!np || !ins || !outs || !at || !out)
        return NULL;
    onnx__node_proto__init(np);
    np->op_type = (char *)op;
    for (int i = 0; i < n_in; i++)
        ins[i] = (char *)(in[i] ? in[i] : "");
    np->n_input = (size_t)n_in;
    np->input = ins;
    outs[0] = (char *)out;
    np->n_output = 1;
    np->output = outs;
    np->attribute = at;
    c->gp->node[c->gp->n_node++] = np;
    return np;
}

static const char *out_of(const Onnx__NodeProto *np)
{
    return np ? np->output[0] : NULL;
}

/* op(a) or op(a, b) -> a fresh value; its name, NULL when out of memory. */
static const char *unary(chain *c, const char *op, const char *a)
{
    return a ? out_of(emit(c, op, &a, 1, 0)) : NULL;
}

static const char *binary(chain *c, const char *op, const char *a,
                          const char *b)
{
    const char *in[2] = {a, b};
    return a && b ? out_of(emit(c, op, in, 2, 0)) : NULL;
}

/* A scalar initializer of c's dtype holding v; its name. */
static const char *scalar(chain *c, double v)
{
    saver *S = c->S;
    sm_tensor *t = sm_onnx_save_alloc(S, 1, sizeof *t);
    size_t es = smelt_dtype_size(c->dt);
    void *d = sm_onnx_save_alloc(S, 1, es ? es : 1);
    const char *name = sm_onnx_save_fresh(S, c->n->out[0]->name, "smelt_k");
    if (!t || !d || !name)
        return NULL;
    memset(t, 0, sizeof *t);
    t->dtype = c->dt;
    t->ndim = 0;
    t->numel = 1;
    t->nbytes = es;
    t->data = d;
    sm_store_f64(c->dt, d, 0, v);
    Onnx__TensorProto *tp = sm_onnx_save_tensor(S, t, name);
    if (!tp)
        return NULL;
    c->gp->initializer[c->gp->n_initializer++] = tp;
    return name;
}

/* Adds a float attribute to np. */
static int attr_float(chain *c, Onnx__NodeProto *np, const char *name, double v)
{
    sm_attr a = {name, SM_ATTR_FLOAT, 0, {0}};
    a.v.f = v;
    Onnx__AttributeProto *p = np ? sm_onnx_save_attr(c->S, &a) : NULL;
    if (p)
        np->attribute[np->n_attribute++] = p;
    return p != NULL;
}

/* x/2 (1 + erf(x / sqrt 2)) or, with tanh_form, x/2 (1 + tanh(sqrt(2/pi)
 * (x + 0.044715 x^3))); the name of the result. */
static const char *gelu(chain *c, const char *x, int tanh_form)
{
    const char *inner;
    if (tanh_form) {
        const char *x3 = binary(c, "Mul", binary(c, "Mul", x, x), x);
        const char *u =
            binary(c, "Add", x, binary(c, "Mul", x3, scalar(c, 0.044715)));
        inner = unary(c, "Tanh",
                      binary(c, "Mul", u,
                             scalar(c, 0.7978845608028654 /* sqrt(2/pi) */)));
    } else {
        inner =
            unary(c, "Erf", binary(c, "Mul", x, scalar(c, 0.7071067811865476)));
    }
    const char *half_x = binary(c, "Mul", x, scalar(c, 0.5));
    return binary(c, "Mul", half_x, binary(c, "Add", inner, scalar(c, 1.0)));
}

/* The epilogue's activation as the fused node's attributes give it (the
 * names of docs/FUSION.md; the shape functions have checked them). */
typedef struct act {
    const char *name;
    const sm_attr *alpha, *beta; /* NULL when absent */
} act;

static act read_act(const sm_node *n)
{
    sm_attrs at = sm_node_attrs(n);
    act a = {sm_attrs_string(&at, "activation", "none"),
             sm_node_attr(n, "activation_alpha"),
             sm_node_attr(n, "activation_beta")};
    return a;
}

/* A Clip of x between lo and hi, each NULL for no bound. */
static const char *clip(chain *c, const char *x, const double *lo,
                        const double *hi)
{
    const char *in[3] = {x, lo ? scalar(c, *lo) : NULL,
                         hi ? scalar(c, *hi) : NULL};
    if ((lo && !in[1]) || (hi && !in[2]))
        return NULL;
    return out_of(emit(c, "Clip", in, hi ? 3 : lo ? 2 : 1, 0));
}

/* The activation a applied to x; x itself for none. */
static const char *activation(chain *c, const act *a, const char *x)
{
    const char *k = a->name;
    if (!strcmp(k, "none"))
        return x;
    if (!strcmp(k, "relu"))
        return unary(c, "Relu", x);
    if (!strcmp(k, "relu6")) {
        const double lo = 0, hi = 6;
        return clip(c, x, &lo, &hi);
    }
    if (!strcmp(k, "clip")) {
        double lo = a->alpha ? a->alpha->v.f : 0,
               hi = a->beta ? a->beta->v.f : 0;
        return clip(c, x, a->alpha ? &lo : NULL, a->beta ? &hi : NULL);
    }
    if (!strcmp(k, "sigmoid"))
        return unary(c, "Sigmoid", x);
    if (!strcmp(k, "silu"))
        return binary(c, "Mul", x, unary(c, "Sigmoid", x));
    if (!strcmp(k, "gelu") || !strcmp(k, "gelu_tanh"))
        return gelu(c, x, k[4] == '_');
    if (!strcmp(k, "leakyrelu")) {
        Onnx__NodeProto *np = emit(c, "LeakyRelu", &x, 1, 1);
        double slope = a->alpha ? a->alpha->v.f : 0.01;
        return attr_float(c, np, "alpha", slope) ? out_of(np) : NULL;
    }
    if (!strcmp(k, "tanh"))
        return unary(c, "Tanh", x);
    if (!c->S->err)
        c->S->err =
            sm_err(c->S->ctx, SMELT_ERR_INVALID_ARG,
                   "onnx: %s: unknown activation '%s'", c->n->out[0]->name, k);
    return NULL;
}

/* Copies n's attributes onto np, except the epilogue's and those in
 * skip (NULL-terminated). */
static int copy_attrs(chain *c, Onnx__NodeProto *np, const char *const *skip)
{
    const sm_node *n = c->n;
    for (int i = 0; np && i < n->n_attr; i++) {
        const char *nm = n->attrs[i].name;
        int drop = strncmp(nm, "activation", 10) == 0;
        for (int k = 0; skip[k]; k++)
            drop |= strcmp(nm, skip[k]) == 0;
        if (drop)
            continue;
        Onnx__AttributeProto *p = sm_onnx_save_attr(c->S, &n->attrs[i]);
        if (!p)
            return 0;
        np->attribute[np->n_attribute++] = p;
    }
    return np != NULL;
}

/* The name of n's input i, NULL when absent. */
static const char *input(const chain *c, int i)
{
    return i < c->n->n_in && c->n->in[i] ? sm_onnx_save_vname(c->S, c->n->in[i])
                                         : NULL;
}

static const char *fused_conv(chain *c, const act *epi)
{
    static const char *const skip[] = {"layout", NULL};
    const char *in[3] = {input(c, 0), input(c, 1), input(c, 2)};
    Onnx__NodeProto *np = emit(c, "Conv", in, in[2] ? 3 : 2, c->n->n_attr + 1);
    if (!copy_attrs(c, np, skip))
        return NULL;
    const char *y = out_of(np);
    if (input(c, 3))
        y = binary(c, "Add", y, input(c, 3));
    return activation(c, epi, y);
}

/*
 * FusedQMatMul(A, B, B_scale, B_zp?, bias?, A_scale?, A_zp?, residual?):
 * the chain the fuse_qmatmul pass fused, in the same f32 operations: an
 * f32 A through DynamicQuantizeLinear, MatMulInteger, Cast to f32, Mul by
 * A_scale * B_scale (B_scale alone without an A scale), Add of the bias,
 * Add of the residual, the activation.
 */
static const char *fused_qmatmul(chain *c, const act *epi)
{
    const char *a = input(c, 0), *as = input(c, 5), *az = input(c, 6);
    if (c->n->in[0]->type.dtype == SMELT_DTYPE_F32) {
        Onnx__NodeProto *dq = emit(c, "DynamicQuantizeLinear", &a, 1, 0);
        char **outs = sm_onnx_save_alloc(c->S, 3, sizeof *outs);
        if (!dq || !outs)
            return NULL;
        outs[0] = dq->output[0];
        outs[1] = (char *)temp(c);
        outs[2] = (char *)temp(c);
        if (!outs[1] || !outs[2])
            return NULL;
        dq->output = outs;
        dq->n_output = 3;
        a = outs[0], as = outs[1], az = outs[2];
    }
    const char *in[4] = {a, input(c, 1), az, input(c, 3)};
    const char *acc = out_of(emit(c, "MatMulInteger", in,
                                  in[3]   ? 4
                                  : in[2] ? 3
                                          : 2,
                                  0));
    Onnx__NodeProto *cast = acc ? emit(c, "Cast", &acc, 1, 1) : NULL;
    sm_attr to = {"to", SM_ATTR_INT, 0, {0}};
    to.v.i = 1; /* FLOAT */
    Onnx__AttributeProto *ap = cast ? sm_onnx_save_attr(c->S, &to) : NULL;
    if (!ap)
        return NULL;
    cast->attribute[cast->n_attribute++] = ap;
    const char *s = as ? binary(c, "Mul", as, input(c, 2)) : input(c, 2);
    const char *y = binary(c, "Mul", out_of(cast), s);
    if (input(c, 4))
        y = binary(c, "Add", y, input(c, 4));
    if (input(c, 7))
        y = binary(c, "Add", y, input(c, 7));
    return activation(c, epi, y);
}

static const char *fused_gemm(chain *c, const act *epi)
{
    static const char *const skip[] = {"beta", NULL};
    sm_attrs at = sm_node_attrs(c->n);
    double alpha = sm_attrs_float(&at, "alpha", 1);
    double beta = sm_attrs_float(&at, "beta", 1);
    const char *y;
    if (sm_attrs_int(&at, "transA", 0) || sm_attrs_int(&at, "transB", 0)) {
        const char *in[2] = {input(c, 0), input(c, 1)};
        Onnx__NodeProto *np = emit(c, "Gemm", in, 2, c->n->n_attr + 1);
        if (!copy_attrs(c, np, skip))
            return NULL;
        y = out_of(np);
    } else {
        y = binary(c, "MatMul", input(c, 0), input(c, 1));
        if (alpha != 1)
            y = binary(c, "Mul", y, scalar(c, alpha));
    }
    if (input(c, 2)) {
        const char *bias = input(c, 2);
        if (beta != 1)
            bias = binary(c, "Mul", bias, scalar(c, beta));
        y = binary(c, "Add", y, bias);
    }
    if (input(c, 3))
        y = binary(c, "Add", y, input(c, 3));
    return activation(c, epi, y);
}

/* An initializer of dtype dt and shape dims[0..ndim) holding a copy of
 * data; its name (NULL when out of memory). */
static const char *const_tensor(chain *c, smelt_dtype dt, int ndim,
                                const int64_t *dims, const void *data)
{
    saver *S = c->S;
    sm_tensor *t = sm_onnx_save_alloc(S, 1, sizeof *t);
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++)
        numel *= dims[i];
    size_t bytes = (size_t)numel * smelt_dtype_size(dt);
    void *d = sm_onnx_save_alloc(S, 1, bytes ? bytes : 1);
    const char *name = sm_onnx_save_fresh(S, c->n->out[0]->name, "smelt_k");
    if (!t || !d || !name)
        return NULL;
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    memcpy(t->dims, dims, (size_t)ndim * sizeof *dims);
    t->numel = numel;
    t->nbytes = bytes;
    t->data = d;
    memcpy(d, data, bytes);
    Onnx__TensorProto *tp = sm_onnx_save_tensor(S, t, name);
    if (!tp)
        return NULL;
    c->gp->initializer[c->gp->n_initializer++] = tp;
    return name;
}

/* A 1-D i64 initializer (a shape); its name. */
static const char *shape_const(chain *c, int n, const int64_t *v)
{
    const int64_t dims[1] = {n};
    return const_tensor(c, SMELT_DTYPE_I64, 1, dims, v);
}

/* op(x) with one ints attribute name = v[0..n); its result. The
 * attribute proto points at its list, so the list is copied into the
 * saver's arena. */
static const char *with_ints(chain *c, const char *op, const char *x,
                             const char *name, int n, const int64_t *v)
{
    Onnx__NodeProto *np = x ? emit(c, op, &x, 1, 1) : NULL;
    int64_t *list = sm_onnx_save_alloc(c->S, (size_t)n, sizeof *list);
    if (!list)
        return NULL;
    memcpy(list, v, (size_t)n * sizeof *list);
    sm_attr a = {name, SM_ATTR_INTS, n, {0}};
    a.v.ints = list;
    Onnx__AttributeProto *p = np ? sm_onnx_save_attr(c->S, &a) : NULL;
    if (!p)
        return NULL;
    np->attribute[np->n_attribute++] = p;
    return out_of(np);
}

/* K or V [B, Hkv, T, d] repeated per query head to [B, Hq, T, d], kv head
 * h' serving query heads h' G .. h' G + G - 1 (G = Hq / Hkv): Reshape
 * [0, Hkv, 1, -1, d], Expand [1, 1, G, 1, 1], Reshape [0, Hq, -1, d]. */
static const char *repeat_heads(chain *c, const char *x, int64_t hq,
                                int64_t hkv, int64_t d)
{
    const int64_t s5[5] = {0, hkv, 1, -1, d}, e5[5] = {1, 1, hq / hkv, 1, 1};
    const int64_t s4[4] = {0, hq, -1, d};
    const char *y = binary(c, "Reshape", x, shape_const(c, 5, s5));
    y = binary(c, "Expand", y, shape_const(c, 5, e5));
    return binary(c, "Reshape", y, shape_const(c, 4, s4));
}

/* Where(keep, x, -inf): x where keep holds, -inf elsewhere. */
static const char *hide(chain *c, const char *keep, const char *x)
{
    const char *in[3] = {keep, x, scalar(c, -INFINITY)};
    return keep && x && in[2] ? out_of(emit(c, "Where", in, 3, 0)) : NULL;
}

/* Adds an ints attribute name = v[0..n) to np (the list copied into the
 * saver's arena). */
static int attr_ints(chain *c, Onnx__NodeProto *np, const char *name, int n,
                     const int64_t *v)
{
    int64_t *list = sm_onnx_save_alloc(c->S, (size_t)n, sizeof *list);
    if (!np || !list)
        return 0;
    memcpy(list, v, (size_t)n * sizeof *list);
    sm_attr a = {name, SM_ATTR_INTS, n, {0}};
    a.v.ints = list;
    Onnx__AttributeProto *p = sm_onnx_save_attr(c->S, &a);
    if (p)
        np->attribute[np->n_attribute++] = p;
    return p != NULL;
}

/*
 * ConvGradWeight(X, dY) as standard ops: a Conv of X by dY with the batch
 * as the contracted channel, X [N, G*cg, S...] as [cg, G*N, S...] (the
 * groups, batch inside, become the Conv's groups) and dY [N, M, O...] as
 * the kernel [M, N, O...]; strides and dilations trade places, the pads
 * stay; the first k positions of the result [cg, M, ...] are sliced and
 * transposed to [M, cg, k...]. Needs the ranks, N and C known.
 */
static const char *conv_grad_weight(chain *c)
{
    const sm_node *n = c->n;
    const sm_type *x = &n->in[0]->type;
    sm_attrs at = sm_node_attrs(n);
    int r = x->ndim, nsp = r - 2;
    int64_t nb = sm_type_size(x, 0), ch = sm_type_size(x, 1);
    int64_t g = sm_attrs_int(&at, "group", 1);
    const int64_t *ks = NULL, *sv = NULL, *dv = NULL, *pv = NULL;
    int known = r >= 3;
    for (int i = 2; g > 1 && i < r; i++)
        known &= sm_type_size(x, i) >= 0; /* the groups' reshapes */
    if (!known || r > SMELT_MAX_DIMS - 1 || nb < 0 || ch < 0 || g < 1 ||
        sm_attrs_ints(&at, "kernel_shape", &ks) != nsp) {
        if (!c->S->err)
            c->S->err = sm_err(c->S->ctx, SMELT_ERR_UNSUPPORTED,
                               "onnx: %s (ConvGradWeight): cannot write it as "
                               "standard ops while X's rank, batch, "
                               "channels or (grouped) spatial sizes are "
                               "unknown (bind the dims first)",
                               n->out[0]->name);
        return NULL;
    }
    int64_t s[SMELT_MAX_DIMS], d[SMELT_MAX_DIMS], p[2 * SMELT_MAX_DIMS];
    int64_t perm[SMELT_MAX_DIMS], dims[SMELT_MAX_DIMS], st[SMELT_MAX_DIMS],
        ax[SMELT_MAX_DIMS];
    int hs = sm_attrs_ints(&at, "strides", &sv) == nsp;
    int hd = sm_attrs_ints(&at, "dilations", &dv) == nsp;
    int hp = sm_attrs_ints(&at, "pads", &pv) == 2 * nsp;
    for (int i = 0; i < nsp; i++) {
        s[i] = hs ? sv[i] : 1;
        d[i] = hd ? dv[i] : 1;
        p[i] = hp ? pv[i] : 0;
        p[i + nsp] = hp ? pv[i + nsp] : 0;
        st[i] = 0;
        ax[i] = i + 2;
    }
    for (int i = 0; i < r; i++)
        perm[i] = i < 2 ? 1 - i : i;
    const char *xs;
    if (g == 1) {
        xs = with_ints(c, "Transpose", input(c, 0), "perm", r, perm);
    } else {
        int64_t p5[SMELT_MAX_DIMS];
        dims[0] = nb;
        dims[1] = g;
        dims[2] = ch / g;
        for (int i = 0; i < nsp; i++)
            dims[i + 3] = x->dims[i + 2].size;
        xs = binary(c, "Reshape", input(c, 0), shape_const(c, r + 1, dims));
        p5[0] = 2;
        p5[1] = 1;
        p5[2] = 0;
        for (int i = 3; i < r + 1; i++)
            p5[i] = i;
        xs = with_ints(c, "Transpose", xs, "perm", r + 1, p5);
        dims[0] = ch / g;
        dims[1] = g * nb;
        for (int i = 0; i < nsp; i++)
            dims[i + 2] = x->dims[i + 2].size;
        xs = binary(c, "Reshape", xs, shape_const(c, r, dims));
    }
    const char *wk = with_ints(c, "Transpose", input(c, 1), "perm", r, perm);
    const char *in[2] = {xs, wk};
    Onnx__NodeProto *cv = xs && wk ? emit(c, "Conv", in, 2, 4) : NULL;
    sm_attr ga = {"group", SM_ATTR_INT, 0, {0}};
    ga.v.i = g;
    Onnx__AttributeProto *gp = cv ? sm_onnx_save_attr(c->S, &ga) : NULL;
    if (!gp || !attr_ints(c, cv, "strides", nsp, d) ||
        !attr_ints(c, cv, "dilations", nsp, s) ||
        !attr_ints(c, cv, "pads", 2 * nsp, p))
        return NULL;
    cv->attribute[cv->n_attribute++] = gp;
    const char *sl[4] = {out_of(cv), shape_const(c, nsp, st),
                         shape_const(c, nsp, ks), shape_const(c, nsp, ax)};
    if (!sl[1] || !sl[2] || !sl[3])
        return NULL;
    const char *y = out_of(emit(c, "Slice", sl, 4, 0));
    return with_ints(c, "Transpose", y, "perm", r, perm);
}

/* Fails the save: Attention with a size the standard form needs unknown. */
static const char *attention_unknown(chain *c, const char *what)
{
    if (!c->S->err)
        c->S->err = sm_err(c->S->ctx, SMELT_ERR_UNSUPPORTED,
                           "onnx: %s (Attention): cannot write it as standard "
                           "ops while %s is unknown (bind the dims first)",
                           c->n->out[0]->name, what);
    return NULL;
}

/*
 * Attention(Q, K, V, mask?) as the graph it stands for (docs/ATTENTION.md):
 * Softmax(MatMul(Q, K^T) * scale [+ mask | masked], axis 3) @ V, with K and
 * V repeated per query head when heads are grouped and causal as a bool
 * initializer [Tq, Tk]. Grouped heads need Hq, Hkv, D and Dv known; causal
 * needs Tq and Tk.
 */
static const char *attention(chain *c)
{
    const sm_node *n = c->n;
    const sm_type *q = &n->in[0]->type, *k = &n->in[1]->type;
    const sm_type *v = &n->in[2]->type;
    sm_attrs at = sm_node_attrs(n);
    int64_t hq = sm_type_size(q, 1), hkv = sm_type_size(k, 1);
    const char *kk = input(c, 1), *vv = input(c, 2);
    if (hq != hkv || hq < 0) {
        int64_t d = sm_type_size(k, 3), dv = sm_type_size(v, 3);
        if (hq < 0 || hkv <= 0 || d < 0 || dv < 0)
            return attention_unknown(c, "a head count or head dim");
        if (hq != hkv) {
            kk = repeat_heads(c, kk, hq, hkv, d);
            vv = repeat_heads(c, vv, hq, hkv, dv);
        }
    }
    static const int64_t perm[4] = {0, 1, 3, 2};
    const char *s = binary(c, "MatMul", input(c, 0),
                           with_ints(c, "Transpose", kk, "perm", 4, perm));
    s = binary(c, "Mul", s, scalar(c, sm_attrs_float(&at, "scale", 1)));
    const sm_value *mask = n->n_in > 3 ? n->in[3] : NULL;
    if (mask && mask->type.dtype == SMELT_DTYPE_BOOL)
        s = hide(c, input(c, 3), s);
    else if (mask)
        s = binary(c, "Add", s, input(c, 3));
    if (sm_attrs_int(&at, "causal", 0)) {
        int64_t dims[2] = {sm_type_size(q, 2), sm_type_size(k, 2)};
        if (dims[0] < 0 || dims[1] < 0)
            return attention_unknown(c, "a sequence length");
        if (dims[0] > (1 << 20) || dims[1] > (1 << 20) ||
            dims[0] * dims[1] > ((int64_t)1 << 30)) {
            if (!c->S->err)
                c->S->err = sm_err(c->S->ctx, SMELT_ERR_LIMIT,
                                   "onnx: %s (Attention): a causal mask of "
                                   "%lld x %lld is too large to write",
                                   c->n->out[0]->name, (long long)dims[0],
                                   (long long)dims[1]);
            return NULL;
        }
        uint8_t *keep =
            sm_onnx_save_alloc(c->S, 1, (size_t)(dims[0] * dims[1]) + 1);
        if (!keep)
            return NULL;
        for (int64_t i = 0; i < dims[0]; i++)
            for (int64_t j = 0; j < dims[1]; j++)
                keep[i * dims[1] + j] = j <= i + dims[1] - dims[0];
        s = hide(c, const_tensor(c, SMELT_DTYPE_BOOL, 2, dims, keep), s);
    }
    Onnx__NodeProto *sm = s ? emit(c, "Softmax", &s, 1, 1) : NULL;
    sm_attr ax = {"axis", SM_ATTR_INT, 0, {0}};
    ax.v.i = 3;
    Onnx__AttributeProto *p = sm ? sm_onnx_save_attr(c->S, &ax) : NULL;
    if (!p)
        return NULL;
    sm->attribute[sm->n_attribute++] = p;
    return binary(c, "MatMul", out_of(sm), vv);
}

/* Cast of x to c's dtype; its result. */
static const char *cast_to_dt(chain *c, const char *x)
{
    Onnx__NodeProto *np = x ? emit(c, "Cast", &x, 1, 1) : NULL;
    sm_attr a = {"to", SM_ATTR_INT, 0, {0}};
    a.v.i = sm_dtype_to_onnx(c->dt);
    Onnx__AttributeProto *p = np ? sm_onnx_save_attr(c->S, &a) : NULL;
    if (!p)
        return NULL;
    np->attribute[np->n_attribute++] = p;
    return out_of(np);
}

/* FakeQuantize of a non-f32 x, which QuantizeLinear does not take (opset
 * 17): its arithmetic, (Clip(Round(x / s) + z, qmin, qmax) - z) * s in
 * x's dtype, s and z cast to it and shaped [n, 1, ..., 1] along the axis
 * when per axis. */
static const char *fake_quantize_arith(chain *c)
{
    const sm_node *n = c->n;
    const sm_value *sv = n->in[1], *zv = n->n_in > 2 ? n->in[2] : NULL;
    const char *s = cast_to_dt(c, input(c, 1));
    const char *z = zv ? cast_to_dt(c, input(c, 2)) : scalar(c, 0);
    int r = n->in[0]->type.ndim;
    if (sv->type.ndim == 1 && sv->type.dims[0].size != 1) {
        sm_attrs at = sm_node_attrs(n);
        int64_t a = sm_attrs_int(&at, "axis", 1);
        a = a < 0 ? a + r : a;
        int64_t shape[SMELT_MAX_DIMS];
        int k = 0;
        shape[k++] = -1;
        for (int64_t i = a + 1; i < r && k < SMELT_MAX_DIMS; i++)
            shape[k++] = 1;
        const char *sh = shape_const(c, k, shape);
        s = binary(c, "Reshape", s, sh);
        z = zv ? binary(c, "Reshape", z, sh) : z;
    }
    int i8 = zv && zv->type.dtype == SMELT_DTYPE_I8;
    const char *q = binary(
        c, "Add", unary(c, "Round", binary(c, "Div", input(c, 0), s)), z);
    const char *cl[3] = {q, scalar(c, i8 ? -128 : 0),
                         scalar(c, i8 ? 127 : 255)};
    const char *qc =
        cl[0] && cl[1] && cl[2] ? out_of(emit(c, "Clip", cl, 3, 0)) : NULL;
    return binary(c, "Mul", binary(c, "Sub", qc, z), s);
}

/* FakeQuantize(x, s, z) {axis}: the pair it stands for,
 * DequantizeLinear(QuantizeLinear(x, s, z), s, z), both with its axis
 * (fake_quantize_arith for a non-f32 x). */
static const char *fake_quantize(chain *c)
{
    static const char *const none[] = {NULL};
    if (c->n->in[0]->type.dtype != SMELT_DTYPE_F32)
        return fake_quantize_arith(c);
    const char *in[3] = {input(c, 0), input(c, 1), input(c, 2)};
    int k = in[2] ? 3 : 2;
    Onnx__NodeProto *q = emit(c, "QuantizeLinear", in, k, c->n->n_attr);
    if (!copy_attrs(c, q, none))
        return NULL;
    in[0] = out_of(q);
    Onnx__NodeProto *d = emit(c, "DequantizeLinear", in, k, c->n->n_attr);
    if (!copy_attrs(c, d, none))
        return NULL;
    return out_of(d);
}

/* FusedElementwise n: its body's nodes written in gp, the body's
 * parameters read as n's inputs and its returns written as n's outputs. */
static int inline_body(saver *S, const sm_node *n, Onnx__GraphProto *gp,
                       int depth)
{
    const sm_block *b = n->blocks[0];
    if (b->n_params != n->n_in || b->n_ret != n->n_out) {
        if (!S->err)
            S->err = sm_err(S->ctx, SMELT_ERR_VERIFY,
                            "onnx: %s: the body's parameters and returns do "
                            "not match the node's inputs and outputs",
                            n->out[0]->name);
        return 0;
    }
    for (int i = 0; i < b->n_params; i++) {
        if (!n->in[i]) {
            if (!S->err)
                S->err =
                    sm_err(S->ctx, SMELT_ERR_VERIFY,
                           "onnx: %s: input %d is absent", n->out[0]->name, i);
            return 0;
        }
        S->alias[b->params[i]->id] = sm_onnx_save_vname(S, n->in[i]);
    }
    for (int i = 0; i < b->n_consts; i++) {
        Onnx__TensorProto *tp =
            sm_onnx_save_tensor(S, b->consts[i]->data, b->consts[i]->name);
        if (!tp)
            return 0;
        gp->initializer[gp->n_initializer++] = tp;
    }
    /* a return a body node defines is written under the output's name;
     * one that is a parameter, a constant or returned twice is copied */
    unsigned char *copy = sm_onnx_save_alloc(S, (size_t)b->n_ret + 1, 1);
    if (!copy)
        return 0;
    for (int k = 0; k < b->n_ret; k++) {
        const sm_value *r = b->ret[k];
        copy[k] = !r->def || S->alias[r->id] != NULL;
        if (!copy[k])
            S->alias[r->id] = sm_onnx_save_vname(S, n->out[k]);
    }
    for (int i = 0; i < b->n_nodes; i++)
        if (!sm_onnx_std_write(S, b->nodes[i], gp, depth))
            return 0;
    chain c = {S, gp, n, SMELT_DTYPE_F32};
    for (int k = 0; k < b->n_ret; k++) {
        if (!copy[k])
            continue;
        Onnx__NodeProto *np =
            emit(&c, "Identity",
                 (const char *const[]){sm_onnx_save_vname(S, b->ret[k])}, 1, 0);
        if (!np)
            return 0;
        np->output[0] = (char *)sm_onnx_save_vname(S, n->out[k]);
    }
    return 1;
}

/* Adds a string attribute to np. */
static int attr_string(chain *c, Onnx__NodeProto *np, const char *name,
                       const char *v)
{
    sm_attr a = {name, SM_ATTR_STRING, 0, {0}};
    a.v.s = v;
    Onnx__AttributeProto *p = np ? sm_onnx_save_attr(c->S, &a) : NULL;
    if (p)
        np->attribute[np->n_attribute++] = p;
    return p != NULL;
}

/* Upsample(X, scales) as Resize(X, "", scales) with Upsample's rules. */
static int upsample(saver *S, const sm_node *n, Onnx__GraphProto *gp)
{
    chain c = {S, gp, n, SMELT_DTYPE_F32};
    sm_attrs at = sm_node_attrs(n);
    const char *in[3] = {input(&c, 0), "", input(&c, 1)};
    const double *f = NULL;
    int nf = sm_attrs_floats(&at, "scales", &f);
    if (!in[2] && nf > 0) {
        sm_tensor *t = sm_onnx_save_alloc(S, 1, sizeof *t);
        float *d = sm_onnx_save_alloc(S, (size_t)nf, sizeof *d);
        const char *name = sm_onnx_save_fresh(S, n->out[0]->name, "scales");
        if (!t || !d || !name)
            return 0;
        memset(t, 0, sizeof *t);
        for (int i = 0; i < nf; i++)
            d[i] = (float)f[i];
        t->dtype = SMELT_DTYPE_F32;
        t->ndim = 1;
        t->dims[0] = t->numel = nf;
        t->nbytes = (size_t)nf * sizeof *d;
        t->data = d;
        Onnx__TensorProto *tp = sm_onnx_save_tensor(S, t, name);
        if (!tp)
            return 0;
        gp->initializer[gp->n_initializer++] = tp;
        in[2] = name;
    }
    Onnx__NodeProto *np = emit(&c, "Resize", in, 3, 3);
    if (!np ||
        !attr_string(&c, np, "mode", sm_attrs_string(&at, "mode", "nearest")) ||
        !attr_string(&c, np, "coordinate_transformation_mode", "asymmetric") ||
        !attr_string(&c, np, "nearest_mode", "floor"))
        return 0;
    np->name = (char *)n->name;
    np->output[0] = (char *)sm_onnx_save_vname(S, n->out[0]);
    return 1;
}

int sm_onnx_std_write(saver *S, const sm_node *n, Onnx__GraphProto *gp,
                      int depth)
{
    if (n->op == SM_OP_Upsample)
        return upsample(S, n, gp);
    if (!decomposed(S, n))
        return sm_onnx_save_node(S, n, gp, depth) != NULL;
    if (n->op == SM_OP_FusedElementwise)
        return n->n_blocks == 1 ? inline_body(S, n, gp, depth)
                                : sm_onnx_save_node(S, n, gp, depth) != NULL;
    if (n->op == SM_OP_AttentionGrad) {
        /* a joint graph's backward node: the standard form of a model is
         * its forward, which the gradient is built from again */
        if (!S->err)
            S->err = sm_err(S->ctx, SMELT_ERR_UNSUPPORTED,
                            "onnx: %s (AttentionGrad): Attention's gradient "
                            "has no standard ONNX form; write it in domain "
                            "ai.smelt (without --onnx-standard) or export "
                            "the forward graph",
                            n->out[0]->name);
        return 0;
    }
    chain c = {S, gp, n, n->out[0]->type.dtype};
    if (c.dt == SMELT_DTYPE_UNDEFINED && n->in[0])
        c.dt = n->in[0]->type.dtype;
    if (!sm_dtype_is_float(c.dt)) {
        if (!S->err)
            S->err = sm_err(S->ctx, SMELT_ERR_TYPE,
                            "onnx: %s (%s): cannot write it as standard ops "
                            "without a float dtype (run inference first)",
                            n->out[0]->name, sm_op_info_get(n->op)->name);
        return 0;
    }
    sm_attrs at = sm_node_attrs(n);
    act epi = read_act(n);
    const char *y = NULL;
    size_t first = gp->n_node;
    if (n->op == SM_OP_Gelu) {
        const char *ap = sm_attrs_string(&at, "approximate", "none");
        y = gelu(&c, input(&c, 0), strcmp(ap, "tanh") == 0);
    } else if (n->op == SM_OP_Celu) {
        const char *x = input(&c, 0);
        double alpha = sm_attrs_float(&at, "alpha", 1);
        const char *e =
            unary(&c, "Exp", binary(&c, "Div", x, scalar(&c, alpha)));
        const char *neg =
            binary(&c, "Mul", binary(&c, "Sub", e, scalar(&c, 1.0)),
                   scalar(&c, alpha));
        y = binary(&c, "Add", binary(&c, "Max", x, scalar(&c, 0.0)),
                   binary(&c, "Min", neg, scalar(&c, 0.0)));
    } else if (n->op == SM_OP_Attention) {
        y = attention(&c);
    } else if (n->op == SM_OP_FakeQuantize) {
        y = fake_quantize(&c);
    } else if (n->op == SM_OP_ConvGradWeight) {
        y = conv_grad_weight(&c);
    } else {
        y = n->op == SM_OP_FusedConv      ? fused_conv(&c, &epi)
            : n->op == SM_OP_FusedQMatMul ? fused_qmatmul(&c, &epi)
                                          : fused_gemm(&c, &epi);
    }
    if (!y)
        return 0;
    /* the last node written defines the node's output; with none written
     * (an activation-free chain cannot be empty, but be safe), copy */
    if (gp->n_node == first || strcmp(gp->node[gp->n_node - 1]->output[0], y))
        if (!unary(&c, "Identity", y))
            return 0;
    gp->node[gp->n_node - 1]->output[0] =
        (char *)sm_onnx_save_vname(S, n->out[0]);
    return 1;
}
