/*
 * lower_expr.c - expressions: names, literals, operators and Python
 * constant folding; making IR values of script values (constants, casts)
 * and the nodes themselves, whose types are inferred on the spot so that
 * a shape or dtype error points at the source.
 *
 * Operators on two Python constants fold with Python's semantics (int
 * arithmetic is 64-bit and overflow is an error). Otherwise a scalar
 * operand takes the dtype of the tensor operand (an int tensor meeting a
 * float scalar is cast to f32 first, a bool tensor in arithmetic with an
 * int to i64); scalar-only arithmetic runs in i64 or f32 (true division
 * always in f32). Comparisons lower to Less, Greater and Equal, with Not
 * for <=, >= and !=.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/script/lower.h"

/* ---- making values and nodes ------------------------------------------- */

int sm_lw_is_temp(const sm_value *v)
{
    return v->name[0] >= '0' && v->name[0] <= '9';
}

sm_node *sm_lw_node(sm_lower *L, sm_op op, int n_in, sm_value *const *in,
                    int n_out)
{
    const char **names = sm_lw_alloc(L, sizeof(char *) * (size_t)(n_out + 1));
    for (int i = 0; names && i < n_out; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%ld", L->tmp++);
        if (!(names[i] = sm_arena_strdup(&L->arena, buf)))
            names = NULL;
    }
    if (!names)
        return NULL;
    return sm_node_new(L->blocks[L->depth - 1], op, NULL, n_in, in, n_out,
                       names);
}

/* The hint shown under a failed shape inference, by status. */
static const char *infer_hint(smelt_status st)
{
    switch (st) {
    case SMELT_ERR_TYPE:
        return "operands must agree in dtype; convert one with .float(), "
               ".long() or .bool()";
    case SMELT_ERR_SHAPE:
        return "check the operands' shapes (annotate parameters as "
               "Tensor[f32, n, 4] to check them at compile time)";
    default: return "check the op's arguments and attributes";
    }
}

smelt_status sm_lw_finish(sm_lower *L, sm_node *n, int line, int col)
{
    if (L->g->n_nodes_all > SM_SCRIPT_MAX_NODES)
        return sm_lw_error(
            L, line, col, SMELT_ERR_LIMIT, "use smaller constant trip counts",
            "the graph grows beyond %d nodes", SM_SCRIPT_MAX_NODES);
    const sm_op_info *info = sm_op_info_get(n->op);
    sm_operand stack_ops[8];
    sm_type stack_out[4];
    sm_operand *ops = stack_ops;
    sm_type *out = stack_out;
    if (n->n_in > 8 && !(ops = sm_lw_alloc(L, sizeof *ops * (size_t)n->n_in)))
        return sm_lw_nomem(L);
    if (n->n_out > 4 && !(out = sm_lw_alloc(L, sizeof *out * (size_t)n->n_out)))
        return sm_lw_nomem(L);
    for (int i = 0; i < n->n_in; i++) {
        ops[i].present = n->in[i] != NULL;
        ops[i].type = n->in[i] ? &n->in[i]->type : NULL;
        ops[i].data = n->in[i] ? n->in[i]->data : NULL;
    }
    for (int i = 0; i < n->n_out; i++)
        sm_type_unknown(&out[i]);
    smelt_ctx_t scratch;
    memset(&scratch, 0, sizeof scratch);
    sm_shape_ctx s = {info, sm_node_attrs(n), n->n_in, ops, n->n_out, out,
                      n,    &scratch};
    smelt_status st = info->shape(&s);
    if (st == SMELT_ERR_NOMEM)
        return sm_lw_nomem(L);
    if (st)
        return sm_lw_error(L, line, col, st, infer_hint(st), "%s",
                           scratch.msg[0] ? scratch.msg : info->name);
    for (int i = 0; i < n->n_out; i++)
        n->out[i]->type = out[i];
    return SMELT_OK;
}

sm_value *sm_lw_emit(sm_lower *L, sm_op op, int n_in, sm_value *const *in,
                     int line, int col, smelt_status *st)
{
    sm_node *n = sm_lw_node(L, op, n_in, in, 1);
    if (!n) {
        *st = sm_lw_nomem(L);
        return NULL;
    }
    if ((*st = sm_lw_finish(L, n, line, col)))
        return NULL;
    return n->out[0];
}

