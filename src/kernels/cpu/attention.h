/*
 * attention.h - the CPU flash attention kernel (issue 15): softmax(scale
 * Q K^T + mask) V in the FlashAttention manner, never holding the score
 * matrix. The op's semantics are fixed by the `Attention` row of
 * src/ir/ops.def (docs/CPU_KERNELS.md, "Attention"); this header is the
 * kernel's whole interface, so the op's plan wiring never depends on its
 * internals.
 *
 * Work is cut into blocks of queries (a few vectors of them, per ISA:
 * sm_cpu_ops.attn_bq) of one (batch, head), up to SM_ATTN_GROUP blocks to
 * a task; a task sweeps the keys SM_ATTN_BK at a time, each key block
 * serving its query blocks in turn, with a running maximum and sum per
 * query, so a thread's scratch is O(group), independent of the sequence
 * lengths.
 */
#ifndef SM_CPU_ATTENTION_H
#define SM_CPU_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_ops.h"
#include "core/threadpool.h"

/* Keys per block: a 64 x 64 tile of scores (16 KiB with AVX-512) and the
 * block's K and V rows stay in L1 / L2 while a query block sweeps them. */
#define SM_ATTN_BK 64

/* Query blocks that share one sweep over the keys, at most: each key and
 * value block then serves up to 4 blocks of queries from L1 (docs/
 * ATTENTION.md, "Speed", for the measurements that chose 4). */
#define SM_ATTN_GROUP 4

/* Mask kinds of sm_attn_args.mask_kind. */
enum { SM_ATTN_MASK_NONE, SM_ATTN_MASK_FLOAT, SM_ATTN_MASK_BOOL };

/* One attention, as plain data (ATTN_SPEC: fixed with the op row). */
typedef struct sm_attn_args {
    int64_t batch, q_heads, kv_heads, q_len, kv_len, head_dim, v_dim;
    float scale;
    int causal; /* key j visible to query i iff j <= i + (kv_len - q_len) */
    const float *q, *k, *v;  /* dense, row-major: [B,Hq,Tq,D], [B,Hkv,Tk,D],
                                [B,Hkv,Tk,Dv] */
    float *out;              /* dense [B, Hq, Tq, Dv] */
    int mask_kind;           /* SM_ATTN_MASK_*: float additive, or bool as
                                uint8 0/1 (1 = may attend) */
    const void *mask;        /* NULL when mask_kind is NONE */
    int64_t mask_strides[4]; /* elements, per [B, Hq, Tq, Tk]; 0 = broadcast */
    int q_group; /* query blocks per sweep over the keys, 1..SM_ATTN_GROUP;
                    0: the driver's choice (by the lengths) */
} sm_attn_args;

/* NULL when a is well formed (positive sizes, q_heads a multiple of
 * kv_heads, a mask pointer for a mask kind, lengths within 2^24 so a
 * float counts positions exactly), else what is wrong. */
const char *sm_cpu_attention_check(const sm_attn_args *a);

/* The scratch sm_cpu_attention needs on ops' ISA with n_threads
 * threads: one block's tiles per thread, O(head_dim + v_dim), whatever
 * the lengths. */
size_t sm_cpu_attention_ws(const sm_cpu_ops *ops, int64_t head_dim,
                           int64_t v_dim, int n_threads);

/* Runs a on ops' ISA over tp (NULL: the calling thread) with ws, 64-byte
 * aligned, of ws_bytes >= sm_cpu_attention_ws(ops, .., size of tp).
 * Returns 0, or -1 (nothing written) when a fails sm_cpu_attention_check
 * or ws is too small. A query whose every key is hidden (by the causal
 * rule or the mask) gets NaN in its whole output row, as the unfused
 * graph's Softmax gives. */
int sm_cpu_attention(const sm_cpu_ops *ops, const sm_attn_args *a, void *ws,
                     size_t ws_bytes, sm_threadpool *tp);

/* The sizes of an Attention node's Q, K, V and mask (dims[3] NULL when
 * there is none; n_in > 3 when there may be) into a, mask strides
 * included; 0 when they are not what the kernels take (rank-4 operands
 * that fit together, a mask of rank <= 4 broadcasting onto the scores).
 * Shared by the forward's and the backward's plan hooks. */
int sm_cpu_attn_dims(int n_in, const int64_t *const *dims, const int *ndim,
                     sm_attn_args *a);

#endif
