/*
 * parse_value.c - the parser's helpers and its value-level grammar:
 * numbers, types, constant literals (checked against their dtype) and
 * node attributes (typed by the op's schema where the text leaves it open).
 */
#include "ir/parse.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "ir/text.h"

void *sm_parse_grow(void *old, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return old;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc = nc > SIZE_MAX / 2 ? need : nc * 2;
    if (nc > SIZE_MAX / elem)
        return NULL;
    void *np = sm_realloc(old, nc * elem);
    if (np)
        *cap = nc;
    return np;
}

smelt_status sm_parse_err(sm_parser *p, const sm_token *t, const char *fmt, ...)
{
    char msg[SM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sm_lex_error(&p->lx, t->line, t->col, SMELT_ERR_PARSE, "%s", msg);
}

smelt_status sm_parse_nomem(sm_parser *p)
{
    return sm_lex_error(&p->lx, p->tok.line, p->tok.col, SMELT_ERR_NOMEM,
                        "out of memory");
}

smelt_status sm_parse_next(sm_parser *p)
{
    return sm_lex_next(&p->lx, &p->tok);
}

/* "found 'x'" text for the current token. */
const char *sm_parse_found(sm_parser *p, char *buf, size_t size)
{
    sm_lex_describe(&p->tok, buf, size);
    return buf;
}

smelt_status sm_parse_expect(sm_parser *p, sm_tok_kind k, const char *what)
{
    if (p->tok.kind != k) {
        char f[80];
        return sm_parse_err(p, &p->tok, "expected %s, found %s", what,
                            sm_parse_found(p, f, sizeof f));
    }
    return sm_parse_next(p);
}

int sm_parse_is_word(const sm_token *t, const char *w)
{
    return t->kind == SM_TOK_IDENT && t->n == strlen(w) &&
           memcmp(t->s, w, t->n) == 0;
}

/* A name for messages: at most 64 bytes, non-printable bytes as '?'. */
const char *sm_parse_shown(const char *s, size_t n, char *buf)
{
    size_t k = 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (n > 64) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = 0;
    return buf;
}

/* The token's payload as a NUL-terminated string in the parser's arena,
 * escapes decoded. */
smelt_status sm_parse_str(sm_parser *p, const sm_token *t, const char **out,
                          size_t *len)
{
    char *d = sm_arena_alloc(&p->tmp, t->n + 1);
    if (!d)
        return sm_parse_nomem(p);
    size_t n;
    if (t->quoted)
        n = sm_lex_unescape(t->s, t->n, d);
    else {
        memcpy(d, t->s, t->n);
        d[t->n] = 0;
        n = t->n;
    }
    *out = d;
    if (len)
        *len = n;
    return SMELT_OK;
}

/* ---- numbers ----------------------------------------------------------- */

/* Copies a number token into buf (NUL-terminated) for strtod/strtoll. */
static smelt_status tok_copy(sm_parser *p, const sm_token *t, char *buf,
                             size_t size)
{
    if (t->text_len >= size)
        return sm_parse_err(
            p, t, "numeric literal of %zu characters is too long", t->text_len);
    memcpy(buf, t->text, t->text_len);
    buf[t->text_len] = 0;
    return SMELT_OK;
}

static smelt_status tok_int(sm_parser *p, const sm_token *t, int64_t *v)
{
    char buf[400], f[80];
    if (t->kind != SM_TOK_INT)
        return sm_parse_err(p, t, "expected an integer, found %s",
                            sm_parse_found(p, f, sizeof f));
    SM_TRY(tok_copy(p, t, buf, sizeof buf));
    errno = 0;
    char *end;
    long long x = strtoll(buf, &end, 10);
    if (errno == ERANGE || *end)
        return sm_parse_err(p, t, "integer literal %s is out of range for i64",
                            sm_parse_shown(t->text, t->text_len, f));
    *v = x;
    return SMELT_OK;
}

/* A u64 literal: 0 .. 2^64-1, beyond int64's range, so parsed with
 * strtoull (which would accept and negate a '-', hence the check). */
static smelt_status store_u64(sm_parser *p, const sm_token *t, void *buf,
                              size_t i)
{
    char text[400], f[80];
    SM_TRY(tok_copy(p, t, text, sizeof text));
    errno = 0;
    char *end;
    unsigned long long x = strtoull(text, &end, 10);
    if (text[0] == '-' || errno == ERANGE || *end)
        return sm_parse_err(p, t, "value %s is out of range for u64",
                            sm_parse_shown(t->text, t->text_len, f));
    ((uint64_t *)buf)[i] = (uint64_t)x;
    return SMELT_OK;
}

static int is_number(const sm_token *t)
{
    return t->kind == SM_TOK_INT || t->kind == SM_TOK_FLOAT ||
           sm_parse_is_word(t, "inf") || sm_parse_is_word(t, "nan");
}

static smelt_status tok_float(sm_parser *p, const sm_token *t, double *v)
{
    char buf[400], f[80];
    if (sm_parse_is_word(t, "inf")) {
        *v = INFINITY;
        return SMELT_OK;
    }
    if (sm_parse_is_word(t, "nan")) {
        *v = NAN;
        return SMELT_OK;
    }
    if (t->kind != SM_TOK_INT && t->kind != SM_TOK_FLOAT)
        return sm_parse_err(p, t, "expected a number, found %s",
                            sm_parse_found(p, f, sizeof f));
    SM_TRY(tok_copy(p, t, buf, sizeof buf));
    errno = 0;
    char *end;
    double x = strtod(buf, &end);
    if (*end || (errno == ERANGE && isinf(x)))
        return sm_parse_err(p, t, "float literal %s is out of range for f64",
                            sm_parse_shown(t->text, t->text_len, f));
    *v = x;
    return SMELT_OK;
}

/* ---- types and literals ------------------------------------------------ */

/* The graph's copy of a symbolic dimension name, shared by every use. */
static smelt_status intern_sym(sm_parser *p, const char *s, size_t n,
                               const char **out)
{
    const char *d = sm_strmap_get(&p->syms, s, n);
    if (!d) {
        char *c = sm_arena_strndup(&p->g->arena, s, n);
        if (!c || !sm_strmap_put(&p->syms, c, n, c))
            return sm_parse_nomem(p);
        d = c;
    }
    *out = d;
    return SMELT_OK;
}

/* type := DTYPE '[' ('*' | (dim (',' dim)*)?) ']' */
smelt_status sm_parse_type(sm_parser *p, sm_type *t)
{
    char f[80];
    sm_type_unknown(t);
    if (p->tok.kind != SM_TOK_IDENT)
        return sm_parse_err(p, &p->tok, "expected a type, found %s",
                            sm_parse_found(p, f, sizeof f));
    smelt_dtype dt = sm_dtype_from_name(p->tok.s, (int)p->tok.n);
    if (dt == SMELT_DTYPE_UNDEFINED && !sm_parse_is_word(&p->tok, "undef"))
        return sm_parse_err(p, &p->tok, "unknown dtype %s",
                            sm_parse_found(p, f, sizeof f));
    t->dtype = dt;
    SM_TRY(sm_parse_next(p));
    SM_TRY(sm_parse_expect(p, SM_TOK_LBRACKET, "'[' after the dtype"));
    if (p->tok.kind == SM_TOK_STAR) {
        SM_TRY(sm_parse_next(p));
        return sm_parse_expect(p, SM_TOK_RBRACKET, "']' after '*'");
    }
    t->ndim = 0;
    if (p->tok.kind == SM_TOK_RBRACKET)
        return sm_parse_next(p);
    for (;;) {
        if (t->ndim == SMELT_MAX_DIMS)
            return sm_parse_err(p, &p->tok, "too many dimensions (at most %d)",
                                SMELT_MAX_DIMS);
        sm_dim *d = &t->dims[t->ndim++];
        d->size = -1;
        d->sym = NULL;
        if (p->tok.kind == SM_TOK_INT) {
            SM_TRY(tok_int(p, &p->tok, &d->size));
            if (d->size < 0)
                return sm_parse_err(p, &p->tok, "dimension %lld is negative",
                                    (long long)d->size);
        } else if (p->tok.kind == SM_TOK_IDENT ||
                   p->tok.kind == SM_TOK_STRING) {
            const char *s = p->tok.s;
            size_t n = p->tok.n;
            if (p->tok.quoted)
                SM_TRY(sm_parse_str(p, &p->tok, &s, &n));
            SM_TRY(intern_sym(p, s, n, &d->sym));
        } else if (p->tok.kind != SM_TOK_QUESTION) {
            return sm_parse_err(p, &p->tok,
                                "expected a dimension (a size, '?' or a name), "
                                "found %s",
                                sm_parse_found(p, f, sizeof f));
        }
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind != SM_TOK_COMMA)
            return sm_parse_expect(p, SM_TOK_RBRACKET,
                                   "',' or ']' in the shape");
        SM_TRY(sm_parse_next(p));
    }
}