sm_value *sm_lw_cast(sm_lower *L, sm_value *v, smelt_dtype dt, int line,
                     int col, smelt_status *st)
{
    *st = SMELT_OK;
    if (v->type.dtype == dt)
        return v;
    sm_node *n = sm_lw_node(L, SM_OP_Cast, 1, &v, 1);
    if (!n || !sm_node_set_int(n, "to", sm_dtype_to_onnx(dt))) {
        *st = sm_lw_nomem(L);
        return NULL;
    }
    if ((*st = sm_lw_finish(L, n, line, col)))
        return NULL;
    return n->out[0];
}

sm_value *sm_lw_const(sm_lower *L, sm_tensor *t)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", L->tmp++);
    L->const_bytes += t->nbytes;
    return sm_block_add_const(L->blocks[L->depth - 1], buf, t);
}

/* Python float to int64 without undefined behaviour. */
static int64_t f2i(double f)
{
    if (!(f > -9.2e18 && f < 9.2e18))
        return 0;
    return (int64_t)f;
}

/* Scalar constants are shared by the blocks that can see them, keyed by
 * block, dtype and bits. */
sm_value *sm_lw_scalar(sm_lower *L, smelt_dtype dt, double f, int64_t i)
{
    sm_tensor *t;
    if (sm_tensor_new(NULL, dt, 0, NULL, &t))
        return NULL;
    if (sm_dtype_is_float(dt))
        sm_store_f64(dt, t->data, 0, f);
    else
        sm_store_i64(dt, t->data, 0, i);
    uint64_t bits = 0;
    memcpy(&bits, t->data, t->nbytes < 8 ? t->nbytes : 8);
    char key[80];
    for (int d = L->depth - 1; d >= L->base; d--) {
        int k = snprintf(key, sizeof key, "%p/%d/%llx", (void *)L->blocks[d],
                         (int)dt, (unsigned long long)bits);
        sm_value *hit = sm_strmap_get(&L->consts, key, (size_t)k);
        if (hit) {
            sm_tensor_free(t);
            return hit;
        }
    }
    sm_value *v = sm_lw_const(L, t);
    int k =
        snprintf(key, sizeof key, "%p/%d/%llx", (void *)L->blocks[L->depth - 1],
                 (int)dt, (unsigned long long)bits);
    char *kcopy = sm_arena_strndup(&L->arena, key, (size_t)k);
    if (!v || !kcopy || !sm_strmap_put(&L->consts, kcopy, (size_t)k, v))
        return NULL;
    return v;
}

smelt_dtype sm_lw_natural_dtype(sm_sv_kind k)
{
    switch (k) {
    case SM_SV_INT: return SMELT_DTYPE_I64;
    case SM_SV_FLOAT: return SMELT_DTYPE_F32;
    case SM_SV_BOOL: return SMELT_DTYPE_BOOL;
    default: return SMELT_DTYPE_UNDEFINED;
    }
}

int sm_lw_is_const(const sm_sv *v)
{
    switch (v->kind) {
    case SM_SV_INT:
    case SM_SV_FLOAT:
    case SM_SV_BOOL: return v->v == NULL;
    case SM_SV_STR:
    case SM_SV_NONE: return 1;
    case SM_SV_LIST:
    case SM_SV_TUPLE:
        for (int i = 0; i < v->n; i++)
            if (!sm_lw_is_const(&v->items[i]))
                return 0;
        return 1;
    default: return 0;
    }
}

int sm_lw_truth(const sm_sv *v)
{
    if (!sm_lw_is_const(v) && v->kind != SM_SV_LIST && v->kind != SM_SV_TUPLE)
        return -1;
    switch (v->kind) {
    case SM_SV_INT:
    case SM_SV_BOOL: return v->i != 0;
    case SM_SV_FLOAT: return v->f != 0;
    case SM_SV_STR: return v->s[0] != 0;
    case SM_SV_NONE: return 0;
    default: return v->n > 0;
    }
}

int sm_lw_same(const sm_sv *a, const sm_sv *b)
{
    if (a->kind != b->kind || a->v != b->v)
        return 0;
    if (a->v)
        return 1;
    switch (a->kind) {
    case SM_SV_INT:
    case SM_SV_BOOL: return a->i == b->i;
    case SM_SV_FLOAT: return a->f == b->f || (a->f != a->f && b->f != b->f);
    case SM_SV_STR: return !strcmp(a->s, b->s);
    case SM_SV_NONE: return 1;
    case SM_SV_LIST:
    case SM_SV_TUPLE:
        if (a->n != b->n)
            return 0;
        for (int i = 0; i < a->n; i++)
            if (!sm_lw_same(&a->items[i], &b->items[i]))
                return 0;
        return 1;
    default: return 0;
    }
}

