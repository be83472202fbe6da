/*
 * matmul.c - the optimized MatMul, Gemm and FusedGemm kernels: one
 * analysis of the operand shapes (numpy batching and broadcasting, 1-D
 * promotion, Gemm's transposes, the epilogue's broadcast terms) that turns
 * the node into one sm_gemm_f32 call, with constant B prepacked once.
 *
 * All three compute act(alpha * op(A) op(B) + beta * C + R): MatMul with
 * alpha = 1 and no C, R or activation; Gemm without R or activation.
 */
#include <string.h>

#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/registry.h"
#include "kernels/cpu/gemm.h"

/* What the shapes say about the product. */
typedef struct mm_geom {
    int64_t M, N, K;
    int64_t a_rs, a_cs, b_rs, b_cs;
    int nbd;
    int64_t bdims[SMELT_MAX_DIMS];
    int64_t sa[SMELT_MAX_DIMS], sb[SMELT_MAX_DIMS], sc[SMELT_MAX_DIMS];
    int has_t[2];
    int64_t t_rs[2], t_cs[2], st[2][SMELT_MAX_DIMS];
    int64_t b_count; /* matrices in B (its own batch dims) */
} mm_geom;

/* Operand shapes: rank -1 marks an absent input. */
typedef struct mm_shapes {
    int r[5]; /* A, B, C, R, Y */
    const int64_t *d[5];
    int ta, tb;
} mm_shapes;

/* Whether strides s over the batch dims step through rows `rs` apart
 * contiguously, so batch and M fold into one row index. */
static int folds(const mm_geom *g, const int64_t *s, int64_t rs)
{
    int64_t span = rs * g->M;
    for (int d = g->nbd - 1; d >= 0; d--) {
        if (g->bdims[d] != 1 && s[d] != span)
            return 0;
        span *= g->bdims[d];
    }
    return 1;
}

/* Fills g from the shapes; 0 when this kernel cannot run them (the
 * reference kernel then runs and reports what is wrong). */
static int mm_analyze(const mm_shapes *s, mm_geom *g)
{
    memset(g, 0, sizeof *g);
    int ar = s->r[0], br = s->r[1], yr = s->r[4];
    const int64_t *ad = s->d[0], *bd = s->d[1], *yd = s->d[4];
    if (ar < 1 || br < 1)
        return 0;
    int64_t kb;
    if (s->ta || s->tb) {
        if (ar != 2 || br != 2 || yr != 2)
            return 0;
        g->M = ad[s->ta];
        g->K = ad[!s->ta];
        kb = bd[s->tb];
        g->N = bd[!s->tb];
        g->a_rs = s->ta ? 1 : g->K;
        g->a_cs = s->ta ? g->M : 1;
        g->b_rs = s->tb ? 1 : g->N;
        g->b_cs = s->tb ? g->K : 1;
    } else {
        g->M = ar > 1 ? ad[ar - 2] : 1;
        g->K = ad[ar - 1];
        kb = bd[br > 1 ? br - 2 : 0];
        g->N = br > 1 ? bd[br - 1] : 1;
        g->a_rs = g->K;
        g->a_cs = 1;
        g->b_rs = g->N;
        g->b_cs = 1;
    }
    int nb = yr - (ar > 1) - (br > 1);
    if (kb != g->K || nb < 0 || (ar > 1 && yd[nb] != g->M) ||
        (br > 1 && yd[yr - 1] != g->N))
        return 0;
    g->nbd = nb;
    memcpy(g->bdims, yd, sizeof(int64_t) * (size_t)nb);
    int na = ar > 2 ? ar - 2 : 0, nbb = br > 2 ? br - 2 : 0;
    if (!sm_cpu_bcast_strides(na, ad, nb, yd, g->sa) ||
        !sm_cpu_bcast_strides(nbb, bd, nb, yd, g->sb))
        return 0;
    g->b_count = sm_cpu_prod(nbb, bd);
    int64_t span = g->M * g->N;
    for (int d = nb - 1; d >= 0; d--) {
        g->sa[d] *= g->M * g->K;
        g->sb[d] *= g->K * g->N;
        g->sc[d] = span;
        span *= yd[d];
    }
    for (int t = 0; t < 2; t++) {
        if (s->r[2 + t] < 0)
            continue;
        int64_t st[SMELT_MAX_DIMS];
        if (ar < 2 || br < 2 ||
            !sm_cpu_bcast_strides(s->r[2 + t], s->d[2 + t], yr, yd, st))
            return 0;
        g->has_t[t] = 1;
        g->t_rs[t] = st[yr - 2];
        g->t_cs[t] = st[yr - 1];
        memcpy(g->st[t], st, sizeof(int64_t) * (size_t)nb);
    }
    /* Fold the batch into M when B does not vary over it and A, C and
     * the terms step through it row after row. */
    int fold = nb > 0 && folds(g, g->sa, g->a_rs) && g->a_cs == 1;
    for (int d = 0; d < nb; d++)
        fold &= g->sb[d] == 0;
    for (int t = 0; t < 2; t++)
        fold &= !g->has_t[t] || folds(g, g->st[t], g->t_rs[t]);
    if (fold) {
        g->M *= sm_cpu_prod(nb, g->bdims);
        g->nbd = 0;
    }
    return 1;
}

static void shapes_from_desc(const sm_kernel_desc *d, mm_shapes *s)
{
    for (int i = 0; i < 4; i++) {
        int ok = i < d->n_in && d->in[i].present;
        s->r[i] = ok ? d->in[i].ndim : -1;
        s->d[i] = ok ? d->in[i].dims : NULL;
    }
    s->r[4] = d->out[0].ndim;
    s->d[4] = d->out[0].dims;
    s->ta = sm_attrs_int(&d->attrs, "transA", 0) != 0;
    s->tb = sm_attrs_int(&d->attrs, "transB", 0) != 0;
}

