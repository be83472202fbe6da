/*
 * lower.h - the lowering of the script AST into the IR, shared by its
 * files: lower.c (functions, statements, returns), lower_ctrl.c (if, for,
 * while: If and Loop nodes), lower_expr.c (expressions, operators, Python
 * constants), lower_call.c (calls of ops, builtins and methods).
 *
 * A script value (sm_sv) has a static type, as in TorchScript: Tensor,
 * int, float, bool, or a compile-time-only str, None, list or tuple.
 * An int, float or bool is either a Python constant (v == NULL), folded at
 * compile time, or known only at run time (v: an i64[], f32[] or bool[]
 * scalar tensor).
 */
#ifndef SM_SCRIPT_LOWER_H
#define SM_SCRIPT_LOWER_H

#include "core/strmap.h"
#include "frontends/script/script.h"
#include "ir/ir.h"

typedef enum sm_sv_kind {
    SM_SV_TENSOR,
    SM_SV_INT,
    SM_SV_FLOAT,
    SM_SV_BOOL,
    SM_SV_STR,
    SM_SV_NONE,
    SM_SV_LIST,
    SM_SV_TUPLE
} sm_sv_kind;

typedef struct sm_sv sm_sv;
struct sm_sv {
    sm_sv_kind kind;
    sm_value *v;   /* TENSOR, or a scalar known only at run time */
    int64_t i;     /* INT and BOOL constants */
    double f;      /* FLOAT constants */
    const char *s; /* STR */
    int n;         /* LIST, TUPLE */
    sm_sv *items;
};

/* A variable. Outside DEF it is not usable, and the state says why. */
enum {
    SM_VAR_DEF,
    SM_VAR_BRANCH, /* assigned in only one branch of the if at line:col */
    SM_VAR_LOOP    /* assigned only inside the loop at line:col */
};

typedef struct sm_var {
    const char *name;
    sm_sv val;
    int state;
    int line, col;
} sm_var;

typedef struct sm_env {
    sm_var *vars;
    int n, cap;
} sm_env;

/* What lowering a statement sequence ended with. */
typedef struct sm_flow {
    int returned;
    int n;
    sm_sv *vals;
    int line, col; /* of the return */
} sm_flow;

/* Statements still to run when a sequence ends: the rest of each
 * enclosing sequence, innermost first. A branch of an if that returns
 * takes them along, so that `if c: return a` followed by more code works. */
typedef struct sm_cont {
    const sm_ast_stmt *s;
    const struct sm_cont *next;
} sm_cont;

typedef struct sm_lower {
    const sm_script_src *src;
    smelt_ctx_t *ctx;
    sm_arena arena; /* scratch: environments, script values, names */
    const sm_ast_module *mod;
    sm_graph *g;
    sm_block *blocks[SM_SCRIPT_MAX_BLOCKS + 2]; /* blocks being filled */
    int depth; /* blocks[depth - 1] receives new nodes */
    int base;  /* constants may be shared with blocks[base..depth-1] */
    sm_env *env;
    const sm_ast_func *calls[SM_SCRIPT_MAX_INLINE + 1]; /* inline stack */
    int n_calls;
    int in_loop;       /* loops around the code, in the current function */
    sm_strmap names;   /* value names in use -> next suffix */
    sm_strmap consts;  /* "block/dtype/bits" -> scalar constant value */
    sm_strmap globals; /* module constant name -> sm_lw_global */
    sm_strmap funcs;   /* function name -> its last definition */
    sm_strmap imports; /* module alias -> non-NULL */
    long steps;
    int line, col; /* of the code being lowered, for late errors */
    long tmp;      /* counter of temporary value names */
    size_t const_bytes;
} sm_lower;

/* ---- lower.c ----------------------------------------------------------- */

