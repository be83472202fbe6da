#!/usr/bin/python3
"""Writes the bundled examples under examples/ (deterministic).

examples/mlp.ir      a 16-32-4 MLP classifier with a softmax head, in text IR
examples/mlp_x.npy   a batch of two inputs for it
examples/mlp_y.npy   the expected probabilities, computed with numpy

examples/digits_cnn.onnx        a small CNN classifier for 28x28 grey images
                                (two conv blocks, two dense layers, softmax)
                                trained on scikit-learn's digits, exported
                                from PyTorch at opset 17 with a dynamic batch
examples/digits_cnn_x.npy       32 held-out digits, normalized as MNIST is
examples/digits_cnn_labels.npy  their true classes (int64)
examples/digits_cnn_probs.npy   the probabilities PyTorch computes for them

The ONNX part needs Debian's python3-torch, python3-onnx and
python3-sklearn; without them it is skipped (with a message) and the
committed files are kept.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "examples")


def literal(a):
    return "[" + ", ".join("%.9g" % v for v in a.astype(np.float32).ravel()) + "]"


def main():
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((16, 32)) * 0.25).astype(np.float32)
    b1 = (rng.standard_normal(32) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((32, 4)) * 0.25).astype(np.float32)
    b2 = (rng.standard_normal(4) * 0.1).astype(np.float32)
    x = rng.standard_normal((2, 16)).astype(np.float32)
    text = f"""# A 16-32-4 MLP classifier: two dense layers, ReLU, softmax.
# Made by scripts/gen_examples.py; run it with `make demo`.
graph mlp(%x: f32[batch,16]) {{
  %w1: f32[16,32] = const {literal(w1)}
  %b1: f32[32] = const {literal(b1)}
  %w2: f32[32,4] = const {literal(w2)}
  %b2: f32[4] = const {literal(b2)}
  %h = MatMul(%x, %w1) @fc1
  %hb = Add(%h, %b1)
  %a = Relu(%hb)
  %o = MatMul(%a, %w2) @fc2
  %ob = Add(%o, %b2)
  %probs = Softmax(%ob) {{axis = -1}}
  return %probs
}}
"""
    with open(os.path.join(OUT, "mlp.ir"), "w") as f:
        f.write(text)
    h = np.maximum(x @ w1 + b1, 0)
    o = h @ w2 + b2
    e = np.exp(o - o.max(-1, keepdims=True))
    y = (e / e.sum(-1, keepdims=True)).astype(np.float32)
    np.save(os.path.join(OUT, "mlp_x.npy"), x)
    np.save(os.path.join(OUT, "mlp_y.npy"), y)
    digits_cnn()


def digits_data():
    """scikit-learn's digits (1,797 8x8 images of handwritten digits, values
    0..16, shipped by Debian's python3-sklearn) made to look like MNIST:
    each image upsampled to 20x20, centred in a 28x28 frame, scaled to
    [0, 1] and normalized with MNIST's mean and standard deviation. Split
    with a fixed permutation: 1,437 images to train on, 360 held out."""
    import torch
    from sklearn.datasets import load_digits
    d = load_digits()
    x = torch.from_numpy(d.images.astype(np.float32) / 16.0)[:, None]
    x = torch.nn.functional.interpolate(x, size=(20, 20), mode="bilinear",
                                        align_corners=False)
    x = torch.nn.functional.pad(x, (4, 4, 4, 4)).clamp(0, 1)
    x = (x - 0.1307) / 0.3081
    y = torch.from_numpy(d.target.astype(np.int64))
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(3))
    x, y = x[perm], y[perm]
    return x[:1437], y[:1437], x[1437:], y[1437:]


def train(model, x, y, epochs=12):
    """Adam on cross-entropy over mini-batches of 64, fixed seeds."""
    import torch
    torch.manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = torch.nn.NLLLoss()
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(y))
        for i in range(0, len(y), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            probs = model(x[idx])
            loss = loss_fn(torch.log(probs.clamp_min(1e-12)), y[idx])
            loss.backward()
            opt.step()
    model.eval()


def digits_cnn():
    """Trains and exports the CNN classifier of `make demo` (see the top)."""
    try:
        np.float, np.int, np.bool, np.object  # noqa: B018
    except AttributeError:  # Debian's python3-onnx predates their removal
        np.float, np.int, np.bool, np.object = float, int, bool, object
    try:
        import onnx
        import torch
        import sklearn  # noqa: F401
    except ImportError as e:
        sys.stderr.write("gen_examples.py: %s; skipping digits_cnn.onnx "
                         "(apt-get install python3-torch python3-onnx "
                         "python3-sklearn)\n" % e)
        return
    nn = torch.nn
    torch.manual_seed(0)
    torch.set_num_threads(1)  # the same weights on every machine
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
        nn.Linear(64, 10), nn.Softmax(dim=1))
    xtr, ytr, xte, yte = digits_data()
    train(model, xtr, ytr)
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    print("digits_cnn: accuracy on the 360 held-out images: %.1f%%"
          % (100 * acc))
    x, labels = xte[:32].contiguous(), yte[:32].contiguous()
    with torch.no_grad():
        probs = model(x).numpy()
    path = os.path.join(OUT, "digits_cnn.onnx")
    torch.onnx.export(model, (x,), path, opset_version=17,
                      input_names=["image"], output_names=["probs"],
                      dynamic_axes={"image": {0: "batch"},
                                    "probs": {0: "batch"}})
    m = onnx.load(path)
    m.graph.name = "digits_cnn"
    m.doc_string = ("A small CNN classifier of handwritten digits, 28x28 "
                    "grey images, trained on scikit-learn's digits "
                    "(%.1f%% on 360 held-out images); made by "
                    "scripts/gen_examples.py" % (100 * acc))
    onnx.save(m, path)
    np.save(os.path.join(OUT, "digits_cnn_x.npy"), x.numpy())
    np.save(os.path.join(OUT, "digits_cnn_labels.npy"), labels.numpy())
    np.save(os.path.join(OUT, "digits_cnn_probs.npy"), probs)


if __name__ == "__main__":
    main()
