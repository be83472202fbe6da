/*
 * attention.h - what the reference kernels of Attention (attention.c) and
 * AttentionGrad (attention_grad.c) share: the dims of one call read and
 * checked from the concrete Q, K and V, and the mask's strides over the
 * scores.
 */
#ifndef SM_REF_ATTENTION_H
#define SM_REF_ATTENTION_H

#include "kernels/ops.h"

/* The sizes of one call: Q [b, hq, tq, d], K [b, hkv, tk, d],
 * V [b, hkv, tk, dv]. */
typedef struct sm_ref_attn_size {
    int64_t b, hq, hkv, tq, tk, d, dv;
} sm_ref_attn_size;

/* Reads and checks the concrete Q, K and V (4-D, one float dtype, the
 * shared dims agreeing, hq a multiple of hkv) into *m. */
smelt_status sm_ref_attn_dims(const sm_kargs *a, const sm_tensor *q,
                              const sm_tensor *k, const sm_tensor *v,
                              sm_ref_attn_size *m);

/* Whether t is [b, hq, tq, dv] of dtype dt (the forward's output). */
int sm_ref_attn_is_output(const sm_tensor *t, const sm_ref_attn_size *m,
                          smelt_dtype dt);

/* The mask's element strides over the scores' axes [B, Hq, Tq, Tk]
 * (right-aligned numpy broadcasting; 0 where the mask has size 1 or lacks
 * the axis). Fails when the mask does not broadcast onto the scores or
 * is neither bool nor Q's dtype. */
smelt_status sm_ref_attn_mask_strides(const sm_kargs *a, const sm_tensor *mask,
                                      const sm_ref_attn_size *m, int64_t st[4]);

#endif