smelt_status sm_lw_value(sm_lower *L, const sm_sv *v, smelt_dtype dt, int line,
                         int col, sm_value **out)
{
    *out = NULL;
    smelt_status st = SMELT_OK;
    if (v->kind == SM_SV_TENSOR) {
        *out = v->v;
        return SMELT_OK;
    }
    if (v->kind != SM_SV_INT && v->kind != SM_SV_FLOAT && v->kind != SM_SV_BOOL)
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "only Tensor, int, float and bool values become "
                           "tensors",
                           "a %s cannot be used as a tensor",
                           sm_lw_kind_name(v->kind));
    if (dt == SMELT_DTYPE_UNDEFINED)
        dt = sm_lw_natural_dtype(v->kind);
    if (v->v) {
        *out = sm_lw_cast(L, v->v, dt, line, col, &st);
        return st;
    }
    double f = v->kind == SM_SV_FLOAT ? v->f : (double)v->i;
    int64_t i = v->kind == SM_SV_FLOAT ? f2i(v->f) : v->i;
    if (!(*out = sm_lw_scalar(L, dt, f, i)))
        return sm_lw_nomem(L);
    return SMELT_OK;
}

smelt_status sm_lw_cond(sm_lower *L, const sm_sv *v, int line, int col,
                        sm_value **out)
{
    int t = sm_lw_truth(v);
    if (t >= 0) {
        sm_sv b = {.kind = SM_SV_BOOL, .i = t};
        return sm_lw_value(L, &b, SMELT_DTYPE_BOOL, line, col, out);
    }
    if (!v->v)
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "use a bool, a number or a one-element tensor",
                           "a %s cannot be a condition",
                           sm_lw_kind_name(v->kind));
    smelt_status st;
    *out = sm_lw_cast(L, v->v, SMELT_DTYPE_BOOL, line, col, &st);
    return st;
}

/* ---- names ------------------------------------------------------------- */

const char *sm_lw_name(sm_lower *L, const char *base)
{
    size_t n = strlen(base);
    intptr_t next = (intptr_t)sm_strmap_get(&L->names, base, n);
    const char *key = base;
    char buf[300];
    if (next) {
        for (;; next++) {
            snprintf(buf, sizeof buf, "%.200s.%ld", base, (long)next);
            if (!sm_strmap_get(&L->names, buf, strlen(buf)))
                break;
        }
        key = buf;
    }
    char *copy = sm_arena_strdup(&L->arena, key);
    char *bcopy = key == base ? copy : sm_arena_strdup(&L->arena, base);
    if (!copy || !bcopy ||
        !sm_strmap_put(&L->names, bcopy, n, (void *)(next ? next + 1 : 1)) ||
        (key != base &&
         !sm_strmap_put(&L->names, copy, strlen(copy), (void *)(intptr_t)1)))
        return NULL;
    return copy;
}

void sm_lw_rename(sm_lower *L, sm_value *v, const char *var)
{
    if (!v || !v->def || !sm_lw_is_temp(v))
        return;
    const char *name = sm_lw_name(L, var);
    const char *copy = name ? sm_arena_strdup(&L->g->arena, name) : NULL;
    if (copy) /* out of memory: the temporary name stays, still valid */
        v->name = copy;
}

/* ---- constant folding -------------------------------------------------- */

static const char *op_symbol(sm_ast_op op)
{
    static const char *const s[] = {"+",  "-",  "*",   "/",   "//", "%", "**",
                                    "@",  "<<", ">>",  "&",   "|",  "^", "-",
                                    "+",  "~",  "not", "and", "or", "<", ">",
                                    "==", "!=", "<=",  ">="};
    return (unsigned)op < sizeof s / sizeof *s ? s[op] : "?";
}

static int is_compare(sm_ast_op op)
{
    return op >= SM_AOP_LT && op <= SM_AOP_GE;
}

static smelt_status type_error(sm_lower *L, sm_ast_op op, const sm_sv *a,
                               const sm_sv *b, int line, int col)
{
    return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                       "operators take Tensors, ints, floats and bools (and "
                       "+ joins two lists)",
                       "unsupported operand types for '%s': %s and %s",
                       op_symbol(op), sm_lw_kind_name(a->kind),
                       sm_lw_kind_name(b->kind));
}

static int compare_result(sm_ast_op op, double x, double y)
{
    switch (op) {
    case SM_AOP_LT: return x < y;
    case SM_AOP_GT: return x > y;
    case SM_AOP_EQ: return x == y;
    case SM_AOP_NE: return x != y;
    case SM_AOP_LE: return x <= y;
    default: return x >= y;
    }
}

