#!/usr/bin/python3
"""The shape sweep: Smelt against ONNX Runtime on models nobody tuned for.

usage: /usr/bin/python3 bench/sweep/sweep.py [--threads 2,1] [--runs R]
       [--warmup W] [--rounds N] [--models NAME|FAMILY,...] [--scale]
       [--smelt PATH] [--dir DIR] [--markdown FILE] [--svg-dir DIR]
       [--no-gen] [--no-check]

1. Generates the models (bench/sweep/gen_sweep.py; cached in DIR,
   default build/sweep) unless --no-gen.
2. Prints each peer's version and configuration (bench/peers/peerinfo.py)
   and refuses to compare against a known-slow one (exit status 2).
3. Checks every model's Smelt output against PyTorch's first
   (`smelt run`, max abs error <= 1e-4 + 1e-3 * max |PyTorch|); a model
   that fails is marked FAIL and kept out of the summary.
4. For each thread count (--threads, a comma list: "2,1" runs the sweep
   at 2 threads, then at 1), runs `smelt bench` and ONNX Runtime
   (bench/peers/ort_bench.js) on each model N times (--rounds),
   interleaved and alternating which goes first, with the same threads,
   runs, warm-up and input files, and keeps each runtime's best median.
5. Prints per thread count a Markdown table: median ms of each, the
   ratio Smelt / ONNX Runtime (below 1: Smelt is faster), the ratio of
   the best minimum latencies (a second figure: on a machine loaded by
   other tenants a run that the scheduler preempts inflates the median,
   the longer runs more often, while the minimum is the uninterrupted
   cost), the ratio of CPU time per timed run (each process's own,
   every thread, best over the rounds: at 1 thread the figure that load
   from other tenants inflates least; at 2 threads it counts a thread
   pool's spinning too), the peak RSS of each process in MiB and its
   ratio; then the
   geometric mean and the worst ratio of time and memory, overall and
   per family (the worst and the count above 0.9 from the medians).

--scale runs the scale series instead (a CNN at batch 1..64 and an
encoder at sequence length 16..1024) and draws, per thread count, two
SVG plots (scale_batch_tN.svg, scale_seq_tN.svg in --svg-dir, default
DIR): at 1 thread each runtime's CPU time per run, else its best
minimum latency (a loaded machine inflates the latencies of long runs
most, which would bend the curves up for no reason of their own), and
a dashed line proportional to the work
(FLOPs) through Smelt's first point, so a curve that bends above the
dashed line costs more than the work it does.

--models takes names or family names (vgg, resnet, mobilenet,
efficientnet, shufflenet, conv, mlp, encoder, decoder). This is a
benchmark: it prints figures and never fails on speed or memory.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "peers"))
import gen_sweep  # noqa: E402
import peerinfo  # noqa: E402
import svgplot  # noqa: E402

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else \
    sys.executable


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
    except OSError as e:
        return None, str(e)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    if r.returncode != 0:
        last = r.stderr.strip().splitlines() or ["exit %d" % r.returncode]
        return None, last[-1][:200]
    try:
        return json.loads(r.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, "no JSON in its output"


def select(arg, scale):
    """The model names --models (names or families) selects, in the
    generator's order."""
    specs = gen_sweep.SCALE if scale else gen_sweep.SPECS
    if not arg:
        return [s[0] for s in specs]
    want = [w for w in arg.split(",") if w]
    known = {s[0] for s in gen_sweep.ALL} | {s[1] for s in gen_sweep.ALL}
    for w in want:
        if w not in known:
            sys.exit("sweep.py: unknown model or family '%s' (bench/sweep/"
                     "gen_sweep.py --list lists them)" % w)
    return [s[0] for s in gen_sweep.ALL if s[0] in want or s[1] in want]


def load_meta(d, name):
    with open(os.path.join(d, name + ".json")) as f:
        return json.load(f)


