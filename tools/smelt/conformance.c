/*
 * conformance.c - `smelt conformance DIR`: runs ONNX's backend node tests
 * (scripts/gen_conformance.py writes them) with the reference interpreter
 * and compares every output with the expected one.
 *
 * Each test is DIR/test_NAME/model.onnx with test_data_set_<k>/input_<i>.pb
 * and output_<i>.pb (TensorProto files). A test passes, fails (wrong
 * values, shape or dtype, or an error that is not "unsupported"), is
 * unsupported (Smelt said SMELT_ERR_UNSUPPORTED: an op it lacks, a dtype,
 * a sequence type...) or is excluded (listed, with a reason, in the file
 * --exclude names). The report ends with the failures and, per op, the
 * unsupported tests, so the team knows what to add next.
 */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "progress.h"

#define RTOL 1e-3
#define ATOL 1e-5
#define REASON 512
#define TIMEOUT_S 300 /* per test */

enum { PASSED, FAILED, UNSUPPORTED, EXCLUDED, N_KINDS };
static const char *const kind_name[N_KINDS] = {"passed", "failed",
                                               "unsupported", "excluded"};

void cli_conformance_help(FILE *out)
{
    fprintf(out,
            "run the ONNX backend node tests and compare with their outputs\n\n"
            "usage: smelt conformance DIR [options]\n\n"
            "DIR holds one folder per test (model.onnx, test_data_set_0/\n"
            "input_<i>.pb and output_<i>.pb), as scripts/gen_conformance.py\n"
            "writes them. Each model is loaded, verified and run with the\n"
            "reference interpreter (after the -O N pipeline when given), or\n"
            "with --plan compiled into a plan for its inputs (at -O N,\n"
            "default 3) as `smelt run` runs models; floats must agree within\n"
            "rtol 1e-3 and atol 1e-5 (NaN matches NaN), integers and bools\n"
            "exactly. A test is passed, failed, unsupported (Smelt reported\n"
            "SMELT_ERR_UNSUPPORTED: a missing op, dtype or feature) or\n"
            "excluded. The report lists the failures with their first\n"
            "mismatch and the unsupported tests per op. Each test runs in a\n"
            "child process (unless --no-fork) that may take %d s.\n\n"
            "Exit status: 0 when no test outside the exclusion list fails and\n"
            "the pass rate is at least P; 1 otherwise; 2 on usage errors.\n",
            TIMEOUT_S);
    cli_options_help(out, "conformance");
}

typedef struct exclusion {
    char *name, *reason;
} exclusion;

typedef struct result {
    char *name;
    int kind;
    char reason[REASON];
} result;

/* Unsupported tests grouped by the op they need. */
typedef struct unsup_group {
    char op[64];
    int group; /* GROUP_OP, GROUP_FEATURE or GROUP_TYPE */
    int count;
    char example[160];
} unsup_group;

typedef struct run_opts {
    const char *dir, *filter, *exclude;
    double min_rate;
    int list, verbose, tty, no_fork, quiet;
    int level; /* -O level to optimize at before running; -1: none */
    int plan;  /* run compiled plans instead of the reference interpreter */
} run_opts;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The sorted names of the test folders of dir (those holding model.onnx)
 * that contain filter; NULL with *n = -1 when dir cannot be read. */
static char **list_tests(const char *dir, const char *filter, int *n)
{
    *n = -1;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    int count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[4096];
        if (e->d_name[0] == '.' || (filter && !strstr(e->d_name, filter)))
            continue;
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
        if (!is_file(path))
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 256;
            char **grown = realloc(names, (size_t)cap * sizeof *names);
            if (!grown)
                break;
            names = grown;
        }
        if (!(names[count] = strdup(e->d_name)))
            break;
        count++;
    }
    closedir(d);
    if (count)
        qsort(names, (size_t)count, sizeof *names, cmp_str);
    *n = count;
    return names;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
                 s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

/* Reads the exclusion list: "test_name # reason" a line; blank lines and
 * lines starting with '#' are comments. Returns -1 after printing an
 * error (unreadable file, an entry without a reason). */
