/*
 * npy.c - numpy .npy files (format versions 1.0, 2.0 and 3.0), the files
 * users hand to the CLI. Everything read is untrusted: the header is
 * bounded, the shape overflow-checked, the data length checked against the
 * header before anything is allocated.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

#define NPY_MAX_HEADER 65536

static const struct {
    const char *descr; /* without the byte-order character */
    smelt_dtype dt;
} npy_types[] = {
    {"f4", SMELT_DTYPE_F32}, {"f8", SMELT_DTYPE_F64}, {"f2", SMELT_DTYPE_F16},
    {"i1", SMELT_DTYPE_I8},  {"u1", SMELT_DTYPE_U8},  {"i2", SMELT_DTYPE_I16},
    {"i4", SMELT_DTYPE_I32}, {"i8", SMELT_DTYPE_I64}, {"b1", SMELT_DTYPE_BOOL},
    {"u2", SMELT_DTYPE_U16}, {"u4", SMELT_DTYPE_U32}, {"u8", SMELT_DTYPE_U64},
};

/* Finds `'key':` in the header dict and returns the text after the colon. */
static const char *dict_value(const char *h, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

static smelt_status parse_descr(smelt_ctx_t *ctx, const char *name,
                                const char *h, smelt_dtype *dt)
{
    const char *v = dict_value(h, "descr");
    if (!v || *v != '\'')
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: header has no 'descr'", name);
    v++;
    const char *end = strchr(v, '\'');
    if (!end || end - v > 8)
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: malformed 'descr'", name);
    char d[9];
    memcpy(d, v, (size_t)(end - v));
    d[end - v] = 0;
    const char *t = d;
    if (*t == '<' || *t == '|' || *t == '=')
        t++;
    else if (*t == '>' && strcmp(t + 1, "i1") && strcmp(t + 1, "u1") &&
             strcmp(t + 1, "b1"))
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "%s: big-endian dtype '%s' is not supported", name, d);
    else if (*t == '>')
        t++;
    for (size_t i = 0; i < sizeof npy_types / sizeof *npy_types; i++)
        if (!strcmp(t, npy_types[i].descr)) {
            *dt = npy_types[i].dt;
            return SMELT_OK;
        }
    return sm_err(ctx, SMELT_ERR_UNSUPPORTED, "%s: unsupported dtype '%s'",
                  name, d);
}

static smelt_status parse_shape(smelt_ctx_t *ctx, const char *name,
                                const char *h, int *ndim, int64_t *dims)
{
    const char *v = dict_value(h, "shape");
    if (!v || *v != '(')
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: header has no 'shape'", name);
    v++;
    *ndim = 0;
    for (;;) {
        while (*v == ' ' || *v == ',')
            v++;
        if (*v == ')')
            return SMELT_OK;
        if (*v < '0' || *v > '9')
            return sm_err(ctx, SMELT_ERR_PARSE,
                          "%s: malformed 'shape' near '%.10s'", name, v);
        if (*ndim == SMELT_MAX_DIMS)
            return sm_err(ctx, SMELT_ERR_LIMIT, "%s: more than %d dimensions",
                          name, SMELT_MAX_DIMS);
        int64_t d = 0;
        while (*v >= '0' && *v <= '9') {
            if (d > (INT64_MAX - 9) / 10)
                return sm_err(ctx, SMELT_ERR_LIMIT,
                              "%s: dimension does not fit in int64", name);
            d = d * 10 + (*v++ - '0');
        }
        if (*v == 'L') /* python 2 longs */
            v++;
        dims[(*ndim)++] = d;
    }
}

