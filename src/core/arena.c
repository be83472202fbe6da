/*
 * arena.c - chunked bump allocation. Requests larger than a chunk get a
 * chunk of their own, linked behind the head so the head keeps its room.
 */
#include "core/arena.h"

#include <string.h>

#include "core/alloc.h"

#define CHUNK_SIZE ((size_t)64 << 10)

struct sm_arena_chunk {
    sm_arena_chunk *next;
    size_t size;
    _Alignas(16) unsigned char data[];
};

void sm_arena_init(sm_arena *a)
{
    a->head = NULL;
    a->used = 0;
}

void sm_arena_free(sm_arena *a)
{
    sm_arena_chunk *c = a->head;
    while (c) {
        sm_arena_chunk *next = c->next;
        sm_free(c);
        c = next;
    }
    a->head = NULL;
    a->used = 0;
}

static sm_arena_chunk *chunk_new(size_t size)
{
    sm_arena_chunk *c = sm_malloc(sizeof *c + size);
    if (c)
        c->size = size;
    return c;
}

void *sm_arena_alloc(sm_arena *a, size_t size)
{
    if (size > SIZE_MAX - 32)
        return NULL;
    size = (size + 15) & ~(size_t)15;
    if (size > CHUNK_SIZE / 4) {
        sm_arena_chunk *c = chunk_new(size);
        if (!c)
            return NULL;
        if (a->head) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = NULL;
            a->head = c;
            a->used = size;
        }
        memset(c->data, 0, size);
        return c->data;
    }
    if (!a->head || a->used + size > a->head->size) {
        sm_arena_chunk *c = chunk_new(CHUNK_SIZE);
        if (!c)
            return NULL;
        c->next = a->head;
        a->head = c;
        a->used = 0;
    }
    void *p = a->head->data + a->used;
    a->used += size;
    memset(p, 0, size);
    return p;
}

char *sm_arena_strndup(sm_arena *a, const char *s, size_t n)
{
    char *d = sm_arena_alloc(a, n + 1);
    if (d) {
        if (n) /* s may be NULL when n is 0 */
            memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

char *sm_arena_strdup(sm_arena *a, const char *s)
{
    return sm_arena_strndup(a, s, strlen(s));
}
