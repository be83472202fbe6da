/*
 * einsum.h - Einsum's equation, parsed once for the shape function and the
 * reference kernel, so the shape an output is allocated with and the loop
 * that fills it cannot disagree.
 *
 * Every distinct label gets an id: the ellipsis dims first (0..n_ell-1,
 * aligned right across operands, numpy-broadcast), then the letters in
 * order of first appearance.
 */
#ifndef SM_EINSUM_H
#define SM_EINSUM_H

#include <stdint.h>

#include "core/status.h"

#define SM_EINSUM_MAX_IN 32
#define SM_EINSUM_MAX_LABELS (52 + SMELT_MAX_DIMS)

typedef struct sm_einsum {
    int n_in;
    int rank_unknown; /* an operand with "..." has an unknown rank */
    int n_ell;        /* dims the ellipsis stands for (the most of any term) */
    int n_labels;
    char
        letter[SM_EINSUM_MAX_LABELS]; /* the label's letter; '.' for ellipsis */
    int rank[SM_EINSUM_MAX_IN];
    int label[SM_EINSUM_MAX_IN][SMELT_MAX_DIMS]; /* per operand dim */
    int out_rank;
    int out_label[SMELT_MAX_DIMS];
} sm_einsum;

/*
 * Parses `eq` ("ij,jk->ik", "...ii->...i", "i,i"; spaces are ignored) for
 * n_in operands of ranks rank[] (-1: unknown). Without "->" the output is
 * the ellipsis dims followed by the letters that appear once, in sorted
 * order (numpy's implicit mode). Fails, naming op, on bad syntax, a term
 * count other than n_in, a rank that does not fit its term, or an output
 * letter missing from the inputs or repeated.
 */
smelt_status sm_einsum_parse(smelt_ctx_t *ctx, const char *op, const char *eq,
                             int n_in, const int *rank, sm_einsum *e);

/*
 * The size of every label (size[n_labels]) from the operands' dims
 * (dims[k][d], -1 when unknown). A letter's known sizes must agree; an
 * ellipsis dim's known sizes other than 1 must agree (it broadcasts).
 * Unknown where nothing decides it.
 */
smelt_status sm_einsum_sizes(smelt_ctx_t *ctx, const char *op,
                             const sm_einsum *e, const int64_t *const *dims,
                             int64_t *size);

#endif
