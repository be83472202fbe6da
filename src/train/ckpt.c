/*
 * ckpt.c - the checkpoint of a training run (format in docs/AUTOGRAD.md,
 * "smelt train and its checkpoints"): one file, DIR/checkpoint.smck,
 * holding where the run stands (epoch, position, step, RNG state, a
 * fingerprint of the set-up) and every parameter and optimizer state,
 * closed by a checksum. It is replaced atomically: written to a
 * temporary file in the same folder, fsync'ed, renamed over the old one,
 * and the folder fsync'ed, so a crash at any moment leaves the old
 * checkpoint or the new one, never a mix.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "train/train.h"

#define CKPT_MAGIC "SMELTCK1"
#define CKPT_FILE "checkpoint.smck"
#define CKPT_MAX_NAME 4096

uint64_t train_fnv(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int say(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return 1;
}

/* A growing byte buffer: the whole file is built in memory, then
 * written with one checksum. */
typedef struct buf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *q = sm_realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_u64(buf *b, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    put(b, le, 8);
}

/* Writes all of p to fd. */
static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int train_ckpt_write(const char *dir, const train_pos *pos, int n,
                     const char *const *names, smelt_tensor_t *const *t,
                     char *err, size_t err_len)
{
    buf b = {0};
    put(&b, CKPT_MAGIC, 8);
    put_u64(&b, pos->epoch);
    put_u64(&b, pos->pos);
    put_u64(&b, pos->step);
    put_u64(&b, pos->rng_epoch);
    put_u64(&b, pos->fingerprint);
    put_u64(&b, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        put_u64(&b, len);
        put(&b, names[i], len);
        put_u64(&b, (uint64_t)smelt_tensor_dtype(t[i]));
        put_u64(&b, (uint64_t)smelt_tensor_ndim(t[i]));
        for (int a = 0; a < smelt_tensor_ndim(t[i]); a++)
            put_u64(&b, (uint64_t)smelt_tensor_dim(t[i], a));
        size_t bytes = (size_t)smelt_tensor_numel(t[i]) *
                       train_dtype_size(smelt_tensor_dtype(t[i]));
        put_u64(&b, bytes);
        put(&b, smelt_tensor_data(t[i]), bytes);
    }
    put_u64(&b, train_fnv(TRAIN_FNV_INIT, b.p, b.n));
    if (b.oom) {
        sm_free(b.p);
        return say(err, err_len, "out of memory");
    }
    char tmp[4096], path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, CKPT_FILE);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", dir, CKPT_FILE, (long)getpid());
    mkdir(dir, 0777); /* EEXIST is fine; other failures show at open */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        sm_free(b.p);
        return say(err, err_len, "cannot create %s: %s", tmp, strerror(errno));
    }
    int bad = write_all(fd, b.p, b.n) || fsync(fd);
    int e = errno;
    bad |= close(fd) != 0;
    sm_free(b.p);
    if (bad || rename(tmp, path) != 0) {
        e = bad ? e : errno;
        unlink(tmp);
        return say(err, err_len, "cannot write %s: %s", path, strerror(e));
    }
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
        fsync(dfd); /* the rename itself made durable */
        close(dfd);
    }
    return 0;
}

/* Reading: a cursor over the file's bytes. */
typedef struct rd {
    const unsigned char *p;
    size_t n, at;
    int short_read;
} rd;

static uint64_t get_u64(rd *r)
{
    if (r->n - r->at < 8) {
        r->short_read = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[r->at + (size_t)i] << (8 * i);
    r->at += 8;
    return v;
}

static const unsigned char *get(rd *r, uint64_t n)
{
    if (r->n - r->at < n) {
        r->short_read = 1;
        return NULL;
    }
    const unsigned char *p = r->p + r->at;
    r->at += (size_t)n;
    return p;
}

/* The file's bytes (malloc'ed), or NULL: *missing when it does not
 * exist. */
static unsigned char *slurp(const char *path, size_t *len, int *missing)
{
    *missing = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *missing = errno == ENOENT;
        return NULL;
    }
    unsigned char *p = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            unsigned char *q = sm_realloc(p, cap);
            if (!q) {
                sm_free(p);
                fclose(f);
                return NULL;
            }
            p = q;
        }
        size_t got = fread(p + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        sm_free(p);
        return NULL;
    }
    *len = n;
    return p;
}

