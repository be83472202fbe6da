/*
 * file.c - whole-file reads through sm_malloc, with a size limit checked
 * before and while reading (files can grow, pipes have no size).
 */
#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/status.h"

static smelt_status io_err(smelt_ctx_t *ctx, const char *path, int err)
{
    return sm_err(ctx, SMELT_ERR_IO, "%s: %s", path, strerror(err));
}

static smelt_status too_big(smelt_ctx_t *ctx, const char *path, size_t max)
{
    return sm_err(ctx, SMELT_ERR_LIMIT,
                  "%s: file is larger than the limit of %zu bytes", path, max);
}

/* One read(2) of up to n bytes, retried on EINTR; -1 with errno set. */
static ssize_t read_some(int fd, char *buf, size_t n)
{
    ssize_t k;
    do
        k = read(fd, buf, n);
    while (k < 0 && errno == EINTR);
    return k;
}

/* Reads fd to its end into a buffer that starts at `hint` bytes and grows
 * as needed, never past max. When the buffer is full, a one-byte probe
 * tells end of file from more data, so a file of exactly max bytes fits. */
static smelt_status read_all(smelt_ctx_t *ctx, const char *path, int fd,
                             size_t max, size_t hint, char **data, size_t *len)
{
    size_t cap = hint < 4096 ? 4096 : hint + 1;
    if (cap > max + 1)
        cap = max + 1;
    char *buf = sm_malloc(cap);
    if (!buf)
        return sm_err_nomem(ctx);
    size_t n = 0;
    smelt_status s = SMELT_OK;
    for (;;) {
        if (n + 1 < cap) {
            ssize_t k = read_some(fd, buf + n, cap - 1 - n);
            if (k < 0) {
                s = io_err(ctx, path, errno);
                break;
            }
            if (k == 0)
                break;
            n += (size_t)k;
            continue;
        }
        char c;
        ssize_t k = read_some(fd, &c, 1);
        if (k < 0) {
            s = io_err(ctx, path, errno);
            break;
        }
        if (k == 0)
            break;
        if (n >= max) {
            s = too_big(ctx, path, max);
            break;
        }
        size_t nc = cap > (max + 1) / 2 ? max + 1 : cap * 2;
        char *p = sm_realloc(buf, nc);
        if (!p) {
            s = sm_err_nomem(ctx);
            break;
        }
        buf = p;
        cap = nc;
        buf[n++] = c;
    }
    if (s != SMELT_OK) {
        sm_free(buf);
        return s;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return SMELT_OK;
}

/* Opens path for reading without waiting: a FIFO with no writer would
 * block open(2) forever, so the file is opened O_NONBLOCK, inspected with
 * fstat, and only then switched back to blocking reads. Directories are
 * refused, and so is anything but a regular file when `regular` is set
 * (.npy inputs: a device or FIFO there is a mistake, never a stream). */
static smelt_status open_checked(smelt_ctx_t *ctx, const char *path,
                                 int regular, int *fd_out, struct stat *st)
{
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return io_err(ctx, path, errno);
    if (fstat(fd, st) != 0) {
        int err = errno;
        close(fd);
        return io_err(ctx, path, err);
    }
    if (S_ISDIR(st->st_mode)) {
        close(fd);
        return io_err(ctx, path, EISDIR);
    }
    if (regular && !S_ISREG(st->st_mode)) {
        close(fd);
        return sm_err(ctx, SMELT_ERR_IO, "%s: not a regular file (%s)", path,
                      S_ISFIFO(st->st_mode)   ? "a FIFO or pipe"
                      : S_ISCHR(st->st_mode)  ? "a character device"
                      : S_ISSOCK(st->st_mode) ? "a socket"
                                              : "a special file");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int err = errno;
        close(fd);
        return io_err(ctx, path, err);
    }
    *fd_out = fd;
    return SMELT_OK;
}

/* Both readers: open, check, read within max. */
static smelt_status read_path(smelt_ctx_t *ctx, const char *path, size_t max,
                              int regular, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (max > SIZE_MAX / 2)
        max = SIZE_MAX / 2;
    if (!path)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG, "read file: NULL path");
    int fd = -1;
    struct stat st;
    SM_TRY(open_checked(ctx, path, regular, &fd, &st));
    size_t hint = 0;
    if (S_ISREG(st.st_mode)) {
        if (st.st_size < 0 || (unsigned long long)st.st_size > max) {
            close(fd);
            return too_big(ctx, path, max);
        }
        hint = (size_t)st.st_size;
    }
    smelt_status s = read_all(ctx, path, fd, max, hint, data, len);
    close(fd);
    return s;
}

smelt_status sm_read_file(smelt_ctx_t *ctx, const char *path, size_t max,
                          char **data, size_t *len)
{
    return read_path(ctx, path, max, 0, data, len);
}

smelt_status sm_read_regular_file(smelt_ctx_t *ctx, const char *path,
                                  size_t max, char **data, size_t *len)
{
    return read_path(ctx, path, max, 1, data, len);
}