/* f32 operands whose shapes mm_analyze accepts, and a valid activation. */
int sm_cpu_mm_supports(const sm_kernel_desc *d)
{
    mm_shapes s;
    mm_geom g;
    sm_gemm_epi e = sm_gemm_epi_none();
    if (d->n_out < 1 || !sm_cpu_all_f32(d) || !sm_cpu_epi_act(&d->attrs, &e))
        return 0;
    shapes_from_desc(d, &s);
    return mm_analyze(&s, &g);
}

/* One GEMM call (the batch folded into M where it can be), with B
 * prepacked when it is a constant; its workspace has room for a B
 * packed once for all threads, or for an A (the driver's split picks
 * which, gemm.c). */
void sm_cpu_mm_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                         sm_cpu_config *c)
{
    (void)ops;
    mm_shapes s;
    mm_geom g;
    shapes_from_desc(d, &s);
    c->algo = SM_CPU_ALGO_GEMM;
    if (!mm_analyze(&s, &g)) {
        c->ws_bytes = sm_gemm_workspace(d->n_threads, 0, 0, 1);
        return;
    }
    c->packs = d->in[1].is_const;
    c->geom[0] = g.M;
    c->geom[1] = g.N;
    c->geom[2] = g.K;
    c->geom[3] = sm_cpu_prod(g.nbd, g.bdims);
    size_t wb = sm_gemm_workspace(d->n_threads, g.K, g.N, c->packs);
    size_t wa = sm_gemm_workspace_shared_a(d->n_threads, g.M, g.K);
    c->ws_bytes = wa > wb ? wa : wb;
}

/* Packs a constant B for ops: the blob is the sm_gemm_pack. */
smelt_status sm_cpu_mm_prepack(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                               const sm_kernel_desc *d, const sm_cpu_config *c,
                               const sm_tensor *const *const_in, void **packed)
{
    *packed = NULL;
    mm_shapes s;
    mm_geom g;
    shapes_from_desc(d, &s);
    if (!c->packs || !const_in[1] || !mm_analyze(&s, &g))
        return SMELT_OK;
    sm_matf b = {const_in[1]->data, g.b_rs, g.b_cs};
    sm_gemm_pack *p;
    SM_TRY(
        sm_gemm_pack_new(ctx, ops, 0, &b, g.K, g.N, g.b_count, g.K * g.N, &p));
    *packed = p;
    return SMELT_OK;
}

/* The node as one sm_gemm_f32 call: shapes analysed again on the run's
 * tensors (they are the desc's), B from the blob when configure said
 * so, alpha into the epilogue, C scaled by beta as term 0, R as term 1. */
smelt_status sm_cpu_mm_run(const sm_cpu_ops *ops, const sm_kargs *a,
                           const sm_cpu_config *c, const void *packed,
                           sm_threadpool *tp)
{
    mm_shapes s;
    mm_geom g;
    for (int i = 0; i < 4; i++) {
        const sm_tensor *t = i < a->n_in ? a->in[i] : NULL;
        s.r[i] = t ? t->ndim : -1;
        s.d[i] = t ? t->dims : NULL;
    }
    s.r[4] = a->out[0]->ndim;
    s.d[4] = a->out[0]->dims;
    s.ta = sm_attrs_int(&a->attrs, "transA", 0) != 0;
    s.tb = sm_attrs_int(&a->attrs, "transB", 0) != 0;
    sm_gemm_epi e = sm_gemm_epi_none();
    if (!mm_analyze(&s, &g) || !sm_cpu_epi_act(&a->attrs, &e))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: operand, output or activation do not fit the "
                      "optimized kernel",
                      a->op_name);
    e.alpha = (float)sm_attrs_float(&a->attrs, "alpha", 1);
    float beta = (float)sm_attrs_float(&a->attrs, "beta", 1);
    sm_gemm_args ga = {.M = g.M, .N = g.N, .K = g.K, .epi = e};
    ga.a = (sm_matf){a->in[0]->data, g.a_rs, g.a_cs};
    ga.b = (sm_matf){a->in[1]->data, g.b_rs, g.b_cs};
    const sm_gemm_pack *pb = packed;
    if (c->packs && (!pb || pb->ops != ops || pb->rows != g.K ||
                     pb->cols != g.N || pb->count != g.b_count))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the packed B does not fit the run", a->op_name);
    if (c->packs)
        ga.pb = pb;
    ga.c = a->out[0]->data;
    ga.ldc = g.N;
    ga.nbd = g.nbd;
    memcpy(ga.bdims, g.bdims, sizeof g.bdims);
    for (int d = 0; d < g.nbd; d++) {
        ga.stride[SM_GB_A][d] = g.sa[d];
        ga.stride[SM_GB_B][d] = g.sb[d];
        ga.stride[SM_GB_PB][d] = g.K * g.N > 0 ? g.sb[d] / (g.K * g.N) : 0;
        ga.stride[SM_GB_C][d] = g.sc[d];
        ga.stride[SM_GB_T0][d] = g.st[0][d];
        ga.stride[SM_GB_T1][d] = g.st[1][d];
    }
    for (int t = 0; t < 2; t++) {
        if (!g.has_t[t])
            continue;
        ga.epi.t[t] = (sm_epi_term){a->in[2 + t]->data, g.t_rs[t], g.t_cs[t],
                                    t == 0 ? beta : 1.0f};
    }
    return sm_gemm_f32(a->ctx, ops, &ga, tp, a->workspace, a->workspace_bytes);
}
