/*
 * test_cpu_elementwise.c - the optimized elementwise kernels
 * (kernels/cpu/elementwise.c) against the reference kernels, for every ISA
 * entry this machine can run, on odd sizes whose rows end in partial
 * vectors, with 1, 2 and 3 threads.
 */
#include "cpu_harness.h"

#include "core/act.h"

static void unary_case(sm_op op, const sm_cpu_kernel *const *ks,
                       const sm_attr *al, int n_al, int positive)
{
    static const int64_t n[] = {1, 15, 16, 17, 100003};
    for (size_t i = 0; i < N_OF(n); i++) {
        sm_tensor *x = ck_rand(1, D(n[i]), (unsigned)i);
        for (int64_t j = 0; j < x->numel; j++) {
            float *p = (float *)x->data + j;
            *p = positive ? fabsf(*p) * 4 + 0.01f : *p * 6;
        }
        CK_CHECK(op, 1, ((sm_tensor *[]){x}), 1, al, n_al, ks, 0, 1e-6, 2e-6);
    }
}

static void test_unary(void **state)
{
    (void)state;
    unary_case(SM_OP_Relu, CK_ENTRIES(relu), NO_ATTRS, 0);
    unary_case(SM_OP_Sigmoid, CK_ENTRIES(sigmoid), NO_ATTRS, 0);
    unary_case(SM_OP_Tanh, CK_ENTRIES(tanh), NO_ATTRS, 0);
    unary_case(SM_OP_LeakyRelu, CK_ENTRIES(leakyrelu),
               ATTRS(A_FLOAT("alpha", 0.2)), 0);
    unary_case(SM_OP_Gelu, CK_ENTRIES(gelu), NO_ATTRS, 0);
    unary_case(SM_OP_Gelu, CK_ENTRIES(gelu),
               ATTRS(A_STR("approximate", "tanh")), 0);
    unary_case(SM_OP_Exp, CK_ENTRIES(exp), NO_ATTRS, 0);
    unary_case(SM_OP_Neg, CK_ENTRIES(neg), NO_ATTRS, 0);
    unary_case(SM_OP_Abs, CK_ENTRIES(abs), NO_ATTRS, 0);
    unary_case(SM_OP_Sqrt, CK_ENTRIES(sqrt), NO_ATTRS, 1);
    unary_case(SM_OP_Erf, CK_ENTRIES(erf), NO_ATTRS, 0);
    unary_case(SM_OP_Reciprocal, CK_ENTRIES(reciprocal), NO_ATTRS, 1);
    /* Clip with both bounds, with only a lower one */
    CK_CHECK(SM_OP_Clip, 3,
             ((sm_tensor *[]){ck_rand(2, D(3, 37), 1),
                              nn_tensor(F32, 0, NULL, V(-0.5)),
                              nn_tensor(F32, 0, NULL, V(0.25))}),
             1, NO_ATTRS, CK_ENTRIES(clip), 0, 0, 0);
    CK_CHECK(
        SM_OP_Clip, 2,
        ((sm_tensor *[]){ck_rand(1, D(21), 2), nn_tensor(F32, 0, NULL, V(0))}),
        1, NO_ATTRS, CK_ENTRIES(clip), 0, 0, 0);
}

/* Infinities, NaN, overflow and underflow give what the reference gives
 * (exp(100) = inf, exp(-100) ~ 0, tanh(inf) = 1, NaN stays NaN). */
static void test_unary_special(void **state)
{
    (void)state;
    static const double v[] = {-INFINITY, -100, -88.7,    -1e-30, 0,
                               88.7,      100,  INFINITY, NAN,    0.5};
    struct {
        sm_op op;
        const sm_cpu_kernel *const *ks;
    } ops[] = {{SM_OP_Exp, CK_ENTRIES(exp)},
               {SM_OP_Sigmoid, CK_ENTRIES(sigmoid)},
               {SM_OP_Tanh, CK_ENTRIES(tanh)},
               {SM_OP_Erf, CK_ENTRIES(erf)},
               {SM_OP_Relu, CK_ENTRIES(relu)}};
    for (size_t i = 0; i < N_OF(ops); i++)
        CK_CHECK(ops[i].op, 1,
                 ((sm_tensor *[]){nn_tensor(F32, 1, D(N_OF(v)), v)}), 1,
                 NO_ATTRS, ops[i].ks, 0, 1e-6, 2e-6);
}

