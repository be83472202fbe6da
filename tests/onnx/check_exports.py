#!/usr/bin/env python3
"""Every ONNX file Smelt writes passes onnx.checker.

For each model (tests/onnx/models, tests/script, examples), `smelt opt
-ON -o` writes it at -O0..-O3 (the real models of tests/models, where
their cache holds them, at -O3 only: they are large), once with Smelt's
own ops in domain ai.smelt and once with --onnx-standard; each op test of
tests/ops (text IR, fused ops included) is written at -O3 both ways, and
its standard file must still compute the test's expected outputs (`smelt
run`, `smelt compare`), except NO_STANDARD_FORM's ops, which must refuse.
Each file must pass onnx.checker (full_check,
which runs ONNX's strict shape inference, for the standard files; ONNX
cannot infer the shapes of another domain's ops), and Smelt must load it
back (`smelt info`). A standard file must not use the ai.smelt domain.
Files of an opset newer than the installed onnx knows are counted and
checked by Smelt only, and INFERENCE_GAPS lists the files whose full
check meets a gap of onnx 1.12's own shape inference (they pass the
plain check). Exits 77 (a ctest skip) without python3-onnx.

usage: check_exports.py SMELT REPO_ROOT [MODELS_CACHE_DIR] [--shard I/N]

With --shard I/N it checks only every N-th file from the I-th (0-based),
so ctest can run the shards side by side, each under its own time limit
(a sanitizer build spends most of a second per smelt process).
"""
import glob
import os
import subprocess
import sys
import tempfile

try:
    import onnx
    import onnx.checker
    import onnx.defs
except ImportError:
    print("SKIP: python3-onnx is not installed")
    sys.exit(77)


# onnx 1.12's shape inference rejects these valid files: Einsum's
# ellipsis may broadcast (1 against n), and MeanVarianceNormalization's
# function body mixes f32 constants into f64 arithmetic.
# Ops whose op tests have no standard form: --onnx-standard must refuse
# them naming the op (AttentionGrad, Attention's backward, is written in
# ai.smelt only; docs/ATTENTION.md, "The gradient").
NO_STANDARD_FORM = ("AttentionGrad_",)
INFERENCE_GAPS = {"Einsum_ellipsis_bcast.O3.std.onnx",
                  "MeanVarianceNormalization_f64_last.O3.std.onnx"}


def check(path, full):
    """onnx.checker on path: None when it passes, else the first line."""
    m = onnx.load(path, load_external_data=False)
    try:
        onnx.checker.check_model(m, full_check=full)
        return None
    except Exception as e:  # the checker's own error types
        if full and os.path.basename(path) in INFERENCE_GAPS:
            return check(path, False)
        return str(e).splitlines()[0]


def same_outputs(smelt, path, case, tmp):
    """Runs the file on the op test's inputs; None when every output is
    within smelt compare's tolerance of the expected one."""
    ins = sorted(glob.glob(os.path.join(case, "input_*.npy")),
                 key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    outs = sorted(glob.glob(os.path.join(case, "expected_*.npy")),
                  key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    if not outs:
        return None
    m = onnx.load(path, load_external_data=False)
    d = os.path.join(tmp, "out")
    cmd = [smelt, "run", path, "--output-dir", d]
    for i in ins:
        cmd += ["--input", i]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return "smelt run: " + r.stderr.strip()
    for o, want in zip(m.graph.output, outs):
        r = subprocess.run([smelt, "compare", os.path.join(d, o.name + ".npy"),
                            want, "--equal-nan"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            return "output %s: %s" % (o.name, r.stdout.strip().splitlines()[-1]
                                      if r.stdout.strip() else r.stderr.strip())
    return None


def models(root, cache):
    found = []
    for pattern in ("tests/onnx/models/*.onnx", "tests/script/*.onnx",
                    "examples/*.onnx"):
        found += sorted(glob.glob(os.path.join(root, pattern)))
    return found


def main():
    args = sys.argv[1:]
    shard, shards = 0, 1
    if "--shard" in args:
        k = args.index("--shard")
        shard, shards = (int(x) for x in args[k + 1].split("/"))
        del args[k:k + 2]
    smelt, root = args[0], args[1]
    cache = args[2] if len(args) > 2 else None
    newest = onnx.defs.onnx_opset_version()
    checked = newer = 0
    failures = []
    jobs = [(src, os.path.splitext(os.path.basename(src))[0], level, None)
            for src in models(root, None) for level in range(4)]
    if cache and os.path.isdir(cache):  # large: -O3 only, where they fuse
        jobs += [(src, os.path.splitext(os.path.basename(src))[0], 3, None)
                 for src in sorted(glob.glob(os.path.join(cache, "*.onnx")))]
    for case in sorted(glob.glob(os.path.join(root, "tests/ops/*/"))):
        jobs.append((os.path.join(case, "model.ir"),
                     os.path.basename(os.path.dirname(case)), 3, case))
    jobs = jobs[shard::shards]
    ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        for src, name, level, case in jobs:
            for standard in (False, True):
                out = os.path.join(tmp, "%s.O%d%s.onnx" %
                                   (name, level, ".std" if standard else ""))
                cmd = [smelt, "opt", "-O%d" % level, src, "-o", out]
                if standard:
                    cmd.append("--onnx-standard")
                what = " ".join(cmd[1:])
                r = subprocess.run(cmd, capture_output=True, text=True)
                if standard and case and name.startswith(NO_STANDARD_FORM):
                    if (r.returncode == 0 or
                            "no standard ONNX form" not in r.stderr):
                        failures.append("%s: expected a refusal naming the "
                                        "missing standard form, got: %s" %
                                        (what, r.stderr.strip() or "success"))
                    continue
                if r.returncode != 0:
                    failures.append("%s: %s" % (what, r.stderr.strip()))
                    continue
                r = subprocess.run([smelt, "info", out],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append("%s: reading it back: %s" %
                                    (what, r.stderr.strip()))
                m = onnx.load(out, load_external_data=False)
                domains = {o.domain: o.version for o in m.opset_import}
                used = {n.domain for n in m.graph.node}
                if standard and ("ai.smelt" in domains or
                                 "ai.smelt" in used):
                    failures.append("%s: uses domain ai.smelt" % what)
                if standard and case:
                    bad = same_outputs(smelt, out, case, tmp)
                    ran += 1
                    if bad:
                        failures.append("%s: %s" % (what, bad))
                if domains.get("", domains.get("ai.onnx", 0)) > newest:
                    newer += 1
                    continue
                bad = check(out, standard)
                if bad:
                    failures.append("%s: onnx.checker: %s" % (what, bad))
                else:
                    checked += 1
                os.unlink(out)
    print("onnx.checker passed %d files written by smelt opt; %d of an "
          "opset above onnx %s's %d checked by smelt only; %d standard "
          "files of op tests computed their expected outputs" %
          (checked, newer, onnx.__version__, newest, ran))
    for f in failures:
        print("FAIL", f)
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
