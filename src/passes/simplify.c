/*
 * simplify.c - the `simplify` pass: local algebraic rewrites.
 *
 * - x+0, 0+x, x-0, x*1, 1*x, x/1, x**1 become x when the constant is all
 *   identity elements and broadcasting it cannot change x's shape (every
 *   dimension of the constant is 1 or equals x's). 0*x is kept (NaN, inf).
 * - Identity goes; Dropout goes in inference (training_mode absent or a
 *   constant false) and with a constant ratio 0, its mask (when used)
 *   becoming a constant all-true tensor.
 * - Transpose of Transpose composes into one (or none when the composite
 *   is the identity); a Transpose with the identity permutation goes.
 * - Reshape, Flatten, Squeeze, Unsqueeze and Expand go when their output
 *   has the input's shape; Reshape of a reshape-like op reads the
 *   original input (its target shape must not copy dims with 0).
 * - Cast to the input's dtype goes; Cast(Cast(x)) reads x when the inner
 *   cast is lossless (every value of x's dtype survives it exactly).
 * - Shape arithmetic: Gather or Slice of Shape(x) folds when the dims it
 *   picks are known, even if other dims of x are not.
 *
 * A value that is a graph output keeps its name (sm_rw_forward); a rewrite
 * that cannot keep it is skipped.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "ir/rewrite.h"
#include "passes/pass.h"
#include "passes/pattern.h"
#include "ir/eval.h"
#include "ir/shape_util.h"

#define MAX_OPERANDS 64

enum { R_IDENTITY, R_ALGEBRA, R_TRANSPOSE, R_RESHAPE, R_CAST, R_SHAPE, R_N };
static const char *const rule_name[R_N] = {
    "identity/dropout", "x+0 x*1 ...", "transpose",
    "reshape",          "cast",        "shape arithmetic"};

typedef struct simp {
    sm_pass_ctx *pc;
    sm_rw *rw;
    int count[R_N];
} simp;

/* Replaces n's output 0 by x and removes n; 0 when the output's name
 * could not be kept. */
static smelt_status forward(simp *s, sm_node *n, sm_value *x, int rule,
                            int *done)
{
    for (int i = 1; i < n->n_out; i++)
        if (sm_rw_uses(s->rw, n->out[i]))
            return SMELT_OK;
    if (!sm_rw_can_forward(s->rw, n->out[0], x))
        return SMELT_OK;
    SM_TRY(sm_rw_forward(s->rw, n->out[0], x));
    sm_rw_remove_if_dead(s->rw, n);
    s->count[rule]++;
    *done = 1;
    return SMELT_OK;
}

/* Whether c is a constant whose every element equals `want`. */
static int const_all(const sm_value *c, double want)
{
    if (!c || !c->data || c->data->numel < 1)
        return 0;
    const sm_tensor *t = c->data;
    for (int64_t i = 0; i < t->numel; i++)
        if (sm_load_f64(t->dtype, t->data, i) != want)
            return 0;
    return 1;
}

/* Whether broadcasting x with constant c gives x's shape and dtype. */
static int bcast_keeps(const sm_value *x, const sm_value *c)
{
    const sm_type *tx = &x->type;
    const sm_tensor *t = c->data;
    if (tx->ndim < 0 || t->ndim > tx->ndim || tx->dtype != t->dtype)
        return 0;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->dims[t->ndim - 1 - i];
        if (d != 1 && d != tx->dims[tx->ndim - 1 - i].size)
            return 0;
    }
    return 1;
}

static smelt_status algebra(simp *s, sm_node *n, int *done)
{
    static const struct {
        sm_op op;
        double unit;
        int either; /* the constant may be on the left too */
    } rules[] = {{SM_OP_Add, 0, 1},
                 {SM_OP_Sub, 0, 0},
                 {SM_OP_Mul, 1, 1},
                 {SM_OP_Div, 1, 0},
                 {SM_OP_Pow, 1, 0}};
    for (size_t r = 0; r < sizeof rules / sizeof *rules; r++) {
        if (rules[r].op != n->op)
            continue;
        for (int side = 1; side >= (rules[r].either ? 0 : 1); side--) {
            sm_value *c = n->in[side], *x = n->in[1 - side];
            if (const_all(c, rules[r].unit) && bcast_keeps(x, c))
                return forward(s, n, x, R_ALGEBRA, done);
        }
    }
    return SMELT_OK;
}