static int read_exclusions(const char *path, exclusion **out, int *n)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "smelt conformance: cannot open '%s'\n", path);
        return -1;
    }
    char line[1024];
    int lineno = 0, cap = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *hash = strstr(s, " # ");
        char *reason = hash ? trim(hash + 3) : NULL;
        if (!reason || !*reason) {
            fprintf(stderr,
                    "smelt conformance: %s:%d: '%s' has no reason (write "
                    "'NAME # why')\n",
                    path, lineno, s);
            rc = -1;
            break;
        }
        *hash = 0;
        if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            exclusion *grown = realloc(*out, (size_t)cap * sizeof **out);
            if (!grown) {
                rc = -1;
                break;
            }
            *out = grown;
        }
        (*out)[*n].name = strdup(trim(s));
        (*out)[*n].reason = strdup(reason);
        if (!(*out)[*n].name || !(*out)[*n].reason) {
            free((*out)[*n].name);
            free((*out)[*n].reason);
            rc = -1;
            break;
        }
        (*n)++;
    }
    fclose(f);
    return rc;
}

static const exclusion *find_exclusion(const exclusion *ex, int n,
                                       const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(ex[i].name, name))
            return &ex[i];
    return NULL;
}

/* Classifies an error: unsupported when Smelt said so, failed otherwise;
 * the reason is `stage: message`. */
static int error_kind(smelt_ctx_t *ctx, smelt_status s, const char *stage,
                      char *reason)
{
    snprintf(reason, REASON, "%s: %s", stage, smelt_ctx_error(ctx));
    return s == SMELT_ERR_UNSUPPORTED ? UNSUPPORTED : FAILED;
}

static int is_float(smelt_dtype dt)
{
    return dt == SMELT_DTYPE_F32 || dt == SMELT_DTYPE_F64 ||
           dt == SMELT_DTYPE_F16 || dt == SMELT_DTYPE_BF16;
}

static void shape_str(const smelt_tensor_t *t, char *buf, size_t size)
{
    int k = snprintf(buf, size, "%s[", smelt_dtype_name(smelt_tensor_dtype(t)));
    for (int i = 0; i < smelt_tensor_ndim(t) && k > 0 && (size_t)k < size; i++)
        k += snprintf(buf + k, size - (size_t)k, "%s%lld", i ? "," : "",
                      (long long)smelt_tensor_dim(t, i));
    if (k > 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, "]");
}

/* Whether element i of got matches element i of want (same dtype). */
static int element_ok(smelt_tensor_t *got, smelt_tensor_t *want, int64_t i)
{
    smelt_dtype dt = smelt_tensor_dtype(want);
    if (dt == SMELT_DTYPE_I64) /* exact beyond 2^53 */
        return ((const int64_t *)smelt_tensor_data(got))[i] ==
               ((const int64_t *)smelt_tensor_data(want))[i];
    double a = smelt_tensor_get_f64(got, i), e = smelt_tensor_get_f64(want, i);
    if (dt == SMELT_DTYPE_BOOL)
        return (a != 0) == (e != 0);
    if (!is_float(dt))
        return a == e;
    if (isnan(e) || isnan(a))
        return isnan(e) && isnan(a);
    if (isinf(e) || isinf(a))
        return a == e;
    return fabs(a - e) <= ATOL + RTOL * fabs(e);
}

/* The multi-index of flat element i of t, as "[1,2,3]". */
static void index_str(const smelt_tensor_t *t, int64_t i, char *buf,
                      size_t size)
{
    int nd = smelt_tensor_ndim(t);
    int64_t idx[SMELT_MAX_DIMS];
    for (int d = nd - 1; d >= 0; d--) {
        int64_t n = smelt_tensor_dim(t, d);
        idx[d] = n ? i % n : 0;
        i = n ? i / n : 0;
    }
    int k = snprintf(buf, size, "[");
    for (int d = 0; d < nd && k > 0 && (size_t)k < size; d++)
        k += snprintf(buf + k, size - (size_t)k, "%s%lld", d ? "," : "",
                      (long long)idx[d]);
    if (k > 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, "]");
}

