/*
 * memory_map.c - what a plan tells the profiler about its memory and its
 * steps' operands: every buffer with its lifetime and arena place (the
 * memory history, smelt_plan_buffer) and each step's shapes as text.
 *
 * It reads what plan.c decided and decides nothing: the lifetimes are
 * the slots' first and last steps, the places their arena offsets.
 */
#include <stdio.h>
#include <string.h>

#include "core/sized.h"
#include "plan/plan.h"

#define BUFFER_INFO_V1 SM_FIELD_END(smelt_plan_buffer_info, bytes)

/* Steps with a workspace, which follow the slots in the buffer list. */
static int n_workspaces(const sm_plan *p)
{
    int n = 0;
    for (int j = 0; j < p->n_steps; j++)
        n += p->steps[j].ws_bytes > 0;
    return n;
}

int smelt_plan_num_buffers(const smelt_plan_t *p)
{
    return p ? p->n_slots + n_workspaces(p) : 0;
}

/* The slot whose arena region slot s lives in (itself unless it reuses
 * another's bytes in place or as a view). */
static int region_of(const sm_plan *p, int s)
{
    while (p->slots[s].share >= 0)
        s = p->slots[s].share;
    return s;
}

static smelt_buffer_kind kind_of(const sm_slot *sl)
{
    switch (sl->kind) {
    case SM_SLOT_INPUT: return SMELT_BUFFER_INPUT;
    case SM_SLOT_CONST: return SMELT_BUFFER_WEIGHT;
    case SM_SLOT_ARENA: return SMELT_BUFFER_ARENA;
    case SM_SLOT_OUTPUT: return SMELT_BUFFER_OUTPUT;
    case SM_SLOT_DYNAMIC: return SMELT_BUFFER_DYNAMIC;
    case SM_SLOT_ALIAS: return SMELT_BUFFER_VIEW;
    }
    return SMELT_BUFFER_VIEW;
}

/* Fills b for slot s. */
static void slot_buffer(const sm_plan *p, int s, smelt_plan_buffer_info *b)
{
    const sm_slot *sl = &p->slots[s];
    b->name = sl->v && sl->v->name ? sl->v->name : "";
    b->kind = kind_of(sl);
    b->first = sl->first;
    b->last = sl->last;
    b->shares = -1;
    b->offset = -1;
    b->bytes = (int64_t)sl->nbytes;
    if (sl->kind == SM_SLOT_ARENA) {
        b->offset = sl->offset;
        if (sl->share >= 0)
            b->shares = region_of(p, s);
    } else if (sl->kind == SM_SLOT_ALIAS) {
        b->shares = sl->alias;
    }
}

smelt_status smelt_plan_buffer(const smelt_plan_t *p, int i,
                               smelt_plan_buffer_info *caller)
{
    if (!p || !caller || i < 0 || i >= smelt_plan_num_buffers(p))
        return SMELT_ERR_INVALID_ARG;
    SM_TRY(
        sm_sized_check(NULL, "smelt_plan_buffer_info", caller, BUFFER_INFO_V1));
    smelt_plan_buffer_info b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    if (i < p->n_slots) {
        slot_buffer(p, i, &b);
    } else {
        int k = i - p->n_slots, j = 0;
        for (;; j++)
            if (p->steps[j].ws_bytes > 0 && k-- == 0)
                break;
        const sm_step *st = &p->steps[j];
        b.name = st->node->name ? st->node->name : "";
        b.kind = SMELT_BUFFER_WORKSPACE;
        b.first = b.last = j;
        b.shares = -1;
        b.offset = st->ws_offset;
        b.bytes = (int64_t)st->ws_bytes;
    }
    sm_sized_out(caller, &b, sizeof b);
    return SMELT_OK;
}

/* Appends "f32[1,3,8,8]" for slot s (or "-" for an absent input) at
 * buf[*at], never past size - 1. */
static void put_operand(const sm_plan *p, int s, char *buf, size_t size,
                        size_t *at)
{
    char one[160];
    int n;
    if (s < 0) {
        n = snprintf(one, sizeof one, "-");
    } else {
        const sm_slot *sl = &p->slots[s];
        n = snprintf(one, sizeof one, "%s[", smelt_dtype_name(sl->dtype));
        for (int d = 0; d < sl->ndim && n > 0 && (size_t)n < sizeof one; d++)
            n += snprintf(one + n, sizeof one - (size_t)n,
                          sl->kind == SM_SLOT_DYNAMIC ? "%s?" : "%s%lld",
                          d ? "," : "", (long long)sl->dims[d]);
        if (n > 0 && (size_t)n < sizeof one)
            n += snprintf(one + n, sizeof one - (size_t)n, "]");
    }
    if (n < 0)
        return;
    size_t len = strlen(one);
    if (*at + len >= size)
        len = size - 1 - *at;
    memcpy(buf + *at, one, len);
    *at += len;
    buf[*at] = '\0';
}

static void put_text(const char *t, char *buf, size_t size, size_t *at)
{
    size_t len = strlen(t);
    if (*at + len >= size)
        len = size - 1 - *at;
    memcpy(buf + *at, t, len);
    *at += len;
    buf[*at] = '\0';
}

smelt_status smelt_plan_step_shapes(const smelt_plan_t *p, int i, char *buf,
                                    size_t size)
{
    if (!p || !buf || size == 0 || i < 0 || i >= p->n_steps)
        return SMELT_ERR_INVALID_ARG;
    const sm_step *st = &p->steps[i];
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < st->n_in; k++) {
        if (k)
            put_text(", ", buf, size, &at);
        put_operand(p, st->in[k], buf, size, &at);
    }
    put_text(" -> ", buf, size, &at);
    for (int k = 0; k < st->n_out; k++) {
        if (k)
            put_text(", ", buf, size, &at);
        put_operand(p, st->out[k], buf, size, &at);
    }
    return SMELT_OK;
}
