/*
 * quant_fused.c - the int8 CPU kernel of FusedQMatMul (ops.def): the
 * dynamic-quantization chain DynamicQuantizeLinear -> MatMulInteger ->
 * Cast -> Mul(scale) [-> Add(bias)] [-> activation] as one step. An f32
 * A's scale and zero point are found once per call, and its rows are
 * quantized into the workspace by the threads that multiply them
 * (sm_q8_gemm_f32a; bit-exact with DynamicQuantizeLinear), the weights
 * are packed once at plan time, and the int8 GEMM's f32 epilogue
 * (SM_Q8_OUT_F32) applies the zero points, the scale product, the bias,
 * a residual and the activation while each tile is in L1. The integer sums, the
 * scale product and the bias sum are the reference's exactly; a non-linear
 * activation runs on the f32 table's vector function of the same width (within
 * the tolerance of the f32 kernels' own epilogues).
 */
#include <string.h>

#include "core/act.h"
#include "core/alloc.h"
#include "kernels/cpu/quant_gemm.h"
#include "kernels/cpu/registry.h"
#include "kernels/ref/quant.h"

/* Input slots. */
enum { IN_A, IN_B, IN_SB, IN_ZB, IN_BIAS, IN_SA, IN_ZA, IN_RES };

typedef struct qf_geom {
    int64_t M, K, N;
    int a_f32; /* A is quantized per call */
} qf_geom;

static int is_q8(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_U8 || dt == SMELT_DTYPE_I8;
}

static const sm_kernel_operand *opnd(const sm_kernel_desc *d, int i)
{
    return i < d->n_in && d->in[i].present ? &d->in[i] : NULL;
}

static int64_t numel(const sm_kernel_operand *o)
{
    int64_t n = 1;
    for (int i = 0; i < o->ndim; i++)
        n *= o->dims[i];
    return n;
}

/* Input i absent, or of dtype f32 (want_f32) / u8 or s8, holding one
 * value or len values along one axis. */
static int vec_ok(const sm_kernel_desc *d, int i, int64_t len, int want_f32)
{
    const sm_kernel_operand *o = opnd(d, i);
    if (!o)
        return 1;
    if (want_f32 ? o->dtype != SMELT_DTYPE_F32 : !is_q8(o->dtype))
        return 0;
    int64_t n = numel(o);
    return o->ndim <= 1 && (n == 1 || n == len);
}

/* The shapes this kernel runs: A [..., M, K] (f32, or u8 / s8 with its
 * parameters per tensor), B [K, N], B's parameters and the bias per
 * tensor or per column, an f32 [..., M, N] result, a known activation,
 * a residual absent or an f32 of the result's size (rows N apart). */
static int qf_analyze(const sm_kernel_desc *d, qf_geom *g)
{
    const sm_kernel_operand *A = opnd(d, IN_A), *B = opnd(d, IN_B);
    if (!A || !B || !opnd(d, IN_SB) || d->n_out < 1 || A->ndim < 1 ||
        B->ndim != 2 || !is_q8(B->dtype) ||
        (A->dtype != SMELT_DTYPE_F32 && !is_q8(A->dtype)))
        return 0;
    g->a_f32 = A->dtype == SMELT_DTYPE_F32;
    g->K = A->dims[A->ndim - 1];
    g->N = B->dims[1];
    g->M = g->K ? numel(A) / g->K : 0;
    const sm_kernel_operand *Y = &d->out[0];
    if (g->K < 1 || g->N < 1 || g->M < 1 || B->dims[0] != g->K ||
        Y->dtype != SMELT_DTYPE_F32 || Y->ndim < 1 || numel(Y) != g->M * g->N ||
        Y->dims[Y->ndim - 1] != g->N)
        return 0;
    if (g->a_f32 && (opnd(d, IN_SA) || opnd(d, IN_ZA)))
        return 0;
    const sm_kernel_operand *R = opnd(d, IN_RES);
    if (R && (R->dtype != SMELT_DTYPE_F32 || R->ndim < 1 ||
              numel(R) != g->M * g->N || R->dims[R->ndim - 1] != g->N))
        return 0;
    if (sm_act_from_name(sm_attrs_string(&d->attrs, "activation", "none")) ==
        SM_ACT_COUNT)
        return 0;
    return vec_ok(d, IN_SB, g->N, 1) && vec_ok(d, IN_ZB, g->N, 0) &&
           vec_ok(d, IN_BIAS, g->N, 1) && vec_ok(d, IN_SA, 1, 1) &&
           vec_ok(d, IN_ZA, 1, 0);
}

