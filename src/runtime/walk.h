/*
 * walk.h - the block walker: runs a block's nodes one by one with the
 * reference kernels over an environment of value id -> tensor, giving
 * If and Loop kernels a callback that runs their sub-blocks the same
 * way. The reference interpreter walks whole graphs with it; the plan
 * executor walks the sub-blocks of its control steps, finding values of
 * the enclosing plan through a lookup hook (its slots).
 */
#ifndef SM_WALK_H
#define SM_WALK_H

#include "ir/ir.h"

typedef struct sm_walk {
    smelt_ctx_t *ctx;
    sm_tensor **env;      /* by value id: what the walk bound or made */
    unsigned char *owned; /* env[id] belongs to the walk (freed on rebind) */
    /* Where a value env lacks comes from (NULL: nowhere), e.g. the
     * executor's view of the value's slot. */
    sm_tensor *(*lookup)(void *user, const sm_value *v);
    void *lookup_user;
} sm_walk;

/* The tensor of v: env's, else the lookup hook's; NULL when none. */
sm_tensor *sm_walk_value(const sm_walk *w, const sm_value *v);

/* Runs block b with its parameters bound to args (borrowed); outs
 * receive copies of the returned values, owned by the caller, and the
 * values b bound or made are released on the way out. */
smelt_status sm_walk_block(sm_walk *w, const sm_block *b, int n_in,
                           sm_tensor *const *args, int n_out, sm_tensor **outs);

/* Runs control node n (If, Loop, FusedElementwise) on args with its
 * reference kernel, its sub-blocks walked by w. hints (NULL: taken from
 * n's declared output types) help a Loop that runs zero times size its
 * outputs. outs (n->n_out) receive new tensors, all NULL on failure. */
smelt_status sm_walk_control(sm_walk *w, const sm_node *n,
                             sm_tensor *const *args, const sm_out_hint *hints,
                             sm_tensor **outs);

#endif
