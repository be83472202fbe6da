#!/usr/bin/python3
"""gen_conformance.py - writes the ONNX backend node tests for
`smelt conformance` (ctest's `conformance` test).

usage: /usr/bin/python3 scripts/gen_conformance.py [DIR]

DIR (default: build/conformance/node under the repository) receives one
directory per test of onnx.backend.test.case.node, as ONNX's own
`backend-test-tools generate-data` writes them:

  DIR/test_NAME/model.onnx
  DIR/test_NAME/test_data_set_0/input_<i>.pb    TensorProto (or Sequence-,
  DIR/test_NAME/test_data_set_0/output_<i>.pb   Optional-, MapProto)

The data is large and not committed; the build regenerates it when it is
missing. It is written into a temporary sibling of DIR and renamed into
place at the end, so an interrupted run never leaves a half-written DIR.
Needs Debian's python3-onnx (scripts/setup-deps.sh installs it). Exits 77
(ctest's skip code) when onnx cannot be imported, 1 on any other failure.
"""
import argparse
import os
import shutil
import sys
import tempfile

SKIP = 77


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(
        os.path.abspath(__file__)), ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?",
                    default=os.path.join(root, "build", "conformance", "node"))
    ap.add_argument("--force", action="store_true",
                    help="regenerate even when DIR exists")
    args = ap.parse_args()
    out = os.path.abspath(args.dir)
    if os.path.isdir(out) and not args.force:
        print(f"gen_conformance: {out} exists (use --force to regenerate)")
        return 0

    try:
        import numpy as np
        # Debian's python3-onnx predates numpy's removal of these aliases.
        np.float = float
        np.int = int
        np.bool = bool
        np.object = object
        import onnx  # noqa: F401
        from onnx.backend.test import cmd_tools
    except Exception as e:  # ImportError, or onnx failing on this numpy
        print(f"gen_conformance: cannot import onnx ({e}); install "
              "python3-onnx (scripts/setup-deps.sh)", file=sys.stderr)
        return SKIP

    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".gen-", dir=parent)
    try:
        np.random.seed(0)  # the cases draw random inputs
        cmd_tools.generate_data(argparse.Namespace(output=tmp, op_type=None))
        node = os.path.join(tmp, "node")
        tests = sorted(os.listdir(node))
        if not tests:
            print("gen_conformance: onnx wrote no node tests", file=sys.stderr)
            return 1
        if args.force and os.path.isdir(out):
            shutil.rmtree(out)
        os.rename(node, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"gen_conformance: wrote {len(tests)} node tests to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
