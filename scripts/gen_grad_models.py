#!/usr/bin/python3
"""Export the models of the gradient test (tests/models/test_grad_torch.sh)
from PyTorch, with PyTorch's own gradients.

usage: /usr/bin/python3 scripts/gen_grad_models.py [--out DIR] [NAME...]

Writes, for each model NAME, into DIR (default: build/grad_models):

  NAME.onnx             the model: random weights from a fixed seed, eval
                        mode, opset 17, no constant folding (so every
                        parameter stays an initializer under its PyTorch
                        name)
  NAME_input_0.npy      its input (float32)
  NAME_grads/P.npy      d loss / d P for every parameter and buffer P the
                        ONNX file holds as an initializer, the loss being
                        the sum of the first output; P sanitized as
                        `smelt grad` names its files ([A-Za-z0-9._-], '_'
                        for the rest)

Each model's files are cached: NAME.stamp records a hash of this script,
and a model whose stamp matches is left alone without importing torch.

The gradients are PyTorch's autograd in float64 on a float64 copy of the
model. A BatchNorm's running mean and variance are initializers too, but
PyTorch gives them no gradient; the CNN's gradients come from the same
network with eval-mode BatchNorm written out as
(x - mean) / sqrt(var + eps) * weight + bias, all four tensors requiring
gradients (its output is checked against nn.BatchNorm2d's first).

Models: mlp (Linear/ReLU), cnn (Conv, BatchNorm in eval mode, ReLU,
MaxPool, Linear), transformer (one nn.TransformerEncoderLayer, batch
first, no dropout) and matmul_mlp (an MLP of bare matrices: MatMul, Add,
Relu, Tanh, Sigmoid, ops whose rules exist already).

Needs Debian's python3-torch (1.13) and python3-onnx; exits with status
77 and a one-line message when they are missing.
"""
import argparse
import os
import re
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODELS = ["mlp", "cnn", "transformer", "matmul_mlp"]
EXIT_MISSING = 77
OPSET = 17


def import_torch():
    try:
        import numpy as np
        try:
            np.float, np.int, np.bool, np.object  # noqa: B018
        except AttributeError:  # Debian's python3-onnx predates numpy 1.24
            np.float, np.int, np.bool, np.object = float, int, bool, object
        import onnx  # noqa: F401
        import torch
    except ImportError as e:
        sys.stderr.write(
            "gen_grad_models.py: %s; the gradient test needs Debian's "
            "python3-torch and python3-onnx\n" % e)
        sys.exit(EXIT_MISSING)
    torch.set_num_threads(1)
    return torch


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def make_mlp(torch):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16),
                          nn.ReLU(), nn.Linear(16, 5))
    return model, torch.randn(8, 20)


def make_matmul_mlp(torch):
    """An MLP written with matrices (MatMul, Add, Relu, Tanh, Sigmoid in
    ONNX, no Gemm): the ops whose rules came first, so the comparison
    runs while the others are written."""
    nn = torch.nn

    class MatMulMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Parameter(torch.randn(20, 32) * 0.3)
            self.b1 = nn.Parameter(torch.randn(32) * 0.1)
            self.w2 = nn.Parameter(torch.randn(32, 16) * 0.3)
            self.b2 = nn.Parameter(torch.randn(16) * 0.1)
            self.w3 = nn.Parameter(torch.randn(16, 5) * 0.3)

        def forward(self, x):
            h = torch.relu(x @ self.w1 + self.b1)
            h = torch.tanh(h @ self.w2 + self.b2)
            return torch.sigmoid(h @ self.w3)

    torch.manual_seed(0)
    return MatMulMLP(), torch.randn(8, 20)


class ManualBN(object):
    """Eval-mode BatchNorm2d as plain differentiable arithmetic, so that
    autograd also differentiates the running statistics."""

    def __init__(self, torch, bn):
        self.torch, self.bn = torch, bn

    def __call__(self, x):
        bn, shape = self.bn, (1, -1, 1, 1)
        return ((x - bn.running_mean.view(shape)) /
                self.torch.sqrt(bn.running_var.view(shape) + bn.eps) *
                bn.weight.view(shape) + bn.bias.view(shape))


