/*
 * check_util.c - comparison, random inputs and memory measurement for
 * `smelt check`.
 */
#include "check_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- comparison ---------------------------------------------------------- */

void cli_tolerance(smelt_dtype dt, double *rtol, double *atol)
{
    switch (dt) {
    case SMELT_DTYPE_F32: *rtol = 1.3e-6, *atol = 1e-5; break;
    case SMELT_DTYPE_F64: *rtol = 1e-7, *atol = 1e-7; break;
    case SMELT_DTYPE_F16: *rtol = 1e-3, *atol = 1e-5; break;
    case SMELT_DTYPE_BF16: *rtol = 1.6e-2, *atol = 1e-5; break;
    default: *rtol = 0, *atol = 0; break;
    }
}

void cli_tensor_type_str(const smelt_tensor_t *t, char *buf, size_t size)
{
    if (!t) {
        snprintf(buf, size, "(none)");
        return;
    }
    int k = snprintf(buf, size, "%s[", smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t) && k > 0 && (size_t)k < size; i++)
        k += snprintf(buf + k, size - (size_t)k, "%s%lld", i ? "," : "",
                      (long long)smelt_tensor_dim(t, i));
    if (k > 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, "]");
}

static int same_type(const smelt_tensor_t *a, const smelt_tensor_t *b)
{
    if (smelt_tensor_dtype(a) != smelt_tensor_dtype(b) ||
        smelt_tensor_ndim(a) != smelt_tensor_ndim(b))
        return 0;
    for (int i = 0; i < smelt_tensor_ndim(a); i++)
        if (smelt_tensor_dim(a, i) != smelt_tensor_dim(b, i))
            return 0;
    return 1;
}

void cli_cmp_tensors(const smelt_tensor_t *want, const smelt_tensor_t *got,
                     double rtol, double atol, cli_cmp *r)
{
    memset(r, 0, sizeof *r);
    cli_tolerance(want ? smelt_tensor_dtype(want) : SMELT_DTYPE_F32, &r->rtol,
                  &r->atol);
    if (rtol >= 0)
        r->rtol = rtol;
    if (atol >= 0)
        r->atol = atol;
    if (!want || !got || !same_type(want, got)) {
        char a[48], b[48];
        cli_tensor_type_str(want, a, sizeof a);
        cli_tensor_type_str(got, b, sizeof b);
        snprintf(r->why, sizeof r->why, "TYPE %s, expected %s", b, a);
        r->max_abs = r->max_rel = INFINITY;
        return;
    }
    int64_t bad = 0, n = smelt_tensor_numel(want);
    for (int64_t i = 0; i < n; i++) {
        double w = smelt_tensor_get_f64(want, i);
        double g = smelt_tensor_get_f64(got, i);
        double d;
        if (isnan(w) || isnan(g))
            d = isnan(w) && isnan(g) ? 0 : INFINITY;
        else if (isinf(w) || isinf(g))
            d = w == g ? 0 : INFINITY;
        else
            d = fabs(w - g);
        double rel = d == 0 ? 0 : w != 0 ? d / fabs(w) : INFINITY;
        if (d > r->max_abs)
            r->max_abs = d;
        if (rel > r->max_rel)
            r->max_rel = rel;
        if (!(d <= r->atol + r->rtol * (isfinite(w) ? fabs(w) : 0)))
            bad++;
    }
    r->ok = bad == 0;
    if (!r->ok)
        snprintf(r->why, sizeof r->why, "DIFFERS (%lld of %lld elements)",
                 (long long)bad, (long long)n);
}

void cli_human_size(char *buf, size_t size, int64_t b)
{
    if (b >= (int64_t)1 << 20)
        snprintf(buf, size, "%.1f MiB", (double)b / (1 << 20));
    else if (b >= 1024)
        snprintf(buf, size, "%.1f KiB", (double)b / 1024);
    else
        snprintf(buf, size, "%lld B", (long long)b);
}

