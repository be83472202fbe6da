#!/usr/bin/python3
"""Training-step time and peak memory: `smelt train` against PyTorch eager
(issue 14 item 9). A benchmark: it prints figures, never fails on them.

usage: /usr/bin/python3 bench/train/run_train_bench.py [--threads 1,2]
       [--rounds R] [--models a,b] [--steps S] [--smelt PATH]
       [--smelt-base PATH] [--dir DIR] [--no-gen]

Runs gen_train_models.py first (unless --no-gen and DIR has the files),
then for each thread count and model, R rounds (default 3), each running

  Smelt    smelt train NAME.onnx --loss L --optimizer adamw --json ...
           (the step as `smelt train` builds and compiles it: model,
           loss, smelt_graph_grad, smelt_graph_add_optimizer, one plan)
  PyTorch  torch_train_step.py NAME (eager: zero_grad, forward, loss,
           backward, AdamW's step)

one after the other, each in a fresh process, on the same S batches
(default 12) of the same data from the same weights, AdamW with the same
hyper-parameters, the same thread count (torch.set_num_threads and
OPENBLAS_NUM_THREADS for PyTorch, --threads for Smelt). Each process
reports the median and the minimum of its step times but the first two;
the table keeps each side's best median and best minimum over the rounds
(interleaved, so a burst of other load on a shared machine slows no side
alone) and its lowest peak RSS. --smelt-base PATH adds a second Smelt
build (before a change) to every round, so before and after are measured
side by side in one run.

Peak memory is the process's resident-set high-water mark (ru_maxrss),
read at its end. Both figures cover the whole process: for Smelt the
binary, the model as loaded, the graphs built from it, the plan, its
arena (activations, gradients, workspaces), the weights and optimizer
states (an input and an output buffer of each, swapped after a step)
and the data set; for PyTorch the interpreter with torch imported (about
225 MiB alone), the module, the data, autograd's saved tensors,
gradients and AdamW's states.

Above the table it prints PyTorch's configuration: its version, threads
and the BLAS library it really loaded (Debian's torch uses the
libblas.so.3 of the alternatives system; bench/peers/setup.sh installs
OpenBLAS). It refuses to report when the reference BLAS is loaded: its
GEMMs are several times slower and the comparison would mean nothing.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_models  # noqa: E402

ROOT = train_models.ROOT


def find_smelt(arg):
    if arg:
        return arg
    for d in ("build-release", "build"):
        p = os.path.join(ROOT, d, "smelt")
        if os.path.exists(p):
            return p
    return "smelt"


def run_json(cmd, env, timeout=1800):
    """(the JSON of cmd's last stdout line, None) or (None, why not)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if r.returncode != 0:
        last = r.stderr.strip().splitlines() or ["exit %d" % r.returncode]
        return None, last[-1][:300]
    try:
        return json.loads(r.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, "no JSON in its output"


def peer_env(threads):
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def smelt_cmd(smelt, d, name, threads):
    _, batch, _, loss, _ = train_models.MODELS[name]
    p = os.path.join(d, name)
    return [smelt, "train", p + ".onnx", "--input", "x=" + p + "_x.npy",
            "--target", p + "_y.npy", "--loss", loss, "--optimizer",
            "adamw", "--batch-size", str(batch), "--epochs", "1",
            "--threads", str(threads), "--log-every", "1000000", "--json"] + (
                ["--freeze", train_models.FREEZE[name]]
                if name in train_models.FREEZE else [])


def torch_cmd(d, name, threads, info=False):
    return ([sys.executable, os.path.join(HERE, "torch_train_step.py"), name,
             d, "--threads", str(threads)] + (["--info"] if info else []))


def fmt(v, spec):
    return "n/a" if v is None else spec % v


def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else "%.2f" % (a / b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default=",".join(train_models.ORDER))
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--smelt")
    ap.add_argument("--smelt-base")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build",
                                                  "train_models"))
    ap.add_argument("--no-gen", action="store_true")
    a = ap.parse_args()
    smelt = find_smelt(a.smelt)
    models = a.models.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    for m in models:
        if m not in train_models.MODELS:
            sys.exit("run_train_bench.py: no model %r (%s)" %
                     (m, ", ".join(train_models.ORDER)))
    if not a.no_gen:
        r = subprocess.run([sys.executable,
                            os.path.join(HERE, "gen_train_models.py"),
                            "--out", a.dir, "--steps", str(a.steps),
                            "--models", ",".join(models)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("run_train_bench.py: gen_train_models.py failed: " +
                     (r.stderr.strip().splitlines() or ["?"])[-1])

    for t in threads:
        info, why = run_json(torch_cmd(a.dir, models[0], t, True),
                             peer_env(t))
        if not info:
            sys.exit("run_train_bench.py: PyTorch does not run: %s" % why)
        print("PyTorch %s, %d threads, BLAS %s (%s threads)" %
              (info["torch"], info["threads"], info["blas"],
               info["blas_threads"]))
        if not info["openblas"]:
            sys.exit("run_train_bench.py: PyTorch loads the reference BLAS "
                     "(%s); install OpenBLAS (sh bench/peers/setup.sh) "
                     "before comparing" % info["blas"])

    best = {}  # (side, model, threads) -> [median ms, peak MiB, min ms]
    notes = []
    for r in range(a.rounds):
        for t in threads:
            for m in models:
                sides = [("smelt", smelt_cmd(smelt, a.dir, m, t), None),
                         ("torch", torch_cmd(a.dir, m, t), peer_env(t))]
                if a.smelt_base:
                    sides.append(("base", smelt_cmd(a.smelt_base, a.dir, m,
                                                    t), None))
                for side, cmd, env in sides:
                    j, why = run_json(cmd, env)
                    if not j:
                        notes.append("%s %s (%d threads): %s" %
                                     (side, m, t, why))
                        continue
                    k = (side, m, t)
                    ms, mib = j["step_median_ms"], j["peak_rss_mib"]
                    lo = j["step_min_ms"]
                    if k in best:
                        ms = min(ms, best[k][0])
                        mib = min(mib, best[k][1])
                        lo = min(lo, best[k][2])
                    best[k] = [ms, mib, lo]
                    sys.stderr.write("round %d: %s %s %d threads: %.1f ms, "
                                     "%.0f MiB\n" % (r + 1, side, m, t,
                                                     j["step_median_ms"],
                                                     j["peak_rss_mib"]))
    print()
    print("| model | threads | Smelt ms/step | PyTorch ms/step | ratio "
          "| Smelt min ms | PyTorch min ms | ratio "
          "| Smelt MiB | PyTorch MiB | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in threads:
        for m in models:
            s = best.get(("smelt", m, t), [None, None, None])
            p = best.get(("torch", m, t), [None, None, None])
            _, batch, _, _, _ = train_models.MODELS[m]
            print("| %s (b%d) | %d | %s | %s | %s | %s | %s | %s | %s | %s "
                  "| %s |" %
                  (m, batch, t, fmt(s[0], "%.1f"), fmt(p[0], "%.1f"),
                   ratio(s[0], p[0]), fmt(s[2], "%.1f"), fmt(p[2], "%.1f"),
                   ratio(s[2], p[2]), fmt(s[1], "%.0f"), fmt(p[1], "%.0f"),
                   ratio(s[1], p[1])))
    print()
    print("ms/step: best median over %d interleaved rounds of %d steps "
          "(the first 2 left out); min ms: the fastest single step of "
          "any round (on a loaded machine the closer to the step's own "
          "cost); MiB: peak RSS of the whole process; ratio: Smelt / "
          "PyTorch (below 1: Smelt is faster or smaller)."
          % (a.rounds, a.steps))
    if a.smelt_base:
        print()
        print("Before (%s) and after (%s), the same rounds:" %
              (a.smelt_base, smelt))
        print()
        print("| model | threads | before ms/step | after ms/step | ratio "
              "| before min ms | after min ms | ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for t in threads:
            for m in models:
                b = best.get(("base", m, t), [None, None, None])
                s = best.get(("smelt", m, t), [None, None, None])
                print("| %s | %d | %s | %s | %s | %s | %s | %s |" %
                      (m, t, fmt(b[0], "%.1f"), fmt(s[0], "%.1f"),
                       ratio(s[0], b[0]), fmt(b[2], "%.1f"),
                       fmt(s[2], "%.1f"), ratio(s[2], b[2])))
    load = os.getloadavg()
    print("Load average at the end (1, 5, 15 min): %.1f %.1f %.1f on %d "
          "CPUs." % (load + (os.cpu_count() or 0,)))
    for n in sorted(set(notes)):
        print("note: " + n)


if __name__ == "__main__":
    main()