/* Compares output `name` with the expected tensor; on a mismatch writes
 * what differs first (dtype, shape, or the first wrong element and how
 * many are wrong) to reason and returns 0. */
static int compare(const char *name, smelt_tensor_t *got, smelt_tensor_t *want,
                   char *reason)
{
    char gs[160], ws[160];
    shape_str(got, gs, sizeof gs);
    shape_str(want, ws, sizeof ws);
    int same = smelt_tensor_dtype(got) == smelt_tensor_dtype(want) &&
               smelt_tensor_ndim(got) == smelt_tensor_ndim(want);
    for (int d = 0; same && d < smelt_tensor_ndim(got); d++)
        same = smelt_tensor_dim(got, d) == smelt_tensor_dim(want, d);
    if (!same) {
        snprintf(reason, REASON, "output '%s' is %s, expected %s", name, gs,
                 ws);
        return 0;
    }
    int64_t n = smelt_tensor_numel(want), bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
        if (!element_ok(got, want, i)) {
            if (first < 0)
                first = i;
            bad++;
        }
    if (!bad)
        return 1;
    char idx[128];
    index_str(want, first, idx, sizeof idx);
    smelt_dtype dt = smelt_tensor_dtype(want);
    const char *fmt = is_float(dt) ? "%.9g" : "%.0f";
    char a[64], e[64];
    if (dt == SMELT_DTYPE_I64) {
        snprintf(a, sizeof a, "%lld",
                 (long long)((const int64_t *)smelt_tensor_data(got))[first]);
        snprintf(e, sizeof e, "%lld",
                 (long long)((const int64_t *)smelt_tensor_data(want))[first]);
    } else {
        snprintf(a, sizeof a, fmt, smelt_tensor_get_f64(got, first));
        snprintf(e, sizeof e, fmt, smelt_tensor_get_f64(want, first));
    }
    snprintf(reason, REASON,
             "output '%s' %s: element %s is %s, expected %s (%lld of %lld "
             "elements differ)",
             name, ws, idx, a, e, (long long)bad, (long long)n);
    return 0;
}

/* Number of files <set>/<prefix><i>.pb for i = 0, 1, ... */
static int count_pb(const char *set, const char *prefix)
{
    int n = 0;
    for (;; n++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s%d.pb", set, prefix, n);
        if (!is_file(path))
            return n;
    }
}

/* Runs one data set of a loaded test. */
static int run_data_set(smelt_ctx_t *ctx, const smelt_graph_t *g,
                        const char *set, const run_opts *o, char *reason)
{
    int n_in = smelt_graph_num_inputs(g), n_out = smelt_graph_num_outputs(g);
    int have_in = count_pb(set, "input_"), have_out = count_pb(set, "output_");
    if (have_in != n_in || have_out != n_out) {
        snprintf(reason, REASON,
                 "the graph takes %d inputs and gives %d outputs; the data "
                 "set has %d and %d",
                 n_in, n_out, have_in, have_out);
        return FAILED;
    }
    smelt_tensor_t **in = calloc((size_t)n_in + 1, sizeof *in),
                   **out = calloc((size_t)n_out + 1, sizeof *out),
                   **want = calloc((size_t)n_out + 1, sizeof *want);
    int kind = PASSED;
    if (!in || !out || !want) {
        snprintf(reason, REASON, "out of memory");
        kind = FAILED;
    }
    for (int i = 0; i < n_in && kind == PASSED; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/input_%d.pb", set, i);
        smelt_status s = smelt_onnx_tensor_load(ctx, path, &in[i]);
        if (s != SMELT_OK)
            kind = error_kind(ctx, s, "input", reason);
    }
    for (int i = 0; i < n_out && kind == PASSED; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/output_%d.pb", set, i);
        smelt_status s = smelt_onnx_tensor_load(ctx, path, &want[i]);
        if (s != SMELT_OK)
            kind = error_kind(ctx, s, "expected output", reason);
    }
    if (kind == PASSED && o->plan) {
        /* as `smelt run` does: a plan compiled for these inputs' shapes */
        smelt_plan_options po;
        smelt_plan_options_default(&po);
        po.level = o->level >= 0 ? o->level : po.level;
        po.inputs = in;
        po.n_inputs = n_in;
        smelt_plan_t *p = NULL;
        smelt_status s = smelt_plan_compile(ctx, g, &po, &p);
        if (s != SMELT_OK)
            kind = error_kind(ctx, s, "plan", reason);
        else if ((s = smelt_plan_run(ctx, p, in, n_in, out, n_out)) != SMELT_OK)
            kind = error_kind(ctx, s, "plan run", reason);
        smelt_plan_free(p);
    } else if (kind == PASSED) {
        smelt_status s =
            smelt_graph_run_reference(ctx, g, in, n_in, out, n_out);
        if (s != SMELT_OK)
            kind = error_kind(ctx, s, "run", reason);
    }
    for (int i = 0; i < n_out && kind == PASSED; i++)
        if (!compare(smelt_graph_output_name(g, i), out[i], want[i], reason))
            kind = FAILED;
    for (int i = 0; in && i < n_in; i++)
        smelt_tensor_free(in[i]);
    for (int i = 0; out && want && i < n_out; i++) {
        smelt_tensor_free(out[i]);
        smelt_tensor_free(want[i]);
    }
    free(in);
    free(out);
    free(want);
    return kind;
}

