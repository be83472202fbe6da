/*
 * act.h - the activations a fused epilogue applies last (FusedConv,
 * FusedGemm), generated from the table in act.def: their enum, names,
 * attribute parsing and reference (scalar) functions. Kept in core so
 * that the IR, the passes and the kernels read one table without seeing
 * each other.
 */
#ifndef SM_ACT_H
#define SM_ACT_H

#include "core/attr.h"
#include "core/status.h"

/* One value per row of act.def, in row order (SM_ACT_NONE is 0). */
typedef enum sm_act_kind {
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    SM_ACT_##ID,
#include "core/act.def"
#undef ACT
    SM_ACT_COUNT
} sm_act_kind;

/* The parameters an activation reads (act.def's params column). */
typedef enum sm_act_params {
    SM_ACT_PARAMS_NONE,
    SM_ACT_PARAMS_SLOPE,  /* activation_alpha, default 0.01 */
    SM_ACT_PARAMS_BOUNDS, /* activation_alpha / _beta, default -inf / +inf */
} sm_act_params;

typedef struct sm_act {
    sm_act_kind kind;
    double alpha, beta; /* clip bounds, leakyrelu slope */
} sm_act;

/* One row of act.def as data. */
typedef struct sm_act_info {
    const char *name;     /* the `activation` attribute's spelling */
    sm_act_params params; /* which attributes it reads */
    int cheap;            /* applied in the GEMM micro-kernel's registers */
    double (*scalar)(double x, double alpha, double beta);
    const char *example; /* its ONNX form as text IR, %a -> %out */
} sm_act_info;

/* The row of kind k; NULL when k is not an activation. */
const sm_act_info *sm_act_info_get(sm_act_kind k);

/* The attribute spelling of an activation ("relu", "gelu_tanh", ...);
 * "?" when k is not one. */
const char *sm_act_name(sm_act_kind k);
/* SM_ACT_COUNT when name is not an activation. */
sm_act_kind sm_act_from_name(const char *name);
/* Whether the GEMM micro-kernel and the 3x3 depthwise row apply kind
 * (an int, as the kernels carry it) in registers themselves. */
int sm_act_is_cheap(int kind);
/* Reads `activation`, `activation_alpha` and `activation_beta`; fails
 * (SMELT_ERR_INVALID_ARG, naming op) on an unknown activation or clip
 * bounds with alpha > beta. */
smelt_status sm_act_read(smelt_ctx_t *ctx, const char *op, const sm_attrs *at,
                         sm_act *out);
/* The activation applied to x, in double (the reference). */
double sm_act_apply(const sm_act *a, double x);

/* The scalar functions the table names: f(x, alpha, beta). */
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    double scalar(double x, double alpha, double beta);
#include "core/act.def"
#undef ACT

double sm_gelu_erf(double x);
double sm_gelu_tanh(double x);

#endif
