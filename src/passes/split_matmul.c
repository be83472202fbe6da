/*
 * split_matmul.c - the split_matmul pass: a MatMul by a constant 2-D
 * weight whose output is only ever cut along its last axis (Slice with
 * step 1, Split) becomes one MatMul per piece, each by the matching
 * columns of the weight:
 *
 *   Slice(X W, [a, b) on the last axis) = X W[:, a:b]
 *
 * Transformers project q, k and v with one [D, 3D] weight and cut the
 * product in three; afterwards the three products write their pieces
 * directly, and the three strided copies are gone (the arithmetic is the
 * same, the weight's bytes too: its pieces replace it). It needs the cut
 * to be constant, which a graph with symbolic dims has only once a plan
 * binds them and folding has run.
 */
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "passes/pattern.h"

/* The most pieces a product is cut into. */
#define MAX_PIECES 16

typedef struct piece {
    sm_value *v; /* a user's output: columns [a, b) of the product */
    int64_t a, b;
} piece;

/* A constant integer input's value i (or the attribute-free default);
 * 0 when absent or not a constant. */
static int const_int(const sm_node *n, int in, int64_t i, int64_t *out)
{
    if (in >= n->n_in || !n->in[in] || !n->in[in]->data ||
        n->in[in]->data->numel <= i)
        return 0;
    const sm_tensor *t = n->in[in]->data;
    *out = sm_load_i64(t->dtype, t->data, i);
    return 1;
}

/* The columns of the product [.., N] that Slice s keeps, when it cuts
 * only the last axis (of rank r), with step 1 and constant bounds. */
static int slice_piece(const sm_node *s, int r, int64_t N, piece *p)
{
    int64_t a, b, axis = -1, step = 1;
    if (!const_int(s, 1, 0, &a) || !const_int(s, 2, 0, &b) ||
        s->in[1]->data->numel != 1 || s->in[2]->data->numel != 1)
        return 0;
    if (s->n_in > 3 && s->in[3] &&
        (!const_int(s, 3, 0, &axis) || s->in[3]->data->numel != 1))
        return 0;
    if (s->n_in > 4 && s->in[4] && !const_int(s, 4, 0, &step))
        return 0;
    if ((axis != -1 && axis != r - 1) || step != 1)
        return 0;
    a = a < 0 ? a + N : a;
    b = b < 0 ? b + N : b;
    a = a < 0 ? 0 : a > N ? N : a;
    b = b < 0 ? 0 : b > N ? N : b;
    if (a >= b)
        return 0;
    p->v = s->out[0];
    p->a = a;
    p->b = b;
    return 1;
}

/* The pieces Split s makes of the last axis (rank r, N columns): its
 * constant sizes, or equal parts. */
static int split_pieces(const sm_node *s, int r, int64_t N, piece *p, int room)
{
    sm_attrs at = sm_node_attrs(s);
    int64_t axis = sm_attrs_int(&at, "axis", 0);
    if ((axis != -1 && axis != r - 1) || s->n_out > room)
        return 0;
    int64_t at0 = 0;
    for (int j = 0; j < s->n_out; j++) {
        int64_t len;
        if (s->n_in > 1 && s->in[1]) {
            if (!const_int(s, 1, j, &len) || s->in[1]->data->numel != s->n_out)
                return 0;
        } else if (N % s->n_out == 0) {
            len = N / s->n_out;
        } else {
            return 0;
        }
        if (len <= 0)
            return 0;
        p[j] = (piece){s->out[j], at0, at0 + len};
        at0 += len;
    }
    return at0 == N ? s->n_out : 0;
}

/* The Slice and Split nodes that cut mm's output into pieces (and every
 * use of the output is theirs); their count and *n_pieces, or 0. */