/* Optimizes g at `level`; the pass manager's message names the pass that
 * failed ("pass 'fold': ..."). */
static int optimize(smelt_ctx_t *ctx, smelt_graph_t *g, int level, char *reason)
{
    smelt_opt_options o;
    smelt_opt_options_default(&o);
    o.level = level;
    smelt_status s = smelt_graph_optimize(ctx, g, &o, NULL);
    if (s == SMELT_OK)
        return PASSED;
    char stage[32];
    snprintf(stage, sizeof stage, "optimize -O%d", level);
    return error_kind(ctx, s, stage, reason);
}

/* Loads, verifies (and, with a level, optimizes) and runs test `name` of
 * dir on every data set. */
static int run_test(const char *dir, const char *name, const run_opts *o,
                    char *reason)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx) {
        snprintf(reason, REASON, "out of memory");
        return FAILED;
    }
    smelt_graph_t *g = NULL;
    smelt_status s = smelt_onnx_load(ctx, path, &g);
    int kind = s == SMELT_OK ? PASSED : error_kind(ctx, s, "load", reason);
    if (kind == PASSED && (s = smelt_graph_infer(ctx, g)) != SMELT_OK)
        kind = error_kind(ctx, s, "infer", reason);
    if (kind == PASSED && (s = smelt_graph_verify(ctx, g)) != SMELT_OK)
        kind = error_kind(ctx, s, "verify", reason);
    if (kind == PASSED && o->level >= 0 && !o->plan) /* plans optimize */
        kind = optimize(ctx, g, o->level, reason);
    int sets = 0;
    for (; kind == PASSED; sets++) {
        snprintf(path, sizeof path, "%s/%s/test_data_set_%d", dir, name, sets);
        if (!is_dir(path))
            break;
        kind = run_data_set(ctx, g, path, o, reason);
    }
    if (kind == PASSED && sets == 0) {
        snprintf(reason, REASON, "no test_data_set_0");
        kind = FAILED;
    }
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return kind;
}

/* Runs one test in a child process, so that a crash, a sanitizer report
 * or a hang (TIMEOUT_S) fails that test alone; without fork, in this
 * process. The child sends its verdict and reason through a pipe. */
