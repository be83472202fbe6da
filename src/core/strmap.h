/*
 * strmap.h - a small open-addressing hash map from byte strings to
 * pointers, for name lookups that must stay linear on large inputs.
 *
 * Keys are not copied: a key must stay valid and unchanged while the map
 * holds it. Entries are never removed one by one; the map is freed whole.
 */
#ifndef SM_STRMAP_H
#define SM_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sm_strmap_slot {
    const char *key; /* NULL: empty slot */
    size_t len;
    uint64_t hash;
    void *val;
} sm_strmap_slot;

typedef struct sm_strmap {
    sm_strmap_slot *slots;
    size_t cap; /* a power of two, or 0 */
    size_t n;
} sm_strmap;

void sm_strmap_init(sm_strmap *m);
void sm_strmap_free(sm_strmap *m);
/* The value stored under key (len bytes), or NULL when absent. */
void *sm_strmap_get(const sm_strmap *m, const char *key, size_t len);
/* Stores val under key, replacing any earlier value. Returns 0 when out
 * of memory (the map is unchanged then). */
int sm_strmap_put(sm_strmap *m, const char *key, size_t len, void *val);

#endif
