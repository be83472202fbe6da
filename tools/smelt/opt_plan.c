/*
 * opt_plan.c - what the plan decides for the graph `smelt opt`
 * optimized: in-place reuse, buffer sharing and the arena, and which
 * values it holds channels-last or in channel blocks. No pass decides
 * these (docs/PASSES.md), so the figures come from compiling a plan
 * through the public API at level 0 (the graph is optimized already),
 * never from a second computation. A plan needs concrete shapes: inputs
 * whose symbolic dims --dim does not bind are named, not guessed.
 */
#include "opt_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli.h"
#include "plan_cli.h"

/* Nonzero when an input of g has a dim --dim leaves unknown; why then
 * names the first such input and dims. */
static int unbound(const smelt_graph_t *g, const cli_args *a, char *why,
                   size_t size)
{
    for (int i = 0; i < smelt_graph_num_inputs(g); i++) {
        const char *in = smelt_graph_input_name(g, i);
        int nd = smelt_graph_input_ndim(g, i);
        if (nd < 0) {
            snprintf(why, size, "input '%s' has no known rank", in);
            return 1;
        }
        size_t k = 0;
        why[0] = 0;
        for (int d = 0; d < nd; d++) {
            const char *sym = smelt_graph_input_dim_name(g, i, d);
            if (smelt_graph_input_dim(g, i, d) >= 0 ||
                (sym && cli_dim_size(a, sym) >= 0))
                continue;
            if (!k)
                k = (size_t)snprintf(why, size,
                                     "input '%s' has unbound "
                                     "dims:",
                                     in);
            if (k < size)
                k += (size_t)snprintf(why + k, size - k,
                                      " %s (bind it with "
                                      "--dim %s=SIZE)",
                                      sym ? sym : "?", sym ? sym : "NAME");
        }
        if (k)
            return 1;
    }
    return 0;
}

/* The plan's save-or-recompute choices (--memory-budget): a line per
 * recomputed value. */
static void print_recomputed(FILE *out, const smelt_plan_t *p,
                             const smelt_plan_stats *s)
{
    fprintf(out,
            "  recompute: %d value%s recomputed before a late reader, "
            "the others kept alive\n",
            s->recomputed, s->recomputed == 1 ? "" : "s");
    for (int j = 0; j < smelt_plan_num_steps(p); j++) {
        smelt_plan_step_info i = SMELT_STRUCT_INIT(smelt_plan_step_info);
        if (smelt_plan_step(p, j, &i) != SMELT_OK || i.recompute_of < 0)
            continue;
        char size[32];
        cli_human_size(size, sizeof size, i.value_bytes);
        fprintf(out,
                "    %%%s (%s, %s): computed at step %d, again at step %d\n",
                i.value, i.op, size, i.recompute_of, j);
    }
}

static void print_stats(FILE *out, const smelt_plan_stats *s)
{
    char arena[32], all[32];
    cli_human_size(arena, sizeof arena, s->arena_bytes);
    cli_human_size(all, sizeof all, s->unshared_bytes);
    fprintf(out,
            "plan of the optimized graph (%d steps, isa %s, %d thread%s):\n"
            "  memory: arena %s for %s of buffers; %d of %d buffers shared, "
            "%d step%s in place\n"
            "  layout: %d values channels-last, %d channel-blocked, the "
            "others NCHW\n",
            s->steps, s->isa, s->threads, s->threads == 1 ? "" : "s", arena,
            all, s->shared_buffers, s->arena_buffers, s->inplace,
            s->inplace == 1 ? "" : "s", s->channels_last, s->channel_blocked);
}

int cli_opt_plan_report(smelt_ctx_t *ctx, const smelt_graph_t *g,
                        const cli_args *a, const char *debug_dir, FILE *out)
{
    const char *env = getenv("SMELT_DEBUG");
    int dump = debug_dir || (env && *env && strcmp(env, "0") != 0);
    if (!out && !dump)
        return 0;
    char why[512];
    int open = unbound(g, a, why, sizeof why);
    smelt_plan_options o;
    cli_plan_options(a, &o);
    o.level = 0;
    o.debug_dir = debug_dir;
    smelt_plan_t *p = NULL;
    /* compiled even when dims are open, so a debug dump says why */
    smelt_status st = smelt_plan_compile(ctx, g, &o, &p);
    int rc = 0;
    if (st == SMELT_OK) {
        smelt_plan_stats s = SMELT_STRUCT_INIT(smelt_plan_stats);
        smelt_plan_get_stats(p, &s);
        if (out) {
            print_stats(out, &s);
            print_recomputed(out, p, &s);
        }
    } else if (open) {
        if (out)
            fprintf(out,
                    "plan of the optimized graph: not compiled, its memory "
                    "and layout depend on the shapes: %s\n",
                    why);
    } else {
        rc = cli_fail(ctx, "plan of the optimized graph");
    }
    smelt_plan_free(p);
    return rc;
}
