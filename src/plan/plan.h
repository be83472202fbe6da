/*
 * plan.h - a compiled plan as plain data: slots (every tensor a step
 * reads or writes, with where its memory comes from) and steps (one
 * kernel call each, in order). compile.c builds it, plan.c assigns arena
 * offsets by liveness, runtime/executor.c runs it.
 *
 * A plan is immutable after compile. Everything that changes while
 * running (the arena, tensor views, dynamic tensors, the thread pool,
 * profile times) lives in a session (runtime/executor.c), so several
 * threads can run one plan, each with its own session.
 */
#ifndef SM_PLAN_H
#define SM_PLAN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "ir/ir.h"
#include "kernels/cpu/registry.h"

/* Where a slot's memory comes from. */
typedef enum sm_slot_kind {
    SM_SLOT_INPUT,   /* graph input `index`: the caller's tensor */
    SM_SLOT_CONST,   /* a constant of the plan's graph */
    SM_SLOT_ARENA,   /* `offset` bytes into the session's arena */
    SM_SLOT_OUTPUT,  /* graph output `index`, written straight into the
                        tensor the caller receives */
    SM_SLOT_DYNAMIC, /* shape known only while running: a tensor the
                        session allocates during the run */
    SM_SLOT_ALIAS    /* the memory of slot `alias` (an input, constant or
                        output) seen with another shape: a Reshape */
} sm_slot_kind;

typedef struct sm_slot {
    sm_slot_kind kind;
    const sm_value *v; /* for names and messages */
    smelt_dtype dtype;
    int ndim;
    int64_t dims[SMELT_MAX_DIMS];
    int64_t numel;
    size_t nbytes;
    int64_t offset;        /* ARENA */
    int index;             /* INPUT, OUTPUT */
    const sm_tensor *data; /* CONST: data->data is NULL once packed forms
                              are all that read it (pack.c) */
    int first, last;       /* steps that define it and read it last */
    int share;             /* ARENA: slot whose buffer it reuses (in place, or a
                              view of it), else -1 */
    int alias;             /* ALIAS: the slot whose memory it views */
    int view;              /* ARENA: `share` is a view op's (compile.c), not
                              an in-place reuse plan.c may redo */
    int recomputed;        /* a copy remat.c made, written by a step that
                              repeats the one writing the original */
} sm_slot;

typedef enum sm_step_kind {
    SM_STEP_KERNEL,  /* an optimized CPU kernel on arena views */
    SM_STEP_REF,     /* the reference kernel on (zeroed) arena views */
    SM_STEP_CONTROL, /* If, Loop, FusedElementwise: the reference kernel
                        with a sub-block runner; outputs copied back */
    SM_STEP_DYNAMIC, /* an output's shape is data-dependent: shape
                        function and reference kernel at run time */
    SM_STEP_COPY,    /* in[0] copied into out[0] */
    SM_STEP_VIEW     /* nothing to do: out[0] is a view of in[0] */
} sm_step_kind;

typedef struct sm_step {
    sm_step_kind kind;
    const sm_node *node; /* the node it runs (may sit in a fused body) */
    const sm_op_info *info;
    int n_in, n_out;
    int *in, *out;          /* slot indices; -1 for an absent optional input */
    const sm_cpu_kernel *k; /* KERNEL */
    sm_cpu_config cfg;      /* KERNEL: k's decision (sm_plan_configure) */
    void *packed;           /* from k->prepack, or NULL */
    int64_t ws_offset;      /* workspace in the arena */
    size_t ws_bytes;        /* KERNEL: cfg.ws_bytes */
    sm_out_hint *hints;     /* CONTROL: declared output types */
    sm_cost cost;
    /* FusedElementwise: its body as the fused kernel's program (in the
     * arena), or NULL when it has none (fused_prog.h) */
    const struct sm_ew_prog *ew;
    unsigned nhwc; /* KERNEL: SM_NHWC_* / SM_B16_* operand formats */
    int copy_of;   /* 1 + the step this one repeats to recompute a value
                      (remat.c): its packed weights are that step's; 0 */
} sm_step;