static smelt_status fold_float(sm_lower *L, sm_ast_op op, double x, double y,
                               int line, int col, sm_sv *out)
{
    out->kind = SM_SV_FLOAT;
    switch (op) {
    case SM_AOP_ADD: out->f = x + y; break;
    case SM_AOP_SUB: out->f = x - y; break;
    case SM_AOP_MUL: out->f = x * y; break;
    case SM_AOP_DIV:
    case SM_AOP_FLOORDIV:
    case SM_AOP_MOD:
        if (y == 0)
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "division by zero in a constant expression");
        out->f = op == SM_AOP_DIV        ? x / y
                 : op == SM_AOP_FLOORDIV ? floor(x / y)
                                         : x - floor(x / y) * y;
        break;
    case SM_AOP_POW:
        if (x == 0 && y < 0)
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "0 cannot be raised to a negative power");
        if (x < 0 && y != floor(y))
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "a negative number to a fractional power is "
                               "complex");
        out->f = pow(x, y);
        break;
    default: return SMELT_ERR_TYPE;
    }
    return SMELT_OK;
}

static smelt_status overflow(sm_lower *L, int line, int col)
{
    return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG,
                       "Python ints are 64-bit here",
                       "integer overflow in a constant expression");
}

static smelt_status int_pow(sm_lower *L, int64_t x, int64_t y, int line,
                            int col, int64_t *out)
{
    int64_t r = 1;
    while (y > 0) {
        if ((y & 1) && __builtin_mul_overflow(r, x, &r))
            return overflow(L, line, col);
        y >>= 1;
        if (y && __builtin_mul_overflow(x, x, &x))
            return overflow(L, line, col); /* |x| >= 2 and y >= 2 remain */
    }
    *out = r;
    return SMELT_OK;
}

static smelt_status fold_int(sm_lower *L, sm_ast_op op, int64_t x, int64_t y,
                             int line, int col, sm_sv *out)
{
    out->kind = SM_SV_INT;
    int64_t r = 0;
    int ovf = 0;
    switch (op) {
    case SM_AOP_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
    case SM_AOP_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
    case SM_AOP_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
    case SM_AOP_FLOORDIV:
    case SM_AOP_MOD:
        if (y == 0)
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "division by zero in a constant expression");
        if (x == INT64_MIN && y == -1) {
            ovf = op == SM_AOP_FLOORDIV;
            break;
        }
        r = op == SM_AOP_FLOORDIV ? x / y : x % y;
        if (x % y != 0 && ((x < 0) != (y < 0)))
            r = op == SM_AOP_FLOORDIV ? r - 1 : r + y;
        break;
    case SM_AOP_POW:
        if (y < 0)
            return fold_float(L, op, (double)x, (double)y, line, col, out);
        SM_TRY(int_pow(L, x, y, line, col, &r));
        break;
    case SM_AOP_LSHIFT:
    case SM_AOP_RSHIFT:
        if (y < 0)
            return sm_lw_error(L, line, col, SMELT_ERR_INVALID_ARG, NULL,
                               "negative shift count");
        if (op == SM_AOP_RSHIFT)
            r = y >= 64 ? (x < 0 ? -1 : 0) : x >> y;
        else if (y >= 63 ||
                 (x != 0 && (x > (INT64_MAX >> y) || x < (INT64_MIN >> y))))
            ovf = x != 0;
        else
            r = (int64_t)((uint64_t)x << y);
        break;
    case SM_AOP_BITAND: r = x & y; break;
    case SM_AOP_BITOR: r = x | y; break;
    case SM_AOP_BITXOR: r = x ^ y; break;
    default: return SMELT_ERR_TYPE;
    }
    if (ovf)
        return overflow(L, line, col);
    out->i = r;
    return SMELT_OK;
}