/* Stores v into element i of a float tensor of dtype dt, refusing finite
 * values that would become infinite. */
static smelt_status store_float(sm_parser *p, smelt_dtype dt, void *buf,
                                size_t i, double v)
{
    char f[80];
    if (dt == SMELT_DTYPE_F64) {
        ((double *)buf)[i] = v;
        return SMELT_OK;
    }
    int over = 0;
    float x;
    if (isfinite(v) && fabs(v) > FLT_MAX) {
        /* from 2^128 - 2^103 on, rounding to f32 gives infinity */
        over = fabs(v) >= 0x1.ffffffp+127;
        x = v < 0 ? -FLT_MAX : FLT_MAX;
    } else
        x = (float)v;
    uint16_t h = 0;
    if (dt == SMELT_DTYPE_F16) {
        h = sm_f32_to_f16(x);
        over |= isfinite(v) && (h & 0x7fff) == 0x7c00;
    } else if (dt == SMELT_DTYPE_BF16) {
        h = sm_f32_to_bf16(x);
        over |= isfinite(v) && (h & 0x7fff) == 0x7f80;
    }
    if (over)
        return sm_parse_err(p, &p->tok, "value %s is out of range for %s",
                            sm_parse_shown(p->tok.text, p->tok.text_len, f),
                            smelt_dtype_name(dt));
    if (dt == SMELT_DTYPE_F32)
        ((float *)buf)[i] = x;
    else
        ((uint16_t *)buf)[i] = h;
    return SMELT_OK;
}