/* Finds tensor `name` among names[0..n) and checks its type. */
static int read_tensor(rd *r, int n, const char *const *names,
                       smelt_tensor_t *const *t, unsigned char *seen, char *err,
                       size_t err_len, const char *path)
{
    uint64_t len = get_u64(r);
    if (len > CKPT_MAX_NAME)
        return say(err, err_len, "%s is corrupt (a name of %llu bytes)", path,
                   (unsigned long long)len);
    const unsigned char *nm = get(r, len);
    uint64_t dt = get_u64(r), nd = get_u64(r);
    if (r->short_read || nd > SMELT_MAX_DIMS)
        return say(err, err_len, "%s is truncated or corrupt", path);
    int64_t dims[SMELT_MAX_DIMS];
    for (uint64_t a = 0; a < nd; a++)
        dims[a] = (int64_t)get_u64(r);
    uint64_t bytes = get_u64(r);
    const unsigned char *data = get(r, bytes);
    if (r->short_read)
        return say(err, err_len, "%s is truncated", path);
    for (int i = 0; i < n; i++) {
        if (strlen(names[i]) != len || memcmp(names[i], nm, (size_t)len))
            continue;
        int same = (uint64_t)smelt_tensor_dtype(t[i]) == dt &&
                   (uint64_t)smelt_tensor_ndim(t[i]) == nd &&
                   bytes == (uint64_t)smelt_tensor_numel(t[i]) *
                                train_dtype_size(smelt_tensor_dtype(t[i]));
        for (uint64_t a = 0; same && a < nd; a++)
            same = smelt_tensor_dim(t[i], (int)a) == dims[a];
        if (!same)
            return say(err, err_len,
                       "%s: '%s' has another dtype or shape than the "
                       "model's",
                       path, names[i]);
        memcpy(smelt_tensor_data(t[i]), data, (size_t)bytes);
        seen[i] = 1;
        return 0;
    }
    return say(err, err_len, "%s holds '%.*s', which this run does not train",
               path, (int)len, (const char *)nm);
}

int train_ckpt_read(const char *dir, train_pos *pos, int n,
                    const char *const *names, smelt_tensor_t *const *t,
                    char *err, size_t err_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, CKPT_FILE);
    size_t len = 0;
    int missing;
    unsigned char *p = slurp(path, &len, &missing);
    if (!p)
        return missing ? -1 : say(err, err_len, "cannot read %s", path);
    int bad = 0;
    if (len < 16 || memcmp(p, CKPT_MAGIC, 8) != 0) {
        bad = say(err, err_len, "%s is not a smelt checkpoint", path);
    } else {
        rd sum = {.p = p + len - 8, .n = 8};
        if (get_u64(&sum) != train_fnv(TRAIN_FNV_INIT, p, len - 8))
            bad = say(err, err_len, "%s is corrupt (checksum mismatch)", path);
    }
    rd r = {.p = p, .n = len - 8, .at = 8};
    train_pos got = {0};
    if (!bad) {
        got.epoch = get_u64(&r);
        got.pos = get_u64(&r);
        got.step = get_u64(&r);
        got.rng_epoch = get_u64(&r);
        got.fingerprint = get_u64(&r);
        if (got.fingerprint != pos->fingerprint)
            bad = say(err, err_len,
                      "%s was written by another set-up (model, data, loss, "
                      "optimizer, batch size, seed or split differ)",
                      path);
    }
    unsigned char *seen = sm_calloc((size_t)(n > 0 ? n : 1), 1);
    if (!bad && !seen)
        bad = say(err, err_len, "out of memory");
    uint64_t count = bad ? 0 : get_u64(&r);
    if (!bad && count != (uint64_t)n)
        bad = say(err, err_len, "%s holds %llu tensors, this run has %d", path,
                  (unsigned long long)count, n);
    for (int i = 0; !bad && i < n; i++)
        bad = read_tensor(&r, n, names, t, seen, err, err_len, path);
    for (int i = 0; !bad && i < n; i++)
        if (!seen[i])
            bad = say(err, err_len, "%s lacks '%s'", path, names[i]);
    sm_free(seen);
    sm_free(p);
    if (bad)
        return 1;
    *pos = got;
    return 0;
}