/*
 * Dropout passes x through unchanged in inference (training_mode absent
 * or a constant false) and with a constant ratio of 0 (no element is
 * dropped, the scale is 1): both cases become x. Its mask is then all
 * true; a used mask becomes a constant of that (its shape known, no
 * bigger than the folding budget), or the Dropout stays. A training step
 * whose model was exported with dropout 0 keeps Dropouts of this kind in
 * its forward pass and their gradients (Dropouts too) in its backward.
 */
static smelt_status dropout(simp *s, sm_node *n, int *done)
{
    sm_value *ratio = n->n_in > 1 ? n->in[1] : NULL;
    sm_value *tm = n->n_in > 2 ? n->in[2] : NULL;
    if (tm && !const_all(tm, 0) && !(ratio && const_all(ratio, 0)))
        return SMELT_OK;
    sm_value *m = n->n_out > 1 ? n->out[1] : NULL;
    if (!m || !sm_rw_uses(s->rw, m))
        return forward(s, n, n->in[0], R_IDENTITY, done);
    const sm_type *t = &m->type;
    if (!sm_type_known(t) || t->dtype != SMELT_DTYPE_BOOL ||
        !sm_rw_can_forward(s->rw, n->out[0], n->in[0]) ||
        sm_type_numel(t) > (double)s->pc->opt->fold_max_bytes)
        return SMELT_OK;
    int64_t dims[SMELT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        dims[i] = t->dims[i].size;
    sm_tensor *ones = NULL;
    SM_TRY(sm_tensor_new(s->pc->ctx, SMELT_DTYPE_BOOL, t->ndim, dims, &ones));
    memset(ones->data, 1, ones->nbytes);
    sm_value *c = sm_rw_add_const(s->rw, n->owner, m->name, ones);
    if (!c)
        return sm_err_nomem(s->pc->ctx);
    SM_TRY(sm_rw_forward(s->rw, m, c));
    return forward(s, n, n->in[0], R_IDENTITY, done);
}

/* The permutation of Transpose n (rank r), reversed axes by default. */
static int get_perm(const sm_node *n, int r, int64_t *perm)
{
    sm_attrs a = sm_node_attrs(n);
    const int64_t *p;
    int k = sm_attrs_ints(&a, "perm", &p);
    if (k < 0) {
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        return r >= 0;
    }
    if (k != r)
        return 0;
    if (k) /* an empty perm may come with no array */
        memcpy(perm, p, sizeof(int64_t) * (size_t)k);
    return 1;
}

static smelt_status transpose(simp *s, sm_node *n, int *done)
{
    sm_value *x = n->in[0];
    int r = x->type.ndim;
    int64_t p2[SMELT_MAX_DIMS], p1[SMELT_MAX_DIMS], c[SMELT_MAX_DIMS];
    if (r < 0 || r > SMELT_MAX_DIMS || !get_perm(n, r, p2))
        return SMELT_OK;
    sm_node *t1 = x->def;
    int identity = 1;
    if (t1 && t1->op == SM_OP_Transpose && t1->in[0]->type.ndim == r &&
        get_perm(t1, r, p1)) {
        for (int i = 0; i < r; i++)
            identity &= (c[i] = p1[p2[i]]) == i;
        if (identity)
            return forward(s, n, t1->in[0], R_TRANSPOSE, done);
        if (!sm_node_set_ints(n, "perm", c, r))
            return sm_err_nomem(s->pc->ctx);
        SM_TRY(sm_rw_set_input(s->rw, n, 0, t1->in[0]));
        sm_rw_remove_if_dead(s->rw, t1);
        s->count[R_TRANSPOSE]++;
        return SMELT_OK;
    }
    for (int i = 0; i < r; i++)
        identity &= p2[i] == i;
    return identity ? forward(s, n, x, R_TRANSPOSE, done) : SMELT_OK;
}

static int reshape_like(sm_op op)
{
    return op == SM_OP_Reshape || op == SM_OP_Flatten || op == SM_OP_Squeeze ||
           op == SM_OP_Unsqueeze;
}

static smelt_status reshape(simp *s, sm_node *n, int *done)
{
    sm_value *x = n->in[0];
    if (x->type.dtype == n->out[0]->type.dtype &&
        sm_pat_same_shape(&x->type, &n->out[0]->type))
        return forward(s, n, x, R_RESHAPE, done);
    if (n->op != SM_OP_Reshape || !x->def || !reshape_like(x->def->op))
        return SMELT_OK;
    const sm_value *shape = n->in[1];
    sm_attrs a = sm_node_attrs(n);
    if (!shape->data)
        return SMELT_OK;
    if (!sm_attrs_int(&a, "allowzero", 0))
        for (int64_t i = 0; i < shape->data->numel; i++)
            if (sm_load_i64(shape->data->dtype, shape->data->data, i) == 0)
                return SMELT_OK;
    sm_node *inner = x->def;
    SM_TRY(sm_rw_set_input(s->rw, n, 0, inner->in[0]));
    sm_rw_remove_if_dead(s->rw, inner);
    s->count[R_RESHAPE]++;
    return SMELT_OK;
}

/* Whether every value of dtype `from` converts to `to` exactly. */
static int lossless(smelt_dtype from, smelt_dtype to)
{
    enum {
        F32 = 1 << SMELT_DTYPE_F32,
        F64 = 1 << SMELT_DTYPE_F64,
        F16 = 1 << SMELT_DTYPE_F16,
        BF16 = 1 << SMELT_DTYPE_BF16,
        I8 = 1 << SMELT_DTYPE_I8,
        U8 = 1 << SMELT_DTYPE_U8,
        I16 = 1 << SMELT_DTYPE_I16,
        I32 = 1 << SMELT_DTYPE_I32,
        I64 = 1 << SMELT_DTYPE_I64,
        BOOL = 1 << SMELT_DTYPE_BOOL
    };
    static const int wider[SMELT_DTYPE_COUNT] = {
        [SMELT_DTYPE_F32] = F64,
        [SMELT_DTYPE_F16] = F32 | F64,
        [SMELT_DTYPE_BF16] = F32 | F64,
        [SMELT_DTYPE_I8] = I16 | I32 | I64 | F16 | BF16 | F32 | F64,
        [SMELT_DTYPE_U8] = I16 | I32 | I64 | F16 | BF16 | F32 | F64,
        [SMELT_DTYPE_I16] = I32 | I64 | F32 | F64,
        [SMELT_DTYPE_I32] = I64 | F64,
        [SMELT_DTYPE_BOOL] = F32 | F64 | F16 | BF16 | I8 | U8 | I16 | I32 | I64,
    };
    return from == to || (from > 0 && from < SMELT_DTYPE_COUNT &&
                          (wider[from] & (1 << to)) != 0);
}

static smelt_status cast(simp *s, sm_node *n, int *done)
{
    sm_value *x = n->in[0];
    sm_attrs a = sm_node_attrs(n);
    smelt_dtype to = sm_dtype_from_onnx(sm_attrs_int(&a, "to", 0));
    if (to == SMELT_DTYPE_UNDEFINED)
        return SMELT_OK;
    sm_node *inner = x->def;
    if (inner && inner->op == SM_OP_Cast &&
        inner->in[0]->type.dtype != SMELT_DTYPE_UNDEFINED &&
        lossless(inner->in[0]->type.dtype, x->type.dtype)) {
        SM_TRY(sm_rw_set_input(s->rw, n, 0, inner->in[0]));
        sm_rw_remove_if_dead(s->rw, inner);
        s->count[R_CAST]++;
        x = n->in[0];
    }
    return x->type.dtype == to ? forward(s, n, x, R_CAST, done) : SMELT_OK;
}

/* Gather/Slice of Shape(x): evaluated on x's dims with -1 for the unknown
 * ones; folds when no -1 comes out. */
static smelt_status shape_arith(simp *s, sm_node *n, int *done)
{
    sm_node *sh = n->in[0]->def;
    if (!sh || sh->op != SM_OP_Shape || n->n_in > MAX_OPERANDS)
        return SMELT_OK;
    for (int i = 1; i < n->n_in; i++)
        if (n->in[i] && !n->in[i]->data)
            return SMELT_OK;
    sm_tensor *dims, *args[MAX_OPERANDS], *out = NULL;
    SM_TRY(sm_pass_shape_dims(s->pc->ctx, sh, &dims));
    if (!dims)
        return SMELT_OK;
    args[0] = dims;
    for (int i = 1; i < n->n_in; i++)
        args[i] = n->in[i] ? n->in[i]->data : NULL;
    smelt_ctx_t scratch = {0};
    smelt_status st = sm_eval_node(&scratch, n, args, &out, 0);
    sm_tensor_free(dims);
    if (st == SMELT_ERR_NOMEM)
        return sm_err_nomem(s->pc->ctx);
    int known = st == SMELT_OK;
    for (int64_t i = 0; known && i < out->numel; i++)
        known = ((int64_t *)out->data)[i] >= 0;
    if (!known) {
        sm_tensor_free(out);
        return SMELT_OK;
    }
    SM_TRY(sm_rw_node_to_consts(s->rw, n, &out));
    sm_rw_remove_if_dead(s->rw, sh);
    s->count[R_SHAPE]++;
    *done = 1;
    return SMELT_OK;
}

/* Applies the rule for n's op; *done when n is gone. */
static smelt_status simplify_node(simp *s, sm_node *n, int *done)
{
    switch (n->op) {
    case SM_OP_Identity: return forward(s, n, n->in[0], R_IDENTITY, done);
    case SM_OP_Dropout: return dropout(s, n, done);
    case SM_OP_Add:
    case SM_OP_Sub:
    case SM_OP_Mul:
    case SM_OP_Div:
    case SM_OP_Pow: return algebra(s, n, done);
    case SM_OP_Transpose: return transpose(s, n, done);
    case SM_OP_Reshape:
    case SM_OP_Flatten:
    case SM_OP_Squeeze:
    case SM_OP_Unsqueeze:
    case SM_OP_Expand: return reshape(s, n, done);
    case SM_OP_Cast: return cast(s, n, done);
    case SM_OP_Gather:
    case SM_OP_Slice: return shape_arith(s, n, done);
    default: return SMELT_OK;
    }
}

static smelt_status simplify_block(simp *s, sm_block *b)
{
    sm_node *n = sm_rw_first(s->rw, b);
    while (n) {
        sm_node *next = sm_rw_next(s->rw, n);
        for (int i = 0; i < n->n_blocks; i++)
            SM_TRY(simplify_block(s, n->blocks[i]));
        int done = 0;
        SM_TRY(simplify_node(s, n, &done));
        /* a rewrite that kept n (a chain shortened) may enable another */
        if (!done)
            SM_TRY(simplify_node(s, n, &done));
        n = next;
    }
    return SMELT_OK;
}

smelt_status sm_pass_simplify(sm_pass_ctx *pc, sm_graph *g)
{
    simp s = {pc, NULL, {0}};
    SM_TRY(sm_rw_new(pc->ctx, g, &s.rw));
    smelt_status st = simplify_block(&s, g->top);
    pc->stats->removed = sm_rw_removed(s.rw);
    sm_rw_free(s.rw);
    for (int r = 0; r < R_N; r++)
        if (s.count[r]) {
            pc->stats->changed = 1;
            sm_pass_log(pc, "%s: %d rewrite(s)", rule_name[r], s.count[r]);
        }
    return st;
}
