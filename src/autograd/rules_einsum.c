/*
 * rules_einsum.c - the gradient rule of Einsum. The result is a sum of
 * products, so operand k's gradient is an einsum of the output gradient
 * with every other operand, whose output is operand k's own term:
 * "ij,jk->ik" gives dA = einsum("ik,jk->ij", dY, B). A label only operand
 * k has (summed inside it, as j in "ij->i") appears nowhere else: the
 * gradient is computed without it and then broadcast along it.
 *
 * A label repeated inside operand k (a diagonal, "ii->i") puts the
 * gradient back on the diagonal through an identity matrix operand.
 * Not differentiated (failing, naming the case): ellipsis dims that
 * broadcast (size 1 against a larger size) or whose sizes are unknown,
 * and repeated labels of unknown size (or above 4096).
 */
#include <stdio.h>

#include "autograd/rules_norm.h"
#include "core/dtype.h"
#include "kernels/ref/einsum.h"

/* A letter for every label: its own, or for an ellipsis dim one no
 * label uses. 0 when out of letters. */
static int label_letters(const sm_einsum *e, char *out)
{
    int used[128] = {0};
    for (int l = 0; l < e->n_labels; l++)
        if (e->letter[l] != '.')
            used[(unsigned char)e->letter[l]] = 1;
    const char *pool = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    int next = 0;
    for (int l = 0; l < e->n_labels; l++) {
        if (e->letter[l] != '.') {
            out[l] = e->letter[l];
            continue;
        }
        while (pool[next] && used[(unsigned char)pool[next]])
            next++;
        if (!pool[next])
            return 0;
        out[l] = pool[next];
        used[(unsigned char)pool[next]] = 1;
    }
    return 1;
}

/* Parses the forward node's equation and checks what the rule handles;
 * fills let[] with each label's letter. */
static smelt_status parse_forward(sm_grad_ctx *g, sm_einsum *e, char *let)
{
    const sm_node *n = g->n;
    sm_attrs at = sm_node_attrs(n);
    const char *eq = sm_attrs_string(&at, "equation", NULL);
    int rank[SM_EINSUM_MAX_IN];
    int64_t dims_st[SM_EINSUM_MAX_IN][SMELT_MAX_DIMS];
    const int64_t *dims[SM_EINSUM_MAX_IN];
    int64_t size[SM_EINSUM_MAX_LABELS];
    if (!eq || n->n_in > SM_EINSUM_MAX_IN)
        return sm_g_fail(g, SMELT_ERR_INVALID_ARG, "no equation");
    for (int k = 0; k < n->n_in; k++) {
        rank[k] = n->in[k]->type.ndim;
        if (rank[k] < 0)
            return sm_g_fail(g, SMELT_ERR_SHAPE,
                             "the rank of operand %d is unknown", k);
        for (int d = 0; d < rank[k]; d++)
            dims_st[k][d] = n->in[k]->type.dims[d].size;
        dims[k] = dims_st[k];
    }
    smelt_status st = sm_einsum_parse(g->ctx, "Einsum", eq, n->n_in, rank, e);
    if (st == SMELT_OK)
        st = sm_einsum_sizes(g->ctx, "Einsum", e, dims, size);
    if (st != SMELT_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", smelt_ctx_error(g->ctx));
        return sm_g_fail(g, st, "%s", msg);
    }
    for (int k = 0; k < n->n_in; k++)
        for (int d = 0; d < rank[k]; d++) {
            int l = e->label[k][d];
            if (e->letter[l] == '.' &&
                (dims[k][d] < 0 || dims[k][d] != size[l]))
                return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                                 "operand %d's dims under '...' broadcast or "
                                 "are unknown (only equal, known sizes are "
                                 "differentiated)",
                                 k);
        }
    if (!label_letters(e, let))
        return sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                         "too many labels to name the gradient's equation");
    return SMELT_OK;
}

/* Appends the letters of labels[0..n) to *p. */
static void put_term(char **p, const char *let, const int *labels, int n)
{
    for (int i = 0; i < n; i++)
        *(*p)++ = let[labels[i]];
}

/* The identity matrix [size, size] of dtype dt, as a constant: the
 * delta that puts a gradient back on a diagonal. */
