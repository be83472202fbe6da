/*
 * proto.c - decoding ModelProto bytes with protobuf-c under Smelt's rules:
 * every allocation goes through the library's hook (so failure injection
 * reaches protobuf-c too), the file size is bounded, and message nesting
 * is bounded before protobuf-c, which recurses without a limit, sees the
 * bytes. A model file is mapped read-only rather than read, and large
 * raw_data payloads are left in the mapping (lean.c) until the loader
 * copies each into its constant and drops its pages: the weights are
 * resident once while a model loads.
 */
#define _DEFAULT_SOURCE /* madvise */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/status.h"
#include "frontends/onnx/onnx_internal.h"

/* Allocator state of one unpack: whether an allocation failed, which
 * tells an out-of-memory from malformed bytes (protobuf-c returns NULL
 * for both). */
typedef struct pb_alloc_state {
    int failed;
} pb_alloc_state;

static void *pb_alloc(void *data, size_t size)
{
    void *p = sm_malloc(size);
    if (!p && data)
        ((pb_alloc_state *)data)->failed = 1;
    return p;
}

static void pb_free(void *data, void *p)
{
    (void)data;
    sm_free(p);
}

static ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, NULL};

void sm_onnx_proto_free(void *p)
{
    sm_free(p);
}

void sm_onnx_model_free(Onnx__ModelProto *m)
{
    if (m)
        onnx__model_proto__free_unpacked(m, &pb_allocator);
}

/* Reads a base-128 varint at *p (not past end); 0 when malformed. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return 0;
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

enum { WALK_OK, WALK_DEEP, WALK_BAD };

/* Walks the wire form of one message of type desc (NULL: a field the
 * schema does not know, not descended into) and checks that the messages
 * inside it nest at most SM_ONNX_MAX_MSG_DEPTH deep. It reads tags and
 * lengths only; decoding is protobuf-c's. *bad is the offset of the
 * first malformed byte. */
static int walk(const ProtobufCMessageDescriptor *desc, const uint8_t *base,
                const uint8_t *p, const uint8_t *end, int depth, size_t *bad)
{
    if (depth > SM_ONNX_MAX_MSG_DEPTH)
        return WALK_DEEP;
    while (p < end) {
        uint64_t key, v;
        *bad = (size_t)(p - base);
        if (!read_varint(&p, end, &key))
            return WALK_BAD;
        switch (key & 7) {
        case PROTOBUF_C_WIRE_TYPE_VARINT:
            if (!read_varint(&p, end, &v))
                return WALK_BAD;
            break;
        case PROTOBUF_C_WIRE_TYPE_64BIT:
            if (end - p < 8)
                return WALK_BAD;
            p += 8;
            break;
        case PROTOBUF_C_WIRE_TYPE_32BIT:
            if (end - p < 4)
                return WALK_BAD;
            p += 4;
            break;
        case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED: {
            if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p))
                return WALK_BAD;
            const ProtobufCFieldDescriptor *f =
                desc && (key >> 3) <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(
                          desc, (unsigned)(key >> 3))
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                int r = walk(f->descriptor, base, p, p + v, depth + 1, bad);
                if (r != WALK_OK)
                    return r;
            }
            p += v;
            break;
        }
        default: return WALK_BAD; /* groups: not used by ONNX */
        }
    }
    return WALK_OK;
}

smelt_status sm_onnx_unpack(smelt_ctx_t *ctx, const sm_onnx_src *src,
                            Onnx__ModelProto **out)
{
    *out = NULL;
    size_t len = src->len;
    if (len > SM_ONNX_MAX_MODEL_BYTES)
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "onnx: model of %zu bytes exceeds the %zu-byte limit",
                      len, (size_t)SM_ONNX_MAX_MODEL_BYTES);
    const uint8_t *p = src->data ? src->data : (const uint8_t *)"";
    size_t bad = 0;
    switch (walk(&onnx__model_proto__descriptor, p, p, p + len, 1, &bad)) {
    case WALK_DEEP:
        return sm_err(ctx, SMELT_ERR_LIMIT,
                      "onnx: protobuf messages nest deeper than %d levels "
                      "(subgraphs nested too deeply)",
                      SM_ONNX_MAX_MSG_DEPTH);
    case WALK_BAD:
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: not a valid ONNX protobuf: malformed or "
                      "truncated field at byte %zu of %zu",
                      bad, len);
    default: break;
    }
    void *lean;
    size_t lean_len;
    SM_TRY(sm_onnx_lean_copy(ctx, p, len, &lean, &lean_len));
    pb_alloc_state st = {0};
    ProtobufCAllocator a = {pb_alloc, pb_free, &st};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&a, lean_len, lean);
    sm_free(lean);
    if (!m) {
        if (st.failed)
            return sm_err_nomem(ctx);
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: not a valid ONNX ModelProto (a field has the "
                      "wrong wire type or a bad value)");
    }
    *out = m;
    return SMELT_OK;
}