smelt_status sm_lw_error(sm_lower *L, int line, int col, smelt_status code,
                         const char *hint, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
smelt_status sm_lw_nomem(sm_lower *L);
/* Counts lowering work; fails past the budget. */
smelt_status sm_lw_step(sm_lower *L, int line, int col);
void *sm_lw_alloc(sm_lower *L, size_t size);
const char *sm_lw_kind_name(sm_sv_kind k);
const char *sm_lw_a_kind(sm_sv_kind k); /* "an int", "a Tensor" */
/* The variable `name` in the current environment, or NULL. */
sm_var *sm_lw_var(sm_env *env, const char *name);
smelt_status sm_lw_assign(sm_lower *L, const char *name, const sm_sv *val);
sm_env *sm_lw_env_copy(sm_lower *L, const sm_env *env);
/* A variable's value; names not defined (or not definitely defined) fail
 * with a diagnostic at line:col. */
smelt_status sm_lw_lookup(sm_lower *L, const char *name, int line, int col,
                          sm_sv *out);
smelt_status sm_lw_seq(sm_lower *L, const sm_ast_stmt *s, const sm_cont *k,
                       sm_flow *flow);
/* Whether statement s (an if) contains a return in any branch. */
int sm_lw_returns(const sm_ast_stmt *s);
/* Inlines helper f on the given arguments (kw[i] NULL: positional). */
smelt_status sm_lw_inline(sm_lower *L, const sm_ast_func *f, int n,
                          const sm_sv *args, const char *const *kw, int line,
                          int col, sm_sv *out);
/* Function `name` of the module, or NULL. */
const sm_ast_func *sm_lw_func(const sm_lower *L, const char *name);
int sm_lw_is_import(const sm_lower *L, const char *name);

/* ---- lower_ctrl.c ------------------------------------------------------ */

smelt_status sm_lw_if(sm_lower *L, const sm_ast_stmt *s);
/* An if that returns on some path; k continues the fall-through paths. */
smelt_status sm_lw_if_return(sm_lower *L, const sm_ast_stmt *s,
                             const sm_cont *k, sm_flow *flow);
smelt_status sm_lw_for(sm_lower *L, const sm_ast_stmt *s);
smelt_status sm_lw_while(sm_lower *L, const sm_ast_stmt *s);
smelt_status sm_lw_ifexp(sm_lower *L, const sm_ast_expr *e, sm_sv *out);

/* ---- lower_expr.c ------------------------------------------------------ */

smelt_status sm_lw_expr(sm_lower *L, const sm_ast_expr *e, sm_sv *out);
smelt_status sm_lw_binop(sm_lower *L, sm_ast_op op, const sm_sv *a,
                         const sm_sv *b, int line, int col, sm_sv *out);
/* Truth of a Python constant; -1 when it is known only at run time. */
int sm_lw_truth(const sm_sv *v);
int sm_lw_is_const(const sm_sv *v); /* a Python constant, no IR value */
int sm_lw_same(const sm_sv *a, const sm_sv *b);
smelt_dtype sm_lw_natural_dtype(sm_sv_kind k);
/* The sv as an IR value of dtype dt (UNDEFINED: its natural dtype):
 * constants become constant values, run-time scalars are cast. */
smelt_status sm_lw_value(sm_lower *L, const sm_sv *v, smelt_dtype dt, int line,
                         int col, sm_value **out);
/* A bool[] (or bool tensor) value for a condition. */
smelt_status sm_lw_cond(sm_lower *L, const sm_sv *v, int line, int col,
                        sm_value **out);
sm_value *sm_lw_cast(sm_lower *L, sm_value *v, smelt_dtype dt, int line,
                     int col, smelt_status *st);
sm_value *sm_lw_scalar(sm_lower *L, smelt_dtype dt, double f, int64_t i);
sm_value *sm_lw_const(sm_lower *L, sm_tensor *t);
/* A new node in the current block with fresh temporary output names. */
sm_node *sm_lw_node(sm_lower *L, sm_op op, int n_in, sm_value *const *in,
                    int n_out);
/* Infers n's output types now, so that errors point at the source. */
smelt_status sm_lw_finish(sm_lower *L, sm_node *n, int line, int col);
/* sm_lw_node + sm_lw_finish for a one-output node without attributes. */
sm_value *sm_lw_emit(sm_lower *L, sm_op op, int n_in, sm_value *const *in,
                     int line, int col, smelt_status *st);
/* A fresh name for a value: base itself, or base.N when taken. */
const char *sm_lw_name(sm_lower *L, const char *base);
/* Gives v the name of the variable it is assigned to, when its name is
 * still a temporary one. */
void sm_lw_rename(sm_lower *L, sm_value *v, const char *var);
int sm_lw_is_temp(const sm_value *v);

/* ---- lower_call.c ------------------------------------------------------ */

smelt_status sm_lw_call(sm_lower *L, const sm_ast_expr *e, sm_sv *out);
/* x[i], x[a:b, j], list[i] */
smelt_status sm_lw_index(sm_lower *L, const sm_ast_expr *e, sm_sv *out);
/* x.T, x.shape, x.ndim */
smelt_status sm_lw_attr(sm_lower *L, const sm_ast_expr *e, sm_sv *out);
/* A list of ints as an i64[n] value (Concat of run-time ints if needed). */
smelt_status sm_lw_int_list(sm_lower *L, const sm_sv *items, int n, int line,
                            int col, sm_value **out);

#endif