static int run_isolated(const char *dir, const char *name, const run_opts *o,
                        char *reason)
{
    int fd[2];
    if (pipe(fd) != 0)
        return run_test(dir, name, o, reason);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return run_test(dir, name, o, reason);
    }
    if (pid == 0) {
        close(fd[0]);
        alarm(TIMEOUT_S);
        char msg[REASON + 1];
        msg[0] = (char)run_test(dir, name, o, msg + 1);
        size_t n = 1 + strlen(msg + 1), put = 0;
        while (put < n) {
            ssize_t w = write(fd[1], msg + put, n - put);
            if (w <= 0)
                break;
            put += (size_t)w;
        }
        close(fd[1]);
        exit(0); /* not _exit: LeakSanitizer checks the child at exit */
    }
    close(fd[1]);
    char msg[REASON + 1];
    size_t got = 0;
    ssize_t k;
    while (got < sizeof msg - 1 &&
           (k = read(fd[0], msg + got, sizeof msg - 1 - got)) > 0)
        got += (size_t)k;
    msg[got] = 0;
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        ;
    if (WIFSIGNALED(st)) {
        if (WTERMSIG(st) == SIGALRM)
            snprintf(reason, REASON, "timed out after %d s", TIMEOUT_S);
        else
            snprintf(reason, REASON, "crashed: signal %d (%s)", WTERMSIG(st),
                     strsignal(WTERMSIG(st)));
        return FAILED;
    }
    if (got == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || msg[0] < PASSED ||
        msg[0] > UNSUPPORTED) {
        snprintf(reason, REASON,
                 "the test process exited with status %d (a sanitizer "
                 "report above?)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return FAILED;
    }
    snprintf(reason, REASON, "%s", msg + 1);
    return msg[0];
}

/* What an unsupported test lacks, from its reason, and its class:
 * GROUP_OP for a missing op ("op 'X' is not supported"), GROUP_FEATURE
 * for a feature of an op Smelt has (the op named in the location: "node
 * 'n' (X)", "X node #3 ...", "X node defining ..."), GROUP_TYPE for a
 * dtype, a non-tensor type, an opset or a domain, whatever the op. */
enum { GROUP_OP, GROUP_FEATURE, GROUP_TYPE, N_GROUPS };

static void unsupported_key(const char *reason, char *key, size_t size,
                            int *group)
{
    const char *p, *q;
    *group = GROUP_TYPE;
    if ((p = strstr(reason, "data type ")) && (p = strchr(p, '(')) &&
        (q = strchr(p, ')'))) {
        snprintf(key, size, "dtype %.*s", (int)(q - p - 1), p + 1);
        return;
    }
    if ((p = strstr(reason, "(found a")) && (q = strchr(p, ')'))) {
        snprintf(key, size, "%.*s", (int)(q - p - 9), p + 9);
        return;
    }
    if ((p = strstr(reason, "domain '")) && (q = strchr(p + 8, '\''))) {
        snprintf(key, size, "domain %.*s", (int)(q - p - 8), p + 8);
        return;
    }
    if ((p = strstr(reason, "onnx: opset "))) {
        snprintf(key, size, "opset %d", atoi(p + 12));
        return;
    }
    if ((p = strstr(reason, "op '")) && (q = strchr(p + 4, '\'')) &&
        !strncmp(q, "' is not supported", 18)) {
        *group = GROUP_OP;
        snprintf(key, size, "%.*s", (int)(q - p - 4), p + 4);
        return;
    }
    *group = GROUP_FEATURE;
    if ((p = strstr(reason, "node '")) && (p = strstr(p, "' (")) &&
        (q = strchr(p + 3, ')'))) {
        snprintf(key, size, "%.*s", (int)(q - p - 3), p + 3);
        return;
    }
    if ((q = strstr(reason, " node "))) {
        for (p = q; p > reason && p[-1] != ' ';)
            p--;
        snprintf(key, size, "%.*s", (int)(q - p), p);
        return;
    }
    snprintf(key, size, "?");
}

static int cmp_group(const void *a, const void *b)
{
    const unsup_group *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(x->op, y->op);
}

/* Prints the unsupported tests grouped by what they lack: missing ops
 * first, then features of ops Smelt has, then types and opsets, each
 * sorted by test count. */
