/*
 * rules_control.h - what the gradient rules of If (rules_control.c) and
 * Loop (rules_loop.c) share: the outer values a block reads, and the
 * replay of a forward block inside a backward block (docs/AUTOGRAD.md,
 * "Rules: control flow").
 */
#ifndef SM_AUTOGRAD_RULES_CONTROL_H
#define SM_AUTOGRAD_RULES_CONTROL_H

#include "autograd/grad.h"

/* A growable list of distinct values. */
typedef struct sm_vlist {
    sm_value **v;
    int n, cap;
} sm_vlist;

void sm_vlist_free(sm_vlist *l);

/* Appends to l the values blk (and the blocks nested in it) reads that
 * are defined outside blk, are floating-point and need a gradient: the
 * values a backward block must return gradients for. */
smelt_status sm_grad_outer_reads(sm_grad_ctx *g, const sm_block *blk,
                                 sm_vlist *l);

/* A forward block recomputed and differentiated inside a backward one. */
typedef struct sm_replay {
    sm_block *dst;       /* the backward block (copies go at its end) */
    const sm_block *src; /* the forward block */
    sm_value **map;      /* by value id: src's parameters mapped by the
                            caller; filled with the copies */
    int map_n;
    int n_mark;      /* values marked as needing a gradient before the */
    sm_value **mark; /* copies are marked (the mapped parameters) */
    int n_seed;      /* gradients to start from: seed_d[i] (NULL: none) */
    sm_value *const *seed_v; /* for src's value seed_v[i] */
    sm_value *const *seed_d;
    const sm_vlist *outer; /* from sm_grad_outer_reads(src) */
    sm_value **outer_d;    /* out: the gradient of each (NULL: none) */
} sm_replay;

/* Copies r->src's constants and nodes into r->dst, marks the copies,
 * seeds them and runs the engine backwards over them, with the outer
 * values' gradient slots emptied for the time (restored after). The
 * gradients of other values r->dst defines stay readable in the engine
 * (sm_grad_get) until the caller moves on. */
smelt_status sm_grad_replay(sm_grad_ctx *g, sm_replay *r);

/* Names "<value>.d" for the outputs of a backward node: n_first values
 * of first, then each outer value. Free with sm_grad_names_free. */
smelt_status sm_grad_names(sm_grad_ctx *g, int n_first, sm_value *const *first,
                           const sm_vlist *outer, char ***out);
void sm_grad_names_free(char **names, int n);

#endif
