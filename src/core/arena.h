/*
 * arena.h - a bump allocator: objects of one graph or plan are freed
 * together, never one by one.
 */
#ifndef SM_ARENA_H
#define SM_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct sm_arena_chunk sm_arena_chunk;

typedef struct sm_arena {
    sm_arena_chunk *head;
    size_t used; /* bytes used in head */
} sm_arena;

void sm_arena_init(sm_arena *a);
void sm_arena_free(sm_arena *a);
/* Zeroed, 16-byte aligned memory; NULL when out of memory. */
void *sm_arena_alloc(sm_arena *a, size_t size);
char *sm_arena_strndup(sm_arena *a, const char *s, size_t n);
char *sm_arena_strdup(sm_arena *a, const char *s);

#endif