def make_cnn(torch):
    nn = torch.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 16, 3)
            self.bn2 = nn.BatchNorm2d(16)
            self.fc = nn.Linear(16 * 4 * 4, 10)
            self.manual = False

        def norm(self, bn, x):
            return ManualBN(torch, bn)(x) if self.manual else bn(x)

        def forward(self, x):
            x = torch.relu(self.norm(self.bn1, self.conv1(x)))
            x = torch.nn.functional.max_pool2d(x, 2)
            x = torch.relu(self.norm(self.bn2, self.conv2(x)))
            return self.fc(torch.flatten(x, 1))

    torch.manual_seed(0)
    model = CNN()
    gen = torch.Generator().manual_seed(1)
    for bn in (model.bn1, model.bn2):
        n = bn.num_features
        with torch.no_grad():
            bn.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            bn.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            bn.weight.copy_(torch.rand(n, generator=gen) + 0.5)
            bn.bias.copy_(torch.randn(n, generator=gen) * 0.1)
    return model, torch.randn(2, 3, 12, 12, generator=gen)


def make_transformer(torch):
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(
        d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
        batch_first=True)
    # Fresh LayerNorms are all ones and zeros: the exporter would share
    # one initializer between equal tensors, hiding a parameter's name.
    gen = torch.Generator().manual_seed(1)
    for norm in (model.norm1, model.norm2):
        with torch.no_grad():
            norm.weight.copy_(torch.rand(16, generator=gen) + 0.5)
            norm.bias.copy_(torch.randn(16, generator=gen) * 0.1)
    return model, torch.randn(2, 5, 16, generator=gen)


def torch_grads(torch, model, x):
    """d sum(model(x)) / d every parameter and floating buffer, in
    float64, by name."""
    import copy
    m = copy.deepcopy(model).double().eval()
    with torch.no_grad():
        ref = m(x.double())
    tensors = dict(m.named_parameters())
    if hasattr(m, "manual"):
        m.manual = True
        for name, b in m.named_buffers():
            if b.is_floating_point():
                b.requires_grad_(True)
                tensors[name] = b
    out = m(x.double())
    if not torch.allclose(out, ref, atol=1e-10):
        raise SystemExit("gen_grad_models.py: the written-out BatchNorm "
                         "differs from nn.BatchNorm2d")
    out.sum().backward()
    return {n: t.grad for n, t in tensors.items() if t.grad is not None}


def export(torch, name, out):
    import numpy as np
    import onnx
    model, x = globals()["make_" + name](torch)
    model.eval()
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, opset_version=OPSET,
                      input_names=["x"], output_names=["y"],
                      do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
    np.save(os.path.join(out, name + "_input_0.npy"),
            x.numpy().astype(np.float32))
    inits = [i.name for i in onnx.load(path).graph.initializer]
    grads = torch_grads(torch, model, x)
    gdir = os.path.join(out, name + "_grads")
    os.makedirs(gdir, exist_ok=True)
    for f in os.listdir(gdir):
        os.remove(os.path.join(gdir, f))
    n = 0
    for init in inits:
        if init in grads:
            np.save(os.path.join(gdir, sanitize(init) + ".npy"),
                    grads[init].numpy())
            n += 1
    missing = sorted(set(grads) - set(inits))
    if missing:
        raise SystemExit("gen_grad_models.py: %s: parameters that are no "
                         "initializer of the ONNX file: %s"
                         % (name, ", ".join(missing)))
    print("%s: %d initializers, %d with PyTorch gradients"
          % (name, len(inits), n))


def script_hash():
    import hashlib
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def up_to_date(out, name, stamp):
    """Whether NAME's files exist and were made by this very script."""
    for f in (".onnx", "_input_0.npy", "_grads"):
        if not os.path.exists(os.path.join(out, name + f)):
            return False
    try:
        with open(os.path.join(out, name + ".stamp")) as f:
            return f.read().strip() == stamp
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build",
                                                  "grad_models"))
    ap.add_argument("names", nargs="*", choices=MODELS + [[]],
                    help="models (default: all of %s)" % ", ".join(MODELS))
    args = ap.parse_args()
    stamp = script_hash()
    todo = [n for n in (args.names or MODELS)
            if not up_to_date(args.out, n, stamp)]
    if not todo:
        return
    torch = import_torch()
    os.makedirs(args.out, exist_ok=True)
    for name in todo:
        export(torch, name, args.out)
        with open(os.path.join(args.out, name + ".stamp"), "w") as f:
            f.write(stamp + "\n")


if __name__ == "__main__":
    main()