/* Converts the current token to element i of a dtype-dt buffer. */
static smelt_status parse_elem(sm_parser *p, smelt_dtype dt, void *buf,
                               size_t i)
{
    char f[80];
    const sm_token *t = &p->tok;
    const char *dn = smelt_dtype_name(dt);
    if (dt == SMELT_DTYPE_BOOL) {
        int64_t v;
        if (sm_parse_is_word(t, "true") || sm_parse_is_word(t, "false"))
            v = sm_parse_is_word(t, "true");
        else if (t->kind == SM_TOK_INT) {
            SM_TRY(tok_int(p, t, &v));
            if (v != 0 && v != 1)
                return sm_parse_err(
                    p, t,
                    "value %lld is out of range for bool (write "
                    "true, false, 0 or 1)",
                    (long long)v);
        } else
            return sm_parse_err(
                p, t, "expected true, false, 0 or 1 for bool, found %s",
                sm_parse_found(p, f, sizeof f));
        ((uint8_t *)buf)[i] = (uint8_t)v;
        return SMELT_OK;
    }
    if (sm_dtype_is_float(dt)) {
        double v;
        if (!is_number(t))
            return sm_parse_err(p, t, "expected a number for %s, found %s", dn,
                                sm_parse_found(p, f, sizeof f));
        SM_TRY(tok_float(p, t, &v));
        return store_float(p, dt, buf, i, v);
    }
    if (t->kind != SM_TOK_INT) {
        if (is_number(t))
            return sm_parse_err(p, t,
                                "float literal %s in an integer (%s) tensor",
                                sm_parse_found(p, f, sizeof f), dn);
        return sm_parse_err(p, t, "expected an integer for %s, found %s", dn,
                            sm_parse_found(p, f, sizeof f));
    }
    if (dt == SMELT_DTYPE_U64)
        return store_u64(p, t, buf, i);
    int64_t v, lo = INT64_MIN, hi = INT64_MAX;
    SM_TRY(tok_int(p, t, &v));
    switch (dt) {
    case SMELT_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case SMELT_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case SMELT_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case SMELT_DTYPE_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case SMELT_DTYPE_U16: lo = 0, hi = UINT16_MAX; break;
    case SMELT_DTYPE_U32: lo = 0, hi = UINT32_MAX; break;
    default: break;
    }
    if (v < lo || v > hi)
        return sm_parse_err(p, t, "value %lld is out of range for %s",
                            (long long)v, dn);
    sm_store_i64(dt, buf, (int64_t)i, v);
    return SMELT_OK;
}