static sm_value *identity(sm_grad_ctx *g, smelt_dtype dt, int64_t size)
{
    if (size < 0 || size > 4096) {
        sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                  "a repeated label's size must be known and at most 4096");
        return NULL;
    }
    sm_tensor *t;
    int64_t dims[2] = {size, size};
    smelt_status st = sm_tensor_new(g->ctx, dt, 2, dims, &t);
    if (st != SMELT_OK)
        return nn_nomem(g);
    for (int64_t i = 0; i < size * size; i++)
        sm_store_f64(dt, t->data, i, i % (size + 1) == 0);
    sm_value *v = sm_rw_add_const(g->rw, g->b, "g_delta", t);
    return v ? v : nn_nomem(g);
}

/* Operand k's gradient: einsum(dy, the other operands -> k's term). A
 * label k repeats (a diagonal, "ii") gets a fresh letter for each repeat
 * and an identity operand tying the two; a label only k has is left out
 * of the einsum and broadcast back afterwards (Unsqueeze + Expand). */
static sm_value *operand_grad(sm_grad_ctx *g, const sm_einsum *e,
                              const char *let, int k)
{
    const sm_node *n = g->n;
    const sm_value *x = n->in[k];
    char eq[(SM_EINSUM_MAX_IN + 2 * SMELT_MAX_DIMS) * (SMELT_MAX_DIMS + 1)],
        *p = eq;
    sm_value *in[SM_EINSUM_MAX_IN + SMELT_MAX_DIMS + 1];
    int n_in = 0, used[128] = {0}, first[SM_EINSUM_MAX_LABELS];
    unsigned char present[SM_EINSUM_MAX_LABELS] = {0};
    for (int l = 0; l < e->n_labels; l++) {
        used[(unsigned char)let[l]] = 1;
        first[l] = -1;
    }
    put_term(&p, let, e->out_label, e->out_rank);
    in[n_in++] = g->dy[0];
    for (int i = 0; i < e->out_rank; i++)
        present[e->out_label[i]] = 1;
    for (int j = 0; j < n->n_in; j++) {
        if (j == k)
            continue;
        *p++ = ',';
        put_term(&p, let, e->label[j], e->rank[j]);
        in[n_in++] = n->in[j];
        for (int d = 0; d < e->rank[j]; d++)
            present[e->label[j][d]] = 1;
    }
    /* k's term with its repeats renamed, each repeat an identity operand */
    const char *pool = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char term[SMELT_MAX_DIMS];
    int next = 0;
    for (int d = 0; d < e->rank[k]; d++) {
        int l = e->label[k][d];
        if (first[l] < 0) {
            first[l] = d;
            term[d] = let[l];
            continue;
        }
        while (pool[next] && used[(unsigned char)pool[next]])
            next++;
        if (!pool[next]) {
            sm_g_fail(g, SMELT_ERR_UNSUPPORTED,
                      "too many labels to name the gradient's equation");
            return NULL;
        }
        term[d] = pool[next];
        used[(unsigned char)pool[next]] = 1;
        present[l] = 2; /* the identity gives its size */
        p += sprintf(p, ",%c%c", let[l], term[d]);
        in[n_in++] = identity(g, x->type.dtype, x->type.dims[d].size);
    }
    *p++ = '-';
    *p++ = '>';
    int64_t missing[SMELT_MAX_DIMS];
    int n_missing = 0;
    for (int d = 0; d < e->rank[k]; d++) {
        if (present[e->label[k][d]])
            *p++ = term[d];
        else
            missing[n_missing++] = d;
    }
    *p = 0;
    sm_node *nd = sm_g_node(g, SM_OP_Einsum, n_in, in, 1);
    if (nd && !sm_node_set_string(nd, "equation", eq))
        return nn_nomem(g);
    sm_value *r = sm_g_done(g, nd);
    if (n_missing)
        r = sm_g_expand_like(g, nn_unsqueeze(g, r, missing, n_missing), x);
    return r;
}

smelt_status sm_grad_einsum(sm_grad_ctx *g)
{
    sm_einsum e;
    char let[SM_EINSUM_MAX_LABELS];
    if (parse_forward(g, &e, let) != SMELT_OK)
        return g->st;
    for (int k = 0; k < g->n->n_in && g->st == SMELT_OK; k++)
        if (g->need[k])
            sm_g_set(g, k, operand_grad(g, &e, let, k));
    return g->st;
}
