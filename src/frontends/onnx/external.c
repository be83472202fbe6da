/*
 * external.c - tensor data kept in files beside the model (ONNX "external
 * data"). The location comes from an untrusted model, so it must be a
 * relative path without '..' components that, once symlinks are resolved,
 * still lies inside the model's folder; the byte range must lie inside
 * the file, and both are checked before anything is allocated.
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontends/onnx/onnx_internal.h"

/* Parses a non-negative decimal integer (the whole string). */
static int parse_u63(const char *s, int64_t *v)
{
    int64_t r = 0;
    if (!*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || r > (INT64_MAX - (*s - '0')) / 10)
            return 0;
        r = r * 10 + (*s - '0');
    }
    *v = r;
    return 1;
}

/* Whether location is a safe relative path: not absolute (POSIX or
 * Windows style), no '..' component under either separator. */
static const char *unsafe_location(const char *loc)
{
    if (loc[0] == '/' || loc[0] == '\\')
        return "is an absolute path";
    if (((loc[0] >= 'A' && loc[0] <= 'Z') ||
         (loc[0] >= 'a' && loc[0] <= 'z')) &&
        loc[1] == ':')
        return "is an absolute path";
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "has a '..' component";
        p += n;
        if (*p)
            p++;
    }
    return NULL;
}

/* The location/offset/length entries of tp's external_data. */
static smelt_status read_keys(smelt_ctx_t *ctx, const Onnx__TensorProto *tp,
                              const char *what, const char **loc,
                              int64_t *offset, int64_t *length)
{
    *loc = NULL;
    *offset = 0;
    *length = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *k = tp->external_data[i]->key;
        const char *v = tp->external_data[i]->value;
        if (!k || !v)
            continue;
        if (strcmp(k, "location") == 0)
            *loc = v;
        else if ((strcmp(k, "offset") == 0 && !parse_u63(v, offset)) ||
                 (strcmp(k, "length") == 0 && !parse_u63(v, length)))
            return sm_err(ctx, SMELT_ERR_PARSE,
                          "onnx: %s: external data %s '%s' is not a "
                          "non-negative integer",
                          what, k, v);
    }
    if (!*loc || !**loc)
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: external data without a location", what);
    return SMELT_OK;
}

/* Opens the file loc names inside base_dir (after the path checks), as a
 * regular file; *fd and *size on success. */
static smelt_status open_inside(smelt_ctx_t *ctx, const char *base_dir,
                                const char *loc, const char *what, int *fd,
                                int64_t *size)
{
    const char *why = unsafe_location(loc);
    if (why)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "onnx: %s: external data location '%s' %s; it must be "
                      "relative to the model's folder",
                      what, loc, why);
    char joined[PATH_MAX], rbase[PATH_MAX], rfile[PATH_MAX];
    if ((size_t)snprintf(joined, sizeof joined, "%s/%s", base_dir, loc) >=
        sizeof joined)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "onnx: %s: external data path too long", what);
    if (!realpath(base_dir, rbase))
        return sm_err(ctx, SMELT_ERR_IO, "onnx: %s: model folder '%s': %s",
                      what, base_dir, strerror(errno));
    if (!realpath(joined, rfile))
        return sm_err(ctx, SMELT_ERR_IO,
                      "onnx: %s: external data file '%s': %s", what, joined,
                      strerror(errno));
    size_t nb = strlen(rbase);
    int inside = strncmp(rfile, rbase, nb) == 0 &&
                 (rfile[nb] == '/' || (nb == 1 && rbase[0] == '/'));
    if (!inside)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "onnx: %s: external data location '%s' resolves to "
                      "'%s', outside the model's folder '%s'",
                      what, loc, rfile, rbase);
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer; the
     * fstat below then refuses anything but a regular file, for which the
     * flag changes nothing. */
    *fd = open(rfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (*fd < 0)
        return sm_err(ctx, SMELT_ERR_IO,
                      "onnx: %s: cannot open external data file '%s': %s", what,
                      rfile, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return sm_err(ctx, SMELT_ERR_IO,
                      "onnx: %s: external data '%s' is not a regular file",
                      what, rfile);
    }
    *size = (int64_t)st.st_size;
    return SMELT_OK;
}

/* Reads exactly n bytes at offset off of fd into dst. */
static int read_at(int fd, void *dst, size_t n, int64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r =
            pread(fd, (char *)dst + got, n - got, (off_t)(off + (int64_t)got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        got += (size_t)r;
    }
    return 1;
}

smelt_status sm_onnx_external_load(sm_onnx_loader *L,
                                   const Onnx__TensorProto *tp, smelt_dtype dt,
                                   int ndim, const int64_t *dims,
                                   const char *what, sm_tensor **out)
{
    smelt_ctx_t *ctx = L->ctx;
    *out = NULL;
    const char *loc;
    int64_t offset, length, numel, fsize;
    SM_TRY(read_keys(ctx, tp, what, &loc, &offset, &length));
    if (!L->base_dir)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "onnx: %s: external data '%s' needs the model's folder "
                      "(load from a file, or pass base_dir)",
                      what, loc);
    SM_TRY(sm_shape_numel(ctx, ndim, dims, smelt_dtype_size(dt), &numel));
    int64_t nbytes = numel * (int64_t)smelt_dtype_size(dt);
    if (length >= 0 && length != nbytes) {
        char shape[96];
        sm_shape_str(dt, ndim, dims, shape, sizeof shape);
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: %s: external data length %lld does not match "
                      "%s (%lld bytes)",
                      what, (long long)length, shape, (long long)nbytes);
    }
    int fd;
    SM_TRY(open_inside(ctx, L->base_dir, loc, what, &fd, &fsize));
    smelt_status s = SMELT_OK;
    if (offset > fsize || nbytes > fsize - offset)
        s = sm_err(ctx, SMELT_ERR_PARSE,
                   "onnx: %s: external data of %lld bytes at offset %lld "
                   "lies past the end of '%s' (%lld bytes)",
                   what, (long long)nbytes, (long long)offset, loc,
                   (long long)fsize);
    sm_tensor *t = NULL;
    if (s == SMELT_OK)
        s = sm_tensor_new(ctx, dt, ndim, dims, &t);
    if (s == SMELT_OK && !read_at(fd, t->data, (size_t)nbytes, offset))
        s = sm_err(ctx, SMELT_ERR_IO,
                   "onnx: %s: cannot read external data from '%s'", what, loc);
    close(fd);
    if (s != SMELT_OK) {
        sm_tensor_free(t);
        return s;
    }
    sm_onnx_copy_le(t->data, t->data, (size_t)numel, smelt_dtype_size(dt));
    if (dt == SMELT_DTYPE_BOOL)
        for (int64_t i = 0; i < numel; i++)
            ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    *out = t;
    return SMELT_OK;
}