/* Both operands are Python constants. */
static smelt_status fold(sm_lower *L, sm_ast_op op, const sm_sv *a,
                         const sm_sv *b, int line, int col, sm_sv *out)
{
    memset(out, 0, sizeof *out);
    int flt = a->kind == SM_SV_FLOAT || b->kind == SM_SV_FLOAT;
    double x = a->kind == SM_SV_FLOAT ? a->f : (double)a->i;
    double y = b->kind == SM_SV_FLOAT ? b->f : (double)b->i;
    if (is_compare(op)) {
        out->kind = SM_SV_BOOL;
        if (flt)
            out->i = compare_result(op, x, y);
        else /* compare the int64 values exactly, through their order */
            out->i =
                compare_result(op, (double)((a->i > b->i) - (a->i < b->i)), 0);
        return SMELT_OK;
    }
    int bitwise = op == SM_AOP_LSHIFT || op == SM_AOP_RSHIFT ||
                  op == SM_AOP_BITAND || op == SM_AOP_BITOR ||
                  op == SM_AOP_BITXOR;
    if (op == SM_AOP_MATMUL || (bitwise && flt))
        return type_error(L, op, a, b, line, col);
    if (flt || op == SM_AOP_DIV)
        return fold_float(L, op, x, y, line, col, out);
    SM_TRY(fold_int(L, op, a->i, b->i, line, col, out));
    if (a->kind == SM_SV_BOOL && b->kind == SM_SV_BOOL &&
        (op == SM_AOP_BITAND || op == SM_AOP_BITOR || op == SM_AOP_BITXOR))
        out->kind = SM_SV_BOOL;
    return SMELT_OK;
}

/* + of two lists or tuples, * of a list by an int (a count below 1
 * gives an empty list, as in Python). */
static smelt_status seq_op(sm_lower *L, sm_ast_op op, const sm_sv *a,
                           const sm_sv *b, int line, int col, sm_sv *out)
{
    int concat = 0, reps = 1;
    const sm_sv *seq = a, *other = b;
    if (op == SM_AOP_ADD && a->kind == b->kind &&
        (a->kind == SM_SV_LIST || a->kind == SM_SV_TUPLE)) {
        concat = 1;
    } else if (op == SM_AOP_MUL) {
        if (b->kind == SM_SV_LIST || b->kind == SM_SV_TUPLE) {
            seq = b;
            other = a;
        }
        if ((seq->kind != SM_SV_LIST && seq->kind != SM_SV_TUPLE) ||
            other->kind != SM_SV_INT || other->v)
            return type_error(L, op, a, b, line, col);
        reps = other->i < 0 ? 0 : other->i > 4096 ? -1 : (int)other->i;
        if (reps < 0 || (int64_t)seq->n * reps > 65536)
            return sm_lw_error(L, line, col, SMELT_ERR_LIMIT, NULL,
                               "list grows too long");
    } else {
        return type_error(L, op, a, b, line, col);
    }
    int n = concat ? a->n + b->n : seq->n * reps;
    sm_sv *items = sm_lw_alloc(L, sizeof *items * (size_t)(n + 1));
    if (!items)
        return sm_lw_nomem(L);
    /* an empty sequence may have no items array: copy only what is there */
    if (concat) {
        if (a->n)
            memcpy(items, a->items, sizeof *items * (size_t)a->n);
        if (b->n)
            memcpy(items + a->n, b->items, sizeof *items * (size_t)b->n);
    } else if (seq->n) {
        for (int r = 0; r < reps; r++)
            memcpy(items + r * seq->n, seq->items,
                   sizeof *items * (size_t)seq->n);
    }
    *out = (sm_sv){.kind = seq->kind, .n = n, .items = items};
    return SMELT_OK;
}

/* ---- operators on run-time values --------------------------------------- */

static int numeric(const sm_sv *v)
{
    return v->kind == SM_SV_TENSOR || v->kind == SM_SV_INT ||
           v->kind == SM_SV_FLOAT || v->kind == SM_SV_BOOL;
}

/* The dtype a scalar operand takes next to tensor dtype t; *cast_to tells
 * whether the tensor itself must change first. */
static smelt_dtype scalar_dtype(smelt_dtype t, sm_sv_kind k, int arith,
                                smelt_dtype *cast_to)
{
    *cast_to = SMELT_DTYPE_UNDEFINED;
    if (t == SMELT_DTYPE_UNDEFINED)
        return k == SM_SV_BOOL ? SMELT_DTYPE_BOOL : SMELT_DTYPE_F32;
    if (sm_dtype_is_float(t))
        return t;
    if (k == SM_SV_FLOAT)
        *cast_to = SMELT_DTYPE_F32;
    else if (t == SMELT_DTYPE_BOOL && k == SM_SV_INT && arith)
        *cast_to = SMELT_DTYPE_I64;
    return *cast_to ? *cast_to : t;
}

static sm_value *emit2(sm_lower *L, sm_op op, sm_value *a, sm_value *b,
                       int line, int col, smelt_status *st)
{
    sm_value *in[2] = {a, b};
    return sm_lw_emit(L, op, 2, in, line, col, st);
}

/* a // b and a % b from Div and Floor; integers go through f64 (exact
 * below 2^53) so that the rounding is Python's floor. */
