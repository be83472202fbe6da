/*
 * inputs.c - the inputs of run, bench and check (inputs.h).
 */
#include "inputs.h"

#include <stdio.h>
#include <string.h>

#include "check_util.h"
#include "cli.h"

int cli_input_index(const smelt_graph_t *g, const char *name, size_t len)
{
    for (int i = 0; i < smelt_graph_num_inputs(g); i++) {
        const char *in = smelt_graph_input_name(g, i);
        if (strlen(in) == len && !strncmp(in, name, len))
            return i;
    }
    return -1;
}

static int is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
           dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
}

/* Lists the graph's input names after a message about a bad --input. */
static void list_inputs(const smelt_graph_t *g)
{
    fprintf(stderr, " (the graph's inputs:");
    for (int i = 0; i < smelt_graph_num_inputs(g); i++)
        fprintf(stderr, "%s %s", i ? "," : "", smelt_graph_input_name(g, i));
    fprintf(stderr, ")\n");
}

/* Loads file path for input idx, converting a float file of another
 * float dtype when --cast is given and explaining the flag when not. */
static int load_one(smelt_ctx_t *ctx, const cli_args *a, const smelt_graph_t *g,
                    int idx, const char *path, smelt_tensor_t **out)
{
    const char *name = smelt_graph_input_name(g, idx);
    smelt_tensor_t *t = NULL;
    if (smelt_npy_load(ctx, path, &t) != SMELT_OK) {
        fprintf(stderr, "smelt %s: input '%s': %s\n", a->verb, name,
                smelt_ctx_error(ctx));
        return 1;
    }
    smelt_dtype want = smelt_graph_input_dtype(g, idx),
                got = smelt_tensor_dtype(t);
    if (want != got && is_float(want) && is_float(got)) {
        if (!a->given[CLI_OPT_cast]) {
            fprintf(stderr,
                    "smelt %s: input '%s': %s holds %s, the model takes %s; "
                    "pass --cast to convert (numpy's default float is "
                    "float64: np.asarray(x, np.float32) avoids it)\n",
                    a->verb, name, path, smelt_dtype_name(got),
                    smelt_dtype_name(want));
            smelt_tensor_free(t);
            return 1;
        }
        smelt_tensor_t *c = NULL;
        if (cli_cast_float(ctx, t, want, &c)) {
            fprintf(stderr, "smelt %s: input '%s': cannot convert: %s\n",
                    a->verb, name, smelt_ctx_error(ctx));
            smelt_tensor_free(t);
            return 1;
        }
        smelt_tensor_free(t);
        t = c;
    }
    *out = t;
    return 0;
}

/* A random tensor for input i from its declared type. */
static int random_input(smelt_ctx_t *ctx, const cli_args *a,
                        const smelt_graph_t *g, int i, cli_input_rule *rule,
                        uint64_t *state, smelt_tensor_t **out)
{
    const char *name = smelt_graph_input_name(g, i);
    smelt_dtype dt = smelt_graph_input_dtype(g, i);
    int nd = smelt_graph_input_ndim(g, i);
    if (dt == SMELT_DTYPE_UNDEFINED || nd < 0) {
        fprintf(stderr,
                "smelt %s: input '%s' has no declared dtype or rank; give it "
                "with --input %s=x.npy\n",
                a->verb, name, name);
        return 1;
    }
    int64_t shape[SMELT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        const char *sym = smelt_graph_input_dim_name(g, i, d);
        shape[d] = smelt_graph_input_dim(g, i, d);
        if (shape[d] >= 0)
            continue;
        shape[d] = cli_dim_size(a, sym);
        if (shape[d] >= 0)
            continue;
        if (rule->dim_default < 0) {
            fprintf(stderr,
                    "smelt %s: input '%s' dim %d (%s) is symbolic; bind it "
                    "with --dim %s=SIZE\n",
                    a->verb, name, d, sym ? sym : "unnamed",
                    sym ? sym : "NAME");
            return 1;
        }
        shape[d] = rule->dim_default;
        if (rule->dim_notice)
            fprintf(stderr,
                    "smelt %s: input '%s' dim %d (%s) set to %lld; --dim "
                    "%s=N chooses\n",
                    a->verb, name, d, sym ? sym : "unnamed", rule->dim_default,
                    sym ? sym : "NAME");
    }
    if (smelt_tensor_init(ctx, dt, nd, shape, out) != SMELT_OK) {
        fprintf(stderr, "smelt %s: input '%s': %s\n", a->verb, name,
                smelt_ctx_error(ctx));
        return 1;
    }
    cli_fill_random(*out, state);
    return 0;
}

int cli_bind_inputs(smelt_ctx_t *ctx, const cli_args *a, const smelt_graph_t *g,
                    cli_input_rule *rule, smelt_tensor_t **inputs)
{
    int n_in = smelt_graph_num_inputs(g), next = 0;
    for (int s = 0; s < a->n_inputs; s++) {
        const char *spec = a->inputs[s], *eq = strchr(spec, '=');
        int idx = eq ? cli_input_index(g, spec, (size_t)(eq - spec)) : next++;
        if (idx < 0) {
            fprintf(stderr, "smelt %s: the graph has no input '%.*s'", a->verb,
                    (int)(eq - spec), spec);
            list_inputs(g);
            return 1;
        }
        if (idx >= n_in) {
            fprintf(stderr,
                    "smelt %s: more inputs given than the graph takes (%d)\n",
                    a->verb, n_in);
            return 1;
        }
        if (inputs[idx]) {
            fprintf(stderr, "smelt %s: input '%s' is given twice\n", a->verb,
                    smelt_graph_input_name(g, idx));
            return 1;
        }
        if (load_one(ctx, a, g, idx, eq ? eq + 1 : spec, &inputs[idx]))
            return 1;
    }
    uint64_t state = rule->seed;
    rule->n_random = 0;
    for (int i = 0; i < n_in; i++) {
        if (inputs[i])
            continue;
        if (!rule->random) {
            const char *name = smelt_graph_input_name(g, i);
            fprintf(stderr,
                    "smelt %s: no value for input '%s' (use --input "
                    "%s=x.npy)\n",
                    a->verb, name, name);
            return 1;
        }
        if (random_input(ctx, a, g, i, rule, &state, &inputs[i]))
            return 1;
        rule->n_random++;
    }
    return 0;
}
