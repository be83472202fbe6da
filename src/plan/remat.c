/*
 * remat.c - recomputation under a memory budget: the plan's choice,
 * value by value, between keeping an intermediate alive and computing it
 * again just before a late reader needs it (docs/AUTOGRAD.md, "Saving
 * or recomputing").
 *
 * A training step's forward values are read twice: by the next forward
 * op, then much later by the backward pass. Kept, each is alive across
 * the peak of the step; recomputed, it dies after its forward reader and
 * a copy is made when the backward needs it. The plan recomputes only
 * when a budget is set and the planned arena exceeds it, and only where
 * that cannot raise the peak: the producing step's own inputs must be
 * alive at the late reader anyway (weights, inputs, or values the
 * backward reads later still), so the copy costs time, never memory.
 *
 * Greedy: at the step where live bytes peak, the value whose recompute
 * costs the fewest operations per byte freed is recomputed; repeat until
 * the arena fits or nothing more can be recomputed.
 */
#include <string.h>

#include "core/alloc.h"
#include "plan/plan.h"

/* The most values recomputed for one plan (each round re-plans memory). */
#define REMAT_MAX 4096

static int root_of(const sm_plan *p, int s)
{
    while (p->slots[s].share >= 0)
        s = p->slots[s].share;
    return s;
}

/* Live arena bytes at every step (buffers by root, workspaces) into
 * live[0..n_steps); returns the step where they peak. rlast[r] receives
 * the last step that reads root r's buffer. */
static int peak_step(const sm_plan *p, int64_t *live, int *rlast)
{
    memset(live, 0, sizeof *live * (size_t)p->n_steps);
    for (int s = 0; s < p->n_slots; s++)
        rlast[s] = -1;
    for (int s = 0; s < p->n_slots; s++)
        if (p->slots[s].kind == SM_SLOT_ARENA) {
            int r = root_of(p, s);
            if (p->slots[s].last > rlast[r])
                rlast[r] = p->slots[s].last;
        }
    for (int s = 0; s < p->n_slots; s++) {
        const sm_slot *sl = &p->slots[s];
        if (sl->kind != SM_SLOT_ARENA || sl->share >= 0 || sl->first < 0)
            continue;
        for (int j = sl->first; j <= rlast[s] && j < p->n_steps; j++)
            live[j] += (int64_t)sl->nbytes;
    }
    int best = 0;
    for (int j = 0; j < p->n_steps; j++) {
        live[j] += (int64_t)p->steps[j].ws_bytes;
        if (live[j] > live[best])
            best = j;
    }
    return best;
}

typedef struct ctl_read {
    int slot, hit;
} ctl_read;

static void note_read(void *arg, int slot)
{
    ctl_read *c = arg;
    c->hit |= slot == c->slot;
}

/* Whether slot s keeps its own buffer: no other slot shares it (in place
 * or as a view) and it shares none. */
static int owns_buffer(const sm_plan *p, int s)
{
    if (p->slots[s].share >= 0)
        return 0;
    for (int k = 0; k < p->n_slots; k++)
        if (p->slots[k].share == s)
            return 0;
    return 1;
}

/* Whether input slot s of a recomputed step is there at step `at`
 * without keeping anything alive longer. */
static int available(const sm_plan *p, const int *rlast, int s, int at)
{
    if (s < 0)
        return 1;
    const sm_slot *sl = &p->slots[s];
    if (sl->kind == SM_SLOT_CONST || sl->kind == SM_SLOT_INPUT ||
        sl->kind == SM_SLOT_ALIAS)
        return 1;
    return sl->kind == SM_SLOT_ARENA && rlast[root_of(p, s)] >= at;
}

typedef struct candidate {
    int slot, producer, at; /* recompute `producer` before step `at` */
    double per_byte;        /* operations per byte freed */
} candidate;

