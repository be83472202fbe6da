#!/bin/sh
# `make demo`: import the bundled ONNX model, show what it is, run it,
# check it against PyTorch, draw it; then the same MLP in text IR.
set -eu
SMELT=${1:-build/smelt}
cd "$(dirname "$0")/.."
OUT=out/demo
mkdir -p "$OUT"
M=examples/digits_cnn.onnx

echo "== $M: a small CNN classifier exported from PyTorch (smelt info)"
"$SMELT" info "$M" >"$OUT/info.out"
sed 's/^/   /' "$OUT/info.out"
echo
echo "== run it through ONNX import on four drawn 28x28 images (smelt run)"
# stdout (the outputs) first, then stderr (how long it took)
"$SMELT" run "$M" --input image=examples/digits_cnn_x.npy \
    --output-dir "$OUT" >"$OUT/run.out" 2>"$OUT/run.err"
sed 's/^/   /' "$OUT/run.out" "$OUT/run.err"
echo
echo "== compare with the probabilities PyTorch computed (smelt compare)"
status=0
"$SMELT" compare "$OUT/probs.npy" examples/digits_cnn_probs.npy \
    --atol 1e-6 --rtol 0 >"$OUT/compare.out" || status=$?
sed 's/^/   /' "$OUT/compare.out"
[ "$status" -eq 0 ] || { echo "demo: the outputs differ from PyTorch's" >&2; exit 1; }
echo
echo "== draw it"
if command -v dot >/dev/null 2>&1; then
    "$SMELT" dot "$M" --svg "$OUT/digits_cnn.svg" && echo "   wrote $OUT/digits_cnn.svg"
else
    "$SMELT" dot "$M" -o "$OUT/digits_cnn.dot" && echo "   wrote $OUT/digits_cnn.dot"
fi
echo
echo "== the text IR: examples/mlp.ir, a 16-32-4 MLP with its weights inline"
"$SMELT" run examples/mlp.ir --input x=examples/mlp_x.npy >"$OUT/mlp.out" \
    2>"$OUT/mlp.err"
sed 's/^/   /' "$OUT/mlp.out" "$OUT/mlp.err"