smelt_status smelt_npy_parse(smelt_ctx_t *ctx, const void *buf, size_t len,
                             const char *name, smelt_tensor_t **out)
{
    const unsigned char *b = buf;
    *out = NULL;
    if (!name)
        name = "<npy>";
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: not an .npy file (bad magic)",
                      name);
    int major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return sm_err(ctx, SMELT_ERR_PARSE, "%s: truncated header", name);
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
               (size_t)b[11] << 24;
        hstart = 12;
    } else {
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "%s: .npy format version %d is not supported", name,
                      major);
    }
    if (hlen > NPY_MAX_HEADER || hstart + hlen > len)
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "%s: header of %zu bytes runs past the end of the file "
                      "(%zu bytes)",
                      name, hlen, len);
    char h[NPY_MAX_HEADER + 1];
    memcpy(h, b + hstart, hlen);
    h[hlen] = 0;
    if (memchr(h, 0, hlen))
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: NUL byte in header", name);
    const char *fo = dict_value(h, "fortran_order");
    if (!fo)
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: header has no 'fortran_order'",
                      name);
    if (!strncmp(fo, "True", 4))
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                      "%s: Fortran-order arrays are not supported", name);
    smelt_dtype dt = SMELT_DTYPE_UNDEFINED;
    int ndim = 0;
    int64_t dims[SMELT_MAX_DIMS], numel;
    SM_TRY(parse_descr(ctx, name, h, &dt));
    SM_TRY(parse_shape(ctx, name, h, &ndim, dims));
    smelt_status st =
        sm_shape_numel(ctx, ndim, dims, smelt_dtype_size(dt), &numel);
    if (st != SMELT_OK) {
        sm_err_prefix(ctx, "%s: ", name);
        return st;
    }
    size_t need = (size_t)numel * smelt_dtype_size(dt);
    size_t have = len - hstart - hlen;
    if (have < need)
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "%s: truncated data: the header promises %zu bytes, "
                      "the file holds %zu",
                      name, need, have);
    SM_TRY(sm_tensor_new(ctx, dt, ndim, dims, out));
    if (need)
        memcpy((*out)->data, b + hstart + hlen, need);
    if (dt == SMELT_DTYPE_BOOL) /* normalize to 0/1 */
        for (int64_t i = 0; i < numel; i++)
            ((unsigned char *)(*out)->data)[i] =
                ((unsigned char *)(*out)->data)[i] != 0;
    return SMELT_OK;
}

smelt_status smelt_npy_load(smelt_ctx_t *ctx, const char *path,
                            smelt_tensor_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sm_err(ctx, SMELT_ERR_IO, "%s: %s", path, strerror(errno));
    smelt_status st = SMELT_OK;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0)
        st = sm_err(ctx, SMELT_ERR_IO, "%s: cannot determine size", path);
    else if ((unsigned long)n > SM_ALLOC_LIMIT)
        st = sm_err(ctx, SMELT_ERR_LIMIT, "%s: file of %ld bytes is too big",
                    path, n);
    unsigned char *buf = NULL;
    if (st == SMELT_OK && !(buf = sm_malloc((size_t)n)))
        st = sm_err_nomem(ctx);
    if (st == SMELT_OK && fread(buf, 1, (size_t)n, f) != (size_t)n)
        st = sm_err(ctx, SMELT_ERR_IO, "%s: read failed", path);
    fclose(f);
    if (st == SMELT_OK)
        st = smelt_npy_parse(ctx, buf, (size_t)n, path, out);
    sm_free(buf);
    return st;
}

/* numpy's descr for a dtype; NULL for bf16, which numpy lacks. */
static const char *npy_descr(smelt_dtype dt)
{
    for (size_t i = 0; i < sizeof npy_types / sizeof *npy_types; i++)
        if (npy_types[i].dt == dt)
            return npy_types[i].descr;
    return NULL;
}

smelt_status smelt_npy_save(smelt_ctx_t *ctx, const char *path,
                            const smelt_tensor_t *t)
{
    const char *d = npy_descr(t->dtype);
    if (!d)
        return sm_err(ctx, SMELT_ERR_UNSUPPORTED, "%s: numpy has no %s dtype",
                      path, smelt_dtype_name(t->dtype));
    char h[512];
    int k = snprintf(h, sizeof h,
                     "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     d[1] == '1' ? '|' : '<', d);
    for (int i = 0; i < t->ndim; i++)
        k += snprintf(h + k, sizeof h - (size_t)k, "%lld%s",
                      (long long)t->dims[i],
                      t->ndim == 1      ? ","
                      : i + 1 < t->ndim ? ", "
                                        : "");
    k += snprintf(h + k, sizeof h - (size_t)k, "), }");
    /* pad with spaces so that data starts on a 64-byte boundary */
    int total = 10 + k + 1;
    int pad = (64 - total % 64) % 64;
    memset(h + k, ' ', (size_t)pad);
    k += pad;
    h[k++] = '\n';
    unsigned char pre[10] = {0x93,
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             (unsigned char)(k & 0xff),
                             (unsigned char)(k >> 8)};
    FILE *f = fopen(path, "wb");
    if (!f)
        return sm_err(ctx, SMELT_ERR_IO, "%s: %s", path, strerror(errno));
    int ok = fwrite(pre, 1, 10, f) == 10 &&
             fwrite(h, 1, (size_t)k, f) == (size_t)k &&
             fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
    if (fclose(f) != 0)
        ok = 0;
    if (!ok)
        return sm_err(ctx, SMELT_ERR_IO, "%s: write failed: %s", path,
                      strerror(errno));
    return SMELT_OK;
}
