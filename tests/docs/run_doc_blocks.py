#!/usr/bin/python3
"""Runs every shell block of README.md and docs/*.md, so the documentation
cannot drift from what the tools do.

    run_doc_blocks.py SOURCE_DIR BUILD_DIR [FILE.md ...]

A block fenced as ```sh is a script: it runs under `sh -e` in a scratch
folder that looks like the source tree (examples/, tests/, scripts/,
bench/, docs/, src/, include/ are links into SOURCE_DIR; build/ and
build-asan/ link to BUILD_DIR, so `build/smelt` is the binary under test),
and must exit 0. Blocks of one file run in order in the same folder, so a
later block may read what an earlier one wrote, as a reader following the
page would. A block that must not run here (it installs packages, runs
the whole suite, or needs ONNX Runtime) is preceded by the line

    <!-- doc-test: skip REASON -->

and the reason is printed. A ```python block is written to a file and
run under this interpreter with PYTHONPATH=BUILD_DIR/python (the smelt package of the build, as
docs/PYTHON.md's examples import it), in the same folder; it is skipped
when that build has no Python package or is a sanitizer build. A block whose fence names a file (```python file=model.py) is
written to that file in the scratch folder, for the blocks after it to
use, as a reader would save it. ```sh blocks that build a C program
against build/libsmelt.a pass $LDFLAGS to cc: in a sanitizer build the
runner sets it to the sanitizers' link flags. Other blocks (```c, ```text, plain) are
not run. Prints one line per block and "N passed, N failed, N skipped".
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LINKS = ["examples", "tests", "tools", "scripts", "bench", "docs", "src",
         "include",
         "cmake", "CMakeLists.txt", "Makefile"]
TIMEOUT = 300  # seconds per block: the slowest documented command is a
# conformance run of the 922 node tests


def blocks(path):
    """Yields (line, kind, text, skip_reason) for each fenced block."""
    fence = re.compile(r"^```(\S*)(?:\s+file=(\S+))?\s*$")
    skip_re = re.compile(r"^<!--\s*doc-test:\s*skip\s*(.*?)\s*-->\s*$")
    lines = open(path, encoding="utf-8").read().split("\n")
    i, pending_skip = 0, None
    while i < len(lines):
        m = skip_re.match(lines[i])
        if m:
            pending_skip = m.group(1) or "no reason given"
            i += 1
            continue
        m = fence.match(lines[i])
        if not m:
            if lines[i].strip():
                pending_skip = None
            i += 1
            continue
        start, kind, body = i + 1, m.group(1), []
        if m.group(2):
            kind = "file=" + m.group(2)
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        yield start, kind, "\n".join(body) + "\n", pending_skip
        pending_skip = None


def scratch(src, build):
    """A folder that looks like the source tree, with build/ the tree under
    test."""
    d = tempfile.mkdtemp(prefix="smelt-docs-")
    for name in LINKS:
        if os.path.exists(os.path.join(src, name)):
            os.symlink(os.path.join(src, name), os.path.join(d, name))
    for name in ("build", "build-asan"):
        os.symlink(build, os.path.join(d, name))
    return d


def sanitized(build):
    """Whether BUILD_DIR is a sanitizer build (-DSMELT_SANITIZE=ON)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            return "SMELT_SANITIZE:BOOL=ON" in f.read()
    except OSError:
        return False


def python_skip(build):
    """Why ```python blocks cannot run against this build, or None: no
    Python package, or a sanitizer build's (its module needs libasan
    preloaded into python3; its own tests, python.*, do that)."""
    if not os.path.isdir(os.path.join(build, "python", "smelt")):
        return "the Python package is not built here"
    if sanitized(build):
        return "a sanitizer build's package needs libasan preloaded"
    return None


def sh_env(build):
    """The environment of ```sh blocks: a program the page links against
    a sanitizer build's build/libsmelt.a needs the sanitizers' runtimes,
    so LDFLAGS (which such blocks pass to cc) names them there."""
    if not sanitized(build):
        return None
    flags = os.environ.get("LDFLAGS", "")
    return dict(os.environ, LDFLAGS=(flags + " -fsanitize=address,undefined")
                .strip())


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    src, build = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    files = argv[3:] or (["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(src, "docs"))
        if f.endswith(".md")))
    passed = failed = skipped = 0
    for rel in files:
        work = scratch(src, build)
        try:
            for line, kind, text, skip in blocks(os.path.join(src, rel)):
                if kind.startswith("file="):
                    name = kind[5:]
                    if "/" in name or name.startswith("."):
                        print("FAIL %s:%d: file=%s must be a plain name"
                              % (rel, line, name))
                        failed += 1
                        continue
                    with open(os.path.join(work, name), "w") as f:
                        f.write(text)
                    continue
                if kind not in ("sh", "python"):
                    continue
                where = "%s:%d" % (rel, line)
                if not skip and kind == "python":
                    skip = python_skip(build)
                if skip:
                    print("skip %s: %s" % (where, skip))
                    skipped += 1
                    continue
                try:
                    cmd, env = ["sh", "-e", "-c", text], sh_env(build)
                    if kind == "python":
                        # from a file, so that inspect finds the source
                        script = os.path.join(work, "doc_block_%d.py" % line)
                        with open(script, "w") as f:
                            f.write(text)
                        cmd = [sys.executable, script]
                        env = dict(os.environ,
                                   PYTHONPATH=os.path.join(build, "python"))
                    r = subprocess.run(cmd, cwd=work, env=env,
                                       stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT,
                                       timeout=TIMEOUT)
                    rc, out = r.returncode, r.stdout
                except subprocess.TimeoutExpired as e:
                    rc, out = "timeout", e.stdout or b""
                if rc == 0:
                    print("ok   %s" % where)
                    passed += 1
                else:
                    print("FAIL %s (exit %s):" % (where, rc))
                    print("  | " + text.rstrip().replace("\n", "\n  | "))
                    tail = out.decode("utf-8", "replace").rstrip()
                    tail = "\n".join(tail.split("\n")[-15:])
                    print("  > " + tail.replace("\n", "\n  > "))
                    failed += 1
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print("docs: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
