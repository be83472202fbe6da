#!/usr/bin/python3
"""Fused attention side by side: Smelt, Smelt without the attention pass,
ONNX Runtime; latency, ratios and memory tables (issue 15 item 4).

usage: /usr/bin/python3 bench/attention/run.py [--threads N] [--rounds R]
       [--runs N] [--only TEXT] [--smelt PATH] [--no-gen]

Runs bench/attention/gen.py first (unless --no-gen) to export the models
into build/attention_bench, then, for R interleaved rounds (default 3; each
round runs every configuration of every model once, one after the other,
so a burst of load from other processes slows no runtime alone) and with
the same threads (default 2) and input files:

  Smelt         smelt bench NAME.onnx --json, when the plan holds an
                Attention step (the recognition pass fused it); else, for
                the single attentions, NAME.ir: the same attention written
                as one Attention node (marked "ir" in the table)
  Smelt unfused smelt bench NAME.onnx --disable fuse_attention --json, or
                plain -O3 where this smelt has no --disable (then nothing
                fuses attention anyway)
  ORT           node bench/peers/ort_bench.js NAME.onnx --json

keeping each configuration's best median and its best minimum. Prints
Markdown tables: median latency in ms and Smelt / ORT, Smelt / unfused,
causal speed-up over the unmasked attention of the same length, each
also from the minimum latencies (on a machine others share, the fastest
run is the one that had the cores: the ratio of minima moves less than
that of medians); the load average before and after; then the plan
arena and the peak
RSS of each runtime in MiB. Smelt's unfused single attention at 8192
needs several 2 GiB score tensors on a machine others share, and is
skipped (announced), as is anything whose estimate exceeds the memory
available. A benchmark: it prints
figures and never fails on speed.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "build", "attention_bench")
LENGTHS = [512, 1024, 2048, 4096, 8192]


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def run_json(cmd, timeout=900):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line), None
            except ValueError:
                break
    return None, (r.stderr.strip() or r.stdout.strip())[-300:]


def inputs(name):
    i, files = 0, []
    while os.path.exists(os.path.join(OUT, "%s_input_%d.npy" % (name, i))):
        files.append(os.path.join(OUT, "%s_input_%d.npy" % (name, i)))
        i += 1
    return files


def fuses(smelt, model):
    """Whether smelt -O3 turns model's attention into an Attention node
    (smelt opt: optimizes without running, so no score matrix is made)."""
    r = subprocess.run([smelt, "opt", model, "-O3"], capture_output=True,
                       text=True)
    return re.search(r"= Attention\(", r.stdout) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=0,
                    help="timed runs per call (default: by size)")
    ap.add_argument("--only", default="")
    ap.add_argument("--smelt", default=os.path.join(ROOT, "build", "smelt"))
    ap.add_argument("--no-gen", action="store_true")
    a = ap.parse_args()
    if not a.no_gen:
        r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "gen.py"),
                            "--out", OUT])
        if r.returncode:
            sys.exit(r.returncode)
    help_text = subprocess.run([a.smelt, "bench", "--help"],
                               capture_output=True, text=True).stdout
    has_disable = "--disable" in help_text
    ort = os.path.join(ROOT, "bench", "peers", "ort_bench.js")
    notes = []
    if not has_disable:
        notes.append("this smelt has no --disable: 'unfused' is plain -O3, "
                     "where no pass fuses attention")

    models = []
    for T in LENGTHS:
        for kind in ("full", "causal"):
            models.append("attn_T%d_%s" % (T, kind))
    for f in sorted(os.listdir(OUT)):
        if f.endswith(".onnx") and not f.startswith("attn_"):
            models.append(f[:-5])
    models = [m for m in models if a.only in m]

    # the commands of each configuration, or a reason it does not run
    plan = {}
    for m in models:
        onnx = os.path.join(OUT, m + ".onnx")
        ins = inputs(m)
        big = re.match(r"attn_T(\d+)_", m)
        T = int(big.group(1)) if big else 0
        runs = a.runs or (3 if T >= 4096 else 10)
        common = ["--threads", str(a.threads), "--runs", str(runs),
                  "--warmup", "1"]
        sin = sum([["--input", f] for f in ins], [])
        cfg = {}
        if fuses(a.smelt, onnx):
            cfg["smelt"] = ([a.smelt, "bench", onnx, "--json"] + common + sin,
                            "")
        elif T:
            cfg["smelt"] = ([a.smelt, "bench", os.path.join(OUT, m + ".ir"),
                             "--json"] + common + sin, "ir")
        else:
            cfg["smelt"] = None
            notes.append("%s: Smelt does not fuse its attention (no "
                         "recognition pass in this build)" % m)
        # unfused: the scores, their softmax and a copy or two live at once
        score = 8 * T * T * 4
        if T >= 8192 or (T and 3 * score > mem_available() // 2):
            cfg["unfused"] = None
            notes.append("%s: unfused Smelt skipped: %d MiB of scores per "
                         "tensor" % (m, score >> 20))
        else:
            dis = ["--disable", "fuse_attention"] if has_disable else []
            cfg["unfused"] = ([a.smelt, "bench", onnx, "--json"] + dis +
                              common + sin, "")
        if T and 3 * score > mem_available():
            cfg["ort"] = None
            notes.append("%s: ONNX Runtime skipped: not enough memory for "
                         "its scores" % m)
        else:
            cfg["ort"] = (["node", ort, onnx, "--json", "--threads",
                           str(a.threads), "--runs", str(runs), "--warmup",
                           "1"] + sin, "")
        plan[m] = cfg

    best, best_min = {}, {}
    load0 = os.getloadavg()
    for rnd in range(a.rounds):
        for m in models:
            for rt in ("smelt", "unfused", "ort"):
                c = plan[m][rt]
                if not c:
                    continue
                res, err = run_json(c[0])
                if res is None:
                    notes.append("%s %s round %d failed: %s" %
                                 (m, rt, rnd, err))
                    continue
                old = best.get((m, rt))
                if not old or res["median_ms"] < old["median_ms"]:
                    best[(m, rt)] = res
                lo = res.get("min_ms")
                if lo is not None and lo < best_min.get((m, rt), lo + 1):
                    best_min[(m, rt)] = lo
            print("round %d/%d: %s done" % (rnd + 1, a.rounds, m),
                  file=sys.stderr)

    load1 = os.getloadavg()

    def ms(m, rt):
        r = best.get((m, rt))
        return r["median_ms"] if r else None

    def mn(m, rt):
        return best_min.get((m, rt))

    def f(x, fmt="%.2f"):
        return fmt % x if x is not None else "n/a"

    def ratio(x, y):
        return x / y if x is not None and y else None

    print("\nLatency, median ms (best of %d rounds), %d threads; load "
          "average %.1f before, %.1f after (1 minute)\n" %
          (a.rounds, a.threads, load0[0], load1[0]))
    print("| model | Smelt | Smelt unfused | ORT | Smelt / ORT | "
          "Smelt / unfused | causal speed-up | Smelt / ORT, min | "
          "causal speed-up, min |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in models:
        tag = plan[m]["smelt"][1] if plan[m]["smelt"] else ""
        s, u, o = ms(m, "smelt"), ms(m, "unfused"), ms(m, "ort")
        sp = spm = ""
        if m.endswith("_causal"):
            full = m.replace("_causal", "_full")
            sp = f(ratio(ms(full, "smelt"), s))
            spm = f(ratio(mn(full, "smelt"), mn(m, "smelt")))
        print("| %s | %s%s | %s | %s | %s | %s | %s | %s | %s |" %
              (m, f(s), " (ir)" if tag else "", f(u), f(o), f(ratio(s, o)),
               f(ratio(s, u)), sp, f(ratio(mn(m, "smelt"), mn(m, "ort"))),
               spm))
    print("\nMemory, MiB: Smelt's plan arena and each runtime's peak RSS\n")
    print("| model | Smelt arena | unfused arena | Smelt RSS | unfused RSS | "
          "ORT RSS |")
    print("|---|---|---|---|---|---|")
    for m in models:
        def get(rt, key, scale=1.0):
            r = best.get((m, rt))
            return r[key] * scale if r and key in r else None
        print("| %s | %s | %s | %s | %s | %s |" %
              (m, f(get("smelt", "arena_bytes", 2.0 ** -20), "%.1f"),
               f(get("unfused", "arena_bytes", 2.0 ** -20), "%.1f"),
               f(get("smelt", "peak_rss_mib"), "%.0f"),
               f(get("unfused", "peak_rss_mib"), "%.0f"),
               f(get("ort", "peak_rss_mib"), "%.0f")))
    if notes:
        print("\nNotes:")
        for n in dict.fromkeys(notes):
            print("- " + n)


if __name__ == "__main__":
    main()