static void print_unsupported(const result *r, int n)
{
    static const char *const title[N_GROUPS] = {
        "missing ops", "features of ops Smelt has",
        "data types, non-tensor types, opsets and domains"};
    unsup_group *gr = calloc((size_t)n + 1, sizeof *gr);
    int ng = 0;
    if (!gr)
        return;
    for (int i = 0; i < n; i++) {
        if (r[i].kind != UNSUPPORTED)
            continue;
        char key[64];
        int group, k;
        unsupported_key(r[i].reason, key, sizeof key, &group);
        for (k = 0; k < ng; k++)
            if (gr[k].group == group && !strcmp(gr[k].op, key))
                break;
        if (k == ng) {
            snprintf(gr[k].op, sizeof gr[k].op, "%s", key);
            gr[k].group = group;
            snprintf(gr[k].example, sizeof gr[k].example, "%.159s", r[i].name);
            ng++;
        }
        gr[k].count++;
    }
    qsort(gr, (size_t)ng, sizeof *gr, cmp_group);
    for (int group = 0; group < N_GROUPS; group++) {
        int tests = 0, keys = 0;
        for (int k = 0; k < ng; k++)
            if (gr[k].group == group) {
                tests += gr[k].count;
                keys++;
            }
        if (!keys)
            continue;
        printf("\nunsupported: %s (%d tests):\n", title[group], tests);
        for (int k = 0; k < ng; k++)
            if (gr[k].group == group)
                printf("  %4d  %-32s e.g. %s\n", gr[k].count, gr[k].op,
                       gr[k].example);
    }
    free(gr);
}

/* The progress bar with the counts so far (a terminal), or one plain
 * line per test (none with --quiet). */
static void show_progress(const run_opts *o, cli_progress *pg, int i,
                          const int *count, const result *r)
{
    if (o->tty) {
        if (o->verbose && r->kind != PASSED) {
            cli_progress_clear(pg);
            printf("%-11s %s: %s\n", kind_name[r->kind], r->name, r->reason);
            fflush(stdout);
        }
        snprintf(pg->note, sizeof pg->note,
                 "%d passed, %d failed, %d unsupported, %d excluded",
                 count[PASSED], count[FAILED], count[UNSUPPORTED],
                 count[EXCLUDED]);
        cli_progress_update(pg, i + 1);
        return;
    }
    if (o->quiet)
        return;
    if (o->verbose && r->kind != PASSED)
        printf("%-11s %s: %s\n", kind_name[r->kind], r->name, r->reason);
    else
        printf("%-11s %s\n", kind_name[r->kind], r->name);
}

/* Runs every test and prints the report; returns the exit status. */
static int run_all(const run_opts *o, char **names, int n, const exclusion *ex,
                   int n_ex)
{
    result *r = calloc((size_t)n + 1, sizeof *r);
    if (!r) {
        fprintf(stderr, "smelt conformance: out of memory\n");
        return 1;
    }
    int count[N_KINDS] = {0};
    cli_progress pg;
    cli_progress_start(&pg, "conformance", "tests", n, o->quiet);
    for (int i = 0; i < n; i++) {
        r[i].name = names[i];
        const exclusion *e = find_exclusion(ex, n_ex, names[i]);
        if (e) {
            r[i].kind = EXCLUDED;
            snprintf(r[i].reason, REASON, "%s", e->reason);
        } else {
            r[i].kind = o->no_fork
                            ? run_test(o->dir, names[i], o, r[i].reason)
                            : run_isolated(o->dir, names[i], o, r[i].reason);
        }
        count[r[i].kind]++;
        show_progress(o, &pg, i, count, &r[i]);
    }
    if (o->tty)
        cli_progress_end(&pg);
    if (count[FAILED]) {
        printf("\nfailed tests (%d):\n", count[FAILED]);
        for (int i = 0; i < n; i++)
            if (r[i].kind == FAILED)
                printf("  %s: %s\n", r[i].name, r[i].reason);
    }
    if (o->verbose && count[UNSUPPORTED]) {
        printf("\nunsupported tests (%d):\n", count[UNSUPPORTED]);
        for (int i = 0; i < n; i++)
            if (r[i].kind == UNSUPPORTED)
                printf("  %s: %s\n", r[i].name, r[i].reason);
    }
    print_unsupported(r, n);
    double rate = n ? 100.0 * count[PASSED] / n : 0;
    if (o->plan)
        printf("\nconformance: %d tests in %s, run as compiled plans at "
               "-O%d\n",
               n, o->dir, o->level >= 0 ? o->level : 3);
    else if (o->level >= 0)
        printf("\nconformance: %d tests in %s, optimized at -O%d\n", n, o->dir,
               o->level);
    else
        printf("\nconformance: %d tests in %s\n", n, o->dir);
    for (int k = 0; k < N_KINDS; k++)
        printf("  %-12s %4d  (%5.1f%%)\n", kind_name[k], count[k],
               n ? 100.0 * count[k] / n : 0.0);
    int rc = 0;
    if (count[FAILED]) {
        printf("FAIL: %d tests outside the exclusion list fail\n",
               count[FAILED]);
        rc = 1;
    }
    if (rate < o->min_rate) {
        printf("FAIL: pass rate %.1f%% is below --min-pass-rate %g%%\n", rate,
               o->min_rate);
        rc = 1;
    }
    free(r);
    return rc;
}

