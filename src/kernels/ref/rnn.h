/*
 * rnn.h - what the shape function of the recurrent ops (RNN, GRU, LSTM;
 * src/ir/shape_rnn.c) shares with their reference kernels (rnn.c).
 */
#ifndef SM_REF_RNN_H
#define SM_REF_RNN_H

#include "core/attr.h"
#include "core/status.h"

/* The activation function named (case-insensitively) by an entry of the
 * `activations` attribute: Relu, Tanh, Sigmoid, Affine, LeakyRelu,
 * ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus;
 * -1 when unknown. */
int sm_rnn_act_find(const char *name);

/* Gates per hidden unit (RNN 1, GRU 3, LSTM 4) and activations per
 * direction (1, 2, 3) of the op named, by its ops.def name. */
typedef struct sm_rnn_kind {
    const char *op;
    int gates, n_act;
    const char *act_default[3];
} sm_rnn_kind;

extern const sm_rnn_kind sm_rnn_kinds[3];
#define SM_RNN_RNN 0
#define SM_RNN_GRU 1
#define SM_RNN_LSTM 2

/* The activation functions, in the order sm_rnn_act_find numbers them. */
typedef enum sm_rnn_act_kind {
    SM_RNN_ACT_RELU,
    SM_RNN_ACT_TANH,
    SM_RNN_ACT_SIGMOID,
    SM_RNN_ACT_AFFINE,
    SM_RNN_ACT_LEAKYRELU,
    SM_RNN_ACT_THRESHOLDEDRELU,
    SM_RNN_ACT_SCALEDTANH,
    SM_RNN_ACT_HARDSIGMOID,
    SM_RNN_ACT_ELU,
    SM_RNN_ACT_SOFTSIGN,
    SM_RNN_ACT_SOFTPLUS,
    SM_RNN_ACT_COUNT
} sm_rnn_act_kind;

/* One activation with its alpha and beta (NAN where it takes none). */
typedef struct sm_rnn_act {
    sm_rnn_act_kind kind;
    double alpha, beta;
} sm_rnn_act;

/* The kind->n_act * dirs activations of a node of that kind from its
 * attributes (activations, activation_alpha, activation_beta, alpha and
 * beta taken in order by the functions that use them) or the op's
 * defaults, into f[]; errors name op. Shared by the reference kernels
 * and the gradient rules (autograd/rules_rnn.c), which rebuild the same
 * functions from ops. */
smelt_status sm_rnn_read_acts(smelt_ctx_t *ctx, const char *op,
                              const sm_attrs *attrs, const sm_rnn_kind *kind,
                              int dirs, sm_rnn_act *f);

#endif
