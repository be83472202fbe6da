/*
 * test_filecheck.c - runs every .ir pass test in tests/passes, in the manner of
 * LLVM's FileCheck.
 *
 * A test file is a text-IR graph whose comments carry the directives:
 *
 *   # RUN: fold,dce          the passes to run (or -O1, -O2, ...)
 *   # OPTIONS: fold_max_bytes=16 unroll_max_trips=4     (optional)
 *   # CHECK: text            found at or after the previous match
 *   # CHECK-NEXT: text       found on the line after the previous match
 *   # CHECK-SAME: text       found on the same line, after the previous match
 *   # CHECK-NOT: text        absent between the matches around it
 *
 * Patterns are literal text, matched against the printed output graph.
 * The graph must verify before the pipeline and after every pass. When all
 * inputs have known shapes, the reference interpreter runs the graph
 * before and after on the same seeded random inputs and the outputs must
 * agree (assert_close tolerances). A failing CHECK is reported as
 * file:line with the actual output.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/dtype.h"
#include "core/tensor.h"
#include "ir/ir.h"
#include "ir/infer.h"
#include "ir/rewrite.h"
#include "passes/pass.h"
#include "runtime/interp.h"

#define MAX_FILES 512
#define MAX_CHECKS 256
#define MAX_IO 64

typedef enum { C_PLAIN, C_NEXT, C_SAME, C_NOT } check_kind;

typedef struct check {
    check_kind kind;
    int line; /* in the test file */
    char pat[512];
} check;

typedef struct test_file {
    char path[4096];
    char run[512];
    int run_line;
    sm_pass_options opt;
    check checks[MAX_CHECKS];
    int n_checks;
} test_file;

/* Reads the directives of text into t. */
static void read_directives(const char *text, test_file *t)
{
    sm_pass_options_default(&t->opt);
    t->opt.verify_each = 1;
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char buf[600];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 599 ? len : 599), p);
        const char *s = buf;
        while (*s == ' ')
            s++;
        static const struct {
            const char *tag;
            check_kind kind;
        } tags[] = {{"# CHECK-NEXT:", C_NEXT},
                    {"# CHECK-SAME:", C_SAME},
                    {"# CHECK-NOT:", C_NOT},
                    {"# CHECK:", C_PLAIN}};
        for (size_t k = 0; k < sizeof tags / sizeof *tags; k++) {
            size_t tl = strlen(tags[k].tag);
            if (strncmp(s, tags[k].tag, tl))
                continue;
            assert_true(t->n_checks < MAX_CHECKS);
            check *c = &t->checks[t->n_checks++];
            const char *q = s + tl;
            while (*q == ' ')
                q++;
            c->kind = tags[k].kind;
            c->line = line;
            snprintf(c->pat, sizeof c->pat, "%s", q);
            size_t n = strlen(c->pat);
            while (n && (c->pat[n - 1] == ' ' || c->pat[n - 1] == '\r'))
                c->pat[--n] = 0;
            break;
        }
        if (!strncmp(s, "# RUN:", 6) && !t->run_line) {
            const char *q = s + 6;
            while (*q == ' ')
                q++;
            snprintf(t->run, sizeof t->run, "%s", q);
            t->run_line = line;
        }
        if (!strncmp(s, "# OPTIONS:", 10)) {
            const char *q;
            if ((q = strstr(s, "fold_max_bytes=")))
                t->opt.fold_max_bytes = strtoull(q + 15, NULL, 10);
            if ((q = strstr(s, "unroll_max_trips=")))
                t->opt.unroll_max_trips = atoi(q + 17);
        }
        p = end ? end + 1 : p + len;
    }
}

/* Line number (0-based) of offset off in out. */
static int line_of(const char *out, size_t off)
{
    int k = 0;
    for (size_t i = 0; i < off; i++)
        k += out[i] == '\n';
    return k;
}

static size_t line_end(const char *out, size_t off)
{
    const char *nl = strchr(out + off, '\n');
    return nl ? (size_t)(nl - out) : strlen(out);
}

/* Whether pat occurs in out[from, to). */
static const char *find_in(const char *out, size_t from, size_t to,
                           const char *pat)
{
    size_t n = strlen(pat);
    for (size_t i = from; i + n <= to; i++)
        if (!memcmp(out + i, pat, n))
            return out + i;
    return NULL;
}