static sm_value *floor_ops(sm_lower *L, sm_ast_op op, sm_value *a, sm_value *b,
                           smelt_dtype dt, int line, int col, smelt_status *st)
{
    int is_int = !sm_dtype_is_float(dt);
    sm_value *x = a, *y = b, *q, *r;
    if (is_int) {
        if (!(x = sm_lw_cast(L, a, SMELT_DTYPE_F64, line, col, st)) ||
            !(y = sm_lw_cast(L, b, SMELT_DTYPE_F64, line, col, st)))
            return NULL;
    }
    if (!(q = emit2(L, SM_OP_Div, x, y, line, col, st)) ||
        !(q = sm_lw_emit(L, SM_OP_Floor, 1, &q, line, col, st)))
        return NULL;
    r = q;
    if (op == SM_AOP_MOD && (!(r = emit2(L, SM_OP_Mul, q, y, line, col, st)) ||
                             !(r = emit2(L, SM_OP_Sub, x, r, line, col, st))))
        return NULL;
    return is_int ? sm_lw_cast(L, r, dt, line, col, st) : r;
}

static sm_value *emit_binary(sm_lower *L, sm_ast_op op, sm_value *a,
                             sm_value *b, smelt_dtype dt, int line, int col,
                             smelt_status *st)
{
    static const sm_op ops[] = {SM_OP_Add, SM_OP_Sub, SM_OP_Mul, SM_OP_Div};
    sm_value *r;
    switch (op) {
    case SM_AOP_ADD:
    case SM_AOP_SUB:
    case SM_AOP_MUL:
    case SM_AOP_DIV: return emit2(L, ops[op - SM_AOP_ADD], a, b, line, col, st);
    case SM_AOP_POW: return emit2(L, SM_OP_Pow, a, b, line, col, st);
    case SM_AOP_MATMUL: return emit2(L, SM_OP_MatMul, a, b, line, col, st);
    case SM_AOP_BITAND: return emit2(L, SM_OP_And, a, b, line, col, st);
    case SM_AOP_BITOR: return emit2(L, SM_OP_Or, a, b, line, col, st);
    case SM_AOP_FLOORDIV:
    case SM_AOP_MOD: return floor_ops(L, op, a, b, dt, line, col, st);
    case SM_AOP_LT: return emit2(L, SM_OP_Less, a, b, line, col, st);
    case SM_AOP_GT: return emit2(L, SM_OP_Greater, a, b, line, col, st);
    case SM_AOP_EQ: return emit2(L, SM_OP_Equal, a, b, line, col, st);
    case SM_AOP_GE: r = emit2(L, SM_OP_Less, a, b, line, col, st); break;
    case SM_AOP_LE: r = emit2(L, SM_OP_Greater, a, b, line, col, st); break;
    case SM_AOP_NE: r = emit2(L, SM_OP_Equal, a, b, line, col, st); break;
    default: return NULL;
    }
    return r ? sm_lw_emit(L, SM_OP_Not, 1, &r, line, col, st) : NULL;
}

