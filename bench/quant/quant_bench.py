#!/usr/bin/python3
"""int8 against f32: Smelt on the f32 model, Smelt and ONNX Runtime on the
same int8 file (`smelt quantize --dynamic --per-channel`), side by side.

usage: /usr/bin/python3 bench/quant/quant_bench.py [--threads N]
       [--runs R] [--rounds K] [--models mlp,bert,resnet18]
       [--smelt PATH] [--before PATH] [--models-dir DIR]

The models are scripts/gen_models.py's (build/models: NAME.onnx and
NAME_input_0.npy; the model tests make them): the MLP
8x1024->4096->4096->1024, the BERT-style encoder and ResNet-18 (its
convolutions quantized too, --conv). For each, the f32 model is
quantized into build/models/quant/NAME.int8.onnx, then timed K rounds
over (interleaved, each runtime's best median kept: on a shared machine
a burst of load then slows no runtime alone) with

  Smelt f32     smelt bench NAME.onnx --json
  Smelt int8    smelt bench NAME.int8.onnx --json
  ORT int8      node bench/peers/ort_bench.js NAME.int8.onnx --json

(and, with --before PATH, another Smelt's binary on the same int8 file
in the same rounds, to compare a change with the tree before it), and
it prints Markdown tables of median and minimum latencies in ms
(on a shared machine the minimum is the steadier), int8 over f32
for Smelt, Smelt int8 over ONNX Runtime int8, and the cosine similarity
of Smelt's int8 outputs with its f32 ones on the model's input. A
benchmark: it prints figures and never fails on speed.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if r.returncode:
        print("note: %s failed: %s" % (" ".join(cmd[:3]), r.stderr.strip()),
              file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def outputs(smelt, model, x, out):
    subprocess.run([smelt, "run", model, "--input", x, "--output-dir", out],
                   check=True, capture_output=True)
    return [np.load(os.path.join(out, f)) for f in sorted(os.listdir(out))]


def cosine(a, b):
    a = np.concatenate([t.ravel() for t in a]).astype(np.float64)
    b = np.concatenate([t.ravel() for t in b]).astype(np.float64)
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default="mlp,bert,resnet18")
    ap.add_argument("--smelt", default=os.path.join(ROOT, "build", "smelt"))
    ap.add_argument("--before", default=None,
                    help="another smelt binary timed on the int8 file too")
    ap.add_argument("--models-dir",
                    default=os.path.join(ROOT, "build", "models"))
    a = ap.parse_args()
    qdir = os.path.join(a.models_dir, "quant")
    os.makedirs(qdir, exist_ok=True)
    mods = os.path.join(ROOT, "bench", "peers", "node_modules")
    ort = os.path.isdir(os.path.join(mods, "onnxruntime-node"))
    rows = []
    for name in a.models.split(","):
        f32 = os.path.join(a.models_dir, name + ".onnx")
        x = os.path.join(a.models_dir, name + "_input_0.npy")
        if not os.path.exists(f32):
            print("note: %s missing (run the model tests)" % f32)
            continue
        q8 = os.path.join(qdir, name + ".int8.onnx")
        cmd = [a.smelt, "quantize", f32, "-o", q8, "--dynamic",
               "--per-channel"] + (["--conv"] if name != "bert" else [])
        subprocess.run(cmd, check=True, capture_output=True)
        c = cosine(outputs(a.smelt, q8, x, os.path.join(qdir, name + "_q8")),
                   outputs(a.smelt, f32, x, os.path.join(qdir, name + "_f")))
        common = ["--threads", str(a.threads), "--runs", str(a.runs)]
        best = {}
        for _ in range(a.rounds):
            runs = {
                "smelt f32": [a.smelt, "bench", f32, "--json", "--input", x]
                + common,
                "smelt int8": [a.smelt, "bench", q8, "--json", "--input", x]
                + common,
            }
            if a.before:
                runs["before int8"] = [a.before, "bench", q8, "--json",
                                       "--input", x] + common
            if ort:
                runs["ort int8"] = ["node", os.path.join(
                    ROOT, "bench", "peers", "ort_bench.js"), q8, "--json",
                    "--input", x] + common
            for k, cmd in runs.items():
                j = run_json(cmd)
                if j:
                    b = best.setdefault(k, [1e30, 1e30])
                    b[0] = min(b[0], j["median_ms"])
                    b[1] = min(b[1], j["min_ms"])
        rows.append((name, best, c))
    load = os.getloadavg()[0]
    for i, what in ((0, "median"), (1, "minimum")):
        print("\n%s ms (best of %d rounds of %d runs, %d threads; load "
              "average %.1f at the end)\n" %
              (what, a.rounds, a.runs, a.threads, load))
        if a.before:
            print("| model | Smelt int8 before | Smelt int8 | ONNX Runtime "
                  "int8 | before / ORT | Smelt / ORT |")
            print("|---|---|---|---|---|---|")
            for name, b, c in rows:
                p, q, o = (b[k][i] if k in b else None
                           for k in ("before int8", "smelt int8", "ort int8"))
                fmt = lambda v: "%.2f" % v if v else "n/a"
                rat = lambda u, v: "%.2f" % (u / v) if u and v else "n/a"
                print("| %s | %s | %s | %s | %s | %s |" % (
                    name, fmt(p), fmt(q), fmt(o), rat(p, o), rat(q, o)))
            print()
        print("| model | Smelt f32 | Smelt int8 | ONNX Runtime int8 | "
              "int8 / f32 (Smelt) | Smelt / ORT (int8) | cosine int8 vs f32 |")
        print("|---|---|---|---|---|---|---|")
        for name, b, c in rows:
            f, q, o = (b[k][i] if k in b else None
                       for k in ("smelt f32", "smelt int8", "ort int8"))
            fmt = lambda v: "%.2f" % v if v else "n/a"
            rat = lambda u, v: "%.2f" % (u / v) if u and v else "n/a"
            print("| %s | %s | %s | %s | %s | %s | %.5f |" % (
                name, fmt(f), fmt(q), fmt(o), rat(q, f), rat(q, o), c))


if __name__ == "__main__":
    main()