int sm_cpu_qfmm_supports(const sm_kernel_desc *d)
{
    qf_geom g;
    return qf_analyze(d, &g);
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Bytes of the quantized A at the start of the workspace. */
static size_t qa_bytes(const qf_geom *g)
{
    return g->a_f32 ? align64((size_t)(g->M * g->K)) : 0;
}

/* Workspace: the quantized A (f32 A), the GEMM's packed A and row sums,
 * then B packed per call when it is not constant. */
void sm_cpu_qfmm_configure(const sm_cpu_ops *ops, const sm_kernel_desc *d,
                           sm_cpu_config *c)
{
    qf_geom g;
    c->algo = SM_CPU_ALGO_GEMM;
    if (!qf_analyze(d, &g))
        return;
    c->packs = d->in[IN_B].is_const;
    c->geom[0] = g.M;
    c->geom[1] = g.N;
    c->geom[2] = g.K;
    c->geom[3] = 1;
    c->ws_bytes = qa_bytes(&g) + sm_q8_gemm_workspace(sm_q8_isa_of(ops), g.M,
                                                      g.K, g.N, !c->packs);
}

/* B [K, N] as sm_q8_pack_b packs it. */
static sm_q8_b *pack_b(const sm_q8_isa *isa, const sm_tensor *B, void *mem)
{
    return sm_q8_pack_b(isa, B->data, B->dtype, B->dims[1], 1, B->dims[0],
                        B->dims[1], mem);
}

smelt_status sm_cpu_qfmm_prepack(const sm_cpu_ops *ops, smelt_ctx_t *ctx,
                                 const sm_kernel_desc *d,
                                 const sm_cpu_config *c,
                                 const sm_tensor *const *const_in,
                                 void **packed)
{
    (void)d;
    *packed = NULL;
    if (!c->packs || !const_in[IN_B])
        return SMELT_OK;
    const sm_q8_isa *isa = sm_q8_isa_of(ops);
    const sm_tensor *B = const_in[IN_B];
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
    if (i < a->n_in && a->in[i]) {
        v.p = a->in[i]->data;
        v.dt = a->in[i]->dtype;
        v.n = a->in[i]->numel;
    }
    return v;
}

smelt_status sm_cpu_qfmm_run(const sm_cpu_ops *ops, const sm_kargs *a,
                             const sm_cpu_config *c, const void *packed,
                             sm_threadpool *tp)
{
    const sm_q8_isa *isa = sm_q8_isa_of(ops);
    const sm_tensor *A = a->in[IN_A];
    int64_t M = c->geom[0], N = c->geom[1], K = c->geom[2];
    qf_geom g = {M, K, N, A->dtype == SMELT_DTYPE_F32};
    const sm_tensor *R = IN_RES < a->n_in ? a->in[IN_RES] : NULL;
    if (A->numel != M * K || a->out[0]->numel != M * N ||
        (R && R->numel != M * N))
        return sm_err(a->ctx, SMELT_ERR_RUNTIME,
                      "%s: the operands do not match the kernel's plan",
                      a->op_name);
    sm_act act;
    SM_TRY(sm_act_read(a->ctx, a->op_name, &a->attrs, &act));
    SM_TRY(sm_quant_check_scale(a, IN_SB, 0));
    SM_TRY(sm_quant_check_scale(a, IN_SA, 0));
    char *ws = (char *)a->workspace + qa_bytes(&g);
    const sm_q8_b *bp = packed;
    if (!bp)
        bp = pack_b(isa, a->in[IN_B],
                    ws + sm_q8_gemm_workspace(isa, M, K, N, 0));
    sm_q8_epi e = sm_q8_epi_i32();
    e.kind = SM_Q8_OUT_F32;
    e.zb = vec_in(a, IN_ZB);
    e.sb = vec_in(a, IN_SB);
    e.bias = vec_in(a, IN_BIAS);
    e.res = R ? R->data : NULL;
    e.res_rs = N;
    e.act = (int)act.kind;
    e.act_a = act.alpha;
    e.act_b = act.beta;
    e.vact = sm_q8_f32_ops(ops)->unary;
    if (g.a_f32) {
        float sa;
        uint8_t za;
        sm_q8_dynamic_params(isa, A->data, M * K, &sa, &za, tp);
        e.sa = (sm_q8_vec){&sa, SMELT_DTYPE_F32, 1};
        e.za = (sm_q8_vec){&za, SMELT_DTYPE_U8, 1};
        sm_q8_gemm_f32a(isa, M, A->data, K, sa, za, a->workspace, bp, &e,
                        a->out[0]->data, N, 1, ws, tp);
        return SMELT_OK;
    }
    e.sa = vec_in(a, IN_SA);
    e.za = vec_in(a, IN_ZA);
    sm_q8_gemm(isa, M, A->data, A->dtype, K, bp, &e, a->out[0]->data, N, 1, ws,
               tp);
    return SMELT_OK;
}