smelt_status sm_lw_binop(sm_lower *L, sm_ast_op op, const sm_sv *a,
                         const sm_sv *b, int line, int col, sm_sv *out)
{
    memset(out, 0, sizeof *out);
    if (!numeric(a) || !numeric(b)) {
        if (is_compare(op) && (op == SM_AOP_EQ || op == SM_AOP_NE) &&
            sm_lw_is_const(a) && sm_lw_is_const(b)) {
            int same = sm_lw_same(a, b);
            *out = (sm_sv){.kind = SM_SV_BOOL,
                           .i = op == SM_AOP_EQ ? same : !same};
            return SMELT_OK;
        }
        return seq_op(L, op, a, b, line, col, out);
    }
    if (sm_lw_is_const(a) && sm_lw_is_const(b))
        return fold(L, op, a, b, line, col, out);
    int any_tensor = a->kind == SM_SV_TENSOR || b->kind == SM_SV_TENSOR;
    if (op == SM_AOP_MATMUL &&
        !(a->kind == SM_SV_TENSOR && b->kind == SM_SV_TENSOR))
        return sm_lw_error(L, line, col, SMELT_ERR_TYPE,
                           "use * to multiply by a scalar",
                           "'@' needs two tensors, got %s and %s",
                           sm_lw_kind_name(a->kind), sm_lw_kind_name(b->kind));
    if (op == SM_AOP_LSHIFT || op == SM_AOP_RSHIFT || op == SM_AOP_BITXOR)
        return sm_lw_error(L, line, col, SMELT_ERR_UNSUPPORTED,
                           "shifts and ^ work only on constant ints",
                           "operator '%s' is not supported on run-time values",
                           op_symbol(op));
    int logic = op == SM_AOP_BITAND || op == SM_AOP_BITOR;
    smelt_dtype dt, cast_to = SMELT_DTYPE_UNDEFINED;
    sm_sv_kind kind = SM_SV_TENSOR;
    const sm_sv *t = a->kind == SM_SV_TENSOR ? a : b;
    const sm_sv *s = a->kind == SM_SV_TENSOR ? b : a;
    if (logic) {
        dt = SMELT_DTYPE_BOOL;
        kind = any_tensor ? SM_SV_TENSOR : SM_SV_BOOL;
    } else if (any_tensor) {
        dt = s->kind == SM_SV_TENSOR ? SMELT_DTYPE_UNDEFINED
                                     : scalar_dtype(t->v->type.dtype, s->kind,
                                                    !is_compare(op), &cast_to);
    } else {
        int flt = a->kind == SM_SV_FLOAT || b->kind == SM_SV_FLOAT ||
                  op == SM_AOP_DIV;
        dt = flt ? SMELT_DTYPE_F32 : SMELT_DTYPE_I64;
        kind = flt ? SM_SV_FLOAT : SM_SV_INT;
    }
    if (is_compare(op) && !any_tensor)
        kind = SM_SV_BOOL;
    sm_value *x, *y;
    smelt_status st;
    if (logic) {
        SM_TRY(sm_lw_cond(L, a, line, col, &x));
        SM_TRY(sm_lw_cond(L, b, line, col, &y));
    } else {
        SM_TRY(sm_lw_value(L, a, dt, line, col, &x));
        SM_TRY(sm_lw_value(L, b, dt, line, col, &y));
    }
    if (cast_to) { /* the tensor operand changes dtype */
        sm_value **tv = a->kind == SM_SV_TENSOR ? &x : &y;
        if (!(*tv = sm_lw_cast(L, *tv, cast_to, line, col, &st)))
            return st;
    }
    if (dt == SMELT_DTYPE_UNDEFINED)
        dt = x->type.dtype;
    sm_value *r = emit_binary(L, op, x, y, dt, line, col, &st);
    if (!r)
        return st;
    out->kind = kind;
    out->v = r;
    return SMELT_OK;
}

/* `a and b`, `a or b` with Python's short-circuit on constants; on
 * run-time values both sides are evaluated and combined with And / Or. */
static smelt_status logic(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    sm_sv a, b;
    SM_TRY(sm_lw_expr(L, e->a, &a));
    int t = sm_lw_truth(&a);
    if (t >= 0) {
        if ((e->op == SM_AOP_AND) != (t != 0)) {
            *out = a;
            return SMELT_OK;
        }
        return sm_lw_expr(L, e->b, out);
    }
    SM_TRY(sm_lw_expr(L, e->b, &b));
    return sm_lw_binop(L, e->op == SM_AOP_AND ? SM_AOP_BITAND : SM_AOP_BITOR,
                       &a, &b, e->line, e->col, out);
}

/* a < b < c is (a < b) and (b < c), each operand evaluated once. */
static smelt_status compare(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    sm_sv left, right, r, acc;
    SM_TRY(sm_lw_expr(L, e->items[0], &left));
    for (int i = 0; i + 1 < e->n; i++) {
        const sm_ast_expr *x = e->items[i + 1];
        SM_TRY(sm_lw_expr(L, x, &right));
        SM_TRY(sm_lw_binop(L, e->ops[i], &left, &right, e->line, e->col, &r));
        if (i == 0) {
            acc = r;
        } else if (sm_lw_truth(&acc) == 0) {
            break;
        } else if (sm_lw_truth(&acc) == 1) {
            acc = r;
        } else if (sm_lw_truth(&r) != 1) {
            sm_sv prev = acc;
            SM_TRY(sm_lw_binop(L, SM_AOP_BITAND, &prev, &r, e->line, e->col,
                               &acc));
        }
        left = right;
    }
    *out = acc;
    return SMELT_OK;
}

