/*
 * fused.h - the activation epilogues of the fused ops (FusedConv,
 * FusedGemm) and the Gelu formulas, shared by their reference kernels,
 * their shape functions (which validate the attributes) and the fusion
 * passes (which name the activation they absorbed).
 */
#ifndef SM_REF_FUSED_H
#define SM_REF_FUSED_H

#include "core/attr.h"
#include "core/status.h"

/* The activations an epilogue applies last, after bias and residual. */
typedef enum sm_act_kind {
    SM_ACT_NONE,
    SM_ACT_RELU,
    SM_ACT_RELU6,     /* min(max(x, 0), 6) */
    SM_ACT_CLIP,      /* min(max(x, alpha), beta); absent bounds: +-inf */
    SM_ACT_SIGMOID,   /* 1 / (1 + exp(-x)) */
    SM_ACT_SILU,      /* x * sigmoid(x) */
    SM_ACT_GELU,      /* x/2 * (1 + erf(x / sqrt 2)) */
    SM_ACT_GELU_TANH, /* x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    SM_ACT_LEAKYRELU, /* x >= 0 ? x : alpha x; alpha defaults to 0.01 */
    SM_ACT_TANH,
    SM_ACT_COUNT
} sm_act_kind;

typedef struct sm_act {
    sm_act_kind kind;
    double alpha, beta; /* clip bounds, leakyrelu slope */
} sm_act;

/* The attribute spelling of an activation ("relu", "gelu_tanh", ...). */
const char *sm_act_name(sm_act_kind k);
/* SM_ACT_COUNT when name is not an activation. */
sm_act_kind sm_act_from_name(const char *name);
/* Reads `activation`, `activation_alpha` and `activation_beta`; fails
 * (SMELT_ERR_INVALID_ARG, naming op) on an unknown activation or clip
 * bounds with alpha > beta. */
smelt_status sm_act_read(smelt_ctx_t *ctx, const char *op, const sm_attrs *at,
                         sm_act *out);
double sm_act_apply(const sm_act *a, double x);

double sm_gelu_erf(double x);
double sm_gelu_tanh(double x);

#endif
