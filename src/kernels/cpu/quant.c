/*
 * quant.c - the int8 CPU kernels of the quantized contractions:
 * MatMulInteger and QLinearMatMul as one sm_q8_gemm call each
 * (quant_gemm.h), the batch of A folded into its rows, a constant B
 * packed once at plan time, zero points and (QLinearMatMul) the
 * requantization applied in the GEMM's epilogue.
 *
 * Results are bit-exact against the reference kernels (kernels/ref/
 * quant.c): the int32 sums are the same whole numbers, and the
 * requantization is the reference's double arithmetic.
 */
#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/quant_gemm.h"
#include "kernels/cpu/registry.h"
#include "kernels/ref/quant.h"

/* Where an op keeps its operands (-1: it has none). */
typedef struct qmm_slots {
    int a, sa, za, b, sb, zb, sy, zy;
} qmm_slots;

static qmm_slots slots_of(sm_op op)
{
    if (op == SM_OP_QLinearMatMul)
        return (qmm_slots){0, 1, 2, 3, 4, 5, 6, 7};
    return (qmm_slots){0, -1, 2, 1, -1, 3, -1, -1};
}

/* The product's sizes: A's leading dims folded into M. */
typedef struct qmm_geom {
    int64_t M, K, N, rows; /* rows: A's own row count (per-row params) */
} qmm_geom;

static int is_q8(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_U8 || dt == SMELT_DTYPE_I8;
}

/* Operand i of d when present, else NULL. */
static const sm_kernel_operand *opnd(const sm_kernel_desc *d, int i)
{
    return i >= 0 && i < d->n_in && d->in[i].present ? &d->in[i] : NULL;
}

static int64_t numel(const sm_kernel_operand *o)
{
    int64_t n = 1;
    for (int i = 0; i < o->ndim; i++)
        n *= o->dims[i];
    return n;
}

/* A parameter of 1 value, or of `len` values along a 1-D tensor;
 * absent ones pass when optional. */
static int param_ok(const sm_kernel_desc *d, int i, int64_t len, int optional,
                    int want_f32)
{
    const sm_kernel_operand *o = opnd(d, i);
    if (!o)
        return optional;
    if (want_f32 ? o->dtype != SMELT_DTYPE_F32 : !is_q8(o->dtype))
        return 0;
    int64_t n = numel(o);
    return o->ndim <= 1 && (n == 1 || (o->ndim == 1 && n == len));
}

/* The shapes this kernel runs: A [..., M, K] or [K], B [K, N], u8 / s8,
 * the output [..., M, N] (i32 for MatMulInteger, u8 / s8 for
 * QLinearMatMul), parameters per tensor, per row of A or per column of
 * B. Anything else runs the reference kernel. */
static int qmm_analyze(const sm_kernel_desc *d, qmm_geom *g)
{
    qmm_slots s = slots_of(d->op);
    const sm_kernel_operand *A = opnd(d, s.a), *B = opnd(d, s.b);
    if (!A || !B || d->n_out < 1 || !is_q8(A->dtype) || !is_q8(B->dtype) ||
        A->ndim < 1 || B->ndim != 2)
        return 0;
    g->K = A->dims[A->ndim - 1];
    g->N = B->dims[1];
    g->rows = A->ndim > 1 ? A->dims[A->ndim - 2] : 1;
    g->M = numel(A) / (g->K ? g->K : 1);
    const sm_kernel_operand *Y = &d->out[0];
    if (g->K < 1 || g->N < 1 || g->M < 1 || B->dims[0] != g->K ||
        numel(Y) != g->M * g->N || Y->dims[Y->ndim - 1] != g->N)
        return 0;
    if (!param_ok(d, s.za, g->rows, 1, 0) || !param_ok(d, s.zb, g->N, 1, 0))
        return 0;
    if (d->op == SM_OP_MatMulInteger)
        return Y->dtype == SMELT_DTYPE_I32;
    return is_q8(Y->dtype) && param_ok(d, s.sa, g->rows, 0, 1) &&
           param_ok(d, s.sb, g->N, 0, 1) && param_ok(d, s.sy, 1, 0, 1) &&
           param_ok(d, s.zy, 1, 1, 0);
}