static smelt_status unary(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    sm_sv a;
    SM_TRY(sm_lw_expr(L, e->a, &a));
    int t = sm_lw_truth(&a);
    if (e->op == SM_AOP_NOT && t >= 0) {
        *out = (sm_sv){.kind = SM_SV_BOOL, .i = !t};
        return SMELT_OK;
    }
    if (!numeric(&a))
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE, NULL,
                           "bad operand type for unary '%s': %s",
                           op_symbol(e->op), sm_lw_kind_name(a.kind));
    if (e->op == SM_AOP_POS) {
        *out = a;
        return SMELT_OK;
    }
    if (sm_lw_is_const(&a)) {
        *out = a;
        if (e->op == SM_AOP_INVERT && a.kind != SM_SV_FLOAT) {
            out->kind = SM_SV_INT;
            out->i = ~a.i;
        } else if (e->op == SM_AOP_NEG && a.kind == SM_SV_FLOAT) {
            out->f = -a.f;
        } else if (e->op == SM_AOP_NEG) {
            if (a.i == INT64_MIN)
                return overflow(L, e->line, e->col);
            out->kind = SM_SV_INT;
            out->i = -a.i;
        } else {
            return sm_lw_error(L, e->line, e->col, SMELT_ERR_TYPE, NULL,
                               "bad operand type for unary '~': float");
        }
        return SMELT_OK;
    }
    smelt_status st;
    sm_value *v = a.v, *r;
    if (e->op == SM_AOP_NEG) {
        if (a.kind == SM_SV_BOOL &&
            !(v = sm_lw_cast(L, v, SMELT_DTYPE_I64, e->line, e->col, &st)))
            return st;
        r = sm_lw_emit(L, SM_OP_Neg, 1, &v, e->line, e->col, &st);
        *out = (sm_sv){.kind = a.kind == SM_SV_BOOL ? SM_SV_INT : a.kind};
    } else {
        if (e->op == SM_AOP_INVERT && v->type.dtype != SMELT_DTYPE_BOOL)
            return sm_lw_error(L, e->line, e->col, SMELT_ERR_UNSUPPORTED,
                               "~ works on bools; use not or compare first",
                               "'~' on a non-bool run-time value is not "
                               "supported");
        SM_TRY(sm_lw_cond(L, &a, e->line, e->col, &v));
        r = sm_lw_emit(L, SM_OP_Not, 1, &v, e->line, e->col, &st);
        *out = (sm_sv){.kind = a.kind == SM_SV_TENSOR ? a.kind : SM_SV_BOOL};
    }
    out->v = r;
    return r ? SMELT_OK : st;
}

static smelt_status sequence(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    sm_sv *items = sm_lw_alloc(L, sizeof *items * (size_t)(e->n + 1));
    if (!items)
        return sm_lw_nomem(L);
    for (int i = 0; i < e->n; i++)
        SM_TRY(sm_lw_expr(L, e->items[i], &items[i]));
    *out = (sm_sv){.kind = e->kind == SM_EX_LIST ? SM_SV_LIST : SM_SV_TUPLE,
                   .n = e->n,
                   .items = items};
    return SMELT_OK;
}

smelt_status sm_lw_expr(sm_lower *L, const sm_ast_expr *e, sm_sv *out)
{
    SM_TRY(sm_lw_step(L, e->line, e->col));
    memset(out, 0, sizeof *out);
    switch (e->kind) {
    case SM_EX_NAME: return sm_lw_lookup(L, e->name, e->line, e->col, out);
    case SM_EX_INT: *out = (sm_sv){.kind = SM_SV_INT, .i = e->i}; break;
    case SM_EX_FLOAT: *out = (sm_sv){.kind = SM_SV_FLOAT, .f = e->f}; break;
    case SM_EX_BOOL: *out = (sm_sv){.kind = SM_SV_BOOL, .i = e->i}; break;
    case SM_EX_STR: *out = (sm_sv){.kind = SM_SV_STR, .s = e->name}; break;
    case SM_EX_NONE: out->kind = SM_SV_NONE; break;
    case SM_EX_LIST:
    case SM_EX_TUPLE: return sequence(L, e, out);
    case SM_EX_UNARY: return unary(L, e, out);
    case SM_EX_BOOLOP: return logic(L, e, out);
    case SM_EX_COMPARE: return compare(L, e, out);
    case SM_EX_BINOP: {
        sm_sv a, b;
        SM_TRY(sm_lw_expr(L, e->a, &a));
        SM_TRY(sm_lw_expr(L, e->b, &b));
        return sm_lw_binop(L, e->op, &a, &b, e->line, e->col, out);
    }
    case SM_EX_CALL: return sm_lw_call(L, e, out);
    case SM_EX_ATTR: return sm_lw_attr(L, e, out);
    case SM_EX_INDEX: return sm_lw_index(L, e, out);
    case SM_EX_IFEXP: return sm_lw_ifexp(L, e, out);
    case SM_EX_SLICE:
        return sm_lw_error(L, e->line, e->col, SMELT_ERR_PARSE, NULL,
                           "a slice is only allowed inside []");
    }
    return SMELT_OK;
}
