#!/usr/bin/python3
"""The Python package's cost over the C API, side by side in one run.

usage: /usr/bin/python3 bench/python/bench_python.py [--build DIR]
       [--runs R] [--rounds N] [--no-resnet]

1. Call overhead on the 16-32-4 MLP of examples/ (batch 1): the C API
   (a session run making and freeing its outputs: build/py_c_call) and
   the same through Python (a Session call, a Plan call, and a Model
   call, which also looks up its cached plan), each call timed alone,
   median microseconds; the overhead is Python's median less C's
   (target: 20 us or less).
2. resnet18 (torchvision's, random weights, 1x3x224x224, exported to a
   scratch .onnx): `smelt bench FILE --json` against a Python Session
   call on the same file, median ms (target: within 2%).

Each side runs --rounds times, interleaved, and keeps its best median,
so that a burst of load from other processes on a shared machine slows
neither side alone. A benchmark: it prints figures, never fails on them.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def time_calls(fn, runs, both=False):
    """Median seconds of fn() over runs calls, after runs/10 untimed
    (with both: the median and the minimum)."""
    clock = time.perf_counter
    for _ in range(max(1, runs // 10)):
        fn()
    ts = []
    for _ in range(runs):
        t0 = clock()
        fn()
        ts.append(clock() - t0)
    return (median(ts), min(ts)) if both else median(ts)


def c_call(build, model, dims, runs):
    out = subprocess.run([os.path.join(build, "py_c_call"), model, dims,
                          str(runs)], check=True, stdout=subprocess.PIPE)
    return json.loads(out.stdout)["median_us"]


def mlp(args, smelt, np):
    path = os.path.join(SRC, "examples", "mlp.ir")
    m = smelt.load(path)
    plan = m.compile(dims={"batch": 1})
    s = plan.session()
    x = np.zeros((1, 16), np.float32)
    m(x)
    best = {"C API": 1e9, "Session call": 1e9, "Plan call": 1e9,
            "Model call": 1e9}
    for _ in range(args.rounds):
        best["C API"] = min(best["C API"],
                            c_call(args.build, path, "batch=1", args.runs))
        for name, fn in [("Session call", lambda: s(x)),
                         ("Plan call", lambda: plan(x)),
                         ("Model call", lambda: m(x))]:
            best[name] = min(best[name], time_calls(fn, args.runs) * 1e6)
    c = best["C API"]
    print("## Call overhead: examples/mlp.ir (16-32-4 MLP), batch 1, "
          "median of %d calls, best of %d rounds\n" % (args.runs, args.rounds))
    print("| call | median us | over the C API, us |")
    print("|---|---:|---:|")
    for name, us in best.items():
        print("| %s | %.2f | %s |" % (name, us,
                                      "-" if name == "C API" else
                                      "%.2f" % (us - c)))
    print()


def resnet(args, smelt, np):
    import torch
    import torchvision

    runs = max(5, args.runs // 100)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "resnet18.onnx")
        torch.manual_seed(0)
        net = torchvision.models.resnet18().eval()
        torch.onnx.export(net, (torch.randn(1, 3, 224, 224),), path,
                          opset_version=17, input_names=["x"])
        m = smelt.load(path)
        plan = m.compile()
        s = plan.session()
        x = np.random.default_rng(0).standard_normal(
            (1, 3, 224, 224)).astype(np.float32)
        cli, py = [1e9, 1e9], [1e9, 1e9]
        for _ in range(args.rounds):
            out = subprocess.run([os.path.join(args.build, "smelt"), "bench",
                                  path, "--json", "--runs", str(runs),
                                  "--warmup", "3"], check=True,
                                 stdout=subprocess.PIPE)
            j = json.loads(out.stdout)
            cli = [min(cli[0], j["median_ms"]), min(cli[1], j["min_ms"])]
            for _ in range(3):
                s(x)
            med, low = time_calls(lambda: s(x), runs, both=True)
            py = [min(py[0], med * 1e3), min(py[1], low * 1e3)]
    print("## resnet18 (1x3x224x224, 1 thread): %d runs, best of %d rounds"
          "\n" % (runs, args.rounds))
    print("| runner | median ms | min ms | median ratio | min ratio |")
    print("|---|---:|---:|---:|---:|")
    print("| smelt bench | %.2f | %.2f | 1.000 | 1.000 |" % tuple(cli))
    print("| Python Session call | %.2f | %.2f | %.3f | %.3f |"
          % (py[0], py[1], py[0] / cli[0], py[1] / cli[1]))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-resnet", action="store_true")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    sys.path.insert(0, os.path.join(args.build, "python"))
    import numpy as np
    import smelt

    mlp(args, smelt, np)
    if not args.no_resnet:
        resnet(args, smelt, np)


if __name__ == "__main__":
    main()
