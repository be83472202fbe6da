/*
 * test_optable.c - completeness of the op table generated from ops.def:
 * every op has a unique name, its shape function, reference kernel and
 * cost function, sane arity, a valid class, sub-blocks exactly when it is
 * a control op, and an attribute schema that parsed into specs matching
 * the schema string item by item (kind, required, default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/attr.h"
#include "ir/op.h"

static void test_names_unique(void **state)
{
    (void)state;
    for (int i = 0; i < SM_OP_COUNT; i++) {
        const sm_op_info *a = sm_op_info_get((sm_op)i);
        assert_non_null(a);
        assert_non_null(a->name);
        assert_true(a->name[0] != 0);
        for (int j = 0; j < i; j++) {
            const sm_op_info *b = sm_op_info_get((sm_op)j);
            if (strcmp(a->name, b->name) == 0)
                fail_msg("ops %d and %d are both named %s", j, i, a->name);
        }
    }
    assert_null(sm_op_info_get(SM_OP_COUNT));
    assert_null(sm_op_info_get((sm_op)-1));
}

static void test_functions_present(void **state)
{
    (void)state;
    int bad = 0;
    for (int i = 0; i < SM_OP_COUNT; i++) {
        const sm_op_info *op = sm_op_info_get((sm_op)i);
        const char *lacks = !op->shape  ? "shape function"
                            : !op->ref  ? "reference kernel"
                            : !op->cost ? "cost function"
                                        : NULL;
        if (lacks) {
            print_error("op %s lacks its %s\n", op->name, lacks);
            bad++;
        }
    }
    if (bad)
        fail_msg("%d ops lack a function", bad);
}

static void test_arity_and_class(void **state)
{
    (void)state;
    for (int i = 0; i < SM_OP_COUNT; i++) {
        const sm_op_info *op = sm_op_info_get((sm_op)i);
        if (op->in_min < 0 || (op->in_max >= 0 && op->in_min > op->in_max))
            fail_msg("%s: inputs %d..%d", op->name, op->in_min, op->in_max);
        if (op->out_min < 0 || (op->out_max >= 0 && op->out_min > op->out_max))
            fail_msg("%s: outputs %d..%d", op->name, op->out_min, op->out_max);
        if (op->out_max == 0)
            fail_msg("%s: can have no output", op->name);
        if ((unsigned)op->cls > SM_CLASS_OPAQUE)
            fail_msg("%s: class %d", op->name, (int)op->cls);
        assert_string_not_equal(sm_op_class_name(op->cls), "?");
        if (op->cls == SM_CLASS_CONTROL && op->n_blocks <= 0)
            fail_msg("%s: control op without sub-blocks", op->name);
        if (op->cls != SM_CLASS_CONTROL && op->n_blocks != 0)
            fail_msg("%s: %d sub-blocks but not a control op", op->name,
                     op->n_blocks);
    }
    assert_string_equal(sm_op_class_name((sm_op_class)99), "?");
    const sm_op_info *iff = sm_op_info_get(SM_OP_If);
    assert_int_equal(iff->n_blocks, 2);
    assert_int_equal(sm_op_info_get(SM_OP_Loop)->n_blocks, 1);
    assert_int_equal(sm_op_info_get(SM_OP_Add)->cls, SM_CLASS_BROADCAST);
    assert_int_equal(sm_op_info_get(SM_OP_Conv)->cls, SM_CLASS_CONTRACTION);
    assert_int_equal(sm_op_info_get(SM_OP_Sum)->in_max, -1);
}

static void test_name_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < SM_OP_COUNT; i++) {
        const char *name = sm_op_info_get((sm_op)i)->name;
        assert_int_equal(sm_op_from_name(name, (int)strlen(name)), i);
    }
    assert_int_equal(sm_op_from_name("Nope", 4), SM_OP_COUNT);
    assert_int_equal(sm_op_from_name("", 0), SM_OP_COUNT);
    /* a prefix or a longer name is not a match; len bounds the name */
    assert_int_equal(sm_op_from_name("Con", 3), SM_OP_COUNT);
    assert_int_equal(sm_op_from_name("ConvX", 5), SM_OP_COUNT);
    assert_int_equal(sm_op_from_name("ConvTranspose", 4), SM_OP_Conv);
    assert_int_equal(sm_op_from_name("add", 3), SM_OP_COUNT);
}

/* One item of a schema string, split by hand: "name:kind",
 * "name:kind=default" or "name:kind?". */
typedef struct item {
    char name[160], kind[160], def[160];
    int has_default, optional;
} item;

static void split_item(const char *s, size_t n, item *it)
{
    char buf[160];
    assert_true(n < sizeof buf);
    memcpy(buf, s, n);
    buf[n] = 0;
    memset(it, 0, sizeof *it);
    char *colon = strchr(buf, ':');
    assert_non_null(colon);
    *colon = 0;
    char *kind = colon + 1;
    char *eq = strchr(kind, '=');
    char *q = strchr(kind, '?');
    if (eq) {
        *eq = 0;
        it->has_default = 1;
        snprintf(it->def, sizeof it->def, "%s", eq + 1);
    } else if (q) {
        *q = 0;
        it->optional = 1;
    }
    snprintf(it->name, sizeof it->name, "%s", buf);
    snprintf(it->kind, sizeof it->kind, "%s", kind);
}

/* Each op's parsed specs agree with its schema string: same count (commas
 * + 1), and sm_op_attr_spec finds each item with its kind, whether it is
 * required, and its default. */
