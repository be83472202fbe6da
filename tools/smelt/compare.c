/*
 * compare.c - `smelt compare A.npy B.npy [--atol A] [--rtol R]`: how far
 * two tensors are apart (max absolute and relative error), and whether
 * every element is within |a - b| <= atol + rtol * |b|, numpy's allclose
 * rule with B as the reference; infinities match only themselves and NaN
 * fails (unless --equal-nan). Exit status 0 when within, 1 when not.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"

#define DEFAULT_ATOL 1e-5
#define DEFAULT_RTOL 1e-4

void cli_compare_help(FILE *out)
{
    fprintf(
        out,
        "compare two .npy tensors: max abs/rel error, tolerance check\n\n"
        "usage: smelt compare A.npy B.npy [--atol A] [--rtol R] "
        "[--equal-nan]\n\n"
        "Prints the shape, the largest absolute error |a - b| (and where),\n"
        "the largest relative error |a - b| / |b| over the finite elements\n"
        "with b != 0, and whether every element satisfies\n"
        "|a - b| <= atol + rtol * |b| (B is the reference; defaults atol\n"
        "%g, rtol %g). An infinity matches only the same infinity; a NaN\n"
        "in either file is an error (counted apart), unless --equal-nan\n"
        "lets NaN match NaN. Exit status 0 when every element passes, 1\n"
        "when not or when the shapes differ.\n",
        DEFAULT_ATOL, DEFAULT_RTOL);
    cli_options_help(out, "compare");
}

/* "f32[2,3]" */
static void fprint_type(FILE *f, const smelt_tensor_t *t)
{
    fprintf(f, "%s[", smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t); i++)
        fprintf(f, "%s%lld", i ? "," : "", (long long)smelt_tensor_dim(t, i));
    fprintf(f, "]");
}

static void print_type(const smelt_tensor_t *t)
{
    fprint_type(stdout, t);
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
                   const smelt_tensor_t *b, double atol, double rtol,
                   int equal_nan)
{
    printf("%s vs %s: ", pa, pb);
    print_type(a);
    if (smelt_tensor_dtype(a) != smelt_tensor_dtype(b)) {
        printf(" vs ");
        print_type(b);
    }
    printf("\n");
    if (!same_shape(a, b)) {
        fflush(stdout);
        fprintf(stderr, "smelt compare: the shapes differ: ");
        fprint_type(stderr, a);
        fprintf(stderr, " (%s) vs ", pa);
        fprint_type(stderr, b);
        fprintf(stderr, " (%s)\n", pb);
        return 1;
    }
    int64_t n = smelt_tensor_numel(a), worst = -1, bad = 0, first_bad = -1,
            nans = 0;
    double max_abs = 0, max_rel = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = smelt_tensor_get_f64(a, i), y = smelt_tensor_get_f64(b, i);
        double err;
        int ok;
        if (isnan(x) || isnan(y)) {
            /* NaN is never "0 error": it fails unless both are NaN and
             * --equal-nan says that is a match */
            ok = equal_nan && isnan(x) && isnan(y);
            nans += !ok;
            err = ok ? 0 : INFINITY;
        } else if (isinf(x) || isinf(y)) {
            /* inf - inf is NaN and |x - inf| <= rtol * inf is always
             * true: infinities match only themselves */
            ok = x == y;
            err = ok ? 0 : INFINITY;
        } else {
            err = fabs(x - y);
            ok = err <= atol + rtol * fabs(y);
        }
        if (err > max_abs || (worst < 0 && err == max_abs)) {
            max_abs = err;
            worst = i;
        }
        if (y != 0 && isfinite(y) && isfinite(err) && err / fabs(y) > max_rel)
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
    if (nans)
        printf("%lld element(s) are NaN in one file or both%s\n",
               (long long)nans,
               equal_nan ? "" : " (--equal-nan lets NaN match NaN)");
    return 1;
}

int cli_compare(int argc, char **argv)
{
    cli_args args;
    int rc = cli_args_parse(&args, "compare", argc, argv, 2, 2, ".npy files");
    if (rc) {
        cli_args_free(&args);
        return rc;
    }
    const char *files[2] = {args.files[0], args.files[1]};
    double atol = cli_real(&args, CLI_OPT_atol, DEFAULT_ATOL),
           rtol = cli_real(&args, CLI_OPT_rtol, DEFAULT_RTOL);
    int equal_nan = args.given[CLI_OPT_equal_nan] > 0;
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_tensor_t *a = NULL, *b = NULL;
    if (smelt_npy_load(ctx, files[0], &a) != SMELT_OK)
        rc = cli_fail(ctx, files[0]);
    else if (smelt_npy_load(ctx, files[1], &b) != SMELT_OK)
        rc = cli_fail(ctx, files[1]);
    else
        rc = compare(files[0], a, files[1], b, atol, rtol, equal_nan);
    smelt_tensor_free(a);
    smelt_tensor_free(b);
    smelt_ctx_free(ctx);
    cli_args_free(&args);
    return rc;
}
