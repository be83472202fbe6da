/*
 * schedule.c - the learning rate of each step (warm-up, then constant or
 * cosine) and the accuracy of a batch's predictions.
 */
#include <math.h>
#include <string.h>

#include "train/train.h"

double train_lr_at(const smelt_train_options *o, int64_t s, int64_t total)
{
    if (s < o->warmup)
        return o->lr * (double)(s + 1) / (double)o->warmup;
    if (o->schedule != SMELT_SCHEDULE_COSINE || total <= o->warmup)
        return o->lr;
    double prog = (double)(s - o->warmup) / (double)(total - o->warmup);
    return o->lr * 0.5 * (1 + cos(3.14159265358979323846 * prog));
}

/* cross_entropy: a row is right when its argmax (the first of equal
 * maxima) is the class; bce_with_logits: an element is right when the
 * logit's sign agrees with target > 0.5. */
int64_t train_correct(const char *loss, const smelt_tensor_t *pred,
                      const smelt_tensor_t *y, int64_t rows, int64_t *n)
{
    *n = 0;
    int64_t ok = 0;
    if (!strcmp(loss, "cross_entropy")) {
        int64_t c = smelt_tensor_dim(pred, 1);
        for (int64_t r = 0; r < rows; r++) {
            int64_t best = 0;
            for (int64_t k = 1; k < c; k++)
                if (smelt_tensor_get_f64(pred, r * c + k) >
                    smelt_tensor_get_f64(pred, r * c + best))
                    best = k;
            ok += best == (int64_t)smelt_tensor_get_f64(y, r);
        }
        *n = rows;
    } else if (!strcmp(loss, "bce_with_logits")) {
        int64_t per = smelt_tensor_numel(pred) / smelt_tensor_dim(pred, 0);
        for (int64_t e = 0; e < rows * per; e++)
            ok += (smelt_tensor_get_f64(pred, e) > 0) ==
                  (smelt_tensor_get_f64(y, e) > 0.5);
        *n = rows * per;
    }
    return ok;
}