/* --list: the tests that would run, and the exclusions that apply. */
static void list_only(char **names, int n, const exclusion *ex, int n_ex)
{
    for (int i = 0; i < n; i++) {
        const exclusion *e = find_exclusion(ex, n_ex, names[i]);
        if (e)
            printf("%s  (excluded: %s)\n", names[i], e->reason);
        else
            printf("%s\n", names[i]);
    }
    printf("%d tests\n", n);
}

static int parse_args(int argc, char **argv, cli_args *a, run_opts *o)
{
    int rc = cli_args_parse(a, "conformance", argc, argv, 1, 1, "DIR");
    if (rc)
        return rc;
    o->dir = a->files[0];
    o->filter = a->str[CLI_OPT_filter];
    o->exclude = a->str[CLI_OPT_exclude];
    o->min_rate = cli_real(a, CLI_OPT_min_pass_rate, 0);
    o->level = (int)cli_num(a, CLI_OPT_level, -1);
    o->no_fork = a->given[CLI_OPT_no_fork] > 0;
    o->list = a->given[CLI_OPT_list] > 0;
    o->verbose = a->given[CLI_OPT_verbose] > 0;
    o->plan = a->given[CLI_OPT_plan] > 0;
    o->quiet = a->given[CLI_OPT_quiet] > 0;
    return 0;
}

int cli_conformance(int argc, char **argv)
{
    run_opts o = {0};
    cli_args args;
    int rc = parse_args(argc, argv, &args, &o);
    if (rc) {
        cli_args_free(&args);
        return rc;
    }
    o.tty = isatty(fileno(stdout)) && isatty(fileno(stderr));
    exclusion *ex = NULL;
    int n_ex = 0, n;
    if (o.exclude && read_exclusions(o.exclude, &ex, &n_ex) != 0)
        rc = 1;
    char **names = rc ? NULL : list_tests(o.dir, o.filter, &n);
    if (!rc && !names && n < 0) {
        fprintf(stderr, "smelt conformance: cannot read '%s'\n", o.dir);
        rc = 1;
    } else if (!rc && n == 0) {
        fprintf(stderr, "smelt conformance: no tests%s%s in '%s'\n",
                o.filter ? " matching " : "", o.filter ? o.filter : "", o.dir);
        rc = 1;
    }
    for (int i = 0; !rc && !o.filter && i < n_ex; i++)
        if (!bsearch(&ex[i].name, names, (size_t)n, sizeof *names, cmp_str))
            fprintf(stderr,
                    "smelt conformance: warning: excluded test '%s' is not "
                    "in '%s'\n",
                    ex[i].name, o.dir);
    if (!rc && o.list)
        list_only(names, n, ex, n_ex);
    else if (!rc)
        rc = run_all(&o, names, n, ex, n_ex);
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    for (int i = 0; i < n_ex; i++) {
        free(ex[i].name);
        free(ex[i].reason);
    }
    free(ex);
    cli_args_free(&args);
    return rc;
}