def check(smelt, d, name, threads, timeout):
    """Smelt's output against PyTorch's: (max abs error, ok, why)."""
    import numpy as np
    tmp = tempfile.mkdtemp(prefix="sweep_")
    try:
        cmd = [smelt, "run", os.path.join(d, name + ".onnx"), "--input",
               os.path.join(d, name + "_input_0.npy"), "--threads",
               str(threads), "--output-dir", tmp]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, False, str(e)
        if r.returncode != 0:
            return None, False, (r.stderr.strip().splitlines()
                                 or ["exit %d" % r.returncode])[-1][:200]
        got = np.load(os.path.join(tmp, "y.npy"))
        want = np.load(os.path.join(d, name + "_expected_0.npy"))
        if got.shape != want.shape:
            return None, False, "shape %s, PyTorch %s" % (got.shape,
                                                          want.shape)
        err = float(np.max(np.abs(got.astype(np.float64) - want)))
        tol = 1e-4 + 1e-3 * float(np.max(np.abs(want)))
        return err, err <= tol, None if err <= tol else \
            "max abs error %.3g > %.3g" % (err, tol)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def time_models(a, smelt, names, threads, notes):
    """Best median and peak RSS of each runtime on each model:
    {name: {"smelt": ms, "ort": ms, "smelt_rss": MiB, "ort_rss": MiB}}."""
    common = ["--threads", str(threads), "--runs", str(a.runs),
              "--warmup", str(a.warmup), "--json"]
    out = {}
    for name in names:
        onnx = os.path.join(a.dir, name + ".onnx")
        ins = ["--input", os.path.join(a.dir, name + "_input_0.npy")]
        cmds = {"smelt": [smelt, "bench", onnx] + common + ins,
                "ort": ["node", os.path.join(HERE, "..", "peers",
                                             "ort_bench.js"), onnx]
                + common + ins}
        row, failed = {}, set()
        for rnd in range(max(1, a.rounds)):
            order = ["smelt", "ort"] if rnd % 2 == 0 else ["ort", "smelt"]
            for rt in order:
                if rt in failed:
                    continue
                sys.stderr.write("sweep: %s, %s, %d threads, round %d\n"
                                 % (name, rt, threads, rnd + 1))
                res, why = run_json(cmds[rt], a.timeout)
                if why:
                    failed.add(rt)
                    for key in ("", "_rss", "_min", "_cpu"):
                        row[rt + key] = None
                    notes.append("%s (%d threads), %s: %s"
                                 % (name, threads, rt, why))
                    continue
                for key, k in ((rt, "median_ms"), (rt + "_min", "min_ms"),
                               (rt + "_cpu", "cpu_ms")):
                    old, new = row.get(key), res.get(k)
                    row[key] = new if old is None or new is None else min(
                        old, new)
                rss = res.get("peak_rss_mib")
                oldr = row.get(rt + "_rss")
                row[rt + "_rss"] = rss if oldr is None else max(oldr, rss)
        out[name] = row
    return out


def ratio(v, base):
    return None if v is None or not base else v / base


def fmt(v, spec):
    return "n/a" if v is None else spec % v


def fmt_ms(v):
    """Milliseconds to three significant digits at least (a batch-1 MLP
    runs in microseconds)."""
    if v is None:
        return "n/a"
    return "%.2f" % v if v >= 1 else "%.3g" % v


def geomean(vals):
    vals = [v for v in vals if v]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def summary_lines(rows, metas, checks):
    """Geometric mean and worst ratio of time and memory, overall and by
    family, over the models that passed the check."""
    ok = [n for n in rows if checks.get(n, (None, True))[1]]
    lines = []

    def one(label, names):
        t = [(ratio(rows[n]["smelt"], rows[n]["ort"]), n) for n in names]
        m = [(ratio(rows[n]["smelt_rss"], rows[n]["ort_rss"]), n)
             for n in names]
        mn = [ratio(rows[n].get("smelt_min"), rows[n].get("ort_min"))
              for n in names]
        cpu = [ratio(rows[n].get("smelt_cpu"), rows[n].get("ort_cpu"))
               for n in names]
        t = [x for x in t if x[0]]
        m = [x for x in m if x[0]]
        if not t:
            return
        wt, wm = max(t), max(m) if m else (None, "")
        lines.append("| %s | %d | %s | %s (%s) | %d | %s | %s | %s | %s (%s) |"
                     % (label, len(t), fmt(geomean([x[0] for x in t]), "%.2f"),
            fmt(wt[0], "%.2f"), wt[1], sum(1 for x in t if x[0] > 0.9),
            fmt(geomean(mn), "%.2f"), fmt(geomean(cpu), "%.2f"),
            fmt(geomean([x[0] for x in m]), "%.2f"), fmt(wm[0], "%.2f"),
            wm[1]))
    lines.append("| models | n | time geomean | time worst | above 0.9 | "
                 "min-time geomean | CPU geomean | memory geomean | "
                 "memory worst |")
    lines.append("|---|---:|---:|---|---:|---:|---:|---:|---|")
    one("all", ok)
    fams = []
    for n in ok:
        if metas[n]["family"] not in fams:
            fams.append(metas[n]["family"])
    for f in fams:
        one(f, [n for n in ok if metas[n]["family"] == f])
    return lines


