/*
 * alloc.c - allocation through a replaceable hook, with failure injection.
 */
#include "core/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "smelt.h"

static void *default_alloc(void *user, void *ptr, size_t size)
{
    (void)user;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, size);
}

static smelt_alloc_fn alloc_fn = default_alloc;
static void *alloc_user;
/* Atomic: sessions of one plan allocate from several threads at once. */
static _Atomic long fail_countdown = -1; /* <0: never fail */
static _Atomic long alloc_count;
static _Atomic size_t alloc_limit = SM_ALLOC_LIMIT;

size_t sm_alloc_limit(void)
{
    return alloc_limit;
}

size_t sm_alloc_set_limit(size_t limit)
{
    size_t old = alloc_limit;
    alloc_limit = limit ? limit : SM_ALLOC_LIMIT;
    return old;
}

void smelt_set_allocator(smelt_alloc_fn fn, void *user)
{
    alloc_fn = fn ? fn : default_alloc;
    alloc_user = fn ? user : NULL;
}

long sm_alloc_fail_after(long n)
{
    long made = alloc_count;
    alloc_count = 0;
    fail_countdown = n;
    return made;
}

/* Decides whether this allocation is one a test asked to fail. */
static int should_fail(size_t size)
{
    if (size > alloc_limit)
        return 1;
    alloc_count++;
    if (fail_countdown < 0)
        return 0;
    if (fail_countdown == 0)
        return 1;
    fail_countdown--;
    return 0;
}

void *sm_malloc(size_t size)
{
    if (size == 0)
        size = 1;
    if (should_fail(size))
        return NULL;
    return alloc_fn(alloc_user, NULL, size);
}

void *sm_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = sm_malloc(n * size);
    if (p)
        memset(p, 0, (n * size) != 0 ? n * size : 1);
    return p;
}

void *sm_realloc(void *ptr, size_t size)
{
    if (size == 0)
        size = 1;
    if (should_fail(size))
        return NULL;
    return alloc_fn(alloc_user, ptr, size);
}

void sm_free(void *ptr)
{
    if (ptr)
        alloc_fn(alloc_user, ptr, 0);
}

char *sm_strndup(const char *s, size_t n)
{
    char *d = sm_malloc(n + 1);
    if (!d)
        return NULL;
    if (n) /* s may be NULL when n is 0 (an empty protobuf string) */
        memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *sm_strdup(const char *s)
{
    return sm_strndup(s, strlen(s));
}
