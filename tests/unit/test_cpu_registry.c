/*
 * test_cpu_registry.c - the registry built from kernels.def: every VEC
 * row expanded into its three ISA instances and every ANY row into one,
 * instances of an op widest first, the choice honouring the ISA mask, and
 * the decisions kernels record (sm_cpu_config) as the plan prints them.
 */
#include "cpu_harness.h"

#include <string.h>

#include "kernels/cpu/quant_gemm.h"

/* The rows of kernels.def, as the registry should expand them. */
typedef struct row {
    const char *name;
    sm_op op;
    int vec;
} row;

#define ROW_VEC 1
#define ROW_ANY 0
#define ROW_Q8 2
static const row rows[] = {
#define CPU_KERNEL(name, op, isas, ...) {#name, SM_OP_##op, ROW_##isas},
#include "kernels/cpu/kernels.def"
#undef CPU_KERNEL
};

#define N_ROWS ((int)(sizeof rows / sizeof rows[0]))

/* Each row gives its instances, named and bound as registry.h says, in
 * table order within its op; the count adds up. */
static void test_rows_expand(void **state)
{
    (void)state;
    int want = 0;
    /* per row kind: instance count, suffixes, tables, features */
    static const int count[3] = {1, 3, 4};
    const char *sfx[3][4] = {
        {"_any"},
        {"_f32_avx512", "_f32_avx2", "_f32_scalar"},
        {"_i8_avx512vnni", "_i8_avxvnni", "_i8_avx2", "_i8_scalar"}};
    const sm_cpu_ops *ops[3][4] = {
        {&sm_cpu_ops_scalar},
        {&sm_cpu_ops_avx512, &sm_cpu_ops_avx2, &sm_cpu_ops_scalar},
        {&sm_cpu_ops_q8_avx512vnni, &sm_cpu_ops_q8_avxvnni, &sm_cpu_ops_q8_avx2,
         &sm_cpu_ops_q8_scalar}};
    const unsigned isa[3][4] = {{0},
                                {SM_CPU_ISA_AVX512, SM_CPU_ISA_AVX2, 0},
                                {SM_CPU_ISA_AVX512 | SM_CPU_AVX512VNNI,
                                 SM_CPU_ISA_AVX2 | SM_CPU_AVXVNNI,
                                 SM_CPU_ISA_AVX2, 0}};
    for (int r = 0; r < N_ROWS; r++) {
        int n, kind = rows[r].vec;
        const sm_cpu_kernel *const *ks = sm_cpu_kernels_for(rows[r].op, &n);
        /* this row's instances follow those of the op's earlier rows */
        int at = 0;
        for (int q = 0; q < r; q++)
            if (rows[q].op == rows[r].op)
                at += count[rows[q].vec];
        for (int i = 0; i < count[kind]; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", rows[r].name, sfx[kind][i]);
            assert_true(at + i < n);
            const sm_cpu_kernel *k = ks[at + i];
            assert_string_equal(k->name, name);
            assert_int_equal(k->op, rows[r].op);
            assert_int_equal(k->isa, isa[kind][i]);
            assert_ptr_equal(k->ops, ops[kind][i]);
            assert_non_null(k->supports);
            assert_non_null(k->configure);
            assert_non_null(k->prepack);
            assert_non_null(k->run);
            assert_non_null(k->layouts);
        }
        want += count[kind];
    }
    assert_int_equal(sm_cpu_kernel_count(), want);
    assert_null(sm_cpu_kernel_find("conv_f32_sse9"));
    assert_int_equal(sm_cpu_kernel_find("slice_any")->op, SM_OP_Slice);
}

/* The choice takes the widest instance the features allow: every level
 * gets its own ISA's instance of the same row. */
static void test_choose_by_isa(void **state)
{
    (void)state;
    sm_tensor *in[2] = {ck_rand(2, D(4, 8), 1), ck_rand(2, D(8, 16), 2)};
    sm_tensor *out[1] = {nn_tensor(F32, 2, D(4, 16), NULL)};
    const sm_op_info *info = sm_op_info_get(SM_OP_MatMul);
    sm_attrs at = {NULL, 0, info->spec, info->n_spec};
    sm_kernel_operand ins[2], outs[1];
    sm_kernel_desc d;
    ck_desc(SM_OP_MatMul, 2, in, 1, out, &at, 0, 1, ins, outs, &d);
    assert_ptr_equal(sm_cpu_kernel_choose(&d, SM_CPU_LEVEL_SCALAR),
                     CK_K(matmul, scalar));
    assert_ptr_equal(sm_cpu_kernel_choose(&d, SM_CPU_LEVEL_AVX2),
                     CK_K(matmul, avx2));
    assert_ptr_equal(sm_cpu_kernel_choose(&d, SM_CPU_LEVEL_AVX512),
                     CK_K(matmul, avx512));
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
}

/* A configured matmul records its product and whether it packs B (a
 * constant), and the record prints as the plan shows it; a kernel with
 * no choice gets the plain record. */
