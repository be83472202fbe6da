/*
 * op.c - the op table generated from ops.def, and attribute-schema parsing.
 */
#include "ir/op.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_MAX 12

static sm_op_info op_table[SM_OP_COUNT] = {
#define OP(nm, cls, imin, imax, omin, omax, nblk, attrs, shape, ref, cost,     \
           grad)                                                               \
    {#nm,   SM_CLASS_##cls, imin, imax, omin, omax, nblk,                      \
     attrs, shape,          ref,  cost, NULL, 0},
#include "ir/ops.def"
#undef OP
};

static sm_attr_spec spec_store[SM_OP_COUNT][SPEC_MAX];
static char name_pool[16384];
static size_t name_pool_used;
static pthread_once_t spec_once = PTHREAD_ONCE_INIT;

/* Copies n bytes of s into the static pool (schemas are compile-time
 * constants, so the pool's size is checked by the op-table test). */
static const char *pool_str(const char *s, size_t n)
{
    SM_ASSERT(name_pool_used + n + 1 <= sizeof name_pool);
    char *d = name_pool + name_pool_used;
    memcpy(d, s, n);
    d[n] = 0;
    name_pool_used += n + 1;
    return d;
}

static sm_attr_kind kind_from(const char *s, size_t n)
{
    for (int k = 0; k < SM_ATTR_KIND_COUNT; k++) {
        const char *name = sm_attr_kind_name((sm_attr_kind)k);
        if (strlen(name) == n && memcmp(name, s, n) == 0)
            return (sm_attr_kind)k;
    }
    SM_ASSERT(!"unknown attribute kind in ops.def");
    return SM_ATTR_INT;
}

/* Parses one "name:kind[=default|?]" item into sp. */
static void parse_item(const char *s, size_t n, sm_attr_spec *sp)
{
    const char *colon = memchr(s, ':', n);
    SM_ASSERT(colon);
    sp->name = pool_str(s, (size_t)(colon - s));
    const char *k = colon + 1, *end = s + n;
    const char *eq = memchr(k, '=', (size_t)(end - k));
    const char *q = memchr(k, '?', (size_t)(end - k));
    const char *kend = eq ? eq : q ? q : end;
    sp->kind = kind_from(k, (size_t)(kend - k));
    sp->required = !eq && !q;
    sp->def.name = sp->name;
    sp->def.kind = sp->kind;
    if (!eq)
        return;
    sp->has_default = 1;
    const char *d = pool_str(eq + 1, (size_t)(end - eq - 1));
    switch (sp->kind) {
    case SM_ATTR_INT: sp->def.v.i = strtoll(d, NULL, 10); break;
    case SM_ATTR_FLOAT: sp->def.v.f = strtod(d, NULL); break;
    case SM_ATTR_STRING: sp->def.v.s = d; break;
    default: SM_ASSERT(!"list defaults are not supported in ops.def");
    }
}

static void parse_specs(void)
{
    for (int op = 0; op < SM_OP_COUNT; op++) {
        const char *s = op_table[op].schema;
        int n = 0;
        while (*s) {
            const char *comma = strchr(s, ',');
            size_t len = comma ? (size_t)(comma - s) : strlen(s);
            SM_ASSERT(n < SPEC_MAX);
            parse_item(s, len, &spec_store[op][n++]);
            s += len + (comma ? 1 : 0);
        }
        op_table[op].spec = spec_store[op];
        op_table[op].n_spec = n;
    }
}

const sm_op_info *sm_op_info_get(sm_op op)
{
    if ((unsigned)op >= SM_OP_COUNT)
        return NULL;
    pthread_once(&spec_once, parse_specs);
    return &op_table[op];
}

/* "1 input", "2 to 3 inputs", "at least 1 input": a count range in words
 * (max < 0: no upper bound). */
static void count_words(char *buf, size_t size, int min, int max,
                        const char *noun)
{
    if (max == min)
        snprintf(buf, size, "%d %s%s", min, noun, min == 1 ? "" : "s");
    else if (max < 0)
        snprintf(buf, size, "at least %d %s%s", min, noun, min == 1 ? "" : "s");
    else
        snprintf(buf, size, "%d to %d %ss", min, max, noun);
}

int sm_op_arity_error(sm_op op, int n_in, int n_out, char *buf, size_t size)
{
    const sm_op_info *info = sm_op_info_get(op);
    char want[48];
    if (!info)
        return 0;
    if (n_in < info->in_min || (info->in_max >= 0 && n_in > info->in_max)) {
        count_words(want, sizeof want, info->in_min, info->in_max, "input");
        snprintf(buf, size, "%s takes %s, got %d", info->name, want, n_in);
        return 1;
    }
    if (n_out < info->out_min ||
        (info->out_max >= 0 && n_out > info->out_max)) {
        count_words(want, sizeof want, info->out_min, info->out_max, "output");
        snprintf(buf, size, "%s gives %s, got %d", info->name, want, n_out);
        return 1;
    }
    return 0;
}

sm_op sm_op_from_name(const char *name, int len)
{
    for (int i = 0; i < SM_OP_COUNT; i++)
        if ((int)strlen(op_table[i].name) == len &&
            memcmp(op_table[i].name, name, (size_t)len) == 0)
            return (sm_op)i;
    return SM_OP_COUNT;
}

const char *sm_op_class_name(sm_op_class c)
{
    static const char *names[] = {"elemwise",    "broadcast", "reduction",
                                  "contraction", "movement",  "control",
                                  "opaque"};
    return (unsigned)c < sizeof names / sizeof *names ? names[c] : "?";
}

const char *sm_op_block_label(sm_op op, int i)
{
    if (op < 0 || op >= SM_OP_COUNT || i < 0 ||
        i >= sm_op_info_get(op)->n_blocks)
        return NULL;
    if (op == SM_OP_If)
        return i == 0 ? "then_branch" : "else_branch";
    return "body";
}

const sm_attr_spec *sm_op_attr_spec(sm_op op, const char *name)
{
    const sm_op_info *info = sm_op_info_get(op);
    for (int i = 0; info && i < info->n_spec; i++)
        if (strcmp(info->spec[i].name, name) == 0)
            return &info->spec[i];
    return NULL;
}
