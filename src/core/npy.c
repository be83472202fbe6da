/*
 * npy.c - numpy .npy files (format versions 1.0, 2.0 and 3.0), the files
 * users hand to the CLI. Everything read is untrusted: the header is
 * bounded, the shape overflow-checked, the data length checked against the
 * header before anything is allocated. The header dict is parsed as a
 * grammar (each key once, nothing after it); Fortran-order arrays are
 * transposed into C order on load.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/file.h"
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

/* ---- the header dict ------------------------------------------------------
 * numpy writes a Python dict literal with exactly three keys:
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ended by a newline. It is parsed as a grammar, not
 * searched: each key must appear once, no other key may, every value must
 * be of its kind, and nothing but whitespace may follow the closing brace. */

typedef struct npy_header {
    char descr[16];
    int fortran; /* -1: not seen */
    int ndim;    /* -1: not seen */
    int64_t dims[SMELT_MAX_DIMS];
} npy_header;

typedef struct hparse {
    smelt_ctx_t *ctx;
    const char *name, *p;
} hparse;

static void skip_ws(hparse *h)
{
    while (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')
        h->p++;
}

static smelt_status hbad(hparse *h, const char *what)
{
    return sm_err(h->ctx, SMELT_ERR_PARSE,
                  "%s: malformed .npy header: %s near '%.12s'", h->name, what,
                  h->p);
}

/* A quoted string ('...' or "...") of at most cap-1 characters, no escapes
 * (numpy never writes any in the three keys or a dtype). */
static smelt_status parse_str(hparse *h, char *out, size_t cap)
{
    char q = *h->p;
    if (q != '\'' && q != '"')
        return hbad(h, "expected a quoted string");
    const char *s = ++h->p, *e = strchr(s, q);
    if (!e || memchr(s, '\\', (size_t)(e - s)))
        return hbad(h, "unterminated string");
    if ((size_t)(e - s) >= cap)
        return hbad(h, "string too long");
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = 0;
    h->p = e + 1;
    return SMELT_OK;
}

/* True or False, as a whole word. */
static smelt_status parse_bool(hparse *h, int *out)
{
    if (!strncmp(h->p, "True", 4))
        *out = 1;
    else if (!strncmp(h->p, "False", 5))
        *out = 0;
    else
        return hbad(h, "'fortran_order' must be True or False");
    h->p += *out ? 4 : 5;
    if ((*h->p >= 'a' && *h->p <= 'z') || (*h->p >= 'A' && *h->p <= 'Z') ||
        *h->p == '_' || (*h->p >= '0' && *h->p <= '9'))
        return hbad(h, "'fortran_order' must be True or False");
    return SMELT_OK;
}

/* A tuple of non-negative integers: (), (3,), (2, 3) or (2, 3,). */
static smelt_status parse_tuple(hparse *h, npy_header *hd)
{
    if (*h->p != '(')
        return hbad(h, "'shape' must be a tuple");
    h->p++;
    hd->ndim = 0;
    int comma = 0;
    for (;;) {
        skip_ws(h);
        if (*h->p == ')') {
            if (hd->ndim == 1 && !comma) /* (3) is an int, not a tuple */
                return hbad(h, "a one-dimensional 'shape' needs its comma");
            h->p++;
            return SMELT_OK;
        }
        if (*h->p < '0' || *h->p > '9')
            return hbad(h, "expected a dimension");
        if (hd->ndim == SMELT_MAX_DIMS)
            return sm_err(h->ctx, SMELT_ERR_LIMIT,
                          "%s: more than %d dimensions", h->name,
                          SMELT_MAX_DIMS);
        int64_t d = 0;
        while (*h->p >= '0' && *h->p <= '9') {
            if (d > (INT64_MAX - 9) / 10)
                return sm_err(h->ctx, SMELT_ERR_LIMIT,
                              "%s: dimension does not fit in int64", h->name);
            d = d * 10 + (*h->p++ - '0');
        }
        if (*h->p == 'L') /* python 2 longs */
            h->p++;
        hd->dims[hd->ndim++] = d;
        skip_ws(h);
        comma = *h->p == ',';
        if (comma)
            h->p++;
        else if (*h->p != ')')
            return hbad(h, "expected ',' or ')' in 'shape'");
    }
}

/* The whole dict, into hd; every key exactly once, nothing after it. */
static smelt_status parse_header(smelt_ctx_t *ctx, const char *name,
                                 const char *text, npy_header *hd)
{
    hparse h = {ctx, name, text};
    hd->descr[0] = 0;
    hd->fortran = hd->ndim = -1;
    skip_ws(&h);
    if (*h.p != '{')
        return hbad(&h, "expected '{'");
    h.p++;
    for (;;) {
        skip_ws(&h);
        if (*h.p == '}')
            break;
        char key[32];
        SM_TRY(parse_str(&h, key, sizeof key));
        skip_ws(&h);
        if (*h.p != ':')
            return hbad(&h, "expected ':'");
        h.p++;
        skip_ws(&h);
        int seen;
        if (!strcmp(key, "descr")) {
            seen = hd->descr[0] != 0;
            if (*h.p == '[')
                return sm_err(ctx, SMELT_ERR_UNSUPPORTED,
                              "%s: structured dtypes are not supported", name);
            if (!seen)
                SM_TRY(parse_str(&h, hd->descr, sizeof hd->descr));
        } else if (!strcmp(key, "fortran_order")) {
            seen = hd->fortran >= 0;
            if (!seen)
                SM_TRY(parse_bool(&h, &hd->fortran));
        } else if (!strcmp(key, "shape")) {
            seen = hd->ndim >= 0;
            if (!seen)
                SM_TRY(parse_tuple(&h, hd));
        } else {
            return sm_err(ctx, SMELT_ERR_PARSE,
                          "%s: malformed .npy header: unknown key '%s'", name,
                          key);
        }
        if (seen)
            return sm_err(ctx, SMELT_ERR_PARSE,
                          "%s: malformed .npy header: key '%s' given twice",
                          name, key);
        skip_ws(&h);
        if (*h.p == ',')
            h.p++;
        else if (*h.p != '}')
            return hbad(&h, "expected ',' or '}'");
    }
    h.p++;
    skip_ws(&h);
    if (*h.p)
        return hbad(&h, "text after the closing '}'");
    if (!hd->descr[0])
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: header has no 'descr'", name);
    if (hd->fortran < 0)
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: header has no 'fortran_order'",
                      name);
    if (hd->ndim < 0)
        return sm_err(ctx, SMELT_ERR_PARSE, "%s: header has no 'shape'", name);
    return SMELT_OK;
}

