/*
 * test_core.c - dtypes, tensors, arena, allocation failure injection.
 */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "core/alloc.h"
#include "core/arena.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

static void test_dtype_names(void **state)
{
    (void)state;
    assert_string_equal(smelt_dtype_name(SMELT_DTYPE_F32), "f32");
    assert_int_equal(smelt_dtype_size(SMELT_DTYPE_BF16), 2);
    assert_int_equal(sm_dtype_from_name("i64", 3), SMELT_DTYPE_I64);
    assert_int_equal(sm_dtype_from_name("f33", 3), SMELT_DTYPE_UNDEFINED);
}

/* The unsigned dtypes: table entries, and loads / stores of u64 values
 * beyond INT64_MAX (sm_load_i64 gives the int64 bit pattern). */
static void test_dtype_unsigned(void **state)
{
    (void)state;
    static const struct {
        smelt_dtype dt;
        const char *name;
        size_t size;
        int64_t onnx;
    } want[] = {{SMELT_DTYPE_U16, "u16", 2, 4},
                {SMELT_DTYPE_U32, "u32", 4, 12},
                {SMELT_DTYPE_U64, "u64", 8, 13}};
    for (int k = 0; k < 3; k++) {
        smelt_dtype dt = want[k].dt;
        assert_string_equal(smelt_dtype_name(dt), want[k].name);
        assert_int_equal(smelt_dtype_size(dt), want[k].size);
        assert_int_equal(sm_dtype_from_name(want[k].name, 3), dt);
        assert_int_equal(sm_dtype_to_onnx(dt), want[k].onnx);
        assert_int_equal(sm_dtype_from_onnx(want[k].onnx), dt);
        assert_true(sm_dtype_is_int(dt) && sm_dtype_is_unsigned(dt));
        assert_false(sm_dtype_is_float(dt));
    }
    assert_true(sm_dtype_is_unsigned(SMELT_DTYPE_U8));
    assert_false(sm_dtype_is_unsigned(SMELT_DTYPE_I64));
    assert_false(sm_dtype_is_unsigned(SMELT_DTYPE_BOOL));
    /* existing values are stable: BOOL stays 10, the new ones follow */
    assert_int_equal(SMELT_DTYPE_BOOL, 10);
    assert_int_equal(SMELT_DTYPE_U16, 11);

    uint64_t u64[4];
    sm_store_i64(SMELT_DTYPE_U64, u64, 0, -1); /* bit pattern 2^64 - 1 */
    assert_true(u64[0] == UINT64_MAX);
    assert_true(sm_load_i64(SMELT_DTYPE_U64, u64, 0) == -1);
    assert_true(sm_load_f64(SMELT_DTYPE_U64, u64, 0) == 18446744073709551616.0);
    u64[1] = UINT64_C(9223372036854775809); /* 2^63 + 1 */
    assert_true((uint64_t)sm_load_i64(SMELT_DTYPE_U64, u64, 1) == u64[1]);
    sm_store_f64(SMELT_DTYPE_U64, u64, 2, 1e19); /* above INT64_MAX */
    assert_true(u64[2] == UINT64_C(10000000000000000000));
    sm_store_f64(SMELT_DTYPE_U64, u64, 3, -5); /* saturates at 0 */
    assert_true(u64[3] == 0);
    sm_store_f64(SMELT_DTYPE_U64, u64, 3, 1e30); /* and at 2^64 - 1 */
    assert_true(u64[3] == UINT64_MAX);
    sm_store_f64(SMELT_DTYPE_U64, u64, 3, NAN);
    assert_true(u64[3] == 0);

    uint32_t u32[1];
    sm_store_i64(SMELT_DTYPE_U32, u32, 0, 4294967295);
    assert_true(sm_load_i64(SMELT_DTYPE_U32, u32, 0) == 4294967295);
    assert_true(sm_load_f64(SMELT_DTYPE_U32, u32, 0) == 4294967295.0);
    sm_store_i64(SMELT_DTYPE_U32, u32, 0, -1); /* wraps */
    assert_true(u32[0] == UINT32_MAX);
    uint16_t u16[1];
    sm_store_f64(SMELT_DTYPE_U16, u16, 0, 65535);
    assert_true(sm_load_i64(SMELT_DTYPE_U16, u16, 0) == 65535);
    sm_store_i64(SMELT_DTYPE_U16, u16, 0, 65536 + 7);
    assert_true(u16[0] == 7);
}

static void test_half_conversions(void **state)
{
    (void)state;
    const float vals[] = {0.0f,           1.0f,           -2.5f, 65504.0f,
                          6.1035156e-05f, 5.9604645e-08f, 0.1f};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        float back = sm_f16_to_f32(sm_f32_to_f16(vals[i]));
        assert_true(fabsf(back - vals[i]) <= fabsf(vals[i]) * 1e-3f);
    }
    assert_int_equal(sm_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(sm_f32_to_f16(70000.0f), 0x7c00); /* overflow: inf */
    assert_true(isnan(sm_f16_to_f32(sm_f32_to_f16(NAN))));
    assert_int_equal(sm_f32_to_bf16(1.0f), 0x3f80);
    assert_true(sm_bf16_to_f32(sm_f32_to_bf16(3.140625f)) == 3.140625f);
}

static void test_tensor_new(void **state)
{
    (void)state;
    smelt_ctx_t *ctx = smelt_ctx_init();
    int64_t dims[2] = {2, 3};
    sm_tensor *t;
    assert_int_equal(sm_tensor_new(ctx, SMELT_DTYPE_F32, 2, dims, &t),
                     SMELT_OK);
    assert_int_equal(t->numel, 6);
    assert_int_equal(t->nbytes, 24);
    sm_tensor_free(t);
    int64_t huge[3] = {INT64_MAX / 2, 4, 4};
    assert_int_equal(sm_tensor_new(ctx, SMELT_DTYPE_F32, 3, huge, &t),
                     SMELT_ERR_LIMIT);
    assert_null(t);
    assert_non_null(strstr(smelt_ctx_error(ctx), "overflow"));
    int64_t neg[1] = {-1};
    assert_int_equal(sm_tensor_new(ctx, SMELT_DTYPE_F32, 1, neg, &t),
                     SMELT_ERR_SHAPE);
    smelt_ctx_free(ctx);
}

static void test_arena(void **state)
{
    (void)state;
    sm_arena a;
    sm_arena_init(&a);
    for (int i = 0; i < 1000; i++) {
        char *p = sm_arena_alloc(&a, (size_t)(i * 7 + 1));
        assert_non_null(p);
        assert_true(((uintptr_t)p & 15) == 0);
    }
    assert_non_null(sm_arena_alloc(&a, 1 << 20));
    assert_string_equal(sm_arena_strdup(&a, "abc"), "abc");
    sm_arena_free(&a);
}

static void test_alloc_failure(void **state)
{
    (void)state;
    sm_alloc_fail_after(0);
    assert_null(sm_malloc(10));
    sm_alloc_fail_after(-1);
    void *p = sm_malloc(10);
    assert_non_null(p);
    sm_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_names),
        cmocka_unit_test(test_dtype_unsigned),
        cmocka_unit_test(test_half_conversions),
        cmocka_unit_test(test_tensor_new),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
