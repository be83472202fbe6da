/*
 * alloc.h - the one allocation hook every allocation of the library uses.
 *
 * Tests inject failures through sm_alloc_fail_after() to prove every error
 * path frees what it allocated.
 */
#ifndef SM_ALLOC_H
#define SM_ALLOC_H

#include <stddef.h>

void *sm_malloc(size_t size);
void *sm_calloc(size_t n, size_t size);
void *sm_realloc(void *ptr, size_t size);
void sm_free(void *ptr);
char *sm_strdup(const char *s);
char *sm_strndup(const char *s, size_t n);

/* Allocations larger than this fail (a guard against hostile sizes). */
#define SM_ALLOC_LIMIT ((size_t)16 << 30)
/* The limit in force: SM_ALLOC_LIMIT unless a test lowered it with
 * sm_alloc_set_limit (0 restores it), which returns the one before.
 * Code that sees memory grow (a Loop's iterations) charges against it. */
size_t sm_alloc_limit(void);
size_t sm_alloc_set_limit(size_t limit);

/* Huge pages for long-lived, large, streamed buffers (packed weights):
 * SM_HUGE_ALIGN is the alignment to give them; sm_advise_huge asks the
 * OS (Linux transparent huge pages, madvise mode) to back the whole
 * SM_HUGE_ALIGN-aligned pages inside [p, p + n) with huge pages. Call it
 * before touching the memory. A hint: does nothing where unsupported. */
#define SM_HUGE_ALIGN ((size_t)2 << 20)
void sm_advise_huge(void *p, size_t n);

/* Make the n-th allocation from now (0-based) and all after it fail;
 * n < 0 disables injection. Returns the number of allocations made since
 * the last call, which lets a test walk every failure point. */
long sm_alloc_fail_after(long n);

#endif
