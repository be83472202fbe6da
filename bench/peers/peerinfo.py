"""Each peer's version and configuration, and whether it runs at its
real speed (issue 16 item 5): what bench/run_bench.py and
bench/sweep/sweep.py print above their tables.

torch_config() runs inside a process that imported torch; the other
functions run the peers' own programs and parse their --info line.
A peer whose configuration is known to be slow is refused: its figures
would say more about the machine's set-up than about the peer.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def blas_kind(path):
    """The BLAS a shared-library path is: openblas, mkl, blis, or
    reference (netlib's, Debian's libblas3 under /usr/lib/*/blas/)."""
    p = path.lower()
    for kind in ("openblas", "mkl", "blis", "atlas"):
        if kind in p:
            return kind
    if "/blas/" in p or "libblas.so" in p or "librefblas" in p:
        return "reference"
    return "unknown"


def torch_config(torch):
    """torch's version, threads and the BLAS library really loaded.

    torch.__config__ reports BLAS_INFO=generic on Debian whichever
    libblas.so.3 the alternatives system selects, so the library is read
    from /proc/self/maps after a matmul has made torch call it."""
    a = torch.randn(64, 64)
    (a @ a).sum().item()
    libs = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1] if len(line.split()) >= 6 else ""
                base = os.path.basename(p).lower()
                if ("blas" in base or "mkl_core" in base) and p not in libs:
                    libs.append(p)
    except OSError:
        pass
    kinds = [blas_kind(p) for p in libs]
    kind = next((k for k in kinds if k != "reference"), None) or (
        "reference" if kinds else "unknown")
    cap = getattr(getattr(torch.backends, "cpu", None),
                  "get_cpu_capability", None)
    return {"runtime": "torch", "version": torch.__version__,
            "threads": torch.get_num_threads(),
            "interop_threads": torch.get_num_interop_threads(),
            "blas": kind, "blas_libraries": libs,
            "mkldnn": bool(torch.backends.mkldnn.is_available()),
            "cpu_capability": cap() if cap else "n/a"}


def torch_refusal(cfg):
    """Why torch's figures are not its real speed, or None."""
    if cfg.get("blas") == "reference":
        return ("PyTorch calls the reference BLAS (%s): about 10x slower "
                "on GEMMs than with OpenBLAS; run sh bench/peers/setup.sh "
                "(libopenblas0-pthread)" % " ".join(cfg["blas_libraries"]))
    return None


def ort_config():
    """onnxruntime-node's --info line as a dict, or {"error": why}."""
    try:
        r = subprocess.run(["node", os.path.join(HERE, "ort_bench.js"),
                            "--info"], capture_output=True, text=True,
                           timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["exit %d" %
                                                            r.returncode])[-1]}
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "no JSON from ort_bench.js --info"}


def ort_refusal(cfg):
    """Why ONNX Runtime's figures are not its real speed, or None."""
    if "error" in cfg:
        return "ONNX Runtime is unavailable: " + cfg["error"]
    if not cfg.get("native_cpu"):
        return ("onnxruntime-node did not load its native CPU library "
                "(a WebAssembly build is several times slower)")
    if cfg.get("graph_optimization") != "all":
        return "ONNX Runtime's graph optimizations are not all on"
    return None


def torch_config_subprocess(python="/usr/bin/python3"):
    """torch_bench.py --info as a dict, or {"error": why}."""
    try:
        r = subprocess.run([python, os.path.join(HERE, "torch_bench.py"),
                            "--info"], capture_output=True, text=True,
                           timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["exit %d" %
                                                            r.returncode])[-1]}
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "no JSON from torch_bench.py --info"}


def describe(cfg):
    """One line for a peer's configuration."""
    if "error" in cfg:
        return "unavailable (%s)" % cfg["error"]
    if cfg.get("runtime") == "torch":
        return ("torch %s, BLAS %s (%s), %d threads, oneDNN %s, CPU "
                "capability %s" % (cfg["version"], cfg["blas"],
                                   " ".join(cfg["blas_libraries"]) or "none",
                                   cfg["threads"],
                                   "on" if cfg["mkldnn"] else "off",
                                   cfg["cpu_capability"]))
    return ("onnxruntime-node %s, native %s, %s EP, graph optimization %s, "
            "%s execution, CPU %s" % (
                cfg["version"].get("common", "?"),
                " ".join(os.path.basename(p) for p in cfg["native"]),
                cfg["execution_provider"], cfg["graph_optimization"],
                cfg["execution_mode"], " ".join(cfg["cpu_isa"])))


if __name__ == "__main__":
    for c in (ort_config(), torch_config_subprocess()):
        print(describe(c))
    sys.exit(0)