static int find_cuts(sm_rw *rw, const sm_node *mm, sm_node **cuts,
                     piece *pieces, int *n_pieces)
{
    const sm_value *y = mm->out[0];
    int r = y->type.ndim, n_cuts = 0, uses = 0;
    int64_t N = mm->in[1]->data->dims[1];
    *n_pieces = 0;
    for (sm_node *u = sm_rw_first(rw, mm->owner); u; u = sm_rw_next(rw, u)) {
        int reads = 0;
        for (int i = 0; i < u->n_in; i++)
            reads += u->in[i] == y;
        if (!reads)
            continue;
        uses += reads;
        int room = MAX_PIECES - *n_pieces, got = 0;
        if (reads == 1 && u->in[0] == y && u->op == SM_OP_Slice && room > 0)
            got = slice_piece(u, r, N, pieces + *n_pieces);
        else if (reads == 1 && u->in[0] == y && u->op == SM_OP_Split)
            got = split_pieces(u, r, N, pieces + *n_pieces, room);
        if (!got || n_cuts == MAX_PIECES)
            return 0;
        *n_pieces += got;
        cuts[n_cuts++] = u;
    }
    return uses == sm_rw_uses(rw, y) ? n_cuts : 0;
}

/* Columns [a, b) of the [K, N] weight w as a new tensor; NULL when out
 * of memory. */
static sm_tensor *columns(const sm_tensor *w, int64_t a, int64_t b)
{
    int64_t K = w->dims[0], N = w->dims[1], dims[2] = {K, b - a};
    size_t es = smelt_dtype_size(w->dtype);
    sm_tensor *t;
    if (sm_tensor_new(NULL, w->dtype, 2, dims, &t) != SMELT_OK)
        return NULL;
    for (int64_t k = 0; k < K; k++)
        memcpy((char *)t->data + (size_t)(k * (b - a)) * es,
               (const char *)w->data + (size_t)(k * N + a) * es,
               (size_t)(b - a) * es);
    return t;
}

/* mm's pieces as MatMuls by the weight's columns, placed before the cut
 * that makes them; then the cuts, mm and its weight go. */
static smelt_status split(sm_pass_ctx *pc, sm_rw *rw, sm_node *mm,
                          sm_node **cuts, int n_cuts, const piece *pieces,
                          int n_pieces)
{
    sm_value *w = mm->in[1];
    for (int i = 0; i < n_pieces; i++) {
        const sm_node *cut = pieces[i].v->def;
        sm_tensor *t = columns(w->data, pieces[i].a, pieces[i].b);
        if (!t)
            return sm_err_nomem(pc->ctx);
        char name[200];
        snprintf(name, sizeof name, "%s_%lld_%lld", w->name,
                 (long long)pieces[i].a, (long long)pieces[i].b);
        sm_value *wp = sm_rw_add_const(rw, mm->owner, name, t);
        sm_value *in[2] = {mm->in[0], wp};
        char label[200];
        snprintf(label, sizeof label, "%s_%d", mm->name ? mm->name : "matmul",
                 i);
        const char *out_name = pieces[i].v->name;
        sm_node *nm =
            wp ? sm_rw_node_new(rw, mm->owner, (sm_node *)cut, SM_OP_MatMul,
                                label, 2, in, 1, &out_name)
               : NULL;
        if (!nm)
            return sm_err_nomem(pc->ctx);
        SM_TRY(sm_rw_infer_node(rw, nm));
        SM_TRY(sm_rw_forward(rw, pieces[i].v, nm->out[0]));
    }
    for (int i = 0; i < n_cuts; i++)
        pc->stats->removed += sm_rw_remove_if_dead(rw, cuts[i]);
    pc->stats->removed += sm_rw_remove_if_dead(rw, mm);
    sm_rw_drop_const_if_dead(rw, w);
    pc->stats->changed = 1;
    return SMELT_OK;
}

/* A MatMul by a constant 2-D weight whose product only cuts use. */
static smelt_status visit(sm_pass_ctx *pc, sm_rw *rw, sm_node *mm)
{
    if (mm->op != SM_OP_MatMul || !mm->in[1]->data ||
        mm->in[1]->data->ndim != 2 || mm->out[0]->type.ndim < 2 ||
        sm_rw_is_output(rw, mm->out[0]))
        return SMELT_OK;
    sm_node *cuts[MAX_PIECES];
    piece pieces[MAX_PIECES];
    int n_pieces, n_cuts = find_cuts(rw, mm, cuts, pieces, &n_pieces);
    return n_cuts > 0 ? split(pc, rw, mm, cuts, n_cuts, pieces, n_pieces)
                      : SMELT_OK;
}

smelt_status sm_pass_split_matmul(sm_pass_ctx *pc, sm_graph *g)
{
    return sm_pat_for_nodes(pc, g, visit);
}
