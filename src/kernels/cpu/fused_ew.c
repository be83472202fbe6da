/*
 * fused_ew.c - the FusedElementwise CPU kernel: the body's program
 * (fused_ew.h) run over tiles of SM_EW_TILE elements, each instruction a
 * call of the ISA's unary or binary row function on tile buffers, so each
 * input is read once and each output written once per tile while the
 * intermediates stay in L1. The row functions and their order are those
 * of the unfused steps (elementwise.c), so the results are bit-identical
 * to the expanded body. Threads take contiguous runs of tiles, each with
 * its own temporaries in the workspace. An input may also be one
 * element or a row of the output's last dimension (a bias), broadcast.
 */
#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/fused_ew.h"
#include "kernels/cpu/registry.h"

/* Tiles per task below which one thread runs them all. */
#define EW_MIN_TILES_PER_TASK 8

/* The element count input i of pg has. */
static int64_t in_numel(const sm_ew_prog *pg, int i)
{
    return pg->in_bcast[i] == SM_EW_BCAST_ONE   ? 1
           : pg->in_bcast[i] == SM_EW_BCAST_ROW ? pg->row
                                                : pg->numel;
}

/* Accepts a node the plan built a program for whose operands still match
 * it: f32, outputs of the program's element count, inputs of it or of
 * one element as the program says. */
int sm_cpu_fused_ew_supports(const sm_kernel_desc *d)
{
    const sm_ew_prog *pg = d->ew;
    if (!pg || pg->n_in != d->n_in || pg->n_out != d->n_out ||
        !sm_cpu_all_f32(d))
        return 0;
    for (int i = 0; i < d->n_out; i++)
        if (sm_cpu_prod(d->out[i].ndim, d->out[i].dims) != pg->numel)
            return 0;
    for (int i = 0; i < d->n_in; i++) {
        if (!d->in[i].present)
            return 0;
        int64_t n = sm_cpu_prod(d->in[i].ndim, d->in[i].dims);
        if (n != in_numel(pg, i))
            return 0;
    }
    return 1;
}

/* The tiling: geom tile, ops, temps, threads (the plan's: a workspace of
 * the temps' tiles for each); packs the program for run(). */
void sm_cpu_fused_ew_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                               sm_cpu_config *c)
{
    (void)ops;
    const sm_ew_prog *pg = d->ew;
    int th = d->n_threads < 1 ? 1 : d->n_threads;
    c->algo = SM_CPU_ALGO_FUSED_TILES;
    c->geom[0] = SM_EW_TILE;
    c->geom[1] = pg->n_instr;
    c->geom[2] = pg->n_temps;
    c->geom[3] = th;
    c->packs = 1;
    c->ws_bytes = (size_t)th * (size_t)pg->n_temps * SM_EW_TILE * sizeof(float);
}

/* The program, copied out of the plan's desc for run(). */
smelt_status sm_cpu_fused_ew_prepack(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                                     const sm_kernel_desc *d,
                                     const sm_cpu_config *c,
                                     const sm_tensor *const *const_in,
                                     void **packed)
{
    (void)ops;
    (void)c;
    (void)const_in;
    sm_ew_prog *pg = sm_malloc(sizeof *pg);
    if (!pg)
        return sm_err_nomem(ctx);
    memcpy(pg, d->ew, sizeof *pg);
    *packed = pg;
    return SMELT_OK;
}

typedef struct ew_job {
    const sm_cpu_ops *ops;
    const sm_ew_prog *pg;
    const float *in[SM_EW_MAX_IO];
    float *out[SM_EW_MAX_IO];
    float *ws; /* n_temps tiles per thread */
} ew_job;

/* Where ref r of the tile at element o lies, and its stride (0: one
 * element broadcast). */
static float *ew_at(const ew_job *J, sm_ew_ref r, int64_t o, float *tmp,
                    int64_t *stride)
{
    *stride = 1;
    switch (r.loc) {
    case SM_EW_IN:
        if (J->pg->in_bcast[r.idx] == SM_EW_BCAST_ONE) {
            *stride = 0;
            return (float *)J->in[r.idx];
        }
        if (J->pg->in_bcast[r.idx] == SM_EW_BCAST_ROW)
            return (float *)J->in[r.idx] + o % J->pg->row;
        return (float *)J->in[r.idx] + o;
    case SM_EW_CONST: *stride = 0; return (float *)&J->pg->consts[r.idx];
    case SM_EW_TEMP: return tmp + (int64_t)r.idx * SM_EW_TILE;
    default: return J->out[r.idx] + o;
    }
}