struct smelt_session;

struct smelt_plan {
    sm_graph *g; /* the plan's own copy: specialized and optimized */
    sm_arena arena;
    int n_slots;
    sm_slot *slots;
    int *slot_of; /* by value id, -1 for values without a slot */
    int n_steps;
    sm_step *steps;
    int n_inputs, n_outputs;
    int *in_slot, *out_slot; /* slot of each graph input and output */
    int *out_copy; /* output i must be copied from its slot (not OUTPUT) */
    int64_t arena_bytes, unshared_bytes, weight_bytes;
    int n_inplace, n_dynamic;
    int n_recomputed;        /* steps remat.c added */
    int64_t memory_budget;   /* the arena remat.c aims under (0: none) */
    int n_buffers, n_shared; /* arena buffers; those whose bytes another
                                buffer reuses at another time */
    int n_nhwc, n_blocked;   /* values held channels-last, in channel blocks */
    int threads;
    unsigned features;
    int reference;      /* every step on its reference kernel */
    int64_t timeout_ms; /* a run's time limit (0: the ctx's) */
    /* smelt_plan_run's own session, made at the first run */
    pthread_mutex_t mu;
    struct smelt_session *own;
};

typedef struct smelt_plan sm_plan;

/* Builds the steps and slots of p from p->g (compile.c). */
smelt_status sm_plan_build(smelt_ctx_t *ctx, sm_plan *p);

/* Liveness over the steps, in-place sharing and arena offsets (plan.c):
 * fills slot first/last/share/offset, step ws_offset, arena_bytes,
 * unshared_bytes, n_inplace, n_buffers and n_shared. It may run again
 * after steps change (remat.c): it starts over each time. */
smelt_status sm_plan_assign_memory(smelt_ctx_t *ctx, sm_plan *p);

/* Memory assignment, recomputing values (remat.c) while the arena
 * exceeds budget (> 0) and a value can be recomputed without keeping
 * anything else alive longer. */
smelt_status sm_plan_recompute(smelt_ctx_t *ctx, sm_plan *p, int64_t budget);

/* The operands of step st as a kernel sees them (compile.c): d points
 * at in[] and out[], which the caller provides. */
void sm_plan_step_desc(const sm_plan *p, const sm_step *st, sm_kernel_desc *d,
                       sm_kernel_operand *in, sm_kernel_operand *out);

/* Chooses which values kernels pass channels-last or channel-blocked
 * (layout.c): sets st->nhwc of the steps that read or write them and
 * their workspace, n_nhwc and n_blocked. */
void sm_plan_choose_layouts(sm_plan *p);

/* Asks every kernel step's kernel for its decision, once, with the
 * operand formats chosen: st->cfg and st->ws_bytes (compile.c). */
void sm_plan_configure(sm_plan *p);

/* Runs every kernel step's prepack() in step order and frees the bytes of
 * each constant that only packed forms read (pack.c). */
smelt_status sm_plan_prepack(smelt_ctx_t *ctx, sm_plan *p);

/* Calls fn(arg, slot) for every slot that block b (a sub-block of a
 * control step, at any depth) reads (plan.c). */
void sm_plan_block_reads(const sm_plan *p, const sm_block *b,
                         void (*fn)(void *arg, int slot), void *arg);

/* The debug dump's plan.txt in folder dir (plan.c): p as
 * smelt_plan_print writes it, or, with p NULL, "# no plan: " and `why`.
 * Writing it never changes ctx's error when p is NULL. */
smelt_status sm_plan_dump(smelt_ctx_t *ctx, const sm_plan *p, const char *dir,
                          const char *why);

/* Frees what the plan's steps own (packed weights). */
void sm_plan_free_steps(sm_plan *p);

/* Sessions (runtime/executor.c). */
void sm_session_free_internal(struct smelt_session *s);

#endif
