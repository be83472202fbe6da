/*
 * attention_grad.h - the CPU kernel of AttentionGrad, Attention's
 * backward in the FlashAttention-2 manner: the scores are recomputed tile
 * by tile (a first sweep for each query row's log-sum-exp, a second for
 * the gradients), never held whole. The op's semantics are the
 * AttentionGrad row of src/ir/ops.def (docs/ATTENTION.md, "The
 * gradient").
 *
 * Work is one task per (batch, kv head): the task owns that kv head's dK
 * and dV, so the query heads of a group add into them without races,
 * and the dQ rows of those query heads. Inside a task the key blocks
 * (SM_ATTN_BK keys) are the outer loop, query blocks (SM_ATTN_GRAD_BQ
 * queries) the inner one; the causal rule skips every pair of blocks
 * it hides whole. A thread's scratch is a few tiles plus, per query row,
 * its log-sum-exp, its dO.O and a dQ accumulator: linear in the query
 * length, never Tq x Tk.
 */
#ifndef SM_CPU_ATTENTION_GRAD_H
#define SM_CPU_ATTENTION_GRAD_H

#include "kernels/cpu/attention.h"

/* Queries per block of the backward. */
#define SM_ATTN_GRAD_BQ 32

/* One attention backward: the forward's arguments (f.out is the
 * forward output O, read) and the gradients. */
typedef struct sm_attn_grad_args {
    sm_attn_args f;
    const float *dout;   /* dO, dense [B, Hq, Tq, Dv] */
    float *dq, *dk, *dv; /* dense, Q's, K's and V's shapes, written */
} sm_attn_grad_args;

/* The floats of one thread's scratch (attention_grad.inc.h), for head
 * dim D, value dim Dv and Tq queries. */
int64_t sm_cpu_attention_grad_ws_floats(int64_t head_dim, int64_t v_dim,
                                        int64_t q_len);

/* The scratch sm_cpu_attention_grad needs with n_threads threads. */
size_t sm_cpu_attention_grad_ws(int64_t head_dim, int64_t v_dim, int64_t q_len,
                                int n_threads);

/* Runs a on ops' ISA over tp (NULL: the calling thread) with ws, 64-byte
 * aligned, of ws_bytes >= sm_cpu_attention_grad_ws(.., size of tp).
 * Returns 0, or -1 (nothing written) when a's forward part fails
 * sm_cpu_attention_check, a gradient pointer is missing or ws is too
 * small. A query row every key is hidden from gets a zero dQ row and
 * adds nothing to dK and dV. */
int sm_cpu_attention_grad(const sm_cpu_ops *ops, const sm_attn_grad_args *a,
                          void *ws, size_t ws_bytes, sm_threadpool *tp);

#endif