static void test_schemas(void **state)
{
    (void)state;
    for (int i = 0; i < SM_OP_COUNT; i++) {
        const sm_op_info *op = sm_op_info_get((sm_op)i);
        assert_non_null(op->schema);
        int items = 0;
        if (op->schema[0]) {
            items = 1;
            for (const char *p = op->schema; *p; p++)
                items += *p == ',';
        }
        if (op->n_spec != items)
            fail_msg("%s: %d specs parsed from \"%s\"", op->name, op->n_spec,
                     op->schema);
        const char *s = op->schema;
        for (int k = 0; k < items; k++) {
            size_t len = strcspn(s, ",");
            item it;
            split_item(s, len, &it);
            s += len + (s[len] == ',');
            const sm_attr_spec *sp = sm_op_attr_spec((sm_op)i, it.name);
            if (!sp)
                fail_msg("%s: attribute %s not found", op->name, it.name);
            assert_ptr_equal(sp, &op->spec[k]);
            assert_string_equal(sp->name, it.name);
            assert_string_equal(sm_attr_kind_name(sp->kind), it.kind);
            assert_int_equal(sp->required, !it.has_default && !it.optional);
            assert_int_equal(sp->has_default, it.has_default);
            if (!it.has_default)
                continue;
            switch (sp->kind) {
            case SM_ATTR_INT:
                assert_int_equal(sp->def.v.i, strtoll(it.def, NULL, 10));
                break;
            case SM_ATTR_FLOAT:
                assert_true(sp->def.v.f == strtod(it.def, NULL));
                break;
            case SM_ATTR_STRING:
                assert_string_equal(sp->def.v.s, it.def);
                break;
            default: fail_msg("%s.%s: default on a list", op->name, it.name);
            }
        }
        assert_null(sm_op_attr_spec((sm_op)i, "no_such_attribute"));
    }
    assert_null(sm_op_attr_spec(SM_OP_COUNT, "alpha"));
}

/* Spot checks against hand-written expectations, including how defaults
 * reach a kernel through sm_attrs. */
static void test_known_specs(void **state)
{
    (void)state;
    const sm_attr_spec *sp = sm_op_attr_spec(SM_OP_LeakyRelu, "alpha");
    assert_non_null(sp);
    assert_int_equal(sp->kind, SM_ATTR_FLOAT);
    assert_true(sp->has_default && !sp->required);
    assert_true(sp->def.v.f == 0.01);
    sp = sm_op_attr_spec(SM_OP_Conv, "group");
    assert_non_null(sp);
    assert_int_equal(sp->kind, SM_ATTR_INT);
    assert_int_equal(sp->def.v.i, 1);
    sp = sm_op_attr_spec(SM_OP_Conv, "auto_pad");
    assert_non_null(sp);
    assert_int_equal(sp->kind, SM_ATTR_STRING);
    assert_string_equal(sp->def.v.s, "NOTSET");
    sp = sm_op_attr_spec(SM_OP_Conv, "pads");
    assert_non_null(sp);
    assert_int_equal(sp->kind, SM_ATTR_INTS);
    assert_false(sp->required);
    assert_false(sp->has_default);
    sp = sm_op_attr_spec(SM_OP_Cast, "to");
    assert_non_null(sp);
    assert_true(sp->required);
    sp = sm_op_attr_spec(SM_OP_MaxPool, "kernel_shape");
    assert_non_null(sp);
    assert_int_equal(sp->kind, SM_ATTR_INTS);
    assert_true(sp->required);
    sp = sm_op_attr_spec(SM_OP_BatchNormalization, "epsilon");
    assert_non_null(sp);
    assert_true(sp->def.v.f == 1e-5);
    sp = sm_op_attr_spec(SM_OP_ConstantOfShape, "value");
    assert_non_null(sp);
    assert_int_equal(sp->kind, SM_ATTR_TENSOR);
    sp = sm_op_attr_spec(SM_OP_Constant, "value_floats");
    assert_non_null(sp);
    assert_int_equal(sp->kind, SM_ATTR_FLOATS);
    assert_null(sm_op_attr_spec(SM_OP_Relu, "alpha"));
    assert_int_equal(sm_op_info_get(SM_OP_Relu)->n_spec, 0);

    /* defaults as a kernel sees them, and a node's value overriding */
    const sm_op_info *lr = sm_op_info_get(SM_OP_LeakyRelu);
    sm_attrs at = {NULL, 0, lr->spec, lr->n_spec};
    assert_true(sm_attrs_float(&at, "alpha", -1.0) == 0.01);
    sm_attr mine = {.name = "alpha", .kind = SM_ATTR_FLOAT, .v.f = 0.2};
    at.list = &mine;
    at.n = 1;
    assert_true(sm_attrs_float(&at, "alpha", -1.0) == 0.2);
    const sm_op_info *cv = sm_op_info_get(SM_OP_Conv);
    sm_attrs ac = {NULL, 0, cv->spec, cv->n_spec};
    assert_int_equal(sm_attrs_int(&ac, "group", -1), 1);
    assert_string_equal(sm_attrs_string(&ac, "auto_pad", ""), "NOTSET");
    const int64_t *v;
    assert_int_equal(sm_attrs_ints(&ac, "pads", &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_unique),
        cmocka_unit_test(test_functions_present),
        cmocka_unit_test(test_arity_and_class),
        cmocka_unit_test(test_name_round_trip),
        cmocka_unit_test(test_schemas),
        cmocka_unit_test(test_known_specs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
