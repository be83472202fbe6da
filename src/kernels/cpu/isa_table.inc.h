/*
 * isa_table.inc.h - the sm_cpu_ops table of one ISA, from the templates
 * included before it; its name is sm_cpu_ops_<SM_ISA_SUFFIX>.
 */
#define SM_ISA_CAT2(a, b) a##b
#define SM_ISA_CAT(a, b) SM_ISA_CAT2(a, b)
#define SM_ISA_STR2(a) #a
#define SM_ISA_STR(a) SM_ISA_STR2(a)

#if VL == 16
#define SM_ISA_FEATURES SM_CPU_ISA_AVX512
#elif VL == 8
#define SM_ISA_FEATURES SM_CPU_ISA_AVX2
#else
#define SM_ISA_FEATURES 0u
#endif

const sm_cpu_ops SM_ISA_CAT(sm_cpu_ops_, SM_ISA_SUFFIX) = {
    .name = SM_ISA_STR(SM_ISA_SUFFIX),
    .isa = SM_ISA_FEATURES,
    .vl = VL,
    .mr = GEMM_MR,
    .nr = NR,
    .gemm_ukr = gemm_ukr,
    .gemm_ukr_rowk = gemm_ukr_rowk,
    .gemm_pack_a = gemm_pack_a,
    .gemm_pack_b = gemm_pack_b,
    .epi_tile = epi_tile,
    .unary = unary,
    .binary = binary,
    .reduce = reduce,
    .reduce_acc = reduce_acc,
    .softmax_row = softmax_row,
    .softmax_cols = softmax_cols,
    .layernorm_row = layernorm_row,
    .axpy_strided = axpy_strided,
    .max_strided = max_strided,
    .max_taps = max_taps,
    .gather2 = gather2,
    .dw_row = dw_row,
    .cdir_row = cdir_row,
    .dw_cblock = dw_cblock,
    .lanes_in = lanes_in,
    .lanes_out = lanes_out,
    .wino_in = wino_in,
    .wino_out = wino_out,
    .attn_bq = ATT_BQ,
    .attn_block = attn_block,
    .attn_grad_task = attn_grad_task,
};
