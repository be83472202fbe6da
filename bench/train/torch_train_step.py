#!/usr/bin/python3
"""PyTorch's side of the training-step benchmark: eager mode, one process
per measurement.

    torch_train_step.py NAME DIR --threads N [--info]

Loads DIR/NAME.pt (gen_train_models.py) into train_models.py's module,
puts it in train() mode, and runs one AdamW step (lr 1e-3, weight decay
0.01: smelt train's defaults) per batch of DIR/NAME_x.npy and
NAME_y.npy, in order: zero_grad, forward, loss, backward,
optimizer.step. Prints one JSON line: the median and minimum step time
over every step but the first two (as smelt train --json), and the
process's peak RSS (ru_maxrss: Python, torch and its libraries, the
model, the data, autograd's saved tensors and AdamW's states).

With --info it prints instead what the run would use: torch's version,
its threads, the BLAS library really loaded (read from /proc/self/maps
after a matrix product: Debian's torch calls whatever libblas.so.3 the
alternatives select, and torch.__config__ says BLAS_INFO=generic either
way) and OpenBLAS's thread count.
"""
import argparse
import ctypes
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_models  # noqa: E402

SKIP = 2  # first steps left out of the figures (as smelt train --json)


def blas_info(torch):
    """(path of the libblas loaded, OpenBLAS's threads or None)."""
    a = torch.ones(64, 64)
    (a @ a).sum().item()
    path = None
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "libblas" in p or "libopenblas" in p:
                path = os.path.realpath(p)
                break
    threads = None
    if path:
        try:
            lib = ctypes.CDLL(path)
            threads = lib.openblas_get_num_threads()
        except (OSError, AttributeError):
            pass
    return path, threads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name")
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--info", action="store_true")
    a = ap.parse_args()
    import numpy as np
    import torch
    torch.set_num_threads(a.threads)
    if a.info:
        path, bt = blas_info(torch)
        print(json.dumps({"torch": torch.__version__,
                          "threads": torch.get_num_threads(),
                          "blas": path, "blas_threads": bt,
                          "openblas": bool(path and "openblas" in path)}))
        return
    _, batch, _, loss_kind, classes = train_models.MODELS[a.name]
    m = train_models.build(torch, a.name)
    m.load_state_dict(torch.load(os.path.join(a.dir, a.name + ".pt")))
    m.train()
    x = torch.from_numpy(np.load(os.path.join(a.dir, a.name + "_x.npy")))
    y = torch.from_numpy(np.load(os.path.join(a.dir, a.name + "_y.npy")))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = (torch.nn.functional.cross_entropy if classes
               else torch.nn.functional.mse_loss)
    times = []
    for b in range(x.shape[0] // batch):
        xb, yb = x[b * batch:(b + 1) * batch], y[b * batch:(b + 1) * batch]
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(m(xb), yb)
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
        if not torch.isfinite(loss):
            sys.exit("torch_train_step.py: %s: loss not finite" % a.name)
    t = sorted(times[SKIP:] if len(times) > SKIP else times)
    n = len(t)
    med = t[n // 2] if n % 2 else (t[n // 2 - 1] + t[n // 2]) / 2
    print(json.dumps({
        "step_median_ms": med, "step_min_ms": t[0], "steps_timed": n,
        "threads": torch.get_num_threads(),
        "peak_rss_mib": resource.getrusage(
            resource.RUSAGE_SELF).ru_maxrss / 1024.0}))


if __name__ == "__main__":
    main()