/* ---- random inputs ------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* IEEE half of f, exact for the values used here: 0 or k/256 with
 * 0 < |k| <= 256 (normal halves, no rounding). */
static uint16_t half_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (f == 0)
        return (uint16_t)(u >> 16);
    uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff;
    return (uint16_t)(sign | ((exp - 127 + 15) << 10) | ((u >> 13) & 0x3ff));
}

void cli_fill_random(smelt_tensor_t *t, uint64_t *state)
{
    void *p = smelt_tensor_data(t);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++) {
        uint64_t r = splitmix64(state);
        int64_t small = (int64_t)(r % 4);
        float f = (float)((int64_t)(r % 512) - 256) / 256.0f;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        switch (smelt_tensor_dtype(t)) {
        case SMELT_DTYPE_F32: ((float *)p)[i] = f; break;
        case SMELT_DTYPE_F64: ((double *)p)[i] = f; break;
        case SMELT_DTYPE_F16: ((uint16_t *)p)[i] = half_of(f); break;
        case SMELT_DTYPE_BF16:
            ((uint16_t *)p)[i] = (uint16_t)(bits >> 16);
            break;
        case SMELT_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)small; break;
        case SMELT_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)small; break;
        case SMELT_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)small; break;
        case SMELT_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)small; break;
        case SMELT_DTYPE_I64: ((int64_t *)p)[i] = small; break;
        case SMELT_DTYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(r & 1); break;
        default: break;
        }
    }
}

static int is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
           dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
}

int cli_cast_float(smelt_ctx_t *ctx, const smelt_tensor_t *t, smelt_dtype dt,
                   smelt_tensor_t **out)
{
    *out = NULL;
    if (!is_float(dt) || !is_float(smelt_tensor_dtype(t)))
        return 1;
    int nd = smelt_tensor_ndim(t);
    int64_t dims[SMELT_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        dims[d] = smelt_tensor_dim(t, d);
    if (smelt_tensor_init(ctx, dt, nd, dims, out) != SMELT_OK)
        return 1;
    void *p = smelt_tensor_data(*out);
    for (int64_t i = 0; i < smelt_tensor_numel(t); i++) {
        double v = smelt_tensor_get_f64(t, i);
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        switch (dt) {
        case SMELT_DTYPE_F32: ((float *)p)[i] = f; break;
        case SMELT_DTYPE_F64: ((double *)p)[i] = v; break;
        case SMELT_DTYPE_F16: ((uint16_t *)p)[i] = half_of(f); break;
        default: /* bf16: round to nearest even, NaN kept quiet */
            if (f != f)
                ((uint16_t *)p)[i] = (uint16_t)((bits >> 16) | 0x40);
            else
                ((uint16_t *)p)[i] =
                    (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
            break;
        }
    }
    return 0;
}

/* ---- memory -------------------------------------------------------------- */

/* Each block carries its size in a 16-byte header (keeping alignment). */
enum { HDR = 16 };
static int64_t mem_now, mem_top;

static void *tracking_alloc(void *user, void *ptr, size_t size)
{
    (void)user;
    char *base = ptr ? (char *)ptr - HDR : NULL;
    size_t old = 0;
    if (base)
        memcpy(&old, base, sizeof old);
    if (size == 0) {
        free(base);
        mem_now -= (int64_t)old;
        return NULL;
    }
    char *nb = realloc(base, size + HDR);
    if (!nb)
        return NULL;
    memcpy(nb, &size, sizeof size);
    mem_now += (int64_t)size - (int64_t)old;
    if (mem_now > mem_top)
        mem_top = mem_now;
    return nb + HDR;
}

void cli_mem_track_start(void)
{
    mem_now = mem_top = 0;
    smelt_set_allocator(tracking_alloc, NULL);
}

void cli_mem_track_stop(void)
{
    smelt_set_allocator(NULL, NULL);
}

int64_t cli_mem_reset_peak(void)
{
    mem_top = mem_now;
    return mem_now;
}

int64_t cli_mem_peak(void)
{
    return mem_top;
}