smelt_status sm_onnx_tensor_unpack(smelt_ctx_t *ctx, const void *buf,
                                   size_t len, Onnx__TensorProto **out)
{
    *out = NULL;
    const uint8_t *p = buf;
    size_t bad = 0;
    if (walk(&onnx__tensor_proto__descriptor, p, p, p + len, 1, &bad) !=
        WALK_OK) /* a TensorProto nests two levels: only malformed fails */
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "onnx: not a valid TensorProto: malformed or "
                      "truncated field at byte %zu of %zu",
                      bad, len);
    pb_alloc_state st = {0};
    ProtobufCAllocator a = {pb_alloc, pb_free, &st};
    Onnx__TensorProto *t = onnx__tensor_proto__unpack(&a, len, p);
    if (!t)
        return st.failed ? sm_err_nomem(ctx)
                         : sm_err(ctx, SMELT_ERR_PARSE,
                                  "onnx: not a valid TensorProto (a field "
                                  "has the wrong wire type or a bad value)");
    *out = t;
    return SMELT_OK;
}

void sm_onnx_tensor_proto_free(Onnx__TensorProto *t)
{
    if (t)
        onnx__tensor_proto__free_unpacked(t, &pb_allocator);
}

/* Opens a model file: a regular file of at most SM_ONNX_MAX_MODEL_BYTES;
 * *fd and *len on success, nothing left open on failure. */
static smelt_status open_model(smelt_ctx_t *ctx, const char *path, int *fd,
                               size_t *len)
{
    *len = 0;
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return sm_err(ctx, SMELT_ERR_IO, "onnx: cannot open '%s': %s", path,
                      strerror(errno));
    struct stat st;
    smelt_status s = SMELT_OK;
    if (fstat(*fd, &st) != 0)
        s = sm_err(ctx, SMELT_ERR_IO, "onnx: cannot stat '%s': %s", path,
                   strerror(errno));
    else if (!S_ISREG(st.st_mode))
        s = sm_err(ctx, SMELT_ERR_IO, "onnx: '%s' is not a regular file", path);
    else if ((uint64_t)st.st_size > SM_ONNX_MAX_MODEL_BYTES)
        s = sm_err(ctx, SMELT_ERR_LIMIT,
                   "onnx: '%s' is %lld bytes, over the %zu-byte limit", path,
                   (long long)st.st_size, (size_t)SM_ONNX_MAX_MODEL_BYTES);
    if (s != SMELT_OK) {
        close(*fd);
        *fd = -1;
        return s;
    }
    *len = (size_t)st.st_size;
    return SMELT_OK;
}

smelt_status sm_onnx_read_file(smelt_ctx_t *ctx, const char *path, void **buf,
                               size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd;
    size_t n = 0;
    SM_TRY(open_model(ctx, path, &fd, &n));
    smelt_status s = SMELT_OK;
    char *b = sm_malloc(n ? n : 1);
    if (!b)
        s = sm_err_nomem(ctx);
    size_t got = 0;
    while (s == SMELT_OK && got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            s = sm_err(ctx, SMELT_ERR_IO, "onnx: cannot read '%s': %s", path,
                       r < 0 ? strerror(errno) : "file shrank while read");
        else
            got += (size_t)r;
    }
    close(fd);
    if (s != SMELT_OK) {
        sm_free(b);
        return s;
    }
    *buf = b;
    *len = n;
    return SMELT_OK;
}

smelt_status sm_onnx_map_file(smelt_ctx_t *ctx, const char *path,
                              sm_onnx_src *src)
{
    memset(src, 0, sizeof *src);
    int fd;
    size_t n = 0;
    SM_TRY(open_model(ctx, path, &fd, &n));
    if (n == 0) { /* nothing to map: an empty source */
        close(fd);
        return SMELT_OK;
    }
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED)
        return sm_err(ctx, SMELT_ERR_IO, "onnx: cannot map '%s': %s", path,
                      strerror(err));
    src->data = p;
    src->len = n;
    src->mapped = 1;
    return SMELT_OK;
}

void sm_onnx_unmap(sm_onnx_src *src)
{
    if (src->mapped)
        munmap((void *)src->data, src->len);
    memset(src, 0, sizeof *src);
}

void sm_onnx_src_done(const sm_onnx_src *src, size_t off, size_t len)
{
    if (!src->mapped)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)(src->data + off), b = a + len;
    a = (a + page - 1) / page * page; /* whole pages inside the range */
    b = b / page * page;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}
