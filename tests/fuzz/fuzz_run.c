/*
 * fuzz_run.c - the part of the model harnesses past the loaders: a graph
 * that loaded is inferred, optimized at -O3, compiled into a plan and run
 * twice (inputs all zeros, then all ones). Symbolic dimensions are bound
 * to 2. Models whose inputs, constants or plan exceed a small budget are
 * refused before the step that would be costly, so the fuzzer spends its
 * time on many small models; anything may fail with an error, nothing may
 * crash, leak, or fail silently.
 */
#include "fuzz_run.h"

#include <stdio.h>
#include <string.h>

/* The budget: inputs, weights, the planned arena, plan steps, time. */
enum {
    FUZZ_MAX_INPUT_NUMEL = 1 << 14,
    FUZZ_MAX_CONST_BYTES = 1 << 22,
    FUZZ_MAX_NODES = 4096,
    FUZZ_MAX_ARENA_BYTES = 1 << 24,
    FUZZ_MAX_STEPS = 4096,
    FUZZ_SYM_SIZE = 2,
    FUZZ_MAX_TENSORS = 64,
    FUZZ_RUN_TIMEOUT_MS = 200 /* per run of a plan: Loops with no bound */
};

/* A failure must say why. */
static void require_message(smelt_ctx_t *ctx)
{
    if (!smelt_ctx_error(ctx)[0])
        __builtin_trap();
}

/* Appends "name=2," for each symbolic dim of g's inputs not yet listed;
 * returns 0 when an input has an unknown rank or an unnamed unknown dim,
 * or its bound size exceeds the budget. */
static int bind_dims(const smelt_graph_t *g, char *dims, size_t cap)
{
    size_t len = 0;
    dims[0] = 0;
    for (int i = 0; i < smelt_graph_num_inputs(g); i++) {
        int nd = smelt_graph_input_ndim(g, i);
        if (nd < 0 || nd > SMELT_MAX_DIMS)
            return 0;
        int64_t numel = 1;
        for (int a = 0; a < nd; a++) {
            int64_t d = smelt_graph_input_dim(g, i, a);
            const char *sym = smelt_graph_input_dim_name(g, i, a);
            if (d < 0 && !sym)
                return 0;
            if (d < 0) {
                d = FUZZ_SYM_SIZE;
                char item[96];
                int n =
                    snprintf(item, sizeof item, "%s=%d", sym, FUZZ_SYM_SIZE);
                if (n <= 0 || (size_t)n >= sizeof item - 1 ||
                    strchr(sym, ',') || strchr(sym, '='))
                    return 0;
                if (!strstr(dims, item)) {
                    if (len + (size_t)n + 2 > cap)
                        return 0;
                    len += (size_t)snprintf(dims + len, cap - len, "%s%s",
                                            len ? "," : "", item);
                }
            }
            if (d > FUZZ_MAX_INPUT_NUMEL)
                return 0;
            numel *= d ? d : 1;
            if (numel > FUZZ_MAX_INPUT_NUMEL)
                return 0;
        }
    }
    return 1;
}

/* Element i of t set to one, whatever its dtype. */
static void fill_ones(smelt_tensor_t *t)
{
    unsigned char *p = smelt_tensor_data(t);
    int64_t n = smelt_tensor_numel(t);
    size_t es = smelt_dtype_size(smelt_tensor_dtype(t));
    for (int64_t i = 0; p && i < n; i++) {
        unsigned char *e = p + (size_t)i * es;
        memset(e, 0, es);
        switch (smelt_tensor_dtype(t)) {
        case SMELT_DTYPE_F32: {
            float one = 1.0f;
            memcpy(e, &one, sizeof one);
            break;
        }
        case SMELT_DTYPE_F64: {
            double one = 1.0;
            memcpy(e, &one, sizeof one);
            break;
        }
        case SMELT_DTYPE_F16: {
            uint16_t one = 0x3c00;
            memcpy(e, &one, sizeof one);
            break;
        }
        case SMELT_DTYPE_BF16: {
            uint16_t one = 0x3f80;
            memcpy(e, &one, sizeof one);
            break;
        }
        default: e[0] = 1; break; /* integers and bool, little-endian */
        }
    }
}

