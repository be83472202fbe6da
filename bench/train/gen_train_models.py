#!/usr/bin/python3
"""Writes the models and data of the training-step benchmark
(bench/train/run_train_bench.py; issue 14 item 9).

    gen_train_models.py [--out DIR] [--steps S] [--models a,b]

For each model of train_models.py (mlp, digits, resnet18, transformer),
DIR (default build/train_models) receives
  NAME.onnx     the network with seeded random weights, exported by
                torch.onnx (opset 17) at its fixed batch size; BatchNorm
                is exported in training mode (batch statistics), as
                PyTorch's train() runs it
  NAME.pt       the same weights as a PyTorch state_dict, for the peer
  NAME_x.npy    S batches of random inputs (normal, float32)
  NAME_y.npy    their targets: random classes (int64) for cross-entropy,
                a random tensor of the output's shape for MSE
Both sides read these files, so they train the same network on the same
samples. Needs Debian's python3-torch, python3-torchvision and
python3-onnx.
"""
import argparse
import warnings
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_models  # noqa: E402


def export(torch, name, out, steps):
    _, batch, shape, loss, classes = train_models.MODELS[name]
    import numpy as np
    m = train_models.build(torch, name)
    m.train()
    gen = torch.Generator().manual_seed(2)
    x = torch.randn((batch * steps,) + shape, generator=gen)
    with torch.no_grad():
        y0 = m(x[:batch])
    if classes:
        y = torch.randint(0, classes, (batch * steps,), generator=gen)
    else:
        y = torch.randn((batch * steps,) + tuple(y0.shape[1:]), generator=gen)
    np.save(os.path.join(out, name + "_x.npy"), x.numpy())
    np.save(os.path.join(out, name + "_y.npy"), y.numpy())
    torch.save(m.state_dict(), os.path.join(out, name + ".pt"))
    torch.onnx.export(
        m, (x[:batch],), os.path.join(out, name + ".onnx"), opset_version=17,
        input_names=["x"], output_names=["y"],
        training=torch.onnx.TrainingMode.TRAINING,
        do_constant_folding=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(train_models.ROOT, "build",
                                                  "train_models"))
    ap.add_argument("--steps", type=int, default=12,
                    help="batches of data per model (default 12)")
    ap.add_argument("--models", default=",".join(train_models.ORDER))
    a = ap.parse_args()
    try:
        import numpy as np
        try:
            np.float, np.int, np.bool, np.object  # noqa: B018
        except AttributeError:  # Debian's python3-onnx predates numpy 1.24
            np.float, np.int, np.bool, np.object = float, int, bool, object
        import torch
    except ImportError as e:
        sys.exit("gen_train_models.py: %s (needs python3-torch)" % e)
    # torch.onnx's warnings about training-mode export, one per layer
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    for name in a.models.split(","):
        export(torch, name, a.out, a.steps)
        print("wrote %s/%s.onnx and its data" % (a.out, name))


if __name__ == "__main__":
    main()
