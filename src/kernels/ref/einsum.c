/*
 * einsum.c - Einsum's equation parser (einsum.h) and the reference
 * kernel: a loop over the full index space of all labels, each point
 * adding the product of the operands' elements to the output element its
 * output labels select. Simple and obviously right, at any speed.
 */
#include "kernels/ref/einsum.h"

#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "kernels/ops.h"
#include "kernels/ref/ref_util.h"

/* The reference loop visits every point of the label space: at most this
 * many. */
#define SM_EINSUM_MAX_POINTS ((int64_t)1 << 40)

/* Index 0..51 of a letter (a-z, then A-Z), -1 for anything else. */
static int letter_index(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + c - 'A';
    return -1;
}

/* One term of the equation, spaces removed: its letters in order and
 * where the ellipsis sits (-1: none). */
typedef struct term {
    char letters[SM_EINSUM_MAX_LABELS];
    int n, ell;
} term;

/* Reads a term from *p up to ',', '-' or the end. */
static smelt_status read_term(smelt_ctx_t *ctx, const char *op, const char **p,
                              term *t)
{
    const char *s = *p;
    t->n = 0;
    t->ell = -1;
    while (*s && *s != ',' && *s != '-') {
        if (*s == ' ') {
            s++;
        } else if (*s == '.') {
            if (strncmp(s, "...", 3) != 0 || t->ell >= 0)
                return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                              "%s: equation: '.' must come as one '...' per "
                              "term",
                              op);
            t->ell = t->n;
            s += 3;
        } else if (letter_index(*s) >= 0 && t->n < SMELT_MAX_DIMS) {
            t->letters[t->n++] = *s++;
        } else {
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          letter_index(*s) < 0
                              ? "%s: equation: unexpected character '%c'"
                              : "%s: equation: a term has more than 8 letters "
                                "(at '%c')",
                          op, *s);
        }
    }
    *p = s;
    return SMELT_OK;
}

/* The id of letter c, made on first sight. */
static int letter_id(sm_einsum *e, int *ids, char c)
{
    int li = letter_index(c);
    if (ids[li] < 0) {
        ids[li] = e->n_labels;
        e->letter[e->n_labels++] = c;
    }
    return ids[li];
}

/* Fills operand k's labels from its term (rank known). */
static smelt_status bind_term(smelt_ctx_t *ctx, const char *op, sm_einsum *e,
                              int k, const term *t, int *ids)
{
    int ell = e->rank[k] - t->n;
    if (ell < 0 || (t->ell < 0 && ell != 0))
        return sm_err(ctx, SMELT_ERR_SHAPE,
                      "%s: operand %d has rank %d but its term has %d "
                      "letters%s",
                      op, k, e->rank[k], t->n, t->ell >= 0 ? " and '...'" : "");
    int d = 0;
    for (int i = 0; i <= t->n; i++) {
        if (i == t->ell)
            for (int j = 0; j < ell; j++)
                e->label[k][d++] = e->n_ell - ell + j;
        if (i < t->n)
            e->label[k][d++] = letter_id(e, ids, t->letters[i]);
    }
    return SMELT_OK;
}

/* The output labels: explicit (term `out`) or numpy's implicit order. */
static smelt_status bind_output(smelt_ctx_t *ctx, const char *op, sm_einsum *e,
                                const term *out, int explicit_out,
                                const int *count, int *ids)
{
    int n = 0;
    int want_ell = explicit_out ? out->ell : 0;
    int n_letters = explicit_out ? out->n : 52;
    for (int i = 0; i <= n_letters; i++) {
        if (i == want_ell && n + e->n_ell > SMELT_MAX_DIMS)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "%s: the output would have more than %d dims", op,
                          SMELT_MAX_DIMS);
        if (i == want_ell)
            for (int j = 0; j < e->n_ell; j++)
                e->out_label[n++] = j;
        if (i == n_letters)
            break;
        int li = explicit_out ? letter_index(out->letters[i]) : -1;
        if (!explicit_out) { /* sorted: A-Z before a-z, as in ASCII */
            li = i < 26 ? 26 + i : i - 26;
            if (count[li] != 1)
                continue;
        } else if (!count[li]) {
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: output label '%c' does not appear in the inputs",
                          op, out->letters[i]);
        }
        int id = ids[li];
        for (int j = 0; j < n; j++)
            if (e->out_label[j] == id)
                return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                              "%s: output label '%c' is repeated", op,
                              out->letters[i]);
        if (n == SMELT_MAX_DIMS)
            return sm_err(ctx, SMELT_ERR_SHAPE,
                          "%s: the output would have more than %d dims", op,
                          SMELT_MAX_DIMS);
        e->out_label[n++] = id;
    }
    e->out_rank = n;
    return SMELT_OK;
}