/* Runs plan p once on inputs of its own shapes, zeros or ones. */
static void run_plan(smelt_ctx_t *ctx, const smelt_plan_t *p, int ones)
{
    int n_in = smelt_plan_num_inputs(p), n_out = smelt_plan_num_outputs(p);
    if (n_in > FUZZ_MAX_TENSORS || n_out > FUZZ_MAX_TENSORS)
        return;
    smelt_tensor_t *in[FUZZ_MAX_TENSORS] = {0};
    smelt_tensor_t *out[FUZZ_MAX_TENSORS] = {0};
    int ok = 1;
    for (int i = 0; ok && i < n_in; i++) {
        int nd = smelt_plan_input_ndim(p, i);
        int64_t dims[SMELT_MAX_DIMS];
        if (nd < 0 || nd > SMELT_MAX_DIMS)
            ok = 0;
        for (int a = 0; ok && a < nd; a++) {
            dims[a] = smelt_plan_input_dim(p, i, a);
            ok = dims[a] >= 0 && dims[a] <= FUZZ_MAX_INPUT_NUMEL;
        }
        if (ok && smelt_tensor_init(ctx, smelt_plan_input_dtype(p, i), nd, dims,
                                    &in[i]) != SMELT_OK) {
            require_message(ctx);
            ok = 0;
        }
        if (ok && smelt_tensor_numel(in[i]) > FUZZ_MAX_INPUT_NUMEL)
            ok = 0;
        if (ok) {
            void *d = smelt_tensor_data(in[i]);
            size_t nb = (size_t)smelt_tensor_numel(in[i]) *
                        smelt_dtype_size(smelt_plan_input_dtype(p, i));
            if (d && nb)
                memset(d, 0, nb);
            if (ones)
                fill_ones(in[i]);
        }
    }
    if (ok) {
        if (smelt_plan_run(ctx, p, in, n_in, out, n_out) != SMELT_OK)
            require_message(ctx);
        for (int i = 0; i < n_out; i++)
            smelt_tensor_free(out[i]);
    }
    for (int i = 0; i < n_in; i++)
        smelt_tensor_free(in[i]);
}

/* Bytes of the plan's outputs whose shapes are known when compiling:
 * outputs live outside the arena, so the arena budget misses an op that
 * writes 470 MB (an Upsample by 170 x 75, a fuzz_ir timeout). */
static int64_t output_bytes(const smelt_plan_t *p)
{
    int64_t total = 0;
    for (int i = 0; i < smelt_plan_num_outputs(p); i++) {
        int nd = smelt_plan_output_ndim(p, i);
        int64_t b = (int64_t)smelt_dtype_size(smelt_plan_output_dtype(p, i));
        for (int a = 0; a < nd && b > 0; a++) {
            int64_t d = smelt_plan_output_dim(p, i, a);
            if (d < 0)
                d = 0; /* known only when it runs: the time limit guards it */
            b = d && b > INT64_MAX / d ? INT64_MAX : b * d;
        }
        total = b > INT64_MAX - total ? INT64_MAX : total + b;
    }
    return total;
}

void fuzz_run_graph(smelt_ctx_t *ctx, smelt_graph_t *g)
{
    /* the same limit for what runs while optimizing (folding evaluates
     * nodes) and for the reference steps of the plan */
    smelt_ctx_set_timeout(ctx, FUZZ_RUN_TIMEOUT_MS);
    int64_t const_bytes = 0;
    smelt_graph_constants(g, NULL, NULL, &const_bytes);
    char dims[1024];
    if (const_bytes > FUZZ_MAX_CONST_BYTES ||
        smelt_graph_num_nodes(g) > FUZZ_MAX_NODES) {
        smelt_graph_free(g);
        return;
    }
    if (smelt_graph_infer(ctx, g) != SMELT_OK) {
        require_message(ctx);
        smelt_graph_free(g);
        return;
    }
    smelt_opt_options oo;
    smelt_opt_options_default(&oo);
    oo.level = 3;
    oo.fold_max_bytes = 1 << 20;
    if (smelt_graph_optimize(ctx, g, &oo, NULL) != SMELT_OK) {
        require_message(ctx);
        smelt_graph_free(g);
        return;
    }
    if (!bind_dims(g, dims, sizeof dims)) {
        smelt_graph_free(g);
        return;
    }
    smelt_plan_options po;
    smelt_plan_options_default(&po);
    po.threads = 1;
    po.level = 3; /* again, with the dims bound: shapes fold further */
    po.dims = dims[0] ? dims : NULL;
    /* a Loop with no bound (or 2^58 trips) must stop with an error, not
     * hang the fuzzer: every run of the plan gets a time limit */
    po.timeout_ms = FUZZ_RUN_TIMEOUT_MS;
    smelt_plan_t *p = NULL;
    if (smelt_plan_compile_take(ctx, g, &po, &p) != SMELT_OK) {
        require_message(ctx);
        return;
    }
    smelt_plan_stats st = SMELT_STRUCT_INIT(smelt_plan_stats);
    if (smelt_plan_get_stats(p, &st) != SMELT_OK)
        __builtin_trap(); /* a compiled plan always has stats */
    if (st.arena_bytes <= FUZZ_MAX_ARENA_BYTES &&
        output_bytes(p) <= FUZZ_MAX_ARENA_BYTES &&
        st.weight_bytes <= FUZZ_MAX_CONST_BYTES && st.steps <= FUZZ_MAX_STEPS) {
        run_plan(ctx, p, 0);
        run_plan(ctx, p, 1);
    }
    smelt_plan_free(p);
}
