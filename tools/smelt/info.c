/*
 * info.c - `smelt info FILE`: what a model is — its name, inputs and
 * outputs with their types, how many nodes of each op, and the size of
 * its constants (weights).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cli.h"

void cli_info_help(FILE *out)
{
    fprintf(out,
            "show what a model is: inputs, outputs, ops, parameters\n\n"
            "usage: smelt info FILE [options]\n\n"
            "Loads FILE (ONNX, text IR, or a script with --fn), infers its\n"
            "shapes and prints the graph's name, each input and output with\n"
            "its type, the number of nodes of each op (most frequent first)\n"
            "and the number and size of its constants.\n");
    cli_options_help(out, "info");
}

/* Appends to buf (size bytes, *k used), truncating at the end. */
static void append(char *buf, size_t size, size_t *k, const char *s)
{
    size_t n = strlen(s);
    if (*k + n >= size)
        n = size - 1 - *k;
    memcpy(buf + *k, s, n);
    *k += n;
    buf[*k] = 0;
}

/* "f32[batch,3,224,224]" from the accessors of input or output i. */
static void type_str(char *buf, size_t size, smelt_dtype dt, int ndim,
                     const smelt_graph_t *g, int i,
                     int64_t (*dim)(const smelt_graph_t *, int, int),
                     const char *(*dim_name)(const smelt_graph_t *, int, int))
{
    size_t k = 0;
    buf[0] = 0;
    append(buf, size, &k,
           dt == SMELT_DTYPE_UNDEFINED ? "?" : smelt_dtype_name(dt));
    if (ndim < 0) {
        append(buf, size, &k, "[...]");
        return;
    }
    append(buf, size, &k, "[");
    for (int a = 0; a < ndim; a++) {
        char num[32];
        const char *sym = dim_name(g, i, a);
        int64_t d = dim(g, i, a);
        snprintf(num, sizeof num, "%lld", (long long)d);
        if (a)
            append(buf, size, &k, ",");
        append(buf, size, &k, d >= 0 ? num : sym ? sym : "?");
    }
    append(buf, size, &k, "]");
}

typedef struct op_count {
    const char *op;
    int n;
} op_count;

/* Most frequent first, then by name. */
static int by_count(const void *pa, const void *pb)
{
    const op_count *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n < b->n ? 1 : -1;
    return strcmp(a->op, b->op);
}

/* Prints the op histogram; returns 1 when out of memory. */
static int print_ops(const smelt_graph_t *g)
{
    int n = smelt_graph_num_nodes(g), used = 0;
    printf("nodes: %d\n", n);
    op_count *ops = calloc((size_t)(n ? n : 1), sizeof *ops);
    const char **names = calloc((size_t)(n ? n : 1), sizeof *names);
    if (!ops || !names) {
        fprintf(stderr, "smelt info: out of memory\n");
        free(ops);
        free(names);
        return 1;
    }
    n = smelt_graph_node_ops(g, names, n);
    for (int i = 0; i < n; i++) {
        const char *op = names[i];
        int k = 0;
        while (k < used && strcmp(ops[k].op, op))
            k++;
        if (k == used)
            ops[used++].op = op;
        ops[k].n++;
    }
    qsort(ops, (size_t)used, sizeof *ops, by_count);
    for (int k = 0; k < used; k++)
        printf("  %-22s %6d\n", ops[k].op, ops[k].n);
    free(names);
    free(ops);
    return 0;
}

/* 46.7 MB, 3.1 kB, 512 B. */
static void print_bytes(double b)
{
    if (b >= 1e6)
        printf("%.1f MB", b / 1e6);
    else if (b >= 1e3)
        printf("%.1f kB", b / 1e3);
    else
        printf("%.0f B", b);
}

int cli_info(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&a, "info", argc, argv, 1, 1, "FILE");
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *file = a.files[0];
    smelt_ctx_t *ctx = smelt_ctx_init();
    smelt_graph_t *g = NULL;
    rc = cli_load_graph(ctx, file, 1, &g);
    if (!rc) {
        struct stat st;
        printf("graph: %s\n", smelt_graph_name(g));
        printf("file: %s", file);
        if (stat(file, &st) == 0) {
            printf(" (");
            print_bytes((double)st.st_size);
            printf(")");
        }
        printf("\n");
        char buf[512];
        printf("inputs:\n");
        for (int i = 0; i < smelt_graph_num_inputs(g); i++) {
            type_str(buf, sizeof buf, smelt_graph_input_dtype(g, i),
                     smelt_graph_input_ndim(g, i), g, i, smelt_graph_input_dim,
                     smelt_graph_input_dim_name);
            printf("  %s: %s\n", smelt_graph_input_name(g, i), buf);
        }
        printf("outputs:\n");
        for (int i = 0; i < smelt_graph_num_outputs(g); i++) {
            type_str(buf, sizeof buf, smelt_graph_output_dtype(g, i),
                     smelt_graph_output_ndim(g, i), g, i,
                     smelt_graph_output_dim, smelt_graph_output_dim_name);
            printf("  %s: %s\n", smelt_graph_output_name(g, i), buf);
        }
        rc = print_ops(g);
        int64_t count, numel, bytes;
        smelt_graph_constants(g, &count, &numel, &bytes);
        printf("parameters: %lld values in %lld constants (", (long long)numel,
               (long long)count);
        print_bytes((double)bytes);
        printf(")\n");
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    cli_args_free(&a);
    return rc;
}
