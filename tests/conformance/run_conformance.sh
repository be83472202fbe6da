#!/bin/sh
# ctest's `conformance`: runs ONNX's backend node tests through
# `smelt conformance`, generating them first when DATA is missing.
# usage: run_conformance.sh SMELT ROOT DATA MIN_PASS_RATE [OPTION]...
# The options go to `smelt conformance`: with a level (-O1|-O2|-O3) every
# graph is optimized at it before the reference run (ctest's
# conformance.O1 .. conformance.O3); with --plan every test runs as a
# compiled plan, the way `smelt run` runs models (conformance.plan);
# against the same expected outputs, exclusions and floor.
# Exits 77 (ctest: skipped) when the tests cannot be generated because
# /usr/bin/python3 or Debian's python3-onnx is missing.
set -u
SMELT=$1
ROOT=$2
DATA=$3
MIN=$4
shift 4
PY=/usr/bin/python3

if [ ! -d "$DATA" ]; then
    if [ ! -x "$PY" ]; then
        echo "SKIP: $PY is missing, so the ONNX node tests cannot be" \
             "generated (scripts/setup-deps.sh installs python3-onnx)"
        exit 77
    fi
    "$PY" "$ROOT/scripts/gen_conformance.py" "$DATA"
    rc=$?
    if [ "$rc" -eq 77 ]; then
        echo "SKIP: python3-onnx is missing, so the ONNX node tests cannot" \
             "be generated (scripts/setup-deps.sh installs it)"
        exit 77
    fi
    if [ "$rc" -ne 0 ]; then
        echo "conformance: scripts/gen_conformance.py failed ($rc)"
        exit 1
    fi
fi
EXCL=$ROOT/tests/conformance/exclusions.txt
"$SMELT" conformance "$DATA" --exclude "$EXCL" --min-pass-rate "$MIN" "$@"
