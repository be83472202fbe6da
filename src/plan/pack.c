/*
 * pack.c - the plan's weights: each kernel's prepack() once, in step
 * order, and the plan's own copy of a weight released as soon as packed
 * forms are all that read it.
 *
 * A GEMM or convolution kernel keeps its constant weight in a packed blob
 * (panels for its micro-kernel, or Winograd-transformed), after which the
 * weight's own bytes in the plan's graph are dead weight: a model whose
 * weights are mostly such matrices would otherwise hold them twice for as
 * long as the plan lives. A constant's bytes are freed (the tensor keeps
 * its shape, its data becomes NULL) when every step that reads it is a
 * kernel flagged SM_CPU_KERNEL_PACKED_W that read it as input 1 and
 * returned a packed blob, and nothing else (another input position, a
 * reference or control step, a sub-block, a view, a graph output) reads
 * it. The count of pending packing readers reaches zero at the last of
 * them, so a weight is freed right after its last packed form is made
 * and the peak while compiling holds one weight twice at most.
 */
#include <string.h>

#include "core/alloc.h"
#include "plan/plan.h"

/* Whether step st, once prepacked, does not read input i's bytes: its
 * kernel reads the weights (input 1) from its packed blob only
 * (SM_CPU_KERNEL_PACKED_W: matmul.c's B, conv.c's weights), and its
 * decision packs them. */
static int packs_input(const sm_step *st, int i)
{
    return st->kind == SM_STEP_KERNEL && i == 1 &&
           (st->k->flags & SM_CPU_KERNEL_PACKED_W) && st->cfg.packs;
}

/* Marks a slot read by something other than a packed form. */
static void mark_raw(void *arg, int slot)
{
    ((unsigned char *)arg)[slot] = 1;
}

/* For every constant slot: how many steps may pack it (pending) and
 * whether anything reads its bytes (raw). */
static void count_readers(const sm_plan *p, int *pending, unsigned char *raw)
{
    for (int j = 0; j < p->n_steps; j++) {
        const sm_step *st = &p->steps[j];
        for (int i = 0; i < st->n_in; i++) {
            int s = st->in[i];
            if (s < 0 || p->slots[s].kind != SM_SLOT_CONST)
                continue;
            if (packs_input(st, i))
                pending[s]++;
            else
                raw[s] = 1;
        }
        if (st->kind == SM_STEP_CONTROL)
            for (int k = 0; k < st->node->n_blocks; k++)
                sm_plan_block_reads(p, st->node->blocks[k], mark_raw, raw);
    }
    for (int i = 0; i < p->n_outputs; i++)
        raw[p->out_slot[i]] = 1;
}

/* Prepacks step st's constant inputs. */
static smelt_status prepack_step(smelt_ctx_t *ctx, sm_plan *p, sm_step *st,
                                 const sm_kernel_desc *d)
{
    const sm_tensor *cin[SM_KERNEL_MAX_OPERANDS];
    for (int i = 0; i < st->n_in; i++)
        cin[i] = st->in[i] >= 0 && p->slots[st->in[i]].kind == SM_SLOT_CONST
                     ? p->slots[st->in[i]].data
                     : NULL;
    smelt_status s =
        sm_cpu_kernel_prepack(st->k, ctx, d, &st->cfg, cin, &st->packed);
    if (s != SMELT_OK) {
        char where[160];
        sm_node_where(st->node, where, sizeof where);
        return sm_err_prefix(ctx, "%s: prepack (%s): ", where, st->k->name);
    }
    return SMELT_OK;
}

smelt_status sm_plan_prepack(smelt_ctx_t *ctx, sm_plan *p)
{
    size_t n = (size_t)p->n_slots + 1;
    int *pending = sm_calloc(n, sizeof *pending);
    unsigned char *raw = sm_calloc(n, 1);
    smelt_status s = pending && raw ? SMELT_OK : sm_err_nomem(ctx);
    if (s == SMELT_OK)
        count_readers(p, pending, raw);
    for (int j = 0; j < p->n_steps && s == SMELT_OK; j++) {
        sm_step *st = &p->steps[j];
        if (st->kind != SM_STEP_KERNEL || !st->cfg.packs)
            continue;
        sm_kernel_desc d;
        sm_kernel_operand in[SM_KERNEL_MAX_OPERANDS],
            out[SM_KERNEL_MAX_OPERANDS];
        sm_plan_step_desc(p, st, &d, in, out);
        s = prepack_step(ctx, p, st, &d);
        for (int i = 0; i < st->n_in && s == SMELT_OK; i++) {
            int c = st->in[i];
            if (c < 0 || p->slots[c].kind != SM_SLOT_CONST ||
                !packs_input(st, i))
                continue;
            if (!st->packed)
                raw[c] = 1; /* run() reads it after all */
            if (--pending[c] == 0 && !raw[c]) {
                sm_tensor *t = (sm_tensor *)p->slots[c].data;
                sm_free(t->data);
                t->data = NULL;
            }
        }
    }
    sm_free(pending);
    sm_free(raw);
    return s;
}
