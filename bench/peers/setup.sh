#!/bin/sh
# setup.sh - installs the benchmark peers that do not come from Debian:
# ONNX Runtime for Node (npm onnxruntime-node) into bench/peers/node_modules.
#
# --ignore-scripts: the package's install script would download CUDA
# libraries; the CPU library (libonnxruntime.so and the N-API binding)
# ships inside the npm tarball (bin/napi-v6/linux/x64 in 1.30; napi-v3
# in older releases), so nothing else is fetched. PyTorch is Debian's python3-torch (apt-get install
# python3-torch); the harness runs it with /usr/bin/python3.
#
# Debian's python3-torch calls whatever libblas.so.3 the alternatives
# system selects, and a fresh machine has only the reference BLAS
# (torch reports BLAS_INFO=generic either way): the MLP training step of
# 784-2048-2048-10 at batch 64 takes 902 ms there and 267 ms once
# libopenblas0-pthread is installed (the package makes itself the
# alternative). As root this script installs it; otherwise it says so.
#
# Run once by hand, never from the tests: sh bench/peers/setup.sh
set -eu
if ! dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y --no-install-recommends libopenblas0-pthread
    else
        echo "setup.sh: PyTorch runs on the reference BLAS; as root: apt-get install libopenblas0-pthread" >&2
    fi
fi
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
npm install --ignore-scripts --no-audit --no-fund --loglevel=error
node -e '
const ort = require("onnxruntime-node");
console.log("onnxruntime-node loads: ONNX Runtime", ort.env.versions ? JSON.stringify(ort.env.versions) : "");
'
ls node_modules/onnxruntime-node/bin/napi-v*/linux/x64/
