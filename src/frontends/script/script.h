/*
 * script.h - the script frontend: a Python subset in the manner of
 * TorchScript (docs/SCRIPT.md), compiled to the IR with loops and branches
 * kept as Loop and If nodes.
 *
 * Stages: lexer.c turns the source into tokens (with Python's INDENT and
 * DEDENT), parser.c builds an AST in an arena, lower*.c turn the AST of one
 * function into a graph, inlining helpers and folding Python constants.
 * Every error anywhere reads
 *
 *   FILE:LINE:COL: error: message
 *   <the source line>
 *   <a caret under the column>
 *   hint: <what to write instead>
 *
 * kept whole in the context's message.
 */
#ifndef SM_SCRIPT_H
#define SM_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "smelt.h"

/* Limits that keep hostile scripts from exhausting the stack or memory. */
#define SM_SCRIPT_MAX_BYTES ((size_t)16 << 20) /* source size */
#define SM_SCRIPT_MAX_NEST 48                  /* open brackets */
#define SM_SCRIPT_MAX_EXPR 100      /* height of an expression tree */
#define SM_SCRIPT_MAX_BLOCKS 56     /* If/Loop blocks nested, inlined */
#define SM_SCRIPT_MAX_INDENT 48     /* indentation levels */
#define SM_SCRIPT_MAX_INLINE 16     /* helper calls nested */
#define SM_SCRIPT_MAX_STEPS 2000000 /* lowering work after inlining */
#define SM_SCRIPT_MAX_NODES 1000000 /* nodes in the graph */
#define SM_SCRIPT_MAX_VARS 4096     /* variables of one function */
#define SM_SCRIPT_MAX_PARAMS 256    /* parameters of one function */
/* for-range loops with a constant trip count up to this are unrolled. */
#define SM_SCRIPT_UNROLL_MAX 16

/* The source being compiled, shared by every stage for diagnostics. */
typedef struct sm_script_src {
    smelt_ctx_t *ctx;
    const char *file;
    const char *text;
    size_t len;
} sm_script_src;

/* Records the four-part diagnostic described above on src->ctx and
 * returns code. hint may be NULL (no hint line). */
