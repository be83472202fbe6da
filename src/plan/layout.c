/*
 * layout.c - the plan's layout choice: which of its values live in
 * memory as NHWC (or in channel blocks) rather than NCHW. This is the
 * only place Smelt chooses a data layout; "layout" means this choice.
 *
 * The graph, the optimizer, the reference kernels and the caller only
 * ever see NCHW, so no pass and no reference kernel needs a second
 * layout (docs/RUNTIME.md). But a chain of convolutions that
 * can all read and write channels-last (MobileNet: 1x1, depthwise, 1x1,
 * ...) would otherwise transpose at every layer: the depthwise kernel
 * works on channels a vector at a time, and the position-major GEMM
 * produces positions x channels. So after the kernels are chosen, a
 * value is held channels-last when
 *   - it is a 4-D f32 arena value (never an input, output or constant),
 *     written as output 0 of a kernel whose layouts() allows SM_NHWC_OUT;
 *   - every step that reads it is a kernel reading it as input 0 with
 *     SM_NHWC_IN allowed, or as input 3 (a residual of the output's
 *     shape) of a kernel that writes its own output channels-last;
 *   - no sub-block of a control step reads it.
 * A kernel may also allow channel-blocked values (SM_B16_*: [N, C/16, H,
 * W, 16]); where both sides take them they win over NHWC (a depthwise
 * layer reads a block's plane front to back instead of one line in
 * every C / 16). Residuals are NHWC or NCHW only.
 * The residual rule ties two values together, and so does a kernel
 * that allows an NHWC input only with an NHWC output (SM_NHWC_TIED), so
 * the choice shrinks to a fixed point: a step whose residual and output
 * disagree makes both NCHW, a tied step whose output is NCHW its input.
 * Steps then learn their bits (st->nhwc); their kernels decide how to
 * run with them afterwards (sm_plan_configure), then prepack.
 */
#include <string.h>

#include "core/alloc.h"
#include "plan/plan.h"

/* What step st's kernel allows, as SM_NHWC_* / SM_B16_* bits. */
static unsigned allowed(const sm_plan *p, const sm_step *st)
{
    if (st->kind != SM_STEP_KERNEL || !st->k->layouts)
        return 0;
    sm_kernel_operand in[SM_KERNEL_MAX_OPERANDS], out[SM_KERNEL_MAX_OPERANDS];
    sm_kernel_desc d;
    sm_step tmp = *st;
    tmp.nhwc = 0;
    sm_plan_step_desc(p, &tmp, &d, in, out);
    return st->k->layouts(&d);
}

