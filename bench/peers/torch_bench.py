#!/usr/bin/python3
"""Time a model of scripts/gen_models.py with PyTorch, as frozen TorchScript.

usage: /usr/bin/python3 bench/peers/torch_bench.py NAME [--threads N]
       [--runs R] [--warmup W] [--input x.npy]... [--json]
       /usr/bin/python3 bench/peers/torch_bench.py --info

The model is rebuilt by scripts/gen_models.py's build() (the same module,
seed and weights that the ONNX file was exported from), put in eval mode,
traced with torch.jit.trace, frozen with torch.jit.freeze and run under
torch.no_grad() with torch.set_num_threads(N) and one inter-op thread.
Inputs come from the .npy files given (bench/run_bench.py passes the same
files to every runtime), else from build()'s example inputs. Prints the
median and minimum latency of the timed runs; --json prints one JSON line.
--info prints torch's configuration as one JSON line: version, threads
and the BLAS library really loaded (read from /proc/self/maps after a
matmul: torch.__config__ says BLAS_INFO=generic on Debian whatever
library the alternatives system selects; bench/peers/peerinfo.py). The
--json line carries the same under "config". Needs Debian's python3-torch (and python3-torchvision for the CNNs); exits
77 when they are missing.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def peak_rss_mib():
    """VmHWM from /proc/self/status (this process's own peak: Linux
    carries ru_maxrss across exec from the harness that started it), else
    ru_maxrss."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name", nargs="?")
    ap.add_argument("--info", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:
        sys.stderr.write("torch_bench.py: %s (apt-get install python3-torch)\n"
                         % e)
        return 77
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_models
    import peerinfo
    torch.set_num_threads(max(1, a.threads))
    if a.info:
        print(json.dumps(peerinfo.torch_config(torch)))
        return 0
    if not a.name:
        ap.error("no model NAME given")
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process
    try:
        model, example, _, _, _ = gen_models.build(torch, a.name)
    except ImportError as e:
        sys.stderr.write("torch_bench.py: %s\n" % e)
        return 77
    model.eval()
    if a.input:
        inputs = tuple(torch.from_numpy(np.load(p)) for p in a.input)
    else:
        inputs = example
    with torch.no_grad():
        traced = torch.jit.trace(model, inputs)
        frozen = torch.jit.freeze(traced)
        for _ in range(a.warmup):
            frozen(*inputs)
        lat = []
        for _ in range(a.runs):
            t = time.perf_counter()
            frozen(*inputs)
            lat.append((time.perf_counter() - t) * 1e3)
    med, mn = statistics.median(lat), min(lat)
    rss = peak_rss_mib()
    if a.json:
        print(json.dumps({"model": a.name, "median_ms": med, "min_ms": mn,
                          "runs": a.runs, "threads": a.threads,
                          "peak_rss_mib": rss, "torch": torch.__version__,
                          "config": peerinfo.torch_config(torch)}))
    else:
        print("model:   %s (torch %s, frozen TorchScript)" %
              (a.name, torch.__version__))
        print("latency: median %.3f ms, min %.3f ms (%d runs, %d warmup, "
              "%d threads)" % (med, mn, a.runs, a.warmup, a.threads))
        print("memory:  peak RSS %.1f MiB" % rss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