smelt_status sm_einsum_parse(smelt_ctx_t *ctx, const char *op, const char *eq,
                             int n_in, const int *rank, sm_einsum *e)
{
    memset(e, 0, sizeof *e);
    if (n_in < 1 || n_in > SM_EINSUM_MAX_IN)
        return sm_err(ctx, SMELT_ERR_LIMIT, "%s: %d operands; expected 1 to %d",
                      op, n_in, SM_EINSUM_MAX_IN);
    e->n_in = n_in;
    term t[SM_EINSUM_MAX_IN], out = {{0}, 0, -1};
    const char *p = eq;
    int n = 0;
    for (;;) {
        if (n == n_in)
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: equation '%s' has more terms than the %d "
                          "inputs",
                          op, eq, n_in);
        SM_TRY(read_term(ctx, op, &p, &t[n++]));
        if (*p != ',')
            break;
        p++;
    }
    int explicit_out = *p == '-';
    if (explicit_out) {
        if (p[1] != '>')
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: equation: '-' must start '->'", op);
        p += 2;
        SM_TRY(read_term(ctx, op, &p, &out));
        if (*p)
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: equation: unexpected '%c' in the output", op,
                          *p);
    }
    if (n != n_in)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "%s: equation '%s' has %d terms for %d inputs", op, eq, n,
                      n_in);
    int ids[52], count[52] = {0};
    memset(ids, -1, sizeof ids);
    for (int k = 0; k < n_in; k++) {
        e->rank[k] = rank[k] >= 0 || t[k].ell >= 0 ? rank[k] : t[k].n;
        if (t[k].ell >= 0 && rank[k] < 0)
            e->rank_unknown = 1;
        else if (t[k].ell >= 0 && rank[k] - t[k].n > e->n_ell)
            e->n_ell = rank[k] - t[k].n;
        for (int i = 0; i < t[k].n; i++)
            count[letter_index(t[k].letters[i])]++;
    }
    if (explicit_out && out.ell >= 0 && !e->n_ell && !e->rank_unknown) {
        int any = 0;
        for (int k = 0; k < n_in; k++)
            any |= t[k].ell >= 0;
        if (!any)
            return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                          "%s: the output has '...' but no input does", op);
    }
    for (int j = 0; j < e->n_ell; j++)
        e->letter[e->n_labels++] = '.';
    for (int k = 0; k < n_in && !e->rank_unknown; k++)
        SM_TRY(bind_term(ctx, op, e, k, &t[k], ids));
    if (e->rank_unknown)
        return SMELT_OK;
    return bind_output(ctx, op, e, &out, explicit_out, count, ids);
}

smelt_status sm_einsum_sizes(smelt_ctx_t *ctx, const char *op,
                             const sm_einsum *e, const int64_t *const *dims,
                             int64_t *size)
{
    for (int l = 0; l < e->n_labels; l++) {
        int ell = e->letter[l] == '.', one = 0;
        size[l] = -1;
        for (int k = 0; k < e->n_in; k++) {
            for (int d = 0; d < e->rank[k]; d++) {
                int64_t v = dims[k][d];
                if (e->label[k][d] != l || v < 0)
                    continue;
                if (ell && v == 1) {
                    one = 1;
                    continue;
                }
                if (size[l] >= 0 && size[l] != v && ell)
                    return sm_err(ctx, SMELT_ERR_SHAPE,
                                  "%s: the dims under '...' do not "
                                  "broadcast: %lld against %lld",
                                  op, (long long)size[l], (long long)v);
                if (size[l] >= 0 && size[l] != v)
                    return sm_err(ctx, SMELT_ERR_SHAPE,
                                  "%s: label '%c' has size %lld in one place "
                                  "and %lld in another",
                                  op, e->letter[l], (long long)size[l],
                                  (long long)v);
                size[l] = v;
            }
        }
        if (size[l] < 0 && one) {
            int unknown = 0; /* 1 unless an unknown dim could be larger */
            for (int k = 0; k < e->n_in; k++)
                for (int d = 0; d < e->rank[k]; d++)
                    unknown |= e->label[k][d] == l && dims[k][d] < 0;
            size[l] = unknown ? -1 : 1;
        }
    }
    return SMELT_OK;
}

/* Strides of operand t over the labels (summed where a label repeats in
 * it, as 'ii'; 0 where an ellipsis dim of size 1 broadcasts). */