/* Matches t's checks against out; on failure fills msg and returns 0. */
static int match_checks(const test_file *t, const char *out, char *msg,
                        size_t msg_size)
{
    size_t pos = 0, total = strlen(out);
    int last_line = -1;
    int nots[MAX_CHECKS], n_nots = 0;
    for (int i = 0; i <= t->n_checks; i++) {
        const check *c = i < t->n_checks ? &t->checks[i] : NULL;
        if (c && c->kind == C_NOT) {
            nots[n_nots++] = i;
            continue;
        }
        size_t from = pos, to = total;
        if (c && c->kind == C_NEXT) {
            if (last_line < 0 || !strchr(out + pos, '\n')) {
                snprintf(msg, msg_size,
                         "%s:%d: CHECK-NEXT: no line after the previous match "
                         "for '%s'",
                         t->path, c->line, c->pat);
                return 0;
            }
            from = line_end(out, pos) + 1;
            to = line_end(out, from);
        } else if (c && c->kind == C_SAME) {
            to = line_end(out, pos);
        }
        const char *m = c ? find_in(out, from, to, c->pat) : out + total;
        if (!m) {
            snprintf(msg, msg_size, "%s:%d: %s: '%s' not found%s", t->path,
                     c->line,
                     c->kind == C_NEXT   ? "CHECK-NEXT"
                     : c->kind == C_SAME ? "CHECK-SAME"
                                         : "CHECK",
                     c->pat,
                     c->kind == C_NEXT   ? " on the next line"
                     : c->kind == C_SAME ? " on the same line"
                                         : " after the previous match");
            return 0;
        }
        size_t mstart = (size_t)(m - out);
        for (int k = 0; k < n_nots; k++) {
            const check *nc = &t->checks[nots[k]];
            if (find_in(out, pos, mstart, nc->pat)) {
                snprintf(msg, msg_size, "%s:%d: CHECK-NOT: '%s' found", t->path,
                         nc->line, nc->pat);
                return 0;
            }
        }
        n_nots = 0;
        if (c) {
            pos = mstart + strlen(c->pat);
            last_line = line_of(out, mstart);
        }
    }
    return 1;
}

/* ---- running the graph before and after ---------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random inputs for every graph input; 0 when some input's shape is not
 * known (the comparison is skipped then). */
static int make_inputs(const sm_graph *g, sm_tensor **in)
{
    uint64_t state = 42;
    for (int i = 0; i < g->top->n_params; i++) {
        const sm_type *t = &g->top->params[i]->type;
        if (!sm_type_known(t))
            return 0;
        int64_t dims[SMELT_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++)
            dims[d] = t->dims[d].size;
        assert_int_equal(sm_tensor_new(NULL, t->dtype, t->ndim, dims, &in[i]),
                         SMELT_OK);
        for (int64_t k = 0; k < in[i]->numel; k++) {
            uint64_t r = splitmix(&state);
            if (sm_dtype_is_float(t->dtype))
                sm_store_f64(t->dtype, in[i]->data, k,
                             (double)((int64_t)(r % 512) - 256) / 256);
            else
                sm_store_i64(t->dtype, in[i]->data, k,
                             t->dtype == SMELT_DTYPE_BOOL ? (int64_t)(r & 1)
                                                          : (int64_t)(r % 4));
        }
    }
    return 1;
}

static double tol_of(smelt_dtype dt, int rel)
{
    switch (dt) {
    case SMELT_DTYPE_F32: return rel ? 1.3e-6 : 1e-5;
    case SMELT_DTYPE_F64: return 1e-7;
    case SMELT_DTYPE_F16: return rel ? 1e-3 : 1e-5;
    case SMELT_DTYPE_BF16: return rel ? 1.6e-2 : 1e-5;
    default: return 0;
    }
}