/* Whether r is a row-broadcast input. */
static int is_row(const sm_ew_prog *pg, sm_ew_ref r)
{
    return r.loc == SM_EW_IN && pg->in_bcast[r.idx] == SM_EW_BCAST_ROW;
}

/* Binary instruction I on elements [o, o + n) of the output: one call,
 * or with a row-broadcast operand one call per piece of a row, as the
 * unfused kernel's rows are cut. */
static void ew_binary(const ew_job *J, const sm_ew_instr *I, int64_t o,
                      int64_t n, float *tmp)
{
    const sm_ew_prog *pg = J->pg;
    int rows = is_row(pg, I->x) || is_row(pg, I->y);
    for (int64_t s = o; s < o + n;) {
        int64_t e = o + n;
        if (rows && e - s > pg->row - s % pg->row)
            e = s + pg->row - s % pg->row;
        int64_t sx, sy, sd;
        /* tile buffers are addressed from the tile's start */
        float *x = ew_at(J, I->x, s, tmp + (s - o), &sx);
        float *y = ew_at(J, I->y, s, tmp + (s - o), &sy);
        float *dst = ew_at(J, I->dst, s, tmp + (s - o), &sd);
        J->ops->binary(I->f, x, sx, y, sy, dst, e - s);
        s = e;
    }
}

/* Tiles [begin, end): every instruction in order on each. */
static void ew_tiles(void *arg, int64_t begin, int64_t end, int tid)
{
    const ew_job *J = arg;
    const sm_ew_prog *pg = J->pg;
    float *tmp = J->ws + (int64_t)tid * pg->n_temps * SM_EW_TILE;
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t * SM_EW_TILE;
        int64_t n = pg->numel - o < SM_EW_TILE ? pg->numel - o : SM_EW_TILE;
        for (int k = 0; k < pg->n_instr; k++) {
            const sm_ew_instr *I = &pg->ins[k];
            if (I->binary) {
                ew_binary(J, I, o, n, tmp);
            } else {
                int64_t sx, sd;
                float *x = ew_at(J, I->x, o, tmp, &sx);
                float *dst = ew_at(J, I->dst, o, tmp, &sd);
                J->ops->unary(I->f, I->a, I->b, x, dst, n);
            }
        }
    }
}

/* Runs the program over the output's tiles, split over the pool when
 * there are enough of them and the workspace has room for its threads. */
smelt_status sm_cpu_fused_ew_run(const sm_cpu_ops *ops, const sm_kargs *a,
                                 const sm_cpu_config *c, const void *packed,
                                 sm_threadpool *tp)
{
    const sm_ew_prog *pg = packed;
    if (!pg || a->n_in != pg->n_in || a->n_out != pg->n_out)
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the fused kernel has no program for this node",
                      a->op_name);
    ew_job J = {.ops = ops, .pg = pg, .ws = a->workspace};
    for (int i = 0; i < pg->n_in; i++) {
        if (!a->in[i] || a->in[i]->numel != in_numel(pg, i))
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: input %d does not have the planned size",
                          a->op_name, i);
        J.in[i] = a->in[i]->data;
    }
    for (int i = 0; i < pg->n_out; i++) {
        if (a->out[i]->numel != pg->numel)
            return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                          "%s: output %d does not have the planned size",
                          a->op_name, i);
        J.out[i] = a->out[i]->data;
    }
    if (pg->n_temps > 0 && (!J.ws || a->workspace_bytes < c->ws_bytes))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME, "%s: no workspace",
                      a->op_name);
    int64_t tiles = (pg->numel + SM_EW_TILE - 1) / SM_EW_TILE;
    int th = sm_threadpool_size(tp);
    if (th > 1 && th <= c->geom[3] && tiles >= 2 * EW_MIN_TILES_PER_TASK)
        sm_parallel_for(tp, tiles, (tiles + th - 1) / th, ew_tiles, &J);
    else
        ew_tiles(&J, 0, tiles, 0);
    return SMELT_OK;
}
