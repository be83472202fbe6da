#!/bin/sh
# Issue 14's proof on real data: `smelt train` trains a small CNN with
# random initial weights (exported from PyTorch) on scikit-learn's 8x8
# digits, and
#   1. its loss follows PyTorch's over the first 50 steps (same weights,
#      same batches in the same order, AdamW lr 3e-3, weight decay 0.01):
#      relative difference <= 1e-3 at every step;
#   2. after 15 epochs the held-out 360 digits are classified >= 95%
#      right by `smelt run` on the saved ONNX file;
#   3. ONNX Runtime gives that file the same accuracy (when
#      bench/peers/setup.sh has installed it; otherwise said and left out).
# usage: test_train_digits.sh SMELT_BINARY REPO_ROOT WORK_DIR
set -u
SMELT=$1
ROOT=$2
W=$3
PY=/usr/bin/python3
if ! "$PY" -c "import torch, numpy, sklearn" 2>/dev/null; then
    echo "SKIP train_digits: needs python3-torch, python3-numpy, python3-sklearn"
    exit 77
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
"$PY" "$ROOT/scripts/gen_train_digits.py" "$W" 50 || exit 1
cd "$W" || exit 1
"$SMELT" train init.onnx --input x=x_train.npy --target y_train.npy \
    --loss cross_entropy --optimizer adamw --lr 3e-3 --epochs 15 \
    --batch-size 32 --seed 1 --log-every 1 --save trained.onnx >train.log ||
    { cat train.log; exit 1; }
"$PY" - <<'PYEOF' || exit 1
import re, sys
smelt = [float(m.group(1)) for m in
         (re.search(r"step \d+/\d+  loss (\S+)", l) for l in open("train.log"))
         if m][:50]
torch = [float(v) for v in open("torch_losses.txt")]
assert len(smelt) == 50 and len(torch) == 50, (len(smelt), len(torch))
rel = max(abs(a - b) / abs(b) for a, b in zip(smelt, torch))
print("loss curve: 50 steps, max relative difference from PyTorch %.2e" % rel)
# smelt prints 6 significant digits: 1e-3 is far above that rounding
sys.exit(0 if rel <= 1e-3 else 1)
PYEOF
"$SMELT" run trained.onnx --input x=x_test.npy --output-dir run >run.log ||
    { cat run.log; exit 1; }
acc=$("$PY" -c "
import numpy as np
l = np.load('run/logits.npy'); y = np.load('y_test.npy')
print((l.argmax(1) == y).mean())") || exit 1
echo "smelt accuracy $acc of 360 held-out digits"
"$PY" -c "import sys; sys.exit(0 if $acc >= 0.95 else 1)" ||
    { echo "FAIL: accuracy $acc below 0.95"; exit 1; }
mods=$ROOT/bench/peers/node_modules
if command -v node >/dev/null 2>&1 && [ -d "$mods/onnxruntime-node" ]; then
    out=$(ORT_MODULES=$mods node "$ROOT/tests/models/ort_accuracy.js" \
          trained.onnx x_test.npy y_test.npy) || exit 1
    echo "$out"
    ort=${out#onnxruntime accuracy }
    ort=${ort%% of *}
    "$PY" -c "import sys; sys.exit(0 if abs($ort - $acc) < 1e-9 else 1)" ||
        { echo "FAIL: ONNX Runtime's accuracy $ort differs"; exit 1; }
else
    echo "ONNX Runtime not installed (bench/peers/setup.sh): its check left out"
fi
# int8 (issue 17): the trained classifier quantized dynamically, per
# channel, convolutions included, loses at most one point of accuracy
"$SMELT" quantize trained.onnx -o int8.onnx --dynamic --per-channel --conv \
    2>quantize.log || { cat quantize.log; exit 1; }
"$SMELT" run int8.onnx --input x=x_test.npy --output-dir run8 >run8.log ||
    { cat run8.log; exit 1; }
acc8=$("$PY" -c "
import numpy as np
l = np.load('run8/logits.npy'); y = np.load('y_test.npy')
print((l.argmax(1) == y).mean())") || exit 1
echo "smelt int8 accuracy $acc8 of 360 (f32 $acc)"
"$PY" -c "import sys; sys.exit(0 if $acc8 >= $acc - 0.01 else 1)" ||
    { echo "FAIL: int8 accuracy $acc8 is more than 1 point below $acc"; exit 1; }
echo "train_digits: ok"