smelt_status sm_script_error(const sm_script_src *src, int line, int col,
                             smelt_status code, const char *hint,
                             const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* ---- tokens ------------------------------------------------------------ */

typedef enum sm_ptok_kind {
    SM_PTOK_EOF,
    SM_PTOK_NEWLINE,
    SM_PTOK_INDENT,
    SM_PTOK_DEDENT,
    SM_PTOK_NAME,
    SM_PTOK_KEYWORD, /* a Python keyword (if, def, lambda, True, ...) */
    SM_PTOK_INT,
    SM_PTOK_FLOAT,
    SM_PTOK_STRING, /* payload decoded into s */
    SM_PTOK_OP      /* operator or delimiter; compare its text */
} sm_ptok_kind;

typedef struct sm_ptok {
    sm_ptok_kind kind;
    const char *text; /* as written, in the source */
    size_t len;
    int line, col; /* 1-based; col counts bytes */
    int64_t i;     /* INT */
    double f;      /* FLOAT */
    const char *s; /* STRING (NUL-terminated, in the arena) */
} sm_ptok;

/* Tokens of the whole source into *toks (sm_malloc'd, release with
 * sm_free; ends with EOF); decoded strings live in arena. */
smelt_status sm_script_lex(const sm_script_src *src, sm_arena *arena,
                           sm_ptok **toks, int *n);

/* ---- AST --------------------------------------------------------------- */

typedef enum sm_ast_ek {
    SM_EX_NAME,
    SM_EX_INT,
    SM_EX_FLOAT,
    SM_EX_STR,
    SM_EX_BOOL,
    SM_EX_NONE,
    SM_EX_BINOP,   /* a op b */
    SM_EX_UNARY,   /* op a */
    SM_EX_BOOLOP,  /* a and b, a or b */
    SM_EX_COMPARE, /* items[0] ops[0] items[1] ops[1] ... */
    SM_EX_CALL,    /* a(items...), kw[i] names keyword arguments */
    SM_EX_ATTR,    /* a.name */
    SM_EX_INDEX,   /* a[b] */
    SM_EX_SLICE,   /* a:b:c inside [] (each may be NULL) */
    SM_EX_LIST,
    SM_EX_TUPLE,
    SM_EX_IFEXP /* a if c else b */
} sm_ast_ek;

typedef enum sm_ast_op {
    SM_AOP_ADD,
    SM_AOP_SUB,
    SM_AOP_MUL,
    SM_AOP_DIV,
    SM_AOP_FLOORDIV,
    SM_AOP_MOD,
    SM_AOP_POW,
    SM_AOP_MATMUL,
    SM_AOP_LSHIFT,
    SM_AOP_RSHIFT,
    SM_AOP_BITAND,
    SM_AOP_BITOR,
    SM_AOP_BITXOR,
    SM_AOP_NEG,
    SM_AOP_POS,
    SM_AOP_INVERT,
    SM_AOP_NOT,
    SM_AOP_AND,
    SM_AOP_OR,
    SM_AOP_LT,
    SM_AOP_GT,
    SM_AOP_EQ,
    SM_AOP_NE,
    SM_AOP_LE,
    SM_AOP_GE
} sm_ast_op;

typedef struct sm_ast_expr sm_ast_expr;
struct sm_ast_expr {
    sm_ast_ek kind;
    int line, col;
    int depth; /* height of the tree below, bounded by the parser */
    sm_ast_op op;
    const char *name; /* NAME, ATTR's attribute, STR's payload */
    int64_t i;        /* INT, BOOL */
    double f;         /* FLOAT */
    sm_ast_expr *a, *b, *c;
    int n;
    sm_ast_expr **items; /* LIST, TUPLE, CALL arguments, COMPARE operands */
    const char **kw;     /* CALL: keyword of each argument, NULL: positional */
    sm_ast_op *ops;      /* COMPARE: n - 1 operators */
};

typedef enum sm_ast_sk {
    SM_ST_EXPR,
    SM_ST_ASSIGN, /* targets[0] = ... = targets[n-1] = value */
    SM_ST_AUG,    /* targets[0] op= value */
    SM_ST_PASS,
    SM_ST_RETURN, /* value may be NULL */
    SM_ST_IF,     /* if value: body else: orelse (elif: one nested IF) */
    SM_ST_FOR,    /* for targets[0] in value: body */
    SM_ST_WHILE   /* while value: body */
} sm_ast_sk;

typedef struct sm_ast_stmt sm_ast_stmt;
struct sm_ast_stmt {
    sm_ast_sk kind;
    int line, col;
    sm_ast_stmt *next;
    sm_ast_expr *value;
    int n_targets;
    sm_ast_expr **targets; /* NAME, or TUPLE of NAMEs */
    sm_ast_op op;          /* AUG */
    sm_ast_expr *ann;      /* annotated assignment's type, or NULL */
    sm_ast_stmt *body, *orelse;
};

typedef struct sm_ast_param {
    const char *name;
    int line, col;
    sm_ast_expr *type; /* annotation or NULL */
    sm_ast_expr *def;  /* default or NULL */
} sm_ast_param;

typedef struct sm_ast_func sm_ast_func;
struct sm_ast_func {
    const char *name;
    int line, col;
    int n_params;
    sm_ast_param *params;
    sm_ast_expr *ret; /* return annotation or NULL */
    sm_ast_stmt *body;
    sm_ast_func *next;
};

/* A module-level assignment: a constant the functions may read. */
typedef struct sm_ast_global sm_ast_global;
struct sm_ast_global {
    const char *name;
    int line, col;
    sm_ast_expr *value;
    sm_ast_global *next;
};

/* An `import m` / `import m as a`: calls a.f(...) mean f(...). */
typedef struct sm_ast_import sm_ast_import;
struct sm_ast_import {
    const char *alias;
    sm_ast_import *next;
};

typedef struct sm_ast_module {
    sm_ast_func *funcs; /* in source order */
    sm_ast_global *globals;
    sm_ast_import *imports;
} sm_ast_module;

smelt_status sm_script_parse(const sm_script_src *src, sm_arena *arena,
                             sm_ast_module **out);

/* The function named fn (the last definition of that name), or the last
 * function of the file when fn is NULL; NULL when there is none. */
const sm_ast_func *sm_script_find_func(const sm_ast_module *m, const char *fn);

/* ---- lowering ---------------------------------------------------------- */

struct smelt_graph;
/* Lowers function f of module m into a new graph (dtypes and shapes
 * inferred as far as the inputs allow). */
smelt_status sm_script_lower(const sm_script_src *src, const sm_ast_module *m,
                             const sm_ast_func *f, struct smelt_graph **out);

#endif