/* The dtype of a descr such as '<f4' or '|b1'. */
static smelt_status parse_descr(smelt_ctx_t *ctx, const char *name,
                                const char *d, smelt_dtype *dt)
{
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

/* Copies Fortran-order (column-major) data src into C order at dst: the
 * C-order walk keeps a multi-index and the matching column-major offset. */
static void fortran_to_c(unsigned char *dst, const unsigned char *src, int ndim,
                         const int64_t *dims, int64_t numel, size_t esize)
{
    int64_t idx[SMELT_MAX_DIMS] = {0}, stride[SMELT_MAX_DIMS];
    int64_t s = 1;
    for (int d = 0; d < ndim; d++) {
        stride[d] = s;
        s *= dims[d];
    }
    int64_t off = 0;
    for (int64_t i = 0; i < numel; i++) {
        memcpy(dst + (size_t)i * esize, src + (size_t)off * esize, esize);
        for (int d = ndim - 1; d >= 0; d--) {
            off += stride[d];
            if (++idx[d] < dims[d])
                break;
            off -= stride[d] * dims[d];
            idx[d] = 0;
        }
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
    npy_header hd;
    SM_TRY(parse_header(ctx, name, h, &hd));
    smelt_dtype dt = SMELT_DTYPE_UNDEFINED;
    int ndim = hd.ndim;
    int64_t *dims = hd.dims, numel;
    SM_TRY(parse_descr(ctx, name, hd.descr, &dt));
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
    if (have > need)
        return sm_err(ctx, SMELT_ERR_PARSE,
                      "%s: %zu bytes of trailing data after the %zu the "
                      "header promises",
                      name, have - need, need);
    SM_TRY(sm_tensor_new(ctx, dt, ndim, dims, out));
    if (need && hd.fortran && ndim > 1)
        fortran_to_c((*out)->data, b + hstart + hlen, ndim, dims, numel,
                     smelt_dtype_size(dt));
    else if (need)
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
    char *buf = NULL;
    size_t n = 0;
    SM_TRY(sm_read_regular_file(ctx, path, SM_ALLOC_LIMIT, &buf, &n));
    smelt_status st = smelt_npy_parse(ctx, buf, n, path, out);
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
