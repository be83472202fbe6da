#!/usr/bin/python3
"""Writes the bundled examples under examples/ (deterministic).

examples/mlp.ir      a 16-32-4 MLP classifier with a softmax head, in text IR
examples/mlp_x.npy   a batch of two inputs for it
examples/mlp_y.npy   the expected probabilities, computed with numpy
"""
import os

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


if __name__ == "__main__":
    main()
