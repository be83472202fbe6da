/*
 * advise.c - memory hints to the OS (alloc.h), kept apart so that the
 * rest of the core stays plain C11.
 */
#define _DEFAULT_SOURCE /* madvise */
#include <stdint.h>
#include <sys/mman.h>

#include "core/alloc.h"

void sm_advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + SM_HUGE_ALIGN - 1) & ~(SM_HUGE_ALIGN - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(SM_HUGE_ALIGN - 1);
    if (b > a)
        (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}
