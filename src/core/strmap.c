/*
 * strmap.c - open addressing with linear probing, FNV-1a hashes, load
 * factor kept under one half.
 */
#include "core/strmap.h"

#include <string.h>

#include "core/alloc.h"

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

void sm_strmap_init(sm_strmap *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->n = 0;
}

void sm_strmap_free(sm_strmap *m)
{
    sm_free(m->slots);
    sm_strmap_init(m);
}

/* The slot holding key, or the empty slot where it would go. */
static sm_strmap_slot *find(const sm_strmap *m, const char *key, size_t len,
                            uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        sm_strmap_slot *s = &m->slots[i];
        if (!s->key)
            return s;
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0)
            return s;
    }
}

void *sm_strmap_get(const sm_strmap *m, const char *key, size_t len)
{
    if (!m->cap)
        return NULL;
    sm_strmap_slot *s = find(m, key, len, hash_bytes(key, len));
    return s->key ? s->val : NULL;
}

/* Doubles the table (or makes the first one) and re-inserts every key. */
static int grow(sm_strmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 64;
    if (nc < m->cap || nc > SIZE_MAX / sizeof(sm_strmap_slot))
        return 0;
    sm_strmap_slot *ns = sm_calloc(nc, sizeof *ns);
    if (!ns)
        return 0;
    sm_strmap old = *m;
    m->slots = ns;
    m->cap = nc;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].key)
            *find(m, old.slots[i].key, old.slots[i].len, old.slots[i].hash) =
                old.slots[i];
    sm_free(old.slots);
    return 1;
}

int sm_strmap_put(sm_strmap *m, const char *key, size_t len, void *val)
{
    if ((m->n + 1) * 2 > m->cap && !grow(m))
        return 0;
    uint64_t h = hash_bytes(key, len);
    sm_strmap_slot *s = find(m, key, len, h);
    if (!s->key) {
        s->key = key;
        s->len = len;
        s->hash = h;
        m->n++;
    }
    s->val = val;
    return 1;
}