static void label_strides(const sm_einsum *e, int k, const sm_tensor *t,
                          const int64_t *size, int64_t *stride)
{
    int64_t st[SMELT_MAX_DIMS];
    sm_strides(t->ndim, t->dims, st);
    memset(stride, 0, sizeof(int64_t) * (size_t)e->n_labels);
    for (int d = 0; d < t->ndim; d++) {
        int l = e->label[k][d];
        if (t->dims[d] != 1 || size[l] == 1)
            stride[l] += st[d];
    }
}

/*
 * Einsum: checks the equation against the operands, then visits every
 * point of the label space once, accumulating in double (floats) or
 * int64 (integers, wrapping) before one store per output element.
 */
smelt_status sm_ref_einsum(const sm_kargs *a)
{
    const char *eq = sm_attrs_string(&a->attrs, "equation", NULL);
    sm_tensor *y = a->out[0];
    if (!eq)
        return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                      "%s: attribute equation is required", a->op_name);
    int rank[SM_EINSUM_MAX_IN];
    const int64_t *dims[SM_EINSUM_MAX_IN];
    for (int k = 0; k < a->n_in && k < SM_EINSUM_MAX_IN; k++) {
        if (!a->in[k])
            return sm_err(a->ctx, SMELT_ERR_INVALID_ARG,
                          "%s: input %d is missing", a->op_name, k);
        rank[k] = a->in[k]->ndim;
        dims[k] = a->in[k]->dims;
    }
    sm_einsum e;
    int64_t size[SM_EINSUM_MAX_LABELS];
    SM_TRY(sm_einsum_parse(a->ctx, a->op_name, eq, a->n_in, rank, &e));
    SM_TRY(sm_einsum_sizes(a->ctx, a->op_name, &e, dims, size));
    int64_t total = 1, out_n = 1;
    for (int l = 0; l < e.n_labels && total; l++) {
        if (size[l] && total > SM_EINSUM_MAX_POINTS / size[l])
            return sm_err(a->ctx, SMELT_ERR_LIMIT,
                          "%s: the index space of '%s' has more than %lld "
                          "points",
                          a->op_name, eq, (long long)SM_EINSUM_MAX_POINTS);
        total *= size[l];
    }
    for (int d = 0; d < e.out_rank; d++)
        out_n *= size[e.out_label[d]];
    if (y->ndim != e.out_rank || y->numel != out_n)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: output does not match the equation", a->op_name);
    int is_float = sm_dtype_is_float(y->dtype);
    double *acc = sm_calloc((size_t)(out_n ? out_n : 1), sizeof *acc);
    int64_t *iacc = sm_calloc((size_t)(out_n ? out_n : 1), sizeof *iacc);
    int64_t(*stride)[SM_EINSUM_MAX_LABELS] =
        sm_malloc(sizeof *stride * (size_t)(a->n_in + 1));
    if (!acc || !iacc || !stride) {
        sm_free(acc);
        sm_free(iacc);
        sm_free(stride);
        return sm_err_nomem(a->ctx);
    }
    for (int k = 0; k < a->n_in; k++)
        label_strides(&e, k, a->in[k], size, stride[k]);
    int64_t *ostride = stride[a->n_in], ost[SMELT_MAX_DIMS];
    sm_strides(y->ndim, y->dims, ost);
    memset(ostride, 0, sizeof stride[0]);
    for (int d = 0; d < e.out_rank; d++)
        ostride[e.out_label[d]] = ost[d];
    int64_t idx[SM_EINSUM_MAX_LABELS] = {0};
    for (int64_t pt = 0; pt < total; pt++) {
        double f = 1;
        uint64_t v = 1;
        int64_t yo = 0;
        for (int l = 0; l < e.n_labels; l++)
            yo += idx[l] * ostride[l];
        for (int k = 0; k < a->n_in; k++) {
            const sm_tensor *t = a->in[k];
            int64_t off = 0;
            for (int l = 0; l < e.n_labels; l++)
                off += idx[l] * stride[k][l];
            if (is_float)
                f *= sm_load_f64(t->dtype, t->data, off);
            else
                v *= (uint64_t)sm_load_i64(t->dtype, t->data, off);
        }
        acc[yo] += f;
        iacc[yo] = (int64_t)((uint64_t)iacc[yo] + v);
        sm_index_next(e.n_labels, size, idx);
    }
    for (int64_t i = 0; i < out_n; i++) {
        if (is_float)
            sm_store_f64(y->dtype, y->data, i, acc[i]);
        else
            sm_store_i64(y->dtype, y->data, i, iacc[i]);
    }
    sm_free(acc);
    sm_free(iacc);
    sm_free(stride);
    return SMELT_OK;
}
