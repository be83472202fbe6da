#!/usr/bin/python3
"""Writes the bundled examples under examples/ (deterministic).

examples/mlp.ir      a 16-32-4 MLP classifier with a softmax head, in text IR
examples/mlp_x.npy   a batch of two inputs for it
examples/mlp_y.npy   the expected probabilities, computed with numpy

examples/digits_cnn.onnx        a small CNN classifier for 28x28 grey images
                                (two conv blocks, two dense layers, softmax),
                                random weights (seed 0), exported from
                                PyTorch at opset 17 with a dynamic batch
examples/digits_cnn_x.npy       four drawn images: a ring, a bar, a cross,
                                a slash, normalized as MNIST is
examples/digits_cnn_probs.npy   the probabilities PyTorch computes for them

The ONNX part needs Debian's python3-torch and python3-onnx; without them
it is skipped (with a message) and the committed files are kept.
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


def draw_digits():
    """Four 28x28 images drawn with numpy: a ring, a vertical bar, a cross
    and a slash, scaled to [0, 1] and normalized with MNIST's mean and
    standard deviation."""
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float32)
    r = np.hypot(yy - 13.5, xx - 13.5)
    ring = np.clip(2.5 - abs(r - 8), 0, 1)
    bar = np.clip(2.5 - abs(xx - 14), 0, 1) * ((yy > 4) & (yy < 24))
    cross = np.maximum(np.clip(2 - abs(xx - 14), 0, 1),
                       np.clip(2 - abs(yy - 14), 0, 1)) * (r < 11)
    slash = np.clip(2.5 - abs(xx + yy - 27) / 1.4, 0, 1) * (r < 11)
    imgs = np.stack([ring, bar, cross, slash]).astype(np.float32)
    return ((imgs - 0.1307) / 0.3081)[:, None, :, :].astype(np.float32)


def digits_cnn():
    """Exports the small CNN classifier of `make demo` (see the top)."""
    try:
        np.float, np.int, np.bool, np.object  # noqa: B018
    except AttributeError:  # Debian's python3-onnx predates their removal
        np.float, np.int, np.bool, np.object = float, int, bool, object
    try:
        import onnx
        import torch
    except ImportError as e:
        sys.stderr.write("gen_examples.py: %s; skipping digits_cnn.onnx "
                         "(apt-get install python3-torch python3-onnx)\n" % e)
        return
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
        nn.Linear(64, 10), nn.Softmax(dim=1))
    gen = torch.Generator().manual_seed(1)
    for m in model.modules():  # fresh BatchNorm is the identity
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
    model.eval()
    x = torch.from_numpy(draw_digits())
    with torch.no_grad():
        probs = model(x).numpy()
    path = os.path.join(OUT, "digits_cnn.onnx")
    torch.onnx.export(model, (x,), path, opset_version=17,
                      input_names=["image"], output_names=["probs"],
                      dynamic_axes={"image": {0: "batch"},
                                    "probs": {0: "batch"}})
    m = onnx.load(path)
    m.graph.name = "digits_cnn"
    m.doc_string = ("A small CNN classifier for 28x28 grey images, random "
                    "weights; made by scripts/gen_examples.py")
    onnx.save(m, path)
    np.save(os.path.join(OUT, "digits_cnn_x.npy"), x.numpy())
    np.save(os.path.join(OUT, "digits_cnn_probs.npy"), probs)


if __name__ == "__main__":
    main()