/* The best value to recompute around peak step t, or slot -1. */
static candidate choose(const sm_plan *p, const int *rlast, const int *maker,
                        int t)
{
    candidate best = {-1, -1, -1, 0};
    for (int s = 0; s < p->n_slots; s++) {
        const sm_slot *sl = &p->slots[s];
        int j = maker[s];
        if (sl->kind != SM_SLOT_ARENA || j < 0 || sl->first >= t ||
            sl->last <= t || sl->nbytes == 0 || !owns_buffer(p, s))
            continue;
        const sm_step *mk = &p->steps[j];
        if ((mk->kind != SM_STEP_KERNEL && mk->kind != SM_STEP_REF) ||
            mk->n_out != 1 || mk->node->op == SM_OP_Dropout)
            continue;
        /* its first reader after t, and a reader at or before t */
        int early = 0, at = -1;
        for (int k = sl->first + 1; k < p->n_steps && at < 0; k++) {
            const sm_step *st = &p->steps[k];
            int reads = 0;
            for (int i = 0; i < st->n_in; i++)
                reads |= st->in[i] == s;
            if (st->kind == SM_STEP_CONTROL) {
                ctl_read c = {s, 0};
                for (int b = 0; b < st->node->n_blocks; b++)
                    sm_plan_block_reads(p, st->node->blocks[b], note_read, &c);
                if (c.hit)
                    break; /* sub-blocks read it by value: keep it */
            }
            if (reads && k <= t)
                early = 1;
            else if (reads)
                at = k;
        }
        if (!early || at < 0)
            continue;
        int ok = 1;
        for (int i = 0; i < mk->n_in && ok; i++)
            ok = available(p, rlast, mk->in[i], at);
        if (!ok)
            continue;
        double per_byte = (mk->cost.flops + 1) / (double)sl->nbytes;
        if (best.slot < 0 || per_byte < best.per_byte)
            best = (candidate){s, j, at, per_byte};
    }
    return best;
}

/* Inserts a copy of step c.producer before step c.at writing a new slot,
 * and points the readers from c.at on at the new slot. */
static smelt_status apply(smelt_ctx_t *ctx, sm_plan *p, candidate c)
{
    sm_slot *slots =
        sm_arena_alloc(&p->arena, sizeof *slots * ((size_t)p->n_slots + 1));
    sm_step *steps =
        sm_arena_alloc(&p->arena, sizeof *steps * ((size_t)p->n_steps + 1));
    int *out = sm_arena_alloc(&p->arena, sizeof *out * 2);
    if (!slots || !steps || !out)
        return sm_err_nomem(ctx);
    memcpy(slots, p->slots, sizeof *slots * (size_t)p->n_slots);
    int ns = p->n_slots;
    slots[ns] = slots[c.slot];
    slots[ns].first = slots[ns].last = -1;
    slots[ns].share = -1;
    slots[ns].recomputed = 1;
    memcpy(steps, p->steps, sizeof *steps * (size_t)c.at);
    steps[c.at] = p->steps[c.producer];
    steps[c.at].copy_of = c.producer + 1;
    out[0] = ns;
    steps[c.at].out = out;
    memcpy(steps + c.at + 1, p->steps + c.at,
           sizeof *steps * (size_t)(p->n_steps - c.at));
    for (int j = c.at + 1; j <= p->n_steps; j++) {
        sm_step *st = &steps[j];
        if (st->copy_of > c.at)
            st->copy_of++; /* the step it repeats moved down one */
        int hit = 0;
        for (int i = 0; i < st->n_in; i++)
            hit |= st->in[i] == c.slot;
        if (!hit)
            continue;
        int *in =
            sm_arena_alloc(&p->arena, sizeof *in * ((size_t)st->n_in + 1));
        if (!in)
            return sm_err_nomem(ctx);
        for (int i = 0; i < st->n_in; i++)
            in[i] = st->in[i] == c.slot ? ns : st->in[i];
        st->in = in;
    }
    p->slots = slots;
    p->steps = steps;
    p->n_slots++;
    p->n_steps++;
    p->n_recomputed++;
    return SMELT_OK;
}

smelt_status sm_plan_recompute(smelt_ctx_t *ctx, sm_plan *p, int64_t budget)
{
    SM_TRY(sm_plan_assign_memory(ctx, p));
    while (budget > 0 && p->arena_bytes > budget &&
           p->n_recomputed < REMAT_MAX) {
        int64_t *live = sm_calloc((size_t)p->n_steps + 1, sizeof *live);
        int *rlast = sm_calloc((size_t)p->n_slots + 1, sizeof *rlast);
        int *maker = sm_calloc((size_t)p->n_slots + 1, sizeof *maker);
        if (!live || !rlast || !maker) {
            sm_free(live);
            sm_free(rlast);
            sm_free(maker);
            return sm_err_nomem(ctx);
        }
        for (int s = 0; s < p->n_slots; s++)
            maker[s] = -1;
        for (int j = 0; j < p->n_steps; j++)
            for (int i = 0; i < p->steps[j].n_out; i++)
                if (maker[p->steps[j].out[i]] < 0)
                    maker[p->steps[j].out[i]] = j;
        int t = peak_step(p, live, rlast);
        candidate c = choose(p, rlast, maker, t);
        sm_free(live);
        sm_free(rlast);
        sm_free(maker);
        if (c.slot < 0)
            break;
        SM_TRY(apply(ctx, p, c));
        SM_TRY(sm_plan_assign_memory(ctx, p));
    }
    return SMELT_OK;
}
