/*
 * rnn.h - what the shape function of the recurrent ops (RNN, GRU, LSTM;
 * src/ir/shape_rnn.c) shares with their reference kernels (rnn.c).
 */
#ifndef SM_REF_RNN_H
#define SM_REF_RNN_H

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

#endif