/* literal := number | '[' (number (',' number)*)? ']', for a tensor of
 * type t (fully known, checked by the caller). `what` names the tensor in
 * messages; type_tok is where the type was written. */
smelt_status sm_parse_literal(sm_parser *p, const sm_type *t, const char *what,
                              const sm_token *type_tok, sm_tensor **out)
{
    char ts[128];
    *out = NULL;
    int64_t dims[SMELT_MAX_DIMS], numel;
    for (int i = 0; i < t->ndim; i++)
        dims[i] = t->dims[i].size;
    smelt_ctx_t tmp = {SMELT_OK, {0}};
    size_t esz = smelt_dtype_size(t->dtype);
    sm_type_str(t, ts, sizeof ts);
    if (sm_shape_numel(&tmp, t->ndim, dims, esz, &numel) != SMELT_OK)
        return sm_parse_err(p, type_tok, "%s: type %s: %s", what, ts, tmp.msg);
    sm_token start = p->tok;
    size_t count = 0;
    int list = p->tok.kind == SM_TOK_LBRACKET;
    if (list)
        SM_TRY(sm_parse_next(p));
    if (!list || p->tok.kind != SM_TOK_RBRACKET) {
        for (;;) {
            /* values past numel are checked and counted, not kept */
            size_t at = count < (size_t)numel ? count : 0;
            GROW(p, buf, (at + 1) * esz);
            SM_TRY(parse_elem(p, t->dtype, p->buf, at));
            SM_TRY(sm_parse_next(p));
            count++;
            if (!list)
                break;
            if (p->tok.kind == SM_TOK_COMMA) {
                SM_TRY(sm_parse_next(p));
                continue;
            }
            if (p->tok.kind != SM_TOK_RBRACKET) {
                char f[80];
                return sm_parse_err(
                    p, &p->tok, "expected ',' or ']' in the literal, found %s",
                    sm_parse_found(p, f, sizeof f));
            }
            break;
        }
    }
    if (list)
        SM_TRY(sm_parse_next(p));
    if (count != (size_t)numel)
        return sm_parse_err(
            p, &start,
            "%s: type %s has %lld elements but the literal has %zu "
            "values",
            what, ts, (long long)numel, count);
    sm_tensor *x;
    if (sm_tensor_new(&tmp, t->dtype, t->ndim, dims, &x) != SMELT_OK)
        return tmp.code == SMELT_ERR_NOMEM
                   ? sm_parse_nomem(p)
                   : sm_parse_err(p, &start, "%s", tmp.msg);
    if (x->nbytes)
        memcpy(x->data, p->buf, x->nbytes);
    *out = x;
    return SMELT_OK;
}

