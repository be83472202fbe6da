/*
 * compare.c - `smelt compare A.npy B.npy [--atol A] [--rtol R]`: how far
 * two tensors are apart (max absolute and relative error), and whether
 * every element is within |a - b| <= atol + rtol * |b|, numpy's allclose
 * rule with B as the reference. Exit status 0 when within, 1 when not.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DEFAULT_ATOL 1e-5
#define DEFAULT_RTOL 1e-4

void cli_compare_help(FILE *out)
{
    fprintf(
        out,
        "compare two .npy tensors: max abs/rel error, tolerance check\n\n"
        "usage: smelt compare A.npy B.npy [--atol A] [--rtol R]\n\n"
        "Prints the shape, the largest absolute error |a - b| (and where),\n"
        "the largest relative error |a - b| / |b| over the elements with\n"
        "b != 0, and whether every element satisfies\n"
        "|a - b| <= atol + rtol * |b| (B is the reference; NaN matches\n"
        "only NaN). Exit status 0 when it does, 1 when not or when the\n"
        "shapes differ.\n\n"
        "  --atol A   absolute tolerance (default %g)\n"
        "  --rtol R   relative tolerance (default %g)\n",
        DEFAULT_ATOL, DEFAULT_RTOL);
}

/* A non-negative number for option `opt`; -1 after a usage error. */
static int parse_tol(const char *s, const char *opt, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || *end || errno || !(*v >= 0) || isinf(*v)) {
        cli_usage_error("compare", "%s needs a number >= 0, got '%s'", opt, s);
        return -1;
    }
    return 0;
}

/* "f32[2,3]" */
static void print_type(const smelt_tensor_t *t)
{
    printf("%s[", smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t); i++)
        printf("%s%lld", i ? "," : "", (long long)smelt_tensor_dim(t, i));
    printf("]");
}

/* Flat index i of t as a multi-index "[0,417]". */
static void print_index(const smelt_tensor_t *t, int64_t i)
{
    int nd = smelt_tensor_ndim(t);
    int64_t idx[SMELT_MAX_DIMS];
    for (int d = nd - 1; d >= 0; d--) {
        int64_t n = smelt_tensor_dim(t, d);
        idx[d] = n ? i % n : 0;
        i = n ? i / n : 0;
    }
    printf("[");
    for (int d = 0; d < nd; d++)
        printf("%s%lld", d ? "," : "", (long long)idx[d]);
    printf("]");
}

static int same_shape(const smelt_tensor_t *a, const smelt_tensor_t *b)
{
    if (smelt_tensor_ndim(a) != smelt_tensor_ndim(b))
        return 0;
    for (int i = 0; i < smelt_tensor_ndim(a); i++)
        if (smelt_tensor_dim(a, i) != smelt_tensor_dim(b, i))
            return 0;
    return 1;
}

/* The comparison proper, once both tensors are loaded; returns the exit
 * status. */
static int compare(const char *pa, const smelt_tensor_t *a, const char *pb,
                   const smelt_tensor_t *b, double atol, double rtol)
{
    printf("%s vs %s: ", pa, pb);
    print_type(a);
    if (smelt_tensor_dtype(a) != smelt_tensor_dtype(b)) {
        printf(" vs ");
        print_type(b);
    }
    printf("\n");
    if (!same_shape(a, b)) {
        fprintf(stderr, "smelt compare: the shapes differ\n");
        return 1;
    }
    int64_t n = smelt_tensor_numel(a), worst = -1, bad = 0, first_bad = -1;
    double max_abs = 0, max_rel = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = smelt_tensor_get_f64(a, i), y = smelt_tensor_get_f64(b, i);
        double err = x == y ? 0 : fabs(x - y);
        int ok;
        if (isnan(x) || isnan(y)) {
            ok = isnan(x) && isnan(y);
            err = ok ? 0 : INFINITY;
        } else {
            ok = err <= atol + rtol * fabs(y);
        }
        if (err > max_abs || (worst < 0 && err == max_abs)) {
            max_abs = err;
            worst = i;
        }
        if (y != 0 && !isnan(y) && err / fabs(y) > max_rel)
            max_rel = err / fabs(y);
        if (!ok && bad++ == 0)
            first_bad = i;
    }
    printf("max abs error %.3g", max_abs);
    if (worst >= 0) {
        printf(" at ");
        print_index(a, worst);
        printf(" (%.9g vs %.9g)", smelt_tensor_get_f64(a, worst),
               smelt_tensor_get_f64(b, worst));
    }
    printf("\nmax rel error %.3g\n", max_rel);
    if (!bad) {
        printf("within tolerance (atol %g, rtol %g)\n", atol, rtol);
        return 0;
    }
    printf("NOT within tolerance (atol %g, rtol %g): %lld of %lld elements "
           "differ, the first at ",
           atol, rtol, (long long)bad, (long long)n);
    print_index(a, first_bad);
    printf("\n");
    return 1;
}

int cli_compare(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    int n_files = 0;
    double atol = DEFAULT_ATOL, rtol = DEFAULT_RTOL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--atol") || !strcmp(argv[i], "--rtol")) {
            const char *opt = argv[i];
            const char *v = cli_option_value(argc, argv, &i, "compare");
            if (!v || parse_tol(v, opt, opt[2] == 'a' ? &atol : &rtol))
                return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("compare", "unknown option '%s'", argv[i]);
        } else if (n_files == 2) {
            return cli_usage_error("compare", "more than two files given");
        } else {
            files[n_files++] = argv[i];
        }
    }
    if (n_files != 2)
        return cli_usage_error("compare", "two .npy files are needed");
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *a = NULL, *b = NULL;
    int rc = 0;
    if (smelt_npy_load(ctx, files[0], &a) != SMELT_OK)
        rc = cli_fail(ctx, files[0]);
    else if (smelt_npy_load(ctx, files[1], &b) != SMELT_OK)
        rc = cli_fail(ctx, files[1]);
    else
        rc = compare(files[0], a, files[1], b, atol, rtol);
    smelt_tensor_free(a);
    smelt_tensor_free(b);
    smelt_ctx_free(ctx);
    return rc;
}
