/*
 * act.c - the activation table (act.def) as data, its attribute parsing
 * and the reference functions its rows name.
 */
#include "core/act.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const sm_act_info act_rows[SM_ACT_COUNT] = {
#define ACT(ID, name, op, match, params, cheap, scalar, vector, grad, ex)      \
    [SM_ACT_##ID] = {name, SM_ACT_PARAMS_##params, cheap, scalar, ex},
#include "core/act.def"
#undef ACT
};

const sm_act_info *sm_act_info_get(sm_act_kind k)
{
    return (unsigned)k < SM_ACT_COUNT ? &act_rows[k] : NULL;
}

const char *sm_act_name(sm_act_kind k)
{
    return (unsigned)k < SM_ACT_COUNT ? act_rows[k].name : "?";
}

sm_act_kind sm_act_from_name(const char *name)
{
    for (int k = 0; k < SM_ACT_COUNT; k++)
        if (strcmp(act_rows[k].name, name) == 0)
            return (sm_act_kind)k;
    return SM_ACT_COUNT;
}

int sm_act_is_cheap(int kind)
{
    return (unsigned)kind < SM_ACT_COUNT && act_rows[kind].cheap;
}

/*
 * Parses the three epilogue attributes. The defaults depend on the row's
 * params: a slope defaults to 0.01 (ONNX LeakyRelu), bounds to the whole
 * line; the error for an unknown name lists the table's names.
 */
smelt_status sm_act_read(smelt_ctx_t *ctx, const char *op, const sm_attrs *at,
                         sm_act *out)
{
    const char *name = sm_attrs_string(at, "activation", "none");
    out->kind = sm_act_from_name(name);
    if (out->kind == SM_ACT_COUNT) {
        char list[256];
        size_t n = 0;
        list[0] = 0;
        for (int k = 0; k < SM_ACT_COUNT && n < sizeof list; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                                  k ? ", " : "", act_rows[k].name);
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: activation '%s' is not one of %s", op, name, list);
    }
    sm_act_params p = act_rows[out->kind].params;
    out->alpha = sm_attrs_float(at, "activation_alpha",
                                p == SM_ACT_PARAMS_SLOPE ? 0.01 : -INFINITY);
    out->beta = sm_attrs_float(at, "activation_beta", INFINITY);
    if (p == SM_ACT_PARAMS_BOUNDS && !(out->alpha <= out->beta))
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: clip bounds activation_alpha = %g and "
                      "activation_beta = %g are not ordered",
                      op, out->alpha, out->beta);
    return SMELT_OK;
}

double sm_act_apply(const sm_act *a, double x)
{
    if ((unsigned)a->kind >= SM_ACT_COUNT)
        return x;
    return act_rows[a->kind].scalar(x, a->alpha, a->beta);
}

/* ---- the rows' reference functions --------------------------------------- */

/* The logistic function, without overflow on either side. */
static double sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

double sm_gelu_erf(double x)
{
    return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}

double sm_gelu_tanh(double x)
{
    const double k = 0.79788456080286535588; /* sqrt(2 / pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

double sm_act_f_none(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return x;
}

double sm_act_f_relu(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return x > 0 ? x : x < 0 ? 0 : x; /* keeps nan */
}

double sm_act_f_relu6(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return x < 0 ? 0 : x > 6 ? 6 : x;
}

double sm_act_f_clip(double x, double alpha, double beta)
{
    return x < alpha ? alpha : x > beta ? beta : x;
}

double sm_act_f_sigmoid(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return sigmoid(x);
}

double sm_act_f_silu(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return x * sigmoid(x);
}

double sm_act_f_gelu(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return sm_gelu_erf(x);
}

double sm_act_f_gelu_tanh(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return sm_gelu_tanh(x);
}

double sm_act_f_leakyrelu(double x, double alpha, double beta)
{
    (void)beta;
    return x < 0 ? alpha * x : x;
}

double sm_act_f_tanh(double x, double alpha, double beta)
{
    (void)alpha, (void)beta;
    return tanh(x);
}
