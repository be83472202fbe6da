#!/usr/bin/python3
"""Smelt, ONNX Runtime and PyTorch on the same models: one side-by-side table.

usage: /usr/bin/python3 bench/run_bench.py [--threads N] [--runs R]
       [--warmup W] [--rounds N] [--models a,b,...] [--smelt PATH]
       [--models-dir DIR] [--no-gen]

For each model of scripts/gen_models.py's cache (build/models: NAME.onnx
and NAME_input_I.npy; the script is run first to fill it, unless
--no-gen), runs

  Smelt         smelt bench NAME.onnx --json              (a compiled plan)
  ONNX Runtime  node bench/peers/ort_bench.js NAME.onnx   (onnxruntime-node)
  PyTorch       bench/peers/torch_bench.py NAME           (frozen TorchScript)

one after the other with the same thread count, runs, warm-up and input
files (with --rounds N, the three N times over, interleaved, keeping each
runtime's best median: on a shared machine a burst of other load then
slows no runtime alone), and prints two Markdown tables: each runtime's median latency in
ms and its ratio to ONNX Runtime (below 1: faster than ONNX Runtime),
then each runtime's peak memory in MiB and its ratio to ONNX Runtime
(below 1: less memory). A runtime that is missing or fails shows "n/a"
and a note below the tables. This is a benchmark: it prints figures and
never fails on speed or memory.

Peak memory is the whole process's resident-set high-water mark
(VmHWM of /proc/self/status: Linux carries getrusage's ru_maxrss
across exec, so a child would report this script's own peak), read
by each runtime's own program after its timed runs. It covers loading
the model, compiling or optimizing it, the runs, and the runtime's own
baseline: a few MiB for the smelt binary, about 50 MiB for node with V8
and onnxruntime-node's library loaded, about 225 MiB for Python with
torch imported (PyTorch also rebuilds the model in Python and freezes
it, so its figure is an upper bound on what TorchScript alone needs).
The numbers compare what a user of each runtime pays on this machine,
not the weights alone.

Above the tables each peer's version and configuration is printed
(bench/peers/peerinfo.py: ONNX Runtime's native library and options,
PyTorch's BLAS as really loaded, its threads). A peer in a known-slow
configuration, such as PyTorch on the reference BLAS, is refused: its
column says "n/a" and a note says why and how to fix it.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
ORDER = ["mlp", "resnet18", "mobilenet_v2", "bert", "gpt"]


def find_smelt(arg):
    if arg:
        return arg
    for d in ("build-release", "build"):
        p = os.path.join(ROOT, d, "smelt")
        if os.path.exists(p):
            return p
    return "smelt"


def run_json(cmd, timeout):
    """Runs cmd; returns (the JSON of its last stdout line, None) or
    (None, why it failed)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except FileNotFoundError as e:
        return None, str(e)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])
        return None, last[-1][:200]
    try:
        return json.loads(r.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, "no JSON in its output"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--models", default="")
    ap.add_argument("--smelt", default="")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build",
                                                         "models"))
    ap.add_argument("--no-gen", action="store_true")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every runtime on every model this many "
                         "times, interleaved, and keep each one's best "
                         "median (a shared machine's bursts of load then "
                         "hit no runtime alone)")
    a = ap.parse_args()
    wanted = [m for m in a.models.split(",") if m] or ORDER
    if not a.no_gen:
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "gen_models.py"),
                        "--out", a.models_dir] + wanted)
    smelt = find_smelt(a.smelt)
    sys.path.insert(0, os.path.join(HERE, "peers"))
    import peerinfo
    cfgs = {"ort": peerinfo.ort_config(),
            "torch": peerinfo.torch_config_subprocess()}
    refused = {"ort": peerinfo.ort_refusal(cfgs["ort"]),
               "torch": peerinfo.torch_refusal(cfgs["torch"])}
    common = ["--threads", str(a.threads), "--runs", str(a.runs),
              "--warmup", str(a.warmup), "--json"]
    rows, notes = [], []
    for name in wanted:
        onnx = os.path.join(a.models_dir, name + ".onnx")
        if not os.path.exists(onnx):
            notes.append("%s: %s is missing" % (name, onnx))
            continue
        inputs = sorted(glob.glob(os.path.join(a.models_dir,
                                               name + "_input_*.npy")))
        ins = sum((["--input", p] for p in inputs), [])
        cmds = {
            "smelt": [smelt, "bench", onnx] + common + ins,
            "ort": ["node", os.path.join(HERE, "peers", "ort_bench.js"),
                    onnx] + common + ins,
            "torch": ["/usr/bin/python3",
                      os.path.join(HERE, "peers", "torch_bench.py"),
                      name] + common + ins,
        }
        row = {"model": name}
        failed = set(rt for rt in refused if refused[rt])
        for rt in failed:
            row[rt] = row[rt + "_rss"] = None
        for rnd in range(max(1, a.rounds)):
            for rt, cmd in cmds.items():
                if rt in failed:
                    continue
                sys.stderr.write("run_bench: %s on %s (round %d) ...\n"
                                 % (name, rt, rnd + 1))
                res, why = run_json(cmd, a.timeout)
                if why:
                    failed.add(rt)
                    row[rt] = row[rt + "_rss"] = None
                    notes.append("%s, %s: %s" % (name, rt, why))
                    continue
                old = row.get(rt)
                med = res["median_ms"]
                row[rt] = med if old is None else min(old, med)
                rss = res.get("peak_rss_mib")
                oldr = row.get(rt + "_rss")
                row[rt + "_rss"] = (rss if oldr is None or rss is None
                                    else max(oldr, rss))
        rows.append(row)

    def ms(v):
        return "n/a" if v is None else "%.2f" % v

    def mib(v):
        return "n/a" if v is None else "%.1f" % v

    def ratio(v, base):
        return "n/a" if v is None or not base else "%.2f" % (v / base)

    print("ONNX Runtime: " + peerinfo.describe(cfgs["ort"]))
    print("PyTorch: " + peerinfo.describe(cfgs["torch"]))
    for rt, why in refused.items():
        if why:
            notes.append("%s refused: %s" % (rt, why))
    print()
    print("threads %d, %d timed runs after %d warm-up, median latency in ms"
          % (a.threads, a.runs, a.warmup)
          + ("" if a.rounds <= 1 else
             " (best median of %d interleaved rounds)" % a.rounds))
    print()
    print("| model | Smelt ms | ONNX Runtime ms | PyTorch ms | "
          "Smelt / ORT | PyTorch / ORT |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %s |" % (
            r["model"], ms(r["smelt"]), ms(r["ort"]), ms(r["torch"]),
            ratio(r["smelt"], r["ort"]), ratio(r["torch"], r["ort"])))
    print()
    print("peak memory: the process's resident-set high-water mark in MiB "
          "(runtime baseline included)")
    print()
    print("| model | Smelt MiB | ONNX Runtime MiB | PyTorch MiB | "
          "Smelt / ORT | PyTorch / ORT |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %s |" % (
            r["model"], mib(r["smelt_rss"]), mib(r["ort_rss"]),
            mib(r["torch_rss"]), ratio(r["smelt_rss"], r["ort_rss"]),
            ratio(r["torch_rss"], r["ort_rss"])))
    for n in notes:
        print("\nnote: " + n, end="")
    if notes:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