/* Checks that a type is fully known, as constants and tensors need. */
smelt_status sm_parse_need_known(sm_parser *p, const sm_token *at,
                                 const sm_type *t, const char *what)
{
    if (sm_type_known(t) && t->dtype != SMELT_DTYPE_UNDEFINED)
        return SMELT_OK;
    char ts[128];
    sm_type_str(t, ts, sizeof ts);
    return sm_parse_err(p, at, "the type of %s must be fully known, not %s",
                        what, ts);
}

/* ---- attributes -------------------------------------------------------- */

/* '[' ... ']' as an ints, floats or strings attribute; the schema's kind
 * `want` settles an empty list and turns integers into floats. */
static smelt_status parse_list(sm_parser *p, sm_node *n, const char *name,
                               sm_attr_kind want)
{
    char f[80];
    size_t cnt = 0;
    int strs = 0, nums = 0, floats = 0;
    SM_TRY(sm_parse_next(p));
    while (p->tok.kind != SM_TOK_RBRACKET || cnt > 0) {
        if (cnt >= INT_MAX - 1)
            return sm_parse_err(p, &p->tok,
                                "attribute '%s' has too many elements", name);
        GROW(p, items, cnt + 1);
        sm_parse_item *it = &p->items[cnt];
        if (p->tok.kind == SM_TOK_STRING) {
            strs = 1;
            SM_TRY(sm_parse_str(p, &p->tok, &it->s, NULL));
        } else if (p->tok.kind == SM_TOK_INT) {
            nums = 1;
            SM_TRY(tok_int(p, &p->tok, &it->i));
            it->f = (double)it->i;
        } else if (is_number(&p->tok)) {
            nums = floats = 1;
            SM_TRY(tok_float(p, &p->tok, &it->f));
        } else if (p->tok.kind == SM_TOK_LBRACKET) {
            return sm_parse_err(p, &p->tok,
                                "nested lists are not allowed (attribute '%s')",
                                name);
        } else
            return sm_parse_err(p, &p->tok, "expected a list element, found %s",
                                sm_parse_found(p, f, sizeof f));
        if (strs && nums)
            return sm_parse_err(
                p, &p->tok, "attribute '%s' mixes strings and numbers", name);
        cnt++;
        SM_TRY(sm_parse_next(p));
        if (p->tok.kind != SM_TOK_COMMA) {
            if (p->tok.kind != SM_TOK_RBRACKET)
                return sm_parse_err(p, &p->tok,
                                    "expected ',' or ']' in the list, found %s",
                                    sm_parse_found(p, f, sizeof f));
            break;
        }
        SM_TRY(sm_parse_next(p));
    }
    SM_TRY(sm_parse_next(p));
    sm_attr_kind k = SM_ATTR_INTS;
    if (strs)
        k = SM_ATTR_STRINGS;
    else if (floats || want == SM_ATTR_FLOATS)
        k = SM_ATTR_FLOATS;
    else if (!nums && want == SM_ATTR_STRINGS)
        k = SM_ATTR_STRINGS;
    size_t esz = k == SM_ATTR_STRINGS ? sizeof(char *) : 8;
    GROW(p, buf, (cnt + 1) * esz);
    int ok;
    if (k == SM_ATTR_INTS) {
        int64_t *v = (int64_t *)(void *)p->buf;
        for (size_t i = 0; i < cnt; i++)
            v[i] = p->items[i].i;
        ok = sm_node_set_ints(n, name, v, (int)cnt);
    } else if (k == SM_ATTR_FLOATS) {
        double *v = (double *)(void *)p->buf;
        for (size_t i = 0; i < cnt; i++)
            v[i] = p->items[i].f;
        ok = sm_node_set_floats(n, name, v, (int)cnt);
    } else {
        const char **v = (const char **)(void *)p->buf;
        for (size_t i = 0; i < cnt; i++)
            v[i] = p->items[i].s;
        ok = sm_node_set_strings(n, name, v, (int)cnt);
    }
    return ok ? SMELT_OK : sm_parse_nomem(p);
}