/* Compares the outputs of before and after on the same random inputs. */
static void compare_runs(const test_file *t, const sm_graph *before,
                         const sm_graph *after)
{
    sm_tensor *in[MAX_IO] = {0}, *want[MAX_IO] = {0}, *got[MAX_IO] = {0};
    int n_in = before->top->n_params, n_out = before->top->n_ret;
    assert_true(n_in <= MAX_IO && n_out <= MAX_IO);
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (make_inputs(before, in) &&
        sm_interp_run(ctx, before, in, n_in, want, n_out) == SMELT_OK) {
        if (sm_interp_run(ctx, after, in, n_in, got, n_out) != SMELT_OK)
            fail_msg("%s: the optimized graph fails to run: %s", t->path,
                     smelt_ctx_error(ctx));
        for (int o = 0; o < n_out; o++) {
            assert_int_equal(want[o]->dtype, got[o]->dtype);
            assert_int_equal(want[o]->numel, got[o]->numel);
            double rt = tol_of(want[o]->dtype, 1),
                   at = tol_of(want[o]->dtype, 0);
            for (int64_t k = 0; k < want[o]->numel; k++) {
                double w = sm_load_f64(want[o]->dtype, want[o]->data, k);
                double g = sm_load_f64(got[o]->dtype, got[o]->data, k);
                if ((isnan(w) && isnan(g)) || w == g)
                    continue;
                if (!(fabs(w - g) <= at + rt * fabs(w)))
                    fail_msg("%s: output %d element %lld: %.9g before the "
                             "passes, %.9g after",
                             t->path, o, (long long)k, w, g);
            }
        }
    }
    for (int i = 0; i < MAX_IO; i++) {
        sm_tensor_free(in[i]);
        sm_tensor_free(want[i]);
        sm_tensor_free(got[i]);
    }
    smelt_ctx_free(ctx);
}

static void run_file(void **state)
{
    test_file *t = *state;
    size_t len;
    char *text = tu_read_file(t->path, &len);
    assert_non_null(text);
    read_directives(text, t);
    if (!t->run_line)
        fail_msg("%s: no '# RUN:' line", t->path);
    smelt_ctx_t *ctx = smelt_ctx_init();
    sm_graph *g = NULL, *orig = NULL;
    if (smelt_graph_parse(ctx, text, len, t->path, &g) != SMELT_OK)
        fail_msg("%s", smelt_ctx_error(ctx));
    free(text);
    if (sm_graph_verify(ctx, g) != SMELT_OK)
        fail_msg("%s: the input graph is invalid: %s", t->path,
                 smelt_ctx_error(ctx));
    assert_int_equal(sm_graph_clone(ctx, g, &orig), SMELT_OK);
    const char *run = t->run;
    int level = 0;
    if (run[0] == '-' && run[1] == 'O') {
        level = atoi(run + 2);
        run = NULL;
    }
    const sm_pass_info **list;
    int n;
    if (sm_pipeline_resolve(ctx, level, run, &list, &n) != SMELT_OK)
        fail_msg("%s:%d: %s", t->path, t->run_line, smelt_ctx_error(ctx));
    if (sm_pass_run(ctx, g, &t->opt, list, n, NULL) != SMELT_OK)
        fail_msg("%s: %s", t->path, smelt_ctx_error(ctx));
    free(list);
    char *out = NULL;
    assert_int_equal(smelt_graph_print(ctx, g, &out), SMELT_OK);
    char msg[2048];
    if (!match_checks(t, out, msg, sizeof msg))
        fail_msg("%s\n--- output of '%s' ---\n%s", msg, t->run, out);
    smelt_string_free(out);
    compare_runs(t, orig, g);
    sm_graph_free(orig);
    sm_graph_free(g);
    smelt_ctx_free(ctx);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const test_file *)a)->path, ((const test_file *)b)->path);
}

int main(void)
{
    const char *dir = tu_path("passes");
    char dirbuf[2048];
    snprintf(dirbuf, sizeof dirbuf, "%s", dir);
    DIR *d = opendir(dirbuf);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dirbuf);
        return 1;
    }
    test_file *files = calloc(MAX_FILES, sizeof *files);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_FILES) {
        size_t l = strlen(e->d_name);
        if (l > 3 && !strcmp(e->d_name + l - 3, ".ir"))
            snprintf(files[n++].path, sizeof files->path, "%s/%s", dirbuf,
                     e->d_name);
    }
    closedir(d);
    qsort(files, (size_t)n, sizeof *files, by_name);
    struct CMUnitTest *tests = calloc((size_t)n + 1, sizeof *tests);
    for (int i = 0; i < n; i++) {
        tests[i].name = strrchr(files[i].path, '/') + 1;
        tests[i].test_func = run_file;
        tests[i].initial_state = &files[i];
    }
    int rc = _cmocka_run_group_tests("filecheck", tests, (size_t)n, NULL, NULL);
    free(tests);
    free(files);
    return rc;
}