static void test_config_records(void **state)
{
    (void)state;
    sm_tensor *in[2] = {ck_rand(3, D(2, 4, 8), 1), ck_rand(2, D(8, 16), 2)};
    sm_tensor *out[1] = {nn_tensor(F32, 3, D(2, 4, 16), NULL)};
    const sm_op_info *info = sm_op_info_get(SM_OP_MatMul);
    sm_attrs at = {NULL, 0, info->spec, info->n_spec};
    sm_kernel_operand ins[2], outs[1];
    sm_kernel_desc d;
    char text[160];
    for (int c = 0; c < 2; c++) {
        ck_desc(SM_OP_MatMul, 2, in, 1, out, &at, c ? 2 : 0, 2, ins, outs, &d);
        sm_cpu_config cfg;
        sm_cpu_kernel_configure(CK_K(matmul, scalar), &d, &cfg);
        assert_int_equal(cfg.algo, SM_CPU_ALGO_GEMM);
        assert_int_equal(cfg.packs, c);
        /* B does not vary over the batch: it folds into M */
        assert_int_equal(cfg.geom[0], 8);
        assert_int_equal(cfg.geom[1], 16);
        assert_int_equal(cfg.geom[2], 8);
        assert_true(cfg.ws_bytes > 0);
        sm_cpu_config_str(&cfg, text, sizeof text);
        assert_string_equal(text, c ? "gemm m=8 n=16 k=8 batch=1 packed"
                                    : "gemm m=8 n=16 k=8 batch=1");
    }
    for (int i = 0; i < 2; i++)
        sm_tensor_free(in[i]);
    sm_tensor_free(out[0]);
    sm_tensor *x[1] = {ck_rand(1, D(5), 3)};
    sm_tensor *y[1] = {nn_tensor(F32, 1, D(5), NULL)};
    info = sm_op_info_get(SM_OP_Relu);
    at = (sm_attrs){NULL, 0, info->spec, info->n_spec};
    ck_desc(SM_OP_Relu, 1, x, 1, y, &at, 0, 1, ins, outs, &d);
    sm_cpu_config cfg;
    sm_cpu_kernel_configure(CK_K(relu, avx2), &d, &cfg);
    assert_int_equal(cfg.algo, SM_CPU_ALGO_PLAIN);
    assert_int_equal(cfg.packs, 0);
    assert_int_equal(cfg.ws_bytes, 0);
    sm_cpu_config_str(&cfg, text, sizeof text);
    assert_string_equal(text, "");
    sm_tensor_free(x[0]);
    sm_tensor_free(y[0]);
    /* a short buffer is cut, terminated */
    cfg = (sm_cpu_config){SM_CPU_ALGO_WINOGRAD, 1, 0, {196}, 0};
    sm_cpu_config_str(&cfg, text, 12);
    assert_string_equal(text, "winograd f(");
    sm_cpu_config_str(&cfg, text, sizeof text);
    assert_string_equal(text, "winograd f(4,3) tiles=196 packed");
}

/* The convolution decides once, by shape and by whether its weights are
 * constant: Winograd only for constant weights (it reads them only
 * transformed), and the prepack of the GEMM and direct paths only then
 * too. */
static void test_conv_decides(void **state)
{
    (void)state;
    struct {
        int64_t c, hw, m, k, group;
        sm_cpu_algo with_const, without;
    } cs[] = {
        {64, 28, 64, 3, 1, SM_CPU_ALGO_WINOGRAD, SM_CPU_ALGO_IM2COL},
        {32, 56, 64, 1, 1, SM_CPU_ALGO_GEMM_1X1, SM_CPU_ALGO_GEMM_1X1},
        {3, 64, 16, 3, 1, SM_CPU_ALGO_DIRECT, SM_CPU_ALGO_DIRECT},
        {32, 14, 32, 3, 32, SM_CPU_ALGO_DEPTHWISE_BLOCKED,
         SM_CPU_ALGO_DEPTHWISE_BLOCKED},
        {32, 7, 64, 3, 1, SM_CPU_ALGO_POS_MAJOR, SM_CPU_ALGO_IM2COL},
    };
    const sm_op_info *info = sm_op_info_get(SM_OP_Conv);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        sm_attr al[2] = {
            A_INTS("pads", cs[i].k / 2, cs[i].k / 2, cs[i].k / 2, cs[i].k / 2),
            A_INT("group", cs[i].group)};
        sm_attrs at = {al, 2, info->spec, info->n_spec};
        sm_tensor *in[2] = {
            nn_tensor(F32, 4, D(1, cs[i].c, cs[i].hw, cs[i].hw), NULL),
            nn_tensor(F32, 4,
                      D(cs[i].m, cs[i].c / cs[i].group, cs[i].k, cs[i].k),
                      NULL)};
        sm_tensor *out[1] = {
            nn_tensor(F32, 4, D(1, cs[i].m, cs[i].hw, cs[i].hw), NULL)};
        sm_kernel_operand ins[2], outs[1];
        sm_kernel_desc d;
        for (int c = 0; c < 2; c++) {
            ck_desc(SM_OP_Conv, 2, in, 1, out, &at, c ? 2 : 0, 1, ins, outs,
                    &d);
            assert_true(CK_K(conv, scalar)->supports(&d));
            sm_cpu_config cfg;
            sm_cpu_kernel_configure(CK_K(conv, scalar), &d, &cfg);
            sm_cpu_algo want = c ? cs[i].with_const : cs[i].without;
            if (cfg.algo != want)
                fail_msg("case %zu (%s weights): %s, expected %s", i,
                         c ? "constant" : "run-time",
                         sm_cpu_algo_name(cfg.algo), sm_cpu_algo_name(want));
            int packs =
                c && (want == SM_CPU_ALGO_WINOGRAD ||
                      want == SM_CPU_ALGO_POS_MAJOR ||
                      want == SM_CPU_ALGO_GEMM_1X1 ||
                      want == SM_CPU_ALGO_IM2COL || want == SM_CPU_ALGO_DIRECT);
            assert_int_equal(cfg.packs, packs);
            assert_true(cfg.ws_bytes > 0);
        }
        for (int j = 0; j < 2; j++)
            sm_tensor_free(in[j]);
        sm_tensor_free(out[0]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_expand),
        cmocka_unit_test(test_choose_by_isa),
        cmocka_unit_test(test_config_records),
        cmocka_unit_test(test_conv_decides),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
