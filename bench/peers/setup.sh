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
# Run once by hand, never from the tests: sh bench/peers/setup.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
npm install --ignore-scripts --no-audit --no-fund --loglevel=error
node -e '
const ort = require("onnxruntime-node");
console.log("onnxruntime-node loads: ONNX Runtime", ort.env.versions ? JSON.stringify(ort.env.versions) : "");
'
ls node_modules/onnxruntime-node/bin/napi-v*/linux/x64/
