/*
 * exec_block.c - the control steps of a plan (If, Loop, a
 * FusedElementwise run as a whole): their reference kernels, with
 * sub-blocks run by the block walker (walk.c) as the interpreter runs
 * them.
 *
 * Sub-block values live in the session's env by value id, owned there
 * and freed when their block finishes; a value from outside the block is
 * the session's view of its slot, which the walker's lookup hook gives.
 * This is the part of a plan that allocates while running
 * (docs/RUNTIME.md).
 */
#include "runtime/executor.h"
#include "runtime/walk.h"

#define MAX_OPERANDS SM_KERNEL_MAX_OPERANDS

/* The walker's lookup hook: a value of the plan is its slot's view. */
static sm_tensor *slot_value(void *user, const sm_value *v)
{
    sm_session *s = user;
    int sl = s->p->slot_of[v->id];
    return sl >= 0 ? &s->views[sl] : NULL;
}

smelt_status sm_exec_control(smelt_ctx_t *ctx, sm_session *s, const sm_step *st,
                             sm_tensor **outs)
{
    sm_tensor *args[MAX_OPERANDS];
    for (int i = 0; i < st->n_in; i++)
        args[i] = st->in[i] >= 0 ? &s->views[st->in[i]] : NULL;
    sm_walk w = {.ctx = ctx,
                 .env = s->env,
                 .owned = s->env_owned,
                 .lookup = slot_value,
                 .lookup_user = s};
    return sm_walk_control(&w, st->node, args, st->hints, outs);
}
