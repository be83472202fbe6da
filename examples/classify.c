/*
 * classify.c - an image classifier run through Smelt's C API, the way an
 * application would embed it: load a model, compile a plan for the batch
 * at hand, run it, read the class scores.
 *
 *   classify MODEL IMAGES.npy LABELS.npy
 *
 * IMAGES.npy holds f32[N, 1, H, W] grey images (as the model's input
 * wants them), LABELS.npy their true classes (any integer dtype, [N]).
 * Prints the first images as small pictures, then a line per image (the
 * first 32) with the predicted class, its probability and the true
 * class, then the accuracy over all of them. The model's scores may be
 * probabilities (a Softmax at its end) or logits (a model trained with a
 * cross-entropy loss, which applies the softmax itself): a row that is
 * not already a distribution is turned into one for the probability
 * shown. Exits 1 on an error (with Smelt's message), 0 otherwise.
 */
#include <math.h>
#include <stdio.h>

#include "smelt.h"

/* Characters from light to dark, for pictures in a terminal. */
static const char shades[] = " .:-=+*#%@";

/* Prints up to 8 images side by side, each shrunk by 2 in both
 * directions (28 x 28 becomes 14 x 14 characters), leaving out rows that
 * are blank in all of them. Pixel values are normalized (MNIST's mean
 * and deviation), so each picture is scaled to its own range. */
static void draw(const float *px, int64_t count, int64_t h, int64_t w)
{
    char line[8 * 68 + 2];
    count = count < 8 ? count : 8;
    w = w < 64 ? w : 64;
    for (int64_t y = 0; y + 1 < h; y += 2) {
        int n = 0, ink = 0;
        for (int64_t k = 0; k < count; k++) {
            const float *img = px + k * h * w;
            float lo = img[0], hi = img[0];
            for (int64_t i = 1; i < h * w; i++) {
                lo = img[i] < lo ? img[i] : lo;
                hi = img[i] > hi ? img[i] : hi;
            }
            float span = hi > lo ? hi - lo : 1.0f;
            for (int64_t x = 0; x + 1 < w; x += 2) {
                float v = (img[y * w + x] + img[y * w + x + 1] +
                           img[(y + 1) * w + x] + img[(y + 1) * w + x + 1]) /
                          4.0f;
                int s = (int)((v - lo) / span * 9.99f);
                s = s < 0 ? 0 : s > 9 ? 9 : s;
                ink |= s > 0;
                line[n++] = shades[s];
            }
            line[n++] = ' ';
            line[n++] = ' ';
        }
        line[n] = 0;
        if (ink)
            puts(line);
    }
}

/* The most lines of predictions printed (the accuracy counts them all). */
#define SHOW_MAX 32

/* The probability of class k among the n scores p: p[k] itself when p
 * is a distribution already, else its softmax. */
static double prob(const float *p, int64_t n, int64_t k)
{
    double sum = 0, top = p[0];
    int dist = 1;
    for (int64_t i = 0; i < n; i++) {
        dist &= p[i] >= 0.0f && p[i] <= 1.0f;
        sum += p[i];
        top = p[i] > top ? p[i] : top;
    }
    if (dist && fabs(sum - 1.0) < 1e-3)
        return p[k];
    double z = 0;
    for (int64_t i = 0; i < n; i++)
        z += exp(p[i] - top);
    return exp(p[k] - top) / z;
}

/* The index of the largest of n scores. */
static int64_t argmax(const float *p, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (p[i] > p[best])
            best = i;
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: classify MODEL IMAGES.npy LABELS.npy\n");
        return 2;
    }
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx)
        return 1;
    smelt_graph_t *g = NULL;
    smelt_plan_t *plan = NULL;
    smelt_tensor_t *images = NULL, *labels = NULL, *probs = NULL;
    smelt_status st = smelt_graph_load(ctx, argv[1], &g);
    if (st == SMELT_OK)
        st = smelt_npy_load(ctx, argv[2], &images);
    if (st == SMELT_OK)
        st = smelt_npy_load(ctx, argv[3], &labels);
    if (st == SMELT_OK) {
        /* Compile for the images' shape (which binds the model's symbolic
         * batch); the plan takes the graph, so the weights are held once. */
        smelt_plan_options opt;
        smelt_plan_options_default(&opt);
        opt.inputs = &images;
        opt.n_inputs = 1;
        st = smelt_plan_compile_take(ctx, g, &opt, &plan);
        g = NULL;
    }
    if (st == SMELT_OK)
        st = smelt_plan_run(ctx, plan, &images, 1, &probs, 1);
    if (st != SMELT_OK) {
        fprintf(stderr, "classify: %s\n", smelt_ctx_error(ctx));
    } else if (smelt_tensor_ndim(probs) != 2 ||
               smelt_tensor_dtype(images) != SMELT_DTYPE_F32 ||
               smelt_tensor_ndim(images) != 4 ||
               smelt_tensor_numel(labels) != smelt_tensor_dim(probs, 0)) {
        fprintf(stderr, "classify: expected f32[N,1,H,W] images, N labels "
                        "and an output of [N, classes] scores\n");
        st = SMELT_ERR_SHAPE;
    } else {
        int64_t n = smelt_tensor_dim(probs, 0);
        int64_t classes = smelt_tensor_dim(probs, 1);
        int64_t h = smelt_tensor_dim(images, 2),
                w = smelt_tensor_dim(images, 3);
        const float *p = smelt_tensor_data(probs);
        const float *px = smelt_tensor_data(images);
        int64_t shown = n < 8 ? n : 8, right = 0;
        printf("the first %lld of %lld images:\n", (long long)shown,
               (long long)n);
        draw(px, shown, h, w);
        printf("\n");
        for (int64_t i = 0; i < n; i++) {
            int64_t guess = argmax(p + i * classes, classes);
            int64_t truth = (int64_t)smelt_tensor_get_f64(labels, i);
            right += guess == truth;
            if (i < SHOW_MAX)
                printf("image %2lld: predicted %lld (p = %.3f), true %lld%s\n",
                       (long long)i, (long long)guess,
                       prob(p + i * classes, classes, guess), (long long)truth,
                       guess == truth ? "" : "   <- wrong");
        }
        if (n > SHOW_MAX)
            printf("(%lld more images)\n", (long long)(n - SHOW_MAX));
        printf("accuracy: %lld of %lld (%.1f%%)\n", (long long)right,
               (long long)n, n ? 100.0 * (double)right / (double)n : 0.0);
    }
    smelt_tensor_free(probs);
    smelt_tensor_free(labels);
    smelt_tensor_free(images);
    smelt_plan_free(plan);
    smelt_graph_free(g);
    smelt_ctx_free(ctx);
    return st == SMELT_OK ? 0 : 1;
}