int sm_cpu_qmm_supports(const sm_kernel_desc *d)
{
    qmm_geom g;
    return qmm_analyze(d, &g);
}

/* One int8 GEMM; B packed at plan time when constant, else into the
 * workspace after packed A. */
void sm_cpu_qmm_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                          sm_cpu_config *c)
{
    qmm_geom g;
    c->algo = SM_CPU_ALGO_GEMM;
    if (!qmm_analyze(d, &g))
        return;
    qmm_slots s = slots_of(d->op);
    c->packs = d->in[s.b].is_const;
    c->geom[0] = g.M;
    c->geom[1] = g.N;
    c->geom[2] = g.K;
    c->geom[3] = 1;
    c->ws_bytes =
        sm_q8_gemm_workspace(sm_q8_isa_of(ops), g.M, g.K, g.N, !c->packs);
}

/* The B operand as sm_q8_pack_b packs it. */
static sm_q8_b *pack_b(const sm_q8_isa *isa, const sm_tensor *B, void *mem)
{
    return sm_q8_pack_b(isa, B->data, B->dtype, B->dims[1], 1, B->dims[0],
                        B->dims[1], mem);
}

smelt_status sm_cpu_qmm_prepack(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                                const sm_kernel_desc *d, const sm_cpu_config *c,
                                const sm_tensor *const *const_in, void **packed)
{
    qmm_slots s = slots_of(d->op);
    *packed = NULL;
    if (!c->packs || !const_in[s.b])
        return SMELT_OK;
    const sm_q8_isa *isa = sm_q8_isa_of(ops);
    const sm_tensor *B = const_in[s.b];
    void *mem = sm_malloc(sm_q8_pack_b_bytes(isa, B->dims[0], B->dims[1]));
    if (!mem)
        return sm_err(ctx, SMELT_ERR_NOMEM,
                      "out of memory packing int8 weights");
    *packed = pack_b(isa, B, mem);
    return SMELT_OK;
}

/* Input i of a as an epilogue vector (absent: p NULL). */
static sm_q8_vec vec_in(const sm_kargs *a, int i)
{
    sm_q8_vec v = {NULL, SMELT_DTYPE_F32, 0};
    if (i >= 0 && i < a->n_in && a->in[i]) {
        v.p = a->in[i]->data;
        v.dt = a->in[i]->dtype;
        v.n = a->in[i]->numel;
    }
    return v;
}

smelt_status sm_cpu_qmm_run(const sm_cpu_ops *ops, const sm_kargs *a,
                            const sm_cpu_config *c, const void *packed,
                            sm_threadpool *tp)
{
    const sm_q8_isa *isa = sm_q8_isa_of(ops);
    /* QLinearMatMul has 8 inputs, MatMulInteger at most 4 */
    qmm_slots s =
        slots_of(a->n_in > 4 ? SM_OP_QLinearMatMul : SM_OP_MatMulInteger);
    const sm_tensor *A = a->in[s.a], *B = a->in[s.b];
    int64_t M = c->geom[0], N = c->geom[1], K = c->geom[2];
    const sm_q8_b *bp = packed;
    if (!bp)
        bp = pack_b(isa, B,
                    (char *)a->workspace +
                        sm_q8_gemm_workspace(isa, M, K, N, 0));
    sm_q8_epi e = sm_q8_epi_i32();
    e.za = vec_in(a, s.za);
    e.zb = vec_in(a, s.zb);
    if (s.sy >= 0) {
        SM_TRY(sm_quant_check_scale(a, s.sa, 0));
        SM_TRY(sm_quant_check_scale(a, s.sb, 0));
        SM_TRY(sm_quant_check_scale(a, s.sy, 1));
        e.kind = SM_Q8_OUT_Q8;
        e.sa = vec_in(a, s.sa);
        e.sb = vec_in(a, s.sb);
        e.sy = sm_load_f64(a->in[s.sy]->dtype, a->in[s.sy]->data, 0);
        sm_q8_vec zy = vec_in(a, s.zy);
        e.zy = zy.p ? sm_load_i64(zy.dt, zy.p, 0) : 0;
        e.ydt = a->out[0]->dtype;
    }
    sm_q8_gemm(isa, M, A->data, A->dtype, K, bp, &e, a->out[0]->data, N, 1,
               a->workspace, tp);
    return SMELT_OK;
}