def table_lines(rows, metas, checks):
    lines = ["| model | opset | GFLOP | vs PyTorch | Smelt ms | ORT ms | "
             "Smelt / ORT | min ratio | CPU ratio | Smelt MiB | ORT MiB | "
             "Smelt / ORT MiB |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, r in rows.items():
        err, ok, _ = checks.get(n, (None, True, None))
        chk = "not checked" if n not in checks else (
            ("ok %.0e" % err) if ok else "FAIL")
        lines.append("| %s | %d | %.2f | %s | %s | %s | %s | %s | %s | %s | "
                     "%s | %s |"
                     % (n, metas[n]["opset"], metas[n]["flops"] / 1e9, chk,
                        fmt_ms(r["smelt"]), fmt_ms(r["ort"]),
                        fmt(ratio(r["smelt"], r["ort"]), "%.2f"),
                        fmt(ratio(r.get("smelt_min"), r.get("ort_min")),
                            "%.2f"),
                        fmt(ratio(r.get("smelt_cpu"), r.get("ort_cpu")),
                            "%.2f"),
                        fmt(r["smelt_rss"], "%.1f"),
                        fmt(r["ort_rss"], "%.1f"),
                        fmt(ratio(r["smelt_rss"], r["ort_rss"]), "%.2f")))
    return lines


def plot_scale(a, rows, metas, threads, emit):
    """One SVG per scale series: each runtime's CPU time per run (1
    thread) or best minimum latency against the batch or sequence
    length, and the work-proportional line."""
    for fam, xkey, xlabel in (("scale_batch", 0, "batch size"),
                              ("scale_seq", 1, "sequence length")):
        names = [n for n in rows if metas[n]["family"] == fam]
        if not names:
            continue
        xs = [metas[n]["input_shape"][xkey] for n in names]
        key = "_cpu" if threads == 1 else "_min"
        sm = [(x, rows[n]["smelt" + key]) for x, n in zip(xs, names)
              if rows[n].get("smelt" + key)]
        ort = [(x, rows[n]["ort" + key]) for x, n in zip(xs, names)
               if rows[n].get("ort" + key)]
        work = []
        if sm:
            f0 = metas[names[xs.index(sm[0][0])]]["flops"]
            work = [(x, sm[0][1] * metas[n]["flops"] / f0)
                    for x, n in zip(xs, names)]
        os.makedirs(a.svg_dir, exist_ok=True)
        path = os.path.join(a.svg_dir, "%s_t%d.svg" % (fam, threads))
        what = ("a ResNet-style CNN (width 32, 32x32 images)"
                if fam == "scale_batch" else
                "a 2-layer encoder (d 256, 4 heads, batch 1)")
        svgplot.write(path, "%s, %d thread%s: latency vs %s" % (
            what, threads, "" if threads == 1 else "s", xlabel), xlabel,
            "CPU time per run (ms)" if threads == 1 else
            "best minimum latency (ms)",
            [("Smelt", sm, False), ("ONNX Runtime", ort, False),
             ("work (FLOPs)", work, True)])
        emit("plot: %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="2",
                    help="comma list of thread counts, e.g. 2,1")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default="")
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--smelt", default="")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build", "sweep"))
    ap.add_argument("--markdown", default="",
                    help="also write the report to this file")
    ap.add_argument("--svg-dir", default="")
    ap.add_argument("--no-gen", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--timeout", type=int, default=600)
    a = ap.parse_args()
    a.svg_dir = a.svg_dir or a.dir
    try:
        thread_list = [int(t) for t in a.threads.split(",") if t]
    except ValueError:
        ap.error("--threads takes a comma list of counts")
    if not thread_list or min(thread_list) < 1:
        ap.error("--threads takes counts >= 1")
    names = select(a.models, a.scale)
    if not a.no_gen:
        r = subprocess.run([PY, os.path.join(HERE, "gen_sweep.py"),
                            "--out", a.dir] + names, stdout=sys.stderr)
        if r.returncode != 0:
            return r.returncode
    smelt = find_smelt(a.smelt)
    report = []

    def emit(line=""):
        print(line)
        report.append(line)

    ver = subprocess.run([smelt, "--version"], capture_output=True,
                         text=True)
    emit("Smelt: %s (%s)" % (ver.stdout.strip() or "?", smelt))
    ort = peerinfo.ort_config()
    emit("ONNX Runtime: " + peerinfo.describe(ort))
    torch = peerinfo.torch_config_subprocess(PY)
    emit("PyTorch (the outputs' reference): " + peerinfo.describe(torch))
    why = peerinfo.ort_refusal(ort)
    if why:
        sys.stderr.write("sweep.py: refusing to compare: %s\n" % why)
        return 2
    metas = {n: load_meta(a.dir, n) for n in names}
    notes = []
    checks = {}
    if not a.no_check:
        for n in names:
            sys.stderr.write("sweep: checking %s against PyTorch\n" % n)
            err, ok, why = check(smelt, a.dir, n, thread_list[0], a.timeout)
            checks[n] = (err, ok, why)
            if not ok:
                notes.append("%s: Smelt's output differs from PyTorch's: %s"
                             % (n, why))
    for threads in thread_list:
        rows = time_models(a, smelt, names, threads, notes)
        emit()
        emit("threads %d, %d timed runs after %d warm-up, best median of "
             "%d interleaved rounds, ms; peak RSS in MiB" % (
                 threads, a.runs, a.warmup, a.rounds))
        emit()
        for line in table_lines(rows, metas, checks):
            emit(line)
        emit()
        for line in summary_lines(rows, metas, checks):
            emit(line)
        if a.scale:
            emit()
            plot_scale(a, rows, metas, threads, emit)
    for n in notes:
        emit()
        emit("note: " + n)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