/* Broadcast patterns: same shape, row vector, column vector, scalar,
 * scalar first, outer products, per-channel [1,C,1,1]. */
static void test_binary(void **state)
{
    (void)state;
    struct {
        int ra;
        const int64_t *a;
        int rb;
        const int64_t *b;
    } cs[] = {
        {2, D(5, 37), 2, D(5, 37)},
        {2, D(5, 37), 1, D(37)},
        {2, D(5, 37), 2, D(5, 1)},
        {2, D(5, 37), 0, NULL},
        {0, NULL, 2, D(3, 17)},
        {2, D(9, 1), 2, D(1, 23)},
        {4, D(2, 6, 5, 7), 4, D(1, 6, 1, 1)},
        {3, D(4, 1, 33), 2, D(3, 1)},
        {1, D(70000), 1, D(70000)},
    };
    sm_op ops[6] = {SM_OP_Add, SM_OP_Sub, SM_OP_Mul,
                    SM_OP_Div, SM_OP_Max, SM_OP_Min};
    const sm_cpu_kernel *const *ks[6] = {CK_ENTRIES(add), CK_ENTRIES(sub),
                                         CK_ENTRIES(mul), CK_ENTRIES(div),
                                         CK_ENTRIES(max), CK_ENTRIES(min)};
    for (int o = 0; o < 6; o++)
        for (size_t c = 0; c < N_OF(cs); c++) {
            sm_tensor *b = ck_rand(cs[c].rb, cs[c].b, 2);
            if (ops[o] == SM_OP_Div) /* keep divisors away from 0 */
                for (int64_t i = 0; i < b->numel; i++)
                    ((float *)b->data)[i] += ((float *)b->data)[i] < 0 ? -1 : 1;
            CK_CHECK(ops[o], 2,
                     ((sm_tensor *[]){ck_rand(cs[c].ra, cs[c].a, 1), b}), 1,
                     NO_ATTRS, ks[o], 0, 1e-7, 1e-6);
        }
}

/* elementwise_compare.c: f32 comparisons into bool with broadcasting,
 * on random operands, on equal ones (the >= / <= ties) and with NaN. */
static void test_compare(void **state)
{
    (void)state;
    struct {
        int ra;
        const int64_t *a;
        int rb;
        const int64_t *b;
        unsigned seed_b;
    } cs[] = {
        {2, D(5, 37), 2, D(5, 37), 2}, {2, D(5, 37), 2, D(5, 37), 1},
        {2, D(5, 37), 0, NULL, 2},     {0, NULL, 2, D(3, 17), 2},
        {2, D(9, 1), 2, D(1, 23), 2},  {4, D(2, 6, 5, 7), 4, D(1, 6, 1, 1), 2},
        {1, D(70000), 1, D(70000), 2},
    };
    sm_op ops[4] = {SM_OP_Greater, SM_OP_Less, SM_OP_GreaterOrEqual,
                    SM_OP_LessOrEqual};
    const sm_cpu_kernel *const *ks[4] = {CK_ONE(greater), CK_ONE(less),
                                         CK_ONE(greaterorequal),
                                         CK_ONE(lessorequal)};
    for (int o = 0; o < 4; o++)
        for (size_t c = 0; c < N_OF(cs); c++) {
            sm_tensor *a = ck_rand(cs[c].ra, cs[c].a, 1);
            ((float *)a->data)[0] = NAN;
            CK_CHECK(
                ops[o], 2,
                ((sm_tensor *[]){a, ck_rand(cs[c].rb, cs[c].b, cs[c].seed_b)}),
                1, NO_ATTRS, ks[o], 0, 0, 0);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_unary_special),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, ck_setup, ck_teardown);
}
