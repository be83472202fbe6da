#!/usr/bin/python3
"""Writes what tests/models/test_train_digits.sh trains, and PyTorch's own
run of the same training for comparison (issue 14, "proof on real data").

    gen_train_digits.py OUT_DIR [STEPS]

OUT_DIR receives
  init.onnx            a small CNN for scikit-learn's 8x8 digits, random
                       initial weights (torch seed 0), logits out, opset 17
  x_train.npy y_train.npy, x_test.npy y_test.npy
                       the 1,797 digits (pixels / 16) split 80/20 by a
                       seeded permutation; labels int64
  torch_losses.txt     the loss of each of the first STEPS (default 50)
                       steps of PyTorch training the same model from the
                       same weights with AdamW (lr 3e-3, weight decay
                       0.01), batch 32, on the samples in the order
                       `smelt train --seed 1` draws them (its SplitMix64
                       Fisher-Yates shuffle, reproduced below)
Needs python3-torch, python3-numpy and python3-sklearn (the data set).
"""
import gzip
import os
import sys

import numpy as np
import torch
from torch import nn

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
BATCH, LR, WD, SEED = 32, 3e-3, 0.01, 1
MASK = (1 << 64) - 1


def splitmix_next(state):
    """tools/smelt/train_data.c's train_rng_next: (new state, value)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def smelt_batches(n, seed, batch):
    """The batches `smelt train --seed seed` draws with no validation
    split, epoch after epoch: each epoch shuffles 0..n-1 (train_shuffle)
    with the generator carried on from the last, and drops the last
    partial batch."""
    state = seed
    while True:
        idx = list(range(n))
        for i in range(n - 1, 0, -1):
            state, r = splitmix_next(state)
            j = r % (i + 1)
            idx[i], idx[j] = idx[j], idx[i]
        for b in range(n // batch):
            yield idx[b * batch:(b + 1) * batch]


def model():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(),
        nn.Linear(64, 10))


def main():
    out = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    os.makedirs(out, exist_ok=True)
    d = np.loadtxt(gzip.open(DIGITS), delimiter=",")
    x = (d[:, :64] / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = d[:, 64].astype(np.int64)
    perm = np.random.default_rng(0).permutation(len(x))
    x, y = x[perm], y[perm]
    n = int(len(x) * 0.8)
    np.save(os.path.join(out, "x_train.npy"), x[:n])
    np.save(os.path.join(out, "y_train.npy"), y[:n])
    np.save(os.path.join(out, "x_test.npy"), x[n:])
    np.save(os.path.join(out, "y_test.npy"), y[n:])

    torch.manual_seed(0)
    m = model()
    torch.onnx.export(m, (torch.zeros(1, 1, 8, 8),),
                      os.path.join(out, "init.onnx"), opset_version=17,
                      input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"},
                                    "logits": {0: "batch"}})

    # PyTorch trains the same weights on the same batches.
    torch.set_num_threads(1)
    opt = torch.optim.AdamW(m.parameters(), lr=LR, weight_decay=WD)
    batches = smelt_batches(n, SEED, BATCH)
    xt, yt = torch.from_numpy(x[:n]), torch.from_numpy(y[:n])
    losses = []
    for _ in range(steps):
        b = next(batches)
        loss = nn.functional.cross_entropy(m(xt[b]), yt[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with open(os.path.join(out, "torch_losses.txt"), "w") as f:
        f.write("".join("%.9g\n" % v for v in losses))


if __name__ == "__main__":
    main()