/* attrval := INT | FLOAT | STRING | list | 'tensor' type literal */
static smelt_status parse_attr_value(sm_parser *p, sm_node *n, const char *name)
{
    char f[80];
    const sm_attr_spec *sp = sm_op_attr_spec(n->op, name);
    sm_attr_kind want = sp ? sp->kind : SM_ATTR_KIND_COUNT;
    int ok;
    if (p->tok.kind == SM_TOK_LBRACKET)
        return parse_list(p, n, name, want);
    if (sm_parse_is_word(&p->tok, "tensor")) {
        sm_type t;
        SM_TRY(sm_parse_next(p));
        sm_token tt = p->tok;
        char what[128];
        snprintf(what, sizeof what, "tensor attribute '%s'", name);
        SM_TRY(sm_parse_type(p, &t));
        SM_TRY(sm_parse_need_known(p, &tt, &t, what));
        sm_tensor *x;
        SM_TRY(sm_parse_literal(p, &t, what, &tt, &x));
        return sm_node_set_tensor(n, name, x) ? SMELT_OK : sm_parse_nomem(p);
    }
    if (p->tok.kind == SM_TOK_STRING) {
        const char *s;
        SM_TRY(sm_parse_str(p, &p->tok, &s, NULL));
        ok = sm_node_set_string(n, name, s);
    } else if (p->tok.kind == SM_TOK_INT && want != SM_ATTR_FLOAT) {
        int64_t v;
        SM_TRY(tok_int(p, &p->tok, &v));
        ok = sm_node_set_int(n, name, v);
    } else if (is_number(&p->tok)) {
        double v;
        SM_TRY(tok_float(p, &p->tok, &v));
        ok = sm_node_set_float(n, name, v);
    } else
        return sm_parse_err(p, &p->tok,
                            "expected a value for attribute '%s', found %s",
                            name, sm_parse_found(p, f, sizeof f));
    if (!ok)
        return sm_parse_nomem(p);
    return sm_parse_next(p);
}

/* attrs := '{' NAME '=' attrval (',' NAME '=' attrval)* '}' */
smelt_status sm_parse_attrs(sm_parser *p, sm_node *n)
{
    char f[80];
    SM_TRY(sm_parse_next(p));
    for (;;) {
        if (p->tok.kind != SM_TOK_IDENT && p->tok.kind != SM_TOK_STRING)
            return sm_parse_err(p, &p->tok,
                                "expected an attribute name, found %s",
                                sm_parse_found(p, f, sizeof f));
        const char *name;
        size_t len;
        sm_token nt = p->tok;
        SM_TRY(sm_parse_str(p, &nt, &name, &len));
        if (n->n_attr >= SM_PARSE_MAX_ATTRS)
            return sm_parse_err(p, &nt, "more than %d attributes on one node",
                                SM_PARSE_MAX_ATTRS);
        if (sm_node_attr(n, name))
            return sm_parse_err(p, &nt, "duplicate attribute '%s'",
                                sm_parse_shown(name, len, f));
        SM_TRY(sm_parse_next(p));
        SM_TRY(
            sm_parse_expect(p, SM_TOK_EQUAL, "'=' after the attribute name"));
        SM_TRY(parse_attr_value(p, n, name));
        if (p->tok.kind != SM_TOK_COMMA)
            return sm_parse_expect(p, SM_TOK_RBRACE,
                                   "',' or '}' in the attributes");
        SM_TRY(sm_parse_next(p));
    }
}