static int same_dims(const sm_slot *a, const sm_slot *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

/* Formats a value can be held in, as a mask. */
enum { F_NHWC = 1, F_B16 = 2 };

/* The formats that the SM_* bits `can` allow for an input, or for an
 * output (out). */
static unsigned formats(unsigned can, int out)
{
    if (out)
        return (can & SM_NHWC_OUT ? F_NHWC : 0) |
               (can & SM_B16_OUT ? F_B16 : 0);
    return (can & SM_NHWC_IN ? F_NHWC : 0) | (can & SM_B16_IN ? F_B16 : 0);
}

static void mark_bad(void *arg, int slot)
{
    ((unsigned char *)arg)[slot] = 0;
}

/* The formats of the slots st reads, narrowed to what st can read them
 * in: input 0 as an input, input 3 (a residual of the output's shape)
 * as st writes its output; any other input NCHW only. */
static void reader(const sm_plan *p, const sm_step *st, unsigned can,
                   unsigned char *pos)
{
    for (int i = 0; i < st->n_in; i++) {
        int s = st->in[i];
        if (s < 0)
            continue;
        unsigned ok = 0;
        if (i == 0)
            ok = formats(can, 0);
        else if (i == 3 && st->n_out > 0 &&
                 same_dims(&p->slots[s], &p->slots[st->out[0]]))
            ok = formats(can, 1) & F_NHWC; /* residuals: NHWC only */
        pos[s] &= (unsigned char)ok;
    }
}

/* The bits of st for the formats of its input 0 and output 0. */
static unsigned step_bits(const sm_step *st, const unsigned char *fmt)
{
    unsigned b = 0;
    if (st->in[0] >= 0)
        b |= fmt[st->in[0]] == F_NHWC  ? SM_NHWC_IN
             : fmt[st->in[0]] == F_B16 ? SM_B16_IN
                                       : 0;
    b |= fmt[st->out[0]] == F_NHWC  ? SM_NHWC_OUT
         : fmt[st->out[0]] == F_B16 ? SM_B16_OUT
                                    : 0;
    return b;
}

void sm_plan_choose_layouts(sm_plan *p)
{
    p->n_nhwc = p->n_blocked = 0;
    if (p->reference || p->n_slots == 0)
        return;
    unsigned *can = sm_calloc((size_t)p->n_steps + 1, sizeof *can);
    unsigned char *fmt = sm_calloc((size_t)p->n_slots, 1);
    if (!can || !fmt) { /* layouts are an optimization: skip them */
        sm_free(can);
        sm_free(fmt);
        return;
    }
    /* candidates: output 0 of a kernel that may write it channels-last
     * or blocked, in the formats it may */
    for (int j = 0; j < p->n_steps; j++) {
        sm_step *st = &p->steps[j];
        can[j] = allowed(p, st);
        if (!formats(can[j], 1) || st->n_out < 1)
            continue;
        const sm_slot *o = &p->slots[st->out[0]];
        if (o->kind == SM_SLOT_ARENA && o->ndim == 4 &&
            o->dtype == SMELT_DTYPE_F32)
            fmt[st->out[0]] = (unsigned char)formats(can[j], 1);
    }
    /* every reader must take it so */
    for (int j = 0; j < p->n_steps; j++) {
        const sm_step *st = &p->steps[j];
        reader(p, st, can[j], fmt);
        if (st->kind == SM_STEP_CONTROL)
            for (int k = 0; k < st->node->n_blocks; k++)
                sm_plan_block_reads(p, st->node->blocks[k], mark_bad, fmt);
    }
    /* the caller's outputs are NCHW, even when copied out of the arena */
    for (int i = 0; i < p->n_outputs; i++)
        fmt[p->out_slot[i]] = 0;
    /* one format each: blocked where both sides take it (a depthwise
     * layer then reads each block's plane front to back) */
    for (int s = 0; s < p->n_slots; s++)
        fmt[s] = fmt[s] & F_B16 ? F_B16 : fmt[s] & F_NHWC ? F_NHWC : 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int j = 0; j < p->n_steps; j++) {
            const sm_step *st = &p->steps[j];
            if (!can[j] || st->n_in < 1 || st->n_out < 1)
                continue;
            /* a residual is held as its step's output is */
            int r = st->n_in > 3 ? st->in[3] : -1, o = st->out[0];
            if (r >= 0 && fmt[r] != fmt[o]) {
                fmt[r] = fmt[o] = 0;
                changed = 1;
            }
            /* an input tied to the output follows it */
            int x = st->in[0];
            if ((can[j] & SM_NHWC_TIED) && x >= 0 && fmt[x] && !fmt[o]) {
                fmt[x] = 0;
                changed = 1;
            }
        }
    }
    for (int s = 0; s < p->n_slots; s++) {
        p->n_nhwc += fmt[s] == F_NHWC;
        p->n_blocked += fmt[s] == F_B16;
    }
    for (int j = 0; j < p->n_steps && p->n_nhwc + p->n_blocked; j++) {
        sm_step *st = &p->steps[j];
        if (!can[j] || st->n_in < 1 || st->n_out < 1)
            continue;
        st->nhwc = step_bits(st, fmt);
    }
    sm_free(can);
    sm_free(fmt);
}
